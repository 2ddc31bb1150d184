"""Robustness defects (issue 12, part 4): each case failed before its fix."""

from __future__ import annotations

import ast
import json
import marshal
import os
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from conftest import tc, tool
from flake8_tensorcopy import cli
from flake8_tensorcopy.engine import select_rules, fix_text, lint_text
from flake8_tensorcopy.fixes import replace_node
from flake8_tensorcopy.model import Fix
from flake8_tensorcopy.rules.base import _REGISTRY, Rule
from flake8_tensorcopy.source import decode

HEAD = "import torch\nx = torch.ones(3, requires_grad=True)\n"
BAD_LINE = "y = x.clone().detach()"
GOOD_LINE = "y = x.detach().clone()"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_cr_only_file_with_a_latin1_cookie_and_non_ascii_bytes(tmp_path, capsys):
    src = "# -*- coding: latin-1 -*-\r" + HEAD.replace("\n", "\r") + BAD_LINE + "  # café\r"
    data = src.encode("latin-1")
    p = tmp_path / "cr.py"
    p.write_bytes(data)
    assert subprocess.run([sys.executable, str(p)], capture_output=True).returncode == 0  # Python runs it...
    assert decode(data).encoding == "iso-8859-1"  # ...and we read it (was: "invalid or missing encoding")
    code, out, err = tc(capsys, "check", "--no-cache", str(p))
    assert (code, err) == (1, "") and out.startswith(f"{p}:4:5: TNS201 ")
    assert tc(capsys, "fix", str(p))[:2] == (0, "Fixed 1 problem.\n")
    assert p.read_bytes() == src.replace(BAD_LINE, GOOD_LINE).encode("latin-1")


@pytest.mark.parametrize("depth", [11, 40])
def test_nested_fixes_converge_in_one_run(tmp_path, capsys, depth):
    src = "import torch\nx = torch.ones(3)\ny = " + "torch.tensor(" * depth + "x" + ")" * depth + "\n"
    tns202 = select_rules(["TNS202"])  # (TNS201 would then reorder the chains it makes)
    assert len(lint_text(src, tns202).violations) == depth
    result = fix_text(src, tns202)  # was: 10 passes at most, one nested fix each, and the rest "not fixable"
    assert len(result.applied) == depth and result.remaining == []
    assert result.text == "import torch\nx = torch.ones(3)\ny = x" + ".detach().clone()" * depth + "\n"
    p = tmp_path / "nested.py"
    p.write_text(src)
    assert tc(capsys, "fix", "--select", "TNS202", str(p))[:2] == (0, f"Fixed {depth} problems.\n")
    assert tc(capsys, "check", "--select", "TNS202", "--no-cache", str(p))[0] == 0


def test_fix_passes_stay_bounded_for_a_fix_that_never_converges(monkeypatch):
    # A rule whose fix always re-creates its finding (it writes the call back as it was) must not
    # loop forever: the loop stops at its limit, one lint per pass and one to see what is left.
    import flake8_tensorcopy.engine as engine

    class SameAgain(Rule):
        code = "TNS996"
        message = "again"
        fix_safety = "safe"
        prefilter = (".clone(",)

        def visit_Call(self, node, ctx):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
                ctx.report(self, node, Fix("same", "safe", (replace_node(ctx, node, ctx.text(node)),)))

    calls = []
    real = engine.lint_text
    monkeypatch.setattr(engine, "lint_text", lambda *a, **k: calls.append(1) or real(*a, **k))
    try:
        result = engine.fix_text(HEAD + BAD_LINE + "\n", [SameAgain])
    finally:
        _REGISTRY.pop("TNS996", None)
    assert len(calls) == engine._EXTRA_PASSES + 2
    assert len(result.applied) == engine._EXTRA_PASSES + 1 and result.text == HEAD + BAD_LINE + "\n"


