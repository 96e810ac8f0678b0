"""End to end, the turn's end (metacog/turn_end.py) inside the real Claude Code 2.1.328.

What was measured (docs/turn-end.md): a Stop hook's `additionalContext` keeps the turn
going; the CLI sends one more request with the text as a system reminder ("Stop hook
additional context: …"), and the Stop after it carries `stop_hook_active: true`, where
metacog says nothing, so the turn then ends. A normal end adds no request and no byte.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import ClaudeHarness, request_text_blocks

pytestmark = pytest.mark.e2e

FAILING_TEST = """import unittest


class Login(unittest.TestCase):
    def test_login(self):
        self.assertEqual(401, 200)
"""
PASSING_TEST = FAILING_TEST.replace("401", "200")
RUN = "python3 -m unittest test_login"


def bash(command: str) -> list:
    return [{"name": "Bash", "input": {"command": command, "description": "run"}}]


def metacog_texts(body: dict) -> list[str]:
    return [b for b in request_text_blocks(body) if "metacog:" in b]


def test_a_contradicted_claim_reaches_the_next_request_once(metacog_claude: ClaudeHarness) -> None:
    (metacog_claude.project / "test_login.py").write_text(FAILING_TEST)
    result = metacog_claude.run(
        [bash(RUN), "All tests pass ✅", "You are right: test_login still fails (401 != 200)."]
    )
    assert result.returncode == 0 and not result.timed_out, result.describe()
    # One request more than the script's two: the turn went on once, then ended.
    assert len(result.requests) == 3, result.describe()
    assert not metacog_texts(result.requests[1])
    said = metacog_texts(result.requests[2])
    assert said, result.describe()
    assert (
        "Stop hook additional context: metacog: the last `python3 -m unittest test_login`"
        in said[0]
    )
    assert "What is true now?" in said[0]


def test_a_normal_end_is_silent(metacog_claude: ClaudeHarness) -> None:
    (metacog_claude.project / "test_login.py").write_text(PASSING_TEST)
    result = metacog_claude.run([bash(RUN), "All tests pass ✅"])
    assert result.returncode == 0 and not result.timed_out, result.describe()
    assert len(result.requests) == 2, result.describe()
    assert not any(metacog_texts(body) for body in result.requests)
