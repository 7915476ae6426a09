"""No request thread calls Memory (issue 29, item 2): /health, /queue and /status answer from what the
watches last published, so a Memory that takes seconds per call never holds a request. The queue is still
what waits in Memory: a draft written before this service started is shown without any tick."""
import time

import requests

from tests.harness.reviewer import wait_for

from .helpers import MemoryProxy

SLOW = 6.0          # seconds Memory takes per call, once it turns slow


def _sleep_once(make_config, start_service, hand) -> str:
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    r = requests.post(start_service(make_config()).url + "/sleep", timeout=60)
    assert r.status_code == 200 and r.json()["draft_id"], r.text
    return r.json()["draft_id"]


def test_a_slow_memory_never_holds_a_request_and_the_queue_is_read_in_the_background(make_config, start_service,
                                                                                      memory, hand):
    draft_id = _sleep_once(make_config, start_service, hand)
    proxy = MemoryProxy(memory.url).start()
    try:
        svc = start_service(make_config(memory={"url": proxy.url, "timeout_seconds": SLOW * 2},
                                        sleep={"mode": "external"}))
        queue = wait_for(lambda: (lambda q: q if q["drafts"] else None)(
            requests.get(svc.url + "/queue", timeout=10).json()), timeout=20, what="the queue's first read")
        assert [d["id"] for d in queue["drafts"]] == [draft_id]        # no tick ran: the watch read it

        proxy.drop, proxy.slow, proxy.slow_seconds = 0.0, 1.0, SLOW
        proxy.mode = "flap"                                            # every call now takes SLOW seconds
        for path in ("/health", "/queue", "/status", "/health", "/queue"):
            t0 = time.monotonic()
            r = requests.get(svc.url + path, timeout=SLOW * 3)
            took = time.monotonic() - t0
            assert r.status_code == 200 and took < SLOW / 4, (path, round(took, 2), r.text[:200])
        assert requests.get(svc.url + "/health", timeout=5).json() == {"ok": True, "memory_reachable": True}
    finally:
        proxy.mode = "pass"
        proxy.stop()
