"""What one tool call was, reduced to the few fields the senses need: its Call
(metacog.perception.call).

Payload fields are read tolerantly: a missing or wrongly typed field is absent, not a
crash. Nothing raw is kept: the target is a short normalized form, the result a
checksum, an error a normalized signature (metacog.perception.signature).
"""

from __future__ import annotations

import json
import os
import re
import zlib

from metacog.event import mapping, text, words
from metacog.perception import novelty
from metacog.perception.call import PERSON, Call
from metacog.perception.tools import (
    DELEGATING_TOOLS,
    EDIT_TOOLS,
    FILE_TOOLS,
    POLLING_TOOLS,
    REFUSAL_TAG,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.event import Event

SCHEMA = 1
TARGET_CAP = 120
# Keys that change between two identical calls (timings), left out of the result checksum.
_VOLATILE = ("durationMs", "duration_ms", "elapsed", "elapsedMs", "timestamp")
OUTPUT_KEEP = 4000  # characters of a Bash result's stdout and stderr compared (the ends)

# A terminal's escape sequences: colour and cursor codes (CSI `ESC [ … letter`), a title or
# a link (OSC `ESC ] … BEL`), the short ones (`ESC ( B`, `ESC =`). How a tool paints its
# output, not what it says: left in, `\x1b[90m 428 |\x1b[39m` is no quoted source line,
# `\x1b[2m2026-…Z` no time, and a coloured `a.ts:12:5` points nowhere, so one failure met
# again looked new.
# Linear: each class of a CSI is disjoint from the next; an OSC stops at the next ESC, or at
# the end of its line where its terminator is missing (the lines after it are output).
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")


def plain(value: object, depth: int = 1) -> object:
    """A tool's text without a terminal's escape sequences: a string, or a result's strings at
    its top and `depth` levels in (a polled job's `task.output`), the rest as it was."""
    if isinstance(value, str):
        return _ESCAPES.sub("", value) if "\x1b" in value else value
    if depth < 0 or not isinstance(value, dict):
        return value
    changed = {k: new for k, v in value.items() if (new := plain(v, depth - 1)) is not v}
    return {**value, **changed} if changed else value


CODE_EXTENSIONS = frozenset(
    (
        "py",
        "pyi",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "go",
        "rs",
        "java",
        "kt",
        "kts",
        "scala",
        "rb",
        "php",
        "c",
        "h",
        "cc",
        "cpp",
        "cxx",
        "hpp",
        "cs",
        "swift",
        "m",
        "mm",
        "ex",
        "exs",
        "erl",
        "hs",
        "ml",
        "clj",
        "lua",
        "dart",
        "zig",
        "nim",
        "vue",
        "svelte",
        "sol",
        "templ",
    )
)


def is_code(path: str) -> bool:
    """Docs, config and data edits do not call for a test run; code edits do."""
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[-1].lower() in CODE_EXTENSIONS


def squash(value: str, cap: int = TARGET_CAP) -> str:
    """One line, runs of white space folded, capped: a display form, never raw content. A
    value cut at the cap ends with what the whole one sums to: two long ones alike in their
    first words (the same `cd <a long folder> &&` before each command, one API's address
    before each query) are other calls."""
    value = " ".join(value.split())
    if len(value) <= cap:
        return value
    return f"{value[: cap - 10]}…#{zlib.crc32(value.encode('utf-8', 'replace')):08x}"


def file_of(tool_input: dict) -> str:
    return (
        text(tool_input, "file_path")
        or text(tool_input, "notebook_path")
        or text(tool_input, "path")
    )


def relative(path: str, cwd: str) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def target_of(tool: str, tool_input: dict, cwd: str) -> str:
    """The normalized thing a call acts on: a file, a command, a pattern."""
    if tool in FILE_TOOLS:
        target = relative(file_of(tool_input), cwd)[:TARGET_CAP]
        offset, limit = tool_input.get("offset"), tool_input.get("limit")
        if tool == "Read" and (offset or limit):
            target += f"@{offset or 0}+{limit or ''}"  # paging through a file is not re-reading it
        return target
    if tool == "Bash":
        return squash(text(tool_input, "command"))
    if tool in ("Grep", "Glob"):
        where = relative(text(tool_input, "path"), cwd)
        return squash(f"{text(tool_input, 'pattern')} {where}".strip())
    if tool in ("WebFetch", "WebSearch"):
        return squash(text(tool_input, "url") or text(tool_input, "query"))
    if tool == "Task" or tool == "Agent":
        return squash(text(tool_input, "description"))
    try:
        return squash(json.dumps(tool_input)) if tool_input else ""
    except (TypeError, ValueError, RecursionError):  # NaN or infinity in a hostile payload
        return "?"


def acted(tool: str, tool_input: dict) -> dict:
    """What a shell command is (metacog.perception.act), as the Call's fields `act`, `does`
    and `own`, and `intent` (what it is for, kept by `make` only for the person's no), read
    once from its whole text: {} for any other tool."""
    command = tool_input.get("command") if tool == "Bash" else None
    if not isinstance(command, str):
        return {}
    from metacog.perception.act import read

    act = read(command)
    # Sent to the background (Bash's run_in_background, or a trailing `&`): it started; how it
    # ends is for a later look at its output.
    background = act.background or tool_input.get("run_in_background") is True
    does = "w" * act.writes + "t" * act.tests + "s" * act.waits + "b" * background
    return {"act": act.key, "does": does, "own": novelty.own(act.says), "intent": act.aim}


def checksum(value: object) -> int:
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in _VOLATILE}
    try:
        blob = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        blob = repr(value)
    return zlib.crc32(blob.encode("utf-8", "replace"))


