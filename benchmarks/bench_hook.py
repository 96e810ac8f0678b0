"""PostToolUse hook wall time through the exact hooks.json command, against a bare start.

    python benchmarks/bench_hook.py [--runs N]

Prepares a runtime with hooks/bootstrap.py in a temporary plugin data folder (or reuses
$METACOG_BENCH_DATA), starts a session through run.sh (which starts the resident
process, metacog/resident.py), then measures, interleaved, medians of N runs:
  bare      `<runtime python> -c pass`: the floor any Python hook pays
  hook      `sh hooks/run.sh` with a captured PostToolUse payload (fresh session),
            answered by the resident process: what every call pays once a session runs
  hook-10k  the same after 10,000 calls in that session (state must not grow with them)
  failure   a captured PostToolUseFailure (builds an error signature)
  direct    the hook run by run.sh itself (METACOG_RESIDENT=0; also the path of a call
            that finds no resident process): interpreter start and imports
  batch     a captured PostToolBatch without a refused call (the common batch: left at
            once, no state read), answered by the resident process
  batch-direct  the same run by run.sh itself (METACOG_RESIDENT=0)
  batch-refused a captured PostToolBatch of three refused calls (its session's state read
            and written; from the second run on its calls are heard already, so the senses
            do not run again: the first hearing costs what a failing call's hook costs)
and the peak memory (max RSS) of one direct hook process and of the resident process.
Ratios are against `bare` measured in the same run: these machines are shared and
noisy, absolute times are not comparable.

Registering PostToolBatch adds one hook process per model response that made calls: the
number of such batches per session, counted on the labelled transcripts beside the
repository (../shared/transcripts, or the folder after --batches), is printed last.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import FIXTURE, ROOT, VERSION, interleaved, report, runtime

BATCHES = ROOT / "tests" / "fixtures" / "hook-inputs-batch-2.1.328.jsonl"
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"


def peak_rss_mb(cmd: list[str], payload: bytes, env: dict) -> float:
    # Measured in a child of its own, so that only the hook's process counts.
    code = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), "
        "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *cmd], input=payload, capture_output=True, env=env, check=True
    )
    return int(out.stdout.decode().split()[-1]) / 1024  # Linux reports KiB


def wait_for_socket(path: Path, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while not path.is_socket() and time.monotonic() < end:
        time.sleep(0.05)
    return path.is_socket()


def resident_rss_mb(folder: Path) -> str:
    """VmHWM (peak resident set) of the resident process, from /proc (Linux)."""
    try:
        status = Path(f"/proc/{int((folder / 'pid').read_text())}/status").read_text()
    except (OSError, ValueError):
        return "n/a (no /proc, or not running)"
    kib = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")), "")
    return f"{int(kib) / 1024:.1f} MB" if kib.isdigit() else "n/a"


def _refused(block: object) -> bool:
    """A tool_result of a call Claude Code refused before running it (metacog.transcript)."""
    if not isinstance(block, dict) or block.get("type") != "tool_result":
        return False
    text = block.get("content")
    if isinstance(text, list):
        text = " ".join(str(b.get("text", "")) for b in text if isinstance(b, dict))
    return block.get("is_error") is True and str(text).lstrip().startswith("<tool_use_error>")


def batches_per_session(folder: Path) -> str:
    """Model responses that made calls (each fires one PostToolBatch), per session, against
    the calls: the extra hook processes a session spawns."""
    files = sorted(p for p in folder.glob("*.jsonl") if not p.stem.isupper())  # not the labels
    if not files:
        return f"no transcripts in {folder}: batches per session not counted"
    batches, side, calls, working = [], [], [], 0
    for path in files:
        main: set[str] = set()
        sub: set[tuple] = set()
        made: dict[str, tuple] = {}  # tool_use id -> its batch
        loud: set[tuple] = set()  # batches with a refused call: the ones the hook works on
        n = 0
        with path.open("rb") as fh:
            for raw in fh:
                if b"tool_use" not in raw:
                    continue
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                message = entry.get("message") if isinstance(entry, dict) else None
                content = message.get("content") if isinstance(message, dict) else None
                if not isinstance(content, list):
                    continue
                if entry.get("type") == "user":
                    loud.update(
                        made[b["tool_use_id"]]
                        for b in content
                        if _refused(b) and b.get("tool_use_id") in made
                    )
                    continue
                uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
                if entry.get("type") != "assistant" or not uses:
                    continue
                response = str(message.get("id") or id(entry))
                batch = (entry.get("agentId") or "sidechain", response)
                if entry.get("isSidechain"):
                    sub.add(batch)
                else:
                    batch = ("", response)
                    main.add(response)
                    n += len(uses)
                made.update((str(b.get("id")), batch) for b in uses)
        batches.append(len(main))
        side.append(len(sub))
        calls.append(n)
        working += len(loud)
    return (
        f"PostToolBatch hooks per session over {len(files)} transcripts: median "
        f"{statistics.median(batches):.0f}, mean {statistics.mean(batches):.1f} on the main "
        f"thread ({sum(batches)} batches for {sum(calls)} main-thread calls: "
        f"{sum(batches) / max(sum(calls), 1):.2f} per call), plus {sum(side)} in subagents' "
        f"sidechains; {working} of all batches hold a refused call (the others are left at once)"
    )


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 60
    payloads = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    tool = next(
        p for p in payloads if p["hook_event_name"] == "PostToolUse" and p["tool_name"] == "Read"
    )
    failure = next(
        p
        for p in payloads
        if p["hook_event_name"] == "PostToolUseFailure" and p["tool_name"] == "Bash"
    )
    batches = [json.loads(line) for line in BATCHES.read_text().splitlines()]
    batches = [p for p in batches if p["hook_event_name"] == "PostToolBatch"]
    quiet = next(p for p in batches if len(p["tool_calls"]) == 2 and "Read" in json.dumps(p))
    refusals = next(p for p in batches if "<tool_use_error>" in json.dumps(p))
    with runtime() as (python, data, home):
        env = {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "METACOG_HOME": str(home)}
        for var in ("METACOG_DISABLE", "METACOG_RESIDENT"):
            env.pop(var, None)
        hook = ["sh", str(ROOT / "hooks" / "run.sh")]
        start = next(p for p in payloads if p["hook_event_name"] == "SessionStart")
        subprocess.run(
            [*hook, "session-start"], input=json.dumps(start).encode(), env=env, check=True
        )
        fresh = json.dumps({**tool, "session_id": "bench-fresh"}).encode()
        busy = {**tool, "session_id": "bench-busy"}
        # 10,000 calls in one session, in-process through the runtime (same code, faster to set up).
        setup = (
            "import sys, json\nfrom metacog import hook, paths\np = json.loads(sys.stdin.read())\n"
            "for i in range(10000):\n    p['tool_input']['file_path'] = f'/w/f{i % 300}.py'\n"
            "    hook.handle(json.dumps(p).encode(), paths.state_dir())\n"
        )
        subprocess.run(
            [str(python), "-c", setup], input=json.dumps(busy).encode(), env=env, check=True
        )
        busy_raw = json.dumps(busy).encode()
        fail_raw = json.dumps({**failure, "session_id": "bench-fail"}).encode()
        batch_raw = json.dumps({**quiet, "session_id": "bench-batch"}).encode()
        refused_raw = json.dumps({**refusals, "session_id": "bench-refused"}).encode()
        resident = data / "runtime" / VERSION / "resident"
        if not wait_for_socket(resident / "hook.sock"):
            print(
                "the resident process did not start: 'hook' below is the direct path",
                file=sys.stderr,
            )
        cases = {
            "bare": ([str(python), "-c", "pass"], b""),
            "hook": (hook, fresh),
            "hook-10k": (hook, busy_raw),
            "failure": (hook, fail_raw),
            "direct": (hook, fresh, {"METACOG_RESIDENT": "0"}),
            "batch": (hook, batch_raw),
            "batch-direct": (hook, batch_raw, {"METACOG_RESIDENT": "0"}),
            "batch-refused": (hook, refused_raw),
        }
        samples = interleaved(cases, runs, env)
        print(f"runs per case: {runs} (interleaved), python: {python}")
        report(samples)
        print(
            f"hook-10k / hook: {statistics.median(samples['hook-10k']) / statistics.median(samples['hook']):.2f}"
        )
        print(
            f"peak memory of one direct hook process: "
            f"{peak_rss_mb(hook, fresh, {**env, 'METACOG_RESIDENT': '0'}):.1f} MB"
        )
        print(
            f"peak memory of the resident process after {len(cases) * (runs + 3)} calls: {resident_rss_mb(resident)}"
        )
        state = home / "state" / "sessions" / "bench-busy.json"
        print(f"session state after 10,000 calls: {state.stat().st_size / 1024:.1f} KiB")
    folder = Path(argv[argv.index("--batches") + 1]) if "--batches" in argv else TRANSCRIPTS
    print(batches_per_session(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
