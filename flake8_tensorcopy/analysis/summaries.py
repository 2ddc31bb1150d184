"""Summaries of the file's functions, methods and classes, for the walker (a mixin of it).

- What a function returns: `summary(func)` walks its body on demand with rules off, in a frame
  of its own (re-entrant: from inside an expression of another walk), memoised.  Calls of the
  file's functions, methods (`self.m()`, `obj.m()`) and modules whose `forward` is in the file
  take their value from it (evaluate.py asks `function_result` / `method_result`).
- What its parameters are: every call of a function of the file that the walker evaluates is
  recorded (`note_call`) with the facts of its arguments.  Before a function is walked to
  report, the functions that call it by name are walked first with rules off (a survey), so
  that all its call sites in the file are known; its parameters are then the join of what they
  pass (`parameter_facts`), tagged with the lines of the calls for messages.  A function that
  others may also call (a public name, a name used other than in a call) keeps "unknown" in
  the join where the call sites would make a parameter look harmless, and a parameter informed
  only by call sites is never a torch tensor "by flow" (a fix resting on it is unsafe).  A
  parameter every known call gives a literal of one truth (an argument, or a default it leaves:
  `cond=False`) is tagged so (facts.SITE_CONSTANTS); in a branch that needs the other truth
  (`if cond:`, the parameter never assigned), what the calls passed is unknown again
  (evaluate.narrowings): the hazard they show is not reached there.

- What one call returns: a call that passes arguments the function's summary did not assume
  (the summary's parameters are unknown, or what their annotations say) gets a walk of its
  own with those arguments (`call_result`, memoised per function and argument facts, within a
  budget and for functions of modest size): `double(w)` of a `w` that requires grad requires
  grad, `make(3, "cpu")` is on the host whatever `make(n, device)` returns elsewhere.

Call sites are found by text (`name(`): one search per function while few functions ask, then
one index of the whole file, so that the cost stays linear in the size of the file.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right

from .astutil import (BLOCKS, bind_arguments, body_span, call_constants, decorator_names, dotted_name, free_names,
                      is_plain_method, local_names, parameter_names)
from .facts import (CALL_CONSTANTS, DEVICE, MODULE, NAMED_PARAMS, OBJECT, OTHER, PARAMS, SEQ, SITE_CONSTANTS, TENSOR,
                    UNKNOWN, UNKNOWN_FACT, Device, Fact, Grad, join, join_all, must_grad, with_origins)
from ..source import LazyPattern, word_count
from .gradmode import apply_positions

_SUMMARY_BUDGET = 400  # summary walks per file (each function at most once)
_SURVEY_BUDGET = 200  # functions walked with rules off to find call sites
_CALL_BUDGET = 200  # walks of a function for the arguments of one call (per file)
_CALL_MAX_LINES = 80  # functions longer than this keep their summary's result at every call
# Facts that mean the same in another module's walker (no definitions of this file in them).
_PORTABLE = frozenset({TENSOR, OTHER, DEVICE, MODULE, OBJECT})
_DIRECT_SEARCHES = 24  # names searched for one by one before one index of every call of the file
_HARMLESS_DECORATORS = frozenset({"staticmethod", "classmethod", "torch.no_grad", "no_grad", "torch.inference_mode",
                                  "inference_mode", "torch.enable_grad", "functools.wraps"})


class Summary:
    """What a function does, as far as the walk of its body found out (domains add theirs)."""

    __slots__ = ("returns", "doms")

    def __init__(self, returns: Fact | None, doms: dict) -> None:
        self.returns = returns  # the join of the values it returns (None: it never returns one)
        self.doms = doms


class Summaries:
    """Mixed into the walker (which provides `_run_function`, `classes`, `functions`, `lines`,
    `tree`, `fact` and the frames)."""

    def _init_summaries(self) -> None:
        self._summaries: dict = {}
        self._summary_budget = _SUMMARY_BUDGET
        self._survey_budget = _SURVEY_BUDGET
        self._sites: dict = {}  # id(func) -> {id(call): (line, {param: Fact}, complete)}
        self._surveyed: dict = {}  # id(function) -> how many of its statements a survey walked
        self._surveying = 0
        self._walked: set = set()  # ids of the functions walked to report
        self._call_sites: CallSites | None = None  # the calls of the file, by name (call_positions)
        self._def_spans: tuple | None = None  # (starts, ends, defs) of every function of the file
        self._call_results: dict = {}  # (id(func), argument facts) -> Fact, or None while walked
        self._call_budget = _CALL_BUDGET
        # (entity, its parameter names, {id(call): (line, {param: Fact} or None)}): the calls of
        # a function of another module this walk records (module_summary.call_facts).
        self._recording = None

    def reset_budgets(self) -> None:
        """A fresh budget of walks: a project module's walker answers the questions of many files,
        each with the budget of one (so that what it answers does not depend on which files
        asked before)."""
        self._summary_budget = _SUMMARY_BUDGET
        self._survey_budget = _SURVEY_BUDGET
        self._call_budget = _CALL_BUDGET

    def out_of_budget(self) -> bool:
        """Whether a budget of walks ran out: what was computed since may say less than a walker
        with budget left would (the summary cache keeps no such answer)."""
        return self._summary_budget <= 0 or self._survey_budget <= 0 or self._call_budget <= 0

    # ------------------------------------------------------------------ return facts

    def summary(self, func, cls=None) -> Summary | None:
        """What `func` does, from a walk of its body with rules off (memoised; None while it
        is being computed, so that recursion terminates)."""
        key = id(func)
        if key in self._summaries:
            return self._summaries[key]
        if self._summary_budget <= 0:
            return None
        self._summary_budget -= 1
        self._summaries[key] = None
        cache = self._cache
        self._cache = {}
        try:
            frame = self._run_function(func, self.enclosing.get(id(func), self.module_scope), False, cls,
                                       dispatch=False)
        finally:
            self._cache = cache
        result = Summary(frame.returns_fact, frame.doms)
        self._summaries[key] = result
        return result

    def summary_for_constants(self, func, cls, call: ast.Call, skip_first: bool) -> Summary | None:
        """What `func`, a def of the file, does for `call` where the call steers it: the
        parameters `func` tests as they are (`if detach_fake:`, `x.detach() if detach else x`),
        or, where it tests none, those it uses (hands on to another helper), that the call
        passes a literal for or leaves at a literal default (`d_loss(netD, real, fake)` of `def
        d_loss(netD, real, fake, detach_fake=True)`), or passes a flag this walk holds as one,
        tagged with their truth (facts.CALL_CONSTANTS), its body walked for them (rules off,
        memoised per constants, from the budget of walks for calls); None where no such
        parameter is left to a literal, where a decorator may pass it something else, or where
        no walk is made (no budget, a long body, a recursive call)."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not plain_decorators(func):
            return None  # (a decorator may pass the flag something else: `@no_detach`)
        tested = self.steering_parameters(func)
        if not tested:
            return None
        pairs, complete = bind_arguments(func, call, skip_first)
        said = call_constants(func, pairs, complete)
        if self.frame is not None:
            # (A flag this walk itself holds for its call, handed on: `d_loss(..., detach_fake=detach)`
            # in `def outer(..., detach=True)` walked for `outer(netD, real, fake)`.)
            for param, expr in pairs:
                if param not in said and type(expr) is ast.Name:
                    truth = self.call_constant(expr, self.frame.state)
                    if truth is not None:
                        said[param] = truth
        constants = tuple(sorted((p, t) for p, t in said.items() if p in tested))
        return self.summary_with_constants(func, cls, constants)

    def steering_parameters(self, func) -> frozenset:
        """The parameters of def `func` a literal of a call may steer its walk by: those it tests
        as they are (tested_parameters), or, where it tests none, those its body uses (hands on
        to another helper: `return d_loss(netD, real, fake, detach_fake=detach)`)."""
        tested = self.tested_parameters(func)
        if tested or self.lines is None:
            return tested
        body = self.source_of(func)
        return frozenset(p for p in parameter_names(func.args) if len(re.findall(r"\b%s\b" % p, body)) > 1)

    def summary_with_constants(self, func, cls, constants: tuple) -> Summary | None:
        """What def `func` does where its parameters `constants` ((name, truth), ...: those it
        tests as they are) hold literals of those truths (summary_for_constants)."""
        if not constants or func.end_lineno - func.lineno > _CALL_MAX_LINES:
            return None
        key = ("summary", id(func), id(cls), constants)
        if key in self._call_results:
            return self._call_results[key]
        if self._call_budget <= 0:
            return None
        self._call_budget -= 1
        self._call_results[key] = None  # (recursion: the generic summary meanwhile)
        args = {p: UNKNOWN_FACT.but(tags=UNKNOWN_FACT.tags | {CALL_CONSTANTS[truth]}) for p, truth in constants}
        cache = self._cache
        self._cache = {}
        try:
            frame = self._run_function(func, self.enclosing.get(id(func), self.module_scope), False, cls,
                                       dispatch=False, given=args)
        finally:
            self._cache = cache
        found = self._call_results[key] = Summary(frame.returns_fact, frame.doms)
        return found

    def function_result(self, func, cls) -> Fact | None:
        """The join of what a function of the file returns (its summary).  While surveying call
        sites, only for a function without parameters (`model = make_model();
        _to_numpy(model(x))` passes what the factory returns) or of another module (its own
        walker's, kept in the summary cache): a summary for unknown arguments rarely says more,
        and walking those made surveys, 15% of the walk, a third dearer on transformers.  (What
        one call returns for its own arguments is not asked while surveying: _for_call.)"""
        if func is None:  # (a function another module made, not a def)
            return None
        if self._surveying and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = func.args
            if args.posonlyargs or args.args or args.kwonlyargs or args.vararg or args.kwarg:
                return None
        if hasattr(func, "returns") and hasattr(func, "summary"):  # a function of another module
            return func.returns()
        summary = self.summary(func, cls)
        return summary.returns if summary is not None else None

    def call_result(self, func, call: ast.Call, state) -> Fact | None:
        """What this call of function `func` of the file returns.  Its summary walked the body
        with the parameters unknown (or what their annotations say); when the call passes
        something more definite, the body is walked again with the call's arguments (rules off,
        memoised per argument facts), and the summary is walked only when that walk is not made
        (no budget, a long body, a recursive call): a function called with known arguments is
        walked once, not twice.  The arguments' facts over-approximate what they may be at this
        call, so the result is as sound as the summary's and holds for this call only."""
        generic = lambda: self.function_result(func, None)  # noqa: E731
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._for_call(func, None, call, state, generic, skip_first=False)
        if hasattr(func, "returns_for") and not self._surveying:
            # A function of another module of the project: its walker walks it for the values
            # this call passes, those that mean the same in any module (tensors, devices, plain
            # values, torch's modules, instances of the project modules' classes; not this
            # file's functions, classes or their instances).
            args = self._with_constants(func.node, call, False,
                                        self._portable(self._call_arguments(func.node, call, state, skip_first=False)),
                                        func.tested_parameters)
            if args:
                result = func.returns_for(args)
                if result is not None:
                    return result
        return generic()

    def method_call_result(self, classdef, name: str, call: ast.Call, state, recv: Fact | None = None,
                           on_class: bool = False) -> Fact | None:
        """What this call of method `name` of a class of the file, or of another module's
        (on the instance `recv`), returns (as call_result).  `on_class`: called on the class
        (`Utils.to_numpy(out)`), where a plain method is passed its instance as the first
        argument (`Base.step(self, x)`: its summary)."""
        generic = lambda: self.method_result(classdef, name)  # noqa: E731
        if hasattr(classdef, "method_return_for"):
            return self._entity_method_call(classdef, name, call, state, recv, generic)
        info = self.classes.get(id(classdef))
        func = info.method(name)[0] if info is not None else None
        if func is None:
            return generic()
        if not is_plain_method(func):
            # A static method binds the call's arguments from its first parameter, a class
            # method from its second (the first is the class), on the class or an instance.
            return self._for_call(func, info, call, state, generic,
                                  skip_first="staticmethod" not in decorator_names(func))
        if on_class:
            return generic()
        return self._for_call(func, info, call, state, generic, skip_first=True,
                              me=self._given_self(func, recv, call, state))

    def _given_self(self, method, recv: Fact | None, call: ast.Call, state) -> tuple | None:
        """(name of `self`, `recv`, what tells it apart) for a call of `method` of a class of the
        file on `recv`, an instance whose constructor call gave its attributes
        (Evaluator._constructed: `t = Trainer(m)`, then `m.requires_grad_(False)`,
        `t.evaluate(x)` runs `m` frozen), or was given since (`t.model = other`); None where
        the method is walked for any instance (the constructor gave nothing)."""
        attrs = recv.attrs if recv is not None else None
        given = getattr(attrs, "given", None)
        if not given or self._surveying:
            return None
        params = method.args.posonlyargs + method.args.args
        if not params or decorator_names(method):
            return None
        receiver = call.func.value if type(call.func) is ast.Attribute else None
        key = dotted_name(receiver) if receiver is not None else None
        if key is None:
            return None
        env = state.env
        since = {a: f for a in given for f in (env.get(f"{key}.{a}"),) if f is not None}
        if since:
            given = {**given, **since}
            recv = recv.but(attrs=attrs.but(given))
        return params[0].arg, recv, tuple(sorted((a, f, id(f.node)) for a, f in given.items()))

    def _entity_method_call(self, entity, name: str, call: ast.Call, state, recv, generic) -> Fact | None:
        """A call of method `name` of `entity`, a class of another module of the project, on
        `recv`, an instance of it: walked by that module's walker with what the instance's
        constructor call gave its attributes (`t = Trainer(net)`: `t.evaluate(x)` runs `net`)
        and this call's arguments, those that mean the same in any module (as call_result
        passes a function's); an attribute given another value since (`t.model = other`) is not
        given."""
        if self._surveying or recv is None:
            return generic()
        stub = entity.method_stub(name)
        static = stub is not None and "staticmethod" in decorator_names(stub)
        # (A static method called on an instance: the instance is not passed.)
        attrs = {} if static else self._given_attrs(recv, call.func.value if type(call.func) is ast.Attribute else None,
                                                    state)
        args = self._portable(self._call_arguments(stub, call, state, skip_first=not static)) if stub is not None \
            else {}
        if not attrs and not args:
            return generic()
        result = entity.method_return_for(name, attrs, args)
        return _defined_at(result, entity, name) if result is not None else generic()

    def static_call_result(self, entity, name: str, call: ast.Call, state) -> Fact | None:
        """What this call of static method `name` of `entity`, a class of another module of the
        project, called on the class (`Utils.to_numpy(out)`), returns for the arguments it
        passes, those that mean the same in any module (as call_result passes a function's);
        None where it is not a static method the class defines, or the call passes nothing
        known (another module's class methods and the like are not followed:
        `Config.from_dict(d)` would walk half a library for what is rarely a tensor)."""
        if self._surveying:
            return None
        stub = entity.method_stub(name)
        if stub is None or "staticmethod" not in decorator_names(stub):
            return None
        args = self._portable(self._call_arguments(stub, call, state, skip_first=False))
        if not args:
            return None
        result = entity.method_return_for(name, {}, args)
        return _defined_at(result, entity, name) if result is not None else None

    def property_result(self, entity, name: str, recv: Fact, receiver, state) -> Fact | None:
        """What property `name` of `entity`, a class of another module of the project, is on
        `recv` (`receiver.name`), an instance of it: as a method call with no arguments."""
        if not self._surveying:
            attrs = self._given_attrs(recv, receiver, state)
            if attrs:
                result = entity.method_return_for(name, attrs, {})
                if result is not None:
                    return _defined_at(result, entity, name)
        return self.method_result(entity, name)

    def _given_attrs(self, recv: Fact, receiver, state) -> dict:
        """{attr: fact} that the constructor call of `recv`, an instance of a class of another
        module, gave its attributes, those that mean the same in any module (`_portable`), less
        those given another value since (`t.model = other`, `receiver` being `t`)."""
        given = getattr(recv.attrs, "given", None)
        attrs = self._portable(given) if given else {}
        if attrs and receiver is not None:
            key = dotted_name(receiver)
            if key is not None:
                attrs = {a: f for a, f in attrs.items() if f"{key}.{a}" not in state.env}
        return attrs

    def _portable(self, facts: dict) -> dict:
        """Of {name: fact}, those that mean the same in any module (tensors, devices, plain
        values, torch's modules, instances of the project modules' classes; not this file's
        functions, classes or their instances, but an instance of a torch module class of the
        file as a plain torch module, where its forward returns a tensor that requires grad for
        certain)."""
        out = {}
        for p, f in facts.items():
            if f.kind in _PORTABLE and (f.node is None and f.attrs is None or _of_project_class(f)):
                out[p] = f
            elif f.kind == MODULE and isinstance(f.node, ast.ClassDef):
                plain = self._plain_module(f)
                if plain is not None:
                    out[p] = plain
        return out

    def _for_call(self, func, cls, call: ast.Call, state, generic, skip_first: bool,
                  me: tuple | None = None) -> Fact | None:
        if self._surveying:
            return generic()
        args = self._with_constants(func, call, skip_first, self._call_arguments(func, call, state, skip_first))
        if me is not None:
            # The instance the method is called on, with what its constructor call gave it.
            name, recv, given = me
            args[name] = recv
            return self.given_result(func, cls, args, generic, key=given)
        enclosing = self.enclosing.get(id(func))
        if enclosing is not None and enclosing.end_env is None and self.frame.scope is enclosing:
            # A function defined in the function being walked, called there: it sees that
            # function's names as they are at this call (walked once per their facts).
            seen = free_names(func) & local_names(enclosing.node)
            lookup = state.lookup
            around = tuple((n, f, id(f.node)) for n in sorted(seen) for f in (lookup(n),) if f is not None)
            return self.given_result(func, cls, args, generic, key=around,
                                     parent=self.scope_with(enclosing, state.env))
        if not args:
            return generic()
        return self.given_result(func, cls, args, generic)

    def given_result(self, func, cls, args: dict, generic, key: tuple = (), parent=None) -> Fact | None:
        """What `func` returns with parameters `args` ({name: fact}), walked once per facts;
        `generic()` (what it returns for any arguments) where it is not walked.  `key`: what
        else tells these arguments apart (facts compare without their attributes); `parent`:
        the scope it is walked in (by default the one that defines it)."""
        if func.end_lineno - func.lineno > _CALL_MAX_LINES:
            return generic()
        key = (id(func), id(cls), tuple(sorted((p, f, id(f.node)) for p, f in args.items())), key, parent is None)
        if key in self._call_results:
            found = self._call_results[key]
            return found if found is not None else generic()
        if self._call_budget <= 0:
            return generic()
        self._call_results[key] = None  # recursion: the summary's result meanwhile
        result = self._walk_for(func, cls, args, generic,
                                parent if parent is not None else self.enclosing.get(id(func), self.module_scope))
        self._call_results[key] = result
        return result

    def _walk_for(self, func, cls, args: dict, generic, parent) -> Fact | None:
        """What `func` returns with parameters `args`, walked in scope `parent` (rules off), or
        `generic()` where no walk is left in the budget or the body is long."""
        if self._call_budget <= 0 or func.end_lineno - func.lineno > _CALL_MAX_LINES:
            return generic()
        self._call_budget -= 1
        cache = self._cache
        self._cache = {}
        try:
            frame = self._run_function(func, parent, False, cls, dispatch=False, given=args)
        finally:
            self._cache = cache
        return frame.returns_fact

    def tested_parameters(self, callee) -> frozenset:
        """The parameters of def `callee` of the file that an `if` (or `elif`) tests as they are
        (`if frozen:`, `if not frozen:`): those a literal argument steers (the walker's `if`,
        Evaluator.call_constant).  Read from its text (a superset: a nested def's tests count
        too, not a parse of a body the lazy tree left unparsed); once a def."""
        found = getattr(callee, "tested_parameters", None)
        if found is None:
            if self.lines is None or not getattr(callee, "end_lineno", None):
                return frozenset()
            names = {m.group(1) for m in _TESTED.finditer(self.source_of(callee))}
            found = frozenset(names.intersection(parameter_names(callee.args))) if names else frozenset()
            try:
                callee.tested_parameters = found
            except AttributeError:
                pass
        return found

    def _with_constants(self, callee, call: ast.Call, skip_first: bool, args: dict, tested=None) -> dict:
        """`args`, with the parameters that `callee` tests as they are (`if frozen:`) and this
        call passes a literal (`build(frozen=True)`) tagged with
        its truth (facts.CALL_CONSTANTS): its walk for this call takes only the branch that
        truth takes (`tested`: what says those parameters, where `callee` is a stand-in without
        a body)."""
        passes = any(type(x) is ast.Constant for x in call.args) or any(
            type(k.value) is ast.Constant for k in call.keywords)
        if not passes:
            # (The defaults it leaves only where the call is walked for its arguments anyway: a
            # call that passes nothing known takes the function's summary.)
            a = callee.args
            if not args or not any(type(d) is ast.Constant for d in a.defaults) and not any(
                    type(d) is ast.Constant for d in a.kw_defaults):
                return args
        tested = self.tested_parameters(callee) if tested is None else tested()
        if tested:
            # (What the call passes, and the literal defaults it leaves where it cannot pass
            # more: `maybe_detach(fake)` of `def maybe_detach(x, detach=True)`.)
            pairs, complete = bind_arguments(callee, call, skip_first)
            for param, truth in call_constants(callee, pairs, complete).items():
                if param in tested:
                    f = args.get(param, UNKNOWN_FACT)
                    args[param] = f.but(tags=f.tags | {CALL_CONSTANTS[truth]})
        return args

    def _call_arguments(self, callee, call: ast.Call, state, skip_first: bool) -> dict:
        """{parameter: fact} of the arguments `call` passes that say more than "unknown" (facts
        are cached: note_call asked for them already)."""
        out: dict = {}
        for param, expr in bind_arguments(callee, call, skip_first)[0]:
            f = self.fact(expr, state)
            if f.kind != UNKNOWN:
                out[param] = f
        return out

    def defines_method(self, classdef, name: str) -> bool:
        info = self.classes.get(id(classdef))
        return info is not None and info.method(name)[0] is not None

    def overrides_call(self, classdef) -> bool:
        """Whether a torch module class of the file (or a `ProjectEntity`) has a `__call__` of
        its own or of a base of the project (ultralytics' `Model.__call__` runs `predict`): its
        instances' calls run that, not nn.Module's, which runs `forward`."""
        if not isinstance(classdef, ast.ClassDef):
            ask = getattr(classdef, "overrides_call", None)
            return ask() if ask is not None else False
        info = self.classes.get(id(classdef))
        if info is None:
            return False
        if info.method("__call__")[0] is not None:
            return True
        return any(base.overrides_call() for base in project_bases(info))

    def method_result(self, classdef, name: str, hint: tuple | None = None) -> Fact | None:
        """What method `name` of a class of the file returns (None: unknown).  `hint`: text the
        method's source must contain for the answer to be worth a walk."""
        if hasattr(classdef, "method_return"):  # a class of another module of the project
            return _defined_at(classdef.method_return(name, hint), classdef, name)
        info = self.classes.get(id(classdef))
        if info is None:
            return None
        func, _owner = info.method(name)
        if func is None:
            for base in project_bases(info):  # inherited from another module
                result = base.method_return(name, hint)
                if result is not None:
                    return self._as_inherited(info, base, name, _defined_at(result, base, name))
            return None
        if hint is not None and self.lines is not None:
            source = self.source_of(func)
            if not any(h in source for h in hint):
                return None
        return self.function_result(func, info)

    def _as_inherited(self, info, base, name: str, result: Fact) -> Fact:
        """What method `name` of `base`, a class of another module, returns for an instance of
        `info`, a class of the file that inherits it.  The base's module answered for an instance
        of the base, whose `self(x)` computes what a torch module's output is and whose
        `self.encode(x)` is the base's own; where the file's class replaces a method that one
        calls on its instance (`forward`, `__call__` for `self(x)`) with one that does not return
        a tensor that requires grad for certain (`return self.fc(x).argmax(-1)`), what requires
        grad there may not here: it is unknown."""
        if not _requires_grad(result):
            return result
        replaced = set(base.self_calls(name))
        if "forward" in replaced:
            replaced.add("__call__")
        for m in sorted(replaced):
            if info.method(m)[0] is None:
                continue
            own = self.method_result(info.node, m)
            if own is None or own.kind != TENSOR or must_grad(own) is not Grad.YES:
                return _unknown_grad(result)
        return result

    # ------------------------------------------------------------------ call sites

    def note_function_call(self, func, call: ast.Call, state) -> None:
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):  # (not another module's)
            self.note_call(func, call, state, skip_first=False)
        elif self._recording is not None and func is self._recording[0]:
            self._record_call(call, state)

    def _record_call(self, call: ast.Call, state) -> None:
        """What `call`, a call of the function `_recording` names, passes to each of its
        parameters (joined over the times a loop walks it); None where it passes `*args` or
        `**kwargs`, or an argument the function does not take."""
        _entity, (positional, keyword_only), sites = self._recording
        facts: dict | None = {}
        if len(call.args) > len(positional) or any(type(a) is ast.Starred for a in call.args) \
                or any(k.arg is None or k.arg not in positional and k.arg not in keyword_only
                       for k in call.keywords):
            facts = None
        else:
            for name, expr in [*zip(positional, call.args), *((k.arg, k.value) for k in call.keywords)]:
                facts[name] = self.fact(expr, state)
        known = sites.get(id(call))
        if known is not None and known[1] is not None and facts is not None:
            facts = {k: join(known[1][k], f) if k in known[1] else f for k, f in facts.items()}
        elif known is not None:
            facts = None
        sites[id(call)] = (call.lineno, facts)

    def note_applied(self, func, call: ast.Call, module) -> None:
        """`net.apply(init_weights)` (`call`): a call of function `func` for each submodule of
        `net`, each given as `module` (what a submodule of it is, as far as told)."""
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = [*func.args.posonlyargs, *func.args.args]
            if not params:
                return
            stub = ast.copy_location(ast.Call(func=call.args[0], args=[call.func.value], keywords=[]), call)
            self._sites.setdefault(id(func), {})[id(call)] = (call.lineno, {params[0].arg: module}, len(params) == 1,
                                                               (stub, False, None))
        elif self._recording is not None and func is self._recording[0]:
            positional = self._recording[1][0]
            self._recording[2][id(call)] = (call.lineno, {positional[0]: module} if positional else None)

    def note_method_call(self, classdef, name: str, call: ast.Call, state, on_class: bool = False,
                         recv: Fact | None = None) -> None:
        """A call of method `name` of a class of the file, on an instance (`on_class`: on the
        class itself, `Utils.to_numpy(t)`; `recv`: the instance, where known).  The call passes
        no first argument for an instance method called on an instance, nor for a class method:
        those are bound."""
        info = self.classes.get(id(classdef))
        func = info.method(name)[0] if info is not None else None
        if func is not None:
            bound = "classmethod" in decorator_names(func) or (is_plain_method(func) and not on_class)
            self.note_call(func, call, state, skip_first=bound, recv=recv if bound and not on_class else None)
        if name == "__init__" and info is not None and not on_class and "__init__" not in info.methods \
                and self.lines is not None:
            # Also a call of the constructor as this class inherits it: what it makes of these
            # arguments is this class's attributes (walker.inherited_constructor).
            stub = self.inherited_constructor(info)
            if stub is not None:
                self.note_call(stub, call, state, skip_first=True)

    def note_constructor(self, classdef, call: ast.Call, state) -> None:
        self.note_method_call(classdef, "__init__", call, state)

    def note_call(self, callee, call: ast.Call, state, skip_first: bool, recv: Fact | None = None) -> None:
        """A call of function `callee` of the file (a method or a constructor when
        `skip_first`: its first parameter is the instance, `recv` where known) with the arguments
        of `call`."""
        pairs, complete = bind_arguments(callee, call, skip_first)
        facts = {param: self.fact(expr, state) for param, expr in pairs}
        self._sites.setdefault(id(callee), {})[id(call)] = (call.lineno, facts, complete, (call, skip_first, recv))

    def parameter_facts(self, func, cls) -> dict:
        """{parameter: fact} from the file's call sites of `func` (empty: none known)."""
        params = [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]
        method = cls is not None and is_plain_method(func)
        if len(params) <= (1 if method else 0):
            return {}
        name = func.name
        if func.name == "__init__" and cls is not None:
            name = cls.node.name  # constructed by `ClassName(...)`
            positions = self._constructor_positions(func, cls)
        elif func.name.startswith("__") or func.name == "forward":
            return {}  # called by Python or nn.Module, out of sight
        else:
            positions = self.call_positions(name)
            if not method and self.lines is not None and ".apply(" in self.lines.text:
                # (`net.apply(init_weights)`: called for each submodule, Evaluator._applied_to.)
                positions = sorted(positions + apply_positions(self.lines.text, name))
        if not positions:
            return {}
        self._survey(positions, func)
        sites = self._sites.get(id(func))
        if not sites:
            return {}
        complete = (self._private(func, cls) and all(c for _, _, c, _ in sites.values())
                    and len(sites) >= len(positions) and not self._escapes(func, name))
        out: dict = {}
        for line, facts, _, _ in sorted(sites.values(), key=lambda s: s[0]):
            for param, fact in facts.items():
                tagged = _from_site(fact, line)
                out[param] = join(out[param], tagged) if param in out else tagged
        if not complete:
            # Other callers may pass anything: what the known ones pass shows a hazard, but
            # never that there is none.
            out = {p: _one_of_many(f) for p, f in out.items()}
        out = {p: f for p, f in out.items() if f.kind != UNKNOWN or f.grad is not Grad.UNKNOWN}
        # A parameter every known call gives a literal of one truth (`cond=False` left to its
        # default): what those calls pass does not reach a branch that needs the other truth.
        constants = [call_constants(func, *bind_arguments(func, call, skip))
                     for _, _, _, (call, skip, _) in sites.values()]
        for param, truth in agreed_constants(constants).items():
            base = out.get(param, UNKNOWN_FACT)
            out[param] = base.but(tags=base.tags | {SITE_CONSTANTS[truth]})
        return out

    _text_freezes = None  # whether the file's text may freeze a module (site_instance)

    def site_instance(self, func, cls) -> Fact | None:
        """The instance to walk method `func` of class `cls` on, from the file's calls of it,
        where the file names the method in no other way (as a function the file calls only
        under no_grad runs with grad off): the one instance they are all made on, as their
        paths join (`t = Trainer(m)`, `m.requires_grad_(False)`, then `t.reset()`: what its
        constructor call handed it, as it is there: Evaluator._constructed), or the class's
        own, frozen, where every call is made on a frozen instance of a torch module class
        (`net.requires_grad_(False)`, then `net.embed(x)`); None otherwise."""
        name = func.name
        if name.startswith("__") or name == "forward" or not is_plain_method(func) or self.lines is None:
            return None
        freezes = self._text_freezes
        if freezes is None:
            text = self.lines.text
            freezes = self._text_freezes = "requires_grad" in text or "freez" in text or "detach_" in text
        if not freezes:
            return None  # (nothing in the file freezes a module in place)
        positions = self.call_positions(name)
        if not positions:
            return None
        self._survey(positions, func)
        sites = self._sites.get(id(func))
        if not sites or len(sites) < len(positions) or self._escapes(func, name):
            return None
        receivers = [recv for _, _, _, (_, _, recv) in sites.values()]
        if any(recv is None or recv.node is not cls.node for recv in receivers):
            return None
        call = getattr(receivers[0].attrs, "call", None)
        if call is not None and all(getattr(r.attrs, "call", None) is call for r in receivers):
            instance = join_all(receivers)
            attrs = instance.attrs
            given = attrs.given if attrs is not None else None
            if not given:
                return instance
            # (What the constructor call passed, as the class's attributes are what its calls
            # pass: `self.model` (passed at line 16).)
            return instance.but(attrs=attrs.but({a: _from_site(f, call.lineno) for a, f in given.items()}))
        own = cls.self_fact
        if own is not None and own.kind == MODULE and not own.frozen and all(
                r.kind == MODULE and r.frozen for r in receivers):
            return own.but(frozen=True, grad=Grad.NO, min_grad=None)  # (evaluate._frozen)
        return None

    def _constructor_positions(self, init, cls) -> list:
        """Where the file may call the constructor `init` of class `cls`: `Cls(...)`, the
        calls of the file's subclasses that inherit it (`Sub(...)`), and, when a subclass has
        a constructor of its own, the `super().__init__(...)` calls."""
        positions = list(self.call_positions(cls.node.name))
        spans = []  # the subclasses' own constructors
        for info in self.classes.values():
            if info is cls or not inherits_from(info, cls):
                continue
            own = info.method("__init__")[0]
            if own is init:
                positions.extend(self.call_positions(info.node.name))
            elif own is not None:
                spans.append(self._offsets(own))
        if spans:
            positions.extend(p for p in self.call_positions("__init__") if any(a <= p < b for a, b in spans))
        return sorted(set(positions))

    def _offsets(self, node) -> tuple:
        """(start, end) offsets of `node`'s lines in the text."""
        starts = self.lines.starts
        end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(self.lines.text)
        return starts[node.lineno - 1], end

    def _private(self, func, cls) -> bool:
        """Only this file calls it (a `_name`, or a function nested in another)."""
        if func.name.startswith("_") and not func.name.startswith("__"):
            return True
        return func.name == "__init__" and cls is not None and cls.node.name.startswith("_")

    def _escapes(self, func, name: str) -> bool:
        """The name is used other than by a call (passed as a callback, stored), or a decorator
        we do not know wraps the function."""
        from .astutil import dotted_name

        for d in func.decorator_list:
            if dotted_name(d.func if isinstance(d, ast.Call) else d) not in _HARMLESS_DECORATORS:
                return True
        text = self.lines.text
        defs = text.count("def " + name + "(") + text.count("class " + name)
        return word_count(text, name) > len(self.call_positions(name)) + defs

    def _survey(self, positions: list, func) -> None:
        """Walk, with rules off, the functions that call `func` by name and were not walked
        yet: their calls record what they pass.  Each is walked to the end of its statement
        that holds the last of these calls (what comes after cannot change what they pass);
        again, further, when a later survey needs a call beyond that."""
        spans = self._function_spans()
        starts, ends, defs = spans
        line_starts = self.lines.starts
        wanted: dict = {}  # id(caller) -> [caller, statements to walk], in the order of the calls
        for pos in positions:
            i = bisect_right(starts, pos) - 1
            caller = None
            while i >= 0:  # the innermost function around the call
                if ends[i] > pos and defs[i] is not func:
                    caller = defs[i]
                    break
                i -= 1
            if caller is None or id(caller) in self._walked:
                continue
            need = _statements_through(caller, bisect_right(line_starts, pos))
            found = wanted.get(id(caller))
            if found is None:
                wanted[id(caller)] = [caller, need]
            elif need > found[1]:
                found[1] = need
        for key, (caller, need) in wanted.items():
            if self._surveyed.get(key, 0) >= need:
                continue
            if self._survey_budget <= 0:
                return
            self._survey_budget -= 1
            self._surveyed[key] = need
            cls = self._class_of(caller)
            cache = self._cache
            self._cache = {}
            self._surveying += 1
            try:
                self._run_function(caller, self.module_scope, False, cls, dispatch=False, upto=need)
            finally:
                self._cache = cache
                self._surveying -= 1

    def _class_of(self, func):
        for info in self.classes.values():
            if info.methods.get(func.name) is func:
                return info
        return None

    def function_around(self, offset: int):
        """The innermost function of the file whose lines hold text offset `offset`, or None
        (module-level code)."""
        starts, ends, defs = self._function_spans()
        k = bisect_right(starts, offset) - 1
        while k >= 0 and ends[k] <= offset:
            k -= 1
        return defs[k] if k >= 0 else None

    def _function_spans(self) -> tuple:
        if self._def_spans is None:
            starts_of = self.lines.starts
            text_len = len(self.lines.text)
            found = []
            text = self.lines.text
            stack = list(self.tree.body)
            while stack:  # statements only
                node = stack.pop()
                t = type(node)
                if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                    end = starts_of[node.end_lineno] if node.end_lineno < len(starts_of) else text_len
                    found.append((starts_of[node.lineno - 1], end, node))
                    unread = body_span(node)
                    if unread is None or text.find("def ", text.find("\n", unread[0]), unread[1]) != -1:
                        stack.extend(node.body)  # (not a body unread yet with no function in it)
                elif t in BLOCKS:
                    for field in BLOCKS[t]:
                        stack.extend(getattr(node, field))
            found.sort(key=lambda t: t[0])
            self._def_spans = ([t[0] for t in found], [t[1] for t in found], [t[2] for t in found])
        return self._def_spans

    # ------------------------------------------------------------------ text index of calls

    def call_positions(self, name: str) -> list:
        """Offsets of `name(` in the text that are not its `def` or `class` (CallSites)."""
        sites = self._call_sites
        if sites is None:
            sites = self._call_sites = CallSites(self.lines.text if self.lines is not None else "")
        return sites.positions(name)

    def called_elsewhere(self, name: str) -> bool:
        return bool(self.call_positions(name))


