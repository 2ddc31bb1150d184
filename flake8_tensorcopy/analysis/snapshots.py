"""Snapshots that are not copies: the walker's domain for values that look like copies but
share storage with live tensors (family TNS5; the running totals are in accumulators.py).

`SnapshotDomain` ("snapshots") follows, name by name and container by container, the values
that look like copies but share storage with a module's parameters or with a tensor:
`model.state_dict()` (and its shallow copies `.copy()`, `dict(...)`), `t.detach()`, `t.data`,
`t.detach().numpy()`, `t.detach().cpu().numpy()` on a tensor that is on the CPU.  Each such
value is a token (where it was made, what it aliases); the walker joins the tokens at branches
and iterates them around loops with the rest of the state.  In-place updates of the source mark
the tokens that alias it as stale, with the update's line: an optimizer step (for parameters and
state dicts; an optimizer the file builds on other modules' parameters does not count), a call
of a function of the file that steps one and is handed the source (or steps a parameter the
call hands an optimizer of the source, whatever the parameter's name), `load_state_dict`,
`reset_parameters`, `nn.init.*_`, in-place methods, subscript and augmented assignment on the
tensor.  A view made through another name of a tensor (`w = model.weight`, then `w.detach()`) is
one of that tensor (SnapState.aliases).  Rebinding the source (`model = Net()`, `x = x - lr *
g`) cuts the tokens loose: later updates do not reach them.  A read of a stale token's value
(passing it to a call, returning it, indexing it, arithmetic; not `len()`, `is None`,
`.append()` into the container) is a use, recorded in the walker's recording pass with its
order (`frame.seq`); each token made in the scope and used stale is a finding (`.findings`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter, namedtuple

from ..model import REQUIRED, Record
from .astutil import (attributes_changed, bind_arguments, child_nodes, def_stub, dotted_name, expressions,
                      is_plain_method, own_nodes, target_elements, walk)
from .facts import FUNCTION, MODULE, OTHER, SEQ, TENSOR, UNKNOWN, Device, Grad
from .names import words
from .storage import is_inplace_method
from .summaries import project_bases
from .walker import Domain, NameSets
from ..source import BEFORE_FIRST_LETTER, LazyPattern, kept_for_the_last_text
from .text_tests import (_RETURNS_SNAPSHOT, STATE, TENSOR_ALIAS, may_update, might_alias_tensor,
                         might_keep_state_dict, snapshot_helpers, state_keeping_methods)

# Methods of a container that write into it (their receiver is not a read of its values).
_CONTAINER_WRITES = frozenset("append appendleft extend extendleft insert add update setdefault clear".split())
# Calls that read no value out of their argument (length, identity, type).
_NOT_VALUE_READS = frozenset({"len", "isinstance", "id", "type", "hasattr", "callable", "bool"})
_OPT_WORDS = frozenset({"opt", "optim", "optimizer", "optimiser", "optimizers", "optimisers", "optimz"})
_NOT_OPT_WORDS = frozenset({"sched", "scheduler", "schedulers", "lr", "warmup", "ema", "swa", "scaler", "state",
                            "dict", "config", "cfg", "args", "kwargs", "name", "names", "type", "cls", "class"})
# Optimizer classes (torch.optim and the common third-party ones), by the last part of the name.
_OPTIMIZER_CLASSES = frozenset(
    "SGD Adam AdamW Adamax Adagrad Adadelta RMSprop Rprop ASGD NAdam RAdam LBFGS SparseAdam Adafactor "
    "Lion LAMB Lamb FusedAdam FusedLAMB FusedSGD AdamW8bit Adam8bit PagedAdamW Adan Lookahead Muon".split()
)
# Methods only a module has: `x.parameters()` says `x` is one.
_MODULE_EVIDENCE = ("parameters", "named_parameters", "train", "eval", "modules", "children", "buffers")
# Module methods that may give the parameters new storage (a device or dtype conversion).
_MODULE_MOVES = frozenset("to cuda cpu xpu mps half float double bfloat16 type to_empty".split())
# (Tried once a run of word characters and dots, from its start: what precedes the run's first
# ASCII letter or `_` is passed over without giving it back, where a try at each of its
# characters read to the run's end again, quadratic in a long name (gan._CALLEE).)
_STEP_TEXT = LazyPattern(r"(?<![\w.])%s([A-Za-z_][\w.]*)\.step\(" % BEFORE_FIRST_LETTER)
_CALLED = LazyPattern(r"(?<![\w.])(self\.)?([A-Za-z_]\w*)\s*\(")
# What may change a tensor in place besides a step: an in-place method, `load_state_dict(`,
# `.data`, a subscript assignment, an augmented assignment to an attribute (`model.w += d`; to a
# name, `total += loss.item()`, binds the name).
_CHANGES_IN_PLACE = LazyPattern(r"[A-Za-z0-9]_\(|load_state_dict\(|\.data\b|\]\s*=[^=]|\.\w+\s*[-+*/]=")


def read_attributes(method) -> tuple:
    """The attributes of the instance whose values method `method` (a plain method) reads as a
    snapshot's use reads them: loads one (`model.load_state_dict(self.best_state)`, an early
    stopper's `restore(model)`), saves one (`torch.save(self.best_state, path)`), deep-copies,
    indexes or returns one; in a branch too (`if self.best_state is not None:`), not in a nested
    function, and not an attribute the method binds, deletes or empties anywhere (what it reads
    may then be what it set).  Sorted names."""
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not is_plain_method(method):
        return ()
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return ()
    me = positional[0].arg

    def attr(e):
        return e.attr if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == me else None

    found, changed = set(), False
    for n in own_nodes(method.body):
        t = type(n)
        if (t is ast.Name and n.id == me and type(n.ctx) is not ast.Load) or t is ast.Global or t is ast.Nonlocal:
            changed = True
        elif t is ast.Call:
            name = n.func.attr if type(n.func) is ast.Attribute else n.func.id if type(n.func) is ast.Name else ""
            if name in ("load_state_dict", "save", "deepcopy") and n.args and attr(n.args[0]) is not None:
                found.add(attr(n.args[0]))
        elif t is ast.Subscript and type(n.ctx) is ast.Load and attr(n.value) is not None:
            found.add(attr(n.value))
        elif t is ast.Return and n.value is not None and attr(n.value) is not None:
            found.add(attr(n.value))
    if changed:
        return ()  # (the instance's name bound again: `self` may be another object)
    return tuple(sorted(found - attributes_changed(method)))


def method_keeps(walker, classdef, method) -> tuple:
    """kept_state_dicts of method `method` of class `classdef` of the module `walker` walks, with
    the views of a module's parameters its constructor keeps where the class writes into no
    tensor in place (_writes_in_place: a pruner's views are meant to be live)."""
    views = method.name == "__init__" and walker.lines is not None \
        and not _writes_in_place(walker.source_of(classdef))
    return kept_state_dicts(method, views)


def kept_state_dicts(method, views: bool = False) -> tuple:
    """((parameter, attribute, line), ...) for each attribute of the instance that method
    `method` (a plain method: its first parameter is the instance) may set to the state dict of
    the module one of its parameters holds, without copying a tensor (`self.best_state =
    model.state_dict()`, or a shallow copy of it): an attribute the method sets nowhere else, to
    a parameter the method never rebinds.  Or to the state dict of a module the instance holds
    (`self.best_state = self.model.state_dict()`, the parameter ".model"), one the method does
    not set.  `views`: also to views of the parameters of the module one of its parameters
    holds (parameter_views_of: `self.params = {n: p.data for n, p in model.named_parameters()}`,
    an EWC anchor), the parameter then "views:model"."""
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not is_plain_method(method):
        return ()
    a = method.args
    positional = [*a.posonlyargs, *a.args]
    if not positional:
        return ()
    self_name = positional[0].arg
    params = {x.arg for x in (*positional[1:], *a.kwonlyargs)}
    assigned: dict = {}  # attribute -> [(parameter or None, line)]
    rebound: set = set()
    for n in own_nodes(method.body):
        t = type(n)
        if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
            targets = n.targets if t is ast.Assign else [n.target]
            for target in targets:
                for el in target_elements(target):
                    if (type(el) is ast.Attribute and type(el.value) is ast.Name and el.value.id == self_name):
                        simple = t is not ast.AugAssign and n.value is not None and len(targets) == 1 \
                            and el is target
                        got = _returned_snapshot(n.value) if simple else None
                        param = got[1] if got is not None and got[0] == STATE else None
                        if param is None and simple and views:
                            owner = parameter_views_of(n.value)
                            param = "views:" + owner if owner is not None else None
                        assigned.setdefault(el.attr, []).append((param, n.lineno))
        elif t is ast.Name and type(n.ctx) is not ast.Load:
            rebound.add(n.id)
        elif t is ast.Global or t is ast.Nonlocal:
            rebound.update(n.names)
    out = []
    for attr, sets in sorted(assigned.items()):
        ps = {p for p, _ in sets}
        if len(ps) == 1:
            (p,) = ps
            if p is not None and p.startswith("views:"):
                if p[6:] in params and p[6:] not in rebound and self_name not in rebound:
                    out.append((p, attr, min(line for _, line in sets)))
            elif p is not None and p.startswith(self_name + ".") and self_name not in rebound:
                held = p[len(self_name):]  # ".model"
                if held[1:].split(".", 1)[0] not in assigned:
                    out.append((held, attr, min(line for _, line in sets)))
            elif p is not None and p in params and p not in rebound and self_name not in rebound:
                out.append((p, attr, min(line for _, line in sets)))
    return tuple(out)


# What a view of a tensor may be made of, outward from the tensor (_tensor_alias).
_VIEW_STEPS = frozenset({"detach", "cpu", "numpy"})


def snapshot_return(func) -> tuple | None:
    """(kind, parameter, steps) when function `func` returns, without copying a tensor, the state
    dict of the module its parameter holds (kind STATE: `def snapshot(m): return m.state_dict()`,
    or a shallow copy of it, `.copy()`, `dict(...)`, `OrderedDict(...)`; steps "") or a view of
    the tensor it holds (kind TENSOR_ALIAS: `def to_numpy(t): return t.detach().cpu().numpy()`;
    steps "detach.cpu.numpy", outward from the tensor, of `.detach()`, `.data`, `.cpu()` and
    `.numpy()`, which _chain_alias reads as _tensor_alias reads the expression); else None.  A
    plain function (not async, not a generator; decorated by nothing but `torch.no_grad()` or
    `torch.inference_mode()`) whose body ends in a `return`, every `return` of which returns
    the same of one parameter, which the body never rebinds (or returns a local that one plain
    assignment binds to it, `state = m.state_dict()`, named nowhere else)."""
    if type(func) is not ast.FunctionDef or not func.body or type(func.body[-1]) is not ast.Return:
        return None
    for d in func.decorator_list:
        name = dotted_name(d.func if isinstance(d, ast.Call) else d)
        if name is None or name.rsplit(".", 1)[-1] not in ("no_grad", "inference_mode"):
            return None
    a = func.args
    params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    found = None
    nodes = list(own_nodes(func.body))  # (a nested function's returns are its own)
    bound = None  # {local: its value}, on first need
    for n in nodes:
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom:
            return None
        if t is ast.Return:
            value = n.value
            if type(value) is ast.Name and value.id not in params:
                # `state = m.state_dict()` then `return state`: a local bound once, named nowhere
                # else (nothing it is handed to or that indexes it may copy its tensors).
                if bound is None:
                    bound = _bound_once_and_returned(func, nodes)
                value = bound.get(value.id)
            got = _returned_snapshot(value) if value is not None else None
            if got is None or got[1] not in params or (found is not None and got != found):
                return None
            found = got
        elif t is ast.Name:
            if type(n.ctx) is not ast.Load and n.id in params:
                return None
        elif (t is ast.Global or t is ast.Nonlocal) and params.intersection(n.names):
            return None
    return found


def _bound_once_and_returned(func, nodes: list) -> dict:
    """{name: value} of the locals of `func` (`nodes`: its own nodes) that one plain assignment
    binds (`state = m.state_dict()`) and that are named only there and in one `return name`
    (nor in a function nested in it)."""
    named: dict = {}  # name -> times it appears
    for n in walk(func):
        if type(n) is ast.Name:
            named[n.id] = named.get(n.id, 0) + 1
    # (Asked of a returned name: named twice, it is named by the assignment and that `return`.)
    values = {n.targets[0].id: n.value for n in nodes
              if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name}
    return {name: value for name, value in values.items() if named.get(name) == 2}


def parameter_views_of(expr) -> str | None:
    """The name `m` where `expr` is a comprehension of views of the parameters of the module `m`
    holds, each sharing its parameter's memory: `{n: p.data for n, p in m.named_parameters()}`,
    `[p.detach() for p in m.parameters()]` (one generator, its element `.data` or `.detach()`
    of its variable, a condition allowed); else None."""
    if type(expr) not in (ast.DictComp, ast.ListComp) or len(expr.generators) != 1:
        return None
    gen = expr.generators[0]
    it, target = gen.iter, gen.target
    if gen.is_async or type(it) is not ast.Call or type(it.func) is not ast.Attribute or it.args or it.keywords \
            or type(it.func.value) is not ast.Name:
        return None
    if it.func.attr == "named_parameters" and type(target) is ast.Tuple and len(target.elts) == 2 \
            and type(target.elts[1]) is ast.Name:
        var = target.elts[1].id
    elif it.func.attr == "parameters" and type(target) is ast.Name and type(expr) is ast.ListComp:
        var = target.id
    else:
        return None
    value = expr.value if type(expr) is ast.DictComp else expr.elt
    got = _returned_snapshot(value)
    if got is None or got[0] != TENSOR_ALIAS or got[1] != var or got[2] not in ("data", "detach"):
        return None
    return it.func.value.id


def _returned_snapshot(expr) -> tuple | None:
    """(STATE, `p`, "") when `expr` is `p.state_dict()`, `p.state_dict().copy()`,
    `dict(p.state_dict())`, `OrderedDict(p.state_dict())` or some of its entries (`{k: v for k,
    v in p.state_dict().items() if ...}`); (TENSOR_ALIAS, `p`, steps) when it
    is `p` followed by `.detach()`, `.data`, `.cpu()` and `.numpy()` (steps: "detach.cpu.numpy");
    `p` a name."""
    inner = expr
    if type(inner) is ast.DictComp and len(inner.generators) == 1:
        # `{k: v for k, v in p.state_dict().items() if ...}`: some of its entries, each the
        # state dict's own tensor.
        gen = inner.generators[0]
        target, it = gen.target, gen.iter
        if (type(target) is ast.Tuple and len(target.elts) == 2 and all(type(e) is ast.Name for e in target.elts)
                and type(inner.key) is ast.Name and inner.key.id == target.elts[0].id
                and type(inner.value) is ast.Name and inner.value.id == target.elts[1].id
                and not gen.is_async and type(it) is ast.Call and type(it.func) is ast.Attribute
                and it.func.attr == "items" and not it.args and not it.keywords):
            inner = it.func.value
    if type(inner) is ast.Call and not inner.keywords:
        f = inner.func
        if type(f) is ast.Attribute and f.attr == "copy" and not inner.args:
            inner = f.value
        elif len(inner.args) == 1 and dotted_name(f) in ("dict", "OrderedDict", "collections.OrderedDict"):
            # (Not `copy.copy(...)` by its spelling: a helper's module may name its own `copy`.)
            inner = inner.args[0]
    if (type(inner) is ast.Call and type(inner.func) is ast.Attribute and inner.func.attr == "state_dict"
            and not inner.args and not inner.keywords):
        owner = dotted_name(inner.func.value)  # (a dotted name, `self.model`, matches no parameter)
        return (STATE, owner, "") if owner is not None else None
    steps = []
    node = expr
    while True:
        t = type(node)
        if t is ast.Attribute and node.attr == "data":
            steps.append("data")
            node = node.value
        elif (t is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _VIEW_STEPS
              and not node.args and not node.keywords):
            steps.append(node.func.attr)
            node = node.func.value
        elif t is ast.Call and _to_the_cpu(node):
            steps.append("cpu")  # (`.to("cpu")` is `.cpu()`)
            node = node.func.value
        else:
            break
    if steps and type(node) is ast.Name:
        return TENSOR_ALIAS, node.id, ".".join(reversed(steps))
    return None


def _chain_alias(steps: tuple, f, no_grad: bool, cpu: bool = False) -> bool:
    """Whether a named tensor whose fact is `f`, followed by `steps` (("detach", "cpu", "numpy"):
    of a function's return, snapshot_return, or of a comprehension's element), is a view of it
    as _tensor_alias says of the expression (`no_grad`: where grad is off; `cpu`: the file names
    no device, _device_free)."""
    if not steps:
        return False
    inner, last = steps[:-1], steps[-1]
    if last == "data" or last == "detach":
        return not inner and f.kind == TENSOR
    if last == "numpy":
        if _chain_alias(inner, f, no_grad, cpu):
            return True
        return not inner and f.kind == TENSOR and (f.grad is Grad.NO or no_grad) and f.device is not Device.ACCEL
    if last == "cpu":
        # (`p.cpu()` of a tensor on the CPU is the tensor itself.)
        return cpu and f.device is Device.CPU and (not inner and f.kind == TENSOR or _chain_alias(inner, f, no_grad))
    return False


def _device_free(walker) -> bool:
    """Whether the file's text names no device and moves nothing (_names_no_device): only then is
    a tensor the analysis finds on the CPU certainly there when `.cpu()` is taken of it (a
    constructor's `device=`, a default device, a module moved through another name, through a
    module that holds it or by a helper are not followed)."""
    return walker.lines is not None and _names_no_device(walker.lines.text)


@kept_for_the_last_text
def _names_no_device(text: str) -> bool:
    return _MOVES.search(text) is None


# What may put a tensor or a module elsewhere than on the CPU (_device_free): an accelerator
# named (`"cuda" if ... else "cpu"`, `.cuda()`, `mps`, `xpu`), a default device, a device
# argument or a `torch.device` that is not the literal "cpu" (`nn.Linear(3, 2, device=dev)`,
# `with torch.device(dev):`), `.to(...)` of anything but the CPU or a dtype (`net.to(dev)`), a
# module's `.to_empty(...)` or `.type(...)`.  (Reading `x.device` moves nothing.)
_CPU = r"""['"]cpu(?::\d+)?['"]"""
_MOVES = LazyPattern(
    r"cuda|\bmps\b|xpu|to_empty\(|\.type\(|set_default_device"
    r"|\bdevice\s*=(?!=)(?!\s*(?:%s|torch\.device\(\s*%s\s*\)))" % (_CPU, _CPU)
    + r"|torch\.device\((?!\s*%s)" % _CPU
    + r"|\.to\((?!\s*(?:%s|device\s*=\s*%s|torch\.device\(\s*%s\s*\)|dtype\s*=" % (_CPU, _CPU, _CPU)
    + r"|torch\.[a-z]*(?:float|int|bool|half|double|long|complex)\w*\s*[,)]))")


def is_optimizer_name(key: str | None) -> bool:
    if not key:
        return False
    ws = words(key.rsplit(".", 1)[-1])
    return any(w in _OPT_WORDS for w in ws) and not any(w in _NOT_OPT_WORDS for w in ws)


_G_WORDS = frozenset({"g", "gen", "generator", "netg"})
_D_WORDS = frozenset({"d", "disc", "discriminator", "critic", "netd", "dis"})


def gan_role(key: str | None) -> str | None:
    """"G" or "D" when the last part of a name says generator or discriminator (`optimizerG`,
    `netD`, `self.discriminator`), else None: an optimizer of the one does not step the other."""
    if not key:
        return None
    ws = set(words(key.rsplit(".", 1)[-1]))
    g, d = bool(ws & _G_WORDS), bool(ws & _D_WORDS)
    return None if g == d else ("G" if g else "D")


def _related(source: str, roots) -> bool:
    """Whether a module or tensor named `source` may be one of `roots`, inside one, or hold one
    (None: any)."""
    if roots is None:
        return True
    for r in roots:
        if source == r or source.startswith(r + ".") or r.startswith(source + "."):
            return True
    return False


# --------------------------------------------------------------------------- snapshots


# A value that aliases live storage: made at `anchor` (the id of the expression), of `source`
# (None once that name was rebound), "state" or "tensor"; `param`: an optimizer step may update
# the source; `stale`: the line of the first in-place update since (0: none).  (A namedtuple,
# not typing.NamedTuple: typing costs every start of the CLI.)
Token = namedtuple("Token", "anchor source kind param stale", defaults=(0,))


class Anchor(Record):
    _FIELDS = (
        ("node", REQUIRED),  # the expression that looks like a copy (reported)
        ("kind", REQUIRED),  # "state" or "tensor"
        ("source", REQUIRED),  # what it aliases (a dotted name)
        ("inner", None),  # "state": the `.state_dict()` call inside a shallow copy (or the helper's call)
        ("via", ""),  # ` (snapshot() returns model.state_dict(), utils.py:2)` for a function's result
        ("array", None),  # whether the copy is a NumPy array (None: `node` says, a `.numpy()` call)
        ("copy_after", None),  # a comprehension's element: the fix copies it (`{k: v.cpu().clone() ...}`)
        ("kept", None),  # (what, instead) of a state dict a method keeps: no fix here (`model.state_dict()`)
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


class SnapFinding(Record):
    _FIELDS = (
        ("anchor", REQUIRED),  # an Anchor
        ("holder", REQUIRED),  # the name whose value was used
        ("use_line", REQUIRED),
        ("update_line", REQUIRED),
        ("update", "<expr>"),  # the source of the update (shortened)
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


class SnapState(NameSets):
    """The domain's part of the program state: the tokens each name (or dotted name) may hold,
    and `aliases`, the tensors a plain name may be another name of (`w = model.weight`: {"w":
    {"model.weight"}}): a view made through the name is of that tensor, which an update of its
    module reaches (and rebinding the name does not cut it loose)."""

    __slots__ = ("aliases",)

    def __init__(self, holds=None, aliases=None) -> None:
        super().__init__(holds)
        self.aliases: dict[str, frozenset] = aliases if aliases is not None else {}

    def copy(self):
        return SnapState(dict(self.holds), dict(self.aliases))

    def join(self, other):
        out = super().join(other)
        if not other.aliases:
            out.aliases = dict(self.aliases)
            return out
        aliases = dict(self.aliases)
        for k, v in other.aliases.items():
            aliases[k] = aliases[k] | v if k in aliases else v
        out.aliases = aliases
        return out

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.holds == other.holds and self.aliases == other.aliases

    __hash__ = None

    def resolved(self, key: str) -> str:
        """The tensor `key` is another name of, where it is one tensor's (else `key`)."""
        targets = self.aliases.get(key)
        return next(iter(targets)) if targets is not None and len(targets) == 1 else key


class SnapScope:
    """What one scope recorded: the aliasing expressions, their first stale uses, the findings."""

    def __init__(self) -> None:
        self.anchors: dict[int, Anchor] = {}
        self.uses: dict[int, tuple] = {}  # anchor id -> (seq, holder, use line, update line)
        self.updates: dict[int, str] = {}  # line -> the update there, as shown in messages
        self.findings: list[SnapFinding] = []


class SnapshotDomain(Domain):
    key = "snapshots"

    def __init__(self, options=None) -> None:
        self.options = options
        self._optimizers: dict | None = None  # optimizer name -> the roots it updates (None: unknown)
        # id(def) -> whether that function of the file steps an optimizer
        self._stepping: dict[int, bool] = {}
        self._file_steps: bool | None = None
        # Names of the calls that may keep a snapshot (helper_names; None: not read yet), of the
        # file's own and of the project modules it imports (`_imported`, from `widen`).
        self._helpers: frozenset | None = None
        self._imported: frozenset = frozenset()
        self._helper_returns: dict = {}  # id(def) -> snapshot_return(def)
        self._kept: dict = {}  # id(method) -> what it keeps (kept_state_dicts), with where and the def
        self._reads: dict = {}  # id(method) -> read_attributes(method)

    # ------------------------------------------------------------------ activity

    def active(self, walker, frame) -> bool:
        node = frame.scope.node
        text = walker.source_of(node) if hasattr(node, "end_lineno") else (
            walker.lines.text if walker.lines is not None else None)
        if text is None:
            return True
        names = self.helper_names(walker)
        if not might_keep_state_dict(text) and not might_alias_tensor(text) and not any(
                n + "(" in text for n in names) and not ("__call__" in names and "state_dict(" in text):
            return False
        if may_update(text) or any(n + "(" in text for n in self._imported):
            return True  # (or in a call of a function of a module the file imports: widen)
        # An update may hide in a function of the file that steps an optimizer.
        if self._file_steps is None:
            whole = walker.lines.text if walker.lines is not None else ""
            self._file_steps = ".step(" in whole
        return self._file_steps

    def widen(self, names: frozenset) -> None:
        self._imported = self._imported | names  # snapshot helpers of other modules (snapshot_triggers)

    def helper_names(self, walker) -> frozenset:
        """The names a call that may keep a snapshot may have: of the functions that return a
        state dict or a view of what they are handed (`snapshot_helpers`), and of the methods
        that keep a state dict in an attribute (`state_keeping_methods`), the file's own and
        those of the project modules it imports (`widen`)."""
        if self._helpers is None:  # (asked at every statement: made once, after `widen`)
            text = walker.lines.text if walker.lines is not None else ""
            own = frozenset(snapshot_helpers(text)).union(*state_keeping_methods(text).values())
            self._helpers = own | self._imported
        return self._helpers

    def initial(self, walker, frame) -> SnapState:
        return SnapState()

    def start(self, walker, frame) -> SnapScope:
        return SnapScope()

    # ------------------------------------------------------------------ transfer

    def simple(self, walker, stmt, state) -> None:
        frame = walker.frame
        st: SnapState = state.doms[self.key]
        rec: SnapScope = frame.doms[self.key]
        if isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                for el in target_elements(t):
                    self._rebind(st, el)
            return
        if st.holds:
            self._uses(walker, stmt, st, rec)
            self._updates(walker, stmt, state, st, rec)
        self._bindings(walker, stmt, state, st, rec)
        if self.helper_names(walker):
            # (`ewc = EWC(model, loader)`: a constructor that keeps views in `ewc.params`.)
            target = None
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.value) is ast.Call:
                key = dotted_name(stmt.targets[0])
                target = (key, stmt.value) if key is not None else None
            self._kept_by_calls(walker, walker.expressions_of(stmt), state, st, rec, target)

    def test(self, walker, expr, state) -> None:
        st: SnapState = state.doms[self.key]
        if st.holds:
            e = expr.operand if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not) else expr
            if not (isinstance(e, (ast.Name, ast.Attribute)) and dotted_name(e) in st.holds):
                # (`if best_state:` tests the container, not the values)
                self._uses(walker, expr, st, walker.frame.doms[self.key])
        if self.helper_names(walker):  # `if stopper.step(val_loss, model): break`
            self._kept_by_calls(walker, expressions(expr), state, st, walker.frame.doms[self.key])

    def _kept_by_calls(self, walker, nodes, state, st: SnapState, rec: SnapScope, target=None) -> None:
        """Calls of a method that keeps the state dict of a module it is handed in an attribute
        of the instance (`stopper.step(val_loss, model)`, `stopper(val_loss, model)`; a method of
        a class of the file or of another module of the project, kept_state_dicts): the
        attribute (`stopper.best_state`) may hold it now.  And the call of a constructor that
        keeps views of the parameters of a module it is handed (`ewc = EWC(model, loader)`, with
        `self.params = {n: p.data for n, p in model.named_parameters()}`; `target`: (the name the
        statement binds, the call whose value it binds)): `ewc.params` holds them."""
        names = self.helper_names(walker)
        for n in nodes:
            if type(n) is not ast.Call:
                continue
            func = n.func
            construct = False
            if type(func) is ast.Attribute and func.attr in names:
                name, recv = func.attr, func.value
            elif type(func) is ast.Name and func.id in names and target is not None and target[1] is n:
                name, recv, construct = "__init__", func, True
            elif type(func) is ast.Name and "__call__" in names:
                name, recv = "__call__", func
            else:
                continue
            key = target[0] if construct else dotted_name(recv)
            if key is None:
                continue
            f = walker.fact(recv, state)
            node = f.node
            if node is None or (f.kind == "class") != construct:
                continue
            if hasattr(node, "method_keeps"):  # a class of another module of the project
                said = node.method_keeps(name)
                if not said:
                    continue
                stub = def_stub(name, said[0], 0, ())
                kept = tuple((p, attr, f"{node.where.rsplit(':', 1)[0]}:{line}", stub) for p, attr, line in said[1])
                cls_name = node.name
            else:
                info = walker.classes.get(id(node))
                method = info.method(name)[0] if info is not None else None
                if method is None:
                    continue
                memo = self._kept
                if id(method) not in memo:
                    memo[id(method)] = tuple((p, attr, f"line {line}", method) for p, attr, line in
                                             method_keeps(walker, info.node, method))
                kept = memo[id(method)]
                cls_name = info.node.name
            for param, attr, where, method in kept:
                if param.startswith("views:"):
                    if construct:
                        self._kept_views(walker, n, key, param[6:], attr, where, method, cls_name, state, st, rec)
                    continue
                if construct:
                    continue
                if param[0] == ".":  # a module the instance holds: `self.validate()` for `self.model`
                    arg = recv
                    for part in param[1:].split("."):
                        arg = ast.copy_location(ast.Attribute(value=arg, attr=part, ctx=ast.Load()), recv)
                    shown = "self" + param
                else:
                    arg = _argument(method, n, param)
                    shown = param
                if arg is None:
                    continue
                source = dotted_name(arg)
                if source is None or not _is_module(walker, arg, state):
                    continue
                cls = walker.fact(arg, state).node
                info = walker.classes.get(id(cls)) if cls is not None else None
                if info is not None and info.method("state_dict")[0] is not None:
                    continue  # (its own state_dict: maybe a deep copy)
                holder = f"{key}.{attr}"
                if id(n) not in rec.anchors:
                    shown = f"{shown}.state_dict()"
                    rec.anchors[id(n)] = Anchor(
                        n, STATE, source, None, f" (kept in {holder} by {cls_name}.{name}(), {where})",
                        kept=(f"{source}.state_dict()", f"copy.deepcopy({shown})` in `{cls_name}.{name}()"))
                token = Token(id(n), source, STATE, True)
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.body \
                        and _always_sets(method, attr):
                    # (A method that sets it on every call, `def step(self, m): self.state =
                    # m.state_dict()`: what it held before is gone; one that sets it when the loss
                    # improves may keep the older snapshot.)
                    st.holds[holder] = frozenset({token})
                else:
                    st.holds[holder] = st.holds.get(holder, frozenset()) | {token}

    def _kept_views(self, walker, call: ast.Call, key: str, param: str, attr: str, where: str, method,
                    cls_name: str, state, st: SnapState, rec: SnapScope) -> None:
        """`key.attr` (`ewc.params`) holds views of the parameters of the module that constructor
        call `call` passes as `param` (_kept_by_calls)."""
        arg = _argument(method, call, param)
        source = dotted_name(arg) if arg is not None else None
        if source is None or not _is_module(walker, arg, state):
            return
        holder = f"{key}.{attr}"
        if id(call) not in rec.anchors:
            rec.anchors[id(call)] = Anchor(
                call, TENSOR_ALIAS, f"{source}.parameters()", None,
                f" (views of them kept in {holder} by {cls_name}.__init__(), {where})", False,
                kept=(walker.ctx.text(call) if len(walker.ctx.text(call)) <= 40 else f"{cls_name}(...)",
                      f".clone()` of each view in `{cls_name}.__init__()"))
        st.holds[holder] = frozenset({Token(id(call), source + ".[parameters]", TENSOR_ALIAS, True)})

    def loop_target(self, walker, stmt, state) -> None:
        st: SnapState = state.doms[self.key]
        rec: SnapScope = walker.frame.doms[self.key]
        toks = frozenset()
        if st.holds:
            it = stmt.iter
            key = dotted_name(it)
            if key in st.holds:
                # Iterating a state dict gives its keys; a list of arrays gives the arrays.
                toks = frozenset(t for t in st.holds[key] if t.kind == TENSOR_ALIAS)
                if any(t.stale for t in toks):
                    self._use_tokens(walker, key, it, toks, rec)
            else:
                self._uses(walker, it, st, rec)
                toks = self._iter_tokens(it, st)
        for el in target_elements(stmt.target):
            self._rebind(st, el)
        if toks:
            elts = stmt.target.elts if isinstance(stmt.target, ast.Tuple) else None
            if elts is not None and len(elts) == 2 and _is_items(stmt.iter):
                k = dotted_name(elts[1])
                if k is not None:
                    st.holds[k] = toks
            else:
                k = dotted_name(stmt.target)
                if k is not None:
                    st.holds[k] = toks

    def with_item(self, walker, item, state) -> None:
        st: SnapState = state.doms[self.key]
        if st.holds:
            self._uses(walker, item.context_expr, st, walker.frame.doms[self.key])
        if item.optional_vars is not None:
            for el in target_elements(item.optional_vars):
                self._rebind(st, el)

    def finish(self, walker, frame) -> None:
        if not frame.dispatch:
            return
        rec: SnapScope = frame.doms[self.key]
        for aid, (_seq, holder, use_line, update_line) in sorted(rec.uses.items(), key=lambda kv: kv[1][0]):
            anchor = rec.anchors.get(aid)
            if anchor is not None:
                rec.findings.append(SnapFinding(anchor, holder, use_line, update_line,
                                                rec.updates.get(update_line, "<expr>")))
        rec.findings.sort(key=lambda f: (f.anchor.node.lineno, f.anchor.node.col_offset))

    # ------------------------------------------------------------------ uses

    def _uses(self, walker, root, st: SnapState, rec: SnapScope) -> None:
        """Record each read of a stale token's value in `root` (a statement or an expression)."""
        stack = [root]
        holds = st.holds
        while stack:
            n = stack.pop()
            t = type(n)
            if t is ast.Name or t is ast.Attribute:
                key = dotted_name(n)
                if key is not None and key in holds:
                    self._use_tokens(walker, key, n, holds[key], rec)
                    continue
                if t is ast.Attribute:
                    stack.append(n.value)
                continue
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                continue
            if t is ast.Subscript and type(n.slice) is ast.Constant and type(n.slice.value) is str \
                    and dotted_name(n.value) in holds and _plain_value(walker.fact(n, walker.frame.state)):
                continue  # `ckpt["epoch"]` of `ckpt = {"epoch": 3, "model": model.state_dict()}`: a number
            if t is ast.Assign:
                stack.append(n.value)
                if isinstance(n.value, (ast.Name, ast.Attribute)) and dotted_name(n.value) in holds:
                    stack.pop()  # `other = best_state`: the tokens move, nothing is read yet
                stack.extend(_target_reads(n.targets))
                continue
            if t is ast.AugAssign or t is ast.AnnAssign:
                if n.value is not None:
                    stack.append(n.value)
                stack.extend(_target_reads([n.target]))
                continue
            if t is ast.Delete:
                continue
            if t is ast.Call:
                func = n.func
                if isinstance(func, ast.Attribute):
                    if type(func.value) is ast.Name and any(k.startswith(func.value.id + ".") for k in holds):
                        # `stopper.restore(model)`, whose method loads `self.best_state`: a read
                        # of `stopper.best_state`.
                        for attr in self._method_reads(walker, func):
                            key = f"{func.value.id}.{attr}"
                            if key in holds:
                                self._use_tokens(walker, key, n, holds[key], rec)
                    if func.attr in _CONTAINER_WRITES or func.attr == "keys":
                        pass  # `history.append(x)`: writes into the container
                    else:
                        stack.append(func)
                elif not (isinstance(func, ast.Name) and func.id in _NOT_VALUE_READS):
                    stack.append(func)
                else:
                    # len(history), isinstance(x, dict): read no values (arguments that are
                    # expressions are still walked).
                    stack.extend(a for a in n.args if not isinstance(a, (ast.Name, ast.Attribute)))
                    continue
                stack.extend(n.args)
                stack.extend(k.value for k in n.keywords)
                continue
            if t is ast.Compare:
                ops = n.ops
                parts = [n.left, *n.comparators]
                for i, p in enumerate(parts):
                    neighbours = [ops[j] for j in (i - 1, i) if 0 <= j < len(ops)]
                    if isinstance(p, (ast.Name, ast.Attribute)) and all(
                            isinstance(o, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for o in neighbours):
                        continue  # `x is None`, `k in state`
                    stack.append(p)
                continue
            stack.extend(child_nodes(n))

    def _method_reads(self, walker, func: ast.Attribute) -> tuple:
        """read_attributes of the method `func` calls on an instance of a class of the file (its
        own method or one it inherits), or of another module of the project (its module
        answers: ProjectEntity.method_reads); () for anything else."""
        f = walker.fact(func.value, walker.frame.state)
        node = f.node
        if node is None or f.kind == "class":
            return ()
        if hasattr(node, "method_reads"):  # a class of another module of the project
            return node.method_reads(func.attr)
        info = walker.classes.get(id(node))
        method = info.method(func.attr)[0] if info is not None else None
        if method is None:
            return ()
        memo = self._reads
        if id(method) not in memo:
            memo[id(method)] = read_attributes(method)
        return memo[id(method)]

    def _use_tokens(self, walker, key: str, node, toks, rec: SnapScope) -> None:
        frame = walker.frame
        if not frame.recording or frame.expects_error:
            return
        for tok in sorted(toks, key=lambda t: (t.anchor, t.stale)):
            if tok.stale and tok.anchor not in rec.uses:
                rec.uses[tok.anchor] = (frame.seq, key, getattr(node, "lineno", 0), tok.stale)

    # ------------------------------------------------------------------ updates

    def _updates(self, walker, stmt, state, st: SnapState, rec: SnapScope) -> None:
        line = stmt.lineno

        def stale(pred, node) -> None:
            if self._stale(st, line, pred) and line not in rec.updates:
                rec.updates[line] = _update_shown(walker.ctx, node)

        # Writes by statement shape: `w[0] = v`, `w += d` on a tensor.
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = [el for t in stmt.targets for el in target_elements(t) if isinstance(el, ast.Subscript)]
        elif isinstance(stmt, ast.AugAssign):
            targets = [stmt.target]
        for t in targets:
            self._tensor_write(walker, t, state, st, stale, stmt)
        for n in walker.expressions_of(stmt):
            if type(n) is not ast.Call:
                continue
            func = n.func
            m = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if m is None:
                continue
            if m == "step" and isinstance(func, ast.Attribute):
                opt = dotted_name(func.value)
                if opt is not None and "scaler" in words(opt.rsplit(".", 1)[-1]) and n.args:
                    opt = dotted_name(n.args[0])
                if self._is_optimizer(walker, opt):
                    roots = self._optimizer_roots(walker).get(opt)
                    role = gan_role(opt) if roots is None else None
                    # (Not what is frozen here: a parameter that does not require grad gets no
                    # gradient, and a step leaves a parameter without one alone.)
                    stale(lambda tok: tok.param and _related(tok.source, roots) and not (
                        role is not None and gan_role(tok.source) not in (None, role))
                        and not _frozen(walker, tok.source, state), n)
                    continue
                # Not an optimizer: a method of a class of the file (`trainer.step()`), below.
            if m in _MODULE_MOVES and isinstance(func, ast.Attribute):
                key = dotted_name(func.value)
                if key is not None and walker.fact(func.value, state).kind == MODULE:
                    # `model.to(device)` gives the parameters new storage when it converts
                    # them: the old state dict and views keep the old values.
                    _cut_loose(st, key)
                continue
            if m in ("load_state_dict", "reset_parameters") and isinstance(func, ast.Attribute):
                key = dotted_name(func.value)
                if key is not None and not self._is_optimizer(walker, key) and not any(
                        w in _NOT_OPT_WORDS for w in words(key.rsplit(".", 1)[-1])):
                    given = dotted_name(n.args[0]) if m == "load_state_dict" and len(n.args) == 1 else None
                    held = st.holds.get(given) if given is not None else None
                    if held and all(tok.kind == STATE and tok.source == key for tok in held):
                        continue  # its own state dict, loaded back: each tensor copied onto itself
                    stale(lambda tok, key=key: _related(tok.source, (key,)), n)
                continue
            if is_inplace_method(m):
                q = walker.qualname(func, state)
                if q is not None and q.startswith("torch.nn.init.") and n.args:
                    self._tensor_write(walker, n.args[0], state, st, stale, n)
                elif isinstance(func, ast.Attribute):
                    self._tensor_write(walker, func.value, state, st, stale, n)
                continue
            if self._calls_stepping(walker, n, state):
                # A function of the file that steps an optimizer: it updates what it is handed.
                handed = set()
                for a in [*n.args, *(k.value for k in n.keywords)] + (
                        [func.value] if isinstance(func, ast.Attribute) else []):
                    k = dotted_name(a.value if isinstance(a, ast.Starred) else a)
                    if k is not None:
                        handed.add(k)
                if isinstance(func, ast.Attribute):
                    # What the instance's constructor call was handed (`t = Trainer(model, opt)`,
                    # another module's class: `t.train_step(x)` updates `model`).
                    handed |= getattr(walker.fact(func.value, state).attrs, "handed", frozenset())
                # What it steps without being handed: an optimizer of the module's own
                # (`def train_epoch(): opt.step()` with `opt = SGD(model.parameters())` at the top).
                handed |= self._global_steps(walker, n, state)
                narrowed, only = self._stepped_roots(walker, n, state)
                if narrowed is not None:
                    # (It steps only the optimizers it is handed, each built on known modules,
                    # and changes nothing else in place: `distill(student, teacher, opt)` with
                    # `opt` over the student's parameters leaves the teacher as it was.)
                    handed = narrowed
                if handed and only:
                    # (Nor what is frozen here, as at a step of the file's own: it gets no
                    # gradient, and the function thaws nothing.)
                    stale(lambda tok, h=frozenset(handed): tok.param and _related(tok.source, h)
                          and not _frozen(walker, tok.source, state), n)
                elif handed:
                    stale(lambda tok, h=frozenset(handed): tok.param and _related(tok.source, h), n)
                continue
            loads = self._loads_handed(walker, n, state)
            if loads:
                # A function that loads a state dict into a module it is handed
                # (`evaluate_with_weights(model, avg_state)`, `model.load_state_dict(state)` in
                # it): as the call `model.load_state_dict(avg_state)` here.
                for key, given in loads:
                    held = st.holds.get(given) if given is not None else None
                    if held and all(tok.kind == STATE and tok.source == key for tok in held):
                        continue  # its own state dict, loaded back
                    stale(lambda tok, key=key: _related(tok.source, (key,)), n)
                continue
            roots = self._handed_optimizer_roots(walker, n, state)
            if roots:
                stale(lambda tok, h=roots: tok.param and _related(tok.source, h), n)

    def _tensor_write(self, walker, target, state, st: SnapState, stale, shown) -> None:
        """An in-place write into `target` (a tensor, a view of one, its `.data` or `.detach()`)."""
        base = target
        while True:
            if isinstance(base, ast.Subscript):
                base = base.value
            elif isinstance(base, ast.Attribute) and base.attr in ("data", "T", "mT"):
                base = base.value
            elif (isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute)
                  and base.func.attr in ("detach", "view", "t", "transpose", "view_as")):
                base = base.func.value
            else:
                break
        key = tensor_key(base)
        if key is None or ".grad" in "." + key + "." or key.endswith(".grad"):
            return
        f = walker.fact(base, state)
        if f.kind != TENSOR:
            return
        owners = [tag[9:] for tag in f.tags if tag.startswith("param_of:")]
        keys = {key, st.resolved(key)}  # (a write through `w` of `w = model.weight` is one to it)

        def hit(tok) -> bool:
            src = tok.source
            if any(src == k or k.startswith(src + ".") for k in keys):
                return True
            return any(_related(src, (o,)) for o in owners)

        stale(lambda tok: tok.source is not None and hit(tok), shown)

    @staticmethod
    def _stale(st: SnapState, line: int, pred) -> bool:
        """Mark the tokens `pred` selects as updated at `line`; whether there were any."""
        hit = False
        for k, toks in list(st.holds.items()):
            if any(not t.stale and t.source is not None and pred(t) for t in toks):
                hit = True
                st.holds[k] = frozenset(t._replace(stale=line) if not t.stale and t.source is not None and pred(t)
                                        else t for t in toks)
        return hit

    def _is_optimizer(self, walker, key: str | None) -> bool:
        if not key:
            return False
        return is_optimizer_name(key) or key in self._optimizer_roots(walker)

    def _optimizer_roots(self, walker) -> dict:
        """Optimizers the file builds (`opt = torch.optim.Adam(model.parameters())`), by
        name: the modules and tensors whose parameters they update (None: unknown)."""
        if self._optimizers is None:
            found: dict = {}
            # (A list of parameters added to after, `params += list(teacher.parameters())`, or an
            # optimizer given another group, `opt.add_param_group(...)`: what it holds is not told.)
            assigns, grown = [], set()
            for node in walk(walker.tree):
                t = type(node)
                if t is ast.Assign:
                    assigns.append(node)
                elif t is ast.AugAssign and type(node.target) is ast.Name:
                    grown.add(node.target.id)
                elif t is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Name \
                        and node.func.attr in ("extend", "append", "insert", "add_param_group"):
                    grown.add(node.func.value.id)
            # Names bound once in the file, to what (`params = list(student.parameters())`).
            once: dict = {}
            for node in assigns:
                for t in node.targets:
                    if type(t) is ast.Name:
                        once[t.id] = node.value if t.id not in once else None
            for name in grown:
                once[name] = None
            attributes_of = None  # (_attributes_kept, read where an optimizer is found)
            for node in assigns:
                if not isinstance(node.value, ast.Call):
                    continue
                fn = dotted_name(node.value.func) or ""
                last = fn.rsplit(".", 1)[-1]
                call = node.value
                if last not in _OPTIMIZER_CLASSES:
                    if "optim" not in last.lower() or not call.args:
                        continue
                    # `opt = make_optimizer(student)`, `build_optimizer(cfg, model)`: a factory of
                    # an optimizer, of what it is handed (narrowing what a step updates can only
                    # hide a finding).
                    roots = frozenset()
                    for a in [*call.args, *(k.value for k in call.keywords)]:
                        r = frozenset({dotted_name(a)}) if type(a) in (ast.Name, ast.Attribute) \
                            and dotted_name(a) is not None else _param_roots(a, once)
                        if r is None:
                            roots = None
                            break
                        roots |= r
                else:
                    params = call.args[0] if call.args else next(
                        (k.value for k in call.keywords if k.arg == "params"), None)
                    roots = _param_roots(params, once) if params is not None else None
                if roots and attributes_of is None:
                    attributes_of = _attributes_kept(walker.tree)
                kept = attributes_of.get(id(node)) if roots else None
                if roots and kept:
                    # `self.model = net` and `self.opt = SGD(net.parameters())` in one method:
                    # what the attribute holds is what the optimizer updates.
                    roots = roots | {a for r in roots for a in kept.get(r, ())}
                for t in node.targets:
                    k = dotted_name(t)
                    if k is None:
                        continue
                    if k in grown:
                        roots = None  # (`opt.add_param_group({"params": teacher.parameters()})`)
                    if k in found and (found[k] is None or roots is None):
                        found[k] = None
                    else:
                        found[k] = (found.get(k) or frozenset()) | roots if roots is not None else None
            self._optimizers = found
        return self._optimizers

    def _calls_stepping(self, walker, call: ast.Call, state) -> bool:
        """Whether `call` calls a function or method of this file that steps an optimizer
        (steps_optimizer), or a function of another module of the project, or a method of an
        instance of a class of one, that does (its module answers)."""
        func = call.func
        # A function by its name or a module's attribute (`train(...)`, `loops.train(...)`; not a
        # method of a value, whose fact could load a class's attributes for nothing).
        f = walker.fact(func, state) if type(func) is ast.Name or (
            type(func) is ast.Attribute and walker.qualname(func, state) is not None) else None
        if f is not None and f.kind == FUNCTION and hasattr(f.node, "steps"):
            return f.node.steps()  # (of another module of the project: a `ProjectEntity`)
        if isinstance(func, ast.Name):
            found = f.node if f.kind == FUNCTION and isinstance(f.node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else None
        elif isinstance(func, ast.Attribute):
            recv = walker.fact(func.value, state)
            node = recv.node
            if node is None:
                return False
            if hasattr(node, "method_steps"):
                return recv.kind != "class" and node.method_steps(func.attr)
            info = walker.classes.get(id(node))
            found = info.method(func.attr)[0] if info is not None else None
            if found is None and info is not None:
                # A method a class of the file inherits from a class of another module
                # (`class Trainer(BaseTrainer): pass`, then `trainer.fit(x)`): that one's answer.
                return any(base.method_steps(func.attr) for base in project_bases(info))
        else:
            return False
        return found is not None and steps_optimizer(walker, found, self._stepping)

    def _handed_optimizer_roots(self, walker, call: ast.Call, state) -> frozenset:
        """What `call` updates when it calls a function of the file, or a method of an instance
        of a class of the file, that steps one of its parameters whose name says nothing
        (`def train_one_epoch(m, o): ... o.step()`) and hands that parameter an optimizer
        (`train_one_epoch(model, opt)`, `opt` built on `model.parameters()`, or named one): the
        modules that optimizer updates, or where the file does not say (`opt` a parameter of
        the caller), what the call hands it.  (The name of the parameter, when it says
        optimizer, made the function one that steps: _calls_stepping.)"""
        func = call.func
        skip_first = False
        if type(func) is ast.Name:
            callee = walker.fact(func, state).node
        elif type(func) is ast.Attribute:
            recv = walker.fact(func.value, state)
            info = walker.classes.get(id(recv.node)) if recv.node is not None and recv.kind != "class" else None
            callee = info.method(func.attr)[0] if info is not None else None
            skip_first = True
        else:
            return frozenset()
        if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or (skip_first and not is_plain_method(
                callee)):
            return frozenset()
        stepped = self._stepping.get(("params", id(callee)))
        if stepped is None:
            stepped = self._stepping["params", id(callee)] = _stepped_parameters(walker, callee)
        if not stepped:
            return frozenset()
        out = frozenset()
        for param, arg in bind_arguments(callee, call, skip_first)[0]:
            key = dotted_name(arg) if param in stepped else None
            if key is None or not self._is_optimizer(walker, key):
                continue
            roots = self._optimizer_roots(walker).get(key)
            if roots is None:
                roots = frozenset(k for a in [*call.args, *(k.value for k in call.keywords)]
                                  if (k := dotted_name(a.value if type(a) is ast.Starred else a)) is not None)
            out |= roots
        return out

    def _stepped_roots(self, walker, call: ast.Call, state) -> tuple:
        """What a call of a function of the file by its name, or of another module of the
        project, updates, where that is told by the optimizers the call hands it: the function
        steps only optimizers it is handed and changes nothing else in place (stepped_only), and
        each is handed an optimizer the file builds on known modules or tensors (`opt =
        SGD(student.parameters())`): those modules.  None where it is not so told.  And whether
        the function steps only optimizers it is handed, changes nothing else in place and sets
        no `requires_grad` (what is frozen at the call stays as it was)."""
        callee = walker.called_function(call.func, state)
        if hasattr(callee, "steps_only"):  # a function of another module of the project: its module answers
            stepped, thaws = callee.steps_only()
            callee = callee.node
        elif isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = self._stepping.get(("params", id(callee)))
            if found is None:
                found = self._stepping["params", id(callee)] = stepped_only(walker, callee)
            stepped, thaws = found
        else:
            return None, False
        if not stepped:
            return None, False
        known = self._optimizer_roots(walker)
        out, bound = frozenset(), set()
        for param, arg in bind_arguments(callee, call, False)[0]:
            if param in stepped:
                roots = known.get(dotted_name(arg) or "")
                if roots is None:
                    return None, not thaws
                out |= roots
                bound.add(param)
        return out if bound == stepped else None, not thaws

    def _loads_handed(self, walker, call: ast.Call, state) -> list:
        """((the module `call` hands a function of the file or of another module of the project
        that loads a state dict into it, the name of what the call hands as that state dict or
        None), ...) (state_loads: `def restore(model, state): model.load_state_dict(state)`)."""
        callee = walker.called_function(call.func, state)
        if hasattr(callee, "state_loads"):  # a function of another module of the project: its module answers
            loads = callee.state_loads()
            callee = callee.node
        elif isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
            loads = self._stepping.get(("loads", id(callee)))
            if loads is None:
                loads = self._stepping["loads", id(callee)] = state_loads(callee) \
                    if "load_state_dict" in walker.source_of(callee) else ()
        else:
            return []
        if not loads:
            return []
        bound = dict(bind_arguments(callee, call, False)[0])
        out = []
        for param, path, given in loads:
            arg = bound.get(param)
            key = dotted_name(arg) if arg is not None else None
            if key is None:
                continue
            handed = bound.get(given) if given else None
            out.append((key + path, dotted_name(handed) if handed is not None else None))
        return out

    def _global_steps(self, walker, call: ast.Call, state) -> set:
        """The modules whose parameters a module-level function of the file that `call` calls by
        its name updates through an optimizer of the module's own, a global it neither is
        handed nor binds (`def train_epoch(): opt.step()`, `opt = SGD(model.parameters())`):
        the optimizer's roots, those the scope of the call does not bind itself."""
        func = call.func
        found = walker.functions.get(func.id) if type(func) is ast.Name else None
        if found is None or walker.fact(func, state).node is not found:  # (not a local of that name)
            return set()
        known = self._optimizer_roots(walker)
        stepped = {m.group(1) for m in _STEP_TEXT.finditer(walker.source_of(found))}
        stepped = {o for o in stepped if known.get(o)}
        if not stepped:
            return set()
        roots = set()
        local = _bound_names(found)
        for o in stepped:
            if o.split(".", 1)[0] not in local:
                roots |= known[o]
        scope = walker.frame.scope
        if roots and scope.kind == "class":
            return set()
        if roots and scope.kind != "module":
            here = _bound_names(scope.node)
            roots = {r for r in roots if r.split(".", 1)[0] not in here}
        return roots

    # ------------------------------------------------------------------ bindings

    def _bindings(self, walker, stmt, state, st: SnapState, rec: SnapScope) -> None:
        t = type(stmt)
        if t is ast.Assign or t is ast.AnnAssign:
            value = stmt.value
            if value is None:
                return
            targets = stmt.targets if t is ast.Assign else [stmt.target]
            for target in targets:
                if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                        and len(target.elts) == len(value.elts)
                        and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts)):
                    pairs = [(el, self._tokens(walker, v, state, st, rec)) for el, v in zip(target.elts, value.elts)]
                else:
                    toks = self._tokens(walker, value, state, st, rec)
                    pairs = [(el, toks) for el in target_elements(target)]
                for el, toks in pairs:
                    if isinstance(el, ast.Subscript):
                        item = _item_key(el)
                        if item is not None:
                            _cut_loose(st, item)  # (`net[0] = nn.Linear(...)`: views of the old layer keep theirs)
                        key = dotted_name(el.value)
                        if key is not None and toks:
                            st.holds[key] = st.holds.get(key, frozenset()) | toks
                        continue
                    if isinstance(el, ast.Attribute) and el.attr == "data":
                        # `w.data = new`: w now has other storage; the old aliases keep the old values.
                        key = dotted_name(el.value)
                        if key is not None:
                            _cut_loose(st, key)
                            _cut_loose(st, st.resolved(key))  # (`w.data = new` of `w = model.weight`)
                        continue
                    alias = _alias_of(walker, st, value, state) if el is target and type(el) is ast.Name \
                        and len(targets) == 1 else None
                    key = self._rebind(st, el)
                    if alias is not None and alias != key:
                        st.aliases[key] = alias
                    if key is not None and toks:
                        # (`p = p.detach()`: the name now holds the alias itself, and what is
                        # written through it is written to the alias it reads after; the old
                        # object is cut loose as any rebound source is.)
                        st.holds[key] = _cut(toks, key)
        elif t is ast.AugAssign:
            target = stmt.target
            key = dotted_name(target)
            if key is None:
                return
            toks = self._tokens(walker, stmt.value, state, st, rec)
            if toks and walker.fact(target, state).kind != TENSOR:
                st.holds[key] = st.holds.get(key, frozenset()) | toks  # `history += [w.detach()]`
        elif t is ast.Expr and isinstance(stmt.value, ast.Call):
            call = stmt.value
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in _CONTAINER_WRITES and func.attr != "clear":
                key = dotted_name(func.value)
                if key is None:
                    return
                toks = frozenset()
                args = call.args[1:] if func.attr == "insert" else call.args
                for a in [*args, *(k.value for k in call.keywords)]:
                    toks |= self._tokens(walker, a, state, st, rec)
                if toks:
                    st.holds[key] = st.holds.get(key, frozenset()) | toks
            elif isinstance(func, ast.Attribute) and func.attr == "clear":
                key = dotted_name(func.value)
                if key is not None:
                    st.holds.pop(key, None)

    def _rebind(self, st: SnapState, target) -> str | None:
        if isinstance(target, ast.Starred):
            target = target.value
        key = dotted_name(target)
        if key is None:
            return None
        prefix = key + "."
        for k in [k for k in st.holds if k == key or k.startswith(prefix)]:
            del st.holds[k]
        _cut_loose(st, key)
        if st.aliases:  # (`w` is another name no more; nor of `model.weight` once `model` is rebound)
            for k in [k for k, targets in st.aliases.items() if k == key or k.startswith(prefix) or any(
                    t == key or t.startswith(prefix) for t in targets)]:
                del st.aliases[k]
        return key

    def _iter_tokens(self, it, st: SnapState) -> frozenset:
        """`for k, v in best_state.items()` / `for v in best_state.values()`."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "values"):
            key = dotted_name(it.func.value)
            if key is not None:
                return st.holds.get(key, frozenset())
        return frozenset()

    def _tokens(self, walker, node, state, st: SnapState, rec: SnapScope) -> frozenset:
        """The tokens the value of `node` holds (new ones for the aliasing expressions)."""
        t = type(node)
        if t is ast.Call or t is ast.Attribute:
            made = self._anchor(walker, node, state, rec)
            if made is not None:
                return frozenset({made})
        if t is ast.Name or t is ast.Attribute:
            key = dotted_name(node)
            if key is not None and key in st.holds:
                return st.holds[key]
            return frozenset()
        if t is ast.Subscript:
            held = self._tokens(walker, node.value, state, st, rec)
            if held and not _basic_index(node.slice):
                f = walker.fact(node.value, state)
                if (f.kind == TENSOR or "ndarray" in f.tags) and not _plain_value(walker.fact(node.slice, state)):
                    # A tensor or an array indexed by a list or a tensor (`w0[[0, 1]]`, `w0[mask]`):
                    # a copy.  (By an int, a view; a container's element is what it holds.)
                    return frozenset(x for x in held if x.kind != TENSOR_ALIAS)
            return held
        if t in (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.BoolOp, ast.IfExp):
            # What any element (a dict's values, an operand, a branch) holds.
            parts = node.elts if t in (ast.Tuple, ast.List, ast.Set) else (node.body, node.orelse) \
                if t is ast.IfExp else node.values
            out = frozenset()
            for e in parts:
                out |= self._tokens(walker, e, state, st, rec)
            return out
        if t is ast.Starred:
            return self._tokens(walker, node.value, state, st, rec)
        if t is ast.ListComp or t is ast.DictComp:
            return self._comprehension(walker, node, state, st, rec)
        if t is ast.Call:
            func = node.func
            if (isinstance(func, ast.Name) and func.id in ("dict", "list", "tuple", "OrderedDict")
                    or walker.qualname(func, state) == "copy.copy") and len(node.args) == 1:
                return self._tokens(walker, node.args[0], state, st, rec)  # (shallow copies)
            if isinstance(func, ast.Attribute):
                inner = self._tokens(walker, func.value, state, st, rec) if func.attr in (
                    "copy", "items", "values", "detach", "numpy") else frozenset()
                if func.attr == "copy":
                    return frozenset(x for x in inner if x.kind == STATE)  # ndarray.copy() copies
                return inner
        return frozenset()

    def _anchor(self, walker, node, state, rec: SnapScope) -> Token | None:
        """A new token when `node` makes an alias: a state dict of a module (or a shallow copy of
        one), or a `.detach()` / `.data` / NumPy view of a named tensor."""
        found = _state_dict_alias(node, walker, state, self)
        if found is not None:
            source, inner, via = found
            if id(node) not in rec.anchors:
                rec.anchors[id(node)] = Anchor(node, STATE, source, inner, via)
            # (`model_without_ddp.state_dict()`: of the module an update of `model` reaches.)
            return Token(id(node), state.doms[self.key].resolved(source), STATE, True)
        base = _tensor_alias(node, walker, state)
        via, array = "", None
        if base is not None:
            to = next((n for n in walk(node) if type(n) is ast.Call and type(n.func) is ast.Attribute and (
                n.func.attr == "cpu" and not n.args and not n.keywords or _to_the_cpu(n))), None)
            if to is not None:
                # (`.cpu()` or `.to("cpu")` as written, after its receiver)
                shown = walker.ctx.text(to)[len(walker.ctx.text(to.func.value)):]
                via = f" (on the CPU, `{shown}` returns the tensor itself)"
        else:
            found = _helper_argument(node, walker, state, self, TENSOR_ALIAS)
            if found is None:
                return None
            base, steps, via = found
            steps = tuple(steps.split("."))
            if tensor_key(base) is None or not _chain_alias(steps, walker.fact(base, state), state.no_grad,
                                                             _device_free(walker)):
                return None
            array = steps[-1] == "numpy"
        source = tensor_key(base)
        if source is None or source.endswith(".grad") or ".grad." in source:
            # (A view of a gradient: an optimizer's step reads it and writes the parameter; a
            # `zero_grad()` sets it to None and the next backward makes a new one.)
            return None
        f = walker.fact(base, state)
        param = (f.leaf and f.grad is Grad.YES) or "parameter" in f.tags
        if array is None:
            array = _array_view(node)
        if id(node) not in rec.anchors:
            shown = source.replace(".[", "[")  # (`model[0].weight`, keyed `model.[0].weight`)
            rec.anchors[id(node)] = Anchor(node, TENSOR_ALIAS, shown, None, via.replace("{}", shown), array)
        return Token(id(node), _parameter_key(state.doms[self.key].resolved(source), f), TENSOR_ALIAS, param)

    def _comprehension(self, walker, node, state, st: SnapState, rec: SnapScope) -> frozenset:
        """The tokens a comprehension of views holds: of a state dict, `{k: v.cpu() for k, v in
        model.state_dict().items()}` (on the CPU, `.cpu()` returns the tensor itself), or of a
        module's parameters, `[p.detach() for p in model.parameters()]`: one generator over
        `.items()` / `.values()` of a state dict, or `.parameters()` / `.named_parameters()` of a
        module, whose element is its variable, or (of parameters: only) a view of it."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            return frozenset()
        gen = node.generators[0]
        it, target = gen.iter, gen.target
        if type(it) is ast.Name:
            # A list of one module's parameters kept under a name (`params = [p for p in
            # model.parameters() if p.dim() > 1]`, then `old = [p.data for p in params]`).
            if type(node) is not ast.ListComp or type(target) is not ast.Name:
                return frozenset()
            m, var = None, target.id
        elif type(it) is not ast.Call or type(it.func) is not ast.Attribute or it.args or it.keywords:
            return frozenset()
        else:
            m = it.func.attr
            if m in ("items", "named_parameters"):
                if not (type(target) is ast.Tuple and len(target.elts) == 2 and type(target.elts[1]) is ast.Name):
                    return frozenset()
                var = target.elts[1].id
            elif m in ("values", "parameters") and type(target) is ast.Name:
                var = target.id
            else:
                return frozenset()
        value = node.value if type(node) is ast.DictComp else node.elt
        if type(value) is ast.Name:
            steps: tuple = ()
            if value.id != var:
                return frozenset()
        else:
            got = _returned_snapshot(value)
            if got is None or got[0] != TENSOR_ALIAS or got[1] != var:
                return frozenset()
            steps = tuple(got[2].split("."))
        array = bool(steps) and steps[-1] == "numpy"
        if m in ("items", "values"):
            recv = it.func.value
            if "cpu" in steps:
                # `.cpu()` returns the tensor itself only on the CPU: of the module's own state
                # dict.  (`.numpy()` runs only on the CPU, and shares the tensor's memory there.)
                if not (type(recv) is ast.Call and type(recv.func) is ast.Attribute and recv.func.attr == "state_dict"
                        and walker.fact(recv.func.value, state).device is Device.CPU and _device_free(walker)):
                    return frozenset()
            if type(recv) is ast.Name or type(recv) is ast.Attribute:
                key = dotted_name(recv)  # a state dict kept under a name: its tokens
                held = st.holds.get(key, frozenset()) if key is not None else frozenset()
                return frozenset(x for x in held if x.kind == STATE)
            found = _state_dict_alias(recv, walker, state, self)
            if found is None:
                return frozenset()
            source, inner, via = found
            if id(node) not in rec.anchors:
                why = ""
                if "cpu" in steps:
                    to = next((n for n in walk(value) if type(n) is ast.Call and _to_the_cpu(n)), None)
                    # (`.to("cpu")` as written, after its receiver)
                    shown = ".cpu()" if to is None else \
                        walker.ctx.text(to)[len(walker.ctx.text(to.func.value)):]
                    why = f" (on the CPU, `{shown}` returns the tensor itself)"
                rec.anchors[id(node)] = Anchor(node, STATE, source, inner, via or why, array, value)
            return frozenset({Token(id(node), source, STATE, True)})
        if not steps:
            return frozenset()  # (the parameters themselves, `list(model.parameters())`)
        f = walker.fact(it, state)
        el = f.element
        if m is None:
            # (A list whose elements are parameters of one module: `param_of:` tags.)
            owners = [tag[9:] for tag in el.tags if tag.startswith("param_of:")] \
                if f.kind == SEQ and el is not None and el.kind == TENSOR else ()
            owner, shown = (owners[0], it.id) if len(owners) == 1 else (None, "")
        else:
            owner = dotted_name(it.func.value)
            shown = f"{owner}.{m}()"
        if owner is None or el is None or not _chain_alias(steps, el, state.no_grad, _device_free(walker)):
            return frozenset()
        param = (el.leaf and el.grad is Grad.YES) or "parameter" in el.tags
        if id(node) not in rec.anchors:
            rec.anchors[id(node)] = Anchor(node, TENSOR_ALIAS, shown, None, "", array, value)
        return frozenset({Token(id(node), owner + ".[parameters]", TENSOR_ALIAS, param)})


