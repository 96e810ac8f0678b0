"""Nociception: the same error again and again, escalating while it persists."""

from __future__ import annotations

from metacog.action import EDIT_TOOLS, FILE_TOOLS
from metacog.senses import vestibular
from metacog.senses.signal import INTERRUPT, OBSERVE, TEXT_CAP, Signal, forget, memory, peek, short
from metacog.senses.signal import turn as turn_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.nervous import Context

NAME = "nociception"


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    if action.get("ok", True):
        if mem.get("count") and _retried_ok(mem, action):
            _resolve(mem, action, ctx)  # the very call that failed now works
            mem.update(sig="", count=0, edits=0, level=0)
        elif action["tool"] in EDIT_TOOLS and mem.get("count"):
            mem["edits"] = mem.get("edits", 0) + 1  # fixes between attempts keep the streak
        return None
    if vestibular.asked_repeat(win):
        return None  # the person asked for the runs ("run it 5 times"): failures are the answer
    sig = identity(action)
    # One model turn is one attempt: a parallel batch of the same failing call is not a streak.
    turn = turn_of(action, win)
    if sig != mem.get("sig") and not _same_exit(mem, action):
        if mem.get("count", 0) >= cfg["observe_at"]:
            _resolve(mem, action, ctx)
        mem.update(
            sig=sig,
            count=1,
            edits=0,
            level=0,
            tool=action["tool"],
            target=action["target"],
            path=action.get("path", ""),
            exit=_exit(action),
            turn=turn,
        )
        return None
    if mem.get("turn") == turn:
        return None
    mem["count"] = count = mem.get("count", 0) + 1
    mem["tool"], mem["target"], mem["turn"] = action["tool"], action["target"], turn
    level = mem.get("level", 0)
    steps = (cfg["observe_at"], cfg["socratic_at"], cfg["directive_at"], cfg["person_at"])
    reached = sum(1 for at in steps if count >= at)
    if reached <= level:
        return None
    # The cooldown: no new intervention before the model has answered the last one.
    # Without a transcript (replays, tests without one) the call counts alone decide.
    responses = (ctx.state.get("context") or {}).get("responses", 0)
    if level and responses and responses <= mem.get("said_at", 0):
        return None
    mem["level"], mem["said_at"] = level + 1, responses
    return _say(level + 1, count, mem.get("edits", 0), action, ctx)


def identity(action: dict) -> str:
    """What makes two errors "the same error".

    A refusal is its kind of mistake: "File has not been read yet" on thirteen files is one
    loop; an Edit whose old_string does not match (not found, or found twice) is one loop
    per file. Otherwise the signature; where it starts with a banner ("FAIL pkg [build
    failed]" is the same whatever broke), the problems the error names (metacog.symptoms),
    to the letter. The target joins the signature where the signature names nothing (a bare exit code) or
    where the file is the identity (three different missing files are exploring).
    """
    from metacog.symptoms import EDIT_MISMATCH, is_banner  # failures only: a Read need not load it

    mistake = action.get("mistake", "")
    if mistake in EDIT_MISMATCH:
        return f"edit-mismatch {action.get('path') or action['target']}"
    if mistake == "missing-path":
        return f"{mistake} {action['tool']} {action['target']}"  # the same command: a wrong cwd
    if mistake:
        return mistake
    sig = action.get("sig", "")
    if action.get("refused"):
        return sig
    problems = [
        str(p[1]) for p in action.get("problems") or [] if isinstance(p, list) and len(p) == 4
    ]
    if problems and is_banner(sig.split(" | ", 1)[0]):
        # Every problem, to the letter: one fixed of several is a new error, not the same.
        return "problems " + " ".join(sorted(problems))
    named = [part for part in sig.split(" | ") if not part.startswith("exit ")]
    if action["tool"] in FILE_TOOLS or not named:
        return f"{action['tool']} {action['target']} | {sig}"
    return sig


def _exit(action: dict) -> str:
    return next(
        (part for part in action.get("sig", "").split(" | ") if part.startswith("exit ")), ""
    )


