"""TNS301 held to real torch over 16 GAN loops: the discriminator and generator steps in either
order, the generator output detached or not in the discriminator step, the generator step
reusing that output or computing it again, the discriminator's backward retaining its graph or
not.  The rule reports exactly the loops that do not detach, and its message says that the
step fails ("backward through the graph a second time") exactly where torch raises that."""

import itertools

import pytest

from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.model import Options

HEAD = """import torch
import torch.nn as nn
G = nn.Linear(4, 4)
D = nn.Linear(4, 1)
opt_d = torch.optim.Adam(D.parameters())
opt_g = torch.optim.Adam(G.parameters())
crit = nn.BCEWithLogitsLoss()
for real in [torch.randn(8, 4)]:
    z = torch.randn(8, 4)
    fake = G(z)
"""


def _loop(order: str, detach: bool, reuse: bool, retain: bool) -> str:
    seen = "fake.detach()" if detach else "fake"
    d_step = (f"    opt_d.zero_grad()\n"
              f"    loss_d = crit(D({seen}), torch.zeros(8, 1)) + crit(D(real), torch.ones(8, 1))\n"
              f"    loss_d.backward({'retain_graph=True' if retain else ''})\n    opt_d.step()\n")
    g_step = (f"    opt_g.zero_grad()\n    loss_g = crit(D({'fake' if reuse else 'G(z)'}), torch.ones(8, 1))\n"
              f"    loss_g.backward()\n    opt_g.step()\n")
    return HEAD + (d_step + g_step if order == "DG" else g_step + d_step)


@pytest.mark.parametrize("order, detach, reuse, retain",
                         list(itertools.product(["DG", "GD"], [False, True], [True, False], [False, True])))
def test_tns301_reports_and_says_what_torch_does(order, detach, reuse, retain):
    torch = pytest.importorskip("torch")
    code = _loop(order, detach, reuse, retain)
    found = lint_text(code, select_rules(["TNS301"]), Options()).violations
    try:
        exec(compile(code, "<gan>", "exec"), {"torch": torch})
        fails = False
    except RuntimeError as exc:
        assert "second time" in str(exc)
        fails = True
    assert len(found) == (0 if detach else 1)
    assert any("second time" in v.message for v in found) is fails
