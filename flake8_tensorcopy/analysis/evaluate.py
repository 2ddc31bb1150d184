"""Value facts: what an expression may be at one program point, and what a simple statement
does to the environment (the walker's first domain).

`Evaluator.fact(expr, state)` answers "a tensor? may it require grad? must it? may it be on an
accelerator? a torch tensor for certain, or only by an annotation?" from imports, torch API
tables (`torchapi`), the environment and the enclosing scopes.  `effect(stmt, state)` applies
an assignment, an augmented assignment or a call statement to the environment.  Tests narrow
the environment (`narrowings`): `isinstance`, `torch.is_tensor`, `t.requires_grad`, device
tests, `torch.is_grad_enabled()`.
"""

from __future__ import annotations

import ast

from . import torchapi as api
from .astutil import const_bool as _const_bool
from .astutil import (all_nodes, bind_arguments, bool_binding, decorator_names, def_stub, dotted_name, is_plain_method,
                      is_property, left_bool_default,
                      local_names, named_tuple_fields, parameter_names, record_fields)
from .astutil import kwarg as _kwarg
from .gradmode import context_effect, enables_grad, leaves_grad_off, set_grad_call
from .summaries import project_bases
from .facts import (
    ANNOTATED,
    ARRAY_FACT,
    CALL_CONSTANTS,
    PARTIAL_TAG,
    CALLED,
    CLASS,
    DEVICE,
    FUNCTION,
    OBJECT,
    FOREIGN_FACT,
    IMPORT,
    LOADER,
    MAPPING,
    MODULE,
    MPL_AXES_FACT,
    MPL_FIGURE_FACT,
    NAMED_PARAMS,
    NONE_DEFAULT,
    OTHER,
    OTHER_FACT,
    NONE_FACT,
    PARAMS,
    SEQ,
    SITE_CONSTANTS,
    TENSOR,
    UNKNOWN,
    UNKNOWN_FACT,
    Device,
    Fact,
    Grad,
    join,
    join_all,
    join_env,
    must_grad,
    tensor,
    with_origins,
)
from ..source import LazyPattern

_Name, _Attribute = ast.Name, ast.Attribute
MODULE_CLASS_TAG = "nn_module_class"
NO_GRAD_FORWARD = "no_grad_forward"

_ANNOTATED_TENSOR = Fact(TENSOR, Grad.UNKNOWN, Device.UNKNOWN, tags=frozenset({ANNOTATED}))


_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)
# The methods of a dict that leave it as it is.
_MAPPING_READS = frozenset({"get", "keys", "values", "items", "copy", "__getitem__", "__contains__", "__len__"})


def _mapping(values: list, keyed: dict | None) -> Fact:
    """A dict that holds `values`, key by key where `keyed` ({key: fact}) is not None."""
    if not values:
        return Fact(MAPPING, Grad.NO, Device.CPU, attrs={})
    el = join_all(values)
    return Fact(MAPPING, el.grad, el.device, element=el, attrs=keyed)


def _spread(f: Fact) -> Fact:
    """What `**f` puts in a dict: the values of a mapping, else unknown ones."""
    return f.element if f.kind == MAPPING and f.element is not None else UNKNOWN_FACT


def _forgotten(f: Fact) -> Fact:
    """Mapping `f` after something not followed may have changed what it holds."""
    el = UNKNOWN_FACT if f.element is None else join(f.element, UNKNOWN_FACT)
    return f.but(grad=el.grad, device=el.device, element=el, attrs=None)


def _one_of(element: Fact) -> Fact:
    """One element of a list or dict whose elements are described by `element`: where some
    require grad and others not (`[x, model(x)]`), which one it is is not known."""
    if element.grad is Grad.YES and element.min_grad is not None and element.min_grad is not Grad.YES:
        return element.but(grad=Grad.UNKNOWN, min_grad=None)
    return element


# The names of functions that freeze, or thaw, all of a module they are handed (`_handed_to_freeze`;
# without leading or trailing `_`, lower case; and any name that ends in `requires_grad`).
_FREEZE_NAMES = frozenset({"freeze", "freeze_model", "freeze_module", "freeze_modules", "freeze_net", "freeze_nets",
                           "freeze_network", "freeze_params", "freeze_parameters", "freeze_weights", "freeze_all",
                           "toggle_grad", "set_grad", "disable_grad"})
_THAW_NAMES = frozenset({"unfreeze", "unfreeze_model", "unfreeze_module", "unfreeze_net", "unfreeze_params",
                         "unfreeze_parameters", "unfreeze_all", "thaw", "enable_grad"})


def _frozen(module: Fact, frozen: bool) -> Fact:
    """A module whose parameters were frozen (`requires_grad_(False)`) or thawed."""
    return module.but(frozen=frozen, grad=Grad.NO if frozen else Grad.YES, min_grad=None)


_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter",
                             "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor"})
_RANGE_FACT = Fact(SEQ, Grad.NO, Device.CPU, element=OTHER_FACT)
_SCALAR_CLASSES = frozenset({"int", "float", "bool", "str", "bytes", "complex", "numbers.Number", "numbers.Real",
                             "numbers.Integral", "torch.Size", "torch.dtype", "torch.device", "range", "slice"})


# `x.parameters(`, `x.eval(`, ...: evidence that `x` is a module (the walker reads the name
# before the dot).
# A `global` statement (a module-level name a function may bind: Evaluator.literal_flag).
_GLOBAL_STATEMENT = LazyPattern(r"(?m)^[ \t]*global\b")
MODULE_EVIDENCE = LazyPattern(r"\.(?:" + "|".join(sorted(api.MODULE_EVIDENCE_METHODS)) + r")\(")
# The key under which narrowing records a grad mode (`if torch.is_grad_enabled():`).
GRAD_MODE_KEY = "<no_grad>"
_DEVICE_VAR_KEY = "<device_var>"
# A branch the calls that gave the function's parameters their facts do not take (a narrowing).
_UNCALLED_KEY = "<not reached by the known calls>"
_GRAD_ENABLED_TESTS = frozenset({"torch.is_grad_enabled", "torch.autograd.grad_mode.is_grad_enabled"})


class State:
    """The abstract program state at one point: value facts by name (and dotted name:
    `self.w`), grad mode, the enclosing scopes' names, and the other domains' states."""

    __slots__ = ("env", "no_grad", "outer", "doms")

    def __init__(self, env: dict, no_grad: bool, outer: dict | None = None, doms: dict | None = None) -> None:
        self.env = env
        self.no_grad = no_grad  # grad mode is off, or may be
        self.outer = outer  # enclosing scopes' names (read-only fallback)
        self.doms = doms if doms is not None else {}

    def copy(self) -> State:
        doms = self.doms
        return State(dict(self.env), self.no_grad, self.outer, {k: d.copy() for k, d in doms.items()} if doms else {})

    def lookup(self, name: str) -> Fact | None:
        f = self.env.get(name)
        if f is None and self.outer is not None:
            f = self.outer.get(name)
        return f

    def same(self, other: State) -> bool:
        return self.no_grad == other.no_grad and self.env == other.env and self.doms == other.doms


def _from_calls(f: Fact) -> bool:
    """Whether a fact is (or holds) what a known call passed (summaries._from_site's tags, or
    module_summary._passed's)."""
    el = f.element
    return any(t.startswith("callsite:") or t in CALLED for t in f.tags) or (
        el is not None and any(t.startswith("callsite:") or t in CALLED for t in el.tags))


def join_states(a: State | None, b: State | None) -> State | None:
    """The state where two paths meet (None: a path that does not get there)."""
    if a is None:
        return b
    if b is None or a is b:
        return a
    doms = {k: d.join(b.doms[k]) for k, d in a.doms.items() if k in b.doms} if a.doms else {}
    return State(join_env(a.env, b.env), a.no_grad or b.no_grad, a.outer, doms)


# What a constructor's attribute holds when it is one of its parameters moved to a device
# (walker._constructor_attrs: `self.model = model.to(device)`): the parameter's name and this.
MOVED = ">moved"
# ... or one of its parameters copied into a list (`self.params = list(params)`: the parameters a
# hand-written optimizer is given).
LISTED = ">listed"
# ... or a deep copy of one (`self.module = deepcopy(model)`, timm's ModelEmaV2): a module whose
# parameters are as the original's were, and which a later change of the original leaves alone.
COPIED = ">copied"
# ... or the `params` a subclass of torch.optim.Optimizer hands its base's constructor
# (`super().__init__(params, defaults)`), which makes `self.param_groups` of them (param_groups).
GROUPED = ">grouped"
_MOVES = frozenset({"to", "cuda", "cpu"})


def param_of(said: str) -> str:
    """The parameter's name in what walker._constructor_attrs says an attribute holds."""
    return said.partition(">")[0]


def copied_name(v):
    """The name `v` deep-copies (`deepcopy(model)`, `copy.deepcopy(model)`), else None."""
    if type(v) is ast.Call and len(v.args) == 1 and not v.keywords and type(v.args[0]) is _Name \
            and dotted_name(v.func) in ("deepcopy", "copy.deepcopy"):
        return v.args[0]
    return None


def listed_name(v):
    """The name `v` copies into a list or a tuple (`list(params)`, `tuple(params)`), else None."""
    if type(v) is ast.Call and type(v.func) is _Name and v.func.id in ("list", "tuple") and len(v.args) == 1 \
            and not v.keywords and type(v.args[0]) is _Name:
        return v.args[0]
    return None


def moved_name(v):
    """The name `v` moves to a device, a module or a tensor as it is there (`model.to(device)`,
    `x.to(self.device)`, `model.to(device=d)`, `net.cuda()`, `t.cpu()`; not `x.to(torch.long)`,
    which converts), else None."""
    if type(v) is not ast.Call or type(v.func) is not _Attribute or type(v.func.value) is not _Name:
        return None
    m = v.func.attr
    if m not in _MOVES:
        return None
    if m != "to":
        return v.func.value if not v.keywords and len(v.args) <= 1 else None
    args = [*v.args, *(k.value for k in v.keywords if k.arg == "device")]
    if len(args) != 1 or len(v.args) + len(v.keywords) != 1:
        return None
    a = args[0]
    name = a.id if type(a) is _Name else a.attr if type(a) is _Attribute else None
    if name is not None and "device" in name.lower() or type(a) is ast.Constant and a.value in ("cuda", "cpu"):
        return v.func.value
    return None


def _handed(f: Fact) -> bool:
    """Whether a constructor call of a class of the file that passes `f` makes an instance whose
    attributes are what it passes (Evaluator._constructed_here): a torch module, or parameters
    (`model.parameters()`, a list of tensors that require grad: a hand-written optimizer's)."""
    if f.kind == MODULE:
        return True
    el = f.element
    return (f.kind == PARAMS or f.kind == SEQ) and el is not None and el.kind == TENSOR and el.grad is Grad.YES


def given_moved(given: dict, param: str) -> Fact | None:
    """What a constructor's attribute holds, said `param` (a parameter's name, or one with MOVED
    or LISTED), of the facts `given` its parameters: a module or tensor moved holds the same, on
    a device not known; a list made of an iterable, its elements; None when `param` is not
    given."""
    name, marked, how = param.partition(">")
    f = given.get(name)
    if f is None or not marked:
        return f
    if marked + how == LISTED:
        if f.kind in (PARAMS, SEQ) and f.element is not None:
            return Fact(SEQ, f.grad, f.device, element=f.element)
        return UNKNOWN_FACT
    if marked + how == GROUPED:
        return param_groups(f)
    if marked + how == COPIED:
        return f if f.kind in (MODULE, TENSOR) else UNKNOWN_FACT
    if f.kind == MODULE:
        return f.but(device=Device.UNKNOWN, device_var=None)
    if f.kind == TENSOR:
        return f.but(device=Device.UNKNOWN, device_var=None, leaf=False)
    return UNKNOWN_FACT


def param_groups(f: Fact) -> Fact:
    """`self.param_groups` of an optimizer whose constructor torch.optim.Optimizer's was handed
    `f` as `params`: a list of one dict whose "params" is a list of the tensors `f` yields
    (`model.parameters()`, a list of tensors), its other keys the defaults; unknown where `f`
    may yield groups (dicts) instead."""
    el = f.element if f.kind == PARAMS or f.kind == SEQ else None
    if el is None or el.kind != TENSOR:
        return UNKNOWN_FACT
    params = Fact(SEQ, el.grad, el.device, element=el)
    rest = join(params, UNKNOWN_FACT)  # (`group["lr"]`)
    group = Fact(MAPPING, rest.grad, rest.device, element=rest, attrs={"params": params})
    return Fact(SEQ, group.grad, group.device, element=group)


class LazyAttrs:
    """The `self.<attr>` facts of a class, computed on first use.  `owner`: the class (its def,
    or the `ProjectEntity` of a class of another module), by which they cross modules."""

    __slots__ = ("_load", "_data", "owner", "_given", "_call", "_sources")

    def __init__(self, load, owner=None, given=None, call: ast.Call | None = None, sources=None) -> None:
        self._load = load
        self._data = None
        self.owner = owner
        # What an instance's constructor call gave (Evaluator._constructed): a function that
        # says it, or None; that call; and a function that says {attr: (the name of what the
        # call passed for it, whether the constructor moved it)}.
        self._given = given
        self._call = call
        self._sources = sources

    @property
    def handed(self) -> frozenset:
        """The names the instance's constructor call passed (`Trainer(model, opt)`: what a
        method of the instance may update)."""
        call = self._call
        if call is None:
            return frozenset()
        return frozenset(k for k in (dotted_name(e) for e in (*call.args, *(kw.value for kw in call.keywords))
                                     if type(e) is not ast.Starred) if k is not None)

    @property
    def call(self) -> ast.Call | None:
        """The constructor call that made the instance these attributes are of, or None."""
        return self._call

    @property
    def given(self) -> dict | None:
        """{attr: fact} an instance's constructor call gave its attributes, or None."""
        return self._given() if self._given is not None else None

    @property
    def record_given(self) -> dict | None:
        """{field: fact} the call of a record class (a NamedTuple, a dataclass: Evaluator._record)
        gave the instance, known without asking anything (it crosses modules with the class:
        portable.export_fact); None for any other instance's attributes."""
        return self._given() if self._given is not None and self._call is None else None

    def but(self, given: dict) -> "LazyAttrs":
        """These attributes, with `given` ({attr: fact}) as what the constructor call gave."""
        return LazyAttrs(lambda: {**self._get(), **given}, self.owner, lambda: given, self._call, self._sources)

    def join(self, other) -> "LazyAttrs | None":
        """The attributes of one instance on two paths (made by the same constructor call, a
        module it was handed changed in place on one: facts.join), each given attribute joined;
        None for anything else (attributes that do not join)."""
        if type(other) is not LazyAttrs or self._call is None or other._call is not self._call \
                or other.owner is not self.owner:
            return None
        mine, theirs = self.given or {}, other.given or {}
        keys = mine.keys() | theirs.keys()
        if all(mine.get(k) is theirs.get(k) for k in keys):
            return self
        return self.but({k: join(mine.get(k), theirs.get(k)) for k in keys})

    def rehanded(self, key: str, module: Fact) -> "LazyAttrs | None":
        """These attributes, with what the constructor call passed by name `key` now `module`
        (it changed in place since); None where the call passed nothing by that name that an
        attribute holds."""
        if key not in self.handed or self._sources is None:
            return None
        changed = {}
        for attr, (name, moved) in self._sources().items():
            if name == key:
                changed[attr] = given_moved({name: module}, name + MOVED if moved else name)
        return self.but({**self.given, **changed}) if changed else None

    def _get(self) -> dict:
        if self._data is None:
            self._data = {}  # guards against re-entry while loading
            if self._load is not None:
                self._data = self._load()
        return self._data

    def unhook(self) -> None:
        """Forget how to load (its walker is done; what was loaded stays): the loader refers
        to the class's state, which refers back to this, a cycle only the collector frees."""
        self._load = None

    def __contains__(self, key) -> bool:
        return key in self._get()

    def __getitem__(self, key):
        return self._get()[key]

    def __bool__(self) -> bool:
        return bool(self._get())

    def get(self, key, default=None):
        return self._get().get(key, default)

    def items(self):
        return self._get().items()


