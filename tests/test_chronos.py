"""metacog.senses.chronos: calls and minutes of work since the person spoke (idle, subagents left out)."""

from __future__ import annotations

from hooktest import T0, agent_text, bash, captured, prompt, send, texts


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


def test_chronos_levels_are_bounded_for_a_damaged_infinite_time() -> None:
    from metacog.senses import chronos

    assert chronos._level(float("inf"), 20) == 64
    assert chronos._level(1e9, 1) == 30 and chronos._level(0.0, 20) == 0
