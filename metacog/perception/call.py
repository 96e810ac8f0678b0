"""One tool call as perception read it: a frozen record, built once per call.

metacog.perception.action builds it from the hook's payload (or from a refused call the
transcript tells); the facts, every sense, the session summary and replay read it, and
nothing reads the payload again for the same facts. The window keeps the last calls in
their stored form (`record`, a plain dict in the session's JSON state), and `Context.calls`
hands them back as records: the senses read attributes of one type whether a call is this
one or an earlier one.

Not a dataclass: `dataclasses` imports `inspect`, a cost every direct hook call would pay
(metacog.event says the same of the payload); not a namedtuple, which compiles its
`__new__` with `eval` when the class is made.
"""

from __future__ import annotations

from operator import itemgetter  # loaded already: json imports re, which imports it

# Kinds of mistake that are the person's decision (an edit rejected, a call interrupted;
# named by metacog.perception.symptoms): the person speaking is not the world answering,
# and no obstacle of the agent's own making.
PERSON = frozenset(("rejected", "interrupted"))
KEY_CAP = 200  # characters of a stored act (metacog.perception.act.KEY_CAP)
INTENT_CAP = 120  # characters of a stored intent (metacog.perception.symptoms.intent)

_FIELDS = (
    "tool",  # the tool's name, "?" when the payload had none
    "target",  # what it acted on, normalized and capped (metacog.perception.action.target_of)
    "ok",  # it exited 0, or its output did not say it failed (metacog.perception.hidden)
    "result",  # checksum of its result: the same call with the same result is a repeat
    "size",  # bytes of context it cost (capped by the payload's own size)
    "ts",  # when its hook fired, in seconds
    "sig",  # the failure's normalized signature, '' for a success
    "mistake",  # the kind of mistake it was (metacog.perception.symptoms.mistake), ''
    "problems",  # the problems a failure names, [sort, checksum, lines, line] each; None: not read
    "agent",  # the subagent that made it, '' for the main agent
    "path",  # the file a file tool named, normalized, ''
    "empty",  # a question (a search, a listing, a read) that came back with nothing
    "waiting",  # a poll of a background job that is still running
    "refused",  # refused before it ran (no hook fired; the transcript told)
    "turn",  # which model response made it (metacog.perception.turns), 0 when unknown
    "prints",  # the fingerprints of its result's lines (metacog.perception.novelty.read)
    "named",  # which of those lines name something
    "act",  # a shell command's identity without its plumbing (metacog.perception.act), ''
    "does",  # what a shell command does, from its whole text: w writes, t tests, s sleeps, b background
    "own",  # the fingerprints of the lines its own sayers print (metacog.perception.novelty.own)
    # What a shell command the person said no to was for (metacog.perception.act.Act.aim: its
    # program and first word, read from the raw command), '' for any other call: Habit and
    # Nociception count the person's no per intent (metacog.perception.symptoms.intent).
    "intent",
)


_INDEX = {name: i for i, name in enumerate(_FIELDS)}


