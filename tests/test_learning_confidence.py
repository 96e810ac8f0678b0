"""The confidence model on dated evidence: both kinds count, holding never costs, only dormancy decays."""

from __future__ import annotations

import learningtest
import pytest
from learningtest import (
    CALM,
    DAY,
    LOOP,
    QUIET,
    T0,
    active,
    cfg,
    project_records,
    rule,
    session,
    state_dir,
    write_session,
)

from metacog import config, learning
from metacog.learning import confidence, settings, store

LEARN = settings.learning(config.DEFAULTS)

project = learningtest.project


def test_both_kinds_of_evidence_raise_confidence() -> None:
    detected = confidence.confidence(1, 0, T0, T0, LEARN)
    assert confidence.confidence(2, 0, T0, T0, LEARN) > detected
    assert confidence.confidence(1, 1, T0, T0, LEARN) > detected
    assert confidence.confidence(1, 1, T0, T0, LEARN) == confidence.confidence(2, 0, T0, T0, LEARN)


def test_a_rule_that_held_keeps_gaining_and_stays_in_the_digest(project: str) -> None:
    session(project, "s0", T0, LOOP)
    seen = []
    for i in range(1, 7):
        text = session(project, f"s{i}", T0 + i * DAY, CALM)
        assert "error-loop" in active(f"s{i}") and "- error-loop:" in text
        seen.append(rule(project, "error-loop", T0 + i * DAY + 1)["confidence"])
    assert seen == sorted(seen) and seen[-1] > seen[0]
    assert rule(project, "error-loop", T0 + 7 * DAY)["suppressions"] == 6


def test_a_detection_after_holding_does_not_reset_confidence(project: str) -> None:
    for i, fields in enumerate([LOOP, CALM, CALM, LOOP]):
        session(project, f"s{i}", T0 + i * DAY, fields)
        if i == 2:
            before = rule(project, "error-loop", T0 + i * DAY + 1)["confidence"]
    after = rule(project, "error-loop", T0 + 4 * DAY)
    assert after["confidence"] > before and (after["detections"], after["suppressions"]) == (2, 2)


def test_situation_that_never_arose_gives_no_evidence(project: str) -> None:
    session(project, "s0", T0, LOOP)
    session(project, "s1", T0 + DAY, QUIET)
    assert "error-loop" in active("s1")
    assert len(project_records(project)) == 1
    r = rule(project, "error-loop", T0 + 2 * DAY)
    assert (r["detections"], r["suppressions"], r["last_active"]) == (1, 0, T0)


def test_an_inactive_rule_held_in_a_session_gets_nothing(project: str) -> None:
    session(project, "s0", T0, CALM)  # precondition met, failure absent, but no rule was active
    assert project_records(project) == []


@pytest.mark.parametrize(
    ("idle_days", "factor"),
    [
        pytest.param(0, 1.0, id="fresh"),
        pytest.param(59, 1.0, id="59-days-no-decay"),
        pytest.param(60, 1.0, id="60-days-edge"),
        pytest.param(120, 0.5, id="one-half-life-after-grace"),
        pytest.param(180, 0.25, id="two-half-lives"),
    ],
)
def test_only_dormancy_decays_with_a_60_day_half_life(
    project: str, idle_days: int, factor: float
) -> None:
    for i in range(6):
        session(project, f"s{i}", T0 + i * 3600, LOOP)
    last = T0 + 5 * 3600
    base = confidence.confidence(6, 0, last, last, LEARN)
    got = rule(project, "error-loop", last + idle_days * DAY)["confidence"]
    assert got == pytest.approx(base * factor, abs=1e-3)


def test_activity_stops_the_decay(project: str) -> None:
    session(project, "s0", T0, LOOP)
    session(project, "s1", T0 + 100 * DAY, LOOP)
    r = rule(project, "error-loop", T0 + 150 * DAY)
    assert r["confidence"] == pytest.approx(confidence.confidence(2, 0, 0, 0, LEARN), abs=1e-3)


