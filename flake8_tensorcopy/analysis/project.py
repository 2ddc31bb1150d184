"""The project: which modules are the user's own, and what they export (whole-project analysis).

- The root is the nearest directory at or above the checked file with a `pyproject.toml`,
  `setup.cfg`, `setup.py` or `.git` (else the current directory; front ends may override it).
- Module names follow the package structure under the root, with or without `__init__.py`
  (namespace packages), and under `src/` for a src layout.  Imports are resolved against them:
  absolute (`import pkg.mod as m`, `from pkg.mod import X`), relative (`from .mod import X`),
  and re-exports through `__init__.py` (`from pkg import X` where `pkg/__init__.py` imports
  `X` from a submodule).  Anything else (installed packages, the standard library) is not the
  project's and stays as the rest of the analysis sees it.
- A module's summary (module_summary.py) is a walk of its module-level code with rules off: the
  facts of its names at the end (a frozen model built there, a device), and, computed on demand
  by that module's own walker, what its functions return (a `@torch.no_grad()` helper), what its
  classes are (an nn.Module, their attributes, what their methods return, their base classes,
  wherever those live).  Memoised per project and kept in the summary cache on disk
  (summary_store.py) when a front end gives one; an import cycle terminates (a summary under
  construction reads as unknown).  This module, which every file with a project imports, holds
  only the names: the summaries' code is imported when a file first imports a project module.

The importing file's walker binds imported names to `ProjectEntity` facts (kind "class" or
"function", with the entity as `node`), tagged with where they are defined so that messages can
say it (`Critic: an nn.Module, models.py:12`).
"""

from __future__ import annotations

import ast
import os

from ..reach import absolute, module_name, module_path
from ..source import LazyPattern
from .facts import UNKNOWN_FACT, Fact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .module_summary import ModuleSummary, ProjectEntity

# The most files `Project.files_mentioning` reads (a monorepo's callers are not looked for).
SCAN_LIMIT = 20_000
# A file's stamp (its size and times) stands for its content hash only once the file has been
# left alone this long before it was read: a change within the same tick of a coarse clock
# (some filesystems keep seconds) could leave the stamp as it was (git's "racy" entries).
STAMP_SETTLED_NS = 2_000_000_000


