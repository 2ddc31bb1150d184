"""`tensorcopy`: check and fix from the command line (and pre-commit).  A shell over the engine.

Exit codes (ruff's): 0 nothing found (or everything fixed), 1 findings remain, 2 an error: a
usage error, a path that cannot be read, decoded or parsed, a file or an output that cannot
be written.  A run with an error never prints a success line.

Paths are printed as given, without a leading `./` (`tensorcopy check` with no path prints
`pkg/mod.py`, like ruff), in every output format and in `--diff` headers.
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
from . import noqa as _noqa
from .cache import CACHE_DIR, Cache, config_key, content_hash, default_dir
from .engine import fix_text, lint_text
from .rules.base import Options, all_rules, get_rule
from .source import DecodeError, LineIndex, decode, encode_edited, is_probably_binary

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".eggs", "__pycache__",
    "build", "dist", "node_modules", "site-packages", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".tensorcopy_cache", "*.egg-info", ".ipynb_checkpoints",
)
_PARALLEL_MIN_FILES = 64  # with no --jobs: fewer files are checked in this process
_FILES_PER_WORKER = 4  # never more processes than there are files to keep them busy
COMMANDS = ("check", "fix", "rules", "explain", "lsp")
NO_FILES = "warning: No Python files found under the given path(s)"


class UsageError(Exception):
    pass


@dataclass
class FileReport:
    path: str
    violations: list = field(default_factory=list)  # output.Finding: placed in the file, or a notebook cell
    error: str | None = None  # one message a line (a notebook may have several cells that do not parse)
    fixed: int = 0
    diff: str = ""
    new_source: bytes | None = None  # for stdin fixes
    stamp: tuple | None = None  # (sha256, size, mtime_ns) of what was checked, for the cache


# --------------------------------------------------------------------------- arguments


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _jobs(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes (0: automatic)")
    return n


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
    p.add_argument("--jobs", "-j", type=_jobs, default=0,
                   help="processes, at most one per 4 files (default, 0: one per CPU for large trees)")
    p.add_argument("--no-noqa", action="store_true", help="ignore '# noqa' comments")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help=f"where `check` keeps its result cache (default: {CACHE_DIR} in the project root, the "
                   "nearest directory with a pyproject.toml or .git, else the current directory)")


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
    sub.add_parser("lsp", help="run the language server (stdio); needs pygls 2 (the [lsp] extra)")
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


def display_path(path: str) -> str:
    """`path` as printed: without the `./` that walking `.` puts in front (ruff prints none)."""
    prefix = "." + os.sep
    while path.startswith(prefix) or path.startswith("./"):
        path = path[2:].lstrip("/" + os.sep) or "."
    return path


def discover(paths, exclude, excluded_by_config=None) -> tuple[list[str], list[tuple[str, str]]]:
    """Python files and notebooks under `paths`, and (path, error) for paths that cannot be
    checked (missing, or not a regular file: reading a FIFO would wait for a writer forever).

    A file reached twice (through a symlink and directly, or named twice) is checked once.
    `excluded_by_config(path)`: the configuration's `exclude`, which like `--exclude` also
    applies to files named on the command line (pre-commit names every file)."""
    files, errors = [], []
    seen: set = set()
    patterns = list(DEFAULT_EXCLUDE) + list(exclude)
    user_patterns = list(exclude)
    by_config = excluded_by_config or (lambda path: False)

    def add(path: str) -> None:
        try:
            st = os.stat(path)
        except OSError:  # dangling or looping link: reading it reports the error
            files.append(display_path(path))
            return
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            files.append(display_path(path))

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
                            add(full)
        elif os.path.exists(p) or os.path.islink(p):
            if not _excluded(p, user_patterns) and not by_config(p):
                if _special(p):
                    errors.append((display_path(p), "cannot read: not a regular file"))
                else:
                    add(p)
        else:
            errors.append((display_path(p), "no such file or directory"))
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
    internal: bool = True  # report TNS000 ("file not analysed")


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
    rules = [r for r in (get_rule(c) for c in job.codes if not c.startswith(ignored)) if r is not None]

    def keep(violations, lines=None):
        # TNS000 comes without the engine's noqa pass: selection, per-file-ignores and noqa here.
        return [v for v in violations if not v.code.startswith(ignored) and (
            v.code != _config.INTERNAL or job.internal and not (
                job.noqa and lines is not None and _noqa.suppressed(lines, v.line, v.code)))]

    if _notebook.is_notebook(display):
        return _process_notebook(path, display, job, data, st, rules, keep, report)
    try:
        decoded = decode(data)
    except DecodeError as exc:
        report.error = f"cannot decode: {exc}"
        return report
    nul = decoded.text.find("\x00")
    if nul >= 0:  # past the binary sniff: the parser would say so without a position
        line, col = LineIndex(decoded.text).position(nul)
        report.error = ("cannot parse: SyntaxError: source code cannot contain null bytes "
                        f"(line {line}, column {col + 1})")
        if job.mode == "check" and st is not None:
            report.stamp = (content_hash(data), st.st_size, st.st_mtime_ns)
        return report
    try:
        if job.mode == "check":
            result = lint_text(decoded.text, rules, job.options, honor_noqa=job.noqa)
            if result.violations:
                lines = LineIndex(decoded.text)
                report.violations = [_output.place(v, lines) for v in keep(result.violations, lines)]
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
    report.violations = [_output.place(v, lines) for v in keep(fixed.remaining, lines)]
    report.fixed = len(fixed.applied)
    if fixed.text != decoded.text and not fixed.error:

        def relint():
            original = LineIndex(decoded.text)
            return [_output.place(v, original)
                    for v in keep(lint_text(decoded.text, rules, job.options).violations, original)]

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
            report.error = _notebook_errors(result.errors)
            if st is not None:
                report.stamp = (content_hash(data), st.st_size, st.st_mtime_ns)
            return report
        result = _notebook.fix(nb, rules, job.options, unsafe=job.unsafe)
    except Exception as exc:  # a bug in a rule must not cost the user the rest of the run
        report.error = f"internal error: {type(exc).__name__}: {exc} (please report it)"
        return report
    report.error = _notebook_errors(result.errors)
    report.violations = keep(result.findings)
    report.fixed = result.fixed
    if result.text is not None and not any("fix produced" in e for e in result.errors):
        # Cells that do not parse are left alone; the others are fixed and written.

        def relint():
            return keep(_notebook.lint(nb, rules, job.options).findings)

        _deliver(report, path, job, nb.text, result.text, _notebook.encode(nb, result.text), relint)
    elif path == "-":
        report.new_source = data
    return report


def _notebook_errors(errors) -> str | None:
    return "\n".join(f"{'cannot fix' if 'fix produced' in e else 'cannot parse'}: {e}" for e in errors) or None


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
            report.error = "\n".join(filter(None, [report.error, f"cannot write: {exc.strerror or exc}"]))
            report.violations = relint()
            report.fixed = 0


def _process_star(args):
    return process(*args)


def workers_for(files: int, jobs: int) -> int:
    """Processes for `files` files: `--jobs` (0: one per CPU, for large trees only), but never
    more than the files can keep busy."""
    if jobs == 0:
        if files < _PARALLEL_MIN_FILES:
            return 1
        jobs = os.cpu_count() or 1
    return max(1, min(jobs, -(-files // _FILES_PER_WORKER)))


def run_all(files, job: Job, stdin_name: str, jobs: int) -> list[FileReport]:
    tasks = [(f, stdin_name if f == "-" else f, job) for f in files]
    workers = workers_for(len(tasks), jobs)
    if workers > 1 and "-" not in files:
        chunk = max(1, min(16, len(tasks) // (workers * 4)))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(_process_star, tasks, chunksize=chunk))
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
    if args.statistics and args.output_format not in ("text", "json", "json-lines"):
        raise UsageError(f"--statistics prints text, json or json-lines, not {args.output_format}")
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
              settings.per_file_ignores, settings.root, settings.internal)
    stdin_name = display_path(args.stdin_filename) if args.stdin_filename else "-"
    cache = None
    if mode == "check" and not args.no_cache:
        first = paths[0] if paths[0] != "-" else (args.stdin_filename or ".")
        cache = Cache(args.cache_dir or default_dir(first),
                      config_key(codes, options, job.noqa, job.per_file_ignores, job.root, job.internal))
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
    return _printing(_print_results, args, mode, job, files, missing, reports)


def _printing(fn, *args) -> int:
    """Run `fn`, which prints; an output that cannot be written (a full disk, a closed pipe) is
    exit status 2 with a message, never a traceback and never 1 ("findings")."""
    try:
        status = fn(*args)
        sys.stdout.flush()
        return status
    except OSError as exc:
        try:  # so that the interpreter's last flush of stdout cannot fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        if not isinstance(exc, BrokenPipeError):  # the reader went away: nothing to say
            try:
                print(f"error: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
            except OSError:
                pass
        return 2


def _print_results(args, mode, job: Job, files, missing, reports) -> int:
    out = sys.stdout
    err = sys.stderr
    fixing_stdin = mode == "fix" and "-" in files and not job.diff
    # stdout carries the fixed source (`fix -`) or the patch (`fix --diff`) and nothing else:
    # findings and summaries go to stderr then.
    diag = err if (fixing_stdin or job.diff) else out
    fmt = args.output_format
    text = fmt == "text" and not args.statistics
    errors = 0
    total = fixable = unsafe_fixable = manual = fixed = 0
    findings = []
    if not files and not missing:
        print(NO_FILES, file=err)
    for path, why in missing:
        print(f"error: {path}: {why}", file=err)
        errors += 1
    for r in reports:
        if r.error:
            for line in r.error.splitlines():
                print(f"error: {r.path}: {line}", file=err)
                errors += 1
        for v in r.violations:
            if text:
                print(_output.text_line(r.path, v), file=diag)
            findings.append((r.path, v))
            total += 1
            if v.fix is None:
                manual += 1
            elif v.fix.safety == "safe" or job.unsafe:
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
        diag.write(_output.render(fmt, findings, job.codes))
    if mode == "check":
        if text:
            print(_output.summary(total, fixable, unsafe_fixable, errors), file=diag)
    else:
        print(_fix_summary(job, fixed, total, fixable, unsafe_fixable, manual, errors),
              file=err if (job.diff or fixing_stdin or not text) else out)
    if errors:
        return 2
    return 1 if total or (job.diff and fixed) else 0


def _fix_summary(job: Job, fixed, total, fixable, unsafe_fixable, manual, errors) -> str:
    line = f"{'Would fix' if job.diff else 'Fixed'} {fixed} problem{'s' if fixed != 1 else ''}"
    if total:
        why = []
        if manual:
            why.append(f"{manual} not fixable automatically")
        if unsafe_fixable:
            why.append(f"{unsafe_fixable} with --unsafe-fixes")
        if fixable:  # fixable, but their file could not be written, or a fix in it broke the code
            why.append(f"{fixable} fixable but not written")
        line += f"; {total} remaining ({', '.join(why)})"
    if errors:
        line += f"; {errors} error{'s' if errors != 1 else ''}"
    return line + "."


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


def _unknown_command(word: str) -> str | None:
    """Why `word`, in the place of a command, is neither a command nor a path: `tensorcopy chek`
    is a typo, not a request to check a file named chek."""
    if word.startswith("-") or os.path.lexists(word) or os.sep in word or "/" in word or "." in word:
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=1)
    hint = f"; did you mean `tensorcopy {close[0]}`?" if close else ""
    return f"{word!r} is not a command ({', '.join(COMMANDS)}) or an existing path{hint}"


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in (*COMMANDS, "-h", "--help", "--version"):
        why = _unknown_command(argv[0])
        if why is not None:
            print(f"error: {why}", file=sys.stderr)
            return 2
        argv.insert(0, "check")  # `tensorcopy src/` means `tensorcopy check src/`
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code not in (0, None) else 0
    try:
        if args.command in (None,):
            args = parser.parse_args(["check", *argv])
        if args.command == "rules":
            return _printing(cmd_rules)
        if args.command == "explain":
            return _printing(cmd_explain, args.code)
        if args.command == "lsp":
            from .lsp import main as lsp_main

            return lsp_main()
        return cmd_check_or_fix(args, args.command)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
