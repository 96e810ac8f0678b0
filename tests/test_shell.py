"""metacog.perception.shell: what a shell command does, read from its words."""

from __future__ import annotations

import pytest

from metacog.perception.shell import (
    first_word,
    is_test_file,
    narrowed,
    writes,
)
from metacog.perception.shell import test_command as runs_the_tests  # not a test itself


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("grep -rn TODO src", "grep"),
        ("cd web && FOO=1 npx vitest run", "npx"),
        ("env LANG=C sudo /usr/bin/make -j4", "make"),
        ("", ""),
    ],
)
def test_the_program_a_command_runs_first(command: str, program: str) -> None:
    assert first_word(command) == program


@pytest.mark.parametrize(
    ("command", "changes"),
    [
        ("sed -i 's/a/b/' x.txt", True),
        ("echo done > status.txt", True),
        ("git checkout -- a.py", True),
        ("uv add httpx", True),
        ("sed -n 1,20p x.txt", False),  # reads
        ("echo done | grep do", False),  # no redirect
        ("git log --oneline", False),
    ],
)
def test_a_command_that_changes_files_or_the_repository(command: str, changes: bool) -> None:
    assert writes(command) is changes


@pytest.mark.parametrize(
    ("command", "runs_tests"),
    [
        ("pytest -x tests/test_a.py", True),
        ("uv run python -m pytest", True),
        ("cd app && FOO=1 npx jest --watch=false", True),
        ("./node_modules/.bin/vitest run", True),
        ("make build && go test ./...", True),
        ("pip install pytest", False),
        ("cat pytest.ini", False),
        ("npm run build", False),
    ],
)
def test_a_command_that_runs_the_projects_tests(command: str, runs_tests: bool) -> None:
    assert runs_the_tests(command) is runs_tests


def test_a_test_file_by_its_name_or_folder_and_a_run_narrowed_to_one() -> None:
    assert is_test_file("tests/helpers.py") and is_test_file("src/a.test.ts")
    assert is_test_file("pkg/x_test.go") and not is_test_file("src/contest.py")
    assert narrowed("pytest tests/test_a.py::test_b") and narrowed("go test -run TestX ./...")
    assert narrowed("npx jest src/a.test.ts") and not narrowed("pytest -x")
