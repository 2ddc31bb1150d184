"""Notebook cells as IPython runs them (issue 14, part 4).

IPython removes a cell's leading indentation before running it (`leading_indent`), so an
indented cell is fine in Jupyter; it used to make the whole notebook one parse error.  A cell
that still does not parse is one error, and the other cells are checked and fixed."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from conftest import tc
from flake8_tensorcopy.config import Config, resolve
from flake8_tensorcopy.lsp import lint_document
from flake8_tensorcopy.notebook import dedent, python_view

HEAD = "import torch\nx = torch.ones(3, requires_grad=True)"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configuration or result cache of the repository's


def write(path, *cells):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [new_markdown_cell(c[3:]) if c.startswith("#md") else new_code_cell(c) for c in cells]
    nbformat.write(nb, str(path))
    return path


def sources(path):
    return [c.source for c in nbformat.read(str(path), as_version=4).cells]


def ipython_leading_indent(cell: str) -> str:
    """IPython's cleanup (inputtransformer2.leading_empty_lines + leading_indent), restated."""
    lines = cell.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line and not line.isspace():
            lines = lines[i:]
            break
    m = re.match(r"^[ \t]+", lines[0]) if lines else None
    if not m:
        return "".join(lines)
    space = m.group()
    return "".join(line[len(space):] if line.startswith(space) else line for line in lines)


def test_an_indented_cell_is_checked_and_fixed_in_place(tmp_path, capsys):
    indented = "    y = x.clone().detach()\n    if y.sum():\n        z = x.clone().detach()\n    w = torch.tensor(y)"
    path = write(tmp_path / "nb.ipynb", HEAD, indented, "v = x.clone().detach()")
    proc = tc(capsys, "check", "--no-cache", str(path))
    assert proc.returncode == 1, proc.stderr  # was: exit 2, "unexpected indent", nothing checked
    assert [line.split(": ")[0] for line in proc.stdout.splitlines()[:-1]] == [
        f"{path}:cell 2:1:9", f"{path}:cell 2:3:13", f"{path}:cell 2:4:9", f"{path}:cell 3:1:5"]
    (edit,) = [f for f in json.loads(tc(capsys, "check", "--no-cache", "--output-format", "json", str(path)).stdout)
               if f["code"] == "TNS202"][0]["fix"]["edits"]
    assert (edit["start_line"], edit["start_column"]) == (4, 9)  # the cell's own columns
    assert tc(capsys, "fix", str(path)).returncode == 0
    fixed = "    y = x.detach().clone()\n    if y.sum():\n        z = x.detach().clone()\n    w = y.detach().clone()"
    assert sources(path) == [HEAD, fixed, "v = x.detach().clone()"]
    assert tc(capsys, "check", "--no-cache", str(path)).returncode == 0


def test_an_unsafe_fix_that_adds_lines_keeps_the_cell_indentation(tmp_path, capsys):
    cell = "  w = torch.ones(3, requires_grad=True)\n  w.add_(1)\n  print(w)"
    path = write(tmp_path / "nb.ipynb", "import torch", cell)
    assert tc(capsys, "check", "--no-cache", str(path)).returncode == 1
    proc = tc(capsys, "fix", "--unsafe-fixes", str(path))
    assert proc.returncode == 0, proc.stderr
    new = sources(path)[1]
    assert new == "  w = torch.ones(3, requires_grad=True)\n  with torch.no_grad():\n      w.add_(1)\n  print(w)"
    # What IPython runs is what the fix meant, and it still compiles.
    compile(ipython_leading_indent(new), "<cell>", "exec")


def test_a_cell_that_does_not_parse_is_one_error_and_the_rest_is_checked_and_fixed(tmp_path, capsys):
    path = write(tmp_path / "nb.ipynb", "#md# notes", HEAD, "oops = (\n", "y = x.clone().detach()",
                 "  a = 1\n b = 2")  # inconsistent dedent: IPython rejects it too
    proc = tc(capsys, "check", "--no-cache", str(path))
    assert proc.returncode == 2
    assert proc.stdout.splitlines() == [
        f"{path}:cell 4:1:5: TNS201 [*] x.clone().detach() records the copy in the autograd graph and throws it "
        "away; use x.detach().clone()",
        "Found 1 problem (1 fixable with `tensorcopy fix`) and 2 errors."]
    err = proc.stderr.splitlines()
    assert len(err) == 2 and all(line.startswith(f"error: {path}: cannot parse: SyntaxError: ") for line in err)
    assert "(cell 3, line 1, column 8)" in err[0] and "(cell 5, line 2" in err[1]
    proc = tc(capsys, "fix", str(path))
    assert proc.returncode == 2 and "Fixed 1 problem; 2 errors." in proc.stdout
    assert sources(path) == ["# notes", HEAD, "oops = (\n", "y = x.detach().clone()", "  a = 1\n b = 2"]


def test_the_editor_server_reads_a_cell_like_ipython(tmp_path):
    settings = resolve(Config(root=str(tmp_path)))
    cell = "    import torch\n    x = torch.ones(3, requires_grad=True)\n    y = x.clone().detach()"
    found, _rules, _deps = lint_document(cell, str(tmp_path / "nb.ipynb"), settings, ipython=True)
    (v,) = found
    assert (v.line, v.col, v.end_col) == (3, 8, 26)
    text = cell
    for e in sorted(v.fix.edits, key=lambda e: e.start, reverse=True):
        text = text[:e.start] + e.text + text[e.end:]
    assert text == cell.replace("x.clone().detach()", "x.detach().clone()")


LINES = ["x = 1", "if x:", "    y = 2", "'''", "s = 3'''", "", "   ", "\t z = 4", "%time w = 5", "  # c",
         "print(x,", "      x)", "é = 6"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=8), st.sampled_from(["", "  ", "\t", "    "]),
       st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_dedent_is_ipythons_and_maps_back(lines, indent, newline, end):
    cell = newline.join(indent + line if line else line for line in lines) + (newline if end else "")
    d = dedent(cell)
    if cell.strip():  # (IPython also strips an all-blank cell; there is nothing to check in it)
        # The same text, but for the leading blank lines IPython drops and we keep (so that
        # line numbers stay the cell's).
        ours = d.text.splitlines(keepends=True)
        while ours and ours[0].isspace():
            ours.pop(0)
        assert "".join(ours) == ipython_leading_indent(cell)
    # Every character of the cleaned text maps to the same character of the cell.
    for i, ch in enumerate(d.text):
        assert cell[d.to_cell(i)] == ch
    assert len(python_view(d.text)[0]) == len(d.text)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_edits_with_new_lines_get_the_indentation_back(newline):
    cell = newline.join(["  a = 1", "  b = 2", "  c = 3"])
    d = dedent(cell)
    assert d.indent == "  "
    start = d.text.index("b")
    # Insert a line before `b = 2` (an insertion at the start of a cleaned line).
    new = "with ctx:" + newline + "    "
    cs = d.to_cell(start)
    out = cell[:cs] + d.inserted(new, cell, cs) + cell[cs:]
    assert out == newline.join(["  a = 1", "  with ctx:", "      b = 2", "  c = 3"])
    assert dedent(out).text == d.text[:start] + new + d.text[start:]
