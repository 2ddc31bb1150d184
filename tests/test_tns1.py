"""TNS1 (NumPy conversion) beyond its examples: messages, strict mode, fix composition, and the
device check on real torch (meta tensors on a CPU-only machine, CUDA where there is one).  The
analysis facts the rules rest on are tested in test_facts.py."""

import re

import pytest

from flake8_tensorcopy.engine import apply_fixes, fix_text, lint_text, select_rules
from flake8_tensorcopy.model import Options
from flake8_tensorcopy.rules import get_rule


def lint(code, **options):
    return lint_text(code, select_rules(["TNS1"]), Options(**options)).violations


def test_strict_mode_reports_unknown_origin_with_may():
    code = "import torch\nimport numpy as np\n\ndef f(t: torch.Tensor):\n    return t.numpy(), np.asarray(t)\n"
    assert lint(code) == []
    found = lint(code, strict=True)
    # TNS101's finding on `t.numpy()` names the device hazard too (one finding per expression).
    assert {v.code for v in found} == {"TNS101", "TNS103"}
    assert all(" may " in v.message for v in found)
    assert "may be on an accelerator" in next(v.message for v in found if v.code == "TNS101")
    alone = lint_text(code, select_rules(["TNS102"]), Options(strict=True)).violations
    assert [v.code for v in alone] == ["TNS102"]


def test_strict_mode_trusts_detach_and_host_moves_on_unknown_values():
    code = "import torch\n\ndef f(t):\n    return t.detach().cpu().numpy(), t.long().cpu().numpy(), t.data.cpu().numpy()\n"
    assert lint(code, strict=True) == []


INTEGER_CASTS = """
import torch

model = torch.nn.Linear(3, 1)
x = torch.randn(2, 3)
a = model(x).to(torch.long).numpy()
b = model(x).to(dtype=torch.int64).numpy()
c = model(x).type(torch.LongTensor).numpy()
d = model(x).to(torch.bool).numpy()
e = model(x).to("cpu", torch.int32).numpy()
f = model(x).type("torch.IntTensor").numpy()
"""


def test_a_cast_to_an_integer_dtype_does_not_require_grad():
    # Integer and bool tensors never require grad: each conversion runs on torch, and none is
    # reported, in strict mode either (`u.to(torch.long)` of an unknown `u` too).
    assert lint(INTEGER_CASTS) == []
    assert lint(INTEGER_CASTS, strict=True) == []
    unknown = ("import torch\n\ndef f(u):\n    return u.to(torch.long).cpu().numpy(), u.type(torch.LongTensor).numpy(), "
               "u.to(torch.long).numpy()\n")
    # Only where the last one is (a LongTensor is on the CPU).
    assert [(v.code, v.col) for v in lint(unknown, strict=True)] == [("TNS102", 77)]
    torch = pytest.importorskip("torch")
    exec(compile(INTEGER_CASTS, "<case>", "exec"), {})
    # A float dtype keeps grad: reported, and it raises.
    floating = INTEGER_CASTS + "g = model(x).to(torch.float64).numpy()\n"
    assert [(v.code, v.line) for v in lint(floating)] == [("TNS101", 12)]
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(floating, "<case>", "exec"), {"torch": torch})


def test_every_dtype_is_a_dtype_not_a_device():
    # `.to(torch.uint16)` and `.to(torch.float8_e4m3fn)` change the dtype; they were taken for a
    # device (`.to(device)`: maybe an accelerator) and reported by TNS102, with a safe fix.
    code = ("import torch\nx = torch.randn(3)\na = x.to(torch.uint16).numpy()\n"
            "b = x.to(torch.float8_e4m3fn).float().numpy()\nc = x.to(torch.complex32).numpy() if False else None\n")
    assert lint(code) == [] and lint(code, strict=True) == []
    torch = pytest.importorskip("torch")
    exec(compile(code, "<case>", "exec"), {"torch": torch})


def test_a_tensor_type_names_the_device_it_converts_to():
    # `t.type(torch.ByteTensor)` is a CPU tensor wherever `t` was (PyTorch's own
    # `_tensor_to_object` reads its bytes so); `torch.cuda.FloatTensor` an accelerator's.
    code = ("import torch\nx = torch.randn(3).cuda()\na = x.type(torch.ByteTensor).numpy()\n"
            "b = torch.randn(3).type(torch.cuda.FloatTensor).numpy()\nc = x.type(torch.float64).numpy()\n")
    assert [(v.code, v.line) for v in lint(code)] == [("TNS102", 4), ("TNS102", 5)]
    torch = pytest.importorskip("torch")
    assert torch.randn(3).type(torch.ByteTensor).device.type == "cpu"


