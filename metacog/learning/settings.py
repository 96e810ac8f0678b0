"""The `[learning]`, `[digest]` and per-detector sections of the effective config.

Each detector has a section of its own named by its rule id (`[error-loop]`,
`[task-drift]`, `[motor-learning]` for the lessons), the same id the digest shows and
`metacog forget` takes: `enabled` and its thresholds, two levels like every setting,
so `metacog config set error-loop.streak 5` works.

`cfg` is what metacog.schema.load returns: merged over schema.DEFAULTS, so every key is
there, of its default's type and within schema.LIMITS (a digest budget is never below
config.DIGEST_MIN_CHARS). These sections' defaults and bounds live in metacog.config only;
this module names the sections, so a caller never spells a section name twice.
"""

from __future__ import annotations


def learning(cfg: dict) -> dict:
    return cfg["learning"]


def digest(cfg: dict) -> dict:
    return cfg["digest"]


def detector(cfg: dict, name: str) -> dict:
    """A detector's settings: its own section, named by its rule id (`[error-loop]`)."""
    return cfg[name]
