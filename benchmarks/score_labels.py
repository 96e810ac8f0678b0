"""Score the senses against hand labels: replay every transcript, judge each labelled stretch.

    python benchmarks/score_labels.py [TRANSCRIPTS_DIR] [--signals] [--json] [--loro]

The transcripts and their labels (LABELS.jsonl, protocol in LABELS.md) live beside this
repository in ../shared/transcripts; they are not shipped with it. Each transcript runs
through the real hook (metacog.replay); each signal is placed after the main-thread call
it reached, numbered as LABELS.md says (every tool_use on a line that is not a sidechain,
counted at its tool_result, refused calls included). Then:

- stuck episode: caught on time (a signal about repetition after call speak_at - 1 and no
  later than after speak_at + 3), late (after that, before `end`), or missed;
- progress episode: a false alarm when a signal about repetition lands in [speak_at, end];
- quiet session: every signal counts, per 100 main-thread calls.

`--loro` adds the leave-one-repository-out estimate of the thresholds fitted from the labels
(benchmarks/fit_stale.py): for each repository, the thresholds are fitted on the others and
that repository is scored with them; the last line is `leave-one-repository-out: N of M on
time`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metacog.perception.symptoms import names_something
from metacog.perception.tools import REFUSAL_TAG
from metacog.replay import replay

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"
# The senses whose signals speak of repetition (a loop, a circle, a habit).
REPETITION = ("nociception", "vestibular", "habit")
LATE_BY = 3


def entries(path: Path | str) -> Iterator[dict]:
    """A transcript's lines as objects, one at a time; a line that is not a JSON object is
    passed over (the benchmarks read transcripts as replay does)."""
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry


def _results(path: Path) -> Iterator[tuple[str, int, bool, bool]]:
    """Each tool_result of a transcript, in order: (its tool_use id, main-thread call number so
    far, is main, refused before it ran)."""
    seen: set[str] = set()
    main = 0
    for entry in entries(path):
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        content = message.get("content") if isinstance(message.get("content"), list) else []
        side = bool(entry.get("isSidechain"))
        if entry.get("type") == "assistant":
            seen.update(
                str(b.get("id"))
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_use"
            )
            continue
        if entry.get("type") != "user":
            continue
        for block in content:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            known = str(block.get("tool_use_id")) in seen
            seen.discard(str(block.get("tool_use_id")))
            if known and not side:
                main += 1
            text = block.get("content")
            if isinstance(text, list):
                text = " ".join(
                    b.get("text", "")
                    for b in text
                    if isinstance(b, dict) and isinstance(b.get("text"), str)
                )
            refused = bool(
                block.get("is_error")
                and isinstance(text, str)
                and text.lstrip().startswith(REFUSAL_TAG)
            )
            yield str(block.get("tool_use_id")), main, not side, refused


def main_thread_calls(path: Path) -> list[tuple[int, bool]]:
    """For each call hook replay makes (in order): (main-thread call number so far, is main).

    Replay fires no call's hook for a refused call (Claude Code fires none); the labels count
    it."""
    return [(main, is_main) for _, main, is_main, refused in _results(path) if not refused]


def placed(path: Path, cfg: dict | None = None) -> tuple[list[dict], int]:
    """The replay's signals that reached the main agent, each with `at` (main-thread call), and
    the call count; `cfg`: settings the replay runs with (its defaults without). A signal said
    at a batch's end (PostToolBatch) is placed after the batch's last call, refused or not."""
    result = replay(str(path), cfg)
    results = list(_results(path))
    calls = [(main, is_main) for _, main, is_main, refused in results if not refused]
    after = {use_id: (main, is_main) for use_id, main, is_main, _ in results}
    out = []
    for signal in result["signals"]:
        if signal["sense"] == "turn-end":
            continue  # a turn's end, not a call: scored by benchmarks/bench_claims.py
        if "after" in signal:
            main, is_main = after.get(signal["after"], (0, False))
            if is_main:
                out.append({**signal, "at": main})
            continue
        index = signal["call"] - 1
        if 0 <= index < len(calls) and calls[index][1]:
            out.append({**signal, "at": calls[index][0]})
    return out, (calls[-1][0] if calls else 0)


# A quote in a signal: `what`, with the word before it (a tool's name when it quotes the action).
_QUOTE = re.compile(r"(?:(\S+) )?`([^`]+)`")


def generic_quotes(signal: dict) -> list[str]:
    """The problem lines a loop signal quotes that name nothing (`npm error`, `- 5 errors`).

    A quote after a tool's name (Bash `npm test`) is the action itself, which names itself."""
    if not about_repetition(signal):
        return []
    text = signal["text"].removeprefix("metacog: ")
    return [
        quote
        for before, quote in _QUOTE.findall(text)
        if not (before[:1].isupper() and before.replace("__", "").isidentifier())
        and not text.startswith(f"`{quote}`")
        and not names_something(quote)
    ]


