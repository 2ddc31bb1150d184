"""Summaries inside a file (issue 13): return facts, call-site facts, class facts, narrowing and
freeze state.  Each case is a small program; runtime claims are checked on real torch."""

import re
import textwrap

import pytest

from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.rules.base import Options


def found(code, prefix="TNS", **options):
    result = lint_text(textwrap.dedent(code), select_rules([prefix]), Options(**options))
    assert result.error is None
    return sorted((v.code, v.line) for v in result.violations)


def messages(code, prefix="TNS", **options):
    return [v.message for v in lint_text(textwrap.dedent(code), select_rules([prefix]), Options(**options)).violations]


def run(code):
    torch = pytest.importorskip("torch")
    env = {"torch": torch}
    exec(compile(textwrap.dedent(code), "<case>", "exec"), env)
    return env


# --------------------------------------------------------------------------- return facts


NO_GRAD_HELPER = """
import torch
model = torch.nn.Linear(3, 2)

@torch.no_grad()
def predict(x):
    return model(x)

def report(x):
    return predict(x).numpy()

def grad_one(x):
    return model(x)

def report2(x):
    return grad_one(x).numpy()

r = report(torch.randn(2, 3))
"""


def test_a_no_grad_function_returns_values_without_grad():
    assert found(NO_GRAD_HELPER, "TNS101") == [("TNS101", 16)]
    env = run(NO_GRAD_HELPER)
    assert not env["r"].flags.writeable or env["r"].shape == (2, 2)


SAMPLE = """
import torch
from torch import nn
from torch.distributions import Categorical, Normal


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return Categorical(logits=self.fc(x)).sample()


class Reparam(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return Normal(self.fc(x), 1.0).rsample()


policy, reparam = Policy(), Reparam()
actions = policy(torch.randn(2, 4)).numpy()
noise = reparam(torch.randn(2, 4)).numpy()
"""


def test_sample_through_forward_has_no_grad_rsample_has():
    assert found(SAMPLE, "TNS101") == [("TNS101", 27)]
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="requires grad"):
        run(SAMPLE)
    ok = run(SAMPLE.replace("noise = reparam(torch.randn(2, 4)).numpy()\n", ""))
    assert ok["actions"].shape == (2,)
    del torch


TUPLE_FORWARD = """
import torch
from torch import nn


class TDLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.huber = nn.SmoothL1Loss()

    def forward(self, q, target):
        with torch.no_grad():
            td_error = q - target
        return td_error, self.huber(q, target)


loss_func, model = TDLoss(), nn.Linear(4, 1)
td, loss = loss_func(model(torch.randn(2, 4)), torch.zeros(2, 1))
priorities = td.numpy()
kept = loss.numpy()
"""


def test_a_forward_that_returns_a_tuple_keeps_each_position():
    """labml-nn's DQN loss: the TD error comes out of a no-grad block of `forward`, the loss
    does not (a finding on the first was a false positive of the whole-project analysis)."""
    assert found(TUPLE_FORWARD, "TNS101") == [("TNS101", 20)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(TUPLE_FORWARD)
    assert run(TUPLE_FORWARD.replace("kept = loss.numpy()\n", ""))["priorities"].shape == (2, 1)


def test_item_and_tolist_give_python_values():
    assert found("""
    import torch
    import numpy as np
    model = torch.nn.Linear(3, 1)

    def loss_value(x):
        return model(x).sum().item()

    def values(x):
        return model(x).tolist()

    losses = [loss_value(torch.randn(2, 3)) for _ in range(3)]
    a = np.array(losses)
    b = np.array(values(torch.randn(2, 3)))
    """, "TNS1") == []


def test_a_list_filled_by_a_callee_with_floats():
    assert found("""
    import numpy as np
    import torch
    model = torch.nn.Linear(3, 1)

    def train_epoch(losses):
        for _ in range(2):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            losses.append(loss.item())

    history = []
    train_epoch(history)
    print(np.array(history).mean())
    """, "TNS1") == []


# --------------------------------------------------------------------------- call sites


CALL_SITES = """
import torch
model = torch.nn.Linear(3, 2)

def to_numpy(t):
    return t.numpy()

def log(t):
    print(t.numpy())

out = model(torch.randn(2, 3))
a = to_numpy(out)
log(torch.zeros(3))
"""


def test_arguments_at_call_sites_inform_parameters():
    # `to_numpy` receives a tensor that requires grad (line 12); `log` only zeros.
    assert found(CALL_SITES, "TNS101") == [("TNS101", 6)]
    msg, = messages(CALL_SITES, "TNS101")
    assert "line 12" in msg
    with pytest.raises(RuntimeError, match="requires grad"):
        run(CALL_SITES)


def test_a_parameter_no_call_site_informs_stays_unknown():
    # Passed as a callback: what it will be called with is unknown.
    code = CALL_SITES.replace("a = to_numpy(out)", "callbacks = [to_numpy]")
    assert found(code, "TNS101") == []
    assert ("TNS101", 6) in found(code, "TNS101", strict=True)


def test_other_callers_never_make_a_parameter_look_harmless():
    # `log` is public and also escapes: the zeros passed here do not prove much.
    code = CALL_SITES + "handlers = {'log': log}\n"
    assert ("TNS101", 9) in found(code, "TNS101", strict=True)
    private = CALL_SITES.replace("log", "_log")
    assert ("TNS101", 9) not in found(private, "TNS101", strict=True)


def test_a_caller_with_nothing_to_report_passes_what_its_callees_return():
    # `main` has no finding of its own (it is walked only to find what it passes): the model
    # it passes the output of comes from `make_model`, whose summary says what it returns.
    code = """
    import torch

    def make_model():
        return torch.nn.Linear(4, 2)

    def _to_numpy(t):
        return t.numpy()

    def main():
        model = make_model()
        return _to_numpy(model(torch.randn(2, 4)))

    main()
    """
    assert found(code, "TNS101") == [("TNS101", 8)]
    assert "passed at line 12" in messages(code, "TNS101")[0]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)



