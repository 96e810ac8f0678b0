"""`metacog replay FILE`: the replay engine over a recorded transcript, from the command line."""

from __future__ import annotations

import copy
import json
import os
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from clitest import cli, one_line_error

import metacog.replay
from metacog.cli import replay as replay_cli

SAMPLE = Path(__file__).resolve().parent / "fixtures" / "transcript-sample-2.1.328.jsonl"
SAMPLE_LINES = [json.loads(line) for line in SAMPLE.read_text().splitlines()]


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a scratch folder: replay reads the settings of the project it runs in."""
    monkeypatch.chdir(tmp_path)


def looping_transcript(path: Path, failures: int) -> Path:
    """The captured prompt, then the captured failing Bash call and its error `failures` times, 10 s apart."""
    prompt = next(
        e
        for e in SAMPLE_LINES
        if e.get("type") == "user" and isinstance(e["message"]["content"], str)
    )
    call = next(
        e
        for e in SAMPLE_LINES
        if e.get("type") == "assistant"
        and e["message"]["content"][0].get("input", {}).get("command") == "python3 -c 'print(1/0)'"
    )
    result = next(
        e
        for e in SAMPLE_LINES
        if e.get("type") == "user"
        and isinstance(e["message"]["content"], list)
        and e["message"]["content"][0].get("tool_use_id") == call["message"]["content"][0]["id"]
    )
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    lines = [prompt]
    for n in range(failures):
        stamp = (start + timedelta(seconds=10 * n)).isoformat().replace("+00:00", "Z")
        pair = copy.deepcopy([call, result])
        pair[0]["message"]["content"][0]["id"] = pair[1]["message"]["content"][0]["tool_use_id"] = (
            f"toolu_loop{n}"
        )
        pair[0]["message"]["id"] = f"msg_loop{n}"  # each attempt is the model's next response
        pair[0]["timestamp"] = pair[1]["timestamp"] = stamp
        lines.extend(pair)
    path.write_text("".join(json.dumps(entry) + "\n" for entry in lines))
    return path


def test_replay_of_the_captured_transcript_json() -> None:
    result = cli("replay", str(SAMPLE), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) >= {"file", "tool_calls", "signals", "per_sense", "per_100_calls"}
    assert report["file"] == str(SAMPLE) and report["tool_calls"] > 0
    human = cli("replay", str(SAMPLE))
    assert human.exit_code == 0 and human.stdout.startswith(
        f"{SAMPLE}: {report['tool_calls']} tool calls"
    )


def test_replay_summary_and_signal_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = looping_transcript(tmp_path / "t.jsonl", 200)
    report = json.loads(cli("replay", str(path), "--json").stdout)
    calls, signals = report["tool_calls"], report["signals"]
    assert calls == 200 and report["per_sense"]["nociception"] > 0
    monkeypatch.setattr(replay_cli, "SIGNALS_SHOWN", 3)
    result = cli("replay", str(path))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # small file: no bar
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == f"{path}: 200 tool calls, {len(signals)} signals ({len(signals) / 2:.1f} per 100 calls)"
    )
    noci = report["per_sense"]["nociception"]
    assert lines[1].split() == [
        "nociception",
        str(noci),
        f"({noci / 2:.1f}",
        "per",
        "100",
        "calls)",
    ]
    first = signals[0]
    assert (first["call"], first["sense"]) == (3, "nociception")
    assert f"call 3  nociception: {first['text'][:60]}" in result.stdout
    assert f"… and {len(signals) - 3} more (--json lists them all)" in result.stdout


def test_replay_uses_the_effective_settings(tmp_path: Path) -> None:
    path = looping_transcript(tmp_path / "t.jsonl", 20)
    assert json.loads(cli("replay", str(path), "--json").stdout)["per_sense"]["nociception"] > 0
    assert cli("config", "set", "nociception.enabled", "false").exit_code == 0
    assert json.loads(cli("replay", str(path), "--json").stdout)["per_sense"]["nociception"] == 0


def test_progress_bar_on_large_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay_cli, "BAR_FROM_BYTES", 1)
    path = looping_transcript(tmp_path / "t.jsonl", 20)
    result = cli("replay", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tool_calls"] == 20  # the bar stays off stdout
    assert "replaying t.jsonl" in result.stderr


def test_bar_reports_progress_in_steps() -> None:
    bar = replay_cli.Bar("x")
    bar(3, 10)
    bar(7, 10)
    bar(7, 10)
    assert bar.done == 7 and bar.bar.pos == 7
    bar.close()


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        pytest.param(lambda p: None, "no such file", id="missing"),
        pytest.param(lambda p: p.mkdir(), "is a folder", id="folder"),
    ],
)
def test_unreadable_inputs(tmp_path: Path, make: object, expected: str) -> None:
    path = tmp_path / "t.jsonl"
    make(path)
    assert expected in one_line_error(cli("replay", str(path)))


@contextmanager
def fifo(path: Path) -> Iterator[Path]:
    """A FIFO at `path` whose writer comes and goes at once if anyone opens it to read.

    Code that opens it blocks until that writer, then reads an empty file: a refusal
    that never opens it keeps the writer away, and the test never hangs either way.
    """
    os.mkfifo(path)
    stop = threading.Event()

    def writer() -> None:
        while not stop.wait(0.01):
            try:
                os.close(
                    os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                )  # ENXIO until a reader opens it
                return
            except OSError:
                continue

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(5)


@pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not os.path.exists("/dev/null"), reason="needs FIFOs and /dev/null"
)
def test_special_files_are_refused_in_one_line(tmp_path: Path) -> None:
    with fifo(tmp_path / "t.jsonl") as path:
        assert "is not a regular file" in one_line_error(cli("replay", str(path)), code=2)
    for device in ("/dev/null", "/dev/zero"):
        link = tmp_path / f"{Path(device).name}.jsonl"
        link.symlink_to(device)
        assert "is not a regular file" in one_line_error(cli("replay", str(link)), code=2)
    assert "is not a regular file" in one_line_error(cli("replay", "/dev/null"), code=2)


@pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not os.path.exists("/dev/null"), reason="needs FIFOs and /dev/null"
)
def test_the_engine_refuses_special_files_too(tmp_path: Path) -> None:
    with (
        fifo(tmp_path / "t.jsonl") as path,
        pytest.raises(ValueError, match="is a FIFO, not a transcript file"),
    ):
        metacog.replay.replay(str(path))
    with pytest.raises(ValueError, match="is a device, not a transcript file"):
        metacog.replay.replay("/dev/null")


def test_files_over_the_cap_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = looping_transcript(tmp_path / "t.jsonl", 3)
    monkeypatch.setattr(metacog.replay, "MAX_BYTES", path.stat().st_size - 1)
    with pytest.raises(ValueError, match="replay reads transcripts of up to"):
        metacog.replay.replay(str(path))
    assert "replay reads transcripts of up to" in one_line_error(cli("replay", str(path)), code=2)
    monkeypatch.setattr(metacog.replay, "MAX_BYTES", path.stat().st_size)
    assert metacog.replay.replay(str(path))["tool_calls"] == 3


def test_the_engine_streams_lines_and_reports_bytes(tmp_path: Path) -> None:
    path = looping_transcript(tmp_path / "t.jsonl", 20)
    text = path.read_text().replace("\n", "\r\n").rstrip("\r\n")  # CRLF, and no newline at the end
    path.write_text(text, newline="")
    reports: list[tuple[int, int]] = []
    result = metacog.replay.replay(
        str(path), progress=lambda done, total: reports.append((done, total))
    )
    assert result["tool_calls"] == 20 and result["per_sense"]["nociception"] > 0
    size = path.stat().st_size
    assert reports[-1] == (size, size) and all(total == size for _, total in reports)
    assert [done for done, _ in reports] == sorted({done for done, _ in reports})


def test_the_docstring_names_no_setting_nothing_reads() -> None:
    assert "METACOG_REPLAY_CONFIG" not in (metacog.replay.replay.__doc__ or "")


def test_engine_errors_become_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: str, cfg: object = None, progress: object = None) -> dict:
        raise ValueError("line 3 is not JSON")

    # The engine skips what it cannot parse, so no file makes it raise today; the CLI's
    # promise (one line, not a traceback) is kept for when it does.
    monkeypatch.setattr(metacog.replay, "replay", broken)
    path = tmp_path / "t.jsonl"
    path.write_text("x")
    assert "is not a Claude Code transcript (line 3 is not JSON)" in one_line_error(
        cli("replay", str(path))
    )


def test_replay_leaves_the_persons_state_alone(isolated_home: Path) -> None:
    assert cli("replay", str(SAMPLE), "--json").exit_code == 0
    assert not (isolated_home / "state" / "sessions").exists()


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(random.Random(7).randbytes(64 * 1024), id="random-bytes"),
        pytest.param(b"", id="empty"),
        pytest.param(b"hello\nworld\n", id="text"),
        pytest.param(
            b'{"a": 1}\n[{"type": "user"}]\n"type"\n{"type": "user"\n', id="json-but-no-entry"
        ),
    ],
)
@pytest.mark.parametrize("as_json", [False, True], ids=["human", "json"])
def test_a_file_without_one_transcript_entry_is_refused(
    tmp_path: Path, content: bytes, as_json: bool
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    result = cli("replay", str(path), *(["--json"] if as_json else []))
    assert result.stdout == ""
    line = one_line_error(result)
    assert f"{path} is not a Claude Code transcript" in line and "~/.claude/projects/" in line


def test_a_transcript_with_no_tool_calls_replays_to_zero(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    summary = {"type": "summary", "summary": "Fix the build", "leafUuid": "0b6f2d3e"}
    path.write_bytes(
        b"\x00\xff garbage\n" + json.dumps(summary).encode() + b"\n"
    )  # one entry is enough
    result = cli("replay", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == f"{path}: 0 tool calls, 0 signals"


def test_a_deeply_nested_line_is_skipped_like_any_bad_line(tmp_path) -> None:
    from metacog.replay import replay

    path = tmp_path / "deep.jsonl"
    path.write_text('{"a":' * 100_000 + "1" + "}" * 100_000 + "\n")
    assert replay(str(path))["tool_calls"] == 0


def test_replay_never_hears_the_rules_learned_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay runs the senses as of that session: today's learned rules (the project's
    learnings file, the global store) stay out, even where the project's settings turn
    learning on, and nothing is written to them."""
    import learningtest
    from learningtest import DAY, LOOP, project_records

    from metacog import learning

    root = learningtest.git_project(tmp_path, "proj")
    t0 = (
        datetime(2026, 11, 29, tzinfo=timezone.utc).timestamp() - 10 * DAY
    )  # days before its prompt
    for n in range(4):  # an error loop per session until the digest carries the rule
        learningtest.session(root, f"s{n}", t0 + n * DAY, LOOP)
        if learning.digest_once(
            root, f"probe{n}", learningtest.state_dir(), learningtest.cfg(), t0 + 5 * DAY
        ):
            break
    else:
        pytest.fail("no rule was learned to leave out")
    path = looping_transcript(tmp_path / "t.jsonl", 3)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps({**entry, "cwd": root}) + "\n" for entry in lines))
    stored = project_records(root)

    heard = [s["text"] for s in metacog.replay.replay(str(path))["signals"]]
    assert not [t for t in heard if "lessons from earlier sessions" in t], heard
    assert heard and all("same error" in t for t in heard), heard
    assert project_records(root) == stored
    # Nor where the transcript's project turns learning on in its own settings.
    settings = Path(root) / ".claude" / "metacog.toml"
    settings.write_text("[learning]\nenabled = true\n")
    heard = [s["text"] for s in metacog.replay.replay(str(path))["signals"]]
    assert not [t for t in heard if "lessons from earlier sessions" in t], heard
    assert heard and all("same error" in t for t in heard), heard
    assert project_records(root) == stored
    # The same replay with learning left on hears today's digest: what the default prevents.
    monkeypatch.setattr(metacog.replay, "NO_LEARNING", {})
    heard = [s["text"] for s in metacog.replay.replay(str(path))["signals"]]
    assert [t for t in heard if "lessons from earlier sessions" in t], heard
