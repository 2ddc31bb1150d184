"""Source text: decoding bytes the way Python does, and mapping ast positions to text offsets.

The engine analyses `ast` trees (positions in UTF-8 bytes per line) and edits the decoded
text (positions in characters).  This module is the one place that converts between them,
and the one place that turns edited text back into the file's own bytes (encoding, BOM and
line endings are whatever the file had: we never normalise them).
"""

from __future__ import annotations

import ast
import codecs
import os
import re
import sys
from itertools import accumulate

from .model import REQUIRED, Record

# Python's tokenizer ends a line at \r\n, \r or \n, and at nothing else (str.splitlines also
# splits at \x0c, \x1c, \u2028 ..., which would shift every line number after them).
_NEWLINE = re.compile(r"\r\n|\r|\n")

# A possessive quantifier where Python has it (3.11), else the plain one.
POSSESSIVE = "+" if sys.version_info >= (3, 11) else ""
# What comes before the first ASCII letter or `_` of a run of word characters and dots (digits,
# dots, other letters), taken whole: a pattern that starts a name there, tried once a run from
# its start (`(?<![\w.])`), matches what it matched tried at every position, in one read of the
# run where a try at each character read to the run's end again.
BEFORE_FIRST_LETTER = r"(?:[^\WA-Za-z_]|\.)*" + POSSESSIVE


class LazyPattern:
    """`re.compile(pattern, flags)` on first use.  Every start imports the analysis and the rules,
    and most of their patterns are text pre-checks behind a substring test that a file rarely
    passes: compiling all 28 up front cost about 1.4 ms of each flake8 run (benchmarks/startup.py).
    """

    def __init__(self, *args) -> None:
        self._args = args
        self._compiled = None

    def _get(self):
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(*self._args)
        return compiled

    def __getattr__(self, name):  # search, match, finditer, pattern, ...: the compiled pattern's
        if name.startswith("_"):  # not set yet (a copy being made): not the pattern's
            raise AttributeError(name)
        # Kept on the instance: the next `.findall` is found there, without this call (some
        # patterns are used once a name, in hot loops).
        value = self.__dict__[name] = getattr(self._get(), name)
        return value


class OnLinesWith:
    """A pattern searched only in the lines of a text (bytes or str) that hold one of `literals`
    (for a pattern whose lines are rare in the text: `.state_dict(` in a module, and only then
    its line).  The first of each literal by `literal_search` (most modules hold none of them:
    over transformers' modules, the imported needles took 0.150 s by `find` and 0.121 s so)."""

    def __init__(self, literals: tuple, pattern: LazyPattern) -> None:
        self.literals = literals
        self.pattern = pattern

    def search(self, text):
        newline = b"\n" if isinstance(text, bytes) else "\n"
        seen = set()
        for literal in self.literals:
            i = find_literal(text, literal)
            while i != -1:
                start = text.rfind(newline, 0, i) + 1
                if start not in seen:
                    seen.add(start)
                    end = text.find(newline, i)
                    found = self.pattern.search(text[start:end if end != -1 else len(text)])
                    if found is not None:
                        return found
                i = text.find(literal, i + len(literal))
        return None


_MARGIN = LazyPattern(r"\n[^ \t\n\r#]")


def _line_starts(text: str, opening: str) -> list:
    """The offsets of the lines of `text` that start with `opening`, in order."""
    starts = [0] if text.startswith(opening) else []
    i = text.find("\n" + opening)
    while i != -1:
        starts.append(i + 1)
        i = text.find("\n" + opening, i + 1)
    return starts


def identifier_end(text: str, i: int) -> int:
    """Where the identifier (letters, digits, `_`) that starts at offset `i` of `text` ends."""
    n = len(text)
    while i < n and (text[i].isalnum() or text[i] == "_"):
        i += 1
    return i


