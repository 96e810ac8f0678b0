"""o2: placeholder until the sense lands."""

from __future__ import annotations

NAME = "o2"


def feel(win: dict, action: dict, ctx: object) -> None:
    return None


def reading(win: dict, ctx: object) -> str:
    return ""
