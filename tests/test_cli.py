"""The command line: entry points, the error boundary, `status` and `forget`.

Sessions, and the rules learned from them, come from driving the real hook in-process
(hooktest.send): never from state or store files written by hand. Only the damage a
store can suffer (garbage, a folder in its place) is made by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import clitest
import pytest
from clitest import AGO, ROOT, cli, end_session, fail_in, learn_error_loop, one_line_error, store_of
from hooktest import agent_text, captured, send

import metacog
from metacog.learning import store
from metacog.learning.detectors import RULES

project = clitest.project


def succeed_in(cwd: Path, session: str, now: float = 1000.0) -> None:
    send(captured("PostToolUse", "Read", cwd=str(cwd), session_id=session), now=now)


def hold_error_loop(cwd: Path, session: str, now: float) -> None:
    """A session whose digest carried error-loop and that erred twice, never 3 times in a row:
    the rule held (a suppression)."""
    send(captured("UserPromptSubmit", cwd=str(cwd), session_id=session), now=now)
    fail_in(cwd, 1, session, now=now + 1)
    succeed_in(cwd, session, now=now + 2)
    fail_in(cwd, 1, session, now=now + 3)
    end_session(cwd, session, now + 10)


def records(path: Path) -> list[dict]:
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if path.exists()
        else []
    )


def rule_ids(path: Path) -> list[str]:
    return [rec["rule"] for rec in records(path)]


# ------------------------------------------------------------------ entry points
def test_version() -> None:
    result = cli("--version")
    assert (result.exit_code, result.stdout) == (0, f"metacog {metacog.__version__}\n")


def test_no_arguments_print_help() -> None:
    result = cli()
    assert result.exit_code == 0
    for command in ("status", "forget", "config", "replay", "doctor"):
        assert command in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["frobnicate"], id="unknown-command"),
        pytest.param(["status", "--bogus"], id="unknown-option"),
        pytest.param(["forget"], id="missing-argument"),
        pytest.param(["config", "set", "nociception.observe_at"], id="missing-value"),
        pytest.param(["config", "get", "nope.nothing"], id="unknown-key"),
        pytest.param(["config", "set", "chronos.minutes", "soon"], id="wrong-type"),
        pytest.param(["replay", "/nonexistent/transcript.jsonl"], id="missing-file"),
        pytest.param(["status", "--session", "no-such-session"], id="unknown-session"),
        pytest.param(["forget", "x", "--scope", "team"], id="bad-scope"),
    ],
)
def test_wrong_arguments_are_one_line_with_a_hint(args: list[str], project: Path) -> None:
    line = one_line_error(cli(*args))
    assert len(line) < 400


def test_usage_errors_name_the_help_to_read() -> None:
    line = one_line_error(cli("status", "--bogus"), code=2)
    assert "--bogus" in line and "`metacog status --help`" in line


def test_an_unexpected_failure_is_one_line_and_logged(
    project: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    from metacog.cli import status

    def broken(*args: object, **kwargs: object) -> dict:
        raise RuntimeError("the disk said no")

    monkeypatch.setattr(status, "collect", broken)
    line = one_line_error(cli("status"), code=1)
    assert "internal error: RuntimeError: the disk said no" in line and "please report it" in line
    log = (isolated_home / "state" / "metacog.log").read_text()
    assert (
        "cli failed: metacog status: Traceback" in log and "RuntimeError: the disk said no" in log
    )


def run_module(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "metacog", *args],
        cwd=cwd,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def child_env(isolated_home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "METACOG_HOME": str(isolated_home)}


def test_python_dash_m_and_exit_codes(project: Path, child_env: dict[str, str]) -> None:
    ok = run_module("--version", cwd=project, env=child_env)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, f"metacog {metacog.__version__}\n", "")
    bad = run_module("config", "get", "digest.max", cwd=project, env=child_env)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("metacog: unknown setting 'digest.max'; closest: digest.max_rules")
    assert bad.stderr.count("\n") == 1


def test_console_script_target_is_valid() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'metacog = "metacog.cli:run"' in pyproject
    from metacog.cli import run

    assert callable(run)


def test_the_hook_never_imports_the_cli(child_env: dict[str, str]) -> None:
    code = (
        "import json, sys\n"
        "from metacog import hook, paths\n"
        "for line in open(sys.argv[1], 'rb'):\n"
        "    hook.handle(line, paths.state_dir())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    fixture = ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", code, str(fixture)],
        env=child_env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded = set(json.loads(out.stdout.splitlines()[-1]))
    assert "metacog.hook" in loaded and "metacog.handlers" in loaded
    assert not loaded & {"typer", "click", "rich", "pydantic", "metacog.cli"}


# ------------------------------------------------------------------------ status
def test_status_without_any_session(project: Path) -> None:
    result = cli("status")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Project {project}\nNo session recorded yet")
    assert result.stdout.rstrip().endswith("Rules: none learned yet")
    report = json.loads(cli("status", "--json").stdout)
    assert report["session"] is None and report["rules"] == [] and report["unread_stores"] == []
    assert "rules_unavailable" not in report


def test_status_reports_the_session_and_each_sense(project: Path) -> None:
    learn_error_loop(project, 4)
    hold_error_loop(project, "held", AGO + 1000)
    fail_in(project, 3, "sess-a", now=time.time() - 60)
    report = json.loads(cli("status", "--json").stdout)
    session = report["session"]
    assert session["id"] == "sess-a" and session["root"] == str(project)
    assert (session["tool_calls"], session["errors"]) == (3, 3)
    from metacog.senses import SENSES

    assert list(session["senses"]) == [s.NAME for s in SENSES]
    assert session["senses"]["nociception"] == "3 similar errors in a row"
    assert all(isinstance(v, str) for v in session["senses"].values())
    held = records(store_of(project))[-1]
    assert (held["type"], held["rule"]) == ("suppression", "error-loop")
    [rule] = report["rules"]
    assert list(rule)[:7] == [
        "id",
        "lesson",
        "scope",
        "detections",
        "suppressions",
        "confidence",
        "last_active",
    ]
    assert {key: rule[key] for key in list(rule)[:7]} == {
        "id": "error-loop",
        "lesson": RULES["error-loop"],
        "scope": "project",
        "detections": 4,
        "suppressions": 1,
        "confidence": pytest.approx(5 / 7, abs=1e-4),
        "last_active": held["at"],
    }

    text = cli("status").stdout
    assert f"Project {project}\nSession sess-a (this project's latest), updated" in text
    assert "3 tool calls, 3 errors" in text
    assert "nociception" in text and "3 similar errors in a row" in text
    shown = "error-loop  [project]  confidence 0.71  seen 4×, held 1×  last active 3 days ago"
    assert f"Rules (1)\n  {shown}\n" in text
    assert f"      {RULES['error-loop']}" in text


def test_status_shows_this_projects_rules_and_the_global_ones(
    project: Path, tmp_path: Path
) -> None:
    elsewhere, third = tmp_path / "elsewhere", tmp_path / "third"
    for root in (elsewhere, third):
        (root / ".git").mkdir(parents=True)
    learn_error_loop(elsewhere, 2, prefix="there")
    assert json.loads(cli("status", "--json").stdout)["rules"] == []  # another project's own lesson
    learn_error_loop(project, 1, prefix="here")  # a second project: the pattern goes global
    [here] = json.loads(cli("status", "--json").stdout)["rules"]
    assert (here["id"], here["scope"], here["detections"]) == ("error-loop", "project", 1)
    os.chdir(third)
    [there] = json.loads(cli("status", "--json").stdout)["rules"]
    assert (there["id"], there["scope"], there["detections"]) == ("error-loop", "global", 3)
    assert "error-loop  [global]  confidence 0.60  seen 3×, held 0×" in cli("status").stdout


def test_status_prefers_this_projects_latest_session(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    fail_in(project, 1, "ours-old", now=1000)
    fail_in(project, 2, "ours-new", now=2000)
    fail_in(other, 1, "theirs-newest", now=3000)
    assert json.loads(cli("status", "--json").stdout)["session"]["id"] == "ours-new"


def test_status_names_the_latest_session_elsewhere_but_shows_this_project(
    project: Path, tmp_path: Path
) -> None:
    """Run from a folder without sessions (/tmp), status once showed another project's session
    beside this folder's "no rules learned yet": one project throughout, the other one named."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    fail_in(other, 1, "older", now=1000)
    fail_in(other, 1, "newer", now=2000)
    report = json.loads(cli("status", "--json").stdout)
    assert (report["project"], report["session"], report["chosen"]) == (
        str(project),
        None,
        "elsewhere",
    )
    assert report["latest_elsewhere"]["id"] == "newer" and report["latest_elsewhere"][
        "root"
    ] == str(other)
    lines = cli("status").stdout.splitlines()
    assert lines[0] == f"Project {project}"
    assert lines[1].startswith(
        f"No session of this project recorded yet; the latest, newer, ran in {other} ("
    )
    assert lines[1].endswith("`metacog status --session newer` shows it)")


