"""Running totals that keep every iteration's autograd graph (family TNS5): the walker's
"accumulators" domain.

It follows `total += loss` and `total = total + loss` where `loss` may require grad (outside
no-grad regions; a name back-propagated earlier in the same loop body requires grad for
certain); the total may be an entry of the function's own dict under a constant key
(`running["loss"] += loss`, keyed "running['loss']"); `total.add_(loss)` on a tensor total adds
as `+=` does (in place, recorded in the graph).  A list the function makes (`losses = []`) that is
given `losses.append(loss)` is followed as a total is: it holds each appended value and its graph
(`losses.clear()`, `del losses[:]` empty it).  The state says, for each name or entry,
which accumulation statements' graphs its value may carry (the accumulator itself, and whatever
is computed from it: `avg = total / n`).  An accumulation whose accumulator may already hold its
own earlier result went around the loop: where that loop is one over batches or steps (not
only one over the model's parameters, `norm += p.norm()`), it keeps each iteration's graph (a
candidate).  At every statement the domain looks at where
the carried values go: into a backward call (`total.backward()`, `torch.autograd.grad(total,
...)`, `scaler.scale(total).backward()`), out of the scope (returned, yielded, stored in an
attribute or a container, passed to a function that is not a display or a conversion), or into
something harmless (`.item()`, `float()`, f-strings, `print`, comparisons, loggers; a comprehension
that reads only such of the elements of a list, `[l.item() for l in losses]`).  `finish`
keeps the candidates whose graphs never reach a backward call and never leave the scope, nor
are read by a nested function or declared global / nonlocal (`.findings`).  Placing the events
in the walk (and its loop fixpoints and joins) makes this flow-sensitive: returning the total
before the loop, while it holds a plain number, is not an escape.
"""

from __future__ import annotations

import ast
import os
import re

from ..model import REQUIRED, Record
from .astutil import (bind_arguments, child_nodes, def_stub, dotted_name, is_plain_method, local_names,
                      statements, target_elements, walk)
from .facts import NAMED_PARAMS, OBJECT, PARAMS, SEQ, TENSOR, UNKNOWN, Grad
from .summaries import project_bases
from .torchapi import PLOTTERS
from .walker import Domain, NameSets
from ..source import LazyPattern
from .text_tests import attribute_totals, meter_methods, might_accumulate

class Accumulation(Record):
    _FIELDS = (
        ("stmt", REQUIRED),  # `total += loss` or `total = total + loss`
        ("name", REQUIRED),
        ("term", REQUIRED),  # what is added (`loss`)
        ("term_is_tensor", REQUIRED),  # a torch tensor by the flow of the code (so `.detach()` exists)
        ("shown", False),  # the total's printed form or autograd attributes are observed somewhere
        # Returned (a value computed from it) to the file's calls of the function, which only
        # display or convert it: (the function's name, line of its first call, whether only
        # the file can call it); None when it never leaves the function.
        ("returned", None),
        # `meter.update(loss, n)`: (class, method, attribute, "line 17" or "utils.py:17") of the
        # method of a class of the project that adds what it is given to an attribute
        # (`self.sum += val * n`); None for a plain total.
        ("via", None),
        # "add" for a total (`+=`, `total = total + loss`, `total.add_(loss)`, a meter); "append"
        # for a list the function made that keeps each term (`losses.append(loss)`).
        ("kind", "add"),
        # An attribute of the instance (`self.running_loss += loss` in a method): (class, method,
        # "line 30", the first call of the method in a loop, or None where a loop of the method
        # itself carries it).
        ("steps", None),
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


class AccumState(NameSets):
    """The accumulation statements (ids) whose graphs each name's value may carry."""

    __slots__ = ()


class AccumScope:
    __slots__ = ("candidates", "gone", "returned", "shown", "holders", "findings", "attrs")

    def __init__(self) -> None:
        self.candidates: dict = {}  # id(stmt) -> Accumulation
        self.gone: set = set()  # ids whose graphs reach a backward or leave the scope
        self.returned: set = set()  # ids whose graphs are returned (ask the callers)
        self.shown: set = set()  # ids whose carriers are printed or asked for autograd state
        self.holders: dict = {}  # id -> names that carried it
        self.findings: list = []  # [Accumulation]
        self.attrs: list = []  # (stmt, attribute, term, term is a tensor, kind, loops around it)


def _key(node) -> str | None:
    """Where a total is kept: a name (`total`), or an entry of a name's dict under a constant
    key (`running["loss"]`: "running['loss']"); else None."""
    t = type(node)
    if t is ast.Name:
        return node.id
    if t is ast.Subscript and type(node.value) is ast.Name and type(node.slice) is ast.Constant \
            and type(node.slice.value) in (str, int):
        return f"{node.value.id}[{node.slice.value!r}]"
    return None


def _emptied(node) -> str | None:
    """The name of `name[:]` (a slice of all of it), else None."""
    if type(node) is ast.Subscript and type(node.value) is ast.Name and type(node.slice) is ast.Slice \
            and node.slice.lower is None and node.slice.upper is None and node.slice.step is None:
        return node.value.id
    return None


def _root(key: str) -> str:
    """The name of a key (`running` of "running['loss']")."""
    return key.split("[", 1)[0]


def _accumulation(stmt):
    """(key, term) for `name += term` and `name = name + term` / `name = term + name`; also a
    decayed total, `name = 0.9 * name + term` / `name = name * beta + term` (an exponential
    moving average: each value holds the last, and its graph); `name` may be a dict entry under
    a constant key (`running["loss"] += loss`)."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        key = _key(stmt.target)
        return (key, stmt.value) if key is not None else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        key = _key(stmt.targets[0])
        if key is None:
            return None
        value = stmt.value
        if type(value) is ast.IfExp:
            # `smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss` (or the branches the
            # other way round under `is not None`): a total that starts from its first term.
            first, then = _none_branches(value, key)
            if first is None or _names(first, key):
                return None
            value = then
        term = _added_to(value, key)
        return (key, term) if term is not None else None
    return None


def _added_to(value, key: str):
    """The term of `key + term` / `term + key` (`key` maybe scaled: _is_total), else None."""
    if type(value) is not ast.BinOp or type(value.op) is not ast.Add:
        return None
    left, right = value.left, value.right
    if _is_total(left, key) and not _names(right, key):
        return right
    if _is_total(right, key) and not _names(left, key):
        return left
    return None


def first_term(stmt):
    """The term a total that starts from its first term takes where it is None (`loss` of
    `smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss`), else None: it keeps its
    graph, which what is added later joins."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.value) is not ast.IfExp:
        return None
    key = _key(stmt.targets[0])
    return _none_branches(stmt.value, key)[0] if key is not None else None


def _none_branches(value: ast.IfExp, key: str) -> tuple:
    """(the branch taken where `key` is None, the other) of `a if key is None else b` (or `b if
    key is not None else a`), else (None, None)."""
    test = value.test
    if type(test) is ast.Compare and len(test.ops) == 1 and _key(test.left) == key \
            and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None:
        if type(test.ops[0]) is ast.Is:
            return value.body, value.orelse
        if type(test.ops[0]) is ast.IsNot:
            return value.orelse, value.body
    return None, None


def _in_place(call):
    """(key, term, kind) for a call that keeps what it is given in a name's value: `total.add_(term)`
    (kind "add": the tensor's in-place addition, which records it in the graph as `+=` on a tensor
    does; `alpha=` may scale it), `name.append(term)` (kind "append"); `total` may be a dict entry
    under a constant key, a list only a name.  Else None."""
    func = call.func
    if type(func) is not ast.Attribute or len(call.args) != 1 or type(call.args[0]) is ast.Starred:
        return None
    if func.attr == "add_":
        if any(k.arg != "alpha" for k in call.keywords):
            return None
        recv = func.value
        if type(recv) is ast.Call and type(recv.func) is ast.Attribute and recv.func.attr in ("mul_", "div_") \
                and len(recv.args) == 1 and not recv.keywords and type(recv.args[0]) is not ast.Starred:
            recv = recv.func.value  # `ema.mul_(0.9).add_(loss)`: the same tensor, scaled in place first
        key = _key(recv)
        return (key, call.args[0], "add") if key is not None else None
    if func.attr == "append" and not call.keywords and type(func.value) is ast.Name \
            and _loss_list(func.value.id, call.args[0]):
        return func.value.id, call.args[0], "append"
    return None


def _list_extension(stmt):
    """(name, element) for `name += [element]`, which appends to the list in place as
    `name.append(element)` does, where the list is one of losses by its spelling (`_loss_list`);
    else None."""
    if type(stmt) is not ast.AugAssign or type(stmt.op) is not ast.Add or type(stmt.target) is not ast.Name:
        return None
    value = stmt.value
    if type(value) is not ast.List or len(value.elts) != 1 or type(value.elts[0]) is ast.Starred:
        return None
    name, element = stmt.target.id, value.elts[0]
    return (name, element) if _loss_list(name, element) else None


def _kept_part(walker, term, state):
    """What of an appended `term` keeps a graph: `term` itself, or of a tuple display
    (`losses.append((loss, x.size(0)))`) its one element that requires grad (for certain, by
    its fact), where the others are known not to (a number: a size, a length, a constant); else
    None (which part, if any, is not told)."""
    if type(term) is not ast.Tuple:
        return term
    if any(type(e) is ast.Starred for e in term.elts):
        return None
    grads = [walker.fact(e, state) for e in term.elts]
    kept = [e for e, f in zip(term.elts, grads) if f.kind == TENSOR and f.grad is Grad.YES]
    if len(kept) != 1 or any(f.grad is not Grad.NO and not _a_number(e)
                             for e, f in zip(term.elts, grads) if e is not kept[0]):
        return None
    return kept[0]


def _a_number(expr) -> bool:
    """Whether `expr` is a number whatever its operands are: a constant, `x.size(0)`,
    `x.numel()`, `x.dim()`, `len(x)`, `int(...)`, `float(...)`, `x.shape[0]`."""
    t = type(expr)
    if t is ast.Constant:
        return type(expr.value) in (int, float)
    if t is ast.Call:
        f = expr.func
        if type(f) is ast.Attribute:
            return f.attr in ("size", "numel", "dim", "nelement", "item") and (f.attr == "size" or not expr.args)
        return type(f) is ast.Name and f.id in ("len", "int", "float")
    return t is ast.Subscript and type(expr.value) is ast.Attribute and expr.value.attr == "shape"


def _loss_list(name: str, term) -> bool:
    """Whether a list that `name.append(term)` adds to is one of losses by its spelling: "loss"
    in the list's name or in a name or attribute of the term (`losses.append(loss)`,
    `history.append(train_loss)`, `val_losses.append(crit(out, y))`).  (Functions that append
    anything after a loop are a third of a model library's; the lists of one, a forward's
    hidden states, are returned, where a training loop's losses are the list kept: the text
    test, text_tests._might_keep, says the same.)"""
    if "loss" in name.lower():
        return True
    for n in walk(term):
        t = type(n)
        if t is ast.Name and "loss" in n.id.lower() or t is ast.Attribute and "loss" in n.attr.lower():
            return True
    return False


def _is_total(node, key: str) -> bool:
    """`key`, or `key` scaled by a factor that does not read it (`0.9 * name`, `name * beta`)."""
    if type(node) is ast.BinOp and type(node.op) is ast.Mult:
        left, right = node.left, node.right
        if _key(left) == key:
            return not _names(right, key)
        if _key(right) == key:
            return not _names(left, key)
        return False
    return _key(node) == key


def _names(node, key: str) -> bool:
    """Whether an expression reads `key`."""
    return any(type(n) in (ast.Name, ast.Subscript) and _key(n) == key for n in walk(node))


# Methods of a module that iterate over its structure (`model.parameters()`).
_STRUCTURE_METHODS = frozenset(
    "parameters named_parameters buffers named_buffers modules named_modules children named_children".split())


def _over_the_model(node) -> bool:
    """Whether a loop's iterable is a model's structure, by its spelling: `m.parameters()`,
    `m.named_parameters()`, `m.modules()`, ..., an optimizer's `param_groups`, a param group's
    `group["params"]` (also through `list`, `enumerate`, `zip`, ...)."""
    t = type(node)
    if t is ast.Call:
        func = node.func
        if type(func) is ast.Attribute:
            return func.attr in _STRUCTURE_METHODS
        if type(func) is ast.Name and node.args:
            if func.id == "zip":
                return any(_over_the_model(a) for a in node.args)  # (as long as the shortest)
            if func.id in ("list", "tuple", "reversed", "sorted", "enumerate", "iter"):
                return _over_the_model(node.args[0])
        return False
    if t is ast.Attribute:
        return node.attr == "param_groups"
    if t is ast.Subscript:
        return type(node.slice) is ast.Constant and node.slice.value == "params"
    return False


def _parameters(f) -> bool:
    """Whether a loop over a value of fact `f` goes over a model's parameters: `model.parameters()`
    and the like, or a list of them (`params = list(model.parameters())`)."""
    if f.kind in (PARAMS, NAMED_PARAMS):
        return True
    el = f.element
    return f.kind == SEQ and el is not None and el.kind == TENSOR and el.leaf and "parameter" in el.tags


def _carried_around(loops, key: str, stmt) -> list:
    """The loops (innermost first) around which what `stmt` adds to `key` may come back to it:
    from the innermost out, each until one whose body binds the total again before the statement
    that holds `stmt` (`epoch_loss = 0` before the loop over batches: the loop over epochs does
    not carry it, nor any loop around that one).  A binding under a condition, or after, is not
    counted (the loop may carry the total)."""
    out = []
    inner = stmt
    for loop in reversed(loops):
        for s in loop.body:
            if s is inner or _contains(s, inner):
                break
            if type(s) in (ast.Assign, ast.AnnAssign) and s.value is not None and _accumulation(s) is None and any(
                    _key(el) == key for tg in (s.targets if type(s) is ast.Assign else [s.target])
                    for el in target_elements(tg)):
                return out
        out.append(loop)
        inner = loop
    return out


def _contains(outer, node) -> bool:
    """Whether the statement `outer` spans the statement `node` (by their positions)."""
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _bound_only_so(scope_node, name: str, made) -> bool:
    """Whether `name` is bound in the scope, and `made(target, value)` holds of every binding
    of it (its target, and the expression bound), and it is not a parameter of the scope, nor
    declared global or nonlocal there: the scope's own value."""
    if isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = scope_node.args
        if name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                    if a is not None}:
            return False
    found = False
    for s in statements(scope_node.body):
        if isinstance(s, (ast.Global, ast.Nonlocal)) and name in s.names:
            return False
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == name:
            return False
        for target, value in _flows(s):
            if not any(type(el) is ast.Name and el.id == name for el in target_elements(target)):
                continue
            if made is _new_list and target is getattr(s, "target", None) and type(s) is ast.AugAssign \
                    and type(s.op) is ast.Add and type(value) is ast.List:
                continue  # (`losses += [loss]`: the same list, extended in place)
            if not made(target, value, name):
                return False
            found = True
    return found


