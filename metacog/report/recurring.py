"""Problems and mistakes that came back across sessions: the table a person turns into a
line of CLAUDE.md.

A problem is what `episodes.problem_of` names: a kind of mistake ("old-string-mismatch",
"blocked Bash"), or an error's normalized signature, or a repeated action that made a
loop. It recurs when it shows in two sessions or more; each row says in how many, how
many times, the calls and tokens spent in loops on it, and when it was first and last
seen; overall and per project. Each row overall also names the sessions where it cost
most (the page links them to their timelines) and the line worth writing in CLAUDE.md.
"""

from __future__ import annotations

import heapq

MIN_SESSIONS = 2
SHOWN = 30  # rows overall
SHOWN_PER_PROJECT = 10
PROJECTS_SHOWN = 20
TRACKED = 20_000  # distinct problems held while reading; past it, those seen once are dropped
WORST_KEPT = 5  # sessions named per problem: those where it cost most


def _row() -> dict:
    return {
        "sessions": 0,
        "times": 0,
        "loops": 0,
        "loop_calls": 0,
        "loop_tokens": 0,
        "loop_active_seconds": 0.0,
        "first_seen": 0.0,
        "last_seen": 0.0,
    }


def _fold(row: dict, seen: dict) -> None:
    row["sessions"] += 1
    for key in ("times", "loops", "loop_calls", "loop_tokens"):
        row[key] += seen[key]
    row["loop_active_seconds"] = round(
        row["loop_active_seconds"] + seen.get("loop_active_seconds", 0.0), 3
    )
    first, last = seen["first_seen"], seen["last_seen"]
    row["first_seen"] = min(row["first_seen"], first) if row["first_seen"] else first
    row["last_seen"] = max(row["last_seen"], last)


