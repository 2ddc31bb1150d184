"""The scope filter against the walk it saves, on real code: every file checked twice, one file
at a time, with the rules' scope tests (`Rule.scope_test`: functions no rule may report in are
not walked) and without them; a difference is a finding the filter loses, or one it adds
(what the walks it saves would have told other functions).

    python -m benchmarks.filter_check [--strict] [PATH ...]

Without paths, the whole corpus.  Prints each file whose findings differ, and a count.  The
tests hold the rule examples and fixtures to the same (tests/test_scope_filters.py); this is
for the code they do not have.  About a minute for the corpus on 2 CPUs.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from benchmarks.corpus import ensure_corpus


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.filter_check")
    ap.add_argument("--strict", action="store_true", help="as `--strict` (values of unknown origin too)")
    ap.add_argument("paths", nargs="*", help="files or directories (default: the corpus)")
    ns = ap.parse_args(argv)
    from flake8_tensorcopy import engine
    from flake8_tensorcopy.analysis.walker import Walker
    from flake8_tensorcopy.rules.base import Options
    from flake8_tensorcopy.source import DecodeError, decode

    class Unfiltered(Walker):
        def __init__(self, tree, rules, context, scope_filter=None, *args, **kwargs):
            super().__init__(tree, rules, context, None, *args, **kwargs)

    roots = [Path(p) for p in ns.paths] or [Path(i.path) for i in ensure_corpus(verbose=False)]
    files = sorted(f for r in roots for f in ([r] if r.is_file() else r.rglob("*.py")))
    options = Options(strict=ns.strict)
    warnings.simplefilter("ignore")

    def findings(text: str, walker) -> list:
        engine.Walker = walker
        try:
            return [(v.code, v.line, v.col) for v in engine.lint_text(text, options=options).violations]
        finally:
            engine.Walker = Walker

    start = time.perf_counter()
    checked = differ = 0
    for f in files:
        try:
            text = decode(f.read_bytes()).text
        except (OSError, DecodeError):
            continue
        checked += 1
        filtered, unfiltered = findings(text, Walker), findings(text, Unfiltered)
        if filtered != unfiltered:
            differ += 1
            print(f"{f}: only with the filter {sorted(set(filtered) - set(unfiltered))}, "
                  f"only without it {sorted(set(unfiltered) - set(filtered))}")
    print(f"{checked} files, {differ} with other findings without the filter "
          f"({time.perf_counter() - start:.0f} s)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
