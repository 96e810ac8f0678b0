"""The tree passes the rule set in pyproject.toml ([tool.ruff.lint]) and the formatter: a `noqa`
names a rule that is checked, what the rules catch never lands, and no file differs from what
`ruff format` would write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ruff_passes() -> None:
    out = ruff("check")
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    out = ruff("format", "--check")
    assert out.returncode == 0, out.stdout + out.stderr


def test_complexity_and_argument_count_are_checked() -> None:
    # Without these two rules a 20-branch function or a 10-argument one lands unnoticed.
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert {"C901", "PLR0913"} <= set(lint["select"])
    assert not {"C901", "PLR0913"} & set(lint.get("ignore", []))
    assert lint["mccabe"]["max-complexity"] <= 15
    assert lint["pylint"]["max-args"] <= 7
