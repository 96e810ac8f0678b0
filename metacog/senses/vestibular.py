"""Vestibular: going in circles: the same action, the same two or three steps, the same file."""

from __future__ import annotations

from metacog.perception import shell
from metacog.perception.novelty import call_key
from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import Signal, forget, memory, peek, quote, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "vestibular"
DEFAULTS = {
    "enabled": True,
    "same_action": 4,
    "cycle_repeats": 3,
    "same_read": 3,
    "cooldown_calls": 6,
}
LIMITS = {"same_action": (2, 1000), "cycle_repeats": (2, 10), "same_read": (2, 1000)}
SAID_CAP = 200  # files whose re-reads were said, per window (metacog.facts tracks 200 files)
CYCLE_LENGTHS = (2, 3)
AGAIN_SPAN = 8  # calls in which the same action with the same result, scattered, is circling
AGAIN_AT = 3
AGAIN_SAID_CAP = 16


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    calls = win.get("calls", 0)
    reread = _reread(mem, action, ctx, cfg)
    asked = ctx.asked_repeat  # the person asked for repetition: none of it is circling
    nothing = _nothing_again(mem, action, calls) if not asked else None
    unchanged = _unchanged(mem, action) if not asked else None
    answered = _answered_again(mem, action) if not asked else None
    actions = ctx.calls
    repeat = ctx.repeat  # metacog.facts
    if calls - mem.get("quiet_until", -1) < 0:
        # Counted above, said later: a re-read or an empty search is not used up in the cooldown.
        return None
    until = calls + cfg["cooldown_calls"]  # the cooldown, should this call say something
    if reread:
        key, text = reread
        said = mem["said_reads"]
        said.pop(key, None)
        said[key] = ctx.reads[key]
        while len(said) > SAID_CAP:
            del said[next(iter(said))]
        return _say(mem, until, text)
    if nothing:
        nothing[2] = 1  # said
        return _say(
            mem,
            until,
            f"{action.tool} {quote(action.target)} has found nothing {nothing[0]} times, "
            "with nothing changed between. Is what you look for somewhere else, or named otherwise?",
        )
    if unchanged:
        unchanged[3] = 1  # said
        return _say(
            mem,
            until,
            f"{unchanged[2]} edits of {short(unchanged[4].rsplit('/', 1)[-1], 40)}, and Bash "
            f"{quote(action.target, 60)} showed the same output after each: the edits change "
            "nothing it shows. What does it run that you have not changed?",
        )
    if answered:
        answered[2] = 1  # said
        return _say(
            mem,
            until,
            f"Bash {quote(action.target, 70)} gave back what another {short(answered[3], 30)} "
            f"call had answered before: {answered[1]} variants in a row go round the same "
            "answers. What do all of them share that none changed?",
        )
    if asked or action.waiting or action.sleeps:
        # Waiting on a background job that is still running, or checking after a pause, is
        # not going in circles: the polls and the pauses between them repeat by design
        # (issue 17, class 5; `sleep 5 && gh run view` and `sleep 9 && …` are one act).
        return None
    if repeat >= cfg["same_action"] and action.ok:
        if repeat % cfg["same_action"] == 0:
            return _say(
                mem,
                until,
                f"{action.tool} {quote(action.target)} {repeat} times in a row with the "
                "same result. What do you expect to be different next time?",
            )
        return None
    again = _again(actions, repeat)
    if again and action.ok and not asked:
        key = action.identity[:200]
        said = mem.setdefault("again_said", [])
        if key not in said:
            said.append(key)
            del said[:-AGAIN_SAID_CAP]
            return _say(
                mem,
                until,
                f"{action.tool} {quote(action.target)} {again} times in the last "
                f"{AGAIN_SPAN} calls with the same result and nothing edited between. What do you "
                "expect it to show next time?",
            )
    cycle = _cycle(actions, cfg["cycle_repeats"]) if not asked else None
    if cycle:
        steps = " → ".join(f"{tool} {quote(target, 40)}" for tool, target, _ in cycle)
        return _say(
            mem,
            until,
            f"the same {len(cycle)} steps {cfg['cycle_repeats']} times over with unchanged results: "
            f"{steps}. What would break the cycle?",
        )
    return None


def _say(mem: dict, quiet_until: int, text: str) -> Signal:
    """An observation, and nothing more from this sense before call `quiet_until` (its
    cooldown: what comes due meanwhile is counted, and said after)."""
    mem["quiet_until"] = quiet_until
    return Signal(NAME, text)


def _bounded(mem: dict, name: str, cap: int) -> dict:
    """This sense's map `name`, of at most `cap` keys: begun again where it is damaged or
    larger (a map of 200,000 keys, one dropped from its front per call, took 20 s)."""
    kept = mem.get(name)
    if not isinstance(kept, dict) or len(kept) > cap:
        kept = mem[name] = {}
    return kept


EMPTY_AT = 3  # the same search answering "nothing" this often, nothing changed between
EMPTY_SPAN = 60  # calls over which an empty answer is remembered
EMPTY_CAP = 32  # searches remembered per window


