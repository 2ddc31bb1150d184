"""The one walker: control flow, grad mode, narrowing, deferred functions, re-entrant summaries."""

import textwrap

import pytest

from flake8_tensorcopy.analysis.walker import Walker, compatible
from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.model import Options
from probes import probes


def found(code, prefix="TNS", **options):
    result = lint_text(textwrap.dedent(code), select_rules([prefix]), Options(**options))
    assert result.error is None
    return sorted((v.code, v.line) for v in result.violations)


# --------------------------------------------------------------------------- the cases


LOOP = """
import torch

w = torch.ones(3, requires_grad=True)
a = torch.zeros(3)
b = torch.zeros(3)
for step in range(4):
    print(b.numpy())
    b = a
    a = w * 2
"""


def test_loop_carried_values_reach_a_fixpoint():
    # `b` requires grad only from the third iteration on: two pre-runs are needed.
    assert found(LOOP, "TNS101") == [("TNS101", 8)]


def test_the_loop_case_raises_on_real_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(LOOP, "<loop>", "exec"), {"torch": torch, "print": lambda *a: None})


def test_functions_see_the_enclosing_scope_as_it_is_at_its_end():
    # A module-level `if` between the function and the global used to hide the global.
    code = """
    import torch

    def report():
        return x.numpy()

    if torch.cuda.is_available():
        pass
    x = torch.ones(3, requires_grad=True) * 2
    report()
    """
    assert found(code, "TNS101") == [("TNS101", 5)]
    code = textwrap.dedent(code).replace("if torch.cuda.is_available():\n    pass\n", "")
    assert found(code, "TNS101") == [("TNS101", 5)]


LIGHTNING = """
import torch
import pytorch_lightning as pl


class Lit(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def validation_step(self, batch, batch_idx):
        self.fc.weight.mul_(0.5)
        return self.fc(batch).numpy()

    def training_step(self, batch, batch_idx):
        self.fc.weight.mul_(0.5)
"""


def test_lightning_eval_hooks_run_without_grad_for_every_rule():
    assert found(LIGHTNING) == [("TNS401", 16)]


def test_lightning_hooks_need_the_lightning_base_class():
    plain = LIGHTNING.replace("pl.LightningModule", "torch.nn.Module")
    assert found(plain) == [("TNS101", 13), ("TNS401", 12), ("TNS401", 16)]


def test_a_lightning_base_class_of_the_file_is_inherited():
    code = LIGHTNING.replace("class Lit(pl.LightningModule)", "class Base(pl.LightningModule):\n    pass\n\n\n"
                             "class Lit(Base)")
    assert [c for c, _ in found(code)] == ["TNS401"]


# --------------------------------------------------------------------------- control flow


def test_a_branch_that_returns_does_not_reach_the_join():
    (fact, _), = probes("""
    import torch
    def f(x, flag):
        y = torch.ones(2)
        if flag:
            y = torch.ones(2, requires_grad=True)
            return y
        probe(y)
    """)
    assert not fact.may_require_grad


def test_break_states_reach_the_loop_exit_and_continue_states_its_head():
    seen = probes("""
    import torch
    w = torch.ones(2, requires_grad=True)
    y = torch.zeros(2)
    z = torch.zeros(2)
    for i in range(3):
        probe(z)
        if i == 1:
            y = w * 2
            break
        if i == 0:
            z = w * 3
            continue
    probe(y)
    """)
    assert [f.may_require_grad for f, _ in seen] == [True, True]


def test_while_true_exits_only_through_break():
    (fact, _), = probes("""
    import torch
    w = torch.ones(2, requires_grad=True)
    y = w * 2
    while True:
        y = torch.zeros(2)
        break
    probe(y)
    """)
    assert not fact.may_require_grad


def test_try_handlers_see_what_the_body_may_have_done():
    (fact, _), = probes("""
    import torch
    w = torch.ones(2, requires_grad=True)
    y = torch.zeros(2)
    try:
        y = w * 2
        risky()
        y = torch.zeros(2)
    except ValueError:
        probe(y)
    """)
    assert fact.may_require_grad


