"""TNS1xx: converting tensors to NumPy (grad and device hazards)."""

from __future__ import annotations

import ast
import re

from ..analysis.facts import DEVICE, MODULE, MPL_AXES, OTHER, SEQ, TENSOR, UNKNOWN, Device, Grad, must_grad
from ..analysis.torchapi import PLOTTERS as _PLOTTERS
from ..fixes import attr_name_span, needs_parens
from ..model import Edit, Fix
from ..reach import imports
from ..source import LazyPattern, kept_for_the_last_text, word_positions
from .base import Invalid, Oracle, Rule, Valid, dedent

GRAD_ERROR = "RuntimeError: Can't call numpy() on Tensor that requires grad"
DEVICE_ERROR = (
    "TypeError: can't convert cuda:0 device type tensor to numpy. "
    "Use Tensor.cpu() to copy the tensor to host memory first"
)
_RAISES_GRAD = ("RuntimeError", "Can't call numpy() on Tensor that requires grad")

# NumPy functions that never turn a tensor argument into an array.
_NUMPY_NO_CONVERSION = frozenset(
    "shape ndim size isscalar iterable result_type can_cast dtype issubdtype nonzero squeeze "
    "array_equal array_equiv may_share_memory shares_memory broadcast_shapes "
    "random.seed random.default_rng random.RandomState random.choice random.randint random.shuffle "
    "random.permutation".split()
)

# NumPy reductions that, given a non-ndarray, call the object's own method with NumPy keywords
# (`t.mean(axis=None, dtype=None, out=None)`): a single tensor raises TypeError before any
# conversion, whatever its grad state. A list of tensors is converted (and raises RuntimeError).
_NUMPY_METHOD_DISPATCH = frozenset("mean sum prod max min amax amin std var any all".split())

# NumPy functions that return a plain ndarray for tensor arguments, as they do for the arrays
# `t.detach().cpu().numpy()` gives (most others hand a tensor back through `__array_wrap__`).
_NUMPY_PLAIN_CONVERSION = frozenset(
    "asarray array asanyarray ascontiguousarray asfortranarray concatenate stack vstack hstack".split()
)

# Keyword arguments of NumPy functions that are not data.
_NUMPY_NON_DATA_KW = frozenset("dtype axis out keepdims order copy ddof where casting subok like".split())


# --------------------------------------------------------------------------- shared helpers


