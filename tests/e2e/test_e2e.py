"""End-to-end: the real Claude Code CLI, a scripted model, metacog loaded as a plugin.

What "metacog spoke" means here: the word "metacog" (its messages are prefixed
``metacog:``) appears in the text of a request the CLI sent to the model, with the
session's own folder names blanked out (SessionResult.mentions).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import (
    PLUGIN_NAME,
    REPO_ROOT,
    ClaudeHarness,
    SessionResult,
    clean_copy,
    marketplace_name,
    plugin_version,
    tool_result_text,
    tool_results,
)

pytestmark = pytest.mark.e2e

FAILING_COMMAND = 'python3 -c "import nosuchmodule_xyz"'
FAILURES = 5
SPEAK_BY_REQUEST = 3  # the request right after the 3rd failure


def bash(command: str, description: str = "Run a command") -> dict:
    return {"name": "Bash", "input": {"command": command, "description": description}}


def failing_script() -> list:
    return [[bash(FAILING_COMMAND, "Check the import")] for _ in range(FAILURES)] + ["I give up."]


def assert_failure_loop_reached_model(result: SessionResult) -> None:
    assert result.returncode == 0 and not result.timed_out, result.describe()
    # One request per scripted turn: the initial one and one after each failure.
    assert len(result.requests) == FAILURES + 1, result.describe()
    results = tool_results(result.requests[-1])
    assert len(results) == FAILURES, result.describe()
    for block in results:
        assert block.get("is_error") is True, tool_result_text(block)
        assert "nosuchmodule_xyz" in tool_result_text(block)
    first = result.first_request_mentioning("metacog")
    seen = {i: result.mentions("metacog", i) for i in range(len(result.requests))}
    assert first is not None, (
        "metacog never reached the model in five identical failures.\n" + result.describe()
    )
    assert first <= SPEAK_BY_REQUEST, (
        f"metacog first reached the model in request {first}; expected by request "
        f"{SPEAK_BY_REQUEST} (the one right after the 3rd failure): {seen[first][:2]}"
    )


# ----------------------------------------------------------------------------- (a)
def test_repeated_failure_reaches_model(metacog_claude: ClaudeHarness):
    result = metacog_claude.run(failing_script(), prompt="Make the import check pass.")
    assert_failure_loop_reached_model(result)
    assert "Traceback" not in metacog_claude.hook_stderr(), metacog_claude.hook_stderr()


def test_without_the_resident_process_the_hook_answers_itself(metacog_claude: ClaudeHarness):
    """METACOG_RESIDENT=0 (or no Perl): run.sh runs the hook for every call, and (a) holds."""
    metacog_claude.extra_env["METACOG_RESIDENT"] = "0"
    result = metacog_claude.run(failing_script(), prompt="Make the import check pass.")
    assert_failure_loop_reached_model(result)
    assert "Traceback" not in metacog_claude.hook_stderr(), metacog_claude.hook_stderr()


def test_a_batch_of_calls_at_once_is_heard(metacog_claude: ClaudeHarness):
    """Four failing calls in one turn, three times: their hooks overlap (the resident process
    takes them one by one, or a caller runs the hook itself) and the loop is heard. A batch
    is one attempt where Claude Code wrote its response before the hooks ran, several where
    it had not (tests/test_nociception.py pins both)."""
    batch = [bash(FAILING_COMMAND, "Check the import") for _ in range(4)]
    result = metacog_claude.run(
        [batch, batch, batch, "I give up."], prompt="Make the import check pass."
    )
    assert result.returncode == 0 and not result.timed_out, result.describe()
    assert len(result.requests) == 4, result.describe()
    assert len([b for b in tool_results(result.requests[-1]) if b.get("is_error") is True]) == 12, (
        result.describe()
    )
    assert result.first_request_mentioning("metacog") in (1, 2, 3), result.describe()
    assert "Traceback" not in metacog_claude.hook_stderr(), metacog_claude.hook_stderr()


def test_the_resident_process_answers_inside_the_session(
    metacog_claude: ClaudeHarness, plugin_runtime: Path
):
    """Between SessionStart and SessionEnd the calls go to the resident process
    (metacog/resident.py). The session's first call waits for its socket, then moves
    the runtime's interpreter away: from there run.sh cannot run the hook itself, so
    the failure loop reaching the model is the resident process's doing."""
    runtime = plugin_runtime / "runtime" / plugin_version()
    python, away = runtime / "bin" / "python", runtime / "bin" / "python.away"
    metacog_claude.extra_env["E2E_RUNTIME"] = str(
        runtime
    )  # not in the command: paths reach the model
    prepare = (
        'i=0; while [ ! -S "$E2E_RUNTIME/resident/hook.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; '
        'mv "$E2E_RUNTIME/bin/python" "$E2E_RUNTIME/bin/python.away"'
    )
    try:
        result = metacog_claude.run(
            [[bash(prepare, "Prepare")], *failing_script()], prompt="Make the import check pass."
        )
    finally:
        if away.is_symlink() or away.exists():
            away.rename(python)
    assert result.returncode == 0 and not result.timed_out, result.describe()
    assert len(result.requests) == FAILURES + 2, result.describe()
    assert tool_results(result.requests[1])[0].get("is_error") is not True, result.describe()
    first = result.first_request_mentioning("metacog")
    assert first == SPEAK_BY_REQUEST + 1, result.describe()  # one scripted call more than (a)


