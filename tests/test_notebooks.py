"""Jupyter notebooks through the real CLI, on notebooks written by nbformat (and by hand)."""

import difflib
import json
import re

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from conftest import tc
from flake8_tensorcopy.notebook import python_view

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configuration or result cache of the repository's


def make_notebook(cells, **meta):
    nb = new_notebook()
    nb.metadata.update({"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
                        "language_info": {"name": "python", "version": "3.11"}}, **meta)
    nb.cells = cells
    return nb


def training_notebook():
    """Cell 3 holds the bug; the tensor comes from cell 2; outputs and metadata everywhere."""
    return make_notebook([
        new_markdown_cell("# Training\nSome *notes*, and `x.clone().detach()` in markdown is not code."),
        new_code_cell("%matplotlib inline\nimport torch\n!pip install -q tqdm\nx = torch.ones(3, requires_grad=True)",
                      execution_count=1, outputs=[new_output("stream", name="stdout", text="ok\n")],
                      metadata={"tags": ["setup"], "collapsed": False}),
        new_code_cell("print(x.sum())\nhistory = x.clone().detach()\nhistory",
                      execution_count=7,
                      outputs=[new_output("execute_result", data={"text/plain": "tensor([1., 1., 1.])"},
                                          execution_count=7),
                               new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]),
        new_code_cell("%%bash\necho x.clone().detach()\n"),
        new_code_cell("y = x.detach().clone()"),
    ])


@pytest.fixture
def nb_path(tmp_path):
    path = tmp_path / "train.ipynb"
    nbformat.write(training_notebook(), str(path))
    return path


def test_check_reports_cell_line_and_column(nb_path, tmp_path, capsys):
    proc = tc(capsys, "check", "--no-cache", str(nb_path))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"{nb_path}:cell 3:2:11: TNS201 [*] x.clone().detach() ")
    assert lines[-1].startswith("Found 1 problem (1 fixable")
    assert len(lines) == 2
    (finding,) = json.loads(tc(capsys, "check", "--no-cache", "--output-format", "json", str(nb_path)).stdout)
    assert (finding["cell"], finding["line"], finding["column"], finding["end_column"]) == (3, 2, 11, 29)
    assert finding["fix"]["edits"][0]["start_line"] == 2  # edits are in cell coordinates too


