"""Jupyter notebooks: lint the code cells as one program, and fix them with a minimal JSON diff.

The code cells, in order, are joined into one program (each followed by one newline), so
that a tensor made in cell 2 and misused in cell 5 is analysed like in a script.  IPython
syntax is not Python: lines with magics, shell escapes and help (`%time`, `!pip`, `?obj`,
`x = !ls`) become a placeholder statement of the same length, and cells under a cell magic
(`%%bash`) become comments, so that every line and column of the program is the line and
column of the cell.  Code after `%time`/`%timeit`, and under `%%time`, `%%timeit`,
`%%capture` and `%%prun`, is Python and is analysed.

A finding is reported as (cell, line in the cell, column); cells are numbered from 1 over all
cells, markdown included (Jupyter's execution counts are not stable).  A fix is applied only
when all its edits lie inside one cell and outside the placeholders.

Writing back touches nothing but the JSON text of the changed cells' `source` values: the
rest of the file (outputs, metadata, ids, key order, indentation, escapes, trailing newline)
is kept byte for byte, and `source` stays a list of lines or a string, as it was.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring

from .engine import apply_fixes, lint_text
from .output import Finding
from .source import LineIndex


class NotebookError(Exception):
    """The file is not a notebook we can read."""


def is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")


# --------------------------------------------------------------------------- JSON with positions

_WS = " \t\n\r"
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _value_end(s: str, i: int) -> int:
    """End offset of the JSON value that starts at `i`."""
    c = s[i]
    if c == '"':
        return scanstring(s, i + 1)[1]
    if c == "{":
        end = i + 1
        for _key, _vs, end in _members(s, i):
            pass
        return _skip(s, end) + 1
    if c == "[":
        end = i + 1
        for _vs, end in _items(s, i):
            pass
        return _skip(s, end) + 1
    m = _SCALAR.match(s, i)
    if m is None:
        raise ValueError(f"unexpected {c!r} at offset {i}")
    return m.end()


def _members(s: str, i: int):
    """(key, value start, value end) for the object at `i`."""
    i = _skip(s, i + 1)
    if s[i] == "}":
        return
    while True:
        if s[i] != '"':
            raise ValueError(f"expected a key at offset {i}")
        key, i = scanstring(s, i + 1)
        i = _skip(s, i)
        if s[i] != ":":
            raise ValueError(f"expected ':' at offset {i}")
        start = _skip(s, i + 1)
        end = _value_end(s, start)
        yield key, start, end
        i = _skip(s, end)
        if s[i] == "}":
            return
        if s[i] != ",":
            raise ValueError(f"expected ',' at offset {i}")
        i = _skip(s, i + 1)


def _items(s: str, i: int):
    """(value start, value end) for the array at `i`."""
    i = _skip(s, i + 1)
    if s[i] == "]":
        return
    while True:
        start = i
        end = _value_end(s, start)
        yield start, end
        i = _skip(s, end)
        if s[i] == "]":
            return
        if s[i] != ",":
            raise ValueError(f"expected ',' at offset {i}")
        i = _skip(s, i + 1)


# --------------------------------------------------------------------------- the notebook


@dataclass
class Cell:
    number: int  # 1-based over all cells
    kind: str
    source: str
    span: tuple | None  # offsets of the `source` value in the file's text
    as_list: bool


@dataclass
class Notebook:
    text: str  # the file's JSON text (without a BOM)
    bom: bool
    cells: list
    python: bool  # False: another kernel language; nothing to check

    @property
    def code_cells(self) -> list:
        return [c for c in self.cells if c.kind == "code"]


def parse(data: bytes) -> Notebook:
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8-sig")
        nb = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise NotebookError(f"not a notebook (invalid JSON: {exc})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not a notebook in nbformat 4 (no 'cells' list)")
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    lang = None
    for key, sub in (("language_info", "name"), ("kernelspec", "language")):
        if isinstance(meta.get(key), dict) and isinstance(meta[key].get(sub), str):
            lang = meta[key][sub]
            break
    spans: dict[int, tuple] = {}
    try:
        top = _skip(text, 0)
        for key, vs, _ve in _members(text, top):
            if key == "cells":
                for n, (cs, _ce) in enumerate(_items(text, vs), start=1):
                    if text[cs] == "{":
                        for k, s, e in _members(text, cs):
                            if k == "source":
                                spans[n] = (s, e)
    except (ValueError, IndexError, RecursionError) as exc:
        raise NotebookError(f"not a notebook (cannot locate cells: {exc})") from None
    cells = []
    for n, raw in enumerate(nb["cells"], start=1):
        if not isinstance(raw, dict):
            raise NotebookError(f"cell {n} is not a JSON object")
        src = raw.get("source", "")
        as_list = isinstance(src, list)
        if as_list:
            if not all(isinstance(x, str) for x in src):
                raise NotebookError(f"cell {n}: 'source' is not a list of strings")
            src = "".join(src)
        elif not isinstance(src, str):
            raise NotebookError(f"cell {n}: 'source' is not text")
        cells.append(Cell(n, str(raw.get("cell_type", "")), src, spans.get(n), as_list))
    return Notebook(text, bom, cells, lang is None or lang.lower() == "python")


# --------------------------------------------------------------------------- IPython -> Python

_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})
_HELP = re.compile(r"^(?:\?{1,2}[\w.]*|[A-Za-z_][\w.]*(?:\(\))?\?{1,2})$")
_ASSIGN_MAGIC = re.compile(r"^([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)([%!].*)$")
_TIME = re.compile(r"^(%time(?:it)?\s+)(?!-)(\S.*)$")
_LINE_END = re.compile(r"\r\n|\r|\n")


def _statement(n: int) -> str:
    return "pass".ljust(n) if n >= 4 else ("..." if n == 3 else "0".ljust(n))


def _expression(n: int) -> str:
    return "None".ljust(n) if n >= 4 else ("..." if n == 3 else "0".ljust(n))


def _single_simple_statement(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return len(tree.body) == 1 and not isinstance(
        tree.body[0], (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.ClassDef,
                       ast.AsyncFor, ast.AsyncWith, ast.AsyncFunctionDef))


class _Scanner:
    """Just enough of Python's lexer to know whether a line starts a statement."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the open string's delimiter
        self.continued = False

    @property
    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def feed(self, line: str) -> None:
        i, n = 0, len(line)
        comment = False
        while i < n:
            c = line[i]
            if self.string is not None:
                if c == "\\":
                    i += 2
                    continue
                if line.startswith(self.string, i):
                    i += len(self.string)
                    self.string = None
                    continue
                i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            elif c in "\"'":
                self.string = c * 3 if line.startswith(c * 3, i) else c
                i += len(self.string)
                continue
            i += 1
        self.continued = not comment and line.endswith("\\")
        if self.string is not None and len(self.string) == 1 and not self.continued:
            self.string = None  # an unterminated one-line string: a syntax error, not our business


