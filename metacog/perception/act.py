"""One identity of a shell command: what it does, read once from its words.

Plumbing does not change what a command does: `2>&1`, `2>/dev/null`, `| head -20`,
`| tail -5`, `|| true`, `; echo done`, a leading `cd app &&`, `sleep 30 &&` before a
check, `timeout 60`, `sudo -u bob`, `VAR=1`. Two commands that differ only there are the
same act, and every reader of a call (the facts, the senses, the report) asks this module
what the act is instead of reading the words again its own way: one quote-aware parser
(`steps`), one identity (`Act.key`), and what the act is, read from the whole command
before anything cuts it for display (`Act.writes` of a 300-character command that ends in
`git checkout`).

The lists here are the shell's grammar and the names of programs by role, never any
tool's messages.
"""

from __future__ import annotations

import re
import zlib

CAP = 4000  # characters of a command read: a hostile megabyte costs no more than this
KEY_CAP = 200  # characters of an act's identity

# Words before a program that run it rather than being it (`sudo make`, `env X=1 node`,
# `timeout 10 pytest`), and how many words of their own each may take (`sudo -u bob`:
# its options and their values; `timeout 10`, `nice -n 5`).
RUNNERS = frozenset(("env", "time", "sudo", "nohup", "timeout", "exec", "command", "nice"))
_RUNNER_VALUES = frozenset(("-u", "-g", "-n", "-s", "-k", "--signal", "--kill-after", "-C"))
# Programs that feed the next stage of a pipeline its words (`echo N | npx …`): the act is
# what they feed.
FEEDERS = frozenset(("echo", "yes", "printf"))
# Stages after a pipe that only cut or page what the act printed.
_CUTTERS = frozenset(("head", "tail", "cat", "less", "more"))
# Steps after `;`, `&&` or `||` that say something or nothing, whatever came before.
SAYERS = frozenset(("echo", "printf", "true", ":", "false"))

# Programs that run a project's tests, and verbs of verification (a build, a lint, a type
# check): a check's outcome is the work's.
TEST_RUNNERS = frozenset(
    (
        "pytest",
        "py.test",
        "unittest",
        "tox",
        "nox",
        "jest",
        "vitest",
        "mocha",
        "rspec",
        "phpunit",
        "ctest",
    )
)
# Programs whose subcommand `test` runs the tests (`go test`, `npm run test`, `make check`).
_TEST_VERBS = frozenset(("test", "nextest"))
_TEST_HOSTS = frozenset(
    (
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "go",
        "cargo",
        "make",
        "mvn",
        "gradle",
        "./gradlew",
        "gradlew",
        "dotnet",
        "mix",
        "swift",
        "deno",
    )
)
# Words that run the next word rather than being the program (`uv run pytest`, `npx jest`,
# `python -m pytest`).
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
        "nice",
        "python",
        "python3",
        "-m",
    )
)

# A shell command that changes files or the repository (`sed -i`, a redirect of what it
# says into a file, `git checkout`, an install), read from the whole command. The redirect is
# the sayer's own, in its step: `echo "---"; grep x src 2>/dev/null` writes nothing.
_WRITES = re.compile(
    r"sed -i|\b(?:cat|echo|printf)\b[^|;&\n]*?(?<![\d&>])>>?(?!&|\s*/dev/null)|\btee\b|\bpatch\b|\b(?:mv|cp|rm|touch)\b|git (?:apply|"
    r"checkout|reset|restore|stash|commit|merge|rebase|pull|switch)|\b(?:npm|pip|uv|yarn|pnpm) "
    r"(?:i|install|add)\b"
)
# A redirection: `2>&1`, `>/dev/null`, `2> err.log`, `&>out`, `< in.txt` (its target may be
# the next word).
_REDIRECT = re.compile(r"^(?:\d*|&)(?:>>?|<)(?:&\d+|&-)?(.*)$")
_OPERATORS = ("&&", "||", ";", "|", "&", "\n")
# Each operator as `words` gives it: grammar that no word can be, as a subshell's parentheses
# are (`_OPEN`), so that a quoted or escaped one stays a word (`echo "|"`, `find … \;`).
# `steps` gives the operator before a step as its text: in that place it is never a word.
_TOKENS = {op: "\0" + op for op in _OPERATORS}
_OPERATOR_OF = {token: op for op, token in _TOKENS.items()}