def steps_optimizer(walker, func, memo: dict) -> bool:
    """Whether function `func` of the module `walker` walks steps an optimizer (itself, or
    through the module's functions and methods it calls, two levels down); `memo`: {id(def):
    answer, ("calls", id(def)): _stepping_calls} of that walker.  A search level by level from
    `func`, whose answer is `func`'s whatever was asked before (an answer kept for a function
    met two levels down would say nothing of what it calls)."""
    key = id(func)
    found = memo.get(key)
    if found is not None:
        return found
    level, seen, result = [func], {key}, False
    for depth in range(3):
        below = []
        for f in level:
            steps, called = _stepping_calls(walker, f, memo)
            if steps:
                result = True
                break
            if depth < 2:
                for target in called:
                    if id(target) not in seen:
                        seen.add(id(target))
                        below.append(target)
        if result or not below:
            break
        level = below
    memo[key] = result
    return result


def _stepping_calls(walker, func, memo: dict) -> tuple:
    """(whether the text of `func` steps an optimizer, the functions and methods of the module
    it calls), once a function (`memo`)."""
    key = ("calls", id(func))
    found = memo.get(key)
    if found is None:
        text = walker.source_of(func)
        steps = any(is_optimizer_name(m.group(1)) or "scaler" in m.group(1).lower()
                    for m in _STEP_TEXT.finditer(text))
        called = []
        if not steps:
            owner = None
            for m in _CALLED.finditer(text):
                name = m.group(2)
                target = None
                if m.group(1):
                    if owner is None:
                        owner = next((info for info in walker.classes.values()
                                      if any(f is func for f in info.methods.values())), False)
                    if owner:
                        target, _ = owner.method(name)
                else:
                    target = walker.functions.get(name)
                if target is not None and target is not func:
                    called.append(target)
        found = memo[key] = (steps, called)
    return found


