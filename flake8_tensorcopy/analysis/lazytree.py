"""A module's tree with its functions' bodies parsed on first use.

A summary of a module the project imports (module_summary.py) needs the module's classes,
headers and module-level code, and the bodies of the few functions a file asks about: of the
modules transformers' `models/` files import, a small part of their body lines.  `parse` reads
the file's layout from its text (where each `def` at the start of a line has its body), parses
the file with every such body replaced by `pass` on its first line and blank lines after (the
skeleton: classes, headers, decorators and module code exactly as the file has them, at the same
lines and columns), and gives each stubbed function a `LazyBody`: a list that parses the
function's own lines, at their own line and column, the first time anything reads it.  Once
every body is read, the tree is the one `ast.parse` gives, node for node and position for
position (`tests/test_lazytree.py`; all 6,820 files of the benchmark corpora).

A file that is checked is parsed the same way (engine.py), and its unread bodies are parsed
before anything in it is reported: a body that does not parse is then the file's syntax error,
as it is when the analysis reads it (`Reparse`: the file is parsed whole and checked again).  A
body of a module only summarised that does not parse reads as returning what nothing says (once
`Reparse` has been raised for it); the functions around it keep their facts, where a whole parse
that failed left the module without a summary.

Anything the layout cannot be sure of is left to the parser: a file with carriage returns, or
with form feeds in its indentation, a `def` indented with a tab, a header with a triple-quoted
string, a body with an odd number of triple quotes or whose last line ends in a backslash (or
holds a `#` and a triple quote), a `def` after an odd number of triple quotes (a docstring's
example).  A skeleton that does not parse, or whose functions are not where the layout put them,
is dropped for a parse of the whole file.  A body whose own parse disagrees with the skeleton is
taken from a parse of the whole file; when that one disagrees too (a layout this module got
wrong, or a file that does not parse), `Reparse` is raised, once a file: the engine then
analyses the file it was checking again.

Code that walks statements and wants function bodies tests `isinstance(body, list)`:
`type(body) is list` is False for a body not read yet (the spans of a module's functions, the
GAN scan).
"""

from __future__ import annotations

import ast
import re
import warnings

from ..source import POSSESSIVE as _POSSESSIVE, LazyPattern
from .astutil import Reparse, body_span, child_nodes, first_body_line, walk  # noqa: F401  (the module's own names too)

# A file this small parses in about the time its layout takes to read.
_MIN_CHARS = 2000

_ENDS: dict = {}


def _end_of_body(indent: int):
    """The first line after a body: indented at most `indent` blanks, not blank, not a comment."""
    pattern = _ENDS.get(indent)
    if pattern is None:
        # (A line that starts with a tab is deeper, in a string, or a TabError.)
        # (Possessive where Python has it, 3.11: blanks given back could only be followed by a
        # blank, never a match.)
        pattern = _ENDS[indent] = re.compile(r"\n[ ]{0,%d}%s[^ \t\n#]" % (indent, _POSSESSIVE))
    return pattern


