"""`metacog status`: what the senses read in a session, and the rules learned so far."""

from __future__ import annotations

import os
import time

from metacog import config, facts, learning, nervous, paths, schema, state
from metacog.cli.common import CliError, ago, closest, command, log_bug, one_line
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


def find_session(state_dir: str, cwd: str, wanted: str | None = None) -> tuple[dict | None, str]:
    """The session to report on, and how it was chosen: `wanted` (an id or a unique prefix
    of one: "named"), else this project's latest session that made a tool call ("latest";
    `/metacog status` as a session's first prompt makes that session, empty, the newest),
    else this project's latest ("latest"). With none of this project: the latest of any
    project, "elsewhere", which status names but does not show as this project's."""
    files = session_files(state_dir)
    if wanted is not None:
        return _named_session(state_dir, wanted, [sid for _, sid in files]), "named"
    root = config.project_root(cwd)
    states = [st for _, sid in files[:SCAN_CAP] if _usable(st := state.read(state_dir, sid))]
    if not states:
        return None, ""
    ours = [st for st in states if st.get("root") == root]
    if ours:
        worked = [st for st in ours if _calls(st)]
        return max(worked or ours, key=_updated), "latest"
    worked = [st for st in states if _calls(st)]
    return max(worked or states, key=_updated), "elsewhere"


def _calls(st: dict) -> int:
    value = st.get("calls")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _updated(st: dict) -> float:
    value = st.get("updated")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


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
        raise CliError(
            f"no session {wanted!r}: no session has been recorded yet "
            f"(in {state.sessions_dir(state_dir)})",
            code=2,
        )
    near = closest(wanted, ids)
    hint = f"closest: {', '.join(near)}" if near else f"most recent: {', '.join(ids[:3])}"
    raise CliError(
        f"no session {wanted!r}; {hint} (`{command('status')}` alone shows this project's latest)",
        code=2,
    )


def readings(st: dict, cfg: dict, state_dir: str, now: float) -> dict[str, str | None]:
    """Each sense's reading of the main window: '' when quiet, None when switched off."""
    windows = st.get("windows") or {}
    win = windows.get(state.MAIN)
    if not isinstance(win, dict):
        win = state.new_window(now)
    # The Context the hook builds, without a call: the facts as the window holds them.
    ctx = nervous.Context(cfg, st, win, None, now, state_dir, st.get("root", ""))
    facts.recall(ctx)
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


def rules(root: str, cfg: dict, now: float) -> tuple[list[dict] | None, str, list[str]]:
    """(the learned rules, '', what kept part of the stores from being read), or
    (None, why reading them failed, []): a failure here must not hide the session."""
    doing = "learning.rules"
    try:
        listed = learning.rules(root, cfg, now)
        found = [{**{key: rule[key] for key in RULE_FIELDS}, **rule} for rule in listed]
        doing = "learning.health"
        health = learning.health(root)
    except Exception as exc:  # noqa: BLE001 - the session's readings are still worth showing
        where = log_bug(exc, doing)
        return None, f"reading them failed: {type(exc).__name__}: {one_line(exc, 160)}{where}", []
    return found, "", unread(health)


def unread(health: dict) -> list[str]:
    """One phrase per store that `learning.rules` could not read whole (from learning.health).

    Not logged: a broken store is the person's to fix, and `metacog doctor` reads it
    directly; the log is for metacog's own failures.
    """
    out = []
    for scope in learning.SCOPES:
        entry = health[scope]
        if entry["refused"]:
            out.append(f"{scope} store {entry['path']} not read: {entry['refused']}")
            continue
        if entry["corrupt"]:
            out.append(
                f"{scope} store {entry['path']}: {entry['corrupt']} unreadable line(s) skipped"
            )
        if entry["truncated"]:
            out.append(f"{scope} store {entry['path']} is too large: only its beginning was read")
    return out