# When a sayer's line is printed (`Act.says`): whatever the acts before it did, only when they
# all went well (`test -f x && echo OK`), only when one failed (`ls build || echo "No build"`).
ALWAYS, THEN, ELSE = "always", "then", "else"
# Words of the shell's grammar that open or close a step (`do (curl …`, `done`, `fi`): the
# program is the word after them, if any.
_KEYWORDS = frozenset(
    ("do", "done", "then", "else", "elif", "fi", "if", "while", "until", "!", "{", "}")
)
# A subshell's parentheses as `words` gives them, grammar that no word can be (a shell's
# word holds no NUL): `\(` and `"("` are words, as `find . \( -name a -o -name b \)` has.
_OPEN, _CLOSE = "\0(", "\0)"
# Steps that say where or when the act runs, not what it is.
_SETTINGS = frozenset(("cd", "pushd", "popd", "sleep", "wait", "for", "case", "esac"))


def words(command: str, cuts: list[tuple[int, int]] | None = None) -> list[str]:
    """A command's words and operators, quotes honoured and taken off (`"a b"` is one word,
    `a|b` inside quotes no pipe, an operator quoted or escaped a word: `"|"`, `\\;`; a real
    one a token of its own, `_TOKENS`), `$(…)` and backquotes kept whole to their own end (quotes
    and nesting inside them honoured), a heredoc's body and a comment left out (what it feeds
    is data, a comment is for the reader: neither is the act; what follows is read on), and
    the parentheses of a subshell taken as grammar, tokens of their own as operators are, not
    part of a word (`(cd app && npm test)`).
    `cuts`, if given, gets where each operator that ends a command of the list stands, and
    where each comment and each subshell's parenthesis does (`segments`)."""
    out: list[str] = []
    word: list[str] = []
    started = False  # a word is under way (`""` is a word, empty)
    i, n = 0, min(len(command), CAP)
    bodies: list[str] = []  # the words that end the heredocs opened on this line
    while i < n:
        c = command[i]
        part = _part(command, i, n, started) if c in _QUOTING else None
        if part:
            text, i, started = part
            word.append(text)
            continue
        if c in "()" or (c == "#" and not started):
            started = _flush(out, word, started)
            i = _grammar(command, i, n, out, cuts)
            continue
        # Every operator starts with one of these: the others are not looked for at each
        # character (half of reading `cat src/a.py`, 46 -> 24 us, measured).
        operator = _operator(command, i, word) if c in "&|;\n" else ""
        if operator or c in " \t\r":
            started = _flush(out, word, started)
            i = _ended(command, (i, i + (len(operator) or 1)), out, bodies, cuts)
            continue
        opened = _HEREDOC.match(command, i) if c == "<" else None
        if opened:
            bodies.append(opened[2])
            word.append("<<" + opened[2])
            started, i = True, opened.end()
            continue
        word.append(c)
        started, i = True, i + 1
    _flush(out, word, started)
    return out


_QUOTING = "'\"\\`$("  # the characters that may open a part of a word read whole (`_part`)


def _part(command: str, i: int, n: int, started: bool) -> tuple[str, int, bool] | None:
    """The part of a word that starts at `i` and is read whole (a quoted text, its quotes
    off; a character escaped; `$(…)`, backquotes, or a parenthesis inside a word such as
    `<(sort a)`, `a=(1 2)`, `f()`, to their own end): (its text, where it ends, whether a word
    is under way after it); None for none."""
    c = command[i]
    if c == "'":
        end = command.find(c, i + 1, n)
        end = n if end < 0 else end
        return command[i + 1 : end], end + 1, True
    if c == '"':
        end = _quoted_end(command, i, n)
        text = command[i + 1 : end]
        return (_UNESCAPE.sub(r"\1", text) if "\\" in text else text), end + 1, True
    if c == "\\" and i + 1 < n:
        if command[i + 1] == "\n":
            return "", i + 2, started  # `\⏎` goes on to the next line: neither word nor end
        return command[i + 1], i + 2, True
    if c == "`":
        end = _tick_end(command, i, n)
    elif command.startswith("$(", i) or (c == "(" and started):
        end = _paren_end(command, command.index("(", i) + 1, n)
    else:
        return None
    return command[i : end + 1], end + 1, True


