"""Property-based fuzzing: the engine, the flake8 plugin and `fix` never crash and never corrupt.

Programs come from four sources:

- `programs()`: PyTorch-flavoured programs assembled from statement and expression templates
  (copy idioms, grad-mode contexts, functions, classes, loops, `match`, odd whitespace, form
  feeds, non-ASCII text, CRLF / lone CR / mixed line endings, comments inside calls);
- mutations of the fixtures (fixtures/**/*.py) and of every rule's VALID/INVALID example code:
  deleted, duplicated and swapped lines, shuffled statements, renames of the words the rules
  key on (`detach`, `clone`, `numpy`, `no_grad`, `backward`, `requires_grad`, ...) and
  NFKC homoglyphs of them, inserted syntax errors, truncation, re-indentation;
- `hypothesmith.from_grammar()` programs with template statements woven in between their
  top-level statements (the grammar alone never mentions torch, so no rule would run);
- `hypothesmith.from_node()` (LibCST-generated) programs, woven the same way.

For every program: nothing raises; every finding has sane positions; every edit's `expect`
matches the text it replaces and a fix's edits never overlap; each fix pass changes nothing
outside the edits it applied (checked exactly, pass by pass); the fixed text parses, and
compiles when the input did; fixing again changes nothing; no safe-fixable finding is left;
the flake8 plugin class yields no internal error; and `tensorcopy fix` on disk keeps the
encoding, BOM and every byte outside the fixes.

Budget: the "ci" hypothesis profile (tests/conftest.py, the default) runs a fixed number of
derandomized examples.  `--hypothesis-profile=long` or TENSORCOPY_FUZZ=long turns each test
into a soak run of fresh random rounds for TENSORCOPY_FUZZ_MINUTES (default 20) minutes in
all, and enables the corpus smoke test (the benchmark corpus built by benchmarks/corpus.py).
Set TENSORCOPY_FUZZ_STATS=path.json to get the figures (programs, files, seconds) written out.
"""

from __future__ import annotations

import ast
import collections
import glob
import io
import json
import os
import random
import re
import subprocess
import tempfile
import time
import warnings

import hypothesmith
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, tool
from flake8_tensorcopy.cli import Job, process
from flake8_tensorcopy.engine import apply_fixes, fix_text, lint_text
from flake8_tensorcopy.plugin import TensorCopyChecker
from flake8_tensorcopy.rules import all_rules
from flake8_tensorcopy.rules.base import Options
from flake8_tensorcopy.source import LineIndex, decode

_profile = getattr(settings, "get_current_profile_name", lambda: "ci")()
LONG = _profile.startswith("long") or os.environ.get("TENSORCOPY_FUZZ") == "long"
MINUTES = float(os.environ.get("TENSORCOPY_FUZZ_MINUTES", "20"))

STATS: dict = collections.defaultdict(collections.Counter)
_START = time.monotonic()


def examples(ci: int, long_round: int | None = None) -> settings:
    """`ci` examples in the default profile; rounds of `long_round` in the soak run."""
    return settings(max_examples=(long_round or ci * 2) if LONG else ci)


def soak(test, share: float, name: str) -> None:
    """Run a @given test once (ci), or in fresh random rounds for its share of the soak time."""
    t0 = time.monotonic()
    end = t0 + MINUTES * 60 * share
    try:
        while True:
            test()
            STATS[name]["rounds"] += 1
            if not LONG or time.monotonic() >= end:
                break
    finally:
        STATS[name]["seconds"] += round(time.monotonic() - t0, 1)


@pytest.fixture(scope="module", autouse=True)
def _report_figures():
    yield
    figures = {k: dict(v) for k, v in STATS.items()}
    figures["_total_seconds"] = round(time.monotonic() - _START, 1)
    figures["_profile"] = "long" if LONG else "ci"
    out = os.environ.get("TENSORCOPY_FUZZ_STATS")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=2, sort_keys=True)
    print("\nfuzz figures:", json.dumps(figures, sort_keys=True))


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="tensorcopy-fuzz-") as d:
        yield d


# ============================================================================ the properties

RULES = all_rules()
CODES = tuple(r.code for r in RULES)
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def _parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
            return True
        except _PARSE_ERRORS:
            return False


