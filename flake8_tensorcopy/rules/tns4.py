"""TNS4xx: in-place writes that autograd forbids (leaves that require grad), or that it cannot
see (`.detach()` aliases, NumPy arrays and `.data` of tensors saved for a backward to come)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field

from ..analysis.facts import TENSOR, UNKNOWN, Device, Grad
from ..analysis.flow import dotted_name
from ..analysis.saved import saved_tensors, storage_key, strip_views
from ..fixes import attr_name_span
from .base import Edit, Fix, Invalid, Oracle, Rule, Valid

# Methods that end in `_` but are not writes autograd checks as such (they change metadata,
# flags or sharing, or fail with an error of their own).
_NOT_WRITES = frozenset(
    "requires_grad_ detach_ share_memory_ resize_ resize_as_ sparse_resize_ sparse_resize_and_clear_ "
    "apply_ map_ map2_ rename_ retain_grad_ record_stream_".split()
)
# In-place methods of NumPy arrays (writes into an array from `t.detach().numpy()`).
_ARRAY_WRITES = frozenset({"fill", "sort", "put", "itemset", "partition"})
# Scopes whose code runs later (a lambda) or in an order we do not model (comprehensions).
_DEFERRED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NESTED_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)

_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation"
_VIEW_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation"
_VERSION_ERROR = "one of the variables needed for gradient computation has been modified by an inplace operation"


# torch.nn.functional activations that write into their input with `inplace=True`.
_INPLACE_FUNCTIONAL = frozenset(
    "torch.nn.functional." + n
    for n in "relu relu6 elu selu celu leaky_relu hardtanh threshold silu hardswish hardsigmoid mish rrelu".split()
)


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in _NOT_WRITES


def _target_elements(target):
    if isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            yield from _target_elements(e)
    elif isinstance(target, ast.Starred):
        yield from _target_elements(target.value)
    else:
        yield target


def _expressions(stmt):
    """The expression nodes of a simple statement, in no particular order, without the
    bodies of lambdas and comprehensions."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _DEFERRED + _NESTED_DEFS):
                stack.append(child)


def _key_prefixes(key: str):
    parts = key.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _mentioned_keys(node) -> set:
    """Every dotted name (and each prefix of it) an expression reads."""
    keys = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            k = dotted_name(n)
            if k is not None:
                keys.update(_key_prefixes(k))
    return keys


# --------------------------------------------------------------------------- statement layout


def _parents(root) -> dict:
    """id(stmt) -> (body list, index, owner node, branch path) for every statement of a scope,
    not entering nested functions or classes.  The branch path lists (id(compound), kind,
    branch) for the `if`/`try`/`match` branches the statement sits in."""
    out = {}

    def walk(body, owner, path):
        for i, st in enumerate(body):
            out[id(st)] = (body, i, owner, path)
            if isinstance(st, _NESTED_DEFS):
                continue
            if isinstance(st, ast.If):
                walk(st.body, st, path + ((id(st), "if", 0),))
                walk(st.orelse, st, path + ((id(st), "if", 1),))
            elif isinstance(st, (ast.Try, getattr(ast, "TryStar", ast.Try))):
                walk(st.body, st, path + ((id(st), "try", "body"),))
                for j, h in enumerate(st.handlers):
                    walk(h.body, h, path + ((id(st), "try", f"h{j}"),))
                walk(st.orelse, st, path + ((id(st), "try", "else"),))
                walk(st.finalbody, st, path + ((id(st), "try", "finally"),))
            elif type(st).__name__ == "Match":
                for j, case in enumerate(st.cases):
                    walk(case.body, case, path + ((id(st), "match", j),))
            else:
                for name in ("body", "orelse", "finalbody"):
                    sub = getattr(st, name, None)
                    if isinstance(sub, list):
                        walk(sub, st, path)

    walk(getattr(root, "body", []), root, ())
    return out


_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def _expected_errors(root) -> set:
    """ids of the statements inside `with pytest.raises(...)` / `with self.assertRaises(...)`
    blocks: tests that provoke the error on purpose."""
    out: set = set()
    stack = [(st, False) for st in getattr(root, "body", [])]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, _NESTED_DEFS):
            continue
        if inside and isinstance(node, ast.stmt):
            out.add(id(node))
        if isinstance(node, (ast.With, ast.AsyncWith)) and not inside:
            for item in node.items:
                for n in ast.walk(item.context_expr):
                    name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
                    if name in _RAISES:
                        inside = True
            stack.extend((c, inside) for c in node.body)
            continue
        stack.extend((c, inside) for c in ast.iter_child_nodes(node) if isinstance(c, (ast.stmt, ast.excepthandler))
                     or type(c).__name__ == "match_case")
    return out


def _compatible(p1: tuple, p2: tuple) -> bool:
    """Whether two statements can both run in one pass through the scope."""
    d2 = {i: (kind, b) for i, kind, b in p2}
    for i, kind, b in p1:
        other = d2.get(i)
        if other is None or other[1] == b:
            continue
        if kind in ("if", "match"):
            return False
        pair = {b, other[1]}
        handlers = [str(x).startswith("h") for x in pair]
        if all(handlers) or ("else" in pair and any(handlers)):
            return False
    return True


# --------------------------------------------------------------------------- TNS401


# Text of an in-place write: `x[i] = v`, augmented assignment, `*_(` methods, `inplace=True`.
_INPLACE_TEXT = re.compile(r"\]\s*=[^=]|[-+*/%@&|^]=|//=|\*\*=|>>=|<<=|[^_\W]_\(|inplace=True")


