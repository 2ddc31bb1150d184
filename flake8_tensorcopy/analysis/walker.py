"""The one walker: a single statement interpreter that owns control flow, and hosts domains.

It interprets each scope's statements in execution order over an abstract `State`:

- value facts by name (evaluate.py: "a tensor? may it require grad? on an accelerator?"),
- grad mode (`no_grad` / `inference_mode` / `set_grad_enabled` regions, decorators, functions
  only called under no-grad, Lightning hooks the trainer runs without grad: gradmode.py),
- one state per hosted domain (GAN provenance in gan.py, storage and aliases in storage.py).

Control flow: branches are walked on copies of the state and joined (a branch that returns,
raises, breaks or continues does not reach the join; `break`/`continue` states go to the loop's
exit and head); tests narrow each branch (`isinstance`, `torch.is_tensor`, `t.requires_grad`,
device tests, `torch.is_grad_enabled()`); loops are iterated to a fixpoint (bounded) before
the pass that reports; `try` handlers start from what the body may have done; `with` items
switch grad mode; `match` cases are branches.  Function bodies are walked after the code that
defines them (module level first), seeing the enclosing scope as it is at its end (pyflakes'
model).  Each statement gets a position in the scope (`Frame.path`: the branches it sits in,
`Frame.loops`: the loops around it, `Frame.seq`: its order), which domains attach to the events
they record (a backward, an optimizer step, a save, a write).

While it walks, it calls the rules' `visit_<NodeType>(node, ctx)` with the state before the
statement, and `enter_scope` / `leave_scope` around each scope; rules ask `ctx` (facts, grad
mode, the domains' conclusions) and never walk statements themselves.

Re-entrant: `summary(func)` walks a function's body on demand (rules off) in a frame of its
own, from inside an expression of another walk, and leaves the caller's frame untouched.
"""

from __future__ import annotations

from collections import Counter

import ast
import heapq
import os
import re
from bisect import bisect_left, bisect_right

from . import torchapi as api
from .astutil import (BLOCKS, all_nodes, attributes_changed, bind_arguments, call_constants, child_nodes, const_bool,
                      constant_defaults, decorator_names, dotted_name, expressions, first_body_line, is_plain_method,
                      kept_parameters, local_names, parameter_names, record_fields, walk, yields)
from .evaluate import (
    COPIED,
    GENERATOR_TAG,
    GRAD_OFF_CONTEXT,
    GRAD_ON_CONTEXT,
    GROUPED,
    LISTED,
    MODULE_CLASS_TAG,
    MODULE_EVIDENCE,
    MOVED,
    NO_GRAD_FORWARD,
    Evaluator,
    LazyAttrs,
    State,
    copied_name,
    given_moved,
    join_states,
    listed_name,
    moved_name,
    param_groups,
    param_of,
)
from .facts import (
    CLASS,
    FUNCTION,
    IMPORT,
    MAPPING,
    MODULE,
    NONE_DEFAULT_FACT,
    OBJECT,
    OTHER_FACT,
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
    must_grad,
)
from .summaries import Summaries, Summary, project_bases
from .gradmode import (
    EVAL_HOOKS,
    LIGHTNING_BASES,
    applied_names,
    call_modes,
    context_effect,
    decorator_turns_grad_off,
    enables_grad,
    no_grad_callees,
    no_grad_statements,
    with_turns_grad_off,
    wraps_without_grad,
)
from ..source import LazyPattern, word_count

_MAX_LOOP_PREPASS_DEPTH = 3  # nested loops whose bodies are pre-run to a fixpoint
_MAX_LOOP_ITERATIONS = 4  # pre-runs of one loop body before the reporting pass
_EXPECTED_ERRORS = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
_LIGHTNING_TAG = "lightning_module"
_GENERATOR_TAGS = frozenset({GENERATOR_TAG})
_COMPREHENSIONS = frozenset((ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
# Nodes _visit does not simply descend into: lambdas and comprehensions (their own names),
# conditional expressions (narrowed parts), nested functions and classes (scopes of their own).
_VISIT_SPECIAL = _COMPREHENSIONS | {ast.Lambda, ast.IfExp, ast.BoolOp, ast.FunctionDef, ast.AsyncFunctionDef,
                                    ast.ClassDef}
_TRAILING_NAME = LazyPattern(r"([A-Za-z_]\w*)$")
# Statement kinds, as _stmt tells them apart (sets and names bound once: not a tuple of module
# attributes built for every statement).
_SIMPLE_STMTS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Delete, ast.Assert})
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
_JUMPS = frozenset({ast.Break, ast.Continue})
_WITHS = frozenset({ast.With, ast.AsyncWith})
_TRIES = frozenset({ast.Try, getattr(ast, "TryStar", ast.Try)})
_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_Return, _Raise, _If, _ClassDef, _Import, _ImportFrom = ast.Return, ast.Raise, ast.If, ast.ClassDef, ast.Import, ast.ImportFrom
_EVIDENT_MODULE = Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN)
# A run of word characters (`str.isalnum` or `_`, as source.word_positions reads a word's ends).
_WORD = LazyPattern(r"\w+")


class ClassInfo:
    """A class of the file: its node, what `self` is in its methods, its methods by name, and
    its base classes that the file defines."""

    __slots__ = ("node", "self_fact", "lightning", "methods", "bases", "project_bases", "plain", "paramfree",
                 "class_fact", "made_frozen")

    def __init__(self, node: ast.ClassDef, self_fact: Fact | None, lightning: bool) -> None:
        self.node = node
        self.self_fact = self_fact
        self.lightning = lightning
        self.methods: dict = {}
        self.bases: list = []  # ClassInfo
        self.project_bases: list = []  # project.ProjectEntity
        # Every base is `torch.nn.Module` itself or a class of the file (Walker.class_paramfree).
        self.plain = False
        # The constructor's parameters an instance without parameters must be given literals
        # for (Walker.instance_paramfree; empty: none, the class has none whatever it is given;
        # None: it may have some), once asked; False until then.
        self.paramfree: frozenset | None | bool = False
        self.class_fact: Fact | None = None  # the class itself (what `cls` is in a class method)
        self.made_frozen: bool | None = None  # Walker.made_frozen, once asked

    def method(self, name: str):
        """(the def of method `name`, the class that defines it), searching the file's bases."""
        seen = set()
        todo = [self]
        while todo:
            info = todo.pop(0)
            if id(info) in seen:
                continue
            seen.add(id(info))
            func = info.methods.get(name)
            if func is not None:
                return func, info
            todo.extend(info.bases)
        return None, None


class Scope:
    __slots__ = ("kind", "node", "parent", "module_names", "cls", "end_env", "closure")

    def __init__(self, kind: str, node: ast.AST, parent: Scope | None, module_names: frozenset = frozenset(),
                 cls: ClassInfo | None = None) -> None:
        self.kind = kind  # "module", "function", "class"
        self.node = node
        self.parent = parent
        # Names with evidence of being an nn.Module (x.parameters(), x.eval(), ...).
        self.module_names = module_names
        self.cls = cls  # the class of a method
        self.end_env: dict | None = None  # the names at the end of the scope (what nested functions see)
        self.closure: dict | None = None


class Frame:
    """One walk of one scope's body: where the walker is in it, and what the domains record."""

    __slots__ = ("scope", "state", "stmt", "loops", "path", "recording", "dispatch", "seq", "doms",
                 "loop_exits", "returns", "in_lambda", "expects_error", "blocks", "last_live", "dead_by",
                 "loop_depth", "returns_fact", "raising", "generator", "yields_fact", "lambda_body")

    def __init__(self, scope: Scope, state: State, dispatch: bool) -> None:
        self.scope = scope
        self.state = state
        self.stmt = None
        self.loops: tuple = ()  # the loop statements around the current one, outermost first
        self.path: tuple = ()  # (id(compound), kind, branch) for each branch it sits in
        self.recording = True  # False while loop bodies are pre-run (no events, no reports)
        self.dispatch = dispatch  # rule visitors on
        self.seq = 0  # order of the simple statements (in recording passes)
        self.doms: dict = {}  # domain key -> what the domain records for this scope
        self.loop_exits: list = []  # per enclosing loop: [break states, continue states]
        self.returns: list = []  # (state, return statement) pairs
        self.in_lambda = False
        self.expects_error = 0  # inside `with pytest.raises(...)` / `self.assertRaises(...)`
        self.blocks: dict = {}  # id(stmt) -> (body list, index, owner node)
        self.last_live: State | None = None  # the state before the last return / raise / break
        self.dead_by: str | None = None
        self.loop_depth = 0
        # Per enclosing `try` body: the join of the states its statements left (what a
        # handler may start from).
        self.raising: list = []
        self.returns_fact: Fact | None = None  # the join of the returned values (summary walks)
        # A generator function's summary walk: the join of the values it yields.
        self.generator = False
        self.yields_fact: Fact | None = None
        # The walk of a lambda's body as a function (walker._dispatch_lambda): its nodes are in
        # a lambda (no statement of it is in the source).
        self.lambda_body = getattr(scope.node, "lambda_body", False)


def compatible(p1: tuple, p2: tuple) -> bool:
    """Whether statements at two branch paths can both run in one pass through the scope."""
    if not p1 or not p2:
        return True
    d2 = {i: (kind, b) for i, kind, b in p2}
    for i, kind, b in p1:
        other = d2.get(i)
        if other is None or other[1] == b:
            continue
        if kind in ("if", "match"):
            return False
        pair = {b, other[1]}
        handlers = [str(x).startswith("h") for x in pair]
        if all(handlers) or ("else" in pair and any(handlers)):
            return False
    return True


class NameSets:
    """A domain's part of the program state that maps names (or dotted names) to sets (of ids,
    of tokens) and joins by union."""

    __slots__ = ("holds",)

    def __init__(self, holds=None) -> None:
        self.holds: dict[str, frozenset] = holds if holds is not None else {}

    def copy(self):
        return type(self)(dict(self.holds))

    def join(self, other):
        if not other.holds:
            return self.copy()
        out = dict(self.holds)
        for k, v in other.holds.items():
            out[k] = out[k] | v if k in out else v
        return type(self)(out)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.holds == other.holds

    __hash__ = None


class Domain:
    """A kind of abstract value the walker carries alongside the value facts.

    `initial` gives the domain's part of a scope's start state (an object with `copy()`,
    `join(other)` and `==`), `start` what it records for the scope (events).  The transfer
    functions see the state before the statement's own effects and update
    `state.doms[self.key]`; `finish` draws the scope's conclusions, which rules read through
    `ctx.domain(key)`."""

    key = ""
    in_summaries = False  # also tracked in summary walks (what the scope yields to others)

    def active(self, walker: Walker, frame: Frame) -> bool:
        return True

    def widen(self, names: frozenset) -> None:
        """Method names defined in the project modules the file imports that may trigger the
        domain (Rule.imported_triggers); before the walk."""

    def initial(self, walker: Walker, frame: Frame):
        raise NotImplementedError

    def start(self, walker: Walker, frame: Frame):
        return None

    def simple(self, walker: Walker, stmt: ast.stmt, state: State) -> None:
        """An assignment, expression statement, return, raise, delete or assert."""

    def test(self, walker: Walker, expr: ast.expr, state: State) -> None:
        """The test of an `if` / `while`, a `for` header, a `match` subject."""

    def loop_target(self, walker: Walker, stmt, state: State) -> None:
        """The start of one iteration of `for target in iter:`."""

    def with_item(self, walker: Walker, item: ast.withitem, state: State) -> None:
        """One item of a `with` statement."""

    def finish(self, walker: Walker, frame: Frame) -> None:
        """The scope's walk is over."""


_VISITORS: dict = {}


_Name, _Constant = ast.Name, ast.Constant
# Nodes without children that `_visit` need not push unless a rule looks at them.
_LEAVES = frozenset({ast.Name, ast.Constant, *(c for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
                                               for c in base.__subclasses__())})


def _visitors(rule_class) -> tuple:
    """((ast node type, method name), ...) of a rule class's `visit_<NodeType>` methods, once a
    class (`dir` costs about 20 microseconds a rule, and the walker is made for every file)."""
    found = _VISITORS.get(rule_class)
    if found is None:
        found = []
        for attr in dir(rule_class):
            if attr.startswith("visit_"):
                node_type = getattr(ast, attr[6:], None)
                if isinstance(node_type, type):
                    found.append((node_type, attr))
        found = _VISITORS[rule_class] = tuple(found)
    return found


def by_offsets(admit, text: str):
    """`admit`'s answer for `text[start:end]`, as a function of (start, end): its own `span`
    where it has one (engine.py: the same answer, by offsets), else of the slice."""
    span = getattr(admit, "span", None)
    return span if span is not None else lambda start, end: admit(text[start:end])


def any_admitted(text: str, functions, admit, known: dict) -> bool:
    """Whether `admit` (the engine's scope filter) says yes of one of `functions` or of the code
    outside them (the text less their bodies), stopping at the first that it does.  `functions`:
    (line of the `def`, offset of that line, offset after the function's last line, offset of
    its first statement's line, or None when that is the `def` line) of each function of the
    module or class bodies (not of those inside functions), in any order; `known` gets what
    `admit` said of each, by line."""
    bodies: list = []  # (start, end) offsets of the function bodies outside the module's code
    ask = by_offsets(admit, text)
    for line, start, end, first in functions:
        ok = known[line] = ask(start, end)
        if ok:
            return True
        if first is not None:
            bodies.append((first, end))
    if not bodies:
        return admit(text)
    bodies.sort()
    kept, at = [], 0
    for start, end in bodies:
        if start >= at:
            kept.append(text[at:start])
            at = end
    kept.append(text[at:])
    return admit("".join(kept))