def _numpy_call(node: ast.Call) -> bool:
    """`<expr>.numpy()` (or `.numpy(force=False)`), which refuses grad and non-CPU tensors."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "numpy") or node.args:
        return False
    for kw in node.keywords:
        if kw.arg != "force" or not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
            return False
    return True


def _is_cpu_move(node, ctx) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.to("cpu", torch.uint8)`, `x.to(device="cpu")`,
    `x.to(torch.device("cpu"))`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    attr = node.func.attr
    if attr == "cpu":
        return not node.args
    if attr != "to":
        return False
    dev = next((k.value for k in node.keywords if k.arg == "device"), None)
    if dev is None and node.args and not isinstance(node.args[0], ast.Starred):
        dev = node.args[0]
    if dev is None:
        return False
    f = ctx.fact(dev)
    return f.kind in (OTHER, DEVICE) and f.device is Device.CPU


def _strip_cpu_moves(expr, ctx):
    """(base, innermost cpu move or None): `out.cpu()` -> (out, out.cpu())."""
    first = None
    while _is_cpu_move(expr, ctx):
        first = expr
        expr = expr.func.value
    return expr, first


def _dot_before(ctx, attr: ast.Attribute) -> int | None:
    """Offset of the `.` that starts `.attr` (after any closing parentheses of the value)."""
    _, value_end = ctx.span(attr.value)
    name_start, _ = attr_name_span(ctx, attr)
    between = ctx.lines.text[value_end:name_start]
    if "#" in between or between.count(".") != 1:
        return None
    return value_end + between.index(".")


def _force_edit(ctx, call: ast.Call) -> Edit | None:
    """`t.numpy()` -> `t.numpy(force=True)`."""
    _, name_end = attr_name_span(ctx, call.func)
    _, call_end = ctx.span(call)
    old = ctx.lines.text[name_end:call_end]
    if "#" in old:
        return None
    return Edit(name_end, call_end, "(force=True)", expect=old)


def _force(ctx) -> bool:
    return ctx.options.numpy_fix == "force"


def _display(ctx, node, fallback: str) -> str:
    t = ctx.short(node, 40)
    return fallback if t == "<expr>" else t


def _passed(ctx, arg, fallback: str, params: bool = False) -> tuple:
    """(what a call passes, as a through-call finding names it; what to write instead; whether
    it is several tensors): the tensor itself, what a module computes there (`predict(net, x)`,
    converted inside), its parameters where those are what is converted (`params`: `for p in
    model.parameters(): np.save(f, p)` inside), or the tensors of a list or of a module's parameters (`mean_of(losses)`,
    `np.mean(values)` inside)."""
    f = ctx.fact(arg)
    if f.kind == MODULE and params:
        return f"the parameters of {_display(ctx, arg, 'the module')}", "`torch.no_grad()` around the call", True
    if f.kind == MODULE:
        return f"what {_display(ctx, arg, 'the module')} computes", "`torch.no_grad()` around the call", False
    if f.kind != TENSOR and f.kind != UNKNOWN:
        held = f"the tensors in {_display(ctx, arg, 'the list')}"
        if isinstance(arg, (ast.Name, ast.Attribute)) and f.kind == SEQ:
            return held, _fill_advice(ctx, arg, "t.detach()"), True
        return held, "`torch.no_grad()` around the call", True
    return _display(ctx, arg, fallback), _shown(ctx, _parenthesized(ctx, arg) + ".detach()", "t.detach()"), False


def _held(ctx, recv, attr: str, params: bool = False) -> tuple:
    """(what an instance holds, as a finding in one of its methods names it; what to write
    instead): what its module computes (`t.predict(x)`, `t = Trainer(net)`), the module's
    parameters where those are what is converted (`params`), or its tensor."""
    held = f"{_display(ctx, recv, 'the instance')}.{attr}"
    attrs = ctx.fact(recv).attrs
    if getattr(attrs.get(attr) if attrs is not None else None, "kind", None) == MODULE:
        if params:
            return f"the parameters of {held}", "`torch.no_grad()` around the call"
        return f"what {held} computes", "`torch.no_grad()` around the call"
    return held, "`.detach()` on what its constructor call passes for it"


def _parenthesized(ctx, node) -> str:
    t = ctx.text(node)
    return f"({t})" if needs_parens(node, t) else t


def _shown(ctx, text: str, fallback: str) -> str:
    return text if len(text) <= 60 and "\n" not in text else fallback


class _Tns1Rule(Rule):
    """The NumPy conversion rules."""


def _grad_hazard(recv, ctx) -> str | None:
    """"yes" when `.numpy()` on `recv` raises for grad, "may" (strict mode) when its origin is
    unknown, else None."""
    if ctx.no_grad:
        return None
    f = ctx.fact(recv)
    if ctx.through_call is not None:
        # Inside another module's function, for one call's arguments: only what requires grad
        # on every path there as surely as the arguments do (not after `if detach: t =
        # t.detach()` on a parameter the call may set).
        return "yes" if f.may_require_grad and must_grad(f) >= ctx.through_call else None
    if f.may_require_grad:
        return "yes"
    if ctx.options.strict and f.kind in (TENSOR, UNKNOWN) and f.grad is not Grad.NO:
        return "may"
    return None


def _device_hazard(recv, ctx) -> str | None:
    """"yes" when `recv` may live on an accelerator, "may" (strict mode) when its device is
    unknown, else None."""
    f = ctx.fact(recv)
    if f.may_be_on_accelerator:
        return "yes"
    if f.kind == UNKNOWN and f.device is Device.ACCEL and "tensorish" in f.tags:
        # `x.to("cuda").numpy()`, `u.cuda()` then `.numpy()`: whatever `x` was, what `.to()` /
        # `.cuda()` moved to an accelerator and has a `.numpy()` is a torch tensor there.
        return "yes"
    if ctx.options.strict and f.kind in (TENSOR, UNKNOWN) and f.device is Device.UNKNOWN:
        return "may"
    return None


class _NumpyMethodRule(_Tns1Rule):
    """Shared visitor of TNS101/TNS102: `.numpy()` on a receiver that requires grad or may live
    on an accelerator.  Where both hold, TNS101 says both and its fix resolves both (the engine
    then drops TNS102's finding on the same call, unless TNS101 is off or suppressed there)."""

    grad: bool = False  # TNS101: the grad hazard leads; TNS102: the device hazard alone

    def visit_Call(self, node: ast.Call, ctx) -> None:
        if not _numpy_call(node):
            # (A tensor on an accelerator raises whatever the grad mode.)
            if self.through_calls and ctx.sink_names and (not ctx.no_grad or not self.grad):
                self._through_call(node, ctx)
            return
        recv = node.func.value
        grad = _grad_hazard(recv, ctx)
        device = _device_hazard(recv, ctx)
        if self.grad:
            if grad is None:
                return
        elif device is None:
            return
        else:
            grad = None
        base, cpu_move = _strip_cpu_moves(recv, ctx)
        inserted = (".detach()" if grad else "") + (".cpu()" if device else "")
        force = _force(ctx)
        if force:
            edit, insert = _force_edit(ctx, node), None
        else:
            insert, edit = self._insertion(node, cpu_move, inserted, ctx)
        # `.detach()`, `.cpu()` and `numpy(force=True)` are right for every torch tensor; a value
        # that only looks like one (an annotation, strict mode's unknown origin, another
        # framework's tensor with a `.numpy()` of its own) may not have them.
        safety = self.fix_safety if ctx.fact(recv).is_torch_tensor else "unsafe"
        title = self.force_title if force else f"Insert `{inserted or self.inserted}`"
        fix = Fix(title, safety, (edit,)) if edit else None
        origin = ctx.origin(base, "grad" if grad else "device")
        ctx.report(self, node, fix, expr=_display(ctx, base, "the tensor"), origin=origin,
                   hazard=self._hazard_text(grad, device), error=self._error(grad, device),
                   use=self._use(node, base, insert, inserted, force, ctx))

    def _through_call(self, node: ast.Call, ctx) -> None:
        """`to_numpy(out)`, where `to_numpy` of another module of the project calls `.numpy()`
        on its parameter and `out` requires grad: reported at the argument, no fix (what the
        function does with the tensor besides is its own)."""
        found = ctx.call_sink(self, node)
        if found is not None:
            arg, callee, where, params = found
            if not self.grad:
                # TNS102: a tensor on an accelerator (walker._sink_argument) that the function
                # converts without `.cpu()`.
                expr = _display(ctx, arg, "the tensor")
                ctx.report(self, arg, None, expr=expr, origin=f" ({callee}() calls .numpy() on it, {where})",
                           hazard="may be on an accelerator", error="TypeError",
                           use=_shown(ctx, _parenthesized(ctx, arg) + ".cpu()", "t.cpu()"))
                return
            expr, use, several = _passed(ctx, arg, "the tensor", params)
            ctx.report(self, arg, None, expr=expr,
                       origin=f" ({callee}() calls .numpy() on {'them' if several else 'it'}, {where})",
                       hazard="require grad" if several else "requires grad", error="RuntimeError", use=use)
            return
        if not self.grad:
            return  # (what an instance's constructor was passed: TNS101's alone)
        found = ctx.kept_sink(self, node)
        if found is not None:
            # `logger.log(loss)`, where `log` keeps it (`self.last = v`) and `logger.dump()`
            # converts it: reported at the argument, as a helper's.
            arg, callee, reader, where = found
            expr, use, several = _passed(ctx, arg, "the tensor")
            them = "them" if several else "it"
            ctx.report(self, arg, None, expr=expr, origin=f" ({callee}() keeps {them}, {reader}() calls .numpy() on "
                                                          f"{them}, {where})",
                       hazard="require grad" if several else "requires grad", error="RuntimeError", use=use)
            return
        found = ctx.method_sink(self, node)
        if found is not None:
            recv, attr, callee, where, params = found
            expr, use = _held(ctx, recv, attr, params)
            ctx.report(self, node, None, expr=expr,
                       origin=f" ({callee}() calls .numpy() on {'them' if params else 'it'}, {where})",
                       hazard="require grad" if params else "requires grad", error="RuntimeError", use=use)

    # What each rule inserts and how it names the hazard (filled in by TNS101/TNS102).
    inserted = ""

    @staticmethod
    def _hazard_text(grad, device) -> str:
        parts = []
        if grad:
            parts.append("requires grad" if grad == "yes" else "may require grad")
        if device:
            parts.append("may be on an accelerator")
        text = " and ".join(parts)
        unknown = grad == "may" or (not grad and device == "may")
        return text + (" (origin unknown)" if unknown and grad else " (device unknown)" if unknown else "")

    @staticmethod
    def _error(grad, device) -> str:
        if grad and device:
            return "TypeError or RuntimeError"
        return "RuntimeError" if grad else "TypeError"

    @staticmethod
    def _insertion(node, cpu_move, inserted: str, ctx):
        """Where `inserted` goes: `.detach()` before a trailing `.cpu()` / `.to("cpu")` (so the
        copy to the host is not recorded), else right before `.numpy()`."""
        attr = cpu_move.func if cpu_move is not None and inserted == ".detach()" else node.func
        pos = _dot_before(ctx, attr)
        if pos is None:
            return None, None
        return pos, Edit(pos, pos, inserted)

    @staticmethod
    def _use(node, base, insert, inserted: str, force: bool, ctx) -> str:
        """What to write instead, shown in the message (short)."""
        if force:
            return _shown(ctx, ctx.text(node.func.value) + ".numpy(force=True)", "t.numpy(force=True)")
        if insert is not None:
            text = ctx.lines.text
            s, e = ctx.span(node)
            return _shown(ctx, text[s:insert] + inserted + text[insert:e], f"{inserted} before .numpy()")
        b = ctx.text(base)
        if needs_parens(base, b):
            b = f"({b})"
        return _shown(ctx, b + ".detach().cpu().numpy()", "t.detach().cpu().numpy()")


def _detached(expr) -> bool:
    """`y.detach()`: what a conversion needs no `.detach()` for."""
    return type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "detach" \
        and not expr.args and not expr.keywords


class NumpyOnGradTensor(_NumpyMethodRule):
    through_calls = True
    through_needles = (".numpy(",)
    code = "TNS101"
    name = "numpy-on-grad-tensor"
    message = "{expr}{origin} {hazard}, so .numpy() raises {error}; use {use}"
    fix_title = "Insert `.detach()` (and `.cpu()` where the tensor may be on an accelerator)"
    force_title = "Use `.numpy(force=True)`"
    fix_safety = "safe"
    prefilter = (".numpy(",)
    grad = True
    inserted = ".detach()"
    subsumes = ("TNS102",)
    docs = """
## What it does
Checks for `t.numpy()` where `t` may require grad (a model output, a loss, a parameter, a
tensor created with `requires_grad=True`, or anything computed from one), outside a no-grad
region, with no `.detach()` on the way.  `.cpu()` does not help: on a CPU tensor it returns the
same tensor.

Not reported inside `torch.no_grad()`, `torch.inference_mode()`,
`torch.set_grad_enabled(False)` (or `set_grad_enabled(flag)`, which may turn grad off, unless
`flag` is a name bound once to `True`), what follows a call of a function that ends by turning
grad off (`def setup_inference(): ... torch.set_grad_enabled(False)`, of the file or of
another module), functions decorated with `@torch.no_grad()` or `@torch.inference_mode()`, functions that the
module only ever calls from such regions, or the PyTorch Lightning hooks that the trainer runs
with grad off (`validation_step`, `test_step`, `predict_step`, ...): `numpy()` is allowed
whenever grad mode is off.  `model.eval()` does not turn grad off and does not silence the rule.
Values that never require grad are not reported: DataLoader batches, factories without
`requires_grad=True`, `argmax`/comparison results, the indices of `torch.max(x, 1)` /
`x.topk(k)`, `torch.autograd.grad` results, `Distribution.sample()`, outputs of a frozen
model or of a module whose `forward` is decorated with `@torch.no_grad()`.  A module of the file
is frozen when its constructor freezes it whole, or makes each of its parameters frozen: an
`nn.Embedding.from_pretrained(v)`, an `nn.Parameter(t, requires_grad=False)`, a layer it freezes
after making it (`self.backbone.requires_grad_(False)`, a loop over `self.backbone.parameters()`,
`self.emb.weight.requires_grad = False`), beside layers and buffers without parameters
(`nn.Dropout`, `nn.LayerNorm(d, elementwise_affine=False)`, a rotary embedding's frequencies
registered as a buffer), where the file turns no grad back on (`p.requires_grad = flag`) and
adds no layer to it from outside (`net.fc = nn.Linear(4, 2)`).  Code that tests
`t.requires_grad` before converting is trusted.

A tensor of unknown origin (a function parameter, the result of an unknown call) is reported
only in strict mode (`--strict`, flake8 `--tensorcopy-strict`), with "may require grad".

A tensor that requires grad passed to a function of another module of the project that calls
`.numpy()` on it (`to_numpy(out)`, with `def to_numpy(t): return t.numpy()` in `utils.py`) is
reported at the argument, where the call is: `out (to_numpy() calls .numpy() on it,
utils.py:5) requires grad`.  Only where the function converts it on every path as it received
it (not after `if detach: t = t.detach()`), and without a fix (what the function does with the
tensor besides is its own).  So is a torch module passed to a function that converts what it
computes (`predict(net, x)`, with `def predict(model, x): return model(x).numpy()`): `what net
computes (predict() calls .numpy() on it, utils.py:6) requires grad`, where the module is one
for certain whose forward returns a tensor that requires grad (not one that returns indices, nor
a frozen one); use `torch.no_grad()` around the call.  So is a list of tensors that require grad
passed to a function that converts each (`all_numpy(outs)`, with `[t.numpy() for t in ts]`
inside): `the tensors in outs (all_numpy() calls .numpy() on them, utils.py:19) require grad`.
So is one passed to the constructor of another module's class that converts it there
(`FeatureSet(model(x))`, with `self.feats = feats.numpy()` in `__init__`, its own or one it
inherits from a class of its module through single bases; not behind a `__new__`).
In the same file, the function itself is
reported, with the lines of the calls that pass the tensor.  A method of another module's class
is reported at its call the same way, for what the instance's constructor call passed
(`h = Holder(net)`, then `h.show(x)`, where `show` calls `.numpy()` on `self.model(x)`: `what
h.model computes (h.show() calls .numpy() on it, holders.py:9) requires grad`), where the class
keeps that parameter as an attribute and sets it nowhere else, and the file has not bound the
attribute again since.  So is a tensor a call hands to a method of another module's class that
keeps it (`logger.log(loss)`, with `def log(self, v): self.last = v`), where another method of
the class converts what it keeps (`def dump(self): return self.last.numpy()`) and the file calls
that method on the same instance (`logger.dump()`, in the same function where the instance is a
local name): reported at the argument, `loss (logger.log() keeps it, logger.dump() calls .numpy()
on it, utils.py:7) requires grad`.  Only where the method keeps the parameter on every call, as
passed (a statement of its body itself, the parameter never bound again, the attribute named
nowhere else in it).

## Why is this bad?
It raises `RuntimeError: Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead.`, typically in the evaluation or logging code at the end of
an epoch, after the training time is spent.

## Example
```python
output = model(input)
pred_np = output.cpu().numpy()
```

## Use instead
```python
output = model(input)
pred_np = output.detach().cpu().numpy()
```
or compute `output` inside `with torch.no_grad():` when no gradient is needed.  For a scalar
(a loss), `loss.item()` is the usual spelling.

## Fix safety
Safe: `.detach()` is inserted right after the tensor expression (before `.cpu()` /
`.to("cpu")`, so the copy to the host is not recorded by autograd).  The code raised before;
where the tensor did not require grad at run time the result is the same array as before (on
the CPU it shares memory with the tensor either way).  With `--numpy-fix force` the fix is
`t.numpy(force=True)` (torch >= 1.13), which detaches and copies to the CPU as needed.

Unsafe when the receiver is a torch tensor only by an annotation or, in strict mode, of
unknown origin: another framework's tensor has a `.numpy()` of its own and no `.detach()`.

The array shares memory with the tensor on the CPU: writing into it changes the tensor
without autograd noticing.  Copy it (`.copy()`) before writing into it in place.

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
"""

    VALID = [
        # Every kind of no-grad region.
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            with torch.no_grad():
                out = model(torch.randn(4, 3))
                arr = out.numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            out = model(torch.randn(4, 3))
            with torch.no_grad():
                arr = out.numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            with torch.inference_mode():
                arr = model(torch.randn(4, 3)).numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            with torch.set_grad_enabled(False):
                arr = model(torch.randn(4, 3)).numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch import nn


            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(3, 2)

                @torch.no_grad()
                def predict(self, x):
                    return self.fc(x).numpy()

                @torch.inference_mode()
                def embed(self, x):
                    return self.fc(x).cpu().numpy()


            net = Net()
            p = net.predict(torch.randn(2, 3))
            e = net.embed(torch.randn(2, 3))
            """), runs=True),
        Valid(dedent("""
            import torch as th
            model = th.nn.Linear(3, 2)
            with th.no_grad():
                arr = model(th.randn(4, 3)).numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch import no_grad
            model = torch.nn.Linear(3, 2)
            with no_grad():
                arr = model(torch.randn(4, 3)).numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch import inference_mode

            @inference_mode()
            def predict(m, x):
                return m(x).numpy()

            p = predict(torch.nn.Linear(3, 2), torch.randn(2, 3))
            """), runs=True),
        # The conversion spelled right.
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            out = model(torch.randn(4, 3))
            a = out.detach().cpu().numpy()
            b = out.detach().numpy()
            c = out.numpy(force=True)
            d = out.sum().item()
            e = out.tolist()
            f = out.data.numpy()
            """), runs=True),
        # Values that never require grad.
        Valid(dedent("""
            import torch
            x = torch.randn(5, 5)
            arr = x.numpy()
            y = torch.ones(3, requires_grad=True)
            idx = y.argmax().numpy()
            mask = (y > 0).numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.arange(8)), batch_size=4)
            for x, y in loader:
                xs = x.numpy()
                ys = y.numpy()
            for batch in loader:
                first = batch[0].numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            out = model(torch.randn(4, 3))
            _, pred = torch.max(out, 1)
            labels = pred.numpy()
            top = out.topk(1).indices.numpy()
            best = out.max(dim=1)[1].numpy()
            """), runs=True),
        # Frozen model, inputs without grad: the output does not require grad.
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)
            for p in model.parameters():
                p.requires_grad = False
            out = model(torch.randn(4, 3))
            arr = out.numpy()
            """), runs=True),
        # A function that is only ever called with grad off.
        Valid(dedent("""
            import torch
            model = torch.nn.Linear(3, 2)

            def report():
                return model(torch.randn(2, 3)).numpy()

            with torch.no_grad():
                r = report()
            """), runs=True),
        # A module whose forward runs without grad.
        Valid(dedent("""
            import torch
            from torch import nn


            class Features(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(3, 2)

                @torch.no_grad()
                def forward(self, x):
                    return self.fc(x)


            f = Features()(torch.randn(2, 3)).numpy()
            """),
              runs=True),
        # PyTorch Lightning runs validation/test/predict steps with grad off.
        Valid(dedent("""
            import torch
            import pytorch_lightning as pl


            class Lit(pl.LightningModule):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(3, 2)

                def validation_step(self, batch, batch_idx):
                    x, y = batch
                    self.preds.append(self.fc(x).cpu().numpy())
            """)),
        # Unknown origin: silent unless strict.
        Valid(dedent("""
            import torch

            def to_numpy(t):
                return t.numpy()
            """)),
        # TensorFlow's .numpy() in a file that does not use torch.
        Valid(dedent("""
            import tensorflow as tf

            x = tf.Variable([1.0, 2.0])
            with tf.GradientTape() as tape:
                y = x * x
            print(y.numpy())
            """)),
    ]

    INVALID = [
        Invalid(
            dedent("""
                import torch

                x = torch.ones(3, requires_grad=True)
                y = x * 2
                arr = y.numpy()
                """),
            line=5,
            col=6,
            fixed=dedent("""
                import torch

                x = torch.ones(3, requires_grad=True)
                y = x * 2
                arr = y.detach().numpy()
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="arr.tolist() == [2.0, 2.0, 2.0]"),
        ),
        Invalid(
            # The seed: a model's output converted for metrics, `.detach()` forgotten.
            dedent("""
                import torch
                from torch import nn

                model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
                input = torch.randn(16, 4)
                output = model(input)
                pred_np = output.cpu().numpy()
                """),
            line=7,
            col=10,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
                input = torch.randn(16, 4)
                output = model(input)
                pred_np = output.detach().cpu().numpy()
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="pred_np.shape == (16, 2)"),
        ),
        Invalid(
            # model.eval() does not turn grad off.
            dedent("""
                import torch
                from torch import nn
                from torch.utils.data import DataLoader, TensorDataset

                model = nn.Linear(3, 2)
                loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4)
                model.eval()
                probs = []
                for (x,) in loader:
                    logits = model(x)
                    probs.append(logits.softmax(dim=1).numpy())
                """),
            line=11,
            col=17,
            fixed=dedent("""
                import torch
                from torch import nn
                from torch.utils.data import DataLoader, TensorDataset

                model = nn.Linear(3, 2)
                loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4)
                model.eval()
                probs = []
                for (x,) in loader:
                    logits = model(x)
                    probs.append(logits.softmax(dim=1).detach().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="len(probs) == 2"),
        ),
        Invalid(
            # Logging the loss inside a training loop.
            dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 1)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                loss_fn = nn.MSELoss()
                history = []
                for step in range(3):
                    x, y = torch.randn(8, 3), torch.randn(8, 1)
                    loss = loss_fn(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    history.append(loss.numpy())
                """),
            line=14,
            col=19,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 1)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                loss_fn = nn.MSELoss()
                history = []
                for step in range(3):
                    x, y = torch.randn(8, 3), torch.randn(8, 1)
                    loss = loss_fn(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    history.append(loss.detach().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="len(history) == 3"),
        ),
        Invalid(
            # A module output through `.to(device)`: may also be on an accelerator.
            dedent("""
                import torch
                from torch import nn
                import torch.nn.functional as F

                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                model = nn.Linear(3, 2).to(device)
                x = torch.randn(4, 3, device=device)
                probs = F.softmax(model(x), dim=1).numpy()
                """),
            line=8,
            col=8,
            fixed=dedent("""
                import torch
                from torch import nn
                import torch.nn.functional as F

                device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
                model = nn.Linear(3, 2).to(device)
                x = torch.randn(4, 3, device=device)
                probs = F.softmax(model(x), dim=1).detach().cpu().numpy()
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="probs.shape == (4, 2)"),
            also=("TNS102",),
        ),
        Invalid(
            # A parenthesised receiver: `.detach()` goes after the parenthesis.
            dedent("""
                import torch

                w = torch.nn.Parameter(torch.ones(3))
                b = torch.zeros(3)
                arr = (w + b).to("cpu").numpy()
                """),
            line=5,
            col=6,
            fixed=dedent("""
                import torch

                w = torch.nn.Parameter(torch.ones(3))
                b = torch.zeros(3)
                arr = (w + b).detach().to("cpu").numpy()
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="arr.tolist() == [1.0, 1.0, 1.0]"),
        ),
        Invalid(
            # --numpy-fix force
            dedent("""
                import torch

                layer = torch.nn.Linear(2, 2)
                arr = layer.weight.numpy()
                """),
            line=4,
            col=6,
            fixed=dedent("""
                import torch

                layer = torch.nn.Linear(2, 2)
                arr = layer.weight.numpy(force=True)
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="arr.shape == (2, 2)"),
            options={"numpy_fix": "force"},
        ),
        Invalid(
            # Requires grad and lives on an accelerator: one finding, one fix for both.
            dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 2).cuda()
                out = model(torch.randn(4, 3).cuda())
                arr = out.numpy()
                """),
            line=6,
            col=6,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 2).cuda()
                out = model(torch.randn(4, 3).cuda())
                arr = out.detach().cpu().numpy()
                """),
            also=("TNS102",),
        ),
        Invalid(
            # --numpy-fix force: `numpy(force=True)` resolves both.
            dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 2).cuda()
                out = model(torch.randn(4, 3).cuda())
                arr = out.numpy()
                """),
            line=6,
            col=6,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 2).cuda()
                out = model(torch.randn(4, 3).cuda())
                arr = out.numpy(force=True)
                """),
            options={"numpy_fix": "force"},
            also=("TNS102",),
        ),
        Invalid(
            # Strict mode: a parameter of unknown origin ("may require grad").
            dedent("""
                import torch

                def to_numpy(t):
                    return t.numpy()

                arr = to_numpy(torch.ones(2, requires_grad=True))
                """),
            line=4,
            col=11,
            fixed=dedent("""
                import torch

                def to_numpy(t):
                    return t.detach().cpu().numpy()

                arr = to_numpy(torch.ones(2, requires_grad=True))
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="arr.tolist() == [1.0, 1.0]"),
            options={"strict": True},
            unsafe=True,  # unknown origin: `t` may be another framework's tensor
            also=("TNS102",),
        ),
    ]

