"""Grad mode: which contexts, decorators, calls and framework hooks turn autograd recording off.

One classification for the whole analysis (the walker, the no-grad callee index and every
domain ask these functions), so that `torch.set_grad_enabled(True)` or `inference_mode(False)`
mean the same thing everywhere.  `qualname` arguments resolve an expression through the file's
imports (`th.no_grad` -> `torch.no_grad`), or return None.
"""

from __future__ import annotations

import ast
from bisect import bisect_left

from . import torchapi as api
from .astutil import all_nodes, body_span, child_nodes, const_bool, kwarg, walk
from ..source import LazyPattern, word_positions

# Names of project helpers that wrap a no-grad context (`with self.no_grad_ctx():`, `@inference_mode_if(...)`):
# they may turn grad off, so code inside stays silent.
NO_GRAD_HINTS = ("no_grad", "inference_mode")

# Hooks the PyTorch Lightning trainer runs with grad disabled (its evaluation and prediction
# loops run under torch.no_grad() / torch.inference_mode()).
EVAL_HOOKS = frozenset(
    "validation_step test_step predict_step validation_step_end test_step_end "
    "validation_epoch_end test_epoch_end on_validation_batch_end on_test_batch_end "
    "on_predict_batch_end on_validation_epoch_end on_test_epoch_end on_predict_epoch_end".split()
)

# Base classes whose subclasses get the hooks above run under no-grad.
LIGHTNING_BASES = frozenset({
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.lightning.LightningModule", "pytorch_lightning.core.module.LightningModule",
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule",
})


def _name_of(n) -> str | None:
    return n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None


def context_effect(expr, qualname) -> bool | None:
    """What a `with` item (or a decorator) does to grad mode: True turns it off (or may: a
    non-constant `set_grad_enabled(flag)`, a project helper named after no_grad), False turns it
    on (`enable_grad`, `set_grad_enabled(True)`), None leaves it alone."""
    if isinstance(expr, ast.Call):
        q = qualname(expr.func)
        if q in api.NO_GRAD:
            if q.endswith("inference_mode"):
                arg = expr.args[0] if expr.args else kwarg(expr, "mode")
                if const_bool(arg) is False:
                    return None
            return True
        if q in api.ENABLE_GRAD:
            return False
        if q in api.SET_GRAD_ENABLED:
            arg = expr.args[0] if expr.args else kwarg(expr, "mode")
            flag = const_bool(arg)
            return True if flag is None else not flag
        name = _name_of(expr.func)
        if name == "inference_mode" and any(
                const_bool(a) is False for a in [*expr.args, *(k.value for k in expr.keywords)]):
            return None
        if name == "set_grad_enabled" and expr.args and const_bool(expr.args[0]) is True:
            return False
    # (`torch.enable_grad() if train else torch.no_grad()`: may turn it off.)
    on = None
    for n in all_nodes(expr):
        if isinstance(n, (ast.Name, ast.Attribute)):
            q = qualname(n)
            if q in api.NO_GRAD or q in api.SET_GRAD_ENABLED:
                return True
            if q in api.ENABLE_GRAD:
                on = False
                continue
            name = _name_of(n)
            if any(h in name for h in NO_GRAD_HINTS):
                return True
            if name == "set_grad_enabled":
                return True
    return on


def enables_grad(func, qualname) -> bool:
    """Whether def `func` is decorated `@torch.enable_grad()` (or `@torch.set_grad_enabled(True)`):
    its body runs with grad on whatever its caller's mode."""
    return any(context_effect(d, qualname) is False for d in func.decorator_list)


