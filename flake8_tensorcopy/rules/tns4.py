"""TNS4xx: in-place writes that autograd forbids (leaves that require grad), or that it cannot
see (`.detach()` aliases, NumPy arrays and `.data` of tensors saved for a backward to come)."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from itertools import repeat

from ..analysis.astutil import contains, suspends, target_elements, walk
from ..analysis.facts import MAPPING, MODULE, TENSOR, Grad, must_grad
from ..analysis.saved import strip_views
from ..analysis.summaries import CallSites
from ..analysis.storage import Alias, _calls_backward, is_inplace_method
from ..fixes import attr_name_span
from ..intents import AppendCall, WrapStatements
from ..reach import imports
from .base import Fix, Invalid, Oracle, Rule, Valid, dedent
from ..source import (
    POSSESSIVE,
    LazyPattern,
    class_lines,
    closing_bracket,
    header_parameters,
    kept_for_the_last_text,
    word_count,
    word_positions,
)

_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation"
_VIEW_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation"
_VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)


# torch.nn.functional activations that write into their input with `inplace=True`.
_INPLACE_FUNCTIONAL = frozenset(
    "torch.nn.functional." + n
    for n in "relu relu6 elu selu celu leaky_relu hardtanh threshold silu hardswish hardsigmoid mish rrelu".split()
)


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


# --------------------------------------------------------------------------- TNS401


# Text of an in-place write: `x[i] = v`, augmented assignment, `*_(` methods, `inplace=True`.
_PARAM_WRITER_LINES = 40
# A function's `def` line(s) up to its parameter list's end, and the names in that list.
_DEF_HEADER = LazyPattern(r"\s*(?:async\s+)?def\s+(\w+)\s*\((.*?)\)\s*(?:->.*?)?:[ \t]*(?:#[^\n]*)?(?:\n|$)", re.S)
# (Not `*args` and `**kwargs`: no call passes them facts, astutil.bind_arguments.)
_PARAM_NAME = LazyPattern(r"(?:^|[(,])\s*([A-Za-z_]\w*)")
# Where the writes but `*_(` methods and `inplace=True` may be: a `]`, any blanks, `=` (a
# subscript written); an `=` right after an operator (an augmented assignment).  `_inplace_starts`
# tells which of these the writes `\]\s*=[^=]|[-+*/%@&|^]=|//=|\*\*=|>>=|<<=` are.  Each pattern
# starts with a character searched for at C speed: one that starts with the set of them was
# tried at every position (three times the cost), and one of alternatives, or `*_(` as a branch
# starting with any letter, more still: most of what the scope filter costs on a large tree.
_SUBSCRIPT_WRITE = LazyPattern(r"\]\s*=")
_AUGMENTED_WRITE = LazyPattern(r"=(?<=[-+*/%@&|^<>]=)")


def _inplace_starts(text: str):
    """Where each in-place write of `text` starts (`x[i] = v`, augmented assignment, `*_(`
    methods, `inplace=True`), in no particular order."""
    end = len(text)
    for m in _SUBSCRIPT_WRITE.finditer(text):
        if m.end() < end and text[m.end()] != "=":  # `x[i] = v`, not `x[i] == v`
            yield m.start()
    for m in _AUGMENTED_WRITE.finditer(text):
        at = m.start() - 1  # (the operator)
        c = text[at]
        if c in "<>":  # `<<=` and `>>=`; `<=` and `>=` compare
            if at and text[at - 1] == c:
                yield at - 1
        elif c in "/*" and at and text[at - 1] == c:  # `//=`, `**=`
            yield at - 1
        else:
            yield at
    i = text.find("inplace=True")
    while i != -1:
        yield i
        i = text.find("inplace=True", i + 1)
    i = text.find("_(")
    while i != -1:
        if i and text[i - 1].isalnum():
            yield i - 1
        i = text.find("_(", i + 1)


def _writes_anywhere(text: str) -> list:
    """The offsets, in order, of the in-place writes of `text` that `_admits` may find in a part
    of it made of whole lines (a function's): `inplace=True` wherever it is (which call it is in
    is told by a look back that may reach past the part's first line), the others where
    `_write_target` reads a target."""
    return _writes_of(text, sorted(_inplace_starts(text)))


def _writes_of(text: str, starts: list) -> list:
    """`_writes_anywhere(text)` of `starts`, `_inplace_starts(text)` in order."""
    return [at for at in starts if text.startswith("inplace=True", at) or _write_target(text, at) is not None]


def _write_target(text: str, at: int) -> str | None:
    """The text before the in-place write found at `at` on its line (`w[0]`, `layer.weight -`,
    `self.scale.mul`): what is written to, not whatever else the line mentions; None where the
    rule never reports the write (`.data`, `.grad`, `requires_grad_(`)."""
    if text.startswith("requires_grad_(", at - 12):
        return None
    start = text.rfind("\n", 0, at) + 1
    target = text[start : at + 1]
    own = target[target.rfind(";") + 1 :]  # `w.data.zero_(); v.add_(1)`: v's write is v's
    if _attribute_in(own, ".data") or _attribute_in(own, ".grad"):
        return None
    c = text[at]
    if c in "-+*/%@&|^<>":  # `d["n"] += 1`: an augmented assignment's target
        core = own.rstrip(" \t-+*/%@&|^<>")
        if core.endswith("]") and _string_index(core):
            return None
    elif c == "]":
        # `x: list[int] = []`, `self.cache: dict[str, T] = {}`: the `]` ends an annotation.
        m = _ANNOTATED.match(own)
        if m is not None and m.group(1) not in _CLAUSE_WORDS:
            return None
        # `kwargs["mask"] = m`, `d["n"] += 1`: a key that is a string indexes no tensor.
        if _string_index(own):
            return None
    elif c == "i" and text.startswith("inplace=True", at):
        # Only torch.nn.functional's activations write with `inplace=True` (`nn.ReLU(inplace=True)`
        # makes a module: no write).
        callee = _callee_before(text, at)
        if callee is not None and callee.rsplit(".", 1)[-1] not in _INPLACE_FUNCTIONAL_NAMES:
            return None
    return target


def _string_index(own: str) -> bool:
    """Whether the subscript that `own` ends with (`...]`) starts with a string literal."""
    depth = 0
    for i in range(len(own) - 1, -1, -1):
        c = own[i]
        if c == "]":
            depth += 1
        elif c == "[":
            depth -= 1
            if not depth:
                key = own[i + 1:].lstrip(" ")
                key = key.lstrip("rbfuRBFU") if key[:1] in "rbfuRBFU" and key[1:3].lstrip("rbfuRBFU")[:1] in "'\"" \
                    else key
                return key[:1] in ("'", '"')
    return False


# A statement that starts with `name:` or `a.b:` (an annotated assignment), and the words that
# open a clause the same way (`else: w[0] = 1` writes).
_ANNOTATED = LazyPattern(r"[ \t]*([A-Za-z_][\w.]*)[ \t]*:(?!=)")
_CLAUSE_WORDS = frozenset(("else", "try", "finally", "except"))
_INPLACE_FUNCTIONAL_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in _INPLACE_FUNCTIONAL)


def _callee_before(text: str, at: int) -> str | None:
    """The dotted name called by the call whose arguments hold offset `at` (`nn.ReLU` of
    `nn.ReLU(inplace=True)`), or None when it cannot be told within a few lines."""
    depth = 0
    i = at
    stop = max(0, at - 2000)
    while i > stop:
        i -= 1
        c = text[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth:
                depth -= 1
            elif c == "(":
                j = i
                while j and (text[j - 1].isalnum() or text[j - 1] in "_."):
                    j -= 1
                return text[j:i] or None
            else:
                return None
        elif c in "'\"#":
            return None  # a string or a comment between: not told
    return None


# `w = model.fc.weight`, `b = layer.bias[:3]`, `w: Tensor = lin.weight`: a local bound to what the
# filter takes for a leaf.
_ALIAS_LINE = LazyPattern(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*([^=\n][^\n]*)$", re.M)


def _leaf_aliases(text: str, bindings: tuple | None = None) -> frozenset:
    """Names `text` binds, by an assignment or an unpacking (`w, b = lin.weight, lin.bias`), to
    a value that mentions a weight, a bias or a parameter (`bindings`: `_bindings(text)`, if
    read already), or a loop to the elements of an attribute that does (`for p in
    self.params:`, what a hand-written optimizer was given), or of what such a loop's element
    holds under such a name (`for p in group["params"]:`)."""
    if not _leaf_word(text):
        return frozenset()
    out = set()
    if bindings is None:
        bindings = _bindings(text)
    for name, values in bindings[0].items():
        for value in values:
            # Not `w = w / w.sum()` nor `h = h * attn_weights` where the function computes those.
            if _leaf_word(value) and _leafish(text, value, bindings, frozenset((name,))):
                out.add(name)
                break
    if "for " in text:
        for m in _FOR_LINE.finditer(text):
            iterable = m.group(2).strip()
            if iterable.startswith("self.") and _leaf_word(iterable) and iterable[5:].isidentifier():
                out.update(_NAME.findall(m.group(1)))
            elif _leaf_word(iterable) and (first := _NAME.match(iterable)) is not None and first.group(0) in out:
                # A loop over what an earlier one's element holds (`for group in
                # self.param_groups:` then `for p in group["params"]:`).
                out.update(_NAME.findall(m.group(1)))
    return frozenset(out)


def _written(target: str) -> str:
    """The expression a write's target text ends with: `self.w.add` of `y = self.w.add`,
    `cache.seen[self.i]` of `if k: cache.seen[self.i]`, `self.n` of `self.n +`."""
    t = target.rstrip().rstrip("-+*/%@&|^<>").rstrip()
    i, depth = len(t), 0
    while i:
        c = t[i - 1]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if not depth:
                break
            depth -= 1
        elif not depth and not (c.isalnum() or c == "_" or c == "."):
            break
        i -= 1
    return t[i:].lstrip(" \t(")


def _attribute_in(text: str, attr: str) -> bool:
    """Whether `text` reads attribute `attr` (".data"), not one that starts with it (`.data_scale`)."""
    i = text.find(attr)
    while i != -1:
        j = i + len(attr)
        if j == len(text) or not (text[j].isalnum() or text[j] == "_"):
            return True
        i = text.find(attr, j)
    return False


# `self.w = nn.Parameter(...)`, `self.scale = torch.ones(3, requires_grad=True)`,
# `self.register_parameter("w", ...)`: attributes a class makes leaves that require grad.
# (Two patterns, each searched alone: one of alternatives that start with different characters
# is tried at every position, ten times the cost; and alone, neither hides the other's match.)
_LEAF_ATTRIBUTE = LazyPattern(r"\.[ \t]*(\w+)[ \t]*=[^=\n][^\n]*(?:Parameter|requires_grad)")
_REGISTERED = LazyPattern(r"register_parameter\(\s*['\"](\w+)")


def _leaf_attributes(text: str) -> frozenset:
    """Attribute names `text` binds to a parameter or a tensor that requires grad."""
    if "Parameter" not in text and "requires_grad" not in text and "register_parameter" not in text:
        return frozenset()
    # Searched on the lines that hold the words only (a match is on one line): tried at every
    # `.x = ...` line of a model, the pattern cost a third of the rule's scope tests.
    found = []
    lines = set()
    for word in ("Parameter", "requires_grad"):
        at = text.find(word)
        while at != -1:
            line = text.rfind("\n", 0, at) + 1
            if line not in lines:
                lines.add(line)
                end = text.find("\n", at)
                found += _LEAF_ATTRIBUTE.findall(text, line, end if end != -1 else len(text))
            at = text.find(word, at + len(word))
    if "register_parameter" in text:
        found += _REGISTERED.findall(text)
    return frozenset(found)


# A value that is no tensor: a display, a number, a string, None, True, False, an empty container.
_LITERAL = LazyPattern(r"(?:[-+]?\.?\d|[rbfuRBFU]{0,2}['\"]|[\[{]|(?:None|True|False)\b"
                       r"|(?:dict|list|set|defaultdict|OrderedDict|deque)\(\))")


class _LiteralAttributes:
    """The attributes `self.x` that a text binds, and only ever to values that are never a leaf
    that requires grad (`_inert`: `self.cache = {}`, `self.n = 0`, `self.layers = nn.ModuleList(...)`,
    `self.state = torch.zeros(...)`): a write to them, or into them, writes to no such leaf (a
    list's element written in place is not one either: the rule follows no element).  `x in
    _LiteralAttributes(text)`: asked an attribute at a time, each by searches of `self.x` (the
    bindings of every attribute of a model file, each looked at, cost half the rule's text
    tests)."""

    __slots__ = ("text", "known", "set")

    def __init__(self, text: str) -> None:
        self.text = text
        self.known: dict | None = {}
        self.set = ()  # (prefix, suffix) of each name `setattr(self, ...)` sets
        if "__dict__" in text or "self." not in text:
            self.known = None
        elif "setattr(self" in text:
            # `setattr(self, f"{kind}_inv_freq", ...)` may set only the attributes its name's
            # literal parts allow; a name that is not a string literal (`setattr(self, name,
            # v)`), any.
            found = []
            for at in _occurrences(text, "setattr(self"):
                m = _SETATTR_NAME.match(text, at)
                if m is None:
                    self.known = None
                    break
                name = m.group(3)
                if m.group(1):
                    if "{" in name and ("}" not in name or "\\" in name):
                        self.known = None
                        break
                    found.append((name.split("{", 1)[0], name.rsplit("}", 1)[-1]) if "{" in name else (name, None))
                else:
                    found.append((name, None))
            self.set = tuple(found)

    def __contains__(self, attr: str) -> bool:
        known = self.known
        if known is None:
            return False
        found = known.get(attr)
        if found is None:
            found = known[attr] = not any(attr == prefix if suffix is None else
                                          attr.startswith(prefix) and attr.endswith(suffix)
                                          for prefix, suffix in self.set) and _only_literal(self.text, attr)
        return found


# `setattr(self, "name", ...)`, `setattr(self, f"{kind}_name", ...)`: whether an f-string, the name.
_SETATTR_NAME = LazyPattern(r"setattr\(self[ \t]*,[ \t]*(f?)(['\"])([^'\"\n]*)\2[ \t]*,")


# What makes no leaf that requires grad: a module (`nn.Linear(...)`, `nn.ModuleList(...)`: not
# `nn.Parameter`, nor `nn.Buffer`, which keeps its data's requires_grad), or a torch function that
# makes a new tensor, one that requires grad only where its call says `requires_grad` (a factory)
# or that is computed from others (never a leaf that requires grad).
_MODULE_MADE = LazyPattern(r"(?:torch\.)?nn\.(?!Parameter|Buffer|Uninitialized)[A-Z]\w*[ \t]*\(")
_NEW_TENSOR = LazyPattern(r"torch\.(?:zeros|ones|empty|full|arange|eye|rand|randn|randint|randperm|linspace"
                          r"|logspace|tensor|zeros_like|ones_like|empty_like|full_like|rand_like|randn_like"
                          r"|randint_like|cat|concat|concatenate|stack|where)[ \t]*\(")


def _inert(text: str, at: int, attr: str) -> str | None:
    """What the value bound at offset `at` of `text` (to `self.<attr>`) is, where it is never a
    leaf that requires grad: "literal" (a display, a number, a string), "none", "module" (one
    made there), "tensor" (a new tensor made there, `torch.zeros(...)`, `torch.cat([...])`, that
    nothing after the call turns into a leaf), "self" (what `self.<attr>` itself holds, indexed
    or by a method: `self.keys.index_select(0, i)`; as the attribute's other bindings say); None
    for any other value, or one whose text names `requires_grad` or `Parameter`."""
    if text.startswith("None", at) and not (text[at + 4:at + 5].isalnum() or text[at + 4:at + 5] == "_"):
        return "none"
    if _LITERAL.match(text, at) is not None:
        return "literal"
    made = _MODULE_MADE.match(text, at)
    kind = "module"
    if made is None:
        made = _NEW_TENSOR.match(text, at)
        kind = "tensor"
    if made is None:
        own = "self." + attr
        if not text.startswith(own, at) or text[at + len(own):at + len(own) + 1] not in ("[", "."):
            return None
        kind = "self"
        start = at + len(own)
    else:
        start = made.end() - 1  # (the call's bracket)
    end = _value_end(text, start)
    if end is None:
        return None
    value = text[start:end]
    if "requires_grad" in value or "Parameter" in value:
        return None
    # The call's brackets, or the subscripts, attributes and calls after `self.x`, then nothing
    # but a comment (`torch.zeros(3).requires_grad_()` is a leaf; `self.x[0] if c else w` may be).
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c in "([":
            close = closing_bracket(value, i)
            if close == -1:
                return None
            i = close + 1
        elif c == "." and kind == "self":
            i += 1
            while i < n and (value[i].isalnum() or value[i] == "_"):
                i += 1
        else:
            break
        if kind != "self":
            break
    tail = value[i:].strip()
    return kind if not tail or tail.startswith("#") else None


def _value_end(text: str, at: int) -> int | None:
    """Where the statement whose value starts at `at` ends: the first line end outside brackets
    (None past 4,000 characters, or at a backslash that joins lines)."""
    depth = 0
    stop = min(len(text), at + 4000)
    i = at
    while i < stop:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "\n":
            if depth <= 0:
                return None if text[i - 1] == "\\" else i
        elif c in "'\"#" and depth:
            return None  # (a string or comment inside the brackets: not read)
        i += 1
    return len(text) if i == len(text) else None


def _only_literal(text: str, attr: str) -> bool:
    """Whether `text` binds `self.<attr>` (`self.x = v`, `self.x: T = v`), each time to a value
    that is never a leaf that requires grad (`_inert`), and never lists it (`self.x, self.y =
    pair`, an argument)."""
    a = "self\\." + re.escape(attr) + "(?!\\w)"
    kinds = set()
    for m in re.finditer(a + r"[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*([^\n]*)", text):
        kind = _inert(text, m.start(1), attr)
        if kind is None:
            return False
        kinds.add(kind)
    # What `self.x` itself holds is inert where its other values are tensors or None (an item
    # of a list, or an attribute of a module, may be a parameter).
    if "self" in kinds and not kinds <= {"self", "tensor", "none"}:
        return False
    return bool(kinds) and re.search(a + r"[ \t]*,", text) is None and re.search(r",[ \t]*" + a, text) is None


# The name a line binds (`w = ...`, `w: torch.Tensor = ...`), matched at the line's start; the
# name before `.requires_grad_(`.
_NAME_BOUND = LazyPattern(r"[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")
# (Tried once a run of word characters, from its start, as source.BEFORE_FIRST_LETTER says.)
_BEFORE_REQUIRES_GRAD_CALL = LazyPattern(r"(?<!\w)[^\WA-Za-z_]*%s([A-Za-z_]\w*%s)[ \t]*\.[ \t]*$"
                                         % (POSSESSIVE, POSSESSIVE))
# What follows `requires_grad` where a line sets it (`w.requires_grad = True`; not to False).
_SETS_REQUIRES_GRAD = LazyPattern(r"[ \t]*=(?!=)(?![ \t]*False\b)")


def _leaf_names(text: str) -> frozenset:
    """Names `text` binds, on a line that makes a parameter or a tensor that requires grad
    (`w = torch.randn(3, requires_grad=True)`, `w.requires_grad_()`, `w.requires_grad = True`):
    a module's leaf that its functions write to by that name alone (`w.sub_(lr * w.grad)` in
    `step()`)."""
    names = set()
    for word in ("requires_grad", "Parameter"):
        at = text.find(word)
        while at != -1:
            line = text.rfind("\n", 0, at) + 1
            m = _NAME_BOUND.match(text, line)
            if m is not None and m.end() <= at:
                names.add(m.group(1))
            if text.startswith("requires_grad_(", at) or word == "requires_grad" and _SETS_REQUIRES_GRAD.match(
                    text, at + len(word)):
                m = _BEFORE_REQUIRES_GRAD_CALL.search(text, line, at)
                if m is not None:
                    names.add(m.group(1))
            at = text.find(word, at + len(word))
    return frozenset(names)


# A `def` at the margin (a top-level function) and its name; a line that starts a statement at
# the margin (a name, a keyword, a decorator: not a closing bracket or a string's next line).
_TOP_DEF = LazyPattern(r"(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(")
_AT_MARGIN = LazyPattern(r"\n[A-Za-z_@]")
# What makes a leaf that requires grad (not `if x.requires_grad:`, `requires_grad=False`, nor a
# docstring's "Parameters:").
_MAKES_LEAF = ("requires_grad=True", "requires_grad_()", "requires_grad_(True)", "Parameter(")


def _leaf_factories(text: str) -> frozenset:
    """The top-level functions of `text` that may return a leaf they make (`def init_params():
    w = torch.randn(2, 1, requires_grad=True); ...; return [w, b]`): their text makes one and
    returns.  Where a function calls one (`t = make_leaf(); t.zero_()`), the leaf it writes to
    is made in another function, which its own text does not show.  From each place a leaf is
    made, to the `def` at the margin above it, by bisecting those (a pattern tried at every
    line's start cost 0.24 G more instructions, every 10th file of a large model tree)."""
    made = sorted(at for word in _MAKES_LEAF for at in _occurrences(text, word))
    if not made:
        return frozenset()
    defs = sorted(at + 1 for prefix in ("\ndef ", "\nasync def ") for at in _occurrences(text, prefix))
    if text.startswith(("def ", "async def ")):
        defs.insert(0, 0)
    out = set()
    seen = set()
    for at in made:
        k = bisect_left(defs, at) - 1
        if k < 0 or k in seen:
            continue
        seen.add(k)
        m = _TOP_DEF.match(text, defs[k])
        if m is None:
            continue
        nxt = _AT_MARGIN.search(text, m.end())
        end = nxt.start() if nxt is not None else len(text)
        if at < end and ("return" in text[m.end():end] or "yield" in text[m.end():end]):
            out.add(m.group(1))
    return frozenset(out)


def _imported_leaf_attributes(text: str) -> dict:
    """{class: `.attr` of each attribute the module's text makes a leaf that requires grad} for
    the classes at its margin, when it makes any (_leaf_attributes: any class's, a text test)."""
    attributes = _leaf_attributes(text)
    if not attributes:
        return {}
    written = frozenset("." + a for a in attributes)
    return {m.group(1): written for m in map(_CLASS_NAME.match, repeat(text), class_lines(text)) if m is not None}


_CLASS_NAME = LazyPattern(r"class[ \t]+([A-Za-z_]\w*)")


def _names_parameter(text: str) -> bool:
    """Whether `text` names `Parameter` (`nn.Parameter(...)`, `ParameterList`, an annotation), not
    only in a docstring's "Parameters:" section (torch has no class `Parameters`)."""
    at = text.find("Parameter")
    while at != -1:
        if not text.startswith("s", at + 9):
            return True
        at = text.find("Parameter", at + 9)
    return False


def _occurrences(text: str, word: str) -> list:
    out = []
    at = text.find(word)
    while at != -1:
        out.append(at)
        at = text.find(word, at + len(word))
    return out


class _LeafBytes:
    """InplaceOnLeaf.imported_needle: `search(data)` says whether a module's bytes may make a
    leaf (_MAKES_LEAF), by a search for each literal (a pattern of their alternatives is tried
    at every position: 4% of the instructions of a large model tree's check)."""

    __slots__ = ()

    _GRAD = tuple(w.encode() for w in _MAKES_LEAF if w.startswith("requires_grad"))

    def search(self, data: bytes):
        if b"Parameter(" in data:
            return True
        return (b"requires_grad" in data and any(w in data for w in self._GRAD)) or None


class _FileLeaves:
    """What `_admits` reads of the whole file: the attributes its classes make leaves that
    require grad (`_leaf_attributes`), the names it binds to such leaves (`_leaf_names`), the
    `self.x` it binds to literals only (`_LiteralAttributes`), and its functions that return a
    leaf they make (`_leaf_factories`); each read from the text when first asked (most files'
    functions hold no write the rule may report, and then none is)."""

    __slots__ = ("text", "_attributes", "_names", "_literals", "_factories", "_imported", "_called", "_torch")

    def __init__(self, text: str, imported: frozenset = frozenset(), called: bool = False) -> None:
        self.text = text
        # Whether the file calls a function, by name (`called`: each is, by another module).
        self._called: CallSites | None = None if called else CallSites(text)
        self._attributes = self._names = self._literals = self._factories = self._torch = None
        self._imported = imported  # the leaf factories of other modules the file calls

    def called(self, name: str) -> bool:
        """Whether the file calls `name(` (summaries.CallSites: not its `def`)."""
        sites = self._called
        return sites is None or bool(sites.positions(name))

    @property
    def factories(self) -> frozenset:
        if self._factories is None:
            self._factories = _leaf_factories(self.text) | {n for n in self._imported if n[0] != "."}
        return self._factories

    @property
    def attributes(self) -> frozenset:
        if self._attributes is None:
            # (And those of the classes of other modules that the file names: `.temperature`.)
            self._attributes = _leaf_attributes(self.text) | {n[1:] for n in self._imported if n[0] == "."}
        return self._attributes

    @property
    def names(self) -> frozenset:
        if self._names is None:
            self._names = _leaf_names(self.text)
        return self._names

    @property
    def torch_names(self) -> frozenset:
        """The names the file's imports bind to torch's modules and functions (`torch`, `F` of
        `import torch.nn.functional as F`, `nn`, `relu_` of `from torch import relu_`): what an
        in-place function is called through (`torch.relu_(w)`, `F.relu_(w)`)."""
        if self._torch is None:
            self._torch = frozenset(local.split(".")[0] for module, _name, local in imports(self.text, None, False)
                                    if module == "torch" or module.startswith("torch."))
        return self._torch

    @property
    def literals(self):
        if self._literals is None:
            self._literals = _LiteralAttributes(self.text)
        return self._literals


# For _evident_leaves: a triple-quoted string, a one-line string, a name that is no attribute
# (nor the end of a longer word), the name whose `requires_grad` a line sets (`w.requires_grad_()`,
# `m.fc.weight.requires_grad = True`), and the words that never name a leaf.
_TRIPLE = LazyPattern(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
_STRING = LazyPattern(r"""(['"])(?:\\.|(?!\1)[^\\\n])*\1""")
_WORD = LazyPattern(r"(?<![\w.])[A-Za-z_]\w*")
_REQUIRES_GRAD_OF = LazyPattern(r"(?<![\w.])([A-Za-z_]\w*)(?:[ \t]*(?:\.[ \t]*\w+|\[[^\]\n]*\]))*[ \t]*\.[ \t]*requires_grad")
_KEYWORDS = frozenset("""False None True and as assert async await break class continue def del elif else except
finally for from global if import in is lambda nonlocal not or pass raise return try while with yield self cls
torch nn F np""".split())


def _makes_leaf(line: str) -> bool:
    return "requires_grad" in line or "parameters(" in line or _names_parameter(line)


def _logical_lines(text: str) -> list:
    """The statements' lines of `text`, each joined with the lines its brackets or a backslash
    continue onto, strings' contents and comments left out (a triple-quoted one too)."""
    text = _TRIPLE.sub('""', text)
    out, cur, depth = [], [], 0
    for line in text.split("\n"):
        line = _STRING.sub('""', line)
        hash_at = line.find("#")
        if hash_at != -1:
            line = line[:hash_at]
        cur.append(line)
        for c in line:
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
        if depth > 0 or line.endswith("\\"):
            continue
        depth = 0
        out.append(" ".join(cur))
        cur = []
    if cur:
        out.append(" ".join(cur))
    return out


def _bound(line: str) -> tuple:
    """(names `line` binds, the text they are bound from) of a logical line: an assignment's
    targets (`a = b = v`, `w, b = ...`, `w: T = v`), a for loop's, a with's `as` names, a
    walrus; ((), "") for any other."""
    s = line.strip()
    if s.startswith(("for ", "async for ")):
        head = s[s.index("for ") + 4:]
        at = head.find(" in ")
        if at == -1:
            return (), ""
        return tuple(n for n in _WORD.findall(head[:at]) if n not in _KEYWORDS), head[at + 4:]
    if s.startswith(("with ", "async with ")) and " as " in s:
        names = []
        for part in s.split(" as ")[1:]:
            m = _WORD.match(part.lstrip(" ("))
            if m is not None:
                names.append(m.group(0))
        return tuple(names), s
    names = []
    at = 0
    for eq in _assignments(s):
        left = s[at:eq]
        colon = left.find(":")  # `w: T = v`: the annotation is no target
        if colon != -1 and left[:colon].strip().isidentifier():
            left = left[:colon]
        for m in _WORD.finditer(left):
            after = left[m.end():].lstrip()
            if not after.startswith((".", "[", "(")) and m.group(0) not in _KEYWORDS:
                names.append(m.group(0))
        at = eq + 1
    rest = s[at:]
    if ":=" in s:
        names += re.findall(r"([A-Za-z_]\w*)[ \t]*:=", s)
    return tuple(names), (rest if names else "")


def _assignments(line: str, first: bool = False) -> list:
    """Where each `=` of an assignment stands in `line`, outside brackets (`a = b = v`: both; not
    `==`, `<=`, `!=`, an augmented assignment's or a keyword argument's), in one pass; `first`:
    only the first."""
    out = []
    if "=" not in line:
        return out
    depth = 0
    for j, c in enumerate(line):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "=" and not depth:
            if line[j + 1:j + 2] == "=" or (j and line[j - 1] in "=<>!+-*/%@&|^:"):
                continue
            out.append(j)
            if first:
                break
        elif c == "#":
            break
    return out


# An attribute of a name, indexed or not (`self.w`, `net.fc.w[0]`): its last attribute's name.
_ATTRIBUTE_ALIAS = LazyPattern(r"[ \t]*[A-Za-z_]\w*(?:[ \t]*\.[ \t]*\w+)*[ \t]*\.[ \t]*(\w+)(?:[ \t]*\[[^\]\n]*\])*[ \t]*$")


def _aliases_attribute(source: str, attributes) -> bool:
    """Whether `source` is one of `attributes` of a name, as it is or indexed (a view of it)."""
    m = _ATTRIBUTE_ALIAS.match(source)
    return m is not None and m.group(1) in attributes


def _evident_leaves(text: str, attributes=()) -> frozenset:
    """The names `text` (a function's, or code outside functions) binds to what may be a leaf that
    requires grad by what it makes or names there: a value, iterable or `with` that makes one
    or names parameters (`requires_grad`, `Parameter`, `parameters(`), or names such a name,
    to any depth (`params = list(model.parameters())`, then `for p in params:`); a name whose
    `requires_grad` the text sets (`w.requires_grad_()`, `w.requires_grad = True`); the
    parameters of a `def` whose line names `Parameter` (an annotation); a name another line that
    makes or names one holds as it is (`isinstance(m, nn.Parameter)`); a name bound to one of
    the file's leaf `attributes` (`w = self.w`, `self.w` a parameter)."""
    lines = _logical_lines(text)
    evident = set()
    header = _DEF_HEADER.match(text)
    if header is not None and _makes_leaf(header.group(2)):
        # (`w: nn.Parameter`, `w: "nn.Parameter"`: a parameter whose own annotation names one.)
        for part in _top_level_parts(header.group(2)):
            name = _WORD.match(part.lstrip(" \t\n*"))
            if name is not None and _makes_leaf(part) and name.group(0) not in _KEYWORDS:
                evident.add(name.group(0))
    bound = []
    for line in lines:
        for m in _REQUIRES_GRAD_OF.finditer(line):
            if m.group(1) not in _KEYWORDS:
                evident.add(m.group(1))
        s = line.lstrip()
        if s.startswith(("def ", "async def ")):
            continue
        names, source = _bound(line)
        if names:
            # (`w: nn.Parameter = x`; `w = self.w`, `w = self.w[0]`, with `w` a leaf attribute.)
            makes = _makes_leaf(s) or attributes and _aliases_attribute(source, attributes)
            bound.append((names, source, makes, frozenset(_WORD.findall(source))))
        elif _makes_leaf(s):
            # (The names it holds as they are, not those whose attributes it reads.)
            evident.update(m.group(0) for m in _WORD.finditer(s)
                           if m.group(0) not in _KEYWORDS and s[m.end():m.end() + 1] != ".")
    # To any depth, by a work list: each binding looked at again only when a name it reads
    # becomes evident (passes over all of them until none changes would be quadratic in a long
    # chain bound in reverse order).
    readers: dict = {}
    todo = []
    for k, (names, source, makes, words) in enumerate(bound):
        if makes or not evident.isdisjoint(words):
            todo.append(k)
        for word in words:
            readers.setdefault(word, []).append(k)
    done = set()
    while todo:
        k = todo.pop()
        if k in done:
            continue
        done.add(k)
        for name in bound[k][0]:
            if name not in evident:
                evident.add(name)
                todo.extend(readers.get(name, ()))
    return frozenset(evident)


def _admits(text: str, file: _FileLeaves, starts=None) -> bool:
    """InplaceOnLeaf's scope test of a function whose source is `text` (or of code outside
    functions), in the file `file` tells of.  `starts`: `_inplace_starts(text)`, where the
    caller found them already (in the whole file's text: the same offsets, a function's lines
    being whole lines)."""
    # The in-place writes the rule may report, first: most functions have none (nine in ten of a
    # large model tree's), and the rest of the test costs four times this search.
    if starts is None:
        starts = _inplace_starts(text)
    writes = [(at, target) for at in starts if (target := _write_target(text, at)) is not None]
    if not writes:
        return False
    # Writes in the `def` line(s) (a default, `x: list[int] = ...`) are not the function's.
    header = _DEF_HEADER.match(text)
    if header:
        body = header.end()
        writes = [w for w in writes if w[0] >= body]
        if not writes:
            return False
    # The leaf may be made here (requires_grad, Parameter, a parameters() loop): the write is
    # to what is made so, or to a name bound to it (_evident_leaves; `A = torch.empty(n).uniform_()`
    # in a constructor that makes parameters writes to none).
    leafy = _makes_leaf(text)
    evident = None
    # Or by a function of the file, or of a module it imports, that returns one (`w, b =
    # init_params()`).
    factories = file.factories
    if factories and any(f + "(" in text for f in factories):
        return True
    # Or the leaf comes from the callers: the function writes to one of its parameters
    # (`def reset(p): p.zero_()`, called with a model's weight).  Helpers are short; in long
    # functions such writes are arithmetic on activations (`x.mul_(...)` in a forward), and
    # analysing every one of them costs a tenth of a large tree's check.  Python and
    # nn.Module call `forward` and the dunders but `__init__` (summaries.parameter_facts):
    # no call of the file passes them anything; nor does any to a function the file never
    # calls by its name (`_init_weights`, given to `self.apply`), whose parameters only the
    # file's calls give facts (a call from another module is asked by `through_scope_test`,
    # which takes every function for called).
    params = ()
    if header and text.count("\n") <= _PARAM_WRITER_LINES:
        name = header.group(1)
        if name == "__init__" or not (name == "forward" or name.startswith("__") and name.endswith("__")) \
                and file.called(name):
            params = _PARAM_NAME.findall(header.group(2))
            if params and "for " in text:
                params = _with_loop_targets(text, params)
    attributes = [a for a in file.attributes if "." + a in text]
    names = [n for n in file.names if n in text]
    if not (leafy or params or attributes or names or _leaf_word(text)
            or "self." in text):
        return False
    aliases = bindings = None
    for at, target in writes:
        if leafy and evident is None:
            evident = _evident_leaves(text, attributes)
        method = text.startswith("_(", at + 1)
        parts = _chain(_written(target)) if method else None
        function = method and _inplace_function(parts, file)
        if function:
            # `torch.relu_(w)`, `F.relu_(w)`: an in-place function writes to its first argument:
            # anything its arguments name (as far as they can be told: else the rest of the line).
            close = closing_bracket(text, at + 2, at + 2000)
            if close == -1:
                close = text.find("\n", at)
            target = text[at + 3 : close if close != -1 else len(text)]
        if function or text.startswith("inplace=True", at):
            # `F.relu(x, inplace=True)` writes to its argument: anything the line names.
            if _leaf_word(target) or "self." in target or any(word_count(target, p) for p in params if p != "self") \
                    or any(_attribute_in(target, "." + a) for a in attributes) \
                    or any(word_count(target, n) for n in names) \
                    or evident is not None and (_makes_leaf(target) or any(word_count(target, n) for n in evident)):
                return True
            if aliases is None:
                if bindings is None and _leaf_word(text):  # (read once for both questions)
                    bindings = _bindings(text)
                aliases = _leaf_aliases(text, bindings)
            if any(word_count(target, n) for n in aliases):
                return True
            continue
        # What is written, its subscripts left out (`model_inputs["pixel_values"] = v` writes
        # to `model_inputs`): its first name and its attributes (the method of `w.add_(`
        # left out: it names no tensor).
        if parts is None:
            parts = _chain(_written(target))
        if method and len(parts) > 1:
            parts = parts[:-1]
        base, attrs = parts[0], parts[1:]
        if evident is not None and (base in evident or _makes_leaf(".".join(parts))):
            return True  # (`w = nn.Parameter(x)` ... `w[0] = 1`; `nn.Parameter(x).normal_()`)
        if attributes and base != "self":
            # A local bound to an attribute the file makes a leaf (`w = self.w`, `w.add_(1)`).
            if bindings is None:
                bindings = _bindings(text)
            if any(_aliases_attribute(v, attributes) for v in bindings[0].get(base, ())):
                return True
        if any(_leaf_word(a) for a in attrs):
            return True
        if base == "self":
            # `self.cache[k] = v`, `self.n += 1`: not where every binding of the attribute in
            # the file is a value that is never a leaf that requires grad (a container, a number,
            # a string, None, a module, a new tensor: _LiteralAttributes), nor where the file
            # makes it a leaf some other way (`obj.cache = nn.Parameter(...)`, register_parameter).
            if not attrs or len(attrs) > 1:
                return True
            if attrs[0] not in file.literals or attrs[0] in file.attributes:
                return True
            continue
        if _leaf_word(base):
            # A local named for a weight (`attn_weights += mask`) is one only where it is not
            # computed in the function (`attn_weights = torch.matmul(q, k)`).
            if bindings is None:
                bindings = _bindings(text)
            if not _computed(text, base, bindings):
                return True
        written = ".".join(parts)
        if params and any(word_count(written, p) for p in params if p != "self"):
            return True
        # Or to an attribute the file's classes make a leaf (`net.w.add_(1)`, `self.w` a Parameter).
        if attributes and any(a in attrs for a in attributes):
            return True
        # Or to a name the file binds to one (`w = torch.randn(3, requires_grad=True)` at the
        # module's level, `w.sub_(...)` here).
        if names and base in names:
            return True
        # Or to a local that names one (`w = model.fc.weight` ... `w[0] = 1`).
        if aliases is None:
            if bindings is None and _leaf_word(text):  # (read once for both questions)
                bindings = _bindings(text)
            aliases = _leaf_aliases(text, bindings)
        if aliases and base in aliases:
            return True
    return False


# `for p in params:` (and `async for`), at a line's start: the targets and the iterable.
_FOR_LINE = LazyPattern(r"^[ \t]*(?:async[ \t]+)?for[ \t]+([^\n]+?)[ \t]+in[ \t]+([^\n]+):", re.M)
_NAME = LazyPattern(r"[A-Za-z_]\w*")


def _with_loop_targets(text: str, params: list) -> list:
    """`params` and the names that loops of `text` bind to the elements of one of them (`p` of
    `for p in params:`, of `for i, p in enumerate(params):`, the second of `for a, p in zip(xs,
    params):`; a loop over an earlier loop's target too: `for g in groups:` then `for p in
    g["params"]:`)."""
    out = list(params)
    for m in _FOR_LINE.finditer(text):
        out.extend(n for n in _bound_to_elements(m.group(1), m.group(2).strip(), out) if n not in out)
    return out


def _bound_to_elements(targets: str, iterable: str, params: list) -> list:
    """The names of `targets` that a loop over `iterable` binds to the elements of one of
    `params` (the iterable is a parameter, an attribute or item of one, or its method's result)."""
    names = [t.strip(" \t()[]") for t in targets.split(",")]
    names = [n for n in names if n]
    if iterable.startswith("zip(") and iterable.endswith(")"):
        args = _top_level_parts(iterable[4:-1])
        if len(args) != len(names):
            return []
        return [n for n, a in zip(names, args) if _of_parameter(a, params)]
    if iterable.startswith("enumerate(") and iterable.endswith(")"):
        return names[1:] if len(names) == 2 and _of_parameter(iterable[10:-1], params) else []
    return names if _of_parameter(iterable, params) else []


def _of_parameter(expr: str, params: list) -> bool:
    m = _NAME.match(expr.strip())
    return m is not None and m.group(0) != "self" and m.group(0) in params


def _top_level_parts(text: str) -> list:
    """`text` split at the commas outside brackets."""
    parts, depth, at = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[at:i])
            at = i + 1
    parts.append(text[at:])
    return [p for p in (q.strip() for q in parts) if p]


def _leaf_word(name: str) -> bool:
    return "weight" in name or "bias" in name or "param" in name


def _inplace_function(parts: list, file: _FileLeaves) -> bool:
    """Whether the `*_(` call named `parts` (`_chain` of the text before its `_(`: ["torch",
    "relu"]) is an in-place function of torch's (`torch.relu_(`, `F.relu_(`,
    `nn.functional.relu_(`, `relu_(` imported from torch), by the names the file's imports bind:
    what InplaceOnLeaf.visit_Call reports as a write to its first argument."""
    names = file.torch_names
    if len(parts) > 1:
        return parts[0] in names
    return bool(parts) and parts[0] + "_" in names


def _chain(written: str) -> list:
    """The names of an expression's text, its subscripts left out: `self.layers[i].weight` ->
    ["self", "layers", "weight"]; a call's arguments stay in its name (`getattr(m, "w")`)."""
    if "[" not in written and "(" not in written:
        return written.split(".")
    parts, cur = [], []
    square = paren = 0
    for c in written:
        if square:
            if c == "[":
                square += 1
            elif c == "]":
                square -= 1
        elif c == "[" and not paren:
            square = 1
        elif c == "." and not paren:
            parts.append("".join(cur))
            cur = []
        else:
            if c == "(":
                paren += 1
            elif c == ")" and paren:
                paren -= 1
            cur.append(c)
    parts.append("".join(cur))
    return parts


# `a, b = ...` at a line's start: each name bound to the value's text.
_UNPACK_LINE = LazyPattern(r"^[ \t]*([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)+)[ \t]*,?[ \t]*=[ \t]*([^=\n][^\n]*)$",
                           re.M)


def _bindings(text: str) -> tuple:
    """({name: [the text of each value a plain assignment or an unpacking in `text` binds it
    to]}, the offsets of those lines' starts)."""
    out: dict = {}
    starts = set()
    for m in _ALIAS_LINE.finditer(text):
        out.setdefault(m.group(1), []).append(m.group(2))
        starts.add(m.start())
    if "," in text:
        for m in _UNPACK_LINE.finditer(text):
            for name in m.group(1).split(","):
                out.setdefault(name.strip(), []).append(m.group(2))
            starts.add(m.start())
    return out, starts


def _computed(text: str, name: str, bindings: tuple, seen: frozenset = frozenset()) -> bool:
    """Whether local `name` is bound in `text` only by plain assignments and unpackings of
    values that name no weight, bias or parameter but through locals computed so themselves
    (`w = w / w.sum()`, `scores = attn_weights - m`): not a for or with target, a walrus, a
    comprehension's variable, a function's or lambda's parameter or a name bound any other way
    (a line that names it among the targets of an assignment not read above)."""
    values, lines = bindings
    values = values.get(name)
    if not values:
        return False
    seen = seen | {name}
    for value in values:
        if _leaf_word(value) and _leafish(text, value, bindings, seen):
            return False
        plain = _PLAIN_VALUE.match(value)
        if plain is not None:
            # `a = w`, `a = w.T`: whatever w is; `a = obj.x`: not told.
            other = plain.group(1)
            if plain.group(2) or other not in seen and not _computed(text, other, bindings, seen):
                return False
    for at in word_positions(text, name):
        line_start = text.rfind("\n", 0, at) + 1
        if line_start in lines or text[at - 1] == ".":  # (`self.w` is no local)
            continue
        end = text.find("\n", at)
        line = text[line_start:end if end != -1 else len(text)]
        stripped = line.lstrip(" \t")
        if stripped.startswith(("for ", "async for ", "def ", "async def ", "with ", "async with ")) \
                or " as " in line or ":=" in line or " for " in line or "lambda" in line:
            return False
        eq = _assignment_at(line)
        if eq != -1 and at - line_start < eq and text[at + len(name):at + len(name) + 40].lstrip(" ")[:1] not in "[.":
            return False  # `(a, w) = ...`, `w, *rest = ...`: a target of a line not read above
    return True


# A value that is another name, or an attribute of it (`w`, `m.w`, `w.T`), a comment after it.
_PLAIN_VALUE = LazyPattern(r"([A-Za-z_]\w*)((?:[ \t]*\.[ \t]*\w+)*)[ \t]*(?:#.*)?$")


def _assignment_at(line: str) -> int:
    """Where the first `=` of an assignment stands in `line` (`_assignments`), or -1."""
    found = _assignments(line, True)
    return found[0] if found else -1
# A name in a value's text, and what stands before it (`.` of an attribute, a quote).
_VALUE_NAME = LazyPattern(r"([.'\"]?)[ \t]*([A-Za-z_]\w*)")


def _leafish(text: str, value: str, bindings: tuple, seen: frozenset) -> bool:
    """Whether a value's text names a weight, a bias or a parameter other than through the
    locals `seen` or locals the function computes (`attn_weights - m`): as an attribute
    (`layer.weight`), a string (`getattr(m, "weight")`) or a name bound elsewhere."""
    for m in _VALUE_NAME.finditer(value):
        word = m.group(2)
        if not _leaf_word(word):
            continue
        if m.group(1) or word not in bindings[0]:
            return True
        if word not in seen and not _computed(text, word, bindings, seen):
            return True
    return False


# The in-place methods that initialise or rescale, which a helper of another module may call on what
# it is passed (`zero_init(params)`): its text tests (through_needles, _THROUGH_BYTES, _INPLACE_ON)
# are made of this one list.
_INITIALISING = ("fill_", "zero_", "copy_", "uniform_", "normal_", "mul_", "add_", "sub_", "div_", "clamp_", "renorm_",
                 "masked_fill_", "clamp_min_", "clamp_max_", "lerp_")
_INPLACE_CALLS = tuple(f".{m}(" for m in _INITIALISING)
_THROUGH_BYTES = LazyPattern(rb"\.(?:grad|(?:" + "|".join(m[:-1] for m in _INITIALISING).encode() + rb")_\()")
# (Also the names of a tuple target: `for name, p in m.named_parameters()`, `for p, src in
# zip(params, sources)`.)
_LOOP_OVER = LazyPattern(r"for\s+\(?\s*(\w+(?:\s*,\s*\w+)*)\s*,?\s*\)?\s+in\s+(?:\w+\()?(\w+)")
# (Tried once a run of word characters, from its start: a later start finds the same end of the
# run, and nothing else can follow it.)
# The receiver's first name: `m.weight.fill_(0)` writes into what parameter `m` holds.
_INPLACE_ON = LazyPattern(r"(?<!\w)(\w+%s)(?:\.\w+)*(?:\[[^\]\n]*\])?\.(?:" % POSSESSIVE + "|".join(_INITIALISING)
                          + r")\(")


def _writes_to_a_parameter(segment: str) -> bool:
    """Whether a function's text calls one of TNS401's initialising in-place methods on one of its
    parameters, on an attribute of one (`m.weight.fill_(0.5)`), or on a loop variable over one
    or over an attribute of the instance (a text test: `def zero_init(params): for p in params:
    p.fill_(0.0)`)."""
    names = header_parameters(segment)
    if names is None:
        return False
    names.discard("self")
    for m in _LOOP_OVER.finditer(segment):
        # (A method's loop over what an attribute holds, `for p in self.net.parameters():`, a
        # module a constructor call handed it: the instance's, walker.method_sinks.)
        if m.group(2) in names or m.group(2) == "self":
            names.update(n.strip() for n in m.group(1).split(","))
    return any(name in names for name in _inplace_receivers(segment))


def _inplace_receivers(segment: str):
    """What `_INPLACE_ON.finditer(segment)` finds the calls made on, searched only in the lines
    that hold such a call (a match is on one line; the pattern starts with a word, and is tried
    at every position of the text it is given)."""
    lines = set()
    for call in _INPLACE_CALLS:
        i = segment.find(call)
        while i != -1:
            lines.add(segment.rfind("\n", 0, i) + 1)
            i = segment.find(call, i + len(call))
    finditer = _INPLACE_ON.finditer
    for start in lines:
        end = segment.find("\n", start)
        for m in finditer(segment, start, end if end != -1 else len(segment)):
            yield m.group(1)


class InplaceOnLeaf(Rule):
    code = "TNS401"
    name = "inplace-on-grad-leaf"
    message = "in-place write to {leaf}, a leaf that requires grad, raises RuntimeError; {advice}"
    fix_title = "Wrap in `with torch.no_grad():`"
    fix_safety = "unsafe"
    prefilter = ("requires_grad", "Parameter", "parameters(", "weight", "bias")
    # A helper of another module that writes in place to what a call passes (`sgd_step(params,
    # lr)` in utils.py): asked of the functions that read a gradient, the manual updates, and of
    # those that call the in-place methods that initialise or rescale (`zero_init(params)`).
    through_calls = True
    through_needles = (".grad", *_INPLACE_CALLS)

    @classmethod
    def through_bytes(cls, data: bytes) -> bool:
        return _THROUGH_BYTES.search(data) is not None  # (one pass over a module, not eleven)

    @classmethod
    def through_admits(cls, segment: str) -> bool:
        # A manual update (it reads a gradient), or an in-place call of those on one of the
        # function's parameters or on a loop variable over one (`for p in params: p.fill_(0)`),
        # where the function never turns grad off (`initialization.normal_` does).
        if ".grad" in segment:
            return True
        if "no_grad" in segment or not any(n in segment for n in cls.through_needles[1:]):
            return False
        return _writes_to_a_parameter(segment)

    # A function of a module the file imports that makes a leaf and returns it (`t =
    # make_leaf()` with `make_leaf` in params.py): as one of the file's own (_leaf_factories);
    # and a class of it whose instances have a leaf attribute (`self.temperature =
    # nn.Parameter(...)`, then `net.temperature.fill_(0.05)` in the file, or `self.temperature`
    # in a subclass): `.temperature`, as the file's own classes' (_imported_leaf_attributes).
    imported_triggers = staticmethod(lambda text: {**_imported_leaf_attributes(text),
                                                   **{n: frozenset((n,)) for n in _leaf_factories(text)}})
    imported_needle = _LeafBytes()

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        return _admits(text, _FileLeaves(text))

    @classmethod
    def through_scope_test(cls, text: str):
        # (A function another module calls: what that call passes its parameters counts too.)
        file = _FileLeaves(text, called=True)
        return lambda segment: _admits(segment, file)

    @classmethod
    def scope_test_imported(cls, text: str, names: frozenset):
        # `net.w.add_(1)` in a function (or outside any) of a file whose class makes `self.w` a
        # parameter, `w.sub_(...)` in a function of a module that makes `w` a leaf: the leaf is
        # named where it is made, not where the write is; `self.cache[k] = v` where the file
        # binds `self.cache` to literals only.  `names`: the leaf factories of the modules the
        # file imports that it calls.
        file = _FileLeaves(text, names)

        def test(segment: str) -> bool:
            return _admits(segment, file)

        found: list = []

        def writes() -> list:
            # (The starts of the whole text's in-place writes, in order, and of those `_admits`
            # may find in some of its lines.)
            if not found:
                starts = sorted(_inplace_starts(text))
                found.extend((starts, _writes_of(text, starts)))
            return found[1]

        def span(start: int, end: int) -> bool:
            # A function holds a write `_admits` finds only where the whole text holds one (most
            # hold none: nine in ten of a large model tree's).  The function's own are those of
            # the whole text in its lines: `_inplace_starts` finds substrings, and matches of a
            # pattern that starts and ends on one line wherever the code parses (`]` or an operator
            # and its `=` on two lines is a syntax error); the same on 60,614 line ranges of the
            # corpus.
            at = writes()
            i = bisect_left(at, start)
            if i == len(at) or at[i] >= end:
                return False
            starts = found[0]
            return _admits(text[start:end], file,
                           [a - start for a in starts[bisect_left(starts, start):bisect_left(starts, end)]])

        test.span, test.writes = span, writes
        return test

    @classmethod
    def scope_any(cls, text: str, test) -> bool:
        # `_admits` reads a function's `def` line and counts its lines; a function it admits
        # holds a write it may report, which the whole text holds too.
        writes = getattr(test, "writes", None)
        return bool(writes() if writes is not None else _writes_anywhere(text))

    docs = """
## What it does
Checks for in-place writes to a leaf tensor that requires grad, outside a no-grad region.

Writes are subscript assignment (`w[0] = 1`, `w[:, i] -= d`), augmented assignment (`w += 1`,
`p -= lr * p.grad`) and in-place methods (`add_`, `mul_`, `zero_`, `fill_`, `copy_`,
`clamp_`, `masked_fill_`, `index_add_`, `scatter_`, `uniform_`, `normal_`, every other `*_`
method except `requires_grad_`), on the tensor itself, on a view of it (`w[1:3].fill_(0)`,
`w.T.zero_()`) or through a local bound to it (`w = layer.weight` then `w[0] = 1`), and in-place functions (`torch.relu_(w)`, `F.relu(w, inplace=True)`).  The leaf
may come from a function that makes it and returns it, of the file or of a module of the
project it imports (`t = make_leaf()` then `t.zero_()`).  A write
in a helper (up to 40 lines) to one of its parameters is reported where the file calls it with
a leaf that requires grad (`def reset(p): p.zero_()` and `reset(model.weight)`), and so is
a write to each element of one it loops over, where the file calls it with parameters (`def
sgd(params, lr): for p in params: p -= lr * p.grad` and `sgd(model.parameters(), 0.1)`); the
message names the call.  A function the file hands to a module's `apply` (`netD.apply(weights_init)`)
is given each of its submodules, as the module is (frozen or not): DCGAN's
`m.weight.normal_(0.0, 0.02)` in `weights_init(m)`, whose layers are told by their class's name,
is reported there; one of another module of the project, at the module the call hands it:
`in-place write to the parameters of netG (in weights_init(), nets.py:4)`.  Such an update in another module of the project (a function that reads
a gradient, `.grad`, or that calls `fill_`, `zero_`, `copy_`, `uniform_`, `normal_`, `mul_`,
`add_`, `sub_`, `div_` or `clamp_` on one of its parameters, or on a loop variable over one, and
never turns grad off) is reported at the argument, where the call is: `in-place write to each of
model.parameters() (in sgd_step(), optim.py:6)`.  So is a method of another module's class
that writes so to what the instance's constructor call gave it (a hand-written optimizer,
`opt = MySGD(model.parameters())`), at the method's call: `in-place write to each of opt.params
(in opt.step(), optim.py:8)`.  Only where what the function writes to is the leaf it received
on every path (not after `if detach: p = p.detach()`), and without a fix (the call, or the
function, is to wrap).
Leaves that require grad are tensors created with `requires_grad=True`, `.requires_grad_()`
results, `nn.Parameter(...)`, module parameters (`model.fc.weight`,
`self.weight` of an `nn.Module`) and loop variables over `model.parameters()` or
`model.named_parameters()`.

Not reported inside `torch.no_grad()`, `torch.inference_mode()`, `set_grad_enabled(False)`, a
function decorated with one of them, or a function this file only calls from such a region;
for `nn.init.*_` calls (they switch grad off themselves); for `.data` and `.grad`; for
buffers; inside `pytest.raises` / `assertRaises` blocks; or for tensors that do not require
grad or are not leaves (`y = x.clone(); y[0] = 2`, `x = x + 1; x[0] = 2`).

## Why is this bad?
A leaf's `.grad` is the gradient with respect to the values the user created; a write that
autograd recorded would replace those values by the result of an operation, so PyTorch refuses
it.  The write raises `RuntimeError: a leaf Variable that requires grad is being used in an
in-place operation.` (through a view: `a view of a leaf Variable that requires grad is being
used in an in-place operation.`).  The typical cases are a manual SGD step or weight surgery on
a loaded model written without `torch.no_grad()`; `model.eval()` does not turn grad off.

## Example
```python
x = torch.ones(5, requires_grad=True)
x[0] = 2

for p in model.parameters():
    p -= lr * p.grad
```

## Use instead
```python
with torch.no_grad():
    x[0] = 2

for p in model.parameters():
    with torch.no_grad():
        p -= lr * p.grad
```
If the write is meant to be part of the computation (differentiable), write into a copy:
`y = x.clone(); y[0] = 2` (gradient flows to `x` except at the overwritten element).

## Fix safety
Unsafe: the tool cannot know whether the write was meant to be an initialisation or update
(then `torch.no_grad()` is right) or part of the computation (then the right change is a
`clone()` before the write).  The fix wraps the statement, or a run of consecutive such
statements, in `with torch.no_grad():`, spelled with the file's own import (`th.no_grad()`
after `import torch as th`, `no_grad()` after `from torch import no_grad`), keeping the file's
line endings and indentation and leaving lines inside multi-line strings untouched.  No fix is
offered when neither `torch` nor `no_grad` is imported, when the statement shares its line
with another statement (`a = 1; w[0] = 2`, `for p in ps: p.zero_()`), for in-place
activations (`F.relu(w, inplace=True)` is part of the computation: use `inplace=False`), when
the statement contains `yield`, `yield from` or `await` (grad mode would stay off in the caller
while the generator or coroutine is suspended), or when the statements cannot be rewritten
exactly (a form feed that starts a line at module level).

## References
- https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd
- https://pytorch.org/docs/stable/generated/torch.no_grad.html
- https://pytorch.org/tutorials/beginner/examples_autograd/polynomial_autograd.html
  (manual updates under `torch.no_grad()`)
"""
    VALID = [
        Valid(dedent("""
            import torch
            x = torch.ones(5, requires_grad=True)
            with torch.no_grad():
                x[0] = 2
            """), runs=True),
        Valid(
            dedent("""
                import torch
                from torch import nn


                @torch.no_grad()
                def shrink(m):
                    m.weight.mul_(0.5)


                lin = nn.Linear(2, 2)
                shrink(lin)
                with torch.inference_mode():
                    lin.bias.zero_()
                """),
            runs=True,
        ),
        Valid(dedent("""
            import torch
            from torch import nn
            lin = nn.Linear(2, 2)
            nn.init.zeros_(lin.weight)
            torch.nn.init.normal_(lin.bias, std=0.02)
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.ones(5, requires_grad=True)
            y = x.clone()
            y[0] = 2
            y.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.ones(5, requires_grad=True)
            x = x + 1
            x[0] = 2
            """), runs=True),
        Valid(dedent("""
            import torch
            t = torch.ones(3)
            t[0] = 2
            t += 1
            t.clamp_(0, 2)
            """), runs=True),
        Valid(
            # The manual-SGD idiom of the PyTorch tutorials.
            dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 1)
                x, y = torch.randn(8, 3), torch.randn(8, 1)
                loss = ((model(x) - y) ** 2).mean()
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= 0.1 * p.grad
                        p.grad = None
                """),
            runs=True,
        ),
        Valid(dedent("""
            import torch
            from torch import nn
            lin = nn.Linear(2, 2)
            lin.weight.data.zero_()
            lin.weight.data[0, 0] = 1.0
            lin.weight.grad = torch.ones(2, 2)
            lin.weight.grad.zero_()
            lin.weight.requires_grad_(False)
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch import nn
            lin = nn.Linear(2, 2)
            lin.weight.requires_grad = False
            lin.weight.mul_(2)
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch import nn
            model = nn.Linear(2, 2)
            torch.set_grad_enabled(False)
            for p in model.parameters():
                p.add_(1)
            torch.set_grad_enabled(True)
            """), runs=True),
        Valid(dedent("""
            import torch
            import torch.nn.functional as F
            from torch.nn.utils import clip_grad_norm_
            x = torch.randn(4, requires_grad=True)
            y = F.relu(x)
            y.sum().backward()
            clip_grad_norm_(x, 1.0)
            z = F.relu(x * 1, inplace=True)
            t = torch.relu_(x.clone())
            """), runs=True),
        Valid(dedent("""
            import torch

            def make(flag):
                w = torch.zeros(3, requires_grad=flag)
                w[0] = 1
                return w
            """)),
        Valid(dedent("""
            import torch
            x = torch.ones(5, requires_grad=True)
            idx = torch.tensor([0, 1])
            x[idx].sum()
            d = x.detach()
            d.zero_()
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            # The seed's example.
            dedent("""
                import torch

                x = torch.ones(5, requires_grad=True)
                x[0] = 2
                """),
            line=4,
            col=0,
            fixed=dedent("""
                import torch

                x = torch.ones(5, requires_grad=True)
                with torch.no_grad():
                    x[0] = 2
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VIEW_ERROR),
                          check_fixed="x.tolist() == [2.0, 1.0, 1.0, 1.0, 1.0] and x.is_leaf and x.requires_grad"),
        ),
        Invalid(
            # Manual SGD without torch.no_grad().
            dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 1)
                x, y = torch.randn(8, 3), torch.randn(8, 1)
                loss = ((model(x) - y) ** 2).mean()
                loss.backward()
                lr = 0.1
                for p in model.parameters():
                    p -= lr * p.grad
                """),
            line=10,
            col=4,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 1)
                x, y = torch.randn(8, 3), torch.randn(8, 1)
                loss = ((model(x) - y) ** 2).mean()
                loss.backward()
                lr = 0.1
                for p in model.parameters():
                    with torch.no_grad():
                        p -= lr * p.grad
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR),
                          check_fixed="all(q.is_leaf and q.requires_grad for q in model.parameters())"),
        ),
        Invalid(
            # The leaf made by another function of the file, which returns it.
            dedent("""
                import torch


                def make_leaf():
                    return torch.ones(2, requires_grad=True)


                def reset():
                    t = make_leaf()
                    t.zero_()
                    return t


                out = reset()
                """),
            line=10,
            col=4,
            fixed=dedent("""
                import torch


                def make_leaf():
                    return torch.ones(2, requires_grad=True)


                def reset():
                    t = make_leaf()
                    with torch.no_grad():
                        t.zero_()
                    return t


                out = reset()
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR),
                          check_fixed="out.tolist() == [0.0, 0.0] and out.is_leaf and out.requires_grad"),
        ),
        Invalid(
            # The same step in a helper, given the model's parameters.
            dedent("""
                import torch
                from torch import nn


                def sgd(params, lr):
                    for p in params:
                        p -= lr * p.grad


                model = nn.Linear(3, 1)
                x, y = torch.randn(8, 3), torch.randn(8, 1)
                ((model(x) - y) ** 2).mean().backward()
                sgd(model.parameters(), 0.1)
                """),
            line=7,
            col=8,
            fixed=dedent("""
                import torch
                from torch import nn


                def sgd(params, lr):
                    for p in params:
                        with torch.no_grad():
                            p -= lr * p.grad


                model = nn.Linear(3, 1)
                x, y = torch.randn(8, 3), torch.randn(8, 1)
                ((model(x) - y) ** 2).mean().backward()
                sgd(model.parameters(), 0.1)
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR),
                          check_fixed="all(q.is_leaf and q.requires_grad for q in model.parameters())"),
        ),
        Invalid(
            # Weight surgery on a loaded model: eval() does not turn grad off.
            dedent("""
                import torch
                from torch import nn


                class Output(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.dense = nn.Linear(4, 4)


                class Layer(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.output = Output()


                class Encoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.layer = nn.ModuleList([Layer() for _ in range(4)])


                class Model(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.encoder = Encoder()


                model = Model()
                model.load_state_dict(Model().state_dict())
                model.eval()
                i = 2
                model.encoder.layer[3].output.dense.weight[:, i] = 0.0  # prune input feature i
                """),
            line=33,
            col=0,
            fixed=dedent("""
                import torch
                from torch import nn


                class Output(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.dense = nn.Linear(4, 4)


                class Layer(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.output = Output()


                class Encoder(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.layer = nn.ModuleList([Layer() for _ in range(4)])


                class Model(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.encoder = Encoder()


                model = Model()
                model.load_state_dict(Model().state_dict())
                model.eval()
                i = 2
                with torch.no_grad():
                    model.encoder.layer[3].output.dense.weight[:, i] = 0.0  # prune input feature i
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VIEW_ERROR),
                          check_fixed="model.encoder.layer[3].output.dense.weight[:, 2].abs().sum().item() == 0"),
        ),
        Invalid(
            # The file's own alias, and a run of consecutive writes wrapped once.
            dedent("""
                import torch as th


                def make_bias(n):
                    b = th.zeros(n).requires_grad_()
                    b.fill_(0.1)
                    b[0] = 1.0  # first entry
                    return b


                bias = make_bias(3)
                """),
            line=6,
            col=4,
            fixed=dedent("""
                import torch as th


                def make_bias(n):
                    b = th.zeros(n).requires_grad_()
                    with th.no_grad():
                        b.fill_(0.1)
                        b[0] = 1.0  # first entry
                    return b


                bias = make_bias(3)
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR),
                          check_fixed="bias.is_leaf and bias.requires_grad and bias[0].item() == 1.0"),
        ),
        Invalid(
            dedent("""
                from torch import nn, no_grad

                lin = nn.Linear(2, 2)
                lin.bias.zero_()
                """),
            line=4,
            col=0,
            fixed=dedent("""
                from torch import nn, no_grad

                lin = nn.Linear(2, 2)
                with no_grad():
                    lin.bias.zero_()
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR), check_fixed="lin.bias.abs().sum().item() == 0"),
        ),
        Invalid(
            # nn.Parameter in a module's own method; the loop is a one-liner: reported, not fixed.
            dedent("""
                import torch
                from torch import nn


                class Scale(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.gain = nn.Parameter(torch.ones(3))

                    def reset(self):
                        for i in range(3): self.gain[i] = 1.0 / (i + 1)


                Scale().reset()
                """),
            line=11,
            col=27,
            oracle=Oracle(raises=("RuntimeError", _VIEW_ERROR)),
        ),
        Invalid(
            # An in-place activation on a leaf: reported, but the activation is part of the
            # computation, so no `no_grad` wrap is offered (`inplace=False` is the usual change).
            dedent("""
                import torch
                import torch.nn.functional as F

                x = torch.randn(4, requires_grad=True)
                y = F.relu(x, inplace=True)
                """),
            line=5,
            col=4,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR)),
        ),
        Invalid(
            # torch itself is not bound as a name: no fix.
            dedent("""
                import torch.nn as nn

                lin = nn.Linear(2, 2)
                lin.weight.mul_(2)
                """),
            line=4,
            col=0,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR)),
        ),
    ]

    def __init__(self, options) -> None:
        super().__init__(options)
        self._frames: list[list] = []
        self._spellings = None

    # ------------------------------------------------------------------ detection

    def enter_scope(self, scope, ctx) -> None:
        self._frames.append([])

    def leave_scope(self, scope, ctx) -> None:
        findings = self._frames.pop()
        if findings:
            self._report(scope, findings, ctx)

    def visit_Assign(self, node: ast.Assign, ctx) -> None:
        for target in node.targets:
            for el in target_elements(target):
                if isinstance(el, ast.Subscript):
                    self._check(el, strip_views(el.value, ctx), ctx)

    def visit_AugAssign(self, node: ast.AugAssign, ctx) -> None:
        t = node.target
        if isinstance(t, ast.Subscript):
            self._check(t, strip_views(t.value, ctx), ctx)
        elif isinstance(t, (ast.Name, ast.Attribute)):
            self._check(t, t, ctx)

    def visit_Call(self, node: ast.Call, ctx) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and is_inplace_method(func.attr):
            if ctx.fact(func.value).kind == TENSOR:
                recv = func.value
                if not (type(recv) is ast.Call and type(recv.func) is ast.Attribute
                        and is_inplace_method(recv.func.attr)):
                    # (`w.mul_(a).add_(b)` writes to `w` twice; the first write raises, and is
                    # the one reported.)
                    self._check(node, strip_views(recv, ctx), ctx)
                return
        if ctx.sink_names and not ctx.no_grad and self._frames and not ctx.in_lambda and not ctx.expects_error:
            self._through_call(node, ctx)
        if not node.args or not isinstance(func, (ast.Name, ast.Attribute)):
            return
        q = ctx.qualname(func)
        if q is None:
            return
        name = q.rsplit(".", 1)[-1]
        if (q == "torch." + name or q == "torch.nn.functional." + name) and is_inplace_method(name) or (
            q in _INPLACE_FUNCTIONAL and any(k.arg == "inplace" and _is_true(k.value) for k in node.keywords)
        ):
            # torch.relu_(w), F.relu(w, inplace=True): a write, but rarely meant to be undone by
            # no_grad (the activation is part of the computation): reported without the wrap, and
            # the advice is the function that returns a new tensor.
            if q in _INPLACE_FUNCTIONAL:
                advice = "use `inplace=False`"
            else:
                advice = f"use `{ctx.short(func, 40)[:-1]}(...)`, which returns a new tensor"
            self._check(node, strip_views(node.args[0], ctx), ctx, advice=advice)

    def _check(self, node, base, ctx, advice: str | None = None) -> None:
        """`advice`: what the message says to do instead of wrapping the write in no_grad (no fix
        then)."""
        # Not under no-grad, not in a lambda (it runs later, maybe under no_grad), not where a
        # test provokes the error on purpose (`pytest.raises`).
        if ctx.no_grad or not self._frames or ctx.in_lambda or ctx.expects_error:
            return
        f = ctx.fact(base)
        if not (f.kind == TENSOR and f.leaf and f.grad is Grad.YES):
            return
        if ctx.through_call is not None and must_grad(f) < ctx.through_call:
            # In another module's function, for one call's arguments: only a leaf as certain
            # as they are (not one a parameter the call leaves at its default may bring).
            return
        stmt = ctx.stmt
        # A leaf that comes from the callers says where (`p (passed at line 15)`).
        leaf = ctx.short(base, 60) + ctx.origin(base)
        self._frames[-1].append((node, stmt, leaf, self._no_grad_spelling(ctx) if advice is None else None, advice))

    def _through_call(self, node: ast.Call, ctx) -> None:
        """`sgd_step(model.parameters(), lr)`, where `sgd_step` of another module of the project
        writes in place to each parameter it is given: reported at the argument, no fix (the
        helper is the other module's; the call can be wrapped, or the helper)."""
        found = ctx.call_sink(self, node)
        if found is not None:
            arg, callee, where, _params = found
            kind = ctx.fact(arg).kind
            each = "" if kind == TENSOR else "the parameters of " if kind == MODULE else "each of "
            ctx.report(self, arg, None, leaf=f"{each}{ctx.short(arg, 60)} (in {callee}(), {where})",
                       advice=f"wrap it in `with {self._no_grad_spelling(ctx) or 'torch.no_grad()'}:`")
            return
        # `opt.step()`, where method `step` of another module's class writes in place to what
        # the constructor call of `opt` gave an attribute (`MySGD(net.parameters())`, a
        # hand-written optimizer): reported at the call.
        found = ctx.method_sink(self, node)
        if found is not None:
            recv, attr, callee, where, _params = found
            given = getattr(ctx.fact(recv).attrs, "given", None)
            held = given.get(attr) if given else None
            kind = held.kind if held is not None else None
            each = "" if kind == TENSOR else "the parameters of " if kind == MODULE else "each of "
            if held is not None and held.element is not None and held.element.kind == MAPPING:
                each = "the parameters in "  # (an optimizer's `param_groups`)
            ctx.report(self, node, None, leaf=f"{each}{ctx.short(recv, 30)}.{attr} (in {callee}(), {where})",
                       advice=f"wrap it in `with {self._no_grad_spelling(ctx) or 'torch.no_grad()'}:`")

    def _no_grad_spelling(self, ctx) -> str | None:
        """How this file spells `torch.no_grad()` at this point, or None."""
        if self._spellings is None:
            cands = []
            for n in walk(ctx.tree):
                if isinstance(n, ast.Import):
                    for a in n.names:
                        if a.asname is None and (a.name == "torch" or a.name.startswith("torch.")):
                            cands.append((0, "torch", "torch", "torch.no_grad()"))
                        elif a.asname and a.name == "torch":
                            cands.append((1, a.asname, "torch", f"{a.asname}.no_grad()"))
                        elif a.asname and a.name == "torch.autograd":
                            cands.append((3, a.asname, "torch.autograd", f"{a.asname}.no_grad()"))
                elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module in ("torch", "torch.autograd"):
                    for a in n.names:
                        local = a.asname or a.name
                        if a.name == "no_grad":
                            cands.append((2, local, f"{n.module}.no_grad", f"{local}()"))
                        elif a.name == "autograd" and n.module == "torch":
                            cands.append((3, local, "torch.autograd", f"{local}.no_grad()"))
            self._spellings = sorted(set(cands))
        for _, name, qual, spelling in self._spellings:
            if ctx.qualname(ast.Name(id=name, ctx=ast.Load())) == qual:
                return spelling
        return None

    # ------------------------------------------------------------------ reporting and fixing

    def _report(self, scope, findings, ctx) -> None:
        # Statements that can be wrapped, grouped by the block they are in.
        wrappable: dict[int, tuple] = {}
        for node, stmt, _leaf, spelling, _advice in findings:
            if stmt is None or not isinstance(stmt, _SIMPLE) or spelling is None:
                continue
            place = ctx.block_of(stmt)
            if place is None or not contains(stmt, node) or not self._own_lines(stmt, ctx) or suspends(stmt):
                continue
            body, index, owner = place
            wrappable[id(stmt)] = (body, index, owner, spelling)
        fixes: dict[int, Fix | None] = {}
        by_block: dict[int, list] = {}
        for sid, (body, index, owner, spelling) in wrappable.items():
            by_block.setdefault(id(body), []).append((index, body, owner, spelling))
        for items in by_block.values():
            items.sort(key=lambda t: t[0])
            run = [items[0]]
            for item in items[1:]:
                if item[0] == run[-1][0] + 1 and item[3] == run[-1][3]:
                    run.append(item)
                else:
                    self._fix_run(run, fixes, ctx)
                    run = [item]
            self._fix_run(run, fixes, ctx)
        for node, stmt, leaf, spelling, advice in findings:
            fix = fixes.get(id(stmt)) if stmt is not None and spelling is not None else None
            ctx.report(self, node, fix, leaf=leaf,
                       advice=advice or f"wrap it in `with {spelling or 'torch.no_grad()'}:`")

    def _fix_run(self, run, fixes, ctx) -> None:
        _, body, owner, spelling = run[0]
        stmts = [body[i] for i, *_ in run]
        owner_line = 0  # module level
        if isinstance(owner, (ast.stmt, ast.excepthandler)):
            owner_line = owner.lineno
        elif type(owner).__name__ == "match_case":  # its pattern carries the position
            owner_line = owner.pattern.lineno
        fix = Fix(self.fix_title, self.fix_safety, (),
                  WrapStatements(stmts[0].lineno, stmts[-1].end_lineno, spelling, owner_line))
        for st in stmts:
            fixes[id(st)] = fix

    def _own_lines(self, stmt, ctx) -> bool:
        """The statement starts its first line (after indentation) and ends its last one (before
        an optional comment), and no backslash joins it to the line before."""
        lines = ctx.lines
        first = lines.line(stmt.lineno)
        if first[: lines.char_col(stmt.lineno, stmt.col_offset)].strip():
            return False
        last = lines.line(stmt.end_lineno)
        rest = last[lines.char_col(stmt.end_lineno, stmt.end_col_offset):].strip()
        if rest and not rest.startswith("#"):
            return False
        if stmt.lineno > 1 and lines.line(stmt.lineno - 1).endswith("\\"):
            return False
        return True


# --------------------------------------------------------------------------- TNS402 / TNS403


# What follows `.detach().` or `.data.` in a write in place through it (`t.data.zero_()`).
_INPLACE_CALL = LazyPattern(r"\w+_\(")
_ALIAS_WRITE = LazyPattern(rb"\.(?:detach\(\)|data)\.\w+_\(")
_ALIAS_WRITER_LINES = 8


@kept_for_the_last_text  # (TNS402 and TNS403 ask of the same file)
def _alias_writers(text: str) -> frozenset:
    """The names of the functions of `text` that may write in place through an alias they make
    of a parameter, in the first lines of their body (`def clamp_(t):` then
    `t.detach().clamp_(0)`, `t.data.zero_()`; not `module.weight.data.normal_(...)`): a superset
    of those saved.inplace_parameters finds, from the text."""
    out = set()
    for needle in (".detach().", ".data."):
        at = text.find(needle)
        while at != -1:
            name_start = at
            while name_start and (text[name_start - 1].isalnum() or text[name_start - 1] == "_"):
                name_start -= 1
            if name_start < at and text[name_start - 1:name_start] != "." \
                    and _INPLACE_CALL.match(text, at + len(needle)) is not None:
                start = text.rfind("def ", 0, name_start)
                header = _DEF_HEADER.match(text, start) if start != -1 else None
                if header is not None and header.end() <= name_start \
                        and text.count("\n", header.end(), name_start) < _ALIAS_WRITER_LINES \
                        and text[name_start:at] in _PARAM_NAME.findall(header.group(2)):
                    out.add(header.group(1))
            at = text.find(needle, at + 1)
    return frozenset(out)


class _SavedWriteRule(Rule):
    """Writes through an alias (`vias`) of a tensor autograd saved for a backward to come: what
    the walker's storage domain found in the scope."""

    vias: tuple = ()
    domains = ("storage",)

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        # The saved use, the write and the backward must all be in the reporting function: the
        # storage domain tracks only a function whose text calls `backward` or `grad`
        # (StorageDomain.active; `autograd.grad (y, w)` with a blank too).
        return cls.might_match(text) and _calls_backward(None, text)

    # A function of a module the file imports that writes through an alias it makes of what it
    # is passed (`clamp_(y)`, `def clamp_(t): t.detach().clamp_(0)` in utils.py): a write.
    imported_triggers = staticmethod(lambda text: {n: frozenset((n,)) for n in _alias_writers(text)})
    imported_needle = _ALIAS_WRITE

    @classmethod
    def scope_test_imported(cls, text: str, names: frozenset):
        # A function that calls one of the file's (or, `names`, the imported modules') functions
        # that write through an alias they make (`clamp_(y)`): the write is the call.
        writers = names | _alias_writers(text)
        if not writers:
            return cls.might_match_scope

        def test(segment: str) -> bool:
            return cls.might_match_scope(segment) or _calls_backward(None, segment) and any(
                n + "(" in segment for n in writers)

        return test

    def leave_scope(self, scope, ctx) -> None:
        storage = ctx.domain("storage")
        if storage is None:
            return
        for write in storage.writes:
            if write.alias.via in self.vias:
                self.found(write.node, write.alias, write.shown, write.through, ctx)

    def found(self, node, alias: Alias, shown: str, through: str, ctx) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class InplaceThroughDetach(_SavedWriteRule):
    code = "TNS402"
    name = "inplace-through-detach"
    message = ("in-place write through {alias} changes {base}, saved for the backward() below ({effect}); "
               "use {base}.detach().clone()")
    fix_title = "Copy with `.detach().clone()`"
    fix_safety = "unsafe"
    prefilter = (".detach(",)
    vias = ("detach", "numpy")
    docs = """
## What it does
Checks for in-place writes through a `.detach()` alias of a tensor saved for backward.

The writes are `c = a.detach(); c.zero_()`, `a.detach()[0] = 5`,
`a.detach().add_(1)`, and writes into the NumPy array of `a.detach().numpy()`
(`arr = a.detach().numpy(); arr[0] = 5`, `arr.fill(0)`, and NumPy's functions that write into
the array they are given, `np.fill_diagonal(arr, 0)`, `np.copyto(arr, b)`, or into their
`out=`, `np.clip(arr, 0, 1, out=arr)`), where `a` was saved by an operation for a backward
still to come in the same function.  A tensor is saved when an operation that needs it
for its gradient used it: `a ** 2`, `a.log()`, `a.sin()`, `a.abs()`, `a.clamp(...)`, `gelu`,
`silu`, ... save their input; `a.exp()`, `a.sigmoid()`, `a.tanh()`, `a.sqrt()`, `relu`,
`softmax`, ... save their result; `a * b`, `a @ b`, `mm`, `F.linear` save each operand when the
other requires grad; `a / b` saves `b` (and `a` when `b` requires grad).  The losses `F.mse_loss`,
`F.binary_cross_entropy_with_logits`, `F.smooth_l1_loss`, `F.huber_loss` and `F.soft_margin_loss`
save their input and target (by position or keyword; not with other keywords than `reduction`,
Huber's `delta` and a positive `beta`: `weight=` or `beta=0.0` compute otherwise); `F.nll_loss`
saves its input for the version check only (a write through `.detach()` raises; its gradient
does not read the input's values, so a `.data` write is no TNS403); not `F.cross_entropy`,
`F.l1_loss` or `F.kl_div`.  `a * 2`, `a + 1`,
`a.sum()` and views save nothing and are not findings.  A call of a function that returns what
an operation that saves its result makes of a parameter (`def act(x): return torch.sigmoid(x)`,
of the file or of another module of the project) saves its result too, unless the function
changes grad mode; so does a call of a torch module whose forward saves what it returns
(`nn.Sigmoid`, `nn.Tanh`, `nn.ReLU`, `nn.Softmax`, `nn.LogSoftmax`, `nn.Softmin`, or an
`nn.Sequential` that ends in one: `head = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid())`, also
kept by a class or made in another module), or an instance of a module class, of the file or of
another module, whose `forward` returns what such an operation makes (`return
torch.sigmoid(self.fc(x))`, or `return self.act(self.fc(x))` with `self.act = nn.Tanh()`).

Only reported when the saving operation, the write and a later `backward()` (or
`torch.autograd.grad`) that depends on the saving operation are all visible in one function,
in that order.  The write may be a call of a function, of the file or of another module of the
project, that writes in place into what it is passed whenever it is called (`clamp_(c)`, with
`def clamp_(t): t.clamp_(-1, 1)`: a write at the top of its body, before anything that may not
run what follows): `in-place write through c (clamp_() writes into it, utils.py:4)`; or through
a `.detach()` it makes of what it is passed (`clamp_(b)`, with `def clamp_(t):
t.detach().clamp_(-1, 1)`).

## Why is this bad?
`detach()` shares storage (and the version counter) with the original tensor.  Writing through
it changes the values autograd saved, so `backward()` fails with `RuntimeError: one of the
variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [5]] is at version 1; expected version 0 instead.`  Through a NumPy array
the version counter does not see the write at all: no error, and the gradient is silently
computed from the new values.

## Example
```python
b = a ** 2
c = a.detach()
c.zero_()
b.sum().backward()
```

## Use instead
```python
b = a ** 2
c = a.detach().clone()
c.zero_()
b.sum().backward()
```
If the write was meant to change `a`, move it after `backward()`.

## Fix safety
Unsafe: `.clone()` turns the alias into a copy, so the write no longer reaches `a`; code that
relies on `a` changing behaves differently.  The fix is offered only when the alias is bound to a
name (`c = a.detach()`, `arr = a.detach().numpy()`); an inline write (`a.detach().zero_()`) can
only mean "change `a`", and is left to a manual change.

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
"""
    VALID = [
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a * 2
            c = a.detach()
            c.zero_()
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            b.sum().backward()
            a.detach().zero_()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            c = a.detach().clone()
            c.zero_()
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            c = a.detach()
            c.zero_()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            c = a.detach()
            c.zero_()
            (a * 3).sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a * torch.ones(5)
            c = a.detach()
            c.zero_()
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            a = torch.ones(5, requires_grad=True)
            a.detach().zero_()
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a.exp()
            b.detach().zero_()
            b = a.exp()
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            arr = a.detach().numpy()
            total = arr.sum() + 1
            b.sum().backward()
            """), runs=True),
        Valid(
            # x @ w with data x saves x, not w: writing to w before backward is harmless.
            dedent("""
                import torch
                x = torch.randn(2, 3)
                w = torch.randn(3, 3, requires_grad=True)
                h = x @ w
                w.detach().mul_(0.5)
                h.sum().backward()
                """),
            runs=True,
        ),
        Valid(dedent("""
            import torch


            def step(a, flag):
                if flag:
                    b = a ** 2
                else:
                    a.detach().zero_()
                    b = a * 2
                b.sum().backward()


            step(torch.ones(3, requires_grad=True), False)
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            # The seed's example.
            dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                b = a**2
                c = a.detach()
                c.zero_()
                b.sum().backward()
                """),
            line=6,
            col=0,
            fixed=dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                b = a**2
                c = a.detach().clone()
                c.zero_()
                b.sum().backward()
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR),
                          check_fixed="a.grad.tolist() == [2.0] * 5 and c.sum().item() == 0"),
        ),
        Invalid(
            # exp() saves its result.
            dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                b = a.exp()
                b.detach().zero_()
                b.sum().backward()
                """),
            line=5,
            col=0,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR)),
        ),
        Invalid(
            # Through NumPy: no error, a wrong gradient (2 * 5 instead of 2 * 1).
            dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                b = a ** 2
                arr = a.detach().numpy()
                arr[0] = 5
                b.sum().backward()
                """),
            line=6,
            col=0,
            fixed=dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                b = a ** 2
                arr = a.detach().clone().numpy()
                arr[0] = 5
                b.sum().backward()
                """),
            unsafe=True,
            oracle=Oracle(check_bad="a.grad[0].item() == 10.0",
                          check_fixed="a.grad[0].item() == 2.0 and a[0].item() == 1.0"),
        ),
        Invalid(
            dedent("""
                import torch

                a = torch.ones(3, requires_grad=True)
                loss = a.sin().sum()
                a.detach()[0] = 5
                loss.backward()
                """),
            line=5,
            col=0,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR)),
        ),
        Invalid(
            # matmul saves w because the encoder's output requires grad; the "decayed copy" is not a copy.
            dedent("""
                import torch
                from torch import nn

                encoder = nn.Linear(3, 3)
                w = torch.randn(3, 3, requires_grad=True)


                def train_step(batch):
                    h = encoder(batch) @ w
                    snapshot = w.detach()
                    snapshot.mul_(0.5)
                    loss = h.pow(2).mean()
                    loss.backward()
                    return w.grad, snapshot


                grad, snap = train_step(torch.randn(2, 3))
                """),
            line=11,
            col=4,
            fixed=dedent("""
                import torch
                from torch import nn

                encoder = nn.Linear(3, 3)
                w = torch.randn(3, 3, requires_grad=True)


                def train_step(batch):
                    h = encoder(batch) @ w
                    snapshot = w.detach().clone()
                    snapshot.mul_(0.5)
                    loss = h.pow(2).mean()
                    loss.backward()
                    return w.grad, snapshot


                grad, snap = train_step(torch.randn(2, 3))
                """),
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR),
                          check_fixed="grad is not None and grad.shape == (3, 3)"),
        ),
    ]

    def found(self, node, alias: Alias, shown: str, through: str, ctx) -> None:
        effect = "the gradient is silently wrong" if alias.via == "numpy" else "backward() raises RuntimeError"
        fix = None
        anchor = alias.anchor
        if alias.named and isinstance(anchor, ast.Call):
            start, _ = attr_name_span(ctx, anchor.func)
            _, end = ctx.span(anchor)
            if ctx.lines.text[start:end] == "detach()":
                fix = Fix(self.fix_title, self.fix_safety, (), AppendCall(*ctx.span(anchor), ".clone()"))
        base = alias.base if len(alias.base) <= 40 else "<expr>"
        ctx.report(self, node, fix, alias=shown + through, base=base, effect=effect)


