"""Safe means safe: a fix marked safe never changes what working code does.

Issue "Safe means safe" (`tensorcopy fix` over ~7,300 real files): the byte-level guarantees
held, but some fixes marked safe rewrote code that was not what the rule said it was
(`torch.tensor(size)` on a `torch.Size` behind `isinstance(size, torch.Size)`, `np.argsort(-a)`
on an ndarray, `tf.constant(x).numpy()`), and the unsafe TNS401 wrap put `yield` / `await`
inside `with torch.no_grad():`.  The policy (see ../shared/design.md, "Fix safety follows
certainty"): a fix is safe only when the code it rewrites is certainly what the rule says (by
the flow of the code, never only by an annotation, a name or `--strict`'s unknown origin), or
when the rewrite is right for every value the original accepts.

Three parts:

1. Look-alikes (static): small realistic programs where values look like tensors and are
   lists, arrays, `torch.Size`, numbers, other frameworks' tensors or objects, behind guards
   (`isinstance`, `torch.is_tensor`, early returns, negations) or under wrong annotations.
   `fix_text` in default mode changes nothing, and neither does strict mode with safe fixes
   only (strict findings may be reported; their fixes must not be safe).
2. TNS401 and suspension points: the wrap is never offered around a statement containing
   `yield`, `yield from` or `await` (the finding stays, without a fix), checked on the text and
   by running the unsafe-fixed generator/coroutine (grad mode must not leak to the caller).
3. Runtime equivalence: programs `f(x)` for every rule with a value-level fix (TNS101, TNS102 on
   the CPU, TNS103, TNS201, TNS202), fixed in every mode, then the original and the fixed
   program both run on real CPU torch over many inputs (tensors with and without grad, leaf and
   non-leaf, float64/int/bool dtypes, non-contiguous, `nn.Parameter`, lists, nested lists,
   tuples, NumPy arrays and scalars, Python numbers, `torch.Size`, and a torch_geometric-style
   `Data` object).  Wherever the original runs, a program fixed with safe fixes only returns the
   same thing (type, dtype, shape, strides, values, requires_grad, is_leaf, memory shared with
   the input, NumPy array vs tensor), leaves the input the same, and warns nothing new.
   Programs fixed with unsafe fixes too may differ, but each difference must come from a fix
   labelled unsafe.
"""

from __future__ import annotations

import ast
import asyncio
import copy
import difflib
import textwrap
import warnings
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

from flake8_tensorcopy.engine import fix_text, lint_text
from flake8_tensorcopy.rules.base import Options

torch = pytest.importorskip("torch")

DEFAULT = Options()
STRICT = Options(strict=True)
STRICT_FORCE = Options(strict=True, numpy_fix="force")


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _diff(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "original", "fixed"))


def _explain(result) -> str:
    return "; ".join(f"{v.code} line {v.line} ({v.fix.safety if v.fix else 'no fix'})" for v in result.applied)


# =============================================================================================
# 1. Look-alikes: nothing here is what the rules are about, so no safe fix may touch it.
# =============================================================================================

