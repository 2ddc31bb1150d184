"""TNS3xx: GAN training steps."""

from __future__ import annotations

import re

from ..fixes import receiver_text, replace_node
from ..model import Fix
from ..source import splice
from .base import Invalid, Oracle, Rule, Valid

# Shared by the examples: one tiny generator/discriminator pair, one step each.
_SETUP = "import torch\nfrom torch import nn\n" + """
torch.manual_seed(0)
netG = nn.Linear(4, 3)
netD = nn.Linear(3, 1)
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
optimizerG = torch.optim.SGD(netG.parameters(), lr=0.1)
real = torch.randn(2, 3)
noise = torch.randn(2, 4)
ones, zeros = torch.ones(2, 1), torch.zeros(2, 1)
"""
_G_GRAD = "sum(p.grad.abs().sum().item() for p in netG.parameters() if p.grad is not None)"
_CRASH = ("RuntimeError", "Trying to backward through the graph a second time")

# What the message says follows: only what the code shows for certain (a crash, a wrong update
# with nothing in between that could clear the gradients); otherwise nothing more than the fact.
_CONSEQUENCES = {
    "crash_later": ': the generator step that reuses this output then fails with "Trying to backward through '
                   'the graph a second time"',
    "crash_here": ': this backward fails with "Trying to backward through the graph a second time"',
    "crash_loop": ': the second iteration fails with "Trying to backward through the graph a second time"',
    "wrong_retain": ": retain_graph keeps the graph and nothing zeroes the generator's gradients before its "
                    "step, so its update is silently wrong",
    "wrong": ": nothing zeroes the generator's gradients before its step, so its update is silently wrong",
    "neutral": "",
}


_BACKWARD_CALL = re.compile(r"backward\s*\(")

