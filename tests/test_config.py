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


def test_replay_parses_the_same_settings_text_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each replay writes its settings into a home of its own: while replay holds the settings
    (config.HELD), a text parsed once is not parsed again, wherever it is; another text is."""
    try:
        import tomllib
    except ImportError:  # Python 3.10, as metacog.config reads it
        import tomli as tomllib  # type: ignore[no-redef]

    from metacog import config

    parsed: list[str] = []
    loads = tomllib.loads

    def counting(text: str) -> dict:
        parsed.append(text)
        return loads(text)

    monkeypatch.setattr(tomllib, "loads", counting)
    monkeypatch.setattr(config, "HELD", {})
    monkeypatch.setattr(config, "_READ", {})
    for n, text in enumerate(["[o2]\nenabled = false\n", "[o2]\nenabled = false\n", "[o2]\n"]):
        path = tmp_path / f"home{n}" / "config.toml"
        path.parent.mkdir()
        path.write_text(text)
        assert config.parse_toml(str(path)) == loads(text)
    assert parsed == ["[o2]\nenabled = false\n", "[o2]\n"]
    monkeypatch.setattr(config, "HELD", None)  # the live hook: by path and stamp only
    assert config.parse_toml(str(tmp_path / "home0" / "config.toml")) == {"o2": {"enabled": False}}
    assert len(parsed) == 3
