"""`metacog config show | get | set`: the files the hook reads, validated like the hook reads them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import clitest
import pytest
from clitest import cli, one_line_error

from metacog import config, paths, schema
from metacog.cli import settings

project = clitest.project


def global_file() -> Path:
    return Path(paths.config_dir()) / "config.toml"


def test_show_lists_every_setting_with_its_source(project: Path) -> None:
    result = cli("config", "show")
    assert result.exit_code == 0
    for section, values in schema.DEFAULTS.items():
        for key in values:
            assert f"{section}.{key} = " in result.stdout
    assert "(absent)" in result.stdout
    assert cli("config").stdout == result.stdout  # `config` alone shows


def test_set_writes_toml_that_the_hook_reads(project: Path, isolated_home: Path) -> None:
    result = cli("config", "set", "nociception.observe_at", "4")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"Set nociception.observe_at = 4 in {global_file()}\n"
    assert config.parse_toml(str(global_file())) == {"nociception": {"observe_at": 4}}
    effective = schema.load(paths.config_dir(), str(project))
    assert effective["nociception"]["observe_at"] == 4
    assert cli("config", "get", "nociception.observe_at").stdout == "4\n"


def test_project_setting_wins_and_show_says_where_from(project: Path) -> None:
    assert cli("config", "set", "o2.fill_warn", "0.8").exit_code == 0
    result = cli("config", "set", "o2.fill_warn", "0.6", "--project")
    assert result.exit_code == 0, result.output
    project_file = project / ".claude" / "metacog.toml"
    assert config.parse_toml(str(project_file)) == {"o2": {"fill_warn": 0.6}}
    assert cli("config", "get", "o2.fill_warn").stdout == "0.6\n"
    report = json.loads(cli("config", "show", "--json").stdout)
    assert report["settings"]["o2.fill_warn"] == {
        "value": 0.6,
        "source": "project",
        "file": str(project_file),
    }
    assert report["settings"]["o2.enabled"]["source"] == "default"
    line = next(ln for ln in cli("config", "show").stdout.splitlines() if "o2.fill_warn" in ln)
    assert line.split() == ["o2.fill_warn", "=", "0.6", "project", str(project_file)]
    # Setting the global value while the project overrides it says so.
    assert "which wins here" in cli("config", "set", "o2.fill_warn", "0.9").stdout


def test_set_keeps_other_settings_and_types(project: Path) -> None:
    global_file().parent.mkdir(parents=True)
    global_file().write_text("[chronos]\nminutes = 20\n\n[o2]\nenabled = false\n")
    for key, value in (
        ("chronos.calls", "30"),
        ("o2.velocity_factor", "2"),
        ("echo.enabled", "off"),
    ):
        assert cli("config", "set", key, value).exit_code == 0
    assert config.parse_toml(str(global_file())) == {
        "chronos": {"minutes": 20, "calls": 30},
        "o2": {"enabled": False, "velocity_factor": 2.0},
        "echo": {"enabled": False},
    }


def test_set_says_when_comments_were_not_kept(project: Path) -> None:
    global_file().parent.mkdir(parents=True)
    global_file().write_text("# my settings\n[chronos]\nminutes = 20\n")
    assert "comments were not kept" in cli("config", "set", "chronos.calls", "30").stdout


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        pytest.param(
            "chronos.minutes",
            "soon",
            "chronos.minutes is a whole number (like 20), not 'soon'",
            id="int",
        ),
        pytest.param(
            "chronos.minutes", "1.5", "chronos.minutes is a whole number", id="int-not-float"
        ),
        pytest.param(
            "o2.fill_warn", "lots", "o2.fill_warn is a number (like 0.7), not 'lots'", id="float"
        ),
        pytest.param("o2.fill_warn", "nan", "must be a finite number", id="nan"),
        pytest.param("o2.enabled", "maybe", "o2.enabled is true or false, not 'maybe'", id="bool"),
        pytest.param(
            "chronos.calls", "-3", "chronos.calls is from 1 to 100000, not '-3'", id="negative"
        ),
        pytest.param(
            "chronos.minuts",
            "3",
            "unknown setting 'chronos.minuts'; closest: chronos.minutes",
            id="typo",
        ),
        pytest.param(
            "chronos",
            "3",
            "'chronos' is a section; name one of its keys: chronos.enabled",
            id="section",
        ),
        pytest.param("nothing.here", "3", "unknown setting 'nothing.here'", id="unknown"),
        pytest.param(
            "chronos.minutes",
            "\u0663",
            "chronos.minutes takes ASCII digits",
            id="arabic-indic-digit",
        ),
        pytest.param(
            "o2.fill_warn",
            "\u0660.\u0665",
            "o2.fill_warn takes ASCII digits",
            id="arabic-indic-float",
        ),
    ],
)
def test_set_rejects_what_the_hook_would_ignore(
    project: Path, key: str, value: str, expected: str
) -> None:
    result = cli("config", "set", key, value)
    assert result.exit_code == 2
    assert expected in one_line_error(result)
    assert not global_file().exists()


def test_every_value_set_accepts_is_one_the_hook_uses(project: Path) -> None:
    for key in settings.all_keys():
        section, name = key.split(".")
        default = schema.DEFAULTS[section][name]
        value = settings.parse_value(
            key, str(default).lower() if isinstance(default, bool) else str(default)
        )
        assert settings.accepts(section, name, value), key
        assert schema.merge(schema.DEFAULTS, {section: {name: value}})[section][name] == value, key


@pytest.mark.parametrize(
    "args",
    [("o2.baseline_calls", "0"), ("digest.max_chars", "99999"), ("vestibular.same_action", "-1")],
)
def test_set_refuses_values_out_of_range(project: Path, args: tuple[str, str]) -> None:
    line = one_line_error(cli("config", "set", *args))
    assert args[0] in line


def test_show_names_ignored_entries(project: Path) -> None:
    global_file().parent.mkdir(parents=True)
    global_file().write_text('[chronos]\nminutes = "ten"\nminuts = 3\n[o3]\nx = 1\n')
    result = cli("config", "show")
    assert result.exit_code == 0
    assert "chronos.minutes = 20  " in result.stdout  # the default still applies
    assert '"ten" is not a number; the hook ignores it' in result.stdout
    assert "chronos.minuts" in result.stdout and "closest: chronos.minutes" in result.stdout


def test_a_broken_file_is_shown_then_an_error(project: Path) -> None:
    global_file().parent.mkdir(parents=True)
    global_file().write_text("[chronos\nminutes = 3\n")
    result = cli("config", "show")
    assert result.exit_code == 1
    assert "chronos.minutes = 20" in result.stdout
    assert "not valid TOML" in one_line_error(result)
    assert "fixed or deleted" in result.stderr
    assert "not valid TOML" in one_line_error(cli("config", "get", "chronos.minutes"))
    line = one_line_error(cli("config", "set", "chronos.minutes", "3"))
    assert "fix or delete it" in line
    assert global_file().read_text() == "[chronos\nminutes = 3\n"  # never overwritten


def test_a_huge_argument_is_not_echoed_back(project: Path) -> None:
    for args in (
        ("config", "set", "chronos.minutes", "x" * 131_072),
        ("config", "set", "k" * 131_072, "3"),
        ("config", "get", "y" * 131_072),
    ):
        line = one_line_error(cli(*args), code=2)
        assert len(line) < 1000


def test_a_deeply_nested_committed_config_is_one_clear_line(project: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "metacog.toml").write_text("a = " + "[" * 2048 + "]" * 2048 + "\n")
    result = cli("config", "show")
    assert "chronos.minutes = 20" in result.stdout  # the default
    assert (
        "nested too deeply" in one_line_error(result, code=1)
        and "internal error" not in result.stderr
    )
    assert schema.load(paths.config_dir(), str(project)) == schema.DEFAULTS


def test_set_refuses_a_section_that_is_not_a_table(project: Path) -> None:
    global_file().parent.mkdir(parents=True)
    global_file().write_text("chronos = 3\n")
    assert "is not a [chronos] table" in one_line_error(
        cli("config", "set", "chronos.minutes", "3")
    )


def test_set_write_is_atomic(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    global_file().parent.mkdir(parents=True)
    global_file().write_text("[chronos]\nminutes = 20\n")
    import os

    def no_space(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    line = one_line_error(cli("config", "set", "chronos.minutes", "30"))
    assert "cannot write" in line and "No space left on device" in line
    assert global_file().read_text() == "[chronos]\nminutes = 20\n"


def test_every_bound_names_a_number_setting_whose_default_it_admits() -> None:
    # schema.LIMITS is the only table of bounds: a misspelt key there would bound nothing.
    for (section, name), (low, high) in schema.LIMITS.items():
        default = schema.DEFAULTS[section][name]
        assert isinstance(default, (int, float)) and not isinstance(default, bool), (section, name)
        assert low <= default <= high, (section, name)


@pytest.mark.parametrize(
    ("section", "name"),
    [
        ("write-heavy", "ratio"),
        ("context-pressure", "min_fill"),
        ("o2", "velocity_factor"),
        ("learning", "compact_bytes"),
    ],
)
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_the_hook_ignores_numbers_that_are_not_finite(
    section: str, name: str, value: float
) -> None:
    assert (
        schema.merge(schema.DEFAULTS, {section: {name: value}})[section][name]
        == schema.DEFAULTS[section][name]
    )


@pytest.mark.parametrize(
    ("name", "low"),
    [
        ("half_life_days", 1),
        ("compact_bytes", 1024),
        ("stale_after_minutes", 1),
        ("promote_projects", 1),
    ],
)
def test_learning_settings_below_their_bound_keep_the_default(name: str, low: int) -> None:
    merged = schema.merge(schema.DEFAULTS, {"learning": {name: low - 1}})["learning"]
    assert merged[name] == schema.DEFAULTS["learning"][name]
    assert schema.merge(schema.DEFAULTS, {"learning": {name: low}})["learning"][name] == low


# --------------------------------------------------- --project writes only inside the project
def project_file(root: Path) -> Path:
    return root / ".claude" / "metacog.toml"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        pytest.param(
            lambda root, away: (root / ".claude").symlink_to(away, target_is_directory=True),
            ".claude is a symlink out of the project",
            id="claude-links-out",
        ),
        pytest.param(
            lambda root, away: (root / ".claude").symlink_to(root / "missing"),
            ".claude is a symlink out of the project",
            id="claude-links-nowhere",
        ),
        pytest.param(
            lambda root, away: (root / ".claude").write_text(""),
            ".claude is not a directory",
            id="claude-a-file",
        ),
    ],
)
def test_set_project_refuses_a_claude_folder_the_store_would_refuse(
    project: Path, tmp_path: Path, make: object, why: str
) -> None:
    away = tmp_path / "elsewhere"
    away.mkdir()
    make(project, away)
    line = one_line_error(cli("config", "set", "chronos.minutes", "3", "--project"))
    assert why in line and "make" in line and "without --project" in line
    assert list(away.iterdir()) == [] and not global_file().exists()
    assert not (project / "missing").exists()


def test_set_project_follows_a_claude_symlink_inside_the_project(project: Path) -> None:
    # As the learned-rule store does: a committed `.claude -> config/claude` stays in the project.
    (project / "config" / "claude").mkdir(parents=True)
    (project / ".claude").symlink_to(Path("config") / "claude")
    assert cli("config", "set", "chronos.minutes", "3", "--project").exit_code == 0
    written = project / "config" / "claude" / "metacog.toml"
    assert config.parse_toml(str(written)) == {"chronos": {"minutes": 3}}


@pytest.mark.parametrize("existing", [True, False], ids=["to-a-file", "dangling"])
def test_set_project_refuses_a_settings_file_that_is_a_symlink(
    project: Path, tmp_path: Path, existing: bool
) -> None:
    target = tmp_path / "shared.toml"
    if existing:
        target.write_text("[chronos]\nminutes = 20\n")
    project_file(project).parent.mkdir()
    project_file(project).symlink_to(target)
    line = one_line_error(cli("config", "set", "chronos.minutes", "3", "--project"))
    assert f"{project_file(project)} is a symlink" in line and "rm " in line
    assert project_file(project).is_symlink()
    if existing:
        assert target.read_text() == "[chronos]\nminutes = 20\n"
    else:
        assert not target.exists()


def test_set_project_is_not_stopped_by_a_symlinked_learned_rule_store(
    project: Path, tmp_path: Path
) -> None:
    # The store refuses its own file when it is a symlink; that says nothing about the settings file.
    (project / ".claude").mkdir()
    clitest.store_of(project).symlink_to(tmp_path / "elsewhere.jsonl")
    assert cli("config", "set", "chronos.minutes", "3", "--project").exit_code == 0
    assert config.parse_toml(str(project_file(project))) == {"chronos": {"minutes": 3}}


@pytest.mark.parametrize("damage", ["fifo", "folder"])
def test_set_project_is_not_stopped_by_a_damaged_learned_rule_store(
    project: Path, damage: str
) -> None:
    # locate's code says the store itself is refused, not `.claude`: the settings file is fine.
    (project / ".claude").mkdir()
    store_file = clitest.store_of(project)
    os.mkfifo(store_file) if damage == "fifo" else store_file.mkdir()
    assert cli("config", "set", "chronos.minutes", "3", "--project").exit_code == 0
    assert config.parse_toml(str(project_file(project))) == {"chronos": {"minutes": 3}}