def closing_bracket(text: str, at: int, stop: int | None = None) -> int:
    """The offset of the bracket that closes the one at offset `at` of `text`, or -1: none before
    `stop`, or a string, a comment or a backslash first (whose brackets cannot be counted by eye)."""
    depth = 0
    for i in range(at, len(text) if stop is None else min(stop, len(text))):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if not depth:
                return i
        elif c in "'\"#\\":
            return -1
    return -1


def top_level_functions(text: str):
    """(name, text) of each function of a module's text that starts at the margin (`def`, `async
    def`): to the next line that starts with something else than a blank (a docstring line at the
    margin ends it early: a function's text cut short, never one too long)."""
    margin = _MARGIN.search
    for start in sorted(_line_starts(text, "def ") + _line_starts(text, "async def ")):
        after = margin(text, start)  # the next line that starts at the margin
        segment = text[start:after.start() + 1 if after is not None else len(text)]
        at = segment.index("def ") + 4
        yield segment[at:identifier_end(segment, at)], segment


_HEADER_PARAMS = LazyPattern(r"def\s+\w+\s*\(([^)]*)\)")


def header_parameters(segment: str) -> set | None:
    """The names of the parameters of the first `def` of a function's text `segment`, read from
    its header (one without a closing parenthesis of a default or an annotation), or None
    where it has none."""
    header = _HEADER_PARAMS.search(segment)
    if header is None:
        return None
    names = {part.strip().lstrip("*").split(":")[0].split("=")[0].strip() for part in header.group(1).split(",")}
    names.discard("")
    return names


def top_level_function(text: str, name: str) -> str | None:
    """The text of function `name` at the margin of a module's text, as `top_level_functions`
    gives it (found by its `def` line, not by listing them all), or None."""
    for head in ("def ", "async def "):
        needle = head + name + "("
        start = 0 if text.startswith(needle) else text.find("\n" + needle) + 1
        if start or text.startswith(needle):
            after = _MARGIN.search(text, start)
            return text[start:after.start() + 1 if after is not None else len(text)]
    return None


CLASS_HEADER = LazyPattern(r"class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?")


def class_lines(text: str) -> list:
    """The offsets of the lines of `text` that start with `class ` (for `class_methods`, asked
    of one module's classes one after another)."""
    return _line_starts(text, "class ")


def with_inherited(text: str, by_class: dict) -> dict:
    """`by_class` ({class: method names} of a module's text) with what each class at the margin
    inherits from the classes of the same text that it names as bases (`class LossMeter(Meter):
    pass`): the names of its bases', and theirs."""
    if not by_class or "class " not in text:
        return by_class
    bases = {}
    for at in class_lines(text):
        header = CLASS_HEADER.match(text, at)
        if header is not None and header.group(2):
            bases[header.group(1)] = [b.strip() for b in header.group(2).split(",") if b.strip().isidentifier()]
    out = dict(by_class)
    changed = True
    while changed:  # (a chain of bases: to the fixpoint)
        changed = False
        for cls, names in bases.items():
            inherited = frozenset().union(*(out.get(b, frozenset()) for b in names if b != cls))
            if inherited and not inherited <= out.get(cls, frozenset()):
                out[cls] = out.get(cls, frozenset()) | inherited
                changed = True
    return out


