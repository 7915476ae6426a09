"""Bounded clients on waitress: a head has `header_timeout_seconds`; a body `body_timeout_seconds` from its head
plus a second per `min_body_bytes_per_second` bytes (a trickle is 408); a body without the bearer its route needs
is 401 from its head, never read; one client (an IPv4 address, an IPv6 /64, or the whole loopback range: 127.0.0.0/8
and ::1 are one machine) holds at most its `connection_share`, past which its longest-idle connection with nothing
being served is closed (503 only when all are served); and one slot short of the connection limit, the longest-idle
connection with nothing being served, whatever its address, is closed, so the listener never stops accepting and a
new client always gets in. Every refusal is {"detail": "..."}.
The deadlines are checked in readable(), which waitress's loop asks of every channel at least once a second.
"""
from __future__ import annotations

import functools
import ipaddress
import json
import logging
import threading
import time

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask
from waitress.utilities import Error, RequestEntityTooLarge

from hippocampus.config.reach import address
from hippocampus.http.auth import bearer_matches, needs_bearer

log = logging.getLogger(__name__)
ACCEPTS_PER_TURN = 32      # connections taken from the kernel's queue in one turn of the loop
NOTE_EVERY = 60.0          # seconds between two log lines about the same kind of refused connection
BOTH_FRAMINGS = ("the request says both Content-Length and Transfer-Encoding, which disagree about where its "
                 "body ends; send one of them")


class FamilyError(Error):
    """A refusal whose detail is said as is, in the family shape, with any headers it needs."""

    def __init__(self, code: int, reason: str, detail: str, headers=()):
        super().__init__(detail)
        self.code, self.reason, self.headers = code, reason, list(headers)


class HeadParser(HTTPRequestParser):
    """waitress's parser, deciding from the head alone, before a byte of the body is read (waitress reads the
    whole body before the app runs): both framings are 400, a body without the bearer 401."""

    bearer = b""                 # the token; empty: no bearer configured
    mcp_path = ""                # server.mcp_mount: behind the bearer wherever it is mounted
    head_done_at = None          # time.monotonic() when the head was complete: the body's deadline runs from it

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        # RFC 9112 6.1: waitress took the chunked end, and the bytes after it ran as a second request.
        # It has popped Transfer-Encoding by now if it took it (HTTP/1.1); on HTTP/1.0 it is still here.
        if "CONTENT_LENGTH" in self.headers and (self.chunked or "TRANSFER_ENCODING" in self.headers):
            raise ParsingError(BOTH_FRAMINGS)

    def received(self, data: bytes) -> int:
        had_head = self.headers_finished
        consumed = super().received(data)
        if self.headers_finished and not had_head:
            self.head_done_at = time.monotonic()
            if (self.bearer and not self.completed and self.error is None
                    and needs_bearer(self.command, self.path, self.mcp_path)
                    and not bearer_matches(self.headers.get("AUTHORIZATION", ""), self.bearer)):
                # the app's own answer (BearerAuth), word for word
                self.error = FamilyError(401, "Unauthorized", "unauthorized", [("WWW-Authenticate", "Bearer")])
                self.completed = True
        if self.error is not None:
            return len(data)     # nothing after a refusal is a request: the connection closes after it
        return consumed


LOOPBACK = "loopback"       # the key of every loopback address: one machine, one client


def client_key(addr) -> str:
    """The client a share is counted for: the IPv4 address (a mapped one too), the IPv6 /64, or LOOPBACK for the
    whole loopback range (127.0.0.0/8, ::1, ::ffff:127.x): any program on this machine can send from any of them."""
    host = addr[0] if isinstance(addr, tuple) and addr else str(addr)
    ip = address(host)      # an IPv6 address of an IPv4 one: that IPv4 address
    if ip is None:
        return str(host)
    if ip.is_loopback:
        return LOOPBACK
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class RateNote:
    """One log line a minute at most for one kind of event, with how many there were since the last."""

    def __init__(self, line: str):
        self.line, self.count, self.last = line, 0, -NOTE_EVERY
        self._lock = threading.Lock()

    def note(self, *args) -> None:
        now = time.monotonic()
        with self._lock:
            self.count += 1
            if now - self.last < NOTE_EVERY:
                return
            count, self.count, self.last = self.count, 0, now
        log.warning(self.line, count, *args)


SLOW_HEAD = RateNote("closed %d connection(s) that sent no complete request head within %g s "
                     "(slow or stuck clients)")
