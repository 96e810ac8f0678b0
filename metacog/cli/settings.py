"""`metacog config show | get KEY | set KEY VALUE [--project]`.

The files are the ones the hook reads (metacog.config): the global
`<config dir>/config.toml` and the project's `<root>/.claude/metacog.toml`, the
project winning. Keys are `section.key` from metacog.schema.DEFAULTS; a value is accepted
exactly when the hook would accept it (schema.merge decides, not a copy of its rule).
"""

from __future__ import annotations

import math
import os

from metacog import config, paths, schema
from metacog.cli.common import CliError, closest, one_line
from metacog.fsutil import atomic_write, read_capped

_UNSET = object()
_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def all_keys() -> list[str]:
    return [f"{section}.{key}" for section, values in schema.DEFAULTS.items() for key in values]


def split_key(key: str) -> tuple[str, str]:
    """(section, key) of a known `section.key`; a CliError naming the closest keys otherwise."""
    section, _, name = key.partition(".")
    if section in schema.DEFAULTS and name in schema.DEFAULTS[section]:
        return section, name
    if section in schema.DEFAULTS and not name:
        names = ", ".join(f"{section}.{k}" for k in schema.DEFAULTS[section])
        raise CliError(f"{section!r} is a section; name one of its keys: {names}", code=2)
    near = closest(key, all_keys())
    hint = f"closest: {', '.join(near)}" if near else "`metacog config show` lists them all"
    raise CliError(f"unknown setting {one_line(repr(key), 80)}; {hint}", code=2)


def accepts(section: str, name: str, value: object) -> bool:
    """Whether the hook would use this value (metacog.schema.merge is the judge)."""
    merged = schema.merge({section: {name: _UNSET}}, {section: {name: value}})
    return merged[section][name] is not _UNSET


def parse_value(key: str, raw: str) -> object:
    """VALUE typed like the setting's default, or a CliError saying what is expected."""
    section, name = split_key(key)
    default = schema.DEFAULTS[section][name]
    text = raw.strip()
    shown = one_line(repr(raw), 80)
    if not text.isascii():
        # int() and float() take any script's digits ("٣" is 3); TOML, which the hook reads, does not.
        raise CliError(f"{key} takes ASCII digits or true/false, not {shown}", code=2)
    if isinstance(default, bool):
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise CliError(f"{key} is true or false, not {shown}", code=2)
    if isinstance(default, int):
        try:
            value = int(text, 10)
        except ValueError:
            raise CliError(
                f"{key} is a whole number (like {default}), not {shown}", code=2
            ) from None
    elif isinstance(default, float):
        try:
            value = float(text)
        except ValueError:
            raise CliError(f"{key} is a number (like {default}), not {shown}", code=2) from None
        if not math.isfinite(value):
            raise CliError(f"{key} must be a finite number, not {shown}", code=2)
    else:
        return raw
    low, high = schema.LIMITS.get((section, name), (0, float("inf")))
    if not low <= value <= high:
        bounds = f"at least {low:g}" if high == float("inf") else f"from {low:g} to {high:g}"
        raise CliError(f"{key} is {bounds}, not {shown}", code=2)
    return value


