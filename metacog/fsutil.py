"""Files that survive crashes and parallel hooks: atomic writes, whole-line appends, locks.

Claude Code runs tool calls in parallel, so hooks of one session overlap: every
read-modify-write runs under `locked`. Best-effort helpers say so and never raise.
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import json
import os
import stat
import time

LOG_CAP = 512 * 1024  # bytes; one rotation keeps the previous file as .1
_MAX_LINE = 64 * 1024
# Every open of a file metacog reads or appends: never through a symlink (a committed
# `.claude` can point anywhere), never blocking (a FIFO in `sessions/` held every
# SessionStart until Claude Code's timeout), and (open_regular) never a device: a link
# to /dev/zero grew the hook to 9 GB in 10 s.
_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TMP_SEQ = itertools.count()


class Unreadable(OSError, ValueError):
    """A file that cannot hold what metacog wrote there: not a regular file, too large, not JSON.

    Both an OSError (the file cannot be used) and a ValueError (its content is wrong), so a
    caller catching either, as callers of open() or json.loads() do, catches this too.
    """


def ensure_dir(path: str) -> str:
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def open_regular(
    path: str, flags: int = os.O_RDONLY, mode: int = 0o600, follow: bool = False
) -> int:
    """A descriptor on the regular file at `path` (a symlink only if `follow`: a person's own
    config may be one, a file metacog wrote never is).

    FileNotFoundError if there is none; Unreadable for a symlink, folder, FIFO, device or
    socket; OSError for what cannot be opened at all.
    """
    flags |= _OPEN_FLAGS & ~os.O_NOFOLLOW if follow else _OPEN_FLAGS
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENODEV):
            raise Unreadable(f"{path}: not a regular file ({errno.errorcode[exc.errno]})") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Unreadable(f"{path}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str, cap: int) -> bytes:
    """A regular file's bytes; Unreadable when it holds more than `cap` (a healthy one never does)."""
    fd = open_regular(path)
    try:
        data = read_fd(fd, cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:
        raise Unreadable(f"{path}: larger than {cap} bytes")
    return data


def parse_json(data: bytes | str) -> object:
    """json.loads, with every way it can fail as Unreadable: a damaged file raises ValueError,
    but also RecursionError (deep nesting), MemoryError, UnicodeDecodeError and others."""
    try:
        # NaN and Infinity are not JSON: read back, they would make every later write of the
        # same file fail (dumps refuses them), so a file holding one is damaged.
        return json.loads(data, parse_constant=_not_json)
    except Exception as exc:  # noqa: BLE001 - whatever the parser raises, the text is unreadable
        raise Unreadable(f"not JSON: {type(exc).__name__}") from None


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def read_json(path: str, cap: int) -> object:
    """The JSON value in the regular file at `path`. FileNotFoundError if absent; every other
    failure (unreadable, not a regular file, over `cap`, not JSON) is an OSError or a ValueError."""
    return parse_json(read_bytes(path, cap))


def dumps(value: object) -> str:
    """Compact JSON, ASCII only; ValueError for NaN or infinity (not JSON), TypeError for other types."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte or raise: os.write may write less than asked (a full disk, a file size limit)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def atomic_write(
    path: str, text: str | bytes, sync_dir: bool = False, durable: bool = True
) -> None:
    """Replace `path` with `text` in one step: readers see the old or the new file, whole.

    Written to a temporary file in the same folder, every byte checked (and the close, where
    NFS reports) and, if `durable`, fsynced before the rename: on a full disk the old file
    stays as it was (a short file once replaced a 5 KB state with its first 4,096 bytes).
    `sync_dir` also makes the rename itself durable.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    folder = os.path.dirname(path) or "."
    ensure_dir(folder)
    tmp = f"{path}.tmp-{os.getpid()}-{next(_TMP_SEQ)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o600)
    except FileExistsError:  # left by a killed process whose pid came round again
        os.unlink(tmp)
        fd = os.open(tmp, flags, 0o600)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.replace(tmp, path)
        except IsADirectoryError:  # a folder where the file was: set aside, as a damaged file is
            set_aside(path)
            os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    if sync_dir:
        sync_folder(folder)


def sync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def append_line(path: str, line: str, cap: int = 0) -> None:
    """Append one whole line with a single write(2) on an O_APPEND descriptor, or nothing.

    One write per line means two processes appending at once never interleave within a
    line. A write that could not complete (a full disk) is cut back off, so no torn line
    is left for the next append to complete; OSError then.
    """
    if "\n" in line:
        line = line.replace("\n", " ")
    data = (line[:_MAX_LINE] + "\n").encode("utf-8", "replace")
    ensure_dir(os.path.dirname(path) or ".")
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        try:
            written = os.write(fd, data)
        except OSError:
            written = 0
            raise
        finally:
            if written < len(data):
                _cut_back(fd, written)
        if cap and os.fstat(fd).st_size > cap:
            rotate(path)
    finally:
        os.close(fd)
    if written < len(data):
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)}: {path}")


