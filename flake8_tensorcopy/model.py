"""The data every layer shares: settings, findings, their fixes, and why a text could not be handled.

The bottom layer: it imports nothing of ours, so the analysis, the rules, the engine and every
front end can use it without depending on one another (tests/test_layers.py holds the layers).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Options:
    """Settings every front end passes to the engine."""

    strict: bool = False  # report values of unknown origin too
    numpy_fix: str = "detach"  # "detach": t.detach().cpu().numpy(); "force": t.numpy(force=True)
    generator_names: tuple = ()
    discriminator_names: tuple = ()


@dataclass(frozen=True)
class Edit:
    """Replace text[start:end] (character offsets) with `text`.

    `expect`, when set, is what text[start:end] must be for the edit to apply: a guard against
    positions that do not mean what the rule thought."""

    start: int
    end: int
    text: str
    expect: str | None = None
    seq: int = field(default_factory=lambda: next(_SEQ))


@dataclass(frozen=True)
class Fix:
    title: str
    safety: FixSafety  # given as a FixSafety or its value ("safe", "unsafe")
    edits: tuple

    def __post_init__(self) -> None:
        # A misspelt safety fails where the fix is made, not as a fix that never applies.
        object.__setattr__(self, "safety", FixSafety(self.safety))

    def applies(self, unsafe: bool) -> bool:
        """Whether the fix runs: a safe one always, an unsafe one when unsafe fixes are asked for."""
        return unsafe or self.safety is FixSafety.SAFE


@dataclass(frozen=True)
class Violation:
    code: str
    message: str
    line: int  # 1-based
    col: int  # 0-based, in characters
    end_line: int
    end_col: int
    fix: Fix | None = None