# Where the caller has parameters, it is walked to report (its callers may pass it facts), and
# a call anywhere in its statements is a call site: a returned value, a dict's value, an
# argument of a method of an attribute, what it awaits or yields, an element of a tuple.
CALLER_SHAPES = {
    "return": ("return _to_numpy(model(x))", "main(X)"),
    "return in a branch": ("if x is not None:\n        return _to_numpy(model(x))", "main(X)"),
    "dict value": ("return {'pred': _to_numpy(model(x))}", "main(X)"),
    "tuple element": ("return _to_numpy(model(x)), 1", "main(X)"),
    "argument of an attribute's method": ("log.writer.append(_to_numpy(model(x)))",
                                          "main(X, types.SimpleNamespace(writer=[]))"),
    "yield": ("yield _to_numpy(model(x))", "next(main(X))"),
    "await": ("await log.put(_to_numpy(model(x)))", "asyncio.run(main(X, asyncio.Queue()))"),
}


@pytest.mark.parametrize("shape", CALLER_SHAPES, ids=list(CALLER_SHAPES))
def test_a_caller_walked_to_report_records_every_call_it_makes(shape):
    statement, call = CALLER_SHAPES[shape]
    code = textwrap.dedent("""
    import asyncio
    import types

    import torch


    def _to_numpy(t):
        return t.numpy()


    {kind}def main(x, log=None):
        model = torch.nn.Linear(4, 2)
        {statement}


    X = torch.randn(2, 4)
    {call}
    """).format(kind="async " if shape == "await" else "", statement=statement, call=call)
    assert found(code, "TNS101") == [("TNS101", 9)]
    (message,) = messages(code, "TNS101")
    # The line of the call, then those of the calls that passed `main` its arguments.
    assert re.search(rf"passed at lines? {14 + statement.count(chr(10))}\b", message), message
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)


# A call statement whose receiver is itself a call: the constructor call is a call site of
# `__init__` (the model it passes becomes `self.model`), and the method call one of `report`.
CHAINED = """
import torch


class Evaluator:
    def __init__(self, model):
        self.model = model

    def report(self, x):
        out = self.model(x)
        return out.numpy()


def main():
    model = torch.nn.Linear(4, 2)
    {statement}


main()
"""


@pytest.mark.parametrize("statement", ["Evaluator(model).report(torch.randn(2, 4))",
                                       "Evaluator(model=model).report(x=torch.randn(2, 4))"])
def test_a_method_called_on_a_new_instance_sees_what_its_constructor_was_passed(statement):
    code = CHAINED.format(statement=statement)
    assert found(code, "TNS101") == [("TNS101", 11)]
    assert "passed at line 16" in messages(code, "TNS101")[0]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)
    # Passed a model that is frozen, the same statement is no hazard.
    frozen = code.replace("model = torch.nn.Linear(4, 2)", "model = torch.nn.Linear(4, 2).requires_grad_(False)")
    assert found(frozen, "TNS101") == []
    run(frozen)


def test_a_module_output_says_where_the_module_was_passed():
    # The model reaches `self.model` through the constructor's call (line 16), the input
    # through the method's (line 17): the output's grad comes from the first, and only it is
    # named (the input requires no grad).
    code = CHAINED.format(statement="ev = Evaluator(model)\n    ev.report(torch.randn(2, 4))")
    (message,) = messages(code, "TNS101")
    assert "(passed at line 16)" in message, message
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)
    # An input that requires grad is named too: both calls make the output require grad.
    both = CHAINED.format(statement="ev = Evaluator(model)\n    ev.report(torch.randn(2, 4, requires_grad=True))")
    (message,) = messages(both, "TNS101")
    assert "(passed at lines 16, 17)" in message, message
    with pytest.raises(RuntimeError, match="requires grad"):
        run(both)


NAMED_CALLS = """
import torch
model = torch.nn.Linear(3, 1)
def to_numpy(t):
    return t.numpy()
with torch.no_grad():
    quiet = to_numpy(model(torch.randn(2, 3)))
loud = to_numpy(model(torch.randn(2, 3)))
plain = to_numpy(torch.randn(2))
"""


def test_a_message_names_only_the_calls_that_pass_the_hazard():
    # Three calls pass `t`: under no_grad (line 7), a model output that requires grad (line 8),
    # a tensor that does not (line 9).  `t.numpy()` raises for the second only, and the
    # message names it alone.
    (message,) = messages(NAMED_CALLS, "TNS101")
    assert "t (passed at line 8) requires grad" in message, message
    with pytest.raises(RuntimeError, match="requires grad"):
        run(NAMED_CALLS)
    run(NAMED_CALLS.replace("loud = ", "# loud = "))  # the other two calls run clean


CALLABLE = """
import torch


class Predictor:
    def __init__(self, net):
        self.net = net

    def __call__(self, x):
        return self.net(x)


def main():
    predict = Predictor(torch.nn.Linear(4, 2))
    y = predict(torch.randn(1, 4))
    return y.numpy()


main()
"""


def test_an_instance_called_runs_its_classs_call_method():
    assert found(CALLABLE, "TNS101") == [("TNS101", 16)]
    assert "passed at line 14" in messages(CALLABLE, "TNS101")[0]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(CALLABLE)
    # A `__call__` that computes under no_grad returns what does not require grad.
    quiet = CALLABLE.replace("        return self.net(x)", "        with torch.no_grad():\n            return self.net(x)")
    assert found(quiet, "TNS101") == [] and found(quiet, "TNS101", strict=True) == []
    run(quiet)


ON_THE_CLASS = """
import torch


class Utils:
    @staticmethod
    def to_numpy(t):
        return t.numpy()

    @classmethod
    def as_array(cls, t):
        return t.numpy()


def main():
    out = torch.nn.Linear(4, 2)(torch.randn(1, 4))
    return {call}


main()
"""


@pytest.mark.parametrize("call", ["Utils.to_numpy(out)", "Utils.as_array(out)", "Utils().as_array(out)",
                                  "Utils().to_numpy(t=out)"])
def test_static_and_class_methods_see_what_their_calls_pass(call):
    code = ON_THE_CLASS.format(call=call)
    line = 8 if "to_numpy" in call else 12
    assert found(code, "TNS101") == [("TNS101", line)]
    assert "passed at line 17" in messages(code, "TNS101")[0]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)


