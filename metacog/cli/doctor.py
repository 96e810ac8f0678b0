"""`metacog doctor`: is everything metacog needs in place, and what to do where it is not.

Each check returns findings: ("ok" | "note" | "problem", what was found, what to do).
Only problems make the exit code non-zero. Nothing here writes anything, except a
probe file (created and removed) to prove a directory is writable.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import metacog
from metacog import config, layout, learning, paths, resident
from metacog.cli import settings
from metacog.cli.common import closest, one_line
from metacog.fsutil import read_capped

OK, NOTE, PROBLEM = "ok", "note", "problem"
MIN_PYTHON = (3, 10)
RECENT_S = 24 * 3600  # log entries younger than this count as current problems
TAIL_BYTES = 64 * 1024
SHOWN = 3
CORRUPT_SCAN_CAP = 20000  # files looked at per directory tree


def finding(status: str, text: str, fix: str = "") -> dict:
    return {"status": status, "text": text, "fix": fix}


# --------------------------------------------------------------------- locations
def plugin_root() -> Path | None:
    """The plugin folder: $CLAUDE_PLUGIN_ROOT, else the checkout this package runs from."""
    env = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if env:
        return Path(env)
    source = Path(metacog.__file__).resolve().parents[1]
    return source if (source / "hooks" / "hooks.json").is_file() else None


def plugin_version(root: Path | None) -> str:
    if root is not None:
        try:
            return str(json.loads((root / ".claude-plugin" / "plugin.json").read_text())["version"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return metacog.__version__


def plugin_data_dirs() -> list[Path]:
    """Where Claude Code keeps the plugin's data (and so its runtime)."""
    env = os.environ.get("CLAUDE_PLUGIN_DATA")
    if env:
        return [Path(env)]
    prefix = Path(sys.prefix)
    if layout.is_runtime(str(prefix)) and len(prefix.parents) >= 2:
        return [Path(layout.data_of_runtime(str(prefix)))]
    return sorted(Path.home().glob(layout.DATA_GLOB))


def tail_lines(path: Path) -> list[str]:
    """The last lines of a log: a regular file only (a FIFO in its place once hung doctor)."""
    from metacog.fsutil import open_regular

    try:
        fd = open_regular(str(path))
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, TAIL_BYTES, max(0, size - TAIL_BYTES))
    except OSError:
        return []
    finally:
        os.close(fd)
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[1:] if size > TAIL_BYTES else lines  # the first may be cut


def stamp_of(line: str) -> float | None:
    try:
        return time.mktime(time.strptime(line[:19], "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return None


# ------------------------------------------------------------------------ checks
def check_python() -> list[dict]:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info < MIN_PYTHON:
        return [
            finding(
                PROBLEM,
                f"Python {version} at {sys.executable} is too old",
                "install Python 3.10 or newer, then start a new Claude Code session",
            )
        ]
    return [finding(OK, f"Python {version} ({sys.executable})")]


def check_runtime(root: Path | None) -> list[dict]:
    version = plugin_version(root)
    dirs = plugin_data_dirs()
    if not dirs:
        # A replay-only or report-only user is not a problem: say what is and is not installed.
        return [
            finding(
                NOTE,
                "the command line is installed (replay, report, status work offline); the Claude "
                f"Code plugin is not (nothing in {Path.home() / layout.PLUGINS_DATA}/), so no session is "
                "watched: `claude plugin install metacog@metacog` installs it",
            )
        ]
    out = []
    for data in dirs:
        ready = sorted(p.parent.name for p in data.glob(f"{layout.RUNTIME}/*/{layout.READY}"))
        log = data / layout.BOOTSTRAP_LOG
        last = next((ln for ln in reversed(tail_lines(log)) if ln.strip()), "")
        if version in ready:
            out.append(
                finding(OK, f"runtime {version} ready in {layout.runtime_dir(str(data), version)}")
            )
            continue
        out.append(_not_ready(data, version, ready, last))
    return out


def _not_ready(data: Path, version: str, ready: list[str], last: str) -> dict:
    """What the runtime's folder really holds: never built, being built, half-built, failed."""
    base = data / layout.RUNTIME
    log = data / layout.BOOTSTRAP_LOG
    found = f" (ready: {', '.join(ready)})" if ready else ""
    try:
        failed = json.loads(read_capped(str(base / layout.FAILED), 65536) or b"null")
    except (OSError, ValueError, RecursionError):
        failed = None
    half = (base / version).is_dir()
    state = "half-built (its folder exists without the .ready mark)" if half else "not prepared"
    if isinstance(failed, dict) and failed.get("version") == version:
        when = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(failed["at"]))
            if isinstance(failed.get("at"), (int, float))
            else "an unknown time"
        )
        return finding(
            PROBLEM,
            f"runtime {version} {state} in {data}{found}: the first-run setup failed at "
            f"{when} with {failed.get('python', '?')}: {one_line(failed.get('cause', '?'), 240)}",
            f"it retries {failed.get('retry', 'at the next session start')}; "
            f"pip's whole output is in {log}",
        )
    why = f"; last bootstrap log line: {one_line(last, 200)}" if last else ""
    return finding(
        PROBLEM,
        f"runtime {version} {state} in {data}{found}{why}",
        "start a new Claude Code session (its SessionStart hook builds the runtime; "
        "it needs Python 3.10+ with venv and access to the package index once); "
        f"details in {log}",
    )


