"""Replay a recorded transcript through the real hook, offline: what would metacog have said?

Each tool result in the transcript becomes the hook payload Claude Code 2.1.328 would
have sent (PostToolUse, or PostToolUseFailure for an error), each person's prompt a
UserPromptSubmit, all through `metacog.hook.handle` with the transcript's own
timestamps. The transcript is re-written progressively into a scratch file that the
hook reads as its `transcript_path`, so context usage and refused calls (which fire
no hook: FACTS.md) reach the senses exactly as they would live. State goes to a
temporary METACOG_HOME; nothing of the person's is touched.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from datetime import datetime

from metacog import hook, state
from metacog.senses import SENSES
from metacog.transcript import content_text

REFUSED = "<tool_use_error>"


def _epoch(stamp: object, fallback: float) -> float:
    if not isinstance(stamp, str):
        return fallback
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return fallback


def _prompt(entry: dict) -> str | None:
    """The person's words on a user line, or None for tool results and meta lines."""
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = content_text(content, "\n")
    return content if isinstance(content, str) and content.strip() else None


def events(lines: list[str]) -> list[tuple[int, dict]]:
    """(line index after which the hook fires, payload) for one transcript."""
    calls: dict[str, dict] = {}
    out: list[tuple[int, dict]] = []
    session = "replay"
    clock = 0.0
    for index, line in enumerate(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        clock = _epoch(entry.get("timestamp"), clock)
        session = entry.get("sessionId") or session
        base = {"session_id": "replay", "transcript_path": "", "cwd": entry.get("cwd") or "",
                "_ts": clock}
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        agent = {"agent_id": "sidechain", "agent_type": "subagent"} if entry.get("isSidechain") else {}
        content = message.get("content") if isinstance(message.get("content"), list) else []
        if entry.get("type") == "assistant":
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = block
        elif entry.get("type") == "user":
            prompt = _prompt(entry)
            if prompt is not None and not agent:
                out.append((index, {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}))
                continue
            for block in content:
                if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                    continue
                call = calls.pop(str(block.get("tool_use_id")), None) or {}
                result = content_text(block.get("content"), "\n")
                if block.get("is_error") and result.lstrip().startswith(REFUSED):
                    continue  # refused before running: no hook, the transcript tells the hook
                payload = {**base, **agent, "tool_name": call.get("name", "?"),
                           "tool_input": call.get("input") if isinstance(call.get("input"), dict) else {},
                           "tool_use_id": block.get("tool_use_id")}
                if block.get("is_error"):
                    payload.update(hook_event_name="PostToolUseFailure", error=result,
                                   is_interrupt=result.startswith("[Request interrupted by user"))
                else:
                    structured = entry.get("toolUseResult")
                    payload.update(hook_event_name="PostToolUse",
                                   tool_response=structured if isinstance(structured, dict) else {"output": result})
                out.append((index, payload))
    return out


def replay(path: str, cfg: dict | None = None, progress: Callable[[int, int], None] | None = None) -> dict:
    """The timeline of what metacog would have said over one recorded transcript.

    `cfg` is accepted for callers that pass effective settings; the replay reads the
    same config files as the live hook (under its temporary home, so: defaults,
    unless METACOG_REPLAY_CONFIG names a TOML file to use).
    """
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    timeline = events(lines)
    signals: list[dict] = []
    tool_calls = 0
    saved = {k: os.environ.get(k) for k in ("METACOG_HOME",)}
    with tempfile.TemporaryDirectory(prefix="metacog-replay-") as home:
        os.environ["METACOG_HOME"] = home
        try:
            if cfg:
                _write_config(os.path.join(home, "config", "config.toml"), cfg)
            state_dir = os.path.join(home, "state")
            scratch = os.path.join(home, "transcript.jsonl")
            written = 0
            with open(scratch, "w", encoding="utf-8") as out:
                for n, (index, payload) in enumerate(timeline):
                    out.write("\n".join(lines[written:index + 1]) + "\n" if index + 1 > written else "")
                    out.flush()
                    written = max(written, index + 1)
                    payload["transcript_path"] = scratch
                    now = payload.pop("_ts")
                    before = _fired(state_dir)
                    raw = json.dumps(payload).encode()
                    reply = hook.handle(raw, state_dir=state_dir, now=now)
                    if payload["hook_event_name"].startswith("PostToolUse"):
                        tool_calls += 1
                    if reply:
                        fired = _fired(state_dir)
                        senses = [s for s in fired if fired[s] > before.get(s, 0)] or ["note"]
                        body = json.loads(reply)
                        text = (body.get("hookSpecificOutput") or {}).get("additionalContext", "")
                        signals.append({"call": tool_calls, "sense": "+".join(senses), "text": text,
                                        "person": body.get("systemMessage", "")})
                    if progress:
                        progress(n + 1, len(timeline))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    per_sense = {sense.NAME: 0 for sense in SENSES}
    for signal in signals:
        for sense in signal["sense"].split("+"):
            per_sense[sense] = per_sense.get(sense, 0) + 1
    per_100 = {k: round(v * 100 / tool_calls, 2) if tool_calls else 0.0 for k, v in per_sense.items()}
    return {"file": path, "tool_calls": tool_calls, "signals": signals, "per_sense": per_sense,
            "per_100_calls": per_100}


def _fired(state_dir: str) -> dict:
    st = state.read(state_dir, "replay") or {}
    return dict((st.get("summary") or {}).get("fired") or {})


def _write_config(path: str, cfg: dict) -> None:
    import tomli_w

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        tomli_w.dump(cfg, fh)
