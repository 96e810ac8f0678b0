"""Shared fixtures: every test runs with its own metacog home; none may touch the real one."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """METACOG_HOME and HOME point into tmp_path, so a test that forgets cannot touch ~."""
    home = tmp_path / "metacog-home"
    monkeypatch.setenv("METACOG_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "METACOG_DISABLE"):
        monkeypatch.delenv(var, raising=False)
    return home
