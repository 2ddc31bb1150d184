"""Which rules run, and on which files: the one prefix selector and the per-path selection.

Every front end selects through here (the CLI and the editor server from `[tool.tensorcopy]` and
flags, the codemod and the engine's default from their arguments); the flake8 plugin leaves
selection to flake8, whose rule within one layer is the same.

- A selector is a code prefix (`TNS`, `TNS2`, `TNS201`) or `ALL`.  Within one layer of
  (select, ignore, extend-select) the most specific matching prefix decides, and `ignore` wins
  a tie (ruff's rule, and flake8's); `ALL` is less specific than any prefix.
- A layer that sets `select` starts afresh; one that does not adjusts what the layers under it
  enabled (ruff's rule for a command line over a configuration file).  Nothing set: every `TNS`
  code.
- `per-file-ignores` then take away, from the files a glob matches, every code one of its
  prefixes matches, however specific the selection was (as in ruff and flake8).
"""

from __future__ import annotations

import fnmatch
import os

from .model import INTERNAL
from .rules.base import all_rules, get_rule


def known_codes() -> list:
    """Every code a selector may name: the rules', and TNS000 ("file not analysed")."""
    return [cls.code for cls in all_rules()] + [INTERNAL]


def _specificity(code: str, selectors) -> int:
    """How specifically the most specific of `selectors` that matches `code` names it; -1: none."""
    return max((0 if s == "ALL" else len(s) for s in selectors if s == "ALL" or code.startswith(s)), default=-1)


def select_codes(layers, codes=None) -> tuple:
    """The codes (of `codes`, default every known one) enabled by (select, ignore, extend_select)
    layers, the later one on top.  Selectors are matched case-insensitively."""
    codes = known_codes() if codes is None else list(codes)
    enabled = {c for c in codes if c.startswith("TNS")}
    for select, ignore, extend_select in layers:
        selectors = [s.upper() for s in (*(select or ()), *(extend_select or ()))]
        ignore = [s.upper() for s in ignore or ()]
        base = set() if select else enabled
        new = set()
        for code in codes:
            s, i = _specificity(code, selectors), _specificity(code, ignore)
            if s > i or (code in base and i < 0):
                new.add(code)
        enabled = new
    return tuple(c for c in codes if c in enabled)


def select_rules(select=None, ignore=None, extend_select=None) -> list:
    """The rule classes one layer of selectors enables (nothing given: every rule)."""
    return [get_rule(c) for c in select_codes([(select, ignore, extend_select)], [cls.code for cls in all_rules()])]


# --------------------------------------------------------------------------- paths


def inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, os.path.abspath(root)]) == os.path.abspath(root)
    except ValueError:  # different drives
        return False


def path_matches(path: str, pattern: str, root: str) -> bool:
    """Whether a glob from the configuration matches `path` (relative to `root`, or its name)."""
    full = os.path.abspath(path)
    rel = os.path.relpath(full, root) if inside(full, root) else full
    rel = rel.replace(os.sep, "/")
    pat = pattern.replace(os.sep, "/").rstrip("/")
    if pat.startswith("./"):
        pat = pat[2:]
    base = rel.rsplit("/", 1)[-1]
    return (
        fnmatch.fnmatch(rel, pat)
        or fnmatch.fnmatch(base, pat)
        or fnmatch.fnmatch(rel, f"{pat}/*")  # a directory and everything in it
        or fnmatch.fnmatch(rel, f"*/{pat}")
        or fnmatch.fnmatch(rel, f"*/{pat}/*")
    )


def ignored_prefixes(path: str, per_file_ignores, root: str) -> tuple:
    """The code prefixes `per-file-ignores` turns off for `path`.  An entry is (glob, codes), its
    glob relative to `root`, or (glob, codes, its own root) (one from the command line: the
    current directory)."""
    out: list[str] = []
    for entry in per_file_ignores:
        if path_matches(path, entry[0], entry[2] if len(entry) > 2 else root):
            out.extend(entry[1])
    return tuple(out)


class Selection:
    """What a run checks: the selected codes, whether TNS000 ("file not analysed") is reported,
    and the per-file ignores, whose globs are relative to `root` unless an entry names its own."""

    __slots__ = ("codes", "internal", "per_file_ignores", "root")

    def __init__(self, codes, internal: bool = True, per_file_ignores=(), root: str = ".") -> None:
        self.codes = tuple(codes)
        self.internal = internal
        self.per_file_ignores = per_file_ignores
        self.root = root

    def for_path(self, path: str | None) -> PathSelection:
        """The selection for one file (None: a buffer without a path, which no glob matches)."""
        ignored = ignored_prefixes(path, self.per_file_ignores, self.root) if path else ()
        return PathSelection(self, ignored)


class PathSelection:
    """The rules that run on one file, and which of its findings are reported."""

    __slots__ = ("rules", "ignored", "internal")

    def __init__(self, selection: Selection, ignored: tuple) -> None:
        self.ignored = ignored
        self.internal = selection.internal
        self.rules = [r for r in (get_rule(c) for c in selection.codes if not c.startswith(ignored)) if r is not None]

    def keep(self, violations) -> list:
        """The findings reported: TNS000 comes from the engine whatever the rules, so it is
        selected, and per-file ignored, here."""
        return [v for v in violations
                if not v.code.startswith(self.ignored) and (v.code != INTERNAL or self.internal)]
