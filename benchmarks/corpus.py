"""Build (and reuse) the benchmark corpus: the ``.py`` files of pinned PyPI releases.

The corpus lives OUTSIDE the repository:

* ``$TENSORCOPY_CORPUS`` if set, else ``$TENSORCOPY_CACHE/corpus``, else
  ``~/.cache/tensorcopy/corpus``.
* Downloaded archives go to ``<cache>/downloads``; the tool venvs of
  ``benchmarks.run`` go to ``<cache>/venvs``; file subsets (hard links) go to
  ``<cache>/subsets``.  ``<cache>`` is ``$TENSORCOPY_CACHE`` or
  ``~/.cache/tensorcopy``.

Each package is fetched with ``pip download --no-deps`` (wheel preferred, sdist
accepted) and only its ``.py`` members are unpacked, into
``<corpus>/<name>-<version>/`` (for an sdist the archive's top folder is
stripped).  A manifest per package in ``<corpus>/.manifests/`` marks it done;
later runs skip packages whose manifest exists.

    python -m benchmarks.corpus            # download what is missing, print counts
    python -m benchmarks.corpus --list     # ... and list every file with its line count
    python -m benchmarks.corpus --refresh  # unpack again from the archives (re-download if absent)

Importable: ``from benchmarks.corpus import ensure_corpus, corpus_path``.
Pure standard library.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

REPO_ROOT = Path(__file__).resolve().parent.parent

MANIFEST_DIR = ".manifests"
MANIFEST_VERSION = 2


@dataclasses.dataclass(frozen=True)
class Package:
    name: str  # PyPI name
    version: str
    role: str  # "library", "training", "gan"
    why: str

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"


# The pinned set.  Every entry was checked with `pip download --no-deps` on this
# project's machine; the "gan" ones contain discriminator/generator training
# code with `.backward(` (see README.md for the files).
PACKAGES: tuple[Package, ...] = (
    Package("transformers", "5.24.0", "library",
            "model zoo; the bulk of the corpus (~2,900 files, ~1.2M lines)"),
    Package("torchvision", "0.29.1", "library",
            "models/transforms/datasets (.py from the wheel; no sdist on PyPI)"),
    Package("pytorch-lightning", "1.4.9", "training",
            "wheel ships pl_examples/ (training scripts, a GAN template) and "
            "tests/ (many small training loops); the 1.5/1.6 wheels have "
            "metadata that pip >= 24.1 rejects, 1.7+ dropped pl_examples"),
    Package("labml-nn", "0.5.1", "training",
            "annotated paper implementations with experiment/training loops "
            "(GAN, CycleGAN, StyleGAN, WGAN-GP, ...)"),
    Package("d2l", "1.0.3", "training",
            "Dive into Deep Learning helpers: train loops, update_D/update_G"),
    Package("torchgan", "0.1.0", "gan", "GAN library: trainer + losses that call .backward()"),
    Package("vegans", "0.4.0", "gan", "GAN library: generator/adversary training loop"),
    Package("stylegan2-pytorch", "1.9.0", "gan", "StyleGAN2 Trainer.train() D/G steps"),
    Package("lightweight-gan", "1.2.1", "gan", "Lightweight GAN Trainer.train() D/G steps"),
    Package("mmagic", "1.2.0", "gan",
            "OpenMMLab editing/generation: SRGAN, DeblurGANv2, inpainting GAN train_step"),
    Package("pygan", "1.1.2", "gan", "sdist; torch GAN controllers (GANomaly, ClusterGAN)"),
)


# --------------------------------------------------------------------------- paths


def cache_dir() -> Path:
    env = os.environ.get("TENSORCOPY_CACHE")
    return Path(env).expanduser().resolve() if env else Path.home() / ".cache" / "tensorcopy"


def corpus_path() -> Path:
    env = os.environ.get("TENSORCOPY_CORPUS")
    path = Path(env).expanduser().resolve() if env else cache_dir() / "corpus"
    _refuse_inside_repo(path)
    return path


def downloads_dir() -> Path:
    return cache_dir() / "downloads"


def venvs_dir() -> Path:
    return cache_dir() / "venvs"


def subsets_dir() -> Path:
    return cache_dir() / "subsets"


def _refuse_inside_repo(path: Path) -> None:
    resolved = path.resolve()
    if resolved == REPO_ROOT or REPO_ROOT in resolved.parents:
        raise SystemExit(
            f"refusing to put benchmark data inside the repository ({resolved}); "
            "set TENSORCOPY_CORPUS / TENSORCOPY_CACHE to a path outside it"
        )


# --------------------------------------------------------------------------- counting


def count_lines(data: bytes) -> int:
    """Physical lines, as `wc -l` would count them plus a last unterminated line."""
    if not data:
        return 0
    n = data.count(b"\n")
    return n if data.endswith(b"\n") else n + 1


def iter_py_files(root: Path) -> list[Path]:
    """All ``*.py`` files under root (sorted by path), skipping dot-directories."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                out.append(Path(dirpath) / fn)
    out.sort()
    return out


