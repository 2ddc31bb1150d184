"""TNS4xx beyond the generated example tests: the saved-tensor table agrees with real torch
operation by operation (with what it was recorded doing, where torch is not installed), and the
`with no_grad():` wrap keeps the file's own text conventions."""

import pytest

from flake8_tensorcopy.analysis import saved
from flake8_tensorcopy.engine import fix_text, lint_text, select_rules
from flake8_tensorcopy.model import Options

TNS4 = select_rules(["TNS4"])

# One call per operation the table lists (a: (2, 4), values in [0.5, 1.5), requires grad).
OPS = {
    "pow": "a ** 2", "square": "a.square()", "log": "a.log()", "log2": "torch.log2(a)",
    "log10": "a.log10()", "log1p": "a.log1p()", "sin": "a.sin()", "cos": "torch.cos(a)",
    "sinh": "a.sinh()", "cosh": "a.cosh()", "abs": "a.abs()", "clamp": "a.clamp(0.6, 1.2)",
    "clip": "torch.clip(a, 0.6, 1.2)", "clamp_min": "a.clamp_min(0.7)", "clamp_max": "a.clamp_max(1.2)",
    "erf": "a.erf()", "atan": "a.atan()", "norm": "a.norm()", "prod": "a.prod()", "var": "a.var()",
    "std": "a.std()", "cumprod": "a.cumprod(1)", "gelu": "F.gelu(a)", "silu": "F.silu(a)",
    "mish": "F.mish(a)", "hardswish": "F.hardswish(a)", "hardtanh": "F.hardtanh(a)", "relu6": "F.relu6(a)",
    "elu": "F.elu(a)", "selu": "F.selu(a)", "celu": "F.celu(a)", "leaky_relu": "F.leaky_relu(a)",
    "softplus": "F.softplus(a)", "softsign": "F.softsign(a)", "logsigmoid": "F.logsigmoid(a)",
    "normalize": "F.normalize(a, dim=1)", "layer_norm": "F.layer_norm(a, (4,))",
    "exp": "a.exp()", "exp2": "a.exp2()", "expm1": "torch.expm1(a)", "tan": "a.tan()", "tanh": "torch.tanh(a)",
    "sigmoid": "torch.sigmoid(a)", "sqrt": "a.sqrt()", "rsqrt": "a.rsqrt()", "reciprocal": "a.reciprocal()",
    "relu": "F.relu(a)", "softmax": "a.softmax(1)", "log_softmax": "F.log_softmax(a, dim=1)",
    "max": "a.max()", "min": "torch.min(a)", "mse_loss": "F.mse_loss(a, torch.ones(2, 4))",
    "binary_cross_entropy_with_logits": "F.binary_cross_entropy_with_logits(a, torch.full((2, 4), 0.5))",
    "nll_loss": "F.nll_loss(a, torch.tensor([0, 1]))", "smooth_l1_loss": "F.smooth_l1_loss(a, torch.ones(2, 4))",
    "huber_loss": "F.huber_loss(a, torch.ones(2, 4))", "soft_margin_loss": "F.soft_margin_loss(a, torch.ones(2, 4))",
    # Not in the table: save nothing of `a` or of their result.
    "mul by 2": "a * 2", "add": "a + 1", "sum": "a.sum()", "mean": "a.mean()", "clone": "a.clone()",
    "neg": "-a", "view": "a.view(8)", "max(dim)": "a.max(dim=1).values", "cumsum": "a.cumsum(1)",
    "cross_entropy": "F.cross_entropy(a, torch.tensor([0, 1]))", "l1_loss": "F.l1_loss(a, torch.ones(2, 4))",
    "kl_div": "F.kl_div(a, torch.full((2, 4), 0.25), reduction='batchmean')",
}

HEAD = "import torch\nimport torch.nn.functional as F\n\na = torch.rand(2, 4).add(0.5).requires_grad_()\n"


# What real torch does with each operation of OPS, as recorded (torch 2.13, CPU) by running the
# cases below: the ones that save their input, and the ones that save their result, for backward.
# The rules are checked against this record, so that the check means something without torch
# too (the table compared with the table would not); with torch, the record is checked again.
RECORDED_SAVES_INPUT = frozenset(
    "abs atan celu clamp clamp_max clamp_min clip cos cosh cumprod elu erf gelu hardswish hardtanh layer_norm "
    "leaky_relu log log10 log1p log2 logsigmoid max min mish mse_loss norm normalize pow prod relu6 selu silu sin "
    "sinh softplus softsign square std var binary_cross_entropy_with_logits nll_loss smooth_l1_loss huber_loss "
    "soft_margin_loss".split()
)
RECORDED_SAVES_RESULT = frozenset(
    "cumprod exp exp2 expm1 log_softmax max min norm prod reciprocal relu rsqrt sigmoid softmax sqrt std tan "
    "tanh".split()
)