@pytest.mark.parametrize("entry", [
    {"size": "big", "mtime": 0, "sha": "", "violations": [], "error": None},
    {"size": 0, "mtime": 0, "sha": "", "violations": [["TNS201", "m", "3", 0, 3, 1, None, None, [], None]],
     "error": None},
    {"violations": [["TNS201", "m", 3, 0, 3, 1, ["t", "safe", [[0, 1, 2, None]]], None, [], None]]},
    {"violations": [["TNS201", "m", 3, 0, 3, 1, None, None, [], [1, 2]]]},
    {"violations": [["TNS201"]], "error": 5},
    {"violations": {"a": 1}},
    [1, 2, 3],
    "text",
    {"violations": [["TNS201", "m", True, 0, 3, 1, None, None, [], None]]},
], ids=["size", "line-str", "edit-text", "json-range", "short-row", "dict", "list", "str", "bool"])
def test_a_well_formed_but_wrongly_typed_cache_entry_is_a_miss(tmp_path, capsys, entry):
    p = tmp_path / "m.py"
    p.write_text(HEAD + BAD_LINE + "\n")
    first = tc(capsys, "check", "m.py")
    assert first.returncode == 1
    (cache_file,) = [os.path.join(d, f) for d, _s, fs in os.walk(tmp_path / ".tensorcopy_cache") for f in fs
                     if f.endswith(".marshal") and "results-" in d]
    with open(cache_file, "rb") as f:
        data = marshal.load(f)
    assert data["path"] == str(p)
    if isinstance(entry, dict):
        st = os.stat(p)
        entry = {"size": st.st_size, "mtime": st.st_mtime_ns, "sha": data["sha"], "error": None, **entry,
                 "format": data["format"], "path": data["path"]}
    with open(cache_file, "wb") as f:
        marshal.dump(entry, f)
    again = tc(capsys, "check", "m.py")  # (a traceback fails tc)
    assert (again.returncode, again.stdout) == (1, first.stdout)


def test_crlf_notebook_keeps_crlf_after_a_fix(tmp_path, capsys):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [new_code_cell(HEAD + BAD_LINE), new_code_cell("z = 1")]
    text = nbformat.writes(nb).replace("\n", "\r\n")
    # A source list item that gets split by the fix, so that the list layout is written anew.
    text = text.replace('"z = 1"', '"z = x.clone().detach(); w = 2"')
    p = tmp_path / "win.ipynb"
    p.write_bytes(text.encode())
    assert tc(capsys, "fix", str(p))[0] == 0
    after = p.read_bytes().decode()
    assert "\n" not in after.replace("\r\n", "")  # was: LF lines inside a CRLF file
    assert json.loads(after)["cells"][0]["source"][-1] == GOOD_LINE
    nb_path = tmp_path / "split.ipynb"
    nb.cells = [new_code_cell(HEAD + "if x.sum():\n    x.add_(1)\ny = x.clone().detach()")]
    nb_path.write_bytes(nbformat.writes(nb).replace("\n", "\r\n").encode())
    assert tc(capsys, "fix", "--unsafe-fixes", str(nb_path))[0] in (0, 1)
    after = nb_path.read_bytes().decode()
    assert "\n" not in after.replace("\r\n", "")


def test_a_fifo_named_on_the_command_line_is_an_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "m.py").write_text(HEAD + BAD_LINE + "\n")
    for cmd in ("check", "fix"):
        proc = subprocess.run([tool("tensorcopy"), cmd, "pipe.py", "m.py"], capture_output=True, text=True,
                              cwd=tmp_path, timeout=60)  # was: waits for a writer forever
        assert proc.returncode == 2
        assert "error: pipe.py: cannot read: not a regular file\n" in proc.stderr


def test_jobs_never_starts_more_processes_than_files(tmp_path, capsys, monkeypatch):
    started = []

    class Pool:
        def __init__(self, max_workers):
            started.append(max_workers)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, tasks, chunksize=1):
            return map(fn, tasks)

    monkeypatch.setattr(cli, "ProcessPoolExecutor", Pool)
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(HEAD + BAD_LINE + "\n")
    assert tc(capsys, "check", "--no-cache", "--jobs", "16", ".")[0] == 1
    assert started == []  # three files: no pool at all (was: 16 processes... for 64+ files only)
    for i in range(3, 40):
        (tmp_path / f"m{i}.py").write_text(HEAD + BAD_LINE + "\n")
    assert tc(capsys, "check", "--no-cache", "--jobs", "64", ".")[0] == 1
    assert started == [10]  # 40 files: at most one process per 4 files
    assert cli.workers_for(1000, 3) == 3 and cli.workers_for(10, 0) == 1 and cli.workers_for(2, 8) == 1
    assert tc(capsys, "check", "--jobs", "-2", ".")[0] == 2


