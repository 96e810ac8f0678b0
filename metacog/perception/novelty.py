"""Information gain: what a call's result brought that the session had not already shown.

Stuck work has a shape that needs no vocabulary: the agent meets an obstacle (a failure, a
refusal, an empty answer to a question) and what comes back holds nothing the last calls had
not already shown. Progress through failures has the opposite shape: each failure brings new
specific lines (a list that changed, a new missing name, another line of code) whatever
banner repeats around them. So every result is cut into lines, each line normalized the way
an error signature is (metacog.perception.signature.clean: times, pids, temp paths, durations, addresses
do not count as new; paths, identifiers, codes and line numbers do), and the share of lines
the window has not seen in the last SPAN calls is the call's gain. Of those new lines, the
ones that name something are its news, with three readings of what is not news:

- where a line points (`a.py:12` → `a.py:14`): the same problem, moved;
- the call's own words said back in its failure (the tool asked for, the branch named): a
  name the agent sent is not news from the world;
- an empty answer is "nothing found at this place": the same place asked in other words is
  the same answer, until an edit changes what there is to find.

Only short fingerprints are kept (24 bits of a line's checksum), never the lines: what the
window remembers cannot be read back into anything the tool printed.
"""

from __future__ import annotations

import itertools
import re
import zlib

from metacog.perception import turns
from metacog.perception.tools import EDIT_TOOLS, NO_ANSWER

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.perception.call import Call

SPAN = 60  # calls over which a line once shown is not news
OBSTACLE_SPAN = 60  # calls over which the window's obstacles are remembered
SEEN_CAP = 2400  # fingerprints remembered in the main window (40 lines of 60 calls)
# ... and in a subagent's, which remembers only what its obstacles showed: a session keeps up
# to 32 of them (metacog.state.MAX_WINDOWS), and 32 memories of every result made the state a
# megabyte read and written on every call (40 ms a call).
SUB_SEEN_CAP = 300
HEAD = TAIL = 20  # lines of one result compared: its first and its last (a log's news is at
#                   its end, a listing's at its top); the middle of a long output is left out
TEXT_CAP = 20000  # characters of a result looked at, head and tail
LINE_CAP = 300  # characters of one line
LEAF_CAP = 2000  # values of a structured result visited at most
LEAF_DEPTH = 4  # how deep a structured result of an unknown tool is walked for its text
# A word of a command that is a place: it holds a `/` or ends in a file's extension.
_PLACE_WORD = re.compile(r"^[^-'\"`|&;<>(){}$=][^'\"`|&;<>(){}$]*(?:/|\.\w{1,8})$")


def nothing(tool: str, tool_input: dict) -> int:
    """The line an empty answer shows, as a fingerprint: nothing found at this place (the file
    read, the folder searched, the paths a command names). News the first time the window
    meets it, and nothing the next, whatever the question: what a search did not find in a
    place is no more news for being asked there in other words; another place is."""
    place = ""
    for key in ("file_path", "path", "notebook_path", "url"):
        if isinstance(tool_input.get(key), str):
            place = tool_input[key][:LINE_CAP]  # a path; a hostile megabyte is cut like a line
            break
    else:
        command = tool_input.get("command")
        if isinstance(command, str):
            place = _places(command)
    return zlib.crc32(f"\x00nothing found {place}".encode("utf-8", "replace")) & 0xFFFFFF


def _places(command: str) -> str:
    """The places a shell command names (`_PLACE_WORD`) among the words its steps act on
    (metacog.perception.act's `Act.named`: quotes taken off, a heredoc's body left out): each
    step's, past the shell's keywords and the words that run it (`then`, `sudo -u bob`,
    `timeout 10`), without its redirections (`2>/dev/null`, `2> err.log`) and a sayer's text
    (`|| echo "no dist/"`: what it prints, no place it looked at). `ls "src/"`, `ls src/ 2>
    err.log` and `ls src/` name one place.

    Kept in the window's memory only (novelty's "nothing" list, session state): a window from
    before this reading (issue 39: the command split on spaces, so `"src/"` was no place and a
    heredoc's lines and a redirect's file were) meets a place it remembered under the old
    fingerprint as news once more, and no stored record outlives the session."""
    from metacog.perception.act import read

    places = {w.rstrip("/") for w in read(command).named if _PLACE_WORD.match(w)}
    return " ".join(sorted(places))


