"""metacog.senses.o2: the context filling fast or near compaction, and what was read before one."""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import T0, agent_text, bash, edit, read, send, texts
from transcripts import Transcript

from metacog import transcript


def test_velocity_against_the_sessions_baseline() -> None:
    small = [bash(f"echo {i}", stdout="x" * 200) for i in range(10)]
    big = [read(f"/home/dev/project/src/m{i}.py", content="y" * 30000) for i in range(5)]
    said = texts(small + big)
    assert not any(said[:11])
    hit = [s for s in said[11:] if "faster than this session's baseline" in s]
    assert hit and "large file reads in the last 5 actions" in hit[0] and "subagent" in hit[0]


def test_a_burst_is_said_only_where_it_would_reach_compaction_soon(tmp_path: Path) -> None:
    def burst(log: Transcript, tokens: int, model: str) -> list[str]:
        log.usage(tokens, model=model)
        small = [bash(f"echo {i}", stdout="x" * 200) for i in range(10)]
        big = [read(f"/home/dev/project/src/m{i}.py", content="y" * 30000) for i in range(5)]
        for call in small + big:
            call["transcript_path"] = str(log.path)
        return texts(small + big)

    # A million tokens of room: five large reads are nothing to warn of.
    roomy = burst(Transcript(tmp_path / "a.jsonl"), 100_000, "claude-opus-5-5")
    assert not any(roomy), roomy
    # 100K of 200K at about 7.5K tokens a call: compaction is 9 calls and many decisions away.
    middling = burst(Transcript(tmp_path / "c.jsonl"), 100_000, "claude-sonnet-4-5")
    assert not any(middling), middling
    # 150K of 200K, about 7.5K tokens a call: compaction is a few calls away.
    tight = burst(Transcript(tmp_path / "b.jsonl"), 150_000, "claude-sonnet-4-5")
    assert any("faster than this session's baseline" in t for t in tight), tight


def test_steady_large_reads_are_the_baseline() -> None:
    calls = [read(f"/home/dev/project/src/m{i}.py", content="y" * 30000) for i in range(20)]
    assert not any(texts(calls))


