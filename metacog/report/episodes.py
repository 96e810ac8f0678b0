"""Stuck episodes and what they cost, from one replayed session's calls and signals.

An episode is bounded as a person bounds a stuck episode (../shared/transcripts/LABELS.md):
from the first occurrence of the repeated problem or action to the point where it is
solved or the agent has clearly moved on. It is found where a loop sense (Nociception,
Habit, Vestibular) spoke or would have spoken, and where an error came back RECUR times
whether or not a sense spoke (the cost is the person's either way).

- A problem (an error): the members are the failures in the same window (the main agent,
  or one subagent) that Nociception calls the same error (`symptoms.identity`: a
  refusal is its kind of mistake, else the signature) or that repeat a failing call's
  tool+target. Up to GAP - 1 calls on other things may lie between two members (fixing
  between attempts, a long stretch of edits before the next run). An obstacle that
  brought nothing new (`stale`: the senses' own reading of the call, whatever its words)
  is a member too when it comes within STALE_GAP calls of the last one: the same wall
  met through varying commands is the same loop to a person; so is, as near, a failure
  of the same kind of mistake whichever call met it: the walls Habit counts by kind
  (`symptoms.BY_KIND`: a command that never returns, a denial), and the agent's own (an
  old_string that matches nothing, on the next file). It begins at the first
  member and ends at the call that ended it: one of the failing calls passing (not for a
  mistake such as a stale old_string: the next Edit passing does not stop the habit), or
  the first of GAP calls in a row without a member (the agent moved on).
- An action (the same call with the same result, a cycle, re-reads): the members are the
  calls on the signal's tool+target and on those of the last CYCLE calls that recur; it
  ends at the first of CYCLE calls without a member.

An episode that still runs when the transcript ends is unresolved: it counts in the
cost, never in "calls until it ended".
"""

from __future__ import annotations

from collections.abc import Callable

from metacog.perception.call import stored
from metacog.perception.symptoms import identity
from metacog.senses import SENSES

LOOP_SENSES = ("nociception", "habit", "vestibular")
# Calls without the problem coming back before the agent has moved on. Hand-labelled stuck
# episodes (../shared/transcripts/LABELS.jsonl) come back after up to 48 calls (a lint
# failure rerun between long stretches of fixing); benchmarks/bench_report_loops.py swept
# 12 to 1000: 12 covered 31% of the labelled calls, 50 covers 72% with 78% of loop calls
# inside a labelled episode, past 50 nothing more is covered (docs/report.md).
GAP = 50
CYCLE = 3  # the longest cycle Vestibular reports; a repeated action's loop ends after it
RESOLVED_BY_A_PASS = ("", "missing-path")  # no mistake, or a path: the same command now works
# A signal about a call that nothing around repeats is no loop to a person (of 26 report
# loops on the first 49 labelled sessions, 14 were one call); LABELS.md asks 3 attempts.
MIN_MEMBERS = 3
RECUR = 4  # an error back this often is a loop even where no sense spoke (precision: 3 was 67%)
PROBLEM_CHARS = 160  # a signature is short already; a target (a command) is cut here
LEAVE_CALLS = 10  # "left it": the next 10 calls do not repeat what was spoken about
# How near the last member an obstacle that brought nothing new must come to join. Swept
# by benchmarks/bench_report_loops.py on the 163 shared sessions (docs/report.md): 5 and
# 10 moved little (46 to 47% of labelled stuck time), 20 covered 52% at 71% precision, 50
# 54% at 54% (stale obstacles of other work, far apart, joined into one loop); 20 covers 54%
# at 70% with the fourth round's other changes. On the 243 (issue 39) benchmarks/fit_loops.py
# fits it with GAP and RECUR: 40 (RECUR 3) wins in-sample, 66.5% at 55.9%, through one file's
# hung command 37 calls on; left one repository out 59.8% at 51.0%, below 20's 54.4% at 60.9%.
STALE_GAP = 20
SAME, NOTHING_NEW = 2, 1  # how a call joins a loop: its problem, or only as a stale obstacle
# What "brought nothing new" means: Nociception's own thresholds (at their defaults), so
# the report's loops are found from the facts the senses feel.
_PAIN = next(sense.DEFAULTS for sense in SENSES if sense.NAME == "nociception")
STALE_GAIN, STALE_NEWS = _PAIN["stale_gain"], _PAIN["stale_news"]


def is_loop(sense: str) -> bool:
    return any(part in LOOP_SENSES for part in sense.split("+"))


def _key(call: dict) -> tuple[str, str]:
    """The call's identity in replay's record (a shell command as its act, plumbing aside:
    metacog.perception.call.Call.identity)."""
    return call.get("tool", ""), call.get("act") or call.get("target", "")


def _identity(call: dict) -> str:
    """Nociception's identity of a failure, from replay's record of the call."""
    record = stored(call)
    return identity(record) if record is not None else ""


def blocked(call: dict) -> bool:
    """The call met an obstacle: it failed, or (metacog.perception.novelty) a question came
    back empty, or it passed showing only an earlier failure; replay gives each call the hook
    felt its `obstacle`."""
    return not call.get("ok", True) or bool(call.get("obstacle"))


