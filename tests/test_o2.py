"""metacog.senses.o2: the context filling fast or near compaction, and what was read before one."""

from __future__ import annotations

from pathlib import Path

from hooktest import T0, agent_text, bash, edit, read, send, texts
from transcripts import Transcript


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
