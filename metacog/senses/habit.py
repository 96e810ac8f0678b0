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

import zlib

from metacog.senses import vestibular
from metacog.senses.signal import Signal, memory, peek, short
from metacog.senses.signal import turn as turn_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.nervous import Context

NAME = "habit"
SEEN_CAP = 64  # problems remembered per window, least recently seen dropped first
RUNS_CAP = 16  # commands whose last problems are remembered (to tell a shrinking list)
RERUN_GAP = 20  # calls between two runs of one command that fixing one finding at a time takes
HORIZON = 60  # calls after which a problem or mistake not seen since counts from one again


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    mem = memory(win, NAME)
    seen = mem.get("seen")
    if not isinstance(seen, dict):
        seen = mem["seen"] = {}
    call = zlib.crc32(f"{action['tool']} {action['target']}".encode())
    if action.get("ok", True):
        # The failing command passed: what it showed is fixed. Coming back later is a
        # regression to look at afresh, not the same problem still standing.
        for key in [
            k for k, e in seen.items() if not k.startswith("m ") and _valid(e) and e[5] == call
        ]:
            del seen[key]
        return None
    if vestibular.asked_repeat(win):
        return None  # the person asked for the runs: the same failure again is the answer
    calls = win.get("calls", 0)
    turn = turn_of(action, win)
    due = []
    keys = _keys(action, call)
    if _fewer(mem, action, call):
        keys = [
            k for k in keys if k[0].startswith("m ")
        ]  # some of what it showed got fixed: progress
    for key, text, place in keys:
        entry = seen.pop(key, None)
        if not _valid(entry):
            # occurrences, turn of the last, said, what, places, source, call number of the last
            entry = [0, None, 0, text, [], call, calls]
        if calls - entry[6] > (RERUN_GAP if key.startswith("k ") else HORIZON):
            entry[0] = (
                0  # back after a long stretch of other work: a fresh look, not the next round
            )
        entry[6] = calls
        if entry[1] != turn:
            entry[0], entry[1] = entry[0] + 1, turn
        if place not in entry[4]:
            entry[4] = [*entry[4][-3:], place]
        entry[5] = call
        seen[key] = entry
        if entry[0] >= ctx.cfg[NAME]["at"] and not entry[2]:
            due.append((key, entry))
    while len(seen) > SEEN_CAP:
        del seen[next(iter(seen))]
    if "nociception" in ctx.fired:
        # The streak is being told about this very error: its recurrences are heard.
        for key, _, _ in keys:
            if key in seen:
                seen[key][2] = 1
        return None
    for _, entry in due:
        entry[2] = 1  # one line covers every problem that came due on this call
    if not due:
        return None
    key, entry = due[0]
    nth = ordinal(entry[0])
    if key.startswith("m "):
        from metacog.symptoms import describe

        return Signal(
            NAME,
            f"this is the {nth} time this session: {describe(entry[3])}. What would make it the last?",
        )
    problem = f"`{short(entry[3], 90)}`"
    if key.startswith("k ") and len(entry[4]) > 1:
        return Signal(
            NAME,
            f"`{short(action['target'], 60)}` has failed {entry[0]} times with the same kind of "
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


def _valid(entry: object) -> bool:
    """An entry as feel() writes it (state from an older version or damaged is dropped)."""
    return (
        isinstance(entry, list)
        and len(entry) == 7
        and isinstance(entry[0], int)
        and isinstance(entry[4], list)
        and isinstance(entry[6], int)
        and isinstance(entry[3], str)
    )


def _fewer(mem: dict, action: dict, call: int) -> bool:
    """Whether this command now shows only some of what it showed when it last failed: the
    rest got fixed (a failure count that shrinks is progress, LABELS.md). Remembered per
    command, RUNS_CAP commands."""
    runs = mem.get("runs")
    if not isinstance(runs, dict):
        runs = mem["runs"] = {}
    now = sorted(
        {p[1] for p in action.get("problems") or [] if isinstance(p, list) and len(p) == 4}
    )
    last = runs.pop(str(call), None)
    runs[str(call)] = now
    while len(runs) > RUNS_CAP:
        del runs[next(iter(runs))]
    return isinstance(last, list) and bool(now) and set(now) < set(last)


def _keys(action: dict, call: int) -> list[tuple[str, str, int]]:
    """(key, what it is, place) for each thing this failure may be the recurrence of.

    A refusal is its kind of mistake, on whatever file. A problem line is the same problem
    again when it comes back to the letter (from any command); or, one at a time, when the
    same command lists several of one kind of problem and shows that kind again at a new
    place after each fix (a linter re-run per finding, when its output listed them all).
    """
    from metacog.symptoms import NOT_HABITS  # failures only: a Read need not load it

    if action.get("mistake"):
        mistake = action["mistake"]
        return [] if mistake in NOT_HABITS else [("m " + mistake, mistake, 0)]
    from metacog.symptoms import names_something

    out = []
    for problem in action.get("problems") or []:
        if isinstance(problem, list) and len(problem) == 4:
            sort, place, lines, line = problem
            if not names_something(line):
                continue  # words every failure prints: never "the same problem is back"
            out.append((f"e {place}", line, place))
            if lines > 1:
                out.append((f"k {call} {sort}", sort, place))
    return out


def reading(win: dict, ctx: Context) -> str:
    seen = peek(win, NAME).get("seen") or {}
    most = (
        max((e[0] for e in seen.values() if _valid(e)), default=0) if isinstance(seen, dict) else 0
    )
    return f"one problem seen {most}× this session" if most >= 2 else ""
