"""The engine: text in, violations (with optional fixes) out.  Every front end is a shell over it.

    pre-filter (plain substring tests) -> ast.parse once -> one ordered walk that runs every
    enabled rule and the domains they ask (analysis/walker.py) -> violations sorted by position

Why `ast` and not LibCST for detection: the stdlib parser is about ten times faster than
LibCST's and gives exact start/end positions with no metadata pass, and flake8 hands plugins
an `ast` tree it already built, so inside flake8 we parse nothing at all.  Fixes are exact text
edits on the original characters (everything outside an edit is byte-for-byte unchanged), and
each fixed text is re-parsed before it is accepted (a fix that would break the file is
dropped and reported).  LibCST drives the codemod front end (codemod.py), which applies these
same fixes; nothing on the check path imports it.
"""

from __future__ import annotations

import ast
import bisect
import gc
import warnings

from . import noqa as _noqa
from . import rules as _rules  # noqa: F401  (registers the rule families)
from .analysis import Walker, make_domains
from .rules.base import Context, Edit, Fix, Options, Rule, Violation, all_rules
from .source import LineIndex

__all__ = [
    "Edit",
    "Fix",
    "LintResult",
    "Options",
    "Violation",
    "apply_fixes",
    "fix_text",
    "lint_text",
    "select_rules",
]


class LintResult:
    """What linting one text found.  (A plain class, not a dataclass: the flake8 plugin imports
    this module on every run, and each dataclass costs a compile of its generated methods.)"""

    __slots__ = ("violations", "error", "parsed")

    def __init__(self, violations: list[Violation] | None = None, error: str | None = None,
                 parsed: bool = False) -> None:
        self.violations = violations if violations is not None else []
        self.error = error  # why the file could not be analysed (a syntax error), or None
        self.parsed = parsed

    def __repr__(self) -> str:
        return f"LintResult(violations={self.violations!r}, error={self.error!r}, parsed={self.parsed!r})"


def select_rules(select=None, ignore=None, extend_select=None) -> list[type[Rule]]:
    """flake8 semantics: the longest matching prefix decides; ignore wins a tie."""
    select = list(select) if select else ["TNS"]
    select += list(extend_select or ())
    ignore = list(ignore or ())
    chosen = []
    for cls in all_rules():
        code = cls.code
        sel = max((len(p) for p in select if code.startswith(p) or p.upper() == "ALL"), default=-1)
        ign = max((len(p) for p in ignore if code.startswith(p)), default=-1)
        if sel >= 0 and sel > ign:
            chosen.append(cls)
    return chosen


def lint_text(
    text: str,
    rules: list[type[Rule]] | None = None,
    options: Options | None = None,
    tree: ast.Module | None = None,
    honor_noqa: bool = True,
    project=None,
    path: str | None = None,
) -> LintResult:
    """Find violations in one module's source text.  With a `project` (analysis/project.py) and
    the file's `path`, imports of the project's other modules bring what they define."""
    options = options or Options()
    rule_classes = rules if rules is not None else select_rules()
    if "torch" not in text:
        # Only idiom rules look at files that never mention torch.
        rule_classes = [cls for cls in rule_classes if not cls.needs_torch]
        if not rule_classes:
            return LintResult()
    # The cyclic garbage collector would traverse the whole tree again and again while it is
    # built and analysed (a third of the parse time of a large file): nothing here needs it
    # until the file is done.
    collecting = gc.isenabled()
    built = project.built if project is not None else 0
    gc.disable()
    try:
        return _lint(text, rule_classes, options, tree, honor_noqa, project, path)
    finally:
        if collecting:
            gc.enable()
            if project is not None and project.batch and project.built != built:
                # New summaries of project modules: they live as long as the process, and every
                # full collection would traverse them again (a fifth of a large tree's check).
                # Collect what this file left (the youngest generation: linear in what it
                # allocated), then freeze what survives.
                gc.collect(0)
                gc.freeze()


