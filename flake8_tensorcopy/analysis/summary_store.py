"""The summary cache: what project modules' summaries hold (summaries.py, project.py), kept on
disk by content hash so that a process starting afresh (the flake8 plugin on every save, the
language server after a restart, the next `tensorcopy check`) does not parse and walk the
project's modules again.

One file per module under `<cache dir>/<version>/summaries-<key>/`, named by a hash of the
module's path (`key`: the front end's, of the tool's version and the options summaries depend
on), and beside it one of the module's text facts (`<hash>.text.marshal`: through.py's, which
a file importing the module asks before any summary, from the module's text alone).  An entry is used for the content it was made from (its content hash), and each part of it
(the module's table, each answer) only while the other project files it depended on have the
content they had.  Written with `marshal` (plain data only: nothing in it can run), each file at
once (source.write_cache_file); a file that cannot be read, or is not an entry we wrote, is a
miss, never an error.
"""

from __future__ import annotations

import marshal
import os
import sys

from .. import __version__
from ..source import hasher, write_cache_file

# The most strings a set of the project's keeps (SummaryStore.add_to_set): old digests pile up
# as files change.
SET_LIMIT = 200_000

# Part of every entry: a change in what an entry holds starts over.
_FORMAT = f"summaries-2:{sys.version_info[0]}.{sys.version_info[1]}"


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
        try:
            with open(self._file(path, kind), "rb") as f:
                entry = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT or entry.get("digest") != digest \
                or entry.get("path") != path or entry.get("kind", "") != kind:
            return None
        return entry

    def load_set(self, name: str) -> frozenset:
        """The strings of the project's set `name` (`<name>.marshal` beside the modules' files);
        empty when it cannot be read or is not one we wrote."""
        try:
            with open(self._file_of_set(name), "rb") as f:
                entry = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            return frozenset()
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT or entry.get("set") != name:
            return frozenset()
        items = entry.get("items")
        if type(items) is not frozenset or not all(type(x) is str for x in items):
            return frozenset()
        return items

    def add_to_set(self, name: str, items) -> None:
        """Add `items` (strings) to the project's set `name`: what the file holds now, and these,
        written at once.  (Two processes that add at the same time: one's items may be lost, which
        costs a test again, never a wrong answer.)  A set that outgrows SET_LIMIT starts over."""
        kept = self.load_set(name)
        merged = kept | items if len(kept) + len(items) <= SET_LIMIT else frozenset(items)
        try:
            write_cache_file(self.directory, self._file_of_set(name),
                             marshal.dumps({"format": _FORMAT, "set": name, "items": frozenset(merged)}))
        except (OSError, ValueError):
            pass

    def _file_of_set(self, name: str) -> str:
        return self._in_folder(f"{name}.marshal")

    def save(self, path: str, digest: str, entry: dict, kind: str = "") -> None:
        entry = dict(entry, format=_FORMAT, path=path, digest=digest)
        if kind:
            entry["kind"] = kind
        try:
            write_cache_file(self.directory, self._file(path, kind), marshal.dumps(entry))
        except (OSError, ValueError):
            pass  # a cache that cannot be written is just not a cache (ValueError: not plain data)
