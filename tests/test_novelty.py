"""metacog.perception.novelty: what a result brought that the window had not shown, and the
obstacles that bring nothing new, through the real hook and alone."""

from __future__ import annotations

import zlib

import pytest
from hooktest import agent_text, bash, captured, failed, send

from metacog.perception import novelty
from metacog.perception.call import Call


def _gains(results: list[str]) -> list[float]:
    win: dict = {"calls": 0}
    out = []
    for text in results:
        win["calls"] += 1
        ctx = novelty.update(win, Call("Bash", "x", ok=True), novelty.fingerprints(text), [])
        out.append(round(ctx.gain, 2))
    return out


def test_what_varies_between_identical_runs_is_not_news() -> None:
    runs = [
        f"started at 2026-11-2{i}T10:00:0{i}Z pid {100 + i}\nbuilt /tmp/build-{i}/out in {i}.5s\nok"
        for i in range(3)
    ]
    assert _gains(runs) == [1.0, 0.0, 0.0]


def test_a_new_path_a_new_line_number_or_a_new_code_is_news() -> None:
    runs = [
        "src/a.ts:10:3 error TS2345",
        "src/a.ts:12:3 error TS2345",
        "src/b.ts:10:3 error TS2345",
    ]
    assert _gains(runs) == [1.0, 1.0, 1.0]


def test_a_rule_of_punctuation_says_nothing_and_blank_lines_are_not_lines() -> None:
    assert novelty.fingerprints("=====\n\n   \n-----") == []
    assert len(novelty.fingerprints("=====\nFAILED x\n\n")) == 1


def test_only_the_head_and_tail_of_a_long_result_are_compared() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    assert len(novelty.fingerprints(text)) == novelty.HEAD + novelty.TAIL


def test_a_line_shown_longer_ago_than_the_span_is_news_again() -> None:
    win: dict = {"calls": 0}
    prints = novelty.fingerprints("the answer")
    gains = []
    for call in (1, 2, 2 + novelty.SPAN + 1):
        win["calls"] = call
        ctx = novelty.update(win, Call("Bash", "x", ok=True), prints, [])
        gains.append(ctx.gain)
    assert gains == [1.0, 0.0, 1.0]


def remembered(win: dict) -> list[str]:
    """The fingerprints a window's novelty memory holds, least recently shown first."""
    return [k for _, prints in win["novelty"].get("shown", []) for k in prints.split()]


def test_the_memory_is_capped_and_a_damaged_one_is_replaced() -> None:
    # An older version's obstacle (six numbers, without its new lines) is kept as bringing some,
    # with no wall known.
    win: dict = {"calls": 1, "novelty": {"shown": "junk", "obstacles": [["x"], [1, 2, 3, 4, 0, 0]]}}
    prints = list(range(novelty.SEEN_CAP + 50))
    ctx = novelty.update(win, Call("Bash", "x", ok=False), prints, [])
    # The least recently shown go first: here the first 50 lines of the result.
    assert remembered(win) == [format(p, "06x") for p in prints[50:]]
    assert (
        ctx.obstacle
        and ctx.obstacles[0] == (1, 2, 0.03, 0, False, 1, 0)
        and len(ctx.obstacles) == 2
    )


def test_a_line_shown_again_is_remembered_as_shown_now_and_damaged_entries_are_dropped() -> None:
    # Damage of every shape, and an older version's memory (one key per line), are dropped;
    # the valid entry stays.
    win: dict = {
        "calls": 10,
        "novelty": {
            "seen": {"000001": 9},
            "shown": [["9", "000001"], [9, "not hex"], [9, 7], [9], "x", [9, "000002 000003"]],
        },
    }
    ctx = novelty.update(win, Call("Bash", "x", ok=True), [1, 3, 4], [])
    assert ctx.gain == 2 / 3  # 000001 only in damaged entries; 000003 shown at call 9
    assert "seen" not in win["novelty"]
    # 000003 moves to call 10; each fingerprint is kept once, under the call that showed it last.
    assert win["novelty"]["shown"] == [[9, "000002"], [10, "000001 000003 000004"]]
    win["calls"] = 11
    novelty.update(win, Call("Bash", "x", ok=True), [2], [])
    assert win["novelty"]["shown"] == [[10, "000001 000003 000004"], [11, "000002"]]
    # Beyond the span a call's lines are forgotten whole.
    win["calls"] = 11 + novelty.SPAN
    assert novelty.update(win, Call("Bash", "y", ok=True), [1, 2], []).gain == 0.5
    assert win["novelty"]["shown"] == [[11 + novelty.SPAN, "000001 000002"]]


