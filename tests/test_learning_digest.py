"""The digest: once per session, ranked, within its budget, and never silent about what it left out."""

from __future__ import annotations

import os
from pathlib import Path

import learningtest
import pytest
from learningtest import DAY, LOOP, T0, active, cfg, session, state_dir

from metacog import config, learning, paths, schema
from metacog.learning import build, detectors, digest, store

project = learningtest.project


def seed(root: str, counts: dict[str, int], at: float = T0) -> None:
    recs = [
        {"v": 1, "type": "detection", "rule": r, "at": at}
        for r, n in counts.items()
        for _ in range(n)
    ]
    store.append(store.project_path(root), recs, at, 1 << 30, 30)


def every_rule(root: str) -> list[str]:
    ids = sorted(detectors.RULES)
    seed(root, {r: i + 1 for i, r in enumerate(ids)})
    return ids[::-1]  # most evidence first


def test_nothing_learned_is_silence(project: str) -> None:
    assert learning.digest_once(project, "s0", state_dir(), cfg(), T0) == ""


def test_injected_once_per_session_and_recognisable(project: str) -> None:
    seed(project, {"error-loop": 2})
    first = learning.digest_once(project, "s0", state_dir(), cfg(), T0)
    assert (
        first.startswith("metacog:") and "- error-loop: " in first and "(seen 2×, held 0×)" in first
    )
    assert learning.digest_once(project, "s0", state_dir(), cfg(), T0 + 5) == ""
    assert active("s0") == {"error-loop"}


def test_each_session_has_its_own_marker(project: str) -> None:
    seed(project, {"error-loop": 1})
    texts = [learning.digest_once(project, sid, state_dir(), cfg(), T0) for sid in ("s1", "s2")]
    assert texts[0] == texts[1] != ""
    seed(project, {"repeated-reads": 3})
    assert "repeated-reads" in learning.digest_once(project, "s3", state_dir(), cfg(), T0)
    assert (active("s1"), active("s2"), active("s3")) == (
        {"error-loop"},
        {"error-loop"},
        {"error-loop", "repeated-reads"},
    )


def test_ranked_by_confidence_times_evidence(project: str) -> None:
    ids = every_rule(project)
    text = learning.digest_once(
        project, "s0", state_dir(), cfg(digest={"max_chars": 4000}), T0
    )  # room for all
    shown = [line.split()[1].rstrip(":") for line in text.splitlines()[1:]]
    assert shown == ids


@pytest.mark.parametrize("max_chars", [400, 700, 1000, 1500])
def test_the_character_budget_and_the_left_out_line(project: str, max_chars: int) -> None:
    ids = every_rule(project)
    conf = cfg(digest={"max_chars": max_chars})
    text = learning.digest_once(project, "s0", state_dir(), conf, T0)
    lines = text.splitlines()
    assert len(text) <= max_chars and all(len(line) <= 150 for line in lines)
    shown = active("s0")
    assert len(shown) < len(ids)
    assert (
        lines[-1]
        == f"- {len(ids) - len(shown)} more rules left out of this digest; /metacog status lists them."
    )
    in_digest = {r["id"] for r in learning.rules(project, conf, T0) if r["in_digest"]}
    assert in_digest == shown


def test_the_rule_budget(project: str) -> None:
    ids = every_rule(project)
    text = learning.digest_once(project, "s0", state_dir(), cfg(digest={"max_rules": 3}), T0)
    assert text.count("\n- ") == 4 and active("s0") == set(ids[:3])
    assert text.endswith(
        f"- {len(ids) - 3} more rules left out of this digest; /metacog status lists them."
    )


def test_default_budget_is_25_rules_and_2000_characters(project: str) -> None:
    every_rule(project)
    text = learning.digest_once(project, "s0", state_dir(), cfg(), T0)
    assert len(text) <= 2000 and len(active("s0")) <= 25


def test_the_hard_ceiling_wins_over_any_setting(project: str) -> None:
    recs = [{"v": 1, "type": "detection", "rule": r, "at": T0} for r in detectors.RULES]
    seed(project, {})
    store.append(store.project_path(project), recs, T0, 1 << 30, 30)
    huge = schema.merge(
        schema.DEFAULTS, {"digest": {"max_chars": 10**9, "max_rules": 10**9}}
    )  # as schema.load
    text = learning.digest_once(project, "s0", state_dir(), huge, T0)
    assert len(text) <= config.DIGEST_HARD_CEILING < 10000


def test_a_budget_too_small_to_say_anything_is_ignored_and_the_minimum_works(project: str) -> None:
    ids = every_rule(project)
    usual = learning.digest_once(project, "usual", state_dir(), cfg(), T0)
    assert len(usual) > config.DIGEST_MIN_CHARS  # so the default budget, not the minimum, made it
    toml = Path(project, ".claude", "metacog.toml")
    toml.parent.mkdir(exist_ok=True)
    # Through a config file, as the hook reads it: schema.LIMITS keeps a smaller budget out.
    for sid, tiny in (("s0", 50), ("s1", 0), ("s2", config.DIGEST_MIN_CHARS - 1)):
        toml.write_text(f"[digest]\nmax_chars = {tiny}\n")
        conf = schema.load(paths.config_dir(), project)
        assert conf["digest"]["max_chars"] == schema.DEFAULTS["digest"]["max_chars"]
        assert learning.digest_once(project, sid, state_dir(), conf, T0) == usual
    # Longer than the 299 file: config.load's cache is keyed on (mtime, size), and mtimes can be coarse.
    toml.write_text(f"[digest]\nmax_chars = {config.DIGEST_MIN_CHARS}  # the minimum\n")
    text = learning.digest_once(
        project, "s3", state_dir(), schema.load(paths.config_dir(), project), T0
    )
    assert text.startswith(build.HEADER) and len(text) <= config.DIGEST_MIN_CHARS
    assert text.endswith(
        f"- {len(ids) - len(active('s3'))} more rules left out of this digest; "
        "/metacog status lists them."
    )


