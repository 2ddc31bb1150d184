"""Whole-project analysis (issue 15): facts cross files through the project's own imports."""

import glob
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, tc, tool
from flake8_tensorcopy import __version__
from flake8_tensorcopy.analysis.project import Project
from flake8_tensorcopy.reach import find_root
from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.rules.base import Options

FILES = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "from .models import Critic\n",
    "PKG/models.py": """
        import torch
        from torch import nn


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 1)

            def forward(self, x):
                return self.fc(x)


        frozen = nn.Linear(3, 3).requires_grad_(False)
        """,
    "PKG/utils.py": """
        import torch


        @torch.no_grad()
        def sample(model, x):
            return model(x)
        """,
    "PKG/base.py": """
        from torch import nn


        class BaseTrainer:
            def __init__(self):
                self.model = nn.Linear(3, 2)
        """,
    "PKG/cycle_a.py": "from .cycle_b import thing\nimport torch\nvalue = torch.ones(2)\n",
    "PKG/cycle_b.py": "from .cycle_a import value\nthing = value\n",
    "PKG/train.py": """
        import torch

        import PKG.models as m
        from PKG import Critic as Reexported
        from .base import BaseTrainer
        from .cycle_a import value
        from .models import Critic, frozen
        from .utils import sample

        x = torch.randn(2, 3)
        critic = Critic()
        a = critic(x).numpy()
        b = frozen(x).numpy()
        c = sample(critic, x).numpy()
        d = m.Critic()(x).numpy()
        e = Reexported()(x).numpy()
        f = value.numpy()


        class Trainer(BaseTrainer):
            def log(self, x):
                return self.model(x).numpy()
        """,
}

EXPECTED = [("TNS101", 12), ("TNS101", 15), ("TNS101", 16), ("TNS101", 22)]


def make(root, files=FILES, package="PKG", prefix=""):
    for name, text in files.items():
        path = root / prefix / name.replace("PKG", package) if name != "pyproject.toml" else root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n").replace("PKG", package))
    return root / prefix / package / "train.py"


def engine_findings(path, root):
    text = path.read_text()
    result = lint_text(text, options=Options(), project=Project(root), path=str(path))
    assert result.error is None
    return result.violations


@pytest.mark.parametrize("layout", ["flat", "src"])
def test_facts_cross_files(tmp_path, layout):
    train = make(tmp_path, package="pkg", prefix="src" if layout == "src" else "")
    found = engine_findings(train, tmp_path)
    assert sorted((v.code, v.line) for v in found) == EXPECTED
    by_line = {v.line: v.message for v in found}
    assert "(Critic: an nn.Module, models.py:5)" in by_line[12]
    # Without the project, the imported names are unknown: nothing is reported.
    assert lint_text(train.read_text()).violations == []


def test_project_root_and_module_names(tmp_path):
    train = make(tmp_path, package="pkg", prefix="src")
    assert find_root(str(train)) == str(tmp_path)
    project = Project(str(tmp_path))
    assert project.module_name(str(train)) == "pkg.train"
    assert project.module_name(str(train.parent / "__init__.py")) == "pkg"
    assert project.absolute("models", 1, "pkg.train", False) == "pkg.models"
    assert project.absolute(None, 2, "pkg.sub.mod", False) == "pkg"
    assert project.path_of("numpy") is None and not project.owns("torch.nn")


def test_an_import_cycle_terminates(tmp_path):
    make(tmp_path, package="pkg")
    project = Project(str(tmp_path))
    assert project.summary("pkg.cycle_a") is not None
    assert project.fact("pkg.cycle_b.thing") is not None


def test_packages_that_re_export_from_one_another_in_a_cycle_terminate(tmp_path):
    # `from pkg import X`, pkg/__init__.py re-exporting X from pkg.sub, whose __init__.py takes
    # it back from pkg (through.Through._trigger_plan follows re-exports by import lines).
    files = {"pyproject.toml": "", "PKG/__init__.py": "from .sub import X\n", "PKG/sub/__init__.py": "from .. import X\n",
             "PKG/train.py": """
                 import torch
                 from PKG import X
                 m = torch.nn.Linear(2, 2)
                 opt = torch.optim.SGD(m.parameters(), lr=0.1)
                 s = m.state_dict()
                 X(m)
                 opt.step()
                 print(s)
                 """}
    train = make(tmp_path, files=files, package="pkg")
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == [("TNS501", 5)]


def test_the_cli_uses_the_project(tmp_path, capsys):
    train = make(tmp_path, package="pkg")
    proc = tc(capsys, "check", "--no-cache", str(train), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = sorted(int(line.split(":")[1]) for line in proc.stdout.splitlines() if ": TNS" in line)
    assert lines == [line for _, line in EXPECTED]


def test_the_flake8_plugin_uses_the_project(tmp_path):
    train = make(tmp_path, package="pkg")
    proc = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(row)d:%(code)s", str(train)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert sorted(tuple(reversed(line.split(":"))) for line in proc.stdout.split()) == [
        (code, str(line)) for code, line in EXPECTED]


def test_editing_a_module_updates_its_dependents_in_the_cli_cache(tmp_path, capsys):
    train = make(tmp_path, package="pkg")

    def run():
        return tc(capsys, "check", str(train), cwd=tmp_path)

    first = run()
    assert first.returncode == 1
    models = tmp_path / "pkg" / "models.py"
    models.write_text(models.read_text().replace("frozen = nn.Linear(3, 3).requires_grad_(False)",
                                                 "frozen = nn.Linear(3, 3)"))
    second = run()
    assert second.stdout.count(": TNS101") == first.stdout.count(": TNS101") + 1, (first.stdout, second.stdout)
    os.utime(models)  # nothing changed again: the cached result is the same
    assert run().stdout == second.stdout


EMA = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/utils.py": """
        import torch


        def update_ema(ema, model, decay=0.99):
            for e, p in zip(ema.parameters(), model.parameters()):
                e.mul_(decay).add_(p.detach(), alpha=1 - decay)
    """,
    "PKG/train.py": """
        import copy

        from torch import nn

        from .utils import update_ema


        def main():
            model = nn.Linear(2, 2)
            ema = copy.deepcopy(model)
            ema.requires_grad_(False)
            update_ema(ema, model)
    """,
}


def test_a_helper_is_checked_again_when_a_file_that_calls_it_changes(tmp_path, capsys):
    # What the other files pass (a frozen EMA, then a live one) decides what the helper's file
    # reports: the file's result rests on theirs, and is not kept past a change of theirs.
    make(tmp_path, EMA)
    utils, train = tmp_path / "PKG" / "utils.py", tmp_path / "PKG" / "train.py"

    def run():
        return tc(capsys, "check", str(utils), cwd=tmp_path)

    assert run().returncode == 0
    train.write_text(train.read_text().replace("    ema.requires_grad_(False)\n", ""))
    live = run()
    assert live.returncode == 1 and "utils.py:6:9: TNS401" in live.stdout, live.stdout
    assert tc(capsys, "check", "--strict", str(utils), cwd=tmp_path).returncode == 1
    train.write_text(train.read_text().replace("    update_ema(ema, model)\n",
                                               "    ema.requires_grad_(False)\n    update_ema(ema, model)\n"))
    assert run().returncode == 0


RELAY = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/convert.py": """
        def to_np(t):
            return t.cpu().numpy()
    """,
    "PKG/evaluate.py": """
        from .convert import to_np


        def run(model, x):
            return to_np(model(x))
    """,
    "PKG/main.py": """
        import torch
        from torch import nn

        from .evaluate import run

        arr = run(nn.Linear(3, 2), torch.randn(4, 3))
    """,
}


def test_a_call_is_checked_again_when_a_module_two_imports_away_changes(tmp_path, capsys):
    # main.py calls evaluate.run, which hands what it computes to convert.to_np, which calls
    # .numpy() on it: main's result rests on convert.py too, which main does not import.
    make(tmp_path, RELAY)
    main, convert = tmp_path / "PKG" / "main.py", tmp_path / "PKG" / "convert.py"

    def run():
        return tc(capsys, "check", str(main), cwd=tmp_path)

    first = run()
    assert first.returncode == 1 and "main.py:6:11: TNS101" in first.stdout and "evaluate.py:5" in first.stdout, \
        first.stdout
    convert.write_text(convert.read_text().replace("t.cpu()", "t.detach().cpu()"))
    assert run().returncode == 0
    convert.write_text(convert.read_text().replace("t.detach().cpu()", "t.cpu()"))
    assert run().stdout == first.stdout
    proc = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(row)d:%(code)s", str(main)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.stdout.split() == ["6:TNS101"], proc.stdout + proc.stderr


THROUGH = {
    "pyproject.toml": "",
    "PKG/__init__.py": "from .models import build, Trainer\n",
    "PKG/models.py": """
        import torch
        from torch import nn


        def build():
            return nn.Linear(4, 2)


        class Trainer:
            def __init__(self):
                self.model = build()
                self.losses = []

            def step(self, x):
                loss = self.model(x).sum()
                loss.backward()
                self.losses.append(loss)
    """,
    "PKG/helpers.py": """
        def scale(x):
            return x * 2
    """,
    "PKG/evaluate.py": """
        import numpy as np

        from . import build
        from .models import Trainer


        def predict(x):
            return build()(x).numpy()


        class Reporting(Trainer):
            def report(self):
                return np.mean(self.losses)


        def show(t):
            return t.numpy()
    """,
    "PKG/plain.py": """
        from .helpers import scale


        def predict(x):
            return scale(x).numpy()
    """,
}


def test_a_batch_lint_leaves_no_reference_cycle_to_freeze(tmp_path, monkeypatch):
    """In a batch (a CLI worker, a flake8 process), after a file whose check built summaries of
    project modules, the engine freezes what is left (lint_text), collecting it first only where
    a fix was written out (lowering.py's transformers leave cycles): a cycle of the analysis would
    be frozen for good, never freed.  Linting two projects' files, every rule example and every
    fixture, without fixes, leaves none (the projects themselves, which live as long as a batch,
    are kept; nothing is frozen here, so that the collector sees all the rest)."""
    import gc

    from flake8_tensorcopy.rules.base import all_rules

    make(tmp_path / "a", package="pkg")
    make(tmp_path / "b", files=THROUGH, package="pkg")
    sources = [(str(p), p.read_text()) for p in sorted(tmp_path.rglob("*.py"))]
    for cls in all_rules():
        sources += [(None, textwrap.dedent(e.code)) for e in (*cls.VALID, *cls.INVALID)]
    sources += [(None, open(p).read()) for p in sorted(glob.glob(os.path.join(ROOT, "fixtures", "*.py")))]

    def lint_all() -> dict:
        projects: dict = {}
        for path, text in sources:
            root = str(tmp_path / ("a" if "/a/" in path else "b")) if path else str(tmp_path)
            project = projects.get(root)
            if project is None:
                project = projects[root] = Project(root, Options(), batch=True)
            project.begin()
            lint_text(text, options=Options(), project=project, path=path or os.path.join(root, "example.py"),
                      fixes=False)
        return projects

    monkeypatch.setattr(gc, "freeze", lambda: None)
    lint_all()  # (what the first run imports makes cycles of its own: classes, modules)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        projects = lint_all()
        gc.collect()
        garbage = [type(o).__name__ + " " + getattr(o, "__qualname__", "") for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert sum(p.built for p in projects.values()) > 0  # (summaries were built: the engine froze)
    assert garbage == []


def test_a_file_that_never_mentions_torch_uses_it_through_its_project(tmp_path, capsys):
    """evaluate.py imports no torch: the model `build` makes (re-exported by the package's
    `__init__.py`) and the losses `Trainer.step` keeps are torch's all the same.  plain.py
    imports only a module that does not use torch either: it is not analysed (`.numpy()` there
    may be TensorFlow's), and neither is what a file that does not import torch gets from its
    project unknown (--strict)."""
    make(tmp_path, files=THROUGH, package="pkg")
    evaluate, plain = tmp_path / "pkg" / "evaluate.py", tmp_path / "pkg" / "plain.py"
    expected = [("TNS101", 8), ("TNS103", 13)]
    assert [(v.code, v.line) for v in engine_findings(evaluate, tmp_path)] == expected
    assert engine_findings(plain, tmp_path) == []
    proc = tc(capsys, "check", "--no-cache", "--strict", str(evaluate), str(plain), cwd=tmp_path)
    assert [(line.split(": ")[1].split()[0], int(line.split(":")[1])) for line in proc.stdout.splitlines()
            if ": TNS" in line] == expected
    flake8 = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(row)d:%(code)s", str(evaluate),
                             str(plain)], capture_output=True, text=True, cwd=tmp_path)
    assert sorted(tuple(reversed(line.split(":"))) for line in flake8.stdout.split()) == [
        (code, str(line)) for code, line in expected]


def test_which_imports_lead_to_torch(tmp_path):
    from flake8_tensorcopy.reach import torch_through_project

    files = {
        "pyproject.toml": "",
        "PKG/__init__.py": "from .models import Net\nfrom .config import Config\nfrom .tools import *\n",
        "PKG/models.py": "import os, torch\n\n\nclass Net(torch.nn.Module):\n    pass\n",
        "PKG/config.py": "if AVAILABLE:\n    import torch\n\n\nclass Config:\n    pass\n",
        "PKG/tools.py": "from .models import Net\n\n\ndef helper():\n    return 1\n",
        "PKG/sub/__init__.py": "",
        "PKG/sub/deep.py": "from torch import nn\n",
    }
    make(tmp_path, files=files, package="pkg")
    here = str(tmp_path / "pkg" / "user.py")
    leads = {
        "from pkg import Net": True,  # re-exported by the package
        "from . import Net": True,
        "from .models import Net": True,
        "import pkg.models as m": True,
        "from .sub import deep": True,  # a module
        "from ..pkg.sub.deep import nn": True,
        "from pkg import helper": False,  # star-re-exported from tools.py, which imports no torch
        "from pkg import Config": False,  # config.py imports torch only under a condition
        "import pkg": False,  # the package's own module imports no torch
        "from .tools import helper": False,  # tools.py imports from a module that does: not followed
        "import numpy as np": False,
    }
    for line, expected in leads.items():
        looked = []
        assert torch_through_project(line + "\n", here, str(tmp_path), looked) is expected, line
        assert all(p.startswith(str(tmp_path)) for p in looked)
    assert not torch_through_project("from pkg import Net\n", None, str(tmp_path))
    # An import for type checkers only does not run (a package's `__init__.py` that loads its
    # modules lazily): nothing of the file comes from it.  Its `else:` branch runs.
    for text, expected in (("if TYPE_CHECKING:\n    from .models import Net\n", False),
                           ("if typing.TYPE_CHECKING:  # types\n\n    # models\n    from .models import *\n", False),
                           ("if TYPE_CHECKING:\n    pass\nelse:\n    from .models import Net\n", True),
                           ("if TYPE_CHECKING:\n    import os\nfrom .models import Net\n", True),
                           ("if not TYPE_CHECKING:\n    from .models import Net\n", True)):
        looked = []
        assert torch_through_project(text, here, str(tmp_path), looked) is expected, text
        assert bool(looked) is expected, text


def test_a_re_export_met_far_first_is_searched_again_where_it_is_met_nearer(tmp_path):
    # `W` of b.py is `Z` of t.py, which imports torch, four re-exports away: beyond the depth
    # searched.  `Z` of m.py is one away.  A file that imports both leads to torch whichever
    # import is searched first (the search meets m.py through b.py at depth 3, and searched it
    # no further there).
    from flake8_tensorcopy.reach import torch_through_project

    files = {
        "pyproject.toml": "",
        "PKG/__init__.py": "",
        "PKG/t.py": "import torch\n\n\nclass Z:\n    pass\n",
        "PKG/m.py": "from .t import Z\n",
        "PKG/e.py": "from .m import Z\n",
        "PKG/c.py": "from .e import Z\n",
        "PKG/b.py": "from .c import Z as W\n",
    }
    make(tmp_path, files=files, package="pkg")
    here = str(tmp_path / "pkg" / "user.py")
    assert not torch_through_project("from pkg.b import W\n", here, str(tmp_path))
    assert torch_through_project("from pkg.m import Z\n", here, str(tmp_path))
    for text in ("from pkg.m import Z\nfrom pkg.b import W\n", "from pkg.b import W\nfrom pkg.m import Z\n"):
        looked = []
        assert torch_through_project(text, here, str(tmp_path), looked), text
        assert str(tmp_path / "pkg" / "t.py") in looked, text


def test_a_name_a_module_defines_is_its_own_whatever_else_its_text_imports(tmp_path):
    # auto.py defines `AutoThing` (no bases) and spells `from pkg import AutoThing` in its
    # docstring and in a function: the class is auto.py's own, which imports no torch.  The
    # package's `__init__.py` star-imports a module that does, and was searched for the name
    # (transformers' `AutoTokenizer`: 557 model packages read for a tokenizer's file).
    from flake8_tensorcopy.reach import torch_through_project

    files = {
        "pyproject.toml": "",
        "PKG/__init__.py": "from .net import *\n",
        "PKG/net.py": "import torch\n\n\nclass AutoThing(torch.nn.Module):\n    pass\n",
        "PKG/auto.py": ('"""Use it as\n\nfrom pkg import AutoThing\n"""\n\n\nclass AutoThing:\n'
                        '    def load(self):\n        from pkg import AutoThing\n\n\ndef build():\n    pass\n'),
        "PKG/base.py": "import torch\n\n\nclass Base(torch.nn.Module):\n    pass\n",
        "PKG/derived.py": "from .base import Base\nfrom pkg import Derived\n\n\nclass Derived(Base):\n    pass\n",
    }
    make(tmp_path, files=files, package="pkg")
    here = str(tmp_path / "pkg" / "user.py")
    for text, expected in (("from pkg.auto import AutoThing\n", False),
                           ("from pkg.auto import build\n", False),
                           ("from pkg import AutoThing\n", True),  # the package's: net.py's
                           ("from pkg.derived import Derived\n", True)):  # its base imports torch
        looked = []
        assert torch_through_project(text, here, str(tmp_path), looked) is expected, text
        assert (str(tmp_path / "pkg" / "net.py") in looked) is (text == "from pkg import AutoThing\n"), text


def test_a_module_that_starts_using_torch_rechecks_its_importers_in_the_cli_cache(tmp_path, capsys):
    make(tmp_path, files=THROUGH, package="pkg")
    plain = tmp_path / "pkg" / "plain.py"
    assert tc(capsys, "check", "--strict", str(plain), cwd=tmp_path).returncode == 0
    helpers = tmp_path / "pkg" / "helpers.py"
    helpers.write_text("import torch\n\n\ndef scale(x):\n    return torch.nn.Linear(2, 2)(x)\n")
    proc = tc(capsys, "check", "--strict", str(plain), cwd=tmp_path)
    assert proc.returncode == 1 and ":5:12: TNS101" in proc.stdout, proc.stdout



def test_a_module_that_starts_using_torch_is_seen_by_the_next_flake8_run_in_the_process(tmp_path, monkeypatch):
    # Two flake8 runs in one process (flake8's own API, an editor integration that keeps a
    # process): what reach.py found of the project's files in the first may be stale in the
    # second, which starts afresh (the plugin's parse_options, once a run).
    from flake8.main.cli import main as flake8_main

    make(tmp_path, files=THROUGH, package="pkg")
    monkeypatch.chdir(tmp_path)
    plain = str(tmp_path / "pkg" / "plain.py")

    def flake8_output() -> str:
        out = tmp_path / "flake8.txt"
        assert flake8_main(["--isolated", "--select", "TNS", "--tensorcopy-no-cache", "--output-file", str(out),
                            plain]) in (0, 1)
        return out.read_text()

    assert flake8_output() == ""
    (tmp_path / "pkg" / "helpers.py").write_text("import torch\n\n\ndef scale(x):\n    return torch.nn.Linear(2, 2)(x)\n")
    assert ":5:12: TNS101" in flake8_output()

CROSSING = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/parts.py": """
        import torch
        from torch import nn


        class Holder(nn.Module):
            def __init__(self, width=3):
                super().__init__()
                self.net = nn.Linear(width, 1)
                self.width = width


        double = lambda t: t * 2


        def train_step(model, opt, x):
            model(x).sum().backward()
            opt.step()


        def other_step(model, opt, x):
            model(x).sum().backward()
            opt.step()
        """,
    "PKG/train.py": """
        import copy

        import torch

        from .parts import Holder, double, other_step, train_step


        class Local(Holder):
            def log(self, x):
                return self.net(x).numpy()


        def run(x, opt, flag):
            model = Holder()
            snap = model.state_dict()
            train_step(model, opt, x)
            step = train_step if flag else other_step
            step(model, opt, x)
            y = double(x)
            y += 1
            return snap, y
        """,
}


def test_what_crosses_files_late_is_evaluated_in_its_own_module(tmp_path):
    """Regressions found on the corpus: a class's attributes inherited from another module are
    computed after that module's walk ended; a function another module made without a `def`
    (two functions joined at a branch) is called; a function of another module is called where the snapshot domain
    asks whether it steps an optimizer.  (`train_step` of parts.py steps the optimizer it is
    handed: the snapshot `run` returns moved with the weights, as with a `train_step` of the same
    file.)"""
    train = make(tmp_path, files=CROSSING, package="pkg")
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == [("TNS101", 10), ("TNS501", 15)]


def test_a_notebook_uses_the_project(tmp_path, capsys):
    import json

    from flake8_tensorcopy import cli

    make(tmp_path, package="pkg")
    cell = "import torch\nfrom pkg.models import Critic\n\nout = Critic()(torch.randn(2, 3)).numpy()\n"
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": cell.splitlines(True)}],
          "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "explore.ipynb"
    path.write_text(json.dumps(nb))
    code = cli.main(["check", "--no-cache", "--isolated", "--project-root", str(tmp_path), str(path)])
    out = capsys.readouterr().out
    assert code == 1 and f"{path}:cell 1:4:7: TNS101" in out and "(Critic: an nn.Module, models.py:5)" in out, out


PER_CALL = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/helpers.py": """
        import torch


        def double(x):
            return x * 2


        def make(n, device=None):
            return torch.arange(n, device=device)


        def run(model, x):
            return model(x)
        """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .helpers import double, make, run

        w = torch.ones(3, requires_grad=True)
        a = double(w).numpy()
        b = double(torch.ones(3)).numpy()
        c = make(3, "cpu").numpy()
        dev = torch.device("cuda")
        d = make(3, dev).numpy()
        e = run(nn.Linear(3, 3), torch.ones(3)).numpy()
        """,
}


def test_a_call_of_another_modules_function_returns_what_its_arguments_make(tmp_path):
    # helpers.py's summaries know nothing of x, device or model; each call passes something
    # definite: double(w) requires grad, make(3, dev) may be on an accelerator, run(nn.Linear(3,
    # 3), x) is a module's output that requires grad; double(torch.ones(3)) and make(3, "cpu")
    # are harmless.  (An instance of a class of this file is not passed on: its definition
    # means nothing to helpers.py's walker.)
    train = make(tmp_path, files=PER_CALL, package="pkg")
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == [("TNS101", 7), ("TNS102", 11), ("TNS101", 12)]
    assert found[0].message.startswith("double(w) (double(), helpers.py:4) requires grad")  # made in helpers.py
    assert found[0].fix.safety == "safe"
    project = Project(str(tmp_path))
    lint_text(train.read_text(), options=Options(), project=project, path=str(train))
    assert str(tmp_path / "pkg" / "helpers.py") in project.touched  # the cache re-checks it on a change


def test_a_caller_with_nothing_to_report_passes_what_another_module_returns(tmp_path):
    # `main` is walked only to find what it passes to `_to_numpy`: its model is built by
    # models.py's `build`, whose summary says it is an nn.Module.
    files = {name: THROUGH[name] for name in ("pyproject.toml", "PKG/__init__.py", "PKG/models.py")}
    files.update({
        "PKG/train.py": """
            import torch
            from .models import build

            def _to_numpy(t):
                return t.numpy()

            def main():
                model = build()
                return _to_numpy(model(torch.randn(2, 4)))
        """,
    })
    train = make(tmp_path, files=files, package="pkg")
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == [("TNS101", 5)]
    # Where the fact comes from: this file's call, and the function of models.py that made it.
    assert "(passed at line 9; build(), models.py:5)" in found[0].message


# ----------------------------------------------------------------------------- the summary cache


GENERATORS = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/data.py": """
        import torch
        from torch import nn

        model = nn.Linear(4, 2)


        def predictions(batches):
            for b in batches:
                yield model(b)
        """,
    "PKG/train.py": """
        import torch

        from .data import predictions

        batches = [torch.randn(2, 4)]
        for out in predictions(batches):
            arr = out.numpy()
        with torch.no_grad():
            for out in predictions(batches):
                kept = out
        fine = kept.numpy()
        """,
}


def test_what_another_modules_generator_yields(tmp_path):
    """A generator of another module gives what it yields, computed as the loop iterates it."""
    train = make(tmp_path, files=GENERATORS, package="pkg")
    assert [(v.code, v.line) for v in engine_findings(train, tmp_path)] == [("TNS101", 7)]


CONSTRUCTORS = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/base.py": """
        class BaseTrainer:
            def __init__(self, model, device="cpu"):
                self.model = model
                self.device = device

            def predict(self, x):
                return self.model(x)
        """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .base import BaseTrainer


        class Trainer(BaseTrainer):
            def __init__(self, model, lr):
                super().__init__(model)
                self.lr = lr

            def evaluate(self, x):
                return self.model(x).numpy()


        class Inherits(BaseTrainer):
            def evaluate(self, x):
                return self.model(x).numpy()


        def main():
            Trainer(nn.Linear(4, 2), 0.1).evaluate(torch.randn(1, 4))


        def main2():
            Inherits(nn.Linear(4, 2), device="cpu").evaluate(torch.randn(1, 4))
        """,
}