class InplaceOnLeaf(Rule):
    code = "TNS401"
    name = "inplace-on-grad-leaf"
    message = (
        "in-place write to leaf tensor {leaf} that requires grad raises RuntimeError; wrap it in "
        "`with {no_grad}:` or, if the write should be differentiable, use {leaf}.clone() and write into the copy"
    )
    fix_title = "Wrap in `with torch.no_grad():`"
    fix_safety = "unsafe"
    prefilter = ("requires_grad", "Parameter", "parameters(", "weight", "bias")

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        # The write is in this function; the leaf is made here (requires_grad, Parameter, a
        # parameters() loop) or is an attribute written in place (`.weight`, `self.scale`).
        if any(w in text for w in ("requires_grad", "Parameter", "parameters(")):
            return _INPLACE_TEXT.search(text) is not None
        if not ("weight" in text or "bias" in text or "param" in text or "self." in text):
            return False
        for m in _INPLACE_TEXT.finditer(text):
            # What is written to: the expression just before the operator (`w[0] =`,
            # `layer.weight -=`, `self.scale.mul_(`), not whatever else the line mentions.
            start = text.rfind("\n", 0, m.start()) + 1
            target = text[start : m.start() + 1]
            if ".data" in target or ".grad" in target:
                continue
            if "weight" in target or "bias" in target or "param" in target or "self." in target:
                return True
        return False
    docs = """
## What it does
Checks for in-place writes to a leaf tensor that requires grad, outside a no-grad region.

Writes are subscript assignment (`w[0] = 1`, `w[:, i] -= d`), augmented assignment (`w += 1`,
`p -= lr * p.grad`) and in-place methods (`add_`, `mul_`, `zero_`, `fill_`, `copy_`,
`clamp_`, `masked_fill_`, `index_add_`, `scatter_`, `uniform_`, `normal_`, every other `*_`
method except `requires_grad_`), on the tensor itself or on a view of it (`w[1:3].fill_(0)`,
`w.T.zero_()`), and in-place functions (`torch.relu_(w)`, `F.relu(w, inplace=True)`).
Leaves that require grad are tensors created with `requires_grad=True`, `.requires_grad_()`
results, `nn.Parameter(...)`, module parameters (`model.fc.weight`,
`self.weight` of an `nn.Module`) and loop variables over `model.parameters()` or
`model.named_parameters()`.

Not reported inside `torch.no_grad()`, `torch.inference_mode()`, `set_grad_enabled(False)`, a
function decorated with one of them, or a function this file only calls from such a region;
for `nn.init.*_` calls (they switch grad off themselves); for `.data` and `.grad`; for
buffers; inside `pytest.raises` / `assertRaises` blocks; or for tensors that do not require
grad or are not leaves (`y = x.clone(); y[0] = 2`, `x = x + 1; x[0] = 2`).

## Why is this bad?
A leaf's `.grad` is the gradient with respect to the values the user created; a write that
autograd recorded would replace those values by the result of an operation, so PyTorch refuses
it.  The write raises `RuntimeError: a leaf Variable that requires grad is being used in an
in-place operation.` (through a view: `a view of a leaf Variable that requires grad is being
used in an in-place operation.`).  The typical cases are a manual SGD step or weight surgery on
a loaded model written without `torch.no_grad()`; `model.eval()` does not turn grad off.

## Example
```python
x = torch.ones(5, requires_grad=True)
x[0] = 2

for p in model.parameters():
    p -= lr * p.grad
```

## Use instead
```python
with torch.no_grad():
    x[0] = 2

for p in model.parameters():
    with torch.no_grad():
        p -= lr * p.grad
```
If the write is meant to be part of the computation (differentiable), write into a copy:
`y = x.clone(); y[0] = 2` (gradient flows to `x` except at the overwritten element).

## Fix safety
Unsafe: the tool cannot know whether the write was meant to be an initialisation or update
(then `torch.no_grad()` is right) or part of the computation (then the right change is a
`clone()` before the write).  The fix wraps the statement, or a run of consecutive such
statements, in `with torch.no_grad():`, spelled with the file's own import (`th.no_grad()`
after `import torch as th`, `no_grad()` after `from torch import no_grad`), keeping the file's
line endings and indentation and leaving lines inside multi-line strings untouched.  No fix is
offered when neither `torch` nor `no_grad` is imported, when the statement shares its line
with another statement (`a = 1; w[0] = 2`, `for p in ps: p.zero_()`), for in-place
activations (`F.relu(w, inplace=True)` is part of the computation: use `inplace=False`), or when
the statement contains `yield`, `yield from` or `await` (grad mode would stay off in the caller
while the generator or coroutine is suspended).

## References
- https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd
- https://pytorch.org/docs/stable/generated/torch.no_grad.html
- https://pytorch.org/tutorials/beginner/examples_autograd/polynomial_autograd.html
  (manual updates under `torch.no_grad()`)
"""
    VALID = [
        Valid("import torch\nx = torch.ones(5, requires_grad=True)\nwith torch.no_grad():\n    x[0] = 2\n", runs=True),
        Valid(
            "import torch\nfrom torch import nn\n\n\n@torch.no_grad()\ndef shrink(m):\n    m.weight.mul_(0.5)\n\n\n"
            "lin = nn.Linear(2, 2)\nshrink(lin)\nwith torch.inference_mode():\n    lin.bias.zero_()\n",
            runs=True,
        ),
        Valid("import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\nnn.init.zeros_(lin.weight)\n"
              "torch.nn.init.normal_(lin.bias, std=0.02)\n", runs=True),
        Valid("import torch\nx = torch.ones(5, requires_grad=True)\ny = x.clone()\ny[0] = 2\n"
              "y.sum().backward()\n", runs=True),
        Valid("import torch\nx = torch.ones(5, requires_grad=True)\nx = x + 1\nx[0] = 2\n", runs=True),
        Valid("import torch\nt = torch.ones(3)\nt[0] = 2\nt += 1\nt.clamp_(0, 2)\n", runs=True),
        Valid(
            # The manual-SGD idiom of the PyTorch tutorials.
            "import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 1)\n"
            "x, y = torch.randn(8, 3), torch.randn(8, 1)\n"
            "loss = ((model(x) - y) ** 2).mean()\nloss.backward()\nwith torch.no_grad():\n"
            "    for p in model.parameters():\n        p -= 0.1 * p.grad\n        p.grad = None\n",
            runs=True,
        ),
        Valid("import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\nlin.weight.data.zero_()\n"
              "lin.weight.data[0, 0] = 1.0\n"
              "lin.weight.grad = torch.ones(2, 2)\nlin.weight.grad.zero_()\nlin.weight.requires_grad_(False)\n"
              "", runs=True),
        Valid("import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\nlin.weight.requires_grad = False\n"
              "lin.weight.mul_(2)\n",
              runs=True),
        Valid("import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\ntorch.set_grad_enabled(False)\n"
              "for p in model.parameters():\n    p.add_(1)\ntorch.set_grad_enabled(True)\n", runs=True),
        Valid("import torch\nimport torch.nn.functional as F\nfrom torch.nn.utils import clip_grad_norm_\n"
              "x = torch.randn(4, requires_grad=True)\ny = F.relu(x)\ny.sum().backward()\nclip_grad_norm_(x, 1.0)\n"
              "z = F.relu(x * 1, inplace=True)\nt = torch.relu_(x.clone())\n", runs=True),
        Valid("import torch\n\ndef make(flag):\n    w = torch.zeros(3, requires_grad=flag)\n    w[0] = 1\n"
              "    return w\n"),
        Valid("import torch\nx = torch.ones(5, requires_grad=True)\nidx = torch.tensor([0, 1])\nx[idx].sum()\n"
              "d = x.detach()\nd.zero_()\n", runs=True),
    ]
    INVALID = [
        Invalid(
            # The seed's example.
            "import torch\n\nx = torch.ones(5, requires_grad=True)\nx[0] = 2\n",
            line=4,
            col=0,
            fixed="import torch\n\nx = torch.ones(5, requires_grad=True)\nwith torch.no_grad():\n    x[0] = 2\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VIEW_ERROR),
                          check_fixed="x.tolist() == [2.0, 1.0, 1.0, 1.0, 1.0] and x.is_leaf and x.requires_grad"),
        ),
        Invalid(
            # Manual SGD without torch.no_grad().
            "import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 1)\n"
            "x, y = torch.randn(8, 3), torch.randn(8, 1)\n"
            "loss = ((model(x) - y) ** 2).mean()\nloss.backward()\nlr = 0.1\nfor p in model.parameters():\n"
            "    p -= lr * p.grad\n",
            line=10,
            col=4,
            fixed="import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 1)\n"
                  "x, y = torch.randn(8, 3), torch.randn(8, 1)\n"
            "loss = ((model(x) - y) ** 2).mean()\nloss.backward()\nlr = 0.1\nfor p in model.parameters():\n"
            "    with torch.no_grad():\n        p -= lr * p.grad\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR),
                          check_fixed="all(q.is_leaf and q.requires_grad for q in model.parameters())"),
        ),
        Invalid(
            # Weight surgery on a loaded model: eval() does not turn grad off.
            "import torch\nfrom torch import nn\n\n\nclass Output(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.dense = nn.Linear(4, 4)\n\n\nclass Layer(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.output = Output()\n\n\n"
            "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layer = nn.ModuleList([Layer() for _ in range(4)])\n\n\nclass Model(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.encoder = Encoder()\n\n\n"
            "model = Model()\nmodel.load_state_dict(Model().state_dict())\nmodel.eval()\ni = 2\n"
            "model.encoder.layer[3].output.dense.weight[:, i] = 0.0  # prune input feature i\n",
            line=33,
            col=0,
            fixed="import torch\nfrom torch import nn\n\n\nclass Output(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.dense = nn.Linear(4, 4)\n\n\nclass Layer(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.output = Output()\n\n\n"
            "class Encoder(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layer = nn.ModuleList([Layer() for _ in range(4)])\n\n\nclass Model(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.encoder = Encoder()\n\n\n"
            "model = Model()\nmodel.load_state_dict(Model().state_dict())\nmodel.eval()\ni = 2\n"
            "with torch.no_grad():\n"
            "    model.encoder.layer[3].output.dense.weight[:, i] = 0.0  # prune input feature i\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VIEW_ERROR),
                          check_fixed="model.encoder.layer[3].output.dense.weight[:, 2].abs().sum().item() == 0"),
        ),
        Invalid(
            # The file's own alias, and a run of consecutive writes wrapped once.
            "import torch as th\n\n\ndef make_bias(n):\n    b = th.zeros(n).requires_grad_()\n    b.fill_(0.1)\n"
            "    b[0] = 1.0  # first entry\n    return b\n\n\nbias = make_bias(3)\n",
            line=6,
            col=4,
            fixed="import torch as th\n\n\ndef make_bias(n):\n    b = th.zeros(n).requires_grad_()\n"
                  "    with th.no_grad():\n"
            "        b.fill_(0.1)\n        b[0] = 1.0  # first entry\n    return b\n\n\nbias = make_bias(3)\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR),
                          check_fixed="bias.is_leaf and bias.requires_grad and bias[0].item() == 1.0"),
        ),
        Invalid(
            "from torch import nn, no_grad\n\nlin = nn.Linear(2, 2)\nlin.bias.zero_()\n",
            line=4,
            col=0,
            fixed="from torch import nn, no_grad\n\nlin = nn.Linear(2, 2)\nwith no_grad():\n    lin.bias.zero_()\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR), check_fixed="lin.bias.abs().sum().item() == 0"),
        ),
        Invalid(
            # nn.Parameter in a module's own method; the loop is a one-liner: reported, not fixed.
            "import torch\nfrom torch import nn\n\n\nclass Scale(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.gain = nn.Parameter(torch.ones(3))\n\n"
            "    def reset(self):\n        for i in range(3): self.gain[i] = 1.0 / (i + 1)\n\n\nScale().reset()\n",
            line=11,
            col=27,
            oracle=Oracle(raises=("RuntimeError", _VIEW_ERROR)),
        ),
        Invalid(
            # An in-place activation on a leaf: reported, but the activation is part of the
            # computation, so no `no_grad` wrap is offered (`inplace=False` is the usual change).
            "import torch\nimport torch.nn.functional as F\n\nx = torch.randn(4, requires_grad=True)\n"
            "y = F.relu(x, inplace=True)\n",
            line=5,
            col=4,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR)),
        ),
        Invalid(
            # torch itself is not bound as a name: no fix.
            "import torch.nn as nn\n\nlin = nn.Linear(2, 2)\nlin.weight.mul_(2)\n",
            line=4,
            col=0,
            oracle=Oracle(raises=("RuntimeError", _LEAF_ERROR)),
        ),
    ]

    def __init__(self, options) -> None:
        super().__init__(options)
        self._frames: list[list] = []
        self._spellings = None
        self._file = None  # (string-interior lines, file indent unit), computed on first need

    # ------------------------------------------------------------------ detection

    def enter_scope(self, scope, ctx) -> None:
        self._frames.append([])

    def leave_scope(self, scope, ctx) -> None:
        findings = self._frames.pop()
        if findings:
            self._report(scope, findings, ctx)

    def visit_Assign(self, node: ast.Assign, ctx) -> None:
        for target in node.targets:
            for el in _target_elements(target):
                if isinstance(el, ast.Subscript):
                    self._check(el, strip_views(el.value, ctx), ctx)

    def visit_AugAssign(self, node: ast.AugAssign, ctx) -> None:
        t = node.target
        if isinstance(t, ast.Subscript):
            self._check(t, strip_views(t.value, ctx), ctx)
        elif isinstance(t, (ast.Name, ast.Attribute)):
            self._check(t, t, ctx)

    def visit_Call(self, node: ast.Call, ctx) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and is_inplace_method(func.attr):
            if ctx.fact(func.value).kind == TENSOR:
                self._check(node, strip_views(func.value, ctx), ctx)
                return
        if not node.args or not isinstance(func, (ast.Name, ast.Attribute)):
            return
        q = ctx.qualname(func)
        if q is None:
            return
        name = q.rsplit(".", 1)[-1]
        if (q == "torch." + name or q == "torch.nn.functional." + name) and is_inplace_method(name) or (
            q in _INPLACE_FUNCTIONAL and any(k.arg == "inplace" and _is_true(k.value) for k in node.keywords)
        ):
            # torch.relu_(w), F.relu(w, inplace=True): a write, but rarely meant to be undone by
            # no_grad (the activation is part of the computation): reported without the wrap.
            self._check(node, strip_views(node.args[0], ctx), ctx, wrap=False)

    def _check(self, node, base, ctx, wrap: bool = True) -> None:
        if ctx.no_grad or not self._frames:
            return
        f = ctx.fact(base)
        if not (f.kind == TENSOR and f.leaf and f.grad is Grad.YES):
            return
        stmt = ctx.stmt
        if stmt is not None and _inside_deferred(stmt, node):
            return
        self._frames[-1].append((node, stmt, ctx.short(base, 60), self._no_grad_spelling(ctx) if wrap else None))

    def _no_grad_spelling(self, ctx) -> str | None:
        """How this file spells `torch.no_grad()` at this point, or None."""
        if self._spellings is None:
            cands = []
            for n in ast.walk(ctx.analyzer.tree):
                if isinstance(n, ast.Import):
                    for a in n.names:
                        if a.asname is None and (a.name == "torch" or a.name.startswith("torch.")):
                            cands.append((0, "torch", "torch", "torch.no_grad()"))
                        elif a.asname and a.name == "torch":
                            cands.append((1, a.asname, "torch", f"{a.asname}.no_grad()"))
                        elif a.asname and a.name == "torch.autograd":
                            cands.append((3, a.asname, "torch.autograd", f"{a.asname}.no_grad()"))
                elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module in ("torch", "torch.autograd"):
                    for a in n.names:
                        local = a.asname or a.name
                        if a.name == "no_grad":
                            cands.append((2, local, f"{n.module}.no_grad", f"{local}()"))
                        elif a.name == "autograd" and n.module == "torch":
                            cands.append((3, local, "torch.autograd", f"{local}.no_grad()"))
            self._spellings = sorted(set(cands))
        for _, name, qual, spelling in self._spellings:
            if ctx.qualname(ast.Name(id=name, ctx=ast.Load())) == qual:
                return spelling
        return None

    # ------------------------------------------------------------------ reporting and fixing

    def _report(self, scope, findings, ctx) -> None:
        expected = _expected_errors(scope.node)
        findings = [f for f in findings if f[1] is None or id(f[1]) not in expected]
        layout = _parents(scope.node)
        # Statements that can be wrapped, grouped by the block they are in.
        wrappable: dict[int, tuple] = {}
        for node, stmt, _leaf, spelling in findings:
            if stmt is None or not isinstance(stmt, _SIMPLE) or spelling is None or id(stmt) not in layout:
                continue
            if not _contains(stmt, node) or not self._own_lines(stmt, ctx) or _suspends(stmt):
                continue
            body, index, owner, _ = layout[id(stmt)]
            wrappable[id(stmt)] = (body, index, owner, spelling)
        fixes: dict[int, Fix | None] = {}
        by_block: dict[int, list] = {}
        for sid, (body, index, owner, spelling) in wrappable.items():
            by_block.setdefault(id(body), []).append((index, body, owner, spelling))
        for items in by_block.values():
            items.sort(key=lambda t: t[0])
            run = [items[0]]
            for item in items[1:]:
                if item[0] == run[-1][0] + 1 and item[3] == run[-1][3]:
                    run.append(item)
                else:
                    self._fix_run(run, fixes, ctx)
                    run = [item]
            self._fix_run(run, fixes, ctx)
        for node, stmt, leaf, spelling in findings:
            fix = fixes.get(id(stmt)) if stmt is not None and spelling is not None else None
            ctx.report(self, node, fix, leaf=leaf, no_grad=spelling or "torch.no_grad()")

    def _fix_run(self, run, fixes, ctx) -> None:
        _, body, owner, spelling = run[0]
        stmts = [body[i] for i, *_ in run]
        fix = None
        try:
            fix = self._wrap(stmts, owner, spelling, ctx)
        except (tokenize.TokenError, SyntaxError, ValueError, IndexError):
            fix = None
        for st in stmts:
            fixes[id(st)] = fix

    def _own_lines(self, stmt, ctx) -> bool:
        """The statement starts its first line (after indentation) and ends its last one (before
        an optional comment), and no backslash joins it to the line before."""
        lines = ctx.lines
        first = lines.line(stmt.lineno)
        if first[: lines.char_col(stmt.lineno, stmt.col_offset)].strip():
            return False
        last = lines.line(stmt.end_lineno)
        rest = last[lines.char_col(stmt.end_lineno, stmt.end_col_offset):].strip()
        if rest and not rest.startswith("#"):
            return False
        if stmt.lineno > 1 and lines.line(stmt.lineno - 1).endswith("\\"):
            return False
        return True

    def _wrap(self, stmts, owner, spelling, ctx) -> Fix | None:
        lines = ctx.lines
        text = lines.text
        first, last = stmts[0].lineno, stmts[-1].end_lineno
        line1 = lines.line(first)
        indent = line1[: lines.char_col(first, stmts[0].col_offset)]
        in_string, file_unit = self._file_layout(ctx)
        unit = self._indent_unit(indent, owner, file_unit, ctx)
        start = lines.starts[first - 1]
        end = lines.starts[last - 1] + len(lines.line(last))
        if first < len(lines.starts):
            newline = text[start + len(line1) : lines.starts[first]]
        else:
            newline = "\r\n" if "\r\n" in text else "\n"
        parts = [f"{indent}with {spelling}:{newline}"]
        for n in range(first, last + 1):
            content = lines.line(n)
            if n not in in_string and content.strip():
                # A form feed in indentation resets the column: one kept after the new unit
                # would dedent the line out of the `with` block.
                lead = content[: len(content) - len(content.lstrip(" \t\f"))]
                if "\f" in lead:
                    content = lead.replace("\f", "") + content[len(lead):]
                content = unit.replace("\f", "") + content
            parts.append(content)
            if n < last:
                parts.append(text[lines.starts[n - 1] + len(lines.line(n)) : lines.starts[n]])
        new = "".join(parts)
        return Fix(self.fix_title, self.fix_safety, (Edit(start, end, new, expect=text[start:end]),))

    def _file_layout(self, ctx):
        """Lines that start inside a multi-line string (never re-indented), and the first
        indentation unit the file uses."""
        if self._file is None:
            text = ctx.lines.text
            in_string: set = set()
            open_fstrings = []
            for tok in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
                name = tokenize.tok_name[tok.type]
                if name == "STRING" and tok.end[0] > tok.start[0]:
                    in_string.update(range(tok.start[0] + 1, tok.end[0] + 1))
                elif name.endswith("STRING_START"):  # f-strings (3.12+), t-strings (3.14+)
                    open_fstrings.append(tok.start[0])
                elif name.endswith("STRING_END") and open_fstrings:
                    begin = open_fstrings.pop()
                    if not open_fstrings and tok.end[0] > begin:
                        in_string.update(range(begin + 1, tok.end[0] + 1))
            unit = None
            best = None
            for node in ast.walk(ctx.analyzer.tree):
                body = getattr(node, "body", None)
                if not isinstance(body, list) or not body or not isinstance(node, ast.stmt):
                    continue
                inner = body[0]
                if inner.lineno == node.lineno or (best is not None and node.lineno >= best):
                    continue
                outer = _indentation(ctx.lines.line(node.lineno))
                sub = _indentation(ctx.lines.line(inner.lineno))
                if sub.startswith(outer) and len(sub) > len(outer):
                    best, unit = node.lineno, sub[len(outer):]
            self._file = (in_string, unit)
        return self._file

    def _indent_unit(self, indent: str, owner, file_unit, ctx) -> str:
        if "\t" in indent:
            return "\t"
        if isinstance(owner, (ast.stmt, ast.excepthandler)) or type(owner).__name__ == "match_case":
            line = getattr(owner, "lineno", None)
            if line is None:  # match_case: its pattern carries the position
                line = owner.pattern.lineno
            outer = _indentation(ctx.lines.line(line))
            if indent.startswith(outer) and len(indent) > len(outer):
                return indent[len(outer):]
        if file_unit and not file_unit.strip() and ("\t" not in file_unit or not indent):
            return file_unit
        return "    "


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _suspends(stmt) -> bool:
    """Whether a statement can suspend its generator or coroutine (`yield`, `await`): wrapped in
    `with torch.no_grad():`, grad mode would stay off in the caller while it is suspended."""
    return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(stmt))


