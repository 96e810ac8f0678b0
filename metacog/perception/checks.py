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

from metacog.perception.act import ELSE, THEN, read, said, segments
from metacog.perception.shell import (
    QUESTIONS,
    actor,
    first_step,
    script,
    test_command,
)

# Kinds of check, each with the words a message uses for what it checked (matched whole,
# case-insensitively; the CJK ones as they stand): a claim about that kind names one.
TEST, BUILD, LINT, SERVICE = "test", "build", "lint", "service"
# A look for a process (`ps aux | grep x`, `pgrep x`): about the process it names, and only
# that (looking for a finished job's id is no claim that anything runs).
PROCESS = "process"
LOOKS = (SERVICE, PROCESS)
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
    r"^(?:systemctl (?:status|is-active)|service \S+ status|ps|pgrep|pidof|curl|http|nc -z|"
    r"ss|netstat|lsof -i|docker (?:compose )?ps|docker-compose ps|docker logs|kubectl get|"
    r"pm2 (?:status|list|ls)|supervisorctl status)\b"
)
# A curl that fetches a file is a download, not a look at a service.
_DOWNLOAD = re.compile(r"\bcurl\b.*\s(?:-[a-zA-Z]*[oO]\b|--output\b|--remote-name\b)")
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


def kind(command: str) -> tuple[str, str]:
    """The kind of check a shell command is, and the part of it that checks (`sleep 3 && curl
    …`: the curl); ('', '') for a command that checks nothing."""
    if test_command(command):
        return TEST, command
    for segment in segments(command):
        words = first_step(segment)
        head = " ".join(words[:3])
        if not head:
            continue
        if test_command(segment):  # after a step that is no check (`python3 - <<'PY' … PY`)
            return TEST, segment
        if _LINTS.match(head):
            return LINT, segment
        if _BUILDS.match(head):
            return BUILD, segment
        if words[0] in ("ps", "pgrep", "pidof"):
            return PROCESS, segment
        if (
            _SERVICES.match(head) or _SERVICES.match(actor(segment) or "-")
        ) and not _DOWNLOAD.search(segment):
            return SERVICE, segment
        named = script_kind(segment)
        if named:
            return named, segment
    return "", ""


def script_name(command: str) -> str:
    """The file name of the script a command runs ('' for a program on the PATH): as shell
    names it, or past a wrapper with its own arguments (`timeout 60 ./launch.sh`)."""
    name = script(command).rsplit("/", 1)[-1]
    if name:
        return name
    program = read(command).program
    return program if program.endswith(SCRIPT_EXTENSIONS) else ""


