"""What a sense is, and what it is handed: the `Sense` protocol and the per-call `Context`.

A sense is a module of `metacog.senses` listed once in `SENSES`. It declares:

- `NAME`, and a one-line docstring saying what it feels;
- `DEFAULTS`, its settings section (`enabled` among them), and `LIMITS`, the bounds of its
  numbers: metacog.schema assembles both from `SENSES` (metacog.config imports no sense), so
  the section exists once, here;
- `feel(win, action, ctx) -> Signal | None` (`action` is this call's record, a
  metacog.perception.call.Call; `ctx.calls` the window's last calls, this one last) and
  `reading(win, ctx) -> str`;
- optionally `on_prompt(win, prompt, now)` (the person spoke), `on_compaction(win, ctx) -> str`
  (the context was compacted; a note for the agent, or ''), and
  `after_subagent(win, ctx) -> str` (the subagent whose window this is finished; what the
  main agent should hear of it, or '').

A sense keeps its own memory (`metacog.senses.signal.memory`) and reads nobody else's; no
sense imports another. What several senses or the session summary need (a repeat the person
asked for, active time, reads per file, context fill, the failure's identity, the error
streak) is a fact the nervous system computes once per call (metacog.facts) before any sense
feels, whether or not the sense that first needed it is enabled, and hands over here.
"""

from __future__ import annotations

from metacog.perception.call import Call, window_calls

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from typing import Any, Protocol

    from metacog.event import Event
    from metacog.senses.signal import Signal

    class Sense(Protocol):
        """A sense module, as the type checker sees it (the optional hooks are looked up)."""

        NAME: str
        DEFAULTS: dict[str, object]
        LIMITS: dict[str, tuple[float, float]]

        def feel(self, win: dict, action: Call, ctx: Context) -> Signal | None: ...

        def reading(self, win: dict, ctx: Context) -> str: ...


class Streak:
    """The same error, attempt after attempt, in one window (metacog.facts keeps it)."""

    __slots__ = ("count", "edits", "sig", "target", "tool")

    def __init__(
        self, sig: str = "", count: int = 0, edits: int = 0, tool: str = "", target: str = ""
    ) -> None:
        self.sig, self.count, self.edits, self.tool, self.target = sig, count, edits, tool, target


NO_STREAK = Streak()


class Problem:
    """One kind of problem a failure names (metacog.perception.symptoms.problems; a list on disk): its
    kind (`sort`), `checksum` (of its first line with its place in the file: the same
    finding, or the same kind at a new place), how many `lines` of that kind, that `line`."""

    __slots__ = ("checksum", "line", "lines", "sort")

    def __init__(self, sort: str, checksum: int, lines: int, line: str) -> None:
        self.sort, self.checksum, self.lines, self.line = sort, checksum, lines, line


def problems_of(action: Call) -> list[Problem]:
    """The problems this call's failure names, as records (metacog.perception.symptoms read
    them; the window's stored calls keep none)."""
    return [Problem(*item) for item in action.problems or ()]


