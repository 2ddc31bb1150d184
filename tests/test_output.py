"""`--output-format` (json, json-lines, sarif, github) and `--statistics`, through the real CLI."""

import json
import os
import re

import jsonschema
import pytest

from conftest import ROOT, tc
from flake8_tensorcopy import links

BAD = (
    "import torch\n"
    "\n"
    "x = torch.ones(3, requires_grad=True)\n"
    "s = 'é'; y = x.clone().detach()\n"
    "z = torch.tensor(x)\n"
)
SCHEMA = os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no configuration or result cache of the repository's


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "pkg" / "good.py").write_text("import torch\n", encoding="utf-8")
    return tmp_path


def _apply(text: str, edits) -> str:
    """Apply JSON edits (1-based lines and columns) the way an editor or a bot would."""
    lines = text.splitlines(keepends=True)

    def offset(line, col):
        return sum(len(x) for x in lines[: line - 1]) + col - 1

    for e in sorted(edits, key=lambda e: (e["start_line"], e["start_column"]), reverse=True):
        s, t = offset(e["start_line"], e["start_column"]), offset(e["end_line"], e["end_column"])
        text = text[:s] + e["content"] + text[t:]
    return text


def test_json_has_positions_fixes_and_edits_that_reproduce_the_fix(project, capsys):
    proc = tc(capsys, "check", "--no-cache", "--output-format", "json", "pkg", cwd=project)
    assert proc.returncode == 1 and proc.stderr == ""
    findings = json.loads(proc.stdout)
    assert {f["code"] for f in findings} >= {"TNS201", "TNS202"}
    first = next(f for f in findings if f["code"] == "TNS201")
    col = BAD.splitlines()[3].index("x.clone()") + 1
    assert first == {
        "path": os.path.join("pkg", "train.py"),
        "cell": None,
        "line": 4,
        "column": col,
        "end_line": 4,
        "end_column": col + len("x.clone().detach()"),
        "code": "TNS201",
        "name": "clone-before-detach",
        "message": first["message"],
        "fix": {"title": "Swap to `.detach().clone()`", "safety": "safe", "edits": first["fix"]["edits"]},
        "url": links.rule_url("TNS201", "clone-before-detach"),
    }
    assert first["message"].endswith("use x.detach().clone()")
    # Every safe fix's edits, applied to the file, give what `tensorcopy fix` writes.
    edits = [e for f in findings if f["fix"] and f["fix"]["safety"] == "safe" for e in f["fix"]["edits"]]
    expected = tc(capsys, "fix", "-", input=BAD).stdout
    assert _apply(BAD, edits) == expected != BAD


def test_json_lines_is_one_object_a_line(project, capsys):
    proc = tc(capsys, "check", "--no-cache", "--output-format", "json-lines", "pkg", cwd=project)
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert rows == json.loads(tc(capsys, "check", "--no-cache", "--output-format", "json", "pkg", cwd=project).stdout)