LOOKALIKES = {
    # ------------------------------------------------------------- TNS202: not a tensor
    # kornia: a torch.Size behind an isinstance test, under a `torch.Tensor` annotation.
    "kornia_size_guard": """
        import torch

        def normalize_size(size: torch.Tensor) -> torch.Tensor:
            if isinstance(size, torch.Size):
                size = torch.tensor(size)[None]
            return size.float()
    """,
    # gpytorch: the branch runs only for values that are not tensors.
    "gpytorch_not_isinstance": """
        import torch

        def as_matrix(m: torch.Tensor) -> torch.Tensor:
            if not isinstance(m, torch.Tensor):
                m = torch.tensor(m)
            return m.unsqueeze(-1)
    """,
    # diffusers: the annotation is wrong, callers pass lists from a config.
    "diffusers_list_mean": """
        import torch

        def shift_latents(latents: torch.Tensor, mean: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
            # callers pass mean=[0.5, 0.5, 0.5, 0.5], std=[0.25] * 4 straight from the config
            mean = torch.tensor(mean).view(1, -1, 1, 1)
            std = torch.tensor(std, dtype=latents.dtype).view(1, -1, 1, 1)
            return (latents - mean) / std
    """,
    "is_tensor_guard": """
        import torch

        def to_tensor(x: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
            if not torch.is_tensor(x):
                x = torch.tensor(x, dtype=dtype)
            return x
    """,
    "early_return_isinstance": """
        import torch

        def ensure_tensor(value: torch.Tensor, device=None) -> torch.Tensor:
            if isinstance(value, torch.Tensor):
                return value.to(device)
            return torch.tensor(value, device=device)
    """,
    "early_return_is_tensor_else": """
        import torch

        def coerce(v: torch.Tensor):
            if torch.is_tensor(v):
                return v
            else:
                return torch.tensor(v)
    """,
    "raise_unless_sequence": """
        import torch

        def make_kernel(k: torch.Tensor) -> torch.Tensor:
            if not isinstance(k, (list, tuple)):
                raise TypeError(f"kernel must be a list, got {type(k)}")
            return torch.tensor(k, dtype=torch.float32)
    """,
    "isinstance_list_tuple": """
        import torch

        def box_area(boxes: torch.Tensor) -> torch.Tensor:
            if isinstance(boxes, (list, tuple)):
                boxes = torch.tensor(boxes, dtype=torch.float32)
            return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    """,
    "isinstance_ndarray": """
        import numpy as np
        import torch

        def to_chw(img: torch.Tensor) -> torch.Tensor:
            if isinstance(img, np.ndarray):
                img = torch.tensor(img).permute(2, 0, 1)
            return img
    """,
    "isinstance_else_branch": """
        import torch

        def as_float(x: torch.Tensor) -> torch.Tensor:
            if isinstance(x, torch.Tensor):
                y = x.float()
            else:
                y = torch.tensor(x, dtype=torch.float32)
            return y
    """,
    "none_and_not_isinstance": """
        import torch

        def prepare_weights(weight: torch.Tensor = None):
            if weight is not None and not isinstance(weight, torch.Tensor):
                weight = torch.tensor(weight)
            return weight
    """,
    "type_is_guard": """
        import torch

        def as_index(idx: torch.Tensor):
            if type(idx) in (list, tuple, range):
                idx = torch.tensor(idx, dtype=torch.long)
            return idx
    """,
    "hasattr_guard": """
        import torch

        def to_device(x: torch.Tensor, device):
            if not hasattr(x, "detach"):
                x = torch.tensor(x)
            return x.to(device)
    """,
    "match_case_sequence": """
        import torch

        def as_shape(shape: torch.Tensor):
            match shape:
                case list() | tuple():
                    return torch.tensor(shape)
                case _:
                    return shape
    """,
    "ifexp_guard": """
        import math

        import torch

        def angles(n: int, theta: torch.Tensor):
            step = 2 * math.pi / n
            theta = torch.tensor(theta) if isinstance(theta, float) else theta
            return torch.tensor([i * step for i in range(n)]), theta
    """,
    "torchvision_setup_size": """
        import numbers

        import torch

        def setup_size(size: torch.Tensor):
            if isinstance(size, numbers.Number):
                return torch.tensor([int(size), int(size)])
            if isinstance(size, (tuple, list)) and len(size) == 1:
                return torch.tensor([size[0], size[0]])
            return torch.tensor(size)
    """,
    "optional_default_list": """
        from typing import Optional

        import torch

        def class_weights(w: Optional[torch.Tensor] = None) -> torch.Tensor:
            if w is None:
                w = [1.0, 1.0]
            return torch.tensor(w)
    """,
    "default_tuple_wrong_annotation": """
        import torch

        IMAGENET_MEAN = (0.485, 0.456, 0.406)

        def normalize(img: torch.Tensor, mean: torch.Tensor = IMAGENET_MEAN) -> torch.Tensor:
            return img - torch.tensor(mean).view(-1, 1, 1)
    """,
    "union_annotation": """
        from typing import Union

        import torch

        def temperature(t: Union[float, torch.Tensor]) -> torch.Tensor:
            return torch.tensor(t)
    """,
    "string_annotation": """
        import torch

        def offsets(o: "torch.Tensor"):
            return torch.tensor(o) + 1
    """,
    "from_import_tensor_annotation": """
        from torch import Tensor, tensor

        def scale(factors: Tensor, x):
            return x * tensor(factors)
    """,
    "annotated_local_from_json": """
        import json

        import torch

        def load_weights(path):
            with open(path) as f:
                cfg = json.load(f)
            weights: torch.Tensor = cfg["weights"]
            return torch.tensor(weights)
    """,
    "attribute_annotation": """
        import torch
        from torch import nn

        class Normalize(nn.Module):
            def __init__(self, mean, std):
                super().__init__()
                self.mean: torch.Tensor = mean
                self.std: torch.Tensor = std

            def forward(self, x):
                return (x - torch.tensor(self.mean)) / torch.tensor(self.std)
    """,
    "return_annotation_lies": """
        import torch

        def read_offsets() -> torch.Tensor:
            return [0.0, 1.0, 2.0]

        def shifted(x):
            return x + torch.tensor(read_offsets())
    """,
    "shape_and_size": """
        import torch

        def image_size(img: torch.Tensor):
            hw = torch.tensor(img.shape[-2:])
            n = torch.tensor(img.size(0))
            return hw, n, torch.tensor(img.shape), torch.tensor(img.size())
    """,
    "tolist_item_numpy": """
        import torch

        def summaries(x: torch.Tensor):
            a = torch.tensor(x.tolist())
            b = torch.tensor(x.sum().item())
            c = torch.tensor(x.detach().cpu().numpy())
            d = torch.tensor([x.dim(), x.numel(), len(x)])
            return a, b, c, d
    """,
    "new_tensor_on_lists": """
        import torch

        def pad_value(x: torch.Tensor, sizes: torch.Tensor):
            fill = x.new_tensor([0.5, 0.5])
            shape = x.new_tensor(x.shape)
            s = x.new_tensor(sizes)
            return fill, shape, s
    """,
    "names_that_say_tensor": """
        import numpy as np
        import torch

        tensor = [1.0, 2.0, 3.0]
        x_tensor = np.zeros(3)
        grad_tensor = 0.5
        a = torch.tensor(tensor)
        b = torch.tensor(x_tensor)
        c = torch.tensor(grad_tensor)
    """,
    "loop_over_numbers": """
        import torch

        def as_tensors(values: torch.Tensor):
            out = []
            for v in [0.1, 0.2, 0.3]:
                out.append(torch.tensor(v))
            for v in values:
                out.append(torch.tensor(float(v)))
            return out
    """,
    "dict_of_lists": """
        import torch

        STATS = {"mean": [0.5, 0.5], "std": [0.2, 0.2]}

        def stats(device):
            return torch.tensor(STATS["mean"], device=device), torch.tensor(STATS["std"], device=device)
    """,
    "list_of_scalar_tensors": """
        import torch

        def extent(x: torch.Tensor):
            lo, hi = x.min(), x.max()
            return torch.tensor([lo, hi]), torch.tensor((x.sum(), x.mean()))
    """,
    "tf_and_jax_arrays": """
        import jax.numpy as jnp
        import numpy as np
        import tensorflow as tf
        import torch

        def from_tf(v):
            t = tf.constant(v)
            return torch.tensor(t.numpy()), torch.tensor(np.asarray(t))

        def from_jax(v):
            j = jnp.asarray(v)
            return torch.tensor(np.asarray(j)), torch.tensor(j)
    """,
    # A Flax NNX model has .eval()/.train() too, and returns JAX arrays (no .detach()).
    "flax_nnx_model_eval": """
        import numpy as np
        import torch
        from flax import nnx

        def compare_outputs(flax_model: nnx.Module, torch_model: torch.nn.Module, x: np.ndarray):
            flax_model.eval()
            torch_model.eval()
            flax_out = flax_model(x)
            with torch.no_grad():
                torch_out = torch_model(torch.from_numpy(x))
            diff = np.abs(np.asarray(flax_out) - torch_out.cpu().numpy()).max()
            return diff, torch.tensor(flax_out)
    """,
    # ------------------------------------------------------------- TNS1xx: arrays and other frameworks
    # An ndarray behind isinstance, under a `torch.Tensor` annotation.
    "argsort_on_ndarray": """
        import numpy as np
        import torch

        def rank(a: torch.Tensor):
            if isinstance(a, np.ndarray):
                return np.argsort(-(a))
            return torch.argsort(-a)
    """,
    # A ufunc on a tensor that does not require grad returns a Tensor (__array_wrap__); after
    # `.detach().cpu().numpy()` it returns an ndarray.
    "np_exp_on_tensor_without_grad": """
        import numpy as np
        import torch

        def softmax_np(t: torch.Tensor):
            e = np.exp(t - t.max())
            return e / e.sum()
    """,
    "np_ufuncs_on_spectrogram": """
        import numpy as np
        import torch

        def log_scale(spec: torch.Tensor):
            return np.log1p(np.abs(spec))
    """,
    "isinstance_ndarray_asarray": """
        import numpy as np
        import torch

        def to_float_array(x: torch.Tensor):
            if isinstance(x, np.ndarray):
                return np.asarray(x, dtype=np.float32)
            return x.float()
    """,
    "not_is_tensor_branch": """
        import numpy as np
        import torch

        def describe(x: torch.Tensor):
            if not torch.is_tensor(x):
                return np.mean(x), np.array(x)
            return x.mean()
    """,
    "is_tensor_converted_first": """
        import numpy as np
        import torch

        def to_numpy(x: torch.Tensor):
            if torch.is_tensor(x):
                x = x.detach().cpu().numpy()
            return np.asarray(x), np.exp(x)
    """,
    "ndarray_branch_normalize": """
        import numpy as np
        import torch

        def normalize(a: torch.Tensor):
            if isinstance(a, np.ndarray):
                a = np.exp(a) / np.exp(a).sum()
                return np.asarray(a)
            return torch.softmax(a, dim=0)
    """,
    "grad_guarded_then_converted": """
        import numpy as np
        import torch

        def to_numpy(t: torch.Tensor):
            if t.requires_grad:
                t = t.detach()
            return t.cpu().numpy(), np.asarray(t)
    """,
    # The TF case: a file that imports TensorFlow and torch.
    "tf_constant_numpy": """
        import tensorflow as tf
        import torch

        def tf_to_torch(x):
            arr = tf.constant(x).numpy()
            return torch.from_numpy(arr)
    """,
    "tf_eager_tensors_numpy": """
        import tensorflow as tf
        import torch

        def convert(batch):
            images = tf.image.resize(batch["image"], (224, 224))
            labels = tf.cast(batch["label"], tf.int64)
            return torch.from_numpy(images.numpy()), torch.from_numpy(labels.numpy())
    """,
    "keras_model_numpy": """
        import tensorflow as tf
        import torch

        keras_model = tf.keras.Sequential([tf.keras.layers.Dense(4)])

        def teacher_logits(x):
            logits = keras_model(x, training=False)
            return torch.from_numpy(logits.numpy())
    """,
    "tf_variable_numpy": """
        import tensorflow as tf
        import torch

        def export(var: tf.Variable):
            return torch.tensor(var.numpy())
    """,
    # Unknown origin (strict): whatever another framework hands over.
    "unknown_object_numpy_interop": """
        import torch

        def to_torch(t):
            return torch.from_numpy(t.numpy())
    """,
    "arrays_and_numpy_backed_tensors": """
        import numpy as np
        import torch

        def features(t):
            arr = np.linspace(0, 1, 5)
            data = torch.from_numpy(arr)
            return np.exp(arr), np.asarray(data), data.numpy(), data.cpu().numpy()
    """,
    "dataloader_batches": """
        import numpy as np
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4)
        for (xb,) in loader:
            stats = np.exp(xb), np.asarray(xb), xb.numpy()
    """,
    "pandas_values": """
        import numpy as np
        import pandas as pd
        import torch

        def column(df: pd.DataFrame, name: str):
            values = df[name].values
            return torch.from_numpy(np.asarray(values)), np.exp(values)
    """,
    # ------------------------------------------------------------- TNS201: not a tensor
    # torch_geometric's Data.detach() replaces the tensors of the object itself and returns it
    # (Data.apply mutates in place), so `data.detach().clone()` detaches the caller's graph.
    "pyg_data_clone_detach": """
        import torch
        from torch_geometric.data import Data

        def snapshot(data: Data):
            return data.clone().detach()

        def snapshot_batch(batch):
            return batch.clone().detach()
    """,
}


