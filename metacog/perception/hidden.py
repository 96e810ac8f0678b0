"""Failures that exit 0: what a successful-looking result says went wrong.

A test run piped into `tail`, a `|| true`, a background shell that died: the exit status
says nothing, the output still does. Its own small module: it runs on every successful
Bash call, and the rest of metacog.perception.symptoms is for failures.
"""

from __future__ import annotations

import re

from metacog.perception.act import ALWAYS, ELSE, read, said
from metacog.perception.shell import QUESTIONS, READERS, first_word
from metacog.perception.tools import DELEGATING_TOOLS, POLLING_TOOLS

SCAN_CAP = 20000  # characters of output looked at (the end: where runners summarize)
LINE_CAP = 400  # characters of one line looked at

# A command can fail without saying so in its exit status: a test run piped into `tail`,
# a `|| true`, a background shell that died. Its output still says it. Only where the command
# verifies: a runner, or a verb of verification (build, test, lint, check: `cargo check | head`).
_RUNNERS = re.compile(
    r"\b(?:py\.?test|tox|nox|jest|vitest|mocha|go test|cargo test|cargo build|npm|pnpm|yarn|"
    r"bun|make|tsc|mypy|pyright|ruff|eslint|golangci-lint|lint|unittest|rspec|phpunit|"
    r"gradle|mvn|dotnet test|swift test|build|test|check)\b"
)
_HIDDEN = re.compile(
    r"(?:FAILED \S+|ERROR \S+::\S+|--- FAIL: \S+|FAIL\s+\S+|not ok \d+|Tests?:\s+\d+ failed|\d+ failing"
    r"|Traceback \(most recent call last\):|error(?:\[\w+\])?: |\S+: (?:command not found|No such file or directory)"
    r"|(?:command |operation |request )?timed out|timeout (?:after|exceeded|of))"
)
_SUMMARY = re.compile(r"\b\d+ (?:failed|errors?)\b")  # inside a `==== … ====` line
# A runner's own count of failures, indented or not (vitest's ` Test Files  1 failed | 50
# passed`, mocha's `  2 failing`), a failing test it names (` FAIL  a.test.ts > suite > t`),
# and the exception that says what failed in it (`AssertionError: expected …`).
_COUNTED = re.compile(
    r"\s*(?:Test Files|Test Suites|Tests|Suites):?\s+[1-9]\d* failed\b|\s+[1-9]\d* failing\s*$"
    r"|\s?FAIL\s+\S+.* [>›] |\s?× \S+.* [>›] "
)
_RAISED = re.compile(r"[A-Z]\w*(?:Error|Exception): \S")
# A runner's own count of no failure (bun's ` 0 fail`, vitest's `Tests  12 passed`, with no
# failed count, is not this: only a count of zero failures).
_NONE_FAILED = re.compile(
    r"\s*0 (?:fail|failed|failing|failures)\s*$|.*\b[1-9]\d* passed, 0 failed\b"
)
HIDDEN_LINES = 12


_API_ERROR = re.compile(r"API Error\b")

# A program's own complaint: a line that opens with the name of a program the command ran (or
# the shell that ran it) and a colon (`ls: cannot access …`, `curl: option : blank argument`,
# `jq: parse error …`, `/bin/bash: line 1: …`): programs sign what they say of their own run.
_SIGNED = re.compile(r"\s*(?:\S*/)?([\w.+-]+):(?:\s|$)")
SHELLS = frozenset(("sh", "bash", "zsh", "dash"))
COMPLAINT_LINES = 3  # lines an answer that is only a complaint holds at most  # not "Error handling in the API layer is …"


def _answer(response: dict) -> str:
    """The text a subagent answered with (its `content` blocks)."""
    content = response.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            b["text"] for b in content[:4] if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def complaint(command: str, output: str) -> str:
    """The whole answer of a command whose exit status is another step's (`ls x | grep y`,
    `curl … || true`, `cat f; echo done`: metacog.perception.act's `hides_exit`) where that
    answer is a few lines (COMPLAINT_LINES at most), one of them signed by a program the
    command ran (`_SIGNED`): its own failure, which the plumbing's exit 0 does not undo; ''
    for none. Without such plumbing the exit status is the program's own, and a signed line
    is what it says of a run that went well (`nginx: … syntax is ok`)."""
    lines = [line for line in output.splitlines() if any(c.isalnum() for c in line[:LINE_CAP])]
    if not lines or len(lines) > COMPLAINT_LINES:
        return ""
    act = read(command)
    if not act.hides_exit:
        return ""
    names = act.programs | SHELLS
    for line in lines:
        signed = _SIGNED.match(line[:LINE_CAP])
        if signed and signed.group(1) in names:
            return "\n".join(line[:LINE_CAP].strip() for line in lines)
    return ""


