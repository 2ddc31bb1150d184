"""`tensorcopy`: check and fix from the command line (and pre-commit).  A shell over the engine.

Exit codes: 0 nothing found (or everything fixed), 1 findings remain, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import fnmatch
import io
import os
import stat
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from . import __version__
from . import config as _config
from . import notebook as _notebook
from . import output as _output
from .cache import CACHE_DIR, Cache, config_key, content_hash
from .engine import fix_text, lint_text
from .rules.base import Options, all_rules, get_rule
from .source import DecodeError, LineIndex, decode, encode_edited, is_probably_binary

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
    violations: list = field(default_factory=list)  # output.Finding: placed in the file, or a notebook cell
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
    p.add_argument("--strict", action=argparse.BooleanOptionalAction, default=None,
                   help="also report tensors of unknown origin")
    p.add_argument("--numpy-fix", choices=("detach", "force"), default=None,
                   help="how NumPy conversions are fixed: t.detach().cpu().numpy() (detach, the default) "
                   "or t.numpy(force=True)")
    p.add_argument("--generator-names", type=_csv, default=None, metavar="NAMES",
                   help="extra names of generator modules (TNS3xx), comma separated")
    p.add_argument("--discriminator-names", type=_csv, default=None, metavar="NAMES",
                   help="extra names of discriminator modules (TNS3xx), comma separated")
    p.add_argument("--unsafe-fixes", action=argparse.BooleanOptionalAction, default=None,
                   help="also apply (fix) or count as fixable (check) the fixes marked unsafe")
    p.add_argument("--output-format", choices=_output.FORMATS, default="text",
                   help="how findings are printed (default: text)")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead")
    p.add_argument("--config", default=None, metavar="PYPROJECT",
                   help="read [tool.tensorcopy] from this file instead of looking for one")
    p.add_argument("--isolated", action="store_true", help="ignore all configuration files")
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
    sub.add_parser("rules", help="list the rules")
    sub.add_parser("lsp", help="run the language server (stdio); needs flake8-tensorcopy[lsp]")
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


SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


def discover(paths, exclude, excluded_by_config=None) -> tuple[list[str], list[tuple[str, str]]]:
    """Python files and notebooks under `paths`, and (path, error) for paths that do not exist.

    `excluded_by_config(path)`: the configuration's `exclude`, which like `--exclude` also
    applies to files named on the command line (pre-commit names every file)."""
    files, errors = [], []
    patterns = list(DEFAULT_EXCLUDE) + list(exclude)
    user_patterns = list(exclude)
    by_config = excluded_by_config or (lambda path: False)
    for p in paths:
        if p == "-":
            files.append(p)
            continue
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                keep = []
                for d in sorted(dirs):
                    full = os.path.join(root, d)
                    if (_excluded(full, patterns) or by_config(full)
                            or os.path.exists(os.path.join(full, "pyvenv.cfg"))):
                        continue
                    keep.append(d)
                dirs[:] = keep
                for n in sorted(names):
                    full = os.path.join(root, n)
                    if n.endswith(SOURCE_SUFFIXES) and not _excluded(full, patterns) and not by_config(full):
                        if not _special(full):
                            files.append(full)
        elif os.path.exists(p) or os.path.islink(p):
            if not _excluded(p, user_patterns) and not by_config(p):
                files.append(p)
        else:
            errors.append((p, "no such file or directory"))
    return files, errors


def _special(path: str) -> bool:
    """A FIFO, socket or device (opening a FIFO named x.py would hang the run).  A link that
    cannot be followed is not special: reading it reports the error."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def write_atomic(path: str, data: bytes) -> None:
    """Write via a temporary file in the same directory and a rename, keeping the mode (and the
    owner, where we may).  A symlink is written through: its target gets the new text."""
    path = os.path.realpath(path)  # renaming over a symlink would replace the link, not the file
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    # Read-only means read-only, also for root (who os.access() says may write anything).
    if not os.access(path, os.W_OK) or not st.st_mode & 0o222:
        raise PermissionError(13, "file is read-only")
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".tensorcopy-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
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
    per_file_ignores: tuple = ()  # ((glob, (prefix, ...)), ...) from the configuration
    root: str = "."  # what those globs are relative to


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
    ignored = _config.ignored_prefixes(display if path == "-" else path, job.per_file_ignores, job.root)
    rules = [get_rule(c) for c in job.codes if not c.startswith(ignored)]

    def keep(violations):
        return [v for v in violations if not v.code.startswith(ignored)]

    if _notebook.is_notebook(display):
        return _process_notebook(path, display, job, data, st, rules, keep, report)
    try:
        decoded = decode(data)
    except DecodeError as exc:
        report.error = f"cannot decode: {exc}"
        return report
    try:
        if job.mode == "check":
            result = lint_text(decoded.text, rules, job.options, honor_noqa=job.noqa)
            found = keep(result.violations)
            if found:
                lines = LineIndex(decoded.text)
                report.violations = [_output.place(v, lines) for v in found]
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
    lines = LineIndex(fixed.text)
    report.violations = [_output.place(v, lines) for v in keep(fixed.remaining)]
    report.fixed = len(fixed.applied)
    if fixed.text != decoded.text and not fixed.error:

        def relint():
            original = LineIndex(decoded.text)
            return [_output.place(v, original) for v in keep(lint_text(decoded.text, rules, job.options).violations)]

        try:
            new_bytes = encode_edited(decoded, data, fixed.text)
        except DecodeError as exc:
            report.error = f"cannot fix: {exc}"
            report.violations, report.fixed = relint(), 0
            if path == "-":
                report.new_source = data
            return report
        _deliver(report, path, job, decoded.text, fixed.text, new_bytes, relint)
    elif path == "-":
        report.new_source = data
    return report


