"""The page's one chart: loop time per week, or per project where the history spans few
weeks. Drawn here as inline SVG (no script, no library, nothing fetched), so it shows
offline and before any script runs; colours come from the page's style, dark mode too.

Time is active time (figures.active): a loop's share of a week is the loops' active
seconds against all the sessions' active seconds that week, each loop counted in the week
it began and each session in the week it started.
"""

from __future__ import annotations

import html
from datetime import datetime, timedelta, timezone

from metacog.report.terminal import duration, project_name

MIN_WEEKS = 4  # fewer weeks spanned: bars per project say more than 1 to 3 bars
PROJECT_BARS = 8
WIDTH, HEIGHT = 1000, 130
LEFT, BOTTOM, TOP = 46, 22, 8  # room for the hour labels, the month labels, the top label


def _week(ts: float) -> datetime:
    day = datetime.fromtimestamp(ts, timezone.utc).date()
    monday = day - timedelta(days=day.weekday())
    return datetime(monday.year, monday.month, monday.day, tzinfo=timezone.utc)


def weekly(sessions: list[dict]) -> list[dict]:
    """Every week from the first session's to the last's (empty weeks too, so the axis is
    time): its Monday, loop seconds, active seconds and sessions."""
    weeks: dict[datetime, dict] = {}

    def row(ts: float) -> dict:
        monday = _week(ts)
        return weeks.setdefault(monday, {"week": monday, "loop": 0.0, "active": 0.0, "sessions": 0})

    for s in sessions:
        if not s["started"]:
            continue
        here = row(s["started"])
        here["active"] += s.get("active_seconds", 0.0)
        here["sessions"] += 1
        for e in s["episodes"]:
            row(e["t0"] or s["started"])["loop"] += e.get("active_seconds", 0.0)
    if not weeks:
        return []
    first, last = min(weeks), max(weeks)
    out, monday = [], first
    while monday <= last:
        out.append(weeks.get(monday) or {"week": monday, "loop": 0.0, "active": 0.0, "sessions": 0})
        monday += timedelta(days=7)
    return out


def per_project(projects: dict[str, dict]) -> list[dict]:
    ranked = sorted(
        projects.items(),
        key=lambda kv: (-kv[1].get("loop_active_seconds", 0.0), -kv[1]["loop_calls"], kv[0]),
    )
    return [
        {
            "name": project_name(name),
            "loop": row.get("loop_active_seconds", 0.0),
            "active": row.get("active_seconds", 0.0),
            "sessions": row["sessions"],
        }
        for name, row in ranked[:PROJECT_BARS]
        if row.get("loop_active_seconds", 0.0) > 0
    ]


def _share(loop: float, active: float) -> str:
    return f" ({round(100 * loop / active)}% of {duration(active)} active)" if active else ""


def _scale(top: float) -> tuple[float, str]:
    """A round top for the axis (in seconds) at or above `top`, and its label."""
    for step in (300, 600, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 24 * 3600):
        if top <= step:
            return step, duration(step).replace(" 00m", "").replace(" 00s", "")
    hours = -(-top // 3600)
    return hours * 3600, f"{hours:.0f}h"


def _svg(body: list[str], label: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{html.escape(label)}">{"".join(body)}</svg>'
    )


def weeks_svg(weeks: list[dict]) -> str:
    top, top_label = _scale(max((w["loop"] for w in weeks), default=0.0) or 1.0)
    plot_w, plot_h = WIDTH - LEFT - 4, HEIGHT - BOTTOM - TOP
    step = plot_w / max(len(weeks), 1)
    gap = min(2.0, step * 0.2)
    body = [
        f'<line class="axis" x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - 4}" y2="{TOP + plot_h}"/>',
        f'<line class="grid" x1="{LEFT}" y1="{TOP}" x2="{WIDTH - 4}" y2="{TOP}"/>',
        f'<text class="tick" x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">{top_label}</text>',
        f'<text class="tick" x="{LEFT - 6}" y="{TOP + plot_h}" text-anchor="end">0</text>',
    ]
    month: tuple[int, int] | None = None
    free = 0.0  # where the next month's label may begin
    for i, w in enumerate(weeks):
        x = LEFT + i * step
        h = plot_h * min(w["loop"], top) / top
        tip = (
            f"week of {w['week']:%Y-%m-%d}: {duration(w['loop'])} in loops"
            f"{_share(w['loop'], w['active'])}, {w['sessions']} session(s)"
        )
        body.append(
            f'<rect class="bar" x="{x + gap / 2:.1f}" y="{TOP + plot_h - h:.1f}" '
            f'width="{step - gap:.1f}" height="{max(h, 0.0):.1f}"><title>{html.escape(tip)}</title></rect>'
        )
        if w["sessions"] and not w["loop"]:
            # A week of work without a loop is not a week without data: a dot on the axis.
            body.append(
                f'<circle class="quiet" cx="{x + step / 2:.1f}" cy="{TOP + plot_h - 2}" r="1.5"/>'
            )
        # A month is named under the week whose Thursday is its first, with its year when
        # the year changes, where the label before leaves room.
        thursday = w["week"] + timedelta(days=3)
        wide = 7 * (8 if month is None or thursday.year != month[0] else 3)
        if (thursday.year, thursday.month) != month and x >= free and x + wide <= WIDTH:
            here = thursday.strftime(
                "%b %Y" if month is None or thursday.year != month[0] else "%b"
            )
            body.append(f'<text class="tick" x="{x:.1f}" y="{HEIGHT - 6}">{here}</text>')
            free = x + 7 * len(here) + 10
        month = (thursday.year, thursday.month)
    return _svg(body, "loop time per week")


def projects_svg(rows: list[dict]) -> str:
    top = max((r["loop"] for r in rows), default=0.0) or 1.0
    name_w, row_h = 260, (HEIGHT - 4) / max(len(rows), 1)
    body = []
    for i, r in enumerate(rows):
        y = 2 + i * row_h
        w = (WIDTH - name_w - 150) * r["loop"] / top
        tip = f"{r['name']}: {duration(r['loop'])} in loops{_share(r['loop'], r['active'])}"
        name = r["name"] if len(r["name"]) <= 34 else "…" + r["name"][-33:]
        body += [
            f'<text class="tick" x="{name_w - 8}" y="{y + row_h * 0.65:.1f}" text-anchor="end">'
            f"{html.escape(name)}</text>",
            f'<rect class="bar" x="{name_w}" y="{y + row_h * 0.15:.1f}" width="{max(w, 1.0):.1f}" '
            f'height="{row_h * 0.7:.1f}"><title>{html.escape(tip)}</title></rect>',
            f'<text class="tick" x="{name_w + w + 6:.1f}" y="{y + row_h * 0.65:.1f}">'
            f"{duration(r['loop'])}</text>",
        ]
    return _svg(body, "loop time per project")


def chart(report: dict) -> tuple[str, str]:
    """The chart's heading and its SVG ('' when no loop took any time)."""
    weeks = weekly(report["sessions"])
    if not any(w["loop"] for w in weeks):
        return "When and where", ""
    if len(weeks) >= MIN_WEEKS:
        return "When: loop time per week", weeks_svg(weeks)
    return "Where: loop time per project", projects_svg(per_project(report["projects"]))
