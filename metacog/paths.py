"""Where metacog keeps its files: one function resolves every directory.

`METACOG_HOME` wins (tests, and people who want everything in one place); otherwise
platformdirs: the user state dir for session state and logs, the user data dir for
learnings, the user config dir for config. Resolving never touches the disk.

`import platformdirs` costs about 15 ms (FACTS.md), most of a hot-path budget of
20 ms, so the runtime remembers what platformdirs answered (`remember`, run at
bootstrap and at each SessionStart) next to its interpreter, keyed by the variables
that decide it; a hook call that finds a matching memo skips the import.
"""

from __future__ import annotations

import os
import sys

APP = "metacog"
KINDS = ("state", "data", "config")
_MEMO = os.path.join(sys.prefix, "metacog-dirs.json")
_KEY_VARS = ("HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME")
_RESOLVED: dict[tuple[str, ...], dict[str, str]] = {}


def _key() -> list[str]:
    return [os.environ.get(name, "") for name in _KEY_VARS]


def _from_platformdirs() -> dict[str, str]:
    import platformdirs  # ~15 ms; see the module docstring

    return {
        "state": platformdirs.user_state_dir(APP, appauthor=False),
        "data": platformdirs.user_data_dir(APP, appauthor=False),
        "config": platformdirs.user_config_dir(APP, appauthor=False),
    }


def _from_memo() -> dict[str, str] | None:
    from metacog import fastjson

    try:
        with open(_MEMO, "rb") as fh:
            memo = fastjson.loads(fh.read(8192))
    except (OSError, ValueError):
        return None
    if isinstance(memo, dict) and memo.get("key") == _key():
        dirs = memo.get("dirs")
        if isinstance(dirs, dict) and all(isinstance(dirs.get(k), str) for k in KINDS):
            return dirs
    return None


def dirs() -> dict[str, str]:
    """The three directories, as absolute path strings (not created)."""
    home = os.environ.get("METACOG_HOME")
    if home:
        home = os.path.abspath(os.path.expanduser(home))
        return {"state": os.path.join(home, "state"), "data": os.path.join(home, "data"),
                "config": os.path.join(home, "config")}
    # One hook call asks for several directories: the memo file is read once per
    # environment, not once per question.
    key = tuple(_key())
    if key not in _RESOLVED:
        _RESOLVED.clear()
        _RESOLVED[key] = _from_memo() or _from_platformdirs()
    return dict(_RESOLVED[key])


def remember() -> None:
    """Write the memo for the current environment (best-effort; never raises).

    Only inside metacog's own runtime (its folder holds `.ready`), and not when
    METACOG_HOME decides: anywhere else `sys.prefix` is somebody's interpreter.
    """
    from metacog import fastjson
    from metacog.fsutil import atomic_write

    if os.environ.get("METACOG_HOME") or not os.path.exists(os.path.join(sys.prefix, ".ready")):
        return

    try:
        atomic_write(_MEMO, fastjson.dumps({"key": _key(), "dirs": _from_platformdirs()}))
    except Exception:  # noqa: BLE001, S110 - the memo is an optimisation only
        pass


def state_dir() -> str:
    return dirs()["state"]


def data_dir() -> str:
    return dirs()["data"]


def config_dir() -> str:
    return dirs()["config"]
