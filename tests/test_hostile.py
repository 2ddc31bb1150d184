"""Hostile inputs and safe writes: every case says exactly what happens.

Most cases run the CLI in-process (`cli.main`) for speed; the flake8 plugin is run in-process
the way flake8 calls it.  tests/test_cli.py already covers, through subprocesses, that syntax
errors, empty/whitespace/invalid-UTF-8/binary files never print a traceback, the read-only
file, and BOM/CRLF/latin-1 preservation; the cases here pin the exact messages, exit codes and
bytes, and add the rest.
"""

from __future__ import annotations

import ast
import errno
import glob
import io
import os
import shutil
import stat
import subprocess
import sys
import warnings

import pytest

from conftest import tc, tool
from flake8_tensorcopy import cli
from flake8_tensorcopy.engine import fix_text, lint_text
from flake8_tensorcopy.plugin import TensorCopyChecker
from flake8_tensorcopy.rules import all_rules
from flake8_tensorcopy.rules.base import _REGISTRY, Edit, Fix, Rule

HEAD = "import torch\nx = torch.ones(3, requires_grad=True)\n"
BAD_LINE = "y = x.clone().detach()"
GOOD_LINE = "y = x.detach().clone()"
MSG_201 = "TNS201 x.clone().detach() records the copy"
# What `check` prints: the fix would fix it, so ruff's [*] marks it (`fix` prints what remains unmarked).
CHECK_201 = "TNS201 [*] x.clone().detach() records the copy"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no cache or config from the repository


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def plugin(text: str):
    """The plugin as flake8 runs it on a file (universal newlines; flake8 itself parses)."""
    lines = io.StringIO(text, newline=None).readlines()
    tree = ast.parse("".join(lines))
    return [(line, col, msg) for line, col, msg, _ in TensorCopyChecker(tree, lines, "f.py").run()]


# ============================================================================ syntax errors


@pytest.mark.parametrize("src,why", [
    (HEAD + "y = (x.clone().detach()\n", "SyntaxError: '(' was never closed (line 3, column 5)"),
    (HEAD + "def f(:\n    " + BAD_LINE + "\n", "SyntaxError: invalid syntax (line 3, column 7)"),
    (HEAD + "if x:\n" + BAD_LINE + "\n", "SyntaxError: expected an indented block after 'if' statement on line 3 "
                                          "(line 4, column 1)"),
    (HEAD + "    " + BAD_LINE + "\n", "SyntaxError: unexpected indent (line 3, column 4)"),
], ids=["unclosed", "invalid", "no-indent", "unexpected-indent"])
def test_syntax_error_is_reported_with_its_position_exit_2(tmp_path, capsys, src, why):
    if sys.version_info[:2] != (3, 11):
        why = why.split(" (line")[0]  # the parser's wording and columns move between versions
    p = write(tmp_path / "broken.py", src.encode())
    ok = write(tmp_path / "ok.py", (HEAD + BAD_LINE + "\n").encode())
    code, out, err = tc(capsys, "check", "--no-cache", str(p), str(ok))
    assert code == 2
    assert f"error: {p}: cannot parse: {why}" in err
    assert f"{ok}:3:5: {CHECK_201}" in out  # the rest of the run goes on
    code, out, err = tc(capsys, "fix", str(p), str(ok))
    assert code == 2 and f"error: {p}: cannot parse: {why}" in err
    assert p.read_bytes() == src.encode()
    assert ok.read_text() == HEAD + GOOD_LINE + "\n"


# ============================================================================ empty files


@pytest.mark.parametrize("data", [b"", b"   \n\n\t\n", b"\xef\xbb\xbf", b"\r\r\n\n", b"\x0c\n", b"# only torch\n",
                                  b"\n" * 1000], ids=["empty", "whitespace", "bom-only", "newlines-only",
                                                      "form-feed", "comment", "blank-lines"])
def test_empty_and_blank_files_pass_and_stay_untouched(tmp_path, capsys, data):
    p = write(tmp_path / "e.py", data)
    assert tc(capsys, "check", "--no-cache", str(p)) == (0, "All checks passed!\n", "")
    assert tc(capsys, "fix", str(p)) == (0, "Fixed 0 problems.\n", "")
    assert p.read_bytes() == data
    assert plugin(data.decode("utf-8-sig")) == []


# ============================================================================ encodings


def test_bom_columns_count_characters_and_the_bom_is_kept(tmp_path, capsys):
    line = "s = 'é中𝔵'; " + BAD_LINE + "  # ü"
    src = "\ufeff" + HEAD + line + "\n"
    p = write(tmp_path / "bom.py", src.encode("utf-8"))
    col = line.index("x.clone") + 1
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:3:{col}: {CHECK_201}")
    assert plugin(src[1:])[0][:2] == (3, col - 1)
    assert tc(capsys, "fix", str(p))[0] == 0
    assert p.read_bytes() == src.replace(BAD_LINE, GOOD_LINE).encode("utf-8")


