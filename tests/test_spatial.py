"""Spatial: both sides of the threshold per language, the look-alikes that are not imports,
the refresh between edits, the bounds, and the import parser form by form."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hooktest import agent_text, captured, send

from metacog import imports, paths, schema
from metacog.event import Event
from metacog.perception import action
from metacog.senses import spatial
from metacog.senses.contract import Context

ROOT = Path(__file__).resolve().parents[1]
HAS_GIT = shutil.which("git") is not None
SPOKE = "You modified"


def repo(tmp_path: Path, files: dict[str, str], git: bool = True) -> Path:
    """A small project in tmp_path/repo (a git repository when git is there)."""
    base = tmp_path / "repo"
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    base.mkdir(exist_ok=True)
    if git and HAS_GIT:
        subprocess.run(["git", "init", "-q"], cwd=base, check=True)
    return base


def edit(base: Path, rel: str, tool: str = "Edit") -> str:
    """Edit a file the way Claude Code reports it, through the whole hook; the agent's text."""
    path = base / rel
    if path.exists() and rel.endswith((".py", ".ts", ".js", ".go", ".rs")):
        path.write_text(path.read_text() + "\n")
    payload = captured("PostToolUse", "Edit", cwd=str(base))
    payload["tool_name"] = tool
    payload["tool_input"]["file_path"] = str(path)
    payload["tool_response"]["filePath"] = str(path)
    return agent_text(send(payload))


def write(base: Path, rel: str, text: str) -> None:
    path = base / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def importers(n: int, line: str, folder: str = "users", ext: str = ".py") -> dict[str, str]:
    return {f"{folder}/use{i}{ext}": f"{line}\n" for i in range(n)}


def call(base: Path, rel: str, ok: bool = True) -> Event:
    """The Edit of base/rel as the hook reads it: a captured call, or a failed one."""
    path = str(base / rel)
    if ok:
        payload = captured("PostToolUse", "Edit", cwd=str(base))
        payload["tool_input"]["file_path"] = path
        payload["tool_response"]["filePath"] = path
    else:
        payload = captured("PostToolUseFailure", "Bash", cwd=str(base), tool_name="Edit")
        payload["tool_input"] = {"file_path": path, "old_string": "A", "new_string": "B"}
    return Event(payload)


def ctx_for(
    base: Path, win: dict | None = None, event: Event | None = None, **spatial_cfg: object
) -> Context:
    """The real Context of a call in the project at `base` (its root), as the hook makes it."""
    cfg = {section: dict(values) for section, values in schema.DEFAULTS.items()}
    cfg["spatial"].update(spatial_cfg)
    win = {} if win is None else win
    event = event or call(base, "x.py")
    return Context(
        cfg, {"windows": {"main": win}}, win, event, time.time(), paths.state_dir(), str(base)
    )


def feel(win: dict, base: Path, rel: str, ctx: Context | None = None, ok: bool = True) -> object:
    """Spatial's feel of the Edit of base/rel: the action made from the call, as the hook does."""
    event = call(base, rel, ok)
    act = action.from_event(event, time.time())
    assert act.tool == "Edit" and act.ok is ok and act.path == str(base / rel)
    return spatial.feel(win, act, ctx or ctx_for(base, win, event))


def last_count(win: dict) -> int | None:
    last = win.get("senses", {}).get("spatial", {}).get("last")
    return last[1] if last else None


# --- both sides of the threshold, through the hook -----------------------------------------


PY_FORMS = [
    "import app.models",
    "import app.models as m",
    "from app.models import User",
    "from app import models",
    "from app import (\n    views,\n    models,\n)",
]


def test_python_four_importers_are_silent_five_speak(tmp_path: Path) -> None:
    files = {"app/__init__.py": "", "app/models.py": "class User: ...\n"}
    files.update({f"users/use{i}.py": f"{line}\n" for i, line in enumerate(PY_FORMS[:4])})
    base = repo(tmp_path, files)
    assert SPOKE not in edit(base, "app/models.py")
    write(base, "users/use4.py", PY_FORMS[4] + "\n")
    text = edit(base, "app/models.py")
    assert text.startswith("metacog: You modified app/models.py. 5 files import it: ")
    assert "users/use0.py, users/use1.py, users/use2.py, users/use3.py, users/use4.py. " in text
    assert text.endswith("Which of them does this change affect?")
    assert "…" not in text


