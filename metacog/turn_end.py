"""The moment of letting go: a turn's final message held against what the session last showed.

At each Bash call and edit the hook keeps what it showed (`observe`: the latest run of each
check, metacog.perception.checks, an edit refused and not made since, a script whose latest
run failed; only what failed, normalized). At Stop (and a subagent's SubagentStop) the final
message (`last_assistant_message`, FACTS.md; the transcript's last text where a payload lacks
it) is read for a sentence that claims success of the very thing a failed check looked at, and
no sentence naming that failure: then one observation is said. A turn end holds the evidence
of its own turn's calls (an earlier turn's end followed the earlier ones). The same evidence is never
said twice, and nothing is said while Claude Code reports a Stop hook already kept the turn
going (`stop_hook_active`). The transcript is not the evidence: at a Stop it may not hold the
turn's last results yet (measured, docs/turn-end.md).

The claim side keeps a small vocabulary, multilingual where it costs nothing (a claim read
wrongly costs a false stop): what a message says of a check is matched through the check's
own words (its program, script, port, file), not through phrases.
"""

from __future__ import annotations

import os
import re

from metacog import transcript
from metacog.fsutil import open_regular, parse_json, read_fd
from metacog.perception import checks, signature
from metacog.perception.act import unheredoc
from metacog.perception.tools import EDIT_TOOLS, REFUSAL_TAG, untagged
from metacog.transcript import content_text, tool_results, tool_uses

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from metacog.event import Event

READ_CAP = 2 * 1024 * 1024  # bytes of the transcript's end read at a turn end
PENDING_CAP = 64  # calls waiting for their results while the end is read
OUTPUT_CAP = 20000  # characters of a result looked at (its end: where runners summarize)
MESSAGE_CAP = 8000  # characters of a final message read
SAID_CAP = 32  # evidence already said, remembered per session
DOC_EXTENSIONS = (".md", ".txt", ".rst", ".adoc")  # an edit of these changes no check's answer

# A sentence that says something works, is done or passes.
_SUCCESS = re.compile(
    r"\b(?:pass(?:es|ed|ing)?|works?|working|success(?:ful(?:ly)?)?|succeed(?:s|ed)?|fixed|"
    r"resolved|complete[ds]?|done|ready|operational|online|up and running|healthy|verified|"
    r"green)\b|[\u2705\u2714\u2713\U0001f389\U0001f680]|成功|通过|完成|正常|修复|已解决|完了|動作|解決",
    re.IGNORECASE,
)
# A sentence that names a failure: the message acknowledges what the check showed.
_FAILURE = re.compile(
    r"\b(?:fail(?:s|ed|ing|ures?)?|errors?|broken|still|not|n't|unable|cannot|issues?|problems?|"
    r"blocked|pending|remaining|skipped|except|but|however|until)\b|n't\b|[\u274c\u26a0]|"
    r"失败|错误|无法|仍|问题|未|失敗|エラー|まだ|できません|問題",
    re.IGNORECASE,
)
# What a look at a service or a process can contradict: a claim that it runs (a look that
# found nothing running says nothing against "the job is complete").
_RUNNING = re.compile(
    r"\b(?:running|runs|online|operational|active|live|listening|serving|healthy|started|"
    r"alive|(?:is|are|'s|all) up)\b|运行中|正在运行|在运行|已启动|启动成功|在线|稼働|起動し|実行中",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|[\n。！？]+")


class Evidence:
    """What the session last showed of one thing: a check that failed, a refused edit."""

    __slots__ = ("after_edit", "command", "edited", "key", "kind", "line", "run", "words")

    def __init__(self, kind: str, key: str, command: str, line: str, words: tuple) -> None:
        self.kind = kind  # a checks kind, "edit" (refused, not redone) or "command"
        self.key = key  # what "the same check" means: its latest run replaces the earlier
        self.command = command  # what to quote: the command, or the refused edit's file
        self.line = line  # what its result said (then, once it is evidence, the line that failed)
        self.edited = False  # an edit came after it: the latest run, not after the last edit
        self.after_edit = False  # an edit came before it: the run after the last edit
        self.run = 0  # which run of the session's commands it was (a rerun is new evidence)
        self.words = words  # what a message names when it speaks of it


def read_end(path: str, cap: int = READ_CAP) -> list[bytes]:
    """The transcript's last `cap` bytes as whole lines ([] for a path that is not a regular
    file): Claude Code's file, followed through a symlink, never a FIFO or a device."""
    if not path:
        return []
    held = transcript.HELD.get(path) if transcript.HELD is not None else None
    if held is not None:  # replay's transcript, in memory (it keeps the last READ_CAP bytes)
        start = max(0, held.size - cap, held.base)
        data = held.since(start)
        return _whole(data, start)
    try:
        fd = open_regular(path, follow=True)
    except (OSError, ValueError):
        return []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - cap)
        os.lseek(fd, start, os.SEEK_SET)
        data = read_fd(fd, size - start)
    except OSError:
        return []
    finally:
        os.close(fd)
    return _whole(data, start)