class NumpyOnAcceleratorTensor(_NumpyMethodRule):
    through_calls = True
    through_needles = (".numpy(",)
    code = "TNS102"
    name = "numpy-on-accelerator-tensor"
    message = "{expr}{origin} {hazard}, so .numpy() raises {error}; use {use}"
    fix_title = "Insert `.cpu()`"
    force_title = "Use `.numpy(force=True)`"
    fix_safety = "safe"
    prefilter = (".numpy(",)
    inserted = ".cpu()"
    docs = """
## What it does
Checks for `t.numpy()` where `t` may live on an accelerator: it, or the tensors it was computed
from, were moved with `.cuda()`, `.to(device)`, `.to("cuda")`, created with `device=...`, or it
is the output of a module that was moved, and no `.cpu()` / `.to("cpu")` comes after the
move.  A value of unknown origin counts once moved (`x.to("cuda").numpy()`, `y = x.cuda()` then
`y.numpy()`): what `.to()` or `.cuda()` returns and has a `.numpy()` is a torch tensor on the
accelerator (the fix is unsafe: `x` may be another object with those methods).  Grad mode does
not matter: the device check comes first, in no-grad code too.

A move to another tensor's device (`.to(x.device)`, `device=x.device`) is a move like any other,
whatever `x` is: code written to follow a device runs where that device is an accelerator.  A
tensor whose device nothing in the code names (a function parameter, the result of an unknown
call) is reported only in strict mode.  A variable that the code moves to the host under a
device test (`if device != "cpu": spec = spec.cpu()`) is trusted: the analysis cannot tell
that the test and the earlier `.to(device)` are about the same device.

A tensor that may live on an accelerator, as above, passed to a function of another module of
the project that calls `.numpy()` on it without `.cpu()` is reported at the argument, where the
call is: `x (to_numpy() calls .numpy() on it, utils.py:2) may be on an accelerator` (no fix:
what the function does with the tensor besides is its own).

## Why is this bad?
NumPy arrays live in host memory, so `numpy()` refuses any other device: `TypeError: can't
convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory
first.`  Code written and tested on a CPU runs and then fails on the first GPU machine.  (On a
CPU-only machine the same check is visible with `device="meta"`: `TypeError: can't convert
meta device type tensor to numpy.`; a meta tensor has no data to copy, so the fixed code can
only be run on a real accelerator.)

## Example
```python
model = Net().to(device)
with torch.no_grad():
    logits = model(images.to(device))
preds = logits.numpy()
```

## Use instead
```python
preds = logits.cpu().numpy()
```
When the tensor may also require grad (TNS101), both fixes together give the canonical
`t.detach().cpu().numpy()`: detach first, so the copy to the host is not recorded by autograd.

## Fix safety
Safe: `.cpu()` is inserted right before `.numpy()` (after any `.detach()`).  On an
accelerator the code raised before; on the CPU `.cpu()` returns the same tensor, so the array
is the same as before.  With `--numpy-fix force` the fix is `t.numpy(force=True)`.  Unsafe
when the receiver is a torch tensor only by an annotation or, in strict mode, of unknown
origin (another framework's tensor has no `.cpu()`).

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.cpu.html
- https://pytorch.org/docs/stable/tensor_attributes.html#torch.device
"""

    VALID = [
        Valid(dedent("""
            import torch
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            x = torch.randn(3, device=device)
            a = x.cpu().numpy()
            b = x.to("cpu").numpy()
            c = x.detach().cpu().numpy()
            d = x.numpy(force=True)
            e = x.sum().item()
            f = x.to(device="cpu").numpy()
            g = x.tolist()
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.randn(3)
            y = x.to(torch.float64).numpy()
            z = torch.ones(2, device="cpu").numpy()
            """), runs=True),
        Valid(dedent("""
            import torch
            from torch.utils.data import DataLoader, TensorDataset

            loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4)
            for (x,) in loader:
                arr = x.numpy()
            """), runs=True),
        Valid(dedent("""
            import torch

            def to_numpy(t):
                return t.cpu().numpy()

            def f(t):
                return t.numpy()
            """)),
    ]

    INVALID = [
        Invalid(
            dedent("""
                import torch

                x = torch.randn(3, device="cuda")
                arr = x.numpy()
                """),
            line=4,
            col=6,
            fixed=dedent("""
                import torch

                x = torch.randn(3, device="cuda")
                arr = x.cpu().numpy()
                """),
        ),
        Invalid(
            dedent("""
                import torch

                x = torch.arange(6).cuda()
                flat = x.view(-1).numpy()
                """),
            line=4,
            col=7,
            fixed=dedent("""
                import torch

                x = torch.arange(6).cuda()
                flat = x.view(-1).cpu().numpy()
                """),
        ),
        Invalid(
            # A moved module's output, computed without grad: only the device is wrong.
            dedent("""
                import torch
                from torch import nn

                device = torch.device("cuda")
                model = nn.Linear(3, 2)
                model.to(device)
                with torch.no_grad():
                    logits = model(torch.randn(4, 3).to(device))
                preds = logits.argmax(dim=1).numpy()
                """),
            line=9,
            col=8,
            fixed=dedent("""
                import torch
                from torch import nn

                device = torch.device("cuda")
                model = nn.Linear(3, 2)
                model.to(device)
                with torch.no_grad():
                    logits = model(torch.randn(4, 3).to(device))
                preds = logits.argmax(dim=1).cpu().numpy()
                """),
        ),
        Invalid(
            # `.cpu()` goes after `.detach()`.
            dedent("""
                import torch

                w = torch.zeros(3, device="cuda", requires_grad=True)
                snapshot = w.detach().numpy()
                """),
            line=4,
            col=11,
            fixed=dedent("""
                import torch

                w = torch.zeros(3, device="cuda", requires_grad=True)
                snapshot = w.detach().cpu().numpy()
                """),
        ),
        Invalid(
            # Also requires grad: with TNS101 off (or suppressed) this rule reports alone.
            dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 2).cuda()
                out = model(torch.randn(4, 3).cuda())
                arr = out.numpy()
                """),
            line=6,
            col=6,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Linear(3, 2).cuda()
                out = model(torch.randn(4, 3).cuda())
                arr = out.cpu().numpy()
                """),
        ),
    ]