def _contains(outer, inner) -> bool:
    return any(n is inner for n in ast.walk(outer))


def _inside_deferred(stmt, node) -> bool:
    """Whether `node` sits in a lambda (runs later, maybe under no_grad) inside `stmt`."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Lambda) and _contains(n.body, node):
            return True
    return False


# --------------------------------------------------------------------------- TNS402 / TNS403


@dataclass
class _Alias:
    """A name whose storage is `base`'s, made by `via` ("detach", "numpy" or "data")."""

    base: str
    version: tuple
    via: str
    anchor: ast.AST  # the `x.detach()` call (or `x.data` attribute) that made it
    named: bool = False  # reached through a name bound to it


@dataclass
class _Frame:
    seq: int = 0
    versions: dict = field(default_factory=dict)
    aliases: dict = field(default_factory=dict)
    taint: dict = field(default_factory=dict)  # key -> [(branch path, save ids)]
    saves: list = field(default_factory=list)  # (seq, key, version, id, stmt)
    writes: list = field(default_factory=list)  # (seq, node, alias, stmt, shown)
    backwards: list = field(default_factory=list)  # (seq, deps, stmt)
    next_id: int = 0
    layout: dict = field(default_factory=dict)
    active: bool = True

    def path(self, stmt) -> tuple:
        entry = self.layout.get(id(stmt))
        return entry[3] if entry else ()

    def depends(self, key: str) -> set:
        """The saves the current value of `key` may depend on."""
        out = set()
        for _, ids in self.taint.get(key, ()):
            out |= ids
        return out

    def assign(self, key: str, ids: set, stmt, replace: bool) -> None:
        """Record that `key` now depends on `ids`.  An assignment replaces what an earlier one on
        the same or a more deeply branched path recorded; one in a branch keeps the others."""
        p = self.path(stmt)
        entries = self.taint.get(key, [])
        if replace:
            entries = [(ep, e) for ep, e in entries if ep[: len(p)] != p]
        if ids:
            entries = entries + [(p, set(ids))]
        self.taint[key] = entries


