"""Settings: defaults here, then the global config file, then the project's (project wins).

Files are TOML: `<config dir>/config.toml` and `<project>/.claude/metacog.toml`.
A process that answers many calls (the resident) keeps each file's parsed table in
memory until the file's stat changes; nothing is cached on disk. A file that cannot be
parsed, however the parser fails (a committed `a = [[[[…]]]]` makes tomllib raise
RecursionError), is skipped: the hook senses with the other file and the defaults.

The sections written here (DEFAULTS, and the bounds of their numbers, LIMITS) are
config's own: learning, the digest, the learned patterns. Each sense declares its own
section in its module; metacog.schema assembles the whole schema (`schema(SENSES)`) and
hands it to `load` and `merge`, so this module imports no other part of metacog at import
time (a leaf: the senses and the learning layer may both read it). `merge` is the one
type-and-range check: what `load` returns has every key of the schema, so its readers (the
senses, metacog.learning.settings, the detectors) index it without defaults of their own.
"""

from __future__ import annotations

import os

# The senses' sections are their own (each sense module's DEFAULTS and LIMITS), see `schema`.
DEFAULTS: dict[str, dict[str, object]] = {
    "learning": {
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
    },
    "digest": {"enabled": True, "max_rules": 25, "max_chars": 2000},
    # The turn's end (metacog/turn_end.py): a final message that claims what the session's own
    # latest check contradicts; `subagents` for a subagent's final report.
    "turn-end": {"enabled": True, "subagents": True},
    # Learned patterns (metacog/learning/detectors.py), one section each, named by the rule id the
    # digest shows: on/off, the threshold of the precondition (min_*), then of the failure. The
    # detectors have no thresholds of their own: these are the only ones.
    "error-loop": {"enabled": True, "min_errors": 2, "streak": 3},
    "repeated-mistake": {"enabled": True, "min_errors": 3, "fired": 1},
    "repeated-reads": {"enabled": True, "min_reads": 5, "same_file": 3},
    "circular-search": {"enabled": True, "min_searches": 4, "same_search": 3},
    "going-in-circles": {"enabled": True, "min_calls": 10, "same_action": 4},
    "long-autonomous-run": {"enabled": True, "min_calls": 30, "run_calls": 60, "run_minutes": 30},
    "write-heavy": {"enabled": True, "min_edits": 8, "ratio": 3.0},
    "context-pressure": {"enabled": True, "min_fill": 0.5, "fired": 1},
    "blast-radius": {"enabled": True, "min_edits": 1, "fired": 1},
    "untested-edits": {"enabled": True, "min_edits": 12, "fired": 1},
    "task-drift": {"enabled": True, "min_calls": 12, "fired": 1},
    "motor-learning": {"enabled": True},  # lessons from resolved error streaks
}
DIGEST_HARD_CEILING = 8000  # Claude Code swaps hook output over 10,000 characters for a preview
# The smallest digest budget: always room for the header and the "N more rules left out"
# line (95 + 1 + 68 characters today), and for most single rules. A budget below it would
# leave the digest the choice of cutting text silently or saying nothing at all, so LIMITS
# ignores a smaller setting (tests/test_learning_digest.py checks that it still fits).
DIGEST_MIN_CHARS = 300
# Numbers are finite and never negative; these have tighter bounds (a count of 0 would divide
# by zero or fire on every call; a digest larger than the ceiling would be cut by Claude Code;
# a half-life of 0 divides by zero; a store compacted below 1 KiB would compact on every append,
# one allowed past 2 MiB could outgrow what a store read takes in, learning.store.READ_CAP).
LIMITS: dict[tuple[str, str], tuple[float, float]] = {
    ("digest", "max_rules"): (1, 100),
    ("digest", "max_chars"): (DIGEST_MIN_CHARS, DIGEST_HARD_CEILING),
    ("learning", "promote_projects"): (1, 100),
    ("learning", "decay_after_days"): (0, 100_000),
    ("learning", "half_life_days"): (1, 100_000),
    ("learning", "prune_after_days"): (1, 100_000),
    ("learning", "prune_below_evidence"): (0, 10**9),
    ("learning", "stale_after_minutes"): (1, 10**7),
    ("learning", "compact_bytes"): (1024, 2 << 20),
    ("learning", "keep_days"): (0, 100_000),
    # Learned patterns: a failure threshold of 0 or 1 would call every session a detection.
    ("error-loop", "streak"): (2, 1000),
    ("repeated-reads", "same_file"): (2, 1000),
    ("repeated-mistake", "fired"): (1, 1000),
    ("circular-search", "same_search"): (2, 1000),
    ("going-in-circles", "same_action"): (2, 1000),
    ("long-autonomous-run", "run_calls"): (1, 100_000),
    ("long-autonomous-run", "run_minutes"): (1, 100_000),
    ("write-heavy", "ratio"): (1, 1000),
    ("context-pressure", "min_fill"): (0.05, 1),
    ("context-pressure", "fired"): (1, 1000),
    ("blast-radius", "fired"): (1, 1000),
    ("untested-edits", "fired"): (1, 1000),
    ("task-drift", "fired"): (1, 1000),
}


