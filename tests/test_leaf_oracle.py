"""TNS401 held to real torch: in-place writes (`t.add_(1)`, `t.zero_()`, `t[0] = 1.0`) on
expressions of a leaf that requires grad, each in a function of its own.  Every write the rule
reports raises torch's leaf error; the writes listed as reached are reported (the others,
`w.reshape(3)` or `w.cpu()`, which are the leaf only for some tensors, are not claimed)."""

import warnings

import pytest

from conftest import reported_lines

# (target, whether the rule must report writes to it)
TARGETS = [
    ("w", True),
    ("w[0:2]", True),
    ("w.view(-1)", True),
    ("w.T", True),
    ("w.expand(3)", True),
    ("w.unsqueeze(0)", True),
    ("w.squeeze()", True),
    ("w.narrow(0, 0, 1)", True),
    ("w.split(1)[0]", False),
    ("w.chunk(3)[0]", False),
    ("w.view_as(w)", True),
    ("lin.weight", True),
    ("lin.weight[0]", True),
    ("lin.bias", True),
    ("params[0]", True),
    ("list(lin.parameters())[1]", True),
    ("w.reshape(3)", False),
    ("w.cpu()", False),
    ("w.data", False),
    ("w.detach()", False),
    ("w.clone()", False),
    ("(w * 1)", False),
    ("torch.zeros(3)", False),
    ("lin.weight.data", False),
    ("w.double()", False),
    ("w.detach().clone().requires_grad_()", False),
]
WRITES = ["{t}.add_(1)", "{t}.zero_()", "{t}[0] = 1.0"]
BODY = ("    w = torch.zeros(3, requires_grad=True)\n    lin = torch.nn.Linear(3, 3)\n"
        "    params = list(lin.parameters())\n")


def _cases():
    return [(t, must, w.format(t=t)) for t, must in TARGETS for w in WRITES]


@pytest.mark.parametrize("strict", [False, True])
def test_tns401_reports_writes_that_raise_and_only_those(strict):
    torch = pytest.importorskip("torch")
    cases = _cases()
    code = "import torch\n\n" + "".join(f"def case{i}():\n{BODY}    {stmt}\n\n"
                                        for i, (_, _, stmt) in enumerate(cases))
    reported = reported_lines(code, "TNS401", strict)
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (_target, must, stmt) in enumerate(cases):
            env = {"torch": torch}
            exec(compile(f"def run():\n{BODY}    {stmt}\n", "<case>", "exec"), env)
            try:
                env["run"]()
                raised = False
            except RuntimeError as exc:
                raised = "leaf Variable that requires grad" in str(exc)
            line = 3 + 6 * i + 4
            if line in reported and not raised:
                wrong.append((stmt, "reported, runs"))
            if must and line not in reported:
                wrong.append((stmt, "not reported"))
            if must and not raised:
                wrong.append((stmt, "listed as reached, runs"))
    assert wrong == [], "\n".join(map(str, wrong))
