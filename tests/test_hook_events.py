"""Each event in-process on captured payloads, and the real process boundary."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hooktest import CAPTURED, agent_text, captured, send

from metacog import state

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "payload", CAPTURED, ids=[f"{p['hook_event_name']}-{p.get('tool_name', '')}" for p in CAPTURED]
)
def test_every_captured_event_alone_is_silent(payload: dict) -> None:
    assert send(payload) is None


def test_captured_session_in_order_is_silent() -> None:
    assert [send(p) for p in CAPTURED] == [None] * len(CAPTURED)


def test_repeated_failure_reaches_the_agent_through_additional_context() -> None:
    fail = captured("PostToolUseFailure", "Bash")
    replies = [send(fail) for _ in range(3)]
    assert replies[:2] == [None, None]
    out = replies[2]
    assert out is not None and set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert agent_text(out).startswith("metacog: the same error 3 times")
    assert "ZeroDivisionError" in agent_text(out)


def test_failure_reported_inside_post_tool_use_counts() -> None:
    bad = captured(
        "PostToolUse", "Bash", tool_response={"success": False, "error": "boom: disk full"}
    )
    replies = [send(bad) for _ in range(3)]
    assert replies[2]["hookSpecificOutput"]["hookEventName"] == "PostToolUse"


def test_prompt_submit_records_that_the_person_spoke(isolated_home: Path) -> None:
    fail = captured("PostToolUseFailure", "Bash")
    send(fail)
    send(fail)
    assert send(captured("UserPromptSubmit")) is None
    # The streak starts again after the person spoke (no "3 times in a row"); that the same
    # problem is back a 3rd time this session is still worth a line (Habit).
    assert "the same problem is back for the 3rd time this session" in agent_text(send(fail))
    state = json.loads(next((isolated_home / "state" / "sessions").glob("*.json")).read_text())
    assert state["windows"]["main"]["prompt_calls"] == 1
    assert state["windows"]["main"]["prompts"] == 1


def test_task_notification_is_not_the_person() -> None:
    fail = captured("PostToolUseFailure", "Bash")
    send(fail)
    send(fail)
    send(captured("UserPromptSubmit", prompt="<task-notification>agent done</task-notification>"))
    assert agent_text(send(fail)).startswith("metacog: the same error 3 times")


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[]",
        b"null",
        b'{"hook_event_name": 5}',
        b"\xff\xfe",
        b'{"hook_event_name": "PostToolUse"}',
        b'{"hook_event_name": "Nope"}',
    ],
)
def test_malformed_input_is_silence(raw: bytes) -> None:
    assert send(raw) is None


@pytest.mark.parametrize(
    "sid", ["../../etc/passwd", "", "a" * 5000, "\x00\x1b[31m", "..", None, 42]
)
def test_hostile_session_ids_stay_inside_the_state_dir(sid: object, isolated_home: Path) -> None:
    fail = captured("PostToolUseFailure", "Bash", session_id=sid)
    said = [agent_text(send(fail)) for _ in range(3)]
    kept = state.clean_session_id(sid)
    if kept:  # what is left of the id names the session, which is felt as any other
        assert said[2].startswith("metacog: the same error 3 times"), said
        assert [p.name for p in (isolated_home / "state" / "sessions").glob("*.json")] == [
            kept + ".json"
        ]
    else:  # nothing is left: no session, silence
        assert said == [""] * 3 and not (isolated_home / "state" / "sessions").exists()
    for path in isolated_home.rglob("*"):
        assert path.resolve().is_relative_to(isolated_home.resolve())
    for path in (isolated_home / "state" / "sessions").glob("*.json"):
        assert len(path.name) <= 64 + len(".json")


def run_hook(payload: bytes, env: dict[str, str]) -> subprocess.CompletedProcess:
    code = "import sys; sys.path.insert(0, sys.argv[1]); from metacog.hook import main; main()"
    return subprocess.run(
        [sys.executable, "-I", "-c", code, str(ROOT)],
        input=payload,
        capture_output=True,
        env=env,
        timeout=30,
        check=False,
    )


def test_real_process_speaks_json_and_exits_zero(isolated_home: Path) -> None:
    env = {**os.environ}
    fail = json.dumps(captured("PostToolUseFailure", "Bash")).encode()
    outs = [run_hook(fail, env) for _ in range(3)]
    assert [o.returncode for o in outs] == [0, 0, 0]
    assert [o.stdout for o in outs[:2]] == [b"", b""]
    assert all(o.stderr == b"" for o in outs)
    assert json.loads(outs[2].stdout)["hookSpecificOutput"]["additionalContext"].startswith(
        "metacog:"
    )


def test_disable_switch_silences_everything(isolated_home: Path) -> None:
    env = {**os.environ, "METACOG_DISABLE": "1"}
    fail = json.dumps(captured("PostToolUseFailure", "Bash")).encode()
    outs = [run_hook(fail, env) for _ in range(4)]
    assert all(o.returncode == 0 and o.stdout == b"" for o in outs)
    assert not isolated_home.exists()


@pytest.mark.sense_may_fail("hook")  # the boundary holds; the log is under the file too
def test_internal_failure_is_logged_not_raised(isolated_home: Path) -> None:
    # A state dir that is a file: every write fails inside the boundary.
    isolated_home.mkdir()
    (isolated_home / "state").write_text("not a directory")
    env = {**os.environ}
    out = run_hook(json.dumps(captured("PostToolUseFailure", "Bash")).encode(), env)
    assert out.returncode == 0 and out.stdout == b"" and out.stderr == b""


@pytest.mark.sense_may_fail("hook")
def test_errors_go_to_the_log(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from metacog import handlers

    def broken(*args: object) -> None:
        raise RuntimeError("sense exploded")

    monkeypatch.setitem(handlers.HANDLERS, "PostToolUse", broken)
    env = dict(os.environ)
    # In-process main() with exit_process=False, stdin replaced.
    import io

    from metacog import hook

    monkeypatch.setattr(
        sys,
        "stdin",
        io.TextIOWrapper(io.BytesIO(json.dumps(captured("PostToolUse", "Read")).encode())),
    )
    hook.main(exit_process=False)
    log = (isolated_home / "state" / "metacog.log").read_text()
    assert "RuntimeError" in log and "sense exploded" in log
    assert dict(os.environ) == env  # the hook leaves the environment as it found it


# PostToolBatch: the calls of one model response once all are answered, refused ones included
# (captured from the real CLI 2.1.328 in tests/fixtures/hook-inputs-batch-2.1.328.jsonl).

BATCHES = [
    p
    for p in (
        json.loads(line)
        for line in (ROOT / "tests" / "fixtures" / "hook-inputs-batch-2.1.328.jsonl")
        .read_text()
        .splitlines()
    )
    if p["hook_event_name"] == "PostToolBatch"
]
REFUSED = next(p for p in BATCHES if "<tool_use_error>" in json.dumps(p))


def refused_batch(use_id: str, old: str = "return 900") -> dict:
    """The captured batch's first refused Edit alone, by its tool_use id."""
    payload = copy.deepcopy(REFUSED)
    call = payload["tool_calls"][0]
    call["tool_use_id"] = use_id
    call["tool_input"]["old_string"] = old
    call["tool_response"] = (
        f"<tool_use_error>String to replace not found in file.\nString: {old}</tool_use_error>"
    )
    payload["tool_calls"] = [call]
    return payload