def _lint(text: str, rule_classes, options: Options, tree, honor_noqa: bool, project=None, path=None) -> LintResult:
    active = [cls for cls in rule_classes if cls.might_match(text)]
    if not active:
        return LintResult()
    if tree is None:
        try:
            tree = _parse(text)
        except SyntaxError as exc:
            return LintResult(error=f"SyntaxError: {exc.msg} (line {exc.lineno}, column {exc.offset})")
        except (ValueError, RecursionError, MemoryError) as exc:
            # The parser's MemoryError ("(a and " * 400) comes without a message.
            why = str(exc) or "expressions nested too deeply for the parser"
            return LintResult(error=f"{type(exc).__name__}: {why}")
    lines = LineIndex(text)
    ctx = Context(lines, options)
    instances = [cls(options) for cls in active]
    def scope_filter(segment: str) -> bool:
        return any(cls.might_match_scope(segment) for cls in active)

    domains = make_domains({k for cls in active for k in cls.domains}, options)
    module = project.module_name(path) if project is not None and path else None
    walker = Walker(tree, instances, ctx, scope_filter, domains, project=project, module=module,
                    module_is_package=bool(path) and path.endswith("__init__.py"))
    try:
        walker.run()
    except RecursionError:
        v = Violation(
            "TNS000",
            "file not analysed: expressions nested too deeply for the analysis; "
            "split the expression or exclude the file",
            1,
            0,
            1,
            0,
        )
        return LintResult([v], parsed=True)
    violations = ctx.violations
    if not walker.saw_torch:
        torch_free = {cls.code for cls in active if not cls.needs_torch}
        violations = [v for v in violations if v.code in torch_free]
    seen = set()
    kept = []
    for v in sorted(violations, key=lambda v: (v.line, v.col, v.code)):
        key = (v.code, v.line, v.col, v.end_line, v.end_col)
        if key in seen:
            continue
        seen.add(key)
        kept.append((v, _suppressed(lines, v)))
    # One finding per expression: where a rule's finding covers another's (TNS101 names and fixes
    # TNS102's hazard too), the covered one goes, unless the covering one is suppressed there.
    covers = {(code, v.line, v.col, v.end_line, v.end_col)
              for v, suppressed in kept if not suppressed for code in _SUBSUMES.get(v.code, ())}
    out = [v for v, suppressed in kept
           if (v.code, v.line, v.col, v.end_line, v.end_col) not in covers and not (honor_noqa and suppressed)]
    return LintResult(out, parsed=True)


_SUBSUMES = {cls.code: cls.subsumes for cls in all_rules() if cls.subsumes}


def _suppressed(lines: LineIndex, v: Violation) -> bool:
    """`# noqa` with flake8's semantics (noqa.py), so that every front end agrees with flake8."""
    return _noqa.suppressed(lines, v.line, v.code)


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return False  # two insertions at one point: both apply, in code order
    return a.start < b.end and b.start < a.end or (
        a.start == a.end and b.start < a.start < b.end or b.start == b.end and a.start < b.start < a.end
    )


def _malformed(edits, size: int) -> bool:
    """Edits out of the text or overlapping each other: a rule bug, never applied."""
    return any(not 0 <= e.start <= e.end <= size for e in edits) or any(
        _overlaps(a, b) for i, a in enumerate(edits) for b in edits[i + 1 :])


def _conflicts(e: Edit, starts: list, ends: list, points: list) -> bool:
    """Whether `e` overlaps an accepted edit (the `_overlaps` test, in O(log n)).  `starts`/`ends`:
    the accepted non-empty edits, disjoint and sorted; `points`: the accepted insertions."""
    i = bisect.bisect_left(starts, e.end) - 1  # the last non-empty edit starting before e ends
    if e.start == e.end:
        return i >= 0 and ends[i] > e.start
    if i >= 0 and ends[i] > e.start:
        return True
    j = bisect.bisect_right(points, e.start)  # the first insertion after e starts
    return j < len(points) and points[j] < e.end