def _cut_back(fd: int, written: int) -> None:
    # With O_APPEND the offset is the end of what this write put there.
    if written > 0:
        try:
            os.ftruncate(fd, os.lseek(fd, 0, os.SEEK_CUR) - written)
        except OSError:
            pass


def rotate(path: str) -> None:
    """Move a log aside as `.1`, and start the next one empty and private (0600): a file a
    shell redirection creates would follow the umask."""
    try:
        os.replace(path, path + ".1")
        os.close(
            os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
        )
    except OSError:
        pass


def touch(path: str) -> None:
    """Create `path` (empty) if absent, or set aside what stands in its place and then create it:
    an open for writing of a FIFO would block."""
    try:
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT)
    except Unreadable:
        set_aside(path)
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT)
    os.utime(fd)
    os.close(fd)


def set_aside(path: str) -> str:
    """Rename a damaged file (or whatever is in its place) to `<path>.corrupt-<time>`, for
    `metacog doctor`, so the next write starts afresh; '' if it could not be moved."""
    target = f"{path}.corrupt-{int(time.time())}"
    for n in range(10):
        candidate = f"{target}-{n}" if n else target
        if os.path.lexists(candidate):
            continue
        try:
            os.rename(path, candidate)
        except OSError:
            continue
        return candidate
    return ""


class locked:  # noqa: N801 - used as a function: `with locked(path):`
    """Exclusive advisory lock on `path + '.lock'` for a read-modify-write.

    A lock file replaced by a folder, a symlink or a FIFO is set aside and made afresh:
    otherwise what it guards would never be written again.
    """

    def __init__(self, path: str, timeout: float = 2.0) -> None:
        self.lock_path = path + ".lock"
        self.timeout = timeout
        self.fd = -1

    def _open(self) -> int:
        ensure_dir(os.path.dirname(self.lock_path) or ".")
        try:
            return open_regular(self.lock_path, os.O_RDWR | os.O_CREAT)
        except Unreadable:
            set_aside(self.lock_path)
            return open_regular(self.lock_path, os.O_RDWR | os.O_CREAT)

    def __enter__(self) -> locked:  # noqa: PYI034 - typing.Self needs 3.11
        self.fd = self._open()
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                # Bounded: a hook must never block the agent; past the deadline the
                # caller's TimeoutError reaches the boundary, which logs and stays silent.
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise TimeoutError(f"lock busy: {self.lock_path}") from None
                time.sleep(0.002)

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


def read_capped(path: str, cap: int) -> bytes:
    """At most `cap` bytes of a regular file, through a symlink; b'' for anything else
    (FIFO, device, folder, missing, unreadable)."""
    try:
        fd = open_regular(path, follow=True)
    except (OSError, ValueError):
        return b""
    try:
        return read_fd(fd, cap)
    except OSError:
        return b""
    finally:
        os.close(fd)


def read_fd(fd: int, cap: int) -> bytes:
    """Up to `cap` bytes from an open descriptor (a large read may come back in parts)."""
    chunks, left = [], cap
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 22))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def log_error(state_dir: str, message: str) -> None:
    """Best-effort; never raises. The one log `metacog doctor` reads."""
    path = os.path.join(state_dir, "metacog.log")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    try:
        try:
            append_line(path, f"{stamp} {message}", cap=LOG_CAP)
        except Unreadable:  # a folder or a link in the log's place: the log must still work
            set_aside(path)
            append_line(path, f"{stamp} {message}", cap=LOG_CAP)
    except Exception:  # noqa: BLE001, S110 - best-effort: nowhere left to report to
        pass


STRICT = "METACOG_STRICT"  # tests only: the file each contained failure is also recorded in


def strict(what: str, exc: BaseException) -> None:
    """Where $METACOG_STRICT names a file (the test suite's strict mode, tests/conftest.py),
    a failure a boundary contained is also appended to it, traceback and all, so that the
    test it happened in fails; behaviour is otherwise the same. Looked up only once
    something has failed: a call that succeeds never reads it. Never raises."""
    try:
        path = os.environ.get(STRICT)
        if not path:
            return
        import traceback

        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        record = f"{what} failed (pid {os.getpid()}):\n{text}\n".encode(errors="replace")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, record)
        finally:
            os.close(fd)
    except BaseException:  # noqa: BLE001, S110 - the failure is logged; nothing else to do
        pass