def test_a_subclass_has_what_a_base_in_another_module_makes_of_its_constructors_arguments(tmp_path, capsys):
    # Trainer passes its model on (`super().__init__(model)`), Inherits takes BaseTrainer's
    # constructor as it is: either way `self.model` is what this file's calls passed.
    train = make(tmp_path, files=CONSTRUCTORS, package="pkg")
    expected = [("TNS101", 13), ("TNS101", 18)]
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == expected
    assert "passed at line 22" in found[0].message and "passed at line 26" in found[1].message
    proc = tc(capsys, "check", "--no-cache", str(train), cwd=tmp_path)
    assert sorted(("TNS101", int(line.split(":")[1])) for line in proc.stdout.splitlines() if ": TNS" in line) == expected
    proc = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(code)s:%(row)d", str(train)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert sorted(tuple(line.split(":")) for line in proc.stdout.split()) == [(c, str(n)) for c, n in expected]
    for call in ("main()", "main2()"):  # what the messages say, on torch
        run = subprocess.run([sys.executable, "-c", f"from pkg.train import main, main2; {call}"],
                             capture_output=True, text=True, cwd=tmp_path)
        assert "RuntimeError: Can't call numpy() on Tensor that requires grad" in run.stderr, run.stderr
    # A base that sets the attribute elsewhere too (`freeze()`) says no more than its own walk,
    # nor one that freezes what it was passed.
    base = tmp_path / "pkg" / "base.py"
    plain = base.read_text()
    base.write_text(plain + "\n    def freeze(self):\n        self.model = self.model.requires_grad_(False)\n")
    assert engine_findings(train, tmp_path) == []
    base.write_text(plain.replace("        self.device = device\n", "        self.device = device\n"
                                  "        for p in self.model.parameters():\n            p.requires_grad = False\n"))
    assert engine_findings(train, tmp_path) == []
    for call in ("main()", "main2()"):
        run = subprocess.run([sys.executable, "-c", f"from pkg.train import main, main2; {call}"],
                             capture_output=True, text=True, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    # A method that uses the model, or switches it to training, changes nothing of that; one
    # that moves it does (where it lives is no longer what the call passed).
    base.write_text(plain + "\n    def fit(self, x):\n        self.model.train()\n        return self.model(x)\n")
    assert [(v.code, v.line) for v in engine_findings(train, tmp_path)] == expected
    base.write_text(plain + "\n    def move(self):\n        self.model.to('cuda')\n")
    assert engine_findings(train, tmp_path) == []


FACTORIES = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/models.py": """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self, width=3):
                super().__init__()
                self.fc = nn.Linear(width, 1)

            def forward(self, x):
                return self.fc(x)

            @classmethod
            def build(cls, width=3):
                return cls(width)

            @staticmethod
            def make():
                return Net()

            @classmethod
            def widths(cls):
                return [3, 4]

            @classmethod
            def maybe(cls, ok):
                if ok:
                    return cls()
                return None
        """,
    "PKG/train.py": """
        import torch

        from .models import Net


        def main():
            x = torch.randn(2, 3)
            print(Net.build()(x).numpy())
            print(Net.make()(x).numpy())
            print(Net.maybe(True)(x).numpy())
            print(Net.widths())
        """,
}


def test_a_factory_of_another_modules_class_makes_an_instance(tmp_path, capsys):
    # `build` and `make` return the class called (`cls(...)`, `Net()`): an instance of Net, whose
    # output requires grad.  `maybe` may return None: not told.
    train = make(tmp_path, files=FACTORIES, package="pkg")
    where = "(Net: an nn.Module, models.py:5)"
    expected = [("TNS101", 8, f"Net.build()(x) {where} requires grad, so .numpy() raises RuntimeError; "
                 "use Net.build()(x).detach().numpy()"),
                ("TNS101", 9, f"Net.make()(x) {where} requires grad, so .numpy() raises RuntimeError; "
                 "use Net.make()(x).detach().numpy()")]
    _reported_everywhere(train, expected, capsys, tmp_path)
    # With the summary cache warm, the same.
    for _ in range(2):
        proc = tc(capsys, "check", str(train), cwd=tmp_path)
        assert [int(line.split(":")[1]) for line in proc.stdout.splitlines() if ": TNS" in line] == [8, 9]
    for line in (8, 9):  # what the messages say, on torch
        only = "\n".join(l for i, l in enumerate(train.read_text().splitlines(), 1) if i < 8 or i == line)
        only = only.replace("from .models import", "from pkg.models import")
        run = subprocess.run([sys.executable, "-c", f"{only}\nmain()"], capture_output=True, text=True, cwd=tmp_path)
        assert "RuntimeError: Can't call numpy() on Tensor that requires grad" in run.stderr, run.stderr


def _reported_everywhere(path, expected, capsys, tmp_path) -> list:
    """The engine, the command line and flake8 report `expected` ([(code, line, message)]) in
    `path`; the engine's findings."""
    found = engine_findings(path, tmp_path)
    assert [(v.code, v.line, v.message) for v in found] == expected
    _same_from_the_cli_and_flake8(path, expected, capsys, tmp_path)
    return found


def _same_from_the_cli_and_flake8(train, expected, capsys, tmp_path) -> None:
    """The command line and flake8 report `expected` ([(code, line, message)]) in `train`."""
    proc = tc(capsys, "check", "--no-cache", str(train), cwd=tmp_path)
    assert [tuple(line.split(":")[1:2]) + (line.split(" ", 2)[1],) for line in proc.stdout.splitlines()
            if ": TNS" in line] == [(str(line), code) for code, line, _ in expected]
    flake8 = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(row)d:%(code)s", str(train)],
                            capture_output=True, text=True, cwd=tmp_path)
    assert flake8.stdout.split() == [f"{line}:{code}" for code, line, _ in expected]


