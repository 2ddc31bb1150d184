"""The flags a ruff user reaches for (issue 18), with ruff's names and exit statuses.

Messages are the rules' business: these tests look at codes, markers, streams and exit codes,
never at a message's words."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

import pytest

from conftest import ROOT, tc, tool
from flake8_tensorcopy import cli, links
from flake8_tensorcopy.rules.base import all_rules

HEAD = "import torch\nx = torch.ones(3, requires_grad=True)\n"
SAFE = HEAD + "y = x.clone().detach()\n"  # TNS201, a safe fix
CLEAN = HEAD + "y = x.detach().clone()\n"
# TNS401 (unsafe fix), TNS201 (safe fix), TNS403 (no fix).
MIXED = ("import torch\nw = torch.zeros(3, requires_grad=True)\nw.add_(1)\ny = w.clone().detach()\n"
         "v = w ** 2\nw.data.zero_()\nv.sum().backward()\n")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("NO_COLOR", "FORCE_COLOR", "TENSORCOPY_DOCS_URL", "COLUMNS"):
        monkeypatch.delenv(var, raising=False)


def codes(out: str) -> list:
    return [m.group(1) for m in re.finditer(r"^\S+:\d+:\d+: (TNS\d{3})\b", out, re.M)]


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- exit statuses


@pytest.mark.parametrize("args, content, expected", [
    # ruff: 0 nothing found (or everything fixed), 1 findings remain, 2 an error.
    (["check"], CLEAN, 0),
    (["check"], SAFE, 1),
    (["check", "--exit-zero"], SAFE, 0),
    (["check", "--exit-zero"], None, 2),  # an error is never turned into success
    (["check", "--fix"], SAFE, 0),
    (["check", "--fix", "--exit-non-zero-on-fix"], SAFE, 1),
    (["check", "--exit-non-zero-on-fix"], CLEAN, 0),
    (["fix"], SAFE, 0),
    (["fix", "--exit-non-zero-on-fix"], SAFE, 1),
    (["fix", "--exit-non-zero-on-fix"], CLEAN, 0),
    (["fix", "--exit-non-zero-on-fix", "--exit-zero"], SAFE, 0),
    (["fix"], MIXED, 1),  # TNS401 needs --unsafe-fixes, TNS403 has no fix
    (["fix", "--exit-zero"], MIXED, 0),
    (["check", "--diff"], SAFE, 1),  # would fix something
    (["check", "--diff"], CLEAN, 0),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_exit_statuses_are_ruffs(tmp_path, capsys, args, content, expected):
    p = tmp_path / "m.py"
    if content is not None:
        p.write_text(content)
    assert tc(capsys, *args, "--no-cache", str(p))[0] == expected


def test_check_fix_is_fix(tmp_path, capsys):
    a, b = write(tmp_path / "a.py", MIXED), write(tmp_path / "b.py", MIXED)
    code_a, out_a, _ = tc(capsys, "check", "--fix", str(a))
    code_b, out_b, _ = tc(capsys, "fix", str(b))
    assert (code_a, out_a.replace("a.py", "b.py")) == (code_b, out_b)
    assert a.read_text() == b.read_text() != MIXED
    assert "w.detach().clone()" in a.read_text() and "w.add_(1)" in a.read_text()  # the unsafe fix is not applied
    assert tc(capsys, "check", "--fix", "--unsafe-fixes", str(a))[0] == 1  # TNS403 remains
    assert "no_grad" in a.read_text()
    # --no-fix (after --fix, as a configuration wrapper would add it) only reports.
    c = write(tmp_path / "c.py", SAFE)
    assert tc(capsys, "check", "--fix", "--no-fix", "--no-cache", str(c))[0] == 1 and c.read_text() == SAFE


# ----------------------------------------------------------------------------- what is printed


def test_fixable_findings_carry_rufs_marker(tmp_path, capsys):
    p = write(tmp_path / "m.py", MIXED)
    _, out, _ = tc(capsys, "check", "--no-cache", str(p))
    marked = dict(re.findall(r": (TNS\d{3}) (\[\*\] )?", out))
    assert marked == {"TNS401": "", "TNS201": "[*] ", "TNS403": ""}
    _, out, _ = tc(capsys, "check", "--no-cache", "--unsafe-fixes", str(p))
    assert dict(re.findall(r": (TNS\d{3}) (\[\*\] )?", out)) == {"TNS401": "[*] ", "TNS201": "[*] ", "TNS403": ""}
    # After fixing, what remains was not fixable: no marker (ruff's rule).
    _, out, _ = tc(capsys, "fix", str(p))
    assert "[*]" not in out and codes(out) == ["TNS401", "TNS403"]


def test_show_fixes_in_check_shows_each_fix_title(tmp_path, capsys):
    p = write(tmp_path / "m.py", MIXED)
    titles = {c.code: c.fix_title for c in all_rules()}
    _, out, _ = tc(capsys, "check", "--no-cache", "--show-fixes", str(p))
    lines = out.splitlines()
    helps = {codes(lines[i])[0]: lines[i + 1] for i in range(len(lines) - 1) if codes(lines[i])}
    assert helps["TNS201"] == f"    help: {titles['TNS201']}"
    assert helps["TNS401"].startswith(f"    help: {titles['TNS401']}") and "--unsafe-fixes" in helps["TNS401"]
    assert not helps["TNS403"].startswith("    help:")  # no fix, no help line
    assert "help:" not in tc(capsys, "check", "--no-cache", str(p))[1]


def test_show_fixes_in_fix_lists_what_was_fixed_per_file(tmp_path, capsys):
    write(tmp_path / "a.py", SAFE + "z = x.clone().detach()\n")
    write(tmp_path / "b.py", MIXED)
    title = next(c.fix_title for c in all_rules() if c.code == "TNS201")
    code, out, err = tc(capsys, "fix", "--show-fixes", "a.py", "b.py")
    assert code == 1 and err == ""
    listing = out[out.index("Fixed 3 problems:"):]
    assert listing.splitlines()[:5] == [
        "Fixed 3 problems:",
        "- a.py:",
        f"    2 \u00d7 TNS201 (clone-before-detach): {title}",
        "- b.py:",
        f"    1 \u00d7 TNS201 (clone-before-detach): {title}",
    ]
    assert out.splitlines()[-1].startswith("Fixed 3 problems; 2 remaining")
    # --diff: what would be fixed, on stderr (stdout is the patch).
    write(tmp_path / "c.py", SAFE)
    code, out, err = tc(capsys, "fix", "--diff", "--show-fixes", "c.py")
    assert code == 1 and out.startswith("--- a/c.py") and "Would fix 1 problem:\n- c.py:\n" in err


def test_show_fixes_lists_notebook_fixes_too(tmp_path, capsys):
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": [line + "\n" for line in SAFE.splitlines()]}],
          "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    code, out, _ = tc(capsys, "fix", "--show-fixes", "nb.ipynb")
    assert code == 0 and "- nb.ipynb:\n    1 \u00d7 TNS201 (clone-before-detach)" in out


@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_quiet_prints_findings_and_nothing_else(tmp_path, capsys, flag):
    write(tmp_path / "bad.py", SAFE)
    write(tmp_path / "good.py", CLEAN)
    code, out, err = tc(capsys, "check", flag, "--no-cache", "bad.py")
    assert (code, err) == (1, "") and codes(out) == ["TNS201"] and len(out.splitlines()) == 1
    assert tc(capsys, "check", flag, "--no-cache", "good.py") == (0, "", "")
    (tmp_path / "empty").mkdir()
    assert tc(capsys, "check", flag, "empty") == (0, "", "")  # no "No Python files found" warning
    # Errors still say what went wrong (and exit with 2).
    code, out, err = tc(capsys, "check", flag, "missing.py")
    assert (code, out) == (2, "") and err == "error: missing.py: no such file or directory\n"
    # fix: no "Fixed N problems." line.
    assert tc(capsys, "fix", flag, "bad.py") == (0, "", "")


@pytest.mark.parametrize("flag", ["-s", "--silent"])
def test_silent_prints_nothing_but_the_exit_status_tells(tmp_path, capsys, flag):
    write(tmp_path / "bad.py", SAFE)
    assert tc(capsys, "check", flag, "--no-cache", "bad.py") == (1, "", "")
    assert tc(capsys, "check", flag, "--no-cache", "bad.py", "missing.py") == (2, "", "")
    assert tc(capsys, "check", flag, "--no-cache", "--output-format", "json", "bad.py") == (1, "", "")
    # Data is not logging: `--diff` still prints the patch, `fix -` the fixed source.
    code, out, err = tc(capsys, "fix", flag, "--diff", "bad.py")
    assert code == 1 and out.startswith("--- a/bad.py") and err == ""
    proc = tc(capsys, "fix", flag, "-", input=SAFE)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, CLEAN, "")


def test_quiet_and_silent_go_before_the_command_too(tmp_path, capsys):
    write(tmp_path / "bad.py", SAFE)
    proc = tc(capsys, "-q", "check", "--no-cache", "bad.py", cwd=tmp_path)
    assert proc.returncode == 1 and codes(proc.stdout) == ["TNS201"] and "Found" not in proc.stdout
    proc = tc(capsys, "-s", "bad.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "")


# ----------------------------------------------------------------------------- colour


def _on_a_terminal(args, cwd, env_extra):
    """Run tensorcopy with stdout on a pseudo-terminal; what it wrote there."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    env.update(env_extra)
    proc = subprocess.Popen([tool("tensorcopy"), *args], cwd=cwd, env=env, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode()


@pytest.mark.parametrize("env, coloured", [({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False),
                                           ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False)],
                         ids=["terminal", "NO_COLOR", "dumb", "NO_COLOR-wins"])
def test_colour_on_a_terminal(tmp_path, env, coloured):
    write(tmp_path / "bad.py", SAFE)
    code, out = _on_a_terminal(["check", "--no-cache", "bad.py"], tmp_path, env)
    assert code == 1
    assert bool(ANSI.search(out)) == coloured, repr(out)
    assert codes(ANSI.sub("", out).replace("\r\n", "\n")) == ["TNS201"]
    if coloured:
        assert "\x1b[1;31mTNS201\x1b[0m" in out and "[\x1b[36m*\x1b[0m]" in out


def test_force_color_colours_a_pipe_and_machine_formats_never(tmp_path, capsys, monkeypatch):
    write(tmp_path / "bad.py", SAFE)
    plain = tc(capsys, "check", "--no-cache", "bad.py", cwd=tmp_path)
    assert not ANSI.search(plain.stdout)
    monkeypatch.setenv("FORCE_COLOR", "1")
    forced = tc(capsys, "check", "--no-cache", "bad.py", cwd=tmp_path)
    assert ANSI.search(forced.stdout) and ANSI.sub("", forced.stdout) == plain.stdout
    for fmt in ("json", "sarif", "github", "json-lines"):
        proc = tc(capsys, "check", "--no-cache", "--output-format", fmt, "bad.py", cwd=tmp_path)
        assert proc.returncode == 1 and not ANSI.search(proc.stdout), fmt


# ----------------------------------------------------------------------------- exclusions


def _tree(tmp_path):
    for rel in ("src/m.py", "build/gen.py", "legacy/old.py", "src/generated/g.py"):
        write(tmp_path / rel, SAFE)


def files(capsys, *args):
    code, out, err = tc(capsys, "check", "--show-files", *args)
    assert code == 0, err
    return out.split()


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tmp_path, capsys):
    _tree(tmp_path)
    assert files(capsys, ".") == ["legacy/old.py", "src/generated/g.py", "src/m.py"]  # build/ is a default
    assert files(capsys, "--extend-exclude", "legacy,generated", ".") == ["src/m.py"]
    assert files(capsys, "--exclude", "legacy", ".") == ["build/gen.py", "src/generated/g.py", "src/m.py"]
    assert files(capsys, "--exclude", "legacy", "--extend-exclude", "build", ".") == [
        "src/generated/g.py", "src/m.py"]


