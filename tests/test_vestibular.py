"""metacog.senses.vestibular: going in circles (the same step, a cycle, a re-read, an empty search)."""

from __future__ import annotations

import pytest
from hooktest import T0, bash, captured, edit, failed, grep, prompt, read, refused, said, texts

# The same action with the same result -------------------------------------------------


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


# Re-reading an unchanged file ---------------------------------------------------------


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


def test_a_window_sliding_forward_with_overlap_is_paging() -> None:
    path = "/home/dev/project/src/big.py"
    assert not any(said([ranged(path, offset, 100) for offset in range(0, 1000, 50)]))


def test_sections_of_a_file_read_whole_are_focusing() -> None:
    path = "/home/dev/project/server/routes.py"
    calls = [read(path)] + [ranged(path, offset, 60) for offset in (400, 900, 1300)]
    assert not any(said(calls))


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


# The same question finding nothing ----------------------------------------------------


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


# Different searches that find nothing are exploring: tests/test_novelty.py,
# test_three_different_questions_that_find_nothing_are_exploring.


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


# Different missing files read in turn are exploring: tests/test_nociception.py,
# test_reading_different_missing_files_is_exploring.


# Edits that change nothing a run shows ---------------------------------------------------

REMOTE = "Executing: debug ?\n>debug\nInvalid option, debug <on|off|?|flags>\n"
FC1 = "/home/dev/project/scripts/fc1"


def _edit(path: str, n: int) -> dict:
    """An edit whose answer, like Claude Code's, quotes what it changed: each one other."""
    payload = edit(path, n)
    payload["tool_response"].update(oldString=f"return {n}", newString=f"return {n + 1}")
    return payload


def _edit_and_run(path: str, command: str, outputs: list[str], start: int = 0) -> list[dict]:
    steps = [bash(command, outputs[0])]
    for n, output in enumerate(outputs[1:]):
        steps += [_edit(path, start + n), bash(command, output)]
    return steps


def test_edits_of_the_script_a_command_runs_that_change_nothing_it_shows() -> None:
    # The agent edits the script it runs and runs it again: twice the same output. The edits
    # do not reach what it shows (a quoting fix lost on the way to the remote side). Said
    # once: more edits with the same output, past the cooldown, are not said again.
    out = said(_edit_and_run(FC1, 'scripts/fc1 cmd "debug ?"', [REMOTE] * 8))
    assert not any(out[:4]), out
    assert "2 edits of fc1" in out[4] and 'scripts/fc1 cmd "debug ?"' in out[4], out
    assert len(out[4]) <= 300 + len("metacog: ")
    assert not any(out[5:]), out


def test_edits_that_change_what_a_command_shows_are_work() -> None:
    outputs = [REMOTE, "Executing: debug ?\n>debug ?\nInvalid option", REMOTE, "debug on"]
    assert not any(said(_edit_and_run(FC1, "scripts/fc1 cmd x", outputs)))


def test_said_after_a_cooldown_it_fell_in() -> None:
    # Another observation's cooldown covers the run that came due: it is said at the next.
    steps = [bash("git status")] * 4 + _edit_and_run(FC1, "scripts/fc1 cmd x", [REMOTE] * 3)
    steps += [_edit(FC1, 9), bash("scripts/fc1 cmd x", REMOTE)]
    out = said(steps)
    assert "4 times in a row" in out[3], out
    assert not any(out[4:-1]) and "3 edits of fc1" in out[-1], out


@pytest.mark.parametrize(
    ("path", "command", "output"),
    [
        pytest.param("/w/src/app.py", "scripts/fc1 cmd x", REMOTE, id="another-file"),
        pytest.param(
            "/w/src/components/Button/index.ts",
            "npx tsx scripts/index.ts",
            "built 3 pages\n",
            id="same-name-other-folder",
        ),
        pytest.param(
            "/w/tests/test_app.py", "pytest tests/test_app.py", "12 passed in 0.41s\n", id="tests"
        ),
        pytest.param(
            "/w/src/app.py",
            "mypy src/app.py",
            "Success: no issues found in 1 source file\n",
            id="a-checker-given-the-file",
        ),
        pytest.param(
            "/etc/nginx/nginx.conf",
            "sudo nginx -t -c /etc/nginx/nginx.conf",
            "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n",
            id="a-config-test",
        ),
        pytest.param(
            "/w/src/app.py", "grep -n 'def main' src/app.py", "12:def main():\n", id="a-reader"
        ),
        pytest.param(
            "/w/src/app.py",
            "python -m py_compile src/app.py && echo OK",
            "OK\n",
            id="a-module-given-the-file",
        ),
    ],
)
def test_a_run_that_shows_the_same_after_edits_of_what_it_does_not_run(
    path: str, command: str, output: str
) -> None:
    # What the command runs is not the file edited, or it is a check of the file: the same
    # output after each edit is that file holding, not a fix that changed nothing.
    out = said(_edit_and_run(path, command, [output] * 4))
    assert not any(out), out