def test_the_same_call_working_again_overcomes_its_obstacles() -> None:
    win: dict = {"calls": 0}
    for ok in (False, False, True):
        win["calls"] += 1
        ctx = novelty.update(win, Call("Bash", "pytest", ok=ok), [1], [])
    assert ctx.obstacles == []  # red, red, green: nothing stands in the way any more


def test_a_shorter_result_of_the_same_call_is_news() -> None:
    win: dict = {"calls": 0}
    gains = []
    for count in (9, 5, 5):
        win["calls"] += 1
        prints = novelty.fingerprints("error[E0308]: mismatched types\n" * count)
        ctx = novelty.update(win, Call("Bash", "cargo build", ok=False), prints, [])
        gains.append(ctx.gain)
    assert gains == [1.0, 1.0, 0.0]  # 9, then 5 (some got fixed), then 5 again


def test_a_failure_quoting_the_call_back_brings_only_what_the_call_did_not_send() -> None:
    prints, named = novelty.read(
        "Edit",
        {"file_path": "/w/a.py", "old_string": "def load(path):\n    return open(path)"},
        "",
        "String to replace not found in file.\nString: def load(path):\n    return open(path)",
    )
    assert len(prints) == 2  # the message and `String: def load(path):`, not the echoed body
    prints, named = novelty.read(
        "Bash", {"command": "make"}, "", "Exit code 2\nsrc/main.c:3: undefined `foo`"
    )
    assert len(prints) == 2 and len(named) == 1


def test_the_persons_no_is_not_an_obstacle_an_empty_answer_is() -> None:
    assert not novelty.is_obstacle(Call("Bash", "x", ok=False, mistake="rejected"))
    assert novelty.is_obstacle(Call("Bash", "x", ok=False, mistake="blocked"))
    assert novelty.is_obstacle(Call("Grep", "x", empty=True))
    assert not novelty.is_obstacle(Call("Bash", "x"))


def test_a_call_cancelled_by_its_siblings_failure_met_no_obstacle_of_its_own() -> None:
    # Claude Code cancels the rest of a parallel batch when one call fails: the failure is
    # the sibling's, counted once there (quiet sessions medgemma, exvs2, chkit: 4 words less).
    from metacog.perception.action import make

    def refused(error: str) -> Call:
        return make(
            "Read", "a.md", f"<tool_use_error>{error}</tool_use_error>", 0, 0, 0, refused=True
        )

    assert not novelty.is_obstacle(refused("Sibling tool call errored"))
    assert novelty.is_obstacle(refused("File does not exist."))


# Through the hook: a failure whose signature changes (so no streak of "the same error" forms)
# while everything else it prints was shown already, three times, is stuck; failures that each
# bring new specific lines under the same banner are progress.

COMMON = "\n".join(f"    at step{i} (/w/app/pipeline.js:{i}:1)" for i in range(8))


def test_obstacles_that_bring_nothing_new_speak_at_the_second_that_brought_nothing() -> None:
    # The first failure is news by definition; the next two show only what it showed (their
    # one new line, the attempt's number, names nothing): the 3rd call says so.
    texts = [
        agent_text(
            send(failed(f"node run.js --try {i}", f"Exit code 1\nerror: try {i} failed\n{COMMON}"))
        )
        for i in range(3)
    ]
    assert texts[:2] == ["", ""]
    assert (
        "2 obstacles in the last 2 calls" in texts[2] and "nothing the session had not" in texts[2]
    )
    assert "node run.js --try 2" in texts[2]  # the call: its error line names nothing
    assert len(texts[2]) <= 300 + len("metacog: ")


# Progress as the labels know it: a fix between runs, and each run's failure naming something
# new. (Five failures with nothing at all between that worked are Nociception's run of
# attempts, whatever they name: tests/test_nociception.py.)


def fixed(i: int) -> dict:
    return captured(
        "PostToolUse", "Edit", tool_input={"file_path": "/w/run.js", "new_string": f"v{i}"}
    )


def test_failures_that_each_name_something_new_stay_silent() -> None:
    texts = []
    for i in range(6):
        error = f"Exit code 1\nerror: `step{i}` failed\n{COMMON}"
        texts.append(agent_text(send(failed(f"node run.js --try {i}", error))))
        texts.append(agent_text(send(fixed(i))))
    assert texts == [""] * 12


def test_failures_with_new_specific_lines_under_one_banner_stay_silent() -> None:
    replies = []
    for i in range(5):
        error = 'Exit code 1\nerror: script "build" exited with code 1\n' + "\n".join(
            f"src/m{i}.ts:{j}:2 - error TS23{i}{j}: type {i}{j}" for j in range(6)
        )
        replies += [send(failed("npm run build", error)), send(fixed(i))]
    assert replies == [None] * 10


