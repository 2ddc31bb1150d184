"""What the analysis knows about a value: the lattice every rule asks.

A `Fact` is an over-approximation of the values an expression may have at one program point.
Two facts meet at a control-flow join with `join`; the orders are chosen so that a hazard seen
on any path survives the join ("may require grad", "may be on an accelerator"), while
"unknown" never turns into a finding unless the user asks for strict mode.
"""

from __future__ import annotations

from enum import IntEnum


class Grad(IntEnum):
    """Whether a value may require grad. Ordered for `join`: NO < UNKNOWN < YES."""

    NO = 0
    UNKNOWN = 1
    YES = 2


class Device(IntEnum):
    """Where a tensor may live. Ordered for `join`: CPU < UNKNOWN < ACCEL."""

    CPU = 0
    UNKNOWN = 1
    ACCEL = 2


# Kinds of value. "tensor" also covers structures of tensors returned by models (tuples,
# dicts, ModelOutput objects): indexing or taking a field of one gives a tensor again.
UNKNOWN = "unknown"
TENSOR = "tensor"
MODULE = "module"  # an nn.Module instance
PARAMS = "params"  # an iterable of parameters (model.parameters())
NAMED_PARAMS = "named_params"  # model.named_parameters()
MAPPING = "mapping"  # a dict of values described by `element`, keyed by strings (model.state_dict())
LOADER = "loader"  # an iterable of batches that never touched a grad source
DEVICE = "device"  # a torch.device or a device string
IMPORT = "import"  # a module-level object reached by import: carries its qualified name
SEQ = "seq"  # a list/tuple whose elements are described by `element`
OTHER = "other"  # a known non-tensor value (numbers, strings, arrays, ...)
FUNCTION = "function"  # a function of this file (`node` is its def)
CLASS = "class"  # a class of this file (`node` is its def); nn.Module classes carry a tag
OBJECT = "object"  # an instance of a class of this file that is not an nn.Module


# The fields of a Fact, in order (positional arguments follow it).  `attrs` and `node` take no
# part in equality or the hash.  Fact.__new__ and Fact.but store each by name: a field added here
# is added there too.
_FIELDS = ("kind", "grad", "device", "leaf", "qual", "frozen", "paramfree", "attrs", "element", "tags", "items",
           "by_flow", "min_grad", "device_var", "node")
_FIELD_SET = frozenset(_FIELDS)
_new = object.__new__


class _Record:
    """Fact's slots, writable: a Fact is built as one of these (plain attribute stores) and then
    made a Fact, whose `__setattr__` refuses every write (three times faster than fifteen calls
    of `object.__setattr__`; facts are made on every expression the analysis evaluates)."""

    __slots__ = _FIELDS


