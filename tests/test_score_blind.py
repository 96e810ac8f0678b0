"""benchmarks/score_blind.py: the world's words made up, its structure and Claude Code's kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from score_blind import Blind, blind_transcript  # noqa: E402 - needs the path above


def _entries(*items: dict) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


def _use(uid: str, name: str, **tool_input: object) -> dict:
    content = [{"type": "tool_use", "id": uid, "name": name, "input": tool_input}]
    return {"type": "assistant", "message": {"role": "assistant", "content": content}}


def _result(uid: str, text: str, error: bool = False, **structured: object) -> dict:
    block = {"type": "tool_result", "tool_use_id": uid, "content": text, "is_error": error}
    entry = {"type": "user", "message": {"role": "user", "content": [block]}}
    if structured:
        entry["toolUseResult"] = structured
    return entry


def test_a_word_keeps_its_length_and_capitals_and_is_the_same_each_time() -> None:
    blind = Blind("session")
    text = blind.text("TypeError: cannot read parse_header of src/parser.py:12 (TypeError)")
    assert text != "TypeError: cannot read parse_header of src/parser.py:12 (TypeError)"
    first, *_, last = text.replace("(", " ").replace(")", " ").split()
    assert first[:-1] == last and first[0].isupper() and first[4].isupper()
    assert first[1:4].islower() and len(first) == len("TypeError:")
    assert ":12" in text and "/" in text and "_" in text and "parser" not in text
    assert Blind("session").text("TypeError") == first[:-1]  # the same made-up word
    assert Blind("other").text("TypeError") != first[:-1]  # another session, another word


def test_only_the_worlds_words_are_made_up(tmp_path: Path) -> None:
    source, target = tmp_path / "s.jsonl", tmp_path / "b.jsonl"
    source.write_text(
        _entries(
            _use("1", "Bash", command="npm test"),
            _result("1", "Exit code 1\nFAILED tests/test_a.py - boom", True),
            _use("2", "Edit", file_path="a.py"),
            _result("2", "<tool_use_error>String to replace not found in file.", True),
            _use("3", "Bash", command="npm run dev"),
            _result("3", "Command timed out after 2m 0.0s", True),
            _use("4", "mcp__db__query", sql="select 1"),
            _result("4", "relation users does not exist", True),
            _use("5", "Bash", command="ls"),
            _result("5", "README.md", stdout="README.md", stderr=""),
        )
    )
    blind_transcript(source, target)
    texts = [
        block.get("content") or block.get("input")
        for line in target.read_text().splitlines()
        for block in json.loads(line)["message"]["content"]
    ]
    assert texts[0] == {"command": "npm test"}  # what the agent sent stays
    assert texts[1].startswith("Exit code 1\n") and "FAILED" not in texts[1]
    assert texts[3] == "<tool_use_error>String to replace not found in file."  # Claude Code's
    assert texts[5] == "Command timed out after 2m 0.0s"
    assert "relation" not in texts[7] and len(texts[7]) == len("relation users does not exist")
    last = json.loads(target.read_text().splitlines()[-1])
    assert last["toolUseResult"]["stdout"] == texts[9] != "README.md"


def test_claude_codes_own_fields_of_a_result_stay(tmp_path: Path) -> None:
    source, target = tmp_path / "s.jsonl", tmp_path / "b.jsonl"
    task = {"retrieval_status": "success", "task": {"status": "failed", "output": "boom here"}}
    source.write_text(
        _entries(_use("1", "TaskOutput", task_id="t1"), _result("1", "boom here", **task))
    )
    blind_transcript(source, target)
    kept = json.loads(target.read_text().splitlines()[-1])["toolUseResult"]
    assert kept["retrieval_status"] == "success" and kept["task"]["status"] == "failed"
    assert kept["task"]["output"] != "boom here"


def test_a_label_naming_a_path_is_refused(tmp_path: Path) -> None:
    import pytest
    from score_blind import blind_folder

    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    label = {"file": "../escape.jsonl", "type": "session", "calls": 0, "quiet": True}
    (tmp_path / "in" / "LABELS.jsonl").write_text(json.dumps(label) + "\n")
    with pytest.raises(ValueError, match="not a file"):
        blind_folder(tmp_path / "in", tmp_path / "out")
    assert not (tmp_path / "escape.jsonl").exists()
