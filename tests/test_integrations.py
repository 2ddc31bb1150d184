"""pre-commit hooks (through real `pre-commit try-repo`) and the LibCST codemod command."""

import filecmp
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FIXTURES, tool

BAD = "import torch\nx = torch.ones(2, requires_grad=True)\ny = x.clone().detach()\n"


def run(*args, cwd=None, env=None):
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env)


def _repo(tmp_path, env):
    repo = tmp_path / "user-repo"
    repo.mkdir()
    assert run("git", "init", "-q", cwd=repo, env=env).returncode == 0
    return repo


def test_pre_commit_hooks_check_and_fix(tmp_path, precommit_env, hook_repo):
    # try-repo on a git copy of this project: the checkout the tests run from may have no .git.
    env = precommit_env
    hooks = str(hook_repo[0])
    repo = _repo(tmp_path, env)
    precommit = [sys.executable, "-m", "pre_commit"]
    # No Python file staged: both hooks succeed.
    (repo / "notes.txt").write_text("hello\n")
    run("git", "add", "notes.txt", cwd=repo, env=env)
    for hook in ("tensorcopy", "tensorcopy-fix"):
        proc = run(*precommit, "try-repo", hooks, hook, cwd=repo, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # A staged file with a finding: check fails and reports it; fix rewrites it.
    (repo / "train.py").write_text(BAD)
    run("git", "add", "train.py", cwd=repo, env=env)
    proc = run(*precommit, "try-repo", hooks, "tensorcopy", cwd=repo, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "train.py:3:5: TNS201" in proc.stdout
    proc = run(*precommit, "try-repo", hooks, "tensorcopy-fix", cwd=repo, env=env)
    assert proc.returncode == 1  # pre-commit fails a hook that modified files
    assert (repo / "train.py").read_text() == BAD.replace("x.clone().detach()", "x.detach().clone()")
    run("git", "add", "train.py", cwd=repo, env=env)
    proc = run(*precommit, "try-repo", hooks, "tensorcopy", cwd=repo, env=env)
    assert proc.returncode == 0, proc.stdout


def test_libcst_codemod_command_applies_the_same_fixes(tmp_path):
    for name in ("TNS201", "TNS202"):
        shutil.copyfile(os.path.join(FIXTURES, "fix", f"{name}.in.py"), tmp_path / f"{name}.py")
    proc = run(sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.codemod.TensorCopyFix",
               "--no-format", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    for name in ("TNS201", "TNS202"):
        with open(os.path.join(FIXTURES, "fix", f"{name}.out.py"), encoding="utf-8") as f:
            assert (tmp_path / f"{name}.py").read_text() == f.read()
    assert "Transformed 2 files successfully" in proc.stderr


def test_codemod_refuses_what_is_not_a_code(tmp_path):
    proc = run(sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.codemod.TensorCopyFix",
               "--no-format", "--select", "TNS2,E501", str(tmp_path))
    assert proc.returncode == 2 and "--select: 'E501' is not a rule code or prefix" in proc.stderr


def test_codemod_in_process_matches_cli(tmp_path):
    import libcst as cst
    from libcst.codemod import CodemodContext

    from flake8_tensorcopy.codemod import TensorCopyFix

    src = BAD + "z = torch.tensor(y)\n"
    out = TensorCopyFix(CodemodContext()).transform_module(cst.parse_module(src))
    p = tmp_path / "m.py"
    p.write_text(src)
    subprocess.run([tool("tensorcopy"), "fix", str(p)], capture_output=True)
    assert out.code == p.read_text()


# What the configuration selects: strict, unsafe fixes, TNS1/2/4 only, and no TNS2 under legacy/.
CONFIG = """[tool.tensorcopy]
select = ["TNS1", "TNS2", "TNS4"]
strict = true
unsafe-fixes = true

[tool.tensorcopy.per-file-ignores]
"legacy/*" = ["TNS2"]
"""
STRICT_ONLY = "import torch\n\n\ndef to_array(t):\n    return t.numpy()\n"  # t: unknown origin


def _configured_tree(root, generated: bool = False):
    (root / "src").mkdir(parents=True)
    (root / "legacy").mkdir()
    (root / "pyproject.toml").write_text(CONFIG)
    for name in ("TNS101", "TNS201", "TNS202", "TNS401.unsafe", "TNS401_tabs.unsafe", "TNS402.unsafe", "TNS503"):
        shutil.copyfile(os.path.join(FIXTURES, "fix", f"{name}.in.py"), root / "src" / f"{name.split('.')[0]}.py")
    for name in ("TNS201", "TNS401.unsafe"):
        shutil.copyfile(os.path.join(FIXTURES, "fix", f"{name}.in.py"), root / "legacy" / f"{name.split('.')[0]}.py")
    (root / "src" / "strict_only.py").write_text(STRICT_ONLY)
    if generated:  # LibCST leaves these alone unless --include-generated
        (root / "src" / "generated.py").write_text("# @" "generated\n" + STRICT_ONLY)


@pytest.mark.parametrize("options", [[], ["-j", "2", "--include-generated"]], ids=["defaults", "jobs-generated"])
def test_codemod_and_cli_fix_a_configured_tree_alike(tmp_path, options):
    cli_root, codemod_root = tmp_path / "cli", tmp_path / "codemod"
    for root in (cli_root, codemod_root):
        _configured_tree(root, generated=bool(options))
    original = {p.name: p.read_text() for p in (cli_root / "src").iterdir()}
    proc = run(tool("tensorcopy"), "fix", str(cli_root))
    assert proc.returncode in (0, 1), proc.stderr
    proc = run(sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.codemod.TensorCopyFix",
               *options, "--no-format", str(codemod_root))
    assert proc.returncode == 0, proc.stderr
    for sub in ("src", "legacy"):
        names = sorted(os.listdir(cli_root / sub))
        match, mismatch, errors = filecmp.cmpfiles(cli_root / sub, codemod_root / sub, names, shallow=False)
        assert not mismatch and not errors, (sub, mismatch, errors)
    # The configuration was read: strict found `t.numpy()`, unsafe fixes wrapped, TNS5 was not
    # selected, and legacy/ kept its TNS2 finding but not its TNS4 one.
    fixed = {p.name: p.read_text() for p in (cli_root / "src").iterdir()}
    assert "t.detach().cpu().numpy()" in fixed["strict_only.py"] and "with th.no_grad():" in fixed["TNS401.py"]
    assert fixed["TNS503.py"] == original["TNS503.py"]
    legacy = (cli_root / "legacy" / "TNS201.py").read_text()
    assert ".clone().detach()" in legacy and "with th.no_grad():" in (cli_root / "legacy" / "TNS401.py").read_text()
