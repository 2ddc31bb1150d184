"""The flake8 plugin: a thin shell over the engine.

flake8 hands us the `ast` tree it already parsed and the file's lines (from disk or from
stdin, which is how editors call it), so the plugin parses nothing itself.  flake8 applies
`# noqa`, `--select`, `--ignore` and `--extend-select` to what we yield, and prints the column
plus one, so we yield 0-based columns.

flake8 imports every plugin on every run, also for files that never mention torch: this module
imports nothing of ours until a file that mentions torch, or uses it through its project
(reach.py, which only reads imports), comes along (the engine, the rules and the analysis cost
more than the rest of a one-file flake8 run's start; benchmarks/startup.py).
"""

from __future__ import annotations

import sys

from . import __version__


def _engine():
    """(lint_text, all_rules), imported on first use with the cyclic collector off: the import
    allocates a few hundred thousand objects and frees almost none, and by now flake8's own
    objects are in the heap, so each collection during it would cost more than the import itself
    (measured in flake8's process: 12 to 18 ms with the collector off, 24 to 38 ms with it on).

    Then what is in the heap is frozen (`gc.freeze`): our modules, classes and functions live
    as long as the process, and every later collection would traverse them again (in a
    one-file flake8 run, about 8 ms of the 12 ms the plugin added; benchmarks/startup.py).
    Frozen objects are still freed when nothing refers to them; only a reference cycle among
    them that becomes garbage later is never collected."""
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        from .engine import lint_text
        from .rules.base import all_rules
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
    return lint_text, all_rules


def _selected_codes(options, all_rules) -> frozenset | None:
    """The codes flake8's own selection keeps (`--select`, `--ignore`, `--extend-ignore`, ...):
    where TNS101 covers TNS102 on one expression, TNS102 must still be reported when flake8 is
    told to hide TNS101.  None: show everything (another flake8, options from a test)."""
    if options is None:
        return None
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decide = DecisionEngine(options)
        return frozenset(cls.code for cls in all_rules() if decide.decision_for(cls.code) is Decision.Selected)
    except Exception:
        return None


_PROJECTS: dict = {}  # root -> analysis.project.Project, for the files of this flake8 process


def _project(filename: str, options, cache_dir=None):
    """The project the file belongs to (its modules' summaries are kept for the whole run, and in
    the project's summary cache, which `tensorcopy check` shares: an editor's flake8, one
    process a save, does not parse and walk the modules a file imports again)."""
    import os

    from .analysis.project import Project
    from .reach import find_root

    start = filename if filename not in ("stdin", "-", "") else os.getcwd()
    root = find_root(start)
    project = _PROJECTS.get(root)
    if project is None:
        project = _PROJECTS[root] = Project(root, batch=True)

        def make_store():
            from .cache import CACHE_DIR, summary_store

            return summary_store(os.path.abspath(cache_dir or os.path.join(root, CACHE_DIR)), options)

        if cache_dir is not False:
            project.make_store = make_store
    return project


def _names(value) -> tuple:
    if not value:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    return tuple(v.strip() for v in value if v.strip())


class TensorCopyChecker:
    name = "flake8-tensorcopy"
    version = __version__
    # Options' fields from flake8's options; the engine's Options object is built on first use.
    settings: dict = {}
    # The summary cache's directory: None, the project root's; False, none.
    cache_dir = None
    _options = None
    _flake8_options = None
    _rules = None

    def __init__(self, tree, lines, filename="stdin"):
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, parser) -> None:
        parser.add_option(
            "--tensorcopy-strict",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="tensorcopy: also report tensors of unknown origin (function parameters, "
            "values returned by other modules). Default: off.",
        )
        parser.add_option(
            "--tensorcopy-numpy-fix",
            default="detach",
            choices=("detach", "force"),
            parse_from_config=True,
            help="tensorcopy: spelling of NumPy conversions in messages and fixes: "
            "'detach' (t.detach().cpu().numpy(), default) or 'force' (t.numpy(force=True)).",
        )
        parser.add_option(
            "--tensorcopy-generator-names",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="tensorcopy: extra names of generator modules (TNS3xx), comma separated.",
        )
        parser.add_option(
            "--tensorcopy-discriminator-names",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="tensorcopy: extra names of discriminator modules (TNS3xx), comma separated.",
        )
        parser.add_option(
            "--tensorcopy-no-cache",
            action="store_true",
            default=False,
            parse_from_config=True,
            help="tensorcopy: do not read or write the summaries of project modules in the project's "
            ".tensorcopy_cache/ (shared with `tensorcopy check`). Default: off.",
        )
        parser.add_option(
            "--tensorcopy-cache-dir",
            default=None,
            parse_from_config=True,
            help="tensorcopy: where to keep the summaries of project modules (default: .tensorcopy_cache "
            "in the project root, as `tensorcopy check`).",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        numpy_fix = getattr(options, "tensorcopy_numpy_fix", "detach") or "detach"
        if numpy_fix not in ("detach", "force"):
            # flake8 does not check `choices` for values read from config files.
            raise SystemExit(f"flake8-tensorcopy: tensorcopy-numpy-fix must be 'detach' or 'force', not {numpy_fix!r}")
        cls.settings = {
            "strict": bool(getattr(options, "tensorcopy_strict", False)),
            "numpy_fix": numpy_fix,
            "generator_names": _names(getattr(options, "tensorcopy_generator_names", ())),
            "discriminator_names": _names(getattr(options, "tensorcopy_discriminator_names", ())),
        }
        cls._options = None
        cls._flake8_options = options
        cls._rules = None
        cache_dir = getattr(options, "tensorcopy_cache_dir", None)
        cls.cache_dir = False if getattr(options, "tensorcopy_no_cache", False) else (cache_dir or None)
        if "flake8_tensorcopy.reach" in sys.modules:  # a run before this one in the same process
            sys.modules["flake8_tensorcopy.reach"].forget()  # (what it found may be stale)

    @classmethod
    def engine_options(cls):
        if cls._options is None:
            from .model import Options

            cls._options = Options(**cls.settings)
        return cls._options

    def _through_project(self, text: str) -> bool:
        """Whether a file that never mentions torch imports a module of its project that uses
        it (reach.py: by text, without importing the engine)."""
        if self.filename in ("stdin", "-", "") or "import" not in text:
            return False
        from .reach import torch_through_project

        return torch_through_project(text, self.filename)

    def run(self):
        try:
            text = "".join(self.lines)
            if "torch" not in text and not self._through_project(text):
                return  # what the engine checks first, before importing it
            lint_text, all_rules = _engine()

            cls = type(self)
            if cls._rules is None:
                codes = _selected_codes(cls._flake8_options, all_rules)
                cls._rules = [r for r in all_rules() if codes is None or r.code in codes]
            options = self.engine_options()
            project = _project(self.filename, options, cls.cache_dir)
            project.options = options
            project.begin()
            try:
                # flake8 shows no fixes: none is written out (nor LibCST imported for one).
                result = lint_text(text, cls._rules, options, tree=self.tree, honor_noqa=False, project=project,
                                   path=self.filename if self.filename not in ("stdin", "-") else None, fixes=False)
            finally:
                project.flush(1.0)  # (see Project.flush)
            violations = result.violations
        except Exception as exc:  # never take the user's whole flake8 run down with us
            yield (1, 0, f"TNS000 internal error in flake8-tensorcopy ({type(exc).__name__}: {exc}); "
                   "please report it", type(self))
            return
        for v in violations:
            yield v.line, v.col, f"{v.code} {v.message}", type(self)
