"""The in-session nervous system: run every sense over one action and say at most one thing.

Layer 1 combines the observations of the senses that fired into one short message;
Layer 2 (an interrupt) leads with the interrupt and carries the other readings.
"""

from __future__ import annotations

from metacog import facts, recall
from metacog.senses import SENSES
from metacog.senses.contract import Context
from metacog.senses.signal import INTERRUPT, Signal, forget

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Sense

PREFIX = "metacog: "
__all__ = ("PREFIX", "Context", "after_subagent", "compacted", "compose", "feel", "heard")
# What a Context hands every sense besides the call (metacog.senses.contract): the senses
# import neither their tuple nor the learning layer, whose detectors read the senses.
Context.senses = SENSES
Context.recall = recall


def _log(ctx: Context, message: str) -> None:
    from metacog.fsutil import log_error

    log_error(ctx.state_dir, message)


def _failed(ctx: Context, what: str, exc: Exception) -> None:
    """A failure contained here: a line in metacog.log and, in tests, a record that fails the
    test it happened in (metacog.fsutil.strict)."""
    from metacog.fsutil import strict

    _log(ctx, f"{what} failed: {type(exc).__name__}: {exc}")
    strict(what, exc)


def _enabled(sense: Sense, ctx: Context) -> bool:
    """Whether a sense is on; a sense without a settings section is skipped with a log line
    (indexing it would raise outside the per-sense guard and silence every call)."""
    section = ctx.cfg.get(sense.NAME)
    if not isinstance(section, dict) or "enabled" not in section:
        _log(ctx, f"sense {sense.NAME} has no settings section: skipped")
        return False
    return bool(section["enabled"])


def feel(win: dict, action: Call, ctx: Context) -> list[Signal]:
    try:
        facts.update(win, action, ctx)
    except Exception as exc:  # noqa: BLE001 - damaged facts must not silence the senses
        _failed(ctx, "facts", exc)
        win.pop("facts", None)  # what broke them is set aside; they count afresh
        facts.recall(ctx)
    signals = []
    for sense in SENSES:
        if not _enabled(sense, ctx):
            continue
        try:
            signal = sense.feel(win, action, ctx)
        except Exception as exc:  # noqa: BLE001 - one broken sense must not silence the others
            _failed(ctx, f"sense {sense.NAME}", exc)
            forget(win, sense.NAME)  # its memory may be what broke it
            continue
        if signal is not None:
            signals.append(signal)
            ctx.fired.append(sense.NAME)
    return signals


def heard(win: dict, prompt: str, now: float) -> None:
    """The person spoke: the facts and each sense that keeps a count start afresh."""
    facts.heard(win, prompt, now)
    for sense in SENSES:
        on_prompt = getattr(sense, "on_prompt", None)
        if on_prompt is not None:
            on_prompt(win, prompt, now)


def _each(hook: str, ctx: Context) -> list[str]:
    """What the enabled senses that have `hook` say of the window, in SENSES order."""
    said = []
    for sense in SENSES:
        call = getattr(sense, hook, None)
        if call is None or not _enabled(sense, ctx):
            continue
        try:
            text = call(ctx.win, ctx)
        except Exception as exc:  # noqa: BLE001 - one broken sense must not silence the others
            _failed(ctx, f"sense {sense.NAME} {hook}", exc)
            continue
        if text:
            said.append(text)
    return said


def compacted(ctx: Context) -> list[str]:
    """The context was compacted: each sense forgets what no longer holds and may leave a
    note for the agent (read before the facts forget what was read)."""
    facts.recall(ctx)
    notes = _each("on_compaction", ctx)
    facts.compacted(ctx.win)
    return notes


def after_subagent(ctx: Context) -> list[str]:
    """The subagent whose window `ctx` holds finished: what the main agent should hear."""
    facts.recall(ctx)
    return _each("after_subagent", ctx)


def compose(signals: list[Signal]) -> tuple[str, str]:
    """(text for the agent, text for the person) from this call's signals."""
    if not signals:
        return "", ""
    interrupts = [s for s in signals if s.level >= INTERRUPT]
    lead = interrupts[:1] or []
    rest = [s for s in signals if s not in lead]
    agent = " ".join(s.text for s in lead + rest)
    person = next((s.person for s in signals if s.person), "")
    return PREFIX + agent, person