def test_code_after_raise_in_pytest_raises_is_still_walked():
    assert found("""
    import pytest
    import torch
    def test_it():
        w = torch.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError):
            w[0] = 1
        w.add_(1)
    """, "TNS401") == [("TNS401", 8)]


def test_branch_paths_compatibility():
    if_a, if_b = (1, "if", 0), (1, "if", 1)
    assert not compatible((if_a,), (if_b,))
    assert compatible((if_a,), (if_a, (2, "if", 1)))
    body, h0, h1, els, fin = [(3, "try", k) for k in ("body", "h0", "h1", "else", "finally")]
    assert compatible((body,), (h0,)) and compatible((fin,), (h1,))
    assert not compatible((h0,), (h1,)) and not compatible((h0,), (els,))


# --------------------------------------------------------------------------- narrowing and grad mode


def test_device_tests_narrow_tensors_moved_with_that_device():
    # transformers' Whisper feature extractor: no accelerator tensor reaches .numpy().
    code = """
    import torch
    def extract(waveform, device: str = "cpu"):
        waveform = torch.from_numpy(waveform).to(device, torch.float32)
        window = torch.hann_window(400, device=device)
        if waveform.dim() == 2:
            waveform += torch.randn(waveform.shape, device=waveform.device)
        spec = torch.stft(waveform, 400, window=window, return_complex=True).abs() ** 2
        if device != "cpu":
            spec = spec.detach().cpu()
        return spec.numpy()
    """
    assert found(code, "TNS102") == []
    assert found(code.replace('if device != "cpu":', "if False:"), "TNS102") == [("TNS102", 11)]


def test_tensor_device_and_grad_tests():
    assert found("""
    import torch
    model = torch.nn.Linear(3, 2).cuda()
    def f(x):
        out = model(x)
        if out.is_cuda:
            out = out.cpu()
        if out.requires_grad:
            out = out.detach()
        return out.numpy()
    def g(t):
        t = model(t)
        return t.detach().numpy() if t.requires_grad else t.cpu().numpy()
    """) == [("TNS102", 13)]


def test_is_grad_enabled_narrows_grad_mode():
    seen = probes("""
    import torch
    w = torch.ones(2, requires_grad=True)
    if torch.is_grad_enabled():
        probe(w * 2)
    else:
        probe(w * 2)
    """)
    assert [ng for _, ng in seen] == [False, True]


def test_enable_grad_inside_no_grad():
    seen = probes("""
    import torch
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            probe(w * 2)
        probe(w * 2)
    """)
    assert [ng for _, ng in seen] == [False, True]


def test_no_grad_callees_with_tab_indentation():
    # The exemption of functions only called under no-grad must not depend on indentation.
    code = ("import torch\nmodel = torch.nn.Linear(3, 2)\n\ndef report():\n\treturn model(torch.randn(2, 3)).numpy()\n\n"
            "def main():\n\twith torch.no_grad():\n\t\treport()\n")
    assert lint_text(code).violations == []
    assert [v.line for v in lint_text(code.replace("\twith torch.no_grad():\n\t\treport()", "\treport()"))
            .violations] == [5]


def test_forward_called_under_no_grad_once_is_no_no_grad_callee():
    # `net.forward(x)` under no_grad is the only call of `forward` the file shows, but
    # nn.Module calls it too (`net(x)`), with grad on: neither it nor `_head`, which only it
    # calls, runs with grad off for certain.
    code = textwrap.dedent("""\
        import torch


        def _head(t):
            return t.numpy()


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 2)

            def forward(self, x):
                return _head(self.fc(x))


        def evaluate(net, x):
            with torch.no_grad():
                return net.forward(x)


        net = Net()
        evaluate(net, torch.randn(2, 4))
        net(torch.randn(2, 4))
        """)
    assert [(v.code, v.line) for v in lint_text(code).violations] == [("TNS101", 5)]
    namespace: dict = {}
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(code, "<case>", "exec"), namespace)


