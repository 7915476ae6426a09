"""waitress in one place: create it (the socket bound first: a failed bind is BindError, one line naming the
cause and the way out, before anything else starts), serve it on a KeptSelector (a loop that ends without a stop
asked for closes its listener and raises ServerLoopDied, so the process exits non-zero and is restarted), drain it.
"""
from __future__ import annotations

import errno
import logging
import math
import selectors
import socket
import time
from types import SimpleNamespace
from typing import Callable, Optional

from waitress import create_server, wasyncore
from waitress.channel import HTTPChannel

from hippocampus.http.server.clients import bound_clients

log = logging.getLogger("hippocampus.server")
# POSIX errno, and Winsock's numbers for the same (a socket error on Windows carries those).
IN_USE = {errno.EADDRINUSE, 10048}
NO_PERMISSION = {errno.EACCES, errno.EPERM, 10013}
NOT_HERE = {errno.EADDRNOTAVAIL, 10049}
NEARBY = 20                     # how many ports after the held one are tried for a suggestion
READ, WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE


class ServerLoopDied(RuntimeError):
    """The HTTP loop ended without a stop being asked for."""


class BindError(OSError):
    """str() is the one line for the person. An OSError, as the failed bind was (the demo catches that)."""

    def __init__(self, line: str, host: str, port: int):
        super().__init__(line)
        self.host, self.port = host, port


class KeptSelector:
    """The loop on the platform's best selector (epoll), a registration kept until the channel's readable() or
    writable() answer changes (waitress rebuilds poll() every turn; select() stops at descriptor 1,024)."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.registered: dict = {}          # fd -> (the channel, the events it is registered for)

    def _interest(self, fd: int, obj, events: int) -> None:
        was = self.registered.get(fd)
        if was == (obj, events):            # the same channel (dispatchers compare by identity), the same answer
            return
        if was is not None:                 # its answer changed, or a new channel reuses the number
            self._forget(fd)
        if events:
            self.selector.register(fd, events)
            self.registered[fd] = (obj, events)

    def _forget(self, fd: int) -> None:
        self.registered.pop(fd, None)
        try:
            self.selector.unregister(fd)
        except (KeyError, ValueError, OSError):
            pass                            # closed already: the kernel let it go

    def turn(self, timeout: float, channels: dict) -> None:
        """One turn of the loop over waitress's map (fd -> dispatcher)."""
        for fd, obj in list(channels.items()):
            events = READ if obj.readable() else 0
            if obj.writable() and not obj.accepting:
                events |= WRITE
            self._interest(fd, obj, events)
        for fd in [fd for fd in self.registered if fd not in channels]:
            self._forget(fd)
        for key, events in self.selector.select(timeout):
            obj = channels.get(key.fd)
            if obj is None:
                continue
            if events & READ:
                wasyncore.read(obj)
            if events & WRITE and channels.get(key.fd) is obj:
                wasyncore.write(obj)

    def close(self) -> None:
        self.selector.close()


def loop(timeout: float = 30.0, use_poll: bool = False, map: dict = None) -> None:  # noqa: A002
    """wasyncore.loop as waitress calls it, on a KeptSelector."""
    kept = KeptSelector()
    try:
        while map:
            kept.turn(timeout, map)
    finally:
        kept.close()


