"""TNS301 beyond its examples: what each message says, which generators and discriminators it
follows, what stays silent.  How roles are found (analysis/gan.py) is tested in test_gan_roles.py."""

import subprocess
import textwrap

import pytest

from conftest import tc, tool
from flake8_tensorcopy.engine import fix_text, lint_text, select_rules
from flake8_tensorcopy.rules.base import Options

RULES = select_rules(["TNS3"])

HEAD = """\
import torch
import torch.nn.functional as F
from torch import autograd, nn
"""


def findings(body, **options):
    result = lint_text(HEAD + textwrap.dedent(body), RULES, Options(**options))
    assert result.error is None
    return [(v.line - HEAD.count("\n"), v.message, v.fix) for v in result.violations]


def only(body, **options):
    found = findings(body, **options)
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------------ consequences

DCGAN_REUSE = """\
fake = netG(noise)
errD = netD(fake).mean()
errD.backward({retain})
optimizerD.step()
{zero}errG = -netD(fake).mean()
errG.backward()
optimizerG.step()
"""


def test_reused_fake_without_retain_graph_crashes_the_generator_step():
    line, msg, fix = only(DCGAN_REUSE.format(retain="", zero="optimizerG.zero_grad()\n"))
    assert line == 2
    assert 'the generator step then fails ("backward through the graph a second time"); use netD(fake.detach())' \
        in msg
    assert fix.safety == "safe"


def test_retain_graph_without_zero_grad_is_silently_wrong():
    _, msg, _ = only(DCGAN_REUSE.format(retain="retain_graph=True", zero=""))
    assert "with retain_graph and no zeroing of its gradients, the generator's update is silently wrong" in msg


def test_retain_graph_with_zero_grad_states_only_the_fact():
    _, msg, _ = only(DCGAN_REUSE.format(retain="retain_graph=True", zero="netG.zero_grad()\n"))
    assert "back-propagates into the generator; use" in msg


def test_a_helper_that_may_clear_the_gradients_is_not_called_a_wrong_update():
    _, msg, _ = only("""\
        optimizerD.zero_grad()
        optimizerG.zero_grad()
        d_loss = netD(netG(z)).mean()
        d_loss.backward()
        optimizerD.step()
        reset_grad()
        g_loss = -netD(netG(z)).mean()
        g_loss.backward()
        optimizerG.step()
    """)
    assert "silently wrong" not in msg and "into the generator; use" in msg


def test_recomputed_fake_without_zero_grad_is_silently_wrong():
    _, msg, _ = only("""\
        optimizerD.zero_grad()
        optimizerG.zero_grad()
        d_loss = netD(netG(z)).mean()
        d_loss.backward()
        optimizerD.step()
        g_loss = -netD(netG(z)).mean()
        g_loss.backward()
        optimizerG.step()
    """)
    assert "nothing zeroes the generator's gradients before its step: its update is silently wrong" in msg


def test_generator_step_first_then_the_discriminator_backward_crashes():
    _, msg, _ = only("""\
        fake = G(z)
        g_loss = -D(fake).mean()
        g_loss.backward()
        opt_g.step()
        d_loss = D(fake).mean() - D(real).mean()
        d_loss.backward()
        opt_d.step()
    """)
    assert msg.startswith("D(fake) back-propagates into the generator: this backward fails")


def test_a_fake_made_outside_the_critic_loop_crashes_on_the_second_iteration():
    _, msg, _ = only("""\
        fake = netG(noise)
        for _ in range(n_critic):
            errD = netD(fake).mean()
            errD.backward()
            optimizerD.step()
    """)
    assert "the second iteration fails" in msg


def test_a_fake_from_another_method_may_crash_or_waste():
    line, msg, fix = only("""\
        class Model:
            def forward(self):
                self.fake_B = self.netG(self.real_A)

            def backward_D(self):
                pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1))
                self.loss_D = pred_fake.mean()
                self.loss_D.backward()
    """)
    assert line == 6 and "into the generator; use" in msg
    assert "use self.netD(torch.cat((self.real_A, self.fake_B.detach()), 1))" in msg


def test_a_fake_a_subclass_sets_reaches_the_discriminator_step_of_its_base_class():
    """pix2pix's layout split in two classes: `backward_D` of a base class reads `self.fake_B`,
    which the subclass's `optimize` sets to the generator's output; on torch the D step gives the
    generator gradients.  A subclass that overrides `backward_D` does not run the base's."""
    body = """\
        class Base:
            def backward_D(self):
                pred = self.netD(self.fake_B)
                self.loss_D = pred.mean()
                self.loss_D.backward()

        class GAN(Base):
            def __init__(self):
                self.netG, self.netD = nn.Linear(4, 4), nn.Linear(4, 1)
                self.optimizer_D = torch.optim.Adam(self.netD.parameters())

            def optimize(self, a):
                self.fake_B = self.netG(a)
                self.optimizer_D.zero_grad()
                self.backward_D()
                self.optimizer_D.step()
        """
    line, msg, fix = only(body)
    assert line == 3 and "use self.netD(self.fake_B.detach())" in msg
    ns: dict = {}
    exec(compile(HEAD + textwrap.dedent(body) + "m = GAN()\nm.optimize(torch.randn(2, 4))\n", "<gan>", "exec"), ns)
    assert ns["m"].netG.weight.grad is not None
    overridden = body.replace("        def optimize(self, a):", "        def backward_D(self):\n"
                              "                self.netD(self.fake_B.detach()).mean().backward()\n\n"
                              "            def optimize(self, a):")
    assert findings(overridden) == []


# ------------------------------------------------------------------ tracking


@pytest.mark.parametrize("body", [
    # tuple unpacking and a helper variable
    "fake_img, _ = generator(noise)\nimg = fake_img * 2 - 1\nd_loss = F.softplus(discriminator(img)).mean()\n"
    "d_loss.backward()\nd_optim.step()\n",
    # an alias of the module
    "G = self.GAN.G if not ddp else self.G_ddp\nfake = G(z)\nloss = D(fake).mean()\nloss.backward()\nD_opt.step()\n",
    # indexing and a list of fakes
    "fakes = [netG(z) for z in zs]\nerrD = netD(fakes[0]).mean()\nerrD.backward()\noptimizerD.step()\n",
    # a generator-returning helper
    "def make_fake(z):\n    return netG(z)\n\n\ndef d_step(z):\n    errD = netD(make_fake(z)).mean()\n"
    "    errD.backward()\n    optimizerD.step()\n",
    # `self(z)` when forward runs the generator
    "class GAN(nn.Module):\n    def forward(self, z):\n        return self.generator(z)\n\n"
    "    def d_step(self, z, opt_d):\n        d_loss = self.discriminator(self(z)).mean()\n"
    "        self.manual_backward(d_loss)\n        opt_d.step()\n",
    # torch.autograd.backward and a name-only D update (the step is elsewhere)
    "def backward_D(netG, netD, z):\n    loss_D = netD(netG(z)).mean()\n    torch.autograd.backward(loss_D)\n",
    # MMEngine's OptimWrapper
    "def train_discriminator(self, z, optimizer_wrapper):\n    fake = self.generator(z)\n"
    "    loss = self.discriminator(fake).mean()\n    optimizer_wrapper.update_params(loss)\n",
    # a method running the discriminator module
    "fake = netG(z)\nerrD = netD.forward(fake).mean()\nerrD.backward()\noptimizerD.step()\n",
])
def test_generator_output_is_followed(body):
    assert len(findings(body)) == 1


