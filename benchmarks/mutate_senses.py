"""Would the tests notice? Every sense's `feel` made to raise; how many tests still pass.

    python benchmarks/mutate_senses.py [--without-strict] [--json OUT] [-- PYTEST_ARGS...]

Runs the quick suite (`-m "not slow" --ignore=tests/e2e`, or PYTEST_ARGS) in a fresh
pytest with this file loaded as a plugin (`-p mutate_senses`). Before any test is
collected, the plugin replaces `feel` in every module of metacog.senses.SENSES by a stub
that notes which test called it and raises. A child process the tests start with the
interpreter of this run (`sys.executable`, with `-I` too: the hook's own way) is mutated
the same way, through a .pth file put in this interpreter's site-packages for the run and
taken away after it; it acts only where METACOG_MUTATE_SENSES names the note file, so
every other use of the interpreter is untouched.

What "drives a sense" means: a test item during whose setup, call or teardown some sense's
`feel` was called, in the test process or in a child as above. The stub is called exactly
where the real `feel` would be: up to the first call the mutated run and a normal one are
the same, so the set is the one a normal run would show. Not seen: children started with
`-S` (no site-packages) and the resident processes of tests/test_resident.py (a venv of
their own); their tests count only if they also drive a sense in the test process.

The report gives, of the items that drive a sense, how many still pass (the figure issue
#23 bounds at 5%), and the same for the items chosen by name (the test files named for the
senses and the ones that drive them: NAMED below), for comparison with the first count
(197 of 353). An item passes if its setup, call and teardown all passed; skipped items are
counted apart.

The suite runs in its strict mode (tests/conftest.py: a test fails if a sense or handler
raised during it, whatever it asserts). `--without-strict` turns the mode's record off
(metacog.fsutil.strict made a no-op, in the children too): what the tests' own assertions
catch, the measure of tests that assert silence and would pass whatever broke it.

Measured (issue 23; quick suite, 2 CPUs): before the strict mode, 143 of the 524 items that
drive a sense still passed (27.3%; by name 195 of 353, 55.2%). With it, 0 of 524 (by name
102 of 354, all items that call no feel); --without-strict, 136 of 524 (25.9%).
"""

from __future__ import annotations

# Only os and sys at the top: a child imports this file at its start, and some tests look
# at what a child has imported (`subprocess` in sys.modules, for one).
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NOTE_ENV = "METACOG_MUTATE_SENSES"  # the file each stub call appends its test's id to
LAX_ENV = "METACOG_MUTATE_LAX"  # "1": the strict mode's record is not written (--without-strict)
PTH = "zz_metacog_mutate_senses.pth"
# The name-based selection: the files named for a sense or for what drives the senses.
NAMED = (
    "test_chronos.py",
    "test_drift.py",
    "test_echo.py",
    "test_habit.py",
    "test_nociception.py",
    "test_o2.py",
    "test_reflex.py",
    "test_spatial.py",
    "test_vestibular.py",
    "test_nervous.py",
    "test_hidden.py",
    "test_symptoms.py",
    "test_contract.py",
    "test_hook_events.py",
    "test_cli_replay.py",
)
QUICK = ["-m", "not slow", "--ignore=tests/e2e"]


class Mutated(RuntimeError):
    """What every mutated `feel` raises."""


def _current_test() -> str:
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.rsplit(" (", 1)[0] if current else "?"


