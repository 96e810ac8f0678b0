"""Nociception: the same error again and again, escalating while it persists."""

from __future__ import annotations

import zlib

from metacog.perception.novelty import OBSTACLE_SPAN
from metacog.perception.tools import GUARDED
from metacog.senses.signal import (
    INTERRUPT,
    OBSERVE,
    TEXT_CAP,
    Signal,
    forget,
    memory,
    number,
    peek,
    quote,
    short,
)
from metacog.senses.signal import turn as turn_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context, Streak

NAME = "nociception"
DEFAULTS = {
    "enabled": True,
    "observe_at": 3,
    "socratic_at": 5,
    "directive_at": 7,
    "person_at": 9,
    # Obstacles that brought nothing new (metacog.perception.novelty), whatever their words:
    # this many, each in its own model turn, within stale_span calls, each result holding at
    # most stale_gain of lines the window had not shown. Fitted by benchmarks/fit_stale.py.
    "stale_at": 2,
    "stale_span": 10,
    "stale_gain": 0.34,
    "stale_news": 0,  # and at most this many of its new lines naming something (a path, a code)
    # Where every such obstacle was an empty answer (a search, a listing that found nothing),
    # this many: questions that find nothing are how a search goes, for a while.
    "stale_empty_at": 3,
    # Obstacles that brought no line at all the window had not shown (a refusal again, the
    # same failure word for word, nothing found again), whatever else was said of them: this
    # many, each in its own model turn (or calls of one batch that met one wall: as many),
    # within stale_bare_span calls. Counted on their own, so that a word said early (at
    # stale_at) does not hide what goes on being met.
    "stale_bare_at": 3,
    "stale_bare_span": 20,
    # Calls failing one after another, in this many model turns, with nothing between that
    # worked (not even an edit), whatever each said: nothing the agent tries works.
    "failing_at": 5,
}
LIMITS = {
    "observe_at": (2, 1000),
    "socratic_at": (2, 1000),
    "directive_at": (2, 1000),
    "person_at": (2, 1000),
    "stale_at": (2, 1000),
    "stale_span": (2, 60),
    "stale_gain": (0.0, 1.0),
    "stale_news": (0, 1000),
    "stale_empty_at": (2, 1000),
    "stale_bare_at": (2, 1000),
    "stale_bare_span": (2, 60),
    "failing_at": (2, 1000),
}


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    ended = ctx.streak_ended  # metacog.facts counts the streak; this sense says it
    if ended is not None:
        _resolve(mem, ended, action, ctx)
        mem["level"] = 0
    if ctx.streak.count <= 1:
        mem["level"] = 0  # a new streak (a memory written before metacog.facts kept its level)
    _follow_run(mem, action, win)
    _met(mem, action, ctx)
    if ctx.asked_repeat:
        return None  # repetition the person asked for: the failures are the answer
    around = _around(mem, action, win, ctx, cfg)
    if around is not None:
        return around
    if action.ok or not ctx.streak_grew:
        # A success, a new error, or another call of the same attempt (a parallel batch is one
        # attempt): the streak has nothing to say; obstacles that bring nothing new may, and
        # failures of every kind with nothing between that worked.
        return (
            _again(mem, action, ctx)
            or _stale(mem, action, ctx, cfg)
            or _bare(mem, action, ctx, cfg)
            or _nothing_works(mem, action, ctx, cfg)
        )
    count = ctx.streak.count
    level = mem.get("level", 0)
    steps = (cfg["observe_at"], cfg["socratic_at"], cfg["directive_at"], cfg["person_at"])
    reached = sum(1 for at in steps if count >= at)
    if reached <= level:
        # The streak has no new level to say; obstacles that bring nothing new, of which
        # this failure may be the last, still may (a refusal twice, after another before),
        # unless they are all the streak's own attempts: counting those is the streak's job.
        return _stale(mem, action, ctx, cfg, streak=count)
    # The cooldown: no new intervention before the model has answered the last one.
    # Without a transcript (replays, tests without one) the call counts alone decide.
    # The stale observation counts: it said these failures already.
    responses = ctx.responses
    if responses and responses <= number(mem.get("said_at")):
        return None
    mem["level"], mem["said_at"] = level + 1, responses
    if ctx.obstacles:  # what the streak said, the stale observation need not say again
        mem["stale_said"] = ctx.obstacles[-1][0]
    return _say(level + 1, count, ctx.streak.edits, action, ctx)


