"""Short normalized error signatures: what identifies an error, minus what varies.

Two runs of the same failure differ in timestamps, addresses, temp paths, pids and
durations; two different failures differ in type, message, file or line. A signature
keeps the second kind and drops the first, so "the same error again" is string
equality. Only this signature is ever stored, never the raw error output.

This runs in the hook after every failed tool call, so it imports nothing: `import re`
alone costs ~13 ms (it pulls `enum`), most of a bare interpreter start. The scanners
below are plain string methods; each docstring gives the regular expression it stands for
(`\\b` is a word boundary, word characters being those `str.isalnum()` accepts and `_`).
"""

from __future__ import annotations

CAP = 160

_HEX = frozenset("0123456789abcdefABCDEF")
# Durations: a number, at most one space, a unit ending at a word boundary.
_UNITS = ("ms", "s", "sec", "seconds", "µs", "μs", "us", "ns", "m")  # micro sign and Greek mu
_TMP_ROOTS = ("/tmp/", "/var/folders/", "/var/tmp/", "/temp/")  # case-insensitive, maybe under /private
_PATH_STOP = frozenset(" :'\"")  # a temp path ends here, so a `file:line` after it survives
_COUNTED = ("pid", "process", "thread")
_NOISE_PREFIXES = ("during handling of the above", "the above exception was the direct cause",
                   "npm err! a complete log", "command failed")
_ERROR_WORDS = ("error", "exception", "fail", "fatal", "panic", "denied", "not found", "no such", "cannot",
                "undefined", "invalid")
_TEST_FAIL = ("FAILED", "ERROR", "FAIL", "not ok")  # case-sensitive, then a word boundary
_BANNER_PREFIXES = ("platform ", "rootdir ", "plugins ", "cachedir ", "collecting ", "collected ")


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _ends_word(s: str, k: int) -> bool:
    """A word boundary at k, s[k - 1] being a word character."""
    return k >= len(s) or not _word(s[k])


def _digits(s: str, i: int) -> int:
    """The end of the run of decimal digits (`\\d*`) starting at i."""
    n = len(s)
    while i < n and s[i].isdecimal():
        i += 1
    return i


def _fixed(s: str, i: int, width: int) -> bool:
    """`\\d{width}` at i."""
    part = s[i:i + width]
    return len(part) == width and part.isdecimal()


def _hex_run(s: str, i: int, stop: int) -> int:
    stop = min(stop, len(s))
    while i < stop and s[i] in _HEX:
        i += 1
    return i


def _iso_end(s: str, i: int) -> int:
    r"""`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?(Z|[+-]\d{2}:?\d{2})?` at i, or -1.

    A comma before the fraction too: Python's logging writes "2026-01-01 10:00:00,123".
    """
    if not (_fixed(s, i, 4) and s[i + 4:i + 5] == "-" and _fixed(s, i + 5, 2) and s[i + 7:i + 8] == "-"
            and _fixed(s, i + 8, 2) and s[i + 10:i + 11] in ("T", " ") and _fixed(s, i + 11, 2)
            and s[i + 13:i + 14] == ":" and _fixed(s, i + 14, 2)):
        return -1
    j = i + 16
    if s[j:j + 1] == ":" and _fixed(s, j + 1, 2):
        j += 3
        if s[j:j + 1] in (".", ",") and s[j + 1:j + 2].isdecimal():
            j = _digits(s, j + 1)
    zone = s[j:j + 1]
    if zone == "Z":
        j += 1
    elif zone in ("+", "-") and _fixed(s, j + 1, 2):
        if s[j + 3:j + 4] == ":" and _fixed(s, j + 4, 2):
            j += 6
        elif _fixed(s, j + 3, 2):
            j += 5
    return j


def _clock_end(s: str, i: int) -> int:
    r"""`\d{2}:\d{2}:\d{2}([.,]\d+)?\b` at i, or -1."""
    if not (_fixed(s, i, 2) and s[i + 2:i + 3] == ":" and _fixed(s, i + 3, 2) and s[i + 5:i + 6] == ":"
            and _fixed(s, i + 6, 2)):
        return -1
    j = i + 8
    if s[j:j + 1] in (".", ",") and s[j + 1:j + 2].isdecimal() and _iso_end(s, j + 1) < 0:  # dates first
        k = _digits(s, j + 1)
        if _ends_word(s, k):
            return k
    return j if _ends_word(s, j) else -1


