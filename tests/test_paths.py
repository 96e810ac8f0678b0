"""metacog's directories: what it computes on Linux without platformdirs is what platformdirs says."""

from __future__ import annotations

import os
import sys

import pytest

from metacog import paths


@pytest.mark.skipif(sys.platform != "linux", reason="the platformdirs shortcut is Linux's only")
@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"HOME": "/home/dev"}, id="plain"),
        pytest.param({"HOME": "/home/dev/"}, id="home-trailing-slash"),
        pytest.param(
            {
                "HOME": "/home/dev",
                "XDG_STATE_HOME": "/xdg/state",
                "XDG_DATA_HOME": "/xdg/data",
                "XDG_CONFIG_HOME": "/xdg/config",
            },
            id="xdg-absolute",
        ),
        pytest.param(
            {
                "HOME": "/home/dev",
                "XDG_STATE_HOME": "rel/state",
                "XDG_DATA_HOME": "",
                "XDG_CONFIG_HOME": "~/cfg",
            },
            id="xdg-relative-or-empty",
        ),
    ],
)
def test_the_xdg_shortcut_agrees_with_platformdirs(
    env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "METACOG_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert paths._from_xdg() == paths._from_platformdirs()


def test_a_relative_home_is_left_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "relative/home")
    assert paths._from_xdg() is None
    assert os.path.isabs(paths._from_platformdirs()["state"])
