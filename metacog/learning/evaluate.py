"""Each finished session turned into evidence: at SessionEnd, or when the next one of its project
starts; and again when it went on after that.

A session is finished when SessionEnd arrived (its `.ended` mark) or when its state
has not been updated for `stale_after_minutes`. Quiet that long, it may still be open:
evaluated by the next session of its project, it can go on working and end later. So
the `.done` mark records what was evaluated (the state's `updated`, a hash of the
summary and of the rules its digest carried, the detectors' version, and the evidence
it gave), and a session whose state has moved on since, or whose verdict came from an
older version of the detectors, is evaluated again. Only what changed is appended, with
retractions for evidence no longer given; a store counts the last record of each
(rule, session) and the promotion index uncounts what was replaced, so the latest
evaluation of a session wins and nothing counts twice. One bound: were the rule
promoted between two evaluations of a session, the aggregate sent to the global store
then already holds the earlier verdict, and a changed one is added beside it.

Evaluation runs under a lock per session, so SessionEnd racing the next SessionStart
evaluates it once; were a writer killed between its evidence and its mark, the
evidence carries the session's hash and the tally counts it once.

The marks live in `<state dir>/learning/marks/`, named by session id, so sessions
of one project never touch each other's; a mark is collected only once its
session's state is gone (otherwise a collected `.done` would let the session be
evaluated from scratch).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

from metacog import state
from metacog.fsutil import (
    atomic_write,
    dumps,
    ensure_dir,
    locked,
    log_error,
    read_json,
    set_aside,
    touch,
)
from metacog.learning import detectors, digest, scopes, settings, store

MARK_GC_AGE_S = 24 * 3600
CACHE_GC_AGE_S = 30 * 24 * 3600
CACHE_PREFIXES = ("digest-", "retro-")  # per project, in <state dir>/learning
MARK_CAP = 64 * 1024  # a `.done` mark lists at most one piece of evidence per rule and lesson
MARK_SCHEMA = 2
DAY = 86400.0


class Job:
    """One session's evaluation: where its marks live, which session, its project, when.
    (Slotted classes here and below: `typing.NamedTuple` would import `typing` on the hook's path.)"""

    __slots__ = ("cfg", "now", "root", "sid", "state_dir")

    def __init__(self, state_dir: str, sid: str, root: str, cfg: dict, now: float) -> None:
        self.state_dir, self.sid, self.root, self.cfg, self.now = state_dir, sid, root, cfg, now


class Changes:
    """What one evaluation writes: to the project store (`records`), to the promotion index
    (`for_index`, uncounting `superseded`), what an earlier killed evaluation still owed the
    global store, and the evidence the journal records."""

    __slots__ = ("evidence", "for_index", "owed", "records", "superseded")

    def __init__(
        self,
        records: list[dict],
        for_index: list[dict],
        superseded: list[dict],
        owed: list[dict],
        evidence: list[list[str]],
    ) -> None:
        self.records, self.for_index, self.superseded = records, for_index, superseded
        self.owed, self.evidence = owed, evidence


def _mark(state_dir: str, session_id: str, kind: str) -> str:
    return os.path.join(digest.marks_dir(state_dir), f"{session_id}.{kind}")


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and math.isnan(value):
        return 0.0
    return float(value)


def _read_mark(path: str) -> dict | None:
    """A `.done` mark: None if there is none, {} if it cannot say what was evaluated."""
    try:
        mark = read_json(path, MARK_CAP)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # damaged, or not a file: evaluated once, what it gave is unknown
        return {}
    return mark if isinstance(mark, dict) else {}


def _pending(mark: dict | None, st: dict | None) -> bool:
    """Never evaluated, or its state moved on since it was, or older detectors judged it."""
    if mark is None:
        return True
    if mark.get("v") != MARK_SCHEMA:
        return False  # an older mark, or a broken one: evaluated, and what it gave is unknown
    return st is not None and (
        _number(st.get("updated")) != _number(mark.get("updated"))
        or mark.get("judge") != detectors.VERSION
    )


def _fingerprint(summary: object, active: set[str]) -> str:
    """What an evaluation reads: the summary and the rules the session's digest carried,
    and which detectors read them."""
    seen = [summary, sorted(active), detectors.VERSION]
    try:
        text = dumps(seen)
    except (TypeError, ValueError):  # NaN, or a type JSON lacks
        text = repr(seen)
    return store.short_hash(text)


def _evidence(mark: dict | None) -> list[list[str]]:
    """[type, rule, hashed sig or ''] for each piece of evidence the last evaluation gave."""
    given = mark.get("evidence") if mark else None
    return (
        [
            list(e)
            for e in given
            if isinstance(e, list)
            and len(e) == 3
            and all(isinstance(x, str) for x in e)
            and e[0] in store.EVIDENCE
            and e[1] in detectors.RULES
        ]
        if isinstance(given, list)
        else []
    )


def evaluate(state_dir: str, session_id: str, root_hint: str, cfg: dict, now: float) -> bool:
    """Turn one session's summary into evidence, or bring its evidence up to date with it.
    True if this call wrote evidence (or, for a session with nothing to say, its mark)."""
    sid = state.clean_session_id(session_id)
    if not sid:
        return False
    done, writing = _mark(state_dir, sid, "done"), _mark(state_dir, sid, "writing")
    if not os.path.lexists(writing) and not _pending(_read_mark(done), state.read(state_dir, sid)):
        return False
    ensure_dir(digest.marks_dir(state_dir))
    with locked(done, timeout=10.0):
        mark, st = _read_mark(done), state.read(state_dir, sid)
        cut_short = os.path.lexists(writing)
        if not cut_short and not _pending(mark, st):
            return False  # the racing hook finished it while we waited
        st = st or {}
        root = st.get("root") if isinstance(st.get("root"), str) and st.get("root") else root_hint
        summary = st.get("summary")
        active = digest.read_active(state_dir, sid)
        seen = _fingerprint(summary, active)
        evidence, written = _evidence(mark), -1
        journal = _read_journal(writing) if cut_short else {}
        if cut_short or mark is None or mark.get("seen") != seen:
            written = 0
            if isinstance(summary, dict) and root:
                job = Job(state_dir, sid, root, cfg, now)
                evidence, written = _record(
                    job, st, summary, active, evidence, journal if cut_short else None
                )
        # Rewritten when nothing changed too: the state's new `updated` is then known to say nothing new.
        atomic_write(
            done,
            dumps(
                {
                    "v": MARK_SCHEMA,
                    "at": now,
                    "root": root,
                    "updated": st.get("updated"),
                    "judge": detectors.VERSION,
                    "seen": seen,
                    "evidence": evidence,
                    "records": max(written, 0),
                }
            ),
        )
        try:
            os.unlink(writing)
        except FileNotFoundError:
            pass
        except (
            OSError
        ):  # a folder in its place: gone aside, or every evaluation would take the store's word
            set_aside(writing)
    return written >= 0


def _given(root: str, sid: str, now: float) -> list[list[str]]:
    """The evidence the project's store counts for a session: its last record per (rule, sig)."""
    session = store.short_hash(sid)
    latest: dict[tuple[str, str], str] = {}
    for rec in store.read(store.project_path(root), now).records:
        if rec.get("session") == session and rec["type"] in (*store.EVIDENCE, store.RETRACTION):
            latest[(rec["rule"], rec.get("sig", ""))] = rec["type"]
    return [[kind, rule, sig] for (rule, sig), kind in latest.items() if kind != store.RETRACTION]


def _read_journal(path: str) -> dict:
    try:
        journal = read_json(path, MARK_CAP)
    except (OSError, ValueError):
        return {}
    return journal if isinstance(journal, dict) else {}


def _cut_short(state_dir: str) -> frozenset[str]:
    """Hashes of the sessions whose evaluation was killed while appending (their `.writing`
    journal is still there): a compaction must not fold their records, or the evaluation that
    finishes the job would count them again (97 detections for 96 sessions, once)."""
    try:
        names = os.listdir(digest.marks_dir(state_dir))
    except OSError:
        return frozenset()
    return frozenset(
        store.short_hash(n[: -len(".writing")]) for n in names if n.endswith(".writing")
    )


def _changes(
    previous: list[list[str]], evidence: list[list[str]], rec: Callable
) -> tuple[list, list]:
    """(records that bring `previous` to `evidence`, the earlier evidence they replace)."""
    before = {(rule, sig): kind for kind, rule, sig in previous}
    after = {(rule, sig): kind for kind, rule, sig in evidence}
    records = [rec(kind, *k) for k, kind in after.items() if before.get(k) != kind]
    records += [rec(store.RETRACTION, *k) for k in before if k not in after]
    return records, [rec(kind, *k) for k, kind in before.items() if after.get(k) != kind]


def _record(
    job: Job,
    st: dict,
    summary: dict,
    active: set[str],
    previous: list[list[str]],
    journal: dict | None,
) -> tuple[list[list[str]], int]:
    """Append what this evaluation changes; (the evidence it gives, records written).

    Three files take part (the project's store, the promotion index, the global store) and a
    process can be killed between any two. A journal (`<sid>.writing`) exists from before the
    first append to the `.done` mark and says how far it got; `journal` is an earlier one, left
    by a killed evaluation: the store's own records then say what it holds for the session,
    the journal what the index counted and what was still owed to the global store.
    """
    state_dir, sid, root, cfg, now = job.state_dir, job.sid, job.root, job.cfg, job.now
    # Dated when the session happened, not when it was evaluated.
    when = _number(summary.get("last_ts")) or _number(st.get("updated")) or now
    when = round(min(when, now), 3)
    session = store.short_hash(sid)

    def rec(kind: str, rule: str, sig: str) -> dict:
        out = {"v": store.SCHEMA, "type": kind, "rule": rule, "at": when, "session": session}
        if sig:
            out["sig"] = sig  # the normalized signature, hashed: no error text
        return out

    evidence = [
        [kind, rule, store.short_hash(sig) if sig else ""]
        for kind, rule, sig in detectors.judge(summary, active, cfg)
    ]
    owed: list[dict] = []
    counted = previous
    if journal is not None:
        if isinstance(journal.get("index"), list):
            counted = _evidence({"evidence": journal["index"]})
            owed = [r for r in journal.get("global") or [] if store.validate(r, now) == store.OK]
        previous = _given(root, sid, now)
    records, _ = _changes(previous, evidence, rec)
    for_index, superseded = _changes(counted, evidence, rec)
    if records or for_index or owed:
        _write(job, Changes(records, for_index, superseded, owed, evidence))
    _retrospective(state_dir, root, summary, when)
    return evidence, len(records)


def _write(job: Job, changes: Changes) -> None:
    state_dir, sid, root, cfg, now = job.state_dir, job.sid, job.root, job.cfg, job.now
    records, for_index, superseded = changes.records, changes.for_index, changes.superseded
    owed, evidence = changes.owed, changes.evidence
    learn = settings.learning(cfg)
    path = _mark(state_dir, sid, "writing")
    atomic_write(path, "{}")  # before the first append: from here on, the store's word counts
    project = store.locate(root)
    try:
        if project.reason:
            # A symlink in the store's place, a `.claude` leading out of the project: refused
            # like a store that cannot be written, below.
            raise store.Unreadable(store.explain(project.reason))
        store.append(
            project.path,
            records,
            now,
            learn["compact_bytes"],
            learn["keep_days"],
            _cut_short(state_dir),
        )
    except TimeoutError:
        raise
    except OSError as exc:
        # A read-only checkout, a full disk, a folder, FIFO or symlink in the store's place, a
        # store past its read cap: the project keeps nothing of this session, but the promotion
        # index and the global store still learn, and the session counts as evaluated (it is
        # not retried, and failing, at every SessionStart). `metacog doctor` names the store.
        where = project.path or os.path.join(root, store.PROJECT_DIR, store.PROJECT_NAME)
        log_error(state_dir, f"learning: {where} not written: {type(exc).__name__}: {exc}")
    to_global = owed + scopes.record(root, for_index, learn["promote_projects"], superseded)
    atomic_write(path, dumps({"index": evidence, "global": to_global}))
    store.append(
        store.global_path(),
        to_global,
        now,
        learn["compact_bytes"],
        learn["keep_days"],
        _cut_short(state_dir),
    )


def _retrospective(state_dir: str, root: str, summary: dict, when: float) -> None:
    f = detectors.facts(summary)
    if not f["calls"]:
        return  # a conversation without tool calls has nothing to recall
    path = digest.retro_path(state_dir, root)
    try:
        prior = read_json(path, 4096)
        if isinstance(prior, dict) and _number(prior.get("at")) > when:
            return  # a later session of this project was evaluated first
    except (OSError, ValueError):
        pass
    minutes = max(f["last_ts"] - f["first_ts"], 0) / 60 if f["first_ts"] else 0
    fired = {name: int(n) for name, n in f["fired"].items() if n > 0}
    atomic_write(
        path,
        dumps(
            {
                "v": 1,
                "at": when,
                "calls": int(f["calls"]),
                "minutes": round(minutes, 1),
                "fired": fired,
            }
        ),
    )


def finished(state_dir: str, root: str, session_id: str, now: float, stale_s: float) -> list[str]:
    """Earlier sessions of `root` whose state exists, ended or stale, and not evaluated
    since their state last changed."""
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
        if sid == session_id or state.clean_session_id(sid) != sid:
            continue
        st = state.read(state_dir, sid)
        if st is None or st.get("root") != root:
            continue
        if f"{sid}.done" in marks and not _pending(_read_mark(_mark(state_dir, sid, "done")), st):
            continue
        if f"{sid}.ended" in marks or now - _number(st.get("updated")) >= stale_s:
            out.append(sid)
    return out


def collect_marks(state_dir: str, now: float) -> int:
    """Remove marks (and their locks) of sessions whose state is gone, and the digest caches
    and retrospectives of projects not seen for CACHE_GC_AGE_S. Best-effort."""
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
                if (
                    entry.name.startswith(CACHE_PREFIXES)
                    and entry.is_file(follow_symlinks=False)
                    and now - entry.stat(follow_symlinks=False).st_mtime > CACHE_GC_AGE_S
                ):
                    os.unlink(entry.path)
                    removed += 1
    except OSError:
        pass
    return removed


def on_session_start(
    root: str, session_id: str, state_dir: str, cfg: dict, now: float, budget: float
) -> bool:
    """Evaluate the earlier sessions of `root` that ended or went stale, for at most `budget`
    seconds (checked between sessions); False when some were left for the next start."""
    learn = settings.learning(cfg)
    if not learn["enabled"] or not root:
        return True
    own = state.clean_session_id(session_id)
    if own:
        try:  # a resumed session is running again: not ended until its next SessionEnd
            os.unlink(_mark(state_dir, own, "ended"))
        except OSError:
            pass
    deadline, complete = time.monotonic() + budget, True
    for sid in finished(state_dir, root, own, now, learn["stale_after_minutes"] * 60):
        if time.monotonic() > deadline:
            complete = False  # the next start goes on with the rest
            break
        try:
            evaluate(state_dir, sid, root, cfg, now)
        except (OSError, TimeoutError, ValueError) as exc:
            # One session that cannot be evaluated now must not hold back the others.
            log_error(state_dir, f"learning: evaluating {sid}: {type(exc).__name__}: {exc}")
    collect_marks(state_dir, now)
    if settings.digest(cfg)["enabled"]:
        digest.cached(root, state_dir, cfg, now)  # compile now, so the first prompt hits the cache
    return complete


def on_session_end(root: str, session_id: str, state_dir: str, cfg: dict, now: float) -> None:
    sid = state.clean_session_id(session_id)
    if not sid or not settings.learning(cfg)["enabled"]:
        return
    ended = _mark(state_dir, sid, "ended")
    ensure_dir(digest.marks_dir(state_dir))
    # First, so a SessionEnd that is cut short still lets the next SessionStart finish the job.
    touch(ended)
    evaluate(state_dir, sid, root, cfg, now)
