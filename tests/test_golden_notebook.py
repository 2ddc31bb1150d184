"""Golden outputs for a notebook: text, JSON, SARIF and GitHub annotations (issue 17).

tests/data/golden/train.ipynb has a markdown cell, a magic, a cell IPython dedents, and a cell
whose `source` is one JSON string with escapes and non-ASCII text.  Text and JSON give cell
coordinates (`train.ipynb:cell 3:2:9`, as ruff prints them); SARIF and GitHub point at the line
and column of the .ipynb file where the code is, which is where a viewer of the file shows them.

Messages and fix edits are the rules' business: they are normalised before comparing, so that
rewording a message does not break this test.  Regenerate the files with
`TENSORCOPY_GOLDEN=update python -m pytest tests/test_golden_notebook.py`."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, tc
from flake8_tensorcopy.notebook import _raw_offset

GOLDEN = os.path.join(ROOT, "tests", "data", "golden")
UPDATE = os.environ.get("TENSORCOPY_GOLDEN") == "update"
FORMATS = {"text": "train.txt", "json": "train.json", "sarif": "train.sarif.json", "github": "train.github.txt"}


def _normalise(fmt: str, out: str) -> str:
    if fmt == "text":
        return re.sub(r"^(.+?: TNS\d{3}(?: \[\*\])?) .*$", r"\1 <message>", out, flags=re.M)
    if fmt == "github":
        return re.sub(r"::(cell \d+:\d+:\d+: )?(TNS\d{3}) .*$", r"::\1\2 <message>", out, flags=re.M)
    data = json.loads(out)
    if fmt == "json":
        for f in data:
            f["message"] = "<message>"
            if f["fix"]:
                f["fix"] = {"safety": f["fix"]["safety"]}
        return json.dumps(data, indent=2, ensure_ascii=False)
    results = data["runs"][0]["results"] if isinstance(data, dict) else data
    for r in results:
        r["message"]["text"] = "<message>"
        r.pop("fixes", None)
        r.pop("ruleIndex")  # depends on how many rules there are
    return json.dumps(results, indent=2, ensure_ascii=False)


def _stored(fmt: str, out: str) -> str:
    """What the golden file keeps: the output, or for SARIF its results (the rest is the rules'
    documentation)."""
    if fmt != "sarif":
        return out
    return json.dumps(json.loads(out)["runs"][0]["results"], indent=2, ensure_ascii=False) + "\n"


@pytest.fixture
def notebook(tmp_path):
    shutil.copyfile(os.path.join(GOLDEN, "train.ipynb"), tmp_path / "train.ipynb")
    return tmp_path


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_notebook_output_matches_the_golden_file(notebook, capsys, fmt):
    proc = tc(capsys, "check", "--no-cache", "--output-format", fmt, "train.ipynb", cwd=notebook)
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr
    golden = os.path.join(GOLDEN, FORMATS[fmt])
    if UPDATE:
        with open(golden, "w", encoding="utf-8") as f:
            f.write(_stored(fmt, proc.stdout))
    with open(golden, encoding="utf-8") as f:
        expected = f.read()
    assert _normalise(fmt, proc.stdout) == _normalise(fmt, expected)


def test_sarif_and_github_positions_are_where_the_code_is_in_the_ipynb_file(notebook, capsys):
    """Independently of the golden files: each region starts at the finding's code in the file."""
    lines = (notebook / "train.ipynb").read_text(encoding="utf-8").split("\n")

    def check(fmt: str) -> str:
        return tc(capsys, "check", "--no-cache", "--output-format", fmt, "train.ipynb", cwd=notebook).stdout

    findings, sarif, github = json.loads(check("json")), json.loads(check("sarif")), check("github").splitlines()
    snippets = {"TNS201": "x.clone().detach()", "TNS202": "torch.tensor(x)", "TNS101": "x.numpy()"}
    assert sorted(f["code"] for f in findings) == sorted(snippets)
    for f, result, annotation in zip(findings, sarif["runs"][0]["results"], github):
        region = result["locations"][0]["physicalLocation"]["region"]
        line, col = region["startLine"], region["startColumn"]
        assert lines[line - 1][col - 1:].startswith(snippets[f["code"]]), (f, region)
        assert result["properties"]["cell"] == f["cell"] and result["properties"]["cellLine"] == f["line"]
        assert f"line={line},col={col}," in annotation
        assert f"::cell {f['cell']}:{f['line']}:{f['column']}: " in annotation


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(['a', 'é', '"', '\\', '\n', '\t', '\x00', '😀', '\ud800', '\u2028'])),
       st.booleans())
def test_json_columns_count_escapes(value, ascii_only):
    literal = json.dumps(value, ensure_ascii=ascii_only)
    for k in range(len(value) + 1):
        raw = _raw_offset(literal, 0, k)
        assert json.loads(literal[:raw] + '"') == value[:k]
