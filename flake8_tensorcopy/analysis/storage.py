"""Storage, aliases and versions: the walker's domain for tensors autograd saved (family TNS4).

In one scope it follows, in execution order and across branches and loops (the walker joins
and iterates it like the value facts):

- which names are aliases of another tensor's storage made around autograd's back (`c =
  a.detach()`, `arr = a.detach().numpy()`, `d = a.data`) and which binding of `a` they alias
  (a version number that any rebinding of `a` changes);
- which saved tensors each name's value depends on (a backward through it needs them).

and records, as events placed by the walker (order, branch path): saves (an operation that
needs a tensor for its gradient used it: `saved.saved_tensors`), in-place writes through an
alias, and backward calls with the saves they depend on.  `finish` pairs them: a write through
an alias of a tensor saved earlier, before a backward that depends on that save, all on paths
that can run together.  TNS402 and TNS403 read the pairs (`ctx.domain("storage").writes`).
"""

from __future__ import annotations

import ast
import itertools

from ..model import REQUIRED, Record
from .astutil import all_nodes, bind_arguments, dotted_name, key_prefixes, graph_keys, mentioned_keys, target_elements
from .facts import FUNCTION, TENSOR, UNKNOWN, Device
from .saved import ARRAY_WRITES, WRITES_ANY, is_inplace_method, saved_tensors, storage_key, strip_views
from .walker import Domain, compatible
from ..source import LazyPattern

_BACKWARD_CALLS = frozenset({"backward", "manual_backward", "grad"})
_FRESH = itertools.count(1_000_000)  # versions a join makes (either binding may be the current one)