def test_a_state_dicts_values_are_detached_and_where_the_module_is():
    # `state_dict()` holds the parameters and buffers detached: not "may require grad" in strict
    # mode (by key, `.values()`, `.items()`, `.get()`), but on an accelerator where the module is
    # (TNS102 by default).  `keep_vars=True` and a class's own `state_dict` stay unknown.
    code = ("import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 2)\nsd = model.state_dict()\n"
            "a = sd['weight'].numpy()\nb = [v.numpy() for v in sd.values()]\n"
            "c = {k: v.numpy() for k, v in model.state_dict().items()}\nd = sd.get('bias').numpy()\n")
    assert lint(code, strict=True) == []
    torch = pytest.importorskip("torch")
    exec(compile(code, "<case>", "exec"), {"__name__": "case"})
    moved = code.replace("nn.Linear(3, 2)", "nn.Linear(3, 2).cuda()")
    assert [(v.code, v.line) for v in lint(moved)] == [("TNS102", 6), ("TNS102", 7), ("TNS102", 8), ("TNS102", 9)]
    kept = code.replace("model.state_dict()\n", "model.state_dict(keep_vars=True)\n")
    assert [(v.code, v.line) for v in lint(kept, strict=True)] == [("TNS101", 6), ("TNS101", 7), ("TNS101", 9)]
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(kept, "<case>", "exec"), {"__name__": "case"})
    own = ("import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
           "        super().__init__()\n        self.w = nn.Parameter(torch.ones(2))\n\n"
           "    def state_dict(self, *args, **kwargs):\n        return {'w': self.w}\n\n\n"
           "a = Net().state_dict()['w'].numpy()\n")
    assert [(v.code, v.line) for v in lint(own, strict=True)] == [("TNS101", 13)]


def test_a_comparison_of_unknown_values_never_requires_grad():
    # `too_short = wav_lens < n` (pyannote): a bool, or a bool tensor where `wav_lens` is one,
    # which never requires grad; `.cpu()` puts it on the host.  Strict mode said "may require
    # grad and may be on an accelerator" of `too_short.cpu().numpy()`, and advised
    # `too_short.cpu().detach().cpu().numpy()`.  Without `.cpu()`, only its device is unknown.
    code = ("import torch\n\n\ndef f(wav_lens, n):\n    too_short = wav_lens < n\n"
            "    return too_short.cpu().numpy(), (wav_lens < n).numpy()\n")
    found = lint(code, strict=True)
    assert [(v.code, v.line, v.col) for v in found] == [("TNS102", 6, 36)]
    assert lint(code) == []
    torch = pytest.importorskip("torch")
    w = torch.ones(3, requires_grad=True)
    assert not (w < 2).requires_grad and (w < 2).dtype == torch.bool
    exec(compile(code + "f(torch.ones(3, requires_grad=True) * 2, 1)\n", "<case>", "exec"), {})


def test_one_value_of_a_list_that_holds_some_that_require_grad_may_not():
    # `xs = [torch.zeros(2), model(x)]`: `xs[0]` does not require grad, `xs[1]` does.  Which one a
    # subscript reads is not followed: strict mode's "may", not a default finding with a fix.
    code = ("import torch\n\nmodel = torch.nn.Linear(3, 2)\nxs = [torch.zeros(2), model(torch.randn(3))]\n"
            "a = xs[0].numpy()\nys = [model(torch.randn(3))]\nb = ys[0].numpy()\n")
    assert [(v.code, v.line) for v in lint(code)] == [("TNS101", 7)]
    assert [(v.code, v.line, " may " in v.message) for v in lint(code, strict=True)] == [
        ("TNS101", 5, True), ("TNS101", 7, False)]


