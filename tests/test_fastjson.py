from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metacog import fastjson

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids),
    max_leaves=30,
)


@given(values)
def test_round_trip_matches_the_json_module(value: object) -> None:
    text = fastjson.dumps(value)
    assert json.loads(text) == value
    assert fastjson.loads(text) == json.loads(text)


@given(st.text())
def test_arbitrary_text_parses_or_raises_value_error(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            fastjson.loads(text)
    else:
        if expected == expected:  # noqa: PLR0124 - NaN is not equal to itself
            assert fastjson.loads(text) == expected


def test_deep_nesting_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        fastjson.loads("[" * 100_000 + "]" * 100_000)
