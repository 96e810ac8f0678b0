"""metacog.perception.action: a tool call's payload reduced to its Call; here, what is an empty answer."""

from __future__ import annotations


def test_quiet_searches_and_writing_commands_are_not_empty_answers() -> None:
    from metacog.perception.action import found_nothing

    quiet = {"stdout": "", "stderr": ""}
    assert not found_nothing("Bash", {"command": "grep -q TODO src/a.py"}, quiet, "")
    assert not found_nothing("Bash", {"command": "git add -A"}, quiet, "")
    assert found_nothing("Bash", {"command": "git grep -n legacyHandler"}, quiet, "")
    assert not found_nothing("Grep", {}, {"numFiles": 0, "timedOut": True}, "")


def test_long_commands_alike_in_their_first_words_are_other_calls() -> None:
    from metacog.perception.action import TARGET_CAP, target_of
    from metacog.perception.call import Call
    from metacog.perception.novelty import call_key

    # The same `cd` into a long folder before each: cut at the cap, the two were one call,
    # and a passing `pnpm add` overcame the failing run before it.
    folder = "/home/dev/" + "clients/acme-holdings/" * 5 + "apps/desktop-companion"
    run = target_of("Bash", {"command": f'cd "{folder}" && node src/index.ts'}, "")
    add = target_of("Bash", {"command": f'cd "{folder}" && pnpm add multer'}, "")
    assert run != add and len(run) == len(add) == TARGET_CAP
    assert call_key(Call("Bash", run)) != call_key(Call("Bash", add))
    # The same command, however its white space runs, is the same call; a short one is itself.
    again = target_of("Bash", {"command": f'cd  "{folder}"\n&& node src/index.ts'}, "")
    assert again == run
    assert target_of("Bash", {"command": "npm  test"}, "") == "npm test"
    # One API's long address before each query: other questions, as other commands are.
    base = "https://api.example.com/v1/" + "reports/quarterly/" * 6
    asked = [target_of("WebFetch", {"url": f"{base}?page={n}"}, "") for n in (1, 2)]
    assert asked[0] != asked[1]


def test_a_terminals_escape_codes_are_not_what_a_tool_said() -> None:
    from metacog.perception.action import plain

    painted = "\x1b[0m \x1b[90m 428 |\x1b[39m \x1b[1;31mexport\x1b[0m \x1b]8;;http://a\x07x\x1b]8;;\x07 \x1b(Bok"
    assert plain(painted) == "  428 | export x ok"
    result = {"stdout": "\x1b[31mred\x1b[0m", "task": {"output": "\x1b[1mb"}, "exitCode": 1}
    assert plain(result) == {"stdout": "red", "task": {"output": "b"}, "exitCode": 1}
    unpainted = {"stdout": "plain", "file": {"content": "x"}}
    assert plain(unpainted) is unpainted  # nothing to take out: nothing copied
    assert plain("\x1b") == "\x1b" and plain(None) is None and plain(["\x1b[1m"]) == ["\x1b[1m"]


def test_a_painted_result_is_read_as_the_same_result_unpainted() -> None:
    # Through from_event: the escape codes of a passing Bash call's output and of a failure's
    # text are taken out before its checksum, its lines and its signature are read.
    from hooktest import bash, failed

    from metacog.event import Event
    from metacog.perception.action import from_event

    words = "src/app.ts:12:5 - error TS2345: Argument of type 'x'\nFound 1 error."
    paint = "\x1b[96msrc/app.ts\x1b[0m:\x1b[93m12\x1b[0m:\x1b[93m5\x1b[0m - \x1b[91merror\x1b[0m TS2345: Argument of type 'x'\nFound 1 error."
    plain_ok, painted_ok = (
        from_event(Event(bash("npx tsc", text)), 0.0) for text in (words, paint)
    )
    assert painted_ok.result == plain_ok.result and painted_ok.prints == plain_ok.prints
    plain_err, painted_err = (
        from_event(Event(failed("npx tsc", f"Exit code 2\n{text}")), 0.0) for text in (words, paint)
    )
    assert painted_err.sig == plain_err.sig and painted_err.problems == plain_err.problems


SCAN = (
    'for ip in $(seq 1 254); do (curl -s --connect-timeout 1 "http://192.168.1.$ip/sensor" '
    '2>/dev/null | grep -q "value" && echo "FOUND: 192.168.1.$ip") & done; wait 2>/dev/null; '
    'echo "Scan complete"'
)


def test_questions_that_printed_only_the_commands_own_words_found_nothing() -> None:
    # openshrooly: a subnet scan whose only line is its closing words answered nothing.
    from hooktest import bash

    from metacog.event import Event
    from metacog.perception.action import found_nothing, from_event

    assert found_nothing("Bash", {"command": SCAN}, {"stdout": "Scan complete\n"}, "")
    call = from_event(Event(bash(SCAN, "Scan complete\n")), 0.0)
    assert call.ok and call.empty
    split = 'git ls-files --debug 2>&1 | grep -i "cache-tree" ; echo "---"'
    assert found_nothing("Bash", {"command": split}, {"stdout": "---\n", "stderr": ""}, "")
    # A search's fallback: grep's exit 1 is "no match", behind `||` as before it.
    listening = 'lsof -i :8000 -P 2>/dev/null | grep LISTEN || echo "Nothing listening"'
    call = from_event(Event(bash(listening, "Nothing listening\n")), 0.0)
    assert call.ok and call.empty
    # Its look-alike: what failed was no search (`ls` of a folder that is not there).
    missing = 'ls -la build/ 2>/dev/null || echo "No build directory"'
    assert not found_nothing("Bash", {"command": missing}, {"stdout": "No build directory"}, "")


def test_own_words_beside_an_answer_or_after_a_deed_are_no_empty_answer() -> None:
    from metacog.perception.action import found_nothing

    def empty(command: str, stdout: str) -> bool:
        return found_nothing("Bash", {"command": command}, {"stdout": stdout, "stderr": ""}, "")

    # The scan found something: the world's line beside the command's words.
    assert not empty(SCAN, "FOUND: 192.168.1.18\nScan complete\n")
    # Commands that do something print nothing when it went well.
    assert not empty('rm -rf dist; echo "Removed dist"', "Removed dist\n")
    assert not empty("kill 4242 2>/dev/null; echo done", "done\n")
    # The success branch answered the question: yes.
    assert not empty("grep -q TODO src/a.py && echo found", "found\n")
    # Nothing but words: no question was asked.
    assert not empty('echo "=== SUMMARY ===" && echo "all done"', "=== SUMMARY ===\nall done\n")
