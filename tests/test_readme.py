"""Every command in README.md does what the README says, on a fresh machine (issue 17).

The commands are read from the README itself, so that the README cannot drift from what is
tested.  The Quick start test builds a fresh virtual environment on a copy of the tree without
`.git`, installs offline (pip's configured wheel directory and indexes), and runs the whole
test suite there: it is slow, and runs when TENSORCOPY_SLOW=1 (CI sets it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, FIXTURES, GIT_ENV, ROOT, copy_source_tree

SLOW = os.environ.get("TENSORCOPY_SLOW") == "1"
# One fixable finding (TNS201, safe fix) and one without a fix (TNS403).
MIXED = ("import torch\n\na = torch.ones(3, requires_grad=True)\nb = a ** 2\na.data.zero_()\n"
         "b.sum().backward()\ny = a.clone().detach()\n")


def section(title: str) -> str:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def indented_commands(text: str) -> list[str]:
    """The commands of a section's indented code blocks, without their trailing comments."""
    return [re.sub(r"\s+#.*$", "", m) for m in re.findall(r"^    (\S.*)$", text, re.M)]


# ----------------------------------------------------------------------------- pre-commit


def _user_repo(tmp_path, env, files):
    repo = tmp_path / "user"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, env=env, check=True)
    for name, text in files.items():
        (repo / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    return repo


def _pre_commit(repo, env, *args):
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=repo, env=env, capture_output=True,
                          text=True)


def test_readme_pre_commit_examples_work(tmp_path, hook_repo, precommit_env):
    hooks, commit = hook_repo
    remote, local = re.findall(r"```yaml\n(.*?)```", section("pre-commit"), re.S)
    assert "<url>" in remote and "<commit>" in remote and "repo: local" in local
    remote = remote.replace("<url>", str(hooks)).replace("<commit>", commit)
    env = precommit_env
    repo = _user_repo(tmp_path, env, {"train.py": MIXED, ".pre-commit-config.yaml": remote})

    proc = _pre_commit(repo, env, "--all-files")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert (repo / "train.py").read_text() == MIXED.replace("a.clone().detach()", "a.detach().clone()")
    assert out.count("TNS403") == 1 and "TNS201" not in out  # each finding reported once
    proc = _pre_commit(repo, env, "--all-files")  # what cannot be fixed still fails the hook
    assert proc.returncode == 1 and (proc.stdout + proc.stderr).count("TNS403") == 1

    (repo / ".pre-commit-config.yaml").write_text(local)  # `tensorcopy` from PATH
    (repo / "train.py").write_text(MIXED)
    proc = _pre_commit(repo, env, "--all-files")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert out.count("TNS403") == 1 and out.count("TNS201") == 1
    assert (repo / "train.py").read_text() == MIXED


