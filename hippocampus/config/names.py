"""Settings that name what the service already has: server.mcp_mount must be a path no route answers (the
route and the MCP endpoint would shadow each other), notify.events, ripple.events and ripple.messages' keys name
events it sends. `problems(cfg)` puts each mistake right (the default mount; the unknown name left out), says so."""
from __future__ import annotations

import difflib
import re
from typing import Any, Optional

# the HTTP app's routes (tests/unit/test_config_names.py holds them to http/app.py's)
ROUTES = ("/", "/health", "/status", "/sleep", "/events", "/history", "/queue", "/actors", "/actors/{name}/restart",
          "/voice", "/voice/history", "/replay", "/replay/{draft_id}", "/quality", "/tend", "/check", "/nudge",
          "/openapi.json", "/metrics", "/viewer")
MCP_MOUNT = "/mcp"
_PATH = re.compile(r"(/[A-Za-z0-9._~-]+)+")         # a mount a client's URL can name as it is written
TERMINAL = ("draft_submitted_terminal", "tend_resubmitted_terminal")   # ripple.messages' keys: a last attempt's
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
    if not _PATH.fullmatch(server.mcp_mount):
        out.append(f"'server.mcp_mount' = {server.mcp_mount!r} is not a URL path (letters, digits, - . _ ~ and /, "
                   f"like /tools/mcp; no scheme, host, query or space); using the default {MCP_MOUNT!r}")
        server.mcp_mount = MCP_MOUNT
    route = route_at(server.mcp_mount)
    if route:
        out.append(f"'server.mcp_mount' = {server.mcp_mount!r} is a path the service already answers ({route}): "
                   f"the route and the MCP endpoint would shadow each other; using the default {MCP_MOUNT!r}. "
                   f"Mount it on a path of its own, like /tools/mcp")
        server.mcp_mount = MCP_MOUNT
    for block in ("notify", "ripple"):
        settings = getattr(cfg, block)
        out += [_unknown(f"'{block}.events' names {e!r}", "fire", e) for e in settings.events if e not in EVENTS]
        settings.events = [e for e in settings.events if e in EVENTS]
    messages = cfg.ripple.messages
    unknown = [k for k in messages if k not in (*EVENTS, *TERMINAL)]
    out += [_unknown(f"'ripple.messages' has a message for {k!r}", "be used", str(k), f" (and {' and '.join(TERMINAL)}"
                     ", a last attempt's)") for k in unknown]
    cfg.ripple.messages = {k: v for k, v in messages.items() if k not in unknown}
    return out


def _unknown(named: str, would: str, name: str, more: str = "") -> str:
    return (f"{named}, which is not an event this service sends, so it would never {would}; it is left out"
            f"{_meant(name)} The events are: {', '.join(EVENTS)}{more}")


def not_an_event(name: str) -> str:
    """A filter's words for a type no event has (GET /events?type=, recent_events)."""
    return f"{name!r} is not an event this service sends{_meant(name)} The events are: {', '.join(EVENTS)}"


def _meant(name: str) -> str:
    near = difflib.get_close_matches(name, EVENTS, n=1, cutoff=0.75)
    return f" - did you mean {near[0]}?" if near else "."
