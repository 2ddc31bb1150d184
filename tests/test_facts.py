"""What the analysis knows of a value (analysis/evaluate.py, gradmode.py): grad, device and kind
facts, asked through a probe.  Where a fact is a claim about torch, it is checked on real torch."""

import ast

import pytest

from flake8_tensorcopy.analysis.gradmode import no_grad_callees
from probes import probe, probes

HEAD = "import torch\nfrom torch import nn\nmodel = nn.Linear(3, 2)\nout = model(torch.randn(4, 3))\n"


@pytest.mark.parametrize("expr", [
    "torch.max(out, 1)[1]", "out.max(1)[1]", "out.max(dim=1).indices", "out.topk(2).indices",
    "torch.sort(out)[1]", "out.kthvalue(1, dim=1)[1]",
])
def test_indices_of_a_values_indices_pair_do_not_require_grad(expr):
    f = probe(HEAD + f"probe({expr})\n")
    assert f.is_tensor and not f.may_require_grad


def test_values_of_a_pair_and_unpacking():
    code = HEAD + "values, idx = torch.max(out, 1)\nprobe(values)\nprobe(idx)\nprobe(torch.max(out))\n"
    (v, _), (i, _), (m, _) = probes(code)
    assert v.may_require_grad and not i.may_require_grad and m.may_require_grad
    # Elementwise max of two tensors is a tensor, not a pair.
    assert probe(HEAD + "probe(torch.max(out, out)[1])\n").may_require_grad


def test_pair_indices_inside_no_grad():
    code = HEAD + "with torch.no_grad():\n    vals, idx = out.sort()\nprobe(vals)\n"
    assert not probe(code).may_require_grad


def test_enumerate_and_zip_keep_positions():
    code = (
        "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader([])\n"
        "model = torch.nn.Linear(3, 2)\n"
        "for i, (x, y) in enumerate(loader):\n    probe(i)\n    probe(x)\n"
        "outs = [model(torch.randn(1, 3))]\n"
        "for o, (a, b) in zip(outs, loader):\n    probe(o)\n    probe(a)\n"
    )
    (i, _), (x, _), (o, _), (a, _) = probes(code)
    assert i.kind == "other"
    assert x.is_tensor and not x.may_require_grad
    assert o.may_require_grad
    assert a.is_tensor and not a.may_require_grad


def test_list_append_and_extend_record_elements():
    code = HEAD + "losses = []\nfor _ in range(3):\n    losses.append(out.sum())\nprobe(losses)\n"
    f = probe(code)
    assert f.kind == "seq" and f.element.may_require_grad
    code = HEAD + "losses = []\nfor _ in range(3):\n    losses.append(out.sum().item())\nprobe(losses)\n"
    assert not probe(code).element.may_require_grad
    code = HEAD + "xs = []\nxs.extend([out])\nprobe(xs)\n"
    assert probe(code).element.may_require_grad


@pytest.mark.parametrize("freeze", [
    "for p in model.parameters():\n    p.requires_grad = False\n",
    "for p in model.parameters():\n    p.requires_grad_(False)\n",
    "for name, p in model.named_parameters():\n    p.requires_grad = False\n",
    "model.requires_grad_(False)\n",
])
def test_frozen_model_output_is_not_known_to_require_grad(freeze):
    code = "import torch\nmodel = torch.nn.Linear(3, 2)\n" + freeze + "probe(model(torch.randn(2, 3)))\n"
    assert not probe(code).may_require_grad


def test_partially_frozen_model_still_requires_grad():
    code = ("import torch\nmodel = torch.nn.Linear(3, 2)\nfor name, p in model.named_parameters():\n"
            "    if name == 'bias':\n        p.requires_grad = False\nprobe(model(torch.randn(2, 3)))\n")
    assert probe(code).may_require_grad


@pytest.mark.parametrize("expr,requires", [
    ("torch.autograd.grad((w * 2).sum(), w)[0]", False),
    ("(w * 2).new_zeros(3)", False),
    ("(w * 2).new_tensor([1.0])", False),
    ("(w * 2).sign()", True),
    ("torch.unique(w * 2)", True),
])
def test_autograd_grad_new_tensors_and_sign(expr, requires):
    code = f"import torch\nw = torch.ones(3, requires_grad=True)\nprobe({expr})\n"
    assert probe(code).may_require_grad is requires
    torch = pytest.importorskip("torch")
    w = torch.ones(3, requires_grad=True)
    assert eval(expr, {"torch": torch, "w": w}).requires_grad is requires  # measured, not assumed


def test_distribution_samples_are_not_known_to_require_grad():
    code = ("import torch\nfrom torch.distributions import Categorical\nmodel = torch.nn.Linear(3, 2)\n"
            "d = Categorical(logits=model(torch.randn(1, 3)))\nprobe(d.sample())\n")
    assert not probe(code).may_require_grad


