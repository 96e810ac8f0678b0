"""metacog.senses.echo: code edited while the project's tests do not run, or only a narrowed one."""

from __future__ import annotations

from hooktest import bash, edit, read, texts


def test_edits_without_running_the_tests() -> None:
    calls = [read("/home/dev/project/tests/test_m.py")]
    said = texts(calls + [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(12)])
    assert not any(said[:12])
    assert "12 edits since the project's tests last ran" in said[12]


def test_edits_in_a_project_without_tests_in_sight_are_not_news() -> None:
    said = texts([edit(f"/home/dev/project/src/m{i}.py", i) for i in range(30)])
    assert not any(said)
    # A test seen later makes the pile of edits news, once.
    more = texts(
        [read("/home/dev/project/src/app.test.ts")] + [edit("/home/dev/project/src/x.py")] * 3
    )
    assert not more[0] and "31 edits since the project's tests last ran" in more[1]
    assert not any(more[2:])


def test_a_test_run_resets_and_docs_do_not_count() -> None:
    calls = [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)] + [bash("pytest -q")]
    calls += [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)]
    calls += [edit(f"/home/dev/project/docs/d{i}.md", i) for i in range(10)]
    assert not any(texts(calls))
    # The same edits without the test run do speak: the silence above is the reset's.
    without = texts([c for c in calls if c["tool_name"] != "Bash"])
    assert any("edits since the project's tests last ran" in s for s in without)


def test_only_the_new_test_runs() -> None:
    calls = [edit("/home/dev/project/src/app.py")] + [
        bash("pytest tests/test_new.py", stdout=f"r{i}") for i in range(3)
    ]
    said = texts(calls)
    assert "run only a narrowed test 3 times" in said[3]
