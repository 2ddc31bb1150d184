"""Whether a file uses torch through its project's modules, by text alone.

A file that never mentions torch can still hold torch's hazards: `from .models import build`
and `build()(x).numpy()`.  Every front end skips the analysis of a file without "torch" in it
(the flake8 plugin before it even imports the engine), so this module, which imports nothing
of ours, answers first: does the file import a module of its project that imports torch at
its top level, directly or through packages that re-export it (`from pkg import build`, with
`from .models import build` in `pkg/__init__.py`), or a class whose bases come from one (`from
.replay import ReplayBuffer`, with `class ReplayBuffer(BaseBuffer)` and `from .base import
BaseBuffer` there)?  Modules that import torch only under a
condition or in functions (a framework that supports torch among others) and the modules
those import are not followed: in transformers, nearly every module would lead to torch.  The
project's root and module names are the ones whole-project analysis uses (analysis/project.py).
"""

from __future__ import annotations

import os
import re

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
# The paths a run skips unless told otherwise (the CLI's built-in `exclude`, globs of names); the
# project's own files (analysis/project.py: `Project.files_mentioning`) are looked for outside them.
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".eggs", "__pycache__",
    "build", "dist", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tensorcopy_cache", "*.egg-info", ".ipynb_checkpoints",
)
_DEPTH = 4  # import levels followed from the file: its imports, and packages' re-exports
_FROM = (r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\(|[^\n#;]*)", re.M)
_NAMES_SPAN = 10_000  # how far a parenthesized list of imported names may run (an unclosed one
# in a broken file would make every `from m import (` read to the end of the text)
_IMPORT = (r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_CLASS = (r"class[ \t]+(\w+)[ \t]*\(([^)]*)\)", 0)  # a class at the top level, and its bases
_DEFINED = (r"(?:class|def|async[ \t]+def)[ \t]+(\w+)", 0)  # a class or function at the top level
# `import torch` / `from torch import nn` at a module's top level (not indented: a framework that
# supports torch among others imports it under `if is_torch_available():` or in functions, and
# its modules that do not use torch themselves import those).
_TOP_LEVEL_TORCH = (rb"^(?:import[ \t]+torch\b|from[ \t]+torch\b|import[ \t][^\n#;]*[ \t,]torch\b)", re.M)
# (root, path) -> (size, mtime, imports torch at its top level, what it imports, the generation it
# was last checked against its size and mtime in)
_SCANNED: dict = {}
# Where each project's modules are and each directory's root, as first found in this process: a
# flake8 run asks the same ones for file after file.  A long-lived front end (the editor
# server) calls `forget()` when a file of a project is created, changed or deleted.
_PATHS: dict = {}  # (root, module) -> module_path(root, module)
_ROOTS: dict = {}  # directory of a checked file -> the real path of its root
_LISTINGS: dict = {}  # directory -> (names of its files, names of its directories)
_MARKED: dict = {}  # directory -> whether it holds a project marker (find_root)
_NAMES: dict = {}  # (root, path) -> module_name(root, path)
_PARENTS: dict = {}  # (root, package) -> _parents(root, package)
_REAL: dict = {}  # a root as given -> its real path
_REAL_DIRS: dict = {}  # a file's directory as given -> its real path (_realpath)
_GENERATION = [0]  # bumped by forget(): a _SCANNED entry checked in this one is not stat'ed again
_COMPILED: dict = {}


def _re(pattern: tuple):
    """The compiled form of `pattern` ((source, flags)), compiled on first use: the engine imports
    this module on every start, and most files mention torch.  (Not source.LazyPattern: the
    flake8 plugin imports this module alone for a file that never mentions torch, and source.py
    with the data model would add 0.7 ms to each such run.)"""
    found = _COMPILED.get(pattern)
    if found is None:
        found = _COMPILED[pattern] = re.compile(*pattern)
    return found


def find_root(start: str) -> str:
    """The nearest directory at or above `start` that holds a project marker, else the current
    directory."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    probe = here
    while True:
        # (Kept a directory: the files of one project share their parents' answers.)
        marked = _MARKED.get(probe)
        if marked is None:
            marked = _MARKED[probe] = any(os.path.exists(os.path.join(probe, m)) for m in ROOT_MARKERS)
        if marked:
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return os.getcwd()
        probe = parent


def module_name(root: str, path: str) -> str | None:
    """The dotted module name of a file under `root` (`src/` layouts included), or None."""
    key = (root, path)
    found = _NAMES.get(key, _NAMES)
    if found is _NAMES:
        found = _NAMES[key] = _module_name(root, path)
    return found


def _realpath(path: str) -> str:
    """os.path.realpath(path), resolving each directory once: a file's own name is a link to
    follow or not (one `lstat`, where realpath makes one a component of the path)."""
    directory, name = os.path.split(path)
    real = _REAL_DIRS.get(directory)
    if real is None:
        real = _REAL_DIRS[directory] = os.path.realpath(directory)
    full = os.path.join(real, name)
    return os.path.realpath(full) if not name or name in (".", "..") or os.path.islink(full) else full


def _module_name(root: str, path: str) -> str | None:
    rel = os.path.relpath(_realpath(path), root)
    if rel.startswith(".."):
        return None
    parts = rel.split(os.sep)
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if not parts[-1].endswith(".py"):
        return None
    parts[-1] = parts[-1][:-3]
    if parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def module_path(root: str, module: str) -> str | None:
    """The file of module `module` under `root` (or `root/src`), or None."""
    rel = module.replace(".", os.sep)
    for base in (root, os.path.join(root, "src")):
        for candidate in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def absolute(module: str | None, level: int, current: str | None, current_is_package: bool) -> str | None:
    """The absolute name of an imported module (`from ..x import y` in `current`)."""
    if level == 0:
        return module
    if current is None:
        return None
    parts = current.split(".")
    if not current_is_package:
        parts = parts[:-1]
    if level > 1:
        if level - 1 > len(parts):
            return None
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    if module:
        return f"{base}.{module}" if base else module
    return base or None


# imports() of the last text it was asked of: what the text's import lines say, and what they
# import as each (current module, is a package) resolves them.  The engine's
# torch_through_project, through.sink_calls, through.imported_triggers and the rules' names of
# torch and NumPy ask the same file's text, some as its module and some as no module (one tuple,
# read and written whole).
_LAST_IMPORTS = [(None, None, None)]


def imports(text: str, current: str | None, is_package: bool) -> list:
    """What `text` imports, as (absolute module, name, local name): `from .m import x as y` in
    `current` is ("<package>.m", "x", "y"); `import a.b as c` is ("a.b", None, "c"); `from m
    import *` is ("m", "*", "*").  (The list is shared by the callers that ask the same text:
    not to be changed.)"""
    if "import" not in text:
        return []
    seen, lines, by_args = _LAST_IMPORTS[0]
    if seen is not text:
        lines, by_args = _import_lines(text), {}
        _LAST_IMPORTS[0] = (text, lines, by_args)
    key = (current, is_package)
    found = by_args.get(key)
    if found is None:
        found = by_args[key] = _resolved(lines, current, is_package)
    return found


def runtime_imports(text: str, current: str | None, is_package: bool) -> list:
    """`imports(...)` less those of an `if TYPE_CHECKING:` block, which do not run (`__init__.py`
    files that import every module of their package for type checkers only, and load them
    lazily): nothing the file calls or runs comes from them."""
    found = imports(text, current, is_package)
    if not found or "TYPE_CHECKING" not in text:
        return found
    seen, asked, kept = _LAST_RUNTIME[0]
    if seen is text and asked == (current, is_package):
        return kept
    blocks = _type_checking_blocks(text)
    kept = found if not blocks else _imports(text, current, is_package,
                                               lambda at: any(a <= at < b for a, b in blocks))
    _LAST_RUNTIME[0] = (text, (current, is_package), kept)
    return kept


_LAST_RUNTIME: list = [(None, None, None)]
# `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`), a comment after it, on a line of its own.
_TYPE_CHECKING_IF = (r"[ \t]*if[ \t]+(?:typing[ \t]*\.[ \t]*)?TYPE_CHECKING[ \t]*:[ \t]*(?:#[^\n]*)?(?:\n|$)", 0)


def _type_checking_blocks(text: str) -> list:
    """The (start, end) offsets of the bodies of the `if TYPE_CHECKING:` statements of `text`:
    the lines after one that are indented more than it (blank and comment lines within), up
    to the first that is not (its `else:`)."""
    blocks = []
    match = _re(_TYPE_CHECKING_IF).match
    i = text.find("TYPE_CHECKING")
    while i != -1:
        start = text.rfind("\n", 0, i) + 1
        m = match(text, start) if not blocks or start >= blocks[-1][1] else None  # (not one inside the last)
        if m is not None:
            indent = len(text[start:m.end()]) - len(text[start:m.end()].lstrip(" \t"))
            at = end = m.end()
            while at < len(text):
                nxt = text.find("\n", at)
                line = text[at:nxt if nxt != -1 else len(text)]
                body = line.lstrip(" \t")
                if body and not body.startswith("#"):
                    if len(line) - len(body) <= indent:
                        break
                    end = nxt + 1 if nxt != -1 else len(text)
                if nxt == -1:
                    break
                at = nxt + 1
            if end > m.end():
                blocks.append((m.end(), end))
        i = text.find("TYPE_CHECKING", i + 13)
    return blocks


def _imports(text: str, current: str | None, is_package: bool, skip=None) -> list:
    return _resolved(_import_lines(text, skip), current, is_package)


def _import_lines(text: str, skip=None) -> tuple:
    """(the `from` imports of `text` as (dots, module or "", the names' text), the names' texts
    of its plain imports), as they are written: what does not depend on the module of `text`."""
    # The lines that mention `import`, each matched from its start: what `finditer` would find
    # (both patterns start at a line's start and read to `import` on that line), without trying
    # the patterns at every position of the text (a tenth of the time, on a large file).
    froms, plain = [], []
    from_at, import_at = _re(_FROM).match, _re(_IMPORT).match
    last = -1
    i = text.find("import")
    while i != -1:
        start = text.rfind("\n", 0, i) + 1
        if start != last and skip is not None and skip(start):
            last = start  # (`skip`: a line not to read, runtime_imports)
        elif start != last:
            last = start
            m = from_at(text, start)
            if m is not None:
                names = m.group(3)
                if names == "(":
                    close = text.find(")", m.end(), m.end() + _NAMES_SPAN)
                    names = text[m.end() : close] if close != -1 else None
                if names is not None:
                    froms.append((len(m.group(1)), m.group(2), names))
            else:
                m = import_at(text, start)
                if m is not None:
                    plain.append(m.group(1))
        i = text.find("import", i + 6)
    return froms, plain


def _resolved(lines: tuple, current: str | None, is_package: bool) -> list:
    """`_import_lines`' imports as `imports` gives them, in module `current`."""
    froms, plain = lines
    out = []
    for dots, module, names in froms:
        module = absolute(module or None, dots, current, is_package)
        if not module:
            continue
        for part in names.strip("()").split(","):
            words = part.split()
            if words and (words[0] == "*" or words[0].isidentifier()):
                out.append((module, words[0], words[-1]))
    for names in plain:
        for part in names.split(","):
            words = part.split()
            if words:
                out.append((words[0], None, words[-1]))
    return out


def _scan(root: str, path: str, module: str) -> tuple:
    """(whether the module `module` at `path` imports torch at its top level, {local name:
    (module, name)} of what it imports, {class: names of its bases} of the classes at its top
    level), as of the file's size and mtime when this generation first asked (forget())."""
    key = (root, path)
    found = _SCANNED.get(key)
    if found is not None and found[5] == _GENERATION[0]:
        return found[2], found[3], found[4]
    try:
        st = os.stat(path)
        if found is not None and found[0] == st.st_size and found[1] == st.st_mtime_ns:
            _SCANNED[key] = (*found[:5], _GENERATION[0])
            return found[2], found[3], found[4]
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False, {}, {}
    top = _imports_torch(data)
    names: dict = {}
    bases: dict = {}
    if not top:
        text = data.decode("utf-8", "replace")
        for origin, name, local in imports(text, module, os.path.basename(path) == "__init__.py"):
            names.setdefault(local, []).append((origin, name))
        # (Each `class` and `def` at a line's start tried, not the pattern at every position of
        # the text.)  A function, or a class without bases, has none: the name is its own.
        header, defined = _re(_CLASS).match, _re(_DEFINED).match
        for word in ("class ", "def ", "async "):
            starts = [0] if text.startswith(word) else []
            i = text.find("\n" + word)
            while i != -1:
                starts.append(i + 1)
                i = text.find("\n" + word, i + 1)
            for start in starts:
                m = header(text, start) if word == "class " else None
                if m is not None:
                    bases[m.group(1)] = [b.strip().split(".", 1)[0] for b in m.group(2).split(",") if b.strip()]
                elif (m := defined(text, start)) is not None:
                    bases.setdefault(m.group(1), [])
    _SCANNED[key] = (st.st_size, st.st_mtime_ns, top, names, bases, _GENERATION[0])
    return top, names, bases


def _imports_torch(data: bytes) -> bool:
    """Whether `data` imports torch at its top level: the pattern matched at the start of each
    line that mentions torch (searched for, it is tried at every position of a file that
    mentions torch only in guards and strings: five times as long over transformers' modules)."""
    match = _re(_TOP_LEVEL_TORCH).match
    last = -1
    at = data.find(b"torch")
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        if start != last:
            last = start
            if match(data, start) is not None:
                return True
        at = data.find(b"torch", at + 5)
    return False


def forget() -> None:
    """Drop what this process found of where modules and roots are, and of which files it has
    read are unchanged."""
    _PATHS.clear()
    _ROOTS.clear()
    _LISTINGS.clear()
    _MARKED.clear()
    _NAMES.clear()
    _PARENTS.clear()
    _REAL.clear()
    _REAL_DIRS.clear()
    _GENERATION[0] += 1


def _listing(directory: str) -> tuple:
    found = _LISTINGS.get(directory)
    if found is None:
        files, dirs = set(), set()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        if entry.is_file():
                            files.add(entry.name)
                        elif entry.is_dir():
                            dirs.add(entry.name)
                    except OSError:
                        pass
        except OSError:
            pass
        found = _LISTINGS[directory] = (files, dirs)
    return found


def _parents(root: str, package: str) -> tuple:
    """The directories a module of package `package` ("" at the top) may be in: under `root`,
    then under `root/src` (kept: most names asked are of a few packages)."""
    key = (root, package)
    found = _PARENTS.get(key)
    if found is None:
        parts = package.split(".") if package else ()
        found = _PARENTS[key] = tuple(os.path.join(base, *parts) for base in (root, os.path.join(root, "src")))
    return found


def _module_path(root: str, module: str) -> str | None:
    """module_path(root, module), from one listing a directory: `from pkg import a, b, c` asks
    whether each name is a module of `pkg`, four file tests a name."""
    key = (root, module)
    found = _PATHS.get(key, _PATHS)
    if found is _PATHS:
        found = None
        package, _, last = module.rpartition(".")
        for parent in _parents(root, package):
            files, dirs = _listing(parent)
            if last + ".py" in files:
                found = os.path.join(parent, last + ".py")
                break
            if last in dirs and "__init__.py" in _listing(os.path.join(parent, last))[0]:
                found = os.path.join(parent, last, "__init__.py")
                break
        _PATHS[key] = found
    return found


def torch_through_project(text: str, path: str | None, root: str | None = None, looked: list | None = None) -> bool:
    """Whether the file of `text` at `path` imports, from a module of its project (under `root`,
    else the root find_root gives), a module that imports torch at its top level, or a name
    such a module defines (followed through re-exports: `from pkg import build`).  The files
    read for the answer go to `looked` (what the answer depends on, for a result cache)."""
    if not path or "import" not in text:
        return False
    if root is None:
        where = os.path.dirname(path)
        root = _ROOTS.get(where)
        if root is None:
            root = _ROOTS[where] = os.path.realpath(find_root(path))
    else:
        real = _REAL.get(root)
        if real is None:
            real = _REAL[root] = os.path.realpath(root)
        root = real
    todo = [(module, name, 0) for module, name, _local in
            runtime_imports(text, module_name(root, path), os.path.basename(path) == "__init__.py")]
    # (module, name) -> the least depth it was searched at: one met again nearer the file is
    # searched again, further (else the answer would depend on which import was searched first).
    seen: dict = {}
    listed = set(looked) if looked else set()  # (what `looked` holds: a list, slow to search)
    while todo:
        module, name, depth = todo.pop()
        if seen.get((module, name), _DEPTH) <= depth:
            continue
        seen[(module, name)] = depth
        if name is not None and name != "*" and _module_path(root, f"{module}.{name}") is not None:
            module, name = f"{module}.{name}", None  # `from pkg import models`: a module
        found = _module_path(root, module)
        if found is None:
            continue
        if looked is not None and found not in listed:
            listed.add(found)
            looked.append(found)
        top, names, bases = _scan(root, found, module)
        if top:
            return True
        if name is None or depth + 1 >= _DEPTH:
            continue
        # For a class it defines, where it got the class's bases from (`class
        # ReplayBuffer(BaseBuffer)`, with BaseBuffer of a module that imports torch); for a name
        # it does not define, where it got it from (a re-export), or any module it star-imports.
        # (A name it defines is its own: not an import of the name elsewhere in its text, in a
        # function or an example, `from transformers import AutoTokenizer` in the module that
        # defines `class AutoTokenizer:`.)
        own = bases.get(name)
        if own is None:
            for origin, origin_name in names.get(name, []) + (names.get("*", []) if name != "*" else []):
                todo.append((origin, name if origin_name == "*" else origin_name, depth + 1))
        for base in own or ():
            for origin, origin_name in names.get(base, []):
                todo.append((origin, origin_name, depth + 1))
    return False