def _runtime_raises(code):
    torch = pytest.importorskip("torch")
    ns = {}
    try:
        exec(compile(code, "<op>", "exec"), ns)
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc), exc
        return True
    assert isinstance(ns["a"], torch.Tensor)
    return False


def test_every_table_entry_has_a_case():
    table = saved.SAVES_INPUT | saved.SAVES_RESULT | saved.SAVES_BOTH_WITHOUT_ARGS | saved.SAVES_BOTH_OPERANDS
    assert table <= set(OPS)


def test_a_write_around_the_version_counter_to_what_backward_never_reads():
    """`nll_loss` saves its input for the version check only: a write through `.detach()` raises
    (TNS402), one through `.data` leaves the gradient as it was (no TNS403)."""
    torch = pytest.importorskip("torch")
    body = ("import torch\nimport torch.nn.functional as F\n\n"
            "a = torch.randn(2, 3).requires_grad_()\nb = a * 1.0\n"
            "loss = F.nll_loss(b, torch.tensor([0, 2]))\n{write}\nloss.backward()\n")
    detached = body.format(write="b.detach().mul_(2.0)")
    assert [v.code for v in lint_text(detached, TNS4).violations] == ["TNS402"]
    assert _runtime_raises(detached)
    data = body.format(write="b.data.mul_(2.0)")
    assert [v.code for v in lint_text(data, TNS4).violations] == []
    ns: dict = {}
    exec(compile(data, "<nll>", "exec"), ns)
    assert torch.equal(ns["a"].grad, torch.tensor([[-0.5, 0.0, 0.0], [0.0, 0.0, -0.5]]))


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("written", ["input", "result"])
def test_saved_table_agrees_with_torch(name, written):
    """Write through `.detach()` after the operation, then backward: the rule reports exactly
    when real torch raises the version-counter error."""
    target = "a" if written == "input" else "b"
    code = HEAD + f"b = {OPS[name]}\nc = {target}.detach()\nc.mul_(1.0)\nb.sum().backward()\n"
    expected = name in (RECORDED_SAVES_INPUT if written == "input" else RECORDED_SAVES_RESULT)
    reported = any(v.code == "TNS402" for v in lint_text(code, TNS4).violations)
    assert reported == expected
    assert _runtime_raises(code) == expected


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_helper_that_returns_an_operations_result(name):
    """`def helper(x): return <the operation on x>`, then a write through `.detach()` of what the
    call returns, then backward: never reported where real torch runs, and reported where it
    raises for each operation the table says saves its result."""
    import re

    expr = re.sub(r"\ba\b", "x", OPS[name])
    code = HEAD + f"\n\ndef helper(x):\n    return {expr}\n\n\nb = helper(a)\nc = b.detach()\nc.mul_(1.0)\n" \
                  "b.sum().backward()\n"
    reported = any(v.code == "TNS402" for v in lint_text(code, TNS4).violations)
    raises = _runtime_raises(code)
    assert raises == (name in RECORDED_SAVES_RESULT)
    assert reported == (name in saved.SAVES_RESULT and raises)
    if reported:  # (not where grad mode is off at the call)
        quiet = code.replace("b = helper(a)", "with torch.no_grad():\n    b = helper(a)")
        assert not any(v.code == "TNS402" for v in lint_text(quiet, TNS4).violations)


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_module_class_whose_forward_returns_an_operations_result(name):
    """A module class whose `forward` returns the operation on what its layer computes, called,
    then a write through `.detach()` of what it returns, then backward: reported where real torch
    raises for each operation the table says saves its result, never where it runs, nor with
    grad off at the call."""
    import re

    expr = re.sub(r"\ba\b", "self.fc(x)", OPS[name])
    code = HEAD + ("from torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
                   "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n"
                   f"    def forward(self, x):\n        return {expr}\n\n\n"
                   "m = M()\nb = m(a)\nc = b.detach()\nc.mul_(1.0)\nb.sum().backward()\n")
    reported = any(v.code == "TNS402" for v in lint_text(code, TNS4).violations)
    raises = _runtime_raises(code)
    assert raises == (name in RECORDED_SAVES_RESULT)
    assert reported == (name in saved.SAVES_RESULT and raises)
    if reported:
        quiet = code.replace("b = m(a)", "with torch.no_grad():\n    b = m(a)")
        assert not any(v.code == "TNS402" for v in lint_text(quiet, TNS4).violations)


