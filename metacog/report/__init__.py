"""`metacog report`: what metacog caught in a person's own sessions, what loops cost, and
whether speaking about them helped.

sources.py finds and reads the transcripts (through the replay engine, metacog/replay.py),
episodes.py turns the senses' loop signals into stuck episodes, figures.py adds every
session up, terminal.py and page.py show the result.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from metacog import paths, replay
from metacog.report import delivery, figures, sources


def build(
    files: list[str],
    since: float | None = None,
    project: str = "",
    timelines: bool = False,
    progress: Callable[[int, str], None] | None = None,
    keep_calls: bool = False,
    workers: int | None = None,
) -> dict:
    """The report over `files` (transcript paths), as one JSON-ready object; `keep_calls`
    keeps each call's time and window (`_ts`, `_agent`) for benchmarks/bench_report_loops.py;
    `workers`: processes replaying files (default: one per core; 1 reads in this process)."""
    tally = figures.Tally(timelines, keep_calls)

    def empty() -> None:
        tally.empty += 1

    summarize = functools.partial(figures.summarize, timelines=timelines, keep_calls=keep_calls)
    read = sources.read_all(
        files,
        summarize,
        tally.merge,
        tally.skip,
        empty,
        replay.global_settings(),
        since,
        project,
        progress,
        workers,
    )
    report = tally.finish()
    report["delivery"] = delivery.compare(report["sessions"], delivery.sent(paths.state_dir()))
    report["files"] = {
        "listed": len(files),
        "read": read,
        "skipped": len(report["skipped"]),
        "empty": tally.empty,
    }
    return report
