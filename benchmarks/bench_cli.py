"""What the person feels: time metacog adds per tool call inside the real Claude Code CLI.

    python benchmarks/bench_cli.py [--sessions N]

The same scripted 30-call session (varied, successful calls) runs, interleaved, N times
each with: no plugin; a plugin registering the same events with hooks that are just
`true` (the CLI's own cost of running a hook); the same with hooks that start the
runtime's Python and do nothing (the floor of any Python hook); metacog (its runtime
prepared once by hooks/bootstrap.py; calls answered by its resident process, which the
first session starts and later ones find running, as they would in real use); metacog
with METACOG_RESIDENT=0 (every call starts Python). Per-call figures are differences of session medians divided by
the number of tool calls. Needs the pinned CLI ($METACOG_CLAUDE_BIN or the CI install).
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from claude_harness import ClaudeHarness, find_claude_bin, plugin_version

CALLS = 30


def script() -> list:
    turns = []
    for i in range(CALLS):
        if i % 3 == 0:
            turns.append(
                [{"name": "Bash", "input": {"command": f"echo step {i}", "description": "echo"}}]
            )
        elif i % 3 == 1:
            turns.append([{"name": "Read", "input": {"file_path": "README.txt"}}])
        else:
            turns.append(
                [
                    {
                        "name": "Bash",
                        "input": {"command": f"ls -a && echo {i}", "description": "list"},
                    }
                ]
            )
    return [*turns, "Done."]


def plain_plugin(folder: Path, command: str) -> Path:
    """A plugin registering metacog's events with `command` as every hook."""
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    for groups in hooks.values():
        for group in groups:
            for hook in group["hooks"]:
                hook["command"] = command
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": folder.name, "version": "0.0.1"})
    )
    (folder / "hooks").mkdir()
    (folder / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return folder


def main(argv: list[str]) -> int:
    sessions = int(argv[argv.index("--sessions") + 1]) if "--sessions" in argv else 7
    claude_bin, why = find_claude_bin()
    if claude_bin is None:
        print(why, file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        prepared = work / "prepared"
        subprocess.run(
            [sys.executable, str(ROOT / "hooks" / "bootstrap.py"), str(prepared), plugin_version()],
            check=True,
        )
        python = prepared / "runtime" / plugin_version() / "bin" / "python"
        plain = plain_plugin(work / "truehooks", "true")
        # The floor of any Python hook: the runtime's interpreter starting and doing nothing.
        bare = plain_plugin(work / "barepython", f'"{python}" -I -c pass')
        runs: dict[str, list[float]] = {
            "none": [],
            "true": [],
            "python": [],
            "metacog": [],
            "direct": [],
        }
        folders = {"none": None, "true": plain, "python": bare, "metacog": ROOT, "direct": ROOT}
        for _ in range(sessions):
            for name, durations in runs.items():
                harness = ClaudeHarness(claude_bin, work)
                if name in ("metacog", "direct"):
                    harness.link_runtime(prepared)
                if name == "direct":
                    harness.extra_env["METACOG_RESIDENT"] = "0"
                result = harness.run(script(), plugin_dir=folders[name], timeout=180)
                assert result.returncode == 0 and len(result.requests) >= CALLS, result.describe()
                durations.append(result.duration)
        med = {name: statistics.median(values) for name, values in runs.items()}
        print(f"{sessions} sessions each, {CALLS} tool calls per session (interleaved medians)")
        for name, value in med.items():
            print(f"{name:8s} session {value:6.2f} s")
        print(
            f"CLI's own hook cost ('true' - none):     {(med['true'] - med['none']) / CALLS * 1000:6.1f} ms per call"
        )
        print(
            f"metacog's added cost (metacog - 'true'): {(med['metacog'] - med['true']) / CALLS * 1000:6.1f} ms per call"
        )
        print(
            f"a bare Python start ('python' - 'true'): {(med['python'] - med['true']) / CALLS * 1000:6.1f} ms per call"
        )
        print(
            f"metacog over a bare Python start:        {(med['metacog'] - med['python']) / CALLS * 1000:6.1f} ms per call"
        )
        print(
            f"metacog against no plugin:               {(med['metacog'] - med['none']) / CALLS * 1000:6.1f} ms per call"
        )
        print(
            f"metacog without its resident process:    {(med['direct'] - med['true']) / CALLS * 1000:6.1f} ms per call"
            " over 'true' (METACOG_RESIDENT=0, or no Perl)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
