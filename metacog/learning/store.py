"""Append-only JSONL stores of evidence: a global one in the data dir, and one per project.

One line per piece of evidence, each with a schema version:
  {"v":1,"type":"detection"|"suppression","rule":ID,"at":TS,"session":HASH}
  {"v":1,"type":"lesson","rule":ID,"at":TS,"session":HASH,"sig":HASH}
  {"v":1,"type":"retraction","rule":ID,"at":TS,"session":HASH[,"sig":HASH]}
  {"v":1,"type":"aggregate","rule":ID,"detections":N,"suppressions":N,"first":TS,"last":TS}
`at` is when the session happened; `session` and `sig` are short hashes (a session id,
a normalized error signature), so a store holds no path, no error text, no prompt.

A session may be evaluated again (it went quiet, was evaluated, then went on): the
store stays append-only, and for each (rule, session, sig) the last line wins, so a
later detection replaces an earlier suppression, and a retraction withdraws what a
later evaluation no longer finds. Compaction keeps only the winners.

A project's store is committed and shared, so it is read as untrusted input: a line
that is not JSON, or whose fields have the wrong types, is skipped and counted
(`corrupt`); a well-formed record this version does not know (a newer schema, a
rule added later) is skipped, counted (`unknown`) and kept. Every write runs under
one lock per store (kept in the data dir, not in the project), so a compaction
never loses a concurrent append; rewrites never drop a line they cannot read
without first copying the original into the data dir's quarantine folder.
"""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Iterator

from metacog import paths
from metacog.fsutil import (
    Unreadable,
    append_line,
    atomic_write,
    dumps,
    ensure_dir,
    locked,
    open_regular,
    parse_json,
    read_fd,
    write_all,
)
from metacog.learning.detectors import RULES

SCHEMA = 1
GLOBAL_NAME = "learnings.jsonl"
PROJECT_DIR = ".claude"
PROJECT_NAME = "metacog-learnings.jsonl"
EVIDENCE = ("detection", "suppression", "lesson")
RETRACTION = "retraction"
AGGREGATE = "aggregate"
QUARANTINE_KEEP = 20  # copies of broken stores kept for `metacog doctor`; the oldest go first
# A healthy store stays under compact_bytes (at most half of this, config.LIMITS); past this
# only the beginning is read and it is never rewritten: a 73 MB committed store once cost
# 3.8 s at every SessionStart and SessionEnd.
READ_CAP = 4 << 20
LINE_CAP = 1024  # a valid record is under 200 bytes
COUNT_CAP = 10**7
HASH_CAP = 32
UNKNOWN_KEPT = 2000  # a compaction keeps this many records it cannot interpret
DAY = 86400.0
FUTURE_SLACK = 2 * DAY  # clocks differ between teammates; evidence from further ahead is forged
OK, CORRUPT, UNKNOWN = 0, 1, 2
_ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."


def global_path() -> str:
    return os.path.join(paths.data_dir(), GLOBAL_NAME)


# Why a project's store is not used: a code to branch on, the text for people beside it.
# The first four concern the project's `.claude` folder (the settings file shares it).
NO_PROJECT = "no-project"
FOLDER_UNREADABLE = "folder-unreadable"
FOLDER_OUTSIDE = "folder-outside"
FOLDER_NOT_DIR = "folder-not-dir"
STORE_SYMLINK = "store-symlink"
NOT_REGULAR = "not-regular"
OPEN_FAILED = "open-failed"
FOLDER_REASONS = frozenset({NO_PROJECT, FOLDER_UNREADABLE, FOLDER_OUTSIDE, FOLDER_NOT_DIR})
_REASON_TEXT = {
    NO_PROJECT: "no project",
    FOLDER_UNREADABLE: f"{PROJECT_DIR} cannot be examined",
    FOLDER_OUTSIDE: f"{PROJECT_DIR} is a symlink out of the project",
    FOLDER_NOT_DIR: f"{PROJECT_DIR} is not a directory",
    STORE_SYMLINK: "the store is a symlink",
    NOT_REGULAR: "not a regular file",
    OPEN_FAILED: "cannot be opened",
}