ADVICE = (
    "What would show you the next change fixes it before you run it again?",
    "Before more code: state your assumption, name one read-only check that would falsify it, and do it first.",
    "Stop varying the same fix: read the source or docs of what fails, then try a different approach.",
    "Stop here: tell the person what you tried and what failed, and ask for guidance.",
)


def _quoted(action: Call, room: int) -> str:
    """What failed, in words that name something: the error's signature where it names a
    path, an identifier, a code (symptoms.names_something); Claude Code's refusal as its kind
    of mistake; else the call itself. A line every failure prints (`npm error`, `This command
    requires approval`) quoted as "the same error" tells the agent nothing (issue 17)."""
    from metacog.perception.symptoms import describe, names_something
    from metacog.senses.contract import problems_of

    sig = action.sig
    call = f"{action.tool} {quote(action.target, max(room // 2, 20))}"
    if action.mistake:
        said = f"{describe(action.mistake)}, {call}"
        return said if len(said) <= room else call
    named = [p.line for p in problems_of(action) if names_something(p.line)]
    if named and not names_something(sig.split(" | ", 1)[0]):
        # The signature opens with a summary (`Found 1 error.`): the problem is what it counts.
        return _named_quote(named[0], room - 2)
    if names_something(sig):
        return _named_quote(sig, room - 2)
    return call


def _named_quote(line: str, cap: int) -> str:
    """The line quoted within `cap`; where cutting its end would cut off what names something
    (`No rule to make target 'increme…`), its end instead, the start cut."""
    from metacog.perception.symptoms import names_something

    if len(line) <= cap or names_something(short(line, cap)):
        return quote(line, cap)
    tail = "…" + line[-(cap - 1) :]
    return "`" + tail.replace("`", "'") + "`" if names_something(tail) else quote(line, cap)


def _stale(mem: dict, action: Call, ctx: Context, cfg: dict, streak: int = 0) -> Signal | None:
    """The principle without vocabulary: this call met an obstacle whose result showed almost
    nothing new, and so did others in their own turns lately, since this was last said;
    `streak`: this many of the latest turns are a streak's attempts."""
    if not ctx.obstacles:
        mem.pop("stale_times", None)  # every obstacle overcome or long past: a new stretch
    if not ctx.obstacle or not ctx.obstacles:
        return None
    calls = ctx.obstacles[-1][0]
    since = max(calls - cfg["stale_span"], number(mem.get("stale_said")))
    if streak:
        # Each of the streak's attempts, its first included, brought nothing new, and an
        # obstacle not overcome since came before them, lately or within the window's memory
        # (the same test failing before the streak's own first attempt, which a changed
        # summary line began anew): what it fails on had been met before it began, so it is
        # past the streak's count already. A new error's second attempt is the streak's.
        recent = [o for o in ctx.obstacles if o[0] > since]
        own = list(dict.fromkeys(o[1] for o in reversed(recent)))[:streak]
        fresh = {o[1] for o in recent if not ctx.brought_nothing(o)}
        before = {turn for _, turn, *_ in ctx.obstacles} - set(own)
        if len(own) < streak or fresh & set(own) or not before:
            return None
    # Nothing new: no new line, or few new lines and none naming something (a failure that
    # brings a new path, name or code may be the next step of progress, however much else
    # repeats; metacog.senses.contract.Context.brought_nothing).
    stale = [(o[0], o[1], o[4]) for o in ctx.obstacles if o[0] > since and ctx.brought_nothing(o)]
    turns = {turn for _, turn, _ in stale}
    need = cfg["stale_empty_at"] if all(empty for *_, empty in stale) else cfg["stale_at"]
    # Said again in the same stretch only once twice as many have come since (as Habit and
    # Chronos double): a cycle of three seen failures was told every second call.
    times = min(max(number(mem.get("stale_times")), 0), 6)  # bounded whatever the state says
    if not stale or stale[-1][0] != calls or len(turns) < need << times:
        return None
    # As for the streak: nothing more before the model has answered what was said last.
    if ctx.responses and ctx.responses <= number(mem.get("said_at")):
        return None
    mem["stale_said"], mem["said_at"], mem["stale_times"] = calls, ctx.responses, times + 1
    return _said(mem, action, ctx, len(turns), calls - stale[0][0] + 1, "stale_said")


