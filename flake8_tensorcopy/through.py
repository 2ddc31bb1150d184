"""Findings through calls: a function of another module of the project that calls `.numpy()` on
a tensor a call passes (`to_numpy(out)`, `def to_numpy(t): return t.numpy()` in `utils.py`).

A rule that reports through calls (`Rule.through_calls`, TNS101) reports at the argument, in
the file that passes it.  This is the engine's side of it, the layer that has the rules: which
functions of a project module may report for a call's arguments (by their text, so that the
files that call them are walked), and what they report for one call's, found by a walk of the
function in its own module with those rules on.  The analysis asks it through the project
(`Project.through`; module_summary.ProjectEntity.sinks_for, walker.call_sinks), and the
answers go to the summary cache with the rest of the module's.
"""

from __future__ import annotations

from .analysis import Walker, make_domains
from .analysis.astutil import Reparse, is_plain_method
from .analysis.facts import MAPPING, OTHER_FACT, PARAMS, SEQ, UNKNOWN, Grad, must_grad
from .model import Options
from .reach import runtime_imports, torch_through_project
from .rules.base import Context, all_rules
from .source import (CLASS_HEADER, LazyPattern, class_lines, class_methods, identifier_end, top_level_function,
                     top_level_functions)

def sink_calls(text: str, project, module: str, path: str) -> tuple:
    """What calls of the project's functions that may report through calls look like in the
    file (`to_numpy(`, `U.`), from what it imports of the project's modules (by text,
    reach.imports; `Through.functions`); and of those, the calls of functions and classes that
    copy-construct a parameter (`Normalize(`: Through.plain_parameters, which TNS202 alone asks:
    the engine admits to its walk only the functions that make those)."""
    through = project.through
    if through is None:
        through = project.through = Through(project)
    found = set()
    plain = set()  # (the calls of those that copy-construct a parameter)
    touched = project.touched
    plans = through._plans
    # (A package's `__init__.py` that star-imports its modules and defines nothing calls nothing
    # of them to report at; a script that star-imports a module may call its functions.)
    no_def = "def " not in text and path.endswith("__init__.py")
    for target, name, local in runtime_imports(text, module, path.endswith("__init__.py")):
        if name == "*" and no_def:
            continue  # (`from .modeling import *` in a package's `__init__.py`)
        # What the import names, and what those modules hold, once a process (Through._plan);
        # the file depends on the module it imports from all the same.
        plan = plans.get((target, name))
        if plan is None:
            plan = plans[(target, name)] = through._plan(target, name)
        where, deps, names, sub, own = plan
        if where is None:
            continue
        touched.update(deps)
        # `t = Trainer(net)` ... `t.predict(x)`, where a method of the class calls `.numpy()`:
        # for a class the file constructs (walker.method_sinks), also through its module
        # (`T.Trainer(net)`, `import pkg.trainer as T` or `from pkg import trainer`).
        attr = None  # whether the text holds `local.` (searched for once, where asked)
        if name is None:
            methods = _methods_constructed(text, local, where, through)
        elif name == "*":
            methods = ()
        elif sub is None:  # a class of the module (`own`: its methods that may report)
            # (Constructed, or a base of a class of the file: `self.to_numpy(out)`.)
            methods = own if own and (local + "(" in text or _subclassed(text, local)) else ()
            if local + "(" in text and _called(text, local):
                # (Its constructor, `Recorder(out)`, `Normalize(MEAN)`: asked at the call of the class.)
                if through.constructs_through(where, target, name):
                    found.add(local + "(")
                    through.names.add(local)
                elif through.plain_through(where, target, name, "__init__"):
                    plain.add(local + "(")
                    through.names.add(local)
            if own and not methods and local + "." in text:
                # (Its static methods called on the class: `Init.zero(net)`.)
                methods = own & _attribute_calls(text, local)
        elif local + "(" in text:  # in a package's `__init__.py`, also one of its modules
            methods = own
        else:
            attr = local + "." in text
            methods = _methods_constructed(text, local, sub, through) if attr else ()
        if methods:
            found.update("." + m + "(" for m in methods)
            through.names.update(methods)
        if name is None:  # `import pkg.utils as U`: `U.to_numpy(`
            _whole_module(text, local, where, target, names, through, found, plain)
            if where.endswith("__init__.py") and local + "." in text:
                # `import pkg`, then `pkg.convert.to_numpy(x)`: a module of the package by the
                # name its `__init__.py` binds.
                for sub_name in _attribute_names(text, local):
                    sub_target = f"{target}.{sub_name}"
                    sub_where = through.project.path_of(sub_target)
                    if sub_where is not None:
                        touched[sub_where] = through.project.digest_of(sub_where)
                        _whole_module(text, f"{local}.{sub_name}", sub_where, sub_target, through.functions(sub_where),
                                      through, found, plain, False)
        elif name == "*":
            found.update(n + "(" for n in names)
        elif name in names or sub is None and not name[0].isupper() and name in through.hands_on(where) \
                and _called(text, local):
            found.add(local + "(")
            found.add("apply(" + local)  # (`net.apply(init_weights)`: walker._applied_sinks)
            through.names.add(local)
        elif not name[0].isupper() and (_called(text, local) or "apply(" + local in text) and (
                through.reexported(target, name, where) or through.relays(target, name)):
            # (A function that hands what it is given to one of another module that may
            # report: `run`, with `def run(model, x): return to_np(model(x))`.)
            found.add(local + "(")
            found.add("apply(" + local)
            through.names.add(local)
        elif sub is not None:  # `from pkg import utils`: `utils.to_numpy(`
            if attr is None:
                attr = local + "." in text
            if attr:
                _whole_module(text, local, sub, f"{target}.{name}", through.functions(sub), through, found, plain,
                              False)
        if name is not None and name != "*" and sub is None and not name[0].isupper() \
                and _called(text, local) and through.plain_through(where, target, name):
            # (A function that copy-constructs a parameter, `scale(MEAN)`: asked of TNS202.)
            plain.add(local + "(")
            through.names.add(local)
    return frozenset(found), frozenset(plain)


