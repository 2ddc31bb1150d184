"""The engine: text in, violations (with optional fixes) out.  Every front end is a shell over it.

    pre-filter (plain substring tests) -> ast.parse once -> one ordered walk that runs every
    enabled rule and the domains they ask (analysis/walker.py) -> violations sorted by position
    -> fix intents written out as edits (lowering.py)

Why `ast` and not LibCST for detection: the stdlib parser is about ten times faster than
LibCST's and gives exact start/end positions with no metadata pass, and flake8 hands plugins
an `ast` tree it already built, so inside flake8 we parse nothing at all.  Fixes are exact text
edits on the original characters (everything outside an edit is byte-for-byte unchanged), and
each fixed text is re-parsed before it is accepted (a fix that would break the file is
dropped and reported).  The fixes that restructure code are written out with LibCST, on the
affected code only (lowering.py); LibCST is imported only when a finding has such a fix.
"""

from __future__ import annotations

import ast
import bisect
import gc
import warnings

from . import rules as _rules  # noqa: F401  (registers the rule families)
from .analysis import Walker, any_admitted, make_domains
from .analysis.astutil import Reparse
from .analysis import lazytree
from .model import INTERNAL, Edit, Error, ErrorKind, Fix, Options, Violation
from .reach import torch_through_project
from .rules.base import Context, Rule, all_rules
from .source import LineIndex, has_literal, or_holds, splice

TYPE_CHECKING = False
if TYPE_CHECKING:  # (at run time `__getattr__` below imports it on first use)
    from .selection import select_rules

__all__ = [
    "Edit",
    "Fix",
    "FixResult",
    "LintResult",
    "Options",
    "TextTarget",
    "Violation",
    "apply_fixes",
    "choose_fixes",
    "fix_passes",
    "fix_text",
    "lint_text",
    "select_rules",
    "splice_fixes",
]


class LintResult:
    """What linting one text found.  (A plain class, not a dataclass: the flake8 plugin imports
    this module on every run, and each dataclass costs a compile of its generated methods.)"""

    __slots__ = ("violations", "error", "parsed")

    def __init__(self, violations: list[Violation] | None = None, error: Error | None = None,
                 parsed: bool = False) -> None:
        self.violations = violations if violations is not None else []
        self.error = error  # why the file could not be analysed (a syntax error), or None
        self.parsed = parsed

    def __repr__(self) -> str:
        return f"LintResult(violations={self.violations!r}, error={self.error!r}, parsed={self.parsed!r})"


def lint_text(
    text: str,
    rules: list[type[Rule]] | None = None,
    options: Options | None = None,
    tree: ast.Module | None = None,
    honor_noqa: bool = True,
    project=None,
    path: str | None = None,
    fixes: bool = True,
    concrete=None,
) -> LintResult:
    """Find violations in one module's source text.  With a `project` (analysis/project.py) and
    the file's `path`, imports of the project's other modules bring what they define.

    Fixes that rules describe by their intent are written out as edits here (lowering.py);
    `fixes=False` (a front end that shows no fix) leaves them unwritten, with no edits.
    `concrete`: a LibCST tree of `text` with its positions (lowering.Concrete, the codemod's),
    on which structural fixes are made instead of on parsed snippets."""
    options = options or Options()
    rule_classes = rules if rules is not None else all_rules()
    # A file that never mentions torch gets only the idiom rules, unless it imports a module of
    # its project that uses torch (`from .models import build`; reach.py).  Then it gets what
    # the project makes certain, not --strict's values of unknown origin: in a file that does
    # not import torch, those may be another framework's (TensorFlow's and JAX's arrays have
    # `.numpy()` and `.cpu()` too).
    via_project = False
    if "torch" not in text:
        if project is not None:
            looked: list = []
            via_project = torch_through_project(text, path, project.root, looked)
            for dep in looked:  # the answer changes with them: a result cache re-checks the file
                project.touched[dep] = project.digest_of(dep)
            if via_project and options.strict:
                options = options.replace(strict=False)
        if not via_project:
            rule_classes = [cls for cls in rule_classes if not cls.needs_torch]
            if not rule_classes:
                return LintResult()
    # The cyclic garbage collector would traverse the whole tree again and again while it is
    # built and analysed (a third of the parse time of a large file): nothing here needs it
    # until the file is done.
    collecting = gc.isenabled()
    built = project.built if project is not None else 0
    gc.disable()
    result = None
    try:
        result = _lint(text, rule_classes, options, tree, honor_noqa, project, path, fixes, concrete, via_project)
        return result
    finally:
        if collecting:
            if project is not None and project.batch and project.built != built:
                # New summaries of project modules: they live as long as the process, and every
                # full collection would traverse them again (a fifth of a large tree's check):
                # frozen, before the collector is on again (its next allocation would start a
                # collection of all that).  The analysis leaves no reference cycle (a test keeps
                # it so); lowering a fix may (LibCST transformers made for one fix, `ast.dump`'s
                # helper), and where _lint lowered one, what the file left is collected first.
                if result is None or fixes and any(v.fix is not None and v.fix.intent is not None
                                                   for v in result.violations):
                    gc.collect(0)
                gc.freeze()
            gc.enable()


