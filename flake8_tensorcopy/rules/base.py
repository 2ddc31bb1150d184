"""The rule framework: a rule is one class with its code, message, fix, docs and examples.

Subclassing `Rule` with a `code` registers the rule.  The test suite is generated from each
rule's VALID/INVALID examples (linted, fixed, and executed on real torch), and `tensorcopy
explain CODE` prints its docs.
"""

from __future__ import annotations

import ast
import re

# The data model lives in model.py, below the rules; re-exported for the callers that import it
# from the rule framework.
from ..model import REQUIRED, Edit, Fix, FixSafety, Options, Record, Violation  # noqa: F401
from ..source import LineIndex

# For type checkers only: the annotations are strings, and typing costs a few ms of every start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References")

_REGISTRY: dict[str, type[Rule]] = {}


# --------------------------------------------------------------------------- examples


def dedent(text: str) -> str:
    """Example code written as a triple-quoted string indented with the code around it: the
    newline after the opening quotes dropped, and the indentation of the closing quotes (on a line
    of their own) removed from every line, as in Swift's and Java's text blocks.

        Valid(dedent('''
            import torch
            x = torch.ones(3)
            '''))

    (Not textwrap.dedent: every start imports the rules and their examples, and this is a single
    str.replace.)"""
    closing = text[text.rfind("\n"):]  # a newline and the closing quotes' indentation
    return text.replace(closing, "\n")[1:]


# Every start builds the examples (about 230 records), so they are Records (not dataclasses: a
# dataclass costs half a millisecond to define) with an `__init__` written out (a third of the
# generic one's cost).
_set = object.__setattr__


class Oracle(Record):
    """What real torch does when an example runs (checked by tests/test_runtime_oracle.py).

    raises: (exception type name, substring of its message) the bad code raises.
    warns: (warning category name, substring) the bad code warns.
    grad_fn: an autograd node type (e.g. "CloneBackward0") that the bad code creates and the
        fixed code does not.
    check_bad / check_fixed: Python expressions that must be true after the code ran.
    same: variable names whose values must be equal after the bad and the fixed code.
    """

    _FIELDS = (("raises", None), ("warns", None), ("grad_fn", None), ("check_bad", None), ("check_fixed", None),
               ("same", ()))
    __slots__ = tuple(n for n, _ in _FIELDS)

    def __init__(self, raises=None, warns=None, grad_fn=None, check_bad=None, check_fixed=None, same=()) -> None:
        _set(self, "raises", raises)
        _set(self, "warns", warns)
        _set(self, "grad_fn", grad_fn)
        _set(self, "check_bad", check_bad)
        _set(self, "check_fixed", check_fixed)
        _set(self, "same", same)


class _Example(Record):
    """An example; `options` defaults to a fresh {}."""

    __slots__ = ()


class Valid(_Example):
    _FIELDS = (
        ("code", REQUIRED),
        # True: the example is a complete program that must run on real torch without error
        # or warning.
        ("runs", False),
        ("options", None),  # Options fields for this example
    )
    __slots__ = tuple(n for n, _ in _FIELDS)

    def __init__(self, code, runs=False, options=None) -> None:
        _set(self, "code", code)
        _set(self, "runs", runs)
        _set(self, "options", {} if options is None else options)


class Invalid(_Example):
    _FIELDS = (
        ("code", REQUIRED),
        ("line", REQUIRED),  # 1-based line of the reported expression
        ("col", REQUIRED),  # 0-based character column
        ("fixed", None),  # the source after `tensorcopy fix` (None: no fix applies)
        ("oracle", None),  # an Oracle
        ("unsafe", False),  # the fix is applied only with --unsafe-fixes
        ("options", None),  # Options fields for this example
        # Other codes the example is expected to raise as well (e.g. TNS101 with TNS102).
        ("also", ()),
    )
    __slots__ = tuple(n for n, _ in _FIELDS)

    def __init__(self, code, line, col, fixed=None, oracle=None, unsafe=False, options=None, also=()) -> None:
        _set(self, "code", code)
        _set(self, "line", line)
        _set(self, "col", col)
        _set(self, "fixed", fixed)
        _set(self, "oracle", oracle)
        _set(self, "unsafe", unsafe)
        _set(self, "options", {} if options is None else options)
        _set(self, "also", also)