SINKS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/utils.py": """
        import torch


        def to_numpy(t):
            return t.numpy()


        def to_numpy_ok(t):
            return t.detach().cpu().numpy()


        def to_numpy_maybe(t, detach=False):
            if detach:
                t = t.detach()
            return t.numpy()


        def unrelated(t):
            return torch.ones(2).numpy(), t


        def log_hist(t, step):
            values = t.cpu().numpy()
            return values.mean(), step
    """,
    "PKG/arrays.py": """
        import numpy as np


        def to_array(t):
            return np.asarray(t)


        def to_array_ok(t):
            return np.asarray(t.detach())
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        import PKG.utils as U
        from .arrays import to_array, to_array_ok
        from .utils import to_numpy, to_numpy_ok, to_numpy_maybe, unrelated


        def step(x):
            model = nn.Linear(3, 2)
            out = model(x)
            a = to_numpy(out)
            b = to_numpy_ok(out)
            c = to_numpy_maybe(out, detach=True)
            d = unrelated(out)
            e = U.log_hist(out * 2, 3)
            f = to_numpy(out.detach())
            g = to_numpy(x)
            with torch.no_grad():
                h = to_numpy(model(x))
            return a, b, c, d, e, f, g, h, to_array(out), to_array_ok(out)
    """,
}
SINK_FINDINGS = [("TNS101", 12, "out (to_numpy() calls .numpy() on it, utils.py:5) requires grad, so .numpy() raises "
                                "RuntimeError; use out.detach()"),
                 ("TNS101", 16, "out * 2 (U.log_hist() calls .numpy() on it, utils.py:23) requires grad, so .numpy() "
                                "raises RuntimeError; use (out * 2).detach()"),
                 ("TNS103", 21, "to_array() on out, which requires grad (a NumPy call in it converts it, arrays.py:5) "
                                "raises RuntimeError; use out.detach()")]


def test_a_call_of_a_name_imported_for_type_checkers_only_is_not_followed(tmp_path):
    # `to_numpy` imported under `if TYPE_CHECKING:` is no name at run time: its call raises
    # NameError before any `.numpy()`.  A file whose only imports of the project's functions are
    # such does not call them (reach.runtime_imports).
    train = make(tmp_path, files=SINKS, package="pkg")
    runtime = train.read_text().replace("import pkg.utils as U\n", "").replace("e = U.log_hist(out * 2, 3)", "e = 0") \
        .replace("from .arrays import to_array, to_array_ok\n", "").replace(", to_array(out), to_array_ok(out)", "")
    typed = runtime.replace("from .utils import to_numpy, to_numpy_ok, to_numpy_maybe, unrelated\n",
                            "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                            "    from .utils import to_numpy, to_numpy_ok, to_numpy_maybe, unrelated\n")
    found = {}
    for name, text in (("runtime", runtime), ("typed", typed)):
        train.write_text(text)
        project = Project(str(tmp_path))
        found[name] = [v.code for v in lint_text(text, options=Options(), project=project, path=str(train)).violations]
    assert found == {"runtime": ["TNS101"], "typed": []}  # to_numpy(out)


def test_a_call_passes_a_tensor_that_requires_grad_to_another_modules_numpy(tmp_path, capsys):
    # Reported at the argument of the call, in the file that passes it: utils.py alone cannot
    # know (its parameter is of unknown origin).  Not where the function detaches first, where it
    # may (`to_numpy_maybe`: `detach=True` is not followed), where its `.numpy()` is on something
    # else, for a tensor that does not require grad, nor under no_grad (as TNS101 itself).
    train = make(tmp_path, files=SINKS, package="pkg")
    found = _reported_everywhere(train, SINK_FINDINGS, capsys, tmp_path)
    assert found[0].col == 17 and found[0].fix is None  # `out` of `to_numpy(out)`
    project = Project(str(tmp_path))
    lint_text(train.read_text(), options=Options(), project=project, path=str(train))
    assert str(tmp_path / "pkg" / "utils.py") in project.touched
    # Editing the function (it detaches now) updates the cached result of the file that calls it.
    first = tc(capsys, "check", str(train), cwd=tmp_path).stdout
    assert first.count(": TNS101") == 2 and first.count(": TNS103") == 1
    utils = tmp_path / "pkg" / "utils.py"
    utils.write_text(utils.read_text().replace("return t.numpy()\n\n\ndef to_numpy_ok",
                                               "return t.detach().numpy()\n\n\ndef to_numpy_ok"))
    again = tc(capsys, "check", str(train), cwd=tmp_path).stdout
    assert again.count(": TNS101") == 1 and again.count(": TNS103") == 1


def test_what_a_call_passes_to_another_modules_numpy_raises_on_real_torch(tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=SINKS, package="sinkpkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    from sinkpkg import arrays, utils

    out = torch.nn.Linear(3, 2)(torch.randn(4, 3))
    for bad in (lambda: utils.to_numpy(out), lambda: utils.log_hist(out * 2, 3), lambda: arrays.to_array(out)):
        with pytest.raises(RuntimeError, match="requires grad"):
            bad()
    utils.to_numpy(out.detach())
    utils.log_hist((out * 2).detach(), 3)
    arrays.to_array(out.detach())
    utils.to_numpy_maybe(out, detach=True)  # (not reported: it runs)


UPDATES = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/optim.py": """
        import torch


        def sgd_step(params, lr):
            for p in params:
                p -= lr * p.grad


        def sgd_step_ok(params, lr):
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad


        def sgd_data(params, lr):
            for p in params:
                p.data -= lr * p.grad


        def nudge(w, lr):
            w.sub_(lr * w.grad)


        def clip(params, limit):
            for p in params:
                p.grad.clamp_(-limit, limit)
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .optim import clip, nudge, sgd_data, sgd_step, sgd_step_ok


        def train(x):
            model = nn.Linear(3, 2)
            model(x).sum().backward()
            clip(model.parameters(), 1.0)
            sgd_step(model.parameters(), 0.1)
            sgd_step_ok(model.parameters(), 0.1)
            sgd_data(list(model.parameters()), 0.1)
            nudge(model.weight, 0.1)
            sgd_step([torch.ones(2)], 0.1)
            with torch.no_grad():
                sgd_step(model.parameters(), 0.1)
            return model
    """,
}
UPDATE_FINDINGS = [
    ("TNS401", 11, "in-place write to each of model.parameters() (in sgd_step(), optim.py:6), a leaf that requires "
                   "grad, raises RuntimeError; wrap it in `with torch.no_grad():`"),
    ("TNS401", 14, "in-place write to model.weight (in nudge(), optim.py:21), a leaf that requires grad, raises "
                   "RuntimeError; wrap it in `with torch.no_grad():`"),
]


def test_a_call_passes_parameters_to_another_modules_manual_update(tmp_path, capsys):
    # A manual SGD step in another module, given the model's parameters (or one of them), writes
    # to each in place without no_grad: reported at the argument, in the file that passes them.
    # Not where the helper turns grad off, writes through `.data` or to the gradient, for
    # tensors that do not require grad, nor under no_grad.
    train = make(tmp_path, files=UPDATES, package="pkg")
    found = _reported_everywhere(train, UPDATE_FINDINGS, capsys, tmp_path)
    assert found[0].col == 13 and found[0].fix is None  # `model.parameters()` of the call
    # Fixed in the helper: the caller's cached result follows.
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS401") == 2
    optim = tmp_path / "pkg" / "optim.py"
    optim.write_text(optim.read_text().replace("def nudge(w, lr):\n", "@torch.no_grad()\ndef nudge(w, lr):\n"))
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS401") == 1


def test_what_a_call_passes_to_another_modules_manual_update_raises_on_real_torch(tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=UPDATES, package="updpkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    from updpkg import optim

    model = torch.nn.Linear(3, 2)
    model(torch.randn(4, 3)).sum().backward()
    for bad in (lambda: optim.sgd_step(model.parameters(), 0.1), lambda: optim.nudge(model.weight, 0.1)):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            bad()
    optim.clip(model.parameters(), 1.0)
    optim.sgd_step_ok(model.parameters(), 0.1)
    optim.sgd_data(list(model.parameters()), 0.1)
    with torch.no_grad():
        optim.sgd_step(model.parameters(), 0.1)


FLAGGED = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/optim.py": """
        def step(params, lr, cond=False):
            for p in params:
                if cond:
                    p -= lr * p.grad
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .optim import step


        def train(x):
            model = nn.Linear(3, 2)
            model(x).sum().backward()
            step(model.parameters(), 0.1)
            step(model.parameters(), 0.1, False)
            step(model.parameters(), 0.1, cond=True)
            return model
    """,
}


def test_a_call_whose_literal_arguments_skip_another_modules_update_is_not_reported(tmp_path, capsys, monkeypatch):
    # `step` writes in place only under `cond`: the calls that leave it to its default, False,
    # or pass False never reach the write; the one that passes True does.
    train = make(tmp_path, files=FLAGGED, package="flagpkg")
    _reported_everywhere(train, [
        ("TNS401", 12, "in-place write to each of model.parameters() (in step(), optim.py:4), a leaf that requires "
                       "grad, raises RuntimeError; wrap it in `with torch.no_grad():`"),
    ], capsys, tmp_path)
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    from flagpkg import optim

    model = torch.nn.Linear(3, 2)
    model(torch.randn(4, 3)).sum().backward()
    optim.step(model.parameters(), 0.1)
    optim.step(model.parameters(), 0.1, False)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        optim.step(model.parameters(), 0.1, cond=True)


MODULE_ARGS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/models.py": """
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x)


        class Labeler(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x).argmax(-1)
    """,
    "PKG/utils.py": """
        import numpy as np
        import torch


        def predict(model, x):
            return model(x).numpy()


        def predict_ok(model, x):
            with torch.no_grad():
                return model(x).numpy()


        def as_array(model, x):
            return np.asarray(model(x))
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .models import Labeler, Net
        from .utils import as_array, predict, predict_ok

        net = Net()
        x = torch.randn(4, 3)
        a = predict(net, x)
        b = predict_ok(net, x)
        c = predict(Labeler(), x)
        d = predict(nn.Linear(3, 2), x)
        e = as_array(net, x)
        f = predict(Net().requires_grad_(False), x)
        with torch.no_grad():
            g = predict(net, x)
    """,
}
MODULE_ARG_FINDINGS = [
    ("TNS101", 9, "what net computes (predict() calls .numpy() on it, utils.py:6) requires grad, so .numpy() raises "
                  "RuntimeError; use `torch.no_grad()` around the call"),
    ("TNS101", 12, "what nn.Linear(3, 2) computes (predict() calls .numpy() on it, utils.py:6) requires grad, so "
                   ".numpy() raises RuntimeError; use `torch.no_grad()` around the call"),
    ("TNS103", 13, "as_array() on what net computes, which requires grad (a NumPy call in it converts it, "
                   "utils.py:15) raises RuntimeError; use `torch.no_grad()` around the call"),
]


def test_a_call_passes_a_module_to_another_modules_conversion_of_its_output(tmp_path, capsys):
    # `predict(net, x)`, where predict() of utils.py converts what the model computes: utils.py
    # alone cannot know what `model` is.  Reported at the module passed, where its class's forward
    # returns what requires grad; not for a module whose forward returns indices, a frozen one, a
    # helper that turns grad off, nor under no_grad.
    train = make(tmp_path, files=MODULE_ARGS, package="pkg")
    found = _reported_everywhere(train, MODULE_ARG_FINDINGS, capsys, tmp_path)
    assert all(v.fix is None for v in found)


def test_what_a_module_passed_to_another_modules_conversion_computes_raises_on_real_torch(tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=MODULE_ARGS, package="modpkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    from modpkg import models, utils

    net, x = models.Net(), torch.randn(4, 3)
    for bad in (lambda: utils.predict(net, x), lambda: utils.predict(torch.nn.Linear(3, 2), x),
                lambda: utils.as_array(net, x)):
        with pytest.raises(RuntimeError, match="requires grad"):
            bad()
    utils.predict_ok(net, x)
    utils.predict(models.Labeler(), x)
    utils.predict(models.Net().requires_grad_(False), x)
    with torch.no_grad():
        utils.predict(net, x)


PARAMETER_ARGS = {
    "PKG/__init__.py": "",
    "PKG/export.py": """
        import numpy as np


        def dump(model):
            for p in model.parameters():
                print(p.numpy())


        def save_weights(model, prefix):
            for name, p in model.named_parameters():
                np.save(f"{prefix}_{name}.npy", p)
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .export import dump, save_weights

        net = nn.Linear(3, 2)
        dump(net)
        save_weights(net, "w")
        with torch.no_grad():
            dump(net)
    """,
}
PARAMETER_ARG_FINDINGS = [
    ("TNS101", 7, "the parameters of net (dump() calls .numpy() on them, export.py:6) require grad, so .numpy() "
                  "raises RuntimeError; use `torch.no_grad()` around the call"),
    ("TNS103", 8, "save_weights() on the parameters of net, which require grad (a NumPy call in it converts them, "
                  "export.py:11) raises RuntimeError; use `torch.no_grad()` around the call"),
]


def test_a_call_passes_a_module_to_another_modules_conversion_of_its_parameters(tmp_path, capsys, monkeypatch):
    # A torch-free module's helpers that convert the parameters of the module they are given
    # (exporting weights): reported at the module passed, named as its parameters (not as what
    # it computes); numpy() of a parameter is allowed while grad mode is off, as torch says.
    import torch

    train = make(tmp_path, files=PARAMETER_ARGS, package="parampkg")
    _reported_everywhere(train, PARAMETER_ARG_FINDINGS, capsys, tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    from parampkg import export

    net = torch.nn.Linear(3, 2)
    for bad in (lambda: export.dump(net), lambda: export.save_weights(net, "w")):
        with pytest.raises(RuntimeError, match="requires grad"):
            bad()
    with torch.no_grad():
        export.dump(net)
        export.save_weights(net, "w")


def _strict_findings(path, root) -> list:
    """The engine's findings in `path` in strict mode, with the project at `root`."""
    return lint_text(path.read_text(), options=Options(strict=True), project=Project(str(root)),
                     path=str(path)).violations


