"""The bearer check (the family's rule) and the request log, as Falcon middleware."""
from __future__ import annotations

import hmac
import logging
import time

import falcon

log = logging.getLogger("hippocampus.http")
PUBLIC = ("/", "/health", "/viewer")


def is_public(path: str) -> bool:
    return path in PUBLIC or path.startswith("/health/") or path.startswith("/viewer/")


class BearerAuth:
    """Everything but the public paths needs `Authorization: Bearer <token>`, compared in constant time.
    It never reads the body (the MCP sink reads it itself)."""

    def __init__(self, token: str):
        self.token = token.encode() if token else b""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not self.token or is_public(req.path) or req.method == "OPTIONS":
            return
        header = req.get_header("Authorization") or ""
        # the family rule (seren_meninges.auth): "bearer " in any case, then the token exactly as sent
        # (no second space, no padding); the header's bytes are latin-1 on the wire
        presented = header[7:] if header.lower().startswith("bearer ") else ""
        try:
            raw = presented.encode("latin-1")
        except UnicodeEncodeError:
            raw = presented.encode("utf-8")
        if not presented or not hmac.compare_digest(raw, self.token):
            raise falcon.HTTPUnauthorized(description="unauthorized", challenges=["Bearer"])


class BodyLimit:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        n = req.content_length
        if n is not None and n > self.max_bytes:
            raise falcon.HTTPContentTooLarge(
                description=f"the body is {n} bytes; this service takes at most {self.max_bytes}")


class RequestLog:
    """One line per request: method, path, status, milliseconds."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        req.context.t0 = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        ms = (time.perf_counter() - getattr(req.context, "t0", time.perf_counter())) * 1000
        log.info("%s %s -> %s (%.1fms)", req.method, req.path, resp.status[:3] if isinstance(resp.status, str)
                 else resp.status, ms)
