"""The in-session nervous system: run every sense over one action and say at most one thing.

Layer 1 combines the observations of the senses that fired into one short message;
Layer 2 (an interrupt) leads with the interrupt and carries the other readings.
"""

from __future__ import annotations

from metacog.senses import SENSES
from metacog.senses.signal import INTERRUPT, Signal, forget

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.event import Event

PREFIX = "metacog: "


class Context:
    """What a sense may consult besides its window: settings, the session, the moment."""

    def __init__(
        self,
        cfg: dict,
        state: dict,
        win: dict,
        event: Event,
        now: float,
        state_dir: str = "",
        root: str = "",
    ) -> None:
        self.cfg = cfg
        self.state = state
        self.win = win
        self.event = event
        self.now = now
        self.state_dir = state_dir
        self.root = root
        self.notes: list[dict] = []
        self.fired: list[str] = []  # the senses that spoke so far on this call, in SENSES order
        self.is_main = win is state["windows"].get("main")

    def readings(self, exclude: tuple[str, ...] = ()) -> str:
        parts = []
        for sense in SENSES:
            if sense.NAME in exclude or not self.cfg[sense.NAME]["enabled"]:
                continue
            value = sense.reading(self.win, self)
            if value:
                parts.append(value)
        return "; ".join(parts)

    def note(self, kind: str, **fields: object) -> None:
        """Something worth remembering across sessions (episodes, lessons)."""
        self.notes.append({"kind": kind, **fields})


def feel(win: dict, action: dict, ctx: Context) -> list[Signal]:
    signals = []
    for sense in SENSES:
        if ctx.cfg[sense.NAME]["enabled"]:
            try:
                signal = sense.feel(win, action, ctx)
            except Exception as exc:  # noqa: BLE001 - one broken sense must not silence the others
                from metacog.fsutil import log_error

                log_error(ctx.state_dir, f"sense {sense.NAME} failed: {type(exc).__name__}: {exc}")
                forget(win, sense.NAME)  # its memory may be what broke it
                continue
            if signal is not None:
                signals.append(signal)
                ctx.fired.append(sense.NAME)
    return signals


def heard(win: dict, prompt: str, now: float) -> None:
    """The person spoke: each sense that keeps one resets what it had counted since."""
    for sense in SENSES:
        on_prompt = getattr(sense, "on_prompt", None)
        if on_prompt is not None:
            on_prompt(win, prompt, now)


def compacted(win: dict) -> None:
    """The context was compacted: each sense that keeps one forgets what no longer holds."""
    for sense in SENSES:
        on_compaction = getattr(sense, "on_compaction", None)
        if on_compaction is not None:
            on_compaction(win)


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
