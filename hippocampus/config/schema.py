"""The configuration schema: the blocks as dataclasses, with their defaults and rules (loader.py reads them)."""
from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from hippocampus.config.hosts import bind_host_ok
from hippocampus.config.pointers import resolve_pointer  # noqa: F401 - the family's token precedence
from hippocampus.words import NO, YES

ENV_PREFIX = "SEREN_HIPPOCAMPUS"
DEFAULT_PATH = "~/seren-hippocampus/seren-hippocampus.yaml"
_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def _field(default: Any, **rules: Any) -> Any:
    """A field with its rules: min / max (out of range: the default, or clamped with clamp=True), choices,
    check (a callable, `form` naming it), aliases, commas (a list's entries split at commas too), command
    (a one-string command line: its quotes must close, as cmdline.split reads it)."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=rules)
    return field(default=default, metadata=rules)


NUL = "holds a NUL character (\\0), which no path, URL, command or name can hold"


def finite(value: Any) -> bool:
    """No NaN or infinity anywhere in `value` (a mapping sent as JSON, which has neither)."""
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return not isinstance(value, float) or math.isfinite(value)


FINITE = "a mapping of finite numbers and text (no .nan or .inf, which JSON cannot carry)"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_LEVEL_ALIASES = {**{lv.lower(): lv for lv in LOG_LEVELS}, "warn": "WARNING"}


class _Pointed:
    """A block with the three bearer pointers (bearer_token, _env, _keyring)."""

    def resolve_bearer(self) -> str:
        return resolve_pointer(self)


@dataclass
class ServerConfig(_Pointed):
    host: str = _field("127.0.0.1", check=bind_host_ok, form="a host name or address to listen on (no port: that is "
                       "server.port; no scheme, brackets or spaces), like 127.0.0.1 or 0.0.0.0")
    port: int = _field(7424, min=0, max=65535)       # 0: any free port (the start-up line names it)
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    allow_open_lan: bool = _field(False)
    mcp_preload: bool = _field(False)     # an MCP client calls this service: load /mcp right after the start
    threads: int = _field(8, min=1, max=256)
    max_body_bytes: int = _field(1_048_576, min=1024)
    allowed_hosts: list = _field([], commas=True)      # a list of hosts or origins: spaces or commas between
    allowed_origins: list = _field([], commas=True)
    mcp_mount: str = _field("/mcp")                     # where the MCP endpoint is ("tools/mcp/": /tools/mcp)
    mcp_allowed_hosts: list = _field([], commas=True)   # added for /mcp only; either turns the MCP SDK's check on
    mcp_allowed_origins: list = _field([], commas=True)
    connection_limit: int = _field(400, min=10, max=10_000)
    header_timeout_seconds: float = _field(5.0, min=0.5, max=300)
    body_timeout_seconds: float = _field(10.0, min=0.5, max=3600)        # a body's time, then it must keep
    min_body_bytes_per_second: int = _field(1024, min=64, max=1 << 30)  # up this rate (a second per this)
    connection_share: float = _field(0.6, min=0.01, max=1.0)    # of connection_limit, for one client address
    channel_timeout_seconds: float = _field(30.0, min=1, max=3600)
    log_level: str = _field("INFO", choices=LOG_LEVELS, aliases=_LEVEL_ALIASES)

    def __repr__(self) -> str:  # the token never reaches a log or a traceback
        return f"ServerConfig(host={self.host!r}, port={self.port}, bearer={'set' if self.bearer_token else 'unset'})"


@dataclass
class TlsConfig:
    trust_system_store: bool = _field(False)


@dataclass
class MemoryConfig(_Pointed):
    url: str = _field("http://127.0.0.1:7420")
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    timeout_seconds: float = _field(30.0, min=0.1)


@dataclass
class LifecycleConfig:
    manage: bool = _field(False)
    server: str = _field("")
    model_path: str = _field("")
    server_args: str = _field("-ngl 99 -c 8192", command=True)
    start: str = _field("", command=True)
    stop: str = _field("", command=True)
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
    # 64: room for one short operation (below it every answer is cut); 32768: the largest context the small models
    # this runs on are served with, and the prompt must fit beside it (past it: a typo, like 2000000)
    max_tokens: int = _field(2000, min=64, max=32768)
    parallel: int = _field(1, min=1, max=8)     # piles drafted at once: llama-server needs as many slots (-np N)
    temperature: float = _field(0.2, min=0, max=2)
    extra_body: dict = _field({"chat_template_kwargs": {"enable_thinking": False}}, check=finite, form=FINITE)
    structured: str = _field("auto", choices=("auto", "on", "off"),     # send the answer's JSON schema
                             aliases={**dict.fromkeys(YES, "on"), **dict.fromkeys(NO, "off")})
    write: str = _field("auto", choices=("free", "extractive", "auto"),    # the model writes, or only chooses
                        aliases={"extract": "extractive", "extracted": "extractive", "chooses": "extractive",
                                 "writes": "free", "write": "free"})
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)

    @property
    def configured(self) -> bool:
        return bool(self.url.strip())


@dataclass
class BudgetConfig:
    """A night's budget (cycle/budget.py); 0 turns a limit off. A seven-pile night with redrafts makes about 20
    calls and at most 7 x model.max_tokens answer tokens; on a Jetson-class box it takes about half an hour."""
    calls: int = _field(60, min=0)                  # model calls in one sleep (a tend: in one chain's redraft)
    answer_tokens: int = _field(60000, min=0)       # the answers' tokens, as the server counts them
    wall_seconds: float = _field(3600.0, min=0)     # from the sleep's start
    cut_in_a_row: int = _field(3, min=0)            # the breaker: answers in a row cut at model.max_tokens


@dataclass
class SleepConfig:
    mode: str = _field("thread", choices=("thread", "external"))
    interval_seconds: float = _field(72000.0, min=1)
    at: str = _field("", check=lambda v: v == "" or bool(_HHMM.match(v)), form="a local HH:MM time, like 03:30")
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
    state_path: str = _field("~/.seren-hippocampus/state.json",
                             check=lambda v: not os.path.isdir(os.path.expanduser(v)),
                             form="a file's path but a folder (it names the state file: a file in that folder, "
                                  "like state.json)")
    budget: BudgetConfig = field(default_factory=BudgetConfig)

    def heartbeat(self) -> float:
        return min(self.tick_seconds, self.tend_interval_seconds) if self.tend_cycle else self.tick_seconds

    def resolved_state_path(self) -> Path:
        return Path(os.path.expanduser(self.state_path))


DEFAULT_NOTIFY_EVENTS = ["draft_submitted", "sleep_failed", "chain_closed", "purged"]
DEFAULT_RIPPLE_EVENTS = ["brief_requested", "draft_submitted", "tend_resubmitted", "brief_unmatched"]


@dataclass
class NotifyConfig(_Pointed):
    webhook_url: str = _field("")
    bearer_token: str = _field("")
    bearer_token_env: str = _field("")
    bearer_token_keyring: str = _field("")
    events: list = _field(list(DEFAULT_NOTIFY_EVENTS), aliases={"docket_submitted": "draft_submitted"})
    timeout_seconds: float = _field(10.0, min=0.1)


@dataclass
class RippleConfig(_Pointed):
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
    messages: dict = _field({}, check=finite, form=FINITE)


@dataclass
class VoiceConfig:
    enabled: bool = _field(False)
    max_chars: int = _field(1500, min=100, max=8000)


@dataclass
class ReplayConfig:
    candidates: dict = _field({})


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
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    supervisor: SupervisorConfig = field(default_factory=SupervisorConfig)
    events: EventsConfig = field(default_factory=EventsConfig)
    path: Optional[str] = None           # the file it came from, if any
    warnings: list = field(default_factory=list)
    sources: Any = None                 # the loader's Sources: where each value came from (None: not loaded)

    @property
    def state_dir(self) -> Path:
        return self.sleep.resolved_state_path().parent


NOT_SETTINGS = ("path", "warnings", "sources")    # Config's fields about the config, not settings
SECRET_KEYS = {"bearer_token", "observatory_token"}
# Corpus Callosum spellings accepted for the memory block's pointers.
MEMORY_ALIASES = {"token": "bearer_token", "token_env": "bearer_token_env", "token_keyring": "bearer_token_keyring"}


def _settings(obj: Any) -> list:
    return [f for f in dataclasses.fields(obj) if f.name not in NOT_SETTINGS]


def _all_paths(cls: type, prefix: str = "") -> list[str]:
    out = []
    for f in _settings(cls):       # a block's path, then its settings'
        sub = _block_type(cls, f.name)
        out += [prefix + f.name] + (_all_paths(sub, f"{prefix}{f.name}.") if sub is not None else [])
    return out


def _block_type(cls: type, name: str) -> Any:
    factory = cls.__dataclass_fields__[name].default_factory
    return factory if isinstance(factory, type) and dataclasses.is_dataclass(factory) else None
