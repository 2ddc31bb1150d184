"""`[tool.tensorcopy]` in pyproject.toml, through the real CLI (and the flake8 plugin's options)."""

import subprocess

import pytest

from conftest import tc, tool
from flake8_tensorcopy.rules.base import all_rules

CLONE = "import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x.clone().detach()\n"
COPY = "import torch\n\nx = torch.ones(3, requires_grad=True)\nz = torch.tensor(x)\n"
NUMPY = "import torch\n\nx = torch.ones(3, requires_grad=True)\na = x.numpy()\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configuration or result cache of the repository's


def codes(proc) -> list:
    return [line.split(": ")[1].split()[0] for line in proc.stdout.splitlines() if ": TNS" in line]


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "clone.py").write_text(CLONE)
    (src / "copy.py").write_text(COPY)
    return tmp_path


def configure(project, body: str):
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n[tool.tensorcopy]\n" + body)


def test_select_and_ignore_from_config_and_flags_on_top(project, capsys):
    configure(project, 'select = ["TNS2"]\nignore = ["TNS202"]\n')
    assert codes(tc(capsys, "check", "--no-cache", "src", cwd=project)) == ["TNS201"]
    # --extend-select adds to the file's selection; --ignore removes from it; --select replaces it.
    assert sorted(codes(tc(capsys, "check", "--no-cache", "--extend-select", "TNS202", "src", cwd=project))) == [
        "TNS201", "TNS202"]
    assert codes(tc(capsys, "check", "--no-cache", "--ignore", "TNS201", "src", cwd=project)) == []
    assert codes(tc(capsys, "check", "--no-cache", "--select", "TNS202", "src", cwd=project)) == ["TNS202"]


def test_found_by_walking_up_from_the_first_path(project, tmp_path_factory, capsys):
    configure(project, 'ignore = ["TNS201"]\n')
    # A pyproject.toml without [tool.tensorcopy] on the way is passed over, like ruff does;
    # so is one that is not even valid TOML, as long as it does not mention us.
    (project / "src" / "pyproject.toml").write_text("[project]\nname = 'inner'\n")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "pyproject.toml").write_text("this is [not toml\n")
    proc = tc(capsys, "check", "--no-cache", str(project / "src"), cwd=elsewhere)
    assert codes(proc) == ["TNS202"], proc.stderr
    # Several paths: the first decides.
    (elsewhere / "clone.py").write_text(CLONE)
    proc = tc(capsys, "check", "--no-cache", str(project / "src" / "copy.py"), str(elsewhere / "clone.py"),
              cwd=elsewhere)
    assert codes(proc) == ["TNS202"], proc.stderr
    # --isolated ignores it; --config names one.
    assert sorted(codes(tc(capsys, "check", "--no-cache", "--isolated", "src", cwd=project))) == ["TNS201", "TNS202"]
    other = elsewhere / "other.toml"
    other.write_text('[tool.tensorcopy]\nignore = ["TNS202"]\n')
    assert codes(tc(capsys, "check", "--no-cache", "--config", str(other), "src", cwd=project)) == ["TNS201"]


def test_per_file_ignores_and_exclude(project, capsys):
    (project / "tests").mkdir()
    (project / "tests" / "test_clone.py").write_text(CLONE)
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(CLONE)
    configure(project, 'exclude = ["legacy"]\n\n[tool.tensorcopy.per-file-ignores]\n'
                       '"tests/*" = ["TNS2"]\n"copy.py" = ["TNS202"]\n')
    proc = tc(capsys, "check", "--no-cache", ".", cwd=project)
    assert [line.split(":")[0] for line in proc.stdout.splitlines()[:-1]] == ["src/clone.py"], proc.stdout
    # Named on the command line (as pre-commit does), an excluded file is checked, as in ruff,
    # unless --force-exclude (which the pre-commit hooks pass) or force-exclude = true.
    assert tc(capsys, "check", "--no-cache", "legacy/old.py", cwd=project).returncode == 1
    assert tc(capsys, "check", "--no-cache", "--force-exclude", "legacy/old.py", cwd=project).returncode == 0
    # `fix` leaves alone what per-file-ignores turned off.
    assert tc(capsys, "fix", "tests/test_clone.py", cwd=project).returncode == 0
    assert (project / "tests" / "test_clone.py").read_text() == CLONE


