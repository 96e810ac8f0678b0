"""`metacog report` over the real sessions in ../shared/transcripts (not copied into this
repository: this module skips, saying so, when the folder is not beside it). The folder
grows (49 sessions, then 72, 163, 243): the checks are on what holds for every session in it and on
labelled episodes (LABELS.jsonl), not on its size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clitest import cli

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
pytestmark = [
    pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason=f"{TRANSCRIPTS} is not here"),
    pytest.mark.slow,  # reads the shared transcripts whole, and draws their page in a browser
]


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """One read of the whole folder: its figures, and its page (in the test's tmp folder)."""
    page = tmp_path_factory.mktemp("page") / "report.html"
    result = cli("report", str(TRANSCRIPTS), "--json", "--html", str(page))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), page


@pytest.fixture(scope="module")
def shared(written: tuple[dict, Path]) -> dict:
    return written[0]


def test_the_shared_history_reads_whole_and_finds_the_labelled_loops(shared: dict) -> None:
    out = shared
    listed = sorted(TRANSCRIPTS.glob("*.jsonl"))
    labelled = {json.loads(line)["file"] for line in (TRANSCRIPTS / "LABELS.jsonl").open()}
    assert out["files"]["listed"] == len(listed)
    assert out["files"]["read"] == len(labelled) and out["files"]["empty"] == 0
    # Only the label files (LABELS.jsonl, and CLAIMS.jsonl since 2026-12-06) are no transcripts.
    labels = sorted(p.name for p in listed if p.stem.isupper())
    assert labels and "LABELS.jsonl" in labels
    assert sorted((Path(s["file"]).name, s["reason"]) for s in out["skipped"]) == [
        (name, "not a Claude Code transcript (no user or assistant line)") for name in labels
    ]
    by_name = {Path(s["file"]).name: s for s in out["sessions"]}
    assert set(by_name) == labelled
    [lint] = [s for name, s in by_name.items() if "373740ff86" in name]
    # LABELS.jsonl: 'golangci-lint --enable-only usestdlibvars' fails from call 47 to 89
    # (1-based), passes at 93: one loop holds the whole stretch and ends there.
    assert any(
        e["start"] + 1 <= 47 and e["last"] + 1 >= 89 and e["end"] + 1 == 93 and e["resolved"]
        for e in lint["episodes"]
    ), lint["episodes"]
    [bodyclose] = [s for name, s in by_name.items() if "779277eb10" in name]
    # ... 'golangci-lint --enable-only bodyclose' from 67 to 126, never passing: one loop
    # from its first failure to its last (the old model ended it a call after it began).
    assert any(
        not e["resolved"] and e["start"] + 1 == 67 and e["last"] + 1 == 126
        for e in bodyclose["episodes"]
    ), bodyclose["episodes"]
    quiet = [s for name, s in by_name.items() if "ef958aa1" in name and "subagent" not in name]
    assert quiet and all(not s["episodes"] and not s["would_say"] for s in quiet)
    assert out["totals"]["live_sessions"] == 0 and out["helped"]["spoke"]["episodes"] == 0
    # A loop is 3 attempts at least (LABELS.md): no one-call loop is reported.
    assert all(e["calls"] >= 3 for s in out["sessions"] for e in s["episodes"])


def test_the_shared_history_has_recurring_mistakes(shared: dict) -> None:
    rows = {r["problem"]: r for r in shared["recurring"]["overall"]}
    # 'File has not been read yet' comes back across several projects of the labelled sessions.
    assert rows["edit-before-read"]["sessions"] >= 2 and rows["edit-before-read"]["projects"] >= 2
    assert rows["edit-before-read"]["what"] == "an Edit or Write of a file not Read first"
    assert all(r["sessions"] >= 2 for r in shared["recurring"]["overall"])


def test_the_shared_history_page_opens_on_what_loops_cost(
    written: tuple[dict, Path], tmp_path: Path
) -> None:
    # Real histories quote HTML comments and </script>: the page broke on the first of them.
    # The bars (issue 41) at 1400x900: no console error, every timeline drawn, the
    # headline, the chart and the first recurring problem in the first 900 pixels, text in
    # its column, no open table over 10 rows, light and dark, nothing fetched.
    from test_report_page import check_first_screen

    out, page = written
    sessions = len(out["sessions"])
    layout = check_first_screen(page, tmp_path, sessions)
    source = page.read_text()
    assert source.count('class="session"') == sessions
    # Every project's timelines under one fold, as many folds as projects.
    assert source.count('<details class="project">') == len(out["projects"])
    top = source.split('<ol class="top">', 1)[1].split("</ol>", 1)[0]
    assert top.count("<li>") == min(5, len(out["recurring"]["overall"])) == 5
    assert top.count("CLAUDE.md: <code>") == 5
    print(f"first screen at 1400x900: {layout}")
