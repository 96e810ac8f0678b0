"""Shared fixtures: every test runs with its own metacog home; none may touch the real one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED = [json.loads(line) for line in (FIXTURES / "hook-inputs-2.1.328.jsonl").read_text().splitlines()]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """METACOG_HOME and HOME point into tmp_path, so a test that forgets cannot touch ~."""
    home = tmp_path / "metacog-home"
    monkeypatch.setenv("METACOG_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "METACOG_DISABLE"):
        monkeypatch.delenv(var, raising=False)
    return home


def captured(event: str, tool: str | None = None, **changes: object) -> dict:
    """A deep copy of the first captured payload of that event (and tool), with changes."""
    for payload in CAPTURED:
        if payload["hook_event_name"] == event and (tool is None or payload.get("tool_name") == tool):
            out = copy.deepcopy(payload)
            out.update(changes)
            return out
    raise LookupError(f"no captured {event} {tool}")
