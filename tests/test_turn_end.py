"""The turn's end (metacog/turn_end.py): a final message held against the session's own last
check. Stop and SubagentStop payloads are the ones captured from Claude Code 2.1.328
(tests/fixtures/stop-inputs-2.1.328.jsonl); the transcripts are written in the shape of its
transcript (tests/fixtures/transcript-sample-2.1.328.jsonl: tool_use on assistant lines,
tool_result and toolUseResult on user lines)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hooktest import FIXTURES, bash, edit, failed, send

from metacog import replay, turn_end

STOPS = [
    json.loads(line) for line in (FIXTURES / "stop-inputs-2.1.328.jsonl").read_text().splitlines()
]


def stop_payload(event: str = "Stop", active: bool = False, **changes: object) -> dict:
    for payload in STOPS:
        if payload["hook_event_name"] == event and payload["stop_hook_active"] is active:
            out = copy.deepcopy(payload)
            out.update(changes)
            return out
    raise LookupError(event)


SESSIONS: dict[Path, str] = {}  # transcript -> its session id, for `ends`


class Transcript:
    """A session as Claude Code makes it: each call's hook (PostToolUse, PostToolUseFailure;
    none for a refused call) and the transcript written line by line in the CLI's shape."""

    def __init__(self, path: Path, sidechain: bool = False, session: str = "") -> None:
        self.path, self.n, self.side = path, 0, sidechain
        self.session = session or f"s-{path.stem}"
        SESSIONS[path] = self.session
        path.write_text("")

    def _line(self, entry: dict) -> None:
        entry.update(
            isSidechain=self.side, cwd=str(self.path.parent), timestamp="2026-12-06T03:00:00.000Z"
        )
        with self.path.open("a") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def prompt(self, text: str) -> Transcript:
        self._line({"type": "user", "message": {"role": "user", "content": text}})
        return self

    def call(self, name: str, tool_input: dict, result: str, error: bool = False) -> Transcript:
        self.n += 1
        uid = f"toolu_{self.n:04d}"
        self._line(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{self.n}",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": uid, "name": name, "input": tool_input}],
                },
            }
        )
        block = {"type": "tool_result", "tool_use_id": uid, "content": result}
        if error:
            block["is_error"] = True
        entry: dict = {"type": "user", "message": {"role": "user", "content": [block]}}
        if name == "Bash" and not error:
            entry["toolUseResult"] = {"stdout": result, "stderr": "", "interrupted": False}
        self._line(entry)
        self._hook(name, tool_input, result, error, uid)
        return self

    def _hook(self, name: str, tool_input: dict, result: str, error: bool, uid: str) -> None:
        """The call's hook, as the CLI fires it (none for a call it refused)."""
        if error and result.startswith("<tool_use_error>"):
            return
        if name == "Bash":
            command = tool_input["command"]
            payload = failed(command, result) if error else bash(command, stdout=result)
        elif name == "Edit" and not error:
            payload = edit(tool_input["file_path"])
        else:
            return
        payload.update(session_id=self.session, transcript_path=str(self.path), tool_use_id=uid)
        payload["cwd"] = str(self.path.parent)
        if self.side:
            payload.update(agent_id="a1", agent_type="general-purpose")
        send(payload)

    def bash(self, command: str, output: str = "", failed: bool = False) -> Transcript:
        return self.call("Bash", {"command": command}, output, failed)

    def edit(self, path: str, refused: bool = False) -> Transcript:
        result = (
            "<tool_use_error>String to replace not found in file.\nString: x = 1</tool_use_error>"
            if refused
            else f"The file {path} has been updated."
        )
        return self.call(
            "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, result, refused
        )

    def say(self, text: str) -> Transcript:
        self.n += 1
        self._line(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{self.n}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                },
            }
        )
        return self


FAILING = (
    "Exit code 1\n============ FAILURES ============\n___ test_login ___\n"
    "E   assert 401 == 200\nFAILED tests/test_auth.py::test_login - assert 401 == 200\n"
    "======= 1 failed, 12 passed in 0.41s ======="
)
PASSING = "============ 13 passed in 0.40s ============"


