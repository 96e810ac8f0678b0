"""metacog's command line (`metacog`, `python -m metacog`, the /metacog slash command).

Never imported by the hook: typer alone costs about 45 ms (FACTS.md), and the hook's
budget is a few. tests/test_cli.py checks that the hook's import graph stays free of it.
"""

from __future__ import annotations

from metacog.cli.app import app, run

__all__ = ["app", "run"]
