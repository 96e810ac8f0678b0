"""metacog.perception.checks: what a command promised and what its fallback printed, read from
the lines its sayers print in their own words (metacog.perception.act's `says`, one reader of
a command's own words for the turn's end and for hidden failures)."""

from __future__ import annotations

import pytest

from metacog.perception.checks import fell_back, promised

# A merge's chain, as agents write it: one act a line, the promise last.
MERGE = (
    "cd ../work &&\ngit add logs/ &&\ngit stash push -m 'logs' &&\ngit checkout main &&\n"
    "git pull &&\ngit merge agent --no-ff --no-edit &&\ngit worktree remove ../agent &&\n"
    'git branch -d agent &&\necho "✅ agent merged successfully!"'
)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (
            'rm -f /tmp/claude-*-cwd 2>/dev/null && echo "✅ Cleaned temporary files"',
            "cleaned temporary files",
        ),
        (MERGE, "agent merged successfully"),  # seven acts before it, each on its own line
        ('test -f x && echo "Config file found" || echo "Config missing"', "config file found"),
        (
            'mkdir -p a && echo "Created folders" && cp -r b a && echo "Copied sources"',
            "copied sources",
        ),
        ("make && echo Build finished cleanly", "build finished cleanly"),  # unquoted, the same
        ("rm -rf build && echo done", ""),  # one word
        ('make build && echo "Built to $OUT_DIR"', ""),  # what the world holds, not its words
        ('echo "Fix applied to layout" && echo "Reload shows the result"', ""),  # no act
        ('echo "module test-wizard go" > go.mod', ""),  # into a file
        ('echo \'{"session_id": "test-json"}\' | uv run hook.py', ""),  # fed to another
        ("bash -c \"make && echo 'Make working fine'\"", ""),  # another program's argument
        ("cat > t.sh <<'EOF'\nmake && echo \"Built it all\"\nEOF\nchmod +x t.sh", ""),  # a file
        ('ls build || echo "No build directory"', ""),  # printed when it failed
    ],
)
def test_a_promise_is_what_prints_only_when_the_work_went_well(command: str, words: str) -> None:
    assert promised(command) == words


FALLBACK = './ultrathink.sh status 2>/dev/null || echo "Status command works"'


@pytest.mark.parametrize(
    ("command", "output", "said"),
    [
        (
            FALLBACK,
            "Claude Agents Bridge\nBuild Status:\nStatus command works",
            "Status command works",
        ),
        (FALLBACK, "Claude Agents Bridge\nBuild Status: no builds", ""),
        (FALLBACK, "Status command works\nBuild Status: no builds", ""),  # not the last line
        (
            FALLBACK.replace("|| ", "||\n  "),
            "Bridge\nStatus   command works",
            "Status command works",
        ),
        (
            'ls node_modules/multer 2>/dev/null || echo "multer not found" && grep multer package.json',
            "multer not found",
            "multer not found",
        ),  # the list goes on after it, and printed nothing more
        ('test -f x && echo "Config found" || echo "Config missing"', "x\nConfig found", ""),
        (
            'test -f x && echo "Config found" || echo "Config missing"',
            "x\nConfig missing",
            "Config missing",
        ),
        ('./check.sh; echo "Check finished"', "ok\nCheck finished", ""),  # printed whatever it did
    ],
)
def test_a_fallback_printed_last_is_the_failure_it_hides(
    command: str, output: str, said: str
) -> None:
    assert fell_back(command, output) == (f"its `|| echo` printed: {said}" if said else "")
