"""`metacog report`: what metacog said (live) and would have said (replay), what loops cost,
whether speaking helped; over transcripts built from captured lines, never hand-written shapes."""

from __future__ import annotations

import copy
import io
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from clitest import cli, one_line_error

from metacog.report import episodes, sources, terminal

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LIVE = FIXTURES / "transcript-live-2.1.328.jsonl"
SAMPLE = [
    json.loads(line)
    for line in (FIXTURES / "transcript-sample-2.1.328.jsonl").read_text().splitlines()
]


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _pair(command: str) -> list[dict]:
    call = next(
        e
        for e in SAMPLE
        if e.get("type") == "assistant"
        and e["message"]["content"][0].get("input", {}).get("command") == command
    )
    result = next(
        e
        for e in SAMPLE
        if e.get("type") == "user"
        and isinstance(e["message"]["content"], list)
        and e["message"]["content"][0].get("tool_use_id") == call["message"]["content"][0]["id"]
    )
    return [call, result]


def transcript(
    path: Path, steps: str, cwd: str = "/work/proj", start: datetime | None = None
) -> Path:
    """The captured prompt, then one captured call per letter, 10 s apart: F the failing
    `python3 -c 'print(1/0)'`, R the same command passing, P a passing Bash call on a new
    target each time; each response carries its usage."""
    prompt = next(
        e for e in SAMPLE if e.get("type") == "user" and isinstance(e["message"]["content"], str)
    )
    passing = next(
        e
        for e in SAMPLE
        if e.get("type") == "user"
        and isinstance(e["message"]["content"], list)
        and e["message"]["content"][0].get("is_error") is False
        and isinstance(e.get("toolUseResult"), dict)
        and "stdout" in e["toolUseResult"]
    )
    ok_id = passing["message"]["content"][0]["tool_use_id"]
    ok_call = next(
        e
        for e in SAMPLE
        if e.get("type") == "assistant" and e["message"]["content"][0].get("id") == ok_id
    )
    fail = _pair("python3 -c 'print(1/0)'")
    start = start or datetime(2026, 1, 1, tzinfo=timezone.utc)
    lines = [{**prompt, "cwd": cwd, "timestamp": start.isoformat().replace("+00:00", "Z")}]
    for n, step in enumerate(steps, 1):
        stamp = (start + timedelta(seconds=10 * n)).isoformat().replace("+00:00", "Z")
        pair = copy.deepcopy(fail if step == "F" else [ok_call, passing])
        if step != "F":
            pair[0]["message"]["content"][0]["input"]["command"] = (
                fail[0]["message"]["content"][0]["input"]["command"]
                if step == "R"
                else f"ls src/part{n}"
            )
        pair[0]["message"]["content"][0]["id"] = pair[1]["message"]["content"][0]["tool_use_id"] = (
            f"toolu_{n}"
        )
        pair[0]["message"]["id"] = f"msg_{n}"
        pair[0]["message"]["usage"] = {
            "input_tokens": 100,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 0,
            "output_tokens": 10,
        }
        for entry in pair:
            entry["timestamp"], entry["cwd"] = stamp, cwd
        lines.extend(pair)
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def report(*args: str) -> dict:
    result = cli("report", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_replayed_loop_its_cost_and_the_calls_until_it_ended(tmp_path: Path) -> None:
    path = transcript(tmp_path / "s.jsonl", "PFFFFRP")
    out = report(str(path))
    [session] = out["sessions"]
    assert not session["live"] and session["said"] == []
    assert [s["sense"] for s in session["would_say"]][:1] == ["nociception"]
    [episode] = session["episodes"]
    # Calls are 0-based: the four failures are calls 1-4, it would have spoken after the 3rd
    # (call 3), and call 5 is the same command passing: the loop's end, 2 calls later.
    assert (episode["start"], episode["spoke_at"], episode["side"]) == (1, 3, "silent")
    assert (episode["end"], episode["calls"], episode["calls_after"]) == (5, 4, 2)
    assert (
        episode["seconds"] == 40.0
    )  # from the first failure (t=20 s) to the call that ended it (t=60 s)
    assert episode["tokens"] == 4 * 1110  # the responses that made calls 2 to 5
    totals = out["totals"]
    assert (totals["sessions"], totals["calls"], totals["errors"], totals["episodes"]) == (
        1,
        7,
        4,
        1,
    )
    assert totals["loops_per_100_calls"] == round(100 / 7, 2)
    silent = dict(out["helped"]["silent"])
    assert "would have spoken" in silent.pop("what")
    # Each call carries its response's 1,110 tokens: calls 4 and 5, after it would have spoken.
    assert silent == {
        "episodes": 1,
        "ended": 1,
        "still_looping_at_end": 0,
        "median_calls_after": 2,
        "mean_calls_after": 2,
        "median_tokens_after": 2220,
        "mean_tokens_after": 2220,
    }
    assert episode["tokens_after"] == 2220
    assert out["helped"]["verdict"].startswith(
        "nothing to compare yet: 0 ended loop(s) where metacog spoke"
    )


def test_a_loop_still_running_at_the_end_costs_but_never_counts_as_ended(tmp_path: Path) -> None:
    out = report(str(transcript(tmp_path / "s.jsonl", "PFFFF")))
    [episode] = out["sessions"][0]["episodes"]
    assert not episode["resolved"] and episode["calls_after"] is None and episode["calls"] == 4
    assert (
        out["helped"]["silent"]["still_looping_at_end"] == 1
        and out["helped"]["silent"]["ended"] == 0
    )


def test_what_metacog_said_in_a_live_session(tmp_path: Path) -> None:
    out = report(str(LIVE))
    [session] = out["sessions"]
    assert session["live"] and out["totals"]["live_sessions"] == 1
    [said] = session["said"]
    assert said["sense"] == "nociception" and said["text"].startswith(
        "metacog: the same error 3 times in a row"
    )
    assert said["at"] == 2  # after the third failing `cat notes.txt`
    [episode] = session["episodes"]
    assert (episode["side"], episode["calls_after"]) == ("spoke", 2)
    assert out["per_sense"]["said"]["nociception"] == {
        "spoke": 1,
        "followed": 1,
        "left": 1,
        "left_share": 1.0,
    }
    assert out["per_sense"]["would"] == {}  # a live session's replay is not "would have said"


def test_replayed_calls_carry_what_perception_read_of_them(tmp_path: Path) -> None:
    from metacog.replay import replay

    calls = replay(str(transcript(tmp_path / "s.jsonl", "PFFFRP")))["calls"]
    # The hook's own reading, read back: the failures are obstacles, the first one brought
    # its traceback (new), the same traceback again brought nothing.
    assert [c["obstacle"] for c in calls] == [False, True, True, True, False, False]
    assert calls[1]["gain"] > 0.5 and calls[2]["gain"] == calls[3]["gain"] == 0.0
    assert all(isinstance(c["news"], int) for c in calls)


def _wall(target: str, gain: float, news: int) -> dict:
    return {
        "tool": "Bash",
        "target": target,
        "ok": False,
        "sig": f"{target}: boom",
        "obstacle": True,
        "gain": gain,
        "news": news,
    }


def test_obstacles_that_bring_nothing_new_are_one_loop_whatever_the_command() -> None:
    other = {"tool": "Read", "target": "a.py", "ok": True, "obstacle": False, "gain": 1.0}
    calls = [other] + [_wall(f"cmd{n}", 0.0, 0) for n in range(4)] + [other] * 30
    [loop] = episodes.find(calls, [3])
    assert (loop["start"], loop["last"], loop["members"]) == (1, 4, 4)
    # Its look-alike: each failure of another command brings new specific lines (errors that
    # move): no loop, whatever a sense said.
    moving = [other] + [_wall(f"cmd{n}", 0.8, 2) for n in range(4)] + [other] * 30
    assert episodes.find(moving, [3]) == []
    # Nothing new, but too far apart to be one wall: each stands alone.
    apart = [other]
    for n in range(4):
        apart += [_wall(f"cmd{n}", 0.0, 0)] + [other] * episodes.STALE_GAP
    assert episodes.find(apart, [1 + 2 * (episodes.STALE_GAP + 1)]) == []


def test_a_wall_habit_counts_by_kind_is_one_loop_whichever_call_met_it() -> None:
    # `sleep 240 && gh run view 1`, then `… 2`: each its own command, each never returning.
    # Habit counts them by kind; the report's loop holds them all, with what came between.
    other = {"tool": "Bash", "target": "gh run view", "ok": True, "obstacle": False, "gain": 1.0}
    hung = {**_wall("x", 1.0, 1), "mistake": "hung", "sig": "Command timed out after <dur>"}
    calls = [other] * 3
    for n in range(3):
        calls += [{**hung, "target": f"sleep {60 * (n + 2)} && gh run view {n}"}, other, other]
    [loop] = episodes.find(calls, [9])
    assert (loop["start"], loop["last"], loop["members"]) == (3, 9, 3)
    # Its look-alike: the same kind of wall far apart (other work between) is no loop.
    apart = [other] * 3
    for n in range(3):
        apart += [{**hung, "target": f"npm run dev{n}"}] + [other] * episodes.STALE_GAP
    assert episodes.find(apart, [3 + 2 * (episodes.STALE_GAP + 1)]) == []


def test_the_same_mistake_on_another_file_nearby_goes_on_with_the_loop() -> None:
    # An Edit's old_string not found in one file, again and again, then in the next file and
    # the one after (PackmindHub/context-evaluator: tabs read as spaces, LABELS.jsonl): one
    # mistake to a person, though Nociception's identity for it is one per file.
    other = {"tool": "Read", "target": "a.tsx", "ok": True, "obstacle": False, "gain": 1.0}
    miss = {**_wall("a.tsx", 1.0, 3), "tool": "Edit", "mistake": "old-string-mismatch"}
    miss["sig"] = "String to replace not found in file."
    again = {**miss, "gain": 0.0, "news": 0}
    head = [other, miss, other, again, other, again]
    calls = head + [other] * 5 + [{**miss, "target": "b.tsx"}] + [other] * 5
    calls += [{**miss, "target": "c.tsx"}] + [other] * 30
    [loop] = episodes.find(calls, [3])
    assert (loop["start"], loop["last"], loop["members"]) == (1, 17, 5)
    # Its look-alike: the same mistake on another file after a stretch of other work (as far
    # as a stale obstacle may lie) is a new slip, not the same loop.
    apart = head + [other] * episodes.STALE_GAP + [{**miss, "target": "b.tsx"}] + [other] * 30
    [loop] = episodes.find(apart, [3])
    assert (loop["start"], loop["last"], loop["members"]) == (1, 5, 3)


def test_a_stale_member_passing_later_does_not_end_the_loop() -> None:
    # The loop is `make` failing the same way; a probe that brought nothing new joined it,
    # and the probe passing later solves nothing: the loop goes on to make's next failure.
    other = {"tool": "Read", "target": "a.py", "ok": True, "obstacle": False, "gain": 1.0}
    make = {"tool": "Bash", "target": "make", "ok": False, "sig": "boom", "obstacle": True}
    make = {**make, "gain": 1.0, "news": 1}
    probe = _wall("curl x", 0.0, 0)
    calls = [make, probe, make, {**probe, "ok": True, "obstacle": False}, make, other, other]
    [loop] = episodes.find(calls, [2])
    assert (loop["start"], loop["last"], loop["members"]) == (0, 4, 4)


def test_a_question_that_found_nothing_is_named_so() -> None:
    empty = {"tool": "Grep", "target": "TODO in src", "ok": True, "obstacle": True, "empty": True}
    assert episodes.problem_of(empty) == "nothing found by Grep TODO in src"
    echo = {"tool": "Bash", "target": "python3 probe.py", "ok": True, "obstacle": True}
    assert episodes.problem_of(echo) == "an earlier failure shown by Bash python3 probe.py"
    assert episodes.problem_of({**echo, "obstacle": False}) == "repeated Bash python3 probe.py"


def test_per_sense_left_it_within_ten_calls() -> None:
    calls = [
        {"tool": "Bash", "target": t, "ok": t != "x", "sig": "boom" if t == "x" else ""}
        for t in ("w", "x", "x", "x", "w", "y", "z", "v", "u", "s", "r", "q", "p", "o", "n")
    ]
    assert episodes.left_it(calls, 2) is False  # x fails again at the next call
    assert episodes.left_it(calls, 3) is True  # x never comes back in the next ten calls
    assert episodes.left_it(calls, 0) is False  # w: done again 4 calls later
    calls[5] = {**calls[3], "ok": True}
    assert episodes.left_it(calls, 3) is True  # x run again and passing: the problem is gone
    calls[13] = dict(calls[1])  # the same error, 10 calls after call 3: still within reach
    assert episodes.left_it(calls, 3) is False
    assert episodes.left_it(calls, 14) is None  # nothing followed


def test_the_comparison_needs_enough_loops_on_both_sides() -> None:
    from metacog.report.figures import MIN_EPISODES, helped

    few = helped({"spoke": [1, 2], "silent": [3, 4, 5]}, {"spoke": 0, "silent": 1}, {})
    assert few["verdict"].startswith("too few loops to tell: 2 where metacog spoke, 3 where")
    assert few["silent"]["episodes"] == 4 and few["silent"]["median_calls_after"] == 4
    many = helped(
        {"spoke": [2] * MIN_EPISODES, "silent": [5] * MIN_EPISODES},
        {"spoke": 0, "silent": 0},
        {"spoke": [1000] * MIN_EPISODES, "silent": [4000] * MIN_EPISODES},
    )
    assert "median 2 calls and 1,000 tokens later" in many["verdict"]
    assert "against 5 calls and 4,000 tokens" in many["verdict"] and "not proof" in many["verdict"]
    assert "would have spoken" in many["silent"]["what"] and "spoke" in many["spoke"]["what"]


def test_terminal_summary_fits_one_screen_numbers_right_aligned(tmp_path: Path) -> None:
    for n in range(6):
        transcript(tmp_path / f"s{n}.jsonl", "PFFFFR" * (n + 1), cwd=f"/work/project{n}")
    result = cli("report", str(tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) <= 30 and max(len(line) for line in lines) <= 90, result.stdout
    assert lines[0].startswith("metacog report: 6 sessions (0 with metacog active), ")
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["sessions", "calls"])
    rows = lines[header : header + 6]
    ends = {len(row) for row in rows}
    assert len(ends) == 1, rows  # every row ends in the right-aligned last column
    assert rows[1].split()[:2] == ["all", "6"]
    assert "… and 2 more projects (--json lists them all)" in result.stdout


def test_unreadable_and_foreign_files_are_skipped_and_counted(tmp_path: Path, monkeypatch) -> None:
    good = transcript(tmp_path / "a.jsonl", "PFFFP")
    (tmp_path / "labels.jsonl").write_text('{"type": "stuck", "start": 3}\n')
    (tmp_path / "empty.jsonl").write_text("")
    big = transcript(tmp_path / "big.jsonl", "P" * 40)
    monkeypatch.setattr("metacog.replay.MAX_BYTES", os.path.getsize(big) - 1)
    result = cli("report", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["files"] == {"listed": 4, "read": 1, "skipped": 2, "empty": 1}
    assert [s["file"] for s in out["sessions"]] == [str(good)]
    errors = result.stderr.splitlines()
    assert errors == [
        f"metacog: skipped {big}: holds {os.path.getsize(big):,} bytes; replay reads transcripts of "
        "up to 0 MB",
        f"metacog: skipped {tmp_path / 'labels.jsonl'}: not a Claude Code transcript "
        "(no user or assistant line)",
    ]


def test_since_and_project_choose_sessions(tmp_path: Path) -> None:
    old = transcript(tmp_path / "old.jsonl", "PFP", cwd="/work/a")
    transcript(tmp_path / "new.jsonl", "PFP", cwd="/work/a/sub")
    transcript(tmp_path / "other.jsonl", "PFP", cwd="/work/ab")
    stamp = datetime(2025, 6, 1).timestamp()
    os.utime(old, (stamp, stamp))
    picked = report(str(tmp_path), "--since", "2025-07-01")
    assert sorted(Path(s["file"]).name for s in picked["sessions"]) == ["new.jsonl", "other.jsonl"]
    picked = report(str(tmp_path), "--project", "/work/a")
    assert sorted(Path(s["file"]).name for s in picked["sessions"]) == ["new.jsonl", "old.jsonl"]
    assert set(picked["projects"]) == {"/work/a", "/work/a/sub"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["no-such-dir"], "no such file or folder: no-such-dir;", id="missing-path"),
        pytest.param(
            [".", "--since", "last tuesday"],
            "--since 'last tuesday' is not a date; use YYYY-MM-DD",
            id="since",
        ),
        pytest.param(
            [".", "--html", "/no/such/folder/r.html"],
            "--html /no/such/folder/r.html: give a file in an existing folder",
            id="html-folder",
        ),
        pytest.param(["empty"], "no transcripts (.jsonl) in empty;", id="no-transcripts"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    transcript(tmp_path / "a.jsonl", "PFP")
    (tmp_path / "empty").mkdir()
    error = one_line_error(cli("report", *args), 2)
    assert message in error, error


def test_default_is_claude_codes_projects_folder(tmp_path: Path, monkeypatch) -> None:
    home = Path(os.environ["HOME"])
    error = one_line_error(cli("report"), 2)
    assert f"no Claude Code sessions found: {home / '.claude' / 'projects'} does not exist" in error
    folder = home / ".claude" / "projects" / "-work-proj"
    folder.mkdir(parents=True)
    transcript(folder / "s.jsonl", "PFP")
    assert report()["totals"]["sessions"] == 1
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert one_line_error(cli("report"), 2).endswith(
        "or folders, e.g. `metacog report ~/path/to/transcripts`"
    )


def test_progress_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    pipe, tty = io.StringIO(), Tty()
    for stream in (pipe, tty):
        shown = sources.Progress(2, stream)
        shown(1, "/a/one.jsonl")
        shown(2, "/a/two.jsonl")
        shown.close()
    assert pipe.getvalue() == ""
    assert "[1/2] /a/one.jsonl" in tty.getvalue() and "[2/2] /a/two.jsonl" in tty.getvalue()
    assert tty.getvalue().endswith("\r\x1b[K")


def test_counts_and_durations_read_at_a_glance() -> None:
    assert [
        terminal.count(n) for n in (999, 12_345, 123_456, 1_234_567, 17_000_000, 2_287_349_956)
    ] == ["999", "12,345", "123K", "1.2M", "17M", "2.3B"]
    assert [terminal.duration(s) for s in (42, 125, 3725)] == ["42s", "2m 05s", "1h 02m"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_among_the_transcripts_is_skipped_not_waited_on(tmp_path: Path) -> None:
    transcript(tmp_path / "a.jsonl", "PFP")
    os.mkfifo(tmp_path / "pipe.jsonl")
    result = cli("report", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["files"]["skipped"] == 1
    assert (
        result.stderr
        == f"metacog: skipped {tmp_path / 'pipe.jsonl'}: is a FIFO, not a transcript file; "
        "pass a .jsonl file\n"
    )


def test_the_report_writes_nothing_of_the_persons(tmp_path: Path, isolated_home: Path) -> None:
    """Offline and read-only: metacog's own home stays as it was, and so does the folder read."""
    folder = tmp_path / "history"
    folder.mkdir()
    transcript(folder / "a.jsonl", "PFFFFR", cwd=str(tmp_path / "proj"))
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    before = sorted(p.name for p in folder.iterdir())
    assert report(str(folder))["totals"]["episodes"] == 1
    assert not isolated_home.exists(), list(isolated_home.rglob("*"))
    assert sorted(p.name for p in folder.iterdir()) == before
    assert list((tmp_path / "proj").rglob("*")) == [tmp_path / "proj" / ".git"]


def test_recurring_problems_across_sessions_and_projects(tmp_path: Path) -> None:
    transcript(tmp_path / "a.jsonl", "PFFFFRP", cwd="/work/one")
    transcript(
        tmp_path / "b.jsonl",
        "PPFP",
        cwd="/work/one",
        start=datetime(2026, 2, 1, tzinfo=timezone.utc),
    )
    transcript(
        tmp_path / "c.jsonl",
        "FFFFP",
        cwd="/work/two",
        start=datetime(2026, 3, 1, tzinfo=timezone.utc),
    )
    transcript(tmp_path / "d.jsonl", "PPP", cwd="/work/two")
    out = report(str(tmp_path))
    recurring = out["recurring"]
    [row] = recurring["overall"]  # the ZeroDivisionError, in 3 of the 4 sessions
    assert row["problem"].startswith("ZeroDivisionError") and row["what"] == row["problem"]
    assert (row["sessions"], row["times"], row["projects"]) == (3, 9, 2)
    # Its two loops: calls 1-4 then 5 passing (a), calls 0-3 running to the end (c).
    assert (row["loops"], row["loop_calls"]) == (2, 4 + 4)
    assert (
        row["loop_tokens"] == sum(e["tokens"] for s in out["sessions"] for e in s["episodes"])
        and row["loop_tokens"] > 0
    )
    first = datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp()
    assert row["first_seen"] == first + 20 and row["last_seen"] == first + 59 * 86400 + 40
    assert list(recurring["projects"]) == ["/work/one"]  # two's one session is no recurrence
    assert recurring["projects"]["/work/one"][0]["sessions"] == 2
    assert "problems" not in out["sessions"][0]
    shown = cli("report", str(tmp_path)).stdout
    assert "Recurring: problems back in 2+ sessions" in shown
    line = next(x for x in shown.splitlines() if x.strip().startswith("ZeroDivisionError"))
    assert line.split()[-6:-2] == ["3", "9", "8", terminal.count(row["loop_tokens"])]
    assert line.split()[-2:] == ["2026-01-01", "2026-03-01"]
    # Where it cost most: a and c (4 calls in a loop each, the earlier read first), then b.
    assert [Path(f).name for f in row["worst_sessions"]] == ["a.jsonl", "c.jsonl", "b.jsonl"]
    assert row["claude_md"].startswith("When `ZeroDivisionError")
    assert row["loop_active_seconds"] == 40.0 + 30.0  # a: t=20 to 60 s; c: its 4 failures


def test_a_claude_md_line_for_every_kind_of_mistake_and_any_problem() -> None:
    from metacog.perception.symptoms import MISTAKES
    from metacog.report import recurring

    for _, kind, _ in MISTAKES:
        assert recurring.advice(kind) == recurring.ADVICE[kind], kind
        assert recurring.advice(f"{kind} Bash") == recurring.ADVICE[kind]
        assert "(" not in recurring.short(kind) and recurring.short(f"{kind} Bash").endswith(
            "(Bash)"
        )
    assert recurring.advice("Sibling tool call errored").startswith("When one of several")
    assert recurring.advice("repeated Bash npm test").startswith("Do not run `npm test` again")
    assert recurring.advice("nothing found by Grep TODO").startswith("`Grep TODO` found nothing")
    long = "E" * 300 + " | exit 1"
    line = recurring.advice(long)
    assert line.startswith("When `" + "E" * 89 + "…`") and "exit 1" not in line
    assert recurring.advice("a `quoted` error").startswith("When `a 'quoted' error`")


def test_active_time_counts_a_pause_as_five_minutes_and_says_how_far_in_a_sense_spoke(
    tmp_path: Path,
) -> None:
    later = transcript(
        tmp_path / "later.jsonl", "FFFFP", start=datetime(2026, 1, 1, 3, tzinfo=timezone.utc)
    )
    path = transcript(tmp_path / "s.jsonl", "PFFFFRP")
    path.write_text(path.read_text() + later.read_text())  # the person came back 3 hours on
    later.unlink()
    out = report(str(path))
    [session] = out["sessions"]
    # 70 s, then 3 hours counted as 300 s, then the later part's 50 s.
    assert session["active_seconds"] == 70 + 300 + 50
    first, second = session["episodes"]
    assert (first["active_seconds"], first["seconds"]) == (40.0, 40.0)
    # The second loop: its four failures 10 s apart, then the end of the transcript.
    assert second["active_seconds"] == 30.0 and not second["resolved"]
    totals = out["totals"]
    assert totals["active_seconds"] == 420 and totals["loop_active_seconds"] == 70.0
    assert totals["loop_seconds"] == first["seconds"] + second["seconds"]  # wall clock, as before
    # Both loops: a sense would have spoken at their 3rd call, with 1 of their 4 calls to come.
    assert [(e["side"], e["calls_in"], e["calls"]) for e in (first, second)] == [
        ("silent", 3, 4),
        ("silent", 3, 4),
    ]
    assert out["would_help"] == {
        "sessions": 1,
        "loops": 2,
        "spoken_in": 2,
        "median_calls_in": 3,
        "calls_after_share": 0.25,
    }


def test_the_same_report_from_one_process_or_several(tmp_path: Path) -> None:
    from metacog import report as build

    for n, steps in enumerate(["PFFFFRP", "PPFP", "FFFFP", "PPP", "PFFRPFFFF"]):
        transcript(tmp_path / f"s{n}.jsonl", steps, cwd=f"/work/p{n % 2}")
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "other.jsonl").write_text('{"type": "stuck"}\n')
    files = sorted(str(p) for p in tmp_path.glob("*.jsonl"))
    one = build.build(files, timelines=True, workers=1)
    several = build.build(files, timelines=True, workers=3)
    assert one == several and one["files"]["read"] == 5 and one["files"]["empty"] == 1
    assert [s["file"] for s in several["sessions"]] == [f for f in files if "/s" in f]


def _live_session(folder: Path, sid: str, keep_attachments: bool) -> Path:
    """The captured live transcript as session `sid`, its calls run through the real hook
    into metacog's state (what metacog sent); without its hook_additional_context lines
    when Claude Code is to have dropped them."""
    from metacog import hook, paths, replay

    lines = LIVE.read_text().splitlines()
    if not keep_attachments:
        lines = [line for line in lines if "hook_additional_context" not in line]
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    for _, payload in replay.events(lines):
        payload.update(session_id=sid, transcript_path=str(path))
        now = payload.pop("_ts")
        hook.handle(json.dumps(payload).encode(), paths.state_dir(), now)
    return path


def test_proof_of_delivery_sent_against_arrived(tmp_path: Path, isolated_home: Path) -> None:
    from metacog import paths
    from metacog.report import delivery

    projects = tmp_path / "projects"
    (projects / "-work-proj").mkdir(parents=True)
    _live_session(projects / "-work-proj", "aaaa-1111", keep_attachments=True)
    out = report(str(projects))
    figures = out["delivery"]
    assert (figures["sessions"], figures["lines_arrived"], figures["none_arrived_count"]) == (
        1,
        1,
        0,
    )
    assert figures["signals_sent"] >= 1
    assert delivery.check(paths.state_dir(), str(projects)) == ""

    lost = _live_session(projects / "-work-proj", "bbbb-2222", keep_attachments=False)
    out = report(str(projects))
    assert out["delivery"]["none_arrived_count"] == 1
    assert out["delivery"]["none_arrived"][0]["file"] == str(lost)
    shown = " ".join(cli("report", str(projects)).stdout.split())
    assert "in 1 session(s) none arrived" in shown
    assert delivery.check(paths.state_dir(), str(projects)).startswith(
        "in 1 of the 2 latest session(s) where metacog spoke, none of its lines reached"
    )