def check_resident(root: Path | None) -> list[dict]:
    """The resident process (metacog/resident.py): running, off, or why it cannot run."""
    version = plugin_version(root)
    if os.environ.get("METACOG_RESIDENT") == "0":
        return [
            finding(
                NOTE,
                "resident process switched off (METACOG_RESIDENT=0): every hook call "
                "starts Python, about 20 ms inside Claude Code instead of about 10",
            )
        ]
    import shutil

    if shutil.which("perl") is None:
        return [
            finding(
                NOTE,
                "no perl on PATH: hooks cannot reach a resident process, so every hook call "
                "starts Python (about 20 ms inside Claude Code instead of about 10)",
                "install perl (any Perl 5) if that matters to you; metacog works either way",
            )
        ]
    out = []
    for data in plugin_data_dirs():
        runtime = layout.runtime_dir(str(data), version)
        folder = Path(runtime, layout.RESIDENT)
        if not layout.is_runtime(runtime):
            continue
        pid = _resident_pid(folder)
        if pid and (folder / resident.SOCKET).is_socket():
            out.append(
                finding(
                    OK, f"resident process running (pid {pid}), answering hook calls in {folder}"
                )
            )
        else:
            out.append(
                finding(
                    OK,
                    "resident process not running: the next session starts it (it leaves "
                    f"after {resident.IDLE_SECONDS // 60} idle minutes)",
                )
            )
        log = folder / "resident.log"
        lines = [ln for ln in tail_lines(log) if ln.strip()]
        try:
            fresh = bool(lines) and log.stat().st_mtime >= time.time() - RECENT_S
        except OSError:
            fresh = False
        if fresh:
            out.append(
                finding(
                    PROBLEM,
                    f"the resident process wrote to {log} in the last 24 hours (a call "
                    f"stuck past {resident.WATCHDOG_SECONDS} s ends it, with where it was): "
                    + " | ".join(one_line(ln, 160) for ln in lines[:SHOWN]),
                    f"report the file's content; then clear it: rm {log}",
                )
            )
    return out


def _resident_pid(folder: Path) -> int:
    try:
        pid = int(read_capped(str(folder / "pid"), 64).strip() or b"0")
        os.kill(pid, 0)
    except (OSError, ValueError):
        return 0
    return pid


