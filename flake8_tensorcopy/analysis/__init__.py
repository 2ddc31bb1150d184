"""The analysis layer every rule asks: one walker (walker.py) that owns control flow and grad
mode and hosts the domains: value facts (evaluate.py over the lattice of facts.py: "may require
grad", "may be on an accelerator", "a torch tensor for certain", "a leaf", "a module"), GAN
provenance (gan.py) and storage and aliases (storage.py)."""

from .astutil import dotted_name
from .facts import Device, Fact, Grad
from .names import may_be_gan as _may_be_gan
from .walker import Walker, any_admitted

__all__ = ["Device", "Fact", "Grad", "Walker", "any_admitted", "dotted_name", "make_domains"]


def make_domains(keys, options, text: str | None = None) -> list:
    """The domains the enabled rules ask, by key, that may find something in a file of `text`
    (the GAN domain, which finds nothing where no names give roles, is not even imported)."""
    out = []
    if "gan" in keys and (text is None or _may_be_gan(text, options)):
        from .gan import GanDomain

        out.append(GanDomain(options, screened=text is not None))
    if "storage" in keys:
        from .storage import StorageDomain

        out.append(StorageDomain())
    if "snapshots" in keys or "accumulators" in keys:
        from .snapshots import domains_for

        out.extend(domains_for(keys, options))
    return out
