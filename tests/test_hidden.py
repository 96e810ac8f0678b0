"""metacog.perception.hidden: failures that exit 0, and the successes that only look like failures.

The failure texts are what real sessions printed (../shared/transcripts), shortened.
"""

from __future__ import annotations

from hooktest import bash, captured, edit, read, said

from metacog.perception.call import Call
from metacog.perception.hidden import hidden_failure

# Test runs whose output says they failed ----------------------------------------------


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


def test_a_test_run_piped_into_tail_that_prints_failures() -> None:
    run = bash(
        "uv run pytest -q 2>&1 | tail -3",
        "FAILED tests/test_cache.py::test_valid_cache - AssertionError: assert 'link' in html\n"
        "1 failed, 20 passed in 1.2s",
    )
    out = said(
        [
            run,
            edit("/home/dev/project/src/cache.py", 1),
            run,
            edit("/home/dev/project/src/cache.py", 2),
            run,
        ]
    )
    assert out[4].startswith("metacog: the same error 3 times in a row")
    assert "test_valid_cache" in out[4]


def test_a_check_piped_into_head_that_failed() -> None:
    # Build, test, lint and check are the verbs of a verification: `cargo check | head` exits
    # 0 with the compiler's errors in its output. A word that holds it (`checkout`) is not it.
    cargo = (
        "    Checking medianator v0.1.0 (/w/medianator)\n"
        "error[E0432]: unresolved import `kamadak_exif`\n"
        " --> src/scanner/metadata.rs:3:5\n"
        'error: could not compile `medianator` (bin "medianator") due to 1 previous error\n'
    )
    response = {"stdout": cargo, "stderr": ""}
    assert "unresolved import" in hidden_failure(
        "Bash", {"command": "cargo check 2>&1 | head -50"}, response
    )
    checkout = {"stdout": "error: pathspec 'mian' did not match any file(s) known to git\n"}
    assert hidden_failure("Bash", {"command": "git checkout mian 2>&1 | head"}, checkout) == ""


def test_a_grep_that_prints_failed_is_not_a_failure() -> None:
    grep = bash("grep -rn 'FAILED' tests/", "tests/test_x.py:3: # FAILED tests/test_y.py::test_z")
    assert said([grep] * 3) == ["", "", ""]


def test_a_green_run_whose_test_name_says_timed_out() -> None:
    green = bash(
        "npm test",
        "PASS src/api.test.ts\n  ✓ retries when the request timed out (12 ms)\n"
        "Tests: 14 passed, 14 total",
    )
    assert (
        said(
            [
                green,
                edit("/home/dev/project/src/api.ts", 1),
                green,
                edit("/home/dev/project/src/api.ts", 2),
                green,
            ]
        )
        == [""] * 5
    )


def test_an_apps_own_log_in_a_green_run_is_not_a_failure() -> None:
    green = "  3 failed login attempts for bob\n Test Files  4 passed (4)\n      Tests  12 passed (12)\n"
    calls = []
    for n in range(3):
        change = edit("/home/dev/project/src/auth.ts", n)
        change["tool_response"]["newString"] = f"return {n}"
        calls += [bash("npx vitest run", green), change]
    assert not any(said(calls))


def test_reading_a_test_file_is_not_a_failure() -> None:
    assert not any(said([read("/home/dev/project/tests/test_a.py")] * 2))


# A background shell -------------------------------------------------------------------


def test_a_background_shell_that_failed() -> None:
    poll = captured(
        "PostToolUse",
        "Bash",
        tool_name="BashOutput",
        tool_input={"bash_id": "7d95c5"},
        tool_response={
            "shellId": "7d95c5",
            "command": "npm run dev",
            "status": "completed",
            "exitCode": 1,
            "stdout": "",
            "stderr": "Error: Cannot find module 'next'",
        },
    )
    restart = bash("npm run dev &", "Command running in background with ID: 7d95c5")
    out = said([poll, restart, poll, restart, poll])
    assert "Cannot find module 'next'" in out[4]


def task_output(status: str, code: int | None, output: str) -> dict:
    """A TaskOutput call as the shared transcripts record its result (toolUseResult): the
    task it retrieved nested under `task`."""
    return captured(
        "PostToolUse",
        "Bash",
        tool_name="TaskOutput",
        tool_input={"task_id": "b1c2d3e", "block": False, "timeout": 5000},
        tool_response={
            "retrieval_status": "success",
            "task": {
                "task_id": "b1c2d3e",
                "task_type": "local_bash",
                "status": status,
                "description": "node --import=tsx src/index.ts",
                "output": output,
                "exitCode": code,
            },
        },
    )


def test_a_background_task_that_failed_is_a_failure_and_one_that_runs_is_not() -> None:
    error = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'multer' imported from src/api.ts"
    failed = task_output("failed", 1, f"node:internal/modules/run_main:122\n{error}\n")
    assert hidden_failure("TaskOutput", failed["tool_input"], failed["tool_response"]).startswith(
        "Exit code 1\n"
    )
    restart = bash(
        "node --import=tsx src/index.ts &", "Command running in background with ID: b1c2d3e"
    )
    out = said([failed, restart, failed, restart, failed])
    assert "Cannot find package 'multer'" in out[4]
    # Its look-alikes: still running, or done well, whatever its log says.
    for status, code in (("running", None), ("completed", 0)):
        fine = task_output(status, code, f"warning: {error}\n")
        assert hidden_failure("TaskOutput", fine["tool_input"], fine["tool_response"]) == ""


# Subagents ----------------------------------------------------------------------------


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