class DiscriminatorThroughGenerator(Rule):
    code = "TNS301"
    name = "discriminator-step-through-generator"
    message = "{call} back-propagates the discriminator loss into the generator{consequence}; use {instead}"
    fix_title = "Detach the generator output at the discriminator call"
    fix_safety = "safe"
    prefilter = ("backward", "update_params")
    domains = ("gan",)

    @classmethod
    def might_match(cls, text: str) -> bool:
        # A call (`loss.backward(`, `accelerator.backward(`), not "backward compatibility".
        return "update_params" in text or "backward" in text and _BACKWARD_CALL.search(text) is not None
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
other methods through `self.<attr>` (`self.fake_B = self.netG(self.real_A)` in `forward`).

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
generator's graph was freed by an earlier backward), or a wrong generator update (nothing
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
        Valid(_SETUP + "netD.zero_grad()\nfake = netG(noise)\n"
              "errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)\n"
              "errD.backward()\noptimizerD.step()\nnetG.zero_grad()\n"
              "errG = criterion(netD(fake), ones)\nerrG.backward()\noptimizerG.step()\n", runs=True),
        # Detached where it is made.
        Valid(_SETUP + "fake = netG(noise).detach()\nerrD = criterion(netD(fake), zeros)\n"
              "errD.backward()\noptimizerD.step()\n", runs=True),
        # Made under no_grad.
        Valid(_SETUP + "with torch.no_grad():\n    fake = netG(noise)\nerrD = criterion(netD(fake), zeros)\n"
              "errD.backward()\noptimizerD.step()\n", runs=True),
        # Made by a helper that runs under no_grad.
        Valid(_SETUP + "\n\n@torch.no_grad()\ndef sample(n):\n    return netG(torch.randn(n, 4))\n\n\n"
              "def d_step():\n    optimizerD.zero_grad()\n    fake = sample(2)\n"
              "    errD = criterion(netD(fake), zeros)\n    errD.backward()\n    optimizerD.step()\n\n\n"
              "d_step()\n", runs=True),
        # The generator's own step.
        Valid(_SETUP + "optimizerG.zero_grad()\nfake = netG(noise)\nerrG = criterion(netD(fake), ones)\n"
              "errG.backward()\noptimizerG.step()\n", runs=True),
        # Real data only.
        Valid(_SETUP + "errD = criterion(netD(real), ones)\nerrD.backward()\noptimizerD.step()\n", runs=True),
        # A frozen generator (stylegan2's requires_grad(generator, False)).
        Valid(_SETUP + "netG.requires_grad_(False)\nfake = netG(noise)\nerrD = criterion(netD(fake), zeros)\n"
              "errD.backward()\noptimizerD.step()\nnetG.requires_grad_(True)\n", runs=True),
        Valid(_SETUP + "for p in netG.parameters():\n    p.requires_grad = False\nfake = netG(noise)\n"
              "errD = criterion(netD(fake), zeros)\nerrD.backward()\noptimizerD.step()\n", runs=True),
        # A joint update (InfoGAN's mutual-information loss trains both on purpose).
        Valid(_SETUP + "optimizerD.zero_grad()\noptimizerG.zero_grad()\nfake = netG(noise)\n"
              "info_loss = netD(fake).pow(2).mean()\ninfo_loss.backward()\noptimizerD.step()\n"
              "optimizerG.step()\n", runs=True),
        # The discriminator looks at the fake without grad (monitoring).
        Valid(_SETUP + "fake = netG(noise)\nwith torch.no_grad():\n    d_score = netD(fake).mean()\n"
              "errG = criterion(netD(fake), ones)\nerrG.backward()\noptimizerG.step()\n", runs=True),
        # Lightning's automatic optimization: the loss is returned, Lightning does the backward.
        Valid("import torch\nimport torch.nn.functional as F\n\n\nclass GAN:\n"
              "    def training_step(self, batch, batch_idx, optimizer_idx):\n"
              "        z = torch.randn(2, 4)\n        if optimizer_idx == 1:\n"
              "            fake = self.generator(z)\n"
              "            return F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.zeros(2, 1))\n"
              "        return self.backward_hint\n"),
        # A discriminator that detaches its input itself (lightweight-gan's D_aug).
        Valid("import torch\n\n\ndef d_step(G, D_aug, D_opt, latents):\n    fake = G(latents)\n"
              "    loss = D_aug(fake, detach=True).mean()\n    loss.backward()\n    D_opt.step()\n"),
    ]
    INVALID = [
        Invalid(
            # A helper clears every gradient before the generator's step: the update is right,
            # the discriminator step only back-propagated through the generator for nothing.
            # The message says no more than that the loss reaches the generator.
            _SETUP + "\n\ndef reset_grad():\n    netG.zero_grad()\n    netD.zero_grad()\n\n\n"
            "fake = netG(noise)\nerrD = criterion(netD(fake), zeros)\nerrD.backward()\n"
            f"g_grad_after_d = {_G_GRAD}\noptimizerD.step()\nreset_grad()\n"
            f"g_grad_before_g = {_G_GRAD}\nerrG = criterion(netD(netG(noise)), ones)\nerrG.backward()\n"
            "optimizerG.step()\n",
            line=21,
            col=17,
            fixed=_SETUP + "\n\ndef reset_grad():\n    netG.zero_grad()\n    netD.zero_grad()\n\n\n"
            "fake = netG(noise)\nerrD = criterion(netD(fake.detach()), zeros)\nerrD.backward()\n"
            f"g_grad_after_d = {_G_GRAD}\noptimizerD.step()\nreset_grad()\n"
            f"g_grad_before_g = {_G_GRAD}\nerrG = criterion(netD(netG(noise)), ones)\nerrG.backward()\n"
            "optimizerG.step()\n",
            oracle=Oracle(check_bad="g_grad_after_d > 0 and g_grad_before_g == 0",
                          check_fixed="g_grad_after_d == 0 and g_grad_before_g == 0",
                          same=("g_grad_before_g",)),
        ),
        # DCGAN: the fake is reused by the generator step after the discriminator's backward.
        Invalid(
            _SETUP + "netD.zero_grad()\nfake = netG(noise)\n"
            "errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)\nerrD.backward()\n"
            f"g_grad_after_d = {_G_GRAD}\noptimizerD.step()\nnetG.zero_grad()\n"
            "errG = criterion(netD(fake), ones)\nerrG.backward()\noptimizerG.step()\n",
            line=15,
            col=47,
            fixed=_SETUP + "netD.zero_grad()\nfake = netG(noise)\n"
            "errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)\nerrD.backward()\n"
            f"g_grad_after_d = {_G_GRAD}\noptimizerD.step()\nnetG.zero_grad()\n"
            "errG = criterion(netD(fake), ones)\nerrG.backward()\noptimizerG.step()\n",
            oracle=Oracle(raises=_CRASH, check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # generator/discriminator naming, retain_graph and no zero_grad before the generator step.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Linear(3, 1)\nadversarial_loss = nn.BCEWithLogitsLoss()\n"
            "optimizer_G = torch.optim.Adam(generator.parameters())\n"
            "optimizer_D = torch.optim.Adam(discriminator.parameters())\n"
            "real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)\nvalid, fake = torch.ones(2, 1), torch.zeros(2, 1)\n"
            "\noptimizer_G.zero_grad()\noptimizer_D.zero_grad()\ngen_imgs = generator(z)\n"
            "real_loss = adversarial_loss(discriminator(real_imgs), valid)\n"
            "fake_loss = adversarial_loss(discriminator(gen_imgs), fake)\n"
            "d_loss = (real_loss + fake_loss) / 2\nd_loss.backward(retain_graph=True)\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\ng_loss = adversarial_loss(discriminator(gen_imgs), valid)\n"
            "g_loss.backward()\noptimizer_G.step()\n",
            line=17,
            col=29,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Linear(3, 1)\nadversarial_loss = nn.BCEWithLogitsLoss()\n"
            "optimizer_G = torch.optim.Adam(generator.parameters())\n"
            "optimizer_D = torch.optim.Adam(discriminator.parameters())\n"
            "real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)\nvalid, fake = torch.ones(2, 1), torch.zeros(2, 1)\n"
            "\noptimizer_G.zero_grad()\noptimizer_D.zero_grad()\ngen_imgs = generator(z)\n"
            "real_loss = adversarial_loss(discriminator(real_imgs), valid)\n"
            "fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)\n"
            "d_loss = (real_loss + fake_loss) / 2\nd_loss.backward(retain_graph=True)\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\ng_loss = adversarial_loss(discriminator(gen_imgs), valid)\n"
            "g_loss.backward()\noptimizer_G.step()\n",
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # CycleGAN: the generator step runs first, then D_B sees fake_B whose graph is freed.
        Invalid(
            "import itertools\n\nimport torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n"
            "G_AB, G_BA = nn.Linear(3, 3), nn.Linear(3, 3)\nD_B = nn.Linear(3, 1)\ncriterion_GAN = nn.MSELoss()\n"
            "optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()))\n"
            "optimizer_D_B = torch.optim.Adam(D_B.parameters())\n"
            "real_A, real_B = torch.randn(2, 3), torch.randn(2, 3)\nvalid, fake = torch.ones(2, 1), torch.zeros(2, 1)\n"
            "\noptimizer_G.zero_grad()\nfake_B = G_AB(real_A)\nloss_GAN_AB = criterion_GAN(D_B(fake_B), valid)\n"
            "loss_GAN_AB.backward()\noptimizer_G.step()\n\noptimizer_D_B.zero_grad()\n"
            "loss_real = criterion_GAN(D_B(real_B), valid)\nloss_fake = criterion_GAN(D_B(fake_B), fake)\n"
            "loss_D_B = (loss_real + loss_fake) / 2\nloss_D_B.backward()\noptimizer_D_B.step()\n",
            line=23,
            col=26,
            fixed="import itertools\n\nimport torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n"
            "G_AB, G_BA = nn.Linear(3, 3), nn.Linear(3, 3)\nD_B = nn.Linear(3, 1)\ncriterion_GAN = nn.MSELoss()\n"
            "optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()))\n"
            "optimizer_D_B = torch.optim.Adam(D_B.parameters())\n"
            "real_A, real_B = torch.randn(2, 3), torch.randn(2, 3)\nvalid, fake = torch.ones(2, 1), torch.zeros(2, 1)\n"
            "\noptimizer_G.zero_grad()\nfake_B = G_AB(real_A)\nloss_GAN_AB = criterion_GAN(D_B(fake_B), valid)\n"
            "loss_GAN_AB.backward()\noptimizer_G.step()\n\noptimizer_D_B.zero_grad()\n"
            "loss_real = criterion_GAN(D_B(real_B), valid)\nloss_fake = criterion_GAN(D_B(fake_B.detach()), fake)\n"
            "loss_D_B = (loss_real + loss_fake) / 2\nloss_D_B.backward()\noptimizer_D_B.step()\n",
            oracle=Oracle(raises=_CRASH, check_fixed="D_B.weight.grad is not None and G_AB.weight.grad is not None"),
        ),
        # Conditional GAN: the labels are concatenated to the fake.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nnetG = nn.Linear(6, 3)\n"
            "netD = nn.Linear(5, 1)\n"
            "criterion = nn.BCEWithLogitsLoss()\noptimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)\n"
            "noise, labels = torch.randn(2, 4), torch.eye(2)\n\n"
            "fake = netG(torch.cat([noise, labels], 1))\noutput = netD(torch.cat([fake, labels], 1))\n"
            "errD_fake = criterion(output, torch.zeros(2, 1))\nerrD_fake.backward()\n"
            f"g_grad_after_d = {_G_GRAD}\noptimizerD.step()\n",
            line=12,
            col=9,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nnetG = nn.Linear(6, 3)\n"
                  "netD = nn.Linear(5, 1)\n"
            "criterion = nn.BCEWithLogitsLoss()\noptimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)\n"
            "noise, labels = torch.randn(2, 4), torch.eye(2)\n\n"
            "fake = netG(torch.cat([noise, labels], 1))\noutput = netD(torch.cat([fake.detach(), labels], 1))\n"
            "errD_fake = criterion(output, torch.zeros(2, 1))\nerrD_fake.backward()\n"
            f"g_grad_after_d = {_G_GRAD}\noptimizerD.step()\n",
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # WGAN with weight clipping; the generator step recomputes its fake.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Linear(3, 1)\noptimizer_G = torch.optim.RMSprop(generator.parameters(), lr=5e-5)\n"
            "optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=5e-5)\n"
            "real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)\n\n"
            "optimizer_D.zero_grad()\nfake_imgs = generator(z)\n"
            "loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))\n"
            "loss_D.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\nfor p in discriminator.parameters():\n    p.data.clamp_(-0.01, 0.01)\n"
            "optimizer_G.zero_grad()\ngen_imgs = generator(z)\nloss_G = -torch.mean(discriminator(gen_imgs))\n"
            "loss_G.backward()\noptimizer_G.step()\n",
            line=13,
            col=60,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Linear(3, 1)\noptimizer_G = torch.optim.RMSprop(generator.parameters(), lr=5e-5)\n"
            "optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=5e-5)\n"
            "real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)\n\n"
            "optimizer_D.zero_grad()\nfake_imgs = generator(z)\n"
            "loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs.detach()))\n"
            "loss_D.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\nfor p in discriminator.parameters():\n    p.data.clamp_(-0.01, 0.01)\n"
            "optimizer_G.zero_grad()\ngen_imgs = generator(z)\nloss_G = -torch.mean(discriminator(gen_imgs))\n"
            "loss_G.backward()\noptimizer_G.step()\n",
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # WGAN-GP with the penalty's interpolates built from the fake: unsafe fix where it is made.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
            "optimizer_D = torch.optim.Adam(discriminator.parameters())\n"
            "real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)\n\n"
            "optimizer_D.zero_grad()\nfake_imgs = generator(z)\nalpha = torch.rand(2, 1)\n"
            "interpolates = alpha * real_imgs + (1 - alpha) * fake_imgs\n"
            "d_interpolates = discriminator(interpolates)\n"
            "gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,\n"
            "                                grad_outputs=torch.ones_like(d_interpolates), create_graph=True)[0]\n"
            "gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()\n"
            "d_loss = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))"
            " + 10 * gradient_penalty\n"
            "d_loss.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\n",
            line=18,
            col=60,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
            "optimizer_D = torch.optim.Adam(discriminator.parameters())\n"
            "real_imgs, z = torch.randn(2, 3), torch.randn(2, 4)\n\n"
            "optimizer_D.zero_grad()\nfake_imgs = generator(z).detach().requires_grad_()\nalpha = torch.rand(2, 1)\n"
            "interpolates = alpha * real_imgs + (1 - alpha) * fake_imgs\n"
            "d_interpolates = discriminator(interpolates)\n"
            "gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,\n"
            "                                grad_outputs=torch.ones_like(d_interpolates), create_graph=True)[0]\n"
            "gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()\n"
            "d_loss = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))"
            " + 10 * gradient_penalty\n"
            "d_loss.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\n",
            unsafe=True,
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # WGAN-div: the penalty differentiates with respect to the fake itself.
        Invalid(
            "import torch\nfrom torch import autograd, nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
            "optimizer_D = torch.optim.Adam(discriminator.parameters())\nz = torch.randn(2, 4)\n\n"
            "optimizer_D.zero_grad()\nfake_imgs = generator(z)\nfake_validity = discriminator(fake_imgs)\n"
            "fake_grad = autograd.grad(fake_validity, fake_imgs, torch.ones_like(fake_validity),"
            " create_graph=True)[0]\n"
            "d_loss = torch.mean(fake_validity) + fake_grad.pow(2).sum(1).mean()\nd_loss.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\n",
            line=12,
            col=16,
            fixed="import torch\nfrom torch import autograd, nn\n\ntorch.manual_seed(0)\ngenerator = nn.Linear(4, 3)\n"
            "discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
            "optimizer_D = torch.optim.Adam(discriminator.parameters())\nz = torch.randn(2, 4)\n\n"
            "optimizer_D.zero_grad()\nfake_imgs = generator(z).detach().requires_grad_()\n"
            "fake_validity = discriminator(fake_imgs)\n"
            "fake_grad = autograd.grad(fake_validity, fake_imgs, torch.ones_like(fake_validity),"
            " create_graph=True)[0]\n"
            "d_loss = torch.mean(fake_validity) + fake_grad.pow(2).sum(1).mean()\nd_loss.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in generator.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\n",
            unsafe=True,
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # AMP: scaler.scale(errD).backward() and scaler.step(optimizerD).
        Invalid(
            _SETUP + "scaler = torch.amp.GradScaler(\"cpu\")\n\nfake = netG(noise)\n"
            "errD = criterion(netD(fake), zeros)\nscaler.scale(errD).backward()\n"
            f"g_grad_after_d = {_G_GRAD}\nscaler.step(optimizerD)\nscaler.update()\n",
            line=16,
            col=17,
            fixed=_SETUP + "scaler = torch.amp.GradScaler(\"cpu\")\n\nfake = netG(noise)\n"
            "errD = criterion(netD(fake.detach()), zeros)\nscaler.scale(errD).backward()\n"
            f"g_grad_after_d = {_G_GRAD}\nscaler.step(optimizerD)\nscaler.update()\n",
            oracle=Oracle(check_bad="g_grad_after_d > 1000", check_fixed="g_grad_after_d == 0"),
        ),
        # A training loop on `model.G` / `model.D` that makes the fake once per batch, unpacks
        # it, and reuses it in both steps.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nmodel = nn.Module()\n"
            "model.G, model.D = nn.Linear(4, 6), nn.Linear(3, 1)\nopt_g = torch.optim.Adam(model.G.parameters())\n"
            "opt_d = torch.optim.Adam(model.D.parameters())\nloader = [(torch.randn(2, 3), torch.randn(2, 4))]\n\n"
            "for real, z in loader:\n    fake_a, fake_b = model.G(z).chunk(2, dim=1)\n    fake = fake_a + fake_b\n"
            "    opt_d.zero_grad()\n    d_loss = model.D(fake).mean() - model.D(real).mean()\n    d_loss.backward()\n"
            "    opt_d.step()\n    opt_g.zero_grad()\n    g_loss = -model.D(fake).mean()\n    g_loss.backward()\n"
            "    opt_g.step()\n",
            line=15,
            col=13,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\nmodel = nn.Module()\n"
            "model.G, model.D = nn.Linear(4, 6), nn.Linear(3, 1)\nopt_g = torch.optim.Adam(model.G.parameters())\n"
            "opt_d = torch.optim.Adam(model.D.parameters())\nloader = [(torch.randn(2, 3), torch.randn(2, 4))]\n\n"
            "for real, z in loader:\n    fake_a, fake_b = model.G(z).chunk(2, dim=1)\n    fake = fake_a + fake_b\n"
            "    opt_d.zero_grad()\n    d_loss = model.D(fake.detach()).mean() - model.D(real).mean()\n"
            "    d_loss.backward()\n    opt_d.step()\n    opt_g.zero_grad()\n    g_loss = -model.D(fake).mean()\n"
            "    g_loss.backward()\n    opt_g.step()\n",
            oracle=Oracle(raises=_CRASH),
        ),
        # Names from configuration: a `decoder` generator and a `scorer` discriminator.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n"
            "decoder, scorer = nn.Linear(4, 3), nn.Linear(3, 1)\n"
            "opt = torch.optim.SGD(scorer.parameters(), lr=0.1)\n\n\ndef scorer_step(z):\n    opt.zero_grad()\n"
            "    sample = decoder(z)\n    loss = scorer(sample).mean()\n    loss.backward()\n    opt.step()\n\n\n"
            "scorer_step(torch.randn(2, 4))\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)\n",
            line=12,
            col=11,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n"
                  "decoder, scorer = nn.Linear(4, 3), nn.Linear(3, 1)\n"
            "opt = torch.optim.SGD(scorer.parameters(), lr=0.1)\n\n\ndef scorer_step(z):\n    opt.zero_grad()\n"
            "    sample = decoder(z)\n    loss = scorer(sample.detach()).mean()\n    loss.backward()\n"
            "    opt.step()\n\n\n"
            "scorer_step(torch.randn(2, 4))\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)\n",
            options={"generator_names": ("decoder",), "discriminator_names": ("scorer",)},
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # Roles from the optimizers: `optimizer_G` trains `decoder`, `optimizer_D` trains `critic_net`.
        Invalid(
            "import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n"
            "decoder, critic_net = nn.Linear(4, 3), nn.Linear(3, 1)\n"
            "optimizer_G = torch.optim.Adam(decoder.parameters())\n"
            "optimizer_D = torch.optim.Adam(critic_net.parameters())\n"
            "z = torch.randn(2, 4)\n\nsample = decoder(z)\nloss = critic_net(sample).mean()\nloss.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\n",
            line=11,
            col=7,
            fixed="import torch\nfrom torch import nn\n\ntorch.manual_seed(0)\n"
                  "decoder, critic_net = nn.Linear(4, 3), nn.Linear(3, 1)\n"
            "optimizer_G = torch.optim.Adam(decoder.parameters())\n"
            "optimizer_D = torch.optim.Adam(critic_net.parameters())\n"
            "z = torch.randn(2, 4)\n\nsample = decoder(z)\nloss = critic_net(sample.detach()).mean()\nloss.backward()\n"
            "g_grad_after_d = sum(p.grad.abs().sum().item() for p in decoder.parameters() if p.grad is not None)\n"
            "optimizer_D.step()\n",
            oracle=Oracle(check_bad="g_grad_after_d > 0", check_fixed="g_grad_after_d == 0"),
        ),
        # The discriminator's output is also the generator's loss input: no automatic fix.
        Invalid(
            _SETUP + "optimizerG.zero_grad()\nfake = netG(noise)\nd_fake = netD(fake)\n"
            "errG = criterion(d_fake, ones)\nerrG.backward(retain_graph=True)\noptimizerG.step()\n"
            f"g_grad_before_d = {_G_GRAD}\noptimizerD.zero_grad()\nerrD = criterion(d_fake, zeros)\n"
            f"errD.backward()\ng_grad_after_d = {_G_GRAD}\noptimizerD.step()\n",
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
        fix = None
        if finding.fix == "call":
            edits = []
            for target in dc.targets:
                edits.append(replace_node(ctx, target, receiver_text(ctx, target) + ".detach()"))
            if edits:
                fix = Fix(self.fix_title, "safe", tuple(edits))
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
