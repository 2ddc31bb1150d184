"""TNS5xx: copies that are not copies.  A "best model" `state_dict()` that is the live weights, a
NumPy history of a tensor that is updated in place, a running loss total that keeps every
iteration's autograd graph."""

from __future__ import annotations

import ast

from ..analysis.text_tests import (KEEPS_VIEWS_BYTES, METER_BYTES, STATE, STEPS_BYTES, EitherNeedle, attribute_totals,
                                   may_update, meter_methods, meter_methods_by_class, might_accumulate,
                                   might_alias_tensor, might_keep_state_dict, snapshot_needles, snapshot_triggers)
from ..model import Edit, Fix
from ..source import LazyPattern, OnLinesWith, or_holds
from .base import Invalid, Oracle, Rule, Valid, dedent

TYPE_CHECKING = False
if TYPE_CHECKING:  # (the domains are imported when a file needs them: analysis.make_domains)
    from ..analysis.accumulators import Accumulation
    from ..analysis.snapshots import SnapFinding

_SETUP = dedent("""
    import torch
    from torch import nn

    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    """)


def _short(ctx, node, limit: int = 40) -> str:
    return ctx.short(node, limit)


class _SnapshotRule(Rule):
    """Reports what the walker's snapshot domain found in the scope (`ctx.domain("snapshots")`)."""

    domains = ("snapshots",)
    kind = ""
    # `best = snapshot(model)`, `w0 = to_numpy(model.fc.weight)`, `stopper.step(loss, model)`:
    # functions and methods of the modules the file imports that may keep a snapshot.
    imported_triggers = staticmethod(snapshot_triggers)

    @classmethod
    def scope_test_imported(cls, text: str, names: frozenset):
        # A function that calls one of the file's functions that return a state dict or a view
        # of what they are handed (`best = snapshot(model)`), or a method that keeps a state dict
        # (`stopper.step(loss, model)`), keeps one as much as `model.state_dict()` does.
        needles = tuple("state_dict(" if n == "__call__" else n + "(" for n in sorted(names)) + snapshot_needles(text)
        test = cls.might_match_scope
        test = or_holds(test, needles) if needles else test
        if ".step(" in text:
            return test
        # Without an optimizer step in the file, the snapshot domain tracks only a function whose
        # own text may update a tensor (SnapshotDomain.active), or that calls a function or
        # method of a module the file imports that steps one (`t.fit(x)`: stepping_callables):
        # in the others nothing is found.
        if names:
            calls = tuple(n + "(" for n in sorted(names))
            return lambda segment: test(segment) and (may_update(segment) or any(c in segment for c in calls))
        return lambda segment: test(segment) and may_update(segment)

    def leave_scope(self, scope, ctx) -> None:
        snaps = ctx.domain("snapshots")
        if snaps is None:
            return
        for finding in snaps.findings:
            if finding.anchor.kind == self.kind:
                self.found(finding, ctx)

    def found(self, finding: SnapFinding, ctx) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


def _report_copied_element(rule, finding: SnapFinding, ctx, **fields) -> None:
    """Report a comprehension of views (`{k: v.cpu() for k, v in model.state_dict().items()}`),
    fixed by copying its element (`v.cpu().clone()`; `.copy()` of a NumPy array)."""
    anchor = finding.anchor
    node, element = anchor.node, anchor.copy_after
    suffix = ".copy()" if anchor.array else ".clone()"
    start, end = ctx.span(node)
    _, at = ctx.span(element)
    text = ctx.lines.text
    fix = Fix(rule.fix_title, rule.fix_safety, (Edit(at, at, suffix),))
    shown = " ".join(text[start:end].split())
    fixed = " ".join((text[start:at] + suffix + text[at:end]).split())
    if len(fixed) > 70:  # (the element, copied)
        shown, fixed = ctx.shortened(node, 60), ctx.shortened(element, 40) + suffix
    ctx.report(rule, node, fix, expr=shown, fixed=fixed, **fields)


# --------------------------------------------------------------------------- TNS501


