"""GAN roles (analysis/gan.py): which names are generators and discriminators, from their
spelling, their class and the optimizers that train them."""

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis.gan import GanNames, is_class_name, name_role, words


@pytest.mark.parametrize("name,role", [
    ("netG", "G"), ("netD", "D"), ("G", "G"), ("D", "D"), ("G_AB", "G"), ("D_A", "D"), ("generator", "G"),
    ("self.generator", "G"), ("model.G", "G"), ("gen_model", "G"), ("netG.module", "G"), ("self.net_d", "D"),
    ("critic", "D"), ("self.GAN.D_aug", "D"), ("g_ema", "G"), ("netG_A2B", "G"),
    ("d_loss", None), ("loss_G", None), ("train_D", None), ("gen_imgs", None), ("criterionGAN", None),
    ("self.model", None), ("decoder", None), ("optimizerD", None), ("GAN", None),
    # A dimension, not a discriminator: torch's `conv1d`, `dropout2d`, `max_pool3d`, `Conv2D`.
    ("F.conv1d", None), ("nn.functional.dropout2d", None), ("max_pool3d", None), ("self.Conv2D", None),
    ("D2", "D"), ("netD_2", "D"),
])
def test_module_roles_from_names(name, role):
    assert name_role(name) == role


def test_words_split_camel_case_and_underscores():
    assert words("netG_A2B") == ("net", "g", "a", "2", "b")
    assert words("SRGenerator") == ("sr", "generator")
    assert words("optimizerD") == ("optimizer", "d")
    assert words("conv1d") == ("conv", "1d") and words("BatchNorm2D") == ("batch", "norm", "2d")
    assert words("x2dis") == ("x", "2", "dis")


def test_torch_calls_with_a_dimension_give_no_discriminator_role():
    """A file that calls `F.conv1d` and `nn.functional.dropout2d` next to a generator `g(z)` has
    no discriminator: the GAN domain is not active in it (transformers' reformer and mamba2 were
    read as GANs)."""
    text = ("import torch\nimport torch.nn.functional as F\n\n"
            "def f(g, x, z, w):\n    y = F.conv1d(x, w)\n    y = torch.nn.functional.dropout2d(y)\n"
            "    return g(z) + y\n")
    assert not GanNames(ast.parse(text), text=text).active
    text2 = text.replace("F.conv1d(x, w)", "D(x)")
    assert GanNames(ast.parse(text2), text=text2).active


def test_class_names_construct_modules_they_do_not_run_them():
    assert is_class_name("Generator") and is_class_name("NLayerDiscriminator")
    assert not is_class_name("G") and not is_class_name("G_AB") and not is_class_name("netG")


def test_optimizers_give_roles_to_the_modules_they_train():
    tree = ast.parse("opt_g = torch.optim.Adam(decoder.parameters())\n"
                     "optim_1 = torch.optim.Adam(itertools.chain(netD_A.parameters(), netD_B.parameters()))\n"
                     "params = list(encoder.parameters())\n")
    names = GanNames(tree)
    assert names.module_role("decoder") == "G"
    assert names.optimizer_role("optim_1") == (True, "D")
    assert names.module_role("encoder") is None
    assert names.optimizer_role("lr_scheduler_G") == (False, None)
    assert names.optimizer_role("self.GAN.D_opt") == (True, "D")


def test_the_scan_of_a_lazy_tree_reads_only_bodies_that_name_parameters_or_a_class(monkeypatch):
    """The file scan reads the bodies where an optimizer of a module's parameters may be made
    (`_associate`) or a class defined; the others stay unread, and the roles are those of a
    whole parse."""
    from flake8_tensorcopy.analysis import lazytree

    monkeypatch.setattr(lazytree, "_MIN_CHARS", 0)
    text = textwrap.dedent("""
        import torch
        from torch import nn


        def build():
            netG, netD = nn.Linear(2, 2), nn.Linear(2, 2)
            optG = torch.optim.Adam(netG.parameters())
            optD = torch.optim.Adam(netD.parameters())
            return netG, netD, optG, optD


        def helper(x):
            return x * 2


        def make_critic():
            class Critic(nn.Module):
                pass
            return Critic()
    """)
    tree = lazytree.parse(text)
    lazy = GanNames(tree, text=text)
    read = {f.name: not lazytree.unread(f.body) for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert read == {"build": True, "helper": False, "make_critic": True}
    whole = GanNames(ast.parse(text), text=text)
    assert (lazy.opt_assoc, lazy.opt_modules, lazy.module_assoc, lazy.active) == (
        whole.opt_assoc, whole.opt_modules, whole.module_assoc, whole.active)
    assert lazy.opt_modules == {"optG": ["netG"], "optD": ["netD"]}
    assert len(lazy.class_role) == len(whole.class_role) == 1