def _flush(out: list[str], word: list[str], started: bool) -> bool:
    """The word under way, if any, ended and added to `out`: no word is under way after."""
    if started:
        out.append("".join(word))
        word.clear()
    return False


def _grammar(command: str, i: int, n: int, out: list[str], cuts: list | None) -> int:
    """A subshell's parenthesis (a token of its own) or a comment (to the line's end, for the
    reader: left out) at `i`, noted in `cuts`; where the reading goes on."""
    if command[i] in "()":
        out.append(_OPEN if command[i] == "(" else _CLOSE)
        end = i + 1
    else:
        end = command.find("\n", i, n)
        end = n if end < 0 else end
    if cuts is not None:
        cuts.append((i, end))
    return end


def _operator(command: str, i: int, word: list[str]) -> str:
    """The operator at `i`, '' for none (`2>&1`, `&>/dev/null`: a redirection, not a job sent
    to the background)."""
    operator = next((op for op in _OPERATORS if command.startswith(op, i)), "")
    if operator == "&" and ((word and word[-1] in "<>") or command.startswith("&>", i)):
        return ""
    return operator


def _ended(
    command: str,
    span: tuple[int, int],
    out: list[str],
    bodies: list[str],
    cuts: list | None,
) -> int:
    """The operator or blank at `span` read: the operator added to `out` and its place to
    `cuts` (not a pipe's: a pipeline is one command of the list); past the bodies of the
    heredocs its line opened; where the reading goes on."""
    at, end = span
    operator = command[at:end].strip(" \t\r")
    skipped = operator == "\n" and bool(bodies)
    if skipped:
        end = _past_bodies(command, end, bodies, min(len(command), CAP))  # a file's text
        bodies.clear()
    if operator == "\n" and (not out or (out[-1] in _OPERATOR_OF and out[-1] != _TOKENS["&"])):
        # `a &&⏎ b`: the list goes on past the line's end; a line after a comment, a blank
        # line or one after `;` starts no other command than the one already started. A
        # heredoc's body passed over on the way (`cat > f <<EOF &&⏎…⏎EOF⏎ls`) is still cut
        # out: its text is a file's, never a command's (`unheredoc`, `segments`).
        if skipped and cuts is not None:
            cuts.append((at, end))
        return end
    if operator:
        out.append(_TOKENS[operator])
        if cuts is not None and operator != "|":
            cuts.append((at, end))
    return end


# Inside double quotes a backslash escapes only these (`"say \"hi\""` says `say "hi"`).
_UNESCAPE = re.compile(r'\\(["\\])')


def _quoted_end(command: str, at: int, n: int, nest: int = 0) -> int:
    """Where the double-quoted text opened at `at` closes (`n` if never): past a quote
    escaped (`\\"`) and past the quotes of a `$(…)` or backquotes inside it."""
    end = command.find('"', at + 1, n)
    end = n if end < 0 else end
    inside = command[at + 1 : end]
    if "\\" not in inside and "$(" not in inside and "`" not in inside:
        return end  # most quoted text: nothing inside that hides a quote
    if nest > _NESTING:
        return n
    i = at + 1
    while i < n:
        c = command[i]
        if c == '"':
            return i
        if c == "\\":
            i += 2
        elif c == "`":
            i = _tick_end(command, i, n) + 1
        elif command.startswith("$(", i):
            i = _paren_end(command, i + 2, n, nest + 1) + 1
        else:
            i += 1
    return n


