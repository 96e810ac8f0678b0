"""What a shell command checks, and what its result says of it: the evidence side of a turn end.

A check is a command that verifies something: a test run, a build, a lint or type check (what
metacog.perception.shell and .hidden already know as runners and verbs of verification), or
a look at a service (a status, `ps`, `curl`, a port). Its latest run, with nothing changed
since, is what the session itself last showed of that thing (metacog.turn_end holds the
turn's final message against it). The vocabulary here is programs and what their output says,
never the agent's words.
"""

from __future__ import annotations

import re

from metacog.perception.shell import QUESTIONS, actor, first_step, test_command

# Kinds of check, each with the words a message uses for what it checked (matched whole,
# case-insensitively; the CJK ones as they stand): a claim about that kind names one.
TEST, BUILD, LINT, SERVICE = "test", "build", "lint", "service"
KIND_WORDS = {
    TEST: ("test", "tests", "testing", "spec", "specs", "测试", "テスト"),
    BUILD: (
        "build",
        "builds",
        "built",
        "compile",
        "compiles",
        "compiled",
        "构建",
        "编译",
        "ビルド",
    ),
    LINT: ("lint", "linter", "type check", "typecheck", "types", "mypy", "eslint", "ruff"),
    SERVICE: (
        "running",
        "online",
        "started",
        "serving",
        "listening",
        "healthy",
        "operational",
        "service",
        "services",
        "server",
        "运行",
        "启动",
        "起動",
        "稼働",
    ),
}

# Builds and compilers, by the program and its subcommand (a test runner is shell's).
_BUILDS = re.compile(
    r"^(?:make|cmake|ninja|tsc|webpack|vite build|next build|cargo (?:build|check)|go (?:build|vet)|"
    r"(?:npm|pnpm|yarn|bun) (?:run )?build|docker (?:compose )?build|docker-compose build|"
    r"mvn (?:package|compile|install|verify)|gradle build|\./gradlew build|dotnet build|gcc|g\+\+|"
    r"clang|javac|python3? -m (?:build|py_compile|compileall)|pip install -e)\b"
)
_LINTS = re.compile(
    r"^(?:ruff|flake8|pylint|mypy|pyright|black --check|isort --check|eslint|prettier --check|"
    r"golangci-lint|cargo clippy|shellcheck|hadolint|stylelint|rubocop|(?:npm|pnpm|yarn|bun) "
    r"(?:run )?(?:lint|typecheck|type-check|check))\b"
)
# Looks at a running service: its status, its processes, its port, its answer.
_SERVICES = re.compile(
    r"^(?:systemctl (?:status|is-active)|service \S+ status|ps|pgrep|pidof|curl|wget|http|nc -z|"
    r"ss|netstat|lsof -i|docker (?:compose )?ps|docker-compose ps|docker logs|kubectl get|"
    r"pm2 (?:status|list|ls)|supervisorctl status)\b"
)
# What a look at a service answers when nothing is there (the command itself may exit 0:
# `ps aux | grep x`, `curl … || echo down`, `systemctl status` piped into `head`).
_DOWN = re.compile(
    r"connection refused|failed to connect|could(?:n't| not) connect|ECONNREFUSED|"
    r"Active: (?:inactive|failed)|inactive \(dead\)|not running|is not active|no such process|"
    r"Exited \(\d+\)|502 Bad Gateway|503 Service Unavailable|Empty reply from server|"
    r"Connection reset by peer",
    re.IGNORECASE,
)
# Words of a command that say nothing of what it checked.
_COMMON = frozenset(
    (
        "sudo",
        "grep",
        "python",
        "python3",
        "node",
        "bash",
        "echo",
        "head",
        "tail",
        "true",
        "null",
        "false",
        "localhost",
        "http",
        "https",
        "json",
        "aux",
        "run",
        "npm",
        "npx",
        "exec",
        "status",
        "test",
        "tests",
        "sleep",
        "curl",
        "wget",
        "systemctl",
        "docker",
        "compose",
        "timeout",
        "dev",
    )
)
_TOKEN = re.compile(r"[A-Za-z][\w.-]*[A-Za-z0-9]|\d{4,5}")
WORDS_CAP = 8


_SEGMENTS = re.compile(r"&&|\|\||;|\n")


def kind(command: str) -> tuple[str, str]:
    """The kind of check a shell command is, and the part of it that checks (`sleep 3 && curl
    …`: the curl); ('', '') for a command that checks nothing."""
    if test_command(command):
        return TEST, command
    for segment in _SEGMENTS.split(command[:2000]):
        words = first_step(segment)
        head = " ".join(words[:3])
        if not head:
            continue
        if _LINTS.match(head):
            return LINT, segment
        if _BUILDS.match(head):
            return BUILD, segment
        if _SERVICES.match(head) or _SERVICES.match(actor(segment) or "-"):
            return SERVICE, segment
    return "", ""


def first_words(command: str) -> list[str]:
    """What names a check among others of its kind: its program, subcommand and object, without
    the files it was narrowed to (`pytest tests/a.py` is a run of `pytest`)."""
    words = first_step(command)
    return [w for i, w in enumerate(words[:3]) if i == 0 or "/" not in w or "://" in w]


def asks(command: str) -> bool:
    """Whether a command only reads or looks for something (`cat`, `grep`, `git log`): running
    it changes nothing a check showed."""
    program = actor(command)
    return not program or program in QUESTIONS  # '': it waits first (`sleep 5 && …`)


def down(command: str, output: str) -> str:
    """The line of a service look's output that says nothing is there, '' for none: the
    answer names a refusal, or a `ps … | grep x` found only its own grep."""
    for line in output.splitlines()[-200:]:
        if _DOWN.search(line):
            return line.strip()[:160]
    if actor(command) == "ps" and "grep" in command:
        lines = [line for line in output.splitlines() if line.strip()]
        if not lines or all("grep" in line for line in lines):
            return "no matching process"
    return ""


def words(command: str) -> tuple[str, ...]:
    """The words that name what a command checked (a script, a service, a port, a test file),
    lower-cased: a message that names one speaks of that check."""
    out: list[str] = []
    for token in _TOKEN.findall(command[:400]):
        word = token.rsplit("/", 1)[-1].lower()
        stem = word.split(".", 1)[0] if not word[0].isdigit() else word
        for candidate in (stem, word):
            if (
                len(candidate) >= 4
                and candidate not in _COMMON
                and candidate not in out
                and not candidate.startswith("-")
            ):
                out.append(candidate)
    return tuple(out[:WORDS_CAP])