PUSHED_OUT = RateNote("closed %d waiting connection(s) of a client that was over its share of %d "
                      "connections (server.connection_share), to make room for its newer ones")
MADE_ROOM = RateNote("closed %d idle or unfinished connection(s) at the connection limit of %d "
                     "(server.connection_limit), the longest-idle first, to make room for new clients")
REFUSALS = {       # by the answer's code (400: waitress's own BadRequest)
    401: RateNote("answered %d request(s) 401 from the head, before reading the body (no bearer or a wrong one)"),
    408: RateNote("closed %d connection(s) whose request body came too slowly (the last: %s)"),
    503: RateNote("refused %d connection(s) from an address whose every connection was busy (the last: %s)"),
    400: RateNote("refused %d malformed request(s) with 400 (the last: %s)"),
}


class FamilyErrorTask(ErrorTask):
    """waitress's own refusals (413, 400, 431) and ours, as {"detail": "..."} JSON (the connection closes after)."""

    def execute(self) -> None:
        e = self.request.error
        if isinstance(e, FamilyError):
            detail = e.body
            self.response_headers.extend(e.headers)
        elif isinstance(e, RequestEntityTooLarge):
            cap = self.channel.adj.max_request_body_size - 1
            n = self.request.content_length
            said = f"the body is {n} bytes" if n > cap else f"the body is more than {cap} bytes"
            detail = f"{said}; this service takes at most {cap}"
        else:
            detail = f"{e.reason.lower()}: {e.body}" if e.body else e.reason.lower()
        if (note := REFUSALS.get(e.code)) is not None:
            note.note(*(() if e.code == 401 else (detail,)))
        body = json.dumps({"detail": detail}).encode("utf-8")
        self.status = f"{e.code} {e.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class BoundedChannel(HTTPChannel):
    error_task_class = FamilyErrorTask
    parser_class = HeadParser
    header_timeout = 5.0
    body_timeout = 10.0
    min_body_rate = 1024
    share = 240

    def __init__(self, server, sock, addr, adj, map=None):  # noqa: A002 - waitress's signature
        self._waiting_since, self._served, self._key = time.monotonic(), False, None
        super().__init__(server, sock, addr, adj, map=map)
        self._key = client_key(addr)
        mine = server.__dict__.setdefault("by_address", {}).setdefault(self._key, set())
        mine.add(self)
        self._keep_share(mine)
        make_room(self._map, self.adj.connection_limit, spare=self)

    def _keep_share(self, mine: set) -> None:
        live = [ch for ch in mine if not (ch.will_close or ch.close_when_flushed)]
        if len(live) <= self.share:
            return
        if close_longest_idle(live, spare=self):
            PUSHED_OUT.note(self.share)
            return
        self._refuse(FamilyError(
            503, "Service Unavailable", f"this client already has {len(live) - 1} connections open here, each of "
            f"them being served, the most one client (one address, or this machine's loopback) may hold; wait for "
            f"an answer and try again (an operator can raise server.connection_share)", [("Retry-After", "5")]),
            request=self.parser_class(self.adj))

    def idle_since(self):
        """Since when nothing of this connection has been served: None while a request is handled or its
        answer goes out; the last byte of a body coming in; else the end of its last answer (or its opening):
        bytes of a head trickling in are no activity."""
        if self.requests or self.total_outbufs_len:
            return None
        req = self.request
        if req is not None and req.headers_finished:
            return time.monotonic() - (time.time() - self.last_activity)     # waitress keeps wall-clock time
        return self._waiting_since

    def del_channel(self, map=None):  # noqa: A002 - waitress's signature
        mine = self.server.__dict__.get("by_address", {}).get(self._key)
        if mine is not None:
            mine.discard(self)
            if not mine:
                self.server.by_address.pop(self._key, None)
        super().del_channel(map)

    def _refuse(self, error, request=None) -> None:
        """Answer `error` for the request being read (or `request`), in order after any being served."""
        with self.requests_lock:
            req = request if request is not None else self.request
            req.error, req.completed = error, True
            if request is None:
                self.request = None
            self.requests.append(req)
            if len(self.requests) == 1:
                self.server.add_task(self)

    def send_continue(self) -> None:
        # waitress would say "100 Continue" to a request it has already refused (a Content-Length over the
        # cap), then wait for the whole body before the 413; refused, the 413 goes out at once instead.
        if self.request is not None and self.request.error is not None:
            self.request.expect_continue = False
            return
        super().send_continue()

    def _body_too_slow(self, now: float) -> bool:
        req = self.request
        if req is None or req.completed or req.head_done_at is None:
            return False
        got = req.body_bytes_received
        allowed = self.body_timeout + got / self.min_body_rate
        took = now - req.head_done_at
        if took <= allowed:
            return False
        of = f" of {req.content_length}" if not req.chunked else ""
        self._refuse(FamilyError(
            408, "Request Timeout", f"the request body did not arrive in time: {got}{of} bytes in {took:.0f} s "
            f"(a body has {self.body_timeout:g} s, and one second more for every {self.min_body_rate} bytes it "
            f"sends); send it faster, or an operator can raise server.body_timeout_seconds"))
        return True

    def readable(self) -> bool:
        now = time.monotonic()
        if self._body_too_slow(now):
            return False
        req = self.request
        if self.requests or self.total_outbufs_len or (req is not None and req.headers_finished):
            self._waiting_since, self._served = now, True   # read past its head, served, or its answer going out
        elif not self.will_close and now - self._waiting_since > self.header_timeout:
            # A kept-alive connection with nothing begun is simply expired; one that opened and sent
            # nothing, or only part of a request head, is a slow client and is counted.
            if self.request is not None or not self._served:
                SLOW_HEAD.note(self.header_timeout)
            self.will_close = True          # writable() is now true: handle_write closes it this turn
            return False
        return super().readable()


