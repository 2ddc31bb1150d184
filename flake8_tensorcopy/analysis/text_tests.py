"""What the walker's snapshot and accumulator domains (snapshots.py, accumulators.py, family
TNS5) ask of a text before any walk: whether a file, a function or an imported module may hold
what they look for.  Apart from the domains, so that a check of a file that holds none of it
(most files) does not import them (a millisecond of every start)."""

from __future__ import annotations

from bisect import bisect_right

from ..source import LazyPattern, OnLinesWith, class_methods, find_literal, kept_for_the_last_text, \
    top_level_functions, with_inherited, word_positions

# What a snapshot holds: a module's state dict, or a view of a tensor.
STATE, TENSOR_ALIAS = "state", "tensor"

# ------------------------------------------------------------------ snapshots

# A `.detach()` / `.data` / NumPy view that ends an expression (kept: bound, appended, stored,
# a comprehension's element), also through views of it (`.flatten()`, `.view(-1)`, `[0]`, `.T`:
# snapshots._VIEW_METHODS), not one that a call continues (`w.data.normal_(...)`).  (`.cpu()` or
# `.to(...)`, which snapshots._to_the_cpu reads as `.cpu()` where it says "cpu".)
_KEPT_ALIAS = LazyPattern(
    r"(?m)(?:\.detach\(\)|\.data|\.numpy\(\)|\.cpu\(\)|\.to\((?:device=)?[\"']cpu[\"']\))(?:\.cpu\(\)|\.to\((?:[^()\n]|\([^()\n]*\))*\))?(?:\.numpy\(\))?"
    r"(?:\.(?:view|view_as|flatten|reshape|t|transpose|permute|squeeze|unsqueeze|expand|expand_as|narrow|unflatten"
    r"|movedim)\([^()\n]*\)|\[[^\]\n]*\]|\.m?T\b)*[ \t]*(?:[,)\]}#]|\r?$|for[ \t])")
_STATE_DICT_CALL = LazyPattern(r"\.state_dict\(")


# What may update a snapshot's source in a text (the snapshot domain is active only in a scope
# whose text may, or in a file that steps an optimizer: SnapshotDomain.active): what `may_update`
# answers, faster (the tests hold it to this pattern).
UPDATE_TEXT = LazyPattern(r"\.step\(|[A-Za-z0-9]_\(|load_state_dict\(|reset_parameters\(|[-+*/]=|\]\s*=[^=]")
_SUBSCRIPT_WRITE = LazyPattern(r"\]\s*=[^=]")
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def may_update(text: str) -> bool:
    """`UPDATE_TEXT.search(text) is not None`, by substring searches first (a pattern of
    alternatives is tried at every position of the text)."""
    if any(s in text for s in (".step(", "+=", "-=", "*=", "/=", "load_state_dict(", "reset_parameters(")):
        return True
    i = text.find("_(")
    while i != -1:
        if i and text[i - 1] in _ALNUM:
            return True
        i = text.find("_(", i + 2)
    return _SUBSCRIPT_WRITE.search(text) is not None


def might_keep_state_dict(text: str) -> bool:
    """Whether a source text calls a `.state_dict()` method (not `_load_from_state_dict(`)."""
    return _STATE_DICT_CALL.search(text) is not None


@kept_for_the_last_text
def snapshot_helpers(text: str) -> dict:
    """{name: {name}} of the module-level functions of a module's text that may return the state
    dict of a module they are handed (`def snapshot(m): return m.state_dict()`) or a view of a
    tensor they are handed (`def to_numpy(t): return t.detach().cpu().numpy()`), by their text: a
    file that calls one may keep a snapshot through it (Rule.imported_triggers; whether it does is
    `snapshot_return`'s to say)."""
    if "return" not in text or _RETURNS_SNAPSHOT.search(text) is None:
        return {}
    return {name: frozenset({name}) for name, segment in top_level_functions(text)
            if "return" in segment and (_STATE_DICT_CALL.search(segment) is not None or might_alias_tensor(segment))}