def check_hooks(root: Path | None) -> list[dict]:
    if root is None:
        return [
            finding(
                NOTE,
                "hooks not checked: plugin folder unknown (run this as /metacog doctor "
                "inside Claude Code, or set CLAUDE_PLUGIN_ROOT)",
            )
        ]
    path = root / "hooks" / "hooks.json"
    try:
        registered = json.loads(path.read_text()).get("hooks")
    except (OSError, ValueError, AttributeError) as exc:
        return [
            finding(
                PROBLEM,
                f"{path} unreadable: {one_line(exc, 160)}",
                "reinstall the plugin (`claude plugin install metacog@metacog`)",
            )
        ]
    from metacog.handlers import HANDLERS

    if not isinstance(registered, dict):
        registered = {}
    missing = [event for event in HANDLERS if not _runs_hook(registered.get(event))]
    if missing:
        return [
            finding(
                PROBLEM,
                f"hooks not registered for {', '.join(missing)} in {path}",
                "reinstall the plugin (`claude plugin install metacog@metacog`)",
            )
        ]
    out = [finding(OK, f"hooks registered for {', '.join(HANDLERS)} ({path})")]
    launcher = root / "hooks" / "run.sh"
    if not launcher.is_file():
        out.append(
            finding(
                PROBLEM,
                f"{launcher} is missing: every hook is silent",
                "reinstall the plugin (`claude plugin install metacog@metacog`)",
            )
        )
    return out


def _runs_hook(entries: object) -> bool:
    for entry in entries if isinstance(entries, list) else []:
        for hook in (entry.get("hooks") if isinstance(entry, dict) else None) or []:
            if isinstance(hook, dict) and "hooks/run.sh" in str(hook.get("command", "")):
                return True
    return False


def check_dirs() -> list[dict]:
    out = []
    for kind, path in paths.dirs().items():
        problem = _not_writable(path)
        if problem:
            out.append(
                finding(
                    PROBLEM,
                    f"{kind} directory {path} is not writable: {problem}",
                    f"fix its permissions (chmod u+rwx {path}) or set METACOG_HOME "
                    "to a writable folder",
                )
            )
        else:
            out.append(finding(OK, f"{kind} directory writable: {path}"))
    return out


def _not_writable(path: str) -> str:
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return "no existing parent folder"
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is not a folder"
    if probe != path:
        ok = os.access(probe, os.W_OK | os.X_OK)
        return "" if ok else f"cannot create it inside {probe}"
    try:
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=path)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""


def check_logs(now: float) -> list[dict]:
    out = []
    log = Path(paths.state_dir()) / "metacog.log"
    lines = [ln for ln in tail_lines(log) if ln.strip()]
    recent = [ln for ln in lines if (stamp_of(ln) or 0) >= now - RECENT_S]
    if recent:
        shown = " | ".join(one_line(ln, 200) for ln in recent[-SHOWN:])
        out.append(
            finding(
                PROBLEM,
                f"{len(recent)} error(s) logged in the last 24 hours in {log}: {shown}",
                "if they repeat, run `metacog doctor` again after a session and report the "
                f"log; clear it once read: rm {log}",
            )
        )
    elif lines:
        out.append(
            finding(OK, f"no errors logged in the last 24 hours ({len(lines)} older in {log})")
        )
    else:
        out.append(finding(OK, "no errors logged"))
    for data in plugin_data_dirs():
        stderr_log = data / "hook-stderr.log"
        try:
            fresh = stderr_log.stat().st_size > 0 and stderr_log.stat().st_mtime >= now - RECENT_S
        except OSError:
            continue
        if fresh:
            last = [ln for ln in tail_lines(stderr_log) if ln.strip()][-SHOWN:]
            out.append(
                finding(
                    PROBLEM,
                    f"the hook's interpreter wrote errors to {stderr_log}: "
                    + " | ".join(one_line(ln, 200) for ln in last),
                    "the runtime may be broken: delete its folder "
                    f"({data / layout.RUNTIME}) and start a new session to rebuild it",
                )
            )
    return out


