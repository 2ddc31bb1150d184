"""The walker's domains for TNS5xx (analysis/snapshots.py, accumulators.py): the pre-filters that
keep them cheap, and the scopes they are active in."""

import ast
import textwrap

from flake8_tensorcopy.analysis import make_domains
from flake8_tensorcopy.analysis.snapshots import is_optimizer_name
from flake8_tensorcopy.analysis.text_tests import might_accumulate, might_alias_tensor
from flake8_tensorcopy.analysis.walker import Walker
from flake8_tensorcopy.model import Options
from flake8_tensorcopy.rules.base import Context
from flake8_tensorcopy.source import LineIndex

HEAD = """\
import numpy as np
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]


def evaluate(net):
    with torch.no_grad():
        return sum(nn.functional.mse_loss(net(x), y).item() for x, y in loader)

"""


def test_prefilters():
    assert might_accumulate("total = 0\nfor x in y:\n    total += loss\n")
    assert might_accumulate("t, n = torch.zeros(1), 0\nwhile t:\n    t = t + loss\n")
    assert not might_accumulate("for x in y:\n    total += loss\n")  # no start from zero
    assert not might_accumulate("h = ()\nfor x in y:\n    h += (x,)\n")
    assert not might_accumulate("c = 0\nfor x in y:\n    c += 1\n")
    assert not might_accumulate("total = 0\ntotal += loss\n")  # no loop
    assert might_accumulate("running = {'loss': 0.0}\nfor x in y:\n    running['loss'] += loss\n")
    assert might_accumulate("r = collections.defaultdict(float)\nwhile x:\n    r[\"l\"] = r[\"l\"] + loss\n")
    assert not might_accumulate("r = f()\nfor x in y:\n    r['loss'] += loss\n")  # not a new dict
    assert not might_accumulate("total = {}\nfor x in y:\n    total += loss\n")  # a dict is no zero
    # Kept in place: a new empty list's append, a zero tensor's add_ (no `+` in the text).
    assert might_accumulate("losses = []\nfor x in y:\n    losses.append(loss)\n")
    assert might_accumulate("a, losses = [], list()\nfor x in y:\n    if x: losses.append(f(x, y.detach()))\n")
    assert might_accumulate("losses: list = []\nfor x in y:\n    losses.append(x * y.detach())\n")
    assert might_accumulate("t = torch.zeros(())\nwhile t:\n    t.add_(loss)\n")
    assert might_accumulate("r = {'l': torch.tensor(0.0)}\nfor x in y:\n    r['l'].add_(loss, alpha=2)\n")
    assert not might_accumulate("losses = []\nfor x in y:\n    losses.append(loss.item())\n")  # no graph
    assert not might_accumulate("h = []\nfor x in y:\n    h.append(model(x).detach())\n")
    assert not might_accumulate("self.h = []\nfor x in y:\n    self.h.append(loss)\n")  # not a name
    assert not might_accumulate("losses = f()\nfor x in y:\n    losses.append(loss)\n")  # not a new list
    assert not might_accumulate("t = f()\nfor x in y:\n    t.add_(loss)\n")  # no start from zero
    assert not might_accumulate("losses = []\nlosses.append(loss)\n")  # no loop
    # A list of losses by its spelling: "loss" in its name or in what is appended.
    assert might_accumulate("history = []\nfor x in y:\n    history.append(train_loss)\n")
    assert might_accumulate("h = []\nfor x in y:\n    h.append(crit(\n        out, self.loss_w))\n")
    assert not might_accumulate("outputs = []\nfor x in y:\n    outputs.append(net(x))\n")
    assert not might_accumulate("all_hidden = []\nfor layer in self.layers:\n    all_hidden.append(h)\n")
    assert might_alias_tensor("hist.append(w.detach().numpy())\n")
    assert might_alias_tensor("prev = w.detach()\n")
    assert not might_alias_tensor("w.data.normal_(0, 1)\nx = y.detach().clone()\n")
    assert is_optimizer_name("optimizer") and is_optimizer_name("self.opt_g") and is_optimizer_name("optimizerD")
    assert not is_optimizer_name("scheduler") and not is_optimizer_name("lr_scheduler")
    assert not is_optimizer_name("opt_state_dict") and not is_optimizer_name("scaler")


class _Domains:
    """Records, per scope, which TNS5 domains were active."""

    domains = ("snapshots", "accumulators")

    def __init__(self):
        self.seen = {}

    def leave_scope(self, scope, ctx):
        name = getattr(scope.node, "name", "<module>")
        self.seen[name] = tuple(k for k in self.domains if ctx.domain(k) is not None)


def test_domains_are_active_only_where_they_can_find_something():
    code = HEAD + textwrap.dedent("""
        def plain(a, b):
            for i in range(3):
                a = a * b
            return a

        def history():
            h = []
            for i in range(3):
                opt.step()
                h.append(model.weight.detach())
            return np.stack(h)

        def accumulate():
            total = 0
            for x, y in loader:
                total += nn.functional.mse_loss(model(x), y)
            print(total.item())
    """)
    probe = _Domains()
    ctx = Context(LineIndex(code), Options())
    Walker(ast.parse(code), [probe], ctx, domains=make_domains({"snapshots", "accumulators"}, Options())).run()
    assert probe.seen["plain"] == ()
    assert probe.seen["evaluate"] == ()
    assert probe.seen["history"] == ("snapshots",)
    assert probe.seen["accumulate"] == ("accumulators",)


def test_a_file_without_their_texts_does_not_import_the_snapshot_and_accumulator_domains(tmp_path):
    # Their text tests (text_tests.py) are all a check of such a file needs of them; a file that
    # may keep a state dict imports them for its walk.
    import subprocess
    import sys

    plain = tmp_path / "plain.py"
    plain.write_text(HEAD + "y = model(torch.randn(2, 4)).detach().clone()\n")
    kept = tmp_path / "kept.py"
    kept.write_text(HEAD + "best = model.state_dict()\nopt.step()\n")
    code = ("import sys\nfrom flake8_tensorcopy import cli\n"
            "cli.main(['check', '--no-cache', '--isolated', sys.argv[1]])\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.endswith(('.snapshots', '.accumulators'))))\n")
    seen = []
    for path in (plain, kept):
        out = subprocess.run([sys.executable, "-c", code, str(path)], cwd=tmp_path, capture_output=True, text=True,
                             check=True).stdout
        seen.append(out.strip().splitlines()[-1])
    assert seen == ["[]", "['snapshots']"]
