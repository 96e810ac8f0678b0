"""Rust: `mod x;` declarations and `use crate::/self::/super::` paths, as module files
of the crate."""

from __future__ import annotations

from metacog.imports.scan import skip_ws as _skip_ws


def _rust_context(rel: str) -> tuple[str, str, list[str]]:
    """(directory of the file's child modules, crate src dir or '', module path in the crate)."""
    parts = rel.split("/")
    name = parts[-1]
    own = name in ("mod.rs", "lib.rs", "main.rs")
    child = "/".join(parts[:-1] if own else [*parts[:-1], name[:-3]])
    src = next((k for k in range(len(parts) - 2, -1, -1) if parts[k] == "src"), -1)
    if src == -1:
        return child, "", []
    return child, "/".join(parts[: src + 1]), parts[src + 1 : -1] + ([] if own else [name[:-3]])


def parse_rust(text: str, rel: str) -> list[str]:
    if "mod" not in text and "use" not in text:
        return []
    child, crate, module = _rust_context(rel)
    keys: dict[str, None] = {}
    n = len(text)
    for word in ("mod", "use"):
        i = text.find(word)
        while i != -1:
            end = i + 3
            prefix = text[text.rfind("\n", 0, i) + 1 : i].strip()
            if (
                not prefix
                or (prefix.startswith(("pub", "#[")) and prefix.endswith(("pub", ")", "]")))
            ) and text[end : end + 1] in (" ", "\t"):
                if word == "mod":
                    j = _skip_ws(text, end)
                    k = j
                    while k < n and (text[k].isalnum() or text[k] == "_"):
                        k += 1
                    after = _skip_ws(text, k)
                    if k > j and text[after : after + 1] == ";":
                        keys["r:" + (child + "/" if child else "") + text[j:k]] = None
                elif crate:
                    stop = text.find(";", end, end + 2000)
                    if stop != -1:
                        paths: list[str] = []
                        _use_paths(" ".join(text[end:stop].split()), paths)
                        for path in paths:
                            _rust_keys(path, crate, module, keys)
                        end = stop
            i = text.find(word, end)
    return list(keys)


def _use_paths(tree: str, out: list[str], depth: int = 0) -> None:
    """`a::{b, c::{d as e}}` -> ['a::b', 'a::c::d'] (capped)."""
    if len(out) >= 64 or depth > 8:
        return
    k = tree.find("{")
    if k == -1:
        out.append(tree.split(" as ")[0].replace(" ", ""))
        return
    prefix, level, item, items = tree[:k].replace(" ", ""), 0, [], []
    for c in tree[k + 1 :]:
        if c == "{":
            level += 1
        elif c == "}":
            if level == 0:
                break
            level -= 1
        if c == "," and level == 0:
            items.append("".join(item))
            item = []
        else:
            item.append(c)
    items.append("".join(item))
    for part in items:
        if part.strip():
            _use_paths(prefix + part.strip(), out, depth + 1)


def _rust_keys(path: str, crate: str, module: list[str], keys: dict[str, None]) -> None:
    segs = [s for s in path.split("::") if s]
    if not segs:
        return
    if segs[0] == "crate":
        base, rest = [], segs[1:]
    elif segs[0] in ("self", "super"):
        base, rest = list(module), segs[1:] if segs[0] == "self" else segs
        while rest and rest[0] == "super":
            if not base:
                return
            base.pop()
            rest = rest[1:]
    else:
        return  # another crate, or std
    item = bool(rest) and rest[-1] not in ("self", "*")
    if rest and not item:
        rest = rest[:-1]
    full = base + rest
    if not full:
        return
    keys["r:" + crate + "/" + "/".join(full)] = None
    if item and len(full) > 1:
        keys["r:" + crate + "/" + "/".join(full[:-1])] = None  # `use crate::a::b::Item` uses a/b.rs