def parse_error(exc: Exception, where: str = "") -> Error:
    """The parser's exception as an error of its kind, `where` (" (line 3, column 5)") after its
    message."""
    if isinstance(exc, SyntaxError):
        return Error(ErrorKind.SYNTAX, f"SyntaxError: {exc.msg}{where}")
    # The parser's MemoryError ("(a and " * 400) comes without a message.
    why = str(exc) or "expressions nested too deeply for the parser"
    kind = ErrorKind.SYNTAX if isinstance(exc, ValueError) else ErrorKind.TOO_DEEP
    return Error(kind, f"{type(exc).__name__}: {why}{where}")


def _lint(text: str, rule_classes, options: Options, tree, honor_noqa: bool, project=None, path=None,
          fixes: bool = True, concrete=None, via_project: bool = False, whole: bool = False) -> LintResult:
    """`whole`: parse the file whole (not its function bodies on first use, lazytree.py): after a
    body that did not parse or was not where the file's layout put it."""
    active = _prefiltered(rule_classes, text)
    module = project.module_name(path) if project is not None and path else None
    # Rules that also report at calls of the project's functions (`to_numpy(out)`): a file
    # that imports a function from a module of its project in which such a rule may report.
    through = [cls for cls in rule_classes if cls.through_calls] if module is not None and "import" in text else []
    if through:
        from .through import sink_calls as _sink_calls

        sink_calls, plain_calls = _sink_calls(text, project, module, path)
    else:
        sink_calls = plain_calls = frozenset()
    prefiltered = frozenset(active)
    if sink_calls or plain_calls:
        active = [cls for cls in rule_classes if cls in active or cls in through and (
            plain_calls if cls.through_plain_needles else sink_calls)]
    # Rules whose trigger a module the file imports may define (Rule.imported_triggers).
    widened = [cls for cls in rule_classes if cls.imported_triggers is not None] \
        if module is not None and "import" in text else []
    triggers = frozenset()  # the names of those the file calls (`.update(`, `d_step(`)
    by_rule: dict = {}  # rule -> its triggers the file calls
    if widened:
        from .through import imported_triggers

        for cls, names in imported_triggers(text, project, module, path, widened).items():
            # (A call of the name; or, for `.attr` (a leaf attribute of another module's
            # class: InplaceOnLeaf), the attribute; a `__call__` (`stopper(loss, model)`: a call
            # of an instance, by any name) is taken as called.)
            found = frozenset(name for name in names
                              if name == "__call__" or (name if name[0] == "." else name + "(") in text)
            if found:
                by_rule[cls] = found
        triggers = frozenset().union(*by_rule.values())
        if triggers:
            active = [cls for cls in rule_classes if cls in active or cls in by_rule]
    if not active:
        return LintResult()
    # Each rule's scope test of the file's functions (Rule.scope_test): a function for which all
    # say no is not walked.  A file of which no rule may admit any function, nor the code outside
    # them (Rule.scope_any), is not parsed either: a fifth of a large model tree's files that pass
    # the pre-filter.
    # (A rule the file's text does not pass the pre-filter of, active for the calls it makes of
    # the project's functions in which the rule may report: it may report nowhere else.)
    tests = [cls.scope_test(text) if cls in prefiltered else _admits_nothing for cls in active]
    if triggers:
        tests = [cls.scope_test_imported(text, by_rule.get(cls, frozenset())) if cls in widened else test
                 for cls, test in zip(active, tests)]
    if not any(cls.scope_any(text, test) for cls, test in zip(active, tests)) and not (
            any(n in text for n in sink_calls) or any(n in text for n in plain_calls)):
        return LintResult()
    if sink_calls or plain_calls:
        # A function that calls one of them may report there (Context.call_sinks); for a rule
        # that asks only what copy-constructs a parameter (TNS202), one that calls such.
        tests = [(or_holds(test, plain_calls) if cls.through_plain_needles else or_holds(test, sink_calls))
                 if cls.through_calls else test for cls, test in zip(active, tests)]

    # (Each test once: rules may share one, TNS103 to TNS105 do.)
    unique = list(dict.fromkeys(tests))

    def scope_filter(segment: str) -> bool:
        return any(test(segment) for test in unique)

    spans = [getattr(test, "span", None) for test in unique]

    def span(start: int, end: int) -> bool:
        # The same question of `text[start:end]`, a function's lines, by offsets where a test
        # can answer so (Rule.scope_test: from what it found in the whole text).
        segment = None
        for test, at in zip(unique, spans):
            if at is not None:
                if at(start, end):
                    return True
                continue
            if segment is None:
                segment = text[start:end]
            if test(segment):
                return True
        return False

    scope_filter.span = span

    # A tree parsed here, for this check only, is released at its end (lazytree.release; the rare
    # paths that return early leave it to the cyclic collector).
    ours = tree is None
    if tree is None and module is not None and not whole:
        # Parsed for the summary of a module the project imports, with bodies on demand: unless
        # a body of it did not parse or was not where the layout put it (those read since as
        # what nothing says, which would hide the error here).
        tree = project.parsed(module, text)
        ours = tree is None
        origin = getattr(tree, "_lazy_origin", None)
        if origin is not None and origin.broken:
            tree, whole, ours = None, True, True
    admitted = layout = None
    if tree is None:
        if not whole:
            # The functions the scope filter admits, by the file's layout, before it is parsed:
            # where it admits none, nor the code outside them, no rule can report and the file
            # is not parsed (a third of the files of a large model tree that pass the tests of
            # the whole text, where the walker would ask the same of the parsed tree).
            # (Where it admits one, the skeleton's parse tells whether the layout was right: a
            # function not where it put it makes lazytree parse the file whole, whose tree's
            # functions the walker then asks.)
            layout = lazytree.layout(text)
            if layout is not None:
                admitted = {}
                if not any_admitted(text, ((f[4], f[0], f[11], f[10]) for f in layout), scope_filter, admitted):
                    if lazytree.is_sure(text, layout):
                        return LintResult()
                    admitted = None
        try:
            # The function bodies the analysis reads are parsed when it first reads them
            # (lazytree.py): of the files of a large model tree that are walked, most lines are
            # in functions no rule looks at.  The rest is parsed before anything is reported
            # (below), so that nothing is reported in a file that does not parse.
            tree = _parse(text) if whole else lazytree.parse(text, layout)
        except SyntaxError as exc:
            return LintResult(error=parse_error(exc, f" (line {exc.lineno}, column {exc.offset})"))
        except (ValueError, RecursionError, MemoryError) as exc:
            return LintResult(error=parse_error(exc))
    lines = LineIndex(text)
    ctx = Context(lines, options)
    if sink_calls or plain_calls:
        ctx.sink_names = frozenset(project.through.names)
    instances = [cls(options) for cls in active]
    if admitted is not None and getattr(tree, "_lazy_origin", None) is None:
        admitted = None  # (not parsed as laid out, or not laid out: the tree's functions are asked)
    domains = make_domains({k for cls in active for k in cls.domains}, options, text)
    if triggers:
        # Each domain by the triggers of the rules that ask it (TNS503's meter methods are not
        # TNS501's snapshot helpers, nor TNS401's leaf factories either).
        for d in domains:
            own = frozenset().union(*(names for cls, names in by_rule.items() if d.key in cls.domains))
            if own:
                d.widen(own)
    walker = Walker(tree, instances, ctx, scope_filter, domains, project=project, module=module,
                    module_is_package=bool(path) and path.endswith("__init__.py"), admitted=admitted)
    try:
        walker.run()
        saw_torch = walker.saw_torch
        if ctx.violations:
            # Something to report: the bodies not read yet are parsed first (a syntax error in
            # one is reported instead, as it would have been by a whole parse).
            lazytree.read_unread(tree)
    except Reparse:
        # A body that does not parse, or whose layout was wrong (lazytree.py): the file is
        # parsed whole and analysed again.
        walker.release()
        return _lint(text, rule_classes, options, None, honor_noqa, project, path, fixes, concrete, via_project,
                     whole=True)
    except RecursionError:
        v = Violation(
            INTERNAL,
            "file not analysed: expressions nested too deeply for the analysis; "
            "split the expression or exclude the file",
            1,
            0,
            1,
            0,
        )
        return LintResult([] if honor_noqa and _suppressed(lines, v) else [v], parsed=True)
    finally:
        # The walker, its context, domains and scopes refer to each other: cycles that would
        # keep the file's tree and every fact alive until the cyclic collector finds them (a
        # tenth of a large tree's check, traversing them).  Cut here, it all goes at once.
        walker.release()
    violations = ctx.violations
    if not saw_torch and not via_project:
        torch_free = {cls.code for cls in active if not cls.needs_torch}
        if project is not None and path and any(v.code not in torch_free for v in violations):
            # A file that mentions torch but does not import it (`to_torch(x)`, a comment), whose
            # tensors come from its project's modules (lint_text asks only of a file that never
            # mentions torch).
            looked: list = []
            via_project = torch_through_project(text, path, project.root, looked)
            for dep in looked:
                project.touched[dep] = project.digest_of(dep)
            if via_project and options.strict:
                # What the project makes certain, as for a file that never mentions torch.
                return _lint(text, rule_classes, options.replace(strict=False), tree, honor_noqa, project, path,
                             fixes, concrete, True, whole)
        if not via_project:
            violations = [v for v in violations if v.code in torch_free]
    seen = set()
    kept = []
    for v in sorted(violations, key=lambda v: (v.line, v.col, v.code)):
        key = (v.code, v.line, v.col, v.end_line, v.end_col)
        if key in seen:
            continue
        seen.add(key)
        # Whether `# noqa` silences it: for the front ends that honour it, and for a finding that
        # covers another (below); the flake8 plugin leaves the rest to flake8.
        kept.append((v, (honor_noqa or v.code in _SUBSUMES) and _suppressed(lines, v)))
    # One finding per expression: where a rule's finding covers another's (TNS101 names and fixes
    # TNS102's hazard too), the covered one goes, unless the covering one is suppressed there.
    covers = {(code, v.line, v.col, v.end_line, v.end_col)
              for v, suppressed in kept if not suppressed for code in _SUBSUMES.get(v.code, ())}
    out = [v for v, suppressed in kept
           if (v.code, v.line, v.col, v.end_line, v.end_col) not in covers and not (honor_noqa and suppressed)]
    if fixes and any(v.fix is not None and v.fix.intent is not None and not v.fix.edits for v in out):
        # Imported here: a file with nothing to fix never loads it (nor LibCST).
        from .lowering import lower

        out = lower(out, lines, tree, concrete)
    if ours:
        lazytree.release(tree)
    return LintResult(out, parsed=True)