def test_a_damaged_memory_of_runs_is_begun_again() -> None:
    from metacog.perception.call import Call
    from metacog.senses import vestibular

    run = Call("Bash", "scripts/fc1 cmd x", ok=True, result=7, prints=(1,))
    key = format(vestibular.call_key(run), "08x")
    edited = Call("Edit", "scripts/fc1", ok=True, path="/w/scripts/fc1")
    for damaged in ([1, "x"], [True, 1, 9, 0, "scripts/fc1"], "y", None, [7, 1, "9", 0, 3]):
        mem = {"runs": {key: damaged, "1": [1, 1, 1, 0, 5]}}
        assert vestibular._unchanged(mem, edited) is None
        assert vestibular._unchanged(mem, run) is None
        assert mem["runs"][key] == [7, 0, 0, 0, "scripts/fc1"]  # begun again, not raised
    huge = {"runs": {str(i): [1, 0, 0, 0, "x"] for i in range(200_000)}}
    assert vestibular._unchanged(huge, run) is None and len(huge["runs"]) == 1
    assert vestibular._unchanged({"runs": ["not", "a", "map"]}, run) is None


# Variants of an act that get back what they got before ---------------------------------

DENIED = '{{"error":"api/v1/{}/search is not accessible with this api_key on a free plan.","error_code":"API_INACCESSIBLE"}}\n403'


def _post(path: str, answer: str) -> dict:
    return bash(f'curl -s -w "\\n%{{http_code}}" -X POST "https://api.example.io/{path}"', answer)


