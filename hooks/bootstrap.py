"""Prepare metacog's runtime: a virtual environment under the plugin's data folder.

Run by hooks/run.sh at SessionStart, once per plugin version, with whatever Python
the machine has. Standard library only: the package is not installed yet.

usage: bootstrap.py DATA_DIR VERSION
exit 3 means "this interpreter is too old, try another"; any other exit ends the
search. Nothing is ever written into the plugin folder (a local marketplace is read
in place, so it can be the user's own checkout): the source is copied to a temporary
folder and installed from there.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIN_PYTHON = (3, 10)
RETRY_AFTER_S = 600  # a failed bootstrap (offline?) is not retried on every session start
LOG_CAP = 256 * 1024
PLUGIN_ROOT = Path(__file__).resolve().parent.parent
SOURCE_PARTS = ("pyproject.toml", "README.md", "LICENSE", "metacog")


def log(data: Path, message: str) -> None:
    path = data / "bootstrap.log"
    try:
        if path.exists() and path.stat().st_size > LOG_CAP:
            os.replace(path, path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{stamp} {message}\n".encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=280, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{' '.join(cmd[:4])} … exited {done.returncode}: {' | '.join(tail)}")


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
    except RuntimeError:
        # Debian's python3 without python3-venv has no ensurepip: a bare venv,
        # filled by this interpreter's pip (pip >= 22.3 knows --python).
        shutil.rmtree(runtime, ignore_errors=True)
        run([sys.executable, "-m", "venv", "--without-pip", str(runtime)])
        pip = [sys.executable, "-m", "pip", "--python", str(runtime / "bin" / "python")]
    with tempfile.TemporaryDirectory(prefix="metacog-bootstrap-") as tmp:
        src = copy_source(Path(tmp))
        run([*pip, "install", "--disable-pip-version-check", "--no-input", "--quiet",
             "--retries", "1", "--timeout", "20", str(src)])
    run([str(runtime / "bin" / "python"), "-I", "-c", "import metacog.hook"])  # the package imports


def collect_old(base: Path, keep: str) -> None:
    """Remove older runtimes but the newest previous one: sessions started before an
    update still run the previous version's hooks until they end."""
    others = sorted((p for p in base.iterdir() if p.name != keep and not p.name.startswith(".")),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in others[1:]:
        shutil.rmtree(old, ignore_errors=True)


def main() -> int:
    if sys.version_info < MIN_PYTHON:
        return 3
    data, version = Path(sys.argv[1]), sys.argv[2]
    base = data / "runtime"
    runtime = base / version
    base.mkdir(parents=True, exist_ok=True)
    failed_marker = base / ".failed"
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two sessions starting at once build it once
        if (runtime / ".ready").exists():
            return 0
        try:
            if time.time() - failed_marker.stat().st_mtime < RETRY_AFTER_S:
                return 1
        except OSError:
            pass
        started = time.monotonic()
        try:
            build(runtime)
        except Exception as exc:  # noqa: BLE001 - every failure is logged, never raised into the session
            failed_marker.touch()
            log(data, f"runtime {version} not prepared with {sys.executable}: {exc}")
            return 1
        (runtime / ".ready").write_text(f"{version}\n{sys.executable}\n")
        # Now that the runtime is marked ready, it may remember where platformdirs puts files.
        subprocess.run([str(runtime / "bin" / "python"), "-I", "-c", "import metacog.paths as p; p.remember()"],
                       capture_output=True, timeout=60, check=False)
        failed_marker.unlink(missing_ok=True)
        collect_old(base, version)
        log(data, f"runtime {version} prepared with {sys.executable} in {time.monotonic() - started:.1f}s")
        return 0


if __name__ == "__main__":
    sys.exit(main())