def format_value(value: object) -> str:
    """A value as TOML writes it: true, 3, 0.7, "text"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json

        return json.dumps(value)
    return repr(value) if isinstance(value, float) else str(value)


def global_path() -> str:
    return os.path.join(paths.config_dir(), config.GLOBAL_NAME)


def project_path(root: str) -> str:
    return os.path.join(root, config.PROJECT_NAME)


def writable_project_path(root: str) -> str:
    """The project's settings file, where `config set --project` may write it; a CliError otherwise.

    The project's `.claude` is judged by learning.store.locate, the check the learned-rule
    store passes before each write (a repository can commit `.claude` as a symlink to
    anywhere: one resolving inside the project is followed, any other refused); the
    settings file itself must not be a symlink either.
    """
    from metacog.learning import store

    path = project_path(root)
    # locate also refuses the store's own file when it is a symlink; only its verdict on
    # `.claude` (or no project at all) concerns the settings file.
    reason = store.locate(root).reason
    if reason in store.FOLDER_REASONS:
        folder = os.path.dirname(path)
        raise CliError(
            f"not writing {path}: {store.explain(reason)}; make {folder} a folder inside the project "
            "(not a file, nor a symlink out of it), or set it globally (without --project)"
        )
    if os.path.islink(path):
        raise CliError(
            f"{path} is a symlink, not written through; replace it with a file "
            f"(rm {path}, then set again), or set it globally (without --project)"
        )
    return path


def layers(root: str) -> list[dict]:
    """The two files, lowest first: scope, path, exists, values (or None) and error."""
    out = []
    for scope, path in (("global", global_path()), ("project", project_path(root))):
        layer = {
            "scope": scope,
            "path": path,
            "exists": os.path.exists(path),
            "values": None,
            "error": "",
        }
        if layer["exists"]:
            try:
                layer["values"] = config.parse_toml(path)
            except ValueError as exc:
                layer["error"] = f"not valid TOML: {one_line(exc, 200)}"
            except OSError as exc:
                layer["error"] = f"unreadable: {exc.strerror or exc}"
        out.append(layer)
    return out


def effective(root: str) -> dict:
    """What `config show` reports: each setting's value and source, the files, what was ignored.

    Mirrors metacog.config.load (defaults, then global, then project; unreadable files
    skipped) without its cache, so it always tells what the files say now.
    """
    settings = {
        key: {"value": schema.DEFAULTS[s][k], "source": "default", "file": ""}
        for key in all_keys()
        for s, k in [key.split(".", 1)]
    }
    ignored = []
    files = layers(root)
    for layer in files:
        for section, values in (layer["values"] or {}).items():
            if not isinstance(values, dict):
                ignored.append(_ignored(layer, section, "not a [section] table"))
                continue
            for name, value in values.items():
                key = f"{section}.{name}"
                if key not in settings:
                    near = closest(key, list(settings))
                    why = "unknown setting" + (f" (closest: {', '.join(near)})" if near else "")
                    ignored.append(_ignored(layer, key, why))
                elif not accepts(section, name, value):
                    default = schema.DEFAULTS[section][name]
                    ignored.append(
                        _ignored(
                            layer,
                            key,
                            f"{format_value(value)} is not a {_kind(default)}; the hook ignores it",
                        )
                    )
                else:
                    settings[key] = {
                        "value": value,
                        "source": layer["scope"],
                        "file": layer["path"],
                    }
    return {
        "project": root,
        "settings": settings,
        "ignored": ignored,
        "files": [{k: layer[k] for k in ("scope", "path", "exists", "error")} for layer in files],
    }


def _ignored(layer: dict, key: str, why: str) -> dict:
    return {"file": layer["path"], "key": key, "why": why}


def _kind(default: object) -> str:
    if isinstance(default, bool):
        return "boolean"
    return "number" if isinstance(default, (int, float)) else type(default).__name__


def render_show(report: dict) -> str:
    lines = [f"Settings for {report['project']} (project file over global file over defaults)"]
    width = max(len(f"{k} = {format_value(v['value'])}") for k, v in report["settings"].items())
    for key, entry in report["settings"].items():
        shown = f"{key} = {format_value(entry['value'])}"
        source = entry["source"] + (f"  {entry['file']}" if entry["file"] else "")
        lines.append(f"  {shown:<{width}}  {source}")
    lines.append("Files")
    for entry in report["files"]:
        status = entry["error"] or ("" if entry["exists"] else "(absent)")
        lines.append(f"  {entry['scope']:<7}  {entry['path']}  {status}".rstrip())
    if report["ignored"]:
        lines.append("Ignored")
        lines.extend(
            f"  {item['key']} in {item['file']}: {item['why']}" for item in report["ignored"]
        )
    return "\n".join(lines)


def broken_file_error(report: dict) -> CliError | None:
    for entry in report["files"]:
        if entry["error"]:
            return CliError(
                f"{entry['path']} is {entry['error']}; the hook skips the whole file "
                "until it is fixed or deleted"
            )
    return None


def get(key: str, root: str) -> str:
    split_key(key)
    report = effective(root)
    error = broken_file_error(report)
    if error is not None:
        raise error
    return format_value(report["settings"][key]["value"])


def set_value(key: str, raw: str, root: str, project: bool) -> str:
    """Write one setting into the global (or project) file atomically; say what was done."""
    section, name = split_key(key)
    value = parse_value(key, raw)
    path = writable_project_path(root) if project else global_path()
    doc: dict = {}
    had_comments = False
    if os.path.exists(path):
        try:
            doc = config.parse_toml(path)
            had_comments = any(
                line.lstrip().startswith(b"#")
                for line in read_capped(path, config.CONFIG_CAP).splitlines()
            )
        except ValueError as exc:
            raise CliError(
                f"{path} is not valid TOML ({one_line(exc, 160)}); fix or delete it, "
                "then set the value again"
            ) from None
        except OSError as exc:
            raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    table = doc.setdefault(section, {})
    if not isinstance(table, dict):
        raise CliError(
            f"{path}: {section!r} is not a [{section}] table; fix or delete it, then set again"
        )
    table[name] = value
    import tomli_w  # only `config set` writes TOML

    try:
        atomic_write(path, tomli_w.dumps(doc))
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    done = f"Set {key} = {format_value(value)} in {path}"
    if had_comments:
        done += " (its comments were not kept)"
    if not project:
        shadow = effective(root)["settings"][key]
        if shadow["source"] == "project":
            done += (
                f"; note: this project's {shadow['file']} sets it to "
                f"{format_value(shadow['value'])}, which wins here"
            )
    return done
