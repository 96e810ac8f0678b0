"""Compile the digest: both stores merged, ranked, rendered within a budget from structured fields only.

Nothing in the text comes from a store as text: a rule id is shown only if it is a key
of the fixed table (metacog.learning.detectors.RULES), its lesson is that table's text,
and every number is a count this module computed. Each line is sanitized and capped
all the same, so a mistake here cannot open a channel from a committed file to the model.
"""

from __future__ import annotations

from metacog.fsutil import read_json
from metacog.learning import confidence, settings, store
from metacog.learning.detectors import LESSONS, RULES, SENSES, enabled

LINE_CAP = 150
# What the digest claims at most: a committed store is anyone's text and may claim any count
# (one said 10,000,000); one session gives a rule one piece of evidence, so more is not work seen.
CLAIM_CAP = 10_000
HEADER = "metacog: lessons from earlier sessions, most reliable first (`/metacog forget <id>` drops one):"
# C0 and C1 controls, DEL, line/paragraph separators, zero-width and bidirectional controls.
_UNSAFE = dict.fromkeys(
    (
        *range(32),
        *range(127, 160),
        8232,
        8233,
        65279,
        *range(8203, 8208),
        *range(8234, 8239),
        *range(8294, 8298),
    ),
    " ",
)


def clean(text: str, cap: int = LINE_CAP) -> str:
    """One line, no control characters, white space folded, at most `cap` characters."""
    return " ".join(str(text).translate(_UNSAFE).split())[:cap]


def collect(root: str, cfg: dict, now: float) -> list[dict]:
    """Every live rule of both stores, merged (project first) and ranked."""
    learn = settings.learning(cfg)
    project = store.read(store.project_path(root), now)
    global_ = store.read(store.global_path(), now)
    merged = confidence.merge(confidence.tally(project.records), confidence.tally(global_.records))
    out = confidence.ranked(merged, now, learn)
    for rule in out:
        rule["lesson"] = RULES[rule["id"]]
        rule["enabled"] = enabled(cfg, rule["id"])
        rule["in_digest"] = False
    return out


def _times(count: int) -> str:
    return f"{CLAIM_CAP:,}+×" if count > CLAIM_CAP else f"{count}×"


def evidence(rule: dict) -> str:
    if rule["id"] in LESSONS:
        return f"worked {_times(rule['detections'])}"
    return f"seen {_times(rule['detections'])}, held {_times(rule['suppressions'])}"


def line(rule: dict) -> str:
    rule_id = rule["id"]
    if rule_id not in RULES:  # never: collect() only yields table ids; kept as the last guard
        return ""
    head = f"- {rule_id}{' (global)' if rule['scope'] == 'global' else ''}: "
    tail = f" ({evidence(rule)})"
    lesson = clean(RULES[rule_id], max(LINE_CAP - len(head) - len(tail), 0))
    return clean(head + lesson + tail)


def left_out(count: int) -> str:
    return f"- {count} more rule{'' if count == 1 else 's'} left out of this digest; /metacog status lists them."


def retro_line(retro: object) -> str:
    """The project's previous session, from metacog's own record of it (numbers and sense names)."""
    if not isinstance(retro, dict):
        return ""
    calls, minutes, fired = retro.get("calls"), retro.get("minutes"), retro.get("fired")
    if (
        not isinstance(calls, int)
        or isinstance(calls, bool)
        or not isinstance(minutes, (int, float))
    ):
        return ""
    fired = fired if isinstance(fired, dict) else {}
    signals = [
        f"{name} ×{int(fired[name])}"
        for name in SENSES
        if isinstance(fired.get(name), (int, float))
        and not isinstance(fired.get(name), bool)
        and fired[name] > 0
    ]
    said = f"signals: {', '.join(signals)}" if signals else "no signals"
    return clean(f"- Last session here: {calls} tool calls over {round(minutes)} min; {said}.")


def render(rules: list[dict], retro: str, max_rules: int, max_chars: int) -> tuple[str, list[str]]:
    """(text, ids of the rules shown). Never drops a rule without saying how many were left out;
    `max_chars` is at least config.DIGEST_MIN_CHARS, as settings.digest gives it."""
    candidates = [r for r in rules if r["enabled"]]
    if not candidates:
        text = clean(f"metacog: {retro[2:]}") if retro else ""
        return (text if len(text) <= max_chars else ""), []
    # config.DIGEST_MIN_CHARS keeps max_chars large enough for the header and this line.
    reserve = len(left_out(len(candidates))) + 1
    lines, used, shown = [HEADER], len(HEADER), []
    for i, rule in enumerate(candidates):
        if len(shown) >= max_rules:
            break
        text = line(rule)
        more = i + 1 < len(candidates)
        if used + 1 + len(text) + (reserve if more else 0) > max_chars:
            break
        lines.append(text)
        used += 1 + len(text)
        shown.append(rule["id"])
        rule["in_digest"] = True
    if len(shown) < len(candidates):
        lines.append(left_out(len(candidates) - len(shown)))
        used += 1 + len(lines[-1])
    if retro and used + 1 + len(retro) <= max_chars:
        lines.append(retro)
    return "\n".join(lines), shown


def read_retro(path: str) -> object:
    try:
        return read_json(path, 4096)
    except (OSError, ValueError):
        return None


def compile_digest(root: str, cfg: dict, now: float, retro_path: str = "") -> dict:
    """{"text", "ids", "rules"}: the digest for a session starting now in `root`."""
    rules = collect(root, cfg, now)
    dig, learn = settings.digest(cfg), settings.learning(cfg)
    retro = retro_line(read_retro(retro_path)) if retro_path and learn["retrospective"] else ""
    text, ids = render(rules, retro, dig["max_rules"], dig["max_chars"])
    return {"text": text, "ids": ids, "rules": rules}
