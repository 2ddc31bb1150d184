"""`[tool.tensorcopy]` in pyproject.toml: finding it, validating it, and merging it with flags.

One configuration per run, like one `--config` for ruff: the closest `pyproject.toml` that has
a `[tool.tensorcopy]` table, walking up from the first path on the command line (the current
directory when there is none, or for `-` without `--stdin-filename`).  The editor server looks
one up per document.  Globs in `exclude` and `per-file-ignores` are matched against paths
relative to the directory of that `pyproject.toml`, and against the file's base name.

Every key is checked: an unknown key or a value of the wrong type is an error naming the file
and the key (the CLI exits with status 2), never silently ignored.
"""

from __future__ import annotations

import os
import re
import sys

from .model import INTERNAL, Options, Record
from .selection import Selection, known_codes, select_codes

CONFIG_FILE = "pyproject.toml"
NUMPY_FIXES = ("detach", "force")
# What a code prefix may look like: ours are TNS + three digits.
_PREFIX = re.compile(r"^TNS[0-9]{0,3}$")


def _toml():
    # Imported when a configuration file is read, not on every start (about 5 ms).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


def check_code(value: str, where: str, *, allow_all: bool = False) -> str:
    """A code or code prefix, upper-cased; ConfigError when it selects no rule (`E501`, `TNS999`):
    the command line and the configuration file accept exactly the same values."""
    code = value.strip().upper()
    if allow_all and code == "ALL":
        return code
    if not _PREFIX.match(code) or not any(k.startswith(code) for k in known_codes()):
        hint = " (or \"ALL\")" if allow_all else ""
        raise ConfigError(f"{where}: {value!r} is not a rule code or prefix such as \"TNS\" or \"TNS201\"{hint}; "
                          "`tensorcopy rules` lists the codes")
    return code


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


class Config(Record):
    """The `[tool.tensorcopy]` table, validated.  None: the key is not set."""

    _FIELDS = (
        ("path", None),  # the pyproject.toml it came from
        ("root", "."),  # the directory globs are relative to
        ("select", None),
        ("ignore", ()),
        ("extend_select", ()),
        ("exclude", None),  # replaces the built-in excludes (ruff's `exclude`)
        ("extend_exclude", ()),  # added to them
        ("force_exclude", None),  # exclusions apply to files named on the command line too
        ("per_file_ignores", ()),  # ((glob, (prefix, ...)), ...)
        ("strict", None),
        ("unsafe_fixes", None),
        ("generator_names", None),
        ("discriminator_names", None),
        ("numpy_fix", None),
        ("cache_dir", None),  # an absolute path (ruff's `cache-dir`, relative to the file's directory)
    )
    __slots__ = tuple(n for n, _ in _FIELDS)


def _str_list(value, where: str, *, codes: bool = False, allow_all: bool = False) -> tuple:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, not {_describe(value)}")
    if not codes:
        return tuple(value)
    return tuple(check_code(v, where, allow_all=allow_all) for v in value)


def _describe(value) -> str:
    return f"{type(value).__name__} {value!r}" if not isinstance(value, (dict, list)) else type(value).__name__