class Project:
    """The modules under one root, and their summaries (computed once per process)."""

    def __init__(self, root: str, options=None, batch: bool = False) -> None:
        self.root = os.path.realpath(root)
        self.options = options
        # A batch (the CLI, a flake8 worker) checks many files in one process: the summaries it
        # builds live to the end, and the engine moves them out of the garbage collector's way.
        self.batch = batch
        self.built = 0  # summaries built so far
        self._summaries: dict = {}  # module name -> ModuleSummary, or None while being built
        self._paths: dict = {}
        self._packages: dict = {}  # module name -> is_package()
        self._building: list = []  # the summaries being built (their dependencies grow)
        self.touched: dict = {}  # path -> content hash of the project modules the current file used
        # The summary cache on disk (summary_store.SummaryStore; None: summaries live as long as
        # this object), and what this process read of the project's files.
        self.store = None
        # Or a function that makes it when a summary is first looked up (the flake8 plugin's: a
        # file that imports no module of its project does not import the cache's code).
        self.make_store = None
        self._digests: dict = {}  # path -> content hash, or None when it cannot be read
        # The summary cache's map of files' stamps to their content hashes (`_stamp_map`), and
        # the paths whose hash came from a stamp (their bytes, when read, are checked against it).
        self._stamps = None
        self._stamped: set = set()
        self._loaded: dict = {}  # path -> (digest, its summary's entry), loaded by `_spells` for `_build`
        self.restamped: set = set()  # the paths whose bytes were not what their stamps said
        # path -> the bytes `contents` first read (and hashed), kept until the module's summary
        # is built from them (_build) or the next file's check begins: not read and hashed
        # again, and the summary is of the bytes its digest names.
        self._unbuilt: dict = {}
        self._entities: dict = {}  # (module, path) -> ProjectEntity
        self._flushed = None  # when flush() last wrote (time.monotonic)
        self._in_progress: set = set()  # modules whose summary is being built
        self._frames: list = []  # Project.computing()
        self._files = None  # _all_files(); False: too many
        self._mentions: dict = {}  # word -> files_mentioning(word)
        self._modes: dict = {}  # path -> (digest, gradmode.call_modes of its tree, or None)
        self._import_lists: dict = {}  # path -> (digest, reach.imports of its text, or None): caller_facts
        self.scanned = False  # files_mentioning() was asked (see there)
        self.scanned_words: set = set()  # the words it was asked for the current file
        self.asking: set = set()  # (module, question) of the fresh walks being asked (module_summary.py)
        # What the rules that report through calls (`to_numpy(out)`) need of the project's
        # modules: through.Through, set by the engine (the layer that has the rules); asked by
        # module_summary.ProjectEntity.sinks_for and walker.call_sinks.
        self.through = None

    # ------------------------------------------------------------------ names

    def module_name(self, path: str) -> str | None:
        """The dotted module name of a file under the root (`src/` layouts included)."""
        return module_name(self.root, path)

    def path_of(self, module: str) -> str | None:
        """The file of project module `module`, or None when it is not the project's."""
        if module in self._paths:
            return self._paths[module]
        found = self._paths[module] = module_path(self.root, module)
        return found

    def parsed(self, module: str, text: str):
        """The tree of `text` when this process parsed that very text for the summary of
        `module` (a file checked after one that imports it), else None.  Trees are never changed
        by a walk, and no definition of one module reaches another as a tree node
        (portable.export_fact), so two walks can share one."""
        summary = self._summaries.get(module)
        return summary.tree_of(text) if summary is not None else None

    def is_package(self, module: str) -> bool:
        """Whether `module` is a package of the project (kept, as `path_of` is: `owns` asks it
        of every qualified name a file evaluates, `torch.nn.Linear` as much as its own)."""
        found = self._packages.get(module)
        if found is None:
            path = self.path_of(module)
            if path is not None:
                found = os.path.basename(path) == "__init__.py"
            else:
                rel = module.replace(".", os.sep)
                found = any(os.path.isdir(os.path.join(b, rel)) for b in (self.root, os.path.join(self.root, "src")))
            self._packages[module] = found
        return found

    def absolute(self, module: str | None, level: int, current: str | None, current_is_package: bool) -> str | None:
        """The absolute name of an imported module (`from ..x import y` in `current`)."""
        return absolute(module, level, current, current_is_package)

    # ------------------------------------------------------------------ summaries

    def summary(self, module: str) -> ModuleSummary | None:
        """The summary of a project module (None: not the project's, unreadable, or being built
        further up an import cycle)."""
        if module in self._summaries:
            summary = self._summaries[module]
            if summary is None and module in self._in_progress:
                self.taint()  # what is computed now depends on the order modules were asked in
            self._touch(summary)
            return summary
        path = self.path_of(module)
        if path is None:
            self._summaries[module] = None
            return None
        self._summaries[module] = None  # an import cycle reads as unknown
        self._in_progress.add(module)
        try:
            summary = self._build(module, path)
        finally:
            self._in_progress.discard(module)
        self._summaries[module] = summary
        self._touch(summary)
        return summary

    def computing(self) -> list:
        """A frame for a summary walk or an answer being computed (popped by the caller): it says
        whether the result may go to the summary cache.  It may not when the computation read a
        module whose summary was still being built (an import cycle: the result depends on which
        module was asked first) or asked again a module whose walker was busy with another
        question; the result is used in this process all the same."""
        frame = [False]
        self._frames.append(frame)
        return frame

    def taint(self) -> None:
        """Everything being computed now is order-dependent (see `computing`)."""
        for frame in self._frames:
            frame[0] = True

    def _touch(self, summary) -> None:
        """The current file, and every summary being built, now depends on `summary`'s files."""
        if summary is None:
            return
        self.touched.update(summary.deps)
        for outer in self._building:
            outer.update(summary.deps)

    def begin(self) -> None:
        """A new file: start collecting the project modules it uses."""
        self.touched = {}
        self.scanned = False
        self.scanned_words = set()
        self._unbuilt = {}  # (what the last file read and built no summary from: not kept past it)

    def _build(self, module: str, path: str) -> ModuleSummary | None:
        from .module_summary import ModuleSummary

        data = self._unbuilt.pop(path, None)
        store = self.cache()
        if data is None and store is not None and (path not in self._digests or path in self._stamped):
            self.digest_of(path)  # from its stamp, the file unread; or read now
            data = self._unbuilt.pop(path, None)
        if data is None and path not in self._stamped:
            data = self._read_again(path)  # (read for an earlier file of this process: may have changed)
            if data is None:
                return None
        digest = self._digests[path]
        if store is not None:
            loaded = self._loaded.pop(path, None)
            entry = loaded[1] if loaded is not None and loaded[0] == digest else store.load(path, digest)
            if entry is not None:
                try:
                    # (without `data`: read when its walker is made, and only if it is still the
                    # content `digest` names)
                    summary = ModuleSummary.from_entry(self, module, path, digest, data, entry)
                    if self.unchanged(summary.table_deps):
                        return summary
                except (KeyError, TypeError, ValueError, AttributeError):
                    pass  # not an entry we wrote: built again
        if data is None:
            data = self._read_again(path)
            if data is None:
                return None
            digest = self._digests[path]
        return ModuleSummary.build(self, module, path, digest, data)

    def cache(self):
        """The summary cache on disk (None: none), made when first asked (`make_store`)."""
        if self.store is None and self.make_store is not None:
            self.store, self.make_store = self.make_store(), None
        return self.store

    def entity(self, ref) -> ProjectEntity:
        """The class or function `ref` ((module, path), portable.py) names (one object a
        reference, its module read when it is first asked something)."""
        found = self._entities.get(ref)
        if found is None:
            from .module_summary import ProjectEntity

            found = self._entities[ref] = ProjectEntity(self, *ref)
        return found

    def digest_of(self, path: str) -> str | None:
        """The content hash of a file as this process first read it (None: unreadable); with a
        summary cache, the hash its stamp stands for when the file has that stamp still (not
        read: `contents` checks the bytes when they are asked for)."""
        if path in self._digests:
            return self._digests[path]
        if self._caching():
            digest = self._by_stamp(path)
            if digest is not None:
                return digest
        self.contents(path)
        return self._digests[path]

    def _caching(self) -> bool:
        """Whether the project has a summary cache (made or to be made)."""
        return self.store is not None or self.make_store is not None

    def _stamp_map(self):
        """The summary cache's map `stamps` (summary_store.DirectoryMaps), made when first asked;
        what `contents` sets in it is written by `flush`."""
        if self._stamps is None:
            self._stamps = self.cache().maps("stamps")
        return self._stamps

    def _by_stamp(self, path: str) -> str | None:
        known = self._stamp_map().get(path)
        if not known:  # ("": forgotten)
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp, _, digest = known.rpartition(":")
        if stamp != _stamp(st):
            return None
        self._digests[path] = digest
        self._stamped.add(path)
        return digest

    def _read_again(self, path: str) -> bytes | None:
        """The bytes of a project file read now, its digest theirs from now on."""
        self._digests.pop(path, None)
        self._stamped.discard(path)
        data = self.contents(path)
        self._unbuilt.pop(path, None)
        return data

    def bytes_of(self, path: str, digest: str) -> bytes | None:
        """The bytes of a project file read now, if they are still those `digest` names."""
        from ..source import content_hash

        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        return data if content_hash(data) == digest else None

    def contents(self, path: str) -> bytes | None:
        """The bytes of a project file (None: unreadable), read now; the first read also gives
        `digest_of` its hash (and its bytes are what later calls get, until the module's summary
        is built)."""
        from ..source import content_hash

        data = self._unbuilt.get(path)
        if data is not None:
            return data
        st = None
        try:
            with open(path, "rb") as f:
                if self._caching():
                    st = os.fstat(f.fileno())  # (before the read: a change during it is a new stamp)
                data = f.read()
        except OSError:
            data = None
        stamped = self._digests.pop(path) if path in self._stamped else None
        if stamped is not None:
            # Its hash came from its stamp: these bytes must be what it names (else the file
            # changed since it was stat'ed: these bytes are what the rest of the process gets,
            # and nothing learnt of the file is kept in the summary cache, `restamped`).
            self._stamped.discard(path)
        if path not in self._digests:
            digest = self._digests[path] = content_hash(data) if data is not None else None
            if data is not None and path.endswith(".py"):
                self._unbuilt[path] = data
            if stamped is not None and digest != stamped:
                self.restamped.add(path)
                self._stamp_map().set(path, "")  # (that stamp forgotten, unless the one below replaces it)
            if st is not None and digest is not None:
                import time

                if max(st.st_mtime_ns, st.st_ctime_ns) < time.time_ns() - STAMP_SETTLED_NS:
                    self._stamp_map().set(path, f"{_stamp(st)}:{digest}")
        return data

    def unchanged(self, deps) -> bool:
        """Whether every file in `deps` ({path: content hash}) still has that content."""
        return all(self.digest_of(p) == d for p, d in deps.items())

    def _touch_deps(self, deps: dict) -> None:
        self.touched.update(deps)
        for outer in self._building:
            outer.update(deps)

    def flush(self, at_most_every: float | None = None) -> None:
        """Write what the summary cache does not have yet.  Front ends call it after each file (a
        flake8 process or a CLI worker may end at any time) with `at_most_every` seconds: the
        first call writes, later ones only once that long has passed (a module's entry is
        written whole, and a cold run of many files adds to the same entries file after file;
        what the last second added may go unwritten, and is computed again when asked)."""
        store = self.store
        if store is None:
            return
        import time

        now = time.monotonic()
        if at_most_every is not None and self._flushed is not None and now - self._flushed < at_most_every:
            return
        self._flushed = now
        for summary in self._summaries.values():
            if summary is not None and summary.dirty:
                summary.dirty = False
                store.save(summary.path, summary.digest, summary.to_entry())
        if self.through is not None:
            self.through.flush(store)
        if self._stamps is not None:
            self._stamps.flush()

    def fact(self, qualname: str, _depth: int = 0) -> Fact | None:
        """The fact of a project entity by qualified name (`pkg.models.Critic`), or None when
        no project module defines it.  Re-exports (`from .models import Critic` in a package's
        `__init__.py`) are followed."""
        f = self._fact(qualname)
        if f is not None and f.kind == "import" and f.qual and f.qual != qualname and _depth < 8 \
                and self.owns(f.qual):
            followed = self.fact(f.qual, _depth + 1)
            return followed if followed is not None else f
        return f

    def _fact(self, qualname: str) -> Fact | None:
        parts = qualname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            if self.path_of(module) is None:
                continue
            if module not in self._summaries and not self._spells(module, parts[i]):
                # (`from pkg import sub`, a submodule: not worth a summary of `pkg` to learn so)
                return None if self.path_of(".".join(parts[: i + 1])) is not None else UNKNOWN_FACT
            summary = self.summary(module)
            if summary is None:
                return UNKNOWN_FACT
            f = summary.fact(parts[i])
            if f is None:
                if self.path_of(".".join(parts[: i + 1])) is not None:
                    return None  # a submodule: the caller treats it as a module
                return UNKNOWN_FACT
            for attr in parts[i + 1:]:
                attrs = f.attrs
                f = attrs.get(attr) if attrs is not None else None
                if f is None:
                    return UNKNOWN_FACT
            return f
        return None

    def _spells(self, module: str, attr: str) -> bool:
        """Whether the text of project module `module` (not summarised yet) may bind `attr`:
        False only when it never spells the name, which every binding of a module-level name
        does (an import, an assignment, a `def`), or a star import (which may bind any).  The
        answer depends on that text alone, and the current file's result on it."""
        path = self._paths[module]
        if self._caching():
            # A summary kept for its content, the file unread (known by its stamp): no need to
            # read it, the summary is as cheap (and `_build` takes this entry).
            digest = self.digest_of(path)
            if path in self._stamped:
                entry = self.cache().load(path, digest)
                if entry is not None:
                    self._loaded[path] = (digest, entry)
                    return True
        data = self.contents(path)
        if data is None:
            return True  # (unreadable: the summary says so)
        if attr.isascii() and attr.encode() in data or b"import *" in data and _TOP_STAR.search(data) is not None:
            return True  # (a star import at the top level binds names it does not spell: walker._star_import)
        from ..source import DecodeError, decode

        try:
            if attr in decode(data).text:
                return True
        except (DecodeError, SyntaxError, ValueError, LookupError):
            return True
        self._touch_deps({path: self._digests[path]})
        return False

    def files_mentioning(self, word: str) -> list | None:
        """The project's Python files and notebooks (under the root, outside the paths a run
        skips: reach.DEFAULT_EXCLUDE) whose text holds `word`, read now; None when the project holds
        more than `SCAN_LIMIT` files.  What the current file's result then rests on includes
        files nobody imported (their text may come to call one of its functions): `scanned`
        says so (a result cache does not keep such a result)."""
        files = self._all_files()
        if files is None:
            return None
        self.scanned = True
        self.scanned_words.add(word)
        found = self._mentions.get(word)
        if found is None:
            from ..source import content_hash

            needle = word.encode()
            found = self._mentions[word] = []
            for path in files:
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if needle in data:
                    found.append(path)
                    if path not in self._digests:  # (digest_of below: not read twice)
                        self._digests[path] = content_hash(data)
        for path in found:
            self.touched[path] = self.digest_of(path)
        return found

    def called_without_grad(self, name: str, current: str | None, generator: bool = False) -> bool:
        """Whether the other files of the project call `name` (a function or a method, by its
        name) at least once, and only with grad off (in a no-grad block, or in a function only
        called so there: gradmode.call_modes), and use the name in no other way (passed, kept).
        A file whose text holds the name and does not parse counts as calling it with grad.  A
        `generator` function's body runs where what it returns is iterated: a call bound to a
        name (`gen = iter_preds(...)`) may be iterated with grad on."""
        files = self.files_mentioning(name)
        if not files:
            return False
        here = os.path.realpath(current) if current else None
        calls = 0
        for path in files:
            if here is not None and os.path.realpath(path) == here:
                continue
            modes = self._call_modes(path)
            if modes is None:
                return False
            sites, used, callees, bound = modes
            if name in used or generator and name in bound:
                return False
            for no_grad, caller in sites.get(name, ()):
                if not (no_grad or caller is not None and caller in callees):
                    return False
                calls += 1
        return calls > 0

    def caller_facts(self, module: str, name: str, params: tuple, current: str | None) -> list | None:
        """What the other files of the project pass to top-level function `name` of `module`
        (its parameters `params`: (positional names, keyword-only names)) at each of their calls
        of it, [{param: fact}, ...] (ModuleSummary.call_facts); None where some file may call it
        in a way not followed (a star import, a notebook, a call not understood, the function
        passed or kept) or cannot be read.  Every file whose text holds the
        name is read (files_mentioning: the current file's result then rests on all of them)."""
        from ..reach import imports
        from ..source import DecodeError, decode

        files = self.files_mentioning(name)
        if files is None:
            return None
        entity = self.entity((module, name))
        here = os.path.realpath(current) if current else None
        out: list = []
        for path in files:
            if here is not None and os.path.realpath(path) == here:
                continue
            caller = self.module_name(path) if path.endswith(".py") else None
            if caller is None:
                return None
            digest = self.digest_of(path)
            known = self._import_lists.get(path)
            if known is None or known[0] != digest:
                # (Once a file's content: a file whose every function reports asks for each.)
                data = self.contents(path)
                try:
                    found = imports(decode(data).text, caller, path.endswith("__init__.py")) \
                        if data is not None else None
                except (DecodeError, SyntaxError, ValueError, LookupError):
                    found = None
                known = self._import_lists[path] = (digest, found)
            if known[1] is None:
                return None
            words = []  # what its calls of the function are named (`update_ema(`, `utils.update_ema(`)
            for target, imported, as_name in known[1]:
                whole = target if imported is None else f"{target}.{imported}"
                if imported == "*" and (target == module or module.startswith(target + ".")):
                    return None  # (every name of the module, unseen)
                if imported == name:
                    f = self.fact(whole)
                    if f is not None and f.kind == "function" and f.node is entity:
                        words.append(as_name)
                elif whole == module or module.startswith(whole + "."):
                    words.append(name)  # (`import utils`, `from pkg import utils`, `import pkg`)
            if not words:
                continue  # (another function of that name, a method, or the word in a comment)
            summary = self.summary(caller)
            if summary is None:
                return None
            for word in dict.fromkeys(words):
                found = summary.call_facts(entity, word, params)
                if found is None:
                    return None
                out.extend(found)
        return out

    def _call_modes(self, path: str) -> tuple | None:
        digest = self.digest_of(path)
        found = self._modes.get(path)
        if found is not None and found[0] == digest:
            return found[1]
        data = self.contents(path)
        modes = None
        if data is not None:
            from ..source import DecodeError, decode
            from .gradmode import call_modes

            try:
                modes = call_modes(ast.parse(decode(data).text))
            except (DecodeError, SyntaxError, ValueError, LookupError, RecursionError, MemoryError):
                modes = None
        self._modes[path] = (digest, modes)
        return modes

    def _all_files(self) -> list | None:
        if self._files is None:
            import fnmatch

            from ..reach import DEFAULT_EXCLUDE

            found: list = []
            for top, dirs, names in os.walk(self.root):
                dirs[:] = sorted(d for d in dirs if not any(fnmatch.fnmatch(d, g) for g in DEFAULT_EXCLUDE))
                found.extend(os.path.join(top, n) for n in sorted(names) if n.endswith((".py", ".ipynb")))
                if len(found) > SCAN_LIMIT:
                    found = False
                    break
            self._files = found
        files = self._files
        return None if files is False else files

    def owns(self, qualname: str) -> bool:
        """Whether a qualified name starts with a module of the project."""
        top = qualname.split(".", 1)[0]
        return self.path_of(top) is not None or self.is_package(top)


# A star import at the top level of a module (the only ones walker._star_import follows; not
# those under `if TYPE_CHECKING:` of a package's `__init__.py`).
_TOP_STAR = LazyPattern(rb"(?m)^from[ \t]+[\w.]+[ \t]+import[ \t]+\*")


def _stamp(st) -> str:
    """What stands for a file's content in the summary cache's `stamps` map while it is the same:
    its size, inode and times (ctime too: a tool that puts an mtime back cannot put it back)."""
    return f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}"
