"""Jupyter notebooks: lint the code cells as one program, and fix them with a minimal JSON diff.

The code cells, in order, are joined into one program (each followed by one newline), so
that a tensor made in cell 2 and misused in cell 5 is analysed like in a script.  IPython
syntax is not Python: lines with magics, shell escapes and help (`%time`, `!pip`, `?obj`,
`x = !ls`) become a placeholder statement of the same length, and cells under a cell magic
(`%%bash`) become comments, so that every line and column of the program is the line and
column of the cell.  Code after `%time`/`%timeit`, and under `%%time`, `%%timeit`,
`%%capture` and `%%prun`, is Python and is analysed.

Each cell is first cleaned up the way IPython cleans it before running it (`leading_indent`:
a cell whose first non-blank line is indented loses that indentation), and positions and fixes
are mapped back to the cell's own text.  A cell that still does not parse is left out of the
program and reported as one error; the other cells are checked and fixed.

A finding is reported as (cell, line in the cell, column); cells are numbered from 1 over all
cells, markdown included (Jupyter's execution counts are not stable).  A fix is applied only
when all its edits lie inside one cell and outside the placeholders.  SARIF and GitHub output
place a finding in the .ipynb file's own text (`json_position`).

Writing back touches nothing but the JSON text of the changed cells' `source` values: the
rest of the file (outputs, metadata, ids, key order, indentation, escapes, trailing newline)
is kept byte for byte, and `source` stays a list of lines or a string, as it was.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
import warnings
from dataclasses import dataclass, field
from json.decoder import scanstring

from .engine import fix_passes, lint_text, parse_error, splice_fixes
from .model import Error
from .output import Finding
from .source import LineIndex, splice


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
    lines: LineIndex | None = field(default=None, repr=False, compare=False)  # of `text`, made on demand

    @property
    def code_cells(self) -> list:
        return [c for c in self.cells if c.kind == "code"]


def parse(data: bytes) -> Notebook:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not a notebook (invalid JSON: {exc})") from None
    return parse_text(text, data.startswith(b"\xef\xbb\xbf"))


def parse_text(text: str, bom: bool = False) -> Notebook:
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as exc:
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


# --------------------------------------------------------------------------- IPython's cleanup

_INDENT = re.compile(r"[ \t]+")
_BREAK_BEFORE_TEXT = re.compile(r"(?:\r\n|\r|\n)(?=[^\r\n])")


def _split_lines(source: str) -> list:
    """(start offset, content, line ending) for each line, ended where Python ends lines."""
    lines, pos = [], 0
    for m in _LINE_END.finditer(source):
        lines.append((pos, source[pos:m.start()], m.group()))
        pos = m.end()
    if pos < len(source) or not lines:
        lines.append((pos, source[pos:], ""))
    return lines


@dataclass(frozen=True)
class Dedent:
    """A cell after IPython's `leading_indent` cleanup, and the way back to the cell's text.

    IPython runs a cell whose first non-blank line is indented: it removes that line's
    leading whitespace from every line that starts with it (`inputtransformer2.leading_indent`).
    The analysis sees the cell that way; positions and fixes are mapped back to the cell's
    own text."""

    text: str  # the cell as IPython compiles it
    indent: str = ""  # the whitespace removed from the lines that start with it ("" when none)
    cell_starts: tuple = ()  # line start offsets in the cell's own text
    starts: tuple = ()  # line start offsets in `text`
    removed: tuple = ()  # per line: the number of characters removed at its start

    def to_cell(self, offset: int) -> int:
        """The offset in the cell's own text of `offset` in `text` (the start of a dedented
        line maps to its first character after the indentation)."""
        if not self.indent:
            return offset
        k = bisect.bisect_right(self.starts, offset) - 1
        return self.cell_starts[k] + self.removed[k] + offset - self.starts[k]

    def column(self, line: int, col: int) -> int:
        """The column in the cell's own text of column `col` of 1-based `line` of `text`."""
        return col + self.removed[line - 1] if self.indent and 0 < line <= len(self.removed) else col

    def inserted(self, new: str, cell_source: str, cell_end: int) -> str:
        """Text written for `text`, as it must read in the cell's own text, where it replaces
        what ends at `cell_end`: each line it starts gets the indentation back."""
        if not self.indent or not _LINE_END.search(new):
            return new
        out = _BREAK_BEFORE_TEXT.sub(lambda m: m.group() + self.indent, new)
        if new.endswith(("\n", "\r")) and cell_end < len(cell_source) and cell_source[cell_end] not in "\r\n":
            out += self.indent
        return out


