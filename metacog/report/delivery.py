"""Proof of delivery: whether what metacog sent Claude Code was put before the model.

metacog's own record of what it sent is each session's state (`summary.fired`: signals
given, per sense, under the state folder, named by the session id). What reached the model
is in the session's transcript, named by the same id: each hook context Claude Code put
before the model is an `attachment` line of type `hook_additional_context` (FACTS.md),
its text starting `metacog:`.

One line can carry several signals (the senses that spoke on the same call are composed
into one; a subagent's notes ride on the main agent's next line), so lines arriving are
fewer than signals sent in a healthy session. A session whose state says metacog sent
signals and whose transcript holds none of its lines is certain loss: that is what is
flagged, by the report and by `metacog doctor` (`check`).
"""

from __future__ import annotations

import json
import os

from metacog import state

SESSIONS_CAP = 2000  # state files looked at, newest first
STATE_BYTES = 1 << 20
PREFIX = "metacog:"
CHECKED = 20  # `check`: the most recent sessions with signals looked up in the transcripts
# `check` runs in `metacog doctor`, which stays fast on any history: the newest state files
# only, and a transcript read only up to its first metacog line, never past CHECK_BYTES
# (one larger with none of its lines in that stretch is left undecided, not called lost).
CHECK_STATES = 100
CHECK_BYTES = 64 << 20


def sent(state_dir: str, cap: int = SESSIONS_CAP) -> dict[str, int]:
    """Session id -> signals metacog gave in it, from its `cap` newest state files, newest
    first ('{}' when none)."""
    folder = state.sessions_dir(state_dir)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json")]
    except OSError:
        return {}
    names.sort(key=lambda n: _mtime(os.path.join(folder, n)), reverse=True)
    out: dict[str, int] = {}
    for name in names[:cap]:
        try:
            with open(os.path.join(folder, name), "rb") as fh:
                st = json.loads(fh.read(STATE_BYTES))
        except (OSError, ValueError, RecursionError):
            continue  # damaged or half-written: doctor's corrupt-file check names it
        fired = ((st.get("summary") or {}).get("fired") if isinstance(st, dict) else None) or {}
        if isinstance(fired, dict):
            given = sum(v for v in fired.values() if isinstance(v, int) and v > 0)
            if given:
                out[name[: -len(".json")]] = given
    return out


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def session_of(transcript: str) -> str:
    """The session id a transcript is named by (Claude Code: <project folder>/<id>.jsonl)."""
    name = os.path.basename(transcript)
    return state.clean_session_id(name[: -len(".jsonl")] if name.endswith(".jsonl") else name)


def arrived(transcript: str, limit: int = 512 << 20, first: bool = False) -> int:
    """metacog's lines Claude Code put before the model in one transcript (with `first`,
    1 as soon as one is found); -1 when the transcript is longer than `limit` bytes."""
    count = 0
    try:
        with open(transcript, "rb") as fh:
            read = 0
            for line in fh:
                read += len(line)
                if read > limit:
                    return count or -1
                if b"hook_additional_context" not in line:
                    continue
                try:
                    entry = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                attachment = entry.get("attachment") if isinstance(entry, dict) else None
                if not isinstance(attachment, dict):
                    continue
                content = attachment.get("content")
                texts = content if isinstance(content, list) else [content]
                count += sum(1 for t in texts if isinstance(t, str) and t.startswith(PREFIX))
                if first and count:
                    return count
    except OSError:
        return 0
    return count


def compare(sessions: list[dict], given: dict[str, int]) -> dict:
    """The report's delivery figures: for each read session metacog's state knows, signals
    sent against lines arrived (`said`), and the sessions where none arrived."""
    rows = []
    for s in sessions:
        sid = session_of(s["file"])
        if sid in given:
            rows.append({"file": s["file"], "sent": given[sid], "arrived": len(s["said"])})
    lost = [r for r in rows if r["arrived"] == 0]
    return {
        "sessions": len(rows),
        "signals_sent": sum(r["sent"] for r in rows),
        "lines_arrived": sum(r["arrived"] for r in rows),
        "none_arrived": lost[:50],
        "none_arrived_count": len(lost),
    }


def verdict(delivery: dict) -> str:
    if not delivery["sessions"]:
        return ""
    lost = delivery["none_arrived_count"]
    head = (
        f"delivery: in {delivery['sessions']:,} session(s) metacog's state knows, it gave "
        f"{delivery['signals_sent']:,} signal(s) and {delivery['lines_arrived']:,} line(s) reached "
        "the model (one line can carry several)"
    )
    if not lost:
        return head
    return (
        f"{head}; in {lost:,} session(s) none arrived: Claude Code did not put metacog's lines "
        "before the model (an older Claude Code, or the hook's output not read: `metacog doctor`)"
    )


def check(state_dir: str, projects: str) -> str:
    """For `metacog doctor`: '' when the recent sessions' lines arrived, else one line saying
    in how many of them metacog sent signals and none reached the model."""
    given = sent(state_dir, CHECK_STATES)
    looked = lost = 0
    folders = _folders(projects) if given else []
    for sid in given:
        if looked >= CHECKED:
            break
        found = _transcript(folders, sid)
        if not found:
            continue
        lines = arrived(found, CHECK_BYTES, first=True)
        if lines < 0:
            continue
        looked += 1
        lost += lines == 0
    if not lost:
        return ""
    return (
        f"in {lost} of the {looked} latest session(s) where metacog spoke, none of its lines "
        "reached the model (no hook_additional_context in the transcript)"
    )


def _folders(projects: str) -> list[str]:
    try:
        return [os.path.join(projects, name) for name in sorted(os.listdir(projects))]
    except OSError:
        return []


def _transcript(folders: list[str], sid: str) -> str:
    for folder in folders:
        path = os.path.join(folder, sid + ".jsonl")
        if os.path.isfile(path):
            return path
    return ""
