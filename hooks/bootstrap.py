"""Prepare metacog's runtime: a virtual environment under the plugin's data folder.

Run by hooks/run.sh at SessionStart, once per plugin version, with whatever Python
the machine has. Standard library only: the package is not installed yet.

usage: bootstrap.py DATA_DIR VERSION
       bootstrap.py --explain DATA_DIR VERSION   (one line: why the runtime is not ready)
exit 3 means "this interpreter is too old, try another"; any other exit ends the
search. Nothing is ever written into the plugin folder (a local marketplace is read
in place, so it can be the user's own checkout): the source is copied to a temporary
folder and installed from there.

A failure is kept in `runtime/.failed` (when, what failed in one line, and whether it
was the network) with pip's whole output in bootstrap.log; `metacog doctor` reads both.
It is said once to the person: `runtime/.tell` holds the one-line `systemMessage` for
hooks/run.sh to print at that SessionStart (then remove). The next session retries at
once when the package index answers again (a network failure), else after RETRY_AFTER_S
or with another interpreter.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The data folder's layout, as metacog/layout.py names it (this script runs before metacog
# is installed, so it carries the names; tests/test_layout.py checks they agree).
BOOTSTRAP_LOG = "bootstrap.log"
HOOK_STDERR_LOG = "hook-stderr.log"
RUNTIME = "runtime"
BUILD_LOCK = ".lock"
FAILED = ".failed"
TELL = ".tell"
READY = ".ready"
MIN_PYTHON = (3, 10)
RETRY_AFTER_S = 600  # a failure that was not the network is not retried at every session start
PROBE_S = 2.0  # is the package index back? one TCP connect, bounded
LOG_CAP = 256 * 1024
OUTPUT_KEEP = 8 * 1024  # of a failing command's output, in the log: its start and its end
NETWORK_SIGNS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "Connection refused",
    "timed out",
    "ProxyError",
    "SSLError",
    "No matching distribution found",
    "Could not find a version",
)
PLUGIN_ROOT = Path(__file__).resolve().parent.parent
SOURCE_PARTS = ("pyproject.toml", "README.md", "LICENSE", "metacog")


class Failed(RuntimeError):
    """A step that failed: `cause` in one line, `output` what the command said."""

    def __init__(self, cause: str, output: str = "") -> None:
        super().__init__(cause)
        self.cause = cause
        self.output = output


def log(data: Path, message: str) -> None:
    path = data / BOOTSTRAP_LOG
    try:
        if path.exists() and path.stat().st_size > LOG_CAP:
            os.replace(path, path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, f"{stamp} {message}\n".encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def run(cmd: list[str]) -> None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=280, check=False)
    except subprocess.TimeoutExpired:
        raise Failed(f"{' '.join(cmd[:4])} … took more than 280 s") from None
    if done.returncode != 0:
        output = f"{done.stdout}\n{done.stderr}".strip()
        raise Failed(f"{' '.join(cmd[:4])} … exited {done.returncode}: {cause_of(output)}", output)


def cause_of(output: str) -> str:
    """The line that says why: pip ends with "See above for output"; the reason is earlier."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for sign in ("ERROR:", "error:", *NETWORK_SIGNS):
        for line in lines:
            if sign in line and "See above" not in line:
                return line[:300]
    return lines[-1][:300] if lines else "no output"


def is_network(output: str) -> bool:
    return any(sign in output for sign in NETWORK_SIGNS)


def index_host() -> tuple[str, int]:
    """Where pip looks for packages: PIP_INDEX_URL's host, else PyPI."""
    from urllib.parse import urlsplit

    url = urlsplit(os.environ.get("PIP_INDEX_URL") or "https://pypi.org/simple")
    return url.hostname or "pypi.org", url.port or (80 if url.scheme == "http" else 443)


def index_answers() -> bool:
    try:
        socket.create_connection(index_host(), timeout=PROBE_S).close()
    except OSError:
        return False
    return True


def retry_now(failed: dict) -> bool:
    """Whether the cause of the last failure may have gone."""
    if failed.get("network"):
        return index_answers()
    at = failed.get("at")
    return (
        not isinstance(at, (int, float))
        or time.time() - at >= RETRY_AFTER_S
        or failed.get("python", sys.executable) != sys.executable
    )


def read_failed(path: Path) -> dict | None:
    """The last failure, None if there was none; {} for anything unreadable (a FIFO would block)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return {}
    try:
        failed = json.loads(os.read(fd, 65536)) if stat.S_ISREG(os.fstat(fd).st_mode) else {}
    except Exception:  # noqa: BLE001 - whatever is there, it says nothing reliable
        failed = {}
    finally:
        os.close(fd)
    return failed if isinstance(failed, dict) else {}


def last_failure(base: Path, version: str) -> dict | None:
    """The failure that stopped this version's build, if any. A `.failed` of an earlier
    metacog (empty: only its time said anything) counts as a failure at that time."""
    failed = read_failed(base / FAILED)
    if failed == {}:
        try:
            failed = {"at": (base / FAILED).stat().st_mtime, "version": version}
        except OSError:
            return None
    return failed if failed is not None and failed.get("version") == version else None


def explain(data: Path, version: str) -> str:
    """The runtime's real state, for /metacog when there is no runtime to run it with."""
    runtime = data / RUNTIME / version
    state = "half-built" if runtime.is_dir() else "missing"
    head = f"metacog: its runtime is not ready yet ({runtime} is {state})"
    failed = last_failure(data / RUNTIME, version)
    log_path = data / BOOTSTRAP_LOG
    if failed is None:
        return (
            f"{head}: start a new Claude Code session, whose start builds it (needs Python 3.10+ and the "
            f"package index once); if it still fails, see {log_path}"
        )
    at = failed.get("at")
    when = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if isinstance(at, (int, float)) else "?"
    )
    cause = " ".join(str(failed.get("cause") or "the cause is in the log").split())[:300]
    retry = failed.get("retry") or f"after {RETRY_AFTER_S // 60} minutes or with another Python"
    return (
        f"{head}: the first-run setup failed at {when}: {cause}. It retries {retry}: start a new "
        f"Claude Code session then. pip's whole output is in {log_path}"
    )


