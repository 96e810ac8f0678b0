"""The resident hook process, and starting it: the hook's work without an interpreter start
per tool call.

Inside Claude Code a bare start of the runtime's Python costs about 20 ms per tool call
(benchmarks/bench_cli.py), more than the whole budget. So while sessions run, one
process per runtime keeps metacog imported and answers the calls that hooks/run.sh
hands it through hooks/client.pl (a Perl start, about 3 ms). Each call is exactly the
call the hook would have made: the same payload, the client's environment and working
directory, `hook.handle`; state stays on disk under the same locks, so a direct hook
and the resident one can run side by side.

This module starts one (`ensure`, imported by the hook); metacog/server.py is what the
started process runs. Nothing depends on it. A call is the resident's only once it has
taken it (metacog/protocol.py describes the exchange); no socket, no Perl, a refused
connection, or nobody taking the call within 2 s: the client exits with stdin untouched
and run.sh runs the hook itself (and `ensure` starts a resident process for the next
calls, at most once a minute, or replaces one that is stuck). It serves one call at a
time (in-process: a forked child per call measured 3 ms slower, see the commit log),
ends after 15 idle minutes, after `server.MAX_CALLS`, after a call that grew it by
`server.MAX_GROWTH_MB`, or as soon as its socket is no longer its own (runtime rebuilt
or removed); a call that runs past `WATCHDOG_SECONDS` ends the process (faulthandler
writes where it was to `resident.log`). `METACOG_RESIDENT=0` keeps hooks from using it
or starting it.
"""

from __future__ import annotations

import os
import stat  # already loaded by os: free
import sys
import time

from metacog import fsutil, layout
from metacog.protocol import SOCKET, TAKE_SECONDS, WATCHDOG_SECONDS  # noqa: F401 - metacog doctor reads SOCKET here

IDLE_SECONDS = 15 * 60
LOCK = "lock"  # held by the resident process for its whole life
STARTED = "started"  # when one was last started
LATE_MARK = "late"  # since when calls found the resident not taking them in time
# Late for this long, it is stuck: a call is taken within TAKE_SECONDS of the one before
# it ending, and no call runs past its watchdog.
STUCK_SECONDS = TAKE_SECONDS + WATCHDOG_SECONDS
START_EVERY = 60.0  # seconds between two attempts to start one
LOG_CAP = 64 * 1024


def folder() -> str:
    """The resident process's folder, inside the runtime whose code it runs."""
    return os.path.join(sys.prefix, layout.RESIDENT)


# --- starting one ---------------------------------------------------------------------


def ensure(now: float | None = None, late: bool = False) -> None:
    """Start a resident process unless one runs, one was started within the minute, or it
    could not help here (not metacog's runtime, no Perl for the client, switched off).

    `late`: this call reached a resident that did not take it in time. A busy one is
    free again within a call's bound; one late for longer is stuck (stopped, or past its
    watchdog) and holds its lock for good: it is ended and replaced.

    Best-effort: never raises. Runs only where the hook runs directly (SessionStart, or a
    call that found nobody to hand it to), after the reply is out.
    """
    try:
        if os.environ.get("METACOG_RESIDENT") == "0" or not hasattr(os, "fork"):
            return
        if not layout.is_runtime(sys.prefix):
            return  # somebody else's interpreter (tests, a checkout): nothing to keep resident
        home = private_folder()
        if home is None:
            return
        now = time.time() if now is None else now
        for name in (LOCK, STARTED, LATE_MARK):
            reclaim(os.path.join(home, name))
        replaced = late and _end_if_stuck(home, now)
        if _running(home):
            return
        marker = os.path.join(home, STARTED)
        try:
            if now - os.stat(marker).st_mtime < START_EVERY and not replaced:
                return  # started (or failed to) a moment ago: no crash loop, no crowd
        except OSError:
            pass
        _touch(marker, now)
        import shutil

        if shutil.which("perl") is None:
            return  # run.sh cannot reach a resident process without the client
        _spawn(home)
    except Exception:  # noqa: BLE001, S110 - the hook's reply is out; nothing to report to
        pass


def _touch(path: str, now: float) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        os.utime(fd, (now, now))
    finally:
        os.close(fd)


def _end_if_stuck(home: str, now: float) -> bool:
    """Whether the resident was late (a `late` mark, which it clears when it serves a
    call) for longer than a busy one can be, and was ended for it."""
    mark = os.path.join(home, LATE_MARK)
    try:
        since = os.stat(mark).st_mtime
    except FileNotFoundError:
        since = None
    if since is None or not 0 <= now - since <= STUCK_SECONDS * 4:
        _touch(mark, now)  # the first late call (an old mark is another episode's)
        return False
    if now - since < STUCK_SECONDS or not _running(home):
        return False
    import signal

    try:
        with open(os.path.join(home, "pid"), "rb") as fh:
            pid = int(fh.read(32))
        if not _serves(pid):
            return False  # a pid left by an earlier one, now another program's
        os.kill(pid, signal.SIGKILL)  # a stopped process ends too
    except (OSError, ValueError):
        return False
    os.unlink(mark)
    deadline = time.monotonic() + 1.0
    while _running(home) and time.monotonic() < deadline:
        time.sleep(0.01)  # its lock goes with it
    return True


def reclaim(path: str, kind: int = stat.S_IFREG) -> None:
    """Remove what stands at `path` unless it is of `kind` (a regular file; a socket for
    the socket's name) or missing: a folder or a symlink there would stop every resident
    from starting, for good. Only in the private folder, which nobody else can write."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_IFMT(info.st_mode) == kind:
        return
    try:
        if stat.S_ISDIR(info.st_mode):
            import shutil

            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        pass  # another process removed it first, or it cannot go: the open that follows fails


def private_folder(home: str = "") -> str | None:
    """The folder, created 0700 and owned by this user; None if it is anything else."""
    home = home or folder()
    try:
        info = os.lstat(fsutil.ensure_dir(home))
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # someone else's, or open to others: the socket must not be reachable
    return home


def _running(home: str) -> bool:
    """Whether a resident process holds the folder's lock (it does for its whole life)."""
    import fcntl

    try:
        fd = os.open(os.path.join(home, LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return True  # cannot tell: do not start another
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases the lock if this process took it
    return False


def _serves(pid: int) -> bool:
    """Whether `pid` runs metacog's server, where /proc can tell (elsewhere: assumed, the
    pid file being the lock holder's)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"metacog.server" in fh.read(4096)
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")
    except OSError:
        return False


def _spawn(home: str) -> None:
    import subprocess

    log = open_log(home)
    try:
        # A session of its own: Claude Code neither waits for it nor ends it with the hook.
        subprocess.Popen(
            [sys.executable, "-I", "-c", "from metacog.server import serve; serve()"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log)


def open_log(home: str) -> int:
    path = os.path.join(home, "resident.log")
    reclaim(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    if os.fstat(fd).st_size > LOG_CAP:
        os.ftruncate(fd, 0)
    return fd