# torch.nn modules called on a tensor that requires grad, and what real torch 2.13 saves of what
# they return (recorded by running the cases below: a write through `.detach()`, then backward).
MODULES = [
    "nn.Sigmoid()", "nn.Tanh()", "nn.ReLU()", "nn.ReLU(inplace=True)", "nn.Softmax(dim=1)", "nn.LogSoftmax(dim=1)",
    "nn.Softmin(dim=1)", "nn.GELU()", "nn.ELU()", "nn.SiLU()", "nn.LeakyReLU()", "nn.Softplus()", "nn.Hardtanh()",
    "nn.LogSigmoid()", "nn.Identity()", "nn.Dropout(0.0)",
    "nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())", "nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Tanh())",
    "nn.Sequential(nn.Sigmoid(), nn.Linear(4, 4))", "nn.Sequential(nn.Linear(4, 4), nn.GELU())",
    "nn.Sequential(*[nn.Linear(4, 4), nn.Sigmoid()])",
]
RECORDED_MODULES_SAVE_RESULT = frozenset({
    "nn.Sigmoid()", "nn.Tanh()", "nn.ReLU()", "nn.ReLU(inplace=True)", "nn.Softmax(dim=1)", "nn.LogSoftmax(dim=1)",
    "nn.Softmin(dim=1)", "nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())",
    "nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Tanh())", "nn.Sequential(*[nn.Linear(4, 4), nn.Sigmoid()])",
})


@pytest.mark.parametrize("module", MODULES)
def test_a_module_that_returns_what_it_saves(module):
    """`m = <module>`, `b = m(a * 1)`, then a write through `.detach()` of `b` and backward:
    reported where real torch raises (but for an `nn.Sequential` of unpacked modules, which the
    analysis does not read), never where it runs, nor with grad off at the call."""
    code = HEAD + f"from torch import nn\n\nm = {module}\nb = m(a * 1)\nc = b.detach()\nc.mul_(1.0)\n" \
                  "b.sum().backward()\n"
    reported = any(v.code == "TNS402" for v in lint_text(code, TNS4).violations)
    assert reported == (module in RECORDED_MODULES_SAVE_RESULT and "*" not in module)
    assert _runtime_raises(code) == (module in RECORDED_MODULES_SAVE_RESULT)
    if reported:
        quiet = code.replace("b = m(a * 1)", "with torch.no_grad():\n    b = m(a * 1)")
        assert not any(v.code == "TNS402" for v in lint_text(quiet, TNS4).violations)


MODULE_ATTRIBUTE = """\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.Sigmoid()

    def step(self, x):
        p = self.act(self.fc(x))
        p.detach().zero_()
        p.sum().backward()


Head().step(torch.randn(2, 3))
"""


def test_a_module_a_class_keeps_that_saves_what_it_returns():
    assert [(v.code, v.line) for v in lint_text(MODULE_ATTRIBUTE, TNS4).violations] == [("TNS402", 13)]
    assert _runtime_raises(MODULE_ATTRIBUTE)


@pytest.mark.parametrize(
    "expr,saved_a,saved_d",
    [
        ("a * d", False, True),
        ("torch.mul(a, d)", False, True),
        ("a @ d.t()", False, True),
        ("torch.matmul(d, a.t())", False, True),
        ("a.mm(d.t())", False, True),
        ("F.linear(d, a)", False, True),
        ("a / d", False, True),
        ("d / a", True, True),
        ("a * a", True, False),
    ],
)
def test_products_save_an_operand_when_the_other_requires_grad(expr, saved_a, saved_d):
    for name, expected in (("a", saved_a), ("d", saved_d)):
        code = HEAD + f"d = torch.rand(2, 4).add(0.5)\nb = {expr}\n{name}.detach().mul_(1.0)\nb.sum().backward()\n"
        reported = any(v.code == "TNS402" for v in lint_text(code, TNS4).violations)
        assert reported == expected, (expr, name)
        assert _runtime_raises(code) == expected, (expr, name)


def test_wrap_keeps_crlf_line_endings():
    src = "import torch\r\n\r\ndef f():\r\n    w = torch.zeros(3, requires_grad=True)\r\n    w[0] = 1  # one\r\n" \
          "    w[1] = '''a\r\nb'''.count('a')\r\n    return w\r\n"
    out = fix_text(src, TNS4, unsafe=True)
    assert out.error is None
    assert out.text == (
        "import torch\r\n\r\ndef f():\r\n    w = torch.zeros(3, requires_grad=True)\r\n    with torch.no_grad():\r\n"
        "        w[0] = 1  # one\r\n        w[1] = '''a\r\nb'''.count('a')\r\n    return w\r\n"
    )
    assert "\n" not in out.text.replace("\r\n", "")


