"""Replay keeps a session's state and settings in its process (state.HELD, config.HELD) and
hands the hook its payload as parsed: it must say exactly what the live hook, reading and
writing its state file on every call, says over the same transcript."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from metacog import config, hook, replay, state

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared" / "transcripts"
SHARED_TAKEN = 8  # the largest shared transcripts: the most calls, in bounded time


def _live_hook(
    path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[int, str, str]]:
    """(tool call number, text for the agent, text for the person) of each reply the live
    hook gives, its state in files, the transcript growing line by line as in a session."""
    monkeypatch.setenv("METACOG_HOME", str(home))
    conf = home / "config" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text("[learning]\nenabled = false\n")  # as replay runs it (replay.NO_LEARNING)
    state_dir = str(home / "state")
    lines = path.read_bytes().splitlines(keepends=True)
    scratch = home / "transcript.jsonl"
    said, calls, written = [], 0, 0
    with scratch.open("wb") as out:
        for index, payload in replay.events(line.decode("utf-8", "replace") for line in lines):
            while written <= index:
                out.write(
                    lines[written] if lines[written].endswith(b"\n") else lines[written] + b"\n"
                )
                written += 1
            out.flush()
            payload["transcript_path"] = str(scratch)
            now = payload.pop("_ts")
            reply = hook.handle(json.dumps(payload).encode(), state_dir, now)
            calls += payload["hook_event_name"].startswith("PostToolUse")
            if reply:
                body = json.loads(reply)
                agent = (body.get("hookSpecificOutput") or {}).get("additionalContext", "")
                said.append((calls, agent, body.get("systemMessage", "")))
    return said


def _transcripts() -> list[Path]:
    found = sorted(FIXTURES.glob("transcript-*.jsonl"))
    if SHARED.is_dir():
        shared = sorted(SHARED.glob("*.jsonl"), key=lambda p: p.stat().st_size, reverse=True)
        found += shared[:SHARED_TAKEN]
    return found


@pytest.mark.parametrize("path", _transcripts(), ids=lambda p: p.name[:24])
def test_replay_says_what_the_live_hook_says(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _live_hook(path, tmp_path / "live", monkeypatch)
    got = replay.replay(str(path))
    assert [(s["call"], s["text"], s["person"]) for s in got["signals"]] == expected
    assert state.HELD is None and config.HELD is None  # nothing held past the replay


def test_the_shared_transcripts_are_compared_too() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent: only the captured fixtures were compared")
    assert len(_transcripts()) == len(list(FIXTURES.glob("transcript-*.jsonl"))) + SHARED_TAKEN


def test_replay_writes_no_session_state_file(tmp_path: Path) -> None:
    """Held in the process: the throwaway home never gets a session file, however many calls."""
    seen: list[list[str]] = []

    def progress(done: int, size: int) -> None:
        sessions = Path(os.environ["METACOG_HOME"]) / "state" / "sessions"
        seen.append(sorted(os.listdir(sessions)) if sessions.is_dir() else [])

    got = replay.replay(str(FIXTURES / "transcript-live-2.1.328.jsonl"), progress=progress)
    assert got["tool_calls"] >= 5 and got["signals"]
    assert seen and all(names == [] for names in seen)


def test_nothing_is_held_after_a_replay_that_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("a hook that fails")

    monkeypatch.setitem(replay.HANDLERS, "PostToolUse", broken)
    with pytest.raises(RuntimeError):
        replay.replay(str(FIXTURES / "transcript-live-2.1.328.jsonl"))
    assert state.HELD is None and config.HELD is None
    # The live hook, in this process afterwards, writes its state file again.
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "after-replay",
        "cwd": str(tmp_path),
        "prompt": "hello",
    }
    from metacog import paths

    hook.handle(json.dumps(payload).encode(), paths.state_dir(), 1_760_000_000.0)
    assert os.path.isfile(state.path_for(paths.state_dir(), "after-replay"))


@pytest.mark.sense_may_fail("replay's held state")
@pytest.mark.parametrize(
    ("kept", "told"),
    [((1, 2), True), ({3: "x"}, True), ([1, 2], False), ({"3": "x"}, False)],
    ids=["tuple", "number key", "list", "string key"],
)
def test_a_held_state_is_checked_to_be_what_its_file_would_give(
    kept: object, told: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replay holds the state object itself between calls (state.HELD), not its JSON: the
    strict mode records a state that a file would give back otherwise (a tuple comes back a
    list, a number key a string), so a sense that keeps one is caught by the suite."""
    from metacog import handlers

    feel = handlers.nervous.feel

    def keeping(win: dict, action: object, ctx: object) -> list:
        win["kept"] = kept
        return feel(win, action, ctx)

    monkeypatch.setattr(handlers.nervous, "feel", keeping)
    replay.replay(str(FIXTURES / "transcript-live-2.1.328.jsonl"))
    record = Path(os.environ["METACOG_STRICT"])
    text = record.read_text() if record.exists() else ""
    assert ("replay's held state failed" in text) is told


def _answers(size: int, cost: int) -> tuple[bool, int]:
    return size > hook.STDIN_CAP, min(size, cost)


def _payloads() -> list[dict]:
    from hooktest import CAPTURED

    # An Edit's context cost is 200 more than its strings: above the floor of a payload of
    # short strings, whose JSON (its numbers) is longer still.
    edit = {
        "hook_event_name": "PostToolUse",
        "session_id": "s",
        "tool_name": "Edit",
        "tool_input": {"file_path": "a", "old_string": "x", "new_string": "y"},
        "tool_response": {"lines": list(range(100))},
    }
    return [*CAPTURED, edit, {**edit, "tool_name": "Other", "tool_response": [[[1.5]] * 300]}]


@pytest.mark.parametrize("payload", _payloads(), ids=lambda p: p["hook_event_name"])
def test_replay_gives_the_hook_a_size_that_answers_as_the_json_does(payload: dict) -> None:
    """Replay hands the hook no JSON to count (`_sent`): the size it gives must say what the
    JSON's own length says, whether the payload is over the cap and what a call's context
    cost is capped at (metacog.perception.action.from_event)."""
    from metacog.event import Event
    from metacog.perception.action import context_cost

    event = Event(payload)
    tool = payload["hook_event_name"].startswith("PostToolUse")
    sent = replay._sent(payload, event if tool else None)
    cost = context_cost(event.tool, event.tool_input, event.response, event.error * event.failed)
    cost = cost if tool else 0
    assert _answers(sent, cost) == _answers(len(json.dumps(payload)), cost)


def test_a_payload_near_the_cap_is_counted_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    from hooktest import captured

    payload = captured("PostToolUse", "Bash")
    size = len(json.dumps(payload))
    for cap in (size - 1, size, size + 1):
        monkeypatch.setattr(hook, "STDIN_CAP", cap)
        assert (replay._sent(payload) > cap) == (size > cap)