def check_corrupt() -> list[dict]:
    found: list[str] = []
    for base in dict.fromkeys((paths.state_dir(), paths.data_dir())):
        seen = 0
        for folder, _dirs, files in os.walk(base):
            seen += len(files)
            found.extend(os.path.join(folder, f) for f in files if ".corrupt-" in f)
            if seen > CORRUPT_SCAN_CAP:
                break
    if not found:
        return [finding(OK, "no corrupt files")]
    folders = sorted({os.path.dirname(f) for f in found})
    return [
        finding(
            PROBLEM,
            f"{len(found)} corrupt file(s) were moved aside and replaced by fresh ones: "
            + ", ".join(found[:SHOWN])
            + (" …" if len(found) > SHOWN else ""),
            "look at them if you want to know what broke, then delete them: "
            + " ; ".join(f"rm {os.path.join(d, '*.corrupt-*')}" for d in folders),
        )
    ]


def check_config(root: str) -> list[dict]:
    report = settings.effective(root)
    out = []
    for entry in report["files"]:
        if entry["error"]:
            out.append(
                finding(
                    PROBLEM,
                    f"config {entry['path']} is {entry['error']}; the hook skips it",
                    "fix it or delete it (`metacog config show` shows what is in effect)",
                )
            )
    known = settings.all_keys()
    for item in report["ignored"]:
        out.append(
            finding(
                PROBLEM,
                f"config {item['file']}: {item['key']}: {item['why']}",
                _config_fix(item, known, report),
            )
        )
    if not out:
        present = [e["path"] for e in report["files"] if e["exists"]]
        out.append(
            finding(
                OK,
                "config valid"
                + (f" ({', '.join(present)})" if present else " (no config files: defaults)"),
            )
        )
    return out


def _config_fix(item: dict, known: list[str], report: dict) -> str:
    """What to do about one ignored entry; a command only where `metacog config set` takes the key."""
    key = item["key"]
    if "." not in key:
        return "fix or remove that table"
    if key in known:  # a known setting with a value the hook ignores
        project = any(
            f["scope"] == "project" and f["path"] == item["file"] for f in report["files"]
        )
        flag = " --project" if project else ""
        return (
            f"fix or remove that line (`metacog config set {key} VALUE{flag}` writes a valid one)"
        )
    near = closest(key, known)
    if near:
        return f"delete that line, or rename it to {near[0]} if that is the setting meant"
    return "delete that line (`metacog config show` lists every setting)"


def check_stores(root: str) -> list[dict]:
    try:
        report = learning.health(root)
    except Exception as exc:  # noqa: BLE001 - a broken store is exactly what doctor reports
        return [
            finding(
                PROBLEM,
                f"learned-rule stores could not be checked: {type(exc).__name__}: "
                f"{one_line(exc, 200)}",
                "run `metacog doctor` again; if it persists, report it",
            )
        ]
    return interpret_health(report)


def interpret_health(report: dict) -> list[dict]:
    """Findings from learning.health(): per store ("project", "global") its path, records,
    skipped corrupt lines, unknown (newer) records, partial last line, truncation and
    refusal; and the copies of broken stores it quarantined."""
    out = []
    for scope in learning.SCOPES:
        out.extend(_store_findings(scope, report[scope]))
    quarantined = report["quarantined"]
    if quarantined:
        folders = sorted({os.path.dirname(q) for q in quarantined})
        out.append(
            finding(
                PROBLEM,
                f"{len(quarantined)} broken learned-rule store(s) were set aside: "
                + ", ".join(quarantined[:SHOWN])
                + (" …" if len(quarantined) > SHOWN else ""),
                "each store was rewritten without its unreadable lines; look at the copies if "
                "you want, then delete them: " + " ; ".join(f"rm -r {d}" for d in folders),
            )
        )
    return out


# What still learns when a store cannot be written (evaluate._write goes on without it).
_UNLEARNED = {
    "project": " (this project's sessions still count towards promotion, in the index)",
    "global": " (promoted rules wait in a journal until it is fixed)",
}


