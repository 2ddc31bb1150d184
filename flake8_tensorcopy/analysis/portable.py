"""Facts as plain data, for what crosses from one module of a project to another.

Whatever a module's summary tells an importing file (the facts of its names, what its functions
and methods return, its classes' attributes) passes through `export_fact` and `import_fact`,
whether it was computed in this process or read from the summary cache on disk: a file is
analysed the same with a cold cache and a warm one.

The exported form is nested tuples of str, int, bool and None (what `marshal` writes):

    (kind, grad, device, leaf, qual, frozen, paramfree, attrs, element, tags, items, by_flow,
     min_grad, device_var, node)

where `grad`, `device` and `min_grad` are the enums' values, `tags` a sorted tuple, `element`
and `items` exported facts, `node` a reference `(module, path)` to a class or function of the
project (`path`: its name, dotted for a class nested in a class), for a class or a function and
for an instance of such a class (whose `forward` and other methods the importing file asks, as
of an instance it makes itself), and `attrs` either `("lazy", reference)` (the attributes of
that class, asked of its module when first read), `("record", (reference or None, ((field,
fact), ...)))` (an instance of a NamedTuple or a dataclass: the fields its call gave, over that
class's attributes) or `("dict", ((name, fact), ...))`.  A
definition that cannot be referred to that way (a class made inside a function) is left out:
the importing file sees what it would see of any value it cannot look into.
"""

from __future__ import annotations

from .evaluate import LazyAttrs
from .facts import CLASS, FUNCTION, MODULE, OBJECT, Device, Fact, Grad

# The kinds whose `node` crosses as a reference: a class or function, and an instance (a torch
# module or any object) of a class of the project, whose methods (`forward`) the importing file
# asks as it asks those of an instance it makes itself.
_REFERRING = frozenset({CLASS, FUNCTION, MODULE, OBJECT})

_GRADS = tuple(Grad)
_DEVICES = tuple(Device)


def export_fact(f: Fact | None, ref_of) -> tuple | None:
    """`f` as plain data.  `ref_of(node)`: the reference of a definition (a def node of the
    exporting module, or a `ProjectEntity`), or None."""
    if f is None:
        return None
    attrs = f.attrs
    if attrs is None:
        ax = None
    elif type(attrs) is LazyAttrs:
        ref = ref_of(attrs.owner) if attrs.owner is not None else None
        given = attrs.record_given
        if given:
            # A record's fields as its call gave them (`Out(h, h.argmax(-1))` returned by a
            # forward), over its class's attributes.
            ax = ("record", (ref, tuple((k, export_fact(v, ref_of)) for k, v in given.items())))
        else:
            ax = ("lazy", ref) if ref is not None else None
    else:
        ax = ("dict", tuple((k, export_fact(v, ref_of)) for k, v in attrs.items()))
    node = f.node
    nx = ref_of(node) if node is not None and f.kind in _REFERRING else None
    items = f.items
    return (f.kind, int(f.grad), int(f.device), bool(f.leaf), f.qual, bool(f.frozen), bool(f.paramfree), ax,
            export_fact(f.element, ref_of), tuple(sorted(f.tags)),
            None if items is None else tuple(export_fact(i, ref_of) for i in items),
            bool(f.by_flow), None if f.min_grad is None else int(f.min_grad), f.device_var, nx)


def import_fact(x: tuple | None, entity) -> Fact | None:
    """The fact `x` exported.  `entity(reference)`: the `ProjectEntity` it names, or None.
    Raises (TypeError, ValueError, IndexError) on data that is not an exported fact."""
    if x is None:
        return None
    (kind, grad, device, leaf, qual, frozen, paramfree, ax, element, tags, items, by_flow, min_grad, device_var,
     nx) = x
    if type(kind) is not str or type(tags) is not tuple:
        raise TypeError("not an exported fact")
    attrs = None
    if ax is not None:
        how, what = ax
        if how == "lazy":
            owner = entity(what)
            if owner is not None:
                attrs = LazyAttrs(owner.attrs, owner)
        elif how == "dict":
            attrs = {k: import_fact(v, entity) for k, v in what}
        elif how == "record":
            ref, fields = what
            given = {k: import_fact(v, entity) for k, v in fields}
            owner = entity(ref) if ref is not None else None
            attrs = given if owner is None else LazyAttrs(_over(owner.attrs, given), owner, lambda: given)
        else:
            raise ValueError(how)
    return Fact(kind, _GRADS[grad], _DEVICES[device], leaf, qual, frozen, paramfree, attrs,
                import_fact(element, entity), frozenset(tags),
                None if items is None else tuple(import_fact(i, entity) for i in items),
                by_flow, None if min_grad is None else _GRADS[min_grad], device_var,
                entity(nx) if nx is not None else None)


def _is_ref(r) -> bool:
    return type(r) is tuple and len(r) == 2 and type(r[0]) is str and type(r[1]) is str


def well_formed(x) -> bool:
    """Whether `x` has the shape `export_fact` gives (None included): what a cache entry read
    from disk is checked with before anything in it is used."""
    if x is None:
        return True
    if type(x) is not tuple or len(x) != 15:
        return False
    (kind, grad, device, leaf, qual, frozen, paramfree, ax, element, tags, items, by_flow, min_grad, device_var,
     nx) = x
    if not (type(kind) is str and type(grad) is int and 0 <= grad < len(_GRADS) and type(device) is int
            and 0 <= device < len(_DEVICES) and type(leaf) is bool and (qual is None or type(qual) is str)
            and type(frozen) is bool and type(paramfree) is bool and type(by_flow) is bool
            and (min_grad is None or type(min_grad) is int and 0 <= min_grad < len(_GRADS))
            and (device_var is None or type(device_var) is str) and (nx is None or _is_ref(nx))
            and type(tags) is tuple and all(type(t) is str for t in tags)):
        return False
    if ax is not None:
        if type(ax) is not tuple or len(ax) != 2:
            return False
        if ax[0] == "lazy":
            if not _is_ref(ax[1]):
                return False
        elif ax[0] == "record":
            if type(ax[1]) is not tuple or len(ax[1]) != 2 or not (ax[1][0] is None or _is_ref(ax[1][0])) \
                    or not _fields(ax[1][1]):
                return False
        elif ax[0] != "dict" or not _fields(ax[1]):
            return False
    if items is not None and (type(items) is not tuple or not all(well_formed(i) for i in items)):
        return False
    return well_formed(element)


def _fields(pairs) -> bool:
    return type(pairs) is tuple and all(
        type(kv) is tuple and len(kv) == 2 and type(kv[0]) is str and well_formed(kv[1]) for kv in pairs)


def _over(load, given: dict):
    """A loader of a class's attributes (`load()`) with a record's fields `given` over them."""
    return lambda: {**(load() or {}), **given}
