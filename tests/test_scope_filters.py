"""The engine skips functions in which no enabled rule's text test (`Rule.scope_test`) sees a
trigger: a skipped function must never be one in which a rule reports.  Every rule example and
fixture is checked with and without the filter, with and without `--strict`."""

import ast
import glob
import os

import pytest

from conftest import FIXTURES, agrees_everywhere
from flake8_tensorcopy import engine
from flake8_tensorcopy.analysis.walker import Walker
from flake8_tensorcopy.rules import all_rules
from flake8_tensorcopy.rules.base import Options
from flake8_tensorcopy.rules.tns1 import NumpyFunctionOnGradTensor
from flake8_tensorcopy.rules.tns2 import CopyConstructFromTensor
from flake8_tensorcopy.rules.tns4 import InplaceOnLeaf

SOURCES = [(f"{rule.code}-{kind}-{i}", ex.code)
           for rule in all_rules() for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID))
           for i, ex in enumerate(examples)]
for _path in sorted(glob.glob(os.path.join(FIXTURES, "**", "*.py"), recursive=True)):
    with open(_path, encoding="utf-8") as _f:
        SOURCES.append((os.path.relpath(_path, FIXTURES), _f.read()))


def _findings(text, strict, filtered, monkeypatch):
    if not filtered:
        class Unfiltered(Walker):
            def __init__(self, tree, rules, context, scope_filter=None, *args, **kwargs):
                super().__init__(tree, rules, context, None, *args, **kwargs)

        monkeypatch.setattr(engine, "Walker", Unfiltered)
    try:
        result = engine.lint_text(text, options=Options(strict=strict))
    finally:
        monkeypatch.undo()
    return [(v.code, v.line, v.col, v.message) for v in result.violations]


def test_the_sources_exercise_the_filter(monkeypatch):
    """The filter skips functions of these sources (else the test below would prove nothing)."""
    filters = []

    class Watching(Walker):
        def __init__(self, tree, rules, context, scope_filter=None, *args, **kwargs):
            filters.append((tree, scope_filter))
            super().__init__(tree, rules, context, scope_filter, *args, **kwargs)

    monkeypatch.setattr(engine, "Walker", Watching)
    skipped = 0
    for _name, text in SOURCES:
        filters.clear()
        engine.lint_text(text)
        lines = text.splitlines()
        for tree, scope_filter in filters:
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    skipped += not scope_filter("\n".join(lines[node.lineno - 1 : node.end_lineno]))
    assert skipped >= 25


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize("name,text", SOURCES, ids=[n for n, _ in SOURCES])
def test_the_filter_loses_no_finding(name, text, strict, monkeypatch):
    assert _findings(text, strict, True, monkeypatch) == _findings(text, strict, False, monkeypatch)


def test_numpy_by_its_imported_names():
    test = NumpyFunctionOnGradTensor.scope_test(
        "import numpy\nfrom numpy import asarray, array as arr\nimport os, numpy.linalg as la\n"
        "from numpy import (\n    exp,\n    random,\n)\nto_array = numpy.asarray\n")
    for called in ("asarray(t)", "arr(t)", "la.norm(t)", "exp(t)", "random.choice(t)", "to_array(t)",
                   "numpy.asarray(t)", "np . mean (t)", "f = np.asarray"):
        assert test(f"def f(t):\n    return {called}\n"), called
    for not_called in ("np.float32", "x.asarray(t)", "my_asarray(t)", "dtype=np.float32)", "t.np.asarray(t)"):
        assert not test(f"def f(t):\n    return {not_called}\n"), not_called


def test_tensor_constructors_of_literals_are_skipped():
    for literal in ("torch.tensor([1, 2])", "torch.tensor([[1, 2],\n [3, 4]], dtype=d)", "torch.tensor(0.5)",
                    "x.new_tensor(-1e9)", "torch.tensor(1_000)"):
        assert not CopyConstructFromTensor.might_match_scope(literal), literal
    for data in ("torch.tensor(x)", "torch.tensor(1 - x)", "torch.tensor([x][0])", 'torch.tensor(["]"][0])',
                 "torch.tensor([1]) + torch.tensor(y)", "x.new_tensor(t, dtype=d)"):
        assert CopyConstructFromTensor.might_match_scope(data), data


def test_snapshots_of_a_function_that_updates_nothing_are_skipped_unless_the_file_steps(monkeypatch):
    # The snapshot domain tracks a function only where its own text may update a tensor, or in a
    # file that steps an optimizer (SnapshotDomain.active): elsewhere TNS501 and TNS502 find
    # nothing, and their scope tests say so.
    from flake8_tensorcopy.analysis.text_tests import may_update
    from flake8_tensorcopy.rules.tns5 import StateDictNotACopy, TensorSnapshotNotACopy

    kept = {TensorSnapshotNotACopy: "    w0 = model.fc.weight.detach()\n",
            StateDictNotACopy: "    best = model.state_dict()\n"}
    for rule, line in kept.items():
        quiet = "def f(model, x):\n" + line + "    out = model(x)\n    return w0 if x else best\n"
        for update in ("    model.fc.weight.add_(1)\n", "    model.fc.weight[0] = 1\n", "    out -= 1\n",
                       "    model.load_state_dict(s)\n", "    opt.step()\n"):
            updating = quiet.replace("    out = model(x)\n", "    out = model(x)\n" + update)
            assert rule.scope_test(updating)(updating), (rule.code, update)
        assert not rule.scope_test(quiet)(quiet), rule.code
        assert not rule.scope_any(quiet, rule.scope_test(quiet)), rule.code
        # An optimizer step anywhere in the file may be what a call of `f`'s updates.
        stepping = quiet + "\ndef train(opt):\n    opt.step()\n"
        assert rule.scope_test(stepping)(quiet), rule.code
    # A snapshot updated by a function of the file that steps: the file steps, the function is
    # walked, and the finding is there, with and without the filter.
    text = (
        "import torch\n"
        "from torch import nn\n\n"
        "def train_one_epoch(net, optimizer, x):\n"
        "    net(x).sum().backward()\n"
        "    optimizer.step()\n\n"
        "def run(x):\n"
        "    model = nn.Linear(4, 1)\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    w0 = model.weight.detach()\n"
        "    train_one_epoch(model, opt, x)\n"
        "    return w0.sum()\n"
    )
    run = text[text.index("def run"):]
    assert not may_update(run) and TensorSnapshotNotACopy.scope_test(text)(run)
    found = _findings(text, False, True, monkeypatch)
    assert found == _findings(text, False, False, monkeypatch)
    assert [(f[0], f[1]) for f in found] == [("TNS502", 11)]