def _update_shown(ctx, node) -> str:
    """The update `node` for a message: the rule context's `shortened` form (a long call by its
    callee and first argument, `train_step(model, ...)`); `short`'s in a summary walk's context,
    which has no other."""
    shortened = getattr(ctx, "shortened", None)
    return shortened(node, 40) if shortened is not None else ctx.short(node, 40)


def _always_sets(method, attr: str) -> bool:
    """Whether `method` (a plain method) sets attribute `attr` of its instance on every call: by
    an assignment that is a statement of its body itself, before any statement that may return,
    raise or yield."""
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return False
    me = positional[0].arg
    for stmt in method.body:
        if type(stmt) is ast.Assign and any(
                type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == me and t.attr == attr
                for t in stmt.targets):
            return True
        if any(type(n) in (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom) for n in own_nodes([stmt])):
            return False
    return False


def _attributes_kept(tree) -> dict:
    """{id(assignment): {name: {"self.attr", ...}}} for the assignments of each method that binds
    attributes of its first parameter to plain names (`self.model = net`): the attributes that
    hold what those names do, in that method."""
    out: dict = {}
    for func in walk(tree):
        if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef) or not func.args.args:
            continue
        me = func.args.args[0].arg
        kept: dict = {}
        assigns = [n for n in walk(func) if type(n) is ast.Assign]
        for n in assigns:
            if type(n.value) is ast.Name:
                for t in n.targets:
                    if type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == me:
                        kept.setdefault(n.value.id, set()).add(f"{me}.{t.attr}")
        if kept:
            for n in assigns:
                out[id(n)] = kept
    return out


