"""Promotion from a project to the global store, through a private index in the data dir.

A pattern one repository keeps hitting says something about that repository; one
that shows up in `promote_projects` different projects says something about the
agent. The index maps each rule to the projects (a hash of their identity, never
the path or url; see `identity`) that produced evidence for it, with their counts. When a rule first
reaches the threshold, one aggregate of all its evidence so far goes to the global
store; from then on, every piece of evidence for it from any project goes there
too. The index stays in the data dir: a project's committed file never learns
which other projects exist.
"""

from __future__ import annotations

import math
import os

from metacog import paths
from metacog.fsutil import atomic_write, dumps, locked, read_capped, read_json, set_aside
from metacog.learning import store
from metacog.learning.detectors import RULES

INDEX_NAME = "learning-index.json"
CONFIG_CAP = 64 * 1024  # a git config is a few hundred bytes
INDEX_SCHEMA = 1
PROJECTS_CAP = 200  # per rule; the least recently active go first
INDEX_CAP = 8 << 20  # bytes; 12 rules x 200 projects is about 200 KiB


def index_path() -> str:
    return os.path.join(paths.data_dir(), INDEX_NAME)


def project_hash(root: str) -> str:
    return store.short_hash(identity(root))


def _legacy_hash(root: str) -> str:
    # Earlier versions named a project by its real root; such entries are merged into the new name.
    return store.short_hash(os.path.realpath(root))


def identity(root: str) -> str:
    """What names the repository checked out at `root`, whichever checkout it is: the
    normalized url of its `origin` remote, else its git common dir, else the real root.

    Two worktrees share one common dir, two clones one origin; both are one project.
    Read from git's files, never by running git: bounded reads of regular files only.
    """
    common = _common_dir(root)
    if common:
        config = read_capped(os.path.join(common, "config"), CONFIG_CAP)
        if len(config) < CONFIG_CAP:  # one cut short might have lost the origin it names
            url = _normal_url(_origin_url(config.decode("utf-8", "replace")), root)
            if url:
                return url
        return os.path.realpath(common)
    return os.path.realpath(root)


def _common_dir(root: str) -> str:
    """`<root>/.git`, or where a `.git` file (a worktree, a submodule) points, then on through
    a worktree's `commondir` to the repository's own git dir; '' if none is found."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        git_dir = dot
    else:
        first = read_capped(dot, 4096).decode("utf-8", "replace").partition("\n")[0]
        if not first.startswith("gitdir:"):
            return ""
        git_dir = os.path.join(root, first[len("gitdir:") :].strip())
    common = (
        read_capped(os.path.join(git_dir, "commondir"), 4096).decode("utf-8", "replace").strip()
    )
    if common:
        git_dir = os.path.join(git_dir, common)
    git_dir = os.path.normpath(git_dir)
    return git_dir if os.path.isdir(git_dir) else ""


def _origin_url(config: str) -> str:
    """The first `url` of `[remote "origin"]` in a git config file, '' if there is none."""
    section = ""
    for raw in config.splitlines():
        line = raw.strip()
        if line.startswith("["):
            header = line[1 : line.find("]")] if "]" in line else ""
            name, _, sub = header.strip().partition(" ")
            section = f"{name.lower()}.{sub.strip()}" if sub else header.strip().lower()
            continue
        key, eq, value = line.partition("=")
        if eq and section in ('remote."origin"', "remote.origin") and key.strip().lower() == "url":
            value = value.strip()
            if value.startswith('"') and value.count('"') >= 2:
                return value[1 : value.index('"', 1)]
            return value.split(" #")[0].split(" ;")[0].strip()
    return ""


def _normal_url(url: str, root: str) -> str:
    """One spelling per remote: scheme, user, password, port, `.git` and case dropped
    (`git@host:Owner/Repo.git` and `https://host/owner/repo` are one repository)."""
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() != "file":
        host, _, path = rest.partition("/")
    elif not sep and ":" in url and "/" not in url.partition(":")[0]:
        host, _, path = url.partition(":")  # scp-like: [user@]host:path
    else:  # a local path: relative ones are relative to the checkout
        path = os.path.normpath(os.path.join(root, rest if sep else url)) if url else ""
        return f"file:{path.removesuffix('.git').rstrip('/')}" if path else ""
    host = host.rpartition("@")[2].partition(":")[0].lower()
    path = path.strip("/").removesuffix(".git").strip("/").lower()
    return f"{host}/{path}" if host and path else ""


def _load(path: str) -> dict:
    try:
        index = read_json(path, INDEX_CAP)
    except FileNotFoundError:
        return {"v": INDEX_SCHEMA, "rules": {}}
    except (
        OSError,
        ValueError,
    ):  # whatever is there instead: cut short, not JSON, a FIFO, a folder
        index = None
    if (
        not isinstance(index, dict)
        or index.get("v") != INDEX_SCHEMA
        or not isinstance(index.get("rules"), dict)
    ):
        set_aside(path)  # kept for `metacog doctor`, never silently overwritten
        return {"v": INDEX_SCHEMA, "rules": {}}
    return index


def _entry(rules: dict, rule: str) -> dict:
    entry = rules.get(rule)
    if not isinstance(entry, dict) or not isinstance(entry.get("projects"), dict):
        entry = rules[rule] = {"promoted": False, "projects": {}}
    return entry


def _tally(entry: dict, project: str, legacy: str, at: float) -> store.Tally:
    """The project's Tally for a rule, its old name's folded in; in the entry until _to_disk."""
    projects = entry["projects"]
    old = projects.pop(legacy, None) if legacy != project else None
    tally = projects.get(project)
    if not isinstance(tally, store.Tally):
        tally = projects[project] = store.Tally.from_list(tally) or store.Tally(0, 0, at, at)
    old = old if isinstance(old, store.Tally) else store.Tally.from_list(old)
    if old is not None:
        tally.add(old)
    return tally


def _projects(entry: dict) -> dict[str, store.Tally]:
    """A rule's valid tallies per project (what a damaged index holds besides is dropped)."""
    out = {}
    for name, value in entry["projects"].items():
        tally = value if isinstance(value, store.Tally) else store.Tally.from_list(value)
        if tally is not None:
            out[name] = tally
    return out


