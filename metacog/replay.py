"""Replay a recorded transcript through the real hook, offline: what would metacog have said?

Each tool result in the transcript becomes the hook payload Claude Code 2.1.328 would
have sent (PostToolUse, or PostToolUseFailure for an error), each person's prompt a
UserPromptSubmit, each model response's calls, once all are answered, a PostToolBatch
(refused calls included: the only hook they fire, FACTS.md), all through
`metacog.hook.handle` with the transcript's own timestamps. The transcript is re-written
progressively into a scratch file that the hook reads as its `transcript_path`, so
context usage and refused calls reach the senses exactly as they would live.

State, learned rules and config all go to a temporary METACOG_HOME, and learning is
off: the senses run as they would have in that session, never with the rules the
person's stores hold today (the digest of a project's learnings file would otherwise
arrive at the first prompt, a note the session never heard).

Besides what metacog would have said, the same pass records each call (time, tool,
normalized target, ok, error signature, the tokens of the responses before it) and
what metacog did say when it was active: Claude Code writes each hook context that
reached the model as an `attachment` line of type `hook_additional_context`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import BinaryIO

from metacog import config, handlers, hook, state, transcript
from metacog.event import Event
from metacog.fsutil import Unreadable
from metacog.handlers import HANDLERS
from metacog.perception import action as actions
from metacog.perception import call as read_calls
from metacog.perception.call import Call
from metacog.senses import SENSES
from metacog.transcript import (
    content_text,
    refused,
    response_id,
    tool_results,
    tool_uses,
    usage_tokens,
)

MAX_BYTES = (
    512 * 1024 * 1024
)  # long transcripts reach tens of MB; a larger file is refused, not read
SAID_PREFIX = "metacog:"
NO_LEARNING = {"learning": {"enabled": False}}


def _epoch(stamp: object, fallback: float) -> float:
    if not isinstance(stamp, str):
        return fallback
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return fallback


def _prompt(entry: dict) -> str | None:
    """The person's words on a user line, or None for tool results and meta lines."""
    if entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = content_text(content, "\n")
    return content if isinstance(content, str) and content.strip() else None


def events(lines: Iterable[str]) -> list[tuple[int, dict]]:
    """(line index after which the hook fires, payload) for one transcript."""
    timeline = _Timeline()
    out: list[tuple[int, dict]] = []
    index = -1
    for index, line in enumerate(lines):
        payloads = timeline.feed(line)
        out += [(index - 1, payload) for payload in timeline.ahead]  # before this line
        timeline.ahead.clear()
        out += [(index, payload) for payload in payloads]
    return out + [(index, payload) for payload in timeline.finish()]


_CONSTANTS: list[str] = []  # the NaN and Infinity the line just parsed held


def _constant(name: str) -> float:
    """NaN, Infinity or -Infinity, as json.loads reads them, noted (a scan of every line for
    them was a fortieth of a replay, profiled)."""
    _CONSTANTS.append(name)
    return float(name)


# json.loads of a str is this decoder's decode (its one more check, a BOM at the start, fails
# here as well: a BOM is no JSON value).
_DECODER = json.JSONDecoder(parse_constant=_constant)