def test_three_different_questions_that_find_nothing_are_exploring() -> None:
    grep = captured("PostToolUse", "Grep")
    replies = []
    for pattern in ("fooBar", "foo_bar", "FooBarService"):
        payload = captured(
            "PostToolUse",
            "Grep",
            tool_input={**grep["tool_input"], "pattern": pattern},
            tool_response={"mode": "files_with_matches", "filenames": [], "numFiles": 0},
        )
        replies.append(send(payload))
    assert replies == [None] * 3


def test_a_hostile_structured_result_is_read_within_its_caps() -> None:
    import time

    huge = {f"k{i}": "a" for i in range(30000)}
    start = time.process_time()
    text = novelty.answer_text("mcp__x__y", huge)
    assert text.count("a") <= novelty.LEAF_CAP
    # Bounded by LEAF_CAP values, not by the size of the result (it was quadratic: 14 s).
    assert time.process_time() - start < 5


def test_obstacles_are_capped_whatever_a_damaged_state_says_of_the_calls() -> None:
    future = [[10**9, 1, 0, 1, 0, 0]] * 500
    win: dict = {"calls": 5, "novelty": {"obstacles": future}}
    read = novelty.update(win, Call("Bash", "x", ok=False), [1], [])
    assert len(win["novelty"]["obstacles"]) == 1 and len(read.obstacles) == 1


def test_a_line_that_moved_is_new_but_names_nothing_new() -> None:
    # The same message at another line number (lines were added above it): a new line, since
    # what moves may be what got fixed, but no news of a problem not seen before.
    win: dict = {"calls": 0}
    out = []
    for error in (
        'File "<string>", line 16\nSyntaxError: unexpected character',
        'File "<string>", line 17\nSyntaxError: unexpected character',
        "src/a.ts(40,3): error TS2345: Argument of type 'x' is not assignable",
        "src/a.ts(44,3): error TS2345: Argument of type 'x' is not assignable",
        "src/a.ts(44,3): error TS2345: Argument of type 'y' is not assignable",
    ):
        win["calls"] += 1
        prints, named = novelty.read("Bash", {"command": "run"}, "", error)
        read = novelty.update(win, Call("Bash", "run", ok=False), prints, named)
        out.append((round(read.gain, 2), read.news))
    assert out[1] == (0.5, 0)  # the frame moved; the message is the one shown
    assert out[3] == (1.0, 0)  # the same error, four lines down
    assert out[4] == (1.0, 1)  # another type at the same place: news


def test_a_quoted_source_line_that_moved_names_nothing_new() -> None:
    # A test runner quotes the failing line with its number in a gutter; an edit above it moved
    # it down two lines. The look-alike: another line of code in the same gutter is news.
    frame = "  {} |     expect(found_user.name).toBe('ada');"
    out = []
    win: dict = {"calls": 0}
    for error in (frame.format(254), frame.format(256), "> 256 |     expect(user_id).toBe(7);"):
        win["calls"] += 1
        prints, named = novelty.read("Bash", {"command": "npm test"}, "", f"FAIL\n{error}")
        read = novelty.update(win, Call("Bash", "t", ok=False), prints, named)
        out.append(read.news)
    assert out == [1, 0, 1]


def test_what_varies_between_runs_names_nothing() -> None:
    # A summary of durations (`Time: 0.9 s, estimated 5 s`) is a new line the first time a
    # runner estimates, and no news: times name nothing.
    summary = "Time:        0.994 s, estimated 5 s"
    prints, named = novelty.read("Bash", {"command": "npm test"}, "", summary)
    assert len(prints) == 1 and named == []


def test_an_empty_answer_is_nothing_found_at_its_place() -> None:
    grep = novelty.nothing("Grep", {"pattern": "a", "path": "/w/src"})
    assert grep == novelty.nothing("Grep", {"pattern": "b", "path": "/w/src"})
    assert grep != novelty.nothing("Grep", {"pattern": "a", "path": "/w/lib"})
    # A command's places are its words that are paths; the pattern and the flags are not.
    one = novelty.nothing("Bash", {"command": 'grep -n "handler" /w/src/server.js'})
    assert one == novelty.nothing("Bash", {"command": "grep -rn 'handler\\b' /w/src/server.js"})
    assert one != novelty.nothing("Bash", {"command": 'grep -n "handler" /w/src/app.js'})


