"""metacog.perception.action: a tool call's payload reduced to its Call; here, what is an empty answer."""

from __future__ import annotations


def test_quiet_searches_and_writing_commands_are_not_empty_answers() -> None:
    from metacog.perception.action import found_nothing

    quiet = {"stdout": "", "stderr": ""}
    assert not found_nothing("Bash", {"command": "grep -q TODO src/a.py"}, quiet, "")
    assert not found_nothing("Bash", {"command": "git add -A"}, quiet, "")
    assert found_nothing("Bash", {"command": "git grep -n legacyHandler"}, quiet, "")
    assert not found_nothing("Grep", {}, {"numFiles": 0, "timedOut": True}, "")