def python_view(source: str) -> tuple[str, list]:
    """`source` with IPython-only lines replaced, and the replaced (start, end) offsets."""
    pieces = []
    protected: list[tuple[int, int]] = []
    pos = 0
    lines = []  # (start offset, content without line ending, line ending)
    for m in _LINE_END.finditer(source):
        lines.append((pos, source[pos:m.start()], m.group()))
        pos = m.end()
    if pos < len(source) or not lines:
        lines.append((pos, source[pos:], ""))

    def replace(start: int, content: str, new: str) -> str:
        # Protect only what differs: code after `%time ` stays fixable.
        if new != content:
            a = 0
            while content[a] == new[a]:
                a += 1
            b = len(content)
            while b > a and content[b - 1] == new[b - 1]:
                b -= 1
            protected.append((start + a, start + b))
        return new

    first = lines[0][1]
    cell_magic = re.match(r"^%%(\w+)", first)
    scanner = _Scanner()
    magic_continues = False
    for k, (start, content, ending) in enumerate(lines):
        if cell_magic and (k == 0 or cell_magic.group(1) not in _PYTHON_CELL_MAGICS):
            if k == 0 and cell_magic.group(1) in _PYTHON_CELL_MAGICS:
                new = _statement(len(content))
            else:
                new = ("#" + " " * (len(content) - 1)) if content.strip() else content
            pieces.append(replace(start, content, new) + ending)
            continue
        if magic_continues:  # a `\` at the end of a magic line continues the magic
            magic_continues = content.endswith("\\")
            indent = len(content) - len(content.lstrip())
            new = content[:indent] + " " * (len(content) - indent) if content.strip() else content
            pieces.append(replace(start, content, new) + ending)
            continue
        if scanner.at_statement_start:
            stripped = content.lstrip()
            indent = content[: len(content) - len(stripped)]
            body = stripped.rstrip()
            new = None
            time = _TIME.match(stripped)
            if time and len(time.group(1)) >= 5 and _single_simple_statement(time.group(2)):
                new = indent + "if 1:".ljust(len(time.group(1))) + time.group(2)
            elif stripped.startswith(("%", "!")) or (body and _HELP.match(body) and "?" in body):
                new = indent + _statement(len(stripped))
                magic_continues = stripped.endswith("\\")
            else:
                assign = _ASSIGN_MAGIC.match(stripped)
                if assign:
                    lhs, rhs = assign.groups()
                    new = indent + lhs + _expression(len(rhs))
                    magic_continues = rhs.endswith("\\")
            if new is not None:
                pieces.append(replace(start, content, new) + ending)
                continue
        scanner.feed(content)
        pieces.append(content + ending)
    return "".join(pieces), protected


