"""Drive the hook in-process: payload in, parsed reply out."""

from __future__ import annotations

import json

from metacog import hook, paths


def send(payload: dict | bytes, now: float | None = None) -> dict | None:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    out = hook.handle(raw, state_dir=paths.state_dir(), now=now)
    return json.loads(out) if out else None


def agent_text(reply: dict | None) -> str:
    if not reply:
        return ""
    return reply.get("hookSpecificOutput", {}).get("additionalContext", "")
