"""Drive the hook in-process: payload in, parsed reply out."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from metacog import hook, paths

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED = [
    json.loads(line) for line in (FIXTURES / "hook-inputs-2.1.328.jsonl").read_text().splitlines()
]


def captured(event: str, tool: str | None = None, **changes: object) -> dict:
    """A deep copy of the first captured payload of that event (and tool), with changes."""
    for payload in CAPTURED:
        if payload["hook_event_name"] == event and (
            tool is None or payload.get("tool_name") == tool
        ):
            out = copy.deepcopy(payload)
            out.update(changes)
            return out
    raise LookupError(f"no captured {event} {tool}")


def send(payload: dict | bytes, now: float | None = None) -> dict | None:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    out = hook.handle(raw, state_dir=paths.state_dir(), now=now)
    return json.loads(out) if out else None


def senses_off(home: Path, *names: str) -> None:
    """The global settings of the metacog home `home` with these senses off: a test of one
    sense on calls that others also speak of."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text("".join(f"[{n}]\nenabled = false\n" for n in names))


def agent_text(reply: dict | None) -> str:
    if not reply:
        return ""
    return reply.get("hookSpecificOutput", {}).get("additionalContext", "")


# Real-shaped tool calls built from the captured payloads, for the senses' tests.


def bash(command: str, stdout: str = "ok", stderr: str = "", **extra: object) -> dict:
    payload = captured(
        "PostToolUse",
        "Bash",
        tool_input={"command": command, "description": "x"},
        tool_response={
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        },
    )
    payload.update(extra)
    return payload


def failed(command: str, error: str) -> dict:
    return captured(
        "PostToolUseFailure",
        "Bash",
        error=error,
        tool_input={"command": command, "description": "x"},
    )


def read(path: str, content: str = "x = 1\n", **extra: object) -> dict:
    payload = captured("PostToolUse", "Read", tool_input={"file_path": path})
    payload["tool_response"]["file"].update(filePath=path, content=content)
    payload.update(extra)
    return payload


def edit(path: str, n: int = 0) -> dict:
    payload = captured("PostToolUse", "Edit")
    payload["tool_input"].update(file_path=path, new_string=f"return {n}")
    payload["tool_response"]["filePath"] = path
    return payload


def prompt(text: str) -> dict:
    return captured("UserPromptSubmit", prompt=text)


def refused(tool: str, error: str, **tool_input: object) -> dict:
    """A call of any tool that failed with `error` (blocked, rejected, not found…)."""
    payload = captured("PostToolUseFailure", "Bash", error=error, tool_input=tool_input)
    payload["tool_name"] = tool
    return payload


def grep(pattern: str, found: int = 0) -> dict:
    return captured(
        "PostToolUse",
        "Grep",
        tool_input={"pattern": pattern, "path": "/home/dev/project"},
        tool_response={
            "mode": "files_with_matches",
            "filenames": ["src/app.py"] * found,
            "numFiles": found,
        },
    )


BLOCKED = "Permission to use {tool} has been denied. IMPORTANT: You *may* attempt to accomplish this action using other tools"


# Sequences: what the agent heard after each call of one.

T0 = 1_800_000_000.0


def said(payloads: list[dict]) -> list[str]:
    return [agent_text(send(p, now=T0 + i)) for i, p in enumerate(payloads)]


def texts(payloads: list[dict], start: float = T0, step: float = 1.0) -> list[str]:
    return [agent_text(send(p, now=start + i * step)) for i, p in enumerate(payloads)]
