"""The index itself: per directory, its source files' names, stamps and import keys; built
from a listing, refreshed by stat-ing, asked with one substring search, saved as JSON
lines plus a journal of the directories that changed.

Each later edit refreshes it: one stat per known directory (a changed one is listed
again: new, removed and replaced files), the files of changed directories and the file
just edited re-parsed when their stamp changed, and the other files stat-ed round-robin
within a share of the budget (all of them per edit on a machine that can: 20,000 files
take 30-60 ms here). It stores paths, stamps and import keys, never content.
"""

from __future__ import annotations

import json
import os
import stat as stat_mod
import time
import zlib
from bisect import bisect_right

from metacog.fsutil import atomic_write, locked, read_capped, read_fd
from metacog.imports import listing
from metacog.imports.keys import kind, parse
from metacog.imports.search import fits, needles

SCHEMA = 1
FILE_CAP = 1 << 20  # bytes; larger files are indexed as targets but never parsed
RACY_NS = 2_000_000_000  # a stamp this recent may hide a same-tick rewrite: look again next time
KEEP_S = 30 * 24 * 3600  # index files of projects untouched this long are removed
SAVE_LOCK_S = 0.02  # another process is saving: ours is not needed, the next refresh redoes it
MAX_PATHSPECS = 200
JOURNAL_MIN = 256 * 1024  # bytes; the journal is merged once past this and past 1/8 of the index
INDEX_CAP = 64 << 20  # bytes; 50,000 files (config's max_files) take about 13 MB
STATES = ("new", "partial", "ok", "too_big")


def _dumps(value: object) -> str:
    """Compact, ASCII: keys with non-ASCII characters are escaped alike in the stored text
    and in the needles searched for."""
    return json.dumps(value, separators=(",", ":"))


