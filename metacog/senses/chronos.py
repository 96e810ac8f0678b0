"""Chronos: time and tool calls since the person last spoke."""

from __future__ import annotations

from metacog.senses.signal import Signal, forget, memory

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.nervous import Context

NAME = "chronos"
DELEGATING_TOOLS = ("Task", "Agent")
IDLE_GAP_S = (
    300  # a longer pause between two calls is waiting (for the person, a permission), not working
)


def elapsed_minutes(win: dict, now: float) -> float:
    """Minutes the agent has worked since the person spoke (see `feel` for what counts)."""
    return win.get("active_s", 0.0) / 60


def _level(value: float, step: float) -> int:
    """How many whole steps `value` holds: a new level at each next multiple."""
    return int(value // step) if step > 0 else 0


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    if not ctx.is_main:
        return None  # a subagent answers to the main agent, not the person
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    last = mem.get("last_ts") or win.get("prompt_at", ctx.now)
    gap = max(0.0, ctx.now - last)
    if action["tool"] in DELEGATING_TOOLS:
        # The gap before a delegating call's hook is mostly the subagent's own work,
        # which is not the main agent grinding; only what lies outside it counts.
        gap = max(0.0, gap - ctx.event.duration_ms / 1000)
    # A pause longer than IDLE_GAP_S is waiting (for the person, a permission), not
    # working: replays showed "1 call and 335 minutes" where the person was away. Of such
    # a pause only the call's own run time counts.
    if gap > IDLE_GAP_S:
        gap = min(ctx.event.duration_ms / 1000, IDLE_GAP_S)
    win["active_s"] = win.get("active_s", 0.0) + gap
    mem["last_ts"] = ctx.now
    calls = win.get("prompt_calls", 0)
    minutes = elapsed_minutes(win, ctx.now)
    # Many quick calls are not grinding: the call count speaks only after some work time.
    by_calls = _level(calls, cfg["calls"]) if minutes >= cfg["min_minutes_for_calls"] else 0
    by_time = _level(minutes, cfg["minutes"])
    # Time and calls keep levels of their own: 100 quick calls must not use up the
    # 15-, 30- and 45-minute check-ins. Each level is said once.
    if by_time <= mem.get("time_level", 0) and by_calls <= mem.get("call_level", 0):
        return None
    mem["time_level"] = max(by_time, mem.get("time_level", 0))
    mem["call_level"] = max(by_calls, mem.get("call_level", 0))
    return Signal(
        NAME,
        f"{calls} tool calls and {minutes:.0f} minutes since the person last spoke. "
        "Would a short check-in help: what is done, what is left, what is uncertain?",
    )


def reading(win: dict, ctx: Context) -> str:
    calls = win.get("prompt_calls", 0)
    if not calls:
        return ""
    return f"{calls} calls, {elapsed_minutes(win, ctx.now):.0f} min since the person spoke"


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: time and calls count again from now."""
    win["prompt_at"], win["active_s"] = now, 0.0
    forget(win, NAME)
