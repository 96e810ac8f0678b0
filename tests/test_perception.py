"""Perception on work the senses were not built from (issue 17), by class: each situation as
a short sequence of real-shaped payloads, and the look-alike that must stay silent.

The failure texts are what real sessions printed (../shared/transcripts), shortened; the
payloads are the captured 2.1.328 shapes (tests/hooktest.py).
"""

from __future__ import annotations

import copy

import pytest
from hooktest import agent_text, bash, captured, edit, failed, read, send

from metacog.symptoms import mistake, names_something, problems

T0 = 1_800_000_000.0


def said(payloads: list[dict]) -> list[str]:
    return [agent_text(send(p, now=T0 + i)) for i, p in enumerate(payloads)]


# 1. Banners and summaries are not the problem; a quoted problem names something -----------


@pytest.mark.parametrize(
    ("line", "named"),
    [
        pytest.param("Error", False, id="bare-error"),
        pytest.param("npm error", False, id="npm-error"),
        pytest.param("- 5 errors", False, id="count"),
        pytest.param("Test Files  1 failed | 50 passed | 8 skipped (59)", False, id="summary"),
        pytest.param(
            "Unauthorized access to this system is forbidden and will be", False, id="ssh-banner"
        ),
        pytest.param("Enable hot reload [y]: Enable CSS injection [y]:", False, id="prompt-text"),
        pytest.param("W292 [*] No newline at end of file", True, id="rule-code"),
        pytest.param("error: could not compile `templar`", True, id="quoted-name"),
        pytest.param("src/app.ts:12:3 - error TS2345: Argument", True, id="placed"),
        pytest.param("TypeError: cannot read properties of undefined", True, id="exception-type"),
        pytest.param("response body must be closed (bodyclose)", True, id="linter-rule"),
        pytest.param("Request failed with status code 403", True, id="http-status"),
        pytest.param(
            "API Error: Claude's response exceeded the 8000 output token maximum", True, id="limit"
        ),
    ],
)
def test_a_line_names_something(line: str, named: bool) -> None:
    assert names_something(line) is named


def test_a_rule_code_at_the_margin_is_a_diagnostic_whatever_its_words() -> None:
    # ruff's output format: the code first, the place on the next line, no "error" anywhere.
    out = problems("W292 [*] No newline at end of file\n --> src/a.py:6:14\n  |\nFound 1 error.\n")
    assert [p[3] for p in out] == ["W292 [*] No newline at end of file"]


def test_the_summary_beside_named_problems_is_not_one() -> None:
    text = " FAIL  a.test.ts > suite > creates a record\nAssertionError: expected undefined to be defined\n"
    text += " Test Files  1 failed | 50 passed (51)\n"
    found = [p[3] for p in problems(text)]
    assert "AssertionError: expected undefined to be defined" in found  # the named problem is
    assert not any("Test Files" in line for line in found)


W292 = (
    "Exit code 1\nW292 [*] No newline at end of file\n --> src/m{n}.py:6:14\n  |\nFound 1 error.\n"
)


def test_the_same_rule_after_every_write_is_a_habit() -> None:
    # mcp-venus-os 2773c7f118: a Write without a final newline, a lint failure, `echo >>`, again.
    calls = []
    for n in range(3):
        calls += [
            edit(f"/home/dev/project/src/m{n}.py", n),
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
            edit(f"/home/dev/project/src/m{n}.py", n),
            failed(
                f"uv run ruff check src/m{n}.py", f"Exit code 1\n{code}\n --> src/m{n}.py:1:1\n"
            ),
        ]
    assert not any(said(calls))