def state_loads(func) -> tuple:
    """((parameter, attribute path, the parameter it loads or ""), ...) for the one
    `p.load_state_dict(s)` (`p.head.load_state_dict(s)`: path ".head") of function `func`'s
    body (not of the functions it defines) on a parameter `p` it never rebinds."""
    a = func.args
    params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    found = []
    rebound = set()
    for n in own_nodes(func.body):
        t = type(n)
        if t is ast.Name and type(n.ctx) is not ast.Load:
            rebound.add(n.id)
        elif t is ast.Call and type(n.func) is ast.Attribute and n.func.attr == "load_state_dict":
            owner = dotted_name(n.func.value)
            root, _, rest = (owner or "").partition(".")
            if root in params:
                given = n.args[0] if n.args else next((k.value for k in n.keywords if k.arg == "state_dict"), None)
                found.append((root, "." + rest if rest else "",
                              given.id if type(given) is ast.Name and given.id in params else ""))
    # (A module loaded twice may be put back as it was, `backup = copy.deepcopy(m.state_dict())`
    # before and `m.load_state_dict(backup)` after: which values it ends with is not followed.)
    loads = Counter(f[0] for f in found)
    return tuple(sorted({f for f in found if f[0] not in rebound and f[2] not in rebound and loads[f[0]] == 1}))


