"""What the wake-up checks look at (accounts, PATH, sessions, HTTP), injectable as a `Probe` so that each
check can be tested in a made-up world, and the `Line` each check says."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from hippocampus import outbound
from hippocampus.ripple import claude as claude_setup

CHECK_TIMEOUT = 5.0
JSON_READ = 64 * 1024      # a server's /health says what it is in far less


@dataclass
class Line:
    check: str
    ok: bool
    text: str

    def render(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.check}: {self.text}"


def _http_get(url: str, headers: dict, timeout: float) -> int:
    """GET url within one deadline of `timeout` s: its status (the body is never read)."""
    return outbound.request("GET", url, seconds=timeout, cap=0, headers=headers, allow_redirects=False).status_code


def _http_json(url: str, timeout: float) -> tuple:
    """GET url within one deadline of `timeout` s, its answer read up to JSON_READ: (status, its JSON body, or None
    when it is not JSON)."""
    r = outbound.request("GET", url, seconds=timeout, cap=JSON_READ, allow_redirects=False)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, None


def _account_exists(user: str) -> Optional[bool]:
    return windows_account_exists(user) if os.name == "nt" else claude_setup.home_of(user) is not None


def _sudo_allows(user: str, exe: str) -> Optional[bool]:
    """Would `sudo -n -u user exe` run without a password? (`sudo -l` asks without running it.)"""
    try:
        r = subprocess.run(["sudo", "-n", "-l", "-u", user, exe], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=CHECK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def _no_new_privs() -> bool:
    """Does this process run with no_new_privs (systemd's NoNewPrivileges=true)? Then sudo gains nothing."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            return any(line.split() == ["NoNewPrivs:", "1"] for line in f)
    except OSError:
        return False


def windows_account_exists(user: str) -> Optional[bool]:  # pragma: no cover - Windows only
    """Is `user` an account this box knows (LookupAccountNameW)? None when it cannot be asked."""
    try:
        import ctypes
        from ctypes import wintypes as w

        sid_size, dom_size, use = w.DWORD(0), w.DWORD(0), w.DWORD(0)
        ctypes.windll.advapi32.LookupAccountNameW(None, user, None, ctypes.byref(sid_size), None,
                                                  ctypes.byref(dom_size), ctypes.byref(use))
        return sid_size.value > 0
    except Exception:  # noqa: BLE001 - a thin probe: unknown, not an error
        return None


def windows_logged_on(user: str) -> Optional[bool]:  # pragma: no cover - Windows only
    """Does `user` have a session on this box (the one a LocalSystem service borrows)? None: cannot ask."""
    try:
        import ctypes
        from ctypes import wintypes as w

        wtsapi = ctypes.windll.wtsapi32

        class SESSION_INFO(ctypes.Structure):
            _fields_ = [("SessionId", w.DWORD), ("pWinStationName", w.LPWSTR), ("State", ctypes.c_int)]

        sessions, count = ctypes.POINTER(SESSION_INFO)(), w.DWORD()
        if not wtsapi.WTSEnumerateSessionsW(None, 0, 1, ctypes.byref(sessions), ctypes.byref(count)):
            return None
        try:
            for i in range(count.value):
                buf, n = w.LPWSTR(), w.DWORD()
                if wtsapi.WTSQuerySessionInformationW(None, sessions[i].SessionId, 5, ctypes.byref(buf),
                                                      ctypes.byref(n)):
                    name = buf.value or ""
                    wtsapi.WTSFreeMemory(buf)
                    if name and claude_setup.bare(name) == claude_setup.bare(user):
                        return True
        finally:
            wtsapi.WTSFreeMemory(sessions)
        return False
    except Exception:  # noqa: BLE001 - a thin probe: unknown, not an error
        return None


@dataclass
class Probe:
    """Everything the checks look at outside the config."""
    whoami: Callable[[], tuple] = claude_setup.whoami
    environ: Mapping = field(default_factory=lambda: os.environ)
    platform: str = sys.platform
    cwd: Callable[[], str] = os.getcwd
    home_of: Callable[[str], Optional[str]] = claude_setup.home_of
    account_exists: Callable[[str], Optional[bool]] = _account_exists
    logged_on: Callable[[str], Optional[bool]] = windows_logged_on      # a Windows session
    sudo_allows: Callable[[str, str], Optional[bool]] = _sudo_allows
    no_new_privs: Callable[[], bool] = _no_new_privs
    http_get: Callable[[str, dict, float], int] = _http_get
    http_json: Callable[[str, float], tuple] = _http_json            # what an MCP server's host says it is

