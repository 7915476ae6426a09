"""Mount the MCP endpoint in the Falcon app: `mount_mcp(app, front)`, or on the first call: `LazyMount`.

server.mcp_mount moves it (default /mcp). The HTTP guard covers it like every route; either
server.mcp_allowed_hosts or server.mcp_allowed_origins also turns the SDK's DNS-rebinding check on.
"""
from __future__ import annotations

import logging
import threading
import time

import falcon

from hippocampus.config.hosts import normal_origin, path_pattern, service_hosts

log = logging.getLogger(__name__)

NOT_INSTALLED = "MCP is not installed: pip install 'seren-hippocampus[mcp]'"
PRELOAD_AFTER_SECONDS = 2.0     # a preload starts this long after the start if nothing asked for /health


def security_settings(TransportSecuritySettings, server_cfg):
    """The SDK's check: off unless either MCP list is set; then fed the guard's list (loopback included)."""
    hosts, origins = server_cfg.mcp_allowed_hosts, list(server_cfg.mcp_allowed_origins)
    if not hosts and not origins:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    patterns = service_hosts(server_cfg, hosts).sdk_patterns()
    own = [f"{scheme}://{h}" for h in patterns for scheme in ("http", "https")]    # when no MCP origin is listed
    origins = [*(origins or own), *server_cfg.allowed_origins]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=patterns,
                                     allowed_origins=sorted({normal_origin(o) for o in origins if o.strip()}))


def mount_mcp(app: falcon.App, front):
    """The tools, served and warmed up at /mcp: the Bridge (stopped at teardown); ImportError without the extra."""
    from hippocampus.mcp import sdk

    try:
        loaded = sdk.load()
    except ImportError as exc:
        raise ImportError(f"{NOT_INSTALLED} ({exc})") from exc
    from hippocampus.mcp.bridge import Bridge, WsgiSink, warm_up
    from hippocampus.mcp.server import build_server

    path = front.config().server.mcp_mount
    manager = loaded.StreamableHTTPSessionManager(
        app=build_server(front, loaded), stateless=True, json_response=True,
        security_settings=security_settings(loaded.TransportSecuritySettings, front.config().server))
    bridge = Bridge(manager).start()
    warm_up(bridge, path)
    app.add_sink(WsgiSink(bridge), path_pattern(path))
    log.info("MCP tools at %s", path)
    return bridge


def not_installed(req: falcon.Request, resp: falcon.Response, **kwargs) -> None:
    raise falcon.HTTPNotFound(description=NOT_INSTALLED)


class LazyMount:
    """/mcp mounted off the start path: the SDK (about 23 MB and half a second) is imported on the first POST,
    or in the background after the first answer (`offer(preload=True)`). A stop never waits out a slow import
    (SIGTERM must exit in seconds): a mount that ends after the stop stops its own bridge."""

    def __init__(self, app: falcon.App, front, *, post_only, on_mounted=lambda: None):
        self.app, self.front, self.post_only, self.on_mounted = app, front, post_only, on_mounted
        self.path = path_pattern(front.config().server.mcp_mount)
        self.mounted = None
        self.failed = ""                        # why a mount with the SDK there failed (the log has the rest)
        self.started = False
        self._done = threading.Event()
        self._answered = threading.Event()      # the service answered its first request (set by preload's middleware)
        self._lock = threading.Lock()
        self._stopped = False

    def offer(self, preload: bool = False, at_most: float = PRELOAD_AFTER_SECONDS) -> None:
        """Add /mcp; preload: mount once the service has answered its first request (or after `at_most` s)."""
        self.app.add_sink(self._while_mounting, self.path)
        if preload:
            self.app.add_middleware(self)           # process_response: the first answer starts the preload
            threading.Thread(target=self._preload, args=(at_most,), name="mcp-preload", daemon=True).start()

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        self._answered.set()

    def _preload(self, at_most: float) -> None:
        self._answered.wait(at_most)
        t0 = time.monotonic()
        if self.wait() is not None:
            log.info("MCP endpoint loaded ahead of the first call in %.2f s", time.monotonic() - t0)

    def wait(self):
        """The mounted endpoint (mounted now if no call has yet), or None without the [mcp] extra."""
        with self._lock:
            begin = not (self.started or self._done.is_set() or self._stopped)
            self.started = self.started or begin      # stopped before any call: stop() has set _done
        if begin:
            threading.Thread(target=self._mount, name="mcp-mount", daemon=True).start()
        self._done.wait(120)
        return self.mounted

    def _mount(self) -> None:
        try:
            self.mounted = mount_mcp(self.app, self.front)
        except ImportError as exc:
            log.info("no MCP endpoint: %s", exc)
            self.app.add_sink(not_installed, self.path)     # /mcp says how to install it
        except Exception as exc:  # noqa: BLE001 - the service runs on without /mcp
            self.failed = str(exc) or type(exc).__name__
            log.exception("the MCP endpoint could not be mounted")
        finally:
            self.on_mounted()
            with self._lock:
                self._done.set()
                late = self._stopped
            if late and self.mounted is not None:   # the service stopped while this was importing
                self.mounted.stop()

    def stop(self) -> None:
        if self.started:
            self._done.wait(1.0)
        with self._lock:
            self._stopped = True
            if not self.started:
                self._done.set()                # never called: nothing was mounted
            mounted = self.mounted if self._done.is_set() else None
        if mounted is not None:
            mounted.stop()

    def _while_mounting(self, req: falcon.Request, resp: falcon.Response, **kwargs) -> None:
        """/mcp until mounted: a POST starts the mount, waits for it, and is answered by the mounted endpoint."""
        if req.method != "POST":
            self.post_only()                    # raises the 405
        mounted = self.wait()
        if mounted is None and self.failed:
            raise falcon.HTTPServiceUnavailable(description=(
                f"the MCP endpoint could not be started ({self.failed}); the service log has the details, and a "
                "restart of the service tries again"))
        if mounted is None:
            not_installed(req, resp)
        from hippocampus.mcp.bridge import WsgiSink

        WsgiSink(mounted)(req, resp)
