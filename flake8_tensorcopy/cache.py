"""Result cache for `tensorcopy check`, like ruff's: an unchanged file is not read or parsed again.

Under `.tensorcopy_cache/` in the project root (the nearest directory with a pyproject.toml or a
.git; else the current directory), with a `.gitignore` inside: a folder per (tool version,
configuration), and in it one file per checked file, named by a hash of its path.  A check of one
file reads and writes that file's entry alone, whatever else the cache holds (a whole-tree run of
a large project leaves thousands), and processes that check at the same time lose nothing of
each other's.  An entry is reused when the file's size and mtime are unchanged, or, failing
that, when its content hash is unchanged.  Written with `marshal` (plain data only: nothing in it
can run), each file at once (source.write_cache_file).  Any problem with the cache makes it a
miss, never an error.
"""

from __future__ import annotations

import marshal
import os
import sys

from . import __version__
from .model import Edit, Fix, FixSafety
from .source import content_hash, hasher, write_cache_file

CACHE_DIR = ".tensorcopy_cache"
# Part of every key: a change in what an entry holds (or in the hash) starts a new cache.
_FORMAT = "4:blake2b"
# In every entry too: marshal's format may change between Python versions.
_ENTRY = f"results-4:{sys.version_info[0]}.{sys.version_info[1]}"


def project_root(start: str) -> str:
    """Where the cache lives, whatever directory tensorcopy runs from: the project's root (the
    one whole-project analysis uses)."""
    from .reach import find_root

    return find_root(start)


def default_dir(start: str) -> str:
    return os.path.join(project_root(start), CACHE_DIR)


def config_key(*parts) -> str:
    h = hasher()(f"{__version__}:{_FORMAT}:{_code_stamp()}".encode(), digest_size=16)
    h.update(repr(parts).encode())
    return h.hexdigest()[:24]


_CODE_STAMP: list = []


def _code_stamp() -> str:
    """The rules' own code, as part of every key in development checkouts: editing a rule must
    not serve stale results.  The sizes and times of the package's files, read once a process
    (the code it runs is the code it imported; the result cache and the summary cache both ask)."""
    if not _CODE_STAMP:
        h = hasher()(digest_size=16)
        here = os.path.dirname(os.path.abspath(__file__))
        for root, _dirs, files in os.walk(here):
            for name in sorted(files):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(root, name))
                    h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
        _CODE_STAMP.append(h.hexdigest())
    return _CODE_STAMP[0]


def summary_store(directory: str, options):
    """The summary cache of a project's modules (analysis/summary_store.py) in `directory`, keyed
    as the result cache is by the tool's code, and by `options` (or a function that gives them),
    asked when a file first imports a module of its project.  Every front end keeps it so."""
    from .analysis.summary_store import SummaryStore

    return SummaryStore(directory, lambda: config_key("summaries", options() if callable(options) else options))


def _dump_violation(v) -> list:
    """One output.Finding as plain data: where it is (in a file, or a notebook cell), its fix, and
    where its edits are."""
    fix = None
    if v.fix is not None:
        fix = [v.fix.title, FixSafety(v.fix.safety).value, [[e.start, e.end, e.text, e.expect] for e in v.fix.edits]]
    return [v.code, v.message, v.line, v.col, v.end_line, v.end_col, fix, v.cell,
            [list(r) for r in v.edit_ranges], list(v.json_range) if v.json_range else None]


class _Malformed(ValueError):
    """A cache entry that is plain data but not what we write: a miss, never a crash."""


def _int(x, low: int = 0) -> int:
    if type(x) is not int or x < low:  # bool is an int subclass: not one of ours
        raise _Malformed(x)
    return x


def _str(x) -> str:
    if not isinstance(x, str):
        raise _Malformed(x)
    return x


def _list(x, length: int | None = None) -> list:
    if not isinstance(x, list) or (length is not None and len(x) != length):
        raise _Malformed(x)
    return x