def test_configuration_exclude_and_extend_exclude(tmp_path, capsys):
    _tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy]\nexclude = ["legacy"]\n')
    assert files(capsys, ".") == ["build/gen.py", "src/generated/g.py", "src/m.py"]
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy]\nextend-exclude = ["src/generated"]\n')
    assert files(capsys, ".") == ["legacy/old.py", "src/m.py"]
    # --exclude replaces the configuration's `exclude`; its `extend-exclude` still applies.
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy]\nexclude = ["legacy"]\n'
                                             'extend-exclude = ["src/generated"]\n')
    assert files(capsys, "--exclude", "build", ".") == ["legacy/old.py", "src/m.py"]
    code, _, err = tc(capsys, "check", "--show-files", "--config", str(tmp_path / "nope.toml"), ".")
    assert code == 2


def test_force_exclude_applies_exclusions_to_named_files(tmp_path, capsys):
    _tree(tmp_path)
    named = ["build/gen.py", "legacy/old.py", "src/m.py", "src/generated/g.py"]
    # As ruff: a file named on the command line is checked, excluded or not...
    assert files(capsys, "--extend-exclude", "legacy", *named) == sorted(named)
    # ...unless --force-exclude (what pre-commit hooks pass: they name every file).
    assert files(capsys, "--force-exclude", "--extend-exclude", "legacy", *named) == [
        "src/generated/g.py", "src/m.py"]
    assert files(capsys, "--force-exclude", "build") == []  # a named directory, too
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy]\nextend-exclude = ["generated"]\n'
                                             "force-exclude = true\n")
    assert files(capsys, *named) == ["legacy/old.py", "src/m.py"]
    assert files(capsys, "--no-force-exclude", *named) == sorted(named)