def test_wrap_at_end_of_file_without_newline_and_two_space_indent():
    src = "import torch\nif True:\n  w = torch.zeros(3, requires_grad=True)\n  w.add_(1)"
    out = fix_text(src, TNS4, unsafe=True)
    assert out.text == ("import torch\nif True:\n  w = torch.zeros(3, requires_grad=True)\n"
                        "  with torch.no_grad():\n    w.add_(1)")


def test_no_fix_without_a_torch_binding_and_for_shared_lines():
    for src in (
        "import torch.nn as nn\nlin = nn.Linear(2, 2)\nlin.weight.zero_()\n",
        "import torch\nw = torch.zeros(3, requires_grad=True)\nn = 1; w[0] = n\n",
        "import torch\nw = torch.zeros(3, requires_grad=True)\nif w is not None: w.zero_()\n",
        "import torch\nw = torch.zeros(3, requires_grad=True)\nx = 1 + \\\n    2; w.zero_()\n",
    ):
        (v,) = lint_text(src, TNS4).violations
        assert v.code == "TNS401" and v.fix is None, src


def test_helpers_called_only_under_no_grad_are_silent():
    helper = ("import torch\nfrom torch import nn\n\ndef scale(m: nn.Module):\n    for p in m.parameters():\n"
              "        p.mul_(2)\n\n")
    lin = "lin = nn.Linear(2, 2)\n"
    quiet = helper + lin + "with torch.no_grad():\n    scale(lin)\n"
    assert not lint_text(quiet, TNS4).violations
    decorated = helper + lin + "@torch.no_grad()\ndef outer():\n    scale(lin)\n"
    assert not lint_text(decorated, TNS4).violations
    loud = quiet + "scale(lin)\n"
    assert [v.line for v in lint_text(loud, TNS4).violations] == [6]
    callback = helper + lin + "with torch.no_grad():\n    scale(lin)\nlin.apply(scale)\n"
    assert [v.line for v in lint_text(callback, TNS4).violations] == [6]
    never_called = helper
    assert [v.line for v in lint_text(never_called, TNS4).violations] == [6]


def test_consecutive_writes_share_one_wrap_and_others_get_their_own():
    src = ("import torch\nw = torch.zeros(3, requires_grad=True)\nw[0] = 1\nw[1] = 2\nn = 3\nw[2] = n\n")
    found = lint_text(src, TNS4).violations
    assert [v.line for v in found] == [3, 4, 6]
    assert found[0].fix == found[1].fix != found[2].fix
    out = fix_text(src, TNS4, unsafe=True)
    assert out.text == ("import torch\nw = torch.zeros(3, requires_grad=True)\nwith torch.no_grad():\n    w[0] = 1\n"
                        "    w[1] = 2\nn = 3\nwith torch.no_grad():\n    w[2] = n\n")


HELPER_WRITES = """\
import torch
from torch import nn

model = nn.Linear(3, 1)


def reset(p):
    p.zero_()


def scale(t, k):
    t.mul_(k)


reset(model.weight)
scale(torch.ones(3), 2)
"""


def test_a_helper_that_writes_to_the_leaf_its_caller_passes():
    # reset() writes in place to what line 15 passes, a parameter of the model: the write raises
    # where it is (line 8), and the message says which call brought the leaf.  scale() is only
    # ever called with a tensor that does not require grad: silent.
    found = lint_text(HELPER_WRITES, TNS4).violations
    assert [(v.code, v.line) for v in found] == [("TNS401", 8)]
    assert "p (passed at line 15), a leaf that requires grad" in found[0].message
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        exec(compile(HELPER_WRITES, "<case>", "exec"), {"torch": torch})