def dedent(source: str) -> Dedent:
    """IPython's `leading_indent` on a cell (see `Dedent`)."""
    lines = _split_lines(source)
    first = next((k for k, (_s, content, _e) in enumerate(lines) if content.strip()), None)
    m = _INDENT.match(lines[first][1]) if first is not None else None
    if m is None:
        return Dedent(source)
    indent = m.group()
    pieces, starts, removed, pos = [], [], [], 0
    for k, (_start, content, ending) in enumerate(lines):
        cut = len(indent) if k >= first and content.startswith(indent) else 0
        starts.append(pos)
        removed.append(cut)
        pieces.append(content[cut:] + ending)
        pos += len(content) - cut + len(ending)
    return Dedent("".join(pieces), indent, tuple(s for s, _c, _e in lines), tuple(starts), tuple(removed))


# --------------------------------------------------------------------------- the program


@dataclass
class _Part:
    cell: Cell
    source: str  # the cell's own text
    dedent: Dedent
    start: int  # offset of the cell's text in the program
    line: int  # 1-based program line of the cell's first line
    text: str  # the Python view of the cell
    protected: list = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _syntax_error(text: str) -> tuple[Exception, int | None, int | None] | None:
    """(the parser's exception, 1-based line, 1-based column) of what keeps `text` from parsing,
    or None."""
    nul = text.find("\x00")
    if nul >= 0:  # the parser says so without a position
        line, col = LineIndex(text).position(nul)
        return SyntaxError("source code cannot contain null bytes"), line, col + 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        return exc, exc.lineno, exc.offset
    except (ValueError, RecursionError, MemoryError) as exc:
        return exc, None, None
    return None


def _cell_edits(d: Dedent, source: str, edits) -> list | None:
    """Edits (start, end, edit) of the cleaned cell `d.text` as (start, end, text, edit) in the
    cell's own text `source`; None when they do not map back exactly."""
    out = []
    for s, t, e in edits:
        cs, ct = d.to_cell(s), d.to_cell(t)
        out.append((cs, ct, d.inserted(e.text, source, ct), e))
    if d.indent:
        # Exactly what the fix does to the cleaned cell, or no fix.
        order = sorted(range(len(out)), key=lambda i: (out[i][0], out[i][1], out[i][3].seq))
        new_cell = splice(source, [out[i][:3] for i in order])
        expected = splice(d.text, [(edits[i][0], edits[i][1], edits[i][2].text) for i in order])
        if dedent(new_cell).text != expected:
            return None
    return out


def _touches(s: int, t: int, protected) -> bool:
    return any((s < pe and ps < t) or (s == t and ps < s < pe) for ps, pe in protected)


def cell_violation(source: str, v):
    """A violation found in `cell_view(source)`, placed in the cell's own text `source`: its
    columns and its fix's edits mapped back, the fix dropped when it would touch a magic's
    placeholder or does not map back exactly.  (For editors, which send one cell at a time.)"""
    d = dedent(source)
    _view, protected = python_view(d.text)
    fix = v.fix
    if fix is not None:
        if any(_touches(e.start, e.end, protected) for e in fix.edits):
            fix = None
        else:
            mapped = _cell_edits(d, source, [(e.start, e.end, e) for e in fix.edits])
            fix = None if mapped is None else fix.replace(edits=tuple(
                e.replace(start=s, end=t, text=text, expect=None) for s, t, text, e in mapped))
    return v.replace(col=d.column(v.line, v.col), end_col=d.column(v.end_line, v.end_col), fix=fix)


def cell_view(source: str) -> str:
    """The Python the analysis sees for one cell: IPython's cleanup, then magics replaced."""
    return python_view(dedent(source).text)[0]


