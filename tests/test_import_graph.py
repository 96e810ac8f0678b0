"""No import circle inside metacog/, counting every import statement (in functions and
under TYPE_CHECKING too).

A deferred import (one inside a function, kept there so the hook path stays fast) is still an
edge: it runs sooner or later, and a circle through it is a circle of responsibilities. A
module's own packages are no edge (they are imported before it runs); importing a module of
another package is one to that package's __init__ too, which runs first.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "metacog"


def modules() -> dict[str, Path]:
    """Every module of metacog/ by its dotted name (a package by its own name, `__init__`)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _absolute(name: str, node: ast.ImportFrom, path: Path) -> str:
    """The module a `from` import names, relative imports resolved against `name`."""
    if not node.level:
        return node.module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The metacog modules `name` imports anywhere in its source: `import a.b` is an edge to
    a.b, `from a import b` to the submodule a.b when there is one, else to a; and each is an
    edge to the packages above it, whose __init__ runs first."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(name, node, path)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in known else source)
    # Importing a.b.c runs the __init__ of a and of a.b first: edges to them too, but for the
    # packages `name` is inside of, which are always imported before it runs.
    for target in list(found):
        parts = target.split(".")
        found |= {
            package
            for package in (".".join(parts[:i]) for i in range(1, len(parts)))
            if not name.startswith(package + ".")
        }
    return {target for target in found if target in known and target != name}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, set(known)) for name, path in known.items()}


def tangles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): the modules each
    of which reaches every other through imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components


def circle(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest path from the component's first module back to itself, inside it."""
    start, members = component[0], set(component)
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(edges[node] & members):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if target not in came:
                    came[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def describe(found: list[list[str]], edges: dict[str, set[str]]) -> str:
    """Each tangle: one circle through it, then all of its modules."""
    return "\n".join(
        " -> ".join(circle(component, edges))
        + f"\n    ({len(component)} modules: {', '.join(component)})"
        for component in found
    )


def test_the_graph_sees_every_kind_of_import() -> None:
    edges = graph()
    assert "metacog.senses" in edges and "metacog.senses.reflex" in edges["metacog.senses"]
    # a deferred import (inside a function) counts
    assert "metacog.fsutil" in edges["metacog.nervous"]
    # `from metacog import facts` is an edge to the submodule, not to the package
    assert "metacog.facts" in edges["metacog.nervous"]
    assert "metacog" not in edges["metacog.nervous"]


def test_relative_imports_are_resolved() -> None:
    def target(source: str, path: Path, name: str) -> str:
        node = ast.parse(source).body[0]
        assert isinstance(node, ast.ImportFrom)
        return _absolute(name, node, path)

    reflex, package = PACKAGE / "senses" / "reflex.py", PACKAGE / "senses" / "__init__.py"
    assert target("from . import signal", reflex, "metacog.senses.reflex") == "metacog.senses"
    assert target("from .. import config", reflex, "metacog.senses.reflex") == "metacog"
    assert target("from .signal import short", package, "metacog.senses") == (
        "metacog.senses.signal"
    )


def test_the_cycle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c", "a"}, "c": {"a", "d"}, "d": set()}
    assert tangles(edges) == [["a", "b", "c"]]
    assert circle(["a", "b", "c"], edges) == ["a", "b", "a"]
    assert tangles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_metacog() -> None:
    edges = graph()
    found = tangles(edges)
    assert not found, "import circles (every import statement counted):\n" + describe(found, edges)