def stepped_only(walker, func) -> tuple:
    """(the parameters of function `func` whose optimizers it steps, where every `.step()` of its
    text is of one of them (_stepped_parameters) and its text changes nothing in place otherwise
    (no in-place method but `zero_grad()` and `requires_grad_()`, no `load_state_dict(`, no
    `.data`), else empty; whether its text names `requires_grad`, which may thaw a module)."""
    stepped = _stepped_parameters(walker, func)
    if not stepped:
        return stepped, False
    text = walker.source_of(func)
    if {m.group(1) for m in _STEP_TEXT.finditer(text)} != stepped \
            or _CHANGES_IN_PLACE.search(text.replace("zero_grad(", "").replace("requires_grad_(", "")):
        return frozenset(), False
    return stepped, "requires_grad" in text


def _stepped_parameters(walker, func) -> frozenset:
    """The parameters of function `func` whose `.step()` it calls itself (`o.step()` in `def
    train_one_epoch(m, o)`), that it never rebinds."""
    a = func.args
    params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    stepped = {m.group(1) for m in _STEP_TEXT.finditer(walker.source_of(func))} & params
    if stepped:
        for n in walk(func):
            t = type(n)
            if t is ast.Name and type(n.ctx) is not ast.Load:
                stepped.discard(n.id)
            elif t is ast.Global or t is ast.Nonlocal:
                stepped.difference_update(n.names)
    return frozenset(stepped)