class Call(tuple):
    """What one tool call was. Frozen (a tuple: its fields are read by name, never set; its
    sequences are tuples too), compared by value; `but(...)` gives a copy with some fields
    changed. A tuple rather than slots set one by one: the window's 20 calls are read back
    on every hook call, and building each cost 9 us that way, 1 us this way (measured)."""

    __slots__ = ()

    def __new__(  # noqa: PLR0913, PYI034 - one argument per field; never subclassed
        cls,
        tool: str,
        target: str,
        ok: bool = True,
        result: int = 0,
        size: int = 0,
        ts: float = 0.0,
        sig: str = "",
        mistake: str = "",
        problems: tuple | None = None,
        agent: str = "",
        path: str = "",
        empty: bool = False,
        waiting: bool = False,
        refused: bool = False,
        turn: int = 0,
        prints: tuple = (),
        named: tuple = (),
        act: str = "",
        does: str = "",
        own: tuple = (),
        intent: str = "",
    ) -> Call:
        return tuple.__new__(
            cls,
            (
                tool,
                target,
                ok,
                result,
                size,
                ts,
                sig,
                mistake,
                problems,
                agent,
                path,
                empty,
                waiting,
                refused,
                turn,
                prints,
                named,
                act,
                does,
                own,
                intent,
            ),
        )

    tool: str = property(itemgetter(0))  # type: ignore[assignment]
    target: str = property(itemgetter(1))  # type: ignore[assignment]
    ok: bool = property(itemgetter(2))  # type: ignore[assignment]
    result: int = property(itemgetter(3))  # type: ignore[assignment]
    size: int = property(itemgetter(4))  # type: ignore[assignment]
    ts: float = property(itemgetter(5))  # type: ignore[assignment]
    sig: str = property(itemgetter(6))  # type: ignore[assignment]
    mistake: str = property(itemgetter(7))  # type: ignore[assignment]
    problems: tuple | None = property(itemgetter(8))  # type: ignore[assignment]
    agent: str = property(itemgetter(9))  # type: ignore[assignment]
    path: str = property(itemgetter(10))  # type: ignore[assignment]
    empty: bool = property(itemgetter(11))  # type: ignore[assignment]
    waiting: bool = property(itemgetter(12))  # type: ignore[assignment]
    refused: bool = property(itemgetter(13))  # type: ignore[assignment]
    turn: int = property(itemgetter(14))  # type: ignore[assignment]
    prints: tuple = property(itemgetter(15))  # type: ignore[assignment]
    named: tuple = property(itemgetter(16))  # type: ignore[assignment]
    act: str = property(itemgetter(17))  # type: ignore[assignment]
    does: str = property(itemgetter(18))  # type: ignore[assignment]
    own: tuple = property(itemgetter(19))  # type: ignore[assignment]
    intent: str = property(itemgetter(20))  # type: ignore[assignment]

    @property
    def identity(self) -> str:
        """What "the same call" means, for every reader: the tool and what it acted on, a
        shell command as its act (`ls build 2>/dev/null` is `ls build`)."""
        return f"{self.tool} {self.act or self.target}"

    @property
    def writes(self) -> bool:
        """A shell command that changes files or the repository (read from its whole text)."""
        return "w" in self.does

    @property
    def tests(self) -> bool:
        """A shell command that runs the project's tests."""
        return "t" in self.does

    @property
    def background(self) -> bool:
        """A shell command sent to the background: it started, and passing says only that."""
        return "b" in self.does

    @property
    def sleeps(self) -> bool:
        """A shell command that waits first (`sleep 30 && gh run view`): checking on
        something that takes time, not asking again."""
        return "s" in self.does

    def __getnewargs__(self) -> tuple:
        """What copy and pickle hand `__new__`: the fields, one argument each."""
        return tuple(self)

    def __repr__(self) -> str:
        return f"Call({self.tool!r}, {self.target[:60]!r}, ok={self.ok})"

    def but(self, **changes: object) -> Call:
        """A copy with `changes` (a field the caller knows only later: the model turn)."""
        values = list(self)
        for name, value in changes.items():
            if name not in _INDEX:
                raise TypeError(f"a Call has no field {name!r}")
            values[_INDEX[name]] = value
        return tuple.__new__(Call, values)

    @property
    def step(self) -> tuple:
        """The call with its result: a repeat counts only when the result repeats too
        (polling whose output changes is progress)."""
        return (self.tool, self.act or self.target, self.result)

    @property
    def outcome(self) -> str:
        """How the call ended: "ok", "empty" (a question answered with nothing), "waiting" (a
        background job still running), "interrupted" (the person's no or interrupt, whenever
        it came), "refused" (before it ran), or "failed"."""
        if self.mistake in PERSON:
            return "interrupted"
        if self.refused:
            return "refused"
        if not self.ok:
            return "failed"
        if self.empty:
            return "empty"
        return "waiting" if self.waiting else "ok"

    def record(self, problems: bool = True) -> dict:
        """The stored form (the window's, and replay's record of the call): what a later call
        needs of this one, without the result's fingerprints; `problems` false leaves out the
        problems too. Fields at their default are left out."""
        out: dict = {
            "tool": self.tool,
            "target": self.target,
            "ok": self.ok,
            "result": self.result,
            "size": self.size,
            "ts": self.ts,
        }
        if self.sig:
            out["sig"] = self.sig
        if self.mistake:
            out["mistake"] = self.mistake
        if problems and self.problems is not None:
            out["problems"] = [list(p) for p in self.problems]
        for name in ("agent", "path", "empty", "waiting", "refused", "turn", "does", "intent"):
            value = getattr(self, name)
            if value:
                out[name] = value
        if self.act and self.act != self.target:
            out["act"] = self.act
        return out


