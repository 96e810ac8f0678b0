"""Echo: edits piling up with no run of the project's tests."""

from __future__ import annotations

from metacog.perception.action import is_code
from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import Signal, memory, peek

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "echo"
DEFAULTS = {"enabled": True, "edits_without_tests": 12}
LIMITS = {"edits_without_tests": (1, 10_000)}


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    tool = action.tool
    if not mem.get("tests") and action.tests:
        # This session runs the project's tests: only then is "no test since" news, a
        # departure from its own loop. In sessions that never ran a test it was a quarter of
        # what metacog said on quiet sessions (issue 17, class 5); where a test file was only
        # read or edited, "since the tests last ran" was not even true (issue 24).
        mem["tests"] = True
    if tool in EDIT_TOOLS and action.ok:
        path = action.path
        if not is_code(path):
            return None
        mem["edits"] = mem.get("edits", 0) + 1
        if mem["edits"] >= cfg["edits_without_tests"] and mem.get("tests") and not mem.get("said"):
            mem["said"] = True
            return Signal(
                NAME,
                f"{mem['edits']} edits since the project's tests last ran. "
                "Which test would tell you these changes work?",
            )
        return None
    if action.tests:
        # A run of the tests, the whole suite or one test (`pytest tests/test_a.py::t`): the
        # edits are being checked. Running only a narrowed test again and again after a
        # change was said here once (3 such runs): 7 of its 9 words on the labelled sessions
        # fell on quiet ones (issue 39). It is the TDD loop while it goes on; whether the
        # rest of the suite was run belongs to the moment the agent says it is done.
        mem["edits"] = 0
        mem.pop("said", None)
    return None


def reading(win: dict, ctx: Context) -> str:
    edits = peek(win, NAME).get("edits", 0)
    return f"{edits} edits since tests ran" if edits >= 3 else ""