class Program:
    """The code cells of a notebook (with sources possibly replaced) joined into one text.

    `skip`: cells left out (cell number -> why), those that do not parse."""

    def __init__(self, cells, sources: dict | None = None, skip=()) -> None:
        sources = sources or {}
        parts, chunks, offset, line = [], [], 0, 1
        for cell in cells:
            if cell.number in skip:
                continue
            source = sources.get(cell.number, cell.source)
            cleaned = dedent(source)
            text, protected = python_view(cleaned.text)
            parts.append(_Part(cell, source, cleaned, offset, line, text, protected))
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
        """(part, 1-based line, 0-based column) in the cell's own text of a program offset."""
        part = self.part_at(offset)
        line, col = self.lines.position(offset)
        line -= part.line - 1
        return part, line, part.dedent.column(line, col)

    def cell_edits(self, v) -> list | None:
        """The fix's edits as (part, start, end, text, edit) in the cell's own text, or None when
        it cannot apply there: edits in several cells, on a magic's placeholder, or in a cleaned
        (dedented) cell where the edit does not map back exactly."""
        if v.fix is None or not self.parts:
            return None
        local = []
        for e in v.fix.edits:
            part = self.part_at(e.start)
            if not (part.start <= e.start <= e.end <= part.end):
                return None
            s, t = e.start - part.start, e.end - part.start
            if _touches(s, t, part.protected):
                return None
            local.append((part, s, t, e))
        if len({id(p) for p, *_ in local}) > 1:
            return None
        part = local[0][0]
        mapped = _cell_edits(part.dedent, part.source, [(s, t, e) for _p, s, t, e in local])
        return None if mapped is None else [(part, *m) for m in mapped]

    def finding(self, v) -> Finding:
        """A program violation placed in its cell (its fix dropped if it cannot apply there)."""
        part, line, col = self.locate(self.lines.offset(v.line, 0) + v.col)
        end_offset = self.lines.starts[v.end_line - 1] + v.end_col
        _, end_line, end_col = self.locate(end_offset)
        if end_offset > part.end:  # cannot end in another cell, but never report a nonsense range
            end_line, end_col = line, col
        fix, ranges = v.fix, ()
        edits = self.cell_edits(v)
        if edits is None:
            fix = None
        else:
            cell_lines = LineIndex(part.source)
            ranges = tuple((*cell_lines.position(s), *cell_lines.position(t), text) for _p, s, t, text, _e in edits)
        return Finding(v.code, v.message, line, col, end_line, end_col, fix, part.cell.number, ranges)


# --------------------------------------------------------------------------- lint and fix


@dataclass
class NotebookResult:
    findings: list
    errors: list = field(default_factory=list)  # what could not be analysed or fixed, one model.Error each
    text: str | None = None  # the fixed file's JSON text, when something changed
    fixed: int = 0
    applied: list = field(default_factory=list)  # the violations whose fixes were applied

    @property
    def error(self) -> str | None:
        return "\n".join(self.errors) or None


def _cell_error(part: _Part, why) -> Error:
    exc, line, col = why
    if line is None:
        return parse_error(exc, f" (cell {part.cell.number})")
    if col is not None and 0 < line <= len(part.dedent.removed):
        col += part.dedent.removed[line - 1]
    return parse_error(exc, f" (cell {part.cell.number}, line {line}, column {col})")


def _analyse(cells, sources, lint, known: dict | None = None):
    """(program, lint result, {cell number: error}): the cells that do not parse are left out,
    each one error, and the rest is analysed as one program by `lint(text)`.  The result's own
    error, if any, is one the cells do not explain.  `known`: cells known not to parse (left out
    by an earlier pass of the fix loop, which fixes nothing in them): a text in which no rule may
    report is not parsed (engine), and would not tell."""
    skip: dict[int, Error] = dict(known or {})
    while True:
        program = Program(cells, sources, skip)
        result = lint(program.text)
        if not result.error:
            return program, result, skip
        bad = {}
        for part in program.parts:
            why = _syntax_error(part.text)
            if why is not None:
                bad[part.cell.number] = _cell_error(part, why)
        if not bad:
            # Every cell parses alone, but not after the others: blame the cell at the error.
            why = _syntax_error(program.text)
            if why is None or why[1] is None or why[1] > len(program.lines.starts):
                return program, result, skip
            part, line, _ = program.locate(program.lines.starts[why[1] - 1])
            bad[part.cell.number] = _cell_error(part, (why[0], line, why[2]))
        skip.update(bad)