def _whole_module(text: str, local: str, where: str, target: str, names: frozenset, through, found: set,
                  plain: set, relays: bool = True) -> None:
    """sink_calls of project module `target` (at `where`, `names`: Through.functions of it)
    imported whole under the name `local` (`import pkg.utils as U`, `from pkg import utils`):
    `U.to_numpy(`, and the functions a package's `__init__.py` re-exports (`pkg.to_numpy(`, with
    `from .convert import to_numpy` there) or, with `relays`, that relay; `U.scale(MEAN)`, `U.Normalize(MEAN)`,
    a function or a class of the module that copy-constructs a parameter (asked of TNS202)."""
    calls = _attribute_calls(text, local)
    copying = [n for n in calls if through.plain_through(where, target, n, "__init__" if n[0].isupper() else None)]
    if copying:
        plain.add(local + ".")
        through.names.update(copying)
    constructed = [n for n in calls if n[0].isupper() and through.constructs_through(where, target, n)]
    if constructed:
        through.names.update(constructed)
    if names or constructed:
        found.add(local + ".")
        return
    relayed = [n for n in calls if not n[0].isupper() and (
        through.reexported(target, n, where) or relays and through.relays(target, n))]
    if relayed:
        found.add(local + ".")
        through.names.update(relayed)


def _attribute_names(text: str, local: str) -> set:
    """The names the file reads as attributes of `local` and then as a module (`pkg.convert.` of
    `pkg.convert.to_numpy(x)`)."""
    return _attribute_calls(text, local, ".")


def _plain_parameters(rules, segment: str) -> frozenset:
    """The parameters of the def `segment` that one of `rules` asks of a torch tensor that
    requires no grad (Rule.through_plain_parameters)."""
    out: frozenset = frozenset()
    for cls in rules:
        out |= cls.through_plain_parameters(segment)
    return out


_CLASS_BASES = LazyPattern(r"(?m)^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)")


def _class_method(text: str, cls: str, method: str, lines: list) -> str | None:
    """The text of method `method` that an instance of class `cls` at the margin of `text` runs:
    the class's own, or one it inherits from a class of the text through single bases; None
    where it has none so, and past a `__new__` (which may return another object, whose
    `__init__` does not run).  `lines`: source.class_lines(text)."""
    c, seen = cls, set()
    while c is not None and c not in seen and c.isidentifier():
        seen.add(c)
        found = {name: segment for _cls, _bases, name, segment in class_methods(text, c, lines)}
        if "__new__" in found:
            return None
        if method in found:
            return found[method]
        bases = _bases_of(text, c, lines)
        c = bases[0] if len(bases) == 1 else None  # (several bases: their MRO decides)
    return None


def _bases_of(text: str, cls: str, lines: list) -> tuple:
    """The names the bases of class `cls` at the margin of `text` are written with (`class
    Child(Base):`: ("Base",)); `lines`: source.class_lines(text)."""
    for at in lines:
        header = CLASS_HEADER.match(text, at)
        if header is not None and header.group(1) == cls:
            return tuple(b.strip() for b in (header.group(2) or "").split(",") if b.strip())
    return ()


def _subclassed(text: str, local: str) -> bool:
    """Whether a class of the text names `local` among its bases (`class Runner(BaseRunner):`)."""
    if "class " not in text:
        return False
    return any(local in (b.strip() for b in m.group(1).split(",")) for m in _CLASS_BASES.finditer(text))


def _called(text: str, local: str) -> bool:
    """Whether the file calls `local` other than as a decorator (`local(`, not `@local(`)."""
    call = local + "("
    i = text.find(call)
    while i != -1:
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.@"):
            return True
        i = text.find(call, i + len(call))
    return False


def _calls_one_of(segment: str, names, name: str) -> bool:
    """Whether the text of function `name` calls one of `names` other than itself."""
    return any(other != name and other in segment and _called(segment, other) for other in names)


def _attribute_calls(text: str, local: str, then: str = "(") -> set:
    """The names the file calls as attributes of `local` (`U.run(` of `import utils as U`;
    `then`: the character after the name)."""
    out: set = set()
    prefix = local + "."
    i = text.find(prefix)
    while i != -1:
        j = k = i + len(prefix)
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_."):
            k = identifier_end(text, j)
            if k < len(text) and text[k] == then and k > j:
                out.add(text[j:k])
        i = text.find(prefix, k)
    return out


def _methods_constructed(text: str, local: str, where: str, through) -> set:
    """The methods `Through.methods` finds of the classes of the module at `where` that the file
    calls through the name `local` it gives the module (`T.Trainer(`)."""
    out: set = set()
    for name in _attribute_calls(text, local):
        out |= through.methods(where, name) | through.keepers(where, name)
    return out


def imported_triggers(text: str, project, module: str, path: str, rules) -> dict:
    """{rule: the names `Rule.imported_triggers` of that rule finds} for `rules`, for the names
    the file imports, in the project modules it imports them from (reach.imports; any name of a
    module imported whole): each module read once a process, and a dependency of the file's
    result."""
    through = project.through
    if through is None:
        through = project.through = Through(project)
    rules = tuple(rules)
    found: dict = {cls: set() for cls in rules}
    touched = project.touched
    plans = through._trigger_plans.get(rules)
    if plans is None:
        plans = through._trigger_plans[rules] = {}
    for target, name, _local in runtime_imports(text, module, path.endswith("__init__.py")):
        # (What an import of `name` from `target` brings, once a process: the module's path and
        # digest, and ((rule, names), ...) for the rules it brings any to.)
        plan = plans.get((target, name))
        if plan is None:
            plan = plans[(target, name)] = through._trigger_plan(target, name, rules)
        deps, brought = plan
        touched.update(deps)
        for cls, names in brought:
            found[cls].update(names)
    return {cls: frozenset(names) for cls, names in found.items()}


