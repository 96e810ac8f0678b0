"""The files of a repository: `git ls-files` where git knows it, else a bounded walk."""

from __future__ import annotations

import os
import time

SKIP_DIRS = frozenset(
    (
        "node_modules",
        "__pycache__",
        "venv",
        "env",
        "build",
        "dist",
        "target",
        "vendor",
        "site-packages",
        "bower_components",
        "coverage",
        "htmlcov",
        "out",
    )
)
GIT_ENV_DROP = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
)


def git(root: str, args: list[str], timeout: float) -> list[str] | None:
    """NUL-separated paths from a git command in `root`, or None (no git, not a repo, too slow)."""
    import subprocess  # ~3 ms; only when a listing is needed

    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_DROP}
    try:
        done = subprocess.run(
            ["git", "--literal-pathspecs", "-C", root, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=max(timeout, 0.05),
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [os.fsdecode(p) for p in done.stdout.split(b"\0") if p]


def walk(
    root: str, tops: list[str], deadline: float, cap: int
) -> tuple[list[str], list[str]] | None:
    """(files, dirs) under `tops` without git: skips hidden, dependency, build and venv dirs.

    None when `deadline` came first; a walk that found more than `cap` files stops there
    (the caller sees more than `cap`): running late says nothing about the size.
    """
    files: list[str] = []
    dirs: list[str] = []
    stack = list(tops)
    while stack:
        if len(files) > cap:
            break
        if time.perf_counter() > deadline:
            return None
        rel = stack.pop()
        dirs.append(rel)
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as entries:
                for entry in entries:
                    name = entry.name
                    sub = rel + "/" + name if rel else name
                    if entry.is_dir(follow_symlinks=False):
                        if not skipped(root, sub, name):
                            stack.append(sub)
                    elif entry.is_file():
                        files.append(sub)
        except OSError:
            continue
    return files, dirs


def skipped(root: str, sub: str, name: str) -> bool:
    return (
        name.startswith(".")
        or name in SKIP_DIRS
        or os.path.exists(os.path.join(root, sub, "pyvenv.cfg"))
    )


def usable(rel: str) -> bool:
    return "\n" not in rel and "\r" not in rel
