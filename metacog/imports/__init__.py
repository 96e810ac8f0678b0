"""The import index: which files of a repository import which modules, kept fresh cheaply.

Built once per repository (a `git ls-files` listing, else a bounded walk) and stored under
the state dir (metacog/imports/index.py); each later edit refreshes it within the
sense's budget. One module per language parses source text into import keys.

An import key says what one statement imports, in a form a file can be matched against:
`p:a.b` a Python module, `p:a.b:c,d` `from a.b import c, d` (lower-case names only: they
may be submodules, classes and constants cannot), relative imports resolved from the
project root; `j:dir/x` a JS/TS path resolved against the importer, extension and
`/index` dropped; `b:x/y` a bare or `@/`-aliased JS/TS specifier; `g:module/pkg` a Go
package; `r:src/a/b` a Rust module file. `names_for` gives what a file is imported as.
"""

from __future__ import annotations

import os
import time

from metacog.fsutil import ensure_dir, locked, log_error
from metacog.imports.index import SCHEMA, Index, collect_garbage, discard, file_stamps, path_for
from metacog.imports.javascript import jnorm
from metacog.imports.keys import kind, names_for, parse

__all__ = ["SCHEMA", "Index", "importers", "jnorm", "kind", "names_for", "parse", "path_for"]

FIRST_S = 1.5  # the first index; under the 2 s session lock timeout (fsutil.locked)
RETRY_S = 24 * 3600  # a repository with more files than max_files is tried again after this
SWEEP_SHARE = 0.5  # of the budget, for stat-ing files; loading, parsing and asking take the rest
RESUME_SHARE = 0.6  # of the budget, for going on with an index the first edit could not finish
_kept: dict[
    str, Index
] = {}  # the last index asked, for the next edit in the same (resident) process


def importers(
    root: str,
    rel: str,
    state_dir: str,
    budget_s: float,
    max_files: int,
    start: float | None = None,
    first_s: float = FIRST_S,
) -> list[str] | None:
    """The files of `root` that import `rel`, sorted; None when that cannot be known in time.

    The first call for a repository builds the index within `first_s`; a build that did
    not finish goes on in later calls within `budget_s` each, silent until complete.
    Afterwards each call refreshes the index and answers within `budget_s` of `start`,
    or answers None.
    """
    start = time.perf_counter() if start is None else start
    names = names_for(rel, root)
    if not names:
        return None
    path = path_for(state_dir, root)
    try:
        return _importers(root, rel, path, names, start, budget_s, max_files, first_s)
    except Exception as exc:  # noqa: BLE001 - logged; the index is built again
        # A file that loaded but is not what it says (a damaged line read only now).
        log_error(
            state_dir,
            f"spatial: the import index was unreadable ({type(exc).__name__}): built again",
        )
        _kept.clear()
        for part in (path, path + ".journal"):
            discard(part)
    return _importers(root, rel, path, names, start, budget_s, max_files, first_s)


def _importers(
    root: str,
    rel: str,
    path: str,
    names: list[str],
    start: float,
    budget_s: float,
    max_files: int,
    first_s: float,
) -> list[str] | None:
    index = _load(root, path)
    now = time.time()
    if index.state == "too_big" and now - index.made < RETRY_S and max_files <= index.max_files:
        return None
    deadline = start + budget_s
    if index.state != "ok":
        # The first index gets first_s; one that did not finish goes on within the budget,
        # leaving time to save what it did.
        work_until = start + (budget_s * RESUME_SHARE if index.state == "partial" else first_s)
        deadline = max(deadline, work_until)
        ensure_dir(os.path.dirname(path))
        try:
            with locked(path, timeout=0):  # another process is building it: silent meanwhile
                if index.stamps != file_stamps(path):
                    index = _load(root, path)  # it changed while we were loading
                if index.state == "partial":
                    index.resume(work_until)
                elif index.state != "ok":
                    collect_garbage(os.path.dirname(path), now)
                    index.build(work_until, max_files, now)
                if index.dirty:
                    index.save(held=True)
        except TimeoutError:
            return None
        if index.state != "ok":
            return None
    fresh = index.refresh(deadline, start + budget_s * SWEEP_SHARE, rel)
    if index.dirty:
        index.save()
    if not fresh:
        return None
    found = index.importers(names, rel)
    return None if time.perf_counter() > deadline else found


def _load(root: str, path: str) -> Index:
    """The index as stored, or as this process last left it while the file has not
    changed since (no other process wrote it): a resident process does not read and
    parse the whole file again at every edit. One is kept: the repository edited last."""
    index = _kept.pop(path, None)
    if index is None or index.root != root or index.stamps != file_stamps(path):
        index = Index.load(root, path)
    _kept.clear()
    _kept[path] = index
    return index
