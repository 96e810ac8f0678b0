"""The sense contract (metacog.senses.contract): what a sense declares, what it may read, and
that a sense switched off, failing or without settings takes nothing from the others."""

from __future__ import annotations

import ast
import inspect
import json
import sys
import types
from pathlib import Path

import pytest
from hooktest import agent_text, bash, captured, edit, failed, read, send

from metacog import facts, nervous, paths, schema
from metacog.learning import detectors
from metacog.senses import SENSES, contract

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "metacog"
NAMES = [sense.NAME for sense in SENSES]
T0 = 1_800_000_000.0
FORBIDDEN_FOR_SENSES = {"metacog.nervous", "metacog.handlers", "metacog.summary", "metacog.facts"}


def imported(path: Path) -> set[str]:
    """Every module a source file imports, anywhere in it (inside functions and TYPE_CHECKING
    too); `from metacog.senses import x` counts as `metacog.senses.x`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def sense_file(name: str) -> Path:
    return PACKAGE / "senses" / f"{name}.py"


# What the modules say ----------------------------------------------------------------------


def test_no_sense_imports_another_nor_the_nervous_system() -> None:
    for name in NAMES:
        uses = imported(sense_file(name))
        others = {f"metacog.senses.{other}" for other in NAMES if other != name}
        assert not uses & others, (name, uses & others)
        # Context comes from the contract, which the nervous system imports too.
        assert not uses & FORBIDDEN_FOR_SENSES, (name, uses & FORBIDDEN_FOR_SENSES)


def test_senses_read_facts_not_the_states_layout() -> None:
    """The context's fill, the responses, the windows: facts in the Context, not `ctx.state`."""
    for name in NAMES:
        for node in ast.walk(ast.parse(sense_file(name).read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("state", "win"):
                raise AssertionError((name, node.lineno, node.attr))


def test_only_the_tuple_imports_a_sense() -> None:
    """Everything else knows the senses through SENSES (the list of names, the settings)."""
    modules = {f"metacog.senses.{name}" for name in NAMES}
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "senses" / "__init__.py":
            continue
        assert not imported(path) & modules, (path, imported(path) & modules)


def test_nobody_reads_a_senses_memory_but_the_sense() -> None:
    """No peek/memory/forget of a named sense, and no reach into the window's "senses",
    outside the sense's own module (signal.py keeps the one way in)."""
    for path in PACKAGE.rglob("*.py"):
        own = path.stem if path.parent.name == "senses" else ""
        # The CLI's reports have a "senses" of their own (the readings, by name).
        window_free = path.parent.name == "cli"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname in ("peek", "memory", "forget"):
                    named = [
                        a.value
                        for a in node.args
                        if isinstance(a, ast.Constant) and a.value in NAMES
                    ]
                    assert not named or named == [own], (path, node.lineno, named)
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == "senses"
            ):
                assert path.name == "signal.py" or window_free, (path, node.lineno)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get":
                arg = node.args[0] if node.args else None
                if isinstance(arg, ast.Constant) and arg.value == "senses":
                    assert path.name == "signal.py" or window_free, (path, node.lineno)


def test_every_sense_declares_its_contract() -> None:
    hooks = {"on_prompt": 3, "on_compaction": 2, "after_subagent": 2}
    for sense in SENSES:
        assert Path(sense.__file__).stem == sense.NAME
        doc = (sense.__doc__ or "").strip()
        assert doc.split("\n\n")[0].count("\n") == 0, sense.NAME  # one line: what it feels
        assert isinstance(sense.DEFAULTS, dict) and sense.DEFAULTS.get("enabled") is True
        assert set(sense.LIMITS) <= set(sense.DEFAULTS), sense.NAME
        for key, (low, high) in sense.LIMITS.items():
            assert low <= sense.DEFAULTS[key] <= high, (sense.NAME, key)
        assert len(inspect.signature(sense.feel).parameters) == 3
        assert len(inspect.signature(sense.reading).parameters) == 2
        for hook, arity in hooks.items():
            if hasattr(sense, hook):
                assert len(inspect.signature(getattr(sense, hook)).parameters) == arity


def test_settings_and_names_derive_from_the_tuple() -> None:
    for sense in SENSES:
        assert schema.DEFAULTS[sense.NAME] is sense.DEFAULTS
        for key, bound in sense.LIMITS.items():
            assert schema.LIMITS[(sense.NAME, key)] == bound
    assert tuple(NAMES) == detectors.SENSES
    assert nervous.Context is contract.Context


def test_the_order_of_senses_is_only_the_order_of_the_message() -> None:
    """Habit learns that an error is a streak from the streak fact, not from Nociception
    having spoken first: reordering the tuple changes no sense's signals."""
    call = failed("pytest -x", "E   AssertionError: boom\nFAILED t.py::x - boom")

    def said(order: tuple, session: str) -> list[str]:
        saved = nervous.SENSES
        nervous.SENSES = order  # the loop of nervous.feel runs over it
        try:
            return [agent_text(send({**call, "session_id": session}, now=T0 + i)) for i in range(5)]
        finally:
            nervous.SENSES = saved

    forward = said(SENSES, "forward")
    backward = said(tuple(reversed(SENSES)), "backward")
    assert forward == backward
    assert sum("the same error" in text for text in forward) == 2  # at 3 and at 5
    assert not any("time this session" in text for text in forward)  # Habit hears the streak


# Failing senses, missing settings -----------------------------------------------------------


def _log(home: Path) -> str:
    path = Path(paths.state_dir()) / "metacog.log"
    return path.read_text() if path.exists() else ""


@pytest.fixture
def extra_sense(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A sense module added at the head of the tuple the nervous system runs."""
    module = types.ModuleType("metacog.senses.newcomer", "Newcomer: a sense without settings.")
    module.NAME = "newcomer"
    module.feel = lambda win, action, ctx: None
    module.reading = lambda win, ctx: ""
    monkeypatch.setattr(nervous, "SENSES", (module, *SENSES))
    return module


def test_a_sense_without_settings_is_skipped_and_the_others_speak(
    isolated_home: Path, extra_sense: types.ModuleType
) -> None:
    said = [agent_text(send(bash("git status"), now=T0 + i)) for i in range(4)]
    assert "4 times in a row" in said[3]
    assert _log(isolated_home).count("sense newcomer has no settings section: skipped") == 4


@pytest.mark.sense_may_fail("sense newcomer")
def test_a_failing_sense_is_skipped_and_the_others_speak(
    isolated_home: Path, extra_sense: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(win: dict, action: dict, ctx: contract.Context) -> None:
        raise ZeroDivisionError("newcomer's bug")

    monkeypatch.setattr(extra_sense, "feel", broken)
    monkeypatch.setitem(schema.DEFAULTS, "newcomer", {"enabled": True})
    said = [agent_text(send(bash("git status"), now=T0 + i)) for i in range(4)]
    assert "4 times in a row" in said[3]
    assert "sense newcomer failed: ZeroDivisionError: newcomer's bug" in _log(isolated_home)


# The strict mode (tests/conftest.py) fails a test in which a sense raised, whatever it asserts.
STRICT_CASES = """
import subprocess
import sys

import pytest
from hooktest import bash, send

from metacog.senses import habit

ROOT = {root!r}


def broken(win, action, ctx):
    raise ZeroDivisionError("habit's bug")


def test_a_sense_raised_and_nothing_asserted(monkeypatch):
    monkeypatch.setattr(habit, "feel", broken)
    send(bash("ls"))


@pytest.mark.sense_may_fail("sense habit")
def test_the_failure_it_names(monkeypatch):
    monkeypatch.setattr(habit, "feel", broken)
    send(bash("ls"))


@pytest.mark.sense_may_fail("sense vestibular")
def test_another_failure_than_it_names(monkeypatch):
    monkeypatch.setattr(habit, "feel", broken)
    send(bash("ls"))


def test_a_sense_raised_in_a_child_process():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from metacog import hook, paths\\n"
        "from metacog.senses import habit\\n"
        "def broken(*args): raise ZeroDivisionError('in the child')\\n"
        "habit.feel = broken\\n"
        "hook.handle(sys.stdin.buffer.read(), paths.state_dir())\\n"
    )
    payload = __import__("json").dumps(bash("ls")).encode()
    subprocess.run([sys.executable, "-I", "-c", code, ROOT], input=payload, check=True)
"""


def test_the_strict_mode_fails_a_test_in_which_a_sense_raised(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "tests"))  # hooktest
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    sense_may_fail: what may fail\n")
    pytester.makepyfile(test_cases=STRICT_CASES.format(root=str(ROOT)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--rootdir={pytester.path}")
    # A record fails the test at its teardown: pytest counts the call passed, the item an error.
    result.assert_outcomes(passed=4, errors=3)
    errors = {
        line.split("::")[-1].split(" ")[0] for line in result.outlines if line.startswith("ERROR")
    }
    assert errors == {
        "test_a_sense_raised_and_nothing_asserted",
        "test_another_failure_than_it_names",
        "test_a_sense_raised_in_a_child_process",
    }
    out = result.stdout.str()
    assert "raised during this test: sense habit" in out and "ZeroDivisionError: habit's bug" in out
    assert "ZeroDivisionError: in the child" in out


@pytest.mark.sense_may_fail("sense vestibular")
def test_a_repeat_the_person_asked_for_survives_a_failing_vestibular(isolated_home: Path) -> None:
    """It was Vestibular's memory: a Vestibular failure forgot it, and Nociception spoke
    during the runs the person asked for."""
    send(captured("UserPromptSubmit", prompt="run the flaky test 5 times"), now=T0)
    flaky = failed("pytest -k flaky", "E   AssertionError: flaky\nFAILED t.py::flaky - flaky")
    send(flaky, now=T0 + 1)
    [path] = (isolated_home / "state" / "sessions").glob("*.json")
    st = json.loads(path.read_text())
    st["windows"]["main"]["senses"]["vestibular"] = {"quiet_until": "damaged"}
    path.write_text(json.dumps(st))
    said = [agent_text(send(flaky, now=T0 + 2 + i)) for i in range(5)]
    assert said == [""] * 5
    assert "sense vestibular failed: TypeError" in _log(isolated_home)


# Each sense off in turn ----------------------------------------------------------------------


def _session(tmp_path: Path) -> list[tuple[dict, float]]:
    """One realistic session, two minutes between calls, that makes most senses speak."""
    from transcripts import Transcript

    tmp_path.mkdir(parents=True, exist_ok=True)
    log = Transcript(tmp_path / "t.jsonl")
    via = {"transcript_path": str(log.path)}
    src = "/home/dev/project/src"
    forbidden = (
        "Exit code 1\nHTTP 403: Resource not accessible by integration "
        "(https://api.github.com/repos/o/r/issues)"
    )
    lint = "E   AssertionError: parse_header returned None\nFAILED tests/test_parser.py::t - x"
    steps: list[dict] = [captured("UserPromptSubmit", prompt="Fix parse_header in parser.py")]
    steps += [read(f"{src}/parser.py", **via), bash("ls", **via)] * 3
    for n in range(3):
        steps += [
            failed(f"gh api repos/o/r/issues -f title=t{n}", forbidden),
            failed("gh auth status", f"Exit code 1\nX Failed to log in to github.com ({n})"),
            bash("pwd", **via),
        ]
    for n in range(3):
        steps += [failed("pytest tests/test_parser.py", lint), edit(f"{src}/parser.py", n)]
    steps += [failed("pytest tests/test_parser.py", lint)] * 4
    steps += [bash("git status", **via)] * 4
    steps += [edit(f"{src}/mod{n}.py", n) for n in range(12)]
    steps += [bash(f"echo away {n}", **via) for n in range(23)]
    # A wall met on the detour, and met again: a detour turned into a grind (Drift).
    wall = "Exit code 1\npsycopg.OperationalError: connection to server at db_host failed"
    steps += [failed(f"sh db.sh step{n}", wall) for n in range(3)]
    out = [(step, T0 + 120 * i) for i, step in enumerate(steps)]
    log.usage(164_000, model="claude-sonnet-4-5")  # read at the next call: at the edge, O2 speaks
    return out


def _run(steps: list[tuple[dict, float]], home: Path, off: str) -> tuple[list[set], dict]:
    """Which senses spoke at each call (from the state's counts), and the summary."""
    cfg = home / "config"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(
        "[learning]\nenabled = false\n" + (f"[{off}]\nenabled = false\n" if off else "")
    )
    spoke, before = [], {}
    for payload, now in steps:
        send(payload, now=now)
        [path] = (home / "state" / "sessions").glob("*.json")
        fired = json.loads(path.read_text())["summary"]["fired"]
        spoke.append({s for s in fired if fired[s] > before.get(s, 0)})
        before = fired
    summary = json.loads(path.read_text())["summary"]
    return spoke, summary


@pytest.mark.parametrize("off", NAMES)
def test_each_sense_off_in_turn_changes_nothing_else(
    off: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = {}
    for name in ("", off):
        home = tmp_path / f"home-{name or 'all'}"
        monkeypatch.setenv("METACOG_HOME", str(home))
        runs[name] = _run(_session(tmp_path / (name or "all")), home, name)
    (on_spoke, on_summary), (off_spoke, off_summary) = runs[""], runs[off]
    heard = set().union(*on_spoke)
    # Spatial needs importers on disk, Reflex an earlier session's resolution or digest: neither here.
    assert heard >= set(NAMES) - {"spatial", "reflex"}, heard
    assert [s - {off} for s in on_spoke] == off_spoke
    on_summary["fired"].pop(off, None)
    assert on_summary == off_summary


def test_chronos_off_still_counts_the_minutes_of_work(isolated_home: Path) -> None:
    """The long-autonomous-run pattern's time criterion is a fact, not Chronos' memory:
    20 calls two minutes apart are 40 minutes with Chronos off too (it was 0.0)."""
    config_dir = isolated_home / "config"
    config_dir.mkdir(parents=True)
    results = []
    for enabled in ("true", "false"):
        (config_dir / "config.toml").write_text(f"[chronos]\nenabled = {enabled}\n")
        session = f"chronos-{enabled}"
        send(captured("UserPromptSubmit", prompt="go", session_id=session), now=T0)
        for i in range(20):
            send(bash(f"echo {i}", session_id=session), now=T0 + 120 * (i + 1))
        st = json.loads((isolated_home / "state" / "sessions" / f"{session}.json").read_text())
        results.append(
            (
                st["summary"]["max_minutes_between_prompts"],
                st["summary"]["max_calls_between_prompts"],
            )
        )
    assert results == [(40.0, 20), (40.0, 20)]


# The facts ----------------------------------------------------------------------------------


def test_the_hook_path_pays_nothing_for_the_protocol() -> None:
    """The Sense protocol is for the type checker: `typing` stays out of the hook's modules."""
    import subprocess

    code = (
        "import sys, json\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog import hook, paths\n"
        "for line in open(sys.argv[1], 'rb'):\n"
        "    hook.handle(line, paths.state_dir())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    fixture = ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code, str(fixture)], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(out.stdout.splitlines()[-1]))
    assert "typing" not in loaded
    assert {"metacog.facts", "metacog.senses.contract"} <= loaded


@pytest.mark.sense_may_fail("facts")
def test_damaged_facts_are_set_aside_and_sensing_goes_on(isolated_home: Path) -> None:
    send(bash("git status"), now=T0)
    [path] = (isolated_home / "state" / "sessions").glob("*.json")
    st = json.loads(path.read_text())
    st["windows"]["main"]["facts"] = {"last_ts": "damaged", "streak": {"count": 2}, "reads": 3}
    path.write_text(json.dumps(st))
    said = [agent_text(send(bash("git status"), now=T0 + 1 + i)) for i in range(3)]
    assert "4 times in a row" in said[2]
    assert _log(isolated_home).count("facts failed: TypeError") == 1  # set aside, then mended
    st = json.loads(path.read_text())
    st["windows"]["main"]["prompt_at"] = "damaged"  # the window's own key: mended in place
    st["windows"]["main"]["facts"].pop("last_ts")
    path.write_text(json.dumps(st))
    send(bash("ls"), now=T0 + 10)
    before = json.loads(path.read_text())["windows"]["main"]
    send(bash("ls"), now=T0 + 70)
    after = json.loads(path.read_text())["windows"]["main"]
    assert before["prompt_at"] == T0 + 10
    assert after["active_s"] - before["active_s"] == 60.0
    assert _log(isolated_home).count("facts failed") == 1


def test_asked_to_repeat_reads_words_not_substrings() -> None:
    assert facts.asked_to_repeat("run it 5 times and report")
    assert facts.asked_to_repeat("please poll the job")
    assert not facts.asked_to_repeat("don't stop until it passes; sometimes it flakes")


SHARED = ROOT.parent / "shared" / "transcripts"
# Sessions where, between them, every sense speaks that speaks at all in the shared history
# (score_labels --signals: Spatial and Vestibular never do; the session above has them).
REPLAYED = (
    "kesslerio+attio-mcp-server__logs__chat.json@55acb2ecea__9fa9888f-c14c-4614-b154-2bcf0b029f18",
    "daaain+claude-code-log__Users-dain-workspace-claude-code-log-sample__37f83ec9-f2ea-42a9-925e-0d5c105cb6e8",
    "conneroisu+templar__logs-chat.json@779277eb10__5e052a87-9445-4114-b898-3ffd834321d7",
    "daaain+claude-code-log__src-deep-manifest__a7da6a22-facc-4fcd-8bab-f83c87862004",
    "daaain+claude-code-log__src-experiments-claude_p__2b4ed4c0-b905-41de-9238-273db3ec737a",
    "superdisco-agents+moai-flow__logs__chat.json@505bf6a22b__f6fc8c95-f7ee-4865-9134-86cbbd45847a",
    # Chronos: a grind against obstacles that brought nothing new.
    "GiovaniOliver+livestream-copilot__logs__chat.json@52c3540aab__2da7e594-5ec5-4552-9042-b09fcaf09cdd",
    # Drift: a detour away from what the request named, turned into a grind.
    "erewhon+medianator__logs__chat.json@e7a898b894__e67787d1-892e-4713-b9af-2899894211b9",
)


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared transcripts are not at {SHARED}")
def test_each_sense_off_over_real_sessions_changes_nothing_else() -> None:
    from metacog import replay

    def spoke(path: Path, off: str) -> list[tuple[int, frozenset]]:
        cfg = {off: {"enabled": False}} if off else None
        out = []
        for signal in replay.replay(str(path), cfg=cfg)["signals"]:
            # O2's compaction note is O2's: it goes with it.
            senses = set(signal["sense"].split("+")) - {off} - ({"note"} if off == "o2" else set())
            if senses:
                out.append((signal["call"], frozenset(senses)))
        return out

    heard: set[str] = set()
    for name in REPLAYED:
        path = SHARED / f"{name}.jsonl"
        base = spoke(path, "")
        heard |= set().union(*(senses for _, senses in base))
        for off in NAMES:
            # A compaction's note is every sense's that leaves one (O2, Reflex): with one of
            # them off the note changes, which is that sense's own doing.
            gone = {off, "note"} if off in ("o2", "reflex") else {off}
            expected = [(c, s - gone) for c, s in base if s - gone]
            assert expected == [(c, s - gone) for c, s in spoke(path, off) if s - gone], (name, off)
    assert heard >= set(NAMES) - {"spatial", "vestibular", "reflex"}, heard


def test_a_compaction_told_at_session_start_is_told_once(tmp_path: Path) -> None:
    """SessionStart(compact) says what had been read most; the transcript's record of the
    same compaction says nothing more, and the next compaction is told again."""
    import time

    from transcripts import Transcript

    now = time.time()  # the session's file must be fresh: SessionStart collects stale ones
    log = Transcript(tmp_path / "t.jsonl")
    via = {"transcript_path": str(log.path)}
    for _ in range(2):
        send(read("/home/dev/project/src/core.py", **via), now=now)
        send(bash("ls", **via), now=now + 1)
    start = send(captured("SessionStart", source="compact", **via), now=now + 2)
    assert "core.py (2×)" in agent_text(start)
    log.compaction()
    assert "compacted" not in agent_text(send(bash("pwd", **via), now=now + 3))
    send(read("/home/dev/project/src/util.py", **via), now=now + 4)
    send(read("/home/dev/project/src/util.py", **via), now=now + 4)
    log.compaction()
    said = agent_text(send(bash("pwd", **via), now=now + 5))
    assert "compacted" in said and "util.py (2×)" in said and "core.py" not in said
