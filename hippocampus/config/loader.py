"""The lenient loader: a yaml file (or a parsed mapping) into the schema's blocks; each mistake falls back to a
default and is one line of `cfg.warnings` (`load` logs them, check-config prints them). `cfg.sources` says where
each value came from: the yaml, the environment (SEREN_HIPPOCAMPUS_BLOCK_KEY, env_names), or the default."""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import re
import stat
from typing import Any, Optional

from hippocampus import cmdline
from hippocampus.config.schema import (DEFAULT_PATH, ENV_PREFIX, MEMORY_ALIASES, NOT_SETTINGS, NUL, SECRET_KEYS,
                                       Config, MemoryConfig, _all_paths, _block_type, _settings)
from hippocampus.config import aliases as yaml_aliases
from hippocampus.config import names, replay_endpoints
from hippocampus.config.hosts import entry_problems
from hippocampus.config.pointers import bare_variable_names, pointer_problems
from hippocampus.config.suggest import unknown_key_line
from hippocampus.words import whole, yes_no

log = logging.getLogger(__name__)

CONFIG_ENV = f"{ENV_PREFIX}_CONFIG"      # not a setting: where the settings are
EMPTY_MEANS_OFF = {"model.url"}
KNOWN_PATHS = tuple(_all_paths(Config))
# where a setting's value came from
FROM_YAML, FROM_ENV, FROM_FLAG, FROM_DEFAULT = "yaml", "environment", "flag", "default"
KNOWN_BLOCKS = frozenset(p.rsplit(".", n)[0] for p in KNOWN_PATHS for n in range(1, p.count(".") + 1))


class Sources:
    """Where each setting's value came from: the yaml, the environment (which variable), a flag, or its default."""

    def __init__(self, by_path: Optional[dict] = None, variables: Optional[dict] = None) -> None:
        self.by_path = dict(by_path or {})
        self.variables = dict(variables or {})

    def flagged(self, paths: list) -> None:
        for p in paths:
            self.by_path[p] = FROM_FLAG
            self.variables.pop(p, None)

    def of(self, path: str) -> str:
        return self.by_path.get(path, FROM_DEFAULT)

    def every(self) -> dict:
        """Every setting's source, in the schema's order."""
        return {p: self.of(p) for p in KNOWN_PATHS if p not in KNOWN_BLOCKS}

    def from_environment(self) -> dict:
        """{setting: the variable it came from}, for those the environment set (and no flag since)."""
        return {p: v for p, v in self.variables.items() if self.of(p) == FROM_ENV}


def resolve_path(cli_path: Optional[str] = None, environ: Optional[dict] = None) -> Optional[str]:
    """--config, then $SEREN_HIPPOCAMPUS_CONFIG, then the home default if it exists."""
    env = os.environ if environ is None else environ
    named = cli_path or (env.get(CONFIG_ENV) or "").strip()     # a blank variable is unset, as every one is
    if named:
        return os.path.expanduser(named)
    home = os.path.expanduser(DEFAULT_PATH)
    return home if os.path.exists(home) else None


def path_from(cli_path: Optional[str] = None) -> str:
    """Where resolve_path found the file: "flag", "environment" or "default"."""
    return FROM_FLAG if cli_path else FROM_ENV if (os.environ.get(CONFIG_ENV) or "").strip() else FROM_DEFAULT


CONFIG_BYTES = 1 << 20       # of a config file only this much is read: a real one is a few KiB
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class NotAFile(OSError):
    """A path a person gave (--config, a token file) that names no regular file, or one past its bound."""