class Walker(Summaries, Evaluator):
    """Walks one module, keeps the abstract state, hosts the domains, dispatches rule visitors."""

    def __init__(self, tree: ast.Module, rules, context, scope_filter=None, domains=(), project=None,
                 module: str | None = None, module_is_package: bool = False, admitted: dict | None = None) -> None:
        self.tree = tree
        # The whole project (project.py): imports of its modules bind what they define.
        self.project = project
        self.module = module
        self.module_is_package = module_is_package
        self._project_facts: dict = {}
        # scope_filter(function_source) -> bool: False means no enabled rule can report in
        # that function, which is then not walked at all (the engine's per-function pre-filter).
        self._scope_filter = scope_filter
        # The lines of the module's text that may hold an assignment expression (`:=`; None:
        # any line may, the text is not known): most hold none.
        lines = getattr(context, "lines", None)
        self._walrus = _walrus_lines(lines.text) if lines is not None else None
        self.ctx = context
        context.walker = self
        self.lines = getattr(context, "lines", None)
        self.domains = list(domains)
        self.saw_torch = False
        self.imported: set = set()  # top-level packages the file imports
        self.frame: Frame | None = None
        self.module_scope: Scope | None = None
        self._cache: dict[int, tuple] = {}
        self._pending: list = []
        # Line of a function's `def` -> what the scope filter said of its source (any_admitted).
        # `admitted`: what it said of the functions of the file's layout, where it said yes of
        # one, or of the code outside them (the engine asks before it parses the file).
        self._admitted: dict = admitted if admitted is not None else {}
        self._admitted_by_layout = admitted is not None
        # Functions walked only for what they pass the functions they call (_callers_first): with
        # rules off, their own callers' facts on.
        self._passers: set = set()
        self._dotted_roots: set = set()  # first names of the dotted keys (`self.w`) ever bound
        self._container_aliases: dict = {}  # (evaluate.Evaluator._rebind_container)
        self._no_grad_callees: frozenset | None = None  # computed when a function is first walked
        self._mentions_grad_mode: bool | None = None
        self._applied: frozenset | None = None  # names the file hands to an `apply` (applied_names)
        self._init_summaries()
        self._evidence: tuple | None = None
        self.functions: dict = {}  # module-level functions by name
        self.enclosing: dict = {}  # id(def) -> the scope of the function that defines it
        self._lambda_defs: dict = {}  # id(lambda) -> the def it stands for (lambda_def)
        self._dispatched_lambdas: set = set()  # ids of the lambdas whose bodies are walked as defs
        self._lazy_attrs: list = []  # the LazyAttrs of this file's classes (release() unhooks them)
        self._expressions: dict = {}  # id(simple statement) -> astutil.expressions of it
        self.classes: dict = {}  # id(ClassDef) -> ClassInfo
        self._inherited_ctors: dict = {}  # id(ClassDef) -> Walker._inherited_constructor
        self._local_ctors: dict = {}  # id(ClassDef) -> Walker.local_constructor
        self._holders: dict = {}  # id(ClassDef) -> Walker._param_holders
        self._setters: set | None = None  # names of the file's functions that set requires_grad
        self._word_counts: Counter | None = None  # word -> how often the text names it (_named_once)
        self._words_asked = 0
        self._all_call_modes = None  # gradmode.call_modes(tree)[0], of every body (_only_without_grad)
        self._frozen_params: dict = {}  # id(def) -> positions of the parameters it freezes (freezes_parameters)
        self._inplace: dict = {}  # id(def) -> storage.inplace_parameters
        handlers: dict[type, list] = {}
        self._enter, self._leave = [], []
        for rule in rules:
            for node_type, attr in _visitors(type(rule)):
                handlers.setdefault(node_type, []).append(getattr(rule, attr))
            if hasattr(rule, "enter_scope"):
                self._enter.append(rule.enter_scope)
            if hasattr(rule, "leave_scope"):
                self._leave.append(rule.leave_scope)
        self._handlers = handlers
        self._leaves = _LEAVES - handlers.keys()

    # ------------------------------------------------------------------ driving

    def run_module(self) -> None:
        """Walk the module-level code only, with rules off (a summary of the module for the
        files that import it: its functions and classes are walked on demand)."""
        scope = self.module_scope = Scope("module", self.tree, None, self._module_evidence(self.tree))
        self._walk_scope(scope, self.tree.body, State({}, False), dispatch=False)

    def run(self) -> None:
        if self._scope_filter is not None and not self._anything_admitted():
            return
        scope = self.module_scope = Scope("module", self.tree, None, self._module_evidence(self.tree))
        self._walk_scope(scope, self.tree.body, State({}, False), dispatch=True)
        violations = self.ctx.violations
        while self._pending:
            pending, self._pending = self._callers_first(self._pending), []
            for func, parent, no_grad, cls in pending:
                passer = id(func) in self._passers
                found, more = len(violations), len(self._pending)
                self._run_function(func, parent, no_grad, cls, dispatch=not passer, passer=passer)
                if len(violations) > found and not no_grad and not passer and (cls is not None or parent is scope):
                    if self._called_without_grad_elsewhere(func):
                        # What it reports was for grad on, and every call of it is made with grad
                        # off: walked again so (and the functions it defines with it).
                        del violations[found:]
                        del self._pending[more:]
                        self._run_function(func, parent, True, cls, dispatch=True)
                    elif cls is None:
                        given = self._given_by_callers_elsewhere(func)
                        if given:
                            # What it reports was for parameters of unknown origin, and the
                            # project's other files call it: walked again with what they pass.
                            # Only what the first walk reported may stay (the calls also show
                            # a hazard at the argument, in the file that passes it).
                            first = violations[found:]
                            del violations[found:]
                            del self._pending[more:]
                            self._run_function(func, parent, False, cls, dispatch=True, given=given)
                            still = {(v.line, v.col, v.code) for v in violations[found:]}
                            violations[found:] = [v for v in first if (v.line, v.col, v.code) in still]

    def check_function(self, func, given: dict, cls: ClassInfo | None = None) -> None:
        """Walk function `func` of the module to report, its parameters `given` ({name: fact},
        the rest unknown), after `run_module`: what the rules find in it for one call of
        another module (through.Through.check).  `cls`: the class of a method (its first
        parameter is an instance of it, unless `given` says more)."""
        self._run_function(func, self.module_scope, False, cls, dispatch=True, given=given, sites=False)

    def call_sinks(self, call: ast.Call, state: State) -> list:
        """What a call of a function of another module of the project makes the rules report
        inside that function, for each tensor that requires grad (for certain) it passes:
        [(argument expression, code, "file.py:line", whether what is reported there is a
        parameter of the module the argument is), ...], each argument asked alone.  Empty
        unless the callee is a top-level function of a project module."""
        through = self.project.through if self.project is not None else None
        func = call.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        if name == "apply" and through is not None and not self._surveying and len(call.args) == 1 \
                and not call.keywords and type(func) is ast.Attribute:
            return self._applied_sinks(call, through, state)
        if through is None or name not in through.names or self._surveying:
            return []
        f = self.fact(func, state)
        entity = f.node
        static = None  # the class of a static method called on it (`Init.zero(net)`)
        if f.kind == UNKNOWN and type(func) is ast.Attribute:
            recv = self.fact(func.value, state)
            owner = recv.node
            if not (hasattr(owner, "is_static") and "." not in owner.path and owner.is_static(func.attr)):
                if recv.kind == OBJECT or recv.kind == MODULE:
                    return self._method_argument_sinks(call, recv, func.attr, through, state)
                return []
            static = owner
            entity = self.project.entity((owner.module, f"{owner.path}.{func.attr}"))
        elif f.kind == CLASS and hasattr(entity, "method_stub"):
            # `Normalize(MEAN)`: what the constructor of another module's class does with what
            # it is passed (`self.mean = torch.tensor(mean)`).
            return self._method_argument_sinks(call, f, "__init__", through, state)
        elif f.kind == FUNCTION and self.ctx.through_call is not None and self.module is not None \
                and isinstance(entity, ast.FunctionDef) and entity in self.tree.body:
            # (Walked for a call of another module: a function of this module it hands what it
            # was given to, `return ece(probs, y)`, as that call would ask it: Through._calls_own.)
            entity = self.project.entity((self.module, entity.name))
            if entity is None or not hasattr(entity, "sinks_for"):
                return []
        elif f.kind != FUNCTION or not hasattr(entity, "sinks_for") or "." in entity.path:
            return []
        where = self.project.path_of(entity.module)
        if where is None:
            return []
        if static is not None:
            if func.attr not in through.methods(where, static.path):
                return []
        elif entity.name not in through.functions(where) and not (
                entity.name in through.relay_names and entity.relays()) and not through.plain_parameters(
                where, entity.name) and entity.name not in through.hands_on(where):
            return []
        out = []
        pairs, complete = bind_arguments(entity.node, call, False)
        constants = call_constants(entity.node, pairs, complete)
        copied = through.plain_parameters(where, entity.name) if static is None else frozenset()
        for param, expr in pairs:
            f = self.fact(expr, state)
            a = self._sink_argument(f) or self._plain_tensor_argument(f, param, copied)
            if a is None:
                continue
            for code, line, how in entity.sinks_for({param: a}, constants):
                out.append((expr, code, f"{self._file_of(entity)}:{line}", how == "p"))
        return out

    def _applied_sinks(self, call: ast.Call, through, state: State) -> list:
        """call_sinks for `net.apply(init_weights)`, `init_weights` a top-level function of another
        module of the project: what the rules report inside it for a submodule of `net` (as
        `_sink_argument` passes a module: one whose parameters and output require grad for
        certain), reported at `net`."""
        arg = call.args[0]
        if (arg.id if type(arg) is ast.Name else arg.attr if type(arg) is ast.Attribute else None) not in through.names:
            return []
        recv = self.fact(call.func.value, state)
        f = self.fact(arg, state)
        entity = f.node
        if recv.kind != MODULE or f.kind != FUNCTION or not hasattr(entity, "sinks_for") or "." in entity.path \
                or self._own_apply(recv):
            return []
        where = self.project.path_of(entity.module)
        if where is None or entity.name not in through.functions(where):
            return []
        params = [*entity.node.args.posonlyargs, *entity.node.args.args]
        a = self._sink_argument(recv)  # (a torch module as a plain one: its class's facts do not cross)
        if not params or a is None:
            return []
        return [(call.func.value, code, f"{self._file_of(entity)}:{line}", how == "p")
                for code, line, how in entity.sinks_for({params[0].arg: a}, {})]

    def _method_argument_sinks(self, call: ast.Call, recv: Fact, name: str, through, state: State) -> list:
        """call_sinks for `logger.log(out)`: a method of an instance of a class of another module
        of the project (or inherited from one by a class of the file: `self.to_numpy(out)`),
        for each tensor that requires grad (for certain) the call passes it."""
        owner, _own = self._project_method_owner(recv.node, name)
        if owner is not None and name == "__init__" and owner.method_stub(name) is None:
            owner = owner.method_owner(name)  # (a constructor it inherits: `class Child(Base):`)
        if owner is None:
            return []
        # (Its module's text first: the stub may parse the method, or summarise the module.)
        where = self.project.path_of(owner.module)
        if where is None:
            return []
        sinks = name in through.methods(where, owner.path) if name != "__init__" else \
            through.constructs(where, owner.path)
        if not sinks and (name != "__init__" or not through.plain_parameters(where, owner.path, name)):
            return []
        stub = owner.method_stub(name)
        if stub is None or owner.is_static(name):
            return []
        out = []
        pairs, complete = bind_arguments(stub, call, True)
        constants = call_constants(stub, pairs, complete)
        copied = through.plain_parameters(where, owner.path, name)
        for param, expr in pairs:
            f = self.fact(expr, state)
            a = self._sink_argument(f) if sinks else None
            a = a or self._plain_tensor_argument(f, param, copied)
            if a is None:
                continue
            for code, line, how in owner.method_args_sinks_for(name, {param: a}, constants):
                out.append((expr, code, f"{self._file_of(owner)}:{line}", how == "p"))
        return out

    def _project_method_owner(self, owner, name: str) -> tuple:
        """(the class of another module of the project whose method `name` an instance of
        `owner` runs, its `ProjectEntity`: `owner` itself, or for a class of the file the base of
        another module it inherits the method from; the file's class info, or None), with None
        for the first where the class of the file defines the method (its own walk sees what it
        is passed) or where it is no top-level class of another module."""
        own = None
        if isinstance(owner, ast.ClassDef):
            own = self.classes.get(id(owner))
            if own is None or own.method(name)[0] is not None:
                return None, own
            owner = next((b for b in project_bases(own) if b.method_stub(name) is not None), None)
        if owner is None or not hasattr(owner, "method_stub") or "." in owner.path:
            return None, own
        return owner, own

    def kept_sinks(self, call: ast.Call, state: State) -> list:
        """What a call of a method of an instance of a class of another module of the project
        that keeps one of its parameters in an attribute (`logger.log(loss)`, with `def log(self,
        v): self.last = v` in utils.py: through.Through.keepers) makes the rules report in
        another method of the class that reads the attribute (`def dump(self): return
        self.last.numpy()`), for each tensor that requires grad (for certain) the call passes
        for it, where the file calls that method on the same instance (`logger.dump()`, in the
        function of the call): [(argument expression, code, "file.py:line", method), ...]."""
        through = self.project.through if self.project is not None else None
        func = call.func
        if through is None or type(func) is not ast.Attribute or func.attr not in through.kept or self._surveying \
                or self.lines is None:
            return []
        key = dotted_name(func.value)
        recv = self.fact(func.value, state) if key is not None else None
        if recv is None or recv.kind != OBJECT:
            return []
        name = func.attr
        owner, own = self._project_method_owner(recv.node, name)
        if owner is None:
            return []
        where = self.project.path_of(owner.module)
        if where is None or name not in through.keepers(where, owner.path):
            return []
        # (What the call keeps is converted where the file calls the converting method on the
        # same instance, and only there; the text first, before the module is asked anything.)
        readers = [m for m in sorted(through.methods(where, owner.path))
                   if m != name and (own is None or own.method(m)[0] is None) and self._calls_on(key, m, func.value)
                   and not self._only_without_grad(m)]
        stub = owner.method_stub(name) if readers else None
        if stub is None or owner.is_static(name):
            return []
        passed = []  # (parameter, argument, its fact): the tensors that require grad it passes
        for param, expr in bind_arguments(stub, call, True)[0]:
            a = self._sink_argument(self.fact(expr, state))
            if a is not None and (a.kind == TENSOR and a.grad is Grad.YES or a.kind == SEQ and a.element is not None):
                passed.append((param, expr, a))  # (not a torch module, nor a tensor on an accelerator)
        kept = owner.kept_parameters(name) if passed else ()
        out = []
        for param, expr, a in passed:
            for attr, how in [(attr, how) for p, attr, how in kept if p == param]:
                if _changes_attribute(self.lines.text, attr):
                    continue  # (the file binds or changes it itself: `logger.last = None`)
                if how == "append":
                    if a.kind != TENSOR:
                        continue
                    held = Fact(SEQ, a.grad, a.device, element=a)  # (the list it adds to: this call's)
                elif self._calls_on(key, name, func.value) > 1:
                    continue  # (another call may set it last: `logger.log(val_loss)` under no_grad)
                else:
                    held = a
                for m in readers:
                    for code, line, _how in owner.method_sinks_for(m, {attr: held}):
                        out.append((expr, code, f"{self._file_of(owner)}:{line}", m))
        return out

    def _only_without_grad(self, name: str) -> bool:
        """Whether every call the file makes by the name `name` (`logger.dump()`) runs with grad
        off (under `torch.no_grad()`, after `torch.set_grad_enabled(False)`: gradmode.call_modes
        of every body, read once a file where asked), where `.numpy()` raises for no tensor."""
        if self._all_call_modes is None:
            self._all_call_modes = call_modes(self.tree)[0]
        modes = self._all_call_modes.get(name)
        return bool(modes) and all(off for off, _ in modes)

    def _calls_on(self, key: str, method: str, recv) -> int:
        """How many times the code calls `method` on `key` (`logger.dump(`), by its text: the
        function being walked's where `key` is a plain name there, else the file's."""
        scope = self.frame.scope if self.frame is not None else None
        text = self.source_of(scope.node) if type(recv) is ast.Name and scope is not None \
            and scope.kind == "function" else self.lines.text
        needle = f"{key}.{method}("
        found = 0
        i = text.find(needle)
        while i != -1:
            if i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_."):
                found += 1
            i = text.find(needle, i + len(needle))
        return found

    def method_sinks(self, call: ast.Call, state: State) -> list:
        """What a call of a method of an instance of a class of another module of the project
        (`t.predict(x)`, `t = Trainer(net)`) makes the rules report inside that method, for each
        attribute the instance's constructor call gave a torch module or a tensor that requires
        grad (for certain): [(attribute, code, "file.py:line", whether what is reported is a
        parameter of the module the attribute holds), ...], each attribute asked alone
        (evaluate.Evaluator._constructed)."""
        through = self.project.through if self.project is not None else None
        func = call.func
        if through is None or type(func) is not ast.Attribute or func.attr not in through.names or self._surveying:
            return []
        recv = self.fact(func.value, state)
        attrs = recv.attrs
        entity = recv.node
        given = getattr(attrs, "given", None)
        if not given or recv.kind not in (OBJECT, MODULE) or not hasattr(entity, "method_sinks_for"):
            return []
        where = self.project.path_of(entity.module)
        if where is None or func.attr not in through.methods(where, entity.path):
            return []
        out = []
        key = dotted_name(func.value)
        for attr, a in sorted(given.items()):
            a = self._sink_argument(a)
            if a is None or key is not None and f"{key}.{attr}" in state.env:
                continue  # (`t.model = other` since: not what the constructor was passed)
            for code, line, how in entity.method_sinks_for(func.attr, {attr: a}):
                out.append((attr, code, f"{self._file_of(entity)}:{line}", how == "p"))
        return out

    def _sink_argument(self, a: Fact) -> Fact | None:
        """What of a value passed to another module's function or constructor is asked there
        (call_sinks, method_sinks): a torch module as a plain one (`evaluate(net, x)`, where
        `evaluate` calls `.numpy()` on what it computes), a tensor that requires grad, an
        iterable of them (`model.parameters()`, a list), an optimizer's groups of them
        (`param_groups`, evaluate.param_groups); else None."""
        if a.kind == MODULE:
            return self._plain_module(a)
        el = a.element
        if a.kind == SEQ and el is not None and el.kind == MAPPING and el.attrs:
            params = el.attrs.get("params")
            return a if params is not None and self._sink_argument(params) is params else None
        if a.node is None and a.attrs is None and (
                a.kind == TENSOR and a.grad is Grad.YES
                or (a.kind == PARAMS or a.kind == SEQ) and el is not None and el.kind == TENSOR
                and el.grad is Grad.YES):
            return a
        if a.kind == TENSOR and a.device is Device.ACCEL and a.node is None and a.attrs is None:
            # A tensor that may live on an accelerator as TNS102 reads one (`to_numpy(x.cuda())`),
            # asked as one that does not require grad: what it adds is the device alone.
            return a.but(grad=Grad.NO, min_grad=None)
        return None

    @staticmethod
    def _plain_tensor_argument(a: Fact, param: str, copied: frozenset) -> Fact | None:
        """A torch tensor by the flow of the code (`MEAN = torch.tensor([...])`) passed for a
        parameter the callee copy-constructs (`copied`: Through.plain_parameters, TNS202's
        `torch.tensor(mean)`), asked as one that does not require grad; else None."""
        if param in copied and a.kind == TENSOR and a.by_flow and a.node is None and a.attrs is None:
            return a.but(grad=Grad.NO, min_grad=None)
        return None

    @staticmethod
    def _file_of(entity) -> str:
        summary = entity.summary
        return os.path.basename(summary.path) if summary is not None else entity.module

    def _plain_module(self, a: Fact) -> Fact | None:
        """A module a call passes to another module's function, as a plain torch module (its
        class's facts do not cross): only one that is a torch module for certain, whose
        parameters require grad on every path and whose output does (a forward of its class
        known to return a tensor that requires grad); else None."""
        if not a.by_flow or a.frozen or a.paramfree or NO_GRAD_FORWARD in a.tags:
            return None
        if a.node is None:  # a torch.nn module
            if a.grad is not Grad.YES or must_grad(a) is not Grad.YES:
                return None
        else:  # an instance of a class of the project: what its forward returns
            result = self.method_result(a.node, "forward")
            if result is None or result.kind != TENSOR or must_grad(result) is not Grad.YES:
                return None
        return Fact(MODULE, Grad.YES, a.device, by_flow=True)

    def release(self) -> None:
        """Forget everything, once the run is over and nothing will be asked again: the walker,
        its context, its domains and its scopes refer to each other, and those cycles would keep
        the tree and every fact alive until the cyclic collector came by."""
        ctx = self.__dict__.get("ctx")
        if ctx is not None and getattr(ctx, "walker", None) is self:
            ctx.walker = None
            ctx._last_sinks = None
        for d in self.__dict__.get("domains", ()):
            if getattr(d, "walker", None) is self:
                d.walker = None
        for attrs in self.__dict__.get("_lazy_attrs", ()):
            attrs.unhook()
        self.__dict__.clear()

    def _anything_admitted(self) -> bool:
        """Whether the scope filter admits a function of the module or class bodies (functions
        nested in functions are walked only inside an admitted one), or the code outside them:
        when it admits nothing, no rule can report and the file is not walked at all.  What it
        said of each function is kept for `_callers_first`."""
        lines = self.lines
        if lines is None:
            return True
        if self._admitted_by_layout:  # (the engine asked the functions of the file's layout)
            return True
        starts, text = lines.starts, lines.text

        def functions():
            stack = list(reversed(self.tree.body))
            while stack:
                node = stack.pop()
                t = type(node)
                if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                    end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(text)
                    first = first_body_line(node)
                    # (The header, decorators and defaults, stays module code.)
                    yield node.lineno, starts[node.lineno - 1], end, starts[first - 1] if first > node.lineno else None
                elif t in BLOCKS:  # (the statement lists of compound statements, outside functions)
                    for field in BLOCKS[t]:
                        stack.extend(reversed(getattr(node, field)))

        return any_admitted(text, functions(), self._scope_filter, self._admitted)

    def _callers_first(self, pending: list) -> list:
        """The deferred functions to walk, each after the functions that call it (by name; in
        order of definition otherwise, and within a cycle): a function walked to report records
        what it passes to the functions it calls, with what its own callers passed it, so that
        facts reach down call chains (`evaluate(model, x)` -> `to_numpy(model(x))`).  The calls
        are found by name in the text (summaries.call_positions), each in the innermost function
        around it.

        With the engine's scope filter, the functions in which a rule may report, and every
        function that calls one of those (and so on up): the facts that reach a finding down a
        chain of calls come through functions with nothing to report themselves."""
        admit = self._scope_filter
        if admit is not None:
            known = self._admitted
            ask = by_offsets(admit, self.lines.text)
            wanted = [known[item[0].lineno] if item[0].lineno in known else ask(*self._offsets(item[0]))
                      for item in pending]
            if not any(wanted):
                return []
        if len(pending) < 2 or self.lines is None:
            return pending if admit is None else [item for item, w in zip(pending, wanted) if w]
        index = {id(item[0]): i for i, item in enumerate(pending)}
        # Each function with parameters by the name its calls use, as summaries.parameter_facts
        # reads them (a class's `__init__` by the class's name; `forward` and the other dunders
        # are called by Python and nn.Module, out of sight); a callee without parameters gains
        # nothing from its callers.
        by_name: dict = {}
        receives: set = set()
        for j, (func, _parent, _no_grad, cls) in enumerate(pending):
            takes_self = cls is not None and is_plain_method(func)
            if len(func.args.args) + len(func.args.posonlyargs) + len(func.args.kwonlyargs) <= takes_self:
                continue
            name = func.name
            if name == "__init__" and cls is not None:
                name = cls.node.name
            elif name.startswith("__") or name == "forward":
                continue
            by_name.setdefault(name, []).append(j)
            receives.add(j)
        if not by_name:
            return pending if admit is None else [item for item, w in zip(pending, wanted) if w]
        def callers_of(name: str) -> list:
            """The functions (indices) the calls of `name` stand in (asked once a name)."""
            found = []
            for here in self.call_positions(name):
                caller = self.function_around(here)
                i = index.get(id(caller)) if caller is not None else None
                if i is not None:
                    found.append(i)
            return found

        callees: list = [[] for _ in pending]
        if admit is None:
            for name, targets in by_name.items():
                for i in callers_of(name):
                    for j in targets:
                        if j != i:
                            callees[i].append(j)
        else:
            # Up the chains: a caller of a function walked to report is walked too when facts
            # reach it from its own callers.  One that receives none (`forward`, a function
            # without parameters) is walked with rules off, as far as a callee's parameters need
            # it (summaries._survey), and that walk sees what this one would.  Only the names
            # of the functions walked are looked up: the order among the others is never used.
            name_of = {j: name for name, targets in by_name.items() for j in targets}
            todo = [j for j, w in enumerate(wanted) if w]
            seen_names: set = set()
            while todo:
                name = name_of.get(todo.pop())
                if name is None or name in seen_names:
                    continue
                seen_names.add(name)
                for i in callers_of(name):
                    for j in by_name[name]:
                        if j != i:
                            callees[i].append(j)
                    if i in receives and not wanted[i]:
                        wanted[i] = True
                        todo.append(i)
                        if self._quiet_passer(pending[i][0]):
                            self._passers.add(id(pending[i][0]))
            pending = [item for item, w in zip(pending, wanted) if w]
            if len(pending) < len(wanted):
                keep = [i for i, w in enumerate(wanted) if w]
                renumber = {old: new for new, old in enumerate(keep)}
                callees = [[renumber[j] for j in callees[i] if j in renumber] for i in keep]
        indegree = [0] * len(pending)
        for targets in callees:
            for j in targets:
                indegree[j] += 1
        if not any(indegree):
            return pending
        order: list = []
        done = [False] * len(pending)
        ready = [i for i in range(len(pending)) if indegree[i] == 0]
        heapq.heapify(ready)
        first_left = 0
        while len(order) < len(pending):
            if not ready:  # a cycle: the first left, in order of definition
                while done[first_left]:
                    first_left += 1
                ready = [first_left]
            i = heapq.heappop(ready)
            if done[i]:
                continue
            done[i] = True
            order.append(i)
            for j in callees[i]:
                indegree[j] -= 1
                if indegree[j] == 0 and not done[j]:
                    heapq.heappush(ready, j)
        return [pending[i] for i in order]

    def _quiet_passer(self, func) -> bool:
        """Whether a function that no rule's scope test admits, walked only for what it passes
        the functions it calls, may be walked with rules off: not where a domain keeps what a
        walk to report records in it for others (the GAN domain: what a discriminator step does
        in its callers), nor one that defines functions or classes (walked to report in it, and
        a scope test may admit them where it does not admit the function around them)."""
        if any(d.in_summaries for d in self.domains):
            return False
        source = self.source_of(func)
        return source.count("def ") <= 1 and "class " not in source and "lambda" not in source

    def source_of(self, node) -> str:
        start, end = self._offsets(node)
        return self.lines.text[start:end]

    def _walk_scope(self, scope: Scope, body: list, state: State, dispatch: bool) -> Frame:
        frame = Frame(scope, state, dispatch)
        if not dispatch and scope.kind == "function" and self._is_generator(scope.node):
            frame.generator = True
        if scope.kind == "module":
            self.module_frame = frame
        outer, self.frame = self.frame, frame
        try:
            if scope.kind != "class":
                for d in self.domains:
                    if (dispatch or d.in_summaries) and d.active(self, frame):
                        frame.doms[d.key] = d.start(self, frame)
                        state.doms[d.key] = d.initial(self, frame)
            if dispatch:
                for hook in self._enter:
                    hook(scope, self.ctx)
            end = self.block(body, state, scope.node)
            exits = [s for s, _ in frame.returns]
            final = end
            for s in exits:
                final = join_states(final, s)
            if final is None:
                final = frame.last_live or state
            scope.end_env = final.env
            frame.state = final
            if frame.generator:
                # Calling it gives a generator: iterating it gives what it yields (what it
                # returns ends the iteration).
                el = frame.yields_fact or UNKNOWN_FACT
                frame.returns_fact = Fact(SEQ, el.grad, el.device, element=el, tags=_GENERATOR_TAGS)
            elif not dispatch and scope.kind == "function":
                for st, ret in frame.returns:
                    f = self.fact(ret.value, st) if ret.value is not None else OTHER_FACT
                    frame.returns_fact = f if frame.returns_fact is None else join(frame.returns_fact, f)
            for d in self.domains:
                if d.key in frame.doms:
                    d.finish(self, frame)
            if dispatch:
                for hook in self._leave:
                    hook(scope, self.ctx)
        finally:
            self.frame = outer
        return frame

    def _run_function(self, func, parent: Scope, no_grad: bool, cls: ClassInfo | None, dispatch: bool,
                      given: dict | None = None, sites: bool = True, passer: bool = False,
                      upto: int | None = None) -> Frame:
        """Walk `func`'s body.  `given`: facts of some parameters (one call's arguments,
        summaries.call_result) over what their annotations say.  `sites`: in a walk to report,
        the parameters also take what the file's calls pass (`parameter_facts`); `passer`: a
        walk with rules off that takes them too (a caller walked for what it passes on,
        _callers_first).  `upto`: only the first `upto` statements of its body (a survey of
        the calls in them, summaries._survey)."""
        scope = Scope("function", func, parent, self._module_evidence(func), cls)
        outer = self._closure(parent)
        no_grad = (no_grad or self._decorated_no_grad(func, outer) or self._only_called_without_grad(func)
                   or (cls is not None and cls.lightning and func.name in EVAL_HOOKS))
        if no_grad and func.decorator_list and enables_grad(func, lambda n: self.qualname(n, State(outer or {}, False))):
            no_grad = False  # (`@torch.enable_grad()`: on, whatever its callers' mode)
        state = State({}, no_grad, outer)
        probe = State(outer or {}, False)
        args = func.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        self_fact = None
        if cls is not None:
            # `self` of a method is the instance; `cls` of a class method the class itself
            # (`return cls(...)`: an instance).
            decorators = decorator_names(func)
            self_fact = cls.class_fact if "classmethod" in decorators else \
                None if "staticmethod" in decorators else cls.self_fact
            if dispatch and self_fact is not None and sites:
                self_fact = self.site_instance(func, cls) or self_fact
        defaults = _none_defaults(args)
        for i, a in enumerate(params):
            fact = UNKNOWN_FACT
            if i == 0 and self_fact is not None and a in (args.posonlyargs + args.args):
                fact = self_fact
            elif a.annotation is not None:
                fact = self._annotation_fact(a.annotation, probe)
            if fact is UNKNOWN_FACT and a.arg in defaults:
                fact = NONE_DEFAULT_FACT
            state.env[a.arg] = fact
        for a in (args.vararg, args.kwarg):
            if a is not None:
                state.env[a.arg] = UNKNOWN_FACT
        if given:
            state.env.update(given)
        if (dispatch or passer) and sites:
            # What the file's call sites pass (summary walks and surveys keep the parameters
            # unknown: one level of call sites, and no walk waits for another).
            self._walked.add(id(func))
            for name, fact in self.parameter_facts(func, cls).items():
                if fact.kind != "unknown" or state.env.get(name) in _UNKNOWN_PARAMETERS:
                    state.env[name] = fact
                elif name in state.env and not fact.tags.isdisjoint(SITE_CONSTANTS):
                    old = state.env[name]  # (what its annotation says, and what the calls give it)
                    state.env[name] = old.but(tags=old.tags | fact.tags.intersection(SITE_CONSTANTS))
        return self._walk_scope(scope, func.body if upto is None else func.body[:upto], state, dispatch)

    def _dispatch_lambda(self, stmt: ast.Assign, frame: Frame, state: State) -> None:
        """`name = lambda ...`: the lambda's body is walked to report as the body of a function
        of that name (what the calls of `name` pass its parameters, the grad mode they are
        made in), after its scope, as a def is; not where it is written, with its parameters
        unknown."""
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        lam = stmt.value
        if type(target) is not _Name or id(lam) in self._dispatched_lambdas:
            return
        made = self.lambda_def(lam)
        made.name = target.id
        self._dispatched_lambdas.add(id(lam))
        self._pending.append((made, frame.scope, state.no_grad, None))

    def lambda_def(self, node: ast.Lambda):
        made = self._lambda_defs.get(id(node))
        if made is None:
            body = ast.Return(value=node.body)
            made = ast.FunctionDef(name="<lambda>", args=node.args, body=[body], decorator_list=[], returns=None,
                                   type_comment=None, type_params=[])
            for n in (made, body):
                n.lineno, n.col_offset = node.lineno, node.col_offset
                n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset
            made.lambda_body = True
            self._lambda_defs[id(node)] = made
            frame = self.frame
            if frame is not None and frame.scope.kind == "function":
                self.enclosing[id(made)] = frame.scope
        return made

    def scope_with(self, scope: Scope, env: dict) -> Scope:
        """`scope` (of a function being walked) as a function it defines sees it when called
        now, its names being `env` (summaries._for_call)."""
        here = Scope(scope.kind, scope.node, scope.parent, scope.module_names, scope.cls)
        here.end_env = env
        return here

    def _closure(self, scope: Scope | None) -> dict | None:
        """The names a function defined in `scope` sees from outside: each enclosing function's
        and the module's, as they are at the end of those scopes."""
        if scope is None:
            return None
        if scope.end_env is None:
            # Asked while the scope is still being walked (a summary needed by module-level
            # code): the names as they are now; of a function, those it binds are not known
            # yet (not what the scopes around it bind to the same names).
            if scope.kind == "module":
                return self.module_frame.state.env
            above = self._closure(scope.parent)
            own = local_names(scope.node)
            if above and not own.isdisjoint(above):
                above = {**above, **dict.fromkeys(own, UNKNOWN_FACT)}
            return above
        if scope.closure is None:
            env = scope.end_env
            if scope.kind == "module":
                scope.closure = env
            else:
                above = self._closure(scope.parent) or {}
                scope.closure = {**above, **env}
        return scope.closure

    def _only_called_without_grad(self, func) -> bool:
        if func.name == "forward" or func.name.startswith("__"):
            return False  # also called by nn.Module.__call__ / Python itself, out of our sight
        if self._mentions_grad_mode is None:
            text = self.lines.text if self.lines is not None else ""
            self._mentions_grad_mode = not text or any(
                h in text for h in ("no_grad", "inference_mode", "set_grad_enabled"))
        if not self._mentions_grad_mode:
            return False
        if not self.called_elsewhere(func.name):
            if self._applied is None:  # (the names the file hands to an `apply`, read once)
                self._applied = applied_names(self.lines.text) if self.lines is not None else frozenset()
            if func.name not in self._applied:
                return False
        if self._no_grad_callees is None:
            self._no_grad_callees = no_grad_callees(self.tree, self.lines)
        return func.name in self._no_grad_callees

    def _called_without_grad_elsewhere(self, func) -> bool:
        """Whether a method of a class of the module, or a function of its top level, one the
        file never calls nor names again, is called by the other files of the project, and only
        with grad off (Project.called_without_grad: a model's `predict`, an EMA update helper,
        that a script calls under no_grad), as
        `_only_called_without_grad` says of the calls in the file.  Asked only in default mode,
        of one where a rule reported something: the other files are read for it, and the
        file's result is then not kept in the result cache (Project.files_mentioning)."""
        project = self.project
        name = func.name
        if project is None or self.ctx.options.strict or name == "forward" or name.startswith("__") \
                or self.lines is None:
            return False  # (strict mode reports what another caller, with grad on, may meet)
        if not self._named_once(name):
            return False  # (named again in the file: called, passed or kept here)
        return project.called_without_grad(name, project.path_of(self.module) if self.module else None,
                                           "yield" in self.source_of(func))

    def _named_once(self, name: str) -> bool:
        """Whether the file's text names `name` once only (its `def`): a search of the text for
        each of the first names asked, then one count of every word of it (a file whose every
        function reports would be searched once for each, the whole text each time)."""
        counts = self._word_counts
        if counts is None:
            if self._words_asked < 8:
                self._words_asked += 1
                return word_count(self.lines.text, name) == 1
            counts = self._word_counts = Counter(_WORD.findall(self.lines.text))
        return counts.get(name, 0) == 1

    def _given_by_callers_elsewhere(self, func) -> dict | None:
        """{parameter: fact} of a function at the top level of the module, one the file never
        calls nor names again, from what the project's other files pass at their calls of it
        (Project.caller_facts), as the file's own calls would give them (the known calls show
        a hazard, never that there is none: a call from outside the project may pass anything);
        None where some call is not followed.  Asked only in default mode, of one where a rule
        reported something (as _called_without_grad_elsewhere): `ema.requires_grad_(False)` in
        train.py, then `update_ema(ema, model)` of utils.py, which writes to `ema.parameters()`
        in place."""
        from .summaries import _one_of_many

        project = self.project
        name = func.name
        if project is None or self.ctx.options.strict or self.module is None or self.lines is None \
                or name.startswith("__") or not self._named_once(name):
            return None
        a = func.args
        params = (tuple(x.arg for x in [*a.posonlyargs, *a.args]), tuple(x.arg for x in a.kwonlyargs))
        sites = project.caller_facts(self.module, name, params, project.path_of(self.module))
        if not sites:
            return None
        out: dict = {}
        for facts in sites:
            for param, f in facts.items():
                out[param] = join(out[param], f) if param in out else f
        # (A parameter some call leaves to its default: that default is not known here.)
        out = {p: _one_of_many(f) for p, f in out.items() if all(p in facts for facts in sites)}
        return {p: f for p, f in out.items() if f.kind != UNKNOWN or f.grad is not Grad.UNKNOWN} or None

    def _decorated_no_grad(self, func, env: dict | None) -> bool:
        state = State(env or {}, False)
        return any(decorator_turns_grad_off(d, lambda n: self.qualname(n, state)) or self._wraps_without_grad(d, state)
                   for d in func.decorator_list)

    def _project_context(self, func, state: State) -> bool | None:
        """True when `with func(...):` runs its body with grad off for certain, `func` a function
        or a class of the file or of another module of the project (gradmode.with_turns_grad_off:
        `def evaluating(): with torch.no_grad(): yield`, a class whose `__enter__` turns grad
        off); else None."""
        if type(func) is not ast.Name and not (type(func) is ast.Attribute and self.qualname(func, state) is not None):
            return None
        return True if self._turns_grad_off(func, state, (FUNCTION, CLASS), "with_turns_grad_off",
                                            with_turns_grad_off) else None

    def _wraps_without_grad(self, dec, state: State) -> bool:
        """Whether decorator `dec` is a function of the file, or of another module of the
        project, that runs what it decorates with grad off (gradmode.wraps_without_grad:
        `@inference` with `def inference(fn): ... with torch.no_grad(): return fn(*args)`)."""
        return type(dec) is ast.Name and self._turns_grad_off(dec, state, (FUNCTION,), "wraps_without_grad",
                                                              wraps_without_grad)

    def _turns_grad_off(self, expr, state: State, kinds: tuple, answer: str, test) -> bool:
        """`test` (a gradmode question) of the def or class `expr` names, of the file (with the
        names its module binds) or of another module (`answer`, that ProjectEntity's method)."""
        f = self.fact(expr, state)
        node = f.node
        if f.kind not in kinds or node is None:
            return False
        if hasattr(node, answer):  # a ProjectEntity: its module answers
            return getattr(node, answer)()
        frame = getattr(self, "module_frame", None)
        module_state = frame.state if frame is not None else state
        return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and test(
            node, lambda n: self.qualname(n, module_state))

    def _module_evidence(self, scope_node) -> frozenset:
        """Names `x` with `x.parameters()`, `x.eval()`, ... in the scope's source text (one text
        search of the file, cut by each scope's span: walking every function's tree for this
        cost more than the rest of the analysis; nested functions' evidence counts too, which
        only widens what is a module)."""
        if self.lines is None:
            return frozenset()
        if self._evidence is None:
            text = self.lines.text
            positions, names = [], []
            for m in MODULE_EVIDENCE.finditer(text):  # `.parameters(`, `.eval(`, ...
                p = m.start()
                k = _TRAILING_NAME.search(text, max(0, p - 80), p)
                if k is not None:
                    positions.append(k.start())
                    names.append(k.group(1))
            self._evidence = (positions, names)
        positions, names = self._evidence
        if not positions:
            return frozenset()
        if isinstance(scope_node, ast.Module):
            return frozenset(names)
        starts = self.lines.starts
        lo = starts[scope_node.lineno - 1]
        hi = starts[scope_node.end_lineno] if scope_node.end_lineno < len(starts) else len(self.lines.text)
        return frozenset(names[bisect_left(positions, lo):bisect_left(positions, hi)])

    def expressions_of(self, stmt) -> list:
        """astutil.expressions(stmt), listed once for the domains that look at a statement's
        expressions (storage, snapshots) and for every pass of a loop over it."""
        found = self._expressions.get(id(stmt))
        if found is None:
            found = self._expressions[id(stmt)] = expressions(stmt)
        return found

    # ------------------------------------------------------------------ rule dispatch

    def _visit(self, node: ast.AST, state: State) -> None:
        """Dispatch rule visitors on `node` and every expression below it (not into nested
        function or class bodies, which are walked as scopes of their own)."""
        frame = self.frame
        if not frame.dispatch:
            return
        handlers = self._handlers
        t = type(node)
        if (t is _Name or t is _Constant) and t not in handlers:
            return  # a leaf no rule looks at (a decorator, a default, an `if` test)
        ctx = self.ctx
        special = _VISIT_SPECIAL
        leaves = self._leaves
        in_lambda = frame.lambda_body
        stack = [(node, state, in_lambda)]
        while stack:
            n, st, lam = stack.pop()
            t = type(n)
            hs = handlers.get(t)
            if hs:
                frame.state = st
                frame.in_lambda = lam
                for h in hs:
                    h(n, ctx)
            if t not in special:  # most nodes: their children, in the same state
                children = child_nodes(n)
                if children:
                    # (Names, constants and operators no rule looks at are not pushed: they are
                    # most of the nodes, and have no children.)
                    stack.extend([(c, st, lam) for c in reversed(children) if type(c) not in leaves])
                continue
            if t is ast.Lambda:
                stack.extend((d, st, lam) for d in n.args.defaults)
                if id(n) in self._dispatched_lambdas:
                    continue  # (its body is walked as a function: _dispatch_lambda)
                inner = st.copy()
                for name in parameter_names(n.args):
                    inner.env[name] = UNKNOWN_FACT
                stack.append((n.body, inner, True))
                continue
            if t in _COMPREHENSIONS:
                inner = st.copy()
                for i, gen in enumerate(n.generators):
                    stack.append((gen.iter, st if i == 0 else inner, lam))
                    self._bind(gen.target, self._element_of(self.fact(gen.iter, inner)), inner)
                    stack.extend((c, inner, lam) for c in gen.ifs)
                if t is ast.DictComp:
                    stack.append((n.key, inner, lam))
                    stack.append((n.value, inner, lam))
                else:
                    stack.append((n.elt, inner, lam))
                continue
            if t is ast.IfExp or t is ast.BoolOp:
                stack.extend([(c, s, lam) for c, s in reversed(self.narrowed_parts(n, st))])
                continue
            if n is not node:  # a nested function or class: a scope of its own
                continue
            children = child_nodes(n)
            if children:
                stack.extend([(c, st, lam) for c in reversed(children)])
        frame.state = state
        frame.in_lambda = in_lambda

    def _visit_stmt_only(self, stmt: ast.stmt, state: State) -> None:
        frame = self.frame
        if not frame.dispatch:
            return
        hs = self._handlers.get(type(stmt))
        if hs:
            frame.state = state
            for h in hs:
                h(stmt, self.ctx)

    # ------------------------------------------------------------------ statements

    def block(self, body: list, state: State | None, owner) -> State | None:
        """Walk a statement list; None when no path falls through its end."""
        frame = self.frame
        blocks = frame.blocks if frame.dispatch else None
        raising = frame.raising
        for i, stmt in enumerate(body):
            if state is None:
                return None  # unreachable code
            if blocks is not None:
                blocks[id(stmt)] = (body, i, owner)
            state = self._stmt(stmt, state)
            if raising and state is not None:
                raising[-1] = join_states(raising[-1], state)
        return state

    def _branch(self, body: list, state: State | None, owner, step: tuple) -> State | None:
        frame = self.frame
        saved = frame.path
        frame.path = saved + (step,)
        try:
            return self.block(body, state, owner)
        finally:
            frame.path = saved

    def _dead(self, state: State, why: str) -> None:
        self.frame.last_live = state
        self.frame.dead_by = why
        return None

    def _simple(self, stmt, state: State) -> None:
        frame = self.frame
        frame.stmt = stmt
        frame.state = state
        self._cache.clear()
        if frame.recording:
            frame.seq += 1
        if frame.dispatch:
            if type(stmt) is ast.Assign and type(stmt.value) is ast.Lambda:
                self._dispatch_lambda(stmt, frame, state)
            self._visit(stmt, state)
        if frame.doms:
            for d in self.domains:
                if d.key in frame.doms:
                    d.simple(self, stmt, state)
        if frame.generator:
            self._record_yields(stmt, state)
        self.effect(stmt, state)

    def _record_yields(self, stmt, state: State) -> None:
        """Join what `stmt` yields (`yield v`: v; `yield from it`: its elements) into the frame's
        yields_fact, with the state before it."""
        frame = self.frame
        for n in self.expressions_of(stmt):
            t = type(n)
            if t is ast.Yield:
                f = self.fact(n.value, state) if n.value is not None else OTHER_FACT
            elif t is ast.YieldFrom:
                f = self._element_of(self.fact(n.value, state))
            else:
                continue
            frame.yields_fact = f if frame.yields_fact is None else join(frame.yields_fact, f)

    def _is_generator(self, func) -> bool:
        return (self.lines is None or "yield" in self.source_of(func)) and yields(func)

    def _test(self, expr, state: State, domains: bool = True) -> None:
        """An expression evaluated by a compound statement (a test, a loop header)."""
        frame = self.frame
        frame.state = state
        self._cache.clear()
        walrus = self._walrus
        if (walrus is None or walrus and not walrus.isdisjoint(range(expr.lineno, expr.end_lineno + 1))) \
                and any(type(n) is ast.NamedExpr for n in walk(expr)):
            self.fact(expr, state)  # (`if (y := y.detach()) is not None:` binds `y` for what follows)
            self._cache.clear()
        if frame.dispatch:
            self._visit(expr, state)
        if domains and frame.doms:
            for d in self.domains:
                if d.key in frame.doms:
                    d.test(self, expr, state)

    def _stmt(self, stmt: ast.stmt, state: State) -> State | None:
        frame = self.frame
        frame.stmt = stmt
        frame.state = state
        t = type(stmt)
        if t in _SIMPLE_STMTS:
            self._simple(stmt, state)
            return state
        if t is _Return:
            self._simple(stmt, state)
            if frame.dispatch and stmt.value is not None:
                # Evaluated as an assignment's value is, so that its calls are call sites
                # (`return to_numpy(model(x))`); a summary walk evaluates it at the end.
                self.fact(stmt.value, state)
            frame.returns.append((state, stmt))
            return self._dead(state, "return")
        if t is _Raise:
            self._simple(stmt, state)
            return self._dead(state, "raise")
        if t is _If:
            self._visit_stmt_only(stmt, state)
            self._test(stmt.test, state)
            truth = self.call_constant(stmt.test, state)
            if truth is not None:
                # A walk for one call that gives the tested parameter a literal: the other
                # branch is not where that call goes.
                if truth:
                    return self._branch(stmt.body, state.copy(), stmt, (id(stmt), "if", 0))
                return self._branch(stmt.orelse, state.copy(), stmt, (id(stmt), "if", 1))
            when_true, when_false = self.narrowings(stmt.test, state)
            a = self._branch(stmt.body, self.narrowed(state, when_true), stmt, (id(stmt), "if", 0))
            b = self._branch(stmt.orelse, self.narrowed(state, when_false), stmt, (id(stmt), "if", 1))
            return join_states(a, b)
        if t in _LOOPS:
            return self._loop(stmt, state)
        if t in _JUMPS:
            self._visit(stmt, state)
            if frame.loop_exits:
                frame.loop_exits[-1][t is ast.Continue].append(state)
            return self._dead(state, "break")
        if t in _WITHS:
            return self._with(stmt, state)
        if t in _TRIES:
            return self._try(stmt, state)
        if t in _DEFS:
            self._visit_stmt_only(stmt, state)
            for d in stmt.decorator_list:
                self._visit(d, state)
            for d in [*stmt.args.defaults, *stmt.args.kw_defaults]:
                if d is not None:
                    self._visit(d, state)
            if frame.dispatch:
                self._pending.append((stmt, frame.scope, state.no_grad, None))
            kind = frame.scope.kind
            if kind == "module":
                self.functions[stmt.name] = stmt
            elif kind == "function":
                self.enclosing[id(stmt)] = frame.scope  # (what its summary sees of the names around)
            state.env[stmt.name] = Fact(FUNCTION, Grad.NO, Device.CPU, by_flow=True, node=stmt)
            return state
        if t is _ClassDef:
            return self._class(stmt, state)
        if t is _Import:
            for alias in stmt.names:
                if alias.asname:
                    state.env[alias.asname] = Fact(IMPORT, Grad.NO, Device.CPU, qual=alias.name)
                else:
                    top = alias.name.split(".")[0]
                    state.env[top] = Fact(IMPORT, Grad.NO, Device.CPU, qual=top)
                if alias.name == "torch" or alias.name.startswith("torch."):
                    self.saw_torch = True
                self.imported.add(alias.name.split(".")[0])
            self._visit_stmt_only(stmt, state)
            return state
        if t is _ImportFrom:
            mod = stmt.module or ""
            if stmt.level == 0 and (mod == "torch" or mod.startswith("torch.")):
                self.saw_torch = True
            if stmt.level == 0 and mod:
                self.imported.add(mod.split(".")[0])
            if stmt.level and self.project is not None:
                mod = self.project.absolute(stmt.module, stmt.level, self.module, self.module_is_package) or ""
            for alias in stmt.names:
                if alias.name == "*":
                    if mod and self.project is not None and stmt.col_offset == 0 and self.frame.scope.kind == "module":
                        self._star_import(mod, state)
                    continue
                qual = f"{mod}.{alias.name}" if (stmt.level == 0 or mod) else None
                state.env[alias.asname or alias.name] = (
                    Fact(IMPORT, Grad.NO, Device.CPU, qual=qual) if qual else UNKNOWN_FACT
                )
            self._visit_stmt_only(stmt, state)
            return state
        if t.__name__ == "Match":
            return self._match(stmt, state)
        # Global, Nonlocal, Pass, TypeAlias and anything newer.
        self._visit(stmt, state)
        return state

    def _star_import(self, module: str, state: State) -> None:
        """`from module import *` at the top level of the file, `module` a module of the project:
        its public module-level names, each as `from module import name` binds it (an import of
        its own, `import numpy as np` there, as that import).  Its `__all__` is not read: a name
        it leaves out is one the file cannot use either."""
        project = self.project
        summary = project.summary(module) if project.path_of(module) is not None else None
        if summary is None:
            return
        env = state.env
        for name, x in summary.table.items():
            if name.startswith("_"):
                continue
            qual = x[4] if type(x) is tuple and len(x) > 4 and x[0] == IMPORT and x[4] else f"{module}.{name}"
            env[name] = Fact(IMPORT, Grad.NO, Device.CPU, qual=qual)

    def _with(self, stmt, state: State) -> State | None:
        frame = self.frame
        self._visit_stmt_only(stmt, state)
        no_grad = state.no_grad
        expects = False
        for item in stmt.items:
            self._test(item.context_expr, state)
            effect = context_effect(item.context_expr, lambda n: self.qualname(n, state))
            if effect is True and type(item.context_expr) is ast.Call and item.context_expr.args \
                    and self.qualname(item.context_expr.func, state) in api.SET_GRAD_ENABLED:
                flag = self.literal_flag(item.context_expr.args[0])
                if flag is not None:
                    effect = not flag  # (`train = True`, then `with torch.set_grad_enabled(train):`)
            if effect is None and type(item.context_expr) in (_Name, ast.Attribute, ast.Call):
                # A context manager made earlier (`ctx = torch.no_grad() if c else nullcontext()`),
                # or by a function (`def ctx(): return torch.no_grad()`): one that turns grad off,
                # or may, as one in place.
                tags = self.fact(item.context_expr, state).tags
                effect = True if GRAD_OFF_CONTEXT in tags else False if GRAD_ON_CONTEXT in tags else None
            if effect is None and type(item.context_expr) is ast.Call:
                effect = self._project_context(item.context_expr.func, state)
            if effect is not None:
                no_grad = effect
            if frame.doms:
                for d in self.domains:
                    if d.key in frame.doms:
                        d.with_item(self, item, state)
            if item.optional_vars is not None:
                self._bind(item.optional_vars, UNKNOWN_FACT, state)
            expects = expects or any(
                (n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None)
                in _EXPECTED_ERRORS for n in walk(item.context_expr))
        saved = state.no_grad
        state.no_grad = no_grad
        frame.expects_error += expects
        try:
            out = self.block(stmt.body, state, stmt)
        finally:
            frame.expects_error -= expects
        if out is None and frame.dead_by == "raise":
            out = frame.last_live  # the context manager may swallow it (pytest.raises)
        if out is not None:
            out.no_grad = saved
        return out

    def _try(self, stmt, state: State) -> State | None:
        frame = self.frame
        self._visit_stmt_only(stmt, state)
        # A handler starts from anything between the start and the end of the body.
        frame.raising.append(state.copy())
        try:
            after = self._branch(stmt.body, state, stmt, (id(stmt), "try", "body"))
        finally:
            raised = frame.raising.pop()
        if after is None:
            raised = join_states(raised, frame.last_live)
        if frame.raising:  # an enclosing `try` sees these states too
            frame.raising[-1] = join_states(frame.raising[-1], raised)
        outs = []
        if after is not None:
            outs.append(self._branch(stmt.orelse, after, stmt, (id(stmt), "try", "else")))
        for j, h in enumerate(stmt.handlers):
            hs = raised.copy()
            if h.type is not None:
                self._visit(h.type, hs)
            if h.name:
                hs.env[h.name] = OTHER_FACT
            outs.append(self._branch(h.body, hs, h, (id(stmt), "try", f"h{j}")))
        result = None
        for o in outs:
            result = join_states(result, o)
        if stmt.finalbody:
            fin_in = result if result is not None else raised.copy()
            fin = self._branch(stmt.finalbody, fin_in, stmt, (id(stmt), "try", "finally"))
            if result is None or fin is None:
                return None if fin is None else self._dead(fin, frame.dead_by or "raise")
            return fin
        return result

    def _match(self, stmt, state: State) -> State | None:
        self._visit_stmt_only(stmt, state)
        self._test(stmt.subject, state)
        result = state
        for j, case in enumerate(stmt.cases):
            cs = state.copy()
            for n in walk(case.pattern):
                name = getattr(n, "name", None) or getattr(n, "rest", None)
                if isinstance(name, str):
                    cs.env[name] = UNKNOWN_FACT
            if case.guard is not None:
                self._visit(case.guard, cs)
            result = join_states(result, self._branch(case.body, cs, case, (id(stmt), "match", j)))
        return result

    def _loop(self, stmt, state: State) -> State | None:
        frame = self.frame
        self._visit_stmt_only(stmt, state)
        is_for = not isinstance(stmt, ast.While)
        header = stmt.iter if is_for else stmt.test
        # A `for` header is the domains' at each iteration (`loop_target`).
        self._test(header, state, domains=not is_for)
        iter_fact = self.fact(stmt.iter, state) if is_for else None
        element = self._element_of(iter_fact) if is_for else None
        forever = not is_for and bool(getattr(stmt.test, "value", False)) and isinstance(stmt.test, ast.Constant)
        when_true, when_false = ([], []) if is_for else self.narrowings(stmt.test, state)
        entry = state
        last = None
        if frame.loop_depth < _MAX_LOOP_PREPASS_DEPTH:
            # Pre-run the body without reporting until what reaches its top no longer changes,
            # so that values assigned late in the body are known at its top.
            saved = frame.recording, frame.dispatch
            frame.recording = frame.dispatch = False
            frame.loop_depth += 1
            try:
                for _ in range(_MAX_LOOP_ITERATIONS):
                    out, exits = self._iteration(stmt, entry, element, when_true)
                    new = entry
                    for s in (out, *exits[1]):
                        new = join_states(new, s)
                    if new is entry or new.same(entry):
                        # The last pre-run started from the fixpoint: where nothing reports or
                        # records, it is the final pass (a loop inside another's pre-run, or in
                        # a walk with rules off that no domain follows: a summary, a survey;
                        # there recording changes nothing but the order `seq`, which only a
                        # domain reads).
                        last = (out, exits) if not saved[1] and (not saved[0] or not frame.doms) else None
                        break
                    entry = new
            finally:
                frame.recording, frame.dispatch = saved
                frame.loop_depth -= 1
        # (Without this, each loop in a nest walked its body once more per pass of the loop
        # around it: 27 walks of a body three loops deep that each settle in two passes.)
        out, exits = last if last is not None else self._iteration(stmt, entry, element, when_true, final=True)
        if is_for and (iter_fact.kind in ("params", "named_params") or _parameters_call(stmt.iter)):
            # A module's parameters: the body runs at least once (a freezing loop freezes; also
            # of `self.netG.parameters()` where a method's freeze leaves netG's facts unknown:
            # what has no parameters has nothing to freeze).
            normal = out
            for s in exits[1]:
                normal = join_states(normal, s)
        elif forever:
            normal = None
        else:
            normal = entry
            for s in (out, *exits[1]):
                normal = join_states(normal, s)
            if not is_for and normal is not None:
                normal = self.narrowed(normal, when_false)
        if stmt.orelse and normal is not None:
            normal = self.block(stmt.orelse, normal, stmt)
        result = normal
        for s in exits[0]:
            result = join_states(result, s)
        return result

    def _iteration(self, stmt, entry: State, element, when_true, final: bool = False):
        """One pass through a loop body: (the state at its end, [break states, continue states])."""
        frame = self.frame
        body_in = self.narrowed(entry, when_true) if when_true else entry.copy()
        if element is not None:
            if final:
                frame.state = body_in
                self._visit(stmt.target, body_in)
            self._bind(stmt.target, element, body_in)
            if frame.doms:
                for d in self.domains:
                    if d.key in frame.doms:
                        d.loop_target(self, stmt, body_in)
        exits: list = [[], []]
        frame.loop_exits.append(exits)
        loops = frame.loops
        frame.loops = loops + (stmt,)
        try:
            out = self.block(stmt.body, body_in, stmt)
        finally:
            frame.loops = loops
            frame.loop_exits.pop()
        return out, exits

    # ------------------------------------------------------------------ classes

    def _class_attrs(self, stmt: ast.ClassDef, class_state: State, inherited: list) -> dict:
        found = self._class_attr_facts(stmt, class_state)
        for base_attrs in inherited:
            for k, v in base_attrs.items():
                found.setdefault(k, v)
        return found

    def _class(self, stmt: ast.ClassDef, state: State) -> State:
        frame = self.frame
        self._visit_stmt_only(stmt, state)
        for d in [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]:
            self._visit(d, state)
        evidence = [self._is_module_base(b, state) for b in stmt.bases]
        is_module = any(evidence)
        # A torch module for certain: a base is torch.nn.* or a class of this file that is.
        certain = "certain" in evidence
        lightning = any(self._is_lightning_base(b, state) for b in stmt.bases)
        class_scope = Scope("class", stmt, frame.scope)
        class_state = State({}, state.no_grad, self._closure_env(state))
        attrs: dict = {}
        self_fact = None
        # A module whose forward runs with grad off (`@torch.no_grad() def forward`).
        q = lambda n: self.qualname(n, state)  # noqa: E731
        forwards = [f for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and f.name == "forward"]
        no_grad_forward = frozenset({NO_GRAD_FORWARD}) if is_module and any(
            any(decorator_turns_grad_off(d, q) for d in f.decorator_list) for f in forwards
        ) else frozenset()
        # What a class of this file defined, a subclass inherits.
        base_facts = [self.fact(b, state) for b in stmt.bases]
        if is_module and not forwards and base_facts and base_facts[0].kind == CLASS \
                and NO_GRAD_FORWARD in base_facts[0].tags:
            # (The forward it inherits from its first base, the next class of its method
            # resolution order, in this file or another: `class Scorer(FrozenBase): pass`.)
            no_grad_forward = frozenset({NO_GRAD_FORWARD})
        inherited = [bf.attrs for bf in base_facts if bf.kind == CLASS and bf.attrs is not None]

        def load(stmt=stmt, class_state=class_state, inherited=inherited):
            if self.frame is None:
                # Asked by another module's walker after this (project module's) walk ended.
                self.frame = self.module_frame
                try:
                    return self._class_attrs(stmt, class_state, inherited)
                finally:
                    self.frame = None
            return self._class_attrs(stmt, class_state, inherited)

        # Computed on first use: most classes' methods are never analysed.
        attrs = LazyAttrs(load, stmt)
        self._lazy_attrs.append(attrs)
        if is_module:
            self_fact = Fact(MODULE, Grad.UNKNOWN, Device.UNKNOWN, attrs=attrs, tags=no_grad_forward, by_flow=certain,
                             node=stmt)
        else:
            self_fact = Fact(OBJECT, Grad.UNKNOWN, Device.UNKNOWN, attrs=attrs, node=stmt)
        info = ClassInfo(stmt, self_fact, lightning)
        info.bases = [self.classes[id(bf.node)] for bf in base_facts
                      if bf.kind == CLASS and bf.node is not None and id(bf.node) in self.classes]
        info.plain = bool(stmt.bases) and not stmt.keywords and all(
            self.qualname(b, state) == "torch.nn.Module"
            or bf.kind == CLASS and bf.node is not None and id(bf.node) in self.classes
            for b, bf in zip(stmt.bases, base_facts))
        # Base classes in other modules of the project: their methods, by summary.
        info.project_bases = [bf.node for bf in base_facts if bf.kind == CLASS and hasattr(bf.node, "method_return")]
        self.classes[id(stmt)] = info
        saved_pending = self._pending
        self._pending = []
        self._walk_scope(class_scope, stmt.body, class_state, dispatch=frame.dispatch)
        methods, self._pending = self._pending, saved_pending
        for item in stmt.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods[item.name] = item
        for func, _parent, no_grad, _ in methods:
            # Methods see the module's names, not the class body's.
            self._pending.append((func, frame.scope, no_grad, info))
        tags = (frozenset({MODULE_CLASS_TAG}) | no_grad_forward) if is_module else frozenset()
        if lightning:
            tags |= {_LIGHTNING_TAG}
        info.class_fact = state.env[stmt.name] = Fact(CLASS, Grad.NO, Device.CPU, attrs=attrs, tags=tags,
                                                      by_flow=certain, node=stmt)
        return state

    def _closure_env(self, state: State) -> dict:
        if state.outer:
            env = dict(state.outer)
            env.update(state.env)
            return env
        return state.env

    def _is_module_base(self, base, state: State) -> str | None:
        """"certain" when `base` is an nn.Module class by its import or definition, "name" when
        only its name says so (`LightningModule`, `PreTrainedModel`), else None."""
        q = self.qualname(base, state)
        if q is not None and q.startswith("torch.nn."):
            return "certain"
        f = self.fact(base, state)
        if MODULE_CLASS_TAG in f.tags:
            return "certain" if f.by_flow else "name"
        name = q or dotted_name(base) or ""
        last = name.rsplit(".", 1)[-1]
        if not last.endswith(("Module", "PreTrainedModel")):
            return None
        return "certain" if q is not None and q.startswith(api.MODULE_BASE_PACKAGES) else "name"

    def _is_lightning_base(self, base, state: State) -> bool:
        q = self.qualname(base, state)
        if q in LIGHTNING_BASES:
            return True
        if _LIGHTNING_TAG in self.fact(base, state).tags:
            return True
        return q is None and (dotted_name(base) or "").rsplit(".", 1)[-1] == "LightningModule"

    def _class_attr_facts(self, cls: ast.ClassDef, state: State) -> dict:
        """Facts for `self.<attr>` from assignments in any method (evaluated without context).

        A first pass evaluates each assigned value with the method's parameters unknown.  What
        that leaves unknown and reads `self` or a local assigned once in the method
        (`self.last = self.fc(x)`, `out = self.fc(x); self.last = out`) is evaluated again with
        `self` holding the first pass's attributes, in the grad mode the assignment runs in
        (under a `with torch.no_grad():` of the method, or in a no-grad method, nothing it
        computes requires grad)."""
        parts: dict = {}  # attr -> [fact of each assignment]
        again: list = []  # (attr, index in parts[attr], value, self_name, local, no_grad, method)
        appends: list = []  # (attr, call, statement, self_name, local, method): `self.losses.append(loss)`
        # Per method, on need, for both passes below: its single assignments, and the ids of its
        # statements that run with grad off.
        singles: dict = {}
        offs: dict = {}

        def single_assignments(method) -> dict:
            found = singles.get(id(method))
            if found is None:
                found = singles[id(method)] = _single_assignments(method)
            return found

        source: list = []

        def class_source() -> str:
            if not source:
                source.append(self.source_of(cls) if self.lines is not None else "")
            return source[0]

        def no_grad_ids(method, state) -> set:
            found = offs.get(id(method))
            if found is None:
                found = offs[id(method)] = no_grad_statements(method, lambda n, st=state: self.qualname(n, st))
            return found

        for item in cls.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = item.args.posonlyargs + item.args.args
            if not params:
                continue
            self_name = params[0].arg
            local = State(dict.fromkeys(parameter_names(item.args), UNKNOWN_FACT), False, state.outer)
            for name in self._module_evidence(item):
                # A parameter the method treats as a module (`Adam(model.parameters())`): one, as
                # the name reads in the method's own walk (evaluate.py).
                if name in local.env and name != self_name:
                    local.env[name] = _EVIDENT_MODULE
            if self.lines is not None and not may_set_attributes(self.source_of(item), self_name, direct=True,
                                                                 init=item.name == "__init__"):
                continue  # (its body may not be parsed yet: lazytree.py)
            if item.name == "__init__" or len(params) > 1 and is_plain_method(item) and self.lines is not None \
                    and self._kept_for_calls(cls, item, self_name):
                # What the constructor calls of the file pass (`Trainer(model=Net())`), or the
                # file's one call of a method that keeps one of its parameters (`logger.log(loss)`,
                # `self.last = v`; the calls the walk has seen so far): _kept_for_calls.
                info = self.classes.get(id(cls))
                if info is not None:
                    local.env.update(self.parameter_facts(item, info))
            statement = None
            for node in _statements_and_calls(item.body):
                if isinstance(node, ast.stmt):
                    statement = node
                if isinstance(node, ast.Assign):
                    targets, value = node.targets, node.value
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    targets, value = [node.target], node.value
                elif isinstance(node, ast.Call) and (named := _named_attribute(node, self_name)) is not None:
                    # self.register_buffer("weight", t) / self.register_parameter("w", p) /
                    # self.add_state("weight", default=t) (a torchmetrics state) /
                    # setattr(self, "w", v): an attribute set by its name.
                    name, how, value = named
                    if value is None:
                        f = UNKNOWN_FACT
                    elif how == "register_buffer":
                        f = Fact(TENSOR, Grad.NO, Device.UNKNOWN, by_flow=self.fact(value, local).is_torch_tensor)
                    else:
                        f = self.fact(value, local)
                    parts.setdefault(name, []).append(f)
                    continue
                elif item.name == "__init__" and _is_super_init(node):
                    # super().__init__(model): what the base's constructor makes of its
                    # parameters (`self.model = model`), with what this one passes.
                    for attr, f in self._super_init_attrs(cls, node, local).items():
                        parts.setdefault(attr, []).append(f)
                    continue
                elif (  # self.losses.append(loss): what the list holds, for every method
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("append", "extend", "insert")
                    and node.args
                    and isinstance(node.func.value, ast.Attribute)
                    and isinstance(node.func.value.value, ast.Name)
                    and node.func.value.value.id == self_name
                ):
                    appends.append((node.func.value.attr, node, statement, self_name, local, item))
                    continue
                else:
                    continue
                for t, v in _target_values(targets, value):
                    if (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == self_name
                    ):
                        found = parts.setdefault(t.attr, [])
                        if v is None:  # one of what an unpacking gives (`self.a, self.b = pair`)
                            found.append(UNKNOWN_FACT)
                            continue
                        f = self.fact(v, local)
                        if f.kind == UNKNOWN and (_reads_self_or_local(v, self_name) or _copied_in(
                                class_source(), t.attr) and _reads_any(v, single_assignments(item))):
                            off = id(node) in no_grad_ids(item, local)
                            again.append((t.attr, len(found), v, self_name, local, off, item))
                        found.append(f)
        info = self.classes.get(id(cls))
        inherited = self._inherited_constructor(info) if info is not None and self.lines is not None else None
        if inherited is not None:
            # A constructor inherited from the one base (`Trainer(model)` of a class without its
            # own): what this file's calls of this class pass it, made attributes as it makes them.
            stub, made = inherited
            given = self.parameter_facts(stub, info)
            own = _attributes_set(cls, self.source_of if self.lines is not None else None)
            for attr, param in made:
                f = given_moved(given, param)
                if f is not None and f.kind != UNKNOWN and attr not in own:
                    parts.setdefault(attr, []).append(f)
        # What a method may freeze (or unfreeze) in place, a walk of the methods one at a time
        # does not see: nothing is known of its grad (nor of what a base of the class set it to).
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for attr in self._method_grad_changes(item):
                    parts.setdefault(attr, []).append(UNKNOWN_FACT)
        if again:
            first = {name: join_all(fs) for name, fs in parts.items()}
            info = self.classes.get(id(cls))
            if info is not None and info.self_fact is not None:
                self_fact = info.self_fact.but(attrs=first)
                with_locals: dict = {}  # id(method) -> {local: fact} of its locals bound once (_bound_once)
                for attr, index, value, self_name, local, off, method in again:
                    expr = single_assignments(method).get(value.id) if isinstance(value, ast.Name) else value
                    if expr is None:
                        continue
                    env = dict(local.env)
                    env[self_name] = self_fact
                    f = self.fact(expr, State(env, off, local.outer))
                    if f.kind == UNKNOWN and not off and _copied_in(class_source(), attr) \
                            and _reads_any(expr, single_assignments(method)) and self._set_once(attr):
                        # Of the method's locals bound once that it reads, in order (`counts =
                        # torch.as_tensor(c)`, then `self.w = counts.sum() / counts`), where no
                        # statement of the method runs with grad off.
                        if no_grad_ids(method, local):
                            continue
                        found = self._bound_once(method, single_assignments(method), env, self_name, local, expr,
                                                 with_locals.setdefault(id(method), {}))
                        f = self.fact(expr, State(found, False, local.outer))
                    if f.kind != UNKNOWN:
                        parts[attr][index] = f
        if appends:
            self._list_elements(cls, parts, appends, single_assignments, no_grad_ids)
        self._cache.clear()
        return {name: join_all(fs) for name, fs in parts.items()}

    def _kept_for_calls(self, cls: ast.ClassDef, method, self_name: str) -> bool:
        """Whether the attributes `method` keeps a parameter in for certain (surely_kept: `self.last
        = v`, `self.vals.append(v)`, that no other method binds or empties) take what the file's
        call of it passes: where the class converts one of them to NumPy (`self.last.numpy()`,
        `np.mean(self.vals)`: there it matters; a survey of the calls of every setter of a model
        library cost 4% of its check with the project), the file calls the method once (two
        calls may be on two instances, and a later one may keep another value), no code of the
        file outside the class binds or changes the attribute (`logger.last = ...`), and no
        class of the file derives from it (`class Safe(Logger)` whose `dump` detaches).  Which
        value the attribute holds when it is converted is a question of order the class's
        attributes, one fact for every method, do not answer."""
        info = self.classes.get(id(cls))
        if info is None or type(method) is not ast.FunctionDef or not is_plain_method(method):
            return False
        # (What it may keep and whether the class converts any of that, first: the other methods
        # of the class are read for what they bind only where it does.)
        source = self.source_of(cls)
        kept = {attr for _, attr, _ in kept_parameters(method)}
        if not kept or not _converted_in(source, kept) or len(self.call_positions(method.name)) != 1:
            return False
        kept = {attr for _, attr, _ in surely_kept(info, method)}
        if not kept or not _converted_in(source, kept):
            return False
        if any(info in other.bases for other in self.classes.values()):
            return False  # (a subclass of the file may convert it otherwise: its instance is not this class's)
        text = self.lines.text
        start, end = self.lines.node_span(cls)
        outside = text[:start] + text[end:]
        return not any(_changes_attribute(outside, a) for a in kept)

    def _super_init_attrs(self, cls: ast.ClassDef, call: ast.Call, local: State) -> dict:
        """{attr: fact} of the attributes that the constructor of the one base of `cls` (a class
        of the file or of another module of the project) sets to one of its parameters
        (`self.model = model`), for the arguments of `call` (`super().__init__(model)` in the
        constructor of `cls`): only those the base sets nowhere else, and that the methods of
        `cls` do not set (what they do set is theirs)."""
        if self._optimizer_class(cls, local):
            return self._optimizer_groups(cls, call, local)
        info = self.classes.get(id(cls))
        ctor = self._base_constructor(info) if info is not None else None
        if ctor is None:
            return {}
        stub, made = ctor
        bound = {param: self.fact(expr, local) for param, expr in bind_arguments(stub, call, skip_first=True)[0]}
        own = _attributes_set(cls, self.source_of if self.lines is not None else None)
        out = {}
        for attr, param in made:
            f = given_moved(bound, param)
            if f is not None and f.kind != UNKNOWN and attr not in own:
                out[attr] = f
        return out

    def _optimizer_groups(self, cls: ast.ClassDef, call: ast.Call, local: State) -> dict:
        """{"param_groups": fact} for `super().__init__(params, defaults)` in the constructor of a
        subclass of torch.optim.Optimizer (evaluate.param_groups), where it names `params`;
        {} where the class sets it itself."""
        expr = _optimizer_params(call)
        if expr is None or "param_groups" in _attributes_set(cls, self.source_of if self.lines is not None else None):
            return {}
        f = param_groups(self.fact(expr, local))
        return {"param_groups": f} if f.kind != UNKNOWN else {}

    def _optimizer_class(self, cls: ast.ClassDef, state: State | None = None) -> bool:
        """Whether `cls` has one base, torch.optim.Optimizer."""
        if len(cls.bases) != 1:
            return False
        if state is None:
            frame = getattr(self, "module_frame", None)
            if frame is None:
                return False
            state = frame.state
        return self.qualname(cls.bases[0], state) in _OPTIMIZER_BASES

    def _base_constructor(self, info: ClassInfo):
        """(a def with the parameters of the constructor of the one base of the class, ((attr,
        parameter), ...) of what it makes of them: constructor_info), or None: the base is not a
        class of the file or of the project, or its constructor is not plain."""
        if len(info.node.bases) != 1:
            return None
        if len(info.bases) == 1:
            init, _owner = info.bases[0].method("__init__")
            if init is None or not is_plain_method(init) or len(init.args.args) < 2:
                return None
            return init, tuple(sorted(self._constructor_attrs(init, info.bases[0]).items()))
        if info.bases or len(info.project_bases) != 1:
            return None
        found = info.project_bases[0].constructor()
        if not found:
            return None
        positional, kwonly, made = found
        arg = ast.arg
        stub = ast.FunctionDef(name="__init__", args=ast.arguments(
            posonlyargs=[], args=[arg(arg="self"), *(arg(arg=a) for a in positional)],
            kwonlyargs=[arg(arg=a) for a in kwonly], kw_defaults=[None] * len(kwonly), defaults=[], vararg=None,
            kwarg=None), body=[], decorator_list=[], lineno=info.node.lineno, end_lineno=info.node.lineno)
        return stub, made

    def inherited_constructor(self, info: ClassInfo):
        """A stand-in def, of the class's own, of the constructor a class of the file inherits
        from its one base (of the file or of another module of the project): the calls of the
        class are its call sites, apart from those of the base's other subclasses; None when
        the class has its own constructor or the base's makes no attribute of a parameter."""
        found = self._inherited_constructor(info)
        return found[0] if found is not None else None

    def _inherited_constructor(self, info: ClassInfo):
        """(inherited_constructor's stand-in, ((attr, parameter), ...) of what the base's
        constructor makes of its parameters), or None; once a class."""
        if "__init__" in info.methods:
            return None
        key = id(info.node)
        if key not in self._inherited_ctors:
            ctor = self._base_constructor(info)
            found = None
            if ctor is not None and ctor[1]:
                stub = ast.FunctionDef(name="__init__", args=ctor[0].args, body=[], decorator_list=[],
                                       lineno=info.node.lineno, end_lineno=info.node.lineno)
                found = (stub, ctor[1])
            self._inherited_ctors[key] = found
        return self._inherited_ctors[key]

    def _constructor_attrs(self, init, info: ClassInfo) -> dict:
        """{attr: parameter} of the attributes constructor `init` (of class `info`, or of one of
        its bases in the file) leaves holding one of its parameters as it was passed
        (`self.model = model`, the parameter named nowhere else in it: not
        `model.requires_grad_(False)` first; nor `self.model.to(d)` after), or moved to a device
        (`self.model = model.to(device)`: the parameter's name and MOVED), and that no other
        method of the class or of its bases sets or changes, nor names (a property); none when
        a base is in another module of the project: its methods are out of sight."""
        methods = _methods_of(info)
        if methods is None:
            return {}
        me = init.args.args[0].arg
        params = set(parameter_names(init.args)) - {me}
        uses: dict = {}  # parameter -> times named in the body
        for n in walk(ast.Module(body=init.body, type_ignores=[])):
            if type(n) is ast.Name and n.id in params:
                uses[n.id] = uses.get(n.id, 0) + 1
        found: dict = {}
        assigned: dict = {}  # attr -> times the constructor assigns it
        optimizer = None  # whether the class is an optimizer's (asked at a `super().__init__`)
        for node in _statements_and_calls(init.body):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                plain = isinstance(node, ast.Assign) and len(node.targets) == 1
                for t, v in _target_values(node.targets if isinstance(node, ast.Assign) else [node.target],
                                           node.value):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                        assigned[t.attr] = assigned.get(t.attr, 0) + 1
                        v = _without_mode(v)  # (`model.eval()` is the model)
                        if plain and isinstance(v, ast.Name) and uses.get(v.id) == 1:
                            found.setdefault(t.attr, v.id)
                        elif plain and (moved := moved_name(v)) is not None and uses.get(moved.id) == 1:
                            found.setdefault(t.attr, moved.id + MOVED)  # `model.to(device)`
                        elif plain and (listed := listed_name(v)) is not None and uses.get(listed.id) == 1:
                            found.setdefault(t.attr, listed.id + LISTED)  # `list(params)`
                        elif plain and (copied := copied_name(v)) is not None and uses.get(copied.id) == 1:
                            found.setdefault(t.attr, copied.id + COPIED)  # `deepcopy(model)`
            elif optimizer is None and _is_super_init(node):
                # `super().__init__(params, defaults)` of a subclass of torch.optim.Optimizer.
                optimizer = self._optimizer_class(info.node)
                given = _optimizer_params(node) if optimizer else None
                if type(given) is ast.Name and uses.get(given.id) == 1:
                    assigned["param_groups"] = assigned.get("param_groups", 0) + 1
                    found.setdefault("param_groups", given.id + GROUPED)
        # (An attribute assigned twice in the constructor is changed: only one assignment names
        # the parameter once.)
        found = {a: p for a, p in found.items() if assigned[a] == 1}
        if not found:
            return {}
        changed = _attributes_changed_in_place(init)
        # A name the class itself defines (`@property def model`, a descriptor): assigning it
        # may store something else, or nothing.
        changed |= {m.name for m in methods}
        for method in methods:
            changed |= self._method_grad_changes(method)
            if method is not init:
                # (Another method's `self.model = ...`, `self.model.to(device)`.)
                changed |= (_attributes_set_by(method, self.source_of(method) if self.lines is not None else None)
                            | _attributes_changed_in_place(method))
        return {a: p for a, p in found.items() if a not in changed}

    def freezes_parameters(self, call: ast.Call, state: State):
        """Evaluator.freezes_parameters: for a call of a function of the file (by name, no
        `*args`), the positions of its positional parameters that it freezes at the top level
        of its body (`for p in model.parameters(): p.requires_grad = False`, `model.requires_grad_(
        False)`), and the names of those the call passes by keyword (`Probe(net=net)`), when there
        is one; None otherwise."""
        found = self._freezing_positions(call, state)
        return _frozen_arguments(*found, call) or None if found is not None else None

    def thaws_parameters(self, call: ast.Call, state: State):
        """Evaluator.thaws_parameters: the arguments a call of such a function may make require
        grad again: those it sets to a flag the call does not leave false (`set_trainable(enc,
        True)` of `def set_trainable(m, flag): m.requires_grad_(flag)`), as `freezes_parameters`."""
        found = self._freezing_positions(call, state)
        return _thawed_arguments(*found, call) or None if found is not None else None

    def _freezing_positions(self, call: ast.Call, state: State):
        """(the positions of the parameters a call of a function of the file or of another module
        of the project freezes: frozen_positions, its def, how many parameters Python binds),
        or None: not such a call, or not known."""
        if type(call.func) is not ast.Name or any(type(a) is ast.Starred for a in call.args):
            return None
        f = self.fact(call.func, state) if self._grad_setters() or self.project is not None else None
        if f is not None and f.kind in (FUNCTION, CLASS) and hasattr(f.node, "frozen_positions"):
            # A function or a class of another module of the project: what its module says.
            positions = f.node.frozen_positions()
            if not positions:
                return None
            stub = f.node.method_stub("__init__") if f.kind == CLASS else f.node.node
            return positions, stub, 1 if f.kind == CLASS else 0
        if not self._grad_setters():
            return None  # (no function of the file mentions requires_grad)
        func = f.node if f.kind == FUNCTION else None
        skip = 0
        if f.kind == CLASS and isinstance(f.node, ast.ClassDef):
            # `Probe(backbone)`: a constructor of the file that freezes what it is handed.
            info = self.classes.get(id(f.node))
            func = info.method("__init__")[0] if info is not None else None
            skip = 1
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not is_plain_method(func):
                return None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.name not in self._grad_setters():
            return None
        found = self._frozen_params.get(id(func))
        if found is None:
            found = self._frozen_params[id(func)] = frozen_positions(func, skip)
        return found, func, skip

    def _sets_grad(self, name: str) -> bool:
        """Whether a function called `name` may change whether what it is given requires grad:
        its name says so (`freeze`, `set_requires_grad`), or a def of that name in the file
        mentions `requires_grad`."""
        low = name.lower()
        return "grad" in low and name not in _KEEP_REQUIRES_GRAD or "freez" in low or name in self._grad_setters()

    def _grad_setters(self) -> set:
        """Names of the file's functions whose source mentions `requires_grad` (each occurrence
        in the functions around it, by the text's function spans)."""
        found = self._setters
        if found is None:
            found = self._setters = set()
            text = self.lines.text if self.lines is not None else ""
            at = text.find("requires_grad")
            if at != -1:
                starts, ends, defs = self._function_spans()
                while at != -1:
                    k = bisect_right(starts, at) - 1
                    while k >= 0:
                        if ends[k] > at:
                            found.add(defs[k].name)
                        k -= 1
                    at = text.find("requires_grad", at + 13)
        return found

    def _method_grad_changes(self, method) -> set:
        """_grad_changes of a method of the file, when its text may hold one of them."""
        if self.lines is None:
            return _grad_changes(method, self._sets_grad)
        source = self.source_of(method)
        if not ("grad" in source or "freez" in source or "apply(" in source or "detach_(" in source
                or any(n + "(" in source for n in self._grad_setters())):
            return set()
        return _grad_changes(method, self._sets_grad)

    def inplace_parameters_of(self, func) -> tuple:
        """saved.inplace_parameters of a def of the file (memoised)."""
        key = id(func)
        found = self._inplace.get(key)
        if found is None:
            from .saved import inplace_parameters

            found = self._inplace[key] = inplace_parameters(func)
        return found

    def constructor_freezes(self, classdef) -> bool:
        """Whether the constructor of class `classdef` (of the file, or a `ProjectEntity`) freezes
        every parameter of the instance it makes (`self.requires_grad_(False)`, `for p in
        self.parameters(): p.requires_grad = False`, a teacher or a feature extractor) and
        adds none after: what the instance computes requires grad only where its inputs do."""
        if not isinstance(classdef, ast.ClassDef):
            freezes = getattr(classdef, "constructor_freezes", None)
            return freezes() if freezes is not None else False
        info = self.classes.get(id(classdef))
        init = info.method("__init__")[0] if info is not None else None
        if init is None and info is not None and len(info.node.bases) == 1 and not info.bases \
                and len(info.project_bases) == 1:
            # The constructor of its one base, a class of another module of the project.
            return self.constructor_freezes(info.project_bases[0])
        if init is None:
            return False

        def freezing_method(name: str) -> bool:
            # `self.freeze()`: a method of the class that freezes the instance as a constructor
            # would, or one it inherits from a base of another module that does (its module's
            # answer: method_freezing).
            method = info.method(name)[0]
            if method is None:
                return any(base.method_freezing(name) == "1" for base in project_bases(info))
            return isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method is not init \
                and is_plain_method(method) and freezes_self(method)

        if self.lines is not None:
            source = self.source_of(init)
            if not _may_freeze(source) and "freeze" not in source:
                return False
        return freezes_self(init, freezing_method)

    def made_frozen(self, classdef) -> bool:
        """Whether the only parameters torch module class `classdef` (of the file, or a
        `ProjectEntity`) makes are made frozen by its constructor (_frozen_parameters_only:
        `nn.Embedding.from_pretrained(v)`, `nn.Parameter(t, requires_grad=False)`, a layer it
        freezes after making it).  Asked where the file turns no grad back on and adds no layer
        from outside (evaluate.Evaluator._may_add_trainable: `enc.emb.weight.requires_grad = True`
        would make them trainable)."""
        if not isinstance(classdef, ast.ClassDef):
            ask = getattr(classdef, "made_frozen", None)
            return ask() if ask is not None else False
        info = self.classes.get(id(classdef))
        init = info.method("__init__")[0] if info is not None else None
        if not isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)) or self.lines is None:
            return False
        found = info.made_frozen
        if found is None:
            source = self.source_of(init)
            found = info.made_frozen = ("from_pretrained" in source or "Parameter(" in source
                                        or "register_buffer" in source or "requires_grad" in source
                                        or "Norm" in source or "Sequential(" in source or "ModuleList(" in source
                                        ) and self._frozen_parameters_only(info, init)
        return found

    def _frozen_parameters_only(self, info: ClassInfo, init) -> bool:
        """Whether the only parameters class `info` makes are made frozen by its constructor:
        every attribute its methods set to other than a literal is set there, on one line, to
        `nn.Embedding.from_pretrained(v)` (which freezes unless `freeze=False`),
        `nn.Parameter(t, requires_grad=False)`, a layer without parameters or a container of
        such values (_made_frozen_kind), or to anything that a statement of the constructor's
        top level freezes after it (_attributes_frozen: `self.backbone.requires_grad_(False)`,
        `for p in self.backbone.parameters(): p.requires_grad = False`,
        `self.emb.weight.requires_grad = False` of an `nn.Embedding`); or the class keeps only
        new buffers (`register_buffer("inv_freq", inv)`: _new_buffers_only).  It has no base but
        `nn.Module`, sets nothing by name nor an attribute of an attribute but those freezes,
        adds to none of those attributes (`self.embs.append(...)`), and says `requires_grad`
        nowhere else (read from the text)."""
        if self.lines is None or not info.plain or info.bases or info.project_bases or not is_plain_method(init):
            return False
        # (New buffers of torch's, `register_buffer("pe", torch.zeros(...))`, add no parameter.)
        found = self._attribute_values(info, _BY_NAME_BUT_BUFFERS + ("getattr(", "vars("))
        source = self.source_of(info.node)
        if found is None or not found and "register_buffer" not in source:
            return False
        if any(item is not init for item, _, _ in found):
            return False
        # (The constructor's statements only where one may freeze what it made; most classes'
        # first attribute is a trainable layer, asked of no more.)
        frozen = freezes = None
        may_freeze = "requires_grad" in source
        said = 0  # (the `requires_grad` those values and freezes spell: the only ones of the class)
        nested = 0  # (the freezes that set an attribute of an attribute: `self.emb.weight.requires_grad = ...`)
        used: set = set()
        numbers = None  # (the constructor's parameters whose defaults are numbers)
        for _, attr, value in found:
            kind = _made_frozen_kind(value)
            if kind is None:
                if numbers is None:
                    numbers = {p for p, d in _literal_defaults(init.args) if _is_literal(d) and (
                        type(d) is not ast.Constant or type(d.value) in (int, float))}
                if _number_of(value, numbers) is not None:
                    continue  # (`self.pad = size // 2` of `size=5`: a number, no parameter)
                if not may_freeze:
                    return False
                if frozen is None:
                    frozen, freezes = _attributes_frozen(init, {a for _, a, _ in found})
                parts = frozen.get(attr)
                if parts is None or not _parts_cover(parts, value):
                    return False
                used.add(attr)
            said += value.count("requires_grad")
            if kind != "Parameter" and not _only_used(source, attr):
                return False  # (`self.embs.append(nn.Embedding(20, 4))`: a parameter added)
        for attr in used:
            for stmt, part in freezes[attr]:
                said += self.source_of(stmt).count("requires_grad")
                nested += part is not None and type(stmt) is ast.Assign
        if len(_NESTED_ASSIGNMENT.findall(source)) != nested:
            return False
        return source.count("requires_grad") == said

    def class_paramfree(self, classdef) -> bool:
        """Whether torch module class `classdef` of the file certainly has no parameters (an
        activation the file defines, `class Swish(nn.Module)` with only a `forward`): its bases
        are `nn.Module` itself or such classes of the file, its body names no parameter, layer
        or attribute set by name, and every attribute its methods set is a plain value (not a
        module, a tensor, or what the analysis cannot tell).  What it computes then requires
        grad only where its inputs do."""
        if not isinstance(classdef, ast.ClassDef):
            # A class of another module of the project: what its module says.
            ask = getattr(classdef, "paramfree_needs", None)
            return ask is not None and ask() == ()
        return self._paramfree_needs(classdef) == frozenset()

    def instance_paramfree(self, classdef, call: ast.Call) -> bool:
        """Whether the instance `call` makes of torch module class `classdef` of the file
        certainly has no parameters: the class has none whatever it is given, or it keeps
        constructor parameters as they are (`self.k = k`) and the call gives each a literal
        (`Scaled(k=2.0)`, or leaves it to a literal default).  A class of another module of the
        project: by what its module says of it, and its constructor's parameters."""
        if not isinstance(classdef, ast.ClassDef):
            ask = getattr(classdef, "paramfree_needs", None)
            needs = ask() if ask is not None else None
            if not needs:
                return needs is not None
            init = classdef.method_stub("__init__")
            if init is None:
                return False
        else:
            needs = self._paramfree_needs(classdef)
            if not needs:
                return needs is not None
            init = self.classes[id(classdef)].methods["__init__"]
        pairs, complete = bind_arguments(init, call, skip_first=True)
        if not complete:
            return False
        given = dict(_literal_defaults(init.args))
        given.update(pairs)
        return all(_is_literal(given.get(p)) for p in needs)

    def holders_frozen(self, module: Fact, call: ast.Call, state: State) -> bool:
        """Whether torch module instance `module`, of a class of the file called by `call`
        (`net(x)`), now holds no parameter that requires grad for certain: every attribute of
        its class that may hold parameters (`_param_holders`) is frozen through the instance's
        name on this path (`net.backbone.requires_grad_(False)`, the class's only layer)."""
        key = dotted_name(call.func)
        if key is None or not isinstance(module.node, ast.ClassDef):
            return False
        holders = self._param_holders(module.node)
        if not holders:
            return False
        for attr in holders:
            f = state.lookup(f"{key}.{attr}")
            if f is None or not (f.kind == MODULE and f.frozen or f.kind == TENSOR and f.grad is Grad.NO):
                return False
        return True

    def _param_holders(self, classdef) -> frozenset | None:
        """The attributes of torch module class `classdef` of the file that may hold its
        parameters: every `self.<attr>` its methods set to other than a literal, where it has
        no base but `nn.Module` and sets nothing by name (`setattr`, `add_module`,
        `register_parameter`, ...); None otherwise.  Read from the text, once a class."""
        memo = self._holders
        key = id(classdef)
        if key not in memo:
            info = self.classes.get(key)
            found = None
            if info is not None and info.plain and not info.bases and not info.project_bases:
                found = self._attribute_values(info, _BY_NAME)
            memo[key] = frozenset(attr for _, attr, _ in found) if found is not None else None
        return memo[key]

    def _attribute_values(self, info: ClassInfo, words: tuple) -> list | None:
        """[(method, attribute, value's text)] of the `self.<attr> = value` of class `info`'s
        methods whose value is not a literal (read from the text); None where one of `words`
        is there, or a tuple assignment is (`self.a, self.b = ...`: not read)."""
        if self.lines is None:
            return None
        out = []
        for item in info.node.body:
            source = self.source_of(item)
            if any(w in source for w in words):
                return None
            if "register_buffer" in source and not _new_buffers_only(item, source):
                return None
            if "self." in source:
                for m in _SELF_ASSIGNMENT.finditer(source):
                    value = m.group(1)
                    if value is None:
                        if not _starts_a_target_list(source, m.start()):
                            continue  # (`f(x, self.kernel)`, or `self.kernel,` on a line of a call's arguments)
                        return None
                    value = value.strip()
                    if not _LITERAL_LINE.fullmatch(value):
                        out.append((item, m.group(0)[5:].split("=", 1)[0].split(":", 1)[0].strip(), value))
        return out

    def _paramfree_needs(self, classdef) -> frozenset | None:
        if not isinstance(classdef, ast.ClassDef):
            return None
        info = self.classes.get(id(classdef))
        if info is None or not info.plain or info.project_bases:
            return None
        if info.paramfree is False:
            info.paramfree = None  # (a class that is its own base: not)
            info.paramfree = self._needs(info)
        return info.paramfree

    def _needs(self, info: ClassInfo) -> frozenset | None:
        if self.lines is None or not all(self.class_paramfree(b.node) for b in info.bases):
            return None
        init = info.methods.get("__init__")
        params = set(parameter_names(init.args)[1:]) if init is not None and is_plain_method(init) else set()
        # Every attribute it sets is set to a literal (`self.name = "swish"`), or, in its
        # constructor, to one of the constructor's parameters as it is (`self.k = k`), which its
        # calls give a literal: not a module or tensor its callers give it (read from the text,
        # not the attribute facts, which would parse every method of the class).
        found = self._attribute_values(info, _LAYER_WORDS)
        if found is None:
            return None
        needs = set()
        for item, _, value in found:
            if item is not init:
                return None
            if value in params:
                needs.add(value)
                continue
            # (`self.pad = size // 2`: a number of the constructor's parameters, which its calls
            # give a literal.)
            used = _number_of(value, params)
            if used is None:
                return None
            needs |= used
        return frozenset(needs)

    def method_freezes(self, classdef, name: str) -> bool:
        """Whether calling method `name` (without arguments) of an instance of torch module
        class `classdef` (of the file, a `ProjectEntity`, or None: a class the analysis does not
        see) freezes every parameter of the instance: the method does as `freezes_self` reads
        it (`def freeze(self): for p in self.parameters(): p.requires_grad = False`), or no
        class the analysis sees defines it and it is Lightning's `freeze()` (NeMo's models
        inherit it)."""
        found = self.method_freezing(classdef, name) if classdef is not None else ""
        return found == "1" or found == "" and name == "freeze"

    def method_freezing(self, classdef, name: str) -> str:
        """"1": method `name` of class `classdef` (or of a base) freezes its instance
        (`method_freezes`); "0": it is defined and may not; "": no class of the file or the
        project in its bases defines it."""
        if not isinstance(classdef, ast.ClassDef):
            ask = getattr(classdef, "method_freezing", None)
            return ask(name) if ask is not None else "0"
        info = self.classes.get(id(classdef))
        if info is None:
            return "0"
        method = info.method(name)[0]
        if method is None:
            for base in project_bases(info):
                found = base.method_freezing(name)
                if found:
                    return found
            return ""
        if not is_plain_method(method) or self.lines is not None and not _may_freeze(self.source_of(method)):
            return "0"
        return "1" if freezes_self(method) else "0"

    def handed_frozen(self, module: Fact) -> bool:
        """Whether torch module instance `module`, of a class of the project, now holds no parameter
        that requires grad for certain: the class makes none of its own, only keeps what its
        constructor is handed (`Wrap(backbone)`: _paramfree_needs), and each of those was a
        module frozen at the call or since (Evaluator._changed_in_place)."""
        attrs = module.attrs
        given = getattr(attrs, "given", None) if attrs is not None else None
        if not given:
            return False
        node = module.node
        if isinstance(node, ast.ClassDef):
            needs = self._paramfree_needs(node)
            found = self.local_constructor(node) if needs else None
        else:  # a class of another module of the project
            ask = getattr(node, "paramfree_needs", None)
            needs = ask() if ask is not None else None
            found = node.constructor() if needs else None
        if not found or not found[2]:
            return False
        by_param = {param_of(p): a for a, p in found[2]}
        for p in needs:
            a = by_param.get(p)
            f = given.get(a) if a is not None else None
            if f is None or f.kind != MODULE or not (f.frozen or f.paramfree):
                return False
        return True

    def local_constructor(self, classdef) -> tuple | None:
        """constructor_info of class `classdef` of the file, for its instances made here (once a
        class); None where its constructor makes no attribute of a parameter."""
        key = id(classdef)
        memo = self._local_ctors
        if key not in memo:
            found = self.constructor_info(classdef)
            memo[key] = found if found and found[2] else None
        return memo[key]

    def constructor_info(self, classdef) -> tuple | None:
        """What another module's subclass needs of the constructor of class `classdef` of this
        file: (its positional parameters after `self`, its keyword-only ones, ((attr, parameter),
        ...) of the attributes it sets to a parameter and the class sets nowhere else), or None
        when it has none of its own here or it is not plain."""
        info = self.classes.get(id(classdef))
        if info is None:
            return None
        init, _owner = info.method("__init__")
        if init is None and not info.bases and not info.project_bases:
            fields = record_fields(classdef)  # a dataclass, a NamedTuple: its generated constructor
            if fields is not None:
                positional, keyword, assigned = fields
                return positional, keyword, tuple((f, f) for f in (*positional, *keyword) if f not in assigned)
        if init is None or not is_plain_method(init) or len(init.args.args) < 2:
            return None
        a = init.args
        return (tuple(x.arg for x in (*a.posonlyargs, *a.args)[1:]), tuple(x.arg for x in a.kwonlyargs),
                tuple(sorted(self._constructor_attrs(init, info).items())))

    def _set_once(self, attr: str) -> bool:
        """Whether the file's text sets attribute `attr` of something once only (`self.w = ...`),
        not by its name either (`setattr`): no subclass, other method or other code of the file
        gives it another value (`obj.w = list(ws)`)."""
        text = self.lines.text if self.lines is not None else ""
        return "setattr" not in text and len(re.findall(r"\." + re.escape(attr) + r"\s*(?::[^=\n]*)?=(?!=)", text)) == 1

    def _bound_once(self, method, bound: dict, env: dict, self_name: str, local: State, expr, memo: dict) -> dict:
        """`env` with the locals of `method` that it binds once (`bound`: name -> value) that
        `expr` reads, and those their values read, each evaluated in the order of the text with
        those before it (once a method: `memo`)."""
        needed, todo = set(), [expr]
        while todo:
            for n in walk(todo.pop()):
                if type(n) is ast.Name and n.id in bound and n.id != self_name and n.id not in needed:
                    needed.add(n.id)
                    todo.append(bound[n.id])
        if needed & _changed_locals(memo, method, bound):
            return env  # (`enc.requires_grad_(False)`, `freeze(enc)`: what it binds is not all it is)
        env = dict(env)
        state = State(env, False, local.outer)
        for name in sorted(needed, key=lambda n: (bound[n].lineno, bound[n].col_offset)):
            f = memo.get(name)
            if f is None:
                f = memo[name] = self.fact(bound[name], state)
            env[name] = f
        return env

    def _keeps_without_grad(self, cls: ast.ClassDef, method, attr: str) -> bool:
        """Whether `method` of class `cls`, which adds to list attribute `attr`, runs with grad
        off wherever it is called, as its own walk takes it (`_only_called_without_grad`: the
        file's calls, `_called_without_grad_elsewhere`: the project's other files', asked only
        where the class converts that list to NumPy: `with torch.no_grad():
        lit.validation_step(batch)`, then `torch.cat(self.outs).numpy()` in another method)."""
        memo = self.__dict__.setdefault("_kept_off", {})
        key = (id(method), attr)
        found = memo.get(key)
        if found is None:
            frame = getattr(self, "module_frame", None)
            module_state = frame.state if frame is not None else State({}, False)
            # (Only in a walk that reports, and where the class converts that list: what a
            # summary of the module answers is kept for its content alone, and the calls are
            # read from the whole tree, every body of it parsed.)
            found = memo[key] = type(method) is ast.FunctionDef and self.lines is not None and bool(self._handlers) \
                and _converted_in(self.source_of(cls), {attr}) and not _turns_grad_on_text(self.source_of(method)) \
                and not (method.decorator_list and enables_grad(method, lambda n: self.qualname(n, module_state))) \
                and (
                    self._only_called_without_grad(method)
                    or self.ctx.options is not None and self._called_without_grad_elsewhere(method))
        return found

    def _list_elements(self, cls: ast.ClassDef, parts: dict, appends: list, single_assignments, no_grad_ids) -> None:
        """What the methods add to lists the class keeps (`self.losses = []` in `__init__`,
        `self.losses.append(loss)` in `step`): the list attribute holds those elements in every
        method (`np.mean(self.losses)` in `report`).  Each added value is evaluated in its method
        with `self` holding the attributes found so far, the method's parameters unknown, its
        locals bound once (`out = self.model(x)`, `loss = crit(out, y)`) evaluated in order, and
        the grad mode of its statement."""
        first = {name: join_all(fs) for name, fs in parts.items()}
        info = self.classes.get(id(cls))
        if info is None or info.self_fact is None:
            return
        self_fact = info.self_fact.but(attrs=first)
        envs: dict = {}  # (id(method), off) -> (env with its single-assignment locals, no-grad statements)

        def method_env(method, self_name, local, all_off: bool):
            found = envs.get((id(method), all_off))
            if found is None:
                env = dict(local.env)
                env[self_name] = self_fact
                state = State(env, all_off, local.outer)
                bound = single_assignments(method)
                for name, value in sorted(bound.items(), key=lambda kv: (kv[1].lineno, kv[1].col_offset)):
                    if name != self_name:
                        env[name] = self.fact(value, state)
                found = envs[(id(method), all_off)] = (env, no_grad_ids(method, local))
            return found

        for attr, call, statement, self_name, local, method in appends:
            seq = first.get(attr)
            if seq is None or seq.kind != SEQ:
                continue  # not a list the class made
            env, off = method_env(method, self_name, local, False)
            new = self.fact(call.args[-1], State(dict(env), id(statement) in off, local.outer))
            if new.grad is not Grad.NO and not new.leaf and self._keeps_without_grad(cls, method, attr) \
                    and not self.fact(_view_base(call.args[-1], single_assignments(method)),
                                      State(dict(env), False, local.outer)).leaf:
                # (A leaf, a parameter, and a view of one (`self.fc.weight[0]`) require grad in any
                # mode: kept as they are.)
                env, off = method_env(method, self_name, local, True)
                new = self.fact(call.args[-1], State(dict(env), True, local.outer))
            if call.func.attr == "extend":
                new = self._element_of(new)
            if new.kind == UNKNOWN and new.grad is Grad.UNKNOWN:
                continue  # nothing known: the list's facts stay as they were
            el = join(seq.element, new) if seq.element is not None else new
            parts[attr].append(Fact(SEQ, max(seq.grad, el.grad), max(seq.device, el.device), element=el))