def test_an_edit_makes_an_empty_place_news_again_a_failed_one_does_not() -> None:
    win: dict = {"calls": 0}
    empty = Call("Grep", "x", ok=True, empty=True)
    print_ = [novelty.nothing("Grep", {"path": "/w"})]
    gains = []
    for action in (
        empty,
        empty,
        Call("Edit", "a", ok=False),
        empty,
        Call("Edit", "a", ok=True),
        empty,
    ):
        win["calls"] += 1
        read = novelty.update(win, action, print_ if action is empty else [], [])
        if action is empty:
            gains.append(read.gain)
    assert gains == [1.0, 0.0, 0.0, 1.0]


def test_a_subagent_window_remembers_only_its_obstacles_within_a_smaller_cap() -> None:
    win: dict = {"calls": 0}
    for n in range(50):  # results of 40 lines each: a main window would keep 2,000 lines
        win["calls"] += 1
        text = "\n".join(f"line {n}-{k} of /w/src/m{n}.py" for k in range(40))
        ok = Call("Read", f"m{n}", ok=True)
        novelty.update(win, ok, novelty.fingerprints(text), [], main=False)
    assert remembered(win) == []
    fail = Call("Bash", "make", ok=False)
    gains = []
    for _ in range(2):
        win["calls"] += 1
        prints = [zlib.crc32(f"{k} {x}".encode()) & 0xFFFFFF for k in range(40) for x in range(10)]
        gains.append(novelty.update(win, fail, prints, [], main=False).gain)
    assert gains == [1.0, 0.25]  # of the same 400 lines, the 100 not remembered are new
    assert len(remembered(win)) == novelty.SUB_SEEN_CAP


def test_the_calls_own_words_said_back_are_not_news() -> None:
    # Another missing tool is the same answer: the name in it is the one the call sent.
    win: dict = {"calls": 0}
    reads = []
    for tool in ("mcp__n8n__list_runs", "mcp__n8n__run_flow", "mcp__n8n__get_flow"):
        win["calls"] += 1
        error = f"<tool_use_error>Error: No such tool available: {tool}</tool_use_error>"
        prints, named = novelty.read(tool, {}, "", error)  # as a refusal reads (FACTS.md)
        action = Call(tool, "", ok=False)
        reads.append(novelty.update(win, action, prints, named))
    assert [(r.gain, r.news) for r in reads] == [(1.0, 1), (0.0, 0), (0.0, 0)]


def test_a_name_the_call_did_not_send_is_news() -> None:
    # The look-alike: the same command, and the world answers with another missing module.
    win: dict = {"calls": 0}
    news = []
    for module in ("lodash", "dayjs"):
        win["calls"] += 1
        error = f"Exit code 1\nsrc/app.ts: error: Cannot find module '{module}'"
        prints, named = novelty.read("Bash", {"command": "npm run build"}, "", error)
        news.append(novelty.update(win, Call("Bash", "b", ok=False), prints, named).news)
    assert news == [1, 1]


def _refusals(calls: list[tuple[str, dict, str]]) -> list[tuple[float, int]]:
    win: dict = {"calls": 0}
    out = []
    for tool, tool_input, error in calls:
        win["calls"] += 1
        prints, named = novelty.read(tool, tool_input, "", error)
        action = Call(tool, str(tool_input), ok=False)
        read = novelty.update(win, action, prints, named)
        out.append((read.gain, read.news))
    return out


def test_the_places_a_calls_paths_imply_are_its_own_words() -> None:
    # The working directory a refusal names is a folder of the file asked for; the agent moved
    # (cd) between the two asks, so the folder changed, and it is still the same answer.
    hint = "\nsee lib_paths.md"
    missing = "<tool_use_error>File does not exist. Current working directory: {}</tool_use_error>"
    calls = [
        ("Edit", {"file_path": "/w/site/app/conf.ts"}, missing.format("/w/site")),
        ("Read", {"file_path": "/w/site/app/conf.ts"}, missing.format("/w/site/app")),
        # A relative path said back resolved: `../x/y.ts` is `/w/x/y.ts`.
        ("Bash", {"command": "cat ../lib/util.ts"}, f"cat: /w/lib/util.ts: No such file{hint}"),
        ("Bash", {"command": "cat ./lib/util.ts"}, f"cat: /w/site/lib/util.ts: No such file{hint}"),
    ]
    assert _refusals(calls) == [(1.0, 1), (0.0, 0), (1.0, 1), (0.0, 0)]


def test_a_place_the_calls_paths_do_not_imply_is_news() -> None:
    # The look-alike: the folder the refusal names is not one of the file asked for.
    missing = "<tool_use_error>File does not exist. Current working directory: {}</tool_use_error>"
    calls = [
        ("Read", {"file_path": "/w/site/app/conf.ts"}, missing.format("/w/site")),
        ("Read", {"file_path": "/w/site/app/conf.ts"}, missing.format("/w/other")),
    ]
    assert _refusals(calls) == [(1.0, 1), (1.0, 1)]


