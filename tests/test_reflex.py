"""Reflex: a resolution recalled at the 2nd occurrence, a rule at its situation, the compaction note.

Every call goes through the real hook (metacog.hook.handle) with captured payloads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hooktest import agent_text, bash, captured, edit, failed, send

from metacog import paths
from metacog.learning import resolutions

T0 = 1_700_000_000.0
TSC_ERROR = (
    "Exit code 2\nsrc/config.ts(3,5): error TS2322: Type 'string' is not assignable to type "
    "'number'."
)


@pytest.fixture(autouse=True)
def without_habit() -> None:
    """These sequences bring one error back across sessions on purpose: Habit would say so
    too (tests/test_habit.py); what is asserted here is Reflex's line alone."""
    cfg = Path(paths.config_dir())
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text("[habit]\nenabled = false\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root


def run(project: Path, session: str, payloads: list[dict], start: float) -> list[str]:
    out = []
    for i, payload in enumerate(payloads):
        payload = dict(payload, session_id=session, cwd=str(project), transcript_path="")
        out.append(agent_text(send(payload, now=start + i * 10)))
    return out


def resolving(project: Path) -> list[dict]:
    """npx tsc fails twice, src/config.ts is edited, npx tsc passes."""
    return [
        failed("npx tsc", TSC_ERROR),
        bash("ls src"),
        failed("npx tsc", TSC_ERROR),
        edit(str(project / "src" / "config.ts")),
        bash("npx tsc", stdout=""),
    ]


def test_resolution_recalled_in_the_next_session_at_the_second_occurrence(project: Path) -> None:
    run(project, "s1", resolving(project), T0)
    said = run(
        project,
        "s2",
        [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)],
        T0 + 2 * 86400,
    )
    assert not said[0] and not said[1]
    assert said[2] == (
        "metacog: this error was resolved here 2 days ago in 5 calls: "
        "an edit of src/config.ts, then `npx tsc` passed."
    ), said
    again = run(project, "s2", [failed("npx tsc", TSC_ERROR)] * 2, T0 + 2 * 86400 + 100)
    assert not any("resolved" in s for s in again)  # once per problem and session


def test_resolution_recalled_in_the_same_session_after_a_compaction(project: Path) -> None:
    run(project, "s1", resolving(project), T0)
    again = [failed("npx tsc", TSC_ERROR), failed("npx tsc", TSC_ERROR)]
    assert run(project, "s1", again, T0 + 100) == ["", ""]  # the fix is still in its context
    run(project, "s1", resolving(project), T0 + 200)
    start = captured("SessionStart", session_id="s1", cwd=str(project), source="compact")
    send(start, now=T0 + 300)
    said = run(project, "s1", again, T0 + 400)
    assert said[0] == ""
    assert said[1].startswith("metacog: this error was resolved here earlier in this session"), said
    assert "src/config.ts" in said[1]


def test_resolution_recalled_in_the_same_session_long_after(project: Path) -> None:
    filler = [bash(f"echo {i}") for i in range(40)]  # reflex.recent_calls
    again = [failed("npx tsc", TSC_ERROR), failed("npx tsc", TSC_ERROR)]
    said = run(project, "s1", [*resolving(project), *filler, *again], T0)
    assert "resolved here earlier in this session in 5 calls" in said[-1], said


def test_nothing_known_says_nothing(project: Path) -> None:
    said = run(project, "s1", [failed("npx tsc", TSC_ERROR)] * 2, T0)
    assert said == ["", ""]


def test_seen_before_and_never_resolved(project: Path) -> None:
    run(project, "s1", [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)], T0)
    run(project, "s2", [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)], T0)
    said = run(
        project, "s3", [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)], T0
    )
    assert said[2] == (
        "metacog: this error was seen in 2 earlier sessions here, never resolved within the session."
    )