@pytest.mark.parametrize("body", [
    # a loss class whose name mentions the discriminator is not one
    "class AuxiliaryClassifierDiscriminatorLoss(nn.Module):\n"
    "    def train_ops(self, generator, discriminator, opt_d, z, y):\n"
    "        cgz = discriminator(generator(z).detach())\n        loss = self.forward(cgz, y)\n"
    "        loss.backward()\n        opt_d.step()\n",
    # a tensor named like a discriminator is a value
    "fake = G(z).detach()\nd_out = D(fake)\nloss = d_out.mean()\nloss.backward()\nopt_d.step()\n",
    # constructing a generator is not running it
    "generator = Generator(nz)\ndiscriminator = Discriminator()\n"
    "loss = discriminator(generator.sample(4).detach()).mean()\n"
    "loss.backward()\noptimizer_D.step()\n",
    # sampled tokens carry no graph (ELECTRA-style)
    "ids = generator(masked).argmax(-1)\nloss = discriminator(ids).mean()\nloss.backward()\nopt_d.step()\n",
    "probs = generator(masked).softmax(-1)\nids = torch.multinomial(probs, 1)\nloss = discriminator(ids).mean()\n"
    "loss.backward()\nopt_d.step()\n",
    # frozen through a helper, Lightning's toggle_optimizer, or requires_grad_
    "set_requires_grad([netG], False)\nerrD = netD(netG(z)).mean()\nerrD.backward()\noptimizerD.step()\n",
    "def training_step(self, batch, idx):\n    opt_g, opt_d = self.optimizers()\n    self.toggle_optimizer(opt_d)\n"
    "    d_loss = self.discriminator(self.generator(batch)).mean()\n    self.manual_backward(d_loss)\n"
    "    opt_d.step()\n    self.untoggle_optimizer(opt_d)\n",
    # a generator update that looks at the discriminator
    "optimizerG.zero_grad()\nerrG = -netD(netG(z)).mean()\nerrG.backward()\noptimizerG.step()\n",
    # no backward at all (Lightning's automatic optimization returns the loss)
    "def training_step(self, batch, batch_idx, optimizer_idx):\n    if optimizer_idx == 1:\n"
    "        return self.discriminator(self.generator(batch)).mean()\n",
    # a backward whose role is unknown (no step, no telling name)
    "loss = netD(netG(z)).mean()\nloss.backward()\n",
    # the two branches of one `if` never run together
    "fake = netG(z)\nif step_d:\n    errD = netD(fake.detach()).mean()\n    errD.backward()\n    optimizerD.step()\n"
    "else:\n    errG = -netD(fake).mean()\n    errG.backward()\n    optimizerG.step()\n",
])
def test_silent(body):
    assert findings(body) == []


def test_no_generator_or_no_discriminator_name_in_the_file_is_silent_fast():
    text = HEAD + "fake = model(z)\nloss = critic_loss(fake)\nloss.backward()\nopt.step()\n"
    assert lint_text(text, RULES).violations == []


# ------------------------------------------------------------------ options and front ends

CONFIGURED = HEAD + """\
decoder, scorer = nn.Linear(4, 3), nn.Linear(3, 1)
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
sample = decoder(torch.randn(2, 4))
loss = scorer(sample).mean()
loss.backward()
opt.step()
"""


def test_configured_names():
    assert lint_text(CONFIGURED, RULES).violations == []
    opts = Options(generator_names=("decoder",), discriminator_names=("scorer",))
    [v] = lint_text(CONFIGURED, RULES, opts).violations
    assert (v.line, v.col) == (7, 7)


def test_cli_and_flake8_options_reach_the_rule(tmp_path, capsys):
    path = tmp_path / "train.py"
    path.write_text(CONFIGURED)
    proc = tc(capsys, "check", "--no-cache", "--select", "TNS3", "--generator-names", "decoder",
              "--discriminator-names", "scorer", str(path))
    assert proc.returncode == 1 and ":7:8: TNS301 [*] scorer(sample) back-propagates" in proc.stdout, proc.stdout
    proc = subprocess.run([tool("flake8"), "--select", "TNS3", "--tensorcopy-generator-names", "decoder",
                           "--tensorcopy-discriminator-names", "scorer", str(path)], capture_output=True, text=True)
    assert ":7:8: TNS301 " in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run([tool("flake8"), "--select", "TNS3", str(path)], capture_output=True, text=True)
    assert "TNS301" not in proc.stdout


# ------------------------------------------------------------------ fixes


def test_gradient_penalty_fix_covers_every_branch_once_in_a_stable_order():
    text = HEAD + textwrap.dedent("""\
        def critic_step(generator, discriminator, optimizer_discriminator, real, noise, labels, kind):
            optimizer_discriminator.zero_grad()
            if kind == "none":
                fake = generator(noise)
            else:
                fake = generator(noise, labels)
            interpolate = 0.5 * real + 0.5 * fake
            d_interpolate = discriminator(interpolate)
            loss = penalty(interpolate, d_interpolate)
            loss.backward()
            optimizer_discriminator.step()
    """)
    [v] = lint_text(text, RULES).violations
    assert v.fix.safety == "unsafe" and len(v.fix.edits) == 2
    assert "use fake = generator(noise).detach().requires_grad_()" in v.message
    fixed = fix_text(text, RULES, unsafe=True)
    assert fixed.text.count(".detach().requires_grad_()") == 2
    assert lint_text(fixed.text, RULES).violations == []
    assert fix_text(text, RULES).text == text  # nothing safe to apply


def test_fix_parenthesises_what_needs_it():
    text = HEAD + "errD = netD(f := netG(z)).mean()\nerrD.backward()\noptimizerD.step()\n"
    assert "netD((f := netG(z)).detach())" in fix_text(text, RULES).text


# ------------------------------------------------------------------ roles by structure


def _structure(code):
    result = lint_text(textwrap.dedent(code), RULES)
    assert result.error is None
    return [(v.line, v.message) for v in result.violations]


def test_modules_held_in_dicts():
    found = _structure("""
        import torch
        from torch import nn, optim

        G = {"model": nn.Linear(4, 3)}
        D = {"model": nn.Linear(3, 1)}
        G["solver"] = optim.Adam(G["model"].parameters())
        D["solver"] = optim.Adam(D["model"].parameters())
        z = torch.randn(2, 4)
        D_loss = D["model"](G["model"](z)).mean()
        D_loss.backward()
        D["solver"].step()
        """)
    assert [line for line, _ in found] == [10]