SUBCLASS = """
import torch


class BaseTrainer:
    def __init__(self, model):
        self.model = model


class Trainer(BaseTrainer):
{body}
    def evaluate(self, x):
        return self.model(x).numpy()


def main():
    Trainer({args}).evaluate(torch.randn(1, 4))


main()
"""

# The subclass's constructor calls the base's (`super().__init__(model)`), or inherits it.
SUBCLASS_SHAPES = {
    "super().__init__": ("    def __init__(self, model, lr):\n        super().__init__(model)\n        self.lr = lr\n",
                         "torch.nn.Linear(4, 2), 0.1"),
    "inherited": ("", "torch.nn.Linear(4, 2)"),
}


@pytest.mark.parametrize("shape", SUBCLASS_SHAPES, ids=list(SUBCLASS_SHAPES))
def test_a_subclass_has_what_its_bases_constructor_made_of_its_arguments(shape):
    body, args = SUBCLASS_SHAPES[shape]
    code = SUBCLASS.format(body=body, args=args)
    line = code.splitlines().index("        return self.model(x).numpy()") + 1
    assert found(code, "TNS101") == [("TNS101", line)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)
    # Given a frozen model, nothing to report.
    frozen = code.replace("torch.nn.Linear(4, 2)", "torch.nn.Linear(4, 2).requires_grad_(False)")
    assert found(frozen, "TNS101") == []
    run(frozen)


def test_each_subclass_has_what_its_own_constructor_calls_passed():
    # Both subclasses of BaseTrainer: what `Trainer`'s constructor passes on is its parameter
    # (unknown to a walk of it alone), `Inherits(...)` passes a model.  The base's attribute
    # is the join of both; each subclass's is what its own calls made it.
    code = SUBCLASS.format(body=SUBCLASS_SHAPES["super().__init__"][0], args="torch.nn.Linear(4, 2), 0.1") + (
        "\n\nclass Inherits(BaseTrainer):\n    def evaluate(self, x):\n        return self.model(x).numpy()\n\n\n"
        "Inherits(torch.nn.Linear(4, 2)).evaluate(torch.randn(1, 4))\n")
    lines = code.splitlines()
    expected = [("TNS101", i + 1) for i, line in enumerate(lines) if line == "        return self.model(x).numpy()"]
    assert len(expected) == 2 and found(code, "TNS101") == expected
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)  # main(): Trainer's
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code.replace("\nmain()\n", "\n"))  # Inherits'


def test_an_attribute_the_base_sets_elsewhere_too_is_not_taken_from_the_constructor_alone():
    # `freeze()` may replace the model: what the constructor was passed is not all it can be.
    body, args = SUBCLASS_SHAPES["super().__init__"]
    code = SUBCLASS.format(body=body, args=args).replace(
        "        self.model = model\n",
        "        self.model = model\n\n    def freeze(self):\n        self.model = self.model.requires_grad_(False)\n")
    assert found(code, "TNS101") == []


PROBE = """
import torch


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False


class Probe:
    def __init__(self, backbone):
{init}

    def features(self, x):
        return self.backbone(x).numpy()


Probe(torch.nn.Linear(4, 2)).features(torch.randn(1, 4))
"""

# Ways a class freezes the module it was given: its output then requires no grad, and
# `.numpy()` on it runs.  A walk of one method at a time sees the assignment, not the freezing.
FREEZINGS = {
    "a loop over its parameters": "self.backbone = backbone\n"
                                  "for p in self.backbone.parameters():\n    p.requires_grad = False",
    "requires_grad_(False) on the attribute": "self.backbone = backbone\nself.backbone.requires_grad_(False)",
    "requires_grad_(False) before the assignment": "backbone.requires_grad_(False)\nself.backbone = backbone",
    "a helper": "self.backbone = backbone\nfreeze(self.backbone)",
    "another method": "self.backbone = backbone\nself.freeze()\n\ndef freeze(self):\n"
                      "    self.backbone.requires_grad_(False)",
    "a sub-attribute": "self.backbone = backbone\nself.backbone.weight.requires_grad = False\n"
                       "self.backbone.bias.requires_grad = False",
}