def ends(path: Path, message: str, event: str = "Stop", **changes: object) -> str:
    """What the hook says at this turn end: its additionalContext, '' for silence."""
    key = "agent_transcript_path" if event == "SubagentStop" else "transcript_path"
    changes.setdefault("session_id", SESSIONS.get(path, "s"))
    if event == "SubagentStop":
        changes.setdefault("agent_id", "a1")
    payload = stop_payload(
        event, last_assistant_message=message, cwd=str(path.parent), **{key: str(path)}, **changes
    )
    reply = send(payload)
    if reply is None:
        return ""
    out = reply["hookSpecificOutput"]
    assert out["hookEventName"] == event and set(reply) == {"hookSpecificOutput"}
    return out["additionalContext"]


@pytest.fixture
def session(tmp_path: Path, isolated_home: Path) -> Transcript:
    return Transcript(tmp_path / "transcript.jsonl").prompt("Fix the login test.")


def test_a_claim_the_last_test_run_contradicts_is_said_naming_the_run(session: Transcript) -> None:
    session.edit("/p/app/auth.py").bash("pytest -q", FAILING, failed=True)
    said = ends(session.path, "Fixed the login flow. All tests pass ✅")
    assert said.startswith("metacog: the last `pytest -q` (after your last edit) failed: ")
    assert "test_login" in said and "What is true now?" in said and len(said) <= 300


def test_the_same_claim_after_a_passing_rerun_is_silent(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True).edit("/p/app/auth.py").bash(
        "pytest -q", PASSING
    )
    assert ends(session.path, "Fixed the login flow. All tests pass ✅") == ""


def test_a_failure_with_a_change_after_it_is_no_evidence(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True).edit("/p/app/auth.py")
    assert ends(session.path, "Fixed it, all tests pass ✅") == ""


def test_a_doc_edit_after_the_failure_changes_nothing_the_run_showed(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True).edit("/p/NOTES.md")
    assert "pytest -q" in ends(session.path, "All tests pass ✅")


def test_a_later_run_of_the_same_runner_answers_for_it(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True).bash(
        "source .env && uv run pytest -x tests/", PASSING
    )
    assert ends(session.path, "All tests pass ✅") == ""


def test_a_scripts_failure_stands_after_an_edit_until_it_runs_again(session: Transcript) -> None:
    session.bash(
        "./run-agents.sh",
        "Exit code 1\n[7/8] Running validation tests...\nBridge exited",
        failed=True,
    )
    session.edit("/p/agents/bridge.py")
    said = ends(session.path, "### ✅ **run-agents.sh** works: 31 agents registered")
    assert said.startswith(
        "metacog: the last `./run-agents.sh` (not run again since your last edit) failed: "
    )
    assert "Bridge exited" in said
    session.bash("./run-agents.sh", "All 31 agents registered")
    assert ends(session.path, "### ✅ **run-agents.sh** works now") == ""


def test_a_scripts_own_failure_line_under_exit_0_is_evidence_named_as_a_phrase(
    session: Transcript,
) -> None:
    session.bash(
        "python3 VOICE_INPUT_SYSTEM.py",
        "loading…\n❌ Import failed: unterminated f-string literal\ndone",
    )
    said = ends(session.path, "## 🎤 VOICE INPUT SYSTEM READY")
    assert "`python3 VOICE_INPUT_SYSTEM.py`" in said and "❌ Import failed" in said
    assert ends(session.path, "I wrote the voice notes; nothing else ran.") == ""


def test_a_status_script_seen_stopped_until_something_is_started(session: Transcript) -> None:
    session.bash("./STATUS.sh", "[Binary Protocol]   Status: ● STOPPED\n[Agents] 31 registered")
    assert "`./STATUS.sh` (its latest run) showed: `[Binary Protocol] Status: ● STOPPED`" in ends(
        session.path, "The agent system is stable and operational ✅"
    )
    other = Transcript(session.path.parent / "t2.jsonl").prompt("x")
    other.bash("./STATUS.sh", "[Binary Protocol]   Status: ● STOPPED").bash(
        "nohup ./run_agent_system.sh &"
    )
    assert ends(other.path, "The agent system is stable and operational ✅") == ""


def test_a_program_on_the_path_or_a_refusal_is_no_evidence(session: Transcript) -> None:
    session.bash("gh pr checks 142", "Exit code 8\nsome checks are still pending", failed=True)
    session.bash(
        "./deploy.sh",
        "Permission to use Bash with command ./deploy.sh has been denied.",
        failed=True,
    )
    assert ends(session.path, "PR checks pass ✅, deploy.sh ran, all done") == ""


