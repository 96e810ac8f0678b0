"""`metacog replay FILE`: run the senses over a recorded transcript, offline."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable

from metacog import replay as engine
from metacog.cli.common import CliError, one_line

BAR_FROM_BYTES = 1 << 20  # smaller transcripts replay in well under a second: no bar
SIGNALS_SHOWN = 50


def check_file(path: str) -> None:
    if not os.path.exists(path):
        raise CliError(
            f"no such file: {path}; pass a transcript (.jsonl), e.g. one under ~/.claude/projects/",
            code=2,
        )
    if os.path.isdir(path):
        raise CliError(f"{path} is a folder; pass one transcript file (.jsonl) inside it", code=2)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise CliError(f"cannot read {path}: {one_line(exc.strerror or exc)}", code=2) from None
    if not stat.S_ISREG(st.st_mode):
        # Reading one would never end (/dev/zero) or wait for a writer forever (a FIFO).
        raise CliError(f"{path} is not a regular file; pass one transcript file (.jsonl)", code=2)
    if st.st_size > engine.MAX_BYTES:
        raise CliError(
            f"{path} holds {st.st_size:,} bytes; replay reads transcripts of up to "
            f"{engine.MAX_BYTES >> 20} MB",
            code=2,
        )
    if not os.access(path, os.R_OK):
        raise CliError(f"cannot read {path}: permission denied", code=2)


def replay(path: str, progress: Callable[[int, int], None] | None = None) -> dict:
    check_file(path)
    try:
        result = engine.replay(path, engine.global_settings(), progress)
    except engine.Unreadable as exc:  # the file changed since check_file; before OSError: it is one
        raise CliError(one_line(exc), code=2) from None
    except (OSError, UnicodeError) as exc:
        raise CliError(
            f"cannot read {path}: {one_line(getattr(exc, 'strerror', None) or exc)}", code=2
        ) from None
    except ValueError as exc:
        raise CliError(
            f"{path} is not a Claude Code transcript ({one_line(exc, 160)})", code=2
        ) from None
    if not result["entries"]:
        # The engine skips every line it cannot use, so any file "replays" to nothing.
        raise CliError(
            f"{path} is not a Claude Code transcript: no line of it is a JSON object with a "
            '"type"; pass a session\'s .jsonl file, e.g. one under ~/.claude/projects/',
            code=2,
        )
    return result


class Bar:
    """A progress bar on stderr, made on the first report (the total is known only then)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            import typer  # its bar draws nothing on a pipe but the label

            self.bar = typer.progressbar(length=max(total, 1), label=self.label, file=sys.stderr)
            self.bar.__enter__()
        step = done - self.done
        if step > 0:
            self.bar.update(step)
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


def run(path: str) -> dict:
    """replay() with a progress bar when the file is large enough to wait for."""
    check_file(path)
    if os.path.getsize(path) < BAR_FROM_BYTES:
        return replay(path)
    bar = Bar(f"replaying {os.path.basename(path)}")
    try:
        return replay(path, bar)
    finally:
        bar.close()


def render(result: dict) -> str:
    calls = result.get("tool_calls", 0)
    signals = result.get("signals") or []
    per_sense = result.get("per_sense") or {}
    per_100 = result.get("per_100_calls") or {}
    rate = f" ({len(signals) * 100 / calls:.1f} per 100 calls)" if calls else ""
    lines = [
        (
            f"{result.get('file', '')}: {calls} tool call{'s' if calls != 1 else ''}, "
            f"{len(signals)} signal{'s' if len(signals) != 1 else ''}{rate}"
        )
    ]
    if per_sense:
        width = max(len(name) for name in per_sense)
        for name, count in per_sense.items():
            rate = per_100.get(name)
            shown = f"  ({rate:.1f} per 100 calls)" if isinstance(rate, (int, float)) else ""
            lines.append(f"  {name:<{width}}  {count}{shown}")
    if signals:
        lines.append("Signals")
        for signal in signals[:SIGNALS_SHOWN]:
            lines.append(
                f"  call {signal.get('call')}  {signal.get('sense')}: "
                f"{one_line(signal.get('text', ''), 200)}"
            )
        if len(signals) > SIGNALS_SHOWN:
            lines.append(f"  … and {len(signals) - SIGNALS_SHOWN} more (--json lists them all)")
    return "\n".join(lines)
