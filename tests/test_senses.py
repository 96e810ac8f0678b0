"""The senses beyond Nociception, each on both sides of its threshold, with look-alikes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import agent_text, bash, captured, edit, read, send
from transcripts import Transcript

T0 = 1_800_000_000.0


def prompt(text: str) -> dict:
    return captured("UserPromptSubmit", prompt=text)


def texts(payloads: list[dict], start: float = T0, step: float = 1.0) -> list[str]:
    return [agent_text(send(p, now=start + i * step)) for i, p in enumerate(payloads)]


# Vestibular ---------------------------------------------------------------------------


def test_same_action_same_result_four_times() -> None:
    said = texts([bash("git status")] * 4)
    assert said[:3] == ["", "", ""]
    assert "4 times in a row with the same result" in said[3] and "git status" in said[3]


def test_polling_with_progress_is_not_a_loop() -> None:
    assert texts([bash("kubectl get pods", stdout=f"pending {i}") for i in range(8)]) == [""] * 8
    # The same poll once its output stops changing is one: the silence above was the progress.
    still = texts([bash("kubectl get pods", stdout="pending 8")] * 4, start=T0 + 100)
    assert still[:3] == [""] * 3 and "4 times in a row with the same result" in still[3]


def test_a_short_cycle_repeated_with_unchanged_results() -> None:
    said = texts([bash("make build"), bash("ls out")] * 3)
    assert said[:5] == [""] * 5
    assert "the same 2 steps 3 times" in said[5]


def test_read_edit_cycles_are_work_not_circles() -> None:
    steps = []
    for i in range(6):
        steps += [
            read("/home/dev/project/src/app.py", content=f"v{i}"),
            edit("/home/dev/project/src/app.py", i),
        ]
    assert not any(texts(steps))


def test_same_unchanged_file_read_three_times() -> None:
    said = texts(
        [
            read("/home/dev/project/src/app.py"),
            bash("ls"),
            read("/home/dev/project/src/app.py"),
            bash("pwd"),
            read("/home/dev/project/src/app.py"),
        ]
    )
    assert said[:4] == [""] * 4
    assert "read src/app.py 3 times" in said[4]


def test_paging_through_a_file_is_not_rereading() -> None:
    pages = []
    for offset in (1, 200, 400, 600):
        p = read("/home/dev/project/src/big.py", content=f"page {offset}")
        p["tool_input"].update(offset=offset, limit=200)
        pages.append(p)
    assert texts(pages) == [""] * 4


def test_the_persons_prompt_resets_the_counts() -> None:
    assert (
        texts([bash("git status")] * 3 + [prompt("again please")] + [bash("git status")] * 3)
        == [""] * 7
    )
    # One more is the fourth since the person spoke: the count went on from the prompt.
    assert "4 times in a row" in texts([bash("git status")], start=T0 + 100)[0]


def test_repetition_the_person_asked_for() -> None:
    said = texts(
        [prompt("run the flaky test 5 times and tell me how often it fails")]
        + [bash("pytest -k flaky")] * 5
    )
    assert said == [""] * 6


# Chronos ------------------------------------------------------------------------------


def test_calls_since_the_person_spoke() -> None:
    calls = [prompt("do the thing")] + [bash(f"echo {i}") for i in range(41)]
    said = texts(calls, step=24.0)  # 40 calls over 16 minutes of work
    assert said[39] == ""
    assert said[40].startswith("metacog: 40 tool calls and 16 minutes since the person last spoke")
    assert "check-in" in said[40]
    assert said[41] == ""


def test_quick_calls_are_not_grinding() -> None:
    said = texts([prompt("do it")] + [bash(f"echo {i}") for i in range(30)], step=1.0)
    assert not any(said)
    # 41 calls in 13 minutes: still under the 15 minutes of work the call count waits for.
    assert not any(
        texts(
            [prompt("again")] + [bash(f"echo b{i}") for i in range(41)],
            step=19.0,
            start=T0 + 10_000,
        )
    )


def test_twenty_minutes_of_work() -> None:
    said = texts([prompt("do it")] + [bash(f"echo {i}") for i in range(16)], step=90.0)
    assert not any(said[:14])
    assert "14 tool calls and 21 minutes" in said[14]


def test_idle_time_is_not_work() -> None:
    said = [
        agent_text(send(prompt("go"), now=T0)),
        agent_text(send(bash("echo 1"), now=T0 + 4 * 3600)),
    ]
    assert said == ["", ""]


def test_task_notification_does_not_reset_chronos() -> None:
    calls = [prompt("go")] + [bash(f"echo {i}") for i in range(30)]
    calls += [prompt("<task-notification>done</task-notification>")] + [
        bash(f"echo b{i}") for i in range(12)
    ]
    said = texts(calls, step=24.0)
    assert any("40 tool calls" in s for s in said)


def test_subagent_calls_do_not_count_for_the_main_agent() -> None:
    calls = [prompt("go")]
    for i in range(40):
        sub = bash(f"echo {i}")
        sub.update(agent_id="sub1", agent_type="Explore")
        calls.append(sub)
    assert not any(texts(calls, step=20.0))


# O2 -----------------------------------------------------------------------------------


def test_velocity_against_the_sessions_baseline() -> None:
    small = [bash(f"echo {i}", stdout="x" * 200) for i in range(10)]
    big = [read(f"/home/dev/project/src/m{i}.py", content="y" * 30000) for i in range(5)]
    said = texts(small + big)
    assert not any(said[:11])
    hit = [s for s in said[11:] if "faster than this session's baseline" in s]
    assert hit and "large file reads in the last 5 actions" in hit[0] and "subagent" in hit[0]


def test_a_burst_is_said_only_where_it_would_reach_compaction_soon(tmp_path: Path) -> None:
    def burst(log: Transcript, tokens: int, model: str) -> list[str]:
        log.usage(tokens, model=model)
        small = [bash(f"echo {i}", stdout="x" * 200) for i in range(10)]
        big = [read(f"/home/dev/project/src/m{i}.py", content="y" * 30000) for i in range(5)]
        for call in small + big:
            call["transcript_path"] = str(log.path)
        return texts(small + big)

    # A million tokens of room: five large reads are nothing to warn of.
    roomy = burst(Transcript(tmp_path / "a.jsonl"), 100_000, "claude-opus-5-5")
    assert not any(roomy), roomy
    # 150K of 200K, about 7.5K tokens a call: compaction is a few calls away.
    tight = burst(Transcript(tmp_path / "b.jsonl"), 150_000, "claude-sonnet-4-5")
    assert any("faster than this session's baseline" in t for t in tight), tight


def test_steady_large_reads_are_the_baseline() -> None:
    calls = [read(f"/home/dev/project/src/m{i}.py", content="y" * 30000) for i in range(20)]
    assert not any(texts(calls))


def test_real_fill_from_the_transcript(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")

    def call(tokens: int) -> str:
        log.usage(tokens, model="claude-sonnet-4-5")
        return agent_text(send(bash(f"echo {tokens}", transcript_path=str(log.path)), now=T0))

    assert call(100_000) == ""
    send(edit("/home/dev/project/src/app.py"), now=T0)  # work a compaction would lose
    said = call(141_000)  # 41K in one call: compaction is a call away
    assert "context is 141K of 200K tokens (70%), growing about 20.5K per call" in said
    assert "auto-compaction near 167K starts in about 1 calls" in said
    assert call(145_000) == ""  # once until the next compaction


def test_a_high_level_that_grows_slowly_is_not_news(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    send(edit("/home/dev/project/src/app.py"), now=T0)  # work a compaction would lose
    said = []
    for n in range(30):  # 140K to 154.5K, 500 tokens a call: compaction 25+ calls away
        log.usage(140_000 + 500 * n, model="claude-sonnet-4-5")
        said.append(agent_text(send(bash(f"echo {n}", transcript_path=str(log.path)), now=T0)))
    assert not any(said)
    for n in range(6):  # then 3K a call: near 167K within 6 calls
        log.usage(155_000 + 3_000 * n, model="claude-sonnet-4-5")
        said.append(agent_text(send(bash(f"echo x{n}", transcript_path=str(log.path)), now=T0)))
    spoken = [s for s in said if s]
    assert len(spoken) == 1 and "growing about" in spoken[0], spoken


def test_a_1m_model_has_room(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    log.usage(400_000, model="claude-opus-5-5")
    assert agent_text(send(bash("ls", transcript_path=str(log.path)))) == ""


def test_after_compaction_the_agent_hears_what_it_had_read(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    for _ in range(2):
        send(read("/home/dev/project/src/core.py", transcript_path=str(log.path)))
        send(bash("ls", transcript_path=str(log.path)))
    log.compaction()
    said = agent_text(send(bash("pwd", transcript_path=str(log.path))))
    assert "compacted" in said and "core.py (2×)" in said


# Refused calls (transcript only) --------------------------------------------------------


def test_refused_edits_join_the_error_stream(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    said = []
    for _ in range(3):
        log.refused_edit()
        said.append(
            agent_text(send(read("/home/dev/project/src/app.py", transcript_path=str(log.path))))
        )
    assert said[:2] == ["", ""]
    assert "old_string is not in the file" in said[2] and "`src/app.py`" in said[2]


@pytest.mark.parametrize("kind", ["fifo", "devzero", "binary", "missing"])
def test_hostile_transcript_paths_are_bounded(tmp_path: Path, kind: str) -> None:
    import os

    path = tmp_path / "t"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path = Path("/dev/zero")
    elif kind == "binary":
        path.write_bytes(os.urandom(300_000))
    assert send(bash("ls", transcript_path=str(path))) is None


# Echo and Drift -------------------------------------------------------------------------


def test_edits_without_running_the_tests() -> None:
    calls = [read("/home/dev/project/tests/test_m.py")]
    said = texts(calls + [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(12)])
    assert not any(said[:12])
    assert "12 edits since the project's tests last ran" in said[12]


def test_edits_in_a_project_without_tests_in_sight_are_not_news() -> None:
    said = texts([edit(f"/home/dev/project/src/m{i}.py", i) for i in range(30)])
    assert not any(said)
    # A test seen later makes the pile of edits news, once.
    more = texts(
        [read("/home/dev/project/src/app.test.ts")] + [edit("/home/dev/project/src/x.py")] * 3
    )
    assert not more[0] and "31 edits since the project's tests last ran" in more[1]
    assert not any(more[2:])


def test_a_test_run_resets_and_docs_do_not_count() -> None:
    calls = [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)] + [bash("pytest -q")]
    calls += [edit(f"/home/dev/project/src/m{i}.py", i) for i in range(8)]
    calls += [edit(f"/home/dev/project/docs/d{i}.md", i) for i in range(10)]
    assert not any(texts(calls))
    # The same edits without the test run do speak: the silence above is the reset's.
    without = texts([c for c in calls if c["tool_name"] != "Bash"])
    assert any("edits since the project's tests last ran" in s for s in without)


def test_only_the_new_test_runs() -> None:
    calls = [edit("/home/dev/project/src/app.py")] + [
        bash("pytest tests/test_new.py", stdout=f"r{i}") for i in range(3)
    ]
    said = texts(calls)
    assert "run only a narrowed test 3 times" in said[3]


def test_drift_from_what_the_request_named() -> None:
    calls = [
        prompt("Fix the crash in parser.py when `parse_header` gets an empty line"),
        read("/home/dev/project/src/parser.py"),
    ]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(25)]
    said = texts(calls)
    assert not any(said[:26])
    assert "touched none of what the request named" in said[26] and "parser.py" in said[26]


def test_no_drift_without_named_things() -> None:
    # As many calls as the named request above needed to speak: fewer would pass unheard.
    calls = [prompt("make it faster"), read("/home/dev/project/src/parser.py")]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(25)]
    assert not any(texts(calls))


# Layers ---------------------------------------------------------------------------------


def test_one_message_per_call_combining_senses() -> None:
    # Chronos (20 minutes of work) and Drift (25 actions away from what the request named)
    # speak on the same call: one message, in the senses' order.
    calls = [
        prompt("Fix the crash in parser.py when `parse_header` gets an empty line"),
        read("/home/dev/project/src/parser.py"),
    ]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(25)]
    said = texts(calls, step=47.0)
    assert not any(said[:26])
    assert said[26].count("metacog:") == 1
    assert said[26].startswith("metacog: 26 tool calls and 20 minutes since the person last spoke")
    assert said[26].endswith(
        "the last 25 actions touched none of what the request named (parser.py, parse_header). "
        "Is this detour needed for the task?"
    )


def test_layer2_carries_the_other_readings() -> None:
    fail = captured("PostToolUseFailure", "Bash")
    calls = [prompt("go")] + [fail] * 5
    said = texts(calls, step=30.0)
    assert "state your assumption" in said[5]
    assert "since the person spoke" in said[5]


def test_disabled_sense_stays_silent(isolated_home: Path) -> None:
    config = isolated_home / "config"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[vestibular]\nenabled = false\n")
    assert texts([bash("git status")] * 5) == [""] * 5
    # Enabled again, the same calls are a loop: the silence above was the setting's.
    (config / "config.toml").write_text("[vestibular]\nenabled = true\n")
    again = texts([bash("git status")] * 4, start=T0 + 100)
    assert any("times in a row with the same result" in said for said in again), again


def test_project_config_wins(isolated_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "metacog.toml").write_text("[vestibular]\nsame_action = 2\n")
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text("[vestibular]\nsame_action = 9\n")
    said = texts([bash("git status", cwd=str(project))] * 2)
    assert "2 times in a row" in said[1]


# Subagents -------------------------------------------------------------------------------


def test_a_subagent_that_looped_is_reported_to_the_main_agent() -> None:
    fail = captured("PostToolUseFailure", "Bash", agent_id="sub9", agent_type="Explore")
    sub_said = texts([fail] * 3)
    assert "the same error 3 times" in sub_said[2]  # the subagent hears it itself
    stop = {
        **captured("PostToolUse", "Bash"),
        "hook_event_name": "SubagentStop",
        "agent_id": "sub9",
        "agent_type": "Explore",
    }
    for key in ("tool_name", "tool_input", "tool_response", "tool_use_id"):
        stop.pop(key, None)
    assert send(stop) is None
    main_said = agent_text(send(bash("ls")))
    assert "the Explore subagent that just finished hit the same error 3 times" in main_said
    assert agent_text(send(bash("pwd"))) == ""  # told once


def test_a_quiet_subagent_is_not_reported() -> None:
    texts([bash("ls", agent_id="sub1", agent_type="Explore")])
    stop = {
        "hook_event_name": "SubagentStop",
        "session_id": captured("PostToolUse", "Bash")["session_id"],
        "agent_id": "sub1",
        "agent_type": "Explore",
        "cwd": "/home/dev/project",
    }
    assert send(stop) is None
    assert agent_text(send(bash("pwd"))) == ""


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("o2", "baseline_calls", 0),
        ("vestibular", "same_action", 0),
        ("vestibular", "same_action", -3),
        ("chronos", "calls", 0),
        ("digest", "max_chars", 99999),
        ("chronos", "calls", 2.5),
    ],
)
def test_out_of_range_settings_are_ignored(
    isolated_home: Path, section: str, key: str, value: object
) -> None:
    from metacog import schema

    merged = schema.merge(schema.DEFAULTS, {section: {key: value}})
    assert merged[section][key] == schema.DEFAULTS[section][key]
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text(f"[{section}]\n{key} = {value}\n")
    fail = captured("PostToolUseFailure", "Bash")
    assert [send(fail) is None for _ in range(3)] == [True, True, False]


def test_time_inside_a_subagent_does_not_count_but_work_around_it_does() -> None:
    said = [agent_text(send(prompt("go"), now=T0))]
    now = T0
    for i in range(5):
        now += 60
        said.append(agent_text(send(bash(f"echo a{i}"), now=now)))
    now += 20 * 60  # a 20-minute subagent, reported by the Task call's duration
    task = captured(
        "PostToolUse",
        "Bash",
        tool_name="Task",
        tool_input={"description": "explore"},
        tool_response={"status": "completed"},
        duration_ms=20 * 60 * 1000,
    )
    said.append(agent_text(send(task, now=now)))
    assert not any(said)  # 5 minutes of the main agent's own work so far
    for i in range(15):
        now += 60
        said.append(agent_text(send(bash(f"echo b{i}"), now=now)))
    assert not any(said[:-1])
    assert "20 minutes since the person last spoke" in said[-1]


def test_a_reread_warning_is_not_used_up_during_a_cooldown() -> None:
    said = texts(
        [bash("make")] * 4
        + [read("/home/dev/project/src/app.py")] * 3
        + [bash(f"echo {i}", stdout=str(i)) for i in range(6)]
        + [read("/home/dev/project/src/app.py")]
    )
    assert "4 times in a row" in said[3]
    assert not any(said[4:13])  # the cooldown after the first message
    assert "read src/app.py 4 times" in said[13]


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "huge"])
def test_a_hostile_project_config_is_not_read(tmp_path: Path, target: str) -> None:
    import os

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    link = project / ".claude" / "metacog.toml"
    if target == "fifo":
        os.mkfifo(link)
    elif target == "huge":
        link.write_text("# padding\n" * 100_000 + "[vestibular]\nsame_action = 2\n")
    else:
        link.symlink_to(target)
    said = texts([bash("git status", cwd=str(project))] * 4)
    assert said[:3] == ["", "", ""] and "4 times in a row" in said[3]  # defaults apply


def test_idle_pauses_count_nothing() -> None:
    said = [agent_text(send(prompt("go"), now=T0))]
    said += [agent_text(send(bash(f"echo {i}"), now=T0 + 3600 * (i + 1))) for i in range(20)]
    assert not any(said)  # twenty calls an hour apart: the person was away, nobody worked


def test_one_stretch_has_one_count_of_check_ins_whichever_doubled() -> None:
    calls = [prompt("go")] + [bash(f"echo {i}") for i in range(100)]
    said = texts(calls, step=9.0)  # 100 calls in 15 minutes
    assert sum(1 for s in said if s) == 1 and "100 tool calls and 15 minutes" in said[-1]
    # Past 80 calls is the second check-in (as 40 minutes is): the 20- and 40-minute ones
    # would say the same stretch again; 80 minutes of it is the third.
    later = [
        agent_text(send(bash(f"echo late {i}"), now=T0 + 900 + 120 * (i + 1))) for i in range(33)
    ]
    assert later[:32] == [""] * 32 and "133 tool calls and 81 minutes" in later[32], later


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


def test_chronos_levels_are_bounded_for_a_damaged_infinite_time() -> None:
    from metacog.senses import chronos

    assert chronos._level(float("inf"), 20) == 64
    assert chronos._level(1e9, 1) == 30 and chronos._level(0.0, 20) == 0
