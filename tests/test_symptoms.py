"""metacog.perception.symptoms: which lines of a failure name a problem, and the kind of mistake it shows."""

from __future__ import annotations

import zlib

import pytest

from metacog.perception.call import Call
from metacog.perception.symptoms import mistake, names_something, problems

# What names a problem -----------------------------------------------------------------


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


def test_a_frame_of_a_short_traceback_is_where_not_what() -> None:
    # pytest --tb=short: each frame is `path:line: in function`; the problem is the E line.
    text = (
        "tests/test_app.py:14: in test_load\n    app = load()\n"
        "src/pkg/__init__.py:90: in import_module\n    return _bootstrap._gcd_import(name)\n"
        "E   ModuleNotFoundError: No module named 'yaml'\n"
    )
    assert [p[3] for p in problems(text)] == ["E ModuleNotFoundError: No module named 'yaml'"]
    # Its look-alike: a checker's diagnostic at a place says what is wrong there.
    found = [p[3] for p in problems("src/app.py:12: error: Incompatible types in assignment\n")]
    assert found == ["app.py:12: error: Incompatible types in assignment"]  # its folders left out


def test_a_script_fixed_one_syntax_error_at_a_time_keeps_its_places() -> None:
    # A heredoc's or `python -c` script's syntax errors fixed one at a time: the parser stops
    # further down each run (progress, as in a file), so each line is a place of its own.
    # (Dropping `<stdin>`'s line numbers heard the same SyntaxError rewritten at another line,
    # and made this a streak: measured and not built, docs/calibration.md.)
    found = {
        problems(f'  File "<stdin>", line {n}\n    {code}\nSyntaxError: invalid syntax')[0][1]
        for n, code in ((3, "x = ("), (9, "def run(:"), (14, "if ready"))
    }
    assert len(found) == 3


# Mistakes -----------------------------------------------------------------------------


def test_a_login_shells_tty_noise_is_not_a_prompt() -> None:
    noise = "mesg: ttyname failed: Inappropriate ioctl for device"
    assert mistake("Bash", f'Exit code 1\n{noise}\nError: relation "users" does not exist') == ""


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        pytest.param("Permission to use Bash has been denied.", "blocked", id="settings"),
        pytest.param(
            "Permission for this action was denied by the Claude Code auto mode classifier. "
            "Reason: the command runs a wrapper not on the allow list.",
            "blocked",
            id="auto-mode",
        ),
        pytest.param("git@github.com: Permission denied (publickey).", "", id="ssh-lookalike"),
        pytest.param("ERROR: permission denied for table users", "", id="database-lookalike"),
    ],
)
def test_claude_codes_permission_answers_in_both_phrasings(error: str, kind: str) -> None:
    # Claude Code's own refusal, whatever the tool; a program's "permission denied" is not it.
    assert mistake("Bash", error) == kind


# Bounds -------------------------------------------------------------------------------


def test_hostile_lines_are_read_in_linear_time() -> None:
    # A pattern that backtracks would hang here, not fail: every line is a worst case.
    from metacog.perception import hidden, symptoms

    for line in (
        "=" * 10000 + "x",
        "-" * 10000 + "x",
        "_" * 10000 + "x",
        "!" * 10000 + "x",
        "= " + "1 failed " * 1000 + "=" * 3000 + "x",
        "cat: " + "a/" * 5000 + ": nope",
    ):
        symptoms.problems("Exit code 1\n" + line)
        symptoms.mistake("Bash", line)
        hidden.hidden_failure("Bash", {"command": "pytest"}, {"stdout": line, "stderr": line})


# What a call was for (Habit counts the person's no per intent) ------------------------------


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        # An address is where the call goes: the same server, whichever path or query.
        (
            'curl -s "http://localhost:3000/api/items?type=FOOD"',
            "curl http://localhost:3000/api",
            True,
        ),
        ("curl -s http://localhost:3000/health", "curl -s http://localhost:4000/health", False),
        ("wget https://example.org/a.tar.gz", "wget https://example.com/a.tar.gz", False),
        # The rest is as before: the program and its first word that is not a flag.
        ("git push origin main", "git push --force origin main", True),
        ("git push origin main", "git pull origin main", False),
        ("DEBUG=1 npm run build", "npm run test", True),
    ],
)
def test_the_intent_of_a_command(first: str, second: str, same: bool) -> None:
    from metacog.perception.call import Call
    from metacog.perception.symptoms import intent

    assert (intent(Call("Bash", first)) == intent(Call("Bash", second))) is same


REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def rejected(command: str) -> Call:
    """The person's no to a shell command, as perception reads it from the captured payload."""
    from hooktest import failed

    from metacog.event import Event
    from metacog.perception.action import from_event

    return from_event(Event(failed(command, REJECTED)), 0.0)


# A word with spaces inside is kept as its first word and a checksum (metacog.perception.act
# aim_of): the aim is stored across sessions, and a quoted script may hold a secret.
MY_FILE = f"rm my…{zlib.crc32(b'my file.txt') & 0xFFFFFF:06x}"