def output_checksum(response: object) -> int:
    """A Bash result's checksum without what changes between two runs of the same command
    (a new pid, a time, a temp path, a background shell's id): restarting a server that
    prints its pid is the same outcome each time."""
    if not isinstance(response, dict):
        return checksum(response)
    from metacog.perception.signature import clean

    half = OUTPUT_KEEP // 2  # both ends: a listing changes at its top, a log at its bottom
    parts = [
        clean(out[:half] + out[-half:] if len(out) > OUTPUT_KEEP else out)
        for out in (words(response, key) for key in ("stdout", "stderr"))
    ]
    return zlib.crc32("\x00".join(parts).encode("utf-8", "replace"))


def failure_text(tool_response: object) -> str:
    """The error a PostToolUse response reports, if it reports one ('' otherwise).

    Claude Code 2.1.328 sends failures as PostToolUseFailure; older versions and some
    tools report them inside a successful PostToolUse (FACTS.md).
    """
    if isinstance(tool_response, dict):
        if tool_response.get("is_error") is True or tool_response.get("success") is False:
            return (
                text(tool_response, "error")
                or text(tool_response, "message")
                or "tool reported failure"
            )
        if tool_response.get("interrupted") is True:
            return ""
        err = tool_response.get("error")
        if isinstance(err, str) and err:
            return err
    elif isinstance(tool_response, str) and tool_response.startswith(("Error:", REFUSAL_TAG)):
        return tool_response
    return ""


def context_cost(tool: str, tool_input: dict, response: object, error: str) -> int:
    """Roughly how many characters this call put into the agent's context.

    Not the payload size: an Edit's payload carries the whole original file, which
    the model never sees again; a Read's carries the content, which it does.
    """
    if error:
        return len(error)
    if isinstance(response, str):
        return len(response)
    if not isinstance(response, dict):
        return 0
    if tool == "Read":
        return len(text(mapping(response, "file"), "content")) or len(text(response, "content"))
    if tool == "Bash":
        return len(text(response, "stdout")) + len(text(response, "stderr"))
    if tool in ("Edit", "MultiEdit"):
        return len(text(tool_input, "new_string")) + len(text(tool_input, "old_string")) + 200
    if tool == "Write":
        return len(text(tool_input, "content"))
    if tool in ("Grep", "Glob"):
        names = response.get("filenames")
        listed = (
            sum(len(n) + 1 for n in names if isinstance(n, str)) if isinstance(names, list) else 0
        )
        return listed + len(text(response, "content"))
    try:
        return len(json.dumps(response))
    except (TypeError, ValueError, RecursionError):
        return 0


def found_nothing(tool: str, tool_input: dict, response: object, error: str) -> bool:
    """Whether a search or listing answered "nothing": Grep or Glob with no file or line, a
    Read of a file that does not exist, or a shell search that printed nothing (grep's exit 1
    with no output included), or whose whole output is what its sayers print whatever the
    questions before them answered."""
    if tool == "Read":
        # A guessed path that is not there is an answer too: the same guess again, with
        # nothing written between, is asking what the world already answered.
        return error.startswith("File does not exist")
    if tool in ("Grep", "Glob"):
        if not isinstance(response, dict) or error or response.get("timedOut"):
            return False
        files, lines = response.get("numFiles"), response.get("numLines")
        return (files == 0 or lines == 0) and not response.get("content")
    if tool != "Bash" or not isinstance(tool_input.get("command"), str):
        return False
    from metacog.perception.hidden import EMPTY, own_words
    from metacog.perception.shell import SEEKERS, first_word

    command = tool_input["command"]
    if not error and isinstance(response, dict):
        # Questions that printed nothing but the command's own words (`…; echo "Scan
        # complete"` and only that, a search's fallback: `… | grep x || echo "none"`): the
        # world answered nothing.
        output = "\n".join(
            v for v in (response.get("stdout"), response.get("stderr")) if isinstance(v, str)
        )
        if own_words(command, output) == EMPTY:
            return True
    head = first_word(command)
    if head not in SEEKERS or " -q" in command or "--quiet" in command:
        return False  # `grep -q` says it found something by printing nothing
    if head == "git" and not any(f"git {verb}" in command for verb in ("grep", "ls-files", "log")):
        return False  # `git add`, `git fetch`: nothing printed is not nothing found
    if error:
        return error.strip() == "Exit code 1"
    return (
        isinstance(response, dict)
        and not str(response.get("stdout") or "").strip()
        and not str(response.get("stderr") or "").strip()
    )


