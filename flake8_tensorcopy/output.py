"""What `tensorcopy check` and `fix` print: text, JSON, JSON lines, SARIF 2.1.0 and GitHub annotations.

A `Finding` is a violation placed in its file: its lines are lines of the file, or of the
notebook cell it is in (`cell`, 1-based over all cells), and its fix's edits carry positions
(the engine's edits are offsets into the text it linted, which for a notebook is all code
cells joined).  Findings are what the result cache stores, so an output never needs the file
again.

Columns: `Finding.col`/`end_col` are 0-based characters like the engine's; every output
prints 1-based columns, like ruff and flake8.

Text is coloured as ruff colours it when it goes to a terminal (`Style`); `NO_COLOR` (any
value) turns colour off, `FORCE_COLOR` (any value) on when the output is not a terminal.  The
machine-readable formats are never coloured.  They import json (and urllib) when used: the
text path of a one-file run does not pay for them.
"""

from __future__ import annotations

import os

from . import __version__
from .model import FixSafety, Violation
from .rules.base import get_rule
from .source import LineIndex

FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github")  # concise: ruff's name for text
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class Finding(Violation):
    _FIELDS = Violation._FIELDS + (
        ("cell", None),
        # (start_line, start_col, end_line, end_col, text) per edit of `fix`: 1-based lines,
        # 0-based character columns, in the same file or cell as the finding.
        ("edit_ranges", ()),
        # A notebook finding's (start_line, start_col, end_line, end_col) in the .ipynb file's own
        # JSON text (1-based lines, 0-based columns): where SARIF and GitHub annotations point.
        ("json_range", None),
    )
    __slots__ = ("cell", "edit_ranges", "json_range")


def place(v: Violation, lines: LineIndex) -> Finding:
    """A violation of a plain file, with its fix's edit positions."""
    ranges = ()
    if v.fix is not None:
        ranges = tuple((*lines.position(e.start), *lines.position(e.end), e.text) for e in v.fix.edits)
    return Finding(v.code, v.message, v.line, v.col, v.end_line, v.end_col, v.fix, None, ranges)


def is_fixable(v: Violation, unsafe: bool = False) -> bool:
    return v.fix is not None and v.fix.applies(unsafe)


def _rule_name(code: str) -> str:
    cls = get_rule(code)
    return cls.name if cls is not None else "internal"


# --------------------------------------------------------------------------- text


def location(v: Violation) -> str:
    """`line:col`, or `cell N:line:col` in a notebook (ruff's spelling, which editors' problem
    matchers read as path, line and column)."""
    cell = getattr(v, "cell", None)
    return f"cell {cell}:{v.line}:{v.col + 1}" if cell is not None else f"{v.line}:{v.col + 1}"


class Style:
    """ANSI colours, or none (`on` false)."""

    def __init__(self, on: bool) -> None:
        self.on = on

    @classmethod
    def for_stream(cls, stream) -> Style:
        return cls(use_colour(stream))

    def _wrap(self, codes: str, s: str) -> str:
        return f"\x1b[{codes}m{s}\x1b[0m" if self.on and s else s

    def bold(self, s: str) -> str:
        return self._wrap("1", s)

    def code(self, s: str) -> str:
        return self._wrap("1;31", s)

    def sep(self, s: str) -> str:
        return self._wrap("36", s)

    def error(self, s: str) -> str:
        return self._wrap("1;31", s)

    def good(self, s: str) -> str:
        return self._wrap("1;32", s)

    def star(self) -> str:
        return f"[{self._wrap('36', '*')}]"


def use_colour(stream) -> bool:
    """NO_COLOR (non-empty) wins; then FORCE_COLOR (non-empty); else a terminal that is not dumb."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


_PLAIN = Style(False)


def text_line(path: str, v: Violation, fixable: bool = False, style: Style = _PLAIN) -> str:
    """`path:line:col: CODE message`, with ruff's `[*]` before the message when `fix` would fix
    it."""
    sep = style.sep(":")
    cell = getattr(v, "cell", None)
    where = ([f"cell {cell}"] if cell is not None else []) + [str(v.line), str(v.col + 1)]
    mark = f"{style.star()} " if fixable else ""
    return f"{style.bold(path)}{sep}{sep.join(where)}{sep} {style.code(v.code)} {mark}{v.message}"


def fix_help(v: Violation, unsafe: bool, style: Style = _PLAIN) -> str:
    """`--show-fixes` under a finding: what its fix does."""
    note = "" if v.fix.applies(unsafe) else " (unsafe: applied with --unsafe-fixes)"
    return f"    {style.sep('help:')} {v.fix.title}{note}"


def fix_summary(applied: dict, would: bool = False, style: Style = _PLAIN) -> str:
    """ruff's `--show-fixes` list: per file, how many fixes of each rule were applied, and the
    fix's title.  `applied`: path -> [(code, title), ...]."""
    from collections import Counter

    counts = {path: Counter(pairs) for path, pairs in applied.items()}
    total = sum(sum(c.values()) for c in counts.values())
    width = len(str(max(n for c in counts.values() for n in c.values())))
    label = f"{'Would fix' if would else 'Fixed'} {total} problem{'s' if total != 1 else ''}:"
    lines = [style.good(label)]
    for path in sorted(counts):
        lines.append(f"{style.sep('-')} {style.bold(path)}{style.sep(':')}")
        for (code, title), n in sorted(counts[path].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"    {n:>{width}} \u00d7 {style.code(code)} ({_rule_name(code)}): {title}")
    return "\n".join(lines) + "\n"