class Alias(Record):
    """A name whose storage is `base`'s (at `version`), made by `via` ("detach", "numpy" or "data")."""

    _FIELDS = (
        ("base", REQUIRED),
        ("version", REQUIRED),
        ("via", REQUIRED),
        ("anchor", REQUIRED),  # the `.detach()` call or `.data` attribute that made it
        ("named", False),  # bound to a name (`c = a.detach()`), not written inline
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


class Write(Record):
    _FIELDS = (
        ("node", REQUIRED),  # what is reported
        ("alias", REQUIRED),  # an Alias
        ("shown", REQUIRED),  # the source of the tensor or array written into
        ("through", ""),  # " (clamp_() writes into it, utils.py:4)": the function that writes
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


class StorageState:
    """The domain's part of the program state."""

    __slots__ = ("versions", "aliases", "taint")

    def __init__(self, versions=None, aliases=None, taint=None) -> None:
        self.versions: dict[str, int] = versions if versions is not None else {}
        self.aliases: dict[str, frozenset] = aliases if aliases is not None else {}  # key -> {Alias}
        self.taint: dict[str, frozenset] = taint if taint is not None else {}  # key -> save ids

    def copy(self) -> StorageState:
        return StorageState(dict(self.versions), dict(self.aliases), dict(self.taint))

    def join(self, other: StorageState) -> StorageState:
        versions = dict(self.versions)
        for k, v in other.versions.items():
            if versions.get(k, 0) != v:
                versions[k] = next(_FRESH)
        for k in self.versions.keys() - other.versions.keys():
            if self.versions[k] != 0:
                versions[k] = next(_FRESH)
        return StorageState(versions, _union(self.aliases, other.aliases), _union(self.taint, other.taint))

    def __eq__(self, other) -> bool:
        return (isinstance(other, StorageState) and self.versions.keys() == other.versions.keys()
                and self.aliases == other.aliases and self.taint == other.taint)

    __hash__ = None


def _union(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, frozenset()) | v
    return out


class _Query:
    """The value facts at one state, for the `saved` helpers (which take a rule context)."""

    __slots__ = ("walker", "state")

    def __init__(self, walker, state) -> None:
        self.walker = walker
        self.state = state

    def fact(self, node):
        return self.walker.fact(node, self.state)

    def qualname(self, node):
        return self.walker.qualname(node, self.state)

    @property
    def no_grad(self) -> bool:
        return self.state.no_grad

    def short(self, node, limit: int = 40) -> str:
        return self.walker.ctx.short(node, limit)


class StorageScope:
    """The events of one scope, and the writes `finish` found harmful."""

    def __init__(self) -> None:
        # (seq, key, version, save id, path, whether backward reads the values: not what a loss
        # saves only for the version check, nll_loss's input)
        self.saves: list = []
        self.writes_seen: list = []  # (seq, Write, path)
        self.backwards: list = []  # (seq, save ids, path)
        self.writes: list[Write] = []  # the findings: writes through an alias of a saved tensor


class StorageDomain(Domain):
    key = "storage"

    def active(self, walker, frame) -> bool:
        # Without a backward call in the scope's own code nothing here can be reported.
        node = frame.scope.node
        text = walker.source_of(node) if hasattr(node, "end_lineno") else (
            walker.lines.text if walker.lines is not None else None)
        return _calls_backward(node, text)

    def initial(self, walker, frame) -> StorageState:
        return StorageState()

    def start(self, walker, frame) -> StorageScope:
        return StorageScope()

    # ------------------------------------------------------------------ transfer

    def loop_target(self, walker, stmt, state) -> None:
        st = state.doms[self.key]
        for t in target_elements(stmt.target):
            _rebind(st, t)

    def with_item(self, walker, item, state) -> None:
        if item.optional_vars is not None:
            st = state.doms[self.key]
            for t in target_elements(item.optional_vars):
                _rebind(st, t)

    def simple(self, walker, stmt, state) -> None:
        frame = walker.frame
        st: StorageState = state.doms[self.key]
        rec: StorageScope = frame.doms[self.key]
        q = _Query(walker, state)
        # Writes and backwards inside `pytest.raises(...)` provoke the error on purpose.
        record = frame.recording
        record_use = record and not frame.expects_error
        seq, path = frame.seq, frame.path
        if isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                _rebind(st, t)
            return
        nodes = walker.expressions_of(stmt)
        # 1. writes through aliases, also those a function the statement calls makes to what it
        # is passed (`clamp_(a.detach())`, `def clamp_(t): t.clamp_(-1, 1)`)
        if record_use:
            for node, container in _writes(stmt, nodes):
                for alias in _resolve(st, container, q):
                    if alias.via == "numpy" and isinstance(node, ast.Call) and node.func.attr not in ARRAY_WRITES \
                            and not _numpy_write(node):
                        continue
                    if alias.via != "numpy" and isinstance(node, ast.Call) and not is_inplace_method(node.func.attr):
                        continue
                    rec.writes_seen.append((seq, Write(node, alias, q.short(container)), path))
            for node in nodes:
                if type(node) is ast.Call and node.args:
                    for arg, how, said in _helper_writes(node, q):
                        via, _, how = how.rpartition(".")
                        for alias in (_resolve(st, arg, q) if not via else _made_alias(st, arg, via, q)):
                            if how in WRITES_ANY or (how in ARRAY_WRITES if alias.via == "numpy"
                                                     else is_inplace_method(how)):
                                rec.writes_seen.append((seq, Write(arg, alias, q.short(arg), f" ({said})"), path))
        # 2. saved tensors (inputs now, results once the target is bound)
        new_ids = set()
        result_nodes = []
        value = getattr(stmt, "value", None)
        for n in nodes:
            if not isinstance(n, (ast.BinOp, ast.Call)):
                continue
            for expr, what in saved_tensors(n, q):
                if what == "input" or what == "checked":
                    key = _saved_key(expr, q)
                    if key is not None:
                        sid = (id(n), key)
                        new_ids.add(sid)
                        if record:
                            rec.saves.append((seq, key, _version(st, key), sid, path, what == "input"))
                elif value is not None and strip_views(value, q) is n:
                    result_nodes.append(n)
        # 3. backward calls and what they depend on
        deps = _backward_deps(st, nodes, q)
        if deps and record_use:
            rec.backwards.append((seq, deps, path))
        # 4. bindings: versions, aliases, dependency taint
        rhs_taint = frozenset(new_ids)
        if value is not None and st.taint:
            for k in graph_keys(value):
                rhs_taint |= st.taint.get(k, frozenset())
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            aliases = _resolve(st, value, q) if len(targets) == 1 else frozenset()
            for target in targets:
                for el in target_elements(target):
                    key = _rebind(st, el)
                    if key is not None:
                        st.taint[key] = rhs_taint
                    elif isinstance(el, ast.Subscript):
                        key = dotted_name(strip_views(el, q))
                        if key is not None:
                            st.taint[key] = st.taint.get(key, frozenset()) | rhs_taint
                    if key is None or el is not target or isinstance(el, ast.Subscript):
                        continue
                    if aliases:
                        st.aliases[key] = frozenset(
                            Alias(a.base, a.version, a.via, a.anchor, named=True) for a in aliases)
                    if result_nodes:
                        sid = (id(stmt), key)
                        if record:
                            rec.saves.append((seq, key, _version(st, key), sid, path, True))
                        st.taint[key] = st.taint.get(key, frozenset()) | {sid}
        elif isinstance(stmt, ast.AugAssign):
            key = dotted_name(strip_views(stmt.target, q))
            if key is not None and rhs_taint:
                st.taint[key] = st.taint.get(key, frozenset()) | rhs_taint
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if isinstance(call.func, ast.Attribute):
                key = dotted_name(call.func.value)
                if key is not None:
                    taint = frozenset(new_ids)
                    for a in [*call.args, *(k.value for k in call.keywords)]:
                        for k in graph_keys(a):
                            taint |= st.taint.get(k, frozenset())
                    if taint:
                        st.taint[key] = st.taint.get(key, frozenset()) | taint

    # ------------------------------------------------------------------ conclusions

    def finish(self, walker, frame) -> None:
        rec: StorageScope = frame.doms[self.key]
        if not rec.writes_seen or not rec.saves or not rec.backwards:
            return
        for wseq, write, wpath in rec.writes_seen:
            alias = write.alias
            hit = False
            for sseq, key, version, sid, spath, values in rec.saves:
                if key != alias.base or version != alias.version or sseq >= wseq:
                    continue
                if not values and alias.via != "detach":
                    continue  # (a write around the version counter to what backward never reads)
                if not compatible(spath, wpath):
                    continue
                for bseq, deps, bpath in rec.backwards:
                    if bseq > wseq and sid in deps and compatible(bpath, wpath) and compatible(bpath, spath):
                        hit = True
                        break
                if hit:
                    break
            if hit:
                rec.writes.append(write)


def _saved_key(expr, q) -> str | None:
    """storage_key of a saved input, also through `.detach()` (`(y.detach() * w).sum()` saves a
    tensor that shares `y`'s storage and version counter: a write into `y` is one into it)."""
    while True:
        expr = strip_views(expr, q)
        if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "detach" \
                and not expr.args and not expr.keywords:
            expr = expr.func.value
            continue
        return dotted_name(expr)


def _helper_writes(call: ast.Call, q) -> list:
    """[(argument, how the function writes into it, what the message says of it)] for a call of a
    function of the file or of another module of the project that writes in place into the
    parameters those arguments bind (inplace_parameters)."""
    f = q.fact(call.func)
    node = f.node
    if f.kind != FUNCTION or node is None:
        return []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        written = q.walker.inplace_parameters_of(node)
        where = f"line {node.lineno}"
    elif hasattr(node, "inplace_parameters"):  # a function of another module (module_summary)
        written = node.inplace_parameters()
        where = node.where if written else ""
        node = node.node
    else:
        return []
    if not written:
        return []
    how = dict(written)
    name = call.func.id if type(call.func) is ast.Name else call.func.attr if type(call.func) is ast.Attribute \
        else "the function"
    return [(expr, how[p], f"{name}() writes into it, {where}")
            for p, expr in bind_arguments(node, call, False)[0] if p in how]


def _version(st: StorageState, key: str) -> tuple:
    v = st.versions
    return tuple(v.get(p, 0) for p in key_prefixes(key))


def _rebind(st: StorageState, target) -> str | None:
    if isinstance(target, ast.Subscript):
        return None
    key = dotted_name(target)
    if key is None:
        return None
    st.versions[key] = st.versions.get(key, 0) + 1
    prefix = key + "."
    for k in [k for k in st.aliases if k == key or k.startswith(prefix)]:
        del st.aliases[k]
    return key


def _writes(stmt, nodes):
    """(reported node, the tensor or array written into) for each in-place write of `stmt`
    (`nodes`: its expressions)."""
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            for el in target_elements(target):
                if isinstance(el, ast.Subscript):
                    yield el, el.value
    elif isinstance(stmt, ast.AugAssign):
        t = stmt.target
        if isinstance(t, ast.Subscript):
            yield t, t.value
        elif isinstance(t, (ast.Name, ast.Attribute)):
            yield t, t
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            attr = n.func.attr
            if is_inplace_method(attr) or attr in ARRAY_WRITES:
                yield n, n.func.value
            elif _numpy_write(n):
                # `np.fill_diagonal(a, 0)`, `np.copyto(a, b)`, `np.clip(a, 0, 1, out=a)`: what
                # NumPy writes into.
                for kw in n.keywords:
                    if kw.arg == "out":
                        yield n, kw.value
                if attr in NUMPY_WRITERS and n.args and type(n.args[0]) is not ast.Starred:
                    yield n, n.args[0]


# NumPy's functions that write into their first argument.
NUMPY_WRITERS = frozenset({"fill_diagonal", "copyto", "put", "place", "putmask", "put_along_axis"})


def _numpy_write(call: ast.Call) -> bool:
    """Whether `call` is a NumPy function (`np.` or `numpy.`) that writes into an array it is given:
    its first argument (NUMPY_WRITERS) or its `out=`."""
    func = call.func
    owner = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    if owner not in ("np", "numpy"):
        return False
    return func.attr in NUMPY_WRITERS or any(kw.arg == "out" for kw in call.keywords)


def _resolve(st: StorageState, expr, q) -> frozenset:
    """The aliases `expr` writes through: `a.detach()`, `a.detach().numpy()`, `a.data`, or a
    name bound to one of them (and views of any of these)."""
    e = strip_views(expr, q)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        attr = e.func.attr
        inner = e.func.value
        if attr == "detach" and not e.args and not e.keywords:
            return _alias_of(st, inner, "detach", e, q)
        if attr == "numpy" and not e.args and not e.keywords:
            return frozenset(Alias(r.base, r.version, "numpy", r.anchor, r.named) if r.via == "detach" else r
                             for r in _resolve(st, inner, q))
        if attr == "cpu" and not e.args and q.fact(inner).kind == TENSOR and q.fact(inner).device is Device.CPU:
            return _resolve(st, inner, q)
        return frozenset()
    if isinstance(e, ast.Attribute) and e.attr == "data":
        return _alias_of(st, e.value, "data", e, q)
    key = dotted_name(e)
    if key is not None:
        return st.aliases.get(key, frozenset())
    return frozenset()


def _alias_of(st: StorageState, base, via: str, anchor, q) -> frozenset:
    """The alias (`via` "detach" or "data") of the tensor `base` names, made at `anchor`: none
    where `base` names nothing or is no tensor."""
    key = dotted_name(strip_views(base, q))
    if key is None or q.fact(base).kind not in (TENSOR, UNKNOWN):
        return frozenset()
    return frozenset({Alias(key, _version(st, key), via, anchor)})


def _made_alias(st: StorageState, arg, via: str, q) -> frozenset:
    """The alias a function makes of what `arg` passes it and writes through (`def clamp_(t):
    t.detach().clamp_(0)`, `via` "detach()"; `t.data.zero_()`, "data"): as `arg.detach()` or
    `arg.data` written at the call (never named: nothing to fix at the call)."""
    return _alias_of(st, arg, "detach" if via == "detach()" else "data", arg, q)


def _backward_deps(st: StorageState, nodes, q) -> frozenset:
    deps: frozenset = frozenset()
    if not st.taint:
        return deps

    def taint_of(node):
        out = frozenset()
        for k in mentioned_keys(node):
            out |= st.taint.get(k, frozenset())
        return out

    for n in nodes:
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _BACKWARD_CALLS:
            continue
        qn = q.qualname(func)
        if qn in ("torch.autograd.backward", "torch.autograd.grad"):
            roots = n.args[:1] + [k.value for k in n.keywords if k.arg in ("tensors", "outputs")]
            for r in roots:
                deps |= taint_of(r)
        elif isinstance(func, ast.Attribute) and func.attr in ("backward", "manual_backward"):
            deps |= taint_of(func.value)
            for a in n.args[:1]:
                deps |= taint_of(a)
    return deps


# `\b(?:backward|manual_backward|grad)\s*\(`, the word boundary told apart from each match: a
# pattern that starts with one is tried at every position (a tenth of a large module's parse).
_BACKWARD_CALL = LazyPattern(r"(?:backward|grad)\s*\(")


def _calls_backward(root, text: str | None = None) -> bool:
    """Whether the scope's code calls something named `backward`, `manual_backward` or `grad`
    (`torch.autograd.grad`): a text search of its source (a nested function's call only makes
    the domain track a scope it did not need to)."""
    if text is not None:
        for word in ("backward", "grad"):  # (each searched for: faster than the pattern)
            at = text.find(word)
            while at != -1:
                after = at + len(word)
                if _BACKWARD_CALL.match(text, at) is not None:
                    start = at - 7 if word == "backward" and text.startswith("manual_", at - 7) else at
                    if not start or not (text[start - 1].isalnum() or text[start - 1] == "_"):
                        return True
                at = text.find(word, after)
        return False
    return any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None))
               in _BACKWARD_CALLS for n in all_nodes(root))
