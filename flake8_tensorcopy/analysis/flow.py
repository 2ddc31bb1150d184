"""The shared analysis: one ordered walk over a module that every rule rides on.

The walker interprets each scope's statements in execution order over an abstract
environment (name -> `Fact`), joining branches and pre-running loop bodies once so that
loop-carried values are seen.  While it walks, it calls the rules' `visit_<NodeType>` methods
with a `Context` that answers, at that exact program point:

- `ctx.qualname(expr)`: what an expression is bound to through imports and aliases
  (`th.no_grad`, `from torch import tensor`, `ng = torch.no_grad`);
- `ctx.no_grad`: whether grad mode is (or may be) off here;
- `ctx.fact(expr)`: what the value may be (tensor? may require grad? may be on an
  accelerator? a leaf? a module?).

Function bodies are walked after the code that defines them (module level first), with the
enclosing environment as it is at the end of that code, which is when they are called.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from . import torchapi as api
from .facts import (
    ARRAY_FACT,
    FOREIGN_FACT,
    DEVICE,
    IMPORT,
    LOADER,
    MODULE,
    NAMED_PARAMS,
    OTHER,
    OTHER_FACT,
    PARAMS,
    SEQ,
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
)

_MODULE_CLASS_TAG = "nn_module_class"
_NO_GRAD_FORWARD = "no_grad_forward"
_MAX_LOOP_PREPASS_DEPTH = 3
_NO_GRAD_HINTS = ("no_grad", "inference_mode")


@dataclass(slots=True)
class Scope:
    kind: str  # "module", "function", "class"
    node: ast.AST
    parent: Scope | None
    # Names with evidence of being an nn.Module (x.parameters(), x.eval(), ...).
    module_names: frozenset = frozenset()


class State:
    """The abstract program state at one point: environment and grad mode."""

    __slots__ = ("env", "no_grad", "outer")

    def __init__(self, env: dict, no_grad: bool, outer: dict | None = None) -> None:
        self.env = env
        self.no_grad = no_grad
        self.outer = outer  # enclosing scopes' names (read-only fallback)

    def copy(self) -> State:
        return State(dict(self.env), self.no_grad, self.outer)

    def lookup(self, name: str) -> Fact | None:
        f = self.env.get(name)
        if f is None and self.outer is not None:
            f = self.outer.get(name)
        return f


def _join_states(a: State, b: State) -> State:
    return State(join_env(a.env, b.env), a.no_grad or b.no_grad, a.outer)


def _frozen(module: Fact, frozen: bool) -> Fact:
    """A module whose parameters were frozen (`requires_grad_(False)`) or thawed."""
    return module.but(frozen=frozen, grad=Grad.NO if frozen else Grad.YES, min_grad=None)


def _terminates(body: list) -> bool:
    """Whether a block never falls through to the statement after it (it returns or raises)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _terminates(last.body) and _terminates(last.orelse)
    return False


_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter",
                             "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor"})
_SCALAR_CLASSES = frozenset({"int", "float", "bool", "str", "bytes", "complex", "numbers.Number", "numbers.Real",
                             "numbers.Integral", "torch.Size", "torch.dtype", "torch.device", "range", "slice"})