class Fact(_Record):
    """An immutable record (a plain class: a dataclass costs every start half a millisecond to
    build, and `but` is on the hot path of the analysis).

    kind: what the value is (the kinds below).  grad / device: whether it may require grad,
    where it may live.  leaf: a leaf tensor that requires grad (a parameter, a
    requires_grad=True factory result, ...).  qual: for IMPORT facts, the qualified name
    ("torch.no_grad").  frozen / paramfree: for MODULE facts, parameters frozen
    (requires_grad_(False)), no parameters at all (losses, activations).  attrs: attribute
    facts of a class defined in this file.  element: for SEQ facts, what one element is.
    tags: open set of labels rule families attach (for example "generator_output").  items: a
    fixed-size tuple's facts by position (enumerate's (index, item), zip's tuples,
    torch.max(x, dim)'s (values, indices)), used when unpacking or indexing by a constant.
    by_flow: the kind is established by the flow of the code on every path (a torch call, a
    torch constructor, an isinstance guard), not by an annotation, a name or a guess; only such
    facts make a fix safe.  min_grad: the least `grad` over the paths that reach here (None: the
    same as `grad`): `grad` says what may be, this what must be.  device_var: the dotted name of
    the device variable the tensor was moved with (`x.to(device)`): a test of that variable
    (`if device != "cpu":`) tells where the tensor is.  node: for FUNCTION and CLASS facts, and
    the instances (MODULE, OBJECT) of classes of the file, the definition.
    """

    __slots__ = ()

    def __new__(cls, kind: str = "unknown", grad: Grad = Grad.UNKNOWN, device: Device = Device.UNKNOWN,
                leaf: bool = False, qual: str | None = None, frozen: bool = False, paramfree: bool = False,
                attrs: dict | None = None, element: Fact | None = None, tags: frozenset = frozenset(),
                items: tuple | None = None, by_flow: bool = False, min_grad: Grad | None = None,
                device_var: str | None = None, node: object = None) -> Fact:
        new = _new(_Record)
        new.kind = kind
        new.grad = grad
        new.device = device
        new.leaf = leaf
        new.qual = qual
        new.frozen = frozen
        new.paramfree = paramfree
        new.attrs = attrs
        new.element = element
        new.tags = tags
        new.items = items
        new.by_flow = by_flow
        new.min_grad = min_grad
        new.device_var = device_var
        new.node = node
        new.__class__ = cls
        return new

    def __setattr__(self, name, value):
        raise AttributeError(f"Fact is immutable (use .but({name}=...))")

    __delattr__ = __setattr__

    def _key(self) -> tuple:
        return (self.kind, self.grad, self.device, self.leaf, self.qual, self.frozen, self.paramfree,
                self.element, self.tags, self.items, self.by_flow, self.min_grad, self.device_var)

    def __eq__(self, other):
        if other is self:
            return True
        if type(other) is not Fact:
            return NotImplemented
        # (A mapping's values key by key are part of what it is; other attributes are not.)
        return self._key() == other._key() and (self.kind != MAPPING or self.attrs == other.attrs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Fact({', '.join(f'{n}={getattr(self, n)!r}' for n in _FIELDS)})"

    def but(self, **changes) -> Fact:
        """A copy with `changes`."""
        new = _new(_Record)
        new.kind = self.kind
        new.grad = self.grad
        new.device = self.device
        new.leaf = self.leaf
        new.qual = self.qual
        new.frozen = self.frozen
        new.paramfree = self.paramfree
        new.attrs = self.attrs
        new.element = self.element
        new.tags = self.tags
        new.items = self.items
        new.by_flow = self.by_flow
        new.min_grad = self.min_grad
        new.device_var = self.device_var
        new.node = self.node
        for name, value in changes.items():
            if name not in _FIELD_SET:
                raise TypeError(f"Fact has no field {name!r}")
            setattr(new, name, value)
        new.__class__ = Fact
        return new

    @property
    def is_tensor(self) -> bool:
        return self.kind == TENSOR

    @property
    def may_require_grad(self) -> bool:
        return self.kind == TENSOR and self.grad is Grad.YES

    @property
    def may_be_on_accelerator(self) -> bool:
        return self.kind == TENSOR and self.device is Device.ACCEL

    @property
    def is_torch_tensor(self) -> bool:
        """Certainly a torch tensor (or a structure of them, such as a model's output)."""
        return self.kind == TENSOR and self.by_flow

    @property
    def must_require_grad(self) -> bool:
        """Requires grad on every path, by the flow of the code."""
        return self.kind == TENSOR and self.by_flow and (self.grad if self.min_grad is None else self.min_grad) is Grad.YES


UNKNOWN_FACT = Fact()
# A parameter whose default is None, in a walk that does not know what the call passes
# (`def convert(x, device=None): return x.to(device=device)`): the device it names is not known
# to be an accelerator, as `.to(device)` of any other `device` is taken to be (evaluate.py).
NONE_DEFAULT = "default:None"
NONE_DEFAULT_FACT = Fact(tags=frozenset({NONE_DEFAULT}))
# The tags of a parameter's fact when every call of the function the file shows gives it a
# literal that is false / true (`cond=False` left to its default): what those calls pass does not
# reach a branch that needs the other truth (summaries.parameter_facts, evaluate.narrowings).
SITE_CONSTANTS = ("siteconst:0", "siteconst:1")
# The tags of a parameter's fact in a walk of a function for one call that gives it a literal
# that is false / true (`build(frozen=True)`: summaries.call_result): the branch of `if frozen:`
# that truth does not take is not walked (walker's `if`).
CALL_CONSTANTS = ("callconst:0", "callconst:1")
# A FUNCTION fact of `functools.partial(f, ...)`: its calls bind their arguments after the
# partial's own (evaluate.Evaluator; the GAN domain steers no walk by them).
PARTIAL_TAG = "partial"
# The tag of a tensor by an annotation only (`x: torch.Tensor`, evaluate._annotation_fact), kept
# where the value goes as it is (a call site passes it on): callers do not always keep to it.
ANNOTATED = "annotated"
# The tag of what one call of another module passes to the function it asks about
# (module_summary.ProjectEntity.sinks_for), as "callsite:<line>" marks what the file's calls pass.
CALLED = frozenset({"passed"})
OTHER_FACT = Fact(OTHER, Grad.NO, Device.CPU)
# `None`: where it meets another value (`self.last = None` in `__init__`, `self.last = out` in
# `forward`), the join is that value, which may be absent (`None.numpy()` fails anyway): its
# grad is then a "may", never a "must".
NONE_FACT = Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({"none"}))
ARRAY_FACT = Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({"ndarray"}))
# A value made by another framework (TensorFlow, JAX, pandas, ...): not a torch tensor.
FOREIGN_FACT = Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({"foreign"}))
# Matplotlib's Axes (or an array of them, `plt.subplots(2, 2)`'s), whose plotting methods convert
# what they are given with NumPy (TNS106), and a Figure, whose `add_subplot()` makes one.
MPL_AXES = "mpl_axes"
MPL_AXES_FACT = Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({MPL_AXES}))
MPL_FIGURE_FACT = Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({"mpl_figure"}))


def tensor(grad: Grad = Grad.NO, device: Device = Device.CPU, leaf: bool = False, tags=frozenset(),
           by_flow: bool = True) -> Fact:
    return Fact(TENSOR, grad, device, leaf, tags=tags, by_flow=by_flow)