def test_decay_settings_are_configurable(project: str) -> None:
    session(project, "s0", T0, LOOP)
    conf = cfg(learning={"decay_after_days": 10, "half_life_days": 10})
    base = rule(project, "error-loop", T0)["confidence"]
    assert rule(project, "error-loop", T0 + 20 * DAY, conf)["confidence"] == pytest.approx(
        base / 2, abs=1e-3
    )


def test_long_dormant_thin_rules_are_pruned_rich_ones_stay(tmp_path, project: str) -> None:
    session(project, "s0", T0, LOOP)
    assert rule(project, "error-loop", T0 + 239 * DAY) is not None
    assert rule(project, "error-loop", T0 + 241 * DAY) is None
    for i in range(1, 6):
        session(project, f"s{i}", T0 + i * 60, LOOP)
    kept = rule(project, "error-loop", T0 + 400 * DAY)
    assert kept is not None and kept["confidence"] < 0.1


def test_evidence_is_dated_when_the_session_happened(project: str) -> None:
    write_session("old", project, T0, **LOOP)  # never ended: evaluated by a session 90 days later
    learning.on_session_start(project, "new", state_dir(), cfg(), T0 + 90 * DAY)
    assert [r["at"] for r in project_records(project)] == [T0]
    r = rule(project, "error-loop", T0 + 90 * DAY)
    assert r["last_active"] == T0
    assert r["confidence"] == pytest.approx(
        confidence.confidence(1, 0, T0, T0, LEARN) * 0.5**0.5, abs=1e-3
    )


def test_a_session_written_twice_counts_once(project: str) -> None:
    rec = {"v": 1, "type": "detection", "rule": "error-loop", "at": T0, "session": "abcd1234"}
    store.append(
        store.project_path(project), [rec, rec, {**rec, "session": "ffff0000"}], T0, 1 << 20, 30
    )
    assert rule(project, "error-loop", T0)["detections"] == 2


def evidence(
    kind: str, session: str = "abcd1234", rule_id: str = "error-loop", at: float = T0
) -> dict:
    return {"v": 1, "type": kind, "rule": rule_id, "at": at, "session": session}


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        pytest.param(["suppression", "detection"], (1, 0), id="held-then-looped"),
        pytest.param(["detection", "suppression"], (0, 1), id="looped-then-held"),
        pytest.param(["detection", "detection"], (1, 0), id="written-twice"),
        pytest.param(["suppression", "detection", "suppression"], (0, 1), id="latest-of-three"),
        pytest.param(["detection", "retraction"], None, id="withdrawn"),
        pytest.param(["detection", "retraction", "suppression"], (0, 1), id="withdrawn-then-held"),
    ],
)
def test_the_latest_evaluation_of_a_session_wins(kinds: list[str], expected: tuple | None) -> None:
    mine = [evidence(k, at=T0 + i) for i, k in enumerate(kinds)]
    got = confidence.tally(mine).get("error-loop")
    assert ((got.detections, got.suppressions) if got else None) == expected
    with_another = confidence.tally([*mine, evidence("detection", "ffff0000")])["error-loop"]
    assert (with_another.detections, with_another.suppressions) == (
        1 + (expected or (0, 0))[0],
        (expected or (0, 0))[1],
    )


def test_compaction_keeps_only_the_latest_evaluation_of_a_session(project: str) -> None:
    path = store.project_path(project)
    recs = [
        evidence("suppression", at=T0),
        evidence("detection", at=T0 + 60),
        evidence("detection", "0000aaaa", "write-heavy", T0),
        evidence("retraction", "0000aaaa", "write-heavy", T0),
    ]
    store.append(path, recs, T0, 1 << 20, 30)
    before = confidence.tally(store.read(path, T0 + DAY).records)
    assert store._compact(path, T0 + 60 * DAY, 1 << 20, 30)  # everything old enough to fold
    after = store.read(path, T0 + 60 * DAY).records
    assert [r["type"] for r in after] == ["aggregate"]
    assert confidence.tally(after) == before == {"error-loop": store.Tally(1, 0, T0 + 60, T0 + 60)}
