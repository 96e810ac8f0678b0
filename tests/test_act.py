"""metacog.perception.act: one identity of a shell command, read once from its words, and the
readers that ask it (shell's program, actor and test runs; a Call's identity and what it does)."""

from __future__ import annotations

import pytest
from hooktest import bash, said

from metacog.perception import action as actions
from metacog.perception.act import read, segments, steps, unheredoc, words
from metacog.perception.novelty import call_key
from metacog.perception.shell import actor, first_step, first_word, named_words, script
from metacog.perception.shell import test_command as runs_tests  # not a test itself


@pytest.mark.parametrize(
    ("plain", "dressed"),
    [
        ("ls build", "ls build 2>/dev/null"),
        ("npm run build", "npm run build 2>&1 | tail -30"),
        ("cargo check", "cargo check 2>&1 | head -100"),
        ("psql -h db -c 'select 1'", "psql -h db -c 'select 1' || true"),
        ("make deploy", "cd app && make deploy; echo done"),
        ("gh run view 42", "sleep 30 && gh run view 42"),
        ("pytest -x", "timeout 600 pytest -x"),
        ("rm -rf dist", "sudo -u bob rm -rf dist"),
        ("git status", "git status &>/dev/null && echo ok"),
    ],
)
def test_plumbing_does_not_change_the_act(plain: str, dressed: str) -> None:
    assert read(dressed).key == read(plain).key
    assert read(dressed).program == read(plain).program


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("ls build", "ls dist"),
        ("grep -rn TODO src | wc -l", "grep -rn TODO src"),  # counting is another question
        ("npx create-next-app web", 'echo "N" | npx create-next-app web'),  # an answer fed
        ("echo ready", "echo ready > status.txt"),  # the same words, but this one writes
    ],
)
def test_what_changes_the_question_is_another_act_or_writes(one: str, other: str) -> None:
    a, b = read(one), read(other)
    assert a.key != b.key or a.writes != b.writes


def test_quotes_and_heredocs_are_honoured() -> None:
    assert words('grep -r "a|b && c" src') == ["grep", "-r", "a|b && c", "src"]
    assert read("cat > notes.md <<'EOF'\nls; rm -rf /\nEOF").program == "cat"
    assert not read("cat > notes.md <<'EOF'\nrm -rf x\nEOF").key.count("rm")


def test_what_follows_a_heredoc_is_read_and_its_body_is_not() -> None:
    command = "cat > t.sh <<'EOF'\nrm -rf build && ls\nEOF\nchmod +x t.sh && ./t.sh"
    assert "rm" not in words(command) and words(command)[-1] == "./t.sh"  # was dropped
    assert segments(command) == ["cat > t.sh <<'EOF'", "chmod +x t.sh", "./t.sh"]
    assert "rm -rf" not in unheredoc(command) and unheredoc(command).endswith("./t.sh")
    assert words('cat <<< "a b"') == ["cat", "<<<", "a b"]  # a here-string opens no body
    # Never closed: the rest is the body.
    assert segments("python3 - <<PY\nimport os && x") == ["python3 - <<PY"]


def test_a_line_that_ends_with_and_or_or_or_a_pipe_goes_on() -> None:
    # An operator is a token no word can be (`\0` and its text), as a parenthesis is.
    assert words("make &&\n  echo ok") == ["make", "\0&&", "echo", "ok"]
    assert words("ls ||\n\necho x | \n wc") == ["ls", "\0||", "echo", "x", "\0|", "wc"]
    assert words("make\necho ok") == ["make", "\0\n", "echo", "ok"]
    assert segments("make &&\necho ok") == ["make", "echo ok"]
    # A heredoc's body on the way is a file's text, never a command, whatever the list does.
    written = "cat > f <<EOF &&\nline one && rm -rf x\nEOF\nls"
    assert unheredoc(written) == "cat > f <<EOF &&\n\nls"
    assert segments(written) == ["cat > f <<EOF", "ls"]
    piped = "python3 - <<PY |\nimport os\nPY\nhead -3"
    assert "import" not in unheredoc(piped) and [s.split()[-1] for s in segments(piped)] == ["-3"]