class Recurring:
    def __init__(self) -> None:
        self.overall: dict[str, dict] = {}
        self.projects: dict[str, dict[str, dict]] = {}
        self.where: dict[str, set[str]] = {}  # problem -> the projects it showed in
        # problem -> a min-heap of (loop calls, times, order read, file): its worst sessions
        self.worst: dict[str, list[tuple[int, int, int, str]]] = {}
        self.read = 0

    def add(self, session: dict) -> None:
        project = session["project"]
        mine = self.projects.setdefault(project, {})
        for problem, seen in (session.get("problems") or {}).items():
            _fold(self.overall.setdefault(problem, _row()), seen)
            _fold(mine.setdefault(problem, _row()), seen)
            self.where.setdefault(problem, set()).add(project)
            # Earlier sessions win a tie (-read): the order of the files, not of the heap.
            mark = (seen["loop_calls"], seen["times"], -self.read, session.get("file", ""))
            worst = self.worst.setdefault(problem, [])
            if len(worst) < WORST_KEPT:
                heapq.heappush(worst, mark)
            else:
                heapq.heappushpop(worst, mark)
        self.read += 1
        if len(self.overall) > TRACKED:
            self._prune()

    def _prune(self) -> None:
        once = [k for k, row in self.overall.items() if row["sessions"] < MIN_SESSIONS]
        for key in once[: len(self.overall) - TRACKED // 2]:
            del self.overall[key]
            self.where.pop(key, None)
            self.worst.pop(key, None)
            for rows in self.projects.values():
                rows.pop(key, None)

    def finish(self) -> dict:
        overall = [
            {
                **_shown(k, row, len(self.where.get(k, ()))),
                "claude_md": advice(k),
                "worst_sessions": [m[3] for m in sorted(self.worst.get(k, []), reverse=True)],
            }
            for k, row in _ranked(self.overall)[:SHOWN]
        ]
        projects = {}
        for project, rows in self.projects.items():
            top = _ranked(rows)[:SHOWN_PER_PROJECT]
            if top:
                projects[project] = [_shown(k, row) for k, row in top]
        ranked = sorted(projects.items(), key=lambda kv: -sum(r["loop_calls"] for r in kv[1]))
        return {
            "min_sessions": MIN_SESSIONS,
            "overall": overall,
            "projects": dict(ranked[:PROJECTS_SHOWN]),
        }


def _ranked(rows: dict[str, dict]) -> list[tuple[str, dict]]:
    came_back = [(k, r) for k, r in rows.items() if r["sessions"] >= MIN_SESSIONS]
    return sorted(
        came_back, key=lambda kv: (-kv[1]["loop_calls"], -kv[1]["sessions"], -kv[1]["times"], kv[0])
    )


def describe(problem: str) -> str:
    """A person's words for a kind of mistake; a signature or a repeated action as it is."""
    from metacog.perception import symptoms

    name = problem.split(" ", 1)[0]
    if name in {kind for _, kind, _ in symptoms.MISTAKES}:
        return symptoms.describe(problem)
    return problem


# The line for CLAUDE.md for each kind of mistake (symptoms.MISTAKES): an instruction the
# agent can follow before the mistake happens, not a description of it.
ADVICE = {
    "edit-before-read": "Read a file before you Edit or Write it, even one you saw in a listing.",
    "old-string-mismatch": "Copy an Edit's old_string from a fresh Read of the file, whitespace "
    "included; never write it from memory.",
    "edit-mismatch": "Copy an Edit's old_string from a fresh Read of the file, whitespace "
    "included, with enough around it to match once.",
    "ambiguous-old-string": "Give an Edit's old_string enough surrounding lines to match once, "
    "or use replace_all when every match should change.",
    "stale-read": "Read a file again before editing it when a formatter, a script or the "
    "person may have changed it.",
    "no-such-tool": "Use only the tools listed as available; check that an MCP server is "
    "connected before calling its tools.",
    "needs-input": "Run commands non-interactively: pass their --yes or --no-input flag, or "
    "pipe the answer in.",
    "blocked": "When a command is not allowed, ask the person or use an allowed way; do not "
    "retry it in another form.",
    "hook-blocked": "When a hook blocks a call, follow what its message says instead of "
    "retrying the call.",
    "rejected": "When the person rejects a call, ask what they want instead of trying another way.",
    "hung": "Start servers and watchers in the background and pass the flags that answer "
    "prompts; never wait on them in the foreground.",
    "interrupted": "When the person stops a call, ask what they want before starting it again.",
    "no-op-edit": "Check that an Edit changes something before sending it.",
    "missing-path": "Use absolute paths in shell commands, or check pwd after a cd.",
}
# Claude Code's own words for a few errors that are no kind of mistake but have one cause.
KNOWN = (
    (
        "Sibling tool call errored",
        "When one of several parallel calls fails the others are cancelled: fix the failing "
        "call before running the batch again.",
    ),
    (
        "File does not exist.",
        "Check that a file exists (Glob or ls) before reading it; do not guess paths.",
    ),
    (
        "EISDIR",
        "Read files, not folders: list a folder with ls or Glob.",
    ),
)
ADVICE_CHARS = 90  # of a signature or a target quoted in the line


def advice(problem: str) -> str:
    """The one line worth putting in CLAUDE.md for a recurring problem."""
    name = problem.split(" ", 1)[0]
    if name in ADVICE:
        return ADVICE[name]
    for start, line in KNOWN:
        if problem.startswith(start):
            return line
    for lead, line in (
        (
            "nothing found by ",
            "`{}` found nothing again and again: check where it looks "
            "before searching the same way.",
        ),
        (
            "an earlier failure shown by ",
            "`{}` kept showing an earlier failure: fix that failure before checking again.",
        ),
        (
            "repeated ",
            "Do not run `{}` again without changing something first: it kept "
            "giving the same result.",
        ),
    ):
        if problem.startswith(lead):
            tool, _, target = problem[len(lead) :].partition(" ")
            # A command is quoted as the person would type it; another tool's call by name.
            return line.format(_quoted(target if tool == "Bash" and target else f"{tool} {target}"))
    first = problem.split(" | ", 1)[0]
    return f"When `{_quoted(first)}` shows up, find its cause before running the same thing again."


def _quoted(text: str) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= ADVICE_CHARS else text[: ADVICE_CHARS - 1] + "…"


def short(problem: str) -> str:
    """describe() without a kind of mistake's advice in brackets (its CLAUDE.md line says it)."""
    from metacog.perception import symptoms

    name, _, tool = problem.partition(" ")
    if name not in {kind for _, kind, _ in symptoms.MISTAKES}:
        return problem
    what = symptoms.describe(name).split(" (", 1)[0]
    return f"{what} ({tool})" if tool else what


def _shown(problem: str, row: dict, projects: int | None = None) -> dict:
    out = {"problem": problem, "what": describe(problem), "short": short(problem), **row}
    if projects is not None:
        out["projects"] = projects
    return out
