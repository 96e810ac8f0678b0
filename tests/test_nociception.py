"""Nociception on both sides of each threshold, and the look-alikes that are not loops."""

from __future__ import annotations

import itertools

from hooktest import agent_text, captured, send

from metacog.perception.call import Call


def bash_failure(error: str, command: str = "pytest -x") -> dict:
    return captured(
        "PostToolUseFailure",
        "Bash",
        error=error,
        tool_input={"command": command, "description": "x"},
    )


def edit(n: int) -> dict:
    payload = captured("PostToolUse", "Edit")
    payload["tool_input"]["new_string"] = payload["tool_response"]["newString"] = f"return {n}"
    return payload


TRACE = "Exit code 1\nTraceback (most recent call last):\n  File \"/w/app.py\", line 3, in f\nKeyError: 'user'"


def test_two_similar_errors_are_silent_the_third_speaks() -> None:
    assert send(bash_failure(TRACE)) is None
    assert send(bash_failure(TRACE)) is None
    text = agent_text(send(bash_failure(TRACE)))
    assert text.startswith("metacog: the same error 3 times in a row")
    assert "KeyError" in text and "?" in text
    assert len(text) <= 300 + len("metacog: ")


def test_edits_between_attempts_do_not_break_the_streak() -> None:
    texts = []
    for i in range(4):
        texts.append(agent_text(send(bash_failure(TRACE))))
        send(edit(i))
    assert texts[:2] == ["", ""]
    assert "with 2 edits between attempts" in texts[2]


def test_volatile_parts_do_not_make_errors_different() -> None:
    errors = [
        f"Exit code 1\nError at 2026-11-2{i}T10:00:0{i}Z in /tmp/run{i}/x: pid {1000 + i} timeout after {i}.5s"
        for i in range(3)
    ]
    replies = [send(bash_failure(e)) for e in errors]
    assert replies[2] is not None


def test_different_errors_are_exploring_not_looping() -> None:
    errors = [
        TRACE.replace("KeyError: 'user'", f"{name}: bad")
        for name in ("ValueError", "TypeError", "KeyError", "IndexError", "OSError")
    ]
    assert [send(bash_failure(e)) for e in errors] == [None] * 5


def test_a_syntax_error_that_moves_is_progress() -> None:
    # Fixed at one line, the parser stops at the next: another line of code each time.
    errors = [
        f'Exit code 1\n  File "/w/app.py", line {n}\n    {code}\nSyntaxError: invalid syntax'
        for n, code in ((3, "x = ("), (9, "def run(:"), (14, "if ready"), (22, "return {a b}"))
    ]
    assert [send(bash_failure(e)) for e in errors] == [None] * 4


def test_the_same_syntax_error_whose_line_number_shifts_is_the_same_obstacle() -> None:
    # The look-alike of the one above: the same code, the same message, only its line number
    # moved (lines added above it): nothing new, however the position reads.
    errors = [
        f'Exit code 1\n  File "<string>", line {n}\n    ok = (df[col] \\!= "")\n'
        "SyntaxError: unexpected character after line continuation character"
        for n in (16, 17, 22)
    ]
    texts = [
        agent_text(send(bash_failure(e, command=f"python3 -c 'v{n}'")))
        for n, e in enumerate(errors)
    ]
    assert texts[:1] == [""] and any("showed nothing" in t for t in texts[1:]), texts


def test_success_of_the_failing_command_resolves_the_streak() -> None:
    for _ in range(2):
        send(bash_failure(TRACE))
    ok = captured("PostToolUse", "Bash", tool_input={"command": "pytest -x", "description": "x"})
    assert send(ok) is None
    # A new streak of one: no "same error in a row". (That it is back a 3rd time across the
    # session is Habit's to say: tests/test_perception.py, class 4.)
    assert "in a row" not in agent_text(send(bash_failure(TRACE)))


def test_escalation_socratic_then_directive_then_the_person() -> None:
    replies = [send(bash_failure(TRACE)) for _ in range(9)]
    spoke = {i + 1: r for i, r in enumerate(replies) if r}
    assert sorted(spoke) == [3, 5, 7, 9]  # the cooldown: never two interventions in a row
    assert "state your assumption" in agent_text(spoke[5])
    assert "read-only check" in agent_text(spoke[5])
    assert "Stop varying the same fix" in agent_text(spoke[7])
    assert "ask for guidance" in agent_text(spoke[9])
    assert "systemMessage" not in spoke[7]
    assert spoke[9]["systemMessage"].startswith("metacog: the agent has hit the same error 9 times")
    assert all("systemMessage" not in spoke[n] for n in (3, 5, 7))
    assert all(len(agent_text(r)) <= 300 + len("metacog: ") for r in spoke.values())


