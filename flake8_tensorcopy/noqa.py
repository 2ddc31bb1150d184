"""`# noqa` with flake8's semantics, for the front ends that apply it themselves.

Inside flake8 the plugin reports everything and flake8 applies `# noqa`; the CLI, the editor
server, notebooks and the codemod apply it here, the same way (flake8 7, `defaults.py` and
`violation.py`, checked against the installed flake8 by tests/test_noqa.py):

- `# noqa` (exactly one space after `#`; `noqa` in any case) with no codes, or with a list
  that does not parse as codes, silences every finding on the line.
- `# noqa: CODES` (at most one space after the colon; codes separated by commas or
  whitespace) silences the findings whose code starts with one of them.  Codes are
  case-sensitive: `# noqa: tns201` silences nothing, as in flake8.
- The "line" is the logical line as the tokenizer sees it: a comment at the end of a
  multi-line string or of a backslash-continued line covers all of its physical lines.
- A line that is only `# flake8: noqa` (or `# flake8=noqa`, any case) silences the whole file.
"""

from __future__ import annotations

import io
import re
import threading
import tokenize

from .source import LazyPattern

# flake8's NOQA_INLINE_REGEXP and NOQA_FILE.
INLINE = LazyPattern(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
FILE = LazyPattern(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
_SEPARATORS = LazyPattern(r"[,\s]")
# Cheap tests before any real work: most files have no noqa comment at all.
_ANY_INLINE = LazyPattern(r"# noqa", re.IGNORECASE)
_ANY_FILE = LazyPattern(r"flake8[:=]", re.IGNORECASE)


def codes_suppressed(comment_line: str, code: str) -> bool:
    """Whether the `# noqa` comment in `comment_line` (if any) silences `code`."""
    m = INLINE.search(comment_line)
    if m is None:
        return False
    codes = m.group("codes")
    if codes is None:
        return True
    listed = tuple(c.strip() for c in _SEPARATORS.split(codes) if c.strip())
    return code in listed or code.startswith(listed)


class _Comments:
    """What the `# noqa` comments of one text say."""

    def __init__(self, lines) -> None:
        self.lines = lines  # a source.LineIndex
        text = lines.text
        self.any_inline = _ANY_INLINE.search(text) is not None
        self.whole_file = _ANY_FILE.search(text) is not None and any(
            FILE.match(lines.line(n)) for n in range(1, len(lines.starts) + 1))
        self._logical: dict | None = None

    def logical(self) -> dict:
        """Line number -> the text flake8 searches for `noqa` (its `_noqa_line_mapping`)."""
        if self._logical is None:
            self._logical = {}
            physical = io.StringIO(self.lines.text, newline=None).readlines()  # universal newlines, like flake8
            rest = iter(physical)
            first, last = len(physical) + 2, -1
            try:
                for tok in tokenize.generate_tokens(lambda: next(rest, "")):
                    if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                        continue
                    first, last = min(first, tok.start[0]), max(last, tok.end[0])
                    if tok.type in (tokenize.NL, tokenize.NEWLINE):
                        joined = "".join(physical[first - 1 : last])
                        for n in range(first, last + 1):
                            self._logical[n] = joined
                        first, last = len(physical) + 2, -1
            except (tokenize.TokenError, SyntaxError):
                self._logical = {}  # flake8 then falls back to the physical line
        return self._logical

    def suppressed(self, line: int, code: str) -> bool:
        if self.whole_file:
            return True
        if not self.any_inline:
            return False
        text = self.logical().get(line)
        if text is None:
            text = self.lines.line(line) if 1 <= line <= len(self.lines.starts) else ""
        return codes_suppressed(text, code)


_last = threading.local()


def suppressed(lines, line: int, code: str) -> bool:
    """Whether a finding of `code` on `line` of the text indexed by `lines` is silenced."""
    comments = getattr(_last, "comments", None)
    if comments is None or comments.lines is not lines:
        # One entry: callers ask about the findings of one text, then move on to the next.
        comments = _last.comments = _Comments(lines)
    return comments.suppressed(line, code)