def answer_text(tool: str, response: object) -> str:
    """What a successful call answered, as text: a command's output, a file's content, the
    matches of a search, and for any other tool the text its result carries."""
    if tool in NO_ANSWER:
        return ""
    if isinstance(response, str):
        return response
    if not isinstance(response, dict):
        return ""
    if tool == "Bash":
        return f"{_str(response.get('stdout'))}\n{_str(response.get('stderr'))}"
    if tool == "Read":
        file = response.get("file")
        return _str(file.get("content") if isinstance(file, dict) else response.get("content"))
    parts: list[str] = []
    _leaves(response, parts, LEAF_DEPTH)
    return "\n".join(parts)


def written(tool: str, tool_input: dict) -> str:
    """What an edit wrote into its file: its new text (an Edit's new_string, each of a
    MultiEdit's, a Write's content, a notebook cell's source). The agent has seen what it
    wrote: a failure that quotes it back (a traceback's source line, a test's own assertion
    as the agent just patched it) says nothing the world had not been told."""
    if tool == "MultiEdit":
        edits = tool_input.get("edits")
        edits = edits[:64] if isinstance(edits, list) else []
        return "\n".join(_str(e.get("new_string")) for e in edits if isinstance(e, dict))
    for key in ("new_string", "content", "new_source"):
        if isinstance(tool_input.get(key), str):
            return tool_input[key]
    return ""


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _leaves(value: object, out: list[str], depth: int) -> None:
    """The strings of a structured result, in order, until TEXT_CAP characters or LEAF_CAP
    values are collected: a hostile result of 30,000 keys costs no more than a plain one."""
    stack = [(value, depth)]
    size = visited = 0
    while stack and size < TEXT_CAP and visited < LEAF_CAP:
        item, level = stack.pop()
        visited += 1
        if isinstance(item, str):
            out.append(item)
            size += len(item)
        elif level > 0 and isinstance(item, dict):
            stack.extend(
                (v, level - 1) for v in reversed(list(itertools.islice(item.values(), 200)))
            )
        elif level > 0 and isinstance(item, list):
            stack.extend((v, level - 1) for v in reversed(item[:200]))


