"""One tool call as perception read it: a frozen record, built once per call.

metacog.perception.action builds it from the hook's payload (or from a refused call the transcript
tells); the facts, every sense, the session summary and replay read it, and nothing reads
the payload again for the same facts. The window keeps the last calls in their stored form
(`record`, a plain dict in the session's JSON state), and `Window.calls` hands them back as
records: the senses read attributes of one type whether a call is this one or an earlier one.

A plain class with slots, not a dataclass: `dataclasses` imports `inspect`, a cost every
direct hook call would pay (metacog.event says the same of the payload).
"""

from __future__ import annotations

# Kinds of mistake that are the person's decision (an edit rejected, a call interrupted; named
# by metacog.perception.symptoms): the person speaking is not the world answering, and no obstacle of the
# agent's own making.
PERSON = frozenset(("rejected", "interrupted"))

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
)


class Call:
    """What one tool call was. Frozen: `but(...)` gives a copy with some fields changed."""

    __slots__ = _FIELDS

    def __init__(  # noqa: PLR0913 - one argument per field of the record
        self,
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
    ) -> None:
        put = object.__setattr__
        put(self, "tool", tool)
        put(self, "target", target)
        put(self, "ok", ok)
        put(self, "result", result)
        put(self, "size", size)
        put(self, "ts", ts)
        put(self, "sig", sig)
        put(self, "mistake", mistake)
        put(self, "problems", problems)
        put(self, "agent", agent)
        put(self, "path", path)
        put(self, "empty", empty)
        put(self, "waiting", waiting)
        put(self, "refused", refused)
        put(self, "turn", turn)
        put(self, "prints", prints)
        put(self, "named", named)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Call is frozen: {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Call is frozen: {name}")

    def __repr__(self) -> str:
        return f"Call({self.tool!r}, {self.target[:60]!r}, ok={self.ok})"

    def but(self, **changes: object) -> Call:
        """A copy with `changes` (a field the caller knows only later: the model turn)."""
        fields = {name: getattr(self, name) for name in _FIELDS}
        fields.update(changes)
        return Call(**fields)  # type: ignore[arg-type]

    @property
    def step(self) -> tuple:
        """The call with its result: a repeat counts only when the result repeats too
        (polling whose output changes is progress)."""
        return (self.tool, self.target, self.result)

    @property
    def outcome(self) -> str:
        """How the call ended: "ok", "empty" (a question answered with nothing), "waiting" (a
        background job still running), "refused" (before it ran), "interrupted" (the person's
        no or interrupt), or "failed"."""
        if self.refused:
            return "refused"
        if self.mistake in PERSON:
            return "interrupted"
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
        for name in ("agent", "path", "empty", "waiting", "refused", "turn"):
            value = getattr(self, name)
            if value:
                out[name] = value
        return out


def _text(record: dict, key: str, default: str = "") -> str:
    value = record.get(key)
    return value if isinstance(value, str) else default


def _int(record: dict, key: str) -> int:
    value = record.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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


def stored(record: object) -> Call | None:
    """A call back from its stored form (`Call.record`), None for what is not one: a damaged
    state's field of another type reads as its default."""
    if not isinstance(record, dict):
        return None
    size = record.get("size")
    ts = record.get("ts")
    return Call(
        _text(record, "tool", "?"),
        _text(record, "target"),
        ok=bool(record.get("ok", True)),
        result=_int(record, "result"),
        size=size if isinstance(size, (int, float)) and not isinstance(size, bool) else 0,
        ts=ts if isinstance(ts, (int, float)) and not isinstance(ts, bool) else 0.0,
        sig=_text(record, "sig"),
        mistake=_text(record, "mistake"),
        problems=_problems(record.get("problems")),
        agent=_text(record, "agent"),
        path=_text(record, "path"),
        empty=record.get("empty") is True,
        waiting=record.get("waiting") is True,
        refused=record.get("refused") is True,
        turn=_int(record, "turn"),
    )


def window_calls(win: dict) -> list[Call]:
    """The window's last calls, oldest first, this one last (it is pushed before any sense
    feels); an entry a damaged state holds that is not a call is left out."""
    actions = win.get("actions")
    if not isinstance(actions, list):
        return []
    return [call for call in map(stored, actions) if call is not None]