def snapshot_triggers(text: str) -> dict:
    """{name: names a call of which may keep a snapshot, or update one} of a module's text: its
    functions that return one (snapshot_helpers) and, by class, its methods that keep one in an
    attribute (state_keeping_methods); its functions and methods that step an optimizer
    (stepping_callables): what a file that imports them may call (Rule.imported_triggers)."""
    found = dict(snapshot_helpers(text))
    for cls, methods in state_keeping_methods(text).items():
        found[cls] = found.get(cls, frozenset()) | methods
    for name, methods in stepping_callables(text).items():
        found[name] = found.get(name, frozenset()) | methods
    return found


@kept_for_the_last_text
def stepping_callables(text: str) -> dict:
    """{name: {name}} of the module-level functions, and {class: method names} of the classes
    (at the margin), of a module's text whose text steps an optimizer (`.step(`): a call of one
    may update in place the parameters of a module it is handed, or that its instance was handed
    (`trainer.fit(x)`, with `t = Trainer(model)`; snapshots.SnapshotDomain._calls_stepping
    decides)."""
    if ".step(" not in text:
        return {}
    out = {name: frozenset({name}) for name, segment in top_level_functions(text) if ".step(" in segment}
    if "class " in text:
        for cls, _bases, name, segment in class_methods(text):
            if ".step(" in segment and not name.startswith("__"):
                out[cls] = out.get(cls, frozenset()) | {name}
        out = with_inherited(text, out)
    return out


class EitherNeedle:
    """Needles searched one after the other (Rule.imported_needle): the first match."""

    def __init__(self, *needles) -> None:
        self.needles = needles

    def search(self, data):
        for needle in self.needles:
            found = needle.search(data)
            if found is not None:
                return found
        return None


# A module that steps an optimizer (stepping_callables): its bytes.
STEPS_BYTES = LazyPattern(rb"\.step\(")
# A module with a class whose constructor may keep views of a module's parameters
# (state_keeping_methods): its bytes.
KEEPS_VIEWS_BYTES = OnLinesWith((b"parameters()",), LazyPattern(
    rb"^[ \t]*self\.\w+[ \t]*=[^\n]*(?:\.data\b|\.detach\(\))[^\n]*\.(?:named_)?parameters\(\)"))


def snapshot_needles(text: str) -> tuple:
    """What the text of a function that may keep a snapshot through the file's own functions
    and methods holds (`snapshot(` for `snapshot_helpers`, `step(` for a method that keeps a
    state dict, `state_dict(` for a `__call__` that does: `stopper(loss, model)`)."""
    names = set(snapshot_helpers(text)).union(*state_keeping_methods(text).values())
    return tuple("state_dict(" if n == "__call__" else n + "(" for n in sorted(names))


# A `return` of a state dict or of a view that ends the line, or a local bound to one (returned
# later: `state = m.state_dict()`, `return state`): a first test of a whole text.
_RETURNS_SNAPSHOT = OnLinesWith((".state_dict(", ".detach()", ".numpy()", ".data"), LazyPattern(
    r"^[ \t]*(?:return|[A-Za-z_]\w*[ \t]*=)[^\n]*(?:\.state_dict\(|(?:\.detach\(\)|\.data|\.numpy\(\))(?:\.cpu\(\))?(?:\.numpy\(\))?"
    r"[ \t]*(?:[,)\]}#]|\r?$))"))
# An attribute of the instance set to a state dict (a first test of a whole text).
_SETS_STATE = OnLinesWith((".state_dict(",), LazyPattern(r"^[ \t]*self\.\w+[ \t]*="))
_KEEPS_STATE = LazyPattern(r"self\.\w+[ \t]*=[^\n]*\.state_dict\(")
# An attribute of the instance set to views of a module's parameters (`self.params = {n: p.data
# for n, p in model.named_parameters()}`, an EWC anchor).
_KEEPS_VIEWS = OnLinesWith(("parameters()",), LazyPattern(
    r"^[ \t]*self\.\w+[ \t]*=[^\n]*(?:\.data\b|\.detach\(\))[^\n]*\.(?:named_)?parameters\(\)"))


