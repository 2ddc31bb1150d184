"""GAN training steps: which modules are generators and discriminators, and where a generator's
output reaches a discriminator update without being detached (family TNS3).

Two parts:

- `GanNames`: a cheap syntactic pass over the whole file that decides the role ("G" or "D") of
  module names, from the names themselves (`netG`, `G_AB`, `self.discriminator`, `model.D`), from
  the optimizer their parameters are handed to (`optimizerG = Adam(decoder.parameters())`) and
  from configuration (`Options.generator_names` / `discriminator_names`).
- `GanDomain`: a domain of the walker (walker.py) that tracks, through any expression that keeps
  the autograd graph (aliases, tuple unpacking, arithmetic, torch.cat, indexing, helper calls;
  `.detach()`, `.data`, `.item()` and no-grad regions cut it), which generator calls and which
  discriminator calls fed with generator output a value depends on.  It records backward
  calls, optimizer steps and zero_grad calls as events placed by the walker (order, loops,
  branches), and from them classifies each backward as a discriminator update or not, and says
  what goes wrong when a discriminator update reaches the generator.  What other functions and
  methods of the file yield (generator output returned by `sample()`, `self.fake_B` set in
  `forward`) comes from the walker's summaries of them.
"""

from __future__ import annotations

import ast
import os
import re

from . import torchapi as api
from .astutil import (all_nodes, bind_arguments, call_constants, child_nodes, decorator_names, dotted_name,
                      is_plain_method, left_bool_default, parameter_names, walk)
from .facts import CLASS, FUNCTION, MODULE, OBJECT, PARTIAL_TAG, TENSOR, UNKNOWN, Grad
from .lazytree import unread_without
from .names import D, G, configured_roles, may_have_both_roles, may_have_structure, words
from .names import D_WORDS as _D_WORDS
from .names import G_WORDS as _G_WORDS
from .summaries import inherits_from, plain_decorators, project_bases
from .walker import Domain, compatible
from ..source import BEFORE_FIRST_LETTER, POSSESSIVE, LazyPattern

# (Tried once a run of word characters and dots, from its start: what precedes the run's first
# ASCII letter or `_` (digits, dots, other letters) is passed over without giving it back, and
# the name from there to the run's end is what a try at the first letter would match, or none; a
# try at each position read to the run's end again, quadratic in a long name.  The same matches
# as `([A-Za-z_][\w.]*)\s*\(`; possessive where Python has it, 3.11.)
_CALLEE = LazyPattern(r"(?<![\w.])%s([A-Za-z_][\w.]*%s)\s*\(" % (BEFORE_FIRST_LETTER, POSSESSIVE))
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
    "extra_repr __repr__ get_submodule get_parameter "
    # A configuration named after a role (`generator.get("num_classes")`): dict methods.
    "get keys items values pop update copy setdefault".split()
)
# Tensor methods and attributes whose result does not carry the autograd graph.
_CUTTING_METHODS = frozenset(api.NO_GRAD_METHODS | api.NON_TENSOR_METHODS | {"detach", "detach_"})
# List methods that add their (last) argument to the list.
_ADDING_METHODS = frozenset(("append", "extend", "insert"))
_CUTTING_ATTRS = frozenset(api.NON_TENSOR_ATTRS | {"data", "grad"})
_NON_TENSOR_BUILTINS = frozenset(
    "len int float str bool print isinstance issubclass range round hash id repr format type callable "
    "hasattr getattr setattr abs".split()
)
_NO_GRAD_HINTS = ("no_grad", "inference_mode")
# Calls whose result never carries the graph of their arguments (`torch.as_tensor`, `torch.Tensor`
# and `torch.complex` do, so they are not here; `Variable(x, requires_grad=True)` is a new leaf
# that shares x's memory).
_NEW_VALUE_FUNCS = frozenset(
    "torch." + n
    for n in "tensor zeros_like ones_like empty_like full_like rand_like randn_like randint_like multinomial "
             "bernoulli poisson autograd.Variable autograd.variable.Variable".split()
)
# What GanScope._file_callee answers for a call that runs no helper it reads.
_NO_CALLEE = (None, 0, None)
_CONCAT = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})


def gan_key(expr) -> str | None:
    """The name of a module or optimizer expression: `netG`, `self.D_A`, and for modules held in
    dicts `D['model']`, `nets['G'].main` (a subscript by a constant)."""
    d = dotted_name(expr)
    if d is not None:
        return d
    if isinstance(expr, ast.Subscript):
        index = expr.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, (str, int)) and not isinstance(index.value, bool):
            base = gan_key(expr.value)
            return f"{base}[{index.value!r}]" if base is not None else None
        return None
    if isinstance(expr, ast.Attribute):
        base = gan_key(expr.value)
        return f"{base}.{expr.attr}" if base is not None else None
    return None


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


_CLASS_NAME = LazyPattern(r"^_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")


def is_class_name(name: str) -> bool:
    """`Generator`, `NLayerDiscriminator`: calling it constructs a module, it does not run one
    (`G`, `G_AB`, `D_A`, `netG` are instances)."""
    return bool(_CLASS_NAME.match(name)) and not name.isupper()


def _norm(dotted: str) -> str:
    return dotted[5:] if dotted.startswith("self.") else dotted


