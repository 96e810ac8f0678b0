"""Drive the real Claude Code CLI against the scripted model in model_server.py.

The fixtures in conftest.py build on this module; it has no pytest dependency so it
can be used from a REPL too::

    h = ClaudeHarness(claude_bin=find_claude_bin()[0], root=Path(tempfile.mkdtemp()))
    result = h.run([[{"name": "Bash", "input": {"command": "ls"}}], "done"],
                   plugin_dir=REPO_ROOT)
    result.texts[1]         # every text the model was sent in agent request 1

Facts this relies on (measured on Claude Code 2.1.328, see the report in
tests/e2e/README.md): with ``--plugin-dir`` the plugin's data folder is
``$HOME/.claude/plugins/data/<plugin>-inline``; hook commands run under
``/bin/sh -c`` with ``CLAUDE_PLUGIN_ROOT``/``CLAUDE_PLUGIN_DATA`` in their
environment and the variables of the ``claude`` process inherited.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_server import ModelServer, RecordedRequest

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CLAUDE_BIN = Path("/root/.cache/metacog-ci/claude/node_modules/.bin/claude")
CLAUDE_BIN_ENV = "METACOG_CLAUDE_BIN"
ALLOWED_TOOLS = "Bash Read Edit Write Grep Glob"
PLUGIN_NAME = "metacog"
INLINE_DATA = f"{PLUGIN_NAME}-inline"  # data folder name under --plugin-dir

# Variables of the outer environment that must not reach the CLI under test: a
# developer running the suite inside a Claude Code session, a real API key, a
# config dir override, metacog's own settings, XDG dirs that would escape HOME.
_SCRUB_PREFIXES = ("CLAUDE", "ANTHROPIC", "METACOG", "OTEL_", "XDG_", "AWS_BEARER", "VERTEX")


def find_claude_bin() -> tuple[Path | None, str]:
    """The CLI to drive: $METACOG_CLAUDE_BIN, else the pinned CI install.

    Returns (path or None, explanation).
    """
    configured = os.environ.get(CLAUDE_BIN_ENV)
    candidate = Path(configured) if configured else DEFAULT_CLAUDE_BIN
    source = f"${CLAUDE_BIN_ENV}" if configured else "the default location"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate, f"{candidate} (from {source})"
    return None, (
        f"Claude Code CLI not found at {candidate} (from {source}). Install it with "
        "`npm install --prefix /root/.cache/metacog-ci/claude @anthropic-ai/claude-code@2.1.328` "
        f"or point {CLAUDE_BIN_ENV} at a `claude` executable."
    )


def plugin_version(root: Path = REPO_ROOT) -> str:
    return json.loads((root / ".claude-plugin" / "plugin.json").read_text())["version"]


def marketplace_name(root: Path = REPO_ROOT) -> str:
    return json.loads((root / ".claude-plugin" / "marketplace.json").read_text())["name"]


def scrubbed_environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().startswith(_SCRUB_PREFIXES)}


# --------------------------------------------------------------------------- text
def _block_texts(block: Any) -> Iterable[str]:
    """Every piece of text inside one content block (recursing into tool results)."""
    if isinstance(block, str):
        yield block
        return
    if not isinstance(block, dict):
        return
    kind = block.get("type")
    if kind == "text":
        yield block.get("text", "")
    elif kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            for inner in content:
                yield from _block_texts(inner)
        elif content is not None:
            yield str(content)
    elif kind == "tool_use":
        yield json.dumps(block.get("input", {}), ensure_ascii=False)
    elif kind in ("thinking", "redacted_thinking"):
        yield block.get("thinking", "")
    elif kind == "document":
        source = block.get("source") or {}
        if isinstance(source.get("data"), str) and source.get("type") == "text":
            yield source["data"]


def request_text_blocks(body: dict) -> list[str]:
    """All texts the model was sent in one request, in order: the system blocks,
    then every message's content (user/assistant/system roles; text blocks,
    tool_result content, system-reminders, tool_use inputs). Tool definitions are
    not included: they are the CLI's, not anyone's message."""
    texts = _content_texts(body.get("system"))
    for message in body.get("messages") or []:
        texts.extend(_content_texts(message.get("content")))
    return texts


def _content_texts(content: Any) -> list[str]:
    """A system prompt or a message's content: one string, or a list of blocks."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [text for block in content for text in _block_texts(block)]
    return []


def request_text(body: dict) -> str:
    """request_text_blocks joined with newlines: one string to search."""
    return "\n".join(request_text_blocks(body))


