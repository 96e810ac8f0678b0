"""Nociception on both sides of each threshold, and the look-alikes that are not loops."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import pytest
from hooktest import (
    BLOCKED,
    T0,
    agent_text,
    bash,
    captured,
    failed,
    grep,
    read,
    refused,
    said,
    send,
    texts,
)
from hooktest import edit as edit_file
from transcripts import Transcript

from metacog.perception.call import Call
from metacog.perception.symptoms import mistake


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
        for name in ("ValueError", "TypeError", "KeyError", "IndexError", "OSError", "NameError")
    ]
    # A fix between each run and a new error after it: the agent learns something each time.
    calls = [c for n, e in enumerate(errors) for c in (bash_failure(e), edit(n))]
    assert [send(c) for c in calls] == [None] * 12


def test_attempts_that_all_fail_with_nothing_between_that_worked() -> None:
    tried = [
        (
            "git merge feature --no-ff",
            "error: Your local changes to logs/a.json would be overwritten",
        ),
        (
            "git stash && git merge feature",
            "CONFLICT (modify/delete): logs/chat.json deleted in HEAD",
        ),
        ("git merge --abort && git merge feature", "error: Entry 'logs/b.json' not uptodate."),
        ("git reset --hard HEAD && rm -rf logs/", "Bash operation blocked by hook: rm -rf"),
        ("git reset --hard && git merge feature", "CONFLICT (modify/delete): logs/stop.json"),
        ("git rm logs/chat.json && git commit", "The following paths are ignored: logs"),
    ]
    out = said([bash_failure(f"Exit code 1\n{error}", command) for command, error in tried])
    assert out[:4] == [""] * 4
    assert out[4].startswith(
        "metacog: 5 attempts in a row failed, with nothing between that worked"
    )
    assert "`git merge feature --no-ff`" in out[4]
    assert out[5] == ""  # once a run
    # Something works, then a new run: said again.
    again = [bash("git status", "On branch main")] + [
        bash_failure(f"Exit code 1\n{error} (again)", f"{command} --retry")
        for command, error in tried
    ]
    assert [bool(x) for x in said(again)] == [False] * 5 + [True, False]
    # Whatever the tools' names, the question is whole and the observation within its cap.
    tool = "mcp__plugin_playwright_playwright__browser_navigate_with_a_long_name"
    pages = [
        refused(tool, f"Error: page.goto: net::ERR_CONNECTION_REFUSED at http://localhost:{p}/")
        for p in range(5170, 5175)
    ]
    last = said([{**p, "session_id": "s-long"} for p in pages])[-1]
    assert last.endswith("none of them changed?") and len(last) <= 300 + len("metacog: ")
    # Its look-alike, in a session of its own: the same six with one that worked between.
    broken = [bash_failure(f"Exit code 1\n{error}", command) for command, error in tried]
    broken.insert(3, read("/home/dev/project/logs/README.md"))
    assert not any(said([{**call, "session_id": "another-session"} for call in broken]))


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
    # session is Habit's to say: tests/test_habit.py,
    # test_the_same_error_patched_the_same_way_each_time.)
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

    # One attempt, met nine times: the same wall (metacog.perception.novelty.wall) that many
    # times, said once, as the batch's, and no streak of nine.
    said = batch(9)
    assert said[3].startswith("metacog: 4 calls of this batch, Bash `pytest -x`, met the same")
    assert [s for n, s in enumerate(said) if n != 3] == [""] * 8
    assert batch(1) == [""]  # the 2nd attempt
    said = batch(3)  # the 3rd attempt, again as a batch
    assert said[0].startswith("metacog: the same error 3 times") and said[1:] == ["", ""]
    batch(1)
    assert "state your assumption" in batch(1)[0]  # the 5th attempt, after the model answered


def test_a_parallel_batch_that_all_failed_is_one_attempt(tmp_path) -> None:
    # Six calls of one response, each failing its own way: one attempt, not a run of six.
    log = Transcript(tmp_path / "t.jsonl")
    ids = [f"toolu_p{n}" for n in range(6)]
    log.batch(ids)
    said = []
    for n, tool_use_id in enumerate(ids):
        fail = bash_failure(
            f"Exit code 1\ncat: docs/part{n}.md: No such file", f"cat docs/part{n}.md"
        )
        fail.update(transcript_path=str(log.path), tool_use_id=tool_use_id)
        said.append(agent_text(send(fail)))
    assert not any("in a row failed" in s for s in said)


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
    # Two readings of "nothing new" count on their own, each backing off twice as far each
    # time (`_stale`: little new, from the second; `_bare`: no new line, from the third):
    # at most one word in four calls over the stretch, and never closer than before.
    assert spoken and len(spoken) <= len(texts) // 4, (spoken, texts)
    gaps = [b - a for a, b in itertools.pairwise(spoken)]
    assert all(b >= a for a, b in itertools.pairwise(gaps)), spoken
    assert gaps[-1] > gaps[1], spoken


def test_the_third_obstacle_that_brought_no_line_at_all_is_said_after_an_early_word() -> None:
    # Three failures seen before, in turn: `_stale` speaks at the second that brought little
    # (call 4), before it is plain that the agent goes on; the third that brought no line at
    # all (call 5) is said by `_bare`, which counts on its own.
    cycle = [
        ("make db", "Exit code 2\ndb: lock_timeout on table users_v2"),
        ("make seed", "Exit code 2\nseed: relation users_v2 does not exist"),
        ("make api", "Exit code 2\napi: cannot reach db_host at port 5432"),
    ]
    texts = [
        agent_text(send(bash_failure(error, command=cmd))) for _ in range(2) for cmd, error in cycle
    ]
    assert [bool(t) for t in texts] == [False] * 4 + [True] * 2, texts
    assert "3 obstacles in the last 3 calls" in texts[5], texts[5]
    # Its look-alike: each failure brings a line never shown (another row each time).
    fresh = [
        agent_text(send({**bash_failure(f"{error} (row {n})", command=cmd), "session_id": "fresh"}))
        for n in range(2)
        for cmd, error in cycle
    ]
    assert not any("showed nothing" in t for t in fresh), fresh


def test_a_damaged_count_of_stale_observations_is_read_as_none() -> None:
    from metacog.senses import nociception
    from metacog.senses.contract import Context

    ctx = Context({"nociception": dict(nociception.DEFAULTS)}, {}, {})
    ctx.obstacle = True
    ctx.obstacles = [(1, 1, 0.0, 0, False, 0), (2, 2, 0.0, 0, False, 0)]
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


# What the streak quotes: the problem that names something, else the call --------------


W292 = (
    "Exit code 1\nW292 [*] No newline at end of file\n --> src/m{n}.py:6:14\n  |\nFound 1 error.\n"
)


def test_the_same_rule_after_every_write_is_a_habit() -> None:
    # mcp-venus-os 2773c7f118: a Write without a final newline, a lint failure, `echo >>`, again.
    calls = []
    for n in range(3):
        calls += [
            edit_file(f"/home/dev/project/src/m{n}.py", n),
            failed(f"uv run ruff check src/m{n}.py", W292.format(n=n)),
            bash(f'echo "" >> src/m{n}.py && uv run ruff check src/m{n}.py', "All checks passed!"),
        ]
    out = said(calls)
    assert not any(out[:7])
    assert "`W292 [*] No newline at end of file`" in out[7]  # as a streak or a habit


def test_three_different_rules_once_each_are_not_a_habit() -> None:
    calls = []
    for n, code in enumerate(
        (
            "W292 [*] No newline at end of file",
            "F401 `os` imported but unused",
            "E501 Line too long (120 > 100)",
        )
    ):
        calls += [
            edit_file(f"/home/dev/project/src/m{n}.py", n),
            failed(
                f"uv run ruff check src/m{n}.py", f"Exit code 1\n{code}\n --> src/m{n}.py:1:1\n"
            ),
        ]
    assert not any(said(calls))


def test_a_loop_on_a_failure_that_names_nothing_quotes_the_call() -> None:
    calls = [
        failed(
            "npm run build",
            "Exit code 1\nnpm error\nnpm error A complete log of this run can be found in",
        )
    ] * 3
    out = said(calls)
    assert "the same error 3 times in a row" in out[2]
    assert "Bash `npm run build`" in out[2] and "`npm error" not in out[2]


# The person's no: a call rejected or stopped again and again --------------------------


REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file)."
)


def test_the_person_rejecting_the_same_command_again_and_again() -> None:
    assert mistake("Bash", REJECTED) == "rejected"
    calls = []
    for n in range(3):
        calls += [
            failed(f"git push --force origin fix{n}", REJECTED),
            bash(f"git log -{n + 1}", f"c{n}"),
        ]
    out = said(calls)
    assert "the person rejected" in out[4] and "git push" in out[4] and not any(out[:4])


def test_a_person_reviewing_edits_rejects_each_proposal_once() -> None:
    # claude-code-log 0d3a8e6f: three edits of different files rejected while reviewing.
    calls = []
    for n in range(3):
        calls += [
            refused("Edit", REJECTED, file_path=f"/home/dev/project/src/m{n}.py"),
            read(f"/home/dev/project/src/m{n}.py"),
        ]
    assert not any(said(calls))


def test_rejections_of_different_pages_and_of_commands_after_cd() -> None:
    calls = []
    for page in ("dashboard", "settings", "billing"):
        calls += [
            refused("Edit", REJECTED, file_path=f"/home/dev/project/app/{page}/page.tsx"),
            read(f"/home/dev/project/app/{page}/layout.tsx"),
        ]
    for n, command in enumerate(("npm install left-pad", "git commit -m x", "rm -rf dist")):
        calls += [
            failed(f"cd /home/dev/project && {command}", REJECTED),
            read(f"/home/dev/project/c{n}.py"),
        ]
    assert not any(said(calls))


def test_an_interrupt_is_the_persons_word_not_the_agents_error() -> None:
    payload = copy.deepcopy(failed("sleep 100", "[Request interrupted by user for tool use]"))
    payload["is_interrupt"] = True
    out = said([payload, bash("ls", "a"), payload, bash("pwd", "/")])
    assert not any(out)  # twice: not yet a pattern


def test_the_person_stopping_different_calls_is_no_loop() -> None:
    calls = []
    for n, (tool, tool_input) in enumerate(
        (
            ("Bash", {"command": "npm test"}),
            ("Edit", {"file_path": "/home/dev/project/a.py"}),
            ("Read", {"file_path": "/home/dev/project/b.py"}),
        )
    ):
        stopped = refused(tool, "[Request interrupted by user for tool use]", **tool_input)
        stopped["is_interrupt"] = True
        calls += [stopped, read(f"/home/dev/project/src/r{n}.py")]
    assert not any(said(calls))


def test_the_same_command_stopped_again_and_again() -> None:
    calls = []
    for n in range(3):
        stopped = failed("npm run dev", "[Request interrupted by user for tool use]")
        stopped["is_interrupt"] = True
        calls += [stopped, read(f"/home/dev/project/src/r{n}.py")]
    out = said(calls)
    assert "the person stopped" in out[4] and not any(out[:4])


def test_unrelated_denials_far_apart_are_no_streak() -> None:
    calls = []
    for n, command in enumerate(
        ("rm -rf node_modules", "curl -X POST https://x", "git push --force")
    ):
        calls += [refused("Bash", BLOCKED.format(tool="Bash"), command=command)]
        calls += [bash(f"pytest -q -k t{n}{k}", f"{k} passed") for k in range(10)]
    assert not any("in a row" in s for s in said(calls))


# One place asked in other words -------------------------------------------------------


def test_one_place_searched_in_other_words_that_keeps_finding_nothing() -> None:
    # The look-alike of tests/test_novelty.py's three different questions that find nothing,
    # one search further: the fourth way of asking the same place, with nothing found by any,
    # is a search going nowhere (stale_empty_at: the three after the first brought nothing new).
    words = ("useSocket", "socketClient", "wsClient", "WebSocketProvider")
    out = said([grep(name) for name in words])
    assert out[:3] == [""] * 3
    assert "Grep `WebSocketProvider /home/dev/project` found nothing" in out[3], out


def test_the_same_words_in_other_places_are_a_search_that_moves() -> None:
    calls = [
        captured(
            "PostToolUse",
            "Grep",
            tool_input={"pattern": "createSocket", "path": f"/home/dev/project/{folder}"},
            tool_response={"mode": "files_with_matches", "filenames": [], "numFiles": 0},
        )
        for folder in ("src", "lib", "app", "server", "client", "shared")
    ]
    assert not any(said(calls))


# Refused calls (transcript only), subagents, a memory from an older version -----------


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


def test_a_streak_memory_from_before_the_facts_does_not_mute_the_next_streak(isolated_home) -> None:
    import json
    from pathlib import Path

    send(bash("git status"), now=T0)
    [path] = (Path(isolated_home) / "state" / "sessions").glob("*.json")
    st = json.loads(path.read_text())
    # What the previous version kept: the streak in Nociception's own memory, level 1 said.
    st["windows"]["main"]["senses"]["nociception"] = {"sig": "old", "count": 3, "level": 1}
    path.write_text(json.dumps(st))
    error = "Exit code 1\nModuleNotFoundError: No module named 'yaml'"
    out = [agent_text(send(failed("python x.py", error), now=T0 + 1 + i)) for i in range(3)]
    assert not any(out[:2]) and "the same error 3 times in a row" in out[2]


# Going around a guard ---------------------------------------------------------------------

DENIED = "Permission to use Bash has been denied."


def _around(tmp_path: Path, refused_commands: tuple, then: str) -> list[str]:
    """Refusals by the session's permissions (read from the transcript: no hook fires for
    them), each answered by a probe in its own turn, then a command that passes."""
    log = Transcript(tmp_path / "t.jsonl")
    out = []
    for command in refused_commands:
        log.refused("Bash", {"command": command}, DENIED)
        probe = read("/home/dev/project/README.md", transcript_path=str(log.path))
        out.append(agent_text(send(probe)))
    out.append(agent_text(send(bash(then, "", transcript_path=str(log.path)))))
    return out


def test_going_around_a_guard_that_refused_twice(tmp_path: Path) -> None:
    out = _around(tmp_path, ("rm -rf build/cache", "rm -r build/cache"), "mv build/cache /tmp/old")
    assert out[:2] == ["", ""]
    assert "the session's permissions refused Bash `rm -r build/cache` and 1 more" in out[2], out
    assert "Bash `mv build/cache /tmp/old`, does the same another way" in out[2]
    assert "Ask before going around it" in out[2]


@pytest.mark.parametrize(
    ("refused_commands", "then"),
    [
        pytest.param(("rm -rf build/cache",), "mv build/cache /tmp/old", id="refused-once"),
        pytest.param(("rm -rf dist", "rm -r dist"), "ls dist", id="a-question-after"),
        pytest.param(
            ("git push -u origin main", "git push origin main"),
            "git push --dry-run origin main",
            id="git-reads",
        ),
        pytest.param(
            ("rm -rf build/cache", "rm -r build/cache"), "npm run build", id="something-else"
        ),
        pytest.param(
            ("killall node || true", "killall -9 node || true"),
            "rm -f /tmp/x.lock || true",
            id="plumbing-is-no-object",
        ),
        pytest.param(
            ("curl https://example.com/api", "rm -rf dist"), "mv dist /tmp/d", id="two-programs"
        ),
        pytest.param(("rm -rf dist", "rm -rf dist"), "rm -rf dist", id="the-same-call-allowed"),
    ],
)
def test_what_is_not_going_around_a_guard(
    tmp_path: Path, refused_commands: tuple, then: str
) -> None:
    out = _around(tmp_path, refused_commands, then)
    assert not any(out), out


def test_a_damaged_memory_of_refusals_is_dropped() -> None:
    from metacog.senses.nociception import _guard

    cfg = {"stale_span": 10}
    assert _guard([5, 2, "dist", "blocked", "rm -rf dist"], 9, cfg)
    for damaged in (
        [5, 2, "dist", ["blocked"], "rm -rf dist"],  # unhashable where a kind was
        [5, 2, "dist", "rejected", "rm -rf dist"],  # not a guard's refusal
        [5, 2, "dist", "blocked"],  # an older shape
        [50, 2, "dist", "blocked", "rm -rf dist"],  # from a later call than now
        {"at": 5},
    ):
        assert not _guard(damaged, 9, cfg)


def test_a_remembered_refusal_without_a_command_is_no_failure(tmp_path: Path) -> None:
    # A damaged memory that still has the right shape (an empty command) must not raise.
    from metacog.senses import nociception

    class Ctx:
        responses = 0

    win = {"calls": 5, "nociception": {"guarded": [[4, 1, "x", "blocked", ""]]}}
    mem = win["nociception"]
    action = Call("Bash", "mv x y", ok=True)
    assert nociception._around(mem, action, win, Ctx(), {"stale_at": 1, "stale_span": 10}) is None
