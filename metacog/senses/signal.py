"""What a sense says: a level, the text for the agent, and optionally a line for the person."""

from __future__ import annotations

from metacog.perception.turns import turn  # noqa: F401 - the senses' name for it

OBSERVE = 1  # Layer 1: an observation and one question
INTERRUPT = 2  # Layer 2: the nociceptive interrupt
TEXT_CAP = 300


class Signal:
    __slots__ = ("level", "person", "sense", "text")

    def __init__(self, sense: str, text: str, level: int = OBSERVE, person: str = "") -> None:
        self.sense = sense
        self.level = level
        self.text = text[:TEXT_CAP]  # every sense writes to fit; this is the backstop
        self.person = person

    def __repr__(self) -> str:
        return f"Signal({self.sense!r}, {self.text!r}, level={self.level})"


def peek(win: dict, name: str) -> dict:
    """A sense's memory to read, never created; {} when absent or not a mapping (state written
    by an older version, or damaged)."""
    senses = win.get("senses")
    mem = senses.get(name) if isinstance(senses, dict) else None
    return mem if isinstance(mem, dict) else {}


def forget(win: dict, name: str) -> None:
    """Drop a sense's memory (it starts afresh at its next call)."""
    senses = win.get("senses")
    if isinstance(senses, dict):
        senses.pop(name, None)


def number(value: object) -> int:
    """A count read back from state: an int, else 0 (NaN, a string, a bool from damage)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def memory(win: dict, name: str) -> dict:
    """A sense's own small memory inside its window (created on first use)."""
    senses = win.get("senses")
    if not isinstance(senses, dict):
        senses = win["senses"] = {}
    mem = senses.get(name)
    if not isinstance(mem, dict):
        mem = senses[name] = {}
    return mem


def short(value: str, cap: int = 60) -> str:
    return value if len(value) <= cap else value[: cap - 1] + "…"


def quote(value: str, cap: int = 60) -> str:
    """`value` as a code quote: a backtick inside would end the quote early (ruff's
    `_get_property` inside a quoted problem line), so it becomes an apostrophe."""
    return "`" + short(value.replace("`", "'"), cap) + "`"
