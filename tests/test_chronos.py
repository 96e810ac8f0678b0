"""metacog.senses.chronos: a long stretch of work since the person spoke (idle, subagents left
out), said only when obstacles met in it stay unsolved."""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import (
    T0,
    agent_text,
    bash,
    captured,
    failed,
    prompt,
    refused,
    send,
    senses_off,
    texts,
)

# Nine commands, each failing on the same wall.
COMMANDS = (
    "python scripts/migrate.py",
    "npm run build",
    "git push origin main",
    "cargo check",
    "pytest tests/test_api.py",
    "docker compose up -d",
    "curl -f http://localhost:8080/health",
    "go test ./...",
    "ruff check src/",
)
WALL = "psycopg.OperationalError: connection to server at db_host failed"
# Nine failures with nothing in common: each its own command and its own error.
FAILURES = (
    "Traceback (most recent call last):\nKeyError: 'user_id'",
    "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.",
    "! [rejected]        main -> main (fetch first)\nerror: failed to push some refs",
    "error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:8:5",
    "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200",
    "Error response from daemon: Bind for 0.0.0.0:5432 failed: port is already allocated",
    "curl: (7) Failed to connect to localhost port 8080: Connection refused",
    "--- FAIL: TestParse (0.00s)\n    parse_test.go:14: got 3, want 4",
    "src/util.py:3:1: F401 [*] `os` imported but unused",
)


@pytest.fixture(autouse=True)
def chronos_alone(isolated_home: Path) -> None:
    """Chronos alone speaks: walls met again are also what Nociception and Habit say."""
    senses_off(isolated_home, "nociception", "habit", "vestibular")


def obstacles(n: int, first: int = 0) -> list[dict]:
    """A wall met, then met again by `n` more commands: `n` obstacles that brought nothing
    new, none overcome."""
    return [failed(command, f"Exit code 1\n{WALL}") for command in COMMANDS[first : first + n + 1]]


def moving(n: int) -> list[dict]:
    """`n` failures that each bring something new: each its own command and its own error."""
    return [failed(c, f"Exit code 1\n{e}") for c, e in zip(COMMANDS[:n], FAILURES[:n], strict=True)]


def test_calls_since_the_person_spoke_against_obstacles() -> None:
    calls = [prompt("do the thing")] + obstacles(3) + [bash(f"echo {i}") for i in range(37)]
    said = texts(calls, step=24.0)  # 40 calls over 16 minutes of work
    assert not any(said[:40])
    assert said[40].startswith(
        "metacog: 40 tool calls and 16 minutes since the person last spoke, "
        "3 obstacles since that showed nothing new. "
    )
    assert "check-in" in said[40]
    assert said[41] == ""


def test_a_long_calm_run_is_not_worth_a_check_in() -> None:
    # What the person asked for, going well: 100 calls over 40 minutes, every one fine.
    assert not any(texts([prompt("do it")] + [bash(f"echo {i}") for i in range(100)], step=24.0))
    # Two obstacles are not a grind either.
    calls = [prompt("again")] + obstacles(2) + [bash(f"echo b{i}") for i in range(60)]
    assert not any(texts(calls, step=24.0, start=T0 + 10_000))


def test_failures_that_each_bring_something_new_are_no_grind() -> None:
    # Nine failures, none overcome, each its own error: the work moving, not a wall.
    calls = [prompt("go")] + moving(9) + [bash(f"echo {i}") for i in range(40)]
    assert not any(texts(calls, step=24.0))
    # The same stretch against one wall is a grind.
    calls = [prompt("again")] + obstacles(8) + [bash(f"echo b{i}") for i in range(40)]
    assert any("showed nothing new" in s for s in texts(calls, step=24.0, start=T0 + 10_000))


def test_obstacles_overcome_since_are_no_grind() -> None:
    # Each failing call passes later: what stood in the way was dealt with.
    tried = list(COMMANDS[:4])
    calls = [prompt("go")] + obstacles(3) + [bash(c) for c in tried]
    calls += [bash(f"echo {i}") for i in range(36)]
    assert not any(texts(calls, step=24.0))


def test_the_latest_obstacle_is_named_while_the_window_holds_it() -> None:
    calls = [prompt("go")] + [bash(f"echo {i}") for i in range(34)] + obstacles(3)
    calls += [bash("echo a"), bash("echo b")]
    said = texts(calls, step=24.0)
    assert "3 obstacles since that showed nothing new (the latest: Bash `cargo check`)" in said[40]


def test_obstacles_from_before_the_person_spoke_do_not_count() -> None:
    # The person spoke after them: what stood in the way then is the person's to weigh.
    calls = obstacles(3) + [prompt("go on")] + [bash(f"echo {i}") for i in range(41)]
    assert not any(texts(calls, step=24.0))