def test_unknown_receivers_after_tensor_only_methods():
    # Strict mode: `.detach()`, `.cpu()`, `.data` say what the result is whatever the receiver.
    assert found("""
    import torch
    def f(t, u, v):
        a = t.detach().cpu().float().numpy()
        b = u.data.cpu()[0].numpy()
        return a, b, v.cpu().numpy()
    """, "TNS1", strict=True) == [("TNS101", 6)]


# --------------------------------------------------------------------------- re-entrant summaries


def test_summaries_of_other_methods_feed_the_gan_domain():
    code = """
    import torch
    from torch import nn


    class Trainer:
        def __init__(self):
            self.netG = nn.Linear(4, 3)
            self.netD = nn.Linear(3, 1)
            self.optimizer_D = torch.optim.SGD(self.netD.parameters(), lr=0.1)

        def backward_D(self):
            loss = self.netD(self.fake).mean()
            loss.backward()
            self.optimizer_D.step()

        def forward(self, z):
            self.fake = self.sample(z)

        def sample(self, z):
            return self.netG(z)
    """
    assert found(code, "TNS3") == [("TNS301", 13)]


def test_a_summary_leaves_the_callers_state_untouched():
    # The summary of `sample` is computed while the walker is inside `d_step`'s expression.
    seen = probes("""
    import torch
    netG = torch.nn.Linear(4, 3)
    netD = torch.nn.Linear(3, 1)
    optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)

    def d_step(z):
        w = torch.ones(2, requires_grad=True)
        loss = netD(sample(z)).mean()
        probe(w)
        loss.backward()
        optimizerD.step()

    def sample(z):
        w = torch.zeros(2)
        return netG(z)
    """)
    assert [f.may_require_grad for f, _ in seen] == [True]


def walks_of_line(monkeypatch, lineno: int) -> list:
    """Whether each walk of the statement at `lineno` dispatched the rules (Frame.dispatch), in
    the order of the walks, as the walker makes them."""
    walked = []
    real = Walker._stmt

    def spy(self, stmt, state):
        if stmt.lineno == lineno:
            walked.append(self.frame.dispatch)
        return real(self, stmt, state)

    monkeypatch.setattr(Walker, "_stmt", spy)
    return walked


def test_a_loop_nest_walks_its_innermost_body_once_a_pass_of_each_loop_around_it(monkeypatch):
    """Three loops that settle in one pre-run each: a loop inside another's pre-run takes its
    last pre-run (from the fixpoint) as its final pass, so the innermost statement is walked 7
    times (15 when every loop also walked its body once more).  Its finding is unchanged."""
    code = textwrap.dedent("""
        import torch

        def f(xs, w):
            total = 0
            for a in xs:
                for b in a:
                    for c in b:
                        total = total + c * w
            return total.numpy()
    """)
    walked = walks_of_line(monkeypatch, 9)
    found = lint_text(code, options=Options(strict=True)).violations
    assert len(walked) == 7
    assert [(v.code, v.line) for v in found] == [("TNS101", 10)]


def test_a_walk_with_rules_off_takes_a_loops_last_pre_run_as_its_final_pass(monkeypatch):
    """In a walk that reports nothing and that no domain follows (the walk of `grow` for the
    arguments of its call), the pre-run that started from the loop's fixpoint is its final pass:
    the loop body is walked three times (two pre-runs that change what reaches its top, one that
    confirms it), not four.  What `grow` returns still requires grad, as it does at run time
    after the second iteration."""
    code = textwrap.dedent("""
        import torch

        def grow(w):
            a = torch.zeros(3)
            b = torch.zeros(3)
            for step in range(4):
                b = a
                a = w * 2
            return b

        w = torch.ones(3, requires_grad=True)
        print(grow(w).numpy())
    """)
    walked = walks_of_line(monkeypatch, 8)
    found = lint_text(code, select_rules(["TNS101"])).violations
    assert walked == [False, False, False]
    assert [(v.code, v.line) for v in found] == [("TNS101", 13)]


