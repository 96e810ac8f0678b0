"""The `[learning]`, `[digest]` and per-detector settings, read tolerantly over this package's defaults.

Each detector has a section of its own named by its rule id (`[error-loop]`,
`[task-drift]`, `[motor-learning]` for the lessons), the same id the digest shows and
`metacog forget` takes: `enabled` and its thresholds, two levels like every setting,
so `metacog config set error-loop.streak 5` works.

metacog.config keeps only known keys of the right type; these defaults are repeated
here so a key the config file lacks (an older DEFAULTS) still has a sane value, and
numbers are clamped so a setting can slow learning down but never break it.
"""

from __future__ import annotations

import math

from metacog.config import DIGEST_HARD_CEILING

LEARNING: dict[str, object] = {
    "enabled": True,
    "promote_projects": 2,  # distinct projects that must detect a pattern before it goes global
    "decay_after_days": 60,  # no activity at all for this long, and confidence starts to decay
    "half_life_days": 60,
    "prune_after_days": 240,  # dormant this long and thin on evidence: dropped
    "prune_below_evidence": 5,
    "stale_after_minutes": 120,  # a session silent this long counts as finished
    "compact_bytes": 512 * 1024,  # a store larger than this is compacted after the next append
    "keep_days": 30,  # compaction keeps evidence this recent as single records
    "retrospective": True,  # one line on the project's previous session in the digest
}
DIGEST: dict[str, object] = {"enabled": True, "max_rules": 25, "max_chars": 2000}
# The smallest digest budget: always room for the header and the "N more rules left out"
# line (95 + 1 + 68 characters today), and for most single rules. A budget below it would
# leave the digest the choice of cutting text silently or saying nothing at all; a smaller
# setting is raised to it (tests/test_learning_digest.py checks that it still fits).
DIGEST_MIN_CHARS = 300
_LIMITS = {
    "promote_projects": (1, 1000),
    "decay_after_days": (0, 100000),
    "half_life_days": (1, 100000),
    "prune_after_days": (1, 100000),
    "prune_below_evidence": (0, 10**9),
    "stale_after_minutes": (1, 10**7),
    "compact_bytes": (1024, 1 << 30),
    "keep_days": (0, 100000),
    "max_rules": (0, 1000),
    "max_chars": (DIGEST_MIN_CHARS, DIGEST_HARD_CEILING),
}


def _fits(value: object, default: object) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, (int, float)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return isinstance(value, int) or math.isfinite(value)
    return isinstance(value, type(default))


def overlay(defaults: dict, values: object) -> dict:
    """`values` over `defaults`: known keys of the default's type only, numbers clamped."""
    out = dict(defaults)
    if isinstance(values, dict):
        for key, default in defaults.items():
            value = values.get(key)
            if value is not None and _fits(value, default):
                out[key] = value
    for key, (low, high) in _LIMITS.items():
        if key in out:
            out[key] = min(max(out[key], low), high)
    return out


def learning(cfg: dict) -> dict:
    return overlay(LEARNING, cfg.get("learning") if isinstance(cfg, dict) else None)


def digest(cfg: dict) -> dict:
    return overlay(DIGEST, cfg.get("digest") if isinstance(cfg, dict) else None)


def detector(cfg: dict, name: str, defaults: dict) -> dict:
    """A detector's settings: its own section, named by its rule id (`[error-loop]`)."""
    return overlay(defaults, cfg.get(name) if isinstance(cfg, dict) else None)
