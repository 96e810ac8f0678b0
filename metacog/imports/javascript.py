"""JavaScript and TypeScript: `import`, `export ... from`, `require()` and dynamic
`import()` specifiers; relative paths resolved against the importer, `@/` and `~/`
aliases and baseUrl-relative paths as bare specifiers."""

from __future__ import annotations

import os

from metacog.imports.scan import ID_CHARS as _ID
from metacog.imports.scan import clean as _clean
from metacog.imports.scan import memo as _memo
from metacog.imports.scan import remember as _remember
from metacog.imports.scan import skip_ws as _skip_ws

_JS_DROP = frozenset((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"))
_ASSETS = frozenset(
    (
        ".css",
        ".scss",
        ".sass",
        ".less",
        ".json",
        ".svg",
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".webp",
        ".ico",
        ".html",
        ".md",
        ".txt",
        ".wasm",
        ".woff",
        ".woff2",
    )
)


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
                if word == "export" and text[end : end + 2].strip()[:1] not in ("*", "{", "t", ""):
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
    prefix = text[text.rfind("\n", 0, i) + 1 : i]
    return "//" in prefix or prefix.lstrip().startswith(("*", "/*"))


def _js_string(text: str, q: int) -> str:
    quote = text[q : q + 1]
    if quote not in ("'", '"', "`"):
        return ""
    end = text.find(quote, q + 1, q + 512)
    if end == -1:
        return ""
    spec = text[q + 1 : end]
    return "" if "\n" in spec or "${" in spec else spec


def _js_spec(text: str, word: str, j: int) -> str:
    """The specifier of the statement whose keyword ends at `j`, or ''."""
    c = text[j : j + 1]
    if c in (" ", "\t", "\n", "\r"):
        j = _skip_ws(text, j)
        c = text[j : j + 1]
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
        return "b:" + jnorm(
            spec
        )  # baseUrl-relative ('src/x', 'components/x'), or a package subpath
    return ""
