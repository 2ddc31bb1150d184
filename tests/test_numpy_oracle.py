"""TNS103-TNS105 held to real torch: NumPy functions given tensors (one that requires grad, its
detached copy, a plain tensor, an element, a sum, an array).  No NumPy call the rules report
runs clean on torch; in strict mode every call that raises for its tensor is reported (default
mode leaves out a detached model output, which may be a tuple or a dict)."""

import collections
import warnings

import pytest

from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.model import Options

CALLS = ["np.asarray({e})", "np.array({e})", "np.mean({e})", "np.sum({e})", "np.max({e})", "np.std({e})",
         "np.argmax({e})", "np.concatenate([{e}, {e}])", "np.stack([{e}, {e}])", "np.asarray([{e}, {e}])",
         "np.array({e}.tolist())", "np.round({e})", "np.exp({e})", "np.abs({e})", "np.clip({e}, 0, 1)",
         "np.where({e} > 0)", "np.isnan({e})", "np.mean([{e}, {e}])", "np.percentile({e}, 50)",
         "np.squeeze({e})", "np.transpose({e})", "np.float32({e})", "np.linalg.norm({e})", "np.dot({e}, {e})",
         "np.cumsum({e})", "np.unique({e})", "np.sort({e})", "np.histogram({e})", "np.mean({e}, axis=0)",
         "np.allclose({e}, {e})", "np.asarray({e}, dtype=np.float32)"]
TENSORS = ["y", "y.detach()", "x", "y[0]", "y.sum()", "x.numpy()"]
HEAD = "import torch\nimport numpy as np\nx = torch.randn(3)\nm = torch.nn.Linear(3, 3)\ny = m(torch.randn(3))\n"


@pytest.mark.parametrize("strict", [False, True])
def test_numpy_calls_are_reported_where_torch_raises(strict):
    torch = pytest.importorskip("torch")
    cases = [c.format(e=e) for c in CALLS for e in TENSORS]
    code = HEAD + "".join(f"z = {c}\n" for c in cases)
    found = collections.defaultdict(set)
    for v in lint_text(code, select_rules(["TNS1"]), Options(strict=strict)).violations:
        found[v.line].add(v.code)
    wrong = []
    for i, call in enumerate(cases):
        env = {"torch": torch}
        exec(compile(HEAD, "<head>", "exec"), env)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                eval(call, env)
                raised = False
            except RuntimeError as exc:
                raised = "requires grad" in str(exc)
            except TypeError:
                raised = True
            except ValueError:  # (NumPy's own, on a 0-d value: `np.where(y.sum() > 0)`)
                raised = False
        reported = bool(found.get(6 + i))
        if reported and not raised:
            wrong.append((call, "reported, runs"))
        elif strict and raised and not reported:
            wrong.append((call, "raises, not reported"))
    assert wrong == [], "\n".join(map(str, wrong))