_DTYPES = frozenset(
    "float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
    "long short bool complex32 complex64 complex128 chalf cfloat cdouble float8_e4m3fn float8_e5m2".split()
)


# Integer and bool dtypes (`t.to(torch.long)`), and the tensor types of them (`t.type(torch.LongTensor)`):
# a tensor of one never requires grad.  A tensor type names a device too: `torch.LongTensor` the
# CPU, `torch.cuda.LongTensor` an accelerator.
_INTEGER_DTYPES = frozenset("int int8 int16 int32 int64 uint8 uint16 uint32 uint64 long short bool".split())
_INTEGER_TENSOR_TYPES = frozenset("LongTensor IntTensor ShortTensor ByteTensor CharTensor BoolTensor".split())
_TENSOR_TYPES = _INTEGER_TENSOR_TYPES | frozenset("FloatTensor DoubleTensor HalfTensor BFloat16Tensor".split())


# Keywords of a factory that are not its data (_carried_grad).
_NOT_DATA_KEYWORDS = frozenset(("dtype", "device", "requires_grad", "size", "generator", "out", "copy", "layout",
                                "pin_memory", "memory_format", "check_invariants", "is_coalesced"))


_MODULE_OUTPUT = frozenset({"module_output"})
_RESULT_SAVING = frozenset({api.RESULT_SAVING_TAG})
_WRAPPER = "wrapper"  # a module wrapped by nn.DataParallel / DistributedDataParallel
_WRAPPER_TAGS = frozenset({_WRAPPER})
_PARTIAL = PARTIAL_TAG  # a FUNCTION fact of `functools.partial(f, ...)`: its calls bind differently
_PARTIAL_TAGS = frozenset({_PARTIAL})
_DISTRIBUTION = "distribution"
_DISTRIBUTION_TAGS = frozenset({_DISTRIBUTION})
# What pyplot's functions that make Axes and Figures return (`fig, ax = plt.subplots()`: the
# Figure and the Axes, or an array of Axes); a Figure's methods that make Axes.
_PYPLOT_RESULTS = {
    "subplots": Fact(SEQ, Grad.NO, Device.CPU, items=(MPL_FIGURE_FACT, MPL_AXES_FACT)),
    "gca": MPL_AXES_FACT, "subplot": MPL_AXES_FACT, "axes": MPL_AXES_FACT,
    "figure": MPL_FIGURE_FACT, "gcf": MPL_FIGURE_FACT,
}
_MPL_FIGURE = next(iter(MPL_FIGURE_FACT.tags))
_MPL_AXES = next(iter(MPL_AXES_FACT.tags))
_FIGURE_AXES_METHODS = frozenset({"add_subplot", "gca", "add_axes", "subplots"})
# The sampling methods of torch.distributions that run without grad (not `rsample`).
_SAMPLES = frozenset({"sample", "sample_n", "enumerate_support"})

# The qualified names of the libraries' functions (no function of a project).
_LIBRARY_PREFIXES = ("torch.", "numpy.", "np.", "math.", "os.", "logging.")

# Text that a function must contain for its result not to require grad when its module's does.
_NO_GRAD_RESULT_HINTS = ("sample(", "detach(", "no_grad", "inference_mode", "set_grad_enabled", "argmax",
                         "argmin", ".item(", "tolist(", "requires_grad", ".data", ".long(", ".bool(",
                         # (the indices of `logits.max(1)[1]`, `torch.topk(x, 5)[1]`, `x.sort()`)
                         ".max(", ".min(", "topk(", "sort(", "kthvalue(", "median(", "cummax(", "cummin(",
                         # (a forward that returns a NumPy array: `return self.fc(x).numpy()`)
                         "numpy(")

# A value of unknown kind that a tensor-only method (`.detach()`, `.cpu()`, `.data`) made.
_TENSORISH = "tensorish"
_TENSORISH_TAGS = frozenset({_TENSORISH})
# What a call of a generator function gives (walker._walk_scope): its values are computed as it
# is iterated, in the grad mode of the loop that iterates it.
GENERATOR_TAG = "generator"


def _defined_as(result: Fact, callee: Fact) -> Fact:
    """`result`, a tensor or a module that calling `callee` made, with where `callee` is defined
    when another file of the project defines it (its "defined:" tags: `build(), models.py:5`,
    `Raw: an nn.Module, yolo.py:8`)."""
    return with_origins(result, frozenset(t for t in callee.tags if t.startswith("defined:")))


def _one_device_var(facts) -> str | None:
    """The device variable of an operation's result: tensors in one operation are on one device,
    so the one variable that the accelerator operands were moved with (if only one) is it."""
    found = None
    for f in facts:
        if f.device is Device.ACCEL:
            if f.device_var is None:
                continue
            if found is not None and found != f.device_var:
                return None
            found = f.device_var
    return found


# A string constant's fact, by the device it names ("cuda:0", "cpu"): one object each, so that
# joining the strings of a large literal (a module's table) finds them the same by identity.
_STRING_FACTS = {d: Fact(OTHER, Grad.NO, d, tags=frozenset({"str"})) for d in Device}
# A grad-mode context manager kept for a later `with` (`ctx = torch.no_grad()`, `with ctx:`):
# what it turns grad to (walker._with; a join with another value keeps the tag: may).
GRAD_OFF_CONTEXT = "grad_off_context"
GRAD_ON_CONTEXT = "grad_on_context"
_GRAD_CONTEXTS = {True: Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({GRAD_OFF_CONTEXT})),
                  False: Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({GRAD_ON_CONTEXT}))}
_GRAD_MODE_CALLS = api.NO_GRAD | api.ENABLE_GRAD | api.SET_GRAD_ENABLED


# The first characters of the strings that may name a device (blanks: stripped first).
_DEVICE_STARTS = frozenset("cmxhnpCMXHNP" + "".join(c for c in map(chr, range(128)) if c.isspace()))


def _device_of_string(s: str) -> Device:
    first = s[:1]
    if first not in _DEVICE_STARTS and first.isascii():
        return Device.UNKNOWN  # (most strings of a large literal: a model's names, ...)
    return _named_device(s)


def _literal_display(node, depth: int = 0) -> Fact | None:
    """The fact `Evaluator.fact` gives a tuple, list or set display whose elements are constants
    or such displays (`[("albert", "AlbertModel"), ...]`), found without the evaluator's per-node
    work; None when an element is anything else, or displays nest more than four deep (each
    display is then tried from at most four enclosing ones: linear in the expression's size)."""
    elts = []
    for e in node.elts:
        t = type(e)
        if t is ast.Constant:
            v = e.value
            elts.append(_STRING_FACTS[_device_of_string(v)] if isinstance(v, str)
                        else NONE_FACT if v is None else OTHER_FACT)
        elif (t is ast.Tuple or t is ast.List or t is ast.Set) and depth < 3:
            f = _literal_display(e, depth + 1)
            if f is None:
                return None
            elts.append(f)
        else:
            return None
    if not elts:
        return Fact(SEQ, Grad.NO, Device.CPU)
    el = join_all(elts)
    items = tuple(elts) if type(node) is ast.Tuple and len(elts) <= 8 else None
    return Fact(SEQ, el.grad, el.device, element=el, items=items)


# What may give a torch module trainable parameters after its constructor (Evaluator.
# _may_add_trainable): setting `requires_grad` to anything but a literal False (`p.requires_grad =
# True`, `= flag`, `m.requires_grad_()`, `nn.Module.requires_grad_(net)`), or adding to a module
# from outside its methods (`net.fc = nn.Linear(...)`, `net.fc.weight = nn.Parameter(...)`,
# `add_module(`, `register_parameter(`, `setattr(`).
_GRAD_SET = LazyPattern(r"\.requires_grad\s*=(?!=)(?!\s*False\b)|requires_grad_\((?!\s*(?:requires_grad\s*=\s*)?False\s*\))")
_LAYER_SET_OUTSIDE = LazyPattern(r"(?m)^[ \t]*(?!self\b)[A-Za-z_]\w*(?:\.\w+)+[ \t]*=(?!=)[ \t]*(?:torch\.)?nn\.")
_ADDS_BY_NAME = ("add_module(", "register_parameter(", "register_module(", "setattr(")


def _named_device(s: str) -> Device:
    """The device string `s` names, read whole (blanks stripped, case folded)."""
    s = s.strip().lower()
    if s == "cpu" or s.startswith("cpu:"):
        return Device.CPU
    if s.split(":")[0] in ("cuda", "mps", "xpu", "hip", "npu", "xla", "meta", "hpu", "privateuseone"):
        return Device.ACCEL
    return Device.UNKNOWN


