"""Speed benchmark: tensorcopy vs flake8, TorchFix, ruff and an ast.parse floor.

    .venv/bin/python -m benchmarks.run [--quick] [--repeat N] [--jobs N]

Run it from the repository root with the dev venv's python (the one where
``pip install -e .`` put the ``tensorcopy`` console script and the flake8
plugin).  Everything it downloads or creates lives under the cache dir
(``~/.cache/tensorcopy`` or ``$TENSORCOPY_CACHE``; the corpus itself at
``$TENSORCOPY_CORPUS`` if set), tools run from temporary working
directories, and results are written to ``benchmarks/results/<name>.{json,md}``.

What is measured, on the same files and with the same process count (--jobs):

  ours-cold   tensorcopy check --isolated --no-cache --jobs N TARGET   (fresh cwd every run)
  ours-warm   tensorcopy check --isolated --jobs N TARGET   (cwd keeps .tensorcopy_cache/, primed once)
              (options the CLI lacks are left out, with a note in the report)
  flake8      flake8 --isolated --jobs N TARGET    (separate venv: flake8 only, no plugin)
  flake8+tns  flake8 --isolated --jobs N TARGET    (dev venv: flake8 + our plugin; the summary
              cache in the corpus' project roots, primed once: warm)
  flake8+tns-cold  the same with --tensorcopy-cache-dir .tensorcopy_cache   (fresh cwd every run:
              every summary built)
  flake8-tns  flake8 --isolated --select TNS --jobs N TARGET   (dev venv, warm as flake8+tns)
  torchfix    torchfix --jobs N TARGET             (own venv; it pins libcst < 1.6)
  ruff        ruff check --isolated --no-cache --select E,F TARGET  (RAYON_NUM_THREADS=N)
  floor       python benchmarks/floor.py --jobs N TARGET   (read + ast.parse every file)

Each tool runs --repeat times (>= 3), interleaved round by round (the order
rotates each round) after one untimed warm-up run of every tool on 10 files.
Per run, as a small launcher process that starts the tool reads them (a tool
started by this process would report at least this process's size as its peak):
wall seconds, CPU seconds (user+sys of the child and its waited-for
descendants, from os.wait4), peak RSS (ru_maxrss from os.wait4: the largest
single process of the tree, not the sum; a few MB at least, the launcher's), the number of finding lines
(``path:line:col: CODE ...``).  Reported: median/min/max wall, median CPU,
max peak RSS, files/s and lines/s from the median wall, ratio to ours-cold
and to the floor.

Targets:
  default  table 1: the whole corpus, every tool except TorchFix;
           table 2: a FIXED subset (--torchfix-files, default 300: every k-th
           file of the path-sorted corpus, see corpus.stride_subset) where ALL
           tools run, TorchFix included, so its ratios compare like with like.
           (TorchFix needs ~40 min for transformers alone on one core.)
  --quick  the same two tables on a 200-file and a 30-file stride subset
           (a few minutes in all).
Also: scaling (ours-cold on every other file of the main target vs all of it)
and single-file editor latency (flake8 FILE and flake8 - < FILE, with and
without the plugin; tensorcopy check FILE and - < FILE) on transformers'
models/llama/modeling_llama.py.

Pure standard library.  A missing tool (e.g. the tensorcopy CLI, or TorchFix
that fails to install) is skipped with a note in the output.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from benchmarks.corpus import (
    REPO_ROOT,
    cache_dir,
    corpus_files,
    corpus_path,
    count_lines,
    ensure_corpus,
    materialize_subset,
    stride_subset,
    venvs_dir,
)

RUFF_VERSION = "0.17.6"
TORCHFIX_VERSION = "0.7.0"
QUICK_FILES = 200
TORCHFIX_FILES = 300
QUICK_TORCHFIX_FILES = 30
WARMUP_FILES = 10
LATENCY_FILE = "transformers-5.24.0/transformers/models/llama/modeling_llama.py"
RESULTS_DIR = Path(__file__).resolve().parent / "results"

FINDING_RE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+):? (?P<code>[A-Z]+[0-9]+)\b")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- measuring


@dataclasses.dataclass
class Sample:
    wall: float
    user: float
    sys: float
    maxrss_kb: int
    rc: int
    findings: int
    timed_out: bool
    stderr_tail: str
    traceback: bool

    @property
    def cpu(self) -> float:
        return self.user + self.sys


# A process's peak RSS (ru_maxrss) is a high-water mark that Linux keeps through `exec`, and a
# child of this process starts from this process's size (over 100 MB once the corpus is listed).
# So each run is started by a small launcher (`python -I`, a few MB), which times the tool from
# its spawn to its end and reads the tool's rusage (its tree's: the workers it waited for) itself.
_LAUNCHER = r"""
import json, os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
try:
    pid = os.posix_spawnp(argv[0], argv, os.environ)
