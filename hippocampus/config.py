"""The service's configuration: blocks as dataclasses, read leniently from yaml.

Lenient like the rest of the Seren family: a missing or malformed file runs on
defaults with one clear line; a bad value falls back to its default on its own,
naming the key, the value and the default; a key the config does not have is
ignored and named, with where it likely belongs.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

log = logging.getLogger("hippocampus.config")

ENV_PREFIX = "SEREN_HIPPOCAMPUS"
DEFAULT_PATH = "~/seren-hippocampus/seren-hippocampus.yaml"
_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_TRUTHY = {"1", "true", "yes", "on"}
_FALSY = {"0", "false", "no", "off"}


def _field(default: Any, **rules: Any) -> Any:
    """A dataclass field with validation rules in its metadata.

    rules: min / max (numbers: below min or above max falls back, unless
    clamp=True, which clamps), choices (strings), check (a callable that
    returns True for a good value), aliases (value -> canonical value).
    """
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=rules)
    return field(default=default, metadata=rules)


def _hhmm_or_blank(v: str) -> bool:
    return v == "" or bool(_HHMM.match(v))


@dataclass
class ServerConfig:
    host: str = _field("127.0.0.1")
    port: int = _field(7424, min=1, max=65535)
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    allow_open_lan: bool = _field(False)
    threads: int = _field(8, min=1, max=256)
    max_body_bytes: int = _field(1_048_576, min=1024)
    allowed_hosts: list = _field([])
    allowed_origins: list = _field([])
    connection_limit: int = _field(400, min=10, max=10_000)
    header_timeout_seconds: float = _field(5.0, min=0.5, max=300)
    channel_timeout_seconds: float = _field(30.0, min=1, max=3600)

    def resolve_bearer(self) -> str:
        return resolve_pointer(self)

    def __repr__(self) -> str:  # the token never reaches a log or a traceback
        return f"ServerConfig(host={self.host!r}, port={self.port}, bearer={'set' if self.bearer_token else 'unset'})"


@dataclass
class TlsConfig:
    trust_system_store: bool = _field(False)


@dataclass
class MemoryConfig:
    url: str = _field("http://127.0.0.1:7420")
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    timeout_seconds: float = _field(30.0, min=0.1)

    def resolve_bearer(self) -> str:
        return resolve_pointer(self)


@dataclass
class LifecycleConfig:
    manage: bool = _field(False)
    server: str = _field("")
    model_path: str = _field("")
    server_args: str = _field("-ngl 99 -c 8192")
    start: str = _field("")
    stop: str = _field("")
    cwd: str = _field("")
    observatory_url: str = _field("")
    observatory_service: str = _field("")
    observatory_token: str = _field("")
    observatory_token_env: str = _field("")
    observatory_token_keyring: str = _field("")
    health_url: str = _field("")
    ready_timeout_seconds: float = _field(240.0, min=0.1)
    poll_seconds: float = _field(2.0, min=0.01)
    keep_warm_seconds: float = _field(300.0, min=0)
    handover: bool = _field(False)
    retry_after_seconds: float = _field(900.0, min=0)
    stop_grace_seconds: float = _field(20.0, min=0)

    @property
    def built(self) -> bool:
        return bool(self.server and self.model_path and not self.start)

    @property
    def via_observatory(self) -> bool:
        return bool(self.manage and self.observatory_url and self.observatory_service and not self.start)

    @property
    def managed(self) -> bool:
        return self.built or bool(self.manage and (self.start or (self.observatory_url and self.observatory_service)))


@dataclass
class ModelConfig:
    url: str = _field("http://localhost:8090/v1")
    name: str = _field("default")
    timeout_seconds: float = _field(120.0, min=0.1)
    max_tokens: int = _field(2000, min=16)
    temperature: float = _field(0.2, min=0, max=2)
    extra_body: dict = _field({"chat_template_kwargs": {"enable_thinking": False}})
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)

    @property
    def configured(self) -> bool:
        return bool(self.url.strip())


@dataclass
class SleepConfig:
    mode: str = _field("thread", choices=("thread", "external"))
    interval_seconds: float = _field(72000.0, min=1)
    at: str = _field("", check=_hhmm_or_blank, form="a local HH:MM time, like 03:30")
    tick_seconds: float = _field(300.0, min=0.05)
    tend_cycle: bool = _field(True)
    tend_interval_seconds: float = _field(600.0, min=0.05)
    nudge_wait_seconds: float = _field(180.0, min=0)
    max_entries_per_run: int = _field(500, min=1)
    promote_min_evidence: int = _field(3, min=1)
    pile_max: int = _field(12, min=1, max=200)
    max_attempts: int = _field(3, min=1, max=10, clamp=True)
    candidate_cores: int = _field(8, min=0, max=50)
    core_chars: int = _field(600, min=100, clamp=True)
    gap_grace_intervals: float = _field(3.0, min=0)
    brief_request: bool = _field(True)
    brief_check_misses: int = _field(3, min=1)
    brief_pull: bool = _field(False)
    state_path: str = _field("~/.seren-hippocampus/state.json")

    def heartbeat(self) -> float:
        """How often the thread-mode loop turns."""
        if self.tend_cycle:
            return min(self.tick_seconds, self.tend_interval_seconds)
        return self.tick_seconds

    def resolved_state_path(self) -> Path:
        return Path(os.path.expanduser(self.state_path))


DEFAULT_NOTIFY_EVENTS = ["draft_submitted", "sleep_failed", "chain_closed", "purged"]
DEFAULT_RIPPLE_EVENTS = ["brief_requested", "draft_submitted", "tend_resubmitted", "brief_unmatched"]


@dataclass
class NotifyConfig:
    webhook_url: str = _field("")
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    events: list = _field(list(DEFAULT_NOTIFY_EVENTS), aliases={"docket_submitted": "draft_submitted"})
    timeout_seconds: float = _field(10.0, min=0.1)

    def resolve_bearer(self) -> str:
        return resolve_pointer(self)


@dataclass
class RippleConfig:
    type: str = _field("", choices=("", "script", "endpoint"), aliases={"off": "", "none": ""})
    command: list = _field(["claude", "-p", "{message}"])
    cwd: str = _field("")
    run_as: str = _field("")
    stdin: bool = _field(False)
    timeout_seconds: float = _field(900.0, min=0.1)
    url: str = _field("")
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    events: list = _field(list(DEFAULT_RIPPLE_EVENTS), aliases={"docket_submitted": "draft_submitted"})
    messages: dict = _field({})

    def resolve_bearer(self) -> str:
        return resolve_pointer(self)


@dataclass
class VoiceConfig:
    enabled: bool = _field(False)
    max_chars: int = _field(1500, min=100, max=8000)


@dataclass
class SupervisorConfig:
    max_restarts: int = _field(3, min=0)
    window_seconds: float = _field(60.0, min=0.1)
    backoff_seconds: float = _field(0.2, min=0)
    check_seconds: float = _field(0.5, min=0.01)


@dataclass
class EventsConfig:
    keep: int = _field(500, min=10, max=100_000)


@dataclass
class Config:
    server: ServerConfig = field(default_factory=ServerConfig)
    tls: TlsConfig = field(default_factory=TlsConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    sleep: SleepConfig = field(default_factory=SleepConfig)
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    ripple: RippleConfig = field(default_factory=RippleConfig)
    voice: VoiceConfig = field(default_factory=VoiceConfig)
    supervisor: SupervisorConfig = field(default_factory=SupervisorConfig)
    events: EventsConfig = field(default_factory=EventsConfig)
    path: Optional[str] = None           # the file it came from, if any
    warnings: list = field(default_factory=list)

    @property
    def state_dir(self) -> Path:
        return self.sleep.resolved_state_path().parent


SECRET_KEYS = {"bearer_token", "observatory_token"}
# Corpus Callosum spellings accepted for the memory block's pointers.
MEMORY_ALIASES = {"token": "bearer_token", "token_env": "bearer_token_env", "token_keyring": "bearer_token_keyring"}


def resolve_pointer(block: Any, prefix: str = "bearer_token") -> str:
    """The family's token precedence (inline, keyring, env) over a block's three pointers."""
    from seren_meninges.credentials import resolve_token

    return resolve_token(
        inline=getattr(block, prefix, "") or None,
        keyring_ref=getattr(block, f"{prefix}_keyring", "") or None,
        env_var=getattr(block, f"{prefix}_env", "") or None,
    )


# ---------------------------------------------------------------- loading

def resolve_path(cli_path: Optional[str] = None, environ: Optional[dict] = None) -> Optional[str]:
    """--config, then $SEREN_HIPPOCAMPUS_CONFIG, then the home default if it exists."""
    env = os.environ if environ is None else environ
    if cli_path:
        return os.path.expanduser(cli_path)
    if env.get(f"{ENV_PREFIX}_CONFIG"):
        return os.path.expanduser(env[f"{ENV_PREFIX}_CONFIG"])
    home = os.path.expanduser(DEFAULT_PATH)
    return home if os.path.exists(home) else None


def _read_yaml(path: str, warnings: list) -> dict:
    from ruamel.yaml import YAML

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        warnings.append(f"config file {path} does not exist; running on defaults")
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"config file {path} could not be read ({exc}); running on defaults")
        return {}
    try:
        data = YAML(typ="safe", pure=True).load(text)
    except Exception as exc:  # noqa: BLE001 - any parser error means "malformed"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        warnings.append(f"config file {path} is not valid yaml ({first}); running on defaults")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        warnings.append(f"config file {path} does not hold a mapping at the top level "
                        f"(it holds a {type(data).__name__}); running on defaults")
        return {}
    return data


def _all_paths(cls: type, prefix: str = "") -> list[str]:
    out = []
    for f in dataclasses.fields(cls):
        if f.name in ("path", "warnings"):
            continue
        p = f"{prefix}{f.name}"
        out.append(p)
        sub = _block_type(cls, f.name)
        if sub is not None:
            out.extend(_all_paths(sub, p + "."))
    return out


def _block_type(cls: type, name: str) -> Any:
    default = cls.__dataclass_fields__[name]
    if default.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = default.default_factory()  # type: ignore[misc]
        if dataclasses.is_dataclass(value):
            return type(value)
    return None


def _did_you_mean(path: str) -> str:
    leaf = path.rsplit(".", 1)[-1]
    candidates = [p for p in _all_paths(Config) if p.rsplit(".", 1)[-1] == leaf and p != path]
    line = f"'{path}' is not a setting and was ignored"
    if candidates:
        line += " - did you mean " + " or ".join(candidates) + "?"
    return line


def _coerce(value: Any, default: Any) -> Any:
    """Turn a yaml value into the default's type, or raise ValueError."""
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUTHY | _FALSY:
            return value.strip().lower() in _TRUTHY
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValueError("is not true or false")
    if isinstance(default, int):
        if isinstance(value, bool):
            raise ValueError("is not a whole number")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
            return int(value.strip())
        raise ValueError("is not a whole number")
    if isinstance(default, float):
        if isinstance(value, bool):
            raise ValueError("is not a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise ValueError("is not a number")
    if isinstance(default, str):
        if value is None:
            return default
        if isinstance(value, (dict, list)):
            raise ValueError("is not a text value")
        return str(value)
    if isinstance(default, list):
        if isinstance(value, str):
            return shlex.split(value, posix=os.name != "nt")
        if isinstance(value, list):
            return [str(v) for v in value]
        raise ValueError("is not a list")
    if isinstance(default, dict):
        if value is None:
            return {}
        if isinstance(value, dict):
            return dict(value)
        raise ValueError("is not a mapping")
    return value


def _check(value: Any, rules: dict) -> Any:
    aliases = rules.get("aliases") or {}
    if isinstance(value, str):
        low = value.strip().lower() if "choices" in rules else value
        value = aliases.get(low, low)
    if isinstance(value, list) and aliases:
        value = [aliases.get(v, v) for v in value]
    if "choices" in rules and value not in rules["choices"]:
        raise ValueError("must be one of " + ", ".join(repr(c) for c in rules["choices"]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = rules.get("min"), rules.get("max")
        if lo is not None and value < lo:
            if rules.get("clamp"):
                return type(value)(lo)
            raise ValueError(f"must be at least {lo}")
        if hi is not None and value > hi:
            if rules.get("clamp"):
                return type(value)(hi)
            raise ValueError(f"must be at most {hi}")
    if "check" in rules and not rules["check"](value):
        raise ValueError("is not " + rules.get("form", "in the expected form"))
    return value


def _build(cls: type, data: Any, prefix: str, warnings: list) -> Any:
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
                if not data.get(long_key):
                    data[long_key] = v
    known = {f.name: f for f in dataclasses.fields(cls)}
    for key, raw in data.items():
        path = f"{prefix}{key}"
        f = known.get(str(key))
        if f is None or key in ("path", "warnings"):
            warnings.append(_did_you_mean(path))
            continue
        sub = _block_type(cls, f.name)
        if sub is not None:
            setattr(obj, f.name, _build(sub, raw, path + ".", warnings))
            continue
        default = getattr(obj, f.name)
        try:
            value = _check(_coerce(raw, default), dict(f.metadata))
        except (ValueError, TypeError) as exc:
            shown = "(hidden)" if f.name in SECRET_KEYS else repr(raw)
            warnings.append(f"'{path}' = {shown} {exc}; using the default {default!r}")
            continue
        if isinstance(value, str) and f.name == "host" and not value.strip():
            continue
        setattr(obj, f.name, value)
    return obj


def _env_overrides(cfg: Config, environ: dict, warnings: list) -> None:
    if environ.get(f"{ENV_PREFIX}_HOST", "").strip():
        cfg.server.host = environ[f"{ENV_PREFIX}_HOST"].strip()
    if environ.get(f"{ENV_PREFIX}_PORT", "").strip():
        raw = environ[f"{ENV_PREFIX}_PORT"]
        try:
            cfg.server.port = _check(int(raw), {"min": 1, "max": 65535})
        except ValueError:
            warnings.append(f"{ENV_PREFIX}_PORT={raw!r} is not a port; keeping {cfg.server.port}")
    if environ.get(f"{ENV_PREFIX}_MEMORY_URL", "").strip():
        cfg.memory.url = environ[f"{ENV_PREFIX}_MEMORY_URL"].strip()
    if f"{ENV_PREFIX}_MODEL_URL" in environ:
        cfg.model.url = environ[f"{ENV_PREFIX}_MODEL_URL"].strip()


def build(data: dict, *, path: Optional[str] = None, environ: Optional[dict] = None,
          warnings: Optional[list] = None) -> Config:
    """A Config from an already-parsed mapping (what load() does after reading)."""
    warnings = [] if warnings is None else warnings
    cfg = _build(Config, data, "", warnings)
    _env_overrides(cfg, os.environ if environ is None else environ, warnings)
    if cfg.model.lifecycle.built:
        cfg.model.lifecycle.manage = True
    cfg.memory.url = cfg.memory.url.rstrip("/")
    cfg.model.url = cfg.model.url.rstrip("/")
    cfg.path = path
    cfg.warnings = warnings
    return cfg


def load(cli_path: Optional[str] = None, *, environ: Optional[dict] = None, announce: bool = True) -> Config:
    """Resolve the path, read it leniently, and build the config. Warnings are logged."""
    env = os.environ if environ is None else environ
    path = resolve_path(cli_path, env)
    warnings: list = []
    data = _read_yaml(path, warnings) if path else {}
    cfg = build(data, path=path, environ=env, warnings=warnings)
    if announce:
        for w in warnings:
            log.warning("config: %s", w)
    return cfg


def redacted(cfg: Config) -> dict:
    """The resolved config as a plain mapping with every secret hidden."""
    def walk(obj: Any) -> Any:
        if dataclasses.is_dataclass(obj):
            out = {}
            for f in dataclasses.fields(obj):
                if f.name in ("path", "warnings"):
                    continue
                v = getattr(obj, f.name)
                out[f.name] = ("(set)" if v else "") if f.name in SECRET_KEYS else walk(v)
            return out
        if isinstance(obj, list):
            return [walk(v) for v in obj]
        if isinstance(obj, dict):
            return {k: walk(v) for k, v in obj.items()}
        return obj
    return walk(cfg)
