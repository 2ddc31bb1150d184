"""`tensorcopy`: check and fix from the command line (and pre-commit).  A shell over the engine.

Flags, names and exit statuses follow ruff's (`ruff check`), so that a ruff user's habits
carry over; the differences are deliberate and listed in the README.  Exit codes: 0 nothing
found (or everything fixed), 1 findings remain (or, with `--exit-non-zero-on-fix`, something
was fixed), 2 an error: a usage error, a path that cannot be read, decoded or parsed, a file or
an output that cannot be written.  `--exit-zero` turns 1 into 0, never 2 into 0.  A run with an
error never prints a success line.

Paths are printed as given, without a leading `./` (`tensorcopy check` with no path prints
`pkg/mod.py`, like ruff), in every output format and in `--diff` headers.

Start-up matters (editors and pre-commit start this once per file): only what every run needs is
imported here; argparse when there are arguments to parse, the output formats, notebooks,
configuration files, process pools, temporary files and diffs only when a run uses them
(benchmarks/startup.py measures it).
"""

from __future__ import annotations

import gc
import os
import stat
import sys

# Importing the rules and the analysis allocates a few hundred thousand objects and frees almost
# none: the cyclic collector, which runs every 700 allocations, would only slow it down (by a
# sixth of a one-file run).
_collecting = gc.isenabled()
gc.disable()
try:
    from . import __version__
    from . import cache as _cache
    from . import config as _config
    from . import output as _output
    from .engine import fix_text, lint_text, parse_error
    from .model import INTERNAL, ErrorKind, Options
    from .reach import DEFAULT_EXCLUDE  # (the paths a run skips; the project's callers are looked for outside them)
    from .rules.base import all_rules, get_rule
    from .selection import Selection, inside, path_matches
    from .source import DecodeError, LineIndex, decode, encode_edited, is_probably_binary, write_and_rename
finally:
    if _collecting:
        gc.enable()

_PARALLEL_MIN_FILES = 64  # with no --jobs: fewer files are checked in this process
_FILES_PER_WORKER = 4  # never more processes than there are files to keep them busy
COMMANDS = ("check", "fix", "rules", "explain", "lsp", "clean")
NO_FILES = "warning: No Python files found under the given path(s)"
# Flags that may come before the command (`tensorcopy -q check`), as ruff's global ones.
_GLOBAL_FLAGS = ("-q", "--quiet", "-s", "--silent")
# The summary cache is written after a file at most this often (analysis/project.py, flush).
_FLUSH_EVERY_S = 1.0
# Progress: drawn on a terminal once a run has taken this long, redrawn at most this often.
PROGRESS_AFTER_S = 0.5
PROGRESS_EVERY_S = 0.1

# Imported on first use (`cli.tempfile`, `cli.ProcessPoolExecutor`, ...): most runs need none.
_LAZY = {"tempfile": ("tempfile", None), "ProcessPoolExecutor": ("concurrent.futures", "ProcessPoolExecutor"),
         "difflib": ("difflib", None), "shutil": ("shutil", None)}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    value = getattr(value, attr) if attr else value
    globals()[name] = value
    return value


def _lazy(name: str):
    """A lazily imported name, as the module sees it (tests replace some of them)."""
    return getattr(sys.modules[__name__], name)


class UsageError(Exception):
    pass


# How each kind of error (model.ErrorKind) reads after `error: PATH: `.
_CANNOT = {ErrorKind.READ: "cannot read", ErrorKind.DECODE: "cannot decode", ErrorKind.SYNTAX: "cannot parse",
           ErrorKind.TOO_DEEP: "cannot parse", ErrorKind.BROKEN_FIX: "cannot fix", ErrorKind.ENCODE: "cannot fix",
           ErrorKind.WRITE: "cannot write"}


def error_text(kind: ErrorKind, message) -> str:
    if kind is ErrorKind.INTERNAL:
        return f"internal error: {message} (please report it)"
    return f"{_CANNOT[kind]}: {message}"


class FileReport:
    """What happened to one file."""

    __slots__ = ("path", "violations", "error", "fixed", "applied", "diff", "new_source", "stamp", "deps")

    def __init__(self, path: str, violations=None, error: str | None = None, fixed: int = 0, applied=None,
                 diff: str = "", new_source: bytes | None = None, stamp: tuple | None = None) -> None:
        self.path = path
        self.violations = violations if violations is not None else []  # output.Finding: in the file or a cell
        self.error = error  # one message a line (a notebook may have several cells that do not parse)
        self.fixed = fixed
        self.applied = applied if applied is not None else []  # (code, fix title) of each fix applied
        self.diff = diff
        self.new_source = new_source  # for stdin fixes
        self.stamp = stamp  # (hash, size, mtime_ns) of what was checked, for the cache
        self.deps: dict = {}  # path -> content hash of the project modules the result depends on


class Job:
    """What to do with each file (sent to worker processes: plain, picklable values)."""

    __slots__ = ("mode", "codes", "options", "unsafe", "diff", "noqa", "per_file_ignores", "root", "internal",
                 "project_root", "summary_cache")

    def __init__(self, mode: str, codes: tuple, options: Options, unsafe: bool = False, diff: bool = False,
                 noqa: bool = True, per_file_ignores: tuple = (), root: str = ".", internal: bool = True,
                 project_root: str | None = None, summary_cache: str | None = None) -> None:
        self.mode = mode  # "check" or "fix"
        self.codes = codes
        self.options = options
        self.unsafe = unsafe
        self.diff = diff
        self.noqa = noqa
        self.per_file_ignores = per_file_ignores  # ((glob, (prefix, ...)[, root]), ...)
        self.root = root  # what the globs without their own root are relative to
        self.internal = internal  # report TNS000 ("file not analysed")
        self.project_root = project_root  # whose modules' summaries the analysis may use
        self.summary_cache = summary_cache  # the cache directory that keeps them (None: none)

    @property
    def selection(self) -> Selection:
        return Selection(self.codes, self.internal, self.per_file_ignores, self.root)

    def __getstate__(self):
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state) -> None:
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)


