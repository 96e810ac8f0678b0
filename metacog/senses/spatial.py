"""Spatial: the blast radius of an edit, counted in the files that import what just changed."""

from __future__ import annotations

import os
import time

from metacog.action import EDIT_TOOLS
from metacog.senses.signal import TEXT_CAP, Signal, memory, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
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
SLOW_S = 1.0  # an edit that spent this long without an answer was a first index running late
SLOW_LIMIT = (
    3  # after this many, Spatial rests for the session instead of paying that on every edit
)


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    if action.get("tool") not in EDIT_TOOLS or not action.get("ok", True) or not action.get("path"):
        return None
    start = time.perf_counter()
    mem = memory(win, NAME)
    mem.pop("last", None)
    if mem.get("slow", 0) >= SLOW_LIMIT:
        return None  # the repository could not be listed in time, again and again: off for this session
    try:
        return _feel(mem, action["path"], ctx, start)
    except Exception as exc:  # noqa: BLE001 - a broken index must not silence the other senses
        from metacog.fsutil import log_error

        if getattr(ctx, "state_dir", ""):
            log_error(ctx.state_dir, f"spatial: {type(exc).__name__}: {exc}")
        return None


def _feel(mem: dict, path: str, ctx: Context, start: float) -> Signal | None:
    root, state_dir = ctx.root, ctx.state_dir
    rel = _relative(path, root, ctx.event.cwd)
    if not rel or not state_dir:
        return None
    from metacog import imports  # only on edits: the hook imports this module on every call

    if not imports.kind(rel):
        return None
    cfg = ctx.cfg[NAME]
    found = imports.importers(
        root, rel, state_dir, cfg["budget_ms"] / 1000.0, int(cfg["max_files"]), start
    )
    if found is None:
        if time.perf_counter() - start > SLOW_S:
            mem["slow"] = mem.get("slow", 0) + 1  # a first index that ran out of time (a slow git)
        return None  # not known in time: silence rather than a guess
    count = len(found)
    mem["last"] = [rel, count]
    if count >= cfg["min_importers"]:
        ctx.note("wide_edit")  # the learning layer's precondition for blast-radius
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


def _relative(path: str, root: str, cwd: str) -> str:
    if not root:
        return ""
    if not os.path.isabs(path):
        path = os.path.normpath(os.path.join(cwd or root, path))
    for base, target in ((root, path), (os.path.realpath(root), os.path.realpath(path))):
        base = base.rstrip("/")
        if target.startswith(base + "/"):
            return target[len(base) + 1 :]
    return ""


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
