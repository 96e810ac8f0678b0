"""The hook boundary: stdin in, at most one JSON object out, exit 0 whatever happens.

Every registered event enters here (hooks/run.sh). Heavy imports stay out: this runs
after every tool call, and each millisecond is paid thousands of times a day.
"""

from __future__ import annotations

import os
import sys
import time

STDIN_CAP = 64 * 1024 * 1024  # larger payloads are not parsed: silence, not a stall


def main(exit_process: bool = True, mode: str = "") -> None:
    """Entry point. Never raises, never exits non-zero, prints only the reply.

    `mode` is what hooks/run.sh knows: "session-start", "session-end", "direct" (a call
    the resident process did not take) or "late" (one it did not take in time). At a
    session's start and on a direct or late call, once the reply is out, a resident
    process is started for the calls to come, or a stuck one replaced
    (metacog/resident.py, which decides whether one is needed).
    """
    state_dir = ""
    try:
        if os.environ.get("METACOG_DISABLE") == "1":
            return
        from metacog import paths

        state_dir = paths.state_dir()
        raw = sys.stdin.buffer.read(STDIN_CAP + 1)
        reply = handle(raw, state_dir=state_dir)
        if reply:
            sys.stdout.write(reply)
            sys.stdout.flush()
        if mode in ("session-start", "direct", "late"):
            from metacog import resident

            resident.ensure(late=mode == "late")
    except BaseException as exc:  # noqa: BLE001 - the one place every failure ends up
        log_failure(state_dir, exc)
    finally:
        if exit_process:
            # Skip interpreter teardown: the reply is flushed, nothing else is pending.
            os._exit(0)


def handle(raw: bytes, state_dir: str, now: float | None = None) -> str:
    """The reply (a JSON text, or '' for silence) to one hook payload."""
    if len(raw) > STDIN_CAP:
        return ""
    import json

    from metacog import handlers
    from metacog.event import Event

    try:
        payload = json.loads(raw)
    except Exception:  # noqa: BLE001 - a hostile payload may raise RecursionError, MemoryError, ...
        return ""
    if not isinstance(payload, dict):
        return ""
    handler = handlers.HANDLERS.get(payload.get("hook_event_name"))
    if handler is None:
        return ""
    reply = handler(Event(payload, len(raw)), state_dir, time.time() if now is None else now)
    return json.dumps(reply, separators=(",", ":")) if reply else ""


def log_failure(state_dir: str, exc: BaseException) -> None:
    """The one error boundary, for the direct hook and the resident process alike: the
    end of the traceback to metacog.log. Never raises."""
    try:
        import traceback

        from metacog.fsutil import log_error, strict

        strict("hook", exc)
        if not state_dir:
            from metacog import paths

            state_dir = paths.state_dir()
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
        log_error(state_dir, f"hook failed: {type(exc).__name__}: {detail}")
    except BaseException:  # noqa: BLE001, S110 - nowhere left to report to
        pass
