"""Eight loopback addresses cannot lock everyone out (issue 38, item 1).

The attack, from outside on loopback: 8 × 50 connections, out of 127.0.0.2 … 127.0.0.9 (50 each), each
sending an unfinished request head one byte a second and opened again as soon as the server closes it. Before,
each address was its own client with a share of 240, so no address came near its share while together they
filled the connection limit of 400, and `GET /status` from a new client with the bearer waited in the kernel's
queue behind them (most calls timed out at 2 s). Now the whole loopback range is one client (its oldest waiting
connection makes room for its newest), and at the connection limit the longest-idle connection with nothing
being served makes room whatever its address: every authenticated /status answers within 2 s for 25 s.
"""
from __future__ import annotations

import socket
import threading
import time

import pytest
import requests

from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.timeout(180)
TOKEN = "loopback-lockout-bearer"
SOURCES = [f"127.0.0.{i}" for i in range(2, 10)]
# a head that never ends within the test: one byte a second of it, and the pad is longer than any run
HEAD = b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 4096


class HeadTrickle:
    """`per_source` connections out of each address in `sources`, each sending HEAD one byte every `every` s;
    a connection the server closes is opened again on the next pass (a pass every 0.1 s). Non-blocking
    throughout (a connect waiting in a full queue never stalls the others). Stops by itself after `lasts` s."""

    def __init__(self, port: int, sources: list, per_source: int, *, every: float = 1.0, lasts: float = 60.0):
        self.port, self.every = int(port), every
        self.slots = [[src, None, 0, 0.0] for src in sources for _ in range(per_source)]   # src, sock, sent, due
        self.opened = self.closed = self.bytes_sent = self.passes = 0
        self._stop = threading.Event()
        self._until = time.monotonic() + lasts
        for slot in self.slots:
            self._open(slot, time.monotonic())
        self._t = threading.Thread(target=self._run, name="head-trickle", daemon=True)
        self._t.start()

    def _open(self, slot: list, now: float) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((slot[0], 0))
            s.connect_ex(("127.0.0.1", self.port))
        except OSError:
            s.close()
            return
        slot[1:] = [s, 0, now]
        self.opened += 1

    def _run(self) -> None:
        while not self._stop.wait(0.1) and time.monotonic() < self._until:
            now = time.monotonic()
            for slot in self.slots:
                s = slot[1]
                if s is None or self._ended(s):
                    if s is not None:
                        s.close()
                        self.closed += 1
                    self._open(slot, now)
                    continue
                if now >= slot[3] and slot[2] < len(HEAD):
                    try:
                        if s.send(HEAD[slot[2]:slot[2] + 1]) == 1:
                            slot[2] += 1
                            self.bytes_sent += 1
                            slot[3] = now + self.every
                    except (BlockingIOError, InterruptedError):
                        pass                       # still connecting: the next pass tries again
                    except OSError:
                        s.close()
                        self.closed += 1
                        self._open(slot, now)
            self.passes += 1

    @staticmethod
    def _ended(s: socket.socket) -> bool:
        try:
            return s.recv(65536) == b""            # the server closed it (or answered it: a head never ends)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            return exc.errno != 107                # ENOTCONN: still connecting; anything else: gone

    def held_by_server(self, svc) -> int:
        return sum(1 for ch in list(svc.server.active_channels.values())
                   if ch.addr and ch.addr[0] in SOURCES)

    def stop(self) -> None:
        self._stop.set()
        self._t.join(10)
        for slot in self.slots:
            if slot[1] is not None:
                slot[1].close()


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
    attack = HeadTrickle(svc.port, SOURCES, per_source, lasts=seconds + 30)
    try:
        wait_for(lambda: attack.bytes_sent >= len(attack.slots), timeout=20, what="every attacker under way")
        calls, held = [], []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            calls.append(authenticated_status(svc.url))
            held.append(attack.held_by_server(svc))
            time.sleep(0.5)
        print(f"{len(calls)} authenticated /status calls during {seconds:g} s of {len(SOURCES)} x {per_source} "
              f"slow heads ({attack.opened} opened, {attack.closed} closed, up to {max(held)} held by the server): "
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