@kept_for_the_last_text
def state_keeping_methods(text: str) -> dict:
    """{class: method names} of the classes of a module's text (at the margin) whose methods may
    keep the state dict of a module they are handed in an attribute of the instance (`def
    step(self, loss, model): ... self.best_state = model.state_dict()`, an early-stopping
    helper), and, with the class's own name (its calls construct it), whose constructor may keep
    views of the parameters of a module it is handed (`self.params = {n: p.data for n, p in
    model.named_parameters()}`), by their text (kept_state_dicts decides)."""
    if "class " not in text:
        return {}
    state = _SETS_STATE.search(text) is not None
    views = "__init__" in text and _KEEPS_VIEWS.search(text) is not None
    if not state and not views:
        return {}
    out: dict = {}
    for cls, _bases, name, segment in class_methods(text):
        if state and _KEEPS_STATE.search(segment) is not None:
            out[cls] = out.get(cls, frozenset()) | {name}
        if views and name == "__init__" and _KEEPS_VIEWS.search(segment) is not None:
            out[cls] = out.get(cls, frozenset()) | {cls}
    return out


def might_alias_tensor(text: str) -> bool:
    """Whether a source text keeps a `.detach()`, `.data`, `.cpu()` or NumPy view of a tensor (a
    text test)."""
    # (The pattern alone: each of its matches holds `.detach()`, `.data`, `.numpy()`, `.cpu()` or
    # `.to("cpu")`, and a search for its literal start, `.`, runs faster than substring tests
    # for them in front.)
    return _KEPT_ALIAS.search(text) is not None


# ------------------------------------------------------------------ accumulators

# `name += term` / `name = name + term` with a plain name and a term that is not a literal,
# a tuple, a list or a string (`hidden_states += (h,)`, `count += 1`; a number that scales
# something is not one: `0.1 * loss`); also a decayed total,
# `name = 0.9 * name + term` / `name = name * beta + term` (accumulators._accumulation); `name`
# may be a dict's entry under a constant key (`running["loss"] += loss`: group 2).
_ACCUM_TEXT = LazyPattern(
    r"(?m)^[ \t]*([A-Za-z_]\w*)((?:[ \t]*\[[ \t]*(?:'\w+'|\"\w+\"|\d+)[ \t]*\])?)"
    r"[ \t]*(?:\+=|=[ \t]*(?:[\w.]+[ \t]*\*[ \t]*)?\1\2(?:[ \t]*\*[ \t]*[\w.]+)?[ \t]*\+(?!=))"
    r"[ \t]*(?![\['\"\s\\])(?!\d(?![\d.eE_]*[ \t]*\*))")


def _loop_end(text: str) -> int:
    """The offset after the first word `for` or `while` of `text` (what `\b(?:for|while)\b`
    finds), or -1: found by searching for each word (a pattern that starts with a word boundary
    is tried at every position)."""
    ends = [at[0] + len(word) for word in ("for", "while") if (at := word_positions(text, word, first=True))]
    return min(ends) if ends else -1


# The start of a right-hand side that is zero: `0`, `0.0`, `torch.zeros(...)`, `torch.tensor(...)`.
_ZERO_TEXT = r"[ \t]*(?:0(?:\.0*)?(?![\w.(\[])|torch\.(?:zeros|tensor|scalar_tensor)\("
_ZERO = LazyPattern(_ZERO_TEXT + ")")
# ... or a new dict, whose entries are totals: `{`, `dict(`, `defaultdict(`, `collections.OrderedDict(`.
_DICT_START = LazyPattern(_ZERO_TEXT + r"|\{|dict\(|(?:collections\.)?(?:defaultdict|OrderedDict)\()")
_TARGETS_BEFORE = LazyPattern(r"[ \t]*(?:[A-Za-z_]\w*[ \t]*,[ \t]*)*")
_AFTER_TARGET = LazyPattern(r"[ \t]*(?:,[^=\n]*)?=(?!=)")


_DEF_TEXT = LazyPattern(r"(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(")
# `self.sum += val * n`: names and arithmetic only (`self.n += x.shape[0]`, `self.t += v.item()`
# add no graph, or none of a parameter's).
_SELF_ADD_LINE = r"self\.\w+[ \t]*\+=[ \t]*[A-Za-z_][\w \t*/+\-]*(?:#[^\r\n]*)?"  # (to its line's end)
_SELF_ADD = _SELF_ADD_LINE + r"(?:\r?\n|$)"
_SELF_ADD_TEXT = LazyPattern(r"[ \t]*" + _SELF_ADD)


