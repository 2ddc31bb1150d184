"""Helpers rules use to build text edits from ast nodes."""

from __future__ import annotations

import ast

from .model import Edit

# Expressions that can take `.method()` without parentheses.
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Dict, ast.Set, ast.ListComp,
          ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.JoinedStr)


def needs_parens(node: ast.AST, text: str) -> bool:
    if isinstance(node, _ATOMS):
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return False
    if isinstance(node, ast.Tuple) and text.startswith("(") and text.endswith(")"):
        return False
    return True


def receiver_text(ctx, node: ast.AST) -> str:
    """Source of `node`, parenthesised when a method call on it would need it."""
    text = ctx.text(node)
    return f"({text})" if needs_parens(node, text) else text


def has_comment(text: str) -> bool:
    """Whether replacing `text` wholesale could drop a comment (conservative)."""
    return "#" in text


def insert_after(ctx, node: ast.AST, text: str) -> Edit:
    _, end = ctx.span(node)
    return Edit(end, end, text)


def replace_node(ctx, node: ast.AST, text: str) -> Edit:
    start, end = ctx.span(node)
    return Edit(start, end, text, expect=ctx.lines.text[start:end])


def attr_name_span(ctx, node: ast.Attribute) -> tuple[int, int]:
    """Offsets of the attribute name in `value.attr` (the node ends with the name)."""
    _, end = ctx.span(node)
    return end - len(node.attr), end
