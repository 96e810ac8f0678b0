"""The plugin's data folder: what lives where, for every part that reads or writes it.

Claude Code gives each plugin a data folder ($CLAUDE_PLUGIN_DATA); without one (an inline
plugin, the CLI run by hand) it is INLINE_DATA under $HOME:

  <data>/
    bootstrap.log        BOOTSTRAP_LOG: what the first-run setup did, pip's output on failure
    hook-stderr.log      HOOK_STDERR_LOG: the interpreter's own stderr (a crash before the
                         hook's boundary); run.sh appends, handlers.py rotates it
    runtime/             RUNTIME
      .lock              BUILD_LOCK: held while a runtime is built (two sessions build once)
      .failed            FAILED: the last failed build, JSON {at, version, python, cause,
                         network, retry}; doctor and `bootstrap.py --explain` read it
      .tell              TELL: one systemMessage about that failure, printed once by run.sh
      <version>/         a virtual environment with metacog installed, one per plugin version
        .ready           READY: written last, so its presence means the runtime is whole
        bin/python       PYTHON
        resident/        RESIDENT: the resident process's folder (protocol.SOCKET inside)

hooks/run.sh, hooks/cli.sh and hooks/bootstrap.py cannot import this module (the first two
are shell, the third runs before metacog is installed, with whatever Python is there): they
carry the same names, and tests/test_layout.py checks that they agree.
"""

from __future__ import annotations

import os

PLUGINS_DATA = ".claude/plugins/data"  # under $HOME: one folder per installed plugin
INLINE_DATA = f"{PLUGINS_DATA}/metacog-inline"
DATA_GLOB = f"{PLUGINS_DATA}/metacog-*"  # named metacog-<marketplace> by Claude Code
BOOTSTRAP_LOG = "bootstrap.log"
HOOK_STDERR_LOG = "hook-stderr.log"
RUNTIME = "runtime"
BUILD_LOCK = ".lock"
FAILED = ".failed"
TELL = ".tell"
READY = ".ready"
PYTHON = os.path.join("bin", "python")
RESIDENT = "resident"


def data_dir() -> str:
    """The plugin's data folder, as run.sh finds it."""
    return os.environ.get("CLAUDE_PLUGIN_DATA") or os.path.join(
        os.environ.get("HOME") or "/nonexistent", INLINE_DATA
    )


def runtime_dir(data: str, version: str) -> str:
    return os.path.join(data, RUNTIME, version)


def is_runtime(prefix: str) -> bool:
    """Whether an interpreter's sys.prefix is a whole metacog runtime (not a checkout's venv)."""
    return os.path.exists(os.path.join(prefix, READY))


def data_of_runtime(prefix: str) -> str:
    """`<data>` for a runtime at `<data>/runtime/<version>`."""
    return os.path.dirname(os.path.dirname(os.path.abspath(prefix)))
