"""Which tensors autograd saves for backward, and which expressions share a tensor's storage.

Used by the TNS4xx rules.  An in-place write to a tensor that autograd saved for a backward
still to come either raises at `backward()` (the version counter caught it) or, when the
write went around the version counter (`.data`, a NumPy array), silently gives a wrong
gradient.  Only operations whose saving behaviour was measured are listed (torch 2.13, CPU:
write through `.detach()` after the op, then call `backward()`); every other operation is
assumed to save nothing, so that an unknown operation never produces a finding.  Also which
methods write in place, and which parameters a function writes into whenever it is called
(`inplace_parameters`: the storage domain takes such a call for a write through what it passes).
"""

from __future__ import annotations

import ast

from .facts import FUNCTION, MAPPING, MODULE, NAMED_PARAMS, OTHER, PARAMS, SEQ, TENSOR, UNKNOWN, Grad
from .torchapi import RESULT_SAVING_TAG
from .astutil import bind_arguments, decorator_names, dotted_name, parameter_names, statements, target_elements, \
    yields

# Unary operations that save their input when autograd records them (a ** 2, a.log(), ...).
SAVES_INPUT = frozenset(
    "pow square log log2 log10 log1p sin cos sinh cosh abs clamp clip clamp_min clamp_max erf atan "
    "norm prod var std cumprod gelu silu mish hardswish hardtanh relu6 elu selu celu leaky_relu "
    "softplus softsign logsigmoid normalize layer_norm".split()
)
# Unary operations that save their result (a.exp(), a.sigmoid(), ...).
SAVES_RESULT = frozenset(
    "exp exp2 expm1 tan tanh sigmoid sqrt rsqrt reciprocal relu softmax log_softmax norm prod std "
    "cumprod".split()
)
# Full reductions save input and result; with a `dim` they save only the indices.
SAVES_BOTH_WITHOUT_ARGS = frozenset({"max", "min"})
# Products: each operand is saved when the *other* one requires grad.
CROSS = frozenset("mul multiply matmul mm bmm mv dot".split())
# Division: the divisor is saved when either operand requires grad, the dividend only when
# the divisor requires grad.
DIV = frozenset("div divide true_divide".split())
# Both operands saved whenever the op is recorded (the losses: the input and the target, by
# position or as `input=` / `target=`, where no other keyword but `reduction` changes how they
# compute: `F.mse_loss(x, t, weight=w)` and `F.smooth_l1_loss(x, t, beta=0.0)` save neither; not
# `cross_entropy`, `kl_div` and `l1_loss`, which save only the target or what they compute).
SAVES_BOTH_OPERANDS = frozenset({"mse_loss", "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss",
                                 "soft_margin_loss", "nll_loss"})
# Of those, the losses whose input is saved for the version check only: the gradient does not
# read its values (a write through `.detach()` raises; one through `.data` or NumPy changes
# nothing of it).
CHECKS_INPUT_ONLY = frozenset({"nll_loss"})

_FUNCTION_PREFIXES = ("torch.nn.functional.", "torch.special.", "torch.")

# Methods whose result is a view of the receiver: same storage, same version counter.
VIEW_METHODS = frozenset(
    "view view_as t transpose permute unsqueeze squeeze expand expand_as narrow select diagonal "
    "unflatten movedim moveaxis swapaxes swapdims as_strided unfold".split()
)
# Attributes that are views of the tensor.
VIEW_ATTRS = frozenset("T mT H mH real imag".split())


def _yes(fact) -> bool:
    """May require grad: a tensor that does, or a value of unknown origin (a parameter of the
    function).  Saving alone is never a finding; the write and the backward must follow."""
    return fact.kind in (TENSOR, UNKNOWN) and fact.grad is not Grad.NO


def _known_yes(fact) -> bool:
    """Known to require grad.  Products save an operand only when the *other* one requires
    grad, and `x @ w` with `x` of unknown origin is usually data times a parameter (which
    saves only `x`): there the evidence must be positive."""
    return fact.kind == TENSOR and fact.grad is Grad.YES


