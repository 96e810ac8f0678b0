"""Whether O2's context alerts measure against a window the session had already outgrown.

    python benchmarks/o2_windows.py [TRANSCRIPTS_DIR] [--list]

Every labelled transcript (../shared/transcripts) is replayed through the real hook as
benchmarks/score_labels.py replays it. Each O2 alert that states a level ("context is NK of
WK tokens") is set against the session's own evidence of its window, read from the
transcript's main thread: the usage of each response (input + cache creation + cache read
tokens) and each compaction's `compactMetadata.preTokens`. An alert is *outgrown* when that
evidence had exceeded W at or before the call it followed (it knew better), and *outgrown
later* when the session exceeded W at any point (the window was larger all along). Also how
many alerts no compaction followed in the rest of the session (its transcript holds no
boundary after them: a session that ended first, an export without boundaries, or a
compaction that never came), and the O2 signals on quiet sessions (score_labels'
quiet_per_sense).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from score_labels import entries, labelled_folder, score, short

from metacog.transcript import usage_tokens

LEVEL = re.compile(r"context is (\d+)K of (\d+)K tokens")


def evidence(path: Path) -> list[tuple[int, int]]:
    """For each main-thread call (1-based, as LABELS.md counts; index 0 is before any), the
    largest usage or preTokens the transcript's main thread had shown by its result, and
    the compactions by then."""
    seen: set[str] = set()
    peak = compactions = 0
    out = [(0, 0)]
    for entry in entries(path):
        if entry.get("isSidechain"):
            continue
        meta = entry.get("compactMetadata")
        if isinstance(meta, dict):
            compactions += 1
            if isinstance(meta.get("preTokens"), int):
                peak = max(peak, meta["preTokens"])
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        content = message.get("content") if isinstance(message.get("content"), list) else []
        if entry.get("type") == "assistant":
            peak = max(peak, usage_tokens(message.get("usage")))
            seen.update(
                str(b.get("id"))
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_use"
            )
        elif entry.get("type") == "user":
            for block in content:
                if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                    continue
                if str(block.get("tool_use_id")) in seen:
                    seen.discard(str(block.get("tool_use_id")))
                    out.append((peak, compactions))
    return out


def measure(folder: Path) -> dict:
    result = score(folder)
    alerts = outgrown = later = uncompacted = 0
    rows = []
    for name, said in result["signals"].items():
        o2 = [s for s in said if "o2" in s["sense"].split("+")]
        if not o2:
            continue
        peaks = evidence(folder / name)
        for s in o2:
            level = LEVEL.search(s["text"])
            if not level:
                continue
            alerts += 1
            window = int(level.group(2)) * 1000
            before, compactions = peaks[min(s["at"], len(peaks) - 1)]
            most = peaks[-1][0]
            now, ever = before > window, most > window
            outgrown += now
            later += ever
            uncompacted += peaks[-1][1] == compactions
            if ever:
                rows.append(
                    f"  {short(name):30} call {s['at']:>4}: {level.group(0)}; "
                    f"seen by then {before // 1000}K, in the session {most // 1000}K"
                )
    return {
        "alerts": alerts,
        "outgrown": outgrown,
        "outgrown_later": later,
        "uncompacted": uncompacted,
        "o2_signals": result["per_sense"].get("o2", 0),
        "o2_quiet": result["quiet_per_sense"].get("o2", 0),
        "quiet_signals": result["quiet_signals"],
        "quiet_calls": result["quiet_calls"],
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    folder = labelled_folder(argv)
    if folder is None:
        return 2
    m = measure(folder)
    print(
        f"o2 level alerts: {m['alerts']}; against a window the session had already exceeded: "
        f"{m['outgrown']}; exceeded at any point of the session: {m['outgrown_later']}; "
        f"followed by no compaction: {m['uncompacted']}"
    )
    print(
        f"o2 signals: {m['o2_signals']} in all sessions, {m['o2_quiet']} on quiet sessions "
        f"(all senses on quiet sessions: {m['quiet_signals']} in {m['quiet_calls']} calls)"
    )
    if "--list" in argv:
        print("\n".join(m["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
