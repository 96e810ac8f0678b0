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

from metacog import learning, state
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


def test_an_ended_session_is_picked_up_at_once(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session("ended", project, T0, **LOOP)

    def cut_short(*args: object) -> None:
        raise TimeoutError("SessionEnd hook killed")

    real = evaluate.evaluate
    monkeypatch.setattr(evaluate, "evaluate", cut_short)
    with pytest.raises(TimeoutError):
        learning.on_session_end(project, "ended", state_dir(), cfg(), T0)
    monkeypatch.setattr(
        evaluate, "evaluate", real
    )  # not undo(): that would also undo the isolated home
    start(project, "next", T0 + 60)  # not stale yet, but it ended
    assert len(project_records(project)) == 1


def test_a_start_evaluates_for_a_bounded_time_and_the_next_goes_on(project: str) -> None:
    # The resident process answers a start too, and its watchdog ends a call at 6 s: a long
    # backlog is worked off over several starts, none lost.
    for sid in ("old1", "old2"):
        write_session(sid, project, T0, **LOOP)
    assert learning.on_session_start(project, "next", state_dir(), cfg(), T0 + DAY, -1.0) is False
    assert project_records(project) == []
    assert learning.on_session_start(project, "later", state_dir(), cfg(), T0 + DAY + 60) is True
    assert len(project_records(project)) == 2


def test_no_state_is_collected_while_sessions_wait_for_their_evaluation(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:

    write_session("old", project, T0, **LOOP)
    collected: list = []
    monkeypatch.setattr(state, "collect_garbage", lambda *a: collected.append(a))
    start_event = {**captured("SessionStart"), "session_id": "new", "cwd": project}
    monkeypatch.setattr(learning, "START_BUDGET_S", -1.0)
    assert send(start_event, now=T0 + DAY) is None
    assert collected == [] and project_records(project) == []
    monkeypatch.setattr(learning, "START_BUDGET_S", 2.0)
    assert send(start_event, now=T0 + DAY + 60) is None
    assert len(collected) == 1 and len(project_records(project)) == 1


def test_sessions_of_other_projects_wait_for_their_own(
    make_project: Callable[[str], str], project: str
) -> None:
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


def test_a_crash_between_evidence_and_mark_still_counts_once(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_session("s0", project, T0, **LOOP)
    real = scopes.record

    def crash(*args: object) -> list:
        raise OSError("killed after the project append")

    monkeypatch.setattr(scopes, "record", crash)
    with pytest.raises(OSError):
        learning.on_session_end(project, "s0", state_dir(), cfg(), T0 + 60)
    monkeypatch.setattr(scopes, "record", real)
    start(project, "s1", T0 + DAY)
    assert len(project_records(project)) == 1  # written once: the store said it held it ...
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


# The whole loop through the hook, in-process: handlers.py calls metacog.learning itself.
def test_the_loop_through_the_hook(project: str) -> None:
    def event(name: str, sid: str, **extra: object) -> dict:
        base = (
            captured(name)
            if name != "SessionEnd"
            else {"hook_event_name": "SessionEnd", "reason": "other"}
        )
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
    assert (held["detections"], held["suppressions"]) == (
        1,
        0,
    )  # two never erred: the situation never arose
    assert store.project_path(project).startswith(project)


def test_in_the_resident_a_sessions_end_is_learned_from_once_its_reply_is_out(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing of SessionEnd's work is said: Claude Code need not wait for its writes.
    fail = {**captured("PostToolUseFailure", "Bash"), "session_id": "one", "cwd": project}
    for i in range(3):
        send(fail, now=T0 + 10 + i)
    later: list = []
    monkeypatch.setattr(state, "AFTER", later)
    end = {"hook_event_name": "SessionEnd", "reason": "other", "session_id": "one", "cwd": project}
    assert send(end, now=T0 + 60) is None
    monkeypatch.setattr(state, "AFTER", None)
    assert len(later) == 1 and project_records(project) == []
    later[0]()
    recorded = [(r["type"], r["rule"]) for r in project_records(project)]
    assert recorded == [("detection", "error-loop")]


# A session idle for stale_after_minutes is evaluated by the next session of its project,
# though it may still be open; what it does afterwards must not be lost, and the latest
# evaluation of a session replaces the earlier ones instead of adding to them.
def index_tally(root: str, rule_id: str) -> list | None:
    import json

    index = json.loads(Path(scopes.index_path()).read_text())
    return index["rules"].get(rule_id, {}).get("projects", {}).get(scopes.project_hash(root))


def idle_then_more(root: str, sid: str, before: dict, after: dict) -> None:
    """`sid` works, goes idle for 3 hours (another session evaluates it), works again, ends."""
    write_session(sid, root, T0, **before)
    start(root, "meanwhile", T0 + 3 * HOUR)  # stale: evaluated while still open
    write_session(sid, root, T0 + 4 * HOUR, **after)
    learning.on_session_end(root, sid, state_dir(), cfg(), T0 + 4 * HOUR)


def test_work_after_an_idle_evaluation_is_not_lost(project: str) -> None:
    idle_then_more(project, "a", learningtest.QUIET, {**LOOP, "calls": 9})
    assert [(r["type"], r["rule"], r["at"]) for r in project_records(project)] == [
        ("detection", "error-loop", T0 + 4 * HOUR)
    ]
    assert rule(project, "error-loop", T0 + 5 * HOUR)["detections"] == 1


def test_a_suppression_later_detected_counts_as_the_detection_only(project: str) -> None:
    learningtest.session(
        project, "s0", T0 - DAY, LOOP
    )  # makes error-loop active in the next digest
    learning.digest_once(project, "a", state_dir(), cfg(), T0 - 600)
    idle_then_more(project, "a", learningtest.CALM, {**LOOP, "calls": 20})
    r = rule(project, "error-loop", T0 + 5 * HOUR)
    assert (r["detections"], r["suppressions"]) == (2, 0)
    assert index_tally(project, "error-loop")[:2] == [2, 0]  # the promotion index agrees


def test_evidence_a_later_evaluation_no_longer_gives_is_withdrawn(project: str) -> None:
    heavy = {"calls": 8, "main_calls": 8, "edits": 8}  # write-heavy: 8 edits, no reading
    idle_then_more(project, "a", heavy, {**heavy, "calls": 20, "reads": 10})
    assert rule(project, "write-heavy", T0 + 5 * HOUR) is None
    assert index_tally(project, "write-heavy")[:2] == [0, 0]


def test_an_unchanged_verdict_is_not_written_again(project: str) -> None:
    idle_then_more(project, "a", LOOP, {**LOOP, "calls": 30})
    assert len(project_records(project)) == 1
    assert index_tally(project, "error-loop")[:2] == [1, 0]
    learning.on_session_end(
        project, "a", state_dir(), cfg(), T0 + 5 * HOUR
    )  # nothing new: nothing done
    start(project, "later", T0 + DAY)
    assert len(project_records(project)) == 1


def test_sessions_judged_by_older_detectors_are_judged_again(
    project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Detectors before version 2 took a long session for the situation of rules it never
    # tested ("held" blast-radius on a session that edited only docs). A session whose state
    # is still kept is judged again once, and the evidence it no longer gives is retracted.
    import json

    from metacog.learning import detectors

    docs_only = {"calls": 14, "main_calls": 14, "edits": 6, "reads": 4}
    real_judge, real_version = detectors.judge, detectors.VERSION

    def old_judge(summary: object, active: object, conf: dict) -> list:
        return [*real_judge(summary, active, conf), ("suppression", "blast-radius", "")]

    monkeypatch.setattr(detectors, "judge", old_judge)
    monkeypatch.setattr(detectors, "VERSION", 1)
    write_session("a", project, T0, **docs_only)
    learning.on_session_end(project, "a", state_dir(), cfg(), T0 + 60)
    monkeypatch.setattr(
        detectors, "judge", real_judge
    )  # not undo(): that would also undo the isolated home
    monkeypatch.setattr(detectors, "VERSION", real_version)
    done = Path(state_dir(), "learning", "marks", "a.done")
    mark = json.loads(done.read_text())
    mark.pop("judge", None)  # as the marks written before detectors were versioned
    done.write_text(json.dumps(mark))
    assert rule(project, "blast-radius", T0 + HOUR)["suppressions"] == 1

    start(project, "next", T0 + DAY)
    assert [(r["type"], r["rule"]) for r in project_records(project)] == [
        ("suppression", "blast-radius"),
        ("retraction", "blast-radius"),
    ]
    assert rule(project, "blast-radius", T0 + DAY) is None
    assert json.loads(done.read_text())["judge"] == detectors.VERSION
    start(project, "later", T0 + 2 * DAY)  # judged by these detectors now: not again
    assert len(project_records(project)) == 2


def test_a_resumed_session_is_not_taken_for_ended(project: str) -> None:
    write_session("a", project, T0, **learningtest.QUIET)
    learning.on_session_end(project, "a", state_dir(), cfg(), T0)
    start(project, "a", T0 + HOUR)  # `claude --resume`: the same id starts again
    write_session("a", project, T0 + 2 * HOUR, **LOOP)
    start(project, "b", T0 + 2 * HOUR + 60)  # a is running again, and not stale
    assert project_records(project) == []
    learning.on_session_end(project, "a", state_dir(), cfg(), T0 + 3 * HOUR)
    assert [r["rule"] for r in project_records(project)] == ["error-loop"]


def test_the_done_mark_says_what_was_evaluated(project: str) -> None:
    import json

    write_session("a", project, T0, **LOOP)
    learning.on_session_end(project, "a", state_dir(), cfg(), T0 + 60)
    mark = json.loads(Path(state_dir(), "learning", "marks", "a.done").read_text())
    assert mark["updated"] == T0 and mark["evidence"] == [["detection", "error-loop", ""]]
    assert isinstance(mark["seen"], str) and project not in json.dumps(mark["evidence"])


def test_retrospectives_and_digest_caches_of_projects_not_seen_for_30_days_are_collected(
    project: str, make_project: Callable[[str], str]
) -> None:
    other = make_project("other")
    for i, root in enumerate((project, other)):
        learningtest.session(root, f"s{i}", T0 + i, {**LOOP, "calls": 5})
    folder = Path(state_dir(), "learning")
    mine, theirs = (
        {
            Path(digest.retro_path(state_dir(), root)).name,
            Path(digest.cache_path(state_dir(), root)).name,
        }
        for root in (project, other)
    )
    assert {p.name for p in folder.glob("*.json")} == mine | theirs
    now = time.time()
    for name in mine:  # untouched for 31 days: the project was not worked on since
        os.utime(folder / name, (now - 31 * DAY, now - 31 * DAY))
    stray = folder / f"{min(mine)}.tmp-999"  # a writer killed before its rename
    stray.write_text("{")
    os.utime(stray, (now - 31 * DAY, now - 31 * DAY))
    evaluate.collect_marks(state_dir(), now)
    assert {p.name for p in folder.iterdir() if p.is_file()} == theirs
    assert sorted(
        p.name for p in (folder / "marks").iterdir()
    ) == sorted(  # their sessions' states remain
        f"s{i}.{kind}" for i in range(2) for kind in ("active", "done", "done.lock", "ended")
    )


def test_marks_of_every_kind_go_with_their_session(project: str) -> None:
    learningtest.session(project, "s0", T0, LOOP)
    marks = Path(state_dir(), "learning", "marks")
    (marks / "s0.done.tmp-999").write_text("{")
    assert {p.name.split(".", 1)[1] for p in marks.iterdir()} == {
        "active",
        "done",
        "done.lock",
        "ended",
        "done.tmp-999",
    }
    far = time.time() + 2 * DAY
    evaluate.collect_marks(state_dir(), far)
    assert len(list(marks.iterdir())) == 5  # the session's state is still there
    os.unlink(state.path_for(state_dir(), "s0"))
    evaluate.collect_marks(state_dir(), far)
    assert list(marks.iterdir()) == []


def test_a_session_quiet_for_hours_then_looping_through_the_hook(project: str) -> None:
    def event(name: str, sid: str, **extra: object) -> dict:
        base = (
            captured(name)
            if name != "SessionEnd"
            else {"hook_event_name": "SessionEnd", "reason": "other"}
        )
        return {**base, "session_id": sid, "cwd": project, **extra}

    send(event("SessionStart", "a"), now=T0)
    send(event("UserPromptSubmit", "a"), now=T0 + 1)
    for i in range(3):
        send(
            {**captured("PostToolUse", "Bash"), "session_id": "a", "cwd": project}, now=T0 + 10 + i
        )
    send(event("SessionStart", "b"), now=T0 + 3 * HOUR)  # a is stale: evaluated, still open
    assert project_records(project) == []
    fail = {**captured("PostToolUseFailure", "Bash"), "session_id": "a", "cwd": project}
    for i in range(6):
        send(fail, now=T0 + 3 * HOUR + 60 + i)
    send(event("SessionEnd", "a"), now=T0 + 3 * HOUR + 120)
    assert [(r["type"], r["rule"]) for r in project_records(project)] == [
        ("detection", "error-loop")
    ]


KILL_AT = {
    # After the project's store took the evidence, before the promotion index counted it.
    "before-index": "scopes.record = die",
    # After the index counted it, before the global store and the `.done` mark.
    "before-global": (
        "real = store.append\n"
        "store.append = lambda path, *a, **k: die() if path == store.global_path() else real(path, *a, **k)"
    ),
}


@pytest.mark.parametrize("where", list(KILL_AT))
def test_sigkill_between_append_and_mark_then_a_compaction_counts_the_session_once(
    project: str, where: str
) -> None:
    import json
    import signal
    import subprocess
    import sys

    old = [
        {
            "v": 1,
            "type": "detection",
            "rule": "error-loop",
            "at": T0 - 40 * DAY,
            "session": f"{i:016x}",
        }
        for i in range(10)
    ]
    Path(project, ".claude").mkdir()
    Path(store.project_path(project)).write_text("".join(json.dumps(r) + "\n" for r in old))
    write_session("s0", project, T0, **LOOP)
    tests = Path(__file__).parent
    code = (
        f"import os, signal, sys\nsys.path[:0] = [{str(tests.parent)!r}, {str(tests)!r}]\n"
        "from metacog import learning\nfrom metacog.learning import scopes, store\n"
        "from learningtest import cfg, state_dir\n"
        "def die(*args, **kwargs):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
        f"{KILL_AT[where]}\n"
        f"learning.on_session_end({project!r}, 's0', state_dir(), cfg(), {T0 + 60})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    # Another session's evidence compacts the store before anything finishes s0's evaluation,
    # folding everything it may (keep_days = 0) into one aggregate.
    write_session("s1", project, T0 + 120, **LOOP)
    small = cfg(learning={"compact_bytes": 1024, "keep_days": 0})
    learning.on_session_end(project, "s1", state_dir(), small, T0 + 180)
    assert any(r["type"] == "aggregate" for r in project_records(project))
    start(project, "s2", T0 + DAY)  # finishes s0's evaluation
    assert rule(project, "error-loop", T0 + DAY)["detections"] == 12  # 10 old, s0 once, s1
    index = json.loads(Path(scopes.index_path()).read_text())
    assert [t[0] for t in index["rules"]["error-loop"]["projects"].values()] == [2]  # s0 and s1
    assert not list(Path(state_dir(), "learning", "marks").glob("*.writing"))
