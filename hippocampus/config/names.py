"""Settings that name what the service already has: server.mcp_mount must be a path no route answers (the
route and the MCP endpoint would shadow each other), notify.events and ripple.events name events it sends.
`problems(cfg)` puts each mistake right (the default mount; the unknown event left out) and says so."""
from __future__ import annotations

import difflib
from typing import Any, Optional

# the HTTP app's routes (tests/unit/test_config_names.py holds them to http/app.py's)
ROUTES = ("/", "/health", "/status", "/sleep", "/events", "/history", "/queue", "/actors", "/actors/{name}/restart",
          "/voice", "/voice/history", "/replay", "/replay/{draft_id}", "/quality", "/tend", "/check", "/nudge",
          "/openapi.json", "/metrics", "/viewer")
MCP_MOUNT = "/mcp"
# every event the service sends (the test holds them to the code's emits)
EVENTS = ("actor_crashed", "actor_failed", "actor_restarted", "brief_consumed", "brief_requested", "brief_unmatched",
          "catch_up", "chain_closed", "chain_ended", "draft_failed", "draft_submitted", "kept_for_next_sleep",
          "memory_back", "memory_down", "model_back", "model_down", "model_start_failed", "model_started",
          "model_stopped", "nudged", "operations_dropped", "purged", "redraft_failed", "restored",
          "sleep_budget_spent", "sleep_done", "sleep_failed", "sleep_interrupted", "tend_interrupted",
          "tend_resubmitted")


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
    for block in ("notify", "ripple"):
        settings = getattr(cfg, block)
        for name in [e for e in settings.events if e not in EVENTS]:
            near = difflib.get_close_matches(name, EVENTS, n=1, cutoff=0.75)
            out.append(f"'{block}.events' names {name!r}, which is not an event this service sends, so it would "
                       f"never fire; it is left out{' - did you mean ' + near[0] + '?' if near else '.'} "
                       f"The events are: {', '.join(EVENTS)}")
        settings.events = [e for e in settings.events if e in EVENTS]
    return out