def test_status_skips_the_empty_session_a_slash_command_opens(project: Path, monkeypatch) -> None:
    """`/metacog status` as a session's first prompt makes that session the newest, with no
    call: the person means the one before. Inside Claude Code, hints name the slash command."""
    fail_in(project, 2, "worked", now=time.time() - 120)
    send(
        captured(
            "UserPromptSubmit", session_id="just-opened", cwd=str(project), prompt="/metacog status"
        )
    )
    assert json.loads(cli("status", "--json").stdout)["session"]["id"] == "worked"
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", "/plugin")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", "/plugin-data")
    line = one_line_error(cli("status", "--session", "nope"), code=2)
    assert "(`/metacog status` alone shows this project's latest)" in line
    line = one_line_error(cli("status", "--bogus"), code=2)
    assert "(see `/metacog status --help`)" in line
    line = one_line_error(cli("forget", "zzz"), code=2)
    assert line == "metacog: unknown rule 'zzz' (`/metacog status` lists the rules learned)"


def test_status_of_a_named_session_or_a_unique_prefix(project: Path) -> None:
    fail_in(project, 1, "alpha-1", now=1000)
    fail_in(project, 2, "beta-22", now=2000)
    assert (
        json.loads(cli("status", "--session", "alpha-1", "--json").stdout)["session"]["id"]
        == "alpha-1"
    )
    assert json.loads(cli("status", "-s", "alph", "--json").stdout)["session"]["id"] == "alpha-1"
    line = one_line_error(cli("status", "--session", "alpha-2"))
    assert "closest: alpha-1" in line


