"""What the digest costs on the prompt path: empty stores against 100,000 records.

    cd /work/main && python3 benchmarks/bench_digest.py [--runs 3000] [--process-runs 40]

Each run is the first UserPromptSubmit of a new session (`digest_once` with a fresh
session id: stat the stores, read the cached digest, write the session's marker),
alternating between a project with no stores and one whose stores hold 100,000
records (60,000 in the project's, 40,000 in the global one); medians of many
interleaved runs, and their ratio (the budget is 2x).
The one-off compile after a store changed is timed apart, and so is a later prompt
(the marker exists: one lstat). `--process-runs` also times whole hook-like
processes (interpreter start, imports, digest_once). Exits 1 when the ratio is over 2.
Everything happens under a temporary METACOG_HOME.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = 100_000
T0 = 1_700_000_000.0
DAY = 86400.0


def fill(path: str, count: int, rules: list[str], now: float) -> None:
    import json

    os.makedirs(os.path.dirname(path), exist_ok=True)
    kinds = ("detection", "suppression", "suppression")
    with open(path, "w") as fh:
        for i in range(count):
            rec = {
                "v": 1,
                "type": kinds[i % 3],
                "rule": rules[i % len(rules)],
                "at": round(now - (i % 300) * DAY / 3, 3),
                "session": f"{i:016x}",
            }
            fh.write(json.dumps(rec) + "\n")


def one_process(home: str, root: str, sid: str, now: float) -> float:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from metacog import learning, paths, schema;"
        "sd = paths.state_dir(); cfg = schema.load(paths.config_dir(), sys.argv[2]);"
        "learning.digest_once(sys.argv[2], sys.argv[3], sd, cfg, float(sys.argv[4]))"
    )
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-I", "-c", code, ROOT, root, sid, str(now)],
        check=True,
        capture_output=True,
        env={**os.environ, "METACOG_HOME": home},
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3000)
    parser.add_argument("--process-runs", type=int, default=40)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="metacog-bench-")
    # One METACOG_HOME per case (the global store lives in its data dir); paths reads
    # the variable on each call, so switching it between runs switches the stores.
    homes = {"empty": os.path.join(tmp, "home-empty"), "big": os.path.join(tmp, "home-big")}
    sys.path.insert(0, ROOT)
    try:
        from metacog import learning, paths, schema
        from metacog.learning import detectors, store

        now = T0
        roots = {name: os.path.join(tmp, f"project-{name}") for name in homes}
        for root in roots.values():
            os.makedirs(root)
        os.environ["METACOG_HOME"] = homes["big"]
        rules = sorted(detectors.RULES)
        fill(store.project_path(roots["big"]), RECORDS * 6 // 10, rules, now)
        fill(store.global_path(), RECORDS * 4 // 10, rules[::-1], now)
        size = os.path.getsize(store.project_path(roots["big"])) + os.path.getsize(
            store.global_path()
        )
        print(f"stores: {RECORDS:,} records, {size / 1e6:.1f} MB")
        cfg = schema.DEFAULTS

        def call(name: str, sid: str) -> str:
            os.environ["METACOG_HOME"] = homes[name]
            return learning.digest_once(roots[name], sid, paths.state_dir(), cfg, now)

        start = time.perf_counter()
        text = call("big", "warm")
        print(
            f"compile after a change (once per change, not per prompt): "
            f"{1000 * (time.perf_counter() - start):.0f} ms; "
            f"digest {len(text)} chars, {text.count(chr(10)) + 1} lines"
        )
        call("empty", "warm")

        timings: dict[str, list[float]] = {"empty": [], "big": [], "later prompt": []}
        clock = time.perf_counter
        for i in range(args.runs):
            for name in ("empty", "big"):
                os.environ["METACOG_HOME"] = homes[name]
                sd = paths.state_dir()
                t = clock()
                learning.digest_once(roots[name], f"s{i}", sd, cfg, now)
                timings[name].append(clock() - t)
            t = clock()
            learning.digest_once(roots["big"], f"s{i}", sd, cfg, now)
            timings["later prompt"].append(clock() - t)
        medians = {name: statistics.median(values) * 1e6 for name, values in timings.items()}
        for name, value in medians.items():
            print(
                f"digest_once, {name:>12}: median {value:7.1f} µs over {args.runs} interleaved runs"
            )
        ratio = medians["big"] / medians["empty"]
        print(f"ratio 100k / empty: {ratio:.2f}x (budget 2x)")

        if args.process_runs:
            per: dict[str, list[float]] = {"empty": [], "big": []}
            for i in range(args.process_runs):
                for name, values in per.items():
                    values.append(one_process(homes[name], roots[name], f"p{i}", now))
            pm = {name: statistics.median(v) * 1000 for name, v in per.items()}
            print(
                f"whole process (interpreter, imports, digest_once), {args.process_runs} runs each: "
                f"empty {pm['empty']:.1f} ms, 100k {pm['big']:.1f} ms, ratio {pm['big'] / pm['empty']:.2f}x"
            )
        return 0 if ratio <= 2.0 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
