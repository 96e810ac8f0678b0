"""How much of what the senses catch rests on the words of the tools they were built from.

    python benchmarks/score_blind.py [TRANSCRIPTS_DIR]

Every labelled transcript is scored twice with score_labels: as it is, and *blind*: each
word the world printed (a shell command's output, an MCP server's, a fetched page's, a
background task's) replaced by a made-up word of the same length and the same capitals,
the same word by the same made-up word throughout a session. What the world said keeps its
structure: which lines repeat, which are new, where a path, an identifier or a code stands,
how long a result is, whether the call failed. It loses its vocabulary: `error:`,
`FAILED`, `No such file or directory`, a runner's summary, a prompt's words. Claude Code's
own words stay (its refusals, `Exit code N`, `Command timed out`, a hook's block, the
person's no): those are the same on every project, the tool the senses were built for. So
is what the agent sent (its commands, its edits).

A catch that survives the blind replay came from structure, and carries to a tool whose
words metacog has never read; one that does not came from vocabulary. The transcripts are
rewritten into a temporary folder and deleted with it; nothing of them is kept.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from score_labels import labelled_folder, read_labels, score

# Tools whose results are the world's words, not Claude Code's.
WORLD = frozenset(("Bash", "BashOutput", "TaskOutput", "KillShell", "WebFetch", "WebSearch"))
# Lines that are Claude Code's own framing inside a result the world wrote: kept as they are.
CLAUDE_CODE = re.compile(
    r"^(?:Error: )?(?:Exit code \d+|Command timed out after|\[Request interrupted by user"
    r"|The user doesn't want to proceed|<tool_use_error>|.* operation blocked by hook"
    r"|No such tool available)"
)
# A failed call's whole result when Claude Code answered instead of the tool: kept.
ANSWERED = re.compile(
    r"<tool_use_error>|The user doesn't want to proceed|\[Request interrupted by user"
    r"|Command timed out after|Claude requested permissions|This command requires approval"
    r"|Permission (?:to use|for this action)|cd to '[^']*' was blocked"
)
# Fields of a structured result that are Claude Code's, not the world's words: kept.
KEPT = frozenset(
    (
        "type",
        "status",
        "retrieval_status",
        "codeText",
        "returnCodeInterpretation",
        "task_id",
        "shell_id",
        "shellId",
        "backgroundTaskId",
    )
)
_WORD = re.compile(r"[A-Za-z]{3,}")
_LOWER = "abcdefghijklmnopqrstuvwxyz"


def said_by_world(tool: str, block: dict) -> bool:
    """Whether a tool result holds the world's words: a result of a WORLD tool or an MCP
    server's, but not where Claude Code answered instead of the tool (a refused call, the
    person's no, a timeout, a permission denied, a sandbox's block: ANSWERED)."""
    if not (tool in WORLD or tool.startswith("mcp__")):
        return False
    if not block.get("is_error"):
        return True
    content = block.get("content")
    if isinstance(content, list):
        content = next((b.get("text") for b in content if isinstance(b, dict)), "")
    text = content.lstrip() if isinstance(content, str) else ""
    return not ANSWERED.match(text)


class Blind:
    """One session's made-up words: the same word, the same made-up word."""

    def __init__(self, salt: str) -> None:
        self.salt = salt
        self.words: dict[str, str] = {}

    def word(self, match: re.Match[str]) -> str:
        word = match.group()
        key = word.lower()
        made = self.words.get(key)
        if made is None:
            seed = zlib.crc32(f"{self.salt}\x00{key}".encode())
            letters = []
            for _ in key:
                seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
                letters.append(_LOWER[(seed >> 16) % 26])
            made = self.words[key] = "".join(letters)
        return "".join(m.upper() if c.isupper() else m for c, m in zip(word, made, strict=True))

    def text(self, text: str) -> str:
        return "\n".join(
            line if CLAUDE_CODE.match(line) else _WORD.sub(self.word, line)
            for line in text.split("\n")
        )

    def value(self, value: object) -> object:
        """Every string of a result, however nested, made blind, but Claude Code's own fields
        (KEPT: a background task's status, a content block's type)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: v if k in KEPT else self.value(v) for k, v in value.items()}
        return value


def blind_transcript(source: Path, target: Path) -> None:
    """The transcript with what the world printed made blind, line for line."""
    blind = Blind(source.name)
    names: dict[str, str] = {}  # tool_use id -> tool name
    with open(source, "rb") as src, open(target, "w", encoding="utf-8") as out:
        for raw in src:
            try:
                entry = json.loads(raw)
            except ValueError:
                out.write(raw.decode("utf-8", "replace"))
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            world = False
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
                elif block.get("type") == "tool_result" and said_by_world(
                    names.get(str(block.get("tool_use_id")), ""), block
                ):
                    world = True
                    block["content"] = blind.value(block.get("content"))
            if world and "toolUseResult" in entry:
                entry["toolUseResult"] = blind.value(entry["toolUseResult"])
            out.write(json.dumps(entry) + "\n")


def blind_folder(folder: Path, target: Path) -> None:
    """The labelled transcripts of `folder` made blind into `target`, a file name each: a
    label naming a path (`../x`, `/x`) is refused, never written outside `target`."""
    shutil.copy(folder / "LABELS.jsonl", target / "LABELS.jsonl")
    for name in sorted({label["file"] for label in read_labels(folder)}):
        if Path(name).name != name or name in (".", ".."):
            raise ValueError(f"a label names {name!r}, not a file of {folder}")
        blind_transcript(folder / name, target / name)


def _verdicts(result: dict) -> dict[tuple, str]:
    return {
        (e["file"], e["speak_at"]): verdict
        for verdict, episodes in result["stuck"].items()
        for e in episodes
    }


def _line(name: str, result: dict) -> str:
    on_time = len(result["stuck"]["on_time"])
    return (
        f"{name:7} {on_time} of {result['stuck_total']} on time, "
        f"{len(result['false_alarms'])} false alarms of {result['progress']}, "
        f"{result['quiet_per_100']:.2f} signals per 100 quiet calls"
    )


def main(argv: list[str]) -> int:
    folder = labelled_folder(argv)
    if folder is None:
        return 2
    seen = score(folder)
    with tempfile.TemporaryDirectory(prefix="metacog-blind-") as tmp:
        blind_folder(folder, Path(tmp))
        blind = score(Path(tmp))
    print(_line("as read", seen))
    print(_line("blind", blind))
    before, after = _verdicts(seen), _verdicts(blind)
    lost = sorted(k for k, v in before.items() if v == "on_time" and after.get(k) != "on_time")
    won = sorted(k for k, v in after.items() if v == "on_time" and before.get(k) != "on_time")
    kinds: dict[str, list[int]] = {}
    for label in read_labels(folder):
        if label["type"] == "stuck":
            key = (label["file"], label["speak_at"])
            counts = kinds.setdefault(label["kind"], [0, 0, 0])
            counts[0] += 1
            counts[1] += before.get(key) == "on_time"
            counts[2] += after.get(key) == "on_time"
    for kind, (total, read, blinded) in sorted(kinds.items()):
        print(f"  {kind:16} {read:3} -> {blinded:3} of {total}")
    for verdict, keys in (("caught only as read", lost), ("caught only blind", won)):
        for file, speak_at in keys:
            print(f"  {verdict}: {file.split('__', 1)[0]} {file[-50:-6]} at {speak_at}")
    both = sum(1 for k, v in before.items() if v == "on_time" and after.get(k) == "on_time")
    print(f"caught on time both as read and blind: {both} of {len(seen['stuck']['on_time'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
