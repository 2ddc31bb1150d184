"""TNS2xx: tensor copy idioms."""

from __future__ import annotations

import ast

from ..analysis.facts import ANNOTATED
from ..fixes import attr_name_span, receiver_text
from ..intents import ReplaceExpression, SwapCalls
from .base import Fix, Invalid, Oracle, Rule, Valid, dedent
from ..source import LazyPattern, closing_bracket, header_parameters

# `torch.tensor(`, `tensor(`, `u.new_tensor(`; not `as_tensor(`, `is_tensor(`, `to_tensor(`.
_CLONE_DETACH = LazyPattern(r"\.clone\((?:[^()]|\([^()]*\))*\)\s*\.\s*detach\s*\(")
_NOT_TENSORS = ("other", "object", "module", "import", "seq", "loader", "device", "params", "named_params", "function",
                "class")
# Tensor libraries whose clone() / detach() look like torch's: TNS201 says nothing in their files.
_LOOK_ALIKE_LIBRARIES = frozenset({"paddle", "oneflow", "jittor", "mindspore", "megengine"})
# Libraries whose objects have clone() / detach() with other semantics (torch_geometric's
# `Data.detach()` detaches the object in place): only torch tensors are reported in their files.
_LOOK_ALIKE_OBJECTS = frozenset({"torch_geometric", "dgl"})