# --------------------------------------------------------------------------- arguments


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _jobs(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        import argparse

        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes (0: automatic)")
    return n


def _add_common(p, mode: str, on_off=None) -> None:
    """The arguments of `check` and `fix`, added to `p` (an argparse parser, or a _Recorder: the
    declarations the fast path reads are argparse's own)."""
    if on_off is None:
        import argparse

        on_off = argparse.BooleanOptionalAction
    p.add_argument("paths", nargs="*", default=None, help="files or directories ('-' for stdin); default: .")
    rules = p.add_argument_group("rule selection")
    rules.add_argument("--select", type=_csv, default=None, metavar="CODES",
                       help="comma-separated code prefixes to enable (default: TNS)")
    rules.add_argument("--ignore", type=_csv, default=[], metavar="CODES", help="code prefixes to disable")
    rules.add_argument("--extend-select", type=_csv, default=[], metavar="CODES",
                       help="code prefixes to enable on top of --select")
    rules.add_argument("--per-file-ignores", action="append", default=None, metavar="GLOB:CODES",
                       help="code prefixes to disable in the files a glob matches, as in flake8 "
                       "('tests/*:TNS2 scripts/*.py:TNS401,TNS402'); replaces the configuration's table")
    rules.add_argument("--extend-per-file-ignores", action="append", default=[], metavar="GLOB:CODES",
                       help="like --per-file-ignores, added to the configuration's table")
    files = p.add_argument_group("file selection")
    files.add_argument("--exclude", action="append", default=None, metavar="GLOBS",
                       help="comma-separated globs of paths to skip, instead of the built-in list (.git, .venv, "
                       "build, dist, ...) and the configuration's `exclude`")
    files.add_argument("--extend-exclude", action="append", default=[], metavar="GLOBS",
                       help="comma-separated globs of paths to skip, on top of the excluded ones")
    files.add_argument("--force-exclude", action=on_off, default=None,
                       help="apply the exclusions to paths named on the command line too (pre-commit names "
                       "every file)")
    files.add_argument("--show-files", action="store_true", help="list the files that would be checked, and exit")
    analysis = p.add_argument_group("analysis")
    analysis.add_argument("--strict", action=on_off, default=None, help="also report tensors of unknown origin")
    analysis.add_argument("--numpy-fix", choices=("detach", "force"), default=None,
                          help="how NumPy conversions are fixed: t.detach().cpu().numpy() (detach, the default) "
                          "or t.numpy(force=True)")
    analysis.add_argument("--generator-names", type=_csv, default=None, metavar="NAMES",
                          help="extra names of generator modules (TNS3xx), comma separated")
    analysis.add_argument("--discriminator-names", type=_csv, default=None, metavar="NAMES",
                          help="extra names of discriminator modules (TNS3xx), comma separated")
    fixes = p.add_argument_group("fixes")
    if mode == "check":
        fixes.add_argument("--fix", action=on_off, default=False,
                           help="apply the fixes in place, as `tensorcopy fix` does")
    fixes.add_argument("--unsafe-fixes", action=on_off, default=None,
                       help="also apply (fix) or count as fixable (check) the fixes marked unsafe")
    fixes.add_argument("--diff", action="store_true",
                       help="print a unified diff of the fixes on stdout and write nothing")
    fixes.add_argument("--show-fixes", action=on_off, default=False,
                       help="show each fix's title: under each fixable finding (check), or a list of the fixes "
                       "applied per file (fix)")
    fixes.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit with status 1 when anything was fixed, even if nothing remains")
    out = p.add_argument_group("output")
    out.add_argument("--output-format", choices=_output.FORMATS, default="text",
                     help="how findings are printed (default: text; concise is the same, by ruff's name)")
    out.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit with status 0 even when findings remain (errors still exit with 2)")
    out.add_argument("-q", "--quiet", action="store_true",
                     help="print the findings and nothing else: no summary line, warning or progress")
    out.add_argument("-s", "--silent", action="store_true",
                     help="print nothing (fixed source and diffs aside); the exit status still tells")
    out.add_argument("--progress", action=on_off, default=None,
                     help="show progress on stderr (default: on a terminal, for runs that take a while)")
    out.add_argument("--show-settings", action="store_true",
                     help="print the settings this run would use, and exit")
    cfg = p.add_argument_group("configuration and cache")
    cfg.add_argument("--config", default=None, metavar="PYPROJECT",
                     help="read [tool.tensorcopy] from this file instead of looking for one")
    cfg.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    cfg.add_argument("--stdin-filename", default=None, metavar="PATH", help="the name to report for '-'")
    cfg.add_argument("--project-root", default=None, metavar="DIR",
                     help="the project whose modules the analysis follows across files (default: the nearest "
                     "directory with a pyproject.toml, setup.cfg, setup.py or .git above the first path)")
    cfg.add_argument("--jobs", "-j", type=_jobs, default=0,
                     help="processes, at most one per 4 files (default, 0: one per CPU for large trees)")
    cfg.add_argument("--no-noqa", "--ignore-noqa", dest="no_noqa", action="store_true",
                     help="ignore '# noqa' comments")
    cfg.add_argument("--no-cache", action="store_true",
                     help="do not read or write the caches (results of `check`, summaries of project modules)")
    cfg.add_argument("--cache-dir", default=None, metavar="DIR",
                     help=f"where the caches are kept: results of `check`, summaries of project modules (default: "
                     f"{_cache.CACHE_DIR} in the project root, the nearest directory with a pyproject.toml or .git, "
                     "else the current directory)")


class _Recorder:
    """Stands for an argparse parser and its argument groups in `_add_common`: keeps each
    argument's option strings and keywords."""

    def __init__(self) -> None:
        self.arguments: list = []

    def add_argument(self, *names, **kwargs) -> None:
        self.arguments.append((names, kwargs))

    def add_argument_group(self, *args, **kwargs):
        return self


_ON_OFF = "on-off"  # BooleanOptionalAction, as _Recorder keeps it
_FAST: dict = {}  # command -> (option string -> (dest, kind, argument's keywords), defaults)


def _fast_table(command: str) -> tuple:
    """(option string -> (dest, kind, keywords), the defaults) of `command`'s arguments, as
    `_add_common` declares them."""
    found = _FAST.get(command)
    if found is None:
        recorder = _Recorder()
        _add_common(recorder, command, on_off=_ON_OFF)
        options, defaults = {}, {"command": command}
        for names, kwargs in recorder.arguments:
            action = kwargs.get("action")
            if not names[0].startswith("-"):  # (the paths)
                continue
            longs = [n for n in names if n.startswith("--")]
            dest = kwargs.get("dest") or (longs[0] if longs else names[0]).lstrip("-").replace("-", "_")
            defaults[dest] = kwargs.get("default", False if action == "store_true" else None)
            for name in names:
                options[name] = (dest, action, kwargs)
            if action == _ON_OFF:
                for name in longs:
                    options["--no-" + name[2:]] = (dest, "off", kwargs)
        found = _FAST[command] = (options, defaults)
    return found


def _fast_args(argv: list):
    """The arguments of `check` or `fix` (`argv[0]`) as argparse parses them, without argparse
    (importing it and building the parser is a tenth of a one-file check), for the plain forms
    editors and hooks use: long options as `--name`, `--name value` or `--name=value`; `-q`, `-s`
    and `-j N`; and paths (`-` too) in one run.  None for anything else (help, abbreviations,
    `--`, short options together, a value that starts with `-`, a value argparse would refuse):
    argparse parses that, and says what is wrong.  tests/test_flags.py holds it to argparse."""
    import types

    options, defaults = _fast_table(argv[0])
    values = {k: list(v) if type(v) is list else v for k, v in defaults.items()}
    paths = None
    previous_was_path = False
    i = 1
    while i < len(argv):
        token = argv[i]
        i += 1
        if token == "-" or not token.startswith("-"):
            if paths is None:
                paths = []
            elif not previous_was_path:
                return None  # (paths on both sides of an option: argparse takes one run of them)
            paths.append(token)
            previous_was_path = True
            continue
        previous_was_path = False
        name, eq, value = token.partition("=")
        known = options.get(name)
        if known is None or (eq and not name.startswith("--")):
            return None
        dest, action, kwargs = known
        if action in ("store_true", _ON_OFF, "off"):
            if eq:
                return None
            values[dest] = action != "off"
            continue
        if action not in (None, "append"):
            return None
        if not eq:
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        convert = kwargs.get("type")
        try:
            value = convert(value) if convert is not None else value
        except Exception:
            return None
        if "choices" in kwargs and value not in kwargs["choices"]:
            return None
        values[dest] = [*(values[dest] or ()), value] if action == "append" else value
    values["paths"] = paths if paths is not None else []
    return types.SimpleNamespace(**values)


def build_parser(command: str | None = None):
    """The argument parser.  `command`: the one command the parser is for (None: all of them,
    for `tensorcopy --help`).  argparse builds a help formatter for each argument and looks up
    translations for each parser, so a parser for every command would cost a one-file run more
    than its analysis does."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog, **kwargs) -> None:
            # The width argparse would look up through shutil (not imported otherwise).
            kwargs.setdefault("width", _terminal_width(80))
            super().__init__(prog, **kwargs)

    def wanted(name: str) -> bool:
        return command is None or command == name

    def add_parser(name: str, **kwargs):
        if wanted(name):
            return sub.add_parser(name, formatter_class=Formatter, **kwargs)
        return None

    parser = argparse.ArgumentParser(
        prog="tensorcopy",
        description="Find and fix PyTorch tensor-copy and autograd mistakes.",
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = add_parser("check", help="report problems (with --fix: and fix them)")
    if check is not None:
        _add_common(check, "check")
    fix = add_parser("fix", help="apply the safe fixes in place (the same as check --fix)")
    if fix is not None:
        _add_common(fix, "fix")
    rules = add_parser("rules", help="list the rules")
    if rules is not None:
        rules.add_argument("--output-format", choices=("text", "json"), default="text")
    add_parser("lsp", help="run the language server (stdio); needs pygls 2 (the [lsp] extra)")
    clean = add_parser("clean", help=f"remove the caches ({_cache.CACHE_DIR}) in the current directory and below")
    if clean is not None:
        clean.add_argument("-q", "--quiet", action="store_true", help="print nothing")
        clean.add_argument("-s", "--silent", action="store_true", help="print nothing (as --quiet)")
    explain = add_parser("explain", help="print one rule's documentation")
    if explain is not None:
        explain.add_argument("rule", metavar="CODE_OR_NAME",
                             help="a rule code (TNS201) or name (clone-before-detach)")
        explain.add_argument("--output-format", choices=("text", "json"), default="text")
    return parser


# --------------------------------------------------------------------------- files


def _excluded(path: str, patterns) -> bool:
    """Whether a glob from the command line (or a built-in one) matches `path`: its base name,
    the path as written, or its end (`src/gen` matches `a/src/gen`)."""
    if not patterns:
        return False
    import fnmatch

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


class Exclusions:
    """Which paths a run skips, with ruff's layering: `exclude` (the command line's, else the
    configuration's, else the built-in list) plus `extend-exclude` (both the command line's and
    the configuration's).  Globs from the command line and the built-in ones are matched as
    `_excluded` does; the configuration's relative to its directory (selection.path_matches)."""

    def __init__(self, cli_exclude=None, cli_extend=(), config_exclude=None, config_extend=(), root=".",
                 force: bool = False) -> None:
        if cli_exclude is not None:
            self.globs, self.config_globs = list(cli_exclude), []
        elif config_exclude is not None:
            self.globs, self.config_globs = [], list(config_exclude)
        else:
            self.globs, self.config_globs = list(DEFAULT_EXCLUDE), []
        self.globs += list(cli_extend)
        self.config_globs += list(config_extend)
        self.root = root
        self.force = force

    def __call__(self, path: str) -> bool:
        """Whether `path` itself matches (a directory being walked, or a file in it)."""
        return _excluded(path, self.globs) or any(path_matches(path, g, self.root) for g in self.config_globs)

    def named(self, path: str) -> bool:
        """Whether a path named on the command line is skipped: only with --force-exclude, when
        it or a directory above it (up to the current directory, or the configuration's
        directory) matches."""
        if not self.force:
            return False
        full = os.path.abspath(path)
        stop = None
        for anchor in (os.getcwd(), os.path.abspath(self.root)):
            if inside(full, anchor):
                stop = anchor
                break
        here = full
        while True:
            # Command-line globs see the path below the anchor; the configuration's find their
            # own way from the absolute path to its directory.
            shown = os.path.relpath(here, stop) if stop else here
            if shown != "." and (_excluded(shown, self.globs)
                                 or any(path_matches(here, g, self.root) for g in self.config_globs)):
                return True
            parent = os.path.dirname(here)
            if stop is None or here == stop or parent == here:
                return False
            here = parent


def discover(paths, exclude=(), exclusions: Exclusions | None = None):
    """(files, errors): the Python files and notebooks under `paths`, and (path, error) for the
    paths that cannot be checked (missing, or not a regular file: reading a FIFO would wait for
    a writer forever).

    `exclusions` decides what is skipped (default: the built-in list plus the `exclude` globs).
    A directory that holds a virtual environment (`pyvenv.cfg`) is always skipped.  A file
    reached twice (through a symlink and directly, or named twice) is checked once."""
    if exclusions is None:
        exclusions = Exclusions(cli_extend=exclude)
    files, errors = [], []
    seen: set = set()

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
            if exclusions.named(p):
                continue
            for root, dirs, names in os.walk(p):
                keep = []
                for d in sorted(dirs):
                    full = os.path.join(root, d)
                    if exclusions(full) or os.path.exists(os.path.join(full, "pyvenv.cfg")):
                        continue
                    keep.append(d)
                dirs[:] = keep
                for n in sorted(names):
                    full = os.path.join(root, n)
                    if n.endswith(SOURCE_SUFFIXES) and not exclusions(full) and not _special(full):
                        add(full)
        elif os.path.exists(p) or os.path.islink(p):
            if not exclusions.named(p):
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
    tempfile = _lazy("tempfile")
    path = os.path.realpath(path)  # renaming over a symlink would replace the link, not the file
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(22, "not a regular file")  # EINVAL
    # Read-only means read-only, also for root (who os.access() says may write anything).
    if not os.access(path, os.W_OK) or not st.st_mode & 0o222:
        raise PermissionError(13, "file is read-only")
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".tensorcopy-", suffix=".tmp", dir=directory)

    def keep_owner_and_mode(tmp: str) -> None:
        if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                pass
        os.chmod(tmp, st.st_mode & 0o7777)

    write_and_rename(fd, tmp, path, data, sync=True, prepare=keep_owner_and_mode)


