"""Parse speed of ``ast.parse`` vs ``libcst.parse_module`` on corpus files.

    python -m benchmarks.parse_speed [--files 300] [--repeat 3]

Takes a fixed stride sample of the corpus (see ``corpus.stride_subset``),
reads every file into memory first, then times each parser over the whole
sample in this one process (best and median of --repeat passes; a pass parses
every file once).  Reports lines/s, files/s and the ratio.  Needs libcst
importable (run it with the dev venv's python).
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import statistics
import sys
import time
import warnings

from benchmarks.corpus import corpus_path, count_lines, corpus_files, ensure_corpus, stride_subset


def _time_pass(fn, sources) -> tuple[float, int]:
    failures = 0
    t0 = time.perf_counter()
    for src in sources:
        try:
            fn(src)
        except Exception:  # noqa: BLE001 - a parse failure is counted, not fatal
            failures += 1
    return time.perf_counter() - t0, failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.parse_speed")
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    try:
        import libcst
        from importlib.metadata import version
        libcst_version = version("libcst")
    except ImportError:
        print("libcst is not importable from this interpreter; run with the dev venv's python", file=sys.stderr)
        return 2

    infos = ensure_corpus(verbose=False)
    files = stride_subset(corpus_files(infos), args.files)
    raw = [p.read_bytes() for p in files]
    texts = [b.decode("utf-8", errors="replace") for b in raw]
    lines = sum(count_lines(b) for b in raw)
    nbytes = sum(len(b) for b in raw)
    root = corpus_path()

    def parse_ast(src: str):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(src)

    parsers = [
        ("ast.parse", parse_ast),
        ("libcst.parse_module", libcst.parse_module),
    ]
    # Warm up both (imports, libcst grammar/native module init) on a few files.
    for _, fn in parsers:
        _time_pass(fn, texts[:5])

    results: dict[str, list[float]] = {name: [] for name, _ in parsers}
    failures: dict[str, int] = {}
    for _ in range(args.repeat):  # interleave the parsers pass by pass
        for name, fn in parsers:
            secs, fails = _time_pass(fn, texts)
            results[name].append(secs)
            failures[name] = fails

    parser_type = os.environ.get("LIBCST_PARSER_TYPE", "native (default)")
    print(f"parse speed: {len(files)} files (stride sample of {root}), {lines} lines, "
          f"{nbytes / 1e6:.1f} MB; python {platform.python_version()}, libcst {libcst_version} "
          f"(parser: {parser_type}); 1 process; {args.repeat} passes each, interleaved")
    print(f"{'parser':<22} {'best s':>8} {'median s':>9} {'lines/s (best)':>15} {'files/s':>9} {'fail':>5}")
    best = {}
    for name, _ in parsers:
        b, m = min(results[name]), statistics.median(results[name])
        best[name] = b
        print(f"{name:<22} {b:>8.3f} {m:>9.3f} {lines / b:>15,.0f} {len(files) / b:>9,.1f} {failures[name]:>5}")
    ratio = best["libcst.parse_module"] / best["ast.parse"]
    print(f"libcst.parse_module is {ratio:.1f}x slower than ast.parse (best of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