except OSError as exc:
    sys.stderr.write(f"cannot run {argv[0]}: {exc}\n")
    sys.exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    json.dump([wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status)], f)
"""


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
            stdin_path: Path | None = None, timeout: float | None = None) -> Sample:
    """Run argv once (through `_LAUNCHER`); wall time, rusage of the child tree, findings."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryDirectory() as scratch:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        said = os.path.join(scratch, "rusage.json")
        try:
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-I", "-c", _LAUNCHER, said, *argv], cwd=cwd, env=env,
                                    stdin=stdin, stdout=out, stderr=err, start_new_session=True)
            fired = threading.Event()

            def _kill() -> None:
                fired.set()
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

            timer = threading.Timer(timeout, _kill) if timeout else None
            if timer:
                timer.start()
            _, status, ru = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            if timer:
                timer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
            try:  # leftovers of the group (there should be none)
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        finally:
            if stdin_path:
                stdin.close()
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
        user, sys_, maxrss, rc = ru.ru_utime, ru.ru_stime, ru.ru_maxrss, proc.returncode
        try:  # the launcher's figures for the tool (absent where it was killed: the timeout)
            with open(said) as f:
                wall, user, sys_, maxrss, rc = json.load(f)
        except (OSError, ValueError):
            pass
    findings = sum(1 for line in stdout.splitlines() if FINDING_RE.match(line))
    return Sample(wall=wall, user=user, sys=sys_, maxrss_kb=maxrss,
                  rc=rc, findings=findings, timed_out=fired.is_set(),
                  stderr_tail=stderr[-600:], traceback="Traceback (most recent call last)" in stderr)


# --------------------------------------------------------------------------- environment


def run_text(argv: list[str], timeout: float = 120, cwd: Path | None = None) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, str(exc)
    return p.returncode, (p.stdout + p.stderr).strip()


def venv_bin(venv: Path, name: str) -> Path:
    return venv / "bin" / name


def ensure_venv(name: str, requirements: list[str]) -> tuple[Path | None, str]:
    """A venv under <cache>/venvs/<name> with exactly these requirements.

    torch/torchvision are forbidden by a constraints file, so nothing here can
    pull a (multi-GB) torch build."""
    base = venvs_dir()
    path = base / name
    stamp = path / ".tensorcopy-requirements"
    want = "\n".join(requirements)
    if stamp.exists() and stamp.read_text() == want and venv_bin(path, "python").exists():
        return path, ""
    base.mkdir(parents=True, exist_ok=True)
    constraints = base / "no-torch-constraints.txt"
    constraints.write_text("torch<0\ntorchvision<0\ntorchaudio<0\n")
    if path.exists():
        shutil.rmtree(path)
    log(f"[setup] creating venv {path} with {' '.join(requirements)}")
    rc, out = run_text([sys.executable, "-m", "venv", str(path)], timeout=300)
    if rc != 0:
        return None, f"venv creation failed: {out[-400:]}"
    rc, out = run_text([str(venv_bin(path, "python")), "-m", "pip", "install", "--disable-pip-version-check",
                        "-q", "-c", str(constraints), *requirements], timeout=1800)
    if rc != 0:
        shutil.rmtree(path, ignore_errors=True)
        return None, f"pip install {' '.join(requirements)} failed: {out[-600:]}"
    stamp.write_text(want)
    return path, ""


def dev_versions(python: Path, dists: list[str]) -> dict[str, str | None]:
    code = ("import json, importlib.metadata as m\n"
            "out = {}\n"
            f"for d in {dists!r}:\n"
            "    try: out[d] = m.version(d)\n"
            "    except m.PackageNotFoundError: out[d] = None\n"
            "print(json.dumps(out))")
    rc, out = run_text([str(python), "-c", code])
    if rc != 0:
        return {d: None for d in dists}
    return json.loads(out.splitlines()[-1])