class _Timeline:
    """The hook payloads of a transcript, line by line: a tool result needs its earlier call."""

    def __init__(self) -> None:
        self.calls: dict[str, dict] = {}
        self.clock = 0.0
        self.entries = 0  # lines that are transcript entries (a JSON object with a "type")
        self.tokens = 0  # of the responses since the last tool result
        self.response = ""  # the latest response's message id: one response spans several lines
        self.said: list[dict] = []  # metacog's hook contexts seen since drained
        self.refused: list[dict] = []  # calls refused before running, since drained
        self.prompts: list[float] = []  # when the person spoke
        self.cwd = ""  # the first working directory the transcript names: its project
        self.messages = 0  # user and assistant lines: a transcript has some, other JSONL files none
        # PostToolBatch (FACTS.md): each thread's latest response's calls ("" the main thread,
        # else the subagent's), the batch of each call still waiting for its result, and the
        # batches' payloads due before the line just fed is in the transcript.
        self.batches: dict[str, dict] = {}
        self.waiting: dict[str, dict] = {}
        self.ahead: list[dict] = []
        self.main_calls = 0  # main-thread calls with their results so far (LABELS.md's numbering)
        self.last_text = ""  # the main agent's last text since the person's last prompt
        self.turn_open = False  # the main agent answered since the person's last prompt
        self.ends: list[int] = []  # the main-thread call each turn ended after
        # The line just fed, parsed, for the hook's reading (transcript.Held): None when it is
        # not a JSON object, or holds NaN or Infinity, which the hook's parser refuses.
        self.entry: dict | None = None

    def turn_end(self, base: dict) -> list[dict]:
        """The Stop the turn ends with, where one ends: the person speaks next, or the file ends
        (a task notification is not the person, and continues the turn)."""
        if not self.turn_open or not self.last_text:
            self.turn_open = False
            return []  # no final message: Claude Code fires no Stop for an interrupted turn
        self.turn_open = False
        self.ends.append(self.main_calls)
        message, self.last_text = self.last_text, ""
        return [
            {
                **base,
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": message,
            }
        ]

    def _parsed(self, line: str) -> dict | None:
        """The line as a JSON object, None if it is none; kept as `entry` unless it holds NaN
        or Infinity."""
        self.entry = None
        _CONSTANTS.clear()
        try:
            entry = _DECODER.decode(line)  # json.loads, noting the constants it reads
        except (ValueError, RecursionError):  # not JSON, or nested past any transcript's depth
            return None
        if not isinstance(entry, dict):
            return None
        if not _CONSTANTS:
            self.entry = entry
        return entry

    def feed(self, line: str) -> list[dict]:
        """The payloads the hook gets once `line` is in the transcript (`finish` at its end)."""
        entry = self._parsed(line)
        if entry is None:
            return []
        if isinstance(entry.get("type"), str) and entry["type"]:
            self.entries += 1
            self.messages += entry["type"] in ("user", "assistant")
        calls = self.calls
        if not self.cwd and isinstance(entry.get("cwd"), str):
            self.cwd = entry["cwd"]
        self.clock = clock = _epoch(entry.get("timestamp"), self.clock)
        out: list[dict] = []
        base = {
            "session_id": "replay",
            "transcript_path": "",
            "cwd": entry.get("cwd") or "",
            "_ts": clock,
        }
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        agent = (
            {"agent_id": "sidechain", "agent_type": "subagent"} if entry.get("isSidechain") else {}
        )
        thread = (str(entry.get("agentId") or "sidechain")) if agent else ""
        if entry.get("type") == "attachment":
            self._attachment(entry.get("attachment"), clock)
        elif entry.get("type") == "assistant":
            self._usage(message)
            mid = response_id(message)
            if thread in self.batches and (mid is None or self.batches[thread]["mid"] != mid):
                self._close(thread)  # another response: the last one's calls are all told
            for block in tool_uses(message):
                calls[block["id"]] = block
                batch = self.batches.setdefault(
                    thread, {"mid": mid, "ids": [], "calls": {}, "agent": agent}
                )
                batch["ids"].append(block["id"])
                self.waiting[block["id"]] = batch
            if not agent:
                self._replied(message)
        elif entry.get("type") == "user":
            prompt = _prompt(entry)
            if prompt is not None and not agent:
                self._close(thread)  # the person speaks after the batch's hook
                return self._spoke(prompt, base, clock)
            for block in tool_results(message):
                known = str(block.get("tool_use_id")) in calls
                self.main_calls += known and not agent
                call = calls.pop(str(block.get("tool_use_id")), None) or {}
                result = content_text(block.get("content"), "\n")
                self._answered(block.get("tool_use_id"), call, result, base)
                if refused(block, result):
                    # Refused before running: no hook, the transcript tells the hook.
                    self.refused.append(
                        {
                            **base,
                            **agent,
                            "tool_name": call.get("name", "?"),
                            "tool_input": call.get("input")
                            if isinstance(call.get("input"), dict)
                            else {},
                            "error": result,
                            "tool_use_id": block.get("tool_use_id"),
                        }
                    )
                    continue
                payload = {
                    **base,
                    **agent,
                    "tool_name": call.get("name", "?"),
                    "tool_input": call.get("input") if isinstance(call.get("input"), dict) else {},
                    "tool_use_id": block.get("tool_use_id"),
                }
                if block.get("is_error"):
                    payload.update(
                        hook_event_name="PostToolUseFailure",
                        error=result,
                        is_interrupt=result.startswith("[Request interrupted by user"),
                    )
                else:
                    structured = entry.get("toolUseResult")
                    payload.update(
                        hook_event_name="PostToolUse",
                        tool_response=structured
                        if isinstance(structured, dict)
                        else {"output": result},
                    )
                out.append(payload)
        return out

    def _answered(self, use_id: object, call: dict, result: str, base: dict) -> None:
        """A call's result, kept for its batch's payload as PostToolBatch carries it."""
        batch = self.waiting.pop(use_id, None) if isinstance(use_id, str) else None
        if batch is None:
            return
        tool_input = call.get("input")
        batch["calls"][use_id] = {
            "tool_name": call.get("name", "?"),
            "tool_input": tool_input if isinstance(tool_input, dict) else {},
            "tool_use_id": use_id,
            "tool_response": result,
        }
        batch["last"], batch["base"] = use_id, base

    def _close(self, thread: str) -> None:
        """The thread's batch is over: its PostToolBatch is due if every call was answered
        (Claude Code fires it once all are; a response whose calls were cut off fires none).
        A response's calls may be answered before its last call is written (tools start while
        the response streams), so a batch is told only once the next response or the person's
        prompt begins, or the transcript ends."""
        batch = self.batches.pop(thread, None)
        if batch is None:
            return
        for use_id in batch["ids"]:
            self.waiting.pop(use_id, None)
        if batch["ids"] and len(batch["calls"]) == len(batch["ids"]):
            self.ahead.append(
                {
                    **batch["base"],
                    **batch["agent"],
                    "hook_event_name": "PostToolBatch",
                    "tool_calls": [batch["calls"][use_id] for use_id in batch["ids"]],
                    "_after": batch["last"],  # the call it is told after: the last answered
                }
            )

    def finish(self) -> list[dict]:
        """The payloads due once the transcript ends: the batches not yet told, then the Stop
        of the last turn, where one ends there."""
        for thread in list(self.batches):
            self._close(thread)
        ahead, self.ahead = self.ahead, []
        base = {"session_id": "replay", "transcript_path": "", "cwd": self.cwd, "_ts": self.clock}
        return ahead + self.turn_end(base)

    def _spoke(self, prompt: str, base: dict, clock: float) -> list[dict]:
        """A prompt, after the Stop of the turn it ends: the person's ends one (a task
        notification is not the person's, and the turn goes on)."""
        self.prompts.append(clock)
        person = not prompt.lstrip().startswith(
            (handlers.TASK_NOTIFICATION, "[Request interrupted")
        )
        ends = self.turn_end(base) if person else []
        return [*ends, {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}]

    def _replied(self, message: dict) -> None:
        """The main agent answered: its turn is open, and its final message is its text after
        its last call (a turn whose last act was a call, interrupted, ends with no message)."""
        self.turn_open = True
        content = message.get("content")
        if isinstance(content, list):
            if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
                self.last_text = ""
            content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        said = content_text(content, "\n")
        self.last_text = said if said.strip() else self.last_text

    def _usage(self, message: dict) -> None:
        mid = response_id(message)
        if mid is not None and mid == self.response:
            return
        self.response = mid or ""
        usage = message.get("usage")
        output = usage.get("output_tokens") if isinstance(usage, dict) else 0
        self.tokens += usage_tokens(usage) + (
            output if isinstance(output, int) and output > 0 else 0
        )

    def _attachment(self, attachment: object, clock: float) -> None:
        if not isinstance(attachment, dict) or attachment.get("type") != "hook_additional_context":
            return
        content = attachment.get("content")
        texts = content if isinstance(content, list) else [content]
        for text in texts:
            if isinstance(text, str) and text.startswith(SAID_PREFIX):
                self.said.append(
                    {
                        "t": clock,
                        "event": str(attachment.get("hookEvent") or ""),
                        "tool_use_id": str(attachment.get("toolUseID") or ""),
                        "text": text,
                    }
                )


