from __future__ import annotations

import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metacog.event import words
from metacog.perception.action import OUTPUT_KEEP, checksum, output_checksum
from metacog.perception.signature import CAP, clean, kind, signature


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param(
            "Error: timeout after 1.2s at 2026-01-01T10:00:00Z",
            "Error: timeout after 3.9s at 2026-02-03T11:12:13Z",
            id="time",
        ),
        pytest.param(
            "segfault at 0x7ffd1234 pid 4242", "segfault at 0x7ffe9999 pid 17", id="addr-pid"
        ),
        pytest.param(
            "cannot open /tmp/pytest-of-x/abc/f.txt",
            "cannot open /tmp/pytest-of-x/def/f.txt",
            id="tmp",
        ),
        pytest.param(
            "req 123e4567-e89b-12d3-a456-426614174000 failed",
            "req 923e4567-e89b-12d3-a456-426614174999 failed",
            id="uuid",
        ),
        pytest.param(
            "(node:91256) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.",
            "(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated.",
            id="node-pid",
        ),
        pytest.param(
            "error: in /nix/store/1gjnmb3al8j9qsflsjrsr4687mb7xiz3-source/a.nix",
            "error: in /nix/store/f0kn3ipynlsadpq1a2i1khhwg58mh28m-source/a.nix",
            id="content-hash",
        ),
    ],
)
def test_what_varies_between_identical_failures_is_dropped(a: str, b: str) -> None:
    assert signature(a) == signature(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param("KeyError: 'a'", "ValueError: 'a'", id="type"),
        pytest.param("FROM node:18-alpine", "FROM node:20-alpine", id="node-version"),
        pytest.param("app.py:3:1: E501 line too long", "app.py:4:1: E501 line too long", id="line"),
        pytest.param("error in a.go:3", "error in b.go:3", id="file"),
        pytest.param("Exit code 1\nboom failed", "Exit code 2\nboom failed", id="exit-code"),
        # Long names with digits are names, not content hashes (they mix cases, or hold a
        # digit or three): each its own error.
        pytest.param(
            "S3BucketNotFoundException: x", "Ec2InstanceNotFoundException: x", id="name-digit"
        ),
        pytest.param(
            "OAuth2AuthenticationProvider failed", "Http2ConnectionManager failed", id="camel"
        ),
        pytest.param(
            "x509certificateverifyerror", "x509certificateparseerrors", id="lowercase-few-digits"
        ),
        pytest.param(
            "TestHandleHTTP2Requests FAILED", "TestHandleHTTP3Requests FAILED", id="test-name"
        ),
    ],
)
def test_what_identifies_an_error_is_kept(a: str, b: str) -> None:
    assert signature(a) != signature(b)


def test_traceback_keeps_exception_and_innermost_frame() -> None:
    err = 'Exit code 1\nTraceback (most recent call last):\n  File "/a/x.py", line 9, in g\n  File "/a/y.py", line 4, in f\nKeyError: \'k\''
    assert signature(err) == "KeyError: 'k' | y.py:4 | exit 1"


def test_signature_is_short_and_one_line() -> None:
    sig = signature("error " + "x" * 5000 + "\nsecond error line\n" * 100)
    assert len(sig) <= CAP and "\n" not in sig


# --- Imports: `re` and nothing else ------------------------------------------------------