def collect(cwd: str, wanted: str | None = None, now: float | None = None) -> dict:
    """Everything `status` shows, as one JSON-ready object."""
    now = time.time() if now is None else now
    state_dir = paths.state_dir()
    st, chosen = find_session(state_dir, cwd, wanted)
    here = config.project_root(cwd)
    elsewhere = None
    if chosen == "elsewhere" and st is not None:
        elsewhere = {
            "id": st.get("id", ""),
            "root": st.get("root", ""),
            "updated": st.get("updated"),
        }
        st = None
    # One project throughout: a named session's own, else this folder's.
    root = (
        st.get("root")
        if st is not None and isinstance(st.get("root"), str) and st.get("root")
        else here
    )
    session = None
    if st is not None:
        cfg = schema.load(paths.config_dir(), root)
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
    cfg = schema.load(paths.config_dir(), root)
    found, why, unread_stores = rules(root, cfg, now)
    report = {
        "project": root,
        "chosen": chosen,
        "session": session,
        "latest_elsewhere": elsewhere,
        "rules": found or [],
        "unread_stores": unread_stores,
    }
    if found is None:
        report["rules_unavailable"] = why
    return report


def feels(sense: object) -> str:
    """What a sense feels, in plain words: the first line of its docstring past its name (the
    original names, O2 or Chronos, say nothing by themselves)."""
    doc = (getattr(sense, "__doc__", None) or "").strip().splitlines()
    return doc[0].split(": ", 1)[-1].rstrip(".") if doc else ""


def render(report: dict, now: float | None = None) -> str:
    lines = []
    session = report["session"]
    lines.append(f"Project {report['project']}")
    other = report.get("latest_elsewhere")
    if session is None and other:
        lines.append(
            f"No session of this project recorded yet; the latest, {other['id']}, ran in {other['root']} "
            f"({ago(other.get('updated'), now)}; `{command('status --session ' + other['id'])}` shows it)"
        )
    elif session is None:
        lines.append(
            "No session recorded yet: metacog starts reading once a Claude Code "
            "session with the plugin makes a tool call."
        )
    else:
        which = " (this project's latest)" if report.get("chosen") == "latest" else ""
        lines.append(f"Session {session['id']}{which}, updated {ago(session.get('updated'), now)}")
        calls, errors = session["tool_calls"], session["errors"]
        extra = f", {session['subagents']} subagent(s)" if session.get("subagents") else ""
        lines.append(
            f"  {calls} tool call{'s' if calls != 1 else ''}, {errors} error"
            f"{'s' if errors != 1 else ''}, {session['prompts']} prompt(s){extra}"
        )
        lines.append("Senses")
        width = max(len(name) for name in session["senses"]) if session["senses"] else 0
        feel = {sense.NAME: feels(sense) for sense in SENSES}
        for name, value in session["senses"].items():
            shown = "off" if value is None else value or "quiet"
            lines.append(f"  {name:<{width}}  {shown}  ({feel.get(name, '')})")
    lines.extend(render_rules(report, now))
    return "\n".join(lines)


def render_rules(report: dict, now: float | None = None) -> list[str]:
    if report.get("rules_unavailable"):
        return [f"Rules: not available: {report['rules_unavailable']}"]
    found = report["rules"]
    lines = [f"Rules ({len(found)})" if found else "Rules: none learned yet"]
    if report["unread_stores"]:
        lines.append(
            f"  not all evidence was read: {'; '.join(report['unread_stores'])} "
            f"(`{command('doctor')}` says what to do)"
        )
    for rule in found:
        detections, suppressions = rule["detections"], rule["suppressions"]
        # The digest's words (seen: the pattern formed; held: its situation arose and it did not).
        lines.append(
            f"  {rule['id']}  [{rule['scope']}]  confidence {rule['confidence']:.2f}  "
            f"seen {detections}×, held {suppressions}×  last active {ago(rule['last_active'], now)}"
        )
        lines.append(f"      {one_line(rule['lesson'], 400)}")
    return lines
