"""Echo: edits piling up with no run of the project's tests, or only the newest test run."""

from __future__ import annotations

from metacog.senses.signal import Signal, memory, short

NAME = "echo"
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
TEST_COMMANDS = ("pytest", "py.test", "unittest", "tox", "nox", "npm test", "npm run test", "yarn test",
                 "pnpm test", "bun test", "jest", "vitest", "mocha", "go test", "cargo test", "cargo nextest",
                 "make test", "make check", "mvn test", "gradle test", "./gradlew test", "rspec", "phpunit",
                 "ctest", "dotnet test", "mix test", "swift test", "deno test")


CODE_EXTENSIONS = frozenset((
    "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "rs", "java", "kt", "kts", "scala", "rb",
    "php", "c", "h", "cc", "cpp", "cxx", "hpp", "cs", "swift", "m", "mm", "ex", "exs", "erl", "hs",
    "ml", "clj", "lua", "dart", "zig", "nim", "vue", "svelte", "sol", "templ",
))


def is_code(path: str) -> bool:
    """Docs, config and data edits do not call for a test run; code edits do."""
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[-1].lower() in CODE_EXTENSIONS


def is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return (name.startswith("test_") or name.endswith(("_test.py", "_test.go", "_spec.rb")) or ".test." in name
            or ".spec." in name or "/tests/" in path or "/test/" in path or "/__tests__/" in path)


def test_command(command: str) -> bool:
    lowered = f" {command.lower()}"
    return any(f" {c}" in lowered or f"/{c}" in lowered for c in TEST_COMMANDS)


def narrowed(command: str) -> bool:
    """A run of one test file or one test (pytest x.py::t, -k, go test -run, jest path)."""
    return "::" in command or " -k " in command or " -run " in command or any(
        is_test_file(part) for part in command.split()[1:] if "." in part)


def feel(win: dict, action: dict, ctx: object) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    tool = action["tool"]
    if tool in EDIT_TOOLS and action.get("ok", True):
        path = action.get("path", "")
        if not is_code(path):
            return None
        mem["edits"] = mem.get("edits", 0) + 1
        if path and not is_test_file(path):
            mem["source_edited"] = short(action["target"], 50)
        if mem["edits"] == cfg["edits_without_tests"]:
            return Signal(NAME, f"{mem['edits']} edits since the project's tests last ran. "
                          "Which test would tell you these changes work?")
        return None
    if tool == "Bash" and test_command(action["target"]):
        if narrowed(action["target"]):
            mem["narrow_runs"] = mem.get("narrow_runs", 0) + 1
            if mem.get("source_edited") and mem["narrow_runs"] == 3 and not mem.get("said_narrow"):
                mem["said_narrow"] = True
                return Signal(NAME, f"you changed {mem['source_edited']} and have run only a narrowed test 3 "
                              "times since. Does the rest of the suite still pass?")
        else:
            mem.clear()  # the whole suite ran: nothing pending
            return None
        mem["edits"] = 0
    return None


def reading(win: dict, ctx: object) -> str:
    edits = ((win.get("senses") or {}).get(NAME) or {}).get("edits", 0)
    return f"{edits} edits since tests ran" if edits >= 3 else ""