def _fresh_list(scope_node, name: str) -> bool:
    """Whether every binding of `name` in the scope makes a new empty list (`[]`, `list()`, also
    an element of a tuple assignment: `train_losses, val_losses = [], []`), and it is not a
    parameter: the scope's own list, which keeps what is appended to it as long as it lives (a
    list it was given, or binds to another value, is someone else's: what is appended leaves the
    scope)."""
    return _bound_only_so(scope_node, name, _new_list)


def _new_list(target, value, name: str) -> bool:
    if type(target) is not ast.Name:
        # `a, losses = [], []`: the element of the value the name's element gets.
        if not (type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List)
                and len(target.elts) == len(value.elts)):
            return False
        value = next((v for t, v in zip(target.elts, value.elts) if type(t) is ast.Name and t.id == name), None)
    return type(value) is ast.List and not value.elts or type(value) is ast.Call and type(value.func) is ast.Name \
        and value.func.id == "list" and not value.args and not value.keywords


_TENSOR_MAKERS = frozenset("torch." + n + like for n in ("zeros", "empty", "ones", "full") for like in ("", "_like"))


def _fresh_tensor(scope_node, name: str) -> bool:
    """Whether every binding of `name` in the scope makes a new tensor (`torch.zeros(n)`,
    `torch.empty_like(x)`, not one that requires grad), and it is not a parameter: the scope's
    own tensor."""
    return _bound_only_so(scope_node, name, _new_tensor)


def _new_tensor(target, value, _name: str) -> bool:
    return type(target) is ast.Name and type(value) is ast.Call and dotted_name(value.func) in _TENSOR_MAKERS \
        and not any(k.arg == "requires_grad" for k in value.keywords)


_DICT_MAKERS = frozenset({"dict", "defaultdict", "OrderedDict", "collections.defaultdict", "collections.OrderedDict"})


def _fresh_dict(scope_node, name: str) -> bool:
    """Whether every binding of `name` in the scope makes a new dict (`{"loss": 0.0}`,
    `dict(...)`, `collections.defaultdict(float)`), and it is not a parameter: the scope's own
    dict, whose entries are totals as names are (a dict it was given, or reads through an alias
    of another, is the caller's: what is added to it leaves the scope)."""
    return _bound_only_so(scope_node, name, _new_dict)


def _new_dict(target, value, _name: str) -> bool:
    return type(target) is ast.Name and (type(value) in (ast.Dict, ast.DictComp) or type(value) is ast.Call
                                         and dotted_name(value.func) in _DICT_MAKERS)