_NESTING = 32  # quotes and substitutions read inside each other: a hostile nest ends here


def _tick_end(command: str, at: int, n: int) -> int:
    """Where the backquotes opened at `at` close (`n` if never), past an escaped one."""
    i = at + 1
    while i < n:
        c = command[i]
        if c == "`":
            return i
        i += 2 if c == "\\" else 1
    return n


def _paren_end(command: str, at: int, n: int, nest: int = 0) -> int:
    """Where the parenthesis opened just before `at` closes (`n` if never): its quotes,
    backquotes and the parentheses nested in it honoured (`$(jq -q '"\\(.a)"')`, `$(a $(b))`,
    `$((n+1))`)."""
    end = command.find(")", at, n)
    if end >= 0 and not any(c in command[at:end] for c in "(\"'`\\"):
        return end  # most substitutions: nothing inside that hides its end
    if nest > _NESTING:
        return n
    depth, i = 1, at
    while i < n:
        c = command[i]
        if c == ")":
            depth -= 1
            if not depth:
                return i
        elif c == "(":
            depth += 1
        elif c == "'":
            close = command.find("'", i + 1, n)
            i = n if close < 0 else close
        elif c == '"':
            i = _quoted_end(command, i, n, nest + 1)
        elif c == "`":
            i = _tick_end(command, i, n)
        elif c == "\\":
            i += 1
        i += 1
    return n


# A heredoc's opening (`<<'EOF'`, `<<-END`, not a here-string `<<<`): its body, up to the
# line that is the word alone, is a file's text.
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\1")


def _past_bodies(command: str, at: int, ends: list[str], n: int) -> int:
    """Where the commands go on after the heredoc bodies that start at `at`, each ending at
    the line that is its word alone (`n`: the command's end, for a body never closed)."""
    for word in ends[:8]:  # a line opens a few heredocs at most
        end = re.compile(rf"^[ \t]*{re.escape(word)}[ \t]*$", re.MULTILINE).search(command, at, n)
        at = end.end() if end else n
    return at


def unheredoc(command: str) -> str:
    """The command without its heredocs' bodies (`cat > t.sh <<'EOF' … EOF` then `./t.sh`:
    the run is what it does, not a line of the file written) and without its comments."""
    cuts: list[tuple[int, int]] = []
    words(command, cuts)
    out, at = [], 0
    for start, end in cuts:
        if command[start] == "#":
            out.append(command[at:start])
            at = end
        elif command[start] == "\n" and end > start + 1:
            out.append(command[at : start + 1])
            at = end
    return "".join(out) + command[at:]


def segments(command: str) -> list[str]:
    """The text of each command of a list, pipelines whole (cut at `&&`, `||`, `;`, `&` and
    new lines outside quotes; a heredoc's body left out): `sleep 3 && curl … | jq` is
    `sleep 3` and `curl … | jq`; comments left out."""
    cuts: list[tuple[int, int]] = []
    words(command, cuts)
    out, part, at = [], "", 0
    for start, end in cuts:
        part += command[at:start]
        if command[start] == "\n" and end > start + 1 and part.rstrip().endswith("|"):
            # A heredoc's body inside a pipeline (`python3 - <<PY |`): it goes on. A line that
            # ends with a `|` of its own and no body (`echo \|`) ends its command.
            part += " "
        elif command[start] not in "#()":  # a comment or a subshell's parenthesis: left out
            out.append(part)
            part = ""
        at = end
    out.append(part + command[at : min(len(command), CAP)])
    return [part.strip() for part in out if part.strip()]


def steps(command: str) -> list[tuple[str, list[str]]]:
    """The command's steps, each (the operator before it, '' for the first; its words), a
    group's parentheses and braces left out (`(cd app && npm test)`: `cd app`, `npm test`)."""
    return _steps(words(command))


