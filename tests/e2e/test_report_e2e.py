"""End to end: what metacog said in a real session is read back by `metacog report`.

Claude Code writes each hook context that reached the model into the transcript as an
`attachment` line of type `hook_additional_context`; the report counts those as what
metacog did say. The session's transcript lines (bulky request snapshots left out) are
kept as tests/fixtures/transcript-live-2.1.328.jsonl; `E2E_CAPTURE=1` rewrites it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import REPO_ROOT, ClaudeHarness
from test_commands import runtime_cli, slash

pytestmark = pytest.mark.e2e

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "transcript-live-2.1.328.jsonl"
KEPT = ("user", "assistant", "attachment", "system")
DROPPED_ATTACHMENTS = (
    "prompt_snapshot",
    "skill_listing",
    "agent_listing_delta",
    "deferred_tools_delta",
)


def bash(command: str) -> list:
    return [{"name": "Bash", "input": {"command": command, "description": "run"}}]


def kept(line: str) -> bool:
    entry = json.loads(line)
    if entry.get("type") not in KEPT:
        return False
    return (entry.get("attachment") or {}).get("type") not in DROPPED_ATTACHMENTS


def test_report_reads_what_metacog_said(
    metacog_claude: ClaudeHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = metacog_claude.project / "notes.txt"
    write = [{"name": "Write", "input": {"file_path": str(notes), "content": "ok\n"}}]
    script = [bash("cat notes.txt")] * 3 + [write, bash("cat notes.txt"), "Done."]
    result = metacog_claude.run(script, prompt="Show me notes.txt.")
    assert result.returncode == 0 and not result.timed_out, result.describe()
    [transcript] = list((metacog_claude.home / ".claude" / "projects").rglob("*.jsonl"))
    lines = transcript.read_text().splitlines()
    contexts = [
        json.loads(line)["attachment"]
        for line in lines
        if '"hook_additional_context"' in line and json.loads(line).get("type") == "attachment"
    ]
    said = [a for a in contexts if a.get("type") == "hook_additional_context"]
    assert said, "no hook_additional_context attachment in the transcript"
    first = said[0]
    assert (
        first["hookEvent"] == "PostToolUseFailure"
        and first["hookName"] == "PostToolUseFailure:Bash"
    )
    assert first["toolUseID"].startswith("toolu_") and first["content"][0].startswith(
        "metacog: the same error 3"
    )

    done = runtime_cli(metacog_claude, "report", str(transcript), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    [session] = report["sessions"]
    assert session["live"] and [s["sense"] for s in session["said"]] == ["nociception"], session
    [episode] = session["episodes"]
    # Said after the 3rd failing cat; the Write, then the cat that passes: 2 calls later.
    assert (episode["side"], episode["calls_after"], episode["resolved"]) == ("spoke", 2, True), (
        episode
    )
    assert report["helped"]["spoke"]["ended"] == 1 and report["helped"]["silent"]["episodes"] == 0
    # Proof of delivery: metacog's state of the session says what it sent, the transcript
    # what Claude Code put before the model.
    delivered = report["delivery"]
    assert (delivered["sessions"], delivered["lines_arrived"], delivered["none_arrived_count"]) == (
        1,
        1,
        0,
    ), delivered
    assert delivered["signals_sent"] >= 1

    if os.environ.get("E2E_CAPTURE") == "1":
        FIXTURE.write_text("".join(line + "\n" for line in lines if kept(line)))
    assert FIXTURE.exists(), f"{FIXTURE} is missing: run this test with E2E_CAPTURE=1"

    # The same history from inside Claude Code: `/metacog report` reads ~/.claude/projects.
    text = slash(metacog_claude, "/metacog report", monkeypatch).text(0)
    assert "metacog report: " in text and "(1 with metacog active)" in text, text[-3000:]
    assert "metacog said 1," in text and "Traceback" not in text, text[-3000:]
