"""A loopback port for a test to put something on later.

A port found by binding port 0 and letting it go is one the OS may hand to the next bind(0) of any
server in the same run (CI once failed on it: "another process holds port 40575"). The ports here come
from below the OS's ephemeral range, which bind(0) never uses, and none is handed out twice in a run.
"""
from __future__ import annotations

import random
import socket
from pathlib import Path

_given: set[int] = set()


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768      # Linux's default; Windows' dynamic range starts higher still (49152)


def free_port() -> int:
    high = _ephemeral_start()
    low = max(1024, high - 12000)
    for _ in range(500):
        port = random.randrange(low, high)
        if port in _given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _given.add(port)
        return port
    raise RuntimeError(f"no free loopback port between {low} and {high}")