def _const_bool(node: ast.AST | None) -> bool | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def _kwarg(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def dotted_name(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Analyzer:
    """Walks one module, keeps the abstract state, and dispatches rule visitors."""

    def __init__(self, tree: ast.Module, rules, context, scope_filter=None) -> None:
        self.tree = tree
        # scope_filter(function_source) -> bool: False means no enabled rule can report in
        # that function, which is then not walked at all (the engine's per-function pre-filter).
        self._scope_filter = scope_filter
        self.ctx = context
        context.analyzer = self
        self.saw_torch = False
        self._cache: dict[int, Fact] = {}
        self._pending: list = []
        self._dispatch = True
        self._loop_depth = 0
        self._class_attrs: dict[int, dict] = {}
        self._dotted_roots: set = set()  # first names of the dotted keys (`self.w`) ever bound
        self._no_grad_callees: frozenset | None = None  # computed when a function is first walked
        self._no_grad_text: str | None = None  # source of the file's no-grad blocks
        handlers: dict[type, list] = {}
        self._enter, self._leave = [], []
        for rule in rules:
            for attr in dir(type(rule)):
                if attr.startswith("visit_"):
                    node_type = getattr(ast, attr[6:], None)
                    if isinstance(node_type, type):
                        handlers.setdefault(node_type, []).append(getattr(rule, attr))
            if hasattr(rule, "enter_scope"):
                self._enter.append(rule.enter_scope)
            if hasattr(rule, "leave_scope"):
                self._leave.append(rule.leave_scope)
        self._handlers = handlers

    # ------------------------------------------------------------------ driving

    def run(self) -> None:
        scope = Scope("module", self.tree, None, self._module_evidence(self.tree))
        state = State({}, False)
        self._run_scope(scope, self.tree.body, state)
        while self._pending:
            pending, self._pending = self._pending, []
            for func, parent, outer_env, no_grad, self_fact in pending:
                if self._scope_filter is not None and not self._scope_filter(self._source_of(func)):
                    continue
                self._run_function(func, parent, outer_env, no_grad, self_fact)

    def _source_of(self, node) -> str:
        lines = self.ctx.lines
        starts = lines.starts
        end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(lines.text)
        return lines.text[starts[node.lineno - 1] : end]

    def _run_scope(self, scope: Scope, body: list, state: State) -> None:
        ctx = self.ctx
        prev_scope, prev_state = ctx.scope, ctx.state
        ctx.scope, ctx.state = scope, state
        for hook in self._enter:
            hook(scope, ctx)
        self._block(body, state, scope)
        ctx.scope, ctx.state = scope, state
        for hook in self._leave:
            hook(scope, ctx)
        ctx.scope, ctx.state = prev_scope, prev_state

    def _run_function(self, func, parent: Scope, outer_env: dict, no_grad: bool, self_fact) -> None:
        scope = Scope("function", func, parent, self._module_evidence(func))
        no_grad = no_grad or self._decorated_no_grad(func, outer_env) or self._only_called_without_grad(func)
        state = State({}, no_grad, outer_env)
        args = func.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        for i, a in enumerate(params):
            fact = UNKNOWN_FACT
            if i == 0 and self_fact is not None and a in (args.posonlyargs + args.args):
                fact = self_fact
            elif a.annotation is not None:
                fact = self._annotation_fact(a.annotation, state)
            state.env[a.arg] = fact
        for a in (args.vararg, args.kwarg):
            if a is not None:
                state.env[a.arg] = UNKNOWN_FACT
        self._run_scope(scope, func.body, state)

    def _only_called_without_grad(self, func) -> bool:
        if func.name == "forward" or func.name.startswith("__"):
            return False  # also called by nn.Module.__call__ / Python itself, out of our sight
        text = getattr(getattr(self.ctx, "lines", None), "text", None)
        if text is not None:
            # Cheap necessary conditions first: a no-grad context in the file, and a call of
            # this function by name somewhere besides its own `def`.
            if not any(h in text for h in (*_NO_GRAD_HINTS, "set_grad_enabled")):
                return False
            if text.count(func.name + "(") <= text.count("def " + func.name + "("):
                return False
            if self._no_grad_text is None:
                self._no_grad_text = _no_grad_block_text(text)
            if func.name + "(" not in self._no_grad_text:
                return False  # never called inside a no-grad block
        if self._no_grad_callees is None:
            self._no_grad_callees = no_grad_callees(self.tree)
        return func.name in self._no_grad_callees

    def _decorated_no_grad(self, func, env: dict) -> bool:
        state = State(env, False)
        for dec in func.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            q = self.qualname(target, state)
            if q in api.NO_GRAD:
                if isinstance(dec, ast.Call) and dec.args and _const_bool(dec.args[0]) is False:
                    continue
                return True
            name = q or dotted_name(target) or ""
            if any(h in name for h in _NO_GRAD_HINTS):
                return True
        return False

    def _annotation_fact(self, node, state: State) -> Fact:
        q = self.qualname(node, state)
        if q is None and isinstance(node, ast.Constant) and isinstance(node.value, str):
            q = node.value
        if q in ("torch.Tensor", "Tensor"):
            return Fact(TENSOR, Grad.UNKNOWN, Device.UNKNOWN)
        if q in api.PARAMETER:
            return tensor(Grad.YES, Device.UNKNOWN, leaf=True, tags=frozenset({"parameter"}), by_flow=False)
        if q and (q == "nn.Module" or q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper()):
            # `model: nn.Module`, `layer: nn.Linear`: a module (parameters require grad).
            return Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN, paramfree=q in api.PARAMFREE_MODULES)
        return UNKNOWN_FACT

    def _module_evidence(self, scope_node) -> frozenset:
        """Names `x` with `x.parameters()`, `x.eval()`, ... in the scope's source text (a text
        search: walking every function's tree for this cost more than the rest of the
        analysis; nested functions' evidence counts too, which only widens what is a module)."""
        lines = getattr(self.ctx, "lines", None)
        if lines is None:
            return frozenset()
        text = lines.text if isinstance(scope_node, ast.Module) else self._source_of(scope_node)
        return frozenset(_MODULE_EVIDENCE.findall(text))

    # ------------------------------------------------------------------ statements

    def _block(self, body: list, state: State, scope: Scope) -> State:
        for stmt in body:
            state = self._stmt(stmt, state, scope)
        return state

    def _visit(self, node: ast.AST, state: State) -> None:
        """Dispatch rule visitors on `node` and every expression below it (not into nested
        function or class bodies, which are walked as scopes of their own)."""
        if not self._dispatch:
            return
        ctx = self.ctx
        handlers = self._handlers
        stack = [(node, state)]
        while stack:
            n, st = stack.pop()
            hs = handlers.get(type(n))
            if hs:
                ctx.state = st
                for h in hs:
                    h(n, ctx)
            if isinstance(n, ast.Lambda):
                inner = st.copy()
                for a in ast.walk(n.args):
                    if isinstance(a, ast.arg):
                        inner.env[a.arg] = UNKNOWN_FACT
                stack.extend((d, st) for d in n.args.defaults)
                stack.append((n.body, inner))
                continue
            if isinstance(n, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                inner = st.copy()
                for i, gen in enumerate(n.generators):
                    stack.append((gen.iter, st if i == 0 else inner))
                    self._bind(gen.target, self._element_of(self.fact(gen.iter, inner)), inner)
                    stack.extend((c, inner) for c in gen.ifs)
                if isinstance(n, ast.DictComp):
                    stack.append((n.key, inner))
                    stack.append((n.value, inner))
                else:
                    stack.append((n.elt, inner))
                continue
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
                continue
            if isinstance(n, (ast.IfExp, ast.BoolOp)):
                stack.extend(reversed(self._narrowed_parts(n, st)))
                continue
            children = child_nodes(n)
            if children:
                stack.extend((c, st) for c in reversed(children))
        ctx.state = state

    def _visit_stmt_only(self, stmt: ast.stmt, state: State) -> None:
        if not self._dispatch:
            return
        hs = self._handlers.get(type(stmt))
        if hs:
            self.ctx.state = state
            for h in hs:
                h(stmt, self.ctx)

    def _stmt(self, stmt: ast.stmt, state: State, scope: Scope) -> State:
        ctx = self.ctx
        self._cache.clear()
        ctx.state = state
        ctx.stmt = stmt
        t = type(stmt)
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.Delete, ast.Raise,
                 ast.Assert):
            self._visit(stmt, state)
            self._effect(stmt, state)
            return state
        if t is ast.If:
            self._visit_stmt_only(stmt, state)
            self._visit(stmt.test, state)
            when_true, when_false = self._narrowings(stmt.test, state)
            a = self._block(stmt.body, self._narrowed(state, when_true), scope)
            b = self._block(stmt.orelse, self._narrowed(state, when_false), scope)
            # A branch that returns or raises does not reach the code after the `if`.
            if _terminates(stmt.body) and not _terminates(stmt.orelse):
                return b
            if _terminates(stmt.orelse) and not _terminates(stmt.body):
                return a
            return _join_states(a, b)
        if t in (ast.For, ast.AsyncFor, ast.While):
            return self._loop(stmt, state, scope)
        if t in (ast.With, ast.AsyncWith):
            self._visit_stmt_only(stmt, state)
            no_grad = state.no_grad
            for item in stmt.items:
                self._visit(item.context_expr, state)
                effect = self._grad_mode_of(item.context_expr, state)
                if effect is not None:
                    no_grad = effect
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, UNKNOWN_FACT, state)
            saved = state.no_grad
            state.no_grad = no_grad
            state = self._block(stmt.body, state, scope)
            state.no_grad = saved
            return state
        if t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            self._visit_stmt_only(stmt, state)
            before = state.copy()
            after = self._block(stmt.body, state, scope)
            merged = _join_states(before, after)
            outs = [self._block(stmt.orelse, after.copy(), scope)]
            for h in stmt.handlers:
                hs = merged.copy()
                if h.type is not None:
                    self._visit(h.type, hs)
                if h.name:
                    hs.env[h.name] = OTHER_FACT
                outs.append(self._block(h.body, hs, scope))
            result = outs[0]
            for o in outs[1:]:
                result = _join_states(result, o)
            return self._block(stmt.finalbody, result, scope)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
            self._visit_stmt_only(stmt, state)
            for d in stmt.decorator_list:
                self._visit(d, state)
            for d in [*stmt.args.defaults, *stmt.args.kw_defaults]:
                if d is not None:
                    self._visit(d, state)
            if self._dispatch:
                self._pending.append((stmt, scope, self._closure_env(state), state.no_grad, None))
            state.env[stmt.name] = OTHER_FACT
            return state
        if t is ast.ClassDef:
            return self._class(stmt, state, scope)
        if t is ast.Import:
            for alias in stmt.names:
                if alias.asname:
                    state.env[alias.asname] = Fact(IMPORT, Grad.NO, Device.CPU, qual=alias.name)
                else:
                    top = alias.name.split(".")[0]
                    state.env[top] = Fact(IMPORT, Grad.NO, Device.CPU, qual=top)
                if alias.name == "torch" or alias.name.startswith("torch."):
                    self.saw_torch = True
            self._visit_stmt_only(stmt, state)
            return state
        if t is ast.ImportFrom:
            mod = stmt.module or ""
            if stmt.level == 0 and (mod == "torch" or mod.startswith("torch.")):
                self.saw_torch = True
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                qual = f"{mod}.{alias.name}" if stmt.level == 0 else None
                state.env[alias.asname or alias.name] = (
                    Fact(IMPORT, Grad.NO, Device.CPU, qual=qual) if qual else UNKNOWN_FACT
                )
            self._visit_stmt_only(stmt, state)
            return state
        if t.__name__ == "Match":
            self._visit_stmt_only(stmt, state)
            self._visit(stmt.subject, state)
            result = state
            for case in stmt.cases:
                cs = state.copy()
                for n in ast.walk(case.pattern):
                    name = getattr(n, "name", None) or getattr(n, "rest", None)
                    if isinstance(name, str):
                        cs.env[name] = UNKNOWN_FACT
                if case.guard is not None:
                    self._visit(case.guard, cs)
                result = _join_states(result, self._block(case.body, cs, scope))
            return result
        # Global, Nonlocal, Pass, Break, Continue, TypeAlias and anything newer.
        self._visit(stmt, state)
        return state

    def _closure_env(self, state: State) -> dict:
        if state.outer:
            env = dict(state.outer)
            env.update(state.env)
            return env
        return state.env

    def _loop(self, stmt, state: State, scope: Scope) -> State:
        self._visit_stmt_only(stmt, state)
        is_for = not isinstance(stmt, ast.While)
        header = stmt.iter if is_for else stmt.test
        self._visit(header, state)
        element = self._element_of(self.fact(stmt.iter, state)) if is_for else None
        entry = state
        # Pre-run the body once without reporting, so values assigned late in the body are
        # known at its top on the next iteration.
        if self._loop_depth < _MAX_LOOP_PREPASS_DEPTH:
            self._loop_depth += 1
            saved = self._dispatch
            self._dispatch = False
            try:
                pre = entry.copy()
                if is_for:
                    self._bind(stmt.target, element, pre)
                pre = self._block(stmt.body, pre, scope)
                entry = _join_states(entry, pre)
            finally:
                self._dispatch = saved
                self._loop_depth -= 1
        body_state = entry.copy()
        if is_for:
            self.ctx.state = body_state
            self._visit(stmt.target, body_state)
            self._bind(stmt.target, element, body_state)
        after = self._block(stmt.body, body_state, scope)
        if is_for and self.fact(stmt.iter, state).kind in (PARAMS, NAMED_PARAMS):
            # A module's parameters: the body runs at least once (a freezing loop freezes).
            out = after
        else:
            out = _join_states(entry, after)
        return self._block(stmt.orelse, out, scope)

    def _class(self, stmt: ast.ClassDef, state: State, scope: Scope) -> State:
        self._visit_stmt_only(stmt, state)
        for d in [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]:
            self._visit(d, state)
        evidence = [self._is_module_base(b, state) for b in stmt.bases]
        is_module = any(evidence)
        # A torch module for certain: a base is torch.nn.* or a class of this file that is.
        certain = "certain" in evidence
        class_scope = Scope("class", stmt, scope)
        class_state = State({}, state.no_grad, self._closure_env(state))
        attrs: dict = {}
        self_fact = None
        # A module whose forward runs with grad off (`@torch.no_grad() def forward`).
        no_grad_forward = frozenset({_NO_GRAD_FORWARD}) if is_module and any(
            isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "forward"
            and any(_mentions_no_grad(d) for d in f.decorator_list) for f in stmt.body
        ) else frozenset()
        if is_module:
            # What a module class of this file defined, a subclass inherits.
            inherited = [bf.attrs for bf in (self.fact(b, state) for b in stmt.bases)
                         if _MODULE_CLASS_TAG in bf.tags and bf.attrs is not None]

            def load(stmt=stmt, class_state=class_state, inherited=inherited):
                found = self._class_attr_facts(stmt, class_state)
                for base_attrs in inherited:
                    for k, v in base_attrs.items():
                        found.setdefault(k, v)
                return found

            # Computed on first use: most classes' methods are never analysed.
            attrs = LazyAttrs(load)
            self_fact = Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN, attrs=attrs, tags=no_grad_forward, by_flow=certain)
        saved_pending = self._pending
        self._pending = []
        self._run_scope(class_scope, stmt.body, class_state)
        methods, self._pending = self._pending, saved_pending
        for func, _parent, _env, no_grad, _ in methods:
            is_static = any(dotted_name(d) == "staticmethod" for d in func.decorator_list)
            is_cls = any(dotted_name(d) == "classmethod" for d in func.decorator_list)
            sf = None if (is_static or is_cls) else self_fact
            # Methods see the module's names, not the class body's.
            self._pending.append((func, scope, self._closure_env(state), no_grad, sf))
        state.env[stmt.name] = (
            Fact(OTHER, Grad.NO, Device.CPU, attrs=attrs, tags=frozenset({_MODULE_CLASS_TAG}) | no_grad_forward,
                 by_flow=certain)
            if is_module
            else OTHER_FACT
        )
        return state

    def _is_module_base(self, base, state: State) -> str | None:
        """"certain" when `base` is an nn.Module class by its import or definition, "name" when
        only its name says so (`LightningModule`, `PreTrainedModel`), else None."""
        q = self.qualname(base, state)
        if q is not None and q.startswith("torch.nn."):
            return "certain"
        f = self.fact(base, state)
        if _MODULE_CLASS_TAG in f.tags:
            return "certain" if f.by_flow else "name"
        name = q or dotted_name(base) or ""
        last = name.rsplit(".", 1)[-1]
        if not last.endswith(("Module", "PreTrainedModel")):
            return None
        return "certain" if q is not None and q.startswith(api.MODULE_BASE_PACKAGES) else "name"

    def _class_attr_facts(self, cls: ast.ClassDef, state: State) -> dict:
        """Facts for `self.<attr>` from assignments in any method (evaluated without context)."""
        attrs: dict = {}
        for item in cls.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = item.args.posonlyargs + item.args.args
            if not params:
                continue
            self_name = params[0].arg
            local = State({a.arg: UNKNOWN_FACT for a in ast.walk(item.args) if isinstance(a, ast.arg)},
                          False, state.outer)
            for node in _statements_and_calls(item.body):
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets, value = [node.target], node.value
                elif (  # self.register_buffer("weight", t) / self.register_parameter("w", p)
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("register_buffer", "register_parameter")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == self_name
                    and len(node.args) >= 2
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    name = node.args[0].value
                    if node.func.attr == "register_buffer":
                        f = Fact(TENSOR, Grad.NO, Device.UNKNOWN,
                                 by_flow=self.fact(node.args[1], local).is_torch_tensor)
                    else:
                        f = self.fact(node.args[1], local)
                    attrs[name] = join(attrs.get(name), f) if name in attrs else f
                    continue
                else:
                    continue
                for t in targets:
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == self_name
                    ):
                        f = self.fact(value, local)
                        attrs[t.attr] = join(attrs.get(t.attr), f) if t.attr in attrs else f
        self._cache.clear()
        return attrs

    # ------------------------------------------------------------------ effects

    def _effect(self, stmt: ast.stmt, state: State) -> None:
        t = type(stmt)
        if t is ast.Assign:
            f = self.fact(stmt.value, state)
            for target in stmt.targets:
                self._bind(target, f, state, stmt.value)
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

    def _call_effect(self, node, state: State) -> None:
        """State changes made by a call statement: grad-mode switches and in-place state."""
        if not isinstance(node, ast.Call):
            return
        func = node.func
        q = self.qualname(func, state)
        if q in api.SET_GRAD_ENABLED and node.args:
            flag = _const_bool(node.args[0])
            state.no_grad = True if flag is None else not flag
            return
        if not isinstance(func, ast.Attribute):
            return
        key = dotted_name(func.value)
        if key is None:
            return
        recv = self.fact(func.value, state)
        m = func.attr
        if recv.kind == TENSOR or recv.kind == UNKNOWN:
            if m == "requires_grad_":
                flag = _const_bool(node.args[0]) if node.args else True
                flag = flag if flag is not None else None
                grad = Grad.YES if flag else (Grad.NO if flag is False else Grad.UNKNOWN)
                self._bind(func.value, Fact(TENSOR, grad, recv.device, leaf=grad is Grad.YES,
                                            by_flow=recv.by_flow and recv.kind == TENSOR), state)
                if flag is False:
                    self._freeze_owner(recv, state)
            elif m == "detach_":
                self._bind(func.value, recv.but(kind=TENSOR, grad=Grad.NO, leaf=False), state)
        if recv.kind == MODULE:
            if m in ("to", "cuda", "xpu", "mps"):
                dev = self._target_device(node, state) if m == "to" else Device.ACCEL
                if dev is not None:
                    self._bind(func.value, recv.but(device=dev), state)
            elif m == "cpu":
                self._bind(func.value, recv.but(device=Device.CPU), state)
            elif m == "requires_grad_":
                flag = _const_bool(node.args[0]) if node.args else True
                self._bind(func.value, _frozen(recv, flag is not True), state)
        if recv.kind == SEQ and m in ("append", "extend", "insert") and node.args:
            # losses.append(loss): the list's elements are now (also) what was added.
            new = self.fact(node.args[-1], state)
            if m == "extend":
                new = self._element_of(new)
            el = join(recv.element, new) if recv.element is not None else new
            self._bind(func.value, Fact(SEQ, max(recv.grad, el.grad), max(recv.device, el.device), element=el),
                       state)

    def _freeze_owner(self, param: Fact, state: State) -> None:
        """`p.requires_grad_(False)` on a parameter of `model.parameters()` freezes `model`."""
        for tag in param.tags:
            if tag.startswith("param_of:"):
                of = state.lookup(tag[9:])
                if of is not None and of.kind == MODULE:
                    state.env[tag[9:]] = _frozen(of, True)

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
                                of = state.lookup(owner)
                                if of is not None and of.kind == MODULE:
                                    state.env[owner] = _frozen(of, True)
                return
            if key is not None:
                state.env[key] = fact
                self._dotted_roots.add(key.split(".", 1)[0])
        elif t is ast.Starred:
            self._bind(target.value, fact, state)

    # ------------------------------------------------------------------ grad mode

    def _grad_mode_of(self, expr, state: State) -> bool | None:
        """True: the context turns grad off (or may); False: turns it on; None: no effect."""
        if isinstance(expr, ast.Call):
            q = self.qualname(expr.func, state)
            if q in api.NO_GRAD:
                if q.endswith("inference_mode"):
                    arg = expr.args[0] if expr.args else _kwarg(expr, "mode")
                    if _const_bool(arg) is False:
                        return None
                return True
            if q in api.ENABLE_GRAD:
                return False
            if q in api.SET_GRAD_ENABLED:
                arg = expr.args[0] if expr.args else _kwarg(expr, "mode")
                flag = _const_bool(arg)
                return True if flag is None else not flag
        # Anything else that mentions a no-grad context (conditional contexts, project
        # helpers named after it) may turn grad off: stay silent inside it.
        for n in ast.walk(expr):
            if isinstance(n, (ast.Name, ast.Attribute)):
                q = self.qualname(n, state)
                if q in api.NO_GRAD or q in api.SET_GRAD_ENABLED:
                    return True
                name = n.id if isinstance(n, ast.Name) else n.attr
                if any(h in name for h in _NO_GRAD_HINTS):
                    return True
        return None

    # ------------------------------------------------------------------ narrowing

    def _narrowed_parts(self, node, state: State) -> list:
        """(child, state) for the parts of `a if test else b` and `a and b` / `a or b`, each
        with what the tests before it establish (`x if torch.is_tensor(x) else torch.tensor(x)`)."""
        if isinstance(node, ast.IfExp):
            when_true, when_false = self._narrowings(node.test, state)
            return [(node.test, state), (node.body, self._narrowed(state, when_true)),
                    (node.orelse, self._narrowed(state, when_false))]
        out = []
        st = state
        is_and = isinstance(node.op, ast.And)
        for v in node.values:
            out.append((v, st))
            when_true, when_false = self._narrowings(v, st)
            st = self._narrowed(st, when_true if is_and else when_false)
        return out

    def _narrowed(self, state: State, facts: list) -> State:
        st = state.copy()
        for key, fact in facts:
            st.env[key] = fact
            if "." in key:
                self._dotted_roots.add(key.split(".", 1)[0])
        return st

    def _narrowings(self, test, state: State) -> tuple[list, list]:
        """What a test establishes: ([(key, fact)] where it holds, [(key, fact)] where it does
        not), from `isinstance(x, C)`, `torch.is_tensor(x)`, `type(x) is C`, `not`, `and`, `or`."""
        t = type(test)
        if t is ast.UnaryOp and isinstance(test.op, ast.Not):
            when_true, when_false = self._narrowings(test.operand, state)
            return when_false, when_true
        if t is ast.BoolOp:
            parts = [self._narrowings(v, state) for v in test.values]
            if isinstance(test.op, ast.And):
                return [p for ps, _ in parts for p in ps], []
            return [], [n for _, ns in parts for n in ns]
        target = classes = None
        if t is ast.Call and len(test.args) == 2 and not test.keywords and isinstance(test.func, ast.Name) \
                and test.func.id == "isinstance" and state.lookup("isinstance") is None:
            target, classes = test.args
            negative = True
        elif t is ast.Call and len(test.args) == 1 and self.qualname(test.func, state) == "torch.is_tensor":
            target, classes = test.args[0], None
            negative = True
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
        names = ["torch.Tensor"] if classes is None else [
            self._class_name(c, state) for c in (classes.elts if isinstance(classes, ast.Tuple) else [classes])]
        when_true = join_all(self._instance_of(current, n) for n in names)
        when_false = []
        if negative and all(n in _TENSOR_CLASSES for n in names):
            when_false = [(key, self._not_tensor(current))]
        return [(key, when_true)], when_false

    def _class_name(self, node, state: State) -> str | None:
        q = self.qualname(node, state)
        if q is None and isinstance(node, ast.Name) and state.lookup(node.id) is None:
            q = node.id  # a builtin: list, int, ...
        return q

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
            if current.kind == SEQ:
                return current
            return Fact(SEQ, Grad.UNKNOWN, Device.UNKNOWN) if cls != "dict" else OTHER_FACT
        # A class we do not know (a project class, a Tensor subclass...).
        return current.but(by_flow=False) if current.kind == TENSOR else current

    @staticmethod
    def _not_tensor(current: Fact) -> Fact:
        if current.kind == TENSOR and "module_output" in current.tags:
            return current.but(by_flow=False)  # a tuple or dict of outputs
        if current.kind in (TENSOR, UNKNOWN):
            return Fact(OTHER, Grad.NO, Device.CPU, tags=frozenset({"not_tensor"}))
        return current

    # ------------------------------------------------------------------ evaluation

    def qualname(self, node, state: State | None = None) -> str | None:
        state = state or self.ctx.state
        if isinstance(node, ast.Name):
            f = state.lookup(node.id)
            return f.qual if f is not None and f.kind == IMPORT else None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value, state)
            return f"{base}.{node.attr}" if base is not None else None
        return None

    def fact(self, node, state: State | None = None) -> Fact:
        state = state or self.ctx.state
        key = id(node)
        cached = self._cache.get(key)
        if cached is not None and cached[0] is state.env:
            return cached[1]
        f = self._eval(node, state)
        if state.no_grad and f.kind == TENSOR and f.grad is not Grad.NO and not f.leaf:
            if isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)):
                f = f.but(grad=Grad.NO, items=f.items and tuple(i.but(grad=Grad.NO) for i in f.items))
        self._cache[key] = (state.env, f)
        return f

    def _eval(self, node, state: State) -> Fact:
        t = type(node)
        if t is ast.Name:
            f = state.lookup(node.id)
            if f is None:
                return UNKNOWN_FACT
            if f.kind == UNKNOWN and node.id in self.ctx.scope.module_names:
                return Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN)
            return f
        if t is ast.Attribute:
            return self._attribute(node, state)
        if t is ast.Call:
            return self._call(node, state)
        if t is ast.Constant:
            if isinstance(node.value, str):
                return Fact(OTHER, Grad.NO, _device_of_string(node.value), tags=frozenset({"str"}))
            return OTHER_FACT
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
            return OTHER_FACT
        if t is ast.BoolOp:
            return join_all(self.fact(v, st) for v, st in self._narrowed_parts(node, state))
        if t is ast.IfExp:
            parts = self._narrowed_parts(node, state)
            return join(self.fact(node.body, parts[1][1]), self.fact(node.orelse, parts[2][1]))
        if t is ast.Subscript:
            base = self.fact(node.value, state)
            if base.items is not None:
                i, n = node.slice, len(base.items)
                if isinstance(i, ast.Constant) and type(i.value) is int and -n <= i.value < n:
                    return base.items[i.value]
            if base.kind == TENSOR:
                return base.but(leaf=False, tags=base.tags, items=None)
            if base.kind == SEQ and base.element is not None:
                if isinstance(node.slice, ast.Slice):
                    return base
                return base.element
            if base.kind == MODULE:
                return Fact(MODULE, Grad.UNKNOWN, base.device, frozen=base.frozen, by_flow=base.by_flow)
            return UNKNOWN_FACT
        if t in (ast.Tuple, ast.List, ast.Set):
            elts = [self.fact(e.value if isinstance(e, ast.Starred) else e, state) for e in node.elts]
            el = join_all(elts) if elts else None
            if el is None:
                return Fact(SEQ, Grad.NO, Device.CPU)
            return Fact(SEQ, el.grad, el.device, element=el)
        if t is ast.NamedExpr:
            f = self.fact(node.value, state)
            self._bind(node.target, f, state)
            return f
        if t in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            inner = state.copy()
            for gen in node.generators:
                self._bind(gen.target, self._element_of(self.fact(gen.iter, inner)), inner)
            el = self.fact(node.elt, inner)
            return Fact(SEQ, el.grad, el.device, element=el)
        if t is ast.Starred:
            return self.fact(node.value, state)
        if t in (ast.JoinedStr, ast.Dict, ast.DictComp, ast.Lambda):
            return OTHER_FACT
        return UNKNOWN_FACT

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
            return Fact(TENSOR, grad, dev, tags=a.tags | b.tags, by_flow=a.is_torch_tensor or b.is_torch_tensor,
                        min_grad=None if must == grad else min(must, grad))
        if a.kind == OTHER and b.kind == OTHER:
            return OTHER_FACT
        if a.kind == SEQ and b.kind == SEQ:
            return join(a, b)
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
            return Fact(IMPORT, Grad.NO, Device.CPU, qual=f"{base.qual}.{attr}")
        if kind == OTHER and "foreign" in base.tags:
            return FOREIGN_FACT
        if kind == TENSOR:
            if attr in ("data", "grad"):
                return Fact(TENSOR, Grad.NO, base.device, tags=base.tags - {"generator_output"}, by_flow=base.by_flow)
            if attr == "device":  # `.to(x.device)`: wherever x is
                return Fact(DEVICE, Grad.NO, base.device)
            if attr in api.NON_TENSOR_ATTRS:
                return OTHER_FACT
            if base.items is not None and len(base.items) == 2 and attr in ("values", "indices"):
                return base.items[attr == "indices"]
            if attr in api.SAME_TENSOR_ATTRS:
                return base.but(leaf=False)
            # A field of a model output (outputs.logits, out.loss): same provenance.
            return base.but(leaf=False)
        if kind == MODULE:
            if base.attrs is not None and attr in base.attrs:
                f = base.attrs[attr]
                if f.kind == MODULE and base.device is not Device.UNKNOWN:
                    f = f.but(device=max(f.device, base.device))
                if f.kind == TENSOR and f.leaf and base.frozen:
                    f = f.but(grad=Grad.NO)
                return f
            if attr in api.PARAM_ATTRS:
                if base.frozen:
                    return tensor(Grad.UNKNOWN, base.device, by_flow=base.by_flow)
                return tensor(Grad.YES, base.device, leaf=True, tags=frozenset({"parameter"}), by_flow=base.by_flow)
            if base.attrs is not None:
                # An attribute of a local class that no method assigns: not known.
                return UNKNOWN_FACT
            # Most attributes of a module are submodules (model.encoder.layer[3]).
            return Fact(MODULE, Grad.UNKNOWN, base.device, frozen=base.frozen, tags=frozenset({"submodule?"}))
        return UNKNOWN_FACT

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
        name = (dotted_name(arg) or "").rsplit(".", 1)[-1].lower()
        if "dtype" in name:
            return None
        # `.to(device)`, `.to(self.device)`, `.to(args.device)`: may be an accelerator.
        return Device.ACCEL

    def _call(self, node: ast.Call, state: State) -> Fact:
        func = node.func
        q = self.qualname(func, state)
        if q is not None:
            return self._call_qualified(q, node, state)
        if isinstance(func, ast.Attribute):
            recv = self.fact(func.value, state)
            return self._method(recv, func.attr, node, state)
        callee = self.fact(func, state)
        if callee.kind == MODULE:
            return self._module_output(callee, node, state)
        if _MODULE_CLASS_TAG in callee.tags:
            return Fact(MODULE, Grad.UNKNOWN, Device.CPU, attrs=callee.attrs,
                        tags=callee.tags & {_NO_GRAD_FORWARD}, by_flow=callee.by_flow)
        if isinstance(func, ast.Name):
            name = func.id
            if name in ("len", "int", "float", "str", "bool", "isinstance", "print", "repr", "hash", "id",
                        "round", "range", "format", "type", "callable", "hasattr", "getattr"):
                return OTHER_FACT
            if name in ("list", "tuple", "sorted", "reversed") and node.args:
                el = self._element_of(self.fact(node.args[0], state))
                return Fact(SEQ, el.grad, el.device, element=el)
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
        if q in api.FACTORIES:
            rg = _kwarg(node, "requires_grad")
            dev = self._factory_device(node, state)
            if rg is None:
                return tensor(Grad.NO, dev)
            flag = _const_bool(rg)
            if flag is False:
                return tensor(Grad.NO, dev)
            return tensor(Grad.YES if flag else Grad.UNKNOWN, dev, leaf=True)
        if q in api.FROM_HOST:
            return tensor(Grad.NO, Device.CPU)
        if q in api.DATALOADERS:
            return Fact(LOADER, Grad.NO, Device.CPU)
        if q == "torch.device":
            f = self.fact(node.args[0], state) if node.args else UNKNOWN_FACT
            return Fact(DEVICE, Grad.NO, f.device if f.kind in (OTHER, DEVICE) else Device.UNKNOWN)
        if q in api.NON_TENSOR_FUNCS:
            return OTHER_FACT
        if q in api.NO_GRAD_FUNCS:
            return tensor(Grad.NO, self._device_of_args(node, state))
        if q.startswith("numpy."):
            return ARRAY_FACT
        if q.split(".", 1)[0] in api.FOREIGN_FRAMEWORKS:
            return FOREIGN_FACT  # another framework's value is not a torch tensor
        if q.startswith("torch.nn.") and q[9:10].isupper() or q.startswith("torch.nn.modules."):
            # A module's `grad`: whether its parameters require grad (a new torch.nn layer's do).
            paramfree = q in api.PARAMFREE_MODULES
            return Fact(MODULE, Grad.NO if paramfree else Grad.YES, Device.CPU, paramfree=paramfree, by_flow=True)
        if q in api.AUTOGRAD_GRAD:
            cg = _kwarg(node, "create_graph")
            g = tensor(Grad.NO if cg is None or _const_bool(cg) is False else Grad.UNKNOWN,
                       self._device_of_args(node, state))
            return Fact(SEQ, g.grad, g.device, element=g)
        if q.startswith("torch.distributions."):
            return UNKNOWN_FACT  # a Distribution: .sample() is detached, .rsample()/.log_prob() are not
        if q.startswith("torch.optim.") or q.startswith("torch.utils.") or q.startswith("torch.cuda."):
            return OTHER_FACT if not q.startswith("torch.utils.checkpoint") else self._join_args(node, state)
        if q.startswith(api.MODEL_FACTORY_PREFIXES):
            return Fact(MODULE, Grad.UNKNOWN, Device.CPU, by_flow=True)
        if q == "copy.deepcopy" and node.args:
            return self.fact(node.args[0], state)
        if q.startswith("torch.") and (q.rsplit(".", 1)[-1].startswith("_") or q.startswith("torch.nn.init.calc")):
            return UNKNOWN_FACT  # private helpers and init arithmetic return ints and tuples, not tensors
        if q.startswith("torch."):
            return self._values_indices(q[6:], self._join_args(node, state), node.args[1:], node, state)
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

    def _join_args(self, node: ast.Call, state: State) -> Fact:
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
                    by_flow=any(f.is_torch_tensor for f in tensors), min_grad=None if must == grad else must)

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
        return Device.ACCEL

    def _module_output(self, module: Fact, node: ast.Call, state: State) -> Fact:
        args = self._arg_facts(node, state)
        arg_grad = max((f.grad for f in args if f.kind in (TENSOR, UNKNOWN)), default=Grad.NO)
        arg_dev = max((f.device for f in args if f.kind == TENSOR), default=Device.CPU)
        if module.paramfree or module.frozen:
            grad = arg_grad if not module.frozen else (Grad.YES if arg_grad is Grad.YES else Grad.UNKNOWN)
        else:
            grad = Grad.YES
        if _NO_GRAD_FORWARD in module.tags:
            grad = Grad.NO
        # Certain only when the module's parameters require grad on every path (a module's
        # `grad`), or when the result's grad comes from the inputs or a no-grad forward.
        if grad is Grad.YES and not (module.paramfree and not module.frozen):
            must = Grad.YES if module.by_flow and must_grad(module) is Grad.YES else Grad.UNKNOWN
        else:
            must = grad
        return Fact(TENSOR, grad, max(module.device, arg_dev), tags=frozenset({"module_output"}),
                    by_flow=module.by_flow, min_grad=None if must == grad else must)

    def _method(self, recv: Fact, m: str, node: ast.Call, state: State) -> Fact:
        kind = recv.kind
        if kind == TENSOR:
            if m == "numpy":
                return ARRAY_FACT
            if m in api.NON_TENSOR_METHODS:
                return OTHER_FACT
            if m in api.NO_GRAD_METHODS:
                return tensor(Grad.NO, recv.device, tags=recv.tags - {"generator_output"}, by_flow=recv.by_flow)
            if m in api.NEW_TENSOR_METHODS:
                rg_arg = _kwarg(node, "requires_grad")
                rg = _const_bool(rg_arg)
                dev = self._factory_device(node, state) if _kwarg(node, "device") is not None else recv.device
                if rg is True:
                    return tensor(Grad.YES, dev, leaf=True, by_flow=recv.by_flow)
                return tensor(Grad.NO if rg_arg is None or rg is False else Grad.UNKNOWN, dev, by_flow=recv.by_flow)
            if m == "cpu":
                return recv.but(device=Device.CPU, leaf=False)
            if m in ("cuda", "xpu", "mps"):
                return recv.but(device=Device.ACCEL, leaf=False)
            if m == "to":
                dev = self._target_device(node, state)
                return recv.but(device=recv.device if dev is None else dev, leaf=False)
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
                          min_grad=None if must == grad else must)
            return self._values_indices(m, result, node.args, node, state)
        if kind == MODULE:
            if m in api.MODULE_SELF_METHODS:
                if m in ("to",):
                    dev = self._target_device(node, state)
                    return recv.but(device=recv.device if dev is None else dev)
                if m in ("cuda", "xpu", "mps"):
                    return recv.but(device=Device.ACCEL)
                if m == "cpu":
                    return recv.but(device=Device.CPU)
                if m == "requires_grad_":
                    flag = _const_bool(node.args[0]) if node.args else True
                    return _frozen(recv, flag is not True)
                return recv
            if m in ("parameters", "named_parameters"):
                owner = dotted_name(node.func.value) if isinstance(node.func, ast.Attribute) else None
                tags = frozenset({"parameter", f"param_of:{owner}"} if owner else {"parameter"})
                p = tensor(Grad.NO if recv.frozen else Grad.YES, recv.device, leaf=not recv.frozen, tags=tags,
                           by_flow=recv.by_flow)
                return Fact(PARAMS if m == "parameters" else NAMED_PARAMS, Grad.NO, recv.device, element=p)
            if m == "forward":
                return self._module_output(recv, node, state)
            if recv.attrs is not None:
                f = recv.attrs.get(m)
                if f is not None and f.kind == MODULE:
                    return self._module_output(f, node, state)
                return UNKNOWN_FACT
            return UNKNOWN_FACT
        if kind == SEQ and m in ("pop", "__getitem__") and recv.element is not None:
            return recv.element
        if kind == OTHER and "ndarray" in recv.tags:
            return ARRAY_FACT
        if kind == OTHER and "foreign" in recv.tags:
            return FOREIGN_FACT
        if kind == UNKNOWN and m == "parameters" and isinstance(node.func, ast.Attribute):
            return UNKNOWN_FACT
        return UNKNOWN_FACT

    def _element_of(self, f: Fact) -> Fact:
        """What iterating over (or unpacking) a value of fact `f` yields."""
        kind = f.kind
        if kind == SEQ:
            return f.element or UNKNOWN_FACT
        if kind == PARAMS:
            return f.element or UNKNOWN_FACT
        if kind == NAMED_PARAMS:
            el = f.element or UNKNOWN_FACT
            return Fact(SEQ, Grad.NO, el.device, element=el, items=(OTHER_FACT, el))
        if kind == TENSOR:
            return f.but(leaf=False)
        if kind == LOADER:
            return Fact(SEQ, Grad.NO, Device.CPU, element=tensor(Grad.NO, Device.CPU))
        if kind == MODULE:
            return Fact(MODULE, Grad.UNKNOWN, f.device, frozen=f.frozen, by_flow=f.by_flow)
        return UNKNOWN_FACT