def stale(call: dict) -> bool:
    """An obstacle whose result brought nothing the session had not shown lately."""
    return (
        bool(call.get("obstacle"))
        and call.get("gain", 1.0) <= STALE_GAIN
        and call.get("news", 0) <= STALE_NEWS
    )


def problem_of(call: dict) -> str:
    """What a person would name as the problem a call shows, the same across sessions: the
    kind of mistake ("old-string-mismatch", "blocked Bash"), else the error's normalized
    signature; for a question that found nothing, "nothing found by" its tool and target;
    for a call that passed showing only an earlier failure, "an earlier failure shown by"
    its tool and target; for a passing call (a repeated action), "repeated" and its tool and
    target."""
    if not call.get("ok", True):
        return call.get("mistake") or call.get("sig", "")[:PROBLEM_CHARS] or "error"
    target = str(call.get("target", ""))
    if call.get("empty"):
        return f"nothing found by {call.get('tool', '')} {target[:PROBLEM_CHARS]}".rstrip()
    if call.get("obstacle"):
        shown = f"an earlier failure shown by {call.get('tool', '')} {target[:PROBLEM_CHARS]}"
        return shown.rstrip()
    return f"repeated {call.get('tool', '')} {target[:PROBLEM_CHARS]}".rstrip()


def _window(calls: list[dict], agent: str) -> list[int]:
    return [i for i, c in enumerate(calls) if c.get("agent", "") == agent]


def find(calls: list[dict], loop_at: list[int]) -> list[dict]:
    """The episodes around the calls `loop_at` (indexes into `calls` where a loop sense
    spoke) and around every error that came back RECUR times, in order; a signal or a
    recurrence at a member of an episode already found joins it. Two loops of one window may
    overlap: a person labels interleaved problems as two loops (templar's refused edits and
    its bodyclose lint, LABELS.jsonl), so they stay two."""
    episodes: list[dict] = []
    windows: dict[str, list[int]] = {}
    # Each failure's identity once: a session of thousands of calls and many signals would
    # otherwise compute it again for every call each episode scans.
    idents = [_identity(c) if not c.get("ok", True) else "" for c in calls]
    for at in sorted(set(_anchors(calls, loop_at)) | set(recurrences(calls, idents))):
        if not 0 <= at < len(calls):
            continue
        agent = calls[at].get("agent", "")
        # A signal at a call of a loop found already is that loop's; one at another problem
        # inside its stretch (a lint failing between refused edits) is a loop of its own.
        if any(e["agent"] == agent and at in e["_members"] for e in episodes):
            continue
        order = windows.setdefault(agent, _window(calls, agent))
        episode = _around(calls, order, order.index(at), agent, idents)
        if episode["members"] >= MIN_MEMBERS:
            episodes.append(episode)
    return episodes


def _anchors(calls: list[dict], loop_at: list[int]) -> list[int]:
    """Where each signal's problem is: Habit and Nociception can speak after the call that
    showed it (a Read after the refused Edit), so a passing call with a failure among the
    CYCLE calls before it in its window stands for that failure."""
    out = []
    for at in loop_at:
        if not 0 <= at < len(calls) or blocked(calls[at]):
            out.append(at)  # the call met the obstacle itself (an empty answer included)
            continue
        agent, seen, found = calls[at].get("agent", ""), 0, at
        for i in range(at - 1, -1, -1):
            if calls[i].get("agent", "") != agent:
                continue
            seen += 1
            if not calls[i].get("ok", True):
                found = i
                break
            if seen >= CYCLE:
                break
        out.append(found)
    return out


def recurrences(calls: list[dict], idents: list[str]) -> list[int]:
    """The calls where an error came back for the RECUR-th time in its window, each
    return within GAP calls of the one before: a loop whether or not a sense spoke."""
    out = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}  # (agent, identity) -> (count, position)
    position: dict[str, int] = {}
    for i, c in enumerate(calls):
        agent = c.get("agent", "")
        pos = position[agent] = position.get(agent, -1) + 1
        if c.get("ok", True):
            continue
        key = (agent, idents[i])
        count, before = seen.get(key, (0, pos))
        count = count + 1 if pos - before <= GAP else 1
        seen[key] = (count, pos)
        if count == RECUR:
            out.append(i)
    return out


def _problem_member(
    calls: list[dict], here: dict, ident: str, idents: list[str], tried: set
) -> Callable[[int, int], int]:
    """How a call joins the loop around the obstacle `here` (SAME, NOTHING_NEW or 0), `gap`
    calls after the last member; `tried` grows with the calls that met the same problem."""
    # The loop's kind of mistake, as the report names its problem (`problem_of`): Nociception
    # keeps one identity per file for an Edit's old_string (three files, three slips), but the
    # same slip on the next file while the first is still being fought is the same loop.
    kind = here.get("mistake", "")

    def member(i: int, gap: int) -> int:
        c = calls[i]
        # An empty answer has no identity: only its own call is its problem.
        if not c.get("ok", True) and ((ident and idents[i] == ident) or _key(c) in tried):
            return SAME
        if kind and c.get("mistake") == kind and gap < STALE_GAP:
            # The same wall or slip whichever call met it (Habit counts walls by kind: a
            # command that never returns, a denial), near enough to be the same stretch.
            return NOTHING_NEW
        return NOTHING_NEW if stale(c) and gap < STALE_GAP else 0

    return member