def apply_fixes(text: str, violations: list[Violation], unsafe: bool = False):
    """Apply the non-conflicting fixes once. Returns (new_text, applied, skipped)."""
    accepted: list[tuple[Violation, Edit]] = []
    applied, skipped = [], []
    starts: list[int] = []
    ends: list[int] = []
    points: list[int] = []
    for v in violations:
        fix = v.fix
        if fix is None or (fix.safety != "safe" and not unsafe):
            continue
        edits = fix.edits
        if any(text[e.start : e.end] != e.expect for e in edits if e.expect is not None) or _malformed(
                edits, len(text)):
            skipped.append(v)
            continue
        if any(_conflicts(e, starts, ends, points) for e in edits):
            skipped.append(v)
            continue
        for e in edits:
            if e.start == e.end:
                bisect.insort(points, e.start)
            else:
                i = bisect.bisect_left(starts, e.start)
                starts.insert(i, e.start)
                ends.insert(i, e.end)
        accepted.extend((v, e) for e in edits)
        applied.append(v)
    if not accepted:
        return text, applied, skipped
    order = {v.code: i for i, v in enumerate(sorted({v.code: v for v in applied}.values(), key=lambda v: v.code))}
    ordered = sorted(accepted, key=lambda ve: (ve[1].start, ve[1].end, order[ve[0].code], ve[1].seq))
    parts = []
    pos = 0
    for _, e in ordered:
        parts.append(text[pos : e.start])
        parts.append(e.text)
        pos = e.end
    parts.append(text[pos:])
    return "".join(parts), applied, skipped


def _parse(text: str) -> ast.Module:
    """ast.parse without the parser's warnings: `SyntaxWarning: invalid escape sequence` (3.12+)
    is the user's compiler's business; printed by us it would land on the user's stderr once per
    file and per fix pass."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _parses(text: str) -> bool:
    try:
        _parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


class FixResult:
    """What fixing one text did (a plain class, like LintResult)."""

    __slots__ = ("text", "applied", "remaining", "error")

    def __init__(self, text: str, applied: list[Violation], remaining: list[Violation],
                 error: str | None = None) -> None:
        self.text = text
        self.applied = applied
        self.remaining = remaining
        self.error = error

    def __repr__(self) -> str:
        return (f"FixResult(text={self.text!r}, applied={self.applied!r}, remaining={self.remaining!r}, "
                f"error={self.error!r})")


def fix_text(
    text: str,
    rules: list[type[Rule]] | None = None,
    options: Options | None = None,
    unsafe: bool = False,
    max_passes: int | None = None,
    project=None,
    path: str | None = None,
) -> FixResult:
    """Apply fixes until none is left to apply (each pass re-lints the fixed text).

    Overlapping fixes (nested calls) are applied one per pass, so a pass limit must grow with
    them: by default it is the number of fixable findings the first pass sees, plus a margin
    for findings that only appear once a fix is in.  Every pass applies at least one fix or
    ends the loop, and each costs one lint of the text (no per-fix re-lint)."""
    applied_all: list[Violation] = []
    current = text
    passes = 0
    limit = max_passes
    while True:
        result = lint_text(current, rules, options, project=project, path=path)
        if result.error:
            return FixResult(current, applied_all, [], result.error)
        if limit is None:
            limit = _EXTRA_PASSES + sum(
                1 for v in result.violations if v.fix is not None and (v.fix.safety == "safe" or unsafe))
        if passes >= limit:
            return FixResult(current, applied_all, result.violations)
        new, applied, _skipped = apply_fixes(current, result.violations, unsafe)
        if not applied:
            return FixResult(current, applied_all, result.violations)
        if not _parses(new):
            # A fix that breaks the file is a bug in a rule: never write it, and say which.
            culprits = [v for v in applied if not _parses(apply_fixes(current, [v], unsafe)[0])] or applied
            where = ", ".join(sorted({f"{v.code} at line {v.line}" for v in culprits}))
            return FixResult(text, [], lint_text(text, rules, options, project=project, path=path).violations,
                             f"a fix produced code that does not parse: {where}; no fix was applied to this "
                             "file (please report it)")
        applied_all.extend(applied)
        current = new
        passes += 1


# fix_text: passes allowed beyond the number of fixable findings first seen.
_EXTRA_PASSES = 10
