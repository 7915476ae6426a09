"""Mount the MCP endpoint in the Falcon app: `mount_mcp(app, runtime)`.

Raises ImportError when the [mcp] extra is not installed, so the service runs
without it; `mount_mcp_fallback(app)` then makes /mcp say how to install it.

SEREN_HIPPOCAMPUS_MCP_MOUNT moves the endpoint (default /mcp; /mcp and /mcp/ both
answer). The SDK's DNS-rebinding Host check is off, behind the bearer, unless
SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS (a comma list, e.g. "127.0.0.1:*,box.lan:7424")
turns it on with those hosts.
"""
from __future__ import annotations

import logging
import os
import re
from typing import Mapping, Optional

import falcon

log = logging.getLogger("hippocampus.mcp")

MOUNT_ENV = "SEREN_HIPPOCAMPUS_MCP_MOUNT"
HOSTS_ENV = "SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS"
DEFAULT_MOUNT = "/mcp"
NOT_INSTALLED = "MCP is not installed: pip install 'seren-hippocampus[mcp]'"


def mount_path(environ: Optional[Mapping[str, str]] = None) -> str:
    """The mount path: a leading slash added, a trailing one stripped; /mcp when unset or empty."""
    env = os.environ if environ is None else environ
    raw = (env.get(MOUNT_ENV) or "").strip().strip("/")
    return "/" + raw if raw else DEFAULT_MOUNT


def path_pattern(path: str) -> "re.Pattern[str]":
    return re.compile("^" + re.escape(path) + "/?$")


def allowed_hosts(environ: Optional[Mapping[str, str]] = None) -> list:
    env = os.environ if environ is None else environ
    return [h.strip() for h in (env.get(HOSTS_ENV) or "").split(",") if h.strip()]


def security_settings(environ: Optional[Mapping[str, str]] = None):
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_hosts(environ)
    if not hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[])


class Mounted:
    """What Service keeps: the bridge (stopped at teardown), the server and its path."""

    def __init__(self, server, bridge, path: str):
        self.server, self.bridge, self.path = server, bridge, path

    def stop(self) -> None:
        self.bridge.stop()


def mount_mcp(app: falcon.App, runtime, *, environ: Optional[Mapping[str, str]] = None) -> Mounted:
    """Build the tools, start the loop thread, add the sink. ImportError without the [mcp] extra."""
    try:
        import a2wsgi  # noqa: F401
        import mcp.server  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{NOT_INSTALLED} ({exc})") from exc
    from .bridge import Bridge, WsgiSink
    from .tools import build_server

    path = mount_path(environ)
    server = build_server(runtime)
    server.streamable_http_app(stateless_http=True, json_response=True,
                               transport_security=security_settings(environ))
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