_CONTAINERS = (PARAMS, NAMED_PARAMS, SEQ)


def project_bases(info) -> list:
    """The classes of other modules that the file's class `info` inherits from, itself or
    through its bases of the file (`class Hard(Scorer)`, `class Scorer(BaseModel)`), nearest
    first."""
    out, seen, todo = [], set(), [info]
    while todo:
        c = todo.pop(0)
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.extend(b for b in c.project_bases if b not in out)
        todo.extend(c.bases)
    return out


# `if frozen:`, `elif not flag:`: a name an `if` tests as it is.
def plain_decorators(func) -> bool:
    """Whether the def's decorators leave what a call passes and returns to its body: none, or
    `staticmethod`, `classmethod` and the grad modes (`@torch.no_grad()`), not a wrapper that
    may do something else (`@cache`, `@my_wrapper`)."""
    for d in func.decorator_list:
        name = dotted_name(d.func if type(d) is ast.Call else d) or ""
        if name not in ("staticmethod", "classmethod") and not name.endswith(_GRAD_MODE_DECORATORS):
            return False
    return True


_GRAD_MODE_DECORATORS = ("no_grad", "inference_mode", "enable_grad")


_TESTED = LazyPattern(r"\b(?:if|elif)[ \t]+(?:not[ \t]+)?([A-Za-z_]\w*)(?:[ \t]*:|[ \t]+else\b)")


