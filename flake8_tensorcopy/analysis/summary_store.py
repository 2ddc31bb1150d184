"""The summary cache: what project modules' summaries hold (summaries.py, project.py), kept on
disk by content hash so that a process starting afresh (the flake8 plugin on every save, the
language server after a restart, the next `tensorcopy check`) does not parse and walk the
project's modules again.

One file per module under `<cache dir>/<version>/summaries-<key>/`, named by a hash of the
module's path (`key`: the front end's, of the tool's version and the options summaries depend
on).  An entry is used for the content it was made from (its content hash), and each part of it
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

# Part of every entry: a change in what an entry holds starts over.
_FORMAT = f"summaries-2:{sys.version_info[0]}.{sys.version_info[1]}"


class SummaryStore:
    """`key`: a string, or a function that makes it (called once, when a summary is first looked
    up: a file that imports no module of its project never pays for it)."""

    def __init__(self, directory: str, key) -> None:
        self.directory = directory
        self._key = key
        self._folder = None

    def _file(self, path: str) -> str:
        if self._folder is None:
            key = self._key() if callable(self._key) else self._key
            self._folder = os.path.join(self.directory, __version__, f"summaries-{key}")
        name = hasher()(os.path.realpath(path).encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
        return os.path.join(self._folder, name + ".marshal")

    def load(self, path: str, digest: str) -> dict | None:
        """The entry of the module at `path` made from content `digest`, or None."""
        try:
            with open(self._file(path), "rb") as f:
                entry = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != _FORMAT or entry.get("digest") != digest \
                or entry.get("path") != path:
            return None
        return entry

    def save(self, path: str, digest: str, entry: dict) -> None:
        entry = dict(entry, format=_FORMAT, path=path, digest=digest)
        try:
            write_cache_file(self.directory, self._file(path), marshal.dumps(entry))
        except (OSError, ValueError):
            pass  # a cache that cannot be written is just not a cache (ValueError: not plain data)