def test_force_exclude_with_stdin(tmp_path, capsys):
    proc = tc(capsys, "check", "--force-exclude", "--extend-exclude", "legacy", "--stdin-filename", "legacy/x.py",
              "-", input=SAFE, cwd=tmp_path)
    # As ruff: nothing is checked, and nothing is wrong.
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All checks passed!\n", "")
    # `fix -` gives an excluded file back unchanged (an editor replaces the buffer with it).
    proc = tc(capsys, "fix", "--force-exclude", "--extend-exclude", "legacy", "--stdin-filename", "legacy/x.py",
              "-", input=SAFE, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, SAFE)
    proc = tc(capsys, "fix", "--force-exclude", "--stdin-filename", "src/x.py", "-", input=SAFE, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, CLEAN)


def test_pre_commit_hooks_pass_force_exclude(root):
    with open(os.path.join(root, ".pre-commit-hooks.yaml"), encoding="utf-8") as f:
        entries = re.findall(r"^\s*entry: (.*)$", f.read(), re.M)
    assert entries == ["tensorcopy check --force-exclude", "tensorcopy fix --force-exclude"]


# ----------------------------------------------------------------------------- per-file-ignores


def test_per_file_ignores_on_the_command_line(tmp_path, capsys):
    write(tmp_path / "tests" / "t.py", MIXED)
    write(tmp_path / "src" / "m.py", MIXED)

    def found(*args):
        return sorted(f"{line.split(':')[0]}:{c}" for line in tc(capsys, "check", "--no-cache", *args, ".")[1]
                      .splitlines() for c in codes(line))

    everything = found()
    assert len(everything) == 6
    assert found("--per-file-ignores", "tests/*:TNS2") == [f for f in everything if f != "tests/t.py:TNS201"]
    # flake8's syntax: several mappings, several globs and codes, spaces or commas.
    assert found("--per-file-ignores", "tests/*,src/*:TNS201,TNS401 src/m.py: TNS403") == [
        "tests/t.py:TNS403"]
    # --per-file-ignores replaces the configuration's table; --extend-per-file-ignores adds to it.
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy.per-file-ignores]\n"src/*" = ["TNS4"]\n')
    assert found() == [f for f in everything if not f.startswith("src/m.py:TNS4")]
    assert found("--per-file-ignores", "tests/*:TNS2") == [f for f in everything if f != "tests/t.py:TNS201"]
    assert found("--extend-per-file-ignores", "tests/*:TNS2") == [
        f for f in everything if not f.startswith("src/m.py:TNS4") and f != "tests/t.py:TNS201"]


