"""Mount the MCP endpoint in the Falcon app: `mount_mcp(app, runtime)`.

Raises ImportError when the [mcp] extra is not installed, so the service runs
without it; `mount_mcp_fallback(app)` then makes /mcp say how to install it.

SEREN_HIPPOCAMPUS_MCP_MOUNT moves the endpoint (default /mcp; /mcp and /mcp/ both
answer). The service's own Host and Origin guard (the HTTP front-end's) covers /mcp
like every route. SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS (a comma list, e.g.
"box.lan:7424,other.lan:*") or SEREN_HIPPOCAMPUS_MCP_ALLOWED_ORIGINS (e.g.
"http://box.lan:7424") also turns the SDK's own DNS-rebinding check on, fed the same
list the guard uses: loopback, server.host, server.allowed_hosts, and these hosts;
the origins default to http:// and https:// of each of those hosts.
"""
from __future__ import annotations

import logging
from typing import Mapping, Optional

import falcon

from hippocampus.config.mcp_env import (DEFAULT_MOUNT, HOSTS_ENV, MOUNT_ENV, ORIGINS_ENV, allowed_hosts,  # noqa: F401
                                 allowed_origins, mount_path, path_pattern)

log = logging.getLogger("hippocampus.mcp")

NOT_INSTALLED = "MCP is not installed: pip install 'seren-hippocampus[mcp]'"


def security_settings(server_cfg, environ: Optional[Mapping[str, str]] = None):
    """The SDK's check: off unless either env list is set; then fed the guard's list (loopback included)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from hippocampus.config.hosts import normal_origin, service_hosts

    hosts, origins = allowed_hosts(environ), allowed_origins(environ)
    if not hosts and not origins:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    patterns = service_hosts(server_cfg, hosts).sdk_patterns()
    if not origins:
        origins = [f"{scheme}://{h}" for h in patterns for scheme in ("http", "https")]
    origins = [*origins, *server_cfg.allowed_origins]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=patterns,
                                     allowed_origins=sorted({normal_origin(o) for o in origins if o.strip()}))


class Mounted:
    """What Service keeps: the bridge (stopped at teardown), the server and its path."""

    def __init__(self, server, bridge, path: str):
        self.server, self.bridge, self.path = server, bridge, path

    def stop(self) -> None:
        self.bridge.stop()


def mount_mcp(app: falcon.App, front, *, environ: Optional[Mapping[str, str]] = None) -> Mounted:
    """Build the tools, start the loop thread, add the sink. ImportError without the [mcp] extra."""
    try:
        import a2wsgi  # noqa: F401
        import mcp.server  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{NOT_INSTALLED} ({exc})") from exc
    from hippocampus.mcp.bridge import Bridge, WsgiSink
    from hippocampus.mcp.tools import build_server

    path = mount_path(environ)
    server = build_server(front)
    server.streamable_http_app(stateless_http=True, json_response=True,
                               transport_security=security_settings(front.config().server, environ))
    bridge = Bridge(server.session_manager).start()
    app.add_sink(WsgiSink(bridge), path_pattern(path))
    log.info("MCP tools at %s", path)
    return Mounted(server, bridge, path)


class NotInstalled:
    def __call__(self, req: falcon.Request, resp: falcon.Response, **kwargs) -> None:
        raise falcon.HTTPNotFound(description=NOT_INSTALLED)


def mount_mcp_fallback(app: falcon.App, *, environ: Optional[Mapping[str, str]] = None) -> None:
    """Without the [mcp] extra: /mcp answers 404 naming the extra, rather than a bare not-found."""
    app.add_sink(NotInstalled(), path_pattern(mount_path(environ)))
