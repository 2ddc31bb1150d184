"""Print every tensorcopy finding on the corpus with source context, for hand classification.

    .venv/bin/python -m benchmarks.precision [--select TNS1] [--package NAME ...]
                                             [--context 3] [--strict] [--sheet FILE.tsv]

Runs ``tensorcopy check --select PREFIX [--no-cache] <package dir>`` once per
corpus package (from a temporary working directory, so no cache lands in the
repo), parses the ``path:line:col: CODE message`` lines and prints each
finding with --context lines of source either side (the finding's line is
marked ``>``).  Ends with counts per package and code.  --sheet writes a TSV
(id, package, code, path, line, col, message, verdict) with an empty verdict
column to fill in (TP / FP / unsure).  Pure standard library.
"""

from __future__ import annotations

import argparse
import collections
import csv
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.corpus import REPO_ROOT, PackageInfo, ensure_corpus

FINDING_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+):? (?P<code>[A-Z]+[0-9]+) ?(?P<msg>.*)$")


def _norm(s: str) -> str:
    return s.lower().replace("_", "-")


def pick(infos: list[PackageInfo], names: list[str] | None) -> list[PackageInfo]:
    if not names:
        return infos
    out = []
    for name in names:
        hits = [i for i in infos if _norm(i.name) == _norm(name) or _norm(Path(i.path).name) == _norm(name)]
        if not hits:
            raise SystemExit(f"no corpus package {name!r}; have: {', '.join(i.name for i in infos)}")
        out.extend(h for h in hits if h not in out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.precision", description=__doc__.split("\n\n")[0])
    ap.add_argument("--select", default="TNS", help="code prefix(es) passed to --select (default TNS)")
    ap.add_argument("--package", action="append", help="only this corpus package (repeatable)")
    ap.add_argument("--context", type=int, default=3, help="source lines either side (default 3)")
    ap.add_argument("--strict", action="store_true", help="pass --strict to tensorcopy check")
    ap.add_argument("--args", default="", help="more arguments for tensorcopy check (one string)")
    ap.add_argument("--limit", type=int, default=0, help="print at most N findings per package (0: all)")
    ap.add_argument("--sheet", default=None, help="also write a TSV classification sheet here")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per package")
    ap.add_argument("--tensorcopy", default=None, help="CLI path (default: .venv/bin/tensorcopy)")
    args = ap.parse_args(argv)

    exe = Path(args.tensorcopy) if args.tensorcopy else REPO_ROOT / ".venv" / "bin" / "tensorcopy"
    if not exe.exists():
        found = shutil.which("tensorcopy")
        if not found:
            print(f"tensorcopy CLI not found ({exe}); install the project with `pip install -e .`",
                  file=sys.stderr)
            return 2
        exe = Path(found)
    help_text = subprocess.run([str(exe), "check", "--help"], capture_output=True, text=True).stdout
    extra = []
    if "--no-cache" in help_text:
        extra.append("--no-cache")
    if "--isolated" in help_text:
        extra.append("--isolated")
    if "--output-format" in help_text:
        extra += ["--output-format", "text"]
    if args.strict:
        extra.append("--strict")
    extra += shlex.split(args.args)

    infos = pick(ensure_corpus(verbose=False), args.package)
    counts: collections.Counter = collections.Counter()
    sheet_rows = []
    n = 0
    with tempfile.TemporaryDirectory(prefix="tensorcopy-precision-") as cwd:
        for info in infos:
            root = Path(info.path)
            cmd = [str(exe), "check", "--select", args.select, *extra, str(root)]
            print(f"\n##### {info.name}=={info.version} ({info.files} files): "
                  f"{' '.join([exe.name, *cmd[1:]])}", flush=True)
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"!! timed out after {args.timeout}s", flush=True)
                continue
            if proc.returncode not in (0, 1) or "Traceback" in proc.stderr:
                print(f"!! rc={proc.returncode}; stderr:\n{proc.stderr[-2000:]}", flush=True)
            shown = 0
            cache: dict[Path, list[str]] = {}
            for line in proc.stdout.splitlines():
                m = FINDING_RE.match(line)
                if not m:
                    continue
                path = Path(m["path"])
                if not path.is_absolute():
                    path = Path(cwd) / path
                code, lineno, col = m["code"], int(m["line"]), int(m["col"])
                counts[(info.name, code)] += 1
                n += 1
                try:
                    rel = path.resolve().relative_to(root.resolve())
                except ValueError:
                    rel = path
                sheet_rows.append([n, info.name, code, str(rel), lineno, col, m["msg"], ""])
                if args.limit and shown >= args.limit:
                    continue
                shown += 1
                if path not in cache:
                    try:
                        cache[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
                    except OSError:
                        cache[path] = []
                src = cache[path]
                print(f"\n== [{n}] {code} {root.name}/{rel}:{lineno}:{col}: {m['msg']}")
                lo, hi = max(1, lineno - args.context), min(len(src), lineno + args.context)
                for i in range(lo, hi + 1):
                    print(f"{'>' if i == lineno else ' '} {i:>6} | {src[i - 1]}")
            if args.limit and shown < sum(v for (p, _), v in counts.items() if p == info.name):
                print(f"\n(... {sum(v for (p, _), v in counts.items() if p == info.name) - shown} more "
                      f"findings in {info.name} not shown: --limit {args.limit})")

    print("\n##### summary: findings per package and code")
    if not counts:
        print("no findings")
    for (pkg, code), v in sorted(counts.items()):
        print(f"{pkg:<22} {code:<8} {v:>6}")
    print(f"total {n}")
    if args.sheet:
        with open(args.sheet, "w", newline="") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(["id", "package", "code", "path", "line", "col", "message", "verdict"])
            w.writerows(sheet_rows)
        print(f"wrote {os.path.abspath(args.sheet)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