def _nothing_again(mem: dict, action: Call, calls: int) -> list | None:
    """The count of a search or listing that has now answered "nothing" EMPTY_AT times or
    more with no edit and no writing command since the first time, and not said yet (None
    otherwise): asking again what the world already answered, however far apart (issue 17,
    class 3). The caller marks it said ([times, call of the last, said])."""
    empty = _bounded(mem, "empty", EMPTY_CAP)
    tool = action.tool
    if tool in EDIT_TOOLS or action.writes:
        empty.clear()  # the world changed: an empty answer may not hold any more
        return None
    if not action.empty:
        return None
    key = action.identity[:200]
    seen = empty.pop(key, None)
    if not isinstance(seen, list) or len(seen) != 3 or calls - seen[1] > EMPTY_SPAN:
        seen = [0, calls, 0]  # times, call of the last, said
    seen[0], seen[1] = seen[0] + 1, calls
    empty[key] = seen
    if len(empty) > EMPTY_CAP:
        del empty[next(iter(empty))]
    return seen if seen[0] >= EMPTY_AT and not seen[2] else None


RUNS_CAP = 16  # scripts whose last output is remembered, per window
NAME_CAP = 200  # characters of a script's path remembered
UNCHANGED_AT = 2  # edits of a script, each followed by the same output of its run


def _unchanged(mem: dict, action: Call) -> list | None:
    """The memory of the script this passing command runs, once it has shown the same output
    after UNCHANGED_AT edits of the script (each edit followed by the run) and that was not
    said yet (None otherwise; the caller marks it said: [output, edited, times, said, name]).
    The agent edits what it runs and runs it again, and what it sees does not move (a quoting
    fix that never reaches the remote side). Only what the command runs counts (its program
    as a file, an interpreter's script): a checker given the file (`mypy app.py`, `nginx -t`)
    passing again is the file holding, as a test that passes again is the tests holding."""
    runs = _bounded(mem, "runs", RUNS_CAP)
    if action.tool in EDIT_TOOLS and action.ok and action.path:
        for run in runs.values():
            if _run(run) and shell.runs(run[4], str(action.path)):
                run[1] = 1
        return None
    if action.tool != "Bash" or not action.ok or action.empty or not action.prints:
        return None
    name = shell.script(action.target)[:NAME_CAP]
    if not name or shell.is_test_file(name) or action.tests:
        return None
    key = format(call_key(action), "08x")
    run = runs.pop(key, None)
    if _run(run) and run[0] == action.result and run[4] == name:
        run[2] += run[1]  # an edit of the script between, and the same output: one more
        run[1] = 0
    else:
        run = [action.result, 0, 0, 0, name]
    runs[key] = run
    if len(runs) > RUNS_CAP:
        del runs[next(iter(runs))]
    return run if run[2] >= UNCHANGED_AT and not run[3] else None


WORLD = ("runs", "answers")  # memories of what the world answered, kept when the person speaks
ANSWERS_CAP = 16  # a program's answers remembered, since the last edit
PROGRAMS_CAP = 16  # programs whose answers are remembered, per window
ANSWERED_AT = 2  # answers in a row that repeat an earlier one word for word


def _answered_again(mem: dict, action: Call) -> list | None:
    """The memory of the program this passing command acts with, once ANSWERED_AT of its calls
    in a row were each another command (a variant) that gave back an answer the program had
    given before, and not its last one: the variants go round among answers already had (the
    same two 403 bodies from four paths of an API). Not said yet (None otherwise; the caller
    marks it said: [[answer, command that first gave it]…, variants in a row, said, program,
    its last answer]). An answer is the output as compared (times, ids masked).

    One answer again and again is something that holds (a health check `ok` from every
    route, `active` for every service): it starts the count again, as a new answer does, as
    the same command again does (Vestibular's repeats count those), as any other call between
    does. A question (a reader, a search), a test run and waiting are left out; an edit or a
    command that writes makes every answer news again."""
    answers = _bounded(mem, "answers", PROGRAMS_CAP)
    if (action.tool in EDIT_TOOLS and action.ok) or action.writes:
        answers.clear()  # the world changed: an old answer may be news again
        return None
    program = ""
    if action.tool == "Bash" and action.ok and not action.empty and action.prints:
        program = shell.actor(action.act or action.target)[:NAME_CAP]
        if program in shell.QUESTIONS or action.tests:
            program = ""
    for name, entry in answers.items():
        if name != program and isinstance(entry, list) and len(entry) == 5:
            entry[1] = 0  # another call between: no longer in a row
    if not program:
        return None
    entry = answers.pop(program, None)
    if not (
        isinstance(entry, list)
        and len(entry) == 5
        and isinstance(entry[0], list)
        and all(isinstance(x, int) and not isinstance(x, bool) for x in (entry[1], entry[2]))
    ):
        entry = [[], 0, 0, program, None]
    given = {
        a[0]: a[1]
        for a in entry[0][-ANSWERS_CAP:]
        if isinstance(a, list) and len(a) == 2 and all(isinstance(x, int) for x in a)
    }
    call, answer = call_key(action), action.result
    if answer in given and given[answer] != call and answer != entry[4]:
        entry[1] += 1  # a variant, back at an answer had before its last
    else:
        entry[1] = 0
        given.setdefault(answer, call)
    entry[0], entry[3], entry[4] = (
        [[a, c] for a, c in given.items()][-ANSWERS_CAP:],
        program,
        answer,
    )
    answers[program] = entry
    if len(answers) > PROGRAMS_CAP:
        del answers[next(iter(answers))]
    return entry if entry[1] >= ANSWERED_AT and not entry[2] else None


