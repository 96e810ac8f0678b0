"""`metacog report --html FILE`: one self-contained page, no network, no external assets.

The totals are plain HTML; each session's timeline is drawn by the page's own script
from the data embedded in it (calls along the time axis, errors, what metacog said and
would have said, where loops began and ended). A Content-Security-Policy forbids every
fetch, so the page cannot reach out even if someone edits it.
"""

from __future__ import annotations

import html
import json

from metacog.fsutil import atomic_write
from metacog.report import delivery
from metacog.report.sources import utc
from metacog.report.terminal import (
    RECURRING_HEADER,
    count,
    loop_row,
    num,
    project_name,
    recurring_row,
    share,
)

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid #ddd}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}th{text-align:left;background:#f4f4f4}
.session{margin:14px 0;border-top:1px solid #eee;padding-top:6px}.meta{color:#555;font-size:12px}
svg.timeline{display:block;width:100%;height:46px;background:#fafafa}
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


def render(report: dict) -> str:
    total = report["totals"]
    sessions = report["sessions"]
    parts = [
        f"<h1>metacog report: {total['sessions']:,} sessions, {total['live_sessions']:,} with metacog active</h1>",
        f"<p>{total['calls']:,} tool calls, {total['errors']:,} errors, {count(total['tokens'])} tokens; "
        f"metacog said {total['said']:,} thing(s), and would have said {total['would_say']:,} where it was "
        "not active.</p>",
    ]
    said_so = delivery.verdict(report["delivery"]) if report.get("delivery") else ""
    if said_so:
        parts.append(f"<p>{html.escape(said_so)}</p>")
    if report["skipped"]:
        items = "".join(
            f"<li>{html.escape(s['file'])}: {html.escape(s['reason'])}</li>"
            for s in report["skipped"][:50]
        )
        parts.append(f"<p>{len(report['skipped'])} file(s) skipped:</p><ul>{items}</ul>")
    header = ["", "sessions", "calls", "loops", "per 100 calls", "calls in loops", "time", "tokens"]
    rows = [loop_row("all", total)] + [
        loop_row(project_name(k), v) for k, v in report["projects"].items()
    ]
    parts += ["<h2>What loops cost</h2>", _table(header, rows)]
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
    parts += [
        "<h2>Whether it helped: calls and tokens from speaking about a loop to its end</h2>",
        f"<ul>{sides}</ul><p>Both sides use the same loop model: a loop begins at the first "
        "occurrence of the repeated problem and ends when it is solved or the agent moved on.</p>",
        _table(
            ["", "loops", "ended", "median calls", "mean calls", "median tokens", "mean tokens"],
            rows,
        ),
        f'<p class="verdict">{html.escape(helped["verdict"])}</p>',
    ]
    parts += _recurring(report.get("recurring") or {})
    parts += _claims(report)
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
    parts += [
        "<h2>Per sense: how often it spoke, and how often the agent left it</h2>",
        "<p>Left it: none of the next 10 calls repeated the call or the error the signal came "
        "after. <i>said</i>: sessions where metacog was active; <i>would have said</i>: the "
        "same senses replayed where it was not.</p>",
        _table(["", "said", "left it", "would have said", "left it"], rows),
    ]
    parts.append(
        '<h2>Sessions</h2><p class="legend"><span class="ok">| call</span><span class="err">| error</span>'
        '<span class="said">● metacog said</span><span class="would">● would have said</span>'
        '<span class="loop">▮ loop</span><span class="prompt">| the person spoke</span>'
        '<span class="ok">┆ a pause over 5 minutes, drawn shorter</span></p>'
    )
    for i, s in enumerate(sessions):
        parts.append(
            f'<div class="session"><div><b>{html.escape(project_name(s["project"]))}</b> '
            f'<span class="meta">{html.escape(s["file"])}</span></div>'
            f'<div class="meta">{utc(s["started"])} UTC, {s["calls"]:,} calls, {s["errors"]:,} errors, '
            f"{len(s['episodes'])} loop(s), {'metacog active' if s['live'] else 'replayed'}</div>"
            f'<div id="timeline-{i}"></div></div>'
        )
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
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>metacog report</title><style>{STYLE}</style></head><body>{''.join(parts)}"
        f'<script type="application/json" id="report-data">{data}</script><script>{SCRIPT}</script>'
        "</body></html>\n"
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


def _recurring(recurring: dict) -> list[str]:
    header = ["problem or mistake", *RECURRING_HEADER[1:]]
    out = [
        "<h2>Recurring: problems and mistakes that came back</h2>",
        f"<p>In {recurring.get('min_sessions', 2)} sessions or more: how many times, the calls and "
        "tokens spent in loops on it, first and last seen (UTC). The ones at the top are the "
        "lines of CLAUDE.md worth writing.</p>",
    ]
    overall = recurring.get("overall") or []
    if not overall:
        return [*out, "<p>None yet.</p>"]
    out.append(_table(header, [recurring_row(r, 160, "what") for r in overall]))
    for project, rows in (recurring.get("projects") or {}).items():
        out.append(f"<h3>{html.escape(project_name(project))}</h3>")
        out.append(_table(header, [recurring_row(r, 160, "what") for r in rows]))
    return out


def _tokens(value: int | None) -> str:
    return "-" if value is None else count(value)


def _n(row: dict | None, key: str) -> str:
    return f"{row[key]:,}" if row else "0"


def write(path: str, report: dict) -> None:
    atomic_write(path, render(report))