def test_a_list_is_cut_where_the_shell_cuts_it() -> None:
    assert segments('sleep 3 && curl -s "a && b" | jq . ; echo done &') == [
        "sleep 3",
        'curl -s "a && b" | jq .',
        "echo done",
    ]
    assert segments("") == []


def test_the_readers_of_a_command_agree_on_its_program() -> None:
    # Issue 39: `first_word` read the last `&&` step, `first_step` and `actor` the first.
    command = "cd app && make build && ./run.sh x"
    assert first_word(command) == actor(command) == read(command).program == "make"
    # `sudo -u bob rm` had the actor `-u`.
    assert first_word("sudo -u bob rm -rf x") == actor("sudo -u bob rm -rf x") == "rm"
    # Feeding a prompt its answer is not the act; waiting first is no act yet.
    assert actor("yes | cp a b") == "cp"
    assert actor("sleep 30 && gh run view 7") == ""
    assert read("sleep 30 && gh run view 7").waits


def test_the_first_step_and_what_a_command_names_come_from_the_same_reading() -> None:
    # Issue 39: the guard's reader split on spaces and its own step pattern, beside the act's.
    assert first_step("sudo -u bob rm -rf dist") == first_step("rm -rf dist") == ["rm", "dist"]
    assert first_step("cd app && timeout 9 ./run.sh x 2>&1 | tail") == ["run.sh", "x"]
    assert first_step('grep "a | b" src && ls') == ["grep", "a | b", "src"]
    assert named_words('cd app && grep -n "a b" src | head') == ["grep", "a b", "src", "head"]
    assert first_step("") == named_words("") == []


def test_code_given_inline_is_no_script_file() -> None:
    # Read whole (quotes honoured), `python3 -c "…sys.path.append('/x')…"` named its code as
    # the file it runs, and a traceback it printed became a check the turn's end held on to.
    assert script("python3 -c \"import sys\nsys.path.append('/opt/x')\"") == ""
    assert script("bash -c 'ls /tmp'") == ""
    assert script("uv run python tools/x.py --fast") == "tools/x.py"
    assert script("timeout 60 ./deploy.sh prod") == "deploy.sh"


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("timeout 10 pytest -x", True),  # issue 39: was no test to test_command
        ("pnpm test", True),  # pnpm ran the next word and hid `test`
        ("pnpm lint && pnpm test", True),
        ("npm run test -- --run a.test.ts 2>&1 | tail", True),
        ("make check", True),
        ("cargo check 2>&1 | head", False),  # verification, not the tests
        ("pip install pytest", False),
    ],
)
def test_a_test_run_past_the_words_that_run_it(command: str, runs: bool) -> None:
    assert runs_tests(command) is runs


def test_what_a_long_command_does_is_read_before_its_target_is_cut() -> None:
    # Issue 39: a command longer than the 120-character target that ends in `git checkout`
    # writes, and its capped target did not say so.
    command = "python3 scripts/prepare.py --input data/raw --output data/clean " * 3 + (
        "&& git checkout main"
    )
    call = actions.make("Bash", actions.target_of("Bash", {"command": command}, "/w"), "", 0, 0, 0)
    assert "git checkout" not in call.target
    felt = actions.make(
        "Bash", call.target, "", 0, 0, 0, **actions.acted("Bash", {"command": command})
    )
    assert felt.writes and not call.writes


def test_a_call_is_known_by_its_act_and_keeps_it_through_the_window() -> None:
    from metacog.perception.call import stored

    plain = actions.make(
        "Bash", "ls build", "", 0, 0, 0, **actions.acted("Bash", {"command": "ls build"})
    )
    dressed_command = "ls build 2>/dev/null"
    dressed = actions.make(
        "Bash", dressed_command, "", 0, 0, 0, **actions.acted("Bash", {"command": dressed_command})
    )
    assert dressed.identity == plain.identity == "Bash ls build"
    assert call_key(dressed) == call_key(plain)
    assert dressed.step == plain.step
    again = stored(dressed.record())
    assert (
        again is not None and again.identity == dressed.identity and again.target == dressed_command
    )


