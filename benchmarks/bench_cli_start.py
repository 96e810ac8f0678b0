"""How fast the `metacog` CLI starts, against a bare start of the same interpreter.

    python benchmarks/bench_cli_start.py [--runs N]

Prepares a runtime with hooks/bootstrap.py (or reuses $METACOG_BENCH_DATA) and runs,
interleaved, medians of N: `python -c pass`, `metacog --version`, `metacog status`
(with one recorded session), `metacog doctor`. The issue's goal: well under 0.5 s.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]
FIXTURE = ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 15
    keep = os.environ.get("METACOG_BENCH_DATA")
    data = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="metacog-bench-"))
    home = Path(tempfile.mkdtemp(prefix="metacog-bench-home-"))
    try:
        if not (data / "runtime" / VERSION / ".ready").exists():
            subprocess.run([sys.executable, str(ROOT / "hooks" / "bootstrap.py"), str(data), VERSION], check=True)
        python = str(data / "runtime" / VERSION / "bin" / "python")
        env = {**os.environ, "METACOG_HOME": str(home)}
        for line in FIXTURE.read_text().splitlines():
            subprocess.run([python, "-I", "-c", "from metacog.hook import main; main()"], input=line.encode(),
                           env=env, check=True, capture_output=True)
        cases = {
            "bare": [python, "-c", "pass"],
            "--version": [python, "-I", "-m", "metacog", "--version"],
            "status": [python, "-I", "-m", "metacog", "status"],
            "doctor": [python, "-I", "-m", "metacog", "doctor"],
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, cmd in cases.items():
                start = time.perf_counter()
                subprocess.run(cmd, env=env, capture_output=True, check=False)
                samples[name].append(time.perf_counter() - start)
        bare = statistics.median(samples["bare"])
        for name, values in samples.items():
            med = statistics.median(values)
            print(f"{name:10s} median {med * 1000:6.0f} ms   ratio to bare {med / bare:5.1f}")
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if not keep:
            shutil.rmtree(data, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
