"""The resident hook process: the hook's work without an interpreter start per tool call.

Inside Claude Code a bare start of the runtime's Python costs about 20 ms per tool call
(benchmarks/bench_cli.py), more than the whole budget. So while sessions run, one
process per runtime keeps metacog imported and answers the calls that hooks/run.sh
hands it through hooks/client.pl (a Perl start, about 3 ms). Each call is exactly the
call the hook would have made: the same payload, the client's environment and working
directory, `hook.handle`; state stays on disk under the same locks, so a direct hook
and the resident one can run side by side.

Nothing depends on it. A call is the resident's only once it has taken it (the byte
`_answer` sends first); no socket, no Perl, a refused connection, or nobody taking the
call within 2 s: the client exits 3 with stdin untouched and run.sh runs the hook
itself (and `ensure` starts a resident process for the next calls, at most once a
minute). It serves one call at a time (in-process: a forked child per call measured
3 ms slower, see the commit log), ends after 15 idle minutes, after `MAX_CALLS`, after
a call that grew it by `MAX_GROWTH_MB`, or as soon as its socket is no longer its own
(runtime rebuilt or removed); a call that runs past `WATCHDOG_SECONDS` ends the process
(faulthandler writes where it was to `resident.log`). `METACOG_RESIDENT=0` keeps hooks
from using it or starting it.
"""

from __future__ import annotations

import os
import sys
import time

from metacog import fsutil

TYPE_CHECKING = False  # not `typing`'s: importing typing would cost the direct hook too
if TYPE_CHECKING:
    import socket  # `serve` imports it: it pulls enum, which the direct hook never needs
    from types import ModuleType

SOCKET = "hook.sock"  # hooks/client.pl connects to this name, relative to the folder
MAGIC = b"metacog1"  # the client's first bytes; then a 4-byte length and its environment
ENV_CAP = 8 << 20  # hooks/client.pl does not send more (and runs the hook itself then)
IDLE_SECONDS = 15 * 60
TICK_SECONDS = 2.0  # how often an idle process checks that its socket is still its own
READ_TIMEOUT = 5.0
WATCHDOG_SECONDS = 6  # after up to 2 s in line; hooks/client.pl gives up at 9 s, Claude Code at 10
MAX_CALLS = 20_000  # a fresh process now and then: nothing can accumulate
MAX_GROWTH_MB = 80  # one huge payload grows the process for good: retire after such a call
START_EVERY = 60.0  # seconds between two attempts to start one
LOG_CAP = 64 * 1024
_OWN_ENV = dict(os.environ)  # as started (by a direct hook run, in its caller's environment)


def folder() -> str:
    """The resident process's folder, inside the runtime whose code it runs."""
    return os.path.join(sys.prefix, "resident")


# --- starting one ---------------------------------------------------------------------


def ensure(now: float | None = None) -> None:
    """Start a resident process unless one runs, one was started within the minute, or it
    could not help here (not metacog's runtime, no Perl for the client, switched off).

    Best-effort: never raises. Runs only where the hook runs directly (SessionStart, or a
    call that found nobody to hand it to), after the reply is out.
    """
    try:
        if os.environ.get("METACOG_RESIDENT") == "0" or not hasattr(os, "fork"):
            return
        if not os.path.exists(os.path.join(sys.prefix, ".ready")):
            return  # somebody else's interpreter (tests, a checkout): nothing to keep resident
        home = _private_folder()
        if home is None or _running(home):
            return
        marker = os.path.join(home, "started")
        now = time.time() if now is None else now
        try:
            if now - os.stat(marker).st_mtime < START_EVERY:
                return  # started (or failed to) a moment ago: no crash loop, no crowd
        except OSError:
            pass
        with open(marker, "w"):
            pass
        os.utime(marker, (now, now))
        import shutil

        if shutil.which("perl") is None:
            return  # run.sh cannot reach a resident process without the client
        _spawn(home)
    except Exception:  # noqa: BLE001, S110 - the hook's reply is out; nothing to report to
        pass


