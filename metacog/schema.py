"""Every setting metacog reads: each sense's section (its DEFAULTS and LIMITS, in SENSES
order), then metacog.config's own, assembled once from the tuple.

Here, above both, so that metacog.config imports no sense (the senses and the learning
layer read config; config reads neither). `load` and `merge` are metacog.config's over
this schema: the hook, the CLI and the replay call these.
"""

from __future__ import annotations

from metacog import config
from metacog.senses import SENSES

DEFAULTS, LIMITS = config.schema(SENSES)


def load(config_dir: str, root: str) -> dict:
    """The effective settings of `root` (metacog.config.load over this schema)."""
    return config.load(config_dir, root, DEFAULTS, LIMITS)


def merge(base: dict, layer: dict) -> dict:
    """`layer` over `base`, as metacog.config.merge judges it against this schema."""
    return config.merge(base, layer, DEFAULTS, LIMITS)