class AccumulatorDomain(Domain):
    key = "accumulators"

    def __init__(self, options=None) -> None:
        self.options = options
        self._backprop: dict = {}  # (id(loop), id(stmt)) -> the term is back-propagated before
        self._meters: dict = {}  # (id(class), method name) -> _meter_at's answer, or ()
        self._meter_names: frozenset | None = None  # meter_methods of the file's text, and widen's
        self._imported: frozenset = frozenset()
        self._fresh_dicts: dict = {}  # (id(scope node), name, test) -> _fresh_dict's (_fresh_list's) answer
        self._attr_names: frozenset | None = None  # attribute_totals of the file's text

    def active(self, walker, frame) -> bool:
        node = frame.scope.node
        text = walker.source_of(node) if hasattr(node, "end_lineno") else (
            walker.lines.text if walker.lines is not None else None)
        if text is None:
            return True
        if self._meter_names is None:
            self._meter_names = meter_methods(walker.lines.text) | self._imported
            self._attr_names = attribute_totals(walker.lines.text)
        return might_accumulate(text, self._meter_names, self._attr_names)

    def widen(self, names: frozenset) -> None:
        self._imported = self._imported | names  # a meter class of another module

    def initial(self, walker, frame) -> AccumState:
        return AccumState()

    def start(self, walker, frame) -> AccumScope:
        return AccumScope()

    # ------------------------------------------------------------------ transfer

    def simple(self, walker, stmt, state) -> None:
        frame = walker.frame
        st: AccumState = state.doms[self.key]
        rec: AccumScope = frame.doms[self.key]
        record = frame.recording and not frame.expects_error
        if st.holds and record:
            self._observe(stmt, [], st, rec, frame)
        if frame.scope.cls is not None and record and self._attr_names:
            self._attribute(walker, stmt, state, rec)
        acc = _accumulation(stmt)
        via, kind = None, "add"
        extended = _list_extension(stmt) if acc is not None else None
        if extended is not None:
            # `losses += [loss]`: an append (the list's own, as for `.append(`); a list a name
            # holds is no total of `+=`'s whatever it is added.
            acc, kind = (extended if self._fresh(frame, extended[0], _fresh_list) else None), "append"
        elif acc is None and type(stmt) is ast.Assign and len(stmt.targets) == 1 \
                and type(stmt.targets[0]) is ast.Subscript and type(stmt.targets[0].value) is ast.Name \
                and _loss_list(stmt.targets[0].value.id, stmt.value) \
                and self._fresh(frame, stmt.targets[0].value.id, _fresh_tensor):
            # `losses[i] = loss` into a tensor of the scope's own (`losses = torch.zeros(n)`):
            # the tensor keeps each term's graph (CopySlices), as a list keeps what is appended
            # (of losses by its spelling, as a list: a forward fills tensors of its own too).
            acc, kind = (stmt.targets[0].value.id, stmt.value), "append"
        elif acc is None and type(stmt) is ast.Expr and type(stmt.value) is ast.Call:
            found = _in_place(stmt.value)
            # (Only the function's own list, not one of the caller's; `add_` only of a tensor: a
            # meter of the project may name its method so.)
            if found is not None and (self._fresh(frame, found[0], _fresh_list) if found[2] == "append"
                                      else walker.fact(stmt.value.func.value, state).kind == TENSOR):
                acc, kind = found[:2], found[2]
            else:
                acc = self._meter_update(walker, stmt.value, state)
                if acc is not None:
                    acc, via = acc[:2], acc[2]
        if acc is not None and "[" in acc[0] and not self._fresh(frame, _root(acc[0])):
            acc = None  # (an entry of a dict of the caller's)
        if acc is not None and kind == "append":
            # (Of a tuple appended, `losses.append((loss, n))`, the element that keeps a graph.)
            term = _kept_part(walker, acc[1], state)
            acc = (acc[0], term) if term is not None else None
        if acc is not None:
            name, term = acc
            if not state.no_grad and self._requires_grad(walker, term, stmt, state, self._backprop):
                aid = id(stmt)
                held = st.holds.get(name, frozenset())
                if aid in held and frame.loops and record and self._steps(walker, frame.loops, name, stmt, state):
                    # What this statement added (appended) in an earlier iteration is still in `name`.
                    f = walker.fact(term, state)
                    rec.candidates.setdefault(aid, Accumulation(stmt, name, term, f.is_torch_tensor, via=via,
                                                                kind=kind))
                # (What the term itself carries goes into the total too: `total_loss +=
                # visual_total` after a loop that adds to `visual_total`, then `return total_loss`.)
                carried = self._carried(term, st)
                st.holds[name] = held | {aid} | carried
                for i in (aid, *carried):
                    rec.holders.setdefault(i, set()).add(name)
                return
        t = type(stmt)
        if t is ast.Assign or t is ast.AnnAssign:
            if stmt.value is None:
                return
            carried = self._carried(stmt.value, st)
            targets = stmt.targets if t is ast.Assign else [stmt.target]
            for target in targets:
                for el in target_elements(target):
                    if isinstance(el, ast.Name):
                        self._bind(st, rec, el.id, carried)
                    elif type(el) is ast.Subscript and _emptied(el) is not None:
                        # `losses[:] = new`: the list holds what the value carries, not what it held.
                        self._bind(st, rec, _emptied(el), carried)
                    elif type(el) is ast.Subscript:
                        self._store(frame, st, rec, el, carried)
        elif t is ast.AugAssign:
            key = _key(stmt.target)
            if key is not None:
                carried = self._carried(stmt.value, st)
                if "[" in key:
                    self._store(frame, st, rec, stmt.target, carried, add=True)
                else:
                    self._bind(st, rec, key, st.holds.get(key, frozenset()) | carried)
        elif t is ast.Delete:
            for target in stmt.targets:
                for el in target_elements(target):
                    key = _key(el) or _emptied(el)  # (`del losses[:]` empties the list)
                    if key is not None:
                        self._bind(st, rec, key, frozenset())
        elif t is ast.Expr and st.holds:
            # `losses.clear()`: the list no longer holds what was appended.
            call = stmt.value
            if (type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr == "clear"
                    and not call.args and type(call.func.value) is ast.Name):
                self._bind(st, rec, call.func.value.id, frozenset())

    def test(self, walker, expr, state) -> None:
        st: AccumState = state.doms[self.key]
        frame = walker.frame
        if st.holds and frame.recording and not frame.expects_error:
            self._observe(expr, [], st, frame.doms[self.key], frame)

    def loop_target(self, walker, stmt, state) -> None:
        st: AccumState = state.doms[self.key]
        frame = walker.frame
        rec: AccumScope = frame.doms[self.key]
        carried = frozenset()
        if st.holds:
            if frame.recording and not frame.expects_error:
                self._observe(stmt.iter, [stmt], st, rec, frame)
            carried = self._carried(stmt.iter, st)
        for el in target_elements(stmt.target):
            if isinstance(el, ast.Name):
                self._bind(st, rec, el.id, carried)

    def with_item(self, walker, item, state) -> None:
        st: AccumState = state.doms[self.key]
        frame = walker.frame
        if st.holds and frame.recording and not frame.expects_error:
            self._observe(item.context_expr, [], st, frame.doms[self.key], frame)
        if item.optional_vars is not None:
            for el in target_elements(item.optional_vars):
                if isinstance(el, ast.Name):
                    st.holds.pop(el.id, None)

    def finish(self, walker, frame) -> None:
        if not frame.dispatch:
            return
        rec: AccumScope = frame.doms[self.key]
        for stmt, attr, term, is_tensor, kind, loops in rec.attrs:
            found = attribute_total(walker, frame.scope.cls, frame.scope.node, stmt, attr, kind, loops)
            if found is not None:
                steps, shown = found
                rec.findings.append(Accumulation(stmt, f"self.{attr}", term, is_tensor, shown, kind=kind,
                                                 steps=steps))
        if not rec.candidates:
            rec.findings.sort(key=lambda a: (a.stmt.lineno, a.stmt.col_offset))
            return
        closures: dict = {}
        uses = []  # what the file's calls do with what the function returns (asked once)
        for aid, acc in rec.candidates.items():
            if aid in rec.gone:
                continue
            names = frozenset(_root(k) for k in rec.holders.get(aid, ())) | {_root(acc.name)}
            if names not in closures:
                closures[names] = _leaves_by_name(frame.scope.node, names)
            if closures[names]:
                continue
            shown, returned = aid in rec.shown, None
            if aid in rec.returned:
                if not uses:
                    uses.append(_result_uses(walker, frame.scope))
                if uses[0] is None:
                    continue  # a caller may keep it, differentiate it, or we cannot see them all
                line, callers_shown, private = uses[0]
                shown = shown or callers_shown
                returned = (frame.scope.node.name, line, private)
            rec.findings.append(
                Accumulation(acc.stmt, acc.name, acc.term, acc.term_is_tensor, shown, returned, acc.via, acc.kind))
        rec.findings.sort(key=lambda a: (a.stmt.lineno, a.stmt.col_offset))

    # ------------------------------------------------------------------ attributes

    def _attribute(self, walker, stmt, state, rec: AccumScope) -> None:
        """`self.running_loss += loss` (or `self.total = self.total + loss`, `self.losses.append(loss)`)
        in a method, of an attribute the text test names (`attribute_totals`), on a line of its
        own, where `loss` requires grad for certain: a candidate, which `attribute_total` decides
        at the end of the method's walk.  Not what a parameter is (arithmetic on one: `self.sum
        += val * n`), added: a meter's method, reported at its calls (`_meter_update`)."""
        found = _attribute_accumulation(stmt)
        if found is None or found[0] not in self._attr_names or state.no_grad:
            return
        attr, term, kind = found
        func = walker.frame.scope.node
        if walker.lines is None or walker.lines.line(stmt.lineno).encode("utf-8")[:stmt.col_offset].strip():
            return  # (not at the start of its line, where the text test looks: `if c: self.t += loss`)
        if "loss" not in attr.lower() and not _loss_list(attr, term):
            return
        if kind == "add" and _from_parameter(term, func):
            return
        if not self._requires_grad(walker, term, stmt, state, self._backprop) and not (
                isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and walker.fact(term, state).kind in (
                TENSOR, UNKNOWN) and _backpropagated_before(func, term, stmt)):
            return
        rec.attrs.append((stmt, attr, term, walker.fact(term, state).is_torch_tensor, kind, walker.frame.loops))

    # ------------------------------------------------------------------ meters

    def _meter_update(self, walker, call, state):
        """`meter.update(loss, n)`, where `meter` is an instance of a class of the project
        whose method adds a parameter to an attribute (`self.sum += val * n`) and which never
        back-propagates anything: (meter, the argument added, (class, method, attribute, "line
        17" or "utils.py:17")); else None."""
        func = call.func
        if type(func) is not ast.Attribute or type(func.value) is not ast.Name:
            return None
        recv = walker.fact(func.value, state)
        if recv.kind != OBJECT or recv.node is None:
            return None
        key = (id(recv.node), func.attr)
        found = self._meters.get(key)
        if found is None:
            found = self._meters[key] = _meter_at(walker, recv.node, func.attr) or ()
        if not found:
            return None
        method, added, cls, where = found
        for param, expr in bind_arguments(method, call, True)[0]:
            if param in added:
                attr, line = added[param]
                return func.value.id, expr, (cls, method.name, attr, f"{where}{line}")
        return None

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _bind(st: AccumState, rec: AccumScope, name: str, carried: frozenset) -> None:
        if "[" not in name:
            prefix = name + "["  # a new value for the name: its dict's entries go with the old one
            for k in [k for k in st.holds if k.startswith(prefix)]:
                del st.holds[k]
        if carried:
            st.holds[name] = carried
            for aid in carried:
                rec.holders.setdefault(aid, set()).add(name)
        else:
            st.holds.pop(name, None)

    def _store(self, frame, st: AccumState, rec: AccumScope, target, carried: frozenset, add: bool = False) -> None:
        """A store into a subscript (`running["loss"] = value`, `+=` with `add`): an entry of the
        scope's own dict under a constant key holds what the value carries, as a name would;
        anything else that receives carried graphs keeps them where we do not follow."""
        key = _key(target)
        if key is not None and self._fresh(frame, _root(key)):
            self._bind(st, rec, key, (st.holds.get(key, frozenset()) if add else frozenset()) | carried)
        elif carried:
            rec.gone.update(carried)

    def _fresh(self, frame, name: str, test=_fresh_dict) -> bool:
        """`test` (`_fresh_dict`, or `_fresh_list`) of the name in the frame's scope, asked once."""
        node = frame.scope.node
        key = (id(node), name, test)
        found = self._fresh_dicts.get(key)
        if found is None:
            found = self._fresh_dicts[key] = test(node, name)
        return found

    @staticmethod
    def _steps(walker, loops, key: str, stmt, state) -> bool:
        """Whether what `stmt` adds to `key` may come back to it around a loop that is not over
        the model's structure (its parameters, modules, param groups): a loop over batches or
        steps, each of whose graphs the total keeps.  One pass over the parameters (`norm +=
        p.norm() ** 2` for logging) builds one graph over them, not a graph per step, and it
        goes when the total does."""
        around = _carried_around(loops, key, stmt)
        if not around:
            return True  # (the walk says it came around; trust it)
        for loop in around:
            if not isinstance(loop, (ast.For, ast.AsyncFor)):
                return True
            if not _over_the_model(loop.iter) and not _parameters(walker.fact(loop.iter, state)):
                return True
        return False

    @staticmethod
    def _requires_grad(walker, term, stmt, state, cache: dict) -> bool:
        """Whether `term` requires grad for certain: by its fact, or because it is (arithmetic
        on) a name back-propagated earlier in the loop body.  That evidence holds even where the
        fact says no: a value computed under `torch.set_grad_enabled(phase == "train")` counts
        as computed without grad (grad may be off), but where the body back-propagates it, grad
        was on (a backward of a tensor that does not require grad raises)."""
        f = walker.fact(term, state)
        if f.kind == TENSOR and f.grad is Grad.YES:
            return True
        loops = walker.frame.loops
        if not (f.kind in (TENSOR, UNKNOWN) and loops):
            return False
        key = (id(loops[-1]), id(stmt))
        if key not in cache:
            cache[key] = _backpropagated_before(loops[-1], term, stmt)
        return cache[key]

    def _observe(self, node, parents, st: AccumState, rec: AccumScope, frame) -> None:
        """Where the carried values read in `node` go."""
        for occ, chain, ids in _reads(node, st.holds, parents):
            what, shown = _classify(occ, chain)
            if what == "escape":
                # Appended to the scope's own list (`history.append(meter.avg)`): the list holds
                # them, and where it goes they go.
                listed = _append_target(occ, chain)
                if listed is not None and self._fresh(frame, listed, _fresh_list):
                    self._bind(st, rec, listed, st.holds.get(listed, frozenset()) | ids)
                    continue
            if what in ("backward", "escape"):
                rec.gone.update(ids)
            elif what == "cut" and (_numpy_argument(occ, chain) or _plot_argument(occ, chain)) \
                    or _list_elements_leave(occ, chain):
                # `np.mean(losses)`, `plt.plot(losses)`: NumPy converts each element, which
                # raises where one requires grad (TNS103's or TNS106's finding, the same bug);
                # a list whose elements do not
                # keeps no graph.  `for l in losses:` hands its elements to the loop's body
                # (`total = total + l`, then `total.backward()`), which is not followed; and
                # `losses.pop(0)` keeps it from growing (a window of the last losses).
                rec.gone.update(i for i in ids if i in rec.candidates and rec.candidates[i].kind == "append")
            elif what == "return":
                rec.returned.update(ids)
            if shown:
                rec.shown.update(ids)

    @staticmethod
    def _carried(value, st: AccumState) -> frozenset:
        """The graphs the value of `value` carries (a cut such as `.item()` stops them)."""
        out = frozenset()
        if not st.holds:
            return out
        for occ, chain, ids in _reads(value, st.holds, []):
            what, _ = _classify(occ, chain, flow=True)
            if what == "flow":
                out |= ids
        return out


