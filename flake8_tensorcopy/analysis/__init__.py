"""The analysis layer every rule asks: one walker (walker.py) that owns control flow and grad
mode and hosts the domains: value facts (evaluate.py over the lattice of facts.py: "may require
grad", "may be on an accelerator", "a torch tensor for certain", "a leaf", "a module"), GAN
provenance (gan.py) and storage and aliases (storage.py)."""

from .astutil import dotted_name
from .facts import Device, Fact, Grad
from .walker import Walker

__all__ = ["Device", "Fact", "Grad", "Walker", "dotted_name", "make_domains"]


def make_domains(keys, options) -> list:
    """The domains the enabled rules ask, by key."""
    out = []
    if "gan" in keys:
        from .gan import GanDomain

        out.append(GanDomain(options))
    if "storage" in keys:
        from .storage import StorageDomain

        out.append(StorageDomain())
    if "snapshots" in keys or "accumulators" in keys:
        from .snapshots import domains_for

        out.extend(domains_for(keys, options))
    return out
