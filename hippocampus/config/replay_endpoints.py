"""Where a replay may send a draft's saved prompts (the person's own fragments): the configured model, or a
candidate listed by name in `replay.candidates` ({name: {url, model, extra_body, timeout_seconds}}). Never a URL
a caller names, never SerenMemory's own (even when listed: the loader says so and leaves it out). Memory's own is
told by where the address resolves (reach.py: every spelling of this host at Memory's port), never by its spelling;
the replay asks again at connect."""
from __future__ import annotations

import contextlib
import ipaddress
import math
import re
from dataclasses import dataclass
from typing import Any, Optional
from hippocampus.config import reach
from hippocampus.config.schema import NUL, finite
from hippocampus.words import ONE_LINE

TIMEOUT_CAP = 300.0                 # the most one replay call may take, whatever is asked
NAME_CHARS = 200                    # the longest candidate or model name a caller may give
ENTRY_KEYS = ("url", "model", "extra_body", "timeout_seconds")
CONFIGURED = "model"                # how the configured model is named in a result
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "0.0.0.0", "::")


class NotAllowed(ValueError):
    """A replay asked for somewhere it may not go; the message says why and what to do."""


def refusal(asked: str, cfg: Any) -> str:
    names = sorted(listed(cfg))
    return (f"replay reaches only the configured model and the candidates listed in replay.candidates; "
            f"{asked!r} is not one of them ({'listed: ' + ', '.join(names) if names else 'none are listed'})")


@dataclass(frozen=True)
class Listed:
    name: str
    url: str
    model: str
    extra_body: dict
    timeout_seconds: Optional[float]


@dataclass
class Candidate:
    label: str                      # the listed name, or CONFIGURED
    url: str
    name: str                       # the model name sent
    max_tokens: int
    timeout_seconds: float
    extra_body: dict
    managed: bool                   # the configured model: through the service's model gate
    timeout_asked: Optional[float] = None     # what the caller asked for, when it was above the cap

    @property
    def timeout_note(self) -> Optional[str]:
        if self.timeout_asked is None:
            return None
        return (f"timeout_seconds {self.timeout_asked:g} is above the cap: each replay call may take at most "
                f"{TIMEOUT_CAP:g} s, so {self.timeout_seconds:g} s was used")


def _where(url: str) -> Optional[tuple]:
    """(host, port) as reach.where has them, every loopback name as the one host ""; None without a host."""
    at = reach.where(url)
    if at is None:
        return None
    host, port = at
    try:
        loopback = host in LOOPBACK_NAMES or ipaddress.ip_address(host).is_loopback
    except ValueError:      # a name, not an address
        loopback = False
    return ("" if loopback else host), port


def same_service(url: str, other: str) -> bool:
    """Both URLs reach the same host and port (every loopback name counts as one host)."""
    where = _where(url)
    return where is not None and where == _where(other)


def reaches_memory(url: str, memory_url: str) -> bool:
    """The URL reaches SerenMemory: the same host and port as spelled, or as resolved (reach.py)."""
    return same_service(url, memory_url) or reach.Memory(memory_url).reached_by(url)


NAME_RULE = f"a name (text on one line, at most {NAME_CHARS} characters)"