def _process_notebook(path, display, job, data, st, rules, keep, report) -> FileReport:
    try:
        nb = _notebook.parse(data)
    except _notebook.NotebookError as exc:
        report.error = f"cannot read: {exc}"
        return report
    try:
        if job.mode == "check":
            result = _notebook.lint(nb, rules, job.options, honor_noqa=job.noqa)
            report.violations = keep(result.findings)
            report.error = f"cannot parse: {result.error}" if result.error else None
            if st is not None:
                report.stamp = (content_hash(data), st.st_size, st.st_mtime_ns)
            return report
        result = _notebook.fix(nb, rules, job.options, unsafe=job.unsafe)
    except Exception as exc:  # a bug in a rule must not cost the user the rest of the run
        report.error = f"internal error: {type(exc).__name__}: {exc} (please report it)"
        return report
    if result.error:
        verb = "cannot fix" if "fix produced" in result.error else "cannot parse"
        report.error = f"{verb}: {result.error}"
    report.violations = keep(result.findings)
    report.fixed = result.fixed
    if result.text is not None and not result.error:

        def relint():
            return keep(_notebook.lint(nb, rules, job.options).findings)

        _deliver(report, path, job, nb.text, result.text, _notebook.encode(nb, result.text), relint)
    elif path == "-":
        report.new_source = data
    return report


def _deliver(report: FileReport, path: str, job: Job, old: str, new: str, new_bytes: bytes, relint) -> None:
    """Show (--diff), return (stdin) or write the fixed text."""
    if job.diff:
        name = report.path.lstrip("/")
        # Lines end where Python's end (\r\n, \r, \n), not also at \f or \u2028 as with
        # str.splitlines, which put wrong line numbers in the hunk headers.
        report.diff = "".join(
            difflib.unified_diff(io.StringIO(old, newline="").readlines(), io.StringIO(new, newline="").readlines(),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
        )
    elif path == "-":
        report.new_source = new_bytes
    else:
        try:
            write_atomic(path, new_bytes)
        except OSError as exc:
            report.error = f"cannot write: {exc.strerror or exc}"
            report.violations = relint()
            report.fixed = 0


def _process_star(args):
    return process(*args)


def run_all(files, job: Job, stdin_name: str, jobs: int) -> list[FileReport]:
    tasks = [(f, stdin_name if f == "-" else f, job) for f in files]
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    if workers > 1 and len(tasks) >= _PARALLEL_MIN_FILES and "-" not in files:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(_process_star, tasks, chunksize=16))
    return [process(*t) for t in tasks]