def _bound_names(func) -> set:
    """The names function `func` binds: its parameters and every name it assigns (its nested
    functions' too, which can only leave out more)."""
    names = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    names.update(a.arg for a in (func.args.vararg, func.args.kwarg) if a is not None)
    names.update(n.id for n in walk(func) if type(n) is ast.Name and type(n.ctx) is not ast.Load)
    return names


def _writes_in_place(source: str) -> bool:
    """Whether the text of a class may write into a tensor in place (`w.mul_(mask)`, `.copy_(`):
    views it keeps of a module's parameters may be live references it means to write through
    (a pruner, a weight clipper), not snapshots."""
    return re.search(r"\b(?!requires_grad_\()[a-z]\w*_\(", source) is not None


def _argument(method, call: ast.Call, param: str):
    """The argument `call` (of a method on an instance) passes parameter `param` of `method` (a
    def, or a stub with its parameters: astutil.def_stub), or None."""
    return next((e for p, e in bind_arguments(method, call, True)[0] if p == param), None)


def _parameter_key(source: str, f) -> str:
    """What a token of a view of tensor `source` follows: for a name that holds a parameter of a
    module (`p` of `for p in model.parameters()`), the module's parameters (`model.[p]`): an
    update of the module reaches it, and the next iteration's `p` does not cut it loose."""
    if "." not in source:
        owners = [tag[9:] for tag in f.tags if tag.startswith("param_of:")]
        if len(owners) == 1:
            return f"{owners[0]}.[{source}]"
    return source