class CloneBeforeDetach(Rule):
    code = "TNS201"
    name = "clone-before-detach"
    message = "{expr}.clone().detach() {why}; use {expr}.detach().clone()"
    fix_title = "Swap to `.detach().clone()`"
    fix_safety = "safe"
    prefilter = (".clone(",)
    needs_torch = False  # an idiom: also where the tensors come from a project base class

    @classmethod
    def might_match(cls, text: str) -> bool:
        # (The pattern alone: it starts with `.clone(`, and a search for its literal start runs
        # faster than a substring test in front of it, which read the text once more.)
        return _CLONE_DETACH.search(text) is not None
    docs = """
## What it does
Checks for `x.clone().detach()` outside a no-grad region.

This is an idiom rule: it flags the spelling wherever it occurs, whatever `x` is and whether or
not the file imports torch itself (tensors often come from a project's own base classes), not
only where the analysis can show that `x` requires grad.  It stays silent inside
`torch.no_grad()` / `inference_mode()` regions, and in files that import another tensor library
whose `clone()` and `detach()` look the same but mean something else (Paddle, OneFlow, Jittor,
MindSpore, MegEngine; in files importing torch_geometric or DGL, where `Data.detach()` detaches
the object in place, only tensors known to be torch tensors are reported).

## Why is this bad?
Both orders give the same tensor: new storage, `requires_grad=False`, a leaf.  `detach().clone()`
is the order PyTorch recommends (its copy-construct warning says `sourceTensor.detach().clone()`).
When `x` requires grad, `clone()` first records a `CloneBackward0` node in the autograd graph
(and keeps `x`'s graph alive until the temporary dies), and `detach()` then throws it away;
detaching first copies without touching autograd: 3.9 us against 5.2 us (1.34x) for a small
tensor that requires grad on torch 2.13 (CPU); for large tensors the copy dominates.  The
message names that cost only where `x` may require grad.

## Example
```python
history_weight = model.layer.weight.clone().detach()
```

## Use instead
```python
history_weight = model.layer.weight.detach().clone()
```

## Fix safety
Safe when `x` is a torch tensor by the flow of the code: for every torch tensor both spellings
give equal values, dtype, device, memory format and `requires_grad`.  Arguments of
`clone(...)` (such as `memory_format=`) move with it.  Unsafe when `x` is of unknown origin or
a tensor only by an annotation: other objects with both methods may differ (torch_geometric's
`Data.detach()` changes the object in place, so the swapped order would detach the caller's
object).

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/generated/torch.clone.html
- https://pytorch.org/docs/stable/generated/torch.tensor.html (the copy-construct note)
"""
    VALID = [
        Valid(dedent("""
            import torch
            x = torch.ones(3, requires_grad=True)
            y = x.detach().clone()
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.ones(3, requires_grad=True)
            with torch.no_grad():
                y = x.clone().detach()
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.ones(3, requires_grad=True)
            y = x.clone()
            """), runs=True),
        # An instance of a class of the file with methods of the same names (a graph batch whose
        # detach() detaches in place: `batch.detach().clone()` would detach the live batch).
        Valid(dedent("""
            import torch

            class GraphBatch:
                def __init__(self, x):
                    self.x = x
                def clone(self):
                    return GraphBatch(self.x.clone())
                def detach(self):
                    self.x = self.x.detach()
                    return self

            batch = GraphBatch(torch.nn.Linear(3, 3)(torch.randn(2, 3)))
            snapshot = batch.clone().detach()
            batch.x.sum().backward()
            """), runs=True),
        # Another tensor library with methods of the same names.
        Valid(dedent("""
            import paddle

            def snapshot(t):
                return t.clone().detach()
            """)),
    ]
    INVALID = [
        Invalid(
            dedent("""
                import torch

                x = torch.ones(3, requires_grad=True)
                y = x.clone().detach()
                """),
            line=4,
            col=4,
            fixed=dedent("""
                import torch

                x = torch.ones(3, requires_grad=True)
                y = x.detach().clone()
                """),
            oracle=Oracle(grad_fn="CloneBackward0", same=("y",),
                          check_bad="not y.requires_grad and y.is_leaf",
                          check_fixed="not y.requires_grad and y.is_leaf and y.data_ptr() != x.data_ptr()"),
        ),
        Invalid(
            # The seed's weight-history snapshot.
            dedent("""
                import torch
                from torch import nn

                model = nn.Module()
                model.layer = nn.Linear(4, 4)
                history_weight = model.layer.weight.clone().detach()
                """),
            line=6,
            col=17,
            fixed=dedent("""
                import torch
                from torch import nn

                model = nn.Module()
                model.layer = nn.Linear(4, 4)
                history_weight = model.layer.weight.detach().clone()
                """),
            oracle=Oracle(grad_fn="CloneBackward0", same=("history_weight",),
                          check_fixed="history_weight.data_ptr() != model.layer.weight.data_ptr()"),
        ),
        Invalid(
            dedent("""
                import torch as th

                def snapshot(m: th.nn.Module):
                    w = th.nn.Parameter(th.ones(2, 2))
                    return w.clone(memory_format=th.contiguous_format).detach()  # keep

                out = snapshot(None)
                """),
            line=5,
            col=11,
            fixed=dedent("""
                import torch as th

                def snapshot(m: th.nn.Module):
                    w = th.nn.Parameter(th.ones(2, 2))
                    return w.detach().clone(memory_format=th.contiguous_format)  # keep

                out = snapshot(None)
                """),
            oracle=Oracle(grad_fn="CloneBackward0", same=("out",)),
        ),
        Invalid(
            # A tensor that does not require grad: the same result either way, and no graph node;
            # detach().clone() is the recommended spelling.
            dedent("""
                import torch
                x = torch.randn(3)
                y = x.clone().detach()
                """),
            line=3,
            col=4,
            fixed=dedent("""
                import torch
                x = torch.randn(3)
                y = x.detach().clone()
                """),
            oracle=Oracle(same=("y",), check_bad="y.grad_fn is None and not y.requires_grad",
                          check_fixed="y.grad_fn is None and y.data_ptr() != x.data_ptr()"),
        ),
        Invalid(
            # The seed's snapshot in a function taking the model: reported, the fix unsafe (the
            # parameter could be anything with these two methods).
            dedent("""
                import torch


                def remember(model):
                    return model.layer.weight.clone().detach()


                net = torch.nn.Module()
                net.layer = torch.nn.Linear(2, 2)
                w = remember(net)
                """),
            line=5,
            col=11,
            fixed=dedent("""
                import torch


                def remember(model):
                    return model.layer.weight.detach().clone()


                net = torch.nn.Module()
                net.layer = torch.nn.Linear(2, 2)
                w = remember(net)
                """),
            unsafe=True,
            oracle=Oracle(grad_fn="CloneBackward0", same=("w",)),
        ),
        Invalid(
            # A file that gets its tensors from a project base class and never imports torch.
            dedent("""
                from project.base import Trainer


                class MyTrainer(Trainer):
                    def snapshot(self):
                        return self.weights.clone().detach()
                """),
            line=6,
            col=15,
            fixed=dedent("""
                from project.base import Trainer


                class MyTrainer(Trainer):
                    def snapshot(self):
                        return self.weights.detach().clone()
                """),
            unsafe=True,
        ),
    ]

    def visit_Call(self, node: ast.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "detach" and not node.args and not node.keywords):
            return
        inner = func.value
        if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "clone"):
            return
        if ctx.no_grad:
            return
        base = inner.func.value
        fact = ctx.fact(base)
        if fact.kind in _NOT_TENSORS:
            return  # a value known not to be a tensor (a list, an array, a module)
        imported = ctx.imported_packages
        if not fact.is_torch_tensor and (imported & _LOOK_ALIKE_LIBRARIES or imported & _LOOK_ALIKE_OBJECTS):
            return  # another library's clone()/detach() (or torch_geometric's Data, detached in place)
        text = ctx.lines.text
        clone_start, _ = attr_name_span(ctx, inner.func)
        _, clone_end = ctx.span(inner)
        detach_start, _ = attr_name_span(ctx, func)
        _, detach_end = ctx.span(node)
        fix = None
        # The names are where the ast says only when spelled as written (not `ｃlone`).
        if text.startswith("clone", clone_start) and text.startswith("detach", detach_start):
            fix = Fix(self.fix_title, self.fix_safety if fact.is_torch_tensor else "unsafe", (),
                      SwapCalls(clone_start, clone_end, detach_start, detach_end))
        expr = ctx.short(base)
        why = ("records the copy in the autograd graph and throws it away" if fact.may_require_grad
               else "is the reverse of the order PyTorch recommends")
        ctx.report(self, node, fix, expr=receiver_text(ctx, base) if expr != "<expr>" else expr, why=why)


