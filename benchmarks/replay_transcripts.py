"""Replay every real transcript in ../shared/transcripts and print the calibration table.

    python benchmarks/replay_transcripts.py [TRANSCRIPTS_DIR] [--signals]

For each transcript: tool calls, signals per sense, signals per 100 calls; then the
totals, and the known loops (SOURCES.md) with whether they were caught. The README's
table is this script's output.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metacog.replay import replay
from metacog.senses import SENSES

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"
# (file name fragment, what happened, the sense that must speak)
KNOWN_LOOPS = (
    ("779277eb10", "`golangci-lint run --enable-only bodyclose` failed 7+ times, same input", "nociception"),
    ("fe5e1c67", "'File has not been read yet' 13 times", "nociception"),
    ("373740ff86", "`golangci-lint --enable-only usestdlibvars` run again for each next finding", "nociception"),
)
# Named in SOURCES.md as rich cases, but on inspection progress rather than a loop:
# the failing tests shrink from 5 to 3 to 1 and the suite goes green; the signal
# stays silent by design (Errors that differ from each other mean exploring).
PROGRESS = (("37f83ec9", "'one pytest failure 8 times': 5 → 3 → 1 failing, then green"),)
QUIET = ("ef958aa1",)


def label(path: Path) -> str:
    repo, _, rest = path.name.partition("__")
    tail = rest.split("@", 1)[1][:10] if "@" in rest else rest[:8]
    return f"{repo.replace('+', '/')} {tail}"


def main(argv: list[str]) -> int:
    folder = Path(next((a for a in argv if not a.startswith("--")), DEFAULT_DIR))
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        print(f"no transcripts in {folder}", file=sys.stderr)
        return 1
    names = [s.NAME for s in SENSES]
    print("| transcript | calls | " + " | ".join(names) + " | per 100 calls |")
    print("|---|---:|" + "---:|" * len(names) + "---:|")
    totals = dict.fromkeys(names, 0)
    calls = 0
    results = {}
    for path in files:
        result = replay(str(path))
        results[path.name] = result
        calls += result["tool_calls"]
        count = sum(result["per_sense"].get(n, 0) for n in names)
        for n in names:
            totals[n] += result["per_sense"].get(n, 0)
        rate = 100 * count / result["tool_calls"] if result["tool_calls"] else 0
        cells = " | ".join(str(result["per_sense"].get(n, 0) or "") for n in names)
        print(f"| {label(path)} | {result['tool_calls']} | {cells} | {rate:.1f} |")
        if "--signals" in argv:
            for s in result["signals"]:
                print(f"|  | call {s['call']} | {s['sense']}: {s['text'][:160]} |")
    all_signals = sum(totals.values())
    # Quiet: sessions where neither loop sense fired (no error loop, no circling).
    quiet = [r for r in results.values() if not r["per_sense"].get("nociception") and not r["per_sense"].get("vestibular")]
    quiet_calls = sum(r["tool_calls"] for r in quiet)
    quiet_signals = sum(len(r["signals"]) for r in quiet)
    cells = " | ".join(str(totals[n]) for n in names)
    print(f"| **all {len(files)}** | **{calls}** | {cells} | **{100 * all_signals / calls:.2f}** |")
    print()
    print(f"quiet sessions (no loop sense fired): {len(quiet)} sessions, {quiet_calls} calls, {quiet_signals} signals: "
          f"one per {quiet_calls / max(quiet_signals, 1):.0f} calls")
    print()
    print("| per 100 calls | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("| all transcripts | " + " | ".join(f"{100 * totals[n] / calls:.2f}" for n in names) + " |")
    print()
    print("| known loop | caught by | at call |")
    print("|---|---|---|")
    for fragment, what, sense in KNOWN_LOOPS:
        for name, result in results.items():
            if fragment in name:
                hits = [s for s in result["signals"] if sense in s["sense"]]
                where = ", ".join(str(s["call"]) for s in hits[:4]) or "**missed**"
                print(f"| {what} ({fragment}) | {sense if hits else '-'} | {where} |")
    for fragment, what in PROGRESS:
        for name, result in results.items():
            if fragment in name:
                hits = [s for s in result["signals"] if "nociception" in s["sense"]]
                print(f"| {what} ({fragment}) | {'nociception' if hits else 'silent (progress)'} | "
                      f"{', '.join(str(s['call']) for s in hits) or '-'} |")
    for fragment in QUIET:
        for name, result in results.items():
            if fragment in name and "__subagents__" not in name:
                print(f"| quiet control ({fragment}): {result['tool_calls']} calls | "
                      f"{len(result['signals'])} signals | {', '.join(s['sense'] for s in result['signals']) or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