def _alias_of(walker, st: SnapState, value, state) -> frozenset | None:
    """The tensors or modules a name bound to `value` is another name of: of `w = model.weight`
    (a dotted name that holds a tensor or a module), {"model.weight"}; of `v = w`, what `w` is one
    of; of `m = model.module if ... else model`, {"model"}."""
    if type(value) is ast.IfExp:
        # `model_without_ddp = model.module if hasattr(model, "module") else model` (torchvision's
        # reference scripts): a module or one it holds, both the outer module's, which an update
        # of either reaches.
        a, b = dotted_name(value.body), dotted_name(value.orelse)
        if a is None or b is None:
            return None
        outer, inner = (a, b) if len(a) <= len(b) else (b, a)
        node = value.body if outer == a else value.orelse
        if not inner.startswith(outer + ".") or walker.fact(node, state).kind != MODULE:
            return None
        return st.aliases.get(outer, frozenset({outer}))
    if type(value) is not ast.Name and type(value) is not ast.Attribute:
        return None
    key = dotted_name(value)
    if key is None or walker.fact(value, state).kind not in (TENSOR, MODULE):
        return None
    return st.aliases.get(key, frozenset({key}))


def _cut_loose(st: SnapState, key: str) -> None:
    """`key` was rebound: tokens of the old object keep what they hold, and no later update of
    `key` reaches them."""
    for k, toks in list(st.holds.items()):
        cut = _cut(toks, key)
        if cut is not toks:
            st.holds[k] = cut


def _cut(toks: frozenset, key: str) -> frozenset:
    """`toks` with those of `key` (or of an attribute of it) cut loose from it (`toks` itself
    when none is)."""
    prefix = key + "."
    if not any(t.source is not None and (t.source == key or t.source.startswith(prefix)) for t in toks):
        return toks
    return frozenset(t._replace(source=None)
                     if t.source is not None and (t.source == key or t.source.startswith(prefix)) else t
                     for t in toks)


def _target_reads(targets) -> list:
    """What an assignment target reads: the index of `d[i] = v`, the object of `o.a = v` (but
    not the container written into)."""
    out = []
    for t in targets:
        for el in target_elements(t):
            if isinstance(el, ast.Subscript):
                out.append(el.slice)
    return out


def _is_items(it) -> bool:
    return isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"


def _param_roots(expr, once: dict | None = None, depth: int = 0) -> frozenset | None:
    """The modules (and tensors) whose parameters an optimizer's `params` argument names.
    `once`: {name: the value the file binds it to, where it binds it once} (`params =
    list(student.parameters())`, then `SGD(params)`)."""
    if type(expr) is ast.Name and once and once.get(expr.id) is not None and depth < 4:
        return _param_roots(once[expr.id], once, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in ("parameters", "named_parameters"):
            k = dotted_name(func.value)
            if k is None:
                # `net[2].parameters()`: of that layer (keyed as a view of it is, `net.[2]`);
                # `net[2:].parameters()`: of layers the walk does not follow by name.
                k = tensor_key(func.value) or _item_key(func.value) or _sliced_key(func.value)
            return frozenset({k}) if k is not None else None
        out = frozenset()
        parts = [*expr.args, *(k.value for k in expr.keywords)]
        if isinstance(func, ast.Attribute) and not parts:
            return None
        for a in parts:
            if isinstance(a, ast.Lambda):
                continue
            r = _param_roots(a)
            if r is None:
                return None
            out |= r
        return out or None
    if isinstance(expr, ast.BinOp):
        a, b = _param_roots(expr.left), _param_roots(expr.right)
        return None if a is None or b is None else a | b
    if isinstance(expr, (ast.List, ast.Tuple)):
        out = frozenset()
        for e in expr.elts:
            if isinstance(e, (ast.Name, ast.Attribute)):
                k = dotted_name(e)
                if k is None:
                    return None
                out |= {k}
                continue
            r = _param_roots(e)
            if r is None:
                return None
            out |= r
        return out
    if isinstance(expr, ast.Dict):
        for k, v in zip(expr.keys, expr.values):
            if isinstance(k, ast.Constant) and k.value == "params":
                return _param_roots(v) if not isinstance(v, (ast.Name, ast.Attribute)) else frozenset(
                    {dotted_name(v)} - {None}) or None
        return None
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp)) and expr.generators:
        return _param_roots(expr.generators[0].iter)
    return None


def _is_module(walker, expr, state) -> bool:
    f = walker.fact(expr, state)
    if f.kind == MODULE:
        return True
    if f.kind != UNKNOWN:
        return False
    # `self.model` of a class that is not an nn.Module, a parameter `net`: evidence in the text
    # of the class (for `self.*`) or of the scope.
    key = dotted_name(expr)
    if key is None or walker.lines is None:
        return False
    frame = walker.frame
    node = frame.scope.node
    if key.startswith("self.") and frame.scope.cls is not None:
        node = frame.scope.cls.node
    text = walker.source_of(node) if hasattr(node, "end_lineno") else walker.lines.text
    return any(f"{key}.{m}(" in text for m in _MODULE_EVIDENCE) or _called(text, key)


def _called(text: str, key: str) -> bool:
    """Whether `text` calls `key` itself (`model(x)`, not `build_model(x)` or `self.model(x)`
    for `model`): a callable with a `state_dict()` is a module (optimizers, schedulers and
    scalers are not called; `nn.Module.__call__` runs forward)."""
    needle = key + "("
    at = text.find(needle)
    while at != -1:
        before = text[at - 1] if at else " "
        if not (before.isalnum() or before == "_" or before == "."):
            return True
        at = text.find(needle, at + 1)
    return False


def _state_dict_alias(node, walker, state, dom=None):
    """(the module's dotted name, the `.state_dict()` call, how) when `node` is `m.state_dict()`,
    a shallow copy of one (`m.state_dict().copy()`, `dict(m.state_dict())`, `OrderedDict(...)`,
    `copy.copy(...)`),
    or a call of a function that returns one of a module it is handed (`snapshot(m)`;
    snapshot_return: "how" then says so, else "")."""
    inner = None
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args and not node.keywords:
            inner = func.value
        elif len(node.args) == 1 and not node.keywords and _is_dict_constructor(func, walker, state):
            inner = node.args[0]
        else:
            inner = node
    via = ""
    if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "state_dict" and not inner.args):
        if any(k.arg != "keep_vars" or type(k.value) is not ast.Constant or type(k.value.value) is not bool
               for k in inner.keywords):
            return None  # (`keep_vars=True` holds the parameters themselves: as much an alias)
        recv = inner.func.value
    else:
        found = _helper_argument(inner, walker, state, dom, STATE) if dom is not None else None
        if found is None:
            return None
        recv, _, via = found
    key = dotted_name(recv)
    if key is None or not _is_module(walker, recv, state):
        return None
    cls = walker.fact(recv, state).node
    info = walker.classes.get(id(cls)) if cls is not None else None
    if info is not None and info.method("state_dict")[0] is not None:
        return None  # the class of the file defines its own state_dict (maybe a deep copy)
    return key, inner, via.replace("{}", key)


