"""Rule families.  Every module in this package is imported, and every `Rule` subclass with a
code registers itself: adding a rule is writing one file (or one class in a family's file)."""

import importlib
import pkgutil

from .base import Rule, all_rules, get_rule

for _info in pkgutil.iter_modules(__path__):
    if _info.name != "base" and not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["Rule", "all_rules", "get_rule"]