def machine_info(dev_python: Path) -> dict:
    info: dict = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["ram_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    rc, out = run_text([str(dev_python), "-c", "import sys; print(sys.version.split()[0])"])
    info["python"] = out if rc == 0 else platform.python_version()
    return info


def wait_for_idle(limit_s: float) -> None:
    if not hasattr(os, "getloadavg"):
        return
    deadline = time.monotonic() + limit_s
    while os.getloadavg()[0] >= 0.5 and time.monotonic() < deadline:
        log(f"[wait-idle] 1-min load {os.getloadavg()[0]:.2f}, waiting...")
        time.sleep(15)


# --------------------------------------------------------------------------- tools


@dataclasses.dataclass
class Tool:
    key: str
    label: str
    make_argv: Callable[[Path], list[str]]
    env: dict[str, str] | None = None
    fresh_cwd: bool = False  # new empty cwd for every run (cold cache)
    prime: bool = False  # one untimed run per target before timing (warm cache)
    cwd: Path | None = None
    env_extra: dict[str, str] | None = None  # shown in the command line of the report
    stdin_flag: str | None = None  # option naming the file read from stdin ('-')

    def argv(self, target: Path) -> list[str]:
        return self.make_argv(target)

    def shown(self, target_label: str = "TARGET") -> str:
        argv = self.make_argv(Path(target_label))
        first = Path(argv[0]).name if "/" in argv[0] else argv[0]
        rest = ["benchmarks/floor.py" if a.endswith("benchmarks/floor.py") else a for a in argv[1:]]
        env = " ".join(f"{k}={v}" for k, v in (self.env_extra or {}).items())
        return (env + " " if env else "") + " ".join([first, *rest])


@dataclasses.dataclass
class Setup:
    tools: list[Tool]
    notes: list[str]
    versions: dict[str, str]
    ours_flags: dict[str, bool]


def discover(args, workdir: Path) -> Setup:
    notes: list[str] = []
    versions: dict[str, str] = {}
    dev = Path(args.venv).resolve()
    dev_python = venv_bin(dev, "python")
    jobs = str(args.jobs)
    base_env = dict(os.environ)
    base_env.pop("VIRTUAL_ENV", None)
    tools: list[Tool] = []

    def cwd_for(key: str) -> Path:
        d = workdir / key
        d.mkdir(parents=True, exist_ok=True)
        return d

    dv = dev_versions(dev_python, ["flake8", "pycodestyle", "pyflakes", "mccabe", "libcst",
                                   "flake8-tensorcopy"])
    versions["libcst (dev venv)"] = dv.get("libcst") or "?"

    # -- ours
    ours = Path(args.tensorcopy) if args.tensorcopy else venv_bin(dev, "tensorcopy")
    ours_flags = {"present": False, "no_cache": False, "jobs": False, "output_format": False,
                  "isolated": False}
    if not ours.exists():
        notes.append(f"tensorcopy CLI not found at {ours}: ours-cold/ours-warm skipped "
                     "(install the project with `pip install -e .` in the dev venv)")
    else:
        rc, help_text = run_text([str(ours), "check", "--help"], timeout=120)
        if rc != 0:
            notes.append(f"`tensorcopy check --help` failed (rc={rc}): ours skipped: {help_text[-300:]}")
        else:
            ours_flags.update(present=True, no_cache="--no-cache" in help_text,
                              jobs=bool(re.search(r"(--jobs|-j)\b", help_text)),
                              output_format="--output-format" in help_text,
                              isolated="--isolated" in help_text)
            rc, v = run_text([str(ours), "--version"])
            versions["tensorcopy"] = (v.splitlines()[-1] if rc == 0 and v
                                      else dv.get("flake8-tensorcopy") or "?")
            jobs_args = ["--jobs", jobs] if ours_flags["jobs"] else []
            if not ours_flags["jobs"]:
                notes.append("`tensorcopy check` has no --jobs option: it ran with its own default "
                             "process count")
            if not ours_flags["no_cache"]:
                notes.append("`tensorcopy check` has no --no-cache option: ours-cold is the same "
                             "command run in a fresh empty cwd each time (no .tensorcopy_cache/)")
            nc = ["--no-cache"] if ours_flags["no_cache"] else []
            # like flake8/ruff --isolated: no config from the corpus or the cwd; plain text output
            common = (["--isolated"] if ours_flags["isolated"] else []) + \
                (["--output-format", "text"] if ours_flags["output_format"] else [])
            jobs_args = common + jobs_args
            tools.append(Tool("ours-cold", "tensorcopy check (no cache)",
                              lambda t, nc=nc, j=jobs_args: [str(ours), "check", *nc, *j, str(t)],
                              env=base_env, fresh_cwd=True,
                              stdin_flag="--stdin-filename" if "--stdin-filename" in help_text else None))
            tools.append(Tool("ours-warm", "tensorcopy check (warm cache)",
                              lambda t, j=jobs_args: [str(ours), "check", *j, str(t)],
                              env=base_env, prime=True, cwd=cwd_for("ours-warm")))

    # -- flake8 without the plugin (own venv, same versions as the dev venv)
    pins = [f"{d}=={dv[d]}" for d in ("flake8", "pycodestyle", "pyflakes", "mccabe") if dv.get(d)]
    plain, err = ensure_venv("flake8-plain", pins or ["flake8"])
    if plain is None:
        notes.append(f"flake8 (plain) skipped: {err}")
    else:
        f8 = venv_bin(plain, "flake8")
        rc, v = run_text([str(f8), "--version"])
        versions["flake8 (plain venv)"] = " ".join(v.split())
        tools.append(Tool("flake8", "flake8 (no plugin)",
                          lambda t: [str(f8), "--isolated", "--jobs", jobs, str(t)],
                          env=base_env, cwd=cwd_for("flake8")))

    # -- flake8 with the plugin (dev venv)
    f8dev = venv_bin(dev, "flake8")
    if not f8dev.exists():
        notes.append(f"{f8dev} not found: flake8+plugin skipped")
    else:
        rc, v = run_text([str(f8dev), "--version"])
        versions["flake8 (dev venv)"] = " ".join(v.split())
        if "tensorcopy" not in v:
            notes.append("the dev venv's flake8 does not list the tensorcopy plugin "
                         f"(`flake8 --version`: {' '.join(v.split())}): flake8+tns/flake8-tns skipped")
        else:
            # (The summary cache is in each project root: the corpus' package folders.)
            tools.append(Tool("flake8+tns", "flake8 + tensorcopy plugin (warm)",
                              lambda t: [str(f8dev), "--isolated", "--jobs", jobs, str(t)],
                              env=base_env, prime=True, cwd=cwd_for("flake8+tns")))
            tools.append(Tool("flake8+tns-cold", "flake8 + tensorcopy plugin (cold)",
                              lambda t: [str(f8dev), "--isolated", "--jobs", jobs, "--tensorcopy-cache-dir",
                                         ".tensorcopy_cache", str(t)],
                              env=base_env, fresh_cwd=True))
            tools.append(Tool("flake8-tns", "flake8 --select TNS",
                              lambda t: [str(f8dev), "--isolated", "--select", "TNS", "--jobs", jobs, str(t)],
                              env=base_env, prime=True, cwd=cwd_for("flake8-tns")))

    # -- TorchFix
    if args.no_torchfix:
        notes.append("TorchFix skipped (--no-torchfix)")
    else:
        tfv, err = ensure_venv("torchfix", [f"torchfix=={TORCHFIX_VERSION}"])
        if tfv is None:
            notes.append(f"TorchFix skipped: {err}")
        else:
            tf = venv_bin(tfv, "torchfix")
            rc, v = run_text([str(tf), "--version"])
            lv = dev_versions(venv_bin(tfv, "python"), ["libcst"])
            versions["torchfix"] = f"{v.strip()} (libcst {lv.get('libcst')})"
            tools.append(Tool("torchfix", "TorchFix",
                              lambda t: [str(tf), "--jobs", jobs, str(t)],
                              env=base_env, cwd=cwd_for("torchfix")))

    # -- ruff
    toolsv, err = ensure_venv("tools", [f"ruff=={RUFF_VERSION}"])
    if toolsv is None:
        notes.append(f"ruff skipped: {err}")
    else:
        ruff = venv_bin(toolsv, "ruff")
        rc, v = run_text([str(ruff), "--version"])
        versions["ruff"] = v.strip()
        env = dict(base_env, RAYON_NUM_THREADS=jobs)
        tools.append(Tool("ruff", "ruff --select E,F",
                          lambda t: [str(ruff), "check", "--isolated", "--no-cache", "--select", "E,F",
                                     "--output-format", "concise", str(t)],
                          env=env, env_extra={"RAYON_NUM_THREADS": jobs}, cwd=cwd_for("ruff")))

    # -- floor
    floor = Path(__file__).resolve().parent / "floor.py"
    tools.append(Tool("floor", "floor: read + ast.parse",
                      lambda t: [str(dev_python), str(floor), "--jobs", jobs, str(t)],
                      env=base_env, cwd=cwd_for("floor")))
    versions["python (dev venv)"] = machine_info(dev_python)["python"]
    return Setup(tools, notes, versions, ours_flags)


# --------------------------------------------------------------------------- benchmarking


@dataclasses.dataclass
class Target:
    name: str
    path: Path
    files: int
    lines: int
    description: str


def make_target(name: str, files: list[Path], description: str, whole_corpus: bool = False) -> Target:
    path = corpus_path() if whole_corpus else materialize_subset(name, files)
    lines = sum(count_lines(p.read_bytes()) for p in files)
    return Target(name, path, len(files), lines, description)


def run_once(tool: Tool, target: Path, timeout: float, workdir: Path,
             stdin_path: Path | None = None, argv: list[str] | None = None) -> Sample:
    argv = argv or tool.argv(target)
    if tool.fresh_cwd:
        cwd = Path(tempfile.mkdtemp(prefix=f"{tool.key}-", dir=workdir))
        try:
            return measure(argv, cwd, tool.env, stdin_path, timeout)
        finally:
            shutil.rmtree(cwd, ignore_errors=True)
    return measure(argv, tool.cwd or workdir, tool.env, stdin_path, timeout)


def summarize(samples: list[Sample], target: Target) -> dict:
    walls = [s.wall for s in samples]
    med = statistics.median(walls)
    return {
        "runs": len(samples),
        "wall_median_s": med,
        "wall_min_s": min(walls),
        "wall_max_s": max(walls),
        "cpu_median_s": statistics.median(s.cpu for s in samples),
        "peak_rss_mb": max(s.maxrss_kb for s in samples) / 1024,
        "files_per_s": target.files / med if med else None,
        "lines_per_s": target.lines / med if med else None,
        "findings": samples[-1].findings,
        "findings_stable": len({s.findings for s in samples}) == 1,
        "rc": sorted({s.rc for s in samples}),
        "timed_out": any(s.timed_out for s in samples),
        "traceback": any(s.traceback for s in samples),
        "walls_s": walls,
    }


def bench(tools: list[Tool], target: Target, repeat: int, timeout: float, workdir: Path) -> dict:
    log(f"[bench] {target.name}: {target.files} files, {target.lines} lines; tools: "
        f"{', '.join(t.key for t in tools)}; {repeat} interleaved rounds")
    for t in tools:
        if t.prime:
            log(f"[bench]   priming {t.key} (untimed)")
            s = run_once(t, target.path, timeout, workdir)
            if s.timed_out:
                log(f"[bench]   {t.key}: priming timed out")
    samples: dict[str, list[Sample]] = {t.key: [] for t in tools}
    dropped: set[str] = set()
    for r in range(repeat):
        k = r % len(tools)
        for t in tools[k:] + tools[:k]:
            if t.key in dropped:
                continue
            s = run_once(t, target.path, timeout, workdir)
            samples[t.key].append(s)
            log(f"[bench]   round {r + 1}/{repeat} {t.key:<15} {s.wall:8.2f}s  cpu {s.cpu:7.2f}s  "
                f"rss {s.maxrss_kb / 1024:6.0f}MB  rc={s.rc}  findings={s.findings}"
                + ("  TIMED OUT" if s.timed_out else ""))
            if s.timed_out:
                dropped.add(t.key)
                log(f"[bench]   {t.key} timed out after {timeout}s: no more runs of it on this target")
    rows = {}
    for t in tools:
        if samples[t.key]:
            rows[t.key] = {"label": t.label, "command": t.shown(), **summarize(samples[t.key], target)}
            bad = [s for s in samples[t.key] if s.traceback or s.rc not in (0, 1)]
            if bad:
                rows[t.key]["stderr_tail"] = bad[0].stderr_tail
    ref = "ours-cold" if "ours-cold" in rows else ("flake8" if "flake8" in rows else None)
    for row in rows.values():
        row["vs_ref"] = row["wall_median_s"] / rows[ref]["wall_median_s"] if ref else None
        row["vs_floor"] = (row["wall_median_s"] / rows["floor"]["wall_median_s"]) if "floor" in rows else None
    return {"target": dataclasses.asdict(target) | {"path": str(target.path)}, "reference": ref,
            "repeat": repeat, "rows": rows}


def latency(tools_by_key: dict[str, Tool], file: Path, runs: int, timeout: float, workdir: Path) -> dict:
    """Editor-style single-file runs (no --jobs: what an editor integration does)."""
    cases: list[tuple[str, Tool, list[str], Path | None]] = []
    f8 = tools_by_key.get("flake8")
    f8t = tools_by_key.get("flake8+tns")
    if f8:
        exe = f8.argv(file)[0]
        cases.append(("flake8 FILE (no plugin)", f8, [exe, "--isolated", str(file)], None))
        cases.append(("flake8 - < FILE (no plugin)", f8,
                      [exe, "--isolated", "--stdin-display-name", file.name, "-"], file))
    if f8t:
        exe = f8t.argv(file)[0]
        cases.append(("flake8 FILE (+tensorcopy)", f8t, [exe, "--isolated", str(file)], None))
        cases.append(("flake8 - < FILE (+tensorcopy)", f8t,
                      [exe, "--isolated", "--stdin-display-name", file.name, "-"], file))
    oc = tools_by_key.get("ours-cold")
    if oc:
        argv = oc.argv(file)
        if "--jobs" in argv:  # single file: no worker pool
            i = argv.index("--jobs")
            argv = argv[:i] + argv[i + 2:]
        cases.append(("tensorcopy check FILE (no cache)", oc, argv, None))
        if oc.stdin_flag:
            i = argv.index(str(file))
            cases.append(("tensorcopy check - < FILE (no cache)", oc,
                          argv[:i] + [oc.stdin_flag, file.name, "-"] + argv[i + 1:], file))
    if not cases:
        return {}
    log(f"[latency] {file} ({count_lines(file.read_bytes())} lines), {runs} interleaved runs per case")
    for _, tool, argv, stdin in cases:  # warm-up
        run_once(tool, file, timeout, workdir, stdin, argv)
    samples: dict[str, list[Sample]] = {name: [] for name, *_ in cases}
    for r in range(runs):
        for name, tool, argv, stdin in cases:
            samples[name].append(run_once(tool, file, timeout, workdir, stdin, argv))
    out = {"file": str(file), "lines": count_lines(file.read_bytes()), "runs": runs, "cases": {}}
    for name, tool, argv, stdin in cases:
        walls = [s.wall for s in samples[name]]
        out["cases"][name] = {
            "command": " ".join([Path(argv[0]).name, *argv[1:]]).replace(str(file), "FILE")
            + (" < FILE" if stdin else ""),
            "median_ms": statistics.median(walls) * 1000,
            "min_ms": min(walls) * 1000,
            "max_ms": max(walls) * 1000,
            "peak_rss_mb": max(s.maxrss_kb for s in samples[name]) / 1024,
            "findings": samples[name][-1].findings,
            "rc": sorted({s.rc for s in samples[name]}),
        }
    return out


# --------------------------------------------------------------------------- reporting


def _f(x, fmt: str, dash: str = "-") -> str:
    return dash if x is None else format(x, fmt)


def table_lines(res: dict, md: bool) -> list[str]:
    ref = res["reference"]
    head = ["tool", "wall med s", "min", "max", "CPU s", "peak RSS MB", "files/s", "lines/s",
            "findings", f"x {ref}", "x floor"]
    rows = []
    for key, r in res["rows"].items():
        flag = ""
        if r["timed_out"]:
            flag += " (TIMED OUT)"
        if r["traceback"]:
            flag += " (traceback!)"
        if not set(r["rc"]) <= {0, 1}:
            flag += f" (rc={r['rc']})"
        rows.append([key + flag, _f(r["wall_median_s"], ".2f"), _f(r["wall_min_s"], ".2f"),
                     _f(r["wall_max_s"], ".2f"), _f(r["cpu_median_s"], ".2f"), _f(r["peak_rss_mb"], ".0f"),
                     _f(r["files_per_s"], ",.0f"), _f(r["lines_per_s"], ",.0f"),
                     str(r["findings"]) + ("" if r["findings_stable"] else "~"),
                     _f(r["vs_ref"], ".2f"), _f(r["vs_floor"], ".2f")])
    if md:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return out
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    return [fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]


def _load(x) -> str:
    return "?" if not x else "/".join(f"{v:.2f}" for v in x)


def report(result: dict, md: bool) -> str:
    L: list[str] = []
    h = (lambda s: L.append(f"\n## {s}\n")) if md else (lambda s: L.append(f"\n== {s} =="))
    m = result["machine"]
    if md:
        L.append(f"# tensorcopy benchmark ({result['mode']})\n")
        L.append(f"Run {result['started']} with `{result['command']}`.\n")
    else:
        L.append(f"tensorcopy benchmark ({result['mode']}), {result['started']}")
    L.append(("- " if md else "") + f"Machine: {m.get('cpu_model', '?')}, {m['cpu_count']} CPUs "
             f"({m.get('cpu_affinity')} usable), {m.get('ram_gib', '?')} GiB RAM, {m['platform']}, "
             f"python {m['python']}; --jobs {result['jobs']} for every tool; load at start "
             f"{_load(m.get('loadavg_at_start'))}, at end {_load(m.get('loadavg_at_end'))} "
             "(other work on the machine shows up as load > jobs)")
    L.append(("- " if md else "") + "Tools: " + "; ".join(f"{k}: {v}" for k, v in result["versions"].items()))
    bullet = "- " if md else ""
    L.append(bullet + "Corpus: " + ", ".join(f"{p['name']}=={p['version']} ({p['files']} files, {p['lines']} lines)"
                                             for p in result["corpus"]))
    if result["notes"]:
        h("Notes")
        L.extend(f"- {n}" for n in result["notes"])
    for key in ("main", "torchfix_subset"):
        res = result.get(key)
        if not res:
            continue
        t = res["target"]
        h(f"{t['name']}: {t['files']} files, {t['lines']:,} lines")
        L.append(t["description"] + f" Median of {res['repeat']} interleaved runs; "
                 f"'x {res['reference']}' = median wall / {res['reference']} median wall; "
                 "findings = output lines `path:line:col: CODE`.")
        if md:
            L.append("")
        L.extend(table_lines(res, md))
        rows = res["rows"]
        if "flake8" in rows and ("flake8+tns-cold" in rows or "flake8+tns" in rows):
            base = rows["flake8"]
            shares = [f"{label} {rows[k]['wall_median_s'] / base['wall_median_s']:.3f}x wall, "
                      f"{rows[k]['cpu_median_s'] / base['cpu_median_s']:.3f}x CPU"
                      for k, label in (("flake8+tns-cold", "cold"), ("flake8+tns", "warm")) if k in rows]
            L.append(("\n" if md else "") + "flake8 with the plugin / without it (target: cold <= 1.10x): "
                     + "; ".join(shares) + ".")
        if md:
            L.append("")
            L.append("Commands:\n")
        else:
            L.append("commands:")
        L.extend(("- `" if md else "  ") + f"{k}: {r['command']}" + ("`" if md else "")
                 for k, r in res["rows"].items())
    sc = result.get("scaling")
    if sc:
        h("Scaling (ours-cold, half vs whole)")
        L.append(f"half: {sc['half_files']} files in {sc['half_wall_s']:.2f}s = {sc['half_files_per_s']:,.0f} files/s "
                 f"({sc['half_lines_per_s']:,.0f} lines/s); whole: {sc['whole_files']} files in "
                 f"{sc['whole_wall_s']:.2f}s = {sc['whole_files_per_s']:,.0f} files/s "
                 f"({sc['whole_lines_per_s']:,.0f} lines/s); whole/half time = {sc['time_ratio']:.2f} "
                 f"(lines ratio {sc['lines_ratio']:.2f}; linear scaling gives the same number)")
    lat = result.get("latency")
    if lat:
        h(f"Single-file latency: {Path(lat['file']).name} ({lat['lines']} lines), "
          f"median of {lat['runs']} runs")
        head = ["case", "median ms", "min ms", "max ms", "peak RSS MB", "findings"]
        rows = [[k, f"{c['median_ms']:.0f}", f"{c['min_ms']:.0f}", f"{c['max_ms']:.0f}",
                 f"{c['peak_rss_mb']:.0f}", str(c["findings"])] for k, c in lat["cases"].items()]
        if md:
            L.append("| " + " | ".join(head) + " |")
            L.append("|---|" + "---:|" * (len(head) - 1))
            L.extend("| " + " | ".join(r) + " |" for r in rows)
        else:
            widths = [max(len(x) for x in col) for col in zip(head, *rows)]
            for r in [head] + rows:
                L.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                   enumerate(zip(r, widths))))
    L.append(f"\nTotal benchmark time: {result['elapsed_s']:.0f}s")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                 description="Speed benchmark of tensorcopy vs flake8/TorchFix/ruff/ast floor.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_FILES}-file subset (TorchFix table: {QUICK_TORCHFIX_FILES} files); "
                    "a smoke test of a few minutes")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per tool (>= 3; default 3)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="process count for every tool")
    ap.add_argument("--files", type=int, default=None,
                    help=f"size of the --quick subset (default {QUICK_FILES})")
    ap.add_argument("--torchfix-files", type=int, default=None,
                    help=f"size of the fixed subset on which TorchFix (and, for the ratios, every other "
                    f"tool) runs (default {TORCHFIX_FILES}, quick {QUICK_TORCHFIX_FILES})")
    ap.add_argument("--no-torchfix", action="store_true", help="skip TorchFix")
    ap.add_argument("--no-latency", action="store_true", help="skip the single-file latency runs")
    ap.add_argument("--latency-runs", type=int, default=None, help="runs per latency case (default 9, quick 5)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per tool run before it is killed (default 1800, quick 300)")
    ap.add_argument("--venv", default=str(REPO_ROOT / ".venv" if (REPO_ROOT / ".venv").exists()
                                          else Path(sys.prefix)),
                    help="dev venv with flake8 + our plugin + tensorcopy (default: ./.venv)")
    ap.add_argument("--tensorcopy", default=None, help="path of the tensorcopy CLI (default: VENV/bin/tensorcopy)")
    ap.add_argument("--wait-idle", type=float, default=0, metavar="SECONDS",
                    help="first wait up to SECONDS for the 1-minute load average to drop below 0.5")
    ap.add_argument("--out", default=None, help="results name under benchmarks/results/ (default: quick or full)")
    args = ap.parse_args(argv)
    if args.repeat < 3:
        ap.error("--repeat must be >= 3 (median/min/max of at least 3 runs)")
    timeout = args.timeout or (300.0 if args.quick else 1800.0)
    latency_runs = args.latency_runs or (5 if args.quick else 9)
    mode = "quick" if args.quick else "full"
    t_start = time.perf_counter()
    started = _dt.datetime.now().isoformat(timespec="seconds")

    if args.wait_idle > 0:
        wait_for_idle(args.wait_idle)
    infos = ensure_corpus()
    all_files = corpus_files(infos)
    cache_dir().mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="tensorcopy-bench-"))
    try:
        setup = discover(args, workdir)
        notes = list(setup.notes)
        by_key = {t.key: t for t in setup.tools}
        if args.quick:
            n = args.files or QUICK_FILES
            main_files = stride_subset(all_files, n)
            main_t = make_target(f"quick-{n}", main_files,
                                 f"--quick: fixed stride subset of {n} corpus files (every k-th file of the "
                                 "path-sorted corpus), hard-linked under the cache dir; TorchFix excluded "
                                 "(see the next table).")
        else:
            main_files = all_files
            main_t = make_target("corpus", all_files, "The whole corpus (TorchFix excluded: too slow; "
                                 "see the next table).", whole_corpus=True)
        main_tools = [t for t in setup.tools if t.key != "torchfix"]
        tf_t = None
        if "torchfix" in by_key:
            n = args.torchfix_files or (QUICK_TORCHFIX_FILES if args.quick else TORCHFIX_FILES)
            tf_t = make_target(f"stride-{n}", stride_subset(all_files, n),
                               f"Fixed subset for TorchFix: {n} files, every k-th file of the path-sorted "
                               "corpus (corpus.stride_subset); every tool runs on it so ratios compare "
                               "the same files. TorchFix itself only parses files containing 'torch'.")
        warm_t = make_target(f"warmup-{WARMUP_FILES}", stride_subset(all_files, WARMUP_FILES), "warm-up")

        # Warm-up: page cache for the target, .pyc files of every tool.
        log(f"[warmup] floor on {main_t.name}, every tool on {WARMUP_FILES} files (untimed)")
        run_once(by_key["floor"], main_t.path, timeout, workdir)
        for t in setup.tools:
            s = run_once(t, warm_t.path, timeout, workdir)
            if s.traceback or not (s.rc in (0, 1)):
                notes.append(f"warm-up of {t.key} on {WARMUP_FILES} files: rc={s.rc}"
                             + (", traceback on stderr" if s.traceback else "")
                             + f": {s.stderr_tail[-300:]!r}")

        result: dict = {
            "mode": mode, "started": started,
            "command": "python -m benchmarks.run " + " ".join(sys.argv[1:] if argv is None else argv),
            "jobs": args.jobs, "machine": machine_info(venv_bin(Path(args.venv), "python")),
            "versions": setup.versions, "ours_cli_flags": setup.ours_flags,
            "corpus": [dataclasses.asdict(i) for i in infos], "notes": notes,
        }
        load0 = result["machine"].get("loadavg_at_start")
        if load0 and load0[0] > 1.0:
            notes.append(f"the machine was busy at start (1-min load {load0[0]:.2f}): wall times are "
                         "inflated and noisy; CPU seconds are less affected. Rerun on an idle machine "
                         "(--wait-idle 600 waits for one).")
        result["main"] = bench(main_tools, main_t, args.repeat, timeout, workdir)
        if tf_t is not None:
            result["torchfix_subset"] = bench(setup.tools, tf_t, args.repeat, timeout, workdir)

        # Scaling: ours-cold on every other file of the main target vs all of it.
        oc = by_key.get("ours-cold")
        if oc and "ours-cold" in result["main"]["rows"]:
            half_t = make_target(f"{main_t.name}-half", stride_subset(main_files, len(main_files) // 2),
                                 "every other file of the main target")
            log(f"[scaling] ours-cold on {half_t.files} files ({half_t.lines} lines)")
            hs = [run_once(oc, half_t.path, timeout, workdir) for _ in range(args.repeat)]
            hw = statistics.median(s.wall for s in hs)
            w = result["main"]["rows"]["ours-cold"]
            result["scaling"] = {
                "half_files": half_t.files, "half_lines": half_t.lines, "half_wall_s": hw,
                "half_walls_s": [s.wall for s in hs],
                "half_files_per_s": half_t.files / hw, "half_lines_per_s": half_t.lines / hw,
                "whole_files": main_t.files, "whole_lines": main_t.lines, "whole_wall_s": w["wall_median_s"],
                "whole_files_per_s": w["files_per_s"], "whole_lines_per_s": w["lines_per_s"],
                "time_ratio": w["wall_median_s"] / hw, "lines_ratio": main_t.lines / half_t.lines,
            }
        elif not oc:
            notes.append("scaling skipped: no tensorcopy CLI")

        if not args.no_latency:
            lf = corpus_path() / LATENCY_FILE
            if lf.exists():
                result["latency"] = latency(by_key, lf, latency_runs, timeout, workdir)
            else:
                notes.append(f"latency skipped: {lf} not in the corpus")
        result["elapsed_s"] = time.perf_counter() - t_start
        result["machine"]["loadavg_at_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None

        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        name = args.out or mode
        (RESULTS_DIR / f"{name}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
        (RESULTS_DIR / f"{name}.md").write_text(report(result, md=True))
        print(report(result, md=False))
        log(f"[done] wrote {RESULTS_DIR / (name + '.json')} and {RESULTS_DIR / (name + '.md')}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
