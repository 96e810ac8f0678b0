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

from hooktest import captured

ROOT = Path(__file__).resolve().parents[1]
HOOK_BOUND_S = 5  # Claude Code waits 10 s for a hook; metacog answers well within half of it


def hook(payload: dict, mode: str = "direct") -> dict | None:
    """One hook call in a fresh interpreter, as hooks/run.sh makes it; its reply."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); from metacog.hook import main; main(mode=sys.argv[2])"
    env = {**os.environ, "METACOG_RESIDENT": "0"}
    done = subprocess.run([sys.executable, "-I", "-c", code, str(ROOT), mode], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, timeout=HOOK_BOUND_S, check=True)
    return json.loads(done.stdout) if done.stdout else None


def said(reply: dict | None) -> str:
    return (reply or {}).get("hookSpecificOutput", {}).get("additionalContext", "")


def test_state_cut_in_half_with_garbage_is_quarantined_and_the_loop_still_heard(isolated_home: Path) -> None:
    fail = captured("PostToolUseFailure", "Bash")
    hook(captured("PostToolUse", "Bash"))
    path = next((isolated_home / "state" / "sessions").glob("*.json"))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] + b"\x00garbage{{{")
    replies = [hook(fail) for _ in range(5)]
    assert list(path.parent.glob(path.name + ".corrupt-*")), "the damaged file was not set aside"
    assert replies[:2] == [None, None]
    assert said(replies[2]).startswith("metacog: the same error 3 times")
