"""TNS402, TNS501 and TNS502 held to real torch.

TNS402: a tensor `y` computed from `x`, a loss computed from `y`, then an in-place write through
`y.detach()`, then `loss.backward()`: reported exactly where backward raises ("modified by an
inplace operation").  TNS502: a snapshot of a parameter, an update of the parameter, then a read
of the snapshot: every snapshot reported changed with the update, and the documented views
(`.detach()`, `.data`, their NumPy arrays and host moves) are reported."""

import copy
import warnings

import pytest

from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.model import Options

OPS = ["torch.exp(x)", "x.exp()", "torch.sigmoid(x)", "torch.tanh(x)", "torch.relu(x)", "x * 2", "x + 1", "x ** 2",
       "torch.sin(x)", "x.log()", "torch.softmax(x, 0)", "x.sqrt()", "x.clone()", "x.abs()",
       "torch.nn.functional.gelu(x)", "x.view(-1)"]
CONSUMERS = ["y.sum()", "(y * y).sum()", "(y * 2).sum()", "y.pow(2).sum()", "torch.exp(y).sum()", "(y * w).sum()",
             # (a loss that reads y only detached: y's own op is not in its graph; the product
             # saves the detached view, which shares y's version counter, unless it is a copy)
             "(y.detach() * w).sum()", "(y.detach().clone() * w).sum()",
             # (losses: those that save their input, and two that do not, measured on torch 2.13)
             "torch.nn.functional.binary_cross_entropy_with_logits(y, torch.full((3,), 0.5))",
             "torch.nn.functional.smooth_l1_loss(y, torch.zeros(3))", "torch.nn.functional.huber_loss(y, torch.zeros(3))",
             "torch.nn.functional.soft_margin_loss(y, torch.ones(3))", "torch.nn.functional.l1_loss(y, torch.zeros(3))",
             "torch.nn.functional.cross_entropy(y.view(1, -1), torch.tensor([0]))",
             # (by keyword; keywords that change what is computed: `beta=0.0` is `l1_loss`)
             "torch.nn.functional.binary_cross_entropy_with_logits(y, target=torch.full((3,), 0.5))",
             "torch.nn.functional.huber_loss(input=y, target=torch.zeros(3), delta=0.5)",
             "torch.nn.functional.smooth_l1_loss(y, torch.zeros(3), beta=0.0)",
             "torch.nn.functional.nll_loss(y.view(1, -1), torch.tensor([0]))"]
WRITES = ["y.detach().zero_()", "y.detach()[0] = 5.0", "d = y.detach(); d.mul_(2)",
          # (a function of the file that writes into what it is passed, or through an alias it makes)
          "d = y.detach(); zero_(d)", "detach_zero_(y)", "detach_zero_(y[0:2])"]
HELPERS = "def zero_(t):\n    t.zero_()\n\ndef detach_zero_(t):\n    t.detach().zero_()\n\n"


def test_tns402_is_reported_exactly_where_backward_raises():
    torch = pytest.importorskip("torch")
    cases = [(o, c, wr) for o in OPS for c in CONSUMERS for wr in WRITES]
    body = ("    x = torch.rand(3, requires_grad=True) + 0.5\n    w = torch.rand(3, requires_grad=True)\n"
            "    y = {o}\n    loss = {c}\n    {wr}\n    loss.backward()\n")
    code = "import torch\n\n" + HELPERS + "".join(f"def case{i}():\n" + body.format(o=o, c=c, wr=wr) + "\n"
                                                  for i, (o, c, wr) in enumerate(cases))
    reported = {v.line - HELPERS.count("\n") for v in lint_text(code, select_rules(["TNS402"]), Options()).violations}
    wrong = []
    for i, (o, c, wr) in enumerate(cases):
        env = {"torch": torch}
        exec(compile(HELPERS + "def run():\n" + body.format(o=o, c=c, wr=wr), "<case>", "exec"), env)
        try:
            env["run"]()
            raised = False
        except RuntimeError as exc:
            raised = "modified by an inplace operation" in str(exc)
        if raised != (3 + 8 * i + 5 in reported):
            wrong.append((o, c, wr, "raises" if raised else "runs"))
    assert wrong == [], "\n".join(map(str, wrong))


