"""Fixture files: inline `# expect:` markers for the checker, before/after pairs for fixes."""

import glob
import os
import re
import shutil
import subprocess

import pytest

from conftest import FIXTURES, tc, tool
from flake8_tensorcopy.engine import lint_text

_MARKER = re.compile(r"#\s*expect:\s*(?P<codes>(?:TNS\d{3}:\d+\s*)+)")


def markers(path):
    """{(line, col_1based, code)} declared in a fixture file."""
    found = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = _MARKER.search(line)
            if m:
                for item in m.group("codes").split():
                    code, col = item.split(":")
                    found.add((lineno, int(col), code))
    return found


def engine_findings(path):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    result = lint_text(text)
    assert result.error is None, result.error
    return {(v.line, v.col + 1, v.code): v for v in result.violations}


CHECK_FILES = sorted(glob.glob(os.path.join(FIXTURES, "TNS*.py")))
FIX_INPUTS = sorted(glob.glob(os.path.join(FIXTURES, "fix", "TNS*.in.py")))


def _out(path):
    return path[: -len(".in.py")] + ".out.py"


def test_there_are_fixtures():
    assert CHECK_FILES and FIX_INPUTS


@pytest.mark.parametrize("path", CHECK_FILES, ids=os.path.basename)
def test_checker_fixture_matches_markers(path):
    assert set(engine_findings(path)) == markers(path)


@pytest.mark.parametrize("path", FIX_INPUTS, ids=os.path.basename)
def test_fix_pair(path, tmp_path, capsys):
    expected_out = _out(path)
    unsafe = ".unsafe." in os.path.basename(path)
    target = tmp_path / "case.py"
    shutil.copyfile(path, target)
    # Every unmarked finding of the input is fixable; marked ones remain.
    before = engine_findings(path)
    kept = markers(path)
    assert kept <= set(before)
    for key, v in before.items():
        if key not in kept:
            assert v.fix is not None and (unsafe or v.fix.safety == "safe"), key
    cmd = ["fix", str(target)] + (["--unsafe-fixes"] if unsafe else [])
    tc(capsys, *cmd)
    with open(target, encoding="utf-8", newline="") as f, open(expected_out, encoding="utf-8", newline="") as g:
        assert f.read() == g.read()
    # Idempotent: a second run changes nothing and exits according to what remains.
    first = target.read_bytes()
    tc(capsys, *cmd)
    assert target.read_bytes() == first
    # What remains is exactly what the markers say.
    assert set(engine_findings(str(target))) == kept


def test_flake8_reports_fixture_markers_with_true_columns():
    """`flake8 --select TNS fixtures/` prints exactly the expected `path:line:col: code` lines."""
    proc = subprocess.run(
        [tool("flake8"), "--select", "TNS", "--format", "%(path)s:%(row)d:%(col)d: %(code)s", FIXTURES],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    expected = set()
    for path in CHECK_FILES:
        expected |= {f"{path}:{line}:{col}: {code}".replace(" ", "") for line, col, code in markers(path)}
    for path in FIX_INPUTS:
        expected |= {f"{path}:{line}:{col}: {code}".replace(" ", "") for line, col, code in engine_findings(path)}
        out = _out(path)
        expected |= {f"{out}:{line}:{col}: {code}".replace(" ", "") for line, col, code in markers(out)}
    got = {g for g in (line.replace(" ", "") for line in proc.stdout.splitlines()) if g}
    assert got == expected
