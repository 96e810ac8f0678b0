"""Stuck episodes and course changes, from one replayed session's calls and signals.

An episode is the senses' own judgement, not a second detector: it exists only where a
loop sense (Nociception, Habit, Vestibular) spoke, or would have spoken, in the replay.

- On an error (the call it spoke after failed): the members are the failures, in the
  same window (the main agent, or one subagent), that Nociception calls the same error
  (`symptoms.identity`) or that repeat a failing call's tool+target (the same
  command failing again with a new finding). Up to GAP - 1 calls on other things may
  lie between two members (reads, edits, other errors: fixing between attempts). It
  begins at the first member and ends at the call that ended it: one of the failing
  calls passing, or the first of GAP calls in a row without a member (the agent changed
  approach).
- On a success (the same action with the same result, a cycle, re-reads): the members
  are the calls on the signal's tool+target and on those of the last CYCLE calls that
  recur; it ends at the first of CYCLE calls without a member.

An episode that still runs when the transcript ends is unresolved: it counts in the
cost, never in "calls until it ended".
"""

from __future__ import annotations

from metacog.symptoms import identity

LOOP_SENSES = ("nociception", "habit", "vestibular")
GAP = 12  # hand-labelled loops (../shared/transcripts/LABELS.md) rerun every 4 to 11 calls
CYCLE = 3  # the longest cycle Vestibular reports
COURSE_CALLS = 3  # "changed course within 3 calls"
COURSE_LOOKBACK = 5  # what counts as the course: the tool+targets of the calls up to the signal


def is_loop(sense: str) -> bool:
    return any(part in LOOP_SENSES for part in sense.split("+"))


def _key(call: dict) -> tuple[str, str]:
    return call.get("tool", ""), call.get("target", "")


def _identity(call: dict) -> str:
    return identity(call)


def _window(calls: list[dict], agent: str) -> list[int]:
    return [i for i, c in enumerate(calls) if c.get("agent", "") == agent]


def find(calls: list[dict], loop_at: list[int]) -> list[dict]:
    """The episodes around the calls `loop_at` (indexes into `calls` where a loop sense
    spoke), in order; a signal inside an episode already found joins it."""
    episodes: list[dict] = []
    windows: dict[str, list[int]] = {}
    for at in sorted(set(loop_at)):
        if not 0 <= at < len(calls):
            continue
        agent = calls[at].get("agent", "")
        if any(e["agent"] == agent and e["start"] <= at <= e["last"] for e in episodes):
            continue
        order = windows.setdefault(agent, _window(calls, agent))
        episodes.append(_around(calls, order, order.index(at), agent))
    return episodes


def _around(calls: list[dict], order: list[int], pos: int, agent: str) -> dict:
    here = calls[order[pos]]
    failing = not here.get("ok", True)
    if failing:
        ident = _identity(here)
        tried = {_key(here)}
        gap_cap = GAP

        def member(c: dict) -> bool:
            return not c.get("ok", True) and (_identity(c) == ident or _key(c) in tried)
    else:
        recent = [_key(calls[i]) for i in order[max(0, pos - 2 * CYCLE + 1) : pos + 1]]
        tried = {key for key in recent[-CYCLE:] if recent.count(key) >= 2} | {_key(here)}
        gap_cap = CYCLE

        def member(c: dict) -> bool:
            return _key(c) in tried

    def passes(c: dict) -> bool:  # the very call that failed now works
        return failing and c.get("ok", True) and _key(c) in tried

    first, gap = pos, 0
    for p in range(pos - 1, -1, -1):
        c = calls[order[p]]
        if member(c):
            first, gap = p, 0
            tried.add(_key(c))
        elif passes(c) or gap + 1 >= gap_cap:
            break
        else:
            gap += 1
    last, end, gap = pos, None, 0  # end: the position of the call that ended it
    for p in range(pos + 1, len(order)):
        c = calls[order[p]]
        if member(c):
            last, gap = p, 0
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
    }


def calls_after(episode: dict, at: int) -> int | None:
    """Calls of the episode's window from the one at `at` to the one that ended it (1: the
    very next call broke the loop); None when it never ended."""
    if episode["end"] is None:
        return None
    order = episode["_order"]
    return order.index(episode["end"]) - order.index(at) if at in order else None


def changed_course(calls: list[dict], at: int) -> bool | None:
    """Whether one of the next COURSE_CALLS calls of the same window acts on a tool+target
    none of the COURSE_LOOKBACK calls up to `at` did; None when no call followed."""
    if not 0 <= at < len(calls):
        return None
    agent = calls[at].get("agent", "")
    before: list[tuple[str, str]] = []
    for i in range(at, -1, -1):
        if calls[i].get("agent", "") == agent:
            before.append(_key(calls[i]))
            if len(before) >= COURSE_LOOKBACK:
                break
    after = []
    for i in range(at + 1, len(calls)):
        if calls[i].get("agent", "") == agent:
            after.append(_key(calls[i]))
            if len(after) >= COURSE_CALLS:
                break
    if not after:
        return None
    return any(key not in before for key in after)