class Context:
    """What a sense may consult besides its window: settings, the session, the moment, and
    the facts of this call (filled by metacog.facts before any sense feels)."""

    # Handed over by metacog.nervous, which may import what no sense does: the senses (whose
    # readings `readings` gathers) and metacog.recall (the learning layer, as Reflex asks it).
    senses: tuple = ()
    recall: Any = None

    def __init__(
        self,
        cfg: dict,
        state: dict,
        win: dict,
        event: Event | None = None,
        now: float = 0.0,
        state_dir: str = "",
        root: str = "",
    ) -> None:
        self.cfg = cfg
        self.state = state
        self.win = win
        self.event = event  # None outside a tool call (status, compaction, a subagent's end)
        self.now = now
        self.state_dir = state_dir
        self.root = root
        self.notes: list[dict] = []
        self.fired: list[str] = []  # the senses that spoke so far on this call, in SENSES order
        windows = state.get("windows")
        self.is_main = isinstance(windows, dict) and win is windows.get("main")
        # The facts (metacog.facts): read back from the window by `recall`, brought up to
        # date with the call by `update`.
        self.asked_repeat = False  # the person's latest request asks for repetition
        self.active_s = 0.0  # seconds the main agent worked since the person spoke
        self.reads: dict[str, int] = {}  # reads of each file (and range) since its last edit
        self.read_key = ""  # what this call read, '' if it read nothing
        self.max_reads = 0  # most reads of one unchanged file since the person spoke
        self.repeat = 0  # the last action (with its result) this many times in a row
        self.identity = ""  # what makes this failure "the same error" ('' for a success)
        self.streak = NO_STREAK
        self.streak_grew = False  # this call was the streak's next attempt
        self.streak_ended: Streak | None = None  # the streak this call ended, if it did
        self.responses = 0  # model responses in the transcript so far (0 without one)
        self.tokens = 0  # the context's real usage (the transcript's), 0 when unknown
        self.context_window = 0  # the model's context window, in tokens (ctx.win is the window)
        self.fill = 0.0  # tokens / window
        self.gain = 0.0  # share of this call's result lines the window had not shown lately
        self.news = 0  # of those new lines, how many name something (a path, a name, a code)
        # This call failed, was refused, or a question came back empty; or it passed showing only
        # what failures had shown (metacog.perception.novelty).
        self.obstacle = False
        # The window's recent obstacles not overcome since, oldest first: (call number, model
        # turn, gain, new lines that name something, whether it was an empty answer, new lines,
        # the wall it met: metacog.perception.novelty.wall, 0 where unknown).
        self.obstacles: list[tuple[int, int, float, int, bool, int, int]] = []
        self._calls: list[Call] | None = None  # the window's calls once asked: `calls`
        self._reach: tuple = (None, None)  # (the action, its reach) once asked: `reach`
        self.terms: list[str] = []  # the names the person's request mentioned
        self.touched = False  # this call touched one of them
        self.on_track = False  # the work has touched one of them since the request

    @property
    def following(self) -> bool:
        """The request named things and the work has touched them."""
        return bool(self.terms) and self.on_track

    @property
    def calls(self) -> list[Call]:
        """The window's last calls as records, oldest first, this one last (read from the
        window's stored form once a call, on first asking)."""
        if self._calls is None:
            self._calls = window_calls(self.win)
        return self._calls

    def most_read(self, n: int) -> list[tuple[str, int]]:
        """The n files (and ranges) read most since their last edit, with their counts."""
        return sorted(self.reads.items(), key=lambda kv: -kv[1])[:n]

    def readings(self, exclude: tuple[str, ...] = ()) -> str:
        parts = []
        for sense in self.senses:
            section = self.cfg.get(sense.NAME)
            if sense.NAME in exclude or not isinstance(section, dict) or not section["enabled"]:
                continue
            value = sense.reading(self.win, self)
            if value:
                parts.append(value)
        return "; ".join(parts)

    def reach(self, action: Call) -> tuple[str, list[str]] | None:
        """(the file this call edited, relative to the root, the files that import it), or None
        (metacog.perception.reach). Computed on first asking, once a call, whichever sense or
        the summary asks: a fact of the edit, not a note one sense leaves another."""
        if self._reach[0] is not action:
            from metacog.perception.reach import importers

            self._reach = (action, importers(self.win, action, self))
        return self._reach[1]

    def wide_edit(self, action: Call, ask: bool = True) -> bool:
        """Whether this call edited a file that at least Spatial's `min_importers` files import;
        `ask` false: only where the reach is known already (nothing computed for it)."""
        if not ask and self._reach[0] is not action:
            return False
        reach = self.reach(action)
        return reach is not None and len(reach[1]) >= self.cfg["spatial"]["min_importers"]

    def brought_nothing(self, obstacle: tuple) -> bool:
        """Whether an obstacle of `obstacles` brought nothing new: at most Nociception's share
        of new lines and of new lines that name something (thresholds fitted for it by
        benchmarks/fit_stale.py), whichever sense asks. (An obstacle with no new line at all,
        `obstacle[5] == 0`, is one of these: its share is 0.)"""
        cfg = self.cfg["nociception"]
        return obstacle[2] <= cfg["stale_gain"] and obstacle[3] <= cfg["stale_news"]

    def note(self, kind: str, **fields: object) -> None:
        """Something worth remembering across sessions (episodes, lessons)."""
        self.notes.append({"kind": kind, **fields})