HELPER_ALIAS_WRITES = """\
import torch


def clamp_(t):
    t.clamp_(-1, 1)


def set_first(arr, value=5.0):
    arr[0] = value


def maybe_zero(t, flag):
    if flag:
        t.zero_()


def copy_then_zero(t):
    t = t.clone()
    t.zero_()
    return t


def bump(t, u):
    u += 1


def through_detach():
    a = torch.ones(5, requires_grad=True)
    b = a ** 2
    clamp_(a.detach())
    b.sum().backward()


def through_data():
    a = torch.ones(5, requires_grad=True)
    b = a ** 2
    set_first(a.data)
    b.sum().backward()
    return a.grad


def through_numpy():
    a = torch.ones(5, requires_grad=True)
    b = a ** 2
    set_first(a.detach().numpy())
    b.sum().backward()
    return a.grad


def through_a_name():
    a = torch.ones(5, requires_grad=True)
    b = a.exp()
    c = b.detach()
    bump(torch.zeros(5), c)
    b.sum().backward()


def not_written():
    a = torch.ones(5, requires_grad=True)
    b = a ** 2
    copy_then_zero(a.detach())
    bump(a.detach(), torch.zeros(5))
    maybe_zero(a.detach(), False)
    b.sum().backward()
"""


def test_a_function_that_writes_into_what_it_is_passed_writes_through_the_alias():
    # A call of a function of the file that writes in place into a parameter at the top of its
    # body, passed an alias of a tensor saved for the backward below: the write the message
    # says, and torch's error (or, through `.data` and NumPy, its silently wrong gradient).  Not
    # where the function copies first, writes another parameter, or may not write (a branch).
    found = lint_text(HELPER_ALIAS_WRITES, TNS4).violations
    lines = HELPER_ALIAS_WRITES.splitlines()
    at = {v.line: (v.code, v.message) for v in found}
    assert sorted((code, lines[line - 1].strip()) for line, (code, _) in at.items()) == [
        ("TNS402", "bump(torch.zeros(5), c)"), ("TNS402", "clamp_(a.detach())"),
        ("TNS402", "set_first(a.detach().numpy())"), ("TNS403", "set_first(a.data)")]
    assert "in-place write through c (bump() writes into it, line 23) changes b" in \
        at[lines.index("    bump(torch.zeros(5), c)") + 1][1]
    assert "write through a.data (set_first() writes into it, line 8) changes" in \
        at[lines.index("    set_first(a.data)") + 1][1]
    torch = pytest.importorskip("torch")
    ns = {}
    exec(compile(HELPER_ALIAS_WRITES, "<case>", "exec"), ns)
    for name in ("through_detach", "through_a_name"):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            ns[name]()
    # No error, and a wrong gradient: d(a**2)/da is 2a = 2, but the 5 written is in it instead.
    for name in ("through_data", "through_numpy"):
        assert ns[name]().tolist() == [10.0, 2.0, 2.0, 2.0, 2.0]
    ns["not_written"]()


HELPER_LOOPS = """\
import torch
from torch import nn

model = nn.Linear(3, 1)


def sgd(params, lr):
    for p in params:
        p -= lr * p.grad


def _decay(named, k):
    for name, p in named:
        p.mul_(k)


def normalize(tensors):
    for t in tensors:
        t /= t.norm()


model(torch.randn(2, 3)).sum().backward()
normalize([torch.ones(3), torch.ones(2)])
sgd(list(model.parameters()), 0.1)
_decay(model.named_parameters(), 0.9)
sgd(model.parameters(), 0.1)
"""


def test_a_helper_that_writes_to_the_leaves_of_an_iterable_its_caller_passes():
    # sgd() and _decay() loop over what their callers pass, the model's parameters (a list of
    # them, the iterator, named pairs), and write to each in place: the writes raise where they
    # are, and the messages say which calls brought the leaves.  normalize() is only ever given
    # tensors that do not require grad: silent.
    found = lint_text(HELPER_LOOPS, TNS4).violations
    assert [(v.code, v.line) for v in found] == [("TNS401", 9), ("TNS401", 14)]
    assert "p (passed at lines 24, 26), a leaf that requires grad" in found[0].message
    assert "p (passed at line 25), a leaf that requires grad" in found[1].message
    torch = pytest.importorskip("torch")
    for call in ("sgd(list(model.parameters()), 0.1)", "_decay(model.named_parameters(), 0.9)"):
        env = {"torch": torch}
        exec(compile(HELPER_LOOPS.split("\n\n\nmodel(")[0], "<case>", "exec"), env)
        env["model"](torch.randn(2, 3)).sum().backward()
        env["normalize"]([torch.ones(3), torch.ones(2)])  # (runs)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            eval(call, env)


LOCAL_ALIAS = """\
import torch
from torch import nn


def surgery():
    layer = nn.Linear(2, 2)
    w = layer.weight
    w[0] = 1.0


def _overwrite(net):
    b = net.bias
    b.fill_(0.0)


def rows(x):
    row = x[0]
    row[1] = 2.0
    return x


_overwrite(nn.Linear(2, 2))
rows(torch.zeros(2, 2))
surgery()
"""


