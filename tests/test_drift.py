"""metacog.senses.drift: the last actions touching none of what the person's request named."""

from __future__ import annotations

from hooktest import bash, prompt, read, texts


def test_drift_from_what_the_request_named() -> None:
    calls = [
        prompt("Fix the crash in parser.py when `parse_header` gets an empty line"),
        read("/home/dev/project/src/parser.py"),
    ]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(25)]
    said = texts(calls)
    assert not any(said[:26])
    assert "touched none of what the request named" in said[26] and "parser.py" in said[26]


def test_no_drift_without_named_things() -> None:
    # As many calls as the named request above needed to speak: fewer would pass unheard.
    calls = [prompt("make it faster"), read("/home/dev/project/src/parser.py")]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(25)]
    assert not any(texts(calls))
