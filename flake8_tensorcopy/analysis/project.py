"""The project: which modules are the user's own, and what they export (whole-project analysis).

- The root is the nearest directory at or above the checked file with a `pyproject.toml`,
  `setup.cfg`, `setup.py` or `.git` (else the current directory; front ends may override it).
- Module names follow the package structure under the root, with or without `__init__.py`
  (namespace packages), and under `src/` for a src layout.  Imports are resolved against them:
  absolute (`import pkg.mod as m`, `from pkg.mod import X`), relative (`from .mod import X`),
  and re-exports through `__init__.py` (`from pkg import X` where `pkg/__init__.py` imports
  `X` from a submodule).  Anything else (installed packages, the standard library) is not the
  project's and stays as the rest of the analysis sees it.
- A module's summary is a walk of its module-level code with rules off: the facts of its names
  at the end (a frozen model built there, a device), and, computed on demand by that module's
  own walker, what its functions return (a `@torch.no_grad()` helper), what its classes are
  (an nn.Module, their attributes, what their methods return, their base classes, wherever
  those live).  Memoised per project; an import cycle terminates (a summary under construction
  reads as unknown).

The importing file's walker binds imported names to `ProjectEntity` facts (kind "class" or
"function", with the entity as `node`), tagged with where they are defined so that messages can
say it (`Critic: an nn.Module, models.py:12`).
"""

from __future__ import annotations

import ast
import os
from contextlib import contextmanager

from .facts import CLASS, FUNCTION, MODULE, UNKNOWN_FACT, Fact

_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def find_root(start: str) -> str:
    """The nearest directory at or above `start` that holds a project marker, else the current
    directory."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    probe = here
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in _ROOT_MARKERS):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return os.getcwd()
        probe = parent


class ProjectEntity:
    """A function or class of another module of the project, as an importing file sees it."""

    __slots__ = ("summary", "name", "node", "kind", "_returns", "_attrs", "_methods", "_bases")

    def __init__(self, summary: ModuleSummary, name: str, node) -> None:
        self.summary = summary
        self.name = name
        self.node = node  # its def in the other module's tree
        self.kind = CLASS if isinstance(node, ast.ClassDef) else FUNCTION
        self._returns = None
        self._attrs = None
        self._methods: dict = {}
        self._bases = None

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.summary.path)}:{self.node.lineno}"

    def describe(self) -> str:
        if self.kind == CLASS:
            fact = self.summary.walker.module_frame.state.env.get(self.name)
            module = fact is not None and "nn_module_class" in fact.tags
            return f"{self.name}: {'an nn.Module' if module else 'a class'}, {self.where}"
        return f"{self.name}(), {self.where}"

    # functions
    def returns(self) -> Fact | None:
        with self.summary.building():
            return self.summary.walker.function_result(self.node, None)

    def returns_for(self, args: dict) -> Fact | None:
        """What it returns when called with parameters `args` ({name: fact}: values that mean
        the same in every module), walked by its own module's walker."""
        with self.summary.building():
            walker = self.summary.walker
            return walker.given_result(self.node, None, args, walker.function_result(self.node, None))

    # classes
    def method_return(self, name: str, hint: tuple | None = None) -> Fact | None:
        with self.summary.building():
            return self.summary.walker.method_result(self.node, name, hint)