def _lookalike_params():
    return [pytest.param(name, id=name) for name in LOOKALIKES]


@pytest.mark.parametrize("name", _lookalike_params())
def test_lookalike_default_mode_changes_nothing(name):
    src = _src(LOOKALIKES[name])
    compile(src, name, "exec")
    result = fix_text(src, options=DEFAULT)
    assert result.error is None, result.error
    if result.text != src:
        pytest.fail(f"default-mode safe fixes rewrote a look-alike ({_explain(result)}):\n{_diff(src, result.text)}",
                    pytrace=False)


@pytest.mark.parametrize("options", [pytest.param(STRICT, id="strict"),
                                     pytest.param(STRICT_FORCE, id="strict-numpy-force")])
@pytest.mark.parametrize("name", _lookalike_params())
def test_lookalike_strict_mode_safe_fixes_change_nothing(name, options):
    """Strict findings may be reported, but they rest on an annotation or an unknown origin: no safe fix."""
    src = _src(LOOKALIKES[name])
    result = fix_text(src, options=options)
    assert result.error is None, result.error
    if result.text != src:
        pytest.fail(f"strict-mode safe fixes rewrote a look-alike ({_explain(result)}):\n{_diff(src, result.text)}",
                    pytrace=False)


# =============================================================================================
# 2. TNS401: no `with torch.no_grad():` around a statement that can suspend.
# =============================================================================================