class Through:
    """Project.through: for the rules that report through calls (`Rule.through_calls`), which
    functions of a project module may report for a call's arguments, and what they report for
    one call's (the analysis asks: module_summary.ProjectEntity.sinks_for, walker.call_sinks)."""

    def __init__(self, project) -> None:
        self.project = project
        self.rules = [cls for cls in all_rules() if cls.through_calls]
        self.trigger_rules = [cls for cls in all_rules() if cls.imported_triggers is not None]
        self._functions: dict = {}  # path -> frozenset of names
        self._methods: dict = {}  # (path, class) -> frozenset of method names (methods())
        self._keepers: dict = {}  # (path, class) -> frozenset of method names (keepers())
        self._ctors: dict = {}  # (path, class) -> constructs()
        self._hands: dict = {}  # path -> hands_on()
        self._texts: dict = {}  # path -> _text(path)
        self._class_lines: dict = {}  # path -> source.class_lines of its text (_find_methods)
        self._triggers: dict = {}  # (path, rules) -> ({name: method names}, ...) (imported_triggers)
        self.names: set = set()  # every name in those sets (what a call must be named to ask)
        self.kept: set = set()  # the names of the keepers found (keepers: `logger.log(loss)` is asked)
        self._plans: dict = {}  # (module, name) of an import -> _plan
        self._trigger_plans: dict = {}  # rules -> {(module, name) of an import -> _trigger_plan}
        self._reexports: dict = {}  # path of a package's __init__.py -> {name: (module, name)} it imports
        self._bases: dict = {}  # path -> _project_bases
        self._baselines: dict = {}
        self._with_torch: dict = {}  # path -> (_checked_with_torch, {path: digest} it read)
        self._records: dict = {}  # path -> _record
        self._unsaved: set = set()  # the paths whose record has parts the summary cache lacks
        self._needles: dict = {}  # path -> _needles_of
        self._plain_params: dict = {}  # (path, function or class, method) -> plain_parameters
        self._plain_texts: dict = {}  # path -> _plain_text
        self._relay_calls: dict = {}  # path -> (its digest, _imported_sinks of its text)
        self._sink_importers: dict = {}  # module -> (_imports_sinks, {path: digest} it read)
        # {path: _relay_entry} of what _imports_sinks found of a module (a DirectoryMaps; False:
        # no summary cache): a warm run does not read a module again to tell.
        self._relay_map = None
        self.relay_names: set = set()  # the names of the relays found (relays)
        # {path: digest} of the modules the summary cache says hold no needle (a DirectoryMaps;
        # False: no summary cache), and those this process found, until `flush` writes them.
        self._plain = None

    def _plan(self, target: str, name: str | None) -> tuple:
        """What `sink_calls` needs of an import of `name` (None: the module itself, "*": all it
        binds) from project module `target`, whatever file imports it: (the module's path or
        None, its digest, `functions` of it, for a name the package's module of that name or
        None, `methods` of the class of that name or ())."""
        project = self.project
        where = project.path_of(target)
        if where is None:
            # (`from . import convert` in a namespace package, which has no `__init__.py`: the
            # module of that name, as a package's module, `sub`, is read.)
            sub = project.path_of(f"{target}.{name}") if name is not None and name != "*" else None
            if sub is None:
                return None, {}, frozenset(), None, ()
            return sub, {sub: project.digest_of(sub)}, frozenset(), sub, ()
        names = self.functions(where)
        sub = own = None
        deps = {where: project.digest_of(where)}
        if name is not None and name != "*":
            if where.endswith("__init__.py"):
                sub = project.path_of(f"{target}.{name}")
            own = self.methods(where, name) | self.keepers(where, name)
            if not own and sub is None and where.endswith("__init__.py"):
                # A class the package re-exports (`from .optim import MySGD` there): its methods
                # where it is defined.
                module, imported = self._reexports_of(where, target).get(name, (None, None))
                real = project.path_of(module) if module is not None and module != target else None
                if real is not None:
                    own = self.methods(real, imported) | self.keepers(real, imported)
                    deps[real] = project.digest_of(real)
        return where, deps, names, sub, own or ()

    def _reexports_of(self, where: str, target: str) -> dict:
        """{name: (module, name)} of what the package's `__init__.py` at `where` imports from
        modules, by its import lines (once a process)."""
        found = self._reexports.get(where)
        if found is None:
            text = _module_text(self.project, where)
            found = self._reexports[where] = {} if text is None else {
                local: (module, imported) for module, imported, local in runtime_imports(text, target, True)
                if imported is not None and imported != "*"}
        return found

    def _trigger_plan(self, target: str, name: str | None, rules: tuple, depth: int = 0) -> tuple:
        """What `imported_triggers` finds in an import of `name` (None: the module itself, "*":
        all it binds, any of its classes) from project module `target`, whatever file imports
        it: ({path: digest} of the modules it read, ((rule, names), ...)).  A name a package's
        `__init__.py` imports from another module of the project (`from .meter import
        AverageMeter` there) is looked for there too (by the import lines of the package's
        text: its summary, asked for this alone, cost 3% of a large tree's check)."""
        project = self.project
        where = project.path_of(target)
        if where is None:
            return {}, ()
        brought = []
        for cls, by_name in zip(rules, self.triggers(where, rules)):
            if not by_name:
                continue
            if name is None or name == "*":  # `import pkg.utils as U`: any of its classes
                names = frozenset().union(*by_name.values())
            else:
                names = frozenset(by_name.get(name, ()))
            if names:
                brought.append((cls, names))
        deps = {where: project.digest_of(where)}
        if depth <= 4:
            # A class that inherits from a class of another module of the project (`class
            # LossMeter(AverageMeter)`, `AverageMeter` imported from base_meters.py, where
            # `update` adds to `self.sum`; `class Trainer(BaseTrainer)`, `fit` stepping there):
            # what its bases bring too (any class's, for the module imported whole).
            bases = self._project_bases(where, target)
            memo = self._trigger_plans.setdefault(rules, {})
            for module, imported in (bases.get(name, ()) if name is not None and name != "*"
                                     else {b for found in bases.values() for b in found}):
                # (Once a process, as imported_triggers keeps its plans: a base class many
                # modules' classes name, `PreTrainedModel`, is planned once; one being planned
                # further up, an import cycle, brings nothing.)
                found = memo.get((module, imported))
                if found is None:
                    memo[(module, imported)] = ({}, ())
                    found = memo[(module, imported)] = self._trigger_plan(module, imported, rules, depth + 1)
                more, inherited = found
                deps.update(more)
                if inherited:
                    merged = dict(brought)
                    for cls, names in inherited:
                        merged[cls] = merged.get(cls, frozenset()) | names
                    brought = list(merged.items())
        # (At most five packages deep: packages may re-export from one another in a cycle.)
        if not brought and name is not None and name != "*" and where.endswith("__init__.py") and depth <= 4:
            if project.path_of(f"{target}.{name}") is not None:
                # `from pkg import utils`, a module of the package: any of its names (as
                # `import pkg.utils as utils`).
                module, imported = f"{target}.{name}", None
            else:
                module, imported = self._reexports_of(where, target).get(name, (None, None))
            if module is not None and module != target:
                more, brought = self._trigger_plan(module, imported, rules, depth + 1)
                deps.update(more)
        return deps, tuple(brought)

    def _project_bases(self, where: str, target: str) -> dict:
        """{class: ((module, name), ...)} of the classes at the margin of the module at `where`
        that name as a base a name the module imports from another module of the project
        (`from base_meters import AverageMeter`, `class LossMeter(AverageMeter):`), by its text;
        once a process.  The bytes are searched first for a class header with a base: most
        modules' text is not decoded for it."""
        found = self._bases.get(where)
        if found is not None:
            return found
        self._needles_of(where)  # (a module the summary cache says holds no needle has no such class)
        project = self.project
        digest = project.digest_of(where)
        if digest is None or self._plain and self._plain.get(where) == digest:
            found = self._bases[where] = {}
            return found
        record = self._record(where)
        found = record.get("bases")
        if found is None:
            found = {}
            data = project.contents(where)
            if data is not None and _BASED_CLASS_BYTES.search(data) is not None:
                text = _module_text(project, where)
                imported = {}
                if text is not None:
                    imported = {local: (module, name) for module, name, local in
                                runtime_imports(text, target, where.endswith("__init__.py"))
                                if name is not None and name != "*" and module != target
                                and self.project.path_of(module) is not None}
                if imported:
                    for at in class_lines(text):
                        header = CLASS_HEADER.match(text, at)
                        if header is None or not header.group(2):
                            continue
                        bases = tuple(imported[b.strip()] for b in header.group(2).split(",")
                                      if b.strip() in imported)
                        if bases:
                            found[header.group(1)] = bases
            record["bases"] = found
            self._unsaved.add(where)
        self._bases[where] = found
        return found

    def functions(self, where: str) -> frozenset:
        """The names of the top-level functions of the module at `where` whose text holds a
        needle of such a rule (`Rule.through_needles`).  From the text: a `def` at the start of
        a line, to the next line that starts with something else than a blank (a docstring line
        at the margin ends it early: a function missed, never one too many).  The module is a
        dependency of the asking file's result (a result cache re-checks the file when it
        changes)."""
        project = self.project
        known = self._functions.get(where)
        if known is None:
            if not self._needles_of(where)[0]:
                known = frozenset()  # (it holds no needle: nothing to search)
            else:
                record = self._record(where)
                known = record["functions"]
                if known is None:
                    known = record["functions"] = self._find(where)
                    self._unsaved.add(where)
            self._functions[where] = known
            self.names.update(known)
        project.touched[where] = project.digest_of(where)
        return known

    def relays(self, module: str, name: str) -> bool:
        """Whether `name` of project module `module` is a top-level function of the project that
        relays (ProjectEntity.relays: an answer of its module's summary), defined there or
        re-exported (`from .evaluate import run` in a package's `__init__.py`).  (sink_calls
        does not ask of a capitalised name, a class's by the naming convention: reading the
        summaries of the modules of the classes a file imports costs a single file's check a
        tenth.)"""
        where = self.project.path_of(module)
        if where is None or not where.endswith("__init__.py") and not self._imports_sinks(module):
            return False  # (told without the module's summary: most called functions are not relays)
        entity = self._function(module, name)
        found = entity is not None and (entity.module == module or self._imports_sinks(entity.module)) \
            and entity.relays()
        if found:
            self.relay_names.add(entity.name)
        return found

    def _imports_sinks(self, module: str) -> bool:
        """Whether project module `module` imports a function of another project module that
        `functions` names, or such a module (`from .convert import to_np`, `import convert`), by
        its text (_imported_sinks): a first test of whether a function of it may relay, without
        its summary.  Once a process, and kept in the summary cache (a map of path to the
        module's digest, the answer and the digests of the modules it imports: a warm run does
        not read the module again); the modules it reads are dependencies of the asking file."""
        found = self._sink_importers.get(module)
        if found is None:
            found = self._sink_importers[module] = self._find_imported_sinks(module)
        self.project._touch_deps(found[1])
        return found[0]

    def _find_imported_sinks(self, module: str) -> tuple:
        project = self.project
        where = project.path_of(module)
        digest = project.digest_of(where) if where is not None else None
        if digest is None:
            return False, {}
        if self._relay_map is None:
            store = project.cache()
            self._relay_map = store.maps("relays") if store is not None else False
        if self._relay_map:
            kept = _read_relay_entry(self._relay_map.get(where), digest)
            if kept is not None and all(project.digest_of(p) == d for p, d in kept[1].items()):
                return kept[0], {where: digest, **kept[1]}
        text = _module_text(project, where)
        if text is None:
            return False, {where: digest}
        calls, deps = self._imported_sinks(text, module, where)
        self._relay_calls[where] = (digest, calls, deps)  # (relays_in asks the same of its text)
        found = bool(calls)
        if self._relay_map and where not in project.restamped and all(d is not None for d in deps.values()):
            self._relay_map.set(where, _relay_entry(digest, found, deps))
        return found, {where: digest, **deps}

    def reexported(self, module: str, name: str, where: str) -> bool:
        """Whether `name`, imported from package `module` (its `__init__.py` at `where`), is a
        function of another module of the package that `functions` names (`from .utils import
        to_np` there); that module is a dependency of the asking file."""
        if not where.endswith("__init__.py"):
            return False
        entity = self._function(module, name)
        if entity is None or entity.module == module:
            return False
        real = self.project.path_of(entity.module)
        return real is not None and entity.name in self.functions(real)

    def _function(self, module: str, name: str):
        """The ProjectEntity of top-level function `name` that project module `module` defines
        or imports, else None."""
        f = self.project.fact(f"{module}.{name}")
        entity = f.node if f is not None and f.kind == "function" else None
        if entity is None or not hasattr(entity, "relays") or "." in entity.path:
            return None
        return entity

    def relays_in(self, walker, func) -> bool:
        """Whether top-level function `func` of the module of summary walker `walker` calls, by
        its text, a function of a project module the module imports that `functions` names (one
        level: not a function that calls a relay); the modules it imports are dependencies of
        what is being computed (the summary's answer)."""
        lines = walker.lines
        module = walker.module
        if lines is None or module is None:
            return False
        where = self.project.path_of(module)
        if where is None:
            return False
        digest = self.project.digest_of(where)
        found = self._relay_calls.get(where)
        if found is None or found[0] != digest:
            found = self._relay_calls[where] = (digest, *self._imported_sinks(lines.text, module, where))
        _, calls, deps = found
        self.project._touch_deps(deps)
        if not calls:
            return False
        segment = walker.source_of(func)
        return any(c in segment for c in calls)

    def _imported_sinks(self, text: str, module: str, where: str) -> tuple:
        """(what calls of the functions `functions` names of the project modules the text
        imports look like in it (`to_np(`, `U.`), {path: digest} of those modules)."""
        project = self.project
        calls, deps = set(), {}
        for target, imported, local in runtime_imports(text, module, where.endswith("__init__.py")):
            at = project.path_of(target)
            if at is not None:
                deps[at] = project.digest_of(at)
                names = self.functions(at)
                if imported is None:
                    if names:
                        calls.add(local + ".")
                    continue
                elif imported == "*":
                    calls.update(n + "(" for n in names)
                    continue
                elif imported in names:
                    calls.add(local + "(")
                    self.names.add(local)  # (`from convert import to_np as _to_np`)
                    continue
            if imported is not None and imported != "*" and (at is None or at.endswith("__init__.py")):
                # `from . import convert` (also in a namespace package): the module of that name.
                sub = project.path_of(f"{target}.{imported}")
                if sub is not None:
                    deps[sub] = project.digest_of(sub)
                    if self.functions(sub):
                        calls.add(local + ".")
        return frozenset(calls), deps

    def methods(self, where: str, cls: str) -> frozenset:
        """The names of the methods of class `cls` of the module at `where` whose text holds a
        needle of such a rule, its bases' of that module included (as `functions`,
        source.class_methods); not `__init__` and the like, which no attribute call names."""
        project = self.project
        key = (where, cls)
        known = self._methods.get(key)
        if known is None:
            if not self._needles_of(where)[0]:
                known = frozenset()
            else:
                record = self._record(where)
                known = record["methods"].get(cls)
                if known is None:
                    known, record["keepers"][cls] = self._find_methods(where, cls, True)
                    record["methods"][cls] = known
                    self._unsaved.add(where)
            self._methods[key] = known
        project.touched[where] = project.digest_of(where)
        return known

    def constructs(self, where: str, cls: str) -> bool:
        """Whether the constructor of class `cls` of the module at `where` (the first `__init__`
        of it and its bases of that module, as `methods`) holds a needle of such a rule, by its
        text: a call of the class may report at its arguments (`Recorder(out)`, where
        `__init__` does `self.values = values.numpy()`; walker._method_argument_sinks)."""
        key = (where, cls)
        known = self._ctors.get(key)
        if known is None:
            known = False
            if self._needles_of(where)[0]:
                record = self._record(where)
                known = record["ctors"].get(cls)
                if known is None:
                    known = record["ctors"][cls] = self._find_constructor(where, cls)
                    self._unsaved.add(where)
            self._ctors[key] = known
        self.project.touched[where] = self.project.digest_of(where)
        return known

    def _lines_of(self, where: str, text: str) -> list:
        """source.class_lines of the text of the module at `where`, once a process."""
        lines = self._class_lines.get(where)
        if lines is None:
            lines = self._class_lines[where] = class_lines(text)
        return lines

    def _find_constructor(self, where: str, cls: str) -> bool:
        text, tests = self._text(where)
        if text is None:
            return False
        lines = self._lines_of(where, text)
        segment = _class_method(text, cls, "__init__", lines)
        return segment is not None and any(admits(segment) for admits in tests)

    def keepers(self, where: str, cls: str) -> frozenset:
        """The names of the methods of class `cls` of the module at `where` (its bases' of that
        module included) that keep one of their parameters in an attribute of the instance
        (`self.last = v`, `self.vals.append(v)`) which a method that `methods` names reads
        (`return self.last.numpy()`), by their text: a call of one hands its argument to that
        method (walker.kept_sinks).  Found with `methods`, and kept with them."""
        key = (where, cls)
        known = self._keepers.get(key)
        if known is None:
            if not self._needles_of(where)[0]:
                known = frozenset()
            else:
                record = self._record(where)
                known = record["keepers"].get(cls)
                if known is None:  # (a record of before keepers were kept too)
                    record["methods"][cls], known = self._find_methods(where, cls, True)
                    record["keepers"][cls] = known
                    self._unsaved.add(where)
            self._keepers[key] = known
            self.kept.update(known)
        self.project.touched[where] = self.project.digest_of(where)
        return known

    def _find_methods(self, where: str, cls: str, keepers: bool = False):
        """`methods` of class `cls`; with `keepers`, (that, `keepers` of it)."""
        text, tests = self._text(where)
        if text is None:
            return (frozenset(), frozenset()) if keepers else frozenset()
        found: set = set()
        others = []  # (name, text) of its methods, for `keepers`
        lines = self._lines_of(where, text)
        todo, seen = [cls], set()
        while todo:  # (the bases the module defines, by the names they are written with)
            c = todo.pop()
            if c in seen or not c.isidentifier():
                continue
            seen.add(c)
            for _cls, bases, name, segment in class_methods(text, c, lines):
                todo.extend(bases)
                if name.startswith("__"):
                    continue
                if any(admits(segment) for admits in tests):
                    found.add(name)
                if keepers:
                    others.append((name, segment))
        if not keepers:
            return frozenset(found)
        kept: set = set()
        if found:
            readers = [(name, segment) for name, segment in others if name in found]
            for name, segment in others:
                for m in _KEEPS.finditer(segment):
                    attr = m.group(1)
                    if any(other != name and _reads(s, attr) for other, s in readers):
                        kept.add(name)
                        break
        # (Each record of the module keeps both, so that neither is searched for again.)
        return frozenset(found), frozenset(kept)

    def triggers(self, where: str, rules: tuple) -> tuple:
        """({name: method names} the `imported_triggers` of each of `rules` finds in the module
        at `where`, ...), from one read of it."""
        project = self.project
        key = (where, rules)
        known = self._triggers.get(key)
        if known is None:
            matched = self._needles_of(where)[1]
            wanted = [cls.code in matched for cls in rules]
            if any(wanted):
                kept = self._record(where)["triggers"]
                missing = [cls for cls, want in zip(rules, wanted) if want and cls.code not in kept]
                if missing:
                    text = _module_text(project, where)
                    for cls in missing:
                        kept[cls.code] = cls.imported_triggers(text) if text is not None else {}
                    self._unsaved.add(where)
                known = tuple(kept[cls.code] if want else {} for cls, want in zip(rules, wanted))
            else:
                known = tuple({} for _ in rules)
            self._triggers[key] = known
        project.touched[where] = project.digest_of(where)
        return known

    def _needles_of(self, where: str) -> tuple:
        """(the function tests (Rule.through_admits) of the rules that report through calls
        whose needles the bytes of the module at `where` hold, the codes of the rules whose
        `imported_needle` they match); ((), frozenset()) for a module that holds none, or that
        cannot be read.  A module that holds none is nothing to search, and its digest is kept
        in the summary cache (a map of path to digest, a file a directory, `flush`): a process that
        checks a file after an edit does not test the modules it imports again."""
        found = self._needles.get(where)
        if found is None:
            project = self.project
            digest = project.digest_of(where)
            if self._plain is None:
                store = project.cache()
                self._plain = store.maps("plain") if store is not None else False
            if digest is None or self._plain and self._plain.get(where) == digest:
                found = ((), frozenset())
            else:
                record = self._record(where)
                codes = record["needles"]
                if codes is None:
                    data = project.contents(where)
                    if data is None:
                        codes = (frozenset(), frozenset())  # (gone since its digest was taken)
                    else:
                        codes = (frozenset(cls.code for cls in self.rules if cls.through_bytes(data)),
                                 frozenset(cls.code for cls in self.trigger_rules if cls.imported_needle.search(data)))
                        # (A class that names a base may inherit a needle from another module:
                        # _project_bases, whose answer the module's record keeps.)
                        if codes[0] or codes[1] or _BASED_CLASS_BYTES.search(data) is not None:
                            record["needles"] = codes
                            self._unsaved.add(where)
                        elif self._plain and where not in project.restamped:
                            self._plain.set(where, digest)
                found = ([cls.through_admits for cls in self.rules if cls.code in codes[0]], codes[1])
            self._needles[where] = found
        return found

    def _record(self, where: str) -> dict:
        """What `_needles_of`, `functions`, `methods` and `triggers` found in the module at
        `where`, from its text alone: {"needles": (codes, codes) or None, "functions": names or
        None, "methods": {class: names}, "triggers": {rule code: {name: method names}}, "plain":
        {function or class.method: plain_parameters}}, each part once computed.  Kept in the summary cache for the module's content
        (summary_store.py), so that a process that checks a file after an edit does not search
        again the modules it imports.  Only for a module whose bytes hold a needle: the others'
        digests are a map (`_needles_of`)."""
        found = self._records.get(where)
        if found is None:
            found = self._records[where] = {"needles": None, "functions": None, "methods": {}, "keepers": {},
                                             "triggers": {}, "bases": None, "plain": {}, "ctors": {}}
            project = self.project
            store = project.cache()
            digest = project.digest_of(where) if store is not None else None
            entry = store.load(where, digest, ".text") if digest is not None else None
            if entry is not None:
                try:
                    _read_record(entry, found)
                except (KeyError, TypeError, ValueError, AttributeError):
                    # (not an entry we wrote)
                    found.update(needles=None, functions=None, methods={}, keepers={}, triggers={}, bases=None,
                                 plain={}, ctors={})
        return found

    def flush(self, store) -> None:
        """Write the records the summary cache lacks a part of (Project.flush), and the digests
        of the modules found to hold no needle."""
        project = self.project
        if self._plain:
            self._plain.flush()
        if self._relay_map:
            self._relay_map.flush()
        for where in self._unsaved:
            record = self._records[where]
            digest = project.digest_of(where)
            if digest is None or where in project.restamped:
                continue  # (a file that changed while it was read: what was found may be of both)
            needles, functions = record["needles"], record["functions"]
            store.save(where, digest, {
                "needles": None if needles is None else [sorted(needles[0]), sorted(needles[1])],
                "functions": None if functions is None else sorted(functions),
                "methods": {c: sorted(names) for c, names in record["methods"].items()},
                "keepers": {c: sorted(names) for c, names in record["keepers"].items()},
                "triggers": {code: {name: sorted(m) for name, m in by_name.items()}
                             for code, by_name in record["triggers"].items()},
                "bases": None if record["bases"] is None else {c: [list(b) for b in bases]
                                                               for c, bases in record["bases"].items()},
                "plain": {part: sorted(names) for part, names in record["plain"].items()},
                "ctors": record["ctors"],
            }, ".text")
        self._unsaved.clear()

    def plain_parameters(self, where: str, name: str, method: str | None = None) -> frozenset:
        """The parameters of function `name` (or of method `method` of class `name`) of the
        module at `where` for which a torch tensor that requires no grad is worth asking the
        rules (`Rule.through_plain_parameters`: what TNS202 sees copy-constructed,
        `torch.tensor(mean)`), by its text; empty for a class that defines `__new__`."""
        key = (where, name, method)
        known = self._plain_params.get(key)
        if known is None:
            record = self._record(where)
            part = name if method is None else f"{name}.{method}"
            known = record["plain"].get(part)
            if known is not None:
                self._plain_params[key] = known
                return known
            known = frozenset()
            text = self._plain_text(where)
            if text is not None:
                if method is None:
                    segment = top_level_function(text, name)
                else:
                    lines = self._lines_of(where, text)
                    segment = _class_method(text, name, method, lines)
                if segment is not None:
                    known = _plain_parameters(self.rules, segment)
            record["plain"][part] = known
            self._unsaved.add(where)
            self._plain_params[key] = known
        return known

    def plain_through(self, where: str, target: str, name: str, method: str | None = None) -> frozenset:
        """plain_parameters of `name` as project module `target` (at `where`) binds it
        (_reexported)."""
        return self._reexported(lambda w, n: self.plain_parameters(w, n, method), where, target, name, frozenset())

    def constructs_through(self, where: str, target: str, name: str) -> bool:
        """constructs of class `name` as project module `target` (at `where`) binds it
        (_reexported)."""
        return self._reexported(self.constructs, where, target, name, False)

    def _reexported(self, ask, where: str, target: str, name: str, empty):
        """`ask(path, name)` of `name` where project module `target` (at `where`) has it: where a
        package's `__init__.py` imports it from another module of the project (`from
        .transforms import Normalize` there), of that module's (a dependency of the asking
        file's result), at most five packages deep."""
        for _depth in range(5):
            known = ask(where, name)
            if known or not where.endswith("__init__.py"):
                return known
            module, imported = self._reexports_of(where, target).get(name, (None, None))
            real = self.project.path_of(module) if module is not None and module != target else None
            if real is None:
                return known
            self.project.touched[real] = self.project.digest_of(real)
            where, target, name = real, module, imported
        return empty

    def _plain_text(self, where: str) -> str | None:
        """The text of the module at `where` where its bytes hold a `Rule.through_plain_needles`
        (plain_parameters), once a process."""
        if where not in self._plain_texts:
            data = self.project.contents(where)
            held = data is not None and any(n.encode() in data for cls in self.rules for n in cls.through_plain_needles)
            self._plain_texts[where] = _module_text(self.project, where) if held else None
        return self._plain_texts[where]

    def _find(self, where: str) -> frozenset:
        text, tests = self._text(where)
        if text is None:
            return frozenset()
        return frozenset(name for name, segment in top_level_functions(text)
                         if any(admits(segment) for admits in tests))

    def hands_on(self, where: str) -> frozenset:
        """The names of the top-level functions of the module at `where` that `functions` does
        not name and that call one it names by its name (`return ece(torch.softmax(logits, 1),
        y)`): they may hand it what they are given (one level; asked where a file calls one,
        sink_calls, walker.call_sinks), once a process."""
        known = self._hands.get(where)
        if known is None:
            own = self.functions(where)
            text = self._text(where)[0] if own else None
            known = self._hands[where] = frozenset() if text is None else frozenset(
                name for name, segment in top_level_functions(text) if name not in own and _calls_one_of(
                    segment, own, name))
        return known

    def _text(self, where: str) -> tuple:
        """(the text of the module at `where`, the function tests of such rules whose needles it
        holds: Rule.through_admits), or (None, ()) when it holds none; read once (`functions` and
        `methods` ask)."""
        found = self._texts.get(where)
        if found is None:
            found = self._texts[where] = self._read(where)
        return found

    def _read(self, where: str) -> tuple:
        tests = self._needles_of(where)[0]
        if not tests:
            return None, ()
        text = _module_text(self.project, where)
        return (text, tests) if text is not None else (None, ())

    def check_method(self, walker, classdef, name: str, attrs: dict, args: dict | None = None) -> list:
        """What those rules find inside method `name` of class `classdef` of a project module
        (whose summary walker is `walker`) when the instance's attributes `attrs` ({attr: fact})
        are what one constructor call passed, and not with the class's own, or when a call
        passes the method's parameters `args` ({parameter: fact}), and not without them:
        [(code, line, how), ...] (walker.method_sinks, walker.call_sinks; `how`: _differ's)."""
        info = walker.classes.get(id(classdef))
        method = info.method(name)[0] if info is not None else None
        positional = (method.args.posonlyargs + method.args.args) if method is not None else []
        if not positional or not is_plain_method(method) or info.self_fact is None:
            return []  # (`def show(*args)` names no instance)
        me = positional[0].arg

        def given(w, empty: bool):
            cls = w.classes.get(id(classdef))
            if cls is None or cls.self_fact is None:
                return None, {}
            if empty:
                return cls, {}
            out = dict(args) if args else {}
            if attrs:
                own = cls.self_fact.attrs
                merged = dict(own.items()) if own is not None else {}
                merged.update(attrs)
                out[me] = cls.self_fact.but(attrs=merged)
            return cls, out

        def opaque(w):
            # (What the call gives, none of it a torch value: _differ's baseline where the module
            # gets no torch rule of its own.)
            cls, out = given(w, False)
            if attrs and me in out:
                out[me] = out[me].but(attrs={**out[me].attrs, **dict.fromkeys(attrs, OTHER_FACT)})
            return cls, {p: OTHER_FACT if args and p in args else f for p, f in out.items()}

        return self._differ(walker, method, given, ("method", classdef.lineno, name),
                            [*attrs.values(), *(args.values() if args else ())], opaque)

    def check(self, walker, func, given) -> list:
        """What those rules find inside function `func` of a project module (whose summary walker
        is `walker`) for the call's arguments `given`, and not with its parameters unknown:
        [(code, line, how), ...] (`how`: "p" where what is reported is a parameter of a module
        the call passes, else "")."""
        # (The parameters the call gives a literal are unknown facts with its truth: kept.)
        return self._differ(walker, func, lambda w, empty: (None, {} if empty else given), (func.col_offset,),
                            given.values(),
                            lambda w: (None, {p: f if f.kind == UNKNOWN else OTHER_FACT for p, f in given.items()}))

    def _differ(self, walker, func, given, key: tuple, facts, opaque) -> list:
        """The findings in `func` with the parameters `given(w, False)` gives ((class of a method or
        None, {name: fact}), in the fresh walker `w`) and not with those of `given(w, True)`,
        walked by a fresh walker of the module's tree with those rules on, in default mode (only
        what is certain crosses).  `facts`: the facts given (how certainly they require grad);
        `key`: the walk's own key among those of `func`'s line (the baseline is kept).

        That baseline, the parameters unknown, is what the module's own check reports (where a
        parameter reads as a module: `for p in net.parameters(): p.clamp_(-c, c)`).  A module
        that gets no torch rule of its own (it neither mentions torch nor imports a module of
        the project that does: engine.lint_text) reports none of it: there the baseline is the
        walk with what the call gives replaced by values that are no torch value (`opaque(w)`),
        what the call's torch values add being the findings."""
        lines = walker.lines
        if lines is None:
            return []
        text = lines.text
        segment = walker.source_of(func)
        rules = [cls for cls in self.rules if cls.through_scope_test(text)(segment)]
        relay = func.name in self.relay_names and self.relays_in(walker, func) or self._calls_own(walker, segment,
                                                                                                func.name)
        if relay:
            # A function that hands what it is given to one that may report (relays): the
            # rules that report at such a call, asked at its calls.
            rules += [cls for cls in self.rules if cls not in rules]
        if not rules:
            return []
        project = self.project
        options = project.options or Options()
        if options.strict:
            options = options.replace(strict=False)
        floor = min((_must_grad(f) for f in facts), default=Grad.YES)

        def found(empty) -> dict:
            ctx = Context(lines, options)
            ctx.through_call = floor
            if relay:
                ctx.sink_names = frozenset(self.names)
            domains = make_domains({k for cls in rules for k in cls.domains}, options, text)
            w = Walker(walker.tree, [cls(options) for cls in rules], ctx, None, domains, project=project,
                       module=walker.module, module_is_package=walker.module_is_package)
            try:
                w.run_module()
                cls, args = given(w, empty) if empty is not None else opaque(w)
                w.check_function(func, args, cls)
            except (Reparse, RecursionError):
                return {}
            finally:
                w.release()
            # (code, line) -> "p" where what is reported is a leaf that requires grad, a
            # parameter of a module the call passes (Context.through_leaves), else "".
            return {(v.code, v.line): "p" if (v.code, v.line) in ctx.through_leaves else ""
                    for v in ctx.violations if func.lineno <= v.line <= func.end_lineno}

        if not self._checked_with_torch(walker):
            baseline = found(None)  # (its baseline is this call's)
        else:
            key = (walker.module, func.lineno, *key, floor)
            if key not in self._baselines:
                self._baselines[key] = found(True)
            baseline = self._baselines[key]
        return sorted((code, line, how) for (code, line), how in found(False).items() if (code, line) not in baseline)

    def _calls_own(self, walker, segment: str, name: str) -> bool:
        """Whether the function `name` of the module of `walker` (its text `segment`) calls
        another top-level function of its module that `functions` names (`return ece(probs, y)`):
        the rules ask at that call what that function reports (walker.call_sinks)."""
        where = self.project.path_of(walker.module) if walker.module is not None else None
        return where is not None and _calls_one_of(segment, self.functions(where), name)

    def _checked_with_torch(self, walker) -> bool:
        """Whether the project module of `walker` gets the rules that need torch when it is
        checked itself (engine.lint_text): it imports torch, or a module of its project that
        does (reach.torch_through_project, whose files the answer depends on)."""
        if walker.saw_torch:
            return True
        project = self.project
        where = project.path_of(walker.module)
        if where is None or walker.lines is None:
            return True
        found = self._with_torch.get(where)
        if found is None:
            looked: list = []
            found = self._with_torch[where] = (torch_through_project(walker.lines.text, where, project.root, looked),
                                               {p: project.digest_of(p) for p in looked})
        project._touch_deps(found[1])
        return found[0]


