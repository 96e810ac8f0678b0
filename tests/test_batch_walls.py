"""One wall met by many calls of one parallel batch (Nociception, PostToolBatch).

The agent decided once, but the world answered as many times: calls of one batch that met the
same obstacle (its signature at its place: metacog.perception.novelty.wall) are that wall met
as many times. Payloads are the captured PostToolBatch (tests/fixtures/hook-inputs-batch-2.1.328.jsonl)
with other calls; transcripts are built from the captured one's lines (tests/transcripts.py);
the refusal texts are Claude Code's own, as the shared transcripts hold them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hooktest import FIXTURES, agent_text, send
from transcripts import Transcript

BATCH = next(
    p
    for p in map(
        json.loads, (FIXTURES / "hook-inputs-batch-2.1.328.jsonl").read_text().splitlines()
    )
    if p["hook_event_name"] == "PostToolBatch" and "<tool_use_error>" in json.dumps(p)
)
MODIFIED = (
    "File has been modified since read, either by the user or by a linter. Read it again "
    "before attempting to write it."
)
NOT_READ = "File has not been read yet. Read it first before writing to it."
NOT_FOUND = "String to replace not found in file.\nString: {old}"
AMBIGUOUS = (
    "Found 2 matches of the string to replace, but replace_all is false. To replace all "
    "occurrences, set replace_all to true."
)
CANCELLED = "Sibling tool call errored"
NO_TOOL = "Error: No such tool available: mcp__memory__store"
T0 = 1_800_000_000.0


def edit(name: str, n: int) -> dict:
    return {
        "file_path": f"/home/dev/project/{name}",
        "old_string": f"old {n}",
        "new_string": f"new {n}",
        "replace_all": False,
    }


class Session:
    """A session's transcript and its batches, each sent as Claude Code sends PostToolBatch."""

    def __init__(self, folder: Path) -> None:
        self.log = Transcript(folder / "t.jsonl")
        self.now = T0

    def batch(self, calls: list[tuple[str, dict, str]]) -> dict | None:
        ids = self.log.refused_batch(calls)
        payload = copy.deepcopy(BATCH)
        payload["transcript_path"] = str(self.log.path)
        payload["tool_calls"] = [
            {
                "tool_name": tool,
                "tool_input": tool_input,
                "tool_use_id": use_id,
                "tool_response": f"<tool_use_error>{message}</tool_use_error>",
            }
            for use_id, (tool, tool_input, message) in zip(ids, calls, strict=True)
        ]
        self.now += 10
        return send(payload, now=self.now)


def state(home: Path) -> dict:
    return json.loads(next((home / "state" / "sessions").glob("*.json")).read_text())


def test_a_batch_that_meets_a_wall_met_before_says_how_many_calls_met_it_and_where(
    tmp_path: Path, isolated_home: Path
) -> None:
    # The shape of planetfall-seed-signalkit c4986cde: two Edits of one file refused as
    # modified since read, then, a turn later, every Edit of a batch of another file.
    s = Session(tmp_path)
    assert s.batch([("Edit", edit("island.js", n), MODIFIED) for n in range(2)]) is None
    said = agent_text(s.batch([("Edit", edit("style.css", n), MODIFIED) for n in range(4)]))
    # One word for the batch, said once it had heard the whole batch: all four calls.
    assert said.startswith("metacog: 4 calls of this batch, Edit `style.css`, met the same ")
    assert 'refusal, "File has been modified since read, either by the user' in said
    assert "; Edit `island.js` met it 1 call before." in said
    assert said.count("calls of this batch") == 1 and len(said) <= len("metacog: ") + 300
    assert state(isolated_home)["summary"]["fired"] == {"nociception": 1}


def test_a_batch_that_meets_one_wall_the_first_time_speaks_once_three_met_it_again(
    tmp_path: Path,
) -> None:
    # claude-backup 37ca79c5: sixteen calls of a tool that is not there, in one response. The
    # first is news, the fifteen after it say nothing new.
    s = Session(tmp_path)
    said = agent_text(
        s.batch([("mcp__memory__store", {"content": f"row {n}"}, NO_TOOL) for n in range(6)])
    )
    assert said.startswith("metacog: 6 calls of this batch, mcp__memory__store, met the same ")
    assert "`Error: No such tool available: mcp__memory__store`. Sent again" in said
    assert "calls before" not in said  # met nowhere before


def test_two_calls_of_a_batch_meeting_one_wall_the_first_time_are_not_a_loop(
    tmp_path: Path,
) -> None:
    s = Session(tmp_path)
    assert s.batch([("Edit", edit("tasks.md", n), MODIFIED) for n in range(2)]) is None


def test_a_batch_of_edits_of_different_files_not_read_is_one_mistake_not_a_wall(
    tmp_path: Path,
) -> None:
    # Quiet sessions (medgemma f1956cb5, entire-bmad 24fdfce2): three files edited before
    # being read, in one response: three places, each refused once.
    s = Session(tmp_path)
    names = ("manifest.json", "panel.html", "app.py", "README.md")
    assert s.batch([("Edit", edit(name, 0), NOT_READ) for name in names]) is None


def test_a_batch_whose_calls_met_different_refusals_is_not_one_wall(tmp_path: Path) -> None:
    s = Session(tmp_path)
    assert s.batch([("Edit", edit("style.css", 0), MODIFIED)]) is None
    different = [
        ("Edit", edit("style.css", 1), NOT_FOUND.format(old="old 1")),
        ("Edit", edit("style.css", 2), MODIFIED),
        ("Edit", edit("style.css", 3), AMBIGUOUS),
        ("Edit", edit("style.css", 4), NOT_READ),
    ]
    assert s.batch(different) is None


def test_calls_a_sibling_cancelled_met_no_wall_of_their_own(tmp_path: Path) -> None:
    # The second test's shape with Claude Code's cancellation (quiet CyberVPN 6685c4bb: eight
    # calls of one batch): a consequence of another call's failure, no wall met six times.
    # Six calls of one command, cancelled by a seventh: the same line at the same place, and
    # still no wall of their own.
    s = Session(tmp_path)
    assert s.batch([("Bash", {"command": "git status"}, CANCELLED)] * 6) is None