def test_writes_through_aliases_are_looked_for_where_the_storage_domain_looks(monkeypatch):
    # The storage domain tracks a function only where its text calls `backward` or `grad`
    # (StorageDomain.active): TNS402 and TNS403 ask the same, a call with a blank before its
    # parenthesis too, and not the word in a comment.
    from flake8_tensorcopy.rules.tns4 import InplaceThroughData, InplaceThroughDetach

    comment = "def f(x):\n    # kept for backward compatibility\n    y = x.detach()\n    y.add_(1)\n"
    assert not InplaceThroughDetach.might_match_scope(comment)
    assert not InplaceThroughData.might_match_scope(comment.replace(".detach()", ".data"))
    text = (
        "import torch\n\n"
        "def f(x, w):\n"
        "    y = torch.sigmoid(w * x)\n"
        "    y.detach().zero_()\n"
        "    torch.autograd.grad (y.sum(), w)\n"
    )
    assert InplaceThroughDetach.might_match_scope(text)
    found = _findings(text, False, True, monkeypatch)
    assert found == _findings(text, False, False, monkeypatch)
    assert [(f[0], f[1]) for f in found] == [("TNS402", 5)]


def test_inplace_writes_the_rule_never_reports_are_skipped():
    head = "def f(m):\n    w = nn.Parameter(x)\n"
    for write in ("w.requires_grad_(False)", "w.data.normal_()", "w.grad.zero_()", "w.data[0] = 1"):
        assert not InplaceOnLeaf.might_match_scope(head + f"    {write}\n"), write
    for write in ("w.add_(1)", "w.data.zero_(); w.add_(1)", "w.data_scale.mul_(2)", "w[0] = 1", "w -= 1"):
        assert InplaceOnLeaf.might_match_scope(head + f"    {write}\n"), write
    # A function that makes a leaf, but writes to something else: a tensor it makes, another
    # name, a call's result (`torch.empty(n).uniform_()`, `init.zeros_(...)` of a module that
    # is not torch).
    for write in ("A = torch.empty(3).uniform_(0, 1)", "x = torch.zeros(3); x[0] = 1", "init.zeros_(v)",
                  "v = m.x\n    v += 1"):
        assert not InplaceOnLeaf.might_match_scope(head + f"    {write}\n"), write
    # ... but to what it makes, or to a name bound to it, at any depth, or tested to be one.
    for write in ("nn.Parameter(x).normal_()", "v = w\n    u = [v]\n    u[0].add_(1)",
                  "for p in list(m.parameters()):\n        p.zero_()", "x.requires_grad = True\n    x[0] = 1",
                  "if isinstance(x, nn.Parameter):\n        x.zero_()", "with w as v:\n        v += 1"):
        assert InplaceOnLeaf.might_match_scope(head + f"    {write}\n"), write
    # A parameter annotated as one (quoted too), not another parameter of the same `def`.
    assert InplaceOnLeaf.might_match_scope('def f(x, w: "nn.Parameter"):\n    w.zero_()\n')
    assert not InplaceOnLeaf.might_match_scope("def f(x: torch.Tensor, w: nn.Parameter):\n    x.copy_(w)\n")
    # A write through a local that names a weight, where the function makes no leaf itself.
    assert InplaceOnLeaf.might_match_scope("def f():\n    w = layer.weight\n    w[0] = 1\n")
    assert not InplaceOnLeaf.might_match_scope("def f():\n    w = layer(x)\n    w[0] = 1\n")


CHAIN = '''\
import torch


def binary_mask_to_rle(mask):
    if is_torch_tensor(mask):
        mask = mask.numpy()
    return mask


def convert_segmentation_to_rle(segmentation):
    segment_ids = torch.unique(segmentation)
    run_length_encodings = []
    for idx in segment_ids:
        mask = torch.where(segmentation == idx, 1, 0)
        rle = binary_mask_to_rle(mask)
        run_length_encodings.append(rle)
    return run_length_encodings


def compute_segments(mask_probs):
    segmentation = torch.zeros((4, 4), dtype=torch.int32, device=mask_probs.device)
    return segmentation, []


class Processor:
    def post_process_instance_segmentation(self, outputs):
        masks_queries_logits = outputs.pred_masks
        mask_probs = masks_queries_logits.sigmoid()
        results = []
        for i in range(2):
            segmentation, segments = compute_segments(mask_probs=mask_probs[i])
            segmentation = convert_segmentation_to_rle(segmentation)
            results.append({"segmentation": segmentation, "segments_info": segments})
        return results
'''


def test_callers_of_a_reporting_function_are_walked_with_what_their_callers_pass(monkeypatch):
    """What `binary_mask_to_rle` is handed comes from two callers up (transformers' DETR image
    processors): `convert_segmentation_to_rle` and `post_process_instance_segmentation`, which no
    rule's test admits (TNS502's, for the snapshot helper `binary_mask_to_rle` called, only
    where something may update a tensor), are walked first with rules off, for what they pass
    on: the fact reaches down the chain whatever the budget of call-site surveys left.  `compute_segments` (called, calling
    nothing that reports) and the module are not walked so."""
    walked = []
    real = Walker._run_function

    def spy(self, func, parent, no_grad, cls, dispatch, given=None, sites=True, passer=False, **kw):
        if dispatch or passer:
            walked.append((func.name, "report" if dispatch else "pass on"))
        return real(self, func, parent, no_grad, cls, dispatch, given, sites, passer, **kw)

    monkeypatch.setattr(Walker, "_run_function", spy)
    found = engine.lint_text(CHAIN).violations
    assert walked == [("post_process_instance_segmentation", "pass on"), ("convert_segmentation_to_rle", "pass on"),
                      ("binary_mask_to_rle", "report")]
    assert [(v.code, v.line) for v in found] == [("TNS102", 6)] and "passed at line 15" in found[0].message


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_the_chain_is_what_the_unfiltered_walk_finds(strict, monkeypatch):
    assert _findings(CHAIN, strict, True, monkeypatch) == _findings(CHAIN, strict, False, monkeypatch)


# What `_inplace_starts` finds, as one pattern (slow: tried at every position of every function).
_WRITES = __import__("re").compile(r"\]\s*=(?=[^=])|[-+*/%@&|^]=|//=|\*\*=|>>=|<<=|inplace=True|(?<=[^\W_])_\(")


def _reference_starts(text):
    return sorted(m.start() - (1 if m.group().startswith("_(") else 0) for m in _WRITES.finditer(text))


