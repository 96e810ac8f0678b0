"""Learning across sessions: evidence of patterns per project, promoted when they recur elsewhere.

The API the hook and the CLI call. Each function imports what it needs when called:
`digest_once` runs on every UserPromptSubmit and must stay cheap.

  on_session_start  evaluate this project's earlier sessions that finished, or changed since evaluated
  digest_once       the digest for the first prompt of a session ('' afterwards)
  on_session_end    evaluate this session (again, if it went on after an earlier evaluation)
  rules             every live rule, merged and ranked (for `metacog status --json`)
  forget            remove a rule's evidence from one store or both
  health            skipped lines and sizes per store (for `metacog doctor`)

Modules: detectors (the patterns and their lessons), store (the JSONL files),
confidence (the model), scopes (promotion to the global store), evaluate (sessions
to evidence), build and digest (the text, and its cache).
"""

from __future__ import annotations

SCOPES = ("project", "global")


class UnknownRule(LookupError):
    """`forget` was given a rule id no table or store knows; `.closest` lists the nearest ids."""

    def __init__(self, rule_id: str, closest: list[str]) -> None:
        hint = f"; did you mean {', '.join(closest)}?" if closest else ""
        super().__init__(f"unknown rule {rule_id!r}{hint}")
        self.rule_id = rule_id
        self.closest = closest


# Seconds a SessionStart spends evaluating earlier sessions in a hook of its own, the rest
# left for the next start (metacog.handlers gives the resident process less).
START_BUDGET_S = 2.0


def on_session_start(
    root: str,
    session_id: str,
    state_dir: str,
    cfg: dict,
    now: float,
    budget: float = START_BUDGET_S,
) -> bool:
    """Evaluate the earlier sessions of `root` due for it, for at most `budget` seconds;
    False when some were left for the next start."""
    from metacog.learning import evaluate

    return evaluate.on_session_start(root, session_id, state_dir, cfg, now, budget)


def digest_once(root: str, session_id: str, state_dir: str, cfg: dict, now: float) -> str:
    from metacog.learning import digest

    return digest.digest_once(root, session_id, state_dir, cfg, now)


def on_session_end(root: str, session_id: str, state_dir: str, cfg: dict, now: float) -> None:
    from metacog.learning import evaluate

    evaluate.on_session_end(root, session_id, state_dir, cfg, now)


def rules(root: str, cfg: dict, now: float) -> list[dict]:
    """Every live rule: {id, lesson, scope, detections, suppressions, confidence, last_active}
    plus `enabled` (its detector is on) and `in_digest` (a digest compiled now shows it)."""
    from metacog.learning import build, settings

    out = build.collect(root, cfg, now)
    dig = settings.digest(cfg)
    build.render(out, "", dig["max_rules"], dig["max_chars"])
    for rule in out:
        del rule["score"]
    return out


def forget(rule_id: str, root: str, scope: str | None = None) -> int:
    """Remove every record of `rule_id` from the project store, the global one, or both
    (scope None), and its promotion count: everywhere, the rule must reach the global store
    again from scratch; in the project, this project no longer counts towards it.
    Returns the records removed; UnknownRule for an id no table or store knows."""
    import time

    from metacog.learning import scopes, store
    from metacog.learning.detectors import RULES

    if scope is not None and scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    now = time.time()
    targets = []
    if scope in (None, "project"):
        targets.append(store.project_path(root))
    if scope in (None, "global"):
        targets.append(store.global_path())
    known = set(RULES)
    if rule_id not in known:
        for path in targets:
            known |= store.rules_in(path, now)
    if rule_id not in known:
        import difflib  # imports re; the CLI only

        names = sorted(i for i in known if store.is_rule_id(i))
        raise UnknownRule(rule_id, difflib.get_close_matches(rule_id, names, n=3, cutoff=0.5))
    removed = sum(store.remove_rule(path, rule_id, now) for path in targets)
    scopes.forget(rule_id, root if scope == "project" else "")
    return removed


def health(root: str) -> dict:
    """Per store: path, exists, bytes, records, corrupt (skipped lines), unknown (records of a
    newer version, kept), partial, truncated, reason (a store.locate code) and refused (its
    words); the quarantined copies; the index's size."""
    import os
    import time

    from metacog import paths
    from metacog.learning import scopes, store

    now = time.time()
    folder = os.path.join(paths.data_dir(), "quarantine")
    try:
        quarantined = sorted(os.path.join(folder, name) for name in os.listdir(folder))
    except OSError:
        quarantined = []
    project = store.locate(root)
    report = {
        "global": store.health(store.global_path(), now),
        "project": store.health(project.path, now),
        "quarantined": quarantined,
        "index": {"path": scopes.index_path(), "bytes": _size(scopes.index_path())},
    }
    if project.reason:
        report["project"].update(
            reason=project.reason,
            refused=store.explain(project.reason),
            path=os.path.join(root, store.PROJECT_DIR, store.PROJECT_NAME),
        )
    return report


def _size(path: str) -> int:
    import os

    try:
        return os.path.getsize(path)
    except OSError:
        return 0
