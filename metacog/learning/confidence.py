"""Confidence without the seesaw: both kinds of evidence count, and only dormancy decays.

A detection (the pattern happened) and a suppression (the rule was active, the
situation arose, the pattern did not happen) are both evidence that the rule is
about something real in this work, so both raise confidence: a rule that held is
not punished for holding and dropped, only to be learned again. Confidence is
n / (n + PRIOR) for n pieces of evidence. A rule with no activity at all for
`decay_after_days` loses confidence with a `half_life_days` half-life, and once
dormant for `prune_after_days` with fewer than `prune_below_evidence` pieces of
evidence it is pruned. Every function takes `now`: evidence is dated when its
session happened, and tests date it at will.
"""

from __future__ import annotations

from metacog.learning import store

DAY = 86400.0
PRIOR = 2.0  # 1 piece of evidence: 0.33; 4: 0.67; 18: 0.9


def tally(records: list[dict]) -> dict[str, store.Tally]:
    """rule -> its Tally over validated records.

    A session evaluated again (it went quiet, was evaluated, then went on; or a crash
    between writing its evidence and marking it done) wrote evidence again under the same
    session hash: for each (rule, session, sig) the last record counts, a retraction as nothing.
    """
    totals: dict[str, store.Tally] = {}
    latest: dict[tuple, dict] = {}
    for rec in records:
        k = store.key(rec)
        if k is None:
            store.fold(totals, rec)
        else:
            latest[k] = rec  # a later line of the same session replaces an earlier one
    for rec in latest.values():
        if rec["type"] != store.RETRACTION:
            store.fold(totals, rec)
    return totals


def dormancy(last: float, now: float, learn: dict) -> float:
    """The decay factor in (0, 1]: 1 until `decay_after_days` without activity."""
    idle_days = (now - last) / DAY - learn["decay_after_days"]
    if idle_days <= 0:
        return 1.0
    return 0.5 ** (idle_days / learn["half_life_days"])


def confidence(detections: int, suppressions: int, last: float, now: float, learn: dict) -> float:
    evidence = detections + suppressions
    return evidence / (evidence + PRIOR) * dormancy(last, now, learn)


def pruned(detections: int, suppressions: int, last: float, now: float, learn: dict) -> bool:
    dormant = (now - last) / DAY >= learn["prune_after_days"]
    return dormant and detections + suppressions < learn["prune_below_evidence"]


def merge(
    project: dict[str, store.Tally], global_: dict[str, store.Tally]
) -> dict[str, tuple[str, store.Tally]]:
    """rule -> (scope, tally). The project's entry takes precedence once the project has
    seen the pattern itself; suppressions alone of a rule it learned from the global set
    are also in the global store (evaluation writes them to both), so the global entry
    already counts them and stays the one shown."""
    out = {rule: ("global", t) for rule, t in global_.items()}
    for rule, t in project.items():
        if t.detections > 0 or rule not in out:
            out[rule] = ("project", t)
    return out


def ranked(merged: dict[str, tuple[str, store.Tally]], now: float, learn: dict) -> list[dict]:
    """Live rules, most reliable first: confidence times evidence, then most recent."""
    out = []
    for rule, (scope, t) in merged.items():
        d, s, last = t.detections, t.suppressions, t.last
        if pruned(d, s, last, now, learn):
            continue
        conf = confidence(d, s, last, now, learn)
        out.append(
            {
                "id": rule,
                "scope": scope,
                "detections": d,
                "suppressions": s,
                "confidence": round(conf, 4),
                "last_active": last,
                "score": conf * (d + s),
            }
        )
    out.sort(key=lambda r: (-r["score"], -r["last_active"], r["id"]))
    return out
