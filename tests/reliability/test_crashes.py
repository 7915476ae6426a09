"""Actor crashes: 100 crashes injected across the actors while a cycle runs. Every actor comes back,
its siblings go on (/status answers throughout), /status counts the restarts, and the cycle completes
once the crashes stop."""
from __future__ import annotations

import threading
import time

import pytest
import requests

from tests.harness.reviewer import wait_for

from .helpers import CHILDREN, Delays, chain_done, chain_invariants, review_pending, reviewer_has_work, seed

pytestmark = pytest.mark.timeout(180)
CRASHES = 100


class StatusWatch(threading.Thread):
    """GET /status over and over; every answer that is not a quick 200 is kept."""

    def __init__(self, base: str):
        super().__init__(name="status-watch", daemon=True)
        self.base = base
        self.stopped = threading.Event()
        self.answers = 0
        self.bad: list = []

    def run(self) -> None:
        s = requests.Session()
        while not self.stopped.is_set():
            t0 = time.monotonic()
            try:
                r = s.get(self.base + "/status", timeout=10)
                if r.status_code != 200 or "explain" not in r.json():
                    self.bad.append((r.status_code, r.text[:200]))
            except (requests.RequestException, ValueError) as exc:
                self.bad.append(("error", repr(exc)))
            if time.monotonic() - t0 > 5:
                self.bad.append(("slow", time.monotonic() - t0))
            self.answers += 1
            self.stopped.wait(0.03)


def test_a_hundred_crashes_during_a_cycle(make_config, start_service, hand, fake_model, crashes):
    delays = Delays()
    delays.draft = delays.redraft = 0.4            # the cycle is still running while the crashes land
    fake_model.responder = delays.responder
    cfg = make_config(model={"url": fake_model.url},
                      sleep={"nudge_wait_seconds": 0}, events={"keep": 2000},
                      supervisor={"max_restarts": 1000, "backoff_seconds": 0.01, "check_seconds": 0.02})
    svc = start_service(cfg, children=crashes.children)
    base, rt = svc.url, svc.runtime
    brief = seed(hand)
    watch = StatusWatch(base)
    watch.start()
    try:
        requests.post(base + "/nudge", timeout=10)
        wait_for(lambda: fake_model.requests, timeout=20, what="the sleep to reach the model")

        injected = dict.fromkeys(sorted(CHILDREN), 0)
        total, t0, turn = 0, time.monotonic(), 0
        while total < CRASHES:
            assert time.monotonic() - t0 < 90, f"only {total} crashes injected: {rt.board.get('actors')}"
            table = rt.board.get("actors") or {}
            for name in injected:
                row = table.get(name) or {}
                # one crash at a time per actor: the last one has been restarted from
                if total < CRASHES and row.get("state") == "running" and row.get("restarts") == injected[name]:
                    if crashes.crash(rt, name):
                        injected[name] += 1
                        total += 1
            turn += 1
            if turn % 25 == 0:                     # the cycle goes on meanwhile: review, nudge
                review_pending(hand)
                requests.post(base + "/nudge", timeout=10)
            time.sleep(0.01)

        def all_back():
            table = rt.board.get("actors") or {}
            return all(table.get(n, {}).get("state") == "running" and table[n]["restarts"] == injected[n]
                       for n in injected)
        wait_for(all_back, timeout=30, what=f"every actor running again after {injected}")

        # the crashes have stopped: nudge until the chain closes
        deadline = time.monotonic() + 60
        while not (chain_done(hand, brief) and _closed(base)):
            assert time.monotonic() < deadline, f"the chain did not close: {hand.drafts()}"
            chain_invariants(hand, brief)
            review_pending(hand)
            requests.post(base + "/nudge", timeout=10)
            end = time.monotonic() + 3
            while (time.monotonic() < end and not (chain_done(hand, brief) and _closed(base))
                   and not reviewer_has_work(hand)):
                time.sleep(0.1)
    finally:
        watch.stopped.set()
        watch.join(15)

    assert watch.answers > 20 and watch.bad == [], watch.bad[:5]
    st = requests.get(base + "/status", timeout=10).json()
    actors = st["actors"]
    assert set(actors) == CHILDREN
    assert all(a["state"] == "running" for a in actors.values()), actors
    assert sum(a["restarts"] for a in actors.values()) >= CRASHES, actors
    assert all(a["restarts"] >= 1 for a in actors.values()), actors
    crashed = requests.get(base + "/events", params={"type": "actor_crashed", "limit": 1000}, timeout=10).json()
    assert crashed["count"] >= CRASHES, crashed["count"]
    drafts = hand.drafts()
    assert sorted(int(d["attempt"]) for d in drafts) == [1, 2] and all(d["status"] == "closed" for d in drafts)


def _closed(base: str) -> bool:
    r = requests.get(base + "/events", params={"type": "chain_closed"}, timeout=10)
    return r.json()["count"] >= 1
