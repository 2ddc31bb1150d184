"""Result cache for `tensorcopy check`, like ruff's: an unchanged file is not read or parsed again.

One JSON file per (tool version, configuration) under `.tensorcopy_cache/` (with a `.gitignore`
inside).  An entry is reused when the file's size and mtime are unchanged, or, failing that,
when its content hash is unchanged.  Any problem with the cache makes it a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from . import __version__
from .rules.base import Edit, Fix, Violation

CACHE_DIR = ".tensorcopy_cache"


def config_key(*parts) -> str:
    h = hashlib.sha256(__version__.encode())
    # The rules' own code is part of the key in development checkouts: editing a rule must
    # not serve stale results.
    here = os.path.dirname(os.path.abspath(__file__))
    for root, _dirs, files in os.walk(here):
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(root, name))
                h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    h.update(repr(parts).encode())
    return h.hexdigest()[:24]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dump_violation(v: Violation) -> list:
    fix = None
    if v.fix is not None:
        fix = [v.fix.title, v.fix.safety, [[e.start, e.end, e.text, e.expect] for e in v.fix.edits]]
    row = [v.code, v.message, v.line, v.col, v.end_line, v.end_col, fix]
    if hasattr(v, "cell"):  # an output.Finding: where it is in a notebook, where its edits are
        row += [v.cell, [list(r) for r in v.edit_ranges]]
    return row


def _load_violation(row) -> Violation:
    code, message, line, col, end_line, end_col, fix = row[:7]
    if fix is not None:
        title, safety, edits = fix
        fix = Fix(title, safety, tuple(Edit(s, e, t, x) for s, e, t, x in edits))
    if len(row) == 9:
        from .output import Finding

        return Finding(code, message, line, col, end_line, end_col, fix, row[7], tuple(tuple(r) for r in row[8]))
    return Violation(code, message, line, col, end_line, end_col, fix)


class Cache:
    def __init__(self, directory: str, key: str) -> None:
        self.directory = directory
        self.path = os.path.join(directory, __version__, f"{key}.json")
        self.entries: dict = {}
        self.dirty = False
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
            if isinstance(data, dict):
                self.entries = data
        except (OSError, ValueError):
            self.entries = {}

    def lookup(self, path: str):
        """(violations, error) for an unchanged file, else None."""
        entry = self.entries.get(os.path.abspath(path))
        if entry is None:
            return None
        try:
            st = os.stat(path)
            if entry["size"] != st.st_size:
                return None
            if entry["mtime"] != st.st_mtime_ns:
                with open(path, "rb") as f:
                    if content_hash(f.read()) != entry["sha"]:
                        return None
                entry["mtime"] = st.st_mtime_ns
                self.dirty = True
            return [_load_violation(r) for r in entry["violations"]], entry["error"]
        except (OSError, KeyError, TypeError, ValueError):
            return None

    def store(self, path: str, data_hash: str, size: int, mtime: int, violations, error) -> None:
        self.entries[os.path.abspath(path)] = {
            "size": size,
            "mtime": mtime,
            "sha": data_hash,
            "violations": [_dump_violation(v) for v in violations],
            "error": error,
        }
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            ignore = os.path.join(self.directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as f:
                    f.write("# Created by tensorcopy: a cache, never commit it.\n*\n")
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.entries, f, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a cache that cannot be written is just not a cache
