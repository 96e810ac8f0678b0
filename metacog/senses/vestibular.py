"""Vestibular: going in circles: the same action, the same two or three steps, the same file."""

from __future__ import annotations

import re

from metacog.action import EDIT_TOOLS
from metacog.senses.signal import Signal, forget, memory, number, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.nervous import Context

NAME = "vestibular"
READS_CAP = 200  # files tracked per window
CYCLE_LENGTHS = (2, 3)
AGAIN_SPAN = 8  # calls in which the same action with the same result, scattered, is circling
AGAIN_AT = 3
AGAIN_SAID_CAP = 16
# A shell command that changes files or the repository (`sed -i`, a redirect, `git checkout`).
_WRITES = re.compile(
    r"sed -i|\b(?:cat|echo|printf)\b[^|]*>|\btee\b|\bpatch\b|\b(?:mv|cp|rm|touch)\b|git (?:apply|checkout|reset|"
    r"restore|stash|commit|merge|rebase|pull|switch)|\b(?:npm|pip|uv|yarn|pnpm) (?:i|install|add)\b"
)


REPEAT_WORDS = frozenset(("repeat", "repeatedly", "poll", "polling", "retry", "rerun", "re-run"))
COUNT_WORDS = frozenset(
    (
        "twice",
        "thrice",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "several",
        "many",
        "multiple",
        "few",
    )
)


def asked_to_repeat(prompt: str) -> bool:
    """Whether the person's request asks for repetition ("run it 5 times", "poll the job").

    Words, not substrings: "don't stop until it passes" or "sometimes" ask for nothing.
    """
    words = [w.strip(".,;:!?()'\"`") for w in prompt[:4000].lower().split()]
    if any(w in REPEAT_WORDS for w in words):
        return True
    return any(
        w == "times" and i > 0 and (words[i - 1].isdigit() or words[i - 1] in COUNT_WORDS)
        for i, w in enumerate(words)
    )


def _step(action: dict) -> tuple:
    # A repeat counts only when the result repeats too: polling whose output changes is progress.
    return (action["tool"], action["target"], action.get("result", 0))


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    cfg = ctx.cfg[NAME]
    mem = memory(win, NAME)
    calls = win.get("calls", 0)
    reread = _reads(mem, action, cfg)
    actions = win.get("actions") or []
    repeat = _repeat(actions)
    mem["repeat"] = repeat
    if calls - mem.get("quiet_until", -1) < 0:
        return None  # counted above, said later: a re-read warning is not used up in the cooldown
    if reread:
        seen, text = reread
        seen[1] = seen[0]
        mem["quiet_until"] = calls + cfg["cooldown_calls"]
        return Signal(NAME, text)
    asked = bool(mem.get("asked_repeat"))  # the person asked for repetition: none of it is circling
    if repeat >= cfg["same_action"] and action.get("ok", True) and not asked:
        if repeat % cfg["same_action"] == 0:
            mem["quiet_until"] = calls + cfg["cooldown_calls"]
            return Signal(
                NAME,
                f"{action['tool']} `{short(action['target'])}` {repeat} times in a row with the "
                "same result. What do you expect to be different next time?",
            )
        return None
    again = _again(actions)
    if again and action.get("ok", True) and not asked:
        key = f"{action['tool']} {action['target']}"[:200]
        said = mem.setdefault("again_said", [])
        if key not in said:
            said.append(key)
            del said[:-AGAIN_SAID_CAP]
            mem["quiet_until"] = calls + cfg["cooldown_calls"]
            return Signal(
                NAME,
                f"{action['tool']} `{short(action['target'])}` {again} times in the last "
                f"{AGAIN_SPAN} calls with the same result and nothing edited between. What do you "
                "expect it to show next time?",
            )
    cycle = _cycle(actions, cfg["cycle_repeats"]) if not asked else None
    if cycle:
        mem["quiet_until"] = calls + cfg["cooldown_calls"]
        steps = " → ".join(f"{tool} `{short(target, 40)}`" for tool, target, _ in cycle)
        return Signal(
            NAME,
            f"the same {len(cycle)} steps {cfg['cycle_repeats']} times over with unchanged results: "
            f"{steps}. What would break the cycle?",
        )
    return None