def test_errors_of_a_subagent_are_its_own() -> None:
    for i in range(3):
        sub = bash_failure(TRACE)
        sub["agent_id"], sub["agent_type"] = "a1", "general-purpose"
        assert (send(sub) is None) == (i < 2)
    assert send(bash_failure(TRACE)) is None  # the main agent has seen one error only


def test_red_green_test_cycles_are_not_a_streak() -> None:
    # The same test fails, is fixed (green), and fails again after the next change: each pass
    # of the failing command ends the streak, so four reds never make a streak. The same
    # failure back after each fix is a habit (Habit, at the 3rd), never "in a row".
    red = bash_failure(
        "Exit code 1\nFAILED tests/test_app.py::test_total - assert 1 == 2\n1 failed, 3 passed"
    )
    green = captured(
        "PostToolUse",
        "Bash",
        tool_input={"command": "pytest -x", "description": "x"},
        tool_response={
            "stdout": "4 passed",
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        },
    )
    said = []
    for i in range(4):
        said += [agent_text(send(red)), agent_text(send(edit(i))), agent_text(send(green))]
    assert not any("in a row" in s for s in said)
    assert [i for i, s in enumerate(said) if s] == [6]
    assert said[6].startswith("metacog: the same problem is back for the 3rd time")
    assert agent_text(send(red)) == ""
    assert "back for the 6th time" in agent_text(send(red))  # the habit went on after it was told
    assert agent_text(send(red)).startswith("metacog: the same error 3 times")  # without greens


def test_different_commands_failing_with_a_bare_exit_code_are_exploring() -> None:
    for command in ("grep -q foo a.txt", "diff a b", "test -f x.cfg", "cmp x y"):
        assert send(bash_failure("Exit code 1", command=command)) is None


def test_the_same_command_failing_with_a_bare_exit_code_is_a_loop() -> None:
    replies = [send(bash_failure("Exit code 1", command="make lint")) for _ in range(3)]
    assert "the same error 3 times" in agent_text(replies[2])


def test_reading_different_missing_files_is_exploring() -> None:
    for name in ("setup.cfg", "tox.ini", "pytest.ini", "pyproject.toml"):
        missing = captured(
            "PostToolUseFailure", "Read", tool_input={"file_path": f"/home/dev/project/{name}"}
        )
        assert send(missing) is None


def test_jest_failures_in_one_file_differ_by_test() -> None:
    def jest(test: str) -> dict:
        return bash_failure(
            f"Exit code 1\nFAIL src/cycle.test.ts\n  ● CycleService › {test}\n    Expected: 3",
            command="npx jest src/cycle.test.ts",
        )

    assert [send(jest(t)) for t in ("create", "update", "delete")] == [None, None, None]


def test_a_parallel_batch_is_one_attempt_and_no_escalation_before_the_model_answered(
    tmp_path,
) -> None:
    from transcripts import Transcript

    log = Transcript(tmp_path / "t.jsonl")
    calls = iter(range(1000))

    def batch(size: int) -> list[str]:
        """A response asking for `size` identical failing calls, written before their hooks run."""
        ids = [f"toolu_b{next(calls)}" for _ in range(size)]
        log.batch(ids)
        said = []
        for tool_use_id in ids:
            fail = bash_failure(TRACE)
            fail.update(transcript_path=str(log.path), tool_use_id=tool_use_id)
            said.append(agent_text(send(fail)))
        return said

    assert batch(9) == [""] * 9  # one attempt, seen nine times
    assert batch(1) == [""]  # the 2nd attempt
    said = batch(3)  # the 3rd attempt, again as a batch
    assert said[0].startswith("metacog: the same error 3 times") and said[1:] == ["", ""]
    batch(1)
    assert "state your assumption" in batch(1)[0]  # the 5th attempt, after the model answered


def test_calls_whose_response_is_not_written_yet_are_each_an_attempt() -> None:
    # Claude Code often runs a call's hook before writing the response that made it: no
    # transcript line to tell a batch from separate attempts, so each counts (never a miss).
    said = [agent_text(send(bash_failure(TRACE))) for _ in range(3)]
    assert said[2].startswith("metacog: the same error 3 times")


