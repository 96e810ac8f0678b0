"""What a shell command does, read from its words: the program it runs first, whether it
reads text, looks for something, changes files, or runs the project's tests.

The role of a Bash call decides how its result is read (metacog.perception.action: an empty
answer from a seeker is "not there"; metacog.perception.hidden: a reader's output is never
its own failure) and what the senses make of it (Echo: a test run; Vestibular: the world
changed). Each list is a list of programs and their subcommands, not of any project's text.
"""

from __future__ import annotations

from metacog.perception.act import WRAPPERS, read, steps, unwrapped

# Shell programs that look for something: an empty answer from one is "not there".
SEEKERS = frozenset(("grep", "rg", "ag", "find", "fd", "ls", "locate", "which", "whereis", "git"))
# Commands that print text they read: what they print is never their own failure.
READERS = frozenset(
    (
        "grep",
        "rg",
        "ag",
        "cat",
        "bat",
        "head",
        "tail",
        "less",
        "more",
        "sed",
        "awk",
        "git",
        "echo",
        "printf",
        "ls",
        "find",
        "jq",
        "wc",
        "diff",
        "sort",
        "uniq",
        "cut",
        "tr",
        "nl",
    )
)
# Programs that ask (read text, or look for something): asking again is not acting again.
QUESTIONS = READERS | SEEKERS


def writes(command: str) -> bool:
    """Whether a shell command changes files or the repository: after it, an empty answer
    may not hold any more and asking again is checking, not circling (the whole command:
    metacog.perception.act reads it)."""
    return read(command).writes


def first_word(command: str) -> str:
    """The program a shell command runs first, past `cd … &&`, `VAR=value`, `sudo -u bob`,
    `timeout 10` and the like (metacog.perception.act: one reading for every reader)."""
    return read(command).program


def after_cd(command: str) -> str:
    """A shell command without a leading `cd <folder> &&`: what it runs there (the rest
    whole, where `first_word` looks at the last step only)."""
    if command.lstrip().startswith("cd ") and "&&" in command:
        return command.split("&&", 1)[1].strip()
    return command


def named_words(command: str) -> list[str]:
    """A shell command's words (after a leading `cd … &&`), unquoted, without its operators,
    flags and redirections: what it names (metacog.perception.act's one quote-aware reading:
    `grep "a b" x` names `a b`, not `"a` and `b"`)."""
    return [w for _, step in _from_cd(command) for w in _named(step)]


def _named(step: list[str]) -> list[str]:
    return [w for w in step if w and w[0] not in "-<>&|;0123456789" and ">" not in w]


def _from_cd(command: str) -> list[tuple[str, list[str]]]:
    """The command's steps (metacog.perception.act.steps) from the first that is not a
    leading `cd <folder> &&`."""
    parsed = steps(command)
    if len(parsed) > 1 and parsed[0][1][:1] in (["cd"], ["pushd"]) and parsed[1][0] == "&&":
        return parsed[1:]
    return parsed


def first_step(command: str) -> list[str]:
    """The words of a shell command's first step (up to the first pipe, `||`, `;`, `&&` or
    `&`, past a leading `cd … &&` and the words that run it: `sudo -u bob`, `timeout 10`,
    `VAR=1`): its program (without its folder), then what it acts on, the last being its
    object."""
    words = _step_words(command)
    return [w.rsplit("/", 1)[-1] if i == 0 else w for i, w in enumerate(words)]


def _step_words(command: str) -> list[str]:
    """The words the first step of a shell command names, as written (`named_words`)."""
    parsed = _from_cd(command)
    return _named(unwrapped(parsed[0][1])) if parsed else []


# Folders that hold tests.
TEST_DIRS = ("tests", "test", "__tests__", "spec")
# Programs that run the script named after them (`python3 tools/x.py`, `bash deploy.sh`).
INTERPRETERS = frozenset(
    ("node", "bash", "sh", "zsh", "ruby", "perl", "php", "deno", "bun", "tsx", "ts-node")
)


def script(command: str) -> str:
    """The file a shell command runs, as the command names it (without a leading `./`, `../`
    or `~/`): its program where that is a file (`./deploy.sh`, `scripts/fc1 cmd x`), or the
    script an interpreter runs (`uv run python tools/x.py`); '' for a program on the PATH,
    which runs its own code whatever file it is given (`mypy app.py`, `nginx -t -c
    nginx.conf`, `grep x app.py`)."""
    for word in _step_words(command):
        name = word.rsplit("/", 1)[-1]
        if name in WRAPPERS or name in INTERPRETERS:
            continue  # runs the next word
        if any(c.isspace() for c in word):
            return ""  # code given inline (`python3 -c "…"`, `bash -c "…"`): no file runs
        if "/" not in word and "." not in name.strip("."):
            return ""
        while word.startswith(("./", "../", "~/")):
            word = word.split("/", 1)[1]
        return word
    return ""


def actor(command: str) -> str:
    """The program a shell command acts with: the first of its steps that is not feeding the
    next its words (`yes | cp a b`: cp), past `cd … &&` and the words that run a command;
    '' where the command first waits (`sleep 30 && gh run view`: waiting is not acting)."""
    act = read(command)
    return "" if act.waits else act.program


def runs(command_script: str, path: str) -> bool:
    """Whether `path` (an edited file, absolute or not) is the script a command runs, as
    `script` named it: the same path, or one that ends with it."""
    return bool(command_script) and (path == command_script or path.endswith("/" + command_script))


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
    """Whether some step of a shell command runs the project's tests (not `pip install
    pytest`; `timeout 60 pytest` and `uv run pytest` do)."""
    return read(command).tests


def narrowed(command: str) -> bool:
    """A run of one test file or one test (pytest x.py::t, -k, go test -run, jest path)."""
    return (
        "::" in command
        or " -k " in command
        or " -run " in command
        or any(is_test_file(part) for part in command.split()[1:] if "." in part)
    )