def _time_end(s: str, i: int) -> int:
    end = _iso_end(s, i)
    return end if end >= 0 else _clock_end(s, i)


def _uuid_end(s: str, i: int) -> int:
    r"""`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b` (any case) at i, or -1."""
    for width in (8, 4, 4, 4):
        end = _hex_run(s, i, i + width + 1)
        if end - i != width or s[end:end + 1] != "-":
            return -1
        i = end + 1
    end = _hex_run(s, i, i + 13)
    return end if end - i == 12 and _ends_word(s, end) else -1


def _addr_end(s: str, i: int) -> int:
    r"""`0x[0-9a-f]+\b` (any case) at i, or -1."""
    if s[i] != "0" or s[i + 1:i + 2] not in ("x", "X"):
        return -1
    end = _hex_run(s, i + 2, len(s))
    return end if end > i + 2 and _ends_word(s, end) else -1


def _tmp_end(s: str, i: int) -> int:
    r"""`(/private)?(/tmp|/var/folders|/var/tmp|/temp)/[^\s:'"]*` (any case) at i, or -1.

    Clock times inside the path do not end it (their `:` would otherwise leave the seconds).
    """
    head = s[i:i + 24].lower()
    start = 8 if head.startswith("/private") else 0
    root = next((r for r in _TMP_ROOTS if head.startswith(r, start)), "")
    if not root:
        return -1
    n, k = len(s), i + start + len(root)
    stop = n
    for c in _PATH_STOP:
        if (j := s.find(c, k, stop)) >= 0:
            stop = j
    if stop == n or not (s[stop - 1].isdecimal() and s[stop + 1:stop + 2].isdecimal()):
        return stop  # no time around the first `:` or space (a quote ends any time): the usual case
    after_word = glued = False
    while k < n and s[k] not in _PATH_STOP:
        if not after_word and s[k].isdecimal() and (
                (end := -1 if glued else _iso_end(s, k)) >= 0 or (end := _clock_end(s, k)) >= 0):
            after_word, glued, k = False, _word(s[end - 1]), end
        else:
            after_word, glued, k = _word(s[k]), False, k + 1
    return k


def _counted_end(s: str, i: int) -> tuple[int, int]:
    r"""`(pid|process|thread)[ =:#]*\d+\b` (any case) at i: (end, length of the word), or (-1, 0)."""
    head = s[i:i + 7].lower()
    word = next((w for w in _COUNTED if head.startswith(w)), "")
    if not word:
        return -1, 0
    j, n = i + len(word), len(s)
    while j < n and s[j] in " =:#":
        j += 1
    if not s[j:j + 1].isdecimal() or (j > i + len(word) and _time_end(s, j) >= 0):
        return -1, 0  # "thread 12:00:01" is a time, not a thread number
    end = _digits(s, j)
    return (end, len(word)) if _ends_word(s, end) else (-1, 0)


def _duration_end(s: str, i: int) -> int:
    r"""`\d+(\.\d+)?\s?(ms|s|sec|seconds|µs|us|ns|m)\b` at i, or -1."""
    j = _digits(s, i)
    if s[j:j + 1] == "." and s[j + 1:j + 2].isdecimal():
        j = _digits(s, j + 1)
    if s[j:j + 1] == " ":
        j += 1
    for unit in _UNITS:
        if s.startswith(unit, j) and _ends_word(s, j + len(unit)):
            return j + len(unit)
    return -1


def _hex_end(s: str, i: int) -> int:
    r"""`[0-9a-f]{12,}\b` (any case) at i, or -1."""
    end = _hex_run(s, i, len(s))
    return end if end - i >= 12 and _ends_word(s, end) else -1


