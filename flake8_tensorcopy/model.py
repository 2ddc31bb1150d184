"""The data every layer shares: settings, findings, their fixes, and why a text could not be handled.

The bottom layer: it imports nothing of ours, so the analysis, the rules, the engine and every
front end can use it without depending on one another (tests/test_layers.py holds the layers).
"""

from __future__ import annotations

import itertools
from enum import Enum

_SEQ = itertools.count()
# "File not analysed" (nested too deeply for the analysis, or a plugin crash under flake8): not a
# rule, but selected, ignored and silenced like one.
INTERNAL = "TNS000"


class FixSafety(str, Enum):
    """Whether a fix is applied by default (safe) or only with `--unsafe-fixes` (unsafe).

    A str whose value is what the JSON, SARIF and cache formats hold, and what it prints as:
    `fix.safety == "safe"` holds for the member and the string alike."""

    SAFE = "safe"
    UNSAFE = "unsafe"

    __str__ = str.__str__


class ErrorKind(Enum):
    """What kept a text from being analysed or fixed.  Front ends decide what to say and do by
    the kind, never by reading the message."""

    SYNTAX = "syntax"  # the parser refused the text
    TOO_DEEP = "too deep"  # nested beyond what the parser can take (RecursionError, MemoryError)
    BROKEN_FIX = "broken fix"  # a fix produced code that does not parse: a bug in a rule
    READ = "read"  # the file cannot be read, or is not text (or not a notebook)
    DECODE = "decode"  # its bytes are not text in its encoding
    ENCODE = "encode"  # the fixed text cannot be written back in the file's encoding
    WRITE = "write"  # the fixed file cannot be written
    INTERNAL = "internal"  # a bug of ours (a rule raised)


class Error(str):
    """The message of an error (what is shown; existing callers keep treating it as text),
    with its `kind`."""

    def __new__(cls, kind: ErrorKind, message: str) -> Error:
        self = super().__new__(cls, message)
        self.kind = kind
        return self

    def __reduce__(self):
        return Error, (self.kind, str(self))


# A field of a Record without a default.
REQUIRED = object()


class Record:
    """An immutable record with positional or keyword fields and defaults, equality, a hash, a
    repr and `replace`: what `@dataclass(frozen=True)` gives, without generating and compiling
    its methods for each class when the module is imported (about half a millisecond a class,
    on every start: the CLI, the plugin and the editor server import these records first)."""

    __slots__ = ()
    _FIELDS: tuple = ()  # ((name, default or REQUIRED), ...); subclasses list them in __slots__

    def __init__(self, *args, **kwargs) -> None:
        fields = self._FIELDS
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} positional arguments")
        for (name, _default), value in zip(fields, args):
            object.__setattr__(self, name, value)
        for name, default in fields[len(args):]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif default is REQUIRED:
                raise TypeError(f"{type(self).__name__}: missing argument {name!r}")
            else:
                value = default
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected or repeated argument {next(iter(kwargs))!r}")

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n, _ in self._FIELDS)

    def replace(self, **changes):
        """A copy with `changes` (what dataclasses.replace does)."""
        return type(self)(**{**{n: getattr(self, n) for n, _ in self._FIELDS}, **changes})

    def __eq__(self, other):
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self):
        return hash(self._values())

    def __reduce__(self):  # for the CLI's worker processes
        return type(self), self._values()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n, _ in self._FIELDS)})"


class Options(Record):
    """Settings every front end passes to the engine."""

    _FIELDS = (
        ("strict", False),  # report values of unknown origin too
        ("numpy_fix", "detach"),  # "detach": t.detach().cpu().numpy(); "force": t.numpy(force=True)
        ("generator_names", ()),
        ("discriminator_names", ()),
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


class Edit(Record):
    """Replace text[start:end] (character offsets) with `text`.

    `expect`, when set, is what text[start:end] must be for the edit to apply: a guard against
    positions that do not mean what the rule thought.  `seq`: the order the edits were made in
    (insertions at one point are applied in that order)."""

    _FIELDS = (("start", REQUIRED), ("end", REQUIRED), ("text", REQUIRED), ("expect", None), ("seq", None))
    __slots__ = tuple(n for n, _ in _FIELDS)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.seq is None:
            object.__setattr__(self, "seq", next(_SEQ))


class Fix(Record):
    # safety: a FixSafety or its value.  intent: what the fix does (intents.py), when a rule says
    # that rather than give `edits`: the engine writes it out as edits (lowering.py) before
    # anyone sees the fix.
    _FIELDS = (("title", REQUIRED), ("safety", REQUIRED), ("edits", REQUIRED), ("intent", None))
    __slots__ = tuple(n for n, _ in _FIELDS)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A misspelt safety fails where the fix is made, not as a fix that never applies.
        object.__setattr__(self, "safety", FixSafety(self.safety))

    def applies(self, unsafe: bool) -> bool:
        """Whether the fix runs: a safe one always, an unsafe one when unsafe fixes are asked for."""
        return unsafe or self.safety is FixSafety.SAFE


class Violation(Record):
    _FIELDS = (
        ("code", REQUIRED),
        ("message", REQUIRED),
        ("line", REQUIRED),  # 1-based
        ("col", REQUIRED),  # 0-based, in characters
        ("end_line", REQUIRED),
        ("end_col", REQUIRED),
        ("fix", None),  # a Fix, or None
    )
    __slots__ = tuple(n for n, _ in _FIELDS)