class StateDictNotACopy(_SnapshotRule):
    code = "TNS501"
    name = "state-dict-not-a-copy"
    message = (
        "`{expr}` is not a copy{via}: `{update}` (line {update_line}) changes its tensors in place before "
        "`{holder}` is used (line {use}); use `{fixed}`"
    )
    fix_title = "Copy the state dict"
    fix_safety = "unsafe"
    prefilter = ("state_dict(",)
    kind = STATE
    # `best = snapshot(model)` with `def snapshot(m): return m.state_dict()` in utils.py (a
    # `return` of one, a local bound to one, or an attribute of the instance set to one).
    imported_needle = EitherNeedle(
        OnLinesWith((b".state_dict(",), LazyPattern(rb"^[ \t]*(?:return|(?:self\.)?\w+[ \t]*=)")), STEPS_BYTES)

    @classmethod
    def might_match(cls, text: str) -> bool:
        return might_keep_state_dict(text)
    docs = """
## What it does
Checks for a module's `state_dict()` kept as a snapshot and used after an in-place update of
the module's parameters.

The snapshot is `best_state = model.state_dict()`, a checkpoint dict or list that holds one,
a shallow copy of one (`.copy()`, `dict(...)`, `OrderedDict(...)`, `copy.copy(...)`), a
comprehension over its `.items()` or `.values()` that copies no tensor (`{k: v for k, v in sd.items()}`, `v.detach()`,
`v.data`, `v.numpy()`, which runs only on the CPU and shares the tensor's memory there, and for
the state dict of a module certainly on the CPU (in a file that names no device and moves
nothing: no `device=` argument, `torch.device(...)` of other than "cpu", `.cuda()` or
`.to(dev)`) `v.cpu()` or `v.to("cpu")`, which there return
the tensor itself; `.to("cpu", copy=True)` or a dtype copies), `state_dict(keep_vars=True)`
(the parameters themselves), or what a function of the file or of another module of the
project returns when it returns the state dict of the module it is handed (`best = snapshot(model)`
with `def snapshot(m): return m.state_dict()`, or `state = m.state_dict()` then `return state`,
the local named nowhere else, or some of its entries, `{k: v for k, v in m.state_dict().items()
if ...}`: every `return` of the function returns one of that parameter,
which it never rebinds; the message says where the function is), or what a
method of a class of the file or of another module of the project keeps in an attribute of the
instance (`stopper.step(val_loss, model)`, or `stopper(val_loss, model)`, with
`self.best_state = model.state_dict()` in the method, an early-stopping helper:
`stopper.best_state` is the snapshot, used also by a call of a method of the instance that loads,
saves, deep-copies, indexes or returns that attribute, `stopper.restore(model)` with
`model.load_state_dict(self.best_state)`, where the method never binds it; or `self.validate()` with `self.best_state =
self.model.state_dict()` in the method, a trainer's; reported at the call, without a fix, since
the copy goes in the method).  The module is a torch module by the flow of the
code, or a name with module methods in the code (`model.train()`, `model.parameters()`) or that
the code calls (`model(x)`: optimizers, schedulers and scalers have state dicts but are not
called); a class of the file that defines its own `state_dict` is not one.  A module by
another name is the module (`m = model`, or torchvision's `model_without_ddp = model.module if
hasattr(model, "module") else model`): an update of `model` changes `m.state_dict()`.

The updates are optimizer steps (`opt.step()`, `scaler.step(opt)`; an optimizer that the file
builds on another module's parameters does not count, nor does a generator's optimizer,
`optimizerG`, for a discriminator, `netD`, or the reverse), calls of a function or method of the
file that steps an optimizer (itself or through the file's functions it calls) and is handed
the module (`train_one_epoch(model, ...)`, `self.train_epoch()` for `self.model`, or handed
nothing but stepping an optimizer of the module's own on it: `train_epoch()` with
`def train_epoch(): ... opt.step()` and `opt = torch.optim.SGD(model.parameters())`,
`trainer.step(x, y)` for `trainer.model`: a method named `step` that is no optimizer's; or
stepping a parameter whose name says nothing, `def train_one_epoch(m, o): ... o.step()`, that
the call hands an optimizer of the module, `train_one_epoch(model, opt)`; also
a function of another module of the project, `loops.train_one_epoch(model, opt, data)`, or a
method of a class of one, its own or one it inherits from a class of a third module),
`model.load_state_dict(...)` (not of the snapshot itself, which copies each tensor onto
itself; also in a function of the file or of another module that the call hands the model,
`evaluate_with_weights(model, avg_state)`), `model.reset_parameters()`, `nn.init.*_` and in-place writes to its parameters.  A
step does not update a submodule that is frozen there (`model.backbone.requires_grad_(False)`:
its parameters get no gradient, and a step leaves a parameter without one alone).  The use is a read of the snapshot's values after the update on some path:
`model.load_state_dict(best_state)`, `torch.save(best_state, ...)`, `return best_state`,
`copy.deepcopy(best_state)`, indexing it (not `len()`, `is None`, `in`, or iterating its keys).

Only reported when the snapshot, the update and the use are in one function (or at module
level, or in a notebook), in that order on a path that can run (around a loop: a snapshot
taken in one epoch and an update in the next).  Not reported when the module's name was
rebound in between (`model = Net()`) or the module was converted (`model.to(device)`,
`model.double()`: the parameters may get new storage, and the snapshot keeps the old), or for
a snapshot taken after training ends.

## Why is this bad?
`state_dict()` returns references to the parameters and buffers themselves (detached, sharing
storage): it is a view of the model, not a copy.  Every later `opt.step()` changes the
"snapshot" too, so `model.load_state_dict(best_state)` after training restores nothing: the
"best" weights are silently the last ones (`torch.equal(best_state["weight"], model.weight)` is
`True` after more steps), and early stopping, "restore best checkpoint" or rewinding to the
initial weights do not do what they say.  PyTorch's transfer-learning tutorial writes
`copy.deepcopy(model.state_dict())` for exactly this reason.

## Example
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, opt)
    val_loss = evaluate(model)
    if val_loss < best_loss:
        best_loss = val_loss
        best_state = model.state_dict()
model.load_state_dict(best_state)
```

## Use instead
```python
import copy

for epoch in range(epochs):
    ...
    if val_loss < best_loss:
        best_loss = val_loss
        best_state = copy.deepcopy(model.state_dict())
model.load_state_dict(best_state)
```
To keep the snapshot off the accelerator: `{k: v.detach().cpu().clone() for k, v in
model.state_dict().items()}` (`clone()` matters on the CPU, where `.cpu()` returns the tensor
itself).

## Fix safety
Unsafe: the copy makes the snapshot keep the values it had, which is what the name says, but
code that relied on it following the model changes behaviour, and the copy takes memory (on the
model's device).  The fix wraps the call in `copy.deepcopy(...)` when the file imports `copy`
(or `deepcopy`), and otherwise writes `{k: v.detach().clone() for k, v in
model.state_dict().items()}`, which needs no import but fails on a module whose
`get_extra_state()` puts a non-tensor value in its state dict.  In a comprehension it appends
`.clone()` to the element (`{k: v.cpu().clone() for k, v in model.state_dict().items()}`).

## References
- https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.state_dict
- https://pytorch.org/tutorials/beginner/transfer_learning_tutorial.html
- https://pytorch.org/tutorials/beginner/saving_loading_models.html
"""
    _BEST = _SETUP + dedent("""
        x_val, y_val = torch.randn(16, 4), torch.randn(16, 1)
        best_loss, best_state = float("inf"), None
        for epoch in range(20):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                val_loss = nn.functional.mse_loss(model(x_val), y_val).item()
            if val_loss < best_loss:
                best_loss = val_loss
                best_state = {snap}
        model.load_state_dict(best_state)
        with torch.no_grad():
            restored = nn.functional.mse_loss(model(x_val), y_val).item()
        """)

    _REWIND = dedent("""
        init_loss = nn.functional.mse_loss(model(x), y).item()
        init_state = {snap}
        for epoch in range(3):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.load_state_dict(init_state)
        rewound_loss = nn.functional.mse_loss(model(x), y).item()
        """)

    _HELPER = "\n\ndef snapshot(m):\n    return {ret}\n\n\n"
    _HELPER_LOCAL = "\n\ndef snapshot(m):\n    state = m.state_dict()\n    return state\n\n\n"
    # An early-stopping helper that keeps the best state dict in an attribute.
    _STOPPING = dedent("""


                class EarlyStopping:
                    def __init__(self, patience=2):
                        self.patience = patience
                        self.best_loss = float("inf")
                        self.best_state = None
                        self.bad_epochs = 0

                    def step(self, loss, model):
                        if loss < self.best_loss:
                            self.best_loss = loss
                            self.best_state = {keep}
                            self.bad_epochs = 0
                        else:
                            self.bad_epochs += 1
                        return self.bad_epochs >= self.patience


                x_val, y_val = torch.randn(16, 4), torch.randn(16, 1)
                stopper = EarlyStopping()
                for epoch in range(50):
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    with torch.no_grad():
                        val_loss = nn.functional.mse_loss(model(x_val), y_val).item()
                    if stopper.step(val_loss, model):
                        break
                model.load_state_dict(stopper.best_state)
                with torch.no_grad():
                    restored = nn.functional.mse_loss(model(x_val), y_val).item()
                """)

    # A function of the file that steps the module's own optimizer, handed nothing.
    _GLOBAL_STEPS = dedent("""


        def train_epoch():
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()


        """)

    # A trainer whose validation keeps the state dict of the model it holds.
    _TRAINER = dedent("""


        class Trainer:
            def __init__(self, model, opt):
                self.model = model
                self.opt = opt
                self.best_loss = float("inf")
                self.best_state = None

            def train_epoch(self):
                loss = nn.functional.mse_loss(self.model(x), y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()

            def validate(self):
                with torch.no_grad():
                    val_loss = nn.functional.mse_loss(self.model(x_val), y_val).item()
                if val_loss < self.best_loss:
                    self.best_loss = val_loss
                    self.best_state = {keep}

            def fit(self, epochs):
                for epoch in range(epochs):
                    self.train_epoch()
                    self.validate()
                self.model.load_state_dict(self.best_state)


        x_val, y_val = torch.randn(16, 4), torch.randn(16, 1)
        trainer = Trainer(model, opt)
        trainer.fit(20)
        with torch.no_grad():
            restored = nn.functional.mse_loss(model(x_val), y_val).item()
        """)

    VALID = [
        # A trainer that keeps a copy.
        Valid("import copy\n\n" + _SETUP + _TRAINER.format(keep="copy.deepcopy(self.model.state_dict())"), runs=True),
        # An early-stopping helper that keeps a copy.
        Valid("import copy\n\n" + _SETUP + _STOPPING.format(keep="copy.deepcopy(model.state_dict())"), runs=True),
        # A function of the file that returns a copy.
        Valid("import copy\n\n" + _SETUP + _HELPER.format(ret="copy.deepcopy(m.state_dict())")
              + _REWIND.format(snap="snapshot(model)"), runs=True),
        # The tutorial's spelling, and a copy by comprehension.
        Valid("import copy\n\n" + _BEST.format(snap="copy.deepcopy(model.state_dict())"), runs=True),
        Valid(_BEST.format(snap="{k: v.detach().clone() for k, v in model.state_dict().items()}"), runs=True),
        # A snapshot taken after training ends.
        Valid(_SETUP + dedent("""
            for epoch in range(3):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            final = model.state_dict()
            torch.save(final, "final.pt")
            """)),
        # Saved at once in every epoch: each checkpoint is written before the next step.
        Valid(_SETUP + dedent("""
            import io

            for epoch in range(3):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                ckpt = {"model": model.state_dict(), "epoch": epoch}
                torch.save(ckpt, io.BytesIO())
            """),
              runs=True),
        # The model is rebuilt: the old state dict is no longer updated.
        Valid(_SETUP + dedent("""
            init = model.state_dict()
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(3):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(init["weight"].shape)
            """), runs=True),
        # A function that steps the module's optimizer, called where `model` is another, local one.
        Valid(_SETUP + _GLOBAL_STEPS + dedent("""
            def fit():
                model = nn.Linear(4, 1)
                init_state = model.state_dict()
                train_epoch()
                model.load_state_dict(init_state)
                return model


            fit()
            """), runs=True),
        # Another model's optimizer steps.
        Valid(_SETUP + dedent("""
            teacher = nn.Linear(4, 1)
            teacher_state = teacher.state_dict()
            for epoch in range(3):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            teacher.load_state_dict(teacher_state)
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            # Early stopping's "best" weights are the last ones; the fix uses the file's `copy`.
            "import copy\n\n" + _BEST.format(snap="model.state_dict()"),
            line=20,
            col=21,
            fixed="import copy\n\n" + _BEST.format(snap="copy.deepcopy(model.state_dict())"),
            unsafe=True,
            oracle=Oracle(check_bad="abs(restored - best_loss) > 1e-3 and restored == val_loss",
                          check_fixed="abs(restored - best_loss) < 1e-6"),
        ),
        Invalid(
            # Without `import copy`: a copy by comprehension.
            _BEST.format(snap="model.state_dict()"),
            line=18,
            col=21,
            fixed=_BEST.format(snap="{k: v.detach().clone() for k, v in model.state_dict().items()}"),
            unsafe=True,
            oracle=Oracle(check_bad="abs(restored - best_loss) > 1e-3",
                          check_fixed="abs(restored - best_loss) < 1e-6"),
        ),
        Invalid(
            # Rewinding to the initial weights rewinds nothing; dict.copy() is shallow.
            "from copy import deepcopy\n\n" + _SETUP + _REWIND.format(snap="model.state_dict().copy()"),
            line=10,
            col=13,
            fixed="from copy import deepcopy\n\n" + _SETUP + _REWIND.format(snap="deepcopy(model.state_dict())"),
            unsafe=True,
            oracle=Oracle(check_bad="rewound_loss != init_loss", check_fixed="rewound_loss == init_loss"),
        ),
        Invalid(
            # An early-stopping helper keeps the "best" state dict in an attribute: the weights it
            # restores are the last ones.  No fix here: the copy goes in `EarlyStopping.step()`.
            _SETUP + _STOPPING.format(keep="model.state_dict()"),
            line=35,
            col=7,
            oracle=Oracle(check_bad="abs(restored - stopper.best_loss) > 1e-3 and restored == val_loss"),
        ),
        Invalid(
            # A trainer's validation keeps the state dict of the model it holds, which the next
            # epoch's steps change: its `fit` restores the last weights.  Reported at the call.
            _SETUP + _TRAINER.format(keep="self.model.state_dict()"),
            line=32,
            col=12,
            oracle=Oracle(check_bad="abs(restored - trainer.best_loss) > 1e-3"),
        ),
        Invalid(
            # On the CPU, `.cpu()` returns the tensor itself: a comprehension of them copies nothing.
            _BEST.format(snap="{k: v.cpu() for k, v in model.state_dict().items()}"),
            line=18,
            col=21,
            fixed=_BEST.format(snap="{k: v.cpu().clone() for k, v in model.state_dict().items()}"),
            unsafe=True,
            oracle=Oracle(check_bad="abs(restored - best_loss) > 1e-3",
                          check_fixed="abs(restored - best_loss) < 1e-6"),
        ),
        Invalid(
            # A function of the file that returns the state dict it is handed copies nothing either.
            "import copy\n\n" + _SETUP + _HELPER.format(ret="m.state_dict()") + _REWIND.format(snap="snapshot(model)"),
            line=16,
            col=13,
            fixed="import copy\n\n" + _SETUP + _HELPER.format(ret="m.state_dict()")
            + _REWIND.format(snap="copy.deepcopy(snapshot(model))"),
            unsafe=True,
            oracle=Oracle(check_bad="rewound_loss != init_loss", check_fixed="rewound_loss == init_loss"),
        ),
        Invalid(
            # A function of the file that steps the module's optimizer updates its model unhanded.
            "import copy\n\n" + _SETUP + _GLOBAL_STEPS
            + _REWIND.format(snap="model.state_dict()").replace("    loss = nn.functional.mse_loss(model(x), y)\n"
                                                                "    opt.zero_grad()\n    loss.backward()\n"
                                                                "    opt.step()\n", "    train_epoch()\n"),
            line=19,
            col=13,
            fixed="import copy\n\n" + _SETUP + _GLOBAL_STEPS
            + _REWIND.format(snap="copy.deepcopy(model.state_dict())").replace(
                "    loss = nn.functional.mse_loss(model(x), y)\n    opt.zero_grad()\n    loss.backward()\n"
                "    opt.step()\n", "    train_epoch()\n"),
            unsafe=True,
            oracle=Oracle(check_bad="rewound_loss != init_loss", check_fixed="rewound_loss == init_loss"),
        ),
        Invalid(
            # So does one that binds it to a local first, and returns that.
            "import copy\n\n" + _SETUP + _HELPER_LOCAL + _REWIND.format(snap="snapshot(model)"),
            line=17,
            col=13,
            fixed="import copy\n\n" + _SETUP + _HELPER_LOCAL + _REWIND.format(snap="copy.deepcopy(snapshot(model))"),
            unsafe=True,
            oracle=Oracle(check_bad="rewound_loss != init_loss", check_fixed="rewound_loss == init_loss"),
        ),
    ]

    def found(self, finding: SnapFinding, ctx) -> None:
        anchor = finding.anchor
        if anchor.copy_after is not None:
            _report_copied_element(self, finding, ctx, via=anchor.via, update=finding.update,
                                   update_line=finding.update_line, holder=finding.holder, use=finding.use_line)
            return
        if anchor.kept is not None:
            # Kept by a method (`stopper.step(loss, model)`): the copy goes there (the message
            # says where), not here.
            shown, instead = anchor.kept
            ctx.report(self, anchor.node, None, expr=shown, via=anchor.via, update=finding.update,
                       update_line=finding.update_line, holder=finding.holder, use=finding.use_line, fixed=instead)
            return
        node, inner = anchor.node, anchor.inner or anchor.node
        inner_text = ctx.text(inner)
        copy_call = self._deepcopy_spelling(ctx)
        if copy_call is not None:
            fixed = f"{copy_call}({inner_text})"
        else:
            fixed = f"{{k: v.detach().clone() for k, v in {inner_text}.items()}}"
        start, end = ctx.span(node)
        fix = Fix(self.fix_title, self.fix_safety, (Edit(start, end, fixed, expect=ctx.lines.text[start:end]),))
        shown_fix = f"{copy_call or 'copy.deepcopy'}({_short(ctx, inner)})"
        ctx.report(self, node, fix, expr=_short(ctx, node), via=anchor.via, update=finding.update,
                   update_line=finding.update_line, holder=finding.holder, use=finding.use_line, fixed=shown_fix)

    @staticmethod
    def _deepcopy_spelling(ctx) -> str | None:
        """How this file spells `copy.deepcopy` where the fix goes, or None."""
        for n in ctx.tree.body:
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.name == "copy":
                        local = a.asname or "copy"
                        if ctx.qualname(ast.Name(id=local, ctx=ast.Load())) == "copy":
                            return f"{local}.deepcopy"
            elif isinstance(n, ast.ImportFrom) and n.module == "copy" and n.level == 0:
                for a in n.names:
                    if a.name == "deepcopy":
                        local = a.asname or "deepcopy"
                        if ctx.qualname(ast.Name(id=local, ctx=ast.Load())) == "copy.deepcopy":
                            return local
        return None


# --------------------------------------------------------------------------- TNS502


class TensorSnapshotNotACopy(_SnapshotRule):
    code = "TNS502"
    name = "tensor-snapshot-not-a-copy"
    message = (
        "`{expr}` shares memory with `{source}`{via}: `{update}` (line {update_line}) changes it in place before "
        "`{holder}` is used (line {use}); use `{fixed}`"
    )
    fix_title = "Copy the values"
    fix_safety = "unsafe"
    prefilter = (".detach(", ".numpy(", ".data", ".cpu()", "cpu\")", "cpu')")
    kind = "tensor"
    # `w0 = to_numpy(model.fc.weight)` with `def to_numpy(t): return t.detach().cpu().numpy()` in
    # utils.py (a `return` of a view that ends the line, or a local bound to one).
    imported_needle = EitherNeedle(OnLinesWith((b".detach()", b".numpy()", b".data"), LazyPattern(
        rb"^[ \t]*(?:return|[A-Za-z_]\w*[ \t]*=)[^\n]*(?:\.detach\(\)|\.data|\.numpy\(\))(?:\.cpu\(\))?(?:\.numpy\(\))?[ \t]*(?:[,)\]}#]|\r?$)")),
        STEPS_BYTES, KEEPS_VIEWS_BYTES)

    @classmethod
    def might_match(cls, text: str) -> bool:
        return might_alias_tensor(text)
    docs = """
## What it does
Checks for a `.detach()`, `.data` or NumPy view of a tensor kept as a snapshot and read after an
in-place update of that tensor.

The snapshot is bound to a name, appended to a history list or stored in a container.  The
views are `t.detach()`, `t.data`, `t.detach().numpy()`, `t.numpy()` (where grad is off or `t`
does not require grad), and `t.cpu()`, `t.detach().cpu()` or `t.detach().cpu().numpy()` (or
`.to("cpu")`) when `t` is certainly on the CPU (the file names no device and moves nothing, as for
TNS501; there `.cpu()` returns the tensor itself; from an
accelerator it copies), of a tensor with a name (`model.fc.weight`,
`w`, a loop variable over `model.parameters()`, `model[0].weight` of a layer of a `Sequential`
by its index, where the file freezes nothing: a freeze of a layer by its index is not followed; a view through another name of a parameter,
`w = model.weight` then `w.detach()`, is one of the parameter, which updates of its module
reach), and what a function of the file or of another module of the project
returns when it returns such a view of the tensor it is handed (`to_numpy(model.fc.weight)` with
`def to_numpy(t): return t.detach().cpu().numpy()`, or a local bound to such a view and
returned, named nowhere else: every `return` of the function returns the same view of that
parameter, which it never rebinds; the message says where the function is),
and a list or dict comprehension of such views of a module's parameters (`[p.detach() for p in
model.parameters()]`, `{n: p.detach() for n, p in model.named_parameters()}`, or a list of them
kept under a name, `old = [p.data for p in params]` with `params = [p for p in
model.parameters() if p.dim() > 1]`: an update-to-data ratio).  A class of the
file or of another module of the project whose constructor keeps such a comprehension of the
module it is handed in an attribute (`self.params = {n: p.data for n, p in
model.named_parameters()}`, an EWC anchor) is reported at the constructor's call (`ewc =
EWC(model)`), where the attribute or a method that reads it (`ewc.penalty(model)`) is used after
the update; not a class that writes into a tensor in place (a pruner's masks: its views are
meant to be live).  A view of such a
view is one too (`w.detach().flatten()`, `.view(-1)`, `.t()`, `.T`, basic indexing `[0]` or
`[:, :2]`, a NumPy array's `.reshape(...)`), and so is `np.asarray(w.detach())`; indexing by a
list or a tensor copies (`w.detach()[[0, 1]]`).

The updates are optimizer steps (for parameters and other leaves that require grad; an
optimizer the file builds on other tensors does not count), calls of a function of the file,
or of another module of the project, that steps an optimizer and is handed the tensor or its
module (or a method of a class whose instance was: `t.fit(x)` with `t = Trainer(model)`,
`Trainer` in `trainer.py`; or one of the file that steps a parameter the call hands an
optimizer of the module, `train_one_epoch(model, opt)` with `o.step()`), `load_state_dict` of its
module, `nn.init.*_`, in-place methods (`t.add_(...)`, `t.data.copy_(...)`), `t[i] = v` and
`t -= lr * g` on the tensor.  The use is a read of the snapshot's values after the update on
some path (passing it to a call, returning it, indexing it, arithmetic, iterating a history
list; not `len()` or `history.append(...)`).

A tensor that is rebound instead (`x = x - lr * g`) is a new tensor: its old views keep their
values and are not reported; neither are views taken before a conversion of the tensor's module
(`model.to(device)`, `model.double()`), which may give the parameters new storage.  Only
reported when the view, the update and the read are in one function (or at module level, or in
a notebook), in that order on a path that can run.

## Why is this bad?
`detach()`, `.data` and `.numpy()` share storage with the tensor: they are views, not copies.
After `opt.step()` updates the parameter in place, every earlier "snapshot" shows the new
values: a list filled with `w.detach().numpy()` once per step holds the final weights N times,
and `prev = w.detach(); opt.step(); delta = w - prev` is always zero.  Nothing raises; the
plots, statistics or convergence tests built on them are silently wrong.

## Example
```python
history = []
for step in range(steps):
    ...
    opt.step()
    history.append(model.fc.weight.detach().numpy())
np.save("weights.npy", np.stack(history))
```

## Use instead
```python
history = []
for step in range(steps):
    ...
    opt.step()
    history.append(model.fc.weight.detach().numpy().copy())
```
or `model.fc.weight.detach().clone()` for a tensor (`.detach().cpu().numpy()` copies only when
the tensor is on an accelerator).

## Fix safety
Unsafe: the copy keeps the values of the moment, which is what a snapshot means, but code that
wanted a live view of the tensor behaves differently.  The fix appends `.copy()` to a NumPy
view and `.clone()` to a tensor view (in a comprehension, to its element).

## References
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.numpy.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.clone.html
"""
    _STEPS = dedent("""
        history = []
        for step in range(3):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            history.append({snap})
        trajectory = np.stack(history)
        """)
    _HISTORY = "import numpy as np\n" + _SETUP + _STEPS
    # A layer of a `Sequential` by its index.
    _SEQUENTIAL = "import numpy as np\n" + _SETUP.replace("nn.Linear(4, 1)", "nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))") \
        + _STEPS
    # The same through a function of the file.
    _HELPED = "import numpy as np\n" + _SETUP + "\n\ndef to_numpy(t):\n    return {ret}\n\n\n" + _STEPS

    VALID = [
        Valid(_HISTORY.format(snap="model.weight.detach().numpy().copy()"), runs=True),
        Valid(_HELPED.format(ret="t.detach().cpu().numpy().copy()", snap="to_numpy(model.weight)"), runs=True),
        Valid(_HISTORY.format(snap="model.weight.detach().clone().numpy()"), runs=True),
        Valid(_HISTORY.format(snap="model.weight.tolist()"), runs=True),
        # A history of the loss: a new tensor each step, never updated in place.
        Valid(_SETUP + dedent("""
            losses = []
            for step in range(3):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.detach())
            print(torch.stack(losses))
            """), runs=True),
        # Plain gradient descent that rebinds `w`: each view keeps its values.
        Valid(dedent("""
            import torch

            w = torch.zeros(3, requires_grad=True)
            trace = []
            for step in range(3):
                loss = (w - 1).pow(2).sum()
                (g,) = torch.autograd.grad(loss, w)
                w = (w - 0.1 * g).detach().requires_grad_()
                trace.append(w.detach().numpy())
            print(trace[0], trace[-1])
            """), runs=True),
        # The indexed layer is frozen (where a file freezes anything, a layer taken by its
        # index may be a frozen one: the walk follows freezes of names only).
        Valid(_SEQUENTIAL.format(snap="model[0].weight.data").replace(
            "opt = ", "model[0].requires_grad_(False)\nopt = "), runs=True),
        # Read before the next update.
        Valid(_SETUP + dedent("""
            for step in range(3):
                before = model.weight.detach()
                print(before.norm())
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            _HISTORY.format(snap="model.weight.detach().numpy()"),
            line=14,
            col=19,
            fixed=_HISTORY.format(snap="model.weight.detach().numpy().copy()"),
            unsafe=True,
            oracle=Oracle(check_bad="(trajectory == trajectory[-1]).all()",
                          check_fixed="not (trajectory[0] == trajectory[-1]).all()"),
        ),
        Invalid(
            # The same, one parameter at a time.
            _SETUP + dedent("""
                start = []
                for p in model.parameters():
                    start.append(p.detach())
                for step in range(3):
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                moved = [not torch.equal(a, p) for a, p in zip(start, model.parameters())]
                """),
            line=9,
            col=17,
            fixed=_SETUP + dedent("""
                start = []
                for p in model.parameters():
                    start.append(p.detach().clone())
                for step in range(3):
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                moved = [not torch.equal(a, p) for a, p in zip(start, model.parameters())]
                """),
            unsafe=True,
            oracle=Oracle(check_bad="not any(moved)", check_fixed="all(moved)"),
        ),
        Invalid(
            # A list of views of the parameters: each moves with its parameter.
            _SETUP + dedent("""
                start = [p.detach() for p in model.parameters()]
                for step in range(3):
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                moved = [not torch.equal(a, p) for a, p in zip(start, model.parameters())]
                """),
            line=7,
            col=8,
            fixed=_SETUP + dedent("""
                start = [p.detach().clone() for p in model.parameters()]
                for step in range(3):
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                moved = [not torch.equal(a, p) for a, p in zip(start, model.parameters())]
                """),
            unsafe=True,
            oracle=Oracle(check_bad="not any(moved)", check_fixed="all(moved)"),
        ),
        Invalid(
            # A function of the file that returns a NumPy view of the tensor it is handed.
            _HELPED.format(ret="t.detach().cpu().numpy()", snap="to_numpy(model.weight)"),
            line=20,
            col=19,
            fixed=_HELPED.format(ret="t.detach().cpu().numpy()", snap="to_numpy(model.weight).copy()"),
            unsafe=True,
            oracle=Oracle(check_bad="(trajectory == trajectory[-1]).all()",
                          check_fixed="not (trajectory[0] == trajectory[-1]).all()"),
        ),
        Invalid(
            # "How much did this step change the weights?" is always zero.
            _SETUP + dedent("""
                for step in range(3):
                    prev = model.weight.detach()
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    change = (model.weight - prev).abs().max().item()
                """),
            line=8,
            col=11,
            fixed=_SETUP + dedent("""
                for step in range(3):
                    prev = model.weight.detach().clone()
                    loss = nn.functional.mse_loss(model(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    change = (model.weight - prev).abs().max().item()
                """),
            unsafe=True,
            oracle=Oracle(check_bad="change == 0.0", check_fixed="change > 0.0"),
        ),
        Invalid(
            # A layer of a `Sequential`, by its index.
            _SEQUENTIAL.format(snap="model[0].weight.data"),
            line=14,
            col=19,
            fixed=_SEQUENTIAL.format(snap="model[0].weight.data.clone()"),
            unsafe=True,
            oracle=Oracle(check_bad="(trajectory == trajectory[-1]).all()",
                          check_fixed="not (trajectory[0] == trajectory[-1]).all()"),
        ),
        Invalid(
            # A manual update through `.data` changes the snapshots taken through `.data`.
            dedent("""
                import torch

                w = torch.zeros(3, requires_grad=True)
                snapshots = []
                for step in range(3):
                    loss = (w - 1).pow(2).sum()
                    loss.backward()
                    w.data.add_(w.grad, alpha=-0.1)
                    w.grad = None
                    snapshots.append(w.data)
                first = snapshots[0]
                """),
            line=10,
            col=21,
            fixed=dedent("""
                import torch

                w = torch.zeros(3, requires_grad=True)
                snapshots = []
                for step in range(3):
                    loss = (w - 1).pow(2).sum()
                    loss.backward()
                    w.data.add_(w.grad, alpha=-0.1)
                    w.grad = None
                    snapshots.append(w.data.clone())
                first = snapshots[0]
                """),
            unsafe=True,
            oracle=Oracle(check_bad="torch.equal(first, w.detach())",
                          check_fixed="torch.allclose(first, torch.full((3,), 0.2))"),
        ),
    ]

    def found(self, finding: SnapFinding, ctx) -> None:
        if finding.anchor.copy_after is not None:
            _report_copied_element(self, finding, ctx, source=finding.anchor.source, via=finding.anchor.via,
                                   update=finding.update, update_line=finding.update_line, holder=finding.holder,
                                   use=finding.use_line)
            return
        if finding.anchor.kept is not None:
            # Kept by a constructor (`ewc = EWC(model, loader)`): the copies go there (the message
            # says where), not here.
            shown, instead = finding.anchor.kept
            ctx.report(self, finding.anchor.node, None, expr=shown, source=finding.anchor.source,
                       via=finding.anchor.via, update=finding.update, update_line=finding.update_line,
                       holder=finding.holder, use=finding.use_line, fixed=instead)
            return
        node = finding.anchor.node
        numpy = finding.anchor.array
        if numpy is None:
            numpy = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy"
        suffix = ".copy()" if numpy else ".clone()"
        _, end = ctx.span(node)
        fix = Fix(self.fix_title, self.fix_safety, (Edit(end, end, suffix),))
        expr = _short(ctx, node)
        fixed = expr + suffix if expr != "<expr>" else f"<expr>{suffix}"
        ctx.report(self, node, fix, expr=expr, source=finding.anchor.source, via=finding.anchor.via,
                   update=finding.update,
                   update_line=finding.update_line, holder=finding.holder, use=finding.use_line, fixed=fixed)


# --------------------------------------------------------------------------- TNS503


def _atom(node) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))


def _cloned(node):
    """What `x.clone()` (without arguments) clones, else None: `.detach()` goes before the clone
    (the order TNS201 asks for)."""
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "clone" \
            and not node.args and not node.keywords:
        return node.func.value
    return None


def _detached(node, ctx) -> tuple:
    """The edits that append `.detach()` to expression `node` (in parentheses where it needs
    them), or insert it before a last `.clone()` (`loss.clone()`: `loss.detach().clone()`)."""
    inner = _cloned(node)
    if inner is not None:
        node = inner
    start, end = ctx.span(node)
    if _atom(node):
        return (Edit(end, end, ".detach()"),)
    return (Edit(start, start, "("), Edit(end, end, ").detach()"))


class LossAccumulatedWithGraph(Rule):
    code = "TNS503"
    name = "loss-accumulated-with-graph"
    message = (
        "`{acc}` {adds} {term} with its graph in every iteration{unused}{where}: every graph stays alive; use "
        "{fixed}"
    )
    fix_title = "Accumulate the value without its graph (`.detach()`)"
    fix_safety = "safe"
    prefilter = ("+", ".add_(", ".append(")
    domains = ("accumulators",)
    docs = """
## What it does
Checks for a running total of losses that keeps their autograd graphs (`total += loss` in a
loop) and is never back-propagated.

The total starts from zero (`total = 0`, `0.0`, `torch.zeros(...)`, `torch.tensor(0.0)`) and adds,
in a loop, `total += loss` or `total = total + loss` (or a decayed total, an exponentially smoothed
loss: `total = 0.9 * total + 0.1 * loss`, `total = total * beta + loss`; or, on a tensor total,
`total.add_(loss)`, which records the addition as `+=` does: the zero tensor then requires grad,
also after an in-place scaling, `ema.mul_(0.9).add_(loss)`; or a smoothed loss that starts from
the first loss, `smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss`, whose fix
detaches both terms),
a tensor that may
require grad (a loss, a
model output; or a name back-propagated earlier in the same loop body, or arithmetic on one,
`loss * x.size(0)`, which requires grad for certain, also where it was computed under
`torch.set_grad_enabled(phase == "train")`), outside a no-grad region; what it added in an
earlier iteration of a loop over batches or steps is still in it; and
the total (and everything computed from it) never reaches `backward()` or
`torch.autograd.grad` and never leaves the function.
A total may be an entry of a dict the function makes (`running = {"loss": 0.0}` or
`collections.defaultdict(float)`, then `running["loss"] += loss`); reading the dict whole
(`return running`) reads its entries.  A dict the function was given is the caller's: not
reported.
A list of losses the function makes (`losses = []`, `list()`) that keeps what it is given in
such a loop (`losses.append(loss)`, `losses += [loss]`, or a tuple of the loss and values that
require no grad, `losses.append((loss, x.size(0)))`) is one too: each element keeps its graph; reading the elements
for their values (`sum(l.item() for l in losses)`, `np.mean([l.item() for l in losses])`,
`len(losses)`) is harmless, and `torch.stack(losses).mean().backward()` back-propagates them.
A list of losses by its spelling: "loss" in its name or in what is appended
(`val_losses.append(crit(out, y))`, `history.append(loss)`); other lists (a forward's hidden
states, which it returns) are not followed.  `np.mean(losses)` on the list itself raises where
an element requires grad (TNS103 reports it there) and is not reported here.  A list the
function was given is the caller's, and one emptied before the append in each iteration
(`losses = []`, `losses.clear()`, `del losses[:]`) keeps no graph across iterations: neither is
reported.
A tensor the function makes for the losses (`losses = torch.zeros(n)`, `torch.empty(n)`; of
losses by its spelling, as a list) that is given each in such a loop (`losses[i] = loss`) keeps
each graph too (the copy into it is recorded), and is followed as such a list is.
A loop over the model's structure (`model.parameters()`, `named_parameters()`, `modules()`, an
optimizer's `param_groups` and a group's `params`) is not a step: `norm += p.norm() ** 2` in
one builds one graph over the parameters, which goes with the total; it is reported only where
a loop over batches around it carries the total too.
A meter is a total too: an instance of a class of the file, or of a module of the project it
imports (`AverageMeter` in `utils.py`, also re-exported by a package's `__init__.py`), made
before the loop, whose method (its own or one it inherits, from a class of the same module or of
another module of the project: `class LossMeter(AverageMeter)` in meters.py, `update` in base_meters.py) adds
what it is given to an attribute (`losses.update(loss, n)`, where `update` does `self.sum += val
* n`; not where the method binds the parameter again first, `val = val.item()`), in a class
that never back-propagates anything; the message names the method.
The total leaves the function when it (or a value computed from it) is returned or yielded,
stored in an attribute or a container (`self.total = total`, `history.append(total)`: a list
the function makes is then followed itself, as above), passed to
a function that is not a display or conversion (`print`, `float`, `str`, f-strings, `logger.*`,
`writer.add_scalar`, Matplotlib's `plt.plot` and `ax.plot`, `.item()`, `.detach()`, ...), read by a nested function or lambda, or
declared `global` / `nonlocal`: such totals may be back-propagated elsewhere (Lightning's
`training_step` returns its loss) and are not reported.  Except a return to the file's own
calls of the function when each only displays or converts what it gets, itself or through the
names it is bound to and the lists it is appended to (`avg = train_epoch(loader)`, `best =
avg`, `history.append(avg)`, `log["loss"].append(avg)`, and then only `print(f"{avg:.4f}")`,
`avg < best`, `logger.info(..., best)`, `min(history)`): the message then names the first
call.  A history of epoch totals keeps every epoch's graphs alive.  For a public function at the top of a module of a project, the calls in the
project's other files count too (`from .trainer import train_epoch`, `import pkg.trainer as T`,
`from pkg import trainer`: `(..., train.py:11)`); a file that reaches it some other way (a
package imported whole, a star import, the function passed as a value, a notebook that names
it) means no finding.  A
function called where the project does not show (`forward`, dunders, a function also used as a
value, one nothing calls) is not followed.  A total that is rebound to a plain value at the top of each iteration does not
carry a graph across iterations and is not reported.
A total may be an attribute of the instance, in a method of a class of the file:
`self.running_loss += loss`, `self.total_loss = self.total_loss + loss`, or `self.losses.append(loss)`
(a loss by its spelling, as for a list), on a line of its own, where the attribute is bound only
to a zero (an empty list) in `__init__` or a reset method, and adds in a loop of the method, or in
a method the file calls in a loop over batches on one instance (`trainer.train_step(x, y)` in `for
x, y in loader:`, where every binding of `trainer` is `Trainer(...)`; `self.train_step(x, y)` in
another method), with grad on; or, for a public class at the top of a module of a project, that
another file of the project calls so on an instance of the class it imports by name (`from
trainer import Trainer`: `(Trainer.train_step() is called in a loop, main.py:9)`), where the
method back-propagates what it adds before (`loss.backward()`: it requires grad whatever model
that file built the instance with).  Not where the attribute is bound again at the top of the step
method or of the caller's loop (`self.running_loss = 0`, `trainer.reset()`); not where any read of
the attribute (by any object, anywhere in the file) does more than display or convert it
(`print(self.running_loss / n)`, `.item()`, a logger): `return self.running_loss`,
`trainer.running_loss.backward()`, passing it on; not where a string spells its name
(`getattr`), another class binds it, or another file of the project mentions it.  Not what a
parameter is added (a meter's `update`: reported at its call, above).  The message names the call
in a loop.  A Lightning `training_step`, called by the framework, is not followed.

## Why is this bad?
Adding a tensor that requires grad records the addition in the autograd graph: the total then
requires grad (`AddBackward0`) and references the graph of every loss added to it; a list of
the losses references each one's graph through its `grad_fn`.  Nothing
frees those graphs until the total is rebound (the list emptied), so memory grows with every iteration, until the
end of the epoch or an out-of-memory error; where `backward()` is not called on the losses (an
evaluation loop without `torch.no_grad()`), each graph keeps all its activations.  PyTorch's FAQ
names it: "Don't accumulate history across your training loop".

## Example
```python
total_loss = 0
for x, y in loader:
    loss = criterion(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss += loss
print(total_loss / len(loader))
```

## Use instead
```python
total_loss = 0
for x, y in loader:
    ...
    total_loss += loss.detach()      # or loss.item(), a Python float
print(total_loss / len(loader))
```
Accumulating a loss on purpose to back-propagate it later (`meta_loss += task_loss`, then
`meta_loss.backward()`) is correct and not reported.  For a list, `losses.append(loss.detach())`
(or `loss.item()`, where the code only needs numbers).

## Fix safety
The fix appends `.detach()` to what is added (or appended to a list: the list then holds tensors
with the same values, without the graph; the message does not offer `.item()` for a list, whose
elements may be a model's outputs, of which `.item()` raises), wrapping it in parentheses when
needed, so the total stays a tensor with the same values, without the graph.  It is safe when what is added is
a torch tensor by the flow of the code and the total's printed form and autograd attributes
(`print(total)`, `str(total)`, `f"{total}"`, logging calls, `total.requires_grad`, `total.grad_fn`;
for a list, the same of the list, of its elements or of what is computed from them) are never
observed: those would now show no `grad_fn`; and, for a total returned to the
file's calls, when the function's name is private (`_train_epoch`) or it is nested in another:
another module could call a public one and back-propagate what it returns; for an attribute,
when its name is private (`self._running_loss`).  Otherwise the fix is unsafe.  `.item()`
would also work but turns the total into a Python float (code that calls `total.item()` later
breaks) and synchronises with an accelerator at every iteration.

## References
- https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.item.html
"""
    _TOTAL = _SETUP + dedent("""
        total = 0
        for step in range(3):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += {term}
        mean_loss = total.item() / 3
        """)
    _LOSSES = _SETUP + dedent("""
        losses = []
        for step in range(3):
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append({term})
        mean_loss = sum(l.item() for l in losses) / len(losses)
        """)

    _TRAINER = _SETUP + dedent("""
        class Trainer:
            def __init__(self, net):
                self.net = net
                self.running_loss = 0

            def train_step(self, x, y):
                loss = nn.functional.mse_loss(self.net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                self.running_loss += {term}


        trainer = Trainer(model)
        for step in range(3):
            trainer.train_step(x, y)
        mean_loss = float(trainer.running_loss) / 3
        """)

    VALID = [
        Valid(_TOTAL.format(term="loss.detach()"), runs=True),
        # An attribute of a trainer, of the value only.
        Valid(_TRAINER.format(term="loss.item()"), runs=True),
        Valid(_SETUP + dedent("""
            total = 0.0
            for step in range(3):
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item()
            print(total / 3)
            """), runs=True),
        # Meta-learning: the sum is back-propagated after the loop.
        Valid(_SETUP + dedent("""
            meta_loss = 0
            for task in range(3):
                task_loss = nn.functional.mse_loss(model(x + task), y)
                meta_loss += task_loss
            opt.zero_grad()
            meta_loss.backward()
            opt.step()
            """), runs=True),
        # Gradient accumulation: the running sum is back-propagated every few steps.
        Valid(_SETUP + dedent("""
            acc = 0
            for step in range(4):
                acc = acc + nn.functional.mse_loss(model(x), y) / 2
                if step % 2 == 1:
                    (acc / 2).backward()
                    opt.step()
                    opt.zero_grad()
                    acc = 0
            """), runs=True),
        # Returned (a Lightning training_step, a helper): it may be back-propagated by the caller.
        Valid(dedent("""
            import torch
            from torch import nn


            def chunked_loss(model, xs, y):
                total = 0
                for x in xs:
                    total += nn.functional.mse_loss(model(x), y)
                return total
            """)),
        # Stored on self, passed to another function.
        Valid(dedent("""
            import torch
            from torch import nn


            class Trainer:
                def run(self, model, xs, y, sink):
                    total = 0
                    for x in xs:
                        total += nn.functional.mse_loss(model(x), y)
                    self.total = total
                    sink(total)
            """)),
        # Reset at the top of every iteration: no graph crosses iterations.
        Valid(_SETUP + dedent("""
            for step in range(3):
                step_loss = 0
                step_loss += nn.functional.mse_loss(model(x), y)
                print(step_loss.item())
            """), runs=True),
        # Under no_grad (validation).
        Valid(_SETUP + dedent("""
            total = 0
            with torch.no_grad():
                for step in range(3):
                    total += nn.functional.mse_loss(model(x), y)
            print(total)
            """), runs=True),
        # A list of losses kept to back-propagate their mean; one of plain numbers for display.
        Valid(_SETUP + dedent("""
            losses, shown = [], []
            for chunk in range(3):
                loss = nn.functional.mse_loss(model(x + chunk), y)
                losses.append(loss)
                shown.append(loss.item())
            opt.zero_grad()
            torch.stack(losses).mean().backward()
            opt.step()
            print(sum(shown) / len(shown))
            """), runs=True),
    ]
    INVALID = [
        Invalid(
            _TOTAL.format(term="loss"),
            line=13,
            col=4,
            fixed=_TOTAL.format(term="loss.detach()"),
            oracle=Oracle(check_bad="total.grad_fn.name() == 'AddBackward0' and "
                                    "total.grad_fn.next_functions[0][0].name() == 'AddBackward0'",
                          check_fixed="total.grad_fn is None and not total.requires_grad",
                          same=("total", "mean_loss")),
        ),
        Invalid(
            # An evaluation loop without no_grad: each graph keeps its activations; the total is
            # printed, so `.detach()` changes what is printed (unsafe).
            _SETUP + dedent("""
                model.eval()
                running = 0
                for i in range(3):
                    running = running + nn.functional.mse_loss(model(x), y) * x.size(0)
                print(running)
                """),
            line=10,
            col=4,
            fixed=_SETUP + dedent("""
                model.eval()
                running = 0
                for i in range(3):
                    running = running + (nn.functional.mse_loss(model(x), y) * x.size(0)).detach()
                print(running)
                """),
            unsafe=True,
            oracle=Oracle(check_bad="running.requires_grad and running.grad_fn.name() == 'AddBackward0'",
                          check_fixed="not running.requires_grad", same=("running",)),
        ),
        Invalid(
            # A list that keeps each step's loss, read only for its values.
            _LOSSES.format(term="loss"),
            line=13,
            col=4,
            fixed=_LOSSES.format(term="loss.detach()"),
            oracle=Oracle(check_bad="all(l.grad_fn is not None for l in losses)",
                          check_fixed="not any(l.requires_grad for l in losses)", same=("losses", "mean_loss")),
        ),
        Invalid(
            # The in-place addition records it in the graph as `+=` does: the zero tensor now
            # requires grad.
            _SETUP + dedent("""
                total = torch.zeros(())
                for step in range(3):
                    total.add_(nn.functional.mse_loss(model(x), y))
                mean_loss = total.item() / 3
                """),
            line=9,
            col=4,
            fixed=_SETUP + dedent("""
                total = torch.zeros(())
                for step in range(3):
                    total.add_(nn.functional.mse_loss(model(x), y).detach())
                mean_loss = total.item() / 3
                """),
            oracle=Oracle(check_bad="total.grad_fn.name() == 'AddBackward0' and "
                                    "total.grad_fn.next_functions[0][0].name() == 'AddBackward0'",
                          check_fixed="total.is_leaf and not total.requires_grad", same=("total", "mean_loss")),
        ),
        Invalid(
            # An attribute of the instance that a step method, called once per batch, adds to.
            _TRAINER.format(term="loss"),
            line=17,
            col=8,
            fixed=_TRAINER.format(term="loss.detach()"),
            unsafe=True,  # (a public attribute: another module may read it)
            oracle=Oracle(check_bad="trainer.running_loss.grad_fn.name() == 'AddBackward0' and "
                                    "trainer.running_loss.grad_fn.next_functions[0][0].name() == 'AddBackward0'",
                          check_fixed="not trainer.running_loss.requires_grad", same=("mean_loss",)),
        ),
    ]

    @classmethod
    def might_match(cls, text: str) -> bool:
        return might_accumulate(text, meter_methods(text), attribute_totals(text))

    # `losses.update(loss)` with `class AverageMeter` in utils.py.
    imported_triggers = staticmethod(meter_methods_by_class)
    imported_needle = METER_BYTES

    @classmethod
    def scope_test_imported(cls, text: str, names: frozenset):
        # `losses.update(loss)` after a loop, with `def update` elsewhere in the file or in a module
        # it imports.
        meters = meter_methods(text) | names
        attrs = attribute_totals(text)  # (`self.running_loss = 0` in `__init__`, a loop elsewhere)
        return lambda segment: might_accumulate(segment, meters, attrs)

    def leave_scope(self, scope, ctx) -> None:
        accs = ctx.domain("accumulators")
        if accs is None:
            return
        for acc in accs.findings:
            self.found(acc, ctx)

    def found(self, acc: Accumulation, ctx) -> None:
        from ..analysis.accumulators import first_term

        term = acc.term
        atom = _atom(term)
        edits = _detached(term, ctx)
        # `smooth = loss if smooth is None else 0.9 * smooth + 0.1 * loss`: the first term's graph
        # stays in the total too, and every later one joins it.
        first = first_term(acc.stmt)
        if first is not None:
            edits = _detached(first, ctx) + edits
        safety = "safe" if acc.term_is_tensor and not acc.shown else "unsafe"
        where = []
        if acc.via is not None:
            cls, method, attr, line = acc.via
            where.append(f"{cls}.{method}() adds it to self.{attr}, {line}")
        if acc.steps is not None:
            cls, method, line = acc.steps
            if line is not None:
                where.append(f"{cls}.{method}() is called in a loop, {line}")
            if not acc.name[len("self."):].startswith("_"):
                safety = "unsafe"  # another module may read a public attribute of the instance
        if acc.returned is not None:
            func, line, private = acc.returned
            where.append(f"the calls of {func}() only display what it returns, {line}")
            if not private:
                safety = "unsafe"  # another module may call it, and differentiate what it returns
        fix = Fix(self.fix_title, safety, edits)
        shown = _short(ctx, term, 40)
        # (A list may keep model outputs, of which `.item()` raises: it is offered for totals.)
        item = "" if acc.kind == "append" else " (or `.item()`)"
        if shown == "<expr>":
            term_text, fixed = "a tensor that requires grad", f"`.detach()`{item} on what is added"
        else:
            if not atom:
                shown = f"({shown})"
            term_text, fixed = f"`{shown}`", f"`{shown}.detach()`{item}"
            inner = _cloned(term)
            inner_shown = _short(ctx, inner, 40) if inner is not None else "<expr>"
            if inner_shown != "<expr>":
                fixed = f"`{inner_shown if _atom(inner) else f'({inner_shown})'}.detach().clone()`{item}"
            start_shown = _short(ctx, first, 40) if first is not None else "<expr>"
            if start_shown != "<expr>":
                start_shown = start_shown if _atom(first) else f"({start_shown})"
                fixed = f"`{shown}.detach()` and `{start_shown}.detach()`{item}"
        name = acc.name
        if "[" in name:  # a dict's entry: as the code spells it (`running["loss"]`)
            stmt = acc.stmt
            target = stmt.target if isinstance(stmt, ast.AugAssign) else stmt.value.func.value \
                if isinstance(stmt, ast.Expr) else stmt.targets[0]  # (`running["loss"].add_(loss)`)
            name = _short(ctx, target, 40)
        # (A list's elements may each have been back-propagated before they were appended: their
        # graphs stay all the same.)
        ctx.report(self, acc.stmt, fix, acc=name, adds="keeps" if acc.kind == "append" else "adds", term=term_text,
                   unused="" if acc.kind == "append" else " and is never back-propagated", fixed=fixed,
                   where=f" ({'; '.join(where)})" if where else "")