def class_methods(text: str, name: str | None = None, lines: list | None = None):
    """(class name, the names its bases are written with, method name, the method's text) of
    each method of the classes of a module's text that start at the margin (`class`), or only of
    class `name`: a method's text runs to the next `def` at its indentation or to the end of its
    class (a statement of the class body after it included: a method's text too long, never cut
    short).  `lines`: `class_lines(text)`, where the text is asked of class after class."""
    margin = _MARGIN.search
    header_at = CLASS_HEADER.match
    opening = "class " + (name or "")
    starts = _line_starts(text, opening) if lines is None else [at for at in lines if text.startswith(opening, at)]
    for start in starts:
        header = header_at(text, start)
        if header is None or name is not None and header.group(1) != name:
            continue
        bases = tuple(b.strip() for b in (header.group(2) or "").split(",") if b.strip())
        after = margin(text, start)
        segment = text[start:after.start() + 1 if after is not None else len(text)]
        defs = []  # (start of its line, indentation, name)
        j = segment.find("def ")
        while j != -1:
            line = segment.rfind("\n", 0, j) + 1
            indent = segment[line:j]
            if indent.endswith("async "):
                indent = indent[:-6]
            if indent and not indent.strip(" \t"):
                defs.append((line, indent, segment[j + 4:identifier_end(segment, j + 4)]))
            j = segment.find("def ", j + 4)
        if not defs:
            continue
        first = defs[0][1]
        defs = [d for d in defs if d[1] == first]
        for n, (line, _indent, method) in enumerate(defs):
            yield header.group(1), bases, method, segment[line:defs[n + 1][0] if n + 1 < len(defs) else len(segment)]


def or_holds(test, needles):
    """The text test `test`, or: the text holds one of `needles` (a function's, for a scope test
    widened by the names it calls)."""
    return lambda segment: test(segment) or any(n in segment for n in needles)


def kept_for_the_last_text(compute):
    """`compute(text, *rest)`, kept for the last file it was asked of (the same `text` object and
    the same `rest`): the rules' pre-filter, their scope tests and the domains ask the same
    file's text the same question one after another.  One pair, read and written whole (what
    another thread does cannot mix two files)."""
    last = [(None, None, None)]

    def kept(text: str, *rest):
        seen_text, seen_rest, value = last[0]
        if seen_text is text and seen_rest == rest:
            return value
        value = compute(text, *rest)
        last[0] = (text, rest, value)
        return value

    kept.__doc__ = compute.__doc__
    return kept


def word_count(text: str, word: str) -> int:
    """How often identifier `word` stands in `text` as a whole word (what `\\bword\\b` finds:
    no word character, as `str.isalnum` or `_`, on either side)."""
    return len(word_positions(text, word))


_LITERALS: dict = {}


def literal_search(needle):
    """The `search` of a pattern that is `needle` (str or bytes) itself, compiled on first use
    (about 20 µs; at most 4,096 kept): it finds the needle where `text.find(needle)` does.  Over
    the files of transformers' `models/` on CPython 3.11 it takes 0.33-0.96 of `str.find`'s time
    for the pre-filters' needles, `+=` and `while`, but 1.2 times it for `inplace=True`,
    `register_parameter` and `torch` (each measured: a needle found near the start costs the
    pattern's call, and some long ones `str.find` skips through faster), so each use is
    measured before it is made.  Callgrind counts more instructions for it all the same
    (benchmarks/README.md).  For needles the program spells, not ones a file gives (each new
    one costs a compilation)."""
    found = _LITERALS.get(needle)
    if found is None:
        if len(_LITERALS) >= 4096:
            _LITERALS.clear()
        found = _LITERALS[needle] = re.compile(re.escape(needle)).search
    return found


def find_literal(text, needle, start: int = 0) -> int:
    """`text.find(needle, start)`, by `literal_search`; a single character by `find` itself
    (`+` is most often near the start, where the pattern's call costs more than the search)."""
    if len(needle) == 1:
        return text.find(needle, start)
    m = literal_search(needle)(text, start)
    return m.start() if m is not None else -1


def has_literal(text, needle) -> bool:
    """`needle in text`, as `find_literal` finds it."""
    if len(needle) == 1:
        return needle in text
    return literal_search(needle)(text) is not None


def word_positions(text: str, word: str, first: bool = False) -> list:
    """Offsets where identifier `word` stands in `text` as a whole word (`first`: only the first
    one).  A search for the word and a look at its neighbours (a pattern that starts with `\\b`
    is tried at every position of the text: 4 ms a name in a 4,800-line file)."""
    found, size, end = [], len(word), len(text)
    # (`first` is asked with words the program spells, `for` and `while`: found by a pattern, as
    # the first of them is often far or absent.)
    i = find_literal(text, word) if first else text.find(word)
    while i != -1:
        before = text[i - 1] if i else " "
        j = i + size
        after = text[j] if j < end else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            found.append(i)
            if first:
                break
        i = text.find(word, i + 1)
    return found