_NUMBER = LazyPattern(r"\s*-?\s*(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?j?\s*[,)]")


def _tensor_calls(text: str):
    r"""Where the arguments of each `tensor(` and `new_tensor(` call of `text` start: the `(`s that
    `(?<!\w)tensor\(|new_tensor\(` ends at, by a search of `tensor(` (the pattern, whose
    alternatives start with a look-behind and an `n`, is tried at every position: ten times the
    cost, half the scope tests' of a large model tree)."""
    at = text.find("tensor(")
    while at != -1:
        before = text[at - 1] if at else " "
        if not (before.isalnum() or before == "_") or at >= 4 and text.startswith("new_", at - 4):
            yield at + 7
        at = text.find("tensor(", at + 7)


def _literal_data(text: str, at: int) -> bool:
    """Whether the first argument of the call whose `(` ends at `at` is a number or a list
    display standing alone (followed by `,` or `)`): never a tensor.  A list that holds a string
    or a comment is not looked into (its brackets cannot be counted by eye)."""
    if _NUMBER.match(text, at):
        return True
    i, size = at, len(text)
    while i < size and text[i] in " \t\r\n":
        i += 1
    if i == size or text[i] != "[":
        return False
    i = closing_bracket(text, i)
    if i == -1:
        return False
    i += 1
    while i < size and text[i] in " \t\r\n":
        i += 1
    return i < size and text[i] in ",)"


# TNS202 across modules (through_plain_parameters): what copy-constructs a parameter as it is, `torch.tensor(mean)`, `tensor(v, dtype=...)`, `x.new_tensor(v)`.
_COPIED = LazyPattern(r"(?:(?<![\w.])(?:torch\.)?tensor|\.new_tensor)\(\s*(\w+)\s*[,)]")
_TYPE_TESTS = ("isinstance", "is_tensor", "hasattr", "type(", "try:")


