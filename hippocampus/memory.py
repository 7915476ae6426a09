"""MemoryClient: one method per SerenMemory route the hippocampus uses.

MemoryUnavailable (no answer, or 5xx) and MemoryRefused (4xx) both name the method, path and status. Each call
has one wall-clock deadline (memory.timeout_seconds, or the caller's; a GET asked twice shares it) however
slowly the answer comes, and reads at most ANSWER_CAP of it (hippocampus.outbound): past it, MemoryTooLarge.
cut(), from the stopping thread, cuts the calls in flight short and refuses new ones: MemoryCut, a ServiceStopping.
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import weakref
from typing import Any, Optional

import requests

from hippocampus import outbound, transport_words as tw
from hippocampus.config import redact
from hippocampus.config.reach import host_or_port_missing, where, with_scheme
from hippocampus.stopping import ServiceStopping

log = logging.getLogger(__name__)
# SerenMemory's largest answers (500 shorts, 200 drafts with their operations) are a few MB: this is far past them
ANSWER_CAP = 32 * outbound.MB


def send(session: requests.Session, method: str, url: str, *, timeout: float, cap: int = ANSWER_CAP,
         **kw: Any) -> requests.Response:
    """One request to Memory within one deadline of `timeout` s, its answer read up to `cap`; a GET whose
    connection closed or hung up is sent once more within the same deadline (uvicorn closes a connection idle
    for 5 s, so a GET sent just then meets a reset though Memory is up). Never a POST twice."""
    deadline = outbound.Deadline(timeout)
    try:
        return outbound.call(session, method, url, deadline=deadline, cap=cap, **kw)
    except requests.RequestException as exc:
        if method != "GET" or tw.cause(exc) not in (tw.CLOSED, tw.HUNG_UP):
            raise
        log.debug("Memory dropped the connection of GET %s (%s); asking once more", redact.url(url), tw.cause(exc))
        return outbound.call(session, method, url, deadline=deadline, cap=cap, **kw)


class MemoryError_(Exception):
    """Base for both Memory errors (the _ keeps it from shadowing the builtin); never raised itself: each kind
    words its own _message()."""

    def __init__(self, method: str, path: str, status: Optional[int], detail: str):
        self.method, self.path, self.status, self.detail = method, path, status, detail
        super().__init__(self._message())


class MemoryUnavailable(MemoryError_):
    def _message(self) -> str:
        what = f"answered {self.status}" if self.status else "did not answer"
        return f"SerenMemory {what} on {self.method} {self.path}: {self.detail}"


class MemoryCut(MemoryUnavailable, ServiceStopping):
    """The service's stop cut this call short (MemoryClient.cut): to a step that carries on without Memory, a Memory
    that did not answer; to the sleep or tend it ends, the stop (recorded as interrupted, its brief kept)."""

    def __init__(self, method: str, path: str):
        super().__init__(method, path, None, "cut short by the service's stop")

    def _message(self) -> str:       # ServiceStopping, next in line, puts "the service is stopping: " before it
        return f"its call to SerenMemory ({self.method} {self.path}) was cut short"


class MemoryRefused(MemoryError_):
    def _message(self) -> str:
        return f"SerenMemory refused {self.method} {self.path} ({self.status}): {self.detail}"


@contextlib.contextmanager
def gone_ok():
    """What Memory no longer has (404) is no trouble in this block, which ends there; any other refusal is raised."""
    try:
        yield
    except MemoryRefused as exc:
        if exc.status != 404:
            raise


class MemoryTooLarge(MemoryUnavailable):
    """Memory's answer passed the cap: the call was stopped there, nothing of it used."""

    def _message(self) -> str:
        return (f"SerenMemory's answer to {self.method} {self.path} passed {self.detail}, so the call was stopped "
                "there; SerenMemory's answers are far smaller: check that memory.url is SerenMemory")


class NotSerenMemory(MemoryUnavailable):
    """memory.url answered, but not as SerenMemory does: for every caller, a Memory that is not there."""

    def __init__(self, url: str, method: str, path: str, status: Optional[int], what: str):
        self.url = url
        super().__init__(method, path, status, what)

    def _message(self) -> str:
        return (f"Memory at {redact.url(self.url)} answered something that is not SerenMemory ({self.detail}, "
                f"on {self.method} {self.path}): point memory.url at SerenMemory (port 7420 by default)")


NO_DRAFTS = "Memory has no /drafts routes: upgrade Memory first"


