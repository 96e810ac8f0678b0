"""The facts of a window that several senses and the session summary need, kept in one place.

The nervous system brings them up to date with each call before any sense feels, whichever
senses are enabled, and hands them over in the Context (metacog.senses.contract): a sense
switched off (or failing) takes nothing from the others. They live in the window under
"facts" (plus the window's "active_s" and "prompt_at"), never in a sense's memory.
"""

from __future__ import annotations

from metacog import transcript
from metacog.perception import novelty
from metacog.perception.tools import DELEGATING_TOOLS, EDIT_TOOLS
from metacog.senses.contract import NO_STREAK, Streak
from metacog.senses.signal import number
from metacog.senses.signal import turn as turn_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call
    from metacog.senses.contract import Context

IDLE_GAP_S = (
    300  # a longer pause between two calls is waiting (for the person, a permission), not working
)
READS_CAP = 200  # files tracked per window
TERMS_CAP = 24
_PUNCT = "`'\"()[]{}<>,;:!?"
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


def _without_tags(text: str) -> str:
    """The request without <tag>…</tag> blocks an IDE or a tool wraps around it."""
    out, depth, i = [], 0, 0
    while i < len(text):
        if text[i] == "<":
            end = text.find(">", i)
            if end > i and (text[i + 1 : i + 2].isalpha() or text[i + 1 : i + 2] == "/"):
                depth += -1 if text[i + 1] == "/" else (0 if text[end - 1] == "/" else 1)
                depth = max(depth, 0)
                out.append(" ")
                i = end + 1
                continue
        if depth == 0:
            out.append(text[i])
        i += 1
    return "".join(out)


def terms_of(prompt: str) -> list[str]:
    """Names in a request worth following: paths, file names, code identifiers.

    Only these short terms are kept, never the prompt itself.
    """
    found: list[str] = []
    for word in _without_tags(prompt[:20000]).split():
        word = word.strip(_PUNCT + "*~").rstrip(".").strip(_PUNCT + "*~")
        # Extensions alone (".zip"), decorators ("@pytest"), rules of underscores: not names.
        if (
            len(word) < 4
            or len(word) > 80
            or not word[0].isalnum()
            or sum(c.isalnum() for c in word) < 4
        ):
            continue
        is_path = "/" in word or (
            "." in word and word.rsplit(".", 1)[-1].isalnum() and not word.endswith(".")
        )
        is_code = "_" in word or (word[0].islower() and any(c.isupper() for c in word[1:]))
        if (is_path or is_code) and "://" not in word:
            term = (word.rsplit("/", 1)[-1] if is_path else word).lower()
            if len(term) >= 4 and term not in found:
                found.append(term)
        if len(found) >= TERMS_CAP:
            break
    return found


def _store(win: dict) -> dict:
    facts = win.get("facts")
    if not isinstance(facts, dict):
        facts = win["facts"] = {}
    return facts


def _streak(raw: object) -> Streak:
    if not isinstance(raw, dict) or not number(raw.get("count")):
        return NO_STREAK
    return Streak(
        str(raw.get("sig", "")),
        number(raw.get("count")),
        number(raw.get("edits")),
        str(raw.get("tool", "")),
        str(raw.get("target", "")),
    )


def recall(ctx: Context) -> None:
    """The facts as the window holds them, without changing it (status, compaction, a
    subagent's end, and the start of every call)."""
    win = ctx.win
    facts = win.get("facts")
    facts = facts if isinstance(facts, dict) else {}
    ctx.asked_repeat = facts.get("asked") is True
    active = win.get("active_s", 0.0)
    ctx.active_s = float(active) if isinstance(active, (int, float)) else 0.0
    reads = facts.get("reads")
    ctx.reads = {k: v for k, v in reads.items() if number(v)} if isinstance(reads, dict) else {}
    ctx.max_reads = number(facts.get("max_reads"))
    ctx.repeat = _repeat(ctx.calls)
    ctx.streak = _streak(facts.get("streak"))
    terms = facts.get("terms")
    ctx.terms = [t for t in terms if isinstance(t, str)] if isinstance(terms, list) else []
    ctx.on_track = facts.get("on_track") is True
    _fill(ctx)


def _fill(ctx: Context) -> None:
    context = ctx.state.get("context") or {}
    if not isinstance(context, dict):
        context = {}
    ctx.responses = number(context.get("responses"))
    tokens = context.get("tokens", 0)
    if not tokens or not isinstance(tokens, int):
        ctx.tokens, ctx.context_window, ctx.fill = 0, 0, 0.0
        return
    section = ctx.cfg.get("o2")
    setting = section.get("context_window", 0) if isinstance(section, dict) else 0
    ctx.tokens = tokens
    # The model's window, widened by what this session's context has held (past 200K: 1M),
    # so that no level is said against a window the session already outgrew.
    window = transcript.context_window(context.get("model", ""), setting)
    ctx.context_window = transcript.outgrown(window, max(number(context.get("held")), tokens))
    ctx.fill = tokens / ctx.context_window