def _bare(mem: dict, action: Call, ctx: Context, cfg: dict) -> Signal | None:
    """The same principle read strictly: obstacles that brought no line at all the window had
    not shown lately, in `stale_bare_at` model turns within `stale_bare_span` calls, since
    this was last said (again only once twice as many have come, as for `_stale`). Its own
    count, each backing off on its own: a word said at the second obstacle (`_stale`), before
    it was plain that the agent would go on, does not make the third news, nor the third the
    fourth (measured: sharing one count lost two catches of `_stale`'s and gained nothing)."""
    if not ctx.obstacles:
        mem.pop("bare_times", None)  # every obstacle overcome or long past: a new stretch
        return None
    if not ctx.obstacle or ctx.obstacles[-1][5]:
        return None
    calls = ctx.obstacles[-1][0]
    since = max(calls - cfg["stale_bare_span"], number(mem.get("bare_said")))
    bare = [o for o in ctx.obstacles if o[0] > since and o[5] == 0]
    met = _meetings(bare)
    times = min(max(number(mem.get("bare_times")), 0), 6)  # bounded whatever the state says
    if met < cfg["stale_bare_at"] << times:
        return None
    if ctx.responses and ctx.responses <= number(mem.get("said_at")):
        return None
    mem["bare_said"], mem["said_at"], mem["bare_times"] = calls, ctx.responses, times + 1
    return _said(mem, action, ctx, met, calls - bare[0][0] + 1, "bare_said")


def _batch(ctx: Context) -> list[int]:
    """The calls of this call's model turn that met its wall (metacog.perception.novelty.wall)
    by their numbers, this one last; [] for an obstacle of no wall of its own."""
    turn, wall = ctx.obstacles[-1][1], _wall(ctx.obstacles[-1])
    return [o[0] for o in ctx.obstacles if o[1] == turn and _wall(o) == wall] if wall else []


def _wall(obstacle: tuple) -> int:
    """The wall an obstacle of `ctx.obstacles` met; 0 (none known) for a shorter one."""
    return obstacle[6] if len(obstacle) > 6 else 0


def _said(mem: dict, action: Call, ctx: Context, obstacles: int, span: int, by: str) -> Signal:
    """What `_stale` and `_bare` say: where calls of this batch met this call's wall, the
    batch (`_batch_wall`), else the obstacles lately (`_nothing_new`); the wall is remembered
    as said at this turn, for `_again`, with `by`, where the rule that said it counts from."""
    mem["batch_said"] = [ctx.obstacles[-1][1], _wall(ctx.obstacles[-1]), by]
    batch = _batch(ctx)
    if len(batch) >= 2:
        return _batch_wall(mem, action, len(batch), batch[0])
    return _nothing_new(action, obstacles, span)


def _again(mem: dict, action: Call, ctx: Context) -> Signal | None:
    """Said at this batch already, and this call of it met the same wall again: heard at the
    batch's end (PostToolBatch), whose one reply keeps a sense's last word
    (metacog.handlers.on_batch), the word is said again with every call that met it counted.
    A call heard at a hook of its own is not: each of its replies reaches the model."""
    if not ctx.obstacle or not ctx.obstacles or ctx.event is None:
        return None
    said = mem.get("batch_said")
    if (
        ctx.event.name != "PostToolBatch"
        or not isinstance(said, list)
        or said[:2] != [ctx.obstacles[-1][1], _wall(ctx.obstacles[-1])]
        or said[2:] not in (["stale_said"], ["bare_said"])
    ):
        return None
    batch = _batch(ctx)
    if len(batch) < 2:
        return None
    mem[said[2]] = batch[-1]  # the rule that said it counts what is said here as said
    return _batch_wall(mem, action, len(batch), batch[0])