def _compiles(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<fuzz>", "exec", dont_inherit=True)
            return True
        except _PARSE_ERRORS:
            return False


def _where(src: str) -> str:
    return f"\n--- program ---\n{src!r}\n"


def check_violations(src: str, violations, allow_tns000: bool = False) -> None:
    """Positions in range; edits in range, matching their `expect`, not overlapping each other."""
    idx = LineIndex(src)
    nlines = len(idx.starts)
    for v in violations:
        assert v.code.startswith("TNS") and v.message, v
        if v.code == "TNS000":
            assert allow_tns000, f"unexpected TNS000: {v.message}{_where(src)}"
            continue
        assert 1 <= v.line <= v.end_line <= nlines, (v, nlines, _where(src))
        assert 0 <= v.col <= len(idx.line(v.line)), (v, _where(src))
        assert 0 <= v.end_col <= len(idx.line(v.end_line)), (v, _where(src))
        assert (v.line, v.col) <= (v.end_line, v.end_col), v
        if v.fix is None:
            continue
        assert v.fix.safety in ("safe", "unsafe") and v.fix.edits, v
        for e in v.fix.edits:
            assert 0 <= e.start <= e.end <= len(src), (v.code, e, _where(src))
            if e.expect is not None:
                assert src[e.start : e.end] == e.expect, (
                    f"{v.code} edit at {e.start}:{e.end} expects {e.expect!r} but the text there is "
                    f"{src[e.start:e.end]!r}{_where(src)}"
                )
        spans = sorted((e.start, e.end) for e in v.fix.edits)
        for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
            assert e1 <= s2 and (s1, e1) != (s2, e2) or s1 == e1 == s2 == e2, (
                f"{v.code}: its own edits overlap{_where(src)}")


def check_outside_unchanged(src: str, new: str, applied) -> None:
    """Exact: `new` is `src` with each applied edit's span replaced by a text of the edit's length,
    and nothing else changed (walks the gaps between edits using only their lengths)."""
    edits = sorted((e for v in applied for e in v.fix.edits), key=lambda e: (e.start, e.end))
    ps = pn = 0
    for e in edits:
        assert e.start >= ps, f"applied edits overlap at {e.start}{_where(src)}"
        gap = src[ps : e.start]
        assert new[pn : pn + len(gap)] == gap, f"text outside the fixes changed near offset {ps}{_where(src)}"
        assert new[pn + len(gap) : pn + len(gap) + len(e.text)] == e.text, f"edit text misplaced{_where(src)}"
        pn += len(gap) + len(e.text)
        ps = e.end
    assert new[pn:] == src[ps:], f"text after the last fix changed{_where(src)}"


def replay_fix(src: str, options: Options, unsafe: bool, allow_tns000: bool = False,
               stats=None) -> tuple[str, int]:
    """fix_text's passes, one by one, checking each; returns (final text, fixes applied)."""
    current, count = src, 0
    for n in range(10):
        result = lint_text(current, RULES, options)
        if result.error:
            return current, count
        check_violations(current, result.violations, allow_tns000)
        if n == 0 and stats is not None:
            stats["findings"] += len(result.violations)
        new, applied, _ = apply_fixes(current, result.violations, unsafe)
        if not applied:
            return current, count
        check_outside_unchanged(current, new, applied)
        if not _parses(new):
            broken = [v for v in applied if not _parses(apply_fixes(current, [v], unsafe)[0])] or applied
            raise AssertionError(f"fixes {sorted({v.code for v in broken})} produced code that does not parse"
                                 f"{_where(current)}--- fixed ---\n{new!r}")
        count += len(applied)
        current = new
    return current, count


def check_program(src: str, kind: str, allow_tns000: bool = False) -> None:
    """Every engine and plugin property on one program text."""
    stats = STATS[kind]
    stats["programs"] += 1
    for options, unsafe in ((Options(), False), (Options(strict=True, numpy_fix="force"), True)):
        fixed = fix_text(src, RULES, options, unsafe=unsafe)
        if fixed.error is not None and not fixed.error.startswith("a fix produced"):
            stats["unparsable"] += 1
            assert not _parses(src), f"error {fixed.error} on a parsable program{_where(src)}"
            assert fixed.text == src and not fixed.applied, _where(src)
            return
        replayed, count = replay_fix(src, options, unsafe, allow_tns000, stats)
        assert fixed.error is None, f"{fixed.error}{_where(src)}"
        assert fixed.text == replayed, _where(src)
        if fixed.text != src:
            stats["fixed"] += 1
            stats["fixes_applied"] += count
            assert _parses(fixed.text), _where(src)
            if _compiles(src):
                assert _compiles(fixed.text), f"the fixed program does not compile{_where(src)}\n{fixed.text!r}"
        # Fixing again changes nothing, and what is left has no fix that could apply.
        again = fix_text(fixed.text, RULES, options, unsafe=unsafe)
        assert again.text == fixed.text and not again.applied and not again.error, (
            f"fix is not idempotent{_where(src)}")
        left = [v for v in again.remaining if v.fix is not None and (unsafe or v.fix.safety == "safe")]
        assert not left, f"fixable findings left after fix: {left}{_where(src)}"
    check_plugin(src, allow_tns000)


def check_plugin(src: str, allow_tns000: bool = False) -> None:
    """TensorCopyChecker in-process, fed the way flake8 feeds it (file: universal newlines;
    stdin: lines split at \\n only)."""
    variants = [io.StringIO(src, newline=None).readlines()]
    if "\r" in src:
        variants.append(list(io.StringIO(src)))
    for lines in variants:
        text = "".join(lines)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except _PARSE_ERRORS:
            continue  # flake8 reports E999 and never calls plugins
        for row in TensorCopyChecker(tree, lines, "fuzz.py").run():
            line, col, msg, cls = row
            assert cls is TensorCopyChecker and isinstance(line, int) and isinstance(col, int), row
            assert "internal error" not in msg, f"{msg}{_where(src)}"
            assert msg.startswith("TNS") and line >= 1 and col >= 0, row
            if msg.startswith("TNS000"):
                assert allow_tns000, f"{msg}{_where(src)}"


# ============================================================================ generated programs

NAMES = ["x", "y", "w", "out", "loss", "h", "t", "z", "batch", "ñame", "变量", "self.w", "model.fc.weight",
         "net.bias", "self.buf", "outputs.logits"]
ROOTS = [
    "torch.ones(3, requires_grad=True)", "torch.randn(2, 3)", "torch.zeros(4, device='cuda')",
    "nn.Parameter(torch.zeros(2))", "torch.tensor([1.0, 2.0])", "model(x)", "th.zeros(4)", "tensor([1.0])",
    "np.ones(3)", "torch.from_numpy(a)", "loader", "self.fc(x)", "torch.empty(2).requires_grad_()",
    "'cuda:0'", "[x, y]", "None", "F.relu(x)", "nn.Linear(4, 4)", "torch.device('cpu')", "netG(noise)",
    "disc(fake)", "x.grad", "p", "torch.no_grad", "...", "(1)", "True", "netD(netG(z))", "fake", "loss_d",
    "x.exp()", "torch.sigmoid(w)",
]
SUFFIXES = [
    ".clone()", ".detach()", ".clone().detach()", ".detach().clone()", ".cpu()", ".numpy()", ".cuda()",
    ".to('cuda')", ".to(device)", ".to(torch.float16)", ".requires_grad_()", ".requires_grad_(False)",
    ".data", ".grad", ".item()", ".tolist()", "[0]", "[..., 1:]", ".sum()", ".numpy(force=True)",
    ".clone(memory_format=torch.contiguous_format)", ".detach_()", ".float()", ".T", ".view(-1)",
    ".new_tensor(x)", ".new_zeros(2)", ".cpu().numpy()", ".detach().cpu().numpy()", ".mean()",
    ".clone(\n    ).detach()", ".clone(  # é\n    ).detach()",
    ".parameters()", ".weight", ".backward", "()",
]
KWARG_VALUES = ["torch.float64", "dev", "True", "False", "x.requires_grad", "(dt := torch.float16)",
                "torch.float64 if a else torch.float32", "'cuda'", "lambda: 1", "x.dtype", "(yield)"]
WRAPPERS = [
    "torch.tensor({0})", "torch.tensor({0}, dtype={k})", "torch.tensor({0}, requires_grad={k})",
    "th.tensor({0}, device={k}, requires_grad=False)", "tensor({0})", "torch.as_tensor({0})", "np.array({0})",
    "torch.cat([{0}, x])", "f({0})", "model({0})", "torch.stack([{0}])", "x.new_tensor({0})",
    "self.w.new_tensor({0}, dtype={k})", "torch.tensor({0}, pin_memory=False)", "torch.tensor(\n    {0},\n)",
    "torch.tensor({0}  # é comment\n)", "copy.deepcopy({0})", "({0})", "[{0} for _ in range(2)]",
    "(n := {0})", "torch.tensor({0}, **kw)", "torch.tensor(*{0})", "{0}.new_tensor({1})",
    "({0} + {1})", "({0} * 2)", "({0} @ {1})", "({0} if {1} else x)", "({0} and {1})", "(-{0})",
    "({0}, {1})", "{{'k': {0}}}", "(lambda: {0})", "({0} for _ in x)", "[*{0}]", "({0} < {1})",
    "torch.tensor({0}).clone().detach()", "torch.tensor(data={0})", "torch.no_grad()({0})",
    "{0}.to(dtype={k})", "{0}.clone(memory_format={k}).detach()",
]
FSTRING = 'f"{{{0}!r:>{{w}}}}é"'

SIMPLE = [
    "{n} = {e}", "{n} += {e}", "{n}: torch.Tensor = {e}", "{e}.backward()", "{n}.backward(retain_graph=True)",
    "{n}.requires_grad = True", "{n}.requires_grad = False", "{n}.requires_grad_({b})",
    "torch.set_grad_enabled({b})", "print({e})", "del {n}", "assert {e}", "pass", "{n}[0] = {e}",
    "a, b = {e}, {e2}", "a, *b = {e}", "{n} = {e} if {e2} else None", "{n} = -{e}", "{n} = {e} + {e2}",
    "{n} = \\\n    {e}", "{n} = {e}; {n2} = {e2}", "{n} = ({e}\n    )", "{e}  # noqa", "{n} = {e}  # noqa: TNS201",
    "{n} = {e}  # é ü 中文 𝔵", "s = 'é中𝔵'; {n} = {e}", "optimizer.step()", "optimizer.zero_grad()",
    "torch.save({e}, 'f.pt')", "{n} = {e}.numpy()", "import copy", "{n}.grad = None", "{n}.data = {e}",
    "{n} = torch.tensor({e}, dtype=torch.float64, requires_grad=True)", "{n} = {e}.clone().detach()",
    "({n2} := {e})", "{n} = [{e} for {n2} in {e2} if {n2}]", "{n} = {{k: {e} for k in {e2}}}",
    "{n} = {e}  \\\n  # trailing", "{n} = '''é\n{n2}.clone().detach()\n'''", "{n} = {f}",
    "{n}.retain_grad()", "{n} = torch.where({e}, {e2}, 0)", "ng = torch.no_grad",
    # TNS1: NumPy; TNS3: GAN steps; TNS4: in-place writes
    "{n} = np.asarray({e})", "plt.plot({e})", "{n} = np.mean({e}, axis=0)", "{n} = {e}.cpu().numpy()",
    "fake = netG(noise)", "d_out = netD(fake)", "d_fake = netD(fake.detach())", "loss_d = crit(netD({e}), lbl)",
    "loss_g = -disc(netG(z)).mean()", "opt_d.zero_grad(); loss_d.backward(); opt_d.step()",
    "{n}.add_(1)", "{n}[0] = {e}", "{n} += 1", "{n}.data.zero_()", "{n}.data[0] = 5", "{n}.detach().zero_()",
    "{n}.mul_({e})", "{n}.copy_({e})", "a2 = {n}.exp(); {n}.add_(1); a2.sum().backward()",
    "d = {n}.detach(); d.add_(1)", "arr = {n}.numpy(); arr[0] = 1", "{n} = torch.sigmoid({e}); {n}.mul_(2)",
    "{n} = ({e}\n    .clone()\n    .detach())",
]
FUNC_ONLY = ["return {e}", "yield {e}", "{n} = yield {e}", "return", "global g_{n2}"]
ASYNC_ONLY = ["{n} = await {e}", "await {e}"]
LOOP_ONLY = ["break", "continue"]
HEADERS = [
    "with torch.no_grad():", "with torch.enable_grad():", "with torch.inference_mode():",
    "with th.no_grad(), open(p) as fh:", "with torch.set_grad_enabled({b}):", "with ng():",
    "with torch.autocast('cuda'):", "with torch.inference_mode(False):", "with contextlib.nullcontext():",
    "for {n} in {e}:", "for i, (a, b) in enumerate(loader):", "for p in model.parameters():",
    "while {e}:", "if {e}:", "try:", "def f_{i}({params}):", "@torch.no_grad()\ndef g_{i}(self):",
    "@torch.inference_mode()\ndef q_{i}(x: torch.Tensor):", "async def h_{i}({params}):",
    "class Net{i}(nn.Module):", "class C{i}:", "match {e}:", "@staticmethod\ndef s_{i}(x):",
    "lambda_ = lambda: 0\nif True:",
]
PARAMS = ["", "x", "x: torch.Tensor", "self, x", "m: nn.Module, *args, **kw", "x=torch.ones(2)", "self",
          "x, /, y=None, *, z: 'torch.Tensor' = None"]
IMPORTS = ["import torch", "import torch as th", "from torch import nn, tensor", "import numpy as np",
           "import matplotlib.pyplot as plt", "netG = Generator(); netD = Discriminator()",
           "opt_d = torch.optim.Adam(netD.parameters())", "netG, netD = nn.Linear(2, 2), nn.Linear(2, 1)",
           "from torch import no_grad as ng", "import torch.nn.functional as F", "import copy",
           "from torch import *", "import torch.nn as nn"]
PATTERNS = ["[a, *rest]", "{'k': v}", "Net(x=1) | None", "str() as s", "_", "1 | 2 if a"]

# The generators below use a random.Random seeded by hypothesis: one draw per program keeps
# generation ~50x faster than drawing every choice through hypothesis (thousands of programs fit
# the CI budget); the seed still makes every failure reproducible, and the failing program is
# printed in full.


def _fstring_ok(e: str) -> bool:
    return not any(c in e for c in "\"'\n#\\{}")


def expression(r: random.Random, depth: int = 0) -> str:
    if depth >= 3 or r.randint(0, 3) == 0:
        e = r.choice(NAMES + ROOTS)
    else:
        choice = r.randint(0, 9)
        if choice < 4:
            e = expression(r, depth + 1) + r.choice(SUFFIXES)
        elif choice < 9:
            e = r.choice(WRAPPERS).format(expression(r, depth + 1), expression(r, depth + 1),
                                          k=r.choice(KWARG_VALUES))
        else:
            inner = expression(r, depth + 1)
            e = FSTRING.format(inner) if _fstring_ok(inner) else inner
    if r.randint(0, 7) == 0:
        e += r.choice(SUFFIXES)
    return e


def _fill(r: random.Random, tmpl: str, i: int) -> str:
    return tmpl.format(
        n=r.choice(NAMES), n2=r.choice(["x", "y", "a", "out", "ñ"]), e=expression(r), e2=expression(r),
        b=r.choice(["True", "False", "flag", "not train"]), params=r.choice(PARAMS), i=i,
        f=FSTRING.format("x") if r.random() < 0.5 else "f'{x.clone().detach()}'",
    )


def block(r: random.Random, depth: int, in_func: bool, in_async: bool, in_loop: bool, counter: list) -> list:
    """A list of (depth, text) lines: one block of statements."""
    out = []
    for _ in range(r.randint(1, 3 if depth else 7)):
        counter[0] += 1
        i = counter[0]
        if depth < 4 and r.randint(0, 9) >= 7:
            *pre, last = r.choice(HEADERS).split("\n")  # decorators, then the header
            out.extend((depth, _fill(r, p, i)) for p in pre)
            out.append((depth, _fill(r, last, i)))
            f = in_func or "def " in last
            a = (in_async and "def " not in last) or "async def" in last
            loop = (in_loop and "def " not in last and "class " not in last) or last.startswith(("for ", "while "))
            if last.startswith("class "):
                f = a = False
            if last.startswith("match "):
                patterns = r.sample(PATTERNS, r.randint(1, 2))
                for pattern in sorted(patterns, key=lambda p: p == "_"):  # the wildcard goes last
                    out.append((depth + 1, f"case {pattern}:"))
                    out.extend(block(r, depth + 2, f, a, loop, counter))
                continue
            out.extend(block(r, depth + 1, f, a, loop, counter))
            if last == "try:":
                out.append((depth, r.choice(["except Exception as err:", "except:", "finally:"])))
                out.extend(block(r, depth + 1, f, a, loop, counter))
            elif last.startswith(("if ", "for ", "while ")) and r.random() < 0.5:
                out.append((depth, "else:"))
                out.extend(block(r, depth + 1, f, a, loop, counter))
            continue
        pool = SIMPLE + (FUNC_ONLY if in_func else []) + (ASYNC_ONLY if in_async else []) + (
            LOOP_ONLY if in_loop else [])
        out.append((depth, _fill(r, r.choice(pool), i)))
    return out


def _newlines(r: random.Random, text: str) -> str:
    style = r.choice(["\n", "\n", "\n", "\r\n", "\r", "mixed"])
    if style == "\n":
        return text
    if style != "mixed":
        return text.replace("\n", style)
    parts = text.split("\n")
    return "".join(p + r.choice(["\n", "\r\n", "\r"]) for p in parts[:-1]) + parts[-1]


def program_chunks(r: random.Random) -> list:
    """Top-level statements (each a text, possibly several lines), imports first."""
    unit = r.choice(["    ", "  ", "\t", "        ", "\x0c    "])
    counter = [0]
    chunks = [r.choice(IMPORTS) for _ in range(r.randint(0, 4))]
    if r.randint(0, 5):
        chunks.insert(0, "import torch")
    current: list = []
    for d, line in block(r, 0, False, False, False, counter):
        if d == 0 and current and not line.startswith(("else:", "except", "finally:")) and not (
                current[-1].startswith("@")):
            chunks.append("\n".join(current))
            current = []
        prefix = "\x0c" if unit.startswith("\x0c") and d else ""
        current.append(prefix + unit.replace("\x0c", "") * d + line if d else line)
    if current:
        chunks.append("\n".join(current))
    return chunks


def render_program(seed: int) -> str:
    r = random.Random(seed)
    text = "\n".join(program_chunks(r)) + r.choice(["\n", "\n", "", "\n\n", "  \n"])
    return _newlines(r, text)


def programs():
    return st.integers(0, 2**64).map(render_program)


def _top_level_starts(src: str) -> list[int]:
    """0-based line numbers where a top-level statement starts on a line of its own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(src)
    starts, prev_end = [], 0
    for stmt in tree.body:
        first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
        if first > prev_end:
            starts.append(first - 1)
        prev_end = stmt.end_lineno
    return starts


def weave(g: str, seed: int) -> str:
    """Template statements woven into program `g` at its top-level boundaries."""
    r = random.Random(seed)
    chunks = program_chunks(r)
    lines = _split(g)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    try:
        starts = _top_level_starts(g)
    except _PARSE_ERRORS:
        starts = []
    slots = sorted(set(starts + [len(lines)]))
    inserts: dict = collections.defaultdict(list)
    for chunk in chunks:
        inserts[r.choice(slots)].append(chunk + "\n")
    out = []
    for i in range(len(lines) + 1):
        out.extend(inserts.get(i, ()))
        if i < len(lines):
            out.append(lines[i])
    return _newlines(r, "".join(out))


def grammar_programs(source):
    """A hypothesmith program with template statements woven in at its top-level boundaries."""
    return st.builds(weave, source, st.integers(0, 2**64))


# ============================================================================ mutated fixtures


def _seeds() -> list[str]:
    seeds = []
    for path in sorted(glob.glob(os.path.join(FIXTURES, "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8", newline="") as f:
            seeds.append(f.read())
    for rule in RULES:
        for ex in [*rule.VALID, *rule.INVALID]:
            seeds.append(ex.code)
            if getattr(ex, "fixed", None):
                seeds.append(ex.fixed)
    return seeds


SEEDS = _seeds()
WORDS = ["detach", "clone", "numpy", "no_grad", "backward", "requires_grad", "tensor", "new_tensor", "cpu",
         "torch", "enable_grad", "inference_mode", "item", "data", "grad", "cuda", "to", "nn", "Parameter"]
# NFKC-equivalent spellings: the parser normalises identifiers, the text keeps the original.
HOMOGLYPHS = {"c": "ｃ", "d": "ｄ", "e": "ｅ", "t": "𝔱", "n": "ｎ", "o": "ℴ", "fi": "ﬁ", "a": "ª", "r": "ｒ"}
JUNK = ["(", ")", "[", "]", "{", "}", ":", "'", '"', '"""', "\\", "@", "$", "?", "!", ",", "=", " = ",
        "def ", "lambda", "\t", "  ", "\x0c", "\x00", "\ufeff", "é", "𝔵", "#", "\n", "\r", "\r\n",
        "async ", "await ", "yield ", "*", "**", "->", ":=", "f'", "0x", "1e", "...", "\n    ", "\x1c",
        "\u2028", "torch.", ".clone()", ".detach()", "with torch.no_grad():\n", "\\\n"]
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _split(text: str) -> list[str]:
    return _LINE.findall(text)