def _requires_grad(f: Fact) -> bool:
    """Whether `f`, or a value it holds, may require grad (a tensor, a sequence of them)."""
    return f.grad is not Grad.NO and (f.kind == TENSOR or f.kind == SEQ)


def _unknown_grad(f: Fact) -> Fact:
    """`f` with what requires grad in it (a tensor, the elements of a sequence) known no more:
    "may", never "yes"."""
    if f.kind == TENSOR:
        return f.but(grad=Grad.UNKNOWN, min_grad=None) if f.grad is Grad.YES else f
    el = f.element
    items = f.items
    return f.but(grad=min(f.grad, Grad.UNKNOWN), min_grad=None,
                 element=_unknown_grad(el) if el is not None else None,
                 items=tuple(_unknown_grad(i) for i in items) if items is not None else None)


def _of_project_class(f: Fact) -> bool:
    """An instance of a class of another module of the project (`build()`, `Net()` of an
    imported `Net`), whose attributes are its class's: it crosses as a reference to its class
    (portable.py), as what the class's module knows of it."""
    node = f.node
    return (f.kind == MODULE or f.kind == OBJECT) and hasattr(node, "returns_for") \
        and getattr(f.attrs, "owner", None) is node


def agreed_constants(calls: list) -> dict:
    """{parameter: truth} that every one of `calls` ({parameter: truth} each) agrees on."""
    if not calls:
        return {}
    out = dict(calls[0])
    for c in calls[1:]:
        out = {p: t for p, t in out.items() if c.get(p) is t}
    return out