def test_a_numpy_function_fix_does_not_detach_a_detached_tensor_again():
    # `np.mean(x.detach())` raises TypeError (TNS105): the fix converts what is detached
    # already, without a second `.detach()` (message and edit), with or without `.cpu()`.
    code = ("import torch\nimport numpy as np\nx = torch.randn(3)\na = np.mean(x.detach())\n"
            "b = np.mean(x.detach().cpu())\n")
    found = lint(code)
    assert [v.code for v in found] == ["TNS105", "TNS105"]
    assert all("detach().detach()" not in v.message and "use np.mean(x.detach().cpu().numpy())" in v.message
               for v in found)
    fixed = apply_fixes(code, found)[0]
    assert fixed.count("np.mean(x.detach().cpu().numpy())") == 2 and "detach().detach()" not in fixed
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError):
        exec(compile(code, "<case>", "exec"), {})
    env = {}
    exec(compile(fixed, "<fixed>", "exec"), env)
    assert env["a"] == env["b"] == np.mean(env["x"].numpy()) and isinstance(env["x"], torch.Tensor)


def test_the_indices_of_a_sparse_tensor_never_require_grad():
    # `s.indices()` (and a compressed tensor's `crow_indices()`, `col_indices()`) are int64: they
    # do not require grad where the values do.  Strict mode asks only where they are (the
    # device); on a sparse tensor whose values require grad, on the CPU, `.numpy()` works.
    code = ("import torch\n\ndef f(s, c):\n    return s.indices().cpu().numpy(), c.crow_indices().cpu().numpy(), "
            "c.col_indices().cpu().numpy(), s.values().cpu().numpy()\n")
    found = lint(code, strict=True)
    assert [(v.code, v.col) for v in found] == [("TNS101", 101)], found  # `s.values()` alone
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (sparse tensors' beta and invariant-check warnings)
        values = torch.tensor([1.0, 2.0], requires_grad=True)
        s = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), values, (2, 2)).coalesce()
        c = torch.randn(2, 2).to_sparse_csr().requires_grad_()
        for t in (s.indices(), c.crow_indices(), c.col_indices()):
            assert not t.requires_grad and t.dtype == torch.int64
            t.numpy()
        assert s.values().requires_grad
        with pytest.raises(RuntimeError, match="requires grad"):
            s.values().numpy()


BOTH = "import torch\nm = torch.nn.Linear(3, 2).cuda()\nout = m(torch.randn(1, 3).cuda())\na = out.numpy()\n"


def test_one_finding_per_expression_names_both_hazards_and_fixes_both():
    (v,) = lint(BOTH)
    assert v.code == "TNS101"
    assert v.message == ("out requires grad and may be on an accelerator, so .numpy() raises TypeError or "
                         "RuntimeError; use out.detach().cpu().numpy()")
    new, applied, skipped = apply_fixes(BOTH, [v])
    assert new.endswith("a = out.detach().cpu().numpy()\n") and applied == [v] and not skipped
    (forced,) = lint(BOTH, numpy_fix="force")
    assert forced.message.endswith("use out.numpy(force=True)")


def test_the_covered_finding_is_reported_alone_when_tns101_is_off_or_suppressed():
    (alone,) = lint_text(BOTH, select_rules(["TNS102"])).violations
    assert alone.code == "TNS102"
    assert alone.message == ("out may be on an accelerator, so .numpy() raises TypeError; use out.cpu().numpy()")
    noqa = BOTH.replace("a = out.numpy()", "a = out.numpy()  # noqa: TNS101")
    assert [v.code for v in lint(noqa)] == ["TNS102"]
    assert [v.code for v in lint_text(noqa, select_rules(["TNS1"]), honor_noqa=False).violations] == ["TNS101",
                                                                                                      "TNS102"]


def test_force_fix_is_one_edit_applied_once():
    code = "import torch\nm = torch.nn.Linear(3, 2).cuda()\nout = m(torch.randn(1, 3).cuda())\na = out.numpy()\n"
    result = fix_text(code, select_rules(["TNS1"]), Options(numpy_fix="force"))
    assert result.text.endswith("a = out.numpy(force=True)\n")
    assert fix_text(result.text, select_rules(["TNS1"]), Options(numpy_fix="force")).text == result.text


def test_tensorflow_numpy_is_silent():
    tf_only = "import tensorflow as tf\nx = tf.constant([1.0])\ny = x.numpy()\n"
    assert lint(tf_only) == [] and lint(tf_only, strict=True) == []
    mixed = "import torch\nimport tensorflow as tf\nx = tf.constant([1.0])\ny = x.numpy()\n"
    assert lint(mixed) == []


