"""Reflex: what was learned is felt when it applies: how this error was resolved before, a rule.

A failure whose identity (Nociception's) comes back a 2nd time in the session is looked up
among the resolutions seen earlier in this session or in earlier sessions of the project
(metacog.learning.resolutions): what resolved it is said then, once per problem and
session. A resolution is only what is certain: the files successfully edited between the
problem's last failure and the pass of the same call (same tool and target), that pass
within PASS_WITHIN calls, 1 to FILES_CAP files inside the project; otherwise nothing is
remembered, since a recall naming the wrong file is worse than silence. A rule the
session's digest showed is said again, once, when its situation begins. After a
compaction, `after_compaction` gives the note of what failed and what worked before it.
"""

from __future__ import annotations

import os

from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import Signal, memory, peek, quote
from metacog.senses.signal import turn as turn_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "reflex"
DEFAULTS = {
    "enabled": True,
    "pass_within": 12,  # calls from a problem's last failure to the pass that resolved it
    "max_files": 3,  # files edited in between, at most, for a resolution to be remembered
    "recent_calls": 40,  # a fix from this session is recalled only this long after it
}
LIMITS = {"pass_within": (1, 1000), "max_files": (1, 3), "recent_calls": (0, 100_000)}
OPEN_CAP = 32  # problems followed per window, the least recently failed dropped first
TOLD_CAP = 64
DONE_CAP = 16
TRIED_CAP = 3
UNRESOLVED_AT = 2  # earlier sessions that met a problem and never resolved it, to say so
EDITS_CAP = 8  # distinct files edited since a problem's last failure (more: no resolution)
# Situations whose beginning recalls a learned rule: the rule ids of learning.detectors.
SITUATIONS = {"error": "error-loop", "mistake": "repeated-mistake", "wide": "blast-radius"}


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    opened = mem.get("open")
    if not isinstance(opened, dict):
        opened = mem["open"] = {}
    calls = win.get("calls", 0)
    if action.ok:
        if action.tool in EDIT_TOOLS:
            _edited(opened, action.path, ctx.root)
            # An edit that reaches far (metacog.perception.reach, as Spatial reads it): asked
            # only while its rule could still be said, so that an edit pays nothing for it
            # once it was, or where learning is off.
            if _may_rule(mem, "wide", ctx) and ctx.wide_edit(action):
                rel, found = ctx.reach(action) or ("", [])
                return _rule(mem, "wide", ctx, f"{quote(rel, 80)}, which {len(found)} files import")
        else:
            _passed(mem, opened, action, calls, cfg, ctx)
        return None
    if ctx.asked_repeat:
        return None
    ident = ctx.identity  # metacog.facts: the identity Nociception and Habit use
    problem = ctx.recall.key(ident)
    entry = opened.pop(problem, None)
    if not _valid(entry):
        # Shown to the agent: the identity where it names something, else the error's own
        # signature (an identity of banner problems is a list of checksums: `problems 38…`).
        from metacog.perception.symptoms import names_something

        shown = ident if names_something(ident) else action.sig or ident
        entry = {"n": 0, "turn": None, "first": calls, "sig": shown[:120], "tried": []}
        was = _was(action, ctx)
        if was:
            entry["was"] = was
    turn = turn_of(action, win)
    if entry["turn"] != turn:
        entry["n"], entry["turn"] = entry["n"] + 1, turn
        if entry.get("edits"):  # edited since the last failure, and it failed again
            entry["tried"] = [*entry["tried"], *entry["edits"]][-TRIED_CAP:]
    entry.update(last=calls, tool=action.tool, target=action.target, edits=[])
    # Claude Code's no to how a tool was used, or the person's (a call stopped, rejected):
    # not the world answering.
    from metacog.perception.symptoms import PER_INTENT

    entry["refused"] = bool(action.refused) or action.mistake in PER_INTENT
    opened[problem] = entry
    while len(opened) > OPEN_CAP:
        del opened[next(iter(opened))]
    told = mem.get("told")
    if not isinstance(told, list):
        told = mem["told"] = []
    text = ""
    if entry["n"] == 2 and problem not in told:
        text = _recalled(mem, problem, ident, calls, ctx, str(entry.get("was") or ""))
        if text:
            told.append(problem)
            del told[:-TOLD_CAP]
    rule = _situation(action, entry, mem, ctx)
    if rule is not None:
        text = f"{text} {rule.text}" if text else rule.text
    return Signal(NAME, text) if text else None