def _same_exit(mem: dict, action: dict) -> bool:
    """The same command failing with the same exit code, nothing edited since: a loop even when
    the message varies. Only for the codes that say the command did not run or was killed
    (124 timeout, 126 not executable, 127 not found, 129-159 a signal): after exit 1, 128
    (git's fatal) or 255 (ssh), other messages are other errors."""
    code = _exit(action)
    return (
        bool(mem.get("count"))
        and not mem.get("edits")
        and action["tool"] == "Bash"
        and action["target"] == mem.get("target")
        and code == mem.get("exit")
        and code[5:].isdecimal()
        and (int(code[5:]) in (124, 126, 127) or 129 <= int(code[5:]) <= 159)
    )


def _retried_ok(mem: dict, action: dict) -> bool:
    """The call that failed now works: the same call, or any successful edit of the file whose
    edits were refused."""
    if action["tool"] == mem.get("tool") and action["target"] == mem.get("target"):
        return True
    return (
        action["tool"] in EDIT_TOOLS
        and bool(mem.get("path"))
        and action.get("path") == mem.get("path")
        and mem.get("sig", "").startswith("edit-mismatch ")
    )


ADVICE = (
    "What would show you the next change fixes it before you run it again?",
    "Before more code: state your assumption, name one read-only check that would falsify it, and do it first.",
    "Stop varying the same fix: read the source or docs of what fails, then try a different approach.",
    "Stop here: tell the person what you tried and what failed, and ask for guidance.",
)


def _quoted(action: dict, room: int) -> str:
    """What failed, in words that name something: the error's signature where it names a
    path, an identifier, a code (symptoms.names_something); Claude Code's refusal as its kind
    of mistake; else the call itself. A line every failure prints (`npm error`, `This command
    requires approval`) quoted as "the same error" tells the agent nothing (issue 17)."""
    from metacog.symptoms import describe, names_something

    sig = action.get("sig", "")
    call = f"{action['tool']} `{short(action['target'], max(room // 2, 20))}`"
    if action.get("mistake"):
        said = f"{describe(action['mistake'])}, {call}"
        return said if len(said) <= room else call
    if names_something(sig):
        return f"`{short(sig, room - 2)}`"
    return call


def _say(level: int, count: int, edits: int, action: dict, ctx: Context) -> Signal:
    """One observation of at most TEXT_CAP characters: the advice whole, what failed and the
    other senses' readings in the room that is left."""
    sig = action.get("sig", "")
    what = f"the same error {count} times in a row"
    if edits:
        what += f", with {edits} edit{'s' if edits > 1 else ''} between attempts"
    advice = ADVICE[min(level, len(ADVICE)) - 1]
    readings = (
        ctx.readings(exclude=(NAME, "habit")) if level > 1 else ""
    )  # Habit counts the same errors
    room = TEXT_CAP - len(what) - len(advice) - len(": . ")
    context = f" ({readings})" if readings and len(readings) + 3 <= room - 40 else ""
    text = f"{what}: {_quoted(action, room - len(context))}{context}. {advice}"
    if level < 4:
        return Signal(NAME, text, INTERRUPT if level > 1 else OBSERVE)
    return Signal(
        NAME,
        text,
        INTERRUPT,
        person=f"metacog: the agent has hit the same error {count} times "
        f"({short(sig, 80)}) and was asked to stop and ask you for guidance.",
    )


def _resolve(mem: dict, action: dict, ctx: Context) -> None:
    """A streak that had been noticed ended: remember what changed (motor learning)."""
    if mem.get("level", 0) >= 1:
        ctx.note(
            "resolved",
            sig=mem.get("sig", ""),
            failed=mem.get("tool", ""),
            then=action["tool"],
            same_target=action["target"] == mem.get("target"),
        )


def reading(win: dict, ctx: Context) -> str:
    mem = peek(win, NAME)
    count = mem.get("count", 0)
    return f"{count} similar errors in a row" if count >= 2 else ""


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: a streak from before is no longer the agent's alone."""
    forget(win, NAME)


def streak(win: dict) -> int:
    """How many similar errors in a row now (for the session's summary)."""
    count = peek(win, NAME).get("count", 0)
    return count if isinstance(count, int) else 0
