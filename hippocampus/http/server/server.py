"""waitress in one place: create it (the socket bound first), serve it, drain it, close it.

- `create(app, server_cfg, port, bearer)`: BindError (one line) before anything else starts; the clients
  are bounded (clients.py) and the loop runs on a kept selector (loop.py), never select().
- `serve(srv, stopping)`: blocks. A loop that ends without a stop asked for is logged, its listener closed
  (new clients are refused rather than queued by the kernel forever) and ServerLoopDied raised, so the
  process exits non-zero.
- `drain(srv, seconds)`: close the listener, let in-flight requests finish, then close the rest.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

from waitress import create_server, wasyncore
from waitress.channel import HTTPChannel

from hippocampus.http.server.bind import BindError, bind, release  # noqa: F401 - BindError: what create() raises
from hippocampus.http.server.clients import bound_clients, client_bounds
from hippocampus.http.server.loop import use_kept_selector

log = logging.getLogger("hippocampus.server")


class ServerLoopDied(RuntimeError):
    """The HTTP loop ended without a stop being asked for: the process must end so its manager restarts it."""


def create(app, server_cfg, port: int, bearer: str):
    srv = bind(lambda socket_map: create_server(
        app, map=socket_map, host=server_cfg.host, port=port, threads=server_cfg.threads,
        ident="seren-hippocampus", clear_untrusted_proxy_headers=True,
        asyncore_use_poll=True,         # what waitress would use if the kept selector were ever undone
        **client_bounds(server_cfg)), server_cfg.host, port)
    # a late head or a trickled body is closed, a body without the bearer is 401 from its head, one
    # address holds at most its share of the connections
    bound_clients(srv, server_cfg, bearer=bearer)
    use_kept_selector(srv)
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
                 "service manager can start the service again", what,
                 exc_info=(type(exc), exc, exc.__traceback__) if exc is not None else None)
    # the listener first (new clients are refused now), then the connections: the loop that would close
    # them is gone
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