def read_head(path: str, most: int) -> bytes:
    """Up to `most` + 1 bytes of the regular file at `path`; NotAFile for a FIFO, device, socket or folder, refused
    before it is opened (no wait for a writer, no endless read). Opened O_NONBLOCK: a FIFO swapped in since the
    stat waits for nobody, and is read as empty."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        kind = next((what for test, what in _KINDS if test(mode)), "not a file")
        raise NotAFile(f"is not a regular file ({kind})")
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)), "rb") as fh:
        return fh.read(most + 1) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else b""


def _read_yaml(path: str, warnings: list) -> dict:
    from ruamel.yaml import YAML

    text = None
    try:
        head = read_head(path, CONFIG_BYTES)
        if len(head) > CONFIG_BYTES:
            raise NotAFile(f"is larger than {CONFIG_BYTES >> 20} MiB, more than any config needs")
        text = head.decode("utf-8-sig")
        yaml_aliases.check(YAML(typ="safe", pure=True).compose(text), KNOWN_BLOCKS)   # before anything walks it
        data = YAML(typ="safe", pure=True).load(text)
    except Exception as exc:  # noqa: BLE001 - no text: it could not be read; else any parser error is "malformed"
        if isinstance(exc, UnicodeDecodeError):
            problem = (f"is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at position {exc.start}): save it "
                       "as UTF-8")
        elif isinstance(exc, NotAFile):
            problem = f"{exc}: name the yaml file itself"
        elif text is None:
            problem = "does not exist" if isinstance(exc, FileNotFoundError) else f"could not be read ({exc})"
        elif isinstance(exc, yaml_aliases.AliasBomb):
            problem = f"is not valid yaml ({exc})"
        else:
            problem = f"is not valid yaml {yaml_error(exc, text)}"
    else:
        if data is None or isinstance(data, dict):
            return data or {}
        problem = f"does not hold a mapping at the top level (it holds a {type(data).__name__})"
    warnings.append(f"config file {path} {problem}; running on defaults")
    return {}


def yaml_error(exc: Exception, text: str) -> str:
    """Where the parser stopped and why, and the nearest line at or above it indented with a tab."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None)
    if problem is None:
        problem = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if mark is None:
        return f"({problem})"
    line = mark.line + 1
    tab_line = _tab_indented_line(text, line, "'\\t'" in problem)
    out = f"at line {line}, column {mark.column + 1}: {problem}"
    if tab_line:
        out += (f" (line {tab_line} is indented with a tab: yaml indents with spaces only, "
                "so replace the tab with spaces)")
    return out


def _tab_indented_line(text: str, upto: int, tab_at_mark: bool) -> Optional[int]:
    """The nearest line at or above `upto` whose indentation holds a tab; with none, `upto` when the parser's
    complaint is itself about a tab."""
    lines = text.splitlines()
    for n in range(min(upto, len(lines)), 0, -1):
        if "\t" in re.match(r"[ \t]*", lines[n - 1]).group(0):
            return n
    return upto if tab_at_mark else None


def unsplit(exc: ValueError) -> str:
    """Why a command line (the yaml's, a flag's) could not be split, and what to do."""
    return f"cannot be read as a command line ({str(exc).lower()}): close its quotes"


_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")    # as the yaml reads a number written bare


def whole_number(value: Any) -> Optional[int]:
    """A whole number (words.whole), text written as the yaml writes a number bare included: the yaml takes
    `2000.0` and `2e3` as 2000, so the environment, a flag and a quoted yaml value take "2000.0" too. None for
    anything else ("2000.5", "nan", "2_000"): the caller says "is not a whole number" in its own words."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        value = float(value) if whole(value) is None else value
    return whole(value)


def _coerce(value: Any, default: Any) -> Any:
    """Turn a yaml value into the default's type, or raise ValueError."""
    texts = value if isinstance(value, list) else [value]
    if isinstance(default, (str, list)) and any("\0" in str(t) for t in texts):
        raise ValueError(NUL)
    if isinstance(default, bool):
        if yes_no(value) is None:
            raise ValueError("is not true or false")
        return yes_no(value)
    if isinstance(default, int):
        if whole_number(value) is None:
            raise ValueError("is not a whole number")
        return whole_number(value)
    if isinstance(default, float):
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            with contextlib.suppress(ValueError):
                number = float(value)       # float() takes the spaces around a number in a string
                if number == number:        # NaN ("nan", yaml's .nan) passes every min and max: not a number
                    return number
        raise ValueError("is not a number")
    if isinstance(default, str):
        if isinstance(value, (dict, list)):
            raise ValueError("is not a text value")
        return default if value is None else str(value).strip()     # as the environment's value is (env_override)
    if isinstance(default, list):
        if isinstance(value, str):
            try:
                return cmdline.split(value, windows=os.name == "nt")
            except ValueError as exc:       # an open quote: the splitter's words, as the start would read them
                raise ValueError(unsplit(exc)) from None
        if isinstance(value, list):
            return [str(v) for v in value]
        raise ValueError("is not a list")
    if isinstance(default, dict):
        if value is None or isinstance(value, dict):
            return dict(value or {})
        raise ValueError("is not a mapping")
    return value


