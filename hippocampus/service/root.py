"""The composition root: the whole service in one object (the runtime, the facade, the Falcon app, the MCP
mount, and waitress with a draining stop). It lives outside http/ and mcp/, the two front-ends it joins.

`Service` is what the console entry point, the Windows service and the tests
all drive: start(), serve_forever() (blocks), request_stop() (from any thread:
a model call in flight is abandoned, in-flight requests are answered, then the
actor tree stops, no thread is left).
"""
from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Optional

from waitress import create_server
from waitress import wasyncore
from waitress.channel import HTTPChannel

from actors.runtime import Runtime
from hippocampus.clock import Clock
from hippocampus.config import Config
from hippocampus.front import Front

from hippocampus.http.app import create_app
from hippocampus.http.server.bind import BindError, bind, release  # noqa: F401 - BindError: what a caller of start() catches
from hippocampus.http.server.clients import bound_clients, client_bounds
from hippocampus.http.guard import post_only
from hippocampus.http.server.loop import use_kept_selector

log = logging.getLogger("hippocampus.server")
STOP_DRAIN_SECONDS = 3.0    # the longest a stop waits for requests in flight (a model call is abandoned first)


class ServerLoopDied(RuntimeError):
    """The HTTP loop ended without a stop being asked for: the process must end so its manager restarts it."""