def decorator_turns_grad_off(dec, qualname) -> bool:
    """`@torch.no_grad()`, `@torch.no_grad`, `@torch.inference_mode()`, `@ng()` with `ng`
    an alias, or a project decorator named after one."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    q = qualname(target)
    if q in api.NO_GRAD:
        if isinstance(dec, ast.Call) and dec.args and const_bool(dec.args[0]) is False:
            return False
        return True
    if q in api.SET_GRAD_ENABLED:
        return isinstance(dec, ast.Call) and bool(dec.args) and const_bool(dec.args[0]) is not True
    return context_effect(dec, qualname) is True


def wraps_without_grad(deco, qualname) -> bool:
    """Whether `deco`, the def of a decorator, makes what it decorates run with grad off, for
    certain: `return torch.no_grad()(fn)`, or a wrapper it returns whose body calls the function
    it is given only inside a no-grad `with` (`def wrapper(*args, **kwargs): with
    torch.no_grad(): return fn(*args, **kwargs)`, `@functools.wraps(fn)` or not, other
    statements before or after it that do not use the function: `model.eval()`)."""
    if not isinstance(deco, (ast.FunctionDef, ast.AsyncFunctionDef)) or deco.decorator_list:
        return False
    positional = [*deco.args.posonlyargs, *deco.args.args]
    if len(positional) != 1 or deco.args.vararg or deco.args.kwarg:
        return False
    fn = positional[0].arg
    body = _without_docstring(deco.body)
    if len(body) == 1 and type(body[0]) is ast.Return and type(body[0].value) is ast.Call:
        call = body[0].value  # `return torch.no_grad()(fn)`
        return type(call.func) is ast.Call and len(call.args) == 1 and type(call.args[0]) is ast.Name \
            and call.args[0].id == fn and _certainly_off(call.func, qualname)
    if len(body) != 2 or type(body[1]) is not ast.Return or type(body[1].value) is not ast.Name:
        return False
    wrapper = body[0]
    if not isinstance(wrapper, (ast.FunctionDef, ast.AsyncFunctionDef)) or wrapper.name != body[1].value.id:
        return False
    off = False  # (`@torch.no_grad()` on the wrapper: its whole body runs without grad)
    for d in wrapper.decorator_list:
        if decorator_turns_grad_off(d, qualname) and _certainly_off(d, qualname):
            off = True
        elif not _wraps(d, fn):
            return False
    inner = _without_docstring(wrapper.body)
    if off:
        return _names(fn, inner) and _called_there(fn, inner, qualname)
    # Every use of the function given is in such a block of the wrapper's (other statements
    # around it, `model.eval()` before, `model.train()` after, a `try` around it, use it not).
    return _guarded_in(fn, inner, qualname) is True


def _guarded_in(fn: str, statements: list, qualname) -> bool | None:
    """True where `fn` is used in `statements` and only in no-grad `with` blocks of them (or of
    the bodies of `try` statements of them) that run it there (_called_there); None where it
    is not used; False where it is used elsewhere."""
    guarded = None
    for st in statements:
        if type(st) in (ast.With, ast.AsyncWith) and any(_certainly_off(i.context_expr, qualname) for i in st.items) \
                and not any(context_effect(i.context_expr, qualname) is False for i in st.items) \
                and not _names(fn, st.items):
            if not _called_there(fn, st.body, qualname):
                return False
            guarded = guarded or (True if _names(fn, st.body) else None)
        elif type(st) in _TRIES:
            if _names(fn, [*st.handlers, *st.orelse, *st.finalbody]):
                return False
            inside = _guarded_in(fn, st.body, qualname)
            if inside is False:
                return False
            guarded = guarded or inside
        elif _names(fn, [st]):
            return False
    return guarded


_TRIES = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


_GRAD_MODE_NAMES = frozenset({"no_grad", "enable_grad", "set_grad_enabled", "inference_mode"})


def _called_there(fn: str, body: list, qualname) -> bool:
    """Whether each use of `fn` in the statements `body` of a no-grad block runs in that block:
    none in a function, lambda or class defined there (which may run after it), nor in a `with`
    of it that may turn grad on again (`enable_grad()`, `inference_mode(False)`,
    `set_grad_enabled(flag)`)."""
    stack = list(body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
            if _names(fn, [n]):
                return False
            continue
        if t in (ast.With, ast.AsyncWith) and any(
                not _certainly_off(i.context_expr, qualname) and (
                    context_effect(i.context_expr, qualname) is not None
                    or type(i.context_expr) is ast.Call and _name_of(i.context_expr.func) in _GRAD_MODE_NAMES)
                for i in n.items) and _names(fn, n.body):
            return False
        stack.extend(child_nodes(n))
    return True


def _names(name: str, nodes) -> bool:
    """Whether `name` is read in any of `nodes` (or below them)."""
    return any(type(n) is ast.Name and n.id == name for node in nodes for n in ast.walk(node))


def with_turns_grad_off(node, qualname) -> bool:
    """Whether `with node(...):`, `node` the def of a function or a class, runs its body with
    grad off, for certain: a `@contextlib.contextmanager` function whose every `yield` is in a
    `torch.no_grad()` / `inference_mode()` block of it (`def evaluating(): with torch.no_grad():
    yield`), or a class whose `__enter__` calls `torch.set_grad_enabled(False)` at its top level."""
    if isinstance(node, ast.ClassDef):
        enter = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__enter__"), None)
        return enter is not None and any(
            type(st) is ast.Expr and type(st.value) is ast.Call and qualname(st.value.func) in api.SET_GRAD_ENABLED
            and st.value.args and const_bool(st.value.args[0]) is False for st in enter.body)
    if not isinstance(node, ast.FunctionDef) or not any(
            _name_of(d.func if isinstance(d, ast.Call) else d) == "contextmanager" for d in node.decorator_list):
        return False
    found = []  # whether each `yield` is in such a block

    def visit(statements, off: bool) -> None:
        for st in statements:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            inner = off
            if isinstance(st, (ast.With, ast.AsyncWith)):
                if any(context_effect(i.context_expr, qualname) is False for i in st.items):
                    inner = False
                elif any(_certainly_off(i.context_expr, qualname) for i in st.items):
                    inner = True
                for i in st.items:
                    found.extend(off for n in ast.walk(i.context_expr) if isinstance(n, (ast.Yield, ast.YieldFrom)))
                visit(st.body, inner)
                continue
            blocks = [getattr(st, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(st, f, None), list)]
            blocks += [h.body for h in getattr(st, "handlers", ())]
            blocks += [c.body for c in getattr(st, "cases", ())]
            if blocks:
                for n in child_nodes(st):
                    if not isinstance(n, ast.stmt):
                        found.extend(off for m in ast.walk(n) if isinstance(m, (ast.Yield, ast.YieldFrom)))
                for b in blocks:
                    visit(b, off)
                continue
            found.extend(off for n in ast.walk(st) if isinstance(n, (ast.Yield, ast.YieldFrom)))

    visit(node.body, False)
    return bool(found) and all(found)


def _certainly_off(expr, qualname) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()` (not `inference_mode(False)`)."""
    return type(expr) is ast.Call and qualname(expr.func) in api.NO_GRAD and context_effect(expr, qualname) is True