def _modules_after(code: str) -> set[str]:
    root = str(Path(__file__).resolve().parents[1])
    code = (
        f"import sys; sys.path.insert(0, {root!r})\n{code}\nprint(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_signature_and_kind_import_nothing_but_re() -> None:
    # The resident imports `re` once; a direct-path call pays for `re` and for nothing more
    # (metacog.perception.tools is a leaf of names: Claude Code's refusal tag).
    used = _modules_after(
        "from metacog.perception.signature import kind, signature\n"
        'tb = \'Exit code 1\\nTraceback (most recent call last):\\n  File "/tmp/x/a.py", line 9, in f\\n'
        "KeyError: 0x7ffd1234 at 2026-01-01T10:00:00Z after 1.5s'\n"
        "sig = signature(tb)\n"
        'assert sig == "KeyError: <addr> at <time> after <dur> | a.py:9 | exit 1", sig\n'
        "assert kind(sig) == 'KeyError: <addr> at <time> after <dur>', kind(sig)"
    )
    assert "re" in used
    assert used - _modules_after("import re") <= {
        "__future__",
        "metacog",
        "metacog.perception",
        "metacog.perception.tools",
        "metacog.perception.signature",
    }


# --- Properties ----------------------------------------------------------------------------

# Text that looks like tool output: volatile-looking pieces, paths, separators, any character.
_PIECES = st.sampled_from(
    [
        "Exit code 1\n",
        "Traceback (most recent call last):\n",
        '  File "/a/x.py", line 9, in g\n',
        "KeyError: 'k'",
        "FAILED t.py::test_a - E",
        "--- FAIL: TestX (0.00s)",
        "===== 1 failed =====",
        "not ok 1",
        "<tool_use_error>",
        "</tool_use_error>",
        "2026-01-01T10:00:00.5+02:00",
        "10:00:05,123",
        "123e4567-e89b-12d3-a456-426614174000",
        "0x7f",
        "/private/var/folders/ab/T/x",
        "/tmp/",
        "pid=42",
        "thread #3",
        "1.3s",
        "12 ms",
        "4µs",
        "deadbeefcafe0123",
        "src/a.go:3:5:",
        "line 12",
        ":",
        "/",
        "\\",
        " ",
        "\t",
        "\n",
        "\r\n",
        "\u2028",
        "'",
        '"',
        "^^^",
        "~~~",
        "error",
        "-",
        "_",
        ".",
    ]
)
_TEXT = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_any_text_gives_one_short_line(text: str) -> None:
    sig = signature(text)
    assert sig and len(sig) <= CAP and sig.splitlines() == [sig]
    sort = kind(sig)
    assert len(sort) <= 80 and len(sort.splitlines()) <= 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_arbitrary_unicode_never_raises(text: str) -> None:
    sig = signature(text)
    assert len(sig) <= CAP and sig.splitlines() == [sig]
    assert len(kind(text)) <= 80


def test_huge_inputs_stay_bounded() -> None:
    for text in (
        "error " + "x" * 50000,
        "1" * 50000,
        "a" * 50000 + "g",
        "open /tmp/" + "ab" * 25000 + ": failed",
        "\n".join(f"line {i} failed at 10:00:{i % 60:02d}" for i in range(5000)),
        " :1" * 20000,
    ):
        sig = signature(text)
        assert len(sig) <= CAP and sig.splitlines() == [sig]
        assert len(kind(text)) <= 80


_DIGITS = st.integers(0, 9).map(str)


def _num(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.integers(lo, hi).map(str)


def _hexs(n: int) -> st.SearchStrategy[str]:
    return st.text("0123456789abcdef", min_size=n, max_size=n)


_VOLATILE = {
    "iso": st.builds(
        "{}-{:02d}-{:02d}{}{:02d}:{:02d}:{:02d}{}{}".format,
        _num(1990, 2099),
        st.integers(1, 12),
        st.integers(1, 28),
        st.sampled_from("T "),
        st.integers(0, 23),
        st.integers(0, 59),
        st.integers(0, 59),
        st.sampled_from(["", ".123", ",5", ".123456"]),
        st.sampled_from(["", "Z", "+02:00", "-0500"]),
    ),
    "clock": st.builds(
        "{:02d}:{:02d}:{:02d}{}".format,
        st.integers(0, 23),
        st.integers(0, 59),
        st.integers(0, 59),
        st.sampled_from(["", ".5", ",250"]),
    ),
    "uuid": st.builds("{}-{}-{}-{}-{}".format, _hexs(8), _hexs(4), _hexs(4), _hexs(4), _hexs(12)),
    "addr": st.builds("0x{}".format, st.text("0123456789abcdefABCDEF", min_size=1, max_size=16)),
    "tmp": st.builds(
        "{}{}/{}".format,
        st.sampled_from(["/tmp/", "/private/tmp/", "/var/folders/", "/var/tmp/", "/TEMP/"]),
        st.text("abcXYZ019_-.", min_size=1, max_size=12),
        st.text("abc019_.", max_size=8),
    ),
    "dur": st.builds(
        "{}{}{}".format,
        _num(0, 99999),
        st.sampled_from(["", ".5", ".25"]),
        st.sampled_from(["s", "ms", " ms", "µs", " sec", " seconds", "us", "ns", "m"]),
    ),
    "hex": st.text("0123456789abcdef", min_size=12, max_size=40),
}
_TEMPLATES = [
    "Error: request {uuid} failed after {dur} at {iso}",
    "cannot open {tmp}/data.json: permission denied (pid {n})",
    "Segmentation fault at {addr} in thread {n} at {clock}",
    "fatal: object {hex} is corrupt, took {dur}",
    "{iso} ERROR worker (thread={n}): timeout after {dur} reading '{tmp}'",
]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_TEMPLATES), st.data())
def test_volatile_parts_never_change_the_signature(template: str, data: st.DataObject) -> None:
    def fill() -> str:
        values = {k: data.draw(v) for k, v in _VOLATILE.items()}
        return template.format(n=data.draw(_num(1, 10**7)), **values)

    assert signature(fill()) == signature(fill())
    assert signature(f"Exit code 1\n{fill()}") == signature(f"Exit code 1\n{fill()}")


