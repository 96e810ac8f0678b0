"""Reflex over the shared history: each project's sessions replayed in the order recorded, learning on.

    python benchmarks/bench_recall.py [TRANSCRIPTS_DIR] [--json]

The transcripts (../shared/transcripts, not shipped) are grouped by project (the name
before the first `__`) and each group is replayed, oldest session first, through the real
hook (metacog.hook.handle) under one temporary METACOG_HOME per project, with learning on:
SessionStart, the prompts and tool calls (metacog.replay's timeline), SessionEnd. Each
session's working directory is mapped to one scratch project folder per project (so the
stores land there, and never under the recorded paths), and every session gets its own id.

Then, for every resolution recalled ("this error was resolved here ..."): whether the agent
then resolved that problem in the same session by editing a file the recall named (the
problem's next resolution, as Reflex itself extracts it: files edited between its last
failure and the pass of the same call). precision = such recalls / resolution recalls.
Also: the "never resolved" lines, the rule lines, Reflex's lines per 100 main-agent calls
on the sessions LABELS.jsonl marks quiet (counted as benchmarks/score_labels.py counts),
and how many land inside a labelled progress stretch.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from score_labels import entries

from metacog import hook, state
from metacog.learning import resolutions
from metacog.replay import _epoch, _lines, _Timeline, open_transcript

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"
RULE = "a lesson learned in this project applies now"
FILES = re.compile(r"(?:an edit of|edits of) (.+?), then `")


def first_seen(path: Path) -> tuple[float, str]:
    """(time of the first timestamped line, the first cwd) of one transcript."""
    when, cwd = 0.0, ""
    for entry in entries(path):
        if not when and isinstance(entry.get("timestamp"), str):
            when = _epoch(entry["timestamp"], 0.0)
        if not cwd and isinstance(entry.get("cwd"), str):
            cwd = entry["cwd"]
        if when and cwd:
            break
    return when, cwd


def reflex_told(state_dir: str, sid: str) -> dict[str, list]:
    st = state.read(state_dir, sid) or {}
    out = {}
    for name, win in (st.get("windows") or {}).items():
        mem = ((win or {}).get("senses") or {}).get("reflex") or {}
        out[name] = list(mem.get("told") or [])
    return out


def reflex_done(state_dir: str, sid: str) -> dict[str, list[str]]:
    st = state.read(state_dir, sid) or {}
    out: dict[str, list[str]] = {}
    for win in (st.get("windows") or {}).values():
        mem = ((win or {}).get("senses") or {}).get("reflex") or {}
        for key, fix in (mem.get("done") or {}).items():
            out[key] = list(fix.get("files") or [])
    return out


def replay_session(path: Path, sid: str, cwd: str, fake: str, state_dir: str) -> dict:
    """One session through the hook; Reflex's lines and what became of the recalled problems."""
    lines, calls = [], 0
    timeline = _Timeline()
    fh, size = open_transcript(str(path))
    old, new = cwd.encode(), fake.encode()
    with (
        fh,
        tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as out,
    ):
        scratch = out.name
        started = False
        for raw, _ in _lines(fh, size):
            raw = raw.replace(old, new) if old else raw
            out.write(raw)
            payloads = timeline.feed(raw.decode("utf-8", "replace"))
            timeline.refused.clear()
            timeline.said.clear()
            timeline.ahead.clear()  # no PostToolBatch here: the transcript tells the refusals
            if payloads:
                out.flush()
            for payload in payloads:
                now = payload.pop("_ts")
                payload.update(session_id=sid, transcript_path=scratch, cwd=fake)
                if not started:
                    started = True
                    start = {"hook_event_name": "SessionStart", "source": "startup"}
                    hook.handle(
                        json.dumps({**payload, **start}).encode(), state_dir=state_dir, now=now
                    )
                before = reflex_told(state_dir, sid)
                reply = hook.handle(json.dumps(payload).encode(), state_dir=state_dir, now=now)
                if payload["hook_event_name"].startswith("PostToolUse"):
                    calls += 1
                text = ""
                if reply:
                    body = json.loads(reply)
                    text = (body.get("hookSpecificOutput") or {}).get("additionalContext", "")
                keys = [
                    key
                    for window, told in reflex_told(state_dir, sid).items()
                    for key in told[len(before.get(window, [])) :]
                ]
                if keys or RULE in text:
                    key = keys[0] if keys else ""
                    lines.append({"call": calls, "key": key, "text": text, "kind": "recall"})
        end_at = timeline.clock
    done = reflex_done(state_dir, sid)
    end = {"hook_event_name": "SessionEnd", "session_id": sid, "cwd": fake, "reason": "other"}
    end["transcript_path"] = scratch
    hook.handle(json.dumps(end).encode(), state_dir=state_dir, now=end_at)
    os.unlink(scratch)
    for line in lines:
        if line["kind"] != "recall":
            continue
        found = FILES.search(line["text"])
        line["named"] = [f.strip() for f in found.group(1).split(",")] if found else []
        line["resolved_with"] = done.get(line["key"])
        line["rule"] = RULE in line["text"]
        line["kind"] = (
            "resolution" if found else "unresolved" if "never resolved" in line["text"] else "rule"
        )
    return {"calls": calls, "lines": lines}