def test_python_relative_imports_and_more_than_shown(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/core.py": "X = 1\n",
        "pkg/sub/a.py": "from . import core\n",
        "pkg/sub/b.py": "from .core import X\n",
        "pkg/c.py": "from .sub import core\n",
        "pkg/d.py": "from .sub.core import X\n",
        "pkg/sub/deep/__init__.py": "",
        "pkg/sub/deep/e.py": "from ..core import X\n",
        "pkg/sub/deep/f.py": "from ...sub.core import X\n",
    }
    base = repo(tmp_path, files)
    text = edit(base, "pkg/sub/core.py")
    assert (
        "6 files import it: pkg/c.py, pkg/d.py, pkg/sub/a.py, pkg/sub/b.py, pkg/sub/deep/e.py, …. "
        in text
    )


def test_python_src_layout(tmp_path: Path) -> None:
    files = {"src/shop/__init__.py": "", "src/shop/cart.py": "TOTAL = 0\n"}
    files.update(importers(5, "from shop.cart import TOTAL", folder="tests"))
    base = repo(tmp_path, files)
    assert "5 files import it" in edit(base, "src/shop/cart.py")


JS_FORMS = [
    "import { price } from './lib/util';",
    "import util from './lib/util.js';",
    "const util = require('./lib/util');",
    "export * from './lib/util';",
    'export { price as cost } from "./lib/util";',
    "const lazy = () => import('./lib/util');",
]


def test_javascript_four_importers_are_silent_five_speak(tmp_path: Path) -> None:
    files = {"src/lib/util.ts": "export const price = 1;\n"}
    files.update({f"src/use{i}.ts": f"{line}\n" for i, line in enumerate(JS_FORMS[:4])})
    base = repo(tmp_path, files)
    assert SPOKE not in edit(base, "src/lib/util.ts")
    write(base, "src/use4.js", JS_FORMS[4] + "\n")
    text = edit(base, "src/lib/util.ts")
    assert "You modified src/lib/util.ts. 5 files import it: " in text
    write(base, "src/use5.tsx", JS_FORMS[5] + "\n")
    assert "6 files import it" in edit(base, "src/lib/util.ts")


def test_javascript_index_files_and_extensionless_directories(tmp_path: Path) -> None:
    files = {
        "web/components/index.ts": "export const Button = 1;\n",
        "web/a.ts": "import { Button } from './components';\n",
        "web/b.tsx": "import { Button } from './components/index';\n",
        "web/pages/c.ts": "import { Button } from '../components';\n",
        "web/pages/d.js": "const { Button } = require('../components/index.js');\n",
        "web/e.ts": "import { Button } from '@/components';\n",
    }
    base = repo(tmp_path, files)
    assert (
        "5 files import it: web/a.ts, web/b.tsx, web/e.ts, web/pages/c.ts, web/pages/d.js."
        in edit(base, "web/components/index.ts")
    )


GO_MAIN = 'package main\n\nimport (\n\t"fmt"\n\tst "example.com/shop/pkg/store"\n)\n\nfunc main() {{ fmt.Println(st.N, {n}) }}\n'


def test_go_importers_of_a_package_count_for_each_of_its_files(tmp_path: Path) -> None:
    files = {
        "go.mod": "module example.com/shop\n\ngo 1.22\n",
        "pkg/store/store.go": "package store\n\nconst N = 1\n",
        "pkg/store/extra.go": "package store\n\nconst M = 2\n",
    }
    files.update({f"cmd/tool{i}/main.go": GO_MAIN.format(n=i) for i in range(3)})
    files["internal/x/x.go"] = (
        'package x\n\nimport "example.com/shop/pkg/store"\n\nvar _ = store.N\n'
    )
    base = repo(tmp_path, files)
    assert SPOKE not in edit(base, "pkg/store/extra.go")
    write(base, "internal/y/y.go", 'package y\n\nimport _ "example.com/shop/pkg/store"\n')
    text = edit(base, "pkg/store/extra.go")
    assert "You modified pkg/store/extra.go. 5 files import it: cmd/tool0/main.go" in text


