"""What a failure says is wrong: the lines that name a problem, and the agent's own mistakes.

A failed build prints a banner ("Failed to compile.", "FAIL pkg [build failed]", "exit
code 1") that is the same whatever broke; the lines that say *what* broke are the
diagnostics ("a.go:12:3: undefined: x", "FAILED test_a.py::test_b - AssertionError").
Two failures are the same problem when a diagnostic comes back, not when the banner
does: that is what tells a loop from compile errors fixed one after another (issue 11,
class 7). Each problem is kept as its kind (metacog.perception.signature.kind: no file, line or
time), so the same lint finding at the next call site is the same problem again.

`mistake` names the refusals Claude Code itself gives (an Edit before a Read, a blocked
command): each says the agent did something it has done before, on whatever file.
"""

from __future__ import annotations

import re
import zlib

from metacog.perception.signature import clean, kind
from metacog.perception.tools import FILE_TOOLS, untagged

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call

PROBLEMS_CAP = 12  # problems read per failure (felt by the senses; the window keeps none)
PROBLEM_CAP = 80  # characters per problem
SCAN_CAP = 20000  # characters of an error scanned, head and tail
# An error line says what it is early ("Error: …", "grep: x: No such file or directory"); an
# "error" 200 characters into a line is prose or a wizard's prompt echoed back.
WORD_REACH = 120
LINE_CAP = 400  # characters of one line looked at (a problem keeps PROBLEM_CAP of them)

# A diagnostic names its place first: `path/file.ext:12:3: message`, `file.py:4 - error: …`.
_PLACED = re.compile(r"^\s*\S*\.\w+:\d+(?::\d+)?(?::|\s+-)\s*\S")
# A linter's rule code at the margin (`ANN401 Dynamically typed …`, `W292 No newline …`,
# `SC2086`): a diagnostic whatever words follow, so no vocabulary of error words is needed.
_CODED = re.compile(r"[A-Z][A-Z0-9]{0,5}\d{2,5}\b(?! *[:=|/])")
_WORDS = re.compile(
    r"error|exception|fail|fatal|panic|denied|not found|no such|cannot|can't|couldn't|"
    r"undefined|invalid|unknown|missing|refused|forbidden|unauthori[sz]ed|timed? ?out|"
    r"not (?:defined|allowed|permitted|a |an )|(?:http|status|code)[ /:]*[45]\d\d\b",
    re.I,
)
_LOG = re.compile(
    r"(?:time=\S+ |\[?\d{4}-\d\d-\d\d[T ][\d:.,]+\S*\]? |\d\d:\d\d:\d\d\S* )?(?:level=\w+|\[?(?:ERROR|WARN|INFO|DEBUG)\]?) "
)
# A path's words are not the line's: `ok  example.com/internal/errors (cached)` says nothing failed.
_PATHS = re.compile(r"\S*/\S*")
# Lines that are the same whatever failed: banners, summaries, exit statuses, log pointers.
_BANNER = re.compile(
    r"^(?:exit (?:code|status) \d+|error:? exit status \d+|process exited with code \d+"
    r"|(?:--- )?FAIL(?:ED)?:?(?:\s+\S+)?(?:\s+\[(?:build|setup) failed\]|\s+[\d.]+m?s|\s+\(cached\))?"
    r"|\[build failed\]|failed to compile\.?|build failed.*|compilation failed.*|compilation error.*"
    r"|error: builder for .* failed.*|error: \d+ dependencies of derivation .* failed to build"
    r"|make(?:\[\d+\])?: \*\*\*.*|npm err!.*|\S*elifecycle.*|error command failed.*|command failed.*"
    r"|failed executing command.*|error: process completed with exit code.*|error: recipe .* failed.*"
    r"|(?:found )?\d+ (?:errors?|problems?|issues?|failures?|failed)\b.*|errors? found.*"
    r"|\d+ failed(?:,| in).*|tests?:\s+\d+ failed.*|test suites?:\s+\d+ failed.*|failures?:$|errors?:$"
    # One run then anything then the same character: `=.*=`, linear where `=+.*=+` is cubic.
    r"|=.*=|-.*-|_.*_|!.*!|# \S+.*|traceback \(most recent call last\):"
    r"|collected \d+ items?.*|platform \S+ -- python.*|rootdir: .*|cachedir: .*|plugins: .*"
    r"|ok\s+\S+.*|(?:--- )?pass\b.*"  # a package or test that passed (go test)
    r"|during handling of the above exception.*|the above exception was the direct cause.*"
    r"|.* failed with exit code \d+|the following .* failed.*|(?:level=)?warn(?:ing)?\b.*|\(!\).*|note:.*|hint:.*|help:.*|see .* for (?:more|details).*"
    r"|\* \w+: \d+|\d+ issues?:|run '.*' (?:for|to see).*)$",
    re.I,
)