SUSPENDING = _src("""
    import asyncio

    import torch
    from torch import nn


    def manual_sgd(model: nn.Module, lr):
        for p in model.parameters():
            p.sub_(lr * (yield p))


    def stream_weights(layer: nn.Linear, reader):
        layer.weight.copy_((yield from reader.chunks()))
        layer.bias[0] = yield


    async def apply_remote_update(model: nn.Module, queue: asyncio.Queue):
        for p in model.parameters():
            p.copy_(await queue.get())
            p.mul_(0.5)


    async def warm_start(layer: nn.Linear, fetch):
        layer.weight += await fetch("weight")
""")

SUSPENDING_LINES = ["p.sub_(lr * (yield p))", "layer.weight.copy_((yield from reader.chunks()))",
                    "layer.bias[0] = yield", "p.copy_(await queue.get())",
                    'layer.weight += await fetch("weight")']


def _line_of(src: str, needle: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if line.strip() == needle)


def _suspensions_under_no_grad(src: str) -> list[int]:
    """Lines of yield / yield from / await inside the body of a `with ...no_grad():` block
    (not inside a function, lambda or class nested in that body, which the block does not
    suspend)."""
    found = set()

    def scan(node):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            found.add(node.lineno)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                scan(child)

    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                "no_grad" in ast.unparse(item.context_expr) for item in node.items):
            for stmt in node.body:
                scan(stmt)
    return sorted(found)


def test_tns401_suspending_statements_stay_reported_without_fix():
    result = lint_text(SUSPENDING)
    by_line = {v.line: v for v in result.violations if v.code == "TNS401"}
    for needle in SUSPENDING_LINES:
        line = _line_of(SUSPENDING, needle)
        assert line in by_line, f"TNS401 no longer reported at line {line}: {needle}"
        assert by_line[line].fix is None, (
            f"line {line} `{needle}` contains a suspension point but is offered a "
            f"{by_line[line].fix.safety} `with torch.no_grad():` wrap")


def test_tns401_unsafe_fix_never_wraps_yield_or_await():
    assert _suspensions_under_no_grad(SUSPENDING) == []
    result = fix_text(SUSPENDING, unsafe=True)
    assert result.error is None, result.error
    wrapped = _suspensions_under_no_grad(result.text)
    assert wrapped == [], (
        f"--unsafe-fixes put yield/await inside `with torch.no_grad():` (lines {wrapped} of the fixed "
        f"text; applied: {_explain(result)}):\n{_diff(SUSPENDING, result.text)}")