def _wraps(dec, fn: str) -> bool:
    """`@functools.wraps(fn)` / `@wraps(fn)`."""
    return type(dec) is ast.Call and _name_of(dec.func) == "wraps" and len(dec.args) == 1 \
        and type(dec.args[0]) is ast.Name and dec.args[0].id == fn


def _without_docstring(body: list) -> list:
    if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant and type(body[0].value.value) is str:
        return body[1:]
    return list(body)


# The fields of the statements that hold expressions and statement lists, in the order they run
# (call_modes reads a statement list of one that switches grad mode in order).
_BLOCKS = {ast.Module: ("body",), ast.If: ("test", "body", "orelse"), ast.For: ("target", "iter", "body", "orelse"),
           ast.AsyncFor: ("target", "iter", "body", "orelse"), ast.While: ("test", "body", "orelse"),
           ast.Try: ("body", "handlers", "orelse", "finalbody")}
_STATEMENT_FIELDS = ("body", "orelse", "finalbody")


def set_grad_call(call: ast.Call, qualname) -> bool | None:
    """The no-grad state after a statement `torch.set_grad_enabled(flag)` (True: off, or may
    be), or None when `call` is not one."""
    if qualname(call.func) not in api.SET_GRAD_ENABLED:
        return None
    arg = call.args[0] if call.args else kwarg(call, "mode")
    if arg is None:
        return None
    flag = const_bool(arg)  # (`torch.set_grad_enabled(mode=False)` too)
    return True if flag is None else not flag


