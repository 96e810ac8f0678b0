"""Habit: the same problem or mistake coming back across the session, with other work between.

Nociception feels a streak: the same error, attempt after attempt. Real loops are
seldom that tidy: a 403 comes back between successful probes, the same type error
across four builds, an Edit before a Read on a new file every twenty calls, the same
lint finding at the next call site each run. Each time the agent fixes or sidesteps
it and moves on, so no streak forms; the pattern is only visible across the session.
After the 3rd occurrence (each in a different model turn: a parallel batch is one
attempt), one line, once per problem and session.
"""

from __future__ import annotations

from metacog.perception.novelty import call_key
from metacog.perception.tools import EDIT_TOOLS, GUARDED
from metacog.senses.contract import problems_of
from metacog.senses.signal import Signal, memory, peek, quote
from metacog.senses.signal import turn as turn_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "habit"
DEFAULTS = {"enabled": True, "at": 3}
LIMITS = {"at": (2, 1000)}
SEEN_CAP = 64  # problems remembered per window, least recently seen dropped first
RUNS_CAP = 16  # commands whose last problems are remembered (to tell a shrinking list)
RERUN_GAP = 20  # calls between two runs of one command that fixing one finding at a time takes
HORIZON = 60  # calls after which a problem or mistake not seen since counts from one again


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    mem = memory(win, NAME)
    seen = mem.get("seen")
    if not isinstance(seen, dict):
        seen = mem["seen"] = {}
    call = call_key(action)
    unpatched = mem.get("unpatched")
    if not isinstance(unpatched, list):
        unpatched = mem["unpatched"] = []
    if action.ok:
        if action.tool in EDIT_TOOLS:
            unpatched.clear()  # whatever failed before this edit was worked on
        elif call in unpatched:
            # It failed and passed with nothing edited between: a transient failure (a server
            # still booting), forgotten. A pass after an edit does not forget: the same
            # problem back after each fix, patched the same way every time, is the habit.
            unpatched.remove(call)
            for key in [
                k
                for k, raw in seen.items()
                if not k.startswith("m ") and (e := Entry.load(raw)) and e.source == call
            ]:
                del seen[key]
        return None
    if call not in unpatched:
        unpatched.append(call)
        del unpatched[:-RUNS_CAP]
    if ctx.asked_repeat:
        return None  # the person asked for the runs: the same failure again is the answer
    calls = win.get("calls", 0)
    turn = turn_of(action, win)
    due = []
    cwd = ctx.event.cwd if ctx.event is not None else ""
    keys = _keys(action, call, ctx.root, cwd)
    if any(k[0].startswith("e ") and k[0] not in seen for k in keys):
        # Beside a problem line never seen, one seen before that names its subject only by
        # quoting it (``could not compile `core` `` of a workspace member, `script "build"`)
        # frames what is new under it, even where the call did not name that subject
        # (`_keys` drops the frames it did). A line with a path, an identifier or a code of
        # its own (a checker missing on every run) is a problem whatever is beside it.
        from metacog.perception.symptoms import names_only_quoted

        keys = [
            k
            for k in keys
            if not k[0].startswith("e ") or k[0] not in seen or not names_only_quoted(k[1])
        ]
    if _fewer(mem, action, call):
        keys = [
            k for k in keys if k[0].startswith("m ")
        ]  # some of what it showed got fixed: progress
    at = ctx.cfg[NAME]["at"]
    entries: dict[str, Entry] = {}
    for key, text, place in keys:
        entry = (
            entries.get(key)
            or Entry.load(seen.pop(key, None))
            or Entry(0, None, 0, text, [], call, calls)
        )
        seen.pop(key, None)
        seen[key] = None  # re-inserted: the least recently seen stay first, to be dropped first
        if calls - entry.last_call > (RERUN_GAP if key.startswith("k ") else HORIZON) and (
            not key.startswith("m ") or key[2:] not in GUARDED
        ):
            # Back after a long stretch of other work: a fresh look, not the next round (what
            # was said stays said: the count must double again before it is repeated). Not a
            # guard's refusal: the same no all session long, however far apart it is met.
            entry.times = 0
        entry.last_call = calls
        if entry.turn != turn:
            entry.times, entry.turn = entry.times + 1, turn
        if place not in entry.places:
            entry.places = [*entry.places[-3:], place]
        entry.source = call
        entries[key] = entry
        # Said at the `at`-th time, and again each time the count has doubled since: a habit
        # that goes on after it was told is worth one more line (as Vestibular's re-reads).
        if entry.times >= at and (not entry.said or entry.times >= 2 * max(entry.said, at)):
            due.append((key, entry))
    if ctx.streak.count >= at:
        # The same error attempt after attempt is a streak, Nociception's to tell (metacog.facts
        # counts it whether or not that sense is on): its recurrences are heard, not a habit.
        for entry in entries.values():
            entry.said = max(entry.times, at)
        due = []
    for _, entry in due:
        entry.said = entry.times  # one line covers every problem that came due on this call
    for key, entry in entries.items():
        seen[key] = entry.dump()
    while len(seen) > SEEN_CAP:
        del seen[next(iter(seen))]
    if not due:
        return None
    key, entry = due[0]
    nth = ordinal(entry.times)
    if key.startswith("m "):
        from metacog.perception.symptoms import describe

        return Signal(
            NAME,
            f"this is the {nth} time this session: {describe(entry.what)}. What would make it the last?",
        )
    problem = quote(entry.what, 90)
    if key.startswith("k ") and len(entry.places) > 1:
        return Signal(
            NAME,
            f"{quote(action.target, 60)} has failed {entry.times} times with the same kind of "
            f"error at a new place each time: {problem}. The output may show only some: find every "
            "occurrence and fix them together?",
        )
    return Signal(
        NAME,
        f"the same problem is back for the {nth} time this session, with other work between: "
        f"{problem}. What did the attempts between change about it?",
    )


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class Entry:
    """A problem or mistake Habit remembers; on disk the 7-slot list `dump` gives."""

    __slots__ = ("last_call", "places", "said", "source", "times", "turn", "what")

    def __init__(
        self,
        times: int,
        turn: int | None,
        said: int,
        what: str,
        places: list,
        source: int,
        last_call: int,
    ) -> None:
        self.times = times  # occurrences, each in a model turn of its own
        self.turn = turn  # the turn of the last
        self.said = said
        self.what = what
        self.places = places  # the last few places it was seen at
        self.source = source  # the command (crc of tool and target) that showed it last
        self.last_call = last_call  # the window's call number when it was seen last

    @classmethod
    def load(cls, raw: object) -> Entry | None:
        """An entry as `dump` wrote it; None for any other shape (an older version, damage)."""
        if (
            isinstance(raw, list)
            and len(raw) == 7
            and isinstance(raw[0], int)
            and isinstance(raw[2], int)
            and isinstance(raw[3], str)
            and isinstance(raw[4], list)
            and isinstance(raw[6], int)
        ):
            return cls(*raw)
        return None

    def dump(self) -> list:
        return [
            self.times,
            self.turn,
            self.said,
            self.what,
            self.places,
            self.source,
            self.last_call,
        ]


