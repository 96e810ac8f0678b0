"""The import index: which files of a repository import which modules, kept fresh cheaply.

Built once per repository (a `git ls-files` listing, else a bounded walk) and stored under
the state dir. Each later edit refreshes it: one stat per known directory (a changed one
is listed again: new, removed and replaced files), the files of changed directories and
the file just edited re-parsed when their stamp changed, and the other files stat-ed
round-robin within a share of the budget (all of them per edit on a machine that can:
20,000 files take 30-60 ms here). It stores paths, stamps and import keys, never content.

An import key says what one statement imports, in a form a file can be matched against:
`p:a.b` a Python module, `p:a.b:c,d` `from a.b import c, d` (lower-case names only: they
may be submodules, classes and constants cannot), relative imports resolved from the
project root; `j:dir/x` a JS/TS path resolved against the importer, extension and
`/index` dropped; `b:x/y` a bare or `@/`-aliased JS/TS specifier; `g:module/pkg` a Go
package; `r:src/a/b` a Rust module file. `names_for` gives what a file is imported as.

No `re` here: importing it costs ~7 ms per hook process. The parsers find keywords with
str methods (C speed) and memoize statements, which repeat across a repository.
"""

from __future__ import annotations

import os
import stat as stat_mod
import time
import zlib
from bisect import bisect_right

from metacog import fastjson
from metacog.fsutil import atomic_write, ensure_dir, locked, read_capped, read_fd

SCHEMA = 1
FILE_CAP = 1 << 20  # bytes; larger files are indexed as targets but never parsed
FIRST_S = 1.5  # the first index; under the 2 s session lock timeout (fsutil.locked)
RACY_NS = 2_000_000_000  # a stamp this recent may hide a same-tick rewrite: look again next time
RETRY_S = 24 * 3600  # a repository with more files than max_files is tried again after this
KEEP_S = 30 * 24 * 3600  # index files of projects untouched this long are removed
SAVE_LOCK_S = 0.02  # another process is saving: ours is not needed, the next refresh redoes it
MAX_PATHSPECS = 200
SHARED_MIN = 8  # chars; a file's names are searched as one shared suffix only when it is this long
MEMO_CAP = 100_000
SWEEP_SHARE = 0.5  # of the budget, for stat-ing files; loading, parsing and asking take the rest
RESUME_SHARE = 0.6  # of the budget, for going on with an index the first edit could not finish
JOURNAL_MIN = 256 * 1024  # bytes; the journal is merged once past this and past 1/8 of the index
GO_MOD_CAP = 65536  # bytes of a go.mod read for its `module` line (it comes first)
GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")