# --------------------------------------------------------------------------- term evidence


def _backward_root(call) -> ast.expr | None:
    """What a backward call back-propagates: `x` of `x.backward()`, `scaler.scale(x).backward()`,
    `torch.autograd.backward(x)`, `self.manual_backward(x)`, `accelerator.backward(x)`."""
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("backward", "manual_backward"):
        return None
    if isinstance(func, ast.Attribute) and not call.args:
        recv = func.value
        if (isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) and recv.func.attr == "scale"
                and len(recv.args) == 1):
            return recv.args[0]
        return recv
    return call.args[0] if call.args else None


def _backpropagated_before(loop, term, stmt) -> bool:
    """Whether `term` (a name, or arithmetic on one: `loss * x.size(0)`) is back-propagated
    earlier in the body of `loop` than `stmt`, and not rebound (nor detached in place) in
    between: then it requires grad (a backward of a tensor that does not raises), and so does
    arithmetic on it."""
    names, stack = set(), [term]
    while stack:
        e = stack.pop()
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            stack.extend((e.left, e.right))
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            stack.append(e.operand)
        elif isinstance(e, ast.Name):
            names.add(e.id)
    if not names:
        return False
    line = stmt.lineno
    for name in names:
        calls, binds = [], []
        for s in statements(loop.body):
            for e in _own_exprs(s):
                for n in walk(e):
                    root = _backward_root(n)
                    if isinstance(root, ast.Name) and root.id == name:
                        calls.append(n.lineno)
                    elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                          and n.func.attr in ("detach_", "requires_grad_") and isinstance(n.func.value, ast.Name)
                          and n.func.value.id == name):
                        binds.append(n.lineno)
            for target, _value in _flows(s):
                for el in target_elements(target):
                    if isinstance(el, ast.Name) and el.id == name:
                        binds.append(s.lineno)
        if any(c < line and not any(c < b < line for b in binds) for c in calls):
            return True
    return False


# --------------------------------------------------------------------------- where values go


_BACKWARD_NAMES = frozenset({"backward", "manual_backward", "grad"})
# Methods that turn a tensor into a plain value or a tensor without graph.
_CUT_METHODS = frozenset({"item", "tolist", "detach", "numpy", "__format__", "size", "dim", "numel", "nelement"})
# Functions that turn their argument into a plain value (or display it).
_CUT_FUNCS = frozenset({"float", "int", "round", "bool", "len", "str", "repr", "format", "print", "isinstance",
                        "type", "id", "hash", "any", "all"})
_SHOWN_FUNCS = frozenset({"str", "repr", "format", "print"})
# Functions whose result is computed from their arguments, or holds them (and stays in the
# scope): also the iterations over a list (`for i, l in enumerate(losses)`).
_PRESERVING_FUNCS = frozenset({"abs", "min", "max", "sum", "pow", "divmod", "list", "tuple", "reversed", "sorted",
                               "enumerate", "zip", "iter"})
_PRESERVING_OWNERS = frozenset({"torch", "F", "torch.nn.functional", "nn.functional"})
# Methods of loggers, progress bars and summary writers: they display a value, never differentiate it.
_DISPLAY_METHODS = frozenset(
    "debug info warning warn error critical exception log write set_postfix set_postfix_str set_description "
    "set_description_str add_scalar add_scalars echo secho".split()
)
_DISPLAY_OWNERS = LazyPattern(r"(?:^|[._])(?:log|logger|logging|logs|writer|tb|tensorboard|pbar|bar|tqdm|progress|"
                             r"summary_writer|sw|wandb|mlflow|console|click|stdout|stderr|f|fh|file|fp|self)$",
                             re.I)
# Display methods whose output does not show a tensor's repr (they take its value).
_VALUE_DISPLAYS = frozenset({"add_scalar", "add_scalars"})
_GRAPH_ATTRS = frozenset({"requires_grad", "grad_fn", "is_leaf", "grad", "_version"})


def _occurrences_in(node, names, parents):
    """(a Name that reads one of `names`, its ancestors innermost last) under `node`, not inside
    nested functions, lambdas or classes."""
    stack = [(node, parents)]
    while stack:
        n, ps = stack.pop()
        if isinstance(n, ast.Name):
            if n.id in names and isinstance(n.ctx, ast.Load):
                yield n, ps
            continue
        if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        sub = ps + [n]
        for c in child_nodes(n):
            stack.append((c, sub))


