"""systemd's notify protocol (sd_notify(3)), spoken directly: READY after the bind, WATCHDOG from the
supervisor's beat, STOPPING at the stop. Without $NOTIFY_SOCKET (not under a Type=notify unit) each call
is a no-op, so the service and its tests run the same everywhere.

The watchdog ping comes from the supervisor's own thread: a supervisor that hangs stops the pings, and
systemd (WatchdogSec=) restarts the service.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Optional

log = logging.getLogger(__name__)
_lock = threading.Lock()
_last_ping = 0.0


def notify(*fields: str) -> bool:
    """Send 'KEY=value' lines to systemd; True when sent. Never raises: a lost notification is logged."""
    addr = os.environ.get("NOTIFY_SOCKET", "")
    if not addr or not hasattr(socket, "AF_UNIX"):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.connect("\0" + addr[1:] if addr.startswith("@") else addr)      # '@': Linux's abstract namespace
            s.sendall("\n".join(fields).encode("utf-8"))
        return True
    except OSError as exc:
        log.warning("could not tell systemd %s: %s", fields[0] if fields else "", exc)
        return False


def watchdog_ping(now: Optional[float] = None) -> bool:
    """WATCHDOG=1, at most four times per interval systemd asks for ($WATCHDOG_USEC, for this process; none
    without it): a beat may come far more often."""
    global _last_ping
    usec, pid = os.environ.get("WATCHDOG_USEC", ""), os.environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) <= 0 or (pid and pid != str(os.getpid())):
        return False
    now = time.monotonic() if now is None else now
    with _lock:
        if now - _last_ping < int(usec) / 1e6 / 4:
            return False
        _last_ping = now
    return notify("WATCHDOG=1")
