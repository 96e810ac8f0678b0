"""Where metacog keeps its files: one function resolves every directory.

`METACOG_HOME` wins (tests, and people who want everything in one place); otherwise
platformdirs: the user state dir for session state and logs, the user data dir for
learnings, the user config dir for config. Resolving never touches the disk.

A process remembers what platformdirs answered for the variables that decide it (the
resident answers many calls with one import); nothing is remembered on disk: a memo
file once broke every hook of every project when it was damaged.
"""

from __future__ import annotations

import os
import sys

APP = "metacog"
KINDS = ("state", "data", "config")
_KEY_VARS = ("HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")
_RESOLVED: dict[tuple[str, ...], dict[str, str]] = {}


def _from_platformdirs() -> dict[str, str]:
    import platformdirs  # about 13 ms on a direct call after `json` (benchmarks/bench_hook.py)

    return {
        "state": platformdirs.user_state_dir(APP, appauthor=False),
        "data": platformdirs.user_data_dir(APP, appauthor=False),
        "config": platformdirs.user_config_dir(APP, appauthor=False),
    }


# On Linux, what platformdirs answers for the user dirs (its XDG rules: an absolute
# $XDG_*_HOME, else under an absolute $HOME), without importing it: platformdirs pulls
# pathlib and costs about 20 ms on a direct call (measured with -X importtime), a call
# the resident process does not answer. tests/test_paths.py checks both agree.
_XDG = (
    ("state", "XDG_STATE_HOME", "~/.local/state"),
    ("data", "XDG_DATA_HOME", "~/.local/share"),
    ("config", "XDG_CONFIG_HOME", "~/.config"),
)


def _from_xdg() -> dict[str, str] | None:
    if sys.platform != "linux" or not os.path.isabs(os.environ.get("HOME", "")):
        return None  # macOS, Windows, or no usable $HOME: platformdirs knows the fallbacks
    out = {}
    for kind, var, default in _XDG:
        base = os.environ.get(var, "")
        out[kind] = os.path.join(base if os.path.isabs(base) else os.path.expanduser(default), APP)
    return out


def metacog_home() -> str:
    """METACOG_HOME as an absolute path ('' when unset): a relative one is the caller's."""
    home = os.environ.get("METACOG_HOME")
    return os.path.abspath(os.path.expanduser(home)) if home else ""


def dirs() -> dict[str, str]:
    """The three directories, as absolute path strings (not created)."""
    home = metacog_home()
    if home:
        return {
            "state": os.path.join(home, "state"),
            "data": os.path.join(home, "data"),
            "config": os.path.join(home, "config"),
        }
    key = tuple(os.environ.get(name, "") for name in _KEY_VARS)
    if key not in _RESOLVED:
        _RESOLVED.clear()
        _RESOLVED[key] = _from_xdg() or _from_platformdirs()
    return dict(_RESOLVED[key])


def state_dir() -> str:
    return dirs()["state"]


def data_dir() -> str:
    return dirs()["data"]


def config_dir() -> str:
    return dirs()["config"]