def test_an_encoder_that_plays_the_generator():
    # An adversarial autoencoder: Q (encoder) feeds D; neither name says a role.
    found = _structure("""
        import torch
        from torch import nn, optim

        Q = nn.Linear(4, 2)
        D = nn.Linear(2, 1)
        Q_solver = optim.Adam(Q.parameters())
        D_solver = optim.Adam(D.parameters())
        X = torch.randn(8, 4)
        z_fake = Q(X)
        D_loss = -torch.mean(torch.log(1 - torch.sigmoid(D(z_fake))))
        D_loss.backward()
        D_solver.step()
        """)
    assert [line for line, _ in found] == [11]


def test_a_critic_named_t():
    found = _structure("""
        import torch
        from torch import nn, optim

        netG = nn.Linear(4, 3)
        T = nn.Linear(3, 1)
        G_solver = optim.Adam(netG.parameters())
        T_solver = optim.Adam(T.parameters())
        fake = netG(torch.randn(2, 4))
        T_loss = T(fake).mean()
        T_loss.backward()
        T_solver.step()
        """)
    assert [line for line, _ in found] == [10]


def test_structure_without_an_adversary_is_silent():
    # An encoder and a classifier trained jointly: one backward steps both.
    assert _structure("""
        import torch
        from torch import nn, optim

        enc = nn.Linear(4, 2)
        cls = nn.Linear(2, 1)
        opt_enc = optim.Adam(enc.parameters())
        opt_cls = optim.Adam(cls.parameters())
        loss = cls(enc(torch.randn(2, 4))).mean()
        loss.backward()
        opt_enc.step()
        opt_cls.step()
        """) == []


STEP_HELPERS = """\
import torch
from torch import nn

netG = nn.Linear(4, 4)
netD = nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
bce = nn.BCEWithLogitsLoss()


def discriminator_step(real, fake):
    optD.zero_grad()
    loss = bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))
    loss.backward()
    optD.step()


def generator_step(fake):
    optG.zero_grad()
    loss = bce(netD(fake), torch.ones(8, 1))
    loss.backward()
    optG.step()


def train(steps):
    for _ in range(steps):
        fake = netG(torch.randn(8, 4))
        discriminator_step(torch.randn(8, 4), fake)
        generator_step(fake)


train(2)
"""


STEP_METHODS = """\
import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.netG = nn.Linear(4, 4)
        self.netD = nn.Linear(4, 1)
        self.optD = torch.optim.Adam(self.netD.parameters())
        self.optG = torch.optim.Adam(self.netG.parameters())
        self.bce = nn.BCEWithLogitsLoss()

    def discriminator_step(self, real, fake):
        self.optD.zero_grad()
        loss = self.bce(self.netD(real), torch.ones(8, 1)) + self.bce(self.netD(fake), torch.zeros(8, 1))
        loss.backward()
        self.optD.step()

    def generator_step(self, fake):
        self.optG.zero_grad()
        loss = self.bce(self.netD(fake), torch.ones(8, 1))
        loss.backward()
        self.optG.step()

    def train(self, steps):
        for _ in range(steps):
            fake = self.netG(torch.randn(8, 4))
            self.discriminator_step(torch.randn(8, 4), fake)
            self.generator_step(fake)


Trainer().train(2)
"""


# The modules handed to the constructor and kept by an unpacking (`self.netG, self.netD = G, D`).
STEP_METHODS_GIVEN = STEP_METHODS.replace(
    "    def __init__(self):\n        self.netG = nn.Linear(4, 4)\n        self.netD = nn.Linear(4, 1)\n",
    "    def __init__(self, G, D):\n        self.netG, self.netD = G, D\n\n",
).replace("Trainer().train(2)", "Trainer(nn.Linear(4, 4), nn.Linear(4, 1)).train(2)")
assert STEP_METHODS_GIVEN.count("self.netG, self.netD = G, D") == 1


@pytest.mark.parametrize("source,line,fixed_call", [
    (STEP_HELPERS, 13, "bce(netD(fake.detach()), torch.zeros(8, 1))"),
    (STEP_METHODS, 15, "self.bce(self.netD(fake.detach()), torch.zeros(8, 1))"),
    (STEP_METHODS_GIVEN, 15, "self.bce(self.netD(fake.detach()), torch.zeros(8, 1))"),
], ids=["function", "method", "modules given to the constructor"])
def test_generator_output_passed_to_a_discriminator_step_helper(source, line, fixed_call):
    # train() passes netG's output to discriminator_step(), whose backward then runs through the
    # generator's graph and frees it: generator_step() crashes.  The finding is in the helper,
    # where the fix goes; generator_step() (a generator update) stays silent.
    result = lint_text(source, RULES)
    assert [(v.code, v.line, v.fix.safety) for v in result.violations] == [("TNS301", line, "safe")]
    fixed = fix_text(source, RULES).text
    assert fixed_call in fixed and fixed.count(".detach()") == 1
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(source, "<bad>", "exec"), {"torch": torch})
    exec(compile(fixed, "<fixed>", "exec"), {"torch": torch})


def test_output_through_a_replay_buffer_is_not_followed_into_the_step():
    # labml-nn's CycleGAN: the fakes go through a replay buffer whose push_and_pop() detaches
    # them.  Only a value known to be a tensor that may carry a graph is followed into the step
    # (here the buffer's result does not require grad; in labml-nn's own buffer the analysis
    # cannot tell what it returns, which is not followed either).
    source = STEP_HELPERS.replace("def train(steps):", '''class ReplayBuffer:
    def __init__(self):
        self.data = []

    def push_and_pop(self, data):
        data = data.detach()
        res = []
        for element in data:
            self.data.append(element)
            res.append(element)
        return torch.stack(res)


def train(steps):
    buffer = ReplayBuffer()''').replace(
        "discriminator_step(torch.randn(8, 4), fake)", "discriminator_step(torch.randn(8, 4), buffer.push_and_pop(fake))")
    assert "buffer.push_and_pop(fake)" in source
    assert lint_text(source, RULES).violations == []
    torch = pytest.importorskip("torch")
    exec(compile(source, "<case>", "exec"), {"torch": torch})


REPLAY_BUFFER = """\
import random
import torch
from torch import nn


class ReplayBuffer:  # PyTorch-GAN's, as written
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []

    def push_and_pop(self, data):
        to_return = []
        for element in data.data:
            element = torch.unsqueeze(element, 0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                to_return.append(element)
            else:
                if random.uniform(0, 1) > 0.5:
                    i = random.randint(0, self.max_size - 1)
                    to_return.append(self.data[i].clone())
                    self.data[i] = element
                else:
                    to_return.append(element)
        return torch.cat(to_return)

    def last(self, data):
        PASS_THROUGH
        return data


netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
buf = ReplayBuffer(max_size=2)
for _ in range(4):
    fake = netG(torch.randn(4, 4))
    loss_d = netD(buf.METHOD(fake)).pow(2).mean()
    optD.zero_grad()
    loss_d.backward()
    assert all(p.grad is None or not p.grad.any() for p in netG.parameters()), "generator gradients"
    optD.step()
    loss_g = (netD(fake) - 1).pow(2).mean()
    optG.zero_grad()
    loss_g.backward()
    optG.step()
    optG.zero_grad(set_to_none=True)
"""