def repository(name: str) -> str:
    return name.split("__", 1)[0].replace("+", "/")


def about_repetition(signal: dict) -> bool:
    return any(sense in signal["sense"].split("+") for sense in REPETITION)


def read_labels(folder: Path) -> list[dict]:
    return [
        json.loads(line)
        for line in (folder / "LABELS.jsonl").read_text().splitlines()
        if line.strip()
    ]


def score(folder: Path, cfg: dict | None = None) -> dict:
    labels = read_labels(folder)
    signals: dict[str, list[dict]] = {}
    main_calls: dict[str, int] = {}
    for name in sorted({label["file"] for label in labels}):
        signals[name], main_calls[name] = placed(folder / name, cfg)
    stuck: dict[str, list] = {"on_time": [], "late": [], "missed": []}
    repos: dict[str, dict] = {}
    false_alarms, progress = [], 0
    quiet_calls = quiet_signals = 0
    per_sense: dict[str, int] = {}
    every: dict[str, int] = {}
    for said in signals.values():
        for s in said:
            for sense in s["sense"].split("+"):
                every[sense] = every.get(sense, 0) + 1
    for label in labels:
        said = signals[label["file"]]
        repo = repos.setdefault(
            repository(label["file"]),
            {
                "sessions": 0,
                "stuck": 0,
                "on_time": 0,
                "progress": 0,
                "false_alarms": 0,
                "quiet_calls": 0,
                "quiet_signals": 0,
            },
        )
        if label["type"] == "session":
            repo["sessions"] += 1
            if label.get("quiet"):
                repo["quiet_calls"] += main_calls[label["file"]]
                repo["quiet_signals"] += len(said)
                quiet_calls += main_calls[label["file"]]
                quiet_signals += len(said)
                for s in said:
                    for sense in s["sense"].split("+"):
                        per_sense[sense] = per_sense.get(sense, 0) + 1
            continue
        loud = [s for s in said if about_repetition(s)]
        if label["type"] == "stuck":
            on_time = [
                s for s in loud if label["speak_at"] <= s["at"] <= label["speak_at"] + LATE_BY
            ]
            late = [s for s in loud if label["speak_at"] + LATE_BY < s["at"] <= label["end"]]
            verdict = "on_time" if on_time else "late" if late else "missed"
            repo["stuck"] += 1
            repo["on_time"] += verdict == "on_time"
            stuck[verdict].append({**label, "signal": (on_time or late or [{}])[0]})
        elif label["type"] == "progress":
            progress += 1
            repo["progress"] += 1
            # A signal inside the window of a stuck episode of the same session that overlaps
            # the stretch speaks of that episode (LABELS.md).
            windows = [
                (e["speak_at"] - 1, e["end"] + 3)
                for e in labels
                if e["type"] == "stuck"
                and e["file"] == label["file"]
                and e["start"] <= label["end"]
                and label["start"] <= e["end"]
            ]
            alarms = [
                s
                for s in loud
                if label["speak_at"] <= s["at"] <= label["end"]
                and not any(lo <= s["at"] <= hi for lo, hi in windows)
            ]
            if alarms:
                repo["false_alarms"] += 1
                false_alarms.append({**label, "signal": alarms[0]})
    total_stuck = sum(len(v) for v in stuck.values())
    generic = [
        {"file": name, "at": s["at"], "sense": s["sense"], "quotes": quotes, "text": s["text"]}
        for name, said in signals.items()
        for s in said
        if (quotes := generic_quotes(s))
    ]
    return {
        "stuck": stuck,
        "stuck_total": total_stuck,
        "false_alarms": false_alarms,
        "progress": progress,
        "quiet_calls": quiet_calls,
        "quiet_signals": quiet_signals,
        "quiet_per_100": round(100 * quiet_signals / quiet_calls, 2) if quiet_calls else 0.0,
        "quiet_per_sense": per_sense,
        "calls": sum(main_calls.values()),
        "per_sense": every,
        "signals": signals,
        "repositories": repos,
        "generic": generic,
    }