def open_transcript(path: str) -> tuple[BinaryIO, int]:
    """The file open for reading, and the bytes to read: a regular file up to MAX_BYTES, else Unreadable.

    Opened without blocking and checked before any read: a FIFO would wait for a writer
    forever and /dev/zero never ends.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(
                f"{path} is {_what(st.st_mode)}, not a transcript file; pass a .jsonl file"
            )
        if st.st_size > MAX_BYTES:
            raise Unreadable(
                f"{path} holds {st.st_size:,} bytes; replay reads transcripts of up to "
                f"{MAX_BYTES >> 20} MB"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st.st_size
    except BaseException:
        os.close(fd)
        raise


def _what(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _text(raw: bytes) -> tuple[str, bool]:
    """A line's text, and whether its bytes are UTF-8 (else read with replacement characters,
    and the hook, parsing the bytes, skips the line: transcript.held_line)."""
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", "replace"), False


def _lines(fh: BinaryIO, size: int) -> Iterator[tuple[bytes, int]]:
    """Each line of the first `size` bytes, ending in a newline, and the bytes read so far.

    Only what the file held when opened: a live transcript keeps growing.
    """
    done = 0
    while done < size:
        raw = fh.readline(size - done)
        if not raw:
            return
        done += len(raw)
        yield (raw if raw.endswith(b"\n") else raw + b"\n"), done


def replay(
    path: str, cfg: dict | None = None, progress: Callable[[int, int], None] | None = None
) -> dict:
    """The timeline of what metacog would have said over one recorded transcript.

    `cfg`: the effective settings, written as the config of the replay's temporary home;
    without it the hook runs on its defaults. The file is read as a stream of lines, each
    fed to the hook as soon as it is in the scratch transcript; `progress` gets the bytes
    read and the bytes to read. fsutil.Unreadable (an OSError and a ValueError) for anything but a regular file
    of at most MAX_BYTES.
    """
    fh, size = open_transcript(path)
    with fh:
        return _replay(path, fh, size, cfg, progress)


class _Pass:
    """One replay's records as the hook is driven: the calls as the senses saw them, what it
    said, where; `fire` hands it one payload."""

    def __init__(self, timeline: _Timeline, scratch: str, state_dir: str) -> None:
        self.timeline, self.scratch, self.state_dir = timeline, scratch, state_dir
        self.signals: list[dict] = []
        self.calls: list[dict] = []
        self.by_id: dict[str, int] = {}  # tool_use id -> index in calls, to place what was said
        self.tool_calls = 0
        self.fired: dict = {}  # the senses' counts after the last call: the next one's "before"

    def fire(self, payload: dict) -> None:
        calls, by_id = self.calls, self.by_id
        payload["transcript_path"] = self.scratch
        now = payload.pop("_ts")
        after = payload.pop("_after", None)  # a batch's: the call it is told after
        event = Event(payload)
        tool = payload["hook_event_name"].startswith("PostToolUse")
        sent = event.size = _sent(payload, event if tool else None)
        if tool:
            self.tool_calls += 1
            record = {**payload, "_ts": now}  # before the hook shares its values
        body = _handle(event, self.state_dir, now)
        if tool:
            _record(calls, by_id, record, self.timeline, sent, _felt())
            _read_back(calls)
        else:
            _read_back(calls, [by_id[c] for c in _ids(payload) if c in by_id])
        if not body:
            return
        before, self.fired = self.fired, _fired(self.state_dir)
        senses = [s for s in self.fired if self.fired[s] > before.get(s, 0)] or ["note"]
        stop = payload["hook_event_name"] == "Stop"
        signal = {
            "call": self.tool_calls,
            "sense": "turn-end" if stop else "+".join(senses),
            "text": (body.get("hookSpecificOutput") or {}).get("additionalContext", ""),
            "person": body.get("systemMessage", ""),
            "at": by_id.get(after, len(calls) - 1) if after else len(calls) - 1,
            "main": self.timeline.main_calls,
            "t": now,
        }
        if after:
            signal["after"] = after  # said at a batch's end: after its last call
        if stop:
            signal["turn"] = len(self.timeline.ends) - 1  # placed at its turn's end
        self.signals.append(signal)


def _replay(
    path: str,
    fh: BinaryIO,
    size: int,
    cfg: dict | None,
    progress: Callable[[int, int], None] | None,
) -> dict:
    timeline = _Timeline()
    said: list[dict] = []
    saved = {k: os.environ.get(k) for k in ("METACOG_HOME",)}
    with (
        tempfile.TemporaryDirectory(prefix="metacog-replay-", dir=_memory_dir()) as home,
        _held(),
    ):
        os.environ["METACOG_HOME"] = home
        try:
            _write_config(
                os.path.join(home, "config", "config.toml"), {**(cfg or {}), **NO_LEARNING}
            )
            scratch = _scratch_path()
            run = _Pass(timeline, scratch, os.path.join(home, "state"))
            out = transcript.HELD[scratch] = transcript.Held()  # type: ignore[index]
            for raw, done in _lines(fh, size):
                text, utf8 = _text(raw)
                payloads = timeline.feed(text)
                for payload in timeline.ahead:  # batches this line ended: told before it is in
                    run.fire(payload)
                timeline.ahead.clear()
                out.append(raw, timeline.entry if utf8 else None)
                for refused in timeline.refused:
                    _record(run.calls, run.by_id, refused, timeline)
                timeline.refused.clear()
                for payload in payloads:  # the hook reads the transcript up to this line
                    run.fire(payload)
                for item in timeline.said:
                    at = run.by_id.get(item["tool_use_id"], len(run.calls) - 1)
                    said.append({**item, "at": at})
                timeline.said.clear()
                if progress and payloads:
                    progress(done, size)
            for payload in timeline.finish():
                run.fire(payload)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    signals, calls, tool_calls = run.signals, run.calls, run.tool_calls
    per_sense = {sense.NAME: 0 for sense in SENSES}
    for signal in signals:
        for sense in signal["sense"].split("+"):
            per_sense[sense] = per_sense.get(sense, 0) + 1
    per_100 = {
        k: round(v * 100 / tool_calls, 2) if tool_calls else 0.0 for k, v in per_sense.items()
    }
    return {
        "file": path,
        "entries": timeline.entries,
        "tool_calls": tool_calls,
        "signals": signals,
        "per_sense": per_sense,
        "per_100_calls": per_100,
        "calls": calls,
        "said": said,
        "prompts": timeline.prompts,
        "turn_ends": timeline.ends,
        "cwd": timeline.cwd,
        "messages": timeline.messages,
        "tokens": sum(c["tokens"] for c in calls) + timeline.tokens,
    }


@contextlib.contextmanager
def _held() -> Iterator[None]:
    """The session's state, the settings, the scratch transcript's lines, parsed, and the
    window's calls read back kept in this process for the replay (state.HELD, config.HELD,
    transcript.HELD, perception.call.STORED), learning off over every settings file
    (config.OVER): the live hook's path is unchanged, and what the senses read is the same."""
    state.HELD, config.HELD, handlers.FELT, transcript.HELD = {}, {}, [], {}
    read_calls.STORED = {}
    config.OVER = NO_LEARNING
    try:
        yield
    finally:
        state.HELD = config.HELD = handlers.FELT = transcript.HELD = read_calls.STORED = None
        config.OVER = {}