@pytest.mark.parametrize("method, reported", [("push_and_pop", False), ("last", True)])
def test_what_a_method_gives_back_of_its_argument(method, reported):
    # What a method returns carries the generator's graph only where the argument reaches a
    # `return` (GanScope.returns_params): PyTorch-GAN's replay buffer returns `torch.cat` of the
    # elements of `data.data` and of copies it keeps, which carry none; `last` returns the
    # argument itself (and keeps it), whose graph the discriminator's backward reaches.
    source = REPLAY_BUFFER.replace("METHOD", method).replace("PASS_THROUGH", "self.data.append(data)")
    found = [v.line for v in lint_text(source, RULES).violations]
    line = source.splitlines().index("    loss_d = netD(buf.METHOD(fake)).pow(2).mean()".replace("METHOD", method)) + 1
    assert found == ([line] if reported else []), found
    torch = pytest.importorskip("torch")
    if reported:
        with pytest.raises(AssertionError, match="generator gradients"):
            exec(compile(source, "<bad>", "exec"), {})
    else:
        exec(compile(source, "<clean>", "exec"), {})


def test_a_decorated_helper_is_not_read_by_its_body():
    # `log_stats` returns nothing by its body, but its decorator's wrapper returns the argument:
    # what the call gives back is not told by the body, and the fake goes on to the discriminator.
    source = """\
import torch
from torch import nn


def keep_input(fn):
    def wrapper(x):
        fn(x)
        return x
    return wrapper


@keep_input
def log_stats(x):
    print(float(x.mean()))


netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
fake = netG(torch.randn(4, 4))
loss_d = netD(log_stats(fake)).pow(2).mean()
optD.zero_grad()
loss_d.backward()
assert all(p.grad is None for p in netG.parameters()), "generator gradients"
"""
    assert [(v.code, v.line) for v in lint_text(source, RULES).violations] == [("TNS301", 20)]
    pytest.importorskip("torch")
    with pytest.raises(AssertionError, match="generator gradients"):
        exec(compile(source, "<bad>", "exec"), {})


_FREEZES = {
    "detached in place": ("""\
fake = netG(torch.randn(8, 8))
fake.detach_()
errD = netD(fake).mean()
""", None),
    "a method's freeze left to its default False": ("""\
class Toggle:
    def set_requires_grad(self, net, requires_grad=False):
        for p in net.parameters():
            p.requires_grad = requires_grad
Toggle().set_requires_grad(netG)
errD = netD(netG(torch.randn(8, 8))).mean()
""", None),
    "a helper's flag left to its default True": ("""\
def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag
requires_grad(netG)
errD = netD(netG(torch.randn(8, 8))).mean()
""", 10),
}


@pytest.mark.parametrize("name", list(_FREEZES))
def test_what_a_freeze_or_an_in_place_detach_leaves_to_the_discriminator(name):
    # `fake.detach_()` leaves a leaf without the generator's graph; a freeze helper called
    # without its flag does what its default says (`requires_grad(netG)` of `def
    # requires_grad(model, flag=True)` thaws, CycleGAN's `set_requires_grad(nets,
    # requires_grad=False)` freezes).  The program asserts that the generator gets no gradient.
    body, line = _FREEZES[name]
    source = ("import torch\nfrom torch import nn\nnetG, netD = nn.Linear(8, 4), nn.Linear(4, 1)\n"
              "optG = torch.optim.Adam(netG.parameters())\noptD = torch.optim.Adam(netD.parameters())\n" + body
              + "optD.zero_grad()\nerrD.backward()\noptD.step()\n"
              "assert all(p.grad is None for p in netG.parameters()), 'generator gradients'\n")
    found = [v.line for v in lint_text(source, RULES).violations]
    assert found == ([line] if line else []), found
    pytest.importorskip("torch")
    if line:
        with pytest.raises(AssertionError, match="generator gradients"):
            exec(compile(source, "<bad>", "exec"), {})
    else:
        exec(compile(source, "<clean>", "exec"), {})


def test_a_buffer_named_like_a_generator_runs_no_generator():
    # labml-nn's CycleGAN: `gen_x_buffer = ReplayBuffer()`, whose `push_and_pop` detaches what it
    # is given; its name says "gen", but an instance of a plain class of the file is no module,
    # and what its method returns is what its summary says (a `torch.stack` of detached rows).
    source = """\
import random
import torch
from torch import nn


class ReplayBuffer:
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []

    def push_and_pop(self, data):
        data = data.detach()
        res = []
        for element in data:
            if len(self.data) < self.max_size:
                self.data.append(element)
                res.append(element)
            else:
                i = random.randint(0, self.max_size - 1)
                res.append(self.data[i].clone())
                self.data[i] = element
        return torch.stack(res)


class Trainer:
    def __init__(self):
        self.generator = nn.Linear(4, 4)
        self.discriminator = nn.Linear(4, 1)
        self.generator_optimizer = torch.optim.Adam(self.generator.parameters())
        self.discriminator_optimizer = torch.optim.Adam(self.discriminator.parameters())

    def run(self):
        gen_x_buffer = ReplayBuffer()
        for _ in range(2):
            gen_x = self.generator(torch.randn(4, 4))
            loss = (self.discriminator(gen_x) - 1).pow(2).mean()
            self.generator_optimizer.zero_grad()
            loss.backward()
            self.generator_optimizer.step()
            self.generator_optimizer.zero_grad(set_to_none=True)
            self.optimize_discriminator(gen_x_buffer.push_and_pop(gen_x))

    def optimize_discriminator(self, gen_x):
        loss = self.discriminator(gen_x).pow(2).mean()
        self.discriminator_optimizer.zero_grad()
        loss.backward()
        self.discriminator_optimizer.step()
        assert all(p.grad is None for p in self.generator.parameters()), "generator gradients"


Trainer().run()
"""
    assert lint_text(source, RULES).violations == []
    pytest.importorskip("torch")
    exec(compile(source, "<clean>", "exec"), {})