def _const(node) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _kw(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


# --------------------------------------------------------------------------- file-level names


# What a statement of a function must name for the scan of a file to read it: an optimizer of
# a module's parameters (`opt_g = Adam(netG.parameters())`, `GanNames._associate`), or a class.
_SCANNED_WORDS = ("parameters", "class")


class GanNames:
    """Roles of the names in one file (see the module docstring)."""

    def __init__(self, tree: ast.Module, generator_names=(), discriminator_names=(), text: str | None = None,
                 screened: bool = False) -> None:
        self.cfg = configured_roles(generator_names, discriminator_names)
        # (id(def), parameter) -> the generator calls whose output the file's calls of that
        # function pass in it (`d_step(real, netG(z))`): the function starts with them there.
        self.passed: dict[tuple, set] = {}
        # (id(def), line of a discriminator call in it) -> what the discriminator step the
        # function takes there on what a call passes does in that caller (GanScope.conclude:
        # "crash_later", ...): the callers are walked first, the function's finding then says it.
        self.after_calls: dict[tuple, str] = {}
        self.module_assoc: dict[str, str] = {}  # normalised module name -> role, from optimizers
        self.opt_assoc: dict[str, str] = {}  # normalised optimizer name -> role
        self.class_role: dict[int, str] = {}  # class id -> role of `self`
        self.opt_modules: dict[str, list] = {}  # optimizer name -> the modules it steps
        self.active = False
        self._roles: dict[str, str | None] = {}
        # (`screened`: the text passed these tests already, names.may_be_gan)
        if text is None or screened or may_have_both_roles(text, self.cfg) or may_have_structure(text):
            self._scan(tree, text)

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

    def _scan(self, tree: ast.Module, text: str | None) -> None:
        assigns, classes = [], []
        stack = list(tree.body)  # statements only: expressions are not walked here
        while stack:
            node = stack.pop()
            t = type(node)
            if t is ast.Assign:
                if isinstance(node.value, ast.Call):
                    assigns.append(node)
                continue
            if t is ast.ClassDef:
                classes.append(node)
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                sub = getattr(node, name, None)
                if isinstance(sub, list):  # function bodies too (parsed here if not yet)
                    if unread_without(sub, _SCANNED_WORDS):
                        continue  # (no optimizer of a module's parameters in it, and no class)
                    stack.extend(sub)
        for a in assigns:
            self._associate(a)
        self._roles.clear()
        saw = set()
        # The callees of the file, from its text (a call in a comment only makes the file
        # looked at more closely): `netG(`, `self.D_A(`, `netD.forward(`.
        callees = set(_CALLEE.findall(text)) if text is not None else {
            gan_key(n.func) for n in all_nodes(tree) if isinstance(n, ast.Call)}
        for dotted in callees:
            if not dotted:
                continue
            r = self.module_role(dotted)
            if r is None and "." in dotted:
                owner, method = dotted.rsplit(".", 1)
                r = self.module_role(owner)
                if r is None and method == "step":
                    # `optimizer_D.step()`: a discriminator's step, whose discriminator call
                    # may be a helper's (`relativistic_d_loss(D, real, fake)` in losses.py).
                    r = self.optimizer_role(owner)[1]
            if r is not None:
                saw.add(r)
        class_roles = [role_of_words(words(c.name)) for c in classes]
        if G not in saw or not (D in saw or D in class_roles):
            saw |= self._structural_roles(tree)
        if G not in saw or not (D in saw or D in class_roles):
            return  # no generator call, or no discriminator: nothing to find in this file
        for c, r in zip(classes, class_roles):
            # `class NLayerDiscriminator(nn.Module)`; not `class DiscriminatorLoss`.
            if r is not None:
                self.class_role[id(c)] = r
        self.active = True

    def _associate(self, a: ast.Assign) -> None:
        if len(a.targets) != 1 or not isinstance(a.value, ast.Call):
            return
        opt = gan_key(a.targets[0])
        if opt is None:
            return
        mods = []
        for n in walk(a.value):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr in ("parameters", "named_parameters")):
                m = gan_key(n.func.value)
                if m is not None:
                    mods.append(m)
        if not mods:
            return
        self._roles.clear()
        is_opt, role = self.optimizer_role(opt)
        if not is_opt and not any(w in _OPT_WORDS for w in words(opt.rsplit(".", 1)[-1])):
            # `params = list(netG.parameters())` and the like: not an optimizer.
            callee = gan_key(a.value.func) or ""
            if not re.search(r"(Adam|SGD|RMSprop|Adagrad|Adadelta|Lion|LBFGS|Optim|optim\.)", callee):
                return
        self.opt_modules[_norm(opt)] = [_norm(m) for m in mods]
        if role is not None:
            for m in mods:
                if self.module_role(m) is None:
                    self.module_assoc[_norm(m)] = role
            self.opt_assoc[_norm(opt)] = role
            return
        roles = {self.module_role(m) for m in mods}
        if len(roles) == 1 and None not in roles:
            self.opt_assoc[_norm(opt)] = roles.pop()


    def _structural_roles(self, tree: ast.Module) -> set:
        """Roles from structure where names say nothing (`Q` with `Q_solver`, a critic `T`, modules
        held in dicts): of the modules that optimizers step, one whose output is fed to another's
        call is a generator, the other a discriminator.  Returns the roles found."""
        trained = {m for mods in self.opt_modules.values() for m in mods}
        if len(trained) < 2:
            return set()
        edges = set()  # (feeding module, fed module)

        def module_of(call):
            if not isinstance(call, ast.Call):
                return None
            k = gan_key(call.func)
            k = _norm(k) if k else None
            if k in trained:
                return k
            if isinstance(call.func, ast.Attribute) and call.func.attr == "forward":
                k = gan_key(call.func.value)
                k = _norm(k) if k else None
                return k if k in trained else None
            return None

        scopes = [tree.body] + [n.body for n in all_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for body in scopes:
            made: dict = {}  # local name -> the trained module whose call made it
            for node in _scope_nodes(body):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    m = module_of(node.value)
                    key = gan_key(node.targets[0])
                    if key is not None:
                        if m is not None:
                            made[key] = m
                        else:
                            made.pop(key, None)
                elif isinstance(node, ast.Call):
                    fed = module_of(node)
                    if fed is None:
                        continue
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        for n in all_nodes(arg):
                            src = module_of(n) if isinstance(n, ast.Call) else made.get(gan_key(n) or "")
                            if src is not None and src != fed:
                                edges.add((src, fed))
        feeders = {a for a, _ in edges}
        fed = {b for _, b in edges}
        found = set()
        for module in trained:
            role = G if module in feeders and module not in fed else D if module in fed and module not in feeders else None
            if role is not None and self.module_role(module) in (None, role):
                self.module_assoc[module] = role
                found.add(role)
        for opt, mods in self.opt_modules.items():
            roles = {self.module_assoc.get(m) for m in mods}
            if len(roles) == 1 and None not in roles and opt not in self.opt_assoc:
                self.opt_assoc[opt] = roles.pop()
        self._roles.clear()
        return found


def _scope_nodes(body: list):
    """The statements of a scope and the expressions in them, in source order (not nested
    functions or classes)."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield stmt
        for name in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(stmt, name, None)
            if type(sub) is list and sub and isinstance(sub[0], (ast.stmt, ast.excepthandler)):
                yield from _scope_nodes(sub if isinstance(sub[0], ast.stmt) else [s for h in sub for s in h.body])
        for child in child_nodes(stmt):
            if isinstance(child, ast.expr):
                for n in all_nodes(child):
                    if isinstance(n, ast.Call):
                        yield n


# --------------------------------------------------------------------------- the interpreter


class CallInfo:
    """What the value facts say of a call, at the state before its statement (asked lazily)."""

    __slots__ = ("no_grad", "qual", "_node", "_walker", "_state")

    def __init__(self, node, walker, state) -> None:
        self.no_grad = state.no_grad
        self.qual = walker.qualname(node.func, state)
        self._node, self._walker, self._state = node, walker, state

    @property
    def frozen(self) -> bool:
        """The callee is a module whose parameters are frozen."""
        func = self._node.func
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return False
        f = self._walker.fact(func, self._state)
        return f.kind == "module" and f.frozen

    @property
    def receiver_tensor(self) -> bool:
        """The receiver of `x.m(...)` is known to be a tensor, not a module."""
        func = self._node.func
        return isinstance(func, ast.Attribute) and self._walker.fact(func.value, self._state).kind == "tensor"


# Plain classes, compared by identity (a dataclass costs every start that loads this module
# half a millisecond to define).


def _binds_name(stmt, name: str, value) -> bool:
    """Whether `stmt` is `name = value` (one target)."""
    return type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name \
        and stmt.targets[0].id == name and stmt.value is value


class GenSource:
    """One generator call: the origin of generator output."""

    __slots__ = ("node", "loops", "foreign", "binding")

    def __init__(self, node: ast.Call, loops: tuple, foreign: bool = False) -> None:
        self.node = node
        self.loops = loops
        self.foreign = foreign  # produced by another method (`self.fake_B` set in `forward`)
        self.binding: ast.Assign | None = None  # `fake = netG(z)`: the statement that names it


# The consequences of a discriminator update through the generator, the most certain first.
_ORDER = ("crash_later", "crash_here", "crash_loop", "wrong_retain", "wrong", "neutral")


class Event:
    __slots__ = ("kind", "node", "index", "loops", "branches", "role", "prov", "retain", "name_role", "helper")

    def __init__(self, kind: str, node: ast.AST, index: int, loops: tuple, branches: tuple,
                 role: str | None = None, prov: frozenset = frozenset(), retain: bool | None = False,
                 name_role: str | None = None) -> None:
        self.kind = kind  # "backward", "step", "zero", "penalty", "dcall"
        self.node = node
        self.index = index
        self.loops = loops
        self.branches = branches
        self.role = role  # step / zero: whose optimizer or module
        self.prov = prov  # backward: what the loss depends on; penalty: its inputs
        self.retain = retain  # backward: retain_graph (None: not a constant)
        self.name_role = name_role  # backward: the role the loss's name gives it
        # backward: taken inside a function of the file the call passes generator output to
        # (id(def), line of its discriminator call): GanNames.after_calls
        self.helper = None


class DiscCall:
    """A discriminator call whose input carries generator output."""

    __slots__ = ("node", "sources", "targets", "event", "via", "penalty")

    def __init__(self, node: ast.Call) -> None:
        self.node = node
        self.sources: set = set()  # GenSource
        self.targets: list = []  # the parts of its arguments that carry it
        self.event: Event | None = None
        # A call of a function of the file that returns what a discriminator makes of one of
        # its parameters (`d_loss_fn(netD, real, fake)`): (the function, the line of that
        # discriminator call in it); None for a discriminator call itself.
        self.via: tuple | None = None
        # That function differentiates the discriminator with respect to the argument (a
        # gradient penalty): the argument must keep a graph.
        self.penalty = False


class ParamMark:
    """In a summary walk of a function, what its parameter `name` carries (whatever a call
    passes): followed like generator output, so that the summary can say which parameters reach
    a discriminator call whose output the function returns."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class ParamDisc:
    """In a summary walk: a discriminator call (`netD(fake)`) on what parameter `name` carries,
    or, with `module` set, a call of parameter `module` (`disc(fake)`, `disc` a parameter
    without a role of its own) on it; `line` is the call's."""

    __slots__ = ("name", "module", "line")

    def __init__(self, name: str, module: str | None, line: int) -> None:
        self.name = name
        self.module = module
        self.line = line


class Finding:
    __slots__ = ("dcall", "consequence", "fix", "bindings")

    def __init__(self, dcall: DiscCall, consequence: str, fix: str, bindings: list) -> None:
        self.dcall = dcall
        # "crash_later", "crash_here", "crash_loop", "wrong", "wrong_retain", "waste", "unknown"
        self.consequence = consequence
        self.fix = fix  # "call", "binding", "none_reuse", "none_gp"
        self.bindings = bindings  # GenSource for the "binding" fix


EMPTY = frozenset()


class GanState:
    """The domain's part of the program state: what each name carries (generator sources and
    discriminator calls), names that alias a module of a role, frozen generators."""

    __slots__ = ("env", "aliases", "frozen", "frozen_all_g")

    def __init__(self, env=None, aliases=None, frozen=None, frozen_all_g=False) -> None:
        self.env: dict[str, frozenset] = env if env is not None else {}
        self.aliases: dict[str, str] = aliases if aliases is not None else {}  # local name -> role
        self.frozen: set[str] = frozen if frozen is not None else set()
        self.frozen_all_g = frozen_all_g

    def copy(self) -> GanState:
        return GanState(dict(self.env), dict(self.aliases), set(self.frozen), self.frozen_all_g)

    def join(self, other: GanState) -> GanState:
        env = dict(self.env)
        for k, v in other.env.items():
            env[k] = env.get(k, EMPTY) | v
        aliases = {k: r for k, r in self.aliases.items() if other.aliases.get(k, r) == r}
        aliases.update((k, r) for k, r in other.aliases.items() if k not in self.aliases)
        # Frozen where frozen on every path (a generator thawed in the loop's body is not frozen
        # at its head in the next iteration), as generator output is carried where it may be.
        return GanState(env, aliases, self.frozen & other.frozen, self.frozen_all_g and other.frozen_all_g)

    def __eq__(self, other) -> bool:
        return (isinstance(other, GanState) and self.env == other.env and self.aliases == other.aliases
                and self.frozen == other.frozen and self.frozen_all_g == other.frozen_all_g)

    __hash__ = None


class GanScope:
    """What the domain tracks in one scope (a function or the module body): the transfer
    functions the walker calls, the events, and the findings drawn at the end."""

    def __init__(self, names: GanNames, walker, frame) -> None:
        self.names = names
        self.walker = walker
        self.frame = frame
        self.scope_node = frame.scope.node
        self.cls_info = frame.scope.cls
        self.cls = self.cls_info.node if self.cls_info is not None else None
        self.self_name = None
        if self.cls is not None and is_plain_method(self.scope_node):
            params = self.scope_node.args.posonlyargs + self.scope_node.args.args
            if params:
                self.self_name = params[0].arg
        self.st: GanState = GanState()
        self.state = None  # the walker's state during a transfer function
        self.events: list[Event] = []
        self.sources: dict[int, GenSource] = {}
        self.dcalls: dict[int, DiscCall] = {}
        self._prov: dict[int, frozenset] = {}  # expression id -> what it carried when evaluated
        self.findings: list[Finding] = []
        self._statement_call = None  # the call of an expression statement being evaluated
        # What the scope yields to others (its summary): generator output returned, and the
        # `self.<attr>` it sets to generator output.
        self.returns_gen = False
        self.self_attrs: dict[str, ast.Call] = {}
        # In a summary walk: {(parameter, module parameter or None): line} for each discriminator
        # call on what a parameter carries whose output the function returns (ParamDisc).
        self.returns_disc: dict = {}
        # In a summary walk: the parameters whose values reach a `return` (or a `yield`), by the
        # ParamMark each carries: an argument for any other parameter is not what a call gives
        # back (`pool.query(fake)` returning `torch.cat` of `image.data`s).
        self.returns_params: set = set()
        # In a summary walk: a `return` gives a tensor that carries nothing of the parameters
        # nor of a generator (`torch.cat` of `image.data`s): where another returns a parameter as it came (an image pool's
        # `if self.pool_size == 0: return images`), which one a call takes depends on the
        # callee's state (_given_back).
        self.returns_cut = False

    # the current state's parts
    @property
    def env(self) -> dict:
        return self.st.env

    @env.setter
    def env(self, value) -> None:
        self.st.env = value

    @property
    def aliases(self) -> dict:
        return self.st.aliases

    @property
    def frozen(self) -> set:
        return self.st.frozen

    @property
    def frozen_all_g(self) -> bool:
        return self.st.frozen_all_g

    @frozen_all_g.setter
    def frozen_all_g(self, value: bool) -> None:
        self.st.frozen_all_g = value

    @property
    def recording(self) -> bool:
        return self.frame.recording

    def enter(self, state) -> None:
        self.state = state
        self.st = state.doms[GanDomain.key]

    def info(self, node: ast.Call) -> CallInfo:
        return CallInfo(node, self.walker, self.state)

    # ------------------------------------------------------------------ roles of callees

    def _canon(self, dotted: str | None) -> str | None:
        if dotted and self.self_name and self.self_name != "self" and (
                dotted == self.self_name or dotted.startswith(self.self_name + ".")):
            return "self" + dotted[len(self.self_name):]
        return dotted

    def role(self, expr) -> str | None:
        """The role of a module expression (`netG`, `self.D_A`, an alias of one)."""
        dotted = self._canon(gan_key(expr))
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
        dotted = self._canon(gan_key(expr))
        if dotted is None:
            return False
        v = self.env.get(dotted)
        # (What a parameter carries in a summary walk says nothing of what it is.)
        return bool(v) and any(type(a) is not ParamMark and type(a) is not ParamDisc for a in v)

    def callee_role(self, func, info: CallInfo | None = None) -> tuple[str | None, str | None]:
        """(role, dotted name of the module) of a called expression."""
        dotted = self._canon(gan_key(func))
        if dotted is not None and not self._is_value(func, False):
            if dotted == "self" and self.cls is not None:
                if self._method_returns_gen("forward"):
                    return G, dotted
                return self.names.class_role.get(id(self.cls)), dotted
            if "." not in dotted and dotted not in self.env and self._function_returns_gen(dotted):
                return G, None
            if isinstance(func, (ast.Name, ast.Attribute)) and dotted not in self.env:
                entity = self._project_function(func)
                if entity is not None and entity.gan_helper()[0]:
                    # A function of another module that returns generator output it makes
                    # (`sample(netG, n)` with `def sample(netG, n): return netG(noise(n))`).
                    return G, None
            if (self.cls is not None and dotted.startswith("self.") and dotted.count(".") == 1
                    and self._method_returns_gen(dotted[5:])):
                return G, None
            if type(func) is ast.Name and dotted not in self.env and dotted not in self.aliases \
                    and self.walker.fact(func, self.state).kind == FUNCTION:
                # A function (`def g(x): return x * 2`), not a module its name may give a role:
                # what it returns is what its summary says (above).
                return None, None
            r = self.role(func)
            if r is not None:
                return r, dotted
        if (isinstance(func, ast.Attribute) and func.attr not in _MODULE_METHODS
                and not self._is_value(func.value, info is not None and info.receiver_tensor)):
            # A method that runs a module: `netD.forward(x)`, `netG.generate_images(n)`,
            # `netD.main(x)`.
            r = self.role(func.value)
            if r is not None:
                recv = self.walker.fact(func.value, self.state)
                if recv.kind == OBJECT and recv.node is not None:
                    # Not a module, whatever its name (`gen_x_buffer.push_and_pop(fake)`, a
                    # replay buffer's): a method of a class of the file gives generator output
                    # where its summary says it makes some.
                    info_ = self.walker.classes.get(id(recv.node)) if isinstance(recv.node, ast.ClassDef) else None
                    method, owner = info_.method(func.attr) if info_ is not None else (None, None)
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method is not self.scope_node:
                        summary = self.walker.summary(method, owner)
                        part = summary.doms.get(GanDomain.key) if summary is not None else None
                        if part is not None and part.returns_gen:
                            return G, None
                    return None, None
                return r, self._canon(gan_key(func.value))
        return None, None

    # ------------------------------------------------------------------ summaries

    def _function_returns_gen(self, name: str) -> bool:
        func = self.walker.functions.get(name)
        if func is None or func is self.scope_node:
            return False
        summary = self.walker.summary(func)
        part = summary.doms.get(GanDomain.key) if summary is not None else None
        return bool(part is not None and part.returns_gen)

    def _method_summary(self, name: str):
        func = self.cls_info.methods.get(name) if self.cls_info is not None else None
        if func is None or func is self.scope_node:
            return None
        summary = self.walker.summary(func, self.cls_info)
        return summary.doms.get(GanDomain.key) if summary is not None else None

    def _method_returns_gen(self, name: str) -> bool:
        part = self._method_summary(name)
        return bool(part is not None and part.returns_gen)

    def _attr_source(self, attr: str) -> ast.Call | None:
        """A generator call another method of the class stores in `self.<attr>`, or a method of
        a subclass of it in the file (`backward_D` of a base class reads `self.fake_B`, which
        the subclass's `forward` sets: the instance is the subclass's)."""
        for name in self.cls_info.methods:
            part = self._method_summary(name)
            if part is not None and attr in part.self_attrs:
                return part.self_attrs[attr]
        here = getattr(self.scope_node, "name", None)
        for info in self.walker.classes.values():
            if info is self.cls_info or not inherits_from(info, self.cls_info) or here in info.methods:
                continue  # (one that overrides this method does not run it)
            for func in info.methods.values():
                if func is self.scope_node:
                    continue
                summary = self.walker.summary(func, info)
                part = summary.doms.get(GanDomain.key) if summary is not None else None
                if part is not None and attr in part.self_attrs:
                    return part.self_attrs[attr]
        return None

    # ------------------------------------------------------------------ statements

    def simple(self, st) -> None:
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
        elif t is ast.Return:
            if st.value is not None:
                v = self.eval(st.value)
                # Generator output made here (not read from another method's `self.<attr>`).
                if any(isinstance(a, GenSource) and not a.foreign for a in v):
                    self.returns_gen = True
                for a in v:
                    if type(a) is ParamDisc:
                        self.returns_disc.setdefault((a.name, a.module), a.line)
                    elif type(a) is ParamMark:
                        self.returns_params.add(a.name)
                if not v and not self.returns_cut and self._a_tensor(st.value):
                    self.returns_cut = True
        elif t is ast.Expr:
            self._statement_call = st.value
            self.eval(st.value)
            self._statement_call = None
        elif t is ast.Delete:
            for target in st.targets:
                if isinstance(target, ast.Name):
                    self.env.pop(target.id, None)
        elif t in (ast.Raise, ast.Assert):
            for child in ast.iter_child_nodes(st):
                self.eval(child)

    def _a_tensor(self, expr) -> bool:
        """Whether `expr`, returned, is a tensor: by its fact, or, of a value not known, by what
        only a tensor gives (`x.detach()`), on both sides of a conditional."""
        if type(expr) is ast.IfExp:
            return self._a_tensor(expr.body) and self._a_tensor(expr.orelse)
        if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "detach" \
                and not expr.args and not expr.keywords:
            return True
        return self.walker.fact(expr, self.state).kind == TENSOR

    def loop_target(self, st) -> None:
        self._freeze_loop(st)
        self.bind(st.target, self.eval(st.iter), None)

    def with_item(self, item) -> None:
        v = self.eval(item.context_expr)
        if item.optional_vars is not None:
            self.bind(item.optional_vars, v, None)

    def _freeze_loop(self, st) -> None:
        """`for p in netG.parameters(): p.requires_grad = False` freezes netG."""
        it = st.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "parameters"
                and isinstance(st.target, ast.Name)):
            return
        owner = self._canon(gan_key(it.func.value))
        if owner is None or self.role(it.func.value) != G:
            return
        p = st.target.id
        for n in walk(ast.Module(body=st.body, type_ignores=[])):
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
        """`G = self.GAN.G` names a module, `netG = generator()` makes one: keep its role for the
        local name."""
        if len(st.targets) != 1:
            return
        target, value = st.targets[0], st.value
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                if isinstance(t, ast.Name):
                    self._alias_one(t.id, v)
        elif isinstance(target, ast.Name):
            self._alias_one(target.id, value)

    def _alias_one(self, name: str, value) -> None:
        constructed = self._constructed_class(value)
        if constructed is not None:
            # An instance of a class of the project: the class is a module, its name gives the role.
            r = self.names.class_role.get(id(constructed))
            if r is None and hasattr(constructed, "name"):
                r = role_of_words(words(constructed.name))
            if r is not None:
                self.aliases[name] = r
            else:
                self.aliases.pop(name, None)
            return
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

    def _constructed_class(self, value):
        """The class of the file that `value` (a call) instantiates, or None."""
        if not isinstance(value, ast.Call):
            return None
        f = self.walker.fact(value.func, self.state)
        return f.node if f.kind == "class" and f.node is not None else None

    def bind(self, target, v: frozenset, value) -> None:
        t = type(target)
        if t is ast.Name:
            self.env[target.id] = v
            prefix = target.id + "."
            for k in [k for k in self.env if k.startswith(prefix)]:
                del self.env[k]
        elif t is ast.Attribute:
            key = self._canon(gan_key(target))
            if key is not None:
                self.env[key] = v
                if key.startswith("self.") and key.count(".") == 1 and key[5:] not in self.self_attrs:
                    src = next((a for a in v if isinstance(a, GenSource) and not a.foreign), None)
                    if src is not None:
                        self.self_attrs[key[5:]] = src.node
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
            key = self._canon(gan_key(target.value))
            if key is not None:
                self.env[key] = self.env.get(key, EMPTY) | v

    # ------------------------------------------------------------------ expressions

    def _stmt_no_grad(self) -> bool:
        return self.state.no_grad

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
        if t is ast.IfExp:
            # (In a walk for a call that gives the test's flag a literal, the branch it takes:
            # `fake.detach() if detach else fake` of `d_loss(..., detach=True)`.)
            truth = self.walker.call_constant(node.test, self.state)
            if truth is not None:
                self.eval(node.test)
                return self.eval(node.body if truth else node.orelse)
        if t is ast.Subscript:
            self.eval(node.slice)
            out = self.eval(node.value)
        elif t is ast.Yield or t is ast.YieldFrom:
            out = self.eval(node.value)
            self.returns_params.update(a.name for a in out if type(a) is ParamMark)
        else:
            out = EMPTY
            for child in child_nodes(node):
                if isinstance(child, ast.expr):
                    out = out | self.eval(child)
        if self._stmt_no_grad() and t not in (ast.Tuple, ast.List, ast.Starred, ast.IfExp, ast.BoolOp):
            return EMPTY
        return out

    def _attribute(self, node: ast.Attribute) -> frozenset:
        if node.attr in _CUTTING_ATTRS:
            self.eval(node.value)
            return EMPTY
        key = self._canon(gan_key(node))
        if key is not None:
            v = self.env.get(key)
            if v is not None:
                return v
            if self.cls is not None and key.startswith("self.") and key.count(".") == 1:
                call = self._attr_source(key[5:])
                if call is not None:
                    return frozenset({self._source(call, foreign=True)})
        return self.eval(node.value)

    def _source(self, call: ast.Call, foreign: bool = False) -> GenSource:
        src = self.sources.get(id(call))
        if src is None:
            src = GenSource(call, tuple(id(lp) for lp in self.frame.loops) if not foreign else (), foreign)
            self.sources[id(call)] = src
        return src

    def _event(self, kind: str, node, **kw) -> Event | None:
        if not self.recording:
            return None
        e = Event(kind, node, len(self.events), tuple(id(lp) for lp in self.frame.loops), self.frame.path, **kw)
        self.events.append(e)
        return e

    def call(self, node: ast.Call) -> frozenset:
        info = self.info(node)
        func = node.func
        recv = self.eval(func.value) if isinstance(func, ast.Attribute) else EMPTY
        args = [self.eval(a) for a in node.args]
        kws = {kw.arg: self.eval(kw.value) for kw in node.keywords}
        every = recv.union(*args, *kws.values())
        dotted = gan_key(func) or ""
        qual = info.qual or ""
        m = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""

        # --- gradient computations: backward, autograd.grad
        if qual in ("torch.autograd.backward",) or dotted.endswith("autograd.backward"):
            prov = args[0] if args else kws.get("tensors", EMPTY)
            if self._inputs_miss_g(node):
                prov = EMPTY
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
            self._backward(node, EMPTY if self._inputs_miss_g(node) else every, loss, retain,
                           _kw(node, "create_graph"))
            return EMPTY
        if m == "update_params" and isinstance(func, ast.Attribute) and node.args:
            # MMEngine's OptimWrapper: backward, step and zero_grad in one call.
            self._backward(node, args[0], node.args[0], None, None)
            _, role = self.names.optimizer_role(self._canon(gan_key(func.value)))
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
            if "scaler" in words(gan_key(opt) or "") and node.args:
                opt = node.args[0]
            is_opt, role = self.names.optimizer_role(self._canon(gan_key(opt)))
            if is_opt:
                self._event("step", node, role=role)
            return EMPTY
        if isinstance(func, ast.Attribute) and m == "zero_grad":
            owner = self._canon(gan_key(func.value))
            is_opt, role = self.names.optimizer_role(owner)
            if not is_opt:
                role = self.role(func.value)
            self._event("zero", node, role=role)
            return EMPTY
        if self._freezing(node, func, m):
            return EMPTY

        # --- generator and discriminator calls
        if self._constructed_class(node) is not None:
            return EMPTY  # `generator()`: makes a module, does not run one
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
            inputs |= self._param_discs(inputs, None, node)
            if not carried or any(isinstance(a, DiscCall) for a in inputs):
                # Real data only, or the rest of a discriminator forward already reported
                # (`netD.head(netD.features(fake))`).
                return inputs
            return inputs | {self._disc_call(node, carried, inputs)}

        # --- everything else
        if not info.no_grad and isinstance(func, ast.Name) and any(
                type(a) is ParamMark and a.name == m for a in self.env.get(m, EMPTY)):
            # A summary walk: a call of a parameter (`disc(fake)`, a module the callers pass) on
            # what another parameter carries.
            every |= self._param_discs(every - recv, m, node)
        gen = self._has_gen(every)
        # (Read once: the helper questions ask it where the arguments carry something, _given_back
        # where anything does.)
        resolved = self._file_callee(node, gen) if not info.no_grad and every else _NO_CALLEE
        callee, first, owner = resolved if any(args) or any(kws.values()) else _NO_CALLEE
        if callee is not None:
            # A function of the file that returns what a discriminator makes of one of its
            # parameters (`d_loss = d_loss_fn(netD, real, fake)`): a discriminator call here.
            helper = self._helper_disc(node, callee, first, owner)
            if helper is not None:
                # Only an argument the analysis knows is a tensor that may carry a graph (as
                # _note_passed): a helper's provenance is coarse (`patch, box = crop(fake)`
                # gives the box the fake's too).
                carrying = [h for h in helper if h[3] is None and self._carries_gen(h[0])]
                for e, _, _, outer in helper:
                    every |= self._param_discs(self._prov.get(id(e), EMPTY), outer, node)
                if carrying and not any(isinstance(a, DiscCall) for a in every):
                    dc = self._disc_call(node, [h[0] for h in carrying], every)
                    dc.via = (callee, carrying[0][1])
                    dc.penalty = any(h[2] for h in carrying)
                    every = every | {dc}
        if callee is not None and hasattr(callee, "gan_helper"):
            # A function of another module that takes a discriminator step on what it is passed
            # (`d_step(netD, real, fake, optD)`): that step, here.
            self._helper_steps(node, callee, every)
        if callee is not None and not hasattr(callee, "gan_helper") and any(
                self._has_gen(p) for p in (*args, *kws.values())):
            self._note_passed(node, callee, first)
            self._file_helper_steps(node, callee, first, owner)
        if isinstance(func, ast.Attribute) and m in _ADDING_METHODS and node.args:
            # `fakes.append(netG(z))`, `self.pool.extend(batch)`: the list holds it now.
            added = args[-1]
            key = self._canon(gan_key(func.value)) if added else None
            if key is not None and not info.receiver_tensor:
                self.env[key] = self.env.get(key, EMPTY) | added
            return EMPTY
        if isinstance(func, ast.Attribute) and m in _CUTTING_METHODS:
            if m == "detach_" and not info.no_grad:
                # `fake.detach_()`: the name now holds a leaf without the generator's graph.
                key = self._canon(gan_key(func.value))
                if key is not None and key in self.env:
                    self.env[key] = EMPTY
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
        elif node is self._statement_call and not qual.startswith(("torch.", "numpy.", "math.")) \
                and not info.receiver_tensor:
            # A helper called for its effect, which we do not see (`reset_grad()`,
            # `zero_all(model)`): it may clear the generator's gradients.
            self._event("opaque", node)
        if info.no_grad:
            return EMPTY
        if every:
            given = self._given_back(node, resolved, recv, every, gen)
            if given is not None:
                every = given
        if every and self._has_gen(every) and self.walker.fact(node, self.state).grad is Grad.NO:
            # A function or a method (an instance's `__call__` too), of the file or of another
            # module, that returns what has no graph (`def as_const(t): return t.detach()`, an
            # image pool's `query` that returns `image.data`): what it gets does not go on.
            return EMPTY
        return every

    def _given_back(self, node: ast.Call, resolved: tuple, recv: frozenset, every: frozenset,
                    gen: bool) -> frozenset | None:
        """What a call of a function or method of the project (`resolved`: _file_callee) gives
        back of what its arguments carry (`every`, with what a helper's discriminator calls add),
        by the summary of it that this domain walked (GanScope.returns_params): less what only
        arguments that reach no `return` carry (the receiver's, and an argument's that goes to
        no named parameter, stay); None where the callee or its summary is not known.  (`gen`:
        the arguments carry generator output; a function of another module is asked only then,
        its answer a walk of its module.)"""
        callee, first, owner = resolved
        if callee is None:
            return None
        if hasattr(callee, "gan_passes"):  # a function or method of another module of the project
            if not gen:
                return None
            passes, first = callee.gan_passes(*self._project_constants(node, callee)), getattr(callee, "skip_first",
                                                                                                False)
            callee = callee.node
            cut = passes is not None and _CUT in passes
        else:
            if not plain_decorators(callee):
                return None
            # (For this call: a flag it tests that the call leaves to a literal steers it.)
            part = self._callee_part(callee, first, owner, node)
            if part is None:
                return None
            passes, cut = part.returns_params, part.returns_cut
        if passes is None or callee is None:
            return None
        # A callee that gives back an argument on one path and on another a tensor that
        # carries none of them (an image pool's `query`, which returns what it is given only when
        # the pool is off: `if self.pool_size == 0: return images`): which one a call takes
        # depends on the callee's state, which we do not follow; by default the arguments do not
        # go on (`--strict`: they may).
        if cut and not self.walker.ctx.options.strict:
            passes = ()
        dropped = {id(e) for param, e in bind_arguments(callee, node, skip_first=bool(first))[0] if param not in passes}
        if not dropped:
            return None
        prov = self._prov
        gone, kept = EMPTY, recv
        for e in (*node.args, *(kw.value for kw in node.keywords)):
            if id(e) in dropped:
                gone = gone | prov.get(id(e), EMPTY)
            else:
                kept = kept | prov.get(id(e), EMPTY)
        return (every - gone) | kept

    def _disc_call(self, node: ast.Call, carried: list, inputs: frozenset) -> DiscCall:
        """The discriminator call `node`, whose arguments `carried` carry generator output."""
        dc = self.dcalls.get(id(node))
        if dc is None:
            dc = DiscCall(node)
            self.dcalls[id(node)] = dc
        if self.recording:
            dc.targets = [t for a in carried for t in self._detach_targets(a)]
        dc.sources |= {a for a in inputs if isinstance(a, GenSource)}
        if self.recording and dc.event is None:
            dc.event = self._event("dcall", node)
        return dc

    @staticmethod
    def _param_discs(prov: frozenset, module: str | None, node: ast.Call) -> frozenset:
        """A discriminator call (or, with `module`, a call of that parameter) on what the
        parameters in `prov` carry (summary walks: ParamMark)."""
        return frozenset(ParamDisc(a.name, module, node.lineno) for a in prov
                         if type(a) is ParamMark and a.name != module)

    def _file_callee(self, node: ast.Call, gen: bool = False) -> tuple:
        """(callee, skip_first, the class info of a method of the file) of what a call runs: a def
        of the file (`helper(...)`, `self.method(...)`, `crit.method(...)` of an instance of a
        class of the file, `Losses.d_step(...)` of a static or class method), a function another
        module of the project defines (`from losses import d_loss_fn`: its `ProjectEntity`), or
        a method of a class of another module (a `_ProjectMethod`: of an instance of that class,
        of the class itself, or that a class of the file inherits); (None, 0, None) when it is
        none of these.  `gen`: the call passes generator output; only then is a call of an
        instance read as its `__call__` (`crit(netD, real, fake)`) and another module asked
        which of a class's bases defines a method (ProjectEntity.method_owner).  (One reading
        for the helper questions and for what a call gives back: _given_back.)"""
        func = node.func
        t = type(func)
        if t is ast.Name:
            f = self.walker.fact(func, self.state)
            if f.kind == FUNCTION:
                callee = f.node
                if callee is not None and hasattr(callee, "gan_helper"):
                    return callee, 0, None  # a function of another module of the project
                if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or callee is self.scope_node:
                    return _NO_CALLEE
                return callee, 0, None
            return self._called_instance(func, f, gen)
        if t is not ast.Attribute:
            return _NO_CALLEE
        value = func.value
        if self.cls_info is not None and self.self_name is not None and type(value) is ast.Name \
                and value.id == self.self_name:
            # `self.discriminator_step(real, fake)`; `self.crit(netD, real, fake)`, an attribute.
            found = self._class_method(self.cls_info, func.attr, False, gen)
            return found if found[0] is not None or not gen else self._called_instance(func, None, gen)
        if not isinstance(value, (ast.Name, ast.Attribute, ast.Call)):
            return _NO_CALLEE
        f = self.walker.fact(value, self.state)
        if self._instance(f, value):
            # `crit.d_loss(netD, real, fake)`, `self.crit.d_loss(...)`, `GANLoss().d_loss(...)`: a
            # method of an instance of a class of the file or of another module.
            found = self._class_method(f.node, func.attr, False, gen)
            return found if found[0] is not None or not gen else self._called_instance(func, None, gen)
        if f.kind == CLASS and f.node is not None:
            # `Losses.d_step(netD, real, fake)`: a static or class method, called on its class.
            return self._class_method(f.node, func.attr, True, gen)
        # `losses.d_loss_fn(...)`, with `from pkg import losses`: a function of another module.
        return self._project_function(func), 0, None

    def _instance(self, f, expr) -> bool:
        """`f` (the fact of `expr`) is an instance of a class of the file or of another module of
        the project whose methods may be helpers: a plain object's whatever its name, a module's
        where its name plays no role."""
        return (f.kind == OBJECT or f.kind == MODULE and self.role(expr) is None) and (
            isinstance(f.node, ast.ClassDef) or hasattr(f.node, "method_stub"))

    def _called_instance(self, func, f, gen: bool) -> tuple:
        """A call of an instance itself (`crit(netD, real, fake)`, `self.crit(...)`), where it
        passes generator output: a plain object's class's `__call__`.  (Not a torch module's
        `forward`: a module of no role called on generator output is a feature extractor or a
        loss module of torch far more often than a helper that steps a discriminator.)"""
        if not gen:
            return _NO_CALLEE
        if f is None:
            f = self.walker.fact(func, self.state)
        if f.kind != OBJECT or not self._instance(f, func):
            return _NO_CALLEE
        return self._class_method(f.node, "__call__", False, gen)

    def _class_method(self, cls, name: str, on_class: bool, gen: bool) -> tuple:
        """(callee, skip_first, class info) of method `name` of `cls` (a class of the file, its
        def or its info, or of another module, its `ProjectEntity`), called on an instance, or on
        the class itself where `on_class` (a static or class method only): as _file_callee says
        them.  A static method binds the call's arguments from its first parameter, a class
        method from its second.  Where a class of the file inherits the method from another
        module, or a class of another module from a base (it does not define it itself), which
        class defines it is asked only where the call passes generator output (`gen`): an answer
        of another module (ProjectEntity.method_owner, kept with its module's answers)."""
        if isinstance(cls, ast.ClassDef):
            cls = self.walker.classes.get(id(cls))
            if cls is None:
                return _NO_CALLEE
        if not hasattr(cls, "method_stub"):  # (the info of a class of the file)
            callee, owner = cls.method(name)
            if callee is not None:
                if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or callee is self.scope_node:
                    return _NO_CALLEE
                if on_class and is_plain_method(callee):
                    return _NO_CALLEE  # (`Cls.method(obj, ...)`: not read)
                return callee, 0 if "staticmethod" in decorator_names(callee) else 1, owner
            if not gen:
                return _NO_CALLEE
            cls = next((o for o in (b.method_owner(name) for b in project_bases(cls)) if o is not None), None)
            if cls is None:
                return _NO_CALLEE
        stub = cls.method_stub(name)
        if stub is None:
            cls = cls.method_owner(name) if gen else None
            stub = cls.method_stub(name) if cls is not None else None
            if stub is None:
                return _NO_CALLEE
        if on_class and is_plain_method(stub):
            return _NO_CALLEE
        return _ProjectMethod(cls, name, stub, not cls.is_static(name)), 0, None

    def _project_function(self, func):
        """The `ProjectEntity` of a function of another module of the project that `func` (a
        name or `module.name`) is, else None.  (A method of a value, `self.netD`, is not asked
        for its fact: that could load its class's attributes for nothing.)"""
        if type(func) is not ast.Name and not (type(func) is ast.Attribute
                                               and self.walker.qualname(func, self.state) is not None):
            return None
        f = self.walker.fact(func, self.state)
        return f.node if f.kind == "function" and hasattr(f.node, "gan_helper") else None

    def _helper_disc(self, node: ast.Call, callee, first: int, owner=None) -> list | None:
        """For a call of `callee`, a function of the file (_file_callee), that returns what a
        discriminator makes of its parameters (its summary's `returns_disc`) and calls no
        backward itself: [(argument, line of the discriminator call in the function, whether
        its penalty differentiates by it, the module parameter handed on)], the arguments that
        reach a discriminator there (a module parameter's only where this call passes a
        discriminator, or in a summary walk one of its own parameters); None when there are
        none."""
        if hasattr(callee, "gan_helper"):
            # A function of another module: what its module's walk with this domain found
            # (helper_of), for the flags it tests that this call leaves to literals; the line
            # as "losses.py:12".
            said = callee.gan_helper(*self._project_constants(node, callee))[1]
            if not said:
                return None
            summary = callee.summary
            where = os.path.basename(summary.path) if summary is not None else callee.module
            returns_disc = {(param, module or None): f"{where}:{line}" for param, module, line, _ in said}
            penalized = {param for param, _, _, pen in said if pen}
            bound = dict(bind_arguments(callee.node, node, skip_first=getattr(callee, "skip_first", False))[0])
        else:
            part = self._callee_part(callee, first, owner, node)
            if part is None or not part.returns_disc or any(e.kind == "backward" for e in part.events):
                return None
            returns_disc = part.returns_disc
            bound = dict(bind_arguments(callee, node, skip_first=bool(first))[0])
            penalized = {a.name for e in part.events if e.kind == "penalty" for a in e.prov
                         if type(a) is ParamMark}
        out = []
        for (param, module), line in returns_disc.items():
            expr = bound.get(param)
            if expr is None:
                continue
            outer = None
            if module is not None:
                passed = bound.get(module)
                if passed is None:
                    continue
                if self.role(passed) != D:
                    # In a summary walk, a module parameter handed on (`adversarial(model, x)`).
                    outer = self._param_name(passed)
                    if outer is None:
                        continue
            out.append((expr, line, param in penalized, outer))
        return out or None

    def _binds_as_written(self, call: ast.Call) -> bool:
        """Whether `call` binds its arguments to the parameters of the def it runs as written:
        not a call of a `functools.partial` (`no_detach(fake)` of `partial(maybe_detach,
        detach=False)`), whose own keywords come first."""
        return type(call.func) is not ast.Name or PARTIAL_TAG not in self.walker.fact(call.func, self.state).tags

    def _project_constants(self, call: ast.Call, callee) -> tuple:
        """("", ((parameter, truth), ...)) of the parameters of a function or method of another
        module that `call` leaves to literals (gan_helper's arguments: its module's walk takes
        those it tests or uses, Summaries.steering_parameters); () where there are none."""
        if not self._binds_as_written(call) or getattr(callee, "node", None) is None:
            return ()
        pairs, complete = bind_arguments(callee.node, call, skip_first=getattr(callee, "skip_first", False))
        constants = tuple(sorted(call_constants(callee.node, pairs, complete).items()))
        return ("", constants) if constants else ()

    def _helper_steps(self, node: ast.Call, callee, every: frozenset) -> None:
        """For a call of `callee`, a function of another module that takes a discriminator step
        on what its parameters carry (helper_of, _steps_of): for each argument that carries
        generator output into such a step, a discriminator call here, the step's backward, and
        the step of the optimizer the call passes, in that order (as the function's own lines
        would record them)."""
        said = callee.gan_helper()
        if not said[2]:
            return
        bound = dict(bind_arguments(callee.node, node, skip_first=getattr(callee, "skip_first", False))[0])
        summary = callee.summary
        where = os.path.basename(summary.path) if summary is not None else callee.module
        for param, module, line, retain, stepped in said[2]:
            expr = bound.get(param)
            if expr is None or not self._carries_gen(expr):
                continue
            if module and (module not in bound or self.role(bound[module]) != D):
                continue  # (a module parameter the call does not pass a discriminator in)
            role = None
            if stepped in bound:
                is_opt, role = self.names.optimizer_role(self._canon(gan_key(bound[stepped])))
                role = role if is_opt else None
            dc = self._disc_call(node, [expr], every)
            dc.via = (callee, f"{where}:{line}")
            self._event("backward", node, prov=every | {dc}, retain={"1": True, "0": False}.get(retain))
            if role is not None:
                self._event("step", node, role=role)

    def _param_name(self, expr) -> str | None:
        """The parameter `expr` is, unchanged, in a summary walk (what it carries is its mark)."""
        if type(expr) is ast.Name:
            v = self.env.get(expr.id, EMPTY)
            if any(type(a) is ParamMark and a.name == expr.id for a in v):
                return expr.id
        return None

    def _may_carry_graph(self, expr) -> bool:
        fact = self.walker.fact(expr, self.state)
        return fact.kind == TENSOR and fact.grad is not Grad.NO

    def _carries_gen(self, expr) -> bool:
        """An argument a helper's discriminator call gets generator output through: a tensor that
        may carry a graph and carries generator output.  (Not a tuple or a list literal with
        one, `d_loss(netD, (real, fake))`: which of its parts the helper hands its discriminator
        is not known, and a helper that hands it only `real` is no step through the generator.)"""
        prov = self._prov.get(id(expr), EMPTY)
        if not self._has_gen(prov):
            return False
        if self._may_carry_graph(expr):
            return True
        # (Or what the analysis cannot tell, where it is the generator's output as it came: `fake =
        # G(z)` with `G` a parameter of the function, a generator by its name or by the optimizer
        # it is handed to, or the call itself.)
        return self.walker.fact(expr, self.state).kind == UNKNOWN and any(
            type(s) is GenSource and (s.node is expr or type(expr) is ast.Name and _binds_name(s.binding, expr.id, s.node))
            for s in prov)

    def _callee_part(self, callee, first: int, owner=None, call: ast.Call | None = None):
        """What this domain's part of the summary of `callee`, a function of the file (a method
        of class `owner`, or of this scope's class, when `first`), says, or None; for `call`,
        where it leaves a flag the function tests to a literal (`d_loss(netD, real, fake)` of
        `def d_loss(..., detach_fake=True)`), what its walk for that literal says
        (Summaries.summary_for_constants)."""
        cls = owner if owner is not None else self.cls_info if first else None
        summary = self.walker.summary_for_constants(callee, cls, call, bool(first)) \
            if call is not None and self._binds_as_written(call) else None
        if summary is None:
            summary = self.walker.summary(callee, cls) if cls is not None else self.walker.summary(callee)
        return summary.doms.get(GanDomain.key) if summary is not None else None

    def _file_helper_steps(self, node: ast.Call, callee, first: int, owner=None) -> None:
        """For a call of `callee`, a function of the file, that takes a discriminator step on
        generator output the call passes (its summary's backward of a discriminator call on a
        parameter: _steps_of): that backward, here, marked as the function's (Event.helper): it
        reports nothing here, but what follows it here (a generator step through the same output,
        whose graph it freed) is the consequence of the finding in the function
        (GanNames.after_calls)."""
        part = self._callee_part(callee, first, owner)
        if part is None:
            return
        bound = dict(bind_arguments(callee, node, skip_first=bool(first))[0])
        for param, module, line, retain, _stepped in _steps_of(callee, part):
            expr = bound.get(param)
            if expr is None or module:
                continue
            gens = frozenset(a for a in self._prov.get(id(expr), EMPTY) if isinstance(a, GenSource))
            if gens and self._may_carry_graph(expr):
                e = self._event("backward", node, prov=gens, retain={"1": True, "0": False}.get(retain))
                if e is not None:
                    e.helper = (id(callee), int(line))

    def _note_passed(self, node: ast.Call, callee, first: int) -> None:
        """A call of `callee`, a function of the file (_file_callee), that passes generator
        output: which parameter gets which generator calls' output (GanDomain.initial starts the
        function's walk with them)."""
        for param, expr in bind_arguments(callee, node, skip_first=bool(first))[0]:
            calls = {a.node for a in self._prov.get(id(expr), EMPTY) if isinstance(a, GenSource)}
            # Only a value the analysis knows is a tensor that may carry a graph: what a helper
            # returns that detaches it, or that we cannot see (`buffer.push_and_pop(fake)`),
            # is not followed further.
            if calls and self._may_carry_graph(expr):
                self.names.passed.setdefault((id(callee), param), set()).update(calls)

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
            elif (isinstance(e, ast.Call) and self.walker.qualname(e.func, self.state) in _CONCAT
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

    def _inputs_miss_g(self, node: ast.Call) -> bool:
        """Whether a backward's `inputs=` names what it accumulates into, and no generator among
        them (`errD.backward(inputs=list(netD.parameters()))`): it runs only the part of the
        graph between the loss and those, not the generator's (nothing reaches its parameters,
        and its graph is not freed)."""
        inputs = _kw(node, "inputs")
        if inputs is None:
            return False
        # (The modules whose parameters it names, `netD.parameters()`, each a discriminator: not a
        # container that may hold the generator too, nor a name for what is not seen.)
        owners = [n.func.value for n in walk(inputs) if type(n) is ast.Call and type(n.func) is ast.Attribute
                  and n.func.attr in ("parameters", "named_parameters")]
        return bool(owners) and all(self.role(o) == D for o in owners) and not any(
            type(n) is ast.Name and n.id not in ("list", "tuple") and not any(n is o for o in owners)
            and self.env.get(n.id) for n in walk(inputs))

    def _backward(self, node, prov, loss_expr, retain_expr, create_expr) -> None:
        retain: bool | None
        if retain_expr is None:
            retain = _const(create_expr) is True
        else:
            c = _const(retain_expr)
            retain = c if isinstance(c, bool) else None
        name = self._canon(gan_key(loss_expr)) if loss_expr is not None else None
        if name is None and isinstance(loss_expr, ast.Call):
            # `scaler.scale(errD).backward()`
            for a in loss_expr.args:
                name = self._canon(gan_key(a))
                if name:
                    break
        self._event("backward", node, prov=prov, retain=retain, name_role=name_role(name, verbs_ok=True))

    def _freezing(self, node: ast.Call, func, m: str) -> bool:
        """`netG.requires_grad_(False)`, `requires_grad(netG, False)`, `set_requires_grad(
        [netD], True)`, `self.toggle_optimizer(opt_d)`: record which generator is frozen."""
        if m == "requires_grad_" and isinstance(func, ast.Attribute):
            owner = self._canon(gan_key(func.value))
            if owner is not None and self.role(func.value) == G:
                flag = _const(node.args[0]) if node.args else True
                if isinstance(flag, bool):
                    self._set_frozen(owner, not flag)
                return True
            return False
        if m in ("toggle_optimizer", "untoggle_optimizer") and node.args:
            _, role = self.names.optimizer_role(self._canon(gan_key(node.args[0])))
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
        if flag is None:
            # Left to the function's default (`self.set_requires_grad(self.netG)` of `def
            # set_requires_grad(self, nets, requires_grad=False)`).
            callee, skip = self.walker.callee_def(node, self.state)
            flag = left_bool_default(callee, node, skip) if callee is not None else None
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
                    mods.append(self._canon(gan_key(e)))
        for owner in mods:
            if owner is not None:
                self._set_frozen(owner, frozen)
        return bool(mods)

    # ------------------------------------------------------------------ conclusions

    @staticmethod
    def _exclusive(a: Event, b: Event) -> bool:
        return not compatible(a.branches, b.branches)

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
        if scope_name == "__call__" and self.cls is not None:
            # A loss object's call (`class DLoss: def __call__(self, netD, real, fake)`): its
            # class's name says what it is for.
            scope_name = self.cls.name
        return name_role(scope_name, verbs_ok=True)

    def conclude(self) -> list[Finding]:
        backwards = [e for e in self.events if e.kind == "backward"]
        for b in backwards:
            if b.helper is not None:
                # What a function's discriminator step on what this scope passed does here: only
                # a crash (the graph one backward freed), which nothing inside the function can
                # undo (a zeroing of the generator's gradients there could undo a wrong update).
                c = self._consequence([b], b.prov, backwards)
                seen = self.names.after_calls.get(b.helper)
                if c.startswith("crash") and (seen is None or _ORDER.index(c) < _ORDER.index(seen)):
                    self.names.after_calls[b.helper] = c
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
            if consequence == "neutral":
                # In a function of the file: what its callers do after the call (walked first).
                consequence = self.names.after_calls.get((id(self.scope_node), dc.node.lineno), consequence)
            reuse = any(roles[id(b)] != D for b in using)
            needs_graph = dc.penalty or any(gens & p.prov for p in penalties)
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
        for b in d_updates:
            c = self._consequence_of(b, gens, backwards)
            if best is None or _ORDER.index(c) < _ORDER.index(best):
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
        zeroed = opaque = False
        for e in self._after(b):
            if e.kind == "zero" and e.role in (G, None):
                zeroed = True
            elif e.kind == "opaque":
                opaque = True  # a helper may zero them: the update is not certainly wrong
            elif e.kind == "step" and e.role == G:
                if not zeroed and not opaque:
                    return "wrong_retain" if b.retain else "wrong"
                break
        return "neutral"

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


def _summary_walk(walker, node, method: str, constants: tuple = ()):
    """(the summary of function `node` of a project module, or of method `method` of class
    `node`, by a fresh walker of the module's tree with this domain alone (the module's own
    walker carries none), active whatever names the module holds: a loss module may name only
    the discriminator, and the file that asks names both; the def) or None where it is not
    known."""
    from .lazytree import Reparse
    from .walker import Walker

    lines = walker.lines
    if lines is None:
        return None
    ctx = walker.ctx
    options = ctx.options
    if options is None:  # (a project made without options: the defaults)
        from ..model import Options

        options = Options()
    domain = GanDomain(options, screened=True)
    domain.names = GanNames(walker.tree, options.generator_names, options.discriminator_names, lines.text, True)
    domain.names.active = True
    w = Walker(walker.tree, [], type(ctx)(lines, options), None, [domain], project=walker.project,
               module=walker.module, module_is_package=walker.module_is_package)
    func = node
    try:
        w.run_module()
        if method:
            info = w.classes.get(id(node))
            func, owner = info.method(method) if info is not None else (None, None)
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                summary = None
            else:
                # (A call's literals, of the parameters the method tests or uses: its walk for them.)
                kept = _steered(w, func, constants) if constants and plain_decorators(func) else ()
                summary = (w.summary_with_constants(func, owner, kept) if kept else None) or w.summary(func, owner)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # (For a call that leaves flags it tests to literals, its walk for them: not through
            # a decorator, which may pass them something else.)
            kept = _steered(w, node, constants) if constants and plain_decorators(node) else ()
            summary = (w.summary_with_constants(node, None, kept) if kept else None) or w.summary(node)
        else:
            summary = None
    except (Reparse, RecursionError):
        return None
    finally:
        w.release()
    return summary, func


def _steered(walker, func, constants: tuple) -> tuple:
    """Of `constants` ((parameter, truth), ...), those of the parameters a literal steers def
    `func` by (Summaries.steering_parameters)."""
    names = walker.steering_parameters(func)
    return tuple((p, t) for p, t in constants if p in names)


def helper_of(walker, func, method: str = "", constants: tuple = ()) -> tuple:
    """What function `func` of a project module (method `method` of class `func`), whose summary
    walker is `walker`, yields to the files that call it: ("1" when it returns generator output
    it makes (`sample(netG, n)`), else "", and for `GanScope._helper_disc` ((parameter, module
    parameter or "", line, "1" when a gradient penalty differentiates by it, else ""), ...) for
    each discriminator call on what a parameter carries whose output the function returns: none
    when the function calls a backward itself; and for `GanScope._helper_steps` the
    discriminator steps it takes on what its parameters carry, _steps_of), by _summary_walk
    (for a function, where a call leaves flags it tests to literals, `constants`, for them)."""
    found = _summary_walk(walker, func, method, constants)
    if found is None:
        return ()
    summary, func = found
    if method and summary is not None and not plain_decorators(func):
        summary = None  # (a method whose decorators leave what a call returns to its body)
    part = summary.doms.get(GanDomain.key) if summary is not None else None
    if part is None:
        return ("", (), ())
    gen = "1" if part.returns_gen else ""
    steps = _steps_of(func, part)
    if not part.returns_disc or any(e.kind == "backward" for e in part.events):
        return (gen, (), steps)
    penalized = {a.name for e in part.events if e.kind == "penalty" for a in e.prov if type(a) is ParamMark}
    return (gen, tuple((param, module or "", str(line), "1" if param in penalized else "")
                       for (param, module), line in sorted(part.returns_disc.items(),
                                                           key=lambda kv: (kv[0][0], kv[0][1] or ""))), steps)


def passes_of(walker, node, method: str, constants: tuple = ()) -> tuple:
    """("1", the parameters whose values reach what it returns, ...) of function `node` of a
    project module, or of method `method` of class `node` (GanScope.returns_params), by
    _summary_walk (for a function, where a call leaves flags it tests to literals, `constants`,
    for them); () when that is not known."""
    found = _summary_walk(walker, node, method, constants)
    if found is None:
        return ()
    summary, func = found
    part = summary.doms.get(GanDomain.key) if summary is not None else None
    if part is None or func is None or not plain_decorators(func):
        return ()
    return ("1", *sorted(part.returns_params), *((_CUT,) if part.returns_cut else ()))


# In what passes_of gives: a `return` of the function gives a tensor that carries nothing of the
# parameters (GanScope.returns_cut); never a parameter's name.
_CUT = "-cut"


class _ProjectMethod:
    """Method `name` of a class of another module of the project (its `ProjectEntity`: the class
    that defines it), called on an instance (`crit.d_loss(netD, real, fake)`) or, a static or
    class method, on the class, as `GanScope._helper_disc` and `_helper_steps` ask a function of
    another module: what the GAN domain finds it does (`gan_helper`), which parameters reach what
    it returns (`gan_passes`), the def whose parameters the call binds (`node`, past the
    instance or the class unless it is a static method: `skip_first`)."""

    __slots__ = ("entity", "name", "node", "skip_first")

    def __init__(self, entity, name: str, stub, skip_first: bool = True) -> None:
        self.entity, self.name, self.node, self.skip_first = entity, name, stub, skip_first

    def gan_helper(self, _method: str = "", constants: tuple = ()) -> tuple:
        return self.entity.gan_helper(self.name, constants)

    def gan_passes(self, _method: str = "", constants: tuple = ()) -> tuple | None:
        return self.entity.gan_passes(self.name, constants)

    @property
    def summary(self):
        return self.entity.summary

    @property
    def module(self):
        return self.entity.module


def _steps_of(func, part) -> tuple:
    """The discriminator steps a function takes on what its parameters carry (a `d_step(netD,
    real, fake, opt)` of another module): ((parameter, module parameter or "", line of the
    discriminator call, "1" / "0" / "" for the backward's retain_graph True / False / not a
    constant, the parameter whose `.step()` follows that backward or ""), ...), for each
    discriminator call on a parameter's value that a backward of the function differentiates."""
    params = set(parameter_names(func.args))
    out = set()
    events = part.events
    for i, e in enumerate(events):
        if e.kind != "backward":
            continue
        stepped = ""
        for later in events[i + 1:]:
            if later.kind == "backward":
                break
            if later.kind == "step" and isinstance(later.node, ast.Call) and isinstance(later.node.func, ast.Attribute):
                owner = gan_key(later.node.func.value)
                if owner in params:
                    stepped = owner
                break
        retain = "" if e.retain is None else "1" if e.retain else "0"
        for a in e.prov:
            if type(a) is ParamDisc and a.name in params:
                out.add((a.name, a.module or "", str(a.line), retain, stepped))
    return tuple(sorted(out))


class GanDomain(Domain):
    """Generator output and discriminator updates (see the module docstring).  Active in files
    where both roles appear; findings of a scope are in `ctx.domain("gan").findings`."""

    key = "gan"
    in_summaries = True

    def __init__(self, options, screened: bool = False) -> None:
        self.options = options
        self.names: GanNames | None = None
        self.screened = screened  # the file's text passed names.may_be_gan

    def active(self, walker, frame) -> bool:
        if self.names is None:
            text = walker.lines.text if walker.lines is not None else None
            self.names = GanNames(walker.tree, self.options.generator_names, self.options.discriminator_names, text,
                                  self.screened)
        return self.names.active

    def initial(self, walker, frame) -> GanState:
        state = GanState()
        func = frame.scope.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return state
        params = (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)
        if self.names is not None and self.names.passed:
            # Generator output the file's calls pass in: a source made elsewhere (`foreign`).
            for a in params:
                calls = self.names.passed.get((id(func), a.arg))
                if calls:
                    state.env[a.arg] = frozenset(GenSource(c, (), foreign=True) for c in calls)
        if not frame.dispatch:
            # A summary: what each parameter carries, to tell which reach a discriminator call
            # whose output is returned (ParamMark).
            skip = 1 if frame.scope.cls is not None and is_plain_method(func) else 0
            for a in params[skip:]:
                state.env[a.arg] = state.env.get(a.arg, EMPTY) | {ParamMark(a.arg)}
        return state

    def start(self, walker, frame) -> GanScope:
        return GanScope(self.names, walker, frame)

    def simple(self, walker, stmt, state) -> None:
        rec = walker.frame.doms[self.key]
        rec.enter(state)
        rec.simple(stmt)

    def test(self, walker, expr, state) -> None:
        rec = walker.frame.doms[self.key]
        rec.enter(state)
        rec.eval(expr)

    def loop_target(self, walker, stmt, state) -> None:
        rec = walker.frame.doms[self.key]
        rec.enter(state)
        rec.loop_target(stmt)

    def with_item(self, walker, item, state) -> None:
        rec = walker.frame.doms[self.key]
        rec.enter(state)
        rec.with_item(item)

    def finish(self, walker, frame) -> None:
        rec = frame.doms[self.key]
        if frame.dispatch:
            rec.findings = rec.conclude()
        # The scope's walk is over (a summary keeps the record, read only): the frame refers to
        # the record, a cycle that would keep the scope's states alive until the collector came.
        rec.frame = None
