"""Fix-safety run: what `tensorcopy fix` would change in real libraries, change by change.

Issue "Safe means safe": every TNS202 fix applied in default mode over ~7,300 real files broke
working code (`torch.tensor(size)` on a `torch.Size` behind an isinstance test, lists under a
wrong `torch.Tensor` annotation), and strict mode's NumPy fixes rewrote arrays and TensorFlow
tensors.  This script downloads the libraries those came from (kornia, torch_geometric,
gpytorch, diffusers: pinned releases, `pip download --no-deps`, only their `.py` files, outside
the repository like benchmarks/corpus.py), runs

    tensorcopy fix --diff --isolated [--strict] [--unsafe-fixes] PACKAGE_DIR

in each mode, and prints every change: file, line, rule, fix safety, and the lines before and
after.  Each change is attributed to its rule by re-running the same fix passes in-process
(engine `lint_text` + `apply_fixes`, one fix at a time for the before/after lines); the
in-process result is checked against the CLI's diff, file by file.  Every changed file is
compiled before and after the fix.  A summary counts fixes per rule and mode.

    python -m benchmarks.fix_safety                       # default and strict (safe fixes only)
    python -m benchmarks.fix_safety --unsafe              # ... and both again with --unsafe-fixes
    python -m benchmarks.fix_safety --package kornia --mode strict
    python -m benchmarks.fix_safety --json out.json       # every change as JSON too

Exit status: 0 when every changed file still compiles and the CLI and the in-process passes
agree, 1 otherwise.  Changes themselves are not failures: read them (a safe fix is expected to be
right for every value the original code accepts).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.corpus import Package, corpus_path, ensure_corpus, iter_py_files

# Pinned: the newest releases on PyPI when this was written (each checked with
# `pip download --no-deps` on this project's machine).  All four ship wheels.
SAFETY_PACKAGES: tuple[Package, ...] = (
    Package("kornia", "0.9.0", "library", "differentiable CV: sizes as torch.Size / lists under Tensor annotations"),
    Package("torch-geometric", "2.8.1", "library", "graph learning: Data objects with clone()/detach(), "
            "tensors-or-lists helpers"),
    Package("gpytorch", "1.15.2", "library", "Gaussian processes: `if not isinstance(m, torch.Tensor): "
            "m = torch.tensor(m)` helpers"),
    Package("diffusers", "0.42.1", "library", "diffusion pipelines: config lists passed where Tensor is annotated"),
)

MODES = {
    "default": [],
    "strict": ["--strict"],
    "unsafe": ["--unsafe-fixes"],
    "strict-unsafe": ["--strict", "--unsafe-fixes"],
}


@dataclasses.dataclass
class Change:
    mode: str
    package: str
    path: str  # relative to the corpus root
    line: int  # in the text the fix was applied to (pass 1: the original file)
    code: str
    safety: str
    fix_pass: int
    before: list
    after: list


@dataclasses.dataclass
class FileResult:
    mode: str
    package: str
    path: str
    changes: list
    compiled_before: bool
    compiles_after: bool
    compile_error: str | None
    cli_agrees: bool


# --------------------------------------------------------------------------- the CLI side

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_cli_diffs(stdout: str) -> dict[str, str]:
    """`--- a/PATH` / `+++ b/PATH` / hunks (consumed by their line counts, so finding lines
    printed between files cannot be mistaken for diff lines) -> {PATH: that file's diff text}."""
    lines = io.StringIO(stdout, newline="").readlines()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- a/") and i + 1 < len(lines) and lines[i + 1].startswith("+++ b/"):
            path = line[len("--- a/"):].rstrip("\r\n")
            chunk = [line, lines[i + 1]]
            i += 2
            while i < len(lines) and (m := _HUNK.match(lines[i])):
                old_n = int(m.group(2)) if m.group(2) is not None else 1
                new_n = int(m.group(4)) if m.group(4) is not None else 1
                chunk.append(lines[i])
                i += 1
                while (old_n > 0 or new_n > 0) and i < len(lines):
                    body = lines[i]
                    chunk.append(body)
                    i += 1
                    if body.startswith("\\"):
                        continue
                    if body.startswith(" "):
                        old_n -= 1
                        new_n -= 1
                    elif body.startswith("-"):
                        old_n -= 1
                    elif body.startswith("+"):
                        new_n -= 1
                while i < len(lines) and lines[i].startswith("\\"):  # "\ No newline at end of file"
                    chunk.append(lines[i])
                    i += 1
            out[path] = "".join(chunk)
            continue
        i += 1
    return out


def run_cli(package_dir: str, root: Path, flags: list[str], jobs: int) -> tuple[dict[str, str], str, float]:
    tensorcopy = Path(sys.executable).with_name("tensorcopy")
    cmd = [str(tensorcopy) if tensorcopy.exists() else "tensorcopy", "fix", "--diff", "--isolated", *flags]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    cmd.append(package_dir)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    summary = next((ln for ln in proc.stderr.splitlines() if ln.startswith("Would fix")), "")
    return parse_cli_diffs(proc.stdout), summary, wall


# --------------------------------------------------------------------------- the in-process side


def _changed_lines(old: str, new: str) -> tuple[list, list]:
    a = io.StringIO(old, newline="").readlines()
    b = io.StringIO(new, newline="").readlines()
    before, after = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            before += [ln.rstrip("\r\n") for ln in a[i1:i2]]
            after += [ln.rstrip("\r\n") for ln in b[j1:j2]]
    return before, after


def attribute(text: str, options, unsafe: bool):
    """The fix passes of engine.fix_text, one change per applied fix: (final text, changes)."""
    from flake8_tensorcopy.engine import apply_fixes, lint_text

    changes = []
    current = text
    for n in range(1, 11):
        result = lint_text(current, None, options)
        if result.error:
            break
        new, applied, _ = apply_fixes(current, result.violations, unsafe)
        if not applied:
            break
        for v in applied:
            alone, _, _ = apply_fixes(current, [v], unsafe)
            before, after = _changed_lines(current, alone)
            changes.append((n, v, before, after))
        current = new
    return current, changes


def unified(old: str, new: str, name: str) -> str:
    """The CLI's diff of one file (cli._deliver)."""
    return "".join(difflib.unified_diff(io.StringIO(old, newline="").readlines(),
                                        io.StringIO(new, newline="").readlines(),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def _compiles(text: str, path: str) -> tuple[bool, str | None]:
    try:
        compile(text, path, "exec", dont_inherit=True)
        return True, None
    except (SyntaxError, ValueError) as exc:
        return False, f"{type(exc).__name__}: {exc}"


def check_mode(mode: str, infos, root: Path, jobs: int, verbose: bool) -> tuple[list[FileResult], dict]:
    from flake8_tensorcopy.engine import fix_text
    from flake8_tensorcopy.rules.base import Options
    from flake8_tensorcopy.source import decode

    flags = MODES[mode]
    options = Options(strict="--strict" in flags)
    unsafe = "--unsafe-fixes" in flags
    results: list[FileResult] = []
    meta = {"cli_wall_s": 0.0, "cli_summaries": {}}
    for info in infos:
        pkg_dir = Path(info.path).name
        diffs, summary, wall = run_cli(pkg_dir, root, flags, jobs)
        meta["cli_wall_s"] += wall
        meta["cli_summaries"][pkg_dir] = summary
        # Files the CLI changed, plus files the in-process passes change (should be the same).
        for rel in sorted(diffs):
            path = root / rel
            text = decode(path.read_bytes()).text
            final, changes = attribute(text, options, unsafe)
            expected = fix_text(text, None, options, unsafe=unsafe).text
            agrees = final == expected and unified(text, final, rel) == diffs[rel]
            ok_before, _ = _compiles(text, rel)
            ok_after, why = _compiles(final, rel)
            fr = FileResult(mode, info.name, rel, [
                Change(mode, info.name, rel, v.line, v.code, v.fix.safety, n, before, after)
                for n, v, before, after in changes
            ], ok_before, ok_after, why, agrees)
            results.append(fr)
            if verbose:
                _print_file(fr)
    return results, meta


def in_process_only(mode: str, infos, root: Path, seen: set) -> list[str]:
    """Files that the in-process fix changes but the CLI did not (a disagreement)."""
    from flake8_tensorcopy.engine import fix_text
    from flake8_tensorcopy.rules.base import Options
    from flake8_tensorcopy.source import DecodeError, decode

    flags = MODES[mode]
    options = Options(strict="--strict" in flags)
    unsafe = "--unsafe-fixes" in flags
    extra = []
    for info in infos:
        for p in iter_py_files(Path(info.path)):
            rel = str(p.relative_to(root))
            if rel in seen:
                continue
            try:
                text = decode(p.read_bytes()).text
            except DecodeError:
                continue
            if "torch" not in text:
                continue
            if fix_text(text, None, options, unsafe=unsafe).text != text:
                extra.append(rel)
    return extra


# --------------------------------------------------------------------------- output


def _print_file(fr: FileResult, out=sys.stdout) -> None:
    for c in fr.changes:
        where = f"{c.path}:{c.line}" + (f" (fix pass {c.fix_pass})" if c.fix_pass > 1 else "")
        print(f"[{c.mode}] {where}: {c.code} ({c.safety})", file=out)
        for ln in c.before:
            print(f"    - {ln}", file=out)
        for ln in c.after:
            print(f"    + {ln}", file=out)
    if not fr.compiles_after:
        state = "compiled before the fix" if fr.compiled_before else "did not compile before either"
        print(f"[{fr.mode}] {fr.path}: DOES NOT COMPILE after the fix ({state}): {fr.compile_error}", file=out)
    if not fr.cli_agrees:
        print(f"[{fr.mode}] {fr.path}: the CLI diff and the in-process fix passes DISAGREE", file=out)


def summarize(all_results: dict, metas: dict, infos, out=sys.stdout) -> dict:
    codes = sorted({c.code for rs in all_results.values() for r in rs for c in r.changes})
    modes = list(all_results)
    table = {}
    print("\n=== fix-safety summary ===", file=out)
    print("corpus: " + ", ".join(f"{i.name} {i.version} ({i.files} files, {i.lines:,} lines)" for i in infos), file=out)
    w = max([len(c) for c in codes] + [len("total")])
    head = f"{'rule':<{w}}  " + "  ".join(f"{m:>15}" for m in modes)
    print("\nfixes applied per rule (safe/unsafe):", file=out)
    print(head, file=out)
    for code in codes + ["total"]:
        row = []
        for m in modes:
            ch = [c for r in all_results[m] for c in r.changes if code in ("total", c.code)]
            s = sum(c.safety == "safe" for c in ch)
            u = len(ch) - s
            table.setdefault(m, {})[code] = {"safe": s, "unsafe": u}
            row.append(f"{f'{s}/{u}':>15}")
        print(f"{code:<{w}}  " + "  ".join(row), file=out)
    print("\nper package (changes / files changed):", file=out)
    for info in infos:
        row = []
        for m in modes:
            rs = [r for r in all_results[m] if r.package == info.name]
            row.append(f"{f'{sum(len(r.changes) for r in rs)}/{len(rs)}':>15}")
        print(f"{info.name:<{max(w, 16)}}  " + "  ".join(row), file=out)
    print("\nchecks:", file=out)
    status = {}
    for m in modes:
        rs = all_results[m]
        broken = [r.path for r in rs if r.compiled_before and not r.compiles_after]
        disagree = [r.path for r in rs if not r.cli_agrees] + metas[m].get("in_process_only", [])
        status[m] = {"files_changed": len(rs), "compile_broken": broken, "cli_disagrees": disagree,
                     "cli_wall_s": round(metas[m]["cli_wall_s"], 1)}
        print(f"  {m:<14} files changed {len(rs):>4}; compile broken by the fix: {len(broken)}; "
              f"CLI vs in-process disagreements: {len(disagree)}; CLI time {metas[m]['cli_wall_s']:.1f}s", file=out)
        for p in broken + disagree:
            print(f"      {p}", file=out)
    return {"per_rule": table, "checks": status}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fix_safety", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", action="append", choices=list(MODES),
                    help="mode(s) to run (default: default and strict; with --unsafe, all four)")
    ap.add_argument("--unsafe", action="store_true", help="also run both modes with --unsafe-fixes")
    ap.add_argument("--package", action="append", default=None,
                    help="only this package (PyPI name, e.g. kornia); repeatable")
    ap.add_argument("--jobs", "-j", type=int, default=0, help="tensorcopy --jobs (default: its own choice)")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    ap.add_argument("--no-cross-check", action="store_true",
                    help="skip looking for files the in-process fix changes but the CLI did not")
    ap.add_argument("--json", metavar="PATH", help="write every change and the summary as JSON")
    args = ap.parse_args(argv)

    modes = args.mode or (["default", "strict", "unsafe", "strict-unsafe"] if args.unsafe else ["default", "strict"])
    packages = tuple(p for p in SAFETY_PACKAGES if not args.package or p.name in args.package)
    if not packages:
        ap.error(f"no such package; choose from {', '.join(p.name for p in SAFETY_PACKAGES)}")
    infos = ensure_corpus(packages=packages)
    root = corpus_path()
    all_results, metas = {}, {}
    for mode in modes:
        if not args.quiet:
            print(f"\n=== mode: {mode} (tensorcopy fix --diff --isolated {' '.join(MODES[mode])}) ===", flush=True)
        results, meta = check_mode(mode, infos, root, args.jobs, not args.quiet)
        if not args.no_cross_check:
            meta["in_process_only"] = in_process_only(mode, infos, root, {r.path for r in results})
        all_results[mode], metas[mode] = results, meta
    summary = summarize(all_results, metas, infos)
    if args.json:
        Path(args.json).write_text(json.dumps({
            "packages": [dataclasses.asdict(i) for i in infos],
            "summary": summary,
            "changes": [dataclasses.asdict(c) for rs in all_results.values() for r in rs for c in r.changes],
            "files": [{k: v for k, v in dataclasses.asdict(r).items() if k != "changes"}
                      for rs in all_results.values() for r in rs],
        }, indent=1) + "\n")
    bad = any(s["compile_broken"] or s["cli_disagrees"] for s in summary["checks"].values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