def test_generator_output_appended_to_a_list_is_followed():
    # `fakes.append(netG(z))`, then the discriminator step on `torch.cat(fakes)`: the list holds
    # the generator's output; the step's backward frees its graph, and the generator step fails.
    source = """\
import torch
from torch import nn
netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
fakes = []
for _ in range(2):
    fakes.append(netG(torch.randn(4, 4)))
fake = torch.cat(fakes)
loss_d = netD(fake).pow(2).mean()
optD.zero_grad()
loss_d.backward()
optD.step()
loss_g = (netD(fake) - 1).pow(2).mean()
optG.zero_grad()
loss_g.backward()
optG.step()
"""
    found = lint_text(source, RULES).violations
    assert [(v.code, v.line) for v in found] == [("TNS301", 10)], found
    assert "backward through the graph a second time" in found[0].message
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(source, "<bad>", "exec"), {})
    fixed = fix_text(source, RULES).text
    assert fixed == source.replace("loss_d = netD(fake)", "loss_d = netD(fake.detach())")
    exec(compile(fixed, "<fixed>", "exec"), {})


LOSS_HELPERS = """\
import torch
from torch import autograd, nn

netG = nn.Linear(4, 4)
netD = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
bce = nn.BCEWithLogitsLoss()


def d_loss_fn(real, fake):
    return bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))


def adversarial(model, x, target):
    return bce(model(x), target)


def d_loss_given(model, real, fake):
    return adversarial(model, real, torch.ones(8, 1)) + adversarial(model, fake, torch.zeros(8, 1))


def gradient_penalty(model, real, fake):
    alpha = torch.rand(8, 1)
    interpolates = alpha * real + (1 - alpha) * fake
    out = model(interpolates)
    grads = autograd.grad(out, interpolates, torch.ones_like(out), create_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def train(steps):
    for _ in range(steps):
        real = torch.randn(8, 4)
        fake = netG(torch.randn(8, 4))
        d_loss = D_LOSS
        optD.zero_grad()
        d_loss.backward()
        optD.step()
        g_loss = adversarial(netD, fake, torch.ones(8, 1))
        optG.zero_grad()
        g_loss.backward()
        optG.step()


train(2)
"""

LOSS_METHODS = """\
import torch
from torch import nn


class Trainer:
    def __init__(self, G, D):
        self.netG, self.netD = G, D
        self.optD = torch.optim.Adam(self.netD.parameters())
        self.optG = torch.optim.Adam(self.netG.parameters())
        self.bce = nn.BCEWithLogitsLoss()

    def d_loss(self, real, fake):
        real_loss = self.bce(self.netD(real), torch.ones(8, 1))
        fake_loss = self.bce(self.netD(fake), torch.zeros(8, 1))
        return (real_loss + fake_loss) / 2

    def train(self, steps):
        for _ in range(steps):
            fake = self.netG(torch.randn(8, 4))
            loss_d = self.d_loss(torch.randn(8, 4), fake)
            self.optD.zero_grad()
            loss_d.backward()
            self.optD.step()
            loss_g = self.bce(self.netD(fake), torch.ones(8, 1))
            self.optG.zero_grad()
            loss_g.backward()
            self.optG.step()


Trainer(nn.Linear(4, 4), nn.Linear(4, 1)).train(2)
"""

_CRASH_LATER = 'back-propagates into the generator: the generator step then fails ("backward through the graph a second time")'


@pytest.mark.parametrize("source,line,where,instead,fixed_call", [
    (LOSS_HELPERS.replace("D_LOSS", "d_loss_fn(real, fake)"), 35, "d_loss_fn(real, fake) (its discriminator call, line 12)",
     "use d_loss_fn(real, fake.detach())", "d_loss = d_loss_fn(real, fake.detach())"),
    # The discriminator handed to the helper, and by it to another one: a call of a parameter.
    (LOSS_HELPERS.replace("D_LOSS", "d_loss_given(netD, real, fake)"), 35,
     "d_loss_given(netD, real, fake) (its discriminator call, line 20)",
     "use d_loss_given(netD, real, fake.detach())", "d_loss = d_loss_given(netD, real, fake.detach())"),
    (LOSS_METHODS, 20, "self.d_loss(torch.randn(8, 4), fake) (its discriminator call, line 14)",
     "use self.d_loss(torch.randn(8, 4), fake.detach())", "self.d_loss(torch.randn(8, 4), fake.detach())"),
    # A gradient penalty differentiates the discriminator by the fake: detaching it at the
    # call would break the penalty, and the generator step uses the same fake (no fix).
    (LOSS_HELPERS.replace("D_LOSS", "10 * gradient_penalty(netD, real, fake)"), 35,
     "gradient_penalty(netD, real, fake) (its discriminator call, line 26)",
     "use fake.detach().requires_grad_() for the discriminator step", None),
], ids=["function", "discriminator passed", "method", "gradient penalty"])
def test_a_helper_that_returns_the_discriminator_loss_of_generator_output(source, line, where, instead, fixed_call):
    # d_loss = d_loss_fn(real, fake): the helper returns what the discriminator makes of the
    # fake, whose graph the discriminator's backward then frees; the generator step, on the same
    # fake, crashes.  Reported at the call (where the fix goes), with the helper's line; the fix
    # is unsafe: detaching an argument changes all the helper does with it.
    result = lint_text(source, RULES)
    assert [(v.code, v.line) for v in result.violations] == [("TNS301", line)], result.violations
    msg, fix = result.violations[0].message, result.violations[0].fix
    assert msg.startswith(where + " " + _CRASH_LATER), msg
    assert msg.endswith(instead), msg
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(source, "<bad>", "exec"), {"torch": torch})
    if fixed_call is None:
        assert fix is None
        return
    assert fix.safety == "unsafe"
    assert fix_text(source, RULES).text == source
    fixed = fix_text(source, RULES, unsafe=True).text
    assert fixed_call in fixed and fixed.count(".detach()") == 1
    exec(compile(fixed, "<fixed>", "exec"), {"torch": torch})


@pytest.mark.parametrize("d_loss", [
    "d_loss_fn(real, fake.detach())",
    "d_loss_given(netD, real, fake.detach())",
    # The helper run on the generator is no discriminator call.
    "d_loss_given(netG, real, fake).mean()",
    "d_loss_fn(real, netG(torch.randn(8, 4)).detach())",
], ids=["detached", "detached, discriminator passed", "generator passed", "detached where made"])
def test_a_loss_helper_on_detached_output_or_without_a_discriminator_is_silent(d_loss):
    source = LOSS_HELPERS.replace("D_LOSS", d_loss)
    assert lint_text(source, RULES).violations == []
    torch = pytest.importorskip("torch")
    if "netG, real" not in d_loss:
        exec(compile(source, "<case>", "exec"), {"torch": torch})


def test_a_loss_helper_in_the_generator_step_is_silent():
    # g_loss = adversarial(netD, fake, ...) in the generator's update: the generator's own step.
    source = LOSS_HELPERS.replace("D_LOSS", "d_loss_fn(real, fake.detach())")
    assert "g_loss = adversarial(netD, fake, torch.ones(8, 1))" in source
    assert lint_text(source, RULES).violations == []


