"""O2: context filling fast (payload velocity) or nearly full (the transcript's real usage)."""

from __future__ import annotations

from metacog import transcript
from metacog.senses.signal import Signal, memory, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.senses.contract import Context

NAME = "o2"
DEFAULTS = {
    "enabled": True,
    "velocity_factor": 3.0,
    "baseline_calls": 10,
    "recent_calls": 5,
    "min_recent_bytes": 60000,
    "velocity_cooldown_calls": 40,
    "fill_warn": 0.70,
    "context_window": 0,  # read by metacog.facts for the context's fill
}
LIMITS = {
    "velocity_factor": (1, 1000),
    "baseline_calls": (1, 1000),
    "recent_calls": (1, 20),
    "fill_warn": (0.05, 1),
}
LARGE = 15_000  # characters (~4K tokens): a call this size is "large"
MIN_LARGE = 2  # a burst needs large results to name as its cause; many small ones are work


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    said = _fill(mem, ctx, cfg) if ctx.is_main else ""
    said = said or _velocity(mem, win, cfg)
    return Signal(NAME, said) if said else None


def _velocity(mem: dict, win: dict, cfg: dict) -> str:
    actions = win.get("actions") or []
    calls = win.get("calls", 0)
    base_n = cfg["baseline_calls"]
    if calls <= base_n:
        mem["base_sum"] = mem.get("base_sum", 0) + (actions[-1].get("size", 0) if actions else 0)
        return ""
    baseline = max(mem.get("base_sum", 0) / base_n, 1)
    recent = actions[-cfg["recent_calls"] :]
    total = sum(a.get("size", 0) for a in recent)
    large = [a for a in recent if a.get("size", 0) >= LARGE]
    fast = (
        total / len(recent) >= cfg["velocity_factor"] * baseline
        and total >= cfg["min_recent_bytes"]
        and len(large) >= MIN_LARGE
    )
    if not fast or calls < mem.get("quiet_until", 0):
        return ""
    mem["quiet_until"] = calls + cfg["velocity_cooldown_calls"]
    reads = [a for a in large if a["tool"] == "Read"]
    if len(reads) >= MIN_LARGE:
        cause = f"{len(reads)} large file reads in the last {len(recent)} actions"
    else:
        biggest = max(large, key=lambda a: a.get("size", 0))
        cause = (
            f"{len(large)} large results in the last {len(recent)} actions "
            f"(biggest: {biggest['tool']} `{short(biggest['target'], 40)}`)"
        )
    ratio = total / len(recent) / baseline
    return (
        f"context is filling {ratio:.0f}× faster than this session's baseline: {cause}. "
        "Could a subagent take the remaining exploration and report back only what matters?"
    )


def _fill(mem: dict, ctx: Context, cfg: dict) -> str:
    tokens, window, fill = ctx.tokens, ctx.window, ctx.fill  # metacog.facts
    if not tokens:
        return ""
    compact_at = transcript.autocompact_at(window)
    level = 2 if tokens >= compact_at - window * 0.05 else 1 if fill >= cfg["fill_warn"] else 0
    if level <= mem.get("fill_level", 0):
        return ""
    mem["fill_level"] = level
    used = f"{tokens // 1000}K of {window // 1000}K tokens ({fill:.0%})"
    if level == 1:
        return f"context is {used}. What could you hand to a subagent, or finish, before it fills?"
    return (
        f"context is {used}; auto-compaction starts near {compact_at // 1000}K and will drop the detail of "
        "this session. What must survive it? Write the state of the work down now."
    )


def on_compaction(win: dict, ctx: Context) -> str:
    """The real fill starts again from the next response: each level may be said anew. The
    note: what the agent had read most before its memory was compacted."""
    peek(win, NAME).pop("fill_level", None)
    top = ctx.most_read(3)
    if not top:
        return ""
    files = ", ".join(f"{short(path.rsplit('/', 1)[-1], 40)} ({seen}×)" for path, seen in top)
    return (
        f"the context was just compacted. Before it you had read most: {files}. "
        "Re-read only what the next step needs."
    )


def reading(win: dict, ctx: Context) -> str:
    if not ctx.tokens:
        return ""
    return f"context {ctx.tokens // 1000}K/{ctx.window // 1000}K ({ctx.fill:.0%})"