def test_the_minimum_budget_fits_the_header_and_the_left_out_line() -> None:
    assert schema.LIMITS[("digest", "max_chars")] == (
        config.DIGEST_MIN_CHARS,
        config.DIGEST_HARD_CEILING,
    )
    longest = max(len(build.left_out(n)) for n in range(1, len(detectors.RULES) + 1))
    assert len(build.HEADER) + 1 + longest <= config.DIGEST_MIN_CHARS
    rules = [
        {"id": r, "scope": "global", "detections": 10**7, "suppressions": 10**7, "enabled": True}
        for r in detectors.RULES
    ]
    text, shown = build.render(rules, "", 1000, config.DIGEST_MIN_CHARS)
    assert text.splitlines()[0] == build.HEADER and len(text) <= config.DIGEST_MIN_CHARS
    assert text.splitlines()[-1] == build.left_out(len(rules) - len(shown))


def test_switched_off_detectors_leave_the_digest(project: str) -> None:
    seed(project, {"error-loop": 3, "repeated-reads": 1})
    conf = cfg({"error-loop": {"enabled": False}})
    text = learning.digest_once(project, "s0", state_dir(), conf, T0)
    assert "error-loop" not in text and "repeated-reads" in text
    assert (
        next(r for r in learning.rules(project, conf, T0) if r["id"] == "error-loop")["enabled"]
        is False
    )


def test_disabled_learning_or_digest_says_nothing(project: str) -> None:
    seed(project, {"error-loop": 3})
    for conf in (cfg(learning={"enabled": False}), cfg(digest={"enabled": False})):
        assert learning.digest_once(project, "s0", state_dir(), conf, T0) == ""
    assert active("s0") == set()


def test_the_cache_follows_the_stores(project: str) -> None:
    seed(project, {"error-loop": 1})
    assert "seen 1×" in learning.digest_once(project, "s0", state_dir(), cfg(), T0)
    assert os.path.exists(digest.cache_path(state_dir(), project))
    seed(project, {"error-loop": 1})
    assert "seen 2×" in learning.digest_once(project, "s1", state_dir(), cfg(), T0)
    store.remove_rule(
        store.project_path(project), "error-loop", T0
    )  # a rewrite: same size is possible
    seed(project, {"error-loop": 2})
    assert "seen 2×" in learning.digest_once(project, "s2", state_dir(), cfg(), T0)


def test_a_changed_config_recompiles(project: str) -> None:
    every_rule(project)
    learning.digest_once(project, "s0", state_dir(), cfg(), T0)
    learning.digest_once(project, "s1", state_dir(), cfg(digest={"max_rules": 2}), T0)
    assert len(active("s1")) == 2


def test_the_retrospective_line(project: str) -> None:
    session(project, "s0", T0, {**LOOP, "calls": 42, "fired": {"nociception": 3, "vestibular": 1}})
    text = session(project, "s1", T0 + DAY, {})
    assert text.splitlines()[-1] == (
        "- Last session here: 42 tool calls over 10 min; signals: nociception ×3, vestibular ×1."
    )
    off = session(project, "s2", T0 + 2 * DAY, {}, cfg(learning={"retrospective": False}))
    assert "Last session" not in off


def test_retrospective_alone_is_one_line(project: str) -> None:
    session(project, "s0", T0, {"calls": 3})
    assert (
        session(project, "s1", T0 + DAY, {})
        == "metacog: Last session here: 3 tool calls over 10 min; no signals."
    )


def test_session_start_warms_the_cache(project: str) -> None:
    seed(project, {"error-loop": 1})
    learning.on_session_start(project, "s0", state_dir(), cfg(), T0)
    assert os.path.exists(digest.cache_path(state_dir(), project))


def test_hostile_session_ids_are_cleaned(project: str, isolated_home) -> None:
    seed(project, {"error-loop": 1})
    assert learning.digest_once(project, "../../x", state_dir(), cfg(), T0) != ""
    assert learning.digest_once(project, "", state_dir(), cfg(), T0) == ""
    for path in isolated_home.rglob("*"):
        assert path.resolve().is_relative_to(isolated_home.resolve())


def test_the_prompt_path_imports_nothing_heavy(project: str) -> None:
    import subprocess
    import sys

    seed(project, {"error-loop": 1})
    learning.digest_once(project, "warm", state_dir(), cfg(), T0)
    code = (
        "import sys; from metacog import config, handlers, paths; before = set(sys.modules);"
        "from metacog import learning; sd = paths.state_dir();"
        "text = learning.digest_once(sys.argv[1], 'fresh', sd, config.DEFAULTS, float(sys.argv[2]));"
        "assert text.startswith('metacog:'), text;"
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", code, project, str(T0)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": root},
    ).stdout.split()
    assert not {"re", "json", "datetime", "hashlib", "difflib", "tomllib", "platformdirs"} & set(
        out
    ), out
    assert "metacog.learning.build" not in out  # a cache hit compiles nothing