_BACKWARD_CALLS = frozenset({"backward", "manual_backward", "grad"})


def _calls_backward(root, text: str | None = None) -> bool:
    """Whether the scope's own code (not nested functions or classes) calls something named
    `backward`, `manual_backward` or `grad` (`torch.autograd.grad`)."""
    if text is not None and "backward" not in text and "grad(" not in text:
        return False
    stack = list(getattr(root, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED_DEFS):
            continue
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            if name in _BACKWARD_CALLS:
                return True
        stack.extend(ast.iter_child_nodes(node))
    return False


class _SavedWriteRule(Rule):
    """Shared tracking: tensors autograd saved, aliases of their storage, writes through the
    aliases, and backward calls that depend on the saved tensors, per scope in execution order."""

    vias: tuple = ()

    @classmethod
    def might_match_scope(cls, text: str) -> bool:
        # The saved use, the write and the backward must all be in the reporting function.
        return cls.might_match(text) and ("backward" in text or "grad(" in text)

    def __init__(self, options) -> None:
        super().__init__(options)
        self._frames: list[_Frame] = []

    def enter_scope(self, scope, ctx) -> None:
        # Without a backward call in the scope nothing here can be reported: skip the tracking.
        active = _calls_backward(scope.node, ctx.analyzer._source_of(scope.node)
                                 if hasattr(scope.node, "end_lineno") else ctx.lines.text)
        self._frames.append(_Frame(layout=_parents(scope.node) if active else {}, active=active))

    def leave_scope(self, scope, ctx) -> None:
        frame = self._frames.pop()
        if not frame.writes or not frame.saves or not frame.backwards:
            return
        path = frame.path
        expected = _expected_errors(scope.node)
        frame.writes = [w for w in frame.writes if id(w[3]) not in expected]
        frame.backwards = [b for b in frame.backwards if id(b[2]) not in expected]

        for wseq, node, alias, wstmt, shown in frame.writes:
            wpath = path(wstmt)
            hit = False
            for sseq, key, version, sid, sstmt in frame.saves:
                if key != alias.base or version != alias.version or sseq >= wseq:
                    continue
                spath = path(sstmt)
                if not _compatible(spath, wpath):
                    continue
                for bseq, deps, bstmt in frame.backwards:
                    bpath = path(bstmt)
                    if bseq > wseq and sid in deps and _compatible(bpath, wpath) and _compatible(bpath, spath):
                        hit = True
                        break
                if hit:
                    break
            if hit:
                self.found(node, alias, shown, ctx)

    def found(self, node, alias: _Alias, shown: str, ctx) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # ------------------------------------------------------------------ statements

    def visit_Assign(self, node, ctx) -> None:
        self._statement(node, ctx)

    def visit_AugAssign(self, node, ctx) -> None:
        self._statement(node, ctx)

    def visit_AnnAssign(self, node, ctx) -> None:
        self._statement(node, ctx)

    def visit_Expr(self, node, ctx) -> None:
        self._statement(node, ctx)

    def visit_For(self, node, ctx) -> None:
        if self._frames and self._frames[-1].active:
            for t in _target_elements(node.target):
                self._rebind(t)

    visit_AsyncFor = visit_For

    def visit_With(self, node, ctx) -> None:
        if self._frames and self._frames[-1].active:
            for item in node.items:
                if item.optional_vars is not None:
                    for t in _target_elements(item.optional_vars):
                        self._rebind(t)

    visit_AsyncWith = visit_With

    def visit_Delete(self, node, ctx) -> None:
        if self._frames and self._frames[-1].active:
            for t in node.targets:
                self._rebind(t)

    def _version(self, key: str) -> tuple:
        v = self._frames[-1].versions
        return tuple(v.get(p, 0) for p in _key_prefixes(key))

    def _rebind(self, target) -> str | None:
        if isinstance(target, ast.Subscript):
            return None
        key = dotted_name(target)
        if key is None:
            return None
        f = self._frames[-1]
        f.versions[key] = f.versions.get(key, 0) + 1
        for k in [k for k in f.aliases if k == key or k.startswith(key + ".")]:
            del f.aliases[k]
        return key

    def _statement(self, stmt, ctx) -> None:
        if not self._frames or not self._frames[-1].active:
            return
        f = self._frames[-1]
        f.seq += 1
        seq = f.seq
        # 1. writes through aliases
        for node, container in self._writes(stmt, ctx):
            alias = self._resolve(container, ctx)
            if alias is None:
                continue
            if alias.via == "numpy" and isinstance(node, ast.Call) and node.func.attr not in _ARRAY_WRITES:
                continue
            if alias.via != "numpy" and isinstance(node, ast.Call) and not is_inplace_method(node.func.attr):
                continue
            if alias.via in self.vias:
                f.writes.append((seq, node, alias, stmt, ctx.short(container)))
        # 2. saved tensors (inputs now, results once the target is bound)
        new_ids = set()
        result_nodes = []
        value = getattr(stmt, "value", None)
        for n in _expressions(stmt):
            if not isinstance(n, (ast.BinOp, ast.Call)):
                continue
            for expr, what in saved_tensors(n, ctx):
                if what == "input":
                    key = storage_key(expr, ctx)
                    if key is not None:
                        new_ids.add(self._save(seq, key, self._version(key), stmt))
                elif value is not None and strip_views(value, ctx) is n:
                    result_nodes.append(n)
        # 3. backward calls and what they depend on
        deps = self._backward_deps(stmt, ctx)
        if deps:
            f.backwards.append((seq, deps, stmt))
        # 4. bindings: versions, aliases, dependency taint
        rhs_taint = set(new_ids)
        if value is not None:
            for k in _mentioned_keys(value):
                rhs_taint |= f.depends(k)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            alias = self._resolve(value, ctx) if len(targets) == 1 else None
            for target in targets:
                for el in _target_elements(target):
                    key = self._rebind(el)
                    if key is not None:
                        f.assign(key, rhs_taint, stmt, replace=True)
                    elif isinstance(el, ast.Subscript):
                        key = dotted_name(strip_views(el, ctx))
                        if key is not None:
                            f.assign(key, rhs_taint, stmt, replace=False)
                    if key is None:
                        continue
                    if alias is not None and el is target and not isinstance(el, ast.Subscript):
                        f.aliases[key] = _Alias(alias.base, alias.version, alias.via, alias.anchor, named=True)
                    if result_nodes and el is target and not isinstance(el, ast.Subscript):
                        sid = self._save(seq, key, self._version(key), stmt)
                        f.assign(key, {sid}, stmt, replace=False)
        elif isinstance(stmt, ast.AugAssign):
            key = dotted_name(strip_views(stmt.target, ctx))
            if key is not None and rhs_taint:
                f.assign(key, rhs_taint, stmt, replace=False)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            if isinstance(call.func, ast.Attribute):
                key = dotted_name(call.func.value)
                if key is not None:
                    taint = set(new_ids)
                    for a in [*call.args, *(k.value for k in call.keywords)]:
                        for k in _mentioned_keys(a):
                            taint |= f.depends(k)
                    if taint:
                        f.assign(key, taint, stmt, replace=False)

    def _save(self, seq, key, version, stmt) -> int:
        f = self._frames[-1]
        f.next_id += 1
        f.saves.append((seq, key, version, f.next_id, stmt))
        return f.next_id

    def _writes(self, stmt, ctx):
        """(reported node, the tensor or array written into) for each in-place write of `stmt`."""
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for el in _target_elements(target):
                    if isinstance(el, ast.Subscript):
                        yield el, el.value
        elif isinstance(stmt, ast.AugAssign):
            t = stmt.target
            if isinstance(t, ast.Subscript):
                yield t, t.value
            elif isinstance(t, (ast.Name, ast.Attribute)):
                yield t, t
        for n in _expressions(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                attr = n.func.attr
                if is_inplace_method(attr) or attr in _ARRAY_WRITES:
                    yield n, n.func.value

    def _resolve(self, expr, ctx) -> _Alias | None:
        """The alias `expr` writes through: `a.detach()`, `a.detach().numpy()`, `a.data`, or a
        name bound to one of them (and views of any of these)."""
        e = strip_views(expr, ctx)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
            attr = e.func.attr
            inner = e.func.value
            if attr == "detach" and not e.args and not e.keywords:
                key = dotted_name(strip_views(inner, ctx))
                if key is not None and ctx.fact(inner).kind in (TENSOR, UNKNOWN):
                    return _Alias(key, self._version(key), "detach", e)
                return None
            if attr == "numpy" and not e.args and not e.keywords:
                r = self._resolve(inner, ctx)
                if r is not None and r.via == "detach":
                    return _Alias(r.base, r.version, "numpy", r.anchor, r.named)
                return r
            if attr == "cpu" and not e.args and ctx.fact(inner).kind == TENSOR and ctx.fact(inner).device is Device.CPU:
                return self._resolve(inner, ctx)
            return None
        if isinstance(e, ast.Attribute) and e.attr == "data":
            key = dotted_name(strip_views(e.value, ctx))
            if key is not None and ctx.fact(e.value).kind in (TENSOR, UNKNOWN):
                return _Alias(key, self._version(key), "data", e)
            return None
        key = dotted_name(e)
        if key is not None:
            return self._frames[-1].aliases.get(key)
        return None

    def _backward_deps(self, stmt, ctx) -> set:
        f = self._frames[-1]
        deps: set = set()

        def taint_of(node):
            out = set()
            for k in _mentioned_keys(node):
                out |= f.depends(k)
            return out

        for n in _expressions(stmt):
            if not isinstance(n, ast.Call):
                continue
            func = n.func
            q = ctx.qualname(func)
            if q in ("torch.autograd.backward", "torch.autograd.grad"):
                roots = n.args[:1] + [k.value for k in n.keywords if k.arg in ("tensors", "outputs")]
                for r in roots:
                    deps |= taint_of(r)
            elif isinstance(func, ast.Attribute) and func.attr in ("backward", "manual_backward"):
                deps |= taint_of(func.value)
                for a in n.args[:1]:
                    deps |= taint_of(a)
        return deps


class InplaceThroughDetach(_SavedWriteRule):
    code = "TNS402"
    name = "inplace-through-detach"
    message = (
        "in-place write through {alias} changes {base}, which autograd saved for the backward() below "
        "({effect}); use {base}.detach().clone() to get a copy that is safe to write"
    )
    fix_title = "Copy with `.detach().clone()`"
    fix_safety = "unsafe"
    prefilter = (".detach(",)
    vias = ("detach", "numpy")
    docs = """
## What it does
Checks for in-place writes through a `.detach()` alias of a tensor saved for backward.

The writes are `c = a.detach(); c.zero_()`, `a.detach()[0] = 5`,
`a.detach().add_(1)`, and writes into the NumPy array of `a.detach().numpy()`
(`arr = a.detach().numpy(); arr[0] = 5`), where `a` was saved by an operation for a backward
still to come in the same function.  A tensor is saved when an operation that needs it
for its gradient used it: `a ** 2`, `a.log()`, `a.sin()`, `a.abs()`, `a.clamp(...)`, `gelu`,
`silu`, ... save their input; `a.exp()`, `a.sigmoid()`, `a.tanh()`, `a.sqrt()`, `relu`,
`softmax`, ... save their result; `a * b`, `a @ b`, `mm`, `F.linear` save each operand when the
other requires grad; `a / b` saves `b` (and `a` when `b` requires grad).  `a * 2`, `a + 1`,
`a.sum()` and views save nothing and are not findings.

Only reported when the saving operation, the write and a later `backward()` (or
`torch.autograd.grad`) that depends on the saving operation are all visible in one function,
in that order.

## Why is this bad?
`detach()` shares storage (and the version counter) with the original tensor.  Writing through
it changes the values autograd saved, so `backward()` fails with `RuntimeError: one of the
variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [5]] is at version 1; expected version 0 instead.`  Through a NumPy array
the version counter does not see the write at all: no error, and the gradient is silently
computed from the new values.

## Example
```python
b = a ** 2
c = a.detach()
c.zero_()
b.sum().backward()
```

## Use instead
```python
b = a ** 2
c = a.detach().clone()
c.zero_()
b.sum().backward()
```
If the write was meant to change `a`, move it after `backward()`.

## Fix safety
Unsafe: `.clone()` turns the alias into a copy, so the write no longer reaches `a`; code that
relies on `a` changing behaves differently.  The fix is offered only when the alias is bound to a
name (`c = a.detach()`, `arr = a.detach().numpy()`); an inline write (`a.detach().zero_()`) can
only mean "change `a`", and is left to a manual change.

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
"""
    VALID = [
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a * 2\nc = a.detach()\nc.zero_()\n"
              "b.sum().backward()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\nb.sum().backward()\n"
              "a.detach().zero_()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\nc = a.detach().clone()\nc.zero_()\n"
              "b.sum().backward()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\nc = a.detach()\nc.zero_()\n"
              "", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\nc = a.detach()\nc.zero_()\n"
              "(a * 3).sum().backward()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a * torch.ones(5)\nc = a.detach()\nc.zero_()\n"
              "b.sum().backward()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\na = torch.ones(5, requires_grad=True)\n"
              "a.detach().zero_()\nb.sum().backward()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a.exp()\nb.detach().zero_()\n"
              "b = a.exp()\nb.sum().backward()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\narr = a.detach().numpy()\n"
              "total = arr.sum() + 1\nb.sum().backward()\n", runs=True),
        Valid(
            # x @ w with data x saves x, not w: writing to w before backward is harmless.
            "import torch\nx = torch.randn(2, 3)\nw = torch.randn(3, 3, requires_grad=True)\nh = x @ w\n"
            "w.detach().mul_(0.5)\nh.sum().backward()\n",
            runs=True,
        ),
        Valid("import torch\n\n\ndef step(a, flag):\n    if flag:\n        b = a ** 2\n    else:\n"
              "        a.detach().zero_()\n        b = a * 2\n    b.sum().backward()\n\n\n"
              "step(torch.ones(3, requires_grad=True), False)\n", runs=True),
    ]
    INVALID = [
        Invalid(
            # The seed's example.
            "import torch\n\na = torch.ones(5, requires_grad=True)\nb = a**2\nc = a.detach()\nc.zero_()\n"
            "b.sum().backward()\n",
            line=6,
            col=0,
            fixed="import torch\n\na = torch.ones(5, requires_grad=True)\nb = a**2\nc = a.detach().clone()\nc.zero_()\n"
            "b.sum().backward()\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR),
                          check_fixed="a.grad.tolist() == [2.0] * 5 and c.sum().item() == 0"),
        ),
        Invalid(
            # exp() saves its result.
            "import torch\n\na = torch.ones(5, requires_grad=True)\nb = a.exp()\nb.detach().zero_()\n"
            "b.sum().backward()\n",
            line=5,
            col=0,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR)),
        ),
        Invalid(
            # Through NumPy: no error, a wrong gradient (2 * 5 instead of 2 * 1).
            "import torch\n\na = torch.ones(5, requires_grad=True)\nb = a ** 2\narr = a.detach().numpy()\narr[0] = 5\n"
            "b.sum().backward()\n",
            line=6,
            col=0,
            fixed="import torch\n\na = torch.ones(5, requires_grad=True)\nb = a ** 2\n"
                  "arr = a.detach().clone().numpy()\n"
            "arr[0] = 5\nb.sum().backward()\n",
            unsafe=True,
            oracle=Oracle(check_bad="a.grad[0].item() == 10.0",
                          check_fixed="a.grad[0].item() == 2.0 and a[0].item() == 1.0"),
        ),
        Invalid(
            "import torch\n\na = torch.ones(3, requires_grad=True)\nloss = a.sin().sum()\na.detach()[0] = 5\n"
            "loss.backward()\n",
            line=5,
            col=0,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR)),
        ),
        Invalid(
            # matmul saves w because the encoder's output requires grad; the "decayed copy" is not a copy.
            "import torch\nfrom torch import nn\n\nencoder = nn.Linear(3, 3)\n"
            "w = torch.randn(3, 3, requires_grad=True)\n\n\n"
            "def train_step(batch):\n    h = encoder(batch) @ w\n    snapshot = w.detach()\n    snapshot.mul_(0.5)\n"
            "    loss = h.pow(2).mean()\n    loss.backward()\n    return w.grad, snapshot\n\n\n"
            "grad, snap = train_step(torch.randn(2, 3))\n",
            line=11,
            col=4,
            fixed="import torch\nfrom torch import nn\n\nencoder = nn.Linear(3, 3)\n"
                  "w = torch.randn(3, 3, requires_grad=True)\n\n\n"
            "def train_step(batch):\n    h = encoder(batch) @ w\n    snapshot = w.detach().clone()\n"
            "    snapshot.mul_(0.5)\n"
            "    loss = h.pow(2).mean()\n    loss.backward()\n    return w.grad, snapshot\n\n\n"
            "grad, snap = train_step(torch.randn(2, 3))\n",
            unsafe=True,
            oracle=Oracle(raises=("RuntimeError", _VERSION_ERROR),
                          check_fixed="grad is not None and grad.shape == (3, 3)"),
        ),
    ]

    def found(self, node, alias: _Alias, shown: str, ctx) -> None:
        effect = "the gradient is silently wrong" if alias.via == "numpy" else "backward() raises RuntimeError"
        fix = None
        anchor = alias.anchor
        if alias.named and isinstance(anchor, ast.Call):
            start, _ = attr_name_span(ctx, anchor.func)
            _, end = ctx.span(anchor)
            if ctx.lines.text[start:end] == "detach()":
                fix = Fix(self.fix_title, self.fix_safety, (Edit(start, end, "detach().clone()", expect="detach()"),))
        base = alias.base if len(alias.base) <= 40 else "<expr>"
        ctx.report(self, node, fix, alias=shown, base=base, effect=effect)


