"""One hook call as metacog reads it: the payload taken apart once, at the boundary.

Claude Code's payload is hostile until cleaned: any field may be missing, of another type,
or hold a NUL (which makes os calls raise). Each field is read here, tolerantly, into a
plain value; nothing below metacog.hook digs in the raw dict. A plain class with slots,
not a dataclass: `dataclasses` imports `inspect`, a cost every direct call would pay.
"""

from __future__ import annotations

from metacog.state import clean_session_id

# Failures that are the person's doing (a refusal, an interrupt), not the agent's.
PERSON_REFUSED = ("The user doesn't want to proceed", "[Request interrupted by user")


def text(payload: object, key: str) -> str:
    """A string field, or '' (absent, another type, or holding NUL, which no path or
    command contains and which makes os calls raise)."""
    value = payload.get(key) if isinstance(payload, dict) else None
    return value if isinstance(value, str) and "\x00" not in value else ""


def words(payload: object, key: str) -> str:
    """A string field that is text to read, not a path: a NUL in it is replaced, not fatal
    (a failing command's output may hold one)."""
    value = payload.get(key) if isinstance(payload, dict) else None
    return value.replace("\x00", "?") if isinstance(value, str) else ""


def mapping(payload: object, key: str) -> dict:
    value = payload.get(key) if isinstance(payload, dict) else None
    return value if isinstance(value, dict) else {}


BATCH_CAP = 64  # calls of one PostToolBatch read at most: a model sends a handful at once


def batch(payload: object) -> tuple[tuple[str, dict, str, str], ...]:
    """A PostToolBatch's `tool_calls` (FACTS.md): (tool name, tool input, tool_use id, the
    response's text, '' where it is not text) for each call of the batch, refused ones
    included."""
    calls = payload.get("tool_calls") if isinstance(payload, dict) else None
    return tuple(
        (
            text(call, "tool_name") or "?",
            mapping(call, "tool_input"),
            text(call, "tool_use_id")[:80],
            words(call, "tool_response"),
        )
        for call in (calls[:BATCH_CAP] if isinstance(calls, list) else ())
        if isinstance(call, dict)
    )


class Event:
    """What one hook call says. `error` is set for PostToolUseFailure only; `interrupted`
    when the person stopped or refused the call (then it is not the agent's failure);
    `calls` for PostToolBatch only."""

    __slots__ = (
        "agent",
        "agent_type",
        "calls",
        "cwd",
        "duration_ms",
        "error",
        "failed",
        "interrupted",
        "message",
        "name",
        "prompt",
        "response",
        "session",
        "size",
        "source",
        "stop_active",
        "sub_transcript",
        "tool",
        "tool_input",
        "tool_use_id",
        "transcript",
    )

    def __init__(self, payload: dict, size: int = 0) -> None:
        self.name = text(payload, "hook_event_name")
        self.session = clean_session_id(payload.get("session_id"))
        self.cwd = text(payload, "cwd")
        self.transcript = text(payload, "transcript_path")
        self.tool = text(payload, "tool_name") or "?"
        self.tool_input = mapping(payload, "tool_input")
        self.tool_use_id = text(payload, "tool_use_id")[:80]
        self.response = payload.get("tool_response")
        self.failed = self.name == "PostToolUseFailure"
        error = words(payload, "error")
        self.interrupted = payload.get("is_interrupt") is True or error.startswith(PERSON_REFUSED)
        if self.interrupted:
            # Not the agent's error, but an obstacle it meets again when it tries the same
            # end another way, or starts the same hanging command again (issue 17, class 2):
            # kept as the person's words alone, which metacog.perception.symptoms names as a mistake.
            self.failed = True
            error = next((w for w in PERSON_REFUSED if error.startswith(w)), PERSON_REFUSED[1])
        elif self.failed:
            error = error or "tool failed"
        self.error = error
        self.agent = text(payload, "agent_id")[:64]
        self.agent_type = text(payload, "agent_type")
        self.prompt = words(payload, "prompt")
        self.source = text(payload, "source")
        # Stop and SubagentStop (FACTS.md): the turn's final text, and whether a Stop hook
        # already kept this turn going (then nothing more is said: a hook never traps a turn).
        self.message = words(payload, "last_assistant_message")
        self.stop_active = payload.get("stop_hook_active") is True
        self.sub_transcript = text(payload, "agent_transcript_path")
        duration = payload.get("duration_ms")
        # Bounded: a hostile 10**400 would overflow float(), infinity would swallow any gap.
        self.duration_ms = (
            float(duration)
            if isinstance(duration, (int, float))
            and not isinstance(duration, bool)
            and 0 < duration < 1e12
            else 0.0
        )
        self.calls = batch(payload) if self.name == "PostToolBatch" else ()
        self.size = size