def _reads(node, holds: dict, parents):
    """(a read of a name or dict entry that carries graphs, its ancestors innermost last, the
    ids it carries) under `node`, not inside nested functions, lambdas or classes.  A read of a
    dict whose entries carry graphs (`print(running)`, `return running`) carries all of them."""
    entries: dict = {}  # name -> the ids its dict's entries carry
    for k, ids in holds.items():
        if "[" in k:
            r = _root(k)
            entries[r] = entries.get(r, frozenset()) | ids
    stack = [(node, parents)]
    while stack:
        n, ps = stack.pop()
        t = type(n)
        if t is ast.Name:
            if isinstance(n.ctx, ast.Load):
                ids = holds.get(n.id, frozenset()) | entries.get(n.id, frozenset())
                if ids:
                    yield n, ps, ids
            continue
        if t is ast.Subscript and entries:
            key = _key(n)
            if key is not None and key in holds:
                if isinstance(n.ctx, ast.Load):
                    yield n, ps, holds[key] | holds.get(n.value.id, frozenset())
                continue  # (a store into the entry reads nothing it holds)
        if t in (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        sub = ps + [n]
        for c in child_nodes(n):
            stack.append((c, sub))


_SHRINKING = frozenset({"pop", "remove", "popleft"})


def _list_elements_leave(occ, parents) -> bool:
    """Whether the list read at `occ` is iterated by a `for` statement (also through `enumerate`,
    `zip`, `reversed`, ...: `for i, l in enumerate(losses)`), or shrinks (`losses.pop(0)`,
    `del losses[0]`)."""
    child = occ
    for i in range(len(parents) - 1, -1, -1):
        parent = parents[i]
        t = type(parent)
        if t is ast.Attribute and child is occ:
            return parent.attr in _SHRINKING
        if t is ast.Subscript and child is parent.value and type(parent.ctx) is ast.Del:
            return True
        if t is ast.Call and type(parent.func) is ast.Name and parent.func.id in _PRESERVING_FUNCS \
                and child is not parent.func:
            child = parent
            continue
        return t in (ast.For, ast.AsyncFor) and child is parent.iter
    return False


def _numpy_argument(occ, parents) -> bool:
    """Whether the value read at `occ` is itself an argument of a call of NumPy's (`np.mean(x)`,
    `numpy.array(x)`)."""
    parent = parents[-1] if parents else None
    if type(parent) is not ast.Call or occ not in parent.args:
        return False
    func = parent.func
    owner = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    return owner is not None and owner.split(".", 1)[0] in ("np", "numpy")


def _plot_argument(occ, parents) -> bool:
    """Whether the value read at `occ` is itself a data argument of a Matplotlib plotting call
    (`plt.plot(losses)`, `ax.plot(steps, losses)`)."""
    parent = parents[-1] if parents else None
    if type(parent) is not ast.Call or occ not in parent.args or type(parent.func) is not ast.Attribute:
        return False
    owner = dotted_name(parent.func.value)
    return parent.func.attr in PLOTTERS and owner is not None and _plotting_owner(owner)


def _classify(occ, parents, flow: bool = False):
    """What the value read at `occ` becomes, walking up its ancestors: ("backward" | "escape" |
    "return" | "cut" | "local" | "flow", shown).  "flow": it is (part of) the value being
    computed (only asked with `flow`, for the value of an assignment); "return": what the
    function returns (it leaves the scope to its callers)."""
    child = occ
    for i in range(len(parents) - 1, -1, -1):
        parent = parents[i]
        t = type(parent)
        if t is ast.comprehension and child is parent.iter and i:
            # What is iterated (`l.item() for l in losses`): its elements go where the
            # comprehension's reads of its target go.
            found = _elements_use(parents[i - 1], parent)
            if found is not None:
                return found
        if t is ast.Call:
            func = parent.func
            if child is func:
                # A method of the value (`total.item()`, `total.backward()`).
                name = getattr(func, "attr", None)
                if name in _BACKWARD_NAMES:
                    return "backward", False
                if name in _CUT_METHODS:
                    return "cut", False
                child = parent
                continue
            fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            owner = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
            if fname in _BACKWARD_NAMES or (fname or "").endswith("backward"):
                return "backward", False
            if isinstance(func, ast.Name) and fname in _CUT_FUNCS:
                return "cut", fname in _SHOWN_FUNCS
            if isinstance(func, ast.Attribute) and fname == "format":
                return "cut", True
            if owner is not None and owner.split(".", 1)[0] in ("math", "np", "numpy"):
                return "cut", False
            if isinstance(func, ast.Attribute) and fname in _DISPLAY_METHODS and owner is not None and (
                    _DISPLAY_OWNERS.search(owner) or owner == "logging"):
                return "cut", fname not in _VALUE_DISPLAYS
            if fname in PLOTTERS and owner is not None and _plotting_owner(owner):
                return "cut", False  # (Matplotlib converts what it plots: `plt.plot(history)`)
            if fname == "step" and owner is not None and "sched" in owner.rsplit(".", 1)[-1].lower():
                return "cut", False  # (`scheduler.step(val_loss)`: ReduceLROnPlateau reads a number)
            if isinstance(func, ast.Name) and fname in _PRESERVING_FUNCS or owner in _PRESERVING_OWNERS:
                child = parent
                continue
            return "escape", False
        if t is ast.Attribute:
            if parent.attr in _GRAPH_ATTRS:
                return "cut", True
            if parent.attr == "data":
                return "cut", False
            child = parent
            continue
        if t is ast.FormattedValue:
            return "cut", parent.format_spec is None
        if (t is ast.BinOp and isinstance(parent.op, ast.Mod) and isinstance(parent.left, (ast.Constant, ast.JoinedStr))
                and isinstance(getattr(parent.left, "value", ""), str)):
            return "cut", True
        if t is ast.Compare:
            return "cut", False
        if t is ast.Subscript and child is not parent.value:
            return "cut", False  # an index
        if t in (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.IfExp, ast.BoolOp, ast.Starred, ast.keyword,
                 ast.Tuple, ast.List, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.GeneratorExp,
                 ast.DictComp, ast.comprehension):
            child = parent
            continue
        if t in (ast.Yield, ast.YieldFrom, ast.Await):
            return "escape", False
        if t is ast.NamedExpr:
            return ("flow" if flow else "escape"), False
        # Statements.
        if t is ast.Return:
            return "return", False
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            if child is getattr(parent, "value", None):
                if flow:
                    return "flow", False
                targets = parent.targets if t is ast.Assign else [parent.target]
                if all(_key(el) is not None for tg in targets for el in target_elements(tg)):
                    # Names, or constant-key entries of dicts (the domain's `_store` says whether
                    # the dict is the scope's own).
                    return "local", False
                return "escape", False  # into an attribute or a container
            return "cut", False  # a read in a target's index
        if t in (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith):
            return ("flow" if flow else "local"), False
        if t in (ast.Expr, ast.If, ast.While, ast.Assert, ast.Delete):
            return "cut", False
        if t is ast.Raise:
            return "escape", False
        child = parent
    return ("flow" if flow else "local"), False


def _plotting_owner(owner: str) -> bool:
    """Whether `owner` of a call `owner.plot(...)` is pyplot (`plt`, `matplotlib.pyplot`) or, by
    its name, an Axes (`ax`, `axes[0]`'s `axes`, `self.ax`)."""
    last = owner.rsplit(".", 1)[-1]
    return last in ("plt", "pyplot") or last.startswith("ax")


def _append_target(occ, chain) -> str | None:
    """The name `_appended_to` gives of the statement that appends the value read at `occ`, or
    what an attribute, an index or arithmetic makes of it (`history.append(meter.avg)`,
    `losses.append(total / n)`), to a list; else None."""
    child = occ
    for i in range(len(chain) - 1, -1, -1):
        parent = chain[i]
        t = type(parent)
        if t is ast.Call:
            return None if child is parent.func else _appended_to(child, chain[:i + 1])
        if t is ast.Attribute or t is ast.Subscript and child is parent.value or t is ast.BinOp or t is ast.UnaryOp:
            child = parent
            continue
        return None
    return None


def _elements_use(comp, gen):
    """What the comprehension `comp` does with the elements its generator `gen` iterates over,
    where that is all it does with them: ("cut", shown) when every read of the target is cut
    (`[l.item() for l in losses]`, also in a condition), ("backward" | "escape", False) when one
    reaches a backward call or leaves; None when one may be (part of) the comprehension's value,
    or the comprehension holds a function (which may keep them): it carries them."""
    names = {el.id for el in target_elements(gen.target) if type(el) is ast.Name}
    if not names or type(gen.target) not in (ast.Name, ast.Tuple, ast.List):
        return None
    t = type(comp)
    if t is ast.DictComp:
        values = [comp.key, comp.value]
    elif t in (ast.ListComp, ast.SetComp, ast.GeneratorExp):
        values = [comp.elt]
    else:
        return None
    after = comp.generators[comp.generators.index(gen) + 1:] if gen in comp.generators else None
    if after is None:
        return None
    tests = [c for g in comp.generators for c in g.ifs]
    # (A later generator's iterable may iterate over an element: `v for l in losses for v in l`.)
    values += [g.iter for g in after]
    if any(type(n) in (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
           for part in values + tests for n in walk(part)):
        return None
    shown = False
    for part, is_test in [(v, False) for v in values] + [(c, True) for c in tests]:
        for occ, chain in _occurrences_in(part, names, []):
            what, seen = _classify(occ, chain)
            if what in ("backward", "escape"):
                return what, False
            if what != "cut" and not is_test:
                return None
            shown = shown or seen
    return "cut", shown


# --------------------------------------------------------------------------- meters


def meter_of(walker, info, name: str):
    """(the def of method `name` of the file's class `info`, `_added_parameters` of it) when it
    adds parameters to attributes and the class that defines it never back-propagates
    anything (its text holds no `backward` and no `.grad(`); else None."""
    method, owner = info.method(name)
    if method is None or not is_plain_method(method):
        return None
    text = walker.source_of(owner.node) if walker.lines is not None else ""
    if "backward" in text or ".grad(" in text:
        return None
    added = _added_parameters(method)
    return (method, added) if added else None


def _meter_at(walker, cls, name: str):
    """(method, {parameter: (attribute, line)}, class name, where) for `meter.<name>(...)` on an
    instance of class `cls`: a class of the file (where: "line ") or of another module of the
    project (its summary answers; where: "utils.py:"); else None."""
    if isinstance(cls, ast.ClassDef):
        info = walker.classes.get(id(cls))
        found = meter_of(walker, info, name) if info is not None else None
        if found is None and info is not None and info.method(name)[0] is None:
            # A method the class inherits from a class of another module (`class
            # LossMeter(BaseMeter)`, `update` in base.py): that class's answer.
            for base in project_bases(info):
                found = _meter_at(walker, base, name)
                if found is not None:
                    return found
            return None
        return (found[0], found[1], cls.name, "line ") if found is not None else None
    if not hasattr(cls, "method_owner"):  # (not a ProjectEntity)
        return None
    # The class that defines the method: itself, or the base it inherits it from, of its module
    # or of another (`class LossMeter(AverageMeter)` in meters.py, `update` in base_meters.py).
    owner = cls.method_owner(name)
    answer = owner.added_parameters(name) if owner is not None else ()
    if not answer:
        return None
    params, added = answer
    where = owner.where.rsplit(":", 1)[0] + ":"
    return def_stub(name, params), {p: (a, int(line)) for p, a, line in added}, owner.name, where


def _added_parameters(method) -> dict:
    """{parameter: (attribute, line)} for each parameter of a method that its body adds to an
    attribute of the instance: `self.sum += val * n`, `self.total = self.total + val` (the
    parameter itself, or arithmetic on it)."""
    args = method.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if len(params) < 2:
        return {}
    me, params = params[0], set(params[1:]) | {a.arg for a in args.kwonlyargs}
    # Not a parameter the method binds again (`val = val.item()`, under `if torch.is_tensor(val):`
    # or not; `val = val.detach()`): what is added is then not what the call passed, or not only.
    params -= _rebound(method)
    out: dict = {}
    for st in statements(method.body):
        if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.Add):
            target, value = st.target, st.value
        elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.value, ast.BinOp) \
                and isinstance(st.value.op, ast.Add):
            target, value = st.targets[0], st.value
            if not (isinstance(value.left, ast.Attribute) and isinstance(target, ast.Attribute)
                    and dotted_name(value.left) is not None and dotted_name(value.left) == dotted_name(target)):
                continue
            value = value.right
        else:
            continue
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me):
            continue
        stack = [value]
        while stack:  # the parameter, through arithmetic
            e = stack.pop()
            if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
                stack.extend((e.left, e.right))
            elif isinstance(e, ast.UnaryOp):
                stack.append(e.operand)
            elif isinstance(e, ast.Name) and e.id in params:
                out.setdefault(e.id, (target.attr, st.lineno))
    return out