MADE_ELSEWHERE = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/models.py": """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x)

            def embed(self, x):
                return self.fc(x) * 2


        class Labeler(Net):
            def forward(self, x):
                return self.fc(x).argmax(-1)


        class Trainer:
            def __init__(self):
                self.net = Net()

            def predict(self, x):
                return self.net(x)


        def build():
            return Net()


        def build_labeler():
            return Labeler()


        def make_trainer():
            return Trainer()


        class Teacher(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)
                for p in self.parameters():
                    p.requires_grad = False

            def forward(self, x):
                return self.fc(x)


        def teacher():
            return Teacher()


        model = Net()
    """,
    "PKG/utils.py": """
        import numpy as np
        import torch


        def predict(model, x):
            return model(x)


        @torch.no_grad()
        def predict_safe(model, x):
            return model(x)


        def mean_of(values):
            return np.mean(values)


        def all_numpy(ts):
            return [t.numpy() for t in ts]
    """,
    "PKG/train.py": """
        import torch

        from .models import Net, Teacher, build, build_labeler, make_trainer, model, teacher
        from .utils import all_numpy, mean_of, predict, predict_safe

        x = torch.randn(4, 3)
        net = Net()


        def built():
            return build()(x).numpy()


        def labels():
            return build_labeler()(x).numpy()


        def embedded():
            return build().embed(x).numpy()


        def trained():
            return make_trainer().predict(x).numpy()


        def module_level():
            return model(x).numpy()


        def passed():
            return predict(net, x).numpy()


        def passed_built():
            return predict(build(), x).numpy()


        def passed_safe():
            return predict_safe(net, x).numpy()


        def averaged():
            losses = [net(x).sum() for _ in range(3)]
            return mean_of(losses)


        def converted():
            outs = []
            outs.append(net(x))
            return all_numpy(outs)


        def taught():
            return Teacher()(x).numpy(), teacher()(x).numpy()
    """,
}
MADE_ELSEWHERE_FINDINGS = [
    ('TNS101', 11, 'build()(x) (build(), models.py:30) requires grad, so .numpy() raises RuntimeError; use '
                   'build()(x).detach().numpy()'),
    ('TNS101', 19, 'build().embed(x) (Net.embed(), models.py:13) requires grad, so .numpy() raises RuntimeError; '
                   'use build().embed(x).detach().numpy()'),
    ('TNS101', 23, 'make_trainer().predict(x) (Trainer.predict(), models.py:26) requires grad, so .numpy() '
                   'raises RuntimeError; use make_trainer().predict(x).detach().numpy()'),
    ('TNS101', 27, 'model(x) (model, models.py) requires grad, so .numpy() raises RuntimeError; use '
                   'model(x).detach().numpy()'),
    ('TNS101', 31, 'predict(net, x) (Net: an nn.Module, models.py:5; predict(), utils.py:5) requires grad, '
                   'so .numpy() raises RuntimeError; use predict(net, x).detach().numpy()'),
    ('TNS101', 35, 'predict(build(), x) (build(), models.py:30; predict(), utils.py:5) requires grad, so '
                   '.numpy() raises RuntimeError; use predict(build(), x).detach().numpy()'),
    ('TNS103', 44, 'mean_of() on the tensors in losses, which require grad (a NumPy call in it converts '
                   'them, utils.py:15) raises RuntimeError; use losses.append(t.detach()) where the list is '
                   'filled'),
    ('TNS101', 50, 'the tensors in outs (all_numpy() calls .numpy() on them, utils.py:19) require grad, so '
                   '.numpy() raises RuntimeError; use outs.append(t.detach()) where the list is filled'),
]


def test_an_instance_another_module_makes_keeps_its_class(tmp_path, capsys):
    # An instance of a class of the project that another module's function makes (`build()`),
    # or that another module holds (`model`), is asked its class's `forward` and methods as an
    # instance the file makes itself: not reported where the forward returns indices (it was,
    # as a plain torch module's output), reported where a method or a `Trainer`'s `predict`
    # returns what requires grad.  Passed to another module's function, it is walked there
    # (`predict(net, x)`: what the model computes requires grad; not under `@torch.no_grad()`,
    # not even in strict mode).  A list of tensors that require grad passed to a function that
    # gives it to NumPy (`np.mean(values)`), or that converts each, is reported at the call.  A
    # module whose constructor freezes it (`Teacher`) computes nothing that requires grad here.
    train = make(tmp_path, files=MADE_ELSEWHERE, package="pkg")
    _reported_everywhere(train, MADE_ELSEWHERE_FINDINGS, capsys, tmp_path)
    strict = _strict_findings(train, tmp_path)
    # (Strict mode adds only the "may" of what a frozen module computes: the analysis never takes
    # a frozen module's output to require no grad, only not to require it for certain.)
    extra = [v for v in strict if v.line == 54]
    assert [(v.code, v.line) for v in strict if v not in extra] == [
        (c, line) for c, line, _ in MADE_ELSEWHERE_FINDINGS]
    assert len(extra) == 2 and all("may require grad" in v.message for v in extra)


def _each_function_on_real_torch(tmp_path, monkeypatch, files, package, findings, count) -> None:
    """Every top-level function of `package`'s train.py (`count` of them), run on torch: one that
    holds a line of `findings` raises the RuntimeError of a tensor that requires grad, the others
    run."""
    import importlib

    make(tmp_path, files=files, package=package)
    monkeypatch.syspath_prepend(str(tmp_path))
    train = importlib.import_module(f"{package}.train")
    reported = {line for _, line, _ in findings}
    source = (tmp_path / package / "train.py").read_text().splitlines()
    functions = [(i + 1, line.split("(")[0][4:]) for i, line in enumerate(source) if line.startswith("def ")]
    assert len(functions) == count
    for start, name in functions:
        ends = [s for s, _ in functions if s > start]
        if any(start < n < (ends[0] if ends else len(source) + 1) for n in reported):
            with pytest.raises(RuntimeError, match="requires grad"):
                getattr(train, name)()
        else:
            getattr(train, name)()


def test_what_an_instance_another_module_makes_computes_raises_on_real_torch(tmp_path, monkeypatch):
    _each_function_on_real_torch(tmp_path, monkeypatch, MADE_ELSEWHERE, "instpkg", MADE_ELSEWHERE_FINDINGS, 11)


LOCAL_CLASSES = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/base.py": """
        import torch
        from torch import nn


        class BaseModel(nn.Module):
            def predict(self, x):
                return self(x)

            @torch.no_grad()
            def predict_safe(self, x):
                return self(x)

            def encode(self, x):
                return self(x)

            def embed(self, x):
                return self.encode(x) * 2


        def step(model, batch):
            x, y = batch
            out = model(x)
            return out, ((out - y) ** 2).mean()
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .base import BaseModel, step

        x, y = torch.randn(4, 3), torch.randn(4, 2)


        class Scorer(BaseModel):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x)


        class Labeler(Scorer):
            def forward(self, x):
                return self.fc(x).argmax(-1)


        def scored():
            return Scorer().predict(x).numpy()


        def labelled():
            return Labeler().predict(x).numpy()


        def safe():
            return Scorer().predict_safe(x).numpy()


        def stepped():
            out, loss = step(Scorer(), (x, y))
            return out.numpy()


        def stepped_loss():
            out, loss = step(Scorer(), (x, y))
            return loss.numpy()


        class Hard(Scorer):
            def encode(self, x):
                return self.fc(x).argmax(-1)


        def embedded():
            return Scorer().embed(x).numpy()


        def hard_embedded():
            return Hard().embed(x).numpy()


        class Child(Scorer):
            pass


        def child_embedded():
            return Child().embed(x).numpy()
    """,
}
LOCAL_CLASS_FINDINGS = [
    ('TNS101', 24, 'Scorer().predict(x) (BaseModel.predict(), base.py:6) requires grad, so .numpy() raises '
                   'RuntimeError; use Scorer().predict(x).detach().numpy()'),
    ('TNS101', 37, 'out requires grad, so .numpy() raises RuntimeError; use out.detach().numpy()'),
    ('TNS101', 42, 'loss requires grad, so .numpy() raises RuntimeError; use loss.detach().numpy()'),
    ('TNS101', 51, 'Scorer().embed(x) (BaseModel.embed(), base.py:16) requires grad, so .numpy() raises '
                   'RuntimeError; use Scorer().embed(x).detach().numpy()'),
    ('TNS101', 63, 'Child().embed(x) (BaseModel.embed(), base.py:16) requires grad, so .numpy() raises '
                   'RuntimeError; use Child().embed(x).detach().numpy()'),
]


def test_an_instance_of_the_files_own_class_meets_another_modules_code(tmp_path, capsys):
    # A method a class of the file inherits from a class of another module (`predict`: `return
    # self(x)`) returns what requires grad where the file's class's forward returns it, and not
    # for certain where it returns indices (`Labeler`): reported in strict mode only, "may"; so
    # for one that calls a method the file's class replaces (`embed`: `self.encode(x)`, `Hard`),
    # also through a base of the file (`Child(Scorer)`: what `Scorer` inherits, `Child` does).  An
    # instance passed to another module's function (`step(Scorer(), batch)`) goes as a plain
    # torch module whose output requires grad: what the function returns does.
    train = make(tmp_path, files=LOCAL_CLASSES, package="pkg")
    _reported_everywhere(train, LOCAL_CLASS_FINDINGS, capsys, tmp_path)
    strict = _strict_findings(train, tmp_path)
    # (Strict mode adds the "may" of `Labeler` and `Hard`, and where `predict_safe`'s output lives.)
    assert [(v.code, v.line) for v in strict] == sorted(
        [(c, line) for c, line, _ in LOCAL_CLASS_FINDINGS] + [("TNS101", 28), ("TNS102", 32), ("TNS101", 55)],
        key=lambda t: t[1])
    assert "may require grad" in strict[1].message


def test_an_instance_of_the_files_own_class_meets_another_modules_code_on_real_torch(tmp_path, monkeypatch):
    _each_function_on_real_torch(tmp_path, monkeypatch, LOCAL_CLASSES, "localpkg", LOCAL_CLASS_FINDINGS, 8)


ALIAS_WRITERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/utils.py": """
        import torch


        def clamp_(t):
            t.clamp_(-1, 1)


        def maybe_zero(t, flag):
            if flag:
                t.zero_()
    """,
    "PKG/train.py": """
        import torch

        from .utils import clamp_, maybe_zero


        def step():
            a = torch.ones(5, requires_grad=True)
            b = a.exp()
            clamp_(b.detach())
            b.sum().backward()


        def step_ok():
            a = torch.ones(5, requires_grad=True)
            b = a.exp()
            maybe_zero(b.detach(), False)
            b.sum().backward()
    """,
}
ALIAS_WRITER_FINDINGS = [
    ("TNS402", 9, "in-place write through b.detach() (clamp_() writes into it, utils.py:4) changes b, saved for "
                  "the backward() below (backward() raises RuntimeError); use b.detach().clone()"),
]


def test_a_function_of_another_module_that_writes_into_what_it_is_passed(tmp_path, capsys, monkeypatch):
    # `clamp_(b.detach())`, where clamp_() of utils.py writes in place into its parameter: a write
    # through the alias of `b`, which `exp` saved for the backward below.  Not for a function that
    # may not write (a branch).
    train = make(tmp_path, files=ALIAS_WRITERS, package="pkg")
    _reported_everywhere(train, ALIAS_WRITER_FINDINGS, capsys, tmp_path)
    make(tmp_path, files=ALIAS_WRITERS, package="aliaspkg")
    monkeypatch.syspath_prepend(str(tmp_path))
    from aliaspkg import train as module

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        module.step()
    module.step_ok()


def _with_store(root, cache):
    from flake8_tensorcopy.analysis.summary_store import SummaryStore

    project = Project(str(root))
    project.store = SummaryStore(str(cache), "test")
    return project


def _lint(path, project):
    project.begin()
    result = lint_text(path.read_text(), options=Options(), project=project, path=str(path))
    project.flush()
    return [(v.code, v.line, v.message) for v in result.violations]

# A torch module class of another module with a `__call__` of its own, inherited (ultralytics:
# `Model(nn.Module).__call__` runs `predict`, `YOLO(Model)` in another module): calling an
# instance runs that; where the subclass calls `forward`, the output requires grad.  And a
# `freeze()` the base defines, which freezes the instance.
OWN_CALLS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/engine.py": """
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
                return self.predict(x)

            def freeze(self):
                for p in self.parameters():
                    p.requires_grad = False
    """,
    "PKG/yolo.py": """
        from .engine import Model


        class YOLO(Model):
            pass


        class Raw(Model):
            def __call__(self, x):
                return self.forward(x)
    """,
    "PKG/train.py": """
        import numpy as np
        import torch

        from .yolo import YOLO, Raw


        def bench():
            times = []
            for _ in range(2):
                times.append(YOLO()(torch.randn(2, 4)))
            return np.array(times)


        def raw():
            return Raw()(torch.randn(2, 4)).numpy()


        def frozen():
            model = YOLO()
            model.freeze()
            return model.forward(torch.randn(2, 4)).numpy()
    """,
}
OWN_CALL_FINDINGS = [("TNS101", 15, "Raw()(torch.randn(2, 4)) (Raw: an nn.Module, yolo.py:8) requires grad, so "
                                    ".numpy() raises RuntimeError; use Raw()(torch.randn(2, 4)).detach().numpy()")]


# A method of another module's class that keeps what a call passes (`self.last = v`,
# `self.vals.append(v)`), which another converts (through.Through.keepers, walker.kept_sinks).
KEPT = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/meters.py": """
        import numpy as np


        class Logger:
            def __init__(self):
                self.last = None
                self.vals = []

            def log(self, v):
                self.last = v

            def update(self, v):
                self.vals.append(v)

            def dump(self):
                return self.last.numpy()

            def avg(self):
                return np.mean(self.vals)
    """,
    "PKG/train.py": """
        import torch

        from .meters import Logger


        def train():
            net = torch.nn.Linear(2, 1)
            logger, other = Logger(), Logger()
            loss = net(torch.ones(1, 2)).sum()
            logger.log(loss)
            logger.update(loss)
            other.log(loss)
            other.update(loss.detach())
            return logger.dump(), logger.avg(), other.avg()
    """,
}
KEPT_FINDINGS = [
    ("TNS101", 10, "loss (logger.log() keeps it, logger.dump() calls .numpy() on it, meters.py:16) requires grad, so "
                   ".numpy() raises RuntimeError; use loss.detach()"),
    ("TNS103", 11, "logger.update() on loss, which requires grad (kept, then a NumPy call in logger.avg() converts "
                   "it, meters.py:19) raises RuntimeError; use loss.detach()"),
]


def test_what_a_method_of_another_modules_class_keeps_is_converted_by_another(tmp_path):
    # `other.log(loss)`: `other.dump()` is never called; `other.update(loss.detach())`: detached.
    train = make(tmp_path, files=KEPT, package="pkg")
    assert _lint(train, Project(str(tmp_path))) == KEPT_FINDINGS


def test_what_a_method_keeps_is_read_by_its_body_itself():
    import ast

    from flake8_tensorcopy.analysis.astutil import kept_parameters

    def kept(src):
        return kept_parameters(ast.parse(textwrap.dedent(src)).body[0])

    assert kept("def log(self, v, w):\n    self.last = v\n    self.vals.append(w)\n") == (
        ("v", "last", "set"), ("w", "vals", "append"))
    assert kept("def log(self, v):\n    if v is not None:\n        self.last = v\n") == ()  # (a branch)
    assert kept("def log(self, v):\n    v = v.detach()\n    self.last = v\n") == ()  # (bound again)
    assert kept("def log(self, v):\n    self.last = v\n    self.last = self.last.detach()\n") == ()
    assert kept("def log(self, v):\n    if v is None:\n        return\n    self.last = v\n") == ()
    assert kept("def log(self, v):\n    self.step = self.step + 1\n    self.last = v\n") == (("v", "last", "set"),)
    assert kept("def log(self, v):\n    self.last = self\n") == ()


@pytest.mark.parametrize("files", [FILES, CROSSING, PER_CALL, GENERATORS, CONSTRUCTORS, SINKS, UPDATES, MODULE_ARGS,
                                   MADE_ELSEWHERE, LOCAL_CLASSES, ALIAS_WRITERS, OWN_CALLS, KEPT],
                         ids=["imports", "late", "per-call", "generators", "constructors", "sinks", "updates",
                              "module arguments", "made elsewhere", "local classes", "alias writers", "own calls",
                              "kept"])
def test_summaries_from_the_cache_give_what_a_walk_gives(tmp_path, monkeypatch, files):
    from flake8_tensorcopy.rules import all_rules
    from flake8_tensorcopy.through import Through

    train = make(tmp_path, files=files, package="pkg")
    cache = tmp_path / "cache"
    without = _lint(train, Project(str(tmp_path)))
    # The searches of the imported modules' texts (through.py), counted.
    searched = []
    for name in ("_find", "_find_methods"):
        monkeypatch.setattr(Through, name, lambda self, where, *a, _f=getattr(Through, name), _n=name:
                            searched.append((_n, where)) or _f(self, where, *a))
    for cls in all_rules():
        if cls.imported_triggers is not None:
            monkeypatch.setattr(cls, "imported_triggers", staticmethod(
                lambda text, _f=cls.imported_triggers: searched.append(("triggers", text)) or _f(text)))
        if cls.through_calls:  # (the first test of a module's bytes)
            monkeypatch.setattr(cls, "through_bytes", classmethod(
                lambda _cls, data, _f=cls.through_bytes: searched.append(("bytes", data)) or _f(data)))
    cold = _with_store(tmp_path, cache)
    assert _lint(train, cold) == without and without and cold.built > 0
    # (Every imported module's bytes are tested; the modules of these sets hold a needle:
    # `.numpy(`, `.grad`, `+=` in a method, an in-place call; the others' texts are not searched.)
    assert any(kind == "bytes" for kind, _ in searched)
    assert any(kind != "bytes" for kind, _ in searched) == any(
        files is f for f in (CROSSING, SINKS, UPDATES, MODULE_ARGS, MADE_ELSEWHERE, ALIAS_WRITERS, KEPT))
    searched.clear()
    written = sorted(p.name for p in (cache / __version__ / "summaries-test").iterdir())
    assert written and all(n.endswith(".marshal") for n in written)
    warm = _with_store(tmp_path, cache)
    assert _lint(train, warm) == without
    assert warm.built == 0  # no module of the project was parsed: every answer came from the cache
    # Nor tested or searched again by text for the functions and methods a call may report
    # through, or for the names that widen a rule's scope (through.Through._record, and the map
    # of the modules that hold no needle).
    assert searched == []
    assert warm.touched == cold.touched  # and the result cache depends on the same files
    assert (cache / ".gitignore").read_text().endswith("*\n")


def test_a_changed_module_is_walked_again_and_what_depends_on_it_too(tmp_path):
    train = make(tmp_path, package="pkg")
    cache = tmp_path / "cache"
    before = _lint(train, _with_store(tmp_path, cache))
    models = tmp_path / "pkg" / "models.py"
    models.write_text(models.read_text().replace("frozen = nn.Linear(3, 3).requires_grad_(False)",
                                                 "frozen = nn.Linear(3, 3)"))
    warm = _with_store(tmp_path, cache)
    after = _lint(train, warm)
    assert after == _lint(train, Project(str(tmp_path)))
    assert [(c, line) for c, line, _ in after] == sorted([(c, line) for c, line, _ in before] + [("TNS101", 13)])
    # models.py, and pkg/__init__.py (which re-exports from it), are walked again; utils.py is not.
    assert 1 <= warm.built <= 3


def test_a_module_s_text_facts_are_read_again_when_it_changes(tmp_path):
    # utils.py's `to_numpy` holds no `.numpy(` at first: the summary cache keeps that of the
    # module's content (through.Through._record); once an edit adds one, a warm run reports the
    # call (as a run without the cache does), and stops when the edit is undone.
    train = make(tmp_path, files=SINKS, package="pkg")
    utils = tmp_path / "pkg" / "utils.py"
    original = utils.read_text()
    utils.write_text(original.replace("def to_numpy(t):\n    return t.numpy()", "def to_numpy(t):\n    return t.tolist()"))
    cache = tmp_path / "cache"
    before = _lint(train, _with_store(tmp_path, cache))
    assert ("TNS101", 12) not in [(c, line) for c, line, _ in before]
    assert any(p.name.endswith(".text.marshal") for p in (cache / __version__ / "summaries-test").iterdir())
    utils.write_text(original)
    after = _lint(train, _with_store(tmp_path, cache))
    assert after == _lint(train, Project(str(tmp_path)))
    assert ("TNS101", 12) in [(c, line) for c, line, _ in after]
    utils.write_text(original.replace("def to_numpy(t):\n    return t.numpy()", "def to_numpy(t):\n    return t.tolist()"))
    assert _lint(train, _with_store(tmp_path, cache)) == before


# A relay re-exported by its package: train.py -> pkg.run (pkg/__init__.py) -> evaluate.run -> convert.to_np.
RELAYED = {**{k: v for k, v in RELAY.items() if k != "PKG/main.py"}, "PKG/__init__.py": "from .evaluate import run\n",
           "PKG/train.py": RELAY["PKG/main.py"].replace("from .evaluate import run", "from PKG import run")}

# A meter class re-exported by its package (through.Through._trigger_plan: the package's summary
# says where the name is defined).
METERED = {
    "pyproject.toml": "",
    "PKG/__init__.py": "from .meter import AverageMeter\n",
    "PKG/meter.py": """
        class AverageMeter:
            def __init__(self):
                self.total = 0
            def update(self, value):
                self.total += value
        """,
    "PKG/train.py": """
        import torch
        from torch import nn
        from PKG import AverageMeter
        model = nn.Linear(3, 1)
        meter = AverageMeter()
        for _ in range(3):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            meter.update(loss)
        print(float(meter.total))
        """,
}


# A meter class whose `update` is inherited from a class of a third module (through.Through.
# _project_bases: the module's record keeps its classes' bases).
INHERITED_METER = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/base_meters.py": """
        class AverageMeter:
            def __init__(self):
                self.total = 0
            def update(self, value):
                self.total += value
        """,
    "PKG/meters.py": """
        from PKG.base_meters import AverageMeter
        class LossMeter(AverageMeter):
            pass
        """,
    "PKG/train.py": """
        import torch
        from torch import nn
        from PKG.meters import LossMeter
        model = nn.Linear(3, 1)
        meter = LossMeter()
        for _ in range(3):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            loss.backward()
            meter.update(loss)
        print(float(meter.total))
        """,
}


@pytest.mark.parametrize("files", [FILES, CROSSING, SINKS, MODULE_ARGS, RELAYED, METERED, INHERITED_METER],
                         ids=["imports", "late", "sinks", "module arguments", "relays", "re-exported meter",
                              "inherited meter"])
def test_a_warm_run_reads_no_settled_module_it_imports(tmp_path, monkeypatch, files):
    # A module left alone since it was read is known by its stamp (size, inode, times) in the
    # summary cache: a warm run neither reads nor hashes it, and finds what a run without the
    # cache finds.
    from flake8_tensorcopy.analysis import project as project_module

    monkeypatch.setattr(project_module, "STAMP_SETTLED_NS", -10**12)  # (these files were just written)
    train = make(tmp_path, files=files, package="pkg")
    cache = tmp_path / "cache"
    without = _lint(train, Project(str(tmp_path)))
    cold = _with_store(tmp_path, cache)
    assert _lint(train, cold) == without
    read = []
    real_open = open
    searching = []

    def counting_open(file, *args, **kwargs):
        if str(file).endswith(".py") and not searching:
            read.append(os.path.basename(str(file)))
        return real_open(file, *args, **kwargs)

    def search(method):
        def wrapped(*args, **kwargs):
            searching.append(1)
            try:
                return method(*args, **kwargs)
            finally:
                searching.pop()
        return wrapped

    monkeypatch.setattr("builtins.open", counting_open)
    # (Not the search of the project's files for the callers of a method where a rule reports,
    # which reads every file that names it, with a cache or not: Project.called_without_grad.)
    monkeypatch.setattr(Project, "called_without_grad", search(Project.called_without_grad))
    warm = _with_store(tmp_path, cache)
    assert _lint(train, warm) == without and warm.built == 0
    assert warm.touched == cold.touched  # (the result cache depends on the same files and hashes)
    # Only the modules whose text a check asks without a summary of them (`_spells`: a package's
    # `__init__.py` that never spells a name it is asked for) are read.
    assert set(read) <= {"__init__.py"}, read
    if files is RELAYED:
        assert [(code, line) for code, line, _ in without] == [("TNS101", 6)], without
    if files is METERED:
        assert [(code, line) for code, line, _ in without] == [("TNS503", 9)], without
    assert read or files is not SINKS


def test_a_stamp_is_kept_only_for_a_settled_file_and_stands_for_its_content_no_longer_than_its_times(
        tmp_path, monkeypatch):
    from flake8_tensorcopy.analysis import project as project_module

    train = make(tmp_path, package="pkg")
    cache = tmp_path / "cache"
    _lint(train, _with_store(tmp_path, cache))
    folder = cache / __version__ / "summaries-test"
    assert not list(folder.glob("stamps-*.marshal"))  # every file was written now: its stamp may not have settled
    monkeypatch.setattr(project_module, "STAMP_SETTLED_NS", -10**12)
    before = _lint(train, _with_store(tmp_path, cache))
    assert list(folder.glob("stamps-*.marshal"))
    # An edit that keeps the size, and puts the mtime back: the ctime still moves.
    models = tmp_path / "pkg" / "models.py"
    st = os.stat(models)
    text = models.read_text()
    edited = text.replace("frozen = nn.Linear(3, 3).requires_grad_(False)",
                          "frozen = nn.Linear(3, 3).requires_grad_(True) ")
    assert edited != text and len(edited) == len(text)
    models.write_text(edited)
    os.utime(models, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = _lint(train, _with_store(tmp_path, cache))
    assert after == _lint(train, Project(str(tmp_path))) != before


def test_bytes_that_are_not_what_a_stamp_says_are_named_by_their_own_hash(tmp_path):
    from flake8_tensorcopy.analysis import project as project_module
    from flake8_tensorcopy.source import content_hash

    make(tmp_path, package="pkg")
    models = str(tmp_path / "pkg" / "models.py")
    project = _with_store(tmp_path, tmp_path / "cache")
    stamp = project_module._stamp(os.stat(models))
    stamps = project.store.maps("stamps")
    stamps.set(models, f"{stamp}:not-its-hash")
    stamps.flush()
    assert project.digest_of(models) == "not-its-hash"  # (trusted while unread)
    data = project.contents(models)
    assert project.digest_of(models) == content_hash(data) and project.restamped == {models}


def test_nothing_is_kept_of_a_module_whose_bytes_were_not_what_its_stamp_said(tmp_path):
    # (A module that changed between its stat and its read.)  helpers.py holds no needle: its
    # digest would go to the map of such modules, but the digest its stamp gave is not its bytes'.
    from flake8_tensorcopy.analysis import project as project_module

    files = dict(SINKS, **{"PKG/helpers.py": "def scale(t):\n    return t * 2\n"})
    files["PKG/train.py"] = SINKS["PKG/train.py"].replace("import torch\n", "import torch\n        from .helpers import scale\n", 1)
    train = make(tmp_path, files=files, package="pkg")
    helpers = str(tmp_path / "pkg" / "helpers.py")
    cache = tmp_path / "cache"
    project = _with_store(tmp_path, cache)
    stamps = project.store.maps("stamps")
    stamps.set(helpers, f"{project_module._stamp(os.stat(helpers))}:not-its-hash")
    stamps.flush()
    expected = _lint(train, Project(str(tmp_path)))
    assert _lint(train, project) == expected and helpers in project.restamped
    assert project.store.maps("plain").get(helpers) is None
    again = _with_store(tmp_path, cache)  # (the stamp is not there: read, tested, and kept now)
    assert _lint(train, again) == expected and not again.restamped
    assert again.store.maps("plain").get(helpers) == again.digest_of(helpers) != "not-its-hash"


def test_a_map_of_the_summary_cache_gathers_what_processes_set_and_starts_over_past_its_limit(tmp_path,
                                                                                              monkeypatch):
    from flake8_tensorcopy.analysis import summary_store
    from flake8_tensorcopy.analysis.summary_store import SummaryStore

    first, second = SummaryStore(str(tmp_path), "k"), SummaryStore(str(tmp_path), "k")
    assert first.load_map("plain") == {}
    first.update_map("plain", {"a.py": "1", "b.py": "1"})
    second.update_map("plain", {"c.py": "1", "a.py": "2"})  # (a.py changed since)
    assert first.load_map("plain") == second.load_map("plain") == {"a.py": "2", "b.py": "1", "c.py": "1"}
    assert SummaryStore(str(tmp_path), "other key").load_map("plain") == {}
    monkeypatch.setattr(summary_store, "MAP_LIMIT", 4)
    first.update_map("plain", {"d.py": "1", "e.py": "1"})
    assert first.load_map("plain") == {"d.py": "1", "e.py": "1"}
    # A map kept a file a directory: a lookup reads its directory's part only.
    maps = first.maps("stamps")
    maps.set(os.path.join("a", "x.py"), "1")
    maps.set(os.path.join("b", "y.py"), "2")
    maps.flush()
    assert len(list((tmp_path / __version__ / "summaries-k").glob("stamps-*.marshal"))) == 2
    again = second.maps("stamps")
    assert again.get(os.path.join("a", "x.py")) == "1" and again.get(os.path.join("a", "z.py")) is None
    assert list(again._parts) == ["a"]
    assert again.get(os.path.join("b", "y.py")) == "2"


def test_a_damaged_summary_cache_is_a_miss(tmp_path, monkeypatch):
    # Summaries, text facts (`.numpy(` in utils.py), the map of the modules that hold no needle
    # (helpers.py) and that of the files' stamps.
    from flake8_tensorcopy.analysis import project as project_module

    monkeypatch.setattr(project_module, "STAMP_SETTLED_NS", -10**12)
    files = dict(SINKS, **{"PKG/helpers.py": "def scale(t):\n    return t * 2\n"})
    files["PKG/train.py"] = SINKS["PKG/train.py"].replace("import torch\n", "import torch\n        from .helpers import scale\n", 1)
    train = make(tmp_path, files=files, package="pkg")
    cache = tmp_path / "cache"
    expected = _lint(train, _with_store(tmp_path, cache))
    files = list((cache / __version__ / "summaries-test").iterdir())
    import marshal

    for i, path in enumerate(files):
        if i % 3 == 0:
            path.write_bytes(b"\x00not marshal")
        elif i % 3 == 1:
            path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
        else:  # well-formed, but not what we write: its checksum (summary_store._checked) fails
            data = path.read_bytes()
            entry = marshal.loads(data[4:])
            if "map" in entry:  # the digests of the modules that hold no needle
                entry["items"] = {path: 1 for path in entry["items"]}
            elif entry.get("kind") == ".text":  # a module's text facts (through.Through._record)
                entry["functions"] = {name: 1 for name in entry["functions"] or ()} or [1]
            else:
                entry["table"] = {name: ("tensor",) for name in entry["table"]}
            path.write_bytes(data[:4] + marshal.dumps(entry))
    assert {p.name.endswith(".text.marshal") for p in files} == {True, False}
    assert any(p.name.startswith("plain-") for p in files) and any(p.name.startswith("stamps-") for p in files)
    assert _lint(train, _with_store(tmp_path, cache)) == expected


def test_the_cli_the_plugin_and_the_engine_share_the_summary_cache(tmp_path, capsys):
    from flake8_tensorcopy import plugin

    train = make(tmp_path, package="pkg")
    proc = tc(capsys, "check", str(train), cwd=tmp_path)
    assert proc.returncode == 1
    store = tmp_path / ".tensorcopy_cache" / __version__
    assert [p.name for p in store.iterdir() if p.name.startswith("summaries-")]
    plugin._PROJECTS.clear()
    plugin.TensorCopyChecker.parse_options(None)
    text = train.read_text()
    import ast

    found = list(plugin.TensorCopyChecker(ast.parse(text), text.splitlines(True), str(train)).run())
    assert sorted((code.split()[0], line) for line, _, code, _ in found) == sorted(EXPECTED)
    project = plugin._PROJECTS[str(tmp_path)]
    assert project.built == 0, "the plugin parsed modules the CLI had summarised"
    plugin._PROJECTS.clear()


def test_what_crosses_modules_is_plain_data_that_reads_back_the_same(tmp_path):
    # What crosses modules is plain data that marshal writes and the cache's check accepts, and
    # reading it back gives the same fact (the tables of the test projects' modules).
    import marshal

    from flake8_tensorcopy.analysis.portable import export_fact, import_fact, well_formed

    checked = 0
    for i, files in enumerate((FILES, CROSSING, PER_CALL)):
        root = tmp_path / str(i)
        make(root, files=files, package="pkg")
        project = Project(str(root))
        for module in ("pkg.models", "pkg.utils", "pkg.base", "pkg.parts", "pkg.helpers", "pkg"):
            summary = project.summary(module)
            if summary is None:
                continue
            checked += len(summary.table)
            for name, exported in summary.table.items():
                assert well_formed(exported), (module, name)
                assert marshal.loads(marshal.dumps(exported)) == exported
                fact = import_fact(exported, project.entity)
                assert export_fact(fact, lambda node: (node.module, node.path)) == exported, (module, name)
    assert checked > 10


@pytest.mark.parametrize("flag", [None, "--tensorcopy-no-cache", "--tensorcopy-cache-dir=elsewhere"])
def test_the_flake8_plugin_keeps_summaries_where_it_is_told(tmp_path, flag):
    train = make(tmp_path, package="pkg")
    argv = [tool("flake8"), "--select", "TNS", "--format", "%(row)d:%(code)s", str(train)]
    if flag:
        argv.insert(1, flag)
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path)
    assert sorted(tuple(reversed(line.split(":"))) for line in proc.stdout.split()) == [
        (code, str(line)) for code, line in EXPECTED], proc.stderr
    default = tmp_path / ".tensorcopy_cache" / __version__
    elsewhere = tmp_path / "elsewhere" / __version__
    kept = {None: default, "--tensorcopy-cache-dir=elsewhere": elsewhere}.get(flag)
    for folder in (default, elsewhere):
        summaries = list(folder.glob("summaries-*/*.marshal")) if folder.exists() else []
        assert bool(summaries) == (folder == kept), (flag, folder)


def test_a_summary_made_for_another_project_root_is_not_used(tmp_path):
    # One cache for two roots (a shared --cache-dir): module names, and the references in a
    # summary, depend on the root, so an entry is used only by the root it was made for.
    train = make(tmp_path, files=FILES, package="pkg")
    cache = tmp_path / "cache"
    expected = _lint(train, _with_store(tmp_path, cache))
    inner = _with_store(tmp_path / "pkg", cache)  # pkg/models.py is `models` there, not `pkg.models`
    _lint(train, inner)
    summarised = [s for s in inner._summaries.values() if s is not None]
    assert summarised and all(s.name.split(".")[0] != "pkg" for s in summarised)
    assert inner.built == len(summarised)  # none of the outer root's entries was used
    again = _with_store(tmp_path, cache)
    assert _lint(train, again) == expected


CYCLE = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/a.py": "import torch\nfrom .b import helper\n\nmodel = helper()\n",
    "PKG/b.py": "import torch\nfrom .a import model\n\n\ndef helper():\n    return torch.nn.Linear(2, 2)\n\n\n"
                "alias = model\n",
    "PKG/train.py": "import torch\nfrom .a import model\n\nout = model(torch.ones(2)).numpy()\n",
}


def test_what_an_import_cycle_makes_is_not_cached(tmp_path):
    # a.py's walk asks b.py, whose walk reads a.py while it is being built (unknown there): what
    # both give depends on which was asked first, so neither goes to the cache; what does not
    # depend on a cycle does.
    train = make(tmp_path, files=CYCLE, package="pkg")
    cache = tmp_path / "cache"
    cold = _with_store(tmp_path, cache)
    found = _lint(train, cold)
    assert [(c, line) for c, line, _ in found] == [("TNS101", 4)]
    from flake8_tensorcopy.analysis.summary_store import SummaryStore

    store = SummaryStore(str(cache), "test")
    for name in ("a.py", "b.py"):
        path = str(tmp_path / "pkg" / name)
        assert store.load(path, cold.digest_of(path)) is None, name
    warm = _with_store(tmp_path, cache)
    assert _lint(train, warm) == found and warm.built == 2


def test_random_facts_cross_as_plain_data_and_back():
    # Every field survives export, marshal and import (nested elements, items and attribute
    # dicts; a class or function by reference), and what is not well-formed is refused.
    import marshal
    import random

    from flake8_tensorcopy.analysis.facts import Device, Fact, Grad
    from flake8_tensorcopy.analysis.portable import export_fact, import_fact, well_formed

    class Ref:
        def __init__(self, module, path):
            self.module, self.path = module, path

    refs: dict = {}

    def entity(ref):
        return refs.setdefault(ref, Ref(*ref))

    rng = random.Random(7)

    def fact(depth=0):
        kind = rng.choice(["tensor", "module", "other", "class", "function", "seq", "import", "unknown"])
        deep = depth < 2
        return Fact(kind, rng.choice(list(Grad)), rng.choice(list(Device)), rng.random() < 0.3,
                    rng.choice([None, "torch.no_grad", "pkg.m.X"]), rng.random() < 0.2, rng.random() < 0.2,
                    {f"a{i}": fact(depth + 1) for i in range(rng.randint(0, 2))} if deep and rng.random() < 0.3
                    else None,
                    fact(depth + 1) if deep and rng.random() < 0.3 else None,
                    frozenset(rng.sample(["str", "parameter", "callsite:3", "defined:X, m.py:1"], rng.randint(0, 2))),
                    tuple(fact(depth + 1) for _ in range(2)) if deep and rng.random() < 0.2 else None,
                    rng.random() < 0.5, rng.choice([None, *Grad]), rng.choice([None, "device"]),
                    entity(("pkg.m", rng.choice(["X", "Outer.Inner", "f"]))) if kind in ("class", "function")
                    else None)

    ref_of = lambda node: (node.module, node.path)  # noqa: E731
    for _ in range(300):
        f = fact()
        x = export_fact(f, ref_of)
        assert well_formed(x) and marshal.loads(marshal.dumps(x)) == x
        back = import_fact(x, entity)
        assert back == f and back.node is f.node and export_fact(back, ref_of) == x
    for bad in [("tensor",), ("tensor", 7, 0, False, None, False, False, None, None, (), None, False, None, None, None),
                ("tensor", 0, 0, False, None, False, False, ("lazy", "X"), None, (), None, False, None, None, None),
                ("tensor", 0, 0, False, None, False, False, None, None, ("x", 1), None, False, None, None, None)]:
        assert not well_formed(bad), bad


def test_a_record_instance_crosses_with_the_fields_its_call_gave():
    # An instance of a NamedTuple or a dataclass (Evaluator._record) keeps what its call gave its
    # fields when it crosses modules, over its class's attributes (read when first asked).
    import marshal

    from flake8_tensorcopy.analysis.evaluate import LazyAttrs
    from flake8_tensorcopy.analysis.facts import Device, Fact, Grad
    from flake8_tensorcopy.analysis.portable import export_fact, import_fact, well_formed

    class Ref:
        def __init__(self, module, path):
            self.module, self.path = module, path
            self.asked = 0

        def attrs(self):
            self.asked += 1
            return {"pred": Fact("tensor", Grad.YES, Device.CPU), "scale": Fact("other", Grad.NO, Device.CPU)}

    owner = Ref("pkg.m", "Out")
    given = {"pred": Fact("tensor", Grad.NO, Device.CPU)}
    f = Fact("object", Grad.UNKNOWN, Device.UNKNOWN, attrs=LazyAttrs(lambda: {**owner.attrs(), **given}, owner,
                                                                      lambda: given))
    x = export_fact(f, lambda node: (node.module, node.path))
    assert well_formed(x) and marshal.loads(marshal.dumps(x)) == x
    owner.asked = 0
    back = import_fact(x, lambda ref: owner if ref == ("pkg.m", "Out") else None)
    assert owner.asked == 0
    assert back.attrs["pred"].grad is Grad.NO and back.attrs["scale"].kind == "other" and owner.asked == 1
    # Without a class to refer to, the fields alone; a record whose fields are no facts is refused.
    alone = import_fact(export_fact(f, lambda node: None), lambda ref: None)
    assert dict(alone.attrs.items()) == given
    assert not well_formed(x[:7] + (("record", (("pkg.m", "Out"), (("pred", 1),))),) + x[8:])


def test_what_a_module_answers_does_not_depend_on_which_files_asked_before(tmp_path, monkeypatch):
    # A project module's walker answers many files' questions, each with a fresh budget of walks:
    # with a budget of one walk a call, b.py finds the same after a.py as alone.
    from flake8_tensorcopy.analysis import summaries

    monkeypatch.setattr(summaries, "_CALL_BUDGET", 1)
    files = {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "PKG/__init__.py": "",
        "PKG/helpers.py": "def double(x):\n    return x * 2\n",
        "PKG/a.py": "import torch\nfrom .helpers import double\n\nv = double(torch.ones(3)).numpy()\n",
        "PKG/b.py": "import torch\nfrom .helpers import double\n\nw = torch.ones(3, requires_grad=True)\n"
                    "v = double(w).numpy()\n",
    }
    make(tmp_path, files=files, package="pkg")
    a, b = tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "b.py"
    alone = _lint(b, Project(str(tmp_path)))
    assert [(c, line) for c, line, _ in alone] == [("TNS101", 5)]
    shared = Project(str(tmp_path))
    assert _lint(a, shared) == []
    assert _lint(b, shared) == alone


def test_a_module_summarised_earlier_in_the_run_is_not_parsed_again_when_checked(tmp_path, monkeypatch):
    import flake8_tensorcopy.engine as engine

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helpers = pkg / "helpers.py"
    helpers.write_text(textwrap.dedent("""
        import torch

        w = torch.ones(2, requires_grad=True)
        snapshot = w.numpy()


        def make():
            return torch.nn.Linear(2, 2)
        """).lstrip("\n"))
    main = pkg / "main.py"
    main.write_text("import torch\nfrom .helpers import make\n\nout = make()(torch.ones(2)).numpy()\n")
    fresh = _lint(helpers, Project(str(tmp_path)))
    assert [code for code, _, _ in fresh] == ["TNS101"]

    project = Project(str(tmp_path), batch=True)
    assert [code for code, _, _ in _lint(main, project)] == ["TNS101"]  # builds helpers' summary
    text = helpers.read_text()
    assert project.parsed("pkg.helpers", text) is not None
    assert project.parsed("pkg.helpers", text + "\n") is None  # another text: parsed anew
    assert project.parsed("pkg.main", main.read_text()) is None  # checked, never summarised

    def no_parse(text):
        raise AssertionError("parsed again")

    monkeypatch.setattr(engine, "_parse", no_parse)
    assert _lint(helpers, project) == fresh


def _imports_by_finditer(text, current, is_package):
    """reach.imports as the two patterns find their matches anywhere in the text (the reference:
    reach.py matches them only at the starts of the lines that mention `import`)."""
    import flake8_tensorcopy.reach as reach

    out = []
    for m in reach._re(reach._FROM).finditer(text):
        dots, module, names = len(m.group(1)), m.group(2), m.group(3)
        if names == "(":
            close = text.find(")", m.end(), m.end() + reach._NAMES_SPAN)
            if close == -1:
                continue
            names = text[m.end():close]
        module = reach.absolute(module or None, dots, current, is_package)
        if module:
            out.extend((module, w[0], w[-1]) for w in (p.split() for p in names.strip("()").split(","))
                       if w and (w[0] == "*" or w[0].isidentifier()))
    for m in reach._re(reach._IMPORT).finditer(text):
        out.extend((w[0], None, w[-1]) for w in (p.split() for p in m.group(1).split(",")) if w)
    return out


def test_imports_read_from_the_lines_that_mention_import():
    from flake8_tensorcopy.reach import imports

    text = (
        "import torch, numpy as np  # comment\n"
        "from . import models\n"
        "from ..utils import (\n    to_device,\n    Trainer as T,\n)\n"
        "x = 1; import os\n"
        "def f():\n    import importlib\n    from .sub.mod import *\n"
        "s = '''\nimport inside_a_string\n'''\n"
        "from x import y; import z\n"
        "import_module = None\n"
        "\timport tabbed\n"
        "from a \\\n  import b\n"
        "from broken import (a, b\n"
    )
    for current, package in (("pkg.sub.mod", False), ("pkg", True), (None, False)):
        assert imports(text, current, package) == _imports_by_finditer(text, current, package)
    for path in glob.glob(os.path.join(ROOT, "flake8_tensorcopy", "**", "*.py"), recursive=True):
        with open(path, encoding="utf-8") as f:
            source = f.read()
        assert imports(source, "flake8_tensorcopy.x", False) == _imports_by_finditer(source, "flake8_tensorcopy.x", False)


def test_a_top_level_torch_import_is_found_at_the_lines_that_mention_torch():
    """reach._imports_torch matches the pattern at the starts of the lines that mention torch:
    what a search of the whole text finds (the reference)."""
    from flake8_tensorcopy import reach

    pattern = reach._re(reach._TOP_LEVEL_TORCH)
    texts = [b"import torch\n", b"x = 1\nimport os, torch\n", b"import torchvision\n", b"from torch import nn\n",
             b"if ok:\n    import torch\n", b"s = 'torch'\nimport numpy as torch_np\n", b"import os,torch", b"",
             b"# import torch\n", b"import a, b as torch\n", b"from torch.nn import Linear  # torch\n",
             b"torch = None\nimport\ttorch\n"]
    for path in glob.glob(os.path.join(ROOT, "**", "*.py"), recursive=True):
        with open(path, "rb") as f:
            texts.append(f.read())
    found = 0
    for data in texts:
        expected = b"torch" in data and pattern.search(data) is not None
        assert reach._imports_torch(data) == expected, data[:200]
        found += expected
    assert 20 < found < len(texts)


@pytest.mark.parametrize("init", ["", "import torch\n\nhelpers = None  # not the submodule\n",
                                  "# a package\nVERSION = 'é'\n"],
                         ids=["silent", "binds the name", "latin-1"])
def test_a_submodule_imported_from_its_package_needs_no_summary_of_the_package(tmp_path, init):
    """`from pkg import helpers`, where pkg/helpers.py is a module: the package's summary is built
    only when its text spells `helpers` (any binding of the name does); else the import is the
    submodule's, without a walk of the package, and the result still depends on its text."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    encoded = init.encode("latin-1")
    (pkg / "__init__.py").write_bytes(b"# -*- coding: latin-1 -*-\n" + encoded if "é" in init else encoded)
    (pkg / "helpers.py").write_text("import torch\n\n\ndef make():\n    return torch.nn.Linear(2, 2)\n")
    main = pkg / "main.py"
    main.write_text("import torch\nfrom pkg import helpers\n\nh = helpers\nout = h.make()(torch.ones(2)).numpy()\n")
    project = Project(str(tmp_path))
    found = _lint(main, project)
    init_path = str(pkg / "__init__.py")
    assert init_path in project.touched
    if "helpers" in init:
        assert "pkg" in project._summaries  # what the package binds is asked of its summary
    else:
        assert [code for code, _, _ in found] == ["TNS101"]
        assert "pkg" not in project._summaries and "pkg.helpers" in project._summaries