@pytest.mark.parametrize("how", FREEZINGS, ids=list(FREEZINGS))
def test_a_module_a_class_freezes_is_no_hazard(how):
    init = textwrap.indent(FREEZINGS[how], " " * 8).replace("        def freeze", "    def freeze")
    code = PROBE.format(init=init)
    run(code)  # runs clean on torch
    assert found(code, "TNS101") == []
    # The same class without the freezing: the message's RuntimeError.
    plain = PROBE.format(init="        self.backbone = backbone")
    assert found(plain, "TNS101") == [("TNS101", 15)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(plain)


TEACHER = """
import torch
from torch import nn


class Teacher(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
{init}

    def forward(self, x):
        return self.fc(x)


Teacher()(torch.randn(1, 4)).numpy()
"""

# Ways a constructor freezes every parameter of the module it makes (a teacher, a feature
# extractor): what the module computes from inputs that require no grad requires none.
SELF_FREEZINGS = {
    "requires_grad_(False)": "self.requires_grad_(False)",
    "eval().requires_grad_(False)": "self.eval().requires_grad_(requires_grad=False)",
    "a loop over its parameters": "for p in self.parameters():\n    p.requires_grad = False",
    "a loop of requires_grad_(False)": "for p in self.parameters():\n    p.requires_grad_(False)",
    "a loop of detach_()": "for p in self.parameters():\n    p.detach_()",
    "then eval()": "self.requires_grad_(False)\nself.eval()",
}
# And ways that leave some parameter requiring grad: a layer made after the freezing, a
# freezing that does not run.
NOT_ALL_FROZEN = {
    "a layer made after": "self.requires_grad_(False)\nself.fc = nn.Linear(4, 2)",
    "a freezing that may not run": "if torch.cuda.is_available():\n    self.requires_grad_(False)",
    "a loop that also thaws": "for p in self.parameters():\n    p.requires_grad = False\n    p.requires_grad = True",
    "a loop that detaches and thaws": "for p in self.parameters():\n    p.detach_()\n    p.requires_grad_(True)",
}


@pytest.mark.parametrize("how", SELF_FREEZINGS, ids=list(SELF_FREEZINGS))
def test_a_module_its_constructor_freezes_computes_nothing_that_requires_grad(how):
    code = TEACHER.format(init=textwrap.indent(SELF_FREEZINGS[how], " " * 8))
    run(code)  # runs clean on torch
    assert found(code, "TNS101") == []


@pytest.mark.parametrize("how", NOT_ALL_FROZEN, ids=list(NOT_ALL_FROZEN))
def test_a_module_its_constructor_does_not_freeze_whole_is_a_hazard(how):
    code = TEACHER.format(init=textwrap.indent(NOT_ALL_FROZEN[how], " " * 8))
    line = textwrap.dedent(code).splitlines().index("Teacher()(torch.randn(1, 4)).numpy()") + 1
    assert found(code, "TNS101") == [("TNS101", line)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)


TRAINER = """
import numpy as np
import torch


class Trainer:
    def __init__(self):
        self.model = torch.nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.losses = []

    def step(self, x, y):
        out = self.model(x)
        loss = ((out - y) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.losses.append(loss)

    def report(self):
        return np.mean(self.losses)


trainer = Trainer()
trainer.step(torch.randn(3, 4), torch.randn(3, 1))
trainer.report()
"""


def test_what_one_method_adds_to_a_list_the_class_keeps_is_there_in_another():
    assert found(TRAINER, "TNS103") == [("TNS103", 21)]
    (msg,) = messages(TRAINER, "TNS103")
    assert "a list of tensors that require grad" in msg and "self.losses.append(t.item())" in msg
    with pytest.raises(RuntimeError, match="requires grad"):
        run(TRAINER)


@pytest.mark.parametrize("added", ["loss.item()", "loss.detach()", "float(loss)"])
def test_a_list_of_values_without_grad_is_no_hazard(added):
    code = TRAINER.replace("self.losses.append(loss)", f"self.losses.append({added})")
    assert found(code, "TNS103") == [] and found(code, "TNS103", strict=True) == []
    run(code)


def test_a_list_filled_under_no_grad_is_no_hazard():
    code = TRAINER.replace("        self.losses.append(loss)",
                           "        with torch.no_grad():\n            self.losses.append(self.model(x).sum())")
    assert found(code, "TNS103") == []
    run(code)


def test_fixes_relying_on_a_call_site_are_unsafe():
    result = lint_text(textwrap.dedent(CALL_SITES), select_rules(["TNS101"]))
    (v,) = result.violations
    assert v.fix is not None and v.fix.safety == "unsafe"


def test_methods_called_only_under_no_grad_through_self():
    assert found("""
    import torch
    from torch import nn


    class Trainer:
        def __init__(self):
            self.model = nn.Linear(3, 2)

        def evaluate(self, x):
            return self.model(x).numpy()

        def run(self, x):
            with torch.no_grad():
                return self.evaluate(x)
    """, "TNS101") == []


def test_constructor_arguments_inform_attributes():
    code = """
    import torch
    from torch import nn


    class Trainer:
        def __init__(self, model):
            self.model = model

        def log(self, x):
            return self.model(x).numpy()


    trainer = Trainer(nn.Linear(3, 2))
    """
    assert found(code, "TNS101") == [("TNS101", 11)]


@pytest.mark.parametrize("init", ["self.model, self.scale = model, 2", "(self.model, self.scale) = (model, 2)",
                                  "self.scale, [self.model] = 2, [model]"])
def test_constructor_arguments_inform_attributes_set_by_a_tuple(init):
    code = f"""
    import torch
    from torch import nn


    class Trainer:
        def __init__(self, model):
            {init}

        def log(self, x):
            return self.model(x).numpy()


    trainer = Trainer(nn.Linear(3, 2))
    """
    assert found(code, "TNS101") == [("TNS101", 11)]


def test_a_constructor_parameter_it_treats_as_a_module_is_one_in_the_other_methods():
    # No call of Trainer in the file (it is built in another): `model.parameters()` handed to an
    # optimizer says `model` is a module, as it does in the constructor's own walk, and so is
    # `self.model` in `step` and `evaluate`.  Under no_grad, silent.
    code = """
    import torch


    class Trainer:
        def __init__(self, model, lr):
            self.model = model
            self.opt = torch.optim.SGD(model.parameters(), lr=lr)

        def step(self, x):
            return self.model(x).numpy()

        def evaluate(self, x):
            with torch.no_grad():
                return self.model(x).numpy()
    """
    assert found(code, "TNS101") == [("TNS101", 11)]
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(textwrap.dedent(code), "<trainer>", "exec"), ns)
    trainer = ns["Trainer"](torch.nn.Linear(3, 2), 0.1)
    trainer.evaluate(torch.randn(2, 3))
    with pytest.raises(RuntimeError, match="requires grad"):
        trainer.step(torch.randn(2, 3))


# --------------------------------------------------------------------------- one call's result

PER_CALL = """
import torch


def double(x):
    return x * 2


def make(n, device=None):
    return torch.arange(n, device=device)


w = torch.ones(3, requires_grad=True)
dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
b = double(torch.ones(3)).numpy()
c = make(3, "cpu").numpy()
try:
    a = double(w).numpy()
except RuntimeError as exc:
    error = str(exc)
d = make(3, dev)
"""


def test_a_call_returns_what_its_own_arguments_make():
    # The summaries of double(x) and make(n, device) know nothing of x and device; the calls do:
    # double(w) requires grad (line 18, reported in default mode, with a safe fix: it is a
    # tensor by the flow of the code), double(torch.ones(3)) and make(3, "cpu") do not and are
    # on the host.
    assert found(PER_CALL) == [("TNS101", 18)]
    assert found(PER_CALL, strict=True) == [("TNS101", 18)]
    [v] = lint_text(textwrap.dedent(PER_CALL), select_rules(["TNS1"])).violations
    assert v.message.startswith("double(w) requires grad") and v.fix.safety == "safe"
    env = run(PER_CALL)
    assert "requires grad" in env["error"] and env["b"].tolist() == [2.0] * 3 and env["c"].tolist() == [0, 1, 2]