def test_numpy_functions_that_do_not_convert_are_silent():
    code = ("import torch\nimport numpy as np\nw = torch.ones(3, requires_grad=True)\n"
            "a = np.shape(w)\nb = np.ndim(w)\nc = np.size(w)\n")
    assert lint(code) == []


# --------------------------------------------------------------------------- real torch


def _run(code):
    try:
        exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})
    except Exception as exc:  # what the example raises is what we test
        return exc
    return None


def _on_meta(code):
    code = code.replace('"cuda"', '"meta"').replace(".cuda()", '.to("meta")')
    assert "cuda" not in code
    return code


def _device_cases():
    """The examples of the rules of the device check: `.numpy()` (TNS102) and the NumPy functions,
    which convert through `Tensor.__array__` -> `numpy()` (TNS104)."""
    return [pytest.param(ex, id=f"{code}-invalid-{i}")
            for code in ("TNS102", "TNS104") for i, ex in enumerate(get_rule(code).INVALID)]


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
@pytest.mark.parametrize("ex", _device_cases())
def test_device_examples_hit_the_device_check_on_meta(ex):
    """A CPU-only machine cannot run CUDA, but `numpy()` checks the device the same way for a meta
    tensor: the bad code fails that check, the fixed code gets past it (a meta tensor has no data,
    so copying it to the host then fails with NotImplementedError instead)."""
    pytest.importorskip("torch")
    bad = _run(_on_meta(ex.code))
    assert isinstance(bad, TypeError), repr(bad)
    assert "can't convert meta device type tensor to numpy. Use Tensor.cpu()" in str(bad)
    if ex.fixed is not None:  # a list kept in a variable has no automatic fix
        fixed = _run(_on_meta(ex.fixed))
        assert fixed is None or (isinstance(fixed, NotImplementedError) and "meta tensor" in str(fixed)), repr(fixed)