def test_a_line_shown_before_is_not_news_whichever_call_printed_it() -> None:
    # The first call sent the folder (masked in its line); the second did not, and printed the
    # very same line: it is not news for being printed by a call that did not send its words.
    missing = "<tool_use_error>No such folder here: /w/site</tool_use_error>"
    calls = [
        ("Glob", {"pattern": "*.md", "path": "/w/site"}, missing),
        ("Read", {"file_path": "/w/README.md"}, missing),
    ]
    assert _refusals(calls) == [(1.0, 1), (0.0, 0)]


def test_a_hostile_input_implies_places_within_its_caps() -> None:
    # A megabyte of slashes is no path; a thousand paths are weighed up to KIN_CAP of them.
    huge = "/a" * 500_000
    many = " ".join(f"/w/d{i}/f.py" for i in range(1000))
    prints, _ = novelty.read("Bash", {"command": f"ls {huge} {many}"}, "", "ls: /w/d1: denied")
    assert len(prints) == 1
    folders, ends = novelty._kin({huge, *many.split()})
    assert len(folders) <= 2 * novelty.KIN_CAP and not ends


def test_a_hostile_place_is_read_within_its_caps() -> None:
    huge = "/w/" + "a" * 5_000_000
    assert novelty.nothing("Read", {"file_path": huge}) == novelty.nothing(
        "Read", {"file_path": huge[: novelty.LINE_CAP]}
    )
    words = " ".join(f"/w/d{i}/" for i in range(200_000))
    assert isinstance(novelty.nothing("Bash", {"command": f"ls {words}"}), int)


def test_a_failure_that_exited_0_is_read_whole() -> None:
    # A build piped into `head` exits 0; its output says it failed on its last line. What it
    # brought is the whole output: another type error at another route is news, though the
    # line that told of the failure is the one shown before.
    from metacog.event import Event
    from metacog.perception import action

    def build(route: str) -> dict:
        out = (
            "$ next build\nFailed to compile.\n"
            f"./app/api/{route}/route.ts:12:5\nType error: Property '{route}' does not exist.\n"
            'error: script "pages:build" exited with code 1'
        )
        payload = captured(
            "PostToolUse",
            "Bash",
            tool_input={"command": "bun run pages:build 2>&1 | head -100", "description": "x"},
            tool_response={"stdout": out, "stderr": "", "interrupted": False, "isImage": False},
        )
        return action.from_event(Event(payload), 0.0)

    win: dict = {"calls": 0}
    reads = []
    for route in ("analytics", "analytics", "billing"):
        win["calls"] += 1
        record = build(route)
        assert not record.ok
        reads.append(novelty.update(win, record, list(record.prints), list(record.named)))
    assert [r.news > 0 for r in reads] == [True, False, True]


def test_a_passing_call_that_shows_only_a_failures_lines_met_that_wall_again() -> None:
    win: dict = {"calls": 0}

    def call(target: str, ok: bool, prints: list, main: bool = True) -> novelty.Reading:
        win["calls"] += 1
        return novelty.update(win, Call("Bash", target, ok=ok), prints, [], main)

    assert call("curl api/a", False, [11, 12]).obstacle  # the wall
    echo = call("python3 probe.py", True, [12, 11])  # exits 0, prints the same error
    assert echo.obstacle and echo.gain == 0.0 and echo.obstacles[-1][2] == 0.0
    # Its look-alikes: something new beside it is an answer; lines a passing call showed
    # before are a question asked again, not a wall; a subagent's window keeps no walls.
    assert not call("python3 probe.py --v", True, [11, 13]).obstacle
    call("git status", True, [21])
    assert not call("git status", True, [21]).obstacle
    win2: dict = {"calls": 0}
    for ok in (False, True):
        win2["calls"] += 1
        sub = novelty.update(win2, Call("Bash", "x", ok=ok), [31], [], False)
    assert not sub.obstacle and "walls" not in win2["novelty"]


def test_a_failure_printing_what_a_passing_call_showed_names_nothing_new() -> None:
    # `node app.js || echo` passed printing the error; the same run failing next shows the
    # very lines again: nothing new, though their names were never weighed before (a
    # passing call's are not); a failure with a line of its own still names it.
    win: dict = {"calls": 0}
    error = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'multer'\n  at resolve (x.js:2:5)"
    readings = []
    for command, ok, text in (
        ("node app.js || echo failed", True, error),
        ("node app.js", False, error),
        ("node app.js", False, error + "\nError: Cannot find module 'express'"),
    ):
        win["calls"] += 1
        prints, named = novelty.read(
            "Bash", {"command": command}, "" if not ok else text, "" if ok else text
        )
        readings.append(novelty.update(win, Call("Bash", command, ok=ok), prints, named))
    assert [(r.gain, r.news) for r in readings[1:]] == [(0.0, 0), (1 / 3, 1)]