def test_refusals_read_together_are_still_separate_attempts(tmp_path) -> None:
    # Claude Code fires no hook for a refused call: three in a row reach the senses at the
    # next call, all at once; each came from its own model response.
    from transcripts import Transcript

    log = Transcript(tmp_path / "t.jsonl")
    for _ in range(3):
        log.refused_edit()
    probe = captured("PostToolUse", "Bash", transcript_path=str(log.path))
    assert "old_string is not in the file" in agent_text(send(probe))


def test_a_failure_repeated_after_other_obstacles_is_felt_before_the_streak_counts_three() -> None:
    # A release tool that says no, another try, then the first words again twice. The
    # streak is at two, below its first level; the obstacles that brought nothing new are
    # not all its own, so the stale observation speaks.
    calls = [
        ("relx push stage", "Exit code 3\nrelx: stage_lock held by build_8812"),
        ("relx status", "Exit code 3\nrelx: no_release for stage"),
        ("relx push stage --wait", "Exit code 3\nrelx: stage_lock held by build_8812"),
        ("relx push stage --force", "Exit code 3\nrelx: stage_lock held by build_8812"),
    ]
    texts = [agent_text(send(bash_failure(error, command=cmd))) for cmd, error in calls]
    assert texts[:3] == ["", "", ""] and "showed nothing" in texts[3], texts


def test_the_same_failure_twice_alone_is_the_streaks_to_count() -> None:
    # The look-alike: nothing but the streak's own two attempts, which it says at three.
    texts = [agent_text(send(bash_failure(TRACE))) for _ in range(3)]
    assert texts[:2] == ["", ""] and texts[2].startswith("metacog: the same error 3 times")


def test_the_stale_observation_backs_off_within_one_stretch() -> None:
    # A cycle of three failures the session has seen, round after round, with nothing new:
    # told once, then once twice as many stale obstacles have come, not every second call.
    cycle = [
        ("make db", "Exit code 2\ndb: lock_timeout on table users_v2"),
        ("make seed", "Exit code 2\nseed: relation users_v2 does not exist"),
        ("make api", "Exit code 2\napi: cannot reach db_host at port 5432"),
    ]
    texts = [
        agent_text(send(bash_failure(error, command=cmd))) for _ in range(8) for cmd, error in cycle
    ]
    spoken = [i for i, t in enumerate(texts) if "showed nothing" in t]
    assert spoken and len(spoken) <= 3, (spoken, texts)
    gaps = [b - a for a, b in itertools.pairwise(spoken)]
    assert all(b > a for a, b in itertools.pairwise(gaps)), spoken


def test_a_damaged_count_of_stale_observations_is_read_as_none() -> None:
    from metacog.senses import nociception
    from metacog.senses.contract import Context

    ctx = Context({"nociception": dict(nociception.DEFAULTS)}, {}, {})
    ctx.obstacle = True
    ctx.obstacles = [(1, 1, 0.0, 0, False), (2, 2, 0.0, 0, False)]
    mem = {"stale_times": -5}
    said = nociception._stale(mem, Call("Bash", "x", sig=""), ctx, ctx.cfg["nociception"])
    assert said is not None and mem["stale_times"] == 1


DOWN = "Exit code 2\nthe server did not answer\ngiving up after three tries\nsee the status page"


def test_a_failure_met_before_its_streak_began_is_felt_at_the_streaks_second_attempt() -> None:
    # Nearly the same answer met long ago from another command; this command's streak is
    # its own (another error, to the letter), and almost nothing in it is new. Met before the streak began and nothing new since: the stale
    # observation speaks at the streak's second attempt, not its third.
    first = DOWN.replace("the server", "deploy_v2: the server")
    assert send(bash_failure(first, command="make deploy")) is None
    for n in range(12):  # other work, longer ago than the stale span
        send(captured("PostToolUse", "Read", tool_input={"file_path": f"/w/m{n}.py"}))
    texts = [agent_text(send(bash_failure(DOWN, command="make deploy-all"))) for _ in range(2)]
    assert texts[0] == "" and "showed nothing" in texts[1], texts


def test_a_streak_of_nothing_new_with_nothing_met_before_it_is_the_streaks_to_count() -> None:
    # The look-alike: the same lines shown before by a command that worked, no obstacle met
    # before the streak: its two attempts are its own, which it says at three.
    send(captured("PostToolUse", "Bash", tool_input={"command": "cat deploy.log"}))
    texts = [agent_text(send(bash_failure(DOWN, command="make deploy-all"))) for _ in range(2)]
    assert texts == ["", ""], texts
