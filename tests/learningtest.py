"""Helpers for the learning tests: sessions with a given summary, dated on an injected clock.

A test module takes the fixtures by binding them, `project = learningtest.project`: imported
by name it would read to ruff as an unused import that each test argument redefines (F401, F811).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from metacog import paths, schema, state, summary
from metacog.learning import digest, store

DAY = 86400.0
T0 = 1_700_000_000.0  # an arbitrary "day 0" for dated evidence

# Summaries that meet a detector's precondition with and without its failure.
LOOP = {"calls": 12, "main_calls": 12, "errors": 5, "max_error_streak": 4}  # error-loop detected
CALM = {"calls": 12, "main_calls": 12, "errors": 3, "max_error_streak": 1}  # error-loop held
QUIET = {"calls": 3, "main_calls": 3}  # no detector's situation arose


def cfg(sections: dict | None = None, **more: dict) -> dict:
    """Config DEFAULTS with some sections' keys replaced, through metacog.schema.merge (so a
    test cannot set up a value the hook would refuse); detector sections are named by rule id,
    so they come as a dict: cfg({"error-loop": {...}})."""
    layer = {**(sections or {}), **more}
    out = schema.merge(schema.DEFAULTS, layer)
    for name, values in layer.items():
        for key, value in values.items():
            assert out[name][key] == value, f"{name}.{key} = {value!r} is refused by schema.merge"
    return out


def state_dir() -> str:
    return paths.state_dir()


def write_session(
    sid: str, root: str, last_ts: float, updated: float | None = None, **fields: object
) -> None:
    """A session state as the hook leaves it: root, cwd, summary (fields over summary.new())."""
    st = state.new_state(sid, last_ts)
    st["root"], st["cwd"] = root, root
    totals = summary.new()
    totals.update(first_ts=last_ts - 600, last_ts=last_ts)
    totals.update(fields)
    st["summary"] = totals
    st["updated"] = last_ts if updated is None else updated
    path = state.path_for(state_dir(), sid)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Path(path).write_text(json.dumps(st))


def session(root: str, sid: str, when: float, fields: dict, conf: dict | None = None) -> str:
    """One whole session: digest at the first prompt, work, SessionEnd. Returns the digest."""
    from metacog import learning

    conf = conf or cfg()
    learning.on_session_start(root, sid, state_dir(), conf, when - 600)
    text = learning.digest_once(root, sid, state_dir(), conf, when - 600)
    write_session(sid, root, when, **fields)
    learning.on_session_end(root, sid, state_dir(), conf, when)
    return text


def records(path: str) -> list[dict]:
    if not path or not os.path.exists(path):
        return []
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def project_records(root: str) -> list[dict]:
    return records(store.project_path(root))


def global_records() -> list[dict]:
    return records(store.global_path())


def rule(root: str, rule_id: str, now: float, conf: dict | None = None) -> dict | None:
    from metacog import learning

    return next((r for r in learning.rules(root, conf or cfg(), now) if r["id"] == rule_id), None)


def active(sid: str) -> set[str]:
    return digest.read_active(state_dir(), sid)


def git_project(tmp_path: Path, name: str) -> str:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    return str(root)


@pytest.fixture
def project(tmp_path: Path) -> str:
    return git_project(tmp_path, "proj")


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[[str], str]:
    """make_project(name): a git project of that name in the test's tmp_path; its root."""
    return functools.partial(git_project, tmp_path)