def session_state(home: Path) -> dict:
    return json.loads(next((home / "state" / "sessions").glob("*.json")).read_text())


def test_the_captured_batches_carry_what_the_handler_reads() -> None:
    # Refused calls' texts are their <tool_use_error>, a passing or failing call's its output.
    assert [len(p["tool_calls"]) for p in BATCHES] == [1, 2, 3, 2]
    assert [c["tool_name"] for c in REFUSED["tool_calls"]] == ["Edit", "Edit", "NoSuchTool"]
    assert all(c["tool_response"].startswith("<tool_use_error>") for c in REFUSED["tool_calls"])


def test_a_batch_without_a_refusal_is_silent_and_touches_no_state(isolated_home: Path) -> None:
    for payload in BATCHES:
        if payload is not REFUSED:
            assert send(payload) is None
    assert not (isolated_home / "state" / "sessions").exists()


def test_refused_edits_are_heard_at_their_batch() -> None:
    # No call's hook fires for them: before PostToolBatch, the 3rd was heard at the next call.
    replies = [send(refused_batch(f"toolu_b{n}"), now=1_800_000_000.0 + n) for n in range(3)]
    assert replies[:2] == [None, None]
    out = replies[2]
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolBatch"
    said = agent_text(out)
    assert said.startswith("metacog: the same error 3 times in a row")
    assert "old_string is not in the file" in said


