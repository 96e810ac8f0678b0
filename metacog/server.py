"""Being the resident process: serve the calls hooks/client.pl hands over, one at a time.

Imported only by the resident process itself (`resident.ensure` starts it with
`from metacog.server import serve`); the hook never imports this module, so there is no
circle: this module imports the hook, the hook imports only `metacog.resident`.
"""

from __future__ import annotations

import faulthandler
import fcntl
import os
import socket  # here, not in the hook: it pulls enum, which the direct hook never needs
import stat
import sys
import time

from metacog import fsutil, hook, protocol, resident, state

TICK_SECONDS = 2.0  # how often an idle process checks that its socket is still its own
READ_TIMEOUT = 5.0
MAX_CALLS = 20_000  # a fresh process now and then: nothing can accumulate
MAX_GROWTH_MB = 80  # one huge payload grows the process for good: retire after such a call
_OWN_ENV = dict(os.environ)  # as started (by a direct hook run, in its caller's environment)


def serve(home: str = "") -> None:
    """The resident process's life: serve calls until idle, replaced, or told to stop.
    `home` is for tests; the real one lives in its runtime's folder."""
    home = resident.private_folder(home)
    if home is None:
        return
    resident.reclaim(os.path.join(home, resident.LOCK))
    lock = os.open(os.path.join(home, resident.LOCK), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
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
    from metacog import handlers  # noqa: F401 - hook.handle imports handlers per call

    # Each call moves to its caller's working directory: the folder is held open instead
    # (the path may also be one test's symlink to a runtime shared by many).
    here = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    resident.reclaim(os.path.join(home, "pid"))
    fsutil.atomic_write(
        os.path.join(home, "pid"), f"{os.getpid()}\n"
    )  # before the socket: `stop` finds it
    os.chdir(here)  # bind a relative name: socket paths are limited to about 104 bytes
    fresh = (
        protocol.SOCKET + ".new"
    )  # bound and listening before it takes the name: no refused connects
    resident.reclaim(
        fresh, kind=-1
    )  # a previous process's leftover, whatever it is: the lock says it is gone
    resident.reclaim(
        protocol.SOCKET, kind=stat.S_IFSOCK
    )  # a folder there: the name could never be taken
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        listener.bind(fresh)
    finally:
        os.umask(old_umask)
    listener.listen(64)
    os.replace(fresh, protocol.SOCKET)
    mine = os.stat(protocol.SOCKET).st_ino
    log = resident.open_log(home)

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
                if time.monotonic() - idle_since > resident.IDLE_SECONDS or not _owns(here, mine):
                    break
                continue
            _answer(conn, log, here)
            _not_late(here)
            calls += 1
            idle_since = time.monotonic()
            if _peak_mb() - start_mb > MAX_GROWTH_MB:
                break
    finally:
        _retire(here, listener, mine, log)


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


def _not_late(here: int) -> None:
    """A call served: whatever late mark callers left, this process is not stuck."""
    try:
        os.unlink(resident.LATE_MARK, dir_fd=here)
    except OSError:
        pass


def _owns(here: int, inode: int) -> bool:
    """Whether the folder (held open as `here`) still names this process's socket."""
    try:
        return os.stat(protocol.SOCKET, dir_fd=here, follow_symlinks=False).st_ino == inode
    except OSError:
        return False


def _retire(here: int, listener: socket.socket, inode: int, log: int) -> None:
    """Stop taking calls without dropping any: remove the name first (new clients then
    find nobody and run the hook themselves), then answer what already connected."""
    if _owns(here, inode):
        try:
            os.unlink(protocol.SOCKET, dir_fd=here)
        except OSError:
            pass
    listener.setblocking(False)
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            break
        _answer(conn, log, here)
    listener.close()


def _answer(conn: socket.socket, log: int, here: int) -> None:
    """One call: the client's environment and payload in, the hook's reply out. Between
    calls the process is itself again: its own environment, its own folder."""
    faulthandler.dump_traceback_later(protocol.WATCHDOG_SECONDS, exit=True, file=log)
    state_dir = ""
    saves: list = []  # the session's state, written once the reply is out (state.AFTER)
    try:
        conn.setblocking(True)
        conn.settimeout(READ_TIMEOUT)
        # The call is taken: until this byte the client may still run the hook itself
        # (a call waiting behind a slow one, or stranded by this process's end, is not lost).
        conn.sendall(protocol.TAKEN)
        request = _receive(conn, hook.STDIN_CAP + protocol.ENV_CAP)
        parsed = parse(request)
        if parsed is None:
            return
        env, raw = parsed
        _adopt(env)
        try:
            os.chdir(env.get("PWD") or "/")
        except OSError:
            os.chdir("/")
        from metacog import paths

        home = paths.metacog_home()
        if home:
            # Relative to the caller's folder: resolved now, for work done after the reply
            # (state.after_reply), which runs back in this process's own folder.
            os.environ["METACOG_HOME"] = home
        if env.get("METACOG_DISABLE") == "1":
            return

        state_dir = paths.state_dir()
        state.AFTER = saves
        try:
            reply = hook.handle(raw, state_dir=state_dir)
        finally:
            state.AFTER = None
        if reply:
            conn.sendall(reply.encode("ascii", "backslashreplace"))
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass  # the client gave up (its own bounds): nothing wrong here, nobody to answer
    except Exception as exc:  # noqa: BLE001 - one bad call must not end the process
        hook.log_failure(state_dir, exc)
    finally:
        try:
            # Out of the caller's folder before the reply ends (the close): once the call
            # is over, a resident must not keep its drive busy, not even for a moment.
            os.fchdir(here)
        except OSError:
            pass
        try:
            conn.close()  # the reply's end: the client goes, Claude Code goes on
        except OSError:
            pass
        for save in saves:
            try:
                save()
            except Exception as exc:  # noqa: BLE001 - each save lets its lock go whatever happens
                hook.log_failure(state_dir, exc)
        faulthandler.cancel_dump_traceback_later()
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

    The format hooks/client.pl writes: protocol.MAGIC, the environment's length (4 bytes, big
    endian), the environment as NUL-terminated NAME=value entries, then the payload.
    """
    head = len(protocol.MAGIC) + 4
    if len(request) < head or not request.startswith(protocol.MAGIC):
        return None
    size = int.from_bytes(request[len(protocol.MAGIC) : head], "big")
    if size > protocol.ENV_CAP or len(request) < head + size:
        return None
    env = {}
    for entry in request[head : head + size].split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name:
            env[os.fsdecode(name)] = os.fsdecode(value)
    return env, request[head + size :]


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