_SUBSUMES = {cls.code: cls.subsumes for cls in all_rules() if cls.subsumes}
_PLAIN_PREFILTER = Rule.might_match.__func__


def _admits_nothing(segment: str) -> bool:
    return False


def _prefiltered(rule_classes, text: str) -> list:
    """The rules whose pre-filter `text` passes.  Each substring of the plain pre-filters is
    searched for once (rules share them: `numpy`, `np.`), and one that contains a shorter one
    only if that is there (`.numpy(` after `numpy`): on a file without them, each is a scan of
    the whole text."""
    found: dict = {}

    def contains(needle: str) -> bool:
        hit = found.get(needle)
        if hit is None:
            # (Each needle inside it is looked up, or searched for, itself: the answer is whether
            # the needle is in the text either way.  Not by a call of `contains`: a nested function
            # that calls itself refers to itself through its closure, a cycle that would keep the
            # text until the cyclic collector came by.)
            hit = True
            for shorter in _INSIDE.get(needle, ()):
                known = found.get(shorter)
                if known is None:
                    known = found[shorter] = has_literal(text, shorter)
                if not known:
                    hit = False
                    break
            if hit:
                hit = has_literal(text, needle)
            found[needle] = hit
        return hit

    return [cls for cls in rule_classes
            if (any(contains(s) for s in cls.prefilter) or not cls.prefilter
                if cls.might_match.__func__ is _PLAIN_PREFILTER else cls.might_match(text))]


