"""`metacog report --html`: the page, opened in a real headless Chromium (Debian's `chromium`).

The checks are on what the browser shows: the DOM after the page's script drew the
timelines, and the pixels of a screenshot. Without Chromium the test is skipped, saying
so; where the suite is required whole (.ci/run sets METACOG_REQUIRE_E2E, CI sets CI) a
missing browser fails it instead.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from clitest import cli
from test_report import LIVE, transcript

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
ERROR_RED = (0xD6, 0x27, 0x28)  # the colour of a failing call's tick (page.py)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    required = [
        v
        for v in ("METACOG_REQUIRE_E2E", "CI")
        if os.environ.get(v, "").lower() not in ("", "0", "false")
    ]
    if required:
        pytest.fail(
            f"{required[0]} is set and there is no `chromium` on PATH (apt-get install chromium)",
            pytrace=False,
        )
    pytest.skip(
        "no `chromium` on PATH: the page is not checked in a browser (apt-get install chromium)"
    )


def browse(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """One headless Chromium run on the page with a new empty profile; ended in every case."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    argv = [chromium(), *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=90)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its helpers (zygote, GPU process) too
        except ProcessLookupError:
            pass
        proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit truecolour PNG (what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(png):
        size, kind = struct.unpack(">I4s", png[pos : pos + 8])
        chunk = png[pos + 8 : pos + 8 + size]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            step = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + size
    raw = zlib.decompress(idat)
    rows, prev, stride = [], bytearray(width * step), width * step
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - step] if i >= step else 0
            b, c = prev[i], prev[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [bytes(r[i : i + 3]) for r in rows for i in range(0, stride, step)]


@pytest.mark.slow
def test_the_page_draws_every_timeline_in_a_real_browser(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    transcript(folder / "a.jsonl", "PFFFFRP")
    later = transcript(
        tmp_path / "later.jsonl",
        "PP",
        cwd="/work/other",
        start=datetime(2026, 1, 1, 2, tzinfo=timezone.utc),
    )
    b = transcript(folder / "b.jsonl", "PPFPP", cwd="/work/other")
    b.write_text(b.read_text() + later.read_text())  # the person came back two hours later
    shutil.copy(LIVE, folder / "live.jsonl")
    page = tmp_path / "report.html"
    result = cli("report", str(folder), "--html", str(page))
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip().endswith(f"Page written to {page}")
    source = page.read_text()
    assert not re.search(r"<link|<img|\ssrc=|url\(|@import", source), "the page must load nothing"
    assert "default-src 'none'" in source
    # The failing command of a.jsonl came back in b.jsonl: a recurring problem, in words, on
    # the first screen with the line for CLAUDE.md and a link to the session where it cost
    # most, and in the full table folded below.
    top = source.split('<h2 class="first">What keeps coming back</h2>', 1)[1].split("</ol>")[0]
    assert re.match(r'<ol class="top"><li><span class="what">ZeroDivisionError', top), top[:600]
    assert "CLAUDE.md: <code>When `ZeroDivisionError" in top
    assert re.search(r'worst: <a href="#session-(\d+)">', top)
    linked = re.search(r'worst: <a href="#session-(\d+)">', top).group(1)
    assert f'<div class="session" id="session-{linked}">' in source
    # One session had metacog active: the comparison is on the first screen and open below;
    # the two replayed ones get the would-have-helped line.
    first = source.split("<h2>Projects", 1)[0]
    assert '<p class="helped"><b>Did it help?</b> Too few loops to tell: 1 where metacog' in first
    assert "<b>Would it have helped?</b> In the 2 sessions where metacog was not active" in first
    assert "<h2>Whether it helped: calls and tokens" in source
    recurring = source.split("<summary>Recurring: every problem and mistake that came back", 1)[1]
    assert re.search(r"</p><table>.*?<td>ZeroDivisionError", recurring), recurring[:600]
    assert "e+0" not in source  # token counts read as 1.2M, never 1.19175e+06

    dom = browse(page, tmp_path, "--dump-dom").stdout
    assert 'data-timelines="3"' in dom, dom[-2000:]  # the script ran and drew all three sessions
    assert len(re.findall(r'<svg[^>]*class="timeline"', dom)) == 3
    assert dom.count('class="episode"') == 2  # a replayed loop (a.jsonl) and the live one
    assert dom.count('class="signal said"') == 1 and dom.count('class="signal would"') >= 1
    assert "<title>nociception: metacog: the same error 3 times in a row" in dom
    assert re.search(r'class="calls-error"[^>]*|d="M[\d.]+ 14v20', dom)
    assert dom.count('class="pause"') == 1  # b.jsonl's two hours, drawn shorter and marked

    shot = tmp_path / "shot.png"
    browse(page, tmp_path, "--window-size=1000,1800", f"--screenshot={shot}")
    width, height, rgb = pixels(shot.read_bytes())
    assert (width, height) == (1000, 1800)
    red = sum(1 for px in rgb if abs(px[0] - ERROR_RED[0]) < 40 and px[1] < 90 and px[2] < 90)
    assert red > 50, f"no failing call drawn in red ({red} red pixels)"  # the ticks of 5 failures


def test_a_missing_browser_fails_where_the_suite_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    for var in ("METACOG_REQUIRE_E2E", "CI"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no `chromium` on PATH"):
        chromium()
    monkeypatch.setenv("METACOG_REQUIRE_E2E", "1")
    with pytest.raises(
        pytest.fail.Exception, match="METACOG_REQUIRE_E2E is set and there is no `chromium`"
    ):
        chromium()
    assert (
        "apt-get install -y -qq chromium"
        in (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    )


HOSTILE = "<!-- </script><script>throw 1</script> \u2028\u2029 \\ud800 ]]> &amp; \" '"


def console_errors(stderr: str) -> list[str]:
    """What Chromium (--enable-logging=stderr) logged from the page's console and scripts."""
    return [
        line
        for line in stderr.splitlines()
        if "CONSOLE" in line and ("Uncaught" in line or "Error" in line or ":ERROR:" in line)
    ]


def draw(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    shown = browse(page, tmp_path, "--dump-dom", "--enable-logging=stderr", "--v=0")
    return shown.stdout, console_errors(shown.stderr)


@pytest.mark.slow
def test_every_timeline_is_drawn_whatever_the_transcripts_hold(tmp_path: Path) -> None:
    # What metacog said is quoted from the transcript verbatim: anything a person's history
    # holds can reach the page's embedded data, and one bad character used to break it all.
    folder = tmp_path / "history"
    folder.mkdir()
    lines = LIVE.read_text().splitlines()
    for n, text in enumerate([HOSTILE, "metacog: " + "<!--x" * 30_000, "metacog: \ud800 \udfff"]):
        edited = []
        for line in lines:
            entry = json.loads(line)
            attachment = entry.get("attachment") or {}
            if attachment.get("type") == "hook_additional_context":
                attachment["content"] = [
                    text if text.startswith("metacog: ") else "metacog: " + text
                ]
            edited.append(json.dumps(entry))  # ensure_ascii: a lone surrogate is written \ud800
        (folder / f"live-{n}.jsonl").write_text("\n".join(edited) + "\n")
    transcript(folder / "plain.jsonl", "PFFFFRP")
    page = tmp_path / "report.html"
    result = cli("report", str(folder), "--html", str(page))
    assert result.exit_code == 0, result.output
    source = page.read_text()
    data = source.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and "\u2028" not in data, "the embedded data holds raw markup"
    dom, errors = draw(page, tmp_path)
    assert not errors, errors
    assert 'data-timelines="4"' in dom, dom[-2000:]
    assert (
        dom.count("<title>note: metacog: &lt;!-- &lt;/script&gt;")
        + dom.count("<title>nociception: metacog: &lt;!-- &lt;/script&gt;")
        >= 1
    ), "the hostile text is shown as text"


# What a person sees, measured by the browser itself: appended to a copy of the page (its
# CSP allows inline scripts), run after the page's own script, read back from the DOM.
MEASURE = r"""<script>
(function () {
  function bottom(sel) {
    var el = document.querySelector(sel);
    return el ? Math.round(el.getBoundingClientRect().bottom + window.scrollY) : -1;
  }
  // Inside a closed <details> an element keeps its boxes (content-visibility: hidden).
  function shown(el) { return el.checkVisibility() && el.getClientRects().length > 0; }
  var main = document.querySelector('main'), box = main.getBoundingClientRect();
  var pad = parseFloat(getComputedStyle(main).paddingLeft);
  var left = box.left + pad - 1, right = box.right - pad + 1, outside = [];
  main.querySelectorAll('*').forEach(function (el) {
    if (!shown(el) || (el.closest('svg') && el.tagName !== 'svg')) return;
    var r = el.getBoundingClientRect();
    var spills = getComputedStyle(el).display !== 'inline' && el.scrollWidth > el.clientWidth + 1;
    if (r.left < left || r.right > right || spills) {
      outside.push(el.tagName + ' ' + (el.textContent || '').slice(0, 80));
    }
  });
  var rows = [];
  document.querySelectorAll('table').forEach(function (t) {
    if (shown(t)) rows.push(t.querySelectorAll('tr > td:first-child').length);
  });
  var out = {
    headline: bottom('.cost'), chart: bottom('svg.chart'), first_problem: bottom('ol.top li'),
    last_problem: bottom('ol.top li:last-child'),
    page_width: document.documentElement.scrollWidth, window_width: window.innerWidth,
    outside: outside.slice(0, 20), open_table_rows: rows,
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    background: getComputedStyle(document.body).backgroundColor,
    colour: getComputedStyle(document.body).color,
    drawn: document.querySelectorAll('svg.timeline').length
  };
  document.body.setAttribute('data-measured', JSON.stringify(out));
})();
</script>"""
WINDOW = "--window-size=1400,900"


def measure(page: Path, tmp_path: Path, dark: bool = False) -> tuple[dict, list[str], str]:
    """The layout the browser computed at 1400 px wide, its console errors, and the DOM."""
    copy = tmp_path / f"measured-{'dark' if dark else 'light'}.html"
    copy.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    args = [WINDOW, "--dump-dom", "--enable-logging=stderr", "--v=0"]
    shown = browse(copy, tmp_path, *args, *(["--force-dark-mode"] if dark else []))
    found = re.search(r'data-measured="([^"]*)"', shown.stdout)
    assert found, shown.stdout[-2000:] + shown.stderr[-2000:]
    return json.loads(html.unescape(found.group(1))), console_errors(shown.stderr), shown.stdout


def first_screen(page: Path, tmp_path: Path, dark: bool = False) -> Path:
    """A 1400x900 screenshot of the page as it opens, in the test's own folder."""
    shot = tmp_path / f"first-screen-{'dark' if dark else 'light'}.png"
    browse(page, tmp_path, WINDOW, f"--screenshot={shot}", *(["--force-dark-mode"] if dark else []))
    return shot


def luminance(rgb: list[bytes]) -> float:
    return sum(0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] for p in rgb) / len(rgb)


def fetched(source: str) -> list[str]:
    """What in the page a browser would fetch: any src, any href but an in-page #anchor, an
    address in any tag's attributes, in the style or in the script (but for the SVG namespace
    it names elements by). An address a transcript quotes is text, shown and never fetched."""
    data = re.compile(r'<script type="application/json" id="report-data">.*?</script>', re.S)
    outside = data.sub("", source)
    tags = " ".join(re.findall(r"<[a-zA-Z][^>]*>", outside))
    code = " ".join(re.findall(r"<(?:style|script)>(.*?)</(?:style|script)>", outside, re.S))
    found = [m for m in re.findall(r'\b(?:src|href)="([^"]*)"', tags) if not m.startswith("#")]
    found += re.findall(r"url\(|@import|<link|<img|<iframe|<object|<embed|<base", outside)
    found += [
        u
        for u in re.findall(r"[a-z]+://[^\s'\"<>]+", tags + code)
        if u != "http://www.w3.org/2000/svg"
    ]
    return found


def check_first_screen(page: Path, tmp_path: Path, sessions: int) -> dict:
    """The issue's bars, in a real browser: returns the light layout for more checks."""
    source = page.read_text()
    assert fetched(source) == [], "the page must load nothing"
    layout, errors, dom = measure(page, tmp_path)
    assert not errors, errors
    assert f'data-timelines="{sessions}"' in dom and layout["drawn"] == sessions
    # The headline, the chart and the first recurring problem within the first 900 pixels.
    assert 0 < layout["headline"] <= 900 and 0 < layout["chart"] <= 900, layout
    assert 0 < layout["first_problem"] <= 900, layout
    assert layout["page_width"] <= layout["window_width"], "the page scrolls sideways"
    assert layout["outside"] == [], "text outside its column"
    assert layout["open_table_rows"] and max(layout["open_table_rows"]) <= 10, layout
    night, errors, _ = measure(page, tmp_path, dark=True)
    assert not errors, errors
    assert (layout["dark"], night["dark"]) == (False, True)
    assert layout["background"] != night["background"] and layout["colour"] != night["colour"]
    assert night["outside"] == [] and night["headline"] == layout["headline"]
    light_px = pixels(first_screen(page, tmp_path).read_bytes())
    dark_px = pixels(first_screen(page, tmp_path, dark=True).read_bytes())
    assert light_px[:2] == dark_px[:2] == (1400, 900)
    # Read as a person would: a light page by day, a dark one with the system's dark mode.
    assert luminance(light_px[2]) > 200 and luminance(dark_px[2]) < 60
    for _, _, rgb in (light_px, dark_px):
        # The chart's bars (page.py's --bar, light #c98f00, dark #d9a21b) on the first screen.
        bars = sum(1 for px in rgb if px[0] > 180 and 130 < px[1] < 175 and px[2] < 40)
        assert bars > 500, f"no chart bars on the first screen ({bars} bar pixels)"
    return layout


def history(folder: Path, projects: int, days_apart: int) -> None:
    """One session per project, project k failing 3 + k times before the command passes:
    the later the project, the longer its loop; sessions `days_apart` days apart."""
    folder.mkdir()
    start = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)
    for k in range(projects):
        transcript(
            folder / f"s{k:02d}.jsonl",
            "P" + "F" * (3 + k) + "RP",
            cwd=f"/work/p{k:02d}",
            start=start + timedelta(days=days_apart * k),
        )


def test_the_first_screen_answers_and_the_rest_is_folded(tmp_path: Path) -> None:
    history(tmp_path / "history", 12, 7)
    page = tmp_path / "report.html"
    result = cli("report", str(tmp_path / "history"), "--html", str(page))
    assert result.exit_code == 0, result.output
    source = page.read_text()
    assert fetched(source) == []
    first, rest = source.split("<h2>Projects", 1)
    # What loops cost: time, calls and tokens with their shares, the period and the sessions.
    assert "<h1>What loops cost you</h1>" in first
    assert "12 sessions in 12 projects, 2026-01-05 to 2026-03-23 (UTC)" in first
    calls = sum(3 + k for k in range(12))  # each loop: its failures, to the call that passed
    assert f"<b>{calls:,} calls</b><span>in loops, " in first
    assert re.search(r"<b>\d+m \d\ds</b><span>in loops, \d+% of [\dhm ]+s? active time", first)
    # When: one bar a week, twelve weeks.
    assert '<h2 class="first">When: loop time per week</h2>' in first
    assert first.count('<rect class="bar"') == 12
    assert "Would it have helped?</b> In these sessions metacog was not active: it would " in first
    # What keeps coming back: the ZeroDivisionError of every session.
    assert re.search(
        r'<li><span class="what">ZeroDivisionError.*?in 12 sessions, 12 projects', first
    )
    assert first.count('<a href="#session-') == 3  # the three worst: the longest loops
    assert re.findall(r'<a href="#session-(\d+)">', first) == ["11", "10", "9"]
    # Projects: the 10 with most calls in loops open, all 12 and the totals one click away.
    table, folded = rest.split("<details>", 1)
    assert [f"p{k:02d}" for k in range(11, 1, -1)] == re.findall(
        r"<tr><td>/?work/(p\d\d)</td>", table
    )
    assert folded.split("</details>", 1)[0].count("<tr><td>") == 13
    # Timelines: one fold per project, the worst first; every session there.
    folds = re.findall(r'<details class="project"><summary><b>work/(p\d\d)</b>', rest)
    assert folds == [f"p{k:02d}" for k in range(11, -1, -1)]
    assert rest.count('<div class="session" id="session-') == 12


def test_few_weeks_chart_loop_time_per_project(tmp_path: Path) -> None:
    history(tmp_path / "history", 5, 1)  # five days: one or two weeks
    page = tmp_path / "report.html"
    assert cli("report", str(tmp_path / "history"), "--html", str(page)).exit_code == 0
    first = page.read_text().split("<h2>Projects", 1)[0]
    assert '<h2 class="first">Where: loop time per project</h2>' in first
    names = re.findall(r'<text class="tick"[^>]*text-anchor="end">([^<]*)</text>', first)
    assert names == [f"work/p{k:02d}" for k in range(4, -1, -1)]  # longest loop first


@pytest.mark.slow
def test_the_first_screen_in_a_real_browser(tmp_path: Path) -> None:
    history(tmp_path / "history", 12, 7)
    page = tmp_path / "report.html"
    assert cli("report", str(tmp_path / "history"), "--html", str(page)).exit_code == 0
    check_first_screen(page, tmp_path, 12)