def test_the_same_act_in_other_plumbing_is_going_in_circles() -> None:
    # Vestibular's "same action 4 times" read `ls build 2>/dev/null` and `ls build` as two.
    listing = "a.o\nb.o\n"
    steps = [
        bash("ls build", listing),
        bash("ls build 2>/dev/null", listing),
        bash("ls build | head -20", listing),
        bash("ls build 2>&1", listing),
    ]
    out = said(steps)
    assert not any(out[:3]) and "4 times in a row" in out[3], out
    # Its look-alike: four other listings.
    other = [bash(f"ls {d}", listing) for d in ("build", "dist", "out", "lib")]
    assert not any(said(other))


def test_a_start_in_the_background_is_not_the_act_working() -> None:
    # A server that failed to start, started again in the background: that it started says
    # nothing of how it ends, so the failure is not overcome (livestream-copilot: `node
    # --import=tsx src/index.ts` failing, then sent to the background, then failing again).
    from metacog.perception import novelty

    def call(command: str, ok: bool, **more: object) -> object:
        tool_input = {"command": command, **more}
        return actions.make(
            "Bash",
            command,
            "" if ok else "Exit code 1\nError: Cannot find package 'multer'",
            0,
            0,
            0,
            **actions.acted("Bash", tool_input),
        )

    for background in (
        call("node src/index.ts 2>&1", True, run_in_background=True),
        call("node src/index.ts &", True),
    ):
        win: dict = {"calls": 1}
        novelty.update(win, call("node src/index.ts", False), [1, 2], [2])
        win["calls"] = 2
        read = novelty.update(win, background, [3], [])
        assert background.background and [o[0] for o in read.obstacles] == [1]
    # Its look-alike: the same act run to its end and passing overcomes the failure.
    win = {"calls": 1}
    novelty.update(win, call("node src/index.ts", False), [1, 2], [2])
    win["calls"] = 2
    assert novelty.update(win, call("node src/index.ts 2>&1", True), [3], []).obstacles == []