def _mutate(text: str, op: tuple, rnd: random.Random) -> str:
    kind = op[0]
    lines = _split(text)
    n = len(lines)
    if kind == "del" and n:
        del lines[rnd.randrange(n)]
    elif kind == "dup" and n:
        i = rnd.randrange(n)
        lines.insert(i, lines[i] if lines[i].endswith(("\n", "\r")) else lines[i] + "\n")
    elif kind == "swap" and n > 1:
        i, j = rnd.randrange(n), rnd.randrange(n)
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "shuffle":
        try:
            starts = _top_level_starts(text)
        except _PARSE_ERRORS:
            starts = []
        if len(starts) > 1:
            bounds = starts + [n]
            head = lines[: starts[0]]
            stmts = ["".join(lines[a:b]) for a, b in zip(bounds, bounds[1:])]
            stmts = [s if s.endswith(("\n", "\r")) else s + "\n" for s in stmts]
            rnd.shuffle(stmts)
            return "".join(head + stmts)
    elif kind == "rename":
        word, other = rnd.choice(WORDS), rnd.choice(WORDS + ["zz", "_", "detach_", "Clone", "ñ"])
        hits = [m.start() for m in re.finditer(rf"\b{word}\b", text)]
        if hits:
            if rnd.random() < 0.5:
                return re.sub(rf"\b{word}\b", other, text)
            at = rnd.choice(hits)
            return text[:at] + other + text[at + len(word):]
    elif kind == "homoglyph":
        word = rnd.choice(WORDS)
        hits = [m.start() for m in re.finditer(rf"\b{word}\b", text)]
        keys = [k for k in HOMOGLYPHS if k in word]
        if hits and keys:
            k = rnd.choice(keys)
            at = rnd.choice(hits)
            return text[:at] + word.replace(k, HOMOGLYPHS[k], 1) + text[at + len(word):]
    elif kind == "insert":
        at = rnd.randrange(len(text) + 1)
        return text[:at] + rnd.choice(JUNK) + text[at:]
    elif kind == "delchar" and text:
        at = rnd.randrange(len(text))
        return text[:at] + text[at + 1:]
    elif kind == "truncate" and text:
        return text[: rnd.randrange(len(text))]
    elif kind == "indent" and n:
        i = rnd.randrange(n)
        lines[i] = rnd.choice(["    ", "\t", " ", "\x0c"]) + lines[i]
    elif kind == "dedent" and n:
        i = rnd.randrange(n)
        lines[i] = lines[i].lstrip(" \t\x0c")
    elif kind == "newlines":
        style = rnd.choice(["\r\n", "\r", "\n"])
        return "".join(re.sub(r"\r\n|\r|\n", style, line) if rnd.random() < 0.6 else line for line in lines)
    elif kind == "wrap":
        header = rnd.choice(["def wrapper():", "with torch.no_grad():", "if True:", "class W(nn.Module):",
                             "async def aw(x):", "for _ in range(2):", "try:"])
        body = "".join("    " + line if line.strip() else line for line in lines) or "    pass\n"
        tail = "except Exception:\n    pass\n" if header == "try:" else ""
        return header + "\n" + (body if body.endswith(("\n", "\r")) else body + "\n") + tail
    elif kind == "join" and n > 1:
        i = rnd.randrange(n - 1)
        lines[i] = lines[i].rstrip("\r\n") + "; " + lines[i + 1].lstrip(" \t")
        del lines[i + 1]
    elif kind == "comment" and n:
        i = rnd.randrange(n)
        body = lines[i].rstrip("\r\n")
        lines[i] = body + rnd.choice(["  # noqa", "  # é 中", "  # noqa: TNS201", "  # type: ignore", " \\"]) + \
            lines[i][len(body):]
    return "".join(lines)


