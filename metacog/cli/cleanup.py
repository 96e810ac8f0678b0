"""`metacog cleanup`: remove every file metacog keeps outside projects (after an uninstall).

`claude plugin uninstall metacog` removes the plugin and its data folder (the runtime);
metacog's own folders (state, learned rules, config) stay, and so does each project's
`.claude/metacog-learnings.jsonl` and `.claude/metacog.toml`: those belong to the
repository (meant to be committed and shared), so they are listed, never removed.
"""

from __future__ import annotations

import os
import shutil

from metacog import paths
from metacog.cli.common import CliError


def targets() -> list[str]:
    """The folders metacog writes outside projects, those that exist."""
    return [path for path in dict.fromkeys(paths.dirs().values()) if os.path.lexists(path)]


def run(yes: bool) -> str:
    found = targets()
    keep = (
        "Left in each project (the repository's, meant to be committed): .claude/metacog-learnings.jsonl "
        "and .claude/metacog.toml; delete them there if the team no longer wants them."
    )
    if not found:
        return f"Nothing of metacog's own is left outside projects. {keep}"
    if not yes:
        return (
            "Would remove: "
            + ", ".join(found)
            + f". Run `metacog cleanup --yes` to remove them. {keep}"
        )
    for path in found:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except OSError as exc:
            raise CliError(
                f"cannot remove {path}: {exc.strerror or exc}; remove it by hand (rm -r {path})"
            ) from None
    return "Removed: " + ", ".join(found) + f". {keep}"