def leaves_grad_off(func, qualname) -> bool:
    """Whether a call of function `func` turns grad off for what follows it, for certain: a
    statement `torch.set_grad_enabled(False)` at the top of its body, the last such statement
    there (`def setup_inference(): torch.manual_seed(0); torch.set_grad_enabled(False)`), and no
    `return` or `yield` before it."""
    if not isinstance(func, ast.FunctionDef):
        return False
    off = False
    for st in func.body:
        if type(st) is ast.Expr and type(st.value) is ast.Call:
            switch = set_grad_call(st.value, qualname)
            if switch is not None:
                arg = st.value.args[0] if st.value.args else kwarg(st.value, "mode")
                off = switch and const_bool(arg) is False
                continue
        if any(type(n) in (ast.Return, ast.Yield, ast.YieldFrom) for n in ast.walk(st)):
            return off
    return off


# --------------------------------------------------------------------------- callees


def module_qualnames(tree: ast.Module):
    """A qualname resolver from the module's own imports (module-level statements, also inside
    `if` / `try` blocks; no data flow): for the index below."""
    return _resolver(_module_imports(tree))


def _resolver(names: dict):
    """A qualname resolver from {local name: what it imports}."""

    def qualname(n) -> str | None:
        # (A loop, not a call of itself: a nested function that calls itself refers to itself
        # through its closure, a cycle that only the cyclic collector frees.)
        attrs = []
        while isinstance(n, ast.Attribute):
            attrs.append(n.attr)
            n = n.value
        if not isinstance(n, ast.Name):
            return None
        base = names.get(n.id)
        if base is None:
            return None
        return ".".join([base, *reversed(attrs)]) if attrs else base

    return qualname