def test_module_paths_from_directory_listings_are_module_path(tmp_path):
    """reach._module_path answers from one listing a directory what module_path answers with
    four file tests; a change seen by forget() is seen there too."""
    from flake8_tensorcopy import reach

    for rel in ("flat.py", "pkg/__init__.py", "pkg/mod.py", "pkg/sub/__init__.py", "pkg/sub/deep.py",
                "src/lib/__init__.py", "src/lib/core.py", "nspkg/inner.py", "odd.py/__init__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    names = ["flat", "pkg", "pkg.mod", "pkg.sub", "pkg.sub.deep", "pkg.missing", "lib", "lib.core", "nspkg",
             "nspkg.inner", "odd", "odd.py", "missing.mod", "pkg.mod.x"]
    root = str(tmp_path)
    reach.forget()
    assert [reach._module_path(root, n) for n in names] == [reach.module_path(root, n) for n in names]
    (tmp_path / "pkg" / "created.py").write_text("")
    reach.forget()
    assert reach._module_path(root, "pkg.created") == reach.module_path(root, "pkg.created") is not None


def test_a_linked_file_is_named_for_the_file_it_links_to(tmp_path):
    """reach.module_name names a file by its real path: a link under the root, to a module of the
    project, is that module (whether it is a link is read from its directory's listing); a link
    to a file outside the root is no module of the project; a plain file is itself."""
    from flake8_tensorcopy import reach

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "real.py").write_text("")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "far.py").write_text("")
    os.symlink("real.py", tmp_path / "pkg" / "alias.py")
    root = tmp_path / "root"
    root.mkdir()
    (root / "pkg").symlink_to(tmp_path / "pkg")
    os.symlink(tmp_path / "elsewhere" / "far.py", root / "outside.py")
    reach.forget()
    names = [reach.module_name(str(tmp_path), str(tmp_path / "pkg" / n)) for n in ("alias.py", "real.py")]
    assert names == ["pkg.real", "pkg.real"]
    real_root = os.path.realpath(root)
    assert reach.module_name(real_root, str(root / "outside.py")) is None
    assert reach.module_name(real_root, str(root / "pkg" / "alias.py")) is None  # (its real path is outside)


METERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/utils.py": """
        class AverageMeter:
            def __init__(self):
                self.reset()

            def reset(self):
                self.val = self.avg = self.sum = self.count = 0

            def update(self, val, n=1):
                self.val = val
                self.sum += val * n
                self.count += n
                self.avg = self.sum / self.count


        class LastValue:
            def update(self, val):
                self.val = val


        def meter():
            return AverageMeter()
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .utils import AverageMeter, LastValue, meter

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)


        def train(loader):
            losses, last, made = AverageMeter(), LastValue(), meter()
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.update(loss, x.size(0))
                last.update(loss)
                made.update(loss)
            print(f"loss {losses.avg:.4f}, last {last.val:.4f}, made {made.avg:.4f}")
    """,
}
METER_FINDINGS = [("TNS503", 17, "`losses` adds `loss` with its graph in every iteration and is never back-propagated "
                                 "(AverageMeter.update() adds it to self.sum, utils.py:10): every graph stays alive; use "
                                 "`loss.detach()` (or `.item()`)"),
                  ("TNS503", 19, "`made` adds `loss` with its graph in every iteration and is never back-propagated "
                                 "(AverageMeter.update() adds it to self.sum, utils.py:10): every graph stays alive; use "
                                 "`loss.detach()` (or `.item()`)")]


def test_a_meter_of_another_module_keeps_every_graph(tmp_path, capsys):
    # AverageMeter.update() in utils.py adds each loss with its graph to self.sum: the meter in
    # train.py keeps every batch's graph.  train.py alone has no `+=` for the rule to look at: the
    # imported module's meter methods make the file's calls of them looked at; also for a meter
    # another module's function makes (`meter()`).  Not for a class that keeps only the last
    # value.
    train = make(tmp_path, files=METERS, package="meterpkg")
    found = _reported_everywhere(train, METER_FINDINGS, capsys, tmp_path)
    assert found[0].fix.safety == "safe"
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown meter
    # Cached: the same from a warm summary cache; an edit of utils.py reaches train.py's result.
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS503") == 2
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS503") == 2
    utils = tmp_path / "meterpkg" / "utils.py"
    utils.write_text(utils.read_text().replace("self.sum += val * n", "self.sum += float(val) * n"))
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS503") == 0


def test_a_meter_of_another_module_keeps_every_graph_on_real_torch(tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=METERS, package="meterpkg2")
    monkeypatch.syspath_prepend(str(tmp_path))
    from meterpkg2 import train, utils

    from meterpkg2.utils import AverageMeter

    batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
    made = []  # the meter train() makes

    class Kept(AverageMeter):
        def __init__(self):
            super().__init__()
            made.append(self)

    monkeypatch.setattr(train, "AverageMeter", Kept)
    monkeypatch.setattr(utils, "AverageMeter", Kept)  # (what `meter()` makes)
    train.train(batches)
    assert len(made) == 2 and all(m.sum.grad_fn is not None and m.avg.grad_fn is not None for m in made)


GAN_HELPERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/losses.py": """
        import torch
        import torch.nn.functional as F


        def d_loss_fn(netD, real, fake):
            ones = torch.ones(real.shape[0], 1)
            zeros = torch.zeros(fake.shape[0], 1)
            return (F.binary_cross_entropy_with_logits(netD(real), ones)
                    + F.binary_cross_entropy_with_logits(netD(fake), zeros))


        def critic_loss(model, real, fake):
            return model(fake).mean() - model(real).mean()


        def critic_loss_detached(model, real, fake):
            return model(fake.detach()).mean() - model(real).mean()
    """,
    "PKG/sampling.py": """
        import torch


        def sample(netG, n):
            return netG(torch.randn(n, 4))
    """,
    "PKG/train.py": """
        import torch
        import torch.nn.functional as F
        from torch import nn

        from PKG import losses
        from .losses import critic_loss, critic_loss_detached, d_loss_fn
        from .sampling import sample


        def train(noise, real, ones):
            netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
            netD = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
            optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
            optimizerG = torch.optim.SGD(netG.parameters(), lr=0.1)
            fake = netG(noise)
            errD = d_loss_fn(netD, real, fake)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = F.binary_cross_entropy_with_logits(netD(fake), ones)
            errG.backward()
            optimizerG.step()
            return errD, errG


        def train_critic(noise, real):
            netG = nn.Linear(4, 3)
            netD = nn.Linear(3, 1)
            optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
            fake = netG(noise)
            loss_a = losses.critic_loss(netD, real, fake)
            loss_b = critic_loss(netD, real, fake.detach())
            loss_c = critic_loss_detached(netD, real, fake)
            optimizerD.zero_grad()
            (loss_a + loss_b + loss_c).backward()
            optimizerD.step()


        def train_sampled(noise, real, ones):
            netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
            netD = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
            optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
            optimizerG = torch.optim.SGD(netG.parameters(), lr=0.1)
            fake = sample(netG, 2)
            errD = F.binary_cross_entropy_with_logits(netD(fake), ones)
            errD.backward()
            optimizerD.step()
            netG.zero_grad()
            errG = F.binary_cross_entropy_with_logits(netD(fake), ones)
            errG.backward()
            optimizerG.step()
    """,
}
GAN_HELPER_FINDINGS = [
    ("TNS301", 16, 'd_loss_fn(netD, real, fake) (its discriminator call, losses.py:9) back-propagates into the '
                   'generator: the generator step then fails ("backward through the graph a second time"); use '
                   'd_loss_fn(netD, real, fake.detach())'),
    ("TNS301", 31, "losses.critic_loss(netD, real, fake) (its discriminator call, losses.py:13) back-propagates "
                   "into the generator; use losses.critic_loss(netD, real, fake.detach())"),
    ("TNS301", 45, 'netD(fake) back-propagates into the generator: the generator step then fails ("backward '
                   'through the graph a second time"); use netD(fake.detach())'),
]


def test_a_discriminator_loss_of_another_module_on_generator_output(tmp_path, capsys):
    # `d_loss_fn` in losses.py returns what netD makes of its `fake` argument: its call in
    # train.py is a discriminator call on undetached generator output, reported there (where the
    # fix goes), as a function of the same file is; with the module's discriminator handed as an
    # argument too (`critic_loss(model, ...)`).  Not for a detached argument, nor for a function
    # that detaches it itself.  losses.py names no generator: its own walk has no GAN domain, the
    # question from train.py walks it with one.  And `sample(netG, n)` of sampling.py returns
    # generator output, as a function of the file that does: its discriminator call in train.py
    # is reported.
    train = make(tmp_path, files=GAN_HELPERS, package="ganpkg")
    found = _reported_everywhere(train, GAN_HELPER_FINDINGS, capsys, tmp_path)
    # (Detaching an argument detaches all the function does with it: unsafe.)
    assert [v.fix.safety for v in found] == ["unsafe", "unsafe", "safe"]
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown helper
    # From a warm summary cache the same; an edit of losses.py reaches train.py's cached result.
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS301") == 3
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS301") == 3
    loss_module = tmp_path / "ganpkg" / "losses.py"
    loss_module.write_text(loss_module.read_text().replace("(netD(fake), zeros)", "(netD(fake.detach()), zeros)"))
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS301") == 2
    sampling = tmp_path / "ganpkg" / "sampling.py"
    sampling.write_text(sampling.read_text().replace("return netG(torch.randn(n, 4))",
                                                     "return netG(torch.randn(n, 4)).detach()"))
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS301") == 1


def test_a_discriminator_loss_of_another_module_fails_on_real_torch_and_its_fix_runs(tmp_path, capsys,
                                                                                    monkeypatch):
    import torch

    train = make(tmp_path, files=GAN_HELPERS, package="ganpkg2")
    monkeypatch.syspath_prepend(str(tmp_path))
    import ganpkg2.train as bad

    args = (torch.randn(2, 4), torch.randn(2, 3), torch.ones(2, 1))
    for step in (bad.train, bad.train_sampled):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            step(*args)
    tc(capsys, "fix", "--unsafe-fixes", "--no-cache", str(train), cwd=tmp_path)
    fixed = train.read_text()
    assert "d_loss_fn(netD, real, fake.detach())" in fixed
    assert "losses.critic_loss(netD, real, fake.detach())" in fixed
    assert fixed.count("netD(fake.detach())") == 1
    namespace = {"__name__": "ganpkg2.train", "__package__": "ganpkg2"}
    exec(compile(fixed, str(train), "exec"), namespace)
    errD, errG = namespace["train"](*args)
    assert errD.grad_fn is not None and errG.grad_fn is not None
    namespace["train_critic"](*args[:2])
    namespace["train_sampled"](*args)


D_STEPS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/steps.py": """
        def d_step(netD, real, fake, opt):
            opt.zero_grad()
            loss = netD(fake).mean() - netD(real).mean()
            loss.backward()
            opt.step()
            return loss


        def g_step(netD, fake, opt):
            opt.zero_grad()
            loss = -netD(fake).mean()
            loss.backward()
            opt.step()
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .steps import d_step, g_step


        def nets():
            netG, netD = nn.Linear(2, 3), nn.Linear(3, 1)
            return netG, netD, torch.optim.Adam(netD.parameters()), torch.optim.Adam(netG.parameters())


        def train(real):
            netG, netD, optD, optG = nets()
            for _ in range(2):
                fake = netG(torch.randn(4, 2))
                d_step(netD, real, fake, optD)
                optG.zero_grad()
                (-netD(fake).mean()).backward()
                optG.step()


        def train_helpers(real):
            netG, netD, optD, optG = nets()
            for _ in range(2):
                fake = netG(torch.randn(4, 2))
                d_step(netD, real, fake, optD)
                g_step(netD, fake, optG)


        def train_detached(real):
            netG, netD, optD, optG = nets()
            for _ in range(2):
                fake = netG(torch.randn(4, 2))
                d_step(netD, real, fake.detach(), optD)
                g_step(netD, fake, optG)
    """,
}
D_STEP_FINDINGS = [
    ("TNS301", 16, 'd_step(netD, real, fake, optD) (its discriminator call, steps.py:3) back-propagates into the '
                   'generator: the generator step then fails ("backward through the graph a second time"); use '
                   'd_step(netD, real, fake.detach(), optD)'),
    ("TNS301", 26, 'd_step(netD, real, fake, optD) (its discriminator call, steps.py:3) back-propagates into the '
                   'generator: the generator step then fails ("backward through the graph a second time"); use '
                   'd_step(netD, real, fake.detach(), optD)'),
]


def test_a_discriminator_step_of_another_module_on_generator_output(tmp_path, capsys, monkeypatch):
    # `d_step` in steps.py runs netD on its `fake` argument, back-propagates and steps the
    # optimizer it is given: called with undetached generator output and the discriminator's
    # optimizer, it is a discriminator step there, whose backward frees the generator's graph
    # before the generator step, inline or in `g_step` (whose own step, of the generator's
    # optimizer, is none: a function that shows no backward of its own is walked for calling
    # them).  Not with `fake.detach()`.
    import torch

    train = make(tmp_path, files=D_STEPS, package="dsteppkg")
    found = _reported_everywhere(train, D_STEP_FINDINGS, capsys, tmp_path)
    assert [v.fix.safety for v in found] == ["unsafe", "unsafe"]  # (detaching an argument: all the call does)
    monkeypatch.syspath_prepend(str(tmp_path))
    from dsteppkg import train as module

    for bad in (module.train, module.train_helpers):
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            bad(torch.randn(4, 3))
    module.train_detached(torch.randn(4, 3))
    fixed = tmp_path / "fixed.py"
    fixed.write_text(train.read_text().replace("d_step(netD, real, fake, optD)",
                                               "d_step(netD, real, fake.detach(), optD)"))
    tc(capsys, "fix", "--unsafe-fixes", "--no-cache", str(train), cwd=tmp_path)
    assert train.read_text() == fixed.read_text()
    namespace = {"__name__": "dsteppkg.train", "__package__": "dsteppkg"}
    exec(compile(train.read_text(), str(train), "exec"), namespace)
    namespace["train"](torch.randn(4, 3))
    namespace["train_helpers"](torch.randn(4, 3))


def test_discriminator_helpers_that_call_each_other_across_modules_terminate(tmp_path):
    # Each GAN helper question is a fresh walk of its module: loss_a() asks loss_b(), which asks
    # loss_a() again (the cycle reads as nothing there); what loss_b() passes back to loss_a()
    # still counts: the message names the call of loss_b() in a.py.
    files = {
        "pyproject.toml": "",
        "PKG/__init__.py": "",
        "PKG/a.py": """
            from .b import loss_b


            def loss_a(netD, real, fake, n):
                if n:
                    return loss_b(netD, real, fake, n - 1)
                return netD(real).mean()
        """,
        "PKG/b.py": """
            from .a import loss_a


            def loss_b(netD, real, fake, n):
                if n:
                    return loss_a(netD, real, fake, n - 1)
                return netD(fake).mean()
        """,
        "PKG/train.py": """
            import torch
            from torch import nn

            from .a import loss_a

            netG = nn.Linear(4, 3)
            netD = nn.Linear(3, 1)
            optimizerD = torch.optim.SGD(netD.parameters(), lr=0.1)
            fake = netG(torch.randn(2, 4))
            loss = loss_a(netD, torch.randn(2, 3), fake, 1)
            loss.backward()
            optimizerD.step()
        """,
    }
    train = make(tmp_path, files=files, package="cyclegan")
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == [("TNS301", 10)]
    assert "(its discriminator call, a.py:6)" in found[0].message


TOTALS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/trainer.py": """
        import torch


        def train_epoch(model, batches, opt):
            total = 0
            for x in batches:
                opt.zero_grad()
                loss = model(x).pow(2).mean()
                loss.backward()
                opt.step()
                total += loss
            return total / len(batches)
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        import PKG.trainer as T
        from .trainer import train_epoch


        def main(batches):
            model = nn.Linear(3, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            avg = train_epoch(model, batches, opt)
            print(f"epoch loss {avg:.4f}")
            print(T.train_epoch(model, batches, opt))
            return float(avg)
    """,
}


def test_a_total_returned_to_other_modules_that_only_display_it(tmp_path, capsys):
    # train_epoch() of trainer.py returns a total of every batch's loss with its graph, and its
    # only callers, in train.py, display it: reported in trainer.py, where the fix goes, as for a
    # function of the same file.  Not when another file differentiates what it returns, passes
    # the function on, or reaches it through a package imported whole; another file's own
    # train_epoch is not one of its calls.
    make(tmp_path, files=TOTALS, package="totpkg")
    trainer = tmp_path / "totpkg" / "trainer.py"
    expected = [("TNS503", 11, "`total` adds `loss` with its graph in every iteration and is never back-propagated "
                               "(the calls of train_epoch() only display what it returns, train.py:11): every graph "
                               "stays alive; use `loss.detach()` (or `.item()`)")]
    found = _reported_everywhere(trainer, expected, capsys, tmp_path)
    assert found[0].fix.safety == "unsafe"  # (a caller outside the project may differentiate it)
    assert lint_text(trainer.read_text(), options=Options()).violations == []  # one file alone: no caller
    other = tmp_path / "totpkg" / "other.py"
    other.write_text("def train_epoch(model):\n    return model\n\n\nx = train_epoch(1)\n")  # its own
    assert [(v.code, v.line) for v in engine_findings(trainer, tmp_path)] == [("TNS503", 11)]
    for reaching in ("from .trainer import train_epoch\n\n\ndef fit(m, b, o):\n"
                     "    train_epoch(m, b, o).backward()\n",
                     "from .trainer import train_epoch\n\nCALLBACKS = [train_epoch]\n",
                     "import totpkg\n\n\ndef fit(m, b, o):\n    print(totpkg.trainer.train_epoch(m, b, o))\n"):
        other.write_text(reaching)
        assert engine_findings(trainer, tmp_path) == [], reaching
    other.write_text("x = 1\n")
    notebook = tmp_path / "fit.ipynb"  # (its cells are not followed)
    notebook.write_text('{"cells": [{"cell_type": "code", "source": ["train_epoch(m, b, o).backward()"]}]}')
    assert engine_findings(trainer, tmp_path) == []
    notebook.unlink()
    # The command line does not keep a result that rests on files nobody imports: a file added
    # since that differentiates the total is seen at once.
    other.unlink()
    assert tc(capsys, "check", str(trainer), cwd=tmp_path).stdout.count(": TNS503") == 1
    assert tc(capsys, "check", str(trainer), cwd=tmp_path).stdout.count(": TNS503") == 1
    (tmp_path / "totpkg" / "fit.py").write_text(
        "from .trainer import train_epoch\n\n\ndef fit(m, b, o):\n    train_epoch(m, b, o).backward()\n")
    assert tc(capsys, "check", str(trainer), cwd=tmp_path).stdout.count(": TNS503") == 0


def test_a_total_returned_to_other_modules_keeps_every_graph_on_real_torch(tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=TOTALS, package="totpkg2")
    monkeypatch.syspath_prepend(str(tmp_path))
    from totpkg2 import trainer

    batches = [torch.randn(4, 3) for _ in range(3)]
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    assert trainer.train_epoch(model, batches, opt).grad_fn is not None  # every batch's graph, kept
    fixed = (tmp_path / "totpkg2" / "trainer.py").read_text().replace("total += loss", "total += loss.detach()")
    namespace: dict = {}
    exec(compile(fixed, "trainer.py", "exec"), namespace)
    avg = namespace["train_epoch"](model, batches, opt)
    assert avg.grad_fn is None and float(avg) >= 0


STEPS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/trainer.py": """
        import torch
        from torch import nn


        class Trainer:
            def __init__(self, model):
                self.model = model
                self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

            def step(self, x, y):
                self.optimizer.zero_grad()
                self._loss(x, y).backward()
                self.optimizer.step()

            def evaluate(self, x, y):
                with torch.no_grad():
                    return self._loss(x, y).item()

            def _loss(self, x, y):
                return nn.functional.mse_loss(self.model(x), y)
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .trainer import Trainer


        def fit(batches):
            trainer = Trainer(nn.Linear(4, 1))
            best = trainer.model.state_dict()
            for x, y in batches:
                trainer.step(x, y)
            trainer.model.load_state_dict(best)
            return trainer


        def score(batches):
            trainer = Trainer(nn.Linear(4, 1))
            start = trainer.model.state_dict()
            losses = [trainer.evaluate(x, y) for x, y in batches]
            torch.save(start, "start.pt")
            return losses
    """,
}
STEP_FINDINGS = [("TNS501", 9, "`trainer.model.state_dict()` is not a copy: `trainer.step(x, y)` (line 11) changes "
                               "its tensors in place before `best` is used (line 12); use "
                               "`copy.deepcopy(trainer.model.state_dict())`")]


def test_a_method_of_another_modules_class_that_steps_an_optimizer_changes_a_snapshot(tmp_path, capsys):
    # Trainer.step() in trainer.py steps an optimizer over the trainer's model: the state dict
    # train.py took before it moves with the weights, as for a class of the same file.  Not
    # Trainer.evaluate(), which steps nothing.
    train = make(tmp_path, files=STEPS, package="steppkg")
    _reported_everywhere(train, STEP_FINDINGS, capsys, tmp_path)
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown class
    trainer = tmp_path / "steppkg" / "trainer.py"
    trainer.write_text(trainer.read_text().replace("        self.optimizer.step()\n", "        pass\n"))
    assert tc(capsys, "check", str(train), cwd=tmp_path).stdout.count(": TNS501") == 0


def test_a_method_of_another_modules_class_that_steps_an_optimizer_on_real_torch(tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=STEPS, package="steppkg2")
    monkeypatch.syspath_prepend(str(tmp_path))
    from steppkg2.trainer import Trainer

    trainer = Trainer(torch.nn.Linear(4, 1))
    best = trainer.model.state_dict()
    before = best["weight"].clone()
    trainer.step(torch.randn(8, 4), torch.randn(8, 1))
    assert not torch.equal(best["weight"], before)  # the snapshot moved with the weights


SAVED = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/ops.py": """
        import torch


        def activation(x):
            return torch.sigmoid(x)


        def activation_off(x):
            with torch.no_grad():
                return torch.sigmoid(x)


        def scaled(x):
            return x * 2


        head = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Sigmoid())
        tail = torch.nn.Sequential(torch.nn.Sigmoid(), torch.nn.Linear(3, 3))
    """,
    "PKG/train.py": """
        import torch

        from .ops import activation, activation_off, head, scaled, tail


        def step(w):
            y = activation(w * 2)
            y.detach().zero_()
            y.sum().backward()


        def fine(w):
            y = activation_off(w * 2)
            y.detach().zero_()
            z = scaled(w)
            z.detach().zero_()
            return y, z.sum()


        def step_head(x):
            p = head(x)
            p.detach().zero_()
            p.sum().backward()


        def fine_tail(x):
            q = tail(x)
            q.detach().zero_()
            q.sum().backward()
    """,
}
SAVED_FINDINGS = [("TNS402", 8, "in-place write through y.detach() changes y, saved for the backward() below "
                                "(backward() raises RuntimeError); use y.detach().clone()"),
                  ("TNS402", 22, "in-place write through p.detach() changes p, saved for the backward() below "
                                 "(backward() raises RuntimeError); use p.detach().clone()")]


def test_what_another_modules_function_returns_through_an_operation_that_saves_it(tmp_path, capsys):
    # activation() in ops.py returns torch.sigmoid(x), which autograd saves: writing to it
    # through .detach() before backward() raises, as it does for torch.sigmoid in the file.  Not
    # for a function that turns grad off around it, nor for `x * 2` (saves nothing of it).  The
    # same for ops.py's `head`, an nn.Sequential that ends in a Sigmoid, not for its `tail`.
    train = make(tmp_path, files=SAVED, package="savedpkg")
    _reported_everywhere(train, SAVED_FINDINGS, capsys, tmp_path)
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown function


def test_what_another_modules_function_returns_through_an_operation_that_saves_it_on_real_torch(
        tmp_path, monkeypatch):
    import torch

    make(tmp_path, files=SAVED, package="savedpkg2")
    monkeypatch.syspath_prepend(str(tmp_path))
    from savedpkg2 import train

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        train.step(torch.randn(3, requires_grad=True))
    train.fine(torch.randn(3, requires_grad=True))[1].backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        train.step_head(torch.randn(2, 3))
    train.fine_tail(torch.randn(2, 3))


INSTANCES = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/models.py": """
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)

            def forward(self, x):
                return self.fc(x)
        """,
    "PKG/trainer.py": """
        class Trainer:
            def __init__(self, model, lr=0.1):
                self.model = model
                self.lr = lr

            @staticmethod
            def default_lr():
                return 0.1


        class Resetting:
            def __init__(self, model):
                self.model = model

            def reset(self, model):
                self.model = model


        class Guarded:
            def __init__(self, model):
                self.model = model

            @property
            def model(self):
                return self._model

            @model.setter
            def model(self, value):
                self._model = value.requires_grad_(False)
        """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .models import Net
        from .trainer import Guarded, Resetting, Trainer

        x = torch.randn(3, 4)


        def given():
            t = Trainer(Net())
            return t.model(x).numpy()


        def by_keyword():
            t = Trainer(lr=0.5, model=Net())
            return t.model(x).numpy()


        def replaced():
            t = Trainer(Net())
            t.model = nn.Identity()
            return t.model(x).numpy()


        def frozen():
            t = Trainer(Net().requires_grad_(False))
            return t.model(x).numpy()


        def set_elsewhere():
            r = Resetting(Net())
            return r.model(x).numpy()


        def property_():
            g = Guarded(Net())
            return g.model(x).numpy()
        """,
}


