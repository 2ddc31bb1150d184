"""The "floor" for a linter: read every .py file and ``ast.parse`` it, nothing more.

    python benchmarks/floor.py [--jobs N] PATH [PATH ...]

Runs with ``multiprocessing`` on N processes (default: all CPUs), like the
linters it is compared with.  Standalone on purpose (``benchmarks.run`` starts
it by file path from a temporary working directory).  Pure standard library.
"""

from __future__ import annotations

import argparse
import ast
import multiprocessing
import os
import sys
import warnings


def _files(paths: list[str]) -> list[str]:
    out: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            out.append(path)
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".py"))
    return out


def _parse(path: str) -> tuple[int, int]:
    """(lines, 1 if SyntaxError else 0)"""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes etc.
            ast.parse(data, filename=path)
    except (SyntaxError, ValueError):
        return lines, 1
    return lines, 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="floor.py")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args(argv)
    files = _files(args.paths)
    if args.jobs <= 1 or len(files) <= 1:
        results = [_parse(f) for f in files]
    else:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(_parse, files, chunksize=max(1, min(64, len(files) // (args.jobs * 8) or 1)))
    lines = sum(r[0] for r in results)
    errors = sum(r[1] for r in results)
    print(f"floor: {len(files)} files, {lines} lines, {errors} syntax errors, jobs={args.jobs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
