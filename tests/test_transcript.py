"""metacog.transcript: how a transcript line's blocks are read, the same for the hook and replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import bash, send

from metacog.transcript import refused, response_id, tool_results, tool_uses


def test_the_calls_of_a_message_are_its_tool_use_blocks_with_an_id() -> None:
    message = {
        "id": "msg_1",
        "content": [
            {"type": "text", "text": "I will run it"},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "name": "Read"},  # no id: nothing to pair its result with
            {"type": "tool_use", "id": 7, "name": "Read"},
            "junk",
        ],
    }
    assert [b["id"] for b in tool_uses(message)] == ["toolu_1"]
    assert list(tool_uses({"content": "text"})) == []


def test_the_results_of_a_message_are_its_tool_result_blocks() -> None:
    message = {
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
            {"type": "text", "text": "the person's words"},
            None,
        ]
    }
    assert [b["tool_use_id"] for b in tool_results(message)] == ["toolu_1"]
    assert list(tool_results({})) == []


def test_a_refusal_is_an_error_that_claude_code_wrapped_in_its_tag() -> None:
    text = "<tool_use_error>File has not been read yet.</tool_use_error>"
    assert refused({"is_error": True}, text)
    assert refused({"is_error": True}, "  " + text)
    assert not refused({"is_error": False}, text)  # the tag quoted in a passing result
    assert not refused({"is_error": "true"}, text)
    assert not refused({"is_error": True}, "Exit code 1\n<tool_use_error>")  # a failure that ran


def test_a_response_is_named_by_its_message_id_capped() -> None:
    assert response_id({"id": "msg_" + "x" * 200}) == ("msg_" + "x" * 200)[:80]
    assert response_id({"id": 3}) is None and response_id({}) is None
    assert response_id({"id": ""}) == ""  # an empty id is still one: a response of its own


@pytest.mark.parametrize("kind", ["fifo", "devzero", "binary", "missing"])
def test_hostile_transcript_paths_are_bounded(tmp_path: Path, kind: str) -> None:
    import os

    path = tmp_path / "t"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path = Path("/dev/zero")
    elif kind == "binary":
        path.write_bytes(os.urandom(300_000))
    assert send(bash("ls", transcript_path=str(path))) is None


def _assistant(tokens: int, extra: str = "") -> bytes:
    return (
        f'{{"type":"assistant","message":{{"id":"msg_{tokens}","model":"claude-opus-4-8","usage":'
        f'{{"input_tokens":{tokens},"output_tokens":1}}{extra},"content":[{{"type":"tool_use",'
        f'"id":"toolu_{tokens}","name":"Bash","input":{{"command":"ls"}}}}]}}}}\n'
    ).encode()


@pytest.mark.parametrize(
    "line",
    [
        _assistant(300),
        _assistant(300, ',"x":NaN'),  # parse_json refuses it; replay's json.loads takes it
        _assistant(300, ',"x":-Infinity'),
        _assistant(300).replace(b"ls", b"l\xffs"),  # not UTF-8: replay reads a U+FFFD
        b"\xef\xbb\xbf" + _assistant(300),  # a BOM: the bytes parse, replay's text does not
    ],
    ids=["plain", "NaN", "infinity", "not utf-8", "bom"],
)
def test_the_transcript_replay_holds_reads_as_the_file_does(tmp_path: Path, line: bytes) -> None:
    """Replay hands the hook its transcript in memory (transcript.HELD), with the lines it
    parsed already where parsing the bytes gives the same value: the hook reads from it what
    it reads from the same lines in a file."""
    from metacog import replay, transcript

    lines = [_assistant(100), line, _assistant(200)]
    scratch = tmp_path / "t.jsonl"
    scratch.write_bytes(b"".join(lines))
    held = transcript.Held()
    timeline = replay._Timeline()
    for raw in lines:
        text, utf8 = replay._text(raw)  # as replay reads it (metacog.replay._replay)
        timeline.feed(text)
        held.append(raw, timeline.entry if utf8 else None)

    def reading(path: str, held: transcript.Held | None) -> tuple:
        cursor: dict = {}
        transcript.HELD = {path: held} if held else None
        try:
            out = transcript.read_new(path, cursor)
        finally:
            transcript.HELD = None
        return out.tokens, out.held, out.responses, out.turns, cursor["pending"], cursor["offset"]

    kept = len(held.entries)
    assert kept == (3 if line == _assistant(300) else 2)  # the others are parsed from their bytes
    assert reading("/nowhere/t.jsonl", held) == reading(str(scratch), None)
    assert held.entries == {}  # what the hook read is dropped


def test_the_transcript_replay_holds_keeps_what_a_read_may_take(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At least the last READ_CAP bytes, and the lines that begin in them."""
    from metacog import transcript

    monkeypatch.setattr(transcript, "READ_CAP", 1000)
    held = transcript.Held()
    lines = [_assistant(n) for n in range(100, 140)]
    for raw in lines:
        held.append(raw, {"type": "assistant"})
    assert held.size == sum(map(len, lines))
    assert (
        1000 <= len(held.data) <= 2000 and held.since(held.size - 1000) == b"".join(lines)[-1000:]
    )
    assert min(held.entries) >= held.size - 1000 and max(held.entries) == held.size - len(lines[-1])


@pytest.mark.parametrize("cap", [10, 700, 10_000_000])
def test_a_turn_end_reads_the_transcript_replay_holds_as_the_file(tmp_path: Path, cap: int) -> None:
    """The turn's end (metacog.turn_end.read_end) reads replay's transcript in memory as it
    reads the same bytes in a file, cut where the file's read is cut."""
    from metacog import transcript, turn_end

    lines = [_assistant(n) for n in range(100, 110)]
    scratch = tmp_path / "t.jsonl"
    scratch.write_bytes(b"".join(lines))
    held = transcript.Held()
    for raw in lines:
        held.append(raw, None)
    from_file = turn_end.read_end(str(scratch), cap)
    transcript.HELD = {"/nowhere/t.jsonl": held}
    try:
        assert turn_end.read_end("/nowhere/t.jsonl", cap) == from_file
    finally:
        transcript.HELD = None
    assert turn_end.read_end("/nowhere/t.jsonl", cap) == []  # not held: no such file
