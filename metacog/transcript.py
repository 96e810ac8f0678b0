"""Reading Claude Code's transcript incrementally, in bounded steps.

The transcript (`transcript_path`, a JSONL file the CLI appends to) holds two things no
call's hook payload carries: the context fill (`message.usage` on assistant lines) and the
calls Claude Code refused before running them (an Edit whose text is not found, "File
has not been read yet"): they fire no call's hook, only the batch's (PostToolBatch, where
metacog.handlers.on_batch hears them first), and are `tool_result` blocks with
`is_error: true` here (FACTS.md); read here too for a Claude Code that fires no
PostToolBatch. Sessions reach tens of MB, so each hook reads only the
bytes appended since the last one, at most READ_CAP, and only parses lines that can
matter (a substring test first).
"""

from __future__ import annotations

import os

from metacog.fsutil import open_regular, parse_json, read_fd
from metacog.perception.tools import REFUSAL_TAG

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from collections.abc import Iterator

READ_CAP = 4 * 1024 * 1024  # new bytes read per hook call at most
FIRST_LOOK = 1024 * 1024  # a resumed session's history is not replayed: start near the end
PENDING_CAP = 64  # tool_use ids remembered while waiting for their results
TARGET_KEEP = 300  # characters of a pending call's path or command kept (a heredoc is not a target)
# Replay only (metacog.replay sets it for one transcript, in one process): the transcript
# replay feeds the hook, kept in memory instead of a file (`Held`, by the path the payloads
# name): its last bytes, and its lines already parsed. The hook read them from a copy on
# disk and parsed each line again (a tenth of a replay, profiled); what `read_new` makes of
# them is the same.
HELD: dict[str, Held] | None = None


def usage_tokens(usage: object) -> int:
    if not isinstance(usage, dict):
        return 0
    total = 0
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            total += value
    return total