def surely_kept(info, method) -> tuple:
    """astutil.kept_parameters of method `method` of the class `info` (a ClassInfo), less the
    attributes another method of the class or of its bases of the module binds, deletes or
    empties (a `reset()`, a `clear()`: the attribute may hold something else when it is read);
    `__init__` aside."""
    if type(method) is not ast.FunctionDef or not is_plain_method(method):
        return ()
    kept = kept_parameters(method)
    if not kept:
        return ()
    changed: set = set()
    todo, seen = [info], set()
    while todo:
        cls = todo.pop()
        if id(cls) in seen:
            continue
        seen.add(id(cls))
        todo.extend(cls.bases)
        for other in cls.node.body:
            if isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) and other is not method \
                    and other.name != "__init__":
                changed |= attributes_changed(other)
    return tuple(k for k in kept if k[1] not in changed)


def _changes_attribute(text: str, attr: str) -> bool:
    """Whether `text` binds, adds to or empties an attribute `attr` of anything (`.last = `,
    `.last += `, `.vals.append(`, `.vals.clear()`), by its text."""
    return re.search(r"\.%s\s*(?:[-+*/]?=(?!=)|\.(?:append|extend|clear|pop)\()" % re.escape(attr), text) is not None


def _converted_in(source: str, attrs: set) -> bool:
    """Whether the text of a class may convert one of `attrs` of the instance to NumPy: a line
    that names `.<attr>` and `numpy` or `np.` (`self.last.numpy()`, `np.mean(self.vals)`)."""
    for attr in attrs:
        needle = "." + attr
        at = source.find(needle)
        while at != -1:
            end = at + len(needle)
            if end >= len(source) or not (source[end].isalnum() or source[end] == "_"):
                stop = source.find("\n", end)
                line = source[source.rfind("\n", 0, at) + 1:stop if stop != -1 else len(source)]
                if "numpy" in line or "np." in line:
                    return True
            at = source.find(needle, end)
    return False