def _exec(src: str) -> dict:
    ns = {"__name__": "tns401_program"}
    exec(compile(src, "<fixed>", "exec"), ns)
    return ns


def test_tns401_unsafe_fix_keeps_grad_mode_of_generator_callers():
    """A generator suspended inside `with torch.no_grad():` hands grad mode off to its caller."""
    fixed = fix_text(SUSPENDING, unsafe=True).text
    ns = _exec(fixed)
    model = torch.nn.Linear(2, 2)
    gen = ns["manual_sgd"](model, 0.1)
    try:
        assert torch.is_grad_enabled()
        next(gen)
        leaked = not torch.is_grad_enabled()
    finally:
        gen.close()
        torch.set_grad_enabled(True)
    assert not leaked, "after next() on the fixed generator, the caller runs with grad disabled"


def test_tns401_unsafe_fix_keeps_grad_mode_of_other_coroutines():
    """A coroutine suspended at `await` inside `with torch.no_grad():` turns grad off for every
    other task of the event loop (grad mode is per thread, not per task)."""
    fixed = fix_text(SUSPENDING, unsafe=True).text
    ns = _exec(fixed)
    model = torch.nn.Linear(2, 2)

    async def main():
        queue = asyncio.Queue()
        task = asyncio.create_task(ns["apply_remote_update"](model, queue))
        await asyncio.sleep(0)  # the task runs up to `await queue.get()`
        seen = torch.is_grad_enabled()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return seen

    try:
        seen = asyncio.run(main())
    finally:
        torch.set_grad_enabled(True)
    assert seen, "while the fixed coroutine waits, the other tasks run with grad disabled"


# =============================================================================================
# 3. Runtime equivalence: original and fixed programs on real CPU torch.
# =============================================================================================


class GraphData:
    """The copy semantics of torch_geometric.data.Data (2.8.1, data.py / storage.py):
    `clone()` is `copy.copy(self).apply(lambda x: x.clone())`, and `detach()` is
    `self.apply(lambda x: x.detach())`, where `apply` replaces the attributes of the object
    itself and returns it."""

    def __init__(self, **attrs):
        self._store = dict(attrs)

    def __copy__(self):
        out = GraphData.__new__(GraphData)
        out._store = dict(self._store)
        return out

    def apply(self, func):
        for k, v in self._store.items():
            self._store[k] = func(v)
        return self

    def clone(self):
        return copy.copy(self).apply(lambda x: x.clone())

    def detach(self):
        return self.apply(lambda x: x.detach())

    def __repr__(self):
        return f"GraphData({self._store})"


# Inputs: name -> factory (a fresh value for every run).
def _inputs():
    t = lambda: torch.tensor([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]])  # noqa: E731
    out = {
        "tensor-f32": t,
        "tensor-f32-leaf-requires-grad": lambda: t().requires_grad_(),
        "tensor-f32-nonleaf-requires-grad": lambda: t().requires_grad_() * 1.5,
        "tensor-f32-detached-view": lambda: (t().requires_grad_() * 2).detach(),
        "tensor-f64": lambda: t().double(),
        "tensor-f64-requires-grad": lambda: t().double().requires_grad_(),
        "tensor-i64": lambda: torch.tensor([[1, 2, 3], [4, 5, 6]]),
        "tensor-i32-1d": lambda: torch.arange(4, dtype=torch.int32),
        "tensor-bool": lambda: torch.tensor([True, False, True]),
        "tensor-0d-f32": lambda: torch.tensor(2.5),
        "tensor-0d-i64": lambda: torch.tensor(7),
        "tensor-transposed": lambda: torch.arange(6.0).view(2, 3).t(),
        "tensor-strided-slice": lambda: torch.arange(12.0).view(3, 4)[:, ::2],
        "tensor-empty": lambda: torch.zeros(0, 3),
        "parameter": lambda: torch.nn.Parameter(torch.ones(2, 3)),
        "parameter-frozen": lambda: torch.nn.Parameter(torch.ones(3), requires_grad=False),
        "list-float": lambda: [1.5, -2.0, 0.25],
        "list-int": lambda: [1, 2, 3],
        "list-nested": lambda: [[1.0, 2.0], [3.0, 4.0]],
        "list-nested-int": lambda: [[1, 2], [3, 4]],
        "list-bool": lambda: [True, False],
        "tuple-float": lambda: (0.5, 0.25),
        "ndarray-f64": lambda: np.array([[1.5, -2.0], [0.25, 3.0]]),
        "ndarray-f32": lambda: np.array([1.5, -2.0, 0.25], dtype=np.float32),
        "ndarray-i64": lambda: np.arange(6).reshape(2, 3),
        "ndarray-0d": lambda: np.array(2.5),
        "numpy-float64-scalar": lambda: np.float64(2.5),
        "numpy-int32-scalar": lambda: np.int32(3),
        "float": lambda: 2.5,
        "int": lambda: 3,
        "bool": lambda: True,
        "torch.Size": lambda: torch.Size([2, 3]),
        "torch.Size-empty": lambda: torch.Size([]),
        "graph-data": lambda: GraphData(x=torch.ones(2, 3, requires_grad=True) * 2,
                                        edge_index=torch.tensor([[0], [1]])),
    }
    return out


