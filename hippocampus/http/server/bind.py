"""The listening socket's failures: BindError, one line naming host and port, the cause and the way out (the
process holding the port and a free port near it, no permission, an address not this machine's, a bad name)."""
from __future__ import annotations

import errno
import socket
from typing import Optional

from waitress import wasyncore

# POSIX errno, and Winsock's numbers for the same (a socket error on Windows carries those).
IN_USE = {errno.EADDRINUSE, 10048}
NO_PERMISSION = {errno.EACCES, errno.EPERM, 10013}
NOT_HERE = {errno.EADDRNOTAVAIL, 10049}
NEARBY = 20                     # how many ports after the held one are tried for a suggestion


class BindError(OSError):
    """str() is the one line for the person. An OSError, as the failed bind was (the demo catches that)."""

    def __init__(self, line: str, host: str, port: int):
        super().__init__(line)
        self.host, self.port = host, port


def release(socket_map: dict) -> None:
    """Stop waitress's request threads and close every socket of a server that will never run."""
    for obj in list(socket_map.values()):
        if (dispatcher := getattr(obj, "task_dispatcher", None)) is not None:
            dispatcher.shutdown(timeout=2)
            break                        # one dispatcher serves every listener
    wasyncore.close_all(socket_map)


def explain(host: str, port: int, exc: Exception) -> str:
    where = f"{host}:{port}"
    codes = {getattr(exc, "errno", None), getattr(exc, "winerror", None)} - {None}
    if codes & IN_USE:
        free = free_port_near(host, port)
        pick = f"set server.port to a free one ({free} is free now)" if free else "set server.port to a free one"
        who = holder(port)
        return (f"cannot listen on {where}: another process holds port {port}{f' ({who})' if who else ''}. "
                f"Stop that process, or {pick}, or server.port: 0 for any free port (the start-up line names it).")
    if codes & NO_PERMISSION:
        return (f"cannot listen on {where}: no permission to use port {port} (ports below 1024 need root "
                f"or a capability, and some ports are reserved). Set server.port to one above 1023, e.g. "
                f"7424, or server.port: 0 for any free port.")
    if codes & NOT_HERE:
        return (f"cannot listen on {where}: {host} is not an address of this machine. Set server.host to "
                f"127.0.0.1 (this box only) or to one of this machine's own addresses.")
    if isinstance(exc, (socket.gaierror, ValueError)):
        return (f"cannot listen on {where}: {host!r} is not a host name or address this machine can resolve. "
                f"Set server.host to 127.0.0.1 (this box only) or to one of this machine's own addresses.")
    why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"cannot listen on {where}: {why}. Check server.host and server.port, or set server.port: 0."


def holder(port: int) -> str:
    """Who listens on `port`, when the OS says: "pid 1234, llama-server"; else empty."""
    try:
        import psutil

        conns = psutil.net_connections(kind="tcp")
    except Exception:  # noqa: BLE001 - not allowed to look, or no psutil: say nothing
        return ""
    pids = sorted({c.pid for c in conns if c.pid and c.status == psutil.CONN_LISTEN and c.laddr
                   and c.laddr.port == port})
    named = []
    for pid in pids[:3]:
        try:
            named.append(f"pid {pid}, {psutil.Process(pid).name()}")
        except Exception:  # noqa: BLE001 - gone meanwhile, or not ours to name
            named.append(f"pid {pid}")
    return "; ".join(named)


def free_port_near(host: str, port: int, tries: int = NEARBY) -> Optional[int]:
    """The first port after `port` that this host can bind now (a suggestion, not a reservation)."""
    if not port:
        return None
    for candidate in range(port + 1, min(port + 1 + tries, 65536)):
        try:
            infos = socket.getaddrinfo(host, candidate, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP,
                                       socket.AI_PASSIVE)
        except OSError:
            return None
        family, socktype, proto, _, addr = infos[0]
        try:
            with socket.socket(family, socktype, proto) as s:
                if hasattr(socket, "SO_EXCLUSIVEADDRUSE"):      # Windows: no sharing with a listener
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
                s.bind(addr)
        except OSError:
            continue
        return candidate
    return None