# A NumPy function that takes a list of tensors (each converted), by the module's usual names.
# (Also the savers: a helper that exports what it is given, `np.save(path, p)`.)
_LIST_FUNCTION_CALL = LazyPattern(r"(?<![\w.])(?:np|numpy)\.(?:mean|average|median|std|var|sum|prod|max|min|"
                                  r"stack|vstack|hstack|concatenate|percentile|quantile|nan\w+|"
                                  r"save|savez|savez_compressed|savetxt)\(")
# What names NumPy goes by in a file, for TNS103's test of which functions call it: the file's
# imports as reach.py reads them (`import numpy as N`, `from numpy import asarray as arr`,
# `from numpy.linalg import (norm,\n svd)`) and module-level aliases (`arr = np.asarray`).
_MODULE_ALIAS = LazyPattern(r"^(\w+)[ \t]*=[ \t]*(\w+)[ \t]*\.", re.M)
_NUMPY_CALLS: dict = {}  # (module names, function names) -> the pattern of their calls


@kept_for_the_last_text  # (TNS103 and TNS104 ask of the same file)
def _numpy_names(text: str) -> tuple:
    """(names of NumPy modules, names of NumPy functions) in a file whose source is `text`."""
    modules, functions = {"np", "numpy"}, set()
    for module, name, local in imports(text, None, False):
        if module.split(".")[0] != "numpy" or name == "*":
            continue
        (modules if name is None or name in _NUMPY_SUBMODULES else functions).add(local)
    functions.update(_module_aliases(text, modules))
    return frozenset(modules), frozenset(functions)


def _module_aliases(text: str, modules) -> set:
    """The names `_MODULE_ALIAS` binds to an attribute of one of `modules` (`arr = np.asarray`).
    Its match is tried only on the lines with an `=` before one of them and a `.` after (the
    pattern, which starts at every line, is tried at every position of a file)."""
    found = set()
    starts = set()
    for name in modules:
        for i in word_positions(text, name):
            j = i + len(name)
            while j < len(text) and text[j] in " \t":
                j += 1
            if j < len(text) and text[j] == ".":
                starts.add(text.rfind("\n", 0, i) + 1)
    for start in starts:
        m = _MODULE_ALIAS.match(text, start)
        if m is not None and m.group(2) in modules:
            found.add(m.group(1))
    return found


_NUMPY_SUBMODULES = frozenset("linalg random fft ma lib char emath polynomial testing rec strings".split())


def _numpy_call_pattern(modules: frozenset, functions: frozenset):
    key = (modules, functions)
    found = _NUMPY_CALLS.get(key)
    if found is None:
        mods = "|".join(sorted(map(re.escape, modules), key=len, reverse=True))
        alternatives = [rf"(?:{mods})(?:[ \t]*\.[ \t]*\w+)+[ \t]*(\(|(?:#[^\n]*)?$)"]
        if functions:
            names = "|".join(sorted(map(re.escape, functions), key=len, reverse=True))
            alternatives.append(rf"(?:{names})[ \t]*(\()")
        found = _NUMPY_CALLS[key] = re.compile("|".join(alternatives), re.M)
    return found


def _calls_numpy(segment: str, pattern) -> bool:
    """Whether `segment` calls a NumPy function by a name `pattern` knows (`np.asarray(`,
    `asarray(`), or names one at the end of a line after `=` (`to_array = np.asarray`, which the
    analysis follows into later calls)."""
    for m in pattern.finditer(segment):
        start = m.start()
        before = segment[start - 1] if start else " "
        if before.isalnum() or before in "_.":
            continue
        if m.group(m.lastindex) == "(":
            return True
        if segment[segment.rfind("\n", 0, start) + 1 : start].rstrip().endswith("="):
            return True
    return False


def _numpy_scope_test_of(text: str):
    # A function reports only where it calls NumPy (`np.float32` alone is no call), by whatever
    # name the file gives it (`from numpy import asarray`: `asarray(t)` has no "np.").
    modules, functions = _numpy_names(text)
    pattern = _numpy_call_pattern(modules, functions)
    # (A match starts with one of these names: a function that holds none is not searched.)
    names = tuple(modules | functions)
    return lambda segment: any(n in segment for n in names) and _calls_numpy(segment, pattern)


_numpy_scope_test = kept_for_the_last_text(_numpy_scope_test_of)


class _NumpyFunctionRule(_Tns1Rule):
    """Shared by TNS103/TNS104: NumPy functions given tensors (which they convert through
    `Tensor.__array__`, that is `Tensor.numpy()`)."""

    prefilter = ("numpy", "np.")

    @classmethod
    def scope_test(cls, text: str):
        # (One test for TNS103, TNS104 and TNS105: the engine asks a function once.)
        return _numpy_scope_test(text)

    @staticmethod
    def _numpy_function(node: ast.Call, ctx) -> str | None:
        """The NumPy function `node` calls (`asarray`, `linalg.norm`), if it may convert a tensor."""
        q = ctx.qualname(node.func)
        if q is None or not q.startswith("numpy."):
            return None
        short = q[6:]
        return None if short in _NUMPY_NO_CONVERSION else short

    @staticmethod
    def _tensor_arguments(node: ast.Call, ctx, level_of) -> tuple:
        """(hazard, fixable, held, facts) of the data arguments of NumPy call `node` (not `dtype=`,
        `axis=`, ...).  `level_of(fact, expression or None)` says "yes", "may" or None of one
        tensor; hazard is the worst of them.  `fixable`: tensor expressions to change in place (an
        argument, or an element of a list or tuple written in the call); `held`: lists of tensors
        held in a variable (changed where they are filled); `facts`: the facts that made the
        hazard."""
        keywords = [kw.value for kw in node.keywords if kw.arg is not None and kw.arg not in _NUMPY_NON_DATA_KW]
        return _data_arguments([*node.args, *keywords], ctx, level_of)

    @staticmethod
    def _convert(expr, ctx, force: bool):
        """Edits that turn tensor expression `expr` into a detached host array."""
        text = ctx.text(expr)
        if "#" in text:
            return None
        s, e = ctx.span(expr)
        if force:
            if needs_parens(expr, text):
                return [Edit(s, e, f"({text}).numpy(force=True)", expect=text)]
            return [Edit(e, e, ".numpy(force=True)")]
        base, cpu_move = _strip_cpu_moves(expr, ctx)
        detached = _detached(base)  # (`y.detach()`, `y.detach().cpu()`: detached already)
        if cpu_move is not None:
            if detached:
                return [Edit(e, e, ".numpy()")]
            pos = _dot_before(ctx, cpu_move.func)
            if pos is None:
                return None
            return [Edit(pos, pos, ".detach()"), Edit(e, e, ".numpy()")]
        if detached:
            return [Edit(e, e, ".cpu().numpy()")]
        if needs_parens(expr, text):
            return [Edit(s, e, f"({text}).detach().cpu().numpy()", expect=text)]
        return [Edit(e, e, ".detach().cpu().numpy()")]

    @staticmethod
    def _converted(fixable: list, held: list, ctx, force: bool) -> list:
        """The edits that convert each of `fixable` (`_convert`), or none: where a list of tensors
        is held in a variable (converted where it is filled), or one cannot be converted."""
        edits = []
        if held:
            return edits
        for expr in fixable:
            e = _NumpyFunctionRule._convert(expr, ctx, force)
            if e is None:
                return []
            edits.extend(e)
        return edits

    @staticmethod
    def _use(node, fixable, ctx, force) -> str:
        """What to write instead, for the message: the call with its tensor converted."""
        def converted(expr, text):
            if force:
                return (f"({text})" if needs_parens(expr, text) else text) + ".numpy(force=True)"
            base, _ = _strip_cpu_moves(expr, ctx)
            b = ctx.text(base)
            if _detached(base):
                return b + ".cpu().numpy()"
            return (f"({b})" if needs_parens(base, b) else b) + ".detach().cpu().numpy()"

        generic = "t.numpy(force=True)" if force else "t.detach().cpu().numpy()"
        return _NumpyFunctionRule._use_in_call(node, fixable, ctx, converted, generic)

    @staticmethod
    def _use_in_call(node, fixable, ctx, converted, generic: str) -> str:
        """The NumPy call with its one tensor argument written `converted(expr, text)` (`generic`,
        `t.cpu()`, for several or a long one), or that argument alone when the call has others."""
        func = ctx.text(node.func) if len(ctx.text(node.func)) <= 30 else "np.f"
        if len(fixable) > 1:  # the tensors of a list or tuple written in the call
            return f"{generic[1:]} on each tensor"
        if len(fixable) != 1:
            return f"{func}({generic})"
        expr = fixable[0]
        t = ctx.text(expr)
        if len(t) > 30 or "\n" in t:
            return f"{func}({generic})"
        conv = converted(expr, t)
        if len(node.args) + len(node.keywords) > 1 or expr not in node.args:
            return f"{conv} in the call"
        return f"{func}({conv})"

