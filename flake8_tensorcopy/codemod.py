"""LibCST codemod front end: `python -m libcst.tool codemod --no-format codemod.TensorCopyFix PATH`.

Add `flake8_tensorcopy` to `modules` in the repository's `.libcst.codemod.yaml` (created by
`python -m libcst.tool initialize .`); `python -m libcst.tool list` then lists it.  The codemod
applies exactly the fixes `tensorcopy fix` applies (same engine, same selection and safety
rules), so the two never disagree.  `--no-format`: without it LibCST pipes every file it
touches through its configured formatter (black by default), which fails when black is not
installed and reformats the whole file when it is.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from .engine import fix_text, select_rules
from .rules.base import Options


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


class TensorCopyFix(CodemodCommand):
    DESCRIPTION = "Apply flake8-tensorcopy fixes (TNS codes): safe ones, or unsafe too with --unsafe-fixes."

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--unsafe-fixes", action="store_true", default=False,
                                help="also apply fixes marked unsafe")
        arg_parser.add_argument("--select", type=_csv, default=None, help="code prefixes to fix")
        arg_parser.add_argument("--ignore", type=_csv, default=None, help="code prefixes not to fix")
        arg_parser.add_argument("--numpy-fix", choices=("detach", "force"), default="detach")

    def __init__(self, context: CodemodContext, unsafe_fixes: bool = False, select=None, ignore=None,
                 numpy_fix: str = "detach") -> None:
        super().__init__(context)
        self.unsafe = unsafe_fixes
        self.rules = select_rules(select, ignore)
        self.options = Options(numpy_fix=numpy_fix)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        source = tree.code
        result = fix_text(source, self.rules, self.options, unsafe=self.unsafe)
        if result.error:
            raise SkipFile(result.error)
        for v in result.remaining:
            self.warn(f"{v.line}:{v.col + 1}: {v.code} {v.message}")
        if result.text == source:
            return tree
        return cst.parse_module(result.text)
