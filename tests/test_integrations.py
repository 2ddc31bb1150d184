"""pre-commit hooks (through real `pre-commit try-repo`) and the LibCST codemod command."""

import os
import shutil
import subprocess
import sys

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