def _literal_defaults(args: ast.arguments) -> list:
    """[(parameter, its default)] of a def's parameters that have one."""
    positional = [*args.posonlyargs, *args.args]
    out = list(zip((a.arg for a in positional[len(positional) - len(args.defaults):]), args.defaults))
    out.extend((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    return out


_NUMBER_CALLS = frozenset({"int", "float", "round", "abs", "min", "max", "len"})
_IDENTIFIER = LazyPattern(r"[A-Za-z_]\w*")


def _number_of(value: str, params) -> frozenset | None:
    """The names of `params` that the text `value` computes a number from, where it is arithmetic
    of them and of numbers only (`size // 2`, `int(size)`, `(k - 1) * dilation // 2`): a value
    that holds no parameter or module whatever they are (an operator or `int()` makes none);
    else None."""
    value = value.split("#", 1)[0].strip()
    if any(w not in params and w not in _NUMBER_CALLS for w in _IDENTIFIER.findall(value)):
        return None  # (another name: not parsed)
    try:
        node = ast.parse(value, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    used = set()
    stack = [node]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.BinOp:
            stack += (n.left, n.right)
        elif t is ast.UnaryOp:
            stack.append(n.operand)
        elif t is ast.Constant:
            if type(n.value) not in (int, float):
                return None
        elif t is ast.Name:
            if n.id not in params:
                return None
            used.add(n.id)
        elif t is ast.Call and type(n.func) is ast.Name and n.func.id in _NUMBER_CALLS and not n.keywords:
            stack += n.args
        else:
            return None
    if type(node) not in (ast.BinOp, ast.UnaryOp, ast.Call):
        return None  # (a parameter as it is, or a literal: asked elsewhere)
    return frozenset(used)


def _is_literal(node) -> bool:
    """A number, a string, a bool or None written as such (`2.0`, `-1`, `"gelu"`)."""
    if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
        node = node.operand
        return type(node) is ast.Constant and type(node.value) in (int, float)
    return type(node) is ast.Constant and (node.value is None or type(node.value) in (int, float, str, bool))


# What the body of a module class without parameters never holds (Walker.class_paramfree): a
# parameter, a layer of torch (`nn.Linear`), a module or attribute set by its name.
_LAYER_WORDS = ("Parameter", "parameter(", "nn.", "add_module", "register_module", "setattr", "load_state_dict")
def _new_buffers_only(item, source: str) -> bool:
    """Whether every `register_buffer(...)` of class body item `item` (a method; `source`, its
    text) registers a new tensor without grad: one of torch's factories makes (`torch.zeros(3)`;
    `torch.tensor(x)` copies without grad), or arithmetic of such tensors and numbers
    (_new_tensor: `1.0 / (base ** (torch.arange(0, d, 2).float() / d))`, a rotary embedding's
    frequencies), directly or through locals the method binds only to such values and fills only
    with them (`pe = torch.zeros(n, d)`, `pe[:, 0::2] = torch.sin(position * div_term)`, `pe =
    pe.unsqueeze(0)`: the PyTorch tutorial's positional encoding), where the method says
    `requires_grad` only to turn it off (`requires_grad=False`); not one the class is handed."""
    if "requires_grad" in _GRAD_OFF.sub("", source):
        return False
    bindings = None
    found = 0
    for node in walk(item):
        if type(node) is not ast.Call or type(node.func) is not ast.Attribute or node.func.attr != "register_buffer":
            continue
        if any(type(a) is ast.Starred for a in node.args) or any(k.arg is None for k in node.keywords):
            return False
        tensor = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "tensor"),
                                                                None)
        if tensor is None:
            return False
        if bindings is None:
            bindings = _local_bindings(item)
        if not _new_tensor(tensor, bindings):
            return False
        found += 1
    return found == source.count("register_buffer")


def _local_bindings(func) -> dict:
    """{name: [what each statement of `func` that binds it, or writes into it, gives: the value
    node, or None where that is not one value (a tuple target, a loop, `:=`, an import)]}; and,
    under the name's key prefixed with ".", the calls of its in-place methods (`x.add_(w)`)."""
    out: dict = {}
    bind = _bind
    for node in walk(func):
        t = type(node)
        if t is ast.Assign:
            for target in node.targets:
                bind(out, target, node.value)
        elif t is ast.AugAssign or t is ast.AnnAssign:
            if node.value is not None:
                bind(out, node.target, node.value)
        elif t is ast.NamedExpr:
            bind(out, node.target, None)
        elif t in (ast.For, ast.AsyncFor, ast.comprehension):
            bind(out, node.target, None)
        elif t in (ast.With, ast.AsyncWith):
            for w in node.items:
                if w.optional_vars is not None:
                    bind(out, w.optional_vars, None)
        elif t is ast.ExceptHandler and node.name:
            out.setdefault(node.name, []).append(None)
        elif t in (ast.Import, ast.ImportFrom):
            for a in node.names:
                out.setdefault((a.asname or a.name).split(".", 1)[0], []).append(None)
        elif t in (ast.Global, ast.Nonlocal):
            for name in node.names:
                out.setdefault(name, []).append(None)
        elif t is ast.Call and type(node.func) is ast.Attribute and node.func.attr.endswith("_") \
                and not node.func.attr.endswith("__") and type(node.func.value) is ast.Name:
            out.setdefault(node.func.value.id, []).append(None)  # (`inv.add_(w)`: written in place)
    return out


def _bind(out: dict, target, value) -> None:
    """Record in `out` (_local_bindings) what binding `target` gives the names it binds."""
    t = type(target)
    if t is ast.Name:
        out.setdefault(target.id, []).append(value)
    elif t is ast.Subscript:
        while type(target) is ast.Subscript:
            target = target.value
        if type(target) is ast.Name:
            out.setdefault(target.id, []).append(value)
    elif t in (ast.Tuple, ast.List):
        for e in target.elts:
            _bind(out, e.value if type(e) is ast.Starred else e, None)
    elif t is ast.Starred:
        _bind(out, target.value, None)


# A new tensor computed from torch's factories (those that carry no grad of what they are given:
# api.FACTORIES less api.GRAD_THROUGH_FACTORIES) stays one through every torch function and
# tensor method of such tensors and numbers (_new_tensor: `(k / k.sum()).view(1, 1, -1)`, a
# Gaussian kernel's normalisation) but these (a `requires_grad` the method's text says otherwise
# is asked by _new_buffers_only).
_GRAD_METHODS = frozenset({"requires_grad_", "retain_grad", "register_hook"})


def _new_tensor(node, bindings: dict) -> bool:
    """Whether expression `node` is a new tensor of torch's factories that requires no grad
    (_new_buffers_only): a factory's call (whatever its arguments), or arithmetic, indexing, torch
    functions and tensor methods (but `_GRAD_METHODS`) of such tensors, numbers and names, with
    at least one factory's; a local (`bindings`: _local_bindings) bound and written only to such
    values or numbers.  A name the method does not bind (a constructor's size or base) is taken
    for a number."""
    made: list = []  # (a factory's tensor seen)
    return _new_walk(node, bindings, set(), made, 0) and bool(made)


def _new_walk(n, bindings: dict, visiting: set, made: list, depth: int) -> bool:
    """_new_tensor of `n`, the names being followed in `visiting`, the factories seen in `made`."""
    if depth > 60:
        return False
    t = type(n)
    if t is ast.Constant:
        return type(n.value) in (int, float, bool) or n.value is None
    if t is ast.Name:
        said = bindings.get(n.id)
        if said is None:
            return n.id != "torch"  # (a parameter of the method, or a name of the module)
        if n.id in visiting:
            return True  # (`pe = pe.unsqueeze(0)`: its other bindings are asked)
        visiting.add(n.id)
        try:
            return all(v is not None and _new_walk(v, bindings, visiting, made, depth + 1) for v in said)
        finally:
            visiting.discard(n.id)
    if t is ast.BinOp:
        return _new_walk(n.left, bindings, visiting, made, depth + 1) \
            and _new_walk(n.right, bindings, visiting, made, depth + 1)
    if t is ast.UnaryOp:
        return _new_walk(n.operand, bindings, visiting, made, depth + 1)
    if t is ast.Subscript:
        return _new_walk(n.value, bindings, visiting, made, depth + 1)
    if t in (ast.Tuple, ast.List):
        return all(type(e) is not ast.Starred and _new_walk(e, bindings, visiting, made, depth + 1) for e in n.elts)
    if t is not ast.Call or type(n.func) is not ast.Attribute \
            or any(k.arg is None for k in n.keywords) or any(type(a) is ast.Starred for a in n.args):
        return False
    f = n.func
    args = [*n.args, *(k.value for k in n.keywords if k.arg not in ("dtype", "device"))]
    if type(f.value) is ast.Name and f.value.id == "torch" and "torch" not in bindings:
        q = "torch." + f.attr
        if q in api.FACTORIES and q not in api.GRAD_THROUGH_FACTORIES:
            made.append(f.attr)
            return True
        return all(_new_walk(a, bindings, visiting, made, depth + 1) for a in args)
    if type(f.value) is ast.Name and f.value.id not in bindings:
        # (A name the method does not bind is a number, but not as a receiver: `nn.Parameter(t)`,
        # `np.exp(x)` are no tensor's methods; `math.log(10000.0)` gives a number.)
        return f.value.id == "math" and all(_new_walk(a, bindings, visiting, made, depth + 1) for a in args)
    return f.attr not in _GRAD_METHODS and _new_walk(f.value, bindings, visiting, made, depth + 1) and all(
        type(a) is ast.Attribute and (dotted_name(a) or "").startswith("torch.")
        or _new_walk(a, bindings, visiting, made, depth + 1) for a in args)


# What turns grad off, said of anything (_new_buffers_only).
_GRAD_OFF = LazyPattern(r"(?m)\brequires_grad\s*=\s*False(?=\s*(?:[,)#]|$))"
                        r"|\brequires_grad_\(\s*(?:requires_grad\s*=\s*)?False\s*\)")


# `self.a.b = value` (`self.a.b: T = value`): an attribute of an attribute set
# (walker._frozen_parameters_only).
_NESTED_ASSIGNMENT = LazyPattern(r"\bself\.\w+(?:\.\w+|\[[^\]\n]*\])+\s*(?::[^=\n]*)?=(?!=)")


def _made_frozen_kind(value: str) -> str | None:
    """"Embedding" when the text `value` (a line's value, a comment after it allowed) is all a
    call of `nn.Embedding.from_pretrained(v)` (or `EmbeddingBag`'s) that leaves `freeze` true,
    "Parameter" when it is `nn.Parameter(t, requires_grad=False)` (or `nn.Parameter(t, False)`),
    "layer" when it is a torch layer without parameters (`nn.Dropout(p)`, `nn.ReLU()`); else None."""
    try:
        node = ast.parse(value.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _frozen_kind_of(node)


# torch's normalisation layers, and the keyword that, false, leaves them without parameters
# (`nn.LayerNorm(d, elementwise_affine=False)`); the instance norms have none by default.
# ((keyword, its position): `nn.BatchNorm1d(num_features, eps, momentum, affine)`).
_AFFINE_KEYWORD = {"LayerNorm": ("elementwise_affine", 2), "RMSNorm": ("elementwise_affine", 2),
                   "BatchNorm1d": ("affine", 3), "BatchNorm2d": ("affine", 3), "BatchNorm3d": ("affine", 3),
                   "GroupNorm": ("affine", 3), "InstanceNorm1d": ("affine", 3), "InstanceNorm2d": ("affine", 3),
                   "InstanceNorm3d": ("affine", 3)}


def _frozen_kind_of(node, depth: int = 0) -> str | None:
    """_made_frozen_kind of an expression; "container" for an `nn.Sequential(...)`, or an
    `nn.ModuleList([...])` of a list or a comprehension, whose items all have a kind."""
    if type(node) is not ast.Call:
        return None
    name = dotted_name(node.func) or ""
    if ("torch." + name if name.startswith("nn.") else name) in api.PARAMFREE_MODULES:
        return "layer"
    short = name[9:] if name.startswith("torch.nn.") else name[3:] if name.startswith("nn.") else None
    if short in _AFFINE_KEYWORD and not any(k.arg is None for k in node.keywords) \
            and not any(type(a) is ast.Starred for a in node.args):
        keyword, at = _AFFINE_KEYWORD[short]
        flag = {k.arg: k.value for k in node.keywords}.get(keyword)
        if flag is None and len(node.args) > at:
            flag = node.args[at]  # (`nn.BatchNorm1d(4, 1e-5, 0.1, False)`)
        if flag is not None and const_bool(flag) is False or flag is None and short.startswith("InstanceNorm"):
            return "layer"
    if type(node.func) is ast.Attribute and node.func.attr == "requires_grad_" and _false_argument(node):
        return "frozen"  # (`nn.Linear(4, 4).requires_grad_(False)`: all it holds frozen)
    if short in ("Sequential", "ModuleList") and depth < 8 and not node.keywords:
        items = node.args
        if short == "ModuleList":
            if len(items) != 1:
                return None
            arg = items[0]
            items = arg.elts if type(arg) in (ast.List, ast.Tuple) else [arg.elt] if type(arg) is ast.ListComp \
                else None
        if items and all(type(i) is not ast.Starred and _frozen_kind_of(i, depth + 1) is not None for i in items):
            return "container"
        return None
    if any(k.arg is None for k in node.keywords) or any(type(a) is ast.Starred for a in node.args) or not node.args:
        return None
    if name.startswith("torch."):
        name = name[6:]
    keywords = {k.arg: k.value for k in node.keywords}
    if name in ("nn.Embedding.from_pretrained", "nn.EmbeddingBag.from_pretrained"):
        freeze = node.args[1] if len(node.args) > 1 else keywords.get("freeze")
        return "Embedding" if freeze is None or const_bool(freeze) is True else None
    if name == "nn.Parameter":
        flag = node.args[1] if len(node.args) > 1 else keywords.get("requires_grad")
        return "Parameter" if flag is not None and const_bool(flag) is False else None
    return None


def _attributes_frozen(init, attrs: set) -> tuple:
    """({attr: the parts of it frozen after the last top-level statement of constructor `init`
    that sets it: "all" for the whole (walker._freezes of `self.<attr>`), or some of "weight",
    "bias" (`self.emb.weight.requires_grad = False`)}, {attr: [(freezing statement, part)]}) for
    the attributes `attrs` of the instance."""
    a = init.args
    if not a.args or a.vararg is not None:
        return {}, {}
    me = a.args[0].arg
    last: dict = {}  # attr -> index of the last top-level statement that sets it
    for i, stmt in enumerate(init.body):
        for n in walk(stmt):
            t = type(n)
            targets = n.targets if t is ast.Assign else [n.target] if t in (ast.AugAssign, ast.AnnAssign) else ()
            for target in targets:
                for e in (target.elts if type(target) in (ast.Tuple, ast.List) else [target]):
                    if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == me:
                        last[e.attr] = i
    frozen: dict = {}
    freezes: dict = {}
    for i, stmt in enumerate(init.body):
        for attr in attrs:
            if last.get(attr, len(init.body)) >= i:
                continue
            part = _part_frozen(stmt, me, attr)
            if part is None and not _freezes(stmt, f"{me}.{attr}"):
                continue
            freezes.setdefault(attr, []).append((stmt, part))
            if part is None:
                frozen[attr] = "all"
            elif frozen.get(attr) != "all":
                frozen[attr] = frozen.get(attr, frozenset()) | {part}
    return frozen, freezes


def _part_frozen(stmt, me: str, attr: str) -> str | None:
    """"weight" or "bias" where `stmt` is `me.attr.weight.requires_grad = False` or
    `me.attr.weight.requires_grad_(False)` (or `.bias`)."""
    if type(stmt) is ast.Expr and type(stmt.value) is ast.Call and type(stmt.value.func) is ast.Attribute \
            and stmt.value.func.attr == "requires_grad_" and _false_argument(stmt.value):
        part = stmt.value.func.value
    elif type(stmt) is ast.Assign and len(stmt.targets) == 1 and const_bool(stmt.value) is False \
            and type(stmt.targets[0]) is ast.Attribute and stmt.targets[0].attr == "requires_grad":
        part = stmt.targets[0].value
    else:
        return None
    if type(part) is not ast.Attribute or part.attr not in ("weight", "bias") \
            or dotted_name(part.value) != f"{me}.{attr}":
        return None
    return part.attr


def _only_used(source: str, attr: str) -> bool:
    """Whether the text `source` of a class uses its attribute `attr` (`self.<attr>`) only in ways
    that add no parameter to what it holds: calling it (`self.emb(ids)`, `self.layers[0](x)`),
    setting it, iterating over it (`for e in self.embs`), freezing it or its parts
    (`.requires_grad_(`, `.parameters()`, `.weight.requires_grad`), reading or filling its
    `weight` and `bias` (`self.emb.weight.data.copy_(v)`), `.eval()` and `.train()`.  (Not
    `self.layers.append(...)`, `self.layers += [...]`, `layers = self.layers`, or handing it to a
    function, `weight_norm(self.fc)`.)"""
    for m in re.finditer(r"\bself\s*\.\s*%s\b" % re.escape(attr), source):
        before = source[max(0, m.start() - 4):m.start()]
        after = source[m.end():m.end() + 80]
        if _ALLOWED_USE.match(after) is not None and not after.lstrip().startswith(("+=", "|=")):
            continue
        if before.endswith("in ") and _ITERATED.match(after) is not None:
            continue
        return False
    return True


_ALLOWED_USE = LazyPattern(r"\s*\(|\s*(?::[^=\n]*)?=(?!=)|\[[^\]\n]*\]\s*\(|\.(?:parameters\(\)|requires_grad_\("
                           r"|eval\(\)|train\(|(?:weight|bias)\b(?!\s*\.\s*(?:data\s*=|set_|resize_)))")
_ITERATED = LazyPattern(r"\s*[:)\]]")


# torch layers whose only parameters are `weight` and, unless `bias=False` says otherwise, `bias`
# (_parts_cover); the embeddings have no bias.
_WEIGHT_ONLY_LAYERS = frozenset({"Embedding", "EmbeddingBag"})
_WEIGHT_BIAS_LAYERS = frozenset({"Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
                                 "ConvTranspose3d", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                                 "GroupNorm", "Bilinear"})


def _parts_cover(parts, value: str) -> bool:
    """Whether freezing `parts` ("all": all of it; else a set of "weight", "bias") of an attribute
    set to the text `value` freezes every parameter it holds: all of it, or the weight of an
    `nn.Embedding(...)`, the weight and bias of an `nn.Linear(...)` (its weight alone with
    `bias=False`)."""
    if parts == "all":
        return True
    try:
        node = ast.parse(value.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    name = dotted_name(node.func) if type(node) is ast.Call else None
    if name is None or not name.startswith(("nn.", "torch.nn.")) or any(k.arg is None for k in node.keywords):
        return False
    layer = name.rsplit(".", 1)[-1]
    if layer in _WEIGHT_ONLY_LAYERS:
        return "weight" in parts
    if layer not in _WEIGHT_BIAS_LAYERS:
        return False
    bias = {k.arg: k.value for k in node.keywords}.get("bias")
    at = _BIAS_POSITION.get(layer)
    if bias is None and at is not None and len(node.args) > at:
        bias = node.args[at]
    return parts >= ({"weight"} if bias is not None and const_bool(bias) is False else {"weight", "bias"})


# Where a layer takes `bias` by position (`nn.Linear(4, 2, False)`).
_BIAS_POSITION = {"Linear": 2, "Bilinear": 3, "LayerNorm": 3, "Conv1d": 7, "Conv2d": 7, "Conv3d": 7}


# `self.x = value` (also `self.x: T = value`; group 1: the value to the end of its line), or a
# target list that holds an attribute, `self.a, self.b = ...`, `x, self.a = ...` (no group: not
# read; _starts_a_target_list tells it from a call's arguments, `f(x, self.kernel)`, which set
# nothing); and a line that is one literal (a number, a string, True, False, None), a comment
# after it allowed.
_SELF_ASSIGNMENT = LazyPattern(r"\bself\.\w+\s*(?::[^=\n]*)?=(?!=)([^\n]*)|\bself\.\w+\s*,")
# What may come before a target list's `self.a,` on its line (`x, self.a = ...`, `(self.a, ...`):
# not a call's opening (`f(x, self.kernel)` sets nothing).
_TARGETS_BEFORE = LazyPattern(r"[ \t]*[(\[]?[\w., \t]*")


def _starts_a_target_list(source: str, at: int) -> bool:
    """Whether `self.a,` at offset `at` of `source` may be in the target list of an assignment:
    only target-like text before it on its line (_TARGETS_BEFORE), on a line that does not
    continue the statement of the line before."""
    start = source.rfind("\n", 0, at) + 1
    return _TARGETS_BEFORE.fullmatch(source, start, at) is not None and not _continues_a_line(source, start)


def _continues_a_line(source: str, at: int) -> bool:
    """Whether the line that starts at offset `at` of `source` continues the statement of the
    line before (that line ends, its comment left out, with an open bracket or a comma, or a
    backslash): not a statement's start."""
    end = at - 1
    if end <= 0:
        return False
    start = source.rfind("\n", 0, end) + 1
    line = source[start:end]
    hash_at = line.find("#")
    if hash_at != -1 and "'" not in line and '"' not in line:
        line = line[:hash_at]
    return line.rstrip().endswith(("(", "[", "{", ",", "\\"))


# What sets an attribute of a module by its name (walker._param_holders).
_BY_NAME = ("setattr", "add_module", "register_module", "register_parameter", "register_buffer", "__dict__",
            "load_state_dict")
_BY_NAME_BUT_BUFFERS = tuple(w for w in _BY_NAME if w != "register_buffer")
_LITERAL_LINE = LazyPattern(r"""(?:-?[\d.]+(?:e-?\d+)?|True|False|None|'[^'\\]*'|"[^"\\]*")\s*(?:#.*)?""")


# What a parameter is before its calls say anything (identities: _run_function).
_UNKNOWN_PARAMETERS = (UNKNOWN_FACT, NONE_DEFAULT_FACT)


def _none_defaults(args: ast.arguments) -> frozenset:
    """The parameters whose default is `None`."""
    found = []
    positional = [*args.posonlyargs, *args.args]
    for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if type(d) is ast.Constant and d.value is None:
            found.append(a.arg)
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        if type(d) is ast.Constant and d.value is None:
            found.append(a.arg)
    return frozenset(found)


def _reads_self_or_local(value, self_name: str) -> bool:
    """`value` reads an attribute of `self`, or is a plain name (a local of the method)."""
    if isinstance(value, ast.Name):
        return value.id != self_name
    return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == self_name
               for n in walk(value))


def _parameters_call(node) -> bool:
    """`x.parameters()` or `x.named_parameters()`, without arguments."""
    return type(node) is ast.Call and type(node.func) is ast.Attribute and not node.args and not node.keywords \
        and node.func.attr in ("parameters", "named_parameters")


def _changed_locals(memo: dict, method, bound: dict) -> set:
    """The locals of `bound` (`method`'s single assignments) that a statement of the method may
    change after they are bound: named in an expression statement (`enc.requires_grad_(False)`,
    `freeze(enc)`) or in the target of an assignment (`enc.weight = w`, `pe[:, 0] = s`); read
    from the method's nodes once (`memo`, keyed by None)."""
    found = memo.get(None)
    if found is None:
        found = memo[None] = set()
        if bound:
            for stmt in all_nodes(method):
                t = type(stmt)
                if t is ast.Expr:
                    found.update(n.id for n in walk(stmt) if type(n) is ast.Name and n.id in bound)
                elif t is ast.Assign or t is ast.AugAssign or t is ast.AnnAssign:
                    for target in (stmt.targets if t is ast.Assign else [stmt.target]):
                        if type(target) is not ast.Name:
                            found.update(n.id for n in walk(target) if type(n) is ast.Name and n.id in bound)
    return found


def _view_base(expr, bound: dict):
    """What `expr` is a view of (`self.fc.weight` of `self.fc.weight[0].view(-1)`: saved.py's
    views, and `reshape` / `flatten`, which may give one), through a local bound once (`bound`)
    to one; `expr` itself where it is no view."""
    from .saved import VIEW_ATTRS, VIEW_METHODS

    for _ in range(8):
        t = type(expr)
        if t is ast.Subscript:
            expr = expr.value
        elif t is ast.Attribute and expr.attr in VIEW_ATTRS:
            expr = expr.value
        elif t is ast.Call and type(expr.func) is ast.Attribute and (
                expr.func.attr in VIEW_METHODS or expr.func.attr in ("reshape", "flatten")):
            expr = expr.func.value
        elif t is ast.Name and expr.id in bound:
            expr = bound[expr.id]
        else:
            break
    return expr


def _turns_grad_on_text(source: str) -> bool:
    """Whether a def's text may run with grad on whatever mode its callers run it in
    (`@torch.enable_grad()`, `with torch.enable_grad():`, `torch.set_grad_enabled(...)`)."""
    return "enable_grad" in source or "set_grad_enabled" in source


def _copied_in(source: str, attr: str) -> bool:
    """Whether the text of a class may copy-construct or convert its attribute `attr`
    (`torch.tensor(self.w`, `x.new_tensor(self.w`, `np.asarray(self.w)`, `self.w.numpy()`): where
    the facts of a constructor's locals are worth giving it."""
    return "tensor(self." + attr in source or _converted_in(source, {attr})


def _reads_any(value, names: dict) -> bool:
    """`value` reads one of `names`."""
    return bool(names) and any(type(n) is ast.Name and n.id in names for n in walk(value))


def _single_assignments(func) -> dict:
    """{local: value} of the names that `func` binds once, by a plain assignment
    (`out = self.fc(x)`): a name bound in any other way or more than once is left out.  One
    pass over the function, for all its names."""
    bound: dict = {}  # name -> how often it is bound (stored or deleted)
    values: dict = {}  # name -> the value of an assignment to it alone
    _Name, _Assign, _Load = ast.Name, ast.Assign, ast.Load
    for node in all_nodes(func):
        t = type(node)
        if t is _Name:
            if type(node.ctx) is not _Load:
                bound[node.id] = bound.get(node.id, 0) + 1
        elif t is _Assign and len(node.targets) == 1 and type(node.targets[0]) is _Name:
            values[node.targets[0].id] = node.value
    return {name: value for name, value in values.items() if bound.get(name) == 1}


# torch.optim.Optimizer, and a stand-in def of its constructor's parameters (_optimizer_groups).
_OPTIMIZER_BASES = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})
_OPTIMIZER_INIT = ast.parse("def __init__(self, params, defaults): pass").body[0]