def _from_site(fact: Fact, line: int) -> Fact:
    """What a call site passes, as a parameter's fact: by the flow of that call only, tagged
    with where the call is (`p (passed at line 15)`).  The tensors a container passes carry
    the tag too (`def sgd(params): for p in params: ...` with `sgd(model.parameters())`).
    A call that passes a tensor is tagged for it too (`callsite-tensor:15`), and one that passes
    a tensor (or a module) that requires grad, or one on an accelerator, for that
    (`callsite-grad:15`, `callsite-device:15`): a message names the calls that made what it
    says of the parameter (`rules.base.Context.origin`), not every call of the function."""
    el = fact.element
    held = el if fact.kind in _CONTAINERS and el is not None and el.kind == TENSOR else None
    tags = {f"callsite:{line}"}
    shown = held if held is not None else fact
    if shown.kind == TENSOR or shown.kind == MODULE:  # (a module: what its parameters are)
        if shown.kind == TENSOR:
            tags.add(f"callsite-tensor:{line}")
        if shown.grad is Grad.YES:
            tags.add(f"callsite-grad:{line}")
        if shown.device is Device.ACCEL:
            tags.add(f"callsite-device:{line}")
    if held is not None:
        return fact.but(by_flow=False, tags=fact.tags | tags, element=el.but(by_flow=False, tags=el.tags | tags))
    return fact.but(by_flow=False, tags=fact.tags | tags)