def update(win: dict, action: Call, ctx: Context) -> None:
    """Bring the facts up to date with this call (pushed into the window already)."""
    recall(ctx)
    facts = _store(win)
    if ctx.is_main:
        _active(win, facts, action, ctx)
    _reads(facts, action, ctx)
    if not action.ok:
        from metacog.perception.symptoms import identity  # failures only: a Read need not load it

        ctx.identity = identity(action)
    _streak_update(win, facts, action, ctx)
    read = novelty.update(win, action, list(action.prints), list(action.named), ctx.is_main)
    ctx.gain, ctx.news, ctx.obstacle, ctx.obstacles = (
        read.gain,
        read.news,
        read.obstacle,
        read.obstacles,
    )
    if ctx.is_main and ctx.terms:
        ctx.touched = any(term in action.target.lower() for term in ctx.terms)
        if ctx.touched:
            ctx.on_track = facts["on_track"] = True


def _active(win: dict, facts: dict, action: Call, ctx: Context) -> None:
    """Seconds of work since the person spoke: the gaps between calls, less waiting."""
    duration = ctx.event.duration_ms / 1000 if ctx.event is not None else 0.0
    prompt_at = win.get("prompt_at", ctx.now)
    if not isinstance(prompt_at, (int, float)):
        # The window's own key: setting the facts aside (metacog.nervous) would not mend it.
        prompt_at = win["prompt_at"] = ctx.now
    last = facts.get("last_ts") or prompt_at
    gap = max(0.0, ctx.now - last)
    if action.tool in DELEGATING_TOOLS:
        # The gap before a delegating call's hook is mostly the subagent's own work,
        # which is not the main agent grinding; only what lies outside it counts.
        gap = max(0.0, gap - duration)
    # A pause longer than IDLE_GAP_S is waiting (for the person, a permission), not
    # working: replays showed "1 call and 335 minutes" where the person was away. Of such
    # a pause only the call's own run time counts.
    if gap > IDLE_GAP_S:
        gap = min(duration, IDLE_GAP_S)
    ctx.active_s = win["active_s"] = ctx.active_s + gap
    facts["last_ts"] = ctx.now


def _reads(facts: dict, action: Call, ctx: Context) -> None:
    """Count reads of each file (and range) since its last edit; an edit resets it.

    Results are not compared: Claude Code may answer a re-read of an unchanged file
    with a short stub, which would make the second read look like new content.
    """
    path = action.path or ""
    if not path:
        return
    reads = ctx.reads
    if action.tool != "Read":
        if action.tool in EDIT_TOOLS:
            for key in [k for k in reads if k == path or k.startswith(path + "@")]:
                del reads[key]
            facts["reads"] = reads
            seen = facts.get("seen")
            if isinstance(seen, dict):
                seen.pop(path, None)
        return
    if not action.ok:
        return
    key = path + action.target[len(action.target.split("@", 1)[0]) :]
    if "@" in key and _seen_before(facts, path, key[len(path) + 1 :]):
        # Mostly lines already read since the last edit: a small window moved over the
        # same part of an unchanged file is re-reading it, not paging (issue 17, class 3).
        key = path
    count = reads.pop(key, 0) + 1
    reads[key] = count  # re-inserted: the dict stays in least-recently-read order
    if len(reads) > READS_CAP:
        del reads[next(iter(reads))]
    facts["reads"] = reads
    ctx.read_key = key
    ctx.max_reads = facts["max_reads"] = max(ctx.max_reads, count)


RANGES_CAP = 16  # line ranges remembered per file (merged), for overlapping re-reads
SEEN_FILES_CAP = 64  # files whose read ranges are remembered
LIMIT = 2000  # lines a Read with an offset and no limit returns (Claude Code's default)


def _seen_before(facts: dict, path: str, window: str) -> bool:
    """Whether a ranged Read (`offset+limit`) goes back over lines earlier windows of the
    file showed since its last edit: at least half of it already seen, and nothing past the
    furthest line seen (a window sliding forward with overlap is paging). A whole Read is
    not a window: reading sections of a file read whole is focusing, not circling."""
    head, _, tail = window.partition("+")
    try:
        start = int(head or 0)
        end = start + (int(tail) if tail else LIMIT)
    except ValueError:
        return False
    seen = facts.get("seen")
    if not isinstance(seen, dict):
        seen = facts["seen"] = {}
    ranges = [
        r
        for r in seen.pop(path, None) or []
        if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r)
    ]
    overlap = sum(max(0, min(end, b) - max(start, a)) for a, b in ranges)
    furthest = max((b for _, b in ranges), default=0)
    merged: list[list[int]] = []
    for a, b in sorted([*ranges, [start, end]]):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    seen[path] = merged[-RANGES_CAP:]
    while len(seen) > SEEN_FILES_CAP:
        del seen[next(iter(seen))]
    return end > start and end <= furthest and overlap * 2 >= end - start


