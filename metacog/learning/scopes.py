"""Promotion from a project to the global store, through a private index in the data dir.

A pattern one repository keeps hitting says something about that repository; one
that shows up in `promote_projects` different projects says something about the
agent. The index maps each rule to the projects (a hash of their real root, never
the path) that produced evidence for it, with their counts. When a rule first
reaches the threshold, one aggregate of all its evidence so far goes to the global
store; from then on, every piece of evidence for it from any project goes there
too. The index stays in the data dir: a project's committed file never learns
which other projects exist.
"""

from __future__ import annotations

import os
import time

from metacog import fastjson, paths
from metacog.fsutil import atomic_write, locked
from metacog.learning import store
from metacog.learning.detectors import RULES

INDEX_NAME = "learning-index.json"
INDEX_SCHEMA = 1
PROJECTS_CAP = 200  # per rule; the least recently active go first


def index_path() -> str:
    return os.path.join(paths.data_dir(), INDEX_NAME)


def project_hash(root: str) -> str:
    return store.short_hash(os.path.realpath(root))


def _load(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            index = fastjson.loads(fh.read())
    except FileNotFoundError:
        return {"v": INDEX_SCHEMA, "rules": {}}
    except (OSError, ValueError):
        index = None
    if not isinstance(index, dict) or index.get("v") != INDEX_SCHEMA or not isinstance(index.get("rules"), dict):
        try:  # kept for `metacog doctor`, never silently overwritten
            os.replace(path, f"{path}.corrupt-{int(time.time())}")
        except OSError:
            pass
        return {"v": INDEX_SCHEMA, "rules": {}}
    return index


def _entry(rules: dict, rule: str) -> dict:
    entry = rules.get(rule)
    if not isinstance(entry, dict) or not isinstance(entry.get("projects"), dict):
        entry = rules[rule] = {"promoted": False, "projects": {}}
    return entry


def _valid(tally: object) -> bool:
    return (isinstance(tally, list) and len(tally) == 4
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in tally))


def record(root: str, records: list[dict], promote_projects: int) -> list[dict]:
    """Count one session's evidence for its project; return what goes to the global store."""
    if not root or not records:
        return []
    project = project_hash(root)
    path = index_path()
    to_global: list[dict] = []
    with locked(path, timeout=5.0):
        index = _load(path)
        rules = index["rules"]
        touched: dict[str, list[dict]] = {}
        for rec in records:
            rule = rec["rule"]
            if rule not in RULES:
                continue
            entry = _entry(rules, rule)
            tally = entry["projects"].get(project)
            if not _valid(tally):
                tally = entry["projects"][project] = [0, 0, rec["at"], rec["at"]]
            tally[1 if rec["type"] == "suppression" else 0] += 1
            tally[2], tally[3] = min(tally[2], rec["at"]), max(tally[3], rec["at"])
            touched.setdefault(rule, []).append(rec)
        for rule, recs in touched.items():
            entry = rules[rule]
            projects = {k: v for k, v in entry["projects"].items() if _valid(v)}
            if len(projects) > PROJECTS_CAP:
                keep = sorted(projects, key=lambda k: projects[k][3])[-PROJECTS_CAP:]
                projects = {k: projects[k] for k in keep}
            entry["projects"] = projects
            if entry.get("promoted") is True:
                to_global.extend(recs)
            elif sum(1 for t in projects.values() if t[0] > 0) >= promote_projects:
                entry["promoted"] = True
                tallies = list(projects.values())
                to_global.append({
                    "v": store.SCHEMA, "type": store.AGGREGATE, "rule": rule,
                    "detections": int(sum(t[0] for t in tallies)),
                    "suppressions": int(sum(t[1] for t in tallies)),
                    "first": min(t[2] for t in tallies), "last": max(t[3] for t in tallies)})
        atomic_write(path, fastjson.dumps(index))
    return to_global


def forget(rule: str, root: str = "") -> None:
    """Forgotten globally (no root), a rule must earn its promotion again from scratch;
    forgotten in one project, that project's contribution to it is dropped."""
    path = index_path()
    if not os.path.exists(path):
        return
    with locked(path, timeout=5.0):
        index = _load(path)
        rules = index["rules"]
        if root:
            entry = rules.get(rule)
            changed = isinstance(entry, dict) and isinstance(entry.get("projects"), dict) and \
                entry["projects"].pop(project_hash(root), None) is not None
        else:
            changed = rules.pop(rule, None) is not None
        if changed:
            atomic_write(path, fastjson.dumps(index))