# --------------------------------------------------------------------------- the program


@dataclass
class _Part:
    cell: Cell
    start: int  # offset of the cell's text in the program
    line: int  # 1-based program line of the cell's first line
    text: str  # the Python view of the cell
    protected: list = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + len(self.text)


class Program:
    """The code cells of a notebook (with sources possibly replaced) joined into one text."""

    def __init__(self, cells, sources: dict | None = None) -> None:
        sources = sources or {}
        parts, chunks, offset, line = [], [], 0, 1
        for cell in cells:
            text, protected = python_view(sources.get(cell.number, cell.source))
            parts.append(_Part(cell, offset, line, text, protected))
            chunks.append(text + "\n")
            offset += len(text) + 1
            line += len(LineIndex(text).starts)
        self.parts = parts
        self.text = "".join(chunks)
        self.lines = LineIndex(self.text)
        self._starts = [p.start for p in parts]

    def part_at(self, offset: int) -> _Part:
        return self.parts[max(0, bisect.bisect_right(self._starts, offset) - 1)]

    def locate(self, offset: int) -> tuple[_Part, int, int]:
        """(part, 1-based line in the cell, 0-based column) of a program offset."""
        part = self.part_at(offset)
        line, col = self.lines.position(offset)
        return part, line - part.line + 1, col

    def local_edits(self, v) -> list | None:
        """The fix's edits as (part, start, end) in one cell, or None when it cannot apply."""
        if v.fix is None:
            return None
        out = []
        for e in v.fix.edits:
            part = self.part_at(e.start)
            if not (part.start <= e.start <= e.end <= part.end):
                return None
            s, t = e.start - part.start, e.end - part.start
            for ps, pe in part.protected:
                if (s < pe and ps < t) or (s == t and ps < s < pe):
                    return None
            out.append((part, s, t, e))
        if len({id(p) for p, *_ in out}) > 1:
            return None
        return out

    def explain_error(self, error: str) -> str:
        """The engine's parse error with its position given in cell coordinates."""
        try:
            ast.parse(self.text)
        except SyntaxError as exc:
            if exc.lineno and 0 < exc.lineno <= len(self.lines.starts):
                part, line, _ = self.locate(self.lines.starts[exc.lineno - 1])
                return f"SyntaxError: {exc.msg} (cell {part.cell.number}, line {line}, column {exc.offset})"
        except (ValueError, RecursionError, MemoryError):
            pass
        return error

    def finding(self, v) -> Finding:
        """A program violation placed in its cell (its fix dropped if it cannot apply there)."""
        part, line, col = self.locate(self.lines.offset(v.line, 0) + v.col)
        end_offset = self.lines.starts[v.end_line - 1] + v.end_col
        _, end_line, end_col = self.locate(end_offset)
        if end_offset > part.end:  # cannot end in another cell, but never report a nonsense range
            end_line, end_col = line, col
        fix, ranges = v.fix, ()
        edits = self.local_edits(v)
        if edits is None:
            fix = None
        else:
            ranges = tuple(
                (*self.locate(e.start)[1:], *self.locate(e.end)[1:], e.text) for _p, _s, _t, e in edits
            )
        return Finding(v.code, v.message, line, col, end_line, end_col, fix, part.cell.number, ranges)


# --------------------------------------------------------------------------- lint and fix


@dataclass
class NotebookResult:
    findings: list
    error: str | None = None
    text: str | None = None  # the fixed file's JSON text, when something changed
    fixed: int = 0


def lint(nb: Notebook, rules, options, honor_noqa: bool = True) -> NotebookResult:
    if not nb.python or not nb.code_cells:
        return NotebookResult([])
    program = Program(nb.code_cells)
    result = lint_text(program.text, rules, options, honor_noqa=honor_noqa)
    error = program.explain_error(result.error) if result.error else None
    return NotebookResult([program.finding(v) for v in result.violations], error)


def _apply(text: str, edits) -> str:
    parts, pos = [], 0
    for s, t, new in edits:
        parts.append(text[pos:s])
        parts.append(new)
        pos = t
    parts.append(text[pos:])
    return "".join(parts)


