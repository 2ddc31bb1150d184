"""Linear cost: the analysis against the cost of reading and parsing the same code.

    .venv/bin/python -m benchmarks.linear [--repeat 3] [--skip-corpus] [--skip-flake8]

Prints, with the target each figure is held to (issue "One walker"):

1. A generated dense file (every function passes every pre-filter: a model call, a
   clone/detach, a generator and a discriminator call, backward, an optimizer step, a no-grad
   in-place update, NumPy conversions) at 500 and 4,000 functions: `tensorcopy check
   --no-cache --isolated FILE` wall time (a fresh process each run, median) against read +
   `ast.parse` of the file in a fresh process (median): target <= 3x; the 4,000/500 ratio of
   check times: target <= 9x (linear: 8x); peak RSS of the check process on the 4,000 file:
   target < 300 MB.
2. The transformers `models/` tree of the benchmark corpus (one process, one core): read +
   `ast.parse` of every file, then what `check` does per file (read, decode, pre-filter,
   parse, analyse), one file at a time and with whole-project analysis (the summaries of the
   project modules the files import, built once in the process): target <= 1.5x.
3. flake8 on the same tree with and without the plugin (`flake8 --isolated`, one process, from
   the package's directory so the plugin sees the project; without: a venv with flake8 only,
   made by `benchmarks.run`): target <= 1.10x.
   Cold: the plugin's summary cache (in the package's `.tensorcopy_cache/`) removed before
   each run; warm: kept, as a second run or an editor's next save finds it.
4. `tensorcopy check` of the same tree with the project, from a cold result cache and again
   with the tree unchanged: target: the warm run under 10% of the cold one.
5. `tensorcopy check models/gpt2/modeling_gpt2.py` with the project, as after an edit of that
   file (its result not cached) with the caches a run over the tree left (every other result,
   the summaries), against `python -c "import ast"`: the start-up target of issue 18, <= 3x,
   for a file whose check reads the summaries of modules of its project.  In the
   dev venv, and in the regular install `benchmarks.startup` makes (an editable install's
   import hook adds to every start in its venv, the floor's too, which flatters the ratio).

The package's bytecode is compiled first (`compileall`): where `PYTHONDONTWRITEBYTECODE` is set,
a module changed since its `.pyc` was written would be compiled again by every process timed.

Pure standard library (plus the package under test).  Timings are wall seconds on a shared
machine: compare medians, and rerun when the load average is high.
"""

from __future__ import annotations

import argparse
import marshal
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.corpus import REPO_ROOT, ensure_corpus

TEMPLATE = """def step{i}(x, G, D):
    y = model(x)
    a = y.clone().detach()
    fake = G(x)
    loss = D(fake).mean()
    loss.backward()
    opt.step()
    with torch.no_grad():
        model.weight.add_(1.0)
    return np.asarray(a), y.detach().cpu().numpy()
"""
HEAD = """import numpy as np
import torch
from torch import nn

model = nn.Linear(3, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

"""

_FLOOR = "import ast, sys, time; t = time.perf_counter(); ast.parse(open(sys.argv[1], 'rb').read()); " \
         "print(time.perf_counter() - t)"


def dense(n: int) -> str:
    return HEAD + "\n".join(TEMPLATE.format(i=i) for i in range(n))


def timed(argv: list[str], cwd=None, env=None) -> tuple[float, int]:
    """(wall seconds, peak RSS in KB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss


def median_of(argvs: list[str], repeat: int, cwd=None, env=None) -> tuple[float, int]:
    runs = [timed(argvs, cwd, env) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def floor_seconds(path: Path, repeat: int) -> float:
    """Read + ast.parse of one file in a fresh interpreter (the parse time, measured inside)."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _FLOOR, str(path)], check=True, capture_output=True)
        out.append(time.perf_counter() - start)
    return statistics.median(out)


