"""Every figure of `metacog report`, gathered one replayed session at a time.

A session is *live* when its transcript holds what metacog said (`hook_additional_context`
attachments starting with `metacog:`): those are what it did say. Every other session is
a replay only: what it would have said. A live session where metacog said nothing looks
like one without it; both are the comparison side of "whether it helped".

Only a compact summary of each session is kept (and, for the page, its calls as two
short arrays), so a history of thousands of sessions fits in little memory.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import pairwise
from statistics import mean, median

from metacog.report import episodes, recurring
from metacog.senses import SENSES

MIN_EPISODES = 20  # fewer on either side: no comparison is stated
TIMELINE_CALLS = 5000  # calls drawn per session at most; a longer one is drawn up to there
TEXT_CAP = 400
PROBLEMS_KEPT = (
    200  # per session: the most frequent; a session of thousands of distinct errors is capped
)
# Active time: a pause longer than this (a night, a meeting) counts as this long, as the
# page draws it and as benchmarks/bench_report_loops.py times labelled episodes. Wall clock
# would let one session left open over a weekend outweigh a month of work.
PAUSE = 300.0


def active(times: list[float], t0: float, t1: float) -> float:
    """Seconds of work between t0 and t1: the gaps between consecutive `times` (sorted)
    inside the stretch, each counted PAUSE at most."""
    inside = times[bisect_left(times, t0) : bisect_right(times, t1)]
    return round(sum(min(b - a, PAUSE) for a, b in pairwise(inside)), 3)


def _sense_of(said: dict, by_at: dict[int, list[dict]]) -> str:
    """The sense that said it, from the replay's signal at the same call (the same senses
    ran live); 'note' when the replay has none there (a digest, settings of the time)."""
    here = by_at.get(said["at"]) or []
    same = [s for s in here if s.get("text") == said.get("text")]
    return (same or here or [{"sense": "note"}])[0]["sense"]


def summarize(result: dict, timelines: bool = False, keep_calls: bool = False) -> dict:
    """One replay result as the compact summary the report keeps: run in the worker that
    replayed the file, so only this (not every call) crosses to the process adding up."""
    calls = result.get("calls") or []
    signals = result.get("signals") or []
    said = result.get("said") or []
    live = bool(said)
    by_at: dict[int, list[dict]] = {}
    for signal in signals:
        by_at.setdefault(signal.get("at", -1), []).append(signal)
    for item in said:
        item["sense"] = _sense_of(item, by_at)
    heard = said if live else signals  # what reached the agent, or what would have
    left = {id(item): episodes.left_it(calls, item.get("at", -1)) for item in heard}
    loops = episodes.find(calls, [s["at"] for s in signals if episodes.is_loop(s["sense"])])
    live_loop_at = sorted(s["at"] for s in said if episodes.is_loop(s["sense"]))
    replay_loop_at = sorted(s["at"] for s in signals if episodes.is_loop(s["sense"]))
    times = sorted([c.get("ts", 0.0) for c in calls] + list(result.get("prompts") or []))
    found = []
    for ep in loops:
        order = ep["_order"]
        inside = set(order[order.index(ep["start"]) : order.index(ep["last"]) + 1])
        spoke = next((a for a in live_loop_at if a in inside), None)
        would = next((a for a in replay_loop_at if a in inside), None)
        at = spoke if spoke is not None else would
        kind = "spoke" if spoke is not None else "silent" if would is not None else "unseen"
        t0 = calls[ep["start"]].get("ts", 0.0)
        t1 = calls[ep["end"] if ep["end"] is not None else ep["last"]].get("ts", 0.0)
        found.append(
            {
                "start": ep["start"],
                "last": ep["last"],
                "end": ep["end"],
                "resolved": ep["resolved"],
                "calls": ep["calls"],
                "seconds": ep["seconds"],
                "tokens": ep["tokens"],
                "agent": ep["agent"],
                "problem": ep["problem"],
                "side": kind,
                "spoke_at": at,
                "calls_after": episodes.calls_after(ep, at) if at is not None else None,
                "tokens_after": episodes.tokens_after(calls, ep, at) if at is not None else None,
                "t0": t0,
                "t1": t1,
                "active_seconds": active(times, t0, t1),
                # The loop's call (1: its first) at which a sense spoke or would have.
                "calls_in": order.index(at) - order.index(ep["start"]) + 1
                if at is not None
                else None,
            }
        )
    started = times[0] if times else 0.0
    problems: dict[str, dict] = {}
    for c in calls:
        if not c.get("ok", True):
            row = problems.setdefault(episodes.problem_of(c), _problem_row(c.get("ts", 0.0)))
            row["times"] += 1
            row["last_seen"] = max(row["last_seen"], c.get("ts", 0.0))
    for ep in found:
        row = problems.setdefault(ep["problem"], _problem_row(ep["t0"]))
        row["times"] = max(row["times"], 1)
        row["loops"] += 1
        row["loop_calls"] += ep["calls"]
        row["loop_tokens"] += ep["tokens"]
        row["loop_active_seconds"] = round(row["loop_active_seconds"] + ep["active_seconds"], 3)
    summary = {
        "file": result.get("file", ""),
        "project": result.get("cwd", "") or "(unknown)",
        "started": started,
        "ended": times[-1] if times else 0.0,
        "active_seconds": active(times, started, times[-1]) if times else 0.0,
        "live": live,
        "calls": len(calls),
        "errors": sum(1 for c in calls if not c.get("ok", True)),
        "tokens": result.get("tokens", 0),
        "prompts": len(result.get("prompts") or []),
        "said": [_slim(s, left.get(id(s))) for s in said],
        "would_say": [_slim(s, left.get(id(s))) for s in signals],
        "episodes": found,
        "turn_ends": len(result.get("turn_ends") or []),
        "claims": [_claim(s) for s in signals if s.get("sense") == TURN_END],
        "problems": dict(sorted(problems.items(), key=lambda kv: -kv[1]["times"])[:PROBLEMS_KEPT]),
    }
    if timelines:
        summary["timeline"] = _timeline(
            calls[:TIMELINE_CALLS], started, result.get("prompts") or []
        )
    if keep_calls:
        summary["_ts"] = [c.get("ts", 0.0) for c in calls]
        summary["_agent"] = [c.get("agent", "") for c in calls]
    return summary


TURN_END = "turn-end"  # the replay's name for a turn end's observation (metacog/turn_end.py)


def _claim(signal: dict) -> dict:
    """A turn end whose final message claimed what the session's own last check contradicted:
    the check it names (the observation quotes it first), when, and what was said."""
    text = str(signal.get("text", ""))
    parts = text.split("`")
    return {
        "at": signal.get("at", -1),
        "t": signal.get("t", 0.0),
        "check": parts[1][:TEXT_CAP] if len(parts) > 2 else "",
        "text": text[:TEXT_CAP],
    }


def _problem_row(ts: float) -> dict:
    return {
        "times": 0,
        "loops": 0,
        "loop_calls": 0,
        "loop_tokens": 0,
        "loop_active_seconds": 0.0,
        "first_seen": ts,
        "last_seen": ts,
    }


class Tally:
    def __init__(self, timelines: bool = False, keep_calls: bool = False) -> None:
        self.timelines = timelines
        self.keep_calls = keep_calls
        self.sessions: list[dict] = []
        self.skipped: list[dict] = []
        self.empty = 0
        self.projects: dict[str, dict] = {}
        self.senses = {side: {} for side in ("said", "would")}
        self.after: dict[str, list[int]] = {"spoke": [], "silent": []}
        self.tokens_after: dict[str, list[int]] = {"spoke": [], "silent": []}
        self.open = {"spoke": 0, "silent": 0}
        self.recurring = recurring.Recurring()

    def skip(self, path: str, reason: str) -> None:
        self.skipped.append({"file": path, "reason": reason})

    def add(self, result: dict) -> dict:
        """Fold one replay result in; the session's summary."""
        return self.merge(summarize(result, self.timelines, self.keep_calls))

    def merge(self, summary: dict) -> dict:
        """Fold one session's summary (from `summarize`, perhaps in another process) in."""
        side = self.senses["said" if summary["live"] else "would"]
        for item in summary["said"] if summary["live"] else summary["would_say"]:
            for sense in item["sense"].split("+"):
                row = side.setdefault(sense, {"spoke": 0, "followed": 0, "left": 0})
                row["spoke"] += 1
                if item.get("left") is not None:
                    row["followed"] += 1
                    row["left"] += item["left"]
        for ep in summary["episodes"]:
            kind = ep["side"]
            if kind == "unseen":
                continue
            if ep["calls_after"] is None:
                self.open[kind] += 1
            else:
                self.after[kind].append(ep["calls_after"])
                self.tokens_after[kind].append(ep["tokens_after"] or 0)
        self.recurring.add(summary)
        self.sessions.append(summary)
        project = self.projects.setdefault(summary["project"], _zero())
        _count(project, summary)
        return summary

    def finish(self) -> dict:
        total = _zero()
        for session in self.sessions:
            _count(total, session)
        for row in [total, *self.projects.values()]:
            row["loops_per_100_calls"] = (
                round(row["episodes"] * 100 / row["calls"], 2) if row["calls"] else 0.0
            )
        names = [s.NAME for s in SENSES]
        per_sense = {}
        for side, rows in self.senses.items():
            ordered = {name: rows[name] for name in names if name in rows}
            ordered.update({k: v for k, v in rows.items() if k not in ordered})
            for row in ordered.values():
                row["left_share"] = (
                    round(row["left"] / row["followed"], 3) if row["followed"] else None
                )
            per_sense[side] = ordered
        for session in self.sessions:
            session.pop("problems", None)  # in `recurring`, summed: per session it is noise
        return {
            "totals": total,
            "projects": dict(sorted(self.projects.items(), key=lambda kv: -kv[1]["calls"])),
            "per_sense": per_sense,
            "helped": helped(self.after, self.open, self.tokens_after),
            "would_help": would_help(self.sessions),
            "recurring": self.recurring.finish(),
            "skipped": self.skipped,
            "empty_files": self.empty,
            "sessions": self.sessions,
        }