def _repeat(calls: list[Call]) -> int:
    """How many times in a row the last call came with its result (Call.step)."""
    if not calls:
        return 0
    last = calls[-1].step
    count = 0
    for past in reversed(calls):
        if past.step != last:
            break
        count += 1
    return count


def _streak_update(win: dict, facts: dict, action: Call, ctx: Context) -> None:
    """The same error again: a new attempt (a new model turn) at the same failure, fixes
    between attempts included; the call that failed working again ends it."""
    mem = facts.get("streak")
    if not isinstance(mem, dict):
        mem = facts["streak"] = {}
    if action.ok:
        if number(mem.get("count")) and _retried_ok(mem, action):
            ctx.streak_ended = ctx.streak  # the very call that failed now works
            mem.update(sig="", count=0, edits=0)
        elif action.tool in EDIT_TOOLS and number(mem.get("count")):
            mem["edits"] = number(mem.get("edits")) + 1  # fixes between attempts keep the streak
        ctx.streak = _streak(mem)
        return
    if ctx.asked_repeat:
        return  # the person asked for the runs ("run it 5 times"): failures are the answer
    sig = ctx.identity
    # One model turn is one attempt: a parallel batch of the same failing call is not a streak.
    turn = turn_of(action, win)
    if sig != mem.get("sig") and not _same_exit(mem, action):
        if number(mem.get("count")):
            ctx.streak_ended = ctx.streak
        mem.update(
            sig=sig,
            count=1,
            edits=0,
            tool=action.tool,
            target=action.target,
            act=action.act or action.target,
            path=action.path,
            exit=_exit(action),
            turn=turn,
        )
    elif mem.get("turn") != turn:
        mem["count"] = number(mem.get("count")) + 1
        mem["tool"], mem["target"], mem["turn"] = action.tool, action.target, turn
        mem["act"] = action.act or action.target
        ctx.streak_grew = True
    ctx.streak = _streak(mem)


def _exit(action: Call) -> str:
    return next((part for part in action.sig.split(" | ") if part.startswith("exit ")), "")


def _same_exit(mem: dict, action: Call) -> bool:
    """The same command failing with the same exit code, nothing edited since: a loop even when
    the message varies. Only for the codes that say the command did not run or was killed
    (124 timeout, 126 not executable, 127 not found, 129-159 a signal): after exit 1, 128
    (git's fatal) or 255 (ssh), other messages are other errors."""
    code = _exit(action)
    return (
        bool(mem.get("count"))
        and not mem.get("edits")
        and action.tool == "Bash"
        and _same_act(mem, action)
        and code == mem.get("exit")
        and code[5:].isdecimal()
        and (int(code[5:]) in (124, 126, 127) or 129 <= int(code[5:]) <= 159)
    )


def _same_act(mem: dict, action: Call) -> bool:
    """This call is the act the streak remembers (its plumbing aside: `make 2>&1 | tail`
    passing ends the streak of `make`); a memory from before acts were kept, its target."""
    return (action.act or action.target) == mem.get("act", mem.get("target"))


def _retried_ok(mem: dict, action: Call) -> bool:
    """The call that failed now works: the same call, or any successful edit of the file whose
    edits were refused."""
    if action.tool == mem.get("tool") and _same_act(mem, action) and not action.background:
        return True  # the same act working now (started in the background is not that yet)
    return (
        action.tool in EDIT_TOOLS
        and bool(mem.get("path"))
        and action.path == mem.get("path")
        and str(mem.get("sig", "")).startswith("edit-mismatch ")
    )


def heard(win: dict, prompt: str, now: float) -> None:
    """The person spoke: time, reads, repeats and streaks count again from now; keep whether
    they asked for repetition and what their request named (flags and short terms, never
    the words)."""
    win["prompt_at"], win["active_s"] = now, 0.0
    win["facts"] = {"asked": asked_to_repeat(prompt), "terms": terms_of(prompt)}


def compacted(win: dict) -> None:
    """Re-reading after a compaction is recovery, not circling."""
    facts = win.get("facts")
    if isinstance(facts, dict):
        facts.pop("reads", None)
        facts.pop("seen", None)