# --------------------------------------------------------------------------- configuration and output


def _load_config(args, paths) -> _config.Config:
    """The one configuration for this run: --config, else the closest one to the first path."""
    if args.isolated:
        return _config.Config(root=os.getcwd())
    if args.config:
        if not os.path.isfile(args.config):
            raise UsageError(f"{args.config}: no such configuration file")
        return _config.load(args.config)
    first = paths[0] if paths else "."
    if first == "-":
        first = args.stdin_filename or "."
    return _config.discover(first)


def cmd_check_or_fix(args, mode: str) -> int:
    paths = args.paths or ["."]
    try:
        settings = _config.resolve(
            _load_config(args, paths),
            select=args.select, ignore=args.ignore, extend_select=args.extend_select, strict=args.strict,
            unsafe_fixes=args.unsafe_fixes, numpy_fix=args.numpy_fix, generator_names=args.generator_names,
            discriminator_names=args.discriminator_names,
        )
    except _config.ConfigError as exc:
        raise UsageError(str(exc)) from None
    codes, options = settings.codes, settings.options
    exclude = [g for e in args.exclude for g in _csv(e)]

    def excluded_by_config(path: str) -> bool:
        return any(_config.path_matches(path, g, settings.root) for g in settings.exclude)

    files, missing = discover(paths, exclude, excluded_by_config if settings.exclude else None)
    job = Job(mode, codes, options, settings.unsafe_fixes, getattr(args, "diff", False), not args.no_noqa,
              settings.per_file_ignores, settings.root)
    stdin_name = args.stdin_filename or "-"
    cache = None
    if mode == "check" and not args.no_cache:
        cache = Cache(args.cache_dir, config_key(codes, options, job.noqa, job.per_file_ignores, job.root))
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
    fmt = args.output_format
    text = fmt == "text" and not args.statistics
    status = 0
    total = fixable = unsafe_fixable = fixed = 0
    findings = []
    for path, why in missing:
        print(f"error: {path}: {why}", file=err)
        status = 2
    for r in reports:
        if r.error:
            print(f"error: {r.path}: {r.error}", file=err)
            status = 2
        for v in r.violations:
            if text:
                print(_output.text_line(r.path, v), file=diag)
            findings.append((r.path, v))
            total += 1
            if v.fix is not None:
                if v.fix.safety == "safe" or job.unsafe:
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
    if args.statistics:
        diag.write(_output.render_statistics(findings, fmt, job.unsafe))
    elif not text:
        diag.write(_output.render(fmt, findings, codes))
    if mode == "check":
        if text:
            print(_output.summary(total, fixable, unsafe_fixable), file=diag)
    else:
        verb = "Would fix" if job.diff else "Fixed"
        line = f"{verb} {fixed} problem{'s' if fixed != 1 else ''}"
        if total:
            line += f"; {total} remaining (not fixable automatically"
            line += f", {unsafe_fixable} with --unsafe-fixes)" if unsafe_fixable and not job.unsafe else ")"
        print(line + ".", file=err if (job.diff or fixing_stdin or not text) else out)
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
    if argv and argv[0] not in ("check", "fix", "rules", "explain", "lsp", "-h", "--help", "--version"):
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
        if args.command == "lsp":
            from .lsp import main as lsp_main

            return lsp_main()
        return cmd_check_or_fix(args, args.command)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1
