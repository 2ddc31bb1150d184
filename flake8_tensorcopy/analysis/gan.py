"""GAN training steps: which modules are generators and discriminators, and where a generator's
output reaches a discriminator update without being detached (family TNS3).

Two parts:

- `GanNames`: a cheap syntactic pass over the whole file that decides the role ("G" or "D") of
  module names, from the names themselves (`netG`, `G_AB`, `self.discriminator`, `model.D`), from
  the optimizer their parameters are handed to (`optimizerG = Adam(decoder.parameters())`), from
  configuration (`Options.generator_names` / `discriminator_names`), and which methods and
  attributes yield generator output (`self.fake_B = self.netG(...)` in `forward`, a `forward`
  that returns `self.generator(z)` makes `self(z)` a generator call).
- `DiscriminatorSteps`: an interpreter over one scope's statements, in execution order (branches
  joined, loops run twice so that values carried to the next iteration are seen), that tracks
  where values come from: which generator calls, and which discriminator calls fed with
  generator output, a value depends on through any expression that keeps the autograd graph
  (aliases, tuple unpacking, arithmetic, torch.cat, indexing, helper calls; `.detach()`,
  `.data`, `.item()` and no-grad regions cut it).  It records backward calls, optimizer steps and
  zero_grad calls as ordered events, and from them classifies each backward as a discriminator
  update or not, and says what goes wrong when a discriminator update reaches the generator.

Grad mode, qualified names and frozen modules come from the shared analysis: the rule records
them while the walker visits each call (`CallInfo`) and hands them to the interpreter.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from . import torchapi as api
from .flow import dotted_name

G, D = "G", "D"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_G_WORDS = frozenset({"g", "gen", "generator", "generators", "netg"})
_D_WORDS = frozenset({"d", "disc", "discrim", "discriminator", "discriminators", "dis", "critic", "netd"})
_OPT_WORDS = frozenset({"opt", "optim", "optimizer", "optimiser", "optimizers", "optimisers", "trainer", "solver"})
_NOT_OPT_WORDS = frozenset({"sched", "scheduler", "schedulers", "lr", "warmup", "ema", "scaler"})
# A name with one of these words is not a module even if it mentions a role (`d_loss`,
# `loss_G`, `train_D`, `gen_imgs`, `optimizer_D`).
_NOT_MODULE_WORDS = frozenset(
    "loss losses criterion crit err error opt optim optimizer optimiser optimizers sched scheduler lr "
    "scaler grad grads penalty reg step steps train training update optimize backward compute calc "
    "get make build save load set requires toggle freeze unfreeze zero eval test run apply fn func "
    "iter iters label labels img imgs image images out output outputs pred preds logits score "
    "scores fake fakes real noise data feat feats features sample samples".split()
)
# Parts of a dotted name that say nothing about the role (`netG.module`, `self.model.G`).
_GENERIC_PARTS = frozenset({"module", "model", "net", "network", "networks", "nets", "models", "_orig_mod", "orig_mod"})
# Methods of a module that do not run it.
_MODULE_METHODS = frozenset(
    "parameters named_parameters buffers named_buffers modules named_modules children named_children "
    "train eval to cuda cpu xpu mps half float double bfloat16 type apply state_dict load_state_dict "
    "zero_grad requires_grad_ register_forward_hook register_forward_pre_hook register_backward_hook "
    "register_full_backward_hook register_buffer register_parameter add_module share_memory "
    "extra_repr __repr__ get_submodule get_parameter".split()
)
# Tensor methods and attributes whose result does not carry the autograd graph.
_CUTTING_METHODS = frozenset(api.NO_GRAD_METHODS | api.NON_TENSOR_METHODS | {"detach", "detach_"})
_CUTTING_ATTRS = frozenset(api.NON_TENSOR_ATTRS | {"data", "grad"})
_NON_TENSOR_BUILTINS = frozenset(
    "len int float str bool print isinstance issubclass range round hash id repr format type callable "
    "hasattr getattr setattr abs".split()
)
_NO_GRAD_HINTS = ("no_grad", "inference_mode")
# Calls whose result never carries the graph of their arguments (`torch.as_tensor`, `torch.Tensor`
# and `torch.complex` do, so they are not here).
_NEW_VALUE_FUNCS = frozenset(
    "torch." + n
    for n in "tensor zeros_like ones_like empty_like full_like rand_like randn_like randint_like multinomial "
             "bernoulli poisson".split()
)
_CONCAT = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})


def words(name: str) -> list[str]:
    """`netG_A2B` -> ["net", "g", "a", "2", "b"]; `optimizerD` -> ["optimizer", "d"]."""
    return [w.lower() for w in _WORD.findall(name)]


def role_of_words(ws, verbs_ok: bool = False) -> str | None:
    if not verbs_ok and any(w in _NOT_MODULE_WORDS for w in ws):
        return None
    g = any(w in _G_WORDS for w in ws)
    d = any(w in _D_WORDS for w in ws)
    if g == d:
        return None
    return G if g else D


def name_role(dotted: str | None, verbs_ok: bool = False) -> str | None:
    """The role a (dotted) name's words give it: last meaningful part decides."""
    if not dotted:
        return None
    for part in reversed(dotted.split(".")):
        if part in ("self", "cls"):
            return None
        r = role_of_words(words(part), verbs_ok)
        if r is not None:
            return r
        if part.lower() not in _GENERIC_PARTS:
            return None
    return None