def test_fix_touches_only_the_bad_cells_source(nb_path, capsys):
    before = nb_path.read_text(encoding="utf-8")
    proc = tc(capsys, "fix", str(nb_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Fixed 1 problem." in proc.stdout
    after = nb_path.read_text(encoding="utf-8")
    # A one-line diff inside cell 3's source; outputs, metadata, ids and layout untouched.
    diff = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert diff == ['-    "history = x.clone().detach()\\n",', '+    "history = x.detach().clone()\\n",']
    old, new = json.loads(before), json.loads(after)
    assert new["cells"][2]["source"] == ["print(x.sum())\n", "history = x.detach().clone()\n", "history"]
    new["cells"][2]["source"] = old["cells"][2]["source"]
    assert new == old
    nbformat.validate(nbformat.reads(after, as_version=4))
    assert tc(capsys, "check", "--no-cache", str(nb_path)).returncode == 0
    assert tc(capsys, "fix", str(nb_path)).returncode == 0 and nb_path.read_text(encoding="utf-8") == after


def test_fix_diff_shows_the_json_change_and_writes_nothing(nb_path, capsys):
    before = nb_path.read_bytes()
    proc = tc(capsys, "fix", "--diff", str(nb_path))
    assert proc.returncode == 1
    assert '-    "history = x.clone().detach()\\n",\n+    "history = x.detach().clone()\\n",' in proc.stdout
    assert nb_path.read_bytes() == before


def test_hand_written_layout_is_kept(tmp_path, capsys):
    """Two-space indent, sorted keys, ASCII escapes, `source` as one string, no final newline."""
    nb = json.loads(nbformat.writes(training_notebook()))
    nb["cells"][2]["source"] = "".join(nb["cells"][2]["source"]) + "  # caf\u00e9"
    text = json.dumps(nb, indent=2, sort_keys=True, ensure_ascii=True)
    path = tmp_path / "hand.ipynb"
    path.write_text(text, encoding="utf-8")
    assert tc(capsys, "fix", str(path)).returncode == 0
    after = path.read_text(encoding="utf-8")
    assert after == text.replace("history = x.clone().detach()", "history = x.detach().clone()")
    assert "caf\\u00e9" in after


def test_magics_are_skipped_and_code_after_time_is_checked(tmp_path, capsys):
    path = tmp_path / "magic.ipynb"
    nbformat.write(make_notebook([
        new_code_cell("import torch\nx = torch.ones(2, requires_grad=True)\nfiles = !ls -la\ntorch.clone?\n"
                      "for i in range(2):\n    %time y = x.clone().detach()\n    !echo {i}\n"),
        new_code_cell("%%timeit\nz = x.clone().detach()"),
        new_code_cell("%%bash\ncat <<EOF\n(unbalanced\nEOF"),
        new_code_cell("?x\n%pip install \\\n    torch\nw = x.clone().detach()  # noqa: TNS201\nv = x.clone().detach()"),
    ]), str(path))
    proc = tc(capsys, "check", "--no-cache", str(path))
    assert proc.returncode == 1, proc.stderr
    found = [line.split(": TNS")[0].split(":", 1)[1] for line in proc.stdout.splitlines()[:-1]]
    assert found == ["cell 1:6:15", "cell 2:2:5", "cell 4:5:5"]
    assert tc(capsys, "fix", str(path)).returncode == 0
    cells = nbformat.read(str(path), as_version=4).cells
    assert "    %time y = x.detach().clone()\n" in cells[0].source
    assert cells[1].source == "%%timeit\nz = x.detach().clone()"
    assert cells[2].source == "%%bash\ncat <<EOF\n(unbalanced\nEOF"
    assert cells[3].source.endswith("# noqa: TNS201\nv = x.detach().clone()")


def test_recursion_finds_notebooks_but_not_checkpoints(nb_path, tmp_path, capsys):
    (tmp_path / ".ipynb_checkpoints").mkdir()
    nbformat.write(training_notebook(), str(tmp_path / ".ipynb_checkpoints" / "train-checkpoint.ipynb"))
    proc = tc(capsys, "check", "--no-cache", str(tmp_path))
    assert proc.returncode == 1
    assert [line.split(":cell")[0] for line in proc.stdout.splitlines()[:-1]] == [str(nb_path)]


def test_syntax_error_names_the_cell_and_nothing_is_written(tmp_path, capsys):
    path = tmp_path / "broken.ipynb"
    nbformat.write(make_notebook([new_code_cell("import torch\nx = torch.ones(1)"),
                                  new_code_cell("y = x.clone().detach()\nz = (")]), str(path))
    before = path.read_bytes()
    for cmd in ("check", "fix"):
        proc = tc(capsys, cmd, "--no-cache" if cmd == "check" else "--diff", str(path))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "cell 2, line 2" in proc.stderr, proc.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"cells": 3}', b"", b'{"cells": [{"source": 5}]}'])
def test_not_a_notebook_is_an_error_not_a_crash(tmp_path, content, capsys):
    path = tmp_path / "odd.ipynb"
    path.write_bytes(content)
    proc = tc(capsys, "check", "--no-cache", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "odd.ipynb" in proc.stderr
    assert tc(capsys, "fix", str(path)).returncode == 2 and path.read_bytes() == content


def test_other_kernels_are_not_checked(tmp_path, capsys):
    path = tmp_path / "r.ipynb"
    nb = make_notebook([new_code_cell("x.clone().detach() <- torch")])
    nb.metadata["kernelspec"]["language"] = "R"
    nb.metadata["language_info"]["name"] = "R"
    nbformat.write(nb, str(path))
    assert tc(capsys, "check", "--no-cache", str(path)).returncode == 0


def test_stdin_notebook_and_cache(nb_path, tmp_path, capsys):
    text = nb_path.read_text(encoding="utf-8")
    proc = tc(capsys, "fix", "-", "--stdin-filename", "nb.ipynb", input=text)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["cells"][2]["source"][1] == "history = x.detach().clone()\n"
    # A cached result keeps the cell (and the fix's positions for JSON).
    first = tc(capsys, "check", "--output-format", "json", "train.ipynb", cwd=tmp_path)
    second = tc(capsys, "check", "--output-format", "json", "train.ipynb", cwd=tmp_path)
    assert (tmp_path / ".tensorcopy_cache").is_dir()
    assert first.stdout == second.stdout and json.loads(second.stdout)[0]["cell"] == 3


@settings(max_examples=300)
@given(st.lists(st.sampled_from(["%time y = x.clone()", "!ls \\", "x = !ls", "  %%bash", "obj?", "?", "%", "!",
                                 "(", ")", "'''", '"', "# %x", "\\", "    pass", "", "a = 1", "%%time", "é = 2"]),
                max_size=12),
       st.sampled_from(["\n", "\r\n", "\r"]))
def test_python_view_keeps_every_line_and_column(lines, newline):
    source = newline.join(lines)
    view, protected = python_view(source)
    assert len(view) == len(source)
    ends = re.compile(r"\r\n|\r|\n")
    assert [m.start() for m in ends.finditer(view)] == [m.start() for m in ends.finditer(source)]
    # Outside the protected spans the text is the user's, character for character.
    keep = [True] * len(source)
    for s, e in protected:
        keep[s:e] = [False] * (e - s)
    assert all(a == b for a, b, k in zip(view, source, keep) if k)
