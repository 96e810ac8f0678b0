"""Drift: the recent actions no longer touch anything the person's request named."""

from __future__ import annotations

from metacog.senses.signal import Signal, forget, memory, number, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "drift"
DEFAULTS = {"enabled": True, "recent_calls": 25}
LIMITS = {"recent_calls": (1, 10_000)}


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    if not ctx.is_main:
        return None
    terms = ctx.terms  # what the request named (metacog.facts.terms_of)
    if not terms:
        return None
    mem = memory(win, NAME)
    if ctx.touched:
        mem["away"] = 0
        return None
    mem["away"] = away = number(mem.get("away")) + 1
    if not ctx.on_track or away < ctx.cfg[NAME]["recent_calls"] or mem.get("said"):
        return None
    # A detour is worth a word once it has turned into a grind: obstacles met on it that
    # brought nothing new, in as many model turns as make a stuck stretch (Nociception's
    # stale_at, or stale_empty_at where each was a question that found nothing). Work away
    # from what the request named is how exploring goes: said after 25 calls away alone, 4
    # of Drift's 6 lines on the 163 labelled sessions were on quiet ones (issue 24).
    now = number(win.get("calls"))
    walls = [o for o in ctx.obstacles if o[0] > now - away and ctx.brought_nothing(o)]
    stale = ctx.cfg["nociception"]
    need = stale["stale_empty_at"] if all(o[4] for o in walls) else stale["stale_at"]
    if not walls or len({o[1] for o in walls}) < need:
        return None
    mem["said"] = True
    named = ", ".join(short(t, 30) for t in terms[:3])
    return Signal(
        NAME,
        f"the last {away} actions touched none of what the request named ({named}), and "
        f"{len(walls)} obstacles on the way showed nothing new. Is this detour needed for the task?",
    )


def reading(win: dict, ctx: Context) -> str:
    away = peek(win, NAME).get("away", 0)
    return f"{away} actions away from the request's names" if away >= 5 else ""


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """A new request: the count of calls away from what it names starts afresh."""
    forget(win, NAME)
