import io
import os
import shutil
import subprocess
import sys
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis profiles (tests/test_fuzz.py).  "ci", the default: reproducible examples (each test
# sets its fixed count) with a 10 s deadline per example, generous for programs that take
# milliseconds but a catch for anything quadratic.  "long": a time-boxed soak run with fresh
# randomness, selected with `--hypothesis-profile=long` or TENSORCOPY_FUZZ=long (length:
# TENSORCOPY_FUZZ_MINUTES, default 20).
_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
            HealthCheck.large_base_example]
settings.register_profile("ci", deadline=10_000, derandomize=True, database=None, print_blob=True,
                          suppress_health_check=_SLOW_OK)
settings.register_profile("long", deadline=10_000, print_blob=True, suppress_health_check=_SLOW_OK)
settings.load_profile("long" if os.environ.get("TENSORCOPY_FUZZ") == "long" else "ci")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
BIN = os.path.dirname(sys.executable)


def tool(name: str) -> str:
    """Path of a console script installed beside the running interpreter."""
    path = os.path.join(BIN, name)
    return path if os.path.exists(path) else name


class Run(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def tc(capsys, *args, input=None, cwd=None) -> Run:
    """`tensorcopy ARGS` run in this process, as a fresh process would run it: (exit status,
    stdout, stderr), also by name as from subprocess.run.  `input`: what stdin holds (str or
    bytes); `cwd`: where it runs.  The end-to-end tests (the console script, `python -m`, real
    streams and terminals) run it as a subprocess."""
    from flake8_tensorcopy import cli

    cli._PROJECTS.clear()  # a new process reads the project's modules again
    stdin, here = sys.stdin, os.getcwd()
    if input is not None:
        data = input.encode() if isinstance(input, str) else input
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    if cwd is not None:
        os.chdir(cwd)
    try:
        code = cli.main([str(a) for a in args])
    finally:
        sys.stdin = stdin
        os.chdir(here)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return Run(code, out, err)


@pytest.fixture
def root():
    return ROOT


# What a checkout holds: the source tree without git, virtual environments, build outputs and
# caches (the same list as .gitignore).
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "__pycache__", "*.py[cod]", "build", "dist",
                                     "*.egg-info", ".pytest_cache", ".hypothesis", ".tensorcopy_cache", ".whl",
                                     ".gl")


def copy_source_tree(dst) -> None:
    """Copy this project's source tree to `dst` (which must not exist), as a plain checkout."""
    shutil.copytree(ROOT, dst, ignore=_NOT_SOURCE, symlinks=True)


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory):
    """(path, commit): a git repository holding a copy of this project, committed, to use as a
    pre-commit hook repository or a pip git URL.  The tests must not need the checkout they run
    from to be a git repository (CI and the README's Quick start run on plain copies)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path_factory.mktemp("hook-repo") / "flake8-tensorcopy"
    copy_source_tree(repo)
    env = dict(os.environ, **GIT_ENV)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True, capture_output=True,
                         text=True).stdout.strip()
    return repo, sha


@pytest.fixture(scope="session")
def precommit_env(tmp_path_factory):
    """Environment for running pre-commit: its own store (shared by the tests of one run, so a
    hook environment is built once per repository and commit) and `tensorcopy` on PATH."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    home = tmp_path_factory.mktemp("pre-commit-home")
    return dict(os.environ, PRE_COMMIT_HOME=str(home), PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
                **GIT_ENV)


def agrees_everywhere(agree, texts, alphabet, max_size: int = 40, examples: int = 400) -> None:
    """`agree(text)` (which asserts that a text search and the pattern it stands for find the
    same) on each of `texts`, then on texts fuzzed from `alphabet`: characters (a string) or
    pieces (a list)."""
    from hypothesis import given
    from hypothesis import strategies as st

    for text in texts:
        agree(text)
    drawn = st.text(alphabet=alphabet, max_size=max_size) if isinstance(alphabet, str) else \
        st.lists(st.sampled_from(alphabet), max_size=max_size).map("".join)

    @settings(max_examples=examples, deadline=None)
    @given(drawn)
    def fuzz(text):
        agree(text)

    fuzz()


def reported_lines(code: str, prefix: str, strict: bool = False) -> set:
    """The lines where the rules of `prefix` report in `code` (the oracle tests' verdicts)."""
    from flake8_tensorcopy.engine import lint_text, select_rules
    from flake8_tensorcopy.model import Options

    return {v.line for v in lint_text(code, select_rules([prefix]), Options(strict=strict)).violations}
