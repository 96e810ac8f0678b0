"""Score the turn end (metacog/turn_end.py) against the claims readers labelled: replay every
session read for claims through the real hook, a Stop at each turn end, and compare.

    python benchmarks/bench_claims.py [TRANSCRIPTS_DIR] [--json] [--texts]
    python benchmarks/bench_claims.py --hook   (the Stop through hooks/run.sh, against a bare start)
    python benchmarks/bench_claims.py --unread (what it says in the sessions not read for claims)
    python benchmarks/bench_claims.py --loro   (each repository scored as the one left out)

The sessions and their labels (CLAIMS.jsonl, protocol in LABELS.md's last section) live
beside this repository in ../shared/transcripts. A turn end is the main agent's last message
before the person's next prompt, or the file's end (metacog.replay fires Stop there with that
message); it is placed after the main-thread call the turn ended with, numbered as LABELS.md
says, which is a claim's `at`. Then:

- a claim is caught when the Stop at its turn end speaks, and the text names the contradicting
  check (the command of `check_at`, or another run of the same command, or its file);
- every Stop that spoke at a turn end with no claim is a false stop (per 100 turn ends), and
  its text is listed (`--texts` lists every text said);
- per repository: the same figures; `--loro` scores each repository as the one left out,
  with whatever is fitted chosen on the others. Nothing in metacog/turn_end.py is fitted to the
  labels (no threshold is learned from them), so each held-out figure is its in-sample one;
  `--loro` says so and prints, besides, the totals without each repository (what the rules
  score where they were not read);
- the Stop path's time: each Stop handler call's time during the replays, as a ratio to a bare
  interpreter start measured in the same run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.score_labels import entries
from metacog import handlers
from metacog.perception.act import unheredoc
from metacog.replay import replay

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"


def repository(name: str) -> str:
    return name.split("__", 1)[0].replace("+", "/")


def commands(path: Path) -> dict[int, str]:
    """Each main-thread call's command (or file), by its LABELS.md number."""
    inputs: dict[str, str] = {}
    out: dict[int, str] = {}
    n = 0
    for entry in entries(path):
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        content = message.get("content") if isinstance(message.get("content"), list) else []
        for block in content:
            if not isinstance(block, dict):
                continue
            if entry.get("type") == "assistant" and block.get("type") == "tool_use":
                given = block.get("input") if isinstance(block.get("input"), dict) else {}
                inputs[str(block.get("id"))] = str(
                    given.get("command") or given.get("file_path") or block.get("name")
                )
            elif entry.get("type") == "user" and block.get("type") == "tool_result":
                known = inputs.pop(str(block.get("tool_use_id")), None)
                if known is not None and not entry.get("isSidechain"):
                    n += 1
                    out[n] = known
    return out


def quoted(text: str) -> str:
    """The first thing a text quotes: the check it names."""
    parts = text.split("`")
    return parts[1].rstrip("…") if len(parts) > 2 else ""


def names_check(text: str, command: str) -> bool:
    said = " ".join(quoted(text).split())
    if not said:
        return False
    shown = " ".join(unheredoc(command).split())  # the text quotes a command without its heredocs
    return shown.startswith(said) or shown.rsplit("/", 1)[-1] == said


def bare_start() -> float:
    """The median wall time of a bare interpreter start (`python -I -c pass`), in seconds."""
    times = []
    for _ in range(15):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def through_hook(transcript: Path, runs: int) -> None:
    """A Stop through the exact hooks.json command (the direct path and the resident one), on
    `transcript` (a long real session: the end read is its last READ_CAP bytes), interleaved
    with a bare start of the runtime's interpreter."""
    import os

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from common import interleaved, report, runtime

    stop = json.loads(
        (ROOT / "tests" / "fixtures" / "stop-inputs-2.1.328.jsonl").read_text().splitlines()[0]
    )
    stop.update(
        transcript_path=str(transcript), cwd=str(transcript.parent), session_id="bench-stop"
    )
    with runtime() as (python, data, home):
        env = {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "METACOG_HOME": str(home)}
        for var in ("METACOG_DISABLE", "METACOG_RESIDENT"):
            env.pop(var, None)
        hook = ["sh", str(ROOT / "hooks" / "run.sh")]
        start = {
            "hook_event_name": "SessionStart",
            "session_id": "bench-stop",
            "cwd": str(transcript.parent),
            "source": "startup",
        }
        subprocess.run(
            [*hook, "session-start"], input=json.dumps(start).encode(), env=env, check=True
        )
        time.sleep(1)  # the resident process starts after the reply
        raw = json.dumps(stop).encode()
        cases = {
            "bare": ([str(python), "-c", "pass"], b""),
            "stop": (hook, raw),
            "stop-direct": (hook, raw, {"METACOG_RESIDENT": "0"}),
        }
        print(
            f"Stop through run.sh on {transcript.name[:60]} ({transcript.stat().st_size >> 20} MB), {runs} runs:"
        )
        report(interleaved(cases, runs, env))


