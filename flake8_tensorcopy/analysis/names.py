"""Words of names, and whether a file's names may give GAN roles at all: a look at the text
that the engine takes before the GAN domain (gan.py, a large module) is imported or set up.

Roles come from words (`netG_A2B` -> net, g, a, 2, b; `optimizerD` -> optimizer, d): a file
where no name mentions a generator and none a discriminator (or is configured as one), and that
does not have two optimizers' `.parameters(` and a backward (whose modules give roles by what
feeds what), has none.
"""

from __future__ import annotations

from ..source import LazyPattern

G, D = "G", "D"

IDENT = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
# A number with a `d` (`conv1d`, `Dropout2d`, `Conv3D`) is one word, a dimension: not a `d`.
_WORD = LazyPattern(r"\d+[dD](?![a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
G_WORDS = frozenset({"g", "gen", "generator", "generators", "netg"})
D_WORDS = frozenset({"d", "disc", "discrim", "discriminator", "discriminators", "dis", "critic", "netd"})


_WORDS: dict = {}  # name -> its words (names repeat: the GAN domain asks of every call's)


def words(name: str) -> tuple:
    """`netG_A2B` -> ("net", "g", "a", "2", "b"); `optimizerD` -> ("optimizer", "d"); `conv1d` ->
    ("conv", "1d")."""
    found = _WORDS.get(name)
    if found is None:
        if len(_WORDS) >= 50_000:  # (a long-lived process, an editor's server: kept bounded)
            _WORDS.clear()
        found = _WORDS[name] = tuple(w.lower() for w in _WORD.findall(name))
    return found


def may_have_both_roles(text: str, configured: dict) -> bool:
    """Some name mentions a generator and some name a discriminator (`configured`: {name:
    role} of the generator and discriminator names the options add)."""
    seen = set()
    for ident in set(IDENT.findall(text)):
        if ident in configured:
            seen.add(configured[ident])
        else:
            ws = words(ident)
            if any(w in G_WORDS for w in ws):
                seen.add(G)
            if any(w in D_WORDS for w in ws):
                seen.add(D)
        if len(seen) == 2:
            return True
    return False


def may_have_structure(text: str) -> bool:
    """Two optimizers and a backward: roles may follow from which module feeds which."""
    return "backward" in text and text.count(".parameters(") >= 2


def configured_roles(generator_names, discriminator_names) -> dict:
    return {**{n: G for n in generator_names if n}, **{n: D for n in discriminator_names if n}}


def may_be_gan(text: str, options) -> bool:
    """Whether the GAN domain may find roles in a file of this text (it has none otherwise)."""
    return may_have_both_roles(text, configured_roles(options.generator_names, options.discriminator_names)) \
        or may_have_structure(text)