class DecodeError(Exception):
    """The bytes are not text in the encoding the file declares."""


class Decoded(Record):
    _FIELDS = (("text", REQUIRED), ("encoding", REQUIRED), ("bom", REQUIRED))
    __slots__ = tuple(n for n, _ in _FIELDS)


def decode(data: bytes) -> Decoded:
    """Decode a Python file's bytes as the interpreter would (PEP 263 cookie, UTF-8 BOM)."""
    if not data.startswith(codecs.BOM_UTF8) and not any(b"coding" in line for line in _two_lines(data)):
        # No BOM and no cookie (one spells `coding` in the first two lines): UTF-8, which is
        # what the tokenizer would say of bytes that decode as UTF-8 (tokenize is not imported
        # for it).  Bytes that do not: the tokenizer's answer, whose error message may differ.
        try:
            return Decoded(data.decode("utf-8"), "utf-8", False)
        except UnicodeDecodeError:
            pass
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(_first_lines(data))
    except SyntaxError as exc:  # unknown codec in the cookie, or BOM + non-utf-8 cookie
        raise DecodeError(str(exc)) from None
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[len(codecs.BOM_UTF8) :]
        encoding = "utf-8"
    elif encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except (ValueError, LookupError) as exc:  # UnicodeError too: `# coding: undefined`, punycode
        raise DecodeError(f"not valid {encoding}: {exc}") from None
    return Decoded(text, encoding, bom)


def _two_lines(data: bytes) -> list:
    """The first two lines of `data` (fewer in a shorter file), ended where Python ends them
    (\\r\\n, \\r or \\n): where the tokenizer looks for a cookie."""
    lines, pos = [], 0
    for _ in range(2):
        m = _NEWLINE_BYTES.search(data, pos)
        end = m.end() if m else len(data)
        lines.append(data[pos:end])
        pos = end
        if m is None:
            break
    return lines


def _first_lines(data: bytes):
    """A `readline` over `_two_lines(data)`: BytesIO.readline ends lines at \\n only, so in a
    file with lone CRs the first "line" was the whole file, and its cookie was refused as soon
    as any byte was not UTF-8."""
    rest = iter(_two_lines(data))
    return lambda: next(rest, b"")


_NEWLINE_BYTES = re.compile(rb"\r\n|\r|\n")


def encode(text: str, encoding: str, bom: bool) -> bytes:
    data = text.encode(encoding)
    return codecs.BOM_UTF8 + data if bom else data


def encode_edited(decoded: Decoded, original: bytes, text: str) -> bytes:
    """`text`, an edit of `decoded.text`, in the file's own encoding.  DecodeError when that
    could change bytes outside the edits: a codec whose decode and encode are not exact inverses
    for this file (cp932 reads 0x8790 and 0x81E0 both as U+2252 and writes 0x81E0; utf-16,
    unicode_escape), or an edit the encoding cannot represent."""
    if decoded.encoding != "utf-8" and encode(decoded.text, decoded.encoding, decoded.bom) != original:
        raise DecodeError(f"{decoded.encoding} does not write this file's bytes back exactly")
    try:
        return encode(text, decoded.encoding, decoded.bom)
    except (ValueError, LookupError) as exc:
        raise DecodeError(f"the fixed text cannot be written in {decoded.encoding}: {exc}") from None


def splice(text: str, edits, start: int = 0, end: int | None = None) -> str:
    """text[start:end] with each (edit start, edit end, new text) of `edits` in place of what it
    covers: offsets into `text`, within start..end, in order and not overlapping.  The one place
    that applies edits to a text (fixes, notebook cells and the notebook's JSON alike)."""
    parts = []
    pos = start
    for s, t, new in edits:
        parts.append(text[pos:s])
        parts.append(new)
        pos = t
    parts.append(text[pos:end])
    return "".join(parts)


