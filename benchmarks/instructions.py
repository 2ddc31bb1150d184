"""Instructions, not seconds: the analysis against read + parse, counted by callgrind.

    .venv/bin/python -m benchmarks.instructions [--base REV] [--step 10] [--flake8-step 40]

On a shared machine wall and CPU times of the same run move by 10-30% (other tenants); the
instructions a process executes do not (the same count twice to within a few tenths of a
percent, with PYTHONHASHSEED fixed).  For every `--step`-th file of the transformers `models/`
tree, in-process, each under `valgrind --tool=callgrind`:

  start      the interpreter, our imports, reading and decoding the files (subtracted below)
  floor      the same plus `ast.parse` of every file
  check      the same plus `lint_text` of every file, one file at a time
  project    the same with whole-project analysis (the project's summaries, built in-process)

for the working tree and, with `--base REV`, for that revision (exported with `git archive`;
each version's bytecode compiled before it is counted),
then `flake8 --isolated` on every `--flake8-step`-th file with a cold summary cache, with the
plugin of each version and without it (the flake8-only venv that `benchmarks.run` makes).  A
sparse sample is the plugin's worst case: its few files share the cost of summarising what they
import (every 40th: 65 files, 48 modules; a whole run's workers share it over hundreds of files
each, `benchmarks.run`'s flake8+tns-cold).
Prints the counts and the ratios (check - start) / (floor - start), the figure the linear
benchmark's section 2 times, and flake8's with / without.  About 10-15 minutes on 2 CPUs
(callgrind runs Python some 40x slower).  Needs valgrind.

Instructions stand for time where the cost is Python running the analysis, not where it is a
search of a text: a compiled pattern of a literal counts more instructions than `str.find` of
it and takes 0.33-0.96 of its time here (benchmarks/README.md, the session from `1967148`).
Judge a change to a text search by time, the versions in turns, over several passes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.corpus import REPO_ROOT, ensure_corpus
from benchmarks.ecosystem import export

_SUBSET = r"""
import sys, warnings, ast
src = sys.argv.pop(1)
sys.path[0:0] = [src]
import flake8_tensorcopy
assert flake8_tensorcopy.__file__.startswith(src), flake8_tensorcopy.__file__
from pathlib import Path
from flake8_tensorcopy.engine import lint_text, select_rules
from flake8_tensorcopy.rules.base import Options
from flake8_tensorcopy.source import decode
tree, what, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(Path(tree).rglob("*.py"))[::step]
warnings.simplefilter("ignore")
texts = [(f, decode(f.read_bytes()).text) for f in files]
if what == "floor":
    for _, text in texts:
        ast.parse(text)
elif what in ("check", "project"):
    rules, options = select_rules(), Options()
    project = None
    if what == "project":
        from flake8_tensorcopy.analysis.project import Project
        project = Project(str(Path(tree).parent.parent), options, batch=True)
    for f, text in texts:
        if project is not None:
            project.begin()
        lint_text(text, rules, options, project=project, path=str(f))
"""

_FLAKE8 = r"""
import os, shutil, sys
src = sys.argv.pop(1)
if src != "-":
    sys.path.insert(0, src)
from pathlib import Path
package, step = sys.argv[1], int(sys.argv[2])
os.chdir(package)
shutil.rmtree(".tensorcopy_cache", ignore_errors=True)
files = sorted(str(p) for p in Path("transformers/models").rglob("*.py"))[::step]
from flake8.main.cli import main
sys.argv = ["flake8", "--isolated", "--jobs", "1", "--output-file", os.devnull, *files]
try:
    main()
except SystemExit:
    pass
"""


def instructions(argv: list[str]) -> int:
    """Instructions callgrind counts for the process `argv` (and nothing it starts)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + os.devnull, *argv],
                          capture_output=True, text=True, env=env, cwd=REPO_ROOT)
    m = re.search(r"Collected : (\d+)", proc.stderr)
    if m is None:
        raise SystemExit(f"callgrind gave no count for {argv[:3]}: {proc.stderr[-500:]}")
    return int(m.group(1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.instructions", description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", help="a git revision to count beside the working tree")
    ap.add_argument("--step", type=int, default=10, help="every N-th file of models/ (default 10)")
    ap.add_argument("--flake8-step", type=int, default=40, help="every N-th file for flake8 (default 40; 0: skip)")
    ns = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)")
        return 2
    infos = {i.name: i for i in ensure_corpus(verbose=False)}
    if "transformers" not in infos:
        print("transformers is not in the corpus")
        return 2
    package = Path(infos["transformers"].path)
    tree = package / "transformers" / "models"
    with tempfile.TemporaryDirectory() as tmp:
        versions = [("working tree", str(REPO_ROOT))]
        if ns.base:
            versions.insert(0, (ns.base, str(export(ns.base, Path(tmp)))))
        py = sys.executable
        # Bytecode first: a version exported afresh would otherwise count compiling its ~30
        # modules (about half a billion instructions) and the working tree, with its `.pyc`
        # files, not.
        for _label, src in versions:
            subprocess.run([py, "-m", "compileall", "-q", os.path.join(src, "flake8_tensorcopy")], check=False,
                           capture_output=True)

        def subset(src: str, what: str) -> int:
            return instructions([py, "-c", _SUBSET, src, str(tree), what, str(ns.step)])

        n = len(sorted(tree.rglob("*.py"))[:: ns.step])
        print(f"every {ns.step}th file of transformers/models/ ({n} files), in-process, instructions (G)")
        start = subset(str(REPO_ROOT), "start")
        floor = subset(str(REPO_ROOT), "floor")
        print(f"  start {start / 1e9:7.2f}   floor {floor / 1e9:7.2f}   (parse alone {(floor - start) / 1e9:.2f})")
        for label, src in versions:
            check, project = subset(src, "check"), subset(src, "project")
            print(f"  {label:>12}: check {check / 1e9:7.2f} = {(check - start) / (floor - start):.2f}x, "
                  f"with the project {project / 1e9:7.2f} = {(project - start) / (floor - start):.2f}x "
                  f"(target <= 1.5x)")
        if ns.flake8_step:
            from benchmarks.run import ensure_venv, venv_bin

            plain_venv, why = ensure_venv("flake8", ["flake8"])
            if plain_venv is None:
                print(f"flake8: no flake8-only venv ({why})")
                return 0
            alone = instructions([str(venv_bin(plain_venv, "python")), "-c", _FLAKE8, "-", str(package),
                                  str(ns.flake8_step)])
            m = len(sorted(tree.rglob("*.py"))[:: ns.flake8_step])
            print(f"flake8 on every {ns.flake8_step}th file ({m} files), summary cache cold, instructions (G)")
            print(f"  without the plugin {alone / 1e9:7.2f}")
            for label, src in versions:
                with_plugin = instructions([py, "-c", _FLAKE8, src, str(package), str(ns.flake8_step)])
                print(f"  {label:>12}: with {with_plugin / 1e9:7.2f} = {with_plugin / alone:.2f}x (target <= 1.10x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