def _situation(action: Call, entry: dict, mem: dict, ctx: Context) -> Signal | None:
    """The rule whose situation begins with this 2nd failure: a loop is the same error twice
    in a row (the streak metacog.facts counts); a repeated mistake
    the same refusal again, except an Edit whose old_string did not match (the next attempt,
    after a Read, nearly always works: the rule's line was noise on quiet sessions) and the
    person's rejections."""
    from metacog.perception.symptoms import EDIT_MISMATCH, PER_INTENT

    mistake = action.mistake
    if mistake:
        # A rejection is the person's decision, not the agent's mistake: a person who says no
        # to two plans while reviewing is not being ignored (a quiet session, f852ad25).
        if mistake in EDIT_MISMATCH or mistake in PER_INTENT or entry["n"] != 2:
            return None
        return _rule(mem, "mistake", ctx, _matched(action, entry))
    if ctx.streak_grew and ctx.streak.count == 2:
        return _rule(mem, "error", ctx, _matched(action, entry))
    return None


def _matched(action: Call, entry: dict) -> str:
    """What a rule matched: the call, and what it met again (the identity where it names
    something, else the error's signature: entry["sig"]); within TEXT_CAP beside the longest
    lesson (91 characters), the words around it whole."""
    call = quote(f"{action.tool} {action.target}".strip(), 60)
    return f"{call} met {quote(entry['sig'], 80)} again"


def _valid(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("n"), int)
        and isinstance(entry.get("first"), int)
        and isinstance(entry.get("sig"), str)
        and isinstance(entry.get("tried"), list)
    )


def _relative(path: str, root: str) -> str:
    """The path inside the project, '' outside it (no absolute path is ever remembered)."""
    if not path or not root:
        return ""
    base = root.rstrip(os.sep) + os.sep
    if not path.startswith(base):
        return ""
    return path[len(base) :]


def _edited(opened: dict, path: str, root: str) -> None:
    rel = _relative(path, root)
    for entry in opened.values():
        if not isinstance(entry, dict):
            continue
        edits = entry.get("edits")
        if not isinstance(edits, list):
            edits = entry["edits"] = []
        if rel not in edits and len(edits) <= EDITS_CAP:
            edits.append(rel)  # '' stands for a file outside the project: no resolution then


def _passed(mem: dict, opened: dict, action: Call, calls: int, cfg: dict, ctx: Context) -> None:
    """The call that failed now passes: a resolution when the edits since its last failure
    are few, inside the project, and the pass came soon after."""
    for problem in [
        k
        for k, e in opened.items()
        if _valid(e) and e.get("tool") == action.tool and e.get("target") == action.target
    ]:
        entry = opened.pop(problem)
        edits = entry.get("edits") or []
        if (
            not edits
            or "" in edits
            or len(edits) > cfg["max_files"]
            or calls - entry.get("last", calls) > cfg["pass_within"]
        ):
            continue
        fix = {
            "files": edits,
            "cmd": action.target,
            "calls": calls - entry["first"] + 1,
            "at": ctx.now,
        }
        done = mem.get("done")
        if not isinstance(done, dict):
            done = mem["done"] = {}
        done.pop(problem, None)
        done[problem] = {**fix, "sig": entry["sig"], "call": calls}
        while len(done) > DONE_CAP:
            del done[next(iter(done))]
        if _learning(ctx):
            try:
                was = str(entry.get("was") or "")
                ctx.recall.resolved(ctx.root, problem, entry["sig"], fix, ctx.now, was)
            except (OSError, ValueError) as exc:  # a busy lock, a full disk: this one is lost
                _log(ctx, exc)


def _learning(ctx: Context) -> bool:
    return bool(ctx.root) and bool(ctx.cfg["learning"]["enabled"])


def _log(ctx: Context, exc: Exception) -> None:
    from metacog.fsutil import log_error

    log_error(ctx.state_dir, f"reflex: resolutions store: {type(exc).__name__}: {exc}")


def _was(action: Call, ctx: Context) -> str:
    """The resolutions store's key this failure had before its identity was read anew (the
    person's no to a shell command: metacog.perception.symptoms.legacy_identity), '' where it
    is unchanged: what earlier sessions kept under it moves to the new key when met."""
    from metacog.perception.symptoms import PER_INTENT, legacy_identity

    if action.mistake not in PER_INTENT:
        return ""
    old = legacy_identity(action)
    return ctx.recall.key(old) if old else ""


