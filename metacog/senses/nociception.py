"""Nociception: the same error again and again, escalating while it persists."""

from __future__ import annotations

from metacog.action import EDIT_TOOLS, FILE_TOOLS
from metacog.senses.signal import INTERRUPT, Signal, memory, short

NAME = "nociception"


def feel(win: dict, action: dict, ctx: object) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    retried = _retries(mem, action, cfg)
    if action.get("ok", True):
        if action["tool"] in EDIT_TOOLS and mem.get("count"):
            mem["edits"] = mem.get("edits", 0) + 1  # fixes between attempts keep the streak
        elif mem.get("count") and action["tool"] == mem.get("tool") and action["target"] == mem.get("target"):
            _resolve(mem, action, ctx)  # the very call that failed now works
            mem.update(sig="", count=0, edits=0, level=0)
        return None
    sig = identity(action)
    if sig != mem.get("sig"):
        if mem.get("count", 0) >= cfg["observe_at"]:
            _resolve(mem, action, ctx)
        mem.update(sig=sig, count=1, edits=0, level=0, tool=action["tool"], target=action["target"])
        return retried  # a different error: exploring, unless it is the same kind again and again
    mem["count"] = count = mem.get("count", 0) + 1
    mem["tool"], mem["target"] = action["tool"], action["target"]
    level = mem.get("level", 0)
    steps = (cfg["observe_at"], cfg["socratic_at"], cfg["directive_at"], cfg["person_at"])
    reached = sum(1 for at in steps if count >= at)
    if reached <= level:
        return retried
    # The cooldown: no new intervention before the model has answered the last one
    # (a parallel batch of failing calls would otherwise escalate four levels at once).
    # Without a transcript (replays, tests without one) the call counts alone decide.
    responses = (ctx.state.get("context") or {}).get("responses", 0)
    if level and responses and responses <= mem.get("said_at", 0):
        return retried
    mem["level"], mem["said_at"] = level + 1, responses
    return _say(level + 1, count, mem.get("edits", 0), action.get("sig", ""), ctx)


def identity(action: dict) -> str:
    """What makes two errors "the same error": the signature, and the target where the
    signature alone names nothing (a bare exit code) or where the file is the identity
    (Read of three different missing files is exploring, not a loop). A call Claude Code
    refused ("File has not been read yet") is the agent's own mistake: the same one on
    thirteen files is one loop (claude-code-viewer fe5e1c67 in the replays)."""
    sig = action.get("sig", "")
    if action.get("refused"):
        return sig
    named = [part for part in sig.split(" | ") if not part.startswith("exit ")]
    if action["tool"] in FILE_TOOLS or not named:
        return f"{action['tool']} {action['target']} | {sig}"
    return sig


def _say(level: int, count: int, edits: int, sig: str, ctx: object) -> Signal:
    what = f"the same error {count} times in a row"
    if edits:
        what += f", with {edits} edit{'s' if edits > 1 else ''} between attempts"
    quoted = f"`{short(sig, 110)}`"
    if level == 1:
        return Signal(NAME, f"{what}: {quoted}. What would show you the next change fixes it before you run it again?")
    readings = ctx.readings(exclude=NAME)
    context = f" ({readings})" if readings else ""
    if level == 2:
        return Signal(NAME, f"{what}: {quoted}{context}. Before writing more code: state the assumption you are "
                      "operating on, name one read-only action (read the source, the docs, print a value) that "
                      "would falsify it, and do that first.", INTERRUPT)
    if level == 3:
        return Signal(NAME, f"{what}: {quoted}{context}. Stop varying the same fix. Read the source or the "
                      "documentation of what fails, then change strategy: a different approach, not another variant.",
                      INTERRUPT)
    return Signal(NAME, f"{what}: {quoted}{context}. Stop here: tell the person what you tried, what failed each "
                  "time, and ask for guidance before continuing.", INTERRUPT,
                  person=f"metacog: the agent has hit the same error {count} times ({short(sig, 80)}) and was asked "
                  "to stop and ask you for guidance.")


def _retries(mem: dict, action: dict, cfg: dict) -> Signal | None:
    """One command failing again and again without passing, the same kind of error at a new place.

    Different errors are exploring; but a linter run seven times to fix seven
    occurrences one by one is worth one question (templar@779277eb10 in the replays).
    """
    runs = mem.setdefault("runs", {})
    key = f"{action['tool']} {action['target']}"
    if action.get("ok", True):
        runs.pop(key, None)  # it passed: red-green, not a loop
        return None
    from metacog.signature import kind

    run = runs.pop(key, None) or {"fails": 0, "kinds": {}, "said": False}
    run["fails"] += 1
    sort = kind(action.get("sig", ""))
    run["kinds"][sort] = run["kinds"].get(sort, 0) + 1
    if len(run["kinds"]) > 8:
        del run["kinds"][min(run["kinds"], key=run["kinds"].get)]
    runs[key] = run
    while len(runs) > 8:
        del runs[next(iter(runs))]
    top, same = max(run["kinds"].items(), key=lambda kv: kv[1])
    if run["said"] or run["fails"] < cfg["retry_at"] or same < cfg["retry_same_kind"]:
        return None
    if mem.get("sig") == identity(action) and mem.get("count", 0) + 1 >= run["fails"]:
        return None  # identical errors all along: the streak speaks for those (it counts this one next)
    run["said"] = True
    return Signal(NAME, f"{action['tool']} `{short(action['target'], 60)}` has failed {run['fails']} times without "
                  f"passing, {same} of them with the same kind of error at a new place (`{short(top, 70)}`). Would "
                  "listing every occurrence first and fixing them together be faster?")


def _resolve(mem: dict, action: dict, ctx: object) -> None:
    """A streak that had been noticed ended: remember what changed (motor learning)."""
    if mem.get("level", 0) >= 1:
        ctx.note("resolved", sig=mem.get("sig", ""), failed=mem.get("tool", ""), then=action["tool"],
                 same_target=action["target"] == mem.get("target"))


def reading(win: dict, ctx: object) -> str:
    mem = (win.get("senses") or {}).get(NAME) or {}
    count = mem.get("count", 0)
    return f"{count} similar errors in a row" if count >= 2 else ""
