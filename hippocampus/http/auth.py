"""The bearer check (the family's rule) and the request log, as Falcon middleware that never reads the body."""
from __future__ import annotations

import hmac
import logging
import threading
import time

import falcon

from hippocampus.config.redact import LogFilter
from hippocampus.words import escape_controls

log = logging.getLogger(__name__)
READS = frozenset({"GET", "HEAD", "OPTIONS"})
# the MCP SDK's per-request session lines at INFO (stateless: every call is a session); the request line says it
MCP_CHATTER = ("mcp.server.streamable_http", "mcp.server.streamable_http_manager")


def needs_bearer(method: str, path: str, mcp_path: str = "") -> bool:
    """All but the public paths and OPTIONS (asked of a request head too, before its body is read); the MCP
    endpoint (`mcp_path`, server.mcp_mount) even where it is mounted under a public path."""
    public = path in ("/", "/health", "/viewer") or path.startswith(("/health/", "/viewer/"))
    public = public and not (mcp_path and path.rstrip("/") == mcp_path)
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

    def __init__(self, token: str, mcp_path: str = ""):
        self.token = token.encode() if token else b""
        self.mcp_path = mcp_path

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not self.token or not needs_bearer(req.method, req.path, self.mcp_path):
            return
        if not bearer_matches(req.get_header("Authorization") or "", self.token):
            raise falcon.HTTPUnauthorized(description="unauthorized", challenges=["Bearer"])


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


class EscapedMessages(LogFilter):
    """For waitress's own lines ("Exception while serving <path>"): the finished message, escaped."""
    rewrite = staticmethod(escape_controls)


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
