"""Who may call, as Falcon middleware that never reads the body: the guard (a Host not this service's is 421
against DNS rebinding; a change whose Origin is not its own, or that says Sec-Fetch-Site: cross-site, is 403; CORS
only for server.allowed_origins) and the bearer (the family's rule); and the request log."""
from __future__ import annotations

import hmac
import logging
import threading
import time
from typing import Iterable, Optional

import falcon

from hippocampus.config.hosts import normal_origin, parse_host_header, service_hosts

log = logging.getLogger("hippocampus.http")
READS = frozenset({"GET", "HEAD", "OPTIONS"})
CORS_METHODS = "GET, HEAD, POST, PUT, DELETE, OPTIONS"
CORS_HEADERS = "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID"
MCP_POST_ONLY = "this MCP endpoint takes POST only (stateless, JSON answers)"
# the MCP SDK's per-request session lines at INFO (stateless: every call is a session); the request line says it
MCP_CHATTER = ("mcp.server.streamable_http", "mcp.server.streamable_http_manager")
_ESCAPES = {n: f"\\x{n:02x}" for n in (*range(0x20), *range(0x7f, 0xa0))}      # C0, DEL, C1
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\",
                 0x2028: "\\u2028", 0x2029: "\\u2029"})


def needs_bearer(method: str, path: str) -> bool:
    """All but the public paths and OPTIONS (asked of a request head too, before its body is read)."""
    public = path in ("/", "/health", "/viewer") or path.startswith(("/health/", "/viewer/"))
    return not (public or method == "OPTIONS")


def bearer_matches(header: str, token: bytes) -> bool:
    """The family rule: "bearer " in any case, then the token exactly as sent (latin-1), in constant time."""
    presented = header[7:] if header.lower().startswith("bearer ") else ""
    try:
        raw = presented.encode("latin-1")
    except UnicodeEncodeError:
        raw = presented.encode("utf-8")
    return bool(presented) and hmac.compare_digest(raw, token)


class BearerAuth:
    """It never reads the body (the MCP sink reads it itself): a body without a good bearer was 401 from its head."""

    def __init__(self, token: str):
        self.token = token.encode() if token else b""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not self.token or not needs_bearer(req.method, req.path):
            return
        if not bearer_matches(req.get_header("Authorization") or "", self.token):
            raise falcon.HTTPUnauthorized(description="unauthorized", challenges=["Bearer"])


def post_only(resp: falcon.Response) -> None:
    """What the MCP endpoint says to anything but a POST: answered here, it needs no SDK."""
    resp.status = falcon.HTTP_405
    resp.set_header("Allow", "POST")
    resp.media = {"detail": MCP_POST_ONLY}