def test_a_function_called_with_known_arguments_is_walked_once_for_them(monkeypatch):
    """A call that passes facts the summary does not assume gets a walk of the callee with them
    (summaries.given_result); the summary (parameters unknown) is walked only where that walk's
    answer is not had: `double(w)` walks `double` once, and what it returns still requires grad."""
    code = textwrap.dedent("""
        import torch

        def double(t):
            y = t * 2
            return y

        def report():
            w = torch.ones(3, requires_grad=True)
            return double(w).numpy()
    """)
    walked = walks_of_line(monkeypatch, 5)
    found = lint_text(code).violations
    assert [(v.code, v.line) for v in found] == [("TNS101", 10)]
    # Once, for `double(w)`'s arguments (no rule reports in `double`): not once more for a
    # summary with `t` unknown.
    assert walked == [False]


def test_a_survey_walks_a_caller_to_the_statement_of_the_last_call_it_asks_about(monkeypatch):
    """What `run` passes `show` and `dump` is known from a walk of `run` with rules off (it has no
    parameters: nothing reaches it from callers, summaries._survey): walked only through the
    statement that holds the call asked about, then further for a later call, never past the
    last one (`done = 1`)."""
    code = textwrap.dedent("""
        import torch

        def show(t):
            print(t.numpy())

        def dump(t):
            print(t.numpy())

        def run():
            w = torch.ones(3, requires_grad=True)
            show(w)
            v = torch.ones(3, requires_grad=True)
            dump(v * 2)
            done = 1
            return done
    """)
    surveyed = []
    real = Walker._stmt

    def spy(self, stmt, state):
        if self._surveying:
            surveyed.append(stmt.lineno)
        return real(self, stmt, state)

    monkeypatch.setattr(Walker, "_stmt", spy)
    found = lint_text(code).violations
    assert [(v.code, v.line) for v in found] == [("TNS101", 5), ("TNS101", 8)]
    assert "passed at line 12" in found[0].message and "passed at line 14" in found[1].message
    assert surveyed == [11, 12, 11, 12, 13, 14]


def test_child_nodes_are_ast_children_without_expression_contexts():
    """astutil.child_nodes (spelled out for the frequent node types) gives what
    ast.iter_child_nodes gives, in its order, less Load/Store/Del, on real code: this package's
    own source and the fixtures."""
    import ast
    from pathlib import Path

    from flake8_tensorcopy.analysis.astutil import child_nodes

    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "flake8_tensorcopy").rglob("*.py")) + sorted((root / "fixtures").rglob("*.py"))
    seen = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]
            assert list(child_nodes(node)) == expected, (path, type(node).__name__)
            seen.add(type(node))
    assert {ast.Call, ast.Attribute, ast.Compare, ast.Subscript, ast.Lambda, ast.ListComp} <= seen


def test_parameter_names_are_the_names_a_call_binds():
    import ast

    from flake8_tensorcopy.analysis.astutil import parameter_names

    func = ast.parse("def f(a, /, b, c=lambda x: x, *args, d, e=1, **kw): pass").body[0]
    assert parameter_names(func.args) == ["a", "b", "c", "args", "d", "e", "kw"]
    lam = ast.parse("lambda *, k: k").body[0].value
    assert parameter_names(lam.args) == ["k"]
    assert parameter_names(ast.parse("def g(): pass").body[0].args) == []


def test_a_generator_is_a_function_that_yields_in_its_own_body():
    import ast

    from flake8_tensorcopy.analysis.astutil import yields

    def first(code):
        return ast.parse(code).body[0]

    assert yields(first("def g():\n    if x:\n        yield 1\n"))
    assert yields(first("def g():\n    y = yield from h()\n"))
    assert not yields(first("def f():\n    def inner():\n        yield 1\n    return inner\n"))
    assert not yields(first("def f():\n    class C:\n        def m(self):\n            yield 1\n    return lambda: C\n"))


REBOUND_ATTRIBUTES = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Holder:
    def __init__(self, model):
        self.model = model


x = torch.randn(3, 4)


def replaced():
    t = Holder(Net())
    t.model = nn.Identity()
    return t.model(x).numpy()


def frozen():
    t = Holder(Net())
    t.model.requires_grad_(False)
    return t.model(x).numpy()


def replaced_layer():
    n = Net()
    n.fc = nn.Identity()
    return n.fc(x).numpy()