def _recalled(mem: dict, problem: str, ident: str, calls: int, ctx: Context, was: str) -> str:
    recall = ctx.recall
    done = mem.get("done")
    here = done.get(problem) if isinstance(done, dict) else None
    before = None
    if _learning(ctx):
        try:
            before = recall.met(ctx.root, problem, ident, ctx.event.session, ctx.now, was)
        except (OSError, ValueError) as exc:
            _log(ctx, exc)
    if isinstance(here, dict) and (
        here.get("lost") or calls - here.get("call", 0) >= ctx.cfg[NAME]["recent_calls"]
    ):
        # Only what the agent may have lost: a resolution from before a compaction, or from
        # long ago; a red-green cycle's last fix is still in its context.
        return recall.resolution_line(here, ctx.now, same_session=True)
    if isinstance(here, dict):
        return ""
    if not before:
        return ""
    if before.get("fix"):
        return recall.resolution_line(before["fix"], ctx.now, same_session=False)
    sid = recall.session_hash(ctx.event.session)
    others = [s for s in before.get("seen") or [] if s != sid]
    # One earlier session that did not resolve it is weak evidence (the session may have
    # moved on to other work): said from two on.
    return recall.unresolved_line(len(others)) if len(others) >= UNRESOLVED_AT else ""


def _may_rule(mem: dict, situation: str, ctx: Context) -> bool:
    """Whether the rule of this situation has not been weighed this session (`_rule`)."""
    said = mem.get("ruled")
    return (
        not (isinstance(said, list) and SITUATIONS[situation] in said)
        and ctx.cfg["learning"]["enabled"]
        and ctx.is_main
    )


def _rule(mem: dict, situation: str, ctx: Context, matched: str) -> Signal | None:
    """The learned rule of this situation, once per session, if the session's digest showed
    it, said with what it matched."""
    rule_id = SITUATIONS[situation]
    said = mem.get("ruled")
    if not isinstance(said, list):
        said = mem["ruled"] = []
    if rule_id in said or not ctx.cfg["learning"]["enabled"] or not ctx.is_main:
        return None
    said.append(rule_id)
    active = mem.get("rules")
    if not isinstance(active, list):
        # Read once per session, at the first situation: the ids the digest wrote at the
        # first prompt (a calm session never pays for it).
        active = mem["rules"] = sorted(ctx.recall.active_rules(ctx.state_dir, ctx.event.session))
    if rule_id not in active:
        return None
    text = ctx.recall.rule_line(ctx.recall.lesson(rule_id), matched)
    return Signal(NAME, text) if text else None


def on_compaction(win: dict, ctx: Context) -> str:
    """The note for right after a compaction: what still fails, what was tried, what worked.

    Also marks this session's resolutions as lost from the agent's context, so each is
    recalled when its problem comes back (both the SessionStart and the transcript's
    sign of one compaction call this: marking twice is marking once)."""
    mem = peek(win, NAME)
    for fix in (mem.get("done") or {}).values() if isinstance(mem.get("done"), dict) else ():
        if isinstance(fix, dict):
            fix["lost"] = True
    opened = mem.get("open") if isinstance(mem.get("open"), dict) else {}
    # A failure seen once is no pain worth carrying over a compaction; one that came back is.
    # A tool used wrongly (an Edit of a file not read, an old_string that matches nothing) or
    # a call the person stopped is no state of the work: no pain to carry over a compaction.
    entries = sorted(
        (e for e in opened.values() if _valid(e) and e["n"] >= 2 and not e.get("refused")),
        key=lambda e: e["n"],
        reverse=True,
    )[:3]
    unresolved = [(e.get("target", ""), e["sig"], e["n"]) for e in entries]
    tried = [(f, e["sig"]) for e in entries for f in e["tried"] if f][:2]
    done = mem.get("done") if isinstance(mem.get("done"), dict) else {}
    fixed = [(d["sig"], d) for d in list(done.values())[-2:] if isinstance(d, dict) and "sig" in d]
    return ctx.recall.compaction_note(unresolved, tried, fixed)


def reading(win: dict, ctx: Context) -> str:
    return ""
