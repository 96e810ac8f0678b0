"""Short normalized error signatures: what identifies an error, minus what varies.

Two runs of the same failure differ in timestamps, addresses, temp paths, pids and
durations; two different failures differ in type, message, file or line. A signature
keeps the second kind and drops the first, so "the same error again" is string
equality. Only this signature is ever stored, never the raw error output.

Why each normalization: loggers and test runners stamp times on their lines; ASLR
moves every address; pytest's tmp_path, mktemp, go-build and macOS's /var/folders
give each run a new temp folder; pids, thread ids, request ids (UUIDs) and container
or object ids (long hex) are new per run; a content hash (a store path's `1gjn…xiz3`:
twenty letters of one case and digits or more, four digits at least) is new with every
change of what it hashes, while the name beside it stays; durations jitter. Exit-code and traceback
headers, chained-exception notes, caret markers and session banners are on every
failure alike, so they identify nothing; a test runner's FAILED line names the test,
which does. Claude Code wraps some of its own errors in <tool_use_error> tags and not
others.

The patterns are compiled once per process (the resident keeps them). Error text is
tool output, 20,000 characters of anything, so each pattern is written to take time
linear in its input: the comments say why.
"""

from __future__ import annotations

import re

from metacog.perception.tools import untagged

CAP = 160
_INPUT_CAP = 20000

# `\w` and `\d` are Unicode-aware, as str.isalnum()/isdecimal() are; the words are
# matched ASCII-only (`(?ai:`): `re.I` would also take "ſ" for "s" and "K" for "k".
_ISO_HEAD = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d"
# A comma before the fraction too: Python's logging writes "2026-01-01 10:00:00,123".
_ISO = _ISO_HEAD + r"(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
# A fraction that starts a date is the date's ("10:00:00.2026-01-01 ...").
_CLOCK = rf"\d\d:\d\d:\d\d(?:[.,](?!{_ISO_HEAD})\d+(?!\w))?(?!\w)"
_TIME = f"(?:{_ISO}|{_CLOCK})"
_HEX = "[0-9a-fA-F]"
# Linear: every token but a temp path starts only where the text has no word character
# before it, so a run of word characters is scanned from its start only, by a fixed number
# of alternatives; the fixed-width parts cost a constant; each digit, hex or separator run
# is followed by something no character of the run can be, so backing off it only fails.
# A temp path fails at its root in a constant, or is one greedy loop that ends the match
# when it stops (nothing follows it to backtrack for); a time inside the path does not end
# it at its `:`, so "/tmp/x-10:00:01/f" goes whole. The temp path's `/` comes first, not
# inside an optional `(?:/private)?`: that optional group is entered at every position of
# the text (a quarter of the pattern's cost on the transcripts' Bash outputs), a literal
# fails at once.
_VOLATILE = re.compile(
    rf"""(?P<tmp>/(?ai:(?:private/)?(?:tmp|var/folders|var/tmp|temp)/)(?:(?<!\w){_TIME}|[^ :'"])*)"""
    rf"|(?<!\w)(?:(?P<time>{_TIME})"
    rf"|(?P<uuid>{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}(?!\w))"
    rf"|(?P<addr>0[xX]{_HEX}+(?!\w))"
    r"|(?P<dur>\d+(?:\.\d+)? ?(?:ms|s|sec|seconds|µs|μs|us|ns|m)(?!\w))"  # micro sign and Greek mu
    rf"|(?P<hex>{_HEX}{{12,}}(?!\w))"
    # A content hash: 20 or more letters of one case and digits, 4 digits at least (a Nix
    # store path's base32 holds about 10 in 32). A name mixes cases (`OAuth2Authentication
    # Provider`, `S3BucketNotFoundException`) or holds a digit or two: it stays. Each
    # lookahead stops at its fourth digit or first letter; the run backs off only where a
    # character of the other case or a `_` follows it, once.
    r"|(?P<hash>(?=(?:[a-z]*[0-9]){4})(?=[0-9]*[a-z])[0-9a-z]{20,}(?!\w)"
    r"|(?=(?:[A-Z]*[0-9]){4})(?=[0-9]*[A-Z])[0-9A-Z]{20,}(?!\w))"
    # "thread 12:00:01" is a time, not a thread number.
    rf"|(?P<n>(?ai:pid|process|thread))(?:[ =:#]+(?!{_ISO_HEAD}|\d\d:\d\d:\d\d(?!\w)))?\d+(?!\w))"
    # Node's own lines say which process printed them: `(node:91256) [DEP0040] Warning: …`.
    r"|(?<=\(node:)(?P<pid>\d+)(?=\))"
)

