"""What answers at memory.url and model.url, told by the shape of its answers (check-config; issue 41, item 1).

Invariant: a status below 500 proves nothing. A URL is SerenMemory only when its answers are SerenMemory's (GET /
names "SerenMemory", or GET /health is {"ok": true, "ts": <number>}, by the one rule the ripple's checks also use:
ripple.claude_checks.memory_shaped); a model server only when GET {url}/models
is an OpenAI model list ({"data": [...]}); this service only when GET / names seren-hippocampus. A URL's shape is
read before anything is reached: a missing scheme and an appended route are warnings that name the URL to use,
and the probe then tries that URL (so the answer says what the fixed URL would reach). Each GET waits SECONDS
and reads CAP bytes at most.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional
from urllib.parse import urlsplit, urlunsplit

import requests

from hippocampus import SERVICE, outbound
from hippocampus import transport_words as tw
from hippocampus.config import redact
from hippocampus.config.reach import host_or_port_missing, where, with_scheme
from hippocampus.memory import unusable_url
from hippocampus.model.answers import MODEL_EXAMPLE, is_model_list
from hippocampus.ripple.claude_checks import memory_shaped as is_memory_health

SECONDS = 3.0
CAP = 256 * 1024
MEMORY, MODEL, SELF, OTHER, NOTHING, UNPROBED = ("memory", "model", "this service", "something else",
                                                 "nothing", "not probed")
ROUTES = ("/chat/completions", "/completions", "/models", "/embeddings")
MEMORY_DEFAULT = "http://127.0.0.1:7420"
NAMED = {MEMORY: "SerenMemory", SELF: f"this service ({SERVICE}) itself"}


@dataclass
class Answer:
    """One GET: its status and JSON body (None when not JSON), or the words for why nothing answered."""
    status: Optional[int] = None
    body: Any = None
    kind: str = ""              # what a body that is not JSON looks like
    error: str = ""

    def words(self) -> str:
        if self.error:
            return self.error
        return f"HTTP {self.status}, " + ("JSON" if self.body is not None else self.kind)


Fetch = Callable[[str, str], Answer]


def fetch(url: str, bearer: str = "") -> Answer:
    headers = {"Accept": "application/json", **({"Authorization": f"Bearer {bearer}"} if bearer else {})}
    try:
        r = outbound.request("GET", url, seconds=SECONDS, cap=CAP, headers=headers)
    except requests.RequestException as exc:
        return Answer(error=tw.failed_predicate(exc, seconds=SECONDS)[1])
    try:
        return Answer(r.status_code, r.json())
    except ValueError:
        return Answer(r.status_code, None, tw.body_kind(r))


@dataclass
class Probe:
    """What one URL turned out to be; `url` is the one configured, `tried` the one reached (scheme added, route
    cut), `fix` the URL to set instead (empty: keep it)."""
    setting: str
    url: str
    tried: str = ""
    answered_by: str = UNPROBED
    detail: str = ""
    fix: str = ""
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def as_dict(self) -> dict:
        d = asdict(self)
        for key in ("url", "tried", "fix"):
            d[key] = redact.url(d[key])
        d.pop("warnings"), d.pop("notes")
        return d


# ---------------------------------------------------------------- shapes, read from answers

def _service(body: Any) -> str:
    return str(body.get("service") or "").strip().lower() if isinstance(body, dict) else ""


def is_memory_root(body: Any) -> bool:
    return _service(body) == "serenmemory"


def is_self_root(body: Any) -> bool:
    return _service(body) == SERVICE


# ---------------------------------------------------------------- a URL's shape

def cut_route(url: str) -> tuple:
    """(the URL without an appended OpenAI route, the route cut or '')."""
    p = urlsplit(url)
    path = p.path.rstrip("/")
    for route in ROUTES:
        if path.lower().endswith(route):
            return urlunsplit((p.scheme, p.netloc, path[: -len(route)], p.query, "")), route
    return url, ""


_shown = redact.url


def _scheme_warning(setting: str, url: str, fixed: str) -> str:
    return (f"{setting} {_shown(url)} has no scheme, so nothing can reach it: set it to {_shown(fixed)} "
            "(http:// or https:// in front)")


# ---------------------------------------------------------------- what answers

def service_root(base: str) -> str:
    """Where the service behind `base` answers GET /: `base` itself, less a trailing /v1."""
    p = urlsplit(base)
    path = p.path.rstrip("/")
    path = path[:-3] if path.lower().endswith("/v1") else path
    return urlunsplit((p.scheme, p.netloc, path, "", ""))


def kind_at(base: str, bearer: str, get: Fetch) -> tuple:
    """(MEMORY, SELF, MODEL, OTHER or NOTHING, what was seen) for a service base URL."""
    top = service_root(base)
    root = get(top + "/", bearer)
    if root.error:
        return NOTHING, root.error
    for kind, name, names_it in ((MEMORY, "SerenMemory", is_memory_root), (SELF, SERVICE, is_self_root)):
        if names_it(root.body):
            return kind, f"GET / names {name} {root.body.get('version') or ''}".rstrip()
    health = get(top + "/health", bearer)
    if is_memory_health(health.body):
        return MEMORY, 'GET /health answers {"ok": true, "ts": ...}'
    for models in (top + "/models", top + "/v1/models"):
        if is_model_list(get(models, bearer).body):
            return MODEL, f"GET {_shown(models)} lists models"
    return OTHER, f"GET / {root.words()}; GET /health {health.words()}"


def memory_shape(url: str) -> Probe:
    """The shape alone (nothing reached): a missing scheme, or a URL no request can be made to."""
    pr = Probe("memory.url", url, tried=with_scheme(url))
    if not url.strip():
        pr.tried = ""
        pr.warnings.append(f"memory.url is blank: set it to SerenMemory's address (its default is {MEMORY_DEFAULT})")
    elif pr.tried != url.strip():
        pr.fix = pr.tried
        pr.warnings.append(_scheme_warning("memory.url", url, pr.tried))
    elif why := unusable_url(url):
        pr.tried = ""           # no request can be made to it: what it lacks, else the service's own words
        pr.warnings.append(why)
    return pr


def memory(url: str, bearer: str = "", get: Fetch = fetch) -> Probe:
    pr = memory_shape(url)
    tried = pr.tried
    if not tried:
        return pr
    health = get(tried + "/health", bearer)
    if health.error or (health.status or 0) >= 500:
        pr.answered_by, pr.detail = NOTHING, health.words()
        pr.warnings.append(f"memory.url {_shown(tried)} does not answer ({health.words()}): every sleep, tend "
                           "and check needs it; start SerenMemory there (seren-memory), or set memory.url to "
                           f"where it listens (its default is {MEMORY_DEFAULT})")
        return pr
    pr.answered_by, pr.detail = kind_at(tried, bearer, get)
    if pr.answered_by == MEMORY:
        guarded = get(tried + "/short?limit=1", bearer)      # / and /health answer anyone; the calls need the bearer
        if guarded.status in (401, 403):
            pr.warnings.append(f"memory.url {_shown(tried)} is SerenMemory, but it answers {guarded.status} to "
                               f"{'the bearer this service sends' if bearer else 'a call with no bearer'}: every "
                               "sleep and tend would fail; give Memory's bearer (its server.bearer_token) in "
                               "memory.bearer_token_env (the variable holding it) or memory.bearer_token")
            return pr
        _reached(pr, "Memory")
        return pr
    what = {MODEL: f"a model server ({pr.detail})", SELF: NAMED[SELF]}.get(
        pr.answered_by, f"something that is not SerenMemory ({pr.detail})")
    pr.warnings.append(f"memory.url {_shown(tried)} is {what}, not SerenMemory: set memory.url to SerenMemory's "
                       f"own address (its default is {MEMORY_DEFAULT})")
    return pr


def model_shape(url: str) -> Probe:
    """The shape alone (nothing reached): a missing scheme, an appended route."""
    pr = Probe("model.url", url)
    tried = with_scheme(url)
    lacks = host_or_port_missing("model.url", tried, MODEL_EXAMPLE)
    if lacks or tried.split("://", 1)[0].lower() not in ("http", "https") or where(tried) is None:
        pr.warnings.append((lacks or f"model.url {_shown(url)} is not a URL this service can call (http:// or "
                            "https://, a host, and a port): point it at the model server, like "
                            f"{MODEL_EXAMPLE}") + ", or leave model.url blank for mechanical mode")
        return pr                   # nothing tried: nothing is reached (as memory.url's rule)
    cut, route = cut_route(tried)
    if tried != url.strip():
        pr.warnings.append(_scheme_warning("model.url", url, cut))
    if route:
        pr.warnings.append(f"model.url ends in {route}: set it to {_shown(cut)}; the service adds the route itself")
    pr.tried = cut
    pr.fix = cut if cut != url.strip() else ""
    return pr


def model(url: str, get: Fetch = fetch) -> Probe:
    pr = model_shape(url)
    base = pr.tried
    if not base:
        return pr
    listed = get(base + "/models", "")
    if listed.error or (listed.status or 0) >= 500:
        pr.answered_by, pr.detail = NOTHING, listed.words()
        pr.warnings.append(f"model.url {_shown(base)} does not answer ({listed.words()}): the sleeps cannot draft; "
                           "start the model server there, or set model.url to where it listens (an "
                           "OpenAI-compatible URL ending in /v1), or leave model.url blank for mechanical mode")
        return pr
    v1 = base + "/v1"
    at_v1 = not urlsplit(base).path.rstrip("/").endswith("/v1") and is_model_list(get(v1 + "/models", "").body)
    here = is_model_list(listed.body)
    if here or at_v1:
        pr.answered_by, pr.detail = MODEL, f"GET {_shown(base if here else v1)}/models lists models"
        if at_v1:
            _no_v1(pr, url, v1)
        else:
            _reached(pr, "the model")
        return pr
    pr.answered_by, pr.detail = kind_at(base, "", get)
    if pr.answered_by in (MEMORY, SELF):
        pr.warnings.append(f"model.url {_shown(url)} is {NAMED[pr.answered_by]}, not a model server: set model.url "
                           "to the small model's server (an OpenAI-compatible URL ending in /v1, e.g. llama-server's "
                           f"{MODEL_EXAMPLE}), or leave it blank for mechanical mode")
    else:
        pr.answered_by = OTHER if pr.answered_by != NOTHING else NOTHING
        pr.warnings.append(f"model.url {_shown(url)} answers, but not as an OpenAI-compatible server does (GET "
                           f"{_shown(base)}/models: {listed.words()}, not a model list): set model.url to the small "
                           "model's server, ending in /v1 (e.g. llama-server's "
                           f"{MODEL_EXAMPLE}), or leave it blank for mechanical mode")
    return pr


def _reached(pr: Probe, what: str) -> None:
    if pr.warnings:         # the URL as configured cannot be used; the fixed one reaches `what`
        pr.notes.append(f"# {pr.setting} set to {_shown(pr.tried)} would reach {what} ({pr.detail})")
    else:
        pr.notes.append(f"# reached: {what} at {_shown(pr.tried)} ({pr.detail})")


def _no_v1(pr: Probe, url: str, v1: str) -> None:
    """The server lists its models at v1: that is the URL to set (in the route's warning, when one was cut)."""
    pr.fix = v1
    if pr.warnings:         # a scheme or a route: their fix is the URL with /v1
        pr.warnings = [w.replace(f"set it to {_shown(pr.tried)}", f"set it to {_shown(v1)}") for w in pr.warnings]
        return
    pr.warnings.append(f"model.url {_shown(url)} has no /v1: set it to {_shown(v1)} (an OpenAI-compatible URL ends in "
                       "/v1; the service adds /chat/completions to it)")