def test_a_call_with_a_device_that_may_be_an_accelerator_is_reported():
    code = """
    import torch

    def make(n, device=None):
        return torch.arange(n, device=device)

    host = make(3, "cpu").numpy()
    dev = torch.device("cuda")
    out = make(3, dev).numpy()
    """
    assert found(code) == [("TNS102", 9)]


def test_a_recursive_function_called_with_arguments_terminates():
    # The recursive call inside the walk for walk(w, 3) takes the summary's result (unknown):
    # the analysis cannot tell, so default mode is silent and strict mode reports both.
    code = """
    import torch

    def walk(x, n):
        if n == 0:
            return x
        return walk(x * 2, n - 1)

    w = torch.ones(3, requires_grad=True)
    a = walk(w, 3).numpy()
    b = walk(torch.ones(3), 3).numpy()
    """
    assert found(code) == []
    assert found(code, strict=True) == [("TNS101", 10), ("TNS101", 11)]


def test_size_arguments_of_torch_functions_do_not_make_a_result_require_grad():
    # F.pad's pad list, interpolate's size: numbers (here of unknown origin), never a tensor
    # that requires grad; the input came from NumPy.  Strict mode stays silent.
    code = """
    import numpy as np
    import torch
    import torch.nn.functional as F

    def to_patches(image: np.ndarray, n, size):
        t = torch.from_numpy(image).unsqueeze(0)
        t = F.interpolate(t, size, mode="bilinear")
        t = F.pad(t, [0, 0, 0, n - 3]).float()
        return t.numpy()

    out = to_patches(np.ones((1, 4, 4), dtype=np.float32), 5, (2, 2))
    """
    assert found(code, strict=True) == []
    assert run(code)["out"].shape == (1, 1, 4, 2)


# --------------------------------------------------------------------------- class facts


def test_attributes_of_any_class_from_any_method():
    assert found("""
    import unittest
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)


    class TestNet(unittest.TestCase):
        def setUp(self):
            self.model = Net()

        def test_output(self):
            out = self.model(torch.randn(2, 3))
            self.assertEqual(out.numpy().shape, (2, 2))
    """, "TNS101") == [("TNS101", 22)]


def test_gan_roles_from_classes_whatever_their_spelling():
    code = """
    import torch
    from torch import nn


    class generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, z):
            return self.fc(z)


    class discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x):
            return self.fc(x)


    G, D = generator(), discriminator()
    opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
    fake = G(torch.randn(2, 4))
    loss_d = D(fake).mean()
    loss_d.backward()
    opt_d.step()
    """
    assert found(code, "TNS3") == [("TNS301", 27)]
    inside = "def step():\n" + textwrap.indent(textwrap.dedent(code).split("G, D = ", 1)[1].split("\n", 1)[1], "    ")
    head = textwrap.dedent(code).split("G, D = ", 1)[0] + "G, D = generator(), discriminator()\n"
    assert found(head + inside, "TNS3") == [("TNS301", head.count("\n") + 4)]


# --------------------------------------------------------------------------- freeze state


def test_a_module_built_frozen_and_its_deepcopy():
    code = """
    import copy
    import torch
    from torch import nn

    def build():
        return nn.Sequential(nn.Linear(3, 3))

    G = build().train().requires_grad_(False)
    G_ema = copy.deepcopy(G)
    out = G(torch.randn(2, 3)).numpy()
    with torch.no_grad():
        for p_ema, p in zip(G_ema.parameters(), G.parameters()):
            p_ema.copy_(p.lerp(p_ema, 0.9))
    ema_out = G_ema(torch.randn(2, 3)).numpy()
    """
    assert found(code) == []
    run(code)


def test_a_freeze_chain_as_a_bare_statement():
    code = """
    import torch
    from torch import nn

    sampler = nn.Linear(3, 3)
    sampler.eval().requires_grad_(False).to("cpu")
    z = sampler(torch.randn(2, 3)).numpy()
    """
    assert found(code) == []
    run(code)


def test_values_computed_under_no_grad_keep_no_grad():
    code = """
    import torch
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        y = lin(torch.randn(2, 3))
    arr = y.numpy()
    """
    assert found(code) == []
    run(code)


def test_data_facts_survive_joins():
    code = """
    import torch
    lin = torch.nn.Linear(3, 2)
    w = lin.weight.data if torch.cuda.is_available() else lin.weight.detach()
    arr = w.numpy()
    """
    assert found(code) == []
    run(code)


CHAIN = """
import torch
from torch import nn

model = nn.Linear(3, 1)


def to_numpy(t):
    return t.cpu().numpy()


def evaluate(m, x):
    return to_numpy(m(x))


print(evaluate(model, torch.randn(2, 3)))
"""


def test_facts_reach_down_a_chain_of_calls():
    # The module passes the model to evaluate(), which passes its output to to_numpy(): the
    # functions are walked callers first, so to_numpy() sees what evaluate() passed with what
    # evaluate() was given (and the call inside print(...) counts as a call).
    assert found(CHAIN) == [("TNS101", 9)]
    # Both links of the chain: line 13 passes m(x), line 16 the model.
    assert "t (passed at lines 13, 16) requires grad" in messages(CHAIN)[0]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(CHAIN)


def test_a_value_that_starts_as_none_is_what_it_becomes():
    # `best = None` then `best = out` in a loop; `self.head = None` in __init__ and a model
    # assigned in another method: where None meets a value, the join is that value (which may
    # be absent: `None.numpy()` fails anyway).
    code = """
    import torch
    from torch import nn

    model = nn.Linear(3, 1)
    best = None
    for step in range(3):
        out = model(torch.randn(2, 3))
        if best is None or out.sum() > best.sum():
            best = out
    try:
        arr = best.numpy()
    except RuntimeError as exc:
        error = str(exc)


    class Holder:
        def __init__(self):
            self.head = None

        def build(self):
            self.head = nn.Linear(3, 3)

        def copy(self, x):
            return self.head(x).clone().detach()
    """
    assert found(code) == [("TNS101", 12), ("TNS201", 25)]
    assert "requires grad" in run(code)["error"]