def _clean(line: str, limit: int = CAP) -> str:
    """The line with what varies between identical failures replaced, whitespace collapsed.

    One left-to-right pass; stops once more than `limit` characters are out (callers cut
    at CAP), so a 20,000-character line costs no more than a short one.
    """
    s = " ".join(line.split())
    out: list[str] = []
    size, i, n = 0, 0, len(s)
    after_word = False  # `\b` before i: judged on what was written, as a replacement ends a word
    glued = False  # i follows a date ending in a word character: no second date there
    while i < n and size <= limit:
        c = s[i]
        end, rep = -1, ""
        if c == "/":
            end, rep = _tmp_end(s, i), "<tmp>"
        elif not after_word:
            if c.isdecimal():
                if (end := -1 if glued else _iso_end(s, i)) >= 0 or (end := _clock_end(s, i)) >= 0:
                    rep = "<time>"
                elif (end := _uuid_end(s, i)) >= 0:
                    rep = "<uuid>"
                elif (end := _addr_end(s, i)) >= 0:
                    rep = "<addr>"
                elif (end := _duration_end(s, i)) >= 0:
                    rep = "<dur>"
                elif (end := _hex_end(s, i)) >= 0:
                    rep = "<hex>"
            elif c in _HEX:
                if (end := _uuid_end(s, i)) >= 0:
                    rep = "<uuid>"
                elif (end := _hex_end(s, i)) >= 0:
                    rep = "<hex>"
            elif c in "pPtT":
                end, length = _counted_end(s, i)
                rep = s[i:i + length] + " <n>"
        if end < 0:
            out.append(c)
            size += 1
            after_word, glued = _word(c), False
            i += 1
        else:
            out.append(rep)
            size += len(rep)
            after_word, glued = False, rep == "<time>" and _word(s[end - 1])
            i = end
    return "".join(out)


def _exit_code(line: str) -> str:
    r"""The code of `^exit code (\d+)` (any case) on a stripped line, or ""."""
    if line[:10].lower() != "exit code ":
        return ""
    return line[10:_digits(line, 10)]


def _frame(line: str) -> tuple[str, str] | None:
    r"""(path, line number) of `^\s*File "([^"]+)", line (\d+)`, or None."""
    t = line.lstrip()
    if not t.startswith('File "'):
        return None
    quote = t.find('"', 6)
    if quote <= 6 or not t.startswith('", line ', quote):
        return None
    end = _digits(t, quote + 8)
    return (t[6:quote], t[quote + 8:end]) if end > quote + 8 else None


def _noise(t: str) -> bool:
    """Exit-code and traceback headers, chained-exception notes, caret/tilde markers, npm's log pointer."""
    low = t.lower()
    return (low == "traceback (most recent call last):" or low.startswith(_NOISE_PREFIXES)
            or (t[:10].lower() == "exit code " and t[10:].isdecimal())
            or not t.strip("^") or not t.strip("~"))


def _test_failure(t: str) -> bool:
    """A test runner's line naming a failing test: pytest FAILED/ERROR, go `--- FAIL:`, TAP `not ok`."""
    if t[:1] not in ("F", "E", "n", "-"):
        return False
    if t.startswith("--- FAIL:"):
        return True
    return any(t.startswith(p) and (len(t) == len(p) or not _word(t[len(p)])) for p in _TEST_FAIL)


def _banner(t: str) -> bool:
    r"""`^(=+|-+|_+)[^=_-]*(=+|-+|_+)$|^(platform|rootdir|plugins|cachedir|collecting|collected) ` (any case)."""
    first = t[:1]
    if first and first in "=-_":
        rest = t.lstrip(first)
        if not rest:
            return len(t) >= 2
        last = rest[-1]
        middle = rest.rstrip(last)
        return last in "=-_" and "=" not in middle and "-" not in middle and "_" not in middle
    return t[:11].lower().startswith(_BANNER_PREFIXES)