def _bool(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, not {_describe(value)}")
    return value


def _identifiers(value, where: str) -> tuple:
    names = _str_list(value, where)
    for n in names:
        if not n.isidentifier():
            raise ConfigError(f"{where}: {n!r} is not a Python name")
    return names


def _numpy_fix(value, where: str) -> str:
    if value not in NUMPY_FIXES:
        raise ConfigError(f"{where} must be \"detach\" or \"force\", not {value!r}")
    return value


def _per_file_ignores(value, where: str) -> tuple:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table of glob = [codes], not {_describe(value)}")
    return tuple((glob, _str_list(codes, f"{where}.{glob!r}", codes=True)) for glob, codes in value.items())


def _path(value, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where} must be a path (a non-empty string), not {_describe(value)}")
    return os.path.expanduser(value)


# key -> (attribute, validator)
_KEYS = {
    "select": ("select", lambda v, w: _str_list(v, w, codes=True, allow_all=True)),
    "ignore": ("ignore", lambda v, w: _str_list(v, w, codes=True)),
    "extend-select": ("extend_select", lambda v, w: _str_list(v, w, codes=True, allow_all=True)),
    "exclude": ("exclude", _str_list),
    "extend-exclude": ("extend_exclude", _str_list),
    "force-exclude": ("force_exclude", _bool),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "strict": ("strict", _bool),
    "unsafe-fixes": ("unsafe_fixes", _bool),
    "generator-names": ("generator_names", _identifiers),
    "discriminator-names": ("discriminator_names", _identifiers),
    "numpy-fix": ("numpy_fix", _numpy_fix),
    "cache-dir": ("cache_dir", _path),
}
KEYS = tuple(_KEYS)


def parse_table(table, path: str) -> Config:
    """Validate a `[tool.tensorcopy]` table read from `path`."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.tensorcopy] must be a table, not {_describe(table)}")
    values = {}
    for key, value in table.items():
        if key not in _KEYS:
            import difflib

            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(KEYS)}"
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.tensorcopy]{hint}")
        attr, check = _KEYS[key]
        values[attr] = check(value, f"{path}: [tool.tensorcopy] {key}")
    root = os.path.dirname(os.path.abspath(path))
    if values.get("cache_dir") is not None:
        values["cache_dir"] = os.path.join(root, values["cache_dir"])  # (an absolute one stays as it is)
    return Config(path=path, root=root, **values)


def load(path: str) -> Config:
    """Read and validate one pyproject.toml (an empty Config when it has no [tool.tensorcopy])."""
    tomllib = _toml()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict) or "tensorcopy" not in tool:
        return Config(path=path, root=os.path.dirname(os.path.abspath(path)))
    return parse_table(tool["tensorcopy"], path)


def _mentions_us(path: str) -> bool:
    # A cheap look before parsing: an unrelated, even broken, pyproject.toml is not ours to judge.
    try:
        with open(path, "rb") as f:
            return b"tensorcopy" in f.read()
    except OSError:
        return False


def find(start: str) -> str | None:
    """The closest pyproject.toml with a [tool.tensorcopy] table, walking up from `start`."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        candidate = os.path.join(here, CONFIG_FILE)
        if os.path.isfile(candidate) and _mentions_us(candidate):
            tomllib = _toml()
            try:
                with open(candidate, "rb") as f:
                    data = tomllib.load(f)
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{candidate}: not valid TOML: {exc}") from None
            tool = data.get("tool")
            if isinstance(tool, dict) and "tensorcopy" in tool:
                return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def discover(start: str) -> Config:
    """The configuration that applies to `start` (defaults when there is none)."""
    path = find(start)
    return load(path) if path else Config(root=os.getcwd())


# --------------------------------------------------------------------------- using it


_PFI_TOKEN = re.compile(r"(:)|[\s,]+")
_CODE_LIKE = re.compile(r"^[A-Za-z]+[0-9]*$")


def parse_per_file_ignores(value: str, where: str, root: str) -> tuple:
    """`--per-file-ignores` in flake8's syntax: `GLOB[,GLOB...]:CODE[,CODE...]`, several separated
    by spaces (`"tests/*:TNS2 scripts/*.py:TNS401,TNS402"`).  -> ((glob, codes, root), ...)."""
    entries: list = []
    globs: list = []
    codes: list = []
    after_colon = False

    def flush() -> None:
        if not globs or not codes:
            raise ConfigError(f"{where}: {value!r} is not GLOB:CODES (for example \"tests/*:TNS2\")")
        checked = tuple(check_code(c, where) for c in codes)
        entries.extend((g, checked, root) for g in globs)

    for token in (t for t in _PFI_TOKEN.split(value) if t):
        if token == ":":
            if after_colon or not globs:
                flush()  # raises: a colon with no glob before it, or two colons
            after_colon = True
        elif after_colon and _CODE_LIKE.match(token):
            codes.append(token)
        else:
            if after_colon:
                flush()
                globs, codes, after_colon = [], [], False
            globs.append(token)
    flush()
    return tuple(entries)


class Settings(Record):
    """A configuration merged with command-line overrides: what a run uses."""

    _FIELDS = (
        ("codes", ()),  # the rules that run
        ("options", None),  # model.Options
        ("unsafe_fixes", False),
        ("exclude", ()),  # the configuration's `exclude` (globs relative to `root`); () when not set
        ("per_file_ignores", ()),  # ((glob, codes) or (glob, codes, root), ...)
        ("root", "."),
        ("config", None),
        ("internal", True),  # whether TNS000 ("file not analysed") is reported
        ("extend_exclude", ()),  # the configuration's `extend-exclude`
        ("force_exclude", False),
    )
    __slots__ = tuple(n for n, _ in _FIELDS)

    @property
    def selection(self) -> Selection:
        return Selection(self.codes, self.internal, self.per_file_ignores, self.root)


def resolve(config: Config, *, select=None, ignore=(), extend_select=(), strict=None, unsafe_fixes=None,
            numpy_fix=None, generator_names=None, discriminator_names=None, per_file_ignores=None,
            extend_per_file_ignores=(), force_exclude=None) -> Settings:
    """Command-line values (None: not given) over the configuration's, over the defaults.

    `per_file_ignores` (from `--per-file-ignores`) replaces the configuration's table;
    `extend_per_file_ignores` adds to it (ruff's pair of flags)."""

    def checked(values, flag, allow_all=False):
        return [check_code(v, flag, allow_all=allow_all) for v in values] if values else values

    codes = select_codes([
        (config.select, config.ignore, config.extend_select),
        (checked(select, "--select", True), checked(ignore, "--ignore"),
         checked(extend_select, "--extend-select", True)),
    ])

    def pick(cli, cfg, default):
        return cli if cli is not None else (cfg if cfg is not None else default)

    options = Options(
        strict=pick(strict, config.strict, False),
        numpy_fix=pick(numpy_fix, config.numpy_fix, "detach"),
        generator_names=tuple(pick(generator_names, config.generator_names, ())),
        discriminator_names=tuple(pick(discriminator_names, config.discriminator_names, ())),
    )
    ignores = tuple(pick(per_file_ignores, config.per_file_ignores, ())) + tuple(extend_per_file_ignores or ())
    return Settings(tuple(c for c in codes if c != INTERNAL), options, pick(unsafe_fixes, config.unsafe_fixes, False),
                    config.exclude or (), ignores, config.root, config, INTERNAL in codes,
                    config.extend_exclude, pick(force_exclude, config.force_exclude, False))
