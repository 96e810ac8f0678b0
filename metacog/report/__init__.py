"""`metacog report`: what metacog caught in a person's own sessions, what loops cost, and
whether speaking about them helped.

sources.py finds and reads the transcripts (through the replay engine, metacog/replay.py),
episodes.py turns the senses' loop signals into stuck episodes, figures.py adds every
session up, terminal.py and page.py show the result.
"""

from __future__ import annotations

from collections.abc import Callable

from metacog import replay
from metacog.report import figures, sources


def build(
    files: list[str],
    since: float | None = None,
    project: str = "",
    timelines: bool = False,
    progress: Callable[[int, str], None] | None = None,
    keep_calls: bool = False,
) -> dict:
    """The report over `files` (transcript paths), as one JSON-ready object; `keep_calls`
    keeps each call's time and window (`_ts`, `_agent`) for benchmarks/bench_report_loops.py."""
    tally = figures.Tally(timelines, keep_calls)

    def empty() -> None:
        tally.empty += 1

    read = sources.read_all(
        files, tally.add, tally.skip, empty, replay.global_settings(), since, project, progress
    )
    report = tally.finish()
    report["files"] = {
        "listed": len(files),
        "read": read,
        "skipped": len(report["skipped"]),
        "empty": tally.empty,
    }
    return report