# A statement of a method that keeps a name in an attribute of what the method is called on, or
# adds it to a list there (`self.last = v`, `self.vals.append(v)`): Through.keepers' text test
# (module_summary.kept_parameters tells which parameter, and whether the method keeps it surely).
_KEEPS = LazyPattern(r"(?m)^[ \t]+\w+\.(\w+)[ \t]*(?:=[ \t]*\w+|\.append\([ \t]*\w+[ \t]*\))[ \t]*(?:#[^\n]*)?$")


def _reads(segment: str, attr: str) -> bool:
    """Whether a method's text names attribute `attr` of something (`.last`, not `.last_step`)."""
    needle = "." + attr
    i = segment.find(needle)
    while i != -1:
        end = i + len(needle)
        if end == len(segment) or not (segment[end].isalnum() or segment[end] == "_"):
            return True
        i = segment.find(needle, end)
    return False


def _names(x) -> frozenset:
    if type(x) is not list or not all(type(n) is str for n in x):
        raise ValueError("not a record we wrote")
    return frozenset(x)


# A class header at the margin that names a base (`class LossMeter(AverageMeter):`).
_BASED_CLASS_BYTES = LazyPattern(rb"(?m)^class[ \t]+\w+[ \t]*\([ \t]*\w")


def _module_text(project, where: str) -> str | None:
    """The decoded text of the project module at `where`, or None where it cannot be read or
    decoded."""
    from .source import DecodeError, decode

    data = project.contents(where)
    try:
        return decode(data).text if data is not None else None
    except DecodeError:
        return None


