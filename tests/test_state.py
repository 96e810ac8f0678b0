"""Session state: no event lost under overlapping hooks, hostile ids contained, garbage collected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hooktest import captured, send

from metacog import state

ROOT = Path(__file__).resolve().parents[1]
WORKER = """
import sys, json
sys.path.insert(0, sys.argv[1])
from metacog import hook, paths
payload = json.loads(sys.argv[2])
for i in range(int(sys.argv[3])):
    payload["tool_input"]["command"] = f"echo {sys.argv[4]}-{i}"
    hook.handle(json.dumps(payload).encode(), paths.state_dir())
"""


def session_state(home: Path, sid: str) -> dict:
    return json.loads((home / "state" / "sessions" / f"{sid}.json").read_text())


def test_eight_overlapping_processes_lose_no_event(isolated_home: Path) -> None:
    payload = captured("PostToolUse", "Bash")
    workers = [
        subprocess.Popen(
            [sys.executable, "-S", "-c", WORKER, str(ROOT), json.dumps(payload), "25", str(w)]
        )
        for w in range(8)
    ]
    assert [w.wait(timeout=120) for w in workers] == [0] * 8
    st = session_state(isolated_home, payload["session_id"])
    assert st["calls"] == 200
    assert st["summary"]["calls"] == 200
    assert st["windows"]["main"]["calls"] == 200
    assert len(st["windows"]["main"]["actions"]) == state.WINDOW


def test_threads_of_two_sessions_keep_their_own_counts(isolated_home: Path) -> None:
    def run(sid: str) -> None:
        for _ in range(30):
            send(captured("PostToolUse", "Read", session_id=sid))

    threads = [threading.Thread(target=run, args=(f"s{i % 2}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert session_state(isolated_home, "s0")["calls"] == 120
    assert session_state(isolated_home, "s1")["calls"] == 120


def test_clean_session_id() -> None:
    assert (
        state.clean_session_id("ce9e5016-97e8-40a4-af2a-8f2d8e9da37b")
        == "ce9e5016-97e8-40a4-af2a-8f2d8e9da37b"
    )
    assert state.clean_session_id("../../x") == "x"
    assert state.clean_session_id("a" * 5000) == "a" * 64
    for bad in ("", "..", "/", "\x00", None, 7, ["a"]):
        assert state.clean_session_id(bad) == ""


def test_corrupt_state_is_moved_aside_and_sensing_goes_on(isolated_home: Path) -> None:
    payload = captured("PostToolUseFailure", "Bash")
    send(payload)
    path = isolated_home / "state" / "sessions" / f"{payload['session_id']}.json"
    path.write_text('{"v": 1, "windows": {')
    for _ in range(3):
        out = send(payload)
    assert out is not None  # a fresh state counted three failures
    assert list(path.parent.glob("*.corrupt-*"))


def test_unknown_schema_is_not_trusted(isolated_home: Path) -> None:
    payload = captured("PostToolUse", "Bash")
    send(payload)
    path = isolated_home / "state" / "sessions" / f"{payload['session_id']}.json"
    path.write_text(json.dumps({"v": 999, "windows": {}}))
    send(payload)
    assert session_state(isolated_home, payload["session_id"])["v"] == state.SCHEMA


def test_old_sessions_are_collected(isolated_home: Path) -> None:
    send(captured("PostToolUse", "Bash", session_id="old"))
    send(captured("PostToolUse", "Bash", session_id="new"))
    folder = isolated_home / "state" / "sessions"
    old = time.time() - state.GC_AGE_S - 10
    os.utime(folder / "old.json", (old, old))
    assert state.collect_garbage(str(isolated_home / "state"), time.time()) >= 1
    assert not (folder / "old.json").exists() and (folder / "new.json").exists()


def test_what_was_set_aside_in_a_files_place_is_collected_too(isolated_home: Path) -> None:
    folder = isolated_home / "state" / "sessions"
    folder.mkdir(parents=True)
    for kind in ("folder", "fifo", "link"):
        path = folder / f"{kind}.json"
        if kind == "folder":
            (path / "inside").mkdir(parents=True)
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
        assert (
            state.load(str(path), kind, time.time())["v"] == state.SCHEMA
        )  # set aside, a fresh state
    aside = sorted(folder.glob("*.corrupt-*"))
    assert len(aside) == 3
    old = time.time() - state.GC_AGE_S - 10
    for path in aside:
        os.utime(path, (old, old), follow_symlinks=False)
    state.collect_garbage(str(isolated_home / "state"), time.time())
    assert not list(folder.glob("*.corrupt-*"))


def test_windows_are_capped(isolated_home: Path) -> None:
    for i in range(state.MAX_WINDOWS + 10):
        send(
            captured("PostToolUse", "Bash", agent_id=f"agent{i}", agent_type="x"),
            now=1_800_000_000 + i,
        )
    st = session_state(isolated_home, captured("PostToolUse", "Bash")["session_id"])
    assert len(st["windows"]) <= state.MAX_WINDOWS + 1 and "main" in st["windows"]


def test_logs_rotate_at_their_cap(isolated_home: Path) -> None:
    from metacog import fsutil

    state_dir = str(isolated_home / "state")
    for _ in range(fsutil.LOG_CAP // 1000 + 5):
        fsutil.log_error(state_dir, "x" * 1000)
    log = isolated_home / "state" / "metacog.log"
    assert log.stat().st_size <= fsutil.LOG_CAP + 2000
    assert (isolated_home / "state" / "metacog.log.1").exists()


def test_hook_stderr_log_is_rotated_at_session_start(tmp_path: Path, monkeypatch) -> None:
    from metacog import fsutil

    log = tmp_path / "hook-stderr.log"
    log.write_bytes(b"x" * (fsutil.LOG_CAP + 1))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path))
    assert send(captured("SessionStart")) is None
    assert (tmp_path / "hook-stderr.log.1").stat().st_size == fsutil.LOG_CAP + 1
    # The next one is started empty and private: run.sh's `2>>` would create it with the umask.
    assert log.stat().st_size == 0 and log.stat().st_mode & 0o777 == 0o600


def test_a_huge_transcript_is_read_in_bounded_steps(tmp_path: Path, isolated_home: Path) -> None:
    from metacog import transcript as tr

    huge = tmp_path / "huge.jsonl"
    size = 2 * 1024 * 1024 * 1024
    with huge.open("wb") as fh:
        fh.truncate(size)  # 2 GiB, sparse: reading it whole would take long and all memory
    payload = captured("PostToolUse", "Bash", transcript_path=str(huge))
    for _ in range(3):
        assert send(payload) is None
    cursor = session_state(isolated_home, payload["session_id"])["transcript"]
    assert cursor["offset"] >= size - tr.READ_CAP  # it looked only at the end


def test_missing_or_unreadable_cwd(tmp_path: Path) -> None:
    fail = captured("PostToolUseFailure", "Bash", cwd=str(tmp_path / "gone"))
    assert [send(fail) is None for _ in range(3)] == [True, True, False]
    odd = captured("PostToolUseFailure", "Bash", cwd="\x00/../..", session_id="odd")
    assert [send(odd) is None for _ in range(3)] == [True, True, False]


def test_a_state_with_a_wrong_shape_inside_is_set_aside(isolated_home: Path) -> None:
    payload = captured("PostToolUseFailure", "Bash")
    send(payload)
    path = isolated_home / "state" / "sessions" / f"{payload['session_id']}.json"
    broken = json.loads(path.read_text())
    broken["calls"] = "many"
    path.write_text(json.dumps(broken))
    with pytest.raises(TypeError):  # in-process; main() turns this into a log line and exit 0
        send(payload)
    assert list(path.parent.glob("*.corrupt-*"))
    replies = [send(payload) for _ in range(3)]
    assert replies[2] is not None  # sensing goes on with a fresh state


@pytest.mark.sense_may_fail("sense vestibular")
def test_a_sense_that_breaks_does_not_silence_the_others(isolated_home: Path, monkeypatch) -> None:
    from metacog.senses import vestibular

    def broken(*args: object) -> None:
        raise ZeroDivisionError("broken sense")

    monkeypatch.setattr(vestibular, "feel", broken)
    payload = captured("PostToolUseFailure", "Bash")
    replies = [send(payload) for _ in range(3)]
    assert (
        replies[2] is not None
        and "the same error 3 times" in replies[2]["hookSpecificOutput"]["additionalContext"]
    )
    assert (
        "sense vestibular failed: ZeroDivisionError"
        in (isolated_home / "state" / "metacog.log").read_text()
    )


def test_gc_keeps_the_lock_of_a_live_session(isolated_home: Path) -> None:
    send(captured("PostToolUse", "Bash", session_id="live"))
    folder = isolated_home / "state" / "sessions"
    old = time.time() - state.GC_AGE_S - 10
    os.utime(folder / "live.json.lock", (old, old))  # created long ago, the session still runs
    stray = folder / "gone.json.lock"
    stray.write_text("")
    os.utime(stray, (old, old))
    state.collect_garbage(str(isolated_home / "state"), time.time())
    assert (folder / "live.json.lock").exists() and (folder / "live.json").exists()
    assert not stray.exists()


def test_a_nul_in_a_path_does_not_cost_the_session(isolated_home: Path) -> None:
    fail = captured("PostToolUseFailure", "Bash", session_id="nul")
    send(fail)
    send(fail)
    for field in ("cwd", "transcript_path"):
        assert (
            send({**captured("PostToolUse", "Read", session_id="nul"), field: "/tmp/a\x00b"})
            is None
        )
    folder = isolated_home / "state" / "sessions"
    assert not list(folder.glob("*.corrupt-*"))
    assert "the same error 3 times" in send(fail)["hookSpecificOutput"]["additionalContext"]


def test_an_old_unevaluated_session_is_learned_from_before_it_is_collected(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    start = time.time()
    fail = captured("PostToolUseFailure", "Bash", cwd=str(project), session_id="old-loop")
    for i in range(5):
        send(fail, now=start + i)
    later = start + state.GC_AGE_S + 2 * 86400  # no SessionEnd ever came; nine days pass
    send(captured("SessionStart", cwd=str(project), session_id="next"), now=later)
    store = project / ".claude" / "metacog-learnings.jsonl"
    rules = [json.loads(line)["rule"] for line in store.read_text().splitlines()]
    assert "error-loop" in rules


def test_a_save_queued_for_after_the_reply_is_written_under_the_lock_it_kept(
    tmp_path: Path, monkeypatch
) -> None:
    """The resident process queues the session's save (state.AFTER) and writes it once the
    reply is out: until then the lock stays held, so no other hook reads the older state."""
    from metacog.fsutil import locked

    saves: list = []
    monkeypatch.setattr(state, "AFTER", saves)
    with state.Session(str(tmp_path), "s1", 1.0) as st:
        st["calls"] = 5
    path = state.path_for(str(tmp_path), "s1")
    assert len(saves) == 1 and not os.path.exists(path)
    with pytest.raises(TimeoutError):
        locked(path, timeout=0.05).__enter__()
    saves[0]()
    with locked(path, timeout=0.05):
        assert json.loads(Path(path).read_text())["calls"] == 5


def test_a_reader_without_the_lock_waits_for_a_queued_save(tmp_path: Path, monkeypatch) -> None:
    """SessionEnd reads the state without the lock: `settled` first waits for the save the
    resident process queued after its last reply."""
    saves: list = []
    monkeypatch.setattr(state, "AFTER", saves)
    with state.Session(str(tmp_path), "s2", 1.0) as st:
        st["calls"] = 7
    monkeypatch.setattr(state, "AFTER", None)
    seen: list = []

    def reader() -> None:
        state.settled(str(tmp_path), "s2")
        seen.append((state.read(str(tmp_path), "s2") or {}).get("calls"))

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.3)
    assert seen == []  # still waiting on the lock
    saves[0]()
    thread.join(5)
    assert seen == [7]