def _reads(mem: dict, action: dict, cfg: dict) -> tuple[list, str] | None:
    """Count reads of each file (and range) since its last edit; an edit resets it.

    Results are not compared: Claude Code may answer a re-read of an unchanged file
    with a short stub, which would make the second read look like new content.
    """
    path = action.get("path") or ""
    if not path:
        return None
    reads = mem.setdefault("reads", {})
    if action["tool"] != "Read":
        if action["tool"] in EDIT_TOOLS:
            for key in [k for k in reads if k == path or k.startswith(path + "@")]:
                del reads[key]
        return None
    if not action.get("ok", True):
        return None
    key = path + action["target"][len(action["target"].split("@", 1)[0]) :]
    seen = reads.pop(key, None)
    if not isinstance(seen, list) or len(seen) != 2:
        seen = [0, 0]  # reads, reads when last said
    seen[0] += 1
    reads[key] = seen  # re-inserted: the dict stays in least-recently-read order
    if len(reads) > READS_CAP:
        del reads[next(iter(reads))]
    mem["max_reads"] = max(mem.get("max_reads", 0), seen[0])
    if seen[0] >= cfg["same_read"] and seen[0] >= 2 * seen[1]:
        return seen, (
            f"you have read {short(action['target'])} {seen[0]} times without editing it. "
            "What are you looking for that the earlier reads did not show?"
        )
    return None


def _repeat(actions: list) -> int:
    if not actions:
        return 0
    last = _step(actions[-1])
    count = 0
    for past in reversed(actions):
        if _step(past) != last:
            break
        count += 1
    return count


def _again(actions: list) -> int:
    """How often the last action, with its result, came in the last AGAIN_SPAN calls with
    other calls between and no edit since its first time there (0 below AGAIN_AT): asking
    the same question of a world that did not change. Reads are Vestibular's re-reads."""
    if not actions or actions[-1]["tool"] in ("Read", "TodoWrite") or _repeat(actions) > 1:
        return 0
    last = _step(actions[-1])
    recent = actions[-AGAIN_SPAN:]
    first = next(i for i, a in enumerate(recent) if _step(a) == last)
    if any(
        a["tool"] in EDIT_TOOLS or (a["tool"] == "Bash" and _WRITES.search(a["target"]))
        for a in recent[first:]
    ):
        return 0  # something changed between: asking again is checking, not circling
    count = sum(1 for a in recent[first:] if _step(a) == last)
    others = {_step(a) for a in recent[first:]} - {last}
    if len(others) < 2:
        return 0  # A, B, A, B, A: a two-step cycle, which _cycle names whole on the next call
    return count if count >= AGAIN_AT else 0


def _cycle(actions: list, repeats: int) -> list | None:
    for length in CYCLE_LENGTHS:
        span = length * repeats
        if len(actions) < span:
            continue
        steps = [_step(a) for a in actions[-span:]]
        unit = steps[:length]
        if len(set(unit)) < length:
            continue  # A, A is a repeat, not a cycle
        if all(steps[i] == unit[i % length] for i in range(span)):
            return unit
    return None


def reading(win: dict, ctx: Context) -> str:
    mem = peek(win, NAME)
    parts = []
    if mem.get("repeat", 0) >= 2:
        parts.append(f"last action repeated {mem['repeat']}×")
    if mem.get("max_reads", 0) >= 2:
        parts.append(f"most reads of one unchanged file: {mem['max_reads']}")
    return ", ".join(parts)


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """The person spoke: repeats count from their latest word, and some words ask for them."""
    forget(win, NAME)
    memory(win, NAME)["asked_repeat"] = asked_to_repeat(prompt)  # a flag, never the words


def on_compaction(win: dict) -> None:
    """Re-reading after a compaction is recovery, not circling."""
    peek(win, NAME).pop("reads", None)


def asked_repeat(win: dict) -> bool:
    return bool(peek(win, NAME).get("asked_repeat"))


def counts(win: dict) -> tuple[int, int]:
    """(most reads of one unchanged file, repeats of the last action), for the summary."""
    mem = peek(win, NAME)
    return number(mem.get("max_reads")), number(mem.get("repeat"))


def most_read(win: dict, n: int) -> list[tuple[str, int]]:
    """The n files (and ranges) read most since their last edit, with their counts."""
    reads = peek(win, NAME).get("reads") or {}
    seen = [
        (path, v[0])
        for path, v in reads.items()
        if isinstance(v, list) and v and isinstance(v[0], int)
    ]
    return sorted(seen, key=lambda kv: -kv[1])[:n]