def record_failure(
    data: Path, base: Path, version: str, exc: BaseException, previous: dict | None
) -> None:
    cause = exc.cause if isinstance(exc, Failed) else f"{type(exc).__name__}: {exc}"
    output = exc.output if isinstance(exc, Failed) else ""
    network = is_network(output or cause)
    log(data, f"runtime {version} not prepared with {sys.executable}: {cause}")
    if output:
        kept = (
            output
            if len(output) <= OUTPUT_KEEP
            else (output[: OUTPUT_KEEP // 2] + "\n[…]\n" + output[-OUTPUT_KEEP // 2 :])
        )
        log(data, "output:\n" + "\n".join(f"    {ln}" for ln in kept.splitlines()))
    failed = {
        "at": time.time(),
        "version": version,
        "python": sys.executable,
        "cause": cause,
        "network": network,
        "retry": "when the package index answers"
        if network
        else f"after {RETRY_AFTER_S // 60} minutes or with another Python",
    }
    (base / FAILED).write_text(json.dumps(failed))
    if previous is None or previous.get("cause") != cause:  # said once per cause
        what = "could not reach the package index" if network else "failed"
        message = (
            f"metacog: its first-run setup {what} ({cause[:160]}); it stays off until a later "
            "session succeeds. `/metacog doctor` shows more."
        )
        (base / TELL).write_text(json.dumps({"systemMessage": message}) + "\n")


def copy_source(into: Path) -> Path:
    src = into / "metacog-src"
    src.mkdir()
    for part in SOURCE_PARTS:
        origin = PLUGIN_ROOT / part
        if origin.is_dir():
            shutil.copytree(origin, src / part, ignore=shutil.ignore_patterns("__pycache__"))
        elif origin.exists():
            shutil.copy2(origin, src / part)
    return src


def build(runtime: Path) -> None:
    if runtime.exists():
        shutil.rmtree(runtime)
    try:
        run([sys.executable, "-m", "venv", str(runtime)])
        pip = [str(runtime / "bin" / "python"), "-m", "pip"]
    except Failed:
        # Debian's python3 without python3-venv has no ensurepip: a bare venv,
        # filled by this interpreter's pip (pip >= 22.3 knows --python).
        shutil.rmtree(runtime, ignore_errors=True)
        run([sys.executable, "-m", "venv", "--without-pip", str(runtime)])
        pip = [sys.executable, "-m", "pip", "--python", str(runtime / "bin" / "python")]
    with tempfile.TemporaryDirectory(prefix="metacog-bootstrap-") as tmp:
        src = copy_source(Path(tmp))
        run(
            [
                *pip,
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--quiet",
                "--retries",
                "1",
                "--timeout",
                "20",
                str(src),
            ]
        )
    run([str(runtime / "bin" / "python"), "-I", "-c", "import metacog.hook"])  # the package imports


def collect_old(base: Path, keep: str) -> None:
    """Remove older runtimes but the newest previous one: sessions started before an
    update still run the previous version's hooks until they end."""
    others = sorted(
        (p for p in base.iterdir() if p.name != keep and not p.name.startswith(".")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in others[1:]:
        shutil.rmtree(old, ignore_errors=True)


def main() -> int:
    if sys.argv[1:2] == ["--explain"]:
        print(explain(Path(sys.argv[2]), sys.argv[3]))
        return 0
    if sys.version_info < MIN_PYTHON:
        return 3
    data, version = Path(sys.argv[1]), sys.argv[2]
    base = data / RUNTIME
    runtime = base / version
    base.mkdir(parents=True, exist_ok=True)
    failed_marker = base / FAILED
    with open(base / BUILD_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two sessions starting at once build it once
        if (runtime / READY).exists():
            return 0
        previous = last_failure(base, version)
        if previous is not None and not retry_now(previous):
            return 1
        started = time.monotonic()
        try:
            build(runtime)
        except Exception as exc:  # noqa: BLE001 - every failure is logged, never raised into the session
            record_failure(data, base, version, exc, previous)
            return 1
        (runtime / READY).write_text(f"{version}\n{sys.executable}\n")
        failed_marker.unlink(missing_ok=True)
        (base / TELL).unlink(missing_ok=True)
        stderr_log = data / HOOK_STDERR_LOG
        if not stderr_log.exists():  # private from the start: run.sh's `2>>` would follow the umask
            os.close(os.open(stderr_log, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
        collect_old(base, version)
        log(
            data,
            f"runtime {version} prepared with {sys.executable} in {time.monotonic() - started:.1f}s",
        )
        return 0


if __name__ == "__main__":
    sys.exit(main())