def test_inplace_write_starts_are_those_of_the_one_pattern():
    from flake8_tensorcopy.rules.tns4 import _inplace_starts

    def agree(text):
        assert sorted(_inplace_starts(text)) == _reference_starts(text), text

    cases = ["a[0] = 1", "a[0] == 1", "a[0]=1", "a[0]\n= 1", "a[0] =", "x //= 2", "x **= 2", "x <<= 1",
             "x >>= 1", "x <= 1", "x >= 1", "a - = 1", "x != 1", "f(inplace=True)", "w.add_(1)", "_(1)",
             "x[:]-=1", "a[0]==-1", "x=-=1", "y ^= z", "p @= q", "m |= n", "s %= t", "a&=b"]
    agrees_everywhere(agree, [text for _name, text in SOURCES] + cases, "ab_[]()=-+*/%@&|^<> \n\tinplace=True")


def test_tensor_calls_are_those_of_the_one_pattern():
    """tns2._tensor_calls finds by a search of `tensor(` what one pattern (slow: tried at every
    position) finds: `tensor(` after no word character, and `new_tensor(`."""
    import re

    from flake8_tensorcopy.rules.tns2 import _tensor_calls

    pattern = re.compile(r"(?<![\w])tensor\(|new_tensor\(")

    def agree(text):
        assert list(_tensor_calls(text)) == [m.end() for m in pattern.finditer(text)], text

    agrees_everywhere(agree, [text for _name, text in SOURCES] + [
        "tensor(", "torch.tensor(x)", "as_tensor(x)", "x.new_tensor(y)", "renew_tensor(", "xtensor(new_", "étensor(",
        "é tensor(", "tensor(tensor(", "9tensor("], "tensor(new_ xé9.\n")