_CLASS_NAME = re.compile(r"^_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")


def is_class_name(name: str) -> bool:
    """`Generator`, `NLayerDiscriminator`: calling it constructs a module, it does not run one
    (`G`, `G_AB`, `D_A`, `netG` are instances)."""
    return bool(_CLASS_NAME.match(name)) and not name.isupper()


def _norm(dotted: str) -> str:
    return dotted[5:] if dotted.startswith("self.") else dotted


def _mentions_no_grad(node: ast.AST) -> bool:
    for n in ast.walk(node):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else ""
        if any(h in name for h in _NO_GRAD_HINTS):
            return True
        if name == "set_grad_enabled":
            return True
    return False


def _const(node) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _kw(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


# --------------------------------------------------------------------------- file-level names


class GanNames:
    """Roles of the names in one file (see the module docstring)."""

    def __init__(self, tree: ast.Module, generator_names=(), discriminator_names=(), text: str | None = None) -> None:
        self.cfg = {**{n: G for n in generator_names if n}, **{n: D for n in discriminator_names if n}}
        self.module_assoc: dict[str, str] = {}  # normalised module name -> role, from optimizers
        self.opt_assoc: dict[str, str] = {}  # normalised optimizer name -> role
        self.func_class: dict[int, ast.ClassDef] = {}
        self.class_role: dict[int, str] = {}  # class id -> role of `self`
        self.class_calls_g: set[int] = set()  # classes whose forward returns generator output
        self.class_attr_g: dict[int, dict[str, ast.Call]] = {}  # class id -> attr -> generator call
        self.gen_methods: dict[int, set] = {}  # class id -> methods returning generator output
        self.gen_funcs: set[str] = set()  # module-level functions returning generator output
        self.active = False
        self._roles: dict[str, str | None] = {}
        if text is None or self._may_have_both_roles(text):
            self._scan(tree)

    def _may_have_both_roles(self, text: str) -> bool:
        """A cheap look at the identifiers before walking the tree: some name must mention a
        generator and some name a discriminator (or be configured as one)."""
        seen = set()
        for ident in set(_IDENT.findall(text)):
            if ident in self.cfg:
                seen.add(self.cfg[ident])
            else:
                ws = words(ident)
                if any(w in _G_WORDS for w in ws):
                    seen.add(G)
                if any(w in _D_WORDS for w in ws):
                    seen.add(D)
            if len(seen) == 2:
                return True
        return False

    # ---- roles

    def module_role(self, dotted: str | None) -> str | None:
        if not dotted:
            return None
        try:
            return self._roles[dotted]
        except KeyError:
            r = self._roles[dotted] = self._module_role(dotted)
            return r

    def _module_role(self, dotted: str) -> str | None:
        if is_class_name(dotted.rsplit(".", 1)[-1]):
            return None
        if self.cfg:
            last = dotted.rsplit(".", 1)[-1]
            for key in (dotted, _norm(dotted), last):
                if key in self.cfg:
                    return self.cfg[key]
        r = self.module_assoc.get(_norm(dotted))
        if r is not None:
            return r
        return name_role(dotted)

    def optimizer_role(self, dotted: str | None) -> tuple[bool, str | None]:
        """(is it an optimizer, its role)."""
        if not dotted:
            return False, None
        r = self.opt_assoc.get(_norm(dotted))
        if r is not None:
            return True, r
        ws = words(dotted.rsplit(".", 1)[-1])
        if any(w in _NOT_OPT_WORDS for w in ws) or not any(w in _OPT_WORDS for w in ws):
            return False, None
        return True, role_of_words([w for w in ws if w not in _OPT_WORDS], verbs_ok=True)

    # ---- the scan

    def _scan(self, tree: ast.Module) -> None:
        assigns, classes, funcs, calls = [], [], [], []
        for node in ast.walk(tree):
            t = type(node)
            if t is ast.Call:
                calls.append(node)
            elif t is ast.Assign:
                if isinstance(node.value, ast.Call):
                    assigns.append(node)
            elif t is ast.ClassDef:
                classes.append(node)
            elif t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                funcs.append(node)
        for a in assigns:
            self._associate(a)
        self._roles.clear()
        saw = set()
        for node in calls:
            func = node.func
            r = self.module_role(dotted_name(func))
            if r is None and isinstance(func, ast.Attribute):
                r = self.module_role(dotted_name(func.value))
            if r is not None:
                saw.add(r)
        class_roles = [role_of_words(words(c.name)) for c in classes]
        if G not in saw or not (D in saw or D in class_roles):
            return  # no generator call, or no discriminator: nothing to find in this file
        for c, r in zip(classes, class_roles):
            # `class NLayerDiscriminator(nn.Module)`; not `class DiscriminatorLoss`.
            if r is not None:
                self.class_role[id(c)] = r
            for item in c.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.func_class[id(item)] = c
        for f in funcs:
            self._scan_function(f)
        self.active = True

    def _associate(self, a: ast.Assign) -> None:
        if len(a.targets) != 1 or not isinstance(a.value, ast.Call):
            return
        opt = dotted_name(a.targets[0])
        if opt is None:
            return
        mods = []
        for n in ast.walk(a.value):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("parameters", "named_parameters")):
                m = dotted_name(n.func.value)
                if m is not None:
                    mods.append(m)
        if not mods:
            return
        self._roles.clear()
        is_opt, role = self.optimizer_role(opt)
        if not is_opt and not any(w in _OPT_WORDS for w in words(opt.rsplit(".", 1)[-1])):
            # `params = list(netG.parameters())` and the like: not an optimizer.
            callee = dotted_name(a.value.func) or ""
            if not re.search(r"(Adam|SGD|RMSprop|Adagrad|Adadelta|Lion|LBFGS|Optim|optim\.)", callee):
                return
        if role is not None:
            for m in mods:
                if self.module_role(m) is None:
                    self.module_assoc[_norm(m)] = role
            self.opt_assoc[_norm(opt)] = role
            return
        roles = {self.module_role(m) for m in mods}
        if len(roles) == 1 and None not in roles:
            self.opt_assoc[_norm(opt)] = roles.pop()

    def _scan_function(self, f) -> None:
        """Does `f` return generator output; which `self.<attr>` does it set to generator output."""
        if any(_mentions_no_grad(d) for d in f.decorator_list):
            return
        cls = self.func_class.get(id(f))
        params = f.args.posonlyargs + f.args.args
        self_name = params[0].arg if cls is not None and params else None
        local_g: dict[str, ast.Call] = {}  # local name -> the generator call it holds
        returns_g = False
        attrs: dict[str, ast.Call] = {}

        def gen_calls(expr) -> list:
            out = []
            stack = [expr]
            while stack:
                n = stack.pop()
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTTING_METHODS:
                    continue
                if isinstance(n, ast.Attribute) and n.attr in _CUTTING_ATTRS:
                    continue
                if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if isinstance(n, ast.Call):
                    callee = dotted_name(n.func)
                    if callee is not None and self_name and callee.startswith(self_name + "."):
                        callee = "self." + callee[len(self_name) + 1:]
                    if self.module_role(callee) == G:
                        out.append(n)
                if isinstance(n, ast.Name) and n.id in local_g:
                    out.append(local_g[n.id])
                stack.extend(ast.iter_child_nodes(n))
            return out

        def walk(body, no_grad: bool) -> None:
            nonlocal returns_g
            for st in body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if isinstance(st, (ast.With, ast.AsyncWith)):
                    ng = no_grad or any(_mentions_no_grad(i.context_expr) for i in st.items)
                    walk(st.body, ng)
                    continue
                if isinstance(st, ast.Assign) and not no_grad:
                    found = gen_calls(st.value)
                    for t in st.targets:
                        for tt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                            if isinstance(tt, ast.Name):
                                if found:
                                    local_g[tt.id] = found[0]
                                else:
                                    local_g.pop(tt.id, None)
                            elif (found and self_name and isinstance(tt, ast.Attribute)
                                  and isinstance(tt.value, ast.Name) and tt.value.id == self_name):
                                attrs.setdefault(tt.attr, found[0])
                elif isinstance(st, ast.Return) and st.value is not None and not no_grad:
                    if gen_calls(st.value):
                        returns_g = True
                for sub in ("body", "orelse", "finalbody"):
                    inner = getattr(st, sub, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        walk(inner, no_grad)
                for h in getattr(st, "handlers", ()) or ():
                    walk(h.body, no_grad)

        walk(f.body, False)
        if cls is not None:
            if attrs:
                self.class_attr_g.setdefault(id(cls), {}).update(attrs)
            if returns_g:
                self.gen_methods.setdefault(id(cls), set()).add(f.name)
                if f.name == "forward":
                    self.class_calls_g.add(id(cls))
        elif returns_g:
            self.gen_funcs.add(f.name)


# --------------------------------------------------------------------------- the interpreter


@dataclass(frozen=True)
class CallInfo:
    """What the shared analysis knew when the walker visited a call."""

    no_grad: bool = False
    qual: str | None = None
    frozen: bool = False  # the callee is a module whose parameters are frozen
    # The receiver of `x.m(...)` is known to be a tensor, not a module.
    receiver_tensor: bool = False


@dataclass(eq=False)
class GenSource:
    """One generator call: the origin of generator output."""

    node: ast.Call
    loops: tuple
    foreign: bool = False  # produced by another method (`self.fake_B` set in `forward`)
    binding: ast.Assign | None = None  # `fake = netG(z)`: the statement that names it


@dataclass(eq=False)
class Event:
    kind: str  # "backward", "step", "zero", "penalty", "dcall"
    node: ast.AST
    index: int
    loops: tuple
    branches: tuple
    role: str | None = None  # step / zero: whose optimizer or module
    prov: frozenset = frozenset()  # backward: what the loss depends on; penalty: its inputs
    retain: bool | None = False  # backward: retain_graph (None: not a constant)
    name_role: str | None = None  # backward: the role the loss's name gives it


@dataclass(eq=False)
class DiscCall:
    """A discriminator call whose input carries generator output."""

    node: ast.Call
    sources: set = field(default_factory=set)  # GenSource
    targets: list = field(default_factory=list)  # the parts of its arguments that carry it
    event: Event | None = None


@dataclass
class Finding:
    dcall: DiscCall
    consequence: str  # "crash_later", "crash_here", "crash_loop", "wrong", "wrong_retain", "waste", "unknown"
    fix: str  # "call", "binding", "none_reuse", "none_gp"
    bindings: list = field(default_factory=list)  # GenSource for the "binding" fix


EMPTY = frozenset()
_MAX_LOOP_PREPASS = 3


class DiscriminatorSteps:
    """Runs over one scope (a function or the module body) and returns findings."""

    def __init__(self, names: GanNames, scope_node: ast.AST, calls: dict, stmt_no_grad: dict) -> None:
        self.names = names
        self.calls = calls
        self.stmt_no_grad = stmt_no_grad
        self.scope_node = scope_node
        self.cls = names.func_class.get(id(scope_node))
        self.self_name = None
        if self.cls is not None:
            params = scope_node.args.posonlyargs + scope_node.args.args
            if params and not any(dotted_name(d) in ("staticmethod", "classmethod") for d in scope_node.decorator_list):
                self.self_name = params[0].arg
        self.env: dict[str, frozenset] = {}
        self.aliases: dict[str, str] = {}  # local name -> role of the module it names
        self.frozen: set[str] = set()
        self.frozen_all_g = False
        self.recording = True
        self.loops: list = []
        self.branches: list = []
        self.events: list[Event] = []
        self.sources: dict[int, GenSource] = {}
        self.dcalls: dict[int, DiscCall] = {}
        self._depth = 0
        self._stmt = None
        self._prov: dict[int, frozenset] = {}  # expression id -> what it carried when evaluated

    # ------------------------------------------------------------------ entry

    def run(self) -> list[Finding]:
        scope = self.scope_node
        body = scope.body if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else []
        self.block(body)
        return self.findings()

    # ------------------------------------------------------------------ roles of callees

    def _canon(self, dotted: str | None) -> str | None:
        if dotted and self.self_name and self.self_name != "self" and (
                dotted == self.self_name or dotted.startswith(self.self_name + ".")):
            return "self" + dotted[len(self.self_name):]
        return dotted

    def role(self, expr) -> str | None:
        """The role of a module expression (`netG`, `self.D_A`, an alias of one)."""
        dotted = self._canon(dotted_name(expr))
        if dotted is None:
            return None
        if dotted == "self":
            return self.names.class_role.get(id(self.cls)) if self.cls is not None else None
        if dotted in self.aliases:
            return self.aliases[dotted]
        return self.names.module_role(dotted)

    def _is_value(self, expr, known_tensor: bool) -> bool:
        """A tensor, not a module: the shared analysis says so, or it carries generator output
        (`d_interp = discriminator(interp)` is not a discriminator however it is named)."""
        if known_tensor:
            return True
        dotted = self._canon(dotted_name(expr))
        return bool(dotted is not None and self.env.get(dotted))

    def callee_role(self, func, info: CallInfo | None = None) -> tuple[str | None, str | None]:
        """(role, dotted name of the module) of a called expression."""
        info = info or CallInfo()
        dotted = self._canon(dotted_name(func))
        if dotted is not None and not self._is_value(func, False):
            if dotted == "self" and self.cls is not None:
                if id(self.cls) in self.names.class_calls_g:
                    return G, dotted
                return self.names.class_role.get(id(self.cls)), dotted
            if dotted in self.names.gen_funcs and "." not in dotted and dotted not in self.env:
                return G, None
            if (self.cls is not None and dotted.startswith("self.") and dotted.count(".") == 1
                    and dotted[5:] in self.names.gen_methods.get(id(self.cls), ())):
                return G, None
            r = self.role(func)
            if r is not None:
                return r, dotted
        if (isinstance(func, ast.Attribute) and func.attr not in _MODULE_METHODS
                and not self._is_value(func.value, info.receiver_tensor)):
            # A method that runs a module: `netD.forward(x)`, `netG.generate_images(n)`,
            # `netD.main(x)`.
            r = self.role(func.value)
            if r is not None:
                return r, self._canon(dotted_name(func.value))
        return None, None

    # ------------------------------------------------------------------ statements

    def block(self, body) -> None:
        for st in body:
            self.stmt(st)

    def stmt(self, st) -> None:
        self._stmt = st
        t = type(st)
        if t is ast.Assign:
            v = self.eval(st.value)
            for target in st.targets:
                self.bind(target, v, st.value)
            if isinstance(st.value, ast.Call):
                src = self.sources.get(id(st.value))
                if src is not None and src.binding is None and len(st.targets) == 1 and isinstance(
                        st.targets[0], (ast.Name, ast.Attribute)):
                    src.binding = st
            self._alias(st)
        elif t is ast.AnnAssign:
            if st.value is not None:
                self.bind(st.target, self.eval(st.value), st.value)
        elif t is ast.AugAssign:
            v = self.eval(st.value) | self.eval(st.target)
            self.bind(st.target, v, None)
        elif t in (ast.Expr, ast.Return):
            if st.value is not None:
                self.eval(st.value)
        elif t is ast.If:
            self.eval(st.test)
            self._branches(st, [st.body, st.orelse])
        elif t in (ast.For, ast.AsyncFor, ast.While):
            self.loop(st)
        elif t in (ast.With, ast.AsyncWith):
            for item in st.items:
                v = self.eval(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, v, None)
            self.block(st.body)
        elif t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            self.block(st.body)
            bodies = [h.body for h in st.handlers] + [st.orelse]
            self._branches(st, bodies, keep_current=True)
            self.block(st.finalbody)
        elif t.__name__ == "Match":
            self.eval(st.subject)
            self._branches(st, [c.body for c in st.cases], keep_current=True)
        elif t is ast.Delete:
            for target in st.targets:
                if isinstance(target, ast.Name):
                    self.env.pop(target.id, None)
        # FunctionDef / ClassDef: scopes of their own.  Import, Pass, ...: nothing to track.

    def _branches(self, st, bodies, keep_current: bool = False) -> None:
        start_env, start_frozen, start_all = dict(self.env), set(self.frozen), self.frozen_all_g
        outs = [(dict(self.env), set(self.frozen), self.frozen_all_g)] if keep_current else []
        for i, body in enumerate(bodies):
            self.env, self.frozen, self.frozen_all_g = dict(start_env), set(start_frozen), start_all
            self.branches.append((id(st), i))
            self.block(body)
            self.branches.pop()
            outs.append((self.env, self.frozen, self.frozen_all_g))
        env: dict = {}
        frozen: set = set()
        all_g = False
        for e, f, a in outs:
            for k, v in e.items():
                env[k] = env.get(k, EMPTY) | v
            frozen |= f
            all_g = all_g or a
        self.env, self.frozen, self.frozen_all_g = env, frozen, all_g

    def loop(self, st) -> None:
        is_for = not isinstance(st, ast.While)
        header = self.eval(st.iter if is_for else st.test)
        if is_for:
            self._freeze_loop(st)
        if self._depth < _MAX_LOOP_PREPASS:
            self._depth += 1
            saved = self.recording
            self.recording = False
            entry = dict(self.env)
            if is_for:
                self.bind(st.target, header, None)
            self.loops.append(st)
            self.block(st.body)
            self.loops.pop()
            for k, v in entry.items():
                self.env[k] = self.env.get(k, EMPTY) | v
            self.recording = saved
            self._depth -= 1
        entry = dict(self.env)
        if is_for:
            self.bind(st.target, header, None)
        self.loops.append(st)
        self.block(st.body)
        self.loops.pop()
        for k, v in entry.items():
            self.env[k] = self.env.get(k, EMPTY) | v
        self.block(st.orelse)

    def _freeze_loop(self, st) -> None:
        """`for p in netG.parameters(): p.requires_grad = False` freezes netG."""
        it = st.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "parameters"
                and isinstance(st.target, ast.Name)):
            return
        owner = self._canon(dotted_name(it.func.value))
        if owner is None or self.role(it.func.value) != G:
            return
        p = st.target.id
        for n in ast.walk(ast.Module(body=st.body, type_ignores=[])):
            flag = None
            if isinstance(n, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)
                    and t.value.id == p for t in n.targets):
                flag = _const(n.value)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_"
                  and isinstance(n.func.value, ast.Name) and n.func.value.id == p):
                flag = _const(n.args[0]) if n.args else True
            if isinstance(flag, bool):
                self._set_frozen(owner, not flag)

    def _set_frozen(self, owner: str, frozen: bool) -> None:
        if frozen:
            self.frozen.add(_norm(owner))
        else:
            self.frozen.discard(_norm(owner))

    def _alias(self, st: ast.Assign) -> None:
        """`G = self.GAN.G` names a module: keep its role for the local name."""
        if len(st.targets) != 1 or not isinstance(st.targets[0], ast.Name):
            return
        name = st.targets[0].id
        value = st.value
        if isinstance(value, ast.IfExp):
            roles = {self.role(value.body), self.role(value.orelse)}
            r = roles.pop() if len(roles) == 1 else None
        elif isinstance(value, (ast.Name, ast.Attribute)):
            r = self.role(value)
        else:
            r = None
        if r is not None and name_role(name) is None:
            self.aliases[name] = r
        else:
            self.aliases.pop(name, None)

    def bind(self, target, v: frozenset, value) -> None:
        t = type(target)
        if t is ast.Name:
            self.env[target.id] = v
            prefix = target.id + "."
            for k in [k for k in self.env if k.startswith(prefix)]:
                del self.env[k]
        elif t is ast.Attribute:
            key = self._canon(dotted_name(target))
            if key is not None:
                self.env[key] = v
        elif t in (ast.Tuple, ast.List):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and not any(
                    isinstance(e, ast.Starred) for e in target.elts + value.elts):
                for e, ve in zip(target.elts, value.elts):
                    self.bind(e, self.eval(ve), ve)
                return
            for e in target.elts:
                self.bind(e, v, None)
        elif t is ast.Starred:
            self.bind(target.value, v, None)
        elif t is ast.Subscript:
            # `fakes[i] = netG(z)`: the container now holds generator output too.
            key = self._canon(dotted_name(target.value))
            if key is not None:
                self.env[key] = self.env.get(key, EMPTY) | v

    # ------------------------------------------------------------------ expressions

    def _stmt_no_grad(self) -> bool:
        return self.stmt_no_grad.get(id(self._stmt), False)

    def eval(self, node) -> frozenset:
        if node is None:
            return EMPTY
        v = self._eval(node)
        self._prov[id(node)] = v
        return v

    def _eval(self, node) -> frozenset:
        t = type(node)
        if t is ast.Name:
            v = self.env.get(node.id)
            return v if v is not None else EMPTY
        if t is ast.Attribute:
            return self._attribute(node)
        if t is ast.Call:
            return self.call(node)
        if t is ast.Constant or t is ast.JoinedStr or t is ast.Lambda:
            return EMPTY
        if t is ast.Compare:
            self.eval(node.left)
            for c in node.comparators:
                self.eval(c)
            return EMPTY
        if t is ast.NamedExpr:
            v = self.eval(node.value)
            self.bind(node.target, v, node.value)
            return v
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            saved = dict(self.env)
            for gen in node.generators:
                self.bind(gen.target, self.eval(gen.iter), None)
                for c in gen.ifs:
                    self.eval(c)
            if t is ast.DictComp:
                v = self.eval(node.key) | self.eval(node.value)
            else:
                v = self.eval(node.elt)
            self.env = saved
            return v if not self._stmt_no_grad() else EMPTY
        if t is ast.Subscript:
            self.eval(node.slice)
            out = self.eval(node.value)
        else:
            out = EMPTY
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    out = out | self.eval(child)
        if self._stmt_no_grad() and t not in (ast.Tuple, ast.List, ast.Starred, ast.IfExp, ast.BoolOp):
            return EMPTY
        return out

    def _attribute(self, node: ast.Attribute) -> frozenset:
        if node.attr in _CUTTING_ATTRS:
            self.eval(node.value)
            return EMPTY
        key = self._canon(dotted_name(node))
        if key is not None:
            v = self.env.get(key)
            if v is not None:
                return v
            if self.cls is not None and key.startswith("self.") and key.count(".") == 1:
                call = self.names.class_attr_g.get(id(self.cls), {}).get(key[5:])
                if call is not None:
                    return frozenset({self._source(call, foreign=True)})
        return self.eval(node.value)

    def _source(self, call: ast.Call, foreign: bool = False) -> GenSource:
        src = self.sources.get(id(call))
        if src is None:
            src = GenSource(call, tuple(id(lp) for lp in self.loops) if not foreign else (), foreign)
            self.sources[id(call)] = src
        return src

    def _event(self, kind: str, node, **kw) -> Event | None:
        if not self.recording:
            return None
        e = Event(kind, node, len(self.events), tuple(id(lp) for lp in self.loops), tuple(self.branches), **kw)
        self.events.append(e)
        return e

    def call(self, node: ast.Call) -> frozenset:
        info = self.calls.get(id(node)) or CallInfo()
        func = node.func
        recv = self.eval(func.value) if isinstance(func, ast.Attribute) else EMPTY
        args = [self.eval(a) for a in node.args]
        kws = {kw.arg: self.eval(kw.value) for kw in node.keywords}
        every = recv.union(*args, *kws.values())
        dotted = dotted_name(func) or ""
        qual = info.qual or ""
        m = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""

        # --- gradient computations: backward, autograd.grad
        if qual in ("torch.autograd.backward",) or dotted.endswith("autograd.backward"):
            prov = args[0] if args else kws.get("tensors", EMPTY)
            self._backward(node, prov, node.args[0] if node.args else _kw(node, "tensors"),
                           _kw(node, "retain_graph") or (node.args[2] if len(node.args) > 2 else None),
                           _kw(node, "create_graph"))
            return EMPTY
        if qual.endswith("autograd.grad") or dotted.endswith("autograd.grad"):
            inputs = kws.get("inputs", args[1] if len(args) > 1 else EMPTY)
            self._event("penalty", node, prov=inputs)
            return every if not info.no_grad else EMPTY
        if m == "backward" and isinstance(func, ast.Attribute):
            loss = func.value if recv else (node.args[0] if node.args else None)
            retain = _kw(node, "retain_graph")
            if retain is None and recv and len(node.args) > 1:
                retain = node.args[1]
            self._backward(node, every, loss, retain, _kw(node, "create_graph"))
            return EMPTY
        if m == "update_params" and isinstance(func, ast.Attribute) and node.args:
            # MMEngine's OptimWrapper: backward, step and zero_grad in one call.
            self._backward(node, args[0], node.args[0], None, None)
            _, role = self.names.optimizer_role(self._canon(dotted_name(func.value)))
            self._event("step", node, role=role)
            return EMPTY
        if m == "manual_backward" or (m.endswith(("backward", "backwards")) and not m.startswith("backward_")
                                      and node.args):
            self._backward(node, every, node.args[0] if node.args else None, _kw(node, "retain_graph"),
                           _kw(node, "create_graph"))
            return EMPTY

        # --- optimizer bookkeeping
        if isinstance(func, ast.Attribute) and m == "step":
            opt = func.value
            if "scaler" in words(dotted_name(opt) or "") and node.args:
                opt = node.args[0]
            is_opt, role = self.names.optimizer_role(self._canon(dotted_name(opt)))
            if is_opt:
                self._event("step", node, role=role)
            return EMPTY
        if isinstance(func, ast.Attribute) and m == "zero_grad":
            owner = self._canon(dotted_name(func.value))
            is_opt, role = self.names.optimizer_role(owner)
            if not is_opt:
                role = self.role(func.value)
            self._event("zero", node, role=role)
            return EMPTY
        if self._freezing(node, func, m):
            return EMPTY

        # --- generator and discriminator calls
        role, owner = self.callee_role(func, info)
        if role == G:
            if info.no_grad:
                return EMPTY
            if info.frozen or self.frozen_all_g or (owner is not None and _norm(owner) in self.frozen):
                return every - recv
            return (every - recv) | {self._source(node)}
        if role == D:
            if info.no_grad:
                return EMPTY
            if isinstance(func, ast.Attribute) and self.role(func) is None and any(
                    w in ("penalty", "gp", "r1", "grad", "gradient", "reg") for w in words(func.attr)):
                self._event("penalty", node, prov=every)
                return every
            if _const(_kw(node, "detach")) is True:
                return EMPTY
            carried = [a for a, p in zip(node.args, args) if self._has_gen(p)]
            carried += [kw.value for kw in node.keywords if self._has_gen(kws[kw.arg])]
            inputs = frozenset().union(*args, *kws.values())
            if not carried or any(isinstance(a, DiscCall) for a in inputs):
                # Real data only, or the rest of a discriminator forward already reported
                # (`netD.head(netD.features(fake))`).
                return inputs
            dc = self.dcalls.get(id(node))
            if dc is None:
                dc = DiscCall(node)
                self.dcalls[id(node)] = dc
            if self.recording:
                dc.targets = [t for a in carried for t in self._detach_targets(a)]
            dc.sources |= {a for a in inputs if isinstance(a, GenSource)}
            if self.recording and dc.event is None:
                dc.event = self._event("dcall", node)
            return inputs | {dc}

        # --- everything else
        if isinstance(func, ast.Attribute) and m in _CUTTING_METHODS:
            return EMPTY
        if isinstance(func, ast.Name) and m in _NON_TENSOR_BUILTINS:
            return EMPTY
        if qual in api.NON_TENSOR_FUNCS or qual in api.NO_GRAD_FUNCS or qual in _NEW_VALUE_FUNCS:
            # `torch.zeros_like(fake)`, `torch.multinomial(probs, 1)`: new values, no graph.
            return EMPTY
        if any(w in ("penalty", "gp", "r1") for w in words(m)):
            self._event("penalty", node, prov=every)
        elif not qual.startswith("torch.") and self._penalty_shape(args, list(kws.values())):
            # `gradient_penalty(interpolates, d_interpolates)`: a helper that gets both the input
            # and the output of a discriminator call differentiates one by the other.
            self._event("penalty", node, prov=every)
        if info.no_grad:
            return EMPTY
        return every

    def _detach_targets(self, arg) -> list:
        """The parts of a discriminator argument to wrap in `.detach()`: through list and tuple
        literals, `torch.cat`/`torch.stack` and arithmetic down to the operands that carry
        generator output (`torch.cat([fake, labels], 1)` -> `fake`)."""
        out = []
        stack = [arg]
        while stack:
            e = stack.pop()
            if not self._has_gen(self._prov.get(id(e), EMPTY)):
                continue
            if isinstance(e, (ast.List, ast.Tuple)):
                stack.extend(reversed(e.elts))
            elif isinstance(e, ast.Starred):
                stack.append(e.value)
            elif isinstance(e, ast.BinOp):
                stack.extend((e.right, e.left))
            elif isinstance(e, ast.UnaryOp):
                stack.append(e.operand)
            elif isinstance(e, ast.IfExp):
                stack.extend((e.orelse, e.body))
            elif (isinstance(e, ast.Call) and (self.calls.get(id(e)) or CallInfo()).qual in _CONCAT
                  and not any(isinstance(a, ast.Starred) for a in e.args)):
                stack.extend(reversed(e.args))
            else:
                out.append(e)
        return out or [arg]

    @staticmethod
    def _has_gen(prov) -> bool:
        return any(isinstance(a, GenSource) for a in prov)

    def _penalty_shape(self, args, kws) -> bool:
        provs = [p for p in args + kws if p]
        outs = [dc for p in provs for dc in p if isinstance(dc, DiscCall)]
        if not outs:
            return False
        for p in provs:
            gens = {a for a in p if isinstance(a, GenSource)}
            if gens and not any(isinstance(a, DiscCall) for a in p):
                if any(gens <= dc.sources for dc in outs):
                    return True
        return False

    def _backward(self, node, prov, loss_expr, retain_expr, create_expr) -> None:
        retain: bool | None
        if retain_expr is None:
            retain = _const(create_expr) is True
        else:
            c = _const(retain_expr)
            retain = c if isinstance(c, bool) else None
        name = self._canon(dotted_name(loss_expr)) if loss_expr is not None else None
        if name is None and isinstance(loss_expr, ast.Call):
            # `scaler.scale(errD).backward()`
            for a in loss_expr.args:
                name = self._canon(dotted_name(a))
                if name:
                    break
        self._event("backward", node, prov=prov, retain=retain, name_role=name_role(name, verbs_ok=True))

    def _freezing(self, node: ast.Call, func, m: str) -> bool:
        """`netG.requires_grad_(False)`, `requires_grad(netG, False)`, `set_requires_grad(
        [netD], True)`, `self.toggle_optimizer(opt_d)`: record which generator is frozen."""
        if m == "requires_grad_" and isinstance(func, ast.Attribute):
            owner = self._canon(dotted_name(func.value))
            if owner is not None and self.role(func.value) == G:
                flag = _const(node.args[0]) if node.args else True
                if isinstance(flag, bool):
                    self._set_frozen(owner, not flag)
                return True
            return False
        if m in ("toggle_optimizer", "untoggle_optimizer") and node.args:
            _, role = self.names.optimizer_role(self._canon(dotted_name(node.args[0])))
            if role == D:
                self.frozen_all_g = m == "toggle_optimizer"
            return True
        ws = words(m)
        if not ({"requires", "freeze", "unfreeze"} & set(ws) or ("toggle" in ws and "grad" in ws)
                or ("set" in ws and "grad" in ws)):
            return False
        flags = [_const(a) for a in node.args if isinstance(_const(a), bool)]
        kwflag = [_const(kw.value) for kw in node.keywords if isinstance(_const(kw.value), bool)]
        flag = (flags or kwflag or [None])[0]
        if "unfreeze" in ws:
            frozen = False
        elif "freeze" in ws:
            frozen = True if flag is None else flag
        elif flag is None:
            return False
        else:
            frozen = not flag
        mods = []
        for a in node.args:
            for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a]):
                if isinstance(e, (ast.Name, ast.Attribute)) and self.role(e) == G:
                    mods.append(self._canon(dotted_name(e)))
        for owner in mods:
            if owner is not None:
                self._set_frozen(owner, frozen)
        return bool(mods)

    # ------------------------------------------------------------------ conclusions

    @staticmethod
    def _exclusive(a: Event, b: Event) -> bool:
        pa = dict(a.branches)
        return any(k in pa and pa[k] != i for k, i in b.branches)

    def _after(self, b: Event) -> list[Event]:
        """Events that may run after `b`: the rest of its innermost loop, the next iteration up to
        `b`, then what follows the loop."""
        evs = [e for e in self.events if e is not b and not self._exclusive(e, b)]
        if not b.loops:
            return [e for e in evs if e.index > b.index]
        inner = b.loops[-1]
        in_loop_after = [e for e in evs if e.index > b.index and inner in e.loops]
        wrap = [e for e in evs if e.index < b.index and inner in e.loops]
        rest = [e for e in evs if e.index > b.index and inner not in e.loops]
        return in_loop_after + wrap + rest

    def _update_role(self, b: Event) -> str | None:
        """D: `b` is a discriminator update; G: a generator update; "GD": both; None: unknown."""
        roles = set()
        seen_step = False
        for e in self._after(b):
            if e.kind == "backward" and seen_step:
                # Backwards before the first step accumulate into the same update
                # (`errD_real.backward(); errD_fake.backward(); optimizerD.step()`).
                break
            if e.kind == "step":
                roles.add(e.role)
                seen_step = True
        known = roles - {None}
        if known == {D}:
            return D
        if known == {G}:
            return G
        if known == {G, D}:
            return "GD"
        if b.name_role is not None:
            return b.name_role
        scope_name = getattr(self.scope_node, "name", "")
        return name_role(scope_name, verbs_ok=True)

    def findings(self) -> list[Finding]:
        backwards = [e for e in self.events if e.kind == "backward"]
        if not backwards or not self.dcalls:
            return []
        roles = {id(b): self._update_role(b) for b in backwards}
        penalties = [e for e in self.events if e.kind == "penalty"]
        out = []
        for dc in sorted(self.dcalls.values(), key=lambda d: (d.node.lineno, d.node.col_offset)):
            if dc.event is None or not dc.sources:
                continue
            using = [b for b in backwards if dc in b.prov and not self._exclusive(b, dc.event)]
            d_updates = [b for b in using if roles[id(b)] == D]
            if not d_updates:
                continue
            gens = dc.sources
            consequence = self._consequence(d_updates, gens, backwards)
            reuse = any(roles[id(b)] != D for b in using)
            needs_graph = any(gens & p.prov for p in penalties)
            if reuse:
                fix, bindings = "none_reuse", []
            elif needs_graph:
                bindings = self._binding_fix(gens, backwards, roles)
                fix = "binding" if bindings else "none_gp"
            else:
                fix, bindings = "call", []
            out.append(Finding(dc, consequence, fix, bindings))
        return out

    def _consequence(self, d_updates, gens, backwards) -> str:
        best = None
        order = ("crash_later", "crash_here", "crash_loop", "wrong_retain", "wrong", "waste", "unknown")
        for b in d_updates:
            c = self._consequence_of(b, gens, backwards)
            if best is None or order.index(c) < order.index(best):
                best = c
        return best

    def _consequence_of(self, b: Event, gens, backwards) -> str:
        for b2 in backwards:
            if b2 is b or self._exclusive(b, b2) or not (gens & {a for a in b2.prov if isinstance(a, GenSource)}):
                continue
            if b2.index > b.index and b.retain is False:
                return "crash_later"
            if b2.index < b.index and b2.retain is False:
                return "crash_here"
        if b.retain is False and b.loops and any(
                not s.foreign and b.loops[-1] not in s.loops for s in gens):
            return "crash_loop"
        zeroed = False
        for e in self._after(b):
            if e.kind == "zero" and e.role in (G, None):
                zeroed = True
            elif e.kind == "step" and e.role == G:
                if not zeroed:
                    return "wrong_retain" if b.retain else "wrong"
                break
        if all(s.foreign for s in gens):
            return "unknown"
        return "waste"

    def _binding_fix(self, gens, backwards, roles) -> list[GenSource]:
        """Where `fake = netG(z)` can become `fake = netG(z).detach().requires_grad_()`: every
        source is a plain assignment here, and no generator update uses it."""
        out = []
        for s in gens:
            if s.foreign or s.binding is None or s.binding.value is not s.node:
                return []
            for b in backwards:
                if s in b.prov or any(isinstance(a, DiscCall) and s in a.sources for a in b.prov):
                    if roles[id(b)] != D:
                        return []
            out.append(s)
        return sorted(out, key=lambda s: (s.node.lineno, s.node.col_offset))