def test_status_counts_prompts_and_subagents(project: Path) -> None:
    send(captured("UserPromptSubmit", cwd=str(project), session_id="s"), now=1000)
    succeed_in(project, "s", now=1001)
    send(
        captured(
            "PostToolUse",
            "Read",
            cwd=str(project),
            session_id="s",
            agent_id="a1",
            agent_type="Explore",
        ),
        now=1002,
    )
    session = json.loads(cli("status", "--json").stdout)["session"]
    assert (session["prompts"], session["subagents"], session["tool_calls"]) == (1, 1, 2)


def test_a_disabled_sense_reads_off(project: Path) -> None:
    assert cli("config", "set", "nociception.enabled", "false").exit_code == 0
    fail_in(project, 3, "s")
    session = json.loads(cli("status", "--json").stdout)["session"]
    assert session["senses"]["nociception"] is None
    out = cli("status").stdout
    assert "nociception  off" in out
    # Each sense says what it feels: the original names alone (O2, Chronos) say nothing.
    assert "o2  " in out and "(context filling fast" in out
    assert "(a long stretch of work since the person last spoke, spent against obstacles)" in out


def test_one_broken_sense_does_not_hide_the_others(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metacog.senses import vestibular

    def broken(win: dict, ctx: object) -> str:
        raise KeyError("fill")

    monkeypatch.setattr(vestibular, "reading", broken)
    fail_in(project, 3, "s")
    senses = json.loads(cli("status", "--json").stdout)["session"]["senses"]
    assert senses["vestibular"].startswith("(no reading: KeyError")
    assert senses["nociception"] == "3 similar errors in a row"


def test_status_reads_but_never_writes_the_session(project: Path, isolated_home: Path) -> None:
    fail_in(project, 3, "s")
    path = isolated_home / "state" / "sessions" / "s.json"
    before = path.read_bytes()
    cli("status")
    assert path.read_bytes() == before


def test_a_folder_in_place_of_the_store_is_one_line(project: Path) -> None:
    learn_error_loop(project, 2)
    path = store_of(project)
    path.unlink()
    path.mkdir()
    fail_in(project, 3, "s", now=time.time() - 60)
    result = cli("status")
    assert (result.exit_code, result.stderr) == (0, "")
    assert "3 similar errors in a row" in result.stdout
    assert result.stdout.endswith(
        f"Rules: none learned yet\n  not all evidence was read: project store {path} "
        "not read: not a regular file (`metacog doctor` says what to do)\n"
    )
    report = json.loads(cli("status", "--json").stdout)
    assert report["unread_stores"] == [f"project store {path} not read: not a regular file"]
    assert report["rules"] == [] and "rules_unavailable" not in report


def test_garbage_in_a_store_is_skipped_and_counted(project: Path) -> None:
    learn_error_loop(project, 2)
    path = store_of(project)
    with path.open("ab") as fh:
        fh.write(b"\x00\xffnot json at all\n")
        fh.write(b'{"v":1,"type":"detection","rule":"error-loop","at":"yesterday"}\n')
    result = cli("status")
    assert result.exit_code == 0
    assert (
        f"  not all evidence was read: project store {path}: 2 unreadable line(s) skipped"
        in result.stdout
    )
    [rule] = json.loads(cli("status", "--json").stdout)["rules"]
    assert (rule["id"], rule["detections"]) == ("error-loop", 2)


def test_rules_that_fail_to_load_do_not_hide_the_session(
    project: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    learn_error_loop(project, 1)
    fail_in(project, 3, "s", now=time.time() - 60)

    def broken(path: str, now: float, keep_lines: bool = False) -> object:
        raise OSError("store unreadable")

    # The store reader turns whatever a file holds into skipped lines, and an I/O error
    # (EIO) cannot be made in a temp dir: the fault is injected where it would arise.
    monkeypatch.setattr(store, "read", broken)
    result = cli("status")
    assert result.exit_code == 0
    assert "3 similar errors in a row" in result.stdout
    assert "Rules: not available: reading them failed: OSError: store unreadable" in result.stdout
    assert "learning.rules" in (isolated_home / "state" / "metacog.log").read_text()
    report = json.loads(cli("status", "--json").stdout)
    assert report["rules"] == [] and report["rules_unavailable"].startswith(
        "reading them failed: OSError"
    )


# ------------------------------------------------------------------------ forget
def prompt(cwd: Path, session: str) -> str:
    """The digest the first prompt of a new session gets."""
    return agent_text(
        send(captured("UserPromptSubmit", cwd=str(cwd), session_id=session), now=time.time())
    )


def test_forget_erases_a_rule(project: Path) -> None:
    learn_error_loop(project, 5)
    assert rule_ids(store_of(project)) == ["error-loop"] * 5
    assert "- error-loop: " in prompt(project, "before")
    result = cli("forget", "error-loop")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Forgot error-loop: 5 records of evidence erased")
    assert "learned again only if it recurs" in result.stdout
    assert records(store_of(project)) == []
    assert json.loads(cli("status", "--json").stdout)["rules"] == []
    assert "error-loop" not in prompt(project, "after")
    learn_error_loop(project, 1, prefix="again")
    [rule] = json.loads(cli("status", "--json").stdout)["rules"]
    assert (rule["id"], rule["detections"]) == ("error-loop", 1)


def test_forget_in_one_scope(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    learn_error_loop(project, 2, prefix="here")
    learn_error_loop(other, 2, prefix="there")  # a second project: error-loop goes global
    global_store = Path(store.global_path())
    assert rule_ids(global_store) == ["error-loop"] * 2
    done = cli("forget", "error-loop", "--scope", "project")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(
        "Forgot error-loop: 2 records of evidence erased from the project store."
    )
    assert records(store_of(project)) == []
    assert len(records(global_store)) == 2 and len(records(store_of(other))) == 2
    [rule] = json.loads(cli("status", "--json").stdout)["rules"]
    assert (rule["id"], rule["scope"], rule["detections"]) == ("error-loop", "global", 4)
    done = cli("forget", "error-loop", "--scope", "global")
    assert done.stdout.startswith(
        "Forgot error-loop: 2 records of evidence erased from the global store."
    )
    assert records(global_store) == [] and json.loads(cli("status", "--json").stdout)["rules"] == []
    assert len(records(store_of(other))) == 2  # another project's store is its own


def test_forget_with_no_evidence_in_that_scope(project: Path) -> None:
    learn_error_loop(project, 1)
    line = one_line_error(cli("forget", "error-loop", "--scope", "global"))
    assert "no evidence in the global store" in line
    assert rule_ids(store_of(project)) == ["error-loop"]
    line = one_line_error(cli("forget", "task-drift"))
    assert line.startswith(
        "metacog: rule 'task-drift' has no evidence in any store; nothing was changed"
    )


def test_forget_an_unknown_rule_names_the_closest(project: Path) -> None:
    learn_error_loop(project, 1)
    line = one_line_error(cli("forget", "error-lop"), code=2)
    assert line == (
        "metacog: unknown rule 'error-lop'; closest: error-loop "
        "(`metacog status` lists the rules learned)"
    )
    line = one_line_error(cli("forget", "zzz"))
    assert line == "metacog: unknown rule 'zzz' (`metacog status` lists the rules learned)"
    assert rule_ids(store_of(project)) == ["error-loop"]


def test_cleanup_lists_then_removes_metacog_folders_and_keeps_project_files(tmp_path: Path) -> None:
    from metacog import paths

    for path in paths.dirs().values():
        Path(path).mkdir(parents=True)
        (Path(path) / "x").write_text("1")
    listed = cli("cleanup")
    assert listed.exit_code == 0 and "Would remove" in listed.stdout
    assert all(Path(p).exists() for p in paths.dirs().values())
    done = cli("cleanup", "--yes")
    assert (
        done.exit_code == 0
        and "Removed" in done.stdout
        and ".claude/metacog-learnings.jsonl" in done.stdout
    )
    assert not any(Path(p).exists() for p in paths.dirs().values())
    assert "Nothing of metacog's own is left" in cli("cleanup").stdout