def unread(folder: Path, read: set[str]) -> int:
    """The sessions not read for claims: every text said at their turn ends, to be read (none
    is labelled either way), and how often per 100 turn ends."""
    ends = said = 0
    for path in sorted(folder.glob("*.jsonl")):
        if (
            path.name in read
            or path.name.isupper()
            or (path.name[:1].isupper() and "+" not in path.name)
        ):
            continue
        result = replay(str(path))
        ends += len(result["turn_ends"])
        for stop in (s for s in result["signals"] if s["sense"] == "turn-end"):
            said += 1
            print(f"  {path.name[:60]} @{stop['main']}: {stop['text']}")
    print(
        f"sessions not read for claims: {said} said at {ends} turn ends ({100 * said / max(ends, 1):.2f} per 100)"
    )
    return 0


def loro(per_repo: dict) -> int:
    """Leave-one-repository-out: each repository scored as the held-out one. Nothing in the
    turn end is fitted (no threshold, no learned weight: FITTED is empty), so the rules
    chosen on the other repositories are the same rules and the held-out figure is the
    repository's own; the totals without it show what the rest scores alone."""
    print(f"fitted on the other repositories: {', '.join(FITTED) or 'nothing (fixed rules)'}")
    print("held out: caught/claims, sure caught/sure, false stops/turn ends | the rest without it")
    names = sorted(per_repo)
    for name in names:
        held = per_repo[name]
        rest = defaultdict(int)
        for other in names:
            if other != name:
                for key in ("caught", "claims", "caught_sure", "sure", "false", "ends"):
                    rest[key] += per_repo[other][key]
        if held["claims"] or held["false"]:
            print(
                f"  {name}: {held['caught']}/{held['claims']}, {held['caught_sure']}/{held['sure']}, "
                f"{held['false']}/{held['ends']} | {rest['caught']}/{rest['claims']}, "
                f"{rest['caught_sure']}/{rest['sure']}, {rest['false']}/{rest['ends']}"
            )
    quiet = [n for n in names if not (per_repo[n]["claims"] or per_repo[n]["false"])]
    print(f"  {len(quiet)} more repositories: no claim, no false stop")
    return 0


# What bench_claims would choose on the other repositories before scoring the held-out one:
# the turn end has no threshold or weight learned from labels.
FITTED: tuple[str, ...] = ()


