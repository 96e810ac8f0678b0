"""O2: context filling fast (payload velocity) or nearly full (the transcript's real usage)."""

from __future__ import annotations

from metacog import transcript
from metacog.perception.tools import EDIT_TOOLS
from metacog.senses.signal import Signal, memory, peek, quote, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

NAME = "o2"
DEFAULTS = {
    "enabled": True,
    "velocity_factor": 3.0,
    "baseline_calls": 10,
    "recent_calls": 5,
    "min_recent_bytes": 60000,
    "velocity_cooldown_calls": 40,
    # A burst is said only when, at its pace, it would reach auto-compaction within this many
    # calls (where the transcript tells the context's level), as the level is (soon_calls): a
    # compaction 25 calls away is many decisions away, and two large results before it are
    # work, not pressure (at 25, bursts were half of what O2 said on quiet sessions).
    "velocity_horizon": 6,
    "fill_warn": 0.70,
    "soon_calls": 6,  # the level is said when compaction is this few calls away
    "context_window": 0,  # read by metacog.facts for the context's fill
}
LIMITS = {
    "velocity_factor": (1, 1000),
    "baseline_calls": (1, 1000),
    "recent_calls": (1, 20),
    "velocity_horizon": (1, 10_000),
    "fill_warn": (0.05, 1),
    "soon_calls": (1, 10_000),
}
LARGE = 15_000  # characters (~4K tokens): a call this size is "large"
CHARS_PER_TOKEN = 4  # of a tool's result, roughly: enough to tell 5 calls from 50
MIN_LARGE = 2  # a burst needs large results to name as its cause; many small ones are work


def feel(win: dict, action: Call, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    if action.tool in EDIT_TOOLS or not action.ok:
        mem["work"] = True  # something a compaction would lose: what changed, what failed
    said = _fill(mem, win, ctx, cfg) if ctx.is_main else ""
    said = said or _velocity(mem, win, ctx, cfg)
    return Signal(NAME, said) if said else None


def _velocity(mem: dict, win: dict, ctx: Context, cfg: dict) -> str:
    actions = ctx.calls
    calls = win.get("calls", 0)
    base_n = cfg["baseline_calls"]
    if calls <= base_n:
        mem["base_sum"] = mem.get("base_sum", 0) + (actions[-1].size if actions else 0)
        return ""
    baseline = max(mem.get("base_sum", 0) / base_n, 1)
    recent = actions[-cfg["recent_calls"] :]
    total = sum(a.size for a in recent)
    large = [a for a in recent if a.size >= LARGE]
    fast = (
        total / len(recent) >= cfg["velocity_factor"] * baseline
        and total >= cfg["min_recent_bytes"]
        and len(large) >= MIN_LARGE
    )
    if not fast or calls < mem.get("quiet_until", 0):
        return ""
    if ctx.tokens and ctx.context_window:
        pace = total / len(recent) / CHARS_PER_TOKEN
        if (transcript.autocompact_at(ctx.context_window) - ctx.tokens) / pace > cfg[
            "velocity_horizon"
        ]:
            return ""
    mem["quiet_until"] = calls + cfg["velocity_cooldown_calls"]
    reads = [a for a in large if a.tool == "Read"]
    if len(reads) >= MIN_LARGE:
        cause = f"{len(reads)} large file reads in the last {len(recent)} actions"
    else:
        biggest = max(large, key=lambda a: a.size)
        cause = (
            f"{len(large)} large results in the last {len(recent)} actions "
            f"(biggest: {biggest.tool} {quote(biggest.target, 40)})"
        )
    ratio = total / len(recent) / baseline
    return (
        f"context is filling {ratio:.0f}× faster than this session's baseline: {cause}. "
        "Could a subagent take the remaining exploration and report back only what matters?"
    )


SAMPLES_CAP = 8  # context readings kept to measure how fast it grows
RATE_SPAN = 20  # calls over which the growth per call is measured


def _fill(mem: dict, win: dict, ctx: Context, cfg: dict) -> str:
    """The context level, said only when it is news: when its growth over the last calls
    predicts auto-compaction within `soon_calls` calls, or when it is already at the edge.
    A session at 70% that grows slowly ends well; saying its level was most of what metacog
    said on quiet sessions (issue 17, class 5)."""
    tokens, window, fill = ctx.tokens, ctx.context_window, ctx.fill  # metacog.facts
    if not tokens:
        return ""
    calls = win.get("calls", 0)
    samples = mem.get("samples")
    if not isinstance(samples, list):
        samples = mem["samples"] = []
    if not samples or samples[-1][1] != tokens:
        samples.append([calls, tokens])
        del samples[:-SAMPLES_CAP]
    if fill < cfg["fill_warn"] or mem.get("fill_level", 0):
        return ""
    compact_at = transcript.autocompact_at(window)
    past = [s for s in samples if isinstance(s, list) and len(s) == 2 and calls - s[0] <= RATE_SPAN]
    rate = (tokens - past[0][1]) / (calls - past[0][0]) if past and calls > past[0][0] else 0.0
    left = (compact_at - tokens) / rate if rate > 0 else float("inf")
    at_edge = tokens >= compact_at - window * 0.02
    if not at_edge and left > cfg["soon_calls"]:
        return ""
    if not mem.get("work"):
        # Nothing edited and nothing failed since the person spoke: the compaction drops
        # reading, which the files still hold, and "write the state of the work down" has
        # nothing to write.
        return ""
    mem["fill_level"] = 1
    used = f"{tokens // 1000}K of {window // 1000}K tokens ({fill:.0%})"
    pace = f", growing about {rate / 1000:.1f}K per call" if rate > 0 and not at_edge else ""
    when = f"in about {max(int(left), 1)} calls" if pace else "soon"
    return (
        f"context is {used}{pace}: auto-compaction near {compact_at // 1000}K starts {when} and "
        "will drop the detail of this session. What must survive it? Write the state of the work down now."
    )


def on_compaction(win: dict, ctx: Context) -> str:
    """The real fill starts again from the next response: each level may be said anew. The
    note: what the agent had read most before its memory was compacted."""
    mem = peek(win, NAME)
    mem.pop("fill_level", None)
    mem.pop("samples", None)
    # A file read once was read, not relied on: only what the work kept coming back to.
    top = [(path, seen) for path, seen in ctx.most_read(3) if seen >= 2]
    if not top:
        return ""
    files = ", ".join(f"{short(path.rsplit('/', 1)[-1], 40)} ({seen}×)" for path, seen in top)
    return (
        f"the context was just compacted. Before it you had read most: {files}. "
        "Re-read only what the next step needs."
    )


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: what the work holds to write down counts from their request."""
    peek(win, NAME).pop("work", None)


def reading(win: dict, ctx: Context) -> str:
    if not ctx.tokens:
        return ""
    return f"context {ctx.tokens // 1000}K/{ctx.context_window // 1000}K ({ctx.fill:.0%})"
