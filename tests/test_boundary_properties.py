"""The hook boundary on arbitrary input: exit 0, stdout empty or one JSON object, bounded time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hooktest import CAPTURED, send
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
EVENTS = sorted({p["hook_event_name"] for p in CAPTURED} | {"SessionEnd", "SubagentStop", "Stop"})
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda kids: (
        st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=12), kids, max_size=5)
    ),
    max_leaves=20,
)


def check_reply(out: dict | None) -> None:
    if out is None:
        return
    assert isinstance(out, dict)
    assert set(out) <= {"hookSpecificOutput", "systemMessage"}
    if "hookSpecificOutput" in out:
        assert isinstance(out["hookSpecificOutput"]["additionalContext"], str)


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    event=st.sampled_from(EVENTS),
    fields=st.dictionaries(
        st.sampled_from(
            [
                "session_id",
                "tool_name",
                "tool_input",
                "tool_response",
                "error",
                "prompt",
                "cwd",
                "transcript_path",
                "agent_id",
                "source",
                "is_interrupt",
                "duration_ms",
                "last_assistant_message",
                "stop_hook_active",
                "agent_transcript_path",
            ]
        ),
        json_values,
    ),
)
def test_any_field_of_any_type(event: str, fields: dict) -> None:
    base = next((p for p in CAPTURED if p["hook_event_name"] == event), {"hook_event_name": event})
    check_reply(send({**base, **fields, "hook_event_name": event}))


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes(raw: bytes) -> None:
    check_reply(send(raw))


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_arbitrary_json(value: object) -> None:
    check_reply(send(json.dumps(value).encode()))


def run_process(raw: bytes, env: dict) -> subprocess.CompletedProcess:
    code = "import sys; sys.path.insert(0, sys.argv[1]); from metacog.hook import main; main()"
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(ROOT)],
        input=raw,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("kind", ["30MB", "deep", "deep-object", "binary"])
def test_huge_and_deep_payloads_in_a_real_process(kind: str, isolated_home: Path) -> None:
    payload = dict(CAPTURED[-1])
    if kind == "30MB":
        payload["tool_response"] = {"stdout": "x" * 30_000_000, "stderr": ""}
        raw = json.dumps(payload).encode()
    elif kind == "deep":
        raw = (
            b'{"hook_event_name": "PostToolUse", "session_id": "s", "tool_input": '
            + b"[" * 100_000
            + b"]" * 100_000
            + b"}"
        )
    elif kind == "deep-object":
        raw = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    else:
        raw = os.urandom(1_000_000)
    out = run_process(raw, dict(os.environ))
    assert out.returncode == 0
    assert out.stderr == b""
    assert out.stdout == b"" or isinstance(json.loads(out.stdout), dict)


@pytest.mark.sense_may_fail("hook")  # the boundary holds; no log can be written there
@pytest.mark.parametrize("home", ["/proc/metacog-cannot-exist", "/dev/null/metacog"])
def test_unwritable_home_is_silence(home: str) -> None:
    # /proc and a path under a device refuse every write, even to root (who ignores chmod).
    env = {**os.environ, "METACOG_HOME": home}
    fail = json.dumps(
        next(p for p in CAPTURED if p["hook_event_name"] == "PostToolUseFailure")
    ).encode()
    outs = [run_process(fail, env) for _ in range(3)]
    assert [(o.returncode, o.stdout, o.stderr) for o in outs] == [(0, b"", b"")] * 3