_NEEDLES = {s for cls in all_rules() if cls.might_match.__func__ is _PLAIN_PREFILTER for s in cls.prefilter}
_INSIDE = {s: tuple(t for t in _NEEDLES if t != s and t in s) for s in _NEEDLES}


def _suppressed(lines: LineIndex, v: Violation) -> bool:
    """`# noqa` with flake8's semantics (noqa.py), so that every front end agrees with flake8.
    (Imported on first use, as `select_rules` below: the flake8 plugin needs neither.)"""
    from . import noqa

    return noqa.suppressed(lines, v.line, v.code)


def __getattr__(name: str):
    if name == "select_rules":  # selection.py's, re-exported for the front ends and the tests
        from .selection import select_rules

        return select_rules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- fixes


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


def choose_fixes(text: str, violations: list[Violation], unsafe: bool = False):
    """(applied, skipped): the fixes of `violations` that apply to `text` together, in order, each
    one unless it overlaps one chosen before it (it waits for the next pass), its edits are not
    where the rule thought (`Edit.expect`) or they are malformed.  A fix shared by several findings
    (lowering.py) applies once, for the first of them."""
    applied, skipped = [], []
    starts: list[int] = []
    ends: list[int] = []
    points: list[int] = []
    taken: set = set()
    for v in violations:
        fix = v.fix
        if fix is None or not fix.applies(unsafe):
            continue
        if id(fix) in taken:
            skipped.append(v)
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
        applied.append(v)
        taken.add(id(fix))
    return applied, skipped


