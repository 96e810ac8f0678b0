"""One handler per Claude Code event: payload in, reply object (or None for silence) out."""

from __future__ import annotations

from metacog import action as actions
from metacog import config, nervous, paths, state, summary
from metacog.action import text

TASK_NOTIFICATION = "<task-notification>"  # a finished background agent, not the person


def reply(event: str, agent_text: str = "", person_text: str = "") -> dict | None:
    out: dict = {}
    if agent_text:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": agent_text}
    if person_text:
        out["systemMessage"] = person_text
    return out or None


def _settings(st: dict, payload: dict, state_dir: str) -> tuple[dict, str]:
    cwd = text(payload, "cwd")
    if st.get("cwd") != cwd or "root" not in st:
        st["cwd"], st["root"] = cwd, config.project_root(cwd)
    return config.load(paths.config_dir(), state_dir, st["root"]), st["root"]


def on_tool(payload: dict, state_dir: str, now: float, size: int) -> dict | None:
    sid = state.clean_session_id(payload.get("session_id"))
    if not sid:
        return None
    act = actions.from_tool_event(payload, now, size)
    with state.Session(state_dir, sid, now) as st:
        cfg, root = _settings(st, payload, state_dir)
        win = state.window(st, act.get("agent", ""), now)
        state.push(win, act)
        st["calls"] = st.get("calls", 0) + 1
        if not act["ok"]:
            st["errors"] = st.get("errors", 0) + 1
        ctx = nervous.Context(cfg, st, win, payload, now, state_dir, root)
        signals = nervous.feel(win, act, ctx)
        totals = summary.get(st)
        summary.observe(totals, act, win, ctx.is_main)
        for signal in signals:
            summary.fired(totals, signal.sense)
        for note in ctx.notes:
            if note["kind"] == "resolved":
                summary.lesson(totals, note)
        agent_text, person_text = nervous.compose(signals)
    return reply(text(payload, "hook_event_name"), agent_text, person_text)


def on_prompt(payload: dict, state_dir: str, now: float, size: int) -> dict | None:
    sid = state.clean_session_id(payload.get("session_id"))
    if not sid or text(payload, "prompt").lstrip().startswith(TASK_NOTIFICATION):
        return None
    with state.Session(state_dir, sid, now) as st:
        win = state.window(st, "", now)
        win["prompt_at"], win["prompt_calls"] = now, 0
        win["prompts"] = win.get("prompts", 0) + 1
        summary.get(st)["prompts"] += 1
        # The person spoke: what the senses had counted since is no longer the agent's alone.
        for name in ("vestibular", "chronos", "nociception"):
            win.get("senses", {}).pop(name, None)
    return None


def on_session_start(payload: dict, state_dir: str, now: float, size: int) -> dict | None:
    paths.remember()
    state.collect_garbage(state_dir, now)
    return None


def on_subagent_stop(payload: dict, state_dir: str, now: float, size: int) -> dict | None:
    return None


def on_session_end(payload: dict, state_dir: str, now: float, size: int) -> dict | None:
    return None


HANDLERS = {
    "PostToolUse": on_tool,
    "PostToolUseFailure": on_tool,
    "UserPromptSubmit": on_prompt,
    "SessionStart": on_session_start,
    "SubagentStop": on_subagent_stop,
    "SessionEnd": on_session_end,
}