def _rebound(func) -> set:
    """The names the body of `func` binds (assignments, loops, `with ... as`, `:=`, `del`)."""
    out: set = set()
    for st in func.body:
        for n in ast.walk(st):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                out.add(n.id)
    return out


# --------------------------------------------------------------------------- callers


def _result_uses(walker, scope):
    """What the calls of the function `scope` is walking do with what it returns: (where the
    first call is, whether any shows its printed form, whether only the file can call it) when
    every call displays or converts the result (`print(train_epoch(data))`, `avg =
    train_epoch(data)` where every read of `avg` does: `f"{avg:.3f}"`, `avg < best`,
    `writer.add_scalar("loss", avg)`); None when a call may keep or differentiate it, when the
    function may be called where we do not see it (`forward`, a dunder, a name used other than
    by calls), or when it has no call.  The calls are the file's, and, for a public function of
    a module of a project, those of the project's other files (where: "line 17" in the file,
    "main.py:17" in another)."""
    func = scope.node
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or walker.lines is None:
        return None
    name = func.name
    if name.startswith("__") or name == "forward" or walker._escapes(func, name):
        return None
    private = name.startswith("_") or scope.parent is not None and scope.parent.kind == "function"
    positions = walker.call_positions(name)
    first, shown = None, False
    if positions:
        by_scope: dict = {}  # id(enclosing function or module) -> [node, number of positions]
        for pos in positions:
            owner = walker.function_around(pos) or walker.tree
            if owner is func:
                return None  # a recursive call: what it does with the result is the function's own
            by_scope.setdefault(id(owner), [owner, 0])[1] += 1
        for owner, count in by_scope.values():
            calls = [(c, chain) for c, chain in _calls_in(owner.body, name)]
            if len(calls) != count:
                return None  # a call the text shows that the tree does not (or the other way)
            found = _displayed(owner, calls)
            if found is None:
                return None
            first = found[0] if first is None else min(first, found[0])
            shown = shown or found[1]
        first = f"line {first}"
    if not private and scope.cls is None and scope.parent is not None and scope.parent.kind == "module" \
            and func in walker.tree.body:
        # Other modules of the project may call it too: each of their calls must display it.
        elsewhere = _uses_in_project(walker, func)
        if elsewhere is False:
            return None
        if elsewhere is not None:
            first = first or elsewhere[0]
            shown = shown or elsewhere[1]
    if first is None:
        return None
    return first, shown, private


def _displayed(owner, calls) -> tuple | None:
    """(line of the first, whether one shows its printed form) when each of `calls` ((call,
    ancestors) in `owner`, a function or a module) displays or converts what it returns, the
    value itself or through the names it is bound to; else None."""
    first, shown = None, False
    for call, chain in calls:
        what, seen = _classify(call, chain)
        listed = _appended_to(call, chain) if what == "escape" else None
        if what == "local" or listed is not None:
            # Bound to names (`avg = train_epoch(x)`), and from them to others (`best = avg`),
            # or appended to a list (`history.append(train_epoch(x))`, `log["loss"].append(avg)`):
            # every read of each (of the list) must display or convert it.
            body = ast.Module(body=owner.body, type_ignores=[])
            names = {listed} if listed is not None else _bound_names(chain)
            todo, bound = list(names or ()), set(names or ())
            if not names:
                return None
            while todo:
                if len(bound) > _MAX_BOUND or _leaves_by_name(owner, {todo[-1]}):
                    return None
                for occ, occ_chain in _occurrences_in(body, {todo.pop()}, []):
                    what, more = _classify(occ, occ_chain[1:])
                    listed = _appended_to(occ, occ_chain) if what == "escape" else None
                    if what == "local" or listed is not None:
                        more_names = {listed} if listed is not None else _bound_names(occ_chain)
                        if not more_names:
                            return None
                        todo.extend(more_names - bound)
                        bound |= more_names
                    elif what != "cut":
                        return None
                    seen = seen or more
        elif what != "cut":
            return None
        shown = shown or seen
        first = call.lineno if first is None else min(first, call.lineno)
    return first, shown


def _uses_in_project(walker, func):
    """What the other files of the project do with what `func`, a public function at the top
    level of the module `walker` walks, returns: ("main.py:17", whether one shows it) when each
    call in them displays or converts it; None when no other file calls it; False when one may
    keep or differentiate it, or when a file may reach it in a way we do not follow (a package
    that holds its module imported whole, a name used other than by calls).  The files are the
    project's that mention its name (Project.files_mentioning)."""
    project = walker.project
    module = walker.module
    if project is None or module is None:
        return None
    from ..reach import imports
    from ..source import DecodeError, decode

    name = func.name
    mentioning = project.files_mentioning(name)
    if mentioning is None:
        return False
    own = project.path_of(module)
    first, shown = None, False
    for path in sorted(mentioning):
        if path == own:
            continue
        if path.endswith(".ipynb"):
            return False  # a notebook's cells: not followed
        other = project.module_name(path)
        data = project.contents(path)
        if other is None or data is None:
            return False
        try:
            text = decode(data).text
        except DecodeError:
            return False
        funcs, modules = set(), set()  # the names the file calls it by: `name(`, `mod.name(`
        for target, imported, local in imports(text, other, path.endswith("__init__.py")):
            if imported is None:
                if target == module:
                    modules.add(local)
                elif module.startswith(target + "."):
                    return False  # `import pkg` and `pkg.train.train_epoch(...)`: not followed
            elif imported == "*":
                if target == module or module.startswith(target + "."):
                    return False  # a star import of its module or package: not followed
            elif f"{target}.{imported}" == module:
                modules.add(local)  # `from pkg import train`
            elif imported == name and _is_ours(project, target, module, name):
                funcs.add(local)
        if not funcs and not modules:
            continue  # another `name` (its own function, a word in a string)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        found = _displayed_in(tree, name, funcs, modules)
        if found is None:
            return False
        if found[0] is not None:
            where = f"{os.path.basename(path)}:{found[0]}"
            first = where if first is None else first
            shown = shown or found[1]
    return (first, shown) if first is not None else None


def _is_ours(project, target: str, module: str, name: str) -> bool:
    """Whether `from target import name` in another file binds the function `name` of `module`
    (its module itself, or a package that re-exports it)."""
    if target == module:
        return True
    f = project.fact(f"{target}.{name}")
    node = getattr(f, "node", None) if f is not None else None
    return getattr(node, "module", None) == module and getattr(node, "path", None) == name


