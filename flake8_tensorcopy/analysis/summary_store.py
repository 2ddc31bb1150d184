"""The summary cache: what project modules' summaries hold (summaries.py, project.py), kept on
disk by content hash so that a process starting afresh (the flake8 plugin on every save, the
language server after a restart, the next `tensorcopy check`) does not parse and walk the
project's modules again.

One file per module under `<cache dir>/<version>/summaries-<key>/`, named by a hash of the
module's path (`key`: the front end's, of the tool's version and the options summaries depend
on), and beside it one of the module's text facts (`<hash>.text.marshal`: through.py's, which
a file importing the module asks before any summary, from the module's text alone), and maps
of the project's, a file a directory of the project (DirectoryMaps: the modules whose text
holds nothing for through.py, and the stamps of files that stand for their content hashes).  An entry is used for the content it was made from (its content hash), and each part of it
(the module's table, each answer) only while the other project files it depended on have the
content they had.  Written with `marshal` (plain data only: nothing in it can run), each file at
once (source.write_cache_file), after a checksum of its bytes (CRC-32); a file that
cannot be read, whose checksum fails, or that is not an entry we wrote, is a miss, never an
error.  (The checksum is what tells a summary's table is as it was written, in what a hash of
its bytes costs, not the tenth of a one-file check that looking into every fact of the tables it
reads took: module_summary.ModuleSummary.from_entry.)
"""

from __future__ import annotations

import marshal
import os
import sys
from zlib import crc32

from .. import __version__
from ..source import hasher, write_cache_file

# The most items a map of the project's keeps (SummaryStore.update_map: one a module, whose
# item an edit of the module replaces; a map this large is from paths since gone).
MAP_LIMIT = 100_000

# Part of every entry: a change in what an entry holds starts over.
_FORMAT = f"summaries-8:{sys.version_info[0]}.{sys.version_info[1]}"


def _checked(entry) -> bytes:
    """What a file of the store holds: the CRC-32 of `entry`'s marshal data (4 bytes), then the
    data.  (A check against damage and against files we did not write, not against someone who
    can write to the cache: who can could as well edit the code.  BLAKE2b took five times as many
    instructions, on a one-file check's 220 KB of summaries.)"""
    data = marshal.dumps(entry)
    return crc32(data).to_bytes(4, "little") + data


def _read(path: str):
    """What `_checked` wrote at `path`, or None (unreadable, damaged, not ours)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        body = memoryview(data)[4:]
        if len(data) <= 4 or crc32(body).to_bytes(4, "little") != data[:4]:
            return None
        return marshal.loads(body)
    except (OSError, ValueError, EOFError, TypeError):
        return None


class SummaryStore:
    """`key`: a string, or a function that makes it (called once, when a summary is first looked
    up: a file that imports no module of its project never pays for it)."""

    def __init__(self, directory: str, key) -> None:
        self.directory = directory
        self._key = key
        self._folder = None
        self._names: dict = {}  # path -> the name of its files (a hash of its real path)

    def _in_folder(self, name: str) -> str:
        if self._folder is None:
            key = self._key() if callable(self._key) else self._key
            self._folder = os.path.join(self.directory, __version__, f"summaries-{key}")
        return os.path.join(self._folder, name)

    def _file(self, path: str, kind: str = "") -> str:
        name = self._names.get(path)
        if name is None:
            name = self._names[path] = self._in_folder(hasher()(
                os.path.realpath(path).encode("utf-8", "surrogatepass"), digest_size=12).hexdigest())
        return f"{name}{kind}.marshal"

    def load(self, path: str, digest: str, kind: str = "") -> dict | None:
        """The entry of the module at `path` made from content `digest`, or None.  `kind`: ""
        for its summary, ".text" for its text facts."""
        entry = _read(self._file(path, kind))
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT or entry.get("digest") != digest \
                or entry.get("path") != path or entry.get("kind", "") != kind:
            return None
        return entry

    def load_map(self, name: str) -> dict:
        """The project's map `name` of strings to strings (`<name>.marshal` beside the modules'
        files); empty when it cannot be read or is not one we wrote."""
        entry = _read(self._file_of_map(name))
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT or entry.get("map") != name:
            return {}
        items = entry.get("items")
        if type(items) is not dict or not all(type(k) is str and type(v) is str for k, v in items.items()):
            return {}
        return items

    def update_map(self, name: str, items: dict) -> None:
        """Set `items` in the project's map `name`: what the file holds now, updated with these,
        written at once.  (Two processes that update at the same time: one's items may be lost,
        which costs a test again, never a wrong answer.)  A map that outgrows MAP_LIMIT starts
        over."""
        kept = self.load_map(name)
        kept.update(items)
        if len(kept) > MAP_LIMIT:
            kept = dict(items)
        try:
            write_cache_file(self.directory, self._file_of_map(name),
                             _checked({"format": _FORMAT, "map": name, "items": kept}))
        except (OSError, ValueError):
            pass

    def _file_of_map(self, name: str) -> str:
        return self._in_folder(f"{name}.marshal")

    def maps(self, name: str) -> DirectoryMaps:
        """The project's map `name` of paths, kept a file per directory (DirectoryMaps)."""
        return DirectoryMaps(self, name)

    def save(self, path: str, digest: str, entry: dict, kind: str = "") -> None:
        entry = dict(entry, format=_FORMAT, path=path, digest=digest)
        if kind:
            entry["kind"] = kind
        try:
            write_cache_file(self.directory, self._file(path, kind), _checked(entry))
        except (OSError, ValueError):
            pass  # a cache that cannot be written is just not a cache (ValueError: not plain data)


class DirectoryMaps:
    """A map of the project's files to strings, kept as one map a directory (`<name>-<hash of
    the directory>.marshal`): a check reads the parts of the directories its file imports from,
    not one map the size of the project.  Read part by part when first asked; what `set` adds
    is written by `flush`."""

    def __init__(self, store: SummaryStore, name: str) -> None:
        self.store = store
        self.name = name
        self._parts: dict = {}  # directory -> its map, as read (and set since)
        self._new: dict = {}  # directory -> {path: value} not written yet

    def _part(self, directory: str) -> str:
        return f"{self.name}-{hasher()(directory.encode('utf-8', 'surrogatepass'), digest_size=8).hexdigest()}"

    def get(self, path: str) -> str | None:
        directory = os.path.dirname(path)
        part = self._parts.get(directory)
        if part is None:
            part = self._parts[directory] = self.store.load_map(self._part(directory))
        return part.get(path)

    def set(self, path: str, value: str) -> None:
        directory = os.path.dirname(path)
        self._new.setdefault(directory, {})[path] = value
        if directory in self._parts:
            self._parts[directory][path] = value

    def flush(self) -> None:
        for directory, items in self._new.items():
            self.store.update_map(self._part(directory), items)
        self._new = {}
