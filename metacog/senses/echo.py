"""Echo: edits piling up with no run of the project's tests, or only the newest test run."""

from __future__ import annotations

from metacog.perception.action import is_code
from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import Signal, memory, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "echo"
DEFAULTS = {"enabled": True, "edits_without_tests": 12}
LIMITS = {"edits_without_tests": (1, 10_000)}
TEST_COMMANDS = (
    "pytest",
    "py.test",
    "unittest",
    "tox",
    "nox",
    "npm test",
    "npm run test",
    "yarn test",
    "pnpm test",
    "bun test",
    "jest",
    "vitest",
    "mocha",
    "go test",
    "cargo test",
    "cargo nextest",
    "make test",
    "make check",
    "mvn test",
    "gradle test",
    "./gradlew test",
    "rspec",
    "phpunit",
    "ctest",
    "dotnet test",
    "mix test",
    "swift test",
    "deno test",
)


TEST_DIRS = ("tests", "test", "__tests__", "spec")
# Words that run the next command rather than being it: `uv run pytest`, `FOO=1 npx jest`.
WRAPPERS = frozenset(
    (
        "uv",
        "run",
        "poetry",
        "pipenv",
        "hatch",
        "pdm",
        "npx",
        "bunx",
        "pnpm",
        "exec",
        "time",
        "env",
        "sudo",
        "python",
        "python3",
        "-m",
        "nice",
    )
)


def is_test_file(path: str) -> bool:
    """A test by its name or its folder; `path` relative to the project (an absolute
    path could pass through an unrelated "tests" folder above it)."""
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith(("_test.py", "_test.go", "_spec.rb"))
        or ".test." in name
        or ".spec." in name
        or any(part in TEST_DIRS for part in parts[:-1])
    )


def test_command(command: str) -> bool:
    """Whether some segment of a shell command runs a test runner (not `pip install pytest`)."""
    for segment in command.replace("&&", ";").replace("||", ";").replace("|", ";").split(";"):
        words = [w for w in segment.split() if "=" not in w or w.startswith("-")]
        while words and words[0].lower() in WRAPPERS:
            words.pop(0)
        if words and "/" in words[0] and not words[0].startswith("./gradlew"):
            words[0] = words[0].rsplit("/", 1)[-1]  # ./node_modules/.bin/jest is jest
        head = " ".join(words).lower()
        if any(head == c or head.startswith(c + " ") for c in TEST_COMMANDS):
            return True
    return False


def narrowed(command: str) -> bool:
    """A run of one test file or one test (pytest x.py::t, -k, go test -run, jest path)."""
    return (
        "::" in command
        or " -k " in command
        or " -run " in command
        or any(is_test_file(part) for part in command.split()[1:] if "." in part)
    )


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    tool = action.tool
    if not mem.get("tests") and (
        (tool == "Bash" and test_command(action.target))
        or (action.path and is_test_file(action.target))
    ):
        # The project has tests this session can run: only then is "no test since" news.
        # In projects whose sessions never run or touch a test, it was a quarter of what
        # metacog said on quiet sessions (issue 17, class 5).
        mem["tests"] = True
    if tool in EDIT_TOOLS and action.ok:
        path = action.path
        if not is_code(path):
            return None
        mem["edits"] = mem.get("edits", 0) + 1
        if not is_test_file(action.target):
            mem["source_edited"] = short(action.target, 50)
        if mem["edits"] >= cfg["edits_without_tests"] and mem.get("tests") and not mem.get("said"):
            mem["said"] = True
            return Signal(
                NAME,
                f"{mem['edits']} edits since the project's tests last ran. "
                "Which test would tell you these changes work?",
            )
        return None
    if tool == "Bash" and test_command(action.target):
        if narrowed(action.target):
            mem["narrow_runs"] = mem.get("narrow_runs", 0) + 1
            if mem.get("source_edited") and mem["narrow_runs"] == 3 and not mem.get("said_narrow"):
                mem["said_narrow"] = True
                return Signal(
                    NAME,
                    f"you changed {mem['source_edited']} and have run only a narrowed test 3 "
                    "times since. Does the rest of the suite still pass?",
                )
        else:
            mem.clear()  # the whole suite ran: nothing pending
            mem["tests"] = True
            return None
        mem["edits"] = 0
        mem.pop("said", None)
    return None


def reading(win: dict, ctx: Context) -> str:
    edits = peek(win, NAME).get("edits", 0)
    return f"{edits} edits since tests ran" if edits >= 3 else ""