class InplaceThroughData(_SavedWriteRule):
    code = "TNS403"
    name = "inplace-through-data"
    message = (
        "in-place write through {base}.data changes a tensor autograd saved for the backward() below, and the "
        "gradient is silently wrong; move the write after backward(), or use `with torch.no_grad():` and write to "
        "{base} itself so that PyTorch raises instead"
    )
    fix_title = None
    fix_safety = None
    prefilter = (".data",)
    vias = ("data",)
    docs = """
## What it does
Checks for in-place writes through `.data` to a tensor saved for backward.

The writes are `a.data.zero_()`, `a.data[0] = 5`, `a.data += 1` and `d = a.data; d.mul_(2)`,
where `a` was saved by an operation for a backward still to come in the same function (see
TNS402 for which operations save what).  Optimizer-style updates
(`p.data.add_(...)` after `backward()`, or with no saving operation and backward around them)
are not findings.

## Why is this bad?
`.data` gives the same storage without the autograd bookkeeping: the write does not bump the
version counter, so autograd cannot tell that a value it saved has changed.  `backward()` runs
without error and computes the gradient from the new values: `b = a ** 2; a.data.zero_();
b.sum().backward()` gives `a.grad == 0` instead of `2 * a`.

## Example
```python
b = a ** 2
a.data.zero_()
b.sum().backward()
```

## Use instead
```python
b = a ** 2
b.sum().backward()
with torch.no_grad():
    a.zero_()
```
Writing to the tensor itself under `torch.no_grad()` before the backward is not a fix, but it
turns the wrong gradient into `RuntimeError: one of the variables needed for gradient
computation has been modified by an inplace operation`, which points at the problem.

## Fix safety
No automatic fix: where the write belongs (before or after the backward) depends on what the
code means.

## References
- https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html (why `.data` is unsafe)
"""
    VALID = [
        Valid("import torch\nfrom torch import nn\n\nmodel = nn.Linear(3, 1)\n"
              "loss = model(torch.randn(4, 3)).pow(2).mean()\n"
              "loss.backward()\nfor p in model.parameters():\n    p.data.add_(-0.1 * p.grad)\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\na.data.zero_()\nb = a ** 2\nb.sum().backward()\n",
              runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a * 2\na.data.zero_()\nb.sum().backward()\n",
              runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\na.data.zero_()\n", runs=True),
        Valid("import torch\na = torch.ones(5, requires_grad=True)\nb = a ** 2\nb.sum().backward()\na.data.zero_()\n",
              runs=True),
    ]
    INVALID = [
        Invalid(
            "import torch\n\na = torch.ones(5, requires_grad=True)\nb = a ** 2\na.data.zero_()\nb.sum().backward()\n",
            line=5,
            col=0,
            oracle=Oracle(check_bad="a.grad.abs().sum().item() == 0"),
        ),
        Invalid(
            # sigmoid saves its output; overwriting the output through .data zeroes the gradient.
            "import torch\n\na = torch.ones(3, requires_grad=True)\ns = torch.sigmoid(a)\ns.data[:] = 0.0\n"
            "loss = s.sum()\nloss.backward()\n",
            line=5,
            col=0,
            oracle=Oracle(check_bad="a.grad.abs().sum().item() == 0"),
        ),
        Invalid(
            "import torch\n\n\ndef step(a):\n    b = a.log()\n    a.data -= 1\n    b.mean().backward()\n\n\n"
            "a = torch.full((4,), 2.0, requires_grad=True)\nstep(a)\n",
            line=6,
            col=4,
            oracle=Oracle(check_bad="a.grad.tolist() == [0.25] * 4"),
        ),
        Invalid(
            "import torch\n\na = torch.ones(5, requires_grad=True)\nd = a.data\nb = a ** 2\nd[0] = 5.0\n"
            "b.sum().backward()\n",
            line=6,
            col=0,
            oracle=Oracle(check_bad="a.grad[0].item() == 10.0"),
        ),
    ]

    def found(self, node, alias: _Alias, shown: str, ctx) -> None:
        base = alias.base if len(alias.base) <= 40 else "<expr>"
        ctx.report(self, node, None, base=base)
