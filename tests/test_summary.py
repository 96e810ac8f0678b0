"""metacog.summary: the session's aggregates count work, not waiting, asked-for repeats or prose edits."""

from __future__ import annotations

from pathlib import Path

from hooktest import T0, bash, edit, prompt, read, send, texts


def test_the_session_summary_counts_work_not_waiting_nor_requested_repeats(
    isolated_home: Path,
) -> None:
    import json

    send(prompt("run the flaky test 5 times and tell me how often it fails"), now=T0)
    send(bash("echo first"), now=T0 + 45 * 60)  # the person took 45 minutes to come back
    for i in range(5):
        send(bash("pytest -k flaky"), now=T0 + 45 * 60 + 10 * (i + 1))
    [path] = (isolated_home / "state" / "sessions").glob("*.json")
    summary = json.loads(path.read_text())["summary"]
    assert summary["max_repeat"] == 0
    assert summary["max_minutes_between_prompts"] < 2


def test_the_summary_counts_code_edits_and_work_on_what_the_request_named(
    isolated_home: Path,
) -> None:
    import json

    texts(
        [
            prompt("Fix parse_header in parser.py"),
            read("/home/dev/project/src/parser.py"),
            edit("/home/dev/project/src/parser.py", 1),
            edit("/home/dev/project/docs/notes.md", 2),
            bash("ls"),
        ]
    )
    [path] = (isolated_home / "state" / "sessions").glob("*.json")
    summary = json.loads(path.read_text())["summary"]
    assert summary["code_edits"] == 1  # the Markdown edit is not code
    assert summary["tracked_calls"] == 4  # every call from the read of parser.py on
