"""What one module of the project tells the files that import it (project.py finds the modules).

A module's summary (`ModuleSummary`) is the facts of its module-level names (its table) and the
answers to what importing files asked of its functions and classes (what a function returns,
for given arguments, what a method returns, a class's attributes), each with the project files
it depended on.  It comes from the summary cache (summary_store.py) or from a walk of the
module with rules off, whose walker then answers on demand what the cache does not hold.  A
class or function of the module is a `ProjectEntity` in the importing file's facts.  Everything
crosses as plain data (portable.py): a file is analysed the same with a cold cache and a warm
one.
"""

from __future__ import annotations

import ast
import os
from contextlib import contextmanager

from . import lazytree
from .gradmode import apply_positions, leaves_grad_off, with_turns_grad_off, wraps_without_grad
from .astutil import (constant_defaults, decorator_names, def_stub, is_plain_method, is_property,
                      named_tuple_fields, own_nodes)
from .facts import CALLED, CLASS, FUNCTION, MODULE, OBJECT, SITE_CONSTANTS, UNKNOWN_FACT, Fact
from .evaluate import LazyAttrs
from .portable import export_fact, import_fact, well_formed
from .summaries import project_bases
from ..source import LazyPattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .project import Project


class ProjectEntity:
    """A function or class of another module of the project, as an importing file sees it.

    What it returns, what its methods return and its attributes are asked of its module's
    summary, which answers from the summary cache or from its walker, and always as facts that
    went through `portable` (the same answers cold and warm).  Made from a reference without
    reading its module: the module's summary is read when the entity is first asked something."""

    __slots__ = ("project", "module", "path", "name", "_summary", "_info", "_stub")

    def __init__(self, project: Project, module: str, path: str) -> None:
        self.project = project
        self.module = module
        self.path = path  # its name in the module, dotted for a class nested in a class
        self.name = path.rsplit(".", 1)[-1]
        self._summary = self._info = self._stub = None

    @property
    def summary(self) -> ModuleSummary | None:
        if self._summary is None:
            self._summary = self.project.summary(self.module)
        return self._summary

    @property
    def info(self) -> tuple:
        """(kind, line, parameter names, its defaults: astutil.constant_defaults, how a method
        binds: _info); (None, 0, None, (), "") when its module has no such definition."""
        if self._info is None:
            summary = self.summary
            found = summary.infos.get(self.path) if summary is not None else None
            self._info = found if found is not None else (None, 0, None, (), "")
        return self._info

    @property
    def where(self) -> str:
        summary = self.summary
        return f"{os.path.basename(summary.path) if summary is not None else self.module}:{self.info[1]}"

    @property
    def node(self):
        """A def with its parameters' names (what binding a call's arguments reads): the module's
        tree is not parsed for it when the summary came from the cache."""
        if self._stub is None:
            self._stub = def_stub(self.name, self.info[2] or ((), (), ()), self.info[1], self.info[3])
        return self._stub

    def _answer(self, question: tuple, compute, many: bool = False):
        summary = self.summary
        return summary.answer(question, compute, many) if summary is not None else None

    # functions
    def returns(self) -> Fact | None:
        return self._answer(("returns", self.path), lambda w, node: w.function_result(node, None))

    def returns_for(self, args: dict) -> Fact | None:
        """What it returns when called with parameters `args` ({name: fact}: values that mean
        the same in every module, an instance of a class of the project among them), walked by
        its own module's walker with the arguments as the question says them (so that a cached
        answer is the answer to that question)."""
        said = tuple(sorted((p, export_fact(f, _entity_ref)) for p, f in args.items()))

        def compute(walker, node):
            summary = self.summary
            given = {p: summary.local(import_fact(x, self.project.entity), walker) for p, x in said}
            return walker.given_result(node, None, given, lambda: walker.function_result(node, None))

        return self._answer(("for", self.path, said), compute)

    def relays(self) -> bool:
        """Whether this function (top-level) calls, by its text, a function of another project
        module in which a rule may report for what a call passes it (through.Through.relays_in:
        `def run(model, x): return to_np(model(x))`, `to_np` of utils.py calling `.numpy()`): a
        call of it hands what it is given on, and is asked as one of those (sinks_for).  Kept
        with the module's answers, depending on the modules it imports."""
        return self._answer(("relay", self.path), _relays, many="plain") == "1"

    def sinks_for(self, args: dict, constants: dict | None = None) -> tuple:
        """What the rules report inside this function when it is called with parameters `args`
        ({name: fact}, tensors that require grad) and not without them: ((code, line, how), ...),
        as strings (`how`: "p" where what is reported is a parameter of a module passed).  `constants`: {name: truth} of the parameters the call gives a literal
        (astutil.call_constants): a branch that needs the other truth is not where the call's
        arguments go.  Found by `through.Through.check`, which the project carries (the rules
        sit above this layer); () without it."""
        said = tuple(sorted((p, export_fact(f, _no_ref)) for p, f in args.items()))
        fixed = tuple(sorted((p, "1" if t else "0") for p, t in (constants or {}).items() if p not in args))

        def compute(walker, node):
            through = self.project.through
            if through is None:
                return ()
            given = {p: _passed(import_fact(x, self.project.entity)) for p, x in said}
            given.update((p, UNKNOWN_FACT.but(tags=frozenset({SITE_CONSTANTS[t == "1"]}))) for p, t in fixed)
            return tuple((code, str(line), how) for code, line, how in through.check(walker, node, given))

        found = self._answer(("sinks", self.path, said) + ((fixed,) if fixed else ()), compute, many="plain")
        return found if found is not None else ()

    def method_args_sinks_for(self, name: str, args: dict, constants: dict | None = None) -> tuple:
        """What the rules report inside method `name` of the class when a call passes it
        arguments `args` ({parameter: fact}, tensors that require grad: `logger.log(out)`) and
        not without them, the instance as the class makes it: ((code, line), ...), as strings
        (through.Through.check_method); `constants` as `sinks_for`'s."""
        said = tuple(sorted((p, export_fact(f, _no_ref)) for p, f in args.items()))
        fixed = tuple(sorted((p, "1" if t else "0") for p, t in (constants or {}).items() if p not in args))

        def compute(walker, node):
            through = self.project.through
            if through is None or not isinstance(node, ast.ClassDef):
                return ()
            given = {p: _passed(import_fact(x, self.project.entity)) for p, x in said}
            given.update((p, UNKNOWN_FACT.but(tags=frozenset({SITE_CONSTANTS[t == "1"]}))) for p, t in fixed)
            return tuple((code, str(line), how) for code, line, how in through.check_method(walker, node, name, {},
                                                                                            given))

        found = self._answer(("margs", self.path, name, said) + ((fixed,) if fixed else ()), compute, many="plain")
        return found if found is not None else ()

    def kept_parameters(self, name: str) -> tuple:
        """What method `name` of the class keeps of its parameters in the instance's attributes,
        surely (kept_parameters): ((parameter, attribute, "set" or "append"), ...), as strings
        (`def log(self, v): self.last = v`: (("v", "last", "set"),)).  Kept with the module's
        answers."""
        found = self._answer(("kept", self.path, name), lambda w, node: _kept_parameters_of(w, node, name),
                             many="plain")
        return found if type(found) is tuple else ()

    def method_sinks_for(self, name: str, attrs: dict) -> tuple:
        """What the rules report inside method `name` of the class when the instance's
        attributes `attrs` ({attr: fact}, torch modules and tensors that require grad) are what
        its constructor was passed (`Trainer(net)`), and not with the class's own: ((code,
        line), ...), as strings (through.Through.check_method); () without it."""
        said = tuple(sorted((a, export_fact(f, _no_ref)) for a, f in attrs.items()))

        def compute(walker, node):
            through = self.project.through
            if through is None or not isinstance(node, ast.ClassDef):
                return ()
            given = {a: import_fact(x, self.project.entity) for a, x in said}
            return tuple((code, str(line), how) for code, line, how in through.check_method(walker, node, name,
                                                                                            given))

        found = self._answer(("msinks", self.path, name, said), compute, many="plain")
        return found if found is not None else ()

    def gan_helper(self, method: str = "", constants: tuple = ()) -> tuple:
        """What the GAN domain finds this function (its method `method`, for a class) does:
        returns generator output it makes, returns a discriminator applied to its parameters,
        takes a discriminator step on them (gan.helper_of: plain data); ("", (), ()) when
        nothing.  `constants`: ((parameter, truth), ...) of the flags it tests that a call
        leaves to literals (`d_loss(netD, real, fake)` of `def d_loss(..., detach_fake=True)`):
        what it does then."""
        question = ("gan", self.path, method) if method else ("gan", self.path)
        if constants:
            question = (*question, "const", *(f"{p}={int(t)}" for p, t in constants))
        found = self._fresh_walk(question, lambda w, node: _gan_helper(w, node, method, constants))
        return found if type(found) is tuple and len(found) == 3 else ("", (), ())

    def gan_passes(self, method: str = "", constants: tuple = ()) -> tuple | None:
        """The parameters of this function (of its method `method`, for a class) whose values
        reach what it returns, as the GAN domain follows generator output (gan.passes_of): a
        tuple of names; None when that is not known.  `constants`: as gan_helper's."""
        question = ("gan_passes", self.path, method)
        if constants:
            question = (*question, "const", *(f"{p}={int(t)}" for p, t in constants))
        found = self._fresh_walk(question, lambda w, node: _gan_passes(w, node, method, constants))
        return found[1:] if type(found) is tuple and found[:1] == ("1",) else None

    def _fresh_walk(self, question: tuple, compute):
        """The answer to `question`, computed by a fresh walk of the module (`compute`), or None
        while the same question is being asked (through other modules)."""
        # Each such answer is a fresh walk (gan.helper_of), which memoises nothing: a helper that
        # calls back into one being asked (through other modules) reads as nothing there, and
        # what is computed meanwhile depends on which was asked first (not kept).
        key = (self.module, *question)
        asking = self.project.asking
        if key in asking:
            self.project.taint()
            return None
        asking.add(key)
        try:
            return self._answer(question, compute, many="plain")
        finally:
            asking.discard(key)

    # classes
    def method_where(self, name: str) -> str | None:
        """`file.py:line` of method `name` where the class itself defines it (None: it does
        not, or inherits it)."""
        found = self._member_info(name)
        return f"{os.path.basename(self.summary.path)}:{found[1]}" if found is not None and found[0] == FUNCTION \
            else None

    def _member_info(self, name: str) -> tuple | None:
        """The definition info (_info) of `name` where the class itself defines it, else None."""
        summary = self.summary
        return summary.infos.get(f"{self.path}.{name}") if summary is not None else None

    def makes_instance(self, name: str) -> bool:
        """Whether method `name` of the class is a factory: a class method (or a static method)
        the class itself defines, every `return` of which calls the class (`return cls(...)`,
        `return Net(...)`).  What it returns is an instance of the class, told without walking
        it (the other class methods of another module's classes are not followed:
        `Config.from_dict(d)` would walk half a library)."""
        return self._answer(("factory", self.path, name), lambda w, node: _factory(node, name), many="plain") == "1"

    def method_return(self, name: str, hint: tuple | None = None) -> Fact | None:
        return self._answer(("method", self.path, name, hint), lambda w, node: w.method_result(node, name, hint))

    def method_stub(self, name: str):
        """A def with the parameters of method `name`, where the class itself defines it (what
        binding a call's arguments reads), else None."""
        found = self._member_info(name)
        if found is None or found[0] != FUNCTION or not found[2]:
            return None
        stub = def_stub(name, found[2], found[1], found[3])
        if found[4]:  # (a static or class method: astutil.is_plain_method reads its decorator)
            stub.decorator_list = [ast.Name(id=found[4], ctx=ast.Load())]
        return stub

    def method_owner(self, name: str) -> ProjectEntity | None:
        """The class of the project whose method `name` an instance of this class runs: itself
        where it defines `name`, else the nearest of its bases that does, of its module or of
        another (`class MyLoss(BaseGANLoss)` that inherits `d_loss` from base.py); None where none
        does.  Asked of the class's module only where the class does not define it itself (and
        kept with the module's answers), as a reference ((module, path): portable)."""
        found = self._member_info(name)
        if found is not None:
            return self if found[0] == FUNCTION else None
        ref = self._answer(("mowner", self.path, name), lambda w, node: self._method_owner(w, node, name),
                           many="plain")
        return self.project.entity(ref) if type(ref) is tuple and len(ref) == 2 else None

    def _method_owner(self, walker, node, name: str) -> tuple:
        info = walker.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None
        if info is None:
            return ()
        func, owner = info.method(name)
        if func is not None:
            ref = self.summary._ref(owner.node) if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            return ref if ref is not None else ()
        for base in project_bases(info):
            found = base.method_owner(name)
            if found is not None:
                return (found.module, found.path)
        return ()

    def is_static(self, name: str) -> bool:
        """Whether the class itself defines `name` as a static method (`@staticmethod`)."""
        found = self._member_info(name)
        return found is not None and found[0] == FUNCTION and found[4] == "staticmethod"

    def is_property(self, name: str) -> bool:
        """Whether the class itself defines `name` as a property (astutil.is_property)."""
        found = self._member_info(name)
        if found is None or found[0] != FUNCTION:
            return False
        return self._answer(("property", self.path, name), lambda w, node: _is_property(w, node, name),
                            many="plain") == "1"

    def method_return_for(self, name: str, attrs: dict, args: dict) -> Fact | None:
        """What method `name` of the class returns on an instance whose attributes `attrs`
        ({attr: fact}) are what its constructor call passed (`Trainer(net)`: `self.model` is
        `net`), called with parameters `args` ({name: fact}); both as `returns_for` says them.
        Walked by the class's module's walker with the instance and the arguments given; the
        method's own result (`method_return`) where it is not a method of the instance the
        class defines."""
        said_attrs = tuple(sorted((a, export_fact(f, _entity_ref)) for a, f in attrs.items()))
        said_args = tuple(sorted((p, export_fact(f, _entity_ref)) for p, f in args.items()))

        def compute(walker, node):
            generic = lambda: walker.method_result(node, name)  # noqa: E731
            info = walker.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None
            func = info.method(name)[0] if info is not None else None
            positional = (func.args.posonlyargs + func.args.args) if func is not None else ()
            summary, entity = self.summary, self.project.entity
            if func is not None and said_args and not is_plain_method(func):
                # (A static method: the arguments are all it is given; a class method: and the
                # class.)
                given = {p: summary.local(import_fact(x, entity), walker) for p, x in said_args}
                return walker.given_result(func, info, given, generic)
            if not positional or not is_plain_method(func) or info.self_fact is None:
                return generic()
            given = {p: summary.local(import_fact(x, entity), walker) for p, x in said_args}
            if said_attrs:
                own = info.self_fact.attrs
                merged = dict(own.items()) if own is not None else {}
                handed = {a: summary.local(import_fact(x, entity), walker) for a, x in said_attrs}
                merged.update(handed)
                # (What the constructor call handed it, as an instance made in this module
                # holds it: walker.handed_frozen.)
                given[positional[0].arg] = info.self_fact.but(attrs=LazyAttrs(lambda: merged, node, lambda: handed))
            return walker.given_result(func, info, given, generic, key=said_attrs)

        return self._answer(("mfor", self.path, name, said_attrs, said_args), compute)

    def self_calls(self, name: str) -> tuple:
        """The methods that method `name` of the class calls on its instance, itself or through
        the class's other methods (`self.encode(x)`; "forward" for `self(x)`): those a subclass
        may replace, changing what it returns (summaries.Summaries._as_inherited)."""
        found = self._answer(("selfcalls", self.path, name), lambda w, node: _self_calls(w, node, name), many="plain")
        return found if type(found) is tuple else ()

    def result_saving_params(self) -> tuple:
        """The parameters whose value the function returns through an operation that saves
        its result (saved.result_saving_params: `return torch.sigmoid(x)`); () when none."""
        found = self._answer(("saves", self.path), _saving_params, many="plain")
        return found if type(found) is tuple else ()

    def forward_saves_result(self) -> bool:
        """Whether the class's `forward` returns what an operation that saves its result makes
        (saved.result_saving_params: `return torch.sigmoid(self.fc(x))`)."""
        return self._answer(("fsaves", self.path), _forward_saves, many="plain") == "1"

    def method_steps(self, name: str) -> bool:
        """Whether method `name` of the class steps an optimizer (snapshots.steps_optimizer: by
        its text, and the methods and functions of its module it calls): asked of the class that
        defines it, itself or the base it inherits it from, of its module or of another (`class
        Trainer(BaseTrainer)` in trainers.py, `fit` in base_trainer.py: method_owner)."""
        owner = self.method_owner(name)
        return owner is not None and owner._answer(
            ("steps", owner.path, name), lambda w, node: _steps(w, node, name), many="plain") == "1"

    def steps(self) -> bool:
        """Whether the function steps an optimizer (snapshots.steps_optimizer: by its text, and
        the functions and methods of its module it calls)."""
        return self._answer(("fsteps", self.path), _function_steps, many="plain") == "1"

    def state_loads(self) -> tuple:
        """((parameter, attribute path, the parameter it loads or ""), ...) of the function's
        `p.load_state_dict(s)` on its parameters (snapshots.state_loads)."""
        summary = self.summary
        found = summary.answer_if_mentioned(("floads", self.path), (b"load_state_dict",), _state_loads) \
            if summary is not None else None
        return found if type(found) is tuple else ()

    def steps_only(self) -> tuple:
        """(the parameters whose optimizers the function steps, where it steps no other and
        changes nothing else in place, else empty; whether it names `requires_grad`)
        (snapshots.stepped_only)."""
        found = self._answer(("fstepsonly", self.path), _steps_only, many="plain")
        if type(found) is not tuple or len(found) != 2:
            return frozenset(), True
        return frozenset(found[0]), found[1] == "1"

    def leaves_grad_off(self) -> bool:
        """Whether a call of the function turns grad off for what follows it
        (gradmode.leaves_grad_off)."""
        summary = self.summary
        return summary is not None and summary.answer_if_mentioned(
            ("grad-left-off", self.path), (b"set_grad_enabled",), _grad_off_answer(leaves_grad_off)) == "1"

    def wraps_without_grad(self) -> bool:
        """Whether the function is a decorator that runs what it decorates with grad off
        (gradmode.wraps_without_grad)."""
        summary = self.summary
        return summary is not None and summary.answer_if_mentioned(
            ("nograd-wrap", self.path), (b"no_grad", b"inference_mode"), _grad_off_answer(wraps_without_grad)) == "1"

    def with_turns_grad_off(self) -> bool:
        """Whether `with` a call of the function or the class runs its body with grad off
        (gradmode.with_turns_grad_off)."""
        summary = self.summary
        return summary is not None and summary.answer_if_mentioned(
            ("nograd-with", self.path), (b"no_grad", b"inference_mode", b"set_grad_enabled"),
            _grad_off_answer(with_turns_grad_off)) == "1"

    def snapshot_return(self) -> tuple:
        """What of a parameter the function returns without copying a tensor: (kind, parameter,
        steps) (snapshots.snapshot_return: `def snapshot(m): return m.state_dict()`, `def
        to_numpy(t): return t.detach().cpu().numpy()`); () when nothing."""
        found = self._answer(("snapret", self.path), _snapshot_return, many="plain")
        return found if type(found) is tuple and len(found) == 3 else ()

    def method_keeps(self, name: str) -> tuple:
        """What method `name` of the class keeps of what it is handed (snapshots.method_keeps:
        `self.best_state = model.state_dict()`; a constructor's `self.params = {n: p.data for n, p
        in model.named_parameters()}`): ((positional-only, positional (the instance
        first), keyword-only parameter names), ((parameter, attribute, line), ...)); () when
        nothing."""
        found = self._answer(("keeps", self.path, name), lambda w, node: _keeps(w, node, name), many="plain")
        return found if type(found) is tuple and len(found) == 2 else ()

    def method_reads(self, name: str) -> tuple:
        """The attributes of the instance whose values method `name` of the class reads as a
        snapshot's use does (snapshots.read_attributes: `model.load_state_dict(self.best_state)`
        in an early stopper's `restore(model)`), asked of the class that defines it (itself or a
        base: method_owner); () when none.  Kept with the module's answers."""
        owner = self.method_owner(name)
        found = owner._answer(("reads", owner.path, name), lambda w, node: _reads(w, node, name), many="plain") \
            if owner is not None else None
        return found if type(found) is tuple else ()

    def inplace_parameters(self) -> tuple:
        """((parameter, how), ...) the function writes into in place whenever it is called
        (saved.inplace_parameters)."""
        found = self._answer(("inplace", self.path), _inplace_parameters, many="plain")
        return found if type(found) is tuple else ()

    def constructor_freezes(self) -> bool:
        """Whether the class's constructor freezes every parameter of what it makes
        (walker.freezes_self)."""
        return self._answer(("freezes", self.path), _constructor_freezes, many="plain") == "1"

    def made_frozen(self) -> bool:
        """Whether the only parameters the class makes are made frozen (walker.made_frozen)."""
        return self._answer(("madefrozen", self.path), _made_frozen, many="plain") == "1"

    def enables_grad(self) -> bool:
        """Whether this function is decorated `@torch.enable_grad()` (gradmode.enables_grad): a
        call of it computes with grad on whatever the caller's mode."""
        return self._answer(("egrad", self.path), _enables_grad, many="plain") == "1"

    def named_tuple_fields(self) -> tuple | None:
        """The fields, in order, of this class where it is a `NamedTuple` (astutil.
        named_tuple_fields), else None."""
        found = self._answer(("ntfields", self.path), _named_tuple_fields, many="plain")
        return tuple(found.split(",")) if type(found) is str and found and found != "-" else None

    def frozen_positions(self) -> frozenset:
        """The positions of the positional arguments a call of this function (or of this class:
        its constructor's, past `self`) freezes at the top level of its body, or (position,
        flag) under a flag (walker.frozen_positions); empty where none, or not known."""
        found = self._answer(("frozen_args", self.path), _frozen_positions, many="plain")
        if type(found) is not str or not found:
            return frozenset()
        out = set()
        for item in found.split(","):
            at, _, flag = item.partition(":")  # ("1:freeze": frozen under that flag)
            if at.isdigit():
                out.add((int(at), flag) if flag else int(at))
        return frozenset(out)

    def method_freezing(self, name: str) -> str:
        """Whether method `name` of the class (or of a base) freezes its instance
        (walker.method_freezing: "1", "0", or "" where no class defines it)."""
        found = self._answer(("mfreezes", self.path, name), lambda w, node: _method_freezing(w, node, name),
                             many="plain")
        return found if found in ("1", "0") else ""

    def overrides_call(self) -> bool:
        """Whether the class, or a base of the project, defines `__call__`
        (summaries.overrides_call)."""
        return self._answer(("calls", self.path), _overrides_call, many="plain") == "1"

    def tested_parameters(self) -> tuple:
        """The parameters the function tests as they are (summaries.Summaries.tested_parameters:
        `if frozen:`), which a call's literal steers."""
        found = self._answer(("tested", self.path), _tested_parameters, many="plain")
        return found if type(found) is tuple else ()

    def paramfree_needs(self) -> tuple | None:
        """The constructor's parameters that hold every parameter a torch module class's
        instance may have (walker._paramfree_needs: `self.inner = inner`, nothing else); None
        where it may make others."""
        found = self._answer(("pfneeds", self.path), _paramfree_needs, many="plain")
        return found if type(found) is tuple else None

    def constructor(self) -> tuple | None:
        """What a subclass in another module needs of the class's constructor (walker.
        constructor_info): its parameters, and the attributes it sets to them."""
        return self._answer(("constructor", self.path), lambda w, node: w.constructor_info(node), many="plain")

    def added_parameters(self, method: str) -> tuple:
        """What method `method` of the class adds to attributes of the instance (a meter's
        `update`: accumulators.meter_of): ((positional-only, positional, keyword-only parameter
        names), ((parameter, attribute, line), ...)); () when nothing, or when the class
        back-propagates."""
        found = self._answer(("adds", self.path, method), lambda w, node: _meter(w, node, method), many="plain")
        return found if found is not None else ()

    def attrs(self) -> dict:
        """The attributes of the class (`self.<attr>` in its methods, what it inherits)."""
        found = self._answer(("attrs", self.path), _class_attrs, many=True)
        return found if found is not None else {}