def summary(total: int, fixable: int, unsafe_fixable: int, errors: int = 0) -> str:
    """`check`'s last line.  "All checks passed!" only when every file was checked and is clean;
    `errors` counts the `error:` lines printed (files that could not be read, decoded or parsed)."""
    if total == 0:
        return f"Found {errors} error{'s' if errors != 1 else ''}." if errors else "All checks passed!"
    noun = "problem" if total == 1 else "problems"
    parts = []
    if fixable:
        parts.append(f"{fixable} fixable with `tensorcopy fix`")
    if unsafe_fixable:
        parts.append(f"{unsafe_fixable} more with `tensorcopy fix --unsafe-fixes`")
    extra = f" ({'; '.join(parts)})" if parts else ""
    also = f" and {errors} error{'s' if errors != 1 else ''}" if errors else ""
    return f"Found {total} {noun}{extra}{also}."


# --------------------------------------------------------------------------- json


def _edit_json(r) -> dict:
    sl, sc, el, ec, content = r
    return {"start_line": sl, "start_column": sc + 1, "end_line": el, "end_column": ec + 1, "content": content}


def finding_json(path: str, v: Violation) -> dict:
    fix = None
    if v.fix is not None:
        fix = {
            "title": v.fix.title,
            "safety": v.fix.safety,
            "edits": [_edit_json(r) for r in getattr(v, "edit_ranges", ())],
        }
    return {
        "path": path,
        "cell": getattr(v, "cell", None),
        "line": v.line,
        "column": v.col + 1,
        "end_line": v.end_line,
        "end_column": v.end_col + 1,
        "code": v.code,
        "name": _rule_name(v.code),
        "message": v.message,
        "fix": fix,
        "url": rule_url(v.code),
    }


def rule_url(code: str) -> str:
    """The documentation of the rule behind `code` (links.py)."""
    from .links import rule_url as url

    cls = get_rule(code)
    return url(code, cls.name if cls is not None else None)


def render_json(findings) -> str:
    import json

    return json.dumps([finding_json(p, v) for p, v in findings], indent=2, ensure_ascii=False) + "\n"


def render_json_lines(findings) -> str:
    import json

    return "".join(json.dumps(finding_json(p, v), ensure_ascii=False) + "\n" for p, v in findings)


# --------------------------------------------------------------------------- github


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github(findings) -> str:
    """GitHub Actions workflow commands: one `::error` annotation per finding."""
    out = []
    for path, v in findings:
        line, col, end_line, end_col = file_range(v)
        where = f"{location(v)}: " if getattr(v, "cell", None) is not None else ""
        props = (f"file={_gh_prop(path)},line={line},col={col + 1},endLine={end_line},"
                 f"endColumn={end_col + 1},title={_gh_prop(f'tensorcopy ({v.code})')}")
        out.append(f"::error {props}::{_gh_data(f'{where}{v.code} {v.message}')}\n")
    return "".join(out)


def file_range(v: Violation) -> tuple:
    """(line, col, end_line, end_col) in the file itself: for a notebook finding, in the
    .ipynb file's JSON text (the cell's line there), not in the cell."""
    json_range = getattr(v, "json_range", None)
    if getattr(v, "cell", None) is not None and json_range:
        return tuple(json_range)
    return v.line, v.col, v.end_line, v.end_col


# --------------------------------------------------------------------------- sarif


def _uri(path: str) -> str:
    """A relative URI for paths under the current directory, else a file:// URI."""
    import urllib.parse

    full = os.path.abspath(path)
    cwd = os.getcwd()
    try:
        inside = os.path.commonpath([full, cwd]) == cwd
    except ValueError:
        inside = False
    if inside and path != "-":
        return urllib.parse.quote(os.path.relpath(full, cwd).replace(os.sep, "/"))
    posix = full.replace(os.sep, "/")
    return "file://" + urllib.parse.quote(posix if posix.startswith("/") else "/" + posix)