def _to_disk(rules: dict) -> None:
    for entry in rules.values():
        projects = entry.get("projects") if isinstance(entry, dict) else None
        if isinstance(projects, dict):
            for name, value in projects.items():
                if isinstance(value, store.Tally):
                    projects[name] = value.as_list()


def record(
    root: str, records: list[dict], promote_projects: int, superseded: list[dict] | None = None
) -> list[dict]:
    """Count one evaluation's evidence for its project; return what goes to the global store.

    `records` is what the evaluation adds (a retraction counts nothing, and goes where the
    rule's evidence goes); `superseded`, the evidence of an earlier evaluation of the same
    session that it replaces, is uncounted first: a session counts once, however often evaluated.
    """
    if not root or not (records or superseded):
        return []
    project, legacy = project_hash(root), _legacy_hash(root)
    path = index_path()
    to_global: list[dict] = []
    with locked(path, timeout=5.0):
        index = _load(path)
        rules = index["rules"]
        touched: dict[str, list[dict]] = {}
        for rec in superseded or ():
            if rec["rule"] in RULES:
                tally = _tally(_entry(rules, rec["rule"]), project, legacy, rec["at"])
                if rec["type"] == "suppression":
                    tally.suppressions = max(tally.suppressions - 1, 0)
                else:
                    tally.detections = max(tally.detections - 1, 0)
        for rec in records:
            rule = rec["rule"]
            if rule not in RULES:
                continue
            entry = _entry(rules, rule)
            if rec["type"] != store.RETRACTION:
                _tally(entry, project, legacy, rec["at"]).add(store.Tally.of(rec))
            touched.setdefault(rule, []).append(rec)
        for rule, recs in touched.items():
            entry = rules[rule]
            projects = _projects(entry)
            if len(projects) > PROJECTS_CAP:
                keep = sorted(projects, key=lambda k: projects[k].last)[-PROJECTS_CAP:]
                projects = {k: projects[k] for k in keep}
            entry["projects"] = projects
            if entry.get("promoted") is True:
                to_global.extend(recs)
            elif sum(1 for t in projects.values() if t.detections > 0) >= promote_projects:
                entry["promoted"] = True
                total = store.Tally(0, 0, math.inf, -math.inf)
                for t in projects.values():
                    total.add(t)
                to_global.append(total.aggregate(rule))
        _to_disk(rules)
        atomic_write(path, dumps(index), sync_dir=True)
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
            projects = entry.get("projects") if isinstance(entry, dict) else None
            names = (
                {project_hash(root), _legacy_hash(root)} if isinstance(projects, dict) else set()
            )
            removed = [projects.pop(name, None) for name in names]
            changed = any(tally is not None for tally in removed)
        else:
            changed = rules.pop(rule, None) is not None
        if changed:
            atomic_write(path, dumps(index), sync_dir=True)