def _defined_at(result: Fact | None, entity, name: str) -> Fact | None:
    """What method `name` of `entity`, a class of another module of the project, returns, saying
    where (`Critic.score(), models.py:13`) when it is a tensor or a module, as what its functions
    return does (evaluate.Evaluator._call_fact)."""
    if result is None or result.kind not in (TENSOR, MODULE) or name in ("forward", "__call__"):
        return result
    where = entity.method_where(name)
    return with_origins(result, frozenset((f"defined:{entity.name}.{name}(), {where}",))) if where else result


def _statements_through(func, line: int) -> int:
    """How many of the statements of `func`'s body come before line `line` or hold it (all of
    them for a line outside the body: its header)."""
    body = func.body
    for i, stmt in enumerate(body):
        if stmt.lineno <= line <= stmt.end_lineno:
            return i + 1
    return len(body)


def _one_of_many(fact: Fact) -> Fact:
    """A parameter's fact from the known calls of a function that other calls may reach: a
    hazard they show stays (a tensor that requires grad, in a container of parameters or a
    list too), but never that there is none."""
    kind = fact.kind
    if kind == TENSOR or kind == MODULE:
        return fact.but(grad=max(fact.grad, Grad.UNKNOWN), device=max(fact.device, Device.UNKNOWN),
                        min_grad=Grad.UNKNOWN if fact.grad is not Grad.UNKNOWN else None)
    el = fact.element
    if kind in _CONTAINERS and el is not None and el.kind == TENSOR:
        el = _one_of_many(el)
        return fact.but(grad=el.grad if kind == SEQ else fact.grad, device=max(fact.device, Device.UNKNOWN),
                        element=el, items=None, min_grad=None)
    return UNKNOWN_FACT