def test_device_attribute_and_joins_with_cpu_strings():
    code = ("import torch\nx = torch.randn(3)\ny = torch.zeros(3).to(x.device)\nprobe(y)\n"
            "def f(t):\n    d = t.device if torch.is_tensor(t) else 'cpu'\n    probe(torch.zeros(3).to(d))\n"
            "def g(dev):\n    probe(torch.zeros(3).to(dev))\n")
    (y, _), (z, _), (w, _) = probes(code)
    assert not y.may_be_on_accelerator  # x is on the CPU
    assert not z.may_be_on_accelerator  # the device of an unknown tensor, or the CPU: unknown
    assert w.may_be_on_accelerator  # `.to(device)`: an explicit device may be an accelerator


def test_functions_only_called_under_no_grad():
    code = (
        "import torch\n"
        "def evaluate():\n    helper()\n"
        "def helper():\n    pass\n"
        "def train():\n    pass\n"
        "def callback():\n    pass\n"
        "class Net:\n    def predict(self):\n        pass\n"
        "with torch.no_grad():\n    evaluate()\n    Net().predict()\n    callback()\n"
        "train()\nhooks = [callback]\n"
        "@torch.inference_mode()\ndef outer():\n    train2()\n"
        "def train2():\n    pass\n"
        "with torch.set_grad_enabled(True):\n    never()\n"
        "def never():\n    pass\n"
    )
    assert no_grad_callees(ast.parse(code)) == {"evaluate", "helper", "predict", "train2"}


def test_functions_that_call_themselves_only_called_under_no_grad():
    # A function that recurses, or two that call each other, run with grad off when every other
    # call of them does; one that only its own body calls (another module may call it) does not,
    # nor one also called with grad on.  A torch function of the same name called inside
    # (`torch._foreach_lerp_` in timm's `_foreach_lerp_`) is matched by name, as a recursion.
    code = (
        "import torch\n"
        "def walk(n):\n    if n:\n        walk(n - 1)\n"
        "def ping(n):\n    pong(n)\ndef pong(n):\n    ping(n - 1)\n"
        "def alone(n):\n    alone(n - 1)\n"
        "def mixed(n):\n    mixed(n - 1)\n"
        "class Ema:\n    def _foreach_lerp_(self, a, b):\n        torch._foreach_lerp_(a, b, weight=0.1)\n"
        "    @torch.no_grad()\n    def update(self, a, b):\n        self._foreach_lerp_(a, b)\n"
        "with torch.no_grad():\n    walk(3)\n    ping(3)\n    mixed(3)\n"
        "mixed(2)\n"
    )
    assert no_grad_callees(ast.parse(code)) == {"walk", "ping", "pong", "_foreach_lerp_"}
    # `nncf.quantize(...)` in a function that a no-grad call reaches is no call of the file's
    # public `quantize` (which calls that function back): transformers' NNCF quantizer.
    code = (
        "import torch\nimport nncf\n"
        "class Q:\n    def _run(self, m):\n        return nncf.quantize(m)\n"
        "    def quantize(self, m):\n        return self._run(m).numpy()\n"
        "    def traced(self, m):\n        with torch.no_grad():\n            return self._run(m)\n"
    )
    assert no_grad_callees(ast.parse(code)) == set()


def test_no_grad_callee_bodies_run_with_grad_off():
    code = HEAD + "def show():\n    probe(out)\nwith torch.no_grad():\n    show()\n"
    (_, no_grad), = probes(code)
    assert no_grad


def test_module_with_no_grad_forward():
    code = ("import torch\nfrom torch import nn\n\nclass Feats(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = nn.Linear(3, 2)\n\n    @torch.no_grad()\n"
            "    def forward(self, x):\n        return self.fc(x)\n\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(3, 2)\n\n    def forward(self, x):\n        return self.fc(x)\n\n"
            "probe(Feats()(torch.randn(1, 3)))\nprobe(Net().to('cpu')(torch.randn(1, 3)))\n")
    (a, _), (b, _) = probes(code)
    assert not a.may_require_grad and b.may_require_grad


@pytest.mark.parametrize("expr", ["t.shape[1]", "t.size()[0]", "t.shape[1:]", "u.shape[0]", "out.shape[-1]"])
def test_sizes_are_not_tensors(expr):
    """`x.shape[i]` is an int (torch.Size, NumPy's tuple) whatever `x` is: comparing a tensor
    with it keeps the tensor's facts (`d <= latents.shape[1]` is on `d`'s device)."""
    code = HEAD + f"def f(t: torch.Tensor, u):\n    probe({expr})\n"
    f = probe(code)
    assert f.kind == "other", f
    compared = probe(HEAD + f"def f(t: torch.Tensor, u):\n    d = torch.zeros(3)\n    probe(d <= {expr})\n")
    assert compared.is_tensor and compared.device.name == "CPU" and not compared.may_require_grad
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    tensors = {"t": torch.ones(2, 3), "u": torch.ones(2, 3), "out": torch.nn.Linear(3, 2)(torch.randn(4, 3))}
    assert not isinstance(eval(expr, tensors), torch.Tensor)
    if "shape" in expr:
        assert not isinstance(eval(expr, {"t": np.ones((2, 3)), "u": np.ones((2, 3)), "out": np.ones(2)}), np.ndarray)