def _private_folder(home: str = "") -> str | None:
    """The folder, created 0700 and owned by this user; None if it is anything else."""
    import stat

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
        fd = os.open(os.path.join(home, "lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return True  # cannot tell: do not start another
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases the lock if this process took it
    return False


def _spawn(home: str) -> None:
    import subprocess

    log = _open_log(home)
    try:
        # A session of its own: Claude Code neither waits for it nor ends it with the hook.
        subprocess.Popen([sys.executable, "-I", "-c", "from metacog.resident import serve; serve()"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd="/",
                         start_new_session=True, close_fds=True)
    finally:
        os.close(log)


def _open_log(home: str) -> int:
    path = os.path.join(home, "resident.log")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    if os.fstat(fd).st_size > LOG_CAP:
        os.ftruncate(fd, 0)
    return fd


# --- being one ------------------------------------------------------------------------


def serve(home: str = "") -> None:
    """The resident process's life: serve calls until idle, replaced, or told to stop.
    `home` is for tests; the real one lives in its runtime's folder."""
    import fcntl
    import socket

    home = _private_folder(home)
    if home is None:
        return
    lock = os.open(os.path.join(home, "lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    # `ensure` probes the same lock for a moment: a running resident holds it for good.
    deadline = time.monotonic() + 0.5
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            if time.monotonic() > deadline:
                return  # another one runs
            time.sleep(0.01)
    # Imported once, before the socket appears: this is what the process is for.
    from metacog import events, hook  # noqa: F401 - hook.handle imports events per call

    # Each call moves to its caller's working directory: the folder is held open instead
    # (the path may also be one test's symlink to a runtime shared by many).
    here = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    fsutil.atomic_write(os.path.join(home, "pid"), f"{os.getpid()}\n")  # before the socket: `stop` finds it
    os.chdir(here)  # bind a relative name: socket paths are limited to about 104 bytes
    fresh = SOCKET + ".new"  # bound and listening before it takes the name: no refused connects
    try:
        os.unlink(fresh)  # a previous process's leftover: the lock says it is gone
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(fresh)
    finally:
        os.umask(old_umask)
    listener.listen(64)
    os.replace(fresh, SOCKET)
    mine = os.stat(SOCKET).st_ino
    log = _open_log(home)

    listener.settimeout(TICK_SECONDS)
    # Growth, not the peak itself: where only ru_maxrss is known, a peak from before exec
    # (the process that started this one) counts too.
    start_mb = _peak_mb()
    idle_since = time.monotonic()
    calls = 0
    try:
        while calls < MAX_CALLS:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - idle_since > IDLE_SECONDS or not _owns(here, mine):
                    break
                continue
            _answer(conn, hook, log, here)
            calls += 1
            idle_since = time.monotonic()
            if _peak_mb() - start_mb > MAX_GROWTH_MB:
                break
    finally:
        _retire(here, listener, mine, hook, log)


def _peak_mb() -> float:
    """This process's peak resident memory: Linux's VmHWM (this program's alone), else
    ru_maxrss (KiB, bytes on macOS), which may include a peak from before exec."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def _owns(here: int, inode: int) -> bool:
    """Whether the folder (held open as `here`) still names this process's socket."""
    try:
        return os.stat(SOCKET, dir_fd=here, follow_symlinks=False).st_ino == inode
    except OSError:
        return False


def _retire(here: int, listener: socket.socket, inode: int, hook: ModuleType, log: int) -> None:
    """Stop taking calls without dropping any: remove the name first (new clients then
    find nobody and run the hook themselves), then answer what already connected."""
    if _owns(here, inode):
        try:
            os.unlink(SOCKET, dir_fd=here)
        except OSError:
            pass
    listener.setblocking(False)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            break
        _answer(conn, hook, log, here)
    listener.close()


def _answer(conn: socket.socket, hook: ModuleType, log: int, here: int) -> None:
    """One call: the client's environment and payload in, the hook's reply out. Between
    calls the process is itself again: its own environment, its own folder."""
    import faulthandler

    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True, file=log)
    state_dir = ""
    try:
        conn.setblocking(True)
        conn.settimeout(READ_TIMEOUT)
        # The call is taken: until this byte the client may still run the hook itself
        # (a call waiting behind a slow one, or stranded by this process's end, is not lost).
        conn.sendall(b"+")
        request = _receive(conn, hook.STDIN_CAP + ENV_CAP)
        parsed = parse(request)
        if parsed is None:
            return
        env, raw = parsed
        _adopt(env)
        try:
            os.chdir(env.get("PWD") or "/")
        except OSError:
            os.chdir("/")
        if env.get("METACOG_DISABLE") == "1":
            return
        from metacog import paths

        state_dir = paths.state_dir()
        reply = hook.handle(raw, state_dir=state_dir)
        if reply:
            conn.sendall(reply.encode("ascii", "backslashreplace"))
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass  # the client gave up (its own bounds): nothing wrong here, nobody to answer
    except Exception as exc:  # noqa: BLE001 - one bad call must not end the process
        hook._log_failure(state_dir, exc)
    finally:
        faulthandler.cancel_dump_traceback_later()
        try:
            conn.close()
        except OSError:
            pass
        try:
            os.fchdir(here)  # not the caller's folder: a resident must not keep a drive busy
        except OSError:
            pass
        _adopt(_OWN_ENV)  # a failure before the next call's adoption logs where this process would


def _receive(conn: socket.socket, cap: int) -> bytes:
    """Everything the client sends, up to `cap` + 1 bytes (more means: too large)."""
    chunks = []
    size = 0
    while size <= cap:
        chunk = conn.recv(min(1 << 20, cap + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def parse(request: bytes) -> tuple[dict[str, str], bytes] | None:
    """(environment, payload) from a client's request, or None if it is not one.

    The format hooks/client.pl writes: MAGIC, the environment's length (4 bytes, big
    endian), the environment as NUL-terminated NAME=value entries, then the payload.
    """
    head = len(MAGIC) + 4
    if len(request) < head or not request.startswith(MAGIC):
        return None
    size = int.from_bytes(request[len(MAGIC):head], "big")
    if size > ENV_CAP or len(request) < head + size:
        return None
    env = {}
    for entry in request[head:head + size].split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name:
            env[os.fsdecode(name)] = os.fsdecode(value)
    return env, request[head + size:]


def _adopt(env: dict[str, str]) -> None:
    """Take `env` as this process's environment: for one call, that of the hook process
    Claude Code would have started."""
    zone = os.environ.get("TZ")
    for name in [name for name in os.environ if name not in env]:
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            try:
                os.environ[name] = value
            except (ValueError, OSError):
                pass  # a name the platform refuses: the hook would not have seen it either
    if os.environ.get("TZ") != zone and hasattr(time, "tzset"):
        time.tzset()  # log stamps in the caller's time zone, as its own process would write them
