"""Bounded clients on waitress: what a slow, idle or greedy connection may hold.

- `client_bounds(server_cfg)`: the create_server settings for a small box: the connection limit, the
  idle timeout (channel_timeout), and the body cap (`server.max_body_bytes`, so an oversized
  Content-Length is refused with 413 as soon as the request head is read, and a chunked body is cut off
  when it passes the cap).
- `bound_clients(server, header_timeout)`: every accepted connection is a `BoundedChannel`, which closes
  a connection that has not sent a complete request head within `header_timeout` seconds of opening or
  of its last answer (waitress has no such limit: a client trickling a header line every few seconds,
  or sending nothing, held its connection for good), and answers waitress's own errors (413, 400, 431)
  in the family shape, {"detail": "..."}.

The deadline is checked in `readable()`, which waitress's loop asks of every channel on each turn
(at least once a second, its loop timeout), so no extra thread or timer is needed.
"""
from __future__ import annotations

import json
import logging
import math
import time

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask
from waitress.utilities import RequestEntityTooLarge

log = logging.getLogger("hippocampus.http")
NOTE_EVERY = 60.0          # seconds between two log lines about closed slow connections


def client_bounds(server_cfg) -> dict:
    timeout = max(1, math.ceil(server_cfg.channel_timeout_seconds))
    return {"connection_limit": server_cfg.connection_limit,
            "channel_timeout": timeout,
            "cleanup_interval": max(1, min(30, timeout // 3)),      # how often idle channels are swept
            # waitress refuses a body of max_request_body_size bytes or more; ours takes max_body_bytes
            "max_request_body_size": server_cfg.max_body_bytes + 1}


class FamilyErrorTask(ErrorTask):
    """waitress's own refusals, as {"detail": "..."} JSON (the connection is closed after, as before)."""

    def execute(self) -> None:
        e = self.request.error
        if isinstance(e, RequestEntityTooLarge):
            cap = self.channel.adj.max_request_body_size - 1
            n = self.request.content_length
            said = f"the body is {n} bytes" if n > cap else f"the body is more than {cap} bytes"
            detail = f"{said}; this service takes at most {cap}"
        else:
            detail = f"{e.reason.lower()}: {e.body}" if e.body else e.reason.lower()
        body = json.dumps({"detail": detail}).encode("utf-8")
        self.status = f"{e.code} {e.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _SlowNotes:
    """One log line a minute at most about the connections closed for a late request head."""
    closed = 0
    last = 0.0

    @classmethod
    def note(cls, now: float, timeout: float) -> None:
        cls.closed += 1
        if now - cls.last >= NOTE_EVERY:
            log.warning("closed %d connection(s) that sent no complete request head within %g s "
                        "(slow or stuck clients)", cls.closed, timeout)
            cls.closed, cls.last = 0, now


class BoundedChannel(HTTPChannel):
    error_task_class = FamilyErrorTask
    header_timeout = 5.0

    def __init__(self, *args, **kwargs):
        self._waiting_since = time.monotonic()
        self._served = False
        super().__init__(*args, **kwargs)

    def _busy(self) -> bool:
        """A request is being read past its head, queued, served, or its answer is still going out."""
        req = self.request
        return bool(self.requests or self.total_outbufs_len or (req is not None and req.headers_finished))

    def send_continue(self) -> None:
        # waitress would say "100 Continue" to a request it has already refused (a Content-Length over the
        # cap), then wait for the whole body before the 413; refused, the 413 goes out at once instead.
        if self.request is not None and self.request.error is not None:
            self.request.expect_continue = False
            return
        super().send_continue()

    def readable(self) -> bool:
        now = time.monotonic()
        if self._busy():
            self._waiting_since, self._served = now, True
        elif not self.will_close and now - self._waiting_since > self.header_timeout:
            # A kept-alive connection with nothing begun is simply expired; one that opened and sent
            # nothing, or only part of a request head, is a slow client and is counted.
            if self.request is not None or not self._served:
                _SlowNotes.note(now, self.header_timeout)
            self.will_close = True          # writable() is now true: handle_write closes it this turn
            return False
        return super().readable()


def _listeners(server) -> list:
    if isinstance(server, BaseWSGIServer):
        return [server]
    return [d for d in getattr(server, "map", {}).values() if isinstance(d, BaseWSGIServer)]


def bound_clients(server, header_timeout: float):
    """Make every connection `server` accepts from now on a BoundedChannel with this head deadline."""
    channel = type("BoundedChannel", (BoundedChannel,), {"header_timeout": float(header_timeout)})
    for listener in _listeners(server):
        listener.channel_class = channel
    return server