def _handle(event: Event, state_dir: str, now: float) -> dict | None:
    """The reply hook.handle would give to the event's payload sent as `event.size` bytes of
    JSON (`_sent`), as the object it would serialize: the payload already is what parsing its
    JSON gives (a transcript line's values and replay's own strings and numbers), so it is
    handed over as it is, and the reply read as it is."""
    if event.size > hook.STDIN_CAP:
        return None
    handler = HANDLERS.get(event.name)
    return handler(event, state_dir, now) if handler else None


SENT_WALK = 256  # values of a payload looked at to bound its JSON's size, else it is written


def _sent(payload: dict, event: Event | None = None) -> int:
    """The payload's size as the hook reads it, sent as JSON (json.dumps, ASCII): whether it is
    over hook.STDIN_CAP, and for a call's payload (`event`), the bytes its context cost is
    capped at (metacog.perception.action.from_event: min(size, context_cost)). Writing the
    JSON to count it was a sixteenth of a replay (profiled, bench_report's history); it is
    written only when its bounds do not settle both. From a walk over its values: each
    string is in the JSON whole, quoted (at least its length + 2 bytes: the sum of those is
    a floor), and no character of it takes more than 12 (an astral character, two \\uXXXX),
    no number, separator or bracket more than the ceiling counts. Where the ceiling is under
    the cap and the floor reaches the call's context cost, the floor gives the same answers
    as the size: the cap is not passed, and min(floor, cost) = cost = min(size, cost)."""
    cost = 0
    if event is not None:
        sent_error = event.error if event.failed else ""
        cost = actions.context_cost(event.tool, event.tool_input, event.response, sent_error)
    floor, ceiling, todo, budget = 0, 2, [payload], SENT_WALK
    while todo:
        value = todo.pop()
        budget -= 1
        if budget < 0:
            return len(json.dumps(payload))
        if isinstance(value, dict):
            ceiling += 2 + sum(12 * len(k) + 6 if isinstance(k, str) else 64 for k in value)
            todo.extend(value.values())
        elif isinstance(value, list):
            ceiling += 2 + 2 * len(value)
            todo.extend(value)
        elif isinstance(value, str):
            floor += len(value) + 2
            ceiling += 12 * len(value) + 2
        elif isinstance(value, int):  # booleans too
            ceiling += value.bit_length() // 3 + 8
        else:
            ceiling += 32  # a float's repr, None, NaN
    if ceiling <= hook.STDIN_CAP and floor >= cost:
        return floor
    return len(json.dumps(payload))