def test_a_helper_that_steps_the_discriminator_itself_is_reported_once_inside():
    # The helper's own backward and step: reported at its discriminator call (as before), not
    # again at the call that passes the fake.
    source = STEP_HELPERS.replace("    optD.step()\n", "    optD.step()\n    return loss\n", 1).replace(
        "        discriminator_step(torch.randn(8, 4), fake)\n",
        "        d_loss = discriminator_step(torch.randn(8, 4), fake)\n")
    assert "return loss" in source and "d_loss = discriminator_step" in source
    result = lint_text(source, RULES)
    assert [(v.code, v.line) for v in result.violations] == [("TNS301", 13)]


def test_a_penalty_helper_on_a_new_leaf_is_silent():
    # mmagic's SinGAN: the penalty helper interpolates with the fake, then makes the result a
    # new leaf, `autograd.Variable(interpolates, requires_grad=True)`: nothing it returns
    # reaches the generator.
    helper = """def gradient_penalty(model, real, fake):
    alpha = torch.rand(8, 1)
    interpolates = alpha * real + (1 - alpha) * fake
    interpolates = autograd.Variable(interpolates, requires_grad=True)
    out = model(interpolates)"""
    source = LOSS_HELPERS.replace("""def gradient_penalty(model, real, fake):
    alpha = torch.rand(8, 1)
    interpolates = alpha * real + (1 - alpha) * fake
    out = model(interpolates)""", helper).replace("D_LOSS", "10 * gradient_penalty(netD, real, fake)")
    assert helper in source
    assert lint_text(source, RULES).violations == []
    torch = pytest.importorskip("torch")
    exec(compile(source, "<case>", "exec"), {"torch": torch})
    w = torch.ones(3, requires_grad=True)
    v = torch.autograd.Variable(w * 2, requires_grad=True)
    assert v.is_leaf and v.grad_fn is None


def test_a_loss_helper_given_what_is_only_derived_from_generator_output_is_silent():
    # mmagic's DeepFill: `real_data = (gt_img, gt_local)`, where gt_local is cut from the real
    # image at a box computed from the fake: not a tensor that carries the generator's graph
    # for all the analysis knows (a tuple), so the helper's discriminator call on it is not one
    # on generator output.
    source = LOSS_HELPERS.replace(
        "        d_loss = D_LOSS\n",
        "        box = locate(fake)\n"
        "        real_data = (real, crop(real, box))\n"
        "        d_loss = d_loss_fn(real_data[0], fake.detach()) + d_loss_of(real_data)\n",
    ).replace("def train(steps):", '''def locate(x):
    return int(x.argmax()) % 4


def crop(x, box):
    return x[:, box:]


def d_loss_of(pair):
    return netD(pair[0]).mean()


def train(steps):''')
    assert lint_text(source, RULES).violations == []
    torch = pytest.importorskip("torch")
    exec(compile(source, "<case>", "exec"), {"torch": torch})


# ------------------------------------------------------------------ functions named like modules

NAMED_FUNCTIONS = """\
netG = nn.Linear(2, 3)
netD = nn.Linear(3, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())


def g(x):
    return x * 2


def d(x):
    return netD(x)


def G(n):
    return netG(torch.randn(n, 2))


real = torch.randn(4, 3)
for _ in range(2):
    fake = G(4)
    d_loss = {d_loss}
    optD.zero_grad()
    d_loss.backward()
    optD.step()
    g_loss = -netD(fake).mean()
    optG.zero_grad()
    g_loss.backward()
    optG.step()
"""


def test_a_function_named_like_a_generator_is_what_its_body_returns():
    # `g(real)` doubles the real batch: not generator output whatever its name (it was reported,
    # with a fix called safe); `G(4)` returns what `netG` makes, by its body.
    code = NAMED_FUNCTIONS.format(d_loss="netD(g(real)).mean() - netD(fake.detach()).mean()")
    assert findings(code) == []
    torch = pytest.importorskip("torch")
    exec(compile(HEAD + code, "<case>", "exec"), {"torch": torch})


def test_a_function_named_like_a_discriminator_is_a_discriminator_call_by_its_body():
    # `d(fake)` calls `netD` on its argument: reported as that helper, whose argument's fix is
    # unsafe (detaching it changes all the function does with it), not as a module named `d`.
    code = NAMED_FUNCTIONS.format(d_loss="d(real).mean() - d(fake).mean()")
    (line, message, fix), = findings(code)
    assert line == 22 and message.startswith("d(fake) (its discriminator call, line 15) back-propagates"), message
    assert "fails" in message and fix is not None and not fix.applies(unsafe=False)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        exec(compile(HEAD + code, "<case>", "exec"), {"torch": torch})


def test_a_discriminator_step_in_a_method_says_what_the_caller_then_does():
    # The finding is in `d_step`; the crash is in `train_step`, which passes the generator's
    # output and back-propagates through it again after the call (callers are walked first).
    from flake8_tensorcopy.rules.tns3 import DiscriminatorThroughGenerator as R

    bad = R._TRAINER.replace("{fake}", "fake")
    (v,) = lint_text(bad, options=Options()).violations
    assert (v.code, v.line) == ("TNS301", 17)
    assert 'the generator step then fails ("backward through the graph a second time")' in v.message
    # A caller that makes new generator output for its own step frees nothing it uses again:
    # the message says only that the loss reaches the generator.
    fresh = bad.replace("g_loss = self.bce(self.netD(fake),", "g_loss = self.bce(self.netD(self.netG(z)),")
    (v,) = lint_text(fresh, options=Options()).violations
    assert v.message == "self.netD(fake) back-propagates into the generator; use self.netD(fake.detach())"


_LOOP_FREEZE = """\
import torch
from torch import nn
netG, netD = nn.Linear(8, 4), nn.Linear(4, 1)
optG = torch.optim.Adam(netG.parameters())
optD = torch.optim.Adam(netD.parameters())
netG.requires_grad_(False)
for step in range(2):
    optG.zero_grad()
    errD = netD(netG(torch.randn(8, 8))).mean()
    optD.zero_grad()
    errD.backward()
    optD.step()
    assert all(p.grad is None for p in netG.parameters()), 'generator gradients'
{thaw}"""


@pytest.mark.parametrize("refreeze", [False, True])
def test_a_generator_thawed_in_the_loop_is_not_frozen_at_its_next_iteration(refreeze):
    # Frozen before the loop, thawed by the generator step inside it: the second iteration's
    # discriminator step runs the generator with gradients (a join keeps a freeze only where
    # every path into the loop's head has it).  Frozen again before the iteration ends, it is not.
    thaw = "    netG.requires_grad_(True)\n    (-netD(netG(torch.randn(8, 8))).mean()).backward()\n    optG.step()\n"
    if refreeze:
        thaw += "    netG.requires_grad_(False)\n"
    source = _LOOP_FREEZE.format(thaw=thaw)
    found = [v.line for v in lint_text(source, RULES).violations]
    assert found == ([] if refreeze else [9]), found
    pytest.importorskip("torch")
    if refreeze:
        exec(compile(source, "<clean>", "exec"), {})
    else:
        with pytest.raises(AssertionError, match="generator gradients"):
            exec(compile(source, "<bad>", "exec"), {})