def fix(nb: Notebook, rules, options, unsafe: bool = False, max_passes: int = 10) -> NotebookResult:
    """Apply fixes cell by cell until none is left; `text` is the new file, or None."""
    if not nb.python or not nb.code_cells:
        return NotebookResult([])
    cells = nb.code_cells
    sources = {c.number: c.source for c in cells}
    fixed = 0
    for _ in range(max_passes):
        program = Program(cells, sources)
        result = lint_text(program.text, rules, options)
        if result.error:
            return NotebookResult([], program.explain_error(result.error))
        eligible = [v for v in result.violations if program.local_edits(v) is not None]
        _, applied, _ = apply_fixes(program.text, eligible, unsafe)
        if not applied:
            break
        per_cell: dict[int, list] = {}
        for v in applied:
            for part, s, t, e in program.local_edits(v):
                per_cell.setdefault(part.cell.number, []).append((s, t, v.code, e.seq, e.text))
        new_sources = dict(sources)
        for number, edits in per_cell.items():
            edits.sort(key=lambda x: (x[0], x[1], x[2], x[3]))
            new_sources[number] = _apply(sources[number], [(s, t, new) for s, t, _c, _q, new in edits])
        try:
            compile(Program(cells, new_sources).text, "<fixed>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError):
            return NotebookResult([program.finding(v) for v in result.violations],
                                  "a fix produced code that does not parse; no fix was applied to this file")
        sources = new_sources
        fixed += len(applied)
    program = Program(cells, sources)
    remaining = [program.finding(v) for v in lint_text(program.text, rules, options).violations]
    changed = {n: s for n, s in sources.items() if s != next(c.source for c in cells if c.number == n)}
    if not changed:
        return NotebookResult(remaining, fixed=fixed)
    return NotebookResult(remaining, text=rewrite(nb, changed), fixed=fixed)


# --------------------------------------------------------------------------- writing back


def _line_indent(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    line = text[start:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _render_source(nb: Notebook, cell: Cell, new: str, ensure_ascii: bool) -> str:
    """The JSON text of a new `source` value, laid out like the one it replaces."""
    text = nb.text
    start, end = cell.span
    old = text[start:end]
    if not cell.as_list:
        return json.dumps(new, ensure_ascii=ensure_ascii)
    lines = new.splitlines(True)  # what nbformat does when it writes a notebook
    if not lines:
        return "[]"
    old_items = list(_items(text, start))
    # Lines that did not change keep their exact JSON text (escapes and all).
    known: dict[str, str] = {}
    for s, e in old_items:
        known.setdefault(json.loads(text[s:e]), text[s:e])
    items = [known.get(line) or json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    unit = _indent_unit(text)
    if old_items and "\n" in old:  # one item a line, as nbformat and Jupyter write it
        item_indent, close_indent = _line_indent(text, old_items[0][0]), _line_indent(text, end - 1)
    elif not old_items and unit is not None:  # was `[]` in an indented file
        close_indent = _line_indent(text, start)
        item_indent = close_indent + unit
    else:
        sep = "," if re.search(r'",\S', old) else ", "
        return "[" + sep.join(items) + "]"
    return "[\n" + ",\n".join(item_indent + it for it in items) + "\n" + close_indent + "]"


def _indent_unit(text: str) -> str | None:
    m = re.search(r"\A\s*\{\r?\n([ \t]+)\"", text)
    return m.group(1) if m else None


def rewrite(nb: Notebook, changed: dict) -> str:
    """The file's text with the `source` of the cells in `changed` (number -> text) replaced."""
    ensure_ascii = nb.text.isascii() and re.search(r"\\u[0-9a-fA-F]{4}", nb.text) is not None
    by_number = {c.number: c for c in nb.cells}
    out, pos = [], 0
    for number in sorted(changed, key=lambda n: by_number[n].span[0]):
        cell = by_number[number]
        if cell.span is None:
            raise NotebookError(f"cell {number}: cannot find its source in the file")
        start, end = cell.span
        out.append(nb.text[pos:start])
        out.append(_render_source(nb, cell, changed[number], ensure_ascii))
        pos = end
    out.append(nb.text[pos:])
    new_text = "".join(out)
    # Never write a file that says something other than what we meant.
    expected = json.loads(nb.text)
    for number, source in changed.items():
        old = expected["cells"][number - 1]["source"]
        expected["cells"][number - 1]["source"] = source.splitlines(True) if isinstance(old, list) else source
    if json.loads(new_text) != expected:
        raise NotebookError("internal error: the rewritten notebook does not match its fixed cells")
    return new_text


def encode(nb: Notebook, text: str) -> bytes:
    return (b"\xef\xbb\xbf" if nb.bom else b"") + text.encode("utf-8")