_MODULE_EVIDENCE = re.compile(
    r"\b([A-Za-z_]\w*)\.(?:" + "|".join(sorted(api.MODULE_EVIDENCE_METHODS)) + r")\("
)

# Fields of each node type that can hold child nodes (never `ctx`: Load/Store/Del objects).
_CHILD_FIELDS: dict = {}


def child_nodes(node) -> list:
    """ast.iter_child_nodes without the expr_context objects, as a list (faster)."""
    t = type(node)
    fields = _CHILD_FIELDS.get(t)
    if fields is None:
        fields = _CHILD_FIELDS[t] = tuple(f for f in t._fields if f != "ctx")
    out = []
    for f in fields:
        v = getattr(node, f, None)
        if v is None:
            continue
        if type(v) is list:
            out.extend(x for x in v if isinstance(x, ast.AST))
        elif isinstance(v, ast.AST):
            out.append(v)
    return out


def _statements_and_calls(body: list):
    """Statements of a body, nested blocks included (not nested functions or classes), and
    the calls of expression statements: where `self.x = ...` and `self.register_*()` stand."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield node
        if isinstance(node, ast.Expr):
            yield node.value
            continue
        for f in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(node, f, None)
            if type(sub) is list:
                stack.extend(sub)


class LazyAttrs:
    """The `self.<attr>` facts of a module class, computed on first use."""

    __slots__ = ("_load", "_data")

    def __init__(self, load) -> None:
        self._load = load
        self._data = None

    def _get(self) -> dict:
        if self._data is None:
            self._data = {}  # guards against re-entry while loading
            self._data = self._load()
        return self._data

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


def _mentions_no_grad(expr) -> bool:
    """A `with` item or decorator that turns grad off, or may (`set_grad_enabled(flag)`)."""
    for n in ast.walk(expr):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
        if name is None:
            continue
        if any(h in name for h in _NO_GRAD_HINTS):
            return not (isinstance(expr, ast.Call) and name == "inference_mode"
                        and any(_const_bool(a) is False for a in [*expr.args, *(k.value for k in expr.keywords)]))
        if name == "set_grad_enabled":
            return isinstance(expr, ast.Call) and bool(expr.args) and _const_bool(expr.args[0]) is not True
    return False


_NO_GRAD_OPENER = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:with\b|@).*(?:no_grad|inference_mode|set_grad_enabled)")


def _no_grad_block_text(text: str) -> str:
    """The source lines of blocks opened by a no-grad `with` or decorator (a cheap text
    over-approximation, used to rule out functions never called under no-grad)."""
    lines = text.splitlines()
    out = []
    i, n = 0, len(lines)
    while i < n:
        m = _NO_GRAD_OPENER.match(lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1).expandtabs())
        out.append(lines[i])
        i += 1
        while i < n and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
                         or lines[i].lstrip().startswith(("def ", "async def ", "@"))):
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def no_grad_callees(tree: ast.Module) -> frozenset:
    """Names of the functions of a module that are only ever called with grad off.

    Every call of the name in the module is inside a no-grad `with` block, a function decorated
    with one, or another such function (`with torch.no_grad(): evaluate()`), there is at least
    one, and the name is not otherwise used (passed as a callback, for instance).  Calls are
    matched by name (`evaluate()`, `self.evaluate()`), so a clash only makes this stricter.
    """
    sites: dict[str, list] = {}
    used: set = set()
    defined: set = set()
    stack = [(tree, False, None)]
    while stack:
        n, ng, encl = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(n.name)
            inner = any(_mentions_no_grad(d) for d in n.decorator_list)
            stack.extend((d, ng, encl) for d in n.decorator_list)
            stack.extend((d, ng, encl) for d in [*n.args.defaults, *n.args.kw_defaults] if d is not None)
            stack.extend((b, inner, n.name) for b in n.body)
            continue
        if isinstance(n, ast.Lambda):
            stack.append((n.body, False, None))  # runs whenever it is called
            continue
        if isinstance(n, (ast.With, ast.AsyncWith)):
            inner = ng or any(_mentions_no_grad(i.context_expr) for i in n.items)
            stack.extend((i, ng, encl) for i in n.items)
            stack.extend((b, inner, encl) for b in n.body)
            continue
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name):
                sites.setdefault(f.id, []).append((ng, encl))
            elif isinstance(f, ast.Attribute):
                sites.setdefault(f.attr, []).append((ng, encl))
                stack.append((f.value, ng, encl))
            else:
                stack.append((f, ng, encl))
            stack.extend((a, ng, encl) for a in n.args)
            stack.extend((k.value, ng, encl) for k in n.keywords)
            continue
        if isinstance(n, ast.Name):
            used.add(n.id)
        elif isinstance(n, ast.Attribute):
            used.add(n.attr)
        stack.extend((c, ng, encl) for c in ast.iter_child_nodes(n))
    result: set = set()
    changed = True
    while changed:
        changed = False
        for name, calls in sites.items():
            if name in result or name not in defined or name in used:
                continue
            if all(ng or (encl is not None and encl in result) for ng, encl in calls):
                result.add(name)
                changed = True
    return frozenset(result)


_DTYPES = frozenset(
    "float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 uint8 long short "
    "bool complex64 complex128 cfloat cdouble".split()
)


def _device_of_string(s: str) -> Device:
    s = s.strip().lower()
    if s == "cpu" or s.startswith("cpu:"):
        return Device.CPU
    if s.split(":")[0] in ("cuda", "mps", "xpu", "hip", "npu", "xla", "meta", "hpu", "privateuseone"):
        return Device.ACCEL
    return Device.UNKNOWN