def signature(error: str) -> str:
    """A one-line signature of at most CAP characters for an error text."""
    error = error[:20000].replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    lines = [ln for ln in error.splitlines() if ln.strip()]
    code = _exit_code(lines[0].strip()) if lines else ""
    frames: list[tuple[str, str]] = []
    body: list[str] = []
    for ln in lines:
        if frame := _frame(ln):
            frames.append(frame)
        elif not _noise(ln.strip()):
            body.append(ln)
    failing_tests = [ln for ln in body if _test_failure(ln.strip())]
    # jest: `FAIL <file>` names only the file, the same for every different failure inside
    # it; the first `● Suite › test` line names the failing test.
    bullets = [ln for ln in body if ln.strip().startswith("● ")]
    if bullets:
        parts = [_clean(ln) for ln in failing_tests[:1] + bullets[:1]]
        if code:
            parts.append(f"exit {code}")
        return " | ".join(parts)[:CAP]
    if failing_tests:
        # Test runners: the failing test's name identifies the failure better than the banner.
        body = failing_tests
    else:
        body = [ln for ln in body if not _banner(ln.strip())] or body
    if frames:
        # A Python traceback: the exception line and the innermost frame identify it.
        path, lineno = frames[-1]
        where = f"{_clean(path.rsplit('/', 1)[-1])}:{lineno}"
        last = _clean(body[-1]) if body else ""
        parts = [last, where]
    else:
        flagged = [ln for ln in body if any(w in ln.lower() for w in _ERROR_WORDS)]
        parts = [_clean(ln) for ln in (flagged or body)[:2]]
    if code:
        parts.append(f"exit {code}")
    sig = " | ".join(p for p in parts if p) or "error"
    return sig[:CAP]


def _name_end(s: str, i: int) -> int:
    r"""`[\w.-]+\.\w+(:\d+)+:?` at i (a file name with an extension and `:line[:col]`), or -1."""
    n, end = len(s), i
    while end < n and (_word(s[end]) or s[end] in ".-"):
        end += 1
    dot = s.rfind(".", i, end)
    if dot <= i or dot == end - 1 or "-" in s[dot + 1:end]:
        return -1
    if s[end:end + 1] != ":" or not s[end + 1:end + 2].isdecimal():
        return -1
    while s[end:end + 1] == ":" and s[end + 1:end + 2].isdecimal():
        end = _digits(s, end + 1)
    return end + 1 if s[end:end + 1] == ":" else end


def _path_end(s: str, i: int) -> int:
    r"""`\S*[/\\]` then a file name with `:line` (`_name_end`) at i, the last such slash first, or -1."""
    stop = i
    while stop < len(s) and not s[stop].isspace():
        stop += 1
    for slash in range(stop - 1, i - 1, -1):
        if s[slash] in "/\\" and (end := _name_end(s, slash + 1)) >= 0:
            return end
    return -1


def _place_end(s: str, i: int, fresh: bool) -> int:
    r"""Where a place starting at i ends, or -1: `(\S*[/\\])?[\w.-]+\.\w+(:\d+)+:?|\bline \d+\b|:\d+(:\d+)?\b|\b\d+\b`.

    `fresh`: i starts a token, or follows a replaced place. Elsewhere the path and file
    name forms cannot start where they failed one character before.
    """
    c, before = s[i], s[i - 1] if i else " "
    if (fresh or before.isspace()) and (end := _path_end(s, i)) >= 0:
        return end
    name_start = fresh or not (_word(before) or before in ".-")
    if name_start and (_word(c) or c in ".-") and (end := _name_end(s, i)) >= 0:
        return end
    boundary = not _word(before)
    if boundary and s.startswith("line ", i):
        end = _digits(s, i + 5)
        if end > i + 5 and _ends_word(s, end):
            return end
    if c == ":":
        end = _digits(s, i + 1)
        if end > i + 1:
            if s[end:end + 1] == ":" and (second := _digits(s, end + 1)) > end + 1 and _ends_word(s, second):
                return second
            if _ends_word(s, end):
                return end
    if boundary and c.isdecimal():
        end = _digits(s, i)
        if _ends_word(s, end):
            return end
    return -1


def kind(sig: str) -> str:
    """The error without its place: the same kind of error at a new file or line.

    "a.go:283:36: response body must be closed (bodyclose)" and the same at b.go:104
    share a kind; fixing them one run at a time is what `kind` lets Nociception see.
    """
    head = sig.split(" | ", 1)[0]
    out: list[str] = []
    i, n, fresh = 0, len(head), True
    while i < n:
        end = _place_end(head, i, fresh)
        if end > i:
            out.append(" ")
            i, fresh = end, True
        else:
            out.append(head[i])
            i, fresh = i + 1, False
    return " ".join("".join(out).split())[:80]
