"""metacog.perception.call: the record of one tool call, frozen, stored and read back."""

from __future__ import annotations

import copy
import json
import pickle
import time

import pytest
from hooktest import captured

from metacog.event import Event
from metacog.perception import action
from metacog.perception.call import Call, stored, window_calls

TRACE = "Exit code 1\nTraceback (most recent call last):\n  File \"/w/app.py\", line 3\nKeyError: 'user'"


def failed_bash() -> Call:
    payload = captured(
        "PostToolUseFailure", "Bash", error=TRACE, tool_input={"command": "pytest -x"}
    )
    return action.from_event(Event(payload), time.time())


def test_a_call_is_frozen_and_a_copy_changes_only_what_it_names() -> None:
    call = failed_bash()
    with pytest.raises(AttributeError):
        call.ok = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del call.tool
    later = call.but(turn=7)
    assert later.turn == 7 and call.turn == 0
    assert later.record() == {**call.record(), "turn": 7}
    with pytest.raises(TypeError):
        call.but(colour="red")
    # Compared by value, and copied or pickled whole.
    assert copy.deepcopy(later) == later and pickle.loads(pickle.dumps(later)) == later
    assert later != call


def test_a_failure_is_read_once_into_its_signature_kind_and_problems() -> None:
    call = failed_bash()
    assert (call.tool, call.target, call.ok, call.outcome) == ("Bash", "pytest -x", False, "failed")
    assert "KeyError" in call.sig and call.problems and call.prints
    assert call.step == ("Bash", "pytest -x", call.result) and call.result != 0


def test_the_stored_form_reads_back_as_the_same_call_without_its_fingerprints() -> None:
    call = failed_bash().but(turn=3, agent="a1")
    record = json.loads(json.dumps(call.record()))  # as the session's state holds it
    back = stored(record)
    assert back is not None
    assert back.record() == call.record()
    assert back.prints == () and "prints" not in record
    assert "problems" not in call.record(problems=False)


def test_a_stored_form_holds_only_what_is_not_a_default() -> None:
    assert Call("Read", "a.py", size=10, ts=1.0).record() == {
        "tool": "Read",
        "target": "a.py",
        "ok": True,
        "result": 0,
        "size": 10,
        "ts": 1.0,
    }


@pytest.mark.parametrize(
    ("call", "outcome"),
    [
        (Call("Bash", "ls"), "ok"),
        (Call("Grep", "x", empty=True), "empty"),
        (Call("TaskOutput", "t", waiting=True), "waiting"),
        (Call("Bash", "x", ok=False, sig="boom"), "failed"),
        (Call("Bash", "x", ok=False, mistake="interrupted"), "interrupted"),
        (Call("Bash", "x", ok=False, mistake="rejected"), "interrupted"),
        (Call("Edit", "a", ok=False, refused=True), "refused"),
    ],
)
def test_the_outcome_says_how_the_call_ended(call: Call, outcome: str) -> None:
    assert call.outcome == outcome


def test_a_damaged_stored_form_reads_its_damaged_fields_as_their_defaults() -> None:
    back = stored(
        {
            "tool": 3,
            "target": None,
            "ok": 0,
            "result": "x",
            "size": True,
            "ts": "now",
            "problems": [["kind", 1, 2, "line"], ["short"], "text", ["k", "1", 2, "l"]],
            "empty": "yes",
            "turn": 2.5,
        }
    )
    assert back is not None
    assert (back.tool, back.target, back.ok, back.result, back.size, back.ts) == (
        "?",
        "",
        False,
        0,
        0,
        0.0,
    )
    assert back.problems == (("kind", 1, 2, "line"),)
    assert back.empty is False and back.turn == 0
    assert stored(["tool", "Bash"]) is None


def test_the_windows_calls_leave_out_what_is_not_a_call() -> None:
    win = {"actions": [Call("Read", "a").record(), "junk", None, Call("Bash", "b").record()]}
    assert [c.target for c in window_calls(win)] == ["a", "b"]
    assert window_calls({"actions": "junk"}) == [] and window_calls({}) == []


def test_replay_reads_each_record_of_the_window_once_and_again_once_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While replay holds the state (call.STORED), a record the window keeps from one call to
    the next is read back once; a record changed in place since is read again."""
    from metacog.perception import call as calls

    first, second = failed_bash().record(problems=False), Call("Read", "a.py").record()
    win = {"actions": [first, second, "junk"]}
    expected = window_calls(win)
    read: list[object] = []

    def counting(record: object) -> Call | None:
        read.append(record)
        return stored(record)

    monkeypatch.setattr(calls, "stored", counting)
    monkeypatch.setattr(calls, "STORED", {})
    assert window_calls(win) == window_calls(win) == expected
    assert read == [first, second, "junk", "junk"]  # not a record: read each time
    second["target"] = "b.py"
    assert [c.target for c in window_calls(win)] == [expected[0].target, "b.py"]
