"""The `tensorcopy` CLI and the flake8 plugin.  A few tests run them end to end, through their real
entry points (the console script, `python -m`, stdin and stdout, flake8); the others run the CLI
in this process (conftest.tc)."""

import os
import subprocess
import sys

import pytest

from conftest import tc, tool

BAD = (
    "import torch\n"
    "\n"
    "x = torch.ones(3, requires_grad=True)\n"
    "y = x.clone().detach()\n"
    "z = x.clone().detach()  # noqa: TNS201\n"
    "w = x.clone().detach()  # noqa\n"
    "v = x.clone().detach()  # noqa: E501\n"
)
GOOD = "import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x.detach().clone()\n"


def run(*args, input=None, cwd=None):
    return subprocess.run(args, input=input, capture_output=True, text=True, cwd=cwd)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configuration or result cache of the repository's


@pytest.fixture
def bad(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text(BAD)
    return p


def test_check_reports_sorted_findings_and_exits_1(bad, tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    proc = run(tool("tensorcopy"), "check", str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{bad}:4:5: TNS201 [*] x.clone().detach() ")  # [*]: `fix` fixes it
    assert lines[0].endswith("use x.detach().clone()")
    assert lines[1].startswith(f"{bad}:7:5: TNS201 ")  # noqa for another code does not hide it
    assert lines[2] == "Found 2 problems (2 fixable with `tensorcopy fix`)."
    assert len(lines) == 3


def test_check_clean_exits_0(tmp_path, capsys):
    (tmp_path / "good.py").write_text(GOOD)
    proc = tc(capsys, "check", str(tmp_path))
    assert proc.returncode == 0
    assert proc.stdout.strip() == "All checks passed!"


def test_python_dash_m_is_the_same_cli(bad):
    a = run(tool("tensorcopy"), "check", str(bad))
    b = run(sys.executable, "-m", "flake8_tensorcopy", "check", str(bad))
    assert (a.returncode, a.stdout) == (b.returncode, b.stdout)


def test_missing_path_and_bad_option_exit_2(tmp_path, capsys):
    proc = tc(capsys, "check", str(tmp_path / "nope.py"))
    assert proc.returncode == 2
    assert "nope.py: no such file or directory" in proc.stderr
    proc = tc(capsys, "check", "--no-such-option")
    assert proc.returncode == 2


def test_select_and_ignore_use_prefixes(bad, capsys):
    assert tc(capsys, "check", "--ignore", "TNS2", str(bad)).returncode == 0
    assert tc(capsys, "check", "--select", "TNS1", str(bad)).returncode == 0
    assert tc(capsys, "check", "--select", "TNS1", "--extend-select", "TNS20", str(bad)).returncode == 1
    assert tc(capsys, "check", "--select", "TNS", "--ignore", "TNS2", "--extend-select", "TNS201",
              str(bad)).returncode == 1


def test_fix_diff_writes_nothing(bad, capsys):
    before = bad.read_bytes()
    proc = tc(capsys, "fix", "--diff", str(bad))
    assert proc.returncode == 1
    assert "-y = x.clone().detach()\n+y = x.detach().clone()" in proc.stdout
    assert bad.read_bytes() == before


def test_fix_applies_and_is_idempotent(bad, capsys):
    proc = tc(capsys, "fix", str(bad))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Fixed 2 problems." in proc.stdout
    fixed = bad.read_text()
    assert fixed == BAD.replace("y = x.clone()", "y = x.detach()").replace(
        "y = x.detach().detach()", "y = x.detach().clone()").replace(
        "v = x.clone().detach()", "v = x.detach().clone()")
    assert tc(capsys, "fix", str(bad)).returncode == 0
    assert bad.read_text() == fixed
    assert tc(capsys, "check", str(bad)).returncode == 0


def test_fix_keeps_mode_encoding_bom_and_line_endings(tmp_path, capsys):
    p = tmp_path / "crlf.py"
    src = "\ufeffimport torch\r\nx = torch.ones(2, requires_grad=True)\r\ny = x.clone().detach()  # é\r\n"
    p.write_bytes(src.encode("utf-8"))
    os.chmod(p, 0o640)
    assert tc(capsys, "fix", str(p)).returncode == 0
    assert p.read_bytes() == src.replace("x.clone().detach()", "x.detach().clone()").encode("utf-8")
    assert oct(os.stat(p).st_mode & 0o777) == oct(0o640)
    p2 = tmp_path / "latin.py"
    src2 = "# -*- coding: latin-1 -*-\nimport torch\nx = torch.ones(2, requires_grad=True)\ny = x.clone().detach()  # café\n"
    p2.write_bytes(src2.encode("latin-1"))
    assert tc(capsys, "fix", str(p2)).returncode == 0
    assert p2.read_bytes() == src2.replace("x.clone().detach()", "x.detach().clone()").encode("latin-1")


def test_stdin_check_and_fix():
    proc = run(tool("tensorcopy"), "check", "-", "--stdin-filename", "pkg/mod.py", input=BAD)
    assert proc.returncode == 1
    assert proc.stdout.startswith("pkg/mod.py:4:5: TNS201 ")
    proc = run(tool("tensorcopy"), "fix", "-", input=BAD)
    assert proc.returncode == 0
    assert proc.stdout == BAD.replace("y = x.clone().detach()", "y = x.detach().clone()").replace(
        "v = x.clone().detach()", "v = x.detach().clone()")
    assert "Fixed 2 problems" in proc.stderr


@pytest.mark.parametrize(
    "content",
    [b"import torch\nx = (\n", b"", b"   \n\n", b"import torch\nx = '\xff\xfe'\n", b"\x00\x01\x02torch\x00"],
    ids=["syntax-error", "empty", "whitespace", "invalid-utf8", "binary"],
)
def test_hostile_files_never_traceback(tmp_path, content, capsys):
    p = tmp_path / "f.py"
    p.write_bytes(content)
    for args in (("check", str(p)), ("fix", str(p))):
        proc = tc(capsys, *args)
        assert "Traceback" not in proc.stderr
        assert proc.returncode in (0, 2)
        if proc.returncode == 2:
            assert f"error: {p}: " in proc.stderr
    assert p.read_bytes() == content
    proc = run(tool("flake8"), "--select", "TNS", str(p))
    assert "Traceback" not in proc.stderr and "TNS" not in proc.stdout


def test_read_only_file_is_reported_and_untouched(bad, capsys):
    os.chmod(bad, 0o444)
    before = bad.read_bytes()
    proc = tc(capsys, "fix", str(bad))
    assert proc.returncode == 2 and "cannot write" in proc.stderr
    assert bad.read_bytes() == before


def test_default_excludes(tmp_path, capsys):
    for d in (".git", ".venv", "build", "dist", "node_modules"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "bad.py").write_text(BAD)
    assert tc(capsys, "check", str(tmp_path)).returncode == 0
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bad.py").write_text(BAD)
    assert tc(capsys, "check", str(tmp_path)).returncode == 1
    # ruff's semantics: --extend-exclude adds to the built-in list, --exclude replaces it.
    assert tc(capsys, "check", "--extend-exclude", "src", str(tmp_path)).returncode == 0
    replaced = tc(capsys, "check", "--no-cache", "--exclude", "src", str(tmp_path))
    assert replaced.returncode == 1 and f"{tmp_path}/build/bad.py:" in replaced.stdout


def test_rules_and_explain(capsys):
    proc = tc(capsys, "rules")
    assert proc.returncode == 0 and "TNS201" in proc.stdout and "TNS202" in proc.stdout
    proc = tc(capsys, "explain", "tns201")
    assert proc.returncode == 0
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert section in proc.stdout
    assert tc(capsys, "explain", "TNS999").returncode == 2


# ----------------------------------------------------------------------------- flake8


def test_flake8_file_and_stdin_agree(bad):
    fmt = ["--format", "%(path)s:%(row)d:%(col)d: %(code)s %(text)s"]
    on_file = run(tool("flake8"), "--select", "TNS", *fmt, str(bad))
    on_stdin = run(tool("flake8"), "--select", "TNS", *fmt, "-", input=BAD)
    assert on_file.returncode == 1
    file_lines = on_file.stdout.splitlines()
    assert [line.split(":", 1)[1] for line in file_lines] == [
        line.split(":", 1)[1] for line in on_stdin.stdout.splitlines()
    ]
    assert on_stdin.stdout.startswith("stdin:4:5: TNS201 ")
    assert [line.split(": ")[0].rsplit(":", 2)[1:] for line in file_lines] == [["4", "5"], ["7", "5"]]


def test_flake8_noqa_and_ignore(bad):
    assert run(tool("flake8"), "--select", "TNS", "--extend-ignore", "TNS201", str(bad)).returncode == 0
    assert run(tool("flake8"), "--select", "TNS", "--disable-noqa", str(bad)).stdout.count("TNS201") == 4


def test_flake8_options_from_config(tmp_path, bad):
    cfg = tmp_path / "setup.cfg"
    cfg.write_text("[flake8]\nselect = TNS\ntensorcopy-strict = true\ntensorcopy-numpy-fix = force\n"
                   "tensorcopy-generator-names = netG, my_gen\n")
    proc = run(tool("flake8"), str(bad), cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    cfg.write_text("[flake8]\nselect = TNS\ntensorcopy-numpy-fix = sideways\n")
    proc = run(tool("flake8"), str(bad), cwd=tmp_path)
    assert proc.returncode != 0 and "sideways" in proc.stderr and "Traceback" not in proc.stderr


def test_flake8_lists_the_plugin():
    proc = run(tool("flake8"), "--version")
    assert "flake8-tensorcopy" in proc.stdout


def test_result_cache_reuses_unchanged_files_and_notices_changes(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    p = src / "m.py"
    p.write_text(BAD)
    first = tc(capsys, "check", "src", cwd=tmp_path)
    assert first.returncode == 1
    assert (tmp_path / ".tensorcopy_cache" / ".gitignore").read_text().strip().endswith("*")
    # Same size and mtime: the cached result is served without reading the file again.
    st = os.stat(p)
    p.write_text(BAD.replace("y = x.clone().detach()", "y = x.detach().clone()"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert tc(capsys, "check", "src", cwd=tmp_path).stdout == first.stdout
    # --no-cache sees the truth; so does the cache once the content hash is checked.
    fresh = tc(capsys, "check", "--no-cache", "src", cwd=tmp_path)
    assert fresh.stdout.count("TNS201") == first.stdout.count("TNS201") - 1
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert tc(capsys, "check", "src", cwd=tmp_path).stdout == fresh.stdout
    # A different configuration is a different cache.
    assert tc(capsys, "check", "--ignore", "TNS2", "src", cwd=tmp_path).returncode == 0


def test_every_result_given_to_the_cache_is_written(tmp_path, capsys, monkeypatch):
    # An entry that cannot be written is skipped without a word (a cache is not worth an
    # error): every finding of the fixtures, fixes and notebook cells included, must be one
    # marshal writes, or the cache would silently stop working for such files.  (A result that
    # read files nobody imported, Project.files_mentioning, is not given to the cache: default
    # mode reads them for a function that reports and is called from other files only, which
    # the fixtures hold many of; strict mode, which reports more, never does.)
    import shutil

    from conftest import ROOT
    from flake8_tensorcopy import cli

    shutil.copytree(os.path.join(ROOT, "fixtures"), tmp_path / "fx")
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook()
    nb.cells = [new_code_cell("x = 1"), new_code_cell(BAD)]
    (tmp_path / "fx" / "cells.ipynb").write_text(nbformat.writes(nb))
    given = []
    real = cli.run_all

    def run_all(todo, job, stdin_name, jobs, progress=None, each=None):
        def counted(report):
            if report.stamp is not None:
                given.append(report.path)
            each(report)
        return real(todo, job, stdin_name, jobs, progress, counted)

    monkeypatch.setattr(cli, "run_all", run_all)
    first = tc(capsys, "check", "--strict", "fx", cwd=tmp_path)
    assert first.stdout.count("TNS") > 100 and "[*]" in first.stdout
    entries = list((tmp_path / ".tensorcopy_cache").rglob("results-*/*.marshal"))
    assert len(entries) == len(given) > 30 and any(p.endswith(".ipynb") for p in given)
    assert tc(capsys, "check", "--strict", "fx", cwd=tmp_path).stdout == first.stdout


def test_the_result_cache_keeps_an_entry_a_file(tmp_path, capsys, monkeypatch):
    # A check of one file reads and writes its own entry only: a whole-tree run of a large
    # project leaves thousands, and loading them all made a one-file check 3x slower.
    from flake8_tensorcopy import cache as result_cache
    from flake8_tensorcopy import cli

    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(BAD)
    first = tc(capsys, "check", "a.py", "b.py", "c.py", cwd=tmp_path)
    assert first.returncode == 1
    entries = sorted((tmp_path / ".tensorcopy_cache").rglob("results-*/*.marshal"))
    assert len(entries) == 3
    others = [e for e in entries if f"{os.sep}a.py" not in e.read_bytes().decode("latin-1")]
    assert len(others) == 2
    for e in others:
        e.write_bytes(b"not an entry")
    checked = []
    real = cli.process
    monkeypatch.setattr(cli, "process", lambda path, *a: checked.append(path) or real(path, *a))
    again = tc(capsys, "check", "a.py", cwd=tmp_path)
    assert again.returncode == 1 and "a.py" in again.stdout and checked == []  # served from its entry
    assert all(e.read_bytes() == b"not an entry" for e in others)
    # Two runs that overlap: each keeps what it stored (one file for the whole cache lost one's).
    folder = entries[0].parent
    key = folder.name[len("results-"):]
    one = result_cache.Cache(str(tmp_path / ".tensorcopy_cache"), key)
    two = result_cache.Cache(str(tmp_path / ".tensorcopy_cache"), key)
    for run_, name in ((one, "b.py"), (two, "c.py")):
        st = os.stat(tmp_path / name)
        run_.store(str(tmp_path / name), result_cache.content_hash((tmp_path / name).read_bytes()), st.st_size,
                   st.st_mtime_ns, [], None)
    one.save()
    two.save()
    third = result_cache.Cache(str(tmp_path / ".tensorcopy_cache"), key)
    assert third.lookup(str(tmp_path / "b.py")) == ([], None) and third.lookup(str(tmp_path / "c.py")) == ([], None)