def _detail(resp: requests.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return (resp.text or resp.reason or "").strip()[:300]
    if isinstance(body, dict):
        body = body.get("detail", body.get("error", body))
    return str(body)[:300]


def unusable_url(url: str) -> Optional[str]:
    """What is wrong with a memory.url no request can be made to, and the fix; None for one that can be called."""
    if not url.strip():
        return "memory.url is blank: set it to SerenMemory's address, like http://127.0.0.1:7420"
    if why := host_or_port_missing("memory.url", url, "http://127.0.0.1:7420"):
        return why
    if "://" not in url:
        return (f"memory.url {redact.url(url)} has no scheme, so nothing can reach it: set it to "
                f"{redact.url(with_scheme(url))}")
    # where(): None for no host, a port that is not a number or past 65535, or an unclosed [
    ok = url.split("://", 1)[0].strip().lower() in ("http", "https") and where(url) is not None
    return None if ok else (f"memory.url {redact.url(url)} is not a URL this service can call (http:// or "
                            "https://, a host, and a port): point it at SerenMemory, like http://127.0.0.1:7420")


def _settle_environment(s: requests.Session, url: str) -> None:
    """What requests reads from the environment on every request (proxies, a CA bundle, ~/.netrc), read once:
    that scan of os.environ was a tenth of a Memory call's CPU."""
    s.proxies.update(requests.utils.get_environ_proxies(url))
    bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if bundle:
        s.verify = bundle
    if "Authorization" not in s.headers:
        s.auth = requests.utils.get_netrc_auth(url)
    s.trust_env = False


class MemoryClient:
    def __init__(self, url: str, bearer: str = "", timeout: float = 30.0, session: Optional[requests.Session] = None):
        """Each thread has a session of its own, an outbound.CancellableSession whose call in flight cut() shuts (of
        a `session` given, a plain one, cut() only refuses the calls after)."""
        self.unusable = unusable_url(url)      # said by every call: no request is tried
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._bearer = bearer
        self._local = threading.local()
        self._session = session
        self._features: Optional[set] = None
        self._sessions: "weakref.WeakSet[requests.Session]" = weakref.WeakSet()   # each live thread's, for cut()
        self._cut = False
        self.in_flight = 0
        self._counting = threading.Lock()

    def cut(self) -> None:
        """The service's stop (any thread): shut the calls in flight now and refuse new ones, each a MemoryCut."""
        self._cut = True
        with self._counting:
            sessions = [self._session] if self._session is not None else list(self._sessions)
        for s in sessions:
            getattr(s, "cancel", s.close)()     # a plain session can only be closed

    def _s(self) -> requests.Session:
        if self._session is not None:
            return self._session
        s = getattr(self._local, "s", None)
        if s is None:
            s = outbound.CancellableSession()     # a call's deadline cuts its sockets, head or body; so does cut()
            with self._counting:
                self._sessions.add(s)
            if self._bearer:
                s.headers["Authorization"] = f"Bearer {self._bearer}"
            _settle_environment(s, self.url)
            self._local.s = s
        return s

    def request(self, method: str, path: str, *, params: Optional[dict] = None,
                json: Any = None, timeout: Optional[float] = None) -> Any:
        if self.unusable:
            raise MemoryUnavailable(method, path, None, self.unusable)
        session = self._s()     # made (and listed for cut()) first: a cut from now on reaches this call
        if self._cut:
            raise MemoryCut(method, path)
        with self._counting:
            self.in_flight += 1
        try:
            resp = send(session, method, self.url + path, params=params, json=json, timeout=timeout or self.timeout)
        except requests.RequestException as exc:
            if self._cut:
                raise MemoryCut(method, path) from None
            if isinstance(exc, outbound.AnswerTooLarge):
                raise MemoryTooLarge(method, path, None, exc.cap_words) from None
            raise MemoryUnavailable(method, path, None, tw.failed_predicate(
                exc, seconds=timeout or self.timeout, setting="" if timeout else "memory.timeout_seconds")[1]) from None
        finally:
            with self._counting:
                self.in_flight -= 1
        if resp.status_code >= 500:
            raise MemoryUnavailable(method, path, resp.status_code, _detail(resp))
        if resp.status_code >= 400:
            missing = resp.status_code == 404 and path == "/drafts"       # a Memory from before the drafts
            raise MemoryRefused(method, path, resp.status_code, NO_DRAFTS if missing else _detail(resp))
        try:
            return resp.json()
        except ValueError:
            raise NotSerenMemory(self.url, method, path, resp.status_code, tw.body_kind(resp, sample=True)) from None

    def _shaped(self, body: Any, method: str, path: str, key: Optional[str] = None) -> Any:
        """body, if it is a SerenMemory object (with the list `key`, when given)."""
        if not isinstance(body, dict):
            raise NotSerenMemory(self.url, method, path, 200, f"JSON {type(body).__name__}, not an object")
        if key is not None and not isinstance(body.get(key), list):
            raise NotSerenMemory(self.url, method, path, 200, f"an object without the '{key}' list")
        return body

    def _call(self, method: str, path: str, key: Optional[str] = None, **kw: Any) -> Any:
        """request()'s SerenMemory object, or its list `key`."""
        body = self._shaped(self.request(method, path, **kw), method, path, key)
        return body[key] if key is not None else body

    def get_or_none(self, path: str) -> Any:
        with gone_ok():
            return self._call("GET", path)
        return None

    def health(self) -> dict:
        return self._call("GET", "/health", timeout=min(self.timeout, 5.0))

    def features(self, refresh: bool = False) -> set:
        """Memory's optional features, read once from /health and cached."""
        if self._features is None or refresh:
            self._features = set(self.health().get("features") or [])
        return self._features

    def shorts(self, limit: int = 500) -> list:
        return self._call("GET", "/short", "entries", params={"limit": limit})

    def open_briefs(self, limit: int = 50) -> list:
        body = self.request("GET", "/brief", params={"limit": limit})
        return body if isinstance(body, list) else self._shaped(body, "GET", "/brief", "entries")["entries"]

    def submit_brief(self, summary: str, promote_hints: Optional[list] = None,
                     noise_hints: Optional[list] = None, completed_intents: Optional[list] = None) -> dict:
        return self._call("POST", "/brief", json={
            "summary": summary, "promote_hints": list(promote_hints or []),
            "noise_hints": list(noise_hints or []), "completed_intents": list(completed_intents or [])})

    def consume_brief(self, brief_id: str, draft_id: Optional[str] = None) -> dict:
        return self._call("POST", f"/brief/{brief_id}/consume", json={"draft_id": draft_id})

    def drafts(self, status: Optional[str] = None, limit: int = 200) -> list:
        params = {"limit": limit, **({"status": status} if status else {})}
        return self._call("GET", "/drafts", "entries", params=params)

    def draft(self, draft_id: str) -> dict:
        return self._call("GET", f"/drafts/{draft_id}")

    def draft_chain(self, draft_id: str) -> list:
        return self._call("GET", f"/drafts/{draft_id}/chain", "attempts")

    def submit_draft(self, body: dict) -> dict:
        return self._call("POST", "/drafts", json=body)

    def close_draft(self, draft_id: str) -> dict:
        return self._call("POST", f"/drafts/{draft_id}/close")

    def add_near(self, intent: str, topic: Optional[str] = None, expires_at: Optional[float] = None,
                 trigger_type: str = "always", trigger_value: Optional[str] = None, note_id: Optional[str] = None,
                 extra: Optional[dict] = None) -> dict:
        """note_id: Memory keeps the first note posted under an id."""
        given = {"expires_at": expires_at, "trigger_value": trigger_value, "id": note_id, "extra": extra}
        body = {"intent": intent, "topic": topic, "trigger_type": trigger_type,
                **{k: v for k, v in given.items() if v is not None}}
        return self._call("POST", "/near", json=body)

    def list_near(self, include_completed: bool = False) -> list:
        return self._call("GET", "/near", "entries", params={"include_completed": str(include_completed).lower()})

    def delete_near(self, near_id: str) -> dict:
        return self._call("DELETE", f"/near/{near_id}")

    def search_long(self, query: str, n: int = 8) -> list:
        body = {"query": query[:2000], "n_results": max(1, min(50, n)), "include_short": False,
                "include_near": False, "include_long": True, "include_satellites": True}
        return self._call("POST", "/search", "hits", json=body)

    def release_verbatim(self, short_id: str) -> dict:
        return self._call("POST", f"/short/{short_id}/release")

    def memory(self, memory_id: str) -> Optional[dict]:
        return self.get_or_none(f"/memory/{memory_id}")

    def satellites(self, core_id: str) -> Optional[dict]:
        """The long-term entry with its satellites and their count ({"core", "satellites", "count"}); None when
        Memory holds no long-term entry by that id. GET /memory/{id} carries no count."""
        return self.get_or_none(f"/long/{core_id}/satellites")

    def tidy(self, *, age_out: bool, near: bool, sweep: bool, purge: bool) -> dict:
        return self._call("POST", "/tidy", json={"age_out": age_out, "near": near, "sweep": sweep, "purge": purge})

    def purge_flagged(self) -> dict:
        return self.tidy(age_out=False, near=False, sweep=False, purge=True)