def test_a_command_is_read_once_for_its_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The call's record, its hidden failure and the shell's readers each ask what a command
    is: it is read once, and each gets the same reading; another command is read anew."""
    from metacog.perception import act as acts

    read: list[str] = []
    original = acts._read

    def counting(command: str) -> acts.Act:
        read.append(command)
        return original(command)

    monkeypatch.setattr(acts, "_read", counting)
    monkeypatch.setattr(acts, "_READ", {})
    first = acts.read("cd app && pytest -x 2>&1 | tail -5")
    assert acts.read("cd app && pytest -x 2>&1 | tail -5") is first
    assert first.key == original("cd app && pytest -x 2>&1 | tail -5").key and first.tests
    assert acts.read("git status").program == "git"
    assert read == ["cd app && pytest -x 2>&1 | tail -5", "git status"]


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (
            'ls -la build/ 2>/dev/null || echo "No build directory"',
            [("else", "No build directory")],
        ),
        ("test -f x && echo OK || echo MISSING", [("then", "OK"), ("else", "MISSING")]),
        ("a && b || echo L", [("else", "L")]),  # `a` or `b` failed
        ("a || echo warn; echo done", [("else", "warn"), ("always", "done")]),
        ('grep -rn x src; echo "---"', [("always", "---")]),
        (
            'for ip in 1 2; do (curl "h/$ip" | grep -q v && echo "at $ip") & done; echo "Scan complete"',
            [("always", "Scan complete")],
        ),  # `at $ip` says what the world holds
        ("echo ready > status.txt; ls", []),  # into a file, not the output
        ("ls a || ls b", []),  # after `||` a program: its words are the world's
        # A list is one list past a line's end after `&&`, `||` or `|`, however long: the
        # shell reads `a &&⏎ echo` as one list (it had been read as `a; echo`, and more
        # than six acts as nothing said).
        ('git merge x &&\necho "Merged"', [("then", "Merged")]),
        ("ls build ||\n  echo 'No build'", [("else", "No build")]),
        ("a && b && c && d && e && f && g && echo done", [("then", "done")]),
        (
            "echo start && a && b && c && d && e && f && g && echo ok || echo failed",
            [("always", "start"), ("then", "ok"), ("else", "failed")],
        ),
        (
            "a && echo one; b || echo two && echo three",
            [("then", "one"), ("else", "two"), ("always", "three")],
        ),
        ("false && echo never || echo always", [("always", "always")]),
    ],
)
def test_the_lines_a_command_prints_in_its_own_words_and_when(
    command: str, says: list[tuple[str, str]]
) -> None:
    assert list(read(command).says) == says


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("if grep -q x f; then echo ok; fi", "grep"),
        ("! pytest -q", "pytest"),
        ("(cd app && npm test)", "npm"),
        ("until curl -s localhost:3000; do sleep 1; done", "curl"),
        ("while ps -p 42 > /dev/null; do sleep 5; done", "ps"),
        ('for ip in 1 2; do (curl -s "h/$ip" | grep -q v && echo at) & done', "for"),
        ("{ sudo make install; }", "make"),
        ("! timeout 5 sudo -u bob ls x", "ls"),
        ("until timeout 6 bash -c 'true'; do n=$((n+1)); sleep 5; done", "bash"),
    ],
)
def test_the_program_of_a_stage_is_read_once_past_the_shells_keywords(
    command: str, program: str
) -> None:
    """`Act.program` (the act's) and `Act.acts` (each acting pipeline's) read a stage's
    program the same way: past `if`, `!`, `until`, `(`, `{` and the words that run it (the
    act's program had been `if`, `!`, `(cd`, `until`, as the shell's grammar is no act)."""
    act = read(f'{command}; echo "done here"')  # a sayer: `acts` is read
    assert act.program == program
    assert act.acts[0][0] == program or program == "for"  # a loop's header is when, not what


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ('echo "---"; grep -rn x src 2>/dev/null', False),  # 2>/dev/null is grep's, not echo's
        ('ls ~/ | head; echo "=== scripts ==="; ls ~/*.sh 2>/dev/null', False),
        ("echo ok >/dev/null && ls", False),
        ('echo "oops" >&2; exit 1', False),
        ("echo ready > status.txt", True),
        ("printf 'a\\n' >> log.txt", True),
        ("cat > notes.md <<'EOF'\nhello\nEOF", True),
    ],
)
def test_a_sayers_redirect_writes_only_when_it_is_its_own_into_a_file(
    command: str, writes: bool
) -> None:
    assert read(command).writes is writes


@pytest.mark.parametrize(
    ("command", "plain"),
    [
        ("# build first\nmake build", "make build"),  # the act's program had been `#`
        ("ls build # what is there", "ls build"),
        ("make build && # it's done: install\nmake install", "make build && make install"),
    ],
)
def test_a_comment_is_no_part_of_the_act(command: str, plain: str) -> None:
    act, bare = read(command), read(plain)
    assert (act.program, act.key) == (bare.program, bare.key)
    assert "#" not in " ".join(segments(command))


def test_a_comment_starts_only_where_a_word_could() -> None:
    assert words("echo $# ${x#y} a#b '#c' \"#d\" # a note") == [
        "echo",
        "$#",
        "${x#y}",
        "a#b",
        "#c",
        "#d",
    ]
    # A comment's apostrophe opened a quote that hid the rest of an `&&` list, and its promise.
    command = "git add -A &&\n# stage what's new, then commit\ngit commit -m x && echo 'Committed'"
    assert list(read(command).says) == [("then", "Committed")]
    assert segments("ls # a; b\necho ok") == ["ls", "echo ok"]
    assert unheredoc("pytest # run the tests\nls") == "pytest \nls"


def test_a_subshells_parentheses_are_grammar_not_words() -> None:
    act = read("(cd app && npm test)")
    assert act.runner == "npm test" and act.tests and act.key == read("cd app && npm test").key
    assert read("(source .venv/bin/activate && pytest)").runner == "pytest"
    assert list(read('ls build || (echo "none built")').says) == [("else", "none built")]
    assert segments("(cd app && make) 2>&1 | tail") == ["cd app", "make 2>&1 | tail"]
    assert first_step("{ sudo make install; }") == ["make", "install"]
    # An escaped or quoted parenthesis is a word (`find`'s grouping), a word's own its own.
    assert words('find . \\( -name a -o -name "(b)" \\)') == [
        "find",
        ".",
        "(",
        "-name",
        "a",
        "-o",
        "-name",
        "(b)",
        ")",
    ]
    assert words("diff <(sort a) <(sort b)") == ["diff", "<(sort a)", "<(sort b)"]
    assert read("diff <(sort a) <(sort b)").key != read("diff <(sort c) <(sort d)").key


def test_a_group_piped_to_a_program_feeds_it_and_says_nothing() -> None:
    # What `{ echo …; sleep …; } | nc` echoes is nc's input: nc acts, and nothing is said.
    act = read('{ echo "status"; sleep 2; } | nc 10.0.0.1 23 | head -50')
    assert act.program == "nc" and act.says == ()
    act = read("(echo '{\"id\":1}'; echo '{\"id\":2}') | node server.js && echo served")
    assert act.program == "node" and list(act.says) == [("then", "served")]
    # Its look-alike: a group that acts, piped to a cutter, is the act.
    assert read("(cd app && npm test) 2>&1 | tail -5").program == "npm"


def test_a_quoted_or_escaped_operator_is_a_word() -> None:
    # `"|"`, `\;` and `"&&"` were words equal to the operators, read as a pipe, a list's end
    # and an `&&`: `find … \; -print` ran a program `-print`, `echo "|"` said nothing.
    assert steps('echo "|" && ls') == [("", ["echo", "|"]), ("&&", ["ls"])]
    assert list(read('echo "|"').says) == [("always", "|")]
    act = read('find . -name "*.pyc" -exec rm {} \\; -print')
    assert act.programs == {"find"} and not act.hides_exit
    assert act.key == "find . -name *.pyc -exec rm {} ; -print"
    act = read('grep -c ";" src/a.c')
    assert act.programs == {"grep"} and not act.hides_exit
    assert read('echo "&&" make').programs == {"echo"}
    assert not read('echo "&"').background and read("make &").background
    # A line that ends with a quoted `|` does not go on: the next line is a command of its own.
    assert steps('echo "|"\nrm x') == [("", ["echo", "|"]), ("\n", ["rm", "x"])]
    assert read('echo "|"\nrm x').program == read("echo x\nrm x").program == "echo"
    assert segments("echo \\|\nrm x") == ["echo \\|", "rm x"]
    assert steps('echo "\n"\nrm x') == [("", ["echo", "\n"]), ("\n", ["rm", "x"])]  # quoted


def test_a_substitution_ends_at_its_own_parenthesis() -> None:
    # `$(…)` was cut at the first `)`, inside quotes: what followed was read as one word.
    command = "owner=$(gh repo view --json owner -q '\"\\(.owner.login)\"') && gh pr view 7"
    assert words(command)[1:] == ["\0&&", "gh", "pr", "view", "7"]
    assert read(command).key == "gh pr view 7"
    assert words("echo $(a $(b) c) d") == ["echo", "$(a $(b) c)", "d"]
    assert words("n=$((n+1)); ls") == ["n=$((n+1))", "\0;", "ls"]
    assert words("echo `a \\` b` c") == ["echo", "`a \\` b`", "c"]
    # Inside double quotes: a substitution's own quotes, and a quote escaped.
    assert words('echo "$(cat "$f" | wc -l) lines" x') == ["echo", '$(cat "$f" | wc -l) lines', "x"]
    assert words('echo "a \\"b\\" c" d') == ["echo", 'a "b" c', "d"]
    assert list(read('ls && echo "=== uri=\\"index\\" ==="; ls x').says) == [
        ("then", '=== uri="index" ===')
    ]


def test_a_line_that_ends_with_a_backslash_goes_on() -> None:
    # `\⏎` had been a word `⏎`, read as a new line: each argument after it was a step.
    assert words("bash run.sh \\\n  'cat /etc/x' \\\n  2>&1") == [
        "bash",
        "run.sh",
        "cat /etc/x",
        "2>&1",
    ]
    assert read("./deploy.sh \\\n  --prod").key == "./deploy.sh --prod"


def test_a_hostile_nest_of_quotes_and_substitutions_is_read_to_a_bound() -> None:
    # Each `"$(` reads the next inside the last: 1400 of them passed Python's recursion limit.
    for command in ('"$(' * 1400, '$("' * 1400):
        assert len(read(command).key) == 200