SCRIPT_EXTENSIONS = (".sh", ".bash", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl")


def runner(command: str) -> str:
    """The test runner a command runs (`cargo test`, `pytest`, `bun run test`), past its
    wrappers, variables, flags and folders (metacog.perception.act): every run of it is a run
    of the same check."""
    return read(command).runner


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


# What a project's own script prints when something it ran or looked at failed, whatever its
# exit status (`✗ Git hook did not update the index`, `Python Agent Bridge  STOPPED`, `Final
# test status: FAILED`): a line marked failed by the script, or a program's own crash.
_SAYS_FAILED = re.compile(
    r"^\s*(?:[\u2717\u2718\u274c]|\[(?:FAIL|FAILED|ERROR)\])|\bFAILED\b|\bSTOPPED\b|"
    r"(?i:\bstatus:?\s+(?:error|failed|stopped|down|inactive)\b|\bbuild failed\b)|command not found|"
    r"\b(?:ModuleNotFoundError|ImportError|SyntaxError|NameError)\b|Traceback \(most recent call last\)"
)
# A command that starts something (in the background, a service, containers): what a look at
# a service showed before it may not hold after.
_STARTS = re.compile(
    r"&\s*$|&\s*(?:echo|sleep)\b|\bnohup\b|\b(?:systemctl|service)\s+\S*\s*(?:start|restart)\b|"
    r"\bdocker(?:-compose| compose) (?:up|start|restart)\b|\b(?:npm|pnpm|yarn|bun) (?:run )?(?:dev|start|serve)\b|"
    r"\b(?:pm2|supervisorctl) (?:start|restart)\b"
)


def starts(command: str) -> bool:
    """Whether a command starts something (a server, a service, a background job)."""
    return not asks(command) and bool(_STARTS.search(command[:2000]))


# A script named for what it checks (`./STATUS.sh`, `health_check.py`, `verify-install.sh`).
_STATUS_SCRIPT = re.compile(r"status|health", re.IGNORECASE)
_TEST_SCRIPT = re.compile(r"test|verify|validate|check", re.IGNORECASE)


def says_failed(output: str) -> str:
    """The first line of a command's output that says something failed, '' for none."""
    for line in output.splitlines()[-400:]:
        if _SAYS_FAILED.search(line[:400]):
            return line.strip()[:160]
    return ""


def script_words(name: str) -> tuple[str, ...]:
    """How a message names a script: its file name, its stem, and the stem's parts as a phrase
    (`VOICE_INPUT_SYSTEM.py`: "voice input system"), lower-cased."""
    name = name.lower()
    stem = name.split(".", 1)[0]
    phrase = " ".join(p for p in re.split(r"[_-]+", stem) if p)
    return tuple(dict.fromkeys(w for w in (name, stem, phrase) if len(w) >= 4))


def script_kind(command: str) -> str:
    """The kind of check a project's script is by its name ('' for another script)."""
    name = script_name(command)
    if not name:
        return ""
    if _STATUS_SCRIPT.search(name):
        return SERVICE
    return TEST if _TEST_SCRIPT.search(name) else ""


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


# The state a status line gives a thing (`Status: ● RUNNING`, `Active: inactive (dead)`):
# down first, so that "NOT RUNNING" is not read as running.
_STATE_DOWN = re.compile(
    r"\b(?:not running|not active|stopped|inactive|down|offline|dead|exited|failed)\b",
    re.IGNORECASE,
)
_STATE_UP = re.compile(r"\b(?:running|active|up|online|healthy|listening)\b", re.IGNORECASE)
_HEADER = re.compile(r"^\s*\[([^\]]{3,60})\]\s*$|^\s*([^:]{3,60}):\s*$")
_LABEL_NOISE = re.compile(r"(?i:status|state)|[^\w\s.-]")


def partly_down(command: str, output: str) -> tuple[str, tuple[str, ...]]:
    """What a look showed down when it showed other things up: the line, and the words of
    the things down (a claim about those alone contradicts it); ('', ()) when it showed
    all it looked at down, or nothing down. A `ps … | grep -E "a|b|c"` whose lines name
    some of its alternatives and not others; a status listing (`[Binary Protocol] Status: ●
    RUNNING`, `[Unified Runtime] Status: ● NOT RUNNING`) with lines of one shape in both
    states."""
    if actor(command) == "ps" and "grep" in command:
        wanted = _alternatives(command)
        lines = [line.lower() for line in output.splitlines() if "grep" not in line]
        missing = [w for w in wanted if not any(w.lower() in line for line in lines)]
        if lines and missing and len(missing) < len(wanted):
            named = [m.lower() for m in missing]
            # ultra_hybrid: "ultra hybrid" too
            named += [" ".join(re.split(r"[_-]+", m)) for m in named]
            return f"no process matching {', '.join(missing)}", tuple(dict.fromkeys(named))
        return "", ()
    shapes: dict[str, list[bool]] = {}
    downs: list[tuple[str, str, str]] = []
    header = ""
    for line in output.splitlines()[-200:]:
        head = _HEADER.match(line)
        if head:
            header = (head[1] or head[2]).strip()
            continue
        state = _STATE_DOWN.search(line) or _STATE_UP.search(line)
        if not state:
            continue
        shape = " ".join(line[: state.start()].lower().split())
        is_down = state.re is _STATE_DOWN
        shapes.setdefault(shape, []).append(is_down)
        if is_down:
            label = " ".join(_LABEL_NOISE.sub(" ", line[: state.start()]).split()) or header
            downs.append((shape, label, line.strip()))
    partial = [d for d in downs if not all(shapes[d[0]]) and d[1]]
    if not partial:
        return "", ()
    said = "; ".join(
        f"[{label}] {line}" if label not in line else line for _, label, line in partial
    )
    labels = dict.fromkeys(" ".join(label.lower().split()) for _, label, _ in partial)
    return said[:160], tuple(labels)[:WORDS_CAP]


_GREP_PATTERN = re.compile(
    r"\bgrep\s+(?:-[a-zA-Z]*[Ee]?\s+)*(?:\"([^\"]+)\"|'([^']+)'|([^\s|;&-][^\s|;&]*))"
)


def _alternatives(command: str) -> list[str]:
    """The names a `ps … | grep` looks for: each alternative of its patterns (not of a
    `grep -v`), without regex groups."""
    out: list[str] = []
    for found in _GREP_PATTERN.finditer(command[:600]):
        if re.match(r"grep\s+-[a-zA-Z]*v", found[0]):
            continue
        pattern = found[1] or found[2] or found[3] or ""
        for part in re.split(r"\\?\|", pattern):
            part = part.strip("()^$ ")
            if part and re.fullmatch(r"[\w.-]+", part) and part not in out:
                out.append(part)
    return out


def promised(command: str) -> str:
    """What a command says it did once its work succeeds (`rm … && echo "✅ Cleaned temporary
    files"`: the last line its sayers print only when its acts all went well, metacog.
    perception.act's `says`): its words (two at least, of four letters or more), lower-cased,
    '' for none."""
    then = [line for when, line in read(command).says if when == THEN]
    if not then:
        return ""
    named = [w.lower() for w in re.findall(r"[A-Za-z]{4,}", then[-1]) if w.lower() not in _COMMON]
    return " ".join(dict.fromkeys(named)) if len(set(named)) >= 2 else ""


def fell_back(command: str, output: str) -> str:
    """The line of a command's fallback that printed last (`./ultrathink.sh status 2>/dev/null
    || echo "works"`: a line its sayers print only when an act failed, metacog.perception.
    act's `says`; the work before it failed, its exit status hidden), '' otherwise."""
    lines = [said(line) for line in output.splitlines() if line.strip()]
    if not lines or read(command).heard().get(lines[-1]) != {ELSE}:
        return ""
    return f"its `|| echo` printed: {lines[-1]}"[:160]


def words(command: str) -> tuple[str, ...]:
    """The words that name what a command checked (a script, a service, a port, a test file),
    lower-cased: a message that names one speaks of that check."""
    out: list[str] = []
    for token in _TOKEN.findall(command[:400]):
        word = token.rsplit("/", 1)[-1].lower()
        stem = word.split(".", 1)[0] if not word[0].isdigit() else word
        phrase = " ".join(
            p for p in re.split(r"[_-]+", stem) if p
        )  # unified_agent: "unified agent"
        for candidate in (stem, word, phrase):
            if (
                len(candidate) >= 4
                and candidate not in _COMMON
                and candidate not in out
                and not candidate.startswith("-")
            ):
                out.append(candidate)
    return tuple(out[:WORDS_CAP])