class _Dir:
    """One directory: its stamp and, aligned, its source files' names, stamps and key lines.

    Key lines are ' k1 k2 ' (or ''), joined by '|' into one blob per directory. While a
    directory is as the index file has it (`slot` >= 0) its blob is read in place from
    the file's text; a change detaches it and keeps the blob here, as a list of lines
    while it is being changed. Stamps are st_mtime_ns + st_size (a change of either
    changes the sum; 0 means look again).
    """

    __slots__ = ("_blob", "_lines", "mtime", "names", "path", "slot", "stamps")

    def __init__(
        self,
        path: str,
        mtime: int,
        names: list[str],
        stamps: list[int],
        blob: str = "",
        slot: int = -1,
    ) -> None:
        self.path = path
        self.mtime = mtime
        self.names = names
        self.stamps = stamps
        self.slot = slot
        self._blob: str | None = blob if slot < 0 else None
        self._lines: list[str] | None = None

    def blob(self, index: Index) -> str:
        if self._blob is None:
            self._blob = (
                "|".join(self._lines) if self._lines is not None else index.stored_blob(self.slot)
            )
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
    return os.path.join(
        state_dir, "imports", f"{zlib.crc32(root.encode('utf-8', 'surrogateescape')):08x}.json"
    )


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
        return json.loads(self.data[self.starts[slot] : self.starts[slot + 1] - 1])

    @classmethod
    def load(cls, root: str, path: str) -> Index:
        """The stored index, or an empty one (built anew) for anything that is not one."""
        index = cls(root, path)
        index.stamps = file_stamps(path)
        try:
            return index._read()
        except Exception:  # noqa: BLE001 - whatever a damaged file makes the parser raise: rebuilt
            return cls(root, path)

    def _read(self) -> Index:
        index, root = self, self.root
        data = read_bounded(self.path)
        if not data:
            return index
        first = data.find(b"\n")
        if first == -1:
            raise ValueError("no header")
        second = data.find(b"\n", first + 1)
        head = json.loads(data[:first])
        if not isinstance(head, dict) or head.get("v") != SCHEMA or head.get("root") != root:
            return index  # another schema, or a crc32 collision: rebuilt
        records = json.loads(data[first + 1 : second if second != -1 else len(data)])
        index.data, index.starts = data, _line_starts(data, second + 1, len(records))
        for slot, (folder, mtime, names, stamps) in enumerate(records):
            index._add(folder, mtime, names, stamps, slot=slot)
        index.state, index.git, index.pending = head["state"], head["git"], list(head["pending"])
        index.made, index.max_files, index.cursor = head["made"], head["max_files"], head["cursor"]
        if not (
            index.state in STATES
            and isinstance(index.git, bool)
            and _is_int(index.max_files, index.cursor)
            and isinstance(index.made, (int, float))
            and all(isinstance(p, str) for p in index.pending)
        ):
            raise ValueError("a header of the wrong types")
        journal = read_bounded(index.journal)
        for line in journal.decode("utf-8", "replace").split("\n"):
            index._apply(line)
        index.sizes = (len(data), len(journal))
        return index

    def _add(
        self, folder: str, mtime: int, names: str, stamps: list[int], blob: str = "", slot: int = -1
    ) -> None:
        split = names.split("/") if names else []
        if not (
            isinstance(folder, str)
            and _is_int(mtime, *stamps)
            and len(stamps) == len(split)
            and (slot >= 0 or blob.count("|") == max(len(split) - 1, 0))
        ):
            raise ValueError("misaligned record")
        self.dirs[folder] = _Dir(folder, mtime, split, stamps, blob, slot)

    def _apply(self, line: str) -> None:
        try:
            record = json.loads(line) if line else None
        except Exception:  # noqa: BLE001 - a line torn by a crash, or worse: skipped
            return  # the sweep finds what it described stale
        if isinstance(record, dict):
            cursor, state = record.get("cursor", self.cursor), record.get("state", self.state)
            done = record.get("done", 0)
            if _is_int(cursor, done) and state in STATES:
                self.cursor, self.state = cursor, state
                del self.pending[:done]
        elif isinstance(record, list) and len(record) == 1 and isinstance(record[0], str):
            self.dirs.pop(record[0], None)
        elif isinstance(record, list) and len(record) == 5 and isinstance(record[4], str):
            self._add(*record)

    def dumps(self) -> str:
        head = _dumps(
            {
                "v": SCHEMA,
                "root": self.root,
                "state": self.state,
                "git": self.git,
                "made": self.made,
                "max_files": self.max_files,
                "cursor": self.cursor,
                "pending": self.pending,
            }
        )
        dirs = list(self.dirs.values())
        out = [head, _dumps([d.record() for d in dirs])]
        for d in dirs:
            if d.slot >= 0:
                out.append(
                    self.data[self.starts[d.slot] : self.starts[d.slot + 1] - 1].decode(
                        "ascii", "replace"
                    )
                )
            else:
                out.append(_dumps(d.blob(self)))
        return "\n".join(out)

    def save(self, held: bool = False) -> bool:
        """Write what changed; skipped (False) while another process holds the lock."""
        try:
            if (
                held
            ):  # the caller holds the lock (flock is per open file: taking it again would wait)
                self._write()
            else:
                with locked(self.path, timeout=SAVE_LOCK_S):
                    self._write()
        except (OSError, TimeoutError):
            return False
        self.changed.clear()
        self.rewrite = False
        self.done = 0
        self.stamps = file_stamps(
            self.path
        )  # as this process left it: kept in memory (`importers`)
        return True

    def _write(self) -> None:
        entries = []
        if not self.rewrite:
            for path in sorted(self.changed):
                d = self.dirs.get(path)
                entries.append(_dumps([path] if d is None else [*d.record(), d.blob(self)]))
            entries.append(_dumps({"cursor": self.cursor, "state": self.state, "done": self.done}))
        grown = self.sizes[1] + sum(len(e) + 1 for e in entries)
        if self.rewrite or grown > max(JOURNAL_MIN, self.sizes[0] // 8):
            text = self.dumps()
            atomic_write(self.path, text)
            try:
                os.unlink(self.journal)
            except FileNotFoundError:
                pass
            self._attach(text.encode("ascii"))
            return
        fd = os.open(
            self.journal,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK,
            0o600,
        )
        try:
            if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
                raise OSError("the journal is not a regular file")
            _append_whole(fd, ("\n".join(entries) + "\n").encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)
        self.sizes = (self.sizes[0], grown)

    def _attach(self, data: bytes) -> None:
        """Read every directory's blob in place from `data`, the file just written, as a
        load would: the next edit in this process searches it all at once."""
        dirs = list(self.dirs.values())
        second = data.find(b"\n", data.find(b"\n") + 1)
        self.data, self.starts = data, _line_starts(data, second + 1, len(dirs))
        for slot, d in enumerate(dirs):
            d.slot, d._blob, d._lines = slot, None, None
        self.sizes = (len(data), 0)

    # building

    def build(self, deadline: float, max_files: int, now: float) -> None:
        """List the repository and parse what fits before `deadline` (the rest stays pending)."""
        files, folders = None, None
        if os.path.exists(os.path.join(self.root, ".git")):
            files = listing.git(
                self.root,
                ["ls-files", "-co", "--exclude-standard", "-z"],
                deadline - time.perf_counter(),
            )
        if files is None:
            # A listing cut short by the deadline (a slow git, a slow disk) says nothing
            # about the size: nothing is stored and the next edit tries again. Only a
            # count over the limits below turns the index off for RETRY_S.
            walked = (
                None
                if time.perf_counter() > deadline
                else listing.walk(self.root, [""], deadline, max_files * 4)
            )
            if walked is None:
                return
            files, folders = walked
        self.made, self.max_files, self.dirs, self.pending = now, max_files, {}, []
        self.rewrite = True
        self.git = folders is None
        if not self.git and len(files) > max_files * 4:  # the walk stopped counting there
            self.state = "too_big"
            return
        files = [rel for rel in dict.fromkeys(files) if listing.usable(rel)]
        sources = [rel for rel in files if kind(rel)]
        if len(sources) > max_files:
            self.state = "too_big"
            return
        wanted: set[str] = set(folders or ())
        wanted.add("")
        for rel in files:
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
                keys = (
                    parse(data.decode("utf-8", "replace"), rel) if 0 < len(data) <= FILE_CAP else []
                )
                d.lines(self).append(" " + " ".join(keys) + " " if keys else "")
                d.names.append(name)
                d.stamps.append(_stamp(st, now_ns))
                self.changed.add(d.path)
            return
        self._update(d, name, st, data, rel, now_ns)

    def _update(
        self, d: _Dir, name: str, st: os.stat_result | None, data: bytes, rel: str, now_ns: int
    ) -> None:
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
                st = os.stat(
                    full
                )  # before the listing: an entry added during it changes the stamp again
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
                if not listing.usable(sub):
                    continue
                if is_dir:
                    if sub not in self.dirs and not (
                        name.startswith(".") or name in listing.SKIP_DIRS
                    ):
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
            listed = listing.git(
                self.root,
                ["ls-files", "-co", "--exclude-standard", "-z", "--", *specs],
                deadline - time.perf_counter(),
            )
            return None if listed is None else [rel for rel in listed if listing.usable(rel)]
        tops = [f for f in folders if not listing.skipped(self.root, f, f.rpartition("/")[2])]
        walked = listing.walk(self.root, tops, deadline, self.max_files)
        return None if walked is None or len(walked[0]) > self.max_files else files + walked[0]

    # asking

    def importers(self, names: list[str], exclude: str) -> list[str]:
        """Files whose import keys name one of `names`, sorted, without `exclude`."""
        wanted = needles(names)
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
            for needle, prefixes, member in wanted:
                i = data.find(needle, starts[0])
                while i != -1:
                    if fits(data, i, len(needle), prefixes, member):
                        slot = bisect_right(starts, i) - 1
                        d = slots[slot] if slot < len(slots) else None
                        if d is not None:
                            name = d.names[data.count(b"|", starts[slot], i)]
                            found.add(d.path + "/" + name if d.path else name)
                    i = data.find(needle, i + 1)
        for d in detached:
            blob = _dumps(d.blob(self)).encode()
            for needle, prefixes, member in wanted:
                i = blob.find(needle)
                while i != -1:
                    if fits(blob, i, len(needle), prefixes, member):
                        name = d.names[blob.count(b"|", 0, i)]
                        found.add(d.path + "/" + name if d.path else name)
                    i = blob.find(needle, i + 1)
        found.discard(exclude)
        return sorted(found)


def read_bounded(path: str) -> bytes:
    """The bytes of a regular file of at most INDEX_CAP bytes, b'' where there is none;
    ValueError for anything else in its place (a FIFO, a symlink, a folder, a huge file),
    which is removed: the index is rebuilt and written there."""
    cap = INDEX_CAP
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return b""
    if stat_mod.S_ISREG(info.st_mode) and info.st_size <= cap:
        data = read_capped(
            path, cap + 1
        )  # non-blocking, regular files only: a swap since the stat reads b''
        if len(data) <= cap:
            return data
    discard(path)
    raise ValueError(f"not an index file: {path}")


def discard(path: str) -> None:
    try:
        if stat_mod.S_ISDIR(os.lstat(path).st_mode):
            import shutil

            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        pass


def _append_whole(fd: int, data: bytes) -> None:
    """All of `data` at the end of the file, or none of it: a full disk must not leave a
    torn line that the next append would complete into garbage."""
    start = os.fstat(fd).st_size
    done = 0
    try:
        while done < len(data):
            done += os.write(fd, data[done:])
    except OSError:
        os.ftruncate(fd, start)
        raise


def _is_int(*values: object) -> bool:
    return all(type(v) is int for v in values)


def _line_starts(data: bytes, at: int, count: int) -> list[int]:
    """The offsets of `count` lines from `at` on, and of where the next would start."""
    starts = []
    for _ in range(count):
        starts.append(at)
        at = data.find(b"\n", at) + 1
        if at == 0:
            at = len(data) + 1
    starts.append(at)
    return starts


def file_stamps(path: str) -> tuple:
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


def collect_garbage(folder: str, now: float) -> None:
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