def _rule_descriptor(code: str) -> dict:
    cls = get_rule(code)
    if cls is None:
        return {
            "id": code,
            "name": "internal",
            "shortDescription": {"text": "The file could not be analysed."},
            "defaultConfiguration": {"level": "error"},
            "helpUri": rule_url(code),
        }
    sections = cls.doc_sections()
    what = sections.get("What it does", "").strip() or cls.message
    why = sections.get("Why is this bad?", "").strip()
    descriptor = {
        "id": cls.code,
        "name": cls.name,
        "shortDescription": {"text": what.split("\n\n")[0].replace("\n", " ")},
        "fullDescription": {"text": (what + ("\n\n" + why if why else "")).strip()},
        "help": {"text": cls.explain(), "markdown": cls.explain()},
        "defaultConfiguration": {"level": "error"},
        "properties": {"fixSafety": cls.fix_safety or "none"},
    }
    # helpUri: the rule's documentation (links.py); the references it cites, in properties.
    descriptor["helpUri"] = rule_url(cls.code)
    refs = [line.strip()[2:].split()[0] for line in sections.get("References", "").splitlines()
            if line.strip().startswith("- http")]
    if refs:
        descriptor["properties"]["references"] = refs
    return descriptor


def render_sarif(findings, codes) -> str:
    """SARIF 2.1.0: the rules that ran, and one result per finding.

    SARIF has no notion of cells: a notebook finding's region is in the .ipynb file's JSON
    text (the line of the cell's source that holds it), and its `properties` give the cell
    number and the line and column in the cell."""
    ids = sorted(set(codes) | {v.code for _, v in findings})
    index = {code: i for i, code in enumerate(ids)}
    results = []
    for path, v in findings:
        uri = _uri(path)
        line, col, end_line, end_col = file_range(v)
        region = {"startLine": line, "startColumn": col + 1, "endLine": end_line, "endColumn": end_col + 1}
        result = {
            "ruleId": v.code,
            "ruleIndex": index[v.code],
            "level": "error",
            "message": {"text": v.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
        }
        cell = getattr(v, "cell", None)
        if cell is not None:
            # SARIF has no cells: the region is in the .ipynb file's text; where in the cell:
            result["properties"] = {"cell": cell, "cellLine": v.line, "cellColumn": v.col + 1,
                                    "cellEndLine": v.end_line, "cellEndColumn": v.end_col + 1}
        elif v.fix is not None and getattr(v, "edit_ranges", ()):
            replacements = [
                {
                    "deletedRegion": {"startLine": sl, "startColumn": sc + 1, "endLine": el, "endColumn": ec + 1},
                    "insertedContent": {"text": text},
                }
                for sl, sc, el, ec, text in v.edit_ranges
            ]
            result["fixes"] = [{
                "description": {"text": v.fix.title + (" (unsafe)" if v.fix.safety is FixSafety.UNSAFE else "")},
                "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": replacements}],
            }]
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tensorcopy",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule_descriptor(c) for c in ids],
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    import json

    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- statistics


def statistics(findings, unsafe: bool = False) -> list[dict]:
    from collections import Counter

    counts = Counter(v.code for _, v in findings)
    fixable = {v.code for _, v in findings if is_fixable(v, unsafe)}
    return [
        {"code": code, "name": _rule_name(code), "count": n, "fixable": code in fixable}
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def render_statistics(findings, fmt: str, unsafe: bool = False, style: Style = _PLAIN) -> str:
    """ruff's `--statistics`: count, code, `[*]` when fixable, rule name."""
    rows = statistics(findings, unsafe)
    if fmt in ("json", "json-lines"):
        import json

        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(r["count"])) for r in rows)
    cwidth = max(len(r["code"]) for r in rows)
    return "".join(
        f"{style.bold(str(r['count']).rjust(width))}\t{style.code(r['code'].ljust(cwidth))}\t"
        f"{style.star() if r['fixable'] else '[ ]'} {r['name']}\n" for r in rows
    )


def render(fmt: str, findings, codes=()) -> str:
    """Findings (path, Finding) in a machine-readable format."""
    if fmt == "json":
        return render_json(findings)
    if fmt == "json-lines":
        return render_json_lines(findings)
    if fmt == "sarif":
        return render_sarif(findings, codes)
    if fmt == "github":
        return render_github(findings)
    raise ValueError(f"unknown output format {fmt!r}")