# --- Realistic errors: equal when only volatile parts differ, different otherwise --------

_PY_TB = """Traceback (most recent call last):
  File "/tmp/pytest-of-dev/pytest-{run}/test_load0/runner.py", line 31, in <module>
    main()
  File "/home/dev/app/loader.py", line {line}, in load
    return json.loads(raw)[key]
           ~~~~~~~~~~~~~~~^^^^^
{exc}"""
_PYTEST = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/dev/app
collected 12 items

tests/test_api.py ..F.........                                           [100%]

=================================== FAILURES ===================================
_________________________________ {test} __________________________________
    def {test}():
>       assert login("bob") == 200
E       assert 500 == 200
tests/test_api.py:14: AssertionError
=========================== short test summary info ============================
FAILED tests/test_api.py::{test} - assert 500 == 200
========================= 1 failed, 11 passed in {secs}s =========================="""
_GO_TEST = """=== RUN   {test}
    fetch_test.go:41: request failed after {dur}
--- FAIL: {test} ({secs}s)
FAIL
FAIL\tgithub.com/dev/app/fetch\t{secs2}s
FAIL"""
_GO_BUILD = (
    "# github.com/dev/app\n./main.go:{line}:5: undefined: {name}\nnote: module cache at {tmp}"
)
_GO_LINT = (
    "internal/api/handler.go:{line}:36: response body must be closed (bodyclose)\n"
    'level=info msg="[runner] linters took {dur} with stages: goanalysis_metalinter: {dur2}"'
)
_NPM = """npm ERR! code ENOENT
npm ERR! syscall open
npm ERR! path {path}/package.json
npm ERR! errno -2
npm ERR! enoent ENOENT: no such file or directory, open '{path}/package.json'
npm ERR! A complete log of this run can be found in:
npm ERR!     /home/dev/.npm/_logs/{stamp}-debug-0.log"""
_RUST = """   Compiling app v0.1.0 ({path})
error[{code}]: cannot find value `{name}` in this scope
 --> src/main.rs:3:5
  |
3 |     {name}
  |     ^^^^^ not found in this scope

error: could not compile `app` (bin "app") due to 1 previous error"""
_CARGO_TEST = """running 2 tests
test tests::{test} ... FAILED

failures:

---- tests::{test} stdout ----
thread 'tests::{test}' panicked at src/lib.rs:{line}:9:
assertion `left == right` failed

