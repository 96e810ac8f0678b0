"""Which sessions get evaluated, when, and only once; and the whole loop through the hook."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import learningtest
import pytest
from hooktest import agent_text, captured, send
from learningtest import DAY, LOOP, T0, cfg, project_records, rule, state_dir, write_session

from metacog import config, events, learning, paths, state
from metacog.learning import digest, evaluate, scopes, store

HOUR = 3600.0

project = learningtest.project
make_project = learningtest.make_project


def start(root: str, sid: str, now: float) -> None:
    learning.on_session_start(root, sid, state_dir(), cfg(), now)


def test_a_session_still_running_is_left_alone(project: str) -> None:
    write_session("running", project, T0, **LOOP)
    start(project, "new", T0 + HOUR)  # within stale_after_minutes (120)
    assert project_records(project) == []
    start(project, "newer", T0 + 2 * HOUR)
    assert len(project_records(project)) == 1


def test_an_ended_session_is_picked_up_at_once(project: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session("ended", project, T0, **LOOP)

    def cut_short(*args: object) -> None:
        raise TimeoutError("SessionEnd hook killed")

    real = evaluate.evaluate
    monkeypatch.setattr(evaluate, "evaluate", cut_short)
    with pytest.raises(TimeoutError):
        learning.on_session_end(project, "ended", state_dir(), cfg(), T0)
    monkeypatch.setattr(evaluate, "evaluate", real)  # not undo(): that would also undo the isolated home
    start(project, "next", T0 + 60)  # not stale yet, but it ended
    assert len(project_records(project)) == 1


def test_sessions_of_other_projects_wait_for_their_own(make_project: Callable[[str], str], project: str) -> None:
    other = make_project("other")
    write_session("theirs", other, T0, **LOOP)
    start(project, "mine", T0 + DAY)
    assert project_records(other) == [] and project_records(project) == []
    start(other, "theirs-next", T0 + DAY)
    assert len(project_records(other)) == 1


def test_each_session_is_evaluated_exactly_once(project: str) -> None:
    write_session("s0", project, T0, **LOOP)
    for _ in range(3):
        learning.on_session_end(project, "s0", state_dir(), cfg(), T0 + 60)
        start(project, "s1", T0 + DAY)
    assert len(project_records(project)) == 1


def test_a_crash_between_evidence_and_mark_still_counts_once(project: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session("s0", project, T0, **LOOP)
    real = scopes.record

    def crash(*args: object) -> list:
        raise OSError("killed after the project append")

    monkeypatch.setattr(scopes, "record", crash)
    with pytest.raises(OSError):
        learning.on_session_end(project, "s0", state_dir(), cfg(), T0 + 60)
    monkeypatch.setattr(scopes, "record", real)
    start(project, "s1", T0 + DAY)
    assert len(project_records(project)) == 2  # written twice ...
    assert rule(project, "error-loop", T0 + DAY)["detections"] == 1  # ... counted once


def test_a_session_without_state_or_work_is_marked_and_says_nothing(project: str) -> None:
    learning.on_session_end(project, "ghost", state_dir(), cfg(), T0)
    assert os.path.exists(Path(state_dir(), "learning", "marks", "ghost.done"))
    assert project_records(project) == []


def test_marks_are_collected_only_once_their_session_is_gone(project: str) -> None:
    write_session("kept", project, T0, **LOOP)
    learning.on_session_end(project, "kept", state_dir(), cfg(), T0)
    learning.on_session_end(project, "gone", state_dir(), cfg(), T0)
    digest.cached(project, state_dir(), cfg(), T0)
    marks = Path(state_dir(), "learning", "marks")
    assert list(marks.parent.glob("digest-*.json"))
    far = time.time() + 31 * DAY  # the marks' mtimes are real ones
    evaluate.collect_marks(state_dir(), far)
    assert sorted(p.name for p in marks.iterdir()) == ["kept.done", "kept.done.lock", "kept.ended"]
    assert not list(marks.parent.glob("digest-*.json"))  # caches of projects not seen for 30 days
    start(project, "later", far)
    assert len(project_records(project)) == 1


def test_disabled_learning_records_nothing(project: str) -> None:
    write_session("s0", project, T0, **LOOP)
    off = cfg(learning={"enabled": False})
    learning.on_session_end(project, "s0", state_dir(), off, T0)
    learning.on_session_start(project, "s1", state_dir(), off, T0 + DAY)
    assert project_records(project) == []


# The whole loop through the hook, in-process. `wired` applies the wiring proposed for
# metacog/events.py; it only adds to a handler that answered nothing, so it stays
# correct once events.py calls metacog.learning itself.
@pytest.fixture
def wired(monkeypatch: pytest.MonkeyPatch) -> None:
    def settings(payload: dict, sd: str) -> tuple[str, str, dict]:
        sid = state.clean_session_id(payload.get("session_id"))
        root = config.project_root(payload.get("cwd") or "")
        return sid, root, config.load(paths.config_dir(), sd, root)

    def on_start(payload: dict, sd: str, now: float) -> None:
        sid, root, conf = settings(payload, sd)
        learning.on_session_start(root, sid, sd, conf, now)

    def on_prompt(payload: dict, sd: str, now: float) -> dict | None:
        if str(payload.get("prompt", "")).lstrip().startswith(events.TASK_NOTIFICATION):
            return None
        sid, root, conf = settings(payload, sd)
        return events.reply("UserPromptSubmit", learning.digest_once(root, sid, sd, conf, now))

    def on_end(payload: dict, sd: str, now: float) -> None:
        sid, root, conf = settings(payload, sd)
        learning.on_session_end(root, sid, sd, conf, now)

    for name, extra in (("SessionStart", on_start), ("UserPromptSubmit", on_prompt), ("SessionEnd", on_end)):
        original = events.HANDLERS[name]

        def handler(payload: dict, sd: str, now: float, size: int, original=original, extra=extra) -> dict | None:
            out = original(payload, sd, now, size)
            return out if out is not None else extra(payload, sd, now)

        monkeypatch.setitem(events.HANDLERS, name, handler)


def test_the_loop_through_the_hook(wired: None, project: str) -> None:
    def event(name: str, sid: str, **extra: object) -> dict:
        base = captured(name) if name != "SessionEnd" else {"hook_event_name": "SessionEnd", "reason": "other"}
        return {**base, "session_id": sid, "cwd": project, **extra}

    fail = {**captured("PostToolUseFailure", "Bash"), "session_id": "one", "cwd": project}
    assert send(event("SessionStart", "one"), now=T0) is None
    assert send(event("UserPromptSubmit", "one"), now=T0 + 1) is None  # nothing learned yet
    for i in range(3):
        send(fail, now=T0 + 10 + i)
    assert send(event("SessionEnd", "one"), now=T0 + 60) is None
    recorded = [(r["type"], r["rule"], r["at"]) for r in project_records(project)]
    assert recorded == [("detection", "error-loop", T0 + 12)]  # dated by the session's last call

    assert send(event("SessionStart", "two"), now=T0 + DAY) is None
    text = agent_text(send(event("UserPromptSubmit", "two"), now=T0 + DAY + 1))
    assert text.startswith("metacog:") and "- error-loop: " in text and "(seen 1×, held 0×)" in text
    assert "- Last session here: 3 tool calls" in text
    assert send(event("UserPromptSubmit", "two"), now=T0 + DAY + 2) is None  # once per session
    assert send(event("SessionEnd", "two"), now=T0 + DAY + 60) is None
    held = rule(project, "error-loop", T0 + DAY + 61)
    assert (held["detections"], held["suppressions"]) == (1, 0)  # two never erred: the situation never arose
    assert store.project_path(project).startswith(project)
