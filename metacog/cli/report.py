"""`metacog report [PATH…]`: the replay engine over a person's history, offline and read-only."""

from __future__ import annotations

import os
import sys

from metacog.cli.common import CliError, command, one_line


def files(paths: list[str]) -> list[str]:
    """The transcripts to read: those given (files, or folders searched for .jsonl), else
    every session under Claude Code's projects folder."""
    from metacog.report import sources

    roots = paths or [sources.projects_folder()]
    for root in roots:
        if not os.path.exists(root):
            if not paths:
                raise CliError(
                    f"no Claude Code sessions found: {root} does not exist; pass transcript files "
                    f"or folders, e.g. `{command('report ~/path/to/transcripts')}`",
                    code=2,
                )
            raise CliError(
                f"no such file or folder: {root}; pass transcripts (.jsonl) or folders holding them",
                code=2,
            )
    found = list(sources.walk(roots))
    if not found:
        raise CliError(
            f"no transcripts (.jsonl) in {', '.join(roots)}; pass a folder of Claude Code sessions, "
            "e.g. ~/.claude/projects",
            code=2,
        )
    return found


def since_of(text: str | None) -> float | None:
    if text is None:
        return None
    from metacog.report import sources

    try:
        return sources.parse_since(text)
    except ValueError:
        raise CliError(
            f"--since {text!r} is not a date; use YYYY-MM-DD (or an ISO time, 2026-01-31T09:00)",
            code=2,
        ) from None


def project_of(text: str | None) -> str:
    if text is None:
        return ""
    path = os.path.abspath(os.path.expanduser(text))
    if not text.strip():
        raise CliError(
            "--project needs a folder: the project's root, as its sessions ran in it", code=2
        )
    return path


def run(paths: list[str], since: str | None, project: str | None, html: str | None) -> dict:
    from metacog import report
    from metacog.report import sources, terminal

    listed = files(paths)
    stamp = since_of(since)
    where = project_of(project)
    page_path = None
    if html is not None:
        page_path = os.path.abspath(os.path.expanduser(html))
        if os.path.isdir(page_path) or not os.path.isdir(os.path.dirname(page_path)):
            raise CliError(
                f"--html {html}: give a file in an existing folder, e.g. --html report.html", code=2
            )
    progress = sources.Progress(len(listed))
    try:
        result = report.build(listed, stamp, where, html is not None, progress)
    finally:
        progress.close()
    for line in terminal.skipped_lines(result):
        print(f"metacog: {line}", file=sys.stderr)
    if page_path is not None:
        from metacog.report import page

        try:
            page.write(page_path, result)
        except OSError as exc:
            raise CliError(
                f"cannot write {page_path}: {one_line(exc.strerror or exc)}", code=2
            ) from None
        result["html"] = page_path
    return result