def _sarif_validator():
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_sarif_validates_against_the_official_schema(project, capsys):
    (project / "pkg" / "sub dir").mkdir()
    (project / "pkg" / "sub dir" / "naïve.py").write_text(BAD, encoding="utf-8")
    proc = tc(capsys, "check", "--no-cache", "--output-format", "sarif", "pkg", cwd=project)
    assert proc.returncode == 1 and proc.stderr == ""
    log = json.loads(proc.stdout)
    errors = sorted(_sarif_validator().iter_errors(log), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
    # (The validator is not a rubber stamp.)
    broken = json.loads(proc.stdout)
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(_sarif_validator().iter_errors(broken))
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert run_["tool"]["driver"]["name"] == "tensorcopy"
    tns201 = next(r for r in rules if r["id"] == "TNS201")
    assert tns201["name"] == "clone-before-detach"
    assert tns201["shortDescription"]["text"] and "## Why is this bad?" in tns201["help"]["markdown"]
    results = run_["results"]
    # Relative URIs, percent-encoded, as GitHub code scanning wants them.
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"pkg/train.py", "pkg/sub%20dir/na%C3%AFve.py"}
    r = next(r for r in results if r["ruleId"] == "TNS201"
             and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/train.py")
    assert rules[r["ruleIndex"]]["id"] == "TNS201"
    assert r["level"] == "error" and r["message"]["text"].endswith("use x.detach().clone()")
    col = BAD.splitlines()[3].index("x.clone()") + 1
    assert r["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 4, "startColumn": col, "endLine": 4, "endColumn": col + len("x.clone().detach()")}
    # The fix rides along as a SARIF fix.
    assert r["fixes"][0]["description"]["text"] == "Swap to `.detach().clone()`"


def test_sarif_without_findings_is_valid_too(project, capsys):
    proc = tc(capsys, "check", "--no-cache", "--output-format", "sarif", "pkg/good.py", cwd=project)
    assert proc.returncode == 0
    log = json.loads(proc.stdout)
    assert not list(_sarif_validator().iter_errors(log))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"]


def test_github_annotations(tmp_path, capsys):
    (tmp_path / "a,b:c.py").write_text(BAD, encoding="utf-8")
    proc = tc(capsys, "check", "--no-cache", "--output-format", "github", "a,b:c.py", cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines and all(line.startswith("::error ") for line in lines)
    col = BAD.splitlines()[3].index("x.clone()") + 1
    first = next(line for line in lines if "TNS201" in line)
    assert first.startswith(f"::error file=a%2Cb%3Ac.py,line=4,col={col},endLine=4,endColumn={col + 18},"
                            "title=tensorcopy (TNS201)::TNS201 ")
    assert re.fullmatch(r"::error file=[^,]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=[^:]+::.+", first)


def test_statistics_text_and_json(project, capsys):
    (project / "pkg" / "more.py").write_text(BAD, encoding="utf-8")
    proc = tc(capsys, "check", "--no-cache", "--statistics", "pkg", cwd=project)
    assert proc.returncode == 1
    rows = [line.split("\t") for line in proc.stdout.splitlines()]
    assert ["2", "TNS201", "[*] clone-before-detach"] in rows
    assert all(len(r) == 3 for r in rows)
    stats = json.loads(tc(capsys, "check", "--no-cache", "--statistics", "--output-format", "json", "pkg",
                          cwd=project).stdout)
    assert {"code": "TNS201", "name": "clone-before-detach", "count": 2, "fixable": True} in stats
    assert tc(capsys, "check", "--no-cache", "--statistics", "pkg/good.py", cwd=project).stdout == ""


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "github"])
def test_errors_stay_on_stderr(project, fmt, capsys):
    (project / "pkg" / "broken.py").write_bytes(b"import torch\ny = x.clone().detach(\n")
    proc = tc(capsys, "check", "--no-cache", "--output-format", fmt, "pkg", "missing.py", cwd=project)
    assert proc.returncode == 2
    assert "error: missing.py: no such file or directory" in proc.stderr
    assert "broken.py: cannot parse" in proc.stderr
    if fmt == "json":
        assert json.loads(proc.stdout)
    elif fmt == "json-lines":
        assert all(json.loads(line) for line in proc.stdout.splitlines())
    elif fmt == "sarif":
        assert not list(_sarif_validator().iter_errors(json.loads(proc.stdout)))
    else:
        assert all(line.startswith("::error ") for line in proc.stdout.splitlines())


def test_fix_reports_what_remains_in_the_format(project, capsys):
    proc = tc(capsys, "fix", "--output-format", "json", "pkg", cwd=project)
    assert proc.returncode in (0, 1)
    assert isinstance(json.loads(proc.stdout), list)
    assert proc.stderr.startswith("Fixed ")
    assert tc(capsys, "check", "--no-cache", "--select", "TNS201", "pkg", cwd=project).returncode == 0
