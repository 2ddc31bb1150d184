"""TNS5xx beyond the generated example tests: the runtime facts the rules rest on, the correct
look-alikes that must stay silent, the conditions of each rule, the safety of TNS503's fix on
real torch, notebooks, and that files without a trigger are not parsed.  The domains the rules
ask (snapshots, accumulators) are tested in test_domains.py."""

import contextlib
import io
import os
import re
import textwrap

import pytest

from conftest import FIXTURES, tc
from flake8_tensorcopy.engine import fix_text, lint_text, select_rules
from flake8_tensorcopy.model import Options

TNS5 = select_rules(["TNS5"])
HEAD = """\
import copy
import logging

import numpy as np
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
logger = logging.getLogger("t")


def train_one_epoch(net, optimizer):
    for x, y in loader:
        loss = nn.functional.mse_loss(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def evaluate(net):
    with torch.no_grad():
        return sum(nn.functional.mse_loss(net(x), y).item() for x, y in loader)
"""


def program(body: str) -> str:
    return HEAD + "\n\n" + textwrap.dedent(body).strip("\n") + "\n"


def findings(code: str, options: Options | None = None):
    result = lint_text(code, TNS5, options or Options())
    assert result.error is None, result.error
    return sorted((v.code, v.line - HEAD.count("\n") - 2) for v in result.violations)


