"""Fix intents written out as edits (lowering.py): exact where they can be, absent where not.

LibCST is imported only for a fix that restructures code; whatever LibCST cannot parse or
render back exactly, and whatever the rendered code would mean differently, gets no fix (the
finding stays), never a broken file.
"""

import ast
import subprocess
import sys

import libcst
import pytest

from conftest import ROOT
from flake8_tensorcopy import lowering
from flake8_tensorcopy.engine import fix_text, lint_text
from flake8_tensorcopy.intents import AppendCall, ReplaceExpression, SwapCalls, WrapStatements
from flake8_tensorcopy.rules.base import Fix, Violation
from flake8_tensorcopy.source import LineIndex

HEAD = "import torch\n\nx = torch.ones(3, requires_grad=True)\n"
# Findings without a fix (TNS403), and with a fix written as text (TNS201): no LibCST needed.
NOTHING_STRUCTURAL = HEAD + "b = x ** 2\nx.data.zero_()\nb.sum().backward()\ny = x.clone().detach()\n"


def _modules_after_check(tmp_path, source: str) -> set:
    (tmp_path / "m.py").write_text(source)
    code = ("import sys\nfrom flake8_tensorcopy.cli import main\n"
            f"code = main(['check', '--no-cache', '--isolated', {str(tmp_path)!r}])\n"
            "print(code, ' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    status, modules = out.splitlines()[-1].split(" ", 1)
    assert status == "1" and "m.py:" in out  # the findings are there
    return set(modules.split())


def test_check_without_structural_fixes_never_imports_libcst(tmp_path):
    loaded = _modules_after_check(tmp_path, NOTHING_STRUCTURAL)
    assert "libcst" not in loaded and "flake8_tensorcopy.lowering" in loaded


def test_check_with_a_structural_fix_imports_libcst(tmp_path):
    # The counterpart: a wrap or a rebuilt call is written out (and shown as fixable) by LibCST.
    assert "libcst" in _modules_after_check(tmp_path, HEAD + "y = torch.tensor(x)\n")


def test_the_flake8_plugin_writes_out_no_fix(tmp_path):
    source = HEAD + "y = torch.tensor(x)\nx[0] = 2\n"
    code = ("import ast, sys\nfrom flake8_tensorcopy.plugin import TensorCopyChecker\n"
            f"src = {source!r}\n"
            "rows = list(TensorCopyChecker(ast.parse(src), src.splitlines(True), 'm.py').run())\n"
            "print(sorted(r[2][:6] for r in rows), 'libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.split() == ["['TNS202',", "'TNS401']", "False"]


# ----------------------------------------------------------------------------- fail closed


def test_code_libcst_does_not_render_back_gets_no_fix():
    # LibCST drops a form feed that starts a line at module level: the wrap of these two
    # statements would lose it, so there is none; the findings stay.
    src = HEAD + "x[0] = 2\n\x0cx[1] = 3\n"
    findings = lint_text(src).violations
    assert [(v.code, v.fix) for v in findings] == [("TNS401", None), ("TNS401", None)]
    result = fix_text(src, unsafe=True)
    assert result.text == src and result.error is None


def test_code_libcst_cannot_parse_gets_no_fix(monkeypatch):
    def refuse(source, *args, **kwargs):
        return real("(")  # raises libcst's ParserSyntaxError

    real = libcst.parse_module
    monkeypatch.setattr(libcst, "parse_module", refuse)
    src = HEAD + "y = torch.tensor(x)\nx[0] = 2\n"
    assert [(v.code, v.fix) for v in lint_text(src).violations] == [("TNS202", None), ("TNS401", None)]
    assert fix_text(src, unsafe=True).text == src


def _lower(text: str, intent):
    v = Violation("TNS999", "m", 1, 0, 1, 0, Fix("title", "safe", (), intent))
    (out,) = lowering.lower([v], LineIndex(text), ast.parse(text))
    return out.fix


def test_a_template_that_would_mean_something_else_is_not_written():
    text = "y = x + 1\n"
    s, e = text.index("x"), len(text) - 1
    # An operand is not parenthesised for the template: `x + 1 * 2` is not `(x + 1) * 2`.
    assert _lower(text, ReplaceExpression(s, e, "{a} * 2", (("a", s, e),))) is None
    # A receiver is: `(x + 1).detach()`.
    (edit,) = _lower(text, ReplaceExpression(s, e, "{a}.detach()", (("a", s, e),))).edits
    assert edit.text == "(x + 1).detach()"


def test_statements_that_are_not_whole_are_not_wrapped():
    text = "import torch\nx = (1,\n     2)\n"
    assert _lower(text, WrapStatements(2, 2, "torch.no_grad()", 0)) is None
    (edit,) = _lower(text, WrapStatements(2, 3, "torch.no_grad()", 0)).edits
    assert edit.text == "with torch.no_grad():\n    x = (1,\n         2)"


def test_text_intents():
    text = "y = a + b\nz = x.clone(\n  ).detach()\n"
    fix = _lower(text, AppendCall(4, 9, ".clone()"))
    assert [(e.start, e.end, e.text) for e in fix.edits] == [(4, 4, "("), (9, 9, ").clone()")]
    c, d = text.index("clone"), text.index("detach")
    # A call moved elsewhere keeps its arguments; an empty argument list is written `()`.
    fix = _lower(text, SwapCalls(c, text.index(")", c) + 1, d, len(text) - 1))
    assert [e.text for e in fix.edits] == ["detach()", "clone()"]


# ----------------------------------------------------------------------------- what LibCST keeps


@pytest.mark.parametrize("call, fixed", [
    ("torch.tensor((x))", "x.detach().clone()"),  # parentheses an atom does not need go
    ("torch.tensor(x * 2)", "(x * 2).detach().clone()"),  # the ones a receiver needs come
    ("torch.tensor(x, device=(d := 'cpu'))", "x.detach().clone().to(device=(d := 'cpu'))"),  # kept
    ("torch.tensor(torch.cat([x,  # keep\n    x]))", "torch.cat([x,  # keep\n    x]).detach().clone()"),
    ("torch.tensor(\n    x,\n    dtype=torch.float64,\n)", "x.detach().clone().to(dtype=torch.float64)"),
])
def test_tns202_rebuilds_the_call_from_its_own_parts(call, fixed):
    src = HEAD + f"y = {call}\n"
    result = fix_text(src)
    assert result.error is None and result.text == HEAD + f"y = {fixed}\n"


def test_tns202_offers_no_fix_that_would_drop_a_comment():
    src = HEAD + "y = torch.tensor(x,  # why float64\n                 dtype=torch.float64)\n"
    (v,) = lint_text(src).violations
    assert v.code == "TNS202" and v.fix is None
    assert "use x.detach().clone().to(dtype=torch.float64)" in v.message


def test_tns401_wrap_keeps_continuation_lines_strings_comments_and_line_endings():
    src = ("import torch\r\n\r\ndef f(w):\r\n    w = torch.nn.Parameter(w)\r\n"
           "    w[0] = len('''a\r\nb''')  # first\r\n    # between\r\n"
           "    w[1] = (1 +\r\n            2)\r\n    return w\r\n")
    result = fix_text(src, unsafe=True)
    assert result.error is None
    assert result.text == ("import torch\r\n\r\ndef f(w):\r\n    w = torch.nn.Parameter(w)\r\n"
                           "    with torch.no_grad():\r\n        w[0] = len('''a\r\nb''')  # first\r\n"
                           "        # between\r\n        w[1] = (1 +\r\n                2)\r\n    return w\r\n")