def _optimizer_params(call: ast.Call):
    """The expression `super().__init__(...)` passes torch.optim.Optimizer as `params`, or None."""
    return dict(bind_arguments(_OPTIMIZER_INIT, call, skip_first=True)[0]).get("params")


def _is_super_init(node) -> bool:
    """`super().__init__(...)`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super" and not node.func.value.args)


# What may follow the statement of a constructor that freezes the instance without adding a
# parameter: a call of one of these methods of the instance (`self.eval()`).
_KEEPS_PARAMETERS = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double", "bfloat16"})


def _may_freeze(source: str) -> bool:
    """Whether a def's text may hold what `freezes_self` looks for."""
    return "requires_grad" in source or "detach_(" in source


def freezes_self(init, freezing_method=None) -> bool:
    """Whether constructor `init` (a def) freezes every parameter of its instance at its top
    level (`self.requires_grad_(False)`, or `for p in self.parameters(): p.requires_grad = False`
    / `p.requires_grad_(False)` / `p.detach_()`, or `self.freeze()` where `freezing_method(name)`
    says that method does so), with nothing after that may add one: only calls of `self.eval()`
    and the like, and a bare `return`."""
    a = init.args
    if not a.args or a.vararg is not None:
        return False
    me = a.args[0].arg
    body = init.body
    last = None
    for i, stmt in enumerate(body):
        if _freezes(stmt, me) or freezing_method is not None and _calls_own_method(stmt, me, freezing_method):
            last = i
    if last is None:
        return False
    for stmt in body[last + 1:]:
        t = type(stmt)
        if t is ast.Pass or t is ast.Return and stmt.value is None:
            continue
        if t is ast.Expr:
            v = stmt.value
            if type(v) is ast.Constant:
                continue
            if type(v) is ast.Call and type(v.func) is ast.Attribute and v.func.attr in _KEEPS_PARAMETERS \
                    and type(v.func.value) is ast.Name and v.func.value.id == me:
                continue
        return False
    return True