def run(code: str) -> dict:
    """Execute a program on real torch (CPU), in a scratch directory; its globals."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ns = {"__name__": "__tns5__"}
    out = io.StringIO()
    cwd = os.getcwd()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(out):
        os.chdir(tmp)
        try:
            exec(compile(code, "<tns5>", "exec"), ns)
        finally:
            os.chdir(cwd)
    ns["__stdout__"] = out.getvalue()
    return ns


# --------------------------------------------------------------------------- runtime facts


def test_copies_that_are_not_copies_on_real_torch():
    """shared/pytorch-facts.md, "Copies that are not copies", row by row."""
    ns = run(program("""
        sd = model.state_dict()
        shallow, as_dict = sd.copy(), dict(sd)
        deep = copy.deepcopy(model.state_dict())
        cloned = {k: v.detach().clone() for k, v in model.state_dict().items()}
        arr, arr_cpu, det, data = (model.weight.detach().numpy(), model.weight.detach().cpu().numpy(),
                                   model.weight.detach(), model.weight.data)
        arr_copy, det_clone = model.weight.detach().numpy().copy(), model.weight.detach().clone()
        before = model.weight.detach().clone()
        train_one_epoch(model, opt)
        total = 0
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y)
        total_item = 0
        for x, y in loader:
            total_item += nn.functional.mse_loss(model(x), y).item()
    """))
    torch, np = ns["torch"], ns["np"]
    w = ns["model"].weight
    assert not torch.equal(ns["before"], w)  # the weights did change
    for alias in (ns["sd"]["weight"], ns["shallow"]["weight"], ns["as_dict"]["weight"], ns["det"], ns["data"]):
        assert torch.equal(alias, w) and alias.data_ptr() == w.data_ptr()
    assert not ns["sd"]["weight"].requires_grad
    for arr in (ns["arr"], ns["arr_cpu"]):
        assert np.array_equal(arr, w.detach().numpy()) and np.shares_memory(arr, w.detach().numpy())
    for copied in (ns["deep"]["weight"], ns["cloned"]["weight"], ns["det_clone"]):
        assert torch.equal(copied, ns["before"])
    assert np.array_equal(ns["arr_copy"], ns["before"].numpy())
    total = ns["total"]
    assert total.requires_grad and total.grad_fn.name() == "AddBackward0"
    assert total.grad_fn.next_functions[0][0].name() == "AddBackward0"  # the earlier iterations' graph
    assert isinstance(ns["total_item"], float)


def test_a_list_of_losses_and_an_in_place_total_keep_every_graph_on_real_torch():
    """The two forms TNS503 follows besides `+=`: `losses.append(loss)` keeps each loss's graph
    (and, where the loss is not back-propagated, the activations it saved); `total.add_(loss)`
    on a zero tensor that does not require grad makes it require grad and chains the graphs, as
    `total += loss` does.  `.detach()` keeps the values without any of it."""
    ns = run(program("""
        import gc
        import weakref

        net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))

        def keep(how, backward):
            kept, saved, total = [], [], torch.zeros(())
            for x, y in loader:
                h = net[1](net[0](x))  # saved by the last Linear for its weight's gradient
                saved.append(weakref.ref(h))
                loss = nn.functional.mse_loss(net[2](h), y)
                if backward:
                    loss.backward()
                kept.append(how(loss))
                total.add_(how(loss))
                del h, loss
            gc.collect()
            return kept, total, sum(r() is not None for r in saved)

        kept, total, alive = keep(lambda t: t, backward=False)
        kept_bw, _, alive_bw = keep(lambda t: t, backward=True)
        detached, total_detached, alive_detached = keep(lambda t: t.detach(), backward=False)
    """))
    assert all(t.grad_fn is not None for t in ns["kept"]) and ns["alive"] == len(ns["loader"])
    # Back-propagated each step: the saved activations are freed, the graph's nodes are not.
    assert all(t.grad_fn is not None for t in ns["kept_bw"]) and ns["alive_bw"] == 0
    total = ns["total"]
    assert total.requires_grad and not total.is_leaf and total.grad_fn.name() == "AddBackward0"
    assert total.grad_fn.next_functions[0][0].name() == "AddBackward0"  # the earlier iterations' graph
    assert not any(t.requires_grad for t in ns["detached"]) and ns["alive_detached"] == 0
    assert ns["total_detached"].is_leaf and not ns["total_detached"].requires_grad
    torch = ns["torch"]
    assert torch.equal(torch.stack(ns["kept"]).detach(), torch.stack(ns["detached"]))
    assert torch.equal(total.detach(), ns["total_detached"])


def test_checker_fixture_runs_on_real_torch():
    """fixtures/TNS5.py is real code: every function runs (and the look-alikes work)."""
    with open(os.path.join(FIXTURES, "TNS5.py"), encoding="utf-8") as f:
        code = f.read()
    ns = run(code + textwrap.dedent("""
        import io
        early_stopping(2); early_stopping_deepcopy(2); early_stopping_clone(2); rewind_to_init(2)
        checkpoint_after_training(1); checkpoint_every_epoch(2, io.BytesIO()); best_checkpoint_dict(2, io.BytesIO())
        teacher_snapshot(1); only_keys(1)
        own = WithOwnStateDict(); snap = own.snapshot_then_train(torch.optim.SGD(own.parameters(), lr=0.1))
        hist = weight_history(3); hist_copies = weight_history_copies(3); step_size(2); loss_history(2)
        trace = rebound_trajectory(3); snaps = manual_update(3); read_before_update(1)
        epoch_loss(1); epoch_loss_item(1); eval_without_no_grad(); meta_learning(loader); gradient_accumulation(2)
        training_step_returns(loader); Trainer().run(); Trainer().handed_on(print); early_return(False); validation()
        rebuilt_model(1)
    """))
    np, torch = ns["np"], ns["torch"]
    assert (ns["hist"] == ns["hist"][-1]).all()  # the reported history: the last weights 3 times
    assert not (ns["hist_copies"][0][0] == ns["hist_copies"][0][-1]).all()
    assert not np.array_equal(ns["trace"][0], ns["trace"][-1])  # rebound: each view kept its values
    assert all(torch.equal(s, ns["snaps"][-1]) for s in ns["snaps"])


# --------------------------------------------------------------------------- TNS501


# Early stopping in a function whose model is a parameter it only calls (no `net.train()`).
EARLY_STOPPING = """
    def fit(net, optimizer, epochs):
        best, best_loss = None, float("inf")
        for epoch in range(epochs):
            for x, y in loader:
                loss = nn.functional.mse_loss(net(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            if loss.item() < best_loss:
                best_loss = loss.item()
                best = net.state_dict()
        net.load_state_dict(best)
        return best
"""


# An early stopper that keeps the state dict and restores it in a method of its own.
STOPPER_RESTORES = """
    class EarlyStopper:
        def __init__(self):
            self.best = float("inf")
            self.best_state = None

        def step(self, val_loss, net):
            if val_loss < self.best:
                self.best = val_loss
                self.best_state = net.state_dict()

        def restore(self, net):
            if self.best_state is not None:
                net.load_state_dict(self.best_state)

    stopper = EarlyStopper()
    for val_loss in (2.0, 1.0, 3.0):
        train_one_epoch(model, opt)
        stopper.step(val_loss, model)
    stopper.restore(model)
"""


# `Trainer.step` is no optimizer's step: the method steps one over the trainer's model.
TRAINER_STEP = """
    class Trainer:
        def __init__(self, net):
            self.model = net
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

        def step(self, x, y):
            self.optimizer.zero_grad()
            nn.functional.mse_loss(self.model(x), y).backward()
            self.optimizer.step()

    trainer = Trainer(model)
    best = trainer.model.state_dict()
    for x, y in loader:
        trainer.step(x, y)
    trainer.model.load_state_dict(best)
"""


def test_a_trainers_step_changes_a_state_dict_snapshot_on_real_torch():
    torch = pytest.importorskip("torch")
    read = TRAINER_STEP.replace("trainer.model.load_state_dict(best)", "first = float(best['weight'][0, 0])")
    ns = run(program(read))
    assert ns["first"] == ns["model"].weight[0, 0].item()  # the snapshot moved with the weights
    ns = run(program(read.replace("best = trainer.model.state_dict()",
                                  "best = copy.deepcopy(trainer.model.state_dict())")))
    assert ns["first"] != ns["model"].weight[0, 0].item() and torch.is_tensor(ns["best"]["weight"])


@pytest.mark.parametrize("body,expected", [
    pytest.param("""
        best = None
        for epoch in range(3):
            train_one_epoch(model, opt)
            if evaluate(model) < 10:
                best = model.state_dict()
        model.load_state_dict(best)
    """, [("TNS501", 5)], id="a function of the file steps the model it is handed"),
    pytest.param("""
        class Trainer:
            def __init__(self, net):
                self.model = net
                self.optimizer = torch.optim.Adam(self.model.parameters())

            def epoch(self):
                self.model.train()
                for x, y in loader:
                    nn.functional.mse_loss(self.model(x), y).backward()
                    self.optimizer.step()
                    self.optimizer.zero_grad()

            def fit(self, epochs):
                best = None
                for e in range(epochs):
                    self.epoch()
                    if e == 0:
                        self.best = self.model.state_dict()
                self.model.load_state_dict(self.best)
    """, [("TNS501", 18)], id="a method of the class steps self.model"),
    pytest.param("""
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        init = model.state_dict()
        for x, y in loader:
            scaler.scale(nn.functional.mse_loss(model(x), y)).backward()
            scaler.step(opt)
            scaler.update()
        torch.save(init, "init.pt")
    """, [("TNS501", 2)], id="scaler.step(opt)"),
    pytest.param("""
        original = model.state_dict()
        model.load_state_dict({k: v + 0.01 * torch.randn_like(v) for k, v in original.items()})
        noisy_loss = evaluate(model)
        model.load_state_dict(original)
    """, [("TNS501", 1)], id="restoring after load_state_dict restores nothing"),
    pytest.param("""
        snapshot = model.state_dict()
        nn.init.zeros_(model.weight)
        torch.save(snapshot, "s.pt")
    """, [("TNS501", 1)], id="nn.init writes in place"),
    pytest.param("""
        def gan_step(netG, netD, optimizerD, batches):
            netG.train()
            netD.train()
            g_init, d_init = netG.state_dict(), netD.state_dict()
            for x in batches:
                optimizerD.step()
            netG.load_state_dict(g_init)
            netD.load_state_dict(d_init)
    """, [("TNS501", 4)], id="the discriminator's optimizer steps the discriminator, not the generator"),
    pytest.param("""
        start = model.state_dict()
        with torch.no_grad():
            for p in model.parameters():
                p.data.clamp_(-0.01, 0.01)
        torch.save(start, "s.pt")
    """, [("TNS501", 1)], id="in-place writes to the module's parameters"),
    pytest.param(EARLY_STOPPING, [("TNS501", 11)], id="a parameter that is called and has a state dict is a module"),
    pytest.param(TRAINER_STEP, [("TNS501", 12)], id="a method named step of a class of the file steps its model"),
    pytest.param(STOPPER_RESTORES, [("TNS501", 18)], id="an early stopper restores what it keeps in a method of its own"),
])
def test_state_dict_snapshots_reported(body, expected):
    assert findings(program(body)) == expected


_STEPPING_CHAIN = """
import torch
from torch import nn


def inner(model, opt):
    opt.step()


def middle(model, opt):
    inner(model, opt)


def outer(model, opt):
    middle(model, opt)


def top(model, opt):
    outer(model, opt)
"""
_RUN = """
def run_{name}():
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    {name} = model.weight.detach()
    {calls}(model, opt)
    return {name}.sum()
"""
_FAR, _NEAR = _RUN.format(name="far", calls="top"), _RUN.format(name="near", calls="middle")


@pytest.mark.parametrize("order", [(_FAR, _NEAR), (_NEAR, _FAR)], ids=["far first", "near first"])
def test_a_function_steps_an_optimizer_two_calls_down_whatever_was_asked_first(order):
    # `middle` steps one call down (`inner`), `top` three: a function of the file steps an
    # optimizer where one of the functions it calls, or they call, steps one.  What the search
    # from `top` met of `middle` two levels down (it searched it no further) is not `middle`'s
    # answer: each order of the two functions finds the same.
    code = _STEPPING_CHAIN + "".join(order)
    lines = code.splitlines()
    found = [(v.code, lines[v.line - 1].strip()) for v in lint_text(code, TNS5).violations]
    assert found == [("TNS502", "near = model.weight.detach()")]


@pytest.mark.parametrize("body", [
    pytest.param("""
        teacher = nn.Linear(4, 1)
        teacher_state = teacher.state_dict()
        for epoch in range(2):
            train_one_epoch(model, opt)
        teacher.load_state_dict(teacher_state)
    """, id="the optimizer the file builds updates another module"),
    pytest.param("""
        other = nn.Linear(4, 1)
        other_opt = torch.optim.SGD(other.parameters(), lr=0.1)
        sd = model.state_dict()
        for x, y in loader:
            nn.functional.mse_loss(other(x), y).backward()
            other_opt.step()
        torch.save(sd, "m.pt")
    """, id="another module's optimizer steps"),
    pytest.param("""
        other = nn.Linear(4, 1)
        sd = model.state_dict()
        train_one_epoch(other, torch.optim.SGD(other.parameters(), lr=0.1))
        torch.save(sd, "m.pt")
    """, id="the stepping function is handed another module"),
    pytest.param("""
        sd = model.state_dict()
        evaluate(model)
        torch.save(sd, "m.pt")
    """, id="a function of the file that does not step"),
    pytest.param("""
        best = None
        for epoch in range(3):
            train_one_epoch(model, opt)
            best = copy.deepcopy(model.state_dict())
        model.load_state_dict(best)
    """, id="deepcopy"),
    pytest.param("""
        best = None
        for epoch in range(3):
            train_one_epoch(model, opt)
            best = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best)
    """, id="copy by comprehension"),
    pytest.param("""
        for epoch in range(3):
            train_one_epoch(model, opt)
        final = model.state_dict()
        torch.save(final, "final.pt")
    """, id="snapshot after training ends"),
    pytest.param("""
        sd = model.state_dict()
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        train_one_epoch(model, opt)
        torch.save(sd, "m.pt")
    """, id="the model name is rebound"),
    pytest.param("""
        sd = model.state_dict()
        model.double()
        for x, y in loader:
            nn.functional.mse_loss(model(x.double()), y.double()).backward()
            opt.step()
        assert sd["weight"].dtype == torch.float32 and not torch.equal(sd["weight"], model.weight.float())
        torch.save(sd, "m.pt")
    """, id="a dtype or device conversion gives the parameters new storage"),
    pytest.param("""
        sd = model.state_dict()
        train_one_epoch(model, opt)
        print(len(sd), sd is None, "weight" in sd, list(sd.keys()))
        for key in sd:
            print(key)
    """, id="only the keys and the container are read"),
    pytest.param("""
        opt_state = opt.state_dict()
        train_one_epoch(model, opt)
        torch.save(opt_state, "opt.pt")
        frozen = copy.deepcopy(model).state_dict()
        train_one_epoch(model, opt)
        torch.save(frozen, "f.pt")
    """, id="an optimizer's state dict, a deep copy's state dict"),
    pytest.param("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 1)

            def state_dict(self, *args, **kwargs):
                return copy.deepcopy(super().state_dict(*args, **kwargs))

            def snapshot(self, optimizer):
                before = self.state_dict()
                optimizer.step()
                return before
    """, id="a class of the file with its own state_dict"),
    pytest.param("""
        def resume(sched, optimizer, subnet):
            saved = sched.state_dict()
            for x, y in loader:
                nn.functional.mse_loss(subnet(x), y).backward()
                optimizer.step()
            torch.save(saved, "s.pt")

        resume(torch.optim.lr_scheduler.StepLR(opt, 1), opt, model)
    """, id="a state dict of something never called (subnet( is not a call of net)"),
    pytest.param("""
        sd = model.state_dict()
        ref = {k: v.clone() for k, v in sd.items()}
        model.load_state_dict(sd)
        assert torch.equal(sd["weight"], ref["weight"])
    """, id="its own state dict loaded back: each tensor copied onto itself"),
    pytest.param("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = nn.Linear(4, 4)
                self.head = nn.Linear(4, 1)

            def forward(self, x):
                return self.head(self.backbone(x))

        net = Net()
        net.backbone.requires_grad_(False)
        sgd = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.5)
        frozen = net.backbone.state_dict()
        ref = copy.deepcopy(frozen)
        net(torch.randn(8, 4)).sum().backward()
        sgd.step()
        assert torch.equal(frozen["weight"], ref["weight"])
        net.backbone.load_state_dict(frozen)
    """, id="a frozen submodule's state dict: a step leaves what gets no gradient alone"),
    pytest.param(STOPPER_RESTORES.replace("net.state_dict()", "copy.deepcopy(net.state_dict())"),
                 id="an early stopper that restores a deep copy"),
    pytest.param(STOPPER_RESTORES.replace("        train_one_epoch(model, opt)\n", "").replace(
        "stopper = EarlyStopper()", "stopper = EarlyStopper()\n    train_one_epoch(model, opt)"),
                 id="an early stopper that keeps and restores after the last step"),
    pytest.param(STOPPER_RESTORES.replace("if self.best_state is not None:", "if not self.best_state:").replace(
        "net.load_state_dict(self.best_state)", "self.best_state = {}\n            net.load_state_dict(self.best_state, strict=False)"),
                 id="an early stopper whose restore binds what it loads"),
])
def test_state_dict_lookalikes_silent(body):
    code = program(body)
    assert findings(code) == []
    run(code)


def test_a_called_parameters_state_dict_restores_nothing_on_real_torch():
    # The reported `fit` above, run: the "best" state dict is the last weights, whatever epoch
    # it was taken in, and training did change them.
    run_it = "\ninitial = model.weight.detach().clone()\nbest = fit(model, opt, 3)\n"
    ns = run(program(textwrap.dedent(EARLY_STOPPING) + run_it))
    torch = ns["torch"]
    assert torch.equal(ns["best"]["weight"], ns["model"].weight)
    assert not torch.equal(ns["initial"], ns["model"].weight)


def test_an_early_stoppers_restore_restores_the_last_weights_on_real_torch():
    # The reported stopper above, run: `restore()` loads the last weights back, not the best
    # epoch's (the second of three).
    ns = run(program(STOPPER_RESTORES))
    torch = ns["torch"]
    assert ns["stopper"].best == 1.0
    assert ns["stopper"].best_state["weight"].data_ptr() == ns["model"].weight.data_ptr()
    assert torch.equal(ns["stopper"].best_state["weight"], ns["model"].weight)
    ns = run(program(STOPPER_RESTORES.replace("net.state_dict()", "copy.deepcopy(net.state_dict())")))
    assert ns["stopper"].best_state["weight"].data_ptr() != ns["model"].weight.data_ptr()


# --------------------------------------------------------------------------- TNS502


@pytest.mark.parametrize("body,expected", [
    pytest.param("""
        x = torch.randn(3)
        view = x.numpy()
        x += 1
        print(view.sum())
    """, [("TNS502", 2)], id="augmented assignment on a tensor is in place"),
    pytest.param("""
        hist = []
        for step in range(3):
            train_one_epoch(model, opt)
            hist.append(model.bias.detach().cpu().numpy())
        print(np.stack(hist))
    """, [("TNS502", 4)], id=".cpu() of a tensor on the CPU returns it"),
    pytest.param("""
        prev = model.weight.detach()
        model.weight.data.copy_(torch.zeros(1, 4))
        print((model.weight - prev).abs().sum())
    """, [("TNS502", 1)], id="copy_ through .data"),
    pytest.param("""
        with torch.no_grad():
            w = model.weight.numpy()
        train_one_epoch(model, opt)
        np.save("w.npy", w)
    """, [("TNS502", 2)], id="numpy() under no_grad"),
    pytest.param("""
        snaps = {}
        for step in range(3):
            train_one_epoch(model, opt)
            snaps[step] = model.weight.detach()
        torch.save(snaps, "s.pt")
    """, [("TNS502", 4)], id="stored in a dict"),
    pytest.param("""
        w = model.weight
        snaps = []
        for step in range(3):
            snaps.append(w.detach())
            train_one_epoch(model, opt)
        print(torch.stack(snaps))
    """, [("TNS502", 4)], id="through a local alias of the parameter"),
])
def test_tensor_snapshots_reported(body, expected):
    code = program(body)
    assert findings(code) == expected
    run(code)


@pytest.mark.parametrize("body", [
    pytest.param("""
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model.to(device)
        hist = []
        for step in range(2):
            train_one_epoch(model, opt)
            hist.append(model.weight.detach().cpu().numpy())
            hist.append(model.weight.detach().to("cpu").numpy())
        print(hist)
    """, id=".cpu() copies from an accelerator: not reported where the device is unknown"),
    pytest.param("""
        hist = []
        for step in range(2):
            train_one_epoch(model, opt)
            hist.append(np.array(model.weight.detach()))
            hist.append(model.weight.detach().clone().numpy())
            hist.append(model.weight.detach().numpy().copy())
            hist.append(model.weight.tolist())
        print(hist)
    """, id="copies"),
    pytest.param("""
        x = torch.randn(3)
        view = x.numpy()
        x = x + 1
        print(view.sum())
    """, id="the tensor is rebound, not updated"),
    pytest.param("""
        for step in range(3):
            current = model.weight.detach()
            print(current.sum())
            train_one_epoch(model, opt)
    """, id="read before each update"),
    pytest.param("""
        grads = []
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            grads.append(loss.detach())
        print(grads)
    """, id="a fresh tensor each iteration"),
    pytest.param("""
        probs = torch.sigmoid(model.weight)
        probs = probs.detach()
        probs.fill_(1)
        print(probs.sum())
    """, id="the name rebound to the alias: what is written through it is what it reads"),
    pytest.param("""
        def cost(full):
            probs = torch.sigmoid(model.weight)
            if full:
                probs = probs.detach()
                probs.fill_(1)
            return (probs * 2).sum()
        print(cost(True), cost(False))
    """, id="the same in a branch (monai's DiNTS)"),
])
def test_tensor_snapshot_lookalikes_silent(body):
    code = program(body)
    assert findings(code) == []
    run(code)


# --------------------------------------------------------------------------- TNS503


@pytest.mark.parametrize("body,expected", [
    pytest.param("""
        total = torch.zeros(())
        for x, y in loader:
            total = total + nn.functional.mse_loss(model(x), y)
        print(f"{total.item():.3f}")
    """, [("TNS503", 3)], id="total = total + loss"),
    pytest.param("""
        def step(criterion, batches):
            total = 0.0
            for x, y in batches:
                loss = criterion(x, y)
                loss.backward()
                total += loss
            return total.item()
    """, [("TNS503", 6)], id="back-propagated earlier in the loop: requires grad for certain"),
    pytest.param("""
        def fit(epochs):
            for epoch in range(epochs):
                epoch_loss, n = 0, 0
                for x, y in loader:
                    loss = nn.functional.mse_loss(model(x), y)
                    epoch_loss += loss
                    n += 1
                logger.info("epoch %d: %.4f", epoch, epoch_loss / n)
    """, [("TNS503", 6)], id="reset every epoch, carried across batches"),
    pytest.param("""
        smooth = 0.0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            smooth = 0.9 * smooth + 0.1 * loss
        print(f"{smooth:.4f}")
    """, [("TNS503", 4)], id="an exponentially smoothed loss: each value holds the last"),
    pytest.param("""
        running = 0.0
        for x, y in loader:
            running = running * 0.98 + nn.functional.mse_loss(model(x), y)
        print(float(running))
    """, [("TNS503", 3)], id="a decayed total, the factor after it"),
    pytest.param("""
        grad_norm = 0.0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            for p in model.parameters():
                grad_norm += p.norm()
        print(float(grad_norm))
    """, [("TNS503", 5)], id="over the parameters, inside the loop over batches: carried across batches"),
    # PyTorch's transfer-learning tutorial, with `loss` for `loss.item()`: in the train phase
    # the loss is back-propagated, so it requires grad, and the total keeps each step's graph.
    pytest.param("""
        for phase in ["train", "val"]:
            running_loss = 0.0
            for x, y in loader:
                with torch.set_grad_enabled(phase == "train"):
                    loss = nn.functional.mse_loss(model(x), y)
                    if phase == "train":
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                running_loss += loss * x.size(0)
            print(phase, float(running_loss))
            assert (running_loss.grad_fn is not None) == (phase == "train")
    """, [("TNS503", 10)], id="set_grad_enabled(phase == 'train'), the loss back-propagated in the train phase"),
    pytest.param("""
        running = {"loss": 0.0, "n": 0}
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running["loss"] += loss
            running["n"] += 1
        print(running["loss"] / running["n"])
        assert running["loss"].grad_fn is not None
    """, [("TNS503", 7)], id="a total in a dict entry"),
    pytest.param("""
        import collections
        running = collections.defaultdict(float)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            running["loss"] = running["loss"] + loss
        print(f"{running['loss'].item():.3f}")
        assert running["loss"].grad_fn is not None
    """, [("TNS503", 5)], id="a total in a defaultdict entry, total = total + loss"),
])
def test_accumulators_reported(body, expected):
    code = program(body)
    assert findings(code) == expected
    run(code)


@pytest.mark.parametrize("body", [
    pytest.param("""
        smooth = 0.0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            smooth = 0.9 * smooth + 0.1 * loss.item()
        print(f"{smooth:.4f}")
    """, id="a smoothed loss of Python floats"),
    pytest.param("""
        h = 0.0
        for x, y in loader:
            h = 0.5 * h + model(x).mean()
        opt.zero_grad()
        h.backward()
    """, id="a decayed total back-propagated after the loop"),
    pytest.param("""
        meta_loss = 0
        for x, y in loader:
            meta_loss += nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        meta_loss.backward()
    """, id="meta-learning: back-propagated after the loop"),
    pytest.param("""
        total = 0
        for x, y in loader:
            total = total + nn.functional.mse_loss(model(x), y)
        (g,) = torch.autograd.grad(total, [model.weight])
    """, id="torch.autograd.grad"),
    pytest.param("""
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        acc = 0
        for x, y in loader:
            acc += nn.functional.mse_loss(model(x), y)
        scaler.scale(acc / 3).backward()
    """, id="scaler.scale(...).backward()"),
    pytest.param("""
        def training_step(batch):
            total = 0
            for x, y in batch:
                total += nn.functional.mse_loss(model(x), y)
            return {"loss": total}
    """, id="returned (Lightning's training_step)"),
    pytest.param("""
        def collect(batch, losses):
            total = 0
            for x, y in batch:
                total += nn.functional.mse_loss(model(x), y)
                losses.append(total)
            return len(losses)
    """, id="stored in a container (the caller's list)"),
    pytest.param("""
        def gen(batch):
            total = 0
            for x, y in batch:
                total += nn.functional.mse_loss(model(x), y)
                yield total
    """, id="yielded"),
    pytest.param("""
        def closure(batch):
            total = 0
            for x, y in batch:
                total += nn.functional.mse_loss(model(x), y)
            return lambda: total
    """, id="read by a lambda"),
    pytest.param("""
        total = 0
        def bump():
            global total
            for x, y in loader:
                total += nn.functional.mse_loss(model(x), y)
    """, id="global"),
    pytest.param("""
        total = 0
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y)

        def report():
            return total
    """, id="a module global another function reads"),
    pytest.param("""
        total = 0
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y).item()
        total2 = 0
        for x, y in loader:
            total2 += nn.functional.mse_loss(model(x), y).detach()
        print(total, total2)
    """, id=".item() and .detach()"),
    pytest.param("""
        total = 0
        with torch.no_grad():
            for x, y in loader:
                total += nn.functional.mse_loss(model(x), y)
        print(total)
    """, id="no_grad"),
    pytest.param("""
        total = 0
        for x, y in loader:
            total += (x - y.mean()).pow(2).sum()
        print(total)
    """, id="data that does not require grad"),
    pytest.param("""
        for x, y in loader:
            total = 0
            total += nn.functional.mse_loss(model(x), y)
            print(total.item())
    """, id="reset at the top of each iteration"),
    # One pass over the parameters (for logging, a penalty): one small graph over the
    # parameters, not a step's graph kept from each iteration; it goes when the total does.
    pytest.param("""
        total_norm = 0.0
        for p in model.parameters():
            total_norm += p.norm() ** 2
        print("param norm", float(total_norm ** 0.5))
    """, id="a norm over model.parameters()"),
    pytest.param("""
        params = list(model.parameters())
        total_norm = 0.0
        for p in params:
            total_norm += p.norm() ** 2
        print("param norm", float(total_norm ** 0.5))
    """, id="a norm over a list of the parameters"),
    pytest.param("""
        for epoch in range(2):
            train_one_epoch(model, opt)
            norms = 0.0
            for name, p in model.named_parameters():
                if "bias" not in name:
                    norms = norms + p.pow(2).sum()
            for group in opt.param_groups:
                l1 = 0
                for p in group["params"]:
                    l1 += p.abs().sum()
                logger.info("epoch %d: %.3f %.3f", epoch, float(norms), float(l1))
    """, id="named_parameters() and a param group's params, reset every epoch"),
    pytest.param("""
        import collections
        stats = collections.defaultdict(float)
        for x, y in loader:
            stats["loss"] += nn.functional.mse_loss(model(x), y).item()
        running = {"loss": 0.0}
        for x, y in loader:
            running["loss"] = 0.0
            running["loss"] += nn.functional.mse_loss(model(x), y)
            print(float(running["loss"]))
        print(stats["loss"])
    """, id="dict entries: .item(), and reset at the top of each iteration"),
    pytest.param("""
        def train(stats):
            for x, y in loader:
                stats["loss"] += nn.functional.mse_loss(model(x), y)

        def keep():
            running = {"loss": 0.0}
            for x, y in loader:
                running["loss"] += nn.functional.mse_loss(model(x), y)
            return running

        train({"loss": 0.0})
        kept = keep()
        kept["loss"].backward()
    """, id="dict entries: the caller's dict, a dict returned"),
    pytest.param("""
        for phase in ["train", "val"]:
            running_loss = 0.0
            for x, y in loader:
                with torch.set_grad_enabled(phase == "train"):
                    loss = nn.functional.mse_loss(model(x), y)
                    if phase == "train":
                        opt.zero_grad()
                        loss.backward()
                        opt.step()
                running_loss += loss.item() * x.size(0)
                loss.detach_()
            print(phase, running_loss)
        smooth = 0.0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            loss.detach_()
            smooth = 0.9 * smooth + 0.1 * loss
        print(float(smooth))
    """, id="the transfer-learning tutorial as written (.item()); detached in place after the backward"),
    pytest.param("""
        class Pretraining(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 1)
                self.parts = ("a", "b")

            def forward(self, x, labels=None):
                out = self.fc(x)
                total_loss = None if labels is None else torch.zeros(())
                if labels is not None:
                    part_total = torch.zeros(())
                    for key in self.parts:
                        part_loss = nn.functional.mse_loss(out, labels)
                        part_total += part_loss
                    total_loss += part_total
                return total_loss, out

        net = Pretraining()
        loss, _ = net(torch.randn(8, 4), torch.randn(8, 1))
        loss.backward()
    """, id="a total of the parts added to the loss a forward returns"),
])
def test_accumulator_lookalikes_silent(body):
    code = program(body)
    assert findings(code) == []
    run(code)


# --------------------------------------------------------------------------- TNS503: lists, add_


@pytest.mark.parametrize("body,expected", [
    pytest.param("""
        losses = []
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss)
        print(f"{np.mean([l.item() for l in losses]):.4f}", len(losses))
        assert all(l.grad_fn is not None for l in losses)
    """, [("TNS503", 7)], id="a list of the step's losses, read for their values"),
    pytest.param("""
        def evaluate_without_no_grad(net):
            net.eval()
            val_losses: list = []
            for x, y in loader:
                val_losses.append(nn.functional.mse_loss(net(x), y))
            return float(torch.stack(val_losses).mean())

        assert evaluate_without_no_grad(model) == evaluate_without_no_grad(model)
    """, [("TNS503", 5)], id="an evaluation without no_grad keeps each loss's graph"),
    pytest.param("""
        train_losses, seen = [], 0
        for epoch in range(2):
            for x, y in loader:
                train_losses.append(nn.functional.mse_loss(model(x), y) * x.size(0))
                seen += x.size(0)
            logger.info("epoch %d: %.4f", epoch, sum(l.item() for l in train_losses) / seen)
        assert train_losses[0].grad_fn is not None
    """, [("TNS503", 4)], id="in a tuple assignment, carried across epochs"),
    pytest.param("""
        def collect(batch):
            losses, total = [], 0
            for x, y in batch:
                total += nn.functional.mse_loss(model(x), y)
                losses.append(total)
            return len(losses)

        assert collect(loader) == 3
    """, [("TNS503", 4), ("TNS503", 5)], id="a list the function makes keeps the totals it is given"),
    pytest.param("""
        losses = []
        for i, (x, y) in enumerate(loader):
            losses.append(nn.functional.mse_loss(model(x), y))
            if i % 2 == 1:
                print(torch.stack(losses).mean().item())
                losses.clear()
        assert losses and losses[0].grad_fn is not None
    """, [("TNS503", 3)], id="emptied only every other iteration"),
    pytest.param("""
        total = torch.zeros(())
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            total.add_(loss)
        print(total.item() / len(loader))
        assert total.requires_grad and total.grad_fn.name() == "AddBackward0"
    """, [("TNS503", 4)], id="total.add_(loss)"),
    pytest.param("""
        running = {"loss": torch.tensor(0.0)}
        for x, y in loader:
            running["loss"].add_(nn.functional.mse_loss(model(x), y), alpha=x.size(0))
        print(float(running["loss"]))
        assert running["loss"].grad_fn is not None
    """, [("TNS503", 3)], id="a dict entry's add_, with alpha"),
    pytest.param("""
        losses = []
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            losses += [loss]
        print(sum(l.item() for l in losses))
        assert all(l.grad_fn is not None for l in losses)
    """, [("TNS503", 4)], id="losses += [loss]"),
    pytest.param("""
        losses = []
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            losses.append((loss, x.size(0)))
        print(sum(l.item() * n for l, n in losses))
        assert all(l.grad_fn is not None for l, _ in losses)
    """, [("TNS503", 4)], id="a tuple of the loss and a count appended"),
    pytest.param("""
        def evaluate(batches):
            losses = []
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                losses.append((loss, x.size(0), len(y)))
            print(sum(l.item() * n for l, n, _ in losses))
            assert all(l.grad_fn is not None for l, _, _ in losses)

        evaluate(loader)
    """, [("TNS503", 5)], id="a tuple of the loss and sizes of a batch handed to the function"),
    pytest.param("""
        ema = torch.zeros(())
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            ema.mul_(0.9).add_(loss)
        print(ema.item())
        assert ema.grad_fn is not None and ema.grad_fn.next_functions[0][0].name() == "MulBackward0"
    """, [("TNS503", 4)], id="ema.mul_(0.9).add_(loss)"),
])
def test_kept_in_place_reported(body, expected):
    code = program(body)
    assert findings(code) == expected
    run(code)


@pytest.mark.parametrize("body", [
    pytest.param("""
        losses = []
        for x, y in loader:
            losses.append(nn.functional.mse_loss(model(x), y))
        opt.zero_grad()
        torch.stack(losses).mean().backward()
        opt.step()
        grads = []
        for x, y in loader:
            grads.append(nn.functional.mse_loss(model(x), y))
            if len(grads) == 3:
                sum(grads).backward()
                grads = []
        outs = []
        for x, y in loader:
            outs.append(model(x).sum())
        for o in outs:
            o.backward()
    """, id="back-propagated: stacked, summed, each element"),
    pytest.param("""
        losses, shown = [], []
        with torch.no_grad():
            for x, y in loader:
                losses.append(nn.functional.mse_loss(model(x), y))
        for x, y in loader:
            shown.append(nn.functional.mse_loss(model(x), y).item())
            shown.append(nn.functional.mse_loss(model(x), y).detach())
        print(losses, shown)
    """, id="under no_grad, .item() and .detach()"),
    pytest.param("""
        norms = []
        for p in model.parameters():
            norms.append(p.norm())
        print(sum(n.item() for n in norms))
    """, id="over model.parameters(): not a step"),
    pytest.param("""
        def fill(losses):
            for x, y in loader:
                losses.append(nn.functional.mse_loss(model(x), y))

        def made_here():
            losses = []
            for x, y in loader:
                losses.append(nn.functional.mse_loss(model(x), y))
            return losses

        def gen():
            losses = []
            for x, y in loader:
                losses.append(nn.functional.mse_loss(model(x), y))
                yield losses

        class Trainer:
            def run(self, sink):
                losses, kept = [], []
                for x, y in loader:
                    losses.append(nn.functional.mse_loss(model(x), y))
                    kept.append(nn.functional.mse_loss(model(x), y))
                self.losses = losses
                sink(torch.stack(kept))

        fill([])
        made_here()[0].backward()
        list(gen())
        Trainer().run(print)
    """, id="the caller's list; returned, yielded, stored, passed on"),
    pytest.param("""
        for x, y in loader:
            losses = []
            losses.append(nn.functional.mse_loss(model(x), y))
            print(losses[0].item())
        kept = []
        for x, y in loader:
            kept.clear()
            kept.append(nn.functional.mse_loss(model(x), y))
            print(kept[-1].item())
        held = []
        for x, y in loader:
            held.append(nn.functional.mse_loss(model(x), y))
            print(held[-1].item())
            del held[:]
    """, id="emptied in each iteration"),
    pytest.param("""
        total = torch.zeros(())
        for x, y in loader:
            total.add_(nn.functional.mse_loss(model(x), y).detach())
        acc = torch.zeros(())
        for x, y in loader:
            acc.add_(nn.functional.mse_loss(model(x), y))
        acc.backward()
        with torch.no_grad():
            ema = torch.zeros(())
            for x, y in loader:
                ema.add_(nn.functional.mse_loss(model(x), y), alpha=0.1)
        print(total.item(), ema.item())
    """, id="add_: detached, back-propagated, under no_grad"),
    pytest.param("""
        def shown():
            losses = []
            for x, y in loader:
                losses += [nn.functional.mse_loss(model(x), y).item()]
            return sum(losses)

        def stepped():
            losses = []
            for x, y in loader:
                losses += [nn.functional.mse_loss(model(x), y)]
            opt.zero_grad()
            sum(losses).backward()
            opt.step()

        def callers(losses):
            for x, y in loader:
                losses += [nn.functional.mse_loss(model(x), y)]

        def without_grad():
            losses = []
            with torch.no_grad():
                for x, y in loader:
                    losses += [nn.functional.mse_loss(model(x), y)]
            return len(losses)

        print(shown(), without_grad())
        stepped()
        callers([])
    """, id="+= [...]: .item(), back-propagated, the caller's list, under no_grad"),
    pytest.param("""
        losses = []
        for x, y in loader:
            losses[:] = []
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses += [loss]
        print(len(losses), sum(l.item() for l in losses))
    """, id="+= [...] to a list emptied by a slice assignment in each iteration"),
    pytest.param("""
        def weighted():
            losses = []
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                losses.append((loss, x.size(0)))
            sum(l * n for l, n in losses).backward()

        def stacked():
            losses = []
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                losses.append((loss, x.size(0)))
            torch.stack([l for l, _ in losses]).mean().backward()

        def numbers():
            losses = []
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                losses.append((loss.item(), x.size(0)))
            print(losses)

        weighted(); stacked(); numbers()
    """, id="tuples: back-propagated by their elements, numbers"),
    pytest.param("""
        ema = torch.zeros(())
        for x, y in loader:
            ema.mul_(0.9).add_(nn.functional.mse_loss(model(x), y).detach())
        acc = torch.zeros(())
        for x, y in loader:
            acc.mul_(0.5).add_(nn.functional.mse_loss(model(x), y))
        acc.backward()
        print(ema.item())
    """, id="mul_(...).add_: detached, back-propagated"),
])
def test_kept_in_place_lookalikes_silent(body):
    code = program(body)
    assert findings(code) == []
    run(code)


@pytest.mark.parametrize("line", [
    "smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss",
    "smooth = 0.98 * smooth + 0.02 * loss if smooth is not None else loss",
])
def test_a_smoothed_loss_that_starts_from_the_first_loss_keeps_every_graph(line):
    """`smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss`: each value holds the last
    and the new loss's graph, on real torch; reported, and the fix detaches both terms, which
    keeps the values and no graph."""
    code = program(f"""
        smooth = None
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            {line}
        print(round(float(smooth), 6))
    """)
    (v,) = lint_text(code, TNS5).violations
    assert (v.code, v.line - HEAD.count("\n") - 2) == ("TNS503", 7)
    assert "and `loss.detach()`" in v.message
    smooth = run(code)["smooth"]
    assert smooth.requires_grad and smooth.grad_fn.name() == "AddBackward0"
    fixed = fix_text(code, TNS5, unsafe=True)
    assert fixed.error is None and not lint_text(fixed.text, TNS5).violations
    ns = run(fixed.text)
    assert not ns["smooth"].requires_grad and ns["__stdout__"] == run(code)["__stdout__"]


@pytest.mark.parametrize("line", [
    "smooth = loss.item() if smooth is None else 0.9 * smooth + 0.1 * loss.item()",
    "smooth = loss.detach() if smooth is None else 0.9 * smooth + 0.1 * loss.detach()",
    "smooth = loss if smooth is None else loss",
])
def test_a_smoothed_loss_without_graphs_is_silent(line):
    code = program(f"""
        smooth = None
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            {line}
        print(float(smooth))
    """)
    assert findings(code) == []
    run(code)


def test_a_file_without_a_plus_is_examined_for_appends_and_add_():
    """The pre-filter admits a file whose only accumulations are `.append(` and `.add_(`."""
    code = program("""
        losses = []
        total = torch.zeros(())
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            losses.append(loss)
            total.add_(loss)
        print(len(losses), total.item())
    """).replace("+", "")  # (HEAD has none, but to be sure)
    assert "+" not in code
    assert findings(code) == [("TNS503", 5), ("TNS503", 6)]


def test_fix_of_a_list_keeps_what_the_program_computes():
    code = program("""
        def _epoch():
            losses = []
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss)
            return sum(losses) / len(losses)

        avg = _epoch()
        print(f"{avg:.5f}")
        result = (avg.item(), type(avg).__name__)
    """)
    (v,) = lint_text(code, TNS5).violations
    assert v.fix.safety == "safe"
    assert "(the calls of _epoch() only display what it returns, line" in v.message
    assert v.message.startswith("`losses` keeps `loss` with its graph in every iteration")
    fixed = fix_text(code, TNS5)
    assert "losses.append(loss.detach())" in fixed.text and not fixed.remaining
    before, after = run(code), run(fixed.text)
    assert before["result"] == after["result"] and before["__stdout__"] == after["__stdout__"]
    assert before["avg"].grad_fn is not None and after["avg"].grad_fn is None


def test_fix_of_a_list_is_unsafe_where_an_element_is_shown():
    code = program("""
        losses = []
        for x, y in loader:
            losses.append(nn.functional.mse_loss(model(x), y))
        print(losses[-1])
    """)
    (v,) = lint_text(code, TNS5).violations
    assert v.fix.safety == "unsafe" and "(or `.item()`)" not in v.message
    before, after = run(code), run(fix_text(code, TNS5, unsafe=True).text)
    assert "grad_fn" in before["__stdout__"] and "grad_fn" not in after["__stdout__"]


# --------------------------------------------------------------------------- TNS503 fix safety


SAFE_PROGRAMS = {
    "mean of the epoch": """
        total = 0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
        mean = total / len(loader)
        print(f"{mean:.5f} {mean.item():.5f}")
        result = (mean.item(), float(total), type(total).__name__, total.dtype)
    """,
    "weighted running sum": """
        running, seen = torch.zeros(()), 0
        for x, y in loader:
            running = running + nn.functional.mse_loss(model(x), y) * x.size(0)
            seen += x.size(0)
        result = (running / seen).item(), running.shape
    """,
}


@pytest.mark.parametrize("name", sorted(SAFE_PROGRAMS))
def test_safe_fix_keeps_what_the_program_computes(name):
    code = program(SAFE_PROGRAMS[name])
    result = lint_text(code, TNS5)
    assert [v.fix.safety for v in result.violations] == ["safe"]
    fixed = fix_text(code, TNS5)
    assert fixed.text != code and fixed.error is None and not fixed.remaining
    before, after = run(code), run(fixed.text)
    assert before["result"] == after["result"]
    assert before["__stdout__"] == after["__stdout__"]


@pytest.mark.parametrize("show", [
    "print(total)", "print(f'{total}')", "logger.warning('total %s', total)", "print(str(total / 3))",
    "print(total.requires_grad)", "print('%s' % total)",
])
def test_fix_is_unsafe_where_the_total_is_shown(show):
    code = program(f"""
        total = 0
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y)
        {show}
    """)
    (v,) = lint_text(code, TNS5).violations
    assert v.fix.safety == "unsafe"
    before, after = run(code), run(fix_text(code, TNS5, unsafe=True).text)
    if show == "print(total)":
        assert "grad_fn" in before["__stdout__"] and "grad_fn" not in after["__stdout__"]


def test_fix_is_unsafe_where_the_term_is_a_tensor_only_by_its_backward():
    code = program("""
        def step(criterion, batches):
            total = 0.0
            for x, y in batches:
                loss = criterion(x, y)
                loss.backward()
                total += loss
            return total.item()
    """)
    (v,) = lint_text(code, TNS5).violations
    assert v.fix.safety == "unsafe"
    assert fix_text(code, TNS5).text == code


def test_fix_wraps_a_compound_term_in_parentheses():
    code = program("""
        total = 0
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y) * x.size(0)
        mean = total.item() / 24
    """)
    fixed = fix_text(code, TNS5).text
    assert "total += (nn.functional.mse_loss(model(x), y) * x.size(0)).detach()\n" in fixed
    assert run(code)["mean"] == run(fixed)["mean"]


# --------------------------------------------------------------------------- notebooks, editors


def test_notebook_cells_share_the_loop_and_the_use(tmp_path, capsys):
    nbformat = pytest.importorskip("nbformat")
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook()
    nb.cells = [
        new_code_cell(HEAD),
        new_code_cell("best = None\nfor epoch in range(3):\n    train_one_epoch(model, opt)\n"
                      "    if epoch == 0:\n        best = model.state_dict()"),
        new_code_cell("total = 0\nfor x, y in loader:\n    total += nn.functional.mse_loss(model(x), y)"),
        new_code_cell("model.load_state_dict(best)\nprint(f'{total.item():.3f}')"),
    ]
    path = tmp_path / "train.ipynb"
    nbformat.write(nb, str(path))
    proc = tc(capsys, "check", "--no-cache", "--select", "TNS5", str(path))
    assert proc.returncode == 1, proc.stderr
    found = [line.split(": ")[0].split(":", 1)[1] for line in proc.stdout.splitlines()[:-1]]
    assert found == ["cell 2:5:16", "cell 3:3:5"]
    assert "TNS501" in proc.stdout and "TNS503" in proc.stdout
    proc = tc(capsys, "fix", "--unsafe-fixes", "--select", "TNS5", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cells = nbformat.read(str(path), as_version=4).cells
    assert cells[1].source.endswith("best = copy.deepcopy(model.state_dict())")  # cell 1 imports copy
    assert cells[2].source.endswith("total += nn.functional.mse_loss(model(x), y).detach()")


def test_noqa_silences_a_finding():
    code = program("""
        total = 0
        for x, y in loader:
            total += nn.functional.mse_loss(model(x), y)  # noqa: TNS503
        print(total.item())
    """)
    assert findings(code) == []


# --------------------------------------------------------------------------- cost


def test_files_without_triggers_are_not_parsed():
    code = "import torch\n\nx = torch.ones(3)\nfor i in range(3):\n    x = x * 2\n"
    assert lint_text(code, TNS5).parsed is False


# --------------------------------------------------------------------------- TNS503 through callers

EPOCH = """
    def {name}(batches):
        total = 0
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss
        return {returned}