def test_jobs_runs_real_processes(tmp_path):
    for i in range(12):
        (tmp_path / f"m{i}.py").write_text(HEAD + BAD_LINE + "\n")
    proc = subprocess.run([tool("tensorcopy"), "check", "--no-cache", "-j", "3", "."], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.count("TNS201") == 12


def test_nul_byte_after_8_kib_has_a_position(tmp_path, capsys):
    data = (HEAD + "# " + "x" * 9000 + "\n" + BAD_LINE + "\n").encode() + b"z = 'ab\x00'\n"
    p = tmp_path / "nul.py"
    p.write_bytes(data)
    for cmd in (["check", "--no-cache"], ["fix"]):
        code, _, err = tc(capsys, *cmd, str(p))
        # was: "(line None, column None)"
        assert (code, err) == (2, f"error: {p}: cannot parse: SyntaxError: source code cannot contain null bytes "
                                  "(line 5, column 8)\n")
    assert p.read_bytes() == data


def test_nul_in_a_notebook_cell_has_a_position(tmp_path, capsys):
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.cells = [new_code_cell(HEAD), new_code_cell("z = 1\nw = 'a\x00'\n" + BAD_LINE)]
    p = tmp_path / "nul.ipynb"
    nbformat.write(nb, str(p))
    code, out, err = tc(capsys, "check", "--no-cache", str(p))
    assert code == 2
    assert err == (f"error: {p}: cannot parse: SyntaxError: source code cannot contain null bytes "
                   "(cell 2, line 2, column 7)\n")


def test_a_file_reached_through_a_symlink_and_directly_is_checked_once(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(HEAD + BAD_LINE + "\n")
    os.symlink("pkg/m.py", tmp_path / "link.py")
    code, out, _ = tc(capsys, "check", "--no-cache", ".")
    assert code == 1 and out.count("TNS201") == 1  # was: twice, as link.py and pkg/m.py
    code, out, _ = tc(capsys, "check", "--no-cache", "pkg/m.py", "link.py", "pkg")
    assert code == 1 and out.count("TNS201") == 1 and out.startswith("pkg/m.py:3:5")
    # fix writes it once (twice in parallel would race on the same file)
    assert tc(capsys, "fix", "link.py", "pkg")[:2] == (0, "Fixed 1 problem.\n")
    assert (tmp_path / "pkg" / "m.py").read_text() == HEAD + GOOD_LINE + "\n"


def test_the_pass_limit_is_not_quadratic_on_a_big_file(monkeypatch):
    # Many independent fixes: one pass applies them all, so the big limit costs nothing: the
    # text is linted twice (find and fix, then confirm), not once per fix.
    import flake8_tensorcopy.engine as engine

    calls = []
    real = engine.lint_text
    monkeypatch.setattr(engine, "lint_text", lambda *a, **k: calls.append(1) or real(*a, **k))
    src = HEAD + "".join(f"y{i} = x.clone().detach()\n" for i in range(3000))
    result = engine.fix_text(src)
    assert len(result.applied) == 3000 and result.remaining == [] and len(calls) == 2
    assert result.text == src.replace("x.clone().detach()", "x.detach().clone()")


def _decode_by_the_tokenizer(data: bytes):
    """What `decode` gives for `data` with the tokenizer's `detect_encoding` asked every time
    (what it did before its UTF-8 fast path): (text, encoding, bom), or the error's message."""
    import codecs
    import tokenize

    from flake8_tensorcopy.source import _first_lines

    try:
        encoding, _ = tokenize.detect_encoding(_first_lines(data))
    except SyntaxError as exc:
        return str(exc)
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data, encoding = data[3:], "utf-8"
    elif encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        return data.decode(encoding), encoding, bom
    except (ValueError, LookupError) as exc:
        return f"not valid {encoding}: {exc}"


def test_decode_reads_every_file_as_the_tokenizer_says_without_asking_it_of_plain_utf8():
    import random

    from flake8_tensorcopy.source import DecodeError

    pieces = [b"", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-", b"# coding=utf-8", b"# vim: set fileencoding=cp1252 :",
              b"# coding: undefined", b"# coding: punycode", b"# coding: no-such-codec", b"# encoding is fun",
              b"#!/usr/bin/env python", b"   ", b"\t# comment", b"x = 1", b"import torch", b"s = 'caf\xc3\xa9'",
              b"s = 'caf\xe9'", b"\xff\xfe", b"\x00", b"'''coding: latin-1'''", b"\x0c", b"# -*- coding: utf-8 -*-"]
    newlines = [b"\n", b"\r\n", b"\r", b""]
    rng = random.Random(15)
    seen_fast = seen_slow = 0
    for _ in range(3000):
        data = b"".join(rng.choice(pieces) + rng.choice(newlines) for _ in range(rng.randint(0, 5)))
        expected = _decode_by_the_tokenizer(data)
        try:
            got = decode(data)
            got = (got.text, got.encoding, got.bom)
        except DecodeError as exc:
            got = str(exc)
        assert got == expected, data
        fast = not data.startswith(b"\xef\xbb\xbf") and type(expected) is tuple and expected[1] == "utf-8"
        seen_fast += fast
        seen_slow += not fast
    assert seen_fast > 500 and seen_slow > 500
    # A file that holds no cookie (one on its third line is none) and decodes as UTF-8 does not
    # need the tokenizer's module.
    code = ("import sys; from flake8_tensorcopy.source import decode; "
            "assert decode('x = \"caf\\u00e9\"\\ny = 2\\n# coding: latin-1\\n'.encode()).encoding == 'utf-8'; "
            "print('tokenize' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout == "False\n"