MET_CAP = 16  # signatures whose latest meetings are remembered


def _met(mem: dict, action: Call, ctx: Context) -> None:
    """Remember where this obstacle's signature was met, in the latest two model turns that
    met it (the latest call of each): a batch that meets a wall can then say where it was met
    before. Only a wall's (metacog.perception.novelty.wall): not an empty answer, not a call
    cancelled by its sibling's failure."""
    if not ctx.obstacle or not ctx.obstacles or not _wall(ctx.obstacles[-1]) or not action.sig:
        return
    calls, turn = ctx.obstacles[-1][0], ctx.obstacles[-1][1]
    met = mem.get("met")
    if not isinstance(met, dict):
        met = mem["met"] = {}
    key = _signature_key(action)
    seen = met.pop(key, None)
    seen = [s for s in seen if _meeting(s)][-2:] if isinstance(seen, list) else []
    if seen and seen[-1][1] == turn:
        seen.pop()  # the same turn: its latest call
    met[key] = [*seen, [calls, turn, action.tool, _place(action)[:200]]][-2:]
    while len(met) > MET_CAP:
        del met[next(iter(met))]


def _signature_key(action: Call) -> str:
    """How `met` keys a failure's signature: a short checksum, never its words."""
    return format(zlib.crc32(action.sig.encode("utf-8", "replace")), "08x")


def _shaped(entry: object, kinds: tuple[type, ...]) -> bool:
    """Whether a remembered entry is a list of exactly these kinds of value, in order (what a
    damaged or older state holds is read as nothing)."""
    return (
        isinstance(entry, list)
        and len(entry) == len(kinds)
        and all(isinstance(value, kind) for value, kind in zip(entry, kinds, strict=True))
    )


def _meeting(entry: object) -> bool:
    """A meeting as `_met` remembers it: [call number, turn, tool, place]."""
    return _shaped(entry, (int, int, str, str))


def _place(action: Call) -> str:
    """Where a call met its wall, as the agent wrote it: its file or its command; '' for any
    other tool (an MCP tool's input says nothing of where)."""
    return action.target if action.path or action.tool == "Bash" else ""


def _batch_wall(mem: dict, action: Call, batch: int, first: int) -> Signal:
    """What `_stale` and `_bare` say where calls of one batch met one wall: the line they were
    told, how many met it, where, and where it was met in an earlier turn, if it was within
    the calls the window remembers its obstacles; `first`: the batch's first call that met it."""
    from metacog.perception.symptoms import names_something

    met = mem.get("met")
    key = _signature_key(action)
    seen = met.get(key) if isinstance(met, dict) else None
    before = ""
    if isinstance(seen, list) and len(seen) == 2 and _meeting(seen[0]):
        call, _, tool, place = seen[0]
        if 0 < first - call <= OBSTACLE_SPAN:
            at = f"{tool} {quote(place, 40)}" if place else tool
            if (tool, place) == (action.tool, _place(action)):
                at = "it was met there"
            else:
                at += " met it"
            before = f"; {at} {first - call} call{'s' if first - call > 1 else ''} before"
    place = _place(action)
    where = f"{action.tool} {quote(place, 40)}" if place else action.tool
    kind = "refusal" if action.refused else "failure"
    line = action.sig.split(" | ", 1)[0]
    # A line that names something (a path, a name, a code) is quoted as the problem; Claude
    # Code's own words that name nothing ("File has not been read yet…") are its refusal, said
    # as words: quoted as a problem line they would read as one every failure prints (issue 17).
    line = quote(line, 80) if names_something(line) else f'"{short(line, 80)}"'

    head = f"{batch} calls of this batch, {where}, met the same {kind}, {line}"
    ask = ". Sent again, they will meet it again: what will you find out first?"
    return Signal(NAME, head + (before if len(head + before + ask) <= TEXT_CAP else "") + ask)