def _steps(tokens: list[str], piped: list[range] | None = None) -> list[tuple[str, list[str]]]:
    """The steps of a command's words and operators (`words`); `piped`, if given, gets the
    steps of each group whose output is piped to the next (`{ echo a; sleep 1; } | nc`)."""
    out: list[tuple[str, list[str]]] = []
    before, current = "", []
    opened: list[int] = []  # the first step of each group still open
    closed: range | None = None  # the group just closed, until the next operator
    for word in tokens:
        if word == _OPEN or (word == "{" and not current):
            opened.append(len(out) + bool(current))
        elif word == _CLOSE or (word == "}" and not current):
            closed = range(opened.pop(), len(out) + bool(current)) if opened else None
        elif word in _OPERATOR_OF:
            if current:
                out.append((before, current))
            if closed is not None and word == _TOKENS["|"] and piped is not None:
                piped.append(closed)
            before, current, closed = _OPERATOR_OF[word], [], None
        else:
            current.append(word)
    if current:
        out.append((before, current))
    return out


def unwrapped(step: list[str]) -> list[str]:
    """A step's words without its redirections (`2>&1`, `> out.log`, `< in`) and the words
    that run it (`sudo -u bob`, `timeout 10`, `VAR=1`)."""
    kept: list[str] = []
    skip_target = False
    for word in step:
        if skip_target:
            skip_target = False
            continue
        redirect = _REDIRECT.match(word) if word[:1] in "0123456789&><" else None
        if redirect and (">" in word or "<" in word) and word[1:2] != "(":  # `<(sort a)`: input
            skip_target = not redirect.group(1) and not word.endswith(("&1", "&2", "&-"))
            continue
        kept.append(word)
    while kept:
        head = kept[0]
        if "=" in head and not head.startswith(("-", "=")) and head.split("=", 1)[0].isidentifier():
            kept = kept[1:]  # VAR=value
        elif head in RUNNERS:
            kept = kept[1:]
            while kept and (kept[0].startswith("-") or kept[0][:1].isdigit()):
                takes = kept[0] in _RUNNER_VALUES
                kept = kept[2:] if takes else kept[1:]
        else:
            break
    return kept


# An address's origin (scheme, host, port): where a call goes, whatever it asks there.
_ORIGIN = re.compile(r"[\"']?(\w+://[^/\"'\s?#]+)")
AIM_CAP = 120  # characters of what an act is for


def aim_of(head: str, rest: list[str] | tuple[str, ...]) -> str:
    """What a program and its words are for: the program and its first word that is not a
    flag, a setting or empty (`git push`, `npm run`, `sed s/a/b/` for `sed -i '' s/a/b/`); of
    an address, its origin (`curl http://localhost:3000`: the server the calls go to,
    whichever path they ask). A word with white space inside (a quoted file name, code given
    with `python3 -c`, a script for `bash -c`) is its first word and a checksum of the rest:
    two of them stay apart, and no script, header or secret it holds is kept, the aim being
    stored across sessions (metacog.learning.resolutions)."""
    arg = next((w for w in rest if w and w[0] != "-" and ("=" not in w or _ORIGIN.match(w))), "")
    origin = _ORIGIN.match(arg)
    if origin:
        arg = origin.group(1)
    elif len(arg.split()) > 1:
        first = arg.split()[0]
        first = "" if "=" in first else first  # `TOKEN=… curl`: a setting, maybe a secret
        arg = f"{first}…{zlib.crc32(arg.encode('utf-8', 'replace')) & 0xFFFFFF:06x}"
    return f"{head} {arg}".strip()[:AIM_CAP]