def test_the_walls_are_capped_and_a_damaged_memory_is_replaced() -> None:
    win: dict = {"calls": 1, "novelty": {"walls": "junk"}}
    novelty.update(win, Call("Bash", "x", ok=False), list(range(700)), [])
    assert len(win["novelty"]["walls"]) == novelty.WALLS_CAP


def _passing(command: str, stdout: str) -> dict:
    return captured(
        "PostToolUse",
        "Bash",
        tool_input={"command": command, "description": "x"},
        tool_response={"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False},
    )


def test_a_wall_met_again_by_calls_that_exit_0_is_said_through_the_hook() -> None:
    denied = "Access denied (403 Forbidden) for key k-77"
    texts = [agent_text(send(failed("shodan search host", f"Exit code 1\n{denied}")))]
    texts += [agent_text(send(_passing(f"python3 probe{i}.py", denied))) for i in range(2)]
    assert texts[:2] == ["", ""]
    assert "Bash `python3 probe1.py` showed only an earlier failure" in texts[2]
    assert "2 obstacles in the last 2 calls" in texts[2]
    # Its look-alike: each run shows a new answer under the same line.
    quiet = [agent_text(send(failed("shodan search host", f"Exit code 1\n{denied}")))]
    quiet += [
        agent_text(send(_passing(f"python3 other{i}.py", f"{denied}\nfound host-{i}.example")))
        for i in range(3)
    ]
    assert quiet == [""] * 4


def test_the_same_call_passing_with_its_failures_lines_less_its_exit_code_met_the_wall() -> None:
    # `python3 probe.py` failed (`Exit code 1` and the error), then exits 0 printing the error
    # alone: a shorter result of the same call, and still nothing but the wall.
    win: dict = {"calls": 0}

    def call(ok: bool, prints: list) -> novelty.Reading:
        win["calls"] += 1
        return novelty.update(win, Call("Bash", "python3 probe.py", ok=ok), prints, [])

    call(False, [1, 11, 12])
    again = call(True, [11, 12])
    assert again.obstacle and again.gain == 0.0
    # Met again and again, the wall stays one for as long as it is met, past the span.
    for _ in range(novelty.SPAN + 5):
        again = call(True, [11, 12])
    assert again.obstacle


def test_what_the_agent_wrote_and_a_failure_quotes_back_is_not_news() -> None:
    # A test the agent patched fails again; the traceback quotes the assertion as the agent
    # just wrote it. The failure says nothing the agent had not written itself: no news. Its
    # look-alike: a line the agent did not write (a new exception) is news.
    from metacog.event import Event
    from metacog.perception import action

    def edit(new: str) -> object:
        payload = captured(
            "PostToolUse",
            "Edit",
            tool_input={"file_path": "/w/tests/test_cart.py", "old_string": "x", "new_string": new},
        )
        return action.from_event(Event(payload), 0.0)

    def run(error: str) -> object:
        payload = captured(
            "PostToolUseFailure",
            "Bash",
            tool_input={"command": "pytest tests/test_cart.py", "description": "x"},
            error=error,
        )
        return action.from_event(Event(payload), 0.0)

    written = "    assert cart_total(items) == expected_total_cents"
    win: dict = {"calls": 0}
    reads = []
    for record in (
        edit(f"def test_total():\n{written}\n"),
        run(f"Exit code 1\n>{written}\nE   AssertionError: 1200 != 1250"),
        edit(f"def test_total():\n{written}  # patched\n"),
        run(f"Exit code 1\n{written}  # patched\nE   AssertionError: 1200 != 1250"),
        run(f"Exit code 1\n{written}  # patched\nE   KeyError: 'currency_code'"),
    ):
        win["calls"] += 1
        reads.append(novelty.update(win, record, list(record.prints), list(record.named)))
    assert [r.news for r in reads[1::2]] == [1, 0]  # the assertion only, then nothing
    assert reads[4].news == 1  # the new exception alone


def test_a_content_hash_in_a_path_is_not_news() -> None:
    # A content-addressed store path changes with every build of the same source: the same
    # error under another hash is the same error. Its look-alike: another file is news.
    def line(digest: str, name: str) -> str:
        return f"error: while evaluating `/nix/store/{digest}-source/modules/{name}.nix'"

    a = novelty.read(
        "Bash", {"command": "nix build"}, "", line("1gjnmb3al8j9qsflsjrsr4687mb7xiz3", "top")
    )
    b = novelty.read(
        "Bash", {"command": "nix build"}, "", line("f0kn3ipynlsadpq1a2i1khhwg58mh28m", "top")
    )
    c = novelty.read(
        "Bash", {"command": "nix build"}, "", line("f0kn3ipynlsadpq1a2i1khhwg58mh28m", "boot")
    )
    assert a == b and a != c


def test_an_older_versions_memory_is_taken_over() -> None:
    # One key per line, {fingerprint: call that showed it last}: a session running across
    # an upgrade keeps what it saw (beyond the span, nothing).
    win: dict = {"calls": 70, "novelty": {"seen": {"000001": 5, "000002": 60, "000003": 69}}}
    ctx = novelty.update(win, Call("Bash", "x", ok=True), [1, 2, 3, 4], [])
    assert ctx.gain == 0.5  # 000001 was shown 65 calls ago: beyond SPAN; 000004 never
    assert win["novelty"]["shown"] == [[70, "000001 000002 000003 000004"]]
    assert "seen" not in win["novelty"]


def test_a_damaged_memory_of_any_size_is_bounded_before_it_is_searched() -> None:
    # Ten thousand entries of one call, and one entry of a million fingerprints: what is
    # searched is at most SPAN + 1 entries and the cap, the most recent kept.
    many = [[50, "000001"]] * 10_000
    huge = [[50, " ".join(["00000a"] * 1_000_000 + ["00000b"])]]
    for shown in (many, huge):
        win: dict = {"calls": 51, "novelty": {"shown": shown}}
        ctx = novelty.update(win, Call("Bash", "x", ok=True), [1, 11], [])
        kept = remembered(win)
        assert len(kept) <= novelty.SEEN_CAP and kept[-2:] == ["000001", "00000b"]
        assert ctx.gain == 0.5  # 000001 shown by the many, 00000b the last of the huge one


def test_what_a_multiedit_wrote_is_each_of_its_new_strings() -> None:
    edits = [{"new_string": "total = 1"}, {"old_string": "x"}, "junk", {"new_string": "n = 2"}]
    lines = novelty.fingerprints(novelty.written("MultiEdit", {"edits": edits}))
    assert lines == novelty.fingerprints("total = 1\nn = 2")
    assert novelty.written("MultiEdit", {"edits": "junk"}) == ""


def test_a_failure_in_a_terminals_colours_is_read_as_its_words() -> None:
    # A runner that paints its output (`FORCE_COLOR`, tsc --pretty) quotes the failing line in
    # a grey gutter and stamps a dim time: without their escape codes, the same failure met
    # again, one line down and a second later, brings nothing new, and the third says so. The
    # look-alike: coloured failures that each name a new file stay silent.
    def painted(i: int, file: str) -> str:
        return (
            f"Exit code 1\n\x1b[2m2026-12-04T10:00:0{i}Z\x1b[22m \x1b[31merror\x1b[39m: try {i}"
            f" failed in \x1b[36m{file}\x1b[39m\n\x1b[90m {40 + i} |\x1b[39m "
            f"\x1b[36mconst\x1b[39m settings = \x1b[33mloadSettings\x1b[39m(cfg);\n{COMMON}"
        )

    same = [
        agent_text(send(failed(f"node run.js --try {i}", painted(i, "run.js")))) for i in range(3)
    ]
    assert same[:2] == ["", ""] and "nothing the session had not" in same[2], same
    assert "\x1b" not in same[2]
    other = []
    for i in range(3):
        payload = failed(f"node run.js --try {i}", painted(i, f"src/part{i}.js"))
        payload["session_id"] = "another-session"
        other.append(agent_text(send(payload)))
    assert other == ["", "", ""], other


def test_a_line_that_opens_with_where_it_points_names_nothing_new_when_it_moves() -> None:
    # A linter that lists findings under their file's name (eslint's `  37:18  warning …`):
    # the same finding two lines down is the same problem, moved; another rule there is news.
    out = []
    win: dict = {"calls": 0}
    for line in (
        "  37:18  warning  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any",
        "  39:18  warning  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any",
        "  39:18  error  'cfg' is assigned a value but never used  @typescript-eslint/no-unused-vars",
    ):
        win["calls"] += 1
        error = f"/w/src/app.ts\n{line}\n\n✖ 1 problem"
        prints, named = novelty.read("Bash", {"command": "npx eslint src"}, "", error)
        read = novelty.update(win, Call("Bash", "npx eslint src", ok=False), prints, named)
        out.append(read.news)
    assert out[0] and out[1:] == [0, 1]  # the first names the file too


def _perceived(payloads: list[dict]) -> list[novelty.Reading]:
    """Each call as the hook perceives it (metacog.perception.action.from_event), read against
    one window in turn."""
    from metacog.event import Event
    from metacog.perception.action import from_event

    win: dict = {"calls": 0}
    out = []
    for payload in payloads:
        win["calls"] += 1
        action = from_event(Event(payload), 0.0)
        out.append(novelty.update(win, action, list(action.prints), list(action.named)))
    return out


def test_a_commands_own_words_are_not_news_whichever_call_prints_them() -> None:
    # A fallback's word and an echoed header, printed later by a look at a background job's
    # log: the agent's words coming back, not the world's answer. Only the exit code and `ls`'s
    # complaint are new.
    sent = 'node shot.mjs > /tmp/job.out; ls /tmp/shot.png 2>/dev/null || echo "MISSING"; echo "--- rerun ---"'
    log = "Exit code 1\nMISSING\n--- rerun ---\nls: /tmp/shot.png: No such file or directory"
    _, later = _perceived(
        [bash(sent, stdout=""), failed("cat /tmp/job.out; ls /tmp/shot.png", log)]
    )
    assert later.gain == 0.5  # 2 lines of 4; "MISSING" and "--- rerun ---" counted as news: 1.0
    # Said again by a later command, each is remembered once, under the call that said it last.
    from metacog.event import Event
    from metacog.perception.action import from_event

    win: dict = {"calls": 0}
    for payload in (bash(sent, stdout=""), bash(sent, stdout="")):
        win["calls"] += 1
        action = from_event(Event(payload), 0.0)
        novelty.update(win, action, list(action.prints), list(action.named))
    kept = remembered(win)
    assert len(kept) == len(set(kept))
    # The same lines printed by a command that never said them are the world's: news.
    (other,) = _perceived([failed("cat /tmp/job.out; ls /tmp/shot.png", log)])
    assert other.gain == 1.0


def test_a_shorter_result_through_other_plumbing_is_not_news() -> None:
    # `2>/dev/null` hides what `ls` said: the same act shows less, and nothing got fixed.
    log = "Exit code 1\nMISSING\n--- rerun ---"
    readings = _perceived(
        [
            failed("cat /tmp/job.out; ls /tmp/shot.png", f"{log}\nls: /tmp/shot.png: No such file"),
            failed("cat /tmp/job.out; ls /tmp/shot.png 2>/dev/null", log),
        ]
    )
    assert readings[1].gain == 0.0


# Issue 39: the place an empty answer names is read by metacog.perception.act from the raw
# command. Each variant split on spaces named another place than its plain form before.
@pytest.mark.parametrize(
    ("variant", "plain"),
    [
        pytest.param('ls "src/"', "ls src/", id="quoted"),
        pytest.param('find "my dir/" -name x.py', "find my\\ dir/ -name x.py", id="quoted-spaces"),
        pytest.param('cd "a b/" && ls build/', "cd a\\ b/ && ls build/", id="cd"),
        pytest.param('timeout 10 find . -name "*.py"', "find . -name *.py", id="timeout"),
        pytest.param("ls src/ 2> err.log", "ls src/", id="redirect"),
        # `sudo -u bob`, `2>/dev/null` and `| head -5` name no place split or not: with a
        # quoted folder, which was none.
        pytest.param('sudo -u bob ls "/srv/" 2>/dev/null | head -5', "ls /srv/", id="sudo-head"),
        pytest.param("grep -f - src/ <<'EOF'\nlib/a.py\nEOF", "grep -f - src/", id="heredoc"),
        pytest.param("ls dist/ || echo see docs/", "ls dist/", id="sayer"),
        # A sayer after the shell's keywords, a quoted pipe: words said, no place looked at.
        pytest.param("if ls dist/; then echo see docs/; fi", "ls dist/", id="keywords"),
        pytest.param('ls dist/ && echo "|" docs/', "ls dist/", id="quoted-pipe"),
    ],
)
def test_the_place_of_an_empty_answer_is_its_plain_forms(variant: str, plain: str) -> None:
    from hooktest import bash

    from metacog.event import Event
    from metacog.perception.action import from_event

    empty, same = (from_event(Event(bash(c, stdout="")), 0.0) for c in (variant, plain))
    assert empty.empty and same.empty
    assert empty.prints == same.prints


def test_two_places_of_empty_answers_are_two() -> None:
    assert novelty.nothing("Bash", {"command": 'ls "a b/"'}) != novelty.nothing(
        "Bash", {"command": 'ls "a c/"'}
    )
