"""Each detector: nothing when its situation never arose, a detection when the loop formed,
a suppression only for an active rule that held; each can be switched off and tuned."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import learningtest
import pytest
from hooktest import captured, send
from learningtest import T0, cfg, project_records, session

from metacog import paths, schema, state
from metacog.learning import detectors, settings

ALL = frozenset(detectors.RULES)
# For each detector: (precondition met, failure absent), (precondition met, failure present).
CASES = {
    "error-loop": ({"errors": 2, "max_error_streak": 2}, {"errors": 3, "max_error_streak": 3}),
    "repeated-mistake": ({"errors": 3}, {"errors": 3, "fired": {"habit": 1}}),
    "repeated-reads": ({"reads": 5, "max_file_reads": 2}, {"reads": 5, "max_file_reads": 3}),
    "circular-search": (
        {"searches": 4, "max_search_repeat": 2},
        {"searches": 4, "max_search_repeat": 3},
    ),
    "going-in-circles": ({"calls": 10, "max_repeat": 3}, {"calls": 10, "max_repeat": 4}),
    "long-autonomous-run": (
        {"main_calls": 30, "max_calls_between_prompts": 59, "max_minutes_between_prompts": 29},
        {"main_calls": 30, "max_calls_between_prompts": 60},
    ),
    "write-heavy": ({"edits": 9, "reads": 3}, {"edits": 10, "reads": 3}),
    "context-pressure": (
        {"calls": 30, "max_context_fill": 0.5},
        {"calls": 30, "max_context_fill": 0.5, "fired": {"o2": 1}},
    ),
    "blast-radius": (
        {"edits": 1, "wide_edits": 1},
        {"edits": 1, "wide_edits": 1, "fired": {"spatial": 1}},
    ),
    "untested-edits": (
        {"edits": 12, "code_edits": 12, "reads": 6},
        {"edits": 12, "code_edits": 12, "reads": 6, "fired": {"echo": 1}},
    ),
    "task-drift": (
        {"main_calls": 12, "tracked_calls": 12},
        {"main_calls": 12, "tracked_calls": 12, "fired": {"drift": 1}},
    ),
}
# Just under each precondition: the situation never arose, whatever else the summary says.
NOT_ARISEN = {
    "error-loop": {"errors": 1, "max_error_streak": 9},
    "repeated-mistake": {"errors": 2, "fired": {"habit": 3}},
    "repeated-reads": {"reads": 4, "max_file_reads": 9},
    "circular-search": {"searches": 3, "max_search_repeat": 9},
    "going-in-circles": {"calls": 9, "max_repeat": 9},
    "long-autonomous-run": {"main_calls": 29, "max_calls_between_prompts": 99},
    "write-heavy": {"edits": 7, "reads": 0},
    "context-pressure": {"calls": 29, "fired": {"o2": 5}},
    "blast-radius": {"edits": 0, "fired": {"spatial": 5}},
    "untested-edits": {"edits": 5, "fired": {"echo": 5}},
    "task-drift": {"main_calls": 11, "fired": {"drift": 5}},
}
# Sessions, long ones among them, where the situation a rule is about never came up: a
# session's length, or edits of any kind, are not the situation. Each says nothing about
# the rule, active or not (a suppression here would be a "held" the rule never earned).
NEVER_AROSE = [
    ("error-loop", {"calls": 200, "main_calls": 200}),
    ("repeated-mistake", {"calls": 200, "main_calls": 200, "edits": 40}),
    ("repeated-reads", {"calls": 200, "edits": 20, "searches": 30}),
    ("circular-search", {"calls": 200, "reads": 30}),
    (
        "going-in-circles",
        {"calls": 200, "max_repeat": 1},
    ),  # no action ever gave the same result twice
    ("going-in-circles", {"calls": 200}),
    # The person spoke every few calls: the agent never had the chance to run far alone.
    (
        "long-autonomous-run",
        {"main_calls": 200, "max_calls_between_prompts": 29, "max_minutes_between_prompts": 29},
    ),
    ("long-autonomous-run", {"main_calls": 200}),
    ("write-heavy", {"calls": 200, "reads": 50}),
    ("context-pressure", {"calls": 300, "main_calls": 300}),  # how full the context got is unknown
    ("context-pressure", {"calls": 300, "max_context_fill": 0.49}),
    # Edits, but none to a widely imported file (docs, or files nothing imports); a summary
    # without the count of such edits cannot say that one happened.
    ("blast-radius", {"calls": 14, "main_calls": 14, "edits": 6, "reads": 6}),
    ("blast-radius", {"calls": 14, "edits": 6, "wide_edits": 0}),
    # Edits, but not to code: Echo does not count them, so untested ones cannot pile up.
    ("untested-edits", {"calls": 14, "main_calls": 14, "edits": 6, "reads": 6}),
    ("untested-edits", {"calls": 40, "edits": 30, "code_edits": 5, "fired": {"echo": 1}}),
    # A long session whose requests named nothing to follow, or that followed it only briefly.
    ("task-drift", {"calls": 40, "main_calls": 40, "prompts": 3}),
    ("task-drift", {"main_calls": 40, "tracked_calls": 11, "fired": {"drift": 1}}),
]
# The summary the reviewer's case gives today: 14 calls, 6 edits, all to docs (and 4 reads,
# under repeated-reads' min_reads: reading 5 files would rightly test that rule).
DOCS_SESSION = {
    "calls": 14,
    "main_calls": 14,
    "edits": 6,
    "reads": 4,
    "bash": 4,
    "prompts": 1,
    "max_file_reads": 1,
    "max_repeat": 1,
    "max_calls_between_prompts": 14,
    "max_minutes_between_prompts": 3.0,
}

project = learningtest.project
make_project = learningtest.make_project


def verdicts(
    summary: dict, rule_id: str, active: frozenset = ALL, conf: dict | None = None
) -> list[str]:
    return [
        kind for kind, rid, _ in detectors.judge(summary, active, conf or cfg()) if rid == rule_id
    ]


def test_every_detector_is_tested() -> None:
    assert (
        set(CASES)
        == set(NOT_ARISEN)
        == {rid for rid, _ in NEVER_AROSE}
        == {d.id for d in detectors.DETECTORS}
    )
    assert len(detectors.DETECTORS) >= 5 + 4  # the five named patterns, and senses'


def test_detector_sections_do_not_clash_with_other_settings() -> None:
    assert not set(detectors.CONFIG_DEFAULTS) & {"learning", "digest", *detectors.SENSES}


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_detection_suppression_and_silence(rule_id: str) -> None:
    held, failed = CASES[rule_id]
    assert verdicts(failed, rule_id) == ["detection"]
    assert verdicts(failed, rule_id, active=frozenset()) == ["detection"]
    assert verdicts(held, rule_id) == ["suppression"]
    assert verdicts(held, rule_id, active=frozenset()) == []
    assert verdicts(NOT_ARISEN[rule_id], rule_id) == []


@pytest.mark.parametrize(
    ("rule_id", "summary"),
    NEVER_AROSE,
    ids=[f"{rid}-{i}" for i, (rid, _) in enumerate(NEVER_AROSE)],
)
def test_a_situation_that_never_arose_says_nothing(rule_id: str, summary: dict) -> None:
    assert verdicts(summary, rule_id) == []
    assert verdicts(summary, rule_id, active=frozenset()) == []


def test_a_session_that_only_edited_docs_holds_no_rule() -> None:
    # The reviewer's case: 14 calls, 6 edits all to docs, every rule active. The rules about
    # widely imported files, untested code and the request's names were never tested, nor
    # were repeats (none happened): none of them held.
    assert [e for e in detectors.judge(DOCS_SESSION, ALL, cfg()) if e[0] == "suppression"] == []


def test_a_docs_session_through_the_hook_holds_no_rule(project: str) -> None:
    # The same, with the summary the hook really keeps: no field counts a wide, code or
    # tracked edit yet, and each must read as "did not happen", never as "happened".
    sid = "docs"
    docs = Path(project) / "docs"
    docs.mkdir()

    def call(tool: str, tool_input: dict, i: int) -> None:
        send(
            captured(
                "PostToolUse",
                tool,
                session_id=sid,
                cwd=project,
                tool_input=tool_input,
                transcript_path="",
            ),
            now=T0 + 10 + i,
        )

    send(
        captured(
            "UserPromptSubmit",
            session_id=sid,
            cwd=project,
            prompt="please tidy up the documentation",
            transcript_path="",
        ),
        now=T0,
    )
    for i in range(6):
        page = str(docs / f"page{i}.md")
        if i < 4:
            call("Read", {"file_path": page}, 2 * i)
        call("Edit", {"file_path": page, "old_string": "teh", "new_string": "the"}, 2 * i + 1)
    for i, command in enumerate(("ls docs", "git status", "git diff --stat", "wc -l docs/*.md")):
        call("Bash", {"command": command, "description": "x"}, 12 + i)
    totals = state.read(paths.state_dir(), sid)["summary"]
    assert (totals["calls"], totals["edits"], totals["reads"], totals["errors"]) == (14, 6, 4, 0)
    given = detectors.judge(totals, ALL, cfg())
    assert [e for e in given if e[0] == "suppression"] == []
    assert given == []  # and nothing failed either


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_the_lowest_min_thresholds_do_not_make_a_situation_arise(rule_id: str) -> None:
    # Each precondition threshold at the lowest the config takes (0 where schema.LIMITS has no bound).
    lowest = {
        key: type(value)(schema.LIMITS.get((rule_id, key), (0, 0))[0])
        for key, value in schema.DEFAULTS[rule_id].items()
        if key.startswith("min_")
    }
    assert lowest, rule_id
    assert verdicts({"calls": 50, "main_calls": 50}, rule_id, conf=cfg({rule_id: lowest})) == []


@pytest.mark.parametrize("rule_id", sorted(d.id for d in detectors.DETECTORS if d.sense))
def test_a_sense_switched_off_cannot_show_its_failure_so_nothing_held(rule_id: str) -> None:
    # With the sense off, the failure it would have seen cannot appear in the summary: a
    # session meeting the precondition would otherwise always count as "held".
    off = cfg({detectors.BY_ID[rule_id].sense: {"enabled": False}})
    held, failed = CASES[rule_id]
    assert verdicts(held, rule_id, conf=off) == []
    assert verdicts(failed, rule_id, conf=off) == []


def test_long_autonomous_run_does_not_need_chronos() -> None:
    off = cfg({"chronos": {"enabled": False}})
    held, failed = CASES["long-autonomous-run"]
    assert verdicts(held, "long-autonomous-run", conf=off) == ["suppression"]
    assert verdicts(failed, "long-autonomous-run", conf=off) == ["detection"]
    minutes = {"main_calls": 40, "max_calls_between_prompts": 20, "max_minutes_between_prompts": 30}
    assert verdicts(minutes, "long-autonomous-run") == ["detection"]  # a long stretch in minutes


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_each_detector_can_be_switched_off(rule_id: str) -> None:
    off = cfg({rule_id: {"enabled": False}})
    assert verdicts(CASES[rule_id][1], rule_id, conf=off) == []
    assert verdicts(CASES[rule_id][0], rule_id, conf=off) == []


def test_thresholds_are_tunable_and_partial_tables_keep_the_rest() -> None:
    tuned = cfg({"error-loop": {"streak": 5}})
    assert verdicts({"errors": 4, "max_error_streak": 4}, "error-loop", conf=tuned) == [
        "suppression"
    ]
    assert verdicts({"errors": 5, "max_error_streak": 5}, "error-loop", conf=tuned) == ["detection"]
    # As metacog.schema.load gives them: schema.merge is the one check of types and ranges.
    wrong_type = schema.merge(schema.DEFAULTS, {"error-loop": {"streak": "five", "enabled": "no"}})
    assert verdicts({"errors": 3, "max_error_streak": 3}, "error-loop", conf=wrong_type) == [
        "detection"
    ]


def test_context_pressure_uses_the_fill_when_o2_reports_it() -> None:
    assert verdicts(
        {"calls": 5, "max_context_fill": 0.6, "fired": {"o2": 1}}, "context-pressure"
    ) == ["detection"]
    assert (
        verdicts({"calls": 99, "max_context_fill": 0.3, "fired": {"o2": 1}}, "context-pressure")
        == []
    )


@pytest.mark.parametrize(
    "summary",
    [
        None,
        [],
        "x",
        {"errors": "many", "max_error_streak": None},
        {"errors": True, "fired": ["o2"], "lessons": "no"},
        {"errors": float("nan"), "max_error_streak": float("inf")},
        {"lessons": [None, 5, {"sig": 3}, {"sig": "s", "failed": "Bash"}]},
    ],
)
def test_malformed_summaries_never_raise(summary: object) -> None:
    assert detectors.judge(summary, ALL, cfg()) == []


@pytest.mark.parametrize(
    ("failed", "then", "same", "expected"),
    [
        pytest.param("Bash", "Read", False, "resolve-read", id="read"),
        pytest.param("Bash", "WebFetch", False, "resolve-docs", id="docs"),
        pytest.param("Bash", "Grep", False, "resolve-search", id="search"),
        pytest.param("Bash", "Edit", False, "resolve-other-tool", id="other-tool"),
        pytest.param("Bash", "Bash", False, "resolve-other-target", id="other-target"),
        pytest.param("Bash", "Bash", True, "resolve-fix", id="fixed-then-rerun"),
    ],
)
def test_motor_learning_names_what_changed(
    failed: str, then: str, same: bool, expected: str
) -> None:
    lesson = {
        "sig": "KeyError: 'user' | app.py:3",
        "failed": failed,
        "then": then,
        "same_target": same,
    }
    assert detectors.judge({"lessons": [lesson, dict(lesson)]}, frozenset(), cfg()) == [
        ("lesson", expected, lesson["sig"])
    ]


def test_lessons_store_a_hash_of_the_signature_never_error_text(project: str) -> None:
    secret = "KeyError: 'password=hunter2' | /home/me/app.py:3"
    lessons = [{"sig": secret, "failed": "Bash", "then": "Read", "same_target": False}]
    session(project, "s0", T0, {"calls": 3, "lessons": lessons})
    recs = project_records(project)
    assert [(r["type"], r["rule"]) for r in recs] == [("lesson", "resolve-read")]
    assert len(recs[0]["sig"]) == 16 and "hunter2" not in str(recs)
    session(project, "s1", T0 + 60, {"calls": 3, "lessons": lessons})
    assert "resolve-read" in session(project, "s2", T0 + 120, {})


def test_motor_learning_can_be_switched_off() -> None:
    lesson = {"sig": "x", "failed": "Bash", "then": "Read", "same_target": False}
    off = cfg({"motor-learning": {"enabled": False}})
    assert detectors.judge({"lessons": [lesson]}, frozenset(), off) == []


def test_lesson_texts_fit_a_digest_line() -> None:
    for rule_id, lesson in detectors.RULES.items():
        assert len(f"- {rule_id} (global): {lesson} (seen 9999×, held 9999×)") <= 150, rule_id


def test_detector_sections_go_through_config_load(make_project: Callable[[str], str]) -> None:
    root = Path(make_project("configured"))
    (root / ".claude").mkdir()
    (root / ".claude" / "metacog.toml").write_text(
        "[error-loop]\nstreak = 5\n\n[task-drift]\nenabled = false\n\n"
        '[no-such-detector]\nenabled = false\n\n[learning]\npromote_projects = 3\nkeep_days = "x"\n'
    )
    conf = schema.load(paths.config_dir(), str(root))
    assert verdicts({"errors": 4, "max_error_streak": 4}, "error-loop", conf=conf) == [
        "suppression"
    ]
    assert verdicts({"main_calls": 20, "fired": {"drift": 2}}, "task-drift", conf=conf) == []
    assert (
        verdicts(
            {"main_calls": 20, "tracked_calls": 20, "fired": {"drift": 2}}, "task-drift", conf=conf
        )
        == []
    )
    assert settings.detector(conf, "error-loop")["min_errors"] == 2
    learn = settings.learning(conf)
    assert (learn["promote_projects"], learn["keep_days"]) == (
        3,
        schema.DEFAULTS["learning"]["keep_days"],
    )


def test_the_thresholds_are_the_config_sections_only() -> None:
    # No second table: each detector's section is schema.DEFAULTS' own, and a tuned section
    # is what the detector reads (a threshold the config lacked would raise KeyError here).
    assert set(detectors.CONFIG_DEFAULTS) == {*detectors.BY_ID, detectors.MOTOR}
    assert all(
        detectors.CONFIG_DEFAULTS[name] is schema.DEFAULTS[name]
        for name in detectors.CONFIG_DEFAULTS
    )
    assert not any(hasattr(det, "defaults") for det in detectors.DETECTORS)
    for rule_id, (_, failed) in CASES.items():
        # The highest each key takes (schema.LIMITS), or 10**9 where it has no bound.
        unreachable = {
            key: schema.LIMITS.get((rule_id, key), (0, 10**9))[1]
            for key in schema.DEFAULTS[rule_id]
            if key != "enabled"
        }
        assert verdicts(failed, rule_id, conf=cfg({rule_id: unreachable})) == [], rule_id
