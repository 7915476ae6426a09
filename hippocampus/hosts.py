"""Host names and origins this service answers to: shared by the HTTP guard and the MCP mount (neither
front-end imports the other)."""
from __future__ import annotations

from typing import Iterable, Optional

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def split_host(value: str) -> tuple[str, Optional[str]]:
    """'Box.LAN:7424' -> ('box.lan', '7424'); '[::1]:80' -> ('[::1]', '80'); a bare IPv6 gets brackets."""
    v = value.strip().lower()
    if v.startswith("["):
        name, _, rest = v.partition("]")
        return name + "]", (rest[1:] if rest.startswith(":") else None) or None
    if v.count(":") > 1:                        # an IPv6 literal without brackets (a bind address)
        return f"[{v}]", None
    name, sep, port = v.partition(":")
    return name.rstrip("."), (port or None) if sep else None


class HostList:
    """Host header values this service answers to."""

    def __init__(self, entries: Iterable[str]):
        self.any_port: set = set()
        self.exact: set = set()
        for raw in entries:
            raw = str(raw).strip()
            if not raw:
                continue
            name, port = split_host(raw)
            if port in (None, "*"):
                self.any_port.add(name)
            else:
                self.exact.add((name, port))

    def allows(self, host_header: str) -> bool:
        name, port = split_host(host_header)
        return name in self.any_port or (name, port) in self.exact

    def sdk_patterns(self) -> list:
        """The same list in the MCP SDK's spelling (exact values, or name:* for any port)."""
        out = []
        for name in sorted(self.any_port):
            out += [name, name + ":*"]
        return out + [f"{n}:{p}" for n, p in sorted(self.exact)]


def normal_origin(value: str) -> str:
    return str(value).strip().lower().rstrip("/")


def service_hosts(server_cfg, extra: Iterable[str] = ()) -> HostList:
    """Loopback, the configured host, server.allowed_hosts, and any extra entries."""
    return HostList([*LOOPBACK, server_cfg.host, *server_cfg.allowed_hosts, *extra])
