"""The composition root: the whole service in one object (runtime, facade, Falcon app, MCP mount, waitress
with a draining stop), outside http/ and mcp/, the two front-ends it joins."""
from __future__ import annotations

import gc
import logging
import threading
from typing import Optional

from actors.runtime import Runtime
from hippocampus.clock import Clock
from hippocampus.config import Config
from hippocampus.front import Front
from hippocampus.http.app import create_app
from hippocampus.http.guard import post_only
from hippocampus.http.server import server as http_server
from hippocampus.http.server.bind import BindError  # noqa: F401 - what callers catch
from hippocampus.http.server.server import ServerLoopDied  # noqa: F401 - what callers catch
from hippocampus.mcp.mount import LazyMount
from hippocampus.store.private import FolderRefused

log = logging.getLogger(__name__)
STOP_DRAIN_SECONDS = 3.0    # the longest a stop waits for requests in flight (a model call is abandoned first)


class Service:
    def __init__(self, cfg: Config, *, clock: Optional[Clock] = None, memory=None, port: Optional[int] = None,
                 own_process: bool = False, children=None):
        """own_process: this service is the whole process, so it may tune the process-wide garbage collector.
        children: the actor classes the supervisor starts, when a test hands it its own."""
        self.cfg = cfg
        self.own_process = own_process
        try:
            self.runtime = Runtime(cfg, clock=clock, memory=memory, children=children)
        except FolderRefused as exc:   # held, unwritable, or not private: as a failed bind, one line, exit 1
            raise BindError(str(exc), cfg.server.host, cfg.server.port) from None
        self.bearer = cfg.server.resolve_bearer()
        self.front = Front(self.runtime)
        self.app = create_app(self.front, bearer=self.bearer)
        self.lazy_mcp = LazyMount(self.app, self.front, post_only=post_only,
                                  on_mounted=_freeze_startup_objects if own_process else lambda: None)
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
        host = self.cfg.server.host
        return f"http://{f'[{host}]' if ':' in host and not host.startswith('[') else host}:{self.port}"

    @property
    def mcp(self):
        """The mounted MCP endpoint (mounted now if no call has yet), or None without the [mcp] extra."""
        return self.lazy_mcp.wait()

    def start(self) -> "Service":
        # the socket first: a port that cannot be bound raises BindError before any actor or thread starts
        self.server = http_server.create(self.app, self.cfg.server, self._port, self.bearer)
        try:
            self.runtime.start()
            self.lazy_mcp.offer(preload=expects_mcp(self.cfg))
        except BaseException:
            http_server.discard(self.server)
            raise
        if self.own_process:
            _freeze_startup_objects(collect=False)     # no full collection on the way to the first answer
        return self

    def serve_forever(self) -> None:
        """Serve until a stop is asked for; a loop that dies raises ServerLoopDied after the actors stop."""
        try:
            http_server.serve(self.server, lambda: self._stopping)
        finally:
            self._wind_down(http_server.stop_threads)

    def stop_unserved(self) -> None:
        """A stop that came while start() ran (a signal before "ready on"): what it started stops, never served."""
        self._stopping = True
        self._wind_down(http_server.discard)

    def _wind_down(self, close) -> None:
        self.runtime.begin_stop()       # a loop that died: its actors must not wait on the model either
        close(self.server)
        self.lazy_mcp.stop()
        self.runtime.stop()
        self._stopped.set()
        log.info("stopped")

    def serve_in_thread(self) -> threading.Thread:
        t = threading.Thread(target=self.serve_forever, name="waitress-main", daemon=True)
        t.start()
        return t

    def request_stop(self, drain_seconds: float = STOP_DRAIN_SECONDS) -> None:
        """From any thread: abandon the model call in flight, close the listener, let in-flight requests finish."""
        with self._stop_lock:
            if self._stopping or self.server is None:
                return
            self._stopping = True
        self.runtime.begin_stop()
        http_server.drain(self.server, drain_seconds)

    def wait_stopped(self, timeout: float = 30.0) -> bool:
        return self._stopped.wait(timeout)


def expects_mcp(cfg: Config) -> bool:
    """An MCP client will call this service (--mcp, or a script ripple allowed `mcp__` tools): load /mcp early."""
    return cfg.server.mcp_preload or cfg.ripple.type == "script" and any("mcp__" in str(a) for a in cfg.ripple.command)


def _freeze_startup_objects(collect: bool = True) -> None:
    """Hide what start-up made (modules, pydantic models) from the collector: without this, decoding 10,000
    short-terms later paid for full collections over them, three times the decoding itself."""
    if collect:
        gc.collect()
    gc.freeze()
