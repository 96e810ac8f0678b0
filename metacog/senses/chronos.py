"""Chronos: time and tool calls since the person last spoke."""

from __future__ import annotations

from metacog.senses.signal import Signal, memory

NAME = "chronos"
DELEGATING_TOOLS = ("Task", "Agent")


def elapsed_minutes(win: dict, now: float) -> float:
    """Minutes since the person spoke, less the time subagents worked (delegation is not grinding)."""
    delegated = win.get("delegated_s", 0.0)
    return max(0.0, (now - win.get("prompt_at", now) - delegated) / 60)


def feel(win: dict, action: dict, ctx: object) -> Signal | None:
    if not ctx.is_main:
        return None  # a subagent answers to the main agent, not the person
    cfg = ctx.cfg[NAME]
    if action["tool"] in DELEGATING_TOOLS:
        duration = ctx.payload.get("duration_ms") if isinstance(ctx.payload, dict) else None
        if isinstance(duration, (int, float)) and duration > 0:
            win["delegated_s"] = win.get("delegated_s", 0.0) + duration / 1000
    mem = memory(win, NAME)
    calls = win.get("prompt_calls", 0)
    minutes = elapsed_minutes(win, ctx.now)
    level = max(int(minutes // cfg["minutes"]) if cfg["minutes"] > 0 else 0,
                calls // cfg["calls"] if cfg["calls"] > 0 else 0)
    if level <= mem.get("level", 0):
        return None
    mem["level"] = level  # each level once: the next multiple of time or calls
    return Signal(NAME, f"{calls} tool calls and {minutes:.0f} minutes since the person last spoke. "
                  "Would a short check-in help: what is done, what is left, what is uncertain?")


def reading(win: dict, ctx: object) -> str:
    calls = win.get("prompt_calls", 0)
    if not calls:
        return ""
    return f"{calls} calls, {elapsed_minutes(win, ctx.now):.0f} min since the person spoke"
