"""The LibCST codemod front end:

    python -m libcst.tool codemod -x flake8_tensorcopy.codemod.TensorCopyFix --no-format PATH

Or add `flake8_tensorcopy` to `modules` in the repository's `.libcst.codemod.yaml` (created by
`python -m libcst.tool initialize .`); `python -m libcst.tool list` then lists it.  LibCST's own
options (`-j`, `--include-generated`, `--no-format`, ...) work as with any codemod.
`--no-format`: without it LibCST pipes every file it touches through its configured formatter
(black by default), which fails when black is not installed and reformats the whole file when
it is.

The codemod applies exactly the fixes `tensorcopy fix` applies, so the two write the same bytes:
- the settings are the file's `[tool.tensorcopy]` (its closest pyproject.toml, as the editor
  server finds it: select, ignore, per-file-ignores, exclude, strict, GAN names, numpy-fix,
  unsafe-fixes), with `--select`, `--ignore`, `--unsafe-fixes` and `--numpy-fix` over it as on
  the command line; whole-project analysis uses the file's project;
- findings come from the engine (detection runs on `ast`), and the fixes are written out by
  the same lowering as the CLI's, on the tree LibCST hands over: a fix that restructures code
  is made on that tree's nodes (positions resolved once, and only for a file with such a fix)
  rather than on a parse of its own.  Fixes whose applying uncovers more (nested calls) take
  further passes over the fixed text, as in `tensorcopy fix`.
"""

from __future__ import annotations

import argparse
import os

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from . import config as _config
from .engine import fix_text
from .lowering import Concrete
from .selection import path_matches


def _codes(flag: str, allow_all: bool = False):
    """An argparse type: comma-separated code prefixes, checked as `tensorcopy` checks them."""

    def parse(value: str) -> list[str]:
        try:
            return [_config.check_code(v, flag, allow_all=allow_all) for v in value.split(",") if v.strip()]
        except _config.ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


class TensorCopyFix(CodemodCommand):
    DESCRIPTION = "Apply flake8-tensorcopy fixes (TNS codes): safe ones, or unsafe too with --unsafe-fixes."

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        # None: not given, the configuration decides (as with `tensorcopy fix`).
        arg_parser.add_argument("--unsafe-fixes", action="store_true", default=None,
                                help="also apply fixes marked unsafe")
        arg_parser.add_argument("--select", type=_codes("--select", allow_all=True), default=None,
                                help="code prefixes to fix")
        arg_parser.add_argument("--ignore", type=_codes("--ignore"), default=None, help="code prefixes not to fix")
        arg_parser.add_argument("--numpy-fix", choices=_config.NUMPY_FIXES, default=None)

    def __init__(self, context: CodemodContext, unsafe_fixes: bool | None = None, select=None, ignore=None,
                 numpy_fix: str | None = None) -> None:
        super().__init__(context)
        self.flags = {"select": select, "ignore": ignore or (), "unsafe_fixes": unsafe_fixes, "numpy_fix": numpy_fix}
        self._settings: dict = {}  # pyproject.toml (or None) -> Settings
        self._projects: dict = {}  # project root -> analysis.project.Project

    def settings(self, path: str):
        """The settings for the file at `path` (its configuration, the flags over it)."""
        found = _config.find(path)
        if found not in self._settings:
            cfg = _config.load(found) if found else _config.Config(root=os.path.dirname(path))
            self._settings[found] = _config.resolve(cfg, **self.flags)
        return self._settings[found]

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        from .analysis.project import Project
        from .reach import find_root

        path = os.path.abspath(self.context.filename or "<stdin>")
        settings = self.settings(path)
        if any(path_matches(path, g, settings.root) for g in (*settings.exclude, *settings.extend_exclude)):
            raise SkipFile("excluded by [tool.tensorcopy]")
        rules = settings.selection.for_path(path).rules
        root = os.path.realpath(find_root(path))
        project = self._projects.get(root)
        if project is None:
            project = self._projects[root] = Project(root, settings.options)
        project.options = settings.options
        project.begin()
        source = tree.code
        result = fix_text(source, rules, settings.options, unsafe=settings.unsafe_fixes, project=project,
                          path=path if self.context.filename else None, concrete=Concrete(tree))
        if result.error:
            raise SkipFile(result.error)
        for v in result.remaining:
            self.warn(f"{v.line}:{v.col + 1}: {v.code} {v.message}")
        if result.text == source:
            return tree
        # LibCST's contract is a tree; the fixed text is the CLI's, and this is its tree.
        return cst.parse_module(result.text)