def explain(reason: str) -> str:
    """The words for a reason code ('' for none)."""
    return _REASON_TEXT.get(reason, reason)


class Located:
    """Where a project's store is: `path`, or '' and the `reason` (a code above) it is not used.

    A plain slotted class: `typing.NamedTuple` would import `typing` on the hook's path."""

    __slots__ = ("path", "reason")

    def __init__(self, path: str, reason: str = "") -> None:
        self.path, self.reason = path, reason

    def __iter__(self) -> Iterator[str]:  # unpacks as (path, reason)
        return iter((self.path, self.reason))

    def __eq__(self, other: object) -> bool:
        return (
            tuple(self) == tuple(other) if isinstance(other, (Located, tuple)) else NotImplemented
        )

    __hash__ = None  # mutable record: not a dict key

    def __repr__(self) -> str:
        return f"Located({self.path!r}, {self.reason!r})"


def project_path(root: str) -> str:
    """`<root>/.claude/metacog-learnings.jsonl`, or '' where writing it would leave the project."""
    return locate(root).path


def locate(root: str) -> Located:
    """Where the project's store is, or why it is refused.

    A `.claude` that is a symlink is followed only if it resolves inside the project
    (a repository can commit a symlink to anywhere); a store that is itself a symlink
    is refused, and every open passes O_NOFOLLOW besides.
    """
    if not root:
        return Located("", NO_PROJECT)
    folder = os.path.join(root, PROJECT_DIR)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return Located(os.path.join(folder, PROJECT_NAME))
    except OSError:
        return Located("", FOLDER_UNREADABLE)
    if stat.S_ISLNK(mode):
        real_root = os.path.realpath(root)
        folder = os.path.realpath(folder)
        if not folder.startswith(real_root.rstrip(os.sep) + os.sep) or not os.path.isdir(folder):
            return Located("", FOLDER_OUTSIDE)
    elif not stat.S_ISDIR(mode):
        return Located("", FOLDER_NOT_DIR)
    path = os.path.join(folder, PROJECT_NAME)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return Located("", STORE_SYMLINK)
    except OSError:
        pass
    return Located(path)