def test_a_check_in_fits_whatever_the_tools_name() -> None:
    tool = "mcp__plugin_playwright_playwright__browser_navigate_with_a_long_name"
    last = refused(tool, WALL)
    calls = [prompt("go")] + [bash(f"echo {i}") for i in range(36)] + obstacles(2) + [last]
    said = texts(calls, step=24.0)[40]
    assert said.startswith("metacog: 40 tool calls") and said.endswith("what is uncertain?")
    assert len(said) <= 300 + len("metacog: ")


def test_quick_calls_are_not_grinding() -> None:
    said = texts(
        [prompt("do it")] + obstacles(3) + [bash(f"echo {i}") for i in range(27)], step=1.0
    )
    assert not any(said)
    # 41 calls in 13 minutes: still under the 15 minutes of work the call count waits for.
    assert not any(
        texts(
            [prompt("again")] + obstacles(3, 3) + [bash(f"echo b{i}") for i in range(38)],
            step=19.0,
            start=T0 + 10_000,
        )
    )


def test_twenty_minutes_of_work() -> None:
    calls = [prompt("do it")] + obstacles(3) + [bash(f"echo {i}") for i in range(13)]
    said = texts(calls, step=90.0)
    assert not any(said[:14])
    assert "14 tool calls and 21 minutes" in said[14]


def test_a_level_reached_on_a_calm_run_is_said_when_it_turns_into_a_grind() -> None:
    calls = [prompt("do it")] + [bash(f"echo {i}") for i in range(19)] + obstacles(3)
    said = texts(calls, step=90.0)  # 20 minutes at call 14; the third obstacle at call 23
    assert not any(said[:23])
    assert "23 tool calls and 34 minutes" in said[23]


def test_idle_time_is_not_work() -> None:
    said = [agent_text(send(prompt("go"), now=T0))]
    said += [agent_text(send(p, now=T0 + i + 1)) for i, p in enumerate(obstacles(3))]
    said.append(agent_text(send(bash("echo 1"), now=T0 + 4 * 3600)))
    assert said == [""] * 6


def test_task_notification_does_not_reset_chronos() -> None:
    calls = [prompt("go")] + obstacles(3) + [bash(f"echo {i}") for i in range(27)]
    calls += [prompt("<task-notification>done</task-notification>")] + [
        bash(f"echo b{i}") for i in range(12)
    ]
    said = texts(calls, step=24.0)
    assert any("40 tool calls" in s for s in said)


def test_subagent_calls_do_not_count_for_the_main_agent() -> None:
    calls = [prompt("go"), *obstacles(3)]
    for i in range(40):
        sub = bash(f"echo {i}")
        sub.update(agent_id="sub1", agent_type="Explore")
        calls.append(sub)
    assert not any(texts(calls, step=20.0))


def test_time_inside_a_subagent_does_not_count_but_work_around_it_does() -> None:
    said = [agent_text(send(prompt("go"), now=T0))]
    now = T0
    for payload in obstacles(3) + [bash(f"echo a{i}") for i in range(1)]:
        now += 60
        said.append(agent_text(send(payload, now=now)))
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
    work = obstacles(3) + [bash(f"echo {i}") for i in range(17)]
    said += [agent_text(send(p, now=T0 + 3600 * (i + 1))) for i, p in enumerate(work)]
    assert not any(said)  # twenty calls an hour apart: the person was away, nobody worked


def test_one_stretch_has_one_count_of_check_ins_whichever_doubled() -> None:
    # An obstacle every 20 calls, none overcome: the grind goes on.
    calls = [prompt("go")]
    for i in range(5):
        calls += [bash(f"echo {i}.{k}") for k in range(18)] + obstacles(1, i)
    said = texts(calls, step=9.0)  # 100 calls in 15 minutes
    assert sum(1 for s in said if s) == 1 and "100 tool calls and 15 minutes" in said[-1]
    # Past 80 calls is the second check-in (as 40 minutes is): the 20- and 40-minute ones
    # would say the same stretch again; 80 minutes of it is the third.
    work = [bash(f"echo late {i}") for i in range(31)] + obstacles(1, 5)
    later = [agent_text(send(p, now=T0 + 900 + 120 * (i + 1))) for i, p in enumerate(work)]
    assert later[:32] == [""] * 32 and "133 tool calls and 81 minutes" in later[32], later


def test_chronos_levels_are_bounded_for_a_damaged_infinite_time() -> None:
    from metacog.senses import chronos

    assert chronos._level(float("inf"), 20) == 64
    assert chronos._level(1e9, 1) == 30 and chronos._level(0.0, 20) == 0