def test_a_download_and_a_classifiers_no_are_no_evidence(session: Transcript) -> None:
    session.bash(
        "curl -o public/hero.png https://via.placeholder.com/800",
        "curl: (6) Could not resolve host: via.placeholder.com",
        failed=True,
    )
    session.bash(
        "./build-site.sh",
        "Permission for this action was denied by the Claude Code auto mode classifier.",
        failed=True,
    )
    assert (
        ends(session.path, "The site is running with its hero image ✅; build-site.sh works") == ""
    )


def test_a_chinese_claim_naming_the_failed_script(session: Transcript) -> None:
    session.bash(
        "bash scripts/setup-cron.sh",
        "scripts/setup-cron.sh: line 24: crontab: command not found",
        failed=True,
    )
    said = ends(session.path, "C. 定时任务 ✅ 已配置（setup-cron.sh）")
    assert "`bash scripts/setup-cron.sh`" in said and "crontab: command not found" in said


def test_a_message_that_names_the_failure_is_left_alone(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True)
    assert (
        ends(session.path, "The login test still fails because the token expired. The rest works.")
        == ""
    )


def test_a_message_that_claims_nothing_of_the_check_is_left_alone(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True)
    assert ends(session.path, "I looked at auth.py: should the token be refreshed here?") == ""
    session.bash("pytest -q", FAILING, failed=True)  # each turn end holds its own turn's runs
    assert ends(session.path, "Done: the README is updated.") == ""
    session.bash("pytest -q", FAILING, failed=True)
    assert "pytest -q" in ends(session.path, "Done: all tests pass.")


def test_a_chinese_claim_is_read_and_a_chinese_acknowledgement_too(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True)
    assert ends(session.path, "测试仍然失败：token 过期。") == ""
    session.bash("pytest -q", FAILING, failed=True)
    assert "pytest -q" in ends(session.path, "所有测试通过 ✅")


def test_said_once_per_evidence_and_never_while_a_stop_hook_is_active(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True)
    assert ends(session.path, "All tests pass ✅", active=True) == ""
    assert "pytest -q" in ends(session.path, "All tests pass ✅")
    assert ends(session.path, "All tests pass ✅") == ""  # the same evidence: said already


def test_off_switch(session: Transcript, isolated_home: Path) -> None:
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text("[turn-end]\nenabled = false\n")
    session.bash("pytest -q", FAILING, failed=True)
    assert ends(session.path, "All tests pass ✅") == ""


def test_a_service_seen_not_running_contradicts_online(session: Transcript) -> None:
    session.bash("nohup ./start.sh > log 2>&1 &").bash(
        "ps aux | grep uvicorn", "root  811  0.0  0.0  6480  grep --color=auto uvicorn"
    )
    said = ends(session.path, "System status: the uvicorn server is online and operational! ✅")
    assert "`ps aux | grep uvicorn`" in said and "showed: `no matching process`" in said


def test_a_look_for_a_finished_jobs_id_claims_nothing_runs(session: Transcript) -> None:
    session.bash("ps aux | grep wlvf2x7vg | grep -v grep", "")
    assert ends(session.path, "The workflow is complete and running smoothly ✅") == ""


def test_a_service_seen_running_is_silent(session: Transcript) -> None:
    session.bash("nohup ./start.sh > log 2>&1 &").bash(
        "ps aux | grep uvicorn",
        "root  810  1.2  0.9  uvicorn app:main --port 8000\nroot  811  grep --color=auto uvicorn",
    )
    assert ends(session.path, "The uvicorn server is online ✅") == ""


def test_curl_refused_contradicts_up(session: Transcript) -> None:
    session.bash(
        "curl -s http://localhost:8000/health",
        "Exit code 7\ncurl: (7) Failed to connect to localhost port 8000: Connection refused",
        failed=True,
    )
    said = ends(session.path, "Everything's running: the API answers on port 8000 ✅")
    assert "curl -s http://localhost:8000/health" in said and "Connection refused" in said


def test_a_refused_edit_never_redone_contradicts_a_claim_naming_the_file(
    session: Transcript,
) -> None:
    session.edit("/p/app/config.py", refused=True)
    said = ends(session.path, "Updated config.py with the new timeout ✅")
    assert said.startswith("metacog: your edit of `config.py` was refused (")
    Transcript(session.path.parent / "t2.jsonl").prompt("x").edit(
        "/p/app/config.py", refused=True
    ).edit("/p/app/config.py")
    assert ends(session.path.parent / "t2.jsonl", "Updated config.py ✅") == ""