class ModuleSummary:
    """What one module of the project defines, from its own walker (module level only)."""

    def __init__(self, project: Project, name: str, path: str, walker, digest: str) -> None:
        self.project = project
        self.name = name
        self.path = path
        self.walker = walker
        self.digest = digest  # content_hash of its bytes
        self.entities: dict = {}
        self.deps: dict = {path: digest}  # it and the project modules its summary read

    @contextmanager
    def building(self):
        """While this module's walker works on demand, what it reads is its dependency too."""
        building = self.project._building
        building.append(self.deps)
        try:
            yield
        finally:
            building.pop()
        self.project.touched.update(self.deps)

    def fact(self, attr: str) -> Fact | None:
        """The fact of module-level name `attr` for an importing file (None: not defined)."""
        frame = self.walker.module_frame
        if frame is None:
            return None
        f = frame.state.env.get(attr)
        if f is None:
            return None
        if f.kind in (CLASS, FUNCTION) and isinstance(f.node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            entity = self.entities.get(attr)
            if entity is None:
                entity = self.entities[attr] = ProjectEntity(self, attr, f.node)
            return f.but(node=entity, tags=f.tags | {"defined:" + entity.describe()})
        if isinstance(f.node, ProjectEntity) or f.node is None:
            if f.kind == MODULE and f.node is None:
                return f.but(tags=f.tags | {f"defined:{attr}, {os.path.basename(self.path)}"})
            return f
        return f.but(node=None)  # an instance of a class of that module: no local definition here


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
        self._building: list = []  # the summaries being built (their dependencies grow)
        self.touched: dict = {}  # path -> content hash of the project modules the current file used

    # ------------------------------------------------------------------ names

    def module_name(self, path: str) -> str | None:
        """The dotted module name of a file under the root (`src/` layouts included)."""
        real = os.path.realpath(path)
        rel = os.path.relpath(real, self.root)
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

    def path_of(self, module: str) -> str | None:
        """The file of project module `module`, or None when it is not the project's."""
        if module in self._paths:
            return self._paths[module]
        found = None
        rel = module.replace(".", os.sep)
        for base in (self.root, os.path.join(self.root, "src")):
            for candidate in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
                if os.path.isfile(candidate):
                    found = candidate
                    break
            if found:
                break
        self._paths[module] = found
        return found

    def is_package(self, module: str) -> bool:
        path = self.path_of(module)
        if path is not None:
            return os.path.basename(path) == "__init__.py"
        rel = module.replace(".", os.sep)
        return any(os.path.isdir(os.path.join(b, rel)) for b in (self.root, os.path.join(self.root, "src")))

    def absolute(self, module: str | None, level: int, current: str | None, current_is_package: bool) -> str | None:
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

    # ------------------------------------------------------------------ summaries

    def summary(self, module: str) -> ModuleSummary | None:
        """The summary of a project module (None: not the project's, unreadable, or being built
        further up an import cycle)."""
        if module in self._summaries:
            summary = self._summaries[module]
            self._touch(summary)
            return summary
        path = self.path_of(module)
        if path is None:
            self._summaries[module] = None
            return None
        self._summaries[module] = None  # an import cycle reads as unknown
        summary = self._build(module, path)
        self._summaries[module] = summary
        self._touch(summary)
        return summary

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

    def _build(self, module: str, path: str) -> ModuleSummary | None:
        from ..source import DecodeError, LineIndex, content_hash, decode  # (the source layer sits below)
        from .walker import Walker

        try:
            with open(path, "rb") as f:
                data = f.read()
            text = decode(data).text
            tree = ast.parse(text)
        except (OSError, DecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        digest = content_hash(data)
        ctx = _Context(LineIndex(text), self.options)
        walker = Walker(tree, [], ctx, project=self, module=module,
                        module_is_package=os.path.basename(path) == "__init__.py")
        deps = {path: digest}
        self._building.append(deps)
        try:
            walker.run_module()
        except RecursionError:
            return None
        finally:
            self._building.pop()
        summary = ModuleSummary(self, module, path, walker, digest)
        summary.deps = deps
        self.built += 1
        return summary

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

    def owns(self, qualname: str) -> bool:
        """Whether a qualified name starts with a module of the project."""
        top = qualname.split(".", 1)[0]
        return self.path_of(top) is not None or self.is_package(top)


class _Context:
    """The little of a rule context a summary walk needs (no rules run there)."""

    def __init__(self, lines, options) -> None:
        self.lines = lines
        self.options = options
        self.walker = None
        self.violations: list = []

    def short(self, node, limit: int = 40) -> str:
        s, e = self.lines.node_span(node)
        t = self.lines.text[s:e]
        return t if len(t) <= limit and "\n" not in t else "<expr>"
