"""What a shell command does, read from its words: the program it runs first, whether it
reads text, looks for something, changes files, or runs the project's tests.

The role of a Bash call decides how its result is read (metacog.perception.action: an empty
answer from a seeker is "not there"; metacog.perception.hidden: a reader's output is never
its own failure) and what the senses make of it (Echo: a test run; Vestibular: the world
changed). Each list is a list of programs and their subcommands, not of any project's text.
"""

from __future__ import annotations

import re

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
# A shell command that changes files or the repository (`sed -i`, a redirect, `git checkout`).
_WRITES = re.compile(
    r"sed -i|\b(?:cat|echo|printf)\b[^|]*>|\btee\b|\bpatch\b|\b(?:mv|cp|rm|touch)\b|git (?:apply|checkout|reset|"
    r"restore|stash|commit|merge|rebase|pull|switch)|\b(?:npm|pip|uv|yarn|pnpm) (?:i|install|add)\b"
)


def writes(command: str) -> bool:
    """Whether a shell command changes files or the repository: after it, an empty answer
    may not hold any more and asking again is checking, not circling."""
    return bool(_WRITES.search(command))


# Words before a program that run it rather than being it (`sudo make`, `env X=1 node`).
_PREFIXES = frozenset(("env", "time", "sudo", "nohup"))


def _runs_next(word: str, prefixes: frozenset = _PREFIXES) -> bool:
    """Whether a command's word runs the word after it: a prefix, or a `VAR=value`."""
    return word in prefixes or ("=" in word and not word.startswith(("-", "'", '"')))


def first_word(command: str) -> str:
    """The program a shell command runs first, past `cd … &&`, `VAR=value` and `env`."""
    for part in (
        command[:500].split("&&")[-1:] if command.lstrip().startswith("cd ") else [command[:500]]
    ):
        for word in part.split():
            if not _runs_next(word):
                return word.rsplit("/", 1)[-1]
    return ""


def after_cd(command: str) -> str:
    """A shell command without a leading `cd <folder> &&`: what it runs there (the rest
    whole, where `first_word` looks at the last step only)."""
    if command.lstrip().startswith("cd ") and "&&" in command:
        return command.split("&&", 1)[1].strip()
    return command


def named_words(command: str) -> list[str]:
    """A shell command's words (after a leading `cd … &&`), unquoted, without its flags and
    redirections: what it names."""
    words = [w.strip("\"'") for w in after_cd(command).split()]
    return [w for w in words if w and w[0] not in "-<>&|;0123456789" and ">" not in w]


# Where a shell command's first step ends: what follows is plumbing (`| tail`, `|| true`).
_STEP_END = re.compile(r"\|\|?|;|&&|&(?!>)")


def first_step(command: str) -> list[str]:
    """The words of a shell command's first step (up to the first pipe, `||`, `;`, `&&` or
    `&`): its program (without its folder), then what it acts on, the last being its object."""
    words = _step_words(command)
    return [w.rsplit("/", 1)[-1] if i == 0 else w for i, w in enumerate(words)]


def _step_words(command: str) -> list[str]:
    """The words the first step of a shell command names, as written (`named_words`)."""
    return named_words(_STEP_END.split(after_cd(command), 1)[0])


# Programs (and their subcommands) that run a project's tests, past the wrappers below.
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

# Folders that hold tests.
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
        if "/" not in word and "." not in name.strip("."):
            return ""
        while word.startswith(("./", "../", "~/")):
            word = word.split("/", 1)[1]
        return word
    return ""


# Programs that feed the next stage of a pipeline its words (`echo N | npx …`), and words
# that run the command after them (`sudo`, `timeout 10`) rather than being it.
_FEEDERS = frozenset(("echo", "yes", "printf"))
_RUNNING = _PREFIXES | {"timeout", "exec", "command"}
STAGES_CAP = 2000  # characters of a command whose pipeline is read


def actor(command: str) -> str:
    """The program a shell command acts with: the first of its pipeline's stages (split at a
    `|` outside quotes) that is not feeding the next its words (`yes | cp a b`: cp), past
    `cd … &&`, `VAR=value` and the words that run a command (`sudo`, `timeout 10`); '' where
    the command first waits (`sleep 30 && gh run view`: waiting is not acting)."""
    for stage in _stages(after_cd(command[:STAGES_CAP])):
        words = stage.split()
        while words and (_runs_next(words[0], _RUNNING) or words[0].isdigit()):
            words = words[1:]
        program = words[0].rsplit("/", 1)[-1] if words else ""
        if program and program not in _FEEDERS:
            return "" if program == "sleep" else program
    return ""


def _stages(command: str) -> list[str]:
    """A command's pipeline stages: split at each `|` (not `||`) outside quotes."""
    stages, start, quote, i = [], 0, "", 0
    while i < len(command):
        c = command[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "|":
            if command[i + 1 : i + 2] == "|":
                i += 1  # `||`: what runs when the stage before failed, not a stage
            else:
                stages.append(command[start:i])
                start = i + 1
        i += 1
    return [*stages, command[start:]]


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
