"""The first run when the package index cannot be reached: said once, kept in the log, retried
as soon as the index answers again."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]


def bootstrap(data: Path, index: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PIP_INDEX_URL": index,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
    }
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "hooks" / "bootstrap.py"), str(data), VERSION],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


@pytest.mark.slow
def test_an_unreachable_index_is_said_once_logged_and_retried_when_it_answers(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: connection refused
    assert bootstrap(data, f"http://127.0.0.1:{port}/simple").returncode == 1
    base = data / "runtime"
    failed = json.loads((base / ".failed").read_text())
    assert failed["network"] is True and failed["version"] == VERSION
    tell = json.loads((base / ".tell").read_text())
    [line] = tell["systemMessage"].splitlines()
    assert line.startswith("metacog: its first-run setup could not reach the package index")
    assert "/metacog doctor" in line
    log = (data / "bootstrap.log").read_text()
    assert failed["cause"] in log and "See above" not in failed["cause"]
    assert "127.0.0.1" in log  # pip's own words on what it could not reach, not only its last lines
    # /metacog has no runtime to run doctor with: hooks/cli.sh says what the folder holds.
    launcher = ["sh", str(ROOT / "hooks" / "cli.sh"), str(data), "doctor"]
    told = subprocess.run(launcher, capture_output=True, text=True, timeout=30, check=True).stdout
    [line] = told.splitlines()
    assert "is half-built" in line and failed["cause"][:100] in line
    assert "It retries when the package index answers" in line and "bootstrap.log" in line
    # The session's start says it to the person once: run.sh prints the line Claude Code reads
    # as the hook's reply, then forgets it (the index still refuses: bootstrap does not retry).
    env = {
        "CLAUDE_PLUGIN_DATA": str(data),
        "HOME": str(tmp_path),
        "PATH": os.environ["PATH"],
        "PIP_INDEX_URL": f"http://127.0.0.1:{port}/simple",
        "PIP_CONFIG_FILE": os.devnull,
    }
    start = ["sh", str(ROOT / "hooks" / "run.sh"), "session-start"]
    said = subprocess.run(start, input=b"{}", capture_output=True, env=env, timeout=120, check=True)
    assert json.loads(said.stdout) == tell and not (base / ".tell").exists()
    again = subprocess.run(
        start, input=b"{}", capture_output=True, env=env, timeout=120, check=True
    )
    assert again.stdout == b""
    # The index still does not answer: no second attempt, nothing said again.
    assert bootstrap(data, f"http://127.0.0.1:{port}/simple").returncode == 1
    assert (
        json.loads((base / ".failed").read_text())["at"] == failed["at"]
        and not (base / ".tell").exists()
    )
    # Something answers there now: the next session tries again at once (and fails the same way
    # against this server, which speaks no HTTP: the same cause is not said twice).
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen(16)
        stop = threading.Event()

        def hang_up() -> None:  # accept and close at once: pip fails fast, not after its timeouts
            server.settimeout(0.2)
            while not stop.is_set():
                try:
                    server.accept()[0].close()
                except OSError:
                    continue

        thread = threading.Thread(target=hang_up)
        thread.start()
        try:
            assert bootstrap(data, f"http://127.0.0.1:{port}/simple").returncode == 1
        finally:
            stop.set()
            thread.join()
    assert json.loads((base / ".failed").read_text())["at"] > failed["at"]
    assert (data / "bootstrap.log").read_text().count("not prepared") == 2