def _frozen_arguments(positions, func, skip: int, call: ast.Call) -> set:
    """Of the parameters at `positions` (past the first `skip`) of def `func` (None: not known),
    the positions `call` passes positionally and the names it passes by keyword.  A position
    frozen under a flag of the function (`(1, "freeze")`: frozen_positions) counts unless the
    call leaves that flag false, by a literal or by a literal default (`Probe(net,
    freeze=False)`); where the call passes something else, the module may be frozen, which is
    as much as a freeze ever says (a layer may be thawed since)."""
    plain = set()
    for i in positions:
        if type(i) is tuple:
            i, flag = i
            if flag[:1] == "!":
                # (Set to the flag's value: frozen where the call leaves it false, and where what
                # it leaves is not known, may be; thawed only where it leaves it true.)
                if func is None or _flag_left(func, skip, call, flag[1:]) is True:
                    continue
            elif func is None or _flag_left_false(func, skip, call, flag):
                continue
        plain.add(i)
    out: set = {i for i in plain if i < len(call.args)}
    if call.keywords and func is not None:
        params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]][skip:]
        named = {params[i] for i in plain if i < len(params)}
        out |= {kw.arg for kw in call.keywords if kw.arg in named}
    return out


def _thawed_arguments(positions, func, skip: int, call: ast.Call) -> set:
    """Of the parameters at `positions` that a function sets to one of its flags (`(1, "!flag")`:
    frozen_positions), those `call` does not leave false: as `_frozen_arguments` gives them."""
    thawed = {(i, flag[1:]) for i, flag in (p for p in positions if type(p) is tuple) if flag[:1] == "!"}
    plain = {i for i, flag in thawed if func is not None and _flag_left(func, skip, call, flag) is True}
    return _frozen_arguments(plain, func, skip, call)


