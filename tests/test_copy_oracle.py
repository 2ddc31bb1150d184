"""TNS202 held to real torch: `torch.tensor(arg)` for 40 arguments (tensors, their elements,
values computed from them, lists, NumPy arrays, numbers).  The rule reports exactly the calls for
which torch warns "To copy construct from a tensor", default and strict mode."""

import warnings

import pytest

from conftest import reported_lines

ARGUMENTS = [
    'x',
    'x * 2',
    'x.detach()',
    'x.clone()',
    'x[0]',
    'x.sum()',
    'x.mean()',
    'x.item()',
    'x.tolist()',
    'x.numpy()',
    'x.shape',
    'x.size(0)',
    'x.shape[0]',
    'len(x)',
    '[x[0], x[1]]',
    '(x[0], x[1])',
    '[1.0, 2.0]',
    '3.0',
    'y',
    'y.detach()',
    'm.weight',
    'm.weight.data',
    'lst',
    'x.max()',
    'x.max(0)[0]',
    'x.argmax()',
    'torch.randn(3)',
    'torch.from_numpy(x.numpy())',
    'x.cpu()',
    'x.float()',
    'x.norm()',
    'x.numel()',
    'x.dim()',
    'x.dtype',
    'x > 0',
    '(x > 0).sum()',
    'x.std().item()',
    '[t.item() for t in x]',
    'np.array([1.0])',
    'x.T',
]
HEAD = ("import torch\nimport numpy as np\nx = torch.randn(3)\nm = torch.nn.Linear(3, 2)\n"
        "y = m(torch.randn(2, 3))\nlst = [1.0, 2.0]\n")


@pytest.mark.parametrize("strict", [False, True])
def test_tns202_is_reported_exactly_where_torch_warns(strict):
    torch = pytest.importorskip("torch")
    code = HEAD + "".join(f"z = torch.tensor({a})\n" for a in ARGUMENTS)
    reported = reported_lines(code, "TNS202", strict)
    wrong = []
    for i, arg in enumerate(ARGUMENTS):
        env = {}
        exec(compile(HEAD, "<head>", "exec"), env)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                eval(f"torch.tensor({arg})", env)
            except (RuntimeError, TypeError, ValueError):
                pass  # (`x.item()` of a 3-element tensor, `x.dtype`: no tensor made)
        warns = any("copy construct" in str(w.message) for w in caught)
        if warns != (7 + i in reported):
            wrong.append((arg, "warns" if warns else "silent"))
    assert wrong == [], "\n".join(map(str, wrong))
