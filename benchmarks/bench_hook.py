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
and the peak memory (max RSS) of one direct hook process and of the resident process.
Ratios are against `bare` measured in the same run: these machines are shared and
noisy, absolute times are not comparable.
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