HIDDEN_CAP = 20000  # characters of a hidden failure's output kept as its error: its end


def from_event(event: Event, now: float, outcome: bool = True) -> Call:
    """The call's record from a PostToolUse or PostToolUseFailure payload; `outcome=False`
    leaves a passing call's output unsummed (`result` 0) and its lines unread, for a record
    that needs neither (summing a Bash output was a fifth of a replay's time, profiled)."""
    tool, tool_input, response = event.tool, event.tool_input, plain(event.response)
    if event.failed:
        error, result = plain(event.error), 0
    else:
        error = failure_text(response)
        if not error and tool in ("Bash", *POLLING_TOOLS, *DELEGATING_TOOLS):
            from metacog.perception.hidden import hidden_failure

            error = hidden_failure(tool, tool_input, response)
            if error and tool == "Bash":
                # It exited 0 and its output says it failed (a build piped into `head`): the
                # failure is the whole output, as a failed command's would be, not the line
                # that told (another error under the same banner is another failure).
                error = novelty.answer_text(tool, response).strip()[-HIDDEN_CAP:] or error
        if not outcome:
            result = 0
        else:
            result = output_checksum(response) if tool == "Bash" else checksum(response)
    # What the model was sent, escape codes and all (they take room in its context too): a
    # passing call's response, whatever failure it shows.
    sent = event.error if event.failed else ""
    cost = min(event.size, context_cost(tool, tool_input, event.response, sent))
    target = target_of(tool, tool_input, event.cwd)
    act = acted(tool, tool_input)
    polled = tool in POLLING_TOOLS and isinstance(response, dict)
    if polled and not error and response.get("status") == "running":
        # A background job still running: polling it is waiting.
        return make(tool, target, "", result, cost, now, event.agent, waiting=True)
    if found_nothing(tool, tool_input, response, error):
        # An empty answer is an answer (`grep` says it with exit 1), not a failure.
        prints = (novelty.nothing(tool, tool_input),)
        return make(tool, target, "", 0, cost, now, event.agent, empty=True, prints=prints, **act)
    path = file_of(tool_input) if tool in FILE_TOOLS else ""
    prints: tuple = ()
    named: tuple = ()
    if outcome:  # a record that needs no reading (replay's, of a call the hook did not feel)
        if error:
            answer = ""
        elif tool in EDIT_TOOLS:
            answer = novelty.written(tool, tool_input)  # shown to the agent: it wrote it
        else:
            answer = novelty.answer_text(tool, response)
        read_prints, read_named = novelty.read(tool, tool_input, answer, error)
        prints, named = tuple(read_prints), tuple(read_named)
    return make(
        tool, target, error, result, cost, now, event.agent, path, prints=prints, named=named, **act
    )


def make(
    tool: str,
    target: str,
    error: str,
    result: int,
    size: int,
    now: float,
    agent: str = "",
    path: str = "",
    **more: object,
) -> Call:
    """The call's record: an error becomes its signature, its kind of mistake and the problems
    it names (metacog.perception.symptoms), and the result's checksum the failure's own; `more`
    sets the other fields of the Call (empty, waiting, refused, turn, prints, named, act…)."""
    sig, mistake, problems = "", "", None
    if error:
        from metacog.perception import symptoms
        from metacog.perception.signature import signature

        sig = signature(error)
        result = zlib.crc32(sig.encode())
        mistake = symptoms.mistake(tool, error)
        if not mistake or mistake in symptoms.WITH_PROBLEMS:
            problems = tuple(tuple(p) for p in symptoms.problems(error))
            # The same failure again means the same problems, not only the same banner.
            places = " ".join(str(p[1]) for p in problems)
            result = zlib.crc32(f"{sig} {places}".encode())
    if mistake not in PERSON:
        more.pop("intent", None)  # what it was for is kept only where the person said no to it
    return Call(
        tool,
        target,
        ok=not error,
        result=result,
        size=size,
        ts=round(now, 3),
        sig=sig,
        mistake=mistake,
        problems=problems,
        agent=agent[:64],
        path=os.path.normpath(path)[:512] if path else "",
        **more,  # type: ignore[arg-type]
    )