def test_one_refusal_told_again_is_heard_once(isolated_home: Path) -> None:
    # The look-alike: the same call (one tool_use id) is one refusal, not a streak.
    replies = [send(refused_batch("toolu_b0"), now=1_800_000_000.0 + n) for n in range(3)]
    assert replies == [None, None, None]
    assert session_state(isolated_home)["calls"] == 1


def test_a_refusal_its_batch_told_is_not_read_again_from_the_transcript(
    tmp_path: Path, isolated_home: Path
) -> None:
    # The batches come before the transcript holds their results (a race the payload wins):
    # the next call's hook reads them there, and must not feel them a second time.
    from transcripts import Transcript

    log = Transcript(tmp_path / "t.jsonl")
    told = [refused_batch(f"toolu_r{n}", f"return {n - 1}00") for n in (1, 2)]
    for payload in told:
        payload["transcript_path"] = str(log.path)
    assert [send(p) for p in told] == [None, None]
    for n in range(2):
        log.refused_edit(f"return {n}00")  # ids toolu_r1, toolu_r2
    after = captured(
        "PostToolUse", "Bash", session_id=REFUSED["session_id"], transcript_path=str(log.path)
    )
    # Felt again they would be a streak of 4 refusals, and a 5th call.
    assert send(after) is None
    st = session_state(isolated_home)
    assert st["calls"] == 3
    assert st["refusals_heard"] == ["toolu_r1", "toolu_r2"]


def test_a_refusal_the_transcript_told_is_not_felt_again_at_its_batch(
    tmp_path: Path, isolated_home: Path
) -> None:
    # The transcript holds the batch when its hook runs (measured, 2.1.328): it is read there,
    # with each call's model turn, and the payload's copy is not felt again.
    from transcripts import Transcript

    log = Transcript(tmp_path / "t.jsonl")
    for n in range(3):
        log.refused_edit(f"return {n}00")
        payload = refused_batch(f"toolu_r{n + 1}", f"return {n}00")
        payload["transcript_path"] = str(log.path)
        reply = send(payload)
    assert "the same error 3 times in a row" in agent_text(reply)
    st = session_state(isolated_home)
    assert st["calls"] == 3
    assert [c["turn"] for c in st["windows"]["main"]["actions"]] == [1, 2, 3]


def test_without_batches_the_transcript_still_tells_the_refusals(tmp_path: Path) -> None:
    # An older Claude Code fires no PostToolBatch: the next call's hook reads them.
    from transcripts import Transcript

    log = Transcript(tmp_path / "t.jsonl")
    for n in range(3):
        log.refused_edit(f"return {n}00")
    out = send(captured("PostToolUse", "Read", transcript_path=str(log.path)))
    assert out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "the same error 3 times in a row" in agent_text(out)


def test_a_refused_batch_in_a_real_process(isolated_home: Path) -> None:
    env = {**os.environ}
    outs = [run_hook(json.dumps(refused_batch(f"toolu_b{n}")).encode(), env) for n in range(3)]
    assert [(o.returncode, o.stderr) for o in outs] == [(0, b"")] * 3
    assert [o.stdout for o in outs[:2]] == [b"", b""]
    reply = json.loads(outs[2].stdout)["hookSpecificOutput"]
    assert reply["hookEventName"] == "PostToolBatch"
    assert reply["additionalContext"].startswith("metacog: the same error 3 times in a row")


def test_stop_through_a_real_process_speaks_once_and_a_normal_end_is_silent(
    isolated_home: Path, tmp_path: Path
) -> None:
    from test_turn_end import FAILING, PASSING, Transcript, stop_payload

    env = {**os.environ}
    failing = (
        Transcript(tmp_path / "failing.jsonl")
        .prompt("fix it")
        .bash("pytest -q", FAILING, failed=True)
    )
    passing = Transcript(tmp_path / "passing.jsonl").prompt("fix it").bash("pytest -q", PASSING)

    def stop(path: Path, sid: str) -> subprocess.CompletedProcess:
        payload = stop_payload(
            last_assistant_message="All tests pass ✅", transcript_path=str(path), session_id=sid
        )
        return run_hook(json.dumps(payload).encode(), env)

    said = stop(failing.path, failing.session)
    assert said.returncode == 0 and said.stderr == b""
    out = json.loads(said.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "Stop" and "`pytest -q`" in out["additionalContext"]
    again = stop(failing.path, failing.session)  # the same evidence: said already
    quiet = stop(passing.path, passing.session)
    assert (again.returncode, again.stdout, quiet.returncode, quiet.stdout) == (0, b"", 0, b"")
