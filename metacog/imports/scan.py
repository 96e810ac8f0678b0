"""What the language parsers share: a memo of statements (they repeat across a
repository), key cleaning, whitespace."""

from __future__ import annotations

MEMO_CAP = 100_000
ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")
_NOT_IN_KEYS = (" ", "|", "\t", "\n", "\r", '"', "\\")  # the index's separators, and JSON escapes
memo: dict[str, object] = {}


def remember(key: str, value: object) -> None:
    if len(memo) >= MEMO_CAP:
        memo.clear()
    memo[key] = value


def clean(key: str) -> str:
    """`key`, or '' when it holds a character the index uses as a separator or JSON escapes."""
    for c in _NOT_IN_KEYS:
        if c in key:
            return ""
    return key


def skip_ws(text: str, j: int) -> int:
    n = len(text)
    while j < n and text[j] in " \t\r\n":
        j += 1
    return j