def _no_ref(node):
    return None


def _entity_ref(node):
    """The reference of a class or function of a module of the project (what an instance of it
    keeps), None for anything else."""
    return (node.module, node.path) if type(node) is ProjectEntity else None


def _passed(f: Fact) -> Fact:
    """A fact a call passes, marked as the call's (evaluate.narrowings: a branch that call does
    not take gets nothing of it)."""
    el = f.element
    if el is not None:
        return f.but(tags=f.tags | CALLED, element=el.but(tags=el.tags | CALLED))
    return f.but(tags=f.tags | CALLED)


def _self_calls(walker, node, name: str) -> tuple:
    info = walker.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None
    if info is None:
        return ()
    found: set = set()
    todo, seen = [name], set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        func = info.method(m)[0]
        if func is None or not func.args.args:
            continue
        me = func.args.args[0].arg
        for n in ast.walk(func):
            if type(n) is ast.Call:
                f = n.func
                if type(f) is ast.Name and f.id == me:
                    called = "forward"
                elif type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == me:
                    called = f.attr
                else:
                    continue
                found.add(called)
                todo.append(called)
    found.discard(name)
    return tuple(sorted(found))


def _is_property(walker, node, name: str) -> str:
    info = walker.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None
    func = info.method(name)[0] if info is not None else None
    return "1" if func is not None and is_property(func) else "0"