def _problems(raw: object) -> tuple | None:
    """A failure's problems as stored; an item of another shape (damage, an older version) is
    left out."""
    if not isinstance(raw, list):
        return None
    return tuple(
        tuple(item)
        for item in raw
        if isinstance(item, list)
        and len(item) == 4
        and isinstance(item[0], str)
        and isinstance(item[1], int)
        and isinstance(item[2], int)
        and isinstance(item[3], str)
    )


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def stored(record: object) -> Call | None:
    """A call back from its stored form (`Call.record`), None for what is not one: a damaged
    state's field of another type reads as its default. Read once per call for each of the
    window's calls: a plain walk over the fields, no helper called per field."""
    if not isinstance(record, dict):
        return None
    get = record.get
    tool, target, sig, mistake, agent, path = (
        get("tool", "?"),
        get("target", ""),
        get("sig", ""),
        get("mistake", ""),
        get("agent", ""),
        get("path", ""),
    )
    result, size, ts, turn = get("result", 0), get("size", 0), get("ts", 0.0), get("turn", 0)
    problems, act, does, aim = get("problems"), get("act", ""), get("does", ""), get("intent", "")
    return tuple.__new__(
        Call,
        (
            tool if isinstance(tool, str) else "?",
            target if isinstance(target, str) else "",
            bool(get("ok", True)),
            result if type(result) is int else 0,
            size if _number(size) else 0,
            ts if _number(ts) else 0.0,
            sig if isinstance(sig, str) else "",
            mistake if isinstance(mistake, str) else "",
            None if problems is None else _problems(problems),
            agent if isinstance(agent, str) else "",
            path if isinstance(path, str) else "",
            get("empty") is True,
            get("waiting") is True,
            get("refused") is True,
            turn if type(turn) is int else 0,
            (),
            (),
            act[:KEY_CAP] if isinstance(act, str) else "",
            does[:8] if isinstance(does, str) else "",
            (),  # own: not stored with the call
            aim[:INTENT_CAP] if isinstance(aim, str) else "",
        ),
    )


# Replay only (metacog.replay sets it for one transcript, in one process): the session's
# state is held as objects between calls (metacog.state.HELD), so the window's records are
# the same dicts from one call to the next. Each is read back (`stored`) once, not at every
# call while the window holds it (a tenth of a replay, profiled): {id: (the record, a copy of
# it, its Call)}, the record held so that its id is not reused, the copy to read it again if
# it changed since (a flat dict: compared in a fraction of what reading it costs).
STORED: dict[int, tuple[dict, dict, Call | None]] | None = None
STORED_CAP = 4096  # records whose Call is kept; emptied when full


def window_calls(win: dict) -> list[Call]:
    """The window's last calls, oldest first, this one last (it is pushed before any sense
    feels); an entry a damaged state holds that is not a call is left out."""
    actions = win.get("actions")
    if not isinstance(actions, list):
        return []
    read = stored if STORED is None else _stored_held
    return [call for call in map(read, actions) if call is not None]


def _stored_held(record: object) -> Call | None:
    """`stored`, read once per record while replay holds the state (STORED)."""
    held = STORED.get(id(record))  # type: ignore[union-attr]
    if held is not None and held[0] is record and held[1] == record:
        return held[2]
    call = stored(record)
    if isinstance(record, dict):
        if len(STORED) >= STORED_CAP:  # type: ignore[arg-type]
            STORED.clear()  # type: ignore[union-attr]
        STORED[id(record)] = (record, dict(record), call)  # type: ignore[index]
    return call
