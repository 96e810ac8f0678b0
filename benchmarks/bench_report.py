"""`metacog report` over a generated history: time and peak memory.

    python benchmarks/bench_report.py [--sessions 2000] [--scale 1.0] [--keep DIR]

Generates a history of SESSIONS transcripts (about 500 KB each at scale 1: 2,000 make
about 1 GB) from the lines of the captured Claude Code 2.1.328 transcript
(tests/fixtures): prompts, assistant lines with usage, passing Bash and Read calls
with outputs of realistic size, and every fifth session an error loop. Then times, as
separate processes on the same files: a baseline that only streams every line through
`json.loads` (the floor any reader pays), the real `metacog report DIR --json`, and
`metacog report DIR --html FILE` (the page, with every session's timeline: issue 41's bar
is 15x the baseline for 200 sessions, `--sessions 200`). The report's peak memory is its
maximum resident set (getrusage of the child). The history goes to a temporary folder
(checked for free space first) and is deleted afterwards.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = [
    json.loads(line)
    for line in (ROOT / "tests" / "fixtures" / "transcript-sample-2.1.328.jsonl")
    .read_text()
    .splitlines()
]
CALLS = 60  # per session: the shared real transcripts average 58
PAGE_BAR = 15.0  # issue 41: the page within 15x the time of streaming the history's JSON
OUTPUT_BYTES = 3500  # per passing call's result at scale 1 (it is in the line twice: content and toolUseResult)


def _first(kind: str, pred) -> dict:
    return next(e for e in SAMPLE if e.get("type") == kind and pred(e))


PROMPT = _first("user", lambda e: isinstance(e["message"]["content"], str))
FAIL_CALL = _first(
    "assistant",
    lambda e: (
        e["message"]["content"][0].get("input", {}).get("command") == "python3 -c 'print(1/0)'"
    ),
)
FAIL_RESULT = _first(
    "user",
    lambda e: (
        isinstance(e["message"]["content"], list)
        and e["message"]["content"][0].get("tool_use_id")
        == FAIL_CALL["message"]["content"][0]["id"]
    ),
)
OK_RESULT = _first(
    "user",
    lambda e: (
        isinstance(e["message"]["content"], list)
        and e["message"]["content"][0].get("is_error") is False
        and isinstance(e.get("toolUseResult"), dict)
        and "stdout" in e["toolUseResult"]
    ),
)
OK_CALL = _first(
    "assistant",
    lambda e: (
        e["message"]["content"][0].get("id") == OK_RESULT["message"]["content"][0]["tool_use_id"]
    ),
)


def session_lines(n: int, scale: float) -> list[str]:
    """One generated transcript: the captured lines with ids, times, commands and outputs varied."""
    start = 1_760_000_000 + n * 7200
    stamp = lambda s: time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(start + s))  # noqa: E731
    cwd = f"/home/dev/project{n % 40}"
    lines = [{**PROMPT, "timestamp": stamp(0), "cwd": cwd, "sessionId": f"gen-{n}"}]
    loop_from = 20 if n % 5 == 0 else CALLS + 1  # every fifth session: 6 identical failures
    out = "x" * int(OUTPUT_BYTES * scale)
    for i in range(CALLS):
        failing = loop_from <= i < loop_from + 6
        call, result = copy.deepcopy([FAIL_CALL, FAIL_RESULT] if failing else [OK_CALL, OK_RESULT])
        tool_id = f"toolu_g{n}_{i}"
        call["message"]["content"][0]["id"] = result["message"]["content"][0]["tool_use_id"] = (
            tool_id
        )
        call["message"]["id"] = f"msg_g{n}_{i}"
        call["message"]["usage"] = {
            "input_tokens": 50,
            "cache_read_input_tokens": 20_000 + 300 * i,
            "cache_creation_input_tokens": 400,
            "output_tokens": 120,
        }
        if not failing:
            call["message"]["content"][0]["input"]["command"] = f"cat src/module_{i % 17}.py"
            result["toolUseResult"] = {**result["toolUseResult"], "stdout": f"{i}:{out}"}
            result["message"]["content"][0]["content"] = f"{i}:{out}"
        for entry in (call, result):
            entry["timestamp"], entry["cwd"], entry["sessionId"] = (
                stamp(20 * i + 5),
                cwd,
                f"gen-{n}",
            )
        lines += [call, result]
    return [json.dumps(e, separators=(",", ":")) for e in lines]


def generate(folder: Path, sessions: int, scale: float) -> int:
    total = 0
    for n in range(sessions):
        project = folder / f"-home-dev-project{n % 40}"
        project.mkdir(exist_ok=True)
        data = ("\n".join(session_lines(n, scale)) + "\n").encode()
        (project / f"gen-{n:05d}.jsonl").write_bytes(data)
        total += len(data)
    return total


BASELINE = """
import json, os, sys
n = 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        with open(os.path.join(folder, name), "rb") as fh:
            for line in fh:
                json.loads(line)
                n += 1
print(n)
"""


RENDER = """
import sys, time
from metacog import report
from metacog.cli.report import files
from metacog.report import page
built = report.build(files([sys.argv[1]]), timelines=True)
start = time.perf_counter()
page.write(sys.argv[2], built)
print(time.perf_counter() - start)
"""


def _tree(pid: int) -> list[int]:
    """The process and every descendant (from /proc: ppid of each)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        here = todo.pop()
        out.append(here)
        todo += children.get(here, [])
    return out


