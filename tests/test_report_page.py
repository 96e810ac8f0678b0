"""`metacog report --html`: the page, opened in a real headless Chromium (Debian's `chromium`).

The checks are on what the browser shows: the DOM after the page's script drew the
timelines, and the pixels of a screenshot. Without Chromium the test is skipped, saying
so; where the suite is required whole (.ci/run sets METACOG_REQUIRE_E2E, CI sets CI) a
missing browser fails it instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import struct
import subprocess
import zlib
from datetime import datetime, timezone
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