def test_real_fill_from_the_transcript(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")

    def call(tokens: int) -> str:
        log.usage(tokens, model="claude-sonnet-4-5")
        return agent_text(send(bash(f"echo {tokens}", transcript_path=str(log.path)), now=T0))

    assert call(100_000) == ""
    send(edit("/home/dev/project/src/app.py"), now=T0)  # work a compaction would lose
    said = call(141_000)  # 41K in one call: compaction is a call away
    assert "context is 141K of 200K tokens (70%), growing about 20.5K per call" in said
    assert "auto-compaction near 167K starts in about 1 calls" in said
    assert call(145_000) == ""  # once until the next compaction


def test_a_high_level_that_grows_slowly_is_not_news(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    send(edit("/home/dev/project/src/app.py"), now=T0)  # work a compaction would lose
    said = []
    for n in range(30):  # 140K to 154.5K, 500 tokens a call: compaction 25+ calls away
        log.usage(140_000 + 500 * n, model="claude-sonnet-4-5")
        said.append(agent_text(send(bash(f"echo {n}", transcript_path=str(log.path)), now=T0)))
    assert not any(said)
    for n in range(6):  # then 3K a call: near 167K within 6 calls
        log.usage(155_000 + 3_000 * n, model="claude-sonnet-4-5")
        said.append(agent_text(send(bash(f"echo x{n}", transcript_path=str(log.path)), now=T0)))
    spoken = [s for s in said if s]
    assert len(spoken) == 1 and "growing about" in spoken[0], spoken


def test_a_1m_model_has_room(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    log.usage(400_000, model="claude-opus-5-5")
    assert agent_text(send(bash("ls", transcript_path=str(log.path)))) == ""


def test_after_compaction_the_agent_hears_what_it_had_read(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    for _ in range(2):
        send(read("/home/dev/project/src/core.py", transcript_path=str(log.path)))
        send(bash("ls", transcript_path=str(log.path)))
    log.compaction()
    said = agent_text(send(bash("pwd", transcript_path=str(log.path))))
    assert "compacted" in said and "core.py (2×)" in said


def _growth(log: Transcript, model: str, before: int = 100_000, after: int = 141_000) -> str:
    """The sequence that must speak on a 200K window (test_real_fill_from_the_transcript):
    a level, an edit, 41K more in one call. What the last call was told."""
    log.usage(before, model=model)
    send(bash("echo before", transcript_path=str(log.path)), now=T0)
    send(edit("/home/dev/project/src/app.py"), now=T0)  # work a compaction would lose
    log.usage(after, model=model)
    return agent_text(send(bash("echo after", transcript_path=str(log.path)), now=T0))


def test_a_level_past_200k_proves_the_larger_window(tmp_path: Path) -> None:
    # A 4.5 Sonnet that answers at 203K runs with the 1M window (a `[1m]` the transcript's
    # model id does not name): "203K of 200K (102%) ... compaction starts soon" is false.
    log = Transcript(tmp_path / "t.jsonl")
    send(edit("/home/dev/project/src/app.py"), now=T0)
    log.usage(203_000, model="claude-sonnet-4-5-20250929")
    said = agent_text(send(bash("echo x", transcript_path=str(log.path)), now=T0))
    assert said == "", said


def test_the_larger_window_is_remembered_past_a_compaction(tmp_path: Path) -> None:
    # 250K, compacted, then the growth that speaks on a 200K window: the session has shown
    # its window is 1M, and the level is never again measured against 200K.
    log = Transcript(tmp_path / "t.jsonl")
    log.usage(250_000, model="claude-sonnet-4-5-20250929")
    send(bash("echo big", transcript_path=str(log.path)), now=T0)
    log.compaction(pre_tokens=262_000)
    send(bash("echo compacted", transcript_path=str(log.path)), now=T0)
    assert _growth(log, "claude-sonnet-4-5-20250929") == ""


def test_a_compactions_pre_tokens_prove_the_larger_window(tmp_path: Path) -> None:
    # A manual /compact at 224K (seen in a real session): the usage before it was never read
    # (a resumed session's first look starts near the end), its preTokens tell the window.
    log = Transcript(tmp_path / "t.jsonl")
    log.compaction(pre_tokens=224_255, trigger="manual")
    assert _growth(log, "claude-sonnet-4-5-20250929") == ""


def test_a_compaction_within_200k_leaves_the_window(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    log.compaction(pre_tokens=167_541)
    said = _growth(log, "claude-sonnet-4-5-20250929")
    assert "context is 141K of 200K tokens (70%)" in said, said


def test_a_subagents_context_says_nothing_of_the_main_window(tmp_path: Path) -> None:
    # A subagent's line in the main file (older transcripts) at 250K: its own context, not
    # the main thread's, which still speaks against its 200K.
    log = Transcript(tmp_path / "t.jsonl")
    log.usage(100_000, model="claude-sonnet-4-5-20250929")
    send(bash("echo before", transcript_path=str(log.path)), now=T0)
    log.usage(250_000, model="claude-sonnet-4-5-20250929", sidechain=True)
    send(bash("echo subagent", transcript_path=str(log.path)), now=T0)
    send(edit("/home/dev/project/src/app.py"), now=T0)
    log.usage(141_000, model="claude-sonnet-4-5-20250929")
    said = agent_text(send(bash("echo after", transcript_path=str(log.path)), now=T0))
    assert "context is 141K of 200K tokens (70%)" in said, said


def test_a_subagents_compaction_says_nothing_of_the_main_window(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    log.compaction(pre_tokens=224_255, sidechain=True)
    said = _growth(log, "claude-sonnet-4-5-20250929")
    assert "context is 141K of 200K tokens (70%)" in said, said


@pytest.mark.parametrize(
    "model",
    [
        pytest.param("claude-opus-4-8", id="opus-4.8-native-1m"),
        pytest.param("claude-opus-4-7", id="opus-4.7-native-1m"),
        pytest.param("claude-fable-5", id="fable-native-1m"),
        pytest.param("claude-sonnet-4-5-20250929[1m]", id="1m-suffix"),
    ],
)
def test_a_1m_model_id_is_not_warned_at_141k(tmp_path: Path, model: str) -> None:
    assert _growth(Transcript(tmp_path / "t.jsonl"), model) == ""


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-opus-4-6", 200_000),
        ("claude-opus-4-7", 1_000_000),
        ("claude-opus-4-8", 1_000_000),
        ("claude-opus-4-20250514", 200_000),
        ("claude-opus-4-1-20250805", 200_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-sonnet-4-6", 200_000),
        ("claude-haiku-4-5-20251001", 200_000),
        ("claude-3-5-sonnet-20241022", 200_000),
        ("claude-opus-5", 1_000_000),
        ("claude-sonnet-5-5", 1_000_000),
        ("claude-fable-5", 1_000_000),
        ("claude-mythos-preview", 1_000_000),
        ("claude-opus-4-6[1m]", 1_000_000),
        ("MiniMax-M2.7", 200_000),
    ],
)
def test_the_window_of_a_model_id_as_the_pinned_cli_catalogs_it(model: str, window: int) -> None:
    assert transcript.context_window(model, env={}) == window


def test_a_window_is_outgrown_only_past_it() -> None:
    assert transcript.outgrown(200_000, 200_000) == 200_000
    assert transcript.outgrown(200_000, 203_000) == 1_000_000
    assert transcript.outgrown(15_000, 16_000) == 200_000  # a configured test window
    assert transcript.outgrown(1_000_000, 1_200_000) == 1_200_000