"""


@pytest.mark.parametrize("name,returned,caller,safety", [
    pytest.param("train_epoch", "total / len(batches)", """
        for epoch in range(2):
            avg = train_epoch(loader)
            print(f"epoch {epoch}: {avg:.4f}")
            if avg < 10:
                logger.info("loss %.4f", avg)
    """, "unsafe", id="a name the caller formats and compares"),
    pytest.param("_train_epoch", "total / len(batches)", """
        def main():
            for epoch in range(2):
                print(f"epoch {epoch}: {_train_epoch(loader):.4f}")

        main()
    """, "safe", id="private, formatted in another function"),
    pytest.param("train_epoch", "total / len(batches)", """
        def main():
            best = float("inf")
            for epoch in range(2):
                avg = train_epoch(loader)
                if avg < best:
                    best = avg
                logger.info("epoch %d: %.4f (best %.4f)", epoch, avg, best)

        main()
    """, "unsafe", id="the best so far, kept in another name"),
    pytest.param("train_epoch", "total, len(batches)", """
        for epoch in range(2):
            epoch_total, n = train_epoch(loader)
            logger.info("%d batches, mean %.4f", n, epoch_total / n)
    """, "unsafe", id="a tuple unpacked by the caller"),
    pytest.param("train_epoch", "total / len(batches)", """
        total = train_epoch(loader)
        print(f"{total:.3f}")
    """, "unsafe", id="bound by the caller to the name the function's own total has"),
    pytest.param("train_epoch", "total / len(batches)", """
        history = []
        for epoch in range(2):
            avg = train_epoch(loader)
            history.append(avg)
    """, "unsafe", id="kept by the caller in a list it never reads"),
    pytest.param("train_epoch", "total / len(batches)", """
        log = {"loss": []}
        for epoch in range(2):
            log["loss"].append(train_epoch(loader))
        print("best", float(min(log["loss"])))
    """, "unsafe", id="kept by the caller in a dict of lists it displays"),
])
def test_a_total_returned_to_calls_that_only_display_it(name, returned, caller, safety):
    # train_epoch() returns its total to calls that only display it: every batch's graph stays
    # alive until the epoch ends (what it returns has a grad_fn).  Reported where it adds, with
    # the line of the first call; the fix is safe only for a function no other module can call.
    code = program(textwrap.dedent(EPOCH.format(name=name, returned=returned)) + "\n\n" + textwrap.dedent(caller).strip("\n"))
    result = lint_text(code, TNS5)
    assert [(v.code, v.line - HEAD.count("\n") - 2) for v in result.violations] == [("TNS503", 8)]
    (v,) = result.violations
    call_line = code.splitlines().index(next(line for line in code.splitlines() if f"{name}(loader)" in line)) + 1
    assert f"is never back-propagated (the calls of {name}() only display what it returns, line {call_line})" in \
        v.message
    assert v.fix.safety == safety
    ns = run(code.replace(f"return {returned}", f"global seen\n    seen = {returned}\n    return seen"))
    seen = ns["seen"][0] if isinstance(ns["seen"], tuple) else ns["seen"]
    assert seen.grad_fn is not None  # each batch's graph, kept
    fixed = fix_text(code, TNS5, unsafe=True)
    assert fixed.error is None and "total += loss.detach()" in fixed.text
    assert run(code)["__stdout__"] == run(fixed.text)["__stdout__"]


@pytest.mark.parametrize("caller", [
    pytest.param("""
        avg = train_epoch(loader)
        avg.backward()
    """, id="back-propagated by the caller"),
    pytest.param("""
        history = []
        for epoch in range(2):
            avg = train_epoch(loader)
            history.append(avg)
        torch.stack(history).mean().backward()
    """, id="kept by the caller in a list it back-propagates"),
    pytest.param("""
        def keep_all(values):
            return list(values)

        history = []
        for epoch in range(2):
            history.append(train_epoch(loader))
        keep_all(history)
    """, id="kept by the caller in a list it hands to a function"),
    pytest.param("""
        def run_all():
            return train_epoch(loader)

        print(f"{run_all():.3f}")
    """, id="returned by the caller"),
    pytest.param("""
        history = []
        avg = train_epoch(loader)
        best = avg
        history.append(best)
        model.history = history
    """, id="bound to another name that is kept in a list stored in an attribute"),
    pytest.param("""
        schedule = [train_epoch]
        print(f"{train_epoch(loader):.3f}")
    """, id="the function is also a value"),
    pytest.param("""
        pass
    """, id="never called in the file"),
    pytest.param("""
        history = []

        def keep():
            history.append(total)

        total = train_epoch(loader)
        keep()
    """, id="kept by a function that reads the caller's name"),
    pytest.param("""
        def keep():
            return [total for total in [total]]

        total = train_epoch(loader)
        kept = keep()
    """, id="read by a function whose comprehension has a target of that name"),
])
def test_a_total_returned_to_a_caller_that_may_keep_it_is_silent(caller):
    code = program(textwrap.dedent(EPOCH.format(name="train_epoch", returned="total / len(batches)")) + "\n\n"
                   + textwrap.dedent(caller).strip("\n"))
    assert findings(code) == []
    if "backward" not in caller:
        run(code)


# --------------------------------------------------------------------------- TNS503 through a meter

METER = """
    class AverageMeter:
        def __init__(self):
            self.reset()

        def reset(self):
            self.val = self.avg = self.sum = 0
            self.count = 0

        def update(self, val, n=1):
            self.val = val
            self.sum += val * n
            self.count += n
            self.avg = self.sum / self.count
