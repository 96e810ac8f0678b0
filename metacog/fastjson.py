"""JSON through the C accelerator alone, for the hook's hot path.

`import json` pulls in `re` and `enum`: measured here, 36 ms against 20 ms for a bare
interpreter start (benchmarks/), most of the hook's budget. `_json` is the same C code
the json module uses, without the Python wrapper. Where it is missing (another
implementation), this falls back to the json module. Never raises on input it cannot
parse: `loads` raises ValueError like json.loads.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None

_WS = " \t\n\r"


class _Context:
    # The attributes `_json.make_scanner` reads; json.JSONDecoder sets the same ones.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


if _json is not None:
    _scan = _json.make_scanner(_Context())
    _encode = _json.make_encoder(
        None,  # markers: no cycle detection needed for plain state records
        None,  # default: an unserialisable value raises TypeError
        _json.encode_basestring_ascii,
        None,  # indent
        ":",
        ",",
        False,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan: NaN is not JSON
    )


def loads(text: str | bytes) -> object:
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", "replace")
    if _json is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"no JSON value at {exc.value}") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if text[end:].strip(_WS):
        raise ValueError(f"extra data at {end}")
    return value


def dumps(value: object) -> str:
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    return "".join(_encode(value, 0))
