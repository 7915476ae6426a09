"""Test-only time and process helpers (they were in the product, which never used them)."""
from __future__ import annotations

import threading
from typing import Optional

import psutil

from hippocampus.clock import Clock


class FakeClock(Clock):
    """A clock a test sets and advances by hand."""

    def __init__(self, start: float = 1_767_225_600.0):  # 2026-01-01 00:00 UTC
        self._t = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._t

    def set(self, t: float) -> None:
        with self._lock:
            self._t = float(t)

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._t += seconds
            return self._t


def pid_alive(pid: Optional[int]) -> bool:
    """Is a process with this pid running (a zombie is gone for our purposes)?"""
    if not pid:
        return False
    try:
        p = psutil.Process(int(pid))
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True
