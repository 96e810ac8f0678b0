"""A test run leaves the checkout as it found it: a run that writes into the repository fails.

A hook that learns writes `<project>/.claude/metacog-learnings.jsonl`, and a test or benchmark
whose project was the checkout itself once left 15 detections there that were then committed
(eefb804): every fresh clone's `metacog status` showed a rule nobody learned. So the session's
start takes a snapshot of the checkout (pytest's rootdir) and its end compares: anything
created, changed or removed under it, tools' own folders aside, fails the run and is named.

The snapshot is `git status` (tracked changes, untracked and ignored files, each with its size
and mtime, so a file already changed before the run is still seen changing again) and HEAD;
where the checkout is not a git repository (an unpacked archive), it says so and lists the
files instead. A plugin module (registered by tests/conftest.py) so that
tests/test_checkout_guard.py can run it on a checkout of its own.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

# What tools write beside the code during a run, expected and ignored by .gitignore.
TOOL_DIRS = frozenset(
    {".git", ".venv", ".pytest_cache", "__pycache__", ".hypothesis", ".ruff_cache"}
)
TOOL_SUFFIXES = (".egg-info",)
KEY = pytest.StashKey[dict]()
NOT_GIT = pytest.StashKey[str]()

Snapshot = dict[str, tuple]  # relative path -> what identifies its state (_stat)
HEAD = "/HEAD"  # its key in a snapshot: no path relative to the checkout begins with /
NEW_CODES = ("??", "!!", "")  # untracked, ignored, or a listing's file


def _tool(rel: str) -> bool:
    return any(p in TOOL_DIRS or p.endswith(TOOL_SUFFIXES) for p in rel.split("/") if p)


def _stat(path: Path, code: str = "") -> tuple:
    """(git's status code or '' in a listing, size or 'dir' or 'gone', mtime)."""
    try:
        st = path.lstat()
    except OSError:
        return (code, "gone", 0)
    if path.is_dir() and not path.is_symlink():
        return (code, "dir", 0)
    return (code, st.st_size, st.st_mtime_ns)


def _walk(root: Path, rel: str = "", code: str = "") -> Snapshot:
    """Every file and folder under root/rel, tools' folders left out."""
    out: Snapshot = {}
    for folder, dirs, files in os.walk(root / rel):
        dirs[:] = [d for d in dirs if not _tool(d)]
        here = Path(folder).relative_to(root).as_posix()
        for name in [*dirs, *files]:
            path = f"{name}" if here == "." else f"{here}/{name}"
            out[path] = _stat(root / path, code)
    return out


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):  # no git here: the listing will do
        return subprocess.CompletedProcess(args, 1, "", "")


def _git_snapshot(root: Path) -> Snapshot | None:
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root.resolve():
        return None  # not a repository, or a folder inside another one: list the files
    # `matching`: an ignored folder is one entry, not every file in .venv; folders that are
    # not tools' are listed below, so a file added to an existing `dist/` is still seen.
    status = _git(
        root, "status", "--porcelain=v1", "-z", "--ignored=matching", "--untracked-files=all"
    )
    if status.returncode != 0:
        return None
    out: Snapshot = {}
    fields = iter(status.stdout.split("\0"))
    for entry in fields:
        if not entry:
            continue
        code, rel = entry[:2], entry[3:]
        if code[0] in "RC":
            next(fields, None)  # a rename's second field: where it came from
        rel = rel.rstrip("/")
        if _tool(rel):
            continue
        out[rel] = _stat(root / rel, code)
        if code == "!!" and out[rel][1] == "dir":
            out.update(_walk(root, rel, code))
    out[HEAD] = (_git(root, "rev-parse", "--verify", "-q", "HEAD").stdout.strip(),)
    return out


def snapshot(root: Path) -> tuple[Snapshot, str]:
    """(the checkout's state, '' or why it is only a listing of its files)."""
    found = _git_snapshot(root)
    if found is not None:
        return found, ""
    return _walk(root), f"{root} is not a git checkout: compared a listing of its files"


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What differs, one line each: 'created: PATH', 'changed: PATH', 'removed: PATH'."""
    lines = []
    for rel in sorted(before.keys() | after.keys()):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        if rel == HEAD:
            lines.append(f"HEAD moved: {(old or ('',))[0]} -> {(new or ('',))[0]}")
            continue
        # A file git did not know (untracked, ignored) or a listing's: its coming or going
        # is a creation or a removal; a tracked file's is a change (or its deletion).
        if new is None or new[1] == "gone" or "D" in new[0]:
            what = "removed" if old is None or old[0] in NEW_CODES or "D" in new[0] else "changed"
        elif old is None:
            what = "created" if new[0] in NEW_CODES else "changed"
        else:
            what = "changed"
        lines.append(f"{what}: {rel}")
    return lines


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller watches the checkout
    session.config.stash[KEY], session.config.stash[NOT_GIT] = snapshot(session.config.rootpath)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if KEY not in config.stash:
        return
    found = changes(config.stash[KEY], snapshot(config.rootpath)[0])
    if not found:
        return
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    lines = [
        f"this run wrote into the checkout {config.rootpath} (a test or what it ran must use a "
        "temporary folder; or someone changed it during the run: an edit, a commit):",
        *(f"  {line}" for line in found),
    ]
    if config.stash[NOT_GIT]:
        lines.append(config.stash[NOT_GIT])
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("=", "the checkout changed", red=True)
        for line in lines:
            reporter.write_line(line, red=True)
    else:
        print("\n".join(lines))
