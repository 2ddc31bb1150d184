"""Where the check's time goes on the transformers `models/` tree (issue "Whole-project analysis":
the cold target is 1.5x of read + parse).

    python -m benchmarks.cost [--step N] [--no-rules]

One process, as the linear benchmark's section 2: every N-th file of `models/` (default every
file) read and parsed (the floor), checked one file at a time, then checked with the project
(cold: no summary cache).  The project run is instrumented by wrapping the analysis' own methods,
so its total is a little above an uninstrumented run; the shares are what to read:

- walks of functions, by kind: to report (a function a rule's scope test admits, a caller of
  one, or a function of another module walked for one call's arguments by the rules that
  report through calls), a summary (what a function of the file returns), a survey (a caller walked for what it
  passes), a passer (a caller walked with rules off up a chain of calls), a call's own result
  (a function walked for one call's arguments); each with its exclusive time, which includes
  the parse of the bodies it is the first to read;
- walks to report, by the rules whose scope tests admit the function (inclusive times);
- the project's summaries: built, with their exclusive build time, and how many of them no
  file asked anything but their names' facts (those a class statement of a checked file asked
  for a base class are counted apart);
- calls walked for their own arguments whose result is the function's summary all the same;
- by kind of file (`modeling_*`, `modular_*`, `image_processing_*`, ...): files, their parse,
  their check with the project, and the ratio (a file's time includes the summaries of the
  project modules it is the first to import: `modular_*` files build most of them).

Times move by 10-30% from run to run on a shared machine; `benchmarks.instructions` counts
instructions for the ratios.
"""

from __future__ import annotations

import argparse
import ast
import collections
import gc
import inspect
import sys
import time
import warnings
from pathlib import Path

from benchmarks.corpus import ensure_corpus

_WALK_KINDS = ("report", "summary", "survey", "passer", "call")


def _walk_kind(dispatch: bool, given, passer: bool, upto) -> str:
    if dispatch:
        return "report"
    if passer:
        return "passer"
    if upto is not None:
        return "survey"
    return "call" if given else "summary"


class _Probe:
    """The wrappers, and what they counted."""

    def __init__(self) -> None:
        from flake8_tensorcopy.analysis import module_summary, summaries, walker

        self.walks = collections.Counter()
        self.walk_time = collections.Counter()
        self.reports: list = []  # (path, first line, last line, inclusive seconds)
        self.built: dict = {}  # module -> exclusive build seconds
        self.for_base: set = set()  # modules built for a base class a checked file's class names
        self.asked: set = set()
        self.calls = collections.Counter()
        self.call_time = collections.Counter()
        self.path = None
        self._stack: list = []
        self._build_stack: list = []
        probe = self

        run_function = walker.Walker._run_function

        def _run_function(w, func, parent, no_grad, cls, dispatch, given=None, sites=True, passer=False, upto=None):
            kind = _walk_kind(dispatch, given, passer, upto)
            start = time.perf_counter()
            probe._stack.append(0.0)
            try:
                return run_function(w, func, parent, no_grad, cls, dispatch, given, sites, passer, upto)
            finally:
                spent = time.perf_counter() - start
                inner = probe._stack.pop()
                if probe._stack:
                    probe._stack[-1] += spent
                probe.walks[kind] += 1
                probe.walk_time[kind] += spent - inner
                if kind == "report" and sites and getattr(w, "_scope_filter", None) is not None:
                    probe.reports.append((probe.path, func.lineno, func.end_lineno, spent))

        build = module_summary.ModuleSummary.build.__func__

        def _build(cls, project, name, path, digest, data):
            start = time.perf_counter()
            probe._build_stack.append(0.0)
            caller = inspect.currentframe().f_back
            while caller is not None and caller.f_code.co_name != "_is_module_base":
                caller = caller.f_back
            if caller is not None and getattr(caller.f_locals.get("self"), "_scope_filter", None) is not None:
                probe.for_base.add(name)
            try:
                return build(cls, project, name, path, digest, data)
            finally:
                spent = time.perf_counter() - start
                inner = probe._build_stack.pop()
                if probe._build_stack:
                    probe._build_stack[-1] += spent
                probe.built[name] = spent - inner

        answer = module_summary.ModuleSummary.answer

        def _answer(summary, question, compute, many=False):
            probe.asked.add(summary.name)
            return answer(summary, question, compute, many)

        given_result = summaries.Summaries.given_result

        def _given_result(w, func, cls, args, generic, key=(), parent=None):
            full = (id(func), id(cls), tuple(sorted((p, f, id(f.node)) for p, f in args.items())),
                    key, parent is None)
            fresh = (full not in w._call_results and w._call_budget > 0
                     and func.end_lineno - func.lineno <= summaries._CALL_MAX_LINES)
            start = time.perf_counter()
            result = given_result(w, func, cls, args, generic, key, parent)
            spent = time.perf_counter() - start
            if fresh:
                plain = generic()
                same = result == plain if result is not None and plain is not None else result is plain
                probe.calls["same" if same else "other"] += 1
                probe.call_time["same" if same else "other"] += spent
            return result

        walker.Walker._run_function = _run_function
        module_summary.ModuleSummary.build = classmethod(_build)
        module_summary.ModuleSummary.answer = _answer
        summaries.Summaries.given_result = _given_result

    def admitting_rules(self, rules) -> collections.Counter:
        """{rules (codes joined, or "3+"): [walks, inclusive seconds]} of the walks to report."""
        from flake8_tensorcopy.engine import _prefiltered
        from flake8_tensorcopy.source import LineIndex, decode

        out: dict = collections.defaultdict(lambda: [0, 0.0])
        files: dict = {}
        for path, first, last, spent in self.reports:
            if path not in files:
                text = decode(Path(path).read_bytes()).text
                files[path] = (text, LineIndex(text).starts,
                               [(cls.code, cls.scope_test(text)) for cls in _prefiltered(rules, text)])
            text, starts, tests = files[path]
            start = starts[first - 1]
            end = starts[last] if last < len(starts) else len(text)
            codes = [code for code, test in tests
                     if (test.span(start, end) if getattr(test, "span", None) else test(text[start:end]))]
            if codes == ["TNS103", "TNS104", "TNS105"]:
                key = "TNS103-105"  # (one scope test)
            elif not codes:
                key = "(a caller of one)"
            else:
                key = ",".join(codes) if len(codes) <= 2 else "three or more"
            out[key][0] += 1
            out[key][1] += spent
        return out