# --------------------------------------------------------------------------- rules


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    message: ClassVar[str] = ""
    fix_title: ClassVar[str | None] = None
    fix_safety: ClassVar[str | None] = None  # a FixSafety value ("safe", "unsafe"), or None: no automatic fix
    docs: ClassVar[str] = ""
    # Substrings of which at least one must be in a file for the rule to find anything.
    prefilter: ClassVar[tuple] = ()
    # Domains of the walker the rule asks (`ctx.domain(key)`): "gan", "storage".
    domains: ClassVar[tuple] = ()
    # Hazard rules report only in files that use torch (TensorFlow and JAX have `.numpy()` too);
    # an idiom rule may say False.
    needs_torch: ClassVar[bool] = True
    # Whether the rule also reports at a call of a function of another project module inside
    # which it reports for the call's arguments (`to_numpy(out)`, `def to_numpy(t): return
    # t.numpy()` in utils.py): the engine then walks files that call such a function, and
    # walks the function for those arguments (Context.call_sinks).
    through_calls: ClassVar[bool] = False
    # What the text of such a function must hold for the rule to be asked of its calls
    # (`.numpy(`): a cheap first test of the modules a file imports (through.py), and, by
    # default, of each function (`through_admits`).
    through_needles: ClassVar[tuple] = ()
    # For a rule that reports through calls only what a function copy-constructs
    # (`through_plain_parameters`, TNS202): what the bytes of a module that holds one say
    # (Through.plain_parameters); its walks are of the functions that call such (engine:
    # Through's plain calls), not of those the needles above admit.
    through_plain_needles: ClassVar[tuple] = ()
    # For a rule whose trigger may be defined in a module the file imports (TNS503: a meter
    # class in utils.py whose `update` adds what it is given): a function of such a module's
    # text -> {name the module defines: method names whose calls (`.update(`) may trigger it}.
    # The engine then takes the rule's `scope_test_imported(text, names)` (which such a rule
    # defines) for the file, with the method names of the names it imports that it calls, and
    # tells the domains (Domain.widen).
    imported_triggers: ClassVar = None
    # A pattern over a module's bytes that must match for `imported_triggers` to find anything
    # (the module is not decoded otherwise).
    imported_needle: ClassVar = None
    # Codes whose finding on the same expression this rule's finding covers (TNS101 says what
    # TNS102 would, and fixes both): the engine keeps one.
    subsumes: ClassVar[tuple] = ()
    VALID: ClassVar[list] = []
    INVALID: ClassVar[list] = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.code:
            if cls.code in _REGISTRY and _REGISTRY[cls.code] is not cls:
                raise ValueError(f"rule code {cls.code} is used by {_REGISTRY[cls.code].__name__} and {cls.__name__}")
            _REGISTRY[cls.code] = cls

    def __init__(self, options: Options) -> None:
        self.options = options

    @classmethod
    def might_match(cls, text: str) -> bool:
        return any(s in text for s in cls.prefilter) if cls.prefilter else True

    @classmethod
    def through_bytes(cls, data: bytes) -> bool:
        """Whether a module's bytes hold a needle (the needles are ASCII: in the bytes of any
        encoding Python reads source in)."""
        return any(n.encode() in data for n in cls.through_needles)

    @classmethod
    def through_admits(cls, segment: str) -> bool:
        """Whether a function of another module whose text is `segment` may be where the rule
        reports for a call's arguments (a rule with `through_calls`): it holds a needle."""
        return any(n in segment for n in cls.through_needles)

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        """Whether a finding may be reported inside a function whose source is `text`.

        Functions for which no enabled rule says yes are not walked to report, unless they call
        (down a chain of calls) one that is, to which they pass facts (walker._callers_first);
        the functions they call are summarised on demand either way.  The default, the file pre-filter, is right for a rule
        whose trigger text stands in the function where it reports; a rule that reports from
        facts gathered in other functions must override this."""
        return cls.might_match(text)

    @classmethod
    def scope_test(cls, text: str):
        """The test `might_match_scope` makes, for the functions of one file whose source is
        `text`: a rule whose trigger depends on the file's imports (`from numpy import asarray`
        makes `asarray(` a NumPy call) returns a test that knows them.  A test may also answer
        by offsets: `test.span(start, end)`, what it says of `text[start:end]`, a run of whole
        lines (a function's), from what it found in the whole text (TNS401: the writes).  A
        rule with `imported_triggers` gets its `scope_test_imported` with none imported."""
        if cls.imported_triggers is not None:
            return cls.scope_test_imported(text, frozenset())
        return cls.might_match_scope

    @classmethod
    def scope_test_imported(cls, text: str, names: frozenset):
        """`scope_test` for a file that calls `names`, the `imported_triggers` of the modules
        it imports (a rule that has them defines it)."""
        raise NotImplementedError

    @classmethod
    def through_plain_parameters(cls, segment: str) -> frozenset:
        """The parameters of a function of another module (its source `segment`) for which this
        rule reports through calls also what is a torch tensor that requires no grad (TNS202:
        those it copy-constructs); none by default."""
        return frozenset()

    @classmethod
    def through_scope_test(cls, text: str):
        """The scope test of the functions of a module whose source is `text` where another
        module calls one of them with its arguments (through.py): `scope_test(text)`, unless
        that asks how the module itself calls its functions (TNS401)."""
        return cls.scope_test(text)

    @classmethod
    def scope_any(cls, text: str, test) -> bool:
        """Whether `test` (the rule's `scope_test(text)`, or `scope_test_imported`'s) may admit a
        function of the file whose source is `text`, or the file's code outside its functions:
        where no rule may, the file is not parsed.  It must say yes whenever the test says yes
        of some part of the text.  The default asks the test of the whole text: right for a test
        that searches its text for triggers (one found in a part is found in the whole); a test
        that reads a function's header or counts its lines must say what its triggers are."""
        return test(text)

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        sections: dict[str, str] = {}
        current = None
        for line in cls.docs.strip("\n").splitlines():
            m = re.match(r"^## (.+?)\s*$", line.strip())
            if m:
                current = m.group(1)
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        return {k: v.strip("\n") for k, v in sections.items()}

    @classmethod
    def explain(cls) -> str:
        import textwrap

        head = f"# {cls.code} ({cls.name})\n\n"
        fix = f"Fix: {cls.fix_title} ({cls.fix_safety})" if cls.fix_safety else "Fix: none (manual change)"
        return head + f"Message: {cls.message}\n{fix}\n\n" + textwrap.dedent(cls.docs).strip() + "\n"