_CLASS_TEXT = LazyPattern(r"(?m)^class[ \t]+(\w+)")
# A `self.sum += val * n` line in a module's bytes (any encoding Python reads source in has these
# ASCII bytes): meter_methods_by_class finds nothing without one.  Tried on the lines that hold
# `+=` (what `_SELF_ADD` finds in a whole text, it finds on its line: it spans no line break
# but the one it may end at, and a line given here ends before its `\n`).
METER_BYTES = OnLinesWith((b"+=",), LazyPattern((_SELF_ADD_LINE + r"\r?$").encode()))


def meter_methods_by_class(text: str) -> dict:
    """{top-level class: meter_methods of its text} of a module's text: what a file that imports
    the class may call (`from .utils import AverageMeter`)."""
    if "self." not in text or "+=" not in text or "class" not in text:
        return {}
    classes = [(m.start(), m.group(1)) for m in _CLASS_TEXT.finditer(text)]
    out: dict = {}
    for i, (start, name) in enumerate(classes):
        end = classes[i + 1][0] if i + 1 < len(classes) else len(text)
        found = _meter_methods(text[start:end])
        if found:
            out[name] = found
    return with_inherited(text, out)  # (`class LossMeter(Meter): pass`: its `update` too)


def _meter_methods(text: str) -> frozenset:
    """Names of the methods of a file's text that add to an attribute of the instance
    (`def update(self, val, n=1): ... self.sum += val * n`): calls of them may accumulate (a
    text test only; `_added_parameters` decides)."""
    if "self." not in text or "+" not in text:
        return frozenset()
    adds = []
    # `self.sum += ...` lines, by a search of `+=` (a pattern tried at every line costs three
    # times as much; `self.sum = self.sum + val`, whose `= self.` is on most lines of a model,
    # is not looked for).
    at = find_literal(text, "+=")  # (in most files, absent: the whole text read)
    while at != -1:
        line = text.rfind("\n", 0, at) + 1
        if _SELF_ADD_TEXT.match(text, line) is not None:
            adds.append(line)
        at = text.find("+=", text.find("\n", at) + 1 or len(text))
    if not adds:
        return frozenset()
    defs = [(m.start(), m.group(1)) for m in _DEF_TEXT.finditer(text)]
    starts = [d[0] for d in defs]
    out = set()
    for at in adds:
        i = bisect_right(starts, at) - 1
        if i >= 0:
            name = defs[i][1]
            if not name.startswith("__") and name != "forward":  # (called by Python, by nn.Module)
                out.add(name)
    return frozenset(out)


# The pre-filter, the scope test and the domain ask it of one file.
meter_methods = kept_for_the_last_text(_meter_methods)


# A line that adds to an attribute of the instance: `self.running_loss += ...`, `self.total_loss =
# self.total_loss + ...`, `self.losses.append(...)` (accumulators._attribute_accumulation); group 1
# the attribute, group 2 the rest of the line.
_ATTR_ADD = LazyPattern(r"[ \t]*self\.(\w+)[ \t]*(?:\+=|=[ \t]*self\.\1[ \t]*\+(?!=)|\.append\()([^\r\n]*)")
# After `self.X =` (and more chained targets, `self.val = self.sum = 0`): a zero or a new empty list.
_ATTR_START = LazyPattern(r"[ \t]*=(?!=)[ \t]*(?:self\.\w+[ \t]*=(?!=)[ \t]*)*(?:" + _ZERO_TEXT[len(r"[ \t]*(?:"):]
                          + r"|\[[ \t]*\]|list\([ \t]*\))")


def _attribute_adds(text: str, at: int, attrs=None) -> str | None:
    """The attribute the line of `text` that holds offset `at` adds to (`_ATTR_ADD`), one of
    `attrs` when given, where it is one of losses by its spelling: "loss" in the attribute's
    name or in the rest of the line (or the line may go on: an open bracket, a backslash);
    else None."""
    m = _ATTR_ADD.match(text, text.rfind("\n", 0, at) + 1)
    if m is None or attrs is not None and m.group(1) not in attrs:
        return None
    name, rest = m.group(1), m.group(2)
    if "loss" in name.lower() or "loss" in rest.lower() or rest.rstrip().endswith("\\") \
            or sum(map(rest.count, "([{")) > sum(map(rest.count, ")]}")):
        return name
    return None


