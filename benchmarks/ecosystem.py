"""Ecosystem check: the findings (and fix safety) that a change makes appear or disappear on the
benchmark corpus, as ruff's ecosystem check does for ruff.

    .venv/bin/python -m benchmarks.ecosystem [--base REV] [--strict] [--package NAME ...]
                                             [--context 2] [--jobs N]

Exports revision REV (default HEAD) of this repository with `git archive` into a temporary
directory and runs both it and the working tree's `flake8_tensorcopy` (`check --isolated
--no-cache --output-format json-lines`, and `--project-root PACKAGE` where the version has
whole-project analysis) over the corpus packages, each from a fresh temporary
working directory.  Prints every finding that appeared (+), disappeared (-) or changed its
message or fix safety (~), with source lines around it, then counts per code.  A finding is
identified by (path, line, column, code).  Pure standard library; needs git for the base.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from benchmarks.corpus import REPO_ROOT, ensure_corpus
from benchmarks.precision import pick

_RUN = "import sys; sys.path.insert(0, sys.argv.pop(1)); from flake8_tensorcopy.cli import main; sys.exit(main())"


def export(rev: str, dest: Path) -> Path:
    """The tree of `rev` (only `flake8_tensorcopy/` is needed) unpacked under `dest`."""
    data = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", "--format=tar", rev, "flake8_tensorcopy"],
                          check=True, capture_output=True).stdout
    tar = dest / "base.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as tf:
        tf.extractall(dest, filter="data")
    tar.unlink()
    return dest


def project_args(root: Path, target: str) -> list[str]:
    """`--project-root PACKAGE_DIR` for a version that has whole-project analysis: a corpus
    package is an unpacked distribution, with none of the files that mark a project's root."""
    return ["--project-root", target] if "--project-root" in (root / "flake8_tensorcopy" / "cli.py").read_text() \
        else []


def findings(root: Path, target: str, args: list[str], timeout: float) -> dict:
    args = [*project_args(root, target), *args]
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, "-c", _RUN, str(root), "check", "--isolated", "--no-cache",
                               "--output-format", "json-lines", *args, target],
                              cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:], file=sys.stderr)
    out = {}
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        key = (d["path"], d.get("cell"), d["line"], d["column"], d["code"])
        out[key] = (d["message"], (d.get("fix") or {}).get("safety"))
    return out


def context(path: str, line: int, n: int) -> str:
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    lo, hi = max(1, line - n), min(len(lines), line + n)
    return "\n".join(f"    {'>' if i == line else ' '}{i:5d} {lines[i - 1]}" for i in range(lo, hi + 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ecosystem", description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD", help="revision to compare the working tree with (default HEAD)")
    ap.add_argument("--strict", action="store_true", help="pass --strict to both")
    ap.add_argument("--package", action="append", help="only this corpus package (repeatable)")
    ap.add_argument("--context", type=int, default=2, help="source lines either side (default 2)")
    ap.add_argument("--args", default="", help="more arguments for `check` (one string, split on spaces)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per package and version")
    ns = ap.parse_args(argv)
    args = (["--strict"] if ns.strict else []) + ns.args.split()
    infos = pick(ensure_corpus(), ns.package)
    counts: dict = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        base_root = export(ns.base, Path(tmp))
        for info in infos:
            old = findings(base_root, info.path, args, ns.timeout)
            new = findings(REPO_ROOT, info.path, args, ns.timeout)
            for key in sorted(old.keys() | new.keys(), key=lambda k: (k[0], k[2], k[3], k[4])):
                a, b = old.get(key), new.get(key)
                if a == b:
                    continue
                mark = "+" if a is None else "-" if b is None else "~"
                counts[(mark, key[4])] += 1
                path, cell, line, col, code = key
                where = f"{path}:{'cell ' + str(cell) + ':' if cell else ''}{line}:{col}"
                print(f"{mark} {where}: {code}")
                if a is not None and (b is None or a != b):
                    print(f"    was: {a[0]}  [fix: {a[1]}]")
                if b is not None:
                    print(f"    now: {b[0]}  [fix: {b[1]}]")
                if os.path.exists(path):
                    print(context(path, line, ns.context))
            print(f"[{info.name}] base {len(old)} findings, now {len(new)}", file=sys.stderr)
    print("\nchanges by code (+ appeared, - disappeared, ~ message or fix safety changed):")
    for (mark, code), n in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"  {mark} {code}: {n}")
    if not counts:
        print("  none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
