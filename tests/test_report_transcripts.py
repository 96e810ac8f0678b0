"""`metacog report` over the 49 real sessions in ../shared/transcripts (not copied into this
repository: this module skips, saying so, when the folder is not beside it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clitest import cli

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
pytestmark = [
    pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason=f"{TRANSCRIPTS} is not here"),
    pytest.mark.slow,  # reads the 72 shared transcripts whole
]


def test_the_shared_history_reads_whole_and_finds_the_labelled_loops() -> None:
    result = cli("report", str(TRANSCRIPTS), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["files"] == {"listed": 50, "read": 49, "skipped": 1, "empty": 0}
    assert [s["reason"] for s in out["skipped"]] == [
        "not a Claude Code transcript (no user or assistant line)"
    ]
    by_name = {Path(s["file"]).name: s for s in out["sessions"]}
    [lint] = [s for name, s in by_name.items() if "373740ff86" in name]
    # LABELS.jsonl: 'golangci-lint --enable-only usestdlibvars' fails from call 47 to 93 (1-based), passes at 93.
    assert (47, 93, True) in [
        (e["start"] + 1, e["end"] + 1, e["resolved"]) for e in lint["episodes"]
    ]
    [bodyclose] = [s for name, s in by_name.items() if "779277eb10" in name]
    # ... and 'golangci-lint --enable-only bodyclose' never passes before the session ends.
    assert any(not e["resolved"] and e["start"] + 1 <= 67 for e in bodyclose["episodes"]), (
        bodyclose["episodes"]
    )
    quiet = [s for name, s in by_name.items() if "ef958aa1" in name and "subagent" not in name]
    assert quiet and all(not s["episodes"] and not s["would_say"] for s in quiet)
    assert out["totals"]["live_sessions"] == 0 and out["helped"]["spoke"]["episodes"] == 0
