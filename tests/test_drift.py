"""metacog.senses.drift: the last actions touching none of what the person's request named."""

from __future__ import annotations

from pathlib import Path

import pytest
from hooktest import bash, failed, grep, prompt, read, senses_off, texts

REQUEST = "Fix the crash in parser.py when `parse_header` gets an empty line"
WALL = "psycopg.OperationalError: connection to server at db_host failed"


@pytest.fixture(autouse=True)
def drift_alone(isolated_home: Path) -> None:
    """Drift alone speaks: the walls on the detour are also what the loop senses say."""
    senses_off(isolated_home, "nociception", "habit", "vestibular", "chronos")


def test_drift_from_what_the_request_named() -> None:
    calls = [prompt(REQUEST), read("/home/dev/project/src/parser.py")]
    # A wall met on the detour, and met again: two obstacles that brought nothing new.
    calls += [failed(f"make db{i}", f"Exit code 1\n{WALL}") for i in range(3)]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(22)]
    said = texts(calls)
    assert not any(said[:26])
    assert "touched none of what the request named" in said[26] and "parser.py" in said[26]
    assert "2 obstacles on the way showed nothing new" in said[26]


def test_a_detour_that_goes_well_is_not_worth_a_word() -> None:
    # Reading around, away from what the request named: how exploring goes.
    calls = [prompt(REQUEST), read("/home/dev/project/src/parser.py")]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(40)]
    assert not any(texts(calls))
    # Obstacles that each brought something new are the detour's work moving, not a grind.
    calls = [prompt(REQUEST), read("/home/dev/project/src/parser.py")]
    calls += [
        failed(f"make t{i}", f"Exit code 2\nmake: no rule for 'target_{i}'") for i in range(3)
    ]
    calls += [bash(f"ls b{i}", stdout=str(i)) for i in range(30)]
    assert not any(texts(calls, start=2e9))


def test_no_drift_without_named_things() -> None:
    # As many calls as the named request above needed to speak: fewer would pass unheard.
    calls = [prompt("make it faster"), read("/home/dev/project/src/parser.py")]
    calls += [failed(f"make db{i}", f"Exit code 1\n{WALL}") for i in range(3)]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(22)]
    assert not any(texts(calls))


def test_questions_that_find_nothing_need_as_many_as_a_stuck_search() -> None:
    # Searches that find nothing are how a search goes for a while: as Nociception, a detour
    # of empty answers is a grind only at stale_empty_at (3) that brought nothing new.
    calls = [prompt(REQUEST), read("/home/dev/project/src/parser.py")]
    calls += [grep("db_host") for _ in range(3)]  # the first is news, two brought nothing
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(30)]
    assert not any(texts(calls))
    calls = [prompt(REQUEST), read("/home/dev/project/src/parser.py")]
    calls += [grep("redis_host") for _ in range(4)]  # the same place: none of them news now
    calls += [bash(f"ls b{i}", stdout=str(i)) for i in range(22)]
    said = texts(calls, start=2e9)
    assert "4 obstacles on the way showed nothing new" in said[26], said
