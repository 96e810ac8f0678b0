"""What resolved a failure before, per user and project: the store Reflex recalls from.

One small JSON file per project in metacog's own data folder (never in the committed
project store, which holds no paths):

  <data>/resolutions/<crc of the project root>.json
  {"v": 1, "root": ROOT, "problems": {KEY: {"sig": SIG, "at": TS, "seen": [SESSION, ...],
                                            "fix": {"files": [REL, ...], "cmd": CMD,
                                                    "calls": N, "at": TS}, "k": 2}}}

KEY is a hash of the failure's identity (the one Nociception and Habit use), SIG that
identity cut to SIG_CAP characters (a normalized signature, never output text), `k` the
reading of identities the key was made with (KEY_READING; none: before issue 39), files are
paths relative to the project and CMD the command that then passed, both cut to
TEXT_CAP. `seen` holds short hashes of the sessions where the problem came back a 2nd
time, so "seen in 3 earlier sessions, never resolved" is a count, not a scan.

A lookup is one bounded read of one file (READ_CAP); a write (at most twice per problem
and session: when it comes back, when it is resolved) is a read-modify-write under the
file's lock with an atomic rename. At most PROBLEMS_CAP problems per project, the least
recently touched out first. A file that is not ours (not JSON, wrong shape, a folder or
a FIFO in its place) is set aside and the project starts afresh; one of a newer version
is left alone and not written.
"""

from __future__ import annotations

import os
import zlib

from metacog import paths
from metacog.fsutil import atomic_write, dumps, locked, read_json, set_aside

SCHEMA = 1
PROBLEMS_CAP = 200
SEEN_CAP = 12  # sessions remembered per problem
FILES_CAP = 3
TEXT_CAP = 120
SIG_CAP = 120
READ_CAP = 256 * 1024  # PROBLEMS_CAP records of under 1 KB each
LOCK_TIMEOUT = 0.25  # seconds: the hook must stay quick; a busy lock skips this write
# The reading of a failure's identity a record's key was made with: 2 since issue 39 read a
# shell command the person said no to by the act parser. A record without it was keyed by the
# reading before, and only such a record moves from an old key (`_update`): the old key of one
# command can be the new key of another (`cd app && npm install && npm test` was `npm test`).
KEY_READING = 2


def key(identity: str) -> str:
    data = identity.encode("utf-8", "replace")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def session_hash(session_id: str) -> str:
    return f"{zlib.crc32(session_id.encode('utf-8', 'replace')):08x}"


def path_for(root: str) -> str:
    name = f"{zlib.crc32(root.encode('utf-8', 'replace')):08x}.json"
    return os.path.join(paths.data_dir(), "resolutions", name)


def _load(path: str, root: str) -> dict | None:
    """The problems of the file at `path`: {} when absent or damaged (set aside), None when
    written by a newer version (not ours to rewrite)."""
    try:
        data = read_json(path, READ_CAP)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        set_aside(path)
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("v"), int):
        set_aside(path)
        return {}
    if data["v"] > SCHEMA:
        return None
    problems = data.get("problems")
    if data["v"] != SCHEMA or data.get("root") != root or not isinstance(problems, dict):
        set_aside(path)
        return {}
    return {k: v for k, v in problems.items() if isinstance(k, str) and _valid(v)}


def _valid(rec: object) -> bool:
    if not isinstance(rec, dict) or not isinstance(rec.get("sig"), str):
        return False
    if not isinstance(rec.get("at"), (int, float)) or not isinstance(rec.get("seen"), list):
        return False
    fix = rec.get("fix")
    return fix is None or (
        isinstance(fix, dict)
        and isinstance(fix.get("files"), list)
        and all(isinstance(f, str) for f in fix["files"])
        and isinstance(fix.get("cmd"), str)
        and isinstance(fix.get("calls"), int)
        and isinstance(fix.get("at"), (int, float))
    )


def lookup(root: str, problem: str) -> dict | None:
    """The record of one problem in this project, or None: one bounded read."""
    problems = _load(path_for(root), root)
    return (problems or {}).get(problem)


def _update(root: str, problem: str, change, was: str = "") -> dict | None:
    """Change the record of `problem` under the file's lock. `was` names the key the same
    problem was stored under before its identity was read anew (a shell command the person
    said no to: metacog.perception.symptoms.legacy_identity, issue 39): a record found only
    there and keyed by the reading before (no `k`) is moved to `problem`, so what earlier
    sessions learned is met again, merged with what `problem` holds; a record of the current
    reading there is another problem's, and stays. Keys whose identity did not change pass no
    `was` and are left as they were."""
    path = path_for(root)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with locked(path, timeout=LOCK_TIMEOUT):
        problems = _load(path, root)
        if problems is None:
            return None
        before = problems.pop(problem, None)
        old = problems.get(was) if was and was != problem else None
        if old is not None and old.get("k") != KEY_READING:
            del problems[was]
            before = _merged(before, old) if before else old
        after = change(dict(before) if before else None)
        after["k"] = KEY_READING
        problems[problem] = after
        if len(problems) > PROBLEMS_CAP:
            oldest = sorted(problems, key=lambda k: problems[k]["at"])
            for gone in oldest[: len(problems) - PROBLEMS_CAP]:
                del problems[gone]
        atomic_write(path, dumps({"v": SCHEMA, "root": root, "problems": problems}))
    return before


def _merged(now: dict, old: dict) -> dict:
    """One record of a problem kept under its old key and its new one: the sessions of both
    (the newer last, SEEN_CAP at most), its latest time, and the newer fix where both hold one."""
    seen = [s for s in old["seen"] if s not in now["seen"]] + now["seen"]
    fix = now.get("fix") or old.get("fix")
    out = {**now, "seen": seen[-SEEN_CAP:], "at": max(now["at"], old["at"])}
    if fix:
        out["fix"] = fix
    return out


def met(
    root: str, problem: str, sig: str, session_id: str, now: float, was: str = ""
) -> dict | None:
    """The problem came back in this session: note the session, return what was known before
    (`was`: the key the problem had before, whose record moves to `problem`: `_update`)."""
    sid = session_hash(session_id)

    def change(rec: dict | None) -> dict:
        rec = rec or {"sig": sig[:SIG_CAP], "seen": []}
        seen = [s for s in rec["seen"] if s != sid][-(SEEN_CAP - 1) :]
        rec.update(seen=[*seen, sid], at=now)
        return rec

    return _update(root, problem, change, was)


def resolved(root: str, problem: str, sig: str, fix: dict, now: float, was: str = "") -> None:
    """The problem was resolved: remember how (replacing an older resolution; `was`: `met`)."""
    clean = {
        "files": [f[:TEXT_CAP] for f in fix["files"][:FILES_CAP]],
        "cmd": fix["cmd"][:TEXT_CAP],
        "calls": int(fix["calls"]),
        "at": now,
    }

    def change(rec: dict | None) -> dict:
        rec = rec or {"sig": sig[:SIG_CAP], "seen": []}
        rec.update(fix=clean, at=now)
        return rec

    _update(root, problem, change, was)
