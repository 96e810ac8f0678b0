"""metacog.nervous: one message per call from the senses' signals, the interrupt leading; a sense off."""

from __future__ import annotations

from pathlib import Path

from hooktest import T0, bash, captured, failed, prompt, read, texts


def test_one_message_per_call_combining_senses() -> None:
    # Chronos (20 minutes of work) and Drift (25 actions away from what the request named)
    # speak on the same call: one message, in the senses' order.
    calls = [
        prompt("Fix the crash in parser.py when `parse_header` gets an empty line"),
        read("/home/dev/project/src/parser.py"),
    ]
    # One wall met four times: three obstacles that brought nothing new.
    calls += [
        failed(f"make t{i}", "Exit code 2\nmake: *** No rule to make target 'build/app'.")
        for i in range(4)
    ]
    calls += [bash(f"ls dir{i}", stdout=str(i)) for i in range(21)]
    said = texts(calls, step=47.0)
    assert not any(s.count("metacog:") > 1 for s in said)
    assert said[26].count("metacog:") == 1
    assert said[26].startswith(
        "metacog: 26 tool calls and 20 minutes since the person last spoke, 3 obstacles since"
    )
    assert said[26].endswith(
        "the last 25 actions touched none of what the request named (parser.py, parse_header), "
        "and 3 obstacles on the way showed nothing new. Is this detour needed for the task?"
    )


def test_layer2_carries_the_other_readings() -> None:
    fail = captured("PostToolUseFailure", "Bash")
    calls = [prompt("go")] + [fail] * 5
    said = texts(calls, step=30.0)
    assert "state your assumption" in said[5]
    assert "since the person spoke" in said[5]


def test_disabled_sense_stays_silent(isolated_home: Path) -> None:
    config = isolated_home / "config"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[vestibular]\nenabled = false\n")
    assert texts([bash("git status")] * 5) == [""] * 5
    # Enabled again, the same calls are a loop: the silence above was the setting's.
    (config / "config.toml").write_text("[vestibular]\nenabled = true\n")
    again = texts([bash("git status")] * 4, start=T0 + 100)
    assert any("times in a row with the same result" in said for said in again), again