def test_a_refused_edit_of_no_file_names_nothing(session: Transcript) -> None:
    session.call(
        "Edit", {"old_string": "a"}, "<tool_use_error>file_path is required</tool_use_error>", True
    )
    assert ends(session.path, "Updated everything ✅") == ""


def test_the_final_message_falls_back_to_the_transcript(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True).say("All tests pass ✅")
    payload = stop_payload(
        transcript_path=str(session.path), cwd=str(session.path.parent), session_id=session.session
    )
    del payload["last_assistant_message"]
    reply = send(payload)
    assert reply is not None and "pytest -q" in reply["hookSpecificOutput"]["additionalContext"]


def test_a_normal_end_is_zero_bytes(session: Transcript) -> None:
    from metacog import hook, paths

    session.bash("pytest -q", PASSING)
    payload = stop_payload(
        last_assistant_message="All tests pass ✅",
        transcript_path=str(session.path),
        session_id=session.session,
    )
    assert hook.handle(json.dumps(payload).encode(), state_dir=paths.state_dir()) in (b"", "", None)


def test_a_subagents_report_is_held_against_its_own_transcript(
    tmp_path: Path, isolated_home: Path
) -> None:
    sub = Transcript(tmp_path / "agent-a1.jsonl", sidechain=True).prompt("run the tests")
    sub.bash("pytest -q", FAILING, failed=True)
    said = ends(sub.path, "SUBAGENT REPORT: all tests pass", event="SubagentStop")
    assert said.startswith("metacog: the last `pytest -q`") and "your report" in said
    assert (
        ends(sub.path, "SUBAGENT REPORT: all tests pass", event="SubagentStop", active=True) == ""
    )


def test_subagents_off(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "config").mkdir(parents=True)
    (isolated_home / "config" / "config.toml").write_text("[turn-end]\nsubagents = false\n")
    sub = Transcript(tmp_path / "agent-a1.jsonl", sidechain=True).prompt("run the tests")
    sub.bash("pytest -q", FAILING, failed=True)
    assert ends(sub.path, "all tests pass", event="SubagentStop") == ""


def test_the_main_threads_evidence_ignores_a_subagents_calls(session: Transcript) -> None:
    side = Transcript(session.path.parent / "side.jsonl", sidechain=True)
    side.bash("pytest -q", FAILING, failed=True)
    with session.path.open("a") as fh:
        fh.write(side.path.read_text())
    assert ends(session.path, "All tests pass ✅") == ""


def test_the_judge_reads_a_cut_transcript_end(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True)
    lines = turn_end.read_end(str(session.path), cap=session.path.stat().st_size - 5)
    assert turn_end.steps(lines).calls  # the first, cut line is dropped, the rest read
    assert turn_end.read_end(str(session.path.parent)) == []  # a folder: nothing


def test_replay_fires_stop_at_each_turn_end_with_its_final_message(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "s.jsonl").prompt("first")
    t.bash("pytest -q", FAILING, failed=True).say("All tests pass ✅")
    t.prompt("second").say("waiting for the agent")
    t.prompt("<task-notification>\n<task-id>x</task-id></task-notification>")
    t.bash("ls", "a").say("Here is the listing.")
    result = replay.replay(str(t.path))
    assert result["turn_ends"] == [1, 2]  # the person's second prompt, then the file's end
    said = [s for s in result["signals"] if s["sense"] == "turn-end"]
    assert [s["main"] for s in said] == [1] and "pytest -q" in said[0]["text"]


def test_the_report_counts_contradicted_turn_ends_per_project_with_their_check(
    tmp_path: Path, isolated_home: Path
) -> None:
    from metacog import report
    from metacog.report import page, terminal

    t = Transcript(tmp_path / "s.jsonl").prompt("first")
    t.bash("pytest -q", FAILING, failed=True).say("All tests pass ✅")
    t.prompt("second").bash("pytest -q", PASSING).say("All tests pass ✅")
    built = report.build([str(t.path)], workers=1)
    assert (built["totals"]["turn_ends"], built["totals"]["claims"]) == (2, 1)
    (row,) = built["projects"].values()
    assert row["claims"] == 1 and built["sessions"][0]["claims"][0]["check"] == "pytest -q"
    shown = terminal.render(built)
    assert "Turn ends that claimed what the session's own last check contradicted: 1 of 2" in shown
    assert "`pytest -q`" in shown
    assert ">pytest -q</td>" in page.render(built)


