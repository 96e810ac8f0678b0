"""`metacog report --html FILE`: one self-contained page, no network, no external assets.

Its first screen (1400x900) answers what a person opens it for: what loops cost (time,
calls, tokens, and their share of all the work), when (chart.py's inline SVG), what keeps
coming back (the top recurring problems, each with its line for CLAUDE.md), and whether
metacog would have helped. Everything else is below it, folded: tables show 10 rows and
the rest one click away, and the timelines are grouped by project, worst first.

The figures are plain HTML; each session's timeline is drawn by the page's own script
from the data embedded in it (calls along the time axis, errors, what metacog said and
would have said, where loops began and ended). A Content-Security-Policy forbids every
fetch, so the page cannot reach out even if someone edits it.
"""

from __future__ import annotations

import html
import json

from metacog.fsutil import atomic_write
from metacog.report import chart, delivery
from metacog.report.sources import utc
from metacog.report.terminal import (
    RECURRING_HEADER,
    count,
    duration,
    loop_row,
    num,
    project_name,
    recurring_row,
    share,
)

STYLE = """
:root{color-scheme:light dark;--fg:#1d1d1f;--muted:#5a5a60;--bg:#fff;--panel:#f5f5f3;--line:#ddd;
--accent:#b58900;--bar:#c98f00;--link:#1f5fbf;--code:#f0ede4}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8ea;--muted:#a9a9b0;--bg:#16181c;--panel:#21242a;
--line:#3b3e46;--accent:#e3b341;--bar:#d9a21b;--link:#8ab4ff;--code:#2b2a24}}
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:var(--fg);background:var(--bg)}
main{max-width:1120px;margin:0 auto;padding:14px 24px 40px}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:22px 0 6px}h3{font-size:14px;margin:14px 0 4px}
a{color:var(--link)}p,li,td,th,summary,div{overflow-wrap:anywhere}
.period{color:var(--muted);margin:2px 0 10px}
.cost{display:grid;grid-template-columns:repeat(4,1fr);gap:10px;margin:0}
.cost div{background:var(--panel);border-radius:6px;padding:8px 12px}
.cost b{display:block;font-size:24px;line-height:1.2;font-variant-numeric:tabular-nums}
.cost span{color:var(--muted);font-size:13px}
h2.first{margin-top:14px}
svg.chart{display:block;width:100%;height:auto}
svg.chart .bar{fill:var(--bar)}svg.chart .quiet{fill:var(--muted)}
svg.chart .tick{fill:var(--muted);font-size:12px}
svg.chart .axis,svg.chart .grid{stroke:var(--line);stroke-width:1}
.helped{margin:8px 0 0;padding:6px 12px;border-left:3px solid var(--accent);background:var(--panel)}
ol.top{margin:0;padding-left:22px}ol.top li{margin:0 0 7px}
ol.top .what{font-weight:600}ol.top .n{color:var(--muted);font-weight:normal}
ol.top .where{color:var(--muted);font-size:13px}
code{background:var(--code);padding:1px 5px;border-radius:3px;font-size:13px}
table{border-collapse:collapse;margin:8px 0;max-width:100%}
td,th{padding:3px 10px;border-bottom:1px solid var(--line);vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{text-align:left;background:var(--panel)}
details{margin:6px 0}summary{cursor:pointer;color:var(--link)}
details.project>summary{color:var(--fg)}details.project{border-top:1px solid var(--line);padding-top:4px}
.session{margin:10px 0 14px 18px}.meta{color:var(--muted);font-size:12px}
svg.timeline{display:block;width:100%;height:46px;background:var(--panel)}
.legend span{margin-right:14px;font-size:12px}.ok{color:#8a8a8a}.err{color:#d62728}.said{color:#1f5fbf}
.would{color:#ff7f0e}.loop{color:#b58900}.prompt{color:#2ca02c}.verdict{max-width:60em}
"""

