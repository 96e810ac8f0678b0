"""`metacog doctor`: each check on both sides, and the exit code."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import clitest
import pytest
from clitest import DAY, ROOT, VERSION, cli, learn_error_loop, one_line_error, store_of
from hooktest import captured, send

import metacog
from metacog import config
from metacog.cli import doctor
from metacog.learning import store

project = clitest.project


def findings() -> list[dict]:
    result = cli("doctor", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == (1 if report["problems"] else 0)
    return report["findings"]


def problems() -> list[str]:
    return [f["text"] for f in findings() if f["status"] == "problem"]


@pytest.fixture
def healthy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: Path) -> Path:
    """A plugin data folder with a ready runtime, this checkout as the plugin, a project."""
    data = tmp_path / "plugin-data"
    (data / "runtime" / VERSION).mkdir(parents=True)
    (data / "runtime" / VERSION / ".ready").write_text(f"{VERSION}\n")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(ROOT))
    return data


def test_a_healthy_install_has_no_problems(healthy: Path) -> None:
    result = cli("doctor")
    assert result.exit_code == 0, result.stdout
    assert result.stdout.startswith(f"metacog {metacog.__version__} doctor\n")
    assert result.stdout.rstrip().endswith("No problems found.")
    for expected in (
        f"runtime {VERSION} ready in",
        "hooks registered for PostToolUse",
        "state directory writable",
        "Python 3.",
        "no errors logged",
        "no corrupt files",
        "config valid",
    ):
        assert expected in result.stdout, expected


def test_only_the_command_line_installed_is_not_a_problem(
    healthy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `pip install .` for replay and report: doctor says what is and is not installed.
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    result = cli("doctor")
    assert result.exit_code == 0, result.stdout
    assert (
        "the command line is installed" in result.stdout
        and "the Claude Code plugin is not" in result.stdout
    )
    assert "`claude plugin install metacog@metacog`" in result.stdout
    assert result.stdout.rstrip().endswith("No problems found.")


def test_runtime_found_under_home_when_not_told(
    healthy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    inline = Path.home() / ".claude" / "plugins" / "data" / "metacog-inline"
    shutil.copytree(healthy, inline)
    assert not problems()


def test_runtime_found_from_its_own_interpreter(
    healthy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    monkeypatch.setattr(sys, "prefix", str(healthy / "runtime" / VERSION))
    assert doctor.plugin_data_dirs() == [healthy]


def test_runtime_not_prepared_quotes_the_bootstrap_log(healthy: Path) -> None:
    shutil.rmtree(healthy / "runtime" / VERSION)
    (healthy / "bootstrap.log").write_text(
        "2026-01-01T00:00:00 runtime 0.1.0 not prepared with /usr/bin/python3: "
        "pip … exited 1: no network\n"
    )
    [text] = problems()
    assert f"runtime {VERSION} not prepared" in text and "no network" in text
    assert "start a new Claude Code session" in cli("doctor").stdout


def test_a_failed_first_run_is_described_as_it_is(healthy: Path) -> None:
    shutil.rmtree(healthy / "runtime" / VERSION)
    (healthy / "runtime" / VERSION / "bin").mkdir(parents=True)  # the venv began, pip failed
    (healthy / "runtime" / ".failed").write_text(
        json.dumps(
            {
                "at": 1_700_000_000,
                "version": VERSION,
                "python": "/usr/bin/python3",
                "network": True,
                "cause": "ERROR: Could not find a version that satisfies the requirement hatchling",
                "retry": "when the package index answers",
            }
        )
    )
    [text] = problems()
    assert f"runtime {VERSION} half-built" in text and "failed at 2023-11-1" in text
    assert "satisfies the requirement hatchling" in text
    assert "it retries when the package index answers" in cli("doctor").stdout


def test_a_fifo_in_place_of_the_resident_log_does_not_hang_doctor(healthy: Path) -> None:
    import signal

    folder = healthy / "runtime" / VERSION / "resident"
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "resident.log")
    signal.alarm(10)  # were the open to block, the test fails instead of hanging
    try:
        assert doctor.tail_lines(folder / "resident.log") == []
        cli("doctor")
    finally:
        signal.alarm(0)


def test_hooks_json_missing_an_event(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    del hooks["hooks"]["PostToolUseFailure"]
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    (plugin / "hooks" / "run.sh").write_text("")
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(plugin))
    assert any("hooks not registered for PostToolUseFailure" in p for p in problems())


def test_hooks_json_unreadable(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    (plugin / "hooks" / "hooks.json").write_text("{not json")
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(plugin))
    assert any("hooks.json unreadable" in p for p in problems())


def test_a_directory_that_cannot_be_created(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("METACOG_HOME", str(blocker / "home"))
    texts = problems()
    assert any("state directory" in p and "not writable" in p for p in texts), texts
    assert "set METACOG_HOME to a writable folder" in cli("doctor").stdout


def test_recent_errors_in_the_log(healthy: Path, isolated_home: Path) -> None:
    log = isolated_home / "state" / "metacog.log"
    log.parent.mkdir(parents=True)
    old = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 3 * 86400))
    log.write_text(f"{old} hook failed: OldError: long ago\n")
    assert not problems()
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    with log.open("a") as fh:
        fh.write(f"{now} hook failed: ValueError: boom\n")
    [text] = problems()
    assert "1 error(s) logged in the last 24 hours" in text and "ValueError: boom" in text
    assert "OldError" not in text


def test_hook_interpreter_errors(healthy: Path) -> None:
    (healthy / "hook-stderr.log").write_text("ModuleNotFoundError: No module named 'metacog'\n")
    [text] = problems()
    assert "No module named 'metacog'" in text


def test_corrupt_session_files_moved_aside(healthy: Path, isolated_home: Path) -> None:
    project = Path.cwd()
    send(captured("PostToolUseFailure", "Bash", cwd=str(project), session_id="s1"))
    path = isolated_home / "state" / "sessions" / "s1.json"
    path.write_text("{broken")
    send(
        captured("PostToolUseFailure", "Bash", cwd=str(project), session_id="s1")
    )  # the hook quarantines it
    assert list(path.parent.glob("s1.json.corrupt-*"))
    [text] = problems()
    assert "1 corrupt file(s) were moved aside" in text
    assert f"rm {path.parent}/*.corrupt-*" in cli("doctor").stdout


def test_broken_and_ignored_config(healthy: Path, isolated_home: Path) -> None:
    config_file = isolated_home / "config" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text("[chronos]\nminuts = 3\n")
    [text] = problems()
    assert "chronos.minuts: unknown setting (closest: chronos.minutes" in text
    config_file.write_text("[chronos\n")
    [text] = problems()
    assert "not valid TOML" in text and "the hook skips it" in text


def test_store_health_of_a_fresh_install(healthy: Path) -> None:
    assert not problems()
    texts = [f["text"] for f in findings() if f["status"] == "ok"]
    assert f"project learned-rule store: empty (no {store_of(Path.cwd())} yet)" in texts
    assert f"global learned-rule store: empty (no {store.global_path()} yet)" in texts
    learn_error_loop(Path.cwd(), 1, "s")
    assert not problems()
    size = store_of(Path.cwd()).stat().st_size
    assert (
        f"project learned-rule store: 1 records, {size} bytes ({store_of(Path.cwd())})"
        in cli("doctor").stdout
    )


def test_store_health_from_learning(healthy: Path, tmp_path: Path) -> None:
    project, other = Path.cwd(), tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    learn_error_loop(project, 1, "here")
    learn_error_loop(other, 2, "there")  # a second project: error-loop goes global
    path = store_of(project)
    with path.open("a") as fh:
        fh.write('not json\n{"v":1,"type":"detection","rule":"error-loop","at":-1}\n')
        fh.write(
            json.dumps({"v": 2, "type": "detection", "rule": "error-loop", "at": time.time()})
            + "\n"
        )
    found = findings()
    [problem] = [f for f in found if f["status"] == "problem"]
    assert problem["text"] == f"project learned-rule store {path}: 2 unreadable line(s) skipped"
    assert f"rm {path}" in problem["fix"]
    assert any(
        f["status"] == "ok" and "global learned-rule store: 2 records" in f["text"] for f in found
    )
    assert any(
        f["status"] == "note" and f"{path}: 1 record(s) from a newer metacog" in f["text"]
        for f in found
    )
    assert (
        f"fix: nothing is lost beyond those lines; to start it afresh, delete it (rm {path})"
        in cli("doctor").stdout
    )


def test_a_compacted_store_keeps_a_copy_of_what_it_dropped(
    healthy: Path, isolated_home: Path
) -> None:
    project = Path.cwd()
    path = store_of(project)
    path.parent.mkdir()
    line = json.dumps(
        {"v": 1, "type": "detection", "rule": "error-loop", "at": time.time() - 40 * DAY}
    )
    # A store grown past its compaction size (512 KiB), with one line nobody can read.
    path.write_text("not json\n" + (line + "\n") * (600 * 1024 // len(line)))
    learn_error_loop(project, 1, "s")  # its evidence is appended, then the store compacted
    [copy] = (isolated_home / "data" / "quarantine").iterdir()
    assert copy.read_bytes().startswith(b"not json\n")
    assert "not json" not in path.read_text()
    [text] = problems()
    assert text == f"1 broken learned-rule store(s) were set aside: {copy}"
    assert f"rm -r {copy.parent}" in cli("doctor").stdout


@pytest.mark.parametrize(
    ("make", "why", "fix"),
    [
        pytest.param(lambda p: p.mkdir(), "not a regular file", "rm -r {path}", id="a-folder"),
        pytest.param(
            lambda p: p.symlink_to(p.parent / "elsewhere.jsonl"),
            "the store is a symlink",
            "rm -r {path}",
            id="a-symlink",
        ),
        pytest.param(
            lambda p: (shutil.rmtree(p.parent), p.parent.write_text("")),
            ".claude is not a directory",
            "make {folder} a folder inside the project",
            id="claude-a-file",
        ),
    ],
)
def test_a_store_that_cannot_be_read(healthy: Path, make: object, why: str, fix: str) -> None:
    path = store_of(Path.cwd())
    learn_error_loop(Path.cwd(), 1, "s")
    path.unlink()
    make(path)
    [found] = [f for f in findings() if f["status"] == "problem"]
    assert found["text"] == (
        f"project learned-rule store {path} not read nor written: {why} "
        "(this project's sessions still count towards promotion, in the index)"
    )
    assert fix.format(path=path, folder=path.parent) in found["fix"]
    assert json.loads(cli("status", "--json").stdout)["unread_stores"] == [
        f"project store {path} not read: {why}"
    ]


def test_store_health_that_raises(healthy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: str, now: float, keep_lines: bool = False) -> object:
        raise OSError("disk gone")

    # Whatever a file holds, the store reader turns into counts; an I/O error (EIO) cannot
    # be made in a temp dir: the fault is injected where it would arise.
    monkeypatch.setattr(store, "read", broken)
    [text] = problems()
    assert "could not be checked: OSError: disk gone" in text


def test_every_problem_says_what_to_do(healthy: Path, isolated_home: Path) -> None:
    shutil.rmtree(healthy / "runtime")
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text("[x\n")
    (healthy / "hook-stderr.log").write_text("boom\n")
    found = [f for f in findings() if f["status"] == "problem"]
    assert len(found) == 3
    assert all(f["fix"] for f in found)
    assert cli("doctor").stdout.count("fix: ") == 3


def config_fixes() -> dict[str, str]:
    return {
        f["text"]: f["fix"]
        for f in findings()
        if f["status"] == "problem" and f["text"].startswith("config ")
    }


def test_an_unknown_setting_is_never_advised_to_be_set(healthy: Path, isolated_home: Path) -> None:
    config_file = isolated_home / "config" / "config.toml"
    config_file.parent.mkdir(parents=True)
    config_file.write_text("[chronos]\nbogus = 3\n[o3]\nx = 1\n")
    fixes = config_fixes()
    assert len(fixes) == 2 and not any("config set" in fix for fix in fixes.values())
    assert "unknown setting" in one_line_error(
        cli("config", "set", "chronos.bogus", "3")
    )  # the old advice
    [near] = [fix for text, fix in fixes.items() if "chronos.bogus" in text]
    assert "delete that line" in near and "rename it to chronos.minutes" in near
    [far] = [fix for text, fix in fixes.items() if "o3.x" in text]
    assert "delete that line" in far and "rename" not in far and "`metacog config show`" in far


@pytest.mark.parametrize("scope", ["global", "project"])
def test_a_wrong_value_is_advised_a_set_that_fixes_it(
    healthy: Path, isolated_home: Path, scope: str
) -> None:
    config_file = (
        isolated_home / "config" / "config.toml"
        if scope == "global"
        else Path.cwd() / ".claude" / "metacog.toml"
    )
    config_file.parent.mkdir(parents=True)
    config_file.write_text('[chronos]\nminutes = "ten"\n')
    [fix] = config_fixes().values()
    flag = " --project" if scope == "project" else ""
    assert f"`metacog config set chronos.minutes VALUE{flag}`" in fix
    # Running it (with a value) writes that same file, and the problem is gone.
    assert cli("config", "set", "chronos.minutes", "10", *flag.split()).exit_code == 0
    assert config.parse_toml(str(config_file)) == {"chronos": {"minutes": 10}}
    assert not config_fixes()


def test_resident_process_running_stopped_or_switched_off(
    healthy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = healthy / "runtime" / VERSION / "resident"
    folder.mkdir(mode=0o700)
    assert "resident process not running: the next session starts it" in cli("doctor").stdout
    import os
    import socket

    (folder / "pid").write_text(
        f"{os.getpid()}\n"
    )  # a live process; the socket makes it the resident one
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(folder / "hook.sock"))
        assert f"resident process running (pid {os.getpid()})" in cli("doctor").stdout
    monkeypatch.setenv("METACOG_RESIDENT", "0")
    result = cli("doctor")
    assert (
        "resident process switched off (METACOG_RESIDENT=0)" in result.stdout
        and result.exit_code == 0
    )


def test_resident_watchdog_report_is_a_problem(healthy: Path) -> None:
    folder = healthy / "runtime" / VERSION / "resident"
    folder.mkdir(mode=0o700)
    (folder / "resident.log").write_text(
        "Timeout (0:00:08)!\nThread 0x1 (most recent call first):\n"
    )
    assert any(
        "the resident process wrote to" in p and "Timeout (0:00:08)!" in p for p in problems()
    )


def test_no_perl_means_no_resident_and_says_so(
    healthy: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    result = cli("doctor")
    assert "no perl on PATH" in result.stdout and result.exit_code == 0


# ------------------------------------------------------------- proof of delivery
LIVE = ROOT / "tests" / "fixtures" / "transcript-live-2.1.328.jsonl"
LOST_TEXT = "none of its lines reached the model"


def _session(projects: Path, sid: str, delivered: bool, mtime: float) -> Path:
    """The captured live transcript (metacog spoke in it) as session `sid`, each call sent
    through the real hook so that metacog's state records what it sent; without Claude
    Code's hook_additional_context lines when they are not to have arrived."""
    from metacog import hook, paths, replay, state

    lines = LIVE.read_text().splitlines()
    if not delivered:
        lines = [line for line in lines if "hook_additional_context" not in line]
    path = projects / "-work-proj" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    for _, payload in replay.events(lines):
        payload.update(session_id=sid, transcript_path=str(path))
        now = payload.pop("_ts")
        hook.handle(json.dumps(payload).encode(), paths.state_dir(), now)
    os.utime(state.path_for(paths.state_dir(), sid), (mtime, mtime))
    return path


