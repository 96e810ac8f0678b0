"""Reflex end to end with the real CLI: a resolution recalled in the next session, the
compaction note, silence in a calm session; and the compaction facts of the pinned CLI.

Facts measured here on Claude Code 2.1.328 (test_which_compaction_hooks_reach_the_model):
`/compact` (manual) fires PreCompact (trigger "manual"), then SessionStart with source
"compact", then PostCompact (trigger, compact_summary). Only SessionStart's
additionalContext reaches the model, in the first request after the compaction. PreCompact
and PostCompact accept no hookSpecificOutput: the CLI answers it with a schema error (whose
text, the hook's JSON included, is what then reaches the model). So the note goes out on
SessionStart(source=compact).
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_harness import ClaudeHarness, request_text_blocks

pytestmark = pytest.mark.e2e

BROKEN = 'PORT = "8080"\n'
FIXED = "PORT = 8080\n"
CHECK = 'import sys\nsys.path.insert(0, "src")\nfrom config import PORT\nprint(PORT + 1)\n'
RUN = "python3 check.py"
SAID = ("resolved here", "lesson learned", "before the compaction", "never resolved")


def bash(command: str) -> list:
    return [{"name": "Bash", "input": {"command": command, "description": "run"}}]


def hook_texts(result, i: int) -> list[str]:
    return [b for b in request_text_blocks(result.requests[i]) if "hook additional context" in b]


def ok(result) -> None:
    assert result.returncode == 0 and not result.timed_out, result.describe()


def setup_project(h: ClaudeHarness) -> Path:
    (h.project / "src").mkdir()
    (h.project / "src" / "config.py").write_text(BROKEN)
    (h.project / "check.py").write_text(CHECK)
    h.extra_env["PYTHONDONTWRITEBYTECODE"] = "1"
    return h.project / "src" / "config.py"


def test_a_resolution_is_recalled_in_the_next_session(metacog_claude: ClaudeHarness) -> None:
    config = setup_project(metacog_claude)
    fix = {"file_path": str(config), "old_string": '"8080"', "new_string": "8080"}
    first = metacog_claude.run(
        [
            bash(RUN),
            [{"name": "Read", "input": {"file_path": str(config)}}],
            bash(RUN),
            [{"name": "Edit", "input": fix}],
            bash(RUN),
            "Fixed.",
        ]
    )
    ok(first)
    assert config.read_text() == FIXED, first.describe()

    config.write_text(BROKEN)  # the same mistake, in the next session
    second = metacog_claude.run([bash(RUN), bash(RUN), "Done."])
    ok(second)
    assert not any("resolved here" in t for t in hook_texts(second, 1))
    recalled = [t for t in hook_texts(second, 2) if "resolved here" in t]
    assert recalled, second.describe()
    assert "an edit of src/config.py, then `python3 check.py` passed" in recalled[0], recalled

    calm = metacog_claude.run([bash("echo hello"), bash("ls"), "Done."])
    ok(calm)
    for i in range(len(calm.requests)):
        heard = " ".join(hook_texts(calm, i))
        assert not any(s in heard for s in SAID), heard


def test_the_compaction_note_reaches_the_model(metacog_claude: ClaudeHarness) -> None:
    setup_project(metacog_claude)
    first = metacog_claude.run([bash(RUN), bash("ls"), bash(RUN), "Stuck."])
    ok(first)
    sid = first.output["session_id"]
    compact = metacog_claude.run(
        ["Summary: check.py fails."], prompt="/compact", extra_args=["--resume", sid]
    )
    ok(compact)
    after = metacog_claude.run(
        [bash("echo next"), "Done."], prompt="go on", extra_args=["--resume", sid]
    )
    ok(after)
    notes = [t for t in hook_texts(after, 0) if "before the compaction" in t]
    assert notes, after.describe()
    assert "SessionStart hook additional context: metacog: " in notes[0]
    assert f"still unresolved: `{RUN}` failed 2×" in notes[0], notes


PROBE_HOOK = """#!/bin/sh
input=$(cat)
printf "%s\\n" "$input" >> "$PROBE_LOG"
ev=$(printf '%s' "$input" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["hook_event_name"] + "-" + str(d.get("source") or d.get("trigger") or ""))')
printf '{"hookSpecificOutput": {"hookEventName": "%s", "additionalContext": "PROBE-%s-MARK"}}' "${ev%%-*}" "$ev"
"""


def test_which_compaction_hooks_reach_the_model(claude: ClaudeHarness) -> None:
    plugin = claude.root / "probe"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "probe"}')
    script = plugin / "hooks" / "log.sh"
    script.write_text(PROBE_HOOK)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    events = ("PreCompact", "PostCompact", "SessionStart")
    command = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/log.sh"'
    hooks = {e: [{"hooks": [{"type": "command", "command": command}]}] for e in events}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    log = claude.root / "probe.log"
    claude.extra_env["PROBE_LOG"] = str(log)

    first = claude.run([bash("false"), "Done."], plugin_dir=plugin)
    ok(first)
    sid = first.output["session_id"]
    ok(claude.run(["Summary."], prompt="/compact", plugin_dir=plugin, extra_args=["--resume", sid]))
    after = claude.run(["Done."], prompt="go on", plugin_dir=plugin, extra_args=["--resume", sid])
    ok(after)

    fired = [json.loads(line) for line in log.read_text().splitlines()]
    order = [(d["hook_event_name"], d.get("source") or d.get("trigger")) for d in fired]
    start = order.index(("PreCompact", "manual"))
    assert order[start : start + 3] == [
        ("PreCompact", "manual"),
        ("SessionStart", "compact"),
        ("PostCompact", "manual"),
    ], order
    post = next(d for d in fired if d["hook_event_name"] == "PostCompact")
    assert post["compact_summary"].startswith("Summary."), post

    blocks = request_text_blocks(after.requests[0])
    assert any(
        "SessionStart hook additional context: PROBE-SessionStart-compact-MARK" in b for b in blocks
    )
    for event in ("PreCompact", "PostCompact"):
        assert not any(f"{event} hook additional context" in b for b in blocks), event
        # What does arrive is the CLI's complaint about the output's shape.
        assert any(f'"hookEventName": "{event}"' in b and "schema" in b.lower() for b in blocks), (
            event
        )
