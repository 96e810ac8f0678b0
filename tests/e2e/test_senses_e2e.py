"""End to end, one session per sense: each sense's signal reaches the model's request.

Thresholds that need time or size (Chronos' minutes, O2's window) are lowered through
the project's `.claude/metacog.toml`, the documented way a person tunes them; the
signal still travels the whole real path: CLI, hook command, runtime, reply, request.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import REPO_ROOT, ClaudeHarness, SessionResult, clean_copy, request_text_blocks

pytestmark = pytest.mark.e2e


def bash(command: str) -> list:
    return [{"name": "Bash", "input": {"command": command, "description": "run"}}]


def read(path: Path) -> list:
    return [{"name": "Read", "input": {"file_path": str(path)}}]


def edit(path: Path, old: str, new: str) -> list:
    return [
        {"name": "Edit", "input": {"file_path": str(path), "old_string": old, "new_string": new}}
    ]


def configure(claude: ClaudeHarness, toml: str) -> None:
    folder = claude.project / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "metacog.toml").write_text(toml)


def said(result: SessionResult) -> list[str]:
    """metacog's texts, in the order the model received them (each request's new ones)."""
    assert result.returncode == 0 and not result.timed_out, result.describe()
    seen: list[str] = []
    for body in result.requests:
        for block in request_text_blocks(body):
            if "hook additional context: metacog:" in block and block not in seen:
                seen.append(block)
    return seen


def spoken(result: SessionResult, phrase: str) -> str:
    hits = [t for t in said(result) if phrase in t]
    assert hits, (
        f"no metacog text with {phrase!r}; metacog said {said(result)}\n{result.describe()}"
    )
    return hits[0]


def test_vestibular_same_action_same_result(metacog_claude: ClaudeHarness) -> None:
    result = metacog_claude.run([bash("git status --short")] * 4 + ["Done."])
    assert "git status --short" in spoken(result, "4 times in a row with the same result")


def test_nociception_escalates_to_socratic(metacog_claude: ClaudeHarness) -> None:
    result = metacog_claude.run([bash('python3 -c "import nosuchmodule_xyz"')] * 5 + ["Stop."])
    assert "nosuchmodule_xyz" in spoken(result, "state your assumption")


def test_a_refused_streak_is_heard_at_its_batch(metacog_claude: ClaudeHarness) -> None:
    # Claude Code fires no call's hook for a refused Edit, only PostToolBatch: the streak is
    # heard there, in the very next request, though no call runs after it.
    target = metacog_claude.project / "app.py"
    target.write_text("def f():\n    return 1\n")
    script = [read(target)] + [edit(target, f"return {n}00", "return 2") for n in (7, 8, 9)]
    result = metacog_claude.run([*script, "Done."])
    assert len(result.requests) == 5, result.describe()
    streak = "metacog: the same error 3 times in a row"
    before = [b for b in request_text_blocks(result.requests[3]) if streak in b]
    after = [b for b in request_text_blocks(result.requests[4]) if streak in b]
    assert not before and after, result.describe()
    assert after[0].startswith("PostToolBatch hook additional context: metacog:"), after
    assert "old_string is not in the file" in after[0]
    assert len(said(result)) == 1, said(result)  # heard once, not again from the transcript
    assert "Traceback" not in metacog_claude.hook_stderr(), metacog_claude.hook_stderr()


def test_nociception_hears_refused_edits_from_the_transcript(metacog_claude: ClaudeHarness) -> None:
    # A Claude Code that fires no PostToolBatch (the plugin registered without it): the next
    # calls read the refusals from the transcript, which Claude Code may write a call late (two
    # calls after them were once not enough on a loaded machine: metacog said nothing in 1 of
    # about 8 runs); three leave it the time.
    plugin = clean_copy(REPO_ROOT, metacog_claude.root / "plugin")
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())
    del hooks["hooks"]["PostToolBatch"]
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    metacog_claude.plugin_dir = plugin
    target = metacog_claude.project / "app.py"
    target.write_text("def f():\n    return 1\n")
    script = (
        [read(target)]
        + [edit(target, f"return {n}00", "return 2") for n in (9, 9, 9)]
        + [bash("ls"), bash("pwd"), bash("echo done")]
    )
    result = metacog_claude.run([*script, "Done."])
    heard = spoken(result, "the same error 3 times in a row")
    assert "old_string is not in the file" in heard
    assert heard.startswith("PostToolUse:Bash hook additional context:"), heard


def test_habit_hears_the_same_refusal_on_three_files(metacog_claude: ClaudeHarness) -> None:
    # An Edit whose old_string does not pick out one place of the file (not in it, twice in
    # the second file), on a new file each time, each fixed by the next Edit: no streak, a
    # habit. Claude Code refuses the Edit itself (no hook fires).
    script = []
    for n in range(3):
        target = metacog_claude.project / f"m{n}.py"
        target.write_text(f"x = {n}\ny = 0\nx = {n}\n" if n == 1 else f"x = {n}\n")
        guessed = f"x = {n}" if n == 1 else f"x = {n}  # guessed"
        script += [
            read(target),
            edit(target, guessed, f"x = {n + 10}"),
            edit(target, f"x = {n}\ny", f"x = {n + 10}\ny")
            if n == 1
            else edit(target, f"x = {n}", f"x = {n + 10}"),
        ]
    result = metacog_claude.run(
        [*script, bash("ls"), bash("pwd"), "Done."]
    )  # read a late transcript line
    said = spoken(result, "this is the 3rd time this session")
    assert "old_string does not pick out one place of the file" in said


def test_o2_real_fill_from_the_transcript(metacog_claude: ClaudeHarness) -> None:
    # The session's ~14K tokens in a 15K window: past where auto-compaction starts (12K), so
    # the level is news even without a measured rate.
    # An edit first: the level is said only when the work holds something to write down.
    configure(metacog_claude, "[o2]\ncontext_window = 15000\n")
    target = metacog_claude.project / "notes.py"
    target.write_text("x = 1\n")
    result = metacog_claude.run(
        [read(target), edit(target, "x = 1", "x = 2"), bash("echo one"), "Done."]
    )
    assert "of 15K tokens" in spoken(result, "context is")


def test_chronos_calls_since_the_person_spoke(metacog_claude: ClaudeHarness) -> None:
    configure(metacog_claude, "[chronos]\ncalls = 4\nmin_minutes_for_calls = 0\n")
    # Four commands against one wall, none overcome: the last three brought nothing new, a
    # grind worth a check-in.
    (metacog_claude.project / "db.sh").write_text(
        "echo 'psycopg.OperationalError: connection to server at db_host failed' >&2\nexit 1\n"
    )
    failing = [f"sh db.sh {step}" for step in ("migrate", "seed", "check", "up")]
    result = metacog_claude.run([bash(command) for command in failing] + ["Done."])
    said = spoken(result, "4 tool calls and 0 minutes since the person last spoke")
    assert "3 obstacles since that showed nothing new" in said and "check-in" in said


def test_spatial_blast_radius_of_an_edit(metacog_claude: ClaudeHarness) -> None:
    project = metacog_claude.project
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    core = project / "pkg" / "core.py"
    core.write_text("def answer():\n    return 41\n")
    for i in range(5):
        (project / f"user{i}.py").write_text("from pkg import core\n\nprint(core.answer())\n")
    result = metacog_claude.run([read(core), edit(core, "return 41", "return 42"), "Done."])
    assert "pkg/core.py" in spoken(result, "5 files import it")


def test_echo_edits_without_tests(metacog_claude: ClaudeHarness) -> None:
    configure(metacog_claude, "[echo]\nedits_without_tests = 2\n")
    a, b = metacog_claude.project / "a.py", metacog_claude.project / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 1\n")
    tests = metacog_claude.project / "test_a.py"
    tests.write_text("def test_a():\n    assert True\n")
    script = [
        # The session runs the project's tests (whether pytest is there or not: a run is
        # what Echo counts from), then edits without running them again.
        bash("python3 -m pytest -q || true"),
        read(a),
        edit(a, "x = 1", "x = 2"),
        read(b),
        edit(b, "y = 1", "y = 2"),
        "Done.",
    ]
    spoken(metacog_claude.run(script), "2 edits since the project's tests last ran")


def test_drift_from_the_request(metacog_claude: ClaudeHarness) -> None:
    configure(metacog_claude, "[drift]\nrecent_calls = 3\n")
    parser = metacog_claude.project / "parser.py"
    parser.write_text("def parse_header(line):\n    return line\n")
    # A detour that turned into a grind: one wall met three times, away from parser.py.
    (metacog_claude.project / "db.sh").write_text(
        "echo 'psycopg.OperationalError: connection to server at db_host failed' >&2\nexit 1\n"
    )
    detour = [bash(f"sh db.sh {step}") for step in ("migrate", "seed", "up")]
    script = [read(parser), *detour, "Done."]
    result = metacog_claude.run(script, prompt="Fix parse_header in parser.py for empty lines.")
    said = spoken(result, "touched none of what the request named")
    assert "parser.py" in said and "2 obstacles on the way showed nothing new" in said


def test_nociception_hears_one_place_searched_in_other_words(
    metacog_claude: ClaudeHarness,
) -> None:
    # Nothing found at the same place, asked four ways: the real Grep's empty answers are one
    # answer (metacog.perception.novelty.nothing), and the fourth is told.
    (metacog_claude.project / "app.py").write_text("def run():\n    return 1\n")
    words = ("useSocket", "socketClient", "wsClient", "WebSocketProvider")
    grep = [
        [{"name": "Grep", "input": {"pattern": w, "path": str(metacog_claude.project)}}]
        for w in words
    ]
    result = metacog_claude.run([*grep, "Nothing there."])
    assert "WebSocketProvider" in spoken(result, "found nothing")


def test_nociception_hears_a_wall_met_again_by_calls_that_exit_0(
    metacog_claude: ClaudeHarness,
) -> None:
    # A probe fails with its error; two other commands exit 0 printing only that error: the
    # same wall met again, whatever the exit code says (metacog.perception.novelty).
    denied = "Access denied (403 Forbidden) for key k-77"
    script = [
        bash(f"echo '{denied}' >&2; exit 1"),
        bash(f"echo '{denied}'"),
        bash(f"echo '{denied}' || true"),
        "Done.",
    ]
    result = metacog_claude.run(script)
    text = spoken(result, "showed only an earlier failure")
    assert "|| true" in text, text
