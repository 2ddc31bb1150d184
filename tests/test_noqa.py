"""`# noqa` means in every front end what it means to the installed flake8 (issue 17).

flake8 is the reference: each case is one line, and flake8 (running the plugin, which leaves
noqa to flake8) must report exactly the lines the CLI, a notebook and the editor server report."""

from __future__ import annotations

import json
import subprocess

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from conftest import tc, tool
from flake8_tensorcopy import noqa
from flake8_tensorcopy.engine import lint_text
from flake8_tensorcopy.lsp import lint_document
from flake8_tensorcopy import config as _config

HEAD = "import torch\n\nx = torch.ones(3, requires_grad=True)\n"
CASES = [  # (the code after HEAD, whether flake8 silences its TNS201)
    ("a = x.clone().detach()  # noqa", True),
    ("a = x.clone().detach()  # NOQA", True),
    ("a = x.clone().detach()  # NOQA: tns201", False),  # codes are case-sensitive in flake8
    ("a = x.clone().detach()  # noqa:tns201,E501", False),
    ("a = x.clone().detach()  # noqa: TNS201", True),
    ("a = x.clone().detach()  # noqa:TNS2", True),
    ("a = x.clone().detach()  # noqa: E501", False),
    ("a = x.clone().detach()  #noqa", False),  # flake8 wants exactly "# noqa"
    ("a = x.clone().detach()  #  noqa", False),
    ("a = x.clone().detach()  # noqa : TNS202", True),  # not a code list: a blanket noqa
    ("a = x.clone().detach()  # noqa:  TNS202", True),
    ("a = x.clone().detach()  # noqa: TNS", True),  # no digits: not a code, so blanket
    ("a = x.clone().detach()  # noqa: E501,TNS201", True),
    ("a = x.clone().detach()  # noqa: E501 TNS201 because", True),
    ("a = x.clone().detach()  # type: ignore # noqa: TNS201", True),
    ("a = x.clone().detach()  # noqa: TNS202", False),
    ("a = (x.clone().detach(),\n     1)  # noqa", False),  # inside brackets: physical lines
    ("a = x.clone().detach() + \\\n    1  # noqa", True),  # a backslash joins the lines
    ('a = print(x.clone().detach(), """\n""")  # noqa', True),  # so does a multi-line string
    ('a = print("""\n""", x.clone().detach())  # noqa', True),
]


def _source():
    lines, expected, line = [HEAD], [], HEAD.count("\n") + 1
    for code, silenced in CASES:
        lines.append(code + "\n")
        expected.append((line + code[:code.index("x.clone")].count("\n"), silenced))
        line += code.count("\n") + 1
    return "".join(lines), expected


def test_the_cases_are_all_findings_without_noqa():
    src, expected = _source()
    assert [v.line for v in lint_text(src, honor_noqa=False).violations] == [n for n, _ in expected]


def test_cli_notebook_lsp_and_flake8_agree(tmp_path, capsys):
    src, expected = _source()
    reported = [n for n, silenced in expected if not silenced]
    p = tmp_path / "cases.py"
    p.write_text(src)
    flake8 = subprocess.run([tool("flake8"), "--select", "TNS", "--format", "%(row)d", str(p)],
                            capture_output=True, text=True)
    assert [int(x) for x in flake8.stdout.split()] == reported, "the table above no longer matches flake8"
    cli = tc(capsys, "check", "--no-cache", "--output-format", "json", str(p))
    assert [f["line"] for f in json.loads(cli.stdout)] == reported
    assert [v.line for v in lint_text(src).violations] == reported
    settings = _config.resolve(_config.Config(root=str(tmp_path)))
    assert [v.line for v in lint_document(src, str(p), settings)[0]] == reported
    # A notebook: the same text as one cell.
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [new_code_cell(src)]
    path = tmp_path / "cases.ipynb"
    nbformat.write(nb, str(path))
    out = tc(capsys, "check", "--no-cache", "--output-format", "json", str(path))
    assert [f["line"] for f in json.loads(out.stdout)] == reported


@pytest.mark.parametrize("marker, whole_file", [
    ("# flake8: noqa", True),
    ("  # FLAKE8=NOQA", True),
    ("# flake8: noqa: E501", True),  # flake8 7 matches the start of the line only
    ("z = 1  # flake8: noqa", False),  # on a line with code flake8 ignores it (and warns)
])
def test_file_level_noqa(tmp_path, capsys, marker, whole_file):
    src = HEAD + marker + "\ny = x.clone().detach()\n"
    p = tmp_path / "f.py"
    p.write_text(src)
    flake8 = subprocess.run([tool("flake8"), "--select", "TNS", str(p)], capture_output=True, text=True)
    cli = tc(capsys, "check", "--no-cache", str(p))
    assert (flake8.returncode, cli.returncode) == ((0, 0) if whole_file else (1, 1))


def test_codes_suppressed_is_flake8s_rule():
    assert noqa.codes_suppressed("x  # noqa", "TNS201")
    assert noqa.codes_suppressed("x  # noqa: TNS2,E1", "TNS201")
    assert not noqa.codes_suppressed("x  # noqa: tns201", "TNS201")
    assert not noqa.codes_suppressed("x  # noqa: TNS202", "TNS201")
    assert not noqa.codes_suppressed("x", "TNS201")
