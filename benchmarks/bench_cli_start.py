"""How fast the `metacog` CLI starts, against a bare start of the same interpreter.

    python benchmarks/bench_cli_start.py [--runs N]

Prepares a runtime with hooks/bootstrap.py (or reuses $METACOG_BENCH_DATA) and runs,
interleaved, medians of N: `python -c pass`, `metacog --version`, `metacog status`
(with one recorded session), `metacog doctor`. The issue's goal: well under 0.5 s.
"""

from __future__ import annotations

import os
import subprocess
import sys

from common import FIXTURE, interleaved, report, runtime


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 15
    with runtime() as (python, _data, home):
        env = {**os.environ, "METACOG_HOME": str(home)}
        for line in FIXTURE.read_text().splitlines():  # one recorded session for `status`
            subprocess.run(
                [str(python), "-I", "-c", "from metacog.hook import main; main()"],
                input=line.encode(),
                env=env,
                check=True,
                capture_output=True,
            )
        cli = [str(python), "-I", "-m", "metacog"]
        cases = {
            "bare": ([str(python), "-c", "pass"], b""),
            "--version": ([*cli, "--version"], b""),
            "status": ([*cli, "status"], b""),
            "doctor": ([*cli, "doctor"], b""),
        }
        report(interleaved(cases, runs, env, warm=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
