"""Per-session state: one JSON file per cleaned session id, rewritten atomically under a lock.

Holds, per window (the main agent, and each subagent on its own: a subagent's grinding
is not the main agent's), a rolling window of the last actions, counters since the
session began and since the person last spoke, and each sense's small memory.
"""

from __future__ import annotations

import os
import time

from metacog.fsutil import (
    STRICT,
    Unreadable,
    atomic_write,
    dumps,
    ensure_dir,
    locked,
    read_json,
    set_aside,
    strict,
    touch,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from collections.abc import Callable

SCHEMA = 1
WINDOW = 20  # actions kept per window
MAX_WINDOWS = 32  # subagent windows kept per session; the oldest go first
SESSION_ID_CAP = 64
GC_AGE_S = 7 * 24 * 3600
GC_EVERY_S = 3600
# bytes; a state after 10,000 calls is about 40 KiB, most of it the main window's novelty
# memory (metacog.perception.novelty.SEEN_CAP), and 32 subagent windows add at most 150 KiB
STATE_CAP = 8 << 20
MAIN = "main"
SHAPE_ERRORS = (TypeError, KeyError, AttributeError, IndexError)
# Replay only (metacog.replay sets it for one transcript, in one process): each session's
# state kept here, instead of a locked file read and renamed into place on every call (a
# fifth of a replay's time, profiled). Kept as the object itself, not as its JSON text:
# writing and parsing that text was another 15 to 30% of a replay (70 and 55 us a call for
# the generated history's states, 180 and 130 us for the shared transcripts' 12 to 30 KB,
# measured). The senses get what a file gives them as long as the state holds only what
# parsing JSON gives (dicts with string keys, lists, strings, numbers, booleans, None, no
# object twice): the test suite's strict mode checks that after every call (`_as_parsed`).
HELD: dict[str, dict] | None = None
# The resident process only (metacog.server sets it around one call): work that need not
# hold up the reply is queued here (`after_reply`) and done once the reply is out. A
# session's save is queued still under its lock; SessionEnd's learning goes here too.
# Writing the state was a third of the hook's own time per call (1.0 ms of 3.0, issue 23);
# Claude Code waits for the reply, not for the file. The next call, served by the same process after this
# one, or a direct hook waiting on the lock, reads what was written; a reader without the
# lock waits for it first (`settled`). A save that fails now fails after its reply was
# given: it is logged as before (metacog.log, `metacog doctor`), and the next call works
# from the state before it, so what that reply said may be said once more.
AFTER: list | None = None
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def after_reply(work: Callable[[], None]) -> None:
    """Do `work` now, or, in the resident process, once this call's reply is out (AFTER)."""
    if AFTER is not None:
        AFTER.append(work)
    else:
        work()


def clean_session_id(raw: object) -> str:
    """An id safe as a file name: allow-listed characters, capped; '' when nothing is left."""
    if not isinstance(raw, str):
        return ""
    kept = "".join(c for c in raw[: SESSION_ID_CAP * 4] if c in _ALLOWED)[:SESSION_ID_CAP]
    return kept.strip("-_") and kept


def sessions_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "sessions")


def path_for(state_dir: str, session_id: str) -> str:
    return os.path.join(sessions_dir(state_dir), session_id + ".json")


def new_window(now: float) -> dict:
    return {
        "actions": [],
        "calls": 0,
        "errors": 0,
        "started": now,
        "prompt_at": now,
        "prompt_calls": 0,
        "senses": {},
    }


def new_state(session_id: str, now: float) -> dict:
    return {
        "v": SCHEMA,
        "id": session_id,
        "started": now,
        "updated": now,
        "calls": 0,
        "errors": 0,
        "windows": {MAIN: new_window(now)},
        "fired": {},
        "cwd": "",
    }


def _read(path: str) -> object:
    if HELD is None:
        return read_json(path, STATE_CAP)
    held = HELD.get(path)
    if held is None:
        raise FileNotFoundError(path)
    return held


def _as_parsed(value: object, seen: set[int]) -> bool:
    """Whether `value` is what parsing its own JSON gives back: a held state (HELD) is then
    what its file would give the senses. A tuple would come back a list, a number key a
    string, an object held twice two objects, NaN not at all."""
    kind = type(value)
    if kind is dict or kind is list:
        if id(value) in seen:
            return False
        seen.add(id(value))
        if kind is list:
            return all(_as_parsed(item, seen) for item in value)
        return all(type(k) is str and _as_parsed(v, seen) for k, v in value.items())
    if kind is float:
        return value - value == 0.0  # neither NaN nor an infinity
    return value is None or kind in (str, int, bool)


def _check_held(state: dict, path: str) -> None:
    """In the test suite's strict mode: a held state must be what its file would give back,
    and no larger than a file may be (metacog.fsutil.strict records the failure)."""
    if not os.environ.get(STRICT):
        return
    try:
        if not _as_parsed(state, set()):
            raise TypeError(f"{path}: the held state holds what its JSON would not give back")
        if len(dumps(state)) > STATE_CAP:
            raise Unreadable(f"{path}: larger than {STATE_CAP} bytes")
    except (TypeError, ValueError) as exc:
        strict("replay's held state", exc)


def load(path: str, session_id: str, now: float) -> dict:
    try:
        state = _read(path)
    except FileNotFoundError:
        return new_state(session_id, now)
    except (
        OSError,
        ValueError,
    ):  # whatever is there instead: cut short, not JSON, a FIFO, a folder
        _quarantine(path)
        return new_state(session_id, now)
    if (
        not isinstance(state, dict)
        or state.get("v") != SCHEMA
        or not isinstance(state.get("windows"), dict)
    ):
        _quarantine(path)
        return new_state(session_id, now)
    return state


