"""`metacog status`: what the senses read in a session, and the rules learned so far."""

from __future__ import annotations

import os
import time

from metacog import config, nervous, paths, state
from metacog.cli.common import CliError, ago, closest, one_line, optional_module
from metacog.senses import SENSES

RULE_FIELDS = ("id", "lesson", "scope", "detections", "suppressions", "confidence", "last_active")
SCAN_CAP = 500  # newest session files looked at when choosing the current one


def session_files(state_dir: str) -> list[tuple[float, str]]:
    """(mtime, session id) of every stored session, newest first."""
    found = []
    try:
        with os.scandir(state.sessions_dir(state_dir)) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(".json") or name.startswith("."):
                    continue
                try:
                    found.append((entry.stat().st_mtime, name[: -len(".json")]))
                except OSError:
                    continue
    except OSError:
        return []
    found.sort(reverse=True)
    return found


def find_session(state_dir: str, cwd: str, wanted: str | None = None) -> dict | None:
    """The session to report on: `wanted` (an id or a unique prefix of one), else the
    most recently updated session of this project, else the most recent of any."""
    files = session_files(state_dir)
    ids = [sid for _, sid in files]
    if wanted is not None:
        return _named_session(state_dir, wanted, ids)
    root = config.project_root(cwd)
    fallback = None
    for _, sid in files[:SCAN_CAP]:
        st = state.read(state_dir, sid)
        if not _usable(st):
            continue
        if st.get("root") == root:
            return st
        if fallback is None:
            fallback = st
    return fallback


def _usable(st: dict | None) -> bool:
    return isinstance(st, dict) and isinstance(st.get("windows"), dict)


def _named_session(state_dir: str, wanted: str, ids: list[str]) -> dict:
    sid = state.clean_session_id(wanted)
    if sid and sid not in ids:
        starting = [i for i in ids if i.startswith(sid)]
        if len(starting) == 1:
            sid = starting[0]
    st = state.read(state_dir, sid) if sid in ids else None
    if _usable(st):
        return st
    if not ids:
        raise CliError(f"no session {wanted!r}: no session has been recorded yet "
                       f"(in {state.sessions_dir(state_dir)})")
    near = closest(wanted, ids) or ids[:3]
    raise CliError(f"no session {wanted!r}; closest: {', '.join(near)} (run `metacog status` "
                   "without --session for the current one)")


def readings(st: dict, cfg: dict, state_dir: str, now: float) -> dict[str, str | None]:
    """Each sense's reading of the main window: '' when quiet, None when switched off."""
    windows = st.get("windows") or {}
    win = windows.get(state.MAIN)
    if not isinstance(win, dict):
        win = state.new_window(now)
    # The same Context the hook builds (events.on_tool), from what the state remembers.
    payload = {"session_id": st.get("id", ""), "cwd": st.get("cwd", "")}
    if isinstance(st.get("transcript_path"), str):
        payload["transcript_path"] = st["transcript_path"]
    ctx = nervous.Context(cfg, st, win, payload, now, state_dir, st.get("root", ""))
    out: dict[str, str | None] = {}
    for sense in SENSES:
        if not cfg.get(sense.NAME, {}).get("enabled", True):
            out[sense.NAME] = None
            continue
        try:
            out[sense.NAME] = str(sense.reading(win, ctx) or "")
        except Exception as exc:  # noqa: BLE001 - one sense's bug must not hide the others
            out[sense.NAME] = f"(no reading: {type(exc).__name__}: {one_line(exc, 120)})"
    return out


def rules(root: str, cfg: dict, now: float) -> tuple[list[dict] | None, str]:
    """(the learned rules, '') or (None, why they are not available)."""
    learning = optional_module("metacog.learning")
    if learning is None:
        return None, "this metacog has no learning module (metacog.learning)"
    found = []
    for rule in learning.rules(root, cfg, now) or []:
        if isinstance(rule, dict):
            found.append({**{key: rule.get(key) for key in RULE_FIELDS}, **rule})
    return found, ""


def collect(cwd: str, wanted: str | None = None, now: float | None = None) -> dict:
    """Everything `status` shows, as one JSON-ready object."""
    now = time.time() if now is None else now
    state_dir = paths.state_dir()
    st = find_session(state_dir, cwd, wanted)
    root = config.project_root(cwd)
    session = None
    if st is not None:
        cfg = config.load(paths.config_dir(), state_dir, st.get("root") or root)
        win = (st.get("windows") or {}).get(state.MAIN) or {}
        session = {
            "id": st.get("id", ""),
            "root": st.get("root", ""),
            "cwd": st.get("cwd", ""),
            "started": st.get("started"),
            "updated": st.get("updated"),
            "tool_calls": st.get("calls", 0),
            "errors": st.get("errors", 0),
            "prompts": win.get("prompts", 0) if isinstance(win, dict) else 0,
            "subagents": sum(1 for key in st.get("windows") or {} if key != state.MAIN),
            "senses": readings(st, cfg, state_dir, now),
        }
    cfg = config.load(paths.config_dir(), state_dir, root)
    found, why = rules(root, cfg, now)
    report = {"project": root, "session": session, "rules": found or []}
    if found is None:
        report["rules_unavailable"] = why
    return report


def render(report: dict, now: float | None = None) -> str:
    lines = []
    session = report["session"]
    if session is None:
        lines.append("No session recorded yet: metacog starts reading once a Claude Code "
                     "session with the plugin makes a tool call.")
    else:
        where = f" in {session['root']}" if session.get("root") else ""
        lines.append(f"Session {session['id']}{where}, updated {ago(session.get('updated'), now)}")
        calls, errors = session["tool_calls"], session["errors"]
        extra = f", {session['subagents']} subagent(s)" if session.get("subagents") else ""
        lines.append(f"  {calls} tool call{'s' if calls != 1 else ''}, {errors} error"
                     f"{'s' if errors != 1 else ''}, {session['prompts']} prompt(s){extra}")
        lines.append("Senses")
        width = max(len(name) for name in session["senses"]) if session["senses"] else 0
        for name, value in session["senses"].items():
            shown = "off" if value is None else value or "quiet"
            lines.append(f"  {name:<{width}}  {shown}")
    lines.extend(render_rules(report, now))
    return "\n".join(lines)


def render_rules(report: dict, now: float | None = None) -> list[str]:
    if report.get("rules_unavailable"):
        return [f"Rules: not available ({report['rules_unavailable']})"]
    found = report["rules"]
    if not found:
        return ["Rules: none learned yet"]
    lines = [f"Rules ({len(found)})"]
    for rule in found:
        detections, suppressions = _count(rule.get("detections")), _count(rule.get("suppressions"))
        confidence = rule.get("confidence")
        conf = f"confidence {confidence:.2f}" if isinstance(confidence, (int, float)) else "confidence -"
        lines.append(f"  {rule.get('id')}  [{rule.get('scope') or '-'}]  {conf}  "
                     f"{detections} detection{'s' if detections != 1 else ''}, "
                     f"{suppressions} suppression{'s' if suppressions != 1 else ''}  "
                     f"last active {ago(rule.get('last_active'), now)}")
        if rule.get("lesson"):
            lines.append(f"      {one_line(rule['lesson'], 400)}")
    return lines


def _count(value: object) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple)):
        return len(value)
    return 0