def _displayed_in(tree, name: str, funcs: set, modules: set) -> tuple | None:
    """(line of the first call or None, shown) when every use in `tree` of the names `funcs` (the
    function) and `modules` (its module: `mod.name`) is a call that displays or converts what it
    returns; else None."""
    uses = 0
    for node in walk(tree):
        if isinstance(node, ast.Name) and node.id in funcs and isinstance(node.ctx, ast.Load):
            uses += 1
        elif (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name)
              and node.value.id in modules):
            uses += 1
    if not uses:
        return None, False
    owners = [tree] + [n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    first, shown, calls_seen = None, False, 0
    for owner in owners:
        calls = []
        for local in funcs | {name} if modules else funcs:
            for call, chain in _calls_in(owner.body, local):
                f = call.func
                if (isinstance(f, ast.Name) and f.id in funcs or isinstance(f, ast.Attribute) and f.attr == name
                        and isinstance(f.value, ast.Name) and f.value.id in modules):
                    calls.append((call, chain))
        if not calls:
            continue
        calls_seen += len(calls)
        found = _displayed(owner, calls)
        if found is None:
            return None
        first = found[0] if first is None else min(first, found[0])
        shown = shown or found[1]
    if calls_seen != uses:
        return None  # used other than by a call we follow (passed on, stored, in a class body)
    return first, shown


_MAX_BOUND = 8  # names a returned total may pass through in its caller (`avg`, `best`, ...)


def _appended_to(node, chain) -> str | None:
    """The name of the list, or of the dict whose entry is the list, that the statement
    `history.append(node)` or `log["loss"].append(node)` appends `node` to (`chain`: its
    ancestors, innermost last); else None."""
    if len(chain) < 2 or type(chain[-2]) is not ast.Expr:
        return None
    call = chain[-1]
    if type(call) is not ast.Call or len(call.args) != 1 or call.args[0] is not node or call.keywords:
        return None
    func = call.func
    if type(func) is not ast.Attribute or func.attr != "append":
        return None
    target = func.value
    if type(target) is ast.Subscript and type(target.slice) is ast.Constant:
        target = target.value
    return target.id if type(target) is ast.Name else None


def _bound_names(chain) -> set | None:
    """The names the nearest statement in `chain` (ancestors, innermost last) binds its value to:
    an assignment to plain names only (not `+=`, not an attribute, a subscript or a loop
    target); else None."""
    for node in reversed(chain):
        if isinstance(node, ast.stmt):
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign):
                targets = [node.target]
            else:
                return None
            els = [el for tg in targets for el in target_elements(tg)]
            if not els or not all(isinstance(el, ast.Name) for el in els):
                return None
            return {el.id for el in els}
    return None


def _calls_in(body, name):
    """(call, its ancestors) for each call of `name` (`name(...)`, `x.name(...)`) in a body,
    not in nested functions, lambdas or classes."""
    stack = [(s, []) for s in reversed(body)]
    while stack:
        n, ps = stack.pop()
        if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            f = n.func
            if (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None) == name:
                yield n, ps
        sub = ps + [n]
        for c in reversed(child_nodes(n)):
            stack.append((c, sub))


# --------------------------------------------------------------------------- names that leave