def _helper_argument(call, walker, state, dom, kind: str):
    """(the argument, steps, how) when `call` calls a function of the file or of another module
    of the project that returns, without copying it, the state dict (`kind` STATE) or a view
    (TENSOR_ALIAS) of what that argument holds (snapshot_return); how: ` (snapshot() returns
    {}.state_dict(), utils.py:2)`, `{}` for the argument."""
    if type(call) is not ast.Call or not (call.args or call.keywords):
        return None
    func = call.func
    t = type(func)
    name = func.id if t is ast.Name else func.attr if t is ast.Attribute else None
    if name is None or name not in dom.helper_names(walker):
        return None
    if t is ast.Attribute and walker.qualname(func, state) is None:
        return None  # a method of a value
    f = walker.fact(func, state)
    if f.kind != FUNCTION:
        return None
    entity = f.node
    if hasattr(entity, "snapshot_return"):  # of another module of the project (a ProjectEntity)
        said, callee, where = entity.snapshot_return(), entity.node, entity.where
    elif type(entity) is ast.FunctionDef:
        memo = dom._helper_returns
        if id(entity) not in memo:
            memo[id(entity)] = snapshot_return(entity) if _RETURNS_SNAPSHOT.search(walker.source_of(entity)) \
                else None
        said, callee, where = memo[id(entity)], entity, f"line {entity.lineno}"
    else:
        return None
    if not said or said[0] != kind:
        return None
    _, param, steps = said
    arg = next((e for p, e in bind_arguments(callee, call)[0] if p == param), None)
    if arg is None:
        return None
    shown = "".join(".data" if s == "data" else f".{s}()" for s in steps.split(".")) if steps else ".state_dict()"
    return arg, steps, f" ({name}() returns {{}}{shown}, {where})"


def _is_dict_constructor(func, walker, state) -> bool:
    """`dict` (the builtin), `collections.OrderedDict` or `copy.copy`: a shallow copy of a
    mapping."""
    if isinstance(func, ast.Name) and func.id == "dict" and state.lookup("dict") is None:
        return True
    return walker.qualname(func, state) in ("collections.OrderedDict", "typing.OrderedDict", "copy.copy")


def _host_memory(expr, walker, state):
    """What the NumPy array of `expr` (`expr.numpy()`, `np.asarray(expr)`) shares its memory
    with: a view's tensor (_tensor_alias), or `expr` itself where it is a named tensor that
    converts as it is (no grad, not on an accelerator); else None."""
    base = _tensor_alias(expr, walker, state)
    if base is not None:
        return base
    f = walker.fact(expr, state)
    if f.kind == TENSOR and tensor_key(expr) and (f.grad is Grad.NO or state.no_grad) and f.device is not Device.ACCEL:
        return expr
    return None


def _tensor_alias(node, walker, state):
    """The named tensor whose storage `node` shares without copying, or None: `t.detach()`,
    `t.data`, `t.detach().numpy()`, `t.numpy()` (allowed only where grad is off or not
    required: it shares memory), `t.detach().cpu()` / `.cpu().numpy()` when `t` is on the CPU."""
    if isinstance(node, ast.Attribute):
        if node.attr == "data" and walker.fact(node.value, state).kind == TENSOR and tensor_key(node.value):
            return node.value
        if node.attr in ("T", "mT"):
            return _tensor_alias(node.value, walker, state)  # (a transposed view)
        return None
    if type(node) is ast.Subscript:
        # Basic indexing (`w.detach()[0]`, `[:, :2]`) gives a view; a tensor or list index copies.
        return _tensor_alias(node.value, walker, state) if _basic_index(node.slice) else None
    if not isinstance(node, ast.Call):
        return None
    if type(node.func) is not ast.Attribute or walker.qualname(node.func, state) == "numpy.asarray":
        if len(node.args) == 1 and not node.keywords and walker.qualname(node.func, state) == "numpy.asarray":
            # `np.asarray(w.detach())`: the tensor's `.numpy()`, its memory (a tensor only).
            return _host_memory(node.args[0], walker, state)
        return None
    m = node.func.attr
    inner = node.func.value
    if m == "detach" and not node.args and not node.keywords:
        return inner if walker.fact(inner, state).kind == TENSOR and tensor_key(inner) else None
    if m == "numpy" and not node.args and not any(k.arg == "force" for k in node.keywords):
        return _host_memory(inner, walker, state)
    if (m == "cpu" and not node.args and not node.keywords) or _to_the_cpu(node):
        if not _device_free(walker):
            return None  # (where a device is named, what is on the CPU is not certain)
        base = _tensor_alias(inner, walker, state)
        if base is not None and walker.fact(base, state).device is Device.CPU:
            return base
        if base is None and tensor_key(inner):
            # (`w.cpu()` of a named tensor on the CPU: the tensor itself, `model.weight.cpu()`.)
            f = walker.fact(inner, state)
            if f.kind == TENSOR and f.device is Device.CPU:
                return inner
    if m in _VIEW_METHODS:
        # A view of a view (`w.detach().flatten()`, `.view(-1)`, `.t()`): the same storage.
        # (`flatten` and `reshape` copy only a tensor whose strides forbid a view; a module's
        # parameters are contiguous.)
        return _tensor_alias(inner, walker, state)
    return None


def tensor_key(node) -> str | None:
    """The name a view's tensor is followed by: its dotted name (`model.fc.weight`), or a chain of
    attributes with integer indices of containers on the way, ending in an attribute
    (`model[0].weight`, a layer of a `Sequential`, keyed `model.[0].weight`: an update of `model`
    reaches it, a rebinding of `model` cuts it loose); else None."""
    name = dotted_name(node)
    if name is not None or type(node) is not ast.Attribute:
        return name
    parts = []
    while True:
        t = type(node)
        if t is ast.Attribute:
            parts.append(node.attr)
        elif t is ast.Subscript and parts and _int_index(node.slice) is not None:
            parts.append(f"[{_int_index(node.slice)}]")
        elif t is ast.Name:
            parts.append(node.id)
            break
        else:
            return None
        node = node.value
    parts.reverse()
    return ".".join(parts)


def _int_index(index) -> int | None:
    """The integer of an index written as one (`0`, `-1`), else None."""
    if type(index) is ast.UnaryOp and type(index.op) is ast.USub and type(index.operand) is ast.Constant \
            and type(index.operand.value) is int:
        return -index.operand.value
    return index.value if type(index) is ast.Constant and type(index.value) is int else None


def _sliced_key(node) -> str | None:
    """`net.[2:]` of `net[2:]` (a slice of a container whose items tensor_key keys by index: what
    it holds is none of theirs by name), else None."""
    if type(node) is ast.Subscript and type(node.slice) is ast.Slice:
        base = dotted_name(node.value)
        if base is not None:
            return base + ".[:]"
    return None


def _item_key(target) -> str | None:
    """The key of a container's item a statement replaces (`net[0] = nn.Linear(3, 3)`:
    `net.[0]`), as tensor_key keys what is reached through it; else None."""
    if type(target) is not ast.Subscript or _int_index(target.slice) is None:
        return None
    base = dotted_name(target.value)
    return f"{base}.[{_int_index(target.slice)}]" if base is not None else None


def _to_the_cpu(call) -> bool:
    """Whether `call` is `.to("cpu")`, which as `.cpu()` returns the tensor itself when it is on
    the CPU: the device "cpu" or `torch.device("cpu")`, by position or `device=`, with nothing
    else but `non_blocking` and `copy=False`.  (`.to("cpu", copy=True)` copies, a dtype may
    convert, and so does `.to("cpu:0")`, measured on torch 2.13.)"""
    func = call.func
    if type(func) is not ast.Attribute or func.attr != "to":
        return False
    device = None
    for k in call.keywords:
        if k.arg == "device" and not call.args:
            device = k.value
        elif not (k.arg == "non_blocking" or (k.arg == "copy" and type(k.value) is ast.Constant
                                               and k.value.value is False)):
            return False
    if call.args:
        if len(call.args) != 1:
            return False
        device = call.args[0]
    if type(device) is ast.Call and not device.keywords and len(device.args) == 1 and dotted_name(device.func) in (
            "torch.device", "device"):
        device = device.args[0]
    return type(device) is ast.Constant and device.value == "cpu"


# Tensor methods that return a view of the tensor (_tensor_alias); of a NumPy array too, those
# it has.
_VIEW_METHODS = frozenset({"view", "view_as", "flatten", "reshape", "t", "transpose", "permute", "squeeze",
                           "unsqueeze", "expand", "expand_as", "narrow", "unflatten", "movedim"})


def _frozen(walker, key: str | None, state) -> bool:
    """Whether the module or tensor a token's dotted name holds is frozen, for certain (nothing
    of it requires grad: `model.backbone.requires_grad_(False)`)."""
    if not key:
        return False
    if ".[" in key and any(_index_part(part) for part in key.split(".")) and (
            walker.lines is None or _may_freeze(walker.lines.text)):
        # (The walk follows freezes of names, not of a container's items: `model[0].requires_grad_(False)`
        # may have frozen `model[0].weight` where the file freezes anything.)
        return True
    node = None
    for part in key.split("."):
        if node is not None and _index_part(part):  # (`model.[0]`: `model[0]`)
            node = ast.Subscript(value=node, slice=ast.Constant(value=int(part[1:-1])), ctx=ast.Load())
            continue
        if not part.isidentifier():
            return False
        node = ast.Name(id=part, ctx=ast.Load()) if node is None else ast.Attribute(value=node, attr=part,
                                                                                   ctx=ast.Load())
    f = walker.fact(node, state)
    return f.kind in (MODULE, TENSOR) and f.grad is Grad.NO


def _index_part(part: str) -> bool:
    """Whether a part of a tensor_key is an item's index (`[0]`, `[-1]`)."""
    return part[:1] == "[" and part[1:-1].lstrip("-").isdigit()


@kept_for_the_last_text
def _may_freeze(text: str) -> bool:
    return "requires_grad" in text or "freeze" in text or "detach_" in text


def _plain_value(f) -> bool:
    """Whether a fact is of a value that holds no tensor memory: a number, a string (not a NumPy
    array, which may share a tensor's)."""
    return f.kind == OTHER and "ndarray" not in f.tags


def _basic_index(index) -> bool:
    """Whether a subscript's index is basic indexing (integers, slices, `...`, `None` and tuples
    of them, written as literals or names of ints: `[0]`, `[:, :2]`, `[i]`), which gives a view.
    A name may hold a tensor or a list (advanced indexing copies): only literals and slices."""
    t = type(index)
    if t is ast.Tuple:
        return all(_basic_index(e) for e in index.elts)
    if t is ast.Slice:
        return all(part is None or _basic_index(part) for part in (index.lower, index.upper, index.step))
    if t is ast.UnaryOp and type(index.op) is ast.USub:
        index = index.operand
        t = type(index)
    return t is ast.Constant and (index.value is None or index.value is Ellipsis or type(index.value) is int)


def _array_view(node) -> bool:
    """Whether a view `_tensor_alias` finds is a NumPy array (a `.numpy()` or `np.asarray` on
    the way down to the tensor), whose copy is `.copy()`."""
    while True:
        t = type(node)
        if t is ast.Call:
            func = node.func
            if type(func) is not ast.Attribute:
                return type(func) is ast.Name and func.id == "asarray"
            if func.attr in ("numpy", "asarray"):
                return True
            node = func.value
        elif t is ast.Subscript or t is ast.Attribute:
            node = node.value
        else:
            return False


def domains_for(keys, options) -> list:
    """The TNS5 domains the enabled rules ask, by key."""
    out: list = []
    if "snapshots" in keys:
        out.append(SnapshotDomain(options))
    if "accumulators" in keys:
        from .accumulators import AccumulatorDomain

        out.append(AccumulatorDomain(options))
    return out
