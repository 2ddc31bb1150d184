"""Every rule's examples, executed on real torch (CPU): the bad code fails or misbehaves exactly as
the rule says, and the fixed code runs clean (../shared/pytorch-facts.md is the ground truth)."""

import warnings

import pytest

from examples import invalid_examples, valid_examples

torch = pytest.importorskip("torch")
from torch.overrides import TorchFunctionMode  # noqa: E402


class GradFnRecorder(TorchFunctionMode):
    """Records the autograd node types of every tensor produced while active."""

    def __init__(self):
        super().__init__()
        self.grad_fns = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            try:
                grad_fn = t.grad_fn if isinstance(t, torch.Tensor) else None
            except RuntimeError:  # reading grad_fn of a view written in place under no_grad
                continue
            if grad_fn is not None:
                self.grad_fns.add(type(grad_fn).__name__)
        return out


class Run:
    def __init__(self, code):
        self.ns = {"__name__": "__example__"}
        self.error = None
        self.warnings = []
        torch.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with GradFnRecorder() as rec:
                try:
                    exec(compile(code, "<example>", "exec"), self.ns)
                except Exception as exc:  # what the example raises is what we test
                    self.error = exc
        self.grad_fns = rec.grad_fns
        self.warnings = [w for w in caught if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]

    def check(self, expr):
        return eval(expr, self.ns)


def _values_equal(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.device == b.device and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("rule,ex", [p for p in invalid_examples() if p.values[1].oracle is not None])
def test_bad_example_misbehaves_as_documented(rule, ex):
    o = ex.oracle
    bad = Run(ex.code)
    if o.raises:
        assert bad.error is not None, "the bad example should raise"
        assert type(bad.error).__name__ == o.raises[0], repr(bad.error)
        assert o.raises[1] in str(bad.error), str(bad.error)
    else:
        assert bad.error is None, repr(bad.error)
    if o.warns:
        assert any(w.category.__name__ == o.warns[0] and o.warns[1] in str(w.message) for w in bad.warnings), [
            str(w.message) for w in bad.warnings
        ]
    if o.grad_fn:
        assert o.grad_fn in bad.grad_fns, bad.grad_fns
    if o.check_bad:
        assert bad.check(o.check_bad), o.check_bad


@pytest.mark.parametrize("rule,ex", [p for p in invalid_examples() if p.values[1].oracle is not None])
def test_fixed_example_runs_clean(rule, ex):
    o = ex.oracle
    assert ex.fixed is not None or o.check_fixed is None
    code = ex.fixed
    if code is None:
        pytest.skip("no automatic fix: the rule's message describes the manual change")
    fixed = Run(code)
    assert fixed.error is None, repr(fixed.error)
    assert not fixed.warnings, [str(w.message) for w in fixed.warnings]
    if o.grad_fn:
        assert o.grad_fn not in fixed.grad_fns, fixed.grad_fns
    if o.check_fixed:
        assert fixed.check(o.check_fixed), o.check_fixed
    if o.same:
        bad = Run(ex.code)
        assert bad.error is None
        for name in o.same:
            assert _values_equal(bad.ns[name], fixed.ns[name]), name


@pytest.mark.parametrize("rule,ex", [p for p in valid_examples() if p.values[1].runs])
def test_valid_example_runs_clean(rule, ex):
    run = Run(ex.code)
    assert run.error is None, repr(run.error)
    assert not run.warnings, [str(w.message) for w in run.warnings]