KINDS = {".py": "p", ".go": "g", ".rs": "r"}
KINDS.update(dict.fromkeys((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte"), "j"))
_JS_DROP = frozenset((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"))
_ASSETS = frozenset((".css", ".scss", ".sass", ".less", ".json", ".svg", ".png", ".jpg", ".jpeg",
                     ".gif", ".webp", ".ico", ".html", ".md", ".txt", ".wasm", ".woff", ".woff2"))
SKIP_DIRS = frozenset(("node_modules", "__pycache__", "venv", "env", "build", "dist", "target", "vendor",
                       "site-packages", "bower_components", "coverage", "htmlcov", "out"))
_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")
_NOT_IN_KEYS = (" ", "|", "\t", "\n", "\r", '"', "\\")  # the index's separators, and JSON escapes
_PY_AFTER = (" ", "\t", "(", "\\")
_memo: dict[str, object] = {}


def kind(path: str) -> str:
    """'p', 'j', 'g' or 'r' for a source file the index knows, '' for anything else."""
    dot = path.rfind(".")
    if dot <= path.rfind("/") + 1:
        return ""
    return KINDS.get(path[dot:].lower(), "")


def _remember(key: str, value: object) -> None:
    if len(_memo) >= MEMO_CAP:
        _memo.clear()
    _memo[key] = value


# --- parsers: source text -> import keys -------------------------------------------------


def parse(text: str, rel: str) -> list[str]:
    """The import keys of one source file (`rel`: its path from the project root)."""
    k = kind(rel)
    if k == "p":
        return parse_python(text, rel)
    if k == "j":
        return parse_js(text, rel)
    if k == "g":
        return parse_go(text)
    if k == "r":
        return parse_rust(text, rel)
    return []


def _clean(key: str) -> str:
    """`key`, or '' when it holds a character the index uses as a separator or JSON escapes."""
    for c in _NOT_IN_KEYS:
        if c in key:
            return ""
    return key


def parse_python(text: str, rel: str) -> list[str]:
    if "import" not in text:
        return []
    keys: dict[str, None] = {}
    memo = _memo
    find, rfind, n = text.find, text.rfind, len(text)
    quoted = '"""' in text or "'''" in text
    counted = dq = sq = 0
    package: list[str] | None = None
    i = find("import")
    while i != -1:
        if text[i + 6:i + 7] not in _PY_AFTER or (i and text[i - 1] not in " \t\n;"):
            i = find("import", i + 6)
            continue  # importlib, imported, reimport: not the keyword
        start = rfind("\n", 0, i) + 1
        end = find("\n", i)
        end = n if end == -1 else end
        if quoted:  # inside a triple-quoted string (a docstring showing usage) it is not code
            dq += text.count('"""', counted, start)
            sq += text.count("'''", counted, start)
            counted = start
            if dq & 1 or sq & 1:
                i = find("import", end)
                continue
        line = text[start:end]
        got = memo.get(line)
        if got is None:
            if start >= 2 and text[start - 2] == "\\":  # `from a \` on the line before
                while start >= 2 and text[start - 2] == "\\":
                    start = rfind("\n", 0, start - 1) + 1
                line = text[start:end]
            if package is None:
                package = rel.split("/")[:-1]
            got, end = _py_line(text, line, end, package)
        for key in got:  # type: ignore[union-attr]
            keys[key] = None
        i = find("import", end)
    return list(keys)


def _py_line(text: str, line: str, end: int, package: list[str]) -> tuple[tuple[str, ...], int]:
    """The keys of the statement starting on `line` (memoized when it is a line of its own)."""
    head = line.lstrip()
    first = head[:4]
    if first != "impo" and first != "from":
        _remember(line, ())
        return (), end
    whole = "\n" not in line
    if not whole:
        head = head.replace("\\\r\n", " ").replace("\\\n", " ")
    if "#" in head:
        head = head[:head.find("#")]
    if head.endswith("\\") or ("(" in head and ")" not in head):
        head, end = _continued(text, head, end)
        whole = False
    out: list[str] = []
    relative = False
    for part in head.split(";") if ";" in head else (head,):
        part = part.strip()
        relative = relative or part.startswith("from .")
        out += _py_statement(part, package)
    got = tuple(out)
    if whole and not relative:
        _remember(line, got)
    return got, end


def _continued(text: str, stmt: str, end: int) -> tuple[str, int]:
    """A statement continued by parentheses or backslashes, as one line."""
    n = len(text)
    stmt = stmt.rstrip()
    for _ in range(200):
        if stmt.endswith("\\"):
            stmt = stmt[:-1]
        elif not ("(" in stmt and ")" not in stmt):
            break
        if end >= n:
            break
        nxt = text.find("\n", end + 1)
        nxt = n if nxt == -1 else nxt
        line = text[end + 1:nxt]
        cut = line.find("#")
        stmt += " " + (line if cut == -1 else line[:cut]).strip()
        end = nxt
    return stmt, end


def _py_statement(stmt: str, package: list[str]) -> list[str]:
    if "(" in stmt:
        stmt = stmt.replace("(", " ").replace(")", " ")
    if stmt.startswith("import"):
        words = stmt.split(None, 1)
        if len(words) < 2 or words[0] != "import":
            return []
        out = []
        for item in words[1].split(","):
            name = item.split(None, 1)
            if name and name[0].replace(".", "_").isidentifier():
                out.append("p:" + name[0])
        return out
    words = stmt.split(None, 3)
    if len(words) < 4 or words[0] != "from" or words[2] != "import":
        return []
    names = [item.split(None, 1)[0] for item in words[3].split(",") if item and not item.isspace()]
    return _py_from(words[1], names, package)


def _py_from(module: str, names: list[str], package: list[str]) -> list[str]:
    base = module.lstrip(".")
    dots = len(module) - len(base)
    if base and not base.replace(".", "_").isidentifier():
        return []
    if dots:
        up = dots - 1
        if up > len(package):
            return []
        parts = package[:len(package) - up]
        full = ".".join(parts + [base] if base else parts)
    else:
        full = base
    # Lower-case names may be submodules (PEP 8); classes and constants cannot.
    modules = [w for w in names if (w[0].islower() or w[0] == "_") and w.isidentifier()]
    if not full:
        return ["p:" + w for w in modules]  # `from . import x` at the root
    return ["p:" + full + ":" + ",".join(modules)] if modules else ["p:" + full]


def parse_js(text: str, rel: str) -> list[str]:
    here = rel.rpartition("/")[0]
    keys: dict[str, None] = {}
    n = len(text)
    find = text.find
    for word in ("import", "export", "require"):
        size = len(word)
        i = find(word)
        while i != -1:
            end = i + size
            if (i == 0 or text[i - 1] not in _ID) and (end >= n or text[end] not in _ID):
                if word == "export" and text[end:end + 2].strip()[:1] not in ("*", "{", "t", ""):
                    i = find(word, end)
                    continue  # export const/function/class...: the usual case, rejected early
                spec = _js_spec(text, word, end)
                if spec and (i == 0 or text[i - 1] == "\n" or not _js_commented(text, i)):
                    key = _js_key(spec, here)
                    if key:
                        keys[key] = None
            i = find(word, end)
    return list(keys)


def _js_commented(text: str, i: int) -> bool:
    prefix = text[text.rfind("\n", 0, i) + 1:i]
    return "//" in prefix or prefix.lstrip().startswith(("*", "/*"))


def _js_string(text: str, q: int) -> str:
    quote = text[q:q + 1]
    if quote not in ("'", '"', "`"):
        return ""
    end = text.find(quote, q + 1, q + 512)
    if end == -1:
        return ""
    spec = text[q + 1:end]
    return "" if "\n" in spec or "${" in spec else spec


def _js_spec(text: str, word: str, j: int) -> str:
    """The specifier of the statement whose keyword ends at `j`, or ''."""
    c = text[j:j + 1]
    if c in (" ", "\t", "\n", "\r"):
        j = _skip_ws(text, j)
        c = text[j:j + 1]
    if word == "export":
        if c not in ("*", "{", "t"):
            return ""  # export const/function/default...: no specifier
    elif c == "(":
        return _js_string(text, _skip_ws(text, j + 1))  # require('x'), dynamic import('x')
    elif word == "require":
        return ""
    elif c in ("'", '"'):
        return _js_string(text, j)  # import './x'
    # `import a, {b as c} from 'x'`, `export * from 'x'`, `export type {T} from 'x'`
    limit = j + 1000
    qa, qb = text.find("'", j, limit), text.find('"', j, limit)
    q = qa if qb == -1 or (qa != -1 and qa < qb) else qb
    if q == -1:
        return ""
    clause = text[j:q]
    if ";" in clause or "=" in clause or "(" in clause or ")" in clause or "`" in clause:
        return ""
    clause = clause.rstrip()
    if not clause.endswith("from") or clause[-5:-4] in _ID:
        return ""
    return _js_string(text, q)


def _skip_ws(text: str, j: int) -> int:
    n = len(text)
    while j < n and text[j] in " \t\r\n":
        j += 1
    return j


def jnorm(path: str) -> str:
    """A JS/TS module path without its extension and without a trailing /index."""
    dot = path.rfind(".")
    if dot > path.rfind("/") + 1 and path[dot:] in _JS_DROP:
        path = path[:dot]
        path = path.removesuffix(".d")
    if path == "index":
        return "."
    if path.endswith("/index"):
        return path[:-6]
    return path


def _js_key(spec: str, here: str) -> str:
    memo = here + "\0" + spec
    got = _memo.get(memo)
    if got is None:
        got = _js_resolve(spec, here)
        _remember(memo, got)
    return got  # type: ignore[return-value]


def _js_resolve(spec: str, here: str) -> str:
    spec = _clean(spec.split("?", 1)[0])
    if not spec:
        return ""
    dot = spec.rfind(".")
    if dot > spec.rfind("/") + 1 and spec[dot:].lower() in _ASSETS:
        return ""
    if spec[0] == ".":
        if spec not in (".", "..") and not spec.startswith(("./", "../")):
            return ""
        path = os.path.normpath(here + "/" + spec if here else spec)
        if path == ".." or path.startswith("../"):
            return ""
        return "j:" + jnorm(path)
    if spec.startswith(("@/", "~/")):
        return "b:" + jnorm(spec[2:])
    if "/" in spec and ":" not in spec and spec[0] not in "/@#":
        return "b:" + jnorm(spec)  # baseUrl-relative ('src/x', 'components/x'), or a package subpath
    return ""


def parse_go(text: str) -> list[str]:
    keys: dict[str, None] = {}
    n = len(text)
    i = text.find("import")
    while i != -1:
        end = i + 6
        start = text.rfind("\n", 0, i) + 1
        if not text[start:i].strip() and text[end:end + 1] in (" ", "\t", "("):
            j = end
            while j < n and text[j] in " \t":
                j += 1
            if text[j:j + 1] == "(":
                close = text.find(")", j)
                close = n if close == -1 else close
                lines = text[j + 1:close].split("\n")
                end = close
            else:
                stop = text.find("\n", j)
                stop = n if stop == -1 else stop
                lines = [text[j:stop]]
                end = stop
            for line in lines:
                path = _go_path(line)
                if path:
                    keys["g:" + path] = None
        i = text.find("import", end)
    return list(keys)


def _go_path(line: str) -> str:
    line = line.split("//", 1)[0]
    for quote in ('"', "`"):
        q = line.find(quote)
        if q != -1:
            e = line.find(quote, q + 1)
            path = line[q + 1:e] if e != -1 else ""
            return _clean(path) if "/" in path or "." in path else ""
    return ""


def _rust_context(rel: str) -> tuple[str, str, list[str]]:
    """(directory of the file's child modules, crate src dir or '', module path in the crate)."""
    parts = rel.split("/")
    name = parts[-1]
    own = name in ("mod.rs", "lib.rs", "main.rs")
    child = "/".join(parts[:-1] if own else parts[:-1] + [name[:-3]])
    src = next((k for k in range(len(parts) - 2, -1, -1) if parts[k] == "src"), -1)
    if src == -1:
        return child, "", []
    return child, "/".join(parts[:src + 1]), parts[src + 1:-1] + ([] if own else [name[:-3]])


def parse_rust(text: str, rel: str) -> list[str]:
    if "mod" not in text and "use" not in text:
        return []
    child, crate, module = _rust_context(rel)
    keys: dict[str, None] = {}
    n = len(text)
    for word in ("mod", "use"):
        i = text.find(word)
        while i != -1:
            end = i + 3
            prefix = text[text.rfind("\n", 0, i) + 1:i].strip()
            if (not prefix or (prefix.startswith(("pub", "#[")) and prefix.endswith(("pub", ")", "]")))) \
                    and text[end:end + 1] in (" ", "\t"):
                if word == "mod":
                    j = _skip_ws(text, end)
                    k = j
                    while k < n and (text[k].isalnum() or text[k] == "_"):
                        k += 1
                    after = _skip_ws(text, k)
                    if k > j and text[after:after + 1] == ";":
                        keys["r:" + (child + "/" if child else "") + text[j:k]] = None
                elif crate:
                    stop = text.find(";", end, end + 2000)
                    if stop != -1:
                        paths: list[str] = []
                        _use_paths(" ".join(text[end:stop].split()), paths)
                        for path in paths:
                            _rust_keys(path, crate, module, keys)
                        end = stop
            i = text.find(word, end)
    return list(keys)


def _use_paths(tree: str, out: list[str], depth: int = 0) -> None:
    """`a::{b, c::{d as e}}` -> ['a::b', 'a::c::d'] (capped)."""
    if len(out) >= 64 or depth > 8:
        return
    k = tree.find("{")
    if k == -1:
        out.append(tree.split(" as ")[0].replace(" ", ""))
        return
    prefix, level, item, items = tree[:k].replace(" ", ""), 0, [], []
    for c in tree[k + 1:]:
        if c == "{":
            level += 1
        elif c == "}":
            if level == 0:
                break
            level -= 1
        if c == "," and level == 0:
            items.append("".join(item))
            item = []
        else:
            item.append(c)
    items.append("".join(item))
    for part in items:
        if part.strip():
            _use_paths(prefix + part.strip(), out, depth + 1)


def _rust_keys(path: str, crate: str, module: list[str], keys: dict[str, None]) -> None:
    segs = [s for s in path.split("::") if s]
    if not segs:
        return
    if segs[0] == "crate":
        base, rest = [], segs[1:]
    elif segs[0] in ("self", "super"):
        base, rest = list(module), segs[1:] if segs[0] == "self" else segs
        while rest and rest[0] == "super":
            if not base:
                return
            base.pop()
            rest = rest[1:]
    else:
        return  # another crate, or std
    item = bool(rest) and rest[-1] not in ("self", "*")
    if rest and not item:
        rest = rest[:-1]
    full = base + rest
    if not full:
        return
    keys["r:" + crate + "/" + "/".join(full)] = None
    if item and len(full) > 1:
        keys["r:" + crate + "/" + "/".join(full[:-1])] = None  # `use crate::a::b::Item` uses a/b.rs


# --- what a file is imported as ----------------------------------------------------------


def names_for(rel: str, root: str) -> list[str]:
    """The keys under which other files import `rel` ([] when nothing can import it)."""
    k = kind(rel)
    out: list[str] = []
    if k == "p":
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if not parts:
            return []
        out.append("p:" + ".".join(parts))
        # A top-level dir that is not itself a package is a source root (src/, lib/, tests/).
        if len(parts) > 1 and not os.path.exists(os.path.join(root, parts[0], "__init__.py")):
            out.append("p:" + ".".join(parts[1:]))
        src = next((i for i in range(len(parts) - 2, 0, -1) if parts[i] == "src"), 0)
        if src:
            out.append("p:" + ".".join(parts[src + 1:]))
    elif k == "j":
        path = jnorm(rel)
        out += ["j:" + path, "b:" + path]
        if "/" in path:
            out.append("b:" + path.split("/", 1)[1])
    elif k == "g":
        if not rel.endswith("_test.go"):
            package = _go_package(root, rel.rpartition("/")[0])
            if package:
                out.append("g:" + package)
    elif k == "r":
        parts = rel[:-3].split("/")
        if parts[-1] not in ("lib", "main"):
            if parts[-1] == "mod":
                parts.pop()
            if parts:
                out.append("r:" + "/".join(parts))
    return list(dict.fromkeys(out))


def _go_package(root: str, folder: str) -> str:
    """The import path of the Go package in `folder`, from the nearest go.mod up to the root."""
    probe = folder
    for _ in range(64):
        gomod = os.path.join(root, probe, "go.mod")
        if os.path.exists(gomod):
            # The repository chose this file: it may be a link to /dev/zero or a FIFO.
            head = read_capped(gomod, GO_MOD_CAP).decode("utf-8", "replace")
            for line in head.split("\n"):
                words = line.split("//", 1)[0].split()
                if len(words) >= 2 and words[0] == "module":
                    module = words[1].strip('"`')
                    below = folder[len(probe):].strip("/")
                    return module + "/" + below if below else module
            return ""
        if not probe:
            return ""
        probe = probe.rpartition("/")[0]
    return ""


def _needles(names: list[str]) -> list[tuple[bytes, tuple[bytes, ...], str | None]]:
    """How to find keys naming any of `names` in the stored key text, as found there.

    Each: (text to search, what must come just before it, what must follow: None for a
    key's end, '' for the end of a module name in `import M` or `from M import ...`,
    else a member of the list in `from PARENT import a,b`). A file's names are its
    longest one without some leading components, so one search of the shortest finds
    them all (JS paths are also bare specifiers, `b:`).
    """
    families: dict[str, list[tuple[str, str]]] = {}
    for name in names:
        tag, _, value = name.partition(":")
        families.setdefault("j" if tag == "b" else tag, []).append((tag, value))
    out = []
    for family, items in families.items():
        if family != "p":
            out += _family(items, None)
            continue
        out += _family(items, "")
        dotted = [(tag, value.rpartition(".")[0] + ":") for tag, value in items if "." in value]
        if dotted:
            out += _family(dotted, items[0][1].rpartition(".")[2])
    return out


def _family(items: list[tuple[str, str]], member: str | None) -> list[tuple[bytes, tuple[bytes, ...], str | None]]:
    shortest = min((value for _, value in items), key=len)
    if len(shortest) < SHARED_MIN or not all(value.endswith(shortest) for _, value in items):
        # A short text ('.' for a root index.ts, 'os') would be found everywhere: whole keys.
        return [(_escaped(" " + tag + ":" + value).encode(), (b"",), member) for tag, value in items]
    heads = {_escaped(" " + tag + ":" + value[:len(value) - len(shortest)]).encode() for tag, value in items}
    return [(_escaped(shortest).encode(), tuple(sorted(heads)), member)]


# --- listing ------------------------------------------------------------------------------


def _git(root: str, args: list[str], timeout: float) -> list[str] | None:
    """NUL-separated paths from a git command in `root`, or None (no git, not a repo, too slow)."""
    import subprocess  # ~3 ms; only when a listing is needed

    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_DROP}
    try:
        done = subprocess.run(["git", "--literal-pathspecs", "-C", root, *args], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=max(timeout, 0.05),
                              env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [os.fsdecode(p) for p in done.stdout.split(b"\0") if p]


def _walk(root: str, tops: list[str], deadline: float, cap: int) -> tuple[list[str], list[str]] | None:
    """(files, dirs) under `tops` without git: skips hidden, dependency, build and venv dirs.

    None when `deadline` came first; a walk that found more than `cap` files stops there
    (the caller sees more than `cap`): running late says nothing about the size.
    """
    files: list[str] = []
    dirs: list[str] = []
    stack = list(tops)
    while stack:
        if len(files) > cap:
            break
        if time.perf_counter() > deadline:
            return None
        rel = stack.pop()
        dirs.append(rel)
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as entries:
                for entry in entries:
                    name = entry.name
                    sub = rel + "/" + name if rel else name
                    if entry.is_dir(follow_symlinks=False):
                        if not _skipped(root, sub, name):
                            stack.append(sub)
                    elif entry.is_file():
                        files.append(sub)
        except OSError:
            continue
    return files, dirs


def _skipped(root: str, sub: str, name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS or os.path.exists(os.path.join(root, sub, "pyvenv.cfg"))


def _usable(rel: str) -> bool:
    return "\n" not in rel and "\r" not in rel


# --- the index ----------------------------------------------------------------------------


class _Dir:
    """One directory: its stamp and, aligned, its source files' names, stamps and key lines.

    Key lines are ' k1 k2 ' (or ''), joined by '|' into one blob per directory. While a
    directory is as the index file has it (`slot` >= 0) its blob is read in place from
    the file's text; a change detaches it and keeps the blob here, as a list of lines
    while it is being changed. Stamps are st_mtime_ns + st_size (a change of either
    changes the sum; 0 means look again).
    """

    __slots__ = ("_blob", "_lines", "mtime", "names", "path", "slot", "stamps")

    def __init__(self, path: str, mtime: int, names: list[str], stamps: list[int],
                 blob: str = "", slot: int = -1) -> None:
        self.path = path
        self.mtime = mtime
        self.names = names
        self.stamps = stamps
        self.slot = slot
        self._blob: str | None = blob if slot < 0 else None
        self._lines: list[str] | None = None

    def blob(self, index: Index) -> str:
        if self._blob is None:
            self._blob = "|".join(self._lines) if self._lines is not None else index.stored_blob(self.slot)
        return self._blob

    def lines(self, index: Index) -> list[str]:
        """The key lines, for a change: detaches the directory from the file's text."""
        if self._lines is None:
            self._lines = self.blob(index).split("|") if self.names else []
        self._blob = None
        self.slot = -1
        return self._lines

    def record(self) -> list:
        return [self.path, self.mtime, "/".join(self.names), self.stamps]


def _stamp(st: os.stat_result, now_ns: int) -> int:
    return 0 if now_ns - st.st_mtime_ns < RACY_NS else st.st_mtime_ns + st.st_size


def _dir_stamp(st: os.stat_result, now_ns: int) -> int:
    return 0 if now_ns - st.st_mtime_ns < RACY_NS else st.st_mtime_ns


def path_for(state_dir: str, root: str) -> str:
    return os.path.join(state_dir, "imports", f"{zlib.crc32(root.encode('utf-8', 'surrogateescape')):08x}.json")


class Index:
    """A repository's import index: load, build or refresh, ask, save.

    The file is JSON lines: a header, the records of all directories (one line), then
    one line per directory holding its key blob as a JSON string, searched as it is:
    keys hold no character that JSON escapes but non-ASCII ones, escaped alike in the
    tokens searched for. A save appends the directories that changed to a journal
    beside the file, applied over it on load and merged into it once it grows: an edit
    writes kilobytes, not the index. Every record describes what was seen, stamps
    included, so a record lost to a race is an older truth the next sweep finds stale.
    """

    def __init__(self, root: str, path: str) -> None:
        self.root = root
        self.path = path
        self.journal = path + ".journal"
        self.state = "new"  # new | partial | ok | too_big
        self.git = False
        self.made = 0.0
        self.max_files = 0
        self.cursor = 0  # where the next file sweep starts (directories, in order)
        self.swept = 0  # directories the last sweep went through from the cursor
        self.dirs: dict[str, _Dir] = {}
        self.pending: list[str] = []
        self.data = b""  # the index file as read; key blobs are searched in it
        self.starts: list[int] = []  # offset of each stored blob line in `text`, and the end
        self.changed: set[str] = set()  # directories to journal
        self.rewrite = False  # the whole file, not a journal entry
        self.done = 0  # pending files indexed since the file was written
        self.sizes = (0, 0)  # bytes of the file and of the journal when loaded
        self.stamps: tuple = ()  # of the file and the journal before loading

    @property
    def dirty(self) -> bool:
        return self.rewrite or bool(self.changed)

    def stored_blob(self, slot: int) -> str:
        return fastjson.loads(self.data[self.starts[slot]:self.starts[slot + 1] - 1])

    @classmethod
    def load(cls, root: str, path: str) -> Index:
        index = cls(root, path)
        index.stamps = _file_stamps(path)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            first = data.find(b"\n")
            if first == -1:
                raise ValueError("no header")
            second = data.find(b"\n", first + 1)
            head = fastjson.loads(data[:first])
            if not isinstance(head, dict) or head.get("v") != SCHEMA or head.get("root") != root:
                return index  # another schema, or a crc32 collision: rebuilt
            records = fastjson.loads(data[first + 1:second if second != -1 else len(data)])
            starts, at = [], second + 1
            for _ in records:
                starts.append(at)
                at = data.find(b"\n", at) + 1
                if at == 0:
                    at = len(data) + 1
            starts.append(at)
            index.data, index.starts = data, starts
            for slot, (folder, mtime, names, stamps) in enumerate(records):
                index._add(folder, mtime, names, stamps, slot=slot)
            index.state, index.git, index.pending = head["state"], head["git"], list(head["pending"])
            index.made, index.max_files, index.cursor = head["made"], head["max_files"], head["cursor"]
            journal = b""
            if os.path.exists(index.journal):
                with open(index.journal, "rb") as fh:
                    journal = fh.read()
            for line in journal.decode("utf-8", "replace").split("\n"):
                index._apply(line)
            index.sizes = (len(data), len(journal))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            return cls(root, path)
        return index

    def _add(self, folder: str, mtime: int, names: str, stamps: list[int], blob: str = "",
             slot: int = -1) -> None:
        split = names.split("/") if names else []
        if len(stamps) != len(split) or not isinstance(folder, str) or not isinstance(mtime, int):
            raise ValueError("misaligned record")
        self.dirs[folder] = _Dir(folder, mtime, split, stamps, blob, slot)

    def _apply(self, line: str) -> None:
        try:
            record = fastjson.loads(line) if line else None
        except ValueError:
            return  # a line torn by a crash: the sweep finds what it described stale
        if isinstance(record, dict):
            self.cursor = record.get("cursor", self.cursor)
            self.state = record.get("state", self.state)
            del self.pending[:record.get("done", 0)]
        elif isinstance(record, list) and len(record) == 1:
            self.dirs.pop(record[0], None)
        elif isinstance(record, list) and len(record) == 5 and isinstance(record[4], str):
            self._add(*record)

    def dumps(self) -> str:
        head = fastjson.dumps({"v": SCHEMA, "root": self.root, "state": self.state, "git": self.git,
                               "made": self.made, "max_files": self.max_files, "cursor": self.cursor,
                               "pending": self.pending})
        dirs = list(self.dirs.values())
        out = [head, fastjson.dumps([d.record() for d in dirs])]
        for d in dirs:
            if d.slot >= 0:
                out.append(self.data[self.starts[d.slot]:self.starts[d.slot + 1] - 1].decode("ascii", "replace"))
            else:
                out.append(fastjson.dumps(d.blob(self)))
        return "\n".join(out)

    def save(self, held: bool = False) -> bool:
        """Write what changed; skipped (False) while another process holds the lock."""
        try:
            if held:  # the caller holds the lock (flock is per open file: taking it again would wait)
                self._write()
            else:
                with locked(self.path, timeout=SAVE_LOCK_S):
                    self._write()
        except (OSError, TimeoutError):
            return False
        self.changed.clear()
        self.rewrite = False
        self.done = 0
        return True

    def _write(self) -> None:
        entries = []
        if not self.rewrite:
            for path in sorted(self.changed):
                d = self.dirs.get(path)
                entries.append(fastjson.dumps([path] if d is None else d.record() + [d.blob(self)]))
            entries.append(fastjson.dumps({"cursor": self.cursor, "state": self.state, "done": self.done}))
        grown = self.sizes[1] + sum(len(e) + 1 for e in entries)
        if self.rewrite or grown > max(JOURNAL_MIN, self.sizes[0] // 8):
            atomic_write(self.path, self.dumps())
            try:
                os.unlink(self.journal)
            except FileNotFoundError:
                pass
            return
        fd = os.open(self.journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, ("\n".join(entries) + "\n").encode("utf-8", "surrogatepass"))  # one write: whole lines
        finally:
            os.close(fd)

    # building

    def build(self, deadline: float, max_files: int, now: float) -> None:
        """List the repository and parse what fits before `deadline` (the rest stays pending)."""
        listing, folders = None, None
        if os.path.exists(os.path.join(self.root, ".git")):
            listing = _git(self.root, ["ls-files", "-co", "--exclude-standard", "-z"], deadline - time.perf_counter())
        if listing is None:
            # A listing cut short by the deadline (a slow git, a slow disk) says nothing
            # about the size: nothing is stored and the next edit tries again. Only a
            # count over the limits below turns the index off for RETRY_S.
            walked = None if time.perf_counter() > deadline else _walk(self.root, [""], deadline, max_files * 4)
            if walked is None:
                return
            listing, folders = walked
        self.made, self.max_files, self.dirs, self.pending = now, max_files, {}, []
        self.rewrite = True
        self.git = folders is None
        if not self.git and len(listing) > max_files * 4:  # the walk stopped counting there
            self.state = "too_big"
            return
        listing = [rel for rel in dict.fromkeys(listing) if _usable(rel)]
        sources = [rel for rel in listing if kind(rel)]
        if len(sources) > max_files:
            self.state = "too_big"
            return
        wanted: set[str] = set(folders or ())
        wanted.add("")
        for rel in listing:
            folder = rel.rpartition("/")[0]
            while folder not in wanted:
                wanted.add(folder)
                folder = folder.rpartition("/")[0]
        now_ns = time.time_ns()
        for folder in sorted(wanted):
            self._add_dir(folder, now_ns)
        self.pending = sources
        self.state = "partial"
        self.resume(deadline)

    def resume(self, deadline: float) -> None:
        """Parse pending files until done or `deadline`: files new to the index, each once."""
        done = 0
        now_ns = time.time_ns()
        clock = time.perf_counter
        for rel in self.pending:
            if done % 16 == 0 and clock() > deadline:
                break
            self._parse_into(rel, now_ns, new=True)
            done += 1
        del self.pending[:done]
        self.done += done
        if not self.pending:
            self.state = "ok"

    def _add_dir(self, folder: str, now_ns: int) -> _Dir | None:
        try:
            st = os.stat(os.path.join(self.root, folder) if folder else self.root)
        except OSError:
            return None
        if not stat_mod.S_ISDIR(st.st_mode):
            return None
        d = self.dirs[folder] = _Dir(folder, _dir_stamp(st, now_ns), [], [])
        self.changed.add(folder)
        return d

    def _parse_into(self, rel: str, now_ns: int, new: bool = False) -> None:
        """(Re)index one file; its stamp is taken before its content, so a later write is seen."""
        folder, _, name = rel.rpartition("/")
        d = self.dirs.get(folder)
        if d is None:
            for up in _ancestors(folder):
                if up not in self.dirs and self._add_dir(up, now_ns) is None:
                    return
            d = self.dirs[folder]
        try:
            fd = os.open(os.path.join(self.root, rel), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            fd = -1
        st = None
        data = b""
        if fd >= 0:
            try:
                st = os.fstat(fd)
                if stat_mod.S_ISREG(st.st_mode):
                    data = read_fd(fd, FILE_CAP + 1) if st.st_size <= FILE_CAP else b""
                else:
                    st = None
            finally:
                os.close(fd)
        if new:
            if st is not None:
                keys = parse(data.decode("utf-8", "replace"), rel) if 0 < len(data) <= FILE_CAP else []
                d.lines(self).append(" " + " ".join(keys) + " " if keys else "")
                d.names.append(name)
                d.stamps.append(_stamp(st, now_ns))
                self.changed.add(d.path)
            return
        self._update(d, name, st, data, rel, now_ns)

    def _update(self, d: _Dir, name: str, st: os.stat_result | None, data: bytes, rel: str, now_ns: int) -> None:
        try:
            at = d.names.index(name)
        except ValueError:
            at = -1
        if st is None:  # gone, or no longer a regular file
            if at >= 0:
                del d.lines(self)[at], d.names[at], d.stamps[at]
                self.changed.add(d.path)
            return
        keys = parse(data.decode("utf-8", "replace"), rel) if 0 < len(data) <= FILE_CAP else []
        line, stamp = (" " + " ".join(keys) + " " if keys else ""), _stamp(st, now_ns)
        if at < 0:
            d.lines(self).append(line)
            d.names.append(name)
            d.stamps.append(stamp)
        elif d.stamps[at] != stamp or d.blob(self).split("|")[at] != line:
            d.lines(self)[at] = line
            d.stamps[at] = stamp
        else:
            return
        self.changed.add(d.path)

    # refreshing

    def refresh(self, deadline: float, sweep_until: float, edited: str) -> bool:
        """Bring the index up to date; False if `deadline` came first (progress is kept).

        Every directory is looked at; files are swept from `cursor` on until `sweep_until`
        (all of them, on a machine that can), those of changed directories always.
        """
        now_ns = time.time_ns()
        changed = self._changed_dirs()
        stale = self._sweep(changed, sweep_until)
        if edited and edited not in stale and self._indexed(edited):
            stale.append(edited)  # always: a rewrite within one mtime tick keeps the stamp
        if changed:
            fresh = self._look_into(changed, deadline, now_ns)
            if fresh is None:
                return False
            stale += fresh
        clock = time.perf_counter
        for n, rel in enumerate(dict.fromkeys(stale)):
            if n % 16 == 0 and clock() > deadline:
                return False
            self._parse_into(rel, now_ns)
        return True

    def _indexed(self, rel: str) -> bool:
        folder, _, name = rel.rpartition("/")
        d = self.dirs.get(folder)
        return d is not None and name in d.names

    def _changed_dirs(self) -> list[_Dir]:
        """Directories whose entries changed since the last look (one stat each)."""
        root, stat = self.root, os.stat
        changed: list[_Dir] = []
        for d in list(self.dirs.values()):
            try:
                mtime = stat(root + "/" + d.path if d.path else root).st_mtime_ns
            except OSError:
                self._drop_tree(d.path)
                continue
            if mtime != d.mtime:
                changed.append(d)
        return changed

    def _sweep(self, changed: list[_Dir], until: float) -> list[str]:
        """Files whose stamp changed: in `changed` directories, then from the cursor on."""
        root, clock = self.root, time.perf_counter
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        stat, close = os.stat, os.close
        stale: list[str] = []
        order = list(self.dirs.values())
        total = len(order)
        start = self.cursor % total if total else 0
        queue = changed + [order[(start + k) % total] for k in range(total)]
        seen: set[str] = set()
        swept = 0
        for n, d in enumerate(queue):
            if n >= len(changed):
                if clock() > until:
                    break
                swept += 1
            if d.path in seen or not d.names:
                continue
            seen.add(d.path)
            try:
                fd = os.open(root + "/" + d.path if d.path else root, flags)
            except OSError:
                continue  # gone: _look_into of its parent drops it
            try:
                stamps = d.stamps
                for i, name in enumerate(d.names):
                    try:
                        st = stat(name, dir_fd=fd)
                    except OSError:
                        stale.append(d.path + "/" + name if d.path else name)
                        continue
                    if st.st_mtime_ns + st.st_size != stamps[i]:
                        stale.append(d.path + "/" + name if d.path else name)
            finally:
                close(fd)
        self.cursor = (start + swept) % total if total else 0
        self.swept = swept
        return stale

    def _drop_tree(self, folder: str) -> None:
        below = folder + "/"
        for path in [p for p in self.dirs if not folder or p == folder or p.startswith(below)]:
            del self.dirs[path]
            self.changed.add(path)

    def _look_into(self, changed: list[_Dir], deadline: float, now_ns: int) -> list[str] | None:
        """New source files and new directories in the directories whose entries changed."""
        files: list[str] = []
        folders: list[str] = []
        for d in changed:
            if time.perf_counter() > deadline:
                return None
            if d.path not in self.dirs:
                continue  # dropped with a vanished parent
            full = os.path.join(self.root, d.path) if d.path else self.root
            try:
                st = os.stat(full)  # before the listing: an entry added during it changes the stamp again
                with os.scandir(full) as it:
                    entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
            except OSError:
                self._drop_tree(d.path)
                continue
            mtime = _dir_stamp(st, now_ns)
            if mtime != d.mtime:
                d.mtime = mtime
                self.changed.add(d.path)
            known = set(d.names)
            prefix = d.path + "/" if d.path else ""
            for name, is_dir in entries:
                sub = prefix + name
                if not _usable(sub):
                    continue
                if is_dir:
                    if sub not in self.dirs and not (name.startswith(".") or name in SKIP_DIRS):
                        folders.append(sub)
                elif name not in known and kind(name):
                    files.append(sub)
        if not files and not folders:
            return []
        found = self._admit(files, folders, deadline)
        if found is None:
            return None
        for folder in sorted({rel.rpartition("/")[0] for rel in found} | set(folders)):
            for up in _ancestors(folder):  # known from now on, even with nothing indexable inside
                if up not in self.dirs:
                    self._add_dir(up, now_ns)
        return [rel for rel in found if kind(rel)]

    def _admit(self, files: list[str], folders: list[str], deadline: float) -> list[str] | None:
        """Of new files and folders, the files not ignored (all of them, under the folders)."""
        if self.git:
            specs = files + [f + "/" for f in folders]
            if len(specs) > MAX_PATHSPECS:
                return None
            listed = _git(self.root, ["ls-files", "-co", "--exclude-standard", "-z", "--", *specs],
                          deadline - time.perf_counter())
            return None if listed is None else [rel for rel in listed if _usable(rel)]
        tops = [f for f in folders if not _skipped(self.root, f, f.rpartition("/")[2])]
        walked = _walk(self.root, tops, deadline, self.max_files)
        return None if walked is None or len(walked[0]) > self.max_files else files + walked[0]

    # asking

    def importers(self, names: list[str], exclude: str) -> list[str]:
        """Files whose import keys name one of `names`, sorted, without `exclude`."""
        needles = _needles(names)
        found: set[str] = set()
        slots: list[_Dir | None] = [None] * max(len(self.starts) - 1, 0)
        detached = []
        for d in self.dirs.values():
            if d.slot >= 0:
                slots[d.slot] = d
            elif d.names:
                detached.append(d)
        data, starts = self.data, self.starts
        if starts:  # the stored blobs, all at once
            for needle, prefixes, member in needles:
                i = data.find(needle, starts[0])
                while i != -1:
                    if _fits(data, i, len(needle), prefixes, member):
                        slot = bisect_right(starts, i) - 1
                        d = slots[slot] if slot < len(slots) else None
                        if d is not None:
                            name = d.names[data.count(b"|", starts[slot], i)]
                            found.add(d.path + "/" + name if d.path else name)
                    i = data.find(needle, i + 1)
        for d in detached:
            blob = fastjson.dumps(d.blob(self)).encode()
            for needle, prefixes, member in needles:
                i = blob.find(needle)
                while i != -1:
                    if _fits(blob, i, len(needle), prefixes, member):
                        name = d.names[blob.count(b"|", 0, i)]
                        found.add(d.path + "/" + name if d.path else name)
                    i = blob.find(needle, i + 1)
        found.discard(exclude)
        return sorted(found)


def _fits(data: bytes, i: int, size: int, prefixes: tuple[bytes, ...], member: str | None) -> bool:
    """Whether the needle found at `i` is a whole key of the kind asked (see `_needles`)."""
    if not any(data[i - len(p):i] == p for p in prefixes):
        return False
    j = i + size
    if member is None:
        return data[j:j + 1] == b" "
    if not member:
        return data[j:j + 1] in (b" ", b":")
    return member.encode() in data[j:data.find(b" ", j)].split(b",")


def _escaped(value: str) -> str:
    """`value` as it appears inside a JSON string of the index file."""
    return fastjson.dumps(value)[1:-1]


def _file_stamps(path: str) -> tuple:
    out = []
    for name in (path, path + ".journal"):
        try:
            st = os.stat(name)
            out.append((st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append(None)
    return tuple(out)


def _ancestors(folder: str) -> list[str]:
    """The root (''), every directory down to `folder`, and `folder`."""
    out = [folder]
    while folder:
        folder = folder.rpartition("/")[0]
        out.append(folder)
    return out[::-1]


def _collect_garbage(folder: str, now: float) -> None:
    """Remove the indexes of projects untouched for KEEP_S (best-effort; never raises)."""
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries if entry.name.endswith(".json")]
        for name in names:
            base = os.path.join(folder, name)
            parts = [base, base + ".journal", base + ".lock"]
            touched = max((os.stat(p).st_mtime for p in parts if os.path.exists(p)), default=now)
            if now - touched > KEEP_S:
                for part in parts:
                    try:
                        os.unlink(part)
                    except FileNotFoundError:
                        pass
    except OSError:
        pass


def importers(root: str, rel: str, state_dir: str, budget_s: float, max_files: int,
              start: float | None = None, first_s: float = FIRST_S) -> list[str] | None:
    """The files of `root` that import `rel`, sorted; None when that cannot be known in time.

    The first call for a repository builds the index within `first_s`; a build that did
    not finish goes on in later calls within `budget_s` each, silent until complete.
    Afterwards each call refreshes the index and answers within `budget_s` of `start`,
    or answers None.
    """
    start = time.perf_counter() if start is None else start
    names = names_for(rel, root)
    if not names:
        return None
    path = path_for(state_dir, root)
    index = Index.load(root, path)
    now = time.time()
    if index.state == "too_big" and now - index.made < RETRY_S and max_files <= index.max_files:
        return None
    deadline = start + budget_s
    if index.state != "ok":
        # The first index gets first_s; one that did not finish goes on within the budget,
        # leaving time to save what it did.
        work_until = start + (budget_s * RESUME_SHARE if index.state == "partial" else first_s)
        deadline = max(deadline, work_until)
        ensure_dir(os.path.dirname(path))
        try:
            with locked(path, timeout=0):  # another process is building it: silent meanwhile
                if index.stamps != _file_stamps(path):
                    index = Index.load(root, path)  # it changed while we were loading
                if index.state == "partial":
                    index.resume(work_until)
                elif index.state != "ok":
                    _collect_garbage(os.path.dirname(path), now)
                    index.build(work_until, max_files, now)
                if index.dirty:
                    index.save(held=True)
        except TimeoutError:
            return None
        if index.state != "ok":
            return None
    fresh = index.refresh(deadline, start + budget_s * SWEEP_SHARE, rel)
    if index.dirty:
        index.save()
    if not fresh:
        return None
    found = index.importers(names, rel)
    return None if time.perf_counter() > deadline else found
