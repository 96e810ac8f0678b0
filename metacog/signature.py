"""Short normalized error signatures: what identifies an error, minus what varies.

Two runs of the same failure differ in timestamps, addresses, temp paths, pids and
durations; two different failures differ in type, message, file or line. A signature
keeps the second kind and drops the first, so "the same error again" is string
equality. Only this signature is ever stored, never the raw error output.
"""

from __future__ import annotations

import re

CAP = 160

_DROP = (
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(\.\d+)?\b"), "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<addr>"),
    (re.compile(r"(/private)?(/tmp|/var/folders|/var/tmp|/temp)/[^\s:'\"]*", re.I), "<tmp>"),
    (re.compile(r"\b(pid|process|thread)[ =:#]*\d+\b", re.I), r"\1 <n>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s|sec|seconds|µs|us|ns|m)\b"), "<dur>"),
    (re.compile(r"\b[0-9a-f]{12,}\b", re.I), "<hex>"),
)
_NOISE = re.compile(
    r"^(exit code \d+|traceback \(most recent call last\):|during handling of the above.*|"
    r"the above exception was the direct cause.*|\s*\^+\s*|\s*~+\s*|npm err! a complete log.*|"
    r"command failed.*)$",
    re.I,
)
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_ERROR_LINE = re.compile(r"(error|exception|fail|fatal|panic|denied|not found|no such|cannot|undefined|invalid)", re.I)
_EXIT = re.compile(r"^exit code (\d+)", re.I)
# Test runners: the failing test's name identifies the failure better than the banner.
_TEST_FAIL = re.compile(r"^(FAILED|ERROR|FAIL|--- FAIL:|not ok)\b")
_BANNER = re.compile(r"^(=+|-+|_+)[^=_-]*(=+|-+|_+)$|^(platform|rootdir|plugins|cachedir|collecting|collected) ", re.I)


def _clean(line: str) -> str:
    for pattern, repl in _DROP:
        line = pattern.sub(repl, line)
    return " ".join(line.split())


def signature(error: str) -> str:
    """A one-line signature of at most CAP characters for an error text."""
    error = error[:20000].replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    lines = [ln for ln in error.splitlines() if ln.strip()]
    exit_code = ""
    if lines and (m := _EXIT.match(lines[0].strip())):
        exit_code = f"exit {m.group(1)}"
    frames = [m for ln in lines if (m := _FRAME.match(ln))]
    body = [ln for ln in lines if not _NOISE.match(ln.strip()) and not _FRAME.match(ln)]
    failing_tests = [ln for ln in body if _TEST_FAIL.match(ln.strip())]
    if failing_tests:
        body = failing_tests
    else:
        body = [ln for ln in body if not _BANNER.match(ln.strip())] or body
    if frames:
        # A Python traceback: the exception line and the innermost frame identify it.
        path, lineno = frames[-1].group(1), frames[-1].group(2)
        where = f"{_clean(path.rsplit('/', 1)[-1])}:{lineno}"
        last = _clean(body[-1]) if body else ""
        parts = [last, where]
    else:
        flagged = [ln for ln in body if _ERROR_LINE.search(ln)]
        chosen = (flagged or body)[:2]
        parts = [_clean(ln) for ln in chosen]
    if exit_code:
        parts.append(exit_code)
    sig = " | ".join(p for p in parts if p) or "error"
    return sig[:CAP]


_WHERE = re.compile(r"(\S*[/\\])?[\w.-]+\.\w+(:\d+)+:?|\bline \d+\b|:\d+(:\d+)?\b|\b\d+\b")


def kind(sig: str) -> str:
    """The error without its place: the same kind of error at a new file or line.

    "a.go:283:36: response body must be closed (bodyclose)" and the same at b.go:104
    share a kind; fixing them one run at a time is what `kind` lets Nociception see.
    """
    head = sig.split(" | ", 1)[0]
    return " ".join(_WHERE.sub(" ", head).split())[:80]
