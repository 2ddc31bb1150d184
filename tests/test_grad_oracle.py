"""What the analysis says of whether an expression requires grad, held to real torch: for each
expression of a model"s output `y`, `(expr).numpy()` is reported by TNS101 (default and strict
mode) exactly where torch"s result requires grad, so that `.numpy()` raises."""

import warnings

import pytest

from conftest import reported_lines

EXPRESSIONS = [
    "torch.argmax(y)",
    "torch.argmax(y, dim=1)",
    "y.argmax(1)",
    "torch.nonzero(y)",
    "torch.where(y > 0)[0]",
    "torch.where(y > 0, y, 0.0)",
    "torch.searchsorted(torch.tensor([0.0, 1.0]), y.detach())",
    "torch.bucketize(y, torch.tensor([0.0]))",
    "torch.multinomial(y.softmax(0).flatten(), 1)",
    "torch.topk(y.flatten(), 1)[1]",
    "torch.topk(y.flatten(), 1)[0]",
    "torch.topk(y.flatten(), 1).indices",
    "torch.sort(y.flatten()).indices",
    "torch.sort(y.flatten())[0]",
    "y.max(dim=1)[1]",
    "y.max(dim=1).values",
    "y.max()",
    "torch.max(y, 1)[1]",
    "y.round()",
    "y.floor()",
    "y // 2",
    "y.sign()",
    "torch.sign(y)",
    "y.clamp(0, 1)",
    "y.int()",
    "y.float()",
    "y.to(torch.float16)",
    "y.to(torch.long)",
    "torch.nn.functional.one_hot(torch.tensor([0, 1]))",
    "torch.randint(0, 5, (3,))",
    "torch.zeros_like(y)",
    "torch.ones_like(y)",
    "torch.empty_like(y)",
    "torch.rand_like(y)",
    "torch.full_like(y, 2.0)",
    "y.new_zeros(3)",
    "y.clone()",
    "y.detach().clone()",
    "torch.isnan(y)",
    "torch.isfinite(y)",
    "torch.eq(y, y)",
    "torch.logical_not(y > 0)",
    "torch.cat([y, y])",
    "torch.stack([y, y])",
    "torch.cat([y.detach(), y.detach()])",
    "y.sum()",
    "y.mean(0)",
    "y.unique()",
    "torch.unique(y)",
    "y.nonzero()",
    "y.count_nonzero()",
    "torch.count_nonzero(y)",
    "torch.bincount(torch.tensor([1, 2]))",
    "torch.histc(y)",
    "torch.argsort(y)",
    "y.long().float()",
    "y.bool()",
    "y.data",
    "y.grad",
    "torch.as_tensor(y)",
    "torch.from_numpy(y.detach().numpy())",
    "y.T",
    "y.view(-1)",
    "y.reshape(-1)",
    "y.squeeze()",
    "y.softmax(-1)",
    "torch.sigmoid(y)",
    "y.cpu()",
    "y.type(torch.float64)",
    "y.type(torch.LongTensor)",
    "y.numel()",
    "torch.diag(y)",
    "torch.tril(y)",
    "y.abs()",
    "y.exp()",
    "y.masked_fill(y > 0, 0.0)",
    "torch.masked_select(y, y > 0)",
    "torch.gather(y, 1, torch.zeros(2, 1, dtype=torch.long))",
    "y[y > 0]",
    "y[0]",
    "y[:, 0]",
    "y.norm()",
    "torch.linalg.norm(y)",
    "torch.cdist(y, y)",
    'torch.einsum("ij->i", y)',
    "y @ y.T",
    "y.matmul(y.T)",
    "torch.distributions.Categorical(logits=y).sample()",
    "torch.distributions.Normal(y, 1.0).rsample()",
    "torch.distributions.Normal(y, 1.0).sample()",
    "torch.nn.functional.softmax(y, dim=-1)",
    "torch.nn.functional.gumbel_softmax(y, hard=True)",
    "y.detach().requires_grad_()",
    "y.requires_grad_(False) if False else y.detach()",
    "torch.asarray(y)",
    "torch.asarray(y, copy=True)",
    "torch.as_tensor(y, dtype=torch.float64)",
    "torch.complex(y, y)",
    "torch.polar(y.abs(), y)",
    "torch.Tensor(y)",
    "torch.FloatTensor(y)",
    "torch.normal(y, 1.0)",
    "torch.normal(0.0, y.exp())",
    "torch.normal(0.0, 1.0, (2,))",
    "torch.bernoulli(y.sigmoid())",
    "torch.poisson(y.exp())",
    "torch.asarray([y[0, 0], y[0, 1]])",
    "torch.as_tensor(y.detach())",
    "torch.tensor(y)",
]

HEAD = "import torch\nm = torch.nn.Linear(3, 2)\ny = m(torch.randn(2, 3))\n"


def _requires_grad(torch, expr: str):
    env = {"torch": torch}
    exec(compile(HEAD, "<head>", "exec"), env)
    value = eval(expr, env)
    return isinstance(value, torch.Tensor) and value.requires_grad


@pytest.mark.parametrize("strict", [False, True])
def test_tns101_is_reported_exactly_where_torch_requires_grad(strict):
    torch = pytest.importorskip("torch")
    code = HEAD + "".join(f"print(({e}).numpy())\n" for e in EXPRESSIONS)
    reported = reported_lines(code, "TNS101", strict)
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, expr in enumerate(EXPRESSIONS):
            truth = _requires_grad(torch, expr)
            if truth != (i + 4 in reported):
                wrong.append((expr, "requires grad" if truth else "no grad", "silent" if truth else "reported"))
    assert wrong == []