INPUTS = _inputs()


@dataclass(frozen=True)
class Program:
    rule: str
    source: str
    # False for programs whose only finding sits behind an isinstance/is_tensor guard that says
    # the value is not a tensor: once guards override annotations, no finding there is right.
    must_report: bool = True


# Each program defines f(x).  A module-level Parameter `w` and a device expression make the
# flow-certain variants; annotations and unknown parameters make the weak-evidence ones.
_HEAD = "import numpy as np\nimport torch\n\n"
_W = "w = torch.nn.Parameter(torch.tensor(2.0))\n\n"
_DEVICE = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'

PROGRAMS = {
    # ------------------------------------------------------------ TNS101 (.numpy(), grad)
    # Requires grad on one path (float inputs): the finding is certain there; int inputs run.
    "tns101-join": Program("TNS101", _HEAD + _W + _src("""
        def f(x):
            t = torch.as_tensor(x)
            if t.is_floating_point():
                t = t * w
            return t.numpy()
    """)),
    "tns101-join-cpu-move": Program("TNS101", _HEAD + _W + _src("""
        def f(x):
            t = torch.as_tensor(x)
            if t.is_floating_point():
                t = t * w
            return t.cpu().numpy()
    """)),
    "tns101-annotated": Program("TNS101", _HEAD + _src("""
        def f(x: torch.Tensor):
            return x.cpu().numpy()
    """)),
    "tns101-unknown": Program("TNS101", _HEAD + _src("""
        def f(x):
            return x.numpy()
    """)),
    # ------------------------------------------------------------ TNS102 (.numpy(), device; CPU here)
    "tns102-device": Program("TNS102", _HEAD + _DEVICE + _src("""
        def f(x):
            t = torch.as_tensor(x).to(device)
            return t.numpy()
    """)),
    "tns102-annotated-detached": Program("TNS102", _HEAD + _src("""
        def f(x: torch.Tensor):
            return x.detach().numpy()
    """)),
    # ------------------------------------------------------------ TNS103 (NumPy functions)
    "tns103-join-exp": Program("TNS103", _HEAD + _W + _src("""
        def f(x):
            t = torch.as_tensor(x)
            if t.is_floating_point():
                t = t * w
            return np.exp(t)
    """)),
    "tns103-join-asarray": Program("TNS103", _HEAD + _W + _src("""
        def f(x):
            t = torch.as_tensor(x)
            if t.is_floating_point():
                t = t * w
            return np.asarray(t)
    """)),
    "tns103-join-array-dtype": Program("TNS103", _HEAD + _W + _src("""
        def f(x):
            t = torch.as_tensor(x)
            if t.is_floating_point():
                t = t * w
            return np.array(t, dtype=np.float64)
    """)),
    "tns103-join-concatenate": Program("TNS103", _HEAD + _W + _src("""
        def f(x):
            t = torch.as_tensor(x).reshape(-1)
            if t.is_floating_point():
                t = t * w
            return np.concatenate([t, t])
    """)),
    "tns103-annotated-exp": Program("TNS103", _HEAD + _src("""
        def f(x: torch.Tensor):
            return np.exp(x)
    """)),
    "tns103-annotated-asarray": Program("TNS103", _HEAD + _src("""
        def f(x: torch.Tensor):
            return np.asarray(x, dtype=np.float32)
    """)),
    "tns103-guarded-argsort": Program("TNS103", _HEAD + _src("""
        def f(a: torch.Tensor):
            if isinstance(a, np.ndarray):
                return np.argsort(-(a))
            return torch.argsort(-torch.as_tensor(a).reshape(-1))
    """), must_report=False),
    # ------------------------------------------------------------ TNS201 (clone().detach())
    "tns201-flow": Program("TNS201", _HEAD + _W + _src("""
        def f(x):
            y = torch.as_tensor(x, dtype=torch.float32) * w
            return y.clone().detach()
    """)),
    "tns201-flow-memory-format": Program("TNS201", _HEAD + _W + _src("""
        def f(x):
            y = torch.as_tensor(x, dtype=torch.float64) * w
            return y.clone(memory_format=torch.contiguous_format).detach()
    """)),
    "tns201-annotated": Program("TNS201", _HEAD + _src("""
        def f(x: torch.Tensor):
            return x.clone().detach()
    """)),
    "tns201-unknown-snapshot": Program("TNS201", _HEAD + _src("""
        def f(batch):
            snapshot = batch.clone().detach()
            return snapshot
    """)),
    # ------------------------------------------------------------ TNS202 (torch.tensor(t))
    # Certain by flow: torch.as_tensor always returns a tensor.
    "tns202-flow": Program("TNS202", _HEAD + _src("""
        def f(x):
            t = torch.as_tensor(x)
            return torch.tensor(t)
    """)),
    "tns202-flow-dtype": Program("TNS202", _HEAD + _src("""
        def f(x):
            t = torch.as_tensor(x)
            return torch.tensor(t * 2, dtype=torch.float64)
    """)),
    "tns202-flow-requires-grad": Program("TNS202", _HEAD + _src("""
        def f(x):
            t = torch.as_tensor(x)
            return torch.tensor(t, dtype=torch.float32, requires_grad=True)
    """)),
    "tns202-flow-new-tensor": Program("TNS202", _HEAD + _src("""
        base = torch.zeros(1, dtype=torch.float64)

        def f(x):
            t = torch.as_tensor(x)
            return base.new_tensor(t)
    """)),
    # Only an annotation says tensor.
    "tns202-annotated": Program("TNS202", _HEAD + _src("""
        def f(x: torch.Tensor):
            return torch.tensor(x)
    """)),
    "tns202-annotated-dtype": Program("TNS202", _HEAD + _src("""
        def f(x: torch.Tensor):
            return torch.tensor(x, dtype=torch.float32)
    """)),
    "tns202-annotated-new-tensor": Program("TNS202", _HEAD + _src("""
        base = torch.zeros(1, dtype=torch.float64)

        def f(x: torch.Tensor):
            return base.new_tensor(x)
    """)),
    "tns202-kornia-size": Program("TNS202", _HEAD + _src("""
        def f(size: torch.Tensor):
            if isinstance(size, torch.Size):
                size = torch.tensor(size)[None]
            return size
    """), must_report=False),
    "tns202-gpytorch-not-tensor": Program("TNS202", _HEAD + _src("""
        def f(m: torch.Tensor):
            if not isinstance(m, torch.Tensor):
                m = torch.tensor(m)
            return m
    """), must_report=False),
}