@pytest.mark.parametrize("value, why", [
    ("tests/*", "is not GLOB:CODES"),
    (":TNS2", "is not GLOB:CODES"),
    ("tests/*:", "is not GLOB:CODES"),
    ("tests/*:E501", "'E501' is not a rule code or prefix"),
])
def test_per_file_ignores_mistakes_are_usage_errors(tmp_path, capsys, value, why):
    write(tmp_path / "m.py", SAFE)
    code, out, err = tc(capsys, "check", "--no-cache", "--per-file-ignores", value, "m.py")
    assert (code, out) == (2, "") and err.startswith("error: --per-file-ignores: ") and why in err


# ----------------------------------------------------------------------------- settings


def test_show_settings(tmp_path, capsys):
    write(tmp_path / "m.py", SAFE)
    (tmp_path / "pyproject.toml").write_text('[tool.tensorcopy]\nignore = ["TNS4"]\nstrict = true\n'
                                             'extend-exclude = ["legacy"]\n')
    code, out, err = tc(capsys, "check", "--show-settings", "--no-strict", "--per-file-ignores", "t/*:TNS2", "m.py")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Resolved settings for: m.py"
    assert lines[1] == f"Settings path: {tmp_path / 'pyproject.toml'}"
    settings = {k.strip(): json.loads(v) for k, v in (line.split(" = ", 1) for line in lines[2:])}
    assert "TNS401" not in settings["rules"] and "TNS201" in settings["rules"]
    assert settings["strict"] is False  # the command line over the file
    assert settings["exclude-relative-to-settings"] == ["legacy"] and ".git" in settings["exclude"]
    assert settings["per-file-ignores"] == [{"glob": "t/*", "codes": ["TNS2"], "relative-to": str(tmp_path)}]
    assert settings["cache-dir"] == str(tmp_path / ".tensorcopy_cache")
    code, out, _ = tc(capsys, "check", "--show-settings", "--output-format", "json", "--isolated", "m.py")
    data = json.loads(out)
    assert code == 0 and data["settings-path"] is None and data["strict"] is False and "TNS401" in data["rules"]
    assert not (tmp_path / ".tensorcopy_cache").exists()  # nothing was checked
    # fix keeps the summaries of project modules there too; --no-cache: no cache at all
    for argv, expected in ((("fix",), str(tmp_path / ".tensorcopy_cache")), (("fix", "--no-cache"), None)):
        code, out, _ = tc(capsys, *argv, "--show-settings", "--output-format", "json", "m.py")
        assert code == 0 and json.loads(out)["cache-dir"] == expected, argv