class Evaluator:
    """Expression semantics over `State`s.  The walker (walker.py), a subclass, owns statements
    and control flow, and supplies `frame` (the scope being walked), `_cache` and
    `_dotted_roots` (first names of the dotted keys, `self` of `self.w`, ever bound)."""

    project = None  # the whole project (project.py), when the front end knows it
    _project_facts: dict = {}

    def _may_add_trainable(self) -> bool:
        """Whether the file's text may give a module trainable parameters after its constructor
        (`p.requires_grad = True`, `m.requires_grad_()`, `net.fc = nn.Linear(4, 2)`, `add_module(`);
        read once a file."""
        found = self.__dict__.get("_grad_on_text")
        if found is None:
            lines = getattr(self, "lines", None)
            text = lines.text if lines is not None else None
            found = self._grad_on_text = text is None or (
                "requires_grad" in text and _GRAD_SET.search(text) is not None
                or any(w in text for w in _ADDS_BY_NAME)
                or "nn." in text and _LAYER_SET_OUTSIDE.search(text) is not None)
        return found

    def project_fact(self, qual: str | None) -> Fact | None:
        """What a project module defines under qualified name `qual` (None: not the project's)."""
        project = self.project
        if project is None or not qual:
            return None
        cache = self._project_facts
        if qual in cache:
            return cache[qual]
        f = project.fact(qual) if project.owns(qual) else None
        cache[qual] = f
        return f

    def _annotation_fact(self, node, state: State) -> Fact:
        q = self.qualname(node, state)
        if q is None and isinstance(node, ast.Constant) and isinstance(node.value, str):
            q = node.value
        # (Tagged: what makes the value a tensor is the annotation, which callers do not always
        # keep to, `x: torch.Tensor` handed a list; a rule may ask, TNS202.)
        if q in ("torch.Tensor", "Tensor"):
            return _ANNOTATED_TENSOR
        if q in api.PARAMETER:
            return tensor(Grad.YES, Device.UNKNOWN, leaf=True, tags=frozenset({"parameter", ANNOTATED}), by_flow=False)
        if q and (q == "nn.Module" or q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper()):
            # `model: nn.Module`, `layer: nn.Linear`: a module (parameters require grad).
            return Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN, paramfree=q in api.PARAMFREE_MODULES)
        return UNKNOWN_FACT

    def effect(self, stmt: ast.stmt, state: State) -> None:
        """What a simple statement does to the value facts (after the rules and the other
        domains saw the state before it)."""
        t = type(stmt)
        if t is ast.Assign:
            f = self.fact(stmt.value, state)
            for target in stmt.targets:
                self._bind(target, f, state, stmt.value)
            value = stmt.value
            if type(value) is ast.Call and type(value.func) is ast.Name and (value.args or value.keywords):
                # `probe = LinearProbe(backbone)`, whose constructor freezes the backbone.
                self._handed_to_freeze(value, state)
            if type(value) is ast.Call and not state.no_grad and self._leaves_grad_off(value.func, state):
                state.no_grad = True  # `model = setup_inference()`, which ends with grad off
            if (f.kind == MAPPING or f.kind == SEQ) and self._container_aliases is not None:
                # `alias = out`, `a = b = {}`: one list or dict under two names.
                names = [n.id for n in (*stmt.targets, stmt.value) if type(n) is ast.Name]
                if len(names) > 1:
                    for n in names:
                        self._container_aliases.setdefault(n, set()).update(m for m in names if m != n)
        elif t is ast.AnnAssign:
            if stmt.value is not None:
                self._bind(stmt.target, self.fact(stmt.value, state), state, stmt.value)
        elif t is ast.AugAssign:
            target = stmt.target
            if isinstance(target, (ast.Name, ast.Attribute)):
                key = dotted_name(target)
                if key is not None:
                    old = self.fact(target, state)
                    new = self._binop(old, self.fact(stmt.value, state), state)
                    if old.kind == TENSOR and old.leaf:
                        new = new.but(leaf=True)
                    self._bind(target, new, state)
        elif t is ast.Expr:
            self._call_effect(stmt.value, state)
        elif t is ast.Delete:
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    state.env.pop(target.id, None)

    # Names bound to one another's list or dict (`alias = out`): {name: names} (the walker's).
    _container_aliases: dict | None = None

    def _rebind_container(self, target, old: Fact, new: Fact, state: State) -> None:
        """Bind `target` (a list or dict whose fact was `old`) to `new`, and so the names bound to
        the same list or dict (`alias = out`, then `alias["pred"] = ...`: `out` holds it too)."""
        self._bind(target, new, state)
        aliases = self._container_aliases
        if aliases and type(target) is ast.Name and target.id in aliases:
            env = state.env
            for name in aliases[target.id]:
                if env.get(name) is old:
                    env[name] = new

    def _handed_mappings(self, call: ast.Call, state: State) -> None:
        """A dict handed to a function or method of the project by a call statement (whose result
        is not used: it works by what it does, `detach_all(outputs)`) may hold anything after."""
        handed = [a for a in (*call.args, *(k.value for k in call.keywords)) if type(a) is ast.Name]
        if not handed:
            return
        facts = [(a, state.env.get(a.id)) for a in handed]
        facts = [(a, f) for a, f in facts if f is not None and f.kind == MAPPING]
        if not facts:
            return
        func = call.func
        callee = self.fact(func, state) if type(func) is ast.Name else self.fact(func.value, state)
        if callee.node is None or callee.kind not in (FUNCTION, OBJECT, MODULE, CLASS):
            return
        for a, f in facts:
            self._rebind_container(a, f, _forgotten(f), state)

    def _handed_to_freeze(self, call: ast.Call, state: State) -> None:
        """`freeze(teacher)`, `set_requires_grad([netD_A, netD_B], False)`: the torch modules a
        call hands by name to a function that freezes them are frozen after it.  For certain
        where the function is one of the file's and freezes that parameter at the top level of
        its body (as a constructor freezes its instance: walker.freezes_self); else where its
        name says it freezes all of it (`freeze`, `freeze_model`, `set_requires_grad`,
        `toggle_grad`, not `freeze_bn` or `freeze_backbone`): then what the module computes may
        require grad (a strict "may"), as after any freeze (a layer may be thawed since).  A
        literal True among the arguments (`set_requires_grad(D, True)`), or `unfreeze(m)`,
        thaws what a freeze before made of it."""
        func = call.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        if name is None:
            return
        low = name.lower().strip("_")
        # (Whole freezes by their names; not `freeze_bn`, `freeze_backbone(model)`: a part.)
        thaw_named = low in _THAW_NAMES
        named = thaw_named or low in _FREEZE_NAMES or low.endswith("requires_grad")
        if not call.args and (named or not call.keywords) or not named and type(func) is not ast.Name:
            return
        args = [*call.args, *(k.value for k in call.keywords)]
        # A literal True (`set_requires_grad(D, True)`, or left to the function's default:
        # `requires_grad(netG)` of `def requires_grad(model, flag=True)`), or `unfreeze(m)`: it
        # thaws what it is handed (what a freeze before it made of it is undone).
        flags = [a.value for a in args if type(a) is ast.Constant and type(a.value) is bool]
        if named and not flags:
            callee, skip = self.callee_def(call, state)
            left = left_bool_default(callee, call, skip) if callee is not None else None
            if left is not None:
                flags = [left]
        thaws = named and (thaw_named or True in flags)
        if not named and not any(
                self.fact(e, state).kind == MODULE for a in (*call.args, *(kw.value for kw in call.keywords))
                for e in (a.elts if type(a) in (ast.List, ast.Tuple) else (a,)) if dotted_name(e) is not None):
            return  # (no torch module handed by name: nothing to freeze, and the callee not asked)
        frozen_params = None if thaws else self.freezes_parameters(call, state)
        if frozen_params is None and not named:
            # (`set_trainable(enc, True)` of `def set_trainable(m, flag): m.requires_grad_(flag)`.)
            frozen_params = self.thaws_parameters(call, state)
            if frozen_params is None:
                return
            thaws = True
        handed = list(enumerate(call.args))
        if frozen_params is not None:
            handed += [(kw.arg, kw.value) for kw in call.keywords if kw.arg in frozen_params]
        for i, a in handed:
            if frozen_params is not None and i not in frozen_params:
                continue
            for e in (a.elts if type(a) in (ast.List, ast.Tuple) else (a,)):
                key = dotted_name(e)
                if key is None:
                    continue
                before = self.fact(e, state)
                if before.kind == MODULE and before.frozen == thaws:
                    self._bind(e, self._changed_in_place(key, before, _frozen(before, not thaws), state), state)

    def callee_def(self, call: ast.Call, state: State) -> tuple:
        """(the def a call runs, whether its first parameter is the instance) for a function of
        the file or of another module of the project (a def with its parameters), or a method of
        a class of the file (`self.set_requires_grad(...)`, `helper.freeze(...)`) or of another
        module's (its stub); (None, False) when not known."""
        func = call.func
        f = self.fact(func, state)
        if f.kind == FUNCTION and f.node is not None:
            node = f.node if isinstance(f.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else getattr(f.node, "node", None)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and type(func) is ast.Name:
                return node, False
        if type(func) is not ast.Attribute:
            return None, False
        recv = self.fact(func.value, state)
        owner = recv.node
        if recv.kind not in (OBJECT, MODULE) or owner is None:
            return None, False
        if isinstance(owner, ast.ClassDef):
            info = self.classes.get(id(owner))
            method = info.method(func.attr)[0] if info is not None else None
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return method, is_plain_method(method)
            # Inherited from a class of another module (`BaseModel.set_requires_grad`).
            for base in project_bases(info) if info is not None else ():
                stub = base.method_stub(func.attr)
                if stub is not None:
                    return stub, not base.is_static(func.attr)
            return None, False
        stub = owner.method_stub(func.attr) if hasattr(owner, "method_stub") else None
        if stub is None:
            return None, False
        return stub, not owner.is_static(func.attr)

    def freezes_parameters(self, call: ast.Call, state: State):
        """The positions of the arguments a call of one of the file's functions freezes (None:
        not such a call, or not known).  The walker answers."""
        return None

    def thaws_parameters(self, call: ast.Call, state: State):
        """The positions of the arguments a call of one of the file's functions may make require
        grad again (None: not such a call, or not known).  The walker answers."""
        return None

    def _call_effect(self, node, state: State) -> None:
        """State changes made by a call statement: grad-mode switches and in-place state."""
        if not isinstance(node, ast.Call):
            if type(node) in (ast.Await, ast.Yield, ast.YieldFrom):
                self.fact(node, state)  # `await log.put(f(x))`: the calls in it are call sites
            return
        func = node.func
        if not isinstance(func, ast.Attribute) or isinstance(func.value, ast.Name) or func.attr == "__init__":
            # `log(x)`, `self.step(x)`, `super().__init__(model)`: the call's arguments are a call site
            self.fact(node, state)
            self._handed_mappings(node, state)
            self._handed_to_freeze(node, state)
        else:
            # `self.writer.add(to_numpy(out))`, `Trainer(model).fit(x)`: the calls in the
            # receiver and among the arguments are call sites, and so is the method's call on an
            # instance of a class of the file (what it returns is not asked: nothing uses it).
            recv = self.fact(func.value, state)
            if recv.node is not None and recv.kind in (OBJECT, MODULE, CLASS):
                self.note_method_call(recv.node, func.attr, node, state, on_class=recv.kind == CLASS, recv=recv)
            self._arguments(node, state)
            self._handed_mappings(node, state)
        switch = set_grad_call(node, lambda n: self.qualname(n, state))
        if switch is not None:
            if switch:
                arg = node.args[0] if node.args else _kwarg(node, "mode")
                flag = self.literal_flag(arg)
                if flag is not None:
                    switch = not flag  # (`train = True`, then `torch.set_grad_enabled(train)`)
            state.no_grad = switch
            return
        if not state.no_grad and self._leaves_grad_off(func, state):
            # `setup_inference()`, which calls `torch.set_grad_enabled(False)`: grad is off after.
            state.no_grad = True
            return
        if not isinstance(func, ast.Attribute):
            return
        m = func.attr
        if m in api.MODULE_SELF_METHODS:
            # `model.to(dev)`, `m.eval().requires_grad_(False).to(dev)`: methods that change the
            # module and return it.  The chain's value is the module as it now is.
            root = func.value
            while (isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute)
                   and root.func.attr in api.MODULE_SELF_METHODS):
                root = root.func.value
            key = dotted_name(root)
            if key is None and type(root) is ast.Subscript and type(root.slice) is ast.Constant \
                    and type(root.slice.value) is str and dotted_name(root.value) is not None:
                # `models["enc"].requires_grad_(False)`: the dict holds the module as it is now.
                before = self.fact(root, state)
                if before.kind == MODULE and self.fact(root.value, state).kind == MAPPING:
                    after = self.fact(node, state)
                    if after.kind == MODULE:
                        self._bind(root, after, state)
                return
            before = self.fact(root, state) if key is not None else None
            if before is not None and before.kind == MODULE:
                after = self.fact(node, state)
                if after.kind == MODULE:
                    self._changed_in_place(key, before, after, state)
                    self._bind(root, after, state)
                return
        key = dotted_name(func.value)
        if key is None:
            return
        recv = self.fact(func.value, state)
        if recv.kind == MODULE:
            # `model.freeze()` (after the module's own methods above: `model.eval()` is asked
            # nothing): a method of its class that freezes every parameter of the instance
            # (walker.freezes_self), or Lightning's `freeze()`.
            if not node.args and not node.keywords and not recv.frozen and self.method_freezes(recv.node, m):
                self._bind(func.value, self._changed_in_place(key, recv, _frozen(recv, True), state), state)
            return
        if recv.kind == TENSOR or recv.kind == UNKNOWN:
            if m == "requires_grad_":
                flag = _const_bool(node.args[0]) if node.args else True
                grad = Grad.YES if flag else (Grad.NO if flag is False else Grad.UNKNOWN)
                self._bind(func.value, Fact(TENSOR, grad, recv.device, leaf=grad is Grad.YES,
                                            by_flow=recv.by_flow and recv.kind == TENSOR), state)
                if flag is False:
                    self._freeze_owner(recv, state)
            elif m == "detach_":
                self._bind(func.value, recv.but(kind=TENSOR, grad=Grad.NO, leaf=False, min_grad=None), state)
                # (`for p in ema.parameters(): p.detach_()`: each stops requiring grad, as with
                # `requires_grad_(False)`.)
                self._freeze_owner(recv, state)
        if recv.kind == MAPPING and m not in _MAPPING_READS:
            # `d.update(...)`, `d.setdefault(...)`, `d.pop(k)`: what it holds is not followed.
            self._rebind_container(func.value, recv, _forgotten(recv), state)
            return
        if recv.kind == SEQ and m in ("append", "extend", "insert") and node.args:
            # losses.append(loss): the list's elements are now (also) what was added.
            new = self.fact(node.args[-1], state)
            if m == "extend":
                new = self._element_of(new)
            el = join(recv.element, new) if recv.element is not None else new
            self._rebind_container(func.value, recv,
                                   Fact(SEQ, max(recv.grad, el.grad), max(recv.device, el.device), element=el), state)

    def _changed_in_place(self, key: str, old: Fact, new: Fact, state: State) -> Fact:
        """`new`, what the module `key` names (its fact `old`) became in place (frozen, thawed).
        An instance its constructor call was handed it by that name (`t = Trainer(m)`, then
        `m.requires_grad_(False)`: `_constructed`) holds it as it is now: the instances this
        walk holds in names are rebound, on this path (by name, not by fact: two modules may
        have one fact, `a = make()`, `b = make()`)."""
        if old is not new and old.frozen != new.frozen:
            env, outer = state.env, state.outer
            # (Also an instance of the enclosing scopes, `t = Trainer(m)` at the top of the
            # module and the freeze in `main()`: rebound here, for the rest of this walk.)
            items = list(env.items()) if not outer else [*env.items(), *((k, f) for k, f in outer.items()
                                                                        if k not in env)]
            for k, f in items:
                attrs = f.attrs
                if type(attrs) is LazyAttrs and attrs.call is not None:
                    changed = attrs.rehanded(key, new)
                    if changed is not None:
                        env[k] = f.but(attrs=changed)
        return new

    enclosing: dict = {}  # (walker.Walker's: id(def) -> the scope of the function defining it)

    def called_function(self, func, state: State):
        """The function a call calls by `func`, its name or a module's attribute
        (`engine.train_one_epoch`): its def in the file, or the `ProjectEntity` of a function of
        another module of the project; None otherwise (a method of a value, whose fact could load
        a class's attributes for nothing; a library's function)."""
        if type(func) is not ast.Name:
            q = self.qualname(func, state) if type(func) is ast.Attribute else None
            if q is None or q.startswith(_LIBRARY_PREFIXES):
                return None
        f = self.fact(func, state)
        return f.node if f.kind == FUNCTION else None

    def _leaves_grad_off(self, func, state: State) -> bool:
        """Whether the function a call statement calls by `func` (called_function) turns grad
        off for what follows the call (gradmode.leaves_grad_off)."""
        node = self.called_function(func, state)
        if node is None:
            return False
        if hasattr(node, "leaves_grad_off"):
            return node.leaves_grad_off()  # (of another module of the project: its module answers)
        if not isinstance(node, ast.FunctionDef) or self.lines is None:
            return False
        memo = self.__dict__.setdefault("_grad_left_off", {})
        found = memo.get(id(node))
        if found is None:
            frame = getattr(self, "module_frame", None)
            found = memo[id(node)] = frame is not None and "set_grad_enabled" in self.source_of(node) \
                and leaves_grad_off(node, lambda n: self.qualname(n, frame.state))
        return found

    def literal_flag(self, arg) -> bool | None:
        """The truth of `arg`, a name the function being walked (or the module, where the
        function does not bind it) binds once, to a literal (`train = True`, then
        `torch.set_grad_enabled(train)`); None otherwise."""
        if type(arg) is not ast.Name:
            return None
        frame = getattr(self, "frame", None)
        scope = frame.scope.node if frame is not None else self.tree
        name = arg.id
        if not isinstance(scope, ast.Module) and name not in local_names(scope):
            if self.enclosing.get(id(scope)) is not None:
                return None  # (a nested function: the name may be the enclosing one's)
            scope = self.tree
            text = self.lines.text if self.lines is not None else None
            if text is None or "global" in text and _GLOBAL_STATEMENT.search(text) is not None:
                return None
        return bool_binding(scope, name) if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) \
            else None

    def _owner_fact(self, key: str, state: State) -> Fact | None:
        """The fact of `key`, the module whose parameters a loop went over (`model`, or an
        attribute of one, `net.backbone`: evaluated where no name binds it)."""
        f = state.lookup(key)
        if f is None and "." in key:
            try:
                f = self.fact(ast.parse(key, mode="eval").body, state)
            except SyntaxError:
                return None
            self._dotted_roots.add(key.split(".", 1)[0])  # (the caller binds `key`)
        return f

    def _freeze_owner(self, param: Fact, state: State) -> None:
        """`p.requires_grad_(False)` on a parameter of `model.parameters()` freezes `model`."""
        for tag in param.tags:
            if tag.startswith("param_of:"):
                of = self._owner_fact(tag[9:], state)
                if of is not None and of.kind == MODULE:
                    state.env[tag[9:]] = self._changed_in_place(tag[9:], of, _frozen(of, True), state)

    def _bind(self, target, fact: Fact, state: State, value=None) -> None:
        t = type(target)
        if t is ast.Name:
            env = state.env
            env[target.id] = fact
            prefix = target.id + "."
            # Only names some `name.attr` was ever bound under are scanned for: scanning every
            # key on every assignment made a module of 50,000 assignments take a minute.
            if target.id in self._dotted_roots and any(k.startswith(prefix) for k in env if "." in k):
                for k in [k for k in env if k.startswith(prefix)]:
                    del env[k]
        elif t in (ast.Tuple, ast.List):
            elts = target.elts
            if (
                isinstance(value, (ast.Tuple, ast.List))
                and len(value.elts) == len(elts)
                and not any(isinstance(e, ast.Starred) for e in elts + value.elts)
            ):
                facts = [self.fact(v, state) for v in value.elts]
                for e, f in zip(elts, facts):
                    self._bind(e, f, state)
                return
            if fact.items is not None and len(fact.items) == len(elts) and not any(
                isinstance(e, ast.Starred) for e in elts
            ):
                for e, f in zip(elts, fact.items):
                    self._bind(e, f, state)
                return
            element = self._element_of(fact)
            for e in elts:
                if isinstance(e, ast.Starred):
                    self._bind(e.value, Fact(SEQ, element.grad, element.device, element=element), state)
                else:
                    self._bind(e, element, state)
        elif t is ast.Attribute:
            key = dotted_name(target)
            if target.attr == "requires_grad" and key is not None:
                base = self.fact(target.value, state)
                if base.kind == TENSOR:
                    flag = _const_bool(value) if value is not None else None
                    if flag is True:
                        self._bind(target.value, base.but(grad=Grad.YES, leaf=True), state)
                    elif flag is False:
                        self._bind(target.value, base.but(grad=Grad.NO, leaf=False), state)
                        for tag in base.tags:
                            if tag.startswith("param_of:"):
                                owner = tag[9:]
                                of = self._owner_fact(owner, state)
                                if of is not None and of.kind == MODULE:
                                    state.env[owner] = self._changed_in_place(owner, of, _frozen(of, True), state)
                return
            if key is not None:
                state.env[key] = fact
                self._dotted_roots.add(key.split(".", 1)[0])
                if target.attr in api.PARAM_ATTRS and fact.kind == TENSOR and fact.grad is Grad.NO:
                    # `net.weight.requires_grad_(False)`: the module's fact holds it too, so that
                    # what a function returns, or a module exports, keeps it (`def build(): net
                    # = nn.Linear(3, 2); net.weight.requires_grad = False; return net`).
                    owner = key.rsplit(".", 1)[0]
                    of = self.fact(target.value, state)
                    if of.kind == MODULE and (of.attrs is None or type(of.attrs) is dict):
                        state.env[owner] = of.but(attrs={**(of.attrs or {}), target.attr: fact})
        elif t is ast.Starred:
            self._bind(target.value, fact, state)
        elif t is ast.Subscript:
            # `preds[i] = out`: a list now may hold `out` (and may still hold what it held: the
            # store replaces one element, which one is not known).
            key = dotted_name(target.value)
            if key is not None:
                seq = self.fact(target.value, state)
                if seq.kind == SEQ:
                    el = fact if seq.element is None else join(seq.element, fact)
                    self._rebind_container(target.value, seq, Fact(SEQ, el.grad, el.device, element=el), state)
                elif seq.kind == MAPPING:  # `state["step"] = 3`: it may hold that now
                    el = fact if seq.element is None else join(seq.element, fact)
                    i = target.slice
                    keyed = {**seq.attrs, i.value: fact} if seq.attrs is not None and type(i) is ast.Constant \
                        and type(i.value) is str else None
                    self._rebind_container(target.value, seq,
                                           seq.but(grad=el.grad, device=el.device, element=el, attrs=keyed), state)

    # ------------------------------------------------------------------ narrowing

    def narrowed_parts(self, node, state: State) -> list:
        """(child, state) for the parts of `a if test else b` and `a and b` / `a or b`, each
        with what the tests before it establish (`x if torch.is_tensor(x) else torch.tensor(x)`)."""
        if isinstance(node, ast.IfExp):
            when_true, when_false = self.narrowings(node.test, state)
            return [(node.test, state), (node.body, self.narrowed(state, when_true)),
                    (node.orelse, self.narrowed(state, when_false))]
        out = []
        st = state
        is_and = isinstance(node.op, ast.And)
        for v in node.values:
            out.append((v, st))
            when_true, when_false = self.narrowings(v, st)
            st = self.narrowed(st, when_true if is_and else when_false)
        return out

    def narrowed(self, state: State, facts: list) -> State:
        """A copy of `state` with what a test established (see `narrowings`)."""
        if not facts:
            return state.copy()
        st = state.copy()
        env = st.env
        for key, what in facts:
            if key == GRAD_MODE_KEY:
                st.no_grad = what
            elif key == _UNCALLED_KEY:
                # What the known calls passed (and what was made of it) says nothing here.
                for k, f in list(env.items()):
                    if _from_calls(f):
                        env[k] = UNKNOWN_FACT
            elif key == _DEVICE_VAR_KEY:
                var, dev = what
                for k, f in list(env.items()):
                    if f.device_var == var and f.kind == TENSOR:
                        env[k] = f.but(device=dev)
                f = st.lookup(var)
                if f is not None and f.kind in (DEVICE, OTHER, UNKNOWN):
                    env[var] = Fact(DEVICE, Grad.NO, dev)
                if "." in var:
                    self._dotted_roots.add(var.split(".", 1)[0])
            else:
                env[key] = what
                if "." in key:
                    self._dotted_roots.add(key.split(".", 1)[0])
        return st

    def narrowings(self, test, state: State) -> tuple[list, list]:
        """What a test establishes: ([(key, fact)] where it holds, [(key, fact)] where it does
        not), from `isinstance(x, C)`, `torch.is_tensor(x)`, `type(x) is C`, `x.requires_grad`,
        `x.is_cuda`, device comparisons (`x.device.type != "cpu"`, `device == "cpu"`),
        `torch.is_grad_enabled()`, and `not`, `and`, `or` of these."""
        t = type(test)
        if t is ast.UnaryOp and isinstance(test.op, ast.Not):
            when_true, when_false = self.narrowings(test.operand, state)
            return when_false, when_true
        if t is ast.BoolOp:
            parts = [self.narrowings(v, state) for v in test.values]
            if isinstance(test.op, ast.And):
                return [p for ps, _ in parts for p in ps], []
            return [], [n for _, ns in parts for n in ns]
        if t is ast.Attribute:
            return self._attribute_test(test, state)
        if t is ast.Name:
            return self._constant_parameter_test(test, state)
        if t is ast.Compare:
            found = self._device_test(test, state)
            if found is not None:
                return found
        target = classes = None
        if t is ast.Call and len(test.args) == 2 and not test.keywords and isinstance(test.func, ast.Name) \
                and test.func.id == "isinstance" and state.lookup("isinstance") is None:
            target, classes = test.args
            negative = True
        elif t is ast.Call and len(test.args) == 1 and (
                self.qualname(test.func, state) == "torch.is_tensor"
                or (dotted_name(test.func) or "").rsplit(".", 1)[-1] == "is_torch_tensor"):
            # torch.is_tensor(x); transformers' and others' is_torch_tensor(x)
            target, classes = test.args[0], None
            negative = True
        elif t is ast.Call and not test.args and self.qualname(test.func, state) in _GRAD_ENABLED_TESTS:
            return [(GRAD_MODE_KEY, False)], [(GRAD_MODE_KEY, True)]
        elif t is ast.Compare and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)) \
                and isinstance(test.left, ast.Call) and isinstance(test.left.func, ast.Name) \
                and test.left.func.id == "type" and len(test.left.args) == 1 and state.lookup("type") is None:
            target, classes = test.left.args[0], test.comparators[0]
            negative = False  # type(x) is not C says nothing of subclasses
        else:
            return [], []
        key = dotted_name(target)
        if key is None:
            return [], []
        current = self.fact(target, state)
        if classes is None and self.qualname(test.func, state) != "torch.is_tensor":
            # `is_torch_tensor(x)`: a helper known by its name only, so not proof for a fix.
            when_true = current.but(by_flow=False) if current.kind == TENSOR else tensor(
                Grad.UNKNOWN, Device.UNKNOWN, by_flow=False)
            return [(key, when_true)], [(key, self._not_tensor(current))]
        names = ["torch.Tensor"] if classes is None else [
            self._class_name(c, state) for c in (classes.elts if isinstance(classes, ast.Tuple) else [classes])]
        when_true = join_all(self._instance_of(current, n) for n in names)
        when_false = []
        if negative and all(n in _TENSOR_CLASSES for n in names):
            when_false = [(key, self._not_tensor(current))]
        return [(key, when_true)], when_false

    def _constant_parameter_test(self, test: ast.Name, state: State) -> tuple[list, list]:
        """`if cond:` on a parameter that every known call gives a literal of one truth
        (summaries.parameter_facts; never assigned in the function): the other branch is not
        reached by those calls."""
        truth = self._constant_truth(test.id, state, SITE_CONSTANTS)
        if truth is None:
            return [], []
        uncalled = [(_UNCALLED_KEY, None)]
        return ([], uncalled) if truth else (uncalled, [])

    def call_constant(self, test, state: State) -> bool | None:
        """The truth of `test` (`frozen`, `not frozen`), a parameter the function being walked
        never binds again, in a walk for one call that gives it a literal (facts.CALL_CONSTANTS);
        None otherwise."""
        negated = type(test) is ast.UnaryOp and type(test.op) is ast.Not
        if negated:
            test = test.operand
        if type(test) is not ast.Name:
            return None
        truth = self._constant_truth(test.id, state, CALL_CONSTANTS)
        return None if truth is None else truth != negated

    def _constant_truth(self, name: str, state: State, tags: tuple) -> bool | None:
        """The truth that one of `tags` (false, true: SITE_CONSTANTS or CALL_CONSTANTS) gives
        parameter `name`, which the function being walked never binds again; None otherwise."""
        f = state.lookup(name)
        if f is None or f.tags.isdisjoint(tags):
            return None
        said = f.tags.intersection(tags)
        if len(said) != 1:
            return None
        memo = self.__dict__.setdefault("_unassigned", {})  # (a test in a loop is evaluated again)
        key = (id(self.frame.scope.node) if self.frame is not None else None, name)
        unassigned = memo.get(key)
        if unassigned is None:
            unassigned = memo[key] = self._unassigned_parameter(name)
        return tags[1] in said if unassigned else None

    def _unassigned_parameter(self, name: str) -> bool:
        """Whether `name` is a parameter of the function being walked that nothing in it binds
        again."""
        scope = self.frame.scope if self.frame is not None else None
        func = scope.node if scope is not None else None
        if scope is None or scope.kind != "function" or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if name not in parameter_names(func.args):
            return False
        for node in all_nodes(func):
            t = type(node)
            if t is ast.Name:
                if node.id == name and type(node.ctx) is not ast.Load:
                    return False
            elif t is ast.Global or t is ast.Nonlocal:
                if name in node.names:
                    return False
            elif t is ast.alias:
                if (node.asname or node.name.split(".", 1)[0]) == name:
                    return False
            elif getattr(node, "name", None) == name and t is not ast.FunctionDef and t is not ast.AsyncFunctionDef:
                return False  # `except E as cond`, a match pattern's name, a nested class
            elif t in (ast.FunctionDef, ast.AsyncFunctionDef) and node is not func and node.name == name:
                return False
        return True

    def _attribute_test(self, test: ast.Attribute, state: State) -> tuple[list, list]:
        """`if t.requires_grad:` / `if t.is_cuda:`."""
        key = dotted_name(test.value)
        if key is None or test.attr not in ("requires_grad", "is_cuda"):
            return [], []
        current = self.fact(test.value, state)
        if current.kind not in (TENSOR, UNKNOWN):
            return [], []
        if test.attr == "requires_grad":
            yes = current.but(kind=TENSOR, grad=Grad.YES, min_grad=None)
            no = current.but(grad=Grad.NO, min_grad=None, leaf=False)
        else:
            yes = current.but(kind=TENSOR, device=Device.ACCEL)
            no = current.but(device=Device.CPU)
        return [(key, yes)], [(key, no)]

    def _device_test(self, test: ast.Compare, state: State) -> tuple[list, list] | None:
        """`x.device.type != "cpu"`, `x.device == torch.device("cpu")`, `str(x.device) == "cpu"`,
        `device == "cpu"`, `device.type == "cuda"`: where the comparison says CPU, the tensor is
        there (or every tensor moved with that device variable is)."""
        if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
        left, right = test.left, test.comparators[0]
        dev = self._device_constant(right, state)
        if dev is None:
            left, right = right, left
            dev = self._device_constant(right, state)
        if dev is None or dev is Device.UNKNOWN:
            return None
        # Strip `str(...)` and `.type` to the device expression.
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "str" \
                and len(left.args) == 1:
            left = left.args[0]
        if isinstance(left, ast.Attribute) and left.attr == "type":
            left = left.value
        where: list = []
        if isinstance(left, ast.Attribute) and left.attr == "device":
            key = dotted_name(left.value)
            current = self.fact(left.value, state)
            if key is not None and current.kind in (TENSOR, UNKNOWN):
                where = [(key, current.but(device=dev))]
        else:
            var = dotted_name(left)
            if var is not None:
                where = [(_DEVICE_VAR_KEY, (var, dev))]
        if not where:
            return None
        # Only equality says where: `device.type != "cuda"` may be mps as well as the CPU.
        return (where, []) if isinstance(test.ops[0], (ast.Eq, ast.Is)) else ([], where)

    def _device_constant(self, node, state: State) -> Device | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _device_of_string(node.value)
        if isinstance(node, ast.Call) and self.qualname(node.func, state) == "torch.device" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return _device_of_string(node.args[0].value)
        return None

    def _class_name(self, node, state: State) -> str | None:
        q = self.qualname(node, state)
        if q is None and isinstance(node, ast.Name) and state.lookup(node.id) is None:
            q = node.id  # a builtin: list, int, ...
        return q

    def _applied_to(self, node: ast.Call, recv: Fact, state) -> None:
        """`net.apply(init_weights)`: `init_weights`, a function of the file or of another module
        of the project, is called for each submodule of `net`, a module as `net` is (frozen where
        it is), of a class not known (summaries.note_applied)."""
        f = self.fact(node.args[0], state)
        if f.kind == FUNCTION and f.node is not None and not self._own_apply(recv):
            self.note_applied(f.node, node, recv.but(qual=None, attrs=None, node=None, items=None, element=None))

    def _own_apply(self, module: Fact) -> bool:
        """Whether the class of `module` (of the file, or of another module of the project)
        defines or inherits from a class of the project an `apply` of its own (not
        nn.Module's)."""
        owner = module.node
        if owner is None:
            return False
        if hasattr(owner, "method_owner"):
            return owner.method_owner("apply") is not None
        info = self.classes.get(id(owner)) if isinstance(owner, ast.ClassDef) else None
        return info is None or info.method("apply")[0] is not None or any(
            b.method_owner("apply") is not None for b in project_bases(info))

    @staticmethod
    def _instance_of(current: Fact, cls: str | None) -> Fact:
        """What is known of a value with fact `current` that is an instance of class `cls`."""
        if cls in _TENSOR_CLASSES:
            if current.kind == TENSOR:
                return current.but(by_flow=True)
            grad = Grad.YES if cls in api.PARAMETER else Grad.UNKNOWN
            return tensor(grad, Device.UNKNOWN, leaf=cls in api.PARAMETER, by_flow=True)
        if cls is not None and (cls == "torch.nn.Module" or cls.startswith("torch.nn.") and cls.rsplit(".", 1)[-1][:1].isupper()):
            return current if current.kind == MODULE else Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN, by_flow=True)
        if cls in _SCALAR_CLASSES:
            return OTHER_FACT
        if cls in ("numpy.ndarray", "numpy.generic"):
            return ARRAY_FACT
        if cls is not None and cls.split(".", 1)[0] in api.FOREIGN_FRAMEWORKS:
            return FOREIGN_FACT
        if cls in ("list", "tuple", "dict", "set", "frozenset"):
            # The analysis treats model outputs (tuples, dicts) as tensors: indexing one gives
            # a tensor.  The value itself is no tensor.
            if current.kind == TENSOR and "module_output" in current.tags:
                return current.but(by_flow=False)
            if current.kind == SEQ or current.kind == MAPPING and cls == "dict":
                return current
            return Fact(SEQ, Grad.UNKNOWN, Device.UNKNOWN) if cls != "dict" else OTHER_FACT
        # A class we do not know (a project class, a Tensor subclass...): a tensor by the flow
        # of the code may be one of a subclass; one only by an annotation (`observation:
        # torch.Tensor` under `isinstance(observation, NonTensorData)`) is not known to be one.
        if current.kind == TENSOR:
            return current.but(by_flow=False) if current.by_flow else UNKNOWN_FACT
        return current

    @staticmethod
    def _not_tensor(current: Fact) -> Fact:
        if current.kind == TENSOR and "module_output" in current.tags:
            # A tuple or a dict of outputs, which may require grad (a module's own `forward`
            # says what it returns, and that is no tensor there): not known, as where a helper
            # converts what is not a tensor (`np.asarray(x)` after `if isinstance(x,
            # torch.Tensor): return x.detach().numpy()`).
            return current.but(by_flow=False, grad=Grad.UNKNOWN, min_grad=None)
        if current.kind in (TENSOR, UNKNOWN):
            return Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({"not_tensor"}))
        return current

    # ------------------------------------------------------------------ evaluation

    def qualname(self, node, state: State | None = None) -> str | None:
        state = state or self.frame.state
        t = type(node)
        if t is _Name:
            f = state.lookup(node.id)
            return f.qual if f is not None and f.kind == IMPORT else None
        if t is not _Attribute:
            return None
        # (Asked of each call's callee by several rules and domains: kept with the facts, under
        # the node's id negated, for the same state, until the next statement.)
        key = -id(node)
        cached = self._cache.get(key)
        if cached is not None and cached[0] is state.env:
            return cached[1]
        base = self.qualname(node.value, state)
        q = f"{base}.{node.attr}" if base is not None else None
        self._cache[key] = (state.env, q)
        return q

    def fact(self, node, state: State | None = None) -> Fact:
        state = state or self.frame.state
        key = id(node)
        cached = self._cache.get(key)
        if cached is not None and cached[0] is state.env:
            return cached[1]
        f = self._eval(node, state)
        if state.no_grad and f.grad is not Grad.NO and not f.leaf and not self._runs_with_grad(node, state):
            # What a no-grad region computes does not require grad.  Arithmetic always computes
            # (whatever its operands are); a call or an index of something not known to be a
            # tensor may hand back a stored value (`params[0]`, `self.get_weight()`).
            if f.kind == TENSOR and isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)) or \
                    f.kind == UNKNOWN and isinstance(node, (ast.BinOp, ast.UnaryOp)):
                f = f.but(grad=Grad.NO, items=f.items and tuple(i.but(grad=Grad.NO) for i in f.items))
        self._cache[key] = (state.env, f)
        return f

    def _runs_with_grad(self, node, state: State) -> bool:
        """Whether `node` calls a function of the file, or of another module of the project,
        decorated `@torch.enable_grad()` (an attack's or a meta-learning step's): it computes
        with grad on whatever the caller's mode."""
        if type(node) is not ast.Call or type(node.func) is not _Name:
            return False
        f = state.lookup(node.func.id)
        if f is not None and f.kind == IMPORT:
            f = self.fact(node.func, state)  # (`from utils import attack`)
        func = f.node if f is not None and f.kind == FUNCTION else None
        if hasattr(func, "enables_grad"):
            return func.enables_grad()  # (a function of another module of the project)
        return isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and enables_grad(func, lambda n: self.qualname(n, state))

    def _eval(self, node, state: State) -> Fact:
        t = type(node)
        if t is ast.Name:
            f = state.lookup(node.id)
            if f is None:
                return UNKNOWN_FACT
            if f.kind == IMPORT and self.project is not None:
                pf = self.project_fact(f.qual)
                if pf is not None:
                    return pf
            if f.kind == UNKNOWN and self.frame is not None and node.id in self.frame.scope.module_names:
                # (A name the scope's code uses as a module.  No frame: a decorator asked before
                # its function's walk begins, `@auto_docstring` of a package out of sight.)
                return Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN)
            return f
        if t is ast.Attribute:
            return self._attribute(node, state)
        if t is ast.Call:
            return self._call(node, state)
        if t is ast.Constant:
            if isinstance(node.value, str):
                return _STRING_FACTS[_device_of_string(node.value)]
            return NONE_FACT if node.value is None else OTHER_FACT
        if t is ast.BinOp:
            return self._binop(self.fact(node.left, state), self.fact(node.right, state), state)
        if t is ast.UnaryOp:
            if isinstance(node.op, ast.Not):
                return OTHER_FACT
            return self.fact(node.operand, state).but(leaf=False)
        if t is ast.Compare:
            facts = [self.fact(node.left, state)] + [self.fact(c, state) for c in node.comparators]
            if any(f.kind == TENSOR for f in facts):
                return tensor(Grad.NO, join_all(facts).device, by_flow=any(f.is_torch_tensor for f in facts))
            if any(f.kind == UNKNOWN for f in facts):
                # `wav_lens < n`: a bool, or a bool tensor (or array) where `wav_lens` is one, on its
                # device; never one that requires grad.
                return Fact(UNKNOWN, Grad.NO, Device.UNKNOWN)
            return OTHER_FACT
        if t is ast.BoolOp:
            return join_all(self.fact(v, st) for v, st in self.narrowed_parts(node, state))
        if t is ast.IfExp:
            truth = self.call_constant(node.test, state)
            if truth is not None:
                # (`x.detach() if detach else x` in a walk for a call that gives `detach` a
                # literal, or leaves it a literal default: the branch it takes.)
                return self.fact(node.body if truth else node.orelse, state)
            parts = self.narrowed_parts(node, state)
            return join(self.fact(node.body, parts[1][1]), self.fact(node.orelse, parts[2][1]))
        if t is ast.Subscript:
            base = self.fact(node.value, state)
            if base.items is not None:
                i, n = node.slice, len(base.items)
                at = -i.operand.value if type(i) is ast.UnaryOp and type(i.op) is ast.USub \
                    and type(i.operand) is ast.Constant and type(i.operand.value) is int else \
                    i.value if type(i) is ast.Constant and type(i.value) is int else None  # (`out[-1]`)
                if at is not None and -n <= at < n:
                    return base.items[at]
            if base.kind == TENSOR:
                i = node.slice
                if base.attrs is not None and type(i) is ast.Constant and i.value in base.attrs:
                    return base.attrs[i.value]  # a field the model's forward computes without grad
                return base.but(leaf=False, tags=base.tags, items=None, attrs=None)
            if base.kind == SEQ and base.element is not None:
                if isinstance(node.slice, ast.Slice):
                    return base
                return _one_of(base.element)
            if base.kind == MODULE:
                return Fact(MODULE, Grad.UNKNOWN, base.device, frozen=base.frozen, by_flow=base.by_flow)
            if base.kind == MAPPING:
                i = node.slice
                if base.attrs is not None and type(i) is ast.Constant and i.value in base.attrs:
                    return base.attrs[i.value]
                return _one_of(base.element) if base.element is not None else UNKNOWN_FACT
            if base.kind == OBJECT and base.node is not None:
                # `dataset[i]`: what the class's `__getitem__` returns (for some key, where what
                # it returns for each differs).
                got = self.method_result(base.node, "__getitem__")
                if got is not None:
                    return _one_of(got)
            if base.kind == UNKNOWN and _TENSORISH in base.tags:
                return base.but(leaf=False)  # `u.detach()[0]`
            value = node.value
            if type(value) is ast.Attribute and value.attr == "shape" or base.kind == OTHER and type(value) is ast.Call \
                    and type(value.func) is ast.Attribute and value.func.attr == "size":
                return OTHER_FACT  # `x.shape[1]`, `t.size()[0]`: sizes (of a tensor or an array) are ints
            return UNKNOWN_FACT
        if t in (ast.Tuple, ast.List, ast.Set):
            f = _literal_display(node)
            if f is not None:
                return f  # (a module's table of names: thousands of strings, no state to look up)
            elts = [self.fact(e.value if isinstance(e, ast.Starred) else e, state) for e in node.elts]
            el = join_all(elts) if elts else None
            if el is None:
                return Fact(SEQ, Grad.NO, Device.CPU)
            # A tuple keeps what each position holds (`return td_error, loss` unpacked by the
            # caller); a list or set may change its length.
            items = tuple(elts) if t is ast.Tuple and len(elts) <= 8 and not any(
                isinstance(e, ast.Starred) for e in node.elts) else None
            return Fact(SEQ, el.grad, el.device, element=el, items=items)
        if t is ast.NamedExpr:
            f = self.fact(node.value, state)
            self._bind(node.target, f, state)
            return f
        if t in _COMPREHENSIONS:
            inner = state.copy()
            for gen in node.generators:
                self._bind(gen.target, self._element_of(self.fact(gen.iter, inner)), inner)
            if t is ast.DictComp:
                el = self.fact(node.value, inner)
                return Fact(MAPPING, el.grad, el.device, element=el)
            el = self.fact(node.elt, inner)
            return Fact(SEQ, el.grad, el.device, element=el)
        if t is ast.Starred:
            return self.fact(node.value, state)
        if t is ast.Dict:
            return self._dict_display(node, state)
        if t is ast.Lambda:
            made = self.lambda_def(node)
            return Fact(FUNCTION, Grad.NO, Device.CPU, by_flow=True, node=made) if made is not None else OTHER_FACT
        if t is ast.JoinedStr:
            return OTHER_FACT
        if (t is ast.Await or t is ast.Yield or t is ast.YieldFrom) and node.value is not None:
            self.fact(node.value, state)  # the call it awaits or yields happens (a call site)
        return UNKNOWN_FACT

    def _saves_result(self, q: str, node: ast.Call, state: State) -> bool:
        """Whether the torch.nn module `q(...)` makes saves what it returns for backward
        (api.RESULT_SAVING_MODULES, or an `nn.Sequential` whose last module does)."""
        if q in api.RESULT_SAVING_MODULES:
            return True
        if q == "torch.nn.Sequential" and node.args and not node.keywords \
                and not any(isinstance(a, ast.Starred) for a in node.args):
            last = self.fact(node.args[-1], state)
            return last.kind == MODULE and api.RESULT_SAVING_TAG in last.tags
        return False

    def _binop(self, a: Fact, b: Fact, state: State) -> Fact:
        if a.kind == TENSOR or b.kind == TENSOR:
            grad = max(a.grad if a.kind in (TENSOR, UNKNOWN) else Grad.NO,
                       b.grad if b.kind in (TENSOR, UNKNOWN) else Grad.NO)
            if (a.kind == UNKNOWN or b.kind == UNKNOWN) and grad is Grad.NO:
                grad = Grad.UNKNOWN
            dev = max(a.device if a.kind == TENSOR else Device.CPU, b.device if b.kind == TENSOR else Device.CPU)
            must = max(must_grad(a) if a.kind in (TENSOR, UNKNOWN) else Grad.NO,
                       must_grad(b) if b.kind in (TENSOR, UNKNOWN) else Grad.NO)
            if a.kind == UNKNOWN or b.kind == UNKNOWN:
                must = min(must, Grad.UNKNOWN) if must is not Grad.YES else must
            var = _one_device_var(f for f in (a, b) if f.kind == TENSOR)
            return Fact(TENSOR, grad, dev, tags=a.tags | b.tags, by_flow=a.is_torch_tensor or b.is_torch_tensor,
                        min_grad=None if must == grad else min(must, grad), device_var=var)
        if a.kind == OTHER and b.kind == OTHER:
            return OTHER_FACT
        if a.kind == SEQ and b.kind == SEQ:
            return join(a, b)
        if a.kind == SEQ and b.kind == OTHER and "ndarray" not in b.tags:
            return a.but(items=None)  # `[None] * n`: the only operation a list has with a number
        if b.kind == SEQ and a.kind == OTHER and "ndarray" not in a.tags:
            return b.but(items=None)
        return UNKNOWN_FACT

    def _attribute(self, node: ast.Attribute, state: State) -> Fact:
        key = dotted_name(node)
        if key is not None:
            f = state.env.get(key)
            if f is not None:
                return f
        base = self.fact(node.value, state)
        attr = node.attr
        kind = base.kind
        if kind == IMPORT:
            qual = f"{base.qual}.{attr}"
            pf = self.project_fact(qual) if self.project is not None else None
            return pf if pf is not None else Fact(IMPORT, Grad.NO, Device.CPU, qual=qual)
        if kind == OTHER and "foreign" in base.tags:
            return FOREIGN_FACT
        if kind == TENSOR:
            if attr in ("data", "grad"):
                return Fact(TENSOR, Grad.NO, base.device, tags=base.tags - {"generator_output"}, by_flow=base.by_flow)
            if attr == "device":  # `.to(x.device)`: wherever x is
                return Fact(DEVICE, Grad.NO, base.device, device_var=base.device_var)
            if attr in api.NON_TENSOR_ATTRS:
                return OTHER_FACT
            if base.items is not None and len(base.items) == 2 and attr in ("values", "indices"):
                return base.items[attr == "indices"]
            if attr in api.SAME_TENSOR_ATTRS:
                return base.but(leaf=False)
            if base.attrs is not None and attr in base.attrs:
                return base.attrs[attr]  # a field the model's forward computes without grad
            # A field of a model output (outputs.logits, out.loss): same provenance.
            return base.but(leaf=False, attrs=None)
        if kind == MODULE:
            if attr == "module" and _WRAPPER in base.tags:
                return base.but(tags=base.tags - _WRAPPER_TAGS)  # `model.module` of nn.DataParallel(model)
            if base.attrs is not None and attr in base.attrs:
                f = base.attrs[attr]
                if f.kind == MODULE and base.device is not Device.UNKNOWN:
                    f = f.but(device=max(f.device, base.device))
                if f.kind == MODULE and base.frozen and not f.frozen:
                    f = _frozen(f, True)  # (a submodule of a frozen module)
                if f.kind == TENSOR and f.leaf and base.frozen:
                    f = f.but(grad=Grad.NO)
                return f
            got = self._property(base, attr, node.value, state)
            if got is not None:
                return got
            if attr in api.PARAM_ATTRS:
                if base.frozen:
                    return tensor(Grad.UNKNOWN, base.device, by_flow=base.by_flow)
                return tensor(Grad.YES, base.device, leaf=True, tags=frozenset({"parameter"}), by_flow=base.by_flow)
            if base.attrs is not None:
                # An attribute of a local class that no method assigns: not known.
                return UNKNOWN_FACT
            # Most attributes of a module are submodules (model.encoder.layer[3]).
            return Fact(MODULE, Grad.UNKNOWN, base.device, frozen=base.frozen, tags=frozenset({"submodule?"}))
        if kind == OBJECT:
            f = base.attrs.get(attr) if base.attrs is not None else None
            if f is None:
                f = self._property(base, attr, node.value, state)
            return f if f is not None else UNKNOWN_FACT
        if kind == SEQ and base.attrs is not None and attr in base.attrs:
            return base.attrs[attr]  # a field of a NamedTuple a model's forward returns
        if kind == UNKNOWN and attr in ("data", "grad") and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            # `p.data` of an unknown `p` (most likely a tensor); `self.data` of a dataset is not.
            return Fact(UNKNOWN, Grad.NO, base.device, tags=_TENSORISH_TAGS)
        if kind == UNKNOWN and _TENSORISH in base.tags and attr not in api.NON_TENSOR_ATTRS:
            return base.but(leaf=False)  # `u.detach().T`
        return UNKNOWN_FACT

    def _cast(self, call: ast.Call, state: State) -> tuple:
        """What `t.to(...)` or `t.type(...)` converts to: (an integer or bool dtype, the device a
        tensor type names: the CPU for `torch.FloatTensor` or `"torch.LongTensor"`, an
        accelerator for `torch.cuda.LongTensor`; None for a dtype, or where not told)."""
        given = [k.value for k in call.keywords if k.arg in ("dtype", "dst_type")]
        if not given:
            given = call.args[:2] if call.func.attr == "to" else call.args[:1]
        for arg in given:
            if type(arg) is ast.Constant:
                name = arg.value if type(arg.value) is str else None
            else:
                name = self.qualname(arg, state)
            parts = name.split(".") if name else ()
            if len(parts) < 2 or parts[0] != "torch":
                continue
            last = parts[-1]
            if len(parts) == 2 and last in _INTEGER_DTYPES:
                return True, None
            if last in _TENSOR_TYPES and (len(parts) == 2 or len(parts) == 3 and parts[1] == "cuda"):
                return last in _INTEGER_TENSOR_TYPES, Device.ACCEL if len(parts) == 3 else Device.CPU
        return False, None

    def _target_device(self, call: ast.Call, state: State) -> Device | None:
        """The device a `.to(...)` call moves to; None when it only changes dtype."""
        dev_kw = _kwarg(call, "device")
        args = list(call.args)
        if dev_kw is not None:
            args = [dev_kw]
        elif not args:
            return None
        arg = args[0]
        q = self.qualname(arg, state)
        if q is not None and q.startswith("torch.") and q.split(".")[1] in _DTYPES:
            return None
        f = self.fact(arg, state)
        if f.kind == DEVICE:
            return f.device
        if "str" in f.tags and f.kind in (OTHER, UNKNOWN):
            return f.device  # a device string, or a join with one (`x.device if c else "cpu"`)
        if f.kind == TENSOR:
            return f.device
        if NONE_DEFAULT in f.tags and f.kind == UNKNOWN:
            return Device.UNKNOWN  # `device=None` a parameter's default: what the call passes
        name = (dotted_name(arg) or "").rsplit(".", 1)[-1].lower()
        if "dtype" in name:
            return None
        # `.to(device)`, `.to(self.device)`, `.to(args.device)`: may be an accelerator.
        return Device.ACCEL

    def _call(self, node: ast.Call, state: State) -> Fact:
        f = self._call_fact(node, state)
        # Calls inside the arguments happen too, whatever this call is (`print(evaluate(m, x))`,
        # `results.append(step(batch))`).
        self._arguments(node, state)
        return f

    def _arguments(self, node: ast.Call, state: State) -> None:
        """Evaluate a call's arguments (once: facts are cached), so that the calls of the file's
        functions among them are seen with what they pass."""
        for a in node.args:
            if type(a) is not ast.Name and type(a) is not ast.Constant:
                self.fact(a, state)
        for kw in node.keywords:
            if type(kw.value) is not ast.Name and type(kw.value) is not ast.Constant:
                self.fact(kw.value, state)

    def _call_fact(self, node: ast.Call, state: State) -> Fact:
        func = node.func
        if (type(func) is ast.Attribute and func.attr == "__init__" and type(func.value) is ast.Call
                and type(func.value.func) is ast.Name and func.value.func.id == "super" and not func.value.args
                and state.lookup("super") is None):
            # `super().__init__(model)`: a call of the base's constructor (a call site).
            base = self._super_base(node)
            if base is not None:
                self.note_method_call(base, "__init__", node, state)
            self._arguments(node, state)
            return OTHER_FACT
        q = self.qualname(func, state)
        callee = self.project_fact(q) if q is not None and self.project is not None else None
        if q is not None and (callee is None or callee.kind == UNKNOWN) and type(func) is ast.Attribute \
                and self.project is not None:
            # `HEADS.values()`, `LAYERS.index(x)`: a method of a dict or a list another module
            # defines, as of one of the file's.
            owner = self.project_fact(q.rpartition(".")[0])
            if owner is not None and (owner.kind == MAPPING or owner.kind == SEQ):
                return self._method(owner, func.attr, node, state)
        if q is not None and callee is None:
            return self._call_qualified(q, node, state)
        if callee is not None and callee.kind == UNKNOWN and type(func) is ast.Attribute:
            # `Net.build()`, a factory of another module's class (`return cls(...)`).
            owner = self.project_fact(q.rpartition(".")[0])
            if owner is not None and owner.kind == CLASS and hasattr(owner.node, "makes_instance"):
                result = self._entity_class_call(owner, func.attr, node, state)
                if result is not None:
                    return result
        if callee is None and isinstance(func, ast.Attribute):
            # `t.model = other` (or `t.model.requires_grad_(False)`) earlier in the flow: that
            # value is what `t.model(x)` calls, not what the class of `t` says of its attribute.
            key = dotted_name(func)
            bound = state.env.get(key) if key is not None else None
            if bound is None:
                recv = self.fact(func.value, state)
                return self._method(recv, func.attr, node, state)
            callee = bound
        if callee is None:
            callee = self.fact(func, state)
        if callee.kind == MODULE:
            if callee.node is not None and self.overrides_call(callee.node):
                # (A torch module class with a `__call__` of its own: what that returns, said
                # where the class is, as its forward's output would be.)
                return _defined_as(self._method(callee, "__call__", node, state), callee)
            return self._module_output(callee, node, state)
        if callee.kind == CLASS:
            if callee.node is not None:
                self.note_constructor(callee.node, node, state)
            return self._instance(callee, node, state)
        if callee.kind == OBJECT and callee.node is not None:
            # An instance of a class of the file or the project called: its `__call__`
            # (`predict = Predictor(net)`, `predict(x)`).
            return _defined_as(self._method(callee, "__call__", node, state), callee)
        if callee.kind == FUNCTION:
            if _PARTIAL in callee.tags:
                # `functools.partial(f, ...)` called: what `f` returns for any arguments (the
                # call's own bind after those the partial holds).
                result = self.function_result(callee.node, None)
                return _defined_as(result, callee) if result is not None else UNKNOWN_FACT
            self.note_function_call(callee.node, node, state)
            result = self.call_result(callee.node, node, state)
            if result is None:
                return UNKNOWN_FACT
            # What a function of another file of the project made says where: `build(),
            # models.py:5`, as its classes do.
            return _defined_as(result, callee)
        if isinstance(func, ast.Name):
            name = func.id
            if name in ("len", "int", "float", "str", "bool", "isinstance", "print", "repr", "hash", "id",
                        "round", "format", "type", "callable", "hasattr", "getattr"):
                return OTHER_FACT
            if name == "range":  # (what it holds are numbers: `for epoch in range(n)`)
                return _RANGE_FACT
            if name in ("list", "tuple", "sorted", "reversed") and node.args:
                el = self._element_of(self.fact(node.args[0], state))
                return Fact(SEQ, el.grad, el.device, element=el)
            if name == "dict" and state.lookup(name) is None and not any(isinstance(a, ast.Starred) for a in node.args):
                return self._dict_call(node, state)
            if name in ("enumerate", "zip") and node.args and state.lookup(name) is None and not any(
                isinstance(a, ast.Starred) for a in node.args
            ):
                els = [self._element_of(self.fact(a, state)) for a in node.args]
                if name == "enumerate":
                    els = [OTHER_FACT, els[0]]
                tup = Fact(SEQ, max(e.grad for e in els), max(e.device for e in els), element=join_all(els),
                           items=tuple(els))
                return Fact(SEQ, tup.grad, tup.device, element=tup)
        return UNKNOWN_FACT

    def _entity_class_call(self, cls: Fact, m: str, node: ast.Call, state: State) -> Fact | None:
        """What `node`, a call of method `m` on `cls`, a class of another module of the project,
        returns: an instance where `m` is a factory (`Net.build()`, whose every `return` calls
        the class), what a static method returns for the call's arguments
        (`Utils.to_numpy(out)`: static_call_result); else None."""
        if cls.node.makes_instance(m):
            return self._instance(cls, None, state)
        return self.static_call_result(cls.node, m, node, state)

    def _instance(self, cls: Fact, call: ast.Call | None, state: State) -> Fact:
        """An instance of class `cls` (a CLASS fact) that `call` makes, or a factory of another
        module's class (None: what it gives the constructor is not known)."""
        # Where the class is defined, when another file of the project defines it.
        defined = frozenset(t for t in cls.tags if t.startswith("defined:"))
        attrs = cls.attrs
        if call is not None and (call.args or call.keywords):
            if hasattr(cls.node, "constructor"):
                attrs = self._constructed(cls.node, cls.node.constructor, attrs, call, state)
            elif isinstance(cls.node, ast.ClassDef):
                fields = record_fields(cls.node)
                if fields is not None:
                    attrs = self._record(cls.node, fields, attrs, call, state)
                elif attrs is not None:
                    attrs = self._constructed_here(cls.node, attrs, call, state)
        if MODULE_CLASS_TAG in cls.tags:
            made = Fact(MODULE, Grad.UNKNOWN, Device.CPU, attrs=attrs,
                        tags=(cls.tags & {NO_GRAD_FORWARD}) | defined, by_flow=cls.by_flow, node=cls.node,
                        paramfree=cls.node is not None and (self.instance_paramfree(cls.node, call) if call is not None
                                                            else self.class_paramfree(cls.node)))
            # A class whose constructor freezes what it makes (a teacher, a feature extractor), or
            # makes only frozen parameters (pretrained embeddings) where the file turns none back on and
            # adds none from outside (_may_add_trainable).
            # (One without parameters at all is more: nothing can thaw it.)
            if cls.node is not None and not made.paramfree and (self.constructor_freezes(cls.node) or (
                    self.made_frozen(cls.node) and not self._may_add_trainable())):
                return _frozen(made, True)
            return made
        return Fact(OBJECT, Grad.UNKNOWN, Device.UNKNOWN, attrs=attrs, node=cls.node, tags=defined)

    def _record(self, classdef: ast.ClassDef, fields: tuple, attrs, call: ast.Call, state: State):
        """The attributes of the instance `call` makes of a record class of the file (a
        dataclass, a NamedTuple: astutil.record_fields): each field holds what the call passes
        it, unless a method of the class assigns it; the others are the class's (`attrs`)."""
        positional, keyword, assigned = fields
        stub = def_stub("__init__", ((), ("self", *positional), keyword))
        given = {}
        for field, expr in bind_arguments(stub, call, skip_first=True)[0]:
            if field not in assigned:
                f = self.fact(expr, state)
                if f.kind != UNKNOWN:
                    given[field] = f
        if not given:
            return attrs

        def load() -> dict:
            out = dict(attrs.items()) if attrs is not None else {}
            out.update(given)
            return out

        return LazyAttrs(load, classdef, lambda: given)

    def _constructed_here(self, classdef: ast.ClassDef, attrs, call: ast.Call, state: State):
        """The attributes of the instance `call` makes of class `classdef` of the file: as
        `_constructed`, for the modules the call hands it (its class's attributes are what all
        its calls pass, joined; this instance's hold the module this one passed, as it is on the
        path read: `t = Trainer(m)`, then `m.requires_grad_(False)`: `_changed_in_place`)."""
        for e in call.args:
            if type(e) is not ast.Starred and _handed(self.fact(e, state)):
                break
        else:
            if not any(_handed(self.fact(kw.value, state)) for kw in call.keywords):
                return attrs
        return self._constructed(classdef, lambda: self.local_constructor(classdef), attrs, call, state)

    def _constructed(self, owner, constructor, attrs, call: ast.Call, state):
        """The attributes of the instance `call` makes of `owner`, a class of the file or of
        another module of the project (`Trainer(Net())`): an attribute its constructor sets to a
        parameter, and the class sets nowhere else (`constructor()`: walker.constructor_info,
        module_summary.ProjectEntity.constructor), is what the call passes that parameter; the
        others are the class's (`attrs`).  Kept with the instance (and changed with a module it
        was handed by name: `_changed_in_place`).  The arguments' facts are taken now,
        the constructor asked when the attributes are first read (most instances made,
        `ModelOutput(logits=...)`, never are)."""
        # (What each argument is here: facts depend on the flow.)
        facts = {id(e): self.fact(e, state) for e in (*call.args, *(kw.value for kw in call.keywords))
                 if type(e) is not ast.Starred}
        memo: list = []

        def bind() -> None:
            found = constructor()
            bound, sources = {}, {}
            if found:
                positional, kwonly, made = found
                stub = def_stub("__init__", ((), ("self", *positional), kwonly))
                pairs = dict(bind_arguments(stub, call, skip_first=True)[0])
                known = {p: facts[id(e)] for p, e in pairs.items() if id(e) in facts}
                for attr, p in made:
                    f = given_moved(known, p)
                    if f is not None and f.kind != UNKNOWN:
                        bound[attr] = f
                        passed = dotted_name(pairs[param_of(p)])
                        if passed is not None and f.kind == MODULE and not p.endswith(COPIED):
                            sources[attr] = (passed, p.endswith(MOVED))
            memo.extend((bound, sources))

        def given() -> dict:
            if not memo:
                bind()
            return memo[0]

        def sources() -> dict:
            if not memo:
                bind()
            return memo[1]

        def load() -> dict:
            out = dict(attrs.items()) if attrs is not None else {}
            out.update(given())
            return out

        return LazyAttrs(load, owner, given, call, sources)

    def _super_base(self, call: ast.Call):
        """The def of the class `super()` names in `call` (`super().__init__(...)`): the one base
        of the class of the method being walked, when that base is a class of the file; else
        None.  Only in the walk of that method (`call` inside it): an attribute's value
        evaluated for a class (walker._class_attr_facts) may be asked in another's walk."""
        frame = getattr(self, "frame", None)
        scope = frame.scope if frame is not None else None
        info = scope.cls if scope is not None else None
        if info is None or len(info.node.bases) != 1 or len(info.bases) != 1:
            return None
        method = scope.node
        if not (method.lineno <= call.lineno <= method.end_lineno):
            return None
        return info.bases[0].node

    def _carried_grad(self, q: str, node: ast.Call, state: State) -> Fact | None:
        """What a factory of api.GRAD_THROUGH_FACTORIES makes of the tensors it is given, where
        one may require grad (`torch.as_tensor(y)` alone is `y` itself); None where none may."""
        given = [self.fact(a, state) for a in node.args if type(a) is not ast.Starred]
        given += [self.fact(k.value, state) for k in node.keywords if k.arg not in _NOT_DATA_KEYWORDS]
        tensors = [f for f in given if f.kind == TENSOR]
        if not tensors:
            return None
        grad = max(f.grad for f in tensors)
        if grad is Grad.NO:
            return None
        if q in ("torch.as_tensor", "torch.asarray") and len(node.args) == 1 and not node.keywords:
            return tensors[0]
        must = max(must_grad(f) for f in tensors)
        dev = self._factory_device(node, state) if _kwarg(node, "device") is not None else \
            max(f.device for f in tensors)
        return Fact(TENSOR, grad, dev, by_flow=all(f.by_flow for f in tensors),
                    min_grad=None if must == grad else must)

    def _arg_facts(self, node: ast.Call, state: State) -> list[Fact]:
        facts = []
        for a in node.args:
            f = self.fact(a, state)
            if f.kind == SEQ and f.element is not None:
                f = f.element
            facts.append(f)
        for kw in node.keywords:
            if kw.arg not in ("dtype", "device", "dim", "out", "layout"):
                facts.append(self.fact(kw.value, state))
        return facts

    def _call_qualified(self, q: str, node: ast.Call, state: State) -> Fact:
        if q in _GRAD_MODE_CALLS:
            return _GRAD_CONTEXTS.get(context_effect(node, lambda n: self.qualname(n, state)), OTHER_FACT)
        if q in api.BUFFER:
            return Fact(TENSOR, Grad.NO, Device.UNKNOWN, by_flow=True)
        if q in api.PARAMETER:
            rg = _kwarg(node, "requires_grad")
            if rg is None and len(node.args) > 1:
                rg = node.args[1]
            flag = _const_bool(rg) if rg is not None else True
            if flag is False:
                return tensor(Grad.NO, self._device_of_args(node, state))
            grad = Grad.YES if flag else Grad.UNKNOWN
            return tensor(grad, self._device_of_args(node, state), leaf=True, tags=frozenset({"parameter"}))
        if q in api.GRAD_THROUGH_FACTORIES:
            carried = self._carried_grad(q, node, state)
            if carried is not None:
                return carried
        if q in api.FACTORIES:
            rg = _kwarg(node, "requires_grad")
            dev = self._factory_device(node, state)
            flag = _const_bool(rg) if rg is not None else False
            if flag is False:
                made = tensor(Grad.NO, dev)
            else:
                made = tensor(Grad.YES if flag else Grad.UNKNOWN, dev, leaf=True)
            var = self._device_var(node, state) if dev is not Device.CPU else None
            return made.but(device_var=var) if var else made
        if q in api.FROM_HOST:
            return tensor(Grad.NO, Device.CPU)
        if q in api.DATALOADERS:
            return Fact(LOADER, Grad.NO, Device.CPU)
        if q == "torch.device":
            f = self.fact(node.args[0], state) if node.args else UNKNOWN_FACT
            return Fact(DEVICE, Grad.NO, f.device if f.kind in (OTHER, DEVICE) else Device.UNKNOWN)
        if q == "functools.partial" and node.args and type(node.args[0]) is not ast.Starred:
            # A module's partial computes what the module does; a function's, what it returns.
            f = self.fact(node.args[0], state)
            if f.kind == MODULE:
                return f
            if f.kind == FUNCTION and f.node is not None:
                return f.but(tags=f.tags | _PARTIAL_TAGS)
            return UNKNOWN_FACT
        if q in api.MODULE_WRAPPERS:
            # `nn.DataParallel(model)`, `torch.compile(model)`: the module, as it was.
            wrapped = node.args[0] if node.args else _kwarg(node, "module") or _kwarg(node, "model") \
                or _kwarg(node, "obj") or _kwarg(node, "func")
            f = self.fact(wrapped, state) if wrapped is not None and not isinstance(wrapped, ast.Starred) else None
            if f is not None and f.kind in (MODULE, FUNCTION):
                # (DataParallel's and DistributedDataParallel's `.module` is the module itself.)
                return f.but(tags=f.tags | _WRAPPER_TAGS) if f.kind == MODULE and q.startswith("torch.nn.") else f
            return Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN, by_flow=True) if q.startswith("torch.nn.") \
                else UNKNOWN_FACT
        if q in api.NON_TENSOR_FUNCS:
            return OTHER_FACT
        if q in api.NO_GRAD_FUNCS:
            return tensor(Grad.NO, self._device_of_args(node, state))
        if q.startswith("numpy."):
            return ARRAY_FACT
        if q.startswith("matplotlib.pyplot.") and q[18:] in _PYPLOT_RESULTS:
            return _PYPLOT_RESULTS[q[18:]]
        if q.split(".", 1)[0] in api.FOREIGN_FRAMEWORKS:
            return FOREIGN_FACT  # another framework's value is not a torch tensor
        if q.startswith("torch.nn.") and q[9:10].isupper() or q.startswith("torch.nn.modules."):
            # A module's `grad`: whether its parameters require grad (a new torch.nn layer's do).
            paramfree = q in api.PARAMFREE_MODULES
            saving = self._saves_result(q, node, state)
            made = Fact(MODULE, Grad.NO if paramfree else Grad.YES, Device.CPU, paramfree=paramfree, by_flow=True,
                        tags=_RESULT_SAVING if saving else frozenset())
            if q == "torch.nn.Sequential" and node.args and not node.keywords \
                    and not any(isinstance(a, ast.Starred) for a in node.args):
                # Of modules each frozen or without parameters (`nn.Sequential(frozen_encoder,
                # nn.ReLU())`): so is the whole.
                parts = [self.fact(a, state) for a in node.args]
                if all(f.kind == MODULE and (f.frozen or f.paramfree) for f in parts):
                    made = made.but(paramfree=True, grad=Grad.NO) if all(f.paramfree and not f.frozen for f in parts) \
                        else _frozen(made, True)
            elif q in api.FROM_PRETRAINED_FROZEN:
                freeze = _kwarg(node, "freeze")
                if freeze is None and len(node.args) > 1 and type(node.args[1]) is not ast.Starred:
                    freeze = node.args[1]
                flag = True if freeze is None else _const_bool(freeze)
                if flag is not False:  # (frozen, or may be: its output may not require grad)
                    made = _frozen(made, True) if flag else made.but(frozen=True, grad=Grad.UNKNOWN, min_grad=None)
            return made
        if q in api.PARAMETERS_TO_VECTOR and node.args and type(node.args[0]) is not ast.Starred:
            given = self.fact(node.args[0], state)
            el = given.element if given.kind in (PARAMS, SEQ) else None
            if el is not None and el.kind == TENSOR:
                return tensor(el.grad, el.device, by_flow=el.by_flow)
        if q in api.AUTOGRAD_GRAD:
            cg = _kwarg(node, "create_graph")
            g = tensor(Grad.NO if cg is None or _const_bool(cg) is False else Grad.UNKNOWN,
                       self._device_of_args(node, state))
            return Fact(SEQ, g.grad, g.device, element=g)
        if q.startswith("torch.distributions.") and q.rsplit(".", 1)[-1][:1].isupper():
            # A Distribution: its grad state is its parameters'.
            args = self._join_args(node, state)
            return Fact(OTHER, args.grad, args.device, tags=_DISTRIBUTION_TAGS, by_flow=True)
        if q.startswith("torch.optim.") or q.startswith("torch.utils.") or q.startswith("torch.cuda."):
            return OTHER_FACT if not q.startswith("torch.utils.checkpoint") else self._join_args(node, state)
        if q.startswith(api.MODEL_FACTORY_PREFIXES):
            return Fact(MODULE, Grad.UNKNOWN, Device.CPU, by_flow=True)
        if q == "copy.deepcopy" and node.args:
            return self.fact(node.args[0], state)
        if q.startswith("torch.") and (q.rsplit(".", 1)[-1].startswith("_") or q.startswith("torch.nn.init.calc")):
            return UNKNOWN_FACT  # private helpers and init arithmetic return ints and tuples, not tensors
        if q.startswith("torch."):
            joined = self._join_args(node, state, q in api.FIRST_ARG_ONLY)
            if joined.kind == UNKNOWN and q in api.TENSOR_FUNCS:
                # (A tensor whatever it was given: `torch.stack([b[0] for b in batch])`.)
                joined = Fact(TENSOR, joined.grad, joined.device, by_flow=True)
            elif "module_output" in joined.tags and (q in api.TENSOR_FUNCS or q in api.FUNCTIONAL_TENSOR_FUNCS):
                # (One tensor, of a model's output that may be a tuple: `torch.softmax(net(x), 1)`.)
                joined = joined.but(tags=joined.tags - _MODULE_OUTPUT)
            return self._values_indices(q[6:], joined, node.args[1:], node, state)
        last = q.rsplit(".", 1)[-1]
        if last == "from_pretrained":
            owner = q.rsplit(".", 2)[-2]
            if "Model" in owner or "For" in owner:
                # transformers' TF and Flax classes are not torch modules.
                return Fact(MODULE, Grad.UNKNOWN, Device.CPU, by_flow=not owner.startswith(("TF", "Flax")))
        return UNKNOWN_FACT

    def _values_indices(self, name: str, f: Fact, rest: list, node: ast.Call, state: State) -> Fact:
        """`torch.max(x, 1)`, `x.sort()`, `x.topk(k)`, ...: a (values, indices) pair whose indices
        never require grad (`_, pred = out.max(1)`, `out.topk(5).indices`, `out.max(1)[1]`)."""
        if f.kind != TENSOR or name not in api.VALUES_INDICES:
            if f.kind != TENSOR or name not in api.VALUES_INDICES_WITH_DIM:
                return f
            dim = rest[0] if rest else _kwarg(node, "dim")
            if dim is None or isinstance(dim, ast.Starred) or self.fact(dim, state).kind == TENSOR:
                return f  # torch.max(x) is a tensor; torch.max(a, b) is elementwise
        return f.but(items=(f, tensor(Grad.NO, f.device, by_flow=f.by_flow)))

    def _join_args(self, node: ast.Call, state: State, first_only: bool = False) -> Fact:
        """The result of a torch function from its arguments' facts (`first_only`: only the first
        argument, `input`, can be a tensor; api.FIRST_ARG_ONLY)."""
        first = node.args[0] if node.args else _kwarg(node, "input")
        if first_only and first is not None and not isinstance(first, ast.Starred):
            f = self.fact(first, state)
            facts = [f.element if f.kind == SEQ and f.element is not None else f]
        else:
            facts = self._arg_facts(node, state)
        tensors = [f for f in facts if f.kind == TENSOR]
        if not tensors:
            # Without a tensor argument, an unlisted torch function may not return a tensor at
            # all (torch.finfo(dtype).min): only its grad state is known.
            if any(f.kind == UNKNOWN for f in facts):
                return Fact(UNKNOWN, Grad.UNKNOWN, Device.UNKNOWN)
            return Fact(UNKNOWN, Grad.NO, self._factory_device(node, state))
        grad = max(f.grad for f in tensors)
        must = max(must_grad(f) for f in tensors)
        if grad is Grad.NO and any(f.kind == UNKNOWN for f in facts):
            grad = Grad.UNKNOWN
        tags = frozenset().union(*(f.tags for f in tensors))
        return Fact(TENSOR, grad, max(f.device for f in tensors), tags=tags,
                    by_flow=any(f.is_torch_tensor for f in tensors), min_grad=None if must == grad else must,
                    device_var=_one_device_var(tensors))

    def _device_of_args(self, node: ast.Call, state: State) -> Device:
        devs = [f.device for f in self._arg_facts(node, state) if f.kind == TENSOR]
        return max(devs) if devs else Device.CPU

    def _factory_device(self, node: ast.Call, state: State) -> Device:
        dev = _kwarg(node, "device")
        if dev is None:
            return Device.CPU
        f = self.fact(dev, state)
        if f.kind in (DEVICE, OTHER) and f.device is not Device.UNKNOWN:
            return f.device
        if f.kind == DEVICE or "str" in f.tags and f.kind == UNKNOWN:
            return f.device  # `device=x.device` with x's device unknown
        if NONE_DEFAULT in f.tags and f.kind == UNKNOWN:
            return Device.UNKNOWN  # `device=None` a parameter's default: what the call passes
        return Device.ACCEL

    def _module_output(self, module: Fact, node: ast.Call, state: State) -> Fact:
        args = self._arg_facts(node, state)
        arg_grad = max((f.grad for f in args if f.kind in (TENSOR, UNKNOWN)), default=Grad.NO)
        arg_dev = max((f.device for f in args if f.kind == TENSOR), default=Device.CPU)
        if not (module.paramfree or module.frozen) and (self.handed_frozen(module)
                                                         or self.holders_frozen(module, node, state)):
            # (`Wrap(backbone)`, the backbone frozen: the instance holds no parameter that
            # requires grad.)
            module = _frozen(module, True)
        if module.paramfree or module.frozen:
            grad = arg_grad if not module.frozen else (Grad.YES if arg_grad is Grad.YES else Grad.UNKNOWN)
        else:
            grad = Grad.YES
        items = fields = pair = pairs = None
        if NO_GRAD_FORWARD in module.tags:
            grad = Grad.NO
        elif grad is not Grad.NO and module.node is not None:
            # A forward of the file (or of the project) that returns values that do not require
            # grad (`Categorical(...).sample()`, `logits.argmax(-1)`, `x.detach()`, what it
            # computed under `torch.no_grad()`), alone or in a tuple.
            result = self.method_result(module.node, "forward", hint=_NO_GRAD_RESULT_HINTS)
            if result is not None and result.kind == OTHER and "ndarray" in result.tags:
                return result  # (a NumPy array, on every path)
            if result is not None and result.kind == TENSOR and result.grad is Grad.NO:
                grad = Grad.NO
            elif result is not None and result.kind == TENSOR and result.items is not None and len(result.items) == 2:
                # A (values, indices) pair (`return h.max(1)`, `h.sort()`, `h.topk(2)`): unpacked
                # or by attribute (`v, i = net(x)`, `out.indices`), its indices do not require grad.
                pair = tuple(i.kind in (TENSOR, UNKNOWN) and i.grad is Grad.NO for i in result.items)
            elif result is not None and result.kind == SEQ and result.items is not None:
                items = tuple(i.kind in (TENSOR, UNKNOWN) and i.grad is Grad.NO for i in result.items)
                # (A (values, indices) pair among them: `return h, h.max(1)`.)
                pairs = tuple(tuple(j.kind in (TENSOR, UNKNOWN) and j.grad is Grad.NO for j in i.items)
                              if i.kind == TENSOR and i.items is not None and len(i.items) == 2 else None
                              for i in result.items)
                if not any(items) and not any(p is not None and any(p) for p in pairs):
                    items = None
            elif result is not None and result.kind in (MAPPING, OBJECT) and result.attrs:
                # A dict or a NamedTuple / dataclass whose fields the forward computes without
                # grad (`{"logits": h, "pred": h.argmax(-1)}`, `Output(h, h.detach())`).
                fields = {k: f for k, f in result.attrs.items()
                          if f.kind in (TENSOR, UNKNOWN) and f.grad is Grad.NO or f.kind == OTHER}
                if fields:
                    fields = {k: f if f.kind == OTHER else None for k, f in fields.items()}
        # Certain only when the module's parameters require grad on every path (a module's
        # `grad`), or when the result's grad comes from the inputs or a no-grad forward.
        if grad is Grad.YES and not (module.paramfree and not module.frozen):
            must = Grad.YES if module.by_flow and must_grad(module) is Grad.YES else Grad.UNKNOWN
        else:
            must = grad
        # Where the output is: the module's device, or the inputs' when the module moved with
        # them (one device variable for both, as in `model.to(device)`, `x.to(device)`).
        dev = max(module.device, arg_dev)
        var = module.device_var
        if var is None and module.device is not Device.ACCEL:
            var = _one_device_var(f for f in args if f.kind == TENSOR)
        # Where the module's or an input's facts came from the file's calls of this function
        # (`self.model` from a constructor's call, `x` from a method's), so does the output's.
        origins = frozenset(t for f in args if f.tags for t in f.tags if t.startswith("callsite"))
        origins |= frozenset(t for t in module.tags if t.startswith("defined:") or t.startswith("callsite"))
        out = Fact(TENSOR, grad, dev, tags=_MODULE_OUTPUT | origins, by_flow=module.by_flow,
                   min_grad=None if must == grad else must, device_var=var)
        if fields:
            # Its fields, by key or attribute (`out["pred"]`, `o.feats`): those are known not to
            # require grad (or not to be tensors); the others are outputs as above.
            no = out.but(grad=Grad.NO, min_grad=None)
            attrs = {k: no if f is None else f for k, f in fields.items()}
            node = result.node
            order = named_tuple_fields(node) if type(node) is ast.ClassDef else \
                node.named_tuple_fields() if hasattr(node, "named_tuple_fields") else None
            if order is not None:
                # A NamedTuple, also by position (`logits, pred = net(x)`, `out[1]`).
                facts = tuple(attrs.get(k, out) for k in order)
                return Fact(SEQ, grad, dev, element=join_all(facts), items=facts, attrs=dict(zip(order, facts)))
            return out.but(attrs=attrs)
        if pair is not None and any(pair):
            return out.but(items=tuple(out.but(grad=Grad.NO, min_grad=None) if no else out for no in pair))
        if items is None:
            return out
        # A tuple whose positions the forward computes without grad: those are known not to
        # require it; the others are outputs as above.
        no_grad = out.but(grad=Grad.NO, min_grad=None)
        facts = tuple(no_grad if no else out.but(items=tuple(no_grad if n else out for n in p))
                      if p is not None and any(p) else out for no, p in zip(items, pairs or (None,) * len(items)))
        return Fact(SEQ, grad, dev, element=join_all(facts), items=facts)

    def _method(self, recv: Fact, m: str, node: ast.Call, state: State) -> Fact:
        kind = recv.kind
        if kind == OTHER and _MPL_FIGURE in recv.tags:
            # `fig.add_subplot(111)`, `fig.gca()`, `fig.subplots(2)`: Axes (an array of them).
            return MPL_AXES_FACT if m in _FIGURE_AXES_METHODS else UNKNOWN_FACT
        if kind == TENSOR:
            if m == "numpy":
                return ARRAY_FACT
            if m in api.TENSOR_ONLY_METHODS and "module_output" in recv.tags:
                recv = recv.but(tags=recv.tags - _MODULE_OUTPUT)  # (a tensor, not a tuple of them)
            if m in api.NON_TENSOR_METHODS:
                return OTHER_FACT
            if m in _SAMPLES:
                # A tensor has no `.sample()`: the value is a distribution a model returned
                # (`dist = policy(obs)`), and sampling runs without grad.
                return tensor(Grad.NO, recv.device, by_flow=False)
            if m in api.NO_GRAD_METHODS:
                return tensor(Grad.NO, recv.device, tags=recv.tags - {"generator_output"},
                              by_flow=recv.by_flow).but(device_var=recv.device_var)
            if m in api.NEW_TENSOR_METHODS:
                rg_arg = _kwarg(node, "requires_grad")
                rg = _const_bool(rg_arg)
                dev = self._factory_device(node, state) if _kwarg(node, "device") is not None else recv.device
                if rg is True:
                    return tensor(Grad.YES, dev, leaf=True, by_flow=recv.by_flow)
                return tensor(Grad.NO if rg_arg is None or rg is False else Grad.UNKNOWN, dev, by_flow=recv.by_flow)
            if m == "cpu":
                return recv.but(device=Device.CPU, leaf=False, device_var=None)
            if m in ("cuda", "xpu", "mps"):
                return recv.but(device=Device.ACCEL, leaf=False, device_var=None)
            if m == "to":
                dev = self._target_device(node, state)
                out = recv.but(leaf=False) if dev is None else \
                    recv.but(device=dev, leaf=False, device_var=self._device_var(node, state))
                if self._cast(node, state)[0]:  # `t.to(torch.long)`: no grad
                    return tensor(Grad.NO, out.device, tags=recv.tags - {"generator_output"},
                                  by_flow=recv.by_flow).but(device_var=out.device_var)
                return out
            if m == "type":
                integer, dev = self._cast(node, state)  # `t.type(torch.LongTensor)`, `torch.cuda.FloatTensor`
                var = recv.device_var if dev is None else None
                dev = recv.device if dev is None else dev
                if integer:
                    return tensor(Grad.NO, dev, tags=recv.tags - {"generator_output"}, by_flow=recv.by_flow).but(
                        device_var=var)
                if dev is not recv.device:
                    return recv.but(device=dev, leaf=False, device_var=var)
            if m == "requires_grad_":
                flag = _const_bool(node.args[0]) if node.args else True
                if flag is False:
                    return recv.but(grad=Grad.NO, leaf=False)
                return recv.but(grad=Grad.YES if flag else Grad.UNKNOWN, leaf=True)
            if m.endswith("_") and not m.startswith("_"):
                return recv  # in-place: returns self
            facts = [f for f in self._arg_facts(node, state) if f.kind == TENSOR]
            grad = max([recv.grad, *(f.grad for f in facts)])
            must = max([must_grad(recv), *(must_grad(f) for f in facts)])
            result = Fact(TENSOR, grad, recv.device, tags=recv.tags, by_flow=recv.by_flow,
                          min_grad=None if must == grad else must, device_var=recv.device_var)
            return self._values_indices(m, result, node.args, node, state)
        if kind == MODULE:
            if m == "module" and _WRAPPER in recv.tags:  # `model.module(x)` of nn.DataParallel(model)
                return self._module_output(recv.but(tags=recv.tags - _WRAPPER_TAGS), node, state)
            if m in api.MODULE_SELF_METHODS:
                if m in ("to",):
                    dev = self._target_device(node, state)
                    if dev is None:
                        return recv
                    return recv.but(device=dev, device_var=self._device_var(node, state))
                if m in ("cuda", "xpu", "mps"):
                    return recv.but(device=Device.ACCEL, device_var=None)
                if m == "cpu":
                    return recv.but(device=Device.CPU, device_var=None)
                if m == "requires_grad_":
                    flag = _const_bool(node.args[0]) if node.args else True
                    return _frozen(recv, flag is not True)
                if m == "apply" and len(node.args) == 1 and not node.keywords and type(node.func) is _Attribute:
                    self._applied_to(node, recv, state)
                return recv
            if m in ("parameters", "named_parameters"):
                owner = dotted_name(node.func.value) if isinstance(node.func, ast.Attribute) else None
                tags = frozenset({"parameter", f"param_of:{owner}"} if owner else {"parameter"})
                p = tensor(Grad.NO if recv.frozen else Grad.YES, recv.device, leaf=not recv.frozen, tags=tags,
                           by_flow=recv.by_flow)
                return Fact(PARAMS if m == "parameters" else NAMED_PARAMS, Grad.NO, recv.device, element=p)
            if m == "forward":
                return self._module_output(recv, node, state)
            if m == "state_dict" and self._plain_state_dict(recv, node):
                # Its values are the parameters and buffers, detached (`keep_vars=False`).
                el = tensor(Grad.NO, recv.device, by_flow=recv.by_flow).but(device_var=recv.device_var)
                return Fact(MAPPING, Grad.NO, recv.device, element=el)
            if recv.attrs is not None:
                f = recv.attrs.get(m)
                if f is None:
                    f = self._property(recv, m, node.func.value if type(node.func) is _Attribute else None,
                                       state)  # `net.head(x)`, `head` a property
                if f is not None and f.kind == MODULE:
                    if recv.frozen and not f.frozen:
                        f = _frozen(f, True)  # (a submodule of a frozen module)
                    return self._module_output(f, node, state)
                if recv.node is None:
                    return UNKNOWN_FACT
                self.note_method_call(recv.node, m, node, state, recv=recv)
                result = self.method_call_result(recv.node, m, node, state, recv)
                return result if result is not None else UNKNOWN_FACT
            return UNKNOWN_FACT
        if kind == MAPPING:
            el = recv.element
            if el is None:
                # (A dict another module defines comes with what each key holds, not with their
                # join: `HEADS.values()` of `HEADS = {"cls": nn.Linear(4, 3), ...}` there.)
                el = join_all(recv.attrs.values()) if type(recv.attrs) is dict and recv.attrs else UNKNOWN_FACT
            if m in ("get", "pop", "__getitem__"):
                key = node.args[0] if node.args else None
                if recv.attrs is not None and type(key) is ast.Constant and key.value in recv.attrs:
                    return recv.attrs[key.value]  # `d.get("logits")`
                return _one_of(el)
            if m == "values":
                return Fact(SEQ, el.grad, el.device, element=el)
            if m == "items":
                pair = Fact(SEQ, el.grad, el.device, element=join(OTHER_FACT, el), items=(OTHER_FACT, el))
                return Fact(SEQ, el.grad, el.device, element=pair)
            if m == "keys":
                return Fact(SEQ, Grad.NO, Device.CPU, element=OTHER_FACT)
            if m == "copy":
                return recv
            return UNKNOWN_FACT
        if kind == OBJECT:
            # (A method the class of the file defines is not an attribute its methods set: its
            # attributes are not loaded for it, so that the calls of a method that keeps what it
            # is given, `logger.log(loss)`, are seen before they are: Walker._class_attr_facts.)
            info = self.classes.get(id(recv.node)) if recv.node is not None else None
            f = recv.attrs.get(m) if recv.attrs is not None and (
                info is None or info.method(m)[0] is None) else None
            if f is None and recv.node is not None:
                f = self._property(recv, m, node.func.value if type(node.func) is _Attribute else None,
                                   state)  # `trainer.head(x)`, `head` a property
            if f is not None and f.kind == MODULE:
                return self._module_output(f, node, state)
            if recv.node is not None:
                self.note_method_call(recv.node, m, node, state, recv=recv)
            result = self.method_call_result(recv.node, m, node, state, recv) if recv.node is not None else None
            return result if result is not None else UNKNOWN_FACT
        if kind == CLASS and isinstance(recv.node, ast.ClassDef):
            # `Utils.to_numpy(out)`: a static or class method called on a class of the file (or
            # a method passed its instance, `Base.step(self, x)`).  (Not asked of another
            # module's classes: `Config.from_dict(d)`, `Model.from_pretrained(p)` would walk
            # half a library's modules for what is rarely a tensor.)
            self.note_method_call(recv.node, m, node, state, on_class=True)
            result = self.method_call_result(recv.node, m, node, state, on_class=True) \
                if self.defines_method(recv.node, m) else None
            return result if result is not None else UNKNOWN_FACT
        if kind == CLASS and hasattr(recv.node, "makes_instance"):
            result = self._entity_class_call(recv, m, node, state)
            if result is not None:
                return result
        if kind == SEQ and m in ("pop", "__getitem__") and recv.element is not None:
            return recv.element
        if kind == OTHER and _DISTRIBUTION in recv.tags:
            if m in _SAMPLES:
                # Sampling runs under no-grad: the sample never requires grad.
                return tensor(Grad.NO, recv.device)
            if m in ("rsample", "log_prob", "cdf", "icdf", "entropy", "perplexity"):
                grad = max([recv.grad, *(f.grad for f in self._arg_facts(node, state) if f.kind in (TENSOR, UNKNOWN))])
                return Fact(TENSOR, grad, recv.device, by_flow=True)
            return UNKNOWN_FACT
        if kind == OTHER and "ndarray" in recv.tags:
            return ARRAY_FACT
        if kind == OTHER and "foreign" in recv.tags:
            return FOREIGN_FACT
        if kind == UNKNOWN:
            return self._unknown_method(recv, m, node, state)
        return UNKNOWN_FACT

    def lambda_def(self, node: ast.Lambda):
        """The def a lambda stands for (`def <lambda>(...): return body`, at the lambda's place),
        made once a lambda: what a call of it returns is what that def's walk says, as for a
        function of the file (None: not followed here)."""
        return None

    # Summaries of the file's functions (the walker computes them; none here).
    def function_result(self, func, cls) -> Fact | None:
        return None

    def call_result(self, func, call, state) -> Fact | None:
        return self.function_result(func, None)

    def method_call_result(self, classdef, name: str, call, state, recv: Fact | None = None) -> Fact | None:
        return self.method_result(classdef, name)

    def local_constructor(self, classdef) -> tuple | None:
        return None

    def property_result(self, entity, name: str, recv: Fact, receiver, state) -> Fact | None:
        return self.method_result(entity, name)

    def note_function_call(self, func, call, state) -> None:
        pass

    def note_method_call(self, classdef, name: str, call, state, on_class: bool = False, recv=None) -> None:
        pass

    def note_constructor(self, classdef, call, state) -> None:
        pass

    def method_result(self, classdef, name: str, hint: tuple | None = None) -> Fact | None:
        return None

    def defines_method(self, classdef, name: str) -> bool:
        """Whether class `classdef` of the file, or one of its bases in the file, defines method
        `name` (not one it inherits from another module)."""
        return False

    def overrides_call(self, classdef) -> bool:
        return False

    def method_freezes(self, classdef, name: str) -> bool:
        return False

    def handed_frozen(self, module: Fact) -> bool:
        return False

    def holders_frozen(self, module: Fact, call, state: State) -> bool:
        return False

    def instance_paramfree(self, classdef, call) -> bool:
        return False

    def class_paramfree(self, classdef) -> bool:
        return False

    def _unknown_method(self, recv: Fact, m: str, node: ast.Call, state: State) -> Fact:
        """Methods of a value of unknown kind that tell what the result is whatever the receiver
        (what strict mode needs to stay quiet on `param.detach().cpu().numpy()`):
        `u.detach()` does not require grad, `u.cpu()` is on the host.  After one of them the
        value is taken as tensor-like ("tensorish"), and its other methods keep what is known."""
        tensorish = _TENSORISH in recv.tags
        if m in api.NO_GRAD_METHODS:
            return Fact(UNKNOWN, Grad.NO, recv.device, tags=_TENSORISH_TAGS)
        if m == "cpu" and not node.args:
            return recv.but(device=Device.CPU, device_var=None, tags=recv.tags | _TENSORISH_TAGS)
        if m in ("cuda", "xpu", "mps"):
            return recv.but(device=Device.ACCEL, device_var=None, tags=recv.tags | _TENSORISH_TAGS)
        if m == "to":
            dev = self._target_device(node, state)
            if self._cast(node, state)[0]:
                return Fact(UNKNOWN, Grad.NO, recv.device if dev is None else dev, tags=_TENSORISH_TAGS,
                            device_var=self._device_var(node, state) if dev is not None else recv.device_var)
            if dev is not None:
                return recv.but(device=dev, device_var=self._device_var(node, state),
                                tags=recv.tags | _TENSORISH_TAGS)
            return recv
        if m == "type":
            integer, dev = self._cast(node, state)
            if integer or dev is not None:
                return Fact(UNKNOWN, Grad.NO if integer else recv.grad, recv.device if dev is None else dev,
                            tags=_TENSORISH_TAGS, device_var=recv.device_var if dev is None else None)
        if m == "numpy":
            return ARRAY_FACT if recv.grad is Grad.NO and recv.device is Device.CPU else UNKNOWN_FACT
        if tensorish and m == "requires_grad_":
            # `x.detach().clone().requires_grad_(True)`: a leaf that requires grad (as the
            # statement `x.requires_grad_(True)` makes `x`; `_call_effect`).
            flag = _const_bool(node.args[0]) if node.args else True
            grad = Grad.YES if flag else (Grad.NO if flag is False else Grad.UNKNOWN)
            return Fact(TENSOR, grad, recv.device, leaf=grad is Grad.YES, device_var=recv.device_var)
        if tensorish and m not in api.NON_TENSOR_METHODS:
            return recv.but(leaf=False)
        return UNKNOWN_FACT

    def _device_var(self, call: ast.Call, state: State) -> str | None:
        """The dotted name of a device variable a call moves to (`x.to(device)`,
        `torch.zeros(3, device=self.device)`), when the variable's device is not known."""
        arg = _kwarg(call, "device")
        if arg is None and call.args and isinstance(call.func, ast.Attribute) and call.func.attr == "to":
            arg = call.args[0]
        if arg is None:
            return None
        f = self.fact(arg, state)
        if f.device_var is not None:
            return f.device_var  # `device=x.device`, x moved with `device`
        var = dotted_name(arg)
        if var is None or f.kind in (DEVICE, OTHER) and f.device is not Device.UNKNOWN:
            return None
        return var

    def _property(self, instance: Fact, name: str, receiver, state: State) -> Fact | None:
        """What property `name` of the class of `instance` (`receiver`'s value: a class of the
        file, or of another module of the project) returns, as this instance has it (a submodule
        of a frozen module is frozen; None: no such property)."""
        node = instance.node
        if hasattr(node, "is_property"):
            if not node.is_property(name):
                return None
            got = self.property_result(node, name, instance, receiver, state)
        else:
            info = self.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None
            func = info.method(name)[0] if info is not None else None
            if func is None or not is_property(func):
                return None
            got = self.method_result(node, name)
        if got is None:
            return UNKNOWN_FACT
        if got.kind == MODULE:
            if instance.frozen:
                got = _frozen(got, True)
            if instance.device is not Device.UNKNOWN:
                got = got.but(device=max(got.device, instance.device))
        return got

    def _dict_call(self, node: ast.Call, state: State) -> Fact:
        """`dict(...)`: of a mapping (a copy), of `model.named_parameters()` or other pairs (by
        their second items), and of keywords (key by key)."""
        if len(node.args) > 1:
            return UNKNOWN_FACT
        keyed: dict | None = {}
        values = []
        if node.args:
            f = self.fact(node.args[0], state)
            if f.kind == MAPPING:
                keyed = dict(f.attrs) if f.attrs is not None else None
                values.append(f.element or UNKNOWN_FACT)
            else:
                pair = self._element_of(f)
                values.append(pair.items[1] if pair.kind == SEQ and pair.items is not None and len(pair.items) == 2
                              else UNKNOWN_FACT)
                keyed = None
        for k in node.keywords:
            v = self.fact(k.value, state)
            if k.arg is None:  # `dict(**other)`
                v, keyed = _spread(v), None
            elif keyed is not None:
                keyed[k.arg] = v
            values.append(v)
        return _mapping(values, keyed)

    def _dict_display(self, node: ast.Dict, state: State) -> Fact:
        """A dict display: a mapping whose values are described by its element, and, where every
        key is a string constant, key by key (`attrs`: {"logits": fact})."""
        keyed: dict | None = {}
        values = []
        for k, v in zip(node.keys, node.values):
            f = self.fact(v, state)
            if k is None:  # `**other`: what another mapping holds
                f, keyed = _spread(f), None
            elif keyed is not None and type(k) is ast.Constant and type(k.value) is str:
                keyed[k.value] = f
            else:
                keyed = None
            values.append(f)
        return _mapping(values, keyed)

    def _plain_state_dict(self, module: Fact, call: ast.Call) -> bool:
        """Whether `module.state_dict(...)` (`call`) is torch's, with `keep_vars=False`: a torch
        module's, or that of a class of the file that does not define its own (a class of another
        module of the project may inherit one)."""
        if call.args or any(k.arg != "keep_vars" or _const_bool(k.value) is not False for k in call.keywords):
            return False
        node = module.node
        if node is None:
            return True
        # A class of the file whose bases are nn.Module or the file's classes, none defining it.
        todo, seen = [self.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None], set()
        while todo:
            info = todo.pop()
            if info is None or not info.plain or "state_dict" in info.methods:
                return False
            if id(info) not in seen:
                seen.add(id(info))
                todo.extend(info.bases)
        return True

    def _element_of(self, f: Fact) -> Fact:
        """What iterating over (or unpacking) a value of fact `f` yields."""
        kind = f.kind
        if kind == SEQ:
            el = f.element or UNKNOWN_FACT
            if GENERATOR_TAG in f.tags and el.grad is not Grad.NO and not el.leaf and self.frame is not None \
                    and self.frame.state.no_grad:
                # A generator computes each value when it is iterated: here, with grad off.
                return el.but(grad=Grad.NO, min_grad=None)
            return el
        if kind == PARAMS:
            return f.element or UNKNOWN_FACT
        if kind == NAMED_PARAMS:
            el = f.element or UNKNOWN_FACT
            return Fact(SEQ, Grad.NO, el.device, element=el, items=(OTHER_FACT, el))
        if kind == TENSOR:
            return f.but(leaf=False)
        if kind == LOADER:
            return Fact(SEQ, Grad.NO, Device.CPU, element=tensor(Grad.NO, Device.CPU))
        if kind == MAPPING:
            return OTHER_FACT  # its keys
        if kind == MODULE:
            return Fact(MODULE, Grad.UNKNOWN, f.device, frozen=f.frozen, by_flow=f.by_flow)
        if kind == OTHER and _MPL_AXES in f.tags:
            return f  # (an array of Axes: `fig, (a1, a2) = plt.subplots(1, 2)`, `for ax in axes`)
        return UNKNOWN_FACT

