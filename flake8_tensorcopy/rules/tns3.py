"""TNS3xx: GAN training steps."""

from __future__ import annotations

from ..fixes import receiver_text, replace_node
from ..model import Fix
from ..source import LazyPattern, class_methods, or_holds, splice, top_level_functions
from .base import Invalid, Oracle, Rule, Valid, dedent

# Shared by the examples: one tiny generator/discriminator pair, one step each.
_SETUP = dedent("""
    import torch
    from torch import nn

    torch.manual_seed(0)
    netG = nn.Linear(4, 3)
    netD = nn.Linear(3, 1)
    criterion = nn.BCEWithLogitsLoss()
    optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
    optimizerG = torch.optim.SGD(netG.parameters(), lr=0.1)
    real = torch.randn(2, 3)
    noise = torch.randn(2, 4)
    ones, zeros = torch.ones(2, 1), torch.zeros(2, 1)
    """)
_G_GRAD = "sum(p.grad.abs().sum().item() for p in netG.parameters() if p.grad is not None)"
_CRASH = ("RuntimeError", "Trying to backward through the graph a second time")

# What the message says follows: only what the code shows for certain (a crash, a wrong update
# with nothing in between that could clear the gradients); otherwise nothing more than the fact.
_CONSEQUENCES = {
    "crash_later": ': the generator step then fails ("backward through the graph a second time")',
    "crash_here": ': this backward fails ("backward through the graph a second time")',
    "crash_loop": ': the second iteration fails ("backward through the graph a second time")',
    "wrong_retain": ": with retain_graph and no zeroing of its gradients, the generator's update is silently "
                    "wrong",
    "wrong": ": nothing zeroes the generator's gradients before its step: its update is silently wrong",
    "neutral": "",
}


_BACKWARD_CALL = LazyPattern(r"backward\s*\(")


def _backward_functions(text: str) -> dict:
    """{name: {name}} of the module-level functions of a module's text that call a backward (by
    their text), and {class: {method, ...}} of the methods of its classes that do: what a file
    that imports one may call to take a discriminator step there (`d_step(netD, real, fake,
    optD)`, `crit.d_step(...)`; Rule.imported_triggers; gan.GanScope._helper_steps decides)."""
    if "backward" not in text:
        return {}
    found = {name: frozenset({name}) for name, segment in top_level_functions(text)
             if _BACKWARD_CALL.search(segment) is not None}
    if "class " in text:
        for cls, _bases, method, segment in class_methods(text):
            if _BACKWARD_CALL.search(segment) is not None:
                found[cls] = found.get(cls, frozenset()) | {method}
    return found