def _lines(text: str) -> list[str]:
    """The first HEAD and last TAIL lines of a text that hold a letter or a digit (a rule of
    `=====` says nothing), cut to LINE_CAP."""
    if len(text) > TEXT_CAP:
        text = text[: TEXT_CAP // 2] + "\n" + text[-TEXT_CAP // 2 :]
    lines = [
        line[:LINE_CAP] for line in text.splitlines() if any(c.isalnum() for c in line[:LINE_CAP])
    ]
    return lines[:HEAD] + lines[-TAIL:] if len(lines) > HEAD + TAIL else lines


# Where in a file a line points (`a.py:12:5`, `a.ts(12,5)`, `line 12`, `column 5`): a place
# that moves as lines are added above it. A line that differs from one already shown only
# there is new (a gain), but names nothing new (no news): it is the same problem, moved.
_POSITION = re.compile(
    r"(?<=[\w\]>\"')]):\d+(?::\d+)?|\(\d+,\s?\d+\)|(?i:\b(?:line|column|col) \d+)"
    r"|^[> ]*\d+ ?\|"  # the gutter of a quoted source line (`  254 | expect(…)`, `> 12 |`)
    r"|^\d+:\d+(?!\S)"  # a line that opens with it, under its file's name (`  37:18  warning …`)
)


def _clean(line: str) -> str:
    from metacog.perception.signature import (
        clean,
    )  # its patterns compile once a result is there to read

    if line[:1] == ">" and line[1:2].isspace():
        line = line[1:]  # the mark on the line that failed (pytest's `>   assert …`), not the line
    return clean(line)


def _crc(cleaned: str) -> int:
    return zlib.crc32(cleaned.encode("utf-8", "replace")) & 0xFFFFFF


def _print(line: str) -> int:
    return _crc(_clean(line))


def fingerprints(text: str) -> list[int]:
    """The result's lines as short fingerprints, normalized, in order (a line printed twice is
    there twice: a list that shrinks is shorter, not other)."""
    return [_print(line) for line in _lines(text)] if text else []


# A word of a call's input (a run of characters between spaces, quotes, brackets and the
# separators `:,;=`), three characters at least: masked where the call's failure says it back.
_WORD = re.compile(r"[^\s'\"`()\[\]{}<>,;:=]{3,}")
_SENT = "\u00a7"  # what a masked word becomes


def read(tool: str, tool_input: dict, answer: str, error: str) -> tuple[list, list]:
    """(the fingerprints of what a call's result showed, those of them that name something).

    A failure's lines that only repeat what the call sent (an Edit's old_string quoted back,
    the command echoed) are the agent's own words, not the world's answer: left out; in the
    others, the words the call sent, and the places its paths imply, are masked. A masked
    line is a pair (masked, as printed): it is new only when neither was shown, since the
    same line says the same thing whichever call printed it. Which lines name something (a
    path, an identifier, a code: metacog.perception.symptoms.names_something) is read for failures only,
    the calls whose news a sense weighs, with where each points left out."""
    if not error:
        return fingerprints(answer), []
    from metacog.perception.symptoms import names_something

    sent = set()
    words = {tool}
    budget = TEXT_CAP  # of the call's input, all values together
    for value in itertools.islice(tool_input.values(), 64):
        if isinstance(value, str) and value and budget > 0:
            sent.update(fingerprints(value[:budget]))
            words.update(_WORD.findall(value[:budget]))
            budget -= len(value)
    folders, ends = _kin(words)
    prints: list = []
    named: list = []
    for printed in _lines(error):
        if _print(printed) in sent:
            continue
        line = _WORD.sub(
            lambda m: _SENT if _sent(m.group(), words, folders, ends) else m.group(), printed
        )
        cleaned = _clean(line)
        raw = _clean(printed) if line != printed else cleaned
        prints.append(_crc(cleaned) if raw == cleaned else (_crc(cleaned), _crc(raw)))
        if names_something(cleaned):
            unplaced = _crc(_POSITION.sub("#", cleaned))  # wherever it points
            if raw != cleaned:
                unplaced = (unplaced, _crc(_POSITION.sub("#", raw)))
            if unplaced not in named:
                named.append(unplaced)
    return prints, named


KIN_CAP = 64  # paths of a call's input whose folders are weighed


def _kin(words: set[str]) -> tuple[set[str], set[str]]:
    """The places a call's paths imply: the folders of each path it sent (the working
    directory a refusal names is the folder of the file asked for), and each relative path
    without its leading `./` and `../` (a tool says it back resolved, `/abs/dir/x` for `../x`)."""
    folders: set[str] = set()
    ends: set[str] = set()
    # A path, not a megabyte; the same ones whatever order the set holds them in.
    paths = sorted(w for w in words if "/" in w and len(w) <= LINE_CAP)
    for word in paths[:KIN_CAP]:
        parts = word.rstrip("/").split("/")
        folders.update("/".join(parts[:i]) for i in range(2, len(parts)))
        if not word.startswith("/"):
            while parts and parts[0] in (".", ".."):
                parts = parts[1:]
            if len(parts) > 1 or (parts and len(parts[0]) >= 3):
                ends.add("/" + "/".join(parts).rstrip("/"))
    return folders, ends


def _sent(word: str, words: set[str], folders: set[str], ends: set[str]) -> bool:
    """Whether a word of a failure is one the call sent, or a place its paths imply."""
    if word in words:
        return True
    if "/" not in word:
        return False
    bare = word.rstrip("/.")
    if bare in folders:
        return True
    cut = bare.find("/", 1)
    while cut > 0:
        if bare[cut:] in ends:
            return True
        cut = bare.find("/", cut + 1)
    return bare in ends if bare.startswith("/") else False


def call_key(action: Call) -> int:
    """The call's identity (its tool and what it acted on, a shell command as its act:
    `Call.identity`) as a checksum: what "the same call" means here."""
    return zlib.crc32(action.identity.encode("utf-8", "replace"))


# Fingerprints of the lines obstacles showed, remembered in the main window: a call that
# exits 0 and shows only those again met the same wall (a masked line keeps two keys: 600
# keys are 40 lines of 8 to 15 obstacles).
WALLS_CAP = 600
SIZES_CAP = 32  # calls whose last result's length is remembered
ASKED_CAP = 64  # questions whose bare answers, places whose empty ones, are remembered


def _gain(
    shown: list, prints: list, named: list, calls: int, cap: int = SEEN_CAP
) -> tuple[float, int, int]:
    """(share of the result's lines not shown within SPAN calls, how many of the lines that
    name something were not shown either, wherever they point, how many lines were not shown
    at all); all are remembered as shown now. A line is a fingerprint, or a pair of them (metacog.perception.novelty.read): new
    when no fingerprint of it was shown.

    `shown` is the window's memory of what it showed (`_shown`): one entry per call, [call
    number, its fingerprints as six hex digits each, space-separated], oldest first, each
    fingerprint only under the call that showed it last. One string per call rather than one
    key per line: the state is parsed and written on every call, and 1,300 keys of a dict
    were more than half of its cost (1.0 ms of 1.9, issue 23)."""
    distinct = list(dict.fromkeys(prints))
    text = " " + " ".join(entry[1] for entry in shown) + " "
    fresh = set()
    keys: dict[str, None] = {}  # this call's fingerprints, in the order they were shown
    again = set()  # those shown before, to be taken from the calls that showed them
    for line in dict.fromkeys(distinct + named):
        new = True
        for print_ in line if isinstance(line, tuple) else (line,):
            key = format(print_, "06x")
            if key in keys:
                new = False  # shown a moment ago, by another line of this result
            elif f" {key} " in text:
                new = False
                again.add(key)
            keys.pop(key, None)
            keys[key] = None
        if new:
            fresh.add(line)
    _forget(shown, again)
    if shown and shown[-1][0] == calls:  # a second reading of the same call (a damaged count)
        last = shown.pop()
        keys = dict.fromkeys([k for k in last[1].split() if k not in keys] + list(keys))
    if keys:
        shown.append([calls, " ".join(keys)])
    _cap(shown, cap)
    new = sum(p in fresh for p in distinct)
    # News is counted among the named lines by where-it-points-aside fingerprints, which a
    # passing call's lines do not leave (their names are not weighed): a failure printing
    # word for word what a passing call showed would count them all. At most the new lines:
    # a result with no new line brings no news. (Not exact: one new plain line beside
    # named lines a passing call showed still lets one of them count.)
    news = min(sum(p in fresh for p in named), new)
    return (new / len(distinct) if distinct else 0.0), news, new


_PRINT = re.compile(r"[0-9a-f]{6}(?: [0-9a-f]{6})*")  # a call's fingerprints, as `_gain` keeps them


def _shown(mem: dict, calls: int, cap: int) -> list:
    """The window's memory of what it showed within SPAN calls (`_gain`), in place, at most
    `cap` fingerprints: bounded before anything is searched, whatever a damaged state holds.
    An entry of any other shape is dropped; an older version's memory (one key per line,
    `seen`) is taken over, so a session that runs across an upgrade keeps what it saw."""
    shown = mem.get("shown")
    if not isinstance(shown, list):
        shown = _taken_over(mem.get("seen"))
    mem.pop("seen", None)
    # One entry per call: the last SPAN + 1 are all that can be within the span; each holds
    # at most `cap` fingerprints of 7 characters (its last ones: a damaged megabyte is cut).
    kept = []
    for entry in shown[-(SPAN + 1) :]:
        if (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], int)
            and isinstance(entry[1], str)
            and calls - entry[0] <= SPAN
        ):
            prints = entry[1][-(7 * cap - 1) :]
            if _PRINT.fullmatch(prints):
                kept.append([entry[0], prints])
    shown[:] = kept
    _cap(shown, cap)
    mem["shown"] = shown
    return shown