def _slim(signal: dict, left: bool | None = None) -> dict:
    # A lone surrogate (a transcript's \ud800) is valid JSON but no character: Chromium
    # crashed serializing a page that showed one, so it is written "?" here.
    text = str(signal.get("text", "")).encode("utf-8", "replace").decode("utf-8")
    return {
        "at": signal.get("at", -1),
        "t": signal.get("t", 0.0),
        "sense": signal.get("sense", ""),
        "text": text if len(text) <= TEXT_CAP else text[: TEXT_CAP - 1] + "…",
        "left": left,
    }


def _zero() -> dict:
    return {
        "sessions": 0,
        "live_sessions": 0,
        "calls": 0,
        "errors": 0,
        "tokens": 0,
        "said": 0,
        "would_say": 0,
        "episodes": 0,
        "unresolved": 0,
        "loop_calls": 0,
        "loop_seconds": 0.0,
        "loop_tokens": 0,
        "active_seconds": 0.0,
        "loop_active_seconds": 0.0,
        "turn_ends": 0,
        "claims": 0,  # turn ends that claimed what the session's own last check contradicted
    }


def _count(row: dict, session: dict) -> None:
    row["sessions"] += 1
    row["live_sessions"] += session["live"]
    for key in ("calls", "errors", "tokens"):
        row[key] += session[key]
    row["active_seconds"] = round(row["active_seconds"] + session["active_seconds"], 3)
    row["said"] += len(session["said"])
    row["would_say"] += 0 if session["live"] else len(session["would_say"])
    row["turn_ends"] += session.get("turn_ends", 0)
    row["claims"] += len(session.get("claims") or ())
    for ep in session["episodes"]:
        row["episodes"] += 1
        row["unresolved"] += not ep["resolved"]
        row["loop_calls"] += ep["calls"]
        row["loop_seconds"] = round(row["loop_seconds"] + ep["seconds"], 3)
        row["loop_tokens"] += ep["tokens"]
        row["loop_active_seconds"] = round(row["loop_active_seconds"] + ep["active_seconds"], 3)