@pytest.mark.sense_may_fail("turn-end")
def test_a_broken_turn_end_costs_the_call_nothing(
    session: Transcript, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hooktest import agent_text, failed

    def broken(*args: object) -> None:
        raise RuntimeError("turn end exploded")

    monkeypatch.setattr(turn_end, "observe_event", broken)
    payload = failed(
        'python3 -c "import nosuchmodule_xyz"', "ModuleNotFoundError: nosuchmodule_xyz"
    )
    replies = [send(payload) for _ in range(3)]
    assert "nosuchmodule_xyz" in agent_text(replies[-1])  # the senses still spoke
    log = (isolated_home / "state" / "metacog.log").read_text()
    assert "turn-end: RuntimeError('turn end exploded')" in log


# Evidence kinds added for issue 40's second look (bench_claims: the missed claims' checks),
# each beside the look-alike that must stay silent.


def kept(session: Transcript) -> dict:
    """The main agent's evidence as the session's state holds it."""
    from metacog import paths, state

    with state.Session(paths.state_dir(), session.session) as st:
        return copy.deepcopy(turn_end.memory(st, "")["latest"])


TEST_SCRIPT = (
    "cat > /tmp/test-knowledge-system.sh << 'EOF'\n#!/bin/bash\nTEST_DIR=/tmp/p\n"
    'echo "✗ secret body line"\nEOF\nchmod +x /tmp/test-knowledge-system.sh\n'
    "/tmp/test-knowledge-system.sh"
)


def test_a_test_script_written_and_run_in_one_heredoc_is_a_test_run(session: Transcript) -> None:
    session.bash(TEST_SCRIPT, "✓ knowledge-init 执行成功\n✗ Git Hook 未自动更新索引\n✅ 测试完成")
    said = ends(session.path, "### 自动化测试通过")
    assert "✗ Git Hook 未自动更新索引" in said
    (record,) = kept(session).values()
    assert "secret body line" not in record[1]  # the heredoc's body is a file's text: not kept
    assert len(record[2]) <= turn_end.LINE_KEEP


def test_a_heredoc_only_written_and_shown_is_no_run(session: Transcript) -> None:
    body = "./verify-install.sh\n✗ Git Hook 未自动更新索引"  # a file's lines: not run
    session.bash(f"cat > /tmp/expected.txt << 'EOF'\n{body}\nEOF\ncat /tmp/expected.txt", body)
    assert ends(session.path, "### 自动化测试通过") == ""


def test_a_script_run_under_a_wrapper_with_arguments_is_the_script(session: Transcript) -> None:
    session.bash(
        "timeout 60 ./launch-unified.sh --auto-mode 2>&1 | tee unified.log",
        "Command timed out after 1m 5.0s Terminated\nBuilding unified agent runtime...",
        failed=True,
    )
    said = ends(session.path, "**launch-unified.sh** compiles and works ✅")
    assert "`timeout 60 ./launch-unified.sh --auto-mode" in said
    session.bash("timeout 10 node --version", "Exit code 1\nnode: bad option", failed=True)
    assert ends(session.path, "node works ✅ and the launcher is ready") == ""


PS = 'ps aux | grep -E "(ultra_hybrid|agent_bridge|runtime)" | grep -v grep'
OLD_BRIDGE = "ubuntu 3421132 0.0 0.0 132652 23116 ? Sl Aug14 0:01 python3 agent_bridge.py"


def test_a_process_look_that_found_some_names_speaks_of_the_rest(session: Transcript) -> None:
    session.bash(PS, OLD_BRIDGE)
    said = ends(session.path, "✓ Runtime operational with 2 services")
    assert f"`{PS}`" in said and "`no process matching ultra_hybrid, runtime`" in said


def test_a_process_look_says_nothing_of_what_it_found(session: Transcript) -> None:
    session.bash(PS, OLD_BRIDGE)
    assert ends(session.path, "The Python agent bridge is running ✓") == ""


STATUS = (
    "[Binary Protocol]\n  Status: ● RUNNING (PID: 3553470)\n[Python Agent Bridge]\n"
    "  Status: ● RUNNING (PID: 3421132)\n[Unified Runtime]\n  Status: ● NOT RUNNING (optional)\n"
    "[System Files]\n  Online Flag: ✓ SET"
)


def test_a_status_listing_with_one_thing_down_speaks_of_that_thing(session: Transcript) -> None:
    session.bash("./STATUS.sh", STATUS)
    said = ends(session.path, "The unified runtime is running too ✅")
    assert "[Unified Runtime] Status: ● NOT RUNNING (optional)" in said


def test_a_status_listing_with_one_thing_down_says_nothing_of_the_others(
    session: Transcript,
) -> None:
    session.bash("./STATUS.sh", STATUS)
    assert ends(session.path, "Agent system online: the binary protocol is running ✅") == ""


def test_a_look_that_found_nothing_contradicts_only_a_claim_that_it_runs(
    session: Transcript,
) -> None:
    look = 'ps aux | grep -E "workflow|w826lqrue" | grep -v grep'
    session.bash(look, "")
    assert ends(session.path, "✅ Workflow 执行成功: the workflow is complete") == ""
    session.bash(look, "")
    assert "`no matching process`" in ends(session.path, "The workflow is running ✅")


FALLBACK = './ultrathink.sh status 2>/dev/null || echo "Status command works"'


def test_a_fallback_echo_that_printed_is_the_scripts_failure(session: Transcript) -> None:
    session.bash(FALLBACK, "Claude Agents Bridge\nBuild Status:\nStatus command works")
    said = ends(session.path, "Verified:\n- `./ultrathink.sh status` ✅")
    assert "its `|| echo` printed: Status command works" in said


def test_a_fallback_echo_that_did_not_print_is_no_failure(session: Transcript) -> None:
    session.bash(FALLBACK, "Claude Agents Bridge\nBuild Status: no builds")
    assert ends(session.path, "Verified:\n- `./ultrathink.sh status` ✅") == ""


CLEAN = 'rm -f /tmp/claude-*-cwd /tmp/*agent* 2>/dev/null && echo "✅ Cleaned temporary files"'


def test_a_promise_that_never_printed_contradicts_saying_it(session: Transcript) -> None:
    session.bash(CLEAN, "Error", failed=True)
    said = ends(session.path, "## Done\n- All temporary files cleaned")
    assert said.startswith(f"metacog: the last `{CLEAN[:79]}…` failed (`Error`)")
    assert '"cleaned temporary files" never printed' in said


def test_a_promise_kept_or_not_repeated_is_silent(session: Transcript) -> None:
    session.bash(CLEAN, "Error", failed=True)
    assert ends(session.path, "## Done\n- Temporary files: some were protected") == ""
    session.bash(CLEAN, "Error", failed=True).bash(CLEAN, "✅ Cleaned temporary files")
    assert ends(session.path, "## Done\n- All temporary files cleaned") == ""
    session.bash("rm -rf build && echo done", "Error", failed=True)  # one word: no promise
    assert ends(session.path, "Build folder removed, all done ✅") == ""


def test_an_earlier_turns_failure_is_that_turns_business(session: Transcript) -> None:
    session.bash("./scripts/install-plugin.sh", "Exit code 1\ncp: 'a' and 'a' are the same", True)
    assert ends(session.path, "I checked the plugin folder: its files are there.") == ""
    session.prompt("now write the docs").bash("ls docs")
    assert ends(session.path, "Docs written. Scripts: ✅ install-plugin.sh") == ""
    session.bash("./scripts/install-plugin.sh", "Exit code 1\ncp: 'a' and 'a' are the same", True)
    assert "install-plugin.sh" in ends(session.path, "Scripts: ✅ install-plugin.sh")


def test_a_rerun_that_shows_the_same_is_said_again(session: Transcript) -> None:
    session.bash("pytest -q", FAILING, failed=True)
    assert "pytest -q" in ends(session.path, "All tests pass ✅")
    session.prompt("are you sure?").bash("pytest -q", FAILING, failed=True)
    assert "pytest -q" in ends(session.path, "All tests pass ✅")


def test_a_test_run_after_a_heredoc_edit_answers_for_the_runner(session: Transcript) -> None:
    session.bash("cargo test 2>&1 | tail -3", "test result: FAILED. 2 passed; 3 failed", True)
    session.bash(
        "python3 - <<'PY'\np='src/lib.rs'\nopen(p,'w').write('x')\nPY\ncargo test 2>&1 | tail -3",
        "test result: ok. 5 passed; 0 failed",
    )
    assert ends(session.path, "`cargo test`: 5/5 pass ✅") == ""
