"""The digest on the prompt path: once per session, from a compiled copy cached by store stamps.

`digest_once` runs on every UserPromptSubmit. After the first prompt of a session it
costs one lstat (the session's marker). On the first it stats the two stores (and the
retrospective), reads the cached digest keyed by their size, mtime and inode, the
settings and the day, and recompiles only when one of them changed: so 100,000
records cost what an empty store costs (benchmarks/bench_digest.py).
"""

from __future__ import annotations

import os
import zlib

from metacog.fsutil import atomic_write, dumps, ensure_dir, read_json, write_all
from metacog.learning import settings, store
from metacog.learning.detectors import CONFIG_DEFAULTS

CACHE_SCHEMA = 1
CACHE_CAP = 64 * 1024  # a digest is at most config.DIGEST_HARD_CEILING characters
DAY = 86400.0


def learn_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "learning")


def marks_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "learning", "marks")


def _root_key(root: str) -> str:
    return f"{zlib.crc32(root.encode('utf-8', 'replace')):08x}"


def cache_path(state_dir: str, root: str) -> str:
    return os.path.join(state_dir, "learning", f"digest-{_root_key(root)}.json")


def retro_path(state_dir: str, root: str) -> str:
    return os.path.join(state_dir, "learning", f"retro-{_root_key(root)}.json")


def active_path(state_dir: str, session_id: str) -> str:
    return os.path.join(state_dir, "learning", "marks", session_id + ".active")


def _fingerprint(cfg: dict) -> str:
    sections = [cfg.get(name) for name in ("learning", "digest", *CONFIG_DEFAULTS)]
    try:
        return dumps(sections)
    except (TypeError, ValueError):  # a TOML date or NaN in a detector's table
        return repr(sections)


def cached(root: str, state_dir: str, cfg: dict, now: float) -> dict:
    """{"text", "ids"} for `root` now: from the cache while nothing it depends on changed."""
    retro = retro_path(state_dir, root)
    key = [
        CACHE_SCHEMA,
        root,
        store.stamp(store.global_path()),
        store.stamp(store.project_path(root)),
        store.stamp(retro),
        _fingerprint(cfg),
        int(now // DAY),
    ]
    path = cache_path(state_dir, root)
    try:
        hit = read_json(path, CACHE_CAP)
        if (
            isinstance(hit, dict)
            and hit.get("key") == key
            and isinstance(hit.get("text"), str)
            and isinstance(hit.get("ids"), list)
        ):
            return hit
    except (OSError, ValueError):
        pass  # absent, or whatever is there instead: compiled again and written over
    from metacog.learning.build import compile_digest

    compiled = compile_digest(root, cfg, now, retro)
    out = {"key": key, "text": compiled["text"], "ids": compiled["ids"]}
    try:
        atomic_write(path, dumps(out))
    except (OSError, ValueError):
        pass  # a cache only (a folder in its place, a full disk): the next prompt compiles again
    return out


def read_active(state_dir: str, session_id: str) -> set[str]:
    """The rule ids the session's digest carried (empty if it had none, or no digest)."""
    try:
        mark = read_json(active_path(state_dir, session_id), 65536)
    except (OSError, ValueError):
        return set()
    ids = mark.get("ids") if isinstance(mark, dict) else None
    return {i for i in ids if isinstance(i, str)} if isinstance(ids, list) else set()


def digest_once(root: str, session_id: str, state_dir: str, cfg: dict, now: float) -> str:
    from metacog.state import clean_session_id

    sid = clean_session_id(session_id)
    if not sid or not settings.learning(cfg)["enabled"] or not settings.digest(cfg)["enabled"]:
        return ""
    marker = active_path(state_dir, sid)
    if os.path.lexists(marker):
        return ""
    compiled = cached(root, state_dir, cfg, now)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(marker, flags, 0o600)
    except FileExistsError:
        return ""  # another hook of this session got there first and injected it
    except FileNotFoundError:
        ensure_dir(marks_dir(state_dir))
        try:
            fd = os.open(marker, flags, 0o600)
        except FileExistsError:
            return ""
    try:
        # Written even when there is nothing to say: the digest is a start-of-session
        # thing, and later prompts then cost one lstat.
        write_all(fd, dumps({"v": 1, "root": root, "at": now, "ids": compiled["ids"]}).encode())
    finally:
        os.close(fd)
    return compiled["text"] if isinstance(compiled.get("text"), str) else ""
