"""Build transcripts for tests from the lines of the captured one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

SAMPLE = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "transcript-sample-2.1.328.jsonl")
    .read_text()
    .splitlines()
]


def _first(kind: str, pred=lambda e: True) -> dict:
    return copy.deepcopy(next(e for e in SAMPLE if e.get("type") == kind and pred(e)))


def _refused_call() -> dict:
    """The captured refused Edit's tool_use line (a fresh copy)."""
    return _first(
        "assistant",
        lambda e: e["message"]["content"][0].get("input", {}).get("old_string") == "NOT THERE",
    )


def _refusal() -> dict:
    """The captured refused call's <tool_use_error> result line (a fresh copy)."""
    return _first(
        "user",
        lambda e: (
            isinstance(e["message"]["content"], list)
            and "<tool_use_error>" in str(e["message"]["content"][0].get("content"))
        ),
    )


class Transcript:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")
        self.n = 0

    def add(self, entry: dict) -> None:
        with self.path.open("a") as fh:
            fh.write(json.dumps(entry, separators=(",", ":")) + "\n")

    def usage(self, tokens: int, model: str = "claude-opus-5-5", sidechain: bool = False) -> None:
        """A response's usage; `sidechain`: a subagent's line in the main file, as transcripts
        before subagents had files of their own wrote it."""
        entry = _first("assistant")
        self.n += 1
        entry["isSidechain"] = sidechain
        entry["message"]["id"] = f"msg_t{self.n}"
        entry["message"]["model"] = model
        entry["message"]["usage"].update(
            input_tokens=tokens, cache_read_input_tokens=0, cache_creation_input_tokens=0
        )
        self.add(entry)

    def batch(self, ids: list[str], tokens: int = 5000) -> None:
        """One model response asking for the tool calls `ids` at once (a parallel batch)."""
        entry = _first("assistant", lambda e: e["message"]["content"][0].get("type") == "tool_use")
        self.n += 1
        block = entry["message"]["content"][0]
        entry["message"]["id"] = f"msg_b{self.n}"
        entry["message"]["usage"].update(
            input_tokens=tokens, cache_read_input_tokens=0, cache_creation_input_tokens=0
        )
        entry["message"]["content"] = [{**block, "id": i} for i in ids]
        self.add(entry)

    def refused_edit(self, old: str = "NOT THERE") -> None:
        """The captured refused Edit: a tool_use and its <tool_use_error> result, no hook."""
        self.n += 1
        call = _refused_call()
        call["message"]["content"][0]["id"] = f"toolu_r{self.n}"
        call["message"]["id"] = f"msg_r{self.n}"  # each refused call is the model's next attempt
        call["message"]["content"][0]["input"]["old_string"] = old
        result = _refusal()
        result["message"]["content"][0]["tool_use_id"] = f"toolu_r{self.n}"
        self.add(call)
        self.add(result)

    def refused(self, tool: str, tool_input: dict, message: str) -> None:
        """The captured refused call's two lines with another tool, input and refusal text."""
        self.refused_batch([(tool, tool_input, message)])

    def refused_batch(self, calls: list[tuple[str, dict, str]]) -> list[str]:
        """One model response asking for `calls` (tool, input, refusal text) at once, each
        refused: the captured refused call's two lines, its blocks in one response, its
        results after. Returns the calls' tool_use ids."""
        self.n += 1
        call = _refused_call()
        block = call["message"]["content"][0]
        ids = [f"toolu_p{self.n}_{k}" for k in range(len(calls))]
        call["message"]["id"] = f"msg_p{self.n}"
        call["message"]["content"] = [
            {**block, "id": i, "name": tool, "input": tool_input}
            for i, (tool, tool_input, _) in zip(ids, calls, strict=True)
        ]
        self.add(call)
        for i, (_, _, message) in zip(ids, calls, strict=True):
            result = _refusal()
            result["message"]["content"][0].update(
                tool_use_id=i, content=f"<tool_use_error>{message}</tool_use_error>"
            )
            self.add(result)
        return ids

    def compaction(
        self, pre_tokens: int = 170000, trigger: str = "auto", sidechain: bool = False
    ) -> None:
        """A compaction's boundary, shaped as the real transcripts write it (2.1.37 to 2.1.177):
        its fields but the ids and the time."""
        self.add(
            {
                "parentUuid": None,
                "isSidechain": sidechain,
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
            }
        )
