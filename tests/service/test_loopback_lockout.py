"""Eight loopback addresses cannot lock everyone out (issue 38, item 1).

The attack, from outside on loopback: 8 × 50 connections, out of 127.0.0.2 … 127.0.0.9 (50 each), each
sending an unfinished request head one byte a second and opened again as soon as the server closes it. Before,
each address was its own client with a share of 240, so no address came near its share while together they
filled the connection limit of 400, and `GET /status` from a new client with the bearer waited in the kernel's
queue behind them (most calls timed out at 2 s). Now the whole loopback range is one client (its oldest waiting
connection makes room for its newest), and at the connection limit the longest-idle connection with nothing
being served makes room whatever its address: every authenticated /status answers within 2 s for 25 s.
The attacker runs in a process of its own, as it would (tests/harness/head_trickle.py says why).
"""
from __future__ import annotations

import time

import pytest
import requests

from tests.harness.head_trickle import HeadTrickleProcess
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.timeout(180)
TOKEN = "loopback-lockout-bearer"
SOURCES = [f"127.0.0.{i}" for i in range(2, 10)]


def held_by_server(svc) -> int:
    """The attackers' connections the server holds open now."""
    return sum(1 for ch in list(svc.server.active_channels.values()) if ch.addr and ch.addr[0] in SOURCES)


def authenticated_status(url: str) -> tuple:
    """(seconds, status code) of GET /status with the bearer from a new connection; (None, error) past 2 s."""
    t0 = time.monotonic()
    try:
        r = requests.get(url + "/status", timeout=2, headers={"Authorization": f"Bearer {TOKEN}",
                                                              "Connection": "close"})
    except requests.RequestException as exc:
        return None, type(exc).__name__
    return time.monotonic() - t0, r.status_code


def run_attack(svc, per_source: int, seconds: float, held_at_least: int) -> list:
    attack = HeadTrickleProcess(svc.port, SOURCES, per_source, lasts=seconds + 30)
    try:
        wait_for(lambda: attack.counts["bytes_sent"] >= attack.counts["slots"], timeout=20,
                 what="every attacker under way")
        calls, held = [], []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            calls.append(authenticated_status(svc.url))
            held.append(held_by_server(svc))
            time.sleep(0.5)
        print(f"{len(calls)} authenticated /status calls during {seconds:g} s of {len(SOURCES)} x {per_source} "
              f"slow heads ({attack.counts['opened']} opened, {attack.counts['closed']} closed, up to {max(held)} held by the server): "
              f"{sum(1 for t, _ in calls if t is None)} timed out; slowest answered "
              f"{max((t for t, _ in calls if t is not None), default=0) * 1000:.0f} ms")
        assert max(held) >= held_at_least, f"the attack never held many connections ({max(held)}): it proves nothing"
        return calls
    finally:
        attack.stop()


def test_eight_loopback_addresses_cannot_lock_out_an_authenticated_status(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": TOKEN}))       # limit 400, share 0.6, head 5 s
    calls = run_attack(svc, per_source=50, seconds=25, held_at_least=200)
    late = [c for c in calls if c[0] is None or c[0] >= 2.0 or c[1] != 200]
    assert not late, f"{len(late)} of {len(calls)} authenticated /status calls failed or took 2 s or more: {late}"


def test_at_the_connection_limit_the_longest_idle_makes_room_whatever_its_address(make_config, start_service):
    # a share of the whole limit: only the room made at the limit lets a new client in
    svc = start_service(make_config(server={"bearer_token": TOKEN, "connection_limit": 60,
                                            "connection_share": 1.0, "header_timeout_seconds": 30}))
    calls = run_attack(svc, per_source=12, seconds=10, held_at_least=50)
    late = [c for c in calls if c[0] is None or c[0] >= 2.0 or c[1] != 200]
    assert not late, f"{len(late)} of {len(calls)} authenticated /status calls failed or took 2 s or more: {late}"