class CellsTarget:
    """A notebook's code cells as the engine's fix loop (engine.fix_passes) sees them: one
    program (`Program`, built when the target is linted), where a fix can apply only inside one
    cell and off the magics' placeholders (its protected ranges), and is applied to each cell's
    own text, which is what gets written back."""

    def __init__(self, cells, sources: dict | None = None, skip: dict | None = None) -> None:
        self.cells = cells
        self.sources = sources if sources is not None else {c.number: c.source for c in cells}
        self.skip = skip or {}  # {number: Error} of the cells left out when this target was made
        self.program: Program | None = None
        self.bad: dict = {}  # {number: Error} of the cells left out of the program
        self._edits: dict = {}

    @property
    def errors(self) -> list:
        """The cells left out of the program, one Error each, in order."""
        return [self.bad[n] for n in sorted(self.bad)]

    @property
    def text(self) -> str:
        return self.program.text

    def lint(self, lint):
        self.program, result, self.bad = _analyse(self.cells, self.sources, lint, self.skip)
        self._edits = {}
        return result

    def cell_edits(self, v):
        """program.cell_edits(v), worked out once per pass (the loop asks, then applies)."""
        if id(v) not in self._edits:
            self._edits[id(v)] = self.program.cell_edits(v)
        return self._edits[id(v)]

    def can_fix(self, v) -> bool:
        return self.cell_edits(v) is not None

    def with_fixes(self, violations) -> CellsTarget:
        per_cell: dict[int, list] = {}
        for v in violations:
            for part, s, t, text, e in self.cell_edits(v):
                per_cell.setdefault(part.cell.number, []).append((s, t, text, v.code, e.seq))
        sources = dict(self.sources)
        for number, edits in per_cell.items():
            sources[number] = splice_fixes(self.sources[number], edits)
        return CellsTarget(self.cells, sources, self.bad)

    def parses(self) -> bool:
        return _syntax_error(Program(self.cells, self.sources, self.skip).text) is None

    def where(self, v) -> str:
        part, line, _ = self.program.locate(self.program.lines.starts[v.line - 1])
        return f"{v.code} at line {line} of cell {part.cell.number}"


def _linter(rules, options, honor_noqa: bool = True, project=None, path=None):
    def lint(text: str):
        return lint_text(text, rules, options, honor_noqa=honor_noqa, project=project, path=path)

    return lint


def lint(nb: Notebook, rules, options, honor_noqa: bool = True, project=None, path=None) -> NotebookResult:
    if not nb.python or not nb.code_cells:
        return NotebookResult([])
    target = CellsTarget(nb.code_cells)
    result = target.lint(_linter(rules, options, honor_noqa, project, path))
    errors = target.errors + ([result.error] if result.error else [])
    return NotebookResult(with_json_positions(nb, [target.program.finding(v) for v in result.violations]), errors)


def fix(nb: Notebook, rules, options, unsafe: bool = False, max_passes: int | None = None, project=None,
        path=None) -> NotebookResult:
    """Apply fixes cell by cell until none is left (engine.fix_passes); `text` is the new file, or
    None.  Cells that do not parse are reported and left alone; the others are fixed."""
    if not nb.python or not nb.code_cells:
        return NotebookResult([])
    cells = nb.code_cells
    target, applied, remaining, error = fix_passes(CellsTarget(cells), _linter(rules, options, project=project,
                                                                               path=path), unsafe, max_passes)
    findings = [target.program.finding(v) for v in remaining]
    if error:
        return NotebookResult(with_json_positions(nb, findings), target.errors + [error])
    changed = {c.number: target.sources[c.number] for c in cells if target.sources[c.number] != c.source}
    if not changed:
        return NotebookResult(with_json_positions(nb, findings), target.errors, fixed=len(applied), applied=applied)
    text = rewrite(nb, changed)
    return NotebookResult(with_json_positions(parse_text(text, nb.bom), findings), target.errors, text=text,
                          fixed=len(applied), applied=applied)


