"""Python: `import a.b`, `from a.b import c, d` (relative ones resolved from the project
root), found with str methods, statements memoized."""

from __future__ import annotations

from metacog.imports.scan import memo as _memo
from metacog.imports.scan import remember as _remember

_PY_AFTER = (" ", "\t", "(", "\\")


def parse_python(text: str, rel: str) -> list[str]:
    if "import" not in text:
        return []
    keys: dict[str, None] = {}
    memo = _memo
    find, rfind, n = text.find, text.rfind, len(text)
    quoted = '"""' in text or "'''" in text
    counted = dq = sq = 0
    package: list[str] | None = None
    i = find("import")
    while i != -1:
        if text[i + 6 : i + 7] not in _PY_AFTER or (i and text[i - 1] not in " \t\n;"):
            i = find("import", i + 6)
            continue  # importlib, imported, reimport: not the keyword
        start = rfind("\n", 0, i) + 1
        end = find("\n", i)
        end = n if end == -1 else end
        if quoted:  # inside a triple-quoted string (a docstring showing usage) it is not code
            dq += text.count('"""', counted, start)
            sq += text.count("'''", counted, start)
            counted = start
            if dq & 1 or sq & 1:
                i = find("import", end)
                continue
        line = text[start:end]
        got = memo.get(line)
        if got is None:
            if start >= 2 and text[start - 2] == "\\":  # `from a \` on the line before
                while start >= 2 and text[start - 2] == "\\":
                    start = rfind("\n", 0, start - 1) + 1
                line = text[start:end]
            if package is None:
                package = rel.split("/")[:-1]
            got, end = _py_line(text, line, end, package)
        for key in got:  # type: ignore[union-attr]
            keys[key] = None
        i = find("import", end)
    return list(keys)


def _py_line(text: str, line: str, end: int, package: list[str]) -> tuple[tuple[str, ...], int]:
    """The keys of the statement starting on `line` (memoized when it is a line of its own)."""
    head = line.lstrip()
    first = head[:4]
    if first != "impo" and first != "from":
        _remember(line, ())
        return (), end
    whole = "\n" not in line
    if not whole:
        head = head.replace("\\\r\n", " ").replace("\\\n", " ")
    if "#" in head:
        head = head[: head.find("#")]
    if head.endswith("\\") or ("(" in head and ")" not in head):
        head, end = _continued(text, head, end)
        whole = False
    out: list[str] = []
    relative = False
    for part in head.split(";") if ";" in head else (head,):
        part = part.strip()
        relative = relative or part.startswith("from .")
        out += _py_statement(part, package)
    got = tuple(out)
    if whole and not relative:
        _remember(line, got)
    return got, end


def _continued(text: str, stmt: str, end: int) -> tuple[str, int]:
    """A statement continued by parentheses or backslashes, as one line."""
    n = len(text)
    stmt = stmt.rstrip()
    for _ in range(200):
        if stmt.endswith("\\"):
            stmt = stmt[:-1]
        elif not ("(" in stmt and ")" not in stmt):
            break
        if end >= n:
            break
        nxt = text.find("\n", end + 1)
        nxt = n if nxt == -1 else nxt
        line = text[end + 1 : nxt]
        cut = line.find("#")
        stmt += " " + (line if cut == -1 else line[:cut]).strip()
        end = nxt
    return stmt, end


def _py_statement(stmt: str, package: list[str]) -> list[str]:
    if "(" in stmt:
        stmt = stmt.replace("(", " ").replace(")", " ")
    if stmt.startswith("import"):
        words = stmt.split(None, 1)
        if len(words) < 2 or words[0] != "import":
            return []
        out = []
        for item in words[1].split(","):
            name = item.split(None, 1)
            if name and name[0].replace(".", "_").isidentifier():
                out.append("p:" + name[0])
        return out
    words = stmt.split(None, 3)
    if len(words) < 4 or words[0] != "from" or words[2] != "import":
        return []
    names = [item.split(None, 1)[0] for item in words[3].split(",") if item and not item.isspace()]
    return _py_from(words[1], names, package)


def _py_from(module: str, names: list[str], package: list[str]) -> list[str]:
    base = module.lstrip(".")
    dots = len(module) - len(base)
    if base and not base.replace(".", "_").isidentifier():
        return []
    if dots:
        up = dots - 1
        if up > len(package):
            return []
        parts = package[: len(package) - up]
        full = ".".join([*parts, base] if base else parts)
    else:
        full = base
    # Lower-case names may be submodules (PEP 8); classes and constants cannot.
    modules = [w for w in names if (w[0].islower() or w[0] == "_") and w.isidentifier()]
    if not full:
        return ["p:" + w for w in modules]  # `from . import x` at the root
    return ["p:" + full + ":" + ",".join(modules)] if modules else ["p:" + full]