def all_rules() -> list[type[Rule]]:
    return [_REGISTRY[c] for c in sorted(_REGISTRY)]


def get_rule(code: str) -> type[Rule] | None:
    return _REGISTRY.get(code.upper())


# --------------------------------------------------------------------------- context


class Context:
    """What a rule can ask at the current program point (answered by the walker), and where it
    reports.  Read-only for rules: they ask, they never walk statements."""

    def __init__(self, lines: LineIndex, options: Options) -> None:
        self.lines = lines
        self.options = options
        self.walker = None  # set by the walker
        self.violations: list[Violation] = []
        # In a walk of another module's function for one call's arguments (through.Through.check):
        # the least grad the arguments have on every path (facts.must_grad), which the rules
        # that report through calls ask of what they report there.  None elsewhere.
        self.through_call = None
        self._last_sinks = None  # (call, state, call_sinks of it): the last asked
        # In such a walk: (code, line) of the findings whose value is a leaf that requires grad
        # (a parameter of a module the call passes: `for p in model.parameters(): p.numpy()`),
        # which the message names so, not as what the module computes (through.Through._differ).
        self.through_leaves: set = set()
        # The names of the project's functions that may report through calls (`to_numpy`):
        # a call of another name is not asked (Context.call_sinks).  Set by the engine.
        self.sink_names: frozenset = frozenset()

    # where the walker is
    @property
    def scope(self):
        return self.walker.frame.scope

    @property
    def state(self):
        return self.walker.frame.state

    @property
    def stmt(self):
        """The statement being walked."""
        return self.walker.frame.stmt

    @property
    def tree(self):
        return self.walker.tree

    @property
    def imported_packages(self) -> set:
        """Top-level packages the file imports (`torch`, `paddle`, ...)."""
        return self.walker.imported

    # analysis queries
    def fact(self, node):
        return self.walker.fact(node, self.walker.frame.state)

    def qualname(self, node) -> str | None:
        return self.walker.qualname(node, self.walker.frame.state)

    @property
    def no_grad(self) -> bool:
        """Grad mode is off, or may be off, here."""
        return self.walker.frame.state.no_grad

    @property
    def in_lambda(self) -> bool:
        """The node is inside a lambda (it runs later, maybe under another grad mode)."""
        return self.walker.frame.in_lambda

    @property
    def expects_error(self) -> bool:
        """Inside `with pytest.raises(...)` / `self.assertRaises(...)`: the error is the point."""
        return self.walker.frame.expects_error > 0

    def block_of(self, stmt):
        """(statement list, index, owner node) of a statement of the current scope, or None."""
        return self.walker.frame.blocks.get(id(stmt))

    def domain(self, key: str):
        """What a domain of the walker concluded for the current scope (None if not active)."""
        return self.walker.frame.doms.get(key)

    def source_of(self, node) -> str:
        return self.walker.source_of(node)

    def call_sinks(self, call) -> list:
        """[(argument, code, "file.py:line"), ...]: the findings a call of a function of another
        project module makes inside it, for each argument that requires grad it passes (a tensor,
        an iterable of them, a torch module: walker.call_sinks).  (Asked by each rule that reports
        through calls at the same call in the same state: answered once.)"""
        state = self.walker.frame.state
        last = self._last_sinks
        if last is not None and last[0] is call and last[1] is state:
            return last[2]
        found = self.walker.call_sinks(call, state)
        self._last_sinks = (call, state, found)
        return found

    def call_sink(self, rule, call):
        """(argument, the callee's text, "file.py:line", whether what it reports there is a
        parameter of the module the argument is) of the first argument of `call` for which
        `rule` reports inside the function it calls (call_sinks), or None."""
        for arg, code, where, params in self.call_sinks(call):
            if code == rule.code:
                # (`net.apply(init_weights)`, reported at `net`: the function is `init_weights`.)
                applied = type(call.func) is ast.Attribute and arg is call.func.value
                return arg, self._callee(call, "the function", call.args[0] if applied else None), where, params
        return None

    def _callee(self, call, fallback: str, node=None) -> str:
        """The text of what `call` calls (or of `node`), for a message: `fallback` when it is
        long."""
        callee = self.text(call.func if node is None else node)
        return callee if len(callee) <= 30 and "\n" not in callee else fallback

    def kept_sink(self, rule, call):
        """(argument, the callee's text, the text of the method that converts it, "file.py:line")
        for `logger.log(loss)`, where a method of another module's class keeps what it is passed
        and `rule` reports in another of its methods that the file calls on the same instance
        (`logger.dump()`: walker.kept_sinks), or None."""
        for arg, code, where, method in self.walker.kept_sinks(call, self.walker.frame.state):
            if code == rule.code:
                recv = self.text(call.func.value)
                reader = f"{recv}.{method}" if len(recv) + len(method) < 30 and "\n" not in recv else "the method"
                return arg, self._callee(call, "the method"), reader, where
        return None

    def method_sink(self, rule, call):
        """(the receiver, its attribute, the method's text, "file.py:line", whether what it reports
        is a parameter of the module the attribute holds) for `t.predict(x)`, where `rule`
        reports inside method `predict` of another module's class for what the constructor call
        of `t` gave attribute `t.model` (walker.method_sinks), or None."""
        for attr, code, where, params in self.walker.method_sinks(call, self.walker.frame.state):
            if code == rule.code:
                return call.func.value, attr, self._callee(call, "the method"), where, params
        return None

    def origin(self, node, about: str = "grad") -> str:
        """" (passed at line 12)" when what the message says of `node` (`about`: "grad", "device"
        or "kind") comes from the file's calls of the function it is a parameter of, else ""."""
        fact = self.fact(node)
        known = {"grad": fact.grad.name == "YES", "device": fact.device.name == "ACCEL", "kind": True}[about]
        if fact.kind != "tensor" or not known:
            return ""  # the calls did not make it a hazard
        parts = []
        # The calls that passed what the message says (summaries._from_site): a tensor that
        # requires grad, one on an accelerator, a tensor.
        prefix = {"grad": "callsite-grad:", "device": "callsite-device:", "kind": "callsite-tensor:"}[about]
        lines = sorted({int(t[len(prefix):]) for t in fact.tags if t.startswith(prefix)})
        if lines:
            shown = ", ".join(str(n) for n in lines[:3]) + (", ..." if len(lines) > 3 else "")
            parts.append(f"passed at line{'s' if len(lines) > 1 else ''} {shown}")
        # Facts that come from another file of the project say where: `Critic: an nn.Module, models.py:12`.
        parts.extend(sorted(t[8:] for t in fact.tags if t.startswith("defined:"))[:2])
        return f" ({'; '.join(parts)})" if parts else ""

    # source text
    def span(self, node) -> tuple[int, int]:
        return self.lines.node_span(node)

    def text(self, node) -> str:
        s, e = self.lines.node_span(node)
        return self.lines.text[s:e]

    def short(self, node, limit: int = 40) -> str:
        """The expression's source for a message, or `<expr>` when long or multi-line."""
        t = self.text(node)
        return t if len(t) <= limit and "\n" not in t else "<expr>"

    def shortened(self, node, limit: int = 50) -> str:
        """The expression's source on one line for a message, shortened where long: a call keeps
        its callee and first argument (`torch.tensor(features, ...)`)."""
        text = " ".join(self.text(node).split())
        if len(text) <= limit:
            return text
        if isinstance(node, ast.Call):
            callee = " ".join(self.text(node.func).split())
            first = self.short(node.args[0], 24) if node.args else ""
            more = len(node.args) + len(node.keywords) > (1 if node.args else 0)
            if first == "<expr>":
                first = "..."
                more = False
            shown = f"{callee}({first}{', ...' if more else ''})"
            if len(shown) <= limit + 10:
                return shown
        return text[: limit - 3].rstrip() + "..."

    # reporting
    def report(self, rule: Rule, node: ast.AST, fix: Fix | None = None, **fields) -> None:
        """Report `node`: the message is always the rule's `message` template with `fields` (one
        message source for the CLI, flake8, the editor, the docs and SARIF)."""
        lines = self.lines
        line = node.lineno
        col = lines.char_col(line, node.col_offset)
        end_line = getattr(node, "end_lineno", line) or line
        end_col = lines.char_col(end_line, node.end_col_offset) if node.end_col_offset is not None else col
        msg = rule.message.format(**fields)
        self.violations.append(Violation(rule.code, msg, line, col, end_line, end_col, fix))
        if self.through_call is not None and self._converts_a_leaf(node):
            self.through_leaves.add((rule.code, line))

    def _converts_a_leaf(self, node) -> bool:
        """Whether a name or an attribute in `node` (what a finding reports) holds a leaf that
        requires grad."""
        for n in ast.walk(node):
            if type(n) is ast.Name or type(n) is ast.Attribute:
                f = self.fact(n)
                if f.kind == "tensor" and f.leaf and f.grad.name == "YES":
                    return True
        return False
