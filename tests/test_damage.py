"""Damaged files never silence metacog: whatever is in them, the file is set aside or skipped.

The hook runs here as it runs under Claude Code, in a process of its own (a test
process has `json` imported already, which hid a parser's failure once: issue 12).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hooktest import captured

from metacog.learning.detectors import RULES

ROOT = Path(__file__).resolve().parents[1]
HOOK_BOUND_S = 5  # Claude Code waits 10 s for a hook; metacog answers well within half of it


def hook(payload: dict, mode: str = "direct") -> dict | None:
    """One hook call in a fresh interpreter, as hooks/run.sh makes it; its reply."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from metacog.hook import main; main(mode=sys.argv[2])"
    env = {**os.environ, "METACOG_RESIDENT": "0"}
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(ROOT), mode],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=HOOK_BOUND_S,
        check=True,
    )
    return json.loads(done.stdout) if done.stdout else None


def said(reply: dict | None) -> str:
    return (reply or {}).get("hookSpecificOutput", {}).get("additionalContext", "")


def test_state_cut_in_half_with_garbage_is_quarantined_and_the_loop_still_heard(
    isolated_home: Path,
) -> None:
    fail = captured("PostToolUseFailure", "Bash")
    hook(captured("PostToolUse", "Bash"))
    path = next((isolated_home / "state" / "sessions").glob("*.json"))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] + b"\x00garbage{{{")
    replies = [hook(fail) for _ in range(5)]
    assert list(path.parent.glob(path.name + ".corrupt-*")), "the damaged file was not set aside"
    assert replies[:2] == [None, None]
    assert said(replies[2]).startswith("metacog: the same error 3 times")


# ------------------------------------------------------------------ the damage matrix
# Every file metacog writes (and the two config files it reads), each damaged in every way
# below after a first session learned an error loop and a second one began. Then, each
# call in a fresh interpreter bounded by an alarm of HOOK_BOUND_S: the hook answers every
# call, the second session still hears its loop at the 3rd failure, gets the digest of
# what the first one taught, its own evidence is recorded, no store lost a record, and
# nothing outside was written.
# `json` is imported only after the calls, as in a hook's own process (issue 12: a test
# process that had it imported hid a parser failure).
SEQUENCE = """
import signal, sys, traceback
sys.path.insert(0, sys.argv[1])
from metacog import hook, paths
out = []
for raw in open(sys.argv[2], "rb").read().splitlines():
    signal.alarm(int(sys.argv[3]))  # a call past the bound kills the process: the test fails
    try:
        out.append(hook.handle(raw, paths.state_dir()))
    except BaseException as exc:  # hook.main would log it and exit 0: silence
        out.append("raised " + "".join(traceback.format_exception_only(type(exc), exc)).strip())
    signal.alarm(0)
import json
print(json.dumps(out))
"""

DAMAGES = (
    "cut",
    "cut+garbage",
    "empty",
    "nul",
    "utf8",
    "huge",
    "nested",
    "wrong-type",
    "folder",
    "fifo",
    "devzero",
    "outside",
)
TARGETS = {
    # name: (where, path relative to it: {sid} is the running session, {old} the first)
    "state": ("state", "sessions/{sid}.json"),
    "state-lock": ("state", "sessions/{sid}.json.lock"),
    "old-state": ("state", "sessions/{old}.json"),
    "gc-stamp": ("state", "sessions/.gc"),
    "log": ("state", "metacog.log"),
    "digest-cache": ("state", "learning/digest-*.json"),
    "retrospective": ("state", "learning/retro-*.json"),
    "done-mark": ("state", "learning/marks/{old}.done"),
    "ended-mark": ("state", "learning/marks/{old}.ended"),
    "done-lock": ("state", "learning/marks/{old}.done.lock"),
    "index": ("data", "learning-index.json"),
    "index-lock": ("data", "learning-index.json.lock"),
    "store-lock": ("data", "locks/store-*.lock"),
    "global-store": ("data", "learnings.jsonl"),
    "project-store": ("project", ".claude/metacog-learnings.jsonl"),
    "project-config": ("project", ".claude/metacog.toml"),
    "global-config": ("config", "config.toml"),
}
OLD, SID = "d0000000-0000-4000-8000-000000000000", "d1111111-1111-4111-8111-111111111111"


