"""Slow request bodies cannot lock anyone out (issue 28, item 1).

The attack, from outside on loopback: 410 connections out of 127.0.0.1, each sending a whole request head
with `Content-Length: 100000` and then one byte every 10 s, opened again whenever the server closes one.
Before, they held every connection for as long as they went on (the head deadline covered only the head,
the idle limit restarted with every byte, the body was read before the bearer was checked), and /health
from a new client did not answer. Now:
- with a bearer set and none sent, each is answered 401 from its head and closed;
- with no bearer, one address holds at most its share of the connections (a new connection of that
  address pushes out its longest-waiting one), and a body that does not keep up is answered 408 and closed;
so /health from a new client, from another loopback address or from the attackers' own, answers within 1 s.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter

import pytest

from hippocampus.http.server.clients import ACCEPTS_PER_TURN

from tests.harness.raw_http import connect, family_detail, one_answer, read_until_closed, timed_health
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.timeout(180)
TOKEN = "slow-body-bearer"
ATTACKERS = 410
HEAD = (b"POST /sleep HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 100000\r\n\r\n")


class Trickle:
    """`n` connections out of 127.0.0.1 sending HEAD, then one body byte every `every` s. A connection the
    server answers or closes is counted (by the status it answered) and, with `reopen`, opened again a
    second later. Stops by itself after `lasts` s."""

    def __init__(self, port: int, n: int, *, every: float = 10.0, reopen: bool = True, lasts: float = 60.0):
        self.port, self.every, self.reopen = port, every, reopen
        self.answered: Counter = Counter()
        self.closed_after: list = []            # seconds from opening to the server's close, per connection
        self.opened = self.ticks = self.bytes_sent = 0
        self.slots: list = [None] * n
        now = time.monotonic()
        for i in range(n):
            self._open(i, now)
        self._stop = threading.Event()
        self._until = now + lasts
        self._t = threading.Thread(target=self._run, name="trickle", daemon=True)
        self._t.start()

    def _open(self, i: int, now: float) -> None:
        try:
            s = connect(self.port, timeout=2)
            s.sendall(HEAD)
            s.setblocking(False)
        except OSError:
            self.slots[i] = (None, now + 1.0, now)
            return
        self.opened += 1
        self.slots[i] = (s, now + self.every, now)

    def _run(self) -> None:
        while not self._stop.wait(0.2) and time.monotonic() < self._until:
            now = time.monotonic()
            for i, (s, due, since) in enumerate(self.slots):
                if s is None:
                    if self.reopen and now >= due:
                        self._open(i, now)
                    continue
                if self._ended(s, now - since):
                    s.close()
                    self.slots[i] = (None, now + 1.0, now)
                elif now >= due:
                    try:
                        s.send(b"x")
                        self.bytes_sent += 1
                    except OSError:
                        pass
                    self.slots[i] = (s, now + self.every, since)
            self.ticks += 1

    def _ended(self, s: socket.socket, age: float) -> bool:
        try:
            data = s.recv(65536)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        status = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "closed"
        self.answered[status] += 1
        self.closed_after.append(age)
        return True

    def open_now(self) -> int:
        return sum(1 for s, _, _ in self.slots if s is not None)

    def stop(self) -> None:
        self._stop.set()
        self._t.join(10)
        for s, _, _ in self.slots:
            if s is not None:
                s.close()


def from_address(svc, address: str) -> int:
    return sum(1 for ch in list(svc.server.active_channels.values()) if ch.addr and ch.addr[0] == address)


def probe(svc, sources=("127.0.0.2", "127.0.0.1"), rounds: int = 5) -> dict:
    took = {src: [timed_health(svc.port, src, within=3) for _ in range(rounds)] for src in sources}
    for src, t in took.items():
        print(f"/health from a new client at {src} during the attack: max {max(t) * 1000:.0f} ms")
    return took


def test_with_a_bearer_trickled_bodies_are_401_from_the_head_and_health_answers(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": TOKEN}))
    attack = Trickle(svc.port, ATTACKERS)
    try:
        wait_for(lambda: attack.ticks >= 10, timeout=30, what="two seconds of the attack")
        took = probe(svc)
        assert all(max(t) < 1.0 for t in took.values()), took
        assert attack.answered["401"] >= ATTACKERS, attack.answered     # every one refused from its head
        assert attack.bytes_sent == 0 and attack.opened > ATTACKERS     # before a byte of body was sent
    finally:
        attack.stop()


def test_without_a_bearer_the_share_and_the_body_deadline_keep_room(make_config, start_service):
    svc = start_service(make_config(server={"body_timeout_seconds": 2.0}))     # a share of 240 of 400
    attack = Trickle(svc.port, ATTACKERS)
    try:
        wait_for(lambda: attack.ticks >= 10, timeout=30, what="two seconds of the attack")
        took = probe(svc)
        assert all(max(t) < 1.0 for t in took.values()), took
        # the held count swings as late bodies are closed (408) and reopened a second later: it is sampled
        # until the attack is seen at its share, and every sample is bounded by the share
        seen: list = []
        wait_for(lambda: seen.append(from_address(svc, "127.0.0.1")) or seen[-1] >= 200, timeout=20,
                 what="the attackers to hold 200 connections")
        print(f"the attackers held up to {max(seen)} connections over {len(seen)} samples; "
              f"answered: {dict(attack.answered)}")
        # the attack is real, and bounded by the share: it is enforced once per turn of the accept loop, which takes
        # up to ACCEPTS_PER_TURN new connections (issue 38), and a channel the share closed leaves the map on the
        # loop's next turn, so a sample (read from another thread) may catch up to two turns past it (256, 289 seen)
        assert max(seen) <= 240 + 2 * ACCEPTS_PER_TURN, seen
        # each held connection is answered 408 once its body is late (2 s, and a second per 1,024 bytes). While
        # the attackers reopen, a new connection of theirs may push out a held one first (the share), so the
        # reopening stops here: then every connection still held must end in a 408, none closed unanswered
        attack.reopen = False
        held, before, silent = from_address(svc, "127.0.0.1"), attack.answered["408"], attack.answered["closed"]
        wait_for(lambda: attack.open_now() == 0, timeout=20, what="the late bodies to be closed")
        late = attack.answered["408"] - before
        print(f"{held} held when the reopening stopped: {late} answered 408, "
              f"{attack.answered['closed'] - silent} closed unanswered")
        # (held past the share by a turn's worth, the newest are closed by the share itself, unanswered: the share
        # is what must end in 408s)
        assert held >= 200 and late >= min(held, 240) - 5, (held, late, dict(attack.answered))
        assert max(from_address(svc, "127.0.0.1") for _ in range(20)) <= 240 + 2 * ACCEPTS_PER_TURN
    finally:
        attack.stop()


def test_a_trickled_body_is_answered_408_and_closed_at_the_body_deadline(make_config, start_service):
    svc = start_service(make_config(server={"body_timeout_seconds": 1.0}))
    t0 = time.monotonic()
    attack = Trickle(svc.port, 20, every=0.3, reopen=False)    # never idle long enough for the idle limit
    try:
        wait_for(lambda: attack.open_now() == 0, timeout=15, what="the server to close every trickled body")
        print(f"20 trickled bodies closed {min(attack.closed_after):.1f} to {max(attack.closed_after):.1f} s "
              f"after opening (body deadline 1 s); {attack.bytes_sent} bytes trickled")
        assert attack.answered == {"408": 20}, attack.answered
        assert attack.bytes_sent >= 20
        assert 1.0 <= min(attack.closed_after) and max(attack.closed_after) < 3.5, attack.closed_after
        assert time.monotonic() - t0 < 5
    finally:
        attack.stop()
    with connect(svc.port) as s:                                 # what the client is told
        s.sendall(HEAD)
        detail = family_detail(one_answer(read_until_closed(s, 5)), 408)
    assert "did not arrive in time" in detail and "server.body_timeout_seconds" in detail, detail


def test_a_slow_body_that_keeps_the_rate_goes_through(make_config, start_service):
    svc = start_service(make_config(server={"body_timeout_seconds": 1.0}, voice={"enabled": True}))
    body = json.dumps({"text": "a card over a slow link", "pad": "x" * 3000}).encode()   # other keys: ignored
    with connect(svc.port) as s:
        s.sendall(b"PUT /voice HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body))
        t0 = time.monotonic()
        for i in range(0, len(body), 300):           # about 1,500 bytes a second, for 2 s: past the 1 s
            s.sendall(body[i:i + 300])
            time.sleep(0.2)
        took = time.monotonic() - t0
        s.settimeout(5)
        status = s.recv(65536).split(b"\r\n", 1)[0]
    assert took > 1.5
    assert status == b"HTTP/1.1 200 OK", status