MUTATIONS = ["del", "dup", "swap", "shuffle", "rename", "homoglyph", "insert", "delchar", "truncate", "indent",
             "dedent", "newlines", "wrap", "join", "comment"]


@st.composite
def mutants(draw):
    text = draw(st.sampled_from(SEEDS)) if draw(st.integers(0, 3)) else draw(programs())
    ops = draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=5))
    rnd = random.Random(draw(st.integers(0, 2**32)))
    for op in ops:
        text = _mutate(text, (op,), rnd)
    return text


# ============================================================================ the tests

_counts = {"templates": (1000, 300), "mutants": (1500, 300), "grammar": (150, 60), "libcst": (25, 20),
           "cli": (300, 100)}


@examples(*_counts["templates"])
@given(programs())
def _fuzz_templates(src):
    check_program(src, "templates")


@examples(*_counts["mutants"])
@given(mutants())
def _fuzz_mutants(src):
    check_program(src, "mutants")


@examples(*_counts["grammar"])
@given(grammar_programs(hypothesmith.from_grammar()))
def _fuzz_grammar(src):
    check_program(src, "grammar")


@examples(*_counts["libcst"])
@given(grammar_programs(hypothesmith.from_node()))
def _fuzz_libcst(src):
    check_program(src, "libcst")