def section_dense(repeat: int) -> None:
    print("1. dense generated file (fresh process per run, medians)")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (500, 4000):
            path = Path(tmp) / f"dense_{n}.py"
            path.write_text(dense(n))
            lines = path.read_text().count("\n")
            floor = floor_seconds(path, repeat)
            check, rss = median_of([sys.executable, "-m", "flake8_tensorcopy", "check", "--no-cache", "--isolated",
                                    str(path)], repeat)
            results[n] = check
            print(f"   {n:5d} functions, {lines:6d} lines: read+parse {floor:6.2f} s, check {check:6.2f} s "
                  f"= {check / floor:4.1f}x (target <= 3x), peak RSS {rss / 1024:5.0f} MB (target < 300 MB)")
    print(f"   4000/500 check time: {results[4000] / results[500]:4.1f}x (target <= 9x; linear: 8x)")


_TREE = r"""
import ast, sys, time, warnings
from pathlib import Path
from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.rules.base import Options
from flake8_tensorcopy.source import DecodeError, decode

files = sorted(Path(sys.argv[1]).rglob("*.py"))
warnings.simplefilter("ignore")
t = time.perf_counter()
for f in files:
    try:
        ast.parse(f.read_bytes())
    except (SyntaxError, ValueError):
        pass
floor = time.perf_counter() - t
rules, options = select_rules(), Options()
project = None
if sys.argv[2] != "-":  # whole-project analysis, as `tensorcopy check` does in one process
    from flake8_tensorcopy.analysis.project import Project
    project = Project(sys.argv[2], options, batch=True)
t = time.perf_counter()
found = 0
for f in files:
    try:
        if project is not None:
            project.begin()
        found += len(lint_text(decode(f.read_bytes()).text, rules, options, project=project,
                               path=str(f)).violations)
    except DecodeError:
        pass
check = time.perf_counter() - t
print(len(files), sum(f.read_bytes().count(b"\n") for f in files), floor, check, found)
"""


def section_tree(repeat: int) -> Path | None:
    infos = {i.name: i for i in ensure_corpus(verbose=False)}
    info = infos.get("transformers")
    if info is None:
        print("2. transformers models/: not in the corpus")
        return None
    tree = Path(info.path) / "transformers" / "models"
    for label, root in (("one file at a time", "-"), ("with the project", info.path)):
        runs = []
        for _ in range(repeat):
            out = subprocess.run([sys.executable, "-c", _TREE, str(tree), str(root)], check=True,
                                 capture_output=True, text=True, cwd=REPO_ROOT).stdout.split()
            runs.append(out)
        files, lines = int(runs[0][0]), int(runs[0][1])
        floor = statistics.median(float(r[2]) for r in runs)
        check = statistics.median(float(r[3]) for r in runs)
        if root == "-":
            print(f"2. transformers models/ ({files} files, {lines} lines; one process, medians of {repeat})")
        print(f"   {label}: read+parse {floor:6.2f} s, check {check:6.2f} s = {check / floor:4.2f}x "
              f"(target <= 1.5x); {runs[0][4]} findings")
    return tree


def section_flake8(tree: Path, repeat: int) -> None:
    from benchmarks.run import ensure_venv, venv_bin

    plain_venv, why = ensure_venv("flake8", ["flake8"])
    if plain_venv is None:
        print(f"3. flake8: no flake8-only venv ({why})")
        return
    files = sorted(str(p) for p in tree.rglob("*.py"))[::10]
    with_plugin = [str(Path(sys.executable).parent / "flake8"), "--isolated", "--jobs", "1", *files]
    without = [str(venv_bin(plain_venv, "flake8")), "--isolated", "--jobs", "1", *files]
    # From the package's directory, so that the plugin finds the project (the corpus packages
    # are unpacked distributions, without the files that mark a repository's root).
    cwd = tree.parent.parent
    # The plugin keeps the project's summary cache in <package>/.tensorcopy_cache: removed before
    # each cold run, kept for the warm ones (what a second flake8 run, or an editor's, gets).
    summaries = cwd / ".tensorcopy_cache"
    colds = []
    for _ in range(repeat):
        shutil.rmtree(summaries, ignore_errors=True)
        colds.append(timed(with_plugin, cwd)[0])
    a = statistics.median(colds)
    warm, _ = median_of(with_plugin, repeat, cwd)
    shutil.rmtree(summaries, ignore_errors=True)
    b, _ = median_of(without, repeat, cwd)
    print(f"3. flake8 on every 10th file of models/ ({len(files)} files, one process, medians of {repeat})")
    print(f"   without the plugin {b:6.2f} s, with {a:6.2f} s = {a / b:4.2f}x (target <= 1.10x); "
          f"with the summary cache warm {warm:6.2f} s = {warm / b:4.2f}x")