def _whole(data: bytes, start: int) -> list[bytes]:
    """The lines of what was read from `start` on: a cut read's first is a part."""
    lines = data.split(b"\n")
    return lines[1:] if start else lines  # the first line of a cut read is a part


class Steps:
    """The calls the transcript's end shows, with their results, and the last text said."""

    __slots__ = ("calls", "message")

    def __init__(self) -> None:
        self.calls: list[
            tuple[str, dict, str, bool, object]
        ] = []  # tool, input, text, error, result
        self.message = ""


def steps(lines: list[bytes], sidechain: bool = False) -> Steps:
    """The calls of the main thread (or of a subagent's own transcript, `sidechain`), in the
    order of their results, and the last assistant text."""
    out = Steps()
    pending: dict[str, tuple[str, dict]] = {}
    for raw in lines:
        if b'"tool_use' not in raw and b'"assistant"' not in raw:
            continue
        try:
            entry = parse_json(raw)
        except ValueError:
            continue
        if not isinstance(entry, dict) or (entry.get("isSidechain") and not sidechain):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        if entry.get("type") == "assistant":
            said = content_text(
                [
                    b
                    for b in message.get("content") or ()
                    if isinstance(b, dict) and b.get("type") == "text"
                ]
                if isinstance(message.get("content"), list)
                else message.get("content"),
                "\n",
            )
            if said.strip():
                out.message = said
            for block in tool_uses(message):
                tool_input = block.get("input")
                pending[block["id"]] = (
                    str(block.get("name") or "?"),
                    tool_input if isinstance(tool_input, dict) else {},
                )
                if len(pending) > PENDING_CAP:
                    del pending[next(iter(pending))]
        elif entry.get("type") == "user":
            for block in tool_results(message):
                call = pending.pop(str(block.get("tool_use_id")), None)
                if call is None:
                    continue
                text = content_text(block.get("content"), "\n")[-OUTPUT_CAP:]
                out.calls.append(
                    (
                        call[0],
                        call[1],
                        text,
                        block.get("is_error") is True,
                        entry.get("toolUseResult"),
                    )
                )
    return out


def _failing_line(error: str) -> str:
    """The line of a failure that says what failed (the runner's named problem first); '' when
    no line says anything (a banner of box characters, colour codes alone)."""
    from metacog.perception import symptoms
    from metacog.perception.action import plain

    error = untagged(str(plain(error)))
    said = checks.says_failed(error)
    if said:
        return said
    found = symptoms.problems(error)
    if found:
        return str(found[0][3])
    # A script's own words: where it stopped is its last line that says anything.
    lines = [line.strip() for line in error.splitlines() if any(c.isalpha() for c in line)]
    said_lines = [line for line in lines if not line.startswith("Exit code")]
    return (said_lines or lines or [""])[-1][:160]


def evidence(calls: list[tuple[str, dict, str, bool, object]]) -> list[Evidence]:
    """What the calls last showed that failed (`observe` over each, then `found`)."""
    memory: dict = {}
    for call in calls:
        observe(memory, *call)
    return found(memory)


KEPT = 24  # checks remembered per agent: the latest runs
COMMAND_KEEP = 300  # characters of a failed check's command kept (it is quoted shorter)
LINE_KEEP = 160  # characters of its failing line kept, normalized (signature.clean)


