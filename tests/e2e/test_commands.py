"""End-to-end: the /metacog slash command in the real Claude Code CLI.

The command's `!` line runs hooks/cli.sh before the model sees anything; "reaches the
model" means its output is in the text of the first request the CLI sent. Every
slash session runs with only Read allowed on the command line, so the `!` line runs
by the command file's own `allowed-tools` alone (the harness allows Bash by default,
which would hide a wrong pattern).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import claude_harness
from claude_harness import ClaudeHarness, SessionResult, plugin_version

pytestmark = pytest.mark.e2e

FAILING = {
    "name": "Bash",
    "input": {"command": 'python3 -c "import nosuchmodule_xyz"', "description": "Check the import"},
}


def slash(h: ClaudeHarness, command: str, monkeypatch: pytest.MonkeyPatch) -> SessionResult:
    """One session whose prompt is a slash command, with only Read allowed."""
    with monkeypatch.context() as patch:
        patch.setattr(claude_harness, "ALLOWED_TOOLS", "Read")
        result = h.run(["Shown."], prompt=command)
    assert result.returncode == 0 and not result.timed_out, result.describe()
    assert result.requests, "the command never reached the model:\n" + result.describe()
    return result


def failing_session(h: ClaudeHarness, failures: int = 3) -> SessionResult:
    result = h.run(
        [[FAILING] for _ in range(failures)] + ["I give up."], prompt="Make the import check pass."
    )
    assert result.returncode == 0 and not result.timed_out, result.describe()
    assert len(result.requests) == failures + 1, result.describe()
    return result


def runtime_cli(h: ClaudeHarness, *args: str) -> subprocess.CompletedProcess:
    """The runtime's own `metacog`, as the person would run it in the project."""
    python = h.plugin_data_dir() / "runtime" / plugin_version() / "bin" / "python"
    return subprocess.run(
        [str(python), "-I", "-m", "metacog", *args],
        cwd=h.project,
        env=h.env(),
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_status_reaches_the_model(metacog_claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch):
    first = failing_session(metacog_claude)
    session_id = first.output["session_id"]
    result = slash(metacog_claude, f"/metacog status --session {session_id}", monkeypatch)
    text = result.text(0)
    assert f"Session {session_id}" in text, result.describe()
    assert "3 tool calls, 3 errors" in text, text[-3000:]
    assert "nociception" in text and "Rules" in text, text[-3000:]
    assert "Traceback" not in text


def test_bare_command_shows_the_current_status(
    metacog_claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch
):
    failing_session(metacog_claude)
    text = slash(metacog_claude, "/metacog", monkeypatch).text(0)
    assert "Senses" in text and "nociception" in text, text[-3000:]


def test_doctor_reaches_the_model(metacog_claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch):
    text = slash(metacog_claude, "/metacog doctor", monkeypatch).text(0)
    assert "doctor" in text, text[-3000:]
    assert f"runtime {plugin_version()} ready" in text, text[-3000:]
    assert "hooks registered for" in text, text[-3000:]


def test_wrong_arguments_reach_the_model_as_one_line(
    metacog_claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch
):
    text = slash(metacog_claude, "/metacog config get nociception.observe", monkeypatch).text(0)
    assert (
        "metacog: unknown setting 'nociception.observe'; closest: nociception.observe_at" in text
    ), text[-3000:]
    assert "Traceback" not in text


def test_missing_runtime_is_explained(claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch):
    # A recent failed bootstrap: SessionStart does not try to build the runtime again.
    data = claude.plugin_data_dir()
    (data / "runtime").mkdir(parents=True)
    (data / "runtime" / ".failed").touch()
    claude.plugin_dir = claude_harness.REPO_ROOT
    text = slash(claude, "/metacog status", monkeypatch).text(0)
    assert "metacog: its runtime is not ready yet" in text, text[-3000:]
    assert "start a new Claude Code session" in text


def test_forget_removes_a_rule_from_the_next_digest(
    metacog_claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch
):
    ready = runtime_cli(metacog_claude, "status", "--json")
    assert ready.returncode == 0, ready.stdout + ready.stderr
    assert not json.loads(ready.stdout).get("rules_unavailable"), ready.stdout
    rule = "error-loop"
    learned = []
    for _ in range(4):  # an error loop per session until the rule is learned
        failing_session(metacog_claude, failures=4)
        report = json.loads(runtime_cli(metacog_claude, "status", "--json").stdout)
        learned = [r["id"] for r in report["rules"]]
        if rule in learned:
            break
    assert rule in learned, f"{rule} was not learned after four error loops; rules: {learned}"
    before = metacog_claude.run(["Ok."], prompt="Say hello.")
    assert before.mentions(rule, 0), (
        "the digest did not carry the rule before forget:\n" + before.describe()
    )

    forgot = slash(metacog_claude, f"/metacog forget {rule}", monkeypatch)
    assert f"Forgot {rule}" in forgot.text(0), forgot.text(0)[-3000:]
    report = json.loads(runtime_cli(metacog_claude, "status", "--json").stdout)
    assert rule not in [r["id"] for r in report["rules"]], report["rules"]

    after = metacog_claude.run(["Ok."], prompt="Say hello.")
    assert not after.mentions(rule, 0), after.mentions(rule, 0)


def test_a_missing_cli_fails_the_run_where_e2e_is_required(tmp_path: Path):
    """.ci/run (CI and the README's test command) requires the e2e tests: a missing CLI is a
    failure there, and a skip only on a bare `pytest` run without CI."""
    assert (
        "\nexport METACOG_REQUIRE_E2E=1\n" in (claude_harness.REPO_ROOT / ".ci" / "run").read_text()
    )
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "METACOG_REQUIRE_E2E")}
    env[claude_harness.CLAUDE_BIN_ENV] = str(tmp_path / "no-such-claude")

    def run(extra: dict[str, str], name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--basetemp",
                str(tmp_path / name),
                f"{Path(__file__).resolve()}::test_doctor_reaches_the_model",
            ],
            cwd=claude_harness.REPO_ROOT,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    for var in ("METACOG_REQUIRE_E2E", "CI"):
        done = run({var: "1"}, var)
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"{var} is set and the e2e tests cannot run" in done.stdout, done.stdout
    done = run({}, "bare")
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout + done.stderr
