"""The patterns learned across sessions, each a precondition and a failure, read from a session summary.

The precondition says the situation the rule is about arose (errors happened, files
were read, a widely imported file was edited, code was edited, the request named
things to follow); the failure says the loop formed. A session where the failure
happened is a detection; one where an active rule's precondition was met and the
failure did not happen is a suppression (the rule held); a session where the
situation never arose says nothing about the rule. A session's length alone is never
the situation: a long session that never met it did not test the rule, and counting
it as "held" would inflate the rule's confidence. So a precondition that reads a
summary field the session lacks (a summary older than the field) is not
met, and a detector whose failure is seen through a sense that is switched off says
nothing (the failure could not have been seen, so its absence is no evidence).

Rule ids and lesson texts live here, in code: the digest is built from this table
and from counts, never from text found in a store (a project's store is written by
whoever committed it). Their thresholds are config sections named by rule id, with
their defaults in metacog.config.DEFAULTS only.
"""

from __future__ import annotations

import math

from metacog import senses as _senses
from metacog.config import DEFAULTS
from metacog.learning import settings
from metacog.perception.tools import READ_TOOLS, SEARCH_TOOLS, WEB_TOOLS

# Summary fields the detectors read (metacog.summary); anything else there is ignored, and
# one missing reads as 0: a summary written before "wide_edits" (edits to a file with at
# least spatial.min_importers importers, counted whether or not Spatial spoke), "code_edits"
# (edits to code files, as Echo counts them) and "tracked_calls" (main-agent calls under a
# request that named things, once the work had touched one, as Drift follows them) were
# counted says their situations never arose: no evidence.
NUMBERS = (
    "calls",
    "main_calls",
    "errors",
    "reads",
    "edits",
    "searches",
    "bash",
    "prompts",
    "max_error_streak",
    "max_file_reads",
    "max_repeat",
    "max_search_repeat",
    "max_calls_between_prompts",
    "max_minutes_between_prompts",
    "max_context_fill",
    "wide_edits",
    "code_edits",
    "tracked_calls",
    "first_ts",
    "last_ts",
)
SENSES = tuple(sense.NAME for sense in _senses.SENSES)
MOTOR = "motor-learning"  # the config section of the lessons from resolved error streaks
# What judge() makes of a summary, versioned: when it changes, finished sessions whose state is
# still kept are judged again (metacog.learning.evaluate), and evidence they no longer give is
# retracted. 2: preconditions are the situations themselves, never the session's length.
# 3: repeated-mistake (Habit).
VERSION = 3
REPEATED = (
    2  # an identical action with an identical result, twice in a row: a repeat (not a threshold)
)


class Detector:
    """`pre(facts, section)` and `fail(facts, section)`, the section being the config's `[<id>]`.

    `sense` is the sense through which the failure is seen ('' if the summary counts it
    itself): with that sense switched off, the failure cannot happen, so nothing is judged."""

    __slots__ = ("fail", "id", "lesson", "pre", "sense")

    def __init__(self, rule_id: str, sense: str, lesson: str, pre: object, fail: object) -> None:
        self.id, self.sense, self.lesson = rule_id, sense, lesson
        self.pre, self.fail = pre, fail


def _arose(count: float, threshold: float) -> bool:
    """At least `threshold` occurrences, and at least one: a threshold set to 0 does not make
    a situation that never happened count as arisen."""
    return count >= max(threshold, 1)


def _long_run(f: dict, c: dict) -> bool:
    # The agent worked a long stretch without the person (min_calls main-agent calls in one
    # stretch, or run_minutes), not merely a long session: one where the person spoke every
    # few calls never left the agent the chance to run far alone.
    return _arose(f["main_calls"], c["min_calls"]) and (
        _arose(f["max_calls_between_prompts"], c["min_calls"])
        or _arose(f["max_minutes_between_prompts"], c["run_minutes"])
    )


def _long_run_failed(f: dict, c: dict) -> bool:
    return (
        f["max_calls_between_prompts"] >= c["run_calls"]
        or f["max_minutes_between_prompts"] >= c["run_minutes"]
    )


def _fill(f: dict, c: dict) -> bool:
    # The context got full (summary "max_context_fill", 0..1, from the transcript's usage). A
    # session whose fill was never known says nothing: its length is not context pressure.
    return f["max_context_fill"] > 0 and f["max_context_fill"] >= c["min_fill"]