# What every _VOLATILE match contains, as one pattern that starts with a character class:
# `re` tries the rest only where the class matches, not the whole pattern at every
# position. A temp path has `/`, a root word and `/`; a time `\d:\d`; a duration a digit
# and a unit's first letter; an address `0x`; a uuid (its last part) or a hex run 12 hex
# digits; a pid its word, separators and a digit, or Node's `(node:` and a digit. Linear:
# after its first character each alternative is fixed-width but the separator run, which
# one character (a digit) ends and which only the word just before it starts. `\d` is every
# script's digits, a lookup per character that doubles the scan of ASCII text, where it is
# 0-9.
_MAY_VARY_ANY = (
    r"[/{D}a-fA-FpPtT](?:(?<=/)(?ai:tmp|var|temp)/"
    r"|(?<=[{D}])(?: ?[smun\u00b5\u03bc]|:[{D}]|(?<=0)[xX])"
    rf"|(?<={_HEX}){_HEX}{{{{11}}}}"
    r"|(?<=[pP])(?ai:id|rocess)[ =:#]*[{D}]|(?<=[tT])(?ai:hread)[ =:#]*[{D}]|(?<=\(node):[{D}])"
)
# Compiling one costs 0.3 ms, paid by every direct hook process that checks a Bash result:
# the one for other scripts is compiled on first use (re's own cache keeps it).
_MAY_VARY = _MAY_VARY_ANY.format(D=r"\d")
_MAY_VARY_ASCII = re.compile(_MAY_VARY_ANY.format(D="0-9"))

# Each is matched once per line from its start (`match`), or searched for words that
# fail in a constant (`_ERROR_WORD`); each loop is a run that one character ends, and
# `\Z` alternatives back off a single run.
_EXIT = re.compile(r"(?ai:exit code )(\d*)")
_FRAME = re.compile(r'\s*File "([^"]+)", line (\d+)')
_NOISE = re.compile(  # on the lowered, stripped line
    r"traceback \(most recent call last\):\Z|during handling of the above|the above exception was the direct cause"
    r"|npm err! a complete log|command failed|exit code \d+\Z|\^+\Z|~+\Z"
)
_TEST_FAILURE = re.compile(r"--- FAIL:|(?:FAILED|ERROR|FAIL|not ok)(?!\w)")  # pytest, go, TAP
# `(=+|-+|_+)[^=_-]*(=+|-+|_+)$` backs off one run into the other, quadratic on a line
# of 20,000 "=": here the first run is whole (`(?!=)`) and one run alone is its own case.
_BANNER = re.compile(  # on the lowered, stripped line
    r"(?:==+|--+|__+)\Z|(?:=+(?!=)|-+(?!-)|_+(?!_))[^=_-]*(?:=+|-+|_+)\Z"
    r"|(?:platform|rootdir|plugins|cachedir|collecting|collected) "
)
_ERROR_WORD = re.compile(
    "error|exception|fail|fatal|panic|denied|not found|no such|cannot|undefined|invalid"
)


def _tag(m: re.Match[str]) -> str:
    return f"{m['n']} <n>" if m.lastgroup == "n" else f"<{m.lastgroup}>"


# What a content hash holds, which _MAY_VARY cannot say: 20 letters or digits in a row, and
# 4 digits (0-9) in the line. A long word with fewer digits (an identifier, a rule of `x`, a
# generated output) skips the substitution, a fifth of a replay of bench_report's history
# (its 3,500-character outputs paid it whole, 230 us a call). The digits are counted in the
# line's UTF-8, where no other character has a byte of 0-9: 5 us for 3,500 characters, a
# pattern that counts them 12 to 46 us (measured).
_LONG = re.compile(r"[0-9a-zA-Z]{20}")
_NOT_DIGITS = bytes(b for b in range(256) if not 0x30 <= b <= 0x39)