# --------------------------------------------------------------------------- positions in the JSON text


def _raw_offset(text: str, start: int, k: int) -> int:
    """The offset in `text` of character `k` of the JSON string literal that starts at `start`."""
    i = start + 1
    while k > 0:
        if text[i] != "\\":
            i += 1
        elif text[i + 1] != "u":
            i += 2
        else:
            high = int(text[i + 2 : i + 6], 16)
            i += 6
            low = int(text[i + 2 : i + 6], 16) if text.startswith("\\u", i) else 0
            if 0xD800 <= high < 0xDC00 and 0xDC00 <= low < 0xE000:
                i += 6  # a surrogate pair is one character
        k -= 1
    return i


def json_position(nb: Notebook, cell: Cell, offset: int) -> tuple[int, int]:
    """(1-based line, 0-based column) in the notebook's JSON text of character `offset` of a
    cell's source: where an editor opening the .ipynb file shows that character."""
    if nb.lines is None:
        nb.lines = LineIndex(nb.text)
    if cell.span is None:
        return 1, 0
    start, _end = cell.span
    text = nb.text
    if not cell.as_list:
        return nb.lines.position(_raw_offset(text, start, offset))
    seen, last = 0, None
    for s, e in _items(text, start):
        n = len(json.loads(text[s:e]))
        if offset < seen + n:
            return nb.lines.position(_raw_offset(text, s, offset - seen))
        seen += n
        last = (s, n)
    if last is None:
        return nb.lines.position(start)
    return nb.lines.position(_raw_offset(text, last[0], last[1]))  # the end of the last line


def with_json_positions(nb: Notebook, findings: list) -> list:
    """The findings with their range in the .ipynb file's own text (for SARIF and GitHub)."""
    by_number = {c.number: c for c in nb.cells}
    out = []
    for f in findings:
        cell = by_number.get(f.cell)
        if cell is None:
            out.append(f)
            continue
        lines = LineIndex(cell.source)
        start = lines.starts[min(f.line, len(lines.starts)) - 1] + f.col
        end = lines.starts[min(f.end_line, len(lines.starts)) - 1] + f.end_col
        out.append(f.replace(json_range=(*json_position(nb, cell, start), *json_position(nb, cell, end))))
    return out


# --------------------------------------------------------------------------- writing back


def _line_indent(text: str, offset: int) -> str:
    start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
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
    newline = _newline(text)
    if old_items and ("\n" in old or "\r" in old):  # one item a line, as nbformat and Jupyter write it
        item_indent, close_indent = _line_indent(text, old_items[0][0]), _line_indent(text, end - 1)
    elif not old_items and unit is not None:  # was `[]` in an indented file
        close_indent = _line_indent(text, start)
        item_indent = close_indent + unit
    else:
        sep = "," if re.search(r'",\S', old) else ", "
        return "[" + sep.join(items) + "]"
    return "[" + newline + ("," + newline).join(item_indent + it for it in items) + newline + close_indent + "]"


def _newline(text: str) -> str:
    """The file's own line ending (a notebook saved on Windows may use \\r\\n)."""
    m = re.search(r"\r\n|\r|\n", text)
    return m.group() if m else "\n"


def _indent_unit(text: str) -> str | None:
    m = re.search(r"\A\s*\{\r?\n([ \t]+)\"", text)
    return m.group(1) if m else None


def rewrite(nb: Notebook, changed: dict) -> str:
    """The file's text with the `source` of the cells in `changed` (number -> text) replaced."""
    ensure_ascii = nb.text.isascii() and re.search(r"\\u[0-9a-fA-F]{4}", nb.text) is not None
    by_number = {c.number: c for c in nb.cells}
    for number in changed:
        if by_number[number].span is None:
            raise NotebookError(f"cell {number}: cannot find its source in the file")
    new_text = splice(nb.text, ((*by_number[n].span, _render_source(nb, by_number[n], changed[n], ensure_ascii))
                                for n in sorted(changed, key=lambda n: by_number[n].span[0])))
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
