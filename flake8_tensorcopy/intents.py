"""Fix intents: what a rule's fix does, as data.  lowering.py turns them into exact text edits.

A rule says what its fix changes (append a call, swap two calls, replace an expression with a
template, wrap statements in a context manager) and where, in character offsets into the text
it analysed (lines for whole statements).  How that is written out (the parentheses an
expression needs to take a method call, the indentation of a new block, the comments and line
endings to keep) is the lowering's business, done once for every rule: plain text for
insertions and swaps, LibCST for the intents that restructure code.  A fix whose intent cannot
be written out exactly is not offered.

Plain tuples: the engine imports this module on every run, and it imports nothing.
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["AppendCall", "ReplaceExpression", "SwapCalls", "WrapStatements"]


class AppendCall(namedtuple("AppendCall", "start end call")):
    """Call a method on the expression `text[start:end]`: `call` (`.clone()`) is written after
    it, and the expression is parenthesised first when it could not take the call as it is
    (`(a + b).detach()`)."""

    __slots__ = ()


class SwapCalls(namedtuple("SwapCalls", "first_start first_end second_start second_end")):
    """Exchange two method calls of one chain, each the text from the method's name to its
    closing parenthesis: `x.clone(m).detach()` -> `x.detach().clone(m)`."""

    __slots__ = ()


class ReplaceExpression(namedtuple("ReplaceExpression", "start end template slots")):
    """Replace the expression `text[start:end]` with `template`, an expression (a call, an
    attribute, a subscript or a name) in which `{name}` stands for a sub-expression of the
    original: `slots` is ((name, start, end), ...).  Each sub-expression keeps its own text,
    comments and parentheses, and gains parentheses where the template needs them
    (`{data}.detach()` with `x * 2`).  Not offered when a comment of the original would be lost."""

    __slots__ = ()


class WrapStatements(namedtuple("WrapStatements", "first_line last_line context owner_line")):
    """Wrap the statements on lines `first_line`..`last_line` (1-based, whole lines: consecutive
    statements of one block, each on lines of its own) in `with {context}:`.  `owner_line`: the
    line of the statement or clause whose block they are (the block's indentation less that
    line's is the unit to indent by), 0 at module level."""

    __slots__ = ()
