"""Rule families.  Every module in this package is imported, and every `Rule` subclass with a
code registers itself: adding a rule is writing one file (or one class in a family's file)."""

import importlib
import os

from .base import Rule, all_rules, get_rule

# A listing, not pkgutil.iter_modules: pkgutil imports typing, a few ms of every start.
for _name in sorted(n[:-3] for n in os.listdir(__path__[0]) if n.endswith(".py")):
    if _name != "base" and not _name.startswith("_"):
        importlib.import_module(f"{__name__}.{_name}")

__all__ = ["Rule", "all_rules", "get_rule"]