class InplaceThroughData(_SavedWriteRule):
    code = "TNS403"
    name = "inplace-through-data"
    message = ("write through {base}.data{through} changes a tensor saved for backward(): wrong gradient, no "
               "error; move it after backward()")
    fix_title = None
    fix_safety = None
    prefilter = (".data",)
    vias = ("data",)
    docs = """
## What it does
Checks for in-place writes through `.data` to a tensor saved for backward.

The writes are `a.data.zero_()`, `a.data[0] = 5`, `a.data += 1` and `d = a.data; d.mul_(2)`,
and a call of a function that writes in place into what it is passed (`clamp_(a.data)`, as in
TNS402) or through a `.data` it makes of it (`clip_(a)`, with `def clip_(t):
t.data.clamp_(max=1)`), where `a` was saved by an operation for a backward still to come in the same function
(see TNS402 for which operations save what).  Optimizer-style updates
(`p.data.add_(...)` after `backward()`, or with no saving operation and backward around them)
are not findings.

## Why is this bad?
`.data` gives the same storage without the autograd bookkeeping: the write does not bump the
version counter, so autograd cannot tell that a value it saved has changed.  `backward()` runs
without error and computes the gradient from the new values: `b = a ** 2; a.data.zero_();
b.sum().backward()` gives `a.grad == 0` instead of `2 * a`.

## Example
```python
b = a ** 2
a.data.zero_()
b.sum().backward()
```

## Use instead
```python
b = a ** 2
b.sum().backward()
with torch.no_grad():
    a.zero_()
```
Writing to the tensor itself under `torch.no_grad()` before the backward is not a fix, but it
turns the wrong gradient into `RuntimeError: one of the variables needed for gradient
computation has been modified by an inplace operation`, which points at the problem.

## Fix safety
No automatic fix: where the write belongs (before or after the backward) depends on what the
code means.

## References
- https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html (why `.data` is unsafe)
"""
    VALID = [
        Valid(dedent("""
            import torch
            from torch import nn

            model = nn.Linear(3, 1)
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            for p in model.parameters():
                p.data.add_(-0.1 * p.grad)
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            a.data.zero_()
            b = a ** 2
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a * 2
            a.data.zero_()
            b.sum().backward()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            a.data.zero_()
            """), runs=True),
        Valid(dedent("""
            import torch
            a = torch.ones(5, requires_grad=True)
            b = a ** 2
            b.sum().backward()
            a.data.zero_()
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                b = a ** 2
                a.data.zero_()
                b.sum().backward()
                """),
            line=5,
            col=0,
            oracle=Oracle(check_bad="a.grad.abs().sum().item() == 0"),
        ),
        Invalid(
            # sigmoid saves its output; overwriting the output through .data zeroes the gradient.
            dedent("""
                import torch

                a = torch.ones(3, requires_grad=True)
                s = torch.sigmoid(a)
                s.data[:] = 0.0
                loss = s.sum()
                loss.backward()
                """),
            line=5,
            col=0,
            oracle=Oracle(check_bad="a.grad.abs().sum().item() == 0"),
        ),
        Invalid(
            dedent("""
                import torch


                def step(a):
                    b = a.log()
                    a.data -= 1
                    b.mean().backward()


                a = torch.full((4,), 2.0, requires_grad=True)
                step(a)
                """),
            line=6,
            col=4,
            oracle=Oracle(check_bad="a.grad.tolist() == [0.25] * 4"),
        ),
        Invalid(
            dedent("""
                import torch

                a = torch.ones(5, requires_grad=True)
                d = a.data
                b = a ** 2
                d[0] = 5.0
                b.sum().backward()
                """),
            line=6,
            col=0,
            oracle=Oracle(check_bad="a.grad[0].item() == 10.0"),
        ),
    ]

    def found(self, node, alias: Alias, shown: str, through: str, ctx) -> None:
        base = alias.base if len(alias.base) <= 40 else "<expr>"
        ctx.report(self, node, None, base=base, through=through)