def _module_imports(tree: ast.Module) -> dict:
    """{local name: what it imports} of the module's own imports."""
    names: dict = {}
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.Try, getattr(ast, "TryStar", ast.Try))):
            stack.extend(node.body)
            stack.extend(node.orelse)
            stack.extend(getattr(node, "finalbody", ()))
            for h in getattr(node, "handlers", ()):
                stack.extend(h.body)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    names[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def no_grad_statements(func, qualname) -> set:
    """Ids of the statements of `func` that run with grad off: all of them in a no-grad
    function, else those under a `with` that turns it off (or may)."""
    if any(decorator_turns_grad_off(d, qualname) for d in func.decorator_list):
        return {id(n) for n in walk(func)}
    out: set = set()
    stack = [(s, False) for s in func.body]
    while stack:
        node, off = stack.pop()
        if off:
            out.add(id(node))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = off
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                effect = context_effect(item.context_expr, qualname)
                if effect is not None:
                    inner = effect
        body = node.body if isinstance(node, (ast.With, ast.AsyncWith)) else ()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                stack.append((child, inner if child in body else off))
            elif isinstance(child, (ast.excepthandler, getattr(ast, "match_case", ast.excepthandler))):
                stack.extend((c, off) for c in child.body)
    return out


def no_grad_callees(tree: ast.Module, lines=None) -> frozenset:
    """Names of the functions of a module that are only ever called with grad off.

    Every call of the name in the module is inside a no-grad `with` block, a function decorated
    with one, or another such function (`with torch.no_grad(): evaluate()`), there is at least
    one, and the name is not otherwise used (passed as a callback, for instance).  Calls are
    matched by name (`evaluate()`, `self.evaluate()`, `trainer.evaluate()`; not an attribute of
    an imported name, `torch.cat()`), so a clash makes this stricter, unless the other function's
    call is all the calls of the name there are: a method no call of the file reaches, named as
    what a no-grad function calls of another object (`opt.evaluate()`), is taken to run there.
    A function that calls itself, or one that calls it back, is in it when every other call is.
    `forward` and the dunders are never in it (nor, through them, what only they call):
    nn.Module and Python call them out of sight.  One pass over the tree; grad mode is
    classified by `context_effect`, as the walker does.

    With the module's `lines` (source.LineIndex), function bodies are scanned only where the
    answer may depend on them: a body that mentions grad mode, or a name that may be in the answer
    (a name called with grad off, or in a body of such a name).  The rest hold no call made with
    grad off and no name that could be in the answer, so what they would add changes nothing;
    a body not parsed yet (lazytree.py) stays so.
    """
    return call_modes(tree, lines)[2]


def call_modes(tree: ast.Module, lines=None) -> tuple:
    """(sites, used, callees, bound): the grad mode of every call in the module by the called
    name ({name: [(with grad off?, the name of the function the call is in, or None)]}), the
    names used otherwise (read, passed), `no_grad_callees`, and the names of the functions
    whose result a call binds to a name (`gen = iter_preds(...)`: a generator made there may be
    iterated elsewhere).  Without `lines`, every body is
    scanned (sites complete: what another module's calls of a name are, `Project.called_without_grad`)."""
    names = _module_imports(tree)
    qualname = _resolver(names)
    sites: dict[str, list] = {}
    used: set = set()
    defined: set = set()
    generators: set = set()  # functions whose bodies may `yield`: they run where they are iterated
    bound: set = set()  # names of functions whose call is bound to a name (`gen = iter_preds(...)`)
    unread: list = []  # (start, end, function, where its body runs) of bodies left unscanned
    text = lines.text if lines is not None else None
    if text is not None:
        starts = lines.starts

        def span_of(func) -> tuple:
            span = body_span(func)
            if span is None:
                end = starts[func.end_lineno] if func.end_lineno < len(starts) else len(text)
                span = (starts[func.lineno - 1], end)
            return span

        # Local names of grad-mode functions (`from torch import no_grad as ng`): a body that
        # spells none of these, nor the words, has no region with grad off.
        words = (*NO_GRAD_HINTS, "set_grad_enabled",
                 *(local for local, full in names.items() if full in api.NO_GRAD or full in api.SET_GRAD_ENABLED))
    # Regions of code that run in one grad mode and enclosing function: (node, (no-grad?, the
    # name of the function they are in)).  Each is scanned with its context fixed; function
    # bodies, `with` bodies and lambdas start regions of their own.
    regions = [(tree, (False, None))]
    kept = _kept_contexts(tree, text, qualname, words if text is not None else ())
    _Name, _Attribute, _Call, _Constant, _Lambda = ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Lambda
    _Assign, _Yield, _YieldFrom = ast.Assign, ast.Yield, ast.YieldFrom
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    withs = (ast.With, ast.AsyncWith)
    used_add = used.add

    def scan() -> None:
        while regions:
            root, where = regions.pop()
            ng = where[0]
            stack = [root]
            pop, push, extend = stack.pop, stack.append, stack.extend
            while stack:
                n = pop()
                t = type(n)
                if t is _Name:
                    used_add(n.id)
                elif t is _Attribute:
                    used_add(n.attr)
                    push(n.value)
                elif t is _Call:
                    f = n.func
                    ft = type(f)
                    if ft is _Name:
                        sites.setdefault(f.id, []).append(where)
                    elif ft is _Attribute:
                        # (Not `torch._foreach_lerp_(...)`, `nncf.quantize(...)`: an attribute of an
                        # imported name is no function of the module.)
                        if type(f.value) is not _Name or f.value.id not in names:
                            sites.setdefault(f.attr, []).append(where)
                        push(f.value)
                        if f.attr == "apply" and len(n.args) == 1 and not n.keywords:
                            # `net.apply(init_weights)`, `self.apply(self._init_weights)`: the
                            # function runs there, in this grad mode, on each submodule (as
                            # `pandas`' and the others' `apply` run theirs at once).
                            given = n.args[0]
                            gt = type(given)
                            if gt is _Name:
                                sites.setdefault(given.id, []).append(where)
                                continue
                            if gt is _Attribute and type(given.value) is _Name:
                                sites.setdefault(given.attr, []).append(where)
                                push(given.value)
                                continue
                    else:
                        push(f)
                    extend(n.args)
                    extend([k.value for k in n.keywords])
                elif t is _Constant:
                    continue
                elif t is _Yield or t is _YieldFrom:
                    if where[1] is not None:
                        generators.add(where[1])
                    extend(child_nodes(n))
                elif t in functions:
                    defined.add(n.name)
                    inner = any(decorator_turns_grad_off(d, qualname) for d in n.decorator_list)
                    extend(n.decorator_list)
                    extend([d for d in (*n.args.defaults, *n.args.kw_defaults) if d is not None])
                    body = (inner, n.name)
                    span = span_of(n) if text is not None and not inner else None
                    if span is not None and not any(text.find(w, *span) != -1 for w in words):
                        unread.append((span[0], span[1], n, body))
                        if text.find("yield", *span) != -1:
                            generators.add(n.name)  # (a scanned body says so by its `yield`, below)
                    else:
                        regions.extend(switched(n.body, body))
                elif t is _Lambda:
                    regions.append((n.body, (False, None)))  # runs whenever it is called
                elif t is _Assign and type(n.value) is _Lambda and len(n.targets) == 1 \
                        and type(n.targets[0]) is _Name:
                    defined.add(n.targets[0].id)  # `pred = lambda x: ...`: a function of that name
                    push(n.value)
                elif t is _Assign and type(n.value) is _Call and type(n.value.func) is _Name:
                    bound.add(n.value.func.id)  # (a generator made here may be iterated elsewhere)
                    extend(child_nodes(n))
                elif t in withs:
                    inner = ng
                    for i in n.items:
                        effect = context_effect(i.context_expr, qualname)
                        if effect is None and type(i.context_expr) is _Name and i.context_expr.id in kept:
                            effect = True  # `ctx = torch.no_grad()`, then `with ctx:`
                        if effect is not None:
                            inner = effect
                    extend(n.items)
                    body = where if inner == ng else (inner, where[1])
                    regions.extend(switched(n.body, body))
                elif t in _BLOCKS and may_switch and switches(n):
                    # Statements after `torch.set_grad_enabled(False)` in a block run with grad
                    # off (`if __name__ == "__main__": torch.set_grad_enabled(False); main()`).
                    for field in _BLOCKS[t]:
                        part = getattr(n, field)
                        if field in _STATEMENT_FIELDS:
                            regions.extend(switched(part, where))
                        elif type(part) is list:
                            extend(part)
                        elif part is not None:
                            push(part)
                else:
                    extend(child_nodes(n))

    # (Only a text that spells `set_grad_enabled`, or a name it is imported as, may switch.)
    may_switch = text is None or "set_grad_enabled" in text or any(
        full in api.SET_GRAD_ENABLED and local in text for local, full in names.items())

    # The module's functions whose calls turn grad off for what follows (leaves_grad_off).
    leavers = frozenset(f.name for f in tree.body if isinstance(f, ast.FunctionDef)
                        and leaves_grad_off(f, qualname)) if may_switch else frozenset()

    def mode_after(st) -> bool | None:
        """The no-grad state after statement `st` where it sets one: `torch.set_grad_enabled(flag)`
        (set_grad_call), or a call of one of `leavers` (also bound: `model = setup_inference()`)."""
        t = type(st)
        if t is ast.Expr or t is _Assign:
            call = st.value
            if type(call) is _Call:
                if t is ast.Expr:
                    mode = set_grad_call(call, qualname)
                    if mode is not None:
                        return mode
                if leavers and type(call.func) is _Name and call.func.id in leavers:
                    return True
        return None

    def switches(n) -> bool:
        """Whether a statement list of `n` holds a statement that sets the grad mode."""
        return any(mode_after(st) is not None for field in _STATEMENT_FIELDS for st in getattr(n, field, ()) or ())

    def switched(body: list, where: tuple) -> list:
        """(statement, where it runs) of a statement list: after `torch.set_grad_enabled(flag)`
        the mode is the flag's (off, or may be: `set_grad_call`), and off after a call of one of
        `leavers`."""
        out = []
        for st in body:
            out.append((st, where))
            mode = mode_after(st)
            if mode is not None:
                where = (mode, where[1])
        return out

    scan()
    if unread:
        _read_where_it_matters(text, unread, sites, regions, scan)
    # The names whose every call is made with grad off or in such a function: the greatest such
    # set, so that a function that calls itself (or one that calls it back) is in it when every
    # other call of it is.
    # (A generator function's body runs where the generator is iterated, not where it is made:
    # one that a call binds to a name, `gen = iter_preds(model, xs)` under `no_grad`, may be
    # iterated with grad on.)
    kept_names = {name for name in sites
                  if name in defined and name not in used and name != "forward" and not name.startswith("__")
                  and not (name in generators and name in bound)}
    changed = True
    while changed:
        changed = False
        for name in list(kept_names):
            if not all(ng or (encl is not None and encl in kept_names) for ng, encl in sites[name]):
                kept_names.discard(name)
                changed = True
    # Of those, the ones some call with grad off reaches (not a function only its own body calls).
    result: set = set()
    changed = True
    while changed:
        changed = False
        for name in kept_names:
            if name not in result and any(ng or encl in result for ng, encl in sites[name]):
                result.add(name)
                changed = True
    return sites, used, frozenset(result), frozenset(bound)


def _apply_arguments(text: str):
    """(start, end, whether `self.` precedes it) of the name each `.apply(` of `text` is handed
    first (`net.apply(init)`, `self.apply(self._init_weights)`; start == end: no name)."""
    size = len(text)
    i = text.find(".apply(")
    while i != -1:
        j = i + 7
        while j < size and text[j] in " \t\n":
            j += 1
        on_self = text.startswith("self.", j)
        if on_self:
            j += 5
        k = j
        while k < size and (text[k].isalnum() or text[k] == "_"):
            k += 1
        yield j, k, on_self
        i = text.find(".apply(", j)


def applied_names(text: str) -> frozenset:
    """The names `text` hands to an `apply` (`net.apply(name)`, `self.apply(self.name)`): calls
    of them, by `call_modes`, that no `name(` spells.  One pass over the text."""
    return frozenset(text[j:k] for j, k, _ in _apply_arguments(text) if k > j)


def apply_positions(text: str, name: str) -> list:
    """Offsets of `name` where `text` hands it alone to an `apply` (`net.apply(name)`)."""
    out = []
    size = len(text)
    for j, k, on_self in _apply_arguments(text):
        if on_self or text[j:k] != name:
            continue
        while k < size and text[k] in " \t\n,":
            k += 1
        if k < size and text[k] == ")":
            out.append(j)
    return out


_DEF_NAME = LazyPattern(r"def[\s\\]+(\w+)")
# `ctx = <expression>` on one line (not `==`).
_BOUND = LazyPattern(r"[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)[ \t]*(.+)")


def _kept_contexts(tree: ast.Module, text: str | None, qualname, words: tuple = ()) -> frozenset:
    """Names the module binds to a context manager that turns grad off, or may (`ctx =
    torch.no_grad()`, `ctx = torch.no_grad() if eval else nullcontext()`), in any scope: a
    `with ctx:` is then a no-grad block, as the walker takes one of a name whose value may be
    one.  From the lines that spell a grad-mode word (`words`: those and the local names of the
    grad-mode functions) in its text, else from the tree."""
    found = set()
    if text is not None:
        for word in words:
            for at in word_positions(text, word):
                start = text.rfind("\n", 0, at) + 1
                end = text.find("\n", at)
                m = _BOUND.match(text, start, end if end != -1 else len(text))
                if m is None or m.start(2) > at:
                    continue
                try:
                    value = ast.parse(m.group(2).strip(), mode="eval").body
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
                if context_effect(value, qualname) is True:
                    found.add(m.group(1))
        return frozenset(found)
    for n in walk(tree):
        if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name \
                and context_effect(n.value, qualname) is True:
            found.add(n.targets[0].id)
    return frozenset(found)


def _read_where_it_matters(text: str, unread: list, sites: dict, regions: list, scan) -> None:
    """Scan the bodies left unscanned that mention a name that may be in the answer: one the
    text defines, called with grad off or in a body of another such name (and so on).  A body
    scanned may leave functions nested in it unscanned: they join `unread`."""
    defs = set(_DEF_NAME.findall(text))
    searched: set = set()
    positions: list = []  # of every name searched, sorted
    taken: set = set()
    while True:
        maybe: set = set()
        grew = True
        while grew:
            grew = False
            for name, calls in sites.items():
                if name in maybe or name not in defs or name == "forward" or name.startswith("__"):
                    continue
                if any(ng or (encl is not None and encl in maybe) for ng, encl in calls):
                    maybe.add(name)
                    grew = True
        for name in maybe - searched:
            positions.extend(word_positions(text, name))
        searched |= maybe
        positions.sort()
        took = False
        for i, (start, end, func, where) in enumerate(unread):
            if i not in taken:
                j = bisect_left(positions, start)
                if j < len(positions) and positions[j] < end:
                    taken.add(i)
                    took = True
                    regions.extend([(b, where) for b in func.body])
        if not took:
            return
        scan()
