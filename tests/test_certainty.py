"""What the analysis is certain of, and how that decides fix safety (issue "Safe means safe").

A fix is safe only when the rewritten value is a torch tensor by the flow of the code; guards
(`isinstance`, `torch.is_tensor`) override annotations; another framework's values are not
torch tensors; TNS401 never wraps a statement that can suspend a generator or coroutine."""

import textwrap

import pytest

from flake8_tensorcopy.engine import fix_text, lint_text
from flake8_tensorcopy.rules.base import Options


def _lint(code, strict=False):
    result = lint_text(textwrap.dedent(code), options=Options(strict=strict))
    assert result.error is None
    return result.violations


def _found(code, strict=False):
    return {(v.code, v.line, v.fix.safety if v.fix else None) for v in _lint(code, strict)}


# --------------------------------------------------------------------------- guards


@pytest.mark.parametrize("code", [
    # kornia: a torch.Size under an isinstance guard, annotated as a Tensor.
    """
    import torch
    def normalize(size: torch.Tensor):
        if isinstance(size, torch.Size):
            size = torch.tensor(size)[None]
        return size
    """,
    # gpytorch: converted only when it is not a tensor.
    """
    import torch
    def as_matrix(m: torch.Tensor):
        if not isinstance(m, torch.Tensor):
            m = torch.tensor(m)
        return m
    """,
    # An early return leaves only the non-tensor path.
    """
    import torch
    def f(x: torch.Tensor):
        if torch.is_tensor(x):
            return x
        return torch.tensor(x)
    """,
    # The conditional expression and boolean operators narrow too.
    """
    import torch
    def f(x: torch.Tensor):
        return x if torch.is_tensor(x) else torch.tensor(x)
    def g(x: torch.Tensor):
        return isinstance(x, (list, tuple)) and torch.tensor(x)
    def h(x: torch.Tensor):
        return torch.is_tensor(x) or torch.tensor(x)
    """,
    # torchrl: a class of another library, not known to be a tensor (tensordict's
    # NonTensorData holds any data); its `.data` is not the tensor the annotation says.
    """
    import torch
    from tensordict import NonTensorData
    def transform(observation: torch.Tensor):
        if isinstance(observation, NonTensorData):
            return torch.tensor(observation.data)
        return observation
    """,
    # numpy and pandas guards.
    """
    import numpy as np
    import pandas as pd
    import torch
    def f(x: torch.Tensor):
        if isinstance(x, np.ndarray):
            return torch.tensor(x)
        if isinstance(x, pd.DataFrame):
            return torch.tensor(x.values)
        return x
    """,
])
def test_guards_override_annotations(code):
    assert _lint(code) == []
    assert fix_text(textwrap.dedent(code), options=Options(strict=True)).text == textwrap.dedent(code)


def test_a_guard_for_a_class_of_unknown_kind_keeps_a_tensor_of_the_flow():
    # A tensor by the flow of the code may be an instance of a Tensor subclass (monai's
    # MetaTensor): still a tensor under the guard, no longer one proved for a fix.
    code = """
    import torch
    from monai.data import MetaTensor
    def f(x):
        t = torch.zeros(3)
        if isinstance(t, MetaTensor):
            return torch.tensor(t)
        return torch.tensor(t)
    """
    assert _found(code) == {("TNS202", 7, "unsafe"), ("TNS202", 8, "safe")}


def test_a_guard_that_proves_a_tensor_makes_the_fix_safe():
    code = """
    import torch
    def f(x: torch.Tensor):
        if not torch.is_tensor(x):
            raise TypeError(x)
        return torch.tensor(x)
    """
    assert _found(code) == {("TNS202", 6, "safe")}


def test_an_annotation_alone_is_strict_only_with_an_unsafe_fix():
    # diffusers: callers pass list[float] for `mean` (a VAE config's `latents_mean`).
    code = """
    import torch
    def shift(latents: torch.Tensor, mean: torch.Tensor):
        return latents - torch.tensor(mean)
    """
    assert _found(code) == set()
    assert _found(code, strict=True) == {("TNS202", 4, "unsafe")}
    (v,) = _lint(code, strict=True)
    assert "(a tensor by its annotation)" in v.message, v.message
    assert fix_text(textwrap.dedent(code), options=Options(strict=True)).text == textwrap.dedent(code)


