"""How well `metacog report`'s loops agree with how a person bounds a stuck episode.

    python benchmarks/bench_report_loops.py [TRANSCRIPTS_DIR] [--json]

The transcripts and their hand labels (LABELS.jsonl, protocol in LABELS.md) live beside
this repository in ../shared/transcripts; they are not shipped with it. The report is
built over the folder as `metacog report` builds it (metacog.report.build, settings at
their defaults: a throwaway METACOG_HOME), then, per labelled file, over the main thread
(calls numbered as LABELS.md says, 1-based, refused calls included):

- labelled: the calls of every `stuck` label, `start` to `end`;
- report: the calls of every report loop of the main thread, its first call to its last
  member (report `start` to `last`);
- coverage: the share of labelled calls (and labelled seconds, each call standing for the
  time from its start to the next call's) inside a report loop; precision: the share of
  report loop calls (seconds) inside a labelled episode. Both also without `unsure` labels
  (the labels a second reader might dispute are then neither counted nor held against).
  Time is also given as wall clock, a pause (a night) counted whole.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from score_labels import entries

from metacog.perception.tools import REFUSAL_TAG
from metacog.replay import content_text

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"
PAUSE = 300.0  # seconds: the page draws a longer pause this wide too


def labels(folder: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for line in (folder / "LABELS.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out.setdefault(row["file"], []).append(row)
    return out


def main_numbers(path: str) -> list[int]:
    """For each call the report records (in replay's order: on each line, the refused
    calls first, then the others), its 1-based main-thread number as LABELS.md counts; 0
    for a subagent's call. The report's own `agent` cannot say it: a refused call carries
    none, a subagent's included."""
    out: list[int] = []
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
        if entry.get("type") != "user" or isinstance(message.get("content"), str):
            continue
        refused, ran = [], []
        for block in content:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                continue
            known = str(block.get("tool_use_id")) in seen
            seen.discard(str(block.get("tool_use_id")))
            if known and not side:
                main += 1
            number = main if known and not side else 0
            text = content_text(block.get("content"), "\n")
            is_refused = block.get("is_error") and text.lstrip().startswith(REFUSAL_TAG)
            (refused if is_refused else ran).append(number)
        out += refused + ran
    return out


def lengths_of(session: dict, numbers: list[int], pause: float = PAUSE) -> list[float]:
    """Each main call's seconds, to the next main call (a pause counted `pause` at most: a
    night inside an episode is not time spent stuck); the last one 0."""
    times = [ts for ts, n in zip(session["_ts"], numbers, strict=False) if n]
    return [min(pause, max(0.0, b - a)) for a, b in itertools.pairwise(times)] + [0.0]


def score(folder: Path) -> dict:
    from metacog import report

    by_file = labels(folder)
    files = sorted(str(folder / name) for name in by_file)
    result = report.build(files, keep_calls=True)
    sessions = {Path(s["file"]).name: s for s in result["sessions"]}
    sums = {
        key: [0.0, 0.0, 0.0, 0.0]  # labelled, report, both (calls) ... and seconds
        for key in ("all", "sure")
    }
    seconds = {key: [0.0, 0.0, 0.0] for key in ("all", "sure")}
    wall = {key: [0.0, 0.0, 0.0] for key in ("all", "sure")}
    loops = mismatched = 0
    for name, rows in by_file.items():
        session = sessions.get(name)
        if session is None:
            continue
        numbers = main_numbers(session["file"])
        lengths = lengths_of(session, numbers)
        wall_lengths = lengths_of(session, numbers, float("inf"))
        declared = next((r["calls"] for r in rows if r["type"] == "session"), None)
        mismatched += len(numbers) != len(session["_ts"]) or (
            declared is not None and declared != max(numbers, default=0)
        )
        number = {i: n for i, n in enumerate(numbers) if n}
        mine: set[int] = set()
        for ep in session["episodes"]:
            if not any(number.get(i) for i in range(ep["start"], ep["last"] + 1)):
                continue
            loops += 1
            mine.update(number[i] for i in range(ep["start"], ep["last"] + 1) if i in number)
        for key in ("all", "sure"):
            theirs: set[int] = set()
            disputed: set[int] = set()
            for r in rows:
                if r["type"] != "stuck":
                    continue
                span = set(range(r["start"], r["end"] + 1))
                (disputed if key == "sure" and r.get("unsure") else theirs).update(span)
            counted_mine = mine - (disputed - theirs)
            both = theirs & counted_mine
            row = sums[key]
            row[0] += len(theirs)
            row[1] += len(counted_mine)
            row[2] += len(both)

            for each, into in ((lengths, seconds), (wall_lengths, wall)):

                def span_s(calls: set[int], each: list[float] = each) -> float:
                    return sum(each[n - 1] for n in calls if 0 < n <= len(each))

                into[key][0] += span_s(theirs)
                into[key][1] += span_s(counted_mine)
                into[key][2] += span_s(both)
    out = {"files": len(by_file), "read": len(sessions), "report_loops_main": loops}
    out["call_count_mismatches"] = mismatched
    for key in ("all", "sure"):
        lab, rep, both = sums[key][:3]
        lab_s, rep_s, both_s = seconds[key]
        out[key] = {
            "labelled_calls": int(lab),
            "report_calls": int(rep),
            "both_calls": int(both),
            "coverage_calls": round(both / lab, 3) if lab else None,
            "precision_calls": round(both / rep, 3) if rep else None,
            "labelled_seconds": round(lab_s),
            "report_seconds": round(rep_s),
            "coverage_seconds": round(both_s / lab_s, 3) if lab_s else None,
            "precision_seconds": round(both_s / rep_s, 3) if rep_s else None,
        }
        lab_w, rep_w, both_w = wall[key]
        out[key]["coverage_wall_seconds"] = round(both_w / lab_w, 3) if lab_w else None
        out[key]["precision_wall_seconds"] = round(both_w / rep_w, 3) if rep_w else None
    return out


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = Path(args[0]) if args else DEFAULT_DIR
    if not (folder / "LABELS.jsonl").is_file():
        print(
            f"no LABELS.jsonl in {folder}: the labelled transcripts are not here", file=sys.stderr
        )
        return 1
    with tempfile.TemporaryDirectory(prefix="metacog-bench-loops-") as home:
        os.environ["METACOG_HOME"] = home
        out = score(folder)
    if "--json" in sys.argv:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"{out['read']}/{out['files']} labelled transcripts read, {out['report_loops_main']} report "
        f"loops on the main thread ({out['call_count_mismatches']} files whose call count differs "
        "from the label's)"
    )
    for key, name in (("all", "every stuck label"), ("sure", "without unsure labels")):
        row = out[key]
        print(
            f"{name}: labelled {row['labelled_calls']} calls / {row['labelled_seconds']} s, report "
            f"{row['report_calls']} calls / {row['report_seconds']} s; coverage "
            f"{row['coverage_calls']:.0%} of calls, {row['coverage_seconds']:.0%} of time; precision "
            f"{row['precision_calls']:.0%} of calls, {row['precision_seconds']:.0%} of time "
            f"(wall clock, pauses whole: coverage {row['coverage_wall_seconds']:.0%}, precision "
            f"{row['precision_wall_seconds']:.0%})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
