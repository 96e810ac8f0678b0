"""Drive the command line in-process, and give it a project and sessions to report on.

Sessions come from driving the real hook (hooktest.send), never from files written by hand.
A test module takes the `project` fixture by binding it, `project = clitest.project`: imported
by name it would read to ruff as an unused import that each test argument redefines (F401, F811).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hooktest import captured, send
from typer.testing import CliRunner

from metacog.cli import app

ROOT = Path(__file__).resolve().parents[1]
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]
DAY = 86400.0
AGO = (
    time.time() - 3 * DAY - 3600
)  # evidence dated a little over 3 days back: "last active 3 days ago"


def cli(*args: str) -> object:
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2 (typer < 0.2x) mixes stderr in otherwise
    except TypeError:
        runner = CliRunner()
    return runner.invoke(app, list(args))


def one_line_error(result: object, code: int | None = None) -> str:
    """A failure the person caused: non-zero (`code` if given), no traceback, one line on stderr."""
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("metacog: "), result.stderr
    return lines[0]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project, the current directory."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def store_of(root: Path) -> Path:
    return root / ".claude" / "metacog-learnings.jsonl"


def fail_in(cwd: Path, times: int, session: str, now: float = 1000.0) -> None:
    payload = captured("PostToolUseFailure", "Bash", cwd=str(cwd), session_id=session)
    for i in range(times):
        send(payload, now=now + i)


def end_session(cwd: Path, session: str, now: float) -> None:
    # No SessionEnd was captured; Claude Code sends the common fields and a `reason` (FACTS.md).
    payload = captured("SessionStart", cwd=str(cwd), session_id=session)
    del payload["source"]
    payload.update(hook_event_name="SessionEnd", reason="other")
    send(payload, now=now)


def learn_error_loop(cwd: Path, sessions: int, prefix: str = "loop") -> None:
    """Sessions that each hit the same failure 5 times, then end: one error-loop detection each."""
    for k in range(sessions):
        start = AGO + 100 * k
        fail_in(cwd, 5, f"{prefix}-{k}", now=start)
        end_session(cwd, f"{prefix}-{k}", start + 10)