def test_what_a_method_or_torch_makes_of_an_annotated_parameter_is_reported():
    # `x.detach()`, `x.float()`, `torch.softmax(x, -1)` are tensors wherever the code runs.
    code = """
    import torch
    def a(x: torch.Tensor):
        return torch.tensor(x.detach())
    def b(x: torch.Tensor):
        return torch.tensor(x.float())
    def c(x: torch.Tensor):
        return torch.tensor(torch.softmax(x, -1))
    """
    assert {line for code_, line, _ in _found(code) if code_ == "TNS202"} == {4, 6, 8}
    assert not any("annotation" in v.message for v in _lint(code, strict=True))


def test_what_a_call_passes_on_from_an_annotated_parameter_is_strict_only():
    # diffusers' LTX pipeline: the annotated parameter is handed on to a helper without one,
    # and the only caller passes a tuple.
    code = """
    import torch
    def coords(n, scale):
        return torch.arange(n) * torch.tensor(scale)[0]
    def build(n, scale: torch.Tensor):
        return coords(n, scale)
    out = build(3, (1, 2, 2))
    """
    assert _found(code) == set()
    # (Strict mode may report it, saying what it rests on.)
    found = [v for v in _lint(code, strict=True) if v.code == "TNS202"]
    assert all(v.line == 4 and "a tensor by its annotation" in v.message for v in found), found


def test_a_tensor_by_flow_keeps_the_safe_fix():
    code = """
    import torch
    x = torch.ones(3, requires_grad=True)
    y = torch.tensor(x * 2)
    """
    assert _found(code) == {("TNS202", 4, "safe")}


# --------------------------------------------------------------------------- other frameworks


def test_other_frameworks_values_are_not_torch_tensors():
    code = """
    import numpy as np
    import tensorflow as tf
    import torch
    def f(x):
        return tf.constant(x).numpy()
    def g(x):
        return tf.reduce_sum(tf.constant(x)).numpy()
    """
    assert _lint(code, strict=True) == []


def test_strict_unknown_origin_carries_only_unsafe_fixes():
    code = """
    import numpy as np
    import torch
    def to_numpy(t):
        return t.numpy()
    def rank(a):
        if isinstance(a, np.ndarray):
            return np.argsort(-(a))
        return a
    def ex(t):
        return np.exp(t)
    """
    found = _found(code, strict=True)
    assert found and all(safety in ("unsafe", None) for _, _, safety in found), found
    assert not any(line == 8 for _, line, _ in found)  # the array branch
    assert fix_text(textwrap.dedent(code), options=Options(strict=True)).text == textwrap.dedent(code)


# --------------------------------------------------------------------------- TNS103 safety


@pytest.mark.parametrize("call,safety", [
    ("np.asarray(out)", "safe"),  # the same array for every tensor
    ("np.mean(out)", "safe"),  # Tensor.mean(axis=...) raises whatever the grad
    ("np.exp(out)", "safe"),  # out requires grad on every path: the original raised
])
def test_numpy_function_fix_safety_follows_what_the_original_did(call, safety):
    code = f"""
    import numpy as np
    import torch
    model = torch.nn.Linear(3, 2)
    out = model(torch.randn(4, 3))
    r = {call}
    """
    assert _found(code) == {("TNS103", 6, safety)}


def test_ufunc_on_a_tensor_that_may_not_require_grad_is_an_unsafe_fix():
    # Where `out` does not require grad, np.exp returns a Tensor (__array_wrap__); after the fix
    # it would return an ndarray.
    code = """
    import numpy as np
    import torch
    model = torch.nn.Linear(3, 2)
    def f(flag):
        out = model(torch.randn(4, 3))
        if flag:
            out = out.detach()
        return np.exp(out)
    """
    assert _found(code) == {("TNS103", 9, "unsafe")}


# --------------------------------------------------------------------------- TNS401 and suspension


def test_no_wrap_around_yield_or_await():
    code = textwrap.dedent("""
    import torch

    def gen(q):
        w = torch.ones(3, requires_grad=True)
        w[1] = (yield)
        w.add_(1)

    async def co(q):
        w = torch.ones(3, requires_grad=True)
        w[0] = await q.get()
    """)
    found = {(v.line, v.fix is not None) for v in lint_text(code).violations if v.code == "TNS401"}
    assert found == {(6, False), (7, True), (11, False)}
    fixed = fix_text(code, unsafe=True).text
    assert "with torch.no_grad():\n        w.add_(1)" in fixed
    assert "w[1] = (yield)" in fixed and "    w[0] = await q.get()" in fixed
    assert fixed.count("with torch.no_grad()") == 1