SCRIPT = r"""
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var NS = 'http://www.w3.org/2000/svg', W = 1000, H = 46, PAUSE = 300;
  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  var drawn = 0;
  data.sessions.forEach(function (s, i) {
    var box = document.getElementById('timeline-' + i);
    if (!box || !s.timeline) return;
    var t = s.timeline.t, cuts = [], removed = 0;
    var seen = t.concat(s.timeline.prompts).sort(function (a, b) { return a - b; });
    // A pause longer than PAUSE seconds (a night, a meeting) is drawn PAUSE wide, marked.
    for (var g = 1; g < seen.length; g++) {
      if (seen[g] - seen[g - 1] > PAUSE) {
        removed += seen[g] - seen[g - 1] - PAUSE;
        cuts.push([seen[g - 1], seen[g], removed]);
      }
    }
    function squeeze(sec) {
      var r = 0;
      for (var k = 0; k < cuts.length && sec > cuts[k][0] + PAUSE; k++) {
        r = sec >= cuts[k][1] ? cuts[k][2] : (k ? cuts[k - 1][2] : 0) + sec - cuts[k][0] - PAUSE;
      }
      return sec - r;
    }
    var span = Math.max(seen.length ? squeeze(seen[seen.length - 1]) : 0, 1);
    function x(sec) { return 4 + (W - 8) * Math.min(squeeze(sec), span) / span; }
    var svg = el('svg', {viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', 'class': 'timeline'}, null);
    cuts.forEach(function (c) {
      var mid = x(c[0] + PAUSE / 2);
      el('path', {d: 'M' + mid.toFixed(1) + ' 0v46', stroke: '#999', 'stroke-dasharray': '2 3', 'class': 'pause'}, svg);
    });
    var ok = '', bad = '';
    for (var c = 0; c < t.length; c++) {
      var px = x(t[c]).toFixed(1);
      if (s.timeline.err.charAt(c) === '1') bad += 'M' + px + ' 14v20'; else ok += 'M' + px + ' 20v10';
    }
    s.episodes.forEach(function (e) {
      var a = x(e.t0 - s.started), b = Math.max(x(e.t1 - s.started), a + 3);
      var r = el('rect', {x: a, y: 8, width: b - a, height: 32, 'class': 'episode',
                          fill: '#b58900', 'fill-opacity': 0.18}, svg);
      el('title', {}, r).textContent = 'loop: ' + e.calls + ' calls' + (e.resolved ? '' : ', still looping at the end');
    });
    el('path', {d: ok, stroke: '#8a8a8a', 'stroke-width': 1.5, 'class': 'calls-ok'}, svg);
    el('path', {d: bad, stroke: '#d62728', 'stroke-width': 2, 'class': 'calls-error'}, svg);
    s.timeline.prompts.forEach(function (p) {
      el('path', {d: 'M' + x(p).toFixed(1) + ' 2v42', stroke: '#2ca02c', 'stroke-width': 1, 'class': 'prompt'}, svg);
    });
    [['would_say', '#ff7f0e', 'would'], ['said', '#1f5fbf', 'said']].forEach(function (kind) {
      s[kind[0]].forEach(function (m) {
        var mark = el('circle', {cx: x(m.t - s.started), cy: kind[2] === 'said' ? 6 : 40, r: 4,
                                 fill: kind[1], 'class': 'signal ' + kind[2]}, svg);
        el('title', {}, mark).textContent = m.sense + ': ' + m.text;
      });
    });
    box.appendChild(svg);
    drawn++;
  });
  document.body.setAttribute('data-timelines', String(drawn));
})();
"""


SHOWN_ROWS = 10  # an open table's rows at most; the rest one click away
TOP_RECURRING = 5
WORST_LINKED = 3  # sessions linked per recurring problem on the first screen


def _cell(value: object, numeric: bool = True) -> str:
    return (
        f'<td class="n">{html.escape(str(value))}</td>'
        if numeric
        else f"<td>{html.escape(str(value))}</td>"
    )


