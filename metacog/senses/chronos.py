"""Chronos: time and tool calls since the person last spoke."""

from __future__ import annotations

from metacog.senses.signal import Signal, memory

NAME = "chronos"
DELEGATING_TOOLS = ("Task", "Agent")
IDLE_GAP_S = 300  # a longer pause between two calls is waiting (for the person, a permission), not working


def elapsed_minutes(win: dict, now: float) -> float:
    """Minutes the agent has worked since the person spoke.

    Gaps between calls count up to IDLE_GAP_S each (replays showed "1 call and 335
    minutes" where the person had simply been away); time inside subagents does not
    count at all (delegation is not grinding).
    """
    return max(0.0, win.get("active_s", 0.0) - win.get("delegated_s", 0.0)) / 60


def _level(value: float, step: float) -> int:
    """1 at one step, 2 at two, 3 at four, 4 at eight: the next multiple, doubling.

    Every 25 calls of a long autonomous run would be a signal per 25 calls, which the
    replays show is noise; doubling keeps a check-in question rare and meaningful.
    """
    if step <= 0 or value < step:
        return 0
    level, mark = 1, step * 2
    while value >= mark:
        level, mark = level + 1, mark * 2
    return level


def feel(win: dict, action: dict, ctx: object) -> Signal | None:
    if not ctx.is_main:
        return None  # a subagent answers to the main agent, not the person
    cfg = ctx.cfg[NAME]
    if action["tool"] in DELEGATING_TOOLS:
        duration = ctx.payload.get("duration_ms") if isinstance(ctx.payload, dict) else None
        if isinstance(duration, (int, float)) and duration > 0:
            win["delegated_s"] = win.get("delegated_s", 0.0) + duration / 1000
    mem = memory(win, NAME)
    last = mem.get("last_ts") or win.get("prompt_at", ctx.now)
    win["active_s"] = win.get("active_s", 0.0) + min(max(0.0, ctx.now - last), IDLE_GAP_S)
    mem["last_ts"] = ctx.now
    calls = win.get("prompt_calls", 0)
    minutes = elapsed_minutes(win, ctx.now)
    by_calls = _level(calls, cfg["calls"]) if minutes >= cfg["min_minutes_for_calls"] else 0
    level = max(_level(minutes, cfg["minutes"]), by_calls)
    if level <= mem.get("level", 0):
        return None
    mem["level"] = level  # each level once
    return Signal(NAME, f"{calls} tool calls and {minutes:.0f} minutes since the person last spoke. "
                  "Would a short check-in help: what is done, what is left, what is uncertain?")


def reading(win: dict, ctx: object) -> str:
    calls = win.get("prompt_calls", 0)
    if not calls:
        return ""
    return f"{calls} calls, {elapsed_minutes(win, ctx.now):.0f} min since the person spoke"