def splice_fixes(text: str, edits) -> str:
    """`text` with `edits` (start, end, new text, rule code, Edit.seq), none overlapping another,
    in place: the one order of edits for every kind of text (insertions at one point go in code
    order, then in the order their rule made them)."""
    ordered = sorted(edits, key=lambda e: (e[0], e[1], e[3], e[4]))
    return splice(text, ((s, t, new) for s, t, new, _code, _seq in ordered))


def apply_fixes(text: str, violations: list[Violation], unsafe: bool = False):
    """Apply the non-conflicting fixes once (choose_fixes). Returns (new_text, applied, skipped)."""
    applied, skipped = choose_fixes(text, violations, unsafe)
    if not applied:
        return text, applied, skipped
    return TextTarget(text).with_fixes(applied).text, applied, skipped


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


class TextTarget:
    """A text the fix loop (`fix_passes`) fixes: plain source.  The loop asks a target to lint
    itself, which fixes can apply to it, and for the target with the chosen fixes applied; a
    notebook's code cells (notebook.CellsTarget) answer the same questions with the cells joined
    into one program, its magics' placeholders protected."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def lint(self, lint) -> LintResult:
        return lint(self.text)

    def can_fix(self, v: Violation) -> bool:
        return True

    def with_fixes(self, violations) -> TextTarget:
        """The target with the fixes of `violations` (chosen by choose_fixes) applied."""
        return TextTarget(splice_fixes(self.text, ((e.start, e.end, e.text, v.code, e.seq)
                                                   for v in violations for e in v.fix.edits)))

    def parses(self) -> bool:
        return _parses(self.text)

    def where(self, v: Violation) -> str:
        return f"{v.code} at line {v.line}"


class FixResult:
    """What fixing one text did (a plain class, like LintResult)."""

    __slots__ = ("text", "applied", "remaining", "error")

    def __init__(self, text: str, applied: list[Violation], remaining: list[Violation],
                 error: Error | None = None) -> None:
        self.text = text
        self.applied = applied
        self.remaining = remaining
        self.error = error

    def __repr__(self) -> str:
        return (f"FixResult(text={self.text!r}, applied={self.applied!r}, remaining={self.remaining!r}, "
                f"error={self.error!r})")


def fix_passes(target, lint, unsafe: bool = False, max_passes: int | None = None):
    """Apply fixes to `target` until none is left to apply (each pass re-lints the fixed text):
    the one fix loop, for plain text and notebooks.  `lint(text)` lints a text.  Returns
    (the fixed target, the violations fixed, the ones left, an Error or None).

    Overlapping fixes (nested calls) are applied one per pass, so a pass limit must grow with
    them: by default it is the number of fixable findings the first pass sees, plus a margin
    for findings that only appear once a fix is in.  Every pass applies at least one fix or
    ends the loop, and each costs one lint of the text (no per-fix re-lint).  A pass whose fixes
    produce code that does not parse is a bug in a rule: then nothing is fixed, and the error
    says which fixes."""
    applied_all: list[Violation] = []
    current = target
    passes = 0
    limit = max_passes
    while True:
        result = current.lint(lint)
        if result.error:
            return current, applied_all, [], result.error
        fixable = [v for v in result.violations if v.fix is not None and v.fix.applies(unsafe) and current.can_fix(v)]
        if limit is None:
            limit = _EXTRA_PASSES + len(fixable)
        if passes >= limit:
            return current, applied_all, result.violations, None
        applied, _skipped = choose_fixes(current.text, fixable, unsafe)
        if not applied:
            return current, applied_all, result.violations, None
        new = current.with_fixes(applied)
        if not new.parses():
            culprits = [v for v in applied if not current.with_fixes([v]).parses()] or applied
            where = ", ".join(sorted({current.where(v) for v in culprits}))
            return target, [], target.lint(lint).violations, Error(
                ErrorKind.BROKEN_FIX, f"a fix produced code that does not parse: {where}; no fix was applied to this "
                "file (please report it)")
        applied_all.extend(applied)
        current = new
        passes += 1


# fix_passes: passes allowed beyond the number of fixable findings first seen.
_EXTRA_PASSES = 10


def fix_text(
    text: str,
    rules: list[type[Rule]] | None = None,
    options: Options | None = None,
    unsafe: bool = False,
    max_passes: int | None = None,
    project=None,
    path: str | None = None,
    concrete=None,
) -> FixResult:
    """Apply fixes to one module's source text until none is left to apply (`fix_passes`).
    `concrete`: a LibCST tree of `text` (the codemod's, see lint_text), used by the first pass."""

    def lint(current: str) -> LintResult:
        return lint_text(current, rules, options, project=project, path=path,
                         concrete=concrete if current is text else None)

    fixed, applied, remaining, error = fix_passes(TextTarget(text), lint, unsafe, max_passes)
    return FixResult(fixed.text, applied, remaining, error)