def test_the_prefilter_asks_each_substring_once_and_agrees_with_the_rules():
    """engine._prefiltered shares the substring searches of the rules' plain pre-filters; it
    selects exactly the rules whose `might_match` says yes."""
    rules = all_rules()
    texts = [text for _name, text in SOURCES]
    texts += ["", "numpy", ".numpy(", "x.numpy()", "import numpy as np", "np.", "w.detach()", "tensor(x)"]
    for text in texts:
        for part in (text, text[: len(text) // 2], text[len(text) // 2 :]):
            assert engine._prefiltered(rules, part) == [c for c in rules if c.might_match(part)], part[:80]


class _Counting(Walker):
    scopes: list = []

    def _walk_scope(self, scope, *args, **kwargs):
        _Counting.scopes.append(scope.kind)
        return super()._walk_scope(scope, *args, **kwargs)


NOTHING_TO_REPORT = '''\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))

    def forward(self, x):
        return x * self.w
'''


def _parts(text):
    """The texts the walker asks the scope filter about: each function (nested ones too), and
    the code outside the functions of the module and of its classes."""
    from flake8_tensorcopy.rules.base import Context
    from flake8_tensorcopy.source import LineIndex

    tree = ast.parse(text)
    asked = []
    walker = Walker(tree, [], Context(LineIndex(text), Options()), lambda part: asked.append(part) and False)
    walker._anything_admitted()
    lines = text.splitlines(keepends=True)
    functions = ["".join(lines[n.lineno - 1 : n.end_lineno]) for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return asked[-1:] + functions


def test_a_file_no_rule_may_admit_anything_of_is_one_whose_parts_none_admits():
    """Rule.scope_any says yes of every file of which the rule's scope test admits a function
    or the code outside them: where no rule's does, the file is not even parsed."""
    admitted = 0
    for name, text in SOURCES:
        parts = _parts(text)
        for cls in all_rules():
            test = cls.scope_test(text)
            if any(test(part) for part in parts):
                admitted += 1
                assert cls.scope_any(text, test), (name, cls.code)
    assert admitted > 300
    # TNS401's test reads a function's header and counts its lines: its own answer for the file.
    for write in ("w.add_(1)", "w[0] = 1", "F.relu(w, inplace=True)", "w -= 1"):
        text = f"def f(w):\n    {write}\n\n\nf(p)\n"
        assert InplaceOnLeaf.scope_test(text)(text) and InplaceOnLeaf.scope_any(text, None), write
    for write in ("w.data.zero_()", "w.requires_grad_(False)", "w = w + 1", "d['k'] = 1"):
        assert not InplaceOnLeaf.scope_any(f"def f(w):\n    {write}\n", None), write


def test_a_test_asked_by_offsets_says_what_it_says_of_the_lines():
    """A scope test that answers by offsets (`test.span(start, end)`, from what it found in the
    whole text) says of each function, and of any run of whole lines, what it says of their
    text; so does the engine's filter of all the rules' tests."""
    from flake8_tensorcopy.source import LineIndex

    asked = spanned = 0
    for name, text in SOURCES:
        starts = LineIndex(text).starts + [len(text)]
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        ranges = [(starts[n.lineno - 1], starts[n.end_lineno] if n.end_lineno < len(starts) else len(text))
                  for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        ranges += [(starts[i], starts[j]) for i in range(0, len(starts) - 1, 3) for j in range(i + 1, len(starts), 5)]
        for cls in all_rules():
            test = cls.scope_test(text)
            span = getattr(test, "span", None)
            if span is None:
                continue
            for start, end in ranges:
                asked += 1
                spanned += span(start, end)
                assert span(start, end) == test(text[start:end]), (name, cls.code, start, end)
    assert asked > 10_000 and spanned > 100
    # The engine's filter, with the tests that do and do not answer by offsets.
    seen = []
    real = engine.any_admitted

    def checking(text, functions, admit, known):
        functions = list(functions)
        if hasattr(admit, "span"):
            seen.append(len(functions))
            for _line, start, end, _first in functions:
                assert admit.span(start, end) == admit(text[start:end])
        return real(text, functions, admit, known)

    for _name, text in SOURCES:
        if len(text) >= 2000:
            engine.any_admitted = checking
            try:
                engine.lint_text(text)
            finally:
                engine.any_admitted = real
    assert sum(seen) > 20


def test_a_file_where_the_filter_admits_nothing_is_not_walked(monkeypatch):
    """No function and no code outside functions passes a rule's scope test: the file is not
    walked (nor parsed).  Code outside functions that passes one is walked, and reported."""
    monkeypatch.setattr(engine, "Walker", _Counting)
    _Counting.scopes.clear()
    assert engine.lint_text(NOTHING_TO_REPORT).violations == []
    assert _Counting.scopes == []
    text = NOTHING_TO_REPORT + "\n\nnet = Net()\nnet.w.add_(1)\n"
    assert [(v.code, v.line) for v in engine.lint_text(text).violations] == [("TNS401", 15)]
    assert _Counting.scopes[0] == "module"
    # The same write in a function: the class names the leaf attribute, the function writes it.
    text = NOTHING_TO_REPORT + "\n\ndef main():\n    net = Net()\n    net.w.add_(1)\n"
    assert [(v.code, v.line) for v in engine.lint_text(text).violations] == [("TNS401", 16)]
    # A function the filter admits is walked, in a class, in an `if` at the module's level.
    _Counting.scopes.clear()
    text = NOTHING_TO_REPORT + "\n\nif True:\n    class Step:\n        def run(self, net):\n            net.w.add_(1)\n"
    engine.lint_text(text)
    assert "function" in _Counting.scopes


def test_inplace_writes_of_no_leaf_from_the_callers_are_skipped():
    """A short function's writes to its parameters are analysed (its callers may pass a leaf),
    but not where no call of the file passes the parameter anything: `forward` and the dunders
    but `__init__` (called by nn.Module and Python), a function the file never calls by its
    name, `*args` and `**kwargs`.  Neither are
    annotated assignments, the signature's defaults, nor an item of a container that is not an
    attribute of `self` (`cache.seen[self.i] = x`)."""
    skipped = [
        "def forward(self, hidden_states):\n    hidden_states *= 2\n    return hidden_states\n",
        "def __call__(self, x):\n    x[0] = 1\n",
        "def f(self, **kwargs):\n    kwargs['a'] = 1\n",
        "def f(self, *args):\n    args[0][1] = 1\n",
        "def f(totals):\n    seen: dict[str, int] = {}\n    return seen\n",
        "def f(x: list[int] = None, y: dict[str, int] = {}):\n    return x, y\n",
        "def f(self, x):\n    cache.seen[self.i] = x\n",
        "def f(self, x):\n    out = x + 1\n    out[self.i] = 0\n",
        # Annotated assignments whose annotation ends in `]`, in functions and outside them.
        "class Config:\n    layers: list[int] = [1]\n    table: dict[str, list[int]] = {}\n",
        "def f(self):\n    self.fns: dict[str, int] = {}\n",
        # A string key indexes no tensor (`model_inputs["pixel_values"] = pixel_values`).
        "def f(self, model_inputs, pixel_values):\n    model_inputs['pixel_values'] = pixel_values\n",
        "def f(kw, n):\n    kw[f'x{n}'] += 1\n",
        # A module made with `inplace=True` writes nothing; nor an item of `self.x` where the file
        # binds `self.x` only to literals.
        "def __init__(self, config):\n    self.act = nn.ReLU(inplace=True)\n"
        "    self.drop = nn.Dropout(p, inplace=True)\n",
        "class C:\n    def __init__(self):\n        self.cache = {}\n        self.n = 0\n\n"
        "    def put(self, k, v):\n        self.cache[k] = v\n        self.n += 1\n",
        # Nor where every binding of `self.x` in the file is a module, a new tensor made there
        # (that nothing after the call makes a leaf), or what `self.x` itself holds (a cache's
        # state); a `setattr(self, f"{kind}_inv_freq", ...)` sets none of them.
        "class C:\n    def __init__(self):\n        self.layers = nn.ModuleList([])\n"
        "        self.state = torch.zeros(\n            2, 3, dtype=torch.long)  # zeros\n"
        "        self.keys = None\n        self.fns: dict = {}\n"
        "        setattr(self, f'{kind}_inv_freq', nn.Buffer(x))\n\n"
        "    def put(self, k, v, i):\n        self.layers[k] = v\n        self.state.copy_(v)\n"
        "        self.keys = self.keys.index_select(0, i)\n        self.keys[0] = 1\n        self.fns[k] = v\n",
        # A loop's target bound to the elements of a local, not of a parameter.
        "def pad(self, tensors):\n    out = torch.zeros(3, 4)\n    for t, row in zip(tensors, out):\n"
        "        row[: len(t)].copy_(t)\n    return out\n",
        "def f(x, n):\n    for i in range(n):\n        x = x + 1\n    buf = x.clone()\n"
        "    for i, row in enumerate(buf):\n"
        "        row += i\n",
        # A local named for a weight that the function computes.
        "def forward(self, q, k, mask):\n    attn_weights = torch.matmul(q, k)\n    attn_weights += mask\n"
        "    scores = attn_weights.softmax(-1)\n    top_weights, idx = scores.topk(2)\n"
        "    top_weights /= top_weights.sum()\n",
    ]
    for text in skipped:
        assert not InplaceOnLeaf.might_match_scope(text), text
    analysed = [
        "def helper(hidden_states):\n    hidden_states *= 2\n",
        "def __init__(self, w):\n    w[0] = 1\n",
        "def f(p):\n    y = p.add_(1)\n",
        "def f(x, p):\n    x = F.relu(p, inplace=True)\n",
        "def f(self, x):\n    self.seen[x] = 1\n",
        "def f(self):\n    (self.w).add_(1)\n",
        "def f(self):\n    self.scale -= 1\n",
        "def f(p):\n    if p is not None: p[0] = 1\n",
        # `else:` opens a clause, not an annotation; a subscript with a name, not a string.
        "def f(p, c):\n    if c: pass\n    else: p[0] = 1\n",
        "def f(p, k):\n    p[k] = 1\n",
        "def f(x, w):\n    y = F.relu(w, inplace=True)\n",
        # `self.x` bound to a literal and to something else, or never bound in the file.
        "class C:\n    def __init__(self, w):\n        self.w = None\n        self.w = w\n\n"
        "    def step(self):\n        self.w -= 1\n",
        "def step(self):\n    self.scale[0] = 1\n",
        # ... or to a value that may be one, on any line of the statement, or after the call.
        *(f"class C:\n    def __init__(self, x):\n        self.s = {value}\n\n"
          "    def step(self):\n        self.s[0] = 1\n"
          for value in ("torch.zeros(\n            3, requires_grad=True)", "torch.zeros(3).requires_grad_()",
                        "nn.Buffer(x)", "nn.Parameter(x)", "torch.zeros(3) if x else x", "x.clone()",
                        "self.t[0]", "torch.zeros(3)\n        setattr(self, name, x)",
                        "torch.zeros(3)\n        setattr(self, f's{n}', x)",
                        "torch.zeros(3)\n        obj.s = nn.Parameter(x)",
                        # What `self.s` holds, where it may be a leaf, or with more after it.
                        "nn.Linear(2, 2)\n        self.s = self.s.weight", "[x]\n        self.s = self.s[0]",
                        "None\n        self.s = self.s[0] if x else x")),
        # A local named for a weight that names one, is a loop's or an unpacking's target.
        "def f(lin):\n    weight, bias = lin.weight, lin.bias\n    weight[0] = 1\n",
        "def f(lin):\n    for weight in (lin.weight,):\n        weight.add_(1)\n",
        "def f(lin):\n    w = lin.weight\n    attn_weights = w\n    attn_weights += 1\n",
        "def f(m):\n    weights = m.weight\n    weights = weights\n    weights.zero_()\n",
        # The elements of a parameter it loops over (`model.parameters()` from the callers), at
        # any depth of loops.
        "def sgd(params, lr):\n    for p in params:\n        p -= lr * p.grad\n",
        "def decay(named, k):\n    for name, p in named:\n        p.mul_(k)\n",
        "def step(groups, lr):\n    for g in groups:\n        for p in g['params']:\n"
        "            p.add_(p.grad, alpha=-lr)\n",
        "def f(params, lr):\n    for i, p in enumerate(params):\n        p.sub_(lr)\n",
        "def f(names, params):\n    for n, p in zip(names, params):\n        p.zero_()\n",
    ]
    for text in analysed:
        # (Called by the file: what the calls pass may be a leaf.)
        called = text + "\n\n" + text.split("def ", 1)[1].split("(", 1)[0] + "(a, b)\n"
        assert InplaceOnLeaf.might_match_scope(called), called
    # A helper the file never calls by its name (`_init_weights`, given to `self.apply`) gets
    # nothing from the file's calls; its writes to its parameters are skipped, but where
    # another module calls it (through.py asks `through_scope_test`).
    for text in analysed[:1] + analysed[2:4] + analysed[8:11] + analysed[-5:]:
        assert not InplaceOnLeaf.might_match_scope(text), text
        assert InplaceOnLeaf.through_scope_test(text)(text), text


LEAVES_BY_NAME = [
    # Each writes to a leaf that requires grad where the filter reads more than a name.
    # A local bound to the parameters, a name whose requires_grad is set, a parameter that
    # `isinstance` tells is one.
    "import torch\nfrom torch import nn\n\n\ndef f():\n    m = nn.Linear(2, 2)\n    params = list(m.parameters())\n"
    "    for p in params:\n        p.zero_()\n\n\nf()\n",
    "import torch\n\n\ndef f():\n    w = torch.zeros(3)\n    w.requires_grad = True\n    v = w\n    v[0] = 1\n\n\nf()\n",
    "import torch\nfrom torch import nn\n\n\ndef reset(m):\n    if isinstance(m, nn.Parameter):\n        m.zero_()\n\n\n"
    "reset(nn.Parameter(torch.ones(2)))\n",
    # A local alias of an attribute the file's class makes a parameter, in another method.
    "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.w = nn.Parameter(torch.ones(3))\n\n    def bump(self):\n        w = self.w\n        w.add_(1)\n\n\n"
    "M().bump()\n",
    "import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\n\n\ndef f():\n"
    "    weight, bias = lin.weight, lin.bias\n    weight[0] = 1\n\n\nf()\n",
    "import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\n\n\ndef f():\n"
    "    for weight in (lin.weight,):\n        weight.add_(1)\n\n\nf()\n",
    # An unpacking binds the alias, whatever its name: at the module's level and in a function.
    "import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\nw, b = lin.weight, lin.bias\nb.add_(1)\n",
    "import torch\nfrom torch import nn\n\n\ndef f(lin):\n    w, b = lin.weight, lin.bias\n    b += 1\n\n\n"
    "f(nn.Linear(2, 2))\n",
    "import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\n\n\ndef f():\n"
    "    w: torch.Tensor = lin.weight\n    w[0] = 1\n\n\nf()\n",
    "import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\n\n\ndef f():\n"
    "    w = lin.weight\n    attn_weights = w\n    attn_weights += 1\n\n\nf()\n",
    # A helper's loop over the parameters a call passes.
    "import torch\nfrom torch import nn\n\n\ndef sgd(params, lr):\n    for p in params:\n        p -= lr\n\n\n"
    "sgd(nn.Linear(2, 2).parameters(), 0.1)\n",
    "import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.table = {}\n        self.scale = None\n"
    "        self.scale = nn.Parameter(torch.ones(3))\n\n    def bump(self):\n        self.table['n'] = 1\n"
    "        self.scale += 1\n\n\nM().bump()\n",
    # A module's tensor made a leaf by setting its `requires_grad`, written by a function.
    "import torch\nw = torch.zeros(3)\nw.requires_grad = True\n\n\ndef step():\n    w.add_(1)\n\n\nstep()\n",
]


def test_a_module_s_leaf_is_named_whichever_way_its_requires_grad_is_set():
    from flake8_tensorcopy.rules.tns4 import _leaf_names

    for line, named in (("w.requires_grad = True", True), ("w.requires_grad=flag", True),
                        ("w.requires_grad_()", True), ("w = torch.ones(3, requires_grad=True)", True),
                        ("w.requires_grad = False", False), ("if w.requires_grad == x:", False),
                        ("print(w.requires_grad)", False)):
        assert ("w" in _leaf_names("import torch\n" + line + "\n")) is named, line


@pytest.mark.parametrize("text", LEAVES_BY_NAME)
def test_writes_the_sharper_filter_keeps_are_reported(text, monkeypatch):
    """The leaf reaches the write through an unpacking, a loop, a chain of locals or an attribute
    bound to a literal and to a parameter: reported, with the filter as without it."""
    found = _findings(text, False, True, monkeypatch)
    assert [code for code, *_ in found] == ["TNS401"], found
    assert found == _findings(text, False, False, monkeypatch)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad|view of a leaf Variable"):
        exec(compile(text, "<leaf>", "exec"), {})


def test_backward_calls_are_those_of_the_one_pattern():
    """storage._calls_backward (the storage domain's text test of a scope) finds by a search
    what `\\b(?:backward|manual_backward|grad)\\s*\\(` finds (slow: a pattern that starts with a
    word boundary is tried at every position)."""
    import re

    from flake8_tensorcopy.analysis.storage import _calls_backward

    pattern = re.compile(r"\b(?:backward|manual_backward|grad)\s*\(")

    def agree(text):
        assert _calls_backward(None, text) == (pattern.search(text) is not None), text

    agrees_everywhere(agree, [text for _name, text in SOURCES] + [
        "loss.backward()", "self.manual_backward(loss)", "xmanual_backward(l)", "_backward(x)",
        "torch.autograd.grad (y, x)", "requires_grad(", "no_grad()", "backward", "grad\n(", "ébackward("],
        ["backward", "grad", "manual_", "_", "x", "(", " ", "\n", ".", "é"], max_size=8)


def test_a_total_starts_from_zero_wherever_the_one_pattern_says_so():
    """text_tests._starts_from_zero looks at every occurrence of the name (no pattern compiled
    for each): it finds each binding to a zero that `name[ \\t]*(?:,[^=\\n]*)?=(?!=)` does."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flake8_tensorcopy.analysis import text_tests as acc

    def reference(name, text):
        for m in re.finditer(re.escape(name) + r"[ \t]*(?:,[^=\n]*)?=(?!=)", text):
            line = text.rfind("\n", 0, m.start()) + 1
            if acc._TARGETS_BEFORE.fullmatch(text, line, m.start()) is None:
                continue
            if acc._ZERO.match(text, m.end()) is not None:
                return True
            if "," in text[line:m.end()]:
                end = text.find("\n", m.end())
                rhs = text[m.end():end if end >= 0 else len(text)]
                if any(acc._ZERO.fullmatch(part.strip()) or acc._ZERO.match(part) for part in rhs.split(",")):
                    return True
        return False

    cases = ["total = 0", "    total = 0.0\n", "total: float = 0", "a, total = x, 0", "total, n = 0, 0",
             "total = torch.zeros(3)", "total = torch.tensor(0.)", "total = 1", "subtotal = 0", "total == 0",
             "total = x\ntotal = 0", "x.total = 0", "totals = 0", "total = 0x1", "a, total = 0.5, y"]
    for text in cases:
        assert acc._starts_from_zero("total", text) == reference("total", text), text
    for _name, text in SOURCES:
        for name in set(re.findall(r"(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*\+?=", text)):
            assert acc._starts_from_zero(name, text) == reference(name, text), (name, _name)

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(["total", "t", " ", ",", "=", "==", "0", "0.0", "1", "\n", "x", "torch.zeros(",
                                     ":", "sub"]), max_size=10))
    def fuzz(parts):
        text = "".join(parts)
        if reference("total", text):
            assert acc._starts_from_zero("total", text), text

    fuzz()


def test_names_before_a_call_are_those_of_the_patterns_tried_everywhere():
    """snapshots._STEP_TEXT, gan._CALLEE and TNS401's _INPLACE_ON and _BEFORE_REQUIRES_GRAD_CALL
    are tried once a run of word characters (and dots), not at each of its characters
    (source.BEFORE_FIRST_LETTER): they find the names that the same patterns tried at every
    position find, at the same places."""
    import re

    from flake8_tensorcopy.analysis.gan import _CALLEE
    from flake8_tensorcopy.analysis.snapshots import _STEP_TEXT
    from flake8_tensorcopy.rules.tns4 import _BEFORE_REQUIRES_GRAD_CALL, _INITIALISING, _INPLACE_ON

    pairs = [(_STEP_TEXT, re.compile(r"([A-Za-z_][\w.]*)\.step\(")),
             (_CALLEE, re.compile(r"([A-Za-z_][\w.]*)\s*\(")),
             (_INPLACE_ON, re.compile(r"(\w+)(?:\.\w+)*(?:\[[^\]\n]*\])?\.(?:" + "|".join(_INITIALISING) + r")\("))]
    before = re.compile(r"([A-Za-z_]\w*)[ \t]*\.[ \t]*$")

    def agree(text):
        for fast, slow in pairs:
            assert [(m.span(1), m.end()) for m in fast.finditer(text)] == \
                [(m.span(1), m.end()) for m in slow.finditer(text)], (slow.pattern, text)
        for end in range(len(text) + 1) if len(text) < 100 else (len(text),):
            fast, slow = _BEFORE_REQUIRES_GRAD_CALL.search(text, 0, end), before.search(text, 0, end)
            assert (fast and fast.span(1)) == (slow and slow.span(1)), (text, end)

    agrees_everywhere(agree, [text for _name, text in SOURCES] + [
        "opt.step()", "self.opt_d.step()", "9opt.step(", "é.step(", "éopt.step(", "a..step(", "x.y.step(.step(",
        "f (x)", "a.b(c.d(", "_.step(", "9.step(", "1a2b.step(", "٣x(", "ab12" * 50 + ".step(",
        "w.zero_()", "9w[0].fill_(1)", "éw .requires_grad_(", "3x.\n", "ab1 . "],
        ["opt", ".", "step", "(", "_", "9", "é", "٣", " ", "\n", "x", "a.b", ".zero_(", "[0]", "\t"])


def test_the_first_loop_is_where_the_one_pattern_finds_it():
    """text_tests._loop_end finds by a search what `\\b(?:for|while)\\b` finds (slow: a pattern
    that starts with a word boundary is tried at every position)."""
    import re

    from flake8_tensorcopy.analysis.text_tests import _loop_end

    pattern = re.compile(r"\b(?:for|while)\b")

    def agree(text):
        m = pattern.search(text)
        assert _loop_end(text) == (m.end() if m is not None else -1), text

    agrees_everywhere(agree, [text for _name, text in SOURCES] + [
        "for x in y:", "def forward(self):\n    for i in r:", "while True:", "xfor", "for_", "_while",
        "éfor", "forward\nwhile 1: pass\nfor x in y: pass", "format(while)", "fo r", ""],
        ["for", "while", "ward", "é", "_", "x", " ", "\n", "(", "f", "w"], max_size=8)


def test_numpy_aliases_are_those_of_the_one_pattern():
    """tns1._module_aliases finds the names that `^(\\w+)[ \\t]*=[ \\t]*(\\w+)[ \\t]*\\.` (one
    match a line) binds to an attribute of a NumPy module, trying it only where one is named."""
    from flake8_tensorcopy.rules.tns1 import _MODULE_ALIAS, _module_aliases

    modules = frozenset({"np", "numpy", "N"})

    def agree(text):
        expected = {m.group(1) for m in _MODULE_ALIAS.finditer(text) if m.group(2) in modules}
        assert _module_aliases(text, modules) == expected, text

    agrees_everywhere(agree, [text for _name, text in SOURCES] + [
        "arr = np.asarray", "arr=np .asarray\n", "x = inp.y", "x = numpy\t.y", "a = N.b", "a = xN.b",
        "  a = np.b", "a = np_.b", "a = np", "é = np.x", "a = (np.x)"],
        ["np", "numpy", "N", "a", "_", " ", "\t", "=", ".", "\n", "x", "é"], max_size=10)


def test_the_device_a_string_names_is_found_the_same_without_reading_most_strings():
    # evaluate._device_of_string returns "unknown" at once for a string whose first character
    # cannot start a device name once blanks are stripped and case is folded (most strings of a
    # large literal, such as transformers' model mappings).  It must agree with reading every
    # string whole, whatever the first character: ASCII and Unicode blanks included.
    from flake8_tensorcopy.analysis.evaluate import _device_of_string, _named_device
    from flake8_tensorcopy.analysis.facts import Device

    tails = ("", "cuda", "CUDA:1", "uda", "pu", "PU:0", "ps", "la", "eta", "rivateuseone", " cpu ")
    named = 0
    for code in range(0x3100):
        for tail in tails:
            s = chr(code) + tail
            assert _device_of_string(s) == _named_device(s), repr(s)
            named += _named_device(s) is not Device.UNKNOWN
    assert named > 100  # (the tails name devices after many first characters: blanks, letters)


def test_a_test_rules_share_is_asked_once_a_function(monkeypatch):
    """TNS103, TNS104 and TNS105 share one scope test: the engine asks it once of a function,
    not once a rule."""
    from flake8_tensorcopy.rules import tns1
    from flake8_tensorcopy.source import kept_for_the_last_text

    text = "import numpy as np\nimport torch\n\n" + "".join(
        f"def f{i}(x):\n    return np.float32\n\n" for i in range(5)) + "y = np.asarray(torch.ones(2))\n"
    assert tns1.NumpyFunctionOnGradTensor.scope_test(text) is tns1.NumpyReductionOnTensor.scope_test(text)
    asked = []

    def counting(text):
        test = tns1._numpy_scope_test_of(text)
        return lambda segment: asked.append(segment) or test(segment)

    monkeypatch.setattr(tns1, "_numpy_scope_test", kept_for_the_last_text(counting))
    codes = {"TNS103", "TNS104", "TNS105"}
    assert codes <= {cls.code for cls in all_rules() if cls.scope_test.__func__ is tns1._NumpyFunctionRule.scope_test.__func__}
    engine.lint_text(text, [cls for cls in all_rules() if cls.code in codes])
    functions = [s for s in asked if s.startswith("def ")]
    assert len(functions) == len(set(functions)) == 5


def test_a_meter_line_is_found_in_a_module_s_bytes_wherever_the_whole_text_pattern_finds_one():
    """text_tests.METER_BYTES tries `_SELF_ADD` on the lines that hold `+=` only: it finds a
    `self.sum += val * n` line in a module's bytes exactly where the pattern searched over the whole
    bytes does (line ends `\\n`, `\\r\\n`, a lone `\\r`, the end of the text)."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flake8_tensorcopy.analysis import text_tests as acc

    whole = re.compile(acc._SELF_ADD.encode())
    cases = [b"self.sum += val * n\n", b"self.sum += val\r\n", b"  self.n += k  # count\r\nx = 1\n",
             b"self.sum += val", b"self.sum += val\rx", b"self.sum += x.item()\n", b"if a: self.n += k\n",
             b"x = 1\nself.sum += val * n # \xc3\xa9\r\n", b"self.sum +=\nval\n", b"y += 1\n"]
    assert [whole.search(c) is not None for c in cases] == [True, True, True, True, False, False, True, True,
                                                            False, False]
    for data in cases:
        assert (acc.METER_BYTES.search(data) is not None) == (whole.search(data) is not None), data
    for _name, text in SOURCES:
        data = text.encode("utf-8")
        assert (acc.METER_BYTES.search(data) is not None) == (whole.search(data) is not None), _name

    @settings(max_examples=500, deadline=None)
    @given(st.lists(st.sampled_from([b"self.", b"sum", b"n", b" ", b"\t", b"+=", b"+", b"=", b"val", b"*", b"#",
                                     b"c", b"\n", b"\r\n", b"\r", b"x.item()", b"(", b"\xc3\xa9", b"1"]),
                    max_size=14))
    def same(parts):
        data = b"".join(parts)
        assert (acc.METER_BYTES.search(data) is not None) == (whole.search(data) is not None), data

    same()


def test_a_literal_is_found_by_its_pattern_where_a_substring_search_finds_it():
    """source.find_literal / literal_search (the pre-filters' needles, TNS503's `+=`, the first
    `for` / `while`) find a needle where `str.find` and `bytes.find` do, regular expression
    characters, non-ASCII text and start offsets included; the kept patterns stay bounded."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flake8_tensorcopy import source

    pieces = ["np.", "npx", ".numpy(", "numpy", "(", ")", ".", "+", "+=", "*", "[", "]", "\\", "?", "é", "\U0001f917",
              "\n", " ", "a", "while", "_while"]

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(pieces), max_size=12), st.lists(st.sampled_from(pieces), min_size=1, max_size=3),
           st.integers(min_value=0, max_value=30))
    def same(parts, needle_parts, start):
        text, needle = "".join(parts), "".join(needle_parts)
        assert source.find_literal(text, needle, start) == text.find(needle, start), (text, needle, start)
        assert (source.literal_search(needle)(text) is not None) == (needle in text)
        assert source.has_literal(text, needle) == (needle in text)
        data, raw = text.encode("utf-8"), needle.encode("utf-8")
        assert source.find_literal(data, raw, start) == data.find(raw, start), (data, raw, start)

    same()
    assert source.word_positions("for_ x format for", "for", first=True) == [14]
    assert source.word_positions("no loop here", "while", first=True) == []
    for i in range(5000):
        source.literal_search(f"needle{i}")
    assert len(source._LITERALS) <= 4096


def test_a_pattern_that_holds_the_pre_filter_s_substrings_needs_no_substring_test_in_front():
    """TNS201, TNS301, TNS501 and TNS502 test a file by their pattern alone: each match of it holds
    the substrings the test used to look for first, so the answer is the one with them in front."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from flake8_tensorcopy.analysis import text_tests
    from flake8_tensorcopy.rules import tns2, tns3

    before = [
        (text_tests.might_alias_tensor,
         lambda t: ("detach()" in t or ".data" in t or "numpy()" in t or ".cpu()" in t or "cpu\")" in t or "cpu')" in t)
         and text_tests._KEPT_ALIAS.search(t) is not None),
        (text_tests.might_keep_state_dict,
         lambda t: "state_dict(" in t and text_tests._STATE_DICT_CALL.search(t) is not None),
        (tns2.CloneBeforeDetach.might_match,
         lambda t: ".clone(" in t and tns2._CLONE_DETACH.search(t) is not None),
        (tns3.DiscriminatorThroughGenerator.might_match,
         lambda t: "update_params" in t or "backward" in t and tns3._BACKWARD_CALL.search(t) is not None),
    ]
    imported = re.compile(rb"backward\s*\(")
    for _name, text in SOURCES:
        for now, then in before:
            assert now(text) == then(text), _name
        data = text.encode("utf-8")
        assert (tns3.DiscriminatorThroughGenerator.imported_needle.search(data) is not None) == (
            b"backward" in data and imported.search(data) is not None)

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(["x", ".detach()", ".data", ".numpy()", "numpy()", "detach()", ".cpu()", " ",
                                     '.to("cpu")', ".to('cpu')", '.to(device="cpu")', "cpu", '"cpu"',
                                     ",", ")", "\n", "\r\n", "#", "for ", ".clone(", "a", "(", ".", "detach", "(",
                                     "backward", " (", "update_params", ".state_dict(", "state_dict(", "=", "é"]),
                    max_size=12))
    def same(parts):
        text = "".join(parts)
        for now, then in before:
            assert now(text) == then(text), text

    same()


def test_leaf_factories_are_the_top_level_functions_that_make_and_return_a_leaf():
    from flake8_tensorcopy.rules.tns4 import _leaf_factories

    text = (
        "import torch\n\n\n"
        "def make(\n    n,\n):\n    return torch.ones(n, requires_grad=True)\n\n\n"
        "async def amake():\n    w = torch.nn.Parameter(torch.ones(2))\n    return w\n\n\n"
        "def only_sets(x):\n    x.requires_grad_()\n\n\n"
        "def plain():\n    return torch.ones(2)\n\n\n"
        "class Holder:\n    def method(self):\n        return torch.ones(2, requires_grad=True)\n"
    )
    assert _leaf_factories(text) == {"make", "amake"}
    assert _leaf_factories("def f():\n    return g()\n") == frozenset()


def test_a_docstrings_parameters_section_makes_no_leaf_for_the_inplace_test():
    # transformers' long `generate` methods document their "Parameters:" and write into the
    # tensors they compute: not admitted for that word; `nn.Parameter(...)`, `ParameterList`
    # or an annotation still are.
    from flake8_tensorcopy.rules.tns4 import _FileLeaves, _admits

    body = ('def generate(ids, n):\n    """Generate.\n\n    Parameters:\n        ids: the prompt.\n    """\n'
            '    out = ids.new_zeros(n)\n    out[0] = 1\n    return out\n')
    assert not _admits(body, _FileLeaves(body))
    for made in ("    w = nn.Parameter(out)\n", "    w = nn.ParameterList([out])\n", "    w: nn.Parameter = out\n"):
        text = body.replace("    out[0] = 1\n", made + "    w[0] = 1\n")
        assert _admits(text, _FileLeaves(text)), made


def test_an_assignments_targets_are_found_in_one_pass_where_the_first_is_found():
    """tns4._assignments finds each `=` of an assignment of a line in one pass (a chain `a = b =
    v` sliced at each `=` was quadratic in the line); `_assignment_at` is its first."""
    from flake8_tensorcopy.rules.tns4 import _assignment_at, _assignments, _bound

    expected = {"a = b = c": [2, 6], "x += 1": [], "f(a=1)": [], "a: int = 3": [7], "a <= b": [], "==x": [],
                "(a, b) = c, d": [7], "a = (b == c)": [2], "w = x  # y = z": [2], "a != b = c": [7],
                "x //= 2": [], "y := 3": [], "d[k] = f(a=1) = 2": [5, 14], "": []}
    for line, positions in expected.items():
        assert _assignments(line) == positions, line
        assert _assignment_at(line) == (positions[0] if positions else -1), line
    assert _bound("a = b = w") == (("a", "b"), " w")
    assert _bound("x[0] = y.z = w") == ((), "")


def test_evident_leaves_reach_the_end_of_a_chain_bound_in_any_order():
    """The names bound to a leaf at any depth, whichever order the lines bind them in (a work
    list: a binding is looked at again when a name it reads becomes evident)."""
    from flake8_tensorcopy.rules.tns4 import _evident_leaves

    chain = "".join(f"    a{i} = a{i + 1}\n" for i in range(300))
    text = "def f(x):\n" + chain + "    a300 = nn.Parameter(x)\n    b = c\n"
    assert _evident_leaves(text) == {f"a{i}" for i in range(301)}


def test_the_helpers_a_file_calls_are_told_by_search_and_then_by_one_index_alike():
    """TNS401's question of which helpers the file calls by name: the first names by a search of
    the text each, the rest by one index of every call; the same answers either way."""
    from flake8_tensorcopy.analysis.summaries import _DIRECT_SEARCHES
    from flake8_tensorcopy.rules.tns4 import _FileLeaves, _admits

    n = 3 * _DIRECT_SEARCHES
    text = "".join(f"def h{i}(p):\n    p.zero_()\n\n\n" for i in range(n)) + "".join(f"h{i}(w)\n" for i in range(0, n, 2))
    file = _FileLeaves(text)
    admitted = [i for i in range(n) if _admits(f"def h{i}(p):\n    p.zero_()\n", file)]
    assert admitted == list(range(0, n, 2))
    assert file._called._index is not None  # (the index was made)


def test_class_methods_reads_every_class_of_a_text():
    # The text of every method of every class at the margin (a loop variable named like the
    # parameter `name` made it read the first class with methods alone: a state-keeping method of
    # the third class of a module was never found).
    from flake8_tensorcopy.source import class_methods

    text = ("import torch\n\n\nclass A:\n    def one(self):\n        pass\n\n\nclass B(A):\n    x = 1\n\n"
            "    def two(self):\n        pass\n\n\nclass C:\n    def three(self):\n        return 3\n\n\n"
            "class Cx:\n    def four(self):\n        pass\n")
    tree = ast.parse(text)
    expected = [(c.name, f.name) for c in tree.body if isinstance(c, ast.ClassDef)
                for f in c.body if isinstance(f, ast.FunctionDef)]
    assert [(c, m) for c, _bases, m, _text in class_methods(text)] == expected
    assert [(c, m) for c, _bases, m, _text in class_methods(text, "C")] == [("C", "three")]
    assert next(t for c, _b, m, t in class_methods(text) if m == "three").strip() == "def three(self):\n        return 3"
