"""The model turn of a call: which model response made it (one home for the facts, novelty and
the senses; calls of one response, a parallel batch, are one attempt)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call


def turn(action: Call, win: dict) -> int:
    """Which model response made this call: calls of one response (a parallel batch) are
    one attempt. Without a transcript (a replay without one, tests) every call is its own."""
    value = action.turn
    return value if isinstance(value, int) and value > 0 else -win.get("calls", 0)