def test_a_write_through_a_local_that_names_a_parameter():
    # `w = layer.weight` then `w[0] = ...`: the write's text names no weight, the function is
    # analysed all the same (in one that writes to its own parameter's alias too); `row` of a
    # plain tensor is no leaf.
    found = lint_text(LOCAL_ALIAS, TNS4).violations
    assert [(v.code, v.line) for v in found] == [("TNS401", 8), ("TNS401", 13)]
    torch = pytest.importorskip("torch")
    for name in ("surgery", "_overwrite"):
        env = {"torch": torch}
        exec(compile(LOCAL_ALIAS.split("\n\n\n_overwrite(")[0], "<case>", "exec"), env)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            env[name]() if name == "surgery" else env[name](torch.nn.Linear(2, 2))


MODULE_LEAF = """\
import torch

coef = torch.zeros(3, requires_grad=True)
scale = torch.ones(3)
scale.requires_grad_()


def sgd_step(lr):
    coef.sub_(lr * coef.grad)


def grow():
    scale.mul_(2.0)


(torch.ones(3) @ coef).sum().backward()
"""


def test_a_module_leaf_written_by_name_in_a_function():
    # The function's text names neither a parameter nor requires_grad: the leaf is made at the
    # module's level, and the scope filter must still let the function be analysed.
    found = lint_text(MODULE_LEAF, TNS4).violations
    assert [(v.code, v.line) for v in found] == [("TNS401", 9), ("TNS401", 13)]
    torch = pytest.importorskip("torch")
    for call in ("sgd_step(0.1)", "grow()"):
        env = {"torch": torch}
        exec(compile(MODULE_LEAF, "<case>", "exec"), env)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            eval(call, env)


TUPLE_BOUND_LEAF = """\
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps, self.w = 0, nn.Parameter(torch.ones(3))

    def bump(self):
        self.w.add_(1)
"""


def test_an_attribute_bound_second_in_a_tuple_is_not_taken_for_a_literal():
    # `self.steps, self.w = 0, nn.Parameter(...)`: the text test read `self.w = 0, ...` as a
    # literal binding and missed the `, self.w` of the unpacking (searched in one pattern with
    # `self.steps,`, which consumed the comma), so `bump` was never analysed.
    from flake8_tensorcopy.rules.tns4 import _LiteralAttributes

    assert "w" not in _LiteralAttributes(TUPLE_BOUND_LEAF)
    found = lint_text(TUPLE_BOUND_LEAF, TNS4).violations
    assert [(v.code, v.line) for v in found] == [("TNS401", 11)]
    torch = pytest.importorskip("torch")
    env = {}
    exec(compile(TUPLE_BOUND_LEAF, "<case>", "exec"), env)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        env["Scaled"]().bump()


def test_leaf_names_are_the_names_bound_where_a_leaf_is_made():
    from flake8_tensorcopy.rules.tns4 import _leaf_names

    text = ("w = torch.randn(3, requires_grad=True)\nb: torch.Tensor = nn.Parameter(torch.zeros(2))\n"
            "v = torch.zeros(2)\nv.requires_grad_()\nu = torch.ones(2).requires_grad_()\n"
            "self.p = nn.Parameter(x)\nif w.requires_grad == flag:\n    pass\n")
    assert _leaf_names(text) == {"w", "b", "v", "u"}


@pytest.mark.parametrize("text", [
    "w.fill_(0)\nx[0].zero_()\n", "a.b.fill_(1); c[1, 2].normal_(0, 1)\n", "x[[0].fill_(1)\n", "a[b[0]].fill_(1)\n",
    "p.add_(q.mul_(2))\n", "w.data.add_(1); v.sub_(2)\n", "for p in params:\n    p.clamp_(-1, 1)\n",
    "def f(t):\n    t.uniform_(-1, 1)\n    t.div_(2)\n    t.copy_(s)\n", "no call here\n", "x .fill_(0)\n",
])
def test_the_in_place_receivers_are_what_the_pattern_finds(text):
    # TNS401's helper test searches only the lines that hold one of its calls: the same
    # receivers as the pattern over the whole text, for every call the pattern names.
    import re

    from flake8_tensorcopy.rules.tns4 import _INPLACE_CALLS, _INPLACE_ON, _inplace_receivers

    named = re.search(r"\(\?:([^)]*)\)\\\(", _INPLACE_ON.pattern).group(1).split("|")
    assert sorted("." + m + "(" for m in named) == sorted(_INPLACE_CALLS)
    for call in [text] + [f"w{call}1)\n" for call in _INPLACE_CALLS]:
        assert sorted(_inplace_receivers(call)) == sorted(m.group(1) for m in _INPLACE_ON.finditer(call))