class Service:
    def __init__(self, cfg: Config, *, clock: Optional[Clock] = None, memory=None, port: Optional[int] = None,
                 own_process: bool = False):
        """own_process: this service is the whole process (the console entry point, the Windows service),
        so it may tune the process-wide garbage collector; a service embedded in tests or a demo does not."""
        self.cfg = cfg
        self.own_process = own_process
        self.runtime = Runtime(cfg, clock=clock, memory=memory)
        self.bearer = cfg.server.resolve_bearer()
        self.front = Front(self.runtime)
        self.app = create_app(self.front, bearer=self.bearer)
        self._mcp = None
        self._mcp_done = threading.Event()
        self._mcp_lock = threading.Lock()
        self._torn_down = False
        self._mcp_started = False
        self._port = cfg.server.port if port is None else port
        self.server = None
        self._stopped = threading.Event()
        self._stop_lock = threading.Lock()
        self._stopping = False

    @property
    def port(self) -> int:
        return self.server.effective_port if self.server else self._port

    @property
    def url(self) -> str:
        return f"http://{self.cfg.server.host}:{self.port}"

    def start(self) -> "Service":
        # The socket first: a port that cannot be bound raises BindError (one line) before any actor or
        # thread of the service has started, so the process can end at once with nothing left running.
        self.server = bind(lambda socket_map: create_server(
            self.app, map=socket_map, host=self.cfg.server.host, port=self._port,
            threads=self.cfg.server.threads, ident="seren-hippocampus",
            clear_untrusted_proxy_headers=True,
            # never select(): it cannot take a descriptor numbered 1,024 or more, and its ValueError
            # ends waitress's loop thread. The loop runs on a kept selector (http/loop.py); poll() is
            # what waitress itself would use if that were ever undone.
            asyncore_use_poll=True,
            # connection limit, idle timeout, body cap (guard_clients)
            **client_bounds(self.cfg.server)), self.cfg.server.host, self._port)
        # a late head or a trickled body is closed, a body without the bearer is 401 from its head, one
        # address holds at most its share of the connections
        bound_clients(self.server, self.cfg.server, bearer=self.bearer)
        use_kept_selector(self.server)
        try:
            self.runtime.start()
            self._offer_mcp()
        except BaseException:
            # the listener and waitress's threads go with a failed start
            release(getattr(self.server, "_map", None) or self.server.map)
            raise
        if self.own_process:
            _freeze_startup_objects(collect=False)     # no full collection on the way to the first answer
        return self

    # ------------------------------------------------------------ MCP, mounted off the start path
    # The MCP SDK is half of the resident memory (about 42 MB here: pydantic models for two protocol
    # versions, starlette, uvicorn) and most of a cold start. It is imported on the first request to /mcp,
    # on a thread of its own; a box whose MCP client never calls keeps that memory, and /health answers
    # at once either way.
    @property
    def mcp(self):
        """The mounted MCP endpoint, or None without the [mcp] extra (mounts it now if no call has yet, and
        waits for the mount to finish)."""
        self._start_mcp_mount()
        self._mcp_done.wait(120)
        return self._mcp

    def _offer_mcp(self) -> None:
        try:
            from hippocampus.mcp.mount import mount_path, path_pattern
        except ImportError:
            self._mcp_done.set()
            return
        self.app.add_sink(_WhileMounting(self), path_pattern(mount_path()))

    def _start_mcp_mount(self) -> None:
        with self._mcp_lock:
            if self._mcp_started or self._mcp_done.is_set():
                return
            if self._torn_down:                 # stopped before any call: nothing to mount
                self._mcp_done.set()
                return
            self._mcp_started = True
        threading.Thread(target=self._mount_mcp, name="mcp-mount", daemon=True).start()

    def _mount_mcp(self) -> None:
        try:
            from hippocampus.mcp import mount

            try:
                self._mcp = mount.mount_mcp(self.app, self.front)
            except ImportError as exc:
                log.info("no MCP endpoint: %s", exc)
                mount.mount_mcp_fallback(self.app)
        except Exception:  # noqa: BLE001 - the service runs on without /mcp
            log.exception("the MCP endpoint could not be mounted")
        finally:
            if self.own_process:
                _freeze_startup_objects()
            with self._mcp_lock:
                self._mcp_done.set()
                late = self._torn_down
            if late and self._mcp is not None:   # the service stopped while this was importing
                self._mcp.stop()

    def serve_forever(self) -> None:
        """Serve until a stop is asked for. A loop that ends any other way is loud and safe: it is logged,
        the listener is closed (new clients are refused at once instead of queueing in the kernel
        forever), the actors stop, and ServerLoopDied is raised so the process can exit non-zero."""
        try:
            self.server.run()
        except Exception as exc:
            self._close_after_loop_death(exc)
            raise ServerLoopDied(f"the HTTP loop ended: {type(exc).__name__}: {exc}") from exc
        else:
            if not self._stopping:
                self._close_after_loop_death(None)
                raise ServerLoopDied("the HTTP loop ended without a stop being asked for")
        finally:
            self._teardown()

    def _close_after_loop_death(self, exc) -> None:
        what = f"{type(exc).__name__}: {exc}" if exc is not None else "it returned without a stop"
        log.critical("the HTTP server loop died (%s): closing the listener and stopping, so that the "
                     "service manager can start the service again", what,
                     exc_info=(type(exc), exc, exc.__traceback__) if exc is not None else None)
        try:
            wasyncore.dispatcher.close(self.server)   # the listener first: new clients are refused now
        except Exception:  # noqa: BLE001
            log.exception("closing the listener after the loop died")
        try:
            wasyncore.close_all(self.server._map)    # the loop is gone: nothing else will close them
        except Exception:  # noqa: BLE001
            log.exception("closing the connections after the loop died")

    def serve_in_thread(self) -> threading.Thread:
        t = threading.Thread(target=self.serve_forever, name="waitress-main", daemon=True)
        t.start()
        return t

    def request_stop(self, drain_seconds: float = STOP_DRAIN_SECONDS) -> None:
        """The draining stop: abandon the model call in flight (the sleep or redraft waiting on it is
        interrupted and its request answered 503), close the listener, let in-flight requests finish,
        then close the rest."""
        with self._stop_lock:
            if self._stopping or self.server is None:
                return
            self._stopping = True
        self.runtime.begin_stop()
        srv = self.server
        if not self._pull(lambda: wasyncore.dispatcher.close(srv)):
            return
        deadline = time.monotonic() + drain_seconds
        while time.monotonic() < deadline and not self._idle(srv):
            time.sleep(0.02)
        self._pull(lambda: wasyncore.close_all(srv._map))

    def _pull(self, thunk) -> bool:
        """Run thunk in the server's loop thread. A loop already gone (its trigger closed) has stopped."""
        try:
            self.server.trigger.pull_trigger(thunk)
            return True
        except OSError as exc:
            log.info("the server loop had already closed (%s)", exc)
            return False

    def wait_stopped(self, timeout: float = 30.0) -> bool:
        return self._stopped.wait(timeout)

    @staticmethod
    def _idle(srv) -> bool:
        td = srv.task_dispatcher
        if getattr(td, "active_count", 0) or getattr(td, "queue", None):
            return False
        for ch in list(srv._map.values()):
            if isinstance(ch, HTTPChannel) and (ch.requests or ch.total_outbufs_len):
                return False
        return True

    def _teardown(self) -> None:
        self.runtime.begin_stop()       # a loop that died: its actors must not wait on the model either
        try:
            self.server.task_dispatcher.shutdown()
        except Exception:  # noqa: BLE001
            log.exception("stopping the request threads")
        # A stop never waits out a slow MCP import (SIGTERM must exit in seconds): a mount that
        # finishes after this stops its own bridge (_mount_mcp).
        if self._mcp_started:
            self._mcp_done.wait(1.0)
        with self._mcp_lock:
            self._torn_down = True
            if not self._mcp_started:
                self._mcp_done.set()            # never called: nothing was mounted
            mounted = self._mcp if self._mcp_done.is_set() else None
        if mounted is not None:
            mounted.stop()
        self.runtime.stop()
        self._stopped.set()
        log.info("stopped")


def _freeze_startup_objects(collect: bool = True) -> None:
    """Move what start-up made (modules, the SDK's pydantic models) out of the garbage collector's sight:
    they live as long as the process, and without this every big allocation later (decoding 10,000
    short-terms from Memory) paid for full collections over them, three times the decoding itself."""
    if collect:
        gc.collect()
    gc.freeze()


class _WhileMounting:
    """/mcp until the endpoint is mounted: the first call starts the mount and every call waits for it, then
    answers as the mounted endpoint would (which takes /mcp over from here on)."""

    def __init__(self, service: Service):
        self.service = service

    def __call__(self, req, resp, **kwargs) -> None:
        if req.method != "POST":        # the mounted endpoint's own answer: no call, so nothing to mount
            post_only(resp)
            return
        mounted = self.service.mcp
        if mounted is None:
            from hippocampus.mcp.mount import NotInstalled

            NotInstalled()(req, resp)
            return
        from hippocampus.mcp.bridge import WsgiSink

        WsgiSink(mounted.bridge)(req, resp)