def _run(run: object) -> bool:
    """A script's memory as `_unchanged` keeps it: [output checksum, edited since (0/1), edits
    it showed the same output after, said (0/1), the script as the command names it]."""
    return (
        isinstance(run, list)
        and len(run) == 5
        and all(isinstance(x, int) and not isinstance(x, bool) for x in run[:4])
        and isinstance(run[4], str)
    )


def _reread(mem: dict, action: Call, ctx: Context, cfg: dict) -> tuple[str, str] | None:
    """A file read again and again since its last edit (metacog.facts counts the reads),
    said again only when the count has doubled since it was last said."""
    key = ctx.read_key
    if not key:
        return None
    said = mem.get("said_reads")
    if not isinstance(said, dict):
        said = mem["said_reads"] = {}
    count = ctx.reads.get(key, 0)
    last = said.get(key, 0)
    if not isinstance(last, int) or count <= last:
        # Counted afresh since it was said (an edit, a compaction): the mark is stale.
        said.pop(key, None)
        last = 0
    if count >= cfg["same_read"] and count >= 2 * last:
        # Windows over the same lines count for the file: name the file, not the last window.
        what = action.target if "@" in key else action.target.split("@", 1)[0]
        return key, (
            f"you have read {short(what)} {count} times without editing it. "
            "What are you looking for that the earlier reads did not show?"
        )
    return None


def _again(actions: list[Call], repeat: int) -> int:
    """How often the last action, with its result, came in the last AGAIN_SPAN calls with
    other calls between and no edit since its first time there (0 below AGAIN_AT): asking
    the same question of a world that did not change. Reads are Vestibular's re-reads."""
    if not actions or actions[-1].tool in ("Read", "TodoWrite") or repeat > 1:
        return 0
    last = actions[-1].step
    recent = actions[-AGAIN_SPAN:]
    first = next(i for i, a in enumerate(recent) if a.step == last)
    if any(a.tool in EDIT_TOOLS or a.writes for a in recent[first:]):
        return 0  # something changed between: asking again is checking, not circling
    count = sum(1 for a in recent[first:] if a.step == last)
    others = {a.step for a in recent[first:]} - {last}
    if len(others) < 2:
        return 0  # A, B, A, B, A: a two-step cycle, which _cycle names whole on the next call
    return count if count >= AGAIN_AT else 0


def _cycle(actions: list[Call], repeats: int) -> list | None:
    for length in CYCLE_LENGTHS:
        span = length * repeats
        if len(actions) < span:
            continue
        if any(a.waiting for a in actions[-span:]):
            continue  # sleep, poll a job still running, sleep, poll: waiting, not a cycle
        steps = [a.step for a in actions[-span:]]
        unit = steps[:length]
        if len(set(unit)) < length:
            continue  # A, A is a repeat, not a cycle
        if all(steps[i] == unit[i % length] for i in range(span)):
            return unit
    return None


def reading(win: dict, ctx: Context) -> str:
    parts = []
    if ctx.repeat >= 2:
        parts.append(f"last action repeated {ctx.repeat}×")
    if ctx.max_reads >= 2:
        parts.append(f"most reads of one unchanged file: {ctx.max_reads}")
    return ", ".join(parts)


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: what was said is said of an earlier request, and counts begin again.
    What the world answered stands (a script's output, a program's answers): the person
    speaking changes no file."""
    kept = {k: peek(win, NAME).get(k) for k in WORLD}
    forget(win, NAME)
    mem = memory(win, NAME)
    runs, answers = kept["runs"], kept["answers"]
    if isinstance(runs, dict):
        mem["runs"] = {k: [r[0], 0, 0, 0, r[4]] for k, r in runs.items() if _run(r)}
    if isinstance(answers, dict):
        mem["answers"] = {
            k: [e[0], 0, 0, e[3], e[4]]
            for k, e in answers.items()
            if isinstance(e, list) and len(e) == 5
        }


def on_compaction(win: dict, ctx: Context) -> str:
    """Re-reading after a compaction is recovery, not circling: the reads count afresh."""
    peek(win, NAME).pop("said_reads", None)
    return ""


def after_subagent(win: dict, ctx: Context) -> str:
    if not peek(win, NAME).get("quiet_until"):
        return ""
    kind = (ctx.event.agent_type if ctx.event is not None else "") or "subagent"
    return (
        f"the {kind} subagent that just finished went in circles (repeated the same steps); "
        "check its result before relying on it."
    )