def _misjudged(case: tuple, reported: bool, must: bool, changed: bool) -> list:
    """What is wrong with a rule's verdict on a snapshot the update `changed` (or not)."""
    return [(*case, why) for why, wrong in (("reported, unchanged", reported and not changed),
                                            ("not reported", must and not reported),
                                            ("listed as changed, unchanged", must and not changed)) if wrong]


# (snapshot, whether TNS502 must report it when an update follows)
SNAPSHOTS = [
    ("model.weight.detach()", True), ("model.weight.data", True), ("model.weight.detach().numpy()", True),
    ("model.weight.detach().cpu()", True), ("model.weight.detach().cpu().numpy()", True),
    ("model.weight.detach().to('cpu')", True), ("model.weight.detach().to('cpu').numpy()", True),
    ("model.weight.detach().to('cpu', copy=True)", False),
    ("model.weight.clone()", False), ("model.weight.detach().clone()", False), ("model.weight.tolist()", False),
    ("model.weight.detach().numpy().copy()", False), ("copy.deepcopy(model.weight)", False),
    ("model.weight.data.clone()", False), ("np.array(model.weight.detach())", False),
    ("model.weight.detach().to(torch.float64)", False), ("torch.tensor(model.weight.detach())", False),
    # Views of a view: the same storage.
    ("model.weight.detach().flatten()", True), ("model.weight.detach().view(-1)", True),
    ("model.weight.detach().t()", True), ("model.weight.detach().T", True), ("model.weight.detach()[0]", True),
    ("model.weight.detach()[:, :2]", True), ("model.weight.data.reshape(6)", True),
    ("model.weight.detach().numpy().reshape(-1)", True), ("np.asarray(model.weight.detach())", True),
    ("np.asarray(model.weight.detach().numpy())", True),
    ("model.weight.detach()[[0, 1]]", False), ("model.weight.detach().flatten().clone()", False),
    ("np.asarray(model.weight.detach()).copy()", False), ("model.weight.detach()[0] * 1", False),
]
UPDATES = ["opt.zero_grad(); model(torch.randn(2, 3)).sum().backward(); opt.step()", "model.weight.data.add_(1.0)",
           "with torch.no_grad():\n        model.weight.add_(1.0)", "torch.nn.init.zeros_(model.weight)",
           "model.load_state_dict({'weight': torch.ones(2, 3), 'bias': torch.ones(2)})"]


@pytest.mark.parametrize("alias", [None, "w"], ids=["the parameter", "a local alias of the parameter"])
def test_tns502_reports_snapshots_that_change_with_the_update(alias):
    # With an alias (`w = model.weight`, then `snap = w.detach()`): the snapshot is of the
    # parameter, which the updates of `model` reach, and so do the updates through `w`.
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    snapshots, updates = SNAPSHOTS, UPDATES
    head = "    model = torch.nn.Linear(3, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=1.0)\n"
    if alias is not None:
        head += f"    {alias} = model.weight\n"
        snapshots = [(s.replace("model.weight", alias), must) for s, must in SNAPSHOTS]
        updates = UPDATES + [f"{alias}.data.add_(1.0)", f"with torch.no_grad():\n        {alias}.mul_(2.0)"]
    cases = [(s, must, u) for s, must in snapshots for u in updates]
    code = "import copy\nimport numpy as np\nimport torch\n\n" + "".join(
        f"def case{i}():\n{head}    snap = {s}\n    {u}\n    print(snap)\n\n" for i, (s, _, u) in enumerate(cases))
    lines = [n for n, text in enumerate(code.splitlines(), 1) if text.startswith("    snap = ")]
    reported = {v.line for v in lint_text(code, select_rules(["TNS502"]), Options()).violations}

    def value(x):
        return x.detach().numpy().astype(float).copy() if isinstance(x, torch.Tensor) else np.array(x, dtype=float)

    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for (s, must, u), line in zip(cases, lines):
            env = {"torch": torch, "np": np, "copy": copy}
            exec(compile(f"def snapshot():\n{head}    snap = {s}\n    before = value(snap)\n    {u}\n"
                         "    return before, value(snap)\n", "<case>", "exec"), {**env, "value": value}, env)
            before, after = env["snapshot"]()
            wrong += _misjudged((s, u), line in reported, must, not np.allclose(before, after))
    assert wrong == [], "\n".join(map(str, wrong))