@pytest.mark.parametrize("ex", _device_cases())
def test_device_examples_on_cuda(ex):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    bad = _run(ex.code)
    assert isinstance(bad, TypeError) and re.search(r"can't convert cuda:\d+ device type tensor", str(bad))
    if ex.fixed is not None:
        assert _run(ex.fixed) is None


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
def test_tns104_leaves_single_tensor_reductions_alone_they_fail_on_every_device():
    """`np.mean(t)` calls `t.mean(axis=None, ...)`: TypeError on the CPU as on the accelerator,
    so `.cpu()` would not help and the message would be wrong; a list of tensors is converted."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    for device in ("cpu", "meta"):
        with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
            np.mean(torch.ones(3, device=device))
    with pytest.raises(TypeError, match="meta device type tensor to numpy"):
        np.mean([torch.ones((), device="meta")] * 2)
    code = ("import torch\nimport numpy as np\nt = torch.ones(3).cuda()\n"
            "a = np.mean(t)\nb = np.sum(t, axis=0)\nc = np.mean([t, t])\n")
    found = lint_text(code, select_rules(["TNS104"])).violations
    assert [(v.code, v.line) for v in found] == [("TNS104", 6)]


def test_tns104_is_covered_by_tns103_on_a_tensor_with_both_hazards():
    """One finding per call: TNS103's fix (`t.detach().cpu().numpy()`) moves the tensor too, and
    its message names the TypeError that comes first on an accelerator."""
    code = ("import torch\nimport numpy as np\nw = torch.nn.Parameter(torch.ones(3).cuda())\n"
            "a = np.asarray(w)\n")
    found = lint_text(code).violations
    assert [v.code for v in found] == ["TNS103"]
    assert "raises TypeError or RuntimeError" in found[0].message
    alone = lint_text(code, select_rules(["TNS104"])).violations
    assert [v.code for v in alone] == ["TNS104"]
    assert fix_text(code).text.endswith("a = np.asarray(w.detach().cpu().numpy())\n")
    cpu = code.replace(".cuda()", "")
    assert "raises RuntimeError" in lint_text(cpu).violations[0].message


def test_tns104_strict_mode_reports_tensors_of_unknown_device_with_an_unsafe_fix():
    code = "import torch\nimport numpy as np\n\ndef f(t: torch.Tensor):\n    with torch.no_grad():\n        return np.asarray(t)\n"
    assert lint_text(code, select_rules(["TNS104"])).violations == []
    found = lint_text(code, select_rules(["TNS104"]), Options(strict=True)).violations
    assert [v.code for v in found] == ["TNS104"]
    assert "(device unknown)" in found[0].message and found[0].fix.safety == "unsafe"
    # What `.to("cuda")` gives for an unknown `x`: a module's `.to()` returns the module, which
    # NumPy wraps without error, so only strict mode reports it.
    moved = "import torch\nimport numpy as np\n\ndef f(x):\n    return np.asarray(x.to('cuda'))\n"
    assert lint_text(moved, select_rules(["TNS104"])).violations == []
    found = lint_text(moved, select_rules(["TNS104"]), Options(strict=True)).violations
    assert [v.code for v in found] == ["TNS104"]
    assert "(origin unknown)" in found[0].message and found[0].fix.safety == "unsafe"
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    assert np.asarray(torch.nn.Linear(2, 2).to("meta")).shape == ()
    # What the methods of such a value return may be anything (a moved pipeline's PIL image).
    pipeline = ("import torch\nimport numpy as np\n\ndef f(pipe, x):\n    pipe = pipe.to('cuda')\n"
                "    image = pipe.infer(x)['samples'][0].crop((0, 0, 8, 8))\n    return np.asarray(image)\n")
    assert lint_text(pipeline, select_rules(["TNS104"]), Options(strict=True)).violations == []


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
def test_tns104_fix_pair_computes_the_same_on_the_cpu():
    """Where the original worked (the CPU), `t.cpu()` is `t` itself: every NumPy call of the fix
    pair gives what it gave (`np.exp` still hands back a tensor)."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    import os

    from conftest import FIXTURES

    def run(name):
        with open(os.path.join(FIXTURES, "fix", name), encoding="utf-8") as f:
            ns = {"__name__": "__fixture__"}
            torch.manual_seed(0)
            exec(compile(f.read(), name, "exec"), ns)
        return ns

    before, after = run("TNS104.in.py"), run("TNS104.out.py")
    for name in ("arr", "copy", "scaled", "both", "alias", "top"):
        a, b = before[name], after[name]
        assert type(a) is type(b), name
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b), name
        else:
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert isinstance(after["scaled"], torch.Tensor)


MOVED = """\
import torch


def to_device(x):
    return x.to("cuda").numpy()


def to_gpu(x):
    y = x.cuda()
    return y.numpy()


def back(x):
    return x.to("cuda").cpu().numpy()


for f in (to_device, to_gpu):
    try:
        f(torch.ones(2))
    except TypeError as exc:
        assert "device type tensor to numpy" in str(exc)
    else:
        raise AssertionError(f)
"""