def _factory(node, name: str) -> str:
    """ProjectEntity.makes_instance: "1" or "0"."""
    if not isinstance(node, ast.ClassDef):
        return "0"
    func = None
    for item in node.body:  # (the last definition of the name is the method)
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            func = item
    if type(func) is not ast.FunctionDef:
        return "0"
    decorators = decorator_names(func)
    makers = {node.name}
    if "classmethod" in decorators:
        first = [*func.args.posonlyargs, *func.args.args]
        if first:
            makers.add(first[0].arg)
    elif "staticmethod" not in decorators:
        return "0"
    returns = [n for n in own_nodes(func.body) if type(n) is ast.Return]
    made = returns and all(type(r.value) is ast.Call and type(r.value.func) is ast.Name and r.value.func.id in makers
                           for r in returns)
    return "1" if made else "0"


def _kept_parameters_of(walker, node, name: str) -> tuple:
    from .walker import surely_kept

    info = walker.classes.get(id(node)) if isinstance(node, ast.ClassDef) else None
    method = info.method(name)[0] if info is not None else None
    return surely_kept(info, method) if method is not None else ()


def _relays(walker, node) -> str:
    through = walker.project.through if walker.project is not None else None
    if through is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    return "1" if through.relays_in(walker, node) else ""


def _inplace_parameters(walker, node) -> tuple:
    return walker.inplace_parameters_of(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()


def _constructor_freezes(walker, node) -> str:
    return "1" if isinstance(node, ast.ClassDef) and walker.constructor_freezes(node) else ""


def _made_frozen(walker, node) -> str:
    return "1" if isinstance(node, ast.ClassDef) and walker.made_frozen(node) else ""


def _tested_parameters(walker, node) -> tuple:
    return tuple(sorted(walker.tested_parameters(node))) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else ()


def _paramfree_needs(walker, node):
    needs = walker._paramfree_needs(node) if isinstance(node, ast.ClassDef) else None
    return tuple(sorted(needs)) if needs is not None else "-"


def _enables_grad(walker, node) -> str:
    from .gradmode import enables_grad

    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.decorator_list:
        return ""
    state = walker.module_frame.state if getattr(walker, "module_frame", None) is not None else None
    return "1" if enables_grad(node, lambda n: walker.qualname(n, state)) else ""


def _named_tuple_fields(walker, node) -> str:
    fields = named_tuple_fields(node) if isinstance(node, ast.ClassDef) else None
    return ",".join(fields) if fields else "-"


def _frozen_positions(walker, node) -> str:
    from .walker import frozen_positions

    if isinstance(node, ast.ClassDef):
        info = walker.classes.get(id(node))
        init = info.method("__init__")[0] if info is not None else None
        if not isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)) or not is_plain_method(init):
            return ""
        node, skip = init, 1
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        skip = 0
    else:
        return ""
    if walker.lines is not None and "requires_grad" not in walker.source_of(node):
        return ""
    return ",".join(sorted(f"{i[0]}:{i[1]}" if type(i) is tuple else str(i) for i in frozen_positions(node, skip)))


