"""Evidence stays in its project until a pattern shows up in enough projects to be about the agent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import learningtest
import pytest
from learningtest import CALM, DAY, LOOP, T0, cfg, global_records, project_records, rule, session

from metacog import paths
from metacog.learning import scopes, store

make_project = learningtest.make_project


@pytest.fixture
def three(make_project: Callable[[str], str]) -> tuple[str, str, str]:
    return tuple(make_project(name) for name in ("alpha", "beta", "gamma"))


def test_one_project_builds_evidence_without_reaching_the_global_store(three: tuple[str, str, str]) -> None:
    a, _, c = three
    for i in range(5):
        session(a, f"a{i}", T0 + i * DAY, LOOP)
    assert rule(a, "error-loop", T0 + 5 * DAY)["detections"] == 5
    assert global_records() == []
    assert rule(c, "error-loop", T0 + 5 * DAY) is None
    assert "error-loop" not in session(c, "c0", T0 + 6 * DAY, {})


def test_two_projects_promote_a_pattern_and_a_third_sees_it(three: tuple[str, str, str]) -> None:
    a, b, c = three
    session(a, "a0", T0, LOOP)
    session(a, "a1", T0 + DAY, LOOP)
    assert global_records() == []
    session(b, "b0", T0 + 2 * DAY, LOOP)
    promoted = [r for r in global_records() if r["rule"] == "error-loop"]
    assert promoted == [{"v": 1, "type": "aggregate", "rule": "error-loop", "detections": 3, "suppressions": 0,
                         "first": T0, "last": T0 + 2 * DAY}]
    seen = rule(c, "error-loop", T0 + 3 * DAY)
    assert (seen["scope"], seen["detections"]) == ("global", 3)
    assert "- error-loop (global):" in session(c, "c0", T0 + 3 * DAY, CALM)
    # The third project held the global rule: its store and the global one both record it,
    # and what it shows is still the global entry, now with that suppression.
    assert [(r["type"], r["rule"]) for r in project_records(c)] == [("suppression", "error-loop")]
    after = rule(c, "error-loop", T0 + 4 * DAY)
    assert (after["scope"], after["detections"], after["suppressions"]) == ("global", 3, 1)


def test_after_promotion_every_project_feeds_the_global_store(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, LOOP)
    session(a, "a1", T0 + 2 * DAY, LOOP)
    kinds = [(r["type"], r.get("detections", 1)) for r in global_records() if r["rule"] == "error-loop"]
    assert kinds == [("aggregate", 2), ("detection", 1)]


def test_the_threshold_is_configurable(three: tuple[str, str, str]) -> None:
    conf = cfg(learning={"promote_projects": 3})
    for i, root in enumerate(three[:2]):
        session(root, f"s{i}", T0 + i * DAY, LOOP, conf)
    assert global_records() == []
    session(three[2], "s2", T0 + 2 * DAY, LOOP, conf)
    assert [r["detections"] for r in global_records()] == [3]


def test_suppressions_alone_do_not_promote(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, CALM)  # the rule was not active in beta: no evidence at all
    session(a, "a1", T0 + 2 * DAY, CALM)  # active in alpha and held: a suppression, one project
    assert global_records() == []


def test_project_entries_take_precedence(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    for i in range(3):
        session(a, f"a{i}", T0 + i * DAY, LOOP)
    session(b, "b0", T0 + 3 * DAY, LOOP)
    mine = rule(b, "error-loop", T0 + 4 * DAY)
    assert (mine["scope"], mine["detections"]) == ("project", 1)
    assert "- error-loop: " in session(b, "b1", T0 + 4 * DAY, {})


def test_the_index_keeps_hashes_and_the_committed_file_no_paths(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, LOOP)
    index = Path(scopes.index_path()).read_text()
    assert str(Path(paths.data_dir())) in scopes.index_path()
    for root in three:
        assert Path(root).name not in index
    projects = json.loads(index)["rules"]["error-loop"]["projects"]
    assert set(projects) == {scopes.project_hash(a), scopes.project_hash(b)}
    for root in (a, b):
        text = Path(store.project_path(root)).read_text()
        assert "alpha" not in text and "beta" not in text and "/" not in text


def test_a_project_without_a_root_learns_nothing(tmp_path: Path) -> None:
    session("", "x0", T0, LOOP)
    assert global_records() == [] and not list(tmp_path.rglob("metacog-learnings.jsonl"))