def test_what_to_or_cuda_moved_is_on_the_accelerator_whatever_it_was():
    """`x` is unknown, but what `.to("cuda")` or `.cuda()` returns and has a `.numpy()` is a
    torch tensor on the accelerator: reported without --strict (unsafe fix: `x` may still be
    something else with those methods)."""
    found = lint_text(MOVED, select_rules(["TNS102"])).violations
    assert [(v.code, v.line) for v in found] == [("TNS102", 5), ("TNS102", 10)]
    assert all("may be on an accelerator" in v.message and v.fix.safety == "unsafe" for v in found)
    pytest.importorskip("torch")
    assert _run(_on_meta(MOVED)) is None  # the asserts of the code hold on a meta device


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
def test_numpy_calls_keep_their_copy_semantics_after_the_fix():
    """TNS103's fix keeps the NumPy call: np.asarray still aliases a CPU tensor, np.array copies."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    t = torch.ones(3)  # where the original call worked: no grad
    assert np.shares_memory(np.asarray(t), t.numpy())
    assert np.shares_memory(np.asarray(t.detach().cpu().numpy()), t.numpy())
    assert not np.shares_memory(np.array(t), t.numpy())
    assert not np.shares_memory(np.array(t.detach().cpu().numpy()), t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.asarray(t.detach().cpu().numpy(), dtype=np.float64).dtype
    g = torch.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        np.asarray(g)
    assert np.asarray(g.numpy(force=True)).tolist() == [2.0, 2.0, 2.0]


def test_code_that_tests_grad_state_is_trusted():
    code = ("import torch\nm = torch.nn.Linear(3, 2)\nout = m(torch.randn(1, 3))\n"
            "if out.requires_grad:\n    out = out.detach()\na = out.numpy()\n"
            "b = out.detach().numpy() if out.requires_grad else out.numpy()\n")
    assert lint(code) == [] and lint(code, strict=True) == []


def test_conditional_host_move_under_a_device_test_is_trusted():
    code = ("import torch\n\ndef spec(wave, device='cpu'):\n    s = torch.from_numpy(wave).to(device)\n"
            "    if device != 'cpu':\n        s = s.cpu()\n    return s.numpy()\n")
    assert lint(code) == []
    unguarded = "import torch\n\ndef spec(wave, device='cpu'):\n    s = torch.from_numpy(wave).to(device)\n    return s.numpy()\n"
    assert [v.code for v in lint(unguarded)] == ["TNS102"]


def test_to_cpu_with_a_dtype_is_a_host_move():
    # Neither is reported for its device (TNS102).  The second may require grad; the first is
    # uint8, which never does.
    code = "import torch\n\ndef f(t):\n    return t.to('cpu', torch.uint8).numpy(), t.to(device='cpu', non_blocking=True).numpy()\n"
    assert [(v.code, v.col) for v in lint(code, strict=True)] == [("TNS101", 45)]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_tns105_numpy_reductions_of_a_tensor_raise_on_every_tensor():
    """The claim TNS105 makes: each reduction it reports raises TypeError for a tensor of any
    grad state and device, with or without `axis=` (a list of tensors is converted instead)."""
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    from flake8_tensorcopy.rules.tns1 import _NUMPY_METHOD_DISPATCH

    tensors = [torch.ones(2, 3), torch.ones(2, 3, requires_grad=True) * 2, torch.ones(2, 3, device="meta"),
               torch.ones((), dtype=torch.int64)]
    for name in sorted(_NUMPY_METHOD_DISPATCH):
        for t in tensors:
            for kwargs in ({}, {"axis": 0}):
                with pytest.raises(TypeError):
                    getattr(np, name)(t, **kwargs)
        assert getattr(np, name)([torch.ones(2), torch.ones(2)]) is not None


def test_tns105_strict_mode_reports_outputs_and_annotated_tensors_with_an_unsafe_fix():
    code = ("import torch\nimport numpy as np\nmodel = torch.nn.Linear(3, 2)\n\n"
            "def f(t: torch.Tensor):\n    return np.mean(t)\n\n"
            "with torch.no_grad():\n    spread = np.std(model(torch.randn(4, 3)))\n")
    assert lint_text(code, select_rules(["TNS105"])).violations == []
    found = lint_text(code, select_rules(["TNS105"]), Options(strict=True)).violations
    assert [(v.code, v.line) for v in found] == [("TNS105", 6), ("TNS105", 9)]
    assert all(v.fix.safety == "unsafe" for v in found)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_tns103_reduction_of_a_models_output_names_both_errors():
    """`np.mean(out)` calls `out.mean(axis=...)` when the output is a tensor (TypeError), but a
    model's output may be a tuple, which NumPy converts (RuntimeError for grad): the message says
    both; a tensor made by torch gets the one."""
    code = ("import torch\nimport numpy as np\nm = torch.nn.Linear(3, 2)\na = np.mean(m(torch.ones(3)))\n"
            "t = torch.ones(3, requires_grad=True) * 2\nb = np.mean(t)\n")
    found = {v.line: v.message for v in lint_text(code).violations}
    assert "with NumPy keywords) or RuntimeError;" in found[4]
    assert "with NumPy keywords);" in found[6]
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    pair = (torch.ones(2, requires_grad=True) * 2, torch.ones(2, requires_grad=True) * 3)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.mean(pair)


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
def test_a_list_of_tensors_written_in_the_numpy_call_is_named_as_one():
    """`np.array([a.sum(), b.sum()])`: the message says a list of tensors, and what to do with
    each (no placeholder `t` in a call it does not have); one tensor in a list is shown."""
    code = ("import torch\nimport numpy as np\nmodel = torch.nn.Linear(3, 2)\n"
            "a = model(torch.randn(2, 3))\nb = model(torch.randn(2, 3))\n"
            "x = np.array([a.sum(), b.sum()])\ny = np.array([a.sum()])\nz = np.asarray(a)\n")
    found = {v.line: v.message for v in lint_text(code, select_rules(["TNS103"])).violations}
    assert found == {
        6: "np.array() on a list of tensors that require grad raises RuntimeError; use .detach().cpu().numpy() on "
           "each tensor",
        7: "np.array() on a list of tensors that require grad raises RuntimeError; use "
           "a.sum().detach().cpu().numpy() in the call",
        8: "np.asarray() on a tensor that requires grad raises RuntimeError; use np.asarray(a.detach().cpu().numpy())",
    }
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    a = torch.nn.Linear(3, 2)(torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="requires grad"):
        np.array([a.sum(), a.sum()])
    assert np.array([a.sum().detach().cpu().numpy(), a.sum().detach().cpu().numpy()]).shape == (2,)
    moved = ("import torch\nimport numpy as np\nc = torch.ones(2, device='cuda')\nd = np.stack([c, c])\n")
    [v] = lint_text(moved, select_rules(["TNS104"])).violations
    assert v.message == ("np.stack() on a list of tensors that may be on an accelerator raises TypeError; use .cpu() "
                         "on each tensor")


# A helper that moves to the device it is given, None by default (monai's convert_to_tensor): a
# call that leaves the default moves nothing, and one that passes "cuda" moves to it.  (Read as a
# configured accelerator, the default made `convert(t).numpy()` a finding in default mode.)
DEFAULT_DEVICE = """
import torch


