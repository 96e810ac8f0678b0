"""Each finished session evaluated exactly once: at SessionEnd, or when the next one of its project starts.

A session is finished when SessionEnd arrived (its `.ended` mark) or when its state
has not been updated for `stale_after_minutes`. Evaluation runs under a lock per
session and leaves a `.done` mark, so SessionEnd racing the next SessionStart
evaluates it once; were a writer killed between its evidence and its mark, the
evidence carries the session's hash and the tally counts it once.

The marks live in `<state dir>/learning/marks/`, named by session id, so sessions
of one project never touch each other's; a mark is collected only once its
session's state is gone (otherwise a collected `.done` would let the session be
evaluated again).
"""

from __future__ import annotations

import math
import os

from metacog import fastjson, state
from metacog.fsutil import atomic_write, ensure_dir, locked, log_error
from metacog.learning import detectors, digest, scopes, settings, store

MARK_GC_AGE_S = 24 * 3600
CACHE_GC_AGE_S = 30 * 24 * 3600
DAY = 86400.0


def _mark(state_dir: str, session_id: str, kind: str) -> str:
    return os.path.join(digest.marks_dir(state_dir), f"{session_id}.{kind}")


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and math.isnan(value):
        return 0.0
    return float(value)


def evaluate(state_dir: str, session_id: str, root_hint: str, cfg: dict, now: float) -> bool:
    """Turn one session's summary into evidence, once. True if this call evaluated it."""
    sid = state.clean_session_id(session_id)
    if not sid:
        return False
    done = _mark(state_dir, sid, "done")
    if os.path.lexists(done):
        return False
    ensure_dir(digest.marks_dir(state_dir))
    with locked(done, timeout=10.0):
        if os.path.lexists(done):
            return False  # the racing hook finished it while we waited
        st = state.read(state_dir, sid) or {}
        root = st.get("root") if isinstance(st.get("root"), str) and st.get("root") else root_hint
        summary = st.get("summary")
        written = 0
        if isinstance(summary, dict) and root:
            written = _record(state_dir, sid, root, st, summary, cfg, now)
        atomic_write(done, fastjson.dumps({"v": 1, "at": now, "root": root, "records": written}))
    return True


def _record(state_dir: str, sid: str, root: str, st: dict, summary: dict, cfg: dict, now: float) -> int:
    learn = settings.learning(cfg)
    verdicts = detectors.judge(summary, digest.read_active(state_dir, sid), cfg)
    # Dated when the session happened, not when it was evaluated.
    when = _number(summary.get("last_ts")) or _number(st.get("updated")) or now
    when = round(min(when, now), 3)
    session = store.short_hash(sid)
    records = []
    for kind, rule, sig in verdicts:
        rec = {"v": store.SCHEMA, "type": kind, "rule": rule, "at": when, "session": session}
        if sig:
            rec["sig"] = store.short_hash(sig)  # the normalized signature, hashed: no error text
        records.append(rec)
    store.append(store.project_path(root), records, now, learn["compact_bytes"], learn["keep_days"])
    to_global = scopes.record(root, records, learn["promote_projects"])
    store.append(store.global_path(), to_global, now, learn["compact_bytes"], learn["keep_days"])
    _retrospective(state_dir, root, summary, when)
    return len(records)


def _retrospective(state_dir: str, root: str, summary: dict, when: float) -> None:
    f = detectors.facts(summary)
    if not f["calls"]:
        return  # a conversation without tool calls has nothing to recall
    path = digest.retro_path(state_dir, root)
    try:
        with open(path, "rb") as fh:
            prior = fastjson.loads(fh.read(4096))
        if isinstance(prior, dict) and _number(prior.get("at")) > when:
            return  # a later session of this project was evaluated first
    except (OSError, ValueError):
        pass
    minutes = max(f["last_ts"] - f["first_ts"], 0) / 60 if f["first_ts"] else 0
    fired = {name: int(n) for name, n in f["fired"].items() if n > 0}
    atomic_write(path, fastjson.dumps({"v": 1, "at": when, "calls": int(f["calls"]),
                                       "minutes": round(minutes, 1), "fired": fired}))


def finished(state_dir: str, root: str, session_id: str, now: float, stale_s: float) -> list[str]:
    """Earlier sessions of `root` whose state exists, ended or stale, not yet evaluated."""
    folder = state.sessions_dir(state_dir)
    try:
        marks = set(os.listdir(digest.marks_dir(state_dir)))
    except OSError:
        marks = set()
    out = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        sid = name[:-5]
        if sid == session_id or f"{sid}.done" in marks or state.clean_session_id(sid) != sid:
            continue
        st = state.read(state_dir, sid)
        if st is None or st.get("root") != root:
            continue
        if f"{sid}.ended" in marks or now - _number(st.get("updated")) >= stale_s:
            out.append(sid)
    return out


def collect_marks(state_dir: str, now: float) -> int:
    """Remove marks (and their locks) of sessions whose state is gone, and digest caches of
    projects not seen for CACHE_GC_AGE_S. Best-effort."""
    removed = 0
    try:
        with os.scandir(digest.marks_dir(state_dir)) as entries:
            for entry in entries:
                sid = entry.name.split(".", 1)[0]
                if os.path.exists(state.path_for(state_dir, sid)):
                    continue
                if now - entry.stat(follow_symlinks=False).st_mtime > MARK_GC_AGE_S:
                    os.unlink(entry.path)
                    removed += 1
        with os.scandir(digest.learn_dir(state_dir)) as entries:
            for entry in entries:
                if entry.name.startswith("digest-") and entry.is_file(follow_symlinks=False) and \
                        now - entry.stat(follow_symlinks=False).st_mtime > CACHE_GC_AGE_S:
                    os.unlink(entry.path)
                    removed += 1
    except OSError:
        pass
    return removed


def on_session_start(root: str, session_id: str, state_dir: str, cfg: dict, now: float) -> None:
    learn = settings.learning(cfg)
    if not learn["enabled"] or not root:
        return
    for sid in finished(state_dir, root, state.clean_session_id(session_id), now,
                        learn["stale_after_minutes"] * 60):
        try:
            evaluate(state_dir, sid, root, cfg, now)
        except (OSError, TimeoutError, ValueError) as exc:
            # One session that cannot be evaluated now must not hold back the others.
            log_error(state_dir, f"learning: evaluating {sid}: {type(exc).__name__}: {exc}")
    collect_marks(state_dir, now)
    if settings.digest(cfg)["enabled"]:
        digest.cached(root, state_dir, cfg, now)  # compile now, so the first prompt hits the cache


def on_session_end(root: str, session_id: str, state_dir: str, cfg: dict, now: float) -> None:
    sid = state.clean_session_id(session_id)
    if not sid or not settings.learning(cfg)["enabled"]:
        return
    ended = _mark(state_dir, sid, "ended")
    ensure_dir(digest.marks_dir(state_dir))
    # First, so a SessionEnd that is cut short still lets the next SessionStart finish the job.
    os.close(os.open(ended, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    evaluate(state_dir, sid, root, cfg, now)