def section_warm(tree: Path, repeat: int) -> None:
    """`tensorcopy check` of the tree with the project, a cold result cache and then a warm one."""
    pkg = tree.parent.parent
    argv = [sys.executable, "-m", "flake8_tensorcopy", "check", "--isolated", "--project-root", str(pkg)]
    colds, warms = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            run = [*argv, "--cache-dir", cache, str(tree)]
            colds.append(timed(run)[0])
            warms.append(timed(run)[0])
    cold, warm = statistics.median(colds), statistics.median(warms)
    print(f"4. tensorcopy check of models/ with the project (all cores), medians of {repeat}")
    print(f"   cold cache {cold:6.2f} s, warm (unchanged tree) {warm:6.2f} s = {warm / cold:5.1%} of cold "
          f"(target < 10%)")


def section_one_file(tree: Path, repeat: int) -> None:
    """One file of the tree checked after an edit: its result is not in the cache, the summaries
    of the project modules it imports are.  With the dev venv's python (whose editable install
    adds a few milliseconds to every start, the floor's too), and with the regular install of
    the working tree that `benchmarks.startup` makes (the start-up target's own measure)."""
    pkg = tree.parent.parent
    target = tree / "gpt2" / "modeling_gpt2.py"
    if not target.exists():
        return
    pythons = [("dev venv", Path(sys.executable), None)]
    from benchmarks.run import dev_versions, ensure_venv, venv_bin
    from benchmarks.startup import child_env, install_checkout

    pins = [f"{d}=={v}" for d, v in dev_versions(Path(sys.executable), ["flake8"]).items() if v]
    venv, why = ensure_venv("startup-tensorcopy", pins or ["flake8"])
    why = why or install_checkout(venv)
    if why:
        print(f"5. (no regular install: {why})")
    else:
        pythons.append(("regular install", venv_bin(venv, "python"), child_env()))
    print(f"5. tensorcopy check {target.relative_to(pkg)} after an edit, medians of {repeat}")
    for label, python, env in pythons:
        with tempfile.TemporaryDirectory() as cache:
            argv = [str(python), "-m", "flake8_tensorcopy", "check", "--isolated", "--project-root", str(pkg),
                    "--cache-dir", cache, str(target)]
            timed([*argv[:-1], str(tree)], env=env)  # as after a run over the tree: every result kept
            timed(argv, env=env)
            summarised = sum(re.fullmatch(r"[0-9a-f]{24}\.marshal", p.name) is not None
                             for p in Path(cache).rglob("summaries-*/*.marshal"))
            results = list(Path(cache).rglob("results-*/*.marshal"))
            (own,) = [p for p in results if marshal.loads(p.read_bytes()).get("path") == str(target)]
            checks = []
            for _ in range(repeat):
                own.unlink(missing_ok=True)  # the file changed: its result is not cached
                checks.append(timed(argv, env=env)[0])
            nocache = median_of([*argv[:4], "--no-cache", *argv[4:7], str(target)], repeat, env=env)[0]
        floor = median_of([str(python), "-c", "import ast"], repeat, env=env)[0]
        check = statistics.median(checks)
        print(f"   {label}: caches of a run over the tree ({len(results)} results, {summarised} project modules "
              f"summarised) {check * 1000:4.0f} ms = "
              f"{check / floor:3.1f}x python -c 'import ast' ({floor * 1000:.0f} ms; target <= 3x); "
              f"without the caches {nocache * 1000:4.0f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.linear", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-corpus", action="store_true", help="only the dense file")
    ap.add_argument("--skip-flake8", action="store_true")
    ns = ap.parse_args(argv)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO_ROOT / "flake8_tensorcopy")], check=False,
                   capture_output=True)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    section_dense(ns.repeat)
    if not ns.skip_corpus:
        tree = section_tree(ns.repeat)
        if tree is not None and not ns.skip_flake8:
            section_flake8(tree, ns.repeat)
        if tree is not None:
            section_warm(tree, ns.repeat)
            section_one_file(tree, ns.repeat)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