def stamp(path: str) -> list[int] | None:
    """What changes whenever the file does (appends change the size, rewrites the inode)."""
    if not path:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def short_hash(text: str) -> str:
    import hashlib  # evaluation only, never on the prompt path

    return hashlib.blake2s(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def _when(value: object, now: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 0 < value <= now + FUTURE_SLACK:  # also rejects NaN
        return None
    return float(value)


def is_rule_id(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 64 and not value.strip(_ID_CHARS)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= COUNT_CAP


def _token(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= HASH_CAP
        and value.isascii()
        and value.isalnum()
    )


def validate(rec: object, now: float) -> int:
    """OK, CORRUPT (wrong shape or types) or UNKNOWN (well-formed, not for this version)."""
    if not isinstance(rec, dict):
        return CORRUPT
    version, kind, rule = rec.get("v"), rec.get("type"), rec.get("rule")
    if not isinstance(version, int) or isinstance(version, bool) or not isinstance(kind, str):
        return CORRUPT
    if not is_rule_id(rule):
        return CORRUPT  # a rule id is a short token; anything else was never written by metacog
    if version != SCHEMA or rule not in RULES or kind not in (*EVIDENCE, RETRACTION, AGGREGATE):
        return UNKNOWN
    if kind == AGGREGATE:
        first, last = _when(rec.get("first"), now), _when(rec.get("last"), now)
        if first is None or last is None or first > last:
            return CORRUPT
        if not _count(rec.get("detections")) or not _count(rec.get("suppressions")):
            return CORRUPT
        return OK
    if _when(rec.get("at"), now) is None:
        return CORRUPT
    session, sig = rec.get("session"), rec.get("sig")
    if (session is not None and not _token(session)) or (sig is not None and not _token(sig)):
        return CORRUPT
    if kind == "lesson" and sig is None:
        return CORRUPT
    return OK


class Contents:
    """A store as read: its valid records, what was skipped, and (for rewrites) every line."""

    __slots__ = (
        "corrupt",
        "exists",
        "lines",
        "partial",
        "path",
        "raw",
        "records",
        "refused",
        "size",
        "truncated",
        "unknown",
    )

    def __init__(self, path: str) -> None:
        self.path = path
        self.exists = False
        self.size = 0
        self.records: list[dict] = []
        self.corrupt = 0
        self.unknown = 0
        self.partial = False  # a last line without its newline: an append in flight, or a crash
        self.truncated = False  # larger than READ_CAP: only the beginning was read
        self.refused = ""  # why the file was not read: a reason code (explain() has the words)
        self.lines: list[tuple[str, int, object]] = []
        self.raw = b""


def _read_bytes(path: str, contents: Contents) -> bytes:
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return b""
    except (OSError, Unreadable) as exc:
        contents.exists = os.path.lexists(path)
        contents.refused = (
            STORE_SYMLINK
            if os.path.islink(path)
            else NOT_REGULAR
            if isinstance(exc, Unreadable)
            else OPEN_FAILED
        )
        return b""
    try:
        contents.exists = True
        contents.size = os.fstat(fd).st_size
        data = read_fd(fd, READ_CAP + 1)
    finally:
        os.close(fd)
    if len(data) > READ_CAP:
        contents.truncated = True
        data = data[: data.rfind(b"\n", 0, READ_CAP) + 1]
    return data


def read(path: str, now: float, keep_lines: bool = False) -> Contents:
    """Parse a store; never raises for what is in the file."""
    contents = Contents(path)
    if not path:
        return contents
    data = _read_bytes(path, contents)
    if not data:
        return contents
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    tail = lines.pop()  # '' after a final newline; otherwise a partial line
    if tail.strip():
        contents.partial = True
    loads, records, kept = parse_json, contents.records, contents.lines
    corrupt = unknown = 0
    for line in lines:
        if not line.strip():
            continue
        if len(line) > LINE_CAP:
            status, rec = CORRUPT, None
        else:
            try:
                rec = loads(line)
            except ValueError:
                rec = None
            status = validate(rec, now)
        if status == OK:
            records.append(rec)
        elif status == CORRUPT:
            corrupt += 1
        else:
            unknown += 1
        if keep_lines:
            kept.append((line, status, rec))
    contents.corrupt, contents.unknown = corrupt, unknown
    if keep_lines:
        contents.raw = data
        if contents.partial:
            kept.append((tail, CORRUPT, None))
    return contents


def _lock_for(path: str) -> str:
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return os.path.join(paths.data_dir(), "locks", f"store-{zlib.crc32(real.encode()):08x}")


def _ends_with_newline(path: str) -> bool:
    try:
        fd = open_regular(path)
    except (OSError, ValueError):
        return True
    try:
        size = os.fstat(fd).st_size
        return size == 0 or os.pread(fd, 1, size - 1) == b"\n"
    finally:
        os.close(fd)


def append(
    path: str,
    records: list[dict],
    now: float,
    compact_bytes: int,
    keep_days: float,
    protect: frozenset[str] = frozenset(),
) -> None:
    """Append one line per record under the store's lock; compact if it grew past the cap.

    `protect`: session hashes whose evidence a compaction must keep as it is (their
    evaluation was cut short: folded into an aggregate, it would be counted again).
    """
    if not path or not records:
        return
    with locked(_lock_for(path), timeout=5.0):
        try:
            size = os.lstat(path).st_size
        except OSError:
            size = 0
        if size > READ_CAP:
            # Past the read cap nothing appended is ever read again: refused like a store that
            # cannot be written (the caller logs it; the promotion index still learns).
            raise Unreadable(f"{path}: larger than {READ_CAP} bytes, not appended to")
        if not _ends_with_newline(path):
            append_line(path, "")  # a crashed writer's fragment must not swallow our first line
        for rec in records:
            append_line(path, dumps(rec))
        try:
            size = os.lstat(path).st_size
        except OSError:
            return
        if compact_bytes < size <= READ_CAP:  # larger, it cannot be rebuilt: not read for nothing
            _compact(path, now, compact_bytes, keep_days, protect)


class Tally:
    """One rule's evidence in one place: how many detections and suppressions, first and last
    dated. The promotion index stores it as the list [detections, suppressions, first, last]."""

    __slots__ = ("detections", "first", "last", "suppressions")

    def __init__(self, detections: int, suppressions: int, first: float, last: float) -> None:
        self.detections = detections
        self.suppressions = suppressions
        self.first = first
        self.last = last

    @classmethod
    def of(cls, rec: dict) -> Tally:
        """What one validated record (evidence or aggregate) counts."""
        if rec["type"] == AGGREGATE:
            return cls(rec["detections"], rec["suppressions"], rec["first"], rec["last"])
        held = rec["type"] == "suppression"
        return cls(int(not held), int(held), rec["at"], rec["at"])

    @classmethod
    def from_list(cls, value: object) -> Tally | None:
        """The index's list form read back; None for anything else (the index is a file)."""
        if (
            isinstance(value, list)
            and len(value) == 4
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value)
        ):
            return cls(*value)
        return None

    def as_list(self) -> list:
        return [self.detections, self.suppressions, self.first, self.last]

    def add(self, other: Tally) -> None:
        self.detections += other.detections
        self.suppressions += other.suppressions
        self.first = min(self.first, other.first)
        self.last = max(self.last, other.last)

    def aggregate(self, rule: str) -> dict:
        """The store's record that stands for this tally."""
        return {
            "v": SCHEMA,
            "type": AGGREGATE,
            "rule": rule,
            "detections": min(int(self.detections), COUNT_CAP),
            "suppressions": min(int(self.suppressions), COUNT_CAP),
            "first": self.first,
            "last": self.last,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tally) and self.as_list() == other.as_list()

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Tally({self.detections}, {self.suppressions}, {self.first}, {self.last})"


def key(rec: dict) -> tuple | None:
    """What a later evaluation of the same session replaces: None for what nothing replaces."""
    session = rec.get("session")
    if session is None or rec["type"] == AGGREGATE:
        return None
    return rec["rule"], session, rec.get("sig")


def fold(totals: dict[str, Tally], rec: dict) -> None:
    """Add one record (evidence or aggregate) to its rule's Tally in `totals`."""
    tally = totals.get(rec["rule"])
    if tally is None:
        totals[rec["rule"]] = Tally.of(rec)
    else:
        tally.add(Tally.of(rec))


def quarantine(path: str, data: bytes, now: float) -> str:
    """Copy a store's bytes into the data dir before a rewrite drops part of it."""
    folder = ensure_dir(os.path.join(paths.data_dir(), "quarantine"))
    base = f"{os.path.basename(path)}-{zlib.crc32(path.encode()):08x}-{int(now)}"
    for n in range(100):
        target = os.path.join(folder, f"{base}-{n}.jsonl" if n else f"{base}.jsonl")
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        try:
            write_all(fd, data)  # the bytes as they were, undecoded
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(
                target
            )  # a partial copy is no copy: the rewrite that needed it does not happen
            raise
        os.close(fd)
        _cap_quarantine(folder)
        return target
    raise OSError(f"quarantine full for {base}")


def _cap_quarantine(folder: str) -> None:
    """Keep the QUARANTINE_KEEP newest copies: each may be as large as a store. Best-effort."""
    try:
        with os.scandir(folder) as entries:
            copies = sorted(
                (e.stat(follow_symlinks=False).st_mtime_ns, e.name, e.path)
                for e in entries
                if e.is_file(follow_symlinks=False)
            )
        for _, _, path in copies[:-QUARANTINE_KEEP]:
            os.unlink(path)
    except OSError:
        pass


def _compact(
    path: str,
    now: float,
    compact_bytes: int,
    keep_days: float,
    protect: frozenset[str] = frozenset(),
) -> bool:
    """Merge old evidence into one aggregate per rule. The caller holds the store's lock."""
    contents = read(path, now, keep_lines=True)
    if contents.refused or contents.truncated or not contents.records:
        return False  # nothing safe to rebuild from: leave the file as it is
    cutoff = now - keep_days * DAY
    totals: dict[str, Tally] = {}
    recent: list[tuple[str, dict]] = []
    kept: list[str] = []  # evidence of protected sessions: kept as it is, never folded
    unknown: list[str] = []
    winner = {key(rec): i for i, (_, status, rec) in enumerate(contents.lines) if status == OK}
    for i, (line, status, rec) in enumerate(contents.lines):
        if status == OK:
            k = key(rec)
            if k is not None and (winner[k] != i or rec["type"] == RETRACTION):
                continue  # replaced by a later evaluation; a retraction goes with what it withdrew
            if rec.get("session") in protect:
                kept.append(line)
            elif rec["type"] == AGGREGATE or rec["at"] < cutoff:
                fold(totals, rec)
            else:
                recent.append((line, rec))
        elif status == UNKNOWN:
            unknown.append(line)
    dropped = contents.corrupt > 0 or contents.partial or len(unknown) > UNKNOWN_KEPT
    unknown = unknown[-UNKNOWN_KEPT:]
    body = [line for line, _ in recent]
    if sum(len(line) + 1 for line in body) > compact_bytes // 2:
        for _, rec in recent:  # recent evidence alone is too much: fold it all
            fold(totals, rec)
        body = []
    head = [dumps(tally.aggregate(rule)) for rule, tally in totals.items()]
    if dropped:
        quarantine(path, contents.raw, now)
    atomic_write(path, "".join(line + "\n" for line in head + body + kept + unknown), sync_dir=True)
    return True


def remove_rule(path: str, rule: str, now: float) -> int:
    """Drop every record of `rule`; all other lines, unreadable ones included, stay as they are."""
    if not path:
        return 0
    with locked(_lock_for(path), timeout=5.0):
        contents = read(path, now, keep_lines=True)
        if contents.refused or contents.truncated:
            return 0
        kept, removed = [], 0
        for line, status, rec in contents.lines:
            if status != CORRUPT and isinstance(rec, dict) and rec.get("rule") == rule:
                removed += 1
            else:
                kept.append(line)
        if removed:
            atomic_write(path, "".join(line + "\n" for line in kept), sync_dir=True)
    return removed


def rules_in(path: str, now: float) -> set[str]:
    """Rule ids (valid or not for this version) a store mentions: for `forget`'s suggestions."""
    contents = read(path, now, keep_lines=True)
    return {
        rec["rule"]
        for _, status, rec in contents.lines
        if status != CORRUPT and isinstance(rec, dict) and isinstance(rec.get("rule"), str)
    }


def health(path: str, now: float) -> dict:
    """A store's state for `doctor` and `status`: `reason` is a code, `refused` its words."""
    contents = read(path, now)
    return {
        "path": path,
        "exists": contents.exists,
        "bytes": contents.size,
        "records": len(contents.records),
        "corrupt": contents.corrupt,
        "unknown": contents.unknown,
        "partial": contents.partial,
        "truncated": contents.truncated,
        "reason": contents.refused,
        "refused": explain(contents.refused),
    }