@pytest.mark.parametrize(
    "between",
    [
        pytest.param(["a.ts", "b.ts", "c.ts", "d.ts"], id="too-many-files"),
        pytest.param(["/elsewhere/x.ts"], id="outside-the-project"),
        pytest.param([], id="no-edit"),
    ],
)
def test_no_resolution_when_unsure(project: Path, between: list[str]) -> None:
    edits = [edit(p if p.startswith("/") else str(project / "src" / p)) for p in between]
    run(
        project,
        "s1",
        [failed("npx tsc", TSC_ERROR), *edits, bash("npx tsc", stdout="")],
        T0,
    )
    said = run(project, "s2", [failed("npx tsc", TSC_ERROR)] * 2, T0 + 100)
    assert said == ["", ""]


def test_a_late_pass_is_no_resolution(project: Path) -> None:
    filler = [bash(f"echo {i}") for i in range(13)]  # more than reflex.pass_within
    run(
        project,
        "s1",
        [
            failed("npx tsc", TSC_ERROR),
            edit(str(project / "src" / "a.ts")),
            *filler,
            bash("npx tsc"),
        ],
        T0,
    )
    said = run(project, "s2", [failed("npx tsc", TSC_ERROR)] * 2, T0 + 100)
    assert said == ["", ""]


def test_the_store_holds_relative_paths_and_no_output(project: Path) -> None:
    run(project, "s1", resolving(project), T0)
    text = Path(resolutions.path_for(str(project))).read_text()
    data = json.loads(text)
    assert data["v"] == resolutions.SCHEMA and data["root"] == str(project)
    (rec,) = data["problems"].values()
    assert rec["fix"]["files"] == ["src/config.ts"] and rec["fix"]["cmd"] == "npx tsc"
    assert "Type 'string'" not in text.replace(rec["sig"], "")  # only the normalized signature
    assert not (project / ".claude" / "metacog-learnings.jsonl").exists() or (
        "config.ts" not in (project / ".claude" / "metacog-learnings.jsonl").read_text()
    )


def test_a_damaged_store_is_set_aside_and_sensing_goes_on(project: Path) -> None:
    path = resolutions.path_for(str(project))
    os.makedirs(os.path.dirname(path))
    Path(path).write_text("{not json")
    run(project, "s1", resolving(project), T0)
    folder = os.path.dirname(path)
    assert any(".corrupt-" in name for name in os.listdir(folder))
    said = run(project, "s2", [failed("npx tsc", TSC_ERROR)] * 2, T0 + 100)
    assert "src/config.ts" in said[1]


def test_a_folder_in_the_stores_place_is_set_aside(project: Path) -> None:
    path = resolutions.path_for(str(project))
    os.makedirs(path)
    run(project, "s1", resolving(project), T0)
    assert os.path.isfile(path)


def test_the_store_is_capped_oldest_out(project: Path) -> None:
    root = str(project)
    for i in range(resolutions.PROBLEMS_CAP + 5):
        resolutions.met(root, f"k{i}", f"sig {i}", "s", T0 + i)
    data = json.loads(Path(resolutions.path_for(root)).read_text())
    assert len(data["problems"]) == resolutions.PROBLEMS_CAP
    assert "k0" not in data["problems"] and f"k{resolutions.PROBLEMS_CAP + 4}" in data["problems"]


def test_learning_off_remembers_nothing_across_sessions(project: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "metacog.toml").write_text("[learning]\nenabled = false\n")
    run(project, "s1", resolving(project), T0)
    assert not os.path.exists(resolutions.path_for(str(project)))
    said = run(project, "s2", [failed("npx tsc", TSC_ERROR)] * 2, T0 + 100)
    assert said == ["", ""]


def test_compaction_note_names_what_still_fails_and_what_worked(project: Path) -> None:
    run(
        project,
        "s1",
        [
            *resolving(project),
            failed("pytest -q", "Exit code 1\nE   AssertionError: assert 1 == 2"),
            edit(str(project / "src" / "b.py")),
            failed("pytest -q", "Exit code 1\nE   AssertionError: assert 1 == 2"),
        ],
        T0,
    )
    start = captured("SessionStart", session_id="s1", cwd=str(project), source="compact")
    note = agent_text(send(start, now=T0 + 200))
    assert note.startswith(
        "metacog: before the compaction, still unresolved: `pytest -q` failed 2×"
    )
    assert "editing src/b.py did not stop" in note
    assert "resolved: " in note and "an edit of src/config.ts, then `npx tsc` passed" in note
    assert len(note) <= len("metacog: ") + 600