class DiscriminatorThroughGenerator(Rule):
    code = "TNS301"
    name = "discriminator-step-through-generator"
    message = "{call} back-propagates into the generator{consequence}; use {instead}"
    fix_title = "Detach the generator output at the discriminator call"
    fix_safety = "safe"
    prefilter = ("backward", "update_params")
    domains = ("gan",)
    # A function of a module the file imports that calls a backward (`d_step(netD, real, fake,
    # optD)` in steps.py): a function that calls it may take a discriminator step there.
    imported_triggers = staticmethod(_backward_functions)
    imported_needle = LazyPattern(rb"backward\s*\(")

    @classmethod
    def might_match(cls, text: str) -> bool:
        # A call (`loss.backward(`, `accelerator.backward(`), not "backward compatibility".
        return "update_params" in text or _BACKWARD_CALL.search(text) is not None

    @classmethod
    def scope_test_imported(cls, text: str, names: frozenset):
        test = cls.might_match_scope
        # (A loss object's `__call__` that calls a backward runs under any name, `crit(netD, real,
        # fake)`: a function that steps an optimizer after it may be a discriminator step.)
        return or_holds(test, tuple(".step(" if n == "__call__" else n + "(" for n in sorted(names))) if names \
            else test
    docs = """
## What it does
Checks for a discriminator call on generator output that was not detached, in a discriminator
update.

The call's result flows into a loss that is back-propagated (`.backward()`,
`torch.autograd.backward`, `scaler.scale(loss).backward()`, `accelerator.backward(loss)`,
`self.manual_backward(loss)`, MMEngine's `optim_wrapper.update_params(loss)`), and that
backward is followed by the discriminator optimizer's `step()` with no generator step in
between (or, when the step is elsewhere, the loss or the function is named for the
discriminator: `errD`, `loss_D`, `backward_D`, `train_discriminator`).

Generators and discriminators are recognised by name (`netG`, `G_AB`, `generator`, `gen_model`,
`self.generator`, `model.D`, `critic`, ...), by the optimizer their parameters are handed to
(`optimizerG = Adam(decoder.parameters())` makes `decoder` a generator), and by the
`--generator-names` / `--discriminator-names` options (flake8: `--tensorcopy-generator-names`,
`--tensorcopy-discriminator-names`).  Generator output is followed through aliases, tuple
unpacking, `torch.cat`/`torch.stack`, arithmetic, indexing, helper calls and loops, and into
other methods through `self.<attr>` (`self.fake_B = self.netG(self.real_A)` in `forward`) and
into the file's functions it is passed to (`discriminator_step(real, netG(z))`: reported in
`discriminator_step`, where the fix goes).  A function or method of the file that returns what
a discriminator makes of one of its arguments (`d_loss = d_loss_fn(netD, real, fake)`, where
`d_loss_fn` calls `netD(fake)` or the module it is handed; `self.d_loss(real, fake)`; a method
of a loss object, `crit.d_loss(netD, real, fake)`; a gradient penalty helper) is a discriminator
call where it is called: reported at that call, with the line of the discriminator call
inside.  Functions of other modules of the project count as the file's do: one that returns
what a discriminator makes of its argument (`from losses import d_loss_fn`: `(its
discriminator call, losses.py:9)`), one that returns generator output it makes
(`fake = sample(netG, n)`), and one that takes a whole discriminator step on what it is passed
(`d_step(netD, real, fake, optD)`, which runs `netD(fake)`, back-propagates and steps the
optimizer the call hands it; a method of an instance of one of its classes, `crit.d_step(...)`):
reported at the call, also where the generator's step is such a function too (`g_step(netD,
fake, optG)`, whose step is the generator's optimizer's).  Methods count wherever they are
defined: inherited from a base class of another module (`class MyLoss(BaseGANLoss)`), a loss
object's `__call__` (`crit(netD, real, fake)`), a static or class method (`Losses.d_step(netD,
real, fake)`).  Generator output inside a tuple or list a call passes (`d_loss(netD, (real,
fake))`) is not followed into the helper: which part it hands its discriminator is not known.

Not reported: `netD(fake.detach())`, `fake = netG(z).detach()`, a generator called under
`torch.no_grad()` (or in a `@torch.no_grad()` function), a frozen generator
(`netG.requires_grad_(False)`, `requires_grad(netG, False)`, Lightning's
`toggle_optimizer(opt_d)`), the generator's own step (`errG.backward()` then
`optimizerG.step()`), a backward that steps both optimizers (a joint update such as InfoGAN's
mutual-information loss, which is meant to reach the generator), and a discriminator that only
sees real data.

## Why is this bad?
The discriminator loss back-propagates through the discriminator into the generator.  What
that costs depends on what comes next (tiny `nn.Linear` pair, torch 2.13 CPU):

- the generator step reuses the same `fake` after the discriminator's backward (without
  `retain_graph=True`): the generator's graph was freed, so its backward fails with
  `RuntimeError: Trying to backward through the graph a second time`;
- with `retain_graph=True`, or with a recomputed `fake`, and no `optimizerG.zero_grad()` (or
  `netG.zero_grad()`) between the discriminator's backward and the generator's step: it runs,
  but the generator's gradient is its true gradient plus the gradient of the discriminator's
  loss, a silently wrong update (under AMP the stray part is even multiplied by the loss scale,
  65536 at first, because `scaler.step(optimizerD)` unscales only the discriminator's
  gradients);
- otherwise the result is correct but the discriminator step back-propagates through the
  whole generator for nothing: 2.0x the D-step time with a 256-1024-1024-256 MLP generator
  and a discriminator of the same size (1.5x to 1.9x when re-measured on a shared, busy CPU).

The message names a consequence only where the code shows it for certain: a crash (the
generator's graph was freed by an earlier backward; for a discriminator step in a function or
method of the file, also by what a caller that passes it the generator's output does after the
call: `self.d_step(real, fake)` then the generator's backward through `fake`), or a wrong
generator update (nothing
between the discriminator's backward and the generator's step could zero the generator's
gradients: no `zero_grad()` and no helper call such as `reset_grad()`).  Otherwise it says only
that the discriminator loss reaches the generator: whether that costs time, or a crash when a
later step back-propagates through weights the discriminator's optimizer changed, depends on
code the analysis does not see.

## Example
```python
fake = netG(noise)
errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
errD.backward()
optimizerD.step()
netG.zero_grad()
errG = criterion(netD(fake), ones)
errG.backward()  # RuntimeError: Trying to backward through the graph a second time
optimizerG.step()
```

## Use instead
```python
fake = netG(noise)
errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
errD.backward()
optimizerD.step()
netG.zero_grad()
errG = criterion(netD(fake), ones)
errG.backward()
optimizerG.step()
```

For a gradient penalty that differentiates the discriminator with respect to its input
(WGAN-GP's `torch.autograd.grad(outputs=..., inputs=interpolates)` with interpolates built from
`fake`, WGAN-div's `autograd.grad(fake_validity, fake_imgs)`), a plain `.detach()` at the call
is not enough (the penalty still reaches the generator) and would break the penalty; detach
where the fake is made and keep it differentiable:
`fake = netG(noise).detach().requires_grad_()`.

## Fix safety
Safe: wrapping the generator-derived argument at the discriminator call in `.detach()`
(`netD(torch.cat([fake.detach(), labels], 1))`) changes only what the discriminator step
back-propagates into; the discriminator's gradients are unchanged and the generator step,
which calls the discriminator again, still sees `fake` with its graph.

Unsafe: at a call of a function that returns the discriminator's loss
(`d_loss_fn(real, fake.detach())`), detaching the argument changes all the function does with
it, not only its discriminator call.

Unsafe: when a gradient penalty needs the fake in the graph, the fix rewrites
`fake = netG(z)` as `fake = netG(z).detach().requires_grad_()`; the penalty then differentiates
with respect to a detached copy, and `fake.grad` is filled by the discriminator's backward.
Applied only with `--unsafe-fixes`, and only when the generator step does not use that `fake`.

No fix when the discriminator's output itself is reused in the generator's loss (detaching
would cut the generator's only gradient path: recompute `netD(fake)` for the generator step).

## References
- https://pytorch.org/tutorials/beginner/dcgan_faces_tutorial.html (the discriminator step uses `netD(fake.detach())`)
- https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html
- https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html (`retain_graph`)
- https://pytorch.org/docs/stable/generated/torch.autograd.grad.html
- https://pytorch.org/docs/stable/amp.html#gradient-scaling
"""
    VALID = [
        # The DCGAN tutorial's loop: detach at the discriminator call.
        Valid(_SETUP + dedent("""
            netD.zero_grad()
            fake = netG(noise)
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()
            """), runs=True),
        # Detached where it is made.
        Valid(_SETUP + dedent("""
            fake = netG(noise).detach()
            errD = criterion(netD(fake), zeros)
            errD.backward()
            optimizerD.step()
            """), runs=True),
        # Made under no_grad.
        Valid(_SETUP + dedent("""
            with torch.no_grad():
                fake = netG(noise)
            errD = criterion(netD(fake), zeros)
            errD.backward()
            optimizerD.step()
            """), runs=True),
        # Made by a helper that runs under no_grad.
        Valid(_SETUP + dedent("""


            @torch.no_grad()
            def sample(n):
                return netG(torch.randn(n, 4))


            def d_step():
                optimizerD.zero_grad()
                fake = sample(2)
                errD = criterion(netD(fake), zeros)
                errD.backward()
                optimizerD.step()


            d_step()
            """), runs=True),
        # The generator's own step.
        Valid(_SETUP + dedent("""
            optimizerG.zero_grad()
            fake = netG(noise)
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()
            """), runs=True),
        # Real data only.
        Valid(_SETUP + dedent("""
            errD = criterion(netD(real), ones)
            errD.backward()
            optimizerD.step()
            """), runs=True),
        # A frozen generator (stylegan2's requires_grad(generator, False)).
        Valid(_SETUP + dedent("""
            netG.requires_grad_(False)
            fake = netG(noise)
            errD = criterion(netD(fake), zeros)
            errD.backward()
            optimizerD.step()
            netG.requires_grad_(True)
            """), runs=True),
        Valid(_SETUP + dedent("""
            for p in netG.parameters():
                p.requires_grad = False
            fake = netG(noise)
            errD = criterion(netD(fake), zeros)
            errD.backward()
            optimizerD.step()
            """), runs=True),
        # A joint update (InfoGAN's mutual-information loss trains both on purpose).
        Valid(_SETUP + dedent("""
            optimizerD.zero_grad()
            optimizerG.zero_grad()
            fake = netG(noise)
            info_loss = netD(fake).pow(2).mean()
            info_loss.backward()
            optimizerD.step()
            optimizerG.step()
            """), runs=True),
        # The discriminator looks at the fake without grad (monitoring).
        Valid(_SETUP + dedent("""
            fake = netG(noise)
            with torch.no_grad():
                d_score = netD(fake).mean()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()
            """), runs=True),
        # Lightning's automatic optimization: the loss is returned, Lightning does the backward.
        Valid(dedent("""
            import torch
            import torch.nn.functional as F


            class GAN:
                def training_step(self, batch, batch_idx, optimizer_idx):
                    z = torch.randn(2, 4)
                    if optimizer_idx == 1:
                        fake = self.generator(z)
                        return F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.zeros(2, 1))
                    return self.backward_hint
            """)),
        # A discriminator that detaches its input itself (lightweight-gan's D_aug).
        Valid(dedent("""
            import torch


            def d_step(G, D_aug, D_opt, latents):
                fake = G(latents)
                loss = D_aug(fake, detach=True).mean()
                loss.backward()
                D_opt.step()
            """)),
    ]
    _TRAINER = """import torch
from torch import nn


class GANTrainer:
    def __init__(self, netG, netD):
        self.netG = netG
        self.netD = netD
        self.opt_g = torch.optim.Adam(netG.parameters(), lr=2e-4)
        self.opt_d = torch.optim.Adam(netD.parameters(), lr=2e-4)
        self.bce = nn.BCEWithLogitsLoss()

    def d_step(self, real, fake):
        self.opt_d.zero_grad()
        ones = torch.ones(real.size(0), 1)
        zeros = torch.zeros(real.size(0), 1)
        loss = self.bce(self.netD(real), ones) + self.bce(self.netD({fake}), zeros)
        loss.backward()
        self.opt_d.step()

    def train_step(self, real, z):
        fake = self.netG(z)
        self.d_step(real, fake)
        self.opt_g.zero_grad()
        g_loss = self.bce(self.netD(fake), torch.ones(real.size(0), 1))
        g_loss.backward()
        self.opt_g.step()


trainer = GANTrainer(nn.Linear(8, 4), nn.Linear(4, 1))
trainer.train_step(torch.randn(16, 4), torch.randn(16, 8))
"""

    INVALID = [
        Invalid(
            # The discriminator step in a method of a class, given the generator's output: its
            # backward frees the generator's graph, and the generator step after the call fails.
            _TRAINER.replace("{fake}", "fake"),
            line=17,
            col=58,
            fixed=_TRAINER.replace("{fake}", "fake.detach()"),
            oracle=Oracle(raises=_CRASH),
        ),
        Invalid(
            # A helper clears every gradient before the generator's step: the update is right,
            # the discriminator step only back-propagated through the generator for nothing.
            # The message says no more than that the loss reaches the generator.
            _SETUP + dedent(f"""


                def reset_grad():
                    netG.zero_grad()
                    netD.zero_grad()


                fake = netG(noise)
                errD = criterion(netD(fake), zeros)
                errD.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                reset_grad()
                g_grad_before_g = {_G_GRAD}
                errG = criterion(netD(netG(noise)), ones)
                errG.backward()
                optimizerG.step()
                """),
            line=21,
            col=17,
            fixed=_SETUP + dedent(f"""


                def reset_grad():
                    netG.zero_grad()
                    netD.zero_grad()


                fake = netG(noise)
                errD = criterion(netD(fake.detach()), zeros)
                errD.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                reset_grad()
                g_grad_before_g = {_G_GRAD}
                errG = criterion(netD(netG(noise)), ones)
                errG.backward()
                optimizerG.step()
                """),
            oracle=Oracle(check_bad="g_grad_after_d > 0 and g_grad_before_g == 0",
                          check_fixed="g_grad_after_d == 0 and g_grad_before_g == 0",
                          same=("g_grad_before_g",)),
        ),
        # DCGAN: the fake is reused by the generator step after the discriminator's backward.
        Invalid(
            _SETUP + dedent(f"""
                netD.zero_grad()
                fake = netG(noise)
                errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
                errD.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                netG.zero_grad()
                errG = criterion(netD(fake), ones)
                errG.backward()
                optimizerG.step()
                """),
            line=15,
            col=47,
            fixed=_SETUP + dedent(f"""
                netD.zero_grad()
                fake = netG(noise)
                errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
                errD.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                netG.zero_grad()
                errG = criterion(netD(fake), ones)
                errG.backward()
                optimizerG.step()
                """),
            oracle=Oracle(raises=_CRASH, check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # generator/discriminator naming, retain_graph and no zero_grad before the generator step.
        Invalid(
            dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Linear(3, 1)
                adversarial_loss = nn.BCEWithLogitsLoss()
                optimizer_G = torch.optim.Adam(generator.parameters())
                optimizer_D = torch.optim.Adam(discriminator.parameters())
                real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)
                valid, fake = torch.ones(2, 1), torch.zeros(2, 1)

                optimizer_G.zero_grad()
                optimizer_D.zero_grad()
                gen_imgs = generator(z)
                real_loss = adversarial_loss(discriminator(real_imgs), valid)
                fake_loss = adversarial_loss(discriminator(gen_imgs), fake)
                d_loss = (real_loss + fake_loss) / 2
                d_loss.backward(retain_graph=True)
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                g_loss = adversarial_loss(discriminator(gen_imgs), valid)
                g_loss.backward()
                optimizer_G.step()
                """),
            line=17,
            col=29,
            fixed=dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Linear(3, 1)
                adversarial_loss = nn.BCEWithLogitsLoss()
                optimizer_G = torch.optim.Adam(generator.parameters())
                optimizer_D = torch.optim.Adam(discriminator.parameters())
                real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)
                valid, fake = torch.ones(2, 1), torch.zeros(2, 1)

                optimizer_G.zero_grad()
                optimizer_D.zero_grad()
                gen_imgs = generator(z)
                real_loss = adversarial_loss(discriminator(real_imgs), valid)
                fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
                d_loss = (real_loss + fake_loss) / 2
                d_loss.backward(retain_graph=True)
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                g_loss = adversarial_loss(discriminator(gen_imgs), valid)
                g_loss.backward()
                optimizer_G.step()
                """),
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # CycleGAN: the generator step runs first, then D_B sees fake_B whose graph is freed.
        Invalid(
            dedent("""
                import itertools

                import torch
                from torch import nn

                torch.manual_seed(0)
                G_AB, G_BA = nn.Linear(3, 3), nn.Linear(3, 3)
                D_B = nn.Linear(3, 1)
                criterion_GAN = nn.MSELoss()
                optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()))
                optimizer_D_B = torch.optim.Adam(D_B.parameters())
                real_A, real_B = torch.randn(2, 3), torch.randn(2, 3)
                valid, fake = torch.ones(2, 1), torch.zeros(2, 1)

                optimizer_G.zero_grad()
                fake_B = G_AB(real_A)
                loss_GAN_AB = criterion_GAN(D_B(fake_B), valid)
                loss_GAN_AB.backward()
                optimizer_G.step()

                optimizer_D_B.zero_grad()
                loss_real = criterion_GAN(D_B(real_B), valid)
                loss_fake = criterion_GAN(D_B(fake_B), fake)
                loss_D_B = (loss_real + loss_fake) / 2
                loss_D_B.backward()
                optimizer_D_B.step()
                """),
            line=23,
            col=26,
            fixed=dedent("""
                import itertools

                import torch
                from torch import nn

                torch.manual_seed(0)
                G_AB, G_BA = nn.Linear(3, 3), nn.Linear(3, 3)
                D_B = nn.Linear(3, 1)
                criterion_GAN = nn.MSELoss()
                optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()))
                optimizer_D_B = torch.optim.Adam(D_B.parameters())
                real_A, real_B = torch.randn(2, 3), torch.randn(2, 3)
                valid, fake = torch.ones(2, 1), torch.zeros(2, 1)

                optimizer_G.zero_grad()
                fake_B = G_AB(real_A)
                loss_GAN_AB = criterion_GAN(D_B(fake_B), valid)
                loss_GAN_AB.backward()
                optimizer_G.step()

                optimizer_D_B.zero_grad()
                loss_real = criterion_GAN(D_B(real_B), valid)
                loss_fake = criterion_GAN(D_B(fake_B.detach()), fake)
                loss_D_B = (loss_real + loss_fake) / 2
                loss_D_B.backward()
                optimizer_D_B.step()
                """),
            oracle=Oracle(raises=_CRASH, check_fixed="D_B.weight.grad is not None and G_AB.weight.grad is not None"),
        ),
        # Conditional GAN: the labels are concatenated to the fake.
        Invalid(
            dedent(f"""
                import torch
                from torch import nn

                torch.manual_seed(0)
                netG = nn.Linear(6, 3)
                netD = nn.Linear(5, 1)
                criterion = nn.BCEWithLogitsLoss()
                optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
                noise, labels = torch.randn(2, 4), torch.eye(2)

                fake = netG(torch.cat([noise, labels], 1))
                output = netD(torch.cat([fake, labels], 1))
                errD_fake = criterion(output, torch.zeros(2, 1))
                errD_fake.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                """),
            line=12,
            col=9,
            fixed=dedent(f"""
                import torch
                from torch import nn

                torch.manual_seed(0)
                netG = nn.Linear(6, 3)
                netD = nn.Linear(5, 1)
                criterion = nn.BCEWithLogitsLoss()
                optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
                noise, labels = torch.randn(2, 4), torch.eye(2)

                fake = netG(torch.cat([noise, labels], 1))
                output = netD(torch.cat([fake.detach(), labels], 1))
                errD_fake = criterion(output, torch.zeros(2, 1))
                errD_fake.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                """),
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # WGAN with weight clipping; the generator step recomputes its fake.
        Invalid(
            dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Linear(3, 1)
                optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
                optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=5e-5)
                real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)

                optimizer_D.zero_grad()
                fake_imgs = generator(z)
                loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
                loss_D.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                for p in discriminator.parameters():
                    p.data.clamp_(-0.01, 0.01)
                optimizer_G.zero_grad()
                gen_imgs = generator(z)
                loss_G = -torch.mean(discriminator(gen_imgs))
                loss_G.backward()
                optimizer_G.step()
                """),
            line=13,
            col=60,
            fixed=dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Linear(3, 1)
                optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=5e-5)
                optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=5e-5)
                real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)

                optimizer_D.zero_grad()
                fake_imgs = generator(z)
                loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs.detach()))
                loss_D.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                for p in discriminator.parameters():
                    p.data.clamp_(-0.01, 0.01)
                optimizer_G.zero_grad()
                gen_imgs = generator(z)
                loss_G = -torch.mean(discriminator(gen_imgs))
                loss_G.backward()
                optimizer_G.step()
                """),
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # WGAN-GP with the penalty's interpolates built from the fake: unsafe fix where it is made.
        Invalid(
            dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
                optimizer_D = torch.optim.Adam(discriminator.parameters())
                real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)

                optimizer_D.zero_grad()
                fake_imgs = generator(z)
                alpha = torch.rand(2, 1)
                interpolates = alpha * real_imgs + (1 - alpha) * fake_imgs
                d_interpolates = discriminator(interpolates)
                gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,
                                                grad_outputs=torch.ones_like(d_interpolates), create_graph=True)[0]
                gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
                d_loss = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs)) + 10 * gradient_penalty
                d_loss.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                """),
            line=18,
            col=60,
            fixed=dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
                optimizer_D = torch.optim.Adam(discriminator.parameters())
                real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)

                optimizer_D.zero_grad()
                fake_imgs = generator(z).detach().requires_grad_()
                alpha = torch.rand(2, 1)
                interpolates = alpha * real_imgs + (1 - alpha) * fake_imgs
                d_interpolates = discriminator(interpolates)
                gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,
                                                grad_outputs=torch.ones_like(d_interpolates), create_graph=True)[0]
                gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
                d_loss = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs)) + 10 * gradient_penalty
                d_loss.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                """),
            unsafe=True,
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # WGAN-div: the penalty differentiates with respect to the fake itself.
        Invalid(
            dedent("""
                import torch
                from torch import autograd, nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
                optimizer_D = torch.optim.Adam(discriminator.parameters())
                z = torch.randn(2, 4)

                optimizer_D.zero_grad()
                fake_imgs = generator(z)
                fake_validity = discriminator(fake_imgs)
                fake_grad = autograd.grad(fake_validity, fake_imgs, torch.ones_like(fake_validity), create_graph=True)[0]
                d_loss = torch.mean(fake_validity) + fake_grad.pow(2).sum(1).mean()
                d_loss.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                """),
            line=12,
            col=16,
            fixed=dedent("""
                import torch
                from torch import autograd, nn

                torch.manual_seed(0)
                generator = nn.Linear(4, 3)
                discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
                optimizer_D = torch.optim.Adam(discriminator.parameters())
                z = torch.randn(2, 4)

                optimizer_D.zero_grad()
                fake_imgs = generator(z).detach().requires_grad_()
                fake_validity = discriminator(fake_imgs)
                fake_grad = autograd.grad(fake_validity, fake_imgs, torch.ones_like(fake_validity), create_graph=True)[0]
                d_loss = torch.mean(fake_validity) + fake_grad.pow(2).sum(1).mean()
                d_loss.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)
                optimizer_D.step()
                """),
            unsafe=True,
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # AMP: scaler.scale(errD).backward() and scaler.step(optimizerD).
        Invalid(
            _SETUP + dedent(f"""
                scaler = torch.amp.GradScaler("cpu")

                fake = netG(noise)
                errD = criterion(netD(fake), zeros)
                scaler.scale(errD).backward()
                g_grad_after_d = {_G_GRAD}
                scaler.step(optimizerD)
                scaler.update()
                """),
            line=16,
            col=17,
            fixed=_SETUP + dedent(f"""
                scaler = torch.amp.GradScaler("cpu")

                fake = netG(noise)
                errD = criterion(netD(fake.detach()), zeros)
                scaler.scale(errD).backward()
                g_grad_after_d = {_G_GRAD}
                scaler.step(optimizerD)
                scaler.update()
                """),
            oracle=Oracle(check_bad="g_grad_after_d > 1000", check_fixed="g_grad_after_d == 0"),
        ),
        # A training loop on `model.G` / `model.D` that makes the fake once per batch, unpacks
        # it, and reuses it in both steps.
        Invalid(
            dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                model = nn.Module()
                model.G, model.D = nn.Linear(4, 6), nn.Linear(3, 1)
                opt_g = torch.optim.Adam(model.G.parameters())
                opt_d = torch.optim.Adam(model.D.parameters())
                loader = [(torch.randn(2, 3), torch.randn(2, 4))]

                for real, z in loader:
                    fake_a, fake_b = model.G(z).chunk(2, dim=1)
                    fake = fake_a + fake_b
                    opt_d.zero_grad()
                    d_loss = model.D(fake).mean() - model.D(real).mean()
                    d_loss.backward()
                    opt_d.step()
                    opt_g.zero_grad()
                    g_loss = -model.D(fake).mean()
                    g_loss.backward()
                    opt_g.step()
                """),
            line=15,
            col=13,
            fixed=dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                model = nn.Module()
                model.G, model.D = nn.Linear(4, 6), nn.Linear(3, 1)
                opt_g = torch.optim.Adam(model.G.parameters())
                opt_d = torch.optim.Adam(model.D.parameters())
                loader = [(torch.randn(2, 3), torch.randn(2, 4))]

                for real, z in loader:
                    fake_a, fake_b = model.G(z).chunk(2, dim=1)
                    fake = fake_a + fake_b
                    opt_d.zero_grad()
                    d_loss = model.D(fake.detach()).mean() - model.D(real).mean()
                    d_loss.backward()
                    opt_d.step()
                    opt_g.zero_grad()
                    g_loss = -model.D(fake).mean()
                    g_loss.backward()
                    opt_g.step()
                """),
            oracle=Oracle(raises=_CRASH),
        ),
        # Names from configuration: a `decoder` generator and a `scorer` discriminator.
        Invalid(
            dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                decoder, scorer = nn.Linear(4, 3), nn.Linear(3, 1)
                opt = torch.optim.SGD(scorer.parameters(), lr=0.1)


                def scorer_step(z):
                    opt.zero_grad()
                    sample = decoder(z)
                    loss = scorer(sample).mean()
                    loss.backward()
                    opt.step()


                scorer_step(torch.randn(2, 4))
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)
                """),
            line=12,
            col=11,
            fixed=dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                decoder, scorer = nn.Linear(4, 3), nn.Linear(3, 1)
                opt = torch.optim.SGD(scorer.parameters(), lr=0.1)


                def scorer_step(z):
                    opt.zero_grad()
                    sample = decoder(z)
                    loss = scorer(sample.detach()).mean()
                    loss.backward()
                    opt.step()


                scorer_step(torch.randn(2, 4))
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)
                """),
            options={"generator_names": ("decoder",), "discriminator_names": ("scorer",)},
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # Roles from the optimizers: `optimizer_G` trains `decoder`, `optimizer_D` trains `critic_net`.
        Invalid(
            dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                decoder, critic_net = nn.Linear(4, 3), nn.Linear(3, 1)
                optimizer_G = torch.optim.Adam(decoder.parameters())
                optimizer_D = torch.optim.Adam(critic_net.parameters())
                z = torch.randn(2, 4)

                sample = decoder(z)
                loss = critic_net(sample).mean()
                loss.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)
                optimizer_D.step()
                """),
            line=11,
            col=7,
            fixed=dedent("""
                import torch
                from torch import nn

                torch.manual_seed(0)
                decoder, critic_net = nn.Linear(4, 3), nn.Linear(3, 1)
                optimizer_G = torch.optim.Adam(decoder.parameters())
                optimizer_D = torch.optim.Adam(critic_net.parameters())
                z = torch.randn(2, 4)

                sample = decoder(z)
                loss = critic_net(sample.detach()).mean()
                loss.backward()
                g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)
                optimizer_D.step()
                """),
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # The discriminator's output is also the generator's loss input: no automatic fix.
        Invalid(
            _SETUP + dedent(f"""
                optimizerG.zero_grad()
                fake = netG(noise)
                d_fake = netD(fake)
                errG = criterion(d_fake, ones)
                errG.backward(retain_graph=True)
                optimizerG.step()
                g_grad_before_d = {_G_GRAD}
                optimizerD.zero_grad()
                errD = criterion(d_fake, zeros)
                errD.backward()
                g_grad_after_d = {_G_GRAD}
                optimizerD.step()
                """),
            line=15,
            col=9,
            fixed=None,
            oracle=Oracle(check_bad="g_grad_after_d != g_grad_before_d"),
        ),
    ]

    def leave_scope(self, scope, ctx) -> None:
        gan = ctx.domain("gan")
        if gan is None:
            return
        for finding in gan.findings:
            self._report(finding, ctx)

    # ------------------------------------------------------------------ reporting

    def _report(self, finding, ctx) -> None:
        dc = finding.dcall
        node = dc.node
        call = ctx.short(node)
        if call == "<expr>":
            call = f"{ctx.short(node.func, 30)}(...)"
        if dc.via is not None:
            # A function of the file that returns what the discriminator makes of an argument
            # (of another module: where, "losses.py:12").
            where = dc.via[1]
            call = f"{call} (its discriminator call, {'line ' if isinstance(where, int) else ''}{where})"
        fix = None
        if finding.fix == "call":
            edits = []
            for target in dc.targets:
                edits.append(replace_node(ctx, target, receiver_text(ctx, target) + ".detach()"))
            if edits:
                # Detaching an argument of a function changes all it does with it, not only its
                # discriminator call.
                fix = Fix(self.fix_title, "safe" if dc.via is None else "unsafe", tuple(edits))
            instead = self._instead_at_call(ctx, dc, edits)
        elif finding.fix == "binding":
            edits = [replace_node(ctx, s.node, ctx.text(s.node) + ".detach().requires_grad_()")
                     for s in finding.bindings]
            fix = Fix("Detach the generator output where it is made and keep it differentiable for the "
                      "gradient penalty", "unsafe", tuple(edits))
            s = finding.bindings[0]
            target = ctx.short(s.binding.targets[0], 20)
            made = ctx.short(s.node, 30)
            made = f"{target} = {made}" if made != "<expr>" else f"{target} = ..."
            instead = f"{made}.detach().requires_grad_()"
        elif finding.fix == "none_reuse":
            atom = _first_text(ctx, dc)
            instead = (f"{atom}.detach() for the discriminator loss and a new discriminator call on "
                       f"{atom} for the generator loss")
        else:
            atom = _first_text(ctx, dc)
            instead = f"{atom}.detach().requires_grad_() for the discriminator step"
        ctx.report(self, node, fix, call=call, consequence=_CONSEQUENCES[finding.consequence], instead=instead)

    @staticmethod
    def _instead_at_call(ctx, dc, edits) -> str:
        start, end = ctx.span(dc.node)
        fixed = splice(ctx.lines.text, sorted((e.start, e.end, e.text) for e in edits), start, end)
        if len(fixed) <= 60 and "\n" not in fixed:
            return fixed
        return f"{_first_text(ctx, dc)}.detach() in the discriminator's input"


def _first_text(ctx, dc) -> str:
    return ctx.short(dc.targets[0], 30) if dc.targets else "fake"
