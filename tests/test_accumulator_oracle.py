"""TNS503 held to real torch: a running total in a training loop that is printed, never
back-propagated, started from four kinds of zero and added 17 kinds of term.  The rule reports
exactly the totals that still require grad after the loop (each keeps every step's graph)."""

import bisect
import warnings

import pytest

from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.model import Options

ADDS = ["total += loss", "total += loss.item()", "total += loss.detach()", "total = total + loss",
        "total += float(loss)", "total += loss.data", "total += loss.cpu()", "total += loss * 2", "total += out.sum()",
        "total += out.detach().sum()", "total += (out > 0).sum()", "total += out.argmax()", "total += loss.tolist()",
        "total += torch.tensor(loss.item())", "total += loss.clone()", "total += loss.to(torch.float64)",
        "total += loss.long()"]
STARTS = ["0", "0.0", "torch.zeros(())", "torch.tensor(0.0)"]
BODY = """
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    total = {start}
    for x in [torch.randn(2, 3) for _ in range(3)]:
        out = model(x)
        loss = out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        {add}
    print(total)
"""


def test_tns503_reports_exactly_the_totals_that_keep_a_graph(capsys):
    torch = pytest.importorskip("torch")
    cases = [(add, start) for add in ADDS for start in STARTS]
    code = "import torch\n" + "".join(f"\n\ndef case{i}():" + BODY.format(start=s, add=a)
                                      for i, (a, s) in enumerate(cases))
    starts = [n for n, text in enumerate(code.splitlines(), 1) if text.startswith("def case")]
    reported = {bisect.bisect_right(starts, v.line) - 1
                for v in lint_text(code, select_rules(["TNS503"]), Options()).violations}
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (add, start) in enumerate(cases):
            env = {"torch": torch}
            run = "def run():" + BODY.format(start=start, add=add) + "    return total\n"
            exec(compile(run, "<case>", "exec"), env)
            total = env["run"]()
            kept = isinstance(total, torch.Tensor) and total.requires_grad
            if kept != (i in reported):
                wrong.append((add, start, "keeps a graph" if kept else "keeps none"))
    capsys.readouterr()
    assert wrong == [], "\n".join(map(str, wrong))