def create(app, server_cfg, port: int, bearer: str):
    host, socket_map = server_cfg.host, {}
    timeout = max(1, math.ceil(server_cfg.channel_timeout_seconds))
    try:
        srv = create_server(app, map=socket_map, host=host, port=port, threads=server_cfg.threads,
                            ident="seren-hippocampus", clear_untrusted_proxy_headers=True,
                            asyncore_use_poll=True,     # what waitress would use if the kept selector were undone
                            connection_limit=server_cfg.connection_limit, channel_timeout=timeout,
                            cleanup_interval=max(1, min(30, timeout // 3)),     # how often idle channels are swept
                            # waitress refuses a body of max_request_body_size bytes or more; ours takes max_body_bytes
                            max_request_body_size=server_cfg.max_body_bytes + 1)
    except (OSError, ValueError) as exc:
        # waitress's ValueError "Invalid host/port specified." is a getaddrinfo that failed
        if isinstance(exc, ValueError) and "host/port" not in str(exc):
            raise
        release(socket_map)
        raise BindError(explain(host, port, exc), host, port) from None
    bound_clients(srv, server_cfg, bearer=bearer)
    srv.asyncore = SimpleNamespace(loop=loop, dispatcher=wasyncore.dispatcher)
    return srv


def release(socket_map: dict) -> None:
    """Stop waitress's request threads and close every socket of a server that will never run."""
    for obj in list(socket_map.values()):
        dispatcher = getattr(obj, "task_dispatcher", None)
        if dispatcher is not None:
            dispatcher.shutdown(timeout=2)
            break                        # one dispatcher serves every listener
    wasyncore.close_all(socket_map)


def explain(host: str, port: int, exc: Exception) -> str:
    where = f"{host}:{port}"
    codes = {getattr(exc, "errno", None), getattr(exc, "winerror", None)} - {None}
    if codes & IN_USE:
        free = free_port_near(host, port)
        pick = f"set server.port to a free one ({free} is free now)" if free else "set server.port to a free one"
        who = holder(port)
        return (f"cannot listen on {where}: another process holds port {port}{f' ({who})' if who else ''}. "
                f"Stop that process, or {pick}, or server.port: 0 for any free port (the start-up line names it).")
    if codes & NO_PERMISSION:
        return (f"cannot listen on {where}: no permission to use port {port} (ports below 1024 need root "
                f"or a capability, and some ports are reserved). Set server.port to one above 1023, e.g. "
                f"7424, or server.port: 0 for any free port.")
    if codes & NOT_HERE:
        return (f"cannot listen on {where}: {host} is not an address of this machine. Set server.host to "
                f"127.0.0.1 (this box only) or to one of this machine's own addresses.")
    if isinstance(exc, (socket.gaierror, ValueError)):
        return (f"cannot listen on {where}: {host!r} is not a host name or address this machine can resolve. "
                f"Set server.host to 127.0.0.1 (this box only) or to one of this machine's own addresses.")
    why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"cannot listen on {where}: {why}. Check server.host and server.port, or set server.port: 0."


def holder(port: int) -> str:
    """Who listens on `port`, when the OS says: "pid 1234, llama-server"; else empty."""
    try:
        import psutil

        conns = psutil.net_connections(kind="tcp")
    except Exception:  # noqa: BLE001 - not allowed to look, or no psutil: say nothing
        return ""
    pids = sorted({c.pid for c in conns if c.pid and c.status == psutil.CONN_LISTEN and c.laddr
                   and c.laddr.port == port})
    named = []
    for pid in pids[:3]:
        try:
            named.append(f"pid {pid}, {psutil.Process(pid).name()}")
        except Exception:  # noqa: BLE001 - gone meanwhile, or not ours to name
            named.append(f"pid {pid}")
    return "; ".join(named)


def free_port_near(host: str, port: int, tries: int = NEARBY) -> Optional[int]:
    """The first port after `port` that this host can bind now (a suggestion, not a reservation)."""
    if not port:
        return None
    for candidate in range(port + 1, min(port + 1 + tries, 65536)):
        try:
            infos = socket.getaddrinfo(host, candidate, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP,
                                       socket.AI_PASSIVE)
        except OSError:
            return None
        family, socktype, proto, _, addr = infos[0]
        try:
            with socket.socket(family, socktype, proto) as s:
                if hasattr(socket, "SO_EXCLUSIVEADDRUSE"):      # Windows: no sharing with a listener
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
                s.bind(addr)
        except OSError:
            continue
        return candidate
    return None


def discard(srv) -> None:
    """A server that will never run: its listener and waitress's threads go."""
    release(getattr(srv, "_map", None) or srv.map)


def serve(srv, stopping: Callable[[], bool]) -> None:
    try:
        srv.run()
    except Exception as exc:
        _close_after_death(srv, exc)
        raise ServerLoopDied(f"the HTTP loop ended: {type(exc).__name__}: {exc}") from exc
    if not stopping():
        _close_after_death(srv, None)
        raise ServerLoopDied("the HTTP loop ended without a stop being asked for")


def _close_after_death(srv, exc) -> None:
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "it returned without a stop"
    log.critical("the HTTP server loop died (%s): closing the listener and stopping, so that the "
                 "service manager can start the service again", what, exc_info=exc)
    # the listener first (new clients are refused, not queued by the kernel forever), then the connections
    for step, what in ((lambda: wasyncore.dispatcher.close(srv), "the listener"),
                       (lambda: wasyncore.close_all(srv._map), "the connections")):
        try:
            step()
        except Exception:  # noqa: BLE001
            log.exception("closing %s after the loop died", what)


def drain(srv, seconds: float) -> None:
    if not _in_loop(srv, lambda: wasyncore.dispatcher.close(srv)):
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not _idle(srv):
        time.sleep(0.02)
    _in_loop(srv, lambda: wasyncore.close_all(srv._map))


def _in_loop(srv, thunk) -> bool:
    """Run thunk in the server's loop thread. A loop already gone (its trigger closed) has stopped."""
    try:
        srv.trigger.pull_trigger(thunk)
        return True
    except OSError as exc:
        log.info("the server loop had already closed (%s)", exc)
        return False


def _idle(srv) -> bool:
    td = srv.task_dispatcher
    if getattr(td, "active_count", 0) or getattr(td, "queue", None):
        return False
    return not any(isinstance(ch, HTTPChannel) and (ch.requests or ch.total_outbufs_len)
                   for ch in list(srv._map.values()))


def stop_threads(srv) -> None:
    try:
        srv.task_dispatcher.shutdown()
    except Exception:  # noqa: BLE001
        log.exception("stopping the request threads")