SAFE_MODES = {
    "default": DEFAULT,
    "strict": STRICT,
    "default-numpy-force": Options(numpy_fix="force"),
    "strict-numpy-force": STRICT_FORCE,
}


# ------------------------------------------------------------------ describing values


def _buffers(obj, out=None):
    """Byte ranges of the tensor storages / array buffers reachable from obj."""
    out = [] if out is None else out
    if isinstance(obj, torch.Tensor):
        s = obj.untyped_storage()
        if s.nbytes():
            out.append((s.data_ptr(), s.data_ptr() + s.nbytes()))
    elif isinstance(obj, np.ndarray):
        if obj.nbytes:
            lo, hi = np.lib.array_utils.byte_bounds(obj)
            out.append((lo, hi))
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _buffers(o, out)
    elif isinstance(obj, GraphData):
        for o in obj._store.values():
            _buffers(o, out)
    return out


def _shares(obj, ranges) -> bool:
    return any(a < d and c < b for a, b in _buffers(obj) for c, d in ranges)


TensorSig = namedtuple("Tensor", "type dtype shape stride values requires_grad is_leaf shares_input_memory")
ArraySig = namedtuple("ndarray", "dtype shape values shares_input_memory")


def describe(obj, input_ranges=()):
    """Everything the comparison looks at, as a hashable, printable structure."""
    if isinstance(obj, torch.Tensor):
        return TensorSig(type(obj).__name__, str(obj.dtype), tuple(obj.shape), obj.stride(),
                         obj.detach().tolist(), obj.requires_grad, obj.is_leaf, _shares(obj, input_ranges))
    if isinstance(obj, np.ndarray):
        return ArraySig(obj.dtype.str, obj.shape, obj.tolist(), _shares(obj, input_ranges))
    if isinstance(obj, np.generic):
        return ("numpy-scalar", type(obj).__name__, obj.item())
    if isinstance(obj, torch.Size):
        return ("Size", tuple(obj))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, tuple(describe(o, input_ranges) for o in obj))
    if isinstance(obj, GraphData):
        return ("GraphData", {k: describe(v, input_ranges) for k, v in sorted(obj._store.items())})
    if isinstance(obj, (bool, int, float, complex, str, type(None))):
        return (type(obj).__name__, obj)
    return ("object", type(obj).__name__, repr(obj))


def _warning_key(w) -> tuple:
    return (w.category.__name__, str(w.message).splitlines()[0][:100] if str(w.message) else "")


@dataclass
class Outcome:
    error: str | None
    value: object = None
    input_after: object = None
    warnings: frozenset = frozenset()