def _meetings(obstacles: list) -> int:
    """How many times these obstacles met a wall: once per model turn, and where calls of one
    turn (a parallel batch) met the same wall (metacog.perception.novelty.wall), as many times
    as they did: the agent decided once, the world answered that many times. Measured on the
    243 shared sessions: read so by `_bare` (no line new at all, 3 meetings), it caught two
    batches labelled stuck and added no signal to quiet sessions; by `_stale` too (2 meetings)
    it added two, a batch of 3 and of 2 same refusals at one file."""
    walls: dict[int, dict[int, int]] = {}
    for o in obstacles:
        met = walls.setdefault(o[1], {})
        key = _wall(o) or -o[0]  # no wall known: a wall of its own
        met[key] = met.get(key, 0) + 1
    return sum(max(met.values()) for met in walls.values())


def _nothing_new(action: Call, obstacles: int, span: int) -> Signal:
    """What `_stale` and `_bare` say: the obstacle met now, named, and how many lately."""
    if action.empty:
        what = f"{action.tool} {quote(action.target, 60)} found nothing"
    elif action.ok:
        # It passed, and showed only what failures showed (metacog.perception.novelty).
        what = f"{action.tool} {quote(action.target, 60)} showed only an earlier failure"
    else:
        what = _quoted(action, 120)
        what = f"{what} again" if what.startswith(action.tool) else f"again {what}"
    return Signal(
        NAME,
        f"{what}: {obstacles} obstacles in the last {span} calls whose results showed nothing "
        "the session had not already shown. What will you find out first, instead of trying "
        "again?",
    )


GUARD_CAP = 8  # refusals by a guard remembered


def _around(mem: dict, action: Call, win: dict, ctx: Context, cfg: dict) -> Signal | None:
    """A guard refused one program's shell commands in `stale_at` model turns within
    `stale_span` calls (Nociception's fitted counts), and this shell command, which passed,
    is another command that acts on what the last refused one acted on (its object: the last
    word of its first step, past the program and flags) and is no question (not a reader or
    a search): the same act by another way. Said once; the refusals are then forgotten."""
    calls = number(win.get("calls"))
    guarded = mem.get("guarded")
    if isinstance(guarded, list):
        guarded = [g for g in guarded[-GUARD_CAP:] if _guard(g, calls, cfg)]
    else:
        guarded = []
    if action.mistake in GUARDED and action.tool == "Bash" and "…#" not in action.target:
        from metacog.perception.shell import first_step  # only where a guard refused

        step = first_step(action.target)
        if len(step) >= 2:  # a program and its object
            entry = [calls, turn_of(action, win), step[-1], action.mistake, action.target]
            mem["guarded"] = [*guarded, entry][-GUARD_CAP:]
        return None
    if guarded:
        mem["guarded"] = guarded
    else:
        mem.pop("guarded", None)
        return None
    if not action.ok or action.tool != "Bash" or action.mistake or action.target == guarded[-1][4]:
        return None
    from metacog.perception.shell import QUESTIONS, after_cd, first_step, named_words

    last = guarded[-1]
    program = (first_step(last[4]) or [""])[0]  # a damaged memory may hold no command
    turns = {g[1] for g in guarded if first_step(g[4])[:1] == [program]}
    head = first_step(action.target)[:1]
    if (
        len(turns) < min(cfg["stale_at"], GUARD_CAP)
        or not head
        or head[0] in QUESTIONS
        or last[2] not in named_words(action.target)
    ):
        return None
    if ctx.responses and ctx.responses <= number(mem.get("said_at")):
        return None  # as for the streak: nothing more before the model has answered
    mem.pop("guarded", None)
    mem["said_at"] = ctx.responses
    guard = {"hook-blocked": "a hook"}.get(last[3], "the session's permissions")
    return Signal(
        NAME,
        f"{guard} refused Bash {quote(after_cd(last[4]), 55)} and {len(guarded) - 1} more "
        f"in the last {calls - guarded[0][0] + 1} calls; this one, Bash "
        f"{quote(after_cd(action.target), 55)}, does the same another way. Is that what the "
        "person wants? Ask before going around it.",
    )