def _relay_entry(digest: str, found: bool, deps: dict) -> str:
    """What the map of Through._imports_sinks keeps of a module: its digest, the answer, and the
    digests of the project modules it imports (the answer holds while they are unchanged)."""
    return "\x00".join([digest, "1" if found else "0", *(f"{p}\x01{d}" for p, d in sorted(deps.items()))])


def _read_relay_entry(value, digest: str) -> tuple | None:
    """(answer, {path: digest}) of a `_relay_entry` made for content `digest`, else None."""
    if type(value) is not str:
        return None
    parts = value.split("\x00")
    if len(parts) < 2 or parts[0] != digest or parts[1] not in ("0", "1"):
        return None
    deps = {}
    for part in parts[2:]:
        p, sep, d = part.partition("\x01")
        if not sep:
            return None
        deps[p] = d
    return parts[1] == "1", deps


def _read_record(entry: dict, record: dict) -> None:
    """Fill `record` (Through._record) from a summary cache entry; ValueError (or KeyError,
    TypeError, AttributeError) when it is not one we wrote."""
    needles, functions, methods, triggers = entry["needles"], entry["functions"], entry["methods"], entry["triggers"]
    if needles is not None and (type(needles) is not list or len(needles) != 2):
        raise ValueError("not a record we wrote")
    record["needles"] = None if needles is None else (_names(needles[0]), _names(needles[1]))
    record["functions"] = None if functions is None else _names(functions)
    record["methods"] = {_str(c): _names(names) for c, names in methods.items()}
    # (An entry of before keepers were kept has none: they are found again, with the methods.)
    record["keepers"] = {_str(c): _names(names) for c, names in entry.get("keepers", {}).items()}
    record["triggers"] = {_str(code): {_str(name): _names(m) for name, m in by_name.items()}
                          for code, by_name in triggers.items()}
    record["plain"] = {_str(part): _names(names) for part, names in entry.get("plain", {}).items()}
    record["ctors"] = {_str(c): _bool(found) for c, found in entry.get("ctors", {}).items()}
    bases = entry.get("bases")
    record["bases"] = None if bases is None else {
        _str(c): tuple((_str(m), _str(n)) for m, n in found) for c, found in bases.items()}


def _bool(x) -> bool:
    if type(x) is not bool:
        raise ValueError("not a record we wrote")
    return x


def _str(x) -> str:
    if type(x) is not str:
        raise ValueError("not a record we wrote")
    return x


def _must_grad(f) -> Grad:
    """Whether a call's argument requires grad on every path; for an iterable of tensors
    (`model.parameters()`), each of them; for an optimizer's groups of them (`param_groups`),
    each of those."""
    if (f.kind == PARAMS or f.kind == SEQ) and f.element is not None:
        el = f.element
        if el.kind == MAPPING and el.attrs and "params" in el.attrs:
            return _must_grad(el.attrs["params"])
        return must_grad(el)
    return must_grad(f)