def _quarantine(path: str) -> None:
    # An unparseable file is moved aside for `metacog doctor`, never silently overwritten.
    if HELD is None:
        set_aside(path)
    else:
        HELD.pop(path, None)


def window(state: dict, agent: str, now: float) -> dict:
    key = f"agent:{agent}" if agent else MAIN
    windows = state["windows"]
    win = windows.get(key)
    if not isinstance(win, dict):
        win = windows[key] = new_window(now)
        if len(windows) > MAX_WINDOWS:
            oldest = min(
                (k for k in windows if k != MAIN), key=lambda k: windows[k].get("started", 0)
            )
            del windows[oldest]
    return win


def push(win: dict, action: dict) -> None:
    actions = win["actions"]
    actions.append(action)
    if len(actions) > WINDOW:
        del actions[: len(actions) - WINDOW]
    win["calls"] = win.get("calls", 0) + 1
    win["prompt_calls"] = win.get("prompt_calls", 0) + 1
    if not action.get("ok", True):
        win["errors"] = win.get("errors", 0) + 1


class Session:
    """`with Session(state_dir, id) as state:` loads under the lock and saves on success."""

    def __init__(self, state_dir: str, session_id: str, now: float | None = None) -> None:
        self.path = path_for(state_dir, session_id)
        self.session_id = session_id
        self.now = time.time() if now is None else now
        self.lock = locked(self.path)
        self.state: dict = {}

    def __enter__(self) -> dict:
        if HELD is not None:  # one replay, in this process alone: no lock, no folder
            self.state = load(self.path, self.session_id, self.now)
            return self.state
        ensure_dir(os.path.dirname(self.path))
        self.lock.__enter__()
        try:
            self.state = load(self.path, self.session_id, self.now)
        except BaseException:
            self.lock.__exit__()
            raise
        return self.state

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if HELD is not None:
            if exc_type is None:
                self.state["updated"] = self.now
                HELD[self.path] = self.state
                _check_held(self.state, self.path)
            elif isinstance(exc_type, type) and issubclass(exc_type, SHAPE_ERRORS):
                _quarantine(self.path)
            return
        if exc_type is None:
            after_reply(self._save)  # still locked: the lock goes with the save
            return
        try:
            if isinstance(exc_type, type) and issubclass(exc_type, SHAPE_ERRORS):
                # A state of the right schema with a wrong shape inside would fail the
                # same way on every call: set it aside, and the next call starts afresh.
                _quarantine(self.path)
        finally:
            self.lock.__exit__()

    def _save(self) -> None:
        """Write the state, then let go of the lock, whatever happens."""
        try:
            self.state["updated"] = self.now
            # Not fsynced: 1.4 ms per call on this machine's ext4 home (0.2 ms in /tmp), on
            # every tool call; the state is rewritten at the next call anyway, and a power
            # loss costs one session's readings at most. Every byte is still checked.
            atomic_write(self.path, dumps(self.state), durable=False)
        finally:
            self.lock.__exit__()


def settled(state_dir: str, session_id: str) -> None:
    """Wait until a save the resident process queued after its reply (AFTER) is written: it
    holds the session's lock until then. Bounded like any lock; a reader that cannot wait
    reads what is there."""
    try:
        with locked(path_for(state_dir, session_id)):
            pass
    except (OSError, ValueError):  # TimeoutError is an OSError
        pass


def read(state_dir: str, session_id: str) -> dict | None:
    """A session's state without locking (for status): None if absent or unreadable."""
    try:
        state = _read(path_for(state_dir, session_id))
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def collect_garbage(state_dir: str, now: float) -> int:
    """Remove session files untouched for GC_AGE_S; at most once an hour. Best-effort."""
    folder = sessions_dir(state_dir)
    stamp = os.path.join(folder, ".gc")
    try:
        if now - os.stat(stamp).st_mtime < GC_EVERY_S:
            return 0
    except OSError:
        pass
    removed = 0
    try:
        ensure_dir(folder)
        touch(stamp)
        with os.scandir(folder) as entries:
            found = [
                (
                    e.name,
                    e.stat(follow_symlinks=False).st_mtime,
                    e.is_file(follow_symlinks=False),
                    e.is_dir(follow_symlinks=False),
                )
                for e in entries
                if not e.name.startswith(".")
            ]
        names = {name: mtime for name, mtime, regular, _ in found if regular}
        # What was set aside in a file's place (a folder, a FIFO, a link) goes after as long.
        for name, mtime, regular, is_dir in found:
            if not regular and ".corrupt-" in name and now - mtime > GC_AGE_S:
                if is_dir:
                    import shutil

                    shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
                else:
                    os.unlink(os.path.join(folder, name))
                removed += 1
        for name, mtime in names.items():
            if now - mtime <= GC_AGE_S:
                continue
            if name.endswith(".lock"):
                # A lock keeps its creation time; it goes only with its (old or gone) state,
                # never under a live session, which would then lock a new file beside it.
                owner = name[: -len(".lock")]
                if owner in names and now - names[owner] <= GC_AGE_S:
                    continue
            os.unlink(os.path.join(folder, name))
            removed += 1
        removed += _collect_caches(state_dir, now)
    except OSError:
        pass
    return removed


def _collect_caches(state_dir: str, now: float) -> int:
    """Per-project config caches of projects not seen for GC_AGE_S."""
    removed = 0
    with os.scandir(state_dir) as entries:
        for entry in entries:
            if (
                entry.name.startswith("config-cache-")
                and entry.is_file(follow_symlinks=False)
                and now - entry.stat(follow_symlinks=False).st_mtime > GC_AGE_S
            ):
                os.unlink(entry.path)
                removed += 1
    return removed