def must_grad(f: Fact) -> Grad:
    """What `f`'s grad is on every path (`Fact.grad` is what it may be on some path)."""
    return f.grad if f.min_grad is None else f.min_grad


def with_must(f: Fact, must: Grad) -> Fact:
    """`f` whose grad must be at least `must` on every path (never above `f.grad`)."""
    must = min(must, f.grad)
    cur = f.grad if f.min_grad is None else f.min_grad
    if must == cur:
        return f
    return f.but(min_grad=None if must == f.grad else must)


def join(a: Fact | None, b: Fact | None) -> Fact:
    """Least upper bound of two facts (None means "not bound on that path")."""
    if a is None:
        return b if b is not None else UNKNOWN_FACT
    if b is None or a is b:
        return a
    if a == b:
        # (Equal facts may hold different attributes: an instance handed a module that one path
        # froze since, Evaluator._changed_in_place.)
        aa, ba = a.attrs, b.attrs
        if aa is ba or aa is None or ba is None:
            return a
        joined = getattr(aa, "join", None)
        merged = joined(ba) if joined is not None else None
        return a if merged is None or merged is aa else a.but(attrs=merged)
    if a.kind == OTHER and "none" in a.tags:
        a, b = b, a
    if b.kind == OTHER and "none" in b.tags and "none" not in a.tags:
        # (Also another plain value: `self.masks = None`, then `= {}`, is a dict where it is
        # one, not None; a union of their tags read as None alone, and the next join with a
        # tensor gave the tensor.)
        return a if a.grad is Grad.NO else a.but(min_grad=Grad.NO)
    kind = a.kind if a.kind == b.kind else UNKNOWN
    if kind == UNKNOWN and (a.kind == SEQ and b.kind == PARAMS or a.kind == PARAMS and b.kind == SEQ):
        # `model.parameters()` on one path, a list of tensors on the other (or one call of a
        # function passes each): an iterable of what either holds.
        return join(_as_list(a), _as_list(b))
    return Fact(
        kind,
        max(a.grad, b.grad),
        max(a.device, b.device),
        a.leaf or b.leaf,
        a.qual if a.qual == b.qual else None,
        a.frozen and b.frozen,
        a.paramfree and b.paramfree,
        _join_attrs(a, b, kind),
        join(a.element, b.element) if (a.element or b.element) else None,
        a.tags | b.tags,
        _join_items(a.items, b.items),
        a.by_flow and b.by_flow and kind == a.kind,
        _min_grad(a, b),
        a.device_var if a.device_var == b.device_var else None,
        a.node if a.node is b.node else None,
    )


def _join_attrs(a: Fact, b: Fact, kind: str):
    """The attributes of the join of `a` and `b`: the same ones, or, of two dicts with string keys,
    each key's value joined (a key one path lacks is the other's: reading it there raises)."""
    if a.attrs is b.attrs:
        return a.attrs
    joined = getattr(a.attrs, "join", None)
    if joined is not None:
        return joined(b.attrs)
    if kind == MAPPING and type(a.attrs) is dict and type(b.attrs) is dict:
        return {k: join(a.attrs.get(k), b.attrs.get(k)) for k in a.attrs.keys() | b.attrs.keys()}
    return None


def _as_list(f: Fact) -> Fact:
    """An iterable of parameters as a list of them: a list's grad is its elements'."""
    if f.kind == SEQ or f.element is None:
        return f.but(kind=SEQ)
    return f.but(kind=SEQ, grad=f.element.grad, min_grad=f.element.min_grad)


def _min_grad(a: Fact, b: Fact) -> Grad | None:
    low = min(must_grad(a), must_grad(b))
    return None if low == max(a.grad, b.grad) else low


def _join_items(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None or b is None or len(a) != len(b):
        return None
    return a if a == b else tuple(join(x, y) for x, y in zip(a, b))


def with_origins(f: Fact, origins: frozenset) -> Fact:
    """`f` with `origins` ("defined:" tags: where another file of the project made it) when it is
    a tensor or a module, the values a message says the origin of."""
    if not origins or f.kind not in (TENSOR, MODULE) or origins <= f.tags:
        return f
    return f.but(tags=f.tags | origins)


def join_all(facts) -> Fact:
    result = None
    for f in facts:
        result = f if result is None else join(result, f)
    return result if result is not None else UNKNOWN_FACT


def join_env(a: dict, b: dict) -> dict:
    """Join two environments: a name bound on one path only may also be unbound."""
    if a is b:
        return a
    # What `a` binds, then what `b` changes: most names are bound to one fact on both paths.
    out = dict(a)
    get = a.get
    for name, fb in b.items():
        fa = get(name)
        if fa is fb:
            continue
        if fa is None:
            # Bound on one path only: keep what we know, widened by "unknown" on grad/device
            # only if the one path is a tensor that may require grad (a hazard on that path).
            out[name] = fb
        else:
            j = join(fa, fb)  # (equal facts too: they may hold different attributes)
            if j is not fa:
                out[name] = j
    return out
