"""The SDK's streamable-HTTP transport inside the WSGI app: one asyncio loop on a daemon thread runs the session
manager (stateless, JSON answers); a2wsgi hands it each request on that loop, and a Falcon sink copies the answer
back, so Falcon's middleware (the bearer) covers it."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import Optional

import falcon
from a2wsgi import ASGIMiddleware

log = logging.getLogger(__name__)


# Hop-by-hop headers are the server's business (waitress refuses to be handed one); Falcon sets Content-Length.
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "trailers", "transfer-encoding", "upgrade", "content-length"}


class Bridge:

    def __init__(self, manager, name: str = "mcp-loop"):
        self.manager = manager
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.wsgi: Optional[ASGIMiddleware] = None      # made on the loop, before start() returns
        self._ready = threading.Event()
        self._stop: Optional[asyncio.Event] = None
        self._error: Optional[BaseException] = None
        self.running = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self, timeout: float = 10.0) -> "Bridge":
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"the MCP session manager did not start within {timeout:g} s")
        if self._error is not None:
            raise RuntimeError(f"the MCP session manager did not start: {self._error!r}") from self._error
        return self

    def _run(self) -> None:
        try:
            asyncio.run(self._main())       # at its end it cancels what is left (sse-starlette's watcher task)
        except BaseException as exc:  # noqa: BLE001 - reported to start() or logged
            self._error = exc
            log.exception("the MCP loop stopped with an error")
        finally:
            self.running = False
            self._ready.set()

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()            # set last: a _stop means a loop to set it on
        self.wsgi = ASGIMiddleware(self.manager.handle_request, loop=self.loop)
        async with self.manager.run():
            self.running = True
            self._ready.set()
            await self._stop.wait()

    def stop(self, timeout: float = 5.0) -> None:
        if not self._thread.is_alive():
            return
        if self._stop is not None and not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):         # the loop closed in between
                self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)


def call_wsgi(app, env: dict) -> tuple:
    """(status, headers, body) of one call; the answer is JSON, never an event stream, so it is read whole."""
    started = {"status": "500 Internal Server Error", "headers": []}

    def start_response(status, headers, exc_info=None):
        started.update(status=status, headers=headers)    # a second call (an error after the start) replaces it
        return lambda data: None     # the legacy write() callable; a2wsgi never uses it

    result = app(env, start_response)
    try:
        body = b"".join(result)
    finally:
        getattr(result, "close", lambda: None)()
    return started["status"], started["headers"], body


class WsgiSink:
    """A Falcon sink around the bridge: POST only (405 for GET, DELETE and the rest)."""

    def __init__(self, bridge: Bridge):
        self.bridge = bridge

    def __call__(self, req: falcon.Request, resp: falcon.Response, **kwargs) -> None:
        req.context.mcp_transport = True    # its request line at DEBUG: each tool call logs its own at INFO
        if req.method != "POST":
            # a GET would open an endless event stream pinning a waitress thread; stateless, there is none to send
            raise falcon.HTTPMethodNotAllowed(["POST"], description="this MCP endpoint takes POST only (stateless, "
                                                                    "JSON answers)")
        if not self.bridge.running:
            raise falcon.HTTPServiceUnavailable(description="the MCP endpoint is stopping")
        resp.status, headers, resp.data = call_wsgi(self.bridge.wsgi, req.env)
        for name, value in headers:
            if name.lower() == "content-type":
                resp.content_type = value
            elif name.lower() not in HOP_BY_HOP:
                resp.append_header(name, value)


WARM_UP = (     # one call of each kind a client's first session makes (the handshake era, then the 2026 one)
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "warm-up", "version": "1"}}},
     "2025-11-25"),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "2025-11-25"),
    ({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, "2025-11-25"),
    ({"jsonrpc": "2.0", "id": 3, "method": "server/discover"}, None),
)


def warm_up(bridge: Bridge, path: str) -> None:
    """Send the endpoint in-process the calls a client's first session makes, so the SDK builds its parsers now."""
    import io
    import json
    from wsgiref.util import setup_testing_defaults

    for body, version in WARM_UP:
        data = json.dumps(body).encode()
        env = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.multithread": True,
               "wsgi.input": io.BytesIO(data), "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": "application/json",
               "HTTP_ACCEPT": "application/json, text/event-stream", "REMOTE_ADDR": "127.0.0.1"}
        setup_testing_defaults(env)         # the rest of a WSGI environ, from 127.0.0.1
        if version:
            env["HTTP_MCP_PROTOCOL_VERSION"] = version
        try:
            log.debug("MCP warm-up %s: %s", body["method"], [call_wsgi(bridge.wsgi, env)[0]])
        except Exception:  # noqa: BLE001
            log.debug("the MCP warm-up call %s failed", body["method"], exc_info=True)