def _table(header: list[str], rows: list[list[object]]) -> str:
    head = "".join(
        f'<th class="{"n" if i else ""}">{html.escape(h)}</th>' for i, h in enumerate(header)
    )
    body = "".join(
        "<tr>" + "".join(_cell(v, i > 0) for i, v in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _folded_table(header: list[str], rows: list[list[object]], rest: str) -> str:
    """The first SHOWN_ROWS rows open; the rest, with `rest` naming them, one click away."""
    if len(rows) <= SHOWN_ROWS:
        return _table(header, rows)
    more = len(rows) - SHOWN_ROWS
    return (
        _table(header, rows[:SHOWN_ROWS])
        + f"<details><summary>{more:,} more {html.escape(rest)}</summary>"
        + _table(header, rows[SHOWN_ROWS:])
        + "</details>"
    )


def _pct(part: float, whole: float) -> str:
    if not whole:
        return "-"
    share = 100 * part / whole
    return "<1%" if 0 < share < 1 else f"{round(share)}%"


def _day(ts: float) -> str:
    return utc(ts)[:10]


def _loop_cost(session: dict) -> tuple:
    """Worst first: calls in loops, then their active time, then errors."""
    eps = session["episodes"]
    return (
        -sum(e["calls"] for e in eps),
        -sum(e.get("active_seconds", 0.0) for e in eps),
        -session["errors"],
    )


def _headline(report: dict) -> list[str]:
    """The first screen's answer to "what did loops cost me": time, calls, tokens in loops,
    each against all the work, over which period and how many sessions."""
    total = report["totals"]
    sessions = report["sessions"]
    starts = [s["started"] for s in sessions if s["started"]]
    period = (
        f"{_day(min(starts))} to {_day(max(s['ended'] for s in sessions))}"
        if starts
        else "no dates"
    )
    plural = "s" if total["sessions"] != 1 else ""
    projects = len(report["projects"])
    live = total["live_sessions"]
    active = f"metacog active in {live:,} of them" if live else "metacog was active in none"
    cards = [
        (
            duration(total.get("loop_active_seconds", 0.0)),
            f"in loops, {_pct(total.get('loop_active_seconds', 0.0), total.get('active_seconds', 0.0))}"
            f" of {duration(total.get('active_seconds', 0.0))} active time",
        ),
        (
            f"{total['loop_calls']:,} calls",
            f"in loops, {_pct(total['loop_calls'], total['calls'])} of {total['calls']:,} tool calls",
        ),
        (
            f"{count(total['loop_tokens'])} tokens",
            f"in loops, {_pct(total['loop_tokens'], total['tokens'])} of {count(total['tokens'])}",
        ),
        (
            f"{total['episodes']:,} loop{'s' if total['episodes'] != 1 else ''}",
            f"{total['unresolved']:,} still looping when the session ended",
        ),
    ]
    out = [
        "<h1>What loops cost you</h1>",
        f'<p class="period">metacog report: {total["sessions"]:,} session{plural} in {projects:,} '
        f"project{'s' if projects != 1 else ''}, {period} (UTC); {active}. "
        f"{total['calls']:,} tool calls, {total['errors']:,} errors; metacog said "
        f"{total['said']:,} thing(s), and would have said {total['would_say']:,} where it was not "
        "active. Active time: pauses over 5 minutes count as 5 minutes.</p>",
        '<div class="cost">'
        + "".join(
            f"<div><b>{html.escape(v)}</b><span>{html.escape(t)}</span></div>" for v, t in cards
        )
        + "</div>",
    ]
    said_so = delivery.verdict(report["delivery"]) if report.get("delivery") else ""
    if said_so:
        out.append(f'<p class="helped">{html.escape(said_so)}</p>')
    return out


def _would_help_line(report: dict) -> str:
    """Where metacog was not active: in how many loops it would have spoken, how far in."""
    would = report.get("would_help") or {}
    if not would.get("sessions"):
        return ""
    where = (
        "In these sessions metacog was not active"
        if would["sessions"] == report["totals"]["sessions"]
        else f"In the {would['sessions']:,} sessions where metacog was not active"
    )
    if not would["loops"]:
        return f"<b>Would it have helped?</b> {where}, and they had no loop."
    if not would["spoken_in"]:
        return (
            f"<b>Would it have helped?</b> {where}; it would have spoken in none of their "
            f"{would['loops']:,} loop{'s' if would['loops'] != 1 else ''}."
        )
    after = would.get("calls_after_share")
    rest = f"; {round(100 * after)}% of those loops' calls came after that point" if after else ""
    return (
        f"<b>Would it have helped?</b> {where}: it would have spoken in {would['spoken_in']:,} of "
        f"their {would['loops']:,} loop{'s' if would['loops'] != 1 else ''}, a median {num(would['median_calls_in'])} calls into "
        f"them{rest}."
    )


def _claims(report: dict) -> list[str]:
    """Turn ends whose final message claimed what the session's own last check contradicted,
    per project, with the checks that contradicted them."""
    checks: dict[str, list[str]] = {}
    for session in report["sessions"]:
        for claim in session.get("claims") or ():
            checks.setdefault(session["project"], []).append(claim["check"])
    rows = [
        [project_name(name), row["turn_ends"], row["claims"], "; ".join(checks.get(name, ())[-3:])]
        for name, row in report["projects"].items()
        if row.get("claims")
    ]
    total = report["totals"]
    return [
        "<h2>Turn ends that claimed what the session's own last check contradicted</h2>",
        f"<p>{total.get('claims', 0):,} of {total.get('turn_ends', 0):,} turn ends.</p>",
        *([_table(["", "turn ends", "contradicted", "checks (latest)"], rows)] if rows else []),
    ]


def _top_recurring(report: dict, index: dict[str, int]) -> list[str]:
    recurring = report.get("recurring") or {}
    rows = (recurring.get("overall") or [])[:TOP_RECURRING]
    out = ['<h2 class="first">What keeps coming back</h2>']
    if not rows:
        return [
            *out,
            f"<p>No problem came back in {recurring.get('min_sessions', 2)} sessions yet.</p>",
        ]
    items = []
    for r in rows:
        cost = (
            f"{r['loop_calls']:,} calls, {count(r['loop_tokens'])} tokens, "
            f"{duration(r.get('loop_active_seconds', 0.0))} in {r['loops']:,} loop(s)"
            if r["loops"]
            else f"{r['times']:,} times, no loop"
        )
        links = [
            f'<a href="#session-{index[f]}">{html.escape(_session_name(report["sessions"][index[f]]))}</a>'
            for f in (r.get("worst_sessions") or [])[:WORST_LINKED]
            if f in index
        ]
        projects = r.get("projects")
        where = f"in {r['sessions']:,} sessions" + (
            f", {projects:,} project{'s' if projects != 1 else ''}" if projects else ""
        )
        what = r.get("short") or r["what"]
        what = what if len(what) <= 160 else what[:159] + "…"
        items.append(
            f'<li><span class="what">{html.escape(what)}</span> <span class="n">{html.escape(cost)}</span>'
            f'<div class="where">{where}'
            + (f"; worst: {', '.join(links)}" if links else "")
            + "</div>"
            f"<div>CLAUDE.md: <code>{html.escape(r.get('claude_md', ''))}</code></div></li>"
        )
    return [*out, f'<ol class="top">{"".join(items)}</ol>']


def _session_name(s: dict) -> str:
    return f"{project_name(s['project'])}, {utc(s['started'])}"


def render(report: dict) -> str:
    total = report["totals"]
    sessions = report["sessions"]
    index = {s["file"]: i for i, s in enumerate(sessions)}
    parts = _headline(report)
    heading, svg = chart.chart(report)
    parts.append(f'<h2 class="first">{html.escape(heading)}</h2>')
    parts.append(svg or "<p>No loop took any time.</p>")
    helped_line = _would_help_line(report)
    if helped_line:
        parts.append(f'<p class="helped">{helped_line}</p>')
    if total["live_sessions"]:
        # Where metacog was active, the comparison that exists is the answer (below, open).
        verdict = report["helped"]["verdict"]
        verdict = html.escape(verdict[:1].upper() + verdict[1:])
        parts.append(f'<p class="helped"><b>Did it help?</b> {verdict}</p>')
    parts += _top_recurring(report, index)
    parts += _projects(report)
    parts += _helped(report)
    parts += _recurring(report.get("recurring") or {})
    parts += _claims(report)
    parts += _per_sense(report)
    if report["skipped"]:
        items = "".join(
            f"<li>{html.escape(s['file'])}: {html.escape(s['reason'])}</li>"
            for s in report["skipped"][:50]
        )
        parts.append(
            f"<details><summary>{len(report['skipped']):,} file(s) skipped</summary>"
            f"<ul>{items}</ul></details>"
        )
    parts += _timelines(report)
    data = json.dumps(
        {
            "sessions": [
                {
                    "started": s["started"],
                    "timeline": s.get("timeline"),
                    "episodes": s["episodes"],
                    "said": s["said"],
                    "would_say": [] if s["live"] else s["would_say"],
                }
                for s in sessions
            ]
        },
        separators=(",", ":"),
    )
    # A transcript's text is anyone's: in a <script> element "</script" ends it and "<!--"
    # changes how it is parsed, and "<\\!--" (the old escape) is no JSON escape, so JSON.parse
    # threw on every real history quoting an HTML comment. Outside strings JSON holds no "<",
    # ">" or "&", so writing them as \u escapes changes no value; ensure_ascii already wrote
    # U+2028/U+2029 and lone surrogates as escapes.
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    title = f"metacog report: {total['sessions']:,} sessions"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="color-scheme" content="light dark">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body><main>{''.join(parts)}"
        f'</main><script type="application/json" id="report-data">{data}</script><script>{SCRIPT}</script>'
        "</body></html>\n"
    )


def _projects(report: dict) -> list[str]:
    header = [
        "",
        "sessions",
        "calls",
        "loops",
        "per 100 calls",
        "calls in loops",
        "wall clock",
        "tokens",
        "active time",
    ]

    def row(name: str, figures: dict) -> list[object]:
        return [*loop_row(name, figures), duration(figures.get("loop_active_seconds", 0.0))]

    ranked = sorted(
        report["projects"].items(),
        key=lambda kv: (
            -kv[1]["loop_calls"],
            -kv[1].get("loop_active_seconds", 0.0),
            -kv[1]["calls"],
        ),
    )
    rows = [row(project_name(k), v) for k, v in ranked]
    shown = min(len(rows), SHOWN_ROWS)
    out = [
        f"<h2>Projects: the {shown} with most calls in loops</h2>"
        if len(rows) > SHOWN_ROWS
        else "<h2>Projects</h2>",
        "<p>Time in loops as wall clock, from a loop's first call to the call that ended it, "
        "and as active time (pauses over 5 minutes count as 5 minutes).</p>",
        _table(header, rows[:SHOWN_ROWS]),
        "<details><summary>"
        + (
            f"all {len(rows):,} projects, and the totals"
            if len(rows) > SHOWN_ROWS
            else "the totals"
        )
        + "</summary>"
        + _table(header, [row("all", report["totals"]), *rows])
        + "</details>",
    ]
    return out


def _helped(report: dict) -> list[str]:
    helped = report["helped"]
    rows = [
        [
            name,
            helped[side]["episodes"],
            helped[side]["ended"],
            num(helped[side]["median_calls_after"]),
            num(helped[side]["mean_calls_after"]),
            _tokens(helped[side]["median_tokens_after"]),
            _tokens(helped[side]["mean_tokens_after"]),
        ]
        for side, name in (("spoke", "metacog spoke"), ("silent", "silent or not installed"))
    ]
    sides = "".join(
        f"<li><b>{name}</b>: {html.escape(helped[side]['what'])}</li>"
        for side, name in (("spoke", "metacog spoke"), ("silent", "silent or not installed"))
    )
    body = (
        f"<ul>{sides}</ul><p>Both sides use the same loop model: a loop begins at the first "
        "occurrence of the repeated problem and ends when it is solved or the agent moved on.</p>"
        + _table(
            ["", "loops", "ended", "median calls", "mean calls", "median tokens", "mean tokens"],
            rows,
        )
        + f'<p class="verdict">{html.escape(helped["verdict"])}</p>'
    )
    title = "Whether it helped: calls and tokens from speaking about a loop to its end"
    if report["totals"]["live_sessions"]:
        # Where metacog was active, the comparison is the answer: open.
        return [f"<h2>{title}</h2>", body]
    return [f"<details><summary>{title}</summary>{body}</details>"]


def _per_sense(report: dict) -> list[str]:
    said, would = report["per_sense"]["said"], report["per_sense"]["would"]
    rows = [
        [
            name,
            _n(said.get(name), "spoke"),
            share(said.get(name)),
            _n(would.get(name), "spoke"),
            share(would.get(name)),
        ]
        for name in dict.fromkeys([*said, *would])
    ]
    return [
        "<details><summary>Per sense: how often it spoke, and how often the agent left it"
        "</summary>",
        "<p>Left it: none of the next 10 calls repeated the call or the error the signal came "
        "after. <i>said</i>: sessions where metacog was active; <i>would have said</i>: the "
        "same senses replayed where it was not.</p>",
        _folded_table(["", "said", "left it", "would have said", "left it"], rows, "senses"),
        "</details>",
    ]


def _timelines(report: dict) -> list[str]:
    """Every session's timeline, grouped by project (most calls in loops first), each
    project folded, its worst sessions first; the page's script draws them all."""
    sessions = report["sessions"]
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(sessions):
        groups.setdefault(s["project"], []).append(i)
    ordered = sorted(
        groups.items(),
        key=lambda kv: (
            -sum(e["calls"] for i in kv[1] for e in sessions[i]["episodes"]),
            -len(kv[1]),
            kv[0],
        ),
    )
    out = [
        f"<h2>Sessions: {len(sessions):,} timelines in {len(groups):,} project(s), most calls in "
        "loops first</h2>",
        '<p class="legend"><span class="ok">| call</span><span class="err">| error</span>'
        '<span class="said">● metacog said</span><span class="would">● would have said</span>'
        '<span class="loop">▮ loop</span><span class="prompt">| the person spoke</span>'
        '<span class="ok">┆ a pause over 5 minutes, drawn shorter</span></p>',
    ]
    for project, members in ordered:
        members.sort(key=lambda i: (_loop_cost(sessions[i]), i))
        loops = sum(len(sessions[i]["episodes"]) for i in members)
        loop_time = sum(
            e.get("active_seconds", 0.0) for i in members for e in sessions[i]["episodes"]
        )
        out.append(
            f'<details class="project"><summary><b>{html.escape(project_name(project))}</b> '
            f'<span class="meta">{len(members):,} session(s), {loops:,} loop(s)'
            + (f", {duration(loop_time)} in loops" if loops else "")
            + "</span></summary>"
        )
        for i in members:
            s = sessions[i]
            out.append(
                f'<div class="session" id="session-{i}"><div class="meta">'
                f"<b>{utc(s['started'])} UTC</b>, {s['calls']:,} calls, {s['errors']:,} errors, "
                f"{len(s['episodes'])} loop(s)"
                + (f" ({-_loop_cost(s)[0]:,} calls in them)" if s["episodes"] else "")
                + f", {'metacog active' if s['live'] else 'replayed'}</div>"
                f'<div class="meta">{html.escape(s["file"])}</div>'
                f'<div id="timeline-{i}"></div></div>'
            )
        out.append("</details>")
    return out


def _recurring(recurring: dict) -> list[str]:
    header = ["problem or mistake", *RECURRING_HEADER[1:]]
    out = [
        "<details><summary>Recurring: every problem and mistake that came back, overall and per "
        "project</summary>",
        f"<p>In {recurring.get('min_sessions', 2)} sessions or more: how many times, the calls and "
        "tokens spent in loops on it, first and last seen (UTC). The ones at the top are the "
        "lines of CLAUDE.md worth writing.</p>",
    ]
    overall = recurring.get("overall") or []
    if not overall:
        return [*out, "<p>None yet.</p></details>"]
    out.append(_folded_table(header, [recurring_row(r, 160, "what") for r in overall], "problems"))
    for project, rows in (recurring.get("projects") or {}).items():
        out.append(f"<h3>{html.escape(project_name(project))}</h3>")
        out.append(_folded_table(header, [recurring_row(r, 160, "what") for r in rows], "problems"))
    out.append("</details>")
    return out


def _tokens(value: int | None) -> str:
    return "-" if value is None else count(value)


def _n(row: dict | None, key: str) -> str:
    return f"{row[key]:,}" if row else "0"


def write(path: str, report: dict) -> None:
    atomic_write(path, render(report))
