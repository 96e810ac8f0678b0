"""Echo: edits piling up with no run of the project's tests, or only the newest test run."""

from __future__ import annotations

from metacog.perception.action import is_code
from metacog.perception.shell import is_test_file, narrowed
from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import Signal, memory, peek, short

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
        if not is_test_file(action.target):
            mem["source_edited"] = short(action.target, 50)
        if mem["edits"] >= cfg["edits_without_tests"] and mem.get("tests") and not mem.get("said"):
            mem["said"] = True
            return Signal(
                NAME,
                f"{mem['edits']} edits since the project's tests last ran. "
                "Which test would tell you these changes work?",
            )
        return None
    if action.tests:
        if narrowed(action.target):
            mem["narrow_runs"] = mem.get("narrow_runs", 0) + 1
            if mem.get("source_edited") and mem["narrow_runs"] == 3 and not mem.get("said_narrow"):
                mem["said_narrow"] = True
                return Signal(
                    NAME,
                    f"you changed {mem['source_edited']} and have run only a narrowed test 3 "
                    "times since. Does the rest of the suite still pass?",
                )
        else:
            mem.clear()  # the whole suite ran: nothing pending
            mem["tests"] = True
            return None
        mem["edits"] = 0
        mem.pop("said", None)
    return None


def reading(win: dict, ctx: Context) -> str:
    edits = peek(win, NAME).get("edits", 0)
    return f"{edits} edits since tests ran" if edits >= 3 else ""