def is_name(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= NAME_CHARS and bool(re.fullmatch(ONE_LINE, value))


def name_problem(key: str, value: Any) -> Optional[str]:
    """Why a replay's `candidate` or `model` as a caller gave it is no name (it is logged and sent), or None; `key`
    as the caller named it (a flag is named as it is, a body's key quoted)."""
    if value is None or is_name(value):
        return None
    return f"{key if key.startswith('--') else repr(key)} is {NAME_RULE}"


TIMEOUT_RULE = f"a number of seconds above 0 (at most {TIMEOUT_CAP:g}: a larger one is capped)"


def seconds_above_zero(value: Any) -> bool:
    """A replay's timeout_seconds as given (a setting, a request's body, the CLI's --timeout): a finite number above
    0 (not NaN, nor infinity, which no deadline takes and JSON cannot carry)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value < math.inf


def _timeout(value: Any, where: str, warnings: list) -> Optional[float]:
    """The yaml's timeout_seconds, read by the yaml's rule for seconds (text holding a number is that number, as
    model.timeout_seconds: "30" is); a request's body stays JSON numbers only (seconds_above_zero as it is)."""
    if value is None:
        return None
    number = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            number = float(value)       # "nan" stays refused below, as every seconds setting refuses it
    if not seconds_above_zero(number):
        warnings.append(f"'{where}.timeout_seconds' = {value!r} is not a number of seconds above 0; "
                        "using model.timeout_seconds")
        return None
    if number > TIMEOUT_CAP:
        warnings.append(f"'{where}.timeout_seconds' = {float(number):g} is above {TIMEOUT_CAP:g}, the most one "
                        f"replay call may take; using {TIMEOUT_CAP:g}")
        return TIMEOUT_CAP
    return float(number)


def _parse(cfg: Any) -> tuple:
    """({name: Listed}, a warning per entry left out or changed)."""
    out, warnings = {}, []
    raw = getattr(getattr(cfg, "replay", None), "candidates", None) or {}
    for key, entry in raw.items():
        name, where = str(key).strip(), f"replay.candidates.{key}"
        if not name:
            warnings.append("a replay candidate with a blank name is left out: give each entry a name")
            continue
        if name == CONFIGURED:          # choose() takes this name for the configured model, never for the entry
            warnings.append(f"'{where}': '{CONFIGURED}' names the configured model (model.url) in a replay, so this "
                            "entry could never be chosen; it is left out: give it another name")
            continue
        if not is_name(name):           # held to the rule a replay's caller is held to, or no door could name it
            warnings.append(f"'{where}': its name is not {NAME_RULE}, so no replay could ask for it; it is left "
                            "out: rename it")
            continue
        if not isinstance(entry, dict):
            warnings.append(f"'{where}' should be a block with url (and model, extra_body, timeout_seconds), "
                            f"not {entry!r}; it is left out")
            continue
        warnings += [f"'{where}.{k}' is not a candidate setting (they are {', '.join(ENTRY_KEYS)}); it is ignored"
                     for k in entry if k not in ENTRY_KEYS]
        url = str(entry.get("url") or "").strip().rstrip("/")
        if "\0" in url:                 # model.url's rule (the loader's), in its words
            warnings.append(f"'{where}.url' = {url!r} {NUL}; the candidate is left out")
            continue
        if not url.lower().startswith(("http://", "https://")) or _where(url) is None:
            warnings.append(f"'{where}.url' = {entry.get('url')!r} is not an http:// or https:// base URL "
                            "(like http://127.0.0.1:8091/v1); the candidate is left out")
            continue
        if reaches_memory(url, cfg.memory.url):
            warnings.append(f"'{where}.url' = {url!r} is SerenMemory's own address (memory.url): Memory is "
                            "never a replay candidate, so it is left out")
            continue
        extra = entry.get("extra_body", cfg.model.extra_body)
        if not isinstance(extra, dict) or not finite(extra):
            warnings.append(f"'{where}.extra_body' is not a mapping of finite numbers and text (no .nan or .inf, "
                            "which JSON cannot carry); using model.extra_body")
            extra = cfg.model.extra_body
        model = entry.get("model")          # a number is read as its text, as model.name reads one (loader)
        model = model if model is None or isinstance(model, (dict, list)) else str(model).strip()
        if model and not is_name(model):        # the name sent, held to the rule a replay's caller is held to
            warnings.append(f"'{where}.model' = {model!r} is not {NAME_RULE}; the candidate's name {name!r} is sent "
                            "instead")
            model = None
        out[name] = Listed(name=name, url=url, model=model or name, extra_body=dict(extra),
                           timeout_seconds=_timeout(entry.get("timeout_seconds"), where, warnings))
    return out, warnings


def listed(cfg: Any) -> dict:
    return _parse(cfg)[0]


def problems(cfg: Any) -> list:
    return _parse(cfg)[1]


def choose(cfg: Any, candidate: Optional[str] = None, model: Optional[str] = None,
           timeout_seconds: Optional[float] = None) -> Candidate:
    """A listed name, or (none given) the configured model; NotAllowed otherwise."""
    m = cfg.model
    name = (candidate or "").strip()
    if not name or name == CONFIGURED:
        url = (m.url or "").strip().rstrip("/")
        if not url:
            raise NotAllowed("no model to replay on: model.url is blank (mechanical mode); list a candidate in "
                             "replay.candidates and name it")
        entry = Listed(name=CONFIGURED, url=url, model=m.name, extra_body=dict(m.extra_body), timeout_seconds=None)
        managed = True
    else:
        entry = listed(cfg).get(name)
        if entry is None:
            raise NotAllowed(refusal(name, cfg))
        managed = bool(m.url) and entry.url == m.url.strip().rstrip("/")
    if reaches_memory(entry.url, cfg.memory.url):
        raise NotAllowed(f"replay never sends to SerenMemory's own address ({cfg.memory.url}); point "
                         f"{'model.url' if managed else 'replay.candidates.' + name + '.url'} at a model")
    seconds = float(timeout_seconds or entry.timeout_seconds or m.timeout_seconds)
    asked = seconds if timeout_seconds and seconds > TIMEOUT_CAP else None    # the caller's, named in a note
    return Candidate(label=entry.name, url=entry.url, name=(model or "").strip() or entry.model,
                     max_tokens=m.max_tokens, timeout_seconds=min(seconds, TIMEOUT_CAP),
                     extra_body=dict(entry.extra_body), managed=managed, timeout_asked=asked)