def test_attributes_set_from_self_and_from_locals_in_the_grad_mode_they_run_in():
    # forward() stores its output through a local, remember() the output of self.fc directly:
    # both require grad, and dump() reports them.  The same assignments under `with
    # torch.no_grad():` or in a `@torch.no_grad()` method store values that do not.
    code = """
    import torch
    from torch import nn


    class Model(nn.Module):
        def __init__(self, quiet):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.last = None
            self.kept = None

        def forward(self, x):
            out = self.fc(x)
            self.last = out
            return out

        def remember(self, x):
            self.kept = self.fc(x)

        def dump(self):
            return self.last.numpy(), self.kept.numpy()


    m = Model(False)
    m(torch.randn(2, 3))
    m.remember(torch.randn(2, 3))
    try:
        m.dump()
    except RuntimeError as exc:
        error = str(exc)
    """
    assert found(code) == [("TNS101", 22), ("TNS101", 22)]
    assert "requires grad" in run(code)["error"]
    quiet = code.replace("            out = self.fc(x)\n            self.last = out",
                         "            with torch.no_grad():\n                out = self.fc(x)\n                self.last = out")
    quiet = quiet.replace("        def remember(self, x):", "        @torch.no_grad()\n        def remember(self, x):")
    quiet = quiet.replace("            return out\n", "            return self.fc(x)\n")
    assert quiet != code and found(quiet, strict=True) == []
    env = run(quiet)
    assert "error" not in env


def test_the_calls_of_a_name_are_found_in_the_text():
    """summaries.call_positions finds the calls of a name by a search of the text for the first
    names a file asks, then by one index of every call: both answer alike (`f (x)` is no call,
    `def  f(` and `class\tBox(` define, `undef f(` and `xhelper(` are other words)."""
    import ast

    from flake8_tensorcopy.analysis import summaries
    from flake8_tensorcopy.analysis.walker import Walker
    from flake8_tensorcopy.rules.base import Context
    from flake8_tensorcopy.source import LineIndex

    text = textwrap.dedent("""
        def  helper(x):
            return helper(x - 1)

        class\tBox(object):
            def run(self, y):
                return helper (y), helper(y), self.run(y), undef helper(y)

        def main():
            b = Box()
            return Box(), run(1), xhelper(2), helper(3)
        """)
    names = ["helper", "Box", "run", "main", "xhelper"]

    def positions(searched: int) -> dict:
        """What the walker answers after `searched` names were searched for one by one (past
        summaries._DIRECT_SEARCHES, from one index of every call)."""
        walker = Walker(ast.parse(text.replace("undef helper(y)", "0")), [], Context(LineIndex(text), Options()))
        walker._call_sites = summaries.CallSites(text)
        walker._call_sites._found.update((f"other{i}", []) for i in range(searched))
        found = {name: walker.call_positions(name) for name in names}
        assert walker.call_positions("helper") is found["helper"]  # asked once a name
        assert (walker._call_sites._index is not None) == (searched >= summaries._DIRECT_SEARCHES)
        return found

    found = positions(0)
    assert positions(summaries._DIRECT_SEARCHES) == found
    # helper: the recursive call, `helper(y)`, `undef helper(y)` and `helper(3)`; not `helper (y)`.
    assert [text[p:p + 9] for p in found["helper"]] == ["helper(x ", "helper(y)", "helper(y)", "helper(3)"]
    assert len(found["Box"]) == 2 and len(found["run"]) == 2 and found["main"] == [] and len(found["xhelper"]) == 1


def _reference_call_index(text):
    """The calls as two patterns find them: every `name(` (a word that starts with an ASCII
    letter or `_`), less those right after `def` or `class` and blanks."""
    import re

    index = {}
    for m in re.finditer(r"\b([A-Za-z_]\w*)\(", text):
        index.setdefault(m.group(1), []).append(m.start(1))
    for m in re.finditer(r"(?:def|class)[ \t]+([A-Za-z_]\w*)\(", text):
        at = m.start()
        if at and (text[at - 1].isalnum() or text[at - 1] == "_"):
            continue  # `undef (`: not the keyword
        if m.start(1) in index.get(m.group(1), ()):
            index[m.group(1)].remove(m.start(1))
    return {k: v for k, v in index.items() if v}


def test_the_calls_found_are_what_the_patterns_find():
    import glob
    import os
    import re

    from conftest import FIXTURES, ROOT, agrees_everywhere
    from flake8_tensorcopy.analysis.summaries import call_index, call_positions

    def agree(text):
        reference = _reference_call_index(text)
        assert {k: v for k, v in call_index(text).items() if v} == reference, text
        for name in set(re.findall(r"\b[A-Za-z_]\w*", text)) | {"f", "g", "C"}:
            assert call_positions(text, name) == reference.get(name, []), (text, name)

    texts = []
    paths = glob.glob(os.path.join(ROOT, "flake8_tensorcopy", "**", "*.py"), recursive=True)
    paths += glob.glob(os.path.join(FIXTURES, "**", "*.py"), recursive=True)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    texts += ["def f(x): f(x)", "class C(B): C()", "undef f(x)", "déf(x)", "éf(x) _g(y) 9h(z)", "a.b(c)(d)",
              "def\tg(x)", "classy(x)", "x=def  f(1)", "(", "f((", "名字(1)"]
    agrees_everywhere(agree, texts, "abdefclsé_9( \t\n.", examples=300)


GENERATOR = """\
import torch
from torch import nn

model = nn.Linear(4, 2)


def predictions(batches):
    for b in batches:
        yield model(b)
    return "the end, not a value the loop sees"


def flat(batches):
    yield from [model(b) for b in batches]


batches = [torch.randn(2, 4)]
for out in predictions(batches):
    a = out.numpy()
with torch.no_grad():
    for out in predictions(batches):
        kept = out
b = kept.numpy()
gen = predictions(batches)
with torch.no_grad():
    for out in gen:
        kept_too = out
c = kept_too.numpy()
for out in flat(batches):
    d = out.numpy()
"""