def test_bom_with_a_non_utf8_cookie_cannot_be_decoded(tmp_path, capsys):
    data = b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + (HEAD + BAD_LINE + "\n").encode()
    p = write(tmp_path / "bomlatin.py", data)
    for cmd in (["check", "--no-cache"], ["fix"]):
        code, _, err = tc(capsys, *cmd, str(p))
        assert code == 2
        assert err.startswith(f"error: {p}: cannot decode: encoding problem")
    assert p.read_bytes() == data


def test_latin1_cookie_non_ascii_bytes_around_the_fix_keep_their_encoding(tmp_path, capsys):
    src = ("#!/usr/bin/env python\n# -*- coding: latin-1 -*-\n" + HEAD + "s = 'ÿé'; " + BAD_LINE + "  # café £\n"
           "t = 'Ø'\n")
    data = src.encode("latin-1")
    p = write(tmp_path / "latin.py", data)
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:5:15: {CHECK_201}")
    assert tc(capsys, "fix", str(p))[0] == 0
    assert p.read_bytes() == src.replace(BAD_LINE, GOOD_LINE).encode("latin-1")
    assert b"\xc3" not in p.read_bytes()  # never re-encoded as UTF-8


def test_encoding_that_does_not_round_trip_is_checked_but_never_rewritten(tmp_path, capsys):
    # cp932 reads both 0x8790 and 0x81E0 as U+2252 and writes 0x81E0: rewriting the file would
    # change a byte the fix never touched.
    data = b"# -*- coding: cp932 -*-\n" + (HEAD + BAD_LINE).encode() + b"  # \x87\x90\n"
    p = write(tmp_path / "cp932.py", data)
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:4:5: {CHECK_201}")
    code, out, err = tc(capsys, "fix", str(p))
    assert code == 2
    assert f"error: {p}: cannot fix: cp932 does not write this file's bytes back exactly" in err
    assert f"{p}:4:5: {MSG_201}" in out  # still reported, as not fixed
    assert p.read_bytes() == data
    # stdin: the source comes back unchanged
    proc = subprocess.run([tool("tensorcopy"), "fix", "-"], input=data, capture_output=True)
    assert proc.returncode == 2 and proc.stdout == data and b"cannot fix" in proc.stderr


@pytest.mark.parametrize("cookie", ["undefined", "punycode", "utf-32", "rot13", "no-such-codec"])
def test_unusable_coding_cookie_is_a_decode_error(tmp_path, capsys, cookie):
    # `undefined` and `punycode` raised a bare UnicodeError: a traceback that ended the run.
    data = f"# coding: {cookie}\n".encode() + (HEAD + BAD_LINE + "\n").encode()
    p = write(tmp_path / "cookie.py", data)
    ok = write(tmp_path / "ok.py", (HEAD + BAD_LINE + "\n").encode())
    for cmd in (["check", "--no-cache"], ["fix"]):
        code, _, err = tc(capsys, *cmd, str(p), str(ok))
        assert code == 2
        assert f"error: {p}: cannot decode: " in err
    assert p.read_bytes() == data
    assert ok.read_text() == HEAD + GOOD_LINE + "\n"


def test_invalid_utf8_names_the_file_and_the_byte(tmp_path, capsys):
    head = (HEAD + BAD_LINE + "  # ").encode()
    data = head + b"\xff\xfe\n"
    p = write(tmp_path / "bad8.py", data)
    code, _, err = tc(capsys, "fix", str(p))
    assert code == 2
    assert err == (f"error: {p}: cannot decode: not valid utf-8: 'utf-8' codec can't decode byte 0xff "
                   f"in position {len(head)}: invalid start byte\n")
    assert p.read_bytes() == data


def test_nul_bytes_past_the_binary_sniff_are_a_parse_error(tmp_path, capsys):
    data = (HEAD + "# " + "x" * 9000 + "\n" + BAD_LINE + "\n").encode() + b"z = '\x00'\n"
    p = write(tmp_path / "nul.py", data)
    code, _, err = tc(capsys, "fix", str(p))
    assert code == 2 and f"error: {p}: cannot parse: " in err and "null bytes" in err
    assert p.read_bytes() == data


# ============================================================================ line endings, tabs, form feeds


