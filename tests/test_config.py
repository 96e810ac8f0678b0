"""metacog.config: the project's settings over the global ones, each value in its bounds, hostile files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import bash, captured, send, texts


def test_project_config_wins(isolated_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "metacog.toml").write_text("[vestibular]\nsame_action = 2\n")
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text("[vestibular]\nsame_action = 9\n")
    said = texts([bash("git status", cwd=str(project))] * 2)
    assert "2 times in a row" in said[1]


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("o2", "baseline_calls", 0),
        ("vestibular", "same_action", 0),
        ("vestibular", "same_action", -3),
        ("chronos", "calls", 0),
        ("digest", "max_chars", 99999),
        ("chronos", "calls", 2.5),
    ],
)
def test_out_of_range_settings_are_ignored(
    isolated_home: Path, section: str, key: str, value: object
) -> None:
    from metacog import schema

    merged = schema.merge(schema.DEFAULTS, {section: {key: value}})
    assert merged[section][key] == schema.DEFAULTS[section][key]
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text(f"[{section}]\n{key} = {value}\n")
    fail = captured("PostToolUseFailure", "Bash")
    assert [send(fail) is None for _ in range(3)] == [True, True, False]


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "huge"])
def test_a_hostile_project_config_is_not_read(tmp_path: Path, target: str) -> None:
    import os

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    link = project / ".claude" / "metacog.toml"
    if target == "fifo":
        os.mkfifo(link)
    elif target == "huge":
        link.write_text("# padding\n" * 100_000 + "[vestibular]\nsame_action = 2\n")
    else:
        link.symlink_to(target)
    said = texts([bash("git status", cwd=str(project))] * 4)
    assert said[:3] == ["", "", ""] and "4 times in a row" in said[3]  # defaults apply