# ----------------------------------------------------------------------------- (b)
def test_normal_session_is_silent(metacog_claude: ClaudeHarness):
    project = metacog_claude.project
    (project / "src").mkdir()
    app = project / "src" / "app.py"
    app.write_text("def answer():\n    return 41\n")
    notes = project / "NOTES.md"
    script = [
        [{"name": "Read", "input": {"file_path": str(app)}}],
        [bash("ls -la", "List files")],
        [{"name": "Grep", "input": {"pattern": "return", "path": str(project)}}],
        [{"name": "Glob", "input": {"pattern": "**/*.py", "path": str(project)}}],
        [
            {
                "name": "Edit",
                "input": {
                    "file_path": str(app),
                    "old_string": "return 41",
                    "new_string": "return 42",
                },
            }
        ],
        [
            bash(
                "python3 -c 'import sys; sys.path.insert(0, \"src\"); import app; print(app.answer())'",
                "Run it",
            )
        ],
        [
            {
                "name": "Write",
                "input": {"file_path": str(notes), "content": "# Notes\nanswer is 42\n"},
            }
        ],
        [bash("git status --short", "Show status")],
        "All done: the answer is 42.",
    ]
    result = metacog_claude.run(script, prompt="Fix the answer in src/app.py.")
    assert result.returncode == 0 and not result.timed_out, result.describe()
    assert len(result.requests) == len(script), result.describe()
    # The scripted calls really succeeded (else this test would prove nothing).
    results = tool_results(result.requests[-1])
    assert len(results) == len(script) - 1
    for block in results:
        assert not block.get("is_error"), tool_result_text(block)
    assert app.read_text() == "def answer():\n    return 42\n"
    assert "42" in tool_result_text(results[5])
    # metacog stayed silent in every request.
    spoken = {i: result.mentions("metacog", i) for i in range(len(result.requests))}
    spoken = {i: s for i, s in spoken.items() if s}
    assert not spoken, f"metacog spoke in a normal session: {spoken}"
    # ...because nothing was off, not because it never ran: its hooks ran cleanly
    # and kept state under METACOG_HOME.
    assert "Traceback" not in metacog_claude.hook_stderr(), metacog_claude.hook_stderr()
    kept = [p for p in metacog_claude.metacog_home.rglob("*") if p.is_file()]
    assert kept, f"metacog wrote nothing under METACOG_HOME={metacog_claude.metacog_home}"


# ----------------------------------------------------------------------------- (c)
def _validate(claude: ClaudeHarness, *flags: str):
    done = claude.cli("plugin", "validate", *flags, str(REPO_ROOT), cwd=REPO_ROOT)
    return done


