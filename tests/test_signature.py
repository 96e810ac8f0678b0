from __future__ import annotations

import pytest

from metacog.signature import CAP, signature


@pytest.mark.parametrize(("a", "b"), [
    pytest.param("Error: timeout after 1.2s at 2026-01-01T10:00:00Z", "Error: timeout after 3.9s at 2026-02-03T11:12:13Z", id="time"),
    pytest.param("segfault at 0x7ffd1234 pid 4242", "segfault at 0x7ffe9999 pid 17", id="addr-pid"),
    pytest.param("cannot open /tmp/pytest-of-x/abc/f.txt", "cannot open /tmp/pytest-of-x/def/f.txt", id="tmp"),
    pytest.param("req 123e4567-e89b-12d3-a456-426614174000 failed", "req 923e4567-e89b-12d3-a456-426614174999 failed", id="uuid"),
])
def test_what_varies_between_identical_failures_is_dropped(a: str, b: str) -> None:
    assert signature(a) == signature(b)


@pytest.mark.parametrize(("a", "b"), [
    pytest.param("KeyError: 'a'", "ValueError: 'a'", id="type"),
    pytest.param("app.py:3:1: E501 line too long", "app.py:4:1: E501 line too long", id="line"),
    pytest.param("error in a.go:3", "error in b.go:3", id="file"),
    pytest.param("Exit code 1\nboom failed", "Exit code 2\nboom failed", id="exit-code"),
])
def test_what_identifies_an_error_is_kept(a: str, b: str) -> None:
    assert signature(a) != signature(b)


def test_traceback_keeps_exception_and_innermost_frame() -> None:
    err = 'Exit code 1\nTraceback (most recent call last):\n  File "/a/x.py", line 9, in g\n  File "/a/y.py", line 4, in f\nKeyError: \'k\''
    assert signature(err) == "KeyError: 'k' | y.py:4 | exit 1"


def test_signature_is_short_and_one_line() -> None:
    sig = signature("error " + "x" * 5000 + "\nsecond error line\n" * 100)
    assert len(sig) <= CAP and "\n" not in sig
