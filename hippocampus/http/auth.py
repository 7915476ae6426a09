"""The bearer check (the family's rule) and the request log, as Falcon middleware."""
from __future__ import annotations

import hmac
import logging
import threading
import time

import falcon

log = logging.getLogger("hippocampus.http")
PUBLIC = ("/", "/health", "/viewer")


def is_public(path: str) -> bool:
    return path in PUBLIC or path.startswith("/health/") or path.startswith("/viewer/")


def needs_bearer(method: str, path: str) -> bool:
    """Whether a request must carry the bearer (when one is configured): all but the public paths and
    OPTIONS. The HTTP channel asks this of a request head before its body is read (server/request_head.py)."""
    return not (is_public(path) or method == "OPTIONS")


def bearer_matches(header: str, token: bytes) -> bool:
    """The family rule (seren_meninges.auth): "bearer " in any case, then the token exactly as sent (no
    second space, no padding), compared in constant time; the header's bytes are latin-1 on the wire."""
    presented = header[7:] if header.lower().startswith("bearer ") else ""
    try:
        raw = presented.encode("latin-1")
    except UnicodeEncodeError:
        raw = presented.encode("utf-8")
    return bool(presented) and hmac.compare_digest(raw, token)


class BearerAuth:
    """Everything but the public paths needs `Authorization: Bearer <token>`. It never reads the body (the
    MCP sink reads it itself); a body without a good bearer was already 401 from its head."""

    def __init__(self, token: str):
        self.token = token.encode() if token else b""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not self.token or not needs_bearer(req.method, req.path):
            return
        if not bearer_matches(req.get_header("Authorization") or "", self.token):
            raise falcon.HTTPUnauthorized(description="unauthorized", challenges=["Bearer"])


class BodyLimit:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        n = req.content_length
        if n is not None and n > self.max_bytes:
            raise falcon.HTTPContentTooLarge(
                description=f"the body is {n} bytes; this service takes at most {self.max_bytes}")


_ESCAPES = {n: f"\\x{n:02x}" for n in (*range(0x20), *range(0x7f, 0xa0))}      # C0, DEL, C1
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\",
                 0x2028: "\\u2028", 0x2029: "\\u2029"})


def escape_controls(text: str) -> str:
    """Request data made safe for a log line: control characters (C0, DEL, C1), the Unicode line and
    paragraph separators, and the backslash itself become escapes (\\n, \\r, \\x1b, \\x00, \\u2028,
    \\\\), so a path cannot start a forged line or drive a terminal."""
    return text.translate(_ESCAPES)


READS = frozenset({"GET", "HEAD", "OPTIONS"})


def _status_code(status) -> int:
    try:
        return int(str(getattr(status, "value", status))[:3])
    except ValueError:
        return 0


class RequestLog:
    """One line per request: method, path, status, milliseconds (the method and path escaped).

    Writes and errors at INFO; a read that succeeded (the viewer polling /status, /events, /queue,
    /health, its assets) at DEBUG, so an idle service with a viewer open writes nothing."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.t0 = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        code = _status_code(resp.status)
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


def escape_waitress_log() -> None:
    """Once per process: waitress's logger escapes the request data it puts in a line (and the MCP
    SDK's per-request session lines are silenced)."""
    for name, kind in (("waitress", EscapedMessages), ("waitress.queue", QueueDepthLines)):
        logger = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
    for name in MCP_CHATTER:
        logging.getLogger(name).setLevel(logging.WARNING)


class QueueDepthLines(logging.Filter):
    """waitress warns "Task queue depth is N" for every request that waits for a thread (1,400 lines in 8 s
    of 16 viewers): one line a minute says it, with the deepest queue and how many lines it stands for."""

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


# The SDK logs "Terminating session: None" (stateless: every call is a session) and "Created new
# transport" at INFO for every MCP request; the request line above already says the call happened.
MCP_CHATTER = ("mcp.server.streamable_http", "mcp.server.streamable_http_manager")

