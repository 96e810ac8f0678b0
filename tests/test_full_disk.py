"""A full disk (ENOSPC on a small tmpfs): no good file replaced by a short one, no torn line.

Needs root to mount the tmpfs (the tests say so and are skipped otherwise: they are not
counted as passing anywhere).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hooktest import captured, send
from learningtest import LOOP, T0, cfg, state_dir, write_session

from metacog import fsutil, learning
from metacog.learning import store


@contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at `where` for the block (the test is skipped where mounting is refused)."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs ({options}) here: {done.stderr.decode(errors='replace').strip()}"
        )
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    with tmpfs(mount, "size=256k"):
        monkeypatch.setenv("METACOG_HOME", str(mount / "home"))
        yield mount


def fill(mount: Path, leave: int = 0) -> None:
    """Take every free page but `leave` bytes' worth, besides the unused end of each file's last page."""
    with open(mount / "filler", "ab", buffering=0) as fh:
        for size in (65536, 4096, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError:
                continue
        fh.truncate(max(fh.tell() - leave, 0))


def test_a_state_write_on_a_full_disk_keeps_the_old_state(small_disk: Path) -> None:
    for i in range(20):
        call = captured("PostToolUse", "Bash")
        call["tool_input"]["command"] = f"ls /tmp/{'x' * 100}/{i}"
        send(call)
    [path] = Path(state_dir(), "sessions").glob("*.json")
    before = path.read_bytes()
    assert len(before) > 4096
    fill(small_disk, leave=4096)  # one page: room for the first 4,096 bytes of the new state
    with pytest.raises(OSError):  # the boundary logs it (if it can) and stays silent
        send(captured("PostToolUse", "Read"))
    assert path.read_bytes() == before and json.loads(before)["calls"] == 20
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, path.name + ".lock"])


def test_an_append_that_cannot_complete_leaves_no_torn_line(small_disk: Path) -> None:
    path = Path(small_disk, "home", "log.jsonl")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x" * 4000 + b"\n")  # 96 bytes left in its page
    fill(small_disk)
    with pytest.raises(OSError):
        fsutil.append_line(str(path), "y" * 300)
    assert path.read_bytes() == b"x" * 4000 + b"\n"
    fsutil.append_line(str(path), "z" * 50)  # what fits still goes in, whole
    assert path.read_bytes().endswith(b"\n" + b"z" * 50 + b"\n")


@pytest.mark.parametrize("torn", [True, False], ids=["with-a-corrupt-line", "clean"])
def test_a_compaction_on_a_full_disk_leaves_the_store_as_it_was(
    small_disk: Path, torn: bool
) -> None:
    root = small_disk / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".claude").mkdir()
    recs = [
        {"v": 1, "type": "detection", "rule": "error-loop", "at": T0 - i, "session": f"{i:016x}"}
        for i in range(212)
    ]
    # Each line three times (a session evaluated again writes its evidence again): compaction
    # keeps one of each, a rewrite of 23 KB. A corrupt line makes it copy the store aside
    # first (69 KB): that copy fails too.
    lines = "".join(json.dumps(r) + "\n" for r in recs) * 3 + ("{torn\n" if torn else "")
    Path(store.project_path(str(root))).write_text(lines)
    write_session("s0", str(root), T0, **LOOP)
    # Every file the evaluation needs, made before the disk fills: only the rewrite lacks room.
    learning.on_session_start(str(root), "warm", state_dir(), cfg(), T0)
    fill(small_disk, leave=3 * 4096)  # room for a part of the rewrite only
    with pytest.raises(OSError):
        learning.on_session_end(
            str(root), "s0", state_dir(), cfg(learning={"compact_bytes": 48 * 1024}), T0 + 60
        )
    kept = Path(store.project_path(str(root))).read_text()
    assert kept.startswith(lines) and kept.endswith("\n")  # all 212, and the new line only if whole
    quarantine = Path(store.paths.data_dir(), "quarantine")
    assert not quarantine.exists() or all(p.read_text() == lines for p in quarantine.iterdir())
    os.unlink(small_disk / "filler")
    learning.on_session_start(
        str(root), "s1", state_dir(), cfg(), T0 + 120
    )  # room again: it finishes
    assert learning.rules(str(root), cfg(), T0 + 120)[0]["detections"] == 213


def test_a_read_only_project_store_still_teaches_the_index_and_is_not_retried(
    tmp_path: Path,
) -> None:
    from learningtest import session

    from metacog.learning import scopes

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    claude = root / ".claude"
    claude.mkdir()
    with tmpfs(claude, "size=64k,ro"):
        session(str(root), "s0", T0, LOOP)  # root ignores permissions: a read-only mount it cannot
        index = json.loads(Path(scopes.index_path()).read_text())
        assert [t[0] for t in index["rules"]["error-loop"]["projects"].values()] == [1]
        marks = Path(state_dir(), "learning", "marks")
        assert (marks / "s0.done").exists() and not (marks / "s0.writing").exists()
        assert "Read-only file system" in Path(state_dir(), "metacog.log").read_text()
        logged = Path(state_dir(), "metacog.log").read_text().count("not written")
        learning.on_session_start(str(root), "s1", state_dir(), cfg(), T0 + 86400)
        assert (
            Path(state_dir(), "metacog.log").read_text().count("not written") == logged
        )  # not retried