def _what(node: ast.Call, fixable: list, hazard: str) -> str:
    """What a NumPy call is given, for its message: a tensor, or the tensors of a list or tuple
    written in the call (`np.array([a.sum(), b.sum()])`)."""
    given = {id(a) for a in node.args} | {id(k.value) for k in node.keywords}
    if any(id(e) not in given for e in fixable):
        plural = hazard.replace("requires", "require", 1) if hazard.startswith("requires") else hazard
        return f"a list of tensors that {plural}"
    return f"a tensor that {hazard}"


def _fill_advice(ctx, held, converted: str) -> str:
    """What to write instead of a list of tensors held in a variable (`losses`, `self.losses`):
    each element converted where the list is filled; for any other expression (what a
    generator yields, a call's result), where the values are made."""
    if isinstance(held, (ast.Name, ast.Attribute)):
        return f"{_display(ctx, held, 'the list')}.append({converted}) where the list is filled"
    return f"{converted} for each tensor where the values are made"


def _element_advice(ctx, held) -> str:
    """What each element of a list of tensors should be where the list is filled: its value
    (`t.item()`) for a list of losses by its name (`losses`, `self.val_losses`), else a copy that
    NumPy converts whatever its shape (a model's outputs stacked: `np.vstack(outputs)`)."""
    return "t.item()" if "loss" in _display(ctx, held, "").lower() else "t.detach().cpu()"


def _worse(a, b):
    return "yes" if "yes" in (a, b) else (a or b)


