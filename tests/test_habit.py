"""metacog.senses.habit: the same problem or mistake back across the session, with other work
between (stuck work no streak shows), each as a short sequence of real-shaped payloads, and
the look-alikes that are progress.

Failures carry the texts real sessions printed (../shared/transcripts), shortened.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import (
    BLOCKED,
    T0,
    agent_text,
    bash,
    captured,
    edit,
    failed,
    read,
    refused,
    said,
    send,
)
from transcripts import Transcript

from metacog.perception.symptoms import mistake

# The same error with other calls between -----------------------------------------------

FORBIDDEN = "Exit code 1\nHTTP 403: Resource not accessible by integration (https://api.github.com/repos/o/r/issues)"


def test_the_same_403_between_successful_probes() -> None:
    calls = []
    for i in range(3):
        calls += [
            failed(f"gh api repos/o/r/issues -f title=t{i}", FORBIDDEN),
            bash('python -c \'import os; print(os.environ.get("GH_TOKEN", "")[:4])\'', "ghs_"),
            failed(
                "gh auth status", f"Exit code 1\nX Failed to log in to github.com using token {i}"
            ),
            bash("git status", "On branch main"),
        ]
    out = said(calls)
    assert not any(out[:8])  # another error between: no streak
    # Habit names the habit; Nociception may lead with the obstacles that brought nothing new.
    assert "the same problem is back for the 3rd time this session" in out[8]
    assert "HTTP 403: Resource not accessible by integration" in out[8]
    assert not any(out[9:])  # once per problem and session


def test_the_same_type_error_across_four_builds_with_fixes_between() -> None:
    error = (
        "Exit code 2\nsrc/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "Found 1 error."
    )
    calls = []
    for i in range(3):
        calls += [
            failed("npm run build", error),
            read(f"/home/dev/project/src/app{i}.ts"),
            edit(f"/home/dev/project/src/other{i}.ts", i),
            failed("npm test", f"Exit code 1\nFAIL t{i}"),
        ]
    out = said(calls)
    assert "Type 'string' is not assignable to type 'number'" in out[8]
    assert sum(bool(s) for s in out) == 1


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


# The same mistake, each time fixed in one call -------------------------------------------


def test_edit_before_read_again_and_again(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    out = []
    for i in range(3):
        path = f"/home/dev/project/src/m{i}.py"
        log.refused(
            "Edit",
            {"file_path": path, "old_string": "a", "new_string": "b"},
            "File has not been read yet. Read it first before writing to it.",
        )
        for payload in (
            read(path),
            edit(path, i),
            bash("git diff --stat", f"1 file changed, {i} insertions"),
        ):
            payload["transcript_path"] = str(log.path)
            out.append(agent_text(send(payload)))
    spoke = [s for s in out if s]
    assert len(spoke) == 1 and out[6] == spoke[0]  # heard with the call after the 3rd refusal
    assert (
        "this is the 3rd time this session: an Edit or Write of a file not Read first" in spoke[0]
    )


def test_an_old_string_not_found_or_found_twice_is_one_habit(tmp_path: Path) -> None:
    # Claude Code's two answers to an old_string that does not pick out one place: "not
    # found" and "Found 2 matches", on one file and another, each retried: one habit.
    log = Transcript(tmp_path / "t.jsonl")
    answers = (
        "String to replace not found in file.\nString: def load(path):",
        "Found 2 matches of the string to replace, but replace_all is false. To replace all "
        "occurrences, set replace_all to true.",
        "String to replace not found in file.\nString: return cfg",
    )
    out = []
    for i, answer in enumerate(answers):
        path = f"/home/dev/project/src/config{i}.py"
        log.refused("Edit", {"file_path": path, "old_string": "x", "new_string": "y"}, answer)
        for payload in (read(path), edit(path, i), bash(f"pytest -q tests/t{i}.py", "1 passed")):
            payload["transcript_path"] = str(log.path)
            out.append(agent_text(send(payload)))
    assert out[:6] == [""] * 6  # twice is not yet a habit
    assert (
        "this is the 3rd time this session: an Edit whose old_string does not pick out one place"
        in out[6]
    ), out


# Refusals and blocked calls, whichever tool meets them ------------------------------------


def test_a_command_the_permissions_block_again_and_again(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    out = []
    for command in ('claude -p "list tools" | head', 'claude -p "list tools"', "claude --version"):
        log.refused("Bash", {"command": command}, "This command requires approval")
        probe = captured("PostToolUse", "Glob", transcript_path=str(log.path))
        out.append(agent_text(send(probe)))
    assert out[:2] == ["", ""]
    assert "requires approval" in out[2] or "permissions do not allow" in out[2]


def test_no_such_tool_three_times(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "t.jsonl")
    out = []
    for i in range(3):
        log.refused(
            "AskUserQuestion",
            {"question": f"q{i}"},
            "Error: No such tool available: AskUserQuestion",
        )
        payload = read(f"/home/dev/project/README{i}.md")
        payload["transcript_path"] = str(log.path)
        out.append(agent_text(send(payload)))
    assert out[:2] == ["", ""] and out[2]


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


def test_a_guards_refusal_is_the_same_no_however_far_apart() -> None:
    # The session's permissions do not change by themselves: a third refusal 140 calls after
    # the first is the third, where another mistake that far apart counts from one again.
    # The look-alike: a command that did not return, as far apart, stays silent.
    def session(obstacles: list[dict]) -> list[str]:
        calls = []
        for n, obstacle in enumerate(obstacles):
            calls.append(obstacle)
            calls += [read(f"/home/dev/project/src/m{n}_{i}.py", f"x = {i}\n") for i in range(70)]
        return said(calls)

    guard = session(
        [
            refused("Bash", BLOCKED.format(tool="Bash"), command="cat ~/.ssh/config"),
            refused("Read", BLOCKED.format(tool="Read"), file_path="/home/dev/.ssh/config"),
            refused("Bash", BLOCKED.format(tool="Bash"), command="ls ~/.ssh"),
        ]
    )
    assert not any(guard[:-71]) and "permissions do not allow" in guard[-71], guard
    hung = "Command timed out after 2m 0.0s"
    timeouts = session(
        [failed("npm run dev", hung), failed("npx vite", hung), failed("npm start", hung)]
    )
    assert not any(timeouts), [t for t in timeouts if t]


def test_a_command_that_never_returns_again_and_again() -> None:
    hung = "Command timed out after 2m 0.0s"
    calls = []
    for n, command in enumerate(("npm run dev", "npx vite", "npm start")):
        calls += [failed(command, hung), bash(f"curl -s localhost:517{n}", "")]
    out = said(calls)
    assert "did not return" in out[4] and not any(out[:4])


def test_a_command_that_asks_for_input_again_and_again() -> None:
    calls = []
    for n, command in enumerate(("npx create-next-app web", "npm init", "npx prisma migrate dev")):
        error = (
            f"Exit code 1\n? Would you like to continue? ›\nError: EOF when reading a line ({n})"
        )
        calls += [failed(command, error), bash(f"git log -{n + 1}", f"c{n}")]
    out = said(calls)
    assert "stopped to ask for input" in out[4] and not any(out[:4])


def stopped(command: str) -> dict:
    """A command the person interrupted while it ran (PostToolUseFailure, is_interrupt)."""
    payload = failed(command, "[Request interrupted by user for tool use]")
    payload["is_interrupt"] = True
    return payload


def test_the_person_stops_calls_to_the_same_server_again_and_again() -> None:
    asks = (
        'curl -s "http://localhost:3000/api/menu/items?type=FOOD" | head -50',
        'curl -s http://localhost:3000/api/menu | grep -A 5 "isRecommended"',
        "curl -s http://localhost:3000/api/menu | jq '.categories[0]'",
    )
    calls = []
    for n, command in enumerate(asks):
        calls += [stopped(command), read(f"/home/dev/project/src/route{n}.ts")]
    out = said(calls)
    assert "a call the person stopped" in out[4] and "localhost:3000" in out[4]
    assert not any(out[:4])
    # Its look-alike: three servers, each stopped once, is no habit.
    others = [stopped(f"curl -s http://localhost:{port}/health") for port in (4001, 4002, 4003)]
    between = [read(f"/home/dev/project/src/page{n}.tsx") for n in range(3)]
    assert not any(said([c for pair in zip(others, between, strict=True) for c in pair]))


def test_an_mcp_server_that_is_not_connected_whichever_tool_is_called() -> None:
    calls = []
    for n, tool in enumerate(("mcp__attio__search", "mcp__attio__get", "mcp__attio__create")):
        calls += [
            refused(tool, 'Error: MCP server "attio" is not connected'),
            bash(f"git log -{n + 1}", f"c{n}"),
        ]
    out = said(calls)
    assert "tool that is not available" in out[4]


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


# A cycle with no change ------------------------------------------------------------------


def test_kill_restart_poll_with_a_new_pid_each_time() -> None:
    calls = []
    for pid in (4101, 4188, 4242):
        calls += [
            bash("pkill -f 'node server.js'", ""),
            bash(
                "nohup node server.js > server.log 2>&1 & echo started pid $!", f"started pid {pid}"
            ),
            bash(
                "sleep 2 && tail -3 server.log",
                f"pid {pid} listening\nError: listen EADDRINUSE: :::3000",
            ),
        ]
    out = said(calls)
    assert not any(out[:6])
    # The third kill of a server that comes back the same way: heard before the third poll.
    assert "pkill -f 'node server.js'` 3 times in the last 8 calls with the same result" in out[6]


# The same command failing with the same exit code, nothing edited ------------------------


def test_a_missing_command_with_varying_text() -> None:
    out = said(
        [
            failed("pytest -x", f"Exit code 127\n(eval):1: command not found: pytest{s}")
            for s in ("", " ", "  ")
        ]
        + [failed("pytest -x", "Exit code 127\n/bin/bash: line 1: pytest: command not found")]
    )
    assert out[2].startswith("metacog: the same error 3 times in a row")


def test_the_same_exit_1_with_other_messages_is_exploring() -> None:
    errors = [
        f"Exit code 1\nImportError: cannot import name '{n}' from 'app'" for n in ("a", "b", "c")
    ]
    assert said([failed("python -m app", e) for e in errors]) == ["", "", ""]


# Banners are not the error: progress on compile errors ------------------------------------


def test_go_build_with_a_new_error_each_round_is_progress() -> None:
    rounds = [
        "internal/config/validate.go:40:6: validateConfig redeclared in this block",
        'internal/config/plugins.go:4:2: "fmt" imported and not used',
        "internal/adapters/filter.go:12:9: cannot use f (variable of type FileFilter) as Filter value",
        "internal/config/loader.go:88:14: undefined: ValidateConfigWithDetails",
    ]
    out = []
    for i, diagnostic in enumerate(rounds):
        error = f"Exit code 1\n# github.com/o/templar/internal/config\n{diagnostic}\nFAIL\tgithub.com/o/templar [build failed]"
        out += said(
            [failed("go build ./...", error), edit(f"/home/dev/project/internal/config/f{i}.go", i)]
        )
    assert out == [""] * 8


def test_failed_to_compile_banner_with_different_errors() -> None:
    errors = [
        "Failed to compile.\n\n./src/App.tsx\nModule not found: Error: Can't resolve './Header'",
        "Failed to compile.\n\n./src/Header.tsx:3:10\nType error: Property 'title' does not exist",
        "Failed to compile.\n\n./src/Footer.tsx:8:1\nSyntax error: Unexpected token",
    ]
    out = []
    for i, error in enumerate(errors):
        out += said(
            [
                failed("npm run build", f"Exit code 1\n{error}"),
                edit(f"/home/dev/project/src/x{i}.tsx", i),
            ]
        )
    assert out == [""] * 6


def test_a_shrinking_failure_count_is_progress() -> None:
    # Fewer tests fail each run and what fails in the one being worked on changes: advancing.
    # (One failing the same way run after run while others are fixed is the same problem back.)
    tests = ["test_a", "test_b", "test_c", "test_d"]
    out = []
    for n in range(4, 0, -1):
        lines = "\n".join(
            f"FAILED tests/test_app.py::{t} - AssertionError: assert {n} == 0"
            for t in tests[4 - n :]
        )
        out += said(
            [
                failed("pytest -q", f"Exit code 1\n{lines}\n{n} failed, {10 - n} passed"),
                edit("/home/dev/project/src/app.py", n),
            ]
        )
    assert out == [""] * 8


# One at a time: a linter re-run after each single fix -------------------------------------


def test_a_linter_rerun_after_each_single_fix() -> None:
    out = []
    for first in (283, 319, 355):
        error = (
            "\n".join(
                f"internal/server/ws_test.go:{line}:36: response body must be closed (bodyclose)\n"
                "\t\tconn, _, err := websocket.Dial(ctx, url, nil)\n\t\t                ^"
                for line in (first, first + 36, first + 72)
            )
            + "\n3 issues:\n* bodyclose: 3"
        )
        out += said(
            [
                failed("golangci-lint run --enable-only bodyclose", f"Exit code 1\n{error}"),
                read("/home/dev/project/internal/server/ws_test.go"),
                edit("/home/dev/project/internal/server/ws_test.go", first),
            ]
        )
    assert not any(out[:6])
    assert "has failed 3 times with the same kind of error at a new place each time" in out[6]
    assert "response body must be closed (bodyclose)" in out[6]


# Calm ------------------------------------------------------------------------------------------


def test_polling_whose_output_changes() -> None:
    polls = [
        captured(
            "PostToolUse",
            "Bash",
            tool_name="BashOutput",
            tool_input={"bash_id": "7d95c5"},
            tool_response={
                "shellId": "7d95c5",
                "status": "running",
                "exitCode": None,
                "stdout": "",
                "stderr": "Resolved 4 packages\n" + "Building\n" * n,
            },
        )
        for n in range(6)
    ]
    assert said(polls) == [""] * 6


def test_repetition_the_person_asked_for() -> None:
    ask = captured(
        "UserPromptSubmit", prompt="run the flaky test 5 times and tell me how often it fails"
    )
    flaky = failed(
        "pytest -k flaky", "Exit code 1\nFAILED tests/test_net.py::test_flaky - TimeoutError"
    )
    assert said([ask] + [flaky, bash("git status", "clean")] * 4 + [flaky]) == [""] * 10


# Look-alikes found in review ------------------------------------------------------------------


def test_compile_errors_fixed_one_per_round_from_a_list_are_progress() -> None:
    errors = [f"c.go:{n}:5: x{n} declared and not used" for n in (10, 11, 12)]
    out = []
    for k in range(3):
        error = (
            "Exit code 1\n# example.com/m\n"
            + "\n".join(errors[k:])
            + "\nFAIL\texample.com/m [build failed]"
        )
        out += said([failed("go build ./...", error), edit("/home/dev/project/c.go", k)])
    assert out == [""] * 6


def test_pytest_collection_banners_are_not_the_problem() -> None:
    out = []
    for mod in ("alpha", "beta", "gamma"):
        error = (
            "Exit code 2\n============ test session starts ============\ncollected 412 items / 1 error\n"
            f"E   ModuleNotFoundError: No module named '{mod}'\n!!!! Interrupted: 1 error during collection !!!!"
        )
        out += said([failed("pytest -q", error), edit(f"/home/dev/project/{mod}.py")])
    assert out == [""] * 6


def test_missing_packages_and_headers_are_not_a_wrong_cwd() -> None:
    errors = [
        (
            "javac Main.java",
            "Exit code 1\nMain.java:1: error: package com.google.gson does not exist",
        ),
        ("mvn -q compile", "Exit code 1\n[ERROR] package org.slf4j does not exist"),
        (
            "gcc main.c",
            "Exit code 1\nmain.c:1:10: fatal error: curl/curl.h: No such file or directory",
        ),
    ]
    assert said([failed(c, e) for c, e in errors]) == ["", "", ""]


def test_git_failing_three_ways_with_exit_128_is_exploring() -> None:
    errors = [
        "fatal: could not read Username for 'https://github.com'",
        "fatal: Authentication failed",
        "remote: Permission to o/r.git denied to bot.\nfatal: unable to access: The requested URL returned error: 403",
    ]
    assert said([failed("git push", f"Exit code 128\n{e}") for e in errors]) == ["", "", ""]


def test_damaged_sense_memory_does_not_stop_the_session_sensing(isolated_home) -> None:
    import json

    fail = failed("pytest -x", "Exit code 1\nKeyError: 'user'")
    send(fail, now=T0)
    [path] = (isolated_home / "state" / "sessions").glob("*.json")
    st = json.loads(path.read_text())
    senses = st["windows"]["main"]["senses"]
    senses["vestibular"] = {"max_reads": float("nan"), "repeat": "3", "reads": []}
    senses["habit"] = {"seen": {"e 1": [1], "m x": "y"}, "runs": [1, 2]}
    path.write_text(
        json.dumps(st)
    )  # json writes NaN for float("nan"); no JSON reader should accept it
    out = [
        agent_text(send(p, now=T0 + i))
        for i, p in enumerate([fail, fail, read("/home/dev/project/a.py"), fail], 1)
    ]
    assert out[3].startswith(
        "metacog: the same error 3 times in a row"
    )  # set aside, sensing again from the next call
    senses["vestibular"] = {
        "max_reads": "9",
        "repeat": [3],
    }  # wrong types, valid JSON: kept, read as 0
    senses["habit"] = {"seen": {"e 1": [1], "m x": "y"}, "runs": [1, 2]}
    path.write_text(json.dumps(st))
    out = [
        agent_text(send(p, now=T0 + 10 + i))
        for i, p in enumerate([fail, read("/home/dev/project/a.py"), fail])
    ]
    assert out[2].startswith("metacog: the same error 3 times in a row")


def test_a_nul_in_the_error_is_still_that_error() -> None:
    errors = [
        f"Exit code 1\nUnicodeDecodeError: byte 0x00\x00 in {name}.bin" for name in ("a", "b", "c")
    ]
    assert said([failed("python load.py", e) for e in errors]) == [
        "",
        "",
        "",
    ]  # three different errors


def test_passing_packages_and_log_records_in_a_test_run_are_not_problems() -> None:
    # go test prints `ok  pkg/internal/errors (cached)` for every package that passed, and
    # the code under test logs `level=ERROR` on purpose; the failing test changes each run.
    out = []
    for n, test in enumerate(("TestAlert", "TestRoute", "TestSend")):
        error = (
            "Exit code 1\nok  \tgithub.com/o/templar/internal/errors\t(cached)\n"
            'time=2026-01-01T10:00:00Z level=ERROR source=:0 msg="Alert triggered" component=monitor\n'
            f"--- FAIL: {test} (0.00s)\n    alert_test.go:{20 + n}: want {n}, got {n + 1}\n"
            "FAIL\tgithub.com/o/templar/internal/monitoring\t0.02s"
        )
        out += said(
            [
                failed("go test ./...", error),
                edit(f"/home/dev/project/internal/monitoring/f{n}.go", n),
            ]
        )
    assert out == [""] * 6


@pytest.mark.parametrize(
    ("command", "stays", "moving", "quoted"),
    [
        # A located type error back each build beside others that come and go.
        (
            "npx tsc --noEmit",
            "src/app.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.",
            "src/m{n}.ts({line},1): error TS2304: Cannot find name 'helper{n}'.",
            "TS2322",
        ),
        # A checker missing on every lint run while the findings under it are fixed: what is
        # fixed moves, the missing tool does not. (A rule that took every line seen before
        # beside an unseen one for a banner called this progress.)
        (
            "nix develop -c lint",
            "/nix/store/x1-lint/bin/lint: line 31: basedpyright: command not found",
            "cmd/m{n}.go:{line}:2: undefined: helper{n} (typecheck)",
            "basedpyright",
        ),
    ],
)
def test_a_problem_that_stays_beside_ones_that_move_is_the_same_problem(
    command: str, stays: str, moving: str, quoted: str
) -> None:
    calls = []
    for n in range(3):
        other = moving.format(n=n, line=n + 3)
        calls += [
            failed(command, f"Exit code 2\n{stays}\n{other}"),
            edit(f"/home/dev/project/src/m{n}.ts", n),
        ]
    out = said(calls)
    assert not any(out[:4])
    assert "the same problem is back for the 3rd time" in out[4] and quoted in out[4]


def test_a_banner_back_over_new_problems_is_progress() -> None:
    # The look-alike: the line that comes back has no place; what is under it is new each time.
    calls = []
    for n in range(4):
        errors = "\n".join(f"src/m{n}.ts({j},1): error TS23{n}{j}: x{n}{j}" for j in range(3))
        calls += [
            failed(
                "npm run build", f'Exit code 1\nerror: script "build" exited with code 1\n{errors}'
            ),
            edit(f"/home/dev/project/src/m{n}.ts", n),
        ]
    assert not any(said(calls))


@pytest.mark.parametrize(
    "folder",
    [
        # The runner's frame names the project the call built: its folder, `shop`.
        "/home/dev/shop",
        # A workspace member's: the crate is neither in the command nor the folder's name,
        # and the frame quotes it.
        "/home/dev/shop-backend",
    ],
)
def test_the_runners_frame_over_new_problems_is_not_the_problem(folder: str) -> None:
    # What failed inside the frame is new each build.
    calls = []
    for n in range(4):
        frame = 'error: could not compile `shop` (bin "shop") due to 1 previous error'
        found = f"src/m{n}.rs:{n + 2}:5: cannot find value `cfg{n}` in this scope"
        fail = failed("cargo build", f"Exit code 101\n{found}\n{frame}")
        fail["cwd"] = folder
        calls += [fail, edit(f"{folder}/src/m{n}.rs", n)]
    assert not any(said(calls))


def test_the_test_the_call_ran_failing_again_is_the_same_problem() -> None:
    # The call named the test; the runner naming it back as failed, with what failed in it,
    # is the world's answer about it, not the runner's frame.
    run = "pytest tests/test_api.py::test_login"
    calls = []
    for n in range(3):
        calls += [
            failed(run, "Exit code 1\nFAILED tests/test_api.py::test_login - assert 401 == 200"),
            edit(f"/home/dev/project/src/auth{n}.py", n),
            failed(f"curl -sf localhost:800{n}/health", f"Exit code 7\ncurl: (7) port 800{n}"),
        ]
    out = said(calls)
    assert not any(out[:6])
    assert "the same problem is back for the 3rd time" in out[6] and "test_login" in out[6]


def test_a_quoted_problem_back_alone_is_the_same_problem() -> None:
    # The look-alike: the quoted line comes back with nothing new beside it.
    missing = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'multer'"
    calls = []
    for n in range(3):
        calls += [
            failed("node server.mjs", f"Exit code 1\n{missing}"),
            edit(f"/home/dev/project/src/s{n}.mjs", n),
            failed(f"curl -sf localhost:900{n}", f"Exit code 7\ncurl: (7) port 900{n}"),
        ]
    out = said(calls)
    assert "the same problem is back for the 3rd time" in out[6] and "multer" in out[6]