"""


def meter_program(body: str, adds: str = "self.sum += val * n") -> str:
    meter = textwrap.dedent(METER).replace("self.sum += val * n", adds)
    return program(meter + "\n\n" + textwrap.dedent(body).strip("\n"))


@pytest.mark.parametrize("body,line,where,safety", [
    pytest.param("""
        losses = AverageMeter()
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.update(loss, x.size(0))
        print(f"loss {losses.avg:.4f}")
    """, 22, "AverageMeter.update() adds it to self.sum, line {11}", "safe", id="formatted"),
    pytest.param("""
        history = []
        for epoch in range(2):
            losses = AverageMeter()
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.update(loss, x.size(0))
            history.append(losses.avg)
        print(f"best {min(history):.4f}")
    """, 24, "AverageMeter.update() adds it to self.sum, line {11}", "safe", id="each epoch's average kept in a history"),
    pytest.param("""
        def train(batches):
            losses = AverageMeter()
            for x, y in batches:
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.update(loss)
            return losses.avg

        for epoch in range(2):
            print(epoch, train(loader))
    """, 23, "AverageMeter.update() adds it to self.sum, line {11}; the calls of train() only display what it "
             "returns, line {27}", "unsafe", id="returned to a print"),
])
@pytest.mark.parametrize("adds", ["self.sum += val * n", "self.sum = self.sum + val * n"])
def test_a_meter_that_adds_what_it_is_given(body, line, where, safety, adds):
    # AverageMeter.update() adds each loss, with its graph, to self.sum: the meter keeps every
    # batch's graph (its average has a grad_fn).  Reported at the call, with the method's line;
    # the same when the method spells the addition out.
    code = meter_program(body, adds)
    result = lint_text(code, TNS5)
    assert [(v.code, v.line - HEAD.count("\n") - 2) for v in result.violations] == [("TNS503", line)]
    (v,) = result.violations
    where = re.sub(r"\{(\d+)\}", lambda m: str(int(m.group(1)) + HEAD.count("\n") + 2), where)
    assert f"`losses` adds `loss` with its graph in every iteration and is never back-propagated ({where})" in v.message
    assert v.fix.safety == safety
    def meter_after(source):  # the meter, once the program ran
        ns = run(source.replace("    return losses.avg", "    global kept\n    kept = losses\n    return losses.avg"))
        return ns.get("kept") or ns["losses"]

    kept = meter_after(code)
    assert kept.avg.grad_fn is not None and kept.sum.grad_fn is not None
    fixed = fix_text(code, TNS5, unsafe=True)
    assert fixed.error is None and "losses.update(loss.detach()" in fixed.text
    kept = meter_after(fixed.text)
    assert kept.avg.grad_fn is None and kept.sum.grad_fn is None


@pytest.mark.parametrize("body", [
    pytest.param("""
        losses = AverageMeter()
        for x, y in loader:
            losses.update(nn.functional.mse_loss(model(x), y).item(), x.size(0))
        print(losses.avg)
    """, id=".item()"),
    pytest.param("""
        for x, y in loader:
            losses = AverageMeter()
            losses.update(nn.functional.mse_loss(model(x), y))
            print(f"{losses.avg:.3f}")
    """, id="a new meter each iteration"),
    pytest.param("""
        losses = AverageMeter()
        history = []
        for x, y in loader:
            losses.update(nn.functional.mse_loss(model(x), y))
            history.append(losses)
        model.history = history
    """, id="the meter is kept"),
    pytest.param("""
        class Last:
            def update(self, val):
                self.val = val

        last = Last()
        for x, y in loader:
            last.update(nn.functional.mse_loss(model(x), y))
        print(f"{last.val:.3f}")
    """, id="a method that keeps only the last value"),
    pytest.param("""
        class Backprop:
            def __init__(self):
                self.total = 0

            def update(self, val):
                self.total += val

            def step(self):
                self.total.backward()

        acc = Backprop()
        for x, y in loader:
            acc.update(nn.functional.mse_loss(model(x), y))
        acc.step()
    """, id="a class that back-propagates what it holds"),
])
def test_meter_lookalikes_silent(body):
    code = meter_program(body)
    assert findings(code) == []
    run(code)


@pytest.mark.parametrize("text", [
    "opt.step()", "x += 1", "x -= 1", "x *= 2", "x /= 2", "m.load_state_dict(s)", "m.reset_parameters()",
    "w.add_(1)", "f(_(x))", "é_(x)", "_(y)z", "__init__(self)", "x[0] = 1", "x[0]  =1", "x[0] == 1", "x[0]\n= 1",
    "a = b + c", "y = x", "",
])
def test_the_snapshot_domains_update_test_is_its_pattern(text):
    # SnapshotDomain.active's update test, by substring searches before the pattern: the same
    # answer as the pattern's search.
    from flake8_tensorcopy.analysis.text_tests import UPDATE_TEXT, may_update

    assert may_update(text) == (UPDATE_TEXT.search(text) is not None)


def test_a_function_that_steps_the_modules_optimizer_is_the_one_called():
    # `train_epoch()` steps `opt`, built on `model`: a state dict of `model` taken before the call
    # is stale after it.  Not when the name called is a local function of the same name that
    # steps another optimizer (whose model is not `model`).
    head = ("import torch\nfrom torch import nn\n\nmodel = nn.Linear(4, 1)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n\n\n"
            "def train_epoch():\n    model(torch.randn(2, 4)).sum().backward()\n    opt.step()\n\n\n")
    called = head + ("def fit():\n    init = model.state_dict()\n    train_epoch()\n"
                     "    model.load_state_dict(init)\n")
    shadowed = head + ("def fit():\n    other = nn.Linear(4, 1)\n    other_opt = torch.optim.SGD(other.parameters())\n\n"
                       "    def train_epoch():\n        other(torch.randn(2, 4)).sum().backward()\n"
                       "        other_opt.step()\n\n"
                       "    init = model.state_dict()\n    train_epoch()\n    model.load_state_dict(init)\n")
    rules = select_rules(["TNS501"])
    assert [v.line for v in lint_text(called, rules, Options()).violations] == [14]
    assert lint_text(shadowed, rules, Options()).violations == []


_STEPS_WHAT_IT_IS_HANDED = """
    def fit_once(m, o):
        for x, y in loader:
            o.zero_grad()
            nn.functional.mse_loss(m(x), y).backward()
            o.step()

    first = model.weight.detach().clone()
    init = model.state_dict()
    before = model.bias.detach()
    fit_once(model, {opt})
    moved = (model.bias - before).abs().sum().item()
    model.load_state_dict(init)
    restored = model.weight.detach().clone()