def main(argv: list[str]) -> int:
    folder = Path(next((a for a in argv if not a.startswith("--")), DEFAULT_DIR))
    if not (folder / "CLAIMS.jsonl").is_file():
        print(f"no CLAIMS.jsonl in {folder}: the labelled sessions are not here", file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in (folder / "CLAIMS.jsonl").read_text().splitlines()]
    read = {r["file"]: r["turns"] for r in rows if r["type"] == "claims-read"}
    if "--unread" in argv:
        return unread(folder, set(read))
    if "--hook" in argv:
        through_hook(max((folder / name for name in read), key=lambda p: p.stat().st_size), 30)
        return 0
    claims = defaultdict(list)
    for r in rows:
        if r["type"] == "claim":
            claims[r["file"]].append(r)
    stop_times: list[float] = []
    handler = handlers.HANDLERS["Stop"]

    def timed_stop(*args: object) -> object:
        start = time.perf_counter()
        try:
            return handler(*args)
        finally:
            stop_times.append(time.perf_counter() - start)

    handlers.HANDLERS["Stop"] = timed_stop
    per_repo: dict[str, dict] = defaultdict(lambda: defaultdict(int))
    said: list[dict] = []
    ends_total = 0
    turn_mismatch = []
    try:
        for name in sorted(read):
            path = folder / name
            result = replay(str(path))
            ends = result["turn_ends"]
            ends_total += len(ends)
            if len(ends) != read[name]:
                turn_mismatch.append((name, len(ends), read[name]))
            numbered = commands(path)
            stops = [s for s in result["signals"] if s["sense"] == "turn-end"]
            labelled = {c["at"]: c for c in claims[name]}
            repo = per_repo[repository(name)]
            repo["ends"] += len(ends)
            for claim in claims[name]:
                repo["claims"] += 1
                repo["sure"] += not claim.get("unsure")
            caught_at = set()
            for stop in stops:
                claim = labelled.get(stop["main"])
                named = claim is not None and names_check(
                    stop["text"], numbered.get(claim["check_at"], "")
                )
                said.append(
                    {
                        "file": name,
                        "at": stop["main"],
                        "claim": claim is not None,
                        "names_check": named,
                        "check": numbered.get(claim["check_at"], "") if claim else "",
                        "text": stop["text"],
                    }
                )
                if claim is None:
                    repo["false"] += 1
                elif stop["main"] not in caught_at:
                    caught_at.add(stop["main"])
                    repo["caught"] += 1
                    repo["caught_sure"] += not claim.get("unsure")
                    repo["named"] += named
            per_turn = defaultdict(int)
            for stop in stops:
                per_turn[stop["turn"]] += 1
            repo["stops_per_turn_max"] = max(
                repo["stops_per_turn_max"], max(per_turn.values(), default=0)
            )
    finally:
        handlers.HANDLERS["Stop"] = handler
    total = defaultdict(int)
    for repo in per_repo.values():
        for key, value in repo.items():
            total[key] = (
                max(total[key], value) if key == "stops_per_turn_max" else total[key] + value
            )
    bare = bare_start()
    figures = {
        "sessions": len(read),
        "turn_ends": ends_total,
        "turn_ends_labelled": sum(read.values()),
        "claims": total["claims"],
        "caught": total["caught"],
        "sure": total["sure"],
        "caught_sure": total["caught_sure"],
        "caught_naming_check": total["named"],
        "false_stops": total["false"],
        "false_per_100_turn_ends": round(100 * total["false"] / max(ends_total, 1), 2),
        "max_stops_per_turn": total["stops_per_turn_max"],
        "stop_ms_median": round(1000 * statistics.median(stop_times), 2) if stop_times else 0,
        "stop_ms_p95": round(1000 * sorted(stop_times)[int(0.95 * (len(stop_times) - 1))], 2)
        if stop_times
        else 0,
        "bare_start_ms": round(1000 * bare, 2),
    }
    figures["stop_ratio_median"] = round(figures["stop_ms_median"] / figures["bare_start_ms"], 3)
    figures["stop_ratio_p95"] = round(figures["stop_ms_p95"] / figures["bare_start_ms"], 3)
    if "--loro" in argv:
        return loro(per_repo)
    if "--json" in argv:
        print(json.dumps({"figures": figures, "per_repository": per_repo, "said": said}, indent=1))
        return 0
    for key, value in figures.items():
        print(f"{key}: {value}")
    if turn_mismatch:
        print(f"turn ends counted differently from claims-read in {len(turn_mismatch)} sessions:")
        for name, mine, theirs in turn_mismatch:
            print(f"  {name[:70]}: {mine} here, {theirs} labelled")
    print("per repository (claims caught / claims, sure caught / sure, false stops / turn ends):")
    for name, repo in sorted(per_repo.items()):
        if repo["claims"] or repo["false"]:
            print(
                f"  {name}: {repo['caught']}/{repo['claims']}, {repo['caught_sure']}/{repo['sure']}, "
                f"{repo['false']}/{repo['ends']}"
            )
    print("texts said:")
    for item in said:
        if "--texts" in argv or not item["claim"]:
            tag = "CLAIM" if item["claim"] else "FALSE"
            print(f"  [{tag}] {item['file'][:60]} @{item['at']}: {item['text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