# An exponential moving average of a model's weights (pytorch-ignite's EMAHandler): the copy's
# parameters are detached in place (`p.detach_()`, which leaves a leaf that does not require
# grad), so the in-place update of the copy runs; without that, it raises, and is reported once
# (`mul_(...).add_(...)` writes twice, and the first write raises).
EMA = """
from copy import deepcopy

import torch
from torch import nn


class EMA:
    def __init__(self, model):
        self.model = model
        self.ema_model = deepcopy(self.model)
        for param in self.ema_model.parameters():
            param.detach_()

    def update(self, momentum):
        for ema_p, model_p in zip(self.ema_model.parameters(), self.model.parameters()):
            ema_p.mul_(1.0 - momentum).add_(model_p.data, alpha=momentum)


def update_copy(model, momentum):
    ema = deepcopy(model)
    for param in ema.parameters():
        param.detach_()
    for ema_p, model_p in zip(ema.parameters(), model.parameters()):
        ema_p.mul_(1.0 - momentum).add_(model_p.data, alpha=momentum)


def run_class():
    EMA(nn.Linear(2, 2)).update(0.1)


def run_function():
    update_copy(nn.Linear(2, 2), 0.1)
"""


@pytest.mark.parametrize("detached", [True, False], ids=["detached", "not detached"])
def test_a_copy_whose_parameters_are_detached_in_place_takes_in_place_updates(detached):
    code = EMA if detached else EMA.replace("param.detach_()", "assert param.dim() > 0")
    found = [(v.code, v.line) for v in lint_text(code, TNS4).violations]
    writes = [i + 1 for i, line in enumerate(code.splitlines()) if "ema_p.mul_(" in line]
    assert len(writes) == 2
    assert found == ([] if detached else [("TNS401", line) for line in writes])
    pytest.importorskip("torch")
    env = {}
    exec(compile(code, "<case>", "exec"), env)
    for run in ("run_class", "run_function"):
        if detached:
            env[run]()
        else:
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                env[run]()


# Attributes a module sets by their name: torchmetrics' `Metric.add_state("weight", default=t)`
# (here a base of the file's, as torchmetrics defines it: `setattr(self, name, default)`),
# `setattr(self, "bias", t)`, `register_buffer`.  `self.weight` is then the tensor it was given,
# not a parameter for its name; given a parameter, the write raises.
NAMED_ATTRIBUTES = """
import torch
from torch import nn


class Metric(nn.Module):
    def add_state(self, name, default):
        setattr(self, name, default)


class Mean(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("weight", default=torch.tensor(0.0))
        setattr(self, "bias", torch.zeros(1))
        self.register_buffer("in_proj_weight", tensor=torch.zeros(1))

    def update(self, value):
        self.weight += 1
        self.bias.add_(value)
        self.in_proj_weight.mul_(2)


def run():
    Mean().update(torch.tensor(2.0))
"""


@pytest.mark.parametrize("given", ["torch.tensor(0.0)", "nn.Parameter(torch.zeros(1))"])
def test_an_attribute_set_by_its_name_is_what_it_was_given(given):
    code = NAMED_ATTRIBUTES.replace("default=torch.tensor(0.0)", f"default={given}").replace(
        "setattr(self, \"bias\", torch.zeros(1))", f"setattr(self, \"bias\", {given})")
    found = [(v.code, v.line) for v in lint_text(code, TNS4).violations]
    lines = code.splitlines()
    writes = [lines.index("        self.weight += 1") + 1, lines.index("        self.bias.add_(value)") + 1]
    parameter = "Parameter" in given
    assert found == ([("TNS401", line) for line in writes] if parameter else [])
    pytest.importorskip("torch")
    env = {}
    exec(compile(code, "<case>", "exec"), env)
    if parameter:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            env["run"]()
    else:
        env["run"]()


# An attribute that is None, a dict or a parameter by the method that set it last (torch_geometric's
# GNNExplainer: `self.node_mask = {}` for a heterogeneous graph, then `self.node_mask[t] =
# Parameter(...)`): a write of a key into the dict is no write to a leaf.
MASKS = """
import torch
from torch.nn import Parameter


class Explainer:
    def __init__(self):
        self.node_mask = None
        self.is_hetero = False

    def init_masks(self, x):
        self.is_hetero = isinstance(x, dict)
        if self.is_hetero:
            self.node_mask = {}
            for t, feats in x.items():
                self._init_one(t, feats.size(0))
        else:
            self._init_homogeneous(x.size(0))

    def _init_homogeneous(self, n):
        if n == 0:
            self.node_mask = None
        else:
            self.node_mask = Parameter(torch.randn(n, 1) * 0.1)

    def _init_one(self, t, n):
        self.node_mask[t] = Parameter(torch.randn(n, 1) * 0.1)


def run():
    e = Explainer()
    e.init_masks({"a": torch.zeros(3, 2)})
    e.init_masks(torch.zeros(3, 2))
"""


