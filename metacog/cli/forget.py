"""`metacog forget RULE`: erase a rule's evidence, so it leaves the digest until it recurs."""

from __future__ import annotations

import os

from metacog import config
from metacog.cli.common import CliError, learning

SCOPES = ("project", "global")


def forget(rule_id: str, cwd: str | None = None, scope: str | None = None) -> str:
    """Erase `rule_id` (in `scope`, or everywhere) and say what was done, in one line."""
    if scope is not None and scope not in SCOPES:
        raise CliError(f"unknown scope {scope!r}: use --scope project or --scope global", code=2)
    rule_id = rule_id.strip()
    if not rule_id:
        raise CliError("name the rule to forget: `metacog status` lists their ids", code=2)
    module = learning()
    root = config.project_root(cwd or os.getcwd())
    try:
        erased = module.forget(rule_id, root, scope)
    except module.UnknownRule as exc:
        near = [str(c) for c in getattr(exc, "closest", None) or []]
        hint = f"closest: {', '.join(near)}" if near else "no rule is stored yet"
        where = f" in the {scope} store" if scope else ""
        raise CliError(f"unknown rule {rule_id!r}{where}; {hint} (`metacog status` lists them)") from None
    if not erased:
        where = f"the {scope} store" if scope else "any store"
        raise CliError(f"rule {rule_id!r} has no evidence in {where}; nothing was changed")
    stores = "store" if erased == 1 else "stores"
    return (f"Forgot {rule_id}: its evidence is erased from {erased} {stores}. "
            "It leaves the digest and is learned again only if it recurs.")