def _guard(entry: object, calls: int, cfg: dict) -> bool:
    """A refusal by a guard as `_around` remembers it, lately: [call number, turn, its object,
    kind, command]."""
    return (
        _shaped(entry, (int, int, str, str, str))
        and entry[3] in GUARDED
        and 0 <= calls - entry[0] < cfg["stale_span"]
    )


_FAILING = frozenset(("failed", "refused"))  # Call.outcome; the person's no breaks a run


def _follow_run(mem: dict, action: Call, win: dict) -> None:
    """Where the current run of failing calls began (by call number), kept on every call: the
    run may outlast the window, and is said once whatever its length."""
    if action.outcome not in _FAILING:
        return
    calls = number(win.get("calls"))
    if mem.get("failing_to") != calls - 1 or "failing_from" not in mem:
        mem["failing_from"] = calls
    mem["failing_to"] = calls


def _nothing_works(mem: dict, action: Call, ctx: Context, cfg: dict) -> Signal | None:
    """The calls since the last one that worked all failed, in `failing_at` model turns or
    more (a parallel batch is one attempt), each its own way or not: no edit, no answer, no
    success between them. Said once a run."""
    if action.outcome not in _FAILING:
        return None
    turns: set[int] = set()
    first = action
    for back, call in enumerate(reversed(ctx.calls)):  # the window's last: enough for the bar
        if call.outcome not in _FAILING:
            break
        # Without a transcript (metacog.perception.turns) every call is its own turn.
        turns.add(call.turn if call.turn > 0 else -1 - back)
        first = call
    if len(turns) < cfg["failing_at"]:
        return None
    began = number(mem.get("failing_from"))
    if mem.get("failing_said") == began:
        return None  # said in this run already
    if ctx.responses and ctx.responses <= number(mem.get("said_at")):
        return None
    mem["failing_said"], mem["said_at"] = began, ctx.responses
    head = f"{len(turns)} attempts in a row failed, with nothing between that worked"
    ask = "What do they have in common that none of them changed?"
    # Within TEXT_CAP whatever the tools' names: the latest first, then where the run began.
    room = TEXT_CAP - len(head) - len(ask) - len(", the latest: . ")
    latest = _quoted(action, min(room, 110))
    room -= len(latest) + len(first.tool) + len(", from  ")
    began_with = f", from {first.tool} {quote(first.target, min(room, 50))}" if room >= 20 else ""
    return Signal(NAME, f"{head}{began_with}, the latest: {latest}. {ask}")


def _say(level: int, count: int, edits: int, action: Call, ctx: Context) -> Signal:
    """One observation of at most TEXT_CAP characters: the advice whole, what failed and the
    other senses' readings in the room that is left."""
    sig = action.sig
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


def _resolve(mem: dict, ended: Streak, action: Call, ctx: Context) -> None:
    """A streak that had been noticed ended: remember what changed (motor learning)."""
    if mem.get("level", 0) >= 1:
        ctx.note(
            "resolved",
            sig=ended.sig,
            failed=ended.tool,
            then=action.tool,
            same_target=action.target == ended.target,
        )


def reading(win: dict, ctx: Context) -> str:
    count = ctx.streak.count
    return f"{count} similar errors in a row" if count >= 2 else ""


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: a streak from before is no longer the agent's alone."""
    forget(win, NAME)


def after_subagent(win: dict, ctx: Context) -> str:
    if number(peek(win, NAME).get("level")) < 1:
        return ""
    kind = (ctx.event.agent_type if ctx.event is not None else "") or "subagent"
    return (
        f"the {kind} subagent that just finished hit the same error {ctx.streak.count} times "
        "in a row; check its result before relying on it."
    )
