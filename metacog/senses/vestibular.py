"""vestibular: placeholder until the sense lands."""

from __future__ import annotations

NAME = "vestibular"


def feel(win: dict, action: dict, ctx: object) -> None:
    return None


def reading(win: dict, ctx: object) -> str:
    return ""
