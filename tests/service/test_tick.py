"""The tick, read once and decided once: nudges never lost, a fresh install that asks by itself, one Tick
queued at most, and mechanical mode's one core per cluster."""
from __future__ import annotations

import threading
import time

import requests

from hippocampus.cycle import executor
from tests.harness.memory_client import ReviewingClient
from tests.harness.receiver import Receiver
from tests.harness.reviewer import wait_for
from tests.service.test_tend import scripted_model, seed

BRIEF_NOTE = "hippocampus, brief"


def ticks(svc) -> int:
    return (svc.runtime.board.all().get("ticks") or {}).get("ticks", 0)


def scheduler_settled(svc) -> bool:
    ref = svc.runtime.registry.get("scheduler")
    board = svc.runtime.board.all().get("ticks") or {}
    return ref.actor_inbox.qsize() == 0 and not board.get("ticking") and svc.runtime.ctx.cycle.holder() is None


def a_core_to_forget(memory_url: str, hand) -> str:
    """One long-term memory, landed and its draft closed, so that no chain is open."""
    client = ReviewingClient(memory_url)
    sid = hand.short("the old address was on elm street", topic="address")
    d = client.submit_draft({"summary": "an address", "attempt": 1, "terminal": False,
                             "operations": [{"kind": "new_core", "content": "the old address was on elm street",
                                             "topic": "address", "source_short_ids": [sid], "evidence_count": 1,
                                             "rationale": "it came up"}]})
    core = client.review_draft(d["id"], [{"op": 0, "verdict": "approve"}])["results"][0]["long_term_id"]
    client.close_draft(d["id"])
    return core


def test_a_nudge_during_a_hand_started_sleep_causes_one_tick_when_it_ends(make_config, start_service, hand,
                                                                          fake_model, memory):
    core = a_core_to_forget(memory.url, hand)
    seed(hand)
    started, nudged = threading.Event(), threading.Event()

    def slow(body):
        started.set()
        nudged.wait(20)                # the sleep runs on while the test forgets and nudges, and ends once it has
        return scripted_model(body)
    fake_model.responder = slow
    svc = start_service(make_config(model={"url": fake_model.url}, sleep={"nudge_wait_seconds": 0}))
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(r=requests.post(svc.url + "/sleep", timeout=60)))
    t.start()
    assert started.wait(20), "the sleep's model call never came"
    before = ticks(svc)
    hand.forget(core, "flagged after the sleep began")
    for _ in range(10):
        assert requests.post(svc.url + "/nudge", timeout=5).json()["ok"] is True
    assert t.is_alive(), "the sleep ended before the nudges: they were not made during it"
    nudged.set()
    t.join(60)
    assert out["r"].status_code == 200 and out["r"].json()["draft_id"]
    wait_for(lambda: ticks(svc) == before + 1, timeout=20, what="the nudged tick after the sleep let go")
    wait_for(lambda: scheduler_settled(svc), timeout=20, what="the scheduler to settle")
    assert ticks(svc) == before + 1, "ten nudges in a burst make one tick"
    assert core not in {e["id"] for e in hand.long()}, "the tick purged what was flagged during the sleep"
    assert any(core in (e.get("ids") or []) for e in requests.get(svc.url + "/events", params={"type": "purged"},
                                                                   timeout=5).json()["entries"])


def test_thread_mode_on_a_fresh_store_asks_for_a_brief_by_itself(make_config, start_service, hand):
    hook = Receiver()
    try:
        cfg = make_config(sleep={"mode": "thread", "tick_seconds": 0.1, "tend_interval_seconds": 0.1,
                                 "brief_check_misses": 2},
                          supervisor={"check_seconds": 0.05},
                          notify={"webhook_url": hook.url, "events": ["brief_requested"]})
        start_service(cfg)
        wait_for(lambda: len(hook.requests) >= 3, timeout=30, what="three brief requests on the webhook")
        notes = [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == BRIEF_NOTE]
        assert len(notes) == 1, notes
    finally:
        hook.close()


def test_a_long_sleep_never_queues_more_than_one_tick(make_config, start_service, hand, fake_model):
    seed(hand)
    fake_model.responder = lambda body: (time.sleep(1.0), scripted_model(body))[1]
    cfg = make_config(model={"url": fake_model.url},
                      sleep={"mode": "thread", "tick_seconds": 0.1, "tend_interval_seconds": 0.1},
                      supervisor={"check_seconds": 0.1})
    svc = start_service(cfg)
    wait_for(lambda: fake_model.in_flight == 1, timeout=20, what="the tick's sleep to call the model")
    inbox = svc.runtime.registry.get("scheduler").actor_inbox
    deepest = 0
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        deepest = max(deepest, inbox.qsize())
        time.sleep(0.01)
    assert fake_model.in_flight == 1 or hand.drafts("pending"), "the sleep ran all the while"
    assert deepest <= 1, f"the scheduler's mailbox held {deepest} messages during the sleep"


def test_mechanical_mode_makes_one_core_of_a_cluster_split_into_piles(make_ctx, hand):
    for i in range(40):
        hand.short(f"the garden pond froze over again on morning {i}", topic="pond")
    hand.brief("the pond kept freezing")
    ctx = make_ctx(sleep={"pile_max": 12})
    report = executor.check(ctx).to_dict()
    draft = hand.draft(report["sleep"]["draft_id"])
    assert [op["kind"] for op in draft["operations"]] == ["new_core"]
    assert len(draft["operations"][0]["source_short_ids"]) == 40


def test_an_idle_tick_makes_at_most_four_memory_calls(make_config, start_service):
    svc = start_service(make_config())
    svc.runtime.ctx.state.set(last_sleep_ok_at=time.time())      # not bedtime: nothing to do
    wait_for(lambda: svc.runtime.ctx.copies_announced, timeout=10, what="the copy's note at its start (not a tick's)")
    calls: list = []
    real = svc.runtime.ctx.memory.request

    def counting(method, path, **kw):            # the real client, counted
        calls.append(f"{method} {path} {kw.get('params') or ''}")
        return real(method, path, **kw)
    svc.runtime.ctx.memory.request = counting
    before = ticks(svc)
    requests.post(svc.url + "/nudge", timeout=5)
    wait_for(lambda: ticks(svc) > before and scheduler_settled(svc), timeout=10, what="the nudged tick")
    assert len(calls) <= 4, calls