def make_room(socket_map: dict, limit: int, spare=None) -> None:
    """One slot short of the connection limit (at it waitress stops accepting), the longest-idle connection with
    nothing being served, whatever its address, is closed: the listener never stops taking new clients."""
    if len(socket_map) < limit - 1:
        return
    ours = [ch for ch in list(socket_map.values()) if isinstance(ch, BoundedChannel)]
    live = [ch for ch in ours if not (ch.will_close or ch.close_when_flushed)]
    if len(socket_map) - (len(ours) - len(live)) < limit - 1:
        return                                      # enough are closing already
    if close_longest_idle(live, spare=spare):
        MADE_ROOM.note(limit)


def close_longest_idle(candidates: list, spare=None) -> bool:
    """Close the one of `candidates` (never `spare`, the newcomer) idle the longest with nothing being served."""
    idle = [(since, id(ch), ch) for ch in candidates if ch is not spare
            for since in (ch.idle_since(),) if since is not None]
    if not idle:
        return False
    min(idle)[2].will_close = True                  # writable() is now true: the loop closes it next turn
    return True


def bound_clients(server, server_cfg, bearer: str = ""):
    """Every connection `server` accepts from now on a BoundedChannel with server_cfg's bounds and `bearer`."""
    parser = type("HeadParser", (HeadParser,), {"bearer": bearer.encode() if bearer else b"",
                                                "mcp_path": server_cfg.mcp_mount})
    channel = type("BoundedChannel", (BoundedChannel,), {
        "parser_class": parser,
        "header_timeout": float(server_cfg.header_timeout_seconds),
        "body_timeout": float(server_cfg.body_timeout_seconds),
        "min_body_rate": max(1, int(server_cfg.min_body_bytes_per_second)),
        "share": max(1, int(server_cfg.connection_limit * server_cfg.connection_share))})
    listeners = [server] if isinstance(server, BaseWSGIServer) else [
        d for d in getattr(server, "map", {}).values() if isinstance(d, BaseWSGIServer)]
    for listener in listeners:
        listener.by_address = {}
        listener.channel_class = channel
        listener.handle_accept = functools.partial(accept_several, listener, listener.handle_accept)
        listener.readable = functools.partial(readable_with_room, listener, listener.readable)


def readable_with_room(listener, readable) -> bool:
    """The listener's readable(), asked every turn: when connections that were all being served at the limit
    have since gone idle, one of them makes room (else a new client would wait for the head deadline)."""
    if listener.accepting:
        make_room(listener._map, listener.adj.connection_limit)
    return readable()


def accept_several(listener, accept_one) -> None:
    """Up to ACCEPTS_PER_TURN waiting connections a turn, not waitress's one: clients that reconnect as fast as
    they are pushed out keep a queue in the kernel, and a new client waits its turn behind all of it. Stops one
    short of the connection limit (where waitress would stop listening) and when the queue is empty."""
    for _ in range(ACCEPTS_PER_TURN):
        before = len(listener._map)
        accept_one()
        if len(listener._map) <= before or len(listener._map) >= listener.adj.connection_limit - 1:
            return