def _tensor(fact) -> bool:
    return fact.kind in (TENSOR, UNKNOWN)


def is_basic_index(index: ast.expr, ctx) -> bool:
    """Whether `t[index]` is a view of `t` (basic indexing), as far as we can tell.

    Tensors, lists and arrays as indices copy (advanced indexing); unknown names are assumed
    to be integers."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    for p in parts:
        if isinstance(p, ast.Slice):
            continue
        if isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis or type(p.value) is int):
            continue
        if isinstance(p, (ast.Starred, ast.List, ast.ListComp, ast.Compare)):
            return False
        f = ctx.fact(p)
        if f.kind in (TENSOR, SEQ) or (f.kind == OTHER and "ndarray" in f.tags):
            return False
    return True


_CONTAINERS = frozenset((SEQ, PARAMS, NAMED_PARAMS, MAPPING))


def strip_views(expr: ast.expr, ctx) -> ast.expr:
    """The expression `expr` is a view of: `w` for `w[0]`, `w.T`, `w.view(-1)[1:3]` (not `params`
    for `params[0]`, an element of a list of tensors: itself)."""
    while True:
        if isinstance(expr, ast.Subscript) and is_basic_index(expr.slice, ctx) \
                and ctx.fact(expr.value).kind not in _CONTAINERS:
            expr = expr.value
        elif isinstance(expr, ast.Attribute) and expr.attr in VIEW_ATTRS:
            expr = expr.value
        elif (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in VIEW_METHODS
            and ctx.fact(expr.func.value).kind == TENSOR
        ):
            expr = expr.func.value
        else:
            return expr


def _same_computation(name: str, keyword: ast.keyword) -> bool:
    """Whether a loss's keyword leaves what it saves as it is: Huber's `delta`, a positive
    `beta` of smooth L1 (`beta=0.0` makes it `l1_loss`, which saves neither)."""
    if name == "huber_loss":
        return keyword.arg == "delta"
    v = keyword.value
    return name == "smooth_l1_loss" and keyword.arg == "beta" and type(v) is ast.Constant \
        and type(v.value) in (int, float) and v.value > 0


def _operation(node: ast.Call, ctx):
    """(op name, [operand expressions]) of a tensor method or torch function call, else None."""
    func = node.func
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if isinstance(func, ast.Attribute) and _tensor(ctx.fact(func.value)):
        return func.attr, [func.value, *node.args]
    q = ctx.qualname(func)
    if q is None:
        return None
    for prefix in _FUNCTION_PREFIXES:
        if q.startswith(prefix) and "." not in q[len(prefix):]:
            name = q[len(prefix):]
            # (A loss may be given its input and target by keyword only.)
            return (name, list(node.args)) if node.args or name in SAVES_BOTH_OPERANDS else None
    return None


def saved_tensors(node: ast.AST, ctx) -> list[tuple[ast.expr, str]]:
    """What autograd saves when it records `node`: (operand, "input") pairs and (node, "result").

    Empty when grad mode is (or may be) off, or when no input is known to require grad."""
    if ctx.no_grad:
        return []
    out: list[tuple[ast.expr, str]] = []
    if isinstance(node, ast.BinOp):
        left, right = node.left, node.right
        fl, fr = ctx.fact(left), ctx.fact(right)
        op = type(node.op)
        if op is ast.Pow:
            if _tensor(fl) and _tensor(fr):
                if _yes(fl) or _yes(fr):
                    out += [(left, "input"), (right, "input"), (node, "result")]
            elif _yes(fl) and fr.kind == OTHER:
                out.append((left, "input"))
            elif _yes(fr) and fl.kind == OTHER:
                out += [(right, "input"), (node, "result")]
        elif op in (ast.Mult, ast.MatMult):
            out += _cross(left, fl, right, fr)
        elif op is ast.Div:
            out += _div(left, fl, right, fr)
        return out
    if not isinstance(node, ast.Call):
        return out
    found = _operation(node, ctx)
    if found is None:
        return _module_result(node, ctx) or _helper_result(node, ctx)
    name, operands = found
    if name in SAVES_BOTH_OPERANDS:
        if any(k.arg not in ("reduction", "input", "target") and not _same_computation(name, k) for k in node.keywords):
            return out
        given = {k.arg: k.value for k in node.keywords}
        operands = operands[:2] + [given[k] for k in ("input", "target")[len(operands):] if k in given]
        if len(operands) < 2:
            return out
        facts = [ctx.fact(o) for o in operands]
        if any(_yes(f) for f in facts[:2]):
            return [(o, "checked" if i == 0 and name in CHECKS_INPUT_ONLY else "input")
                    for i, (o, f) in enumerate(zip(operands[:2], facts[:2])) if _tensor(f)]
        return out
    facts = [ctx.fact(o) for o in operands]
    first = facts[0]
    if name in CROSS and len(operands) >= 2:
        return _cross(operands[0], facts[0], operands[1], facts[1])
    if name in DIV and len(operands) >= 2:
        return _div(operands[0], facts[0], operands[1], facts[1])
    if name == "linear" and len(operands) >= 2:
        return _cross(operands[0], facts[0], operands[1], facts[1])
    if name == "pow" and len(operands) >= 2:
        if _tensor(facts[1]):
            if _yes(first) or _yes(facts[1]):
                out += [(operands[0], "input"), (operands[1], "input"), (node, "result")]
            return out
        return [(operands[0], "input")] if _yes(first) else out
    if not _yes(first):
        return out
    if name in SAVES_BOTH_WITHOUT_ARGS:
        if len(operands) == 1 and not node.keywords:
            out += [(operands[0], "input"), (node, "result")]
        return out
    if name in SAVES_INPUT:
        out.append((operands[0], "input"))
    if name in SAVES_RESULT:
        out.append((node, "result"))
    return out


def _module_result(node: ast.Call, ctx) -> list:
    """[(node, "result")] for a call of a torch module that saves its output for backward
    (`act(x)` of `act = nn.Sigmoid()`, an `nn.Sequential` that ends in one: evaluate tags
    them), by a name or an attribute of one, when what it returns may require grad."""
    func = node.func
    if not node.args or not (type(func) is ast.Name or type(func) is ast.Attribute and type(func.value) is ast.Name):
        return []  # (a module is called on its input: `act(x)`, `self.act(x)`, `ops.head(x)`)
    f = ctx.fact(func)
    if f.kind != MODULE or RESULT_SAVING_TAG not in f.tags and not _forward_saves(f.node, ctx):
        return []
    return [(node, "result")] if _yes(ctx.fact(node)) else []


def _forward_saves(cls, ctx) -> bool:
    """Whether `cls` (a module class of the file, or of another module of the project) has a
    `forward` that returns what an operation that saves its result makes (`return
    torch.sigmoid(self.fc(x))`: result_saving_params)."""
    if cls is None:
        return False
    if hasattr(cls, "forward_saves_result"):  # a ProjectEntity: its module answers
        return cls.forward_saves_result()
    walker = getattr(ctx, "walker", None)
    return walker is not None and forward_saves(walker, cls)


def forward_saves(walker, cls) -> bool:
    """Whether class `cls` of the module `walker` walks has a `forward` that returns what an
    operation that saves its result makes (result_saving_params); memoised with the walker."""
    info = walker.classes.get(id(cls))
    forward = info.method("forward")[0] if info is not None else None
    if forward is None:
        return False
    memo = walker.__dict__.setdefault("_result_saving", {})  # (released with the walker)
    key = ("forward", id(forward))
    if key not in memo:
        attrs = info.self_fact.attrs if info.self_fact is not None else None
        memo[key] = result_saving_params(walker, forward, anything=True, attrs=attrs)
    return bool(memo[key])


def _helper_result(node: ast.Call, ctx) -> list:
    """[(node, "result")] for a call of a function that returns what an operation that saves its
    result makes of one of its parameters (`def act(x): return torch.sigmoid(x)`; of the file or
    of another module of the project), when what the call passes there may require grad."""
    walker = getattr(ctx, "walker", None)
    func = node.func
    if walker is None or not node.args and not node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return []
    # `act(x)`, `ops.act(x)`: a name, or a module's attribute (not a method of a value, whose
    # fact could load a class's attributes for nothing).
    if not (type(func) is ast.Name or type(func) is ast.Attribute and ctx.qualname(func) is not None):
        return []
    f = ctx.fact(func)
    callee = f.node if f.kind == FUNCTION else None
    if callee is None:
        return []
    if hasattr(callee, "result_saving_params"):  # a ProjectEntity: its module answers
        params, stub = callee.result_saving_params(), callee.node
    elif isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        memo = walker.__dict__.setdefault("_result_saving", {})  # (released with the walker)
        params = memo.get(id(callee))
        if params is None:
            params = memo[id(callee)] = result_saving_params(walker, callee)
        stub = callee
    else:
        return []
    if not params:
        return []
    bound = dict(bind_arguments(stub, node)[0])
    return [(node, "result")] if any(p in bound and _yes(ctx.fact(bound[p])) for p in params) else []


def result_saving_params(walker, func, anything: bool = False, attrs=None) -> tuple:
    """The parameters of `func` (a def of the module `walker` walks) such that every value it
    returns is what an operation that saves its result (SAVES_RESULT) makes of one of them
    (`return torch.sigmoid(x)`, `return x.exp()`), with grad mode as the caller's: () when a
    return is anything else, or the function is decorated, a generator, or returns inside a
    `with` or a nested scope's body.  `anything`: ("*",) when every value it returns is what such
    an operation makes of anything (`return torch.sigmoid(self.fc(x))` in a module's `forward`;
    with the instance's `attrs`, also `return self.act(self.fc(x))`, `self.act = nn.Tanh()`)."""
    if func.decorator_list:
        return ()
    text = walker.source_of(func) if walker.lines is not None else ""
    if any(w in text for w in ("no_grad", "inference_mode", "set_grad_enabled", "enable_grad")):
        return ()  # (grad mode changed inside: what it returns may not be recorded)
    if yields(func):
        return ()
    params = set(parameter_names(func.args))
    found: list = []
    module_state = walker.module_frame.state if getattr(walker, "module_frame", None) is not None else None
    for st in statements(func.body):
        t = type(st)
        if t in (ast.With, ast.AsyncWith):
            if any(isinstance(n, ast.Return) for n in statements(st.body)):
                return ()
            continue
        if t is not ast.Return:
            continue
        v = st.value
        if not isinstance(v, ast.Call) or any(isinstance(a, ast.Starred) for a in v.args):
            return ()
        func_ = v.func
        q = walker.qualname(func_, module_state) if module_state is not None else None
        if q is None and isinstance(func_, ast.Attribute) and func_.attr in SAVES_RESULT and (
                anything or isinstance(func_.value, ast.Name) and func_.value.id in params):
            found.append("*" if anything else func_.value.id)  # `x.exp()` (not `np.exp(x)`)
            continue
        if anything and attrs is not None and q is None and type(func_) is ast.Attribute \
                and type(func_.value) is ast.Name and func_.value.id == _first_parameter(func) and v.args:
            held = attrs.get(func_.attr)
            if held is not None and held.kind == MODULE and RESULT_SAVING_TAG in held.tags:
                found.append("*")  # `self.act(h)`, a module that saves its output (`nn.Tanh()`)
                continue
        op = next((q[len(p):] for p in _FUNCTION_PREFIXES if q and q.startswith(p) and "." not in q[len(p):]), None)
        first = v.args[0] if v.args else None
        if op in SAVES_RESULT and first is not None and (anything or isinstance(first, ast.Name) and first.id in params):
            found.append("*" if anything else first.id)  # `torch.sigmoid(x)`
            continue
        return ()
    return tuple(sorted(set(found)))


def _first_parameter(func) -> str | None:
    positional = [*func.args.posonlyargs, *func.args.args]
    return positional[0].arg if positional else None


def _cross(a, fa, b, fb):
    out = []
    if _tensor(fa) and _known_yes(fb):
        out.append((a, "input"))
    if _tensor(fb) and _known_yes(fa):
        out.append((b, "input"))
    return out


def _div(a, fa, b, fb):
    out = []
    if _tensor(fa) and _known_yes(fb):
        out.append((a, "input"))
    if _tensor(fb) and (_yes(fa) or _yes(fb)):
        out.append((b, "input"))
    return out


def storage_key(expr: ast.expr, ctx) -> str | None:
    """The dotted name whose storage `expr` is (or is a view of), else None."""
    return dotted_name(strip_views(expr, ctx))


# Methods that end in `_` but are not writes autograd checks as such (they change metadata,
# flags or sharing, or fail with an error of their own).
NOT_WRITES = frozenset(
    "requires_grad_ detach_ share_memory_ resize_ resize_as_ sparse_resize_ sparse_resize_and_clear_ "
    "apply_ map_ map2_ rename_ retain_grad_ record_stream_".split()
)
# In-place methods of NumPy arrays (writes into an array from `t.detach().numpy()`).
ARRAY_WRITES = frozenset({"fill", "sort", "put", "itemset", "partition"})


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_WRITES


# How a function writes into a parameter: `t[i] = v` and `t += v` write into a tensor and an
# array alike; a method writes into what its name says (`is_inplace_method`, ARRAY_WRITES).
WRITES_ANY = frozenset({"[]", "+="})
# Decorators a function that writes into its parameters still does so under.
_PLAIN_DECORATORS = frozenset({"torch.no_grad", "no_grad", "torch.inference_mode", "inference_mode",
                               "torch.enable_grad", "staticmethod"})


def inplace_parameters(func) -> tuple:
    """((parameter, how), ...): the parameters a function writes into in place whenever it is
    called, at the top of its body (`t.clamp_(-1, 1)`, `t[0] = 5`, `t += 1`), before any
    statement that may not run what follows (`if`, a loop, `return`) and before the parameter is
    bound to something else; `how` is the method, "[]" or "+=", after "detach()." or "data."
    for a write through an alias the function makes (`t.detach().clamp_(0)`, `t.data.zero_()`)."""
    a = func.args
    if any(d not in _PLAIN_DECORATORS for d in decorator_names(func)):
        return ()
    params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    out: dict = {}
    for stmt in func.body:
        t = type(stmt)
        if t is ast.Expr:
            call = stmt.value
            if type(call) is ast.Call and type(call.func) is ast.Attribute and (
                    is_inplace_method(call.func.attr) or call.func.attr in ARRAY_WRITES):
                recv = call.func.value
                if type(recv) is ast.Name and recv.id in params:
                    out.setdefault(recv.id, call.func.attr)
                elif is_inplace_method(call.func.attr):
                    via = _alias_of_parameter(recv, params)
                    if via is not None:
                        out.setdefault(via[0], f"{via[1]}.{call.func.attr}")
            continue
        if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
            targets = stmt.targets if t is ast.Assign else [stmt.target]
            for target in targets:
                for el in target_elements(target):
                    if type(el) is ast.Subscript and type(el.value) is ast.Name and el.value.id in params:
                        out.setdefault(el.value.id, "[]")
                    elif type(el) is ast.Name and el.id in params:
                        if t is ast.AugAssign:
                            out.setdefault(el.id, "+=")
                        params.discard(el.id)  # (bound to something else since)
            continue
        if t is ast.Pass:
            continue
        break
    return tuple(sorted(out.items()))


def _alias_of_parameter(expr, params: set) -> tuple | None:
    """(parameter, "detach()" or "data") where `expr` is `t.detach()` or `t.data` of parameter
    `t`, else None."""
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "detach" \
            and not expr.args and not expr.keywords and type(expr.func.value) is ast.Name \
            and expr.func.value.id in params:
        return expr.func.value.id, "detach()"
    if type(expr) is ast.Attribute and expr.attr == "data" and type(expr.value) is ast.Name \
            and expr.value.id in params:
        return expr.value.id, "data"
    return None