def frozen_layer():
    n = Net()
    n.fc.requires_grad_(False)
    return n.fc(x).numpy()


def kept():
    n = Net()
    return n.fc(x).numpy()
"""


def test_a_call_of_an_attribute_calls_what_the_flow_bound_to_it():
    # `t.model = nn.Identity()` or `t.model.requires_grad_(False)` before `t.model(x)`: the call
    # is of that value, not of what the class says its attribute holds (all four were reported).
    assert found(REBOUND_ATTRIBUTES, "TNS101") == [("TNS101", 49)]


def test_rebound_attributes_on_real_torch():
    torch = pytest.importorskip("torch")
    scope: dict = {}
    exec(compile(REBOUND_ATTRIBUTES, "<rebound>", "exec"), scope)
    for name in ("replaced", "frozen", "replaced_layer", "frozen_layer"):
        scope[name]()  # runs clean
    with pytest.raises(RuntimeError, match="requires grad"):
        scope["kept"]()
    assert torch.is_tensor(scope["x"])


KEPT_CONTEXTS = """
import contextlib

import torch

model = torch.nn.Linear(3, 1)


def maybe_off(x, train=False):
    ctx = contextlib.nullcontext() if train else torch.no_grad()
    with ctx:
        return model(x).numpy()


def off(x):
    ctx = torch.no_grad()
    with ctx:
        return model(x).numpy()


def back_on(x):
    ctx = torch.enable_grad()
    with torch.no_grad():
        with ctx:
            return model(x).numpy()


def plain(x):
    ctx = contextlib.nullcontext()
    with ctx:
        return model(x).numpy()


{call}(torch.randn(2, 3))
"""


@pytest.mark.parametrize("call, line", [("maybe_off", None), ("off", None), ("back_on", 25), ("plain", 31)])
def test_a_grad_mode_context_kept_in_a_name_works_where_it_is_entered(call, line):
    # `ctx = torch.no_grad()` then `with ctx:` turns grad off as `with torch.no_grad():` does
    # (and one that may be no_grad, as a conditional one does in place); `enable_grad` turns it
    # back on.  Each function's `.numpy()` raises on torch exactly where it is reported.
    torch = pytest.importorskip("torch")
    code = textwrap.dedent(KEPT_CONTEXTS).format(call=call)
    assert [ln for _code, ln in found(code, "TNS101")] == [25, 31]
    env = {"torch": torch}
    if line is None:
        exec(compile(code, "<case>", "exec"), env)
    else:
        with pytest.raises(RuntimeError, match="requires grad"):
            exec(compile(code, "<case>", "exec"), env)


KEPT_CONTEXT_CALLEES = """
import contextlib

import torch
from torch import no_grad as ng

model = torch.nn.Linear(3, 1)


def predict(x):
    return model(x).numpy()


def predict2(x):
    return model(x).numpy()


def predict3(x):
    return model(x).numpy()


def main(train=False):
    ctx = torch.no_grad() if not train else contextlib.nullcontext()
    with ctx:
        predict(torch.randn(2, 3))
    off = ng()
    with off:
        predict2(torch.randn(2, 3))
    plain = contextlib.nullcontext()
    with plain:
        predict3(torch.randn(2, 3))
"""


def test_a_function_called_only_under_a_kept_grad_context_runs_with_grad_off():
    # `predict` and `predict2` are called only in `with ctx:` / `with off:` blocks of a
    # no-grad context kept in a name: their `.numpy()` runs with grad off.  `predict3`'s does
    # not (a null context), and raises on torch.
    torch = pytest.importorskip("torch")
    code = textwrap.dedent(KEPT_CONTEXT_CALLEES)
    assert found(code, "TNS101") == [("TNS101", 19)]
    clean = {"torch": torch}
    exec(compile(code, "<case>", "exec"), clean)
    clean["predict3"] = lambda x: None
    clean["main"]()  # predict and predict2 run clean
    raising = {"torch": torch}
    exec(compile(code, "<case>", "exec"), raising)
    with pytest.raises(RuntimeError, match="requires grad"):
        raising["main"]()