def test_what_a_generator_yields_is_what_iterating_its_call_gives():
    """A generator function's call gives what it yields (not what it returns), computed when it
    is iterated: in the grad mode of the loop, wherever the generator was made."""
    found = [(v.code, v.line) for v in lint_text(GENERATOR, select_rules(["TNS101"])).violations]
    assert found == [("TNS101", 19), ("TNS101", 30)]
    pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(GENERATOR, "<generator>", "exec"), {})
    # The lines the analysis leaves alone run (grad is off while those loops iterate); the two
    # it reports are the ones that raise.
    quiet = GENERATOR.replace("    a = out.numpy()", "    a = out").replace("    d = out.numpy()", "    d = out")
    exec(compile(quiet, "<generator>", "exec"), {})
    last = GENERATOR.replace("    a = out.numpy()", "    a = out")
    with pytest.raises(RuntimeError, match="requires grad"):
        exec(compile(last, "<generator>", "exec"), {})


# --------------------------------------------------------------------------- module wrappers

WRAPPED = """
import torch

model = torch.nn.Linear(4, 2){frozen}
wrapped = {wrap}
out = wrapped(torch.randn(1, 4))
out.numpy()
"""

WRAPPERS = ["torch.nn.DataParallel(model)", "torch.compile(model, backend='eager')", "torch.jit.script(model)",
            "torch.jit.trace(model, torch.randn(1, 4))"]


@pytest.mark.parametrize("wrap", WRAPPERS)
def test_a_wrapped_module_requires_grad_as_the_module_does(wrap):
    # DataParallel, torch.compile and TorchScript keep the module's parameters: its output
    # requires grad where the module's parameters do, and not where they are frozen.
    code = WRAPPED.format(wrap=wrap, frozen="")
    assert found(code, "TNS101") == [("TNS101", 7)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)
    frozen = WRAPPED.format(wrap=wrap, frozen=".requires_grad_(False)")
    assert found(frozen, "TNS101") == []  # (--strict: "may", as for the module unwrapped)
    assert found(frozen, "TNS101", strict=True) == found(frozen.replace(f"wrapped = {wrap}", "wrapped = model"),
                                                         "TNS101", strict=True)
    run(frozen)


@pytest.mark.parametrize("frozen", ["", ".requires_grad_(False)"])
def test_the_module_data_parallel_wraps_is_its_module_attribute(frozen):
    code = WRAPPED.format(wrap="torch.nn.DataParallel(model)", frozen=frozen).replace(
        "out = wrapped(torch.randn(1, 4))", "out = wrapped.module(torch.randn(1, 4))")
    if frozen:
        assert found(code, "TNS101") == []
        run(code)
    else:
        assert found(code, "TNS101") == [("TNS101", 7)]
        with pytest.raises(RuntimeError, match="requires grad"):
            run(code)


# --------------------------------------------------------------------------- literal arguments


FLAGGED_STEP = """
import torch

def step(params, lr, cond=False):
    for p in params:
        if {test}:
            p -= lr * p.grad

w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
{calls}
"""


@pytest.mark.parametrize("test, calls, raises", [
    # Every call leaves `cond` to its default, False: the write is never reached.
    ("cond", "step([w], 0.1)", False),
    ("cond", "step([w], 0.1, False)\nstep([w], 0.1, cond=0)", False),
    ("cond and lr > 0", "step([w], 0.1)", False),
    # A call that passes True, one that passes something else, or a test it reaches.
    ("cond", "step([w], 0.1, cond=True)", True),
    ("cond", "step([w], 0.1)\nstep([w], 0.1, True)", True),
    ("cond", "step([w], 0.1, cond=lr_flag())", True),
    ("not cond", "step([w], 0.1)", True),
    ("cond or lr > 0", "step([w], 0.1)", True),
])
def test_a_branch_the_calls_literal_arguments_never_take_gets_nothing_from_them(test, calls, raises):
    code = FLAGGED_STEP.format(test=test, calls=calls)
    assert found(code, "TNS401") == ([("TNS401", 7)] if raises else [])
    env = {"lr_flag": lambda: True}
    torch = pytest.importorskip("torch")
    env["torch"] = torch
    program = compile(textwrap.dedent(code), "<case>", "exec")
    if raises:
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            exec(program, env)
    else:
        exec(program, env)


def test_a_flag_the_function_sets_again_is_not_what_its_calls_gave():
    code = FLAGGED_STEP.format(test="cond", calls="step([w], 0.1)").replace(
        "    for p in params:", "    cond = cond or lr > 0\n    for p in params:")
    assert found(code, "TNS401") == [("TNS401", 8)]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        run(code)


# A torch module class with a `__call__` of its own (ultralytics' `Model.__call__` runs
# `predict`, which returns what no gradient flows through): calling an instance runs that, not
# `forward`.  The one whose `__call__` runs `forward` stays a hazard.
OWN_CALL = """
import numpy as np
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

    def predict(self, x):
        with torch.no_grad():
            return self.forward(x).argmax(-1)

    def __call__(self, x):
        return {call}


class Yolo(Model):
    pass


def speeds(x):
    times = []
    for _ in range(2):
        times.append(Yolo()(x))
    return np.array(times), Model()(x).numpy()


speeds(torch.randn(2, 4))
"""


def test_a_module_class_with_its_own_call_returns_what_that_returns():
    code = OWN_CALL.format(call="self.predict(x)")
    assert found(code, "TNS1") == []
    run(code)
    code = OWN_CALL.format(call="self.forward(x)")
    lines = textwrap.dedent(code).splitlines()
    line = next(i + 1 for i, text in enumerate(lines) if "return np.array(times)" in text)
    assert found(code, "TNS1") == [("TNS101", line), ("TNS103", line)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)


# `model.freeze()`: a method of the module's class that freezes every parameter of its
# instance, or Lightning's `freeze()` where no class the analysis sees defines one (NeMo's
# models inherit it: pyannote's `self.model_.freeze()` was reported); a method that freezes
# only a part leaves the output requiring grad.
FREEZE_METHOD = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.head = nn.Linear(2, 2)

    def forward(self, x):
        return self.head(self.fc(x))

    def freeze(self):
{freeze}


def infer(x):
    model = Net()
    model.freeze()
    return model(x).numpy()


class Wrapper:
    def __init__(self):
        self.model_ = Net()
        self.model_.freeze()

    def embed(self, x):
        return self.model_(x).numpy()


def run(x):
    return infer(x), Wrapper().embed(x)


