"""Session-wide aggregates, kept beside the rolling windows, for learning across sessions.

The windows hold only the last few actions; the pattern detectors (metacog.learning)
need what happened over the whole session: how many errors and how long the worst
streak, the most reads of one unchanged file, the longest run without the person.
Small and bounded: counters, a few maxima, a capped list of lessons.
"""

from __future__ import annotations

from metacog.perception.action import is_code
from metacog.perception.tools import EDIT_TOOLS, READ_TOOLS, SEARCH_TOOLS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

SCHEMA = 1
LESSONS_CAP = 20
# What the summary counts as a search: the project's searches and a web search, whose same
# query answered the same way again is a search in circles too (the circular-search pattern).
SEARCHES = (*SEARCH_TOOLS, "WebSearch")


def new() -> dict:
    return {
        "v": SCHEMA,
        "calls": 0,  # every tool call, subagents included
        "main_calls": 0,  # tool calls of the main agent
        "errors": 0,
        "reads": 0,
        "edits": 0,
        "searches": 0,
        "bash": 0,
        "prompts": 0,  # times the person spoke (task notifications excluded)
        "max_error_streak": 0,  # most similar errors in a row (Nociception's count)
        "max_file_reads": 0,  # most reads of one unchanged file (Vestibular)
        "max_repeat": 0,  # most repeats of one identical action with an identical result
        "max_search_repeat": 0,  # most repeats of one identical search
        "max_calls_between_prompts": 0,  # longest autonomous run, in main-agent calls
        "max_minutes_between_prompts": 0.0,
        "max_context_fill": 0.0,  # the fullest the context got, as a fraction of the window (O2)
        "code_edits": 0,  # successful edits of code files (what Echo counts)
        "wide_edits": 0,  # edits of files that many others import (where their reach was asked)
        "tracked_calls": 0,  # main-agent calls after the work touched what the request named (Drift)
        "fired": {},  # sense -> signals given
        "turn_end_claims": 0,  # turn ends whose claim the session's own last check contradicted
        "lessons": [],  # nociceptive episodes that resolved: {sig, failed, then, same_target}
        "first_ts": 0.0,
        "last_ts": 0.0,
    }


def get(state: dict) -> dict:
    summary = state.get("summary")
    if not isinstance(summary, dict) or summary.get("v") != SCHEMA:
        summary = state["summary"] = new()
    return summary


def bump_max(summary: dict, key: str, value: float) -> None:
    if value > summary.get(key, 0):
        summary[key] = value


def observe(summary: dict, action: Call, ctx: Context) -> None:
    """Fold one tool call into the summary, from the call's facts (metacog.facts): the same
    whichever senses are enabled."""
    tool = action.tool
    summary["calls"] += 1
    if not summary["first_ts"]:
        summary["first_ts"] = action.ts
    summary["last_ts"] = action.ts
    if not action.ok:
        summary["errors"] += 1
    if tool in READ_TOOLS:
        summary["reads"] += 1
    elif tool in EDIT_TOOLS:
        summary["edits"] += 1
        if action.ok and is_code(action.path):
            summary["code_edits"] = summary.get("code_edits", 0) + 1
    elif tool in SEARCHES:
        summary["searches"] += 1
    elif tool == "Bash":
        summary["bash"] += 1
    bump_max(summary, "max_error_streak", ctx.streak.count)
    bump_max(summary, "max_file_reads", ctx.max_reads)
    if not ctx.asked_repeat:  # repetition the person asked for is not circling
        bump_max(summary, "max_repeat", ctx.repeat)
        if tool in SEARCHES:
            bump_max(summary, "max_search_repeat", ctx.repeat)
    if ctx.is_main:
        summary["main_calls"] += 1
        if ctx.following:
            summary["tracked_calls"] = summary.get("tracked_calls", 0) + 1
        bump_max(summary, "max_calls_between_prompts", ctx.win.get("prompt_calls", 0))
        # Minutes of work (idle pauses and subagent time left out, metacog.facts).
        bump_max(summary, "max_minutes_between_prompts", round(ctx.active_s / 60, 1))


def fired(summary: dict, sense: str) -> None:
    summary["fired"][sense] = summary["fired"].get(sense, 0) + 1


def lesson(summary: dict, note: dict) -> None:
    lessons = summary["lessons"]
    lessons.append({k: note[k] for k in ("sig", "failed", "then", "same_target") if k in note})
    if len(lessons) > LESSONS_CAP:
        del lessons[0]