# --------------------------------------------------------------------------- download/unpack


def _pip_download(pkg: Package, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    found = _find_archive(pkg, dest)
    if found:
        return found
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--dest", str(dest), f"{pkg.name}=={pkg.version}"]
    print(f"  $ {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"pip download {pkg.name}=={pkg.version} failed:\n{proc.stdout}\n{proc.stderr}")
    found = _find_archive(pkg, dest)
    if not found:
        raise RuntimeError(f"pip download {pkg.name}=={pkg.version}: archive not found in {dest}:\n{proc.stdout}")
    return found


def _norm(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _find_archive(pkg: Package, dest: Path) -> Path | None:
    want = _norm(pkg.name)
    wheels, sdists = [], []
    for p in sorted(dest.iterdir()):
        low = p.name.lower()
        if low.endswith(".whl"):
            dist, ver = p.name.split("-")[:2]
            if _norm(dist) == want and ver == pkg.version:
                wheels.append(p)
        elif low.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz")):
            stem = p.name
            for suf in (".tar.gz", ".tar.bz2", ".tgz", ".zip"):
                if low.endswith(suf):
                    stem = p.name[: -len(suf)]
            dist, _, ver = stem.rpartition("-")
            if _norm(dist) == want and ver == pkg.version:
                sdists.append(p)
    return (wheels or sdists or [None])[0]


def _safe_rel(name: str, strip_top: bool) -> PurePosixPath | None:
    parts = PurePosixPath(name).parts
    if strip_top:
        parts = parts[1:]
    if not parts or any(p in ("", ".", "..") for p in parts) or name.startswith("/"):
        return None
    # Skip dot-directories (e.g. mmagic/.mim/configs): linters differ on
    # whether they descend into them, so keep them out of the corpus.
    if any(p.startswith(".") for p in parts[:-1]):
        return None
    return PurePosixPath(*parts)


def _unpack_py(archive: Path, target: Path) -> None:
    """Unpack only the .py members of a wheel/zip/tarball into target."""
    name = archive.name.lower()
    if name.endswith((".whl", ".zip")):
        strip = not name.endswith(".whl")
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if info.is_dir() or not info.filename.endswith(".py"):
                    continue
                rel = _safe_rel(info.filename, strip)
                if rel is None:
                    continue
                out = target / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(zf.read(info))
    else:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                if not member.isfile() or not member.name.endswith(".py"):
                    continue
                rel = _safe_rel(member.name, True)
                if rel is None:
                    continue
                fobj = tf.extractfile(member)
                if fobj is None:
                    continue
                out = target / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(fobj.read())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclasses.dataclass
class PackageInfo:
    name: str
    version: str
    role: str
    path: str
    archive: str
    sha256: str
    files: int
    lines: int


def _manifest_path(root: Path, pkg: Package) -> Path:
    return root / MANIFEST_DIR / f"{pkg.dirname}.json"


def _build_manifest(pkg: Package, target: Path, archive: Path) -> PackageInfo:
    files = iter_py_files(target)
    lines = sum(count_lines(p.read_bytes()) for p in files)
    return PackageInfo(pkg.name, pkg.version, pkg.role, str(target), archive.name,
                       _sha256(archive), len(files), lines)


def ensure_package(pkg: Package, root: Path | None = None, *, refresh: bool = False,
                   verbose: bool = True) -> PackageInfo:
    root = root or corpus_path()
    manifest = _manifest_path(root, pkg)
    target = root / pkg.dirname
    if manifest.exists() and target.is_dir() and not refresh:
        data = json.loads(manifest.read_text())
        if data.get("manifest_version") == MANIFEST_VERSION:
            data.pop("manifest_version")
            return PackageInfo(**data)
    if verbose:
        print(f"[corpus] fetching {pkg.name}=={pkg.version}", flush=True)
    archive = _pip_download(pkg, downloads_dir())
    tmp = root / f".tmp-{pkg.dirname}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    _unpack_py(archive, tmp)
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    info = _build_manifest(pkg, target, archive)
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({**dataclasses.asdict(info), "manifest_version": MANIFEST_VERSION},
                                   indent=2) + "\n")
    if verbose:
        print(f"[corpus]   {info.files} .py files, {info.lines} lines -> {target}", flush=True)
    return info


def ensure_corpus(*, refresh: bool = False, verbose: bool = True,
                  packages: tuple[Package, ...] = PACKAGES) -> list[PackageInfo]:
    """Download/unpack every pinned package that is not there yet; return their infos."""
    root = corpus_path()
    root.mkdir(parents=True, exist_ok=True)
    return [ensure_package(p, root, refresh=refresh, verbose=verbose) for p in packages]


def corpus_files(infos: list[PackageInfo] | None = None) -> list[Path]:
    """Every corpus .py file, sorted by path (package dirs in PACKAGES order of name)."""
    infos = infos if infos is not None else ensure_corpus(verbose=False)
    files: list[Path] = []
    for info in sorted(infos, key=lambda i: Path(i.path).name):
        files.extend(iter_py_files(Path(info.path)))
    return files


# --------------------------------------------------------------------------- subsets


def stride_subset(files: list[Path], n: int) -> list[Path]:
    """A fixed, deterministic sample of n files: every (len/n)-th file of the
    path-sorted list (index floor(i*len/n) for i in 0..n-1), so every package
    is represented in proportion to its file count."""
    files = sorted(files)
    if n <= 0 or n >= len(files):
        return files
    return [files[(i * len(files)) // n] for i in range(n)]


def materialize_subset(name: str, files: list[Path], root: Path | None = None) -> Path:
    """Hard-link (or copy) files into <cache>/subsets/<name>/ keeping their
    corpus-relative paths; reused when the file list is unchanged."""
    root = root or corpus_path()
    dest = subsets_dir() / name
    _refuse_inside_repo(dest)
    rels = [str(p.relative_to(root)) for p in sorted(files)]
    digest = hashlib.sha256("\n".join(rels).encode()).hexdigest()
    stamp = dest / ".subset.json"
    if stamp.exists():
        try:
            if json.loads(stamp.read_text()).get("sha256") == digest:
                return dest
        except ValueError:
            pass
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for rel in rels:
        src, out = root / rel, dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, out)
        except OSError:
            shutil.copy2(src, out)
    stamp.write_text(json.dumps({"sha256": digest, "files": len(rels)}) + "\n")
    return dest


# --------------------------------------------------------------------------- CLI


def print_table(infos: list[PackageInfo], out=sys.stdout) -> None:
    w = max(len(f"{i.name}=={i.version}") for i in infos)
    print(f"{'package':<{w}}  {'role':<8}  {'files':>6}  {'lines':>9}", file=out)
    for i in infos:
        print(f"{i.name + '==' + i.version:<{w}}  {i.role:<8}  {i.files:>6}  {i.lines:>9}", file=out)
    print(f"{'total':<{w}}  {'':<8}  {sum(i.files for i in infos):>6}  "
          f"{sum(i.lines for i in infos):>9}", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.corpus", description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="also list every corpus file with its line count")
    ap.add_argument("--refresh", action="store_true", help="unpack every package again")
    args = ap.parse_args(argv)
    infos = ensure_corpus(refresh=args.refresh)
    print(f"corpus: {corpus_path()}")
    print_table(infos)
    if args.list:
        for p in corpus_files(infos):
            print(f"{count_lines(p.read_bytes()):>7}  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
