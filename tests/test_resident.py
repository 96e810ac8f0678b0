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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hooktest import captured
from hypothesis import given
from hypothesis import strategies as st

from metacog import protocol, resident
from metacog.server import parse

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
    # This checkout, and this interpreter's packages (platformdirs, for calls without METACOG_HOME).
    (Path(purelib) / "metacog-checkout.pth").write_text(
        f"{ROOT}\n{sysconfig.get_path('purelib')}\n"
    )
    (runtime / ".ready").write_text(f"{VERSION}\n{sys.executable}\n")
    return runtime


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "plugin-data"
    make_runtime(folder)
    yield folder
    end_residents(folder / "runtime" / VERSION)


@pytest.fixture(autouse=True, scope="module")
def no_resident_outlives_this_module(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every resident process a test here started has ended by the module's end."""
    yield
    left = started_under(tmp_path_factory.getbasetemp())
    for pid in left:
        end(pid)
    assert not left, f"resident processes left running: {left}"


def stop(home: Path) -> None:
    try:
        os.kill(int((home / "pid").read_text()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def end(pid: int) -> None:
    for sig in (signal.SIGCONT, signal.SIGKILL):  # SIGCONT: a stopped one too
        try:
            os.kill(pid, sig)
        except OSError:
            return


def started_under(folder: Path) -> set[int]:
    """Live processes whose program or script path lies under `folder` (Linux's /proc)."""
    found = set()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if (entry / "stat").read_text().rpartition(")")[2].split()[0] == "Z":
                continue  # ended, not yet reaped by its parent
        except OSError:
            continue
        if any(arg.startswith(os.fsencode(folder)) for arg in argv[:1]):
            found.add(int(entry.name))
    return found


def end_residents(runtime: Path) -> None:
    """End the runtime's resident processes, also one that a direct call started a moment
    ago (before it wrote its pid): with .ready gone, no call starts another."""
    (runtime / ".ready").unlink(missing_ok=True)
    home = runtime / "resident"
    for _ in range(200):
        pids = started_under(runtime)
        if (home / "pid").exists():
            stop(home)
        for pid in pids:
            end(pid)
        if not pids:
            return
        time.sleep(0.05)


def hook_env(data: Path, home: Path, **extra: str) -> dict[str, str]:
    return {
        "CLAUDE_PLUGIN_DATA": str(data),
        "METACOG_HOME": str(home),
        "HOME": str(home.parent),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **extra,
    }


def run_sh(
    payload: dict | bytes, env: dict[str, str], *mode: str, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [SH, str(RUN_SH), *mode],
        input=raw,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=30,
        check=False,
    )


def settled(env: dict[str, str], session: str) -> Path:
    """The session's state file, once the resident process has written the last call's:
    it holds the session's lock from before its reply until then (metacog.state.AFTER)."""
    from metacog import state

    state_dir = str(Path(env["METACOG_HOME"]) / "state")
    state.settled(state_dir, session)
    return Path(state.path_for(state_dir, session))


def wait_for(condition, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def alive(home: Path) -> bool:
    try:
        return alive_pid(int((home / "pid").read_text()))
    except (OSError, ValueError):
        return False


def start_session(data: Path, env: dict[str, str]) -> Path:
    """SessionStart through run.sh; returns the resident folder once its socket is up."""
    out = run_sh(captured("SessionStart"), env, "session-start")
    assert (out.returncode, out.stderr) == (0, b"")
    home = data / "runtime" / VERSION / "resident"
    assert wait_for(lambda: (home / resident.SOCKET).is_socket()), (
        home / "resident.log"
    ).read_text()
    return home


def resident_only(data: Path) -> None:
    """Move the runtime's interpreter away: run.sh cannot run the hook itself any more, so
    whatever answers from now on is the resident process."""
    python = data / "runtime" / VERSION / "bin" / "python"
    python.rename(python.with_name("python.away"))


def resident_process(home: Path, patch: str = "") -> subprocess.Popen:
    """A resident process of this checkout serving `home`, started and listening; `patch`
    runs first (a test's changes to the code around what it tests)."""
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1])\nfrom metacog import hook, protocol, resident, server\n"
        f"{patch}\nserver.serve(sys.argv[2])\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-I", "-c", code, str(ROOT), str(home)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert wait_for(lambda: (home / resident.SOCKET).is_socket() or server.poll() is not None)
    return server


def client(home: Path, then: str = "") -> list[str]:
    """hooks/client.pl as run.sh runs it, its exit status printed, then `then`."""
    return [
        SH,
        "-c",
        f'perl -T "{ROOT / "hooks" / "client.pl"}" "{home}"; echo "rc=$?"; {then or ":"}',
    ]


def failures(n: int, **changes: str) -> list[dict]:
    return [
        captured("PostToolUseFailure", "Bash", tool_use_id=f"toolu_resident_{i}", **changes)
        for i in range(n)
    ]


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
    resident_only(data)
    got = replies([run_sh(p, env) for p in failures(5)])
    assert got == expected
    assert "the same error 3 times" in got[2] and got[:2] == ["", ""]
    # The caller's environment decided where the state went.
    assert list((tmp_path / "resident" / "state" / "sessions").glob("*.json"))


@needs_perl
@pytest.mark.parametrize(
    "setting",
    [
        {"LC_ALL": "xx_YY.UTF-8"},  # a locale Perl does not know: warnings
        {"PERL5OPT": "-MO=Deparse"},
        {"PERL5LIB": "/nonexistent"},
    ],
)
def test_the_persons_perl_settings_do_not_reach_the_client(
    data: Path, tmp_path: Path, setting: dict
) -> None:
    env = hook_env(data, tmp_path / "home", **setting)
    start_session(data, env)
    resident_only(data)
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]
    log = data / "hook-stderr.log"
    assert not log.exists() or log.read_text() == ""


@needs_perl
def test_each_call_runs_in_its_callers_environment_and_nothing_of_it_stays(
    data: Path, tmp_path: Path
) -> None:
    start_session(data, hook_env(data, tmp_path / "first"))
    resident_only(data)
    other = hook_env(data, tmp_path / "second")
    assert "the same error 3 times" in replies([run_sh(p, other) for p in failures(3)])[2]
    assert list((tmp_path / "second" / "state" / "sessions").glob("*.json"))
    assert not list((tmp_path / "first" / "state" / "sessions").glob("*.json"))
    # Without METACOG_HOME the next caller's files go where platformdirs puts them: the
    # previous caller's METACOG_HOME must not linger in the resident process.
    xdg = tmp_path / "xdg"
    plain = {k: v for k, v in hook_env(data, tmp_path / "unused").items() if k != "METACOG_HOME"}
    plain.update(
        XDG_STATE_HOME=str(xdg / "state"),
        XDG_DATA_HOME=str(xdg / "data"),
        XDG_CONFIG_HOME=str(xdg / "config"),
    )
    assert "the same error 3 times" in replies([run_sh(p, plain) for p in failures(3)])[2]
    assert list((xdg / "state" / "metacog" / "sessions").glob("*.json"))
    assert len(list((tmp_path / "second" / "state" / "sessions").glob("*.json"))) == 1


@needs_perl
def test_the_resident_does_not_keep_its_last_callers_folder(data: Path, tmp_path: Path) -> None:
    home = start_session(data, hook_env(data, tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    replies([run_sh(p, hook_env(data, tmp_path / "home"), cwd=project) for p in failures(1)])
    cwd = Path(f"/proc/{int((home / 'pid').read_text())}/cwd")
    if not cwd.parent.exists():
        pytest.skip("no /proc here to read another process's working directory")
    assert cwd.resolve() == home.resolve()


@needs_perl
def test_the_resident_answers_a_sessions_end_and_its_next_start_too(
    data: Path, tmp_path: Path
) -> None:
    # Each would otherwise cost a Python start and imports, ten times its own work.
    env = hook_env(data, tmp_path / "home")
    start_session(data, env)
    resident_only(data)  # from here, only the resident can do what the marks show
    session = captured("SessionStart")["session_id"]
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    assert (
        "the same error 3 times"
        in replies([run_sh(p, env) for p in failures(3, cwd=str(project))])[2]
    )
    marks = tmp_path / "home" / "state" / "learning" / "marks"
    ended = marks / f"{session}.ended"
    end = captured("SessionStart", hook_event_name="SessionEnd", reason="other", cwd=str(project))
    assert replies([run_sh(end, env, "session-end")]) == [""]
    # Learned from once the reply is out (state.after_reply).
    assert wait_for(lambda: (marks / f"{session}.done").is_file())
    assert ended.is_file()  # the session was evaluated as ended
    resume = captured("SessionStart", source="resume", cwd=str(project))
    assert replies([run_sh(resume, env, "session-start")]) == [""]
    assert not ended.exists()  # resumed: running again until its next end
    log = data / "hook-stderr.log"
    assert not log.exists() or log.read_text() == ""


@needs_perl
def test_a_relative_metacog_home_is_the_callers_even_after_the_reply(
    data: Path, tmp_path: Path
) -> None:
    # SessionEnd's learning runs once the reply is out, back in the resident's own folder.
    start_session(data, hook_env(data, tmp_path / "first"))
    resident_only(data)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    env = {**hook_env(data, tmp_path / "unused"), "METACOG_HOME": "rel-home", "PWD": str(project)}
    end = captured("SessionStart", hook_event_name="SessionEnd", reason="other", cwd=str(project))
    calls = [run_sh(p, env, cwd=project) for p in failures(3, cwd=str(project))]
    replies([*calls, run_sh(end, env, "session-end", cwd=project)])
    marks = project / "rel-home" / "state" / "learning" / "marks"
    assert wait_for(lambda: (marks / f"{end['session_id']}.done").is_file())
    assert sorted(p.name for p in (project / "rel-home").iterdir()) == ["data", "state"]
    assert not list(data.rglob("rel-home"))  # nothing in the resident's own folder


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
def test_garbage_on_the_socket_is_dropped_and_the_next_call_served(
    data: Path, tmp_path: Path
) -> None:
    env = hook_env(data, tmp_path / "home")
    home = start_session(data, env)
    resident_only(data)
    for junk in (
        b"",
        b"GET / HTTP/1.0\r\n\r\n",
        protocol.MAGIC + b"\xff\xff\xff\xff",
        protocol.MAGIC + b"\0\0\0\x05ab",
    ):
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(str(home / resident.SOCKET))
            conn.sendall(junk)
            conn.shutdown(socket.SHUT_WR)
            assert conn.recv(100) == b"+"  # taken; then nothing: not a call
            assert conn.recv(100) == b""
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]
    assert alive(home)


@pytest.mark.slow
@needs_perl
def test_one_resident_per_runtime_and_it_leaves_when_its_socket_goes(
    data: Path, tmp_path: Path
) -> None:
    env = hook_env(data, tmp_path / "home")
    home = start_session(data, env)
    first = int((home / "pid").read_text())
    # A second one (another SessionStart racing this one) finds the lock taken and leaves.
    code = "from metacog.server import serve; serve()"
    second = subprocess.run(
        [str(data / "runtime" / VERSION / "bin" / "python"), "-I", "-c", code],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (second.returncode, second.stderr) == (0, b"")
    assert int((home / "pid").read_text()) == first and alive(home)
    # The runtime rebuilt or removed: the socket is no longer its own, and it ends.
    (home / resident.SOCKET).unlink()
    assert wait_for(lambda: not alive(home))


@pytest.mark.slow
@needs_perl
def test_a_stuck_call_ends_the_process_and_says_where(tmp_path: Path) -> None:
    """The watchdog: a call past WATCHDOG_SECONDS ends the resident process; the client
    gives up in silence. (The hook is made to hang; the watchdog is what is tested.)"""
    home = tmp_path / "resident"
    server = resident_process(
        home, "protocol.WATCHDOG_SECONDS = 1\nhook.handle = lambda raw, state_dir: time.sleep(60)"
    )
    try:
        out = subprocess.run(
            client(home),
            input=json.dumps(failures(1)[0]).encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert out.stdout == b"rc=0\n"
        assert server.wait(timeout=30) != 0
        assert "Timeout" in (home / "resident.log").read_text()
    finally:
        server.kill()


def test_idle_resident_leaves(tmp_path: Path) -> None:
    home = tmp_path / "resident"
    server = resident_process(home, "resident.IDLE_SECONDS = 0.5; server.TICK_SECONDS = 0.1")
    assert server.wait(timeout=30) == 0
    assert not (home / resident.SOCKET).exists()


@needs_perl
def test_client_without_a_resident_exits_3_and_leaves_stdin(tmp_path: Path) -> None:
    # stdin untouched: the shell's `cat` after the client still reads all of it.
    for folder in (tmp_path, tmp_path / "missing"):
        out = subprocess.run(
            client(folder, "cat"), input=b"payload", capture_output=True, timeout=30, check=False
        )
        assert out.stdout == b"rc=3\npayload"


def test_folder_open_to_others_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "resident"
    home.mkdir()
    home.chmod(0o755)
    assert resident_process(home).wait(timeout=30) == 0
    assert sorted(home.iterdir()) == []


@needs_perl
def test_client_talks_only_to_a_private_folder(tmp_path: Path) -> None:
    """Even with a live socket in it, a folder others could enter gets nothing: the
    environment the client sends may hold secrets."""
    home = tmp_path / "resident"
    server = resident_process(home)
    try:
        home.chmod(0o750)
        assert (
            subprocess.run(
                client(home, "cat"), input=b"payload", capture_output=True, timeout=30, check=False
            ).stdout
            == b"rc=3\npayload"
        )
        home.chmod(0o700)
        assert (
            subprocess.run(
                client(home), input=b"{}", capture_output=True, timeout=30, check=False
            ).stdout
            == b"rc=0\n"
        )
    finally:
        server.kill()


@pytest.mark.slow
@needs_perl
def test_calls_behind_a_busy_resident_run_the_hook_themselves(data: Path, tmp_path: Path) -> None:
    """A call waits at most 2 s for the resident to take it; then run.sh runs the hook
    itself with stdin untouched: nothing is lost, nothing counted twice."""
    home = data / "runtime" / VERSION / "resident"
    code = (
        "import sys, time\n"
        "from metacog import hook, server\n"
        "real = hook.handle\n"
        "def handle(raw, state_dir):\n"
        "    if b'toolu_stuck' in raw:\n"
        "        time.sleep(60)\n"
        "    return real(raw, state_dir=state_dir)\n"
        "hook.handle = handle\n"
        "server.serve()\n"
    )
    server = subprocess.Popen(
        [str(data / "runtime" / VERSION / "bin" / "python"), "-I", "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    stuck = None
    try:
        assert wait_for(lambda: (home / resident.SOCKET).is_socket())
        env = hook_env(data, tmp_path / "home")
        stuck = subprocess.Popen(
            [SH, str(RUN_SH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )  # its client too ends with it (killpg below)
        stuck.stdin.write(
            json.dumps(
                captured("PostToolUse", "Read", tool_use_id="toolu_stuck", session_id="other")
            ).encode()
        )
        stuck.stdin.close()
        time.sleep(0.5)  # it has been taken (nothing asserts on this timing)
        got = replies([run_sh(p, env) for p in failures(3)])
        # Counted once each: a call counted twice would have spoken at the second.
        assert got[:2] == ["", ""] and "the same error 3 times" in got[2]
    finally:
        if stuck is not None:
            os.killpg(stuck.pid, signal.SIGKILL)
            stuck.wait()
        server.kill()
        server.wait()


@pytest.mark.parametrize(
    "request_bytes",
    [b"", b"metacog1", b"metacog1\0\0\0\x09A=1\0", b"metacog2\0\0\0\0{}", b"metacog1\0\x20\0\0{}"],
)
def test_parse_refuses_what_the_client_never_sends(request_bytes: bytes) -> None:
    assert parse(request_bytes) is None


def test_parse_reads_the_clients_format() -> None:
    env = b"A=1\0B=x=y\0EMPTY=\0"
    assert parse(b"metacog1" + len(env).to_bytes(4, "big") + env + b'{"k":1}') == (
        {"A": "1", "B": "x=y", "EMPTY": ""},
        b'{"k":1}',
    )
    assert parse(b"metacog1\0\0\0\0") == ({}, b"")


@given(st.binary(max_size=512), st.booleans())
def test_parse_takes_any_bytes_without_raising(tail: bytes, magic: bool) -> None:
    parsed = parse((protocol.MAGIC if magic else b"") + tail)
    if parsed is not None:
        env, payload = parsed
        assert all(isinstance(k, str) and isinstance(v, str) and k for k, v in env.items())
        assert isinstance(payload, bytes)


@needs_perl
def test_a_call_that_grows_the_process_retires_it(tmp_path: Path) -> None:
    """A 64 MiB payload (the cap: answered with silence, as by the hook) leaves the process
    big for good; it answers that call, then leaves for a fresh one."""
    home = tmp_path / "resident"
    server = resident_process(home)
    try:
        small = subprocess.run(
            client(home),
            input=json.dumps(failures(1)[0]).encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert (small.stdout, server.poll()) == (b"rc=0\n", None), (
            small.stderr,
            sorted(home.iterdir()),
        )
        huge = subprocess.run(
            client(home),
            input=b'{"x": "' + b"a" * (64 << 20) + b'"}',
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert huge.stdout == b"rc=0\n", (
            huge.stderr,
            server.poll(),
            (home / "resident.log").read_text(),
        )
        assert server.wait(timeout=30) == 0
        assert not (home / resident.SOCKET).exists()
    finally:
        server.kill()


@needs_perl
@pytest.mark.parametrize("perl", ["broken", "missing"])
def test_a_perl_that_cannot_run_the_client_means_the_hook_runs_itself(
    data: Path, tmp_path: Path, perl: str
) -> None:
    """A version manager's shim with no version chosen exits 126 before reading stdin; a
    session whose PATH has no Perl finds the resident another session started."""
    start_session(data, hook_env(data, tmp_path / "home"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if perl == "broken":
        (bin_dir / "perl").write_text("#!/bin/sh\necho 'shim: no version selected' >&2\nexit 126\n")
        (bin_dir / "perl").chmod(0o755)
    env = hook_env(data, tmp_path / "home", PATH=str(bin_dir))
    got = replies([run_sh(p, env) for p in failures(3)])
    assert "the same error 3 times" in got[2]
    stderr_log = data / "hook-stderr.log"
    expected = "shim: no version selected\n" * 3 if perl == "broken" else ""
    assert (stderr_log.read_text() if stderr_log.exists() else "") == expected


@needs_perl
def test_overlapping_calls_through_run_sh_lose_none_and_count_none_twice(
    data: Path, tmp_path: Path
) -> None:
    """Claude Code runs a batch's hooks at once: 8 callers at a time, 64 calls, whether
    the resident takes each one or a caller runs the hook itself after 2 s."""
    env = hook_env(data, tmp_path / "home")
    start_session(data, env)
    payload = captured("PostToolUse", "Bash")
    raws = [
        json.dumps(
            {**payload, "tool_input": {**payload["tool_input"], "command": f"echo {i}"}}
        ).encode()
        for i in range(64)
    ]
    for batch in range(0, 64, 8):
        # Each hook's stdin written at once, as Claude Code does (not one after the other).
        with ThreadPoolExecutor(8) as pool:
            outs = list(pool.map(lambda raw: run_sh(raw, env), raws[batch : batch + 8]))
        assert [(o.returncode, o.stderr) for o in outs] == [(0, b"")] * 8
    st = json.loads(settled(env, payload["session_id"]).read_text())
    assert st["calls"] == 64


@needs_perl
@pytest.mark.skipif(
    not Path("/dev/full").exists(), reason="needs /dev/full to make writing the reply fail"
)
def test_a_reply_that_cannot_be_written_is_not_a_reason_to_run_the_hook_again(
    tmp_path: Path,
) -> None:
    home = tmp_path / "resident"
    server = resident_process(home)
    try:
        outs = []
        for payload in failures(3):
            with open("/dev/full", "wb") as full:
                outs.append(
                    subprocess.run(
                        ["perl", "-T", str(ROOT / "hooks" / "client.pl"), str(home)],
                        input=json.dumps(payload).encode(),
                        stdout=full,
                        stderr=subprocess.PIPE,
                        timeout=30,
                        check=False,
                    )
                )
        assert [(o.returncode, o.stderr) for o in outs] == [
            (0, b"")
        ] * 3  # the third had a reply to write
    finally:
        server.kill()


@pytest.mark.slow
@needs_perl
def test_a_stopped_resident_is_replaced(data: Path, tmp_path: Path) -> None:
    """SIGSTOP: the stopped process holds its lock and takes no call. Calls find it late,
    run the hook themselves, and once it has been late for longer than a busy resident
    can be, one of them ends it and starts another, which then answers."""
    env = hook_env(data, tmp_path / "home")
    home = start_session(data, env)
    stopped = int((home / "pid").read_text())
    os.kill(stopped, signal.SIGSTOP)
    try:
        for payload in failures(12):
            assert replies([run_sh(payload, env)])
            if (home / "pid").read_text() != f"{stopped}\n" and (
                home / resident.SOCKET
            ).is_socket():
                break
        assert wait_for(lambda: not alive_pid(stopped)), "the stopped resident was not ended"
        assert wait_for(lambda: (home / "pid").read_text() != f"{stopped}\n" and alive(home))
        assert wait_for(lambda: (home / resident.SOCKET).is_socket())
        resident_only(data)  # from here only a resident process can answer
        got = replies([run_sh(p, env) for p in failures(3, session_id="after-the-stop")])
        assert "the same error 3 times" in got[2]
        assert not (home / resident.LATE_MARK).exists()  # served: not late any more
    finally:
        end(stopped)


def alive_pid(pid: int) -> bool:
    try:  # an ended process not yet reaped is not alive
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


@needs_perl
@pytest.mark.parametrize("damage", ["folder", "symlink"])
@pytest.mark.parametrize(
    "name", ["lock", "started", "late", "hook.sock", "hook.sock.new", "pid", "resident.log"]
)
def test_a_folder_or_symlink_in_place_of_the_residents_files_is_recovered_from(
    data: Path, tmp_path: Path, name: str, damage: str
) -> None:
    home = data / "runtime" / VERSION / "resident"
    home.mkdir(mode=0o700)
    outside = tmp_path / "outside"
    outside.write_text("not metacog's\n")
    if damage == "folder":
        (home / name).mkdir()
        (home / name / "inside").write_text("x")
    else:
        (home / name).symlink_to(outside)
    env = hook_env(data, tmp_path / "home")
    start_session(data, env)
    resident_only(data)
    assert "the same error 3 times" in replies([run_sh(p, env) for p in failures(3)])[2]
    assert outside.read_text() == "not metacog's\n"


def test_the_hooks_stderr_log_is_private(data: Path, tmp_path: Path) -> None:
    out = run_sh(
        captured("SessionStart"),
        hook_env(data, tmp_path / "home", METACOG_RESIDENT="0"),
        "session-start",
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")
    assert (data / "hook-stderr.log").stat().st_mode & 0o777 == 0o600


def test_a_stuck_resident_is_ended_only_by_its_own_pid(tmp_path: Path) -> None:
    """The lock is held (here by this test) and calls have been late for long, but the pid
    file names another program (an old pid, reused): that program is left alone."""
    import fcntl

    home = tmp_path / "resident"
    home.mkdir(mode=0o700)
    other = subprocess.Popen(["sleep", "30"])
    lock = os.open(home / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        (home / "pid").write_text(f"{other.pid}\n")
        (home / resident.LATE_MARK).touch()
        past = time.time() - resident.STUCK_SECONDS - 1
        os.utime(home / resident.LATE_MARK, (past, past))
        assert not resident._end_if_stuck(str(home), time.time())
        assert other.poll() is None
    finally:
        os.close(lock)
        other.kill()
        other.wait()