def test_variants_of_an_act_that_give_back_what_it_answered_before() -> None:
    # Four paths of an API, two answers between them: the 3rd and 4th variants each gave back
    # what an earlier one had, not the answer just before: they go round the same answers.
    # The person saying "continue" between changes no answer (the count begins again there).
    people, mixed = DENIED.format("people"), DENIED.format("mixed_people")
    steps = [
        _post("api/v1/people/search", people),
        _post("api/v1/mixed_people/search", mixed),
        prompt("continue"),
        _post("v1/people/search", people),
        _post("v1/mixed_people/search", mixed),
    ]
    steps += [
        _post(f"v{i}/{p}/search", a)
        for i in range(2, 7)
        for p, a in (("people", people), ("mixed_people", mixed))
    ]
    out = said(steps)
    assert not any(out[:4]), out
    assert "go round the same answers" in out[4] and "example.io/v1/mixed_" in out[4], out
    assert len(out[4]) <= 300 + len("metacog: ")
    assert not any(out[5:]), out  # said once, past the cooldown too


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(
            [_post(f"v{i}/people/search", f"answer {i}") for i in range(5)], id="each-new"
        ),
        pytest.param([_post("api/v1/people/search", "same")] * 3, id="the-same-command-again"),
        pytest.param(
            [_post("a", "denied"), _post("b", "gone"), _post("a", "denied"), _post("b", "gone")],
            id="two-commands-in-turn",  # the same two steps: Vestibular's cycle counts those
        ),
        pytest.param(
            [
                _post("a", "denied"),
                _post("b", "gone"),
                _post("c", "denied"),
                _post("d", "moved"),
                _post("e", "gone"),
            ],
            id="a-new-answer-between",
        ),
        pytest.param(
            [
                _post("a", "denied"),
                _post("b", "gone"),
                _edit(FC1, 1),
                _post("c", "denied"),
                _edit(FC1, 2),
                _post("d", "gone"),
            ],
            id="an-edit-between",
        ),
        pytest.param(
            [
                bash(f"which {a} {p}", f"/usr/bin/{p}\n")
                for a in ("", "-a")
                for p in ("node", "npm")
            ],
            id="a-search",
        ),
        pytest.param(
            [bash(f"cat {d}{f}", f"# {f}\n") for d in ("", "./") for f in ("a.md", "b.md")],
            id="a-reader",
        ),
        pytest.param(
            [bash(f"sleep {i} && gh run view 42", "in progress\n") for i in range(4)],
            id="waiting",
        ),
        pytest.param(
            [bash(f"curl -s localhost:8080/{r}", "ok\n") for r in ("health", "ready", "live")]
            + [bash("curl -sS localhost:8080/health", "ok\n")],
            id="one-answer-that-holds",
        ),
        pytest.param(
            [bash(f"systemctl is-active {s}", "active\n") for s in ("nginx", "redis", "pg")],
            id="every-service-active",
        ),
        pytest.param(
            [
                bash(f"curl -s -X POST localhost/items -d n={i}", f'{{"id": "{u}"}}\n')
                for i, u in enumerate(
                    (
                        "123e4567-e89b-12d3-a456-426614174000",
                        "223e4567-e89b-12d3-a456-426614174001",
                        "323e4567-e89b-12d3-a456-426614174002",
                        "423e4567-e89b-12d3-a456-426614174003",
                    )
                )
            ],
            id="creates-each-with-a-new-id",
        ),
        pytest.param(
            [
                _post("a", "denied"),
                _post("b", "gone"),
                read("/w/README.md"),
                _post("c", "denied"),
                read("/w/NOTES.md"),
                _post("d", "gone"),
            ],
            id="other-calls-between",
        ),
        pytest.param(
            [
                _post("a", "denied"),
                _post("b", "gone"),
                bash("sed -i s/v1/v2/ config.ini", ""),
                _post("c", "denied"),
                _post("d", "gone"),
            ],
            id="a-write-between",
        ),
        pytest.param(
            [
                bash(f"pytest tests/test_a.py -k {k}", out)
                for k, out in (
                    ("a", "1 failed"),
                    ("b", "2 failed"),
                    ("c", "1 failed"),
                    ("d", "2 failed"),
                )
            ],
            id="test-runs",
        ),
    ],
)
def test_variants_that_find_something_or_are_not_acts_stay_silent(steps: list) -> None:
    out = said(steps)
    assert not any(out), out


def test_a_damaged_memory_of_answers_is_begun_again() -> None:
    from metacog.perception.call import Call
    from metacog.senses import vestibular

    call = Call("Bash", "curl -X POST https://a/x", ok=True, result=7, prints=(1,))
    for damaged in ([1], ["x", 1, 0, "curl"], [[["a", 1], 3, [5]], 1, 0, "curl"], None, "y"):
        mem = {"answers": {"curl": damaged}}
        assert vestibular._answered_again(mem, call) is None
        assert mem["answers"]["curl"][1] == 0  # begun again, not raised
    huge = {"answers": {str(i): [[], 0, 0, "x"] for i in range(100_000)}}
    assert vestibular._answered_again(huge, call) is None and len(huge["answers"]) == 1


def test_what_the_world_answered_is_kept_when_the_person_speaks() -> None:
    # The output before the person spoke still counts as the one the next edit must change;
    # the count itself begins again.
    steps = [bash("scripts/fc1 cmd x", REMOTE), prompt("keep going")]
    steps += [_edit(FC1, 7), bash("scripts/fc1 cmd x", REMOTE)]
    steps += [_edit(FC1, 8), bash("scripts/fc1 cmd x", REMOTE)]
    out = said(steps)
    assert not any(out[:-1]) and "2 edits of fc1" in out[-1], out


def test_a_prompt_on_an_act_piped_its_answers() -> None:
    # `echo N | npx …`: the act is npx, whatever answer is piped to its prompt; four answers
    # piped, its two questions back each time.
    compiler, turbopack = "? Use React Compiler? No / Yes", "? Use Turbopack? (recommended) Yes"
    steps = [
        bash("npx create-next-app@latest web", compiler),
        bash('echo "N" | npx create-next-app@latest web', turbopack),
        bash('echo -e "N\\nY" | npx create-next-app@latest web', compiler),
        bash('printf "N\\n" | npx create-next-app@latest web', turbopack),
    ]
    out = said(steps)
    assert not any(out[:3]) and "another npx call" in out[3], out
