"""An edit's reach: the files of the project that import what a call has just edited.

A fact of the call, not a sense's finding: Spatial says it, Reflex recalls a learned rule
when an edit reaches far, and the session summary counts such edits for learning. Whichever
asks first computes it, once a call (metacog.senses.contract.Context.reach), within Spatial's
budget and whether or not Spatial is on; none of them reads another's note of it.
"""

from __future__ import annotations

import os
import time

from metacog.perception.tools import EDIT_TOOLS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call

SLOW_S = 1.0  # an edit that spent this long without an answer was a first index running late
# After this many, the reach is not asked again this session instead of paying that on every
# edit (a git that is always slow).
SLOW_LIMIT = 3


def importers(win: dict, action: Call, ctx: object) -> tuple[str, list[str]] | None:
    """(the edited file relative to the project's root, the files that import it), or None:
    not a successful edit of a file of the project the index reads, or not known in time."""
    if action.tool not in EDIT_TOOLS or not action.ok or not action.path:
        return None
    start = time.perf_counter()
    mem = win.get("reach")
    if not isinstance(mem, dict):
        mem = win["reach"] = {}
    slow = mem.get("slow")
    slow = slow if isinstance(slow, int) else 0
    if slow >= SLOW_LIMIT:
        return None  # the repository could not be listed in time, again and again
    try:
        return _importers(mem, slow, action.path, ctx, start)
    except Exception as exc:  # noqa: BLE001 - a broken index must not silence the senses
        from metacog.fsutil import log_error

        if getattr(ctx, "state_dir", ""):
            log_error(ctx.state_dir, f"reach: {type(exc).__name__}: {exc}")
        return None


def _importers(
    mem: dict, slow: int, path: str, ctx: object, start: float
) -> tuple[str, list[str]] | None:
    root, state_dir = ctx.root, ctx.state_dir
    rel = _relative(path, root, ctx.event.cwd if ctx.event is not None else "")
    if not rel or not state_dir:
        return None
    from metacog import imports  # only on edits: the hook imports this module on every call

    if not imports.kind(rel):
        return None
    cfg = ctx.cfg["spatial"]  # the index's budget is set where its sense is
    found = imports.importers(
        root, rel, state_dir, cfg["budget_ms"] / 1000.0, int(cfg["max_files"]), start
    )
    if found is None:
        if time.perf_counter() - start > SLOW_S:
            mem["slow"] = slow + 1  # a first index that ran out of time (a slow git)
        return None  # not known in time: silence rather than a guess
    return rel, found


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