class Act:
    """What a shell command does, read once (`read`)."""

    @property
    def tests(self) -> bool:
        """It runs the project's tests."""
        return bool(self.runner)

    @property
    def aim(self) -> str:
        """What the act is for (`aim_of`): `rm my file` for `sudo -u bob rm "my file"`, `make`
        for `cd "a b" && make && echo done`, `pytest` for `timeout 10 pytest | head`."""
        return aim_of(self.program, self.step[1:])

    __slots__ = (
        "acts",
        "background",
        "hides_exit",
        "key",
        "named",
        "program",
        "programs",
        "runner",
        "says",
        "step",
        "waits",
        "writes",
    )

    def __init__(self) -> None:
        self.program = ""  # the program the act runs (without its folder), '' for none
        self.key = ""  # its identity: the act's words without plumbing, at most KEY_CAP
        self.writes = False  # it changes files or the repository
        self.runner = ""  # the test runner it runs (`pytest`, `go test`, `npm run test`),
        self.waits = False  # it waits first (`sleep 30 && gh run view`)
        self.programs: frozenset[str] = frozenset()  # every program its steps run
        # Its exit status is another step's (`| tail`, `|| true`, `; echo done`): what the
        # act's own program said is in its output, not in the exit code.
        self.hides_exit = False
        self.background = False  # it ends with `&`: started, not finished
        # The lines its sayers print in their own words (`echo "No build directory"`), each
        # with when it is printed: ALWAYS whatever the acts did, THEN only if they all went
        # well, ELSE only if one failed (`ls build || echo "No build directory"`).
        self.says: tuple[tuple[str, str], ...] = ()
        # The programs of each pipeline that acts (not a sayer, not where or when it runs:
        # `cd`, `sleep`, a loop's header): ("lsof", "grep") for `lsof -i :80 | grep LISTEN`.
        self.acts: tuple[tuple[str, ...], ...] = ()
        # The words of the step that acts, as the parser read them (quotes off, no plumbing):
        # ("rm", "my file") for `sudo -u bob rm "my file" 2>/dev/null`; () for none.
        self.step: tuple[str, ...] = ()
        # The words its steps act on, as the parser read them (no plumbing, no words that run
        # them): every step's but a sayer's own text (`|| echo "no dist/"`: what it prints,
        # nothing it looked at), unless it feeds the next step (`echo src/ | xargs ls`).
        # What a command names (metacog.perception.novelty's places).
        self.named: tuple[str, ...] = ()

    def heard(self) -> dict[str, set[str]]:
        """Each line its sayers print in their own words (`says`), its spaces made single
        (`said`), with every branch it is printed in: what a line of its output is, when it
        is one of them (`{ELSE}`: only a fallback printed it)."""
        out: dict[str, set[str]] = {}
        for branch, line in self.says:
            out.setdefault(said(line), set()).add(branch)
        return out


def said(line: str) -> str:
    """A printed line as its words are heard, its spaces made single (`  a   b ` is `a b`)."""
    return " ".join(line.split())


def _runner(core: list[str]) -> str:
    """The test runner a step's words run (`pytest`, `go test`, `npm run test`, `make check`),
    past the wrappers that run the next word (`uv run pytest`, `python -m pytest`, `npx
    jest`), '' for none: every run of it is a run of the same check."""
    rest = list(core)
    while rest and rest[0].rsplit("/", 1)[-1] in WRAPPERS and rest[0] not in _TEST_HOSTS:
        rest = rest[1:]
    if not rest:
        return ""
    head = rest[0].rsplit("/", 1)[-1] if not rest[0].startswith("./gradlew") else "./gradlew"
    if head in TEST_RUNNERS:
        return head
    if head in _TEST_HOSTS:
        verbs = [w for w in rest[1:3] if not w.startswith("-")]
        if verbs and (verbs[0] in _TEST_VERBS or (head == "make" and verbs[0] == "check")):
            return f"{head} {verbs[0]}"
        if verbs[:1] == ["run"] and len(verbs) > 1 and verbs[1] in _TEST_VERBS:
            return f"{head} run {verbs[1]}"
    return ""


_READ: dict[str, Act] = {}  # the last commands read, whose Acts their readers share, unchanged
_READ_CAP = 16


def read(command: str) -> Act:
    """The act a shell command is: its steps less the plumbing, their program, and
    what it does, from the whole command. Read once for the last few commands: the call's
    record, its hidden failure and the shell's readers each ask (three readings a call were
    a fifth of a replay of bench_report's history, profiled)."""
    if not isinstance(command, str):
        return _read(command)
    act = _READ.get(command)
    if act is None:
        if len(_READ) >= _READ_CAP:
            _READ.clear()
        act = _READ[command] = _read(command)
    return act


