"""Whether an address is SerenMemory's, by what it resolves to, never by how it is spelled.

Invariant: a host and port reach Memory when the port is Memory's and the host resolves (socket.getaddrinfo, as
a connection would) to an address Memory answers on. When Memory is on this host (loopback, unspecified, or one
of this host's own addresses) every address of this host counts: the whole loopback range 127.0.0.0/8 and ::1,
0.0.0.0 and ::, IPv4-mapped IPv6 (::ffff:127.0.0.1), this host's name and its addresses. So 127.1, 2130706433,
0x7f000001, 0177.0.0.1, 0, [::ffff:127.0.0.1] and the host's own name are all Memory's address. The replay asks
this at load (config) and again at connect, on the socket's own peer address (a DNS change cannot sneak by).
"""
from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import time
from typing import Optional, Union
from urllib.parse import urlsplit

from hippocampus.config import redact

CACHE_SECONDS = 60.0                # a name's addresses are looked up again after this long (the connect check
                                    # reads the socket's own peer, so a stale answer here never lets a call by)
_PROBES = (("192.0.2.1", socket.AF_INET), ("2001:db8::1", socket.AF_INET6))   # documentation nets: never sent to

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

_lock = threading.Lock()
_cache: dict = {}                   # (host, port) -> (monotonic, frozenset of addresses)


def address(text: str) -> Optional[Address]:
    """An address as one family has it: an IPv4-mapped IPv6 address is its IPv4 address; None for a name."""
    try:
        ip = ipaddress.ip_address(str(text).split("%", 1)[0])
    except ValueError:
        return None
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped or ip


def where(url: str) -> Optional[tuple]:
    """(host, port) of a URL (the scheme's port when none is given); None without a host or with a bad port."""
    try:
        parts = urlsplit(str(url).strip())
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    host = (parts.hostname or "").strip().lower()
    return (host, port) if host else None


def with_scheme(url: str) -> str:
    """The URL with http:// put in front when it has no scheme (localhost:7420 -> http://localhost:7420)."""
    u = url.strip()
    return u if "://" in u else "http://" + u.lstrip("/")


def host_or_port_missing(setting: str, url: str, example: str) -> str:
    """An http(s) URL's missing host (or one with a space), or a port no connection can use, in words that say how
    to write it; '' when it has both (or is not http(s) at all: the callers' own words say that)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:          # an unclosed [: the callers' words
        return ""
    if parts.scheme.lower() not in ("http", "https") or "[" in parts.netloc:
        return ""
    if not parts.hostname:
        return f"{setting} has no host: write it like {example}"
    if any(c.isspace() for c in parts.hostname):
        return f"{setting} {redact.url(url)} has a space in its host: write it like {example}"
    where_to = parts.netloc.rpartition("@")[2]      # host:port, past any user:password@
    port = where_to.rpartition(":")[2] if ":" in where_to else ""
    if port and not (port.isdigit() and 1 <= int(port) <= 65535):
        return (f"{setting} {redact.url(url)} is not a URL this service can call: its port {port} is not 1 to 65535; "
                f"write it like {example}")
    return ""


def resolve(host: str, port: int) -> frozenset:
    """Every address the host resolves to as a connection would resolve it (getaddrinfo); empty when it does not."""
    key = (host, port)
    now = time.monotonic()
    with _lock:
        hit = _cache.get(key)
    if hit is not None and now - hit[0] < CACHE_SECONDS:
        return hit[1]
    infos = []
    with contextlib.suppress(OSError, UnicodeError, ValueError):
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    found = frozenset(a for a in (address(info[4][0]) for info in infos) if a is not None)
    with _lock:
        _cache[key] = (now, found)
    return found


def addresses(host: str, port: int) -> frozenset:
    """What the host resolves to, and the host itself when it is an address literal."""
    literal = address(host)
    return resolve(host, port) | ({literal} if literal is not None else set())


def own_addresses() -> frozenset:
    """This host's own addresses: its name's, and the ones it would send from (a UDP socket sends nothing)."""
    found = set()
    with contextlib.suppress(OSError):
        found |= resolve(socket.gethostname(), 0)
    for probe, family in _PROBES:
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))
            found.add(address(s.getsockname()[0]))
    return frozenset(found - {None})


def this_host(ip, own: frozenset) -> bool:
    return ip.is_loopback or ip.is_unspecified or ip in own


class Memory:
    """Memory's address (memory.url), resolved when asked: is_memory(ip, port) says whether that is it."""

    def __init__(self, memory_url: str) -> None:
        self.url = memory_url
        self.at = where(memory_url)

    def is_memory(self, ip, port: int) -> bool:
        """The address (a string or an ip_address) and port are one Memory answers on."""
        return self._any([ip], port)

    def _any(self, ips, port: int) -> bool:
        """One of the addresses, at this port, is Memory's; when Memory is on this host, every address of it is."""
        if self.at is None or port != self.at[1]:
            return False
        own, mine = own_addresses(), addresses(*self.at)
        local = self.at[0] == "localhost" or any(this_host(ip, own) for ip in mine)
        return any(ip is not None and (ip in mine or (local and this_host(ip, own)))
                   for ip in (address(str(i)) for i in ips))

    def reached_by(self, url: str) -> bool:
        """The URL's host, resolved, is one of Memory's addresses at Memory's port."""
        at = where(url)
        return at is not None and self.at is not None and at[1] == self.at[1] and self._any(addresses(*at), at[1])