FAILED, EMPTY = "failed", "empty"  # what a command's own words say of its acts (`own_words`)
# Programs whose failure says "no match" (`grep`'s exit 1): behind a fallback, nothing found.
_MATCHERS = frozenset(("grep", "egrep", "fgrep", "rg", "ag", "pgrep"))


def own_words(command: str, output: str) -> str:
    """What a command's whole output says when it is only its sayers' own words (metacog.
    perception.act's `says`): FAILED when a fallback's line is among them (`ls build ||
    echo "No build directory"` printing only that: the act before it failed), EMPTY when the
    act that failed was a search (`lsof -i :80 | grep LISTEN || echo "Nothing listening"`:
    no match), or when questions printed nothing but what is printed whatever they did
    (`…; echo "Scan complete"` and only that); '' when anything else was printed, or the
    command says nothing of its own."""
    act = read(command)
    if not act.says:
        return ""
    lines = [said(line) for line in output[-SCAN_CAP:].splitlines() if line.strip()]
    when = act.heard()
    if not lines or any(line not in when for line in lines):
        return ""  # something the world said
    if any(when[line] == {ELSE} for line in lines):
        searched = act.acts and all(pipe[-1] in _MATCHERS for pipe in act.acts)
        return EMPTY if searched else FAILED
    if act.writes or act.background or not all(ALWAYS in when[line] for line in lines):
        return ""
    # Only questions asked (each pipeline reads or looks for something): what they printed
    # was nothing. A command that does something (`kill 42; echo done`) prints nothing when
    # it went well.
    asked = act.acts and all(any(p in QUESTIONS for p in pipe) for pipe in act.acts)
    return EMPTY if asked else ""


def hidden_failure(tool: str, tool_input: dict, response: object) -> str:
    """The failure a successful-looking result reports ('' for none): a background shell's
    non-zero exit or failed status, or a test, build or lint run whose output says it failed
    or timed out. Readers of text (grep, cat, git log) are never judged by what they print."""
    if not isinstance(response, dict):
        return ""
    stdout, stderr = response.get("stdout"), response.get("stderr")
    output = "\n".join(v for v in (stdout, stderr) if isinstance(v, str))[-SCAN_CAP:]
    if tool in DELEGATING_TOOLS:
        # A subagent whose whole answer is an API error did not do the work (`API Error:
        # Claude's response exceeded the 8000 output token maximum`): the call failed.
        said = _answer(response).lstrip()[:LINE_CAP]
        return said.split("\n", 1)[0] if _API_ERROR.match(said) else ""
    if tool in POLLING_TOOLS:
        # BashOutput reports the shell at the top; TaskOutput nests the task it retrieved
        # (`{retrieval_status, task: {status, exitCode, output}}`, in the shared transcripts).
        task = response.get("task")
        if isinstance(task, dict):
            response = task
            said = response.get("output")
            output = said[-SCAN_CAP:] if isinstance(said, str) else ""
        code, status = response.get("exitCode"), response.get("status")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return f"Exit code {code}\n{output}"
        return f"{status}\n{output}" if status in ("failed", "error") else ""
    if tool != "Bash" or response.get("interrupted") is True:
        return ""
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return ""
    said = complaint(command, output)
    if not said and own_words(command, output) == FAILED:
        # Only a fallback's own words (`ls build 2>/dev/null || echo "No build directory"`):
        # the act before it failed, whatever exit status the fallback left.
        said = output.strip()
    if said or first_word(command) in READERS or not _RUNNERS.search(command[:500]):
        return said
    return _runner_failure(output)


def _runner_failure(output: str) -> str:
    """The lines of a test, build or lint run's output that say it failed ('' for none)."""
    said, counted, none = [], False, False
    for line in output.splitlines():
        line = line[:LINE_CAP]
        if _COUNTED.match(line):
            counted = True
        elif _NONE_FAILED.match(line):
            none = True  # the runner's own count: nothing failed
        elif line[:1] in (" ", "\t"):
            continue  # a test's own name or log, indented under the runner's lines
        elif not (
            _HIDDEN.match(line)
            or (line[:1] == "=" and line.endswith("=") and _SUMMARY.search(line))
            or _RAISED.match(line)
        ):
            continue
        said.append(line.strip())
        if len(said) >= HIDDEN_LINES:
            break
    # An exception alone may be what a passing run logs on purpose; with a runner's count
    # of failures, or beside its own failure lines, it is what failed. A run whose runner
    # counted no failure passed, whatever its tests logged (`error: Item 3 failed` from a test
    # of error handling, above bun's `1226 pass / 0 fail`).
    if not counted and (none or all(_RAISED.match(line) for line in said)):
        return ""
    return "\n".join(said)