def tool_results(body: dict) -> list[dict]:
    """The tool_result blocks of a request, oldest first."""
    out = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            out.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return out


def tool_result_text(block: dict) -> str:
    return "\n".join(_block_texts(block))


# ------------------------------------------------------------------------- result
@dataclass
class SessionResult:
    """What one `claude -p` session did."""

    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    server: ModelServer
    argv: list[str]
    timed_out: bool = False
    ignore_paths: list[str] = field(default_factory=list)

    @property
    def requests(self) -> list[dict]:
        """Agent-loop request bodies, in order; request i answered scripted turn i."""
        return self.server.agent_requests

    @property
    def all_requests(self) -> list[RecordedRequest]:
        """Every HTTP request the CLI made (agent, side, count_tokens, probes)."""
        return list(self.server.requests)

    @property
    def output(self) -> dict | None:
        """The CLI's --output-format json result, parsed (None if it was not JSON)."""
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None

    @property
    def texts(self) -> list[str]:
        """request_text() of every agent request."""
        return [request_text(body) for body in self.requests]

    def text(self, i: int) -> str:
        return request_text(self.requests[i])

    def mentions(self, word: str, i: int) -> list[str]:
        """Snippets of request i's text where `word` occurs (case-insensitive), with
        the session's own paths (home, project, plugin dir) blanked out first so a
        folder name can never count as a mention."""
        found = []
        for block in request_text_blocks(self.requests[i]):
            for path in self.ignore_paths:
                block = block.replace(path, "<path>")
            for m in re.finditer(re.escape(word), block, re.IGNORECASE):
                found.append(block[max(0, m.start() - 80) : m.end() + 160])
        return found

    def first_request_mentioning(self, word: str) -> int | None:
        for i in range(len(self.requests)):
            if self.mentions(word, i):
                return i
        return None

    def describe(self, limit: int = 4000) -> str:
        """A diagnostic summary for assertion messages."""
        lines = [
            f"argv: {self.argv}",
            (
                f"exit code: {self.returncode}{' (timed out)' if self.timed_out else ''}, "
                f"{self.duration:.2f}s, {len(self.requests)} agent requests, "
                f"{len(self.server.requests)} HTTP requests"
            ),
            f"stderr: {self.stderr[-1500:]!r}",
            f"stdout: {self.stdout[-1500:]!r}",
        ]
        for i, body in enumerate(self.requests):
            last = (body.get("messages") or [{}])[-1]
            lines.append(f"request {i}: last message: {json.dumps(last, ensure_ascii=False)[:300]}")
        text = "\n".join(lines)
        return text[-limit:]


