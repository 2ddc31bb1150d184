"""The analysis layer every rule asks: imports and aliases, grad-mode regions, and local data
flow facts ("may require grad", "may be on an accelerator", "is a leaf", "is a module")."""

from .facts import Device, Fact, Grad
from .flow import Analyzer, dotted_name

__all__ = ["Analyzer", "Device", "Fact", "Grad", "dotted_name"]
