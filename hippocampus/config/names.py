"""Settings that name what the service already has: server.mcp_mount must be a path no route answers (the
route and the MCP endpoint would shadow each other), notify.events and ripple.events name events it sends.
`problems(cfg)` puts each mistake right (the default mount; the unknown event left out) and says so."""
from __future__ import annotations

from typing import Any, Optional

# the HTTP app's routes (tests/unit/test_config_names.py holds them to http/app.py's)
ROUTES = ("/", "/health", "/status", "/sleep", "/events", "/history", "/queue", "/actors", "/actors/{name}/restart",
          "/voice", "/voice/history", "/replay", "/replay/{draft_id}", "/quality", "/tend", "/check", "/nudge",
          "/openapi.json", "/metrics", "/viewer")
MCP_MOUNT = "/mcp"


def route_at(path: str) -> Optional[str]:
    """The route that answers `path` ('/replay/{draft_id}' for '/replay/abc'), or None."""
    parts = path.split("/")
    for route in ROUTES:
        own = route.split("/")
        if len(own) == len(parts) and all(o == p or (o.startswith("{") and p) for o, p in zip(own, parts)):
            return route
    return None


def problems(cfg: Any) -> list:
    out = []
    server = cfg.server
    route = route_at(server.mcp_mount)
    if route:
        out.append(f"'server.mcp_mount' = {server.mcp_mount!r} is a path the service already answers ({route}): "
                   f"the route and the MCP endpoint would shadow each other; using the default {MCP_MOUNT!r}. "
                   f"Mount it on a path of its own, like /tools/mcp")
        server.mcp_mount = MCP_MOUNT
    return out