def content_text(content: object, sep: str = " ") -> str:
    """The text of a message or tool_result `content`: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


# How a transcript line is read, for the hook (`read_new`, a few new lines per call) and for
# replay (metacog.replay, every line of a recorded session): one reading of each kind of block.


def tool_uses(message: dict) -> Iterator[dict]:
    """The calls an assistant message made: its tool_use blocks that have an id."""
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and isinstance(block.get("id"), str)
        ):
            yield block


def tool_results(message: dict) -> Iterator[dict]:
    """The results a user message carries back: its tool_result blocks."""
    content = message.get("content")
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result":
            yield block


def refused(block: dict, text: str) -> bool:
    """Whether a tool_result (whose text is `text`) is Claude Code refusing the call before it
    ran: no hook fired for it (FACTS.md), the transcript alone tells."""
    return block.get("is_error") is True and text.lstrip().startswith(REFUSAL_TAG)


def response_id(message: dict) -> str | None:
    """The model response a line belongs to (one response spans several lines), None if the
    line names none."""
    mid = message.get("id")
    return mid[:80] if isinstance(mid, str) else None


class Reading:
    """What the new part of the transcript said."""

    __slots__ = (
        "compacted",
        "held",
        "last_response",
        "model",
        "refused",
        "responses",
        "tokens",
        "turns",
    )

    def __init__(self) -> None:
        self.tokens = 0  # context used at the latest response (0: none seen)
        # The most the main thread's context held in these lines (a response's usage, a
        # compaction's preTokens): what the window must have room for. A subagent's lines
        # (isSidechain) are its own context, perhaps another model's: not counted.
        self.held = 0
        self.responses = 0  # new model responses (one response may span several lines)
        self.last_response = ""  # its message id, carried in the cursor to the next read
        self.model = ""
        self.compacted = False
        # (tool name, tool input, error text, the ordinal of the response that made the call,
        # its tool_use id: a PostToolBatch may have told it already)
        self.refused: list[tuple[str, dict, str, int, str]] = []
        self.turns: dict[str, int] = {}  # tool_use id -> the ordinal of the response that made it


def read_new(path: str, cursor: dict) -> Reading:
    """Parse what was appended since `cursor` (updated in place: offset, pending tool uses)."""
    out = Reading()
    if not path:
        return out
    held = HELD.get(path) if HELD is not None else None
    if held is not None:
        offset = _start(cursor, held.size, held.ino)
        data = held.since(offset)
    else:
        try:
            # Claude Code's file, not metacog's: a symlink is followed, to a regular file only
            # (a FIFO or a device would block or never end).
            fd = open_regular(path, follow=True)
        except (OSError, ValueError):  # ValueError: an embedded NUL, or not a regular file
            return out
        try:
            st = os.fstat(fd)
            size = st.st_size
            offset = _start(cursor, size, st.st_ino)
            os.lseek(fd, offset, os.SEEK_SET)
            data = read_fd(fd, size - offset) if size > offset else b""
        finally:
            os.close(fd)
    end = data.rfind(b"\n")
    if end < 0:
        cursor["offset"] = offset
        return out
    cursor["offset"] = offset + end + 1
    pending = cursor.get("pending")
    if not isinstance(pending, dict):
        pending = {}
    last = cursor.get("last_response")
    out.last_response = last if isinstance(last, str) else ""
    seen = cursor.get("responses")
    seen = seen if isinstance(seen, int) and seen >= 0 else 0
    parsed = held.entries if held is not None else None
    at = offset
    for line in data[: end + 1].split(b"\n"):
        if b'"usage"' in line or b"tool_use" in line or b"compactMetadata" in line:
            entry = parsed.get(at, _UNHELD) if parsed else _UNHELD
            _parse(line, out, pending, seen, entry)
        at += len(line) + 1
    if parsed:
        _read_up_to(parsed, cursor["offset"])
    cursor["responses"] = seen + out.responses
    turns = cursor.get("turns")
    turns = turns if isinstance(turns, dict) else {}
    turns.update(out.turns)
    while len(turns) > PENDING_CAP:
        del turns[next(iter(turns))]
    cursor["turns"] = turns
    if len(pending) > PENDING_CAP:
        for key in list(pending)[: len(pending) - PENDING_CAP]:
            del pending[key]
    cursor["pending"] = pending
    cursor["last_response"] = out.last_response
    return out


def turn_of(cursor: dict, tool_use_id: str) -> int:
    """The ordinal of the response that made this call, where the transcript already holds
    it; 0 (unknown) where it does not. Claude Code often runs a call's hook before it has
    written the response that made it, sometimes for several calls in a row (seen in e2e
    runs as turns 0, 2, 2 for three separate attempts by the count of responses read), so
    no guess is safe: an unknown call is its own attempt. Calls of one parallel batch are
    then one attempt only when their response was already written."""
    turns = cursor.get("turns")
    known = turns.get(tool_use_id) if isinstance(turns, dict) and tool_use_id else None
    return known if isinstance(known, int) and not isinstance(known, bool) else 0


def _start(cursor: dict, size: int, ino: int) -> int:
    """Where this read starts: the cursor's offset in the same file, else near its end; at
    most READ_CAP before the end."""
    offset = cursor.get("offset")
    if not isinstance(offset, int) or offset < 0 or offset > size or cursor.get("ino") != ino:
        offset = max(0, size - FIRST_LOOK)
        cursor["ino"] = ino
    if size - offset > READ_CAP:
        offset = size - READ_CAP
    return offset


_UNHELD = object()  # a line replay holds no parsed value of (Held.entries)


class Held:
    """Replay's transcript as the hook reads it (HELD): its bytes from `base` on (at least the
    last READ_CAP, all a read may take) and the parsed value of each line that parsing its
    bytes gives the same value for (`entries`, by offset; dropped once read)."""

    __slots__ = ("base", "data", "entries", "ino")

    def __init__(self, ino: int = 1) -> None:
        self.data = bytearray()
        self.base = 0  # the offset of data[0]
        self.entries: dict[int, object] = {}
        self.ino = ino  # a file's inode, as the cursor remembers it

    @property
    def size(self) -> int:
        return self.base + len(self.data)

    def since(self, offset: int) -> bytes:
        return bytes(memoryview(self.data)[offset - self.base :])

    def append(self, raw: bytes, entry: object) -> None:
        """`raw`, one line ending in its only newline, written; `entry` what json.loads gave
        for its text, decoded as strict UTF-8, held for the hook's read where parsing the bytes
        (parse_json) gives the same. The caller gives None for bytes that are not UTF-8 (replay
        reads them with replacement characters, where the bytes fail to parse) and for a line
        that holds NaN or Infinity (parse_json refuses them); not held either: a line that
        json.loads reads as UTF-16 or 32 or with a BOM (a NUL in its first four bytes). Lines
        that begin more than READ_CAP before the end are dropped, and the bytes before that
        once they are READ_CAP more: no read takes them."""
        at = self.size
        self.data += raw
        if len(self.data) > 2 * READ_CAP:
            cut = len(self.data) - READ_CAP
            del self.data[:cut]
            self.base += cut
        if not isinstance(entry, dict):
            return
        if raw.startswith(b"\xef\xbb\xbf") or b"\x00" in raw[:4]:
            return
        self.entries[at] = entry
        _read_up_to(self.entries, self.size - READ_CAP)


def _read_up_to(held: dict[int, object], offset: int) -> None:
    """Drop the held lines that begin before `offset` (held in the order they were written)."""
    while held:
        first = next(iter(held))
        if first >= offset:
            return
        del held[first]


def _parse(line: bytes, out: Reading, pending: dict, seen: int, entry: object = _UNHELD) -> None:
    if entry is _UNHELD:
        try:
            entry = parse_json(line)
        except ValueError:
            return  # a line cut by a concurrent writer, or not JSON (however it fails): skipped
    if not isinstance(entry, dict):
        return
    main = entry.get("isSidechain") is not True  # a subagent's line: its context, not the main's
    meta = entry.get("compactMetadata")
    if isinstance(meta, dict):
        out.compacted = True
        out.tokens = 0  # the last usage is stale until the next response
        pre = meta.get("preTokens")
        if main and isinstance(pre, int) and not isinstance(pre, bool):
            out.held = max(out.held, pre)
        return
    message = entry.get("message")
    if not isinstance(message, dict):
        return
    if entry.get("type") == "assistant":
        mid = response_id(message)
        if mid is not None and mid != out.last_response:
            out.last_response = mid
            out.responses += 1
        tokens = usage_tokens(message.get("usage"))
        if tokens:
            out.tokens = tokens
            if main:
                out.held = max(out.held, tokens)
            model = message.get("model")
            out.model = model if isinstance(model, str) else out.model
        for block in tool_uses(message):
            tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
            # Only what a target needs; never file contents.
            slim = {
                k: v[:TARGET_KEEP]
                for k, v in tool_input.items()
                if k in _TARGET_KEYS and isinstance(v, str)
            }
            pending[block["id"][:80]] = [
                str(block.get("name", "?"))[:40],
                slim,
                seen + out.responses,
            ]
            out.turns[block["id"][:80]] = seen + out.responses
    elif entry.get("type") == "user":
        for block in tool_results(message):
            use_id = str(block.get("tool_use_id", ""))[:80]
            call = pending.pop(use_id, None)
            text = content_text(block.get("content"))
            if refused(block, text):
                name, tool_input, turn = (
                    call if isinstance(call, list) and len(call) == 3 else ("?", {}, 0)
                )
                out.refused.append(
                    (name, tool_input, text[:4000], turn if isinstance(turn, int) else 0, use_id)
                )


_TARGET_KEYS = (
    "file_path",
    "notebook_path",
    "path",
    "command",
    "pattern",
    "url",
    "query",
    "description",
)


# The model families whose ids Claude Code 2.1.328 gives a 1,000,000-token window natively,
# from the version named (its model catalog, `context: {window: 1e6, native_1m: true}`, read
# from the pinned CLI: Opus 4.7 and 4.8, every 5.x model, every Fable and Mythos id). Older
# ids have 200,000 and reach 1M only with `[1m]`, which transcripts do not write.
NATIVE_1M = {"opus": (4, 7), "sonnet": (5, 0), "haiku": (5, 0), "fable": (0, 0), "mythos": (0, 0)}
WINDOWS = (200_000, 1_000_000)  # the windows Claude Code gives a model


def _version(rest: str) -> tuple[int, int]:
    """The (major, minor) an id names after its family ("4-8", "4-20250514", "5"): 1 or 2
    digits each, so that a date is no version; (0, 0) where none is named."""
    parts = [*rest.split("-"), ""][:2]
    if not (parts[0].isdigit() and len(parts[0]) <= 2):
        return (0, 0)
    minor = int(parts[1]) if parts[1].isdigit() and len(parts[1]) <= 2 else 0
    return (int(parts[0]), minor)


def context_window(model: str, configured: int = 0, env: dict | None = None) -> int:
    """The model's window, as Claude Code 2.1.328 computes it (FACTS.md, "Context window")."""
    if configured > 0:
        return configured
    env = os.environ if env is None else env
    window = 200_000
    lowered = model.lower()
    if "[1m]" in lowered:
        window = 1_000_000
    else:
        for family, since in NATIVE_1M.items():
            at = lowered.find(family + "-")
            if at >= 0:
                if _version(lowered[at + len(family) + 1 :]) >= since:
                    window = 1_000_000
                break
        else:
            override = env.get("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "")
            if override.isdigit() and int(override) > 0:
                window = int(override)
    if env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT") and window > 200_000:
        window = 200_000
    return window


def outgrown(window: int, held: int) -> int:
    """The window once the session's context has held `held` tokens. A context never holds
    more than its window, so past it the window is the next one Claude Code gives (past
    200K, the 1M of a `[1m]` id the transcript does not name); never the old one again."""
    if held <= window:
        return window
    return next((w for w in WINDOWS if w >= held), held)


def autocompact_at(window: int) -> int:
    """Where auto-compaction starts: window - min(max output, 20,000) - 13,000 (FACTS.md).

    Clamped to 80% for windows too small for that formula (a configured test window).
    """
    return max(window - 20_000 - 13_000, window * 4 // 5)