def test_a_call_the_person_stopped_is_no_state_of_the_work_to_carry_over(project: Path) -> None:
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    run(project, "s1", [failed("make deploy", rejected), failed("make deploy", rejected)], T0)
    start = captured("SessionStart", session_id="s1", cwd=str(project), source="compact")
    assert agent_text(send(start, now=T0 + 200)) == ""
    # ... where the same calls failing in the world are.
    run(project, "s2", [failed("make deploy", "Exit code 2\nmake: *** [deploy] Error 1")] * 2, T0)
    start = captured("SessionStart", session_id="s2", cwd=str(project), source="compact")
    assert "still unresolved: `make deploy` failed 2×" in agent_text(send(start, now=T0 + 200))


def test_no_compaction_note_when_nothing_failed(project: Path) -> None:
    run(project, "s1", [bash("ls"), bash("echo hi")], T0)
    start = captured("SessionStart", session_id="s1", cwd=str(project), source="compact")
    assert agent_text(send(start, now=T0 + 200)) == ""


def seed_rules(project: Path, rules: dict[str, int]) -> None:
    """Evidence in the project store, as earlier sessions would have left it."""
    from metacog.learning import store

    recs = [
        {"v": 1, "type": "detection", "rule": r, "at": T0}
        for r, n in rules.items()
        for _ in range(n)
    ]
    store.append(store.project_path(str(project)), recs, T0, 1 << 30, 30)


def prompt(project: Path, session: str, now: float) -> str:
    payload = captured("UserPromptSubmit", session_id=session, cwd=str(project), prompt="go")
    return agent_text(send(payload, now=now))


def test_a_learned_rule_is_said_again_when_its_situation_begins(project: Path) -> None:
    from metacog.learning.detectors import RULES

    seed_rules(project, {"error-loop": 2})
    assert "error-loop" in prompt(project, "s1", T0 + 10)  # the digest, at the first prompt
    said = run(
        project,
        "s1",
        [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)],
        T0 + 20,
    )
    assert said[:2] == ["", ""]
    # Said with the situation it matched: the call and what it met again, never bare.
    assert said[2] == (
        "metacog: `Bash npx tsc` met `src/config.ts(3,5): error TS2322: Type 'string' is not "
        "assignable to type 'numb…` again; a lesson learned in this project applies "
        f"now: {RULES['error-loop']}"
    )
    other = "Exit code 1\nModuleNotFoundError: No module named 'yaml'"
    later = run(project, "s1", [failed("python x.py", other)] * 2, T0 + 100)
    assert later == ["", ""]  # once per session


def test_a_rule_the_digest_did_not_show_is_not_said(project: Path) -> None:
    seed_rules(project, {"blast-radius": 2})
    prompt(project, "s1", T0 + 10)
    said = run(project, "s1", [failed("npx tsc", TSC_ERROR)] * 2, T0 + 20)
    assert said == ["", ""]


def test_the_rule_recall_leaves_the_reinforcement_bookkeeping_as_it_was(project: Path) -> None:
    """The session met the situation (errors) and no loop formed: a suppression, as without
    the recall; the recall adds no evidence of its own."""
    from metacog import learning, paths, schema
    from metacog.learning import store

    seed_rules(project, {"error-loop": 2})
    prompt(project, "s1", T0 + 10)
    run(project, "s1", [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)], T0)
    conf = schema.load(paths.config_dir(), str(project))
    learning.on_session_end(str(project), "s1", paths.state_dir(), conf, T0 + 200)
    lines = Path(store.project_path(str(project))).read_text().splitlines()
    kinds = [json.loads(line)["type"] for line in lines if '"error-loop"' in line]
    assert kinds.count("suppression") == 1 and kinds.count("detection") == 2, kinds


