"""Which transcripts a report reads, and reading them: offline, read-only, one at a time.

Default: every session under Claude Code's projects folder (`~/.claude/projects/`, or
`$CLAUDE_CONFIG_DIR/projects`). A file that cannot be read is skipped and counted with
a one-line reason, never fatal; an empty file (a session opened and left) is counted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

from metacog import replay as engine

PEEK_BYTES = 256 * 1024  # how far into a transcript its working directory is looked for


def projects_folder() -> str:
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "projects")


def parse_since(text: str) -> float:
    """A date (YYYY-MM-DD, or an ISO time) as epoch seconds; ValueError when it is neither."""
    # A bare date, or a time without a zone, is local time: as a person means it.
    return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).timestamp()


def walk(roots: list[str]) -> Iterator[str]:
    """Every .jsonl file under the folders, and the files, in a stable order."""
    for root in roots:
        if not os.path.isdir(root):
            yield root
            continue
        for folder, dirs, names in os.walk(root, onerror=None):
            dirs.sort()
            for name in sorted(names):
                if name.endswith(".jsonl"):
                    yield os.path.join(folder, name)


def first_cwd(path: str) -> str:
    """The first working directory the transcript names ('' if none near its start)."""
    import json

    try:
        fh, size = engine.open_transcript(path)
    except (OSError, ValueError):
        return ""
    with fh:
        read = 0
        while read < min(size, PEEK_BYTES):
            line = fh.readline(PEEK_BYTES)
            if not line:
                break
            read += len(line)
            if b'"cwd"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("cwd"), str) and entry["cwd"]:
                return entry["cwd"]
    return ""


def inside(cwd: str, project: str) -> bool:
    project = project.rstrip("/") or "/"
    return cwd == project or cwd.startswith(project if project.endswith("/") else project + "/")


class Progress:
    """`[n/N] file` on one line of stderr, rewritten in place; nothing when stderr is not a terminal."""

    def __init__(self, total: int, stream: object = None) -> None:
        self.stream = stream or sys.stderr
        self.total = total
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.shown = False

    def __call__(self, n: int, path: str) -> None:
        if not self.on:
            return
        import shutil

        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        line = f"[{n}/{self.total}] {path}"
        if len(line) > width:
            line = line[: width // 3] + "…" + line[-(width - width // 3 - 1) :]
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def read_one(
    path: str,
    cfg: dict,
    since: float | None,
    project: str,
    summarize: Callable[[dict], dict],
) -> tuple[str, object]:
    """One file replayed and summarized: ("read", summary), ("skip", reason), ("empty", None)
    or ("left out", None) when --since or --project leaves it out."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return "skip", f"cannot read it: {exc.strerror or exc}"
    if since is not None and st.st_mtime < since:
        return "left out", None
    if os.path.isfile(path) and st.st_size == 0:
        return "empty", None
    if project and not inside(first_cwd(path), project):
        return "left out", None
    try:
        result = engine.replay(path, cfg)
    except engine.Unreadable as exc:
        return "skip", str(exc).replace(f"{path} ", "", 1)
    except OSError as exc:
        return "skip", f"cannot read it: {exc.strerror or exc}"
    if not result["messages"]:
        return "skip", "not a Claude Code transcript (no user or assistant line)"
    return "read", summarize(result)


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the workers leave it to this process, which
    # ends them, instead of each printing a KeyboardInterrupt traceback.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _read_packed(args: tuple) -> tuple[str, object]:
    return read_one(*args)


def jobs(files: int) -> int:
    """Worker processes: one per core this process may run on, no more than files."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, files))


def read_all(
    files: list[str],
    summarize: Callable[[dict], dict],
    merge: Callable[[dict], object],
    skip: Callable[[str, str], None],
    empty: Callable[[], None],
    cfg: dict,
    since: float | None = None,
    project: str = "",
    progress: Callable[[int, str], None] | None = None,
    workers: int | None = None,
) -> int:
    """Replay and summarize each file, one worker process per core, and hand each summary
    to `merge` in the order of `files`; the number read."""
    workers = jobs(len(files)) if workers is None else workers
    tasks = [(path, cfg, since, project, summarize) for path in files]
    pool = None
    if workers > 1:
        import multiprocessing

        # fork: the workers start at once with what this process has loaded (a spawned one
        # re-imports metacog, a tenth of a second each); where there is no fork, the default.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        pool = context.Pool(workers, initializer=_worker_start)
        # Small chunks keep every worker busy to the end; one file each costs a round trip
        # per file (measured: 8 files a chunk halves the overhead on 2,000 small sessions).
        chunk = max(1, min(8, len(files) // (workers * 8)))
        results = pool.imap(_read_packed, tasks, chunksize=chunk)
    else:
        results = (read_one(*task) for task in tasks)
    read = 0
    try:
        for n, (path, (kind, value)) in enumerate(zip(files, results, strict=True), 1):
            if progress:
                progress(n, path)
            if kind == "read":
                merge(value)
                read += 1
            elif kind == "skip":
                skip(path, str(value))
            elif kind == "empty":
                empty()
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return read


def utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M") if ts else "-"