def test_crlf_lone_cr_and_mixed_line_endings_are_preserved(tmp_path, capsys):
    lines = ["import torch", "x = torch.ones(3, requires_grad=True)", BAD_LINE, "z = 1", BAD_LINE, "w = 2",
             BAD_LINE, ""]
    ends = ["\r\n", "\n", "\r", "\r\n", "\n", "\r", "\r\n", ""]
    src = "".join(a + b for a, b in zip(lines, ends))
    p = write(tmp_path / "mixed.py", src.encode())
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1
    assert [line.split(": ")[0] for line in out.splitlines()[:-1]] == [f"{p}:3:5", f"{p}:5:5", f"{p}:7:5"]
    assert tc(capsys, "fix", str(p))[:2] == (0, "Fixed 3 problems.\n")
    assert p.read_bytes() == src.replace(BAD_LINE, GOOD_LINE).encode()
    assert [v[:2] for v in plugin(src)] == [(3, 4), (5, 4), (7, 4)]


def test_lone_cr_file(tmp_path, capsys):
    src = (HEAD + "if x.sum():\n    " + BAD_LINE + "\n").replace("\n", "\r")
    p = write(tmp_path / "cr.py", src.encode())
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:4:9: {CHECK_201}")
    assert tc(capsys, "fix", str(p))[0] == 0
    assert p.read_bytes() == src.replace(BAD_LINE, GOOD_LINE).encode()
    assert b"\n" not in p.read_bytes()


@pytest.mark.parametrize("body", [
    "if x.sum():\n\t" + BAD_LINE + "\n",
    "if x.sum():\n\x0c    " + BAD_LINE + "\n",
    "if x.sum():\n\t\x0c " + BAD_LINE + "\n",
    "\x0c" + BAD_LINE + "\n",
    "if x.sum():\n        pass\n\x0c\n        " + BAD_LINE + "\n",
    "y = [x,\n\t\x0c x.clone().detach(),\x0c]\n",
], ids=["tab", "ff-indent", "tab-ff", "ff-top", "ff-blank-line", "ff-in-brackets"])
def test_tabs_and_form_feeds(tmp_path, capsys, body):
    src = HEAD + body
    p = write(tmp_path / "ff.py", src.encode())
    lineno = 3 + body[: body.index("x.clone")].count("\n")
    line = src.split("\n")[lineno - 1]
    col = line.index("x.clone") + 1
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:{lineno}:{col}: {CHECK_201}"), out
    assert plugin(src)[0][:2] == (lineno, col - 1)
    assert tc(capsys, "fix", str(p))[0] == 0
    assert p.read_bytes() == src.replace("x.clone().detach()", "x.detach().clone()").encode()


# ============================================================================ size and depth


def test_50000_line_file_completes(tmp_path, capsys):
    # A long string first (every later offset depends on its 20,000 lines), then code, a data
    # table and comments: CRLF throughout, non-ASCII on most lines.
    out = HEAD.splitlines() + ['DOC = """']
    out += [f"line {i} of a long string é x.clone().detach()" for i in range(20000)]
    out.append('"""')
    for i in range(1000):
        out += [f"def f{i}(a):", f'    """Doc {i} é."""', f"    b = a * {i} + x",
                "    c = x.clone().detach()  # é" if i % 100 == 0 else "    c = b.sum()", "    return b, c"]
    out.append("TABLE = [")
    out += [f"    ({i}, 'é\\t', {i}.5)," for i in range(5000)]
    out.append("]")
    out += [f"# comment {i} é" for i in range(50000 - len(out))]
    src = "\r\n".join(out) + "\r\n"
    assert src.count("\n") == 50000
    p = write(tmp_path / "big.py", src.encode())
    code, out_, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out_.count(" TNS201 ") == 10
    assert tc(capsys, "fix", str(p))[:2] == (0, "Fixed 10 problems.\n")
    assert p.read_bytes() == src.replace("c = x.clone().detach()", "c = x.detach().clone()").encode()


