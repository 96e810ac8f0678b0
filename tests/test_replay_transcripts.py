"""The senses on real work: the 49 recorded sessions in ../shared/transcripts (not copied
into this repository; this module skips when they are not beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from metacog.replay import replay

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
pytestmark = pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/transcripts is not here")


def one(fragment: str) -> dict:
    [path] = [p for p in TRANSCRIPTS.glob(f"*{fragment}*.jsonl") if "__subagents__" not in p.name]
    return replay(str(path))


@pytest.mark.parametrize(("fragment", "phrase"), [
    pytest.param("779277eb10", "golangci-lint run --enable-only bodyclose", id="lint-retried-7x"),
    pytest.param("fe5e1c67", "File has not been read yet", id="not-read-13x"),
])
def test_known_loops_are_caught(fragment: str, phrase: str) -> None:
    said = [s["text"] for s in one(fragment)["signals"] if "nociception" in s["sense"]]
    assert any(phrase in text for text in said), said


def test_a_session_that_makes_progress_is_not_called_a_loop() -> None:
    assert not [s for s in one("37f83ec9")["signals"] if "nociception" in s["sense"]]


def test_quiet_sessions_hear_well_under_one_signal_per_50_calls() -> None:
    calls = signals = 0
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        result = replay(str(path))
        if result["per_sense"].get("nociception") or result["per_sense"].get("vestibular"):
            continue  # a session with a loop is not quiet
        calls += result["tool_calls"]
        signals += len(result["signals"])
    assert calls > 1000
    assert signals * 65 < calls, (signals, calls)