def test_one_earlier_session_without_a_resolution_is_not_enough_to_say_so(project: Path) -> None:
    run(project, "s1", [failed("npx tsc", TSC_ERROR)] * 2, T0)
    said = run(
        project, "s2", [failed("npx tsc", TSC_ERROR), bash("ls"), failed("npx tsc", TSC_ERROR)], T0
    )
    assert said == ["", "", ""]


def test_the_loop_rule_waits_for_the_same_error_twice_in_a_row(project: Path) -> None:
    """The same error back after another error between is no loop beginning (yet)."""
    seed_rules(project, {"error-loop": 2})
    prompt(project, "s1", T0 + 10)
    other = failed("python x.py", "Exit code 1\nModuleNotFoundError: No module named 'yaml'")
    said = run(
        project, "s1", [failed("npx tsc", TSC_ERROR), other, failed("npx tsc", TSC_ERROR)], T0
    )
    assert said == ["", "", ""]
    said = run(project, "s1", [failed("npx tsc", TSC_ERROR)], T0 + 50)
    assert "a lesson learned in this project applies now" in said[0]


def _wide_project(tmp_path: Path) -> Path:
    base = tmp_path / "wide"
    (base / ".git").mkdir(parents=True)
    (base / "app").mkdir()
    (base / "app" / "__init__.py").write_text("")
    (base / "app" / "models.py").write_text("class User: ...\n")
    (base / "users").mkdir()
    for i in range(6):
        (base / "users" / f"use{i}.py").write_text("from app.models import User\n")
    return base


def test_the_blast_radius_rule_at_the_edit_of_a_widely_imported_file(tmp_path: Path) -> None:
    from metacog.learning.detectors import RULES

    base = _wide_project(tmp_path)
    seed_rules(base, {"blast-radius": 2})
    assert "blast-radius" in prompt(base, "s1", T0)
    said = run(base, "s1", [edit(str(base / "app" / "models.py"))] * 2, T0 + 10)
    assert said[0].startswith("metacog: You modified app/models.py. 6 files import it")
    assert said[0].endswith(
        "`app/models.py`, which 6 files import; a lesson learned in this project applies now: "
        + RULES["blast-radius"]
    )
    assert "lesson learned" not in said[1]  # once per session


def test_the_blast_radius_rule_reads_the_edits_reach_with_spatial_off(tmp_path: Path) -> None:
    # The reach of an edit is a fact of the call (metacog.perception.reach), not a note
    # Spatial leaves: with Spatial off, the rule is still recalled, and Spatial says nothing.
    from metacog.learning.detectors import RULES

    base = _wide_project(tmp_path)
    (base / ".claude").mkdir(exist_ok=True)
    (base / ".claude" / "metacog.toml").write_text("[spatial]\nenabled = false\n")
    seed_rules(base, {"blast-radius": 2})
    assert "blast-radius" in prompt(base, "s1", T0)
    said = run(base, "s1", [edit(str(base / "app" / "models.py"))], T0 + 10)
    assert said == [
        "metacog: `app/models.py`, which 6 files import; a lesson learned in this project "
        f"applies now: {RULES['blast-radius']}"
    ]


def test_the_person_rejecting_twice_does_not_recall_the_mistake_rule(project: Path) -> None:
    # claude-code-log f852ad25 (quiet): two plans rejected while the person reviews them.
    seed_rules(project, {"repeated-mistake": 2})
    prompt(project, "s1", T0 + 10)
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    plan = failed("x", rejected)
    plan.update(tool_name="ExitPlanMode", tool_input={"plan": "## Plan"})
    said = run(project, "s1", [plan, bash("ls"), plan], T0 + 20)
    assert said == ["", "", ""]
    # An Edit before a Read twice is the agent's own mistake: the rule is said.
    refusal = "File has not been read yet. Read it first before writing to it."
    write = failed("x", refusal)
    write.update(tool_name="Write", tool_input={"file_path": str(project / "src" / "a.py")})
    line = run(project, "s1", [write, bash("pwd"), write], T0 + 60)[2]
    assert "a lesson learned" in line and "a.py" in line  # with the call it matched


