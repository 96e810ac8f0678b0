"""The plugin bundle: manifests, hook registration, one version everywhere, a lean hook import graph."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import metacog

ROOT = Path(__file__).resolve().parents[1]


def manifest(name: str) -> dict:
    return json.loads((ROOT / ".claude-plugin" / name).read_text())


def test_plugin_manifest() -> None:
    plugin = manifest("plugin.json")
    assert plugin["name"] == "metacog"
    for key in (
        "version",
        "description",
        "author",
        "license",
        "homepage",
        "repository",
        "keywords",
    ):
        assert plugin[key], key


def test_marketplace_lists_the_plugin_at_its_root() -> None:
    market = manifest("marketplace.json")
    assert market["owner"]["name"]
    assert [(p["name"], p["source"]) for p in market["plugins"]] == [("metacog", "./")]


def test_one_version_everywhere() -> None:
    version = manifest("plugin.json")["version"]
    assert metacog.__version__ == version
    assert re.search(
        rf'^version = "{re.escape(version)}"$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE
    )
    assert f"V={version}\n" in (ROOT / "hooks" / "run.sh").read_text()


def test_hooks_registered_with_wrapper_quotes_and_timeouts() -> None:
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    for event in (
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "UserPromptSubmit",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "SubagentStop",
    ):
        assert event in hooks, event
        for group in hooks[event]:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                assert '"${CLAUDE_PLUGIN_ROOT}/hooks/run.sh"' in hook["command"]
                # Claude Code runs the command through `/bin/sh -c`: `exec` replaces that
                # shell instead of keeping it as a parent, a process fewer per call.
                assert hook["command"].startswith("exec sh ")
                assert isinstance(hook["timeout"], int) and hook["timeout"] > 0
    assert (
        hooks["SessionEnd"][0]["hooks"][0]["timeout"] > 2
    )  # the 1.5 s default is too short to learn


def test_every_handled_event_is_registered() -> None:
    from metacog import handlers

    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(handlers.HANDLERS) == set(hooks)


def test_hook_import_path_never_loads_the_cli_or_heavy_modules() -> None:
    code = (
        "import sys, io, json\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog import hook, paths, server  # what the resident process imports, and runs\n"
        "raw = open(sys.argv[1], 'rb').readline()\n"
        "for line in open(sys.argv[1], 'rb'):\n"
        "    hook.handle(line, paths.state_dir())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            code,
            str(ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(out.stdout.splitlines()[-1]))
    assert not loaded & {"typer", "click", "rich", "metacog.cli"}


def metacog_imports(path: Path) -> set[str]:
    """The metacog modules a source file imports, anywhere in it (inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("metacog"):
            found |= (
                {node.module.partition(".")[2]}
                if "." in node.module
                else {a.name for a in node.names}
            )
        elif isinstance(node, ast.Import):
            found |= {a.name.partition(".")[2] for a in node.names if a.name.startswith("metacog.")}
    return found


def test_no_import_circle_between_the_hook_and_the_resident_process() -> None:
    """hook -> resident (starting one); server (being one) -> hook: never the other way."""
    names = {
        name: metacog_imports(ROOT / "metacog" / f"{name}.py")
        for name in ("hook", "resident", "server")
    }
    assert "resident" in names["hook"] and "server" not in names["hook"]
    assert not names["resident"] & {"hook", "server"}
    assert {"hook", "resident"} <= names["server"]


def test_the_direct_hook_imports_neither_the_cli_nor_the_residents_side() -> None:
    """A Read and a failure run directly (no resident process): the hook's own modules
    only; the server is the resident process's, the import index an edit's."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog import hook, paths\n"
        "lines = [l for l in open(sys.argv[1], 'rb')]\n"
        "hook.handle(lines[2], paths.state_dir())\n"
        "hook.handle(lines[8], paths.state_dir())  # a failure: the signature path too\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            code,
            str(ROOT / "tests" / "fixtures" / "hook-inputs-2.1.328.jsonl"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(out.stdout.split())
    assert "metacog.handlers" in loaded  # the calls were handled
    assert not loaded & {
        "typer",
        "click",
        "rich",
        "metacog.cli",
        "metacog.server",
        "metacog.imports",
        "subprocess",
    }


def test_run_sh_is_silent_without_a_runtime(tmp_path: Path) -> None:
    env = {
        "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        ["sh", str(ROOT / "hooks" / "run.sh")],
        input=b"{}",
        capture_output=True,
        env=env,
        check=False,
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


def test_the_scripts_name_the_data_folder_as_layout_does() -> None:
    # run.sh, cli.sh and bootstrap.py cannot import metacog/layout.py: they carry its names.
    import importlib.util

    from metacog import layout

    run_sh = (ROOT / "hooks" / "run.sh").read_text()
    cli_sh = (ROOT / "hooks" / "cli.sh").read_text()
    default = f'D="${{CLAUDE_PLUGIN_DATA:-${{HOME:-/nonexistent}}/{layout.INLINE_DATA}}}"'
    runtime = f'R="$D/{layout.RUNTIME}/$V"'
    for script in (run_sh, cli_sh):
        assert default in script and runtime in script
        assert f'[ ! -f "$R/{layout.READY}" ]' in script
        assert f'"$R/{layout.PYTHON}" -I' in script
    assert f'T="$D/{layout.RUNTIME}/{layout.TELL}"' in run_sh
    assert f'L="$D/{layout.HOOK_STDERR_LOG}"' in run_sh
    assert f'"$R/{layout.RESIDENT}/' in run_sh and f'client.pl" "$R/{layout.RESIDENT}"' in run_sh
    assert f"see $D/{layout.BOOTSTRAP_LOG}" in cli_sh
    spec = importlib.util.spec_from_file_location("bootstrap", ROOT / "hooks" / "bootstrap.py")
    bootstrap = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bootstrap)
    names = ("BOOTSTRAP_LOG", "HOOK_STDERR_LOG", "RUNTIME", "BUILD_LOCK", "FAILED", "TELL", "READY")
    assert {n: getattr(bootstrap, n) for n in names} == {n: getattr(layout, n) for n in names}


def test_layout_finds_the_data_folder_as_run_sh_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from metacog import layout

    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", "/plugins/data/metacog-x")
    assert layout.data_dir() == "/plugins/data/metacog-x"
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    monkeypatch.setenv("HOME", "/home/dev")
    assert layout.data_dir() == "/home/dev/.claude/plugins/data/metacog-inline"
    runtime = layout.runtime_dir("/d", "0.1.0")
    assert runtime == "/d/runtime/0.1.0" and layout.data_of_runtime(runtime) == "/d"


def test_the_readme_is_a_front_page_and_every_link_resolves() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150, "the depth belongs in docs/"
    assert "bash .ci/run" in readme.split("\n## ")[0]  # the first screen says how to test
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links to {target}"