def test_generated_programs():
    soak(_fuzz_templates, 0.3, "templates")
    assert STATS["templates"]["fixed"] > 0, "the generator should produce fixable programs"


def test_mutated_fixtures_and_examples():
    assert len(SEEDS) >= 10
    soak(_fuzz_mutants, 0.3, "mutants")


def test_grammar_programs():
    soak(_fuzz_grammar, 0.15, "grammar")


def test_libcst_programs():
    soak(_fuzz_libcst, 0.05, "libcst")


# ---------------------------------------------------------------------------- `fix` on disk

_ENCODINGS = ["utf-8", "utf-8-bom", "latin-1", "cp1252"]


def _on_disk(src: str, encoding: str) -> bytes | None:
    try:
        if encoding == "utf-8":
            return src.encode("utf-8")
        if encoding == "utf-8-bom":
            return b"\xef\xbb\xbf" + src.encode("utf-8")
        return f"# -*- coding: {encoding} -*-\n".encode("ascii") + src.encode(encoding)
    except UnicodeEncodeError:
        return None


_file_seq = iter(range(10**9))


def _fuzz_cli(workdir, src, encoding, unsafe):
    data = _on_disk(src, encoding) or _on_disk(src, "utf-8")
    STATS["cli"]["programs"] += 1
    path = os.path.join(workdir, f"f{next(_file_seq)}.py")
    with open(path, "wb") as f:
        f.write(data)
    decoded = decode(data)
    expected = fix_text(decoded.text, RULES, Options(), unsafe=unsafe)
    # --diff writes nothing.
    rep = process(path, path, Job("fix", CODES, Options(), unsafe=unsafe, diff=True))
    assert open(path, "rb").read() == data
    assert bool(rep.diff) == (expected.text != decoded.text and not expected.error), _where(src)
    rep = process(path, path, Job("fix", CODES, Options(), unsafe=unsafe))
    after = open(path, "rb").read()
    if rep.error:
        assert "internal error" not in rep.error, rep.error
        assert rep.error.startswith(("cannot parse", "cannot decode", "cannot read")) or (
            expected.error and expected.error in rep.error), rep.error
        assert after == data, "a file that could not be fixed was changed"
        return
    assert [e for e in os.listdir(workdir) if e.startswith(".tensorcopy-")] == []
    got = decode(after)
    assert (got.encoding, got.bom) == (decoded.encoding, decoded.bom)
    assert got.text == expected.text, _where(src)
    if after != data:
        STATS["cli"]["files_fixed"] += 1
        head = data[: len(data) - len(decoded.text.encode(decoded.encoding))]
        assert after.startswith(head)  # the BOM is kept
    check = process(path, path, Job("check", CODES, Options()))
    assert check.error is None
    assert not [v for v in check.violations if v.fix is not None and (unsafe or v.fix.safety == "safe")]
    os.unlink(path)


