"""The report on one screen: tables with the numbers right-aligned."""

from __future__ import annotations

import textwrap

from metacog.report import delivery
from metacog.report.sources import utc

PROJECTS_SHOWN = 4
WIDTH = 78


def count(n: float) -> str:
    """1,234 and 12.3K, 4.5M, 2.3B: a token count in a column."""
    if n >= 1_000_000_000:
        return f"{n / 1e9:.1f}B"
    if n >= 10_000_000:
        return f"{n / 1e6:.0f}M"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 100_000:
        return f"{n / 1e3:.0f}K"
    return f"{n:,.0f}"


def duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes}m {seconds % 60:02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


def table(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """First column left-aligned, every other right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [str(row[0]).ljust(widths[0])] + [
            str(c).rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def project_name(path: str) -> str:
    parts = [p for p in path.rstrip("/").split("/") if p]
    return "/".join(parts[-2:]) if len(parts) > 1 else (path or "?")


def loop_row(name: str, row: dict) -> list[str]:
    return [
        name,
        f"{row['sessions']:,}",
        f"{row['calls']:,}",
        f"{row['episodes']:,}",
        f"{row['loops_per_100_calls']:.2f}",
        f"{row['loop_calls']:,}",
        duration(row["loop_seconds"]),
        count(row["loop_tokens"]),
    ]


def render(report: dict) -> str:
    total = report["totals"]
    sessions = report["sessions"]
    starts = [s["started"] for s in sessions if s["started"]]
    span = (
        f", {utc(min(starts))[:10]} to {utc(max(s['ended'] for s in sessions))[:10]}"
        if starts
        else ""
    )
    lines = [
        f"metacog report: {total['sessions']:,} session{'s' if total['sessions'] != 1 else ''} "
        f"({total['live_sessions']:,} with metacog active){span}",
        f"  {total['calls']:,} tool calls, {total['errors']:,} errors, {count(total['tokens'])} tokens; "
        f"metacog said {total['said']:,}, would have said {total['would_say']:,}",
    ]
    skipped, empty = report["skipped"], report["empty_files"]
    if skipped or empty:
        parts = [f"{len(skipped):,} file(s) skipped"] if skipped else []
        parts += [f"{empty:,} empty"] if empty else []
        lines.append(f"  {', '.join(parts)} (--json lists them)")
    said_so = delivery.verdict(report["delivery"]) if report.get("delivery") else ""
    if said_so:
        lines += textwrap.wrap(said_so, WIDTH, initial_indent="  ", subsequent_indent="  ")
    lines += [
        "",
        "Loops: the same problem 3+ times, until solved or left (docs/report.md)",
    ]
    rows = [loop_row("all", total)]
    projects = list(report["projects"].items())
    if len(projects) > 1:
        ranked = sorted(projects, key=lambda kv: (-kv[1]["loop_calls"], -kv[1]["calls"]))
        rows += [loop_row(project_name(name), row) for name, row in ranked[:PROJECTS_SHOWN]]
    lines += table(
        ["", "sessions", "calls", "loops", "per 100 calls", "in loops", "time", "tokens"], rows
    )
    if len(projects) > PROJECTS_SHOWN + 1:
        lines.append(
            f"  … and {len(projects) - PROJECTS_SHOWN} more projects (--json lists them all)"
        )
    lines += claim_lines(report)
    helped = report["helped"]
    lines += [
        "",
        "Whether it helped: calls and tokens from metacog speaking about a loop (or, where it",
        "was silent or not installed, from where it would have spoken) to the loop's end",
    ]
    rows = []
    for side, name in (("spoke", "metacog spoke"), ("silent", "silent or not installed")):
        row = helped[side]
        rows.append(
            [
                name,
                f"{row['episodes']:,}",
                f"{row['ended']:,}",
                num(row["median_calls_after"]),
                num(row["mean_calls_after"]),
                "-" if row["median_tokens_after"] is None else count(row["median_tokens_after"]),
            ]
        )
    lines += table(["", "loops", "ended", "median calls", "mean calls", "median tokens"], rows)
    lines += textwrap.wrap(helped["verdict"], WIDTH, initial_indent="  ", subsequent_indent="  ")
    lines += recurring_lines(report.get("recurring") or {})
    lines += [
        "",
        "Per sense: how often it spoke, and how often the agent left it (the next 10 calls did",
        "not repeat the call or the error it spoke after)",
    ]
    said, would = report["per_sense"]["said"], report["per_sense"]["would"]
    names = list(dict.fromkeys([*said, *would]))
    rows = [
        [
            name,
            _spoke(said.get(name)),
            share(said.get(name)),
            _spoke(would.get(name)),
            share(would.get(name)),
        ]
        for name in names
    ]
    if rows:
        lines += table(["", "said", "left it", "would have said", "left it"], rows)
    else:
        lines.append("  no signal in these sessions")
    return "\n".join(lines)


CLAIMS_SHOWN = 3  # checks listed per project


def claim_lines(report: dict) -> list[str]:
    """Turn ends whose final message claimed what the session's own last check contradicted,
    per project, with the checks that contradicted them (the latest first)."""
    total = report["totals"]
    lines = [
        "",
        f"Turn ends that claimed what the session's own last check contradicted: "
        f"{total.get('claims', 0):,} of {total.get('turn_ends', 0):,}",
    ]
    checks: dict[str, list[dict]] = {}
    for session in report["sessions"]:
        checks.setdefault(session["project"], []).extend(session.get("claims") or ())
    shown = [(name, row) for name, row in report["projects"].items() if row.get("claims")]
    for name, row in shown[:PROJECTS_SHOWN]:
        lines.append(f"  {project_name(name)}: {row['claims']:,} of {row['turn_ends']:,} turn ends")
        latest = sorted(checks.get(name, ()), key=lambda c: -c["t"])[:CLAIMS_SHOWN]
        for claim in latest:
            what = claim["check"] if len(claim["check"]) <= 60 else claim["check"][:59] + "…"
            lines.append(f"    {utc(claim['t'])[:10]}  `{what}`")
    if len(shown) > PROJECTS_SHOWN:
        lines.append(f"  … and {len(shown) - PROJECTS_SHOWN} more projects (--json lists them all)")
    return lines


RECURRING_SHOWN = 8
WHAT_WIDTH = 28
RECURRING_HEADER = ["", "sessions", "times", "in loops", "tokens", "first", "last seen"]


def recurring_row(row: dict, width: int = WHAT_WIDTH, key: str = "problem") -> list[str]:
    """One recurring problem: on a screen by its short name (a kind of mistake,
    "edit-before-read"; a signature), on the page in words."""
    what = row[key] if len(row[key]) <= width else row[key][: width - 1] + "…"
    return [
        what,
        f"{row['sessions']:,}",
        f"{row['times']:,}",
        f"{row['loop_calls']:,}",
        count(row["loop_tokens"]),
        utc(row["first_seen"])[:10],
        utc(row["last_seen"])[:10],
    ]


def recurring_lines(recurring: dict) -> list[str]:
    rows = recurring.get("overall") or []
    lines = [
        "",
        f"Recurring: problems back in {recurring.get('min_sessions', 2)}+ sessions, and the calls "
        "and tokens of loops on them",
    ]
    if not rows:
        return [*lines, "  none yet"]
    lines += table(RECURRING_HEADER, [recurring_row(r) for r in rows[:RECURRING_SHOWN]])
    if len(rows) > RECURRING_SHOWN:
        lines.append(
            f"  … and {len(rows) - RECURRING_SHOWN} more (--json: recurring, per project too)"
        )
    return lines


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _spoke(row: dict | None) -> str:
    return f"{row['spoke']:,}" if row else "0"


def share(row: dict | None) -> str:
    if not row or not row["followed"]:
        return "-"
    return f"{row['left']}/{row['followed']} ({row['left'] * 100 // row['followed']}%)"


def skipped_lines(report: dict, cap: int = 20) -> list[str]:
    """One line per skipped file, for stderr; at most `cap`."""
    out = [f"skipped {item['file']}: {item['reason']}" for item in report["skipped"][:cap]]
    if len(report["skipped"]) > cap:
        out.append(f"… and {len(report['skipped']) - cap} more skipped (--json lists them)")
    return out
