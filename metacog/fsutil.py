"""Files that survive crashes and parallel hooks: atomic writes, whole-line appends, locks.

Claude Code runs tool calls in parallel, so hooks of one session overlap: every
read-modify-write runs under `locked`. Best-effort helpers say so and never raise.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time

LOG_CAP = 512 * 1024  # bytes; one rotation keeps the previous file as .1
_MAX_LINE = 64 * 1024


def ensure_dir(path: str) -> str:
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def atomic_write(path: str, text: str) -> None:
    """Replace `path` with `text` in one step: readers see the old or the new file."""
    ensure_dir(os.path.dirname(path) or ".")
    tmp = f"{path}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, text.encode("utf-8", "surrogatepass"))
    finally:
        os.close(fd)
    os.replace(tmp, path)


def append_line(path: str, line: str, cap: int = 0) -> None:
    """Append one whole line with a single write(2) on an O_APPEND descriptor.

    One write per line means two processes appending at once never interleave
    within a line (lines stay well under PIPE_BUF-independent filesystem limits).
    """
    if "\n" in line:
        line = line.replace("\n", " ")
    data = (line[:_MAX_LINE] + "\n").encode("utf-8", "replace")
    ensure_dir(os.path.dirname(path) or ".")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
        if cap and os.fstat(fd).st_size > cap:
            rotate(path)
    finally:
        os.close(fd)


def rotate(path: str) -> None:
    try:
        os.replace(path, path + ".1")
    except OSError:
        pass


class locked:
    """Exclusive advisory lock on `path + '.lock'` for a read-modify-write."""

    def __init__(self, path: str, timeout: float = 2.0) -> None:
        self.lock_path = path + ".lock"
        self.timeout = timeout
        self.fd = -1

    def __enter__(self) -> locked:  # noqa: PYI034 - typing.Self needs 3.11
        ensure_dir(os.path.dirname(self.lock_path) or ".")
        self.fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
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
    """At most `cap` bytes of a regular file; b'' for anything else (FIFO, device, missing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return read_fd(fd, cap)
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
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        append_line(os.path.join(state_dir, "metacog.log"), f"{stamp} {message}", cap=LOG_CAP)
    except Exception:  # noqa: BLE001, S110 - best-effort: nowhere left to report to
        pass