def _around(calls: list[dict], order: list[int], pos: int, agent: str, idents: list[str]) -> dict:
    """The episode around the call at `pos` of its window `order`."""
    here = calls[order[pos]]
    failing = blocked(here)
    if failing:
        tried = {_key(here)}
        gap_cap = GAP
        member = _problem_member(calls, here, idents[order[pos]], idents, tried)
    else:
        recent = [_key(calls[i]) for i in order[max(0, pos - 2 * CYCLE + 1) : pos + 1]]
        tried = {key for key in recent[-CYCLE:] if recent.count(key) >= 2} | {_key(here)}
        gap_cap = CYCLE

        def member(i: int, gap: int) -> int:
            return SAME if _key(calls[i]) in tried else 0

    # The very call that failed now works: the problem is solved. Not for a mistake of the
    # agent's (an Edit refused for a stale old_string): the next Edit of the file passing
    # does not stop the agent guessing the same way again.
    resolvable = failing and here.get("mistake", "") in RESOLVED_BY_A_PASS

    def passes(c: dict) -> bool:
        return resolvable and not blocked(c) and _key(c) in tried

    first, gap, members = pos, 0, 1
    held = {order[pos]}  # the members' places in `calls`
    for p in range(pos - 1, -1, -1):
        c = calls[order[p]]
        if joined := member(order[p], gap):
            first, gap, members = p, 0, members + 1
            held.add(order[p])
            if joined == SAME:  # another way of the same problem; a stale member only joins
                tried.add(_key(c))
        elif passes(c) or gap + 1 >= gap_cap:
            break
        else:
            gap += 1
    last, end, gap = pos, None, 0  # end: the position of the call that ended it
    for p in range(pos + 1, len(order)):
        c = calls[order[p]]
        if joined := member(order[p], gap):
            last, gap, members = p, 0, members + 1
            held.add(order[p])
            if joined == SAME:
                tried.add(_key(c))
        elif passes(c):
            end = p
            break
        else:
            gap += 1
            if gap >= gap_cap:
                end = last + 1  # the first of gap_cap calls without it: the agent moved on
                break
    start_i, last_i = order[first], order[last]
    end_i = order[end] if end is not None else None
    stop = end_i if end_i is not None else last_i
    t0 = calls[start_i].get("ts", 0.0)
    return {
        "agent": agent,
        "problem": problem_of(here),
        "members": members,
        "start": start_i,
        "last": last_i,
        "end": end_i,
        "resolved": end_i is not None,
        "calls": (end if end is not None else last + 1) - first,
        "seconds": round(max(0.0, calls[stop].get("ts", t0) - t0), 3),
        "tokens": sum(
            calls[i].get("tokens", 0)
            for i in order[first + 1 : (end if end is not None else last) + 1]
        ),
        "_order": order,
        "_members": held,
    }


def calls_after(episode: dict, at: int) -> int | None:
    """Calls of the episode's window from the one at `at` to the one that ended it (1: the
    very next call broke the loop); None when it never ended."""
    if episode["end"] is None:
        return None
    order = episode["_order"]
    return order.index(episode["end"]) - order.index(at) if at in order else None


def tokens_after(calls: list[dict], episode: dict, at: int) -> int | None:
    """The tokens of the calls after `at` up to the one that ended the episode (each call's
    tokens are those of the responses that led to it); None when it never ended."""
    if episode["end"] is None or at not in episode["_order"]:
        return None
    order = episode["_order"]
    return sum(
        calls[i].get("tokens", 0)
        for i in order[order.index(at) + 1 : order.index(episode["end"]) + 1]
    )


def left_it(calls: list[dict], at: int) -> bool | None:
    """Whether the agent left what a signal spoke after: none of the next LEAVE_CALLS calls of
    its window repeats it (after an error: the same error, or the same call failing again;
    after a passing call: the same tool+target). None when no call followed. A course measure with room both ways: in replayed sessions of the
    shared transcripts the senses' loop signals were followed by leaving in well under half
    the cases (benchmarks/bench_report_loops.py prints it), where "changed course within 3
    calls", its predecessor, was 92 to 100% with nothing said."""
    if not 0 <= at < len(calls):
        return None
    here = calls[at]
    agent = here.get("agent", "")
    failing = not here.get("ok", True)
    ident = _identity(here) if failing else ""
    seen = 0
    for i in range(at + 1, len(calls)):
        c = calls[i]
        if c.get("agent", "") != agent:
            continue
        seen += 1
        if failing:
            again = not c.get("ok", True) and (_key(c) == _key(here) or _identity(c) == ident)
        else:
            again = _key(c) == _key(here)
        if again:
            return False
        if seen >= LEAVE_CALLS:
            break
    return True if seen else None