def run(folder: Path) -> dict:
    labels = [json.loads(x) for x in (folder / "LABELS.jsonl").read_text().splitlines() if x]
    quiet = {lab["file"] for lab in labels if lab["type"] == "session" and lab.get("quiet")}
    progress: dict[str, list[tuple[int, int]]] = {}
    for lab in labels:
        if lab["type"] == "progress":
            progress.setdefault(lab["file"], []).append((lab["speak_at"], lab["end"]))
    groups: dict[str, list[tuple[float, Path, str]]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        if path.name == "LABELS.jsonl":
            continue
        when, cwd = first_seen(path)
        groups.setdefault(path.name.split("__", 1)[0], []).append((when, path, cwd))
    from score_labels import main_thread_calls

    result = {"projects": 0, "sessions": 0, "calls": 0, "resolution": [], "unresolved": 0}
    result["quiet_names"] = sorted(quiet)
    result.update(rule=0, stored=0, quiet_calls=0, quiet_lines=0, in_progress=0, lines=[])
    saved = os.environ.get("METACOG_HOME")
    for project, sessions in sorted(groups.items()):
        result["projects"] += 1
        with tempfile.TemporaryDirectory(prefix="bench-recall-") as home:
            os.environ["METACOG_HOME"] = os.path.join(home, "mc")
            fake = os.path.join(home, project.replace("+", "-"))
            os.makedirs(os.path.join(fake, ".git"))
            state_dir = os.path.join(home, "mc", "state")
            try:
                for n, (_, path, cwd) in enumerate(sorted(sessions, key=lambda s: s[0])):
                    out = replay_session(path, f"s{n}", cwd, fake, state_dir)
                    result["sessions"] += 1
                    result["calls"] += out["calls"]
                    mapping = main_thread_calls(path)
                    for line in out["lines"]:
                        line["file"] = path.name
                        result["lines"].append(line)
                        if line["kind"] == "resolution":
                            result["resolution"].append(line)
                        elif line["kind"] == "unresolved":
                            result["unresolved"] += 1
                        result["rule"] += line["rule"]
                        at = mapping[line["call"] - 1][0] if 0 < line["call"] <= len(mapping) else 0
                        line["progress"] = any(a <= at <= b for a, b in progress.get(path.name, []))
                        result["in_progress"] += line["progress"]
                    if path.name in quiet:  # as score_labels.py counts: the main agent's
                        result["quiet_calls"] += mapping[-1][0] if mapping else 0
                        result["quiet_lines"] += sum(
                            1
                            for line in out["lines"]
                            if 0 < line["call"] <= len(mapping) and mapping[line["call"] - 1][1]
                        )
                problems = resolutions._load(resolutions.path_for(fake), fake) or {}
                result["stored"] += sum(1 for p in problems.values() if p.get("fix"))
            finally:
                if saved is None:
                    os.environ.pop("METACOG_HOME", None)
                else:
                    os.environ["METACOG_HOME"] = saved
    hits = [r for r in result["resolution"] if set(r["named"]) & set(r.get("resolved_with") or [])]
    fired = len(result["resolution"])
    result["hits"] = len(hits)
    result["resolved_after"] = sum(1 for r in result["resolution"] if r.get("resolved_with"))
    result["precision"] = round(len(hits) / fired, 2) if fired else None
    q = result["quiet_calls"]
    result["quiet_per_100"] = round(100 * result["quiet_lines"] / q, 3) if q else 0.0
    return result


def report(r: dict) -> str:
    lines = [
        f"{r['projects']} projects, {r['sessions']} sessions, {r['calls']} tool calls; "
        f"resolutions remembered: {r['stored']}",
        f"resolution recalls: {len(r['resolution'])}; then resolved in the session: "
        f"{r['resolved_after']}; by editing a file the recall named: {r['hits']} "
        f"(precision {r['precision']})",
        f"'never resolved' lines: {r['unresolved']}; rule lines: {r['rule']}",
        f"on quiet sessions: {r['quiet_lines']} lines in {r['quiet_calls']} main-agent calls = "
        f"{r['quiet_per_100']:.3f} per 100 calls; inside progress stretches: {r['in_progress']}",
    ]
    for line in r["lines"]:
        quiet = " (quiet)" if line["file"] in r["quiet_names"] else ""
        quiet += " (in a progress stretch)" if line.get("progress") else ""
        lines.append(
            f"  {line['file'][:40] + ' ' + line['file'][-14:-6]}{quiet} call {line['call']}: {line['text'][9:150]}"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    folder = Path(args[0]) if args else DEFAULT_DIR
    if not (folder / "LABELS.jsonl").is_file():
        print(f"no transcripts at {folder} (LABELS.jsonl missing)", file=sys.stderr)
        return 2
    result = run(folder)
    if "--json" in argv:
        print(json.dumps({k: v for k, v in result.items() if k != "lines"}, indent=1))
    else:
        print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
