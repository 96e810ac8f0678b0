"""A scripted fake of the Anthropic Messages API for driving the real Claude Code CLI.

Usage::

    script = [
        [{"name": "Bash", "input": {"command": "ls"}}],   # turn 1: one tool call
        "All done.",                                       # turn 2: final text
    ]
    with ModelServer(script) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        ...run claude...
    server.agent_requests   # the request bodies that consumed scripted turns

A turn is either a list of tool calls (``{"name": ..., "input": {...}}``; an
optional ``"id"`` overrides the generated ``tool_use`` id) or a string (the
final text, ``stop_reason: end_turn``). When the script is exhausted every
further agent request gets a short final text.

Only *agent-loop* requests consume turns. Claude Code 2.1.328 (measured) sends
every ``POST /v1/messages`` of the main loop with a non-empty ``tools`` list and
``stream: true``. Everything else (a title/summary or quota request without
tools or with a tiny ``max_tokens``, ``count_tokens``, HEAD/GET probes) is
recorded too but answered generically without touching the script. See
:func:`is_agent_request`.

Everything is stdlib; the server runs in a daemon thread on 127.0.0.1 with an
ephemeral port.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_FINAL_TEXT = "Done."
MODEL_FALLBACK = "claude-sonnet-4-5"

# A side request is one whose max_tokens is at most this (quota probes use 1,
# small-model helpers a few hundred); the main loop asks for thousands.
SIDE_REQUEST_MAX_TOKENS = 1024


@dataclass
class RecordedRequest:
    """One HTTP request the CLI made to the fake API."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON if it parsed, else the raw text (or None)
    kind: str  # "agent", "side", "count_tokens", "other"
    turn: int | None = None  # index into the script of the turn it consumed
    time: float = field(default_factory=time.monotonic)


def is_agent_request(body: Any) -> bool:
    """Is this ``/v1/messages`` body a request of the agent loop?

    Measured on Claude Code 2.1.328 in ``-p`` mode: agent-loop requests carry
    the tool definitions (``tools`` non-empty) and a large ``max_tokens``.
    Helper requests (quota check, topic/title, summaries) carry no tools or a
    small ``max_tokens``.
    """
    if not isinstance(body, dict):
        return False
    if not body.get("tools"):
        return False
    max_tokens = body.get("max_tokens")
    return not (isinstance(max_tokens, int) and max_tokens <= SIDE_REQUEST_MAX_TOKENS)


def _estimate_tokens(body: Any) -> int:
    """A plausible input-token figure: ~4 characters a token, at least 1."""
    try:
        size = len(json.dumps(body))
    except (TypeError, ValueError):
        size = 0
    return max(1, size // 4)


class ModelServer:
    """Scripted Messages API. Use as a context manager, or call start()/stop()."""

    def __init__(self, script: list | None = None, *, final_text: str = DEFAULT_FINAL_TEXT):
        self.script: list = list(script or [])
        self.final_text = final_text
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._next_turn = 0
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- access
    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def message_requests(self) -> list[dict]:
        """Bodies of every POST /v1/messages (agent and side), in order."""
        return [r.body for r in self.requests if r.kind in ("agent", "side")]

    @property
    def agent_requests(self) -> list[dict]:
        """Bodies of the agent-loop requests, in order: request i answered turn i."""
        return [r.body for r in self.requests if r.kind == "agent"]

    @property
    def turns_consumed(self) -> int:
        return self._next_turn

    # -------------------------------------------------------------- lifecycle
    def start(self) -> ModelServer:
        server = self

        class Handler(_Handler):
            model_server = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ModelServer:  # noqa: PYI034 - no typing.Self before 3.11
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -------------------------------------------------------------- answering
    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(rec)

    def _take_turn(self, rec: RecordedRequest) -> Any:
        with self._lock:
            index = self._next_turn
            self._next_turn += 1
            rec.turn = index
            self.requests.append(rec)
        if index < len(self.script):
            return self.script[index]
        return self.final_text

    def _content_for(self, turn: Any) -> tuple[list[dict], str]:
        if isinstance(turn, str):
            return [{"type": "text", "text": turn}], "end_turn"
        if isinstance(turn, dict):
            turn = [turn]
        blocks = []
        for call in turn:
            tool_id = call.get("id") or f"toolu_e2e_{next(self._ids):04d}"
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": call["name"],
                    "input": call.get("input", {}),
                }
            )
        return blocks, "tool_use"


def _usage(body: Any, output_tokens: int) -> dict:
    return {
        "input_tokens": _estimate_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"

    # Silence the default stderr access log.
    def log_message(self, format, *args):
        pass

    # ---------------------------------------------------------------- helpers
    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_e2e_{time.monotonic_ns()}")
        self.end_headers()
        self.wfile.write(data)

    def _rec(self, body: Any, kind: str) -> RecordedRequest:
        return RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            kind=kind,
        )

    # ------------------------------------------------------------------ verbs
    def do_HEAD(self):
        self.model_server._record(self._rec(None, "other"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.model_server._record(self._rec(None, "other"))
        path = self.path.split("?", 1)[0]
        if path.startswith("/v1/models"):
            self._send_json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
        else:
            self._send_json(200, {})

    def do_POST(self):
        body = self._read_body()
        path = self.path.split("?", 1)[0]
        server = self.model_server
        if path == "/v1/messages/count_tokens":
            server._record(self._rec(body, "count_tokens"))
            self._send_json(200, {"input_tokens": _estimate_tokens(body)})
            return
        if path != "/v1/messages":
            server._record(self._rec(body, "other"))
            self._send_json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
            return
        if not isinstance(body, dict):
            server._record(self._rec(body, "other"))
            self._send_json(
                400,
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "bad json"},
                },
            )
            return

        if is_agent_request(body):
            rec = self._rec(body, "agent")
            turn = server._take_turn(rec)
            content, stop_reason = server._content_for(turn)
        else:
            server._record(self._rec(body, "side"))
            content, stop_reason = [{"type": "text", "text": server.final_text}], "end_turn"

        message = {
            "id": f"msg_e2e_{next(server._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or MODEL_FALLBACK,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": _usage(body, output_tokens=10 + 10 * len(content)),
        }
        if body.get("stream"):
            self._stream(message)
        else:
            self._send_json(200, message)

    # -------------------------------------------------------------- streaming
    def _stream(self, message: dict) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", f"req_e2e_{time.monotonic_ns()}")
        self.end_headers()
        self.close_connection = True

        def event(name: str, data: dict) -> None:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

        usage = message["usage"]
        start = dict(message, content=[], stop_reason=None, stop_sequence=None)
        start["usage"] = dict(usage, output_tokens=1)
        event("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]},
                    },
                )
            else:
                event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {
                            "type": "input_json_delta",
                            "partial_json": json.dumps(block["input"]),
                        },
                    },
                )
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        event("message_stop", {"type": "message_stop"})
        self.wfile.flush()
