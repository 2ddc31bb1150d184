"""Small `ast` helpers the whole analysis uses."""

from __future__ import annotations

import ast
from collections import deque

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def dotted_name(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    t = type(node)
    if t is _Name:
        return node.id
    if t is not _Attribute:
        return None
    parts = [node.attr]
    node = node.value
    while type(node) is _Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not _Name:
        return None
    parts.append(node.id)
    parts.reverse()
    return ".".join(parts)


_Name, _Attribute = ast.Name, ast.Attribute


def kwarg(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def const_bool(node: ast.AST | None) -> bool | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def const(node) -> object:
    return node.value if isinstance(node, ast.Constant) else None


# Fields of each node type that can hold child nodes (never `ctx`: Load/Store/Del objects).
_CHILD_FIELDS: dict = {}


_NONE = ()
# The most frequent node types, spelled out (a quarter faster than the loop over fields below;
# the same children in the same order, which tests/test_walker.py checks on real code).
_SPELLED = {
    ast.Name: lambda n: _NONE,
    ast.Constant: lambda n: _NONE,
    ast.Attribute: lambda n: [n.value],
    ast.keyword: lambda n: [n.value],
    ast.Call: lambda n: [n.func, *n.args, *n.keywords],
    ast.BinOp: lambda n: [n.left, n.op, n.right],
    ast.Subscript: lambda n: [n.value, n.slice],
    ast.Assign: lambda n: [*n.targets, n.value],
    ast.Expr: lambda n: [n.value],
    ast.Compare: lambda n: [n.left, *n.ops, *n.comparators],
    ast.UnaryOp: lambda n: [n.op, n.operand],
    ast.Tuple: lambda n: list(n.elts),
    ast.List: lambda n: list(n.elts),
}


def child_nodes(node) -> list:
    """ast.iter_child_nodes without the expr_context objects, as a list (faster; an empty
    tuple for a leaf: read it, never change it)."""
    t = type(node)
    spelled = _SPELLED.get(t)
    if spelled is not None:
        return spelled(node)
    return _child_nodes(node, t)


def _child_nodes(node, t) -> list:
    fields = _CHILD_FIELDS.get(t)
    if fields is None:
        fields = _CHILD_FIELDS[t] = tuple(f for f in t._fields if f != "ctx")
    out = []
    for f in fields:
        v = getattr(node, f, None)
        if v is None:
            continue
        if isinstance(v, list):  # (a function body not parsed yet, lazytree.LazyBody, is read)
            for x in v:
                if isinstance(x, _AST):
                    out.append(x)
        elif isinstance(v, _AST):
            out.append(v)
    return out


_AST = ast.AST


def all_nodes(node) -> list:
    """`node` and every node below it (a faster `ast.walk`, without expression contexts)."""
    out = [node]
    i = 0
    while i < len(out):
        out.extend(child_nodes(out[i]))
        i += 1
    return out


def walk(node):
    """`ast.walk(node)`: the same nodes (expression contexts included) in the same order, faster
    (each type's fields read by name; no generator per node)."""
    todo = deque([node])
    popleft, append, extend = todo.popleft, todo.append, todo.extend
    fields_of = _FIELDS_OF
    while todo:
        node = popleft()
        t = type(node)
        fields = fields_of.get(t)
        if fields is None:
            fields = fields_of[t] = t._fields
        for name in fields:
            v = getattr(node, name, None)
            if isinstance(v, _AST):
                append(v)
            elif isinstance(v, list):
                extend([x for x in v if isinstance(x, _AST)])
        yield node


_FIELDS_OF: dict = {}


def expressions(node) -> list:
    """`node` and the expressions below it, not entering lambdas, comprehensions or nested
    function and class bodies (they run at another time)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        for c in child_nodes(n):
            if not isinstance(c, _DEFERRED):
                stack.append(c)
    return out


_DEFERRED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef)


def parameter_names(args: ast.arguments) -> list:
    """The names a function's (or lambda's) parameters bind, `*args` and `**kwargs` too (not
    the parameters of a lambda in a default value, which `ast.walk(args)` would also give)."""
    names = [a.arg for a in args.posonlyargs]
    names += [a.arg for a in args.args]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg is not None:
        names.append(args.kwarg.arg)
    return names


def contains(outer, inner) -> bool:
    return any(n is inner for n in walk(outer))


def yields(func) -> bool:
    """Whether function `func` is a generator: a `yield` in its own body, not in a nested
    function, class or lambda."""
    stack = list(func.body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Yield or t is ast.YieldFrom:
            return True
        if not isinstance(n, _DEFERRED):
            stack.extend(child_nodes(n))
    return False


def local_names(func) -> frozenset:
    """The names function `func` binds in its own scope: its parameters, and what its body
    assigns, defines, imports or catches (not in a nested function, class or comprehension;
    not those it declares `global` or `nonlocal`).  Kept per def."""
    try:
        return func.local_names
    except AttributeError:
        pass
    names = set(parameter_names(func.args)) if not isinstance(func, ast.ClassDef) else set()
    declared = set()
    stack = list(func.body) if type(func.body) is list else []
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            names.add(n.name)
            continue
        if t is ast.Lambda or t in _COMPREHENSION_TYPES:
            continue
        if t is ast.Name:
            if type(n.ctx) is not ast.Load:
                names.add(n.id)
            continue
        if t is ast.Global or t is ast.Nonlocal:
            declared.update(n.names)
        elif t is ast.Import or t is ast.ImportFrom:
            names.update((a.asname or a.name.split(".")[0]) for a in n.names if a.name != "*")
        elif t is ast.ExceptHandler and n.name:
            names.add(n.name)
        elif t is ast.MatchAs or t is ast.MatchStar:
            if n.name:
                names.add(n.name)
        elif t is ast.MatchMapping and n.rest:
            names.add(n.rest)
        stack.extend(child_nodes(n))
    result = func.local_names = frozenset(names - declared)  # (kept on the node: it dies with its tree)
    return result


_COMPREHENSION_TYPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def free_names(func) -> frozenset:
    """The names function `func` (or a function or lambda nested in it) reads and does not bind
    itself: what it sees of the scopes around it.  Kept per def."""
    try:
        return func.free_names
    except AttributeError:
        pass
    read = {n.id for n in ast.walk(func) if type(n) is ast.Name and type(n.ctx) is ast.Load}
    result = func.free_names = frozenset(read - local_names(func))  # (kept on the node)
    return result


def own_nodes(body):
    """The nodes of a function's body that run as part of it: not in a nested function, class
    or lambda (those nodes are not given either)."""
    stack = list(body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef or t is ast.Lambda:
            continue
        yield n
        stack.extend(child_nodes(n))


def bool_binding(scope_node, name: str) -> bool | None:
    """The truth `name` holds in scope `scope_node` (a def, or the module) where it binds `name`
    once, to a literal (`train = False`), and is not a parameter; None otherwise."""
    if not isinstance(scope_node, ast.Module) and name in parameter_names(scope_node.args):
        return None
    value, stores = None, 0
    for n in own_nodes(scope_node.body):
        t = type(n)
        if t is ast.Name:
            if n.id == name and type(n.ctx) is not ast.Load:
                stores += 1
        elif t is ast.Assign:
            if len(n.targets) == 1 and type(n.targets[0]) is ast.Name and n.targets[0].id == name:
                value = const_bool(n.value)
        elif t is ast.Global or t is ast.Nonlocal or t is ast.Import or t is ast.ImportFrom:
            if any(getattr(a, "asname", None) == name or getattr(a, "name", a) == name for a in n.names):
                return None
    return value if stores == 1 else None


def suspends(stmt) -> bool:
    """Whether a statement can suspend its generator or coroutine (`yield`, `await`)."""
    return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in walk(stmt))


def statements(body):
    """Every statement of a body, nested blocks included (not nested scopes' bodies)."""
    stack = list(reversed(body))
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        subs = []
        for f in ("body", "orelse", "finalbody"):
            v = getattr(s, f, None)
            if type(v) is list:
                subs.extend(v)
        for h in getattr(s, "handlers", None) or ():
            subs.extend(h.body)
        for c in getattr(s, "cases", None) or ():
            subs.extend(c.body)
        stack.extend(reversed(subs))


def target_elements(target):
    """The names, attributes and subscripts an assignment target binds."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            yield from target_elements(e)
    elif isinstance(target, ast.Starred):
        yield from target_elements(target.value)
    else:
        yield target


def key_prefixes(key: str) -> list:
    """`a.b.c` -> [`a`, `a.b`, `a.b.c`]."""
    parts = key.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def mentioned_keys(node, graph: bool = False) -> set:
    """Every dotted name (and each prefix of it) an expression reads.  `graph`: only those whose
    autograd graph its value may carry (graph_keys)."""
    keys = set()
    stack = [node]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is _Name:
            keys.add(n.id)
            continue
        if t is _Attribute:
            if graph and n.attr == "data":
                continue
            k = dotted_name(n)
            if k is not None:
                keys.update(key_prefixes(k))
                continue  # its prefixes are in
        elif graph and t is ast.Call and type(n.func) is _Attribute and n.func.attr in _GRAPHLESS_METHODS:
            stack.extend(n.args)
            stack.extend(k.value for k in n.keywords)
            continue
        stack.extend(child_nodes(n))
    return keys


# What gives a value without the graph of its receiver (graph_keys).
_GRAPHLESS_METHODS = frozenset({"detach", "item", "tolist", "numpy", "size", "dim", "numel"})


def graph_keys(node) -> set:
    """The dotted names (and their prefixes) an expression reads whose autograd graph its value
    may carry: `mentioned_keys`, less what it reads only through `.detach()`, `.data` or a
    method that gives a plain value (`.item()`, `.size()`)."""
    return mentioned_keys(node, True)


def is_function(node) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))


def decorator_names(func) -> set:
    return {dotted_name(d.func if isinstance(d, ast.Call) else d) for d in func.decorator_list}


_RECORD_DECORATORS = frozenset({"dataclass", "dataclasses.dataclass"})
_NAMED_TUPLES = frozenset({"NamedTuple", "typing.NamedTuple"})


def record_fields(cls: ast.ClassDef) -> tuple | None:
    """((positional field names), (keyword-only ones), (fields its methods assign)) of a record
    class, whose generated constructor makes its fields attributes holding what it is passed: a
    `@dataclass` without bases, or a `NamedTuple`; None for another class, or one whose
    constructor is not all generated (its own `__init__`, `__post_init__`, `__new__`, an
    `InitVar`).  Kept per class."""
    try:
        return cls.record_fields
    except AttributeError:
        pass
    result = cls.record_fields = _record_fields(cls)  # (kept on the node: it dies with its tree)
    return result


def named_tuple_fields(cls: ast.ClassDef) -> tuple | None:
    """The fields, in order, of a `NamedTuple` class (its instances unpack and index by
    position), else None."""
    if len(cls.bases) != 1 or dotted_name(cls.bases[0]) not in _NAMED_TUPLES:
        return None
    fields = record_fields(cls)
    return tuple(fields[0]) if fields is not None else None


def _record_fields(cls: ast.ClassDef) -> tuple | None:
    decorators = cls.decorator_list
    names = {dotted_name(d.func if isinstance(d, ast.Call) else d) for d in decorators}
    if names & _RECORD_DECORATORS:
        if cls.bases or cls.keywords or len(decorators) != 1:
            return None  # (a base's fields come first; another decorator may change the class)
        d = decorators[0]
        kw_only = isinstance(d, ast.Call) and any(k.arg == "kw_only" and const_bool(k.value) for k in d.keywords)
        if isinstance(d, ast.Call) and any(k.arg == "init" and const_bool(k.value) is False for k in d.keywords):
            return None
    elif len(cls.bases) == 1 and dotted_name(cls.bases[0]) in _NAMED_TUPLES and not decorators:
        kw_only = False
    else:
        return None
    positional, keyword, fields = [], [], set()
    methods = []
    for item in cls.body:
        t = type(item)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            if item.name in ("__init__", "__post_init__", "__new__"):
                return None
            methods.append(item)
        elif t is ast.AnnAssign and type(item.target) is ast.Name:
            ann = item.annotation
            head = dotted_name(ann.value if type(ann) is ast.Subscript else ann) or ""
            last = head.rsplit(".", 1)[-1]
            if last == "ClassVar":
                continue
            if last == "InitVar":
                return None
            if last == "KW_ONLY":
                kw_only = True
                continue
            v = item.value
            here_kw = kw_only
            if type(v) is ast.Call and (dotted_name(v.func) or "").rsplit(".", 1)[-1] == "field":
                if any(k.arg == "init" and const_bool(k.value) is False for k in v.keywords):
                    continue
                if any(k.arg == "kw_only" and const_bool(k.value) for k in v.keywords):
                    here_kw = True
            (keyword if here_kw else positional).append(item.target.id)
            fields.add(item.target.id)
    assigned = set()
    for m in methods:
        for n in ast.walk(m):
            if type(n) is ast.Attribute and type(n.ctx) is not ast.Load and n.attr in fields:
                assigned.add(n.attr)
            elif type(n) is ast.Call and dotted_name(n.func) in ("setattr", "object.__setattr__"):
                assigned |= fields  # (`object.__setattr__(self, ...)` in a frozen class's method)
    return tuple(positional), tuple(keyword), tuple(sorted(assigned))


_PROPERTIES = frozenset({"property", "cached_property"})


def is_property(func) -> bool:
    """A method decorated `@property`, `@functools.cached_property`, `@ft.cached_property`."""
    return any(n is not None and n.rsplit(".", 1)[-1] in _PROPERTIES for n in decorator_names(func))


def is_plain_method(func) -> bool:
    """A method that takes the instance first (not a static or class method)."""
    names = decorator_names(func)
    return "staticmethod" not in names and "classmethod" not in names


def bind_arguments(callee, call: ast.Call, skip_first: bool = False) -> tuple:
    """([(parameter, argument expression)], complete) for `call` of the def `callee` (`skip_first`:
    a method called on an instance).  Positional arguments before a `*args` and keywords bind by
    name; `complete` is False when a `*args` or `**kwargs` of the call may pass more.  Arguments
    that match no parameter are left out (the call raises TypeError)."""
    args = callee.args
    positional = [*args.posonlyargs, *args.args]
    if skip_first:
        positional = positional[1:]
    pairs = []
    complete = True
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            complete = False
            break
        if i < len(positional):
            pairs.append((positional[i].arg, a))
    names = {a.arg for a in [*positional, *args.kwonlyargs]}
    for kw in call.keywords:
        if kw.arg is None:
            complete = False  # **kwargs
        elif kw.arg in names:
            pairs.append((kw.arg, kw.value))
    return pairs, complete


# ------------------------------------------------------------------ bodies parsed on first use

class Reparse(Exception):
    """A body read from a tree whose layout was wrong (lazytree.py): analyse the file again."""


def body_span(func) -> tuple | None:
    """(start, end) offsets of the lines of a function whose body is not parsed yet
    (lazytree.LazyBody, which keeps them while it waits), else None."""
    src = getattr(func.body, "_src", None)
    return (src[2], src[3]) if src is not None else None


def first_body_line(func) -> int:
    """The line a function's body starts on: its first statement's, or the first decorator's of
    a decorated one (`@wraps(fn)` over a nested `def`); without reading a body not read yet
    (lazytree's layout: the body's first line that is not blank or a comment)."""
    src = getattr(func.body, "_src", None)
    if src is not None:
        return src[4]
    first = func.body[0]
    decorators = getattr(first, "decorator_list", None)
    return decorators[0].lineno if decorators else first.lineno


def def_stub(name: str, params: tuple, line: int = 0, defaults: tuple = ()) -> ast.FunctionDef:
    """A def with no body and parameters `params` ((positional-only, positional, keyword-only
    names), as a module summary keeps them): what binding a call's arguments reads.  `defaults`:
    ((parameter, "1" / "0" for a constant default that is true / false, "" for another
    default), ...), as `constant_defaults` gives them."""
    posonly, args, kwonly = params
    made = [ast.arg(arg=a) for a in (*posonly, *args, *kwonly)]
    given = dict(defaults)
    positional = [*posonly, *args]
    first = next((i for i, a in enumerate(positional) if a in given), len(positional))
    arguments = ast.arguments(posonlyargs=made[:len(posonly)], args=made[len(posonly):len(posonly) + len(args)],
                              kwonlyargs=made[len(posonly) + len(args):],
                              kw_defaults=[_stub_default(given[a]) if a in given else None for a in kwonly],
                              defaults=[_stub_default(given.get(a, "")) for a in positional[first:]],
                              vararg=None, kwarg=None)
    return ast.FunctionDef(name=name, args=arguments, body=[], decorator_list=[], lineno=line, end_lineno=line)


def _stub_default(said: str):
    return ast.Constant(value=said == "1") if said else ast.Name(id="_", ctx=ast.Load())


def left_bool_default(callee, call: ast.Call, skip_first: bool = False) -> bool | None:
    """The literal bool default that `call` leaves to the one parameter of `callee` that has one
    (`requires_grad(netG)` of `def requires_grad(model, flag=True)`: True); None when the call
    passes it (or may: `*args`, `**kwargs`), or `callee` has no such parameter, or more than one."""
    a = callee.args
    positional = [*a.posonlyargs, *a.args]
    bools = [(p.arg, d.value) for p, d in (*zip(positional[len(positional) - len(a.defaults):], a.defaults),
                                           *zip(a.kwonlyargs, a.kw_defaults))
             if type(d) is ast.Constant and type(d.value) is bool]
    if len(bools) != 1:
        return None
    pairs, complete = bind_arguments(callee, call, skip_first)
    if not complete or any(p == bools[0][0] for p, _ in pairs):
        return None
    return bools[0][1]


def constant_defaults(func) -> tuple:
    """((parameter, "1" / "0" / ""), ...) of the parameters of `func` that have a default: "1" or
    "0" when it is a literal that is true or false, "" when it is something else."""
    a = func.args
    positional = [*a.posonlyargs, *a.args]
    pairs = zip(positional[len(positional) - len(a.defaults):], a.defaults)
    out = []
    for param, default in (*pairs, *zip(a.kwonlyargs, a.kw_defaults)):
        if default is not None:
            out.append((param.arg, ("1" if default.value else "0") if type(default) is ast.Constant else ""))
    return tuple(out)


def call_constants(callee, pairs: list, complete: bool) -> dict:
    """{parameter: truth} of the parameters of `callee` that one call gives a literal: an argument
    that is one (`pairs`: bind_arguments'), or a literal default the call leaves (unless it
    passes `*args` or `**kwargs`, `complete` False, which may give it)."""
    out = {param: bool(expr.value) for param, expr in pairs if type(expr) is ast.Constant}
    if complete:
        passed = {param for param, _ in pairs}
        for param, said in constant_defaults(callee):
            if said and param not in passed:
                out[param] = said == "1"
    return out


# The statements that hold statement lists (but a def's), and the fields that hold them; an except
# handler and a match case hold a `body` of their own.
BLOCKS = {ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
          ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
          ast.Try: ("body", "handlers", "orelse", "finalbody"), ast.ClassDef: ("body",),
          ast.ExceptHandler: ("body",)}
for _name, _fields in (("TryStar", ("body", "handlers", "orelse", "finalbody")), ("Match", ("cases",)),
                       ("match_case", ("body",))):
    if hasattr(ast, _name):
        BLOCKS[getattr(ast, _name)] = _fields


def attributes_changed(method) -> set:
    """The attributes of its first parameter that `method` binds, deletes or empties
    (`self.last = ...`, `del self.vals`, `self.vals.clear()`, `self.vals.pop()`)."""
    if not method.args.args:
        return set()
    me = method.args.args[0].arg
    out = set()
    for n in walk(method):
        t = type(n)
        if t is ast.Attribute and type(n.value) is ast.Name and n.value.id == me and type(n.ctx) is not ast.Load:
            out.add(n.attr)
        elif t is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ("clear", "pop", "remove", "popleft") \
                and type(n.func.value) is ast.Attribute and type(n.func.value.value) is ast.Name \
                and n.func.value.value.id == me:
            out.add(n.func.value.attr)
        elif t is ast.Subscript and type(n.ctx) is not ast.Load and type(n.value) is ast.Attribute \
                and type(n.value.value) is ast.Name and n.value.value.id == me:
            out.add(n.value.attr)  # `self.vals[:] = []`, `del self.vals[:]`
    return out


def kept_parameters(method) -> tuple:
    """((parameter, attribute, "set" or "append"), ...) of what a plain method keeps of its
    parameters in attributes of the instance on every call that returns: a statement of its body
    itself (in no branch, loop or `with`), after no `return` or `raise`, that sets the attribute
    to the parameter or appends the parameter to it (`self.last = v`, `self.vals.append(v)`),
    the parameter never bound again and the attribute named nowhere else in the method (not
    `self.last = self.last.detach()` after, nor a list it rebuilds)."""
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return ()
    me = positional[0].arg
    params = {a.arg for a in (*positional[1:], *method.args.kwonlyargs)}
    found = []  # the statements that may keep one, before the whole method is read
    for stmt in method.body:
        t = type(stmt)
        if t is ast.Assign and len(stmt.targets) == 1:
            target, value, how = stmt.targets[0], stmt.value, "set"
        elif t is ast.Expr and type(stmt.value) is ast.Call and type(stmt.value.func) is ast.Attribute \
                and stmt.value.func.attr == "append" and len(stmt.value.args) == 1 and not stmt.value.keywords:
            target, value, how = stmt.value.func.value, stmt.value.args[0], "append"
        else:
            if any(type(n) is ast.Return or type(n) is ast.Raise for n in own_nodes([stmt])):
                break  # (what comes after may not run)
            continue
        if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == me \
                and type(value) is ast.Name and value.id in params:
            found.append((value.id, target.attr, how))
    if not found:
        return ()
    rebound, named = set(), {}
    for n in walk(method):
        t = type(n)
        if t is ast.Name and type(n.ctx) is not ast.Load:
            rebound.add(n.id)
        elif t is ast.Attribute and type(n.value) is ast.Name and n.value.id == me:
            named[n.attr] = named.get(n.attr, 0) + 1
    return tuple(k for k in found if k[0] not in rebound and named.get(k[1]) == 1)