class Guard:
    """Host allow-list, Origin check and CORS for every route (the MCP sink included)."""

    def __init__(self, server_cfg, *, bearer: str = "", mcp_path: Optional[str] = None,
                 mcp_hosts: Iterable[str] = (), mcp_origins: Iterable[str] = ()):
        self.hosts = service_hosts(server_cfg)
        self.enforce_hosts = not bearer or bool(server_cfg.allowed_hosts)
        self.cors = {normal_origin(o) for o in server_cfg.allowed_origins if normal_origin(o)}
        self.mcp_path = mcp_path.rstrip("/") if mcp_path else None
        mcp_hosts, mcp_origins = list(mcp_hosts), [normal_origin(o) for o in mcp_origins]
        self.mcp_hosts = service_hosts(server_cfg, mcp_hosts)
        self.mcp_enforce = self.enforce_hosts or bool(mcp_hosts or mcp_origins)
        self.mcp_origins = self.cors | {o for o in mcp_origins if o}

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        mcp = self.mcp_path is not None and req.path.rstrip("/") == self.mcp_path
        host = req.get_header("Host")
        hosts, enforce = (self.mcp_hosts, self.mcp_enforce) if mcp else (self.hosts, self.enforce_hosts)
        # No Host is not a browser: nothing to rebind. A Host that is not one name or address with an optional
        # port is refused even where the list is not enforced: the name it compares may not be the one it means.
        if host is not None and parse_host_header(host) is None:
            raise falcon.HTTPError(falcon.HTTP_421, description=(
                f"the Host header {host!r} is not one host name or address with an optional :port (no user "
                f"part, no second colon outside [brackets], one Host header); send the host this service "
                f"was reached at"))
        if enforce and host is not None and not hosts.allows(host):
            raise falcon.HTTPError(falcon.HTTP_421, description=(
                f"this service does not answer to the host {host!r}; an operator can add it to "
                f"server.allowed_hosts"))
        origin = req.get_header("Origin")
        preflight = req.method == "OPTIONS" and origin and req.get_header("Access-Control-Request-Method")
        if preflight and normal_origin(origin) in self.cors:
            resp.status = falcon.HTTP_204
            resp.set_headers({"Access-Control-Allow-Methods": CORS_METHODS,
                              "Access-Control-Allow-Headers": CORS_HEADERS, "Access-Control-Max-Age": "600"})
            resp.complete = True
            return
        if mcp and req.method == "OPTIONS":         # answered here: an OPTIONS never loads the MCP SDK
            post_only(resp)
            resp.complete = True
            return
        if req.method in READS:
            return
        self._check_origin(origin, req.get_header("Sec-Fetch-Site"), host,
                           self.mcp_origins if mcp else self.cors)

    @staticmethod
    def _check_origin(origin: Optional[str], fetch_site: Optional[str], host: Optional[str], allowed: set) -> None:
        if origin and normal_origin(origin) in allowed:
            return
        if (fetch_site or "").strip().lower() == "cross-site":
            raise falcon.HTTPForbidden(description=(
                "a page on another site may not change anything here (Sec-Fetch-Site: cross-site)"))
        if not origin:
            return
        own = {f"http://{host}".lower(), f"https://{host}".lower()} if host else set()
        if normal_origin(origin) not in own:
            raise falcon.HTTPForbidden(description=(
                f"the Origin {origin!r} is not this service's own: a page on another site may not change "
                f"anything here (server.allowed_origins names the origins that may)"))

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        origin = req.get_header("Origin")
        if origin and normal_origin(origin) in self.cors:
            resp.set_header("Access-Control-Allow-Origin", origin.strip().rstrip("/"))
            resp.append_header("Vary", "Origin")


def escape_controls(text: str) -> str:
    """Request data safe for a log line: control characters, U+2028/9 and the backslash become escapes."""
    return text.translate(_ESCAPES)


class RequestLog:
    """One line per request: method, path, status, milliseconds. Writes and errors at INFO; a read that
    succeeded (the viewer polling) at DEBUG, so an idle service with a viewer open writes nothing."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.t0 = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        try:
            code = int(str(getattr(resp.status, "value", resp.status))[:3])
        except ValueError:
            code = 0
        level = logging.DEBUG if req.method in READS and 0 < code < 400 else logging.INFO
        if getattr(req.context, "mcp_transport", False) and 0 < code < 500:
            level = logging.DEBUG       # MCP's transport: the tool call's own INFO line says what happened
        if not log.isEnabledFor(level):
            return
        ms = (time.perf_counter() - getattr(req.context, "t0", time.perf_counter())) * 1000
        log.log(level, "%s %s -> %s (%.1fms)", escape_controls(req.method), escape_controls(req.path),
                code or resp.status, ms)


class EscapedMessages(logging.Filter):
    """For waitress's own lines ("Exception while serving <path>"): the finished message, escaped."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad record is logging's business, not ours
            return True
        safe = escape_controls(msg)
        if safe != msg:
            record.msg, record.args = safe, None
        return True


class QueueDepthLines(logging.Filter):
    """waitress's "Task queue depth is N", said for every request that waits for a thread, as one line a minute."""

    EVERY = 60.0

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._last, self._held, self._deepest = -self.EVERY, 0, 0

    def filter(self, record: logging.LogRecord) -> bool:
        depth = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if not isinstance(depth, int):
            return True
        with self._lock:
            self._deepest = max(self._deepest, depth)
            now = time.monotonic()
            if now - self._last < self.EVERY:
                self._held += 1
                return False
            held, deepest = self._held, self._deepest
            self._last, self._held, self._deepest = now, 0, 0
        record.msg, record.args = ("every request thread was busy: %d requests waited for one since the last "
                                   "such line (the deepest queue %d); if this is steady, raise server.threads",
                                   (held + 1, deepest))
        return True


def escape_waitress_log() -> None:
    """Once per process: waitress's logger escapes request data (and the MCP SDK's chatter is silenced)."""
    for name, kind in (("waitress", EscapedMessages), ("waitress.queue", QueueDepthLines)):
        logger = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
    for name in MCP_CHATTER:
        logging.getLogger(name).setLevel(logging.WARNING)