DETECTORS = (
    Detector(
        "error-loop",
        "nociception",
        "When an error repeats, stop retrying variants: read the failing code or its docs first.",
        lambda f, c: _arose(f["errors"], c["min_errors"]),
        lambda f, c: f["max_error_streak"] >= c["streak"],
    ),
    # Errors happened; the failure is one of them coming back a 3rd time with other work
    # between (Habit: the same refusal, the same problem line, one finding fixed per run).
    Detector(
        "repeated-mistake",
        "habit",
        "When a mistake comes back, fix its cause once (read first, check the cwd), not each time.",
        lambda f, c: _arose(f["errors"], c["min_errors"]),
        lambda f, c: f["fired"].get("habit", 0) >= c["fired"],
    ),
    Detector(
        "repeated-reads",
        "vestibular",
        "Note what a file says the first time; re-reading an unchanged file only burns context.",
        lambda f, c: _arose(f["reads"], c["min_reads"]),
        lambda f, c: f["max_file_reads"] >= c["same_file"],
    ),
    Detector(
        "circular-search",
        "vestibular",
        "When a search finds nothing new, change the query or the place instead of re-running it.",
        lambda f, c: _arose(f["searches"], c["min_searches"]),
        lambda f, c: f["max_search_repeat"] >= c["same_search"],
    ),
    # The situation is an action that gave the same result twice, as the lesson says; held when
    # the agent changed something before the same_action'th time.
    Detector(
        "going-in-circles",
        "vestibular",
        "An action that gave the same result twice will give it again: change something first.",
        lambda f, c: _arose(f["calls"], c["min_calls"]) and f["max_repeat"] >= REPEATED,
        lambda f, c: f["max_repeat"] >= c["same_action"],
    ),
    # Counted by the session's windows, Chronos on or off.
    Detector(
        "long-autonomous-run",
        "",
        "On long tasks, check in with the person at milestones instead of running far alone.",
        _long_run,
        _long_run_failed,
    ),
    Detector(
        "write-heavy",
        "",
        "Read the code around a change before editing it; many edits on little reading break things.",
        lambda f, c: _arose(f["edits"], c["min_edits"]),
        lambda f, c: f["edits"] > c["ratio"] * (f["reads"] + f["searches"]),
    ),
    Detector(
        "context-pressure",
        "o2",
        "Keep context lean: read files in parts, filter command output, avoid dumping large results.",
        _fill,
        lambda f, c: f["fired"].get("o2", 0) >= c["fired"],
    ),
    # A widely imported file was edited: not any edit (docs, or a file nothing imports).
    Detector(
        "blast-radius",
        "spatial",
        "Before changing a widely imported file, list its importers and check them after the change.",
        lambda f, c: _arose(f["wide_edits"], c["min_edits"]),
        lambda f, c: f["fired"].get("spatial", 0) >= c["fired"],
    ),
    # Code was edited: Echo counts no docs, config or data edits, so those cannot pile up.
    Detector(
        "untested-edits",
        "echo",
        "Run the tests after a few edits instead of piling up unverified changes.",
        lambda f, c: _arose(f["code_edits"], c["min_edits"]),
        lambda f, c: f["fired"].get("echo", 0) >= c["fired"],
    ),
    # The request named things and the work followed them for a while: Drift has nothing to
    # drift from otherwise.
    Detector(
        "task-drift",
        "drift",
        "Re-read the person's request at milestones: work here has drifted away from it before.",
        lambda f, c: _arose(f["tracked_calls"], c["min_calls"]),
        lambda f, c: f["fired"].get("drift", 0) >= c["fired"],
    ),
)

# Motor learning: how a noticed error streak ended, by what the agent did next.
LESSONS = {
    "resolve-read": "Repeated errors have cleared once the failing code was read instead of re-run.",
    "resolve-docs": "Repeated errors have cleared once the documentation was looked up.",
    "resolve-search": "Repeated errors have cleared once the code base was searched for the cause.",
    "resolve-other-tool": "Repeated errors have cleared by switching to another tool, not by retrying.",
    "resolve-other-target": "Repeated errors have cleared by changing the target (file, command, input).",
    "resolve-fix": "Repeated errors have cleared after a real fix to the cause, then one re-run.",
}
RULES: dict[str, str] = {**{d.id: d.lesson for d in DETECTORS}, **LESSONS}
BY_ID = {d.id: d for d in DETECTORS}
# The config sections the detectors and lessons read: config.DEFAULTS' own entries, not a copy
# (a detector without one fails here, at import, rather than at the first session end).
CONFIG_DEFAULTS: dict[str, dict] = {name: DEFAULTS[name] for name in (*BY_ID, MOTOR)}


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and math.isnan(value):
        return 0
    return min(max(value, 0), 1e12)


def facts(summary: object) -> dict:
    """The summary's numbers (0 where missing or of a wrong type) and `fired` per known sense."""
    summary = summary if isinstance(summary, dict) else {}
    out: dict = {key: _number(summary.get(key)) for key in NUMBERS}
    fired = summary.get("fired")
    fired = fired if isinstance(fired, dict) else {}
    out["fired"] = {name: _number(fired.get(name)) for name in SENSES}
    return out


def enabled(cfg: dict, rule_id: str) -> bool:
    name = MOTOR if rule_id in LESSONS else rule_id
    return name in CONFIG_DEFAULTS and bool(settings.detector(cfg, name)["enabled"])


def strategy(lesson: object) -> str:
    """The lesson rule for one resolved streak {sig, failed, then, same_target}, '' if malformed."""
    if not isinstance(lesson, dict):
        return ""
    failed, then = lesson.get("failed"), lesson.get("then")
    if (
        not isinstance(failed, str)
        or not isinstance(then, str)
        or not isinstance(lesson.get("sig"), str)
    ):
        return ""
    if then in WEB_TOOLS:
        return "resolve-docs"
    if then in READ_TOOLS:
        return "resolve-read"
    if then in SEARCH_TOOLS:
        return "resolve-search"
    if then != failed:
        return "resolve-other-tool"
    return "resolve-fix" if lesson.get("same_target") is True else "resolve-other-target"


def judge(
    summary: object, active: set[str] | frozenset[str], cfg: dict
) -> list[tuple[str, str, str]]:
    """(type, rule id, error signature or '') for each piece of evidence one session gives."""
    f = facts(summary)
    out: list[tuple[str, str, str]] = []
    for det in DETECTORS:
        c = settings.detector(cfg, det.id)
        if not c["enabled"] or (det.sense and not cfg[det.sense]["enabled"]) or not det.pre(f, c):
            continue
        if det.fail(f, c):
            out.append(("detection", det.id, ""))
        elif det.id in active:
            out.append(("suppression", det.id, ""))
    if settings.detector(cfg, MOTOR)["enabled"]:
        lessons = summary.get("lessons") if isinstance(summary, dict) else None
        seen = set()
        for lesson in lessons if isinstance(lessons, list) else ():
            rule = strategy(lesson)
            if rule and (rule, lesson["sig"]) not in seen:
                seen.add((rule, lesson["sig"]))
                out.append(("lesson", rule, lesson["sig"]))
    return out
