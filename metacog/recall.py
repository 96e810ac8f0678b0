"""What Reflex recalls, and the lines it says: a resolution, a learned rule, the compaction note.

The lines are pure functions over plain values (no state, no files), so each wording is
tested alone. The learning layer's answers (the resolutions store, the rules the digest
showed, their lessons) are asked here too: Reflex gets this module in the Context
(`ctx.recall`, from metacog.nervous) and imports no learning module, since the learning
layer reads the senses (its detectors, the sense names). Each asks when called: a failure,
an edit, never a Read.
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


def rule_line(lesson: str, matched: str) -> str:
    """The rule said with the situation it matched (`matched`: the call and what it met); a
    rule that names nothing of the situation at hand is noise, so none without one."""
    if not matched:
        return ""
    return short(f"{matched}; a lesson learned in this project applies now: {lesson}", TEXT_CAP)


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


def key(identity: str) -> str:
    """The problem a failure's identity is, as the resolutions store keys it."""
    from metacog.learning.resolutions import key as problem_key

    return problem_key(identity)


def session_hash(session_id: str) -> str:
    from metacog.learning.resolutions import session_hash as short_hash

    return short_hash(session_id)


def resolved(root: str, problem: str, sig: str, fix: dict, now: float, was: str = "") -> None:
    """Remember how the problem was resolved in this project (OSError, ValueError: not); `was`:
    the key it had before (metacog.learning.resolutions._update)."""
    from metacog.learning import resolutions

    resolutions.resolved(root, problem, sig, fix, now, was)


def met(
    root: str, problem: str, sig: str, session_id: str, now: float, was: str = ""
) -> dict | None:
    """The problem came back in this session: what the project knew of it before; `was`: the
    key it had before (metacog.learning.resolutions._update)."""
    from metacog.learning import resolutions

    return resolutions.met(root, problem, sig, session_id, now, was)


def active_rules(state_dir: str, session_id: str) -> set[str]:
    """The rule ids the session's digest showed at its first prompt."""
    from metacog.learning.digest import read_active

    return read_active(state_dir, session_id)


def lesson(rule_id: str) -> str:
    from metacog.learning.detectors import RULES

    return RULES[rule_id]
