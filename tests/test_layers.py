"""The package is built in layers (issue 16): no module imports from a layer above its own, and
no two modules import each other.

Every import counts: at the top of a module or inside a function (an import done late is still
a dependency); only a block under `if TYPE_CHECKING:` is exempt, since it never runs.  A module
missing from the table fails the test: a new module is placed in a layer when it is written.
"""

from __future__ import annotations

import ast
import os

import pytest

from conftest import ROOT

PACKAGE = "flake8_tensorcopy"

# Bottom to top.  A package (`analysis`, `rules`) places every module in it.
LAYERS = {
    # 1. The data model and the source layer.
    "": 1,  # the package itself: its version
    "model": 1,
    "intents": 1,  # fix intents: what a fix means, before it is text
    "source": 1,
    "fixes": 1,  # edits from ast nodes, what rules build their fixes with
    "links": 1,
    "reach": 1,  # which files use torch through their project's modules, by text
    # 2. The analysis.
    "analysis": 2,
    # 3. The rules (detection, message, fix), with a read-only Context.
    "rules": 3,
    # 4. The engine: selection, lint (with noqa), the fix loop, lowering intents to edits.
    "selection": 4,
    "noqa": 4,
    "engine": 4,
    "lowering": 4,
    "through": 4,  # findings through calls of the project's functions (engine.py asks it)
    # 5. The front ends.
    "plugin": 5,
    "cli": 5,
    "__main__": 5,
    "codemod": 5,
    "lsp": 5,
    "notebook": 5,
    "output": 5,
    "config": 5,
    "cache": 5,
    "docs": 5,
}


def _modules() -> dict:
    """Dotted module name (without the package's) -> path, for every module of the package."""
    top = os.path.join(ROOT, PACKAGE)
    found = {}
    for directory, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(directory, name), top)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                found[".".join(rel)] = os.path.join(directory, name)
    return found


MODULES = _modules()


def layer(module: str) -> int | None:
    """A module's layer: its own entry, or its top-level package's."""
    return LAYERS.get(module, LAYERS.get(module.split(".")[0]))


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"
        or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import statement, at any depth, except those under `if TYPE_CHECKING:`."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                todo.extend(child.orelse)
            else:
                todo.append(child)


def imported_by(module: str) -> set:
    """The package's modules `module` imports (a name imported from a package is the package's,
    unless it is a module of that package)."""
    path = MODULES[module]
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    package = [p for p in package if p]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif node.level:
            base = package[: len(package) - (node.level - 1)]
            targets = [".".join([PACKAGE, *base, *([node.module] if node.module else []), a.name])
                       for a in node.names]
        else:
            targets = [f"{node.module}.{a.name}" for a in node.names]
        for target in targets:
            parts = target.split(".")
            if parts[0] != PACKAGE:
                continue
            name = ".".join(parts[1:])
            while name not in MODULES:  # `from .engine import lint_text`: the module engine
                name = name.rpartition(".")[0]
            if name != module:
                out.add(name)
    return out


IMPORTS = {m: imported_by(m) for m in MODULES}


def test_every_module_has_a_layer():
    unplaced = sorted(m or PACKAGE for m in MODULES if layer(m) is None)
    assert not unplaced, f"place these modules in a layer (tests/test_layers.py, LAYERS): {unplaced}"


@pytest.mark.parametrize("module", [pytest.param(m, id=m or PACKAGE) for m in sorted(MODULES)])
def test_no_import_from_a_layer_above(module):
    own = layer(module)
    above = sorted(f"{m or PACKAGE} (layer {layer(m)})" for m in IMPORTS[module] if layer(m) and own
                   and layer(m) > own)
    assert not above, f"{module or PACKAGE} (layer {own}) imports from above: {above}"


def test_no_two_modules_import_each_other():
    pairs = sorted({tuple(sorted((a, b))) for a in IMPORTS for b in IMPORTS[a] if a in IMPORTS.get(b, ())})
    assert not pairs, f"modules that import each other: {pairs}"


def test_the_test_sees_imports_at_any_depth_and_not_under_type_checking():
    # The walk itself: a late import inside a function counts; one for type checkers does not.
    tree = ast.parse("import os\nif TYPE_CHECKING:\n    import typing\ndef f():\n    from . import engine\n")
    assert sorted(n.names[0].name for n in _imports(tree)) == ["engine", "os"]
    assert "engine" in IMPORTS["cli"] and "rules.base" in IMPORTS["engine"]
