"""`forget`: a rule's records go from one store or both, the rest stays byte for byte."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import learningtest
import pytest
from learningtest import DAY, LOOP, T0, cfg, global_records, project_records, rule, session

from metacog import learning
from metacog.learning import scopes, store

make_project = learningtest.make_project


@pytest.fixture
def promoted(make_project: Callable[[str], str]) -> tuple[str, str]:
    a, b = make_project("a"), make_project("b")
    session(a, "a0", T0, {**LOOP, "reads": 6, "max_file_reads": 4})
    session(b, "b0", T0 + DAY, LOOP)
    return a, b


def test_forget_from_the_project_only(promoted: tuple[str, str]) -> None:
    a, _ = promoted
    assert learning.forget("error-loop", a, "project") == 1
    assert [r["rule"] for r in project_records(a)] == ["repeated-reads"]
    assert rule(a, "error-loop", T0 + 2 * DAY)["scope"] == "global"
    projects = json.loads(Path(scopes.index_path()).read_text())["rules"]["error-loop"]["projects"]
    assert scopes.project_hash(a) not in projects  # its contribution to promotion goes too


def test_forget_everywhere_resets_promotion(promoted: tuple[str, str]) -> None:
    a, b = promoted
    assert learning.forget("error-loop", a) == 2  # a's detection and the global aggregate
    assert rule(a, "error-loop", T0 + 2 * DAY) is None
    assert [r["rule"] for r in global_records()] == []
    assert "error-loop" not in Path(scopes.index_path()).read_text()
    session(a, "a1", T0 + 3 * DAY, LOOP)
    assert global_records() == []  # one project again: it must earn its promotion anew
    assert rule(b, "error-loop", T0 + 4 * DAY)["detections"] == 1


def test_a_known_rule_without_records_removes_nothing(promoted: tuple[str, str]) -> None:
    assert learning.forget("task-drift", promoted[0]) == 0


def test_unknown_rules_suggest_the_closest(promoted: tuple[str, str]) -> None:
    with pytest.raises(learning.UnknownRule) as err:
        learning.forget("error_loop", promoted[0])
    assert err.value.closest[0] == "error-loop"
    with pytest.raises(learning.UnknownRule) as err:
        learning.forget("zzzz", promoted[0])
    assert err.value.closest == []


def test_rules_of_a_newer_version_found_in_a_store_can_be_forgotten(
    promoted: tuple[str, str],
) -> None:
    a, _ = promoted
    path = store.project_path(a)
    with open(path, "a") as fh:
        fh.write('{"v": 2, "type": "detection", "rule": "future-rule", "at": 1}\n')
    assert learning.forget("future-rule", a, "project") == 1


def test_forget_keeps_unreadable_lines(promoted: tuple[str, str]) -> None:
    a, _ = promoted
    path = store.project_path(a)
    with open(path, "a") as fh:
        fh.write("<<<<<<< HEAD\n")
    learning.forget("repeated-reads", a, "project")
    assert Path(path).read_text().splitlines()[-1] == "<<<<<<< HEAD"
    assert learning.health(a)["project"]["corrupt"] == 1


def test_a_bad_scope_is_refused(promoted: tuple[str, str]) -> None:
    with pytest.raises(ValueError, match="scope"):
        learning.forget("error-loop", promoted[0], "everywhere")


def test_rules_lists_what_status_needs(promoted: tuple[str, str]) -> None:
    listed = learning.rules(promoted[0], cfg(), T0 + 2 * DAY)
    assert {r["id"] for r in listed} == {"error-loop", "repeated-reads"}
    for r in listed:
        assert {
            "id",
            "lesson",
            "scope",
            "detections",
            "suppressions",
            "confidence",
            "last_active",
        } <= set(r)
        assert isinstance(r["confidence"], float) and 0 < r["confidence"] < 1
