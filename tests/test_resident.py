"""The resident process and its client, as hooks/run.sh uses them: real processes,
the real Perl client, captured payloads. The runtime is a real venv whose only package
is this checkout (a .pth file), marked ready the way hooks/bootstrap.py marks it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from hooktest import captured
from hypothesis import given
from hypothesis import strategies as st

from metacog import resident

ROOT = Path(__file__).resolve().parents[1]
VERSION = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())["version"]
RUN_SH = ROOT / "hooks" / "run.sh"
SH = shutil.which("sh") or "/bin/sh"  # by its path: one test runs run.sh with an empty PATH

# Where Perl is missing no resident ever starts (test_without_perl_... shows the calls still answer).
needs_perl = pytest.mark.skipif(shutil.which("perl") is None, reason="the resident path needs Perl")


def make_runtime(data: Path) -> Path:
    """`data`/runtime/<version>: a venv that imports metacog from this checkout."""
    runtime = data / "runtime" / VERSION
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(runtime)], check=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(runtime), "platbase": str(runtime)})
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "metacog-checkout.pth").write_text(str(ROOT) + "\n")
    (runtime / ".ready").write_text(f"{VERSION}\n{sys.executable}\n")
    return runtime


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "plugin-data"
    make_runtime(folder)
    yield folder
    stop(folder / "runtime" / VERSION / "resident")


def stop(home: Path) -> None:
    try:
        os.kill(int((home / "pid").read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def hook_env(data: Path, home: Path, **extra: str) -> dict[str, str]:
    return {"CLAUDE_PLUGIN_DATA": str(data), "METACOG_HOME": str(home), "HOME": str(home.parent),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **extra}


def run_sh(payload: dict | bytes, env: dict[str, str], *mode: str) -> subprocess.CompletedProcess:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([SH, str(RUN_SH), *mode], input=raw, capture_output=True, env=env, timeout=30, check=False)


def wait_for(condition, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def alive(home: Path) -> bool:
    try:
        os.kill(int((home / "pid").read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def start_session(data: Path, env: dict[str, str]) -> Path:
    """SessionStart through run.sh; returns the resident folder once its socket is up."""
    out = run_sh(captured("SessionStart"), env, "session-start")
    assert (out.returncode, out.stderr) == (0, b"")
    home = data / "runtime" / VERSION / "resident"
    assert wait_for(lambda: (home / resident.SOCKET).is_socket()), (home / "resident.log").read_text()
    return home


def failures(n: int) -> list[dict]:
    return [captured("PostToolUseFailure", "Bash", tool_use_id=f"toolu_resident_{i}") for i in range(n)]


def replies(outs: list[subprocess.CompletedProcess]) -> list[str]:
    assert all((o.returncode, o.stderr) == (0, b"") for o in outs)
    return [o.stdout.decode() for o in outs]


@needs_perl
def test_resident_answers_exactly_as_the_hook_would(data: Path, tmp_path: Path) -> None:
    direct_env = hook_env(data, tmp_path / "direct", METACOG_RESIDENT="0")
    run_sh(captured("SessionStart"), direct_env, "session-start")
    expected = replies([run_sh(p, direct_env) for p in failures(5)])
    assert not (data / "runtime" / VERSION / "resident" / resident.SOCKET).exists()  # switched off

    env = hook_env(data, tmp_path / "resident")
    start_session(data, env)
    # Without its interpreter run.sh cannot run the hook itself: what answers now is the resident.
    (data / "runtime" / VERSION / "bin" / "python").rename(data / "runtime" / VERSION / "bin" / "moved")
    got = replies([run_sh(p, env) for p in failures(5)])
    assert got == expected
    assert "the same error 3 times" in got[2] and got[:2] == ["", ""]
    # The caller's environment decided where the state went.
    assert list((tmp_path / "resident" / "state" / "sessions").glob("*.json"))


@needs_perl
def test_a_locale_perl_does_not_know_leaves_no_warning(data: Path, tmp_path: Path) -> None:
    env = hook_env(data, tmp_path / "home", LC_ALL="xx_YY.UTF-8")
    start_session(data, env)
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]
    log = data / "hook-stderr.log"
    assert not log.exists() or log.read_text() == ""


@needs_perl
def test_each_call_runs_in_its_callers_environment(data: Path, tmp_path: Path) -> None:
    start_session(data, hook_env(data, tmp_path / "first"))
    other = hook_env(data, tmp_path / "second")
    replies([run_sh(p, other) for p in failures(3)])
    assert list((tmp_path / "second" / "state" / "sessions").glob("*.json"))
    assert not list((tmp_path / "first" / "state" / "sessions").glob("*.json"))
    disabled = hook_env(data, tmp_path / "third", METACOG_DISABLE="1")
    assert replies([run_sh(p, disabled) for p in failures(3)]) == ["", "", ""]
    assert not (tmp_path / "third").exists()


@needs_perl
def test_a_dead_resident_means_the_hook_runs_itself(data: Path, tmp_path: Path) -> None:
    env = hook_env(data, tmp_path / "home")
    home = start_session(data, env)
    stop(home)
    assert wait_for(lambda: not alive(home))
    assert (home / resident.SOCKET).is_socket()  # left behind: connecting is refused
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]


def test_without_perl_no_resident_starts_and_calls_still_answer(data: Path, tmp_path: Path) -> None:
    env = hook_env(data, tmp_path / "home", PATH=str(tmp_path / "empty-bin"))
    run_sh(captured("SessionStart"), env, "session-start")
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]
    assert not (data / "runtime" / VERSION / "resident" / resident.SOCKET).exists()


@needs_perl
def test_garbage_on_the_socket_is_dropped_and_the_next_call_served(data: Path, tmp_path: Path) -> None:
    env = hook_env(data, tmp_path / "home")
    home = start_session(data, env)
    for junk in (b"", b"GET / HTTP/1.0\r\n\r\n", resident.MAGIC + b"\xff\xff\xff\xff", resident.MAGIC + b"\0\0\0\x05ab"):
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(home / resident.SOCKET))
            conn.sendall(junk)
            conn.shutdown(socket.SHUT_WR)
            assert conn.recv(100) == b""
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]
    assert alive(home)


@needs_perl
def test_one_resident_per_runtime_and_it_leaves_when_its_socket_goes(data: Path, tmp_path: Path) -> None:
    env = hook_env(data, tmp_path / "home")
    home = start_session(data, env)
    first = int((home / "pid").read_text())
    # A second one (another SessionStart racing this one) finds the lock taken and leaves.
    code = "from metacog.resident import serve; serve()"
    second = subprocess.run([str(data / "runtime" / VERSION / "bin" / "python"), "-I", "-c", code],
                            capture_output=True, timeout=30, check=False)
    assert (second.returncode, second.stderr) == (0, b"")
    assert int((home / "pid").read_text()) == first and alive(home)
    # The runtime rebuilt or removed: the socket is no longer its own, and it ends.
    (home / resident.SOCKET).unlink()
    assert wait_for(lambda: not alive(home))


@needs_perl
def test_a_stuck_call_ends_the_process_and_says_where(tmp_path: Path) -> None:
    """The watchdog: a call past WATCHDOG_SECONDS ends the resident process; the client
    gives up in silence. (The hook is made to hang; the watchdog is what is tested.)"""
    home = tmp_path / "resident"
    code = ("import sys, time; sys.path.insert(0, sys.argv[1])\n"
            "from metacog import hook, resident\n"
            "resident.WATCHDOG_SECONDS = 1\n"
            "hook.handle = lambda raw, state_dir: time.sleep(60)\n"
            "resident.serve(sys.argv[2])\n")
    server = subprocess.Popen([sys.executable, "-I", "-c", code, str(ROOT), str(home)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (home / resident.SOCKET).is_socket())
        client = subprocess.run(["perl", str(ROOT / "hooks" / "client.pl"), str(home)],
                                input=json.dumps(failures(1)[0]).encode(), capture_output=True, timeout=30, check=False)
        assert (client.returncode, client.stdout) == (0, b"")
        assert server.wait(timeout=30) != 0
        assert "Timeout" in (home / "resident.log").read_text()
    finally:
        server.kill()


def test_idle_resident_leaves(tmp_path: Path) -> None:
    home = tmp_path / "resident"
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from metacog import resident\n"
            "resident.IDLE_SECONDS = 0.5; resident.TICK_SECONDS = 0.1\n"
            "resident.serve(sys.argv[2])\n")
    server = subprocess.run([sys.executable, "-I", "-c", code, str(ROOT), str(home)], capture_output=True,
                            timeout=30, check=False)
    assert (server.returncode, server.stderr) == (0, b"")
    assert not (home / resident.SOCKET).exists()


@needs_perl
def test_client_without_a_resident_exits_3_and_leaves_stdin(tmp_path: Path) -> None:
    script = ROOT / "hooks" / "client.pl"
    # stdin untouched: the shell's `cat` after the client still reads all of it.
    out = subprocess.run(["sh", "-c", f'perl "{script}" "{tmp_path}"; echo "rc=$?"; cat'], input=b"payload",
                         capture_output=True, timeout=30, check=False)
    assert out.stdout == b"rc=3\npayload"
    out = subprocess.run(["sh", "-c", f'perl "{script}" "{tmp_path / "missing"}"; echo "rc=$?"'],
                         capture_output=True, timeout=30, check=False)
    assert out.stdout == b"rc=3\n"


def test_folder_open_to_others_is_refused(data: Path, tmp_path: Path) -> None:
    home = data / "runtime" / VERSION / "resident"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    env = hook_env(data, tmp_path / "home")
    run_sh(captured("SessionStart"), env, "session-start")
    time.sleep(0.5)
    assert not (home / resident.SOCKET).exists()
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]


@pytest.mark.parametrize("request_bytes", [b"", b"metacog1", b"metacog1\0\0\0\x09A=1\0", b"metacog2\0\0\0\0{}",
                                           b"metacog1\0\x20\0\0{}"])
def test_parse_refuses_what_the_client_never_sends(request_bytes: bytes) -> None:
    assert resident.parse(request_bytes) is None


def test_parse_reads_the_clients_format() -> None:
    env = b"A=1\0B=x=y\0EMPTY=\0"
    assert resident.parse(b"metacog1" + len(env).to_bytes(4, "big") + env + b'{"k":1}') == (
        {"A": "1", "B": "x=y", "EMPTY": ""}, b'{"k":1}')
    assert resident.parse(b"metacog1\0\0\0\0") == ({}, b"")


@given(st.binary(max_size=512), st.booleans())
def test_parse_takes_any_bytes_without_raising(tail: bytes, magic: bool) -> None:
    parsed = resident.parse((resident.MAGIC if magic else b"") + tail)
    if parsed is not None:
        env, payload = parsed
        assert all(isinstance(k, str) and isinstance(v, str) and k for k, v in env.items())
        assert isinstance(payload, bytes)


@needs_perl
def test_a_call_that_grows_the_process_retires_it(tmp_path: Path) -> None:
    """A 64 MiB payload (the cap: answered with silence, as by the hook) leaves the process
    big for good; it answers that call, then leaves for a fresh one."""
    home = tmp_path / "resident"
    code = "import sys; sys.path.insert(0, sys.argv[1])\nfrom metacog import resident\nresident.serve(sys.argv[2])\n"
    server = subprocess.Popen([sys.executable, "-I", "-c", code, str(ROOT), str(home)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (home / resident.SOCKET).is_socket())
        client = [SH, "-c", f'perl "{ROOT / "hooks" / "client.pl"}" "{home}"; echo "rc=$?"']
        small = subprocess.run(client, input=json.dumps(failures(1)[0]).encode(), capture_output=True, timeout=30,
                               check=False)
        assert (small.stdout, server.poll()) == (b"rc=0\n", None)
        huge = subprocess.run(client, input=b'{"x": "' + b"a" * (64 << 20) + b'"}', capture_output=True,
                              timeout=60, check=False)
        assert huge.stdout == b"rc=0\n"
        assert server.wait(timeout=30) == 0
        assert not (home / resident.SOCKET).exists()
    finally:
        server.kill()