def _fewer(mem: dict, action: Call, call: int) -> bool:
    """Whether this command now shows only some of what it showed when it last failed: the
    rest got fixed (a failure count that shrinks is progress, LABELS.md). Remembered per
    command, RUNS_CAP commands."""
    runs = mem.get("runs")
    if not isinstance(runs, dict):
        runs = mem["runs"] = {}
    now = sorted({p.checksum for p in problems_of(action)})
    last = runs.pop(str(call), None)
    runs[str(call)] = now
    while len(runs) > RUNS_CAP:
        del runs[next(iter(runs))]
    return isinstance(last, list) and bool(now) and set(now) < set(last)


def _keys(action: Call, call: int, *folders: str) -> list[tuple[str, str, int]]:
    """(key, what it is, place) for each thing this failure may be the recurrence of.

    A refusal is its kind of mistake, on whatever file. A problem line is the same problem
    again when it comes back to the letter (from any command); or, one at a time, when the
    same command lists several of one kind of problem and shows that kind again at a new
    place after each fix (a linter re-run per finding, when its output listed them all).
    `folders`: where the call ran (the project's root, the working directory).
    """
    from metacog.perception.symptoms import mistake_key  # failures only: a Read need not load it

    if action.mistake:
        mistake = mistake_key(action)
        return [("m " + mistake, mistake, 0)]
    from metacog.perception.symptoms import FAILED_TEST, names_beyond, names_something, sent_words

    sent = sent_words(action, *folders)
    out = []
    for problem in problems_of(action):
        # A failing test the call ran is the world's answer about it, named as it was asked.
        test = problem.line.startswith(FAILED_TEST)
        if not (names_something(problem.line) if test else names_beyond(problem.line, sent)):
            # Words every failure prints, or only the call said back (`error: script "build"
            # exited with code 1`, `could not compile `shop``): the frame around whatever
            # failed, back on every failure while the work inside it moves, is never "the
            # same problem is back" (issue 24; it replaced a rule that took every line seen
            # before beside an unseen one for a banner, and so missed a tool missing on every
            # run beside the lint findings being fixed).
            continue
        out.append((f"e {problem.checksum}", problem.line, problem.checksum))
        if problem.lines > 1:
            out.append((f"k {call} {problem.sort}", problem.sort, problem.checksum))
    return out


def reading(win: dict, ctx: Context) -> str:
    seen = peek(win, NAME).get("seen")
    entries = [Entry.load(raw) for raw in seen.values()] if isinstance(seen, dict) else []
    most = max((e.times for e in entries if e), default=0)
    return f"one problem seen {most}× this session" if most >= 2 else ""