def test_a_key_written_into_an_attribute_that_is_a_dict_on_that_path():
    assert lint_text(MASKS, TNS4).violations == []
    pytest.importorskip("torch")
    env = {}
    exec(compile(MASKS, "<case>", "exec"), env)
    env["run"]()


def test_an_inplace_activation_on_a_leaf_is_advised_its_out_of_place_form():
    # `F.relu(w, inplace=True)` and `torch.relu_(w)` are part of the computation: the advice is
    # the form that returns a new tensor (which runs on torch), not a no-grad block (which would
    # cut the gradient); no fix.  A plain in-place write keeps the no-grad advice and its fix.
    code = ("import torch\nimport torch.nn.functional as F\n\nw = torch.zeros(3, requires_grad=True)\n"
            "a = F.relu(w, inplace=True)\nb = torch.relu_(w)\nc = F.relu_(w)\nw.add_(1)\n")
    found = lint_text(code, select_rules(["TNS401"]), Options()).violations
    assert [(v.line, v.message.split("; ", 1)[1], v.fix is not None) for v in found] == [
        (5, "use `inplace=False`", False),
        (6, "use `torch.relu(...)`, which returns a new tensor", False),
        (7, "use `F.relu(...)`, which returns a new tensor", False),
        (8, "wrap it in `with torch.no_grad():`", True)]
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    w = torch.zeros(3, requires_grad=True)
    for bad in (lambda: F.relu(w, inplace=True), lambda: torch.relu_(w), lambda: F.relu_(w)):
        with pytest.raises(RuntimeError, match="leaf Variable"):
            bad()
    (F.relu(w, inplace=False) + torch.relu(w) + F.relu(w)).sum().backward()
    assert w.grad is not None


NUMPY_FUNCTION_WRITES = """\
import numpy as np
import torch


def fill_diagonal():
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1.0
    c = b ** 2
    vis = b.detach().numpy()
    np.fill_diagonal(vis, 0.0)
    c.sum().backward()
    return a.grad


def copyto():
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1.0
    c = b ** 2
    np.copyto(b.detach().numpy(), np.zeros((2, 2), dtype=np.float32))
    c.sum().backward()
    return a.grad


def clip_out():
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1.0
    c = b ** 2
    arr = b.detach().numpy()
    np.clip(arr, 0.0, 0.5, out=arr)
    c.sum().backward()
    return a.grad


def clip_copy():
    a = torch.ones(2, 2, requires_grad=True)
    b = a * 1.0
    c = b ** 2
    arr = b.detach().numpy()
    clipped = np.clip(arr, 0.0, 0.5)
    c.sum().backward()
    return a.grad
"""


def test_numpy_functions_that_write_into_an_array_of_a_saved_tensor():
    # NumPy's functions that write into the array they are given (`np.fill_diagonal`,
    # `np.copyto`) or into their `out=`: through `b.detach().numpy()`, they change `b`, which
    # `b ** 2` saved: no error, a wrong gradient (TNS402 says so).  `np.clip` without `out=`
    # makes a new array.
    found = lint_text(NUMPY_FUNCTION_WRITES, TNS4).violations
    lines = NUMPY_FUNCTION_WRITES.splitlines()
    assert sorted((v.code, lines[v.line - 1].strip()) for v in found) == [
        ("TNS402", "np.clip(arr, 0.0, 0.5, out=arr)"),
        ("TNS402", "np.copyto(b.detach().numpy(), np.zeros((2, 2), dtype=np.float32))"),
        ("TNS402", "np.fill_diagonal(vis, 0.0)")]
    assert all("the gradient is silently wrong" in v.message for v in found)
    pytest.importorskip("torch")
    ns = {}
    exec(compile(NUMPY_FUNCTION_WRITES, "<case>", "exec"), ns)
    right = ns["clip_copy"]().tolist()  # d(b**2)/da = 2 b = 2
    assert right == [[2.0, 2.0], [2.0, 2.0]]
    for name in ("fill_diagonal", "copyto", "clip_out"):
        assert ns[name]().tolist() != right, name
