"""The model turn of a call: which model response made it (one home for the facts, novelty and
the senses; calls of one response, a parallel batch, are one attempt)."""

from __future__ import annotations


def turn(action: dict, win: dict) -> int:
    """Which model response made this call: calls of one response (a parallel batch) are
    one attempt. Without a transcript (a replay without one, tests) every call is its own."""
    value = action.get("turn")
    return value if isinstance(value, int) and value > 0 else -win.get("calls", 0)