def test_cli_fix_keeps_encoding_and_bytes(workdir):
    @examples(*_counts["cli"])
    @given(st.one_of(programs(), mutants()), st.sampled_from(_ENCODINGS), st.booleans())
    def run(src, encoding, unsafe):
        _fuzz_cli(workdir, src, encoding, unsafe)

    soak(run, 0.1, "cli")


# ---------------------------------------------------------------------------- corpus smoke (long mode)


def _corpus_dir() -> str:
    if os.environ.get("TENSORCOPY_CORPUS"):
        return os.environ["TENSORCOPY_CORPUS"]
    cache = os.environ.get("TENSORCOPY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tensorcopy")
    return os.path.join(cache, "corpus")


CORPUS = _corpus_dir()


@pytest.mark.skipif(not LONG, reason="corpus smoke test runs in the long mode (TENSORCOPY_FUZZ=long)")
@pytest.mark.skipif(not os.path.isdir(CORPUS), reason=f"no benchmark corpus at {CORPUS}")
def test_corpus_smoke():
    """Engine, plugin and `fix --diff` over every .py of the benchmark corpus: no exception, and
    every fixed file compiles (when its original did)."""
    t0 = time.monotonic()
    stats = STATS["corpus"]
    packages = sorted(d for d in os.listdir(CORPUS) if not d.startswith(".") and os.path.isdir(
        os.path.join(CORPUS, d)))
    assert packages
    failures = []
    for root, _dirs, names in os.walk(CORPUS):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            stats["files"] += 1
            with open(path, "rb") as f:
                data = f.read()
            stats["lines"] += data.count(b"\n")
            try:
                text = decode(data).text
            except Exception:
                stats["undecodable"] += 1
                continue
            try:
                fixed = fix_text(text, RULES, Options())
                if fixed.error:
                    stats["unparsable"] += 1
                    continue
                findings = lint_text(text, RULES, Options(), honor_noqa=False).violations
                stats["findings"] += len(findings)
                check_violations(text, findings, allow_tns000=True)
                if fixed.text != text:
                    stats["files_fixed"] += 1
                    stats["fixes_applied"] += len(fixed.applied)
                    replayed, _ = replay_fix(text, Options(), False)
                    assert replayed == fixed.text
                    if _compiles(text):
                        assert _compiles(fixed.text), "fixed file does not compile"
                    assert fix_text(fixed.text, RULES, Options()).text == fixed.text, "not idempotent"
                check_plugin(text, allow_tns000=True)
            except Exception as exc:  # collect them all, then fail
                failures.append(f"{path}: {type(exc).__name__}: {str(exc)[:300]}")
    stats["engine_seconds"] = round(time.monotonic() - t0, 1)
    t1 = time.monotonic()
    proc = subprocess.run([tool("tensorcopy"), "fix", "--diff", "--no-cache", CORPUS], capture_output=True,
                          text=True)
    stats["cli_seconds"] = round(time.monotonic() - t1, 1)
    stats["cli_exit"] = proc.returncode
    stats["cli_error_lines"] = sum(1 for line in proc.stderr.splitlines() if line.startswith("error: "))
    stats["diff_files"] = proc.stdout.count("\n+++ b/") + proc.stdout.startswith("+++ b/")
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1, 2)
    assert not failures, "\n".join(failures[:50])