class NumpyFunctionOnGradTensor(_NumpyFunctionRule):
    through_calls = True
    # What a helper gives NumPy: a conversion (`np.asarray(t)`, `np.array(t)`: one needle is in
    # both, and in `from numpy import asarray`'s `asarray(t)`), or a function that takes a list
    # of tensors (`np.mean(values)`, `np.stack(arrays)`: `through_admits`).
    through_needles = ("array(", "np.", "numpy.")

    @classmethod
    def through_admits(cls, segment: str) -> bool:
        # (Not any NumPy call: a function of an image-processing module that calls
        # `np.transpose(image)` is no helper a training loop passes its losses to, and taking
        # those as ones made a large model tree's check walk 5% more files.)
        return "array(" in segment or ("np." in segment or "numpy." in segment) \
            and _LIST_FUNCTION_CALL.search(segment) is not None
    code = "TNS103"
    name = "numpy-function-on-grad-tensor"
    message = "{func}() on {what}{origin} raises {error}; use {use}"
    fix_title = "Pass `t.detach().cpu().numpy()` to the NumPy call"
    force_title = "Pass `t.numpy(force=True)` to the NumPy call"
    fix_safety = "safe"
    # Its fix (`t.detach().cpu().numpy()`) also moves the tensor to the host, and converts it
    # for a NumPy reduction.
    subsumes = ("TNS104", "TNS105")
    docs = """
## What it does
Checks for NumPy functions applied directly to a tensor that may require grad, outside a
no-grad region: `np.asarray(t)`, `np.array(t)`, ufuncs such as `np.exp(t)`, and functions that
take a list of tensors (`np.mean(losses)` after `losses.append(loss)`, also a list a class
keeps: `np.mean(self.losses)` in one method after `self.losses.append(loss)` in another;
`np.concatenate([a, b])`).  NumPy is resolved through imports (`import numpy as np`,
`from numpy import asarray`).

NumPy reductions given a single tensor (`np.mean(t)`, `np.sum(t)`, `np.max(t)`, `np.std(t)`,
...) do not convert it: they call the tensor's own method with NumPy keywords, which raises
`TypeError: mean() got an unexpected keyword argument 'axis'` whatever the grad state.  They are
reported here when the tensor may require grad, with that error in the message.

Functions that only look at the tensor (`np.shape`, `np.ndim`, ...) are not reported.  Tensors
of unknown origin are reported only in strict mode.

A tensor that requires grad passed to a function of another module of the project that gives
it to NumPy (`to_array(out)`, with `def to_array(t): return np.asarray(t)` in `utils.py`) is
reported at the argument, where the call is, without a fix, as TNS101 reports one that the
function calls `.numpy()` on (also one a class's constructor gives to NumPy,
`ArraySet(model(x))`); so is a list of such tensors (`mean_of(losses)`, with
`np.mean(values)` inside), a torch module whose output the function gives to NumPy, and
a method of another module's class that gives to NumPy what the instance's constructor call
passed (`h = Holder(net)`, then `h.convert(x)`), reported at the method's call.  So is a tensor
a call hands to a method of another module's class that keeps it (`meter.update(loss)`, with
`def update(self, v): self.vals.append(v)`), where another method gives what it keeps to NumPy
(`def avg(self): return np.mean(self.vals)`) and the file calls that method on the same instance
(`meter.avg()`): reported at the argument, as TNS101 reports one (`meter.update() on loss, which
requires grad (kept, then a NumPy call in meter.avg() converts it, utils.py:7)`).

## Why is this bad?
NumPy converts a tensor through `Tensor.__array__`, which calls `Tensor.numpy()`: `RuntimeError:
Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.`  A list
of losses kept as tensors also keeps every step's autograd graph alive until the list dies.

## Example
```python
scores = np.asarray(model(x))
epoch_loss = np.mean(losses)  # losses.append(loss) in the loop
```

## Use instead
```python
scores = np.asarray(model(x).detach().cpu().numpy())
losses.append(loss.item())  # then np.mean(losses) works on floats
```

## Fix safety
Safe: the NumPy call is kept and only its tensor argument changes to
`t.detach().cpu().numpy()`, so copy semantics do not change: `np.asarray` still returns an
array that shares memory with a CPU tensor and `np.array` still copies (measured on torch 2.13
with numpy 2.4), and `Tensor.__array__` is `self.numpy()` (plus `astype` for `dtype=`), the
same conversion.  A list held in a variable (`np.mean(losses)`) has no automatic fix: convert
each element where the list is filled (`losses.append(loss.item())`).  With `--numpy-fix
force` the argument becomes `t.numpy(force=True)`.

Safe only for tensors that are torch tensors by the flow of the code, and only where the NumPy
call gives what it gave before: the plain conversions (`np.asarray`, `np.array`,
`np.concatenate`, `np.stack`, ...) give the same array for every tensor, and a reduction of one
tensor (`np.mean(t)`) raised whatever its grad state.  Ufuncs and most other NumPy functions
hand a tensor that does not require grad back as a tensor (`np.exp(t)` is a `torch.Tensor`,
through `__array_wrap__`), so there the fix is safe only when the tensor requires grad on every
path (the original certainly raised), and unsafe otherwise.

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.item.html
"""

    VALID = [
        Valid(dedent("""
            import torch
            import numpy as np

            model = torch.nn.Linear(3, 2)
            out = model(torch.randn(4, 3))
            a = np.asarray(out.detach().cpu().numpy())
            b = np.array(out.detach().numpy())
            c = np.exp(out.numpy(force=True))
            shape = np.shape(out)
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            model = torch.nn.Linear(3, 1)
            losses = []
            for _ in range(3):
                loss = model(torch.randn(4, 3)).pow(2).mean()
                loss.backward()
                losses.append(loss.item())
            print(np.mean(losses))
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            model = torch.nn.Linear(3, 2)
            with torch.no_grad():
                out = model(torch.randn(4, 3))
                a = np.asarray(out)
            b = np.exp(out)
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            x = torch.randn(5)
            a = np.asarray(x)
            b = np.exp(x)
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            def f(t):
                return np.asarray(t)
            """)),
    ]

    INVALID = [
        Invalid(
            dedent("""
                import torch
                import numpy as np

                x = torch.ones(3, requires_grad=True)
                y = x * 2
                arr = np.asarray(y)
                """),
            line=6,
            col=6,
            fixed=dedent("""
                import torch
                import numpy as np

                x = torch.ones(3, requires_grad=True)
                y = x * 2
                arr = np.asarray(y.detach().cpu().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="np.shares_memory(arr, y.detach().numpy())"),
        ),
        Invalid(
            dedent("""
                import torch
                from numpy import array

                model = torch.nn.Linear(3, 2)
                out = model(torch.randn(4, 3))
                arr = array(out)
                """),
            line=6,
            col=6,
            fixed=dedent("""
                import torch
                from numpy import array

                model = torch.nn.Linear(3, 2)
                out = model(torch.randn(4, 3))
                arr = array(out.detach().cpu().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD,
                          check_fixed="not __import__('numpy').shares_memory(arr, out.detach().numpy())"),
        ),
        Invalid(
            dedent("""
                import torch
                import numpy as np

                model = torch.nn.Linear(3, 2)
                scores = np.exp(model(torch.randn(4, 3)) / 2)
                """),
            line=5,
            col=9,
            fixed=dedent("""
                import torch
                import numpy as np

                model = torch.nn.Linear(3, 2)
                scores = np.exp((model(torch.randn(4, 3)) / 2).detach().cpu().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="scores.shape == (4, 2)"),
        ),
        Invalid(
            # Losses kept as tensors: no automatic fix (convert where the list is filled).
            dedent("""
                import torch
                import numpy as np
                from torch import nn

                model = nn.Linear(3, 1)
                criterion = nn.MSELoss()
                losses = []
                for _ in range(3):
                    loss = criterion(model(torch.randn(4, 3)), torch.zeros(4, 1))
                    loss.backward()
                    losses.append(loss)
                epoch_loss = np.mean(losses)
                """),
            line=12,
            col=13,
            fixed=None,
            oracle=Oracle(raises=_RAISES_GRAD),
        ),
        Invalid(
            # A NumPy reduction on one tensor calls Tensor.mean(axis=...): TypeError.
            dedent("""
                import torch
                import numpy as np

                model = torch.nn.Linear(3, 2)
                out = model(torch.randn(4, 3))
                avg = np.mean(out)
                """),
            line=6,
            col=6,
            fixed=dedent("""
                import torch
                import numpy as np

                model = torch.nn.Linear(3, 2)
                out = model(torch.randn(4, 3))
                avg = np.mean(out.detach().cpu().numpy())
                """),
            oracle=Oracle(raises=("TypeError", "unexpected keyword argument 'axis'"),
                          check_fixed="abs(avg - out.mean().item()) < 1e-6"),
        ),
        Invalid(
            dedent("""
                import torch
                import numpy as np

                w = torch.nn.Parameter(torch.ones(2))
                b = torch.zeros(2)
                both = np.concatenate([w.cpu(), b])
                """),
            line=6,
            col=7,
            fixed=dedent("""
                import torch
                import numpy as np

                w = torch.nn.Parameter(torch.ones(2))
                b = torch.zeros(2)
                both = np.concatenate([w.detach().cpu().numpy(), b])
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="both.tolist() == [1.0, 1.0, 0.0, 0.0]"),
        ),
        Invalid(
            dedent("""
                import torch
                import numpy as np

                x = torch.ones(3, requires_grad=True)
                arr = np.asarray(x * 2)
                """),
            line=5,
            col=6,
            fixed=dedent("""
                import torch
                import numpy as np

                x = torch.ones(3, requires_grad=True)
                arr = np.asarray((x * 2).numpy(force=True))
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="arr.tolist() == [2.0, 2.0, 2.0]"),
            options={"numpy_fix": "force"},
        ),
    ]

    def visit_Call(self, node: ast.Call, ctx) -> None:
        if ctx.no_grad:
            return
        short = self._numpy_function(node, ctx)
        if short is None:
            # `to_array(out)`, where `to_array` of another module of the project gives `out`
            # to NumPy (`np.asarray(t)`): reported at the argument, no fix (as TNS101's).
            if _reported_at_call(self, node, ctx, "a NumPy call"):
                return
            # `meter.update(loss)`, where `update` keeps it (`self.vals.append(v)`) and
            # `meter.avg()` gives it to NumPy (`np.mean(self.vals)`): as TNS101's.
            found = ctx.kept_sink(self, node) if ctx.sink_names else None
            if found is not None:
                arg, callee, reader, where = found
                what, use, several = _passed(ctx, arg, "a tensor")
                them, require = ("them", "require") if several else ("it", "requires")
                ctx.report(self, arg, None, func=callee, what=f"{what}, which {require} grad",
                           origin=f" (kept, then a NumPy call in {reader}() converts {them}, {where})",
                           error="RuntimeError", use=use)
                return
            found = ctx.method_sink(self, node) if ctx.sink_names else None
            if found is not None:
                recv, attr, callee, where, params = found
                what, use = _held(ctx, recv, attr, params)
                require, them = ("require", "them") if params else ("requires", "it")
                ctx.report(self, node, None, func=callee, what=f"{what}, which {require} grad",
                           origin=f" (a NumPy call in it converts {them}, {where})", error="RuntimeError", use=use)
            return
        hazard, fixable, held, facts = self._tensor_arguments(node, ctx, lambda f, _expr: self._grad(f, ctx))
        if hazard is None:
            return
        # Some converted tensor may be on an accelerator: TypeError first.
        accelerator = any(f.may_be_on_accelerator for f in facts)
        force = _force(ctx)
        edits = self._converted(fixable, held, ctx, force)
        safety = self.fix_safety if self._fix_is_safe(short, node, fixable, ctx) else "unsafe"
        fix = Fix(self.force_title if force else self.fix_title, safety, tuple(edits)) if edits else None
        func = _display(ctx, node.func, "the NumPy function")
        origin = ctx.origin(held[0] if held else fixable[0]) if held or fixable else ""
        maybe = "" if hazard == "yes" else "may "
        unknown = "" if hazard == "yes" else " (origin unknown)"
        first = node.args[0] if node.args else None
        # `Tensor.numpy()` checks the device before the grad: on an accelerator the error is
        # TypeError (pytorch-facts).
        converted = "TypeError or RuntimeError" if accelerator else "RuntimeError"
        if held:
            what = f"a list of tensors that {maybe}require grad{unknown}"
            error = converted
            use = _fill_advice(ctx, held[0], _element_advice(ctx, held[0]))
        elif short in _NUMPY_METHOD_DISPATCH and first is not None and first in fixable:
            what = f"a tensor that {'may require' if maybe else 'requires'} grad{unknown}"
            error = f"TypeError (it calls Tensor.{short}() with NumPy keywords)"
            if "module_output" in ctx.fact(first).tags:
                error += " or RuntimeError"  # a model's output may be a tuple, which NumPy converts
            use = self._use(node, fixable, ctx, force)
        else:
            what = _what(node, fixable, f"{'may require' if maybe else 'requires'} grad{unknown}")
            error = converted
            use = self._use(node, fixable, ctx, force)
        ctx.report(self, node, fix, func=func, what=what, origin=origin, error=error, use=use)

    @staticmethod
    def _fix_is_safe(short, node, fixable, ctx) -> bool:
        """The converted arguments are torch tensors for certain, and the NumPy call gives what it
        gave before wherever it ran: a plain conversion gives the same array, and otherwise the
        original certainly raised (a tensor that requires grad on every path, or a reduction
        that calls the tensor's own method).  Ufuncs and most other functions hand a tensor that
        does not require grad back as a tensor (`__array_wrap__`), which the fix would change
        into an array."""
        facts = [ctx.fact(e) for e in fixable]
        if not facts or not all(f.is_torch_tensor for f in facts):
            return False
        if short in _NUMPY_PLAIN_CONVERSION:
            return True
        if short in _NUMPY_METHOD_DISPATCH and node.args and node.args[0] in fixable:
            return True
        return any(f.must_require_grad for f in facts)

    def _grad(self, f, ctx) -> str | None:
        if f is not None and ctx.through_call is not None:  # (as TNS101's `_grad_hazard`)
            return "yes" if f.may_require_grad and must_grad(f) >= ctx.through_call else None
        return _grad_level(f, ctx)


_MOVES = frozenset(("to", "cuda", "xpu", "mps"))


def _device_level(f, ctx, expr=None) -> str | None:
    """"yes" when fact `f` (of expression `expr`) is of a tensor that may live on an accelerator,
    "may" (strict mode) when it is a tensor on an unknown device, else None."""
    if f is None:
        return None
    if f.may_be_on_accelerator:
        return "yes"
    if not ctx.options.strict:
        return None
    if f.kind == TENSOR and f.device is Device.UNKNOWN:
        return "may"
    if f.kind == UNKNOWN and f.device is Device.ACCEL and type(expr) is ast.Call \
            and type(expr.func) is ast.Attribute and expr.func.attr in _MOVES:
        # What `x.to("cuda")` gives for an unknown `x`, right here (a module's `.to()` returns the
        # module, which NumPy wraps without error; and what such a value's methods return, a
        # PIL image of a moved pipeline's output, may be anything).
        return "may"
    return None


class NumpyFunctionOnAcceleratorTensor(_NumpyFunctionRule):
    code = "TNS104"
    name = "numpy-function-on-accelerator-tensor"
    message = "{func}() on {what}{origin} raises TypeError; use {use}"
    fix_title = "Pass `t.cpu()` to the NumPy call"
    fix_safety = "safe"
    docs = """
## What it does
Checks for NumPy functions applied directly to a tensor that may live on an accelerator:
`np.asarray(t)`, `np.array(t)`, ufuncs such as `np.exp(t)`, functions that take a list of
tensors (`np.stack([a, b])`, `np.array(preds)` after `preds.append(p)`), where the tensor, or
the tensors it was computed from, were moved with `.cuda()`, `.to(device)`, created with
`device=...`, or it is the output of a module that was moved, with no `.cpu()` after the move.
Grad mode does not matter: the device is checked first, in no-grad code too.  A tensor that
may also require grad outside a no-grad region is TNS103's (its fix moves it to the host as
well).

NumPy reductions given a single tensor (`np.mean(t)`, `np.sum(t)`, ...) call the tensor's own
method with NumPy keywords and raise `TypeError: mean() got an unexpected keyword argument
'axis'` on every device: moving the tensor does not help, so they are not reported here.
Functions that only look at the tensor (`np.shape`, `np.ndim`, ...) are not reported.  A tensor
whose device is unknown (a function parameter) is reported only in strict mode.

## Why is this bad?
NumPy converts a tensor through `Tensor.__array__`, which calls `Tensor.numpy()`, and NumPy
arrays live in host memory: `TypeError: can't convert cuda:0 device type tensor to numpy. Use
Tensor.cpu() to copy the tensor to host memory first.`  Code written and tested on a CPU runs
and then fails on the first GPU machine.  (On a CPU-only machine the same check is visible
with `device="meta"`: `TypeError: can't convert meta device type tensor to numpy.`)

## Example
```python
model = Net().to(device)
with torch.no_grad():
    probs = np.exp(model(images.to(device)))
```

## Use instead
```python
with torch.no_grad():
    probs = np.exp(model(images.to(device)).cpu())
```

## Fix safety
Safe: `.cpu()` is appended to each tensor argument that may be on an accelerator, and the NumPy
call is kept.  On an accelerator the code raised before; on the CPU `.cpu()` returns the very
same tensor, so every NumPy function gives what it gave before (a ufunc still hands back a
tensor through `__array_wrap__`).  A list held in a variable (`np.array(preds)`) has no automatic
fix: move each element where the list is filled (`preds.append(p.cpu())`).  The fix is `.cpu()`
whatever `--numpy-fix` says: the NumPy function still does the conversion.  Unsafe when the
argument is a torch tensor only by an annotation or, in strict mode, of unknown origin (another
object may have no `.cpu()`); a torch tensor of unknown device keeps the safe fix.

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.cpu.html
- https://numpy.org/doc/stable/reference/generated/numpy.asarray.html
"""

    VALID = [
        Valid(dedent("""
            import torch
            import numpy as np

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            x = torch.randn(3, device=device)
            a = np.asarray(x.cpu())
            b = np.array(x.to("cpu"), dtype=np.float64)
            c = np.exp(x.detach().cpu().numpy())
            shape = np.shape(x)
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            x = torch.randn(4)
            with torch.no_grad():
                y = x * 2
            a = np.asarray(y)
            b = np.exp(x)
            c = np.stack([x, y])
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            def to_array(t):
                return np.asarray(t)
            """)),
    ]

    INVALID = [
        Invalid(
            dedent("""
                import torch
                import numpy as np

                x = torch.randn(3, device="cuda")
                arr = np.asarray(x)
                """),
            line=5,
            col=6,
            fixed=dedent("""
                import torch
                import numpy as np

                x = torch.randn(3, device="cuda")
                arr = np.asarray(x.cpu())
                """),
        ),
        Invalid(
            # A moved module's output, computed without grad: only the device is wrong.
            dedent("""
                import torch
                import numpy as np
                from torch import nn

                device = torch.device("cuda")
                model = nn.Linear(3, 2).to(device)
                with torch.no_grad():
                    probs = np.exp(model(torch.randn(4, 3, device=device)) / 2)
                """),
            line=8,
            col=12,
            fixed=dedent("""
                import torch
                import numpy as np
                from torch import nn

                device = torch.device("cuda")
                model = nn.Linear(3, 2).to(device)
                with torch.no_grad():
                    probs = np.exp((model(torch.randn(4, 3, device=device)) / 2).cpu())
                """),
        ),
        Invalid(
            dedent("""
                import torch
                from numpy import stack

                a = torch.ones(2).cuda()
                b = torch.zeros(2)
                both = stack([a, b])
                """),
            line=6,
            col=7,
            fixed=dedent("""
                import torch
                from numpy import stack

                a = torch.ones(2).cuda()
                b = torch.zeros(2)
                both = stack([a.cpu(), b])
                """),
        ),
        Invalid(
            # Predictions kept as device tensors: no automatic fix (move them where the list is
            # filled).
            dedent("""
                import torch
                import numpy as np

                preds = []
                for _ in range(3):
                    with torch.no_grad():
                        preds.append(torch.randn(2, device="cuda").argmax())
                top = np.array(preds)
                """),
            line=8,
            col=6,
            fixed=None,
        ),
    ]

    def visit_Call(self, node: ast.Call, ctx) -> None:
        short = self._numpy_function(node, ctx)
        if short is None:
            return
        first = node.args[0] if node.args else None
        if short in _NUMPY_METHOD_DISPATCH and first is not None and ctx.fact(first).kind == TENSOR:
            return  # `np.mean(t)` calls `t.mean(axis=...)`: TypeError on every device
        hazard, fixable, held, _ = self._tensor_arguments(node, ctx, lambda f, expr: _device_level(f, ctx, expr))
        if hazard is None:
            return
        edits = []
        if not held:
            for expr in fixable:
                e = self._move(expr, ctx)
                if e is None:
                    edits = []
                    break
                edits.append(e)
        # `.cpu()` is right for every torch tensor; a value that only looks like one (an
        # annotation, strict mode's unknown device) may have no `.cpu()`.
        safe = bool(fixable) and all(ctx.fact(e).is_torch_tensor for e in fixable)
        fix = Fix(self.fix_title, self.fix_safety if safe else "unsafe", tuple(edits)) if edits else None
        func = _display(ctx, node.func, "the NumPy function")
        unknown = "" if hazard == "yes" else " (origin unknown)" if any(
            ctx.fact(e).kind == UNKNOWN for e in fixable) else " (device unknown)"
        if held:
            what = f"a list of tensors that may be on an accelerator{unknown}"
            use = _fill_advice(ctx, held[0], "t.cpu()")
            origin = ""
        else:
            what = _what(node, fixable, f"may be on an accelerator{unknown}")
            on_host = lambda expr, t: (f"({t})" if needs_parens(expr, t) else t) + ".cpu()"  # noqa: E731
            use = self._use_in_call(node, fixable, ctx, on_host, "t.cpu()")
            origin = ctx.origin(fixable[0], "device")
        ctx.report(self, node, fix, func=func, what=what, origin=origin, use=use)

    @staticmethod
    def _move(expr, ctx) -> Edit | None:
        """The edit that moves tensor expression `expr` to the host: `expr.cpu()`."""
        text = ctx.text(expr)
        if "#" in text:
            return None
        s, e = ctx.span(expr)
        if needs_parens(expr, text):
            return Edit(s, e, f"({text}).cpu()", expect=text)
        return Edit(e, e, ".cpu()")


class NumpyReductionOnTensor(_NumpyFunctionRule):
    code = "TNS105"
    name = "numpy-reduction-on-tensor"
    message = "{func}() on a tensor calls Tensor.{method}() with NumPy keywords and raises TypeError; use {use}"
    fix_title = "Pass `t.detach().cpu().numpy()` to the NumPy call"
    force_title = "Pass `t.numpy(force=True)` to the NumPy call"
    fix_safety = "safe"
    docs = """
## What it does
Checks for NumPy reductions given a single tensor (`np.mean(t)`, `np.max(t)`, ...), which
raise TypeError on every tensor.

The reductions are `np.mean`, `np.sum`, `np.prod`, `np.max`, `np.min`, `np.amax`, `np.amin`,
`np.std`, `np.var`, `np.any` and `np.all`, with or without `axis=`, where `t` is a torch tensor
by the flow of the code (made by a torch function, a tensor method, `.detach()`, ...), whatever
its grad state and device.  A tensor that may also require grad outside a no-grad region is TNS103's (same fix); a list of
tensors (`np.mean(losses)`) is converted, not dispatched, and is not reported here.  A tensor
known only by an annotation, and a model's output (which may be a tuple or a dict of
tensors), are reported only in strict mode; what a torch function or a method that only a
tensor has makes of a model's output (`torch.softmax(model(x), 1)`, `model(x).detach()`, not
`.mean()`, which a NumPy array a forward returns has too) is one tensor.

## Why is this bad?
Given anything but an ndarray, these NumPy functions call the object's own method with NumPy's
keywords (`t.mean(axis=None, dtype=None, out=None)`), and a tensor's methods do not take them:
`TypeError: mean() got an unexpected keyword argument 'axis'`, `max(): argument 'dim' must be
int, not NoneType`, `std() received an invalid combination of arguments`.  The call fails on
every tensor, on the CPU too.

## Example
```python
scores = torch.rand(8)
best = np.max(scores)
```

## Use instead
```python
best = np.max(scores.detach().cpu().numpy())  # or scores.max().item()
```

## Fix safety
Safe: the call raised for every torch tensor, and the fix converts the tensor to an array
(`t.detach().cpu().numpy()`, or `t.numpy(force=True)` with `--numpy-fix force`), which NumPy
reduces as it would any array.  Unsafe when the argument is a tensor only by an annotation or,
in strict mode, a model's output (a NumPy array or a tuple has no `.detach()`).

## References
- https://numpy.org/doc/stable/reference/generated/numpy.mean.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.mean.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
"""

    VALID = [
        Valid(dedent("""
            import torch
            import numpy as np

            x = torch.arange(6.0)
            a = x.mean()
            b = np.mean(x.numpy())
            c = np.max(x.tolist())
            d = np.sum([x, x])
            e = np.mean(np.ones(3))
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np

            def spread(values: list):
                return np.std(values)
            """)),
        # A module whose forward returns a NumPy array: `.mean(0)` of it is NumPy's.
        Valid(dedent("""
            import torch
            import numpy as np

            class Scorer(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = torch.nn.Linear(4, 3)

                def forward(self, x):
                    with torch.no_grad():
                        return self.fc(x).softmax(-1).numpy()

            model = Scorer()
            best = np.max(model(torch.randn(5, 4)).mean(0))
            """), runs=True),
    ]

    INVALID = [
        Invalid(
            dedent("""
                import torch
                import numpy as np

                scores = torch.rand(8)
                best = np.max(scores)
                """),
            line=5,
            col=7,
            fixed=dedent("""
                import torch
                import numpy as np

                scores = torch.rand(8)
                best = np.max(scores.detach().cpu().numpy())
                """),
            oracle=Oracle(raises=("TypeError", "max(): argument 'dim' must be int, not NoneType"),
                          check_fixed="best == scores.max().item()"),
        ),
        Invalid(
            # A torch function of a model's output is one tensor (the output itself may be a
            # tuple, which NumPy converts: strict mode alone reports `np.max(model(x))`).
            dedent("""
                import torch
                import numpy as np

                model = torch.nn.Linear(4, 3)
                with torch.no_grad():
                    probs = torch.softmax(model(torch.randn(5, 4)), dim=1)
                conf = np.max(probs, axis=1)
                """),
            line=7,
            col=7,
            fixed=dedent("""
                import torch
                import numpy as np

                model = torch.nn.Linear(4, 3)
                with torch.no_grad():
                    probs = torch.softmax(model(torch.randn(5, 4)), dim=1)
                conf = np.max(probs.detach().cpu().numpy(), axis=1)
                """),
            oracle=Oracle(raises=("TypeError", "unexpected keyword argument 'axis'"), check_fixed="conf.shape == (5,)"),
        ),
        Invalid(
            dedent("""
                import torch
                import numpy as np

                with torch.no_grad():
                    errors = (torch.randn(4, 3) - torch.randn(4, 3)).abs()
                    mae = np.mean(errors, axis=0)
                """),
            line=6,
            col=10,
            fixed=dedent("""
                import torch
                import numpy as np

                with torch.no_grad():
                    errors = (torch.randn(4, 3) - torch.randn(4, 3)).abs()
                    mae = np.mean(errors.detach().cpu().numpy(), axis=0)
                """),
            oracle=Oracle(raises=("TypeError", "mean() got an unexpected keyword argument 'axis'"),
                          check_fixed="mae.shape == (3,)"),
        ),
        Invalid(
            dedent("""
                import torch
                import numpy as np

                mask = torch.rand(5) > 0.5
                everything = np.all(mask)
                """),
            line=5,
            col=13,
            fixed=dedent("""
                import torch
                import numpy as np

                mask = torch.rand(5) > 0.5
                everything = np.all(mask.numpy(force=True))
                """),
            oracle=Oracle(raises=("TypeError", "all() received an invalid combination of arguments"),
                          check_fixed="everything == bool(mask.all())"),
            options={"numpy_fix": "force"},
        ),
    ]

    def visit_Call(self, node: ast.Call, ctx) -> None:
        short = self._numpy_function(node, ctx)
        if short not in _NUMPY_METHOD_DISPATCH or not node.args or isinstance(node.args[0], ast.Starred):
            return
        first = node.args[0]
        f = ctx.fact(first)
        if f.kind != TENSOR:
            return
        # A model's output may be a tuple or a dict of tensors (NumPy converts a tuple); a tensor
        # by its annotation may be anything.  Strict mode reports them.
        certain = f.by_flow and "module_output" not in f.tags
        if not certain and not ctx.options.strict:
            return
        force = _force(ctx)
        edits = self._convert(first, ctx, force)
        safety = self.fix_safety if certain else "unsafe"
        fix = Fix(self.force_title if force else self.fix_title, safety, tuple(edits)) if edits else None
        method = {"amax": "max", "amin": "min"}.get(short, short)
        ctx.report(self, node, fix, func=_display(ctx, node.func, "the NumPy function"), method=method,
                   use=self._use(node, [first], ctx, force))


# (_PLOTTERS: Matplotlib's plotting functions, torchapi.PLOTTERS: each raises on a tensor that
# requires grad, matplotlib 3.11, torch 2.13.)
# The keywords of those calls that are data too (`plt.scatter(x, y, c=t)`, `s=t`); the others are
# labels and styles.
_PLOT_DATA_KEYWORDS = frozenset(("c", "s"))


def _is_axes(recv, ctx) -> bool:
    """Whether `recv` is Matplotlib's Axes (`ax` of `fig, ax = plt.subplots()`, `plt.gca()`,
    `fig.add_subplot(111)`), also one of an array of them (`axes[0, 1]`)."""
    while type(recv) is ast.Subscript:
        recv = recv.value
    return MPL_AXES in ctx.fact(recv).tags


class PlotOfGradTensor(_Tns1Rule):
    code = "TNS106"
    name = "plot-of-grad-tensor"
    message = "{func}() on {what}{origin} raises {error} (Matplotlib converts it with NumPy); use {use}"
    fix_title = "Pass `t.detach().cpu().numpy()` to the plotting call"
    force_title = "Pass `t.numpy(force=True)` to the plotting call"
    fix_safety = "safe"
    prefilter = ("matplotlib",)
    # A helper of another module that plots what it is given (`def show(x, y): ax.plot(x, y)` in
    # viz.py): reported at the argument of its call, as TNS103's.  Only a module that imports
    # Matplotlib holds one.
    through_calls = True
    through_needles = ("matplotlib",)

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        return "(" in text and any(name + "(" in text for name in _PLOTTERS)

    @classmethod
    def through_admits(cls, segment: str) -> bool:
        return cls.might_match_scope(segment)

    docs = """
## What it does
Checks for Matplotlib plotting calls given a tensor that may require grad, outside a no-grad
region: `plt.plot(x, model(x))`, `ax.scatter(x, preds)`, `plt.imshow(fake[0, 0])`,
`plt.plot(losses)` with a list of losses.

The calls are pyplot's `plot`, `scatter`, `bar`, `barh`, `semilogx`, `semilogy`, `loglog`,
`step`, `stem`, `stairs`, `errorbar`, `fill`, `fill_between`, `fill_betweenx`, `stackplot`,
`hist`, `hist2d`, `hexbin`, `ecdf`, `boxplot`, `violinplot`, `pie`, `imshow`, `matshow`, `spy`,
`pcolor`, `pcolormesh`, `contour` and `contourf` (pyplot imported under any name, or the
function itself: `from matplotlib.pyplot import plot`), and the same methods of an Axes made by
`plt.subplots()` (also an element of the array it makes for several: `axes[0, 1].plot(...)`,
`fig, (a1, a2) = plt.subplots(1, 2)`, `for ax in axes`),
`plt.subplot()`, `plt.gca()`, `plt.axes()`, or a Figure's `add_subplot()`, `add_axes()`,
`gca()` and `subplots()`.  The data are the positional arguments and `c=` and `s=`.  Tensors of
unknown origin are reported only in strict mode.  A tensor that requires grad passed to a
function of another module of the project that plots it (`plot_predictions(x, model(x))`, with
`ax.plot(x, y)` inside) is reported at the argument, where the call is, without a fix.

## Why is this bad?
Matplotlib converts what it plots with NumPy, which calls `Tensor.__array__`, that is
`Tensor.numpy()`, and that refuses a tensor that requires grad: `RuntimeError: Can't call numpy()
on Tensor that requires grad. Use tensor.detach().numpy() instead.`  The plotting call raises
at once; plotting a model's predictions against its inputs after training is the classic way
to meet it.  On an accelerator the error is a TypeError first.

## Example
```python
import matplotlib.pyplot as plt

plt.plot(x, model(x))
```

## Use instead
```python
plt.plot(x, model(x).detach().cpu().numpy())
```
or compute the predictions inside `with torch.no_grad():`.

## Fix safety
Safe when the argument is a torch tensor by the flow of the code: Matplotlib plots the array
`t.detach().cpu().numpy()` as it plots the tensor where the call worked (a tensor that did not
require grad, on the CPU).  Unsafe where it is a tensor only by an annotation, or a model's
output (which may be a tuple or a dict, which have no `.detach()`).  No fix for a list of
tensors held in a variable: convert each where the list is filled (`losses.append(loss.item())`).

## References
- https://matplotlib.org/stable/api/_as_gen/matplotlib.pyplot.plot.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
"""

    VALID = [
        Valid(dedent("""
            import torch
            import torch.nn as nn
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            model = nn.Linear(1, 1)
            x = torch.linspace(0, 1, 10).unsqueeze(1)
            with torch.no_grad():
                y = model(x)
            plt.plot(x, y)
            plt.plot(x, model(x).detach().numpy())
            fig, ax = plt.subplots()
            ax.scatter(x.squeeze(1), torch.rand(10))
            losses = [model(x).pow(2).mean().item() for _ in range(3)]
            plt.plot(losses)
            plt.close("all")
            """), runs=True),
        Valid(dedent("""
            import torch
            import matplotlib.pyplot as plt

            def show(t):
                plt.plot(t)
            """)),
    ]
    INVALID = [
        Invalid(
            dedent("""
                import torch
                import torch.nn as nn
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt

                model = nn.Linear(1, 1)
                x = torch.linspace(0, 1, 10).unsqueeze(1)
                pred = model(x).squeeze(1)
                plt.plot(x.squeeze(1), pred)
                """),
            line=10,
            col=0,
            fixed=dedent("""
                import torch
                import torch.nn as nn
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt

                model = nn.Linear(1, 1)
                x = torch.linspace(0, 1, 10).unsqueeze(1)
                pred = model(x).squeeze(1)
                plt.plot(x.squeeze(1), pred.detach().cpu().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="len(plt.gca().lines) == 1"),
        ),
        Invalid(
            dedent("""
                import torch
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt

                w = torch.randn(4, 4, requires_grad=True)
                fig, axes = plt.subplots(1, 2)
                axes[0].imshow(w * 2)
                """),
            line=8,
            col=0,
            fixed=dedent("""
                import torch
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt

                w = torch.randn(4, 4, requires_grad=True)
                fig, axes = plt.subplots(1, 2)
                axes[0].imshow((w * 2).detach().cpu().numpy())
                """),
            oracle=Oracle(raises=_RAISES_GRAD, check_fixed="len(axes[0].images) == 1"),
        ),
        Invalid(
            dedent("""
                import torch
                import torch.nn as nn
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt

                model = nn.Linear(4, 1)
                losses = []
                for step in range(3):
                    losses.append(model(torch.randn(8, 4)).pow(2).mean())
                plt.plot(losses)
                """),
            line=11,
            col=0,
            oracle=Oracle(raises=_RAISES_GRAD),
        ),
    ]

    def visit_Call(self, node: ast.Call, ctx) -> None:
        if ctx.no_grad:
            return
        func = node.func
        t = type(func)
        name = func.attr if t is ast.Attribute else func.id if t is ast.Name else None
        if name not in _PLOTTERS:
            # `plot_predictions(x, out)`, where a function of another module of the project plots
            # `out`: reported at the argument, no fix (as TNS103's).
            _reported_at_call(self, node, ctx, "a plotting call")
            return
        if ctx.qualname(func) != "matplotlib.pyplot." + name and not (t is ast.Attribute and _is_axes(func.value, ctx)):
            return
        data = [*node.args, *(k.value for k in node.keywords if k.arg in _PLOT_DATA_KEYWORDS)]
        hazard, fixable, held, facts = _data_arguments(data, ctx, lambda f, _expr: _grad_level(f, ctx))
        if hazard is None:
            return
        force = _force(ctx)
        edits = _NumpyFunctionRule._converted(fixable, held, ctx, force)
        certain = all(f.is_torch_tensor for f in (ctx.fact(e) for e in fixable))
        fix = Fix(self.force_title if force else self.fix_title, self.fix_safety if certain else "unsafe",
                  tuple(edits)) if edits else None
        maybe = "" if hazard == "yes" else "may "
        unknown = "" if hazard == "yes" else " (origin unknown)"
        error = "TypeError or RuntimeError" if any(f.may_be_on_accelerator for f in facts) else "RuntimeError"
        if held:
            what = f"a list of tensors that {maybe}require grad{unknown}"
            use = _fill_advice(ctx, held[0], _element_advice(ctx, held[0]))
        else:
            what = _what(node, fixable, f"{'may require' if maybe else 'requires'} grad{unknown}")
            use = _NumpyFunctionRule._use(node, fixable, ctx, force)
        origin = ctx.origin(held[0] if held else fixable[0]) if held or fixable else ""
        ctx.report(self, node, fix, func=_display(ctx, func, "the plotting function"), what=what, origin=origin,
                   error=error, use=use)