def test_an_instance_of_another_modules_class_holds_what_its_constructor_was_passed(tmp_path, capsys):
    # `Trainer(Net())`: Trainer's constructor keeps its `model` parameter as `self.model`, and
    # nothing else in the class sets it, so `t.model` is that Net.  Not where the file binds
    # `t.model` again, nor for a class with a method that sets the attribute too; a class with a
    # static method without parameters used to end the file's check in an internal error.
    # Nor where the class defines the name itself (a property: assigning it runs its setter).
    train = make(tmp_path, files=INSTANCES, package="pkg")
    expected = [("TNS101", 12), ("TNS101", 17)]
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == expected
    assert all("(Net: an nn.Module, models.py:4)" in v.message for v in found)
    proc = tc(capsys, "check", "--no-cache", str(train), cwd=tmp_path)
    assert sorted(("TNS101", int(line.split(":")[1])) for line in proc.stdout.splitlines() if ": TNS" in line) == expected
    proc = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(code)s:%(row)d", str(train)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert sorted(tuple(line.split(":")) for line in proc.stdout.split()) == [(c, str(n)) for c, n in expected]
    # (`set_elsewhere` raises too as it stands; not reported: `reset` may change it first.)
    for name in ("given", "by_keyword", "replaced", "frozen", "property_"):
        run = subprocess.run([sys.executable, "-c", f"from pkg.train import {name}; {name}()"],
                             capture_output=True, text=True, cwd=tmp_path)
        if name in ("given", "by_keyword"):
            assert "RuntimeError: Can't call numpy() on Tensor that requires grad" in run.stderr, run.stderr
        else:
            assert run.returncode == 0, run.stderr