def _method_freezing(walker, node, name: str) -> str:
    return walker.method_freezing(node, name) if isinstance(node, ast.ClassDef) else "0"


def _overrides_call(walker, node) -> str:
    return "1" if isinstance(node, ast.ClassDef) and walker.overrides_call(node) else ""


def _saving_params(walker, node) -> tuple:
    from .saved import result_saving_params

    return result_saving_params(walker, node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()


def _forward_saves(walker, node) -> str:
    from .saved import forward_saves

    return "1" if forward_saves(walker, node) else ""


def _steps(walker, node, name: str) -> str:
    from .snapshots import steps_optimizer  # (a domain: imported where a file asks)

    info = walker.classes.get(id(node))
    method = info.method(name)[0] if info is not None else None
    return "1" if method is not None and steps_optimizer(walker, method, {}) else ""


def _function_steps(walker, node) -> str:
    from .snapshots import steps_optimizer  # (a domain: imported where a file asks)

    return "1" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and steps_optimizer(walker, node, {}) \
        else ""


def _state_loads(walker, node) -> tuple:
    from .snapshots import state_loads  # (a domain: imported where a file asks)

    return state_loads(node) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()


def _steps_only(walker, node) -> tuple:
    from .snapshots import stepped_only  # (a domain: imported where a file asks)

    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or walker.lines is None:
        return (), ""
    stepped, thaws = stepped_only(walker, node)
    return tuple(sorted(stepped)), "1" if thaws else ""


def _grad_off_answer(test):
    """An answer of `test` (gradmode.wraps_without_grad, with_turns_grad_off) of a def or a
    class, with the qualified names its module's imports give: "1" or ""."""
    def compute(walker, node) -> str:
        frame = getattr(walker, "module_frame", None)
        return "1" if frame is not None and test(node, lambda n: walker.qualname(n, frame.state)) else ""

    return compute


def _keeps(walker, node, name: str) -> tuple:
    from .snapshots import method_keeps  # (a domain: imported where a file asks)

    info = walker.classes.get(id(node))
    method = info.method(name)[0] if info is not None else None
    kept = method_keeps(walker, node, method) if method is not None else ()
    if not kept:
        return ()
    a = method.args
    names = tuple(tuple(x.arg for x in group) for group in (a.posonlyargs, a.args, a.kwonlyargs))
    return names, tuple((param, attr, str(line)) for param, attr, line in kept)


def _reads(walker, node, name: str) -> tuple:
    from .snapshots import read_attributes  # (a domain: imported where a file asks)

    info = walker.classes.get(id(node))
    method = info.method(name)[0] if info is not None else None
    return read_attributes(method) if method is not None else ()


def _snapshot_return(walker, node) -> tuple:
    from .snapshots import snapshot_return  # (a domain: imported where a file asks)

    return (snapshot_return(node) or ()) if type(node) is ast.FunctionDef else ()


def _gan_helper(walker, node, method: str = "", constants: tuple = ()) -> tuple:
    from .gan import helper_of  # (a domain: imported where a GAN file asks)

    return helper_of(walker, node, method, constants)


def _gan_passes(walker, node, method: str, constants: tuple = ()) -> tuple:
    from .gan import passes_of  # (a domain: imported where a GAN file asks)

    return passes_of(walker, node, method, constants)


def _meter(walker, node, method: str) -> tuple:
    from .accumulators import meter_of  # (a domain: imported where a file asks of a meter)

    info = walker.classes.get(id(node))
    found = meter_of(walker, info, method) if info is not None else None
    if found is None:
        return ()
    func, added = found
    a = func.args
    names = tuple(tuple(x.arg for x in group) for group in (a.posonlyargs, a.args, a.kwonlyargs))
    return names, tuple((param, attr, str(line)) for param, (attr, line) in sorted(added.items()))


def _class_attrs(walker, node):
    info = walker.classes.get(id(node))
    attrs = info.self_fact.attrs if info is not None and info.self_fact is not None else None
    return dict(attrs.items()) if attrs is not None else None


def _definitions(tree: ast.Module, lambdas: dict) -> tuple:
    """({path: def}, {id(def): path}) of the classes and functions another module can name: at
    the module's top level and in the bodies of its classes, also under `if`, `try`, `with` and
    loops there (`if is_available(): class Model: ...`), and a lambda a name is bound to there
    (`to_numpy = lambda t: ...`: the def its walker made of it, `lambdas` by the lambda's id).
    A name defined twice is asked of its first definition."""
    defs: dict = {}
    paths: dict = {}
    todo = [("", tree.body)]
    while todo:
        prefix, body = todo.pop()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                path = prefix + node.name
                defs.setdefault(path, node)
                paths[id(node)] = path
                if isinstance(node, ast.ClassDef):
                    todo.append((path + ".", node.body))
            elif type(node) is ast.Assign and type(node.value) is ast.Lambda:
                made = lambdas.get(id(node.value))
                if made is not None and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                    path = prefix + node.targets[0].id
                    defs.setdefault(path, made)
                    paths[id(made)] = path
            elif isinstance(node, ast.stmt):
                for field in ("body", "orelse", "finalbody"):
                    sub = getattr(node, field, None)
                    if type(sub) is list:
                        todo.append((prefix, sub))
                for h in getattr(node, "handlers", ()):
                    todo.append((prefix, h.body))
                for case in getattr(node, "cases", ()):
                    todo.append((prefix, case.body))
    return defs, paths


def _info(node, top: bool) -> tuple:
    """(kind, line, parameter names, defaults, binding) of a definition, as its entity keeps
    them.  The defaults of a function at the module's top level (the calls of another module
    whose literal arguments count are of those: walker.call_sinks) or of a method (a freeze
    helper's flag left to its default: `self.set_requires_grad(self.netG)`).  The binding only of a
    method: "staticmethod" or "classmethod" where it is one (a call binds its arguments from the
    first parameter, or from the second to the class), else ""."""
    if isinstance(node, ast.ClassDef):
        return (CLASS, node.lineno, None, (), "")
    a = node.args
    binding = ""
    if not top and node.decorator_list:
        decorators = decorator_names(node)
        binding = "staticmethod" if "staticmethod" in decorators else "classmethod" if "classmethod" in decorators \
            else ""
    return (FUNCTION, node.lineno, (tuple(x.arg for x in a.posonlyargs), tuple(x.arg for x in a.args),
                                    tuple(x.arg for x in a.kwonlyargs)),
            constant_defaults(node) if a.defaults or a.kw_defaults else (), binding)


class ModuleSummary:
    """What one module of the project defines: the facts of its module-level names (its
    `table`), and answers to what importing files asked of its functions and classes, each with
    the project files it depended on.  Either from the summary cache, or from a walk of its
    module-level code with rules off (the walker then answers what the cache does not hold)."""

    def __init__(self, project: Project, name: str, path: str, digest: str, data: bytes | None = None) -> None:
        self.project = project
        self.name = name
        self.path = path
        self.digest = digest  # content_hash of its bytes
        self.deps: dict = {path: digest}  # it and the project modules its summary read
        self.table: dict = {}  # module-level name -> exported fact
        self.infos: dict = {}  # path of a definition -> (kind, line, parameter names)
        self.answers: dict = {}  # question -> (exported answer, deps)
        self.table_deps: dict = {}  # what the table depended on (the module walk)
        self._unkept: set = set()  # answers computed after a budget of walks ran out: not cached
        self.dirty = False  # answers or a table the cache does not have yet
        self.kept_table = True  # the table may go to the cache (Project.computing)
        self._busy = 0  # questions being answered by its walker
        self._data = data  # the file's bytes, until its walker is made (None: read then)
        self._walker = None
        self._defs: dict | None = None  # path -> def in the walker's tree
        self._paths: dict = {}  # id(def) -> path
        self._facts: dict = {}  # name -> imported fact
        self._imported: dict = {}  # question -> imported answer

    # ------------------------------------------------------------------ built here

    @classmethod
    def build(cls, project: Project, name: str, path: str, digest: str, data: bytes) -> ModuleSummary | None:
        """Parse and walk the module (None: it cannot be read as Python)."""
        summary = cls(project, name, path, digest, data)
        frame = project.computing()
        try:
            if summary._make_walker() is None:
                return None
        finally:
            project._frames.pop()
        walker = summary._walker
        env = walker.module_frame.state.env
        summary.infos = {p: _info(d, "." not in p) for p, d in summary._defs.items()}
        for attr, f in env.items():
            summary.table[attr] = summary._export(summary._exported_name(attr, f, env))
        summary.table_deps = dict(summary.deps)
        summary.kept_table = not frame[0]
        summary.dirty = summary.kept_table
        return summary

    def _make_walker(self):
        from ..source import DecodeError, LineIndex, decode  # (the source layer sits below)
        from .walker import Walker

        project = self.project
        data = self._data
        if data is None:  # (from the summary cache, its file known by its stamp)
            data = project.bytes_of(self.path, self.digest)
            if data is None:
                return None  # changed since: its questions are not answered
        try:
            text = decode(data).text
            tree = lazytree.parse(text)
        except (DecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        package = os.path.basename(self.path) == "__init__.py"
        walker = Walker(tree, [], _Context(LineIndex(text), project.options), project=project, module=self.name,
                        module_is_package=package)
        project._building.append(self.deps)
        try:
            try:
                walker.run_module()
            except lazytree.Reparse:  # the layout was wrong (lazytree.py): from a plain parse
                walker.release()
                tree = ast.parse(text)
                walker = Walker(tree, [], _Context(LineIndex(text), project.options), project=project,
                                module=self.name, module_is_package=package)
                walker.run_module()
        except RecursionError:
            return None
        finally:
            project._building.pop()
        self._walker = walker
        self._data = None
        self._defs, self._paths = _definitions(tree, walker._lambda_defs)
        project.built += 1
        return walker

    def _exported_name(self, attr: str, f: Fact, env: dict) -> Fact:
        """The fact of module-level name `attr` as an importing file sees it: a class or function
        of the module as its entity, said where it is defined; an instance with its class (its
        `forward` says whether what it returns requires grad), when that class can be named."""
        if f.kind in (CLASS, FUNCTION) and isinstance(f.node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            path = self._paths.get(id(f.node))
            if path is None:
                return f.but(node=None)
            where = f"{os.path.basename(self.path)}:{f.node.lineno}"
            if f.kind == CLASS:
                module = "nn_module_class" in f.tags
                described = f"{f.node.name}: {'an nn.Module' if module else 'a class'}, {where}"
            else:
                described = f"{f.node.name}(), {where}"
            return f.but(tags=f.tags | {"defined:" + described})
        if f.kind in (MODULE, OBJECT):
            if f.node is not None and self._ref(f.node) is None:
                f = f.but(node=None)  # an instance of a class made in a function: no reference to it
            return f.but(tags=f.tags | {f"defined:{attr}, {os.path.basename(self.path)}"}) if f.kind == MODULE else f
        return f if isinstance(f.node, ProjectEntity) or f.node is None else f.but(node=None)

    def local(self, f: Fact, walker) -> Fact:
        """`f`, an imported fact, as this module's walker knows it: an instance of one of its own
        classes has that class's def and attributes, as an instance it makes itself (not the
        entity, whose questions would come back to this walker while it is busy)."""
        node = f.node
        if (f.kind == MODULE or f.kind == OBJECT) and type(node) is ProjectEntity and node.module == self.name:
            info = walker.classes.get(id(self._defs.get(node.path)))
            if info is not None and info.self_fact is not None:
                return f.but(node=info.node, attrs=info.self_fact.attrs)
        return f

    def _ref(self, node):
        """The reference of a definition (of this module, or an entity of any module)."""
        if isinstance(node, ProjectEntity):
            return (node.module, node.path)
        path = self._paths.get(id(node))
        return (self.name, path) if path is not None else None

    def _export(self, f):
        return export_fact(f, self._ref)

    # ------------------------------------------------------------------ what importers ask

    def tree_of(self, text: str):
        """The tree this process parsed the module into, when it was parsed from `text` (None:
        read from the summary cache, or another text)."""
        walker = self._walker
        if walker is None or walker.lines is None or walker.lines.text != text:
            return None
        return walker.tree

    def fact(self, attr: str) -> Fact | None:
        """The fact of module-level name `attr` for an importing file (None: not defined)."""
        if attr in self._facts:
            return self._facts[attr]
        x = self.table.get(attr)
        f = None
        if x is not None:
            try:
                f = import_fact(x, self.project.entity)
            except (TypeError, ValueError, IndexError):
                f = UNKNOWN_FACT  # (a damaged cache entry: a table is checked when it is read)
        self._facts[attr] = f
        return f

    def answer_if_mentioned(self, question: tuple, needles: tuple, compute) -> str:
        """`answer(question, compute, "plain")`, but "" without a walker where the module's
        bytes hold none of `needles` (a decorator that runs what it decorates without grad names
        `no_grad`: most modules asked hold none, and making their walkers for it cost 1% of a
        large tree's check); that answer is kept as the others are."""
        if self._walker is not None or question in self._imported or question in self.answers \
                and self.project.unchanged(self.answers[question][1]):
            return self.answer(question, compute, "plain")  # (no walker to make for it)
        data = self._data if self._data is not None else self.project.bytes_of(self.path, self.digest)
        if data is not None and "." not in question[1]:
            # (Of a top-level function: its own lines, from its `def` at the margin to the next
            # line there; a docstring of the module that names `no_grad` does not count.)
            head = b"def " + question[1].encode() + b"("
            at = 0 if data.startswith(head) else data.find(b"\n" + head)
            if at != -1:
                end = _MARGIN_BYTES.search(data, at + 1 + len(head))
                data = data[at:end.start() if end is not None else len(data)]
        if data is not None and not any(n in data for n in needles):
            self.answers[question] = ("", {self.path: self.digest})
            self._imported[question] = ""
            self.dirty = True
            self.project._touch_deps({self.path: self.digest})
            return ""
        return self.answer(question, compute, "plain")

    def answer(self, question: tuple, compute, many: bool = False):
        """The answer to `question` about one of the module's definitions (`question[1]` is its
        path): from the cache when every file it depended on is unchanged, else computed by the
        walker (`compute(walker, def)`) and kept.  `many`: the answer is {name: fact}."""
        if question in self._imported:
            self.project._touch_deps(self.answers[question][1])
            return self._imported[question]
        project = self.project
        kept = self.answers.get(question)
        if kept is not None and project.unchanged(kept[1]):
            try:
                found = self._import(kept[0], many)
            except (TypeError, ValueError, IndexError):
                kept = None
            else:
                self._imported[question] = found
                project._touch_deps(kept[1])
                return found
        if self._busy:
            project.taint()  # its walker is in the middle of another question
        frame = project.computing()
        self._busy += 1
        try:
            with self.building():
                walker = self._walker or self._make_walker()
                node = self._defs.get(question[1]) if walker is not None else None
                if node is not None and not self._busy > 1:
                    walker.reset_budgets()
                result = compute(walker, node) if node is not None else None
        finally:
            self._busy -= 1
            project._frames.pop()
        keep = walker is not None and not walker.out_of_budget() and not frame[0] and self.kept_table
        if many == "plain":
            exported = result  # plain data: tuples of strings
        elif many:
            exported = None if result is None else tuple((k, self._export(v)) for k, v in result.items())
        else:
            exported = self._export(result)
        deps = dict(self.deps)
        self.answers[question] = (exported, deps)
        if keep:
            self.dirty = True
            self._unkept.discard(question)
        else:
            self._unkept.add(question)
        found = self._imported[question] = self._import(exported, many)
        return found

    def _import(self, exported, many):
        entity = self.project.entity
        if many == "plain":
            if exported is not None and not _plain(exported):
                raise ValueError("not an answer we wrote")
            return exported
        if many:
            if exported is None:
                return None
            if type(exported) is not tuple or not all(type(kv) is tuple and len(kv) == 2 and type(kv[0]) is str
                                                      and well_formed(kv[1]) for kv in exported):
                raise ValueError("not an answer we wrote")
            return {k: import_fact(v, entity) for k, v in exported}
        if not well_formed(exported):
            raise ValueError("not an answer we wrote")
        return import_fact(exported, entity)

    def call_facts(self, entity: ProjectEntity, local: str, params: tuple) -> list | None:
        """What each call of `entity` (a top-level function of another module, whose parameters
        are `params`: (positional names, keyword-only names)) by the name `local` in this module
        passes to its parameters, [{param: fact}, ...] as facts of the asking file; None where a
        call is not understood (one that passes `*args`, one the walk did not reach: in a class
        body, past a budget, or `local(` in a string).  From a walk, with rules off, of the
        module-level code and of the functions that make the calls, on a walker of its own (the
        summary's answers its questions as before)."""
        from ..source import word_positions
        from .summaries import call_positions
        from .walker import Walker

        walker = self._walker or self._make_walker()
        if walker is None:
            return None
        text = walker.lines.text
        positions = call_positions(text, local)
        if ".apply(" in text:
            positions = sorted(positions + apply_positions(text, local))  # (`net.apply(local)`)
        if not positions:
            return []
        project = self.project
        sites: dict = {}
        with self.building():
            survey = Walker(walker.tree, [], _Context(walker.lines, project.options), project=project,
                            module=self.name, module_is_package=os.path.basename(self.path) == "__init__.py")
            survey._recording = (entity, params, sites)
            try:
                survey.run_module()
                survey._survey(positions, None)
                if len(sites) != len(positions) or len(_outside_imports(text, word_positions(text, local))) \
                        != len(positions) or survey.out_of_budget() or any(f is None for _l, f in sites.values()):
                    return None  # (a call not walked or not understood, or the name used otherwise)
                return [{k: self._import(self._export(f), False) for k, f in facts.items()}
                        for _line, facts in sorted(sites.values(), key=lambda s: s[0])]
            except (RecursionError, lazytree.Reparse):
                return None
            finally:
                survey.release()

    @contextmanager
    def building(self):
        """While this module's walker works on demand, what it reads is its dependency too."""
        building = self.project._building
        building.append(self.deps)
        try:
            yield
        finally:
            building.pop()
        self.project.touched.update(self.deps)

    # ------------------------------------------------------------------ the cache

    def to_entry(self) -> dict:
        return {"path": self.path, "digest": self.digest, "name": self.name, "root": self.project.root,
                "deps": self.table_deps,
                "table": self.table, "infos": self.infos,
                "answers": {q: a for q, a in self.answers.items() if q not in self._unkept}}

    @classmethod
    def from_entry(cls, project: Project, name: str, path: str, digest: str, data: bytes, entry) -> ModuleSummary:
        if entry["name"] != name or entry["root"] != project.root:
            # Made for another project root (a shared --cache-dir): its references name modules
            # as that root does.
            raise ValueError("another project's summary")
        summary = cls(project, name, path, digest, data)
        table, infos, answers, deps = entry["table"], entry["infos"], entry["answers"], entry["deps"]
        # (The entry is as this code wrote it: the store's checksum says the bytes are, and its
        # folder's key names the version and, in a checkout, the code (cache.config_key).
        # Looking into each fact of the tables and each file every answer depends on cost a
        # tenth of a one-file check.  An answer's value is still checked as it is read:
        # ModuleSummary._import.)
        if not (type(table) is dict and type(infos) is dict and type(answers) is dict and type(deps) is dict):
            raise ValueError("not a summary we wrote")
        summary.table, summary.infos, summary.answers = table, infos, answers
        summary.table_deps = dict(deps)
        summary.deps = dict(deps)
        return summary


def _outside_imports(text: str, positions: list) -> list:
    """The offsets in `positions` not on a line that starts an import (`from m import x`)."""
    out = []
    for at in positions:
        line = text[text.rfind("\n", 0, at) + 1:at].lstrip()
        if not line.startswith(("import ", "from ")):
            out.append(at)
    return out


def _plain(x) -> bool:
    """Tuples (nested) of strings: a plain answer (ProjectEntity.constructor)."""
    return type(x) is str or type(x) is tuple and all(_plain(i) for i in x)


_MARGIN_BYTES = LazyPattern(rb"\n[^ \t\r\n#]")


class _Context:
    """The little of a rule context a summary walk needs (no rules run there)."""

    def __init__(self, lines, options) -> None:
        self.lines = lines
        self.options = options
        self.walker = None
        self.violations: list = []

    def short(self, node, limit: int = 40) -> str:
        s, e = self.lines.node_span(node)
        t = self.lines.text[s:e]
        return t if len(t) <= limit and "\n" not in t else "<expr>"
