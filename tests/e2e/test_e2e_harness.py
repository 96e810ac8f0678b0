"""Tests of the e2e harness itself: the scripted model server (no CLI needed) and
one plain CLI session without any plugin."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import ClaudeHarness, clean_copy, request_text, tool_result_text, tool_results
from model_server import ModelServer

AGENT_BODY = {
    "model": "claude-x",
    "max_tokens": 32000,
    "stream": False,
    "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    "messages": [{"role": "user", "content": "hi"}],
}


def _post(server: ModelServer, body: dict, path: str = "/v1/messages?beta=true"):
    req = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.headers.get("content-type"), resp.read().decode()


def _sse(text: str) -> list[tuple[str, dict]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_non_stream_turns_then_fallback():
    script = [[{"name": "Bash", "input": {"command": "ls"}}], "final words"]
    with ModelServer(script) as server:
        _, first = _post(server, AGENT_BODY)
        _, second = _post(server, AGENT_BODY)
        _, third = _post(server, AGENT_BODY)
    first, second, third = map(json.loads, (first, second, third))
    assert first["stop_reason"] == "tool_use"
    assert first["content"][0]["name"] == "Bash" and first["content"][0]["input"] == {
        "command": "ls"
    }
    assert first["usage"]["input_tokens"] > 0 and first["usage"]["output_tokens"] > 0
    assert second["content"] == [{"type": "text", "text": "final words"}]
    assert second["stop_reason"] == "end_turn"
    assert third["content"][0]["text"] == "Done."  # script exhausted
    assert server.turns_consumed == 3 and len(server.agent_requests) == 3


def test_stream_events():
    script = [
        [
            {"name": "Read", "input": {"file_path": "/x"}},
            {"name": "Bash", "input": {"command": "ls"}},
        ]
    ]
    with ModelServer(script) as server:
        ctype, text = _post(server, dict(AGENT_BODY, stream=True))
    assert ctype.startswith("text/event-stream")
    events = _sse(text)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == 2 == names.count("content_block_stop")
    partial = [d["delta"]["partial_json"] for n, d in events if n == "content_block_delta"]
    assert [json.loads(p) for p in partial] == [{"file_path": "/x"}, {"command": "ls"}]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_side_requests_do_not_consume_turns():
    with ModelServer(["scripted"]) as server:
        _post(
            server,
            {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "quota"}]},
        )
        _post(
            server,
            {
                "model": "m",
                "max_tokens": 512,
                "tools": AGENT_BODY["tools"],
                "messages": [{"role": "user", "content": "title?"}],
            },
        )
        _post(server, {"model": "m", "messages": []}, path="/v1/messages/count_tokens")
        urllib.request.urlopen(
            urllib.request.Request(server.url + "/api/hello", method="HEAD"), timeout=10
        )
        _, body = _post(server, AGENT_BODY)
    assert json.loads(body)["content"][0]["text"] == "scripted"
    assert [r.kind for r in server.requests] == ["side", "side", "count_tokens", "other", "agent"]
    assert len(server.message_requests) == 3 and server.turns_consumed == 1


def test_request_text_covers_every_channel():
    body = {
        "system": [{"type": "text", "text": "SYS"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "<system-reminder>REMINDER</system-reminder>"}
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "CMD"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": "RESULT"}],
                    }
                ],
            },
            {
                "role": "system",
                "content": [
                    {"type": "text", "text": "PostToolUse:Bash hook additional context: CTX"}
                ],
            },
            {"role": "user", "content": "PLAIN"},
        ],
    }
    text = request_text(body)
    for piece in ("SYS", "REMINDER", "CMD", "RESULT", "CTX", "PLAIN"):
        assert piece in text
    assert tool_result_text(tool_results(body)[0]) == "RESULT"


def test_clean_copy_skips_junk(tmp_path):
    src = tmp_path / "src"
    (src / ".venv" / "bin").mkdir(parents=True)
    (src / "pkg" / "__pycache__").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"")
    (src / ".venv" / "bin" / "python").write_text("")
    dest = clean_copy(src, tmp_path / "dest")
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == ["pkg/mod.py"]


@pytest.mark.e2e
def test_plain_session_without_plugin(claude: ClaudeHarness):
    target = claude.project / "README.txt"
    script = [
        [
            {
                "name": "Bash",
                "input": {"command": "echo hello-from-bash", "description": "Say hello"},
            }
        ],
        [{"name": "Read", "input": {"file_path": str(target)}}],
        "Finished.",
    ]
    result = claude.run(script, prompt="Say hello.", plugin_dir=None)
    assert result.returncode == 0, result.describe()
    assert result.output and result.output.get("result") == "Finished.", result.stdout
    assert len(result.requests) == 3
    assert "Say hello." in result.text(0)
    assert "hello-from-bash" in result.text(1)
    assert "scratch project" in result.text(2)
    assert result.first_request_mentioning("metacog") is None