def schema(senses: tuple) -> tuple[dict[str, dict[str, object]], dict[tuple[str, str], tuple]]:
    """(defaults, bounds) of every section: each sense's first, in the order of `senses` (the
    sense modules, metacog.senses.SENSES, handed over by metacog.schema), then config's own.
    A sense without DEFAULTS gets none (metacog.nervous then skips it with a log line)."""
    defaults: dict[str, dict[str, object]] = {}
    limits = dict(LIMITS)
    for sense in senses:
        section = getattr(sense, "DEFAULTS", None)
        if isinstance(section, dict):
            defaults[sense.NAME] = section
            for key, bound in getattr(sense, "LIMITS", {}).items():
                limits[(sense.NAME, key)] = bound
    defaults.update(DEFAULTS)
    return defaults, limits


_INF = float("inf")
CONFIG_CAP = 256 * 1024  # bytes; a config file is a few lines
GLOBAL_NAME = "config.toml"
PROJECT_NAME = os.path.join(".claude", "metacog.toml")


def project_root(cwd: str) -> str:
    """The git top level of `cwd` (found by walking up to a `.git`), else `cwd` itself."""
    path = os.path.abspath(cwd) if cwd else ""
    probe = path
    for _ in range(64):
        if not probe:
            break
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    return path


_PARSED: dict[str, tuple[tuple[int, ...], dict]] = {}  # path -> (stamp, table), in this process
_PARSED_CAP = 64  # files remembered; a resident serves few projects at a time
# Replay only (with HELD): tables by the text they were parsed from. Each replay writes the
# same settings into a new home of its own, which `_PARSED` (by path) never finds again:
# parsing them was a thirtieth of a replay of a generated history (profiled). Shared as
# `_PARSED` shares a table between calls: its readers never change it.
_READ: dict[bytes, dict] = {}


def _stamp(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: an embedded NUL
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def parse_toml(path: str) -> dict:
    """A TOML file as a dict; ValueError with a readable reason when it is not TOML."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    from metacog.fsutil import read_capped

    # A committed project file may be a link to /dev/zero or a FIFO: regular files only, capped.
    raw = read_capped(path, CONFIG_CAP + 1)
    if len(raw) > CONFIG_CAP:
        raise ValueError(f"{path}: larger than {CONFIG_CAP // 1024} KiB, not read")
    if not raw and not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file")
    if HELD is not None and raw in _READ:
        return _READ[raw]
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to read") from None
    except Exception as exc:  # noqa: BLE001 - whatever else the parser raises, the file is unreadable
        raise ValueError(f"{path}: unreadable ({type(exc).__name__})") from None
    if HELD is not None:
        if len(_READ) >= _PARSED_CAP:
            _READ.clear()
        _READ[raw] = table
    return table


def merge(base: dict, layer: dict, defaults: dict, limits: dict) -> dict:
    """`layer` over `base`, keeping only known sections and keys of the default's type, numbers
    finite and within `limits` (`defaults` and `limits`: the schema, metacog.schema's). The one
    check: readers of the result (senses, metacog.learning) take its values as they are."""
    out = {section: dict(values) for section, values in base.items()}
    for section, values in layer.items():
        if section not in out or not isinstance(values, dict):
            continue
        for key, value in values.items():
            default = defaults[section].get(key)
            if default is None:
                continue
            if isinstance(default, bool):
                ok = isinstance(value, bool)
            elif isinstance(default, (int, float)):
                low, high = limits.get((section, key), (0, _INF))
                # TOML has inf and nan: nan fails any comparison, inf only the `< _INF`.
                ok = (
                    isinstance(value, (int, float))
                    and not isinstance(value, bool)
                    and low <= value <= high
                    and value < _INF
                    and (isinstance(value, int) or isinstance(default, float))
                )
            else:
                ok = isinstance(value, type(default))
            if ok:
                out[section][key] = value
    return out


def files(config_dir: str, root: str) -> list[str]:
    found = [os.path.join(config_dir, GLOBAL_NAME)]
    if root:
        found.append(os.path.join(root, PROJECT_NAME))
    return found


# Replay only (metacog.replay sets it for one transcript, in one process): the settings of
# each (config folder, project) loaded once, not stat'ed and merged again on every call (an
# eighth of a replay's time, profiled). The files do not change under one replay; what
# `load` returns is never changed by its readers (the defaults themselves are returned
# without files). One process has one schema (metacog.schema's), so it is not in the key.
HELD: dict[tuple[str, str], dict] | None = None
# Replay only, with HELD: a layer over every file, the project's too (replay's learning off:
# a transcript's project that turns learning on in its own settings must not bring today's
# learned rules into a session replayed as it was).
OVER: dict = {}


def load(config_dir: str, root: str, defaults: dict, limits: dict) -> dict:
    """Effective settings over the schema (`defaults`, `limits`: metacog.schema's). Unreadable
    files are skipped (`metacog doctor` names them)."""
    if HELD is not None:
        values = HELD.get((config_dir, root))
        if values is None:
            values = _load(config_dir, root, defaults, limits)
            if OVER:
                values = merge(values, OVER, defaults, limits)
            HELD[(config_dir, root)] = values
        return values
    return _load(config_dir, root, defaults, limits)


def _load(config_dir: str, root: str, defaults: dict, limits: dict) -> dict:
    values = defaults
    for path in files(config_dir, root):
        layer = _layer(path)
        if layer:
            values = merge(values, layer, defaults, limits)
    return values


def _layer(path: str) -> dict:
    """The file's table, {} if absent or unreadable; parsed again only when its stat changes."""
    stamp = _stamp(path)
    if stamp is None:
        _PARSED.pop(path, None)
        return {}
    hit = _PARSED.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        table = parse_toml(path)
    except (OSError, ValueError):
        table = {}
    if len(_PARSED) >= _PARSED_CAP:
        _PARSED.clear()
    _PARSED[path] = (stamp, table)
    return table