# ------------------------------------------------------------------------ harness
class ClaudeHarness:
    """One test's world: a fresh HOME, METACOG_HOME and git project, and a way to
    run `claude` in it."""

    def __init__(self, claude_bin: Path, root: Path):
        self.claude_bin = Path(claude_bin)
        # Folder names are neutral on purpose: paths reach the model (the working
        # directory is in its environment block), and a name containing "metacog"
        # would look like metacog speaking.
        self.root = Path(tempfile.mkdtemp(prefix="e2e-", dir=root))
        self.home = self.root / "home"
        self.metacog_home = self.root / "mc-home"
        self.project = self.root / "project"
        for path in (self.home, self.project):
            path.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.project)], check=True)
        (self.project / "README.txt").write_text("A scratch project for end-to-end tests.\n")
        self.extra_env: dict[str, str] = {}
        self.plugin_dir: Path | None = None  # default for run(); set by the fixtures

    # ---------------------------------------------------------------- env / data
    def env(self, base_url: str | None = None) -> dict[str, str]:
        env = scrubbed_environ()
        env.update(
            HOME=str(self.home),
            METACOG_HOME=str(self.metacog_home),
            ANTHROPIC_API_KEY="test",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            GIT_AUTHOR_NAME="e2e",
            GIT_AUTHOR_EMAIL="e2e@example.invalid",
            GIT_COMMITTER_NAME="e2e",
            GIT_COMMITTER_EMAIL="e2e@example.invalid",
        )
        if base_url:
            env["ANTHROPIC_BASE_URL"] = base_url
        env.update(self.extra_env)
        return env

    def plugin_data_dir(self, name: str = INLINE_DATA) -> Path:
        return self.home / ".claude" / "plugins" / "data" / name

    def hook_stderr(self, name: str = INLINE_DATA) -> str:
        """What metacog's hooks wrote to hook-stderr.log in this HOME ("" if nothing)."""
        log = self.plugin_data_dir(name) / "hook-stderr.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def link_runtime(self, prepared_data: Path, name: str = INLINE_DATA) -> Path:
        """Give this HOME the runtime prepared once for the run.

        The data folder itself stays a real, per-test folder (metacog's logs,
        e.g. hook-stderr.log, are the test's own); only its `runtime/` is a
        symlink to the shared one. A venv cannot be moved, but it works through a
        symlink because its original path stays valid.
        """
        data = self.plugin_data_dir(name)
        data.mkdir(parents=True, exist_ok=True)
        link = data / "runtime"
        if not link.exists():
            link.symlink_to(prepared_data / "runtime", target_is_directory=True)
        return data

    # -------------------------------------------------------------------- runs
    def cli(
        self, *args: str, timeout: float = 60, cwd: Path | None = None, check: bool = False
    ) -> subprocess.CompletedProcess:
        """Run a non-session `claude` subcommand (plugin validate/install...) in this HOME.

        A scripted server stands in for the API here too: with an API key but no
        ANTHROPIC_BASE_URL, `claude plugin marketplace add` and `plugin install`
        each spend ~17 s trying to reach the real API host (measured, 2.1.328).
        """
        with ModelServer([]) as server:
            done = subprocess.run(
                [str(self.claude_bin), *args],
                cwd=str(cwd or self.project),
                env=self.env(server.url),
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        if check and done.returncode != 0:
            raise AssertionError(
                f"claude {' '.join(args)} exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
            )
        return done

    def run(
        self,
        script: list,
        prompt: str = "Please do the task.",
        *,
        plugin_dir: Path | bool | None = True,
        timeout: float = 90,
        extra_args: Iterable[str] = (),
        final_text: str = "Done.",
    ) -> SessionResult:
        """One `claude -p PROMPT --output-format json` session against `script`.

        plugin_dir: a folder for `--plugin-dir`; True (default) means this
        harness's `plugin_dir` attribute (may be None); None or False: no flag.
        """
        if plugin_dir is True:
            plugin_dir = self.plugin_dir
        elif plugin_dir is False:
            plugin_dir = None
        argv = [
            str(self.claude_bin),
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            ALLOWED_TOOLS,
        ]
        if plugin_dir is not None:
            argv += ["--plugin-dir", str(plugin_dir)]
        argv += list(extra_args)
        server = ModelServer(script, final_text=final_text).start()
        started = time.monotonic()
        timed_out = False
        try:
            proc = subprocess.Popen(
                argv,
                cwd=str(self.project),
                env=self.env(server.url),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc)
                stdout, stderr = proc.communicate()
        finally:
            server.stop()
        ignore = [str(self.root), str(self.project), str(self.home)]
        if plugin_dir is not None:
            ignore.append(str(plugin_dir))
        return SessionResult(
            returncode=proc.returncode,
            stdout=stdout,
            stderr=stderr,
            duration=time.monotonic() - started,
            server=server,
            argv=argv,
            timed_out=timed_out,
            ignore_paths=sorted(ignore, key=len, reverse=True),
        )


def _kill_group(proc: subprocess.Popen) -> None:
    """End the CLI we started and what it started (its own process group)."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


# ------------------------------------------------------------------ clean copies
_COPY_EXCLUDE = {
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    "dist",
    "build",
    "node_modules",
    ".tox",
}


def clean_copy(src: Path, dest: Path) -> Path:
    """Copy the repository as a fresh clone would have it.

    In a git work tree: the files git would put in a commit (tracked, plus
    untracked ones that are not ignored), so work in progress is included and
    local junk (.venv, caches, build output) is not. Elsewhere: a copy without
    the usual junk folders.
    """
    listed = subprocess.run(
        ["git", "-C", str(src), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=False,
    )
    dest.mkdir(parents=True, exist_ok=False)
    if listed.returncode == 0 and listed.stdout:
        for rel in filter(None, listed.stdout.split("\0")):
            origin = src / rel
            if not origin.exists() or any(part in _COPY_EXCLUDE for part in Path(rel).parts):
                continue  # deleted in the work tree, or junk someone committed
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target, follow_symlinks=False)
    else:
        shutil.copytree(
            src,
            dest,
            dirs_exist_ok=True,
            symlinks=True,
            ignore=shutil.ignore_patterns(*_COPY_EXCLUDE, "*.pyc", "*.egg-info"),
        )
    return dest
