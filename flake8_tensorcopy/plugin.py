"""The flake8 plugin: a thin shell over the engine.

flake8 hands us the `ast` tree it already parsed and the file's lines (from disk or from
stdin, which is how editors call it), so the plugin parses nothing itself.  flake8 applies
`# noqa`, `--select`, `--ignore` and `--extend-select` to what we yield, and prints the column
plus one, so we yield 0-based columns.
"""

from __future__ import annotations

from . import __version__
from .engine import lint_text
from .rules.base import Options, all_rules


def _names(value) -> tuple:
    if not value:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    return tuple(v.strip() for v in value if v.strip())


def _selected_rules(options):
    """The rules flake8's own selection keeps (`--select`, `--ignore`, `--extend-ignore`, ...):
    where TNS101 covers TNS102 on one expression, TNS102 must still be reported when flake8 is
    told to hide TNS101."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        decide = DecisionEngine(options)
        return [cls for cls in all_rules() if decide.decision_for(cls.code) is Decision.Selected]
    except Exception:  # another flake8, or options from a test: show everything
        return None


class TensorCopyChecker:
    name = "flake8-tensorcopy"
    version = __version__
    options = Options()
    rules = None  # the rules flake8 will show (None: all); set by parse_options

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

    @classmethod
    def parse_options(cls, options) -> None:
        numpy_fix = getattr(options, "tensorcopy_numpy_fix", "detach") or "detach"
        if numpy_fix not in ("detach", "force"):
            # flake8 does not check `choices` for values read from config files.
            raise SystemExit(f"flake8-tensorcopy: tensorcopy-numpy-fix must be 'detach' or 'force', not {numpy_fix!r}")
        cls.options = Options(
            strict=bool(getattr(options, "tensorcopy_strict", False)),
            numpy_fix=numpy_fix,
            generator_names=_names(getattr(options, "tensorcopy_generator_names", ())),
            discriminator_names=_names(getattr(options, "tensorcopy_discriminator_names", ())),
        )
        cls.rules = _selected_rules(options)

    def run(self):
        try:
            text = "".join(self.lines)
            rules = self.rules if self.rules is not None else all_rules()
            result = lint_text(text, rules, self.options, tree=self.tree, honor_noqa=False)
            violations = result.violations
        except Exception as exc:  # never take the user's whole flake8 run down with us
            yield (1, 0, f"TNS000 internal error in flake8-tensorcopy ({type(exc).__name__}: {exc}); "
                   "please report it", type(self))
            return
        for v in violations:
            yield v.line, v.col, f"{v.code} {v.message}", type(self)
