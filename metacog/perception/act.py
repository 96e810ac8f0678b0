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
_GOES_ON = ("&&", "||", "|")  # operators after which a new line is no end of the command

# When a sayer's line is printed (`Act.says`): whatever the acts before it did, only when they
# all went well (`test -f x && echo OK`), only when one failed (`ls build || echo "No build"`).
ALWAYS, THEN, ELSE = "always", "then", "else"
# Words of the shell's grammar that open or close a step (`do (curl …`, `done`, `fi`): the
# program is the word after them, if any.
_KEYWORDS = frozenset(
    ("do", "done", "then", "else", "elif", "fi", "if", "while", "until", "!", "{", "}")
)
# Steps that say where or when the act runs, not what it is.
_SETTINGS = frozenset(("cd", "pushd", "popd", "sleep", "wait", "for", "case", "esac"))


def words(command: str, cuts: list[tuple[int, int]] | None = None) -> list[str]:
    """A command's words and operators, quotes honoured and taken off (`"a b"` is one word,
    `a|b` inside quotes no pipe), `$(…)` and backquotes kept whole, a heredoc's body left
    out (what it feeds is data, not the act; what follows it is read on). `cuts`, if given,
    gets where each operator that ends a command of the list stands (`segments`)."""
    out: list[str] = []
    word: list[str] = []
    started = False  # a word is under way (`""` is a word, empty)
    i, n = 0, min(len(command), CAP)
    bodies: list[str] = []  # the words that end the heredocs opened on this line
    while i < n:
        c = command[i]
        if c in "'\"":
            end = command.find(c, i + 1, n)
            end = n if end < 0 else end
            word.append(command[i + 1 : end])
            started, i = True, end + 1
            continue
        if c == "\\" and i + 1 < n:
            word.append(command[i + 1])
            started, i = True, i + 2
            continue
        if c == "`" or command.startswith("$(", i):
            close = "`" if c == "`" else ")"
            end = command.find(close, i + (1 if c == "`" else 2), n)
            end = n if end < 0 else end
            word.append(command[i : end + 1])
            started, i = True, end + 1
            continue
        # Every operator starts with one of these: the others are not looked for at each
        # character (half of reading `cat src/a.py`, 46 -> 24 us, measured).
        operator = (
            next((op for op in _OPERATORS if command.startswith(op, i)), "") if c in "&|;\n" else ""
        )
        if operator == "&" and ((word and word[-1] in "<>") or command.startswith("&>", i)):
            operator = ""  # `2>&1`, `&>/dev/null`: a redirection, not a background job
        if operator or c in " \t\r":
            if started:
                out.append("".join(word))
                word, started = [], False
            end = i + (len(operator) or 1)
            if operator == "\n" and bodies:
                end = _past_bodies(command, end, bodies, n)  # the file's text, not commands
                bodies = []
            if operator == "\n" and out and out[-1] in _GOES_ON:
                operator = ""  # `a &&⏎ b`: the list goes on past the line's end
            if operator:
                out.append(operator)
                if cuts is not None and operator != "|":
                    cuts.append((i, end))
            i = end
            continue
        opened = _HEREDOC.match(command, i) if c == "<" else None
        if opened:
            bodies.append(opened[2])
            word.append("<<" + opened[2])
            started, i = True, opened.end()
            continue
        word.append(c)
        started, i = True, i + 1
    if started:
        out.append("".join(word))
    return out


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
    the run is what it does, not a line of the file written), nor their text kept."""
    cuts: list[tuple[int, int]] = []
    words(command, cuts)
    out, at = [], 0
    for start, end in cuts:
        if command[start] == "\n" and end > start + 1:
            out.append(command[at : start + 1])
            at = end
    return "".join(out) + command[at:]


def segments(command: str) -> list[str]:
    """The text of each command of a list, pipelines whole (cut at `&&`, `||`, `;`, `&` and
    new lines outside quotes; a heredoc's body left out): `sleep 3 && curl … | jq` is
    `sleep 3` and `curl … | jq`."""
    cuts: list[tuple[int, int]] = []
    words(command, cuts)
    out, at = [], 0
    for start, end in cuts:
        out.append(command[at:start])
        at = end
    out.append(command[at : min(len(command), CAP)])
    return [part.strip() for part in out if part.strip()]


def steps(command: str) -> list[tuple[str, list[str]]]:
    """The command's steps, each (the operator before it, '' for the first; its words)."""
    return _steps(words(command))


def _steps(tokens: list[str]) -> list[tuple[str, list[str]]]:
    """The steps of a command's words and operators (`words`)."""
    out: list[tuple[str, list[str]]] = []
    before, current = "", []
    for word in tokens:
        if word in _OPERATORS:
            if current:
                out.append((before, current))
            before, current = word, []
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
        if redirect and (">" in word or "<" in word):
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
    whichever path they ask). White space inside that word (code given with `python3 -c`) is
    folded: it is shown and stored on one line."""
    arg = next((w for w in rest if w and w[0] != "-" and ("=" not in w or _ORIGIN.match(w))), "")
    origin = _ORIGIN.match(arg)
    return " ".join(f"{head} {origin.group(1) if origin else arg}".split())[:AIM_CAP]


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
    parsed = _steps(tokens)
    act.background = bool(tokens) and tokens[-1] == "&"
    programs = set()
    for at, (before, step) in enumerate(parsed):
        piped = at + 1 < len(parsed) and parsed[at + 1][0] == "|"  # it feeds the next
        core = _stage(step)
        if not core:
            continue
        name = _name(core)
        programs.add(name)
        if before in ("|", "||", ";") and programs - {name}:
            act.hides_exit = True
        act.runner = act.runner or _runner(core)
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
    if programs & SAYERS:  # most commands say nothing of their own: read no further
        act.says = _says(parsed)
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


def _says(parsed: list[tuple[str, list[str]]]) -> tuple[tuple[str, str], ...]:
    """The lines a command's sayers print in their own words, each with when (ALWAYS, THEN,
    ELSE): each `&&`/`||` list is read by the shell's own rules (`a && b || c` runs `c` when
    `a` or `b` failed) in every run of its acts' outcomes, and a sayer by the runs it is in."""
    lists: list[list[tuple[str, list[list[str]]]]] = []  # pipelines: (operator, stages)
    for before, step in parsed:
        if before == "|" and lists:
            lists[-1][-1][1].append(step)
        elif before in ("&&", "||") and lists:
            lists[-1].append((before, [step]))
        else:
            lists.append([("", [step])])
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
    """A pipeline stage's words from its program on: past the shell's keywords and a
    subshell's parenthesis (`do (curl -s …`, `! grep -q x`, `if [ -f x ]`), its redirections
    and the words that run it (`unwrapped`)."""
    while step and (step[0] in _KEYWORDS or step[0][:1] == "("):
        if step[0][:1] == "(" and step[0].strip("("):
            step = [step[0].lstrip("("), *step[1:]]
            break
        step = step[1:]
    return unwrapped(step)


def _name(core: list[str]) -> str:
    """The program a stage's words (`_stage`) run, without its folder (`(npm test)`: npm)."""
    return core[0].rsplit("/", 1)[-1].rstrip(")")[:80] if core else ""


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