LONGEST = 1e9        # seconds no setting needs past (~31 years), under what a socket or a wait takes (~9.2e9)


def out_of_range(value: Any, lo: Any, hi: Any) -> str:
    """Why `value` is outside [lo, hi] (either may be None: no bound), saying the whole range; '' when inside."""
    if (lo is None or value >= lo) and (hi is None or value <= hi):
        return ""
    return (f"must be {lo} to {hi}" if lo is not None and hi is not None
            else f"must be at least {lo}" if lo is not None else f"must be at most {hi}")


def check_value(value: Any, rules: dict) -> tuple:
    """(the value to use, why it differs from the value given, or None). ValueError: not usable."""
    aliases = rules.get("aliases") or {}
    if isinstance(value, str):
        low = value.strip().lower() if "choices" in rules else value
        value = aliases.get(low, low)
    if isinstance(value, list) and rules.get("commas"):
        value = [p.strip() for v in value for p in v.split(",") if p.strip()]
    if isinstance(value, list) and aliases:
        value = [aliases.get(v, v) for v in value]
    if "choices" in rules and value not in rules["choices"]:
        raise ValueError("must be one of " + ", ".join(repr(c) for c in rules["choices"]))
    if rules.get("command") and isinstance(value, str):      # as the start and the stop split it
        try:
            cmdline.split(value, windows=os.name == "nt")
        except ValueError as exc:
            raise ValueError(unsplit(exc)) from None
    clamped = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = rules.get("min"), rules.get("max")
        if not rules.get("clamp") and (problem := out_of_range(value, lo, hi)):
            raise ValueError(problem)
        if lo is not None and value < lo:
            value, clamped = type(value)(lo), f"is below {lo}, the least this setting takes"
        elif hi is not None and value > hi:
            value, clamped = type(value)(hi), f"is above {hi}, the most this setting takes"
        if value in (math.inf, -math.inf):      # no bound took it: no clock or socket takes an endless one
            raise ValueError("is not a finite number")
        if isinstance(value, float) and abs(value) > LONGEST:   # nor seconds past ~9.2e9 (OverflowError in a wait)
            raise ValueError(f"is past {LONGEST:g}, longer than any clock here waits (about 31 years)")
    if "check" in rules and not rules["check"](value):
        raise ValueError("is not " + rules.get("form", "in the expected form"))
    return value, clamped


def _build(cls: type, data: Any, prefix: str, warnings: list, sources: dict) -> Any:
    """The block `cls` from yaml `data`; each setting the yaml set is marked "yaml" in `sources`."""
    obj = cls()
    if data is None:
        return obj
    if not isinstance(data, dict):
        warnings.append(f"'{prefix.rstrip('.')}' should be a block of settings, not {data!r}; using its defaults")
        return obj
    if cls is MemoryConfig:
        data = dict(data)
        for alias, long_key in MEMORY_ALIASES.items():
            if alias in data:
                v = data.pop(alias)
                data[long_key] = data.get(long_key) or v       # the long key, when it holds a value, wins
    known = {f.name: f for f in _settings(cls)}
    for key, raw in data.items():
        path = f"{prefix}{key}"
        f = known.get(str(key))
        if f is None:
            warnings.append(unknown_key_line(path, KNOWN_PATHS))
            continue
        sub = _block_type(cls, f.name)
        if sub is not None:
            setattr(obj, f.name, _build(sub, raw, path + ".", warnings, sources))
            continue
        default = getattr(obj, f.name)
        ok, value = _checked(f, raw, default, f"'{path}' = ", f"using the default {default!r}", warnings)
        if ok and not (isinstance(value, str) and f.name == "host" and not value.strip()):
            setattr(obj, f.name, value)
            sources[path] = FROM_YAML
    return obj