def convert(data, dtype=None, device=None):
    return torch.as_tensor(data).to(dtype=dtype, device=device)


def make(data, device=None):
    return torch.zeros(len(data), device=device) + 1


def kept(data):
    return convert(data).numpy(), make(data).numpy()


def moved(data):
    return convert(data, device="cuda").numpy()


def made(data):
    return make(data, "cuda").numpy()
"""


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")
def test_a_device_parameter_left_at_its_none_default_moves_nothing():
    lines = DEFAULT_DEVICE.splitlines()
    reported = [lines.index(f"def {f}(data):") + 2 for f in ("moved", "made")]
    assert [(v.code, v.line) for v in lint(DEFAULT_DEVICE)] == [("TNS102", line) for line in reported]
    torch = pytest.importorskip("torch")
    env = {}
    exec(compile(_on_meta(DEFAULT_DEVICE), "<case>", "exec"), env)
    env["kept"]([1.0, 2.0, 3.0])  # runs
    for f in ("moved", "made"):
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            env[f]([1.0, 2.0, 3.0])


# --------------------------------------------------------------------------- TNS106: plots

PLOT_HEAD = '''
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

model = nn.Linear(1, 1)
x = torch.linspace(0, 1, 10).unsqueeze(1)
w = torch.randn(4, 4, requires_grad=True)
'''


def _plot_program(body: str) -> str:
    import textwrap

    return PLOT_HEAD + textwrap.dedent(body)


def _plot_findings(code: str, **options) -> list:
    return [(v.code, v.line - PLOT_HEAD.count("\n")) for v in lint_text(code, select_rules(["TNS106"]),
                                                                      Options(**options)).violations]


def _run_plot(code: str) -> dict:
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    ns: dict = {}
    try:
        exec(compile(code, "<plot>", "exec"), ns)
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
    return ns


@pytest.mark.parametrize("line", [
    "plt.plot(x.squeeze(1), model(x).squeeze(1))",
    "plt.scatter(np.arange(10), model(x).squeeze(1))",
    "plt.imshow(w * 2)",
    "plt.hist(model(x).squeeze(1))",
    "plt.scatter(np.arange(4), np.arange(4), c=w[0] * 1)",
    "fig, ax = plt.subplots(); ax.plot(model(x))",
    "fig, axes = plt.subplots(2, 2); axes[0, 1].bar(np.arange(4), w.sum(0))",
    "fig, (a1, a2) = plt.subplots(1, 2); a2.plot(w[0] * 2)",
    "fig, axes = plt.subplots(2, 2)\nfor row in axes:\n    for ax in row:\n        ax.plot(w[0] * 2)",
    "plt.gca().semilogy(w.exp().sum(1))",
    "plt.figure().add_subplot(111).step(np.arange(4), w[1])",
    "losses = [model(x).pow(2).mean() for _ in range(3)]; plt.plot(losses)",
    "from matplotlib.pyplot import plot; plot(w[0] * 3)",
])
def test_a_plot_of_a_tensor_that_requires_grad_raises_and_is_reported(line):
    code = _plot_program(line + "\n")
    assert _plot_findings(code) == [("TNS106", line.count("\n") + 1)]  # (the plotting call, the last line)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        _run_plot(code)
    fixed = fix_text(code, select_rules(["TNS106"]), Options(), unsafe=True)
    if "losses" not in line:  # (a list held in a variable: converted where it is filled, no fix)
        assert fixed.text != code and not lint_text(fixed.text, select_rules(["TNS106"]), Options()).violations
        _run_plot(fixed.text)


@pytest.mark.parametrize("body", [
    """
    with torch.no_grad():
        plt.plot(x.squeeze(1), model(x).squeeze(1))
    plt.plot(model(x).detach().squeeze(1))
    plt.imshow(w.detach())
    plt.plot(torch.randn(5))
    plt.plot([model(x).pow(2).mean().item() for _ in range(2)])
    plt.title(str(w.sum()))
    """,
    """
    @torch.no_grad()
    def show():
        plt.plot(model(x).squeeze(1))

    def unknown(t):
        plt.plot(t)

    show()
    unknown(torch.zeros(3))
    """,
    """
    class Recorder:
        def plot(self, values):
            return len(values)

    rec = Recorder()
    rec.plot(w)
    """,
])
def test_plots_that_run_are_not_reported(body):
    code = _plot_program(body)
    assert _plot_findings(code) == []
    _run_plot(code)


def test_a_plot_of_a_tensor_of_unknown_origin_is_reported_in_strict_mode_only():
    code = _plot_program("def show(t: torch.Tensor):\n    plt.plot(t)\n")
    assert _plot_findings(code) == []
    found = lint_text(code, select_rules(["TNS106"]), Options(strict=True)).violations
    assert [v.code for v in found] == ["TNS106"] and "may require grad (origin unknown)" in found[0].message
    assert found[0].fix is not None and found[0].fix.safety == "unsafe"


def test_a_plot_message_and_its_safe_fix():
    code = _plot_program("pred = model(x).squeeze(1)\nplt.plot(x.squeeze(1), pred)\n")
    (v,) = lint_text(code, select_rules(["TNS106"]), Options()).violations
    assert v.message == ("plt.plot() on a tensor that requires grad raises RuntimeError (Matplotlib converts it "
                         "with NumPy); use pred.detach().cpu().numpy() in the call")
    assert v.fix.safety == "safe"
    fixed, applied, _ = apply_fixes(code, [v])
    assert applied and "plt.plot(x.squeeze(1), pred.detach().cpu().numpy())" in fixed


def test_a_list_of_model_outputs_is_advised_a_copy_of_each_not_its_value():
    # `np.vstack(outputs)` of a model's outputs raises; `.item()` of an output of two values
    # would raise too: the advice is a copy of each where the list is filled (a list of losses
    # by its name keeps `.item()`).
    torch = pytest.importorskip("torch")
    code = (
        "import numpy as np\nimport torch\n\n"
        "model = torch.nn.Linear(4, 2)\n"
        "outputs, losses = [], []\n"
        "for _ in range(2):\n"
        "    out = model(torch.randn(3, 4))\n"
        "    outputs.append(out)\n"
        "    losses.append(out.sum())\n"
        "stacked = np.vstack(outputs)\n"
        "mean = np.mean(losses)\n"
    )
    found = {v.line: v.message for v in lint(code) if v.code == "TNS103"}
    assert "use outputs.append(t.detach().cpu()) where the list is filled" in found[10]
    assert "use losses.append(t.item()) where the list is filled" in found[11]
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(code, "<outputs>", "exec"), {})
    fixed = code.replace("outputs.append(out)", "outputs.append(out.detach().cpu())").replace(
        "losses.append(out.sum())", "losses.append(out.sum().item())")
    ns: dict = {}
    exec(compile(fixed, "<fixed>", "exec"), ns)
    assert ns["stacked"].shape == (6, 2)
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        torch.randn(3, 2).item()  # (what `.item()` of an output would do)