# The failing test is the problem a test run names, whatever its traceback says.
_DIRS = re.compile(r"^[^\s:]*/(?=[^\s/:]+\.\w+:\d)")  # the folders before a diagnostic's file:line
_FRAME = re.compile(r'^File "([^"]+)", line (\d+)')
# A place and the function the failure passed through there (pytest's short traceback,
# `pkg/__init__.py:90: in import_module`): where it went, not what went wrong.
_FRAME_AT = re.compile(r"^\S+:\d+: in [\w.<>]+$")
# A test runner's summary names the failing test and what failed in it: that pair is the
# problem. The same test failing with another message each run is progress (LABELS.md).
_TEST_SAID = re.compile(r"^(?:FAILED|ERROR) (\S+) - (.+)$")
# A failing test's name alone (a section header) says nothing of what is wrong.
_TEST_NAME = re.compile(
    r"^(?:_{3,} \S.*\S _{3,}|(?:FAILED|ERROR) \S+|\S+::\S+ (?:FAILED|ERROR)\b.*"
    r"|--- FAIL: \S+.*|● .+)$"
)


# How a problem of a failing test reads (`test test_login - assert 401 == 200`): the runner
# named the test that failed, and what failed in it.
FAILED_TEST = "test "


def problems(error: str) -> list[list]:
    """[kind, checksum of its first line with the place, lines of that kind, that line] for
    each distinct kind of problem an error names, in order, at most PROBLEMS_CAP: the checksum
    tells the same finding from the same kind of finding at a new place; the count, whether
    the output listed several at once.

    Failing tests with what failed in them (a runner's summary), else error lines that
    start at the margin (pytest's `E   ` explanations among them) and diagnostics that name their place (`file:12: message`); the
    rest is banner, a test's name alone, source quoted as context, or carets.
    """
    if len(error) > SCAN_CAP:
        error = error[: SCAN_CAP // 2] + "\n" + error[-SCAN_CAP // 2 :]
    error = untagged(error)
    tests, placed, flagged, logged = [], [], [], []
    frame = ""
    for line in error.splitlines():
        line = line[:LINE_CAP]  # nothing past it is used, and no pattern sees more
        bare = line.strip()
        if len(bare) < 4:
            continue
        if where := _FRAME.match(bare):
            frame = f" @ {where[1].rsplit('/', 1)[-1]}:{where[2]}"  # the innermost so far
        elif said := _TEST_SAID.match(bare):
            tests.append(f"{FAILED_TEST}{said[1].rsplit('::', 1)[-1]} - {said[2]}")
        elif _TEST_NAME.match(bare) or _BANNER.match(bare):
            continue
        elif _PLACED.match(bare):
            if not _FRAME_AT.match(bare):
                placed.append(bare)
        elif line[:1] not in (" ", "\t") and (
            line.startswith("E   ")
            or _CODED.match(bare)
            or _WORDS.search(_PATHS.sub(" ", bare[:WORD_REACH]))
        ):
            # A log record (`time=… level=ERROR msg=…`) is what the program under test said,
            # often on purpose: a problem only when nothing else names one.
            (logged if _LOG.match(bare) else flagged).append(
                bare + frame
            )  # an exception, at its innermost frame
            frame = ""
    out: dict[str, list] = {}
    for bare in tests or flagged + placed or logged:  # a tool that did not run at all first
        said = clean(bare[: PROBLEM_CAP * 4])
        sort = (
            said[:PROBLEM_CAP]
            if bare.startswith(FAILED_TEST)
            else kind(said)[:PROBLEM_CAP].strip(" -:@")
        )
        if sort in out:
            out[sort][2] += 1
        elif len(sort) >= 4 and len(out) < PROBLEMS_CAP and not _BANNER.match(sort):
            shown = _DIRS.sub("", said, 1)  # `detector.go:298:32: …`: the message, not the folders
            out[sort] = [sort, zlib.crc32(said.encode()), 1, shown[:PROBLEM_CAP]]
    # Identity by contrast: where some lines name what broke, the ones that name nothing
    # (`Test Files 1 failed | 50 passed`, `npm error`) are the summary every failure prints.
    named = [p for p in out.values() if names_something(p[3])]
    return named or list(out.values())


def is_banner(line: str) -> bool:
    """A line that is the same whatever failed ("FAIL pkg [build failed]", "exit code 1")."""
    return bool(_BANNER.match(line.strip()))


# Claude Code's own refusals and the permission system: (pattern, mistake, what to say).
MISTAKES = (
    (
        re.compile(r"file has not been read yet", re.I),
        "edit-before-read",
        "an Edit or Write of a file not Read first",
    ),
    (
        re.compile(r"string to replace not found", re.I),
        "old-string-mismatch",
        "an Edit whose old_string is not in the file (copy it from a fresh Read, whitespace included)",
    ),
    # Names its own fix (more context, or replace_all): with "not found", one mistake (an
    # old_string that does not pick out one place of the file), as a streak and as a habit.
    (
        re.compile(r"found \d+ matches of the string to replace", re.I),
        "ambiguous-old-string",
        "an Edit whose old_string matches more than once",
    ),
    (
        re.compile(r"file has been modified since read", re.I),
        "stale-read",
        "an Edit of a file changed since it was Read",
    ),
    (
        # A tool that does not exist, or whose MCP server is not connected.
        re.compile(
            r"no such tool available|mcp server ['\"]?[\w.-]*['\"]? (?:is )?not (?:found|connected)"
            r"|server ['\"]?[\w.-]+['\"]? not found",
            re.I,
        ),
        "no-such-tool",
        "a call to a tool that is not available",
    ),
    # A command that stopped to ask something no one at a terminal could answer: the words
    # a prompt's reader dies with (not a login shell's `mesg: ttyname failed: Inappropriate
    # ioctl for device`, printed on success too).
    (
        re.compile(
            r"EOF when reading a line|the input device is not a TTY|no tty present and no askpass"
            r"|Raw mode is not supported|prompts? (?:was |were )?(?:cancelled|canceled|aborted)",
            re.I,
        ),
        "needs-input",
        "a command that stopped to ask for input (pass its non-interactive flag, or pipe the answer)",
    ),
    # Claude Code's permission answers: the settings' ("Permission to use Bash has been
    # denied") and auto mode's ("Permission for this action was denied by … classifier").
    (
        re.compile(
            r"requires approval|haven't granted it yet|was blocked\. for security|"
            r"permission (?:to use|for) .* (?:has been|was) denied",
            re.I,
        ),
        "blocked",
        "a call the session's permissions do not allow",
    ),
    (
        re.compile(r"blocked by (?:a |the )?hook|hook .*\bblocked\b", re.I),
        "hook-blocked",
        "a call a hook blocks",
    ),
    (
        re.compile(r"user doesn't want to proceed|tool use was rejected", re.I),
        "rejected",
        "a call the person rejected (ask what they want instead of trying another way)",
    ),
    # A command that does not return: a server in the foreground, a prompt waiting for input.
    (
        re.compile(r"^(?:error: )?command timed out after", re.I | re.M),
        "hung",
        "a command that did not return (a server or a prompt waiting for input? run it in the "
        "background, or pass the flag that answers the prompt)",
    ),
    # The person stopped the call (Esc): the same call stopped again is the loop, not any
    # call stopped (metacog.event keeps the person's words alone).
    (
        re.compile(r"^\[request interrupted by user", re.I | re.M),
        "interrupted",
        "a call the person stopped (ask what they want instead of starting it again)",
    ),
    (
        re.compile(r"old_string and new_string are exactly the same", re.I),
        "no-op-edit",
        "an Edit that changes nothing",
    ),
    # The shell's and coreutils' own words, at the margin ("cat: x: No such file or directory",
    # "(eval):cd:1: no such file…", pytest's "ERROR: file or directory not found: …"); a
    # compiler's "package x does not exist" is a problem line, not the working directory.
    (
        re.compile(
            r"^(?:\(eval\)|(?:(?:/\S*/)?(?:ba|z|da)?sh|cd|ls|cat|cp|mv|rm|grep|rg|head|tail|sed|awk|wc|stat|"
            r"touch|chmod|source|find|du|diff|tar|error)\b)[^\n]{0,200}?(?:no such file or directory|"
            r"file or directory not found|cannot access)",
            re.I | re.M,
        ),
        "missing-path",
        "a path that does not exist from the working directory (check pwd; prefer absolute paths)",
    ),
)
EDIT_MISMATCH = frozenset(("old-string-mismatch", "ambiguous-old-string"))
_WHAT = {name: what for _, name, what in MISTAKES} | {
    # Claude Code's two answers to an old_string written from memory, as one habit.
    "edit-mismatch": "an Edit whose old_string does not pick out one place of the file (copy "
    "it from a fresh Read, whitespace included, with enough around it to be unique)",
}
SHELL_ONLY = frozenset(("missing-path",))
WITH_PROBLEMS = frozenset(
    ("missing-path",)
)  # the error's own lines still say which problem it is  # a Read of a missing file is exploring; a shell's, the wrong cwd


def mistake(tool: str, error: str) -> str:
    """The agent's own recurring kind of mistake this error shows ('' for none), by the
    obstacle, whichever tool met it."""
    head = error[:2000]
    for pattern, name, _ in MISTAKES:
        if name in SHELL_ONLY and (tool != "Bash" or not _relative_missing(pattern, head)):
            continue
        if pattern.search(head):
            # The obstacle, not the tool: a protected path tried with Bash, then Read, then
            # Write is the same wall approached three ways (issue 17, class 2).
            return name
    return ""


def _relative_missing(pattern: re.Pattern[str], error: str) -> bool:
    """Whether a shell's "no such file" names a relative path: the working directory is then
    the suspect (a `cd` earlier moved it). An absolute path that is not there is exploring."""
    for line in error.splitlines():
        if pattern.search(line):
            paths = [t.strip("'\"`,") for t in line.split() if "/" in t or "." in t.strip(".:")]
            if not paths or any(not p.startswith(("/", "~")) for p in paths):
                return True
    return False


# Mistakes that recur only when the agent comes back to the same thing: a person who rejects
# edits while reviewing says no to each proposal once; one who rejects the same file's edit, or
# the same command, three times is being asked the same question again (issue 17, class 2).
PER_INTENT = frozenset(("rejected", "interrupted"))
# Obstacles keyed by their kind whichever tool met them (Habit's "the same wall"): a streak
# of them "in a row" is the same call refused again, or it would never end (a denial now and
# another, unrelated, thirty calls on are no loop).
BY_KIND = frozenset(("blocked", "no-such-tool", "hook-blocked", "hung", "needs-input"))


def intent(action: Call) -> str:
    """What a call was for: its file, or its command's program and first word that is not a
    flag (`git push`, `npm run`); of an address, its origin (metacog.perception.act.aim_of).

    A shell command's is what perception read from the raw command (`Call.intent`, kept for
    the person's no: metacog.perception.act.Act.aim), never its display text split again:
    `cd "a b" && make`, `sudo -u bob rm x`, `timeout 10 pytest | head`, `ls x 2>/dev/null`
    and a heredoc's command are for what their plain forms are for, `rm "my file"` for `rm my
    file`. A call recorded without it (an older record) is read from its act's text.

    Stored keys hold this text for the person's no (PER_INTENT): Habit's window memory
    (`mistake_key`, session only) and, through `identity`, the resolutions store's problem key
    (metacog.learning.resolutions, across sessions) and a resolved streak's lesson signature.
    Before issue 39 a shell command's target was split on spaces (`ls x 2>/dev/null` was for
    `ls 2>/dev/null`, `cd x && make && echo done` for `echo done`): a resolutions record under
    such a key is found by `legacy_identity` and moved to the new key when it is met again."""
    if action.path:
        return str(action.path)[:200]
    if action.tool == "Bash" and action.intent:
        return action.intent
    # Loaded for the person's no only: a failing Read need not load the shell's grammar.
    from metacog.perception.act import aim_of, read

    if action.tool == "Bash":
        return read(action.act or action.target).aim
    # Any other tool's target (a JSON input, a query, an address) is no shell command: its
    # words as written.
    words = str(action.target).split()
    return aim_of(words[0], words[1:]) if words else ""


def legacy_identity(action: Call) -> str:
    """The identity a failure of the person's no (PER_INTENT) had before issue 39, where it
    differs from `identity`'s, else '': only to find what the resolutions store kept under the
    old key (metacog.senses.reflex), never a fingerprint of its own. The old reading: the
    display target's words split on spaces, the part after the last `&&` of a `cd …`."""
    if action.mistake not in PER_INTENT or action.tool != "Bash" or action.path:
        return ""
    from metacog.perception.shell import first_word

    target = str(action.target)
    command = target.split("&&")[-1] if target.lstrip().startswith("cd ") else target
    head = first_word(command)
    rest = command.split(head, 1)[-1].split() if head else []
    arg = next(
        (w for w in rest if not w.startswith("-") and ("=" not in w or _OLD_ORIGIN.match(w))), ""
    )
    origin = _OLD_ORIGIN.match(arg)
    old = f"{action.mistake} Bash " + f"{head} {origin.group(1) if origin else arg}".strip()[:120]
    return old if old != mistake_key(action) else ""


_OLD_ORIGIN = re.compile(r"[\"']?(\w+://[^/\"'\s?#]+)")


def mistake_key(action: Call) -> str:
    """The mistake as Habit counts it: its kind (an old_string not found and one found twice
    are one: EDIT_MISMATCH), and for PER_INTENT kinds what the call was for (`intent`)."""
    mistake = action.mistake
    if mistake in EDIT_MISMATCH:
        return "edit-mismatch"
    if mistake not in PER_INTENT:
        return mistake
    return f"{mistake} {action.tool} {intent(action)}"


def describe(key: str) -> str:
    name, _, tool = key.partition(" ")
    what = _WHAT.get(name, name)
    return f"{what} ({tool})" if tool else what


# What makes a line name something: a path or file, an identifier (snake_case, camelCase,
# dotted, `a::b`), a quoted name, a code (ANN401, TS2345, E0425), an HTTP status. A line of
# plain words and counts ("npm error", "- 5 errors", "Build failed") is the same whatever
# went wrong: quoted as "the same problem" it tells the agent nothing (issue 17, class 1).
_NAMED = re.compile(
    r"[\w.-]*/[\w.-]+|\b[\w-]+\.[A-Za-z]\w{0,7}\b(?::\d+)?"  # a path, a file
    r"|\b[A-Za-z]\w*_\w+|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\w::\w"  # identifiers
    r"|`[^`\s][^`]*`|'[^'\s][^']{1,}'|\"[^\"\s][^\"]{1,}\"|‘[^’]+’|“[^”]+”"  # quoted names
    r"|\b[A-Z]{1,6}-?\d{2,6}\b|\b[A-Z]+\d+[A-Z]?\b"  # codes
    # A linter's rule: `(bodyclose)` at the end, `[no-unused-vars]` (a default like `[y]` or
    # `[info]` in a prompt's text is not one).
    r"|\([a-z][\w-]*\)\s*$|\[[a-z]\w*(?:[-/]\w+)+\]"
    # A quantity that is not a tally of what failed: `the 8000 output token maximum`.
    r"|\b\d{3,}\s+(?!(?:errors?|problems?|issues?|warnings?|failed|failures?|failing|passed|tests?"
    r"|files?|skipped|items?|checks?)\b)[a-z]"
    r"|\b[45]\d\d\b(?=\s*[A-Z(:]|\s*$)|(?:status|code|HTTP)[ :=]*[45]\d\d\b"  # an HTTP status
)


def names_something(line: str) -> bool:
    """Whether a problem line names what is wrong (see _NAMED), rather than only saying
    that something is."""
    return bool(_NAMED.search(line[:LINE_CAP]))


# A word of what a call sent, as a failure may say it back: a run of characters between
# spaces, quotes, brackets, separators and slashes (`pages:build` is `pages` and `build`).
_SENT_WORD = re.compile(r"[^\s'\"`()\[\]{}<>,;:=/]{3,}")
_SENT = "\u00a7"  # what a word the call sent becomes
# Words it sent, quoted together (`"§:§"`, `` `§` ``, `(§)`): one of them, no name.
_SENT_RUN = re.compile(r"[`'\"(]*\u00a7(?:[:.\-]\u00a7)*[`'\")]*")
SENT_CAP = 2000  # characters of a call's target whose words are weighed


def sent_words(action: Call, *folders: str) -> frozenset[str]:
    """The words a call sent (its target: the command, the file asked for) and the names of
    the folders it ran in (the project's own name: a crate, a package, a workspace)."""
    words = set(_SENT_WORD.findall(str(action.target)[:SENT_CAP]))
    words.update(f.rstrip("/").rsplit("/", 1)[-1] for f in folders if f)
    return frozenset(words)


def names_beyond(line: str, sent: frozenset[str]) -> bool:
    """Whether a problem line names something besides what the call sent (`sent_words`).

    `error: script "build" exited with code 1` after `npm run build`, `could not compile
    `shop`` in the folder shop: the call said back, the runner's frame around whatever
    failed inside it, the same however the work moves; not a problem of its own. No list
    of runners: whatever the tool, its frame names only what it was asked to do."""
    line = line[:LINE_CAP]
    if sent:
        line = _SENT_RUN.sub(
            _SENT, _SENT_WORD.sub(lambda m: _SENT if m.group() in sent else m.group(), line)
        )
    return names_something(line)


_QUOTED = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|‘[^’]*’|“[^”]*”")


def names_only_quoted(line: str) -> bool:
    """Whether a line names something only by quoting it (``could not compile `core` ``,
    `script "build" exited`): a subject quoted, no path, identifier or code of its own."""
    line = line[:LINE_CAP]
    return names_something(line) and not names_something(_QUOTED.sub(" ", line))


def identity(action: Call) -> str:
    """What makes two errors "the same error".

    A refusal is its kind of mistake: "File has not been read yet" on thirteen files is one
    loop; an Edit whose old_string does not match (not found, or found twice) is one loop
    per file. Otherwise the problems the error names (`problems`), those that name something,
    to the letter; without any, the signature, or where it starts with a banner ("FAIL pkg
    [build failed]" is the same whatever broke) every problem line. The target joins the signature where the signature names nothing (a bare exit code) or
    where the file is the identity (three different missing files are exploring).
    """
    mistake = action.mistake
    if mistake in EDIT_MISMATCH:
        return f"edit-mismatch {action.path or action.target}"
    if mistake == "missing-path":
        return f"{mistake} {action.tool} {action.target}"  # the same command: a wrong cwd
    if mistake in BY_KIND:
        return f"{mistake} {action.tool} {action.target}"
    if mistake:
        return mistake_key(action)
    sig = action.sig
    if action.refused:
        return sig
    listed = [p for p in action.problems or () if len(p) == 4]
    named = [str(p[1]) for p in listed if isinstance(p[3], str) and names_something(p[3])]
    problems = named or [str(p[1]) for p in listed]
    if named or (problems and is_banner(sig.split(" | ", 1)[0])):
        # Every problem that names something, to the letter: one fixed of several is a new
        # error, not the same; a signature of summaries (`Found 1 error.`) is not the problem.
        return "problems " + " ".join(sorted(problems))
    named = [part for part in sig.split(" | ") if not part.startswith("exit ")]
    if action.tool in FILE_TOOLS or not named:
        return f"{action.tool} {action.target} | {sig}"
    return sig