def _store_findings(scope: str, entry: dict) -> list[dict]:
    path = entry["path"]
    if entry["reason"]:
        from metacog.learning.store import FOLDER_REASONS

        if scope == "project" and entry["reason"] in FOLDER_REASONS:
            fix = f"make {os.path.dirname(path)} a folder inside the project (not a file, nor a symlink out of it)"
        else:
            fix = f"remove what is there (rm -r {path}): metacog starts the store afresh and learns its rules again"
        return [
            finding(
                PROBLEM,
                f"{scope} learned-rule store {path} not read nor written: {entry['refused']}"
                + _UNLEARNED[scope],
                fix,
            )
        ]
    if not entry["exists"]:
        return [finding(OK, f"{scope} learned-rule store: empty (no {path} yet)")]
    out = [
        finding(
            OK,
            f"{scope} learned-rule store: {entry['records']} records, "
            f"{entry['bytes']} bytes ({path})",
        )
    ]
    if entry["corrupt"]:
        out.append(
            finding(
                PROBLEM,
                f"{scope} learned-rule store {path}: {entry['corrupt']} unreadable line(s) skipped",
                "nothing is lost beyond those lines; to start it afresh, "
                f"delete it (rm {path}) and its rules are learned again",
            )
        )
    if entry["truncated"]:
        out.append(
            finding(
                PROBLEM,
                f"{scope} learned-rule store {path} is too large: only its beginning is read, "
                "nothing is added to it" + _UNLEARNED[scope],
                f"delete it (rm {path}) and its rules are learned again",
            )
        )
    if entry["unknown"]:
        out.append(
            finding(
                NOTE,
                f"{scope} learned-rule store {path}: {entry['unknown']} record(s) from a "
                "newer metacog kept as they are",
            )
        )
    if entry["partial"]:
        out.append(
            finding(
                NOTE,
                f"{scope} learned-rule store {path}: its last line is incomplete (a write "
                "in progress, or one cut short); it is skipped",
            )
        )
    return out


def check_delivery() -> list[dict]:
    """Whether the lines metacog sent in the latest sessions reached the model (bounded:
    metacog.report.delivery.check reads the newest sessions only)."""
    from metacog.report import delivery, sources

    lost = delivery.check(paths.state_dir(), sources.projects_folder())
    if not lost:
        return []
    return [
        finding(
            PROBLEM,
            lost,
            "`metacog report` names the sessions; an older Claude Code, or a hook whose output "
            "is not read, drops the lines (the hooks check above)",
        )
    ]


# ------------------------------------------------------------------------- whole
def diagnose(cwd: str, now: float | None = None) -> list[dict]:
    now = time.time() if now is None else now
    root = plugin_root()
    project = config.project_root(cwd)
    findings: list[dict] = []
    for check in (
        check_python,
        lambda: check_runtime(root),
        lambda: check_resident(root),
        lambda: check_hooks(root),
        check_dirs,
        lambda: check_logs(now),
        check_corrupt,
        lambda: check_config(project),
        lambda: check_stores(project),
        check_delivery,
    ):
        try:
            findings.extend(check())
        except Exception as exc:  # noqa: BLE001 - one failing check must not hide the others
            findings.append(
                finding(
                    PROBLEM,
                    f"a check failed: {type(exc).__name__}: {one_line(exc, 200)}",
                    "report this with the output of `metacog doctor`",
                )
            )
    return findings


def render(findings: list[dict]) -> str:
    marks = {OK: "ok     ", NOTE: "note   ", PROBLEM: "PROBLEM"}
    lines = [f"metacog {metacog.__version__} doctor"]
    for item in findings:
        lines.append(f"  {marks[item['status']]}  {item['text']}")
        if item["status"] == PROBLEM and item["fix"]:
            lines.append(f"           fix: {item['fix']}")
    problems = sum(1 for item in findings if item["status"] == PROBLEM)
    lines.append(
        f"{problems} problem{'s' if problems != 1 else ''} found."
        if problems
        else "No problems found."
    )
    return "\n".join(lines)