def _read(command: str) -> Act:
    act = Act()
    if not isinstance(command, str) or not command.strip():
        return act
    act.writes = bool(_WRITES.search(command[:CAP]))
    kept: list[tuple[str, list[str]]] = []
    fed: set[int] = set()  # the steps that feed the next one its words (`echo N | npx …`)
    tokens = words(command)  # read once: the steps are made of them
    groups: list[range] = []
    parsed = _steps(tokens, groups)
    feeding = _feeding(parsed, groups)
    ended = _TOKENS["&"]
    act.background = ended in tokens[-2:] and tokens[-1] in (ended, _CLOSE)  # `… &`, `(… &)`
    programs = set()
    named: list[str] = []
    for at, (before, step) in enumerate(parsed):
        piped = at + 1 < len(parsed) and parsed[at + 1][0] == "|"  # it feeds the next
        core = _stage(step)
        if not core:
            continue
        name = _name(core)
        programs.add(name)
        if core[0] not in SAYERS or piped:
            named.extend(core)
        if before in ("|", "||", ";") and programs - {name}:
            act.hides_exit = True
        act.runner = act.runner or _runner(core)
        if at in feeding:
            fed.add(len(kept))  # `{ echo gps; sleep 2; } | nc …`: its words, fed to the act
            kept.append((before, core))
            continue
        if before in ("", "&&", ";") and name in ("cd", "pushd") and not kept:
            continue  # where it runs, not what
        if name == "sleep" and not kept:
            act.waits = True
            continue
        if before == "|" and name in _CUTTERS:
            continue  # cuts or pages what the act printed
        if before in ("||", ";", "&&") and name in SAYERS and kept and not piped:
            continue  # says something whatever the act did
        if before == "|" and kept and kept[-1][1][0].rsplit("/", 1)[-1] in FEEDERS:
            fed.add(len(kept) - 1)  # it feeds this step its words: this step acts
        kept.append((before, core))
    act.programs = frozenset(programs)
    act.named = tuple(named)
    if programs & SAYERS:  # most commands say nothing of their own: read no further
        act.says = _says(parsed, feeding)
        act.acts = _acts(parsed) if act.says else ()
    acting = [core for i, (_, core) in enumerate(kept) if i not in fed]
    if not acting:
        return act
    first = acting[0]
    act.step = tuple(first)
    act.program = _name(first)
    parts = []  # what is fed to the act is part of it (the answer piped to its prompt)
    for before, core in kept:
        parts.append((f" {before} " if before and parts else "") + " ".join(core))
    act.key = "".join(parts)[:KEY_CAP]
    return act


def _printed(step: list[str], core: list[str]) -> tuple[str, ...] | None:
    """The lines a sayer prints in its own words (`echo "No build directory"`), () for none
    (`true`, `echo x > file`), None when they are not its own (`echo "$x"`, a format)."""
    for word in step:
        if word[:1] in "1>&" and ">" in word and not word.endswith(("&2", "&1")):
            return ()  # `echo x > status.txt`, `echo x &>/dev/null`: into a file, not the output
    name, args = core[0], core[1:]
    if any("$" in arg or "`" in arg for arg in args):
        return None  # an expansion prints what the world holds, not the command's words
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        text = " ".join(args)
    elif name == "printf":
        if not args or "%" in args[0].replace("%%", ""):
            return None
        text = args[0].replace("%%", "%")
    else:
        return ()
    # `echo -e`, zsh's echo and printf end a line at `\n`; bash's echo prints it: both.
    lines = {text, *text.replace("\\n", "\n").replace("\\t", " ").splitlines()}
    return tuple(sorted(line.strip() for line in lines if line.strip()))