@kept_for_the_last_text
def attribute_totals(text: str) -> frozenset:
    """Attributes of an instance that a file's text may keep losses in across calls
    (accumulators.attribute_total): `self.X += ...`, `self.X = self.X + ...` or
    `self.X.append(...)` on a line (`_attribute_adds`: a loss by its spelling), where a line
    binds `self.X` to a zero or a new empty list (the loop that calls the method may be another
    file's).  A text test only."""
    if "self." not in text:
        return frozenset()
    found = set()
    for needle in ("+", ".append("):
        at = text.find(needle)
        while at != -1:
            name = _attribute_adds(text, at)
            if name is not None:
                found.add(name)
            end = text.find("\n", at)
            at = text.find(needle, end + 1) if end != -1 else -1
    out = set()
    for name in found:
        needle = "self." + name
        at = text.find(needle)
        while at != -1:
            after = at + len(needle)
            if (after >= len(text) or not (text[after].isalnum() or text[after] == "_")) \
                    and _ATTR_START.match(text, after) is not None:
                out.add(name)
                break
            at = text.find(needle, after)
    return frozenset(out)


def _adds_to_attributes(text: str, attrs: frozenset) -> bool:
    """Whether a line of `text` adds to one of `attrs` (`_attribute_adds`)."""
    for name in attrs:
        needle = "self." + name
        at = text.find(needle)
        while at != -1:
            if _attribute_adds(text, at, attrs) is not None:
                return True
            at = text.find(needle, at + 1)
    return False


def might_accumulate(text: str, meters: frozenset = frozenset(), attrs: frozenset = frozenset()) -> bool:
    """Whether a source text may hold an accumulation the rule looks at: `name += term` or
    `name = name + term` after a `for` / `while`, where `name` starts from zero on a line of its
    own (`total = 0`, `0.0`, `torch.zeros(...)`, `torch.tensor(...)`, or a tuple of them), or,
    for a dict's entry (`running["loss"] += loss`), where the dict starts so or as a new dict
    (`running = {"loss": 0.0}`, `dict(...)`, `defaultdict(float)`); `name.add_(term)` so
    (`_might_keep`); `name.append(term)` after a loop where `name` is bound to a new empty list;
    or a call of one of `meters` (`meter_methods`) after a loop; or an addition to one of `attrs`
    (`attribute_totals` of the file's text: a method called in a loop elsewhere may hold it).  A
    text test only (the analysis decides)."""
    if attrs and _adds_to_attributes(text, attrs):
        return True
    if meters and any("." + m + "(" in text for m in meters) and _loop_end(text) != -1:
        return True
    plus = "+" in text
    if not plus and ".append(" not in text and ".add_(" not in text:
        return "] =" in text and "loss" in text and _might_store(text, _loop_end(text))
    loop = _loop_end(text)
    if loop == -1:
        return False
    if not plus:
        return _might_keep(text, loop) or "] =" in text and "loss" in text and _might_store(text, loop)
    names = set()
    pos, last_line = loop, -1
    while True:
        pos = text.find("+", pos)
        if pos < 0:
            break
        line = text.rfind("\n", 0, pos) + 1
        if line != last_line:
            last_line = line
            a = _ACCUM_TEXT.match(text, line)
            if a is not None:
                names.add((a.group(1), bool(a.group(2))))
        pos += 1
    return any(_starts_from_zero(name, text, _DICT_START if entry else _ZERO) for name, entry in names) or \
        _might_keep(text, loop) or _starts_from_none(text, loop) or \
        "] =" in text and "loss" in text and _might_store(text, loop)


# `smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss` (accumulators._none_branches),
# from the line's start up to the test.
_FROM_NONE = LazyPattern(r"[ \t]*([A-Za-z_]\w*)[ \t]*=(?!=)[^\n]*?\bif[ \t]+\1[ \t]+is[ \t]+(?:not[ \t]+)?None[ \t]+else\b")


