"""A run that writes into the checkout fails and names what it wrote (tests/checkout_guard.py);
one that writes only into its temporary folders passes. Each runs pytest on a checkout of its
own (pytester), a git repository or, without one, a plain folder. The quick suite keeps the
first two; what each kind of change reads as, and the tools' folders, are slow."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

WRITES = """
from pathlib import Path

def test_it(tmp_path):
    (tmp_path / "scratch.txt").write_text("fine")
    {action}
"""
CHECKOUT = "Path(__file__).parent"
LEARNED = (
    f'(({CHECKOUT} / ".claude").mkdir(), '
    f'({CHECKOUT} / ".claude" / "metacog-learnings.jsonl").write_text("{{}}\\n"))'
)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def checkout(pytester: pytest.Pytester, action: str, repository: bool = True) -> Path:
    pytester.makepyfile(test_sample=WRITES.format(action=action))
    (pytester.path / "README.txt").write_text("tracked\n")
    (pytester.path / ".gitignore").write_text("dist/\n")
    (pytester.path / "dist").mkdir()
    if repository:
        git(pytester.path, "init", "-q")
        git(pytester.path, "add", "-A")
        git(pytester.path, "commit", "-qm", "sample")
    return pytester.path


def run(pytester: pytest.Pytester) -> pytest.RunResult:
    return pytester.runpytest("-p", "checkout_guard", "-p", "no:cacheprovider")


@pytest.mark.parametrize("repository", [True, False], ids=["git", "listing"])
def test_a_run_that_writes_a_learned_rule_into_the_checkout_fails_naming_it(
    pytester: pytest.Pytester, repository: bool
) -> None:
    checkout(pytester, LEARNED, repository)
    result = run(pytester)
    result.assert_outcomes(passed=1)  # every test passed, and still the run fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*the checkout changed*", "*created: .claude/metacog-learnings.jsonl*"]
    )
    assert ("is not a git checkout" in result.stdout.str()) is not repository


@pytest.mark.parametrize("repository", [True, False], ids=["git", "listing"])
def test_a_run_that_writes_only_into_its_temporary_folders_passes(
    pytester: pytest.Pytester, repository: bool
) -> None:
    checkout(pytester, "pass", repository)
    (pytester.path / "README.txt").write_text("changed before the run\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "the checkout changed" not in result.stdout.str()


@pytest.mark.slow  # a pytest run of its own per case
@pytest.mark.parametrize(
    ("action", "line"),
    [
        pytest.param(
            f'({CHECKOUT} / "README.txt").write_text("x")', "changed: README.txt", id="tracked"
        ),
        pytest.param(f'({CHECKOUT} / "README.txt").unlink()', "removed: README.txt", id="deleted"),
        pytest.param(
            f'({CHECKOUT} / "dist" / "a.whl").write_text("x")', "created: dist/a.whl", id="ignored"
        ),
    ],
)
def test_a_change_to_a_tracked_or_an_ignored_file_is_named(
    pytester: pytest.Pytester, action: str, line: str
) -> None:
    checkout(pytester, action)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*{line}*"])


@pytest.mark.slow  # a pytest run of its own per case
def test_a_file_already_changed_before_the_run_is_seen_changing_again(
    pytester: pytest.Pytester,
) -> None:
    checkout(pytester, f'({CHECKOUT} / "README.txt").write_text("and again, longer")')
    (pytester.path / "README.txt").write_text("changed before the run\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*changed: README.txt*"])


@pytest.mark.slow  # a pytest run of its own per case
def test_tools_folders_are_not_the_checkout_changing(pytester: pytest.Pytester) -> None:
    made = [".pytest_cache/x", "pkg/__pycache__/m.pyc", ".hypothesis/c", "m.egg-info/PKG-INFO"]
    action = "; ".join(
        f'(({CHECKOUT} / "{p}").parent.mkdir(parents=True, exist_ok=True), '
        f'({CHECKOUT} / "{p}").write_text("x"))'
        for p in made
    )
    checkout(pytester, action)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
