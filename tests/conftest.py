"""Shared fixtures: every test runs with its own metacog home; none may touch the real one;
none passes while a sense or a handler raised (the strict mode); and no run passes that
wrote into the checkout (tests/checkout_guard.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from metacog.fsutil import STRICT

# pytester: tests/test_contract.py runs the strict mode on a sample.
pytest_plugins = ("pytester", "checkout_guard")

RECORD = re.compile(r"^(.+) failed \(pid \d+\):$", re.MULTILINE)  # metacog.fsutil.strict's heading


@pytest.fixture(autouse=True)
def strict(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[None]:
    """Fails the test if a failure was contained during it: a sense's feel or hook, the
    facts, or the hook's boundary raised (in-process, in the resident process, or in a
    child process that inherits the environment). Each boundary also records it in the
    file $METACOG_STRICT names (metacog.fsutil.strict), made per test outside tmp_path: a
    test that damages its own folder or its log cannot hide a record.

    A test that makes something fail on purpose names it, as the record does:
    `@pytest.mark.sense_may_fail("sense vestibular")` ("facts", "hook", "sense X on_compaction");
    any other failure still fails it, and it asserts on the line metacog.log has.
    """
    marker = request.node.get_closest_marker("sense_may_fail")
    allowed = set(marker.args) if marker else set()
    if marker and not allowed:
        pytest.fail("sense_may_fail names what may fail: 'sense NAME', 'facts' or 'hook'")
    record = tmp_path_factory.mktemp("strict", numbered=True) / "raised"
    monkeypatch.setenv(STRICT, str(record))
    yield
    text = record.read_text(errors="replace") if record.exists() else ""
    unexpected = set(RECORD.findall(text)) - allowed
    if unexpected or (text and not RECORD.search(text)):
        pytest.fail(
            f"raised during this test: {', '.join(sorted(unexpected)) or '?'} (contained in "
            "production; a test that means it names it with sense_may_fail):\n" + text[-6000:],
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """METACOG_HOME and HOME point into tmp_path, so a test that forgets cannot touch ~."""
    home = tmp_path / "metacog-home"
    monkeypatch.setenv("METACOG_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "METACOG_DISABLE"):
        monkeypatch.delenv(var, raising=False)
    return home
