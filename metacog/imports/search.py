"""Asking the index: which stored keys name a file, found by substring search over the
stored text (keys hold no character JSON escapes but non-ASCII ones, escaped alike in
the needles)."""

from __future__ import annotations

import json

SHARED_MIN = 8  # chars; a file's names are searched as one shared suffix only when it is this long


def needles(names: list[str]) -> list[tuple[bytes, tuple[bytes, ...], str | None]]:
    """How to find keys naming any of `names` in the stored key text, as found there.

    Each: (text to search, what must come just before it, what must follow: None for a
    key's end, '' for the end of a module name in `import M` or `from M import ...`,
    else a member of the list in `from PARENT import a,b`). A file's names are its
    longest one without some leading components, so one search of the shortest finds
    them all (JS paths are also bare specifiers, `b:`).
    """
    families: dict[str, list[tuple[str, str]]] = {}
    for name in names:
        tag, _, value = name.partition(":")
        families.setdefault("j" if tag == "b" else tag, []).append((tag, value))
    out = []
    for family, items in families.items():
        if family != "p":
            out += _family(items, None)
            continue
        out += _family(items, "")
        dotted = [(tag, value.rpartition(".")[0] + ":") for tag, value in items if "." in value]
        if dotted:
            out += _family(dotted, items[0][1].rpartition(".")[2])
    return out


def _family(
    items: list[tuple[str, str]], member: str | None
) -> list[tuple[bytes, tuple[bytes, ...], str | None]]:
    shortest = min((value for _, value in items), key=len)
    if len(shortest) < SHARED_MIN or not all(value.endswith(shortest) for _, value in items):
        # A short text ('.' for a root index.ts, 'os') would be found everywhere: whole keys.
        return [
            (_escaped(" " + tag + ":" + value).encode(), (b"",), member) for tag, value in items
        ]
    heads = {
        _escaped(" " + tag + ":" + value[: len(value) - len(shortest)]).encode()
        for tag, value in items
    }
    return [(_escaped(shortest).encode(), tuple(sorted(heads)), member)]


def fits(data: bytes, i: int, size: int, prefixes: tuple[bytes, ...], member: str | None) -> bool:
    """Whether the needle found at `i` is a whole key of the kind asked (see `_needles`)."""
    if not any(data[i - len(p) : i] == p for p in prefixes):
        return False
    j = i + size
    if member is None:
        return data[j : j + 1] == b" "
    if not member:
        return data[j : j + 1] in (b" ", b":")
    return member.encode() in data[j : data.find(b" ", j)].split(b",")


def _escaped(value: str) -> str:
    """`value` as it appears inside a JSON string of the index file."""
    return json.dumps(value)[1:-1]