def test_a_line_that_names_nothing_is_never_the_same_problem() -> None:
    # The ssh banner every command to that host prints, beside a different problem each time.
    banner = "Unauthorized access to this system is forbidden and will be prosecuted"
    calls = []
    for n, problem in enumerate(
        (
            "npm ci can only install with an existing package-lock.json",
            "connect ECONNREFUSED 127.0.0.1:5432",
            'password authentication failed for user "api"',
        )
    ):
        calls += [
            failed(f"ssh host 'deploy {n}'", f"Exit code 1\n{banner}\n{problem}"),
            bash(f"git log -{n + 1}", f"commit {n}"),
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


# Failures that look like successes -----------------------------------------------------

VITEST = (
    " FAIL  test/regression.test.ts > CRUD > should create record within budget\n"
    "AssertionError: expected undefined to be defined\n"
    " ❯ test/regression.test.ts:322:37\n\n"
    " Test Files  1 failed | 50 passed | 8 skipped (59)\n"
    "      Tests  3 failed | 652 passed | 27 skipped (682)\n"
)


def test_a_vitest_run_piped_into_tail_that_failed() -> None:
    calls = []
    for n in range(3):
        calls += [
            bash("npm run test:offline 2>&1 | tail -30", VITEST),
            edit("/home/dev/project/test/regression.test.ts", n),
        ]
    out = said(calls)
    assert not any(out[:4])
    assert "should create record within budget" in out[4]


def test_a_green_vitest_run_is_not_a_failure() -> None:
    green = " Test Files  51 passed (51)\n      Tests  655 passed | 27 skipped (682)\n"
    calls = []
    for n in range(3):
        change = edit("/home/dev/project/src/a.ts", n)
        change["tool_response"]["newString"] = f"return {n}"  # each edit changes something else
        calls += [bash("npm run test:offline 2>&1 | tail -30", green), change]
    assert not any(said(calls))


def task(answer: str, n: int = 0) -> dict:
    """A Task call as the transcript records its result (toolUseResult: status, content)."""
    payload = captured("PostToolUse", "Bash")
    payload.update(
        tool_name="Task",
        tool_input={
            "description": f"Create document {n}",
            "prompt": "Create a comprehensive guide",
        },
        tool_response={
            "status": "completed",
            "content": [{"type": "text", "text": answer}],
            "totalTokens": 0,
        },
    )
    return payload


API_ERROR = (
    "API Error: Claude's response exceeded the 8000 output token maximum. To configure this "
    "behavior, set the CLAUDE_CODE_MAX_OUTPUT_TOKENS environment variable."
)


def test_subagents_that_answer_with_the_same_api_error() -> None:
    # moai-flow 505bf6a22b: "comprehensive" documents asked of subagents, cut at 8000 tokens.
    calls = []
    for n in range(3):
        calls += [task(API_ERROR, n), task("Done: the document is written.", n + 10)]
    out = said(calls)
    assert not any(out[:4])
    assert "8000 output token maximum" in out[4]


def test_a_subagent_that_reports_on_an_error_did_its_work() -> None:
    answer = "I fixed it. The API Error: 500 from the backend came from a missing header."
    assert not any(said([task(answer, n) for n in range(4)]))


# 2. The same obstacle through different tools -----------------------------------------


def refused(tool: str, error: str, **tool_input: object) -> dict:
    payload = captured("PostToolUseFailure", "Bash", error=error, tool_input=tool_input)
    payload["tool_name"] = tool
    return payload


BLOCKED = "Permission to use {tool} has been denied. IMPORTANT: You *may* attempt to accomplish this action using other tools"


def test_a_blocked_target_approached_by_three_tools_is_one_obstacle() -> None:
    assert mistake("Bash", BLOCKED.format(tool="Bash")) == mistake(
        "Read", BLOCKED.format(tool="Read")
    )
    calls = [
        refused("Bash", BLOCKED.format(tool="Bash"), command="cat ~/.claude/settings.json"),
        bash("git status", "On branch main"),
        refused("Read", BLOCKED.format(tool="Read"), file_path="/home/dev/.claude/settings.json"),
        bash("git log -1", "abc"),
        refused("Grep", BLOCKED.format(tool="Grep"), pattern="hooks", path="/home/dev/.claude"),
    ]
    out = said(calls)
    assert not any(out[:4])
    assert "permissions do not allow" in out[4]


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


def test_a_command_that_never_returns_again_and_again() -> None:
    hung = "Command timed out after 2m 0.0s"
    calls = []
    for n, command in enumerate(("npm run dev", "npx vite", "npm start")):
        calls += [failed(command, hung), bash(f"curl -s localhost:517{n}", "")]
    out = said(calls)
    assert "did not return" in out[4] and not any(out[:4])


def test_different_obstacles_are_exploring() -> None:
    calls = [
        refused("Bash", BLOCKED.format(tool="Bash"), command="cat ~/.ssh/config"),
        failed("npm run dev", "Command timed out after 2m 0.0s"),
        refused(
            "Write",
            "File has not been read yet. Read it first before writing to it.",
            file_path="/home/dev/project/a.py",
        ),
    ]
    assert not any(said(calls))


def test_an_interrupt_is_the_persons_word_not_the_agents_error() -> None:
    payload = copy.deepcopy(failed("sleep 100", "[Request interrupted by user for tool use]"))
    payload["is_interrupt"] = True
    out = said([payload, bash("ls", "a"), payload, bash("pwd", "/")])
    assert not any(out)  # twice: not yet a pattern


def test_reading_a_test_file_is_not_a_failure() -> None:
    assert not any(said([read("/home/dev/project/tests/test_a.py")] * 2))


# 3. Searches that cannot succeed, reads that show nothing new ------------------------------


def ranged(path: str, offset: int, limit: int) -> dict:
    payload = read(path)
    payload["tool_input"].update(offset=offset, limit=limit)
    return payload


def test_small_overlapping_windows_over_one_unchanged_file() -> None:
    path = "/home/dev/project/internal/server/websocket.go"
    calls = []
    for n, offset in enumerate((100, 110, 95, 105, 100)):
        calls += [ranged(path, offset, 30), bash(f"git log -{n + 1}", f"c{n}")]
    out = said(calls)
    assert any("websocket.go" in s and "times without editing it" in s for s in out), out


def test_paging_through_a_file_is_not_rereading_it() -> None:
    path = "/home/dev/project/src/big.py"
    calls = [ranged(path, offset, 100) for offset in range(0, 1000, 100)]
    assert not any(said(calls))


def test_overlapping_windows_with_edits_between_are_work() -> None:
    path = "/home/dev/project/src/app.py"
    calls = []
    for n in range(5):
        calls += [ranged(path, 100 + n, 30), edit(path, n)]
    assert not any(said(calls))


def grep(pattern: str, found: int = 0) -> dict:
    return captured(
        "PostToolUse",
        "Grep",
        tool_input={"pattern": pattern, "path": "/home/dev/project"},
        tool_response={
            "mode": "files_with_matches",
            "filenames": ["src/app.py"] * found,
            "numFiles": found,
        },
    )


def test_the_same_empty_search_far_apart() -> None:
    calls = []
    for n in range(3):
        calls += [grep("useWebSocketClient")] + [
            read(f"/home/dev/project/src/m{n}{k}.py") for k in range(6)
        ]
    out = said(calls)
    assert "found nothing 3 times" in out[14] and "useWebSocketClient" in out[14]
    assert not any(out[:14]) and not any(out[15:])


def test_grep_exit_1_is_not_found_not_an_error() -> None:
    calls = []
    for n in range(3):
        calls += [
            failed("grep -rn 'connectSocket' src/", "Exit code 1"),
            read(f"/home/dev/project/src/a{n}.py"),
        ]
    out = said(calls)
    assert "found nothing 3 times" in out[4] and "same error" not in out[4]


def test_searching_again_after_an_edit_is_checking() -> None:
    calls = []
    for n in range(4):
        calls += [grep("TODO(remove)"), edit(f"/home/dev/project/src/m{n}.py", n)]
    assert not any(said(calls))


def test_different_searches_that_find_nothing_are_exploring() -> None:
    calls = [grep(name) for name in ("useSocket", "socketClient", "wsClient")]
    assert not any(said(calls))


def test_one_place_searched_in_other_words_that_keeps_finding_nothing() -> None:
    # The look-alike of the one above, one search further: the fourth way of asking the same
    # place, with nothing found by any, is a search going nowhere (stale_empty_at: the three
    # after the first brought nothing new).
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


# 4. The same failure spread across the session ------------------------------------------

TYPE_ERROR = "Exit code 2\nsrc/config.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'."


def test_the_same_error_patched_the_same_way_each_time() -> None:
    # Fixed, passing, and back: a pass of the command does not make the next time the first.
    calls = []
    for n in range(6):
        calls += [
            failed("npx tsc --noEmit", TYPE_ERROR),
            edit("/home/dev/project/src/config.ts", n),
            bash("npx tsc --noEmit", ""),
            read(f"/home/dev/project/src/m{n}.ts"),
        ]
    out = said(calls)
    spoken = [i for i, s in enumerate(out) if s]
    assert spoken == [8, 20], out  # the 3rd time, and the 6th: it went on after it was told
    assert "for the 3rd time this session" in out[8] and "TS2322" in out[8]
    assert "for the 6th time this session" in out[20]


def test_one_error_fixed_then_others_is_progress() -> None:
    calls = [failed("npx tsc --noEmit", TYPE_ERROR), edit("/home/dev/project/src/config.ts", 0)]
    for n, message in enumerate(
        (
            "Cannot find name 'foo'.",
            "Property 'bar' does not exist on type 'X'.",
            "Argument of type 'null' is not assignable.",
        )
    ):
        calls += [
            failed("npx tsc --noEmit", f"Exit code 2\nsrc/m{n}.ts(3,1): error TS2304: {message}"),
            edit(f"/home/dev/project/src/m{n}.ts", n),
        ]
    assert not any(said(calls))


def test_a_command_that_asks_for_input_again_and_again() -> None:
    calls = []
    for n, command in enumerate(("npx create-next-app web", "npm init", "npx prisma migrate dev")):
        error = (
            f"Exit code 1\n? Would you like to continue? ›\nError: EOF when reading a line ({n})"
        )
        calls += [failed(command, error), bash(f"git log -{n + 1}", f"c{n}")]
    out = said(calls)
    assert "stopped to ask for input" in out[4] and not any(out[:4])


def test_an_mcp_server_that_is_not_connected_whichever_tool_is_called() -> None:
    calls = []
    for n, tool in enumerate(("mcp__attio__search", "mcp__attio__get", "mcp__attio__create")):
        calls += [
            refused(tool, 'Error: MCP server "attio" is not connected'),
            bash(f"git log -{n + 1}", f"c{n}"),
        ]
    out = said(calls)
    assert "tool that is not available" in out[4]


def bash_output(status: str, stdout: str) -> dict:
    payload = captured("PostToolUse", "Bash")
    payload.update(
        tool_name="BashOutput",
        tool_input={"bash_id": "bash_5"},
        tool_response={
            "shellId": "bash_5",
            "command": "npm run dev",
            "status": status,
            "exitCode": None,
            "stdout": stdout,
            "stderr": "",
        },
    )
    return payload


def test_waiting_on_a_background_job_is_not_going_in_circles() -> None:
    calls = []
    for _ in range(5):
        calls += [bash("sleep 5", ""), bash_output("running", "compiling...")]
    assert not any(said(calls))


def test_polling_a_finished_job_again_and_again_is_circling() -> None:
    calls = [bash_output("completed", "Server listening on :3000")] * 4
    assert "4 times in a row with the same result" in said(calls)[3]


# The review's cases: look-alikes each rule must leave silent --------------------------


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


def test_a_window_sliding_forward_with_overlap_is_paging() -> None:
    path = "/home/dev/project/src/big.py"
    assert not any(said([ranged(path, offset, 100) for offset in range(0, 1000, 50)]))


def test_sections_of_a_file_read_whole_are_focusing() -> None:
    path = "/home/dev/project/server/routes.py"
    calls = [read(path)] + [ranged(path, offset, 60) for offset in (400, 900, 1300)]
    assert not any(said(calls))


def test_a_health_check_that_fails_while_the_server_boots() -> None:
    down = "Exit code 7\ncurl: (7) Failed to connect to localhost port 3000: Connection refused"
    calls = []
    for n in range(4):
        calls += [
            edit("/home/dev/project/src/api.ts", n),
            failed("curl -sf localhost:3000/health", down),
            bash("sleep 2", ""),
            bash("curl -sf localhost:3000/health", '{"ok":true}'),
        ]
    assert not any(said(calls))


def test_a_login_shells_tty_noise_is_not_a_prompt() -> None:
    noise = "mesg: ttyname failed: Inappropriate ioctl for device"
    assert mistake("Bash", f'Exit code 1\n{noise}\nError: relation "users" does not exist') == ""


def test_an_apps_own_log_in_a_green_run_is_not_a_failure() -> None:
    green = "  3 failed login attempts for bob\n Test Files  4 passed (4)\n      Tests  12 passed (12)\n"
    calls = []
    for n in range(3):
        change = edit("/home/dev/project/src/auth.ts", n)
        change["tool_response"]["newString"] = f"return {n}"
        calls += [bash("npx vitest run", green), change]
    assert not any(said(calls))


def test_a_subagent_answer_that_begins_with_the_word_error() -> None:
    from metacog.hidden import hidden_failure

    answer = {
        "content": [{"type": "text", "text": "Error handling in the API layer is inconsistent."}]
    }
    assert hidden_failure("Task", {}, answer) == ""


def test_an_edit_during_the_cooldown_still_changes_the_world() -> None:
    path = "/home/dev/project/src/app.py"
    calls = [read(path)] * 3 + [
        grep("legacyHandler"),
        edit(path, 1),
        grep("legacyHandler"),
        read("/home/dev/project/src/b.py"),
        grep("legacyHandler"),
    ]
    out = said(calls)
    assert "times without editing it" in out[2]
    assert not any("found nothing" in s for s in out)


def test_quiet_searches_and_writing_commands_are_not_empty_answers() -> None:
    from metacog.action import found_nothing

    quiet = {"stdout": "", "stderr": ""}
    assert not found_nothing("Bash", {"command": "grep -q TODO src/a.py"}, quiet, "")
    assert not found_nothing("Bash", {"command": "git add -A"}, quiet, "")
    assert found_nothing("Bash", {"command": "git grep -n legacyHandler"}, quiet, "")
    assert not found_nothing("Grep", {}, {"numFiles": 0, "timedOut": True}, "")


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


def test_the_same_missing_file_guessed_again_and_again() -> None:
    missing = refused(
        "Read",
        "File does not exist. Note: your current working directory is /home/dev/project.",
        file_path="/home/dev/project/src/config/settings.py",
    )
    calls = []
    for n in range(3):
        calls += [missing, bash(f"ls src/m{n}", "a.py")]
    out = said(calls)
    assert "has found nothing 3 times" in out[4] and "settings.py" in out[4]
    assert not any(out[:4])


def test_three_different_missing_files_are_exploring() -> None:
    calls = [
        refused("Read", "File does not exist.", file_path=f"/home/dev/project/src/{name}.py")
        for name in ("config", "settings", "conf")
    ]
    assert not any(said(calls))