def test_a_list_may_hold_what_is_stored_into_it():
    """`[None] * n` is a list; `preds[i] = out` may put `out` in it (which element is not known,
    so what it held stays possible too)."""
    code = HEAD + ("preds = [None] * 3\nfor i in range(3):\n    preds[i] = model(torch.randn(4, 3))\nprobe(preds)\n"
                   "scores = [0.0, 0.0]\nscores[0] = 1.5\nprobe(scores)\n")
    (preds, _), (scores, _) = probes(code)
    assert preds.kind == "seq" and preds.element.may_require_grad
    assert scores.kind == "seq" and not scores.element.may_require_grad
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    ns = {"probe": lambda v: v}
    exec(compile(code, "<stores>", "exec"), ns)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.array(ns["preds"])
    assert np.array(ns["scores"]).tolist() == [1.5, 0.0]
    assert torch.is_tensor(ns["preds"][0])


def test_parameters_on_one_path_and_a_list_on_the_other_are_an_iterable_of_either():
    # `model.parameters()` or a list of tensors: iterating gives a parameter on one path, so the
    # element may require grad (and is a leaf there); a list of plain tensors on both paths not.
    code = HEAD + ("import sys\nps = model.parameters() if sys.argv else [torch.ones(2)]\n"
                   "for p in ps:\n    probe(p)\n"
                   "qs = [torch.zeros(1)] if sys.argv else [torch.ones(2)]\nfor q in qs:\n    probe(q)\n")
    (p, _), (q, _) = probes(code)
    assert p.is_tensor and p.may_require_grad and p.leaf
    assert q.is_tensor and not q.may_require_grad


def test_a_fact_is_immutable_and_but_copies_with_only_its_fields():
    from flake8_tensorcopy.analysis.facts import TENSOR, Device, Fact, Grad

    f = Fact(TENSOR, Grad.YES, Device.CPU, by_flow=True, tags=frozenset({"x"}))
    assert type(f) is Fact and (f.kind, f.grad, f.device, f.by_flow, f.tags) == (TENSOR, Grad.YES, Device.CPU, True,
                                                                                  frozenset({"x"}))
    with pytest.raises(AttributeError):
        f.grad = Grad.NO
    g = f.but(grad=Grad.NO, leaf=True)
    assert type(g) is Fact and (g.grad, g.leaf, g.device, g.tags) == (Grad.NO, True, Device.CPU, frozenset({"x"}))
    assert f.grad is Grad.YES and not f.leaf  # (the original is untouched)
    assert f.but() == f and hash(f.but()) == hash(f) and f.but() is not f
    with pytest.raises(TypeError):
        f.but(colour="red")
    with pytest.raises(AttributeError):
        g.kind = "other"


def test_a_display_of_literals_has_the_fact_the_evaluator_gives_it_element_by_element(monkeypatch):
    """evaluate._literal_display (a module's tables of names, thousands of strings) gives a tuple,
    list or set display of constants the same fact as evaluating each element and joining them;
    anything else, or displays nested more than four deep, it leaves to the evaluator."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flake8_tensorcopy.analysis import evaluate

    assert evaluate._literal_display(ast.parse("[1, x]", mode="eval").body) is None
    assert evaluate._literal_display(ast.parse("[(((1,),),)]", mode="eval").body) is not None
    assert evaluate._literal_display(ast.parse("[((((1,),),),)]", mode="eval").body) is None

    def slow(node, depth=0):
        return None

    constants = st.sampled_from(['"cuda"', '"cuda:1"', '"cpu"', '" MPS "', '"albert"', '""', "None", "0", "1.5",
                                 "True", "b'x'", "...", "-1", '"é"'])
    displays = st.recursive(constants, lambda inner: st.tuples(st.sampled_from(["({})", "({},)", "[{}]", "{{{}}}"]),
                                                               st.lists(inner, max_size=9)).map(
        lambda p: p[0].format(", ".join(p[1])) if p[1] or p[0] != "({},)" else "()"), max_leaves=30)

    @settings(max_examples=300, deadline=None)
    @given(displays)
    def same(expr):
        fast = probe(f"probe({expr})\n")
        with monkeypatch.context() as m:
            m.setattr(evaluate, "_literal_display", slow)
            assert probe(f"probe({expr})\n") == fast, expr

    same()


def test_none_joined_with_another_plain_value_is_that_value_not_none():
    # `self.masks = None` on one path, `= {}` on another: the join is the dict where it is one,
    # and a later join with a parameter is no parameter for certain.
    from flake8_tensorcopy.analysis.facts import NONE_FACT, OTHER, OTHER_FACT, TENSOR, Grad, join, tensor

    either = join(NONE_FACT, OTHER_FACT)
    assert either.kind == OTHER and "none" not in either.tags
    assert join(OTHER_FACT, NONE_FACT) == either
    leaf = tensor(Grad.YES, leaf=True, tags=frozenset({"parameter"}))
    assert join(either, leaf).kind != TENSOR
    assert join(NONE_FACT, leaf).kind == TENSOR  # (None and a tensor: the tensor, where it is one)