def _flag_left_false(func, skip: int, call: ast.Call, flag: str) -> bool:
    """Whether `call` of def `func` (its first `skip` parameters bound by Python) leaves its
    parameter `flag` false: a literal false passed, or nothing passed and a literal false
    default."""
    return _flag_left(func, skip, call, flag) is False


def _flag_left(func, skip: int, call: ast.Call, flag: str) -> bool | None:
    """The truth `call` of def `func` (its first `skip` parameters bound by Python) leaves its
    parameter `flag`: of a literal passed, or, where nothing is, of a literal default; None
    where it is not known (a name, an expression, `*args` that may pass it)."""
    pairs, complete = bind_arguments(func, call, bool(skip))
    for p, e in pairs:
        if p == flag:
            return bool(e.value) if type(e) is ast.Constant else None
    if not complete:
        return None
    said = dict(constant_defaults(func)).get(flag)
    return None if not said else said == "1"


def frozen_positions(func, skip: int = 0) -> frozenset:
    """The positions (past the first `skip`) of the positional parameters of def `func` that it
    freezes at the top level of its body (_freezes): by their names, or, past a first parameter
    `self`, by the attribute it keeps them in (`self.backbone = backbone`, then
    `self.backbone.requires_grad_(False)`); or, as (position, flag), under `if flag:` there, a
    parameter of `func`."""
    params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    names = {p: [p] for p in params[skip:]}
    if skip and params:
        me = params[0]
        for stmt in func.body:
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.value) is ast.Name \
                    and stmt.value.id in names:
                key = dotted_name(stmt.targets[0])
                if key is not None and key.startswith(me + ".") and key.count(".") == 1:
                    names[stmt.value.id].append(key)
    out = {i - skip for i, p in enumerate(params) if p in names
           and any(_freezes(stmt, n) for stmt in func.body for n in names[p])}
    # Under a flag of the function, `if freeze: backbone.requires_grad_(False)`: frozen where the
    # call's flag is not false ((position, flag): _frozen_arguments).
    for stmt in func.body:
        if type(stmt) is ast.If and not stmt.orelse and type(stmt.test) is ast.Name and stmt.test.id in params:
            for i, p in enumerate(params):
                if p in names and i - skip not in out and any(
                        _freezes(s, n) for s in stmt.body for n in names[p]):
                    out.add((i - skip, stmt.test.id))
    # By the value of a flag of the function, `m.requires_grad_(flag)` (`def set_trainable(m,
    # flag)`): frozen where the call leaves that flag false ((position, "!flag")).
    for at, stmt in enumerate(func.body):
        flag = _set_to_name(stmt)
        if flag is None or flag not in params[skip:]:
            continue
        nodes = list(walk(func))
        if sum(type(n) is ast.Attribute and n.attr in ("requires_grad", "requires_grad_") for n in nodes) != 1 \
                or any(type(n) in (ast.Return, ast.Raise) for s in func.body[:at] for n in walk(s)):
            break  # (it sets requires_grad elsewhere too, or may return before: `if not on: return`)
        if any(type(n) is ast.Name and n.id == flag and type(n.ctx) is not ast.Load for n in nodes):
            break  # (a flag bound again in the function is not what the call gave)
        for i, p in enumerate(params):
            if p in names and p != flag and i - skip not in out and any(_freezes(stmt, n, flag) for n in names[p]):
                out.add((i - skip, "!" + flag))
    return frozenset(out)