def _taken_over(seen: object) -> list:
    """An older version's memory, {fingerprint: call that showed it last} in the order they
    were shown, as entries of `_gain`'s."""
    if not isinstance(seen, dict):
        return []
    by_call: dict[int, list[str]] = {}
    for key, at in list(seen.items())[-SEEN_CAP:]:  # the most recently shown
        if isinstance(key, str) and isinstance(at, int):
            by_call.setdefault(at, []).append(key)
    return [[at, " ".join(keys)] for at, keys in sorted(by_call.items())]


def _cap(shown: list, cap: int) -> None:
    """At most `cap` fingerprints, the least recently shown dropped first."""
    excess = sum((len(entry[1]) + 1) // 7 for entry in shown) - cap
    drop = 0
    while excess > 0 and drop < len(shown):
        held = (len(shown[drop][1]) + 1) // 7
        if held <= excess:
            drop += 1
        else:
            shown[drop][1] = shown[drop][1][7 * excess :]
        excess -= held
    del shown[:drop]


def _forget(shown: list, keys: set) -> None:
    """Take these fingerprints out of the calls that showed them (each call keeps only those
    it showed last; a line shown again now moves to now)."""
    if not keys:
        return
    for entry in shown:
        prints = entry[1].split()
        if not keys.isdisjoint(prints):
            entry[1] = " ".join(k for k in prints if k not in keys)
    shown[:] = [entry for entry in shown if entry[1]]


def _remember(mem: dict, name: str, key: int, value: int, cap: int) -> object:
    """Set what the window keeps of a call (its `key`) under `name` (a map of at most `cap`
    calls, the least recently seen dropped first) and return what it held before (None if
    nothing)."""
    kept = mem.get(name)
    if not isinstance(kept, dict):
        kept = mem[name] = {}
    key = format(key, "08x")
    last = kept.pop(key, None)
    kept[key] = value
    while len(kept) > cap:
        del kept[next(iter(kept))]
    return last


OWN_CAP = 16  # lines of a command's own sayers remembered as its words


def own(says: tuple) -> tuple:
    """The fingerprints of the lines a command's sayers print in their own words
    (metacog.perception.act.Act.says: `|| echo "MISSING"`, `echo "=== status ==="`): the
    agent's words, not the world's answer, whichever call's output shows them (a background
    job's log read back later among them)."""
    return tuple(dict.fromkeys(_print(line) for _, line in says[:OWN_CAP]))


def _said(shown: list, prints: tuple, calls: int) -> None:
    """Remember a call's own words (`own`) as shown by it, before what it showed is weighed:
    the window had them from the agent, so no result that prints them brings them as news.
    Each is then kept under this call only, as `_gain` keeps what a call showed again."""
    keys = [format(p, "06x") for p in prints]
    _forget(shown, set(keys))
    if shown and shown[-1][0] == calls:
        shown[-1][1] = " ".join([shown[-1][1], *keys])
    else:
        shown.append([calls, " ".join(keys)])


def _fresh(mem: dict, action: Call, calls: int) -> int:
    """1 when this question (tool and target) has not had an empty or bare answer within SPAN
    calls since the last edit, else 0; the question is remembered as asked now."""
    last = _remember(mem, "asked", call_key(action), calls, ASKED_CAP)
    return int(not isinstance(last, int) or calls - last > SPAN)


def _shrank(mem: dict, action: Call, lines: int) -> bool:
    """Whether this call's result is shorter than the same call's last one, word for word
    (the same tool and target, plumbing included): a failure list that shrinks is progress,
    though every line left was shown before (9 `mismatched types`, then 5, then 1). Not the
    same act with other plumbing: `ls x 2>/dev/null` shows less than `ls x` because it hides
    what `ls x` said, not because anything got fixed."""
    exact = zlib.crc32(f"{action.tool} {action.target}".encode("utf-8", "replace"))
    last = _remember(mem, "sizes", exact, lines, SIZES_CAP)
    return isinstance(last, int) and 0 < lines < last


def _keys(prints: list) -> list[str]:
    """Every fingerprint of the lines, a masked line's both, as the window keys them."""
    return [
        format(p, "06x") for line in prints for p in (line if isinstance(line, tuple) else (line,))
    ]


def _echoes(mem: dict, action: Call, prints: list, gain: float, calls: int) -> bool:
    """Whether this call, which met no obstacle by its outcome, showed nothing but what
    obstacles showed within SPAN calls: an error printed by a command that exits 0 anyway
    (a script's `except: print(e)`, `|| true`, a pipe into `tail`) is the same wall met
    again, whatever its words and whatever the exit code says."""
    walls = mem.get("walls")
    if gain or not prints or not isinstance(walls, dict) or action.tool in NO_ANSWER:
        return False
    for line in prints:
        shown = [walls.get(key) for key in _keys([line])]
        if not any(isinstance(at, int) and calls - at <= SPAN for at in shown):
            return False
    return True


def _met_again(
    mem: dict, action: Call, prints: list, obstacle: bool, gain: float, calls: int
) -> bool:
    """Remember an obstacle's lines as a wall; for a call that met none by its outcome, whether
    it showed only walls (`_echoes`), which are then remembered as met now."""
    if obstacle:
        if not action.empty:
            _walls(mem, prints, calls)
        return False
    ok = action.ok and not action.empty
    if ok and _echoes(mem, action, prints, gain, calls):
        _walls(mem, prints, calls)
        return True
    return False


def _walls(mem: dict, prints: list, calls: int) -> None:
    """Remember an obstacle's lines as what a wall looks like (capped, the oldest dropped)."""
    walls = mem.get("walls")
    if not isinstance(walls, dict):
        walls = mem["walls"] = {}
    for key in _keys(prints):
        walls.pop(key, None)
        walls[key] = calls
    while len(walls) > WALLS_CAP:
        del walls[next(iter(walls))]


_OBSTACLES = frozenset(("failed", "refused", "empty"))  # outcomes of a call (Call.outcome)
# Claude Code's answer to the other calls of a batch once one of them failed: the call never
# ran, and what it met is its sibling's failure, not a wall of its own.
_CANCELLED = re.compile(r"sibling tool call errored|cancelled: parallel tool call", re.I)


def wall(action: Call) -> int:
    """The wall a call met, as a checksum: what it was told (its signature) at its place (the
    file, else the tool, a shell command's act): calls of one batch that share it met one wall
    that many times. 0, no wall shared, for a call cancelled because another of its batch
    failed (it met nothing of its own) and for an empty answer (questions that find nothing in
    one batch are as many questions: measured, three Globs for three rule files)."""
    if action.empty or _CANCELLED.match(action.sig):
        return 0
    place = action.path or (action.identity if action.tool == "Bash" else action.tool)
    return zlib.crc32(f"{action.sig}\x00{place}".encode("utf-8", "replace")) or 1


def is_obstacle(action: Call) -> bool:
    """Whether the call met an obstacle: it failed (timed out among the ways), was refused, or
    a question came back empty; the person's own no (an interrupted call: the person speaking
    is not the world answering) is not one, nor a call cancelled because another of its batch
    failed (that failure is the obstacle, met once)."""
    return action.outcome in _OBSTACLES and not _CANCELLED.match(action.sig)


class Reading:
    """What novelty read of one call (metacog.facts hands it to the senses in the Context)."""

    __slots__ = ("fresh", "gain", "news", "obstacle", "obstacles")

    def __init__(self) -> None:
        self.gain = 0.0  # share of the result's lines the window had not shown lately
        self.news = 0  # of those new lines, how many name something (a path, a name, a code)
        self.fresh = 1  # how many lines the window had not shown lately (0: nothing at all)
        # The call failed, was refused, or a question came back empty; or it passed showing
        # only what failures showed (`_echoes`).
        self.obstacle = False
        # The window's obstacles not overcome since, oldest first: (call number, model turn,
        # gain, new lines that name something, whether it was an empty answer, new lines,
        # the wall it met: `wall`, 0 where unknown).
        self.obstacles: list[tuple[int, int, float, int, bool, int, int]] = []


def update(win: dict, action: Call, prints: list, named: list, main: bool = True) -> Reading:
    """This call's gain against what the window has shown, and how many of its new lines name
    something, then remember its lines; an obstacle is remembered with its gain. A subagent's
    window (`main` false) weighs and remembers only its obstacles, fewer of them."""
    cap = SEEN_CAP if main else SUB_SEEN_CAP
    out = Reading()
    mem = win.get("novelty")
    if not isinstance(mem, dict):
        mem = win["novelty"] = {}
    calls = win.get("calls", 0)
    calls = calls if isinstance(calls, int) else 0
    shown = _shown(mem, calls, cap)
    if action.tool in EDIT_TOOLS and action.ok:
        # The world changed: what was not there may be there now (a failed edit, a to-do
        # list changed nothing a question could find).
        mem.pop("asked", None)
        nothing = mem.pop("nothing", None)
        _forget(
            shown,
            {k for k in nothing if isinstance(k, str)} if isinstance(nothing, list) else set(),
        )
    if action.own and (main or not action.ok):  # what a subagent's window weighs (below)
        _said(shown, action.own, calls)
        _cap(shown, cap)
    bare = not action.ok and not named and len(set(prints)) <= 1
    if action.empty:
        # An empty answer: its one line, nothing found at that place (metacog.perception.action), is
        # news until the place has been searched; an edit since makes it news again.
        out.gain, out.news, out.fresh = _gain(shown, prints[:1], [], calls, cap)
        nothing = mem.get("nothing")
        if not isinstance(nothing, list):
            nothing = mem["nothing"] = []
        keys = [format(p, "06x") for p in prints[:1]]
        nothing[:] = [k for k in nothing if k not in keys][-(ASKED_CAP - 1) :] + keys
    elif bare:
        # A failure that says only that it failed (`Exit code 1`): what it tells is the answer
        # to the question the call asked, news the first time that question is asked and
        # nothing the next (whatever words say so).
        out.news = out.fresh = _fresh(mem, action, calls)
        out.gain = float(out.news)
    elif main or not action.ok:
        out.gain, out.news, out.fresh = _gain(shown, prints, named, calls, cap)
    else:
        out.gain = 1.0  # a subagent's success: not remembered, not weighed
    weighed = out.gain  # before a shorter result makes it news: a wall is no shorter list
    if _shrank(mem, action, len(prints)):
        # The same call shows less of what it showed: some of it got fixed (news of a kind no
        # new line carries).
        out.gain, out.fresh = 1.0, max(out.fresh, 1)
    obstacles = mem.get("obstacles")
    if not isinstance(obstacles, list):
        obstacles = mem["obstacles"] = []
    call = call_key(action)
    out.obstacle = is_obstacle(action) and not action.waiting
    # A subagent's window keeps no walls: its memory is kept small (SUB_SEEN_CAP).
    echo = main and _met_again(mem, action, prints, out.obstacle, weighed, calls)
    if echo:
        # The same call passing now, printing what it printed failing (`Exit code 1` gone
        # from a shorter result), met the wall again: nothing new, whatever it shrank by.
        out.obstacle, out.gain, out.fresh = True, 0.0, 0
    # What the window met lately, less what has since been overcome: the same call working
    # now (a test red then green, a server that finished booting) changed what mattered.
    passed = action.ok and not action.empty and not echo and not action.background
    obstacles[:] = [
        # An older version's, without its new lines (some) or its wall (none known).
        [*o, 1, 0][:8] if len(o) == 6 else o if len(o) == 8 else [*o, 0]
        for o in obstacles
        if isinstance(o, list)
        and len(o) in (6, 7, 8)
        and all(isinstance(x, int) for x in o)
        and 0 <= calls - o[0] < OBSTACLE_SPAN
        and not (passed and o[3] == call)
    ][-OBSTACLE_SPAN:]  # capped whatever a damaged state says of the call numbers
    if out.obstacle:
        turn = turns.turn(action, {"calls": calls})
        empty = int(bool(action.empty))
        fresh = min(out.fresh, 99)
        met = wall(action) if is_obstacle(action) else 0  # an echo's wall is what it echoes
        obstacles.append([calls, turn, round(100 * out.gain), call, out.news, empty, fresh, met])
    out.obstacles = [(o[0], o[1], o[2] / 100, o[4], bool(o[5]), o[6], o[7]) for o in obstacles]
    return out