def test_a_subagent_answer_that_begins_with_the_word_error() -> None:
    from metacog.perception.hidden import hidden_failure

    answer = {
        "content": [{"type": "text", "text": "Error handling in the API layer is inconsistent."}]
    }
    assert hidden_failure("Task", {}, answer) == ""


# A program's own complaint behind plumbing that exits 0 --------------------------------

# What real sessions printed (../shared/transcripts: claude-backups, teamwork, napoli-matcha).
LS_GLOB = "ls: cannot access 'glob': No such file or directory\n"
CURL_BLANK = (
    "curl: option : blank argument where content is expected\n"
    "curl: try 'curl --help' or 'curl --manual' for more information\n"
)


def test_a_programs_complaint_behind_a_pipe_is_its_failure() -> None:
    ls = {"command": 'ls *.md | grep -v -E "Template|README"'}
    assert hidden_failure("Bash", ls, {"stdout": "", "stderr": LS_GLOB}) == LS_GLOB.strip()
    curl = {"command": "curl -s -X POST http://localhost:3001/api -H '' || true"}
    assert "blank argument" in hidden_failure("Bash", curl, {"stdout": CURL_BLANK, "stderr": ""})
    cat = {"command": "cat apps/web/package.json | grep -A 5 dependencies"}
    said_ = "cat: apps/web/package.json: No such file or directory\n"
    assert hidden_failure("Bash", cat, {"stdout": "", "stderr": said_})


def test_the_same_complaint_behind_plumbing_again_and_again_is_heard() -> None:
    # Exit 0 each time (grep's status), the same complaint each time: the same wall.
    tries = [
        bash(f'ls *.md | grep -v -E "{words}"', "", stderr=LS_GLOB)
        for words in ("Template|README", "Template|README|GUIDE", "Template|GUIDE", "README")
    ]
    out = said(tries)
    assert not any(out[:2]) and "Bash `ls *.md | grep" in out[2], out


def test_a_signed_line_without_plumbing_or_beside_other_work_is_no_failure() -> None:
    # Its own exit status says how it went: nginx signs its success the same way.
    nginx = {"command": "nginx -t"}
    ok = "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n"
    assert hidden_failure("Bash", nginx, {"stdout": "", "stderr": ok}) == ""
    # A longer answer did other work beside the complaint.
    ls = {"command": "ls src docs | head -20"}
    listing = "ls: docs: No such file or directory\nsrc:\na.py\nb.py\nc.py\n"
    assert hidden_failure("Bash", ls, {"stdout": listing, "stderr": ""}) == ""
    # A line signed by a program the command did not run is the data it printed.
    grep = {"command": "grep -h model: agents/*.md | sort | uniq"}
    assert hidden_failure("Bash", grep, {"stdout": "model: haiku\n", "stderr": ""}) == ""


def test_a_run_whose_runner_counted_no_failure_passed_whatever_its_tests_logged() -> None:
    # bun test's own count under the logs of a test of error handling (context-evaluator).
    output = (
        "bun test v1.3.5\n[EvaluationRoutes] POST /api/evaluate\nerror: Item 3 failed\n"
        " 1226 pass\n 0 fail\n 2654 expect() calls\nRan 1226 tests across 56 files. [727.00ms]\n"
    )
    assert hidden_failure("Bash", {"command": "bun run test"}, {"stdout": output}) == ""
    # Its look-alike: the same log with failures counted is a failure.
    failing = output.replace(" 0 fail", " 2 fail")
    assert hidden_failure("Bash", {"command": "bun run test"}, {"stdout": failing})


# A fallback's own words: the act before `||` failed ---------------------------------------


def _call(command: str, stdout: str, stderr: str = "") -> Call:
    from metacog.event import Event
    from metacog.perception.action import from_event

    return from_event(Event(bash(command, stdout, stderr)), 0.0)


def test_a_fallback_that_printed_alone_is_the_failure_it_hides() -> None:
    # claude-backups: `ls` failed, the fallback's exit 0 hid it; the literal is all it printed.
    ls = 'ls -la build/ 2>/dev/null || echo "No build directory"'
    assert hidden_failure("Bash", {"command": ls}, {"stdout": "No build directory\n"}) == (
        "No build directory"
    )
    call = _call(ls, "No build directory\n")
    assert not call.ok and not call.empty and call.sig
    # cipher-box: the same look in a folder that is not there, behind another fallback.
    missing = 'ls -R .planning/phases/12-mfa/ 2>/dev/null || echo "Directory empty or missing"'
    assert not _call(missing, "Directory empty or missing\n").ok
    # The success branch printed nothing of the fallback: it failed in neither case.
    branches = 'ls -d build 2>/dev/null && echo "✅ BUILT" || echo "🔧 still building..."'
    assert not _call(branches, "🔧 still building...\n").ok


def test_the_success_branch_or_anything_the_world_said_is_no_failure() -> None:
    branches = "test -f out/app.bin && echo OK || echo MISSING"
    assert _call(branches, "OK\n").ok
    # What the act printed, beside the fallback's words: it had something to say.
    ls = 'ls -la build/ 2>/dev/null || echo "No build directory"'
    listing = "total 8\ndrwxr-xr-x 2 dev dev 4096 . \n"
    assert _call(ls, listing).ok
    then_more = f"{ls}; cat VERSION"
    assert _call(then_more, "No build directory\n1.4.2\n").ok
    # After `||` a program, not a sayer: its output is the world's.
    assert _call("ls build || ls dist", "No build directory\n").ok
    # A writing command that says it did it: no failure, and no empty answer either.
    removed = _call('rm -rf dist && echo "Removed dist"', "Removed dist\n")
    assert removed.ok and not removed.empty
    killed = 'kill 4242 2>/dev/null && echo "Killed" || echo "not running"'
    assert _call(killed, "Killed\n").ok