N = 1000
DEEP = {
    # ast cannot build these: a clear "cannot parse" (each holds what a rule looks for: a file in
    # which none may report is not parsed, README "Pre-filter")
    "parens": ("y = " + "(" * N + "x.clone().detach()" + ")" * N, "SyntaxError: too many nested parentheses"),
    "calls": ("y = " + "torch.tensor(" * N + "x" + ")" * N, "SyntaxError: too many nested parentheses"),
    "lists": ("y = " + "[" * N + "x.clone().detach()" + "]" * N, "SyntaxError: too many nested parentheses"),
    "chain": ("y = x" + ".clone().detach()" * N, "RecursionError: maximum recursion depth exceeded"),
    "and": ("y = " + "(x and " * 400 + "x.clone().detach()" + ")" * 400, None),  # MemoryError on 3.11
    "indent": ("".join(" " * i + "if x:\n" for i in range(N)) + " " * N + BAD_LINE,
               "SyntaxError: too many levels of indentation"),
    # ast builds these, the analysis runs out of stack: one TNS000 finding
    "unary": ("y = " + "-" * N + "x.clone().detach()", "TNS000"),
    "binop": ("y = x" + " + x" * N + " + x.clone().detach()", "TNS000"),
    "attrs": ("y = x" + ".a" * N + ".clone().detach()", "TNS000"),
    "subscripts": ("y = x" + "[0]" * N + ".clone().detach()", "TNS000"),
    "ifexp": ("y = " + "x if x else " * N + "x.clone().detach()", "TNS000"),
    "power": ("y = x" + " ** x" * N + " ** x.clone().detach()", "TNS000"),
    "tensor-of-sum": ("y = torch.tensor(x" + " + x" * N + ")", "TNS000"),
    # deep, but walked without recursion: analysed like any other line
    "not": ("y = " + "not " * N + "x.clone().detach()", "finding"),
    "lambdas": ("y = " + "lambda: " * N + "x.clone().detach()", "finding"),
    "wide-and": ("y = x" + " and x" * 10_000 + " and x.clone().detach()", "finding"),
}


@pytest.mark.parametrize("case", sorted(DEEP))
def test_nesting_1000_deep_is_a_clear_error_never_a_crash(tmp_path, capsys, case):
    body, expect = DEEP[case]
    src = HEAD + body + "\n"
    p = write(tmp_path / "deep.py", src.encode())
    code, out, err = tc(capsys, "check", "--no-cache", str(p))
    tns000 = ("TNS000 file not analysed: expressions nested too deeply for the analysis; split the expression "
              "or exclude the file")
    col = body.index("x.clone") + 1 if "x.clone" in body else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(src)
    except (SyntaxError, RecursionError, MemoryError):
        tree = None
    if tree is not None and expect not in ("TNS000", "finding"):  # a newer parser copes with it
        expect = "TNS000" if " TNS000 " in out else "finding"
    if expect == "TNS000":
        assert code == 1 and err == ""
        assert out.startswith(f"{p}:1:1: {tns000}\n")
    elif expect == "finding":
        assert (code, err) == (1, "") and out.startswith(f"{p}:3:{col}: {CHECK_201}")
    else:
        assert code == 2
        assert err.startswith(f"error: {p}: cannot parse: ")
        if expect:
            assert expect in err
        else:
            assert err.rstrip("\n").split("cannot parse: ")[1].split(": ", 1)[1], "an empty reason"
    code, _, err = tc(capsys, "fix", str(p))
    if expect == "finding":
        assert code == 0 and p.read_bytes() == src.replace("x.clone().detach()", "x.detach().clone()").encode()
    else:
        assert code in (1, 2) and p.read_bytes() == src.encode()
    # The flake8 plugin: flake8 builds the tree; when it can, the plugin must not raise, even
    # when called with part of the stack already used (as inside flake8).
    if tree is None:
        return

    def deep_call(n):
        return deep_call(n - 1) if n else list(TensorCopyChecker(tree, src.splitlines(True), "deep.py").run())

    for depth in (0, 100):
        rows = deep_call(depth)
        if expect == "finding":
            assert [(r[0], r[1], r[2][:len(MSG_201)]) for r in rows] == [(3, col - 1, MSG_201)]
        else:
            assert [r[:3] for r in rows] == [(1, 0, tns000)]


def test_parser_memory_error_has_a_reason():
    result = lint_text(HEAD + "y = " + "(x and " * 400 + "x.clone().detach()" + ")" * 400 + "\n")
    assert result.error and result.error.split(": ", 1)[1], result.error


# ============================================================================ newer syntax

PEP695 = HEAD + "def first[T](xs: list[T]) -> T:\n    return xs[0]\n\ntype Alias = list[int]\n" + BAD_LINE + "\n"
PEP701 = HEAD + "s = f\"{x.clone().detach()!r:{'>'}{10}} {f\"{1}\"}\"\n" + BAD_LINE + "\n"
MATCH = HEAD + "match x.dim():\n    case 1 | 2:\n        " + BAD_LINE + "\n    case _:\n        pass\n"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the running Python parses PEP 695/701")
@pytest.mark.parametrize("src,line", [(PEP695, 3), (PEP701, 3)], ids=["pep695", "pep701"])
def test_newer_syntax_on_311_is_a_clear_parse_error(tmp_path, capsys, src, line):
    p = write(tmp_path / "new.py", src.encode())
    code, out, err = tc(capsys, "check", "--no-cache", str(p))
    assert code == 2 and err.startswith(f"error: {p}: cannot parse: SyntaxError: ")
    assert f"(line {line}, column " in err
    assert tc(capsys, "fix", str(p))[0] == 2 and p.read_bytes() == src.encode()