"""


def test_a_function_that_steps_an_optimizer_it_is_handed_under_any_name():
    # `fit_once(m, o)` steps its parameter `o`, whose name says nothing: the call hands it `opt`,
    # an optimizer of `model`, so the call updates `model` (the state dict restores nothing,
    # the "before" tensor moved with the bias).  Handed an optimizer of another module, the
    # call leaves `model` alone.
    code = program(_STEPS_WHAT_IT_IS_HANDED.format(opt="opt"))
    assert findings(code) == [("TNS501", 8), ("TNS502", 9)]
    ns = run(code)
    torch = ns["torch"]
    assert ns["moved"] == 0.0 and torch.equal(ns["restored"], ns["model"].weight)
    assert not torch.equal(ns["first"], ns["restored"])
    other = "other = nn.Linear(4, 1)\nother_opt = torch.optim.SGD(other.parameters(), lr=0.1)\n"
    code = program(other + textwrap.dedent(_STEPS_WHAT_IT_IS_HANDED).format(opt="other_opt"))
    assert findings(code) == []
    ns = run(code)
    assert ns["torch"].equal(ns["first"], ns["restored"])


# --------------------------------------------------------------------------- TNS503: attributes of an instance

TRAINER = """
    class Trainer:
        def __init__(self, net):
            self.net = net
            self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
            self.running_loss = 0
            self.losses = []

        def train_step(self, x, y):
            loss = nn.functional.mse_loss(self.net(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            {step}
"""


def trainer_program(step: str, body: str, extra: str = "") -> str:
    trainer = textwrap.dedent(TRAINER).replace("{step}", step.replace("\n", "\n        "))
    methods = textwrap.indent(textwrap.dedent(extra), "    ")
    return program(trainer + methods + "\n\n" + textwrap.dedent(body).strip("\n"))


def test_an_attribute_total_of_a_trainer_keeps_every_graph_on_real_torch():
    """`self.running_loss += loss` in a step method called once per batch: the attribute requires
    grad, its AddBackward0 nodes chain every step's graph; without a backward (an evaluation
    step), the activations each graph saved stay alive too.  `.item()` / `.detach()` keep none."""
    ns = run(program("""
        import gc
        import weakref

        class Stepper:
            def __init__(self, how, backward):
                torch.manual_seed(0)
                self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
                self.running_loss, self.losses, self.saved = 0, [], []
                self.how, self.backward = how, backward

            def train_step(self, x, y):
                h = self.net[1](self.net[0](x))  # saved by the last Linear for its weight's gradient
                self.saved.append(weakref.ref(h))
                loss = nn.functional.mse_loss(self.net[2](h), y)
                if self.backward:
                    loss.backward()
                self.running_loss += self.how(loss)
                self.losses.append(self.how(loss))

        def steps(how, backward):
            s = Stepper(how, backward)
            for x, y in loader:
                s.train_step(x, y)
            gc.collect()
            chain, fn = 0, getattr(s.running_loss, "grad_fn", None)
            while fn is not None and fn.name() == "AddBackward0":
                chain, fn = chain + 1, fn.next_functions[0][0]
            return s, chain, sum(r() is not None for r in s.saved)

        kept, chain, alive = steps(lambda t: t, backward=False)
        kept_bw, chain_bw, alive_bw = steps(lambda t: t, backward=True)
        detached, chain_detached, alive_detached = steps(lambda t: t.detach(), backward=False)
        items, _, alive_items = steps(lambda t: t.item(), backward=False)
    """))
    n = len(ns["loader"])
    assert ns["kept"].running_loss.requires_grad and ns["chain"] >= n and ns["alive"] == n
    assert all(t.grad_fn is not None for t in ns["kept"].losses)
    # Back-propagated each step: the saved activations are freed, the chain of nodes is not.
    assert ns["chain_bw"] >= n and ns["alive_bw"] == 0
    assert not ns["detached"].running_loss.requires_grad and ns["chain_detached"] == 0
    assert ns["alive_detached"] == 0 and not any(t.requires_grad for t in ns["detached"].losses)
    assert isinstance(ns["items"].running_loss, float) and ns["alive_items"] == 0
    torch = ns["torch"]
    assert torch.equal(ns["kept"].running_loss.detach(), ns["detached"].running_loss)


LOOP = """
    trainer = Trainer(model)
    for x, y in loader:
        trainer.train_step(x, y)
    print(f"loss {trainer.running_loss / len(loader):.4f}", len(trainer.losses))
"""


@pytest.mark.parametrize("step,body,extra,expected", [
    pytest.param("self.running_loss += loss", LOOP, "", [("TNS503", 13)], id="+= in a step called in a loop"),
    pytest.param("self.running_loss = self.running_loss + loss", LOOP, "", [("TNS503", 13)],
                 id="spelled out"),
    pytest.param("self.losses.append(loss)", LOOP, "", [("TNS503", 13)], id="a list of losses"),
    pytest.param("self.running_loss += loss\nself.losses.append(loss)", """
        def main():
            trainer = Trainer(model)
            for epoch in range(2):
                trainer.reset()
                for x, y in loader:
                    trainer.train_step(x, y)
                logger.info("epoch %d: %.4f", epoch, trainer.running_loss.item() / len(loader))

        main()
    """, """
            def reset(self):
                self.running_loss = 0
                self.losses = []
    """, [("TNS503", 13), ("TNS503", 14)], id="reset every epoch by a method, carried across batches"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        trainer.fit(loader)
    """, """
            def fit(self, batches):
                for i, (x, y) in enumerate(batches):
                    self.train_step(x, y)
                    if i % 2 == 1:
                        print(self.running_loss.item() / 2)
                        self.running_loss = 0
    """, [("TNS503", 13)], id="called in a loop of another method, reset under a condition"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        trainer.train_epoch(loader)
    """, """
            def train_epoch(self, batches):
                self.running_loss = 0
                for x, y in batches:
                    loss = nn.functional.mse_loss(self.net(x), y)
                    loss.backward()
                    self.running_loss += loss
                print(self.running_loss.item() / len(batches))
    """, [("TNS503", 20)], id="a loop of the method itself"),
])
def test_attribute_totals_reported(step, body, extra, expected):
    code = trainer_program(step, body, extra)
    assert findings(code) == expected
    run(code)  # (real code)


@pytest.mark.parametrize("step,body,extra", [
    pytest.param("self.running_loss += loss.item()", LOOP, "", id=".item()"),
    pytest.param("self.losses.append(loss.detach())", LOOP, "", id=".detach()"),
    pytest.param("self.running_loss = 0\nself.running_loss += loss", LOOP, "", id="reset at the top of the step"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        for x, y in loader:
            trainer.running_loss = 0
            trainer.train_step(x, y)
            print(trainer.running_loss.item())
    """, "", id="reset by the caller's loop"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        for x, y in loader:
            trainer.train_step(x, y)
        avg = trainer.running_loss / len(loader)
        avg.backward()  # (raises: each step's graph was freed by its backward)
    """, "", id="back-propagated through the instance"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        for x, y in loader:
            trainer.train_step(x, y)
        print(trainer.result())
    """, """
            def result(self):
                return self.running_loss / len(loader)
    """, id="handed out by a method"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        for x, y in loader:
            trainer.train_step(x, y)
        history = []
        history.append(trainer.running_loss)
        trainer.history = history
    """, "", id="stored"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        trainer.train_step(*loader[0])
        print(trainer.running_loss.item())
    """, "", id="not called in a loop"),
    pytest.param("self.running_loss += loss", """
        for x, y in loader:
            trainer = Trainer(model)
            trainer.train_step(x, y)
            print(trainer.running_loss.item())
    """, "", id="a new instance in each iteration"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        for x, y in loader:
            trainer.train_step(x, y)
        print(getattr(trainer, "running_loss").item())
    """, "", id="its name in a string"),
    pytest.param("self.running_loss += loss", """
        def go(t):
            for x, y in loader:
                t.train_step(x, y)

        go(Trainer(model))
    """, "", id="an instance the analysis cannot name"),
    pytest.param("self.running_loss += loss", """
        trainer = Trainer(model)
        for x, y in loader:
            with torch.no_grad():
                trainer.train_step(x, y)  # (raises: nothing to back-propagate)
    """, "", id="called without grad"),
])
def test_attribute_total_lookalikes_silent(step, body, extra):
    code = trainer_program(step, body, extra)
    if "(raises" not in body:
        run(code)
    assert findings(code) == []


def test_an_attribute_totals_message_and_fix():
    code = trainer_program("self.running_loss += loss", LOOP)
    result = lint_text(code, TNS5)
    (v,) = result.violations
    call = code.splitlines().index("    trainer.train_step(x, y)") + 1
    assert v.message == (f"`self.running_loss` adds `loss` with its graph in every iteration and is never "
                         f"back-propagated (Trainer.train_step() is called in a loop, line {call}): every graph "
                         "stays alive; use `loss.detach()` (or `.item()`)")
    assert v.fix.safety == "unsafe"  # (a public attribute: another module may read it)
    fixed = fix_text(code, TNS5, unsafe=True).text
    assert "self.running_loss += loss.detach()" in fixed and findings(fixed) == []
    ns = run(fixed)
    assert not ns["trainer"].running_loss.requires_grad
    assert torch_equal(ns["trainer"].running_loss, run(code)["trainer"].running_loss.detach())


def torch_equal(a, b) -> bool:
    import torch

    return torch.equal(a, b)


def test_a_helper_returning_copy_copy_of_a_class_of_its_own_module_is_a_copy():
    # `copy` here is the module's own class whose `copy` clones each tensor: `snap(m)` is a real
    # copy (torch: the weights are restored), where `copy.copy` of the standard library is not.
    code = textwrap.dedent("""\
        import torch
        import torch.nn as nn
        class copy:
            @staticmethod
            def copy(sd):
                return {k: v.detach().clone() for k, v in sd.items()}
        def snap(model):
            return copy.copy(model.state_dict())
        m = nn.Linear(2, 2)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        w0 = m.weight.detach().clone()
        best = snap(m)
        m(torch.randn(3, 2)).sum().backward()
        opt.step()
        m.load_state_dict(best)
        assert torch.equal(m.weight, w0)
        """)
    assert [v.code for v in lint_text(code, TNS5, Options()).violations] == []
    torch = pytest.importorskip("torch")
    exec(compile(code, "<clean>", "exec"), {"torch": torch})


def test_totals_and_lists_of_a_function_called_after_grad_is_switched_off():
    # `torch.set_grad_enabled(False)` as a statement before the call: the function runs with
    # grad off, so its losses keep no graph (torch: `requires_grad` False).
    code = program("""
        def evaluate():
            losses, total = [], 0
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                losses.append(loss)
                total += loss
            return len(losses), losses[0].requires_grad, float(total)

        torch.set_grad_enabled(False)
        kept = evaluate()
        torch.set_grad_enabled(True)
        assert kept[1] is False
        """)
    assert findings(code) == []
    run(code)


@pytest.mark.parametrize("use", [
    # Summed in a loop, then back-propagated (the safe `.detach()` fix would make it raise).
    ["total = 0", "for l in losses:", "    total = total + l", "total.backward()"],
    ["total = 0", "for i, l in enumerate(losses):", "    total += l * (i + 1)", "total.backward()"],
], ids=["for", "enumerate"])
def test_a_list_of_losses_iterated_by_a_loop_is_not_followed(use):
    body = "".join("    " + line + "\n" for line in use)
    code = HEAD + "\n\ndef train():\n    losses = []\n    for x, y in loader:\n" \
        "        losses.append(nn.functional.mse_loss(model(x), y))\n" + body + "\n\ntrain()\n"
    assert lint_text(code, TNS5, Options()).violations == []
    run(code)


def test_a_window_of_losses_kept_short_and_the_message_of_a_list():
    # `recent.pop(0)` keeps one loss (torch: the others are freed); without it, every appended
    # loss keeps its graph, back-propagated or not: the message does not say "never
    # back-propagated" of a list.
    window = program("""
        def train():
            recent_losses = []
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                recent_losses.append(loss)
                if len(recent_losses) > 1:
                    recent_losses.pop(0)
            assert len(recent_losses) == 1

        train()
        """)
    assert findings(window) == []
    run(window)
    kept = window.replace("        if len(recent_losses) > 1:\n            recent_losses.pop(0)\n", "")
    kept = kept.replace("assert len(recent_losses) == 1", "assert all(l.grad_fn is not None for l in recent_losses)")
    assert kept != window and "pop(0)" not in kept
    found = lint_text(kept, TNS5, Options()).violations
    assert [v.code for v in found] == ["TNS503"]
    assert found[0].message.startswith("`recent_losses` keeps `loss` with its graph in every iteration: every graph")
    run(kept)


def test_an_attribute_total_the_code_reads_by_a_name_it_builds_is_not_followed():
    # `getattr(trainer, "running" + "_loss").backward()`: the total is back-propagated (the
    # unsafe `.detach()` fix would make it raise), by a name no text spells.
    code = program("""
        class Trainer:
            def __init__(self):
                self.running_loss = 0.0

            def train_step(self, x, y):
                loss = nn.functional.mse_loss(model(x), y)
                self.running_loss += loss

        trainer = Trainer()
        for x, y in loader:
            trainer.train_step(x, y)
        name = "running" + "_loss"
        opt.zero_grad()
        getattr(trainer, name).backward()
        opt.step()
        """)
    assert findings(code) == []
    run(code)
    assert findings(code.replace("getattr(trainer, name)", "trainer.running_loss")) == []
    assert findings(code.replace("getattr(trainer, name).backward()", "print(trainer.running_loss)")) == [
        ("TNS503", 7)]


def test_a_long_update_call_is_shown_by_its_callee_and_first_argument():
    code = program("""
        def train_step(net, optimizer, x, y):
            optimizer.zero_grad()
            nn.functional.mse_loss(net(x), y).backward()
            optimizer.step()

        w_old = model.weight.detach()
        train_step(model, opt, torch.randn(8, 4), torch.randn(8, 1) * torch.randn(8, 1))
        assert torch.equal(w_old, model.weight)
    """)
    (v,) = lint_text(code, TNS5).violations
    assert v.code == "TNS502" and "`train_step(model, ...)` (line " in v.message and "<expr>" not in v.message
    run(code)


def test_a_total_of_clones_is_advised_and_fixed_in_the_order_tns201_asks_for():
    # `running += loss.clone()`: `.detach()` goes before the clone, in the message and in the fix
    # (which TNS201 would otherwise flag after it), and the fixed total runs clean on torch.
    code = HEAD + textwrap.dedent("""\
        running = 0.0
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.clone()
        print(running)
        """)
    rules = select_rules(["TNS"])
    found = lint_text(code, rules, Options()).violations
    assert [v.code for v in found] == ["TNS503"]
    assert "use `loss.detach().clone()` (or `.item()`)" in found[0].message
    text = fix_text(code, rules, Options(), unsafe=True, max_passes=1).text
    assert "running += loss.detach().clone()\n" in text
    assert lint_text(text, rules, Options()).violations == []
    pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(text, "<fixed>", "exec"), ns)
    assert not ns["running"].requires_grad


# `.cpu()` returns the tensor itself only on the CPU: where the file may put the model elsewhere
# (a device argument, a default device, a move through another name, through a module that holds
# it, or by a helper), the snapshot may be a copy, and nothing is reported by default; in a file
# that names no device, it is.
_CPU_SNAPSHOT = """\
import torch
import torch.nn as nn
{setup}
opt = torch.optim.SGD(model.parameters(), lr=0.1)
w0 = model.weight.cpu()
for _ in range(3):
    opt.zero_grad()
    model(torch.randn(8, 3)).sum().backward()
    opt.step()
print(w0.sum())
"""


@pytest.mark.parametrize("setup, reported", [
    ("model = nn.Linear(3, 2)", True),
    ("model = nn.Linear(3, 2).to('cpu')", True),
    ("model = nn.Linear(3, 2, device=torch.device('cpu'))", True),
    ("dev = 'cuda' if torch.cuda.is_available() else 'cpu'\nmodel = nn.Linear(3, 2, device=dev)", False),
    ("dev = torch.device(0)\nwith torch.device(dev):\n    model = nn.Linear(3, 2)", False),
    ("model = nn.Linear(3, 2)\nnet = model\nnet.to(torch.device('mps') if torch.backends.mps.is_available() else 'cpu')",
     False),
    ("model = nn.Linear(3, 2)\nouter = nn.Sequential(model)\nouter.to(dev) if (dev := None) else None", False),
    ("torch.set_default_device('cpu')\nmodel = nn.Linear(3, 2)", False),
])
def test_a_cpu_snapshot_is_reported_only_where_the_file_names_no_device(setup, reported):
    code = _CPU_SNAPSHOT.format(setup=setup)
    found = [v for v in lint_text(code, select_rules(["TNS502"]), Options()).violations]
    assert bool(found) is reported, found
    if reported:
        assert "(on the CPU, `.cpu()` returns the tensor itself)" in found[0].message