def observe(
    memory: dict, tool: str, tool_input: dict, text: str, is_error: bool, result: object
) -> None:
    """Fold one call into `memory` (an agent's evidence, kept in the session's state as JSON):
    the latest run of each check (a later edit does not make a script's or a service's failure
    pass: only its next run says), the refused edits never made since, the scripts whose latest
    run failed. Only what failed is kept: its command, and its failing line normalized."""
    latest = {k: _loaded(k, v) for k, v in _records(memory).items()}
    edits = memory.get("edits") if isinstance(memory.get("edits"), int) else 0
    runs = (memory.get("runs") if isinstance(memory.get("runs"), int) else 0) + 1
    memory["runs"] = runs  # calls observed: which turn a piece of evidence came in
    if tool in EDIT_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or ""
        name = path.rsplit("/", 1)[-1] if isinstance(path, str) else ""
        if is_error and text.lstrip().startswith(REFUSAL_TAG):
            if name:
                stem = name.split(".", 1)[0].lower()
                ev = Evidence("edit", "edit:" + name, name, text, (name.lower(), stem))
                ev.run = runs
                _put(latest, ev)
        elif not is_error:
            latest.pop("edit:" + name, None)
            if not name.endswith(DOC_EXTENSIONS):
                _edited(latest)
                memory["edits"] = edits + 1
    else:
        command = tool_input.get("command") if tool == "Bash" else None
        if isinstance(command, str) and command.strip() and not text.startswith(PERSON):
            ev = _ran(latest, command, text, is_error, result)
            if ev is not None:
                ev.after_edit, ev.run = edits > 0, runs
    memory["latest"] = {
        k: [ev.kind, ev.command, ev.line, list(ev.words), ev.edited, ev.after_edit, ev.run]
        for k, ev in list(latest.items())[-KEPT:]
        if ev is not None
    }


def observe_event(memory: dict, event: Event) -> None:
    """Fold one hook call (a Bash call or an edit) into an agent's evidence."""
    response = event.response
    text = event.error
    if not event.failed and isinstance(response, dict):
        text = "\n".join(
            v for v in (response.get("stdout"), response.get("stderr")) if isinstance(v, str)
        )
    observe(memory, event.tool, event.tool_input, text, event.failed, response)


def found(memory: dict) -> list[Evidence]:
    """The evidence an agent's memory holds, the latest first."""
    return [_loaded(k, v) for k, v in reversed(_records(memory).items())]


def _records(memory: dict) -> dict:
    latest = memory.get("latest")
    if not isinstance(latest, dict):
        return {}
    return {
        k: v
        for k, v in latest.items()
        if isinstance(v, list)
        and len(v) in (6, 7)  # 6: kept before runs were numbered
        and all(isinstance(x, str) for x in v[:3])
        and isinstance(v[3], list)
    }


def _loaded(key: str, record: list) -> Evidence:
    ev = Evidence(record[0], key, record[1], record[2], tuple(str(w) for w in record[3]))
    ev.edited, ev.after_edit = record[4] is True, record[5] is True
    ev.run = record[6] if len(record) == 7 and isinstance(record[6], int) else 0
    return ev


def _put(latest: dict, ev: Evidence) -> None:
    """The latest run of its check: last in the order, its failing line read now (its output
    is not kept)."""
    latest.pop(ev.key, None)
    ev.line = signature.clean(_failing_line(ev.line))[:LINE_KEEP]
    if ev.line:
        latest[ev.key] = ev


def _ran(latest: dict, command: str, text: str, is_error: bool, result: object) -> Evidence | None:
    """One shell command folded into the evidence: its run is the latest of its check (the
    new evidence where it failed, returned); what it changed, changed."""
    if not is_error:
        for key in [k for k in latest if k.startswith("edit:") and k[5:] in command]:
            del latest[key]  # written another way (`cat > f`, `cp`, `sed -i`)
        if checks.starts(command):
            _started(latest)
    kind, segment = checks.kind(command)
    if kind:
        named = checks.first_words(segment)
        if kind in checks.LOOKS:  # `ps aux | grep vite` looks at vite
            named = list(checks.words(segment)) or named
        elif kind == checks.TEST:  # `cargo test`, with whatever flags and variables
            named = [checks.runner(command) or checks.runner(segment) or " ".join(named)]
        key, words = f"{kind}:{' '.join(named)}", checks.words(unheredoc(command))
    else:
        # A command that checks nothing is evidence only as the script it runs: a message
        # names that (`./run-agents.sh`), not a program on the PATH; or as the result it
        # promised (`rm … && echo "Cleaned temporary files"`) and never printed.
        script = checks.script_name(command)
        if not script or checks.asks(command):
            promise = checks.promised(command)
            if not promise or not is_error:
                latest.pop("promise:" + promise, None)  # it printed it this time
                return None
            kind, key, words = PROMISE, "promise:" + promise, (promise,)
        else:
            kind, key, words = "command", "command:" + script, checks.script_words(script)
        segment = command
    error, about = _failure(command, segment, text, is_error, result, kind)
    latest.pop(key, None)
    if not error:
        return None
    if about:  # a look that found some of what it looked for: it speaks of the rest alone
        kind, words = checks.PROCESS, about
    kept = " ".join(unheredoc(command).split())[:COMMAND_KEEP]  # no file's text kept
    _put(latest, Evidence(kind, key, kept, error, words))
    return latest.get(key)