def _load_violation(row):
    from .output import Finding

    code, message, line, col, end_line, end_col, fix, cell, ranges, json_range = _list(row, 10)
    if fix is not None:
        title, safety, edits = _list(fix, 3)
        try:
            safety = FixSafety(safety)
        except ValueError:
            raise _Malformed(safety) from None
        fix = Fix(_str(title), safety, tuple(
            Edit(_int(s), _int(e), _str(t), None if x is None else _str(x))
            for s, e, t, x in (_list(edit, 4) for edit in _list(edits))))
    ranges = tuple((_int(a, 1), _int(b), _int(c, 1), _int(d), _str(t))
                   for a, b, c, d, t in (_list(r, 5) for r in _list(ranges)))
    if json_range is not None:
        json_range = tuple(_int(x) for x in _list(json_range, 4))
    return Finding(_str(code), _str(message), _int(line, 1), _int(col), _int(end_line, 1), _int(end_col), fix,
                   None if cell is None else _int(cell, 1), ranges, json_range)


def _load_entry(entry) -> tuple:
    """(violations, error) of a cache entry; _Malformed when it is not one we wrote."""
    if not isinstance(entry, dict):
        raise _Malformed(entry)
    error = entry.get("error")
    if error is not None:
        _str(error)
    return [_load_violation(r) for r in _list(entry.get("violations"))], error


class Cache:
    """The results of one configuration (`key`, config_key's), an entry a checked file."""

    def __init__(self, directory: str, key: str) -> None:
        self.directory = directory
        self.folder = os.path.join(directory, __version__, f"results-{key}")
        self.entries: dict = {}  # absolute path -> its entry, as read or stored by this process
        self._dirty: set = set()  # the paths whose entries save() writes

    def _file(self, path: str) -> str:
        name = hasher()(path.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
        return os.path.join(self.folder, f"{name}.marshal")

    def _entry(self, path: str):
        """The entry of the file at absolute path `path` (None: none, or not one we wrote)."""
        if path in self.entries:
            return self.entries[path]
        entry = None
        try:
            with open(self._file(path), "rb") as f:
                entry = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            pass
        if not isinstance(entry, dict) or entry.get("format") != _ENTRY or entry.get("path") != path:
            entry = None  # (another file's: the names' hashes collide)
        self.entries[path] = entry
        return entry

    def lookup(self, path: str):
        """(violations, error) for an unchanged file, else None."""
        key = os.path.abspath(path)
        entry = self._entry(key)
        if entry is None:
            return None
        try:
            found = _load_entry(entry)  # first: a malformed entry is a miss, whatever the file
            st = os.stat(path)
            if entry.get("size") != st.st_size:
                return None
            if entry.get("mtime") != st.st_mtime_ns:
                with open(path, "rb") as f:
                    if content_hash(f.read()) != entry.get("sha"):
                        return None
                entry["mtime"] = st.st_mtime_ns
                self._dirty.add(key)
            if not self._deps_unchanged(entry.get("deps")):
                return None  # a project module it imports changed: its findings may change too
            return found
        except (OSError, ValueError, TypeError):
            return None

    def store(self, path: str, data_hash: str, size: int, mtime: int, violations, error, deps=None) -> None:
        key = os.path.abspath(path)
        entry = {
            "format": _ENTRY,
            "path": key,
            "size": size,
            "mtime": mtime,
            "sha": data_hash,
            "violations": [_dump_violation(v) for v in violations],
            "error": error,
        }
        if deps:
            # The project modules the result depends on (whole-project analysis): a change in any
            # of them makes the entry a miss.
            dep_entries = {}
            for dep, sha in deps.items():
                try:
                    st = os.stat(dep)
                except OSError:
                    return  # gone already: do not cache
                dep_entries[dep] = [st.st_size, st.st_mtime_ns, sha]
            entry["deps"] = dep_entries
        self.entries[key] = entry
        self._dirty.add(key)

    def _deps_unchanged(self, deps) -> bool:
        if not deps:
            return True
        if not isinstance(deps, dict):
            raise _Malformed(deps)
        for dep, (size, mtime, sha) in deps.items():
            st = os.stat(dep)
            if st.st_size != size:
                return False
            if st.st_mtime_ns != mtime:
                with open(dep, "rb") as f:
                    if content_hash(f.read()) != sha:
                        return False
        return True

    def save(self) -> None:
        """Write the entries stored, or updated, since the last save."""
        for key in sorted(self._dirty):
            try:
                write_cache_file(self.directory, self._file(key), marshal.dumps(self.entries[key]))
            except (OSError, ValueError):
                pass  # a cache that cannot be written is just not a cache
        self._dirty.clear()
