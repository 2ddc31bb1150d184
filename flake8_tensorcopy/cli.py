"""`tensorcopy`: check and fix from the command line (and pre-commit).  A shell over the engine.

Exit codes: 0 nothing found (or everything fixed), 1 findings remain, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from . import __version__
from .cache import CACHE_DIR, Cache, config_key, content_hash
from .engine import fix_text, lint_text, select_rules
from .rules.base import Options, Violation, all_rules, get_rule
from .source import DecodeError, decode, encode, is_probably_binary

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".eggs", "__pycache__",
    "build", "dist", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tensorcopy_cache", "*.egg-info", ".ipynb_checkpoints",
)
_PARALLEL_MIN_FILES = 64


class UsageError(Exception):
    pass


@dataclass
class FileReport:
    path: str
    violations: list = field(default_factory=list)
    error: str | None = None
    fixed: int = 0
    diff: str = ""
    new_source: bytes | None = None  # for stdin fixes
    stamp: tuple | None = None  # (sha256, size, mtime_ns) of what was checked, for the cache


# --------------------------------------------------------------------------- arguments


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", default=None, help="files or directories ('-' for stdin); default: .")
    p.add_argument("--select", type=_csv, default=None, metavar="CODES",
                   help="comma-separated code prefixes to enable (default: TNS)")
    p.add_argument("--ignore", type=_csv, default=[], metavar="CODES", help="code prefixes to disable")
    p.add_argument("--extend-select", type=_csv, default=[], metavar="CODES",
                   help="code prefixes to enable on top of --select")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOBS",
                   help="comma-separated globs of paths to skip (added to the defaults)")
    p.add_argument("--strict", action="store_true", help="also report tensors of unknown origin")
    p.add_argument("--numpy-fix", choices=("detach", "force"), default="detach",
                   help="how NumPy conversions are fixed: t.detach().cpu().numpy() or t.numpy(force=True)")
    p.add_argument("--generator-names", type=_csv, default=[], metavar="NAMES")
    p.add_argument("--discriminator-names", type=_csv, default=[], metavar="NAMES")
    p.add_argument("--stdin-filename", default=None, metavar="PATH", help="the name to report for '-'")
    p.add_argument("--jobs", "-j", type=int, default=0, help="processes (default: one per CPU for large trees)")
    p.add_argument("--no-noqa", action="store_true", help="ignore '# noqa' comments")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--cache-dir", default=CACHE_DIR, metavar="DIR",
                   help=f"where `check` keeps its result cache (default: {CACHE_DIR})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensorcopy",
        description="Find and fix PyTorch tensor-copy and autograd mistakes.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = sub.add_parser("check", help="report problems")
    _add_common(check)
    fix = sub.add_parser("fix", help="apply the safe fixes in place")
    _add_common(fix)
    fix.add_argument("--diff", action="store_true", help="print a unified diff and write nothing")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    sub.add_parser("rules", help="list the rules")
    explain = sub.add_parser("explain", help="print one rule's documentation")
    explain.add_argument("code")
    return parser


# --------------------------------------------------------------------------- files


def _excluded(path: str, patterns) -> bool:
    norm = path.replace(os.sep, "/")
    base = os.path.basename(norm.rstrip("/"))
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(base, pat) or fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(norm, f"*/{pat}"):
            return True
    return False


def discover(paths, exclude) -> tuple[list[str], list[tuple[str, str]]]:
    """Python files under `paths`, and (path, error) for paths that do not exist."""
    files, errors = [], []
    patterns = list(DEFAULT_EXCLUDE) + list(exclude)
    user_patterns = list(exclude)
    for p in paths:
        if p == "-":
            files.append(p)
            continue
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                keep = []
                for d in sorted(dirs):
                    full = os.path.join(root, d)
                    if _excluded(full, patterns) or os.path.exists(os.path.join(full, "pyvenv.cfg")):
                        continue
                    keep.append(d)
                dirs[:] = keep
                for n in sorted(names):
                    full = os.path.join(root, n)
                    if n.endswith((".py", ".pyi")) and not _excluded(full, patterns):
                        files.append(full)
        elif os.path.exists(p) or os.path.islink(p):
            if not _excluded(p, user_patterns):
                files.append(p)
        else:
            errors.append((p, "no such file or directory"))
    return files, errors


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def write_atomic(path: str, data: bytes) -> None:
    """Write via a temporary file in the same directory and a rename, keeping the mode."""
    st = os.stat(path)
    # Read-only means read-only, also for root (who os.access() says may write anything).
    if not os.access(path, os.W_OK) or not st.st_mode & 0o222:
        raise PermissionError(13, "file is read-only")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tensorcopy-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, st.st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --------------------------------------------------------------------------- work


@dataclass(frozen=True)
class Job:
    mode: str  # "check" or "fix"
    codes: tuple
    options: Options
    unsafe: bool = False
    diff: bool = False
    noqa: bool = True


def process(path: str, display: str, job: Job) -> FileReport:
    report = FileReport(display)
    try:
        st = os.stat(path) if path != "-" else None
        data = _read(path)
    except OSError as exc:
        report.error = f"cannot read: {exc.strerror or exc}"
        return report
    if is_probably_binary(data):
        report.error = "cannot read: not a text file (NUL bytes)"
        return report
    try:
        decoded = decode(data)
    except DecodeError as exc:
        report.error = f"cannot decode: {exc}"
        return report
    rules = [get_rule(c) for c in job.codes]
    try:
        if job.mode == "check":
            result = lint_text(decoded.text, rules, job.options, honor_noqa=job.noqa)
            report.violations = result.violations
            report.error = f"cannot parse: {result.error}" if result.error else None
            if st is not None:
                report.stamp = (content_hash(data), st.st_size, st.st_mtime_ns)
            return report
        fixed = fix_text(decoded.text, rules, job.options, unsafe=job.unsafe)
    except Exception as exc:  # a bug in a rule must not cost the user the rest of the run
        report.error = f"internal error: {type(exc).__name__}: {exc} (please report it)"
        return report
    if fixed.error:
        report.error = f"cannot fix: {fixed.error}" if "fix produced" in fixed.error else f"cannot parse: {fixed.error}"
    report.violations = fixed.remaining
    report.fixed = len(fixed.applied)
    if fixed.text != decoded.text and not fixed.error:
        new = encode(fixed.text, decoded.encoding, decoded.bom)
        if job.diff:
            report.diff = "".join(
                difflib.unified_diff(
                    decoded.text.splitlines(keepends=True),
                    fixed.text.splitlines(keepends=True),
                    fromfile=f"a/{display.lstrip('/')}",
                    tofile=f"b/{display.lstrip('/')}",
                )
            )
        elif path == "-":
            report.new_source = new
        else:
            try:
                write_atomic(path, new)
            except OSError as exc:
                report.error = f"cannot write: {exc.strerror or exc}"
                report.violations = lint_text(decoded.text, rules, job.options).violations
                report.fixed = 0
    elif path == "-":
        report.new_source = data
    return report


def _process_star(args):
    return process(*args)


def run_all(files, job: Job, stdin_name: str, jobs: int) -> list[FileReport]:
    tasks = [(f, stdin_name if f == "-" else f, job) for f in files]
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    if workers > 1 and len(tasks) >= _PARALLEL_MIN_FILES and "-" not in files:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(_process_star, tasks, chunksize=16))
    return [process(*t) for t in tasks]


# --------------------------------------------------------------------------- output


def _format(report: FileReport, v: Violation) -> str:
    return f"{report.path}:{v.line}:{v.col + 1}: {v.code} {v.message}"


def _summary(total: int, fixable: int, unsafe_fixable: int) -> str:
    if total == 0:
        return "All checks passed!"
    noun = "problem" if total == 1 else "problems"
    parts = []
    if fixable:
        parts.append(f"{fixable} fixable with `tensorcopy fix`")
    if unsafe_fixable:
        parts.append(f"{unsafe_fixable} more with `tensorcopy fix --unsafe-fixes`")
    extra = f" ({'; '.join(parts)})" if parts else ""
    return f"Found {total} {noun}{extra}."


def cmd_check_or_fix(args, mode: str) -> int:
    paths = args.paths or ["."]
    codes = tuple(c.code for c in select_rules(args.select, args.ignore, args.extend_select))
    options = Options(
        strict=args.strict,
        numpy_fix=args.numpy_fix,
        generator_names=tuple(args.generator_names),
        discriminator_names=tuple(args.discriminator_names),
    )
    exclude = [g for e in args.exclude for g in _csv(e)]
    files, missing = discover(paths, exclude)
    job = Job(mode, codes, options, getattr(args, "unsafe_fixes", False), getattr(args, "diff", False),
              not args.no_noqa)
    stdin_name = args.stdin_filename or "-"
    cache = None
    if mode == "check" and not args.no_cache:
        cache = Cache(args.cache_dir, config_key(codes, options, job.noqa))
    reports, todo = [], []
    for f in files:
        hit = cache.lookup(f) if cache is not None and f != "-" else None
        if hit is not None:
            reports.append(FileReport(f, hit[0], hit[1]))
        else:
            todo.append(f)
    done = run_all(todo, job, stdin_name, args.jobs)
    if cache is not None:
        for r in done:
            if r.stamp is not None:
                cache.store(r.path, *r.stamp, r.violations, r.error)
        cache.save()
    reports.extend(done)
    reports.sort(key=lambda r: r.path)
    out = sys.stdout
    err = sys.stderr
    fixing_stdin = mode == "fix" and "-" in files and not job.diff
    # When `fix -` writes the fixed source to stdout, diagnostics go to stderr.
    diag = err if fixing_stdin else out
    status = 0
    total = fixable = unsafe_fixable = fixed = 0
    for path, why in missing:
        print(f"error: {path}: {why}", file=err)
        status = 2
    for r in reports:
        if r.error:
            print(f"error: {r.path}: {r.error}", file=err)
            status = 2
        for v in r.violations:
            print(_format(r, v), file=diag)
            total += 1
            if v.fix is not None:
                if v.fix.safety == "safe":
                    fixable += 1
                else:
                    unsafe_fixable += 1
        fixed += r.fixed
        if r.diff:
            out.write(r.diff)
        if r.new_source is not None:
            out.flush()
            sys.stdout.buffer.write(r.new_source)
            sys.stdout.buffer.flush()
    if mode == "check":
        print(_summary(total, fixable, unsafe_fixable), file=diag)
    else:
        verb = "Would fix" if job.diff else "Fixed"
        line = f"{verb} {fixed} problem{'s' if fixed != 1 else ''}"
        if total:
            line += f"; {total} remaining (not fixable automatically"
            line += f", {unsafe_fixable} with --unsafe-fixes)" if unsafe_fixable and not job.unsafe else ")"
        print(line + ".", file=err if (job.diff or fixing_stdin) else out)
    if status:
        return status
    if mode == "fix" and job.diff:
        return 1 if fixed else (1 if total else 0)
    return 1 if total else 0


def cmd_rules() -> int:
    for cls in all_rules():
        fix = cls.fix_safety or "-"
        print(f"{cls.code}  {cls.name:<34} fix: {fix:<6}  {cls.doc_sections().get('What it does', '').splitlines()[0]}")
    return 0


def cmd_explain(code: str) -> int:
    cls = get_rule(code)
    if cls is None:
        print(f"error: unknown rule code {code!r}; see `tensorcopy rules`", file=sys.stderr)
        return 2
    print(cls.explain())
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in ("check", "fix", "rules", "explain", "-h", "--help", "--version"):
        argv.insert(0, "check")  # `tensorcopy src/` means `tensorcopy check src/`
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code not in (0, None) else 0
    try:
        if args.command in (None,):
            args = parser.parse_args(["check", *argv])
        if args.command == "rules":
            return cmd_rules()
        if args.command == "explain":
            return cmd_explain(args.code)
        return cmd_check_or_fix(args, args.command)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
