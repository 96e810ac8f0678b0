"""The protocol of metacog/protocol.py as hooks/client.pl and hooks/run.sh carry it: the
same values in the three files, and the real client against a listener speaking it."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from metacog import hook, protocol, resident
from metacog.server import parse

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "hooks" / "client.pl"
RUN_SH = (ROOT / "hooks" / "run.sh").read_text()
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="the client is Perl")


def perl_values() -> dict[str, object]:
    """client.pl's `my $NAME = value;` lines at the top level, as Python values."""
    values: dict[str, object] = {}
    for name, value in re.findall(r"^my \$([A-Z_]+) = (.+?);$", CLIENT.read_text(), re.MULTILINE):
        if value.startswith("'"):
            values[name] = value.strip("'").encode()
        else:
            shift = re.fullmatch(r"(\d+) << (\d+)", value)
            values[name] = int(shift[1]) << int(shift[2]) if shift else int(value)
    return values


def test_the_client_carries_the_protocols_values() -> None:
    values = perl_values()
    assert values == {
        "SOCKET": protocol.SOCKET.encode(),
        "MAGIC": protocol.MAGIC,
        "TAKEN": protocol.TAKEN,
        "ENV_CAP": protocol.ENV_CAP,
        "TAKE_SECONDS": protocol.TAKE_SECONDS,
        "CALL_SECONDS": protocol.CALL_SECONDS,
        "NOT_TAKEN": protocol.NOT_TAKEN,
        "LATE": protocol.LATE,
        "DONE": protocol.DONE,
    }


def test_the_client_uses_its_values_not_literals() -> None:
    code = "\n".join(
        line.split("#", 1)[0]
        for line in CLIENT.read_text().splitlines()
        if not line.startswith("my $")
    )
    assert not re.search(r"\bexit [0-9]", code)  # every exit says which of the protocol's it is
    assert not re.search(r"\balarm\s*\(?\s*[0-9]", code)
    assert "metacog1" not in code and "hook.sock" not in code


def test_run_sh_and_the_resident_agree_with_the_protocol() -> None:
    assert f'[ -S "$R/resident/{protocol.SOCKET}" ]' in RUN_SH
    assert os.path.basename(resident.folder()) == "resident"
    # Only the protocol's DONE ends run.sh; anything else runs the hook with stdin untouched.
    assert f'client.pl" "$R/resident" 2>>"$L" && exit {protocol.DONE}' in RUN_SH
    assert f"[ $? = {protocol.LATE} ] && M=late" in RUN_SH
    assert (
        resident.SOCKET == protocol.SOCKET
        and resident.WATCHDOG_SECONDS == protocol.WATCHDOG_SECONDS
    )


def test_the_bounds_fit_inside_claude_codes_timeout() -> None:
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    shortest = min(
        h["timeout"]
        for event in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SubagentStop")
        for group in hooks[event]
        for h in group["hooks"]
    )
    assert protocol.TAKE_SECONDS + protocol.WATCHDOG_SECONDS < protocol.CALL_SECONDS < shortest
    assert len({protocol.NOT_TAKEN, protocol.LATE, protocol.DONE}) == 3


class Listener:
    """A socket in a private folder that answers the way `first` says: the real client's
    other side, without the resident process behind it."""

    def __init__(self, folder: Path, first: bytes) -> None:
        folder.mkdir(mode=0o700)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(folder / protocol.SOCKET))
        self.sock.listen(1)
        self.received = b""
        self.thread = threading.Thread(target=self.serve, args=(first,), daemon=True)
        self.thread.start()

    def serve(self, first: bytes) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(10)
            try:
                conn.sendall(first)
                while chunk := conn.recv(1 << 16):
                    self.received += chunk
                conn.sendall(b'{"reply": 1}')
            except OSError:
                pass  # the client left: what it sent is what the test looks at

    def close(self) -> None:
        self.thread.join(timeout=15)
        self.sock.close()


def run_client(folder: Path, payload: bytes) -> subprocess.CompletedProcess:
    script = f'perl -T "{CLIENT}" "{folder}"; echo "rc=$?"; cat'
    return subprocess.run(
        ["sh", "-c", script],
        input=payload,
        capture_output=True,
        timeout=30,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MARK": "x=1"},
    )


@needs_perl
def test_a_taken_call_carries_magic_environment_and_payload(tmp_path: Path) -> None:
    listener = Listener(tmp_path / "resident", protocol.TAKEN)
    out = run_client(tmp_path / "resident", b'{"payload": true}')
    listener.close()
    assert (
        out.stdout == b'{"reply": 1}' + f"rc={protocol.DONE}\n".encode()
    )  # stdin all read: `cat` gets none
    env, raw = parse(listener.received)
    assert env["MARK"] == "x=1" and raw == b'{"payload": true}'
    assert len(listener.received) < protocol.ENV_CAP + hook.STDIN_CAP


@needs_perl
def test_any_other_first_byte_is_not_taken_and_stdin_stays(tmp_path: Path) -> None:
    listener = Listener(tmp_path / "resident", b"-")
    out = run_client(tmp_path / "resident", b"payload")
    listener.close()
    assert out.stdout == f"rc={protocol.NOT_TAKEN}\n".encode() + b"payload"
    assert listener.received == b""


@pytest.mark.slow
@needs_perl
def test_a_call_nobody_takes_in_time_is_late_and_stdin_stays(tmp_path: Path) -> None:
    listener = Listener(tmp_path / "resident", b"")  # connected, never taken: busy, or stopped
    out = run_client(tmp_path / "resident", b"payload")
    listener.close()
    assert out.stdout == f"rc={protocol.LATE}\n".encode() + b"payload"
    assert listener.received == b""