METHOD_SINKS = {
    "pyproject.toml": "[project]\nname = 'demo'\n",
    "PKG/__init__.py": "",
    "PKG/holders.py": """
        import numpy as np


        class Holder:
            def __init__(self, t, model=None):
                self.t = t
                self.model = model

            def show(self):
                return self.t.numpy()

            @staticmethod
            def describe():
                return "holder"

            def convert(self, x):
                return np.asarray(self.model(x))

            def safe(self, x):
                return self.model(x).detach().numpy()

            def dump(*args):
                return args[0].t.numpy()
        """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .holders import Holder

        w = torch.ones(3, requires_grad=True)
        x = torch.ones(3)


        def held():
            h = Holder(w * 2, model=nn.Linear(3, 3))
            h.show()


        def converted():
            h = Holder(w.detach(), nn.Linear(3, 3))
            h.convert(x)


        def detached():
            h = Holder(w.detach(), nn.Linear(3, 3))
            h.show()
            h.safe(x)


        def under_no_grad():
            h = Holder(w.detach(), nn.Linear(3, 3))
            with torch.no_grad():
                h.convert(x)


        def replaced():
            h = Holder(w.detach(), nn.Linear(3, 3))
            h.model = nn.Linear(3, 3).requires_grad_(False)
            h.convert(x)


        class Runner:
            def __init__(self):
                self.holder = Holder(w.detach(), nn.Linear(3, 3))

            def run(self):
                return self.holder.convert(x)


        def unnamed():
            Holder(w * 2).dump()
        """,
    "PKG/by_module.py": """
        import torch

        from . import holders

        w = torch.ones(3, requires_grad=True)


        def through_its_module():
            h = holders.Holder(w * 2)
            h.show()
        """,
}


def test_a_method_of_another_modules_class_reports_for_what_the_constructor_was_passed(tmp_path, capsys):
    # `h = Holder(w * 2)` then `h.show()`, where `show` calls `.numpy()` on `self.t`: reported at
    # the method's call, in the file that constructed the instance (as `to_numpy(out)` is at its
    # argument), saying where the conversion is; not where the method detaches, under no_grad,
    # nor once the file binds the attribute again; also for a class called through its module
    # (`holders.Holder(...)`).  A method that names no instance
    # (`def dump(*args)`) used to end the check in an internal error.
    train = make(tmp_path, files=METHOD_SINKS, package="pkg")
    expected = [("TNS101", 12), ("TNS103", 17), ("TNS103", 43)]
    found = engine_findings(train, tmp_path)
    assert [(v.code, v.line) for v in found] == expected
    assert found[0].message.startswith("h.t (h.show() calls .numpy() on it, holders.py:10) requires grad")
    assert "what h.model computes, which requires grad (a NumPy call in it converts it, holders.py:17)" \
        in found[1].message and "use `torch.no_grad()` around the call" in found[1].message
    assert "what self.holder.model computes" in found[2].message
    for _ in range(2):  # a cold summary cache, then a warm one
        proc = tc(capsys, "check", str(train), cwd=tmp_path)
        assert sorted((line.split(": ")[1][:6], int(line.split(":")[1])) for line in proc.stdout.splitlines()
                      if ": TNS" in line) == sorted(expected)
    proc = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(code)s:%(row)d", str(train)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert sorted(tuple(line.split(":")) for line in proc.stdout.split()) == sorted((c, str(n)) for c, n in expected)
    for call in ("held()", "converted()", "Runner().run()", "detached()", "under_no_grad()", "replaced()"):
        run = subprocess.run([sys.executable, "-c", f"from pkg.train import *; {call}"],
                             capture_output=True, text=True, cwd=tmp_path)
        if call in ("held()", "converted()", "Runner().run()"):
            assert "RuntimeError: Can't call numpy() on Tensor that requires grad" in run.stderr, run.stderr
        else:
            assert run.returncode == 0, run.stderr
    by_module = tmp_path / "pkg" / "by_module.py"
    _reported_everywhere(by_module, [("TNS101", 10, "h.t (h.show() calls .numpy() on it, holders.py:10) requires "
                                                   "grad, so .numpy() raises RuntimeError; use `.detach()` on what "
                                                   "its constructor call passes for it")], capsys, tmp_path)
    run = subprocess.run([sys.executable, "-c", "from pkg.by_module import through_its_module as f; f()"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert "RuntimeError: Can't call numpy() on Tensor that requires grad" in run.stderr, run.stderr


FUNCTION_STEPS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/loops.py": """
        import torch


        def train_one_epoch(model, opt, batches):
            for x, y in batches:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()


        def evaluate(model, batches):
            with torch.no_grad():
                return [model(x).sum().item() for x, _ in batches]
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from . import loops
        from .loops import evaluate, train_one_epoch


        def fit(batches):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            best = model.state_dict()
            train_one_epoch(model, opt, batches)
            model.load_state_dict(best)
            return model


        def fit_by_module(b):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            best = model.state_dict()
            loops.train_one_epoch(model, opt, b)
            model.load_state_dict(best)
            return model


        def score(batches):
            model = nn.Linear(4, 1)
            start = model.state_dict()
            losses = evaluate(model, batches)
            torch.save(start, "start.pt")
            return losses
    """,
}
FUNCTION_STEP_FINDINGS = [
    ("TNS501", 11, "`model.state_dict()` is not a copy: `train_one_epoch(model, opt, batches)` (line 12) changes "
                   "its tensors in place before `best` is used (line 13); use `copy.deepcopy(model.state_dict())`"),
    ("TNS501", 20, "`model.state_dict()` is not a copy: `loops.train_one_epoch(model, opt, b)` (line 21) "
                   "changes its tensors in place before `best` is used (line 22); use "
                   "`copy.deepcopy(model.state_dict())`")]


def test_a_function_of_another_module_that_steps_an_optimizer_changes_a_snapshot(tmp_path, capsys, monkeypatch):
    # train_one_epoch() in loops.py steps the optimizer it is given: the state dict train.py took
    # before the call moves with the weights, as for a function of the same file (by name or
    # through the module).  Not evaluate(), which steps nothing.
    train = make(tmp_path, files=FUNCTION_STEPS, package="fsteppkg")
    _reported_everywhere(train, FUNCTION_STEP_FINDINGS, capsys, tmp_path)
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown function
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    from fsteppkg.loops import train_one_epoch

    model = torch.nn.Linear(4, 1)
    best = model.state_dict()
    before = best["weight"].clone()
    train_one_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), [(torch.randn(8, 4), torch.randn(8, 1))])
    assert not torch.equal(best["weight"], before)  # the snapshot moved with the weights


BUFFERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/buffers/__init__.py": "",
    "PKG/buffers/base.py": """
        import torch


        class BaseBuffer:
            def __init__(self, size, device="cuda"):
                self.size = size
                self.device = device
                self.obs = torch.zeros(size, 4)

            def to_torch(self, array):
                return torch.as_tensor(array).to(self.device)

            def sample(self, n):
                return self.to_torch(self.obs[torch.randint(0, self.size, (n,))])
    """,
    "PKG/buffers/replay.py": """
        from .base import BaseBuffer


        class ReplayBuffer(BaseBuffer):
            pass
    """,
    "PKG/train.py": """
        from .buffers.replay import ReplayBuffer

        buf = ReplayBuffer(100)
        obs = buf.sample(4)
        print(obs.numpy())
    """,
    "PKG/show.py": """
        from .buffers.base import BaseBuffer

        buf = BaseBuffer(100)
        t = buf.to_torch([1.0])
        print(t.numpy())
    """,
}


def test_a_file_without_torch_whose_tensors_come_from_a_base_class_in_another_module(tmp_path, capsys):
    # The issue's replay buffer: train.py never mentions torch, and imports a class whose base,
    # in buffers/base.py, moves its samples `.to(device)`: a module that imports torch reached
    # through the class's base.  show.py mentions torch only in a method's name (`to_torch`),
    # and does not import it: its tensors come from the project all the same.
    make(tmp_path, files=BUFFERS, package="rlpkg")
    # Each message says which method of which file made the tensor.
    for name, var, made in (("train.py", "obs", "BaseBuffer.sample(), base.py:13"),
                            ("show.py", "t", "BaseBuffer.to_torch(), base.py:10")):
        path = tmp_path / "rlpkg" / name
        _reported_everywhere(path, [("TNS102", 5, f"{var} ({made}) may be on an accelerator, so .numpy() raises "
                                                  f"TypeError; use {var}.cpu().numpy()")], capsys, tmp_path)
        proc = tc(capsys, "check", "--no-cache", "--strict", str(path), cwd=tmp_path)
        assert proc.stdout.count(": TNS") == 1  # what the project makes certain, --strict or not


SAVING_MODULES = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/heads.py": """
        import torch
        from torch import nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)

            def forward(self, x):
                return torch.sigmoid(self.fc(x))


        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)

            def forward(self, x):
                return self.fc(x) * 2
    """,
    "PKG/train.py": """
        import torch

        from .heads import Head, Plain


        def step(x):
            head = Head()
            p = head(x)
            p.detach().zero_()
            p.sum().backward()


        def fine(x):
            plain = Plain()
            q = plain(x)
            q.detach().zero_()
            q.sum().backward()
    """,
}


def test_a_module_class_of_another_module_whose_forward_returns_what_it_saves(tmp_path, capsys, monkeypatch):
    # Head.forward in heads.py returns torch.sigmoid(...), whose result autograd saves: writing
    # to it through .detach() before backward() raises, as for an nn.Sigmoid.  Not Plain's.
    train = make(tmp_path, files=SAVING_MODULES, package="savingpkg")
    _reported_everywhere(train, [("TNS402", 9, "in-place write through p.detach() changes p, saved for the "
                                               "backward() below (backward() raises RuntimeError); use "
                                               "p.detach().clone()")], capsys, tmp_path)
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    from savingpkg.train import fine, step

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        step(torch.randn(2, 3))
    fine(torch.randn(2, 3))


STATE_HELPERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/checkpoints.py": """
        import copy


        def snapshot(m):
            return m.state_dict()


        def saved_copy(m):
            return copy.deepcopy(m.state_dict())


        def parameters_of(m):
            return list(m.parameters())
    """,
    "PKG/train.py": """
        import copy

        import torch
        from torch import nn

        from . import checkpoints
        from .checkpoints import saved_copy, snapshot


        def fit(x, y, fixed=False):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            start = model.state_dict()["weight"].clone()
            best = snapshot(model)
            kept = saved_copy(model)
            by_module = checkpoints.snapshot(model)
            for _ in range(3):
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            model.load_state_dict(best)
            restored = torch.equal(model.weight, start)
            torch.save(by_module, "by_module.pt")
            model.load_state_dict(kept)
            return restored
    """,
}
STATE_HELPER_FINDINGS = [
    ("TNS501", 14, "`snapshot(model)` is not a copy (snapshot() returns model.state_dict(), checkpoints.py:4): "
                   "`opt.step()` (line 20) changes its tensors in place before `best` is used (line 21); use "
                   "`copy.deepcopy(snapshot(model))`"),
    ("TNS501", 16, "`checkpoints.snapshot(model)` is not a copy (snapshot() returns model.state_dict(), "
                   "checkpoints.py:4): `opt.step()` (line 20) changes its tensors in place before `by_module` is "
                   "used (line 23); use `copy.deepcopy(checkpoints.snapshot(model))`")]


def test_a_function_of_another_module_that_returns_a_state_dict_is_not_a_copy(tmp_path, capsys, monkeypatch):
    # snapshot() in checkpoints.py returns the state dict of the module it is handed: what
    # train.py keeps of it moves with the weights, as `model.state_dict()` would (by name and
    # through the module).  Not saved_copy(), which copies.  The file itself never calls
    # `.state_dict()` on a module.
    train = make(tmp_path, files=STATE_HELPERS, package="sdhelperpkg")
    found = _reported_everywhere(train, STATE_HELPER_FINDINGS, capsys, tmp_path)
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown function
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    from sdhelperpkg import train as module

    assert module.fit(x, y) is False  # the restored "snapshot" is the trained weights
    # The fixes (unsafe) make both snapshots copies: the weights are restored.
    text = train.read_text()
    for v in sorted(found, key=lambda v: -v.line):
        (edit,) = v.fix.edits
        text = text[:edit.start] + edit.text + text[edit.end:]
    assert "best = copy.deepcopy(snapshot(model))" in text
    assert "by_module = copy.deepcopy(checkpoints.snapshot(model))" in text
    train.write_text(text)
    import importlib

    importlib.reload(module)
    assert module.fit(x, y) is True


VIEW_HELPERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/convert.py": """
        def to_numpy(t):
            return t.detach().cpu().numpy()


        def to_numpy_copy(t):
            return t.detach().cpu().numpy().copy()


        def view(t):
            return t.detach()
    """,
    "PKG/train.py": """
        import numpy as np
        import torch
        from torch import nn

        from .convert import to_numpy, to_numpy_copy, view


        def fit(x, y):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            arrays, copies, views = [], [], []
            for _ in range(3):
                arrays.append(to_numpy(model.weight))
                copies.append(to_numpy_copy(model.weight))
                views.append(view(model.weight))
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            moved = not (np.stack(arrays)[0] == np.stack(arrays)[-1]).all()
            copied = not (np.stack(copies)[0] == np.stack(copies)[-1]).all()
            viewed = not torch.equal(torch.stack(views)[0], torch.stack(views)[-1])
            return moved, copied, viewed
    """,
}
VIEW_HELPER_FINDINGS = [
    ("TNS502", 13, "`to_numpy(model.weight)` shares memory with `model.weight` (to_numpy() returns "
                   "model.weight.detach().cpu().numpy(), convert.py:1): `opt.step()` (line 18) changes it in place "
                   "before `arrays` is used (line 19); use `to_numpy(model.weight).copy()`"),
    ("TNS502", 15, "`view(model.weight)` shares memory with `model.weight` (view() returns "
                   "model.weight.detach(), convert.py:9): `opt.step()` (line 18) changes it in place before "
                   "`views` is used (line 21); use `view(model.weight).clone()`")]


def test_a_function_of_another_module_that_returns_a_view_is_not_a_copy(tmp_path, capsys, monkeypatch):
    # to_numpy() and view() in convert.py return views of the tensor they are handed: what
    # train.py keeps of them moves with the weights, as `.detach().numpy()` would.  Not
    # to_numpy_copy(), which copies.  The file itself makes no view.
    train = make(tmp_path, files=VIEW_HELPERS, package="viewhelperpkg")
    found = _reported_everywhere(train, VIEW_HELPER_FINDINGS, capsys, tmp_path)
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown function
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    from viewhelperpkg import train as module

    assert module.fit(x, y) == (False, True, False)  # the views moved with the weights
    text = train.read_text()
    for v in sorted(found, key=lambda v: -v.line):  # the fixes (unsafe) copy
        (edit,) = v.fix.edits
        text = text[:edit.start] + edit.text + text[edit.end:]
    train.write_text(text)
    import importlib

    importlib.reload(module)
    assert module.fit(x, y) == (True, True, True)


LOCAL_HELPERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/checkpoints.py": """
        def snapshot(m):
            state = m.state_dict()
            return state


        def to_numpy(t):
            array = t.detach().cpu().numpy()
            return array


        def cloned(m):
            state = m.state_dict()
            for k in state:
                state[k] = state[k].clone()
            return state
    """,
    "PKG/train.py": """
        import numpy as np
        import torch
        from torch import nn

        from .checkpoints import cloned, snapshot, to_numpy


        def fit(x, y):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            start = model.weight.detach().clone()
            best = snapshot(model)
            kept = cloned(model)
            first = to_numpy(model.weight)
            for _ in range(3):
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            moved = not np.array_equal(first, start.numpy())
            model.load_state_dict(best)
            restored = torch.equal(model.weight, start)
            model.load_state_dict(kept)
            return restored, moved, torch.equal(model.weight, start)
    """,
}
LOCAL_HELPER_FINDINGS = [
    ("TNS501", 12, "`snapshot(model)` is not a copy (snapshot() returns model.state_dict(), checkpoints.py:1): "
                   "`opt.step()` (line 18) changes its tensors in place before `best` is used (line 20); use "
                   "`copy.deepcopy(snapshot(model))`"),
    ("TNS502", 14, "`to_numpy(model.weight)` shares memory with `model.weight` (to_numpy() returns "
                   "model.weight.detach().cpu().numpy(), checkpoints.py:6): `opt.step()` (line 18) changes it in "
                   "place before `first` is used (line 19); use `to_numpy(model.weight).copy()`")]


def test_a_helper_that_returns_a_local_bound_to_a_state_dict_or_a_view_copies_nothing(tmp_path, capsys, monkeypatch):
    # `state = m.state_dict()` then `return state` (and the same of a NumPy view) returns what
    # `return m.state_dict()` returns.  Not cloned(), whose local is indexed and rebound key by
    # key: it copies every tensor.
    train = make(tmp_path, files=LOCAL_HELPERS, package="localhelperpkg")
    _reported_everywhere(train, LOCAL_HELPER_FINDINGS, capsys, tmp_path)
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    from localhelperpkg import train as module

    restored, moved, restored_from_clone = module.fit(torch.randn(32, 4), torch.randn(32, 1))
    assert not restored and moved  # the "snapshots" followed the weights
    assert restored_from_clone


KEEPING_CLASS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/stopping.py": """
        import copy

        import torch
        from torch import nn


        class EarlyStopping:
            def __init__(self, patience=2):
                self.patience = patience
                self.best_loss = float("inf")
                self.best_state = None
                self.bad_epochs = 0

            def step(self, loss, model):
                if loss < self.best_loss:
                    self.best_loss = loss
                    self.best_state = model.state_dict()
                    self.bad_epochs = 0
                else:
                    self.bad_epochs += 1
                return self.bad_epochs >= self.patience


        class CopyingStopper(EarlyStopping):
            def step(self, loss, model):
                if loss < self.best_loss:
                    self.best_loss = loss
                    self.best_state = copy.deepcopy(model.state_dict())
                return False


        class Trainer:
            def __init__(self, model, opt):
                self.model = model
                self.opt = opt
                self.best_loss = float("inf")
                self.best_state = None

            def train_epoch(self, x, y):
                self.opt.zero_grad()
                nn.functional.mse_loss(self.model(x), y).backward()
                self.opt.step()

            def validate(self, x_val, y_val):
                with torch.no_grad():
                    val_loss = nn.functional.mse_loss(self.model(x_val), y_val).item()
                if val_loss < self.best_loss:
                    self.best_loss = val_loss
                    self.best_state = self.model.state_dict()
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .stopping import CopyingStopper, EarlyStopping, Trainer


        def fit(x, y, x_val, y_val):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            stopper = EarlyStopping()
            for epoch in range(50):
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
                with torch.no_grad():
                    val_loss = nn.functional.mse_loss(model(x_val), y_val).item()
                if stopper.step(val_loss, model):
                    break
            model.load_state_dict(stopper.best_state)
            with torch.no_grad():
                return stopper.best_loss, nn.functional.mse_loss(model(x_val), y_val).item()


        def fit_copying(x, y, x_val, y_val):
            model = nn.Linear(4, 1)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            stopper = CopyingStopper()
            for epoch in range(50):
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
                with torch.no_grad():
                    stopper.step(nn.functional.mse_loss(model(x_val), y_val).item(), model)
            model.load_state_dict(stopper.best_state)
            with torch.no_grad():
                return stopper.best_loss, nn.functional.mse_loss(model(x_val), y_val).item()


        def fit_trainer(x, y, x_val, y_val):
            model = nn.Linear(4, 1)
            trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
            for epoch in range(50):
                trainer.train_epoch(x, y)
                trainer.validate(x_val, y_val)
            model.load_state_dict(trainer.best_state)
            with torch.no_grad():
                return trainer.best_loss, nn.functional.mse_loss(model(x_val), y_val).item()
    """,
}
KEEPING_FINDINGS = [
    ("TNS501", 17, "`model.state_dict()` is not a copy (kept in stopper.best_state by EarlyStopping.step(), "
                   "stopping.py:17): `opt.step()` (line 14) changes its tensors in place before `stopper.best_state` "
                   "is used (line 19); use `copy.deepcopy(model.state_dict())` in `EarlyStopping.step()`"),
    ("TNS501", 44, "`trainer.model.state_dict()` is not a copy (kept in trainer.best_state by Trainer.validate(), "
                   "stopping.py:49): `trainer.train_epoch(x, y)` (line 43) changes its tensors in place before "
                   "`trainer.best_state` is used (line 45); use `copy.deepcopy(self.model.state_dict())` in "
                   "`Trainer.validate()`")]


def test_a_method_of_another_module_that_keeps_a_state_dict_is_not_a_copy(tmp_path, capsys, monkeypatch):
    # EarlyStopping.step() in stopping.py keeps the state dict of the model it is handed in
    # `self.best_state`: after more steps, what train.py restores from it are the last weights.
    # Not CopyingStopper.step(), which copies (its class overrides the method).  Trainer.validate()
    # keeps the state dict of the model the trainer holds: `trainer.validate(...)` is the call.
    train = make(tmp_path, files=KEEPING_CLASS, package="keepingpkg")
    found = _reported_everywhere(train, KEEPING_FINDINGS, capsys, tmp_path)
    assert found[0].fix is None  # the copy goes in stopping.py
    assert lint_text(train.read_text(), options=Options()).violations == []  # one file alone: unknown class
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    torch.manual_seed(0)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    x_val, y_val = x[:16], -y[:16]  # fitting y moves away from -y: the first epoch is the best
    from keepingpkg import train as module

    best, restored = module.fit(x, y, x_val, y_val)
    assert abs(restored - best) > 1e-3  # the "best" weights were not restored
    best, restored = module.fit_copying(x, y, x_val, y_val)
    assert abs(restored - best) < 1e-6
    # A trainer's `validate()` keeps the state dict of the model the trainer holds.
    best, restored = module.fit_trainer(x, y, x_val, y_val)
    assert abs(restored - best) > 1e-3


INITIALISERS = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/init.py": """
        import torch


        def zero_init(params):
            for p in params:
                p.fill_(0.0)


        def zero_init_ok(params):
            with torch.no_grad():
                for p in params:
                    p.zero_()


        def rescale_data(params, k):
            for p in params:
                p.data.mul_(k)


        def shrink(w, k):
            w.mul_(k)
    """,
    "PKG/train.py": """
        import torch
        from torch import nn

        from .init import rescale_data, shrink, zero_init, zero_init_ok


        def build():
            model = nn.Linear(3, 2)
            zero_init(model.parameters())
            zero_init_ok(model.parameters())
            rescale_data(model.parameters(), 0.5)
            shrink(model.weight, 0.5)
            shrink(torch.ones(2), 0.5)
            return model
    """,
}
INITIALISER_FINDINGS = [
    ("TNS401", 9, "in-place write to each of model.parameters() (in zero_init(), init.py:6), a leaf that requires "
                  "grad, raises RuntimeError; wrap it in `with torch.no_grad():`"),
    ("TNS401", 12, "in-place write to model.weight (in shrink(), init.py:21), a leaf that requires grad, raises "
                   "RuntimeError; wrap it in `with torch.no_grad():`"),
]


def test_a_call_passes_parameters_to_another_modules_initialiser(tmp_path, capsys, monkeypatch):
    # An initialiser in another module that fills or rescales each parameter it is given in place
    # (no gradient read): reported at the argument, as a manual update is.  Not where it turns
    # grad off or writes through `.data`, nor for a tensor that does not require grad.
    train = make(tmp_path, files=INITIALISERS, package="initpkg")
    _reported_everywhere(train, INITIALISER_FINDINGS, capsys, tmp_path)
    import torch

    monkeypatch.syspath_prepend(str(tmp_path))
    from initpkg import init

    model = torch.nn.Linear(3, 2)
    for bad in (lambda: init.zero_init(model.parameters()), lambda: init.shrink(model.weight, 0.5)):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            bad()
    init.zero_init_ok(model.parameters())
    init.rescale_data(model.parameters(), 0.5)
    init.shrink(torch.ones(2), 0.5)



def test_a_module_class_of_another_module_with_its_own_call(tmp_path, capsys, monkeypatch):
    train = make(tmp_path, files=OWN_CALLS, package="callpkg")
    _reported_everywhere(train, OWN_CALL_FINDINGS, capsys, tmp_path)
    _each_function_on_real_torch(tmp_path / "run", monkeypatch, OWN_CALLS, "callpkg2", OWN_CALL_FINDINGS, 3)


LEAF_FACTORIES = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/params.py": """
        import torch


        def make_leaf():
            return torch.ones(2, requires_grad=True)


        def make_plain():
            return torch.ones(2)
    """,
    "PKG/train.py": """
        from .params import make_leaf, make_plain


        def reset():
            t = make_leaf()
            t.zero_()


        def reset_plain():
            t = make_plain()
            t.zero_()
    """,
}
LEAF_FACTORY_FINDINGS = [("TNS401", 6, "in-place write to t (make_leaf(), params.py:4), a leaf that requires grad, "
                                      "raises RuntimeError; wrap it in `with torch.no_grad():`")]


def test_a_leaf_another_module_makes_and_returns(tmp_path, capsys, monkeypatch):
    # train.py never mentions torch nor anything TNS401's text test reads as a leaf: the leaf
    # comes from a function of params.py that makes one and returns it.  Reported with where it
    # was made, the same from the engine, the command line and flake8; not where the function
    # returns a plain tensor; and real torch raises where it is reported.
    train = make(tmp_path, files=LEAF_FACTORIES, package="leafpkg")
    _reported_everywhere(train, LEAF_FACTORY_FINDINGS, capsys, tmp_path)
    run = tmp_path / "run"
    make(run, files=LEAF_FACTORIES, package="leafpkg2")
    monkeypatch.syspath_prepend(str(run))
    import importlib

    module = importlib.import_module("leafpkg2.train")
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        module.reset()
    module.reset_plain()


def test_each_domain_is_widened_by_its_own_rules_triggers(tmp_path, monkeypatch):
    # A module that defines a meter class (TNS503's trigger), a snapshot helper (TNS501's) and a
    # leaf factory (TNS401's), all called by train.py: each domain hears only of its own rules'.
    from flake8_tensorcopy.analysis.accumulators import AccumulatorDomain
    from flake8_tensorcopy.analysis.snapshots import SnapshotDomain

    heard = []
    for cls in (AccumulatorDomain, SnapshotDomain):
        monkeypatch.setattr(cls, "widen", lambda self, names, _f=cls.widen: heard.append((self.key, names))
                            or _f(self, names))
    files = {
        "pyproject.toml": "",
        "PKG/__init__.py": "",
        "PKG/utils.py": """
            import torch


            class Meter:
                def __init__(self):
                    self.total = 0

                def update(self, v):
                    self.total += v


            def snapshot(model):
                return model.state_dict()


            def make_leaf():
                return torch.ones(2, requires_grad=True)
        """,
        "PKG/train.py": """
            import torch
            from .utils import Meter, snapshot, make_leaf


            def fit(model, opt, batches):
                meter = Meter()
                best = snapshot(model)
                for x in batches:
                    loss = model(x).sum()
                    loss.backward()
                    opt.step()
                    meter.update(loss)
                t = make_leaf()
                t.zero_()
                return best, meter
        """,
    }
    train = make(tmp_path, files=files, package="wpkg")
    engine_findings(train, tmp_path)
    assert sorted(heard) == [("accumulators", frozenset({"update"})), ("snapshots", frozenset({"snapshot"}))]


DICT_RETURNED = {
    "pyproject.toml": "",
    "PKG/__init__.py": "",
    "PKG/steps.py": """
        import torch
        from torch import nn

        model = nn.Linear(3, 2)


        def step(x):
            y = model(x)
            return {"loss": y.pow(2).mean().item(), "pred": y, "label": torch.zeros(4)}
    """,
    "PKG/train.py": """
        import torch

        from .steps import step


        def run():
            res = step(torch.randn(4, 3))
            return res["label"].numpy(), res["loss"], res["pred"].numpy()
    """,
}


def test_a_dict_another_module_returns_is_followed_key_by_key(tmp_path, capsys, monkeypatch):
    # steps.step() returns a dict: its "pred" requires grad, its "label" and "loss" do not.  In
    # train.py only `res["pred"].numpy()` is reported (engine, CLI, flake8), and it raises there.
    train = make(tmp_path, files=DICT_RETURNED, package="dictpkg")
    found = _reported_everywhere(train, [("TNS101", 8, 'res["pred"] requires grad, so .numpy() raises '
                                          'RuntimeError; use res["pred"].detach().numpy()')], capsys, tmp_path)
    assert found[0].fix is not None
    assert [v.line for v in _strict_findings(train, tmp_path)] == [8]
    import torch  # noqa: F401

    monkeypatch.syspath_prepend(str(tmp_path))
    from dictpkg import train as module

    with pytest.raises(RuntimeError, match="requires grad"):
        module.run()


def test_a_file_outside_the_root_with_a_decorator_of_a_package_out_of_sight(tmp_path, capsys):
    """A file checked with a project whose root does not hold it (`--project-root` elsewhere, or
    the current directory of a tree without a marker file): a method decorated by a name its
    relative import leaves unknown is asked whether it runs without grad before its walk begins,
    and is then walked and reported as in any file (it was an internal error)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    sub = tmp_path / "out" / "pkg" / "sub"
    sub.mkdir(parents=True)
    path = sub / "mod.py"
    path.write_text(textwrap.dedent("""\
        import torch
        from torch import nn

        from ..utils import auto_docstring


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            @auto_docstring
            def forward(self, x):
                return self.fc(x).numpy()
        """))
    project = Project(str(root), Options())
    project.begin()
    from flake8_tensorcopy.engine import select_rules

    result = lint_text(path.read_text(), select_rules(["TNS1"]), Options(), project=project, path=str(path))
    assert result.error is None
    assert [(v.code, v.line) for v in result.violations] == [("TNS101", 14)]
    out = tc(capsys, "check", "--no-cache", "--isolated", "--project-root", str(root), str(path))
    assert out.returncode == 1 and "internal error" not in out.stdout + out.stderr, out.stdout + out.stderr
    assert "mod.py:14:" in out.stdout


def test_a_rule_active_only_for_calls_of_the_projects_functions_walks_no_function_of_its_own(tmp_path, monkeypatch):
    # main.py never names matplotlib (TNS106's pre-filter) but calls a plotting helper of viz.py:
    # TNS106 is asked of the function that calls it, not of one whose text its own scope test
    # would admit (`masked_fill(` holds `fill(`, a plotting name), which TNS106 cannot report in.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "viz.py").write_text(
        "import matplotlib.pyplot as plt\n\n\ndef show(y):\n    plt.plot(y)\n")
    main = tmp_path / "main.py"
    main.write_text(textwrap.dedent("""\
        import torch
        from viz import show


        def masked(x, m):
            return x.masked_fill(m, 0.0)


        def report(model, x):
            show(model(x))
        """))
    from flake8_tensorcopy.analysis.walker import Walker

    walked = []
    real = Walker._run_function

    def spy(self, func, *args, **kwargs):
        walked.append(func.name)
        return real(self, func, *args, **kwargs)

    monkeypatch.setattr(Walker, "_run_function", spy)
    project = Project(str(tmp_path))
    result = lint_text(main.read_text(), select_rules(["TNS106"]), Options(), project=project, path=str(main))
    assert result.error is None
    assert "report" in walked and "masked" not in walked
