"""waitress in one place: create it (the socket bound first: a failed bind is BindError, one line naming the
cause and the way out, before anything else starts), serve it on a KeptSelector (a loop that ends without a stop
asked for closes its listener and raises ServerLoopDied, so the process exits non-zero and is restarted), drain it.
"""
from __future__ import annotations

import logging
import math
import time
from types import SimpleNamespace
from typing import Callable

from waitress import create_server, wasyncore
from waitress.channel import HTTPChannel

from hippocampus.http.server.bind import BindError, explain, release
from hippocampus.http.server.clients import bound_clients
from hippocampus.http.server.loop import loop

log = logging.getLogger(__name__)
THREADS_AT_STOP_SECONDS = 0.5   # after the drain, an idle request thread ends at once; a busy one is not waited on


class ServerLoopDied(RuntimeError):
    """The HTTP loop ended without a stop being asked for."""


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
    """The request threads end. One still busy after the drain (a request that hangs) is left: waitress's own 5 s
    wait for it would come out of the actors' 7 s from SIGTERM."""
    try:
        td = srv.task_dispatcher
        td.shutdown(timeout=THREADS_AT_STOP_SECONDS)
        if td.threads:
            log.warning("%d request(s) still running after the stop's drain: abandoned, and the process exits "
                        "without waiting for them", len(td.threads))
    except Exception:  # noqa: BLE001
        log.exception("stopping the request threads")
