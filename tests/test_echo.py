"""metacog.senses.echo: code edited while the project's tests do not run."""

from __future__ import annotations

from hooktest import bash, edit, read, texts


def test_edits_without_running_the_tests() -> None:
    calls = [bash("pytest -q")]
    said = texts(calls + [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(12)])
    assert not any(said[:12])
    assert "12 edits since the project's tests last ran" in said[12]


def test_edits_in_a_session_that_never_ran_the_tests_are_not_news() -> None:
    # The session's own test loop is what a pile of edits departs from: a project whose
    # tests this session never ran, however many test files it read, has none to name.
    said = texts([edit(f"/home/dev/project/src/m{i}.py", i) for i in range(30)])
    assert not any(said)
    seen = texts(
        [read("/home/dev/project/src/app.test.ts")]
        + [edit(f"/home/dev/project/src/x{i}.py", i) for i in range(14)]
    )
    assert not any(seen)
    # A test run makes the next pile of edits news, once.
    ran = texts([bash("npm test")] + [edit(f"/home/dev/project/src/y{i}.py", i) for i in range(14)])
    assert not any(ran[:12]) and "12 edits since the project's tests last ran" in ran[12]
    assert not ran[13]


def test_a_test_run_resets_and_docs_do_not_count() -> None:
    calls = [bash("pytest -q")] + [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)]
    calls += [bash("pytest -q")]
    calls += [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)]
    calls += [edit(f"/home/dev/project/docs/d{i}.md", i) for i in range(10)]
    assert not any(texts(calls))
    # The same edits without the second test run do speak: the silence above is the reset's.
    without = texts(calls[:9] + calls[10:])
    assert any("edits since the project's tests last ran" in s for s in without)


def test_only_the_new_test_runs_is_the_loop_of_the_work() -> None:
    # Issue 39: "only a narrowed test 3 times" after a change fell 7 times of 9 on labelled
    # quiet sessions; a narrowed run checks the edits as a whole run does.
    calls = (
        [bash("pytest -q")]
        + [edit("/home/dev/project/src/app.py")]
        + [bash("pytest tests/test_new.py", stdout=f"r{i}") for i in range(3)]
    )
    assert not any(texts(calls))
    # It resets the count of edits since the tests ran, as a whole run does.
    edits = [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)]
    narrowed = [*calls, *edits, bash("pytest tests/test_new.py::t"), *edits]
    assert not any(texts(narrowed))
    assert any("edits since" in s for s in texts([*calls, *edits, *edits]))
