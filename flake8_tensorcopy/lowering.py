"""Lowering: fix intents (intents.py) written out as exact text edits, once, for every rule.

Insertions and swaps are written as text.  The intents that restructure code (an expression
rebuilt from a template, statements wrapped in a `with` block) go through LibCST: the affected
code is parsed (only that code: the expression, or the statements' own lines), transformed, and
rendered by LibCST, which keeps comments, strings, line endings and the indentation of
continuation lines as they were.  The rendered text replaces exactly the affected span, so the
rest of the file stays byte for byte what it was, and conflict handling, notebooks and the
editor server see ordinary edits.  LibCST is imported only when such an intent is lowered: a
check that finds nothing fixable never imports it.

Fail closed: when LibCST cannot parse the code or does not render it back exactly, or the
rendered code, parsed again with `ast`, does not mean what the intent says (the same
statements inside the `with`, the template over the same sub-expressions), or a comment would
be lost, the fix is dropped and the finding is reported without one.

The codemod hands over the LibCST tree it was given (`Concrete`): structural fixes are then
made on that tree's nodes, found by the positions LibCST resolved for it once, and rendered by
the same code as here, so `tensorcopy fix` and the codemod write the same bytes.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
import warnings
from collections import Counter

from .fixes import needs_parens
from .intents import AppendCall, ReplaceExpression, SwapCalls, WrapStatements
from .model import Edit, Fix, Violation
from .source import LineIndex, indent_unit, indentation

__all__ = ["Concrete", "lower"]

_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_EMPTY_CALL = re.compile(r"(\w+)\s*\(\s*\)")
# Placeholders of a template, for `ast`: `{data}` -> `__tc_data__`.
_SLOT = "__tc_{}__"


def lower(violations, lines: LineIndex, tree=None, concrete=None) -> list:
    """`violations` with each fix's intent written out as edits of `lines.text`; a fix that
    cannot be written out exactly is dropped (the finding stays, without a fix).  `tree`: the
    text's `ast` tree (the file's indentation unit, for blocks at module level)."""
    writer = _Writer(lines, tree, concrete)
    # Findings with the same fix (two writes through one alias, a run of statements wrapped
    # once) share one lowered Fix, which apply_fixes applies once.
    lowered: dict = {}
    out = []
    for v in violations:
        fix = v.fix
        if fix is None or fix.intent is None or fix.edits:
            out.append(v)
            continue
        key = (fix.title, fix.safety, fix.intent)
        if key not in lowered:
            edits = writer.edits(fix.intent)
            lowered[key] = Fix(fix.title, fix.safety, edits, fix.intent) if edits else None
        out.append(Violation(v.code, v.message, v.line, v.col, v.end_line, v.end_col, lowered[key]))
    return out


class Concrete:
    """A LibCST tree of the text being fixed (the codemod's).  Its nodes are looked up by their
    positions in the text, resolved once, when a fix first needs one."""

    def __init__(self, module) -> None:
        self.module = module
        self._positions = self._parents = None
        self._spans = None  # (start, end) offsets -> the outermost expression node there
        self._lines = None  # line -> the statement that starts there

    def _index(self, lines: LineIndex) -> None:
        import libcst as cst
        from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

        # The codemod's tree is already its own copy (LibCST copies it for metadata): no other.
        resolved = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve_many(
            [PositionProvider, ParentNodeProvider])
        self._positions, self._parents = resolved[PositionProvider], resolved[ParentNodeProvider]
        self._spans = _spans(cst, self._positions, lines, 0)
        self._lines = {where.start.line: node for node, where in self._positions.items()
                       if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement))}

    def expression(self, lines: LineIndex, start: int, end: int):
        if self._spans is None:
            self._index(lines)
        return self._spans.get((start, end))

    def statements(self, lines: LineIndex, first: int, last: int):
        """The statements of one block on lines first..last, or None."""
        if self._lines is None:
            self._index(lines)
        node = self._lines.get(first)
        if node is None:
            return None
        body = list(self._parents[node].body)
        out = []
        for stmt in body[body.index(node):]:
            out.append(stmt)
            end = self._positions[stmt].end.line
            if end >= last:
                return out if end == last else None
        return None

    def block_indent(self, node) -> str:
        """The indentation of the block `node` is in (what LibCST prefixes continuation lines with)."""
        import libcst as cst

        parts = []
        while not isinstance(node, cst.Module):
            node = self._parents[node]
            if isinstance(node, cst.IndentedBlock):
                parts.append(self.module.default_indent if node.indent is None else node.indent)
        return "".join(reversed(parts))


class _Writer:
    def __init__(self, lines: LineIndex, tree, concrete) -> None:
        self.lines = lines
        self.text = lines.text
        self.tree = tree
        self.concrete = concrete

    def edits(self, intent) -> tuple | None:
        kind = type(intent)
        if kind is SwapCalls:
            return self.swap(intent)
        if kind is AppendCall:
            try:
                return self.append(intent)
            except _PARSE_ERRORS:
                return None
        if kind not in (ReplaceExpression, WrapStatements):
            raise TypeError(f"not a fix intent: {intent!r}")
        import libcst as cst

        try:
            return self.replace(cst, intent) if kind is ReplaceExpression else self.wrap(cst, intent)
        except (cst.ParserSyntaxError, cst.CSTValidationError, *_PARSE_ERRORS):
            return None

    # ------------------------------------------------------------------ text

    def swap(self, intent: SwapCalls) -> tuple:
        fs, fe, ss, se = intent
        first, second = self.text[fs:fe], self.text[ss:se]
        return Edit(fs, fe, _tidy(second), expect=first), Edit(ss, se, _tidy(first), expect=second)

    def append(self, intent: AppendCall) -> tuple | None:
        start, end, call = intent
        source = self.text[start:end]
        node = _expression(source)
        template = "{x}" + call
        if needs_parens(node, source):
            new, edits = f"({source}){call}", (Edit(start, start, "("), Edit(end, end, ")" + call))
        else:
            new, edits = source + call, (Edit(end, end, call),)
        return edits if _dump(_expression(new)) == _meaning(template, {"x": node}) else None

    # ------------------------------------------------------------------ LibCST

    def replace(self, cst, intent: ReplaceExpression) -> tuple | None:
        start, end, template, slots = intent
        source = self.text[start:end]
        # An expression that runs over lines without brackets of its own is inside the
        # brackets of the code around it: so is its replacement.
        bracketed = not _parses(source, "eval")
        snippet = "(" + source + "\n)" if bracketed else source
        old = _expression(source)
        in_brackets = LineIndex("(" + source + "\n)")
        by_span: dict = {}
        for n in ast.walk(old):  # outer nodes first: they keep a span they share
            if isinstance(n, ast.expr):
                s, e = in_brackets.node_span(n)
                by_span.setdefault((start + s - 1, start + e - 1), n)
        old_parts = {name: by_span.get((s, e)) for name, s, e in slots}
        if None in old_parts.values():
            return None
        if self.concrete is not None:
            node = self.concrete.expression(self.lines, start, end)
            if node is None:
                return None
            module = self.concrete.module
            parts = {name: self.concrete.expression(self.lines, s, e) for name, s, e in slots}
            indent = self.concrete.block_indent(node)
        else:
            module = cst.parse_module(snippet)
            if module.code != snippet or len(module.body) != 1:
                return None
            from libcst.metadata import MetadataWrapper, PositionProvider

            positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
            spans = _spans(cst, positions, LineIndex(snippet), start - (1 if bracketed else 0))
            parts = {name: spans.get((s, e)) for name, s, e in slots}
            indent = ""
        if None in parts.values():
            return None
        receivers = _receivers(template)
        for name, part in parts.items():
            part = _unparenthesized(cst, part)
            if name in receivers and not _atomic(cst, part):
                part = part.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            parts[name] = part
        new = _fill(cst, template, parts)
        rendered = _render_expression(cst, new, module, indent)
        if not bracketed and not _parses(rendered, "eval"):
            return None
        if _dump(_expression(rendered)) != _meaning(template, old_parts) or _comments(source) != _comments(rendered):
            return None
        return (Edit(start, end, rendered, expect=source),)

    def wrap(self, cst, intent: WrapStatements) -> tuple | None:
        first, last, context, owner_line = intent
        lines, text = self.lines, self.text
        line = lines.line(first)
        lead = line[: len(line) - len(line.lstrip(" \t\f"))]
        # The first line's indentation stays as it is: the edit starts at the statement.
        start = lines.starts[first - 1] + len(lead)
        end = lines.starts[last - 1] + len(lines.line(last))
        source = text[start:end]
        newline = self._newline(first)
        # Indented statements are parsed (and rendered) as the body of an `if`, at their own
        # indentation: what LibCST keeps of continuation lines and comments is relative to it.
        # At module level the indentation can only be form feeds, which reset the column.
        indent = lead if owner_line else ""
        header = "if 1:" + newline + indent if indent else ""
        if self.concrete is not None:
            statements = self.concrete.statements(lines, first, last)
            if statements is None:
                return None
            module = self.concrete.module
        else:
            module = cst.parse_module(header + source)
            if module.code != header + source:
                return None
            statements = list(module.body[0].body.body if indent else module.body)
        # Blank lines and comments above the first statement are not part of the span.
        statements[0] = statements[0].with_changes(leading_lines=[])
        block = cst.With(
            items=[cst.WithItem(cst.parse_expression(context))],
            body=cst.IndentedBlock(body=statements, indent=self._unit(lead, owner_line),
                                   header=cst.TrailingWhitespace(newline=cst.Newline(newline))),
        )
        # The new lines are indented like the first one, less its form feeds (a form feed resets
        # the column: kept where it was, on the first line, it is not repeated on every line).
        body_indent = indent.replace("\f", "")
        rendered = _render_block(cst, [block], body_indent, module)[len(body_indent):]
        before = _statements(header + source, indent)
        after = _statements(header + rendered, indent)
        if not (len(after) == 1 and isinstance(after[0], ast.With) and len(after[0].items) == 1):
            return None
        item = after[0].items[0]
        same = _dump(after[0].body) == _dump(before) and _dump(item.context_expr) == _dump(_expression(context))
        if item.optional_vars is not None or not same:
            return None
        return (Edit(start, end, rendered, expect=source),)

    def _newline(self, lineno: int) -> str:
        """The line ending of line `lineno`, else the file's first, else \\n."""
        lines = self.lines
        if lineno < len(lines.starts):
            return self.text[lines.starts[lineno - 1] + len(lines.line(lineno)) : lines.starts[lineno]]
        m = _NEWLINE.search(self.text)
        return m.group() if m else "\n"

    def _unit(self, indent: str, owner_line: int) -> str:
        """What a new block inside a block indented by `indent` is indented by: a tab in a
        tab-indented block, else the block's own step from its owner's line, else the file's
        first, else four spaces.  A form feed resets the column and adds none: never part of it."""
        if "\t" in indent:
            return "\t"
        if owner_line:
            outer = indentation(self.lines.line(owner_line))
            if indent.startswith(outer) and len(indent) > len(outer):
                return indent[len(outer):].replace("\f", "") or "    "
        unit = indent_unit(self.tree, self.lines) if self.tree is not None else None
        if unit and not unit.strip() and ("\t" not in unit or not indent):
            return unit.replace("\f", "") or "    "
        return "    "


# --------------------------------------------------------------------------- ast checks


def _parses(text: str, mode: str) -> bool:
    try:
        _parse(text, mode)
        return True
    except _PARSE_ERRORS:
        return False


def _parse(text: str, mode: str = "exec"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, mode=mode)


def _expression(source: str) -> ast.expr:
    """`source` parsed as an expression inside brackets (where it may run over lines).  The
    closing bracket goes on a line of its own, after any comment."""
    return _parse("(" + source + "\n)", "eval").body


def _statements(text: str, indent: str) -> list:
    body = _parse(text).body
    return body[0].body if indent and len(body) == 1 and isinstance(body[0], ast.If) else body


def _dump(node) -> str:
    if isinstance(node, list):
        return "\n".join(ast.dump(n) for n in node)
    return ast.dump(node)


def _meaning(template: str, parts: dict) -> str:
    """The `ast` dump of `template` with each `{name}` standing for the tree `parts[name]`."""
    tree = _expression(template.format(**{name: _SLOT.format(name) for name in parts}))
    slots = {_SLOT.format(name): part for name, part in parts.items()}

    class Fill(ast.NodeTransformer):
        def visit_Name(self, node):
            return slots.get(node.id, node)

    return _dump(Fill().visit(tree))


def _mangled(template: str) -> str:
    """`template` as Python: `{name}` -> `__tc_name__`."""
    return re.sub(r"\{(\w+)\}", lambda m: _SLOT.format(m.group(1)), template)


@functools.lru_cache(maxsize=64)
def _receivers(template: str) -> frozenset:
    """The slots that `template` calls, subscripts or takes an attribute of: they need
    parentheses unless they are atoms (`(a + b).detach()`)."""
    tree = _parse(_mangled(template), "eval")
    out = set()
    for node in ast.walk(tree):
        inner = node.func if isinstance(node, ast.Call) else getattr(node, "value", None) if isinstance(
            node, (ast.Attribute, ast.Subscript)) else None
        if isinstance(inner, ast.Name) and inner.id.startswith("__tc_"):
            out.add(inner.id[5:-2])
    return frozenset(out)


# --------------------------------------------------------------------------- LibCST helpers


def _spans(cst, positions, lines: LineIndex, offset: int) -> dict:
    """(start, end) offsets (plus `offset`) -> the outermost expression node with that span, from
    LibCST's positions of a tree of `lines`."""
    out = {}
    for node, where in positions.items():  # inner nodes come first: outer ones overwrite
        if isinstance(node, cst.BaseExpression):
            s = lines.starts[where.start.line - 1] + where.start.column
            e = lines.starts[where.end.line - 1] + where.end.column
            out[offset + s, offset + e] = node
    return out


def _tidy(call: str) -> str:
    """A call moved elsewhere keeps its arguments as written; an empty argument list, whatever
    space or line breaks it held, is written `()`."""
    m = _EMPTY_CALL.fullmatch(call)
    return m.group(1) + "()" if m else call


def _unparenthesized(cst, node):
    """`node` without parentheses of its own that it does not need: an atom's, holding nothing
    but spaces around it, where the atom's own lines hold together without them
    (`torch.tensor((x))` -> `x.detach().clone()`)."""
    bare = node.with_changes(lpar=[], rpar=[])
    if not node.lpar or not _atomic(cst, bare):
        return node
    spaces = [p.whitespace_after for p in node.lpar] + [p.whitespace_before for p in node.rpar]
    if all(isinstance(w, cst.SimpleWhitespace) and "\\" not in w.value for w in spaces) and _parses(
            cst.Module([]).code_for_node(bare), "eval"):
        return bare
    return node


def _atomic(cst, node) -> bool:
    """Takes `.method()` as it is: parenthesised already, or an atom."""
    return bool(node.lpar) or isinstance(node, (
        cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, cst.ListComp,
        cst.DictComp, cst.SetComp, cst.FormattedString, cst.SimpleString))


def _comments(source: str) -> Counter:
    """The comments in the code of an expression."""
    tokens = tokenize.generate_tokens(io.StringIO("(" + source + "\n)").readline)
    return Counter(t.string for t in tokens if t.type == tokenize.COMMENT)


@functools.lru_cache(maxsize=64)
def _template(template: str):
    """`template` parsed by LibCST, with a name `__tc_name__` for each `{name}` (rules use a
    few templates, over and over)."""
    import libcst as cst

    return cst.parse_expression(_mangled(template))


def _fill(cst, template: str, parts: dict):
    """The expression `template` with each `{name}` replaced by the node `parts[name]`."""
    slots = {_SLOT.format(name): part for name, part in parts.items()}

    class Fill(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return slots.get(original.value, updated)

    return _template(template).visit(Fill())


def _render_block(cst, statements: list, indent: str, module) -> str:
    """The code of `statements` in a block indented by `indent`, in `module`'s style: the first
    line's indentation included, the last line's ending not."""
    body = [cst.If(test=cst.Integer("1"), body=cst.IndentedBlock(body=statements, indent=indent))] if indent else (
        statements)
    code = module.with_changes(header=[], body=body, footer=[], has_trailing_newline=False).code
    if not indent:
        return code
    head = "if 1:" + module.default_newline
    if not code.startswith(head):
        raise ValueError("unexpected rendering")
    return code[len(head):]


def _render_expression(cst, node, module, indent: str) -> str:
    """The code of expression `node` where its lines continue at block indentation `indent`."""
    if not indent:
        return module.code_for_node(node)
    return _render_block(cst, [cst.SimpleStatementLine([cst.Expr(node)])], indent, module)[len(indent):]
