"""Problems and mistakes that came back across sessions: the table a person turns into a
line of CLAUDE.md.

A problem is what `episodes.problem_of` names: a kind of mistake ("old-string-mismatch",
"blocked Bash"), or an error's normalized signature, or a repeated action that made a
loop. It recurs when it shows in two sessions or more; each row says in how many, how
many times, the calls and tokens spent in loops on it, and when it was first and last
seen; overall and per project.
"""

from __future__ import annotations

MIN_SESSIONS = 2
SHOWN = 30  # rows overall
SHOWN_PER_PROJECT = 10
PROJECTS_SHOWN = 20
TRACKED = 20_000  # distinct problems held while reading; past it, those seen once are dropped


def _row() -> dict:
    return {
        "sessions": 0,
        "times": 0,
        "loops": 0,
        "loop_calls": 0,
        "loop_tokens": 0,
        "first_seen": 0.0,
        "last_seen": 0.0,
    }


def _fold(row: dict, seen: dict) -> None:
    row["sessions"] += 1
    for key in ("times", "loops", "loop_calls", "loop_tokens"):
        row[key] += seen[key]
    first, last = seen["first_seen"], seen["last_seen"]
    row["first_seen"] = min(row["first_seen"], first) if row["first_seen"] else first
    row["last_seen"] = max(row["last_seen"], last)


class Recurring:
    def __init__(self) -> None:
        self.overall: dict[str, dict] = {}
        self.projects: dict[str, dict[str, dict]] = {}
        self.where: dict[str, set[str]] = {}  # problem -> the projects it showed in

    def add(self, session: dict) -> None:
        project = session["project"]
        mine = self.projects.setdefault(project, {})
        for problem, seen in (session.get("problems") or {}).items():
            _fold(self.overall.setdefault(problem, _row()), seen)
            _fold(mine.setdefault(problem, _row()), seen)
            self.where.setdefault(problem, set()).add(project)
        if len(self.overall) > TRACKED:
            self._prune()

    def _prune(self) -> None:
        once = [k for k, row in self.overall.items() if row["sessions"] < MIN_SESSIONS]
        for key in once[: len(self.overall) - TRACKED // 2]:
            del self.overall[key]
            self.where.pop(key, None)
            for rows in self.projects.values():
                rows.pop(key, None)

    def finish(self) -> dict:
        overall = [
            _shown(k, row, len(self.where.get(k, ()))) for k, row in _ranked(self.overall)[:SHOWN]
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


def _shown(problem: str, row: dict, projects: int | None = None) -> dict:
    out = {"problem": problem, "what": describe(problem), **row}
    if projects is not None:
        out["projects"] = projects
    return out