def _set_to_name(stmt) -> str | None:
    """The name `stmt` sets `requires_grad` to, when it is one: `m.requires_grad_(flag)`, or a
    loop whose first statement is `p.requires_grad = flag` or `p.requires_grad_(flag)`."""
    t = type(stmt)
    if t is ast.For and stmt.body:
        stmt = stmt.body[0]
        t = type(stmt)
        if t is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Attribute \
                and stmt.targets[0].attr == "requires_grad":
            return stmt.value.id if type(stmt.value) is ast.Name else None
    if t is ast.Expr or t is ast.Assign:
        call = stmt.value
        if type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr == "requires_grad_" \
                and len(call.args) + len(call.keywords) == 1:
            arg = call.args[0] if call.args else call.keywords[0].value
            return arg.id if type(arg) is ast.Name else None
    return None


def _without_mode(v):
    """`v` without the `.eval()` / `.train()` / `.train(False)` calls at its end: what they are
    called on, which they return."""
    while type(v) is ast.Call and type(v.func) is ast.Attribute and v.func.attr in ("eval", "train") \
            and not v.keywords and (not v.args or len(v.args) == 1 and type(v.args[0]) is ast.Constant):
        v = v.func.value
    return v


def _calls_own_method(stmt, me: str, test) -> bool:
    """`me.name()` as a statement, without arguments, for which `test(name)` holds."""
    if type(stmt) is not ast.Expr:
        return False
    call = stmt.value
    return type(call) is ast.Call and not call.args and not call.keywords and type(call.func) is ast.Attribute \
        and type(call.func.value) is ast.Name and call.func.value.id == me and test(call.func.attr)


def _freezes(stmt, me: str, flag: str | None = None) -> bool:
    """`me.requires_grad_(False)` (`me.eval().requires_grad_(False)`), or a loop over
    `me.parameters()` whose body only sets what it gives `requires_grad = False` (or detaches
    it in place, `p.detach_()`, which leaves it a leaf that does not require grad).  `me`: a
    name, or a dotted one (`self.backbone`).  `flag`: the name whose value is set instead of
    False (`me.requires_grad_(flag)`, `p.requires_grad = flag`: frozen where it is false)."""
    t = type(stmt)
    if t is ast.Expr or t is ast.Assign:
        # (`self.net = net.eval().requires_grad_(False)`: what it returns is what it froze.)
        call = stmt.value
        if type(call) is not ast.Call or type(call.func) is not ast.Attribute or call.func.attr != "requires_grad_" \
                or not _false_argument(call, flag):
            return False
        recv = call.func.value
        while type(recv) is ast.Call and type(recv.func) is ast.Attribute and recv.func.attr in _KEEPS_PARAMETERS:
            recv = recv.func.value
        return dotted_name(recv) == me
    if t is not ast.For or stmt.orelse or type(stmt.target) is not ast.Name:
        return False
    it = stmt.iter
    if not (type(it) is ast.Call and type(it.func) is ast.Attribute and it.func.attr == "parameters"
            and not it.args and not it.keywords and dotted_name(it.func.value) == me):
        return False
    p = stmt.target.id
    for s in stmt.body:
        if type(s) is ast.Assign and len(s.targets) == 1:
            target = s.targets[0]
            if type(target) is ast.Attribute and target.attr == "requires_grad" and type(target.value) is ast.Name \
                    and target.value.id == p and _is_false(s.value, flag):
                continue
        if type(s) is ast.Expr and type(s.value) is ast.Call and type(s.value.func) is ast.Attribute \
                and type(s.value.func.value) is ast.Name and s.value.func.value.id == p \
                and (s.value.func.attr == "requires_grad_" and _false_argument(s.value, flag)
                     or flag is None and s.value.func.attr == "detach_" and not s.value.args
                     and not s.value.keywords):
            continue
        return False
    return bool(stmt.body)


def _false_argument(call: ast.Call, flag: str | None = None) -> bool:
    """`f(False)` or `f(requires_grad=False)`: the one argument a literal False (with `flag`,
    the name `flag` instead)."""
    args = [*call.args, *(k.value for k in call.keywords if k.arg == "requires_grad")]
    return len(args) == 1 and len(call.args) + len(call.keywords) == 1 and _is_false(args[0], flag)


def _is_false(value, flag: str | None) -> bool:
    """A literal False, or with `flag`, the name `flag`."""
    if flag is None:
        return const_bool(value) is False
    return type(value) is ast.Name and value.id == flag


def _walrus_lines(text: str) -> frozenset:
    """The numbers of the lines of `text` that hold `:=` (most texts hold none)."""
    out = set()
    at = text.find(":=")
    while at != -1:
        out.add(text.count("\n", 0, at) + 1)
        at = text.find(":=", at + 2)
    return frozenset(out)


# Names with "grad" in them of torch's functions and methods that leave whether what they are given
# requires grad as it was (`self.model.zero_grad()`, `clip_grad_norm_(self.model.parameters(), 1)`).
_KEEP_REQUIRES_GRAD = frozenset({"zero_grad", "clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "grad",
                                 "no_grad", "set_grad_enabled", "is_grad_enabled"})


def _grad_changes(method, sets_grad) -> set:
    """The attributes `x` of the first parameter whose grad `method` may change other than by
    assigning `self.x`: `self.x.requires_grad_(False)`, `self.x.apply(f)`, a loop over
    `self.x.parameters()` that sets `requires_grad`, `self.x.weight.requires_grad = False`, or
    passing it to a function that may (`freeze(self.x)`, `self.set_requires_grad([self.x],
    False)`: `sets_grad(name)` tells by the function's name); also through a name the method
    assigns it from (`model.requires_grad_(False)` with `self.x = model`)."""
    if not method.args.args:
        return set()
    me = method.args.args[0].arg
    aliases: dict = {}  # name -> attributes assigned from it
    for node in _statements_and_calls(method.body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                    aliases.setdefault(node.value.id, set()).add(t.attr)
    out: set = set()

    def mentioned(node) -> None:
        for n in walk(node):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
                out.add(n.attr)
            elif isinstance(n, ast.Name) and n.id in aliases:
                out.update(aliases[n.id])

    for node in _statements_and_calls(method.body):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in ("requires_grad_", "detach_", "apply") and isinstance(func, ast.Attribute):
                mentioned(func.value)
            elif name is not None and sets_grad(name):
                if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name):
                    mentioned(func.value)  # `self.model.freeze()`
                for a in [*node.args, *(k.value for k in node.keywords)]:
                    for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a]):
                        if isinstance(e, (ast.Name, ast.Attribute)):
                            mentioned(e)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            # (A loop that sets `p.requires_grad` or calls `p.requires_grad_(...)`; not one that
            # reads it, `if param.requires_grad and ...:` of FGM's attack.)
            if any(isinstance(n, ast.Attribute) and (n.attr in ("requires_grad_", "detach_") or n.attr == "requires_grad"
                                                     and type(n.ctx) is ast.Store)
                   for b in node.body for n in walk(b)):
                mentioned(node.iter)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Attribute) and t.attr == "requires_grad":
                    mentioned(t.value)
    return out


def _attributes_changed_in_place(method) -> set:
    """The attributes `x` of the first parameter that a call statement of `method` changes in
    place as a module or a tensor (`self.x.to(device)`, `self.x.half()`,
    `self.x.requires_grad_(False)`); none for a method without one (`@staticmethod def f():`)."""
    if not method.args.args:
        return set()
    me = method.args.args[0].arg
    out = set()
    for node in _statements_and_calls(method.body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CHANGING:
            root = node.func.value
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                if isinstance(root, ast.Attribute) and isinstance(root.value, ast.Name) and root.value.id == me:
                    out.add(root.attr)
                    break
                root = root.func if isinstance(root, ast.Call) else root.value
    return out


# Methods that change a module or a tensor in place (where its parameters live, their dtype,
# whether they require grad): MODULE_SELF_METHODS but train and eval.
_CHANGING = frozenset("to cuda cpu float double half bfloat16 requires_grad_ apply type xpu mps share_memory".split())


def _attributes_set(cls: ast.ClassDef, source_of=None) -> set:
    """The attributes the methods of `cls` set on their first parameter (`source_of`: the text
    of a method, when there is one)."""
    out = set()
    for m in cls.body:
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out |= _attributes_set_by(m, source_of(m) if source_of is not None else None)
    return out


def _attributes_set_by(method, source: str | None = None) -> set:
    """The attributes `method` sets on its first parameter (`self.x = ...`, `self.x += ...`,
    `self.x.y = ...`); `source`: its text, which may say there are none."""
    if not method.args.args:
        return set()
    me = method.args.args[0].arg
    if source is not None and not may_set_attributes(source, me):
        return set()
    out = set()
    for n in _statements_and_calls(method.body):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t, _ in _target_values(n.targets if isinstance(n, ast.Assign) else [n.target], None):
                while isinstance(t, (ast.Attribute, ast.Subscript)):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                        out.add(t.attr)
                        break
                    t = t.value
    return out


def _target_values(targets: list, value) -> list:
    """[(target, the expression it is bound to, or None)] of an assignment's targets, through
    tuple and list targets: `self.g, self.d = g, d` pairs them; the targets of an unpacking of
    anything else (`self.a, self.b = pair`, a starred target) get None."""
    out: list = []
    for t in targets:
        _pair_target(t, value, out)
    return out


def _pair_target(t, v, out: list) -> None:
    if type(t) is ast.Tuple or type(t) is ast.List:
        if (v is not None and (type(v) is ast.Tuple or type(v) is ast.List) and len(v.elts) == len(t.elts)
                and not any(type(e) is ast.Starred for e in (*t.elts, *v.elts))):
            for a, b in zip(t.elts, v.elts):
                _pair_target(a, b, out)
        else:
            for a in t.elts:
                _pair_target(a.value if type(a) is ast.Starred else a, None, out)
    else:
        out.append((t, v))


def _methods_of(info) -> list | None:
    """The defs of the methods of a class of the file and of its bases in the file (None when
    one of them has a base in another module of the project)."""
    out, seen, todo = [], set(), [info]
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        if c.project_bases:
            return None
        out.extend(m for m in c.node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
        todo.extend(c.bases)
    return out


# The methods that set an attribute of the instance by its name, and the keyword of the value.
_SETS_NAMED = {"register_buffer": "tensor", "register_parameter": "param", "add_state": "default"}


def _named_attribute(call: ast.Call, me: str) -> tuple | None:
    """(name, how, value node or None) of a call that sets attribute `name` of `me` by its name:
    `me.register_buffer("w", t)`, `me.register_parameter("w", p)`, `me.add_state("w",
    default=t)` (torchmetrics' `Metric`, an nn.Module), `setattr(me, "w", v)`."""
    func, args = call.func, call.args
    if type(func) is ast.Attribute:
        keyword = _SETS_NAMED.get(func.attr)
        if keyword is None or type(func.value) is not ast.Name or func.value.id != me:
            return None
        rest = args[1:]
    elif type(func) is ast.Name and func.id == "setattr" and len(args) == 3 and type(args[0]) is ast.Name \
            and args[0].id == me:
        keyword, args, rest = None, args[1:], args[2:]
    else:
        return None
    if not args or type(args[0]) is not ast.Constant or type(args[0].value) is not str:
        return None
    value = rest[0] if rest else next((k.value for k in call.keywords if k.arg == keyword), None)
    if any(type(a) is ast.Starred for a in rest) or any(k.arg is None for k in call.keywords):
        value = None
    return args[0].value, func.attr if keyword is not None else "setattr", value


def may_set_attributes(source: str, me: str, direct: bool = False, init: bool = True) -> bool:
    """Whether the text of a method may hold what the class attribute facts look for: a
    statement assigning to an attribute of `me` or to something in one (`me.x = `, `me.x += `,
    `me.x[i] = `, `me.x.y = `, `me.x: T`), `me.x.append(` / `extend(` / `insert(`,
    `register_buffer` / `register_parameter` / `add_state(` / `setattr(`, or `super`
    (`super().__init__(...)`).  It says yes to more than these (`me.x[i]` read, `me.x <= y`),
    never no to one of them.  A scan from each `me`: a pattern for it took 3 million
    instructions to compile, on the first file of every flake8 run, and saved nothing on a
    large tree's check (11.12 G against 11.07 G of instructions, every 10th file of
    transformers' `models/`).

    `direct`: only what sets an attribute of `me` itself (`me.x = `, `me.x: T = `, a tuple
    target, `me.x.append(`, the calls by name), what Walker._class_attr_facts reads; `init`:
    the method is a constructor (`super().__init__(...)` counts only there).  Of the 42,804
    methods of the corpus' classes, these say no to 5,204 more (most of them `forward`s that
    call `super().forward(...)` or write into `self.cache[k]`), and yes to all 14,406 that
    set an attribute."""
    if "register_" in source and ("register_buffer" in source or "register_parameter" in source):
        return True
    if "add_state(" in source or "setattr(" in source:
        return True
    if init and "super" in source:
        return True
    size = len(me)
    i = source.find(me)
    while i != -1:
        before = source[i - 1] if i else " "
        if not (before.isalnum() or before in "_.") and _sets_attribute_at(source, i, i + size, direct):
            return True
        i = source.find(me, i + 1)
    return False


def _starts_statement(source: str, start: int) -> bool:
    """`me.x: T` starts a statement (not `if me.training:`): only `(`, `;` or a compound
    statement's `:` before it on its line."""
    line = source[source.rfind("\n", 0, start) + 1:start].rstrip(" \t(")
    return not line or line.endswith((";", ":"))


def _sets_attribute_at(source: str, start: int, at: int, direct: bool = False) -> bool:
    """Whether `me` at `start` (its end at `at`) begins an attribute chain that may be assigned
    to, or appended to: what may_set_attributes looks for (`direct`: a chain of one attribute,
    assigned to or appended to, not `me.x.y = ` nor `me.x[i] = ` nor `me.x += `)."""
    n = len(source)
    k = _gap(source, at)
    if k >= n or source[k] != ".":
        return False
    while True:  # at a `.` of the chain
        k = _gap(source, k + 1)
        word = k
        while k < n and (source[k].isalnum() or source[k] == "_"):
            k += 1
        if k == word:
            return False
        k = _gap(source, k)
        if k >= n:
            return False
        c = source[k]
        if c == ".":
            after = _gap(source, k + 1)
            end = after
            while end < n and (source[end].isalnum() or source[end] == "_"):
                end += 1
            if source[after:end] in ("append", "extend", "insert"):
                call = _gap(source, end)
                if call < n and source[call] == "(":
                    return True
            if direct:
                return False
            continue
        if c == "[":
            return not direct
        if c == "=":
            return source[k + 1:k + 2] != "="
        if c in "-+*/%@&|^<>":  # an augmented assignment (or a comparison: `<=`)
            if direct:
                return False
            while k < n and source[k] in "-+*/%@&|^<>":
                k += 1
            return source[k:k + 1] == "=" and source[k + 1:k + 2] != "="
        if c == ":":
            return _starts_statement(source, start)
        if c == ",":  # a target of a tuple (`me.g, me.d = g, d`)
            return _in_target_list(source, start, k)
        return False


def _in_target_list(source: str, start: int, comma: int) -> bool:
    """Whether the chain at `start`, followed by a comma at `comma`, may be one of the targets of
    an assignment to a tuple: only names, attributes and commas before it on its line (after an
    opening parenthesis), and an `=` after it on the line that is no comparison."""
    line = source.rfind("\n", 0, start) + 1
    head = source[line:start].lstrip(" \t(")
    if head and not all(c.isalnum() or c in "_., \t" for c in head):
        return False
    end = source.find("\n", comma)
    rest = source[comma:end if end != -1 else len(source)]
    at = rest.find("=")
    while at != -1:
        if rest[at + 1:at + 2] != "=" and rest[at - 1] not in "=!<>":
            return True
        at = rest.find("=", at + 2)
    return False


def _gap(source: str, k: int) -> int:
    """After the blanks, line breaks, backslashes, closing parentheses and comments from `k`."""
    n = len(source)
    while k < n:
        c = source[k]
        if c in " \t\n\r\f\\)":
            k += 1
        elif c == "#":
            e = source.find("\n", k)
            k = n if e == -1 else e
        else:
            break
    return k


def _statements_and_calls(body: list):
    """Statements of a body, nested blocks included (not nested functions or classes), and
    the calls of expression statements: where `self.x = ...` and `self.register_*()` stand."""
    stack = list(body)
    pop, extend = stack.pop, stack.extend
    fields_of = _BLOCK_FIELDS
    while stack:
        node = pop()
        t = type(node)
        if t in _NESTED_DEFS:
            continue
        yield node
        if t is _Expr:
            yield node.value
            continue
        fields = fields_of.get(t)
        if fields is None:
            fields = fields_of[t] = tuple(f for f in ("body", "orelse", "finalbody", "handlers", "cases")
                                          if f in t._fields)
        for f in fields:
            sub = getattr(node, f, None)
            if type(sub) is list:
                extend(sub)


_NESTED_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_Expr = ast.Expr
_BLOCK_FIELDS: dict = {}  # statement type -> its fields that hold statements (_statements_and_calls)


__all__ = ["ClassInfo", "Domain", "Frame", "Scope", "State", "Summary", "Walker", "compatible"]
