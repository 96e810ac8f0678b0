"""The lines Reflex says: a resolution recalled, a learned rule recalled, the compaction note.

Pure functions over plain values (no state, no files), so each wording is tested alone.
"""

from __future__ import annotations

from metacog.senses.signal import TEXT_CAP, short

NOTE_CAP = 600  # the compaction note: one block, read once, right after the compaction
HOUR = 3600.0
DAY = 86400.0


def ago(then: float, now: float) -> str:
    gap = max(0.0, now - then)
    if gap < HOUR:
        minutes = max(1, round(gap / 60))
        return f"{minutes} minute{'s' if minutes > 1 else ''} ago"
    if gap < DAY:
        hours = round(gap / HOUR)
        return f"{hours} hour{'s' if hours > 1 else ''} ago"
    days = round(gap / DAY)
    return f"{days} day{'s' if days > 1 else ''} ago"


def how(fix: dict) -> str:
    """'an edit of a.ts, then npx tsc passed' (files relative to the project)."""
    files = [f"{short(f, 60)}" for f in fix["files"]]
    edits = f"an edit of {files[0]}" if len(files) == 1 else "edits of " + ", ".join(files)
    return f"{edits}, then `{short(fix['cmd'], 80)}` passed"


def resolution_line(fix: dict, now: float, same_session: bool) -> str:
    when = "earlier in this session" if same_session else ago(fix["at"], now)
    calls = fix["calls"]
    text = (
        f"this error was resolved here {when} in {calls} call{'s' if calls != 1 else ''}: "
        f"{how(fix)}."
    )
    return short(text, TEXT_CAP)


def unresolved_line(sessions: int) -> str:
    where = "an earlier session" if sessions == 1 else f"{sessions} earlier sessions"
    return f"this error was seen in {where} here, never resolved within the session."


def rule_line(lesson: str) -> str:
    return short(f"a lesson learned in this project applies now: {lesson}", TEXT_CAP)


def compaction_note(unresolved: list[tuple], tried: list[tuple], fixed: list[tuple]) -> str:
    """Before the compaction: what still fails, what was tried more than once, what worked.

    unresolved: (command, error, times); tried: (edited file, error); fixed: (error, fix).
    At most NOTE_CAP characters; '' when nothing failed.
    """
    parts = []
    if unresolved:
        items = [f"`{short(c, 60)}` failed {n}× (`{short(e, 70)}`)" for c, e, n in unresolved]
        parts.append("still unresolved: " + "; ".join(items))
    if tried:
        items = [f"editing {short(f, 50)} did not stop `{short(e, 60)}`" for f, e in tried]
        parts.append("tried without success: " + "; ".join(items))
    if fixed:
        items = [f"`{short(e, 50)}` by {how(fix)}" for e, fix in fixed]
        parts.append("resolved: " + "; ".join(items))
    if not parts:
        return ""
    text = "before the compaction, " + ". ".join(parts) + "."
    return short(text, NOTE_CAP)