def _checked(f: dataclasses.Field, raw: Any, current: Any, said: str, instead: str, warnings: list) -> tuple:
    """(True, `raw` checked as setting `f` takes it, a clamp said), or (False, None) with the line saying why
    and what is used `instead`. `said` names where it came from."""
    shown = "(hidden)" if f.name in SECRET_KEYS else repr(raw)
    try:
        value, clamped = check_value(_coerce(raw, current), dict(f.metadata))
    except (ValueError, TypeError) as exc:
        warnings.append(f"{said}{shown} {exc}; {instead}")
        return False, None
    if clamped:
        warnings.append(f"{said}{shown} {clamped}; using {value!r}")
    return True, value


def env_names(path: str) -> list:
    """SEREN_HIPPOCAMPUS_BLOCK_KEY for `block.key`; a server or tls key by its bare name first (_HOST, _PORT, the
    family's _TRUST_SYSTEM_STORE)."""
    parts = path.split(".")
    names = ([parts[1:]] if parts[0] in ("server", "tls") else []) + [parts]
    return [f"{ENV_PREFIX}_{'_'.join(n).upper()}" for n in names]


def env_override(path: str, environ: Optional[dict] = None) -> tuple:
    """(the variable, its value) overriding `path`, or (None, None); empty is unset unless it means off."""
    env = os.environ if environ is None else environ
    for name in env_names(path):
        raw = env.get(name)
        if raw is not None and (raw.strip() or path in EMPTY_MEANS_OFF):
            return name, raw.strip()
    return None, None


def _env_overrides(obj: Any, environ: dict, warnings: list, sources: dict, variables: dict, prefix: str = "") -> None:
    """Each setting whose variable is set (env_names) takes its value, checked like yaml; marked "environment"."""
    for f in _settings(obj):
        current = getattr(obj, f.name)
        if dataclasses.is_dataclass(current):
            _env_overrides(current, environ, warnings, sources, variables, f"{prefix}{f.name}.")
            continue
        name, raw = env_override(prefix + f.name, environ)
        if name is None:
            continue
        ok, value = _checked(f, raw, current, f"{name}=", f"keeping {current!r}", warnings)
        if ok:
            setattr(obj, f.name, value)
            sources[prefix + f.name], variables[prefix + f.name] = FROM_ENV, name


def build(data: dict, *, path: Optional[str] = None, environ: Optional[dict] = None,
          warnings: Optional[list] = None) -> Config:
    """A Config from an already-parsed mapping (what load() does after reading)."""
    warnings = [] if warnings is None else warnings
    env = os.environ if environ is None else environ
    sources: dict = {}
    variables: dict = {}
    cfg = _build(Config, data, "", warnings, sources)
    _env_overrides(cfg, env, warnings, sources, variables)
    if cfg.model.lifecycle.built:
        cfg.model.lifecycle.manage = True
    for block in (cfg.memory, cfg.model):     # a trailing slash off, never the scheme's ("http://" stays itself)
        head, sep, rest = block.url.rpartition("://")
        block.url = head + sep + rest.rstrip("/")
    cfg.server.mcp_mount = "/" + (cfg.server.mcp_mount.strip().strip("/") or "mcp")
    bare_variable_names(cfg)
    warnings.extend(pointer_problems(cfg, env))
    warnings.extend(replay_endpoints.problems(cfg))
    warnings.extend(names.problems(cfg))
    warnings.extend(entry_problems(cfg.server))
    cfg.path = path
    cfg.warnings = warnings
    cfg.sources = Sources(sources, variables)
    return cfg


def load(cli_path: Optional[str] = None, *, environ: Optional[dict] = None, announce: bool = True) -> Config:
    """Resolve the path, read it leniently, and build the config; log the warnings when announcing."""
    path = resolve_path(cli_path, environ)
    warnings: list = []
    cfg = build(_read_yaml(path, warnings) if path else {}, path=path, environ=environ, warnings=warnings)
    if announce:
        for w in warnings:
            log.warning("config: %s", w)
    return cfg


def redacted(cfg: Config) -> dict:
    """The resolved config as a plain mapping with every secret hidden."""
    def shown(pairs: list) -> dict:
        return {k: ("(set)" if v else "") if k in SECRET_KEYS else v for k, v in pairs if k not in NOT_SETTINGS}
    return dataclasses.asdict(cfg, dict_factory=shown)