def _memory_dir() -> str | None:
    """A folder in memory for the throwaway home, where there is one (Linux's /dev/shm): the
    hook renames its session state into place after every call, and on a disk those renames
    were a fifth of a replay's time (profiled on a generated history)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _scratch_path() -> str:
    """The transcript path the payloads name: the hook reads it from memory (transcript.HELD),
    nothing is written there. Shaped as the copy on disk once was (a folder of
    TemporaryDirectory's in the temporary folder), so the payloads' sizes are as they were:
    writing and removing a 500 KB copy on this machine's disk waited 2.8 ms a transcript."""
    return os.path.join(
        tempfile.gettempdir(), f"metacog-replay-{os.urandom(4).hex()}", "transcript.jsonl"
    )


def _felt() -> Call | None:
    """The call of the payload the hook just handled, as the hook built it: the last call it
    felt, after the refused calls it read from the transcript (None if it felt none)."""
    felt = handlers.FELT
    return felt[-1][0] if felt and not felt[-1][0].refused else None


def _record(
    calls: list[dict],
    by_id: dict[str, int],
    payload: dict,
    timeline: _Timeline,
    size: int = 0,
    felt: Call | None = None,
) -> None:
    """One call as the senses saw it: the hook's own record of it (`felt`; built here for a
    call the hook did not feel: refused, or a payload over the hook's cap), and the tokens of
    the responses since the previous call (the response that made this call among them)."""
    now = payload["_ts"]
    if felt is not None:
        call = felt
    elif payload.get("hook_event_name"):
        call = actions.from_event(Event(payload, size), now, outcome=False)
    else:  # refused: no hook fired; the hook builds these from the transcript, in the main window
        name = payload.get("tool_name") or "?"
        tool_input = payload.get("tool_input") or {}
        call = actions.make(
            name,
            actions.target_of(name, tool_input, payload.get("cwd") or ""),
            payload.get("error") or "refused",
            0,
            0,
            now,
            refused=True,
            **actions.acted(name, tool_input),
        )
    act = call.record()
    for field in ("result", "size", "path", "turn"):  # the report reads none of them
        act.pop(field, None)
    act["tokens"], timeline.tokens = timeline.tokens, 0
    call_id = payload.get("tool_use_id")
    if isinstance(call_id, str):
        by_id[call_id] = len(calls)
    calls.append(act)


def _read_back(calls: list[dict], batch: list[int] | None = None) -> None:
    """Give the calls the hook just felt what perception read of them (handlers.FELT):
    the call of the payload last, the refused calls it read from the transcript before it.
    They are the latest calls not given theirs yet, matched from the end (a refused call
    the hook did not read, a call it never felt, keeps none). At a batch (`batch`: its calls'
    places in `calls`) the hook felt only refused calls, the batch's own last: they are
    matched to the batch's refused calls not given theirs yet (the calls answered after
    them already were)."""
    felt = handlers.FELT
    if not felt:
        return
    if batch is None:
        places = range(len(calls) - 1, -1, -1)
    else:
        places = [i for i in reversed(batch) if calls[i].get("refused") and "gain" not in calls[i]]
    for i, (_, gain, news, obstacle) in zip(places, reversed(felt), strict=False):
        if "gain" in calls[i]:
            break
        calls[i].update(gain=round(gain, 3), news=news, obstacle=obstacle)
    felt.clear()


def _ids(payload: dict) -> list[str]:
    """A PostToolBatch payload's calls' tool_use ids, in its order."""
    return [c["tool_use_id"] for c in payload.get("tool_calls") or () if "tool_use_id" in c]


def _fired(state_dir: str) -> dict:
    st = state.read(state_dir, "replay") or {}
    return dict((st.get("summary") or {}).get("fired") or {})


def global_settings() -> dict:
    """The person's global settings, read without writing anything (config.load caches into
    the state dir). A transcript's own project settings are the hook's to read, from its cwd:
    the folder the replay runs in is not that session's project."""
    from metacog import config, paths, schema

    values = schema.DEFAULTS
    for path in config.files(paths.config_dir(), ""):
        try:
            values = schema.merge(values, config.parse_toml(path))
        except (OSError, ValueError):  # missing or broken: `metacog doctor` names it
            continue
    return values


def _write_config(path: str, cfg: dict) -> None:
    import tomli_w

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        tomli_w.dump(cfg, fh)