def _check(texts, rules, options, project, probe=None, each: dict | None = None) -> float:
    """Seconds to check `texts`; `each` gets each file's ({path: seconds})."""
    from flake8_tensorcopy.engine import lint_text

    clock = time.perf_counter
    start = clock()
    for path, text in texts:
        if project is not None:
            project.begin()
        if probe is not None:
            probe.path = str(path)
        began = clock()
        lint_text(text, rules, options, project=project, path=str(path))
        if each is not None:
            each[path] = clock() - began
    return clock() - start


def _kind(path: Path) -> str:
    """The kind of a file of `models/` by its name's first word (`modeling`, `modular`,
    `image`, `processing`, `configuration`, ...; `__init__.py` files: "package")."""
    name = path.name
    if name == "__init__.py":
        return "package"
    return name.split("_", 1)[0] if "_" in name else "other"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.cost")
    ap.add_argument("--step", type=int, default=1, help="every N-th file of models/ (default: every file)")
    ap.add_argument("--no-rules", action="store_true", help="skip the breakdown of walks by admitting rules")
    ns = ap.parse_args(argv)
    infos = {i.name: i for i in ensure_corpus(verbose=False)}
    info = infos.get("transformers")
    if info is None:
        print("transformers is not in the corpus")
        return 1
    from flake8_tensorcopy.analysis.project import Project
    from flake8_tensorcopy.engine import select_rules
    from flake8_tensorcopy.rules.base import Options
    from flake8_tensorcopy.source import DecodeError, decode

    files = sorted((Path(info.path) / "transformers" / "models").rglob("*.py"))[:: ns.step]
    warnings.simplefilter("ignore")
    texts = []
    for f in files:
        try:
            texts.append((f, decode(f.read_bytes()).text))
        except DecodeError:
            continue
    gc.collect()
    parsed: dict = {}  # path -> seconds of its parse
    clock = time.perf_counter
    start = clock()
    for path, text in texts:
        began = clock()
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            pass
        parsed[path] = clock() - began
    floor = clock() - start
    rules, options = select_rules(), Options()
    one = _check(texts, rules, options, None)
    probe = _Probe()
    each: dict = {}
    whole = _check(texts, rules, options, Project(info.path, options, batch=True), probe, each)

    every = "all" if ns.step == 1 else f"every {ns.step}th"
    print(f"transformers models/: {len(texts)} files ({every}), one process")
    print(f"  parse {floor:6.2f} s; one file at a time {one:6.2f} s = {one / floor:4.2f}x; "
          f"with the project (instrumented) {whole:6.2f} s = {whole / floor:4.2f}x")
    print("walks of functions (exclusive seconds, body parses included):")
    for kind in _WALK_KINDS:
        n, t = probe.walks[kind], probe.walk_time[kind]
        print(f"  {kind:8} {n:6d} walks {t:6.2f} s ({t / whole * 100:4.1f}%)")
    if probe.reports and not ns.no_rules:
        print("walks to report, by the rules whose scope tests admit the function (inclusive seconds):")
        for key, (n, t) in sorted(probe.admitting_rules(rules).items(), key=lambda kv: -kv[1][1])[:12]:
            print(f"  {key:22} {n:6d} walks {t:6.2f} s")
    built = probe.built
    unasked = [m for m in built if m not in probe.asked]
    base = [m for m in unasked if m in probe.for_base]
    total = sum(built.values())
    print(f"summaries of project modules: {len(built)} built, {total:5.2f} s exclusive ({total / whole * 100:4.1f}%)")
    print(f"  asked nothing but their names' facts: {len(unasked)}, {sum(built[m] for m in unasked):5.2f} s; "
          f"of those built for a base class of a checked file's class: {len(base)}, "
          f"{sum(built[m] for m in base):5.2f} s")
    same, other = probe.calls["same"], probe.calls["other"]
    if same + other:
        print(f"calls walked for their own arguments: {same + other}; the summary's result all the same: {same} "
              f"({probe.call_time['same']:5.2f} s inclusive), another result: {other} "
              f"({probe.call_time['other']:5.2f} s)")
    kinds: dict = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for path, spent in each.items():
        row = kinds[_kind(path)]
        row[0] += 1
        row[1] += parsed.get(path, 0.0)
        row[2] += spent
    print("by kind of file, with the project (instrumented; a file's time includes the summaries of the project "
          "modules it is the first to import):")
    for kind, (n, p, c) in sorted(kinds.items(), key=lambda kv: -kv[1][2])[:10]:
        print(f"  {kind:14} {n:5d} files  parse {p:6.2f} s  check {c:6.2f} s = {c / p if p else 0:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
