"""Go: the package paths of `import "x"` and `import ( ... )`, and the import path of a
package folder from the nearest go.mod."""

from __future__ import annotations

import os

from metacog.fsutil import read_capped
from metacog.imports.scan import clean as _clean

GO_MOD_CAP = 65536  # bytes of a go.mod read for its `module` line (it comes first)


def parse_go(text: str) -> list[str]:
    keys: dict[str, None] = {}
    n = len(text)
    i = text.find("import")
    while i != -1:
        end = i + 6
        start = text.rfind("\n", 0, i) + 1
        if not text[start:i].strip() and text[end : end + 1] in (" ", "\t", "("):
            j = end
            while j < n and text[j] in " \t":
                j += 1
            if text[j : j + 1] == "(":
                close = text.find(")", j)
                close = n if close == -1 else close
                lines = text[j + 1 : close].split("\n")
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
            path = line[q + 1 : e] if e != -1 else ""
            return _clean(path) if "/" in path or "." in path else ""
    return ""


def package(root: str, folder: str) -> str:
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
                    below = folder[len(probe) :].strip("/")
                    return module + "/" + below if below else module
            return ""
        if not probe:
            return ""
        probe = probe.rpartition("/")[0]
    return ""