def test_match_statement_is_analysed_and_fixed(tmp_path, capsys):
    p = write(tmp_path / "m.py", MATCH.encode())
    code, out, _ = tc(capsys, "check", "--no-cache", str(p))
    assert code == 1 and out.startswith(f"{p}:5:13: {CHECK_201}")
    assert tc(capsys, "fix", str(p))[0] == 0 and p.read_text() == MATCH.replace(BAD_LINE, GOOD_LINE)


def _newer_pythons():
    found = []
    for v in ("3.12", "3.13"):
        cands = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{v}*/bin/python{v}")))
        cands.append(shutil.which(f"python{v}"))
        exe = next((c for c in cands if c and subprocess.run([c, "-c", "pass"], capture_output=True).returncode == 0),
                   None)
        if exe:
            found.append(pytest.param(exe, id=v))
    return found or [pytest.param(None, marks=pytest.mark.skip(reason="no Python 3.12/3.13 interpreter"))]


@pytest.mark.parametrize("python", _newer_pythons())
def test_newer_syntax_on_a_newer_python_is_analysed_and_fixed(python, root):
    # The engine itself is pure stdlib: run it from the source tree on the newer interpreter.
    script = (
        "import sys, json\nfrom flake8_tensorcopy.engine import lint_text, fix_text\n"
        "out = []\nfor src in json.loads(sys.stdin.read()):\n"
        "    r = lint_text(src); f = fix_text(src)\n"
        "    out.append([r.error, [(v.code, v.line, v.col) for v in r.violations], f.error, f.text])\n"
        "print(json.dumps(out))\n"
    )
    import json

    proc = subprocess.run([python, "-c", script], input=json.dumps([PEP695, PEP701, MATCH]), capture_output=True,
                          text=True, cwd=root, env={**os.environ, "PYTHONPATH": root})
    if proc.returncode and "ModuleNotFoundError" in proc.stderr:
        pytest.skip(f"the engine needs a module {python} lacks: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr
    (e1, v1, f1, t1), (e2, v2, f2, t2), (e3, v3, f3, t3) = json.loads(proc.stdout)
    assert e1 is None and f1 is None and ["TNS201", 7, 4] in v1 and t1 == PEP695.replace(BAD_LINE, GOOD_LINE)
    assert e2 is None and f2 is None and [c for c, _, _ in v2].count("TNS201") == 2
    assert t2 == PEP701.replace("x.clone().detach()", "x.detach().clone()")
    assert e3 is None and v3 == [["TNS201", 5, 12]] and t3 == MATCH.replace(BAD_LINE, GOOD_LINE)
    assert "Warning" not in proc.stderr


def test_parser_warnings_are_not_printed():
    # 3.12+ prints `SyntaxWarning: invalid escape sequence` from ast.parse; 3.11 raises the same as
    # a DeprecationWarning.  They are the user's compiler's business, not ours to print per file.
    src = HEAD + 'import re\nr = re.compile("\\d+")\n' + BAD_LINE + "\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lint_text(src).violations and fix_text(src).text == src.replace(BAD_LINE, GOOD_LINE)
    assert [str(w.message) for w in caught] == []


# ============================================================================ the file system


def test_directory_symlink_loop_terminates_and_checks_each_file_once(tmp_path, capsys):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    write(tmp_path / "pkg" / "sub" / "m.py", (HEAD + BAD_LINE + "\n").encode())
    os.symlink("..", tmp_path / "pkg" / "sub" / "up")  # pkg/sub/up -> pkg
    os.symlink(".", tmp_path / "pkg" / "self")
    code, out, err = tc(capsys, "check", "--no-cache", str(tmp_path / "pkg"))
    assert (code, err) == (1, "")
    assert out.startswith(f"{tmp_path / 'pkg' / 'sub' / 'm.py'}:3:5: {CHECK_201}")
    assert out.count("TNS201") == 1


def test_file_symlink_loop_and_dangling_link_are_reported(tmp_path, capsys):
    os.symlink("loop.py", tmp_path / "loop.py")
    os.symlink("nowhere.py", tmp_path / "dangling.py")
    code, _, err = tc(capsys, "check", "--no-cache", str(tmp_path))
    assert code == 2
    assert f"error: {tmp_path / 'loop.py'}: cannot read: Too many levels of symbolic links\n" in err
    assert f"error: {tmp_path / 'dangling.py'}: cannot read: No such file or directory\n" in err


def test_fix_writes_through_a_symlink(tmp_path, capsys):
    (tmp_path / "real").mkdir()
    target = write(tmp_path / "real" / "m.py", (HEAD + BAD_LINE + "\n").encode())
    os.chmod(target, 0o640)
    link = tmp_path / "link.py"
    os.symlink("real/m.py", link)
    assert tc(capsys, "fix", str(link))[:2] == (0, "Fixed 1 problem.\n")
    assert os.path.islink(link) and os.readlink(link) == "real/m.py"  # still a link
    assert target.read_text() == HEAD + GOOD_LINE + "\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_fifo_in_a_tree_is_skipped_not_waited_for(tmp_path):
    write(tmp_path / "m.py", (HEAD + BAD_LINE + "\n").encode())
    os.mkfifo(tmp_path / "pipe.py")
    files, missing = cli.discover([str(tmp_path)], [])
    assert files == [str(tmp_path / "m.py")] and missing == []
    proc = subprocess.run([tool("tensorcopy"), "check", "--no-cache", str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "TNS201" in proc.stdout


def test_fix_refuses_to_replace_a_non_regular_file(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    with pytest.raises(OSError, match="not a regular file"):
        cli.write_atomic(str(tmp_path / "pipe.py"), b"x = 1\n")
    assert stat.S_ISFIFO(os.stat(tmp_path / "pipe.py").st_mode)


def test_file_deleted_between_listing_and_reading(tmp_path, capsys, monkeypatch):
    p = write(tmp_path / "gone.py", (HEAD + BAD_LINE + "\n").encode())
    files, _ = cli.discover([str(tmp_path)], [])
    os.unlink(p)
    report = cli.process(files[0], files[0], cli.Job("fix", tuple(r.code for r in all_rules()), cli.Options()))
    assert report.error == "cannot read: No such file or directory"
    # through the whole command: the listing still has it, the read does not find it
    real_discover = cli.discover
    monkeypatch.setattr(cli, "discover", lambda paths, *a, **k: ([str(p)], []) if paths == [str(tmp_path)]
                        else real_discover(paths, *a, **k))
    for cmd in (["check", "--no-cache"], ["fix"]):
        code, _, err = tc(capsys, *cmd, str(tmp_path))
        assert (code, err) == (2, f"error: {p}: cannot read: No such file or directory\n")


def test_file_made_unreadable_between_listing_and_reading(tmp_path, capsys, monkeypatch):
    # Tests run as root, which reads a mode-000 file anyway: simulate the failing read.
    p = write(tmp_path / "locked.py", (HEAD + BAD_LINE + "\n").encode())
    ok = write(tmp_path / "ok.py", (HEAD + BAD_LINE + "\n").encode())
    real_read = cli._read

    def read(path):
        if path == str(p):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_read(path)

    monkeypatch.setattr(cli, "_read", read)
    code, out, err = tc(capsys, "fix", str(p), str(ok))
    assert (code, err) == (2, f"error: {p}: cannot read: Permission denied\n")
    assert p.read_text() == HEAD + BAD_LINE + "\n" and ok.read_text() == HEAD + GOOD_LINE + "\n"


def test_read_only_file_given_to_fix(tmp_path, capsys):
    data = (HEAD + BAD_LINE + "\n").encode()
    p = write(tmp_path / "ro.py", data)
    os.chmod(p, 0o444)
    code, out, err = tc(capsys, "fix", str(p))
    assert code == 2
    assert err == f"error: {p}: cannot write: file is read-only\n"
    assert out.startswith(f"{p}:3:5: {MSG_201}")  # reported, since it was not fixed
    assert p.read_bytes() == data and stat.S_IMODE(os.stat(p).st_mode) == 0o444
    assert os.listdir(tmp_path) == ["ro.py"]
    code, out, _ = tc(capsys, "fix", "--diff", str(p))  # --diff writes nothing: fine
    assert code == 1 and "+" + GOOD_LINE in out


def test_diff_hunks_count_python_lines_not_form_feeds(tmp_path, capsys):
    # str.splitlines also ends a line at \f, \x1c and \u2028: the hunk headers were off.
    src = ("import torch\r\n# page\x0cbreak \u2028 sep \x1c\r\nx = torch.ones(2, requires_grad=True)\r\n"
           + BAD_LINE + "\r\n")
    p = write(tmp_path / "m.py", src.encode())
    code, out, _ = tc(capsys, "fix", "--diff", str(p))
    assert code == 1
    name = str(p).lstrip("/")
    assert out == (f"--- a/{name}\n+++ b/{name}\n@@ -1,4 +1,4 @@\n import torch\r\n # page\x0cbreak \u2028 sep \x1c\r\n"
                   " x = torch.ones(2, requires_grad=True)\r\n-" + BAD_LINE + "\r\n+" + GOOD_LINE + "\r\n")
    assert p.read_bytes() == src.encode()


def test_fix_keeps_the_owner(tmp_path, capsys):
    if os.getuid() != 0:
        pytest.skip("only root can give a file to another user")
    p, _ = _one_bad_file(tmp_path)
    os.chown(p, 4321, 4322)
    assert tc(capsys, "fix", str(p))[0] == 0
    st = os.stat(p)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o640)
    assert p.read_text() == HEAD + GOOD_LINE + "\n"


# ============================================================================ safe writes


def _one_bad_file(tmp_path, mode=0o640):
    data = (HEAD + BAD_LINE + "\n").encode()
    p = write(tmp_path / "m.py", data)
    os.chmod(p, mode)
    return p, data


@pytest.mark.parametrize("mode", [0o640, 0o755, 0o2775, 0o600])
def test_fix_writes_a_temporary_in_the_same_directory_and_renames_it(tmp_path, capsys, monkeypatch, mode):
    p, _ = _one_bad_file(tmp_path, mode)
    ino = os.stat(p).st_ino
    renames = []
    real_replace = os.replace

    def replace(src, dst):
        renames.append((src, dst))
        assert stat.S_IMODE(os.stat(src).st_mode) == mode  # the mode is set before the rename
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert tc(capsys, "fix", str(p))[0] == 0
    [(src, dst)] = renames
    assert os.path.dirname(src) == str(tmp_path) and os.path.basename(src).startswith(".tensorcopy-")
    assert dst == str(p)
    assert stat.S_IMODE(os.stat(p).st_mode) == mode and os.stat(p).st_ino != ino
    assert p.read_text() == HEAD + GOOD_LINE + "\n" and os.listdir(tmp_path) == ["m.py"]


@pytest.mark.parametrize("where,exc,message", [
    ("fsync", OSError(errno.ENOSPC, "No space left on device"), "No space left on device"),
    ("replace", OSError(errno.EXDEV, "Invalid cross-device link"), "Invalid cross-device link"),
    ("chmod", PermissionError(errno.EPERM, "Operation not permitted"), "Operation not permitted"),
    ("mkstemp", PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
])
def test_a_failed_write_leaves_the_original_and_no_temporary(tmp_path, capsys, monkeypatch, where, exc, message):
    p, data = _one_bad_file(tmp_path)

    def boom(*a, **k):
        raise exc

    monkeypatch.setattr(cli.tempfile if where == "mkstemp" else os, where, boom)
    code, out, err = tc(capsys, "fix", str(p))
    assert (code, err) == (2, f"error: {p}: cannot write: {message}\n")
    assert out.startswith(f"{p}:3:5: {MSG_201}")
    assert p.read_bytes() == data and os.listdir(tmp_path) == ["m.py"]


def test_interrupt_during_the_write_leaves_the_original(tmp_path, capsys, monkeypatch):
    p, data = _one_bad_file(tmp_path)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    assert cli.main(["fix", str(p)]) == 130
    assert p.read_bytes() == data and os.listdir(tmp_path) == ["m.py"]


def test_concurrent_fix_runs_never_leave_a_truncated_file(tmp_path):
    tree = tmp_path / "tree"
    sources = {}
    for i in range(200):
        d = tree / f"pkg{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        filler = "".join(f"v{j} = {j} * 2  # é{'x' * (i % 7)}\n" for j in range(3 + i % 12))
        src = HEAD + filler + "".join(f"y{k} = x.clone().detach()\n" for k in range(1 + i % 3)) + filler
        sources[str(d / f"m{i}.py")] = src
    expected = {path: fix_text(src).text for path, src in sources.items()}
    assert all(expected[p] != s for p, s in sources.items())
    for _round in range(3):
        for path, src in sources.items():
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(src)
        procs = [subprocess.Popen([tool("tensorcopy"), "fix", "-j", "2", str(tree)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [p.communicate(timeout=600) + (p.returncode,) for p in procs]
        for out, err, code in results:
            assert code == 0 and err == "", (code, err[-2000:])
        for path, want in expected.items():
            with open(path, encoding="utf-8", newline="") as f:
                got = f.read()
            assert got == want, path
            ast.parse(got)
        leftovers = [n for _, _, names in os.walk(tree) for n in names if not n.endswith(".py")]
        assert leftovers == []


# ============================================================================ engine guards


@pytest.fixture
def broken_rules():
    """Two deliberately broken rules, registered for one test only."""

    class BreaksTheCode(Rule):  # its fix deletes a closing parenthesis
        code = "TNS998"
        fix_safety = "safe"
        prefilter = (".clone(",)

        def visit_Call(self, node, ctx):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
                _, end = ctx.span(node)
                ctx.report(self, node, Fix("break", "safe", (Edit(end - 1, end, "", expect=")"),)), message="broken")

    class OverlappingEdits(Rule):  # its two edits overlap
        code = "TNS997"
        fix_safety = "safe"
        prefilter = (".clone(",)

        def visit_Call(self, node, ctx):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "detach":
                s, e = ctx.span(node)
                ctx.report(self, node, Fix("overlap", "safe", (Edit(s, e, "a"), Edit(s + 1, e, "b"))), message="bad")

    try:
        yield BreaksTheCode, OverlappingEdits
    finally:
        for code in ("TNS997", "TNS998"):
            _REGISTRY.pop(code, None)


def test_a_fix_that_breaks_the_code_is_refused_and_named(tmp_path, broken_rules):
    src = HEAD + BAD_LINE + "\n"
    result = fix_text(src, [broken_rules[0]])
    assert result.text == src and result.applied == []
    assert result.error == ("a fix produced code that does not parse: TNS998 at line 3; no fix was applied to "
                            "this file (please report it)")
    p = write(tmp_path / "m.py", src.encode())
    report = cli.process(str(p), str(p), cli.Job("fix", ("TNS201", "TNS998"), cli.Options()))
    assert report.error == "cannot fix: " + result.error and report.fixed == 0
    assert p.read_text() == src


def test_a_fix_with_overlapping_edits_is_never_applied(broken_rules):
    src = HEAD + BAD_LINE + "\n"
    result = fix_text(src, [broken_rules[1]])
    assert result.text == src and result.applied == [] and result.error is None
    assert [v.code for v in result.remaining] == ["TNS997"]


def test_many_fixes_in_one_file_apply_in_linear_time():
    # apply_fixes compared every edit with every accepted one: 10,000 fixes took over a minute.
    src = HEAD + "".join(f"y{i} = x.clone().detach()\n" for i in range(4000))
    result = lint_text(src)
    assert len(result.violations) == 4000
    from flake8_tensorcopy.engine import apply_fixes

    new, applied, skipped = apply_fixes(src, result.violations)
    assert len(applied) == 4000 and skipped == [] and new == src.replace("x.clone().detach()", "x.detach().clone()")


def test_rebinding_a_name_still_forgets_its_attributes():
    # The analysis scans for `name.attr` keys only under names that ever had one (scanning every
    # key on every assignment made 50,000 assignments take a minute); the meaning is unchanged.
    base = "import torch\nclass M:\n    pass\nm = M()\nm.w = torch.ones(3, requires_grad=True)\n"
    use = "y = m.w.clone().detach()\n"

    def knows_grad(code):  # TNS201 names the graph cost only where `m.w` is known to require grad
        (v,) = lint_text(code).violations
        return "autograd graph" in v.message

    assert knows_grad(base + use)
    assert not knows_grad(base + "m = M()\n" + use)
    assert knows_grad(base + "n = M()\n" + use)
    many = "".join(f"v{i} = {i}\n" for i in range(20000))
    assert knows_grad(base + many + use)


# ============================================================================ rule bugs found by fuzzing


@pytest.mark.parametrize("kw,call", [("device=(d := 'cpu')", "to(device=(d := 'cpu'))"),
                                     ("requires_grad=(yield)", "requires_grad_((yield))")])
def test_tns202_keyword_values_keep_their_parentheses(kw, call):
    src = "import torch\n\ndef f():\n    x = torch.ones(3)\n    return torch.tensor(x, " + kw + ")\n"
    result = fix_text(src)
    assert result.error is None
    assert result.text == src.replace(f"torch.tensor(x, {kw})", f"x.detach().clone().{call}")


@pytest.mark.parametrize("src,fixed", [
    ("import torch\nw = torch.ones(3, requires_grad=True)\nif True:\n\x0c    w[0] = 1\n",
     "import torch\nw = torch.ones(3, requires_grad=True)\nif True:\n\x0c    with torch.no_grad():\n"
     "        w[0] = 1\n"),
    ("import torch\nw = torch.ones(3, requires_grad=True)\n\x0cw[0] = 1\n",
     "import torch\nw = torch.ones(3, requires_grad=True)\n\x0cwith torch.no_grad():\n    w[0] = 1\n"),
], ids=["ff-in-block", "ff-at-top"])
def test_tns401_fix_with_form_feed_indentation(src, fixed):
    # The form feed stays where it was, before the `with`; the body's indentation is spaces.
    result = fix_text(src, unsafe=True)
    assert result.error is None and result.text == fixed