def test_options_strict_numpy_fix_and_unsafe_fixes(project, capsys):
    (project / "src" / "np.py").write_text(NUMPY)
    configure(project, 'numpy-fix = "force"\n')
    diff = tc(capsys, "fix", "--diff", "src/np.py", cwd=project).stdout
    assert "+a = x.numpy(force=True)" in diff
    diff = tc(capsys, "fix", "--diff", "--numpy-fix", "detach", "src/np.py", cwd=project).stdout
    assert "+a = x.detach()" in diff and "force" not in diff
    # strict = true, and --no-strict on the command line over it.
    (project / "src" / "param.py").write_text("import torch\n\n\ndef f(t):\n    return t.numpy()\n")
    configure(project, "strict = true\n")
    assert tc(capsys, "check", "--no-cache", "src/param.py", cwd=project).returncode == 1
    assert tc(capsys, "check", "--no-cache", "--no-strict", "src/param.py", cwd=project).returncode == 0


def _unsafe_example():
    for cls in all_rules():
        for ex in cls.INVALID:
            if ex.unsafe and ex.fixed is not None and not ex.options:
                return ex
    return None


def test_unsafe_fixes_from_config(project, capsys):
    ex = _unsafe_example()
    if ex is None:
        pytest.skip("no rule has an unsafe fix")
    path = project / "src" / "unsafe.py"
    path.write_text(ex.code)
    assert tc(capsys, "fix", "src/unsafe.py", cwd=project).returncode == 1 and path.read_text() == ex.code
    configure(project, "unsafe-fixes = true\n")
    assert "more with `tensorcopy fix --unsafe-fixes`" not in tc(capsys, "check", "--no-cache", "src/unsafe.py",
                                                                 cwd=project).stdout
    tc(capsys, "fix", "src/unsafe.py", cwd=project)
    assert path.read_text() == ex.fixed
    path.write_text(ex.code)
    tc(capsys, "fix", "--no-unsafe-fixes", "src/unsafe.py", cwd=project)
    assert path.read_text() == ex.code


@pytest.mark.parametrize(
    "body, words",
    [
        ('selct = ["TNS"]\n', ["unknown key 'selct'", "did you mean 'select'"]),
        ("extend_select = ['TNS2']\n", ["unknown key 'extend_select'", "'extend-select'"]),
        ('strict = "yes"\n', ["strict", "true or false"]),
        ('numpy-fix = "sideways"\n', ["numpy-fix", "sideways"]),
        ('select = "TNS"\n', ["select", "list of strings"]),
        ('ignore = ["E501"]\n', ["ignore", "E501"]),
        ('generator-names = ["net G"]\n', ["generator-names", "net G"]),
        ('per-file-ignores = ["tests/*"]\n', ["per-file-ignores", "table"]),
        ('[tool.tensorcopy.per-file-ignores]\n"tests/*" = "TNS2"\n', ["per-file-ignores", "list of strings"]),
        ("select = [\n", ["not valid TOML"]),
    ],
    ids=["typo", "underscore", "bool", "numpy-fix", "list", "prefix", "name", "pfi-table", "pfi-codes", "toml"],
)
def test_bad_configuration_is_a_clear_error(project, body, words, capsys):
    configure(project, body)
    for cmd in ("check", "fix"):
        proc = tc(capsys, cmd, "src", cwd=project)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert str(project / "pyproject.toml") in proc.stderr
        for w in words:
            assert w in proc.stderr, proc.stderr
    assert (project / "src" / "clone.py").read_text() == CLONE


def test_missing_config_file_is_an_error(project, capsys):
    proc = tc(capsys, "check", "--config", "nope.toml", "src", cwd=project)
    assert proc.returncode == 2 and "nope.toml" in proc.stderr


def test_configuration_is_part_of_the_cache_key(project, capsys):
    assert codes(tc(capsys, "check", "src", cwd=project)) != []
    configure(project, '[tool.tensorcopy.per-file-ignores]\n"src/*" = ["TNS"]\n')
    assert tc(capsys, "check", "src", cwd=project).returncode == 0


def test_flake8_reads_the_tensorcopy_options_from_its_config(project):
    (project / "src" / "np.py").write_text(NUMPY)
    (project / "setup.cfg").write_text("[flake8]\nselect = TNS\ntensorcopy-numpy-fix = force\n")
    proc = subprocess.run([tool("flake8"), "src/np.py"], capture_output=True, text=True, cwd=project)
    assert "TNS101" in proc.stdout and "numpy(force=True)" in proc.stdout, proc.stdout + proc.stderr