def _reported_at_call(rule, node: ast.Call, ctx, converter: str) -> bool:
    """Report, at the argument, a call of a function of another module of the project that
    converts what it is given (`converter`: "a NumPy call", "a plotting call") where that
    requires grad (Context.call_sink); whether it did."""
    found = ctx.call_sink(rule, node) if ctx.sink_names else None
    if found is None:
        return False
    arg, callee, where, params = found
    what, use, several = _passed(ctx, arg, "a tensor", params)
    ctx.report(rule, arg, None, func=callee, what=f"{what}, which {'require' if several else 'requires'} grad",
               origin=f" ({converter} in it converts {'them' if several else 'it'}, {where})", error="RuntimeError",
               use=use)
    return True


def _grad_level(f, ctx) -> str | None:
    """"yes" when a tensor of fact `f` requires grad (TNS103's test, outside a call of another
    module's function), "may" for one of unknown grad in strict mode, else None."""
    if f is None:
        return None
    if f.may_require_grad:
        return "yes"
    if ctx.options.strict and f.kind == TENSOR and f.grad is Grad.UNKNOWN:
        return "may"
    return None


def _data_arguments(args: list, ctx, level_of) -> tuple:
    """`_NumpyFunctionRule._tensor_arguments` of the data arguments `args` of a call (a NumPy
    call's, a plotting call's)."""
    hazard = None
    fixable, held, facts = [], [], []
    for arg in args:
        starred = isinstance(arg, ast.Starred)
        value = arg.value if starred else arg
        f = ctx.fact(value)
        level = level_of(f, value)
        if level and not starred:
            hazard = _worse(hazard, level)
            fixable.append(arg)
            facts.append(f)
            continue
        if f.kind != SEQ or f.element is None:
            continue
        level = level_of(f.element, None)
        if not level:
            continue
        hazard = _worse(hazard, level)
        facts.append(f.element)
        if isinstance(value, (ast.List, ast.Tuple)) and not starred:
            for el in value.elts:
                if isinstance(el, ast.Starred):
                    held.append(el.value)
                elif level_of(ctx.fact(el), el):
                    fixable.append(el)
        else:
            held.append(value)
    return hazard, fixable, held, facts
