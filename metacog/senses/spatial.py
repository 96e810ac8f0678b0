"""Spatial: the blast radius of an edit, counted in the files that import what just changed."""

from __future__ import annotations

from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import TEXT_CAP, Signal, memory, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "spatial"
DEFAULTS = {
    "enabled": True,
    "min_importers": 5,
    "budget_ms": 100,
    "max_files": 50000,
    "names_shown": 5,
}
LIMITS = {"min_importers": (1, 100_000), "names_shown": (1, 20)}
SAID_CAP = 64  # files remembered per window; the oldest is forgotten first


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    if action.tool not in EDIT_TOOLS or not action.ok or not action.path:
        return None
    mem = memory(win, NAME)
    mem.pop("last", None)
    reach = ctx.reach(action)  # metacog.perception.reach: computed once, whoever asks
    if reach is None:
        return None
    rel, found = reach
    count = len(found)
    mem["last"] = [rel, count]
    cfg = ctx.cfg[NAME]
    said = mem.get("said")
    if not isinstance(said, dict):
        said = mem["said"] = {}
    if count < cfg["min_importers"] or count <= said.get(rel, 0):
        return None
    said.pop(rel, None)
    said[rel] = count
    while len(said) > SAID_CAP:
        del said[next(iter(said))]
    return Signal(NAME, say(rel, found, int(cfg["names_shown"])))


def say(rel: str, found: list[str], shown: int) -> str:
    """'You modified X. N files import it: a, b, …. Which …?' within the signal's cap."""
    count = len(found)
    head = f"You modified {short(rel, 80)}. {count} {'files import' if count != 1 else 'file imports'} it"
    tail = ". Which of them does this change affect?"
    names = [short(name, 60) for name in found[: max(shown, 0)]]
    while names:
        listed = ", ".join(names) + (", …" if count > len(names) else "")
        text = f"{head}: {listed}{tail}"
        if len(text) <= TEXT_CAP:
            return text
        names.pop()
    return head + tail


def reading(win: dict, ctx: Context) -> str:
    last = peek(win, NAME).get("last")
    if not isinstance(last, list) or len(last) != 2 or not last[1]:
        return ""
    return f"last edit: {short(str(last[0]), 80)}, imported by {last[1]} file{'s' if last[1] != 1 else ''}"