LOSS_OBJECT = """\
import torch
from torch import nn


class GANLoss:
    def __init__(self):
        self.bce = nn.BCEWithLogitsLoss()

    def d_loss(self, netD, real, fake):
        return self.bce(netD(real), torch.ones(8, 1)) + self.bce(netD(fake), torch.zeros(8, 1))

    def g_loss(self, netD, fake):
        return self.bce(netD(fake), torch.ones(8, 1))

    def d_step(self, netD, optD, real, fake):
        loss = self.d_loss(netD, real, fake)
        optD.zero_grad()
        loss.backward()
        optD.step()


netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
crit = GANLoss()
for _ in range(2):
    fake = netG(torch.randn(8, 4))
    D_STEP
    loss_g = crit.g_loss(netD, fake)
    optG.zero_grad()
    loss_g.backward()
    optG.step()
"""

_D_STEP = "loss_d = crit.d_loss(netD, torch.randn(8, 4), FAKE)\n    optD.zero_grad()\n    loss_d.backward()\n    optD.step()"


@pytest.mark.parametrize("d_step,line", [
    (_D_STEP.replace("FAKE", "fake"), 28),
    (_D_STEP.replace("FAKE", "fake.detach()"), None),
    # The method's own step: reported at its discriminator call (as a function's, inside).
    ("crit.d_step(netD, optD, torch.randn(8, 4), fake)", 16),
    ("crit.d_step(netD, optD, torch.randn(8, 4), fake.detach())", None),
], ids=["loss", "loss on detached", "step", "step on detached"])
def test_a_method_of_a_loss_object_on_generator_output(d_step, line):
    # A plain object's method (`crit.d_loss(netD, real, fake)`, `crit` no module whatever its
    # name) that returns what the discriminator makes of the fake, or steps it: as a function.
    source = LOSS_OBJECT.replace("D_STEP", d_step)
    found = [v.line for v in lint_text(source, RULES).violations]
    assert found == ([line] if line else []), found
    torch = pytest.importorskip("torch")
    if line:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            exec(compile(source, "<bad>", "exec"), {"torch": torch})
    else:
        exec(compile(source, "<clean>", "exec"), {"torch": torch})


LOSS_CALLS = """\
import torch
from torch import nn


class DLoss:
    def __init__(self):
        self.bce = nn.BCEWithLogitsLoss()

    def __call__(self, netD, real, fake):
        loss = self.bce(netD(real), torch.ones(8, 1)) + self.bce(netD(fake), torch.zeros(8, 1))
        loss.backward()
        return loss


class Losses:
    @staticmethod
    def d_step(netD, real, fake):
        bce = nn.BCEWithLogitsLoss()
        loss = bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))
        loss.backward()

    def run(self, netD, real, fake):
        self.d_step(netD, real, fake)


def d_loss(netD, batch):
    real, fake = batch
    bce = nn.BCEWithLogitsLoss()
    return bce(netD(real), torch.ones(8, 1)) + bce(netD(fake), torch.zeros(8, 1))


netG, netD = nn.Linear(4, 4), nn.Linear(4, 1)
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
crit = DLoss()
bce = nn.BCEWithLogitsLoss()
for _ in range(2):
    fake = netG(torch.randn(8, 4))
    optD.zero_grad()
    D_STEP
    optD.step()
    optG.zero_grad()
    loss_g = bce(netD(fake), torch.ones(8, 1))
    loss_g.backward()
    optG.step()
"""


@pytest.mark.parametrize("d_step,line", [
    # A loss object's call: its `__call__` (reported there, as a method's step is).
    ("crit(netD, torch.randn(8, 4), FAKE)", 10),
    # A static method, called on its class, on an instance, or through `self` in another method.
    ("Losses.d_step(netD, torch.randn(8, 4), FAKE)", 19),
    ("Losses().d_step(netD, torch.randn(8, 4), FAKE)", 19),
    ("Losses().run(netD, torch.randn(8, 4), FAKE)", 19),
], ids=["__call__", "static on class", "static on instance", "static through self"])
@pytest.mark.parametrize("detached", [False, True], ids=["fake", "detached"])
def test_a_loss_object_call_a_static_method_and_a_tuple_on_generator_output(d_step, line, detached):
    # Each runs the discriminator's backward through the generator (its gradients are set by
    # the D step), and the G step that reuses `fake` then fails; with `fake.detach()` it runs clean.
    source = LOSS_CALLS.replace("D_STEP", d_step.replace("FAKE", "fake.detach()" if detached else "fake"))
    found = [v.line for v in lint_text(source, RULES).violations]
    assert found == ([] if detached else [line]), found
    torch = pytest.importorskip("torch")
    if detached:
        exec(compile(source, "<clean>", "exec"), {"torch": torch})
    else:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            exec(compile(source, "<bad>", "exec"), {"torch": torch})


def test_a_helper_given_a_tuple_that_hands_its_discriminator_only_the_real_part():
    # `d_loss(netD, (real, fake))` whose helper hands `netD` only the first part: no step through
    # the generator (torch: the G step that reuses `fake` runs).  Which part of a tuple a helper
    # hands its discriminator is not followed, so a tuple is no evidence either way.
    source = LOSS_CALLS.replace("D_STEP", "d_loss(netD, (torch.randn(8, 4), fake)).backward()").replace(
        "    real, fake = batch\n", "    real, _ = batch\n").replace(
        " + bce(netD(fake), torch.zeros(8, 1))\n\n\nnetG", "\n\n\nnetG")
    assert "real, _ = batch" in source and "return bce(netD(real), torch.ones(8, 1))\n" in source
    assert [v.line for v in lint_text(source, RULES).violations] == []
    torch = pytest.importorskip("torch")
    exec(compile(source, "<clean>", "exec"), {"torch": torch})


# ------------------------------------------------------------------ what a helper gives back, on torch

GAN_LOOP = """\
netG = nn.Linear(4, 3)
netD = nn.Linear(3, 1)
optimizer_D = torch.optim.Adam(netD.parameters())
leak = False
for i in range(2):
    fake = netG(torch.randn(8, 4))
    optimizer_D.zero_grad()
    netG.zero_grad()
    loss_D = netD(torch.randn(8, 3)).pow(2).mean() + netD({passed}).pow(2).mean()
    loss_D.backward()
    leak |= any(p.grad is not None for p in netG.parameters())
    optimizer_D.step()
"""

MAYBE_DETACH = """\
def maybe_detach(x, detach=True):
    return x.detach() if detach else x
"""