# (state-dict snapshot, whether TNS501 must report it when an update follows)
STATE_SNAPSHOTS = [
    ("model.state_dict()", True), ("model.state_dict().copy()", True), ("dict(model.state_dict())", True),
    ("collections.OrderedDict(model.state_dict())", True), ("copy.copy(model.state_dict())", True),
    ("copy.copy(copy.deepcopy(model.state_dict()))", False),
    ("copy.deepcopy(model.state_dict())", False), ("{k: v.clone() for k, v in model.state_dict().items()}", False),
    ("{k: v.cpu().clone() for k, v in model.state_dict().items()}", False),
    ("copy.deepcopy(model).state_dict()", False),
    # The parameters themselves; the arrays of the tensors (`.numpy()` runs only on the CPU).
    ("model.state_dict(keep_vars=True)", True), ("model.state_dict(keep_vars=False)", True),
    ("{k: v.numpy() for k, v in model.state_dict().items()}", True),
    ("{k: v.numpy().copy() for k, v in model.state_dict().items()}", False),
    # On the CPU, `.cpu()` and `.to("cpu")` return the tensor itself; a copy or a conversion copies
    # (and so does `.to("cpu:0")`, measured).
    ("{k: v.cpu() for k, v in model.state_dict().items()}", True),
    ("{k: v.to('cpu') for k, v in model.state_dict().items()}", True),
    ("{k: v.to(device='cpu') for k, v in model.state_dict().items()}", True),
    ("{k: v.to(torch.device('cpu')) for k, v in model.state_dict().items()}", True),
    ("{k: v.to('cpu', non_blocking=True) for k, v in model.state_dict().items()}", True),
    ("{k: v.to('cpu', copy=True) for k, v in model.state_dict().items()}", False),
    ("{k: v.to('cpu', torch.float64) for k, v in model.state_dict().items()}", False),
    ("{k: v.to(torch.float64) for k, v in model.state_dict().items()}", False),
    ("{k: v.to('cpu:0') for k, v in model.state_dict().items()}", False),
]


def test_tns501_reports_state_dicts_that_change_with_the_update():
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    import collections

    cases = [(s, must, u) for s, must in STATE_SNAPSHOTS for u in UPDATES]
    head = "    model = torch.nn.Linear(3, 2)\n    opt = torch.optim.SGD(model.parameters(), lr=1.0)\n"
    code = "import collections\nimport copy\nimport torch\n\n" + "".join(
        f"def case{i}():\n{head}    best = {s}\n    {u}\n    model.load_state_dict(best)\n\n"
        for i, (s, _, u) in enumerate(cases))
    lines = [n for n, text in enumerate(code.splitlines(), 1) if text.startswith("    best = ")]
    reported = {v.line for v in lint_text(code, select_rules(["TNS501"]), Options()).violations}
    wrong = []
    for (s, must, u), line in zip(cases, lines):
        env = {"torch": torch, "np": np, "copy": copy, "collections": collections}
        exec(compile(f"def snapshot():\n{head}    best = {s}\n    before = torch.as_tensor(best['weight']).detach().clone()\n"
                     f"    {u}\n    return before, torch.as_tensor(best['weight']).detach()\n", "<case>", "exec"), env)
        before, after = env["snapshot"]()
        wrong += _misjudged((s, u), line in reported, must, not torch.equal(before, after))
    assert wrong == [], "\n".join(map(str, wrong))