def test_rust_mod_and_use_crate(tmp_path: Path) -> None:
    files = {
        "Cargo.toml": '[package]\nname = "x"\n',
        "src/lib.rs": "pub mod db;\nmod api;\n",
        "src/db.rs": "pub struct Conn;\n",
        "src/api/mod.rs": "use crate::db::Conn;\npub mod users;\n",
        "src/api/users.rs": "use crate::db;\n",
        "src/api/items.rs": "use super::super::db::Conn;\n",
        "src/bin_a.rs": "use crate::{db, api};\n",
    }
    base = repo(tmp_path, files)
    signal = feel({}, base, "src/db.rs")
    assert signal is not None
    assert (
        "5 files import it: src/api/items.rs, src/api/mod.rs, src/api/users.rs, src/bin_a.rs, src/lib.rs."
        in signal.text
    )


# --- what is not an import -----------------------------------------------------------------


def test_a_word_in_many_files_imported_by_one_counts_one(tmp_path: Path) -> None:
    mentions = {
        f"docs_{i}.py": '"""The models module.\n\nimport models\n"""\n# import models\nx = "models"\n'
        for i in range(8)
    }
    mentions.update(
        {
            f"web/m{i}.ts": "// import x from './models'\nconst s = \"import models from './models'\";\n"
            for i in range(4)
        }
    )
    files = {"models.py": "A = 1\n", "user.py": "import models\n", **mentions}
    base = repo(tmp_path, files)
    assert SPOKE not in edit(base, "models.py")
    win: dict = {}
    feel(win, base, "models.py")
    assert last_count(win) == 1
    assert spatial.reading(win, ctx_for(base, win)) == "last edit: models.py, imported by 1 file"


@pytest.mark.skipif(not HAS_GIT, reason="needs git")
def test_gitignored_importers_do_not_count(tmp_path: Path) -> None:
    files = {
        ".gitignore": "generated/\n",
        "core.py": "A = 1\n",
        **importers(4, "import core"),
        **importers(6, "import core", folder="generated"),
    }
    base = repo(tmp_path, files)
    win: dict = {}
    assert feel(win, base, "core.py") is None
    assert last_count(win) == 4


def test_without_git_dependency_and_hidden_dirs_do_not_count(tmp_path: Path) -> None:
    files = {
        "core.py": "A = 1\n",
        **importers(4, "import core"),
        **importers(3, "import core", folder="node_modules/x"),
        **importers(3, "import core", folder=".venv"),
        "venv2/pyvenv.cfg": "",
        **importers(3, "import core", folder="venv2/lib"),
    }
    base = repo(tmp_path, files, git=False)
    win: dict = {}
    assert feel(win, base, "core.py") is None
    assert last_count(win) == 4


def test_edits_of_other_files_failures_and_notebooks_are_silent(tmp_path: Path) -> None:
    files = {
        "core.py": "A = 1\n",
        "README.md": "import core\n",
        "nb.ipynb": "{}",
        **importers(6, "import core"),
    }
    base = repo(tmp_path, files)
    assert SPOKE not in edit(base, "README.md")
    assert SPOKE not in edit(base, "nb.ipynb", tool="NotebookEdit")
    win: dict = {}
    assert feel(win, base, "core.py", ok=False) is None
    # Outside the project: a file in a folder where it has importers too, edited in `base`.
    elsewhere = tmp_path / "elsewhere"
    for rel, text in {"core.py": "A = 1\n", **importers(6, "import core")}.items():
        write(elsewhere, rel, text)
    assert feel(win, elsewhere, "core.py", ctx_for(base, win)) is None
    assert feel({}, elsewhere, "core.py") is not None  # there, it is its project's
    assert "You modified core.py. 6 files" in edit(base, "core.py", tool="Write")


# --- once per file, unless it grows; refresh between edits ---------------------------------


def test_said_once_per_file_until_the_count_grows(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(5, "from core import A")})
    assert "5 files import it" in edit(base, "core.py")
    assert SPOKE not in edit(base, "core.py")
    write(base, "users/new.py", "import core\n")  # a new importer between two edits
    assert "6 files import it" in edit(base, "core.py")
    (base / "users/use0.py").unlink()
    assert SPOKE not in edit(base, "core.py")  # fewer: nothing new to say