test result: FAILED. 1 passed; 1 failed; finished in {secs}s
error: test failed, to rerun pass `--lib`"""
_JEST = "FAIL src/{file}.test.js\n  \u25cf adds 1 + 2\n    Expected: 3\n    Received: 4\nTests: 1 failed, 1 total\nTime: {secs} s"
_SEGV = (
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x{addr} (most recent call first):\n"
    '  File "/home/dev/app/native.py", line {line} in crash\nSegmentation fault (core dumped) pid {pid}'
)
_DOCKER = (
    'docker: Error response from daemon: Conflict. The container name "/{name}" is already in use by '
    'container "{cid}". You have to remove (or rename) that container.'
)


def _same(a: str, b: str, id: str) -> object:
    return pytest.param(a, b, True, id=f"same-{id}")


def _differ(a: str, b: str, id: str) -> object:
    return pytest.param(a, b, False, id=f"differ-{id}")


REALISTIC = [
    # Python
    _same(
        _PY_TB.format(run=12, line=8, exc="KeyError: 'user'"),
        _PY_TB.format(run=13, line=8, exc="KeyError: 'user'"),
        "py-traceback-tmp-frame",
    ),
    _differ(
        _PY_TB.format(run=12, line=8, exc="KeyError: 'user'"),
        _PY_TB.format(run=12, line=8, exc="KeyError: 'id'"),
        "py-traceback-message",
    ),
    _differ(
        _PY_TB.format(run=12, line=8, exc="KeyError: 'user'"),
        _PY_TB.format(run=12, line=9, exc="KeyError: 'user'"),
        "py-traceback-line",
    ),
    _differ(
        _PY_TB.format(run=12, line=8, exc="KeyError: 'user'"),
        _PY_TB.format(run=12, line=8, exc="TypeError: 'user'"),
        "py-traceback-type",
    ),
    _same(
        "2026-03-01 10:00:00,123 ERROR db: connection refused (pid 4242)",
        "2026-03-02 17:45:09,907 ERROR db: connection refused (pid 17)",
        "py-logging-line",
    ),
    _same(
        'Exit code 1\nTraceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "TimeoutError: timed out after 30.0s waiting for 123e4567-e89b-12d3-a456-426614174000",
        'Exit code 1\nTraceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
        "TimeoutError: timed out after 29.87s waiting for 0f0f0f0f-aaaa-bbbb-cccc-0123456789ab",
        "py-timeout",
    ),
    # pytest
    _same(
        _PYTEST.format(test="test_login", secs="0.42"),
        _PYTEST.format(test="test_login", secs="1.07"),
        "pytest-duration",
    ),
    _differ(
        _PYTEST.format(test="test_login", secs="0.42"),
        _PYTEST.format(test="test_logout", secs="0.42"),
        "pytest-test-name",
    ),
    _same(
        "FAILED tests/test_io.py::test_write - FileNotFoundError: [Errno 2] No such file or directory: "
        "'/tmp/pytest-of-dev/pytest-41/test_write0/out.txt'",
        "FAILED tests/test_io.py::test_write - FileNotFoundError: [Errno 2] No such file or directory: "
        "'/tmp/pytest-of-dev/pytest-42/test_write0/out.txt'",
        "pytest-tmp-path",
    ),
    # Go
    _same(
        _GO_TEST.format(test="TestFetch", dur="2.5s", secs="0.53", secs2="0.61"),
        _GO_TEST.format(test="TestFetch", dur="2.61s", secs="0.71", secs2="0.80"),
        "go-test-durations",
    ),
    _differ(
        _GO_TEST.format(test="TestFetch", dur="2.5s", secs="0.53", secs2="0.61"),
        _GO_TEST.format(test="TestParse", dur="2.5s", secs="0.53", secs2="0.61"),
        "go-test-name",
    ),
    _same(
        _GO_BUILD.format(line=12, name="foo", tmp="/tmp/go-build1234/b001"),
        _GO_BUILD.format(line=12, name="foo", tmp="/tmp/go-build9876/b001"),
        "go-build-tmp",
    ),
    _differ(
        _GO_BUILD.format(line=12, name="foo", tmp="/tmp/go-build1234/b001"),
        _GO_BUILD.format(line=12, name="bar", tmp="/tmp/go-build1234/b001"),
        "go-build-name",
    ),
    _differ(
        _GO_BUILD.format(line=12, name="foo", tmp="/tmp/go-build1234/b001"),
        _GO_BUILD.format(line=13, name="foo", tmp="/tmp/go-build1234/b001"),
        "go-build-line",
    ),
    _same(
        _GO_LINT.format(line=283, dur="1.2s", dur2="830ms"),
        _GO_LINT.format(line=283, dur="3.4s", dur2="2.1s"),
        "go-lint-durations",
    ),
    _differ(
        _GO_LINT.format(line=283, dur="1.2s", dur2="830ms"),
        _GO_LINT.format(line=104, dur="1.2s", dur2="830ms"),
        "go-lint-line",
    ),
    _same(
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a5b3c]\n\ngoroutine 1 [running]:",
        "panic: runtime error: invalid memory address or nil pointer dereference\n"
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x7f00a1]\n\ngoroutine 7 [running]:",
        "go-panic",
    ),
    # npm
    _same(
        _NPM.format(path="/tmp/build-8f3a", stamp="2026-03-01T10_00_00_123Z"),
        _NPM.format(path="/tmp/build-c0de", stamp="2026-03-02T11_12_13_456Z"),
        "npm-tmp",
    ),
    _differ(
        _NPM.format(path="/home/dev/app", stamp="2026-03-01T10_00_00_123Z"),
        _NPM.format(path="/home/dev/lib", stamp="2026-03-01T10_00_00_123Z"),
        "npm-path",
    ),
    # Rust
    _same(
        _RUST.format(path="/tmp/cargo-1", code="E0425", name="total"),
        _RUST.format(path="/tmp/cargo-2", code="E0425", name="total"),
        "rust-compile",
    ),
    _differ(
        _RUST.format(path="/tmp/cargo-1", code="E0425", name="total"),
        _RUST.format(path="/tmp/cargo-1", code="E0425", name="count"),
        "rust-compile-name",
    ),
    _same(
        _CARGO_TEST.format(test="it_adds", line=10, secs="0.00"),
        _CARGO_TEST.format(test="it_adds", line=10, secs="0.31"),
        "cargo-test-duration",
    ),
    _differ(
        _CARGO_TEST.format(test="it_adds", line=10, secs="0.00"),
        _CARGO_TEST.format(test="it_subtracts", line=10, secs="0.00"),
        "cargo-test-name",
    ),
    # JavaScript
    _same(
        _JEST.format(file="sum", secs="1.234"),
        _JEST.format(file="sum", secs="0.98"),
        "jest-duration",
    ),
    _differ(
        _JEST.format(file="sum", secs="1.234"), _JEST.format(file="mul", secs="1.234"), "jest-file"
    ),
    # Shell
    _same(
        "ls: cannot access '/tmp/tmp.AbC123/out': No such file or directory",
        "ls: cannot access '/tmp/tmp.XyZ789/out': No such file or directory",
        "shell-no-such-file-tmp",
    ),
    _differ(
        "ls: cannot access '/home/dev/a/out': No such file or directory",
        "ls: cannot access '/home/dev/b/out': No such file or directory",
        "shell-no-such-file",
    ),
    _same(
        "Exit code 127\nbash: line 1: foo: command not found",
        "Exit code 127\nbash: line 1: foo: command not found",
        "shell-not-found",
    ),
    _differ(
        "Exit code 127\nbash: line 1: foo: command not found",
        "Exit code 127\nbash: line 1: bar: command not found",
        "shell-not-found-name",
    ),
    _differ(
        "Exit code 1\nmake: *** [Makefile:12: build] Error 1",
        "Exit code 2\nmake: *** [Makefile:12: build] Error 1",
        "make-exit-code",
    ),
    # Timeouts
    _same(
        "Error: Command timed out after 2m 0.0s",
        "Error: Command timed out after 2m 0.3s",
        "timeout-command",
    ),
    _same(
        "fatal: unable to access 'https://github.com/dev/app.git/': Failed to connect to github.com port 443 "
        "after 21034 ms: Couldn't connect to server",
        "fatal: unable to access 'https://github.com/dev/app.git/': Failed to connect to github.com port 443 "
        "after 20987 ms: Couldn't connect to server",
        "timeout-git",
    ),
    _differ(
        "fatal: unable to access 'https://github.com/dev/app.git/': Failed to connect to github.com port 443 "
        "after 21034 ms: Couldn't connect to server",
        "fatal: unable to access 'https://github.com/dev/app.git/': Failed to connect to github.com port 22 "
        "after 21034 ms: Couldn't connect to server",
        "timeout-git-port",
    ),
    # Crashes
    _same(
        _SEGV.format(addr="00007f3b1c2d4740", line=3, pid=4242),
        _SEGV.format(addr="00007f0011223344", line=3, pid=99),
        "segfault-address",
    ),
    _differ(
        _SEGV.format(addr="00007f3b1c2d4740", line=3, pid=4242),
        _SEGV.format(addr="00007f3b1c2d4740", line=7, pid=4242),
        "segfault-line",
    ),
    _same(
        "Segmentation fault at address 0x7f3a2b1c4d5e in thread 140213 (pid 4242)",
        "Segmentation fault at address 0x55d0c0ffee00 in thread 7 (pid 17)",
        "segfault-thread",
    ),
    _same(
        _DOCKER.format(
            name="web", cid="3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e"
        ),
        _DOCKER.format(
            name="web", cid="0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        ),
        "docker-container-id",
    ),
    _differ(
        _DOCKER.format(
            name="web", cid="3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e"
        ),
        _DOCKER.format(
            name="db", cid="3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e"
        ),
        "docker-container-name",
    ),
    # Claude Code's own tool errors
    _same(
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
        "File has not been read yet. Read it first before writing to it.",
        "tool-use-error-tags",
    ),
]


@pytest.mark.parametrize(("a", "b", "same"), REALISTIC)
def test_realistic_errors(a: str, b: str, same: bool) -> None:
    sa, sb = signature(a), signature(b)
    assert (sa == sb) is same, (sa, sb)
    assert len(sa) <= CAP and sa.splitlines() == [sa]


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        pytest.param(
            _PY_TB.format(run=1, line=8, exc="KeyError: 'user'"),
            "KeyError: 'user' | loader.py:8",
            id="traceback",
        ),
        pytest.param(
            _PYTEST.format(test="test_login", secs="0.42"),
            "FAILED tests/test_api.py::test_login - assert 500 == 200",
            id="pytest-summary-over-banners",
        ),
        pytest.param(
            _GO_TEST.format(test="TestFetch", dur="1s", secs="0.5", secs2="0.6"),
            "--- FAIL: TestFetch (<dur>) | FAIL",
            id="go-test-names-the-test",
        ),
        pytest.param(
            "2026-03-01 10:00:00,123 ERROR db: refused",
            "<time> ERROR db: refused",
            id="logging-comma-millis",
        ),
        pytest.param(
            "cannot open /private/var/folders/x1/T/abc/f.py:12: denied",
            "cannot open <tmp>:12: denied",
            id="tmp-path-keeps-line",
        ),
        pytest.param(
            "worker pid=4242 process 17 Thread#3 died",
            "worker pid <n> process <n> Thread <n> died",
            id="counted",
        ),
        pytest.param(
            "took 1.3s, 12 ms, 4µs, 5 seconds, 250ns in 7m",
            "took <dur>, <dur>, <dur>, <dur>, <dur> in <dur>",
            id="durations",
        ),
        pytest.param(
            "commit 0123456789abcdef0123 not found (abc123def45 short)",
            "commit <hex> not found (abc123def45 short)",
            id="hex-ids-from-12",
        ),
        pytest.param(
            "at 12:34:56.789 and 2026-01-01T10:00:00.5+02:00 failed",
            "at <time> and <time> failed",
            id="times",
        ),
        pytest.param("Exit code 3\n\n  \n", "exit 3", id="exit-code-only"),
        pytest.param("", "error", id="empty"),
    ],
)
def test_known_signatures(err: str, expected: str) -> None:
    assert signature(err) == expected


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        pytest.param(
            _GO_LINT.format(line=283, dur="1s", dur2="1s"),
            _GO_LINT.format(line=104, dur="2s", dur2="3s"),
            True,
            id="lint-same-rule-new-line",
        ),
        pytest.param(
            "app.py:3:1: E501 line too long",
            "lib/app2.py:40:1: E501 line too long",
            True,
            id="ruff-new-file",
        ),
        pytest.param("error on line 12 of config", "error on line 40 of config", True, id="line-n"),
        pytest.param(
            "src/main.rs:3:5: mismatched types",
            "src/main.rs:3:5: unused variable",
            False,
            id="other-message",
        ),
    ],
)
def test_kind_drops_the_place(a: str, b: str, same: bool) -> None:
    assert (kind(signature(a)) == kind(signature(b))) is same


# --- Hostile long lines: every pattern stays linear ----------------------------------------
# No clock here: a pattern that backtracks catastrophically makes these tests hang (a
# quadratic one: seconds per case), which is how they fail.

_LINE = 20000  # what signature() reads of an error


def _fill(head: str, unit: str, tail: str = "") -> str:
    """head, unit repeated, tail: exactly _LINE characters, so the cap cuts nothing off."""
    return head + (unit * _LINE)[: _LINE - len(head) - len(tail)] + tail


_HOSTILE = [
    _fill("", "=", "x"),
    _fill("=" * 9000, "x", "="),
    _fill("_" * 10000, "-"),
    _fill("", "1", "x"),
    _fill("0x", "f", "g"),
    _fill("", "a", "g"),
    _fill("", "aaaaaaaa-"),
    _fill("/tmp/", "1:"),
    _fill("/tmp/", "10:00:00,"),
    _fill("/tmp/", "2026-01-01 10:00"),
    _fill("pid", "=", "1x"),
    _fill("", "thread "),
    _fill("", "1."),
    _fill("10:00:00.", "1", "x"),
    _fill('  File "', "x"),
    _fill('  File "', '"'),
    _fill("Exit code ", "1", "x"),
    _fill("", "^", "~"),
    _fill("", "a.", ":1x"),
    _fill("", "a-"),
    _fill("", "a/"),
    _fill("", "/a.py:1x"),
    _fill("", "x-1"),
    _fill("a", ":1;"),
    _fill("", "line 1"),
    _fill("", "\t\u2028"),
    _fill("", "g", "1_"),  # a content hash's run, with a word character after it
    _fill("", "g1", "_"),
    _fill("", "g1", "G"),
    _fill("", "G1", "g"),
    _fill("", "g_1 "),
]


@pytest.mark.parametrize("line", _HOSTILE, ids=range(len(_HOSTILE)))
def test_hostile_lines_give_one_short_line(line: str) -> None:
    for text in (
        line,
        f"Exit code 1\n{line}",
        f"{line}\n{line}\nerror: {line}",
        f'  File "{line}", line 1\n{line}',
    ):
        sig = signature(text)
        assert sig and len(sig) <= CAP and sig.splitlines() == [sig]
        assert len(kind(sig)) <= 80 and len(kind(text)) <= 80


# One unit, from the pieces above or any text, repeated to a 20,000-character line.
_REPEATED = st.builds(
    lambda unit, tail: _fill("", unit, tail),
    st.one_of(
        _PIECES,
        st.lists(_PIECES, min_size=1, max_size=4).map("".join),
        st.text(min_size=1, max_size=8),
    ),
    st.text(max_size=4),
)


@settings(max_examples=60, deadline=None)
@given(_REPEATED)
def test_random_long_lines_never_raise(line: str) -> None:
    sig = signature(line)
    assert sig and len(sig) <= CAP and sig.splitlines() == [sig]
    assert len(kind(sig)) <= 80 and len(kind(line)) <= 80


# --- clean() and output_checksum() against the implementation before the prefilter ----------
# The oracle: signature.py's _VOLATILE and clean, and action.py's output_checksum, as they
# were before `_MAY_VARY` skipped texts no volatile token can be in (commit 2b275c9). The new
# ones must give the same string and the same checksum for every text.

_O_ISO_HEAD = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d"
_O_ISO = _O_ISO_HEAD + r"(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
_O_CLOCK = rf"\d\d:\d\d:\d\d(?:[.,](?!{_O_ISO_HEAD})\d+(?!\w))?(?!\w)"
_O_TIME = f"(?:{_O_ISO}|{_O_CLOCK})"
_O_HEX = "[0-9a-fA-F]"
_OLD_VOLATILE = re.compile(
    rf"""(?P<tmp>(?ai:(?:/private)?/(?:tmp|var/folders|var/tmp|temp)/)(?:(?<!\w){_O_TIME}|[^ :'"])*)"""
    rf"|(?<!\w)(?:(?P<time>{_O_TIME})"
    rf"|(?P<uuid>{_O_HEX}{{8}}-{_O_HEX}{{4}}-{_O_HEX}{{4}}-{_O_HEX}{{4}}-{_O_HEX}{{12}}(?!\w))"
    rf"|(?P<addr>0[xX]{_O_HEX}+(?!\w))"
    r"|(?P<dur>\d+(?:\.\d+)? ?(?:ms|s|sec|seconds|µs|μs|us|ns|m)(?!\w))"
    rf"|(?P<hex>{_O_HEX}{{12,}}(?!\w))"
    r"|(?P<hash>(?=(?:[a-z]*[0-9]){4})(?=[0-9]*[a-z])[0-9a-z]{20,}(?!\w)"
    r"|(?=(?:[A-Z]*[0-9]){4})(?=[0-9]*[A-Z])[0-9A-Z]{20,}(?!\w))"
    rf"|(?P<n>(?ai:pid|process|thread))(?:[ =:#]+(?!{_O_ISO_HEAD}|\d\d:\d\d:\d\d(?!\w)))?\d+(?!\w))"
    r"|(?<=\(node:)(?P<pid>\d+)(?=\))"  # added with Node's pid (issue 24), prefilter or not
)


def _old_clean(line: str) -> str:
    tag = lambda m: f"{m['n']} <n>" if m.lastgroup == "n" else f"<{m.lastgroup}>"  # noqa: E731
    return _OLD_VOLATILE.sub(tag, " ".join(line.split()))


def _old_output_checksum(response: object) -> int:
    if not isinstance(response, dict):
        return checksum(response)
    half = OUTPUT_KEEP // 2
    parts = [
        _old_clean(out[:half] + out[-half:] if len(out) > OUTPUT_KEEP else out)
        for out in (words(response, key) for key in ("stdout", "stderr"))
    ]
    return zlib.crc32("\x00".join(parts).encode("utf-8", "replace"))


def _same_as_before(text: str) -> None:
    assert clean(text) == _old_clean(text), text[:200]
    for response in ({"stdout": text}, {"stdout": text, "stderr": text[::-1]}, {"stderr": text}):
        assert output_checksum(response) == _old_output_checksum(response), text[:200]


def _bash_results(folder: Path) -> list[str]:
    """Every Bash result's stdout, stderr and tool_result text in the transcripts."""
    texts: list[str] = []
    bash_ids: set[str] = set()
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and block.get("name") == "Bash":
                    bash_ids.add(block.get("id"))
                elif block.get("type") == "tool_result" and block.get("tool_use_id") in bash_ids:
                    body = block.get("content")
                    if isinstance(body, list):
                        body = "\n".join(
                            str(b.get("text", "")) for b in body if isinstance(b, dict)
                        )
                    texts.append(body if isinstance(body, str) else "")
                    result = entry.get("toolUseResult")
                    if isinstance(result, dict):
                        texts += [
                            v for k in ("stdout", "stderr") if isinstance(v := result.get(k), str)
                        ]
    return texts


_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"


@pytest.mark.slow
def test_every_bash_result_in_the_shared_transcripts_checksums_as_before() -> None:
    if not _SHARED.is_dir():
        pytest.skip(f"the shared transcripts are not here ({_SHARED})")
    texts = _bash_results(_SHARED)
    assert len(texts) > 1000  # the 72 transcripts hold 2,562 Bash results
    assert sum(_OLD_VOLATILE.search(t) is not None for t in texts) > 100  # both paths are taken
    for text in texts:
        _same_as_before(text)


_EDGE = [
    "",
    "\x00",
    "a\x00b 10:00:00\x00pid 3",
    "\u2028",
    "10:00:00\u2028pid\u20283\u2029x",
    "\ud800",
    "\udfff10:00:00\ud800 pid 4 \udc00",
    "12\u00b5s 3\u03bcs 4µs 5μs",
    "3\u03bcs",
    "3 \u00b5s",
    "pid 3",
    "PROCESS: 9",
    "thread #=:8",
    "x /private/tmp/a",
    "x /private/var/folders/a",
    "deadbeef-dead-beef-dead-beefdeadbeef",
    "\u0663\u0664:\u0665\u0666:\u0667\u0668",  # Arabic-Indic digits are `\d`
    "PiD=7 ThReAd #8 PROCESS: 9 \u212aill",
    "(node:1)",
    "(node:12) x (node:3",
    "e:1 node:2 (node:x) (Node:4)",
    # A content hash needs 20 letters or digits in a row and 4 digits: one short of each.
    "1gjn4xiz3abcdefghijk2",
    "1gjn4xiz3abcdefghijk27",
    "1gjn4xiz3abcdefghij 27",
    "1gjn4xiz3abcdefghijk 2 7",
    "12:" + "x" * 3500,
    "1234:" + "x" * 3500,
    "x" * 3500 + " 1 2 3 4",
    "1GJN4XIZ3ABCDEFGHIJK27",
    "١٢٣٤gjnxizabcdefghijklmno",  # Arabic-Indic digits are no hash's
]
_LONG = [
    "=" * _LINE,
    "1" * _LINE,
    "0123456789abcdef" * (_LINE // 16),
    "abcdef" * (_LINE // 6),
    "/tmp/" * (_LINE // 5),
    "/private/" * (_LINE // 9),
    "pid " * (_LINE // 4),
    "pid" + " " * _LINE + "x",
    "thread=" + "=" * _LINE + "1",
    "1:" * (_LINE // 2),
    "1 s" * (_LINE // 3),
    "0x" * (_LINE // 2),
    "aaaaaaaa-" * (_LINE // 9),
    "\x00" * _LINE,
    "\u2028" * _LINE,
    "\ud800" * _LINE,
]


@pytest.mark.parametrize("text", _EDGE + _LONG + _HOSTILE, ids=range(len(_EDGE + _LONG + _HOSTILE)))
def test_hostile_and_edge_texts_checksum_as_before(text: str) -> None:
    _same_as_before(text)


# Tokens that vary, tokens one character short of varying, and the characters around them.
_NEAR_TOKENS = [
    "10:00", "10:00:0", "10:00:00", "2026-01-01 10:0", "2026-01-01T10:00:00.5Z", ":", "1:2",
    "0x", "0X", "0xg", "0xAb", "x", "pid", "PID", "Pid", "pi", "process", "proces", "thread",
    "threa", "=", "#", " ", "  ", "\n", "\t", "\u2028", "\x00", "-", "_", ".", "/", "/tmp",
    "/tmp/", "/TMP/", "/private/", "/private/var/folders/", "/var/", "/var/tmp/", "/temp/",
    "/Temp/", "/tm", "1", "12", "1.5", "7 ", "ms", "s", "sec", "seconds", "m", "us", "ns",
    "\u00b5s", "\u03bcs", "\u00b5", "abcdef0", "abcdef01", "abcdef012345", "deadbeefcafe",
    "deadbeef-dead-beef-dead-beefdeadbeef", "123e4567-e89b-12d3-a456-426614174000",
    "123e4567-e89b", "a", "Z", "\u0663", "é", "'", '"', "(node:", "node:", "e:", ")",
]  # fmt: skip
_NEAR = st.sampled_from(_NEAR_TOKENS)


@settings(max_examples=1500, deadline=None)
@given(
    st.one_of(
        st.lists(st.one_of(_NEAR, *_VOLATILE.values(), st.text(max_size=3)), max_size=24).map(
            "".join
        ),
        st.text(),
    )
)
def test_random_mixes_of_volatile_tokens_checksum_as_before(text: str) -> None:
    _same_as_before(text)


# Every sequence of up to three of these: the tokens above cut where the prefilter's
# alternatives begin and end, so each alternative is met alone, whole and one piece short.
_ATOMS = [
    "1", "0", "x", "X", "pid", "PiD", "process", "Thread", " ", "=", ":", "#", "/", "tmp",
    "Var", "temp", "private", "s", "ms", "m", "u", "n", "\u00b5", "\u03bc", ".", "-", "a",
    "cafe0123", "deadbeef", "\u0663", "\u2028", "\x00", "(node", "e:", "(", ")",
]  # fmt: skip


def test_every_short_sequence_of_token_pieces_checksums_as_before() -> None:
    for a in _ATOMS:
        for b in _ATOMS:
            for c in _ATOMS:
                text = a + b + c
                assert clean(text) == _old_clean(text), text
    for text in (a + b for a in _NEAR_TOKENS for b in _NEAR_TOKENS):
        assert clean(text) == _old_clean(text), text