def _event(name: str, sid: str, cwd: Path, tool: str | None = None) -> dict:
    base = (
        captured(name, tool)
        if name != "SessionEnd"
        else {"hook_event_name": "SessionEnd", "reason": "other"}
    )
    return {**base, "session_id": sid, "cwd": str(cwd), "transcript_path": ""}


def _damage(path: Path, how: str, outside: Path) -> None:
    old = path.read_bytes() if path.is_file() and not path.is_symlink() else b'{"v":1}'
    toml = path.suffix == ".toml"
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "folder":
        (path / "inside").mkdir(parents=True)
        return
    if how == "fifo":
        os.mkfifo(path)
        return
    if how == "devzero":
        path.symlink_to("/dev/zero")
        return
    if how == "outside":
        path.symlink_to(outside)
        return
    data = {
        "cut": old[: len(old) // 2],
        "cut+garbage": old[: len(old) // 2] + b"\x00garbage{{{",
        "empty": b"",
        "nul": b"\x00" * max(len(old), 64),
        "utf8": b'{"v":1,"id":"\xff\xfe\xc3\x28"}\n' + old[1:],
        "huge": old,
        "nested": (b"a = " if toml else b"") + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "wrong-type": b"chronos = 3\n" if toml else b'[1, "two", null]\n',
    }[how]
    path.write_bytes(data)
    if how == "huge":
        os.truncate(path, 1 << 30)  # sparse: a gigabyte that costs nothing to make


def _lines(path: Path) -> set[bytes]:
    # The first 16 MB: a healthy store is far smaller, and a damaged 1 GB one took the test
    # 7 s to read whole for nothing (the hook itself reads at most store.READ_CAP).
    try:
        if not path.is_file():
            return set()
        with open(path, "rb") as fh:
            return {ln for ln in fh.read(16 << 20).splitlines() if ln.strip()}
    except OSError:
        return set()


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("target", list(TARGETS))
def test_damage_matrix(target: str, how: str, isolated_home: Path, tmp_path: Path) -> None:
    from hooktest import send

    from metacog.learning import store

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "metacog.toml").write_text("[chronos]\nminutes = 30\n")
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text("[o2]\nfill_warn = 0.8\n")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not metacog's\n")
    fail = _event("PostToolUseFailure", OLD, project, "Bash")
    # The first session: an error loop, learned at its end.
    send(_event("SessionStart", OLD, project))
    send(_event("UserPromptSubmit", OLD, project))
    for _ in range(3):
        send(fail)
    send(_event("SessionEnd", OLD, project))
    # The second session begins (its digest compiled at its start), makes one call.
    send(_event("SessionStart", SID, project))
    send(_event("PostToolUse", SID, project, "Bash"))
    project_store = Path(store.project_path(str(project)))
    stores = {p: _lines(p) for p in (project_store, Path(store.global_path()))}
    assert stores[project_store], "the first session taught nothing"

    where, pattern = TARGETS[target]
    base = {
        "state": isolated_home / "state",
        "data": isolated_home / "data",
        "project": project,
        "config": isolated_home / "config",
    }[where]
    pattern = pattern.format(sid=SID, old=OLD)
    found = sorted(base.glob(pattern)) if "*" in pattern else [base / pattern]
    assert found, f"nothing at {base / pattern}"
    damaged = found[0]
    _damage(damaged, how, outside)
    stores.pop(damaged, None)

    calls = [_event("UserPromptSubmit", SID, project)]
    calls += [{**fail, "session_id": SID}] * 5
    calls += [_event("SessionEnd", SID, project), _event("SessionStart", "d2", project)]
    script = tmp_path / "calls.jsonl"
    script.write_text("".join(json.dumps(c) + "\n" for c in calls))
    env = {**os.environ, "METACOG_RESIDENT": "0"}
    done = subprocess.run(
        [sys.executable, "-I", "-c", SEQUENCE, str(ROOT), str(script), str(HOOK_BOUND_S)],
        capture_output=True,
        text=True,
        env=env,
        timeout=HOOK_BOUND_S * len(calls) + 30,
        check=False,
    )
    assert done.returncode == 0, (
        f"a call did not answer within {HOOK_BOUND_S} s: {done.returncode} {done.stderr}"
    )
    replies = json.loads(done.stdout)
    raised = [r for r in replies if r.startswith("raised")]
    assert not raised, raised
    said = [said_of(r) for r in replies]
    # At the 2nd same error in a row Reflex recalls the learned rule, where the session's
    # digest (its marker) survived the damage to say it was shown.
    rule = "a lesson learned in this project applies now: " + RULES["error-loop"]
    assert said[1] == "" and (said[2] == "" or said[2].endswith(rule)), said
    assert said[3].startswith("metacog: the same error 3 times"), said
    if damaged != project_store:  # that one is the lesson itself: damaged, it may be gone
        assert "- error-loop: " in said[0], f"no digest: {said[0]!r}"
    for path, before in stores.items():
        assert before <= _lines(path), f"{path} lost a record"
    session = store.short_hash(SID)
    recorded = any(f'"session":"{session}"'.encode() in ln for ln in _lines(project_store))
    index = Path(store.paths.data_dir(), "learning-index.json")
    counted = (
        index.is_file()
        and not index.is_symlink()
        and b'"error-loop"' in index.read_bytes()[: 1 << 20]
    )
    assert recorded or (damaged.name.endswith(".jsonl") and counted), (
        "the second session's evidence is lost"
    )
    assert outside.read_bytes() == b"not metacog's\n"


def said_of(reply: str) -> str:
    return (
        json.loads(reply).get("hookSpecificOutput", {}).get("additionalContext", "")
        if reply
        else ""
    )


# Issue 18: a project store replaced by something that cannot hold it, or grown past its
# read cap, is treated like a read-only one: the session teaches the promotion index, the
# log says it once, the session is not evaluated again, and `doctor` names the store.
@pytest.mark.parametrize("how", ["folder", "fifo", "devzero", "outside", "huge"])
def test_a_project_store_that_cannot_be_written_still_teaches_the_index(
    how: str, isolated_home: Path, tmp_path: Path
) -> None:
    from learningtest import LOOP, T0, cfg, session, state_dir

    from metacog import learning
    from metacog.cli import doctor
    from metacog.learning import scopes, store

    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".claude").mkdir()
    damaged = root / ".claude" / store.PROJECT_NAME
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not metacog's\n")
    damaged.write_bytes(b'{"v":1}\n')
    _damage(damaged, how, outside)
    session(str(root), "s0", T0, LOOP)

    index = json.loads(Path(scopes.index_path()).read_text())
    assert [t[0] for t in index["rules"]["error-loop"]["projects"].values()] == [1]
    marks = Path(state_dir(), "learning", "marks")
    assert (marks / "s0.done").exists() and not (marks / "s0.writing").exists()
    log = Path(state_dir(), "metacog.log")
    lines = [ln for ln in log.read_text().splitlines() if f"{damaged} not written" in ln]
    assert len(lines) == 1, log.read_text()
    learning.on_session_start(str(root), "s1", state_dir(), cfg(), T0 + 86400)
    assert log.read_text().count("not written") == 1  # evaluated once, not retried
    assert outside.read_bytes() == b"not metacog's\n"
    if how == "huge":
        assert damaged.stat().st_size == 1 << 30  # nothing appended where it is never read

    found = [
        f
        for f in doctor.interpret_health(learning.health(str(root)))
        if f["status"] == doctor.PROBLEM and "still count towards promotion" in f["text"]
    ]
    assert len(found) == 1 and found[0]["text"].startswith("project learned-rule store"), found
    assert str(damaged) in found[0]["fix"]