# A failed command's own word for what it would have done (`&& echo "✅ Cleaned temporary
# files"`): a final message that says it again claims what never happened.
PROMISE = "promise"


def _failure(
    command: str, segment: str, text: str, is_error: bool, result: object, kind: str
) -> tuple[str, tuple[str, ...]]:
    """What a shell call's result says failed ('' for nothing), and what it is about where
    that is less than the whole check (a look that found some things up, others down): its
    error, a runner's failure under exit 0 (metacog.perception.hidden), a script's own
    failure line, a fallback `|| echo` that printed, a service found down."""
    from metacog.perception.action import plain
    from metacog.perception.hidden import hidden_failure

    if is_error:
        return ("" if text.startswith(GUARDS) else text), ()
    if kind in checks.LOOKS:
        part = checks.partly_down(segment, str(plain(text)))
        if part[0]:
            return part
    response = result if isinstance(result, dict) else {"stdout": text}
    error = hidden_failure("Bash", {"command": command}, response)
    if not error and not checks.asks(segment):
        error = checks.says_failed(text) or checks.fell_back(command, text)
    if not error and kind in checks.LOOKS:
        error = checks.down(segment, text)
    return error, ()


# Runners list what to fix: an edit after one is taken for the fix, and its failure no longer
# stands (issue 40's readers did not count a lint run, then its fixes, as contradicted).
# The person stopped the call: no answer of the world.
PERSON = ("[Request interrupted", "The user doesn't want to proceed")
# The person's or the settings' no, not the world's answer (Claude Code's permission text).
GUARDS = ("Permission to use", "Permission for this action", "<tool_use_error>")
RUNNERS = (checks.TEST, checks.BUILD, checks.LINT)


def _edited(latest: dict) -> None:
    """An edit came after these runs: a runner's failure no longer stands; a script's or a
    service's does, and says it was not run again since."""
    for key, ev in latest.items():
        if ev is not None and ev.kind in RUNNERS:
            latest[key] = None
        elif ev is not None and ev.kind != "edit":
            ev.edited = True


def _started(latest: dict) -> None:
    """Something was started: what a look at a service showed before no longer stands."""
    for key, ev in latest.items():
        if ev is not None and ev.kind in checks.LOOKS:
            latest[key] = None


def _names(sentence: str, ev: Evidence) -> bool:
    """Whether a sentence speaks of the thing the evidence is about (of a promise: says
    each of its words)."""
    lowered = sentence.lower()
    if ev.kind == PROMISE:
        return all(_has(lowered, word) for word in " ".join(ev.words).split())
    return any(_has(lowered, word) for word in (*checks.KIND_WORDS.get(ev.kind, ()), *ev.words))


def _has(lowered: str, word: str) -> bool:
    """Whether a lower-cased sentence holds the word (an ASCII one whole)."""
    if not word:
        return False  # an edit of no file names nothing (and "" is found everywhere)
    at = lowered.find(word)
    while at >= 0:
        end = at + len(word)
        if not word.isascii() or (
            (at == 0 or not lowered[at - 1].isalnum())
            and (end == len(lowered) or not lowered[end].isalnum())
        ):
            return True
        at = lowered.find(word, at + 1)
    return False