def test_an_existing_file_changed_in_place_is_seen(tmp_path: Path) -> None:
    base = repo(
        tmp_path,
        {"core.py": "A = 1\n", **importers(4, "import core"), "users/late.py": "import os\n"},
    )
    assert SPOKE not in edit(base, "core.py")
    path = base / "users/late.py"
    with open(path, "r+") as fh:  # in place: the directory does not change
        fh.write("import core\n")
    assert "5 files import it" in edit(base, "core.py")


def test_new_directories_and_deleted_ones_are_seen(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(2, "import core")})
    win: dict = {}
    ctx = ctx_for(base)
    feel(win, base, "core.py", ctx)
    assert last_count(win) == 2
    for i in range(3):
        write(base, f"new/deep/er{i}/x.py", "import core\n")
    feel(win, base, "core.py", ctx)
    assert last_count(win) == 5
    shutil.rmtree(base / "new")
    feel(win, base, "core.py", ctx)
    assert last_count(win) == 2


def test_memory_is_bounded(tmp_path: Path) -> None:
    files = {f"m{i}.py": "A = 1\n" for i in range(spatial.SAID_CAP + 5)}
    files.update(
        {
            f"u{i}.py": "".join(f"import m{j}\n" for j in range(spatial.SAID_CAP + 5))
            for i in range(5)
        }
    )
    base = repo(tmp_path, files)
    win: dict = {}
    ctx = ctx_for(base)
    for i in range(spatial.SAID_CAP + 5):
        assert feel(win, base, f"m{i}.py", ctx) is not None
    said = win["senses"]["spatial"]["said"]
    assert len(said) == spatial.SAID_CAP and "m0.py" not in said


# --- the text ------------------------------------------------------------------------------


def test_text_stays_within_the_cap_and_keeps_the_question() -> None:
    found = [f"very/long/path/{'x' * 90}/module_{i}.py" for i in range(40)]
    text = spatial.say("some/" + "deep/" * 30 + "file.py", found, 5)
    assert len(text) <= 300
    assert text.startswith("You modified some/") and text.endswith(
        "Which of them does this change affect?"
    )
    assert "40 files import it" in text
    assert (
        spatial.say("a.py", ["b.py"], 5)
        == "You modified a.py. 1 file imports it: b.py. Which of them does this change affect?"
    )
    assert (
        spatial.say("a.py", ["b.py", "c.py"], 0)
        == "You modified a.py. 2 files import it. Which of them does this change affect?"
    )


# --- bounds --------------------------------------------------------------------------------


