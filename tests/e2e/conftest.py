"""Fixtures for the end-to-end tests: the real Claude Code CLI, a scripted model,
and metacog's runtime prepared once per run.

- ``claude_bin`` (session): the CLI, from $METACOG_CLAUDE_BIN or the pinned CI
  install. Missing: the tests FAIL when $CI or $METACOG_REQUIRE_E2E is set (.ci/run
  sets the latter, on CI and on a developer's machine alike), and are skipped otherwise.
- ``plugin_runtime`` (session): a data folder whose ``runtime/<version>/`` venv was
  built once by the plugin's own ``hooks/bootstrap.py``.
- ``claude`` (function): a ClaudeHarness with a fresh HOME, METACOG_HOME and
  git-initialised project, no plugin.
- ``metacog_claude`` (function): the same with the prepared runtime linked into
  HOME's ``plugins/data/metacog-inline`` and ``--plugin-dir <repo root>`` on by
  default.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also under --import-mode=importlib

from claude_harness import (
    INLINE_DATA,
    REPO_ROOT,
    ClaudeHarness,
    find_claude_bin,
    plugin_version,
    scrubbed_environ,
)

BOOTSTRAP_TIMEOUT_S = 600


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "e2e: drives the real Claude Code CLI against a scripted model (tests/e2e)"
    )


REQUIRE_VARS = (
    "METACOG_REQUIRE_E2E",
    "CI",
)  # either set: a missing CLI fails the run, never skips it


def _required_by() -> str:
    """The variable that requires the e2e tests to run ('' when they may be skipped)."""
    for var in REQUIRE_VARS:
        if os.environ.get(var, "").strip().lower() not in ("", "0", "false", "no"):
            return var
    return ""


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    path, why = find_claude_bin()
    if path is None:
        required_by = _required_by()
        if required_by:
            pytest.fail(f"{required_by} is set and the e2e tests cannot run: {why}", pytrace=False)
        pytest.skip(why)
    return path


def _end_processes_under(folder: Path) -> None:
    """End the live processes whose program lies under `folder` (the runtimes' resident
    processes, which otherwise leave on their own a moment after their folder goes)."""
    import signal
    import time

    def under() -> list[int]:
        found = []
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                program = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if program.startswith(os.fsencode(folder)):
                found.append(int(entry.name))
        return found

    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in under():
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + 2
        while under() and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture(scope="session")
def e2e_root():
    """One folder for the whole run, outside pytest's basetemp (another pytest run
    on the same machine rotates basetemp folders away). Removed at the end unless
    E2E_KEEP=1. Neutral name on purpose: paths reach the model, see ClaudeHarness."""
    root = Path(tempfile.mkdtemp(prefix="cc-e2e-"))
    yield root
    _end_processes_under(
        root
    )  # the sessions' resident processes: every process a test starts, it ends
    if os.environ.get("E2E_KEEP", "") in ("", "0"):
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"\ne2e files kept in {root}")


@pytest.fixture(scope="session")
def plugin_runtime(claude_bin, e2e_root) -> Path:
    """A plugin data folder holding metacog's runtime, built once for the whole run.

    Built by running the plugin's own hooks/bootstrap.py (the step run.sh runs at
    SessionStart) with the interpreter running the tests. Test
    test_clean_install_bootstraps_runtime proves the real path (run.sh under the CLI).
    """
    bootstrap = REPO_ROOT / "hooks" / "bootstrap.py"
    if not bootstrap.is_file():
        pytest.fail(
            f"{bootstrap} is missing: the plugin's runtime cannot be prepared", pytrace=False
        )
    version = plugin_version()
    data = e2e_root / "prepared" / INLINE_DATA
    data.mkdir(parents=True)
    env = scrubbed_environ()
    env["METACOG_HOME"] = str(e2e_root / "prepared" / "mc-home")
    done = subprocess.run(
        [sys.executable, str(bootstrap), str(data), version],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOOTSTRAP_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    ready = data / "runtime" / version / ".ready"
    if done.returncode != 0 or not ready.exists():
        log = data / "bootstrap.log"
        pytest.fail(
            f"bootstrap.py exited {done.returncode}, {ready} "
            f"{'exists' if ready.exists() else 'missing'}\n"
            f"stdout: {done.stdout}\nstderr: {done.stderr}\n"
            f"bootstrap.log: {log.read_text() if log.exists() else '(none)'}",
            pytrace=False,
        )
    # The venv is used through a symlink from each test's HOME: prove that works.
    probe = ClaudeHarness(claude_bin, e2e_root)
    linked = probe.link_runtime(data)
    python = linked / "runtime" / version / "bin" / "python"
    check = subprocess.run(
        [str(python), "-I", "-c", "import sys, metacog.hook; print(sys.prefix)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check.returncode != 0:
        pytest.fail(
            f"the prepared runtime does not work through a symlink ({python}):\n"
            f"{check.stdout}{check.stderr}",
            pytrace=False,
        )
    return data


@pytest.fixture
def claude(claude_bin, e2e_root) -> ClaudeHarness:
    """Fresh HOME / METACOG_HOME / project; no plugin loaded."""
    return ClaudeHarness(claude_bin, e2e_root)


@pytest.fixture
def metacog_claude(claude, plugin_runtime) -> ClaudeHarness:
    """Fresh world with metacog loaded by --plugin-dir and its runtime ready."""
    claude.link_runtime(plugin_runtime)
    claude.plugin_dir = REPO_ROOT
    return claude