def _starts_from_none(text: str, loop: int) -> bool:
    """Whether a line of `text` after the offset `loop` binds a name to a total of itself that
    starts from its first term where it is None (`_FROM_NONE`)."""
    for needle in (" is None else ", " is not None else "):
        at = text.find(needle, loop)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            m = _FROM_NONE.match(text, start)
            if m is not None:
                # (An addition to the name on the line, besides its binding and its test: not
                # `return_dict = return_dict if return_dict is not None else self.config.return_dict`.)
                end = text.find("\n", at)
                line = text[start:end if end != -1 else len(text)]
                if "+" in line and len(word_positions(line, m.group(1))) >= 3:
                    return True
            at = text.find(needle, at + len(needle))
    return False


# A new empty list after a binding's `=` (`losses = []`, `a, losses = [], []`, `losses: list = list()`).
_EMPTY_LIST = LazyPattern(r"\[[ \t]*\]|\blist\([ \t]*\)")


# An argument that is a value without graph, the whole of it: a chain of names, calls and indexes
# that ends in `.item()`, `.detach()` or `.tolist()` (`losses.append(loss.item())`, the most
# common append of a training loop), then the call's `)`.
_CUT_ARGUMENT = LazyPattern(r"[\w.]+(?:\([^()\n]*\)|\[[^\[\]\n]*\]|\.\w+)*\.(?:item|detach|tolist)\(\)\)")


# `losses[` of a line `losses[i] = loss` (to the `[`: the name stored into, at the end).
_STORE_TARGET = LazyPattern(r"[ \t]*([A-Za-z_]\w*)\[")
# What follows the name where a line binds it to a new tensor (accumulators._new_tensor).
_NEW_TENSOR_AFTER = LazyPattern(r"[ \t]*(?::[^=\n]*)?=[ \t]*torch\.(?:zeros|empty|ones|full)(?:_like)?\(")


def _might_store(text: str, loop: int) -> bool:
    """Whether `text` may store losses into a tensor of its own in a loop (`losses[i] = loss`
    after a `for` or `while`, where `losses = torch.zeros(n)`: accumulators._fresh_tensor), "loss"
    on the line that stores (accumulators._loss_list: a model's forward fills tensors of its own
    in loops too, which it returns).  By searches of literals: the lines that store an element
    and name a loss, then the name's binding to a new tensor.  `loop`: _loop_end(text)."""
    if loop == -1 or "torch." not in text:
        return False
    at = text.find("] =", loop)
    while at != -1:
        if not text.startswith("] ==", at):
            line = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if "loss" in text[line:end if end != -1 else len(text)]:
                m = _STORE_TARGET.match(text, line, at + 1)
                if m is not None and _made_new(text, m.group(1)):
                    return True
        at = text.find("] =", at + 3)
    return False


def _made_new(text: str, name: str) -> bool:
    """Whether a line of `text` binds `name` to a new tensor (`losses = torch.zeros(n)`)."""
    at = text.find(name)
    while at != -1:
        if (at == 0 or text[at - 1] in " \t\n") and _NEW_TENSOR_AFTER.match(text, at + len(name)) is not None:
            return True
        at = text.find(name, at + 1)
    return False


