"""Which files the index knows, their import keys, and the keys a file is imported as."""

from __future__ import annotations

import os

from metacog.imports import go, javascript, python, rust

KINDS = {".py": "p", ".go": "g", ".rs": "r"}
KINDS.update(
    dict.fromkeys(
        (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte"), "j"
    )
)
PARSERS = {
    "p": python.parse_python,
    "j": javascript.parse_js,
    "g": lambda text, rel: go.parse_go(text),
    "r": rust.parse_rust,
}


def kind(path: str) -> str:
    """'p', 'j', 'g' or 'r' for a source file the index knows, '' for anything else."""
    dot = path.rfind(".")
    if dot <= path.rfind("/") + 1:
        return ""
    return KINDS.get(path[dot:].lower(), "")


def parse(text: str, rel: str) -> list[str]:
    """The import keys of one source file (`rel`: its path from the project root)."""
    parser = PARSERS.get(kind(rel))
    return parser(text, rel) if parser else []


def names_for(rel: str, root: str) -> list[str]:
    """The keys under which other files import `rel` ([] when nothing can import it)."""
    k = kind(rel)
    out: list[str] = []
    if k == "p":
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if not parts:
            return []
        out.append("p:" + ".".join(parts))
        # A top-level dir that is not itself a package is a source root (src/, lib/, tests/).
        if len(parts) > 1 and not os.path.exists(os.path.join(root, parts[0], "__init__.py")):
            out.append("p:" + ".".join(parts[1:]))
        src = next((i for i in range(len(parts) - 2, 0, -1) if parts[i] == "src"), 0)
        if src:
            out.append("p:" + ".".join(parts[src + 1 :]))
    elif k == "j":
        path = javascript.jnorm(rel)
        out += ["j:" + path, "b:" + path]
        if "/" in path:
            out.append("b:" + path.split("/", 1)[1])
    elif k == "g":
        if not rel.endswith("_test.go"):
            package = go.package(root, rel.rpartition("/")[0])
            if package:
                out.append("g:" + package)
    elif k == "r":
        parts = rel[:-3].split("/")
        if parts[-1] not in ("lib", "main"):
            if parts[-1] == "mod":
                parts.pop()
            if parts:
                out.append("r:" + "/".join(parts))
    return list(dict.fromkeys(out))