run(torch.randn(1, 3))
"""


def test_a_method_that_freezes_its_instance_makes_a_frozen_module():
    code = FREEZE_METHOD.format(freeze="        for p in self.parameters():\n            p.requires_grad = False")
    assert found(code, "TNS1") == []
    run(code)
    part = FREEZE_METHOD.format(freeze="        for p in self.fc.parameters():\n            p.requires_grad = False")
    lines = textwrap.dedent(part).splitlines()
    line = next(i + 1 for i, text in enumerate(lines) if text == "    return model(x).numpy()")
    # (The attribute's class-wide fact is unknown after any call that may change its grad.)
    assert found(part, "TNS1") == [("TNS101", line)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(part)


def test_lightnings_freeze_on_a_module_of_a_class_the_analysis_does_not_see():
    code = """
    import torch
    from lightning import LightningModule


    class Lit(LightningModule):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)


    def infer(x):
        model = Lit()
        model.freeze()
        return model(x).numpy()


    def unfrozen(x):
        model = Lit()
        return model(x).numpy()
    """
    assert found(code, "TNS1") == [("TNS101", 23)]


# A module that returns a distribution (a policy): `.sample()` of what it returns runs without
# grad (lightning-bolts' SAC agent was reported); `.rsample()` keeps the graph.
POLICY = """
import torch
from torch import nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(3, 2)

    def forward(self, x):
        return torch.distributions.Normal(self.mu(x), 1.0)


class Agent:
    def __init__(self, net):
        self.net = net

    def act(self, states):
        dist = self.net(states)
        return list(dist.{sample}().cpu().numpy())


Agent(Policy()).act(torch.randn(1, 3))
"""


def test_a_sample_of_what_a_module_returns_does_not_require_grad():
    code = POLICY.format(sample="sample")
    assert found(code, "TNS1") == []
    run(code)
    code = POLICY.format(sample="rsample")
    lines = textwrap.dedent(code).splitlines()
    assert found(code, "TNS1") == [("TNS101", lines.index("        return list(dist.rsample().cpu().numpy())") + 1)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)


# A module class of the file without parameters (an activation a notebook defines, pytorch-
# ignite's EfficientNet example: `res = Swish()(d)`, `res.numpy()`): its output requires grad
# only where its input does.  One with a parameter, or given an input that requires grad, is a
# hazard.
PARAMFREE = """
import torch
from torch import nn


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class Half(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 0.5  # a literal: no parameter

    def forward(self, x):
        return x * self.k


class Mish(Swish):
    def __init__(self):
        super().__init__()
        self.name = "mish"

    def forward(self, x):
        return x * torch.tanh(nn.functional.softplus(x))


class Learned(Swish):
    def __init__(self):
        super().__init__()
        self.beta = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x * torch.sigmoid(self.beta * x)


def plot():
    d = torch.linspace(-10.0, 10.0, 5)
    return Swish()(d).numpy(), Half()(d).numpy()


def learned():
    d = torch.linspace(-10.0, 10.0, 5)
    return Learned()(d).numpy()


def input_requires_grad():
    d = torch.linspace(-10.0, 10.0, 5, requires_grad=True)
    return Swish()(d).numpy()
"""


def test_a_module_class_without_parameters_computes_what_its_inputs_require():
    env = run(PARAMFREE)
    env["plot"]()
    lines = textwrap.dedent(PARAMFREE).splitlines()
    reported = [lines.index(f"def {f}():") + 3 for f in ("learned", "input_requires_grad")]
    assert found(PARAMFREE, "TNS1") == [("TNS101", line) for line in reported]
    for f in ("learned", "input_requires_grad"):
        with pytest.raises(RuntimeError, match="requires grad"):
            env[f]()
    # (A class whose body names torch's layers, `nn.functional` included, is not taken for one
    # without parameters: Mish.)
    mish = PARAMFREE.replace("return Swish()(d).numpy(), Half()(d).numpy()", "return Mish()(d).numpy()")
    plot_line = textwrap.dedent(mish).splitlines().index("    return Mish()(d).numpy()") + 1
    assert found(mish, "TNS1") == [("TNS101", plot_line)] + [("TNS101", line) for line in reported]
    run(mish)["plot"]()


# A module class without parameters of its own that keeps what its constructor is given as it
# is (`self.k = k`): an instance given literals (or left to literal defaults) has none; one
# given a tensor that requires grad computes what requires grad.
KEPT_ARGUMENTS = """
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self, k=2.0, w=None):
        super().__init__()
        self.k = k
        self.w = w

    def forward(self, x):
        return x * self.k if self.w is None else x * self.w


def given_literals():
    x = torch.ones(3)
    return Scaled()(x).numpy(), Scaled(-1)(x).numpy(), Scaled(k=0.5, w=None)(x).numpy()


def given_a_leaf():
    w = torch.ones(3, requires_grad=True)
    return Scaled(w=w)(torch.ones(3)).numpy()


def given_starred(args):
    return Scaled(*args)(torch.ones(3)).numpy()
"""


def test_an_instance_given_literals_of_a_class_that_keeps_its_arguments_has_no_parameters():
    env = run(KEPT_ARGUMENTS)
    env["given_literals"]()
    with pytest.raises(RuntimeError, match="requires grad"):
        env["given_a_leaf"]()
    lines = textwrap.dedent(KEPT_ARGUMENTS).splitlines()
    reported = [lines.index(f"def {f}():") + 3 for f in ("given_a_leaf",)]
    starred = lines.index("def given_starred(args):") + 2
    # (What a starred call passes is not read: the instance may have parameters.)
    assert found(KEPT_ARGUMENTS, "TNS1") == [("TNS101", line) for line in reported] + [("TNS101", starred)]


FACTORIES = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)

    @classmethod
    def build(cls):
        return cls()

    @classmethod
    def width(cls):
        return 3


out = Net.build()(torch.randn(2, Net.width()))
{statement}
"""


def test_a_class_method_makes_an_instance_of_its_class():
    # `cls` of a class method is the class: `Net.build()` returns an instance of Net, whose
    # output requires grad, as `Net()`'s does.
    code = FACTORIES.format(statement="print(out.numpy())")
    assert found(code, "TNS101") == [("TNS101", 24)]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(code)
    fixed = code.replace("out.numpy()", "out.detach().numpy()")
    assert found(fixed, "TNS101") == []
    run(fixed)