_STRING = LazyPattern(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")


class _Origin:
    """The text a lazy tree came from, and its whole parse once a body needed it."""

    __slots__ = ("text", "full", "broken", "bodies")

    def __init__(self, text: str):
        self.text = text
        self.full = None
        self.broken = False
        self.bodies: list = []  # the LazyBody of each stubbed function (release)


class LazyBody(list):
    """A function's body, parsed when first read (iterated, indexed, measured, compared)."""

    __slots__ = ("_src",)

    def __init__(self, origin: _Origin, func, start: int, end: int, first_line: int):
        list.__init__(self)
        self._src = (origin, func, start, end, first_line)

    def _load(self) -> None:
        origin, func, start, end, _first = self._src
        body = _parse_body(origin, func, start, end)  # (Reparse leaves it unread)
        self._src = None
        list.extend(self, body)
        func.body = body  # later reads get the plain list (same statements)

    def __bool__(self):
        if self._src is not None:
            self._load()
        return list.__len__(self) > 0

    def __radd__(self, other):
        if self._src is not None:
            self._load()
        return other + list(self)

    __hash__ = None  # type: ignore[assignment]

    def _loaded(name):
        """List method `name`, once the body is read."""
        method = getattr(list, name)

        def loaded(self, *args):
            if self._src is not None:
                self._load()
            return method(self, *args)

        loaded.__name__ = name
        return loaded

    # Every way of reading the list (and of changing it) reads the body first.
    for _name in ("__iter__", "__reversed__", "__len__", "__getitem__", "__contains__", "__eq__", "__ne__",
                  "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__rmul__", "index", "count",
                  "copy", "__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert",
                  "pop", "remove", "sort", "reverse", "clear"):
        locals()[_name] = _loaded(_name)
    del _name, _loaded

    def __reduce_ex__(self, protocol):
        return (list, (list(self),))


def release(tree) -> None:
    """Forget the bodies of a lazy tree not read yet, once nothing will read the tree again (the
    check of its file is over): each such body and its function refer to each other, a cycle
    that would keep the whole tree alive until the cyclic collector came by.  They read as
    empty since."""
    origin = getattr(tree, "_lazy_origin", None)
    if origin is None:
        return
    for body in origin.bodies:
        body._src = None
    origin.bodies = []
    origin.full = None


def unread(body) -> bool:
    """Whether `body` is a function body not parsed yet."""
    return type(body) is LazyBody and body._src is not None


def unread_without(body, words: tuple) -> bool:
    """Whether `body` is a function body not parsed yet whose lines (its function's) hold none
    of `words`: what a scan that looks only at statements naming one of them can leave unread."""
    if type(body) is not LazyBody or body._src is None:
        return False
    origin, _func, start, end, _first = body._src
    find = origin.text.find
    return all(find(w, start, end) == -1 for w in words)


def _quiet_parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def parse(text: str, found: list | None = None) -> ast.Module:
    """`ast.parse(text)` (its exceptions too), with function bodies parsed on first use.
    `found`: the text's layout, where `layout` gave one (None: read here)."""
    if found is None:
        if not _may_lay_out(text):
            return _quiet_parse(text)
        found = _layout(text)
    if not found:
        return _quiet_parse(text)
    parts = []
    at = 0
    for _def_start, head_end, body_end, indent, _line, _head_line, _first, _end_line, _end_col, newlines, *_ in found:
        parts.append(text[at:head_end])
        parts.append(" " * (indent + 1) + "pass" + "\n" * newlines)
        at = body_end
    parts.append(text[at:])
    try:
        tree = _quiet_parse("".join(parts))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _quiet_parse(text)  # the file's own error, or one of the layout's: the parser says
    origin = _Origin(text)
    if not _install(tree, found, origin):
        return _quiet_parse(text)
    tree._lazy_origin = origin
    return tree


def _may_lay_out(text: str) -> bool:
    """Whether the layout of `text` is worth reading: not for a small file (it parses in about
    the time its layout takes), nor for one with carriage returns or with form feeds in its
    indentation (a tab in an indentation the layout stops at: what follows the placeholder is
    indented more than it, as much, or inconsistently, which the skeleton's parse or _install
    refuses)."""
    return len(text) >= _MIN_CHARS and "\r" not in text and not _indents_with(text, "\f")


def layout(text: str) -> list | None:
    """The layout of `text` (`_layout`), for `parse` and `is_sure`; None for a text `parse` would
    not lay out."""
    return _layout(text) if _may_lay_out(text) else None


def is_sure(text: str, found: list) -> bool:
    """Whether the layout `found` of `text` holds, as far as its text tells, every function that
    is not inside another one, each with the lines it has in the file's tree: each line that
    starts a `def` (or `async def`) is one of the layout's or in the body of one, and each of
    those bodies opens as many brackets as it closes (a continuation line of a bracket as
    little indented as the `def` would end the body early; a bracket in a string or a comment
    makes the layout unsure too).

    What the engine reads before it parses a file, to tell whether its rules may report in any
    function of it, or in the code outside them (walker.any_admitted): when none may, the file
    is not parsed.  A function the layout took for real in a string (after a triple quote in a
    comment) is not caught here, as it is when the skeleton is parsed (`parse`)."""
    k, n = 0, len(found)
    find, rfind = text.find, text.rfind
    i = find("def")
    while i != -1:
        after = text[i + 3:i + 4]
        if after.isalnum() or after == "_" or i and text[i - 1] not in " \t\f\n":  # (`default`, `undefined`)
            i = find("def", i + 3)
            continue
        start = rfind("\n", 0, i) + 1
        lead = text[start:i]
        word = lead.strip(" \t\f")
        if not word or word == "async" and lead[-1] in " \t\f":  # a line that starts a def
            while k < n and found[k][2] <= start:
                k += 1
            if k == n or not (found[k][0] == start or found[k][1] <= start):
                return False
        i = find("def", i + 3)
    count = text.count
    for f in found:
        start, end = f[1], f[2]
        if (count("(", start, end) != count(")", start, end) or count("[", start, end) != count("]", start, end)
                or count("{", start, end) != count("}", start, end)):
            return False
    return True


def _indents_with(text: str, c: str) -> bool:
    """Whether `c` stands in the indentation of a line (only blanks before it on its line)."""
    i = text.find(c)
    while i != -1:
        if not text[text.rfind("\n", 0, i) + 1:i].strip(" "):
            return True
        i = text.find(c, i + 1)
    return False


def _layout(text: str) -> list:
    """Each function body the layout is sure of: (offset of the `def` line, offset after the
    header's last line, offset after the body's last line, the `def`'s column, its line, the
    line after its header, the line of its first statement, the line and column where it ends,
    newlines in the body, offset of its first statement's line, offset after its last
    statement's line)."""
    found: list = []
    find, rfind, count = text.find, text.rfind, text.count
    n = len(text)
    # Line numbers and triple quotes before a position, counted forward from the last position
    # asked (positions only grow).
    at, line_no, doubles, singles = 0, 1, 0, 0

    i = find("def ")
    while i != -1:
        start = rfind("\n", 0, i) + 1
        lead = text[start:i]
        word = lead.lstrip(" ")
        indent = len(lead) - len(word)
        if word and (word[:5] != "async" or word[5:].strip(" ") or len(word) == 5):
            i = find("def ", i + 4)
            continue
        if start > at:
            line_no += count("\n", at, start)
            doubles += count('"""', at, start)
            singles += count("'''", at, start)
            at = start
        if doubles % 2 or singles % 2:  # in a string, as like as not (a docstring's example)
            i = find("def ", i + 4)
            continue
        head_end = _header_end(text, i)
        if head_end < 0:
            i = find("def ", i + 4)
            continue
        m = _end_of_body(indent).search(text, head_end - 1)
        body_end = m.start() + 1 if m is not None else n
        body = text[head_end:body_end]
        last = _last_code_line(body)
        body_doubles, body_singles = body.count('"""'), body.count("'''")
        if last is None or body_doubles % 2 or body_singles % 2:
            i = find("def ", head_end)  # left to the parser; a nested def may be stubbed
            continue
        last_start, last_end = last
        end_col = _code_end(body[last_start:last_end])
        if end_col is None:
            i = find("def ", head_end)
            continue
        head_line = line_no + count("\n", start, head_end)  # the line after the header
        newlines = body.count("\n")
        first_at = _first_code_line(body)
        first_line = head_line + body.count("\n", 0, first_at)
        end_line = head_line + newlines - body.count("\n", last_start)  # (the last line's own)
        found.append((start, head_end, body_end, indent, line_no, head_line, first_line, end_line,
                      end_col, newlines, head_end + first_at, min(head_end + last_end + 1, n)))
        # The counts move on past the body (its header holds no triple quote).
        at, line_no = body_end, head_line + newlines
        doubles += body_doubles
        singles += body_singles
        i = find("def ", body_end)
    return found


def _header_end(text: str, at: int) -> int:
    """Offset after the header's last line (the one that ends in `:` outside brackets), or -1
    when the header is not plain: a one-line function, a triple-quoted string, a backslash."""
    depth = 0
    for _ in range(40):
        e = text.find("\n", at)
        if e == -1:
            return -1
        line = text[at:e]
        if "'" in line or '"' in line:
            if "'''" in line or '"""' in line:
                return -1
            line = _STRING.sub("0", line)
            if "'" in line or '"' in line:
                return -1
        if "#" in line:
            line = line[:line.find("#")]
        # (A bracket the line does not hold is not counted: most headers hold no braces.)
        if "(" in line or ")" in line:
            depth += line.count("(") - line.count(")")
        if "[" in line or "]" in line:
            depth += line.count("[") - line.count("]")
        if "{" in line or "}" in line:
            depth += line.count("{") - line.count("}")
        if depth < 0:
            return -1
        if depth == 0:
            return e + 1 if line.rstrip(" ").endswith(":") else -1
        at = e + 1
    return -1


def _last_code_line(body: str):
    """(start, end) in `body` of its last line that is neither blank nor a comment, or None."""
    end = len(body)
    if end and body[-1] == "\n":
        end -= 1
    while end > 0:
        start = body.rfind("\n", 0, end) + 1
        s = body[start:end].lstrip(" \t")
        if s and s[0] != "#":
            return start, end
        end = start - 1
    return None


def _first_code_line(body: str) -> int:
    """Offset in `body` of its first line that is neither blank nor a comment."""
    at = 0
    while True:
        e = body.find("\n", at)
        s = body[at:e if e != -1 else len(body)].lstrip(" \t")
        if s and s[0] != "#" or e == -1:
            return at
        at = e + 1


def _code_end(line: str) -> int | None:
    """The column (UTF-8 bytes, as the parser counts) after the last token of a body's last line,
    or None when the line is not plain enough to tell (a string with `#` or a triple quote)."""
    if line.rstrip(" ").endswith("\\"):
        return None
    if "#" in line:
        if "'" in line or '"' in line:
            if "'''" in line or '"""' in line:
                return None
            masked = _STRING.sub(lambda m: "0" * len(m.group()), line)
            if "'" in masked or '"' in masked:
                return None
            line = line[:masked.find("#")] if "#" in masked else line
        else:
            line = line[:line.find("#")]
    line = line.rstrip(" ")  # (a `;` at the end is the function's last token: it ends there)
    return len(line) if line.isascii() else len(line.encode("utf-8"))


def _install(tree: ast.Module, found: list, origin: _Origin) -> bool:
    """Give each stubbed function of the skeleton its lazy body, and it and the statements that
    end with it (a class whose last method it is) their true end; False when a function is not
    where the layout put it."""
    wanted = {(f[4], f[3]): f for f in found}
    # Where each placeholder `pass` ends -> where its function ends.
    ends = {(f[5], f[3] + 5): (f[7], f[8]) for f in found}
    stack = list(tree.body)
    seen = 0
    _Func, _Async, _Class = ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef
    while stack:
        node = stack.pop()
        end = ends.get((node.end_lineno, node.end_col_offset))
        if end is not None:
            node.end_lineno, node.end_col_offset = end
        t = type(node)
        if t is _Func or t is _Async:
            f = wanted.get((node.lineno, node.col_offset))
            if f is not None:
                body = node.body
                if len(body) != 1 or type(body[0]) is not ast.Pass or body[0].lineno != f[5] or end is None:
                    return False
                seen += 1
                node.body = body = LazyBody(origin, node, f[0], f[2], f[6])
                origin.bodies.append(body)
                continue
            stack.extend(node.body)
        elif t is _Class:
            stack.extend(node.body)
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                sub = getattr(node, field, None)
                if sub:
                    stack.extend(sub)
            for c in getattr(node, "cases", ()):
                stack.extend(c.body)
    return seen == len(found)


def _parse_body(origin: _Origin, func, start: int, end: int) -> list:
    """The body of `func` from a parse of its own lines at their place in the file (no module
    around them but an `if 1:` for an indented one)."""
    text = origin.text
    line, col = func.lineno, func.col_offset
    chunk = text[start:end]
    # At its line: after blank lines (the parser skips them faster than anything else reads
    # a tree), unless they would outnumber its characters four to one (a body late in a long
    # file of small functions: reading every body of a dense file would be quadratic in its
    # length), then parsed where it is and moved down.
    pad = "\n" * (line - 1) if line - 1 <= 4 * len(chunk) else ""
    source = pad + chunk if col == 0 else (pad[1:] if pad else "") + "if 1:\n" + chunk
    try:
        mod = _quiet_parse(source)
        stmts = mod.body if col == 0 else (mod.body[0].body if len(mod.body) == 1 else ())
        node = stmts[0] if len(stmts) == 1 else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        node = None
    if node is not None and not pad:
        _move_down(node, line - node.lineno)
    if not _same(node, func):
        node = _from_whole(origin, func)
    return node.body


def _move_down(node, lines: int) -> None:
    """Add `lines` to the line numbers of `node` and everything in it (ast.increment_lineno),
    each node type's fields read by name (astutil.child_nodes; the expression contexts, which
    have no position, left out)."""
    if not lines:
        return
    stack = [node]
    pop, extend = stack.pop, stack.extend
    placed = _PLACED
    while stack:
        n = pop()
        t = type(n)
        has = placed.get(t)
        if has is None:
            has = placed[t] = "lineno" in t._attributes
        if has:
            n.lineno += lines
            if n.end_lineno is not None:
                n.end_lineno += lines
        extend(child_nodes(n))


_PLACED: dict = {}  # node type -> whether it has a position


def _same(node, func) -> bool:
    return (node is not None and type(node) is type(func) and node.name == func.name
            and node.lineno == func.lineno and node.col_offset == func.col_offset
            and node.end_lineno == func.end_lineno and node.end_col_offset == func.end_col_offset)


def _from_whole(origin: _Origin, func):
    """The function at `func`'s place in a parse of the whole file (parsed once per file).  When
    it is not the skeleton's function, the skeleton was wrong: `Reparse`, once per file; later
    reads of that file take what the whole parse has there."""
    if origin.full is None:
        try:
            origin.full = _quiet_parse(origin.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            origin.full = False
    found = None
    if origin.full:
        for node in walk(origin.full):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.lineno == func.lineno and node.col_offset == func.col_offset):
                found = node
                break
    if found is not None and _same(found, func):
        return found
    if not origin.broken:
        origin.broken = True
        raise Reparse()
    if found is None:  # the file does not parse: a body that returns what nothing says
        where = dict(lineno=func.lineno, col_offset=func.col_offset, end_lineno=func.lineno,
                     end_col_offset=func.col_offset)
        found = ast.FunctionDef(body=[ast.Return(value=ast.Name(id=" unparsed", ctx=ast.Load(), **where), **where)])
    return found


def read_unread(tree: ast.Module) -> ast.Module:
    """Parse every body not read yet: the tree is then the whole parse's.  `Reparse` when a body
    of it does not parse, or did not (then the tree is not the file's)."""
    for func in list(_walk_unread(tree)):
        body = func.body
        if type(body) is LazyBody and body._src is not None:
            body._load()
    origin = getattr(tree, "_lazy_origin", None)
    if origin is not None and origin.broken:
        raise Reparse()
    return tree


def read_all(tree: ast.AST) -> ast.AST:
    """Read every body not read yet (for code that hands the tree on, or compares it)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        stack.extend(ast.iter_child_nodes(node))
    return tree


__all__ = ["LazyBody", "Reparse", "body_span", "first_body_line", "parse", "read_all", "unread", "unread_without"]


def _walk_unread(tree):
    """The functions whose bodies are not read yet (statement walk, reads nothing)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and unread(node.body):
            yield node
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(node, field, None)
            if isinstance(sub, list):
                stack.extend(sub)
        for c in getattr(node, "cases", ()):
            stack.extend(c.body)
