"""End to end across sessions with the real CLI: a loop is learned, injected, held, kept.

Session 1 loops on one error; session 2's first model request carries the rule, the
session meets errors without looping, and the project store records a suppression;
session 3 still injects the rule (it held, so it is reinforced, not forgotten).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import ClaudeHarness, request_text_blocks

pytestmark = pytest.mark.e2e
LESSON = "When an error repeats, stop retrying variants"


def bash(command: str) -> list:
    return [{"name": "Bash", "input": {"command": command, "description": "run"}}]


def digest_in_first_request(result) -> str:
    assert result.returncode == 0 and not result.timed_out, result.describe()
    blocks = [
        b
        for b in request_text_blocks(result.requests[0])
        if "UserPromptSubmit hook additional context" in b
    ]
    return "\n".join(blocks)


def records(project: Path) -> list[dict]:
    store = project / ".claude" / "metacog-learnings.jsonl"
    assert store.exists(), "no project store was written"
    return [json.loads(line) for line in store.read_text().splitlines() if line.strip()]


def test_a_loop_learned_injected_held_and_kept(metacog_claude: ClaudeHarness) -> None:
    loop = [bash('python3 -c "import nosuchmodule_xyz"')] * 5 + ["I give up."]
    first = metacog_claude.run(loop)
    assert LESSON not in digest_in_first_request(first)  # nothing learned yet
    learned = [r for r in records(metacog_claude.project) if r.get("rule") == "error-loop"]
    assert [r["type"] for r in learned] == ["detection"], learned

    # Errors again, but different ones and then a fix: the rule held.
    held = [
        bash("ls /no/such/dir"),
        bash('python3 -c "raise SystemExit(3)"'),
        bash("echo fixed"),
        "Done.",
    ]
    second = metacog_claude.run(held)
    digest = digest_in_first_request(second)
    assert LESSON in digest and "seen 1×" in digest, digest
    kinds = [r["type"] for r in records(metacog_claude.project) if r.get("rule") == "error-loop"]
    assert kinds == ["detection", "suppression"], kinds

    third = metacog_claude.run([bash("echo hello"), "Done."])
    digest = digest_in_first_request(third)
    assert LESSON in digest and "held 1×" in digest, digest
