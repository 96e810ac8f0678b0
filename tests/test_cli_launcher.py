"""The /metacog slash command file and its launcher, hooks/cli.sh."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from clitest import ROOT, VERSION

LAUNCHER = ROOT / "hooks" / "cli.sh"
COMMAND = ROOT / "commands" / "metacog.md"


def frontmatter_and_body() -> tuple[dict[str, str], str]:
    text = COMMAND.read_text()
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    fields = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields, body


def test_command_registers_as_slash_metacog_and_only_for_the_person() -> None:
    fields, _ = frontmatter_and_body()
    assert fields["name"] == "metacog"
    assert fields["disable-model-invocation"] == "true"
    assert fields["description"]


def test_allowed_tools_match_the_bang_line_exactly() -> None:
    # Claude Code runs a `!` line only through the Bash permission check (FACTS.md).
    fields, body = frontmatter_and_body()
    allowed = re.fullmatch(r"Bash\((.+):\*\)", fields["allowed-tools"])
    assert allowed, fields["allowed-tools"]
    prefix = allowed.group(1)
    assert prefix == 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/cli.sh"'
    bang = [line for line in body.splitlines() if line.startswith("!`")]
    assert bang == [f'!`{prefix} "${{CLAUDE_PLUGIN_DATA}}" $ARGUMENTS`']


def test_launcher_version_is_the_plugins() -> None:
    assert f"\nV={VERSION}\n" in LAUNCHER.read_text()


def launch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    return subprocess.run(
        ["sh", str(LAUNCHER), *args],
        check=False,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=30,
    )


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    """A data folder whose runtime's `python` reports how it was called, and fails."""
    data = tmp_path / "data"
    bin_dir = data / "runtime" / VERSION / "bin"
    bin_dir.mkdir(parents=True)
    (data / "runtime" / VERSION / ".ready").write_text(VERSION)
    python = bin_dir / "python"
    python.write_text(
        '#!/bin/sh\necho "args: $*"\necho "root: $CLAUDE_PLUGIN_ROOT"\n'
        'echo "data: $CLAUDE_PLUGIN_DATA"\necho "cwd: $(pwd)"\necho "on stderr" >&2\nexit 3\n'
    )
    python.chmod(0o755)
    return data


def test_missing_runtime_is_one_line_and_exit_zero(tmp_path: Path) -> None:
    done = launch(str(tmp_path / "data"), "status")
    assert done.returncode == 0 and done.stderr == ""
    [line] = done.stdout.splitlines()
    assert line.startswith("metacog: its runtime is not ready yet")
    assert str(tmp_path / "data" / "bootstrap.log") in line


def test_runs_the_runtime_cli_isolated_and_always_exits_zero(runtime: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        ["sh", str(LAUNCHER), str(runtime), "config", "get", "chronos.minutes"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    assert done.returncode == 0  # a non-zero `!` line would keep the output from the model
    assert done.stdout.splitlines() == [
        "args: -I -m metacog config get chronos.minutes",
        f"root: {ROOT}",
        f"data: {runtime}",
        f"cwd: {tmp_path}",
        "on stderr",
    ]
    assert done.stderr == ""


def test_no_arguments_mean_status(runtime: Path) -> None:
    assert launch(str(runtime)).stdout.startswith("args: -I -m metacog status\n")


def test_data_folder_from_the_environment_when_not_given(runtime: Path) -> None:
    out = launch("", "doctor", env={"CLAUDE_PLUGIN_DATA": str(runtime)}).stdout
    assert out.startswith("args: -I -m metacog doctor\n") and f"data: {runtime}\n" in out


def test_data_folder_defaults_to_the_inline_one(runtime: Path, tmp_path: Path) -> None:
    inline = tmp_path / "home" / ".claude" / "plugins" / "data" / "metacog-inline"
    inline.parent.mkdir(parents=True)
    os.rename(runtime, inline)
    out = launch("", "status", env={"HOME": str(tmp_path / "home")}).stdout
    assert f"data: {inline}\n" in out


def test_a_given_plugin_root_is_kept(runtime: Path) -> None:
    out = launch(str(runtime), "doctor", env={"CLAUDE_PLUGIN_ROOT": "/elsewhere"}).stdout
    assert "root: /elsewhere\n" in out
