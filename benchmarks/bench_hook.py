"""PostToolUse hook wall time through the exact hooks.json command, against a bare start.

    python benchmarks/bench_hook.py [--runs N]

Prepares a runtime with hooks/bootstrap.py in a temporary plugin data folder (or reuses
$METACOG_BENCH_DATA), then measures, interleaved, medians of N runs:
  bare      `<runtime python> -c pass`: the floor any Python hook pays
  hook      `sh hooks/run.sh` with a captured PostToolUse payload (fresh session)
  hook-10k  the same after 10,000 calls in that session (state must not grow with them)
  failure   a captured PostToolUseFailure (builds an error signature)
and the peak memory (max RSS) of one hook process. Ratios are against `bare` measured
in the same run: these machines are shared and noisy, absolute times are not comparable.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]


def runtime(data: Path) -> Path:
    python = data / "runtime" / VERSION / "bin" / "python"
    if not (data / "runtime" / VERSION / ".ready").exists():
        subprocess.run([sys.executable, str(ROOT / "hooks" / "bootstrap.py"), str(data), VERSION], check=True)
    return python


def timed(cmd: list[str], payload: bytes, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=payload, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def peak_rss_mb(cmd: list[str], payload: bytes, env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), "
            "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, *cmd], input=payload, capture_output=True, env=env, check=True)
    del before
    return int(out.stdout.decode().split()[-1]) / 1024  # Linux reports KiB


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 60
    payloads = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    tool = next(p for p in payloads if p["hook_event_name"] == "PostToolUse" and p["tool_name"] == "Read")
    failure = next(p for p in payloads if p["hook_event_name"] == "PostToolUseFailure" and p["tool_name"] == "Bash")
    keep = os.environ.get("METACOG_BENCH_DATA")
    data = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="metacog-bench-"))
    home = Path(tempfile.mkdtemp(prefix="metacog-bench-home-"))
    try:
        python = runtime(data)
        env = {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "METACOG_HOME": str(home)}
        env.pop("METACOG_DISABLE", None)
        hook = ["sh", str(ROOT / "hooks" / "run.sh")]
        fresh = json.dumps({**tool, "session_id": "bench-fresh"}).encode()
        busy = {**tool, "session_id": "bench-busy"}
        # 10,000 calls in one session, in-process through the runtime (same code, faster to set up).
        setup = ("import sys, json\nfrom metacog import hook, paths\np = json.loads(sys.stdin.read())\n"
                 "for i in range(10000):\n    p['tool_input']['file_path'] = f'/w/f{i % 300}.py'\n"
                 "    hook.handle(json.dumps(p).encode(), paths.state_dir())\n")
        subprocess.run([str(python), "-c", setup], input=json.dumps(busy).encode(), env=env, check=True)
        busy_raw = json.dumps(busy).encode()
        fail_raw = json.dumps({**failure, "session_id": "bench-fail"}).encode()
        cases = {
            "bare": ([str(python), "-c", "pass"], b""),
            "hook": (hook, fresh),
            "hook-10k": (hook, busy_raw),
            "failure": (hook, fail_raw),
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(3):  # warm the page cache and the bytecode caches
            for cmd, payload in cases.values():
                timed(cmd, payload, env)
        for _ in range(runs):
            for name, (cmd, payload) in cases.items():
                samples[name].append(timed(cmd, payload, env))
        bare = statistics.median(samples["bare"])
        print(f"runs per case: {runs} (interleaved), python: {python}")
        for name, values in samples.items():
            med = statistics.median(values)
            print(f"{name:9s} median {med * 1000:6.1f} ms   ratio to bare {med / bare:4.2f}")
        print(f"hook-10k / hook: {statistics.median(samples['hook-10k']) / statistics.median(samples['hook']):.2f}")
        print(f"peak memory of one hook process: {peak_rss_mb(hook, fresh, env):.1f} MB")
        state = home / "state" / "sessions" / "bench-busy.json"
        print(f"session state after 10,000 calls: {state.stat().st_size / 1024:.1f} KiB")
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if not keep:
            shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