def test_over_budget_says_nothing(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    win: dict = {}
    assert feel(win, base, "core.py") is not None  # the index exists now
    assert feel({}, base, "core.py", ctx_for(base, budget_ms=0)) is None


def test_a_first_index_that_cannot_finish_stays_silent_then_goes_on(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    assert imports.importers(str(base), "core.py", paths.state_dir(), 0.1, 100, first_s=0.0) is None
    stored = imports.Index.load(str(base), imports.path_for(paths.state_dir(), str(base)))
    assert stored.state == "partial" and len(stored.pending) == 7
    assert (
        imports.importers(str(base), "core.py", paths.state_dir(), 0.0, 100) is None
    )  # no time: silent
    assert feel({}, base, "core.py") is not None  # a later edit finishes it within the budget


def test_too_many_files_stays_silent(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    assert feel({}, base, "core.py", ctx_for(base, max_files=3)) is None
    assert feel({}, base, "core.py", ctx_for(base, max_files=3)) is None
    assert feel({}, base, "core.py", ctx_for(base)) is not None  # a larger limit tries again


def test_a_slow_git_is_tried_again_at_the_next_edit_not_a_day_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    (base / ".git").mkdir(exist_ok=True)
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "git").write_text("#!/bin/sh\nexec sleep 5\n")
    (slow / "git").chmod(0o755)
    real_path = os.environ.get("PATH", "")
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{real_path}")
    began = time.perf_counter()
    assert imports.importers(str(base), "core.py", paths.state_dir(), 0.1, 100, first_s=0.3) is None
    assert time.perf_counter() - began < 3  # git was given up on at the deadline
    index_file = Path(imports.path_for(paths.state_dir(), str(base)))
    assert (
        not index_file.exists() or imports.Index.load(str(base), str(index_file)).state != "too_big"
    )
    monkeypatch.setenv("PATH", real_path)
    assert imports.importers(str(base), "core.py", paths.state_dir(), 1.0, 100) == [
        f"users/use{i}.py" for i in range(6)
    ]


@pytest.mark.slow
def test_a_git_that_is_always_slow_rests_spatial_for_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metacog.perception import reach

    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    calls = tmp_path / "git-calls"
    (slow / "git").write_text(f"#!/bin/sh\necho x >> {calls}\nexec sleep 5\n")
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ.get('PATH', '')}")
    for _ in range(reach.SLOW_LIMIT + 2):
        assert "import it" not in edit(base, "core.py")
    # Each late first index costs its whole time; after SLOW_LIMIT of them git is not asked again.
    assert len(calls.read_text().splitlines()) == reach.SLOW_LIMIT


def test_a_slow_walk_is_not_too_big_either(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")}, git=False)
    index = imports.Index(str(base), imports.path_for(paths.state_dir(), str(base)))
    index.build(time.perf_counter() - 1, 100, time.time())
    assert index.state == "new" and not index.dirty
    index.build(time.perf_counter() + 5, 3, time.time())  # 8 files, 3 allowed: too big, for real
    assert index.state == "too_big"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_go_mod_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    fifo, zero = tmp_path / "fifo", tmp_path / "zero"
    (fifo / "pkg" / "x").mkdir(parents=True)
    os.mkfifo(fifo / "go.mod")  # opened the usual way, this waits for a writer forever
    (zero / "pkg" / "x").mkdir(parents=True)
    (zero / "go.mod").symlink_to("/dev/zero")
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog import imports\n"
        "print([imports.names_for('pkg/x/x.go', root) for root in sys.argv[1:]])\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(fifo), str(zero)],
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    assert out.stdout.strip() == "[[], []]"


def test_a_broken_index_never_raises_and_other_senses_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("index exploded")

    monkeypatch.setattr(imports, "importers", boom)
    assert SPOKE not in edit(base, "core.py")
    log = (Path(paths.state_dir()) / "metacog.log").read_text()
    assert "reach: RuntimeError: index exploded" in log


def test_a_corrupt_index_file_is_rebuilt(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    assert feel({}, base, "core.py") is not None
    index_file = Path(imports.path_for(paths.state_dir(), str(base)))
    index_file.write_text('{"v": 1, "root": "x"\nnot json')
    Path(str(index_file) + ".journal").write_text("[torn\n")
    assert feel({}, base, "core.py") is not None


def test_index_holds_paths_and_imports_never_content(tmp_path: Path) -> None:
    base = repo(
        tmp_path,
        {
            "core.py": "SECRET = 'hunter2-do-not-store'\n",
            **importers(6, "import core  # password: swordfish"),
        },
    )
    win: dict = {}
    feel(win, base, "core.py")
    write(base, "users/use0.py", "import core\nTOKEN = 'ghp_not_in_index'\n")
    feel(win, base, "core.py")
    folder = Path(paths.state_dir()) / "imports"
    stored = "".join(p.read_text() for p in folder.iterdir() if not p.name.endswith(".lock"))
    for secret in ("hunter2", "swordfish", "ghp_not_in_index", "SECRET"):
        assert secret not in stored
    assert "p:core" in stored and "use0.py" in stored


def test_the_sense_module_stays_light_on_the_hot_path(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")}, git=False)
    payload = captured("PostToolUse", "Edit", cwd=str(base))
    payload["tool_input"]["file_path"] = str(base / "core.py")
    payload["tool_response"]["filePath"] = str(base / "core.py")
    bash = captured("PostToolUse", "Bash", cwd=str(base))
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog import hook, paths\n"
        "hook.handle(sys.argv[2].encode(), paths.state_dir())\n"
        "print(' '.join(m for m in ('subprocess', 'metacog.imports') if m in sys.modules) or '-')\n"
        "replies = [hook.handle(sys.argv[1].encode(), paths.state_dir()) for _ in range(2)]\n"
        "print(' '.join(m for m in ('subprocess',) if m in sys.modules) or '-')\n"
        "print('You modified' in replies[0])\n"
    )
    env = {**os.environ, "METACOG_HOME": str(tmp_path / "metacog-home")}
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, json.dumps(payload), json.dumps(bash)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    after_bash, after_edits, spoke = out.stdout.splitlines()[-3:]
    assert after_bash == "-"  # a tool call that is not an edit pays nothing for this sense
    assert after_edits == "-"  # nor do edits: no git without a repository
    assert spoke == "True"


# --- the parser, form by form --------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "keys"),
    [
        pytest.param("import a.b", ["p:a.b"], id="import"),
        pytest.param("import a.b as c, d", ["p:a.b", "p:d"], id="import-as-list"),
        pytest.param("from a.b import C, d", ["p:a.b:d"], id="from-names"),
        pytest.param(
            "from a.b import (C,\n    d as e,  # why\n    f,\n)",
            ["p:a.b:d,f"],
            id="from-parenthesized",
        ),
        pytest.param("from a \\\n    import b", ["p:a:b"], id="backslash"),
        pytest.param("from . import x", ["p:pkg.sub:x"], id="relative-dot"),
        pytest.param("from .m import Y", ["p:pkg.sub.m"], id="relative-module"),
        pytest.param("from ..up.mod import y", ["p:pkg.up.mod:y"], id="relative-parent"),
        pytest.param("from .... import too_far", [], id="relative-beyond-root"),
        pytest.param("import os; import sys", ["p:os", "p:sys"], id="semicolon"),
        pytest.param("def f():\n    import lazy.mod\n", ["p:lazy.mod"], id="indented"),
        pytest.param('"""\nimport in_docstring\n"""\nimport real', ["p:real"], id="docstring"),
        pytest.param(
            "# import commented\nx = importlib.import_module('y')\nimported = 1",
            [],
            id="not-statements",
        ),
        pytest.param(
            "from __future__ import annotations", ["p:__future__:annotations"], id="future"
        ),
    ],
)
def test_python_forms(source: str, keys: list[str]) -> None:
    assert imports.parse(source, "pkg/sub/here.py") == keys


@pytest.mark.parametrize(
    ("source", "keys"),
    [
        pytest.param("import x from './x'", ["j:src/app/x"], id="default"),
        pytest.param(
            'import {a,\n  b} from "../lib/y.js"', ["j:src/lib/y"], id="named-multiline-ext"
        ),
        pytest.param("import * as ns from './ns.tsx'", ["j:src/app/ns"], id="namespace"),
        pytest.param("import './side-effect'", ["j:src/app/side-effect"], id="side-effect"),
        pytest.param("import type { T } from './types.d.ts'", ["j:src/app/types"], id="type-only"),
        pytest.param("const z = require('./z/index')", ["j:src/app/z"], id="require-index"),
        pytest.param("export * from './re'", ["j:src/app/re"], id="export-star"),
        pytest.param("export { q as r } from './q'", ["j:src/app/q"], id="export-from"),
        pytest.param("const m = await import('./lazy')", ["j:src/app/lazy"], id="dynamic"),
        pytest.param("import a from '.'", ["j:src/app"], id="dot-is-index"),
        pytest.param("import c from '@/components/Button'", ["b:components/Button"], id="alias"),
        pytest.param(
            "import React from 'react'\nimport fp from 'lodash/fp'", ["b:lodash/fp"], id="packages"
        ),
        pytest.param("import s from './s.css'\nimport d from './d.json'", [], id="assets"),
        pytest.param(
            "// import bad from './bad'\n/*\n * import worse from './worse'\n */", [], id="comments"
        ),
        pytest.param(
            "export const a = 1\nexport function f() { return 'x' }\nexport default 'y'",
            [],
            id="exports",
        ),
        pytest.param("import x from '../../../outside'", [], id="outside-root"),
        pytest.param("const t = `${x}`; require(`./${name}`)", [], id="templates"),
    ],
)
def test_javascript_forms(source: str, keys: list[str]) -> None:
    assert imports.parse(source, "src/app/main.ts") == keys


def test_go_forms() -> None:
    source = (
        'package main\n\nimport "fmt"\nimport (\n\t"example.com/m/a"\n\tb "example.com/m/b" // why\n'
        '\t_ "example.com/m/c"\n\t. `example.com/m/d`\n)\n\nfunc f() { s := "import \\"x/y\\"" }\n'
    )
    assert imports.parse(source, "cmd/main.go") == [
        "g:example.com/m/a",
        "g:example.com/m/b",
        "g:example.com/m/c",
        "g:example.com/m/d",
    ]


def test_rust_forms() -> None:
    source = (
        "mod a;\npub mod b;\npub(crate) mod c;\n#[cfg(test)] mod tests;\nmod inline { }\n"
        "use crate::x::y::Z;\nuse crate::p::{q, r::{s, t as u}};\nuse super::sib;\nuse self::a::Thing;\n"
        "use std::fmt;\nfn f() { let used = 1; }\n"
    )
    assert imports.parse(source, "src/m/n.rs") == [
        "r:src/m/n/a",
        "r:src/m/n/b",
        "r:src/m/n/c",
        "r:src/m/n/tests",
        "r:src/x/y/Z",
        "r:src/x/y",
        "r:src/p/q",
        "r:src/p",
        "r:src/p/r/s",
        "r:src/p/r",
        "r:src/p/r/t",
        "r:src/m/sib",
        "r:src/m",
        "r:src/m/n/a/Thing",
    ]
    assert imports.parse("mod x;\n", "src/lib.rs") == ["r:src/x"]


def test_names_a_file_is_imported_as(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    root = str(tmp_path)
    assert imports.names_for("app/models.py", root) == ["p:app.models"]  # app is a package
    assert imports.names_for("src/shop/cart.py", root) == ["p:src.shop.cart", "p:shop.cart"]
    assert imports.names_for("svc/api/src/api/db/__init__.py", root) == [
        "p:svc.api.src.api.db",
        "p:api.src.api.db",
        "p:api.db",
    ]
    assert imports.names_for("web/lib/index.tsx", root) == ["j:web/lib", "b:web/lib", "b:lib"]
    assert imports.names_for("src/a/mod.rs", root) == ["r:src/a"]
    assert imports.names_for("src/lib.rs", root) == []
    assert imports.names_for("README.md", root) == []
    (tmp_path / "go.mod").write_text("module example.com/m\n")
    assert imports.names_for("pkg/x/x.go", root) == ["g:example.com/m/pkg/x"]
    assert imports.names_for("pkg/x/x_test.go", root) == []


def test_the_index_file_is_where_the_state_dir_says(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(2, "import core")})
    feel({}, base, "core.py")
    index_file = Path(imports.path_for(paths.state_dir(), str(base)))
    assert index_file.parent == Path(paths.state_dir()) / "imports"
    head = json.loads(index_file.read_text().splitlines()[0])
    assert head["v"] == imports.SCHEMA and head["root"] == str(base) and head["state"] == "ok"
    assert time.time() - head["made"] < 60


def test_short_names_match_whole_keys_only(tmp_path: Path) -> None:
    files = {
        "index.ts": "export const a = 1;\n",
        "os.py": "A = 1\n",
        **{f"web/u{i}.ts": "import { a } from '..';\nimport b from './b.js';\n" for i in range(5)},
        **{f"py/u{i}.py": "import os.path\nfrom x.os import y\n" for i in range(5)},
        "py/real.py": "import os\n",
    }
    base = repo(tmp_path, files)
    signal = feel({}, base, "index.ts")
    assert signal is not None and "5 files import it: web/u0.ts" in signal.text
    win: dict = {}
    assert feel(win, base, "os.py") is None
    assert last_count(win) == 1


def test_an_edits_reach_is_a_fact_of_the_call_asked_once(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(5, "import core")})
    event = call(base, "core.py")
    act = action.from_event(event, time.time())
    ctx = ctx_for(base, {}, event)
    assert not ctx.wide_edit(act, ask=False)  # nothing asked yet: nothing computed
    assert spatial.feel(ctx.win, act, ctx) is not None
    assert ctx.wide_edit(act, ask=False) and ctx.reach(act)[0] == "core.py"
    assert ctx.notes == []  # no note left for another sense
    few = ctx_for(base, {}, event, min_importers=6)
    assert few.reach(act) is not None and not few.wide_edit(act)


def test_the_index_kept_in_memory_answers_as_the_stored_one(tmp_path: Path) -> None:
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    state = paths.state_dir()
    assert imports.importers(str(base), "core.py", state, 1.0, 100, first_s=5.0) is not None
    write(base, "more/use9.py", "import core\n")
    write(base, "users/use0.py", "A = 2\n")
    kept = imports.importers(str(base), "core.py", state, 1.0, 100)
    imports._kept.clear()  # what another process, reading the file, finds
    stored = imports.importers(str(base), "core.py", state, 1.0, 100)
    assert kept == stored == ["more/use9.py"] + [f"users/use{i}.py" for i in range(1, 6)]


DAMAGE = {
    "cut short": lambda f: f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2]),
    "cut short + garbage": lambda f: f.write_bytes(
        f.read_bytes()[: len(f.read_bytes()) // 2] + b"\x00garbage{{{"
    ),
    "empty": lambda f: f.write_bytes(b""),
    "NUL bytes": lambda f: f.write_bytes(b"\x00" * 4096),
    "invalid UTF-8": lambda f: f.write_bytes(b"\xff\xfe" + f.read_bytes()),
    "huge": lambda f: f.write_bytes(b"x" * 4096),  # over the cap the test sets
    "deeply nested": lambda f: f.write_bytes(b"[" * 200_000 + b"\n" + b"[" * 200_000),
    "wrong JSON type": lambda f: f.write_bytes(b'"an index"\n{"a": 1}\n[1]\n'),
    "wrong field types": lambda f: f.write_bytes(
        f.read_bytes()
        .replace(b'"cursor":', b'"cursor":"x","c":', 1)
        .replace(b'"done":', b'"done":"x","d":', 1)
    ),
    "misaligned blob": lambda f: f.write_bytes(
        f.read_bytes().replace(b" p:core ", b" p:core |", 1)
    ),
    "folder": lambda f: (f.unlink(), f.mkdir(), (f / "inside").write_text("x")),
    "FIFO": lambda f: (f.unlink(), os.mkfifo(f)),
    "symlink to /dev/zero": lambda f: (f.unlink(), f.symlink_to("/dev/zero")),
    "symlink outside": lambda f: (
        f.unlink(),
        f.symlink_to(f.parent.parent.parent / "outside.json"),
    ),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("part", ["index", "journal"])
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_index_never_hangs_and_is_rebuilt(tmp_path: Path, part: str, damage: str) -> None:
    """Whatever stands in place of the index file or its journal, the next edit answers
    (within the subprocess's timeout: a FIFO or /dev/zero must not be read) and the
    index is built again; nothing outside metacog's folder is read as one or written."""
    base = repo(tmp_path, {"core.py": "A = 1\n", **importers(6, "import core")})
    outside = tmp_path / "outside.json"
    outside.write_text('{"v": 1}\n')
    index_file = Path(imports.path_for(paths.state_dir(), str(base)))
    assert SPOKE in edit(base, "core.py")
    write(base, "users/use0.py", "import core\nimport os\n")
    assert imports.importers(
        str(base), "core.py", paths.state_dir(), 1.0, 100
    )  # a journal entry too
    target = index_file if part == "index" else Path(str(index_file) + ".journal")
    assert target.is_file()
    DAMAGE[damage](target)
    payload = captured("PostToolUse", "Edit", cwd=str(base), session_id="after-the-damage")
    payload["tool_input"]["file_path"] = payload["tool_response"]["filePath"] = str(
        base / "core.py"
    )
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog import hook, paths\nfrom metacog.imports import index\nindex.INDEX_CAP = 4000\n"
        "print(hook.handle(sys.argv[1].encode(), paths.state_dir()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, json.dumps(payload)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        env={**os.environ, "METACOG_HOME": os.environ["METACOG_HOME"]},
    )
    assert SPOKE in out.stdout, (out.stdout, out.stderr)
    assert index_file.is_file() and not index_file.is_symlink()
    assert outside.read_text() == '{"v": 1}\n'


def test_a_journal_append_that_cannot_complete_leaves_no_torn_line(tmp_path: Path) -> None:
    """A full disk, played by a file size limit: the append fails whole, the journal ends
    where it ended, and the next append starts a line of its own."""
    journal = tmp_path / "index.json.journal"
    journal.write_bytes(b'["a",1,"",[],""]\n')
    code = (
        f"import os, resource, signal, sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from metacog.imports import index\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (os.fstat(fd).st_size + 10, resource.RLIM_INFINITY))\n"
        "try:\n    index._append_whole(fd, b'x' * 100 + b'\\n')\nexcept OSError as exc:\n    print(type(exc).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(journal)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert out.stdout.strip() == "OSError", out.stderr  # EFBIG, as ENOSPC would be
    assert journal.read_bytes() == b'["a",1,"",[],""]\n'
