"""Evidence stays in its project until a pattern shows up in enough projects to be about the agent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import learningtest
import pytest
from learningtest import CALM, DAY, LOOP, T0, cfg, global_records, project_records, rule, session

from metacog import paths
from metacog.learning import scopes, store

make_project = learningtest.make_project


@pytest.fixture
def three(make_project: Callable[[str], str]) -> tuple[str, str, str]:
    return tuple(make_project(name) for name in ("alpha", "beta", "gamma"))


def test_one_project_builds_evidence_without_reaching_the_global_store(
    three: tuple[str, str, str],
) -> None:
    a, _, c = three
    for i in range(5):
        session(a, f"a{i}", T0 + i * DAY, LOOP)
    assert rule(a, "error-loop", T0 + 5 * DAY)["detections"] == 5
    assert global_records() == []
    assert rule(c, "error-loop", T0 + 5 * DAY) is None
    assert "error-loop" not in session(c, "c0", T0 + 6 * DAY, {})


def test_two_projects_promote_a_pattern_and_a_third_sees_it(three: tuple[str, str, str]) -> None:
    a, b, c = three
    session(a, "a0", T0, LOOP)
    session(a, "a1", T0 + DAY, LOOP)
    assert global_records() == []
    session(b, "b0", T0 + 2 * DAY, LOOP)
    promoted = [r for r in global_records() if r["rule"] == "error-loop"]
    assert promoted == [
        {
            "v": 1,
            "type": "aggregate",
            "rule": "error-loop",
            "detections": 3,
            "suppressions": 0,
            "first": T0,
            "last": T0 + 2 * DAY,
        }
    ]
    seen = rule(c, "error-loop", T0 + 3 * DAY)
    assert (seen["scope"], seen["detections"]) == ("global", 3)
    assert "- error-loop (global):" in session(c, "c0", T0 + 3 * DAY, CALM)
    # The third project held the global rule: its store and the global one both record it,
    # and what it shows is still the global entry, now with that suppression.
    assert [(r["type"], r["rule"]) for r in project_records(c)] == [("suppression", "error-loop")]
    after = rule(c, "error-loop", T0 + 4 * DAY)
    assert (after["scope"], after["detections"], after["suppressions"]) == ("global", 3, 1)


def test_after_promotion_every_project_feeds_the_global_store(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, LOOP)
    session(a, "a1", T0 + 2 * DAY, LOOP)
    kinds = [
        (r["type"], r.get("detections", 1)) for r in global_records() if r["rule"] == "error-loop"
    ]
    assert kinds == [("aggregate", 2), ("detection", 1)]


def test_the_threshold_is_configurable(three: tuple[str, str, str]) -> None:
    conf = cfg(learning={"promote_projects": 3})
    for i, root in enumerate(three[:2]):
        session(root, f"s{i}", T0 + i * DAY, LOOP, conf)
    assert global_records() == []
    session(three[2], "s2", T0 + 2 * DAY, LOOP, conf)
    assert [r["detections"] for r in global_records()] == [3]


def test_suppressions_alone_do_not_promote(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, CALM)  # the rule was not active in beta: no evidence at all
    session(a, "a1", T0 + 2 * DAY, CALM)  # active in alpha and held: a suppression, one project
    assert global_records() == []


def test_project_entries_take_precedence(three: tuple[str, str, str]) -> None:
    a, b, _ = three
    for i in range(3):
        session(a, f"a{i}", T0 + i * DAY, LOOP)
    session(b, "b0", T0 + 3 * DAY, LOOP)
    mine = rule(b, "error-loop", T0 + 4 * DAY)
    assert (mine["scope"], mine["detections"]) == ("project", 1)
    assert "- error-loop: " in session(b, "b1", T0 + 4 * DAY, {})


def test_the_index_keeps_hashes_and_the_committed_file_no_paths(
    three: tuple[str, str, str],
) -> None:
    a, b, _ = three
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, LOOP)
    index = Path(scopes.index_path()).read_text()
    assert str(Path(paths.data_dir())) in scopes.index_path()
    for root in three:
        assert Path(root).name not in index
    projects = json.loads(index)["rules"]["error-loop"]["projects"]
    assert set(projects) == {scopes.project_hash(a), scopes.project_hash(b)}
    for root in (a, b):
        text = Path(store.project_path(root)).read_text()
        assert "alpha" not in text and "beta" not in text and "/" not in text


def test_a_project_without_a_root_learns_nothing(tmp_path: Path) -> None:
    session("", "x0", T0, LOOP)
    assert global_records() == [] and not list(tmp_path.rglob("metacog-learnings.jsonl"))


# One repository checked out twice (a worktree, a second clone) is one project: a pattern
# it keeps hitting says something about that repository, not yet about the agent.
ORIGIN = "git@github.com:Acme/Widget.git"


def repo(tmp_path: Path, name: str, origin: str = "") -> str:
    """A repository as git leaves it: `.git/config`, with `[remote "origin"]` if given."""
    git = tmp_path / name / ".git"
    git.mkdir(parents=True)
    text = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    if origin:
        text += (
            f'[remote "origin"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (git / "config").write_text(text + '[branch "main"]\n\tremote = origin\n')
    return str(tmp_path / name)


def worktree(tmp_path: Path, main: str, name: str, relative: bool = False) -> str:
    """A linked worktree: `.git` is a file naming `<main>/.git/worktrees/<name>`, whose
    `commondir` leads back to the main `.git`."""
    admin = Path(main) / ".git" / "worktrees" / name
    admin.mkdir(parents=True)
    (admin / "commondir").write_text("../..\n")
    root = tmp_path / "checkouts" / name
    root.mkdir(parents=True)
    (admin / "gitdir").write_text(f"{root / '.git'}\n")
    (root / ".git").write_text(f"gitdir: {os.path.relpath(admin, root) if relative else admin}\n")
    return str(root)


@pytest.mark.parametrize(
    "origin", [pytest.param(ORIGIN, id="with-origin"), pytest.param("", id="no-remote")]
)
def test_worktrees_of_one_repository_are_one_project(tmp_path: Path, origin: str) -> None:
    main = repo(tmp_path, "widget", origin)
    linked = worktree(tmp_path, main, "feature")
    other = worktree(tmp_path, main, "hotfix", relative=True)
    assert scopes.project_hash(main) == scopes.project_hash(linked) == scopes.project_hash(other)
    for i, root in enumerate((main, linked, other)):
        session(root, f"s{i}", T0 + i * DAY, LOOP)
    assert global_records() == []


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/widget",
        "https://github.com/Acme/Widget.git/",
        "ssh://git@github.com/acme/widget.git",
        "ssh://git@github.com:22/acme/widget",
        "https://someone:s3cret@github.com/acme/widget.git",
        "git://github.com/acme/widget.git",
    ],
)
def test_clones_of_one_repository_are_one_project(tmp_path: Path, url: str) -> None:
    first, second = repo(tmp_path, "first", ORIGIN), repo(tmp_path, "second", url)
    assert scopes.project_hash(first) == scopes.project_hash(second)
    session(first, "a0", T0, LOOP)
    session(second, "b0", T0 + DAY, LOOP)
    assert global_records() == []


def test_distinct_repositories_still_promote(tmp_path: Path) -> None:
    a = repo(tmp_path, "a", ORIGIN)
    b = repo(tmp_path, "b", "git@github.com:acme/gadget.git")
    c = repo(tmp_path, "c")  # no remote: its own git dir
    assert len({scopes.project_hash(a), scopes.project_hash(b), scopes.project_hash(c)}) == 3
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, LOOP)
    assert [r["type"] for r in global_records()] == ["aggregate"]


def test_the_remote_url_is_never_stored(tmp_path: Path) -> None:
    secret = "https://someone:s3cret@github.com/acme/widget.git"
    a, b = repo(tmp_path, "a", secret), repo(tmp_path, "b", "git@github.com:acme/gadget.git")
    session(a, "a0", T0, LOOP)
    session(b, "b0", T0 + DAY, LOOP)
    stored = [
        Path(scopes.index_path()).read_text(),
        *(Path(p).read_text() for p in (store.global_path(), store.project_path(a))),
    ]
    assert global_records()
    for text in stored:
        assert not any(word in text for word in ("acme", "widget", "gadget", "s3cret", "github"))


def test_a_hostile_git_dir_falls_back_to_the_checkout(tmp_path: Path) -> None:
    fifo = repo(tmp_path, "fifo")
    os.unlink(Path(fifo) / ".git" / "config")
    os.mkfifo(Path(fifo) / ".git" / "config")  # never read: no hang
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    (nowhere / ".git").write_text("gitdir: /does/not/exist\n")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / ".git").write_bytes(b"\x00" * 100 + b"gitdir")
    plain = tmp_path / "plain"  # not a repository at all
    plain.mkdir()
    assert scopes.project_hash(fifo) == store.short_hash(os.path.realpath(Path(fifo) / ".git"))
    for root in (nowhere, garbage, plain):
        assert scopes.project_hash(str(root)) == store.short_hash(os.path.realpath(root))


def test_a_huge_git_config_is_read_only_up_to_its_cap(tmp_path: Path) -> None:
    root = repo(tmp_path, "big")
    config = Path(root) / ".git" / "config"
    padding = "# padding\n" * (scopes.CONFIG_CAP // 10 + 10)  # the origin comes past the cap
    config.write_text(padding + f'[remote "origin"]\n\turl = {ORIGIN}\n')
    assert scopes.project_hash(root) == store.short_hash(os.path.realpath(Path(root) / ".git"))


def test_a_project_counted_under_its_old_identity_is_counted_once(tmp_path: Path) -> None:
    a, b = repo(tmp_path, "a", ORIGIN), worktree(tmp_path, repo(tmp_path, "main-b"), "b")
    old = store.short_hash(os.path.realpath(a))  # how earlier versions named a project
    index = {
        "v": 1,
        "rules": {"error-loop": {"promoted": False, "projects": {old: [1, 0, T0, T0]}}},
    }
    Path(scopes.index_path()).parent.mkdir(parents=True, exist_ok=True)
    Path(scopes.index_path()).write_text(json.dumps(index))
    session(a, "a0", T0 + DAY, LOOP)
    projects = json.loads(Path(scopes.index_path()).read_text())["rules"]["error-loop"]["projects"]
    assert projects == {scopes.project_hash(a): [2, 0, T0, T0 + DAY]}
    assert global_records() == []
    session(b, "b0", T0 + 2 * DAY, LOOP)
    assert [r["detections"] for r in global_records()] == [3]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_a_real_git_worktree_is_the_same_project(tmp_path: Path) -> None:
    main = tmp_path / "real"
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}

    def git(*args: str, cwd: Path = main) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

    main.mkdir()
    git("init", "-q")
    git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "init",
    )
    bare = scopes.project_hash(str(main))
    git("worktree", "add", "-q", str(tmp_path / "wt"))
    assert scopes.project_hash(str(tmp_path / "wt")) == bare
    git("remote", "add", "origin", "https://github.com/acme/widget.git")
    git("clone", "-q", str(main), str(tmp_path / "clone"), cwd=tmp_path)
    git("remote", "set-url", "origin", ORIGIN, cwd=tmp_path / "clone")
    assert (
        scopes.project_hash(str(main))
        == scopes.project_hash(str(tmp_path / "wt"))
        == scopes.project_hash(str(tmp_path / "clone"))
        != bare
    )
