"""Parallel hooks: stores, markers and evaluation hold under 8+ processes at once."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import learningtest
import pytest
from learningtest import (
    DAY,
    LOOP,
    T0,
    cfg,
    global_records,
    project_records,
    state_dir,
    write_session,
)

from metacog import learning
from metacog.learning import confidence, store

WORKERS = 8
CTX = multiprocessing.get_context("fork")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="fork and flock")

project = learningtest.project
make_project = learningtest.make_project


def run_all(targets: list[tuple]) -> list:
    """Start every (function, *args) in its own process behind one barrier; their results in order."""
    barrier, results = CTX.Barrier(len(targets)), CTX.Queue()

    def wrap(i: int, fn: object, args: tuple) -> None:
        barrier.wait(timeout=30)
        try:
            results.put((i, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            results.put((i, f"raised {type(exc).__name__}: {exc}"))

    procs = [CTX.Process(target=wrap, args=(i, t[0], t[1:])) for i, t in enumerate(targets)]
    for p in procs:
        p.start()
    out = dict(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    return [out[i] for i in range(len(targets))]


def appender(path: str, worker: int, count: int, compact_bytes: int) -> int:
    for i in range(count):
        rec = {
            "v": 1,
            "type": "detection",
            "rule": "error-loop",
            "at": T0 + i,
            "session": f"{worker:04x}{i:08x}",
        }
        store.append(path, [rec], T0 + count, compact_bytes, 0)
    return count


def test_parallel_appends_are_whole_lines_and_none_is_lost(project: str) -> None:
    path = store.project_path(project)
    assert run_all([(appender, path, w, 250, 1 << 30) for w in range(WORKERS)]) == [250] * WORKERS
    lines = Path(path).read_text().splitlines()
    sessions = Counter(json.loads(line)["session"] for line in lines)
    assert len(lines) == len(sessions) == WORKERS * 250
    assert learning.health(project)["project"]["corrupt"] == 0


def test_parallel_appends_survive_concurrent_compactions(project: str) -> None:
    path = store.project_path(project)
    run_all([(appender, path, w, 150, 4096) for w in range(WORKERS)])
    assert os.path.getsize(path) < 4096 + 200
    tally = confidence.tally(store.read(path, T0 + DAY).records)["error-loop"]
    assert tally.detections == WORKERS * 150
    assert learning.health(project)["quarantined"] == []


def end(root: str, sid: str, now: float) -> str:
    learning.on_session_end(root, sid, state_dir(), cfg(), now)
    return sid


def start(root: str, sid: str, now: float) -> str:
    learning.on_session_start(root, sid, state_dir(), cfg(), now)
    return sid


@pytest.mark.parametrize("round_", range(3))
def test_session_end_racing_the_next_session_start_evaluates_once(
    project: str, round_: int
) -> None:
    finished = [f"old{round_}-{i}" for i in range(WORKERS)]
    for sid in finished:
        write_session(sid, project, T0, **LOOP)  # stale at T0 + 1 day: every start may pick it up
    later = T0 + DAY
    targets = [(end, project, sid, later) for sid in finished]
    targets += [(start, project, f"new{round_}-{i}", later) for i in range(WORKERS)]
    results = run_all(targets)
    assert not [r for r in results if str(r).startswith("raised")], results
    per_session = Counter(r["session"] for r in project_records(project))
    assert len(per_session) == WORKERS and set(per_session.values()) == {1}


def test_sessions_of_many_projects_at_once(make_project: Callable[[str], str]) -> None:
    roots = [make_project(f"p{i}") for i in range(WORKERS)]
    for i, root in enumerate(roots):
        write_session(f"s{i}", root, T0, **LOOP)
    run_all([(end, root, f"s{i}", T0 + 60) for i, root in enumerate(roots)])
    assert all(len(project_records(root)) == 1 for root in roots)
    # Promotion happened exactly once, with every project counted.
    aggregates = [r for r in global_records() if r["type"] == "aggregate"]
    assert len(aggregates) == 1
    assert (
        aggregates[0]["detections"] + sum(r["type"] == "detection" for r in global_records())
        == WORKERS
    )


def digest(root: str, sid: str) -> str:
    return learning.digest_once(root, sid, state_dir(), cfg(), T0)


def test_one_session_gets_its_digest_once_whatever_races(project: str) -> None:
    store.append(
        store.project_path(project),
        [{"v": 1, "type": "detection", "rule": "error-loop", "at": T0}],
        T0,
        1 << 20,
        30,
    )
    texts = run_all([(digest, project, "same") for _ in range(WORKERS)])
    assert sum(bool(t) for t in texts) == 1


def test_parallel_sessions_each_get_a_digest_and_a_marker(project: str) -> None:
    store.append(
        store.project_path(project),
        [{"v": 1, "type": "detection", "rule": "error-loop", "at": T0}],
        T0,
        1 << 20,
        30,
    )
    texts = run_all([(digest, project, f"s{i}") for i in range(WORKERS)])
    assert all(t.startswith("metacog:") for t in texts) and len(set(texts)) == 1
    marks = Path(state_dir(), "learning", "marks")
    assert sorted(p.name for p in marks.glob("*.active")) == sorted(
        f"s{i}.active" for i in range(WORKERS)
    )
