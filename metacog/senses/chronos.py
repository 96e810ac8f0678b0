"""Chronos: a long stretch of work since the person last spoke, spent against obstacles.

Time alone is not worth a word: a long autonomous run that goes well is what the person
asked for (on the labelled sessions, check-ins on calm runs were a third of what metacog
said where nothing was wrong). A long stretch in which obstacles keep coming, stay unsolved
and bring nothing new is grinding, and a check-in is then what the person would want."""

from __future__ import annotations

from metacog.senses.signal import TEXT_CAP, Signal, forget, memory, number, quote

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "chronos"
DEFAULTS = {
    "enabled": True,
    "minutes": 20,
    "calls": 40,
    "min_minutes_for_calls": 15,
    "obstacles": 3,
}
LIMITS = {"minutes": (1, 10_000), "calls": (1, 100_000), "obstacles": (0, 1000)}


def _level(value: float, step: float) -> int:
    """1 at `step`, then one more each time `value` doubles (step, 2×, 4×…): a check-in every
    20 minutes of a three-hour run said the same thing nine times, and on quiet sessions it
    was a sixth of all metacog said (issue 24)."""
    level = 0
    # Bounded: a damaged state can say `1e400` (parsed as infinity), which every step is below.
    while step > 0 and level < 64 and value >= step * (1 << level):
        level += 1
    return level


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    if not ctx.is_main:
        return None  # a subagent answers to the main agent, not the person
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    calls = number(win.get("prompt_calls"))
    # Work time as metacog.facts counts it: idle pauses and subagents' own time left out.
    minutes = ctx.active_s / 60
    # Many quick calls are not grinding: the call count speaks only after some work time.
    by_calls = _level(calls, cfg["calls"]) if minutes >= cfg["min_minutes_for_calls"] else 0
    by_time = _level(minutes, cfg["minutes"])
    # One stretch, one count of check-ins: whichever of time and calls doubled first says
    # it (20 minutes or 40 calls, then 40 or 80...). Levels of their own said 40 calls,
    # then 20 minutes, then 80 calls: three check-ins in ten minutes of one stretch.
    level = max(by_time, by_calls)
    if level <= number(mem.get("level")):
        return None
    # The obstacles met since the person spoke, not overcome since and that brought nothing
    # new (metacog.facts, metacog.perception.novelty): a level reached on a calm run waits,
    # and is said if the run turns into a grind. Failures that each bring new lines (errors
    # that move, a list that shrinks) are the work going on: on the 163 labelled sessions,
    # counting every obstacle said 21 check-ins, 8 on quiet sessions; these, 4 and 1 (#24).
    now = number(win.get("calls"))
    unsolved = [o for o in ctx.obstacles if o[0] > now - calls and ctx.brought_nothing(o)]
    if len(unsolved) < cfg["obstacles"]:
        return None
    met = f", {len(unsolved)} obstacles since that showed nothing new" if unsolved else ""
    ask = "Would a short check-in help: what is done, what is left, what is uncertain?"
    said = f"{calls} tool calls and {minutes:.0f} minutes since the person last spoke{met}"
    back = now - unsolved[-1][0] if unsolved else -1
    if 0 <= back < len(ctx.calls):  # the latest, if the window still holds its call
        latest = ctx.calls[-1 - back]
        # Within TEXT_CAP whatever the tool's name: the question is what must not be cut.
        room = TEXT_CAP - len(said) - len(ask) - len(latest.tool) - len(" (the latest:  ). ")
        if room >= 20:
            said += f" (the latest: {latest.tool} {quote(latest.target, min(room, 50))})"
    mem["level"] = level
    return Signal(NAME, f"{said}. {ask}")


def reading(win: dict, ctx: Context) -> str:
    calls = win.get("prompt_calls", 0)
    if not calls:
        return ""
    return f"{calls} calls, {ctx.active_s / 60:.0f} min since the person spoke"


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: each check-in may be said again."""
    forget(win, NAME)