# ----------------------------------------------------------------------------- rules and explain


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_rules_is_an_aligned_table_that_wraps(capsys, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    code, out, _ = tc(capsys, "rules")
    lines = out.splitlines()
    # Narrow: each summary on its own lines under its rule.
    wide = width >= 84
    assert code == 0 and lines[0].split() == ["Code", "Name", "Fix"] + (["What", "it", "finds"] if wide else [])
    assert all(len(line) <= width for line in lines), max(lines, key=len)
    rows = [line for line in lines[1:] if re.match(r"TNS\d{3} ", line)]
    assert [r.split()[0] for r in rows] == [c.code for c in all_rules()]
    name_col = {r.index(r.split()[1]) for r in rows}
    fix_col = {r.index(r.split()[2], r.index(r.split()[1]) + len(r.split()[1])) for r in rows}
    assert len(name_col) == 1 and len(fix_col) == 1  # aligned
    # Nothing is cut: each rule's summary is there in full, however it was wrapped.
    from flake8_tensorcopy.docs import rule_summary

    text = " ".join(out.split())
    for c in all_rules():
        assert " ".join(rule_summary(c).split()) in text, c.code


def test_rules_and_explain_as_json(capsys):
    code, out, _ = tc(capsys, "rules", "--output-format", "json")
    data = json.loads(out)
    assert code == 0 and [r["code"] for r in data] == [c.code for c in all_rules()]
    for r, c in zip(data, all_rules()):
        assert set(r) == {"code", "name", "summary", "message", "fix", "url", "explanation"}
        assert r["name"] == c.name and r["url"] == links.rule_url(c.code, c.name)
        assert r["fix"] == (None if c.fix_safety is None else {"title": c.fix_title, "safety": c.fix_safety})
        assert "## What it does" in r["explanation"]
    code, out, _ = tc(capsys, "explain", "clone-before-detach", "--output-format", "json")
    assert code == 0 and json.loads(out) == next(r for r in data if r["code"] == "TNS201")


@pytest.mark.parametrize("word", ["TNS201", "tns201", "clone-before-detach", "Clone_Before_Detach"])
def test_explain_by_code_or_name(capsys, word):
    code, out, _ = tc(capsys, "explain", word)
    assert code == 0 and out.startswith("# TNS201 (clone-before-detach)")
    assert out.rstrip().endswith(f"Documentation: {links.rule_url('TNS201', 'clone-before-detach')}")


def test_explain_unknown_suggests_a_name(capsys):
    code, out, err = tc(capsys, "explain", "clone-before-detatch")
    assert (code, out) == (2, "")
    assert err == ("error: 'clone-before-detatch' is not a rule code or name (did you mean 'clone-before-detach'?); "
                   "`tensorcopy rules` lists them\n")


# ----------------------------------------------------------------------------- documentation links


def _github_anchors(markdown: str) -> set:
    """The anchors GitHub gives the headings of a Markdown file."""
    anchors = set()
    for title in re.findall(r"^#+ (.+?)\s*$", markdown, re.M):
        anchors.add(re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-"))
    return anchors


def test_every_rule_url_points_at_its_heading_in_docs_rules_md(root):
    with open(os.path.join(root, "docs", "rules.md"), encoding="utf-8") as f:
        anchors = _github_anchors(f.read())
    for c in all_rules():
        url = links.rule_url(c.code, c.name)
        assert url.startswith(links.DOCS_URL + "#")
        assert url.split("#", 1)[1] in anchors, url


def test_links_in_json_sarif_and_their_base_from_the_environment(tmp_path, capsys, monkeypatch):
    write(tmp_path / "m.py", SAFE)
    _, out, _ = tc(capsys, "check", "--no-cache", "--output-format", "json", "m.py")
    assert json.loads(out)[0]["url"] == links.rule_url("TNS201", "clone-before-detach")
    monkeypatch.setenv("TENSORCOPY_DOCS_URL", "https://docs.example.org/tensorcopy/rules.html")
    _, out, _ = tc(capsys, "check", "--no-cache", "--output-format", "sarif", "m.py")
    driver = json.loads(out)["runs"][0]["tool"]["driver"]
    by_id = {r["id"]: r for r in driver["rules"]}
    assert by_id["TNS201"]["helpUri"] == "https://docs.example.org/tensorcopy/rules.html#tns201-clone-before-detach"
    assert all(ref.startswith("https://pytorch.org/") for ref in by_id["TNS201"]["properties"]["references"])


# ----------------------------------------------------------------------------- progress


def test_progress_on_a_long_run_is_drawn_and_erased(tmp_path, capsys, monkeypatch):
    for i in range(5):
        write(tmp_path / f"m{i}.py", SAFE)
    monkeypatch.setattr(cli, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(cli, "PROGRESS_EVERY_S", 0.0)
    code, out, err = tc(capsys, "check", "--no-cache", "--progress", ".")
    assert code == 1 and len(codes(out)) == 5
    assert "\r\x1b[2KChecking 1/5 files (20%)" in err and "Checking 5/5 files (100%)" in err
    assert err.endswith("\r\x1b[2K")  # erased before anything else is printed
    # Not on a terminal (here: captured), or --quiet, or a short run: nothing.
    assert tc(capsys, "check", "--no-cache", ".")[2] == ""
    assert tc(capsys, "check", "--no-cache", "--progress", "-q", ".")[2] == ""
    monkeypatch.setattr(cli, "PROGRESS_AFTER_S", 60.0)
    assert tc(capsys, "check", "--no-cache", "--progress", ".")[2] == ""


def test_progress_is_throttled():
    class Stream:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    now = [0.0]
    p = cli.Progress(1000, "Checking", Stream(), None)
    p.clock = lambda: now[0]
    p.start = 0.0
    for done in range(1, 1001):
        now[0] = done * 0.001  # one file a millisecond: a second in all
        p(done)
    draws = p.stream.text.count("\r\x1b[2KChecking")
    assert 4 <= draws <= 7  # from 0.5 s on, every 0.1 s, and the last one
    assert p.stream.text.endswith("Checking 1000/1000 files (100%)")


# ----------------------------------------------------------------------------- a lean start


def _modules_after(code: str) -> set:
    """The modules `code` imports, beyond what the interpreter itself starts with (here, an
    editable install's import hook brings pathlib and urllib)."""
    def loaded(c):
        out = subprocess.run([sys.executable, "-c", c + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                             capture_output=True, text=True, cwd=ROOT, check=True).stdout
        return set(out.split())

    return loaded(code) - loaded("pass")


def test_the_cli_imports_only_what_a_one_file_check_needs():
    loaded = _modules_after("from flake8_tensorcopy import cli")
    for heavy in ("json", "tomllib", "tomli", "concurrent.futures", "multiprocessing", "tempfile", "difflib",
                  "hashlib", "typing", "pkgutil", "urllib.parse", "flake8_tensorcopy.notebook",
                  "flake8_tensorcopy.lsp", "libcst", "torch", "argparse"):
        assert heavy not in loaded, heavy
    assert "flake8_tensorcopy.engine" in loaded


def test_the_plugin_imports_the_engine_only_for_files_that_mention_torch():
    code = ("import ast\nfrom flake8_tensorcopy.plugin import TensorCopyChecker as C\n"
            "src = 'import numpy\\nx = numpy.ones(3).copy()\\n'\n"
            "assert list(C(ast.parse(src), src.splitlines(True), 'f.py').run()) == []\n")
    loaded = _modules_after(code)
    assert not any(m.startswith(("flake8_tensorcopy.engine", "flake8_tensorcopy.rules", "flake8_tensorcopy.analysis"))
                   for m in loaded), sorted(m for m in loaded if m.startswith("flake8_tensorcopy"))
    loaded = _modules_after(code.replace("numpy.ones(3).copy()", "numpy.ones(3).copy()  # torch"))
    assert "flake8_tensorcopy.engine" in loaded


def test_the_plugin_freezes_the_heap_once_it_has_the_engine_and_leaves_the_collector_as_it_was():
    # (In a child: freezing the test process's heap would change every later test's collections.)
    code = ("import ast, gc\nfrom flake8_tensorcopy.plugin import TensorCopyChecker as C\n"
            "src = 'import torch\\nw = torch.ones(3, requires_grad=True)\\nw.clone().detach()\\n'\n"
            "assert gc.get_freeze_count() == 0\n"
            "found = [m for _l, _c, m, _t in C(ast.parse(src), src.splitlines(True), 'f.py').run()]\n"
            "assert [m[:6] for m in found] == ['TNS201'], found\n"
            "assert gc.isenabled() and gc.get_freeze_count() > 10000, gc.get_freeze_count()\n"
            "gc.disable()\n"
            "import flake8_tensorcopy.plugin as P\n"
            "P._engine()\n"
            "assert not gc.isenabled()\n")  # a host that turned the collector off keeps it off
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)


def test_importing_the_engine_compiles_no_pattern_and_loads_no_noqa_or_selection():
    # The flake8 plugin imports the engine and the rules on the first file that mentions torch:
    # their patterns are compiled when a file first needs them, and the modules the plugin never
    # asks (flake8 applies `# noqa` and the selection itself) stay unloaded.
    code = ("import re, sys\ncompiled = []\noriginal = re._compile\n"
            "def spy(pattern, flags):\n"
            "    if sys._getframe(2).f_globals.get('__name__', '').startswith('flake8_tensorcopy'):\n"
            "        compiled.append(pattern)\n"
            "    return original(pattern, flags)\n"
            "re._compile = spy\n"
            "import flake8_tensorcopy.engine\n"
            # source.py's line ends: every file's line index uses them
            "assert set(compiled) == {r'\\r\\n|\\r|\\n', rb'\\r\\n|\\r|\\n'}, compiled\n")
    loaded = _modules_after(code)
    assert "flake8_tensorcopy.rules.tns5" in loaded
    for lazy in ("flake8_tensorcopy.noqa", "flake8_tensorcopy.selection"):
        assert lazy not in loaded, lazy
    from flake8_tensorcopy.source import LazyPattern

    pattern = LazyPattern(r"(\w+)\(", 0)
    assert pattern.search("x = f(y)").group(1) == "f" and pattern.pattern == r"(\w+)\("
    assert [m.group(1) for m in pattern.finditer("a(b(c))")] == ["a", "b"]


def test_the_gan_domain_is_imported_only_for_files_whose_names_may_give_roles():
    code = ("from flake8_tensorcopy.engine import lint_text\n"
            "lint_text('import torch\\nloss = model(x).sum()\\nloss.backward()\\nopt.step()\\n')\n")
    assert "flake8_tensorcopy.analysis.gan" not in _modules_after(code)
    assert "flake8_tensorcopy.analysis.gan" in _modules_after(code.replace("model(x)", "netD(netG(z))"))


def test_the_command_exits_with_mains_status_and_flushes_everything(tmp_path):
    write(tmp_path / "m.py", SAFE)
    big = "".join(f"v{i} = x.clone().detach()\n" for i in range(2000))
    write(tmp_path / "big.py", HEAD + big)
    proc = subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "check", "--no-cache", "."], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and len(codes(proc.stdout)) == 2001
    assert proc.stdout.endswith("Found 2001 problems (2001 fixable with `tensorcopy fix`).\n")


def test_force_exclude_from_outside_the_project(tmp_path, capsys, monkeypatch):
    project = tmp_path / "project"
    write(project / "legacy" / "old.py", SAFE)
    write(project / "src" / "m.py", SAFE)
    (project / "pyproject.toml").write_text('[tool.tensorcopy]\nextend-exclude = ["legacy"]\nforce-exclude = true\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    named = [str(project / "legacy" / "old.py"), str(project / "src" / "m.py")]
    assert files(capsys, *named) == [str(project / "src" / "m.py")]


def test_clean_removes_every_cache_below_the_current_directory(tmp_path, capsys, monkeypatch):
    # `ruff clean`: the caches at and below the current directory go, nothing else does; a
    # virtual environment is not searched.
    write(tmp_path / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(tmp_path / "pkg" / "m.py", HEAD)
    write(tmp_path / "sub" / "pyproject.toml", "[project]\nname = 'sub'\n")
    write(tmp_path / "sub" / "n.py", HEAD)
    write(tmp_path / "venv" / "pyvenv.cfg", "home = /usr\n")
    write(tmp_path / "venv" / ".tensorcopy_cache" / "keep", "")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "pkg"]) == 0 and cli.main(["check", "sub"]) == 0
    assert (tmp_path / ".tensorcopy_cache").is_dir() and (tmp_path / "sub" / ".tensorcopy_cache").is_dir()
    capsys.readouterr()
    assert cli.main(["clean"]) == 0
    err = capsys.readouterr().err
    assert "Removing cache at: .tensorcopy_cache" in err and f"sub{os.sep}.tensorcopy_cache" in err
    assert not (tmp_path / ".tensorcopy_cache").exists() and not (tmp_path / "sub" / ".tensorcopy_cache").exists()
    assert (tmp_path / "venv" / ".tensorcopy_cache" / "keep").exists() and (tmp_path / "pkg" / "m.py").exists()
    assert cli.main(["clean", "-q"]) == 0 and capsys.readouterr().err == ""


def test_cache_dir_in_the_configuration(tmp_path, capsys, monkeypatch):
    # ruff's `cache-dir`: relative to the pyproject.toml; --cache-dir over it; both caches go there.
    write(tmp_path / "pyproject.toml", "[tool.tensorcopy]\ncache-dir = 'build/tc-cache'\n")
    write(tmp_path / "m.py", SAFE)
    monkeypatch.chdir(tmp_path / ".." )
    code, out, _ = tc(capsys, "check", "--show-settings", "--output-format", "json", str(tmp_path / "m.py"))
    assert code == 0 and json.loads(out)["cache-dir"] == str(tmp_path / "build" / "tc-cache")
    assert tc(capsys, "check", str(tmp_path / "m.py")).returncode == 1
    assert list((tmp_path / "build" / "tc-cache").rglob("results-*/*.marshal")) and not (tmp_path / ".tensorcopy_cache").exists()
    code, out, _ = tc(capsys, "check", "--show-settings", "--output-format", "json", "--cache-dir",
                      str(tmp_path / "elsewhere"), str(tmp_path / "m.py"))
    assert json.loads(out)["cache-dir"] == str(tmp_path / "elsewhere")
    write(tmp_path / "pyproject.toml", "[tool.tensorcopy]\ncache-dir = 3\n")
    code, _, err = tc(capsys, "check", str(tmp_path / "m.py"))
    assert code == 2 and "cache-dir must be a path" in err


# --------------------------------------------------------------------------- the fast path


def _argparse_vars(argv):
    try:
        return vars(cli.build_parser(argv[0]).parse_args(argv))
    except SystemExit:
        return None


def _option_strings(command):
    parser = cli.build_parser(command)
    (sub,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return {s: a for a in sub.choices[command]._actions for s in a.option_strings}


@pytest.mark.parametrize("command", ["check", "fix"])
def test_the_fast_path_knows_every_option_argparse_does(command):
    options, _ = cli._fast_table(command)
    real = _option_strings(command)
    assert set(options) == set(real) - {"-h", "--help"}
    for name, (dest, _, _) in options.items():
        assert dest == real[name].dest, name


PLAIN = [
    ["m.py"], [], ["-"], ["--isolated", "a.py", "b.py"], ["a.py", "b.py", "--isolated"],
    ["--stdin-filename", "pkg/m.py", "-"], ["--stdin-filename=pkg/m.py", "--output-format", "json", "-"],
    ["--force-exclude", "--no-cache", "a.py"], ["-q", "-s", "-j", "2", "."], ["--jobs=0", "--quiet", "."],
    ["--select", "TNS1,TNS2", "--ignore=TNS201", "--extend-select", "TNS5", "x"],
    ["--per-file-ignores", "a/*:TNS1", "--per-file-ignores=b/*:TNS2", "--extend-per-file-ignores", "c:TNS3", "x"],
    ["--exclude", "gen", "--exclude", "build,dist", "--extend-exclude", "tmp", "x"],
    ["--strict", "--no-strict", "--numpy-fix", "force", "--generator-names", "G,Gen", "--discriminator-names=D", "x"],
    ["--unsafe-fixes", "--no-unsafe-fixes", "--diff", "--show-fixes", "--exit-non-zero-on-fix", "x"],
    ["--statistics", "--exit-zero", "--progress", "--no-progress", "--show-settings", "--show-files", "x"],
    ["--config", "pyproject.toml", "--project-root", "/r", "--cache-dir=/c", "--no-noqa", "--ignore-noqa", "x"],
    ["--output-format=sarif", "a=b.py", "c d.py"],
]


@pytest.mark.parametrize("command", ["check", "fix"])
@pytest.mark.parametrize("rest", PLAIN, ids=range(len(PLAIN)))
def test_the_fast_path_parses_the_plain_forms_as_argparse_does(command, rest):
    argv = [command, *rest]
    fast = cli._fast_args(argv)
    assert fast is not None, argv  # (the forms editors and hooks use do not need argparse)
    assert vars(fast) == _argparse_vars(argv)


def test_the_fast_path_gives_way_to_argparse_for_anything_else():
    # Every argument list made of these tokens: whatever the fast path accepts, argparse parses
    # to the same values; what argparse refuses, the fast path leaves to it (for its message).
    import random

    options, _ = cli._fast_table("check")
    values = ["x", "-", "-x", "TNS1,", "", "json", "force", "3", "-1", "a:TNS1", "=", "--isolated"]
    tokens = sorted(options) + values + ["--", "-h", "--help", "--iso", "-qs", "-j2", "-j=2", "--isolated=1",
                                         "--strict=yes", "--jobs=x", "--numpy-fix=never", "--no-isolated",
                                         "--select=", "--output-format=json", "--cache-dir=--x"]
    rng = random.Random(7)
    accepted = refused = 0
    for _ in range(4000):
        argv = ["check", *rng.choices(tokens, k=rng.randint(0, 6))]
        fast = cli._fast_args(argv)
        real = _argparse_vars(argv)
        if fast is not None:
            accepted += 1
            assert vars(fast) == real, argv
        elif real is None:
            refused += 1
    assert accepted > 300 and refused > 300  # (both kinds were tried)


def test_a_plain_check_does_not_import_argparse(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n")
    code = ("import sys\nfrom flake8_tensorcopy import cli\n"
            "assert cli.main(['check', '--no-cache', 'm.py']) == 0\n"
            "print(sorted(m for m in ('argparse', 'gettext', 'locale') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("[]"), out.stdout + out.stderr