def short(name: str) -> str:
    repo, _, rest = name.partition("__")
    tail = rest.split("@", 1)[1][:10] if "@" in rest else rest.rsplit("__", 1)[-1][:8]
    return f"{repo.split('+')[-1]} {tail}"


def report(result: dict) -> str:
    stuck, total = result["stuck"], result["stuck_total"]
    lines = [
        f"stuck episodes: {total}; caught on time {len(stuck['on_time'])} "
        f"({100 * len(stuck['on_time']) / max(total, 1):.0f}%), late {len(stuck['late'])}, "
        f"missed {len(stuck['missed'])}",
        f"the sure ones (not marked unsure): {sum(1 for e in stuck['on_time'] if not e.get('unsure'))}"
        f" of {sum(1 for v in stuck.values() for e in v if not e.get('unsure'))} caught on time",
        f"false alarms on progress: {len(result['false_alarms'])} of {result['progress']}",
        f"quiet sessions: {result['quiet_signals']} signals in {result['quiet_calls']} calls = "
        f"{result['quiet_per_100']:.2f} per 100 calls"
        + (
            " (" + ", ".join(f"{k} {v}" for k, v in sorted(result["quiet_per_sense"].items())) + ")"
            if result["quiet_per_sense"]
            else ""
        ),
        f"all sessions: {sum(result['per_sense'].values())} signals in {result['calls']} calls ("
        + ", ".join(f"{k} {v}" for k, v in sorted(result["per_sense"].items()))
        + ")",
        f"loop signals quoting a line that names nothing: {len(result['generic'])}",
        "",
        f"  {'repository':40} sessions stuck on-time progress alarms quiet/100",
    ]
    for name, r in sorted(result["repositories"].items()):
        per = f"{100 * r['quiet_signals'] / r['quiet_calls']:.2f}" if r["quiet_calls"] else "-"
        lines.append(
            f"  {name[:40]:40} {r['sessions']:>8} {r['stuck']:>5} {r['on_time']:>7} "
            f"{r['progress']:>8} {r['false_alarms']:>6} {per:>9}"
        )
    lines.append("")
    for verdict in ("on_time", "late", "missed"):
        for label in stuck[verdict]:
            signal = label["signal"]
            where = f"at call {signal['at']} by {signal['sense']}" if signal else "-"
            lines.append(
                f"  {verdict:7} {short(label['file']):24} {label['kind']:13} "
                f"speak_at {label['speak_at']:>3} end {label['end']:>3}: {where}"
            )
    for g in result["generic"]:
        lines.append(
            f"  generic quote {short(g['file']):20} call {g['at']} {g['sense']}: "
            + ", ".join(f"`{q[:60]}`" for q in g["quotes"])
        )
    for label in result["false_alarms"]:
        signal = label["signal"]
        lines.append(
            f"  false alarm {short(label['file']):20} {label['start']}-{label['end']}: "
            f"call {signal['at']} {signal['sense']}: {signal['text'][:140]}"
        )
    return "\n".join(lines)


def labelled_folder(argv: list[str]) -> Path | None:
    """The folder of labelled transcripts the arguments name (../shared/transcripts without
    one), or None, said on stderr, where it holds no LABELS.jsonl."""
    folder = Path(next((a for a in argv if not a.startswith("--")), DEFAULT_DIR))
    if (folder / "LABELS.jsonl").is_file():
        return folder
    print(
        f"no LABELS.jsonl in {folder}: the labelled transcripts live in ../shared/transcripts "
        "beside this repository; pass their folder",
        file=sys.stderr,
    )
    return None


def main(argv: list[str]) -> int:
    folder = labelled_folder(argv)
    if folder is None:
        return 2
    result = score(folder)
    if "--json" in argv:
        print(
            json.dumps({k: v for k, v in result.items() if k != "signals"}, indent=1, default=str)
        )
        return 0
    print(report(result))
    if "--loro" in argv:
        from fit_stale import fit_report

        print(fit_report(folder))
    if "--signals" in argv:
        for name, said in result["signals"].items():
            for s in said:
                print(f"{short(name):24} {s['at']:>4} {s['sense']:12} {s['text'][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