def test_plugin_validate_clean(claude: ClaudeHarness):
    """`claude plugin validate <repo root>`: zero errors and zero warnings."""
    done = _validate(claude, "--json")
    try:
        report = json.loads(done.stdout)
    except ValueError:
        pytest.fail(
            f"validate --json printed no JSON (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    problems = []
    for part in [report.get("manifest") or {}, *(report.get("contents") or [])]:
        for kind in ("errors", "warnings"):
            for item in part.get(kind) or []:
                problems.append(
                    f"{part.get('file')}: {kind[:-1]}: {item.get('path')}: {item.get('message')}"
                )
    assert report.get("success") is True and not problems, "\n".join(problems) or done.stdout
    assert done.returncode == 0, done.stderr

    # The human-readable verdict agrees: no "Found N warning(s)/error(s)" in the
    # validation proper, and it closes on a plain pass.
    text = _validate(claude)
    assert text.returncode == 0, text.stdout + text.stderr
    lines = [line.strip() for line in text.stdout.splitlines() if line.strip()]
    assert lines and lines[-1] == "✔ Validation passed", text.stdout
    validation_part = text.stdout.split("Plugin directory checks")[0]
    found = re.findall(
        r"^[ \t]*\S+ Found \d+ (?:warning|error|problem)s?\b.*$", validation_part, re.MULTILINE
    )
    assert not found, validation_part


def test_plugin_directory_checks_clean(claude: ClaudeHarness):
    """The validator's plugin-directory checks (README, LICENSE, icon...): none fail or warn.

    Separate from the manifest validation above: these findings "do not change the
    result" of `claude plugin validate`, but they are what the plugin catalog reads.
    """
    done = _validate(claude, "--json")
    report = json.loads(done.stdout)
    findings = (report.get("directory") or {}).get("findings") or []
    bad = [
        f"{f.get('severity')}: {f.get('code')}: {f.get('message')}"
        for f in findings
        if f.get("severity") in ("error", "warning") or f.get("blocking")
    ]
    assert not bad, "\n".join(bad)


# ----------------------------------------------------------------------------- (d)
def _tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def test_clean_install_bootstraps_runtime(claude: ClaudeHarness):
    """Marketplace add + install of a clean copy in a fresh HOME, then a session
    without --plugin-dir: the SessionStart hook builds the runtime from nothing and
    (a) holds."""
    checkout = clean_copy(REPO_ROOT, claude.root / "checkout")
    before = _tree(checkout)
    market = marketplace_name(checkout)
    version = plugin_version(checkout)

    claude.cli("plugin", "marketplace", "add", str(checkout), check=True)
    claude.cli("plugin", "install", f"{PLUGIN_NAME}@{market}", check=True)
    listed = claude.cli("plugin", "list", check=True).stdout
    assert f"{PLUGIN_NAME}@{market}" in listed, listed

    data = claude.home / ".claude" / "plugins" / "data" / f"{PLUGIN_NAME}-{market}"
    assert not (data / "runtime").exists()
    # Generous: this session's SessionStart creates a venv and pip-installs metacog.
    result = claude.run(
        failing_script(), prompt="Make the import check pass.", plugin_dir=None, timeout=480
    )
    ready = data / "runtime" / version / ".ready"
    log = data / "bootstrap.log"
    assert ready.exists(), (
        f"runtime not bootstrapped at {ready}\nbootstrap.log: "
        f"{log.read_text() if log.exists() else '(none)'}\n"
        f"data folder: {sorted(str(p.relative_to(data)) for p in data.rglob('*')) if data.exists() else '(none)'}\n"
        + result.describe()
    )
    assert_failure_loop_reached_model(result)
    assert "Traceback" not in claude.hook_stderr(data.name), claude.hook_stderr(data.name)
    # The same SessionStart started the resident process, in the data folder too.
    resident = data / "runtime" / version / "resident"
    assert (resident / "hook.sock").is_socket(), sorted(p.name for p in resident.glob("*"))
    assert (resident / "resident.log").read_text() == ""
    # A local marketplace is read in place: the plugin must not write into its root.
    after = _tree(checkout)
    assert after == before, {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(k for k in set(after) & set(before) if after[k] != before[k]),
    }