# Issue 39: what a command was for is read by metacog.perception.act from the raw command.
# Each variant read its display text split on spaces before, and was for something else.
@pytest.mark.parametrize(
    ("variant", "plain", "was_for"),
    [
        pytest.param('cd "my app" && make build; echo done', "make build", "make build", id="cd"),
        pytest.param("cd app && make && echo done", "make", "make", id="cd-then-sayer"),
        pytest.param("sudo -u git git pull origin", "git pull origin", "git pull", id="sudo"),
        pytest.param("timeout 10 pytest | head -20", "pytest", "pytest", id="timeout-head"),
        pytest.param("ls -la 2>/dev/null", "ls -la", "ls", id="devnull"),
        pytest.param("make 2>&1 | tail -20", "make", "make", id="2>&1-tail"),
        pytest.param("python3 - <<'EOF'\nprint(1)\nEOF", "python3 -", "python3", id="heredoc"),
        pytest.param('rm "my file.txt"', "rm my\\ file.txt", MY_FILE, id="quoted"),
        pytest.param("rm 'my file.txt'", "rm my\\ file.txt", MY_FILE, id="quoted'"),
        pytest.param("sed -i '' s/a/b/ f", "sed -i s/a/b/ f", "sed s/a/b/", id="empty-word"),
    ],
)
def test_what_a_command_was_for_is_its_plain_forms(variant: str, plain: str, was_for: str) -> None:
    from metacog.perception.call import stored
    from metacog.perception.symptoms import identity, intent, mistake_key

    call, same = rejected(variant), rejected(plain)
    assert intent(call) == intent(same) == was_for
    assert mistake_key(call) == mistake_key(same) == f"rejected Bash {was_for}"
    # Read from the record as the window and replay's report keep it, the same.
    assert identity(stored(call.record())) == identity(call)


def test_two_quoted_arguments_with_spaces_are_for_two_things() -> None:
    from metacog.perception.symptoms import intent

    assert intent(rejected('rm "a b.txt"')) != intent(rejected('rm "a c.txt"'))


def test_no_script_or_secret_a_quoted_word_holds_is_kept_as_what_it_was_for() -> None:
    from metacog.perception.symptoms import identity

    for command in (
        "bash -c \"curl -H 'Authorization: Bearer sk-live-abc123' https://api.example.com/v1\"",
        "python3 -c \"import os; print(os.environ['API_KEY'])\"",
        "sh -c 'TOKEN=sk-live-abc123 ./deploy.sh'",
    ):
        call = rejected(command)
        kept = f"{identity(call)} {call.intent}"  # what the resolutions store keys on
        assert "sk-live" not in kept and "API_KEY" not in kept and "Bearer" not in kept, kept


def test_what_a_command_was_for_is_kept_only_for_the_persons_no() -> None:
    from hooktest import failed

    from metacog.event import Event
    from metacog.perception.action import from_event
    from metacog.perception.call import stored
    from metacog.perception.symptoms import intent

    record = rejected("sudo -u git git pull").record()
    assert record["intent"] == "git pull"
    # A record stored before the field was kept is read from its act's text, the same.
    del record["intent"]
    assert intent(stored(record)) == "git pull"
    assert intent(Call("Bash", "make 2>&1 | tail -20")) == "make"
    # A failure of the world keeps none: the window's records stay as they were.
    call = from_event(Event(failed("sudo -u git git pull", "Exit code 1\nfatal: x")), 0.0)
    assert call.intent == "" and "intent" not in call.record()


def test_the_old_key_of_the_persons_no_is_known_where_it_changed() -> None:
    from metacog.perception.symptoms import legacy_identity

    assert legacy_identity(rejected("make 2>&1 | tail -20")) == "rejected Bash make 2>&1"
    assert legacy_identity(rejected("cd app && make && echo done")) == "rejected Bash echo done"
    assert legacy_identity(rejected("git push origin main")) == ""  # unchanged: no old key


def test_a_line_that_names_only_what_the_call_sent_is_its_frame() -> None:
    from metacog.perception.call import Call
    from metacog.perception.symptoms import names_beyond, sent_words

    sent = sent_words(Call("Bash", "bun run pages:build"), "/home/dev/shop")
    assert not names_beyond('error: script "pages:build" exited with code 1', sent)
    assert not names_beyond('error: could not compile `shop` (bin "shop")', sent)
    # What the call did not send is named: the module, the file, the tool that is missing.
    assert names_beyond("error: Cannot find module 'multer'", sent)
    assert names_beyond("Type error in src/build.ts:3: 'shop' is not assignable", sent)
    assert names_beyond("lint: line 31: basedpyright: command not found (bin/pyright_x)", sent)
    # Nothing sent: names_something.
    assert names_beyond('error: script "pages:build" exited with code 1', frozenset())


def test_a_line_that_names_only_by_quoting() -> None:
    from metacog.perception.symptoms import names_only_quoted

    assert names_only_quoted("error: could not compile `shop` (lib) due to 1 previous error")
    assert names_only_quoted('error: script "build" exited with code 1')
    assert not names_only_quoted("lint: line 31: basedpyright: command not found (bin/x_y)")
    assert not names_only_quoted("src/app.ts(12,5): error TS2322: Type 'string' is wrong")
    assert not names_only_quoted("npm error")
