"""Host names and origins this service answers to: shared by the HTTP guard and the MCP mount (neither imports the
other). Where the MCP endpoint lives and its extra hosts and origins are settings (server.mcp_*)."""
from __future__ import annotations

import ipaddress
import re
from typing import Iterable, Optional

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?")     # a DNS name or an IPv4 address
_PORT = re.compile(r"[0-9]{0,5}")


def parse_host_header(value: str) -> Optional[tuple[str, Optional[str]]]:
    """A Host header as RFC 9110 7.2 has it (uri-host [":" port]), split like split_host; None for anything
    else (a user part, a space or a comma: two Host headers arrive joined as 'a, b')."""
    v = value.strip().lower()
    if v.startswith("["):
        inside, close, rest = v[1:].partition("]")
        try:
            ipaddress.IPv6Address(inside)
        except ValueError:
            return None
        if not close or (rest and not rest.startswith(":")):
            return None
        name, port = f"[{inside}]", rest[1:] if rest else None
    else:
        name, sep, port = v.partition(":")
        if not _NAME.fullmatch(name):
            return None
        name, port = name.rstrip("."), port if sep else None
    if port is not None and not _PORT.fullmatch(port):
        return None
    return name, port or None


def bind_host_ok(value: str) -> bool:
    """server.host as the socket takes it: an address (IPv6 without brackets) or a name; blank is the default."""
    try:
        return not value.strip() or bool(ipaddress.ip_address(value))
    except ValueError:
        return bool(_NAME.fullmatch(value.lower()))


def split_host(value: str) -> tuple[str, Optional[str]]:
    """'Box.LAN:7424' -> ('box.lan', '7424'); '[::1]:80' -> ('[::1]', '80'); a bare IPv6 gets brackets; an
    origin or URL written for a host ('http://box.lan:7424/') is its host and port."""
    v = value.strip().lower()
    if "://" in v:
        v = v.split("://", 1)[1].split("/", 1)[0]
    if v.startswith("["):
        name, _, rest = v.partition("]")
        return name + "]", (rest[1:] if rest.startswith(":") else None) or None
    if v.count(":") > 1:                        # an IPv6 literal without brackets (a bind address)
        return f"[{v}]", None
    name, sep, port = v.partition(":")
    return name.rstrip("."), (port or None) if sep else None


class HostList:
    def __init__(self, entries: Iterable[str]):
        pairs = [split_host(str(raw)) for raw in entries if str(raw).strip()]
        self.any_port = {name for name, port in pairs if port in (None, "*")}
        self.exact = {(name, port) for name, port in pairs if port not in (None, "*")}

    def allows(self, host_header: str) -> bool:
        parsed = parse_host_header(host_header)
        if parsed is None:
            return False
        name, port = parsed
        return name in self.any_port or (name, port) in self.exact

    def sdk_patterns(self) -> list:
        """The same list in the MCP SDK's spelling (exact values, or name:* for any port)."""
        return ([spelled for name in sorted(self.any_port) for spelled in (name, name + ":*")]
                + [f"{n}:{p}" for n, p in sorted(self.exact)])


def normal_origin(value: str) -> str:
    """An origin as a browser sends it: lower case, no trailing /, no port that is its scheme's own."""
    v = str(value).strip().lower().rstrip("/")
    for scheme, port in (("http://", ":80"), ("https://", ":443")):
        if v.startswith(scheme) and v.endswith(port):
            return v[:-len(port)]
    return v


_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/?#\s@]+")      # scheme://host[:port], as a browser sends it


def entry_problems(server_cfg) -> list:
    """An origin no browser sends (no scheme, a path), or a host no Host header names (a wildcard, a space), would
    never match: left out of its list, and said."""
    out = []
    for key, fits, what in (("allowed_origins", _origin_ok, ORIGIN_IS), ("mcp_allowed_origins", _origin_ok, ORIGIN_IS),
                            ("allowed_hosts", _host_ok, HOST_IS), ("mcp_allowed_hosts", _host_ok, HOST_IS)):
        given = getattr(server_cfg, key)
        bad = [o for o in given if not fits(str(o))]
        out += [f"'server.{key}' has {o!r}, which is {what}; it is left out" for o in bad]
        setattr(server_cfg, key, [o for o in given if o not in bad])
    return out


ORIGIN_IS = ("not an origin as a browser sends it (scheme://host[:port], no path, like http://dash.lan:3000), so no "
             "page would ever match it")
HOST_IS = ("not a host name or address with an optional :port (or :*), so no request's Host would ever match it "
           "(each name is listed whole: no wildcards)")


def _origin_ok(value: str) -> bool:
    return bool(_ORIGIN.fullmatch(normal_origin(value)))


def _host_ok(value: str) -> bool:
    name, port = split_host(value)
    return parse_host_header(name) is not None and (port in (None, "*") or bool(_PORT.fullmatch(port)))


def service_hosts(server_cfg, extra: Iterable[str] = ()) -> HostList:
    """Loopback, the configured host, server.allowed_hosts, and any extra entries."""
    return HostList([*LOOPBACK, server_cfg.host, *server_cfg.allowed_hosts, *extra])


def path_pattern(path: str) -> "re.Pattern[str]":
    return re.compile("^" + re.escape(path) + "/?$")