def _leaves_by_name(scope_node, names) -> bool:
    """Whether one of `names` is declared global / nonlocal in the scope, read by a function,
    lambda or class nested in it, or (at module level) read by any function of the file (not
    one that has a local of that name, astutil.local_names: `total += loss` in `train`, `total =
    train(...)` at the top)."""
    for s in statements(scope_node.body):
        if isinstance(s, (ast.Global, ast.Nonlocal)) and names & set(s.names):
            return True
        for n in _nested(s):
            if any(isinstance(x, ast.Name) and x.id in names and not (
                    type(n) is not ast.ClassDef and x.id in local_names(n)) for x in walk(n)):
                return True
    if isinstance(scope_node, ast.Module):
        for n in walk(scope_node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and any(
                    isinstance(x, ast.Name) and x.id in names and x.id not in local_names(n) for x in walk(n)):
                return True
    return False


def _own_exprs(s) -> list:
    """The expressions a statement evaluates itself (not those of its nested blocks)."""
    t = type(s)
    if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [*s.decorator_list]
    if t in (ast.If, ast.While):
        return [s.test]
    if t in (ast.For, ast.AsyncFor):
        return [s.iter]
    if t in (ast.With, ast.AsyncWith):
        return [i.context_expr for i in s.items]
    if t.__name__ == "Match":
        return [s.subject] + [c.guard for c in s.cases if c.guard is not None]
    if t in (ast.Try, getattr(ast, "TryStar", ast.Try)):
        return [h.type for h in s.handlers if h.type is not None]
    return [s]


def _flows(s):
    """(target, value) pairs by which a statement binds names."""
    t = type(s)
    if t is ast.Assign:
        for target in s.targets:
            yield target, s.value
    elif t is ast.AnnAssign or t is ast.AugAssign:
        yield s.target, s.value
    elif t in (ast.For, ast.AsyncFor):
        yield s.target, s.iter
    elif t in (ast.With, ast.AsyncWith):
        for i in s.items:
            if i.optional_vars is not None:
                yield i.optional_vars, i.context_expr
    for e in _own_exprs(s):
        for n in walk(e):
            if isinstance(n, ast.NamedExpr):
                yield n.target, n.value


def _nested(s):
    """Nested functions, lambdas and classes in a statement (they may run later)."""
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield s
        return
    for e in _own_exprs(s):
        for n in walk(e):
            if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield n


# --------------------------------------------------------------------------- attributes of an instance


def _self_attr(node) -> str | None:
    """`X` of `self.X`, else None."""
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
        return node.attr
    return None


def _attribute_accumulation(stmt):
    """(attribute, term, kind) for `self.X += term`, `self.X = self.X + term` (kind "add") and
    `self.X.append(term)` (kind "append"), what the text test looks for (text_tests._ATTR_ADD);
    else None."""
    t = type(stmt)
    if t is ast.AugAssign:
        attr = _self_attr(stmt.target)
        return (attr, stmt.value, "add") if attr is not None and type(stmt.op) is ast.Add else None
    if t is ast.Assign:
        if len(stmt.targets) != 1 or type(stmt.value) is not ast.BinOp or type(stmt.value.op) is not ast.Add:
            return None
        attr = _self_attr(stmt.targets[0])
        if attr is None or _self_attr(stmt.value.left) != attr:
            return None
        term = stmt.value.right
        if any(type(n) is ast.Attribute and n.attr == attr for n in walk(term)):
            return None
        return attr, term, "add"
    if t is ast.Expr and type(stmt.value) is ast.Call:
        call = stmt.value
        func = call.func
        if type(func) is ast.Attribute and func.attr == "append" and len(call.args) == 1 and not call.keywords \
                and type(call.args[0]) is not ast.Starred:
            attr = _self_attr(func.value)
            if attr is not None:
                return attr, call.args[0], "append"
    return None


def _from_parameter(term, func) -> bool:
    """Whether `term` is a parameter of `func`, or arithmetic on one (`val * n`): what a meter's
    method adds, whose calls `_meter_update` follows."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = func.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    stack = [term]
    while stack:
        e = stack.pop()
        if type(e) is ast.BinOp:
            stack.extend((e.left, e.right))
        elif type(e) is ast.UnaryOp:
            stack.append(e.operand)
        elif type(e) is ast.Name and e.id in params:
            return True
    return False


_TENSOR_ZEROS = frozenset({"torch.zeros", "torch.tensor", "torch.scalar_tensor"})


def _plain_start(value, kind: str) -> bool:
    """A zero for a total (`0`, `0.0`, `torch.zeros(())`, `torch.tensor(0.0)`), a new empty list
    for a list of losses (`[]`, `list()`): what holds no graph."""
    t = type(value)
    if kind == "append":
        return t is ast.List and not value.elts or t is ast.Call and type(value.func) is ast.Name \
            and value.func.id == "list" and not value.args and not value.keywords
    if t is ast.Constant:
        return type(value.value) in (int, float) and value.value == 0
    if t is ast.Call and dotted_name(value.func) in _TENSOR_ZEROS:
        if any(k.arg == "requires_grad" for k in value.keywords):
            return False
        return dotted_name(value.func) != "torch.tensor" or (
            len(value.args) == 1 and type(value.args[0]) is ast.Constant and value.args[0].value == 0)
    return False


def _attribute_occurrences(tree, attr: str):
    """(the function or module whose body holds it, `<anything>.attr`, its ancestors innermost
    last) for each attribute `attr` of the file; the owner is None inside a lambda or a class
    body (which may run or keep it where we do not see)."""
    stack = [(tree, [], tree)]
    while stack:
        n, ps, owner = stack.pop()
        t = type(n)
        if t is ast.Attribute and n.attr == attr:
            yield owner, n, ps
        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
            inner = n
        elif t in (ast.Lambda, ast.ClassDef):
            inner = None
        else:
            inner = owner
        sub = ps + [n]
        for c in child_nodes(n):
            if t in (ast.FunctionDef, ast.AsyncFunctionDef) and c in n.decorator_list:
                stack.append((c, sub, owner))
            else:
                stack.append((c, sub, inner))


_NO_GRAD_CONTEXTS = ("no_grad", "inference_mode", "set_grad_enabled")


def attribute_total(walker, info, func, stmt, attr: str, kind: str, loops):
    """Whether `stmt` (`self.running_loss += loss` in method `func` of the file's class `info`)
    keeps each step's graph in the instance's attribute, for certain: ((class, method, "line
    30" or None), shown) when
      - every binding of the attribute in the file is in a method of the class and a zero (an
        empty list for a list), `self.running_loss = 0` in `__init__` or a reset method, or an
        accumulation (`_attribute_accumulation`); no string in the file spells the attribute
        (`getattr(self, "running_loss")`, a checkpoint's keys) and no other file of the project
        mentions it;
      - every other read of `.running_loss` (on any object) in the file displays or converts it
        (`print(self.running_loss / n)`, `.item()`, a logger; through local names, as for a
        returned total: `_displayed`): none back-propagates it, returns it, passes it on or
        stores it;
      - a loop of the method carries it (no binding of it at the top level of the loop's body),
        one not over the model's structure; or (the statement in no such loop) the method binds
        it at the top level of its body neither directly nor by a reset method, and the file
        calls it in a loop, with grad not turned off around the call, on the same instance in
        every iteration (`self.train_step(...)` in a method of the class, or `t.train_step(...)`
        where every binding of `t` in the scope is `Trainer(...)`, outside the loop) whose body
        binds it at its top level neither (`t.running_loss = 0`, `t.reset()`): the line of the
        first such call.
    Else None."""
    if info is None or walker.lines is None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    cls, tree, text = info.node, walker.tree, walker.lines.text
    if func not in cls.body or not is_plain_method(func) or not func.args.args or func.args.args[0].arg != "self":
        return None
    if re.search(r"""['"]%s['"]""" % re.escape(attr), text) or any(
            w in text for w in ("getattr(", "vars(", "__dict__", "__getattribute__")):
        return None  # (an attribute read by a name the code builds: `getattr(t, "running" + "_loss")`)
    project = walker.project
    if project is not None and walker.module is not None:
        mentioning = project.files_mentioning(attr)
        own = project.path_of(walker.module)
        if mentioning is None or any(p != own for p in mentioning):
            return None
    methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    resets: dict = {}  # id(method) -> [reset statements]
    shown = False
    for owner, occ, chain in _attribute_occurrences(tree, attr):
        if owner is None:
            return None
        parent = chain[-1]
        if isinstance(occ.ctx, ast.Store):
            if type(parent) is ast.Assign and all(_self_attr(tg) is not None for tg in parent.targets) \
                    and owner in methods.values() and occ in parent.targets:
                if _attribute_accumulation(parent) is not None and _attribute_accumulation(parent)[0] == attr:
                    continue
                if not _plain_start(parent.value, kind):
                    return None
                resets.setdefault(id(owner), []).append(parent)
                continue
            if type(parent) is ast.AugAssign and owner in methods.values():
                found = _attribute_accumulation(parent)
                if found is not None and found[0] == attr and found[2] == kind:
                    continue
            return None
        if not isinstance(occ.ctx, ast.Load):
            return None  # `del self.running_loss`
        found = None
        if type(parent) is ast.BinOp and parent.left is occ and len(chain) > 1:
            found = _attribute_accumulation(chain[-2])  # `self.total = self.total + loss`
        elif type(parent) is ast.Attribute and parent.attr == "append" and len(chain) > 2:
            found = _attribute_accumulation(chain[-3])  # `self.losses.append(loss)`
        if found is not None and found[0] == attr and _self_attr(occ) == attr:
            if found[2] != kind:
                return None
            continue
        if kind == "append" and _numpy_argument(occ, chain):
            return None  # (`np.mean(self.losses)`: NumPy raises where one requires grad: TNS103's)
        uses = _displayed(owner, [(occ, chain)])
        if uses is None:
            return None  # back-propagated, handed out, passed on, stored
        shown = shown or uses[1]
    if not resets:
        return None
    # A loop of the method that carries it (from the innermost out).
    for loop in reversed(loops):
        if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
            continue
        if isinstance(loop, (ast.For, ast.AsyncFor)) and _over_the_model(loop.iter):
            continue
        if _resets_in(loop.body, "self", attr, methods, resets):
            break
        return (cls.name, func.name, None), shown
    if loops or _resets_in(func.body, "self", attr, methods, resets):
        return None  # (in a loop that does not carry it: a loop around the call may not either)
    first = _called_in_a_loop(tree, cls.name, func.name, attr, methods, resets) if cls in tree.body else None
    where = f"line {first}" if first is not None else _called_in_a_loop_elsewhere(
        walker, cls, func.name, attr, methods, resets) if _backpropagated_in(func, stmt) else None
    return ((cls.name, func.name, where), shown) if where is not None else None


def _resets_in(body, recv: str, attr: str, methods: dict, resets: dict) -> bool:
    """Whether a statement at the top level of `body` binds `<recv>.attr` (`t.running_loss = 0`,
    not an accumulation) or calls a method of the class that does (`t.reset()`)."""
    for s in body:
        if type(s) in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            targets = s.targets if type(s) is ast.Assign else [s.target]
            if type(s) is not ast.AugAssign and _attribute_accumulation(s) is None and any(
                    type(el) is ast.Attribute and el.attr == attr and type(el.value) is ast.Name and el.value.id == recv
                    for tg in targets for el in target_elements(tg)):
                return True
        elif type(s) is ast.Expr and type(s.value) is ast.Call:
            f = s.value.func
            if type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == recv and f.attr in methods \
                    and id(methods[f.attr]) in resets:
                return True
    return False


def _backpropagated_in(func, stmt) -> bool:
    """Whether method `func` calls `.backward()` on the name `stmt` adds (`loss.backward()`, then
    `self.running_loss += loss`) before it: what it adds requires grad whatever instance the
    method runs on (another file's, built with a frozen model or not)."""
    found = _attribute_accumulation(stmt)
    term = found[1] if found is not None else None
    if type(term) is not ast.Name:
        return False
    return any(type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr == "backward"
               and type(n.func.value) is ast.Name and n.func.value.id == term.id and n.lineno < stmt.lineno
               for n in walk(func))


def _called_in_a_loop_elsewhere(walker, cls, name: str, attr: str, methods: dict, resets: dict) -> str | None:
    """Where ("main.py:7") another file of the project first calls method `name` of the public
    class `cls` at the top of the module `walker` walks in a loop (asked of a method that
    back-propagates what it adds: _backpropagated_in), as _called_in_a_loop tells,
    on an instance of the class it imports by name (`from trainer import Trainer`, `t =
    Trainer(model)`, `for x, y in loader: t.train_step(x, y)`); else None.  The files are the
    project's that mention both names (Project.files_mentioning); a notebook is not read."""
    project, module, tree = walker.project, walker.module, walker.tree
    if project is None or module is None or cls not in tree.body or cls.name.startswith("_"):
        return None
    from ..reach import imports
    from ..source import DecodeError, decode

    mentioning = project.files_mentioning(name)
    if not mentioning:
        return None
    own = project.path_of(module)
    needle = cls.name.encode()
    for path in sorted(mentioning):
        if path == own or path.endswith(".ipynb"):
            continue
        other = project.module_name(path)
        data = project.contents(path)
        if other is None or data is None or needle not in data:
            continue
        try:
            text = decode(data).text
        except DecodeError:
            continue
        local = {bound for target, imported, bound in imports(text, other, path.endswith("__init__.py"))
                 if imported == cls.name and _is_ours(project, target, module, cls.name)}
        if not local:
            continue
        try:
            other_tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = [n for n in (_called_in_a_loop(other_tree, c, name, attr, methods, resets, own_methods=False) for c in local)
                 if n is not None]
        if lines:
            return f"{os.path.basename(path)}:{min(lines)}"
    return None


def _called_in_a_loop(tree, cls_name: str, name: str, attr: str, methods: dict, resets: dict,
                      own_methods: bool = True) -> int | None:
    """The line of the first call of method `name` of class `cls_name` (of the module of `tree`,
    or imported by that name) in a loop of `tree` on the same instance in every iteration, with
    grad on, in a loop that does not bind the attribute again (attribute_total); else None.
    `methods`: the class's methods by name (`own_methods`: also `self.name(...)` in one)."""
    first = None
    owners = [tree] + [n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for owner in owners:
        if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                (dotted_name(d.func if isinstance(d, ast.Call) else d) or "").endswith(_NO_GRAD_CONTEXTS)
                for d in owner.decorator_list):
            continue
        for call, chain in _calls_in(owner.body, name):
            f = call.func
            if type(f) is not ast.Attribute or type(f.value) is not ast.Name:
                continue
            recv = f.value.id
            if recv == "self":
                if not own_methods or owner not in methods.values() or owner.args.args[0].arg != "self":
                    continue
            elif not _instance_of(owner, recv, cls_name, tree):
                continue
            loop = next((p for p in reversed(chain) if isinstance(p, (ast.For, ast.AsyncFor, ast.While))), None)
            if loop is None or any(isinstance(p, (ast.With, ast.AsyncWith)) and any(
                    (dotted_name(i.context_expr.func if isinstance(i.context_expr, ast.Call) else i.context_expr)
                     or "").endswith(_NO_GRAD_CONTEXTS) for i in p.items) for p in chain):
                continue
            if isinstance(loop, (ast.For, ast.AsyncFor)) and _over_the_model(loop.iter):
                continue
            if _resets_in(loop.body, recv, attr, methods, resets):
                continue
            if recv != "self" and any(_binds(s, recv) for s in statements(loop.body)) or \
                    recv != "self" and isinstance(loop, (ast.For, ast.AsyncFor)) and any(
                    type(el) is ast.Name and el.id == recv for el in target_elements(loop.target)):
                continue  # a new instance in each iteration
            first = call.lineno if first is None else min(first, call.lineno)
    return first


def _binds(s, name: str) -> bool:
    return any(type(el) is ast.Name and el.id == name for target, _ in _flows(s) for el in target_elements(target))


def _instance_of(owner, name: str, cls_name: str, tree) -> bool:
    """Whether every binding of `name` in `owner` (a function, or the module `tree`) makes an
    instance of the class `cls_name` names (`t = Trainer(model)`), and it is not a parameter, a
    global or a nonlocal."""
    found = _bound_only_so(owner, name, lambda target, value, _name: type(target) is ast.Name and type(
        value) is ast.Call and type(value.func) is ast.Name and value.func.id == cls_name)
    # (The class's name bound to something else in the module: not the class.)
    return found and sum(1 for s in statements(tree.body) for target, _ in _flows(s) for el in target_elements(target)
                         if type(el) is ast.Name and el.id == cls_name) == 0