class CopyConstructFromTensor(Rule):
    code = "TNS202"
    name = "copy-construct-from-tensor"
    message = "{call} copy-constructs from a tensor (UserWarning); use {replacement}"
    fix_title = "Replace with `.detach().clone()`"
    fix_safety = "safe"
    prefilter = ("tensor(",)
    # A function of another module of the project that copy-constructs what a call passes it
    # (`scale(MEAN)` with `def scale(v): return torch.tensor(v) * 2` in utils.py): reported at
    # the argument, where the call is.
    through_calls = True
    # (Asked apart, Through.plain_parameters: the other rules' searches of the modules a file
    # imports, and their walks, are not widened to those functions and their callers.)
    through_plain_needles = ("tensor(",)

    @classmethod
    def through_plain_parameters(cls, segment: str) -> frozenset:
        # The parameters the def copy-constructs as they are (`torch.tensor(mean)`,
        # `x.new_tensor(v, ...)`), where it tells nothing of their type (no `isinstance`,
        # `is_tensor`, `hasattr`, `type(` or `try:`: a guard the copy may be behind).
        if "tensor(" not in segment or any(w in segment for w in _TYPE_TESTS):
            return frozenset()
        params = header_parameters(segment)
        if params is None:
            return frozenset()
        return frozenset(m.group(1) for m in _COPIED.finditer(segment) if m.group(1) in params and m.group(1) != "self")

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        # A call whose data is a list display or a number (`torch.tensor([1, 2])`,
        # `x.new_tensor(0.5)`), the constructors' everyday use, is no copy of a tensor.
        if "tensor(" not in text:
            return False
        return any(not _literal_data(text, end) for end in _tensor_calls(text))
    docs = """
## What it does
Checks for `torch.tensor(t)` and `u.new_tensor(t)` where `t` is known to be a tensor (the
result of a torch call, a model, `.detach()`, `.clone()`, a parameter, ...).  Lists and numbers
are what these constructors are for and are not reported.  A `t` that is a tensor only by an
annotation (`def f(x: torch.Tensor)`, or what a call passes on from such a parameter) is
reported only in strict mode (`--strict`), the message saying so: callers hand such parameters
lists and tuples (a config's `latents_mean`), which copy nothing and warn of nothing.  What a
method or a torch function makes of it (`torch.tensor(x.detach())`, `torch.tensor(x.float())`)
is a tensor wherever the code runs, and is reported.

A tensor passed to a function of another module of the project, or to the constructor of one of
its classes, that copy-constructs it (`norm = Normalize(IMAGENET_MEAN)`, with
`self.mean = torch.tensor(mean)` in `transforms.py`) is reported at the argument, where the call
is: `IMAGENET_MEAN (Normalize() copy-constructs it, transforms.py:6)` (also `T.Normalize(...)` of
`import transforms as T`, a class or function a package's `__init__.py` re-exports, and a
constructor a class inherits from a class of its module), without a fix (the copy to rewrite is the other module's).  Only where the function copy-constructs the parameter as it
is and tests nothing of its type (no `isinstance`, `torch.is_tensor`, `hasattr`, `type(` or
`try:` in it), and not of a class that defines `__new__`.

## Why is this bad?
`torch.tensor` is meant for Python data.  Given a tensor it copies it, drops the autograd
graph, and warns on every call: `UserWarning: To copy construct from a tensor, it is
recommended to use sourceTensor.detach().clone() or
sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).`
The explicit form says what happens (a detached copy) and does not warn.

## Example
```python
y = torch.tensor(x, dtype=torch.float64, requires_grad=True)
z = base.new_tensor(x)
```

## Use instead
```python
y = x.detach().clone().to(dtype=torch.float64).requires_grad_(True)
z = x.detach().clone().to(base)
```

## Fix safety
Safe: the replacement gives an equal tensor with the same dtype, device and `requires_grad`
(`new_tensor` takes `u`'s dtype and device, hence `.to(u)`), and no warning.  No fix is
offered when the call has other keyword arguments (`pin_memory=`), when it holds a comment
the rewrite would lose (one outside `t` and the keyword values, which keep theirs), or when `u`
in `u.new_tensor(t)` is not a plain name or attribute (it would be evaluated twice).

Safe only when `t` is a tensor by the flow of the code (the result of a torch call, a model,
a parameter, an `isinstance(t, torch.Tensor)` guard).  When only an annotation says so
(`def f(x: torch.Tensor)`, which callers often call with lists, arrays or `torch.Size`), the
finding (strict mode) carries an unsafe fix: `x.detach().clone()` fails on those.  An `isinstance` /
`torch.is_tensor` guard overrides the annotation: `torch.tensor(x)` under
`if not torch.is_tensor(x):` or `if isinstance(x, torch.Size):` is not reported.

## References
- https://pytorch.org/docs/stable/generated/torch.tensor.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.new_tensor.html
"""
    VALID = [
        Valid(dedent("""
            import torch
            x = torch.tensor([1.0, 2.0])
            y = torch.tensor(3)
            """), runs=True),
        Valid(dedent("""
            import torch
            import numpy as np
            x = torch.tensor(np.ones(3))
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.ones(3)
            y = x.detach().clone()
            """), runs=True),
        Valid(dedent("""
            import torch
            x = torch.ones(3)
            y = torch.as_tensor(x)
            """), runs=True),
        Valid(dedent("""
            import torch

            def f(data):
                return torch.tensor(data)
            """)),
        # A tensor only by its annotation, which its caller does not keep to (a config's list).
        Valid(dedent("""
            import torch

            def normalize(latents: torch.Tensor, latents_mean: torch.Tensor) -> torch.Tensor:
                return latents - torch.tensor(latents_mean).view(1, -1, 1)

            out = normalize(torch.zeros(2, 3, 4), [0.1, 0.2, 0.3])
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            dedent("""
                import torch

                x = torch.ones(3, requires_grad=True)
                y = torch.tensor(x)
                """),
            line=4,
            col=4,
            fixed=dedent("""
                import torch

                x = torch.ones(3, requires_grad=True)
                y = x.detach().clone()
                """),
            oracle=Oracle(warns=("UserWarning", "To copy construct from a tensor"), same=("y",),
                          check_fixed="not y.requires_grad and y.dtype == x.dtype and y.data_ptr() != x.data_ptr()"),
        ),
        Invalid(
            dedent("""
                import torch
                from torch import tensor

                x = torch.randn(2, 3)
                y = tensor(x * 2, dtype=torch.float64, requires_grad=True)
                """),
            line=5,
            col=4,
            fixed=dedent("""
                import torch
                from torch import tensor

                x = torch.randn(2, 3)
                y = (x * 2).detach().clone().to(dtype=torch.float64).requires_grad_(True)
                """),
            oracle=Oracle(warns=("UserWarning", "To copy construct from a tensor"), same=("y",),
                          check_bad="y.requires_grad and y.is_leaf and y.dtype == torch.float64",
                          check_fixed="y.requires_grad and y.is_leaf and y.dtype == torch.float64"),
        ),
        Invalid(
            dedent("""
                import torch

                base = torch.zeros(2, dtype=torch.float64)
                x = torch.ones(2)
                z = base.new_tensor(x)
                """),
            line=5,
            col=4,
            fixed=dedent("""
                import torch

                base = torch.zeros(2, dtype=torch.float64)
                x = torch.ones(2)
                z = x.detach().clone().to(base)
                """),
            oracle=Oracle(warns=("UserWarning", "new_tensor(sourceTensor)"), same=("z",),
                          check_bad="z.dtype == torch.float64",
                          check_fixed="z.dtype == torch.float64 and z.data_ptr() != x.data_ptr()"),
        ),
    ]

    _ALLOWED = ("dtype", "device", "requires_grad")

    def visit_Call(self, node: ast.Call, ctx) -> None:
        func = node.func
        receiver = None
        if ctx.sink_names:
            self._through_call(node, ctx)
        if isinstance(func, ast.Attribute) and func.attr == "new_tensor":
            receiver = func.value
            rf = ctx.fact(receiver)
            if rf.kind in _NOT_TENSORS:
                return
        elif ctx.qualname(func) != "torch.tensor":
            return
        if not node.args or isinstance(node.args[0], ast.Starred):
            return
        data = node.args[0]
        data_fact = ctx.fact(data)
        if data_fact.kind != "tensor":
            return
        # A tensor only by an annotation (`def f(x: torch.Tensor)`, or what calls pass on from
        # one): callers hand such parameters lists and configs' tuples, which copy nothing and
        # warn of nothing (diffusers' `latents_mean`).  Strict mode reports it.  (What a method
        # or a torch function makes of it, `x.detach()`, `torch.softmax(x, -1)`, is a tensor
        # wherever the code runs.)
        annotated = not data_fact.by_flow and ANNOTATED in data_fact.tags and type(data) in (ast.Name, ast.Attribute)
        if annotated and not ctx.options.strict:
            return
        rebuilt = self._replacement(node, data, receiver, ctx)
        call = ctx.shortened(node)
        fix = None
        shown = f"{ctx.shortened(data, 30)}.detach().clone()"
        if rebuilt is not None:
            template, slots = rebuilt
            # Safe only when `data` is a torch tensor by the flow of the code: an annotation or a
            # name is no proof (callers pass lists, arrays and torch.Size to `x: Tensor`).
            # Nor is an attribute of the instance: its class's code says what it holds, a subclass
            # or another module may set it to a list (`self.weights = [1.0] * n`).
            certain = data_fact.is_torch_tensor and (receiver is None or ctx.fact(receiver).is_torch_tensor) \
                and not _reads_instance(data)
            start, end = ctx.span(node)
            fix = Fix(self.fix_title, self.fix_safety if certain else "unsafe", (),
                      ReplaceExpression(start, end, template, tuple((name, *ctx.span(n)) for name, n in slots.items())))
            replacement = self._preview(template, slots, ctx)
            if len(replacement) <= 60 and "\n" not in replacement:
                shown = replacement
        origin = ctx.origin(data, "kind")
        if annotated:
            origin = origin[:-1] + "; a tensor by its annotation)" if origin else " (a tensor by its annotation)"
        ctx.report(self, node, fix, call=call + origin, replacement=shown)

    def _through_call(self, node: ast.Call, ctx) -> None:
        """`scale(MEAN)`, where `scale` of another module of the project copy-constructs its
        parameter (`torch.tensor(v)`) and `MEAN` is a tensor: reported at the argument, no fix
        (the copy is the other module's to write as `v.detach().clone()`)."""
        found = ctx.call_sink(self, node)
        if found is not None:
            arg, callee, where, _params = found
            ctx.report(self, arg, None, call=f"{ctx.shortened(arg, 30)} ({callee}() copy-constructs it, {where})",
                       replacement=f"`.detach().clone()` at {where}")

    def _replacement(self, node: ast.Call, data, receiver, ctx) -> tuple | None:
        """(template, {slot name: the node it stands for}) of the rewrite, or None."""
        if len(node.args) > 1:
            return None
        kws = {}
        for kw in node.keywords:
            if kw.arg == "pin_memory" and _is_false(kw.value):
                continue
            if kw.arg not in self._ALLOWED:
                return None
            kws[kw.arg] = kw.value
        slots = {"data": data}
        if (isinstance(data, ast.Call) and isinstance(data.func, ast.Attribute) and data.func.attr == "detach"
                and not data.args and not data.keywords):
            template = "{data}.clone()"
        else:
            template = "{data}.detach().clone()"
        if receiver is not None:
            if not isinstance(receiver, (ast.Name, ast.Attribute)) or not all(
                isinstance(n, (ast.Name, ast.Attribute, ast.Load)) for n in ast.walk(receiver)
            ):
                return None  # it would be evaluated twice
            if "dtype" not in kws and "device" not in kws:
                template += ".to({u})"
            else:
                dtype = "{dtype}" if "dtype" in kws else "{u}.dtype"
                device = "{device}" if "device" in kws else "{u}.device"
                template += f".to(dtype={dtype}, device={device})"
            if "{u}" in template:
                slots["u"] = receiver
        elif "dtype" in kws or "device" in kws:
            template += ".to(" + ", ".join(f"{k}={{{k}}}" for k in ("dtype", "device") if k in kws) + ")"
        slots.update((k, kws[k]) for k in ("dtype", "device") if k in kws)
        rg = kws.get("requires_grad")
        if rg is not None and not _is_false(rg):
            template += ".requires_grad_({requires_grad})"
            slots["requires_grad"] = rg
        return template, slots

    @staticmethod
    def _preview(template: str, slots: dict, ctx) -> str:
        """The rewrite as the message shows it (the fix itself is written out by the engine)."""
        texts = {}
        for name, n in slots.items():
            texts[name] = receiver_text(ctx, n) if name == "data" else ctx.text(n)
            if isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom)) and name != "data":
                texts[name] = f"({texts[name]})"  # `device=(d := x)`: the parentheses are required
        return template.format(**texts)


def _reads_instance(node) -> bool:
    """Whether an expression reads an attribute of `self` (`self.weights`, `self.cfg.w`)."""
    return any(type(n) is ast.Attribute and type(n.value) is ast.Name and n.value.id == "self" for n in ast.walk(node))


def _is_false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False
