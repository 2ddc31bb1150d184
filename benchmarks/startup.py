"""Start-up cost: what an editor or pre-commit pays for one file.

    .venv/bin/python -m benchmarks.startup [--runs N] [--file F] [--dev] [--baseline REV]

Prints the median wall time of

  floor      python -c "import ast"          (the interpreter starting, plus the parser module)
  check      tensorcopy check FILE            (cache warm: the file did not change since last run)
  check-nc   tensorcopy check --no-cache FILE (the file changed: it is read, parsed and analysed)
  flake8     flake8 --isolated FILE           without the plugin
  flake8+tns flake8 --isolated FILE           with the plugin
  flake8-frz flake8 --isolated FILE           without the plugin, its heap frozen (gc.freeze)
                                             before the first file's checks, as the plugin does

and the two figures issue 18 sets targets for: check / floor (target <= 3x) and
(flake8+tns) - flake8 (target <= 10 ms).  The plugin freezes the heap once it has imported the
engine (plugin.py, `_engine`): that also spares flake8 the collections that would traverse its
own objects, so (flake8+tns) - flake8-frz is printed too: the plugin's own work, without that
saving.

How, so that the figures are what a user gets:
- Two venvs under the benchmark cache (``~/.cache/tensorcopy/venvs``, see benchmarks/README.md)
  with the same flake8, pycodestyle, pyflakes and mccabe as the dev venv: ``startup-flake8``
  (flake8 only) and ``startup-tensorcopy`` (the same, plus this checkout installed as a regular,
  non-editable package with ``--no-deps``: its check path needs neither libcst nor torch).  The
  package is reinstalled from a copy of the working tree on every run of this script.  An
  editable install would put its import hook into every interpreter start of that venv (about
  10 ms here, paid by the floor too), which flatters the ratio.
- The floor, ``tensorcopy`` and the plugin run on the same interpreter (the venvs' python).
- Bytecode: the packages are compiled when pip installs them, the children run without
  ``PYTHONDONTWRITEBYTECODE``, and every command runs untimed three times first.
- Rounds are interleaved (one run of each command per round, order rotating), from a
  temporary working directory holding only FILE (so no configuration file applies and the
  result cache stays out of the repository).
- ``--dev`` adds the same commands in the dev venv (editable install), for comparison.
- ``--baseline REV`` installs git revision REV the same way (venv ``startup-baseline``) and times
  its ``check`` and plugin in the same rounds: a before/after on one machine at one time.

The FILE (default: a 42-line training step with one finding) imports torch: a file that does
not is answered before the engine is even imported, which would measure nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.corpus import REPO_ROOT
from benchmarks.run import dev_versions, ensure_venv, run_text, venv_bin

TARGET_RATIO = 3.0
TARGET_PLUGIN_MS = 10.0

SAMPLE = '''\
"""A small training step, as a file an editor saves."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, width)
        self.fc2 = nn.Linear(width, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train_step(model, batch, target, optimizer):
    optimizer.zero_grad()
    out = model(batch)
    loss = F.cross_entropy(out, target)
    loss.backward()
    optimizer.step()
    return loss.item()


def snapshot():
    history = MODEL.fc1.weight.clone().detach()
    return history


def evaluate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for batch, target in loader:
            out = model(batch)
            total += F.cross_entropy(out, target).item()
    model.train()
    return total / max(1, len(loader))


MODEL = Net()
'''


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def child_env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users have .pyc files; so must the measurement
    for var in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONPROFILEIMPORTTIME", "PYTHONIOENCODING"):
        env.pop(var, None)
    env["NO_COLOR"] = "1"
    return env


def install_checkout(venv: Path, rev: str | None = None) -> str:
    """Install this working tree (a copy: nothing is built inside the repository), or git
    revision `rev` of it, as a regular package, without dependencies.  '' on success, else why
    not."""
    with tempfile.TemporaryDirectory(prefix="tensorcopy-startup-src-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        if rev is None:
            for name in ("pyproject.toml", "README.md"):
                shutil.copy2(REPO_ROOT / name, src / name)
            shutil.copytree(REPO_ROOT / "flake8_tensorcopy", src / "flake8_tensorcopy",
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            archive = Path(tmp) / "rev.tar"
            rc, out = run_text(["git", "-C", str(REPO_ROOT), "archive", "-o", str(archive), rev,
                                "pyproject.toml", "README.md", "flake8_tensorcopy"])
            if rc != 0:
                return f"git archive {rev} failed: {out[-400:]}"
            shutil.unpack_archive(str(archive), str(src))
        rc, out = run_text([str(venv_bin(venv, "python")), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                            "--no-deps", "--force-reinstall", str(src)], timeout=600)
    return "" if rc == 0 else f"pip install of {rev or 'the checkout'} failed: {out[-600:]}"


# flake8 without the plugin, its heap frozen where the plugin freezes it (before the first
# file's checks): the reference for the plugin's own work.
_FROZEN_FLAKE8 = """
import gc, sys
import flake8.checker
_run = flake8.checker.FileChecker.run_checks
def run_checks(self, *args, **kwargs):
    gc.freeze()
    return _run(self, *args, **kwargs)
flake8.checker.FileChecker.run_checks = run_checks
from flake8.main.cli import main
sys.argv[0] = "flake8"
main()
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(commands: dict[str, list[str]], runs: int, cwd: Path, env: dict) -> dict[str, list[float]]:
    for argv in commands.values():  # warm-up: .pyc files, page cache, the result cache
        for _ in range(3):
            subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times: dict[str, list[float]] = {k: [] for k in commands}
    keys = list(commands)
    for r in range(runs):
        order = keys[r % len(keys):] + keys[:r % len(keys)]
        for key in order:
            t0 = time.perf_counter()
            subprocess.run(commands[key], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[key].append(time.perf_counter() - t0)
    return times


def report(title: str, times: dict[str, list[float]], labels: dict[str, str]) -> dict[str, float]:
    med = {k: median_ms(v) for k, v in times.items()}
    print(title)
    for key, label in labels.items():
        if key in med:
            v = sorted(times[key])
            print(f"  {label:<58} {med[key]:7.1f} ms  (min {v[0] * 1000:6.1f}, max {v[-1] * 1000:6.1f})")
    return med


def ratios(med: dict[str, float], prefix: str = "") -> None:
    floor = med["floor"]
    check, nocache = med["check"], med["check-nc"]
    ok = "meets" if check <= TARGET_RATIO * floor else "MISSES"
    ok_nc = "meets" if nocache <= TARGET_RATIO * floor else "MISSES"
    print(f"  {prefix}check / floor:             {check / floor:5.2f}x  ({ok} the target <= {TARGET_RATIO:g}x)")
    print(f"  {prefix}check --no-cache / floor:  {nocache / floor:5.2f}x  ({ok_nc} the target <= {TARGET_RATIO:g}x)")
    if "flake8" in med and "flake8+tns" in med:
        diff = med["flake8+tns"] - med["flake8"]
        ok = "meets" if diff <= TARGET_PLUGIN_MS else "MISSES"
        print(f"  {prefix}plugin: flake8+tns - flake8: {diff:+6.1f} ms  ({ok} the target <= {TARGET_PLUGIN_MS:g} ms)")
        if "flake8-frz" in med:
            own = med["flake8+tns"] - med["flake8-frz"]
            print(f"  {prefix}plugin's own work: flake8+tns - flake8-frz: {own:+6.1f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30, help="timed runs of each command (default 30)")
    ap.add_argument("--file", type=Path, default=None, help="the file to check (default: a 42-line training step)")
    ap.add_argument("--dev", action="store_true", help="also measure the dev venv (editable install)")
    ap.add_argument("--baseline", metavar="REV", default=None,
                    help="also measure git revision REV, installed the same way, in the same rounds")
    ns = ap.parse_args(argv)

    dev_python = Path(sys.executable)
    pins = [f"{d}=={v}" for d, v in dev_versions(dev_python, ["flake8", "pycodestyle", "pyflakes", "mccabe"]).items()
            if v]
    plain, why = ensure_venv("startup-flake8", pins or ["flake8"])
    if plain is None:
        log(f"no flake8-only venv: {why}")
        return 2
    ours, why = ensure_venv("startup-tensorcopy", pins or ["flake8"])
    if ours is None:
        log(f"no venv for the installed package: {why}")
        return 2
    log("[setup] installing this checkout into " + str(ours))
    why = install_checkout(ours)
    if why:
        log(why)
        return 2
    base = None
    if ns.baseline:
        base, why = ensure_venv("startup-baseline", pins or ["flake8"])
        why = why or install_checkout(base, ns.baseline)
        if why:
            log(why)
            return 2

    env = child_env()
    with tempfile.TemporaryDirectory(prefix="tensorcopy-startup-") as tmp:
        cwd = Path(tmp)
        target = cwd / "train_step.py"
        if ns.file is not None:
            shutil.copyfile(ns.file, target)
        else:
            target.write_text(SAMPLE, encoding="utf-8")
        py = str(venv_bin(ours, "python"))
        commands = {
            "floor": [py, "-c", "import ast"],
            "check": [str(venv_bin(ours, "tensorcopy")), "check", target.name],
            "check-nc": [str(venv_bin(ours, "tensorcopy")), "check", "--no-cache", target.name],
            "flake8": [str(venv_bin(plain, "flake8")), "--isolated", target.name],
            "flake8+tns": [str(venv_bin(ours, "flake8")), "--isolated", target.name],
            "flake8-frz": [str(venv_bin(plain, "python")), "-c", _FROZEN_FLAKE8, "--isolated", target.name],
        }
        if base is not None:
            commands.update({
                "base:check": [str(venv_bin(base, "tensorcopy")), "check", target.name],
                "base:check-nc": [str(venv_bin(base, "tensorcopy")), "check", "--no-cache", target.name],
                "base:flake8+tns": [str(venv_bin(base, "flake8")), "--isolated", target.name],
            })
        probe = subprocess.run(commands["check-nc"], cwd=cwd, env=env, capture_output=True, text=True)
        plugin = subprocess.run(commands["flake8+tns"], cwd=cwd, env=env, capture_output=True, text=True)
        if probe.returncode not in (0, 1) or (probe.returncode == 1) != (" TNS" in plugin.stdout):
            log(f"tensorcopy check failed or the plugin did not run:\n{probe.stdout}{probe.stderr}"
                f"{plugin.stdout}{plugin.stderr}")
            return 2
        labels = {
            "floor": 'python -c "import ast"',
            "check": f"tensorcopy check {target.name}",
            "check-nc": f"tensorcopy check --no-cache {target.name}",
            "flake8": f"flake8 --isolated {target.name} (no plugin)",
            "flake8+tns": f"flake8 --isolated {target.name} (with the plugin)",
            "flake8-frz": f"flake8 --isolated {target.name} (no plugin, heap frozen)",
        }
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; "
              f"{ns.runs} interleaved runs each; file: {ns.file or 'the built-in sample'} "
              f"({len(target.read_text(encoding='utf-8').splitlines())} lines, "
              f"{sum(1 for line in probe.stdout.splitlines() if ': TNS' in line)} finding(s))")
        if base is not None:
            labels.update({f"base:{k}": f"{v} [{ns.baseline}]" for k, v in list(labels.items())
                           if k in ("check", "check-nc", "flake8+tns")})
        med = report("Installed package (regular install, no editable hook):",
                     measure(commands, ns.runs, cwd, env), labels)
        ratios(med)
        if base is not None:
            print(f"Baseline {ns.baseline}, same rounds:")
            ratios({"floor": med["floor"], "flake8": med["flake8"], "flake8-frz": med["flake8-frz"],
                    **{k[5:]: v for k, v in med.items() if k.startswith("base:")}})
        if ns.dev:
            dev_bin = dev_python.parent
            dev_commands = {
                "floor": [str(dev_python), "-c", "import ast"],
                "check": [str(dev_bin / "tensorcopy"), "check", target.name],
                "check-nc": [str(dev_bin / "tensorcopy"), "check", "--no-cache", target.name],
            }
            dev_med = report("Dev venv (editable install):", measure(dev_commands, ns.runs, cwd, env), labels)
            ratios(dev_med)
    return 0


if __name__ == "__main__":
    sys.exit(main())