# --------------------------------------------------------------------------- work


def _is_notebook(path: str) -> bool:
    return path.endswith(".ipynb")


_PROJECTS: dict = {}  # root -> analysis.project.Project, kept for the files of this process


def _project(job: Job):
    if job.project_root is None:
        return None
    from .analysis.project import Project

    project = _PROJECTS.get(job.project_root)
    if project is None:
        project = _PROJECTS[job.project_root] = Project(job.project_root, job.options, batch=True)
        if job.summary_cache is not None:
            project.store = _cache.summary_store(job.summary_cache, job.options)
    project.begin()
    return project


def _cache_dir(args, settings, first_path: str) -> str:
    """Where the caches go: `--cache-dir`, else the configuration's `cache-dir`, else
    `.tensorcopy_cache` in the project root."""
    cfg = settings.config.cache_dir if settings.config is not None else None
    return os.path.abspath(args.cache_dir or cfg or _cache.default_dir(first_path))


def process(path: str, display: str, job: Job) -> FileReport:
    try:
        return _process(path, display, job)
    finally:
        project = _PROJECTS.get(job.project_root) if job.project_root is not None else None
        if project is not None:
            project.flush(_FLUSH_EVERY_S)  # what this file added to the summary cache (a worker may end any time)


def _process(path: str, display: str, job: Job) -> FileReport:
    report = FileReport(display)
    try:
        st = os.stat(path) if path != "-" else None
        data = _read(path)
    except OSError as exc:
        report.error = error_text(ErrorKind.READ, exc.strerror or exc)
        return report
    if is_probably_binary(data):
        report.error = error_text(ErrorKind.READ, "not a text file (NUL bytes)")
        return report
    chosen = job.selection.for_path(display if path == "-" else path)
    project = _project(job)
    where = os.path.abspath(path if path != "-" else display) if display != "-" or path != "-" else None
    if _is_notebook(display):
        return _process_notebook(path, display, job, data, st, chosen, report, project, where)
    try:
        decoded = decode(data)
    except DecodeError as exc:
        report.error = error_text(ErrorKind.DECODE, exc)
        return report
    nul = decoded.text.find("\x00")
    if nul >= 0:  # past the binary sniff: the parser would say so without a position
        line, col = LineIndex(decoded.text).position(nul)
        error = parse_error(SyntaxError("source code cannot contain null bytes"), f" (line {line}, column {col + 1})")
        report.error = error_text(error.kind, error)
        if job.mode == "check" and st is not None:
            report.stamp = (_cache.content_hash(data), st.st_size, st.st_mtime_ns)
        return report
    rules = chosen.rules
    try:
        if job.mode == "check":
            result = lint_text(decoded.text, rules, job.options, honor_noqa=job.noqa, project=project, path=where)
            if project is not None:
                report.deps = {p: h for p, h in project.touched.items() if p != where}
            if result.violations:
                lines = LineIndex(decoded.text)
                report.violations = [_output.place(v, lines) for v in chosen.keep(result.violations)]
            report.error = error_text(result.error.kind, result.error) if result.error else None
            # (Not cached when the result rests on the text of every file of the project: a file
            # nobody imported may call one of its functions tomorrow; Project.files_mentioning.)
            if st is not None and (project is None or not project.scanned):
                report.stamp = (_cache.content_hash(data), st.st_size, st.st_mtime_ns)
            return report
        fixed = fix_text(decoded.text, rules, job.options, unsafe=job.unsafe, project=project, path=where)
    except Exception as exc:  # a bug in a rule must not cost the user the rest of the run
        report.error = error_text(ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")
        return report
    if fixed.error:
        report.error = error_text(fixed.error.kind, fixed.error)
    lines = LineIndex(fixed.text)
    report.violations = [_output.place(v, lines) for v in chosen.keep(fixed.remaining)]
    report.fixed = len(fixed.applied)
    report.applied = [(v.code, v.fix.title) for v in fixed.applied]
    if fixed.text != decoded.text and not fixed.error:

        def relint():
            original = LineIndex(decoded.text)
            return [_output.place(v, original)
                    for v in chosen.keep(lint_text(decoded.text, rules, job.options, project=project,
                                                   path=where).violations)]

        try:
            new_bytes = encode_edited(decoded, data, fixed.text)
        except DecodeError as exc:
            report.error = error_text(ErrorKind.ENCODE, exc)
            report.violations, report.fixed, report.applied = relint(), 0, []
            if path == "-":
                report.new_source = data
            return report
        _deliver(report, path, job, decoded.text, fixed.text, new_bytes, relint)
    elif path == "-":
        report.new_source = data
    return report


def _process_notebook(path, display, job, data, st, chosen, report, project=None, where=None) -> FileReport:
    from . import notebook as _notebook

    try:
        nb = _notebook.parse(data)
    except _notebook.NotebookError as exc:
        report.error = error_text(ErrorKind.READ, exc)
        return report
    rules = chosen.rules
    try:
        if job.mode == "check":
            result = _notebook.lint(nb, rules, job.options, honor_noqa=job.noqa, project=project, path=where)
            report.violations = chosen.keep(result.findings)
            report.error = _notebook_errors(result.errors)
            if st is not None:
                report.stamp = (_cache.content_hash(data), st.st_size, st.st_mtime_ns)
            return report
        result = _notebook.fix(nb, rules, job.options, unsafe=job.unsafe, project=project, path=where)
    except Exception as exc:  # a bug in a rule must not cost the user the rest of the run
        report.error = error_text(ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")
        return report
    report.error = _notebook_errors(result.errors)
    report.violations = chosen.keep(result.findings)
    report.fixed = result.fixed
    report.applied = [(v.code, v.fix.title) for v in result.applied]
    if result.text is not None:
        # Cells that do not parse are left alone; the others are fixed and written.

        def relint():
            return chosen.keep(_notebook.lint(nb, rules, job.options, project=project, path=where).findings)

        _deliver(report, path, job, nb.text, result.text, _notebook.encode(nb, result.text), relint)
    elif path == "-":
        report.new_source = data
    return report


def _notebook_errors(errors) -> str | None:
    return "\n".join(error_text(e.kind, e) for e in errors) or None


def _deliver(report: FileReport, path: str, job: Job, old: str, new: str, new_bytes: bytes, relint) -> None:
    """Show (--diff), return (stdin) or write the fixed text."""
    if job.diff:
        import io

        difflib = _lazy("difflib")
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
            report.error = "\n".join(filter(None, [report.error, error_text(ErrorKind.WRITE, exc.strerror or exc)]))
            report.violations = relint()
            report.fixed = 0
            report.applied = []


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


def run_all(files, job: Job, stdin_name: str, jobs: int, progress=None, each=None) -> list[FileReport]:
    """Process every file; `each(report)`, then `progress(done)`, are called after each one (in
    this process: with workers, while they go on)."""
    tasks = [(f, stdin_name if f == "-" else f, job) for f in files]
    workers = workers_for(len(tasks), jobs)
    if workers > 1 and "-" not in files:
        chunk = max(1, min(16, len(tasks) // (workers * 4)))
        with _lazy("ProcessPoolExecutor")(max_workers=workers) as pool:
            results = pool.map(_process_star, tasks, chunksize=chunk)
            return _collect(results, progress, each)
    done = _collect((process(*t) for t in tasks), progress, each)
    for project in _PROJECTS.values():
        project.flush()  # the rest of what the run added to the summary cache
    return done


def _collect(results, progress, each=None) -> list[FileReport]:
    out = []
    for r in results:
        out.append(r)
        if each is not None:
            each(r)
        if progress is not None:
            progress(len(out))
    return out


class Progress:
    """`Checking 120/4383 files` on stderr, redrawn in place: only on a terminal (or when asked),
    only once the run has taken PROGRESS_AFTER_S, at most every PROGRESS_EVERY_S, and erased
    before anything else is printed."""

    def __init__(self, total: int, verb: str, stream, style) -> None:
        import time

        self.clock = time.monotonic
        self.start = self.clock()
        self.last = None
        self.total = total
        self.verb = verb
        self.stream = stream
        self.style = style
        self.shown = False

    def __call__(self, done: int) -> None:
        now = self.clock()
        early = now - self.start < PROGRESS_AFTER_S
        recent = self.last is not None and now - self.last < PROGRESS_EVERY_S and done < self.total
        if early or recent:
            return
        self.last = now
        width = len(str(self.total))
        pct = 100 * done // max(1, self.total)
        try:
            self.stream.write(f"\r\x1b[2K{self.verb} {done:>{width}}/{self.total} files ({pct}%)")
            self.stream.flush()
            self.shown = True
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        if self.shown:
            try:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


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


def _cli_per_file_ignores(values, flag: str):
    if values is None:
        return None
    cwd = os.getcwd()
    return tuple(e for v in values for e in _config.parse_per_file_ignores(v, flag, cwd))


def _settings(args, paths):
    try:
        return _config.resolve(
            _load_config(args, paths),
            select=args.select, ignore=args.ignore, extend_select=args.extend_select, strict=args.strict,
            unsafe_fixes=args.unsafe_fixes, numpy_fix=args.numpy_fix, generator_names=args.generator_names,
            discriminator_names=args.discriminator_names,
            per_file_ignores=_cli_per_file_ignores(args.per_file_ignores, "--per-file-ignores"),
            extend_per_file_ignores=_cli_per_file_ignores(args.extend_per_file_ignores, "--extend-per-file-ignores"),
            force_exclude=args.force_exclude,
        )
    except _config.ConfigError as exc:
        raise UsageError(str(exc)) from None


def cmd_check_or_fix(args, command: str) -> int:
    if args.output_format == "concise":
        args.output_format = "text"  # ruff's name for the one-line format
    if args.statistics and args.output_format not in ("text", "json", "json-lines"):
        raise UsageError(f"--statistics prints text, json or json-lines, not {args.output_format}")
    if args.quiet and args.silent:
        args.quiet = False  # --silent says more
    paths = args.paths or ["."]
    settings = _settings(args, paths)
    exclusions = Exclusions(
        cli_exclude=None if args.exclude is None else [g for e in args.exclude for g in _csv(e)],
        cli_extend=[g for e in args.extend_exclude for g in _csv(e)],
        config_exclude=settings.config.exclude, config_extend=settings.extend_exclude, root=settings.root,
        force=settings.force_exclude)
    # `check --fix`, `check --diff` and `fix` are one mode; `fix --no-fix` is not a thing.
    fixing = command == "fix" or bool(getattr(args, "fix", False)) or args.diff
    mode = "fix" if fixing else "check"
    if args.show_settings:
        return _printing(_show_settings, args, mode, settings, exclusions, paths)
    files, missing = discover(paths, exclusions=exclusions)
    stdin_name = display_path(args.stdin_filename) if args.stdin_filename else "-"
    passthrough = None  # stdin excluded by --force-exclude: `fix -` gives it back unchanged
    stdin_excluded = "-" in files and bool(args.stdin_filename) and exclusions.named(args.stdin_filename)
    if stdin_excluded:
        files = [f for f in files if f != "-"]
        passthrough = FileReport(stdin_name, new_source=_read("-")) if mode == "fix" and not args.diff else None
    if args.show_files:
        return _printing(_show_files, files, missing)
    from .reach import find_root, forget

    forget()  # what an earlier run in this process found of the project's files may be stale
    first_path = paths[0] if paths[0] != "-" else (args.stdin_filename or ".")
    project_root = os.path.realpath(args.project_root or find_root(first_path))
    cache_dir = None if args.no_cache else _cache_dir(args, settings, first_path)
    job = Job(mode, settings.codes, settings.options, settings.unsafe_fixes, args.diff, not args.no_noqa,
              settings.per_file_ignores, settings.root, settings.internal, project_root, cache_dir)
    cache = None
    if mode == "check" and cache_dir is not None:
        cache = _cache.Cache(cache_dir,
                             _cache.config_key(settings.codes, settings.options, job.noqa, job.per_file_ignores,
                                               job.root, job.internal))
    reports, todo = [], []
    for f in files:
        hit = cache.lookup(f) if cache is not None and f != "-" else None
        if hit is not None:
            reports.append(FileReport(f, hit[0], hit[1]))
        else:
            todo.append(f)
    progress = _progress(args, len(todo), "Fixing" if mode == "fix" else "Checking")

    def keep(r: FileReport) -> None:
        # Each result is written as it comes (one file an entry): with workers, while they check
        # the next files; an interrupted run keeps what it found.
        if r.stamp is not None:
            cache.store(r.path, *r.stamp, r.violations, r.error, r.deps)
            cache.save()

    try:
        done = run_all(todo, job, stdin_name, args.jobs, progress, keep if cache is not None else None)
    finally:
        if progress is not None:
            progress.close()
    if cache is not None:
        cache.save()  # (the entries whose files' mtimes changed, their content not)
    reports.extend(done)
    reports.sort(key=lambda r: r.path)
    if passthrough is not None:
        reports.append(passthrough)
    return _printing(_print_results, args, job, files, missing, reports, stdin_excluded)


def _progress(args, todo: int, verb: str):
    if todo < 2 or args.silent or args.quiet or args.progress is False:
        return None
    err = sys.stderr
    if args.progress is None:
        try:
            tty = err.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty or os.environ.get("TERM") == "dumb":
            return None
    return Progress(todo, verb, err, _output.Style.for_stream(err))


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


def _print_results(args, job: Job, files, missing, reports, stdin_excluded: bool = False) -> int:
    out = sys.stdout
    err = sys.stderr
    silent, quiet = args.silent, args.quiet or args.silent
    fixing_stdin = job.mode == "fix" and ("-" in files or stdin_excluded) and not job.diff
    # stdout carries the fixed source (`fix -`) or the patch (`--diff`) and nothing else:
    # findings and summaries go to stderr then.
    diag = err if (fixing_stdin or job.diff) else out
    fmt = args.output_format
    text = fmt == "text" and not args.statistics
    style = _output.Style.for_stream(diag)
    err_style = _output.Style.for_stream(err)
    # ruff marks what `fix` would fix with [*]; after fixing, what remains was not fixable.
    marker = job.mode == "check"
    show_fixes = args.show_fixes
    errors = 0
    total = fixable = unsafe_fixable = manual = fixed = 0
    findings = []
    applied: dict = {}
    printed = set()  # the streams findings went to
    if not files and not missing and not quiet and not stdin_excluded:
        print(NO_FILES, file=err)
    for path, why in missing:
        if not silent:
            print(f"{err_style.error('error')}: {path}: {why}", file=err)
        errors += 1
    for r in reports:
        if r.error:
            for line in r.error.splitlines():
                if not silent:
                    print(f"{err_style.error('error')}: {r.path}: {line}", file=err)
                errors += 1
        for v in r.violations:
            applicable = v.fix is not None and v.fix.applies(job.unsafe)
            if text and not silent:
                print(_output.text_line(r.path, v, marker and applicable, style), file=diag)
                printed.add(id(diag))
                if show_fixes and marker and v.fix is not None:
                    print(_output.fix_help(v, job.unsafe, style), file=diag)
            findings.append((r.path, v))
            total += 1
            if v.fix is None:
                manual += 1
            elif applicable:
                fixable += 1
            else:
                unsafe_fixable += 1
        fixed += r.fixed
        if r.applied:
            applied[r.path] = r.applied
        if r.diff:
            out.write(r.diff)
        if r.new_source is not None:
            out.flush()
            sys.stdout.buffer.write(r.new_source)
            sys.stdout.buffer.flush()
    if not silent:
        summary_to = err if (job.diff or fixing_stdin or (job.mode == "fix" and not text)) else out
        if args.statistics:
            diag.write(_output.render_statistics(findings, fmt, job.unsafe, style))
        elif not text:
            diag.write(_output.render(fmt, findings, job.codes))
        if show_fixes and job.mode == "fix" and fmt == "text" and applied:
            # ruff's layout: a blank line between the findings and the list, and after the list.
            summary_to.write(("\n" if id(summary_to) in printed else "")
                             + _output.fix_summary(applied, job.diff, _output.Style.for_stream(summary_to)) + "\n")
        if not quiet:
            if job.mode == "check":
                if text:
                    print(_output.summary(total, fixable, unsafe_fixable, errors), file=diag)
            else:
                print(_fix_summary(job, fixed, total, fixable, unsafe_fixable, manual, errors), file=summary_to)
    return exit_status(args, job, errors, total, fixed)


def exit_status(args, job: Job, errors: int, remaining: int, fixed: int) -> int:
    """ruff's exit statuses: 2 an error; else 0 with --exit-zero; else 1 when findings remain
    (--diff: also when something would be fixed; --exit-non-zero-on-fix: also when something
    was fixed); else 0."""
    if errors:
        return 2
    if args.exit_zero:
        return 0
    if remaining or (fixed and (job.diff or args.exit_non_zero_on_fix)):
        return 1
    return 0


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


def _show_files(files, missing) -> int:
    for f in sorted(files):
        print(f)
    for path, why in missing:
        print(f"error: {path}: {why}", file=sys.stderr)
    return 2 if missing else 0


def _show_settings(args, mode: str, settings, exclusions: Exclusions, paths) -> int:
    """ruff's --show-settings: what this run would use, and where it came from."""
    cfg = settings.config
    options = settings.options
    data = {
        "resolved-for": paths[0],
        "settings-path": cfg.path,
        "project-root": settings.root,
        "mode": mode + (" (diff)" if args.diff else ""),
        "rules": list(settings.codes) + ([INTERNAL] if settings.internal else []),
        "per-file-ignores": [{"glob": e[0], "codes": list(e[1]), "relative-to": e[2] if len(e) > 2 else settings.root}
                             for e in settings.per_file_ignores],
        "exclude": exclusions.globs,
        "exclude-relative-to-settings": exclusions.config_globs,
        "force-exclude": exclusions.force,
        "strict": options.strict,
        "numpy-fix": options.numpy_fix,
        "generator-names": list(options.generator_names),
        "discriminator-names": list(options.discriminator_names),
        "unsafe-fixes": settings.unsafe_fixes,
        "noqa": not args.no_noqa,
        # (fix keeps no results, but reads and writes the summaries of project modules there)
        "cache-dir": None if args.no_cache else _cache_dir(
            args, settings, paths[0] if paths[0] != "-" else (args.stdin_filename or ".")),
        "output-format": args.output_format,
        "jobs": args.jobs,
    }
    if args.output_format in ("json", "json-lines"):
        import json

        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    import json

    print(f"Resolved settings for: {data.pop('resolved-for')}")
    print(f"Settings path: {data.pop('settings-path') or 'none (defaults)'}")
    width = max(len(k) for k in data)
    for key, value in data.items():
        print(f"{key:<{width}} = {json.dumps(value)}")
    return 0


# --------------------------------------------------------------------------- rules and explain


def rule_record(cls) -> dict:
    """One rule as `rules --output-format json` and `explain --output-format json` print it."""
    from . import links
    from .docs import rule_summary

    return {
        "code": cls.code,
        "name": cls.name,
        "summary": rule_summary(cls),
        "message": cls.message,
        "fix": None if cls.fix_safety is None else {"title": cls.fix_title, "safety": cls.fix_safety},
        "url": links.rule_url(cls.code, cls.name),
        "explanation": cls.explain(),
    }


def cmd_clean(root: str = ".", quiet: bool = False) -> int:
    """`ruff clean`: every cache directory at or below `root` is removed (results of `check`,
    summaries of project modules).  A virtual environment's or `.git`'s insides are not searched."""
    shutil = _lazy("shutil")
    found = []
    for directory, dirs, _files in os.walk(root):
        if _cache.CACHE_DIR in dirs:
            found.append(os.path.join(directory, _cache.CACHE_DIR))
        dirs[:] = [d for d in dirs if d not in (_cache.CACHE_DIR, ".git")
                   and not os.path.exists(os.path.join(directory, d, "pyvenv.cfg"))]
    failed = False
    for path in found:
        if not quiet:
            print(f"Removing cache at: {display_path(path)}", file=sys.stderr)
        try:
            shutil.rmtree(path)
        except OSError as exc:
            print(f"error: cannot remove {display_path(path)}: {exc.strerror or exc}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


def cmd_rules(output_format: str = "text") -> int:
    if output_format == "json":
        import json

        sys.stdout.write(json.dumps([rule_record(c) for c in all_rules()], indent=2, ensure_ascii=False) + "\n")
        return 0
    from .docs import rules_text_table

    sys.stdout.write(rules_text_table(_terminal_width(), _output.Style.for_stream(sys.stdout)))
    return 0


def _terminal_width(default: int = 100) -> int:
    """COLUMNS, else the terminal's width, else `default` (a pipe)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or default
    except (OSError, ValueError, AttributeError):
        return default


def find_rule(word: str):
    """A rule by code (`TNS201`, `tns201`) or by name (`clone-before-detach`)."""
    cls = get_rule(word.strip())
    if cls is not None:
        return cls
    name = word.strip().lower().replace("_", "-")
    return next((c for c in all_rules() if c.name == name), None)


def cmd_explain(word: str, output_format: str = "text") -> int:
    cls = find_rule(word)
    if cls is None:
        difflib = _lazy("difflib")
        close = difflib.get_close_matches(word.lower(), [c.name for c in all_rules()], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        print(f"error: {word!r} is not a rule code or name{hint}; `tensorcopy rules` lists them", file=sys.stderr)
        return 2
    if output_format == "json":
        import json

        sys.stdout.write(json.dumps(rule_record(cls), indent=2, ensure_ascii=False) + "\n")
        return 0
    from . import links

    print(cls.explain())
    print(f"Documentation: {links.rule_url(cls.code, cls.name)}")
    return 0


def _unknown_command(word: str) -> str | None:
    """Why `word`, in the place of a command, is neither a command nor a path: `tensorcopy chek`
    is a typo, not a request to check a file named chek."""
    if word.startswith("-") or os.path.lexists(word) or os.sep in word or "/" in word or "." in word:
        return None
    close = _lazy("difflib").get_close_matches(word, COMMANDS, n=1)
    hint = f"; did you mean `tensorcopy {close[0]}`?" if close else ""
    return f"{word!r} is not a command ({', '.join(COMMANDS)}) or an existing path{hint}"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # ruff takes -q/-s before the command too: `tensorcopy -q check`.
    lead = []
    while argv and argv[0] in _GLOBAL_FLAGS:
        lead.append(argv.pop(0))
    if argv and argv[0] not in (*COMMANDS, "-h", "--help", "--version"):
        why = _unknown_command(argv[0])
        if why is not None:
            print(f"error: {why}", file=sys.stderr)
            return 2
        argv.insert(0, "check")  # `tensorcopy src/` means `tensorcopy check src/`
    elif not argv and lead:
        argv = ["check"]
    if lead and argv and argv[0] in COMMANDS:
        argv[1:1] = lead
    command = argv[0] if argv and argv[0] in COMMANDS else None
    args = _fast_args(argv) if command in ("check", "fix") else None
    if args is None:
        try:
            args = build_parser(command).parse_args(argv)
        except SystemExit as exc:
            return 2 if exc.code not in (0, None) else 0
    try:
        if args.command is None:
            args = build_parser("check").parse_args(["check", *argv])
        if args.command == "rules":
            return _printing(cmd_rules, args.output_format)
        if args.command == "explain":
            return _printing(cmd_explain, args.rule, args.output_format)
        if args.command == "lsp":
            from .lsp import main as lsp_main

            return lsp_main()
        if args.command == "clean":
            return cmd_clean(quiet=args.quiet or args.silent)
        return cmd_check_or_fix(args, args.command)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def run() -> None:
    """The `tensorcopy` command (and `python -m flake8_tensorcopy`): main(), then an exit without
    the interpreter's teardown, which frees the rules, the analysis and everything else one object
    at a time: 7 ms, a sixth of a one-file run (mypy exits the same way).  What we wrote is flushed
    first, the process pool (if any) is already shut down, and nothing of ours waits for atexit.
    Callers of main() (tests, other tools) keep a normal interpreter."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 2
    os._exit(code)