def _pss_kib(pid: int) -> int:
    """Proportional set size: a page shared by the forked workers counts once over them."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run(argv: list[str], env: dict) -> tuple[float, int, int, bytes, int, float]:
    """Wall seconds, peak resident KiB, exit code and stdout of one child process (its own
    rusage from wait4: RUSAGE_CHILDREN would be the largest of every child so far), the
    peak memory of its whole process tree (the report's workers), sampled every 50 ms, and
    the CPU seconds of the child and the workers it reaped."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        tree_peak = 0
        while True:
            done, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if done:
                break
            if os.path.isdir("/proc"):
                tree_peak = max(tree_peak, sum(_pss_kib(p) for p in _tree(proc.pid)))
            time.sleep(0.05)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            elapsed,
            usage.ru_maxrss,
            proc.returncode,
            out.read() + err.read()[-500:] * (proc.returncode != 0),
            max(tree_peak, usage.ru_maxrss),
            usage.ru_utime + usage.ru_stime,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="output size per call, 1.0 = about 500 KB a session",
    )
    parser.add_argument("--keep", help="generate into this folder and keep it")
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds of the baseline, --json and --html"
    )
    args = parser.parse_args()
    where = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="metacog-bench-report-"))
    needed = int(args.sessions * CALLS * (OUTPUT_BYTES * args.scale + 3000) * 1.3)
    free = shutil.disk_usage(where).free
    if free < 3 * needed:
        print(
            f"not enough free space in {where}: {free >> 20} MB free, about {needed >> 20} MB needed (x3 margin)",
            file=sys.stderr,
        )
        return 1
    home = Path(tempfile.mkdtemp(prefix="metacog-bench-home-"))
    env = {**os.environ, "METACOG_HOME": str(home), "HOME": str(home)}
    try:
        where.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        size = generate(where, args.sessions, args.scale)
        print(
            f"generated {args.sessions:,} sessions, {size / 1e6:,.0f} MB in {time.perf_counter() - started:.1f} s"
        )
        base_s, base_kib, _, lines, _, base_cpu = run(
            [sys.executable, "-c", BASELINE, str(where)], env
        )
        print(
            f"baseline (stream every line through json.loads): {base_s:.1f} s, peak {base_kib / 1024:.0f} MB, "
            f"{int(lines):,} lines"
        )
        report_s, report_kib, code, out, tree_kib, _ = run(
            [sys.executable, "-m", "metacog", "report", str(where), "--json"], env
        )
        if code != 0:
            print(
                f"metacog report exited {code}: {out.decode(errors='replace')[-800:]}",
                file=sys.stderr,
            )
            return 1
        totals = json.loads(out)["totals"]
        print(
            f"metacog report --json: {report_s:.1f} s ({report_s / base_s:.1f}x the baseline, "
            f"{size / 1e6 / report_s:.1f} MB/s, {totals['calls'] / report_s:,.0f} calls/s), "
            f"peak {report_kib / 1024:.0f} MB ({tree_kib / 1024:.0f} MB with its workers, PSS); "
            f"{totals['sessions']:,} sessions, {totals['calls']:,} calls, {totals['episodes']:,} loops, "
            f"{os.cpu_count()} cores"
        )
        # The page's bar, in rounds of the baseline, --json and --html one after the other:
        # on a shared machine one run can land in a busy second; the medians are the figures.
        # --html and --json replay the same; what the page adds is their difference.
        rounds: list[tuple[float, float, float, float, float]] = []
        page = home / "report.html"
        for n in range(args.rounds):
            if n:
                base_s, _, _, _, _, base_cpu = run(
                    [sys.executable, "-c", BASELINE, str(where)], env
                )
                report_s = run(
                    [sys.executable, "-m", "metacog", "report", str(where), "--json"], env
                )[0]
            page_s, page_kib, code, out, _, page_cpu = run(
                [sys.executable, "-m", "metacog", "report", str(where), "--html", str(page)], env
            )
            if code != 0:
                print(f"metacog report --html exited {code}: {out.decode(errors='replace')[-800:]}")
                return 1
            rounds.append((page_s / base_s, page_cpu / base_cpu, report_s / base_s, page_s, base_s))
            print(
                f"round {n + 1}: baseline {base_s:.1f} s, --json {report_s:.1f} s "
                f"({report_s / base_s:.1f}x), --html {page_s:.1f} s ({page_s / base_s:.1f}x; CPU with "
                f"its workers {page_cpu:.1f} s against {base_cpu:.1f} s, {page_cpu / base_cpu:.1f}x), "
                f"page {page.stat().st_size / 1e6:.1f} MB, peak {page_kib / 1024:.0f} MB"
            )
        render = run([sys.executable, "-c", RENDER, str(where), str(page)], env)
        render_s = float(render[3].split()[-1])
        ratio = median(r[0] for r in rounds)
        print(
            f"page bar: --html median {ratio:.1f}x the baseline over {len(rounds)} round(s) "
            f"(CPU {median(r[1] for r in rounds):.1f}x; --json {median(r[2] for r in rounds):.1f}x); "
            f"bar {PAGE_BAR:g}x: {'within' if ratio <= PAGE_BAR else 'OVER'}. The page itself "
            f"(render and write from the report): {render_s:.2f} s, "
            f"{render_s / median(r[4] for r in rounds):.2f}x the baseline"
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
