"""What every command shares: the one expected-error type, and small display helpers.

Imports nothing of the CLI framework, so the helpers are testable on their own.
"""

from __future__ import annotations

import difflib
import os
import time

MESSAGE_CAP = 600  # characters of a one-line error: room for two paths and the fix


class CliError(Exception):
    """An expected failure: one line for the person (what is wrong, what to do), an exit code.

    The line is capped: a message quoting what the person typed once echoed a 131 KB argument.
    """

    def __init__(self, message: str, code: int = 1) -> None:
        message = one_line(message, MESSAGE_CAP)
        super().__init__(message)
        self.message = message
        self.code = code


def inside_claude_code() -> bool:
    """Whether the person runs this as the /metacog slash command: hooks/cli.sh, its
    launcher, sets both variables, which a terminal has no reason to hold."""
    return bool(os.environ.get("CLAUDE_PLUGIN_ROOT") and os.environ.get("CLAUDE_PLUGIN_DATA"))


def command(words: str) -> str:
    """`metacog WORDS` as the person runs it where they are: `/metacog WORDS` inside Claude Code."""
    return f"{'/' if inside_claude_code() else ''}metacog {words}".rstrip()


def closest(word: str, choices: list[str], n: int = 3) -> list[str]:
    """The choices nearest to `word`: close spellings first, then ones that contain it."""
    found = difflib.get_close_matches(word, choices, n=n, cutoff=0.5)
    for choice in choices:
        if len(found) >= n:
            break
        if word and word.lower() in choice.lower() and choice not in found:
            found.append(choice)
    return found


def one_line(text: object, cap: int = 300) -> str:
    """Any text folded onto one line and capped (exception messages can be long)."""
    folded = " ".join(str(text)[: cap * 4].split())
    return folded if len(folded) <= cap else folded[: cap - 1] + "…"


def ago(ts: object, now: float | None = None) -> str:
    """'3 min ago', 'just now', '2 days ago'; '-' when there is no time."""
    if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts <= 0:
        return "-"
    delta = (time.time() if now is None else now) - ts
    if delta < 0:
        return "just now"
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "min")):
        if delta >= size:
            count = int(delta // size)
            plural = "s" if count > 1 and unit != "min" else ""
            return f"{count} {unit}{plural} ago"
    return "just now"


def log_bug(exc: BaseException, doing: str) -> str:
    """Log a traceback to the state dir's metacog.log (the log `metacog doctor` reads);
    ' (traceback in PATH)' for the person, or '' if even that failed. Never raises."""
    try:
        import traceback

        from metacog import paths
        from metacog.fsutil import log_error

        state_dir = paths.state_dir()
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        log_error(state_dir, f"cli failed: {one_line(doing, 200)}: {detail}")
        return f" (traceback in {os.path.join(state_dir, 'metacog.log')})"
    except Exception:  # noqa: BLE001 - the caller's message is still shown
        return ""