def _feeding(parsed: list[tuple[str, list[str]]], groups: list[range]) -> set[int]:
    """The steps of each group piped to the next that only feeds it words: its programs
    each a feeder or a wait (`{ echo "debug on"; sleep 1; } | nc host 23`, `(echo a; echo b)
    | node server.js`). What they print is the next program's input, not the command's."""
    out: set[int] = set()
    for group in groups:
        names = {_name(_stage(parsed[at][1])) for at in group}
        if names and names <= FEEDERS | {"sleep", ""}:
            out.update(group)
    return out


def _says(
    parsed: list[tuple[str, list[str]]], feeding: set[int] = frozenset()
) -> tuple[tuple[str, str], ...]:
    """The lines a command's sayers print in their own words, each with when (ALWAYS, THEN,
    ELSE): each `&&`/`||` list is read by the shell's own rules (`a && b || c` runs `c` when
    `a` or `b` failed) in every run of its acts' outcomes, and a sayer by the runs it is in."""
    lists: list[list[tuple[str, list[list[str]]]]] = []  # pipelines: (operator, stages)
    for at, (before, step) in enumerate(parsed):
        stage = ["true"] if at in feeding else step  # feeds the next its words: says nothing
        if before == "|" and lists:
            lists[-1][-1][1].append(stage)
        elif before in ("&&", "||") and lists:
            lists[-1].append((before, [stage]))
        else:
            lists.append([("", [stage])])
    out: list[tuple[str, str]] = []
    for pipes in lists:
        saying: dict[int, tuple[str, ...]] = {}
        failing: set[int] = set()  # sayers that fail (`false`)
        acts: set[int] = set()
        for at, (_, stages) in enumerate(pipes):
            core = unwrapped(stages[0]) if len(stages) == 1 else []
            if core and core[0] in SAYERS:
                lines = _printed(stages[0], core)
                saying[at] = lines or ()
                if core[0] == "false":
                    failing.add(at)
            else:
                acts.add(at)
        if not any(saying.values()):
            continue
        # Each act may go either way whatever went before, so the exit statuses that some run
        # reaches before a step decide whether it runs in some run or in every run; `well`
        # is the status of the run where every act went well. Read once along the list: no
        # cap on its acts (trying each run of 2**n was capped at 6 acts, and a long `&&`
        # chain's `echo "✅ Merged"` went unread).
        reached, well = {True}, True  # the first step: as if after one that went well
        for at, (op, _) in enumerate(pipes):
            needs = op != "||"  # `&&` (and the first) runs after success, `||` after failure
            if needs not in reached:
                continue  # never runs
            outcomes = {True, False} if at in acts else {at not in failing}
            when = ALWAYS if reached == {needs} else THEN if well == needs else ELSE
            reached = (reached - {needs}) | outcomes
            if well == needs:
                well = at in acts or at not in failing
            out.extend((when, line) for line in saying.get(at, ()))
    return tuple(out)


def _stage(step: list[str]) -> list[str]:
    """A pipeline stage's words from its program on: past the shell's keywords (`do curl -s
    …`, `! grep -q x`, `if [ -f x ]`; a subshell's parentheses are no words, `words`), its
    redirections and the words that run it (`unwrapped`)."""
    while step and step[0] in _KEYWORDS:
        step = step[1:]
    return unwrapped(step)


def _name(core: list[str]) -> str:
    """The program a stage's words (`_stage`) run, without its folder."""
    return core[0].rsplit("/", 1)[-1][:80] if core else ""


def _program(stage: list[str]) -> str:
    """The program a pipeline's stage runs (`_name`), '' for none or one that only says
    where or when."""
    name = _name(_stage(stage))
    return "" if name in _SETTINGS or name in SAYERS or name in _KEYWORDS else name


def _acts(parsed: list[tuple[str, list[str]]]) -> tuple[tuple[str, ...], ...]:
    """The programs of each pipeline that acts (`Act.acts`)."""
    pipes: list[list[str]] = []
    for before, step in parsed:
        if before != "|" or not pipes:
            pipes.append([])
        name = _program(step)
        if name:
            pipes[-1].append(name)
    return tuple(tuple(pipe) for pipe in pipes if pipe)