# A replay buffer that gives what it is given back as it came only when it is off (`n == 0`),
# through a local variable; else a tensor of detached samples, or `x.detach()`.
BUFFER = """\
import random
class Buffer:
    def __init__(self, n):
        self.n = n
        self.data = []
    def push_and_pop(self, x):
        out = x if self.n == 0 else None
        if out is not None:
            return out
        self.data.extend(x.detach().unbind(0))
        self.data = self.data[-self.n:]
        return torch.stack(random.sample(self.data, x.size(0))) if len(self.data) >= x.size(0) else x.detach()
buf = Buffer({n})
"""


@pytest.mark.parametrize("helper, passed, leaks, default, strict", [
    # A literal default the call leaves, `if`-expression of the helper: the branch it takes.
    (MAYBE_DETACH, "maybe_detach(fake)", False, 0, 0),
    (MAYBE_DETACH, "maybe_detach(fake, detach=False)", True, 1, 1),
    (MAYBE_DETACH, "maybe_detach(fake, False)", True, 1, 1),
    (MAYBE_DETACH.replace("detach=True", "detach=False"), "maybe_detach(fake)", True, 1, 1),
    # (A partial that passes False: its own keyword, not the default, steers the helper.)
    (MAYBE_DETACH + "import functools\nno_detach = functools.partial(maybe_detach, detach=False)\n",
     "no_detach(fake)", True, 1, 1),
    # (A gradient penalty's input: detached, then made to require grad, by default.)
    (MAYBE_DETACH.replace("x.detach()", "x.detach().requires_grad_(True)"), "maybe_detach(fake)", False, 0, 0),
    (MAYBE_DETACH.replace("x.detach()", "x.detach().requires_grad_(True)"), "maybe_detach(fake, False)", True, 1, 1),
    # The buffer's pass-through depends on its state: by default its fakes do not go on.
    (BUFFER.format(n=64), "buf.push_and_pop(fake)", False, 0, 1),
    (BUFFER.format(n=0), "buf.push_and_pop(fake)", True, 0, 1),
])
def test_what_a_helper_gives_back(helper, passed, leaks, default, strict):
    code = HEAD + helper + GAN_LOOP.format(passed=passed)
    ns: dict = {}
    exec(compile(code, "<gan>", "exec"), ns)
    assert ns["leak"] is leaks
    for is_strict, expected in ((False, default), (True, strict)):
        result = lint_text(code, RULES, Options(strict=is_strict))
        assert len(result.violations) == expected, (is_strict, result.violations)


# A discriminator loss of the file that detaches the fakes under a flag it defaults to True: the
# call that leaves the flag, or passes True, keeps the generator out; one that passes False does
# not (an `if` statement, an `if`-expression, the flag after another defaulted parameter).
D_LOSS_IF = """\
def d_loss(netD, real, fake, detach_fake=True):
    if detach_fake:
        fake = fake.detach()
    return netD(real).pow(2).mean() + netD(fake).pow(2).mean()
"""
D_LOSS_IFEXP = """\
def d_loss(netD, real, fake, weight=1.0, detach=True):
    pred_fake = netD(fake.detach() if detach else fake)
    return weight * (netD(real).pow(2).mean() + pred_fake.pow(2).mean())
"""
# (GAN_LOOP's discriminator step, its loss a call of the helper.)
D_LOSS_LOOP = GAN_LOOP.replace("netD(torch.randn(8, 3)).pow(2).mean() + netD({passed}).pow(2).mean()", "{call}")


@pytest.mark.parametrize("helper, call, leaks", [
    (D_LOSS_IF, "d_loss(netD, torch.randn(8, 3), fake)", False),
    (D_LOSS_IF, "d_loss(netD, torch.randn(8, 3), fake, detach_fake=True)", False),
    (D_LOSS_IF, "d_loss(netD, torch.randn(8, 3), fake, detach_fake=False)", True),
    (D_LOSS_IF, "d_loss(netD, torch.randn(8, 3), fake, False)", True),
    (D_LOSS_IFEXP, "d_loss(netD, torch.randn(8, 3), fake)", False),
    (D_LOSS_IFEXP, "d_loss(netD, torch.randn(8, 3), fake, 0.5)", False),
    (D_LOSS_IFEXP, "d_loss(netD, torch.randn(8, 3), fake, 0.5, False)", True),
    (D_LOSS_IFEXP, "d_loss(netD, torch.randn(8, 3), fake, detach=False)", True),
])
def test_a_loss_helper_that_detaches_under_a_flag(helper, call, leaks):
    torch = pytest.importorskip("torch")
    code = HEAD + helper + D_LOSS_LOOP.format(call=call)
    ns: dict = {}
    with torch.enable_grad():
        exec(compile(code, "<gan>", "exec"), ns)
    assert ns["leak"] is leaks
    assert bool(lint_text(code, RULES, Options()).violations) is leaks


# A backward limited to the discriminator's parameters (`inputs=`), and a generator frozen by a
# loop over its parameters through `self`: nothing reaches the generator.  Run on torch.
LIMITED = """\
netG, netD = nn.Linear(4, 6), nn.Linear(6, 1)
optimizerG = torch.optim.SGD(netG.parameters(), lr=0.1)
optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
fake = netG(torch.randn(8, 4))
errD = netD(fake).mean()
optimizerD.zero_grad()
errD.backward(inputs={inputs})
optimizerD.step()
leak = any(p.grad is not None for p in netG.parameters())
errG = -netD(fake).mean()
optimizerG.zero_grad()
errG.backward()
optimizerG.step()
"""

SELF_FROZEN = """\
class WGAN:
    def __init__(self):
        self.G, self.D = nn.Linear(4, 6), nn.Linear(6, 1)
        self.d_optimizer = torch.optim.SGD(self.D.parameters(), lr=0.1)
    def step(self):
        for p in self.G.parameters():
            p.requires_grad = {flag}
        fake = self.G(torch.randn(8, 4))
        d_loss = self.D(fake).mean()
        self.d_optimizer.zero_grad()
        d_loss.backward()
        self.d_optimizer.step()
        return any(p.grad is not None for p in self.G.parameters())
leak = WGAN().step()
"""


@pytest.mark.parametrize("code, leaks, raises", [
    (LIMITED.format(inputs="list(netD.parameters())"), False, False),
    (LIMITED.format(inputs="[*netG.parameters(), *netD.parameters()]"), True, True),
    # (a container of both: its parameters are the generator's too)
    (LIMITED.format(inputs="list(nn.ModuleList([netG, netD]).parameters())"), True, True),
    (SELF_FROZEN.format(flag="False"), False, False),
    (SELF_FROZEN.format(flag="True"), True, False),
])
def test_what_reaches_the_generator_on_torch(code, leaks, raises):
    code = HEAD + code
    ns: dict = {}
    try:
        exec(compile(code, "<gan>", "exec"), ns)
    except RuntimeError as e:
        assert raises and "backward through the graph a second time" in str(e)
        assert ns["leak"] is leaks
    else:
        assert not raises and ns["leak"] is leaks
    assert bool(lint_text(code, RULES, Options()).violations) is leaks