def contradicted(message: str, found: list[Evidence]) -> Evidence | None:
    """The evidence the final message contradicts: a sentence claims success of what it looked
    at, and no sentence names that failure. None when the message claims nothing of it."""
    sentences = [s for s in _SENTENCES.split(message[:MESSAGE_CAP]) if s.strip()]
    for ev in found:
        named = [s for s in sentences if _names(s, ev)]
        if any(_FAILURE.search(s) for s in named):
            continue  # it says what failed
        if named and ev.kind == PROMISE:
            return ev  # saying the promise again is the claim
        claims = _RUNNING if ev.kind in checks.LOOKS else _SUCCESS
        if any(claims.search(s) for s in named):
            return ev
    return None


def observation(ev: Evidence, subagent: bool = False) -> str:
    """One line naming the check, its result and asking what is true now (<= 300 characters)."""
    whose = "your report" if subagent else "your final message"
    line = _short(ev.line, 110)
    if ev.kind == "edit":
        return (
            f"metacog: your edit of `{_short(ev.command, 60)}` was refused (`{line}`) and not "
            f"made since, yet {whose} reads as done. What is true now?"
        )
    if ev.kind == PROMISE:
        return (
            f"metacog: the last `{_short(ev.command, 80)}` failed (`{line}`): its "
            f'"{_short(ev.words[0], 60)}" never printed, yet {whose} says so. What is true now?'
        )
    when = (
        "not run again since your last edit"
        if ev.edited
        else "after your last edit"
        if ev.after_edit
        else "its latest run"
    )
    said = "showed" if ev.kind in checks.LOOKS else "failed"
    return (
        f"metacog: the last `{_short(ev.command, 80)}` ({when}) {said}: `{line}`, yet {whose} "
        "reads as done. What is true now?"
    )


def _short(text: str, cap: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= cap else text[: cap - 1] + "…"


def judge(path: str, message: str, sidechain: bool = False) -> Evidence | None:
    """The evidence the turn's final message contradicts, read from the transcript at `path`
    alone (replay's tools; the hook keeps its own, `memory`); `message` empty: the transcript's
    last text."""
    seen = steps(read_end(path), sidechain)
    message = message or seen.message
    found = evidence(seen.calls)
    return contradicted(message, found) if found and message.strip() else None


AGENTS_KEPT = 8  # subagents whose evidence a session keeps at once


def memory(st: dict, agent: str) -> dict:
    """An agent's evidence in the session's state ('' for the main agent)."""
    kept = st.get("turn_end")
    if not isinstance(kept, dict):
        kept = st["turn_end"] = {}
    agents = kept.get("agents")
    if not isinstance(agents, dict):
        agents = kept["agents"] = {}
    mine = agents.get(agent)
    if not isinstance(mine, dict):
        mine = agents[agent] = {}
        for old in [a for a in agents if a][:-AGENTS_KEPT]:
            del agents[old]
    return mine


def last_message(path: str, sidechain: bool = False) -> str:
    """The last text the transcript holds (where a payload carries no final message)."""
    return steps(read_end(path), sidechain).message


def holds(message: str, memory: dict) -> Evidence | None:
    """The evidence in `memory` the final message contradicts, None for none: what this
    turn's runs showed (a run an earlier turn's end already followed is that turn's
    business; a final message recapping the session names it without claiming it anew).
    A refused edit never made stands until it is made."""
    before = memory.get("ended_at") if isinstance(memory.get("ended_at"), int) else 0
    runs = memory.get("runs") if isinstance(memory.get("runs"), int) else 0
    memory["ended_at"] = runs
    kept = [ev for ev in found(memory) if ev.run > before]
    return contradicted(message, kept) if kept and message.strip() else None


def said_before(st: dict, ev: Evidence) -> bool:
    """Whether this evidence was said already in the session; remembers it if not."""
    import zlib

    # The same run said once; a later run that shows the same again is evidence again.
    mark = zlib.crc32(f"{ev.key}\x00{ev.line}\x00{ev.run}".encode("utf-8", "replace"))
    memory = st.get("turn_end")
    memory = memory if isinstance(memory, dict) else {}
    said = memory.get("said")
    said = [s for s in said if isinstance(s, int)] if isinstance(said, list) else []
    if mark in said:
        return True
    said.append(mark)
    memory["said"] = said[-SAID_CAP:]
    memory["count"] = (memory.get("count") if isinstance(memory.get("count"), int) else 0) + 1
    st["turn_end"] = memory
    return False
