"""The whole benchmark suite in one command; the README's performance table comes from it.

    python benchmarks/run.py [--quick]

Runs, one after the other: bench_hook (hook against a bare interpreter start, after
10,000 calls, failure path, peak memory), bench_cli (per-call cost inside the real
Claude Code CLI; needs the pinned CLI), bench_digest (digest with 100,000 records),
bench_spatial (20,000-file repository), bench_cli_start (CLI start), bench_signature
(error signatures against their hand-scanner predecessor), score_labels (the senses
against the hand labels of ../shared/transcripts) and score_blind (the same with the words
the world printed made up: how much of it rests on vocabulary). --quick runs fewer
repetitions (figures are noisier).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = (
    ("bench_hook.py", ["--runs", "60"], ["--runs", "20"]),
    ("bench_cli.py", ["--sessions", "7"], ["--sessions", "3"]),
    ("bench_digest.py", [], ["--runs", "500", "--process-runs", "10"]),
    ("bench_spatial.py", [], ["--edits", "20"]),
    ("bench_cli_start.py", ["--runs", "15"], ["--runs", "5"]),
    ("bench_signature.py", [], []),
    ("score_labels.py", [], []),  # accuracy: the senses against the hand labels
    ("score_blind.py", [], []),  # the same, with the words the world printed made up
)


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    failed = []
    for script, full, short in SUITE:
        print(f"\n== {script} {' '.join(short if quick else full)}", flush=True)
        done = subprocess.run(
            [sys.executable, str(HERE / script), *(short if quick else full)], check=False
        )
        if done.returncode:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