def _might_keep(text: str, loop: int) -> bool:
    """Whether `text` may keep terms in place after the offset `loop` (a loop's start): a call
    `name.append(` where the text binds `name` to a new empty list on a line (accumulators.
    _fresh_list: any binding of it, annotated or in a tuple), or `name.add_(` / `name["k"].add_(`
    where `name` starts from zero (or as a new dict), as for `+=`.  The name is the one right
    before the call, not an attribute's (`self.losses.append(`: not the function's own list)."""
    seen = set()
    for needle in (".append(", ".add_("):
        at = text.find(needle, loop)
        while at != -1:
            end, entry = at, False
            if needle == ".add_(" and text[at - 1] == "]":  # `running["loss"].add_(`
                end, entry = text.rfind("[", text.rfind("\n", 0, at) + 1, at), True
            elif needle == ".add_(" and text[at - 1] == ")":  # `ema.mul_(0.9).add_(`
                line = text.rfind("\n", 0, at) + 1
                m = _SCALED_IN_PLACE.fullmatch(text, line, at)
                end = m.end(1) if m is not None else at
            start = end
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            if start < end and text[start - 1] != "." and (needle, text[start:end], entry) not in seen \
                    and _CUT_ARGUMENT.match(text, at + len(needle)) is None:
                name = text[start:end]
                seen.add((needle, name, entry))
                if needle == ".add_(":
                    if _starts_from_zero(name, text, _DICT_START if entry else _ZERO):
                        return True
                elif _names_loss(name, text, at + len(needle)) and _bound_to_empty_list(name, text):
                    return True
            at = text.find(needle, at + 1)
    # `losses += [loss]`, an append as `.append(` is.
    at = text.find("+=", loop)
    while at != -1:
        after = at + 2
        while after < len(text) and text[after] in " \t":
            after += 1
        if after < len(text) and text[after] == "[":
            end = at
            while end > 0 and text[end - 1] in " \t":
                end -= 1
            start = end
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            name = text[start:end]
            if start < end and text[start - 1] != "." and ("+=", name, False) not in seen:
                seen.add(("+=", name, False))
                if _names_loss(name, text, after + 1, "[]") and _bound_to_empty_list(name, text):
                    return True
        at = text.find("+=", after)
    return False


# A line's start up to a call of an in-place scaling of a name (`ema.mul_(0.9)`, group 1 the name).
_SCALED_IN_PLACE = LazyPattern(r"[ \t]*([A-Za-z_]\w*)\.(?:mul_|div_)\([^()\n]*\)")


def _names_loss(name: str, text: str, start: int, brackets: str = "()") -> bool:
    """Whether "loss" is in the list's name or in the text of the argument that starts at
    `start`, up to its closing parenthesis (`brackets`: "[]" for a list display's, `+= [`)
    (accumulators._loss_list: a list of losses by its spelling); where that parenthesis is not
    found soon, whether it may be."""
    if "loss" in name.lower():
        return True
    depth = 1
    i = start
    end = min(len(text), start + 2000)
    opening, closing = brackets
    while i < end:
        c = text[i]
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if not depth:
                return "loss" in text[start:i].lower()
        i += 1
    return True


def _bound_to_empty_list(name: str, text: str) -> bool:
    """Whether a line of `text` holds the name (not an attribute, not part of a longer name),
    then `=`, then a new empty list (`[]`, `list()`)."""
    at = text.find(name)
    size = len(name)
    while at != -1:
        before = text[at - 1] if at else " "
        after = text[at + size] if at + size < len(text) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            end = text.find("\n", at)
            eq = text.find("=", at + size, end if end >= 0 else len(text))
            if eq != -1 and _EMPTY_LIST.search(text, eq, end if end >= 0 else len(text)) is not None:
                return True
        at = text.find(name, at + 1)
    return False


def _starts_from_zero(name: str, text: str, _ZERO=_ZERO) -> bool:
    """`name = 0` (or `0.0`, `torch.zeros(...)`, `torch.tensor(...)`) on a line of its own, or
    `a, name = x, 0` (some element of the tuple is a zero); with `_DICT_START` for `_ZERO`, also
    a new dict."""
    # Each occurrence of the name, then `_AFTER_TARGET` after it: what `name[ \t]*(?:,[^=\n]*)?=(?!=)`
    # finds, and a few more (where its matches would overlap), without a pattern compiled for
    # each name (which cost as much as the searches).
    at = text.find(name)
    while at != -1:
        # (Targets before it on its line end in a blank or a comma, or there are none: most
        # occurrences, an argument or an operand, are left at this one test.)
        m = _AFTER_TARGET.match(text, at + len(name)) if not at or text[at - 1] in " \t,\n" else None
        if m is not None:
            line = text.rfind("\n", 0, at) + 1
            if _TARGETS_BEFORE.fullmatch(text, line, at) is not None:
                if _ZERO.match(text, m.end()) is not None:
                    return True
                if "," in text[line:m.end()]:
                    end = text.find("\n", m.end())
                    rhs = text[m.end():end if end >= 0 else len(text)]
                    if any(_ZERO.fullmatch(part.strip()) or _ZERO.match(part) for part in rhs.split(",")):
                        return True
        at = text.find(name, at + 1)
    return False