def test_a_rule_line_keeps_its_lesson_whole_and_its_quotes_closed(project: Path) -> None:
    from metacog.learning.detectors import RULES

    seed_rules(project, {"error-loop": 2})
    prompt(project, "s1", T0 + 10)
    command = "node `which tsc` " + "--very-long-flag " * 10
    error = "Exit code 2\n" + "src/a.ts(3,5): error TS2322: `x` " + "is not assignable " * 10
    said = run(project, "s1", [failed(command, error)] * 2, T0 + 20)[1]
    assert said.endswith(RULES["error-loop"]) and len(said) <= 300 + len("metacog: ")
    assert said.count("`") == 4  # two quotes, each closed: the backticks inside became '


def test_a_rule_with_nothing_of_the_situation_to_say_is_not_said() -> None:
    from metacog import recall

    assert recall.rule_line("Read first.", "") == ""
    assert recall.rule_line("Read first.", "`Bash make` met `x` again").startswith("`Bash make`")


def test_what_earlier_sessions_kept_under_the_old_key_of_the_persons_no_is_met_again(
    project: Path,
) -> None:
    # Issue 39: `make 2>&1 | tail -20` was for `make 2>&1` (its words split on spaces); it is
    # for `make` now. Two earlier sessions met it under the old key and never resolved it.
    from metacog import recall

    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    root, old, new = (
        str(project),
        recall.key("rejected Bash make 2>&1"),
        recall.key("rejected Bash make"),
    )
    for n, session in enumerate(("a", "b")):
        resolutions.met(root, old, "rejected Bash make 2>&1", session, T0 + n)
    _written_before_issue_39(root)
    call = failed("make 2>&1 | tail -20", rejected)
    said = run(project, "s3", [call, bash("ls"), call], T0 + 100)
    assert said[2] == (
        "metacog: this error was seen in 2 earlier sessions here, never resolved within the session."
    )
    kept = json.loads(Path(resolutions.path_for(root)).read_text())["problems"]
    assert old not in kept and len(kept[new]["seen"]) == 3  # moved to the new key, and met


def _written_before_issue_39(root: str) -> None:
    """The project's resolutions as a version before issue 39 wrote them: no record says the
    reading its key was made with."""
    path = Path(resolutions.path_for(root))
    data = json.loads(path.read_text())
    for record in data["problems"].values():
        record.pop("k", None)
    path.write_text(json.dumps(data))


def test_another_problems_record_under_an_old_key_stays_its_own(project: Path) -> None:
    # `cd app && npm install && npm test` was for `npm test` before issue 39: the key a plain
    # `npm test` the person said no to has now. That problem's record, kept by this version,
    # is not taken for the other command's old one.
    from metacog import recall

    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    root, npm_test = str(project), recall.key("rejected Bash npm test")
    for n, session in enumerate(("a", "b")):
        resolutions.met(root, npm_test, "rejected Bash npm test", session, T0 + n)
    call = failed("cd app && npm install && npm test", rejected)
    run(project, "s3", [call, bash("ls"), call], T0 + 100)
    kept = json.loads(Path(resolutions.path_for(root)).read_text())["problems"]
    assert kept[npm_test]["seen"] == [
        resolutions.session_hash("a"),
        resolutions.session_hash("b"),
    ]


def test_a_problem_kept_under_its_old_key_and_its_new_one_is_merged(project: Path) -> None:
    from metacog import recall

    root = str(project)
    old, new = recall.key("rejected Bash make 2>&1"), recall.key("rejected Bash make")
    resolutions.met(root, old, "rejected Bash make 2>&1", "a", T0)
    _written_before_issue_39(root)
    resolutions.met(root, new, "rejected Bash make", "b", T0 + 1)
    resolutions.met(root, new, "rejected Bash make", "c", T0 + 2, was=old)
    kept = json.loads(Path(resolutions.path_for(root)).read_text())["problems"]
    assert old not in kept
    assert kept[new]["seen"] == [resolutions.session_hash(s) for s in "abc"]
