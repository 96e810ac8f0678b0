"""`metacog forget RULE`: erase a rule's evidence, so it leaves the digest until it recurs."""

from __future__ import annotations

import os

from metacog import config, learning
from metacog.cli.common import CliError, command


def forget(rule_id: str, cwd: str | None = None, scope: str | None = None) -> str:
    """Erase `rule_id` (in `scope`, or everywhere) and say what was done, in one line."""
    if scope is not None and scope not in learning.SCOPES:
        raise CliError(f"unknown scope {scope!r}: use --scope project or --scope global", code=2)
    rule_id = rule_id.strip()
    if not rule_id:
        raise CliError(f"name the rule to forget: `{command('status')}` lists their ids", code=2)
    root = config.project_root(cwd or os.getcwd())
    try:
        erased = learning.forget(rule_id, root, scope)
    except learning.UnknownRule as exc:
        hint = f"; closest: {', '.join(exc.closest)}" if exc.closest else ""
        raise CliError(
            f"unknown rule {rule_id!r}{hint} (`{command('status')}` lists the rules learned)",
            code=2,
        ) from None
    if not erased:
        where = f"the {scope} store" if scope else "any store"
        raise CliError(
            f"rule {rule_id!r} has no evidence in {where}; nothing was changed "
            f"(`{command('status')}` lists the rules learned)",
            code=2,
        )
    where = f"the {scope} store" if scope else "this project's and the global store"
    records = "record" if erased == 1 else "records"
    return (
        f"Forgot {rule_id}: {erased} {records} of evidence erased from {where}. "
        "It leaves the digest and is learned again only if it recurs."
    )