def _delivery_findings() -> list[dict]:
    return [f for f in findings() if LOST_TEXT in f["text"]]


def test_doctor_says_when_lines_metacog_sent_never_reached_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    projects = tmp_path / "claude" / "projects"
    now = time.time()
    _session(projects, "aaaa-1111", delivered=True, mtime=now - 60)
    assert _delivery_findings() == []  # they arrived: silent

    _session(projects, "bbbb-2222", delivered=False, mtime=now)
    (lost,) = _delivery_findings()
    assert lost["status"] == "problem"
    assert lost["text"].startswith(
        f"in 1 of the 2 latest session(s) where metacog spoke, {LOST_TEXT}"
    )
    assert "`metacog report` names the sessions" in lost["fix"]
    shown = cli("doctor").stdout
    assert f"PROBLEM  in 1 of the 2 latest session(s) where metacog spoke, {LOST_TEXT}" in shown


def test_doctors_delivery_check_reads_the_newest_sessions_only_and_a_bounded_stretch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metacog.report import delivery

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    projects = tmp_path / "claude" / "projects"
    now = time.time()
    lost = _session(projects, "bbbb-2222", delivered=False, mtime=now - 60)
    _session(projects, "aaaa-1111", delivered=True, mtime=now)
    assert len(_delivery_findings()) == 1
    # Only the newest state file looked at: the older session's loss is not read.
    monkeypatch.setattr(delivery, "CHECK_STATES", 1)
    assert _delivery_findings() == []
    monkeypatch.setattr(delivery, "CHECK_STATES", 100)
    # A transcript longer than what doctor reads is left undecided, never called lost.
    monkeypatch.setattr(delivery, "CHECK_BYTES", lost.stat().st_size // 2)
    assert _delivery_findings() == []
    monkeypatch.setattr(delivery, "CHECK_BYTES", lost.stat().st_size)
    assert len(_delivery_findings()) == 1
