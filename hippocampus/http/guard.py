"""The guard, as Falcon middleware that never reads the body: a Host not this service's is 421 against DNS
rebinding; a change whose Origin is not its own, or that says Sec-Fetch-Site: cross-site, is 403; CORS only for
server.allowed_origins."""
from __future__ import annotations

from typing import Optional

import falcon

from hippocampus.config.hosts import normal_origin, parse_host_header, service_hosts
from hippocampus.http.auth import READS

CORS_METHODS = "GET, HEAD, POST, PUT, DELETE, OPTIONS"
CORS_HEADERS = "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID"
MCP_POST_ONLY = "this MCP endpoint takes POST only (stateless, JSON answers)"


def post_only() -> None:
    """What the MCP endpoint says to anything but a POST (405, Allow: POST): answered here, it needs no SDK."""
    raise falcon.HTTPMethodNotAllowed(["POST"], description=MCP_POST_ONLY)


class Guard:
    """Host allow-list, Origin check and CORS for every route (the MCP sink included)."""

    def __init__(self, server_cfg, *, bearer: str = ""):
        self.hosts = service_hosts(server_cfg)
        self.enforce_hosts = not bearer or bool(server_cfg.allowed_hosts)
        self.cors = {normal_origin(o) for o in server_cfg.allowed_origins if normal_origin(o)}
        self.mcp_path = server_cfg.mcp_mount
        mcp_hosts, mcp_origins = server_cfg.mcp_allowed_hosts, list(map(normal_origin, server_cfg.mcp_allowed_origins))
        self.mcp_hosts = service_hosts(server_cfg, mcp_hosts)
        self.mcp_enforce = self.enforce_hosts or bool(mcp_hosts or mcp_origins)
        self.mcp_origins = self.cors | {o for o in mcp_origins if o}

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        mcp = req.path.rstrip("/") == self.mcp_path
        host = req.get_header("Host")
        hosts, enforce = (self.mcp_hosts, self.mcp_enforce) if mcp else (self.hosts, self.enforce_hosts)
        # No Host is not a browser: nothing to rebind. A Host that is not one name or address with an optional
        # port is refused even where the list is not enforced: the name it compares may not be the one it means.
        if host is not None and parse_host_header(host) is None:
            raise falcon.HTTPError(falcon.HTTP_421, description=(
                f"the Host header {host!r} is not one host name or address with an optional :port (no user "
                f"part, no second colon outside [brackets], one Host header); send the host this service "
                f"was reached at"))
        if enforce and host is not None and not hosts.allows(host):
            raise falcon.HTTPError(falcon.HTTP_421, description=(
                f"this service does not answer to the host {host!r}; an operator can add it to "
                f"server.allowed_hosts"))
        origin = req.get_header("Origin")
        preflight = req.method == "OPTIONS" and origin and req.get_header("Access-Control-Request-Method")
        if preflight and normal_origin(origin) in self.cors:
            resp.status = falcon.HTTP_204
            resp.set_headers({"Access-Control-Allow-Methods": CORS_METHODS,
                              "Access-Control-Allow-Headers": CORS_HEADERS, "Access-Control-Max-Age": "600"})
            resp.complete = True
            return
        if mcp and req.method == "OPTIONS":         # answered here: an OPTIONS never loads the MCP SDK
            post_only()
        if req.method in READS:
            return
        self._check_origin(origin, req.get_header("Sec-Fetch-Site"), host,
                           self.mcp_origins if mcp else self.cors)

    @staticmethod
    def _check_origin(origin: Optional[str], fetch_site: Optional[str], host: Optional[str], allowed: set) -> None:
        if origin and normal_origin(origin) in allowed:
            return
        if (fetch_site or "").strip().lower() == "cross-site":
            raise falcon.HTTPForbidden(description=(
                "a page on another site may not change anything here (Sec-Fetch-Site: cross-site)"))
        if not origin:
            return
        own = {normal_origin(f"http://{host}"), normal_origin(f"https://{host}")} if host else set()
        if normal_origin(origin) not in own:
            raise falcon.HTTPForbidden(description=(
                f"the Origin {origin!r} is not this service's own: a page on another site may not change "
                f"anything here (server.allowed_origins names the origins that may)"))

    def process_response(self, req, resp, resource, req_succeeded) -> None:
        origin = req.get_header("Origin")
        if origin and normal_origin(origin) in self.cors:
            resp.set_header("Access-Control-Allow-Origin", origin.strip().rstrip("/"))
            resp.append_header("Vary", "Origin")
