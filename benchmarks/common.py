"""What the benchmarks share: a prepared runtime and interleaved timing against a bare start."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]


@contextlib.contextmanager
def runtime() -> Iterator[tuple[Path, Path, Path]]:
    """(runtime python, plugin data folder, METACOG_HOME), removed afterwards.

    The runtime is built by hooks/bootstrap.py (it installs a copy of the working tree),
    or reused from $METACOG_BENCH_DATA, which is then kept.
    """
    keep = os.environ.get("METACOG_BENCH_DATA")
    data = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="metacog-bench-"))
    home = Path(tempfile.mkdtemp(prefix="metacog-bench-home-"))
    try:
        if not (data / "runtime" / VERSION / ".ready").exists():
            subprocess.run(
                [sys.executable, str(ROOT / "hooks" / "bootstrap.py"), str(data), VERSION],
                check=True,
            )
        yield data / "runtime" / VERSION / "bin" / "python", data, home
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if not keep:
            shutil.rmtree(data, ignore_errors=True)


def timed(cmd: list[str], payload: bytes, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd,
        input=payload,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    return time.perf_counter() - start


def interleaved(
    cases: dict[str, tuple], runs: int, env: dict, warm: int = 3
) -> dict[str, list[float]]:
    """Wall times of each case, one run of every case per round (noise hits all alike).

    A case is (command, stdin) or (command, stdin, variables that differ from `env`).
    """
    envs = {name: {**env, **(case[2] if len(case) > 2 else {})} for name, case in cases.items()}
    for _ in range(warm):  # the page cache and the bytecode caches
        for name, case in cases.items():
            timed(case[0], case[1], envs[name])
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, case in cases.items():
            samples[name].append(timed(case[0], case[1], envs[name]))
    return samples


def report(samples: dict[str, list[float]], baseline: str = "bare") -> None:
    base = statistics.median(samples[baseline])
    for name, values in samples.items():
        med = statistics.median(values)
        print(f"{name:10s} median {med * 1000:6.1f} ms   ratio to {baseline} {med / base:5.2f}")