def _four_digits(line: str) -> bool:
    return len(line.encode("utf-8", "surrogatepass").translate(None, _NOT_DIGITS)) >= 4


def clean(line: str) -> str:
    """The line with what varies between identical failures replaced, whitespace collapsed."""
    line = " ".join(line.split())
    may_vary = _MAY_VARY_ASCII.search(line) if line.isascii() else re.search(_MAY_VARY, line)
    may_vary = may_vary or (_LONG.search(line) and _four_digits(line))
    return _VOLATILE.sub(_tag, line) if may_vary else line


def signature(error: str) -> str:
    """A one-line signature of at most CAP characters for an error text."""
    error = untagged(error[:_INPUT_CAP])
    lines = [ln for ln in error.splitlines() if ln.strip()]
    code = m[1] if lines and (m := _EXIT.match(lines[0].strip())) else ""
    frames: list[re.Match[str]] = []
    body: list[str] = []
    for ln in lines:
        if frame := _FRAME.match(ln):
            frames.append(frame)
        elif not _NOISE.match(ln.strip().lower()):
            body.append(ln)
    failing_tests = [ln for ln in body if _TEST_FAILURE.match(ln.strip())]
    # jest: `FAIL <file>` names only the file, the same for every different failure inside
    # it; the first `● Suite › test` line names the failing test.
    bullets = [ln for ln in body if ln.strip().startswith("● ")]
    if bullets:
        parts = [clean(ln) for ln in failing_tests[:1] + bullets[:1]]
        if code:
            parts.append(f"exit {code}")
        return " | ".join(parts)[:CAP]
    if failing_tests:
        # Test runners: the failing test's name identifies the failure better than the banner.
        body = failing_tests
    else:
        body = [ln for ln in body if not _BANNER.match(ln.strip().lower())] or body
    if frames:
        # A Python traceback: the exception line and the innermost frame identify it.
        path, lineno = frames[-1].groups()
        parts = [clean(body[-1]) if body else "", f"{clean(path.rsplit('/', 1)[-1])}:{lineno}"]
    else:
        flagged = [ln for ln in body if _ERROR_WORD.search(ln.lower())]
        parts = [clean(ln) for ln in (flagged or body)[:2]]
    if code:
        parts.append(f"exit {code}")
    return " | ".join(p for p in parts if p)[:CAP] or "error"


# A place: `file.ext:line[:col]` after any path, `line N`, `:N[:M]`, a bare number.
# The name's extension is its last dot's (no `-` in it), with something before the dot.
_NAME = r"(?=[\w-]|\.[\w-]*\.)(?:[\w-]*\.)+\w+(?::\d+)+:?"
_PATH = rf"\S*[/\\]{_NAME}"  # the last slash whose name has a line: `\S*` backs off from the right
_SPOT = r"(?<!\w)line \d+(?!\w)|:\d+(?::\d+(?!\w)|(?!\w))|(?<!\w)\d+(?!\w)"
# A path starts a token and a name starts a run of name characters, except right after
# another place, where both may start anywhere: the places that follow one are taken
# into the same match (they would become one space anyway).
# Quadratic at worst: a path is looked for from each place to the end of its token;
# `kind` reads at most CAP characters, so that is bounded.
_PLACES = re.compile(rf"(?:(?<!\S){_PATH}|(?<![\w.-]){_NAME}|{_SPOT})(?:{_PATH}|{_NAME}|{_SPOT})*")


def kind(sig: str) -> str:
    """The error without its place: the same kind of error at a new file or line.

    "a.go:283:36: response body must be closed (bodyclose)" and the same at b.go:104
    share a kind; fixing them one run at a time is what `kind` lets Nociception see.
    """
    head = sig.split(" | ", 1)[0][:CAP]  # a signature is never longer
    return " ".join(_PLACES.sub(" ", head).split())[:80]
