"""Fix intents: what a rule's fix does, as data.  lowering.py turns them into exact text edits.

A rule says what its fix changes (append a call, swap two calls, replace an expression with a
template, wrap statements in a context manager) and where, in character offsets into the text
it analysed (lines for whole statements).  How that is written out (the parentheses an
expression needs to take a method call, the indentation of a new block, the comments and line
endings to keep) is the lowering's business, done once for every rule: plain text for
insertions and swaps, LibCST for the intents that restructure code.  A fix whose intent cannot
be written out exactly is not offered.

Plain tuples with named fields, written out rather than made by `collections.namedtuple`: the
engine imports this module on every run (the flake8 plugin too), and each namedtuple costs a
compile of generated code (about 60 microseconds).
"""

from __future__ import annotations

from operator import itemgetter

__all__ = ["AppendCall", "ReplaceExpression", "SwapCalls", "WrapStatements"]


class _Intent(tuple):
    """A tuple of `_fields`, built from positional values; it pickles (the CLI's worker processes
    send findings back) and prints like a namedtuple."""

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, *values):
        if len(values) != len(cls._fields):
            fields = ", ".join(cls._fields)
            raise TypeError(f"{cls.__name__} takes {len(cls._fields)} values ({fields}), not {len(values)}")
        return tuple.__new__(cls, values)

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self))})"


def _getters(count: int) -> tuple:
    return tuple(property(itemgetter(i)) for i in range(count))


class AppendCall(_Intent):
    """Call a method on the expression `text[start:end]`: `call` (`.clone()`) is written after
    it, and the expression is parenthesised first when it could not take the call as it is
    (`(a + b).detach()`)."""

    __slots__ = ()
    _fields = ("start", "end", "call")
    start, end, call = _getters(3)


class SwapCalls(_Intent):
    """Exchange two method calls of one chain, each the text from the method's name to its
    closing parenthesis: `x.clone(m).detach()` -> `x.detach().clone(m)`."""

    __slots__ = ()
    _fields = ("first_start", "first_end", "second_start", "second_end")
    first_start, first_end, second_start, second_end = _getters(4)


class ReplaceExpression(_Intent):
    """Replace the expression `text[start:end]` with `template`, an expression (a call, an
    attribute, a subscript or a name) in which `{name}` stands for a sub-expression of the
    original: `slots` is ((name, start, end), ...).  Each sub-expression keeps its own text,
    comments and parentheses, and gains parentheses where the template needs them
    (`{data}.detach()` with `x * 2`).  Not offered when a comment of the original would be lost."""

    __slots__ = ()
    _fields = ("start", "end", "template", "slots")
    start, end, template, slots = _getters(4)


class WrapStatements(_Intent):
    """Wrap the statements on lines `first_line`..`last_line` (1-based, whole lines: consecutive
    statements of one block, each on lines of its own) in `with {context}:`.  `owner_line`: the
    line of the statement or clause whose block they are (the block's indentation less that
    line's is the unit to indent by), 0 at module level."""

    __slots__ = ()
    _fields = ("first_line", "last_line", "context", "owner_line")
    first_line, last_line, context, owner_line = _getters(4)