def call_positions(text: str, name: str) -> list:
    """Offsets of the calls `name(` in `text` (a word that starts with an ASCII letter or `_`;
    nothing between the name and `(`), less its definitions (`def name(`, `class name(`)."""
    out = []
    needle = name + "("
    start = text.find(needle)
    while start != -1:
        before = text[start - 1] if start else " "
        if not (before.isalnum() or before == "_") and not _defines(text, start):
            out.append(start)
        start = text.find(needle, start + 1)
    return out


class CallSites:
    """`call_positions` of one text, by name (memoised): a search of the text for each of the
    first names asked, then one index of every call in it (`call_index`: a search a name costs a
    twentieth of the index on a model file, but a file that asks thousands of names would be
    searched thousands of times)."""

    __slots__ = ("text", "_found", "_index")

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict = {}  # name -> its offsets
        self._index: dict | None = None  # name -> its offsets, of every name (after the searches)

    def positions(self, name: str) -> list:
        found = self._found.get(name)
        if found is None:
            index = self._index
            if index is None and len(self._found) >= _DIRECT_SEARCHES:
                index = self._index = call_index(self.text)
            found = self._found[name] = index.get(name, []) if index is not None else call_positions(self.text, name)
        return found


def call_index(text: str) -> dict:
    """{name: call_positions(text, name)} of every name called in `text`: by a look back from each
    `(` over the word before it (the pattern `\\b([A-Za-z_]\\w*)\\(`, tried at every position of a
    large file, took four times as long)."""
    index: dict = {}
    find = text.find
    i = find("(")
    while i != -1:
        j = i
        while j and (text[j - 1].isalnum() or text[j - 1] == "_"):
            j -= 1
        if j < i:
            c = text[j]  # the word starts with an ASCII letter or `_` (`[A-Za-z_]\w*`)
            if (c == "_" or "a" <= c <= "z" or "A" <= c <= "Z") and not _defines(text, j):
                index.setdefault(text[j:i], []).append(j)
        i = find("(", i + 1)
    return index


def _defines(text: str, start: int) -> bool:
    """Whether the name at `start` follows `def` or `class` (and blanks): `(?:def|class)[ \\t]+`
    right before it, with no word character before the keyword."""
    line = text.rfind("\n", 0, start) + 1
    before = text[max(line, start - 80):start]
    if not before or before[-1] not in " \t":
        return False
    before = before.rstrip(" \t")
    for keyword in ("def", "class"):
        if before.endswith(keyword):
            at = len(before) - len(keyword)
            return at == 0 or not (before[at - 1].isalnum() or before[at - 1] == "_")
    return False


def inherits_from(info, base) -> bool:
    """Whether the file's class `info` has the file's class `base` among its bases, at any depth."""
    seen: set = set()
    todo = list(info.bases)
    while todo:
        b = todo.pop()
        if b is base:
            return True
        if id(b) not in seen:
            seen.add(id(b))
            todo.extend(b.bases)
    return False
