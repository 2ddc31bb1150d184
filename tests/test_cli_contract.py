"""The CLI never contradicts itself (issue 17): exit codes, summaries, streams, paths, selection.

Each test is a defect that was seen: it fails on the code before the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import tc, tool
from flake8_tensorcopy import engine

HEAD = "import torch\nx = torch.ones(3, requires_grad=True)\n"
BAD = HEAD + "y = x.clone().detach()\n"
# One finding with a safe fix (TNS201), one without any fix (TNS403).
MIXED = ("import torch\n\na = torch.ones(3, requires_grad=True)\nb = a ** 2\na.data.zero_()\n"
         "b.sum().backward()\ny = a.clone().detach()\n")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# ----------------------------------------------------------------------------- errors and summaries


@pytest.mark.parametrize("content", [None, b"import torch\ny = x.clone().detach(\n", b"\x00\x01torch\x00"],
                         ids=["missing", "syntax-error", "binary"])
@pytest.mark.parametrize("command", ["check", "fix"])
def test_an_error_is_never_followed_by_a_success_line(tmp_path, capsys, content, command):
    p = tmp_path / "f.py"
    if content is not None:
        p.write_bytes(content)
    code, out, err = tc(capsys, command, str(p))
    assert code == 2 and err.startswith(f"error: {p}: ")
    assert "All checks passed" not in out + err
    assert out.splitlines()[-1] == ("Found 1 error." if command == "check" else "Fixed 0 problems; 1 error.")


def test_findings_and_errors_are_both_counted(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    code, out, _ = tc(capsys, "check", "--no-cache", "bad.py", "missing.py")
    assert code == 2 and out.splitlines()[-1] == "Found 1 problem (1 fixable with `tensorcopy fix`) and 1 error."


def test_read_only_file_is_fixable_not_unfixable(tmp_path, capsys):
    p = tmp_path / "ro.py"
    p.write_text(MIXED)
    os.chmod(p, 0o444)
    code, out, err = tc(capsys, "fix", str(p))
    assert code == 2 and err == f"error: {p}: cannot write: file is read-only\n"
    # Was: "Fixed 0 problems; 2 remaining (not fixable automatically)."
    assert out.splitlines()[-1] == ("Fixed 0 problems; 2 remaining (1 not fixable automatically, "
                                    "1 fixable but not written); 1 error.")
    os.chmod(p, 0o644)
    code, out, _ = tc(capsys, "fix", str(p))
    assert code == 1 and out.splitlines()[-1] == "Fixed 1 problem; 1 remaining (1 not fixable automatically)."


def test_no_python_file_is_a_warning(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x\n")
    code, out, err = tc(capsys, "check", "--no-cache", "empty")
    assert (code, err) == (0, "warning: No Python files found under the given path(s)\n")


@pytest.mark.parametrize("args", [["check", "bad.py"], ["fix", "-"]], ids=["check", "fix-stdin"])
def test_a_full_disk_is_an_error_not_a_traceback(tmp_path, args):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    (tmp_path / "bad.py").write_text(BAD)
    with open("/dev/full", "w") as full, open(tmp_path / "bad.py") as stdin:
        proc = subprocess.run([tool("tensorcopy"), *args, "--no-cache"] if args[0] == "check" else
                              [tool("tensorcopy"), *args], stdout=full, stderr=subprocess.PIPE, stdin=stdin,
                              text=True, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr  # was 1 ("findings"), with a traceback
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert "error: cannot write the output: No space left on device" in proc.stderr


# ----------------------------------------------------------------------------- --diff


def test_diff_without_a_path_is_a_patch_git_applies(tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(MIXED)
    proc = tc(capsys, "fix", "--diff", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("--- a/pkg/m.py\n+++ b/pkg/m.py\n")  # was a/./pkg/m.py
    # Only the patch on stdout: the finding that remains (TNS403) and the summary on stderr.
    assert "TNS403" not in proc.stdout and "pkg/m.py:5:1: TNS403" in proc.stderr
    assert "Would fix 1 problem; 1 remaining" in proc.stderr
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    patch = tmp_path / "fix.patch"
    patch.write_text(proc.stdout)
    check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    subprocess.run(["git", "apply", str(patch)], cwd=tmp_path, check=True)
    assert (tmp_path / "pkg" / "m.py").read_text() == MIXED.replace("a.clone().detach()", "a.detach().clone()")


# ----------------------------------------------------------------------------- selection and commands


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["E501", "TNS999", "TNS9"])
def test_codes_that_select_nothing_are_errors_on_the_command_line_as_in_pyproject(tmp_path, capsys, flag, value):
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = tc(capsys, "check", "--no-cache", flag, value, "bad.py")
    assert code == 2 and out == ""  # was: exit 0, every rule silently off
    also = ' (or "ALL")' if flag != "--ignore" else ""
    assert err == (f"error: {flag}: {value!r} is not a rule code or prefix such as \"TNS\" or \"TNS201\"{also}; "
                   "`tensorcopy rules` lists the codes\n")
    key = flag.lstrip("-")
    (tmp_path / "pyproject.toml").write_text(f'[tool.tensorcopy]\n{key} = ["{value}"]\n')
    code, _, err = tc(capsys, "check", "--no-cache", "bad.py")
    assert code == 2 and f"[tool.tensorcopy] {key}: {value!r} is not a rule code" in err


def test_valid_prefixes_are_still_accepted(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    assert tc(capsys, "check", "--no-cache", "--select", "tns2", "bad.py")[0] == 1
    assert tc(capsys, "check", "--no-cache", "--select", "ALL", "--ignore", "TNS20", "bad.py")[0] == 0
    assert tc(capsys, "check", "--no-cache", "--ignore", "TNS000,TNS1", "bad.py")[0] == 1


def test_a_mistyped_command_is_not_taken_for_a_path(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    code, out, err = tc(capsys, "chek", "bad.py")
    assert (code, out) == (2, "")
    assert err == ("error: 'chek' is not a command (check, fix, rules, explain, lsp, clean) or an existing path; "
                   "did you mean `tensorcopy check`?\n")
    # A path still works without a command, also one that looks like a word.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(BAD)
    assert tc(capsys, "src")[0] == 1
    assert tc(capsys, "bad.py")[0] == 1
    assert tc(capsys, "missing.py")[2] == "error: missing.py: no such file or directory\n"


def test_statistics_in_sarif_or_github_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BAD)
    for fmt in ("sarif", "github"):
        code, out, err = tc(capsys, "check", "--no-cache", "--statistics", "--output-format", fmt, "bad.py")
        assert (code, out) == (2, "")  # was: text statistics under a SARIF flag
        assert err == f"error: --statistics prints text, json or json-lines, not {fmt}\n"


def test_concise_is_ruffs_name_for_the_text_format(tmp_path, capsys):
    # `ruff check --output-format concise` prints what our text format prints: a ruff user's
    # flag works, in check and fix, with --statistics too.
    (tmp_path / "bad.py").write_text(BAD)
    for argv in (["check"], ["check", "--statistics"], ["fix", "--diff"]):
        text = tc(capsys, *argv, "--no-cache", "--output-format", "text", "bad.py", cwd=tmp_path)
        concise = tc(capsys, *argv, "--no-cache", "--output-format", "concise", "bad.py", cwd=tmp_path)
        assert concise == text and text.returncode == 1 and text.stdout, argv


def _fake_tns000(monkeypatch):
    # The analysis running out of stack, as on an expression nested thousands deep: the engine
    # reports TNS000 (and applies `# noqa` to it), the CLI selects it.
    def run(self):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(engine.Walker, "run", run)


def test_tns000_can_be_ignored_and_silenced(tmp_path, capsys, monkeypatch):
    _fake_tns000(monkeypatch)
    p = tmp_path / "deep.py"
    p.write_text(BAD)
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:1:1: TNS000 file not analysed")
    assert tc(capsys, "check", "--no-cache", "--ignore", "TNS000", str(p))[0] == 0
    assert tc(capsys, "check", "--no-cache", "--select", "TNS2", str(p))[0] == 0
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy.per-file-ignores]\n"deep.py" = ["TNS000"]\n')
    assert tc(capsys, "check", "--no-cache", str(p))[0] == 0
    os.unlink(tmp_path / "pyproject.toml")
    p.write_text("import torch  # noqa: TNS000\n" + BAD)
    assert tc(capsys, "check", "--no-cache", str(p))[0] == 0
    assert tc(capsys, "check", "--no-cache", "--no-noqa", str(p))[0] == 1


# ----------------------------------------------------------------------------- paths


@pytest.mark.parametrize("fmt", ["text", "json", "json-lines", "github", "sarif"])
def test_paths_have_no_dot_slash_in_any_format(tmp_path, fmt, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(BAD)
    proc = tc(capsys, "check", "--no-cache", "--output-format", fmt, cwd=tmp_path)
    assert proc.returncode == 1 and "./" not in proc.stdout
    for spelled in (["pkg"], ["./pkg"], ["./pkg/m.py"], [".//pkg/../pkg/m.py"]):
        again = tc(capsys, "check", "--no-cache", "--output-format", fmt, *spelled, cwd=tmp_path)
        if ".." not in spelled[0]:
            assert again.stdout == proc.stdout
    if fmt == "text":
        assert proc.stdout.startswith("pkg/m.py:3:5: TNS201 ")
    elif fmt == "json":
        assert json.loads(proc.stdout)[0]["path"] == "pkg/m.py"
    elif fmt == "github":
        assert proc.stdout.startswith("::error file=pkg/m.py,line=3,col=5,")
    elif fmt == "sarif":
        (result,) = json.loads(proc.stdout)["runs"][0]["results"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/m.py"


# ----------------------------------------------------------------------------- the cache


def test_cache_lives_in_the_project_root_not_the_current_directory(tmp_path, capsys):
    project = tmp_path / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (project / "src" / "pkg" / "m.py").write_text(BAD)
    assert tc(capsys, "check", "m.py", cwd=project / "src" / "pkg").returncode == 1
    assert tc(capsys, "check", "src", cwd=project).returncode == 1
    assert tc(capsys, "check", str(project / "src"), cwd=tmp_path).returncode == 1
    assert (project / ".tensorcopy_cache" / ".gitignore").is_file()
    for d in (tmp_path, project / "src", project / "src" / "pkg"):
        assert not (d / ".tensorcopy_cache").exists()
    # A git checkout without a pyproject.toml: its top.
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a").mkdir()
    (repo / "a" / "m.py").write_text(BAD)
    assert tc(capsys, "check", "m.py", cwd=repo / "a").returncode == 1
    assert (repo / ".tensorcopy_cache").is_dir() and not (repo / "a" / ".tensorcopy_cache").exists()
    # --cache-dir still wins.
    assert tc(capsys, "check", "--cache-dir", str(tmp_path / "elsewhere"), "m.py", cwd=repo / "a").returncode == 1
    assert (tmp_path / "elsewhere" / ".gitignore").is_file()