def is_probably_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


class LineIndex:
    """Offsets of line starts in a text, and ast-position -> text-offset conversion."""

    __slots__ = ("text", "starts")

    def __init__(self, text: str) -> None:
        self.text = text
        # `starts` is computed when first read (`__getattr__`): the summary of a module another
        # file imports reads positions of few modules' lines, or none.

    def __getattr__(self, name: str):
        if name != "starts":  # (only called for a slot not set yet)
            raise AttributeError(name)
        text = self.text
        if "\r" in text:
            starts = [0]
            starts.extend(m.end() for m in _NEWLINE.finditer(text))
        else:  # the common case, several times faster
            starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]
            starts.pop()
        self.starts = starts
        return starts

    def line(self, lineno: int) -> str:
        """The text of 1-based line `lineno`, without its line ending."""
        start = self.starts[lineno - 1]
        end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def char_col(self, lineno: int, byte_col: int) -> int:
        """Character column of an ast (UTF-8 byte) column on 1-based line `lineno`."""
        line = self.line(lineno)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def offset(self, lineno: int, byte_col: int) -> int:
        """Text offset of an ast position (1-based line, UTF-8 byte column)."""
        return self.starts[lineno - 1] + self.char_col(lineno, byte_col)

    def node_span(self, node) -> tuple[int, int]:
        """Text offsets [start, end) of an ast node with positions."""
        return (
            self.offset(node.lineno, node.col_offset),
            self.offset(node.end_lineno, node.end_col_offset),
        )

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based character column of a text offset."""
        lo, hi = 0, len(self.starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self.starts[lo]


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(tree, lines: LineIndex) -> str | None:
    """The indentation unit of the first block of the file (`    `, `  `, a tab), or None."""
    unit = None
    best = None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list) or not body or not isinstance(node, ast.stmt):
            continue
        inner = body[0]
        if inner.lineno == node.lineno or (best is not None and node.lineno >= best):
            continue
        outer = indentation(lines.line(node.lineno))
        sub = indentation(lines.line(inner.lineno))
        if sub.startswith(outer) and len(sub) > len(outer):
            best, unit = node.lineno, sub[len(outer):]
    return unit


def hasher():
    """BLAKE2b: in the standard library without OpenSSL, so that a one-file run does not load
    libcrypto (hashlib's import does: a few milliseconds of every start)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b


def content_hash(data: bytes) -> str:
    """The hash that identifies a file's contents (result cache, project summaries)."""
    return hasher()(data, digest_size=32).hexdigest()


def write_cache_file(directory: str, path: str, data: bytes) -> None:
    """Write a cache file at once or not at all: `data` goes to a file of this process's own and
    is renamed over `path` (concurrent flake8 workers and CLI runs share a cache; a reader sees
    an old file or a new one, never half of one).  `directory` (the cache's) gets a `.gitignore`
    first.  OSError when it cannot be written."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ignore = os.path.join(directory, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as f:
            f.write("# Created by tensorcopy: a cache, never commit it.\n*\n")
    # A name of our own rather than tempfile.mkstemp (tempfile costs milliseconds to import).
    tmp = f"{path}.{os.getpid()}.{id(data):x}.tmp"  # (two writers alive: two data objects)
    write_and_rename(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), tmp, path, data)


def write_and_rename(fd: int, tmp: str, path: str, data: bytes, sync: bool = False, prepare=None) -> None:
    """Write `data` to the new temporary file `tmp` (open as `fd`), then rename it over `path`
    (`sync`: to the disk first; `prepare(tmp)`: before the rename).  If anything fails, the
    temporary file is removed and `path` is as it was."""
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if sync:
                f.flush()
                os.fsync(f.fileno())
        if prepare is not None:
            prepare(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