def _note(path: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(_current_test() + "\n")
    except OSError:
        pass


def mutate(senses: tuple, note: str) -> None:
    """Replace each sense's `feel` by one that notes the test and raises."""
    for sense in senses:

        def feel(win: dict, action: dict, ctx: object, _name: str = sense.NAME) -> None:
            _note(note)
            raise Mutated(f"mutated: {_name}.feel")

        sense.feel = feel


def lax(fsutil: object) -> None:
    """The strict mode's record (metacog.fsutil.strict) no longer written: what the tests'
    own assertions catch."""
    fsutil.strict = lambda what, exc: None


def _patch(module: object) -> None:
    if module.__name__ == "metacog.senses":
        mutate(module.SENSES, os.environ[NOTE_ENV])
    elif os.environ.get(LAX_ENV) == "1":
        lax(module)


class _AfterImport:
    """In a child: mutate metacog.senses (and metacog.fsutil) once imported (the child puts
    the checkout on its path later)."""

    def __init__(self) -> None:
        self.names = {"metacog.senses", "metacog.fsutil"}

    def find_spec(self, name: str, path: object, target: object = None) -> object:
        if name not in self.names:
            return None
        self.names.discard(name)
        import importlib.util

        sys.meta_path.remove(self)  # the real finders look it up
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self.names:
                sys.meta_path.insert(0, self)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_module(module: object) -> None:
                run(module)
                _patch(module)

            spec.loader.exec_module = exec_module
        return spec


def child() -> None:
    """Called from the .pth at a child's start."""
    if os.environ.get(NOTE_ENV):
        sys.meta_path.insert(0, _AfterImport())


# The pytest plugin (this module loaded with `-p mutate_senses`).

_outcomes: dict[str, str] = {}


def pytest_configure(config: object) -> None:
    from metacog import fsutil, senses

    _patch(senses)
    _patch(fsutil)


def pytest_runtest_logreport(report: object) -> None:
    before = _outcomes.get(report.nodeid)
    if report.outcome == "failed" or before == "failed":
        _outcomes[report.nodeid] = "failed"
    elif report.outcome == "skipped":
        _outcomes[report.nodeid] = "skipped"
    elif before is None:
        _outcomes[report.nodeid] = "passed"


def pytest_sessionfinish(session: object) -> None:
    import json

    out = os.environ.get("METACOG_MUTATE_OUTCOMES")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(_outcomes, fh)


# The script.


def _share(items: list[str], outcomes: dict[str, str]) -> dict:
    passed = sorted(i for i in items if outcomes.get(i) == "passed")
    skipped = sum(outcomes.get(i) == "skipped" for i in items)
    counted = len(items) - skipped
    return {
        "items": len(items),
        "skipped": skipped,
        "passed": len(passed),
        "share": round(len(passed) / counted, 4) if counted else 0.0,
        "passing": passed,
    }


def measure(pytest_args: list[str], strict: bool = True) -> dict:
    import json
    import subprocess
    import sysconfig
    import tempfile
    from pathlib import Path

    site = Path(sysconfig.get_path("purelib"))
    pth = site / PTH
    with tempfile.TemporaryDirectory(prefix="metacog-mutate-") as tmp:
        note, outcomes = Path(tmp) / "called", Path(tmp) / "outcomes.json"
        note.touch()
        env = {
            **os.environ,
            NOTE_ENV: str(note),
            LAX_ENV: "0" if strict else "1",
            "METACOG_MUTATE_OUTCOMES": str(outcomes),
            "PYTHONPATH": os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])),
        }
        # One line, run at every start of this interpreter while the run lasts: nothing
        # happens where the variable is not set.
        pth.write_text(
            f"import os, sys; os.environ.get({NOTE_ENV!r}) and (sys.path.append({HERE!r}), "
            "__import__('mutate_senses').child())\n"
        )
        try:
            args = [sys.executable, "-m", "pytest", "-q", "-p", "mutate_senses"]
            args += ["-p", "no:cacheprovider", *pytest_args]
            subprocess.run(args, cwd=ROOT, env=env, check=False)
        finally:
            pth.unlink(missing_ok=True)
        results = json.loads(outcomes.read_text())
        called = set(note.read_text().splitlines())
    driving = sorted(i for i in results if i in called)
    named = sorted(i for i in results if i.split("::")[0].rsplit("/", 1)[-1] in NAMED)
    return {
        "args": pytest_args,
        "strict": strict,
        "items": len(results),
        "driving": _share(driving, results),
        "named": _share(named, results),
        "called_outside_items": sorted(called - set(results)),
    }


def main() -> None:
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the full result (the passing items too) here")
    parser.add_argument(
        "--without-strict",
        action="store_true",
        help="the strict mode's record not written: what the assertions alone catch",
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: instead of the quick suite")
    opts = parser.parse_args()
    result = measure(opts.pytest_args or QUICK, strict=not opts.without_strict)
    if opts.json:
        Path(opts.json).write_text(json.dumps(result, indent=1) + "\n")
    mode = "strict mode on" if result["strict"] else "strict mode's record off"
    print(f"\n{result['items']} items run with every sense's feel raising ({mode})")
    for key, what in (("driving", "drive a sense (instrumented)"), ("named", "by name")):
        r = result[key]
        print(
            f"  {what:30} {r['items']:4} items, {r['skipped']} skipped; "
            f"still pass: {r['passed']} ({r['share']:.1%})"
        )
    for item in result["driving"]["passing"]:
        print(f"    still passes: {item}")


if __name__ == "__main__":
    main()