def run_program(src: str, make_input) -> Outcome:
    ns = {"__name__": "fix_safety_program"}
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(src, "<program>", "exec"), ns)
            x = make_input()
            ranges = _buffers(x)
            result = ns["f"](x)
            value = describe(result, ranges)
            input_after = describe(x)
        except Exception as exc:  # noqa: BLE001 - what a program raises is what we compare
            return Outcome(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        finally:
            torch.set_grad_enabled(True)
    return Outcome(None, value, input_after, frozenset(_warning_key(w) for w in caught))


def _short(value, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + " ...)"


def _first_difference(a, b, path="") -> str:
    """Where two descriptions first differ: `.x[1].requires_grad: False instead of True`."""
    if type(a) is type(b) and isinstance(a, dict) and a.keys() == b.keys() and a != b:
        key = next(k for k in a if a[k] != b[k])
        return _first_difference(a[key], b[key], f"{path}[{key!r}]")
    if type(a) is type(b) and isinstance(a, tuple) and len(a) == len(b) and a != b:
        fields = getattr(a, "_fields", None)
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                step = f".{fields[i]}" if fields else f"[{i}]"
                if isinstance(x, (tuple, dict)) and not isinstance(x, (TensorSig, ArraySig)) and not fields:
                    return _first_difference(x, y, path + step)
                if isinstance(x, (TensorSig, ArraySig)) and type(x) is type(y):
                    return _first_difference(x, y, path + step)
                return f"{path + step}: {_short(x, 80)} instead of {_short(y, 80)}"
    return f"{path or 'value'}: {_short(a)} instead of {_short(b)}"


def _compare(original: Outcome, fixed: Outcome) -> str | None:
    """Why the fixed program differs from the original (which ran), or None."""
    if fixed.error is not None:
        return f"the original returned {_short(original.value)}; the fixed program raises {fixed.error}"
    if fixed.value != original.value:
        return f"returns something else, at {_first_difference(fixed.value, original.value)}"
    if fixed.input_after != original.input_after:
        return f"leaves the input changed, at {_first_difference(fixed.input_after, original.input_after)}"
    new = fixed.warnings - original.warnings
    if new:
        return f"warns {sorted(new)} (the original did not)"
    return None


_FIX_CACHE: dict = {}


def _fixed(name: str, mode: str, unsafe: bool):
    key = (name, mode, unsafe)
    if key not in _FIX_CACHE:
        result = fix_text(PROGRAMS[name].source, options=SAFE_MODES[mode], unsafe=unsafe)
        assert result.error is None, result.error
        _FIX_CACHE[key] = result
    return _FIX_CACHE[key]


_ORIGINAL_CACHE: dict = {}


def _original(name: str) -> dict:
    if name not in _ORIGINAL_CACHE:
        _ORIGINAL_CACHE[name] = {i: run_program(PROGRAMS[name].source, make) for i, make in INPUTS.items()}
    return _ORIGINAL_CACHE[name]


def _divergences(name: str, text: str) -> dict:
    out = {}
    for input_name, original in _original(name).items():
        if original.error is not None:
            continue  # the original does not accept this value: anything goes
        why = _compare(original, run_program(text, INPUTS[input_name]))
        if why:
            out[input_name] = why
    return out


def test_runtime_programs_exercise_their_rules():
    """Not vacuous: every program is reported for its rule in some mode, and runs on some inputs."""
    for name, prog in PROGRAMS.items():
        codes = {v.code for opts in (DEFAULT, STRICT) for v in lint_text(prog.source, options=opts).violations}
        assert prog.rule in codes or not prog.must_report, (
            f"{name}: {prog.rule} not reported in default or strict mode ({codes})")
        ran = [i for i, o in _original(name).items() if o.error is None]
        assert ran, f"{name}: the original runs on no input"


def _program_params():
    return [pytest.param(name, mode, id=f"{name}-{mode}") for name in PROGRAMS for mode in SAFE_MODES]


@pytest.mark.parametrize("name,mode", _program_params())
def test_safe_fixes_preserve_runtime_behaviour(name, mode):
    fixed = _fixed(name, mode, unsafe=False)
    if fixed.text == PROGRAMS[name].source:
        return  # nothing applied: nothing can differ
    unsafe_applied = [v for v in fixed.applied if v.fix.safety != "safe"]
    assert not unsafe_applied, "fix_text(unsafe=False) applied unsafe fixes"
    diverged = _divergences(name, fixed.text)
    if diverged:
        report = "\n".join(f"  {i}: {why}" for i, why in diverged.items())
        pytest.fail(f"{name} [{mode}]: safe fixes ({_explain(fixed)}) change what working code does:\n{report}\n"
                    f"{_diff(PROGRAMS[name].source, fixed.text)}", pytrace=False)


@pytest.mark.parametrize("name,mode", _program_params())
def test_unsafe_fix_divergences_come_from_unsafe_fixes(name, mode):
    """With --unsafe-fixes a program may differ from the original (reported as information),
    but only because of a fix labelled unsafe: where the safe-only program agrees with the
    original, any difference must come with an applied unsafe fix."""
    fixed = _fixed(name, mode, unsafe=True)
    if fixed.text == PROGRAMS[name].source:
        return
    diverged = _divergences(name, fixed.text)
    if not diverged:
        return
    safe_only = _fixed(name, mode, unsafe=False)
    safe_diverged = _divergences(name, safe_only.text) if safe_only.text != PROGRAMS[name].source else {}
    unsafe_applied = [v for v in fixed.applied if v.fix.safety != "safe"]
    unexplained = {i: why for i, why in diverged.items() if i not in safe_diverged}
    assert not unexplained or unsafe_applied, (
        f"{name} [{mode}]: fixed with --unsafe-fixes, the program differs on inputs where the safe-only "
        f"program does not, yet every applied fix is labelled safe ({_explain(fixed)}): {unexplained}")