def _timeline(calls: list[dict], started: float, prompts: list[float]) -> dict:
    """Each call's time (seconds after the start), whether it failed, and the person's prompts."""
    offsets = array("d", (round(c.get("ts", started) - started, 1) for c in calls))
    return {
        "t": offsets.tolist(),
        "err": "".join("0" if c.get("ok", True) else "1" for c in calls),
        "sub": "".join("1" if c.get("agent") else "0" for c in calls),
        "prompts": [round(p - started, 1) for p in prompts][:1000],
    }


SIDES = {
    "spoke": "loops where metacog was active and spoke about the loop (what it said reached the "
    "agent): counted from the call it spoke after",
    "silent": "loops in sessions without metacog, or where it was silent: counted from the call "
    "after which it would have spoken (the same senses, replayed)",
}


def helped(
    after: dict[str, list[int]],
    still_open: dict[str, int],
    tokens: dict[str, list[int]],
) -> dict:
    """Calls and tokens from metacog speaking about a loop to the loop's end, against the same
    from the point where it would have spoken in sessions where it did not (the same loop
    model on both sides); and what can be said."""
    out: dict = {"min_episodes": MIN_EPISODES}
    for side, values in after.items():
        spent = tokens.get(side) or []
        out[side] = {
            "what": SIDES[side],
            "episodes": len(values) + still_open[side],
            "ended": len(values),
            "still_looping_at_end": still_open[side],
            "median_calls_after": median(values) if values else None,
            "mean_calls_after": round(mean(values), 2) if values else None,
            "median_tokens_after": round(median(spent)) if spent else None,
            "mean_tokens_after": round(mean(spent)) if spent else None,
        }
    spoke, silent = out["spoke"], out["silent"]
    if not spoke["ended"] or not silent["ended"]:
        out["verdict"] = (
            f"nothing to compare yet: {spoke['ended']} ended loop(s) where metacog spoke, "
            f"{silent['ended']} where it was silent or not installed"
        )
    elif min(spoke["ended"], silent["ended"]) < MIN_EPISODES:
        out["verdict"] = (
            f"too few loops to tell: {spoke['ended']} where metacog spoke, {silent['ended']} where it "
            f"was silent or not installed (at least {MIN_EPISODES} each before any comparison)"
        )
    else:
        out["verdict"] = (
            f"after metacog spoke, loops ended a median {spoke['median_calls_after']:g} calls and "
            f"{spoke['median_tokens_after']:,} tokens later ({spoke['ended']} loops), against "
            f"{silent['median_calls_after']:g} calls and {silent['median_tokens_after']:,} tokens "
            f"from where it would have spoken where it was silent or not installed "
            f"({silent['ended']} loops). Different sessions and tasks, not a controlled trial: a "
            "difference is a hint, not proof that metacog caused it"
        )
    return out


def would_help(sessions: list[dict]) -> dict:
    """Where metacog was not active: in how many loops a sense would have spoken, how many
    calls into them, and the share of their calls that came after that point."""
    replayed = [s for s in sessions if not s["live"]]
    loops = [e for s in replayed for e in s["episodes"]]
    spoken = [e for e in loops if e["side"] == "silent" and e.get("calls_in")]
    calls = sum(e["calls"] for e in spoken)
    after = sum(max(0, e["calls"] - e["calls_in"]) for e in spoken)
    return {
        "sessions": len(replayed),
        "loops": len(loops),
        "spoken_in": len(spoken),
        "median_calls_in": median(e["calls_in"] for e in spoken) if spoken else None,
        "calls_after_share": round(after / calls, 3) if calls else None,
    }