def test_readme_pre_commit_hooks_skip_when_no_python_file_is_staged(tmp_path, hook_repo, precommit_env):
    hooks, commit = hook_repo
    remote, local = re.findall(r"```yaml\n(.*?)```", section("pre-commit"), re.S)
    env = precommit_env
    for n, config in enumerate((remote.replace("<url>", str(hooks)).replace("<commit>", commit), local)):
        repo = _user_repo(tmp_path / str(n), env, {"notes.txt": "x.clone().detach()\n",
                                                   ".pre-commit-config.yaml": config})
        proc = _pre_commit(repo, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Skipped" in proc.stdout


# ----------------------------------------------------------------------------- the codemod


def test_readme_codemod_commands_work_without_black(tmp_path):
    text = section("The LibCST codemod")
    direct = [c for c in indented_commands(text) if c.startswith("python -m libcst.tool")]
    inline = re.findall(r"`(python -m libcst\.tool [^`]*)`", text.replace("\n", " "))
    assert len(direct) == 2 and len(inline) == 3, (direct, inline)
    initialize, configured, listing = inline
    assert initialize == "python -m libcst.tool initialize ." and listing == "python -m libcst.tool list"
    # A `black` that says when it is called: no command may run a formatter.
    fake = tmp_path / "bin"
    fake.mkdir()
    marker = tmp_path / "black-ran"
    (fake / "black").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    os.chmod(fake / "black", 0o755)
    env = dict(os.environ, PATH=os.pathsep.join([str(fake), BIN, os.environ.get("PATH", "")]))
    env.pop("PYTHONPATH", None)

    def project(name, *fixtures):
        root = tmp_path / name
        (root / "src").mkdir(parents=True)
        for f in fixtures:
            shutil.copyfile(os.path.join(FIXTURES, "fix", f"{f}.in.py"), root / "src" / f"{f}.py")
        return root

    def sh(command, cwd):
        proc = subprocess.run(command.replace("python ", f"{sys.executable} ", 1), shell=True, cwd=cwd, env=env,
                              capture_output=True, text=True)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def fixed(root, *fixtures):
        for f in fixtures:
            with open(os.path.join(FIXTURES, "fix", f"{f}.out.py"), encoding="utf-8") as expected:
                assert (root / "src" / f"{f}.py").read_text() == expected.read(), f

    safe = project("safe", "TNS201", "TNS202")
    assert sh(direct[0], safe).returncode == 0
    fixed(safe, "TNS201", "TNS202")
    unsafe = project("unsafe", "TNS401.unsafe")
    assert "--unsafe-fixes" in direct[1] and sh(direct[1], unsafe).returncode == 0
    fixed(unsafe, "TNS401.unsafe")
    # Through .libcst.codemod.yaml, as the README describes it.
    configured_root = project("configured", "TNS201")
    assert sh(initialize, configured_root).returncode == 0
    yaml = configured_root / ".libcst.codemod.yaml"
    yaml.write_text(re.sub(r"^modules:\n", "modules:\n- 'flake8_tensorcopy'\n", yaml.read_text(), flags=re.M))
    proc = sh(listing, configured_root)
    assert proc.returncode == 0, proc.stderr  # was: our __main__ ran the CLI on import, exit 2
    assert "codemod.TensorCopyFix - Apply flake8-tensorcopy fixes" in proc.stdout
    assert sh(configured, configured_root).returncode == 0
    fixed(configured_root, "TNS201")
    assert not marker.exists(), "a formatter ran"


# ----------------------------------------------------------------------------- Quick start


def _fresh_env(venv, tmp):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "TENSORCOPY_SLOW", "PRE_COMMIT_HOME")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and os.path.abspath(p) != os.path.abspath(BIN)]
    # pip takes its packages from its configuration (this project's machines: a local wheel
    # directory and indexes, no network).  Only the CPU build of torch is acceptable: where pip
    # can find no such wheel, it fails at once instead of downloading a multi-GB CUDA build.
    constraints = tmp / "constraints.txt"
    constraints.write_text("torch==2.13.0+cpu\n")
    env.update(PATH=os.pathsep.join([str(venv / "bin"), *path]), VIRTUAL_ENV=str(venv), TMPDIR=str(tmp),
               PIP_CONSTRAINT=str(constraints))
    return env


def _venv(path):
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True)
    return path


@pytest.mark.skipif(not SLOW, reason="slow (a fresh venv and the whole suite): set TENSORCOPY_SLOW=1, as CI does")
def test_readme_quick_start_as_written_in_a_fresh_venv_without_git(tmp_path):
    copy = tmp_path / "flake8-tensorcopy"
    copy_source_tree(copy)
    assert not (copy / ".git").exists()
    (tmp_path / "tmp").mkdir()
    venv = _venv(tmp_path / "venv")
    env = _fresh_env(venv, tmp_path / "tmp")
    commands = indented_commands(section("Quick start"))
    assert commands == ["pip install . && tensorcopy check examples/",
                        "pip install -r requirements-test.txt -e . && python -m pytest -q"]

    def sh(command, cwd=copy, env=env):
        return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True)

    check = sh(commands[0])
    # The examples hold findings, as the README says: exit status 1 and a summary.
    assert check.returncode == 1, check.stdout[-3000:] + check.stderr[-3000:]
    assert re.search(r"^Found \d+ problems", check.stdout, re.M)
    tests = sh(commands[1])
    assert tests.returncode == 0, tests.stdout[-5000:] + tests.stderr[-3000:]
    assert re.search(r"\d+ passed", tests.stdout)
    cuda = sh("python -c 'import torch; print(torch.version.cuda)'")
    assert cuda.stdout.strip() == "None", "a CUDA build of torch was installed"

    # The Install section: from a git URL, and the [lsp] extra from a checkout.
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    url_venv = _venv(tmp_path / "venv-url")
    url_env = _fresh_env(url_venv, tmp_path / "tmp")
    install = [c for c in indented_commands(section("Install")) if "git+<url>" in c]
    assert install == ['pip install "git+<url>"']
    repo = tmp_path / "repo"
    copy_source_tree(repo)
    git = dict(url_env, **GIT_ENV)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *args], cwd=repo, env=git, check=True, capture_output=True)
    proc = sh(install[0].replace("<url>", f"file://{repo}"), env=url_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sh("tensorcopy --version", env=url_env).stdout.startswith("tensorcopy ")
    assert sh('pip install ".[lsp]"', env=url_env).returncode == 0
    assert sh("python -c 'import pygls'", env=url_env).returncode == 0
