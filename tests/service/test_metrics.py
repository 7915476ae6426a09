"""GET /metrics: an operator's counters, parsed by prometheus_client's own parser, move across a whole chain."""
from __future__ import annotations

import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.harness.reviewer import wait_for


def samples(base: str, headers: dict = None) -> dict:
    r = requests.get(base + "/metrics", headers=headers or {}, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_counters_move_across_a_whole_chain(make_config, start_service, hand):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config())
    base = svc.url
    before = samples(base)
    assert before[("hippocampus_sleeps_total", (("outcome", "drafted"),))] == 0
    assert before[("hippocampus_last_successful_sleep_timestamp_seconds", ())] == 0
    wait_for(lambda: samples(base)[("hippocampus_memory_reachable", ())] == 1, what="Memory reachable")

    draft_id = requests.post(base + "/check", timeout=30).json()["sleep"]["draft_id"]
    mid = samples(base)
    assert mid[("hippocampus_sleeps_total", (("outcome", "drafted"),))] == 1
    assert mid[("hippocampus_drafts_submitted_total", ())] == 1
    assert mid[("hippocampus_last_successful_sleep_timestamp_seconds", ())] > 0
    assert mid[("hippocampus_chain_open", ())] == 1

    hand.approve_all(draft_id)
    requests.post(base + "/nudge", timeout=5)
    wait_for(lambda: samples(base)[("hippocampus_chains_total", (("outcome", "landed"),))] == 1,
             what="the chain counted as landed")
    after = samples(base)
    assert after[("hippocampus_operations_total", (("verdict", "approved"),))] == 1
    assert after[("hippocampus_operations_total", (("verdict", "denied"),))] == 0
    assert after[("hippocampus_chain_open", ())] == 0
    assert after[("hippocampus_sleeps_total", (("outcome", "failed"),))] == 0


def test_metrics_are_behind_the_bearer(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": "s3cret-token-for-metrics"}))
    assert requests.get(svc.url + "/metrics", timeout=10).status_code == 401
    got = samples(svc.url, {"Authorization": "Bearer s3cret-token-for-metrics"})
    assert ("hippocampus_memory_reachable", ()) in got


def test_a_night_the_budget_stopped_before_it_drafted_is_counted_apart_from_a_quiet_one(make_config, start_service,
                                                                                        fake_model, hand):
    """Every answer cut at the cap: the breaker (sleep.budget.cut_in_a_row) stops the night before it drafts
    anything. An operator graphing quiet nights must see a budget too small, not one more quiet night."""
    from tests.contract.test_budget_night import RUNAWAY, seed
    seed(hand)
    hand.brief("a week of small things")
    fake_model.replies = [RUNAWAY]
    svc = start_service(make_config(model={"url": fake_model.url, "write": "free"}))
    sleep = requests.post(svc.url + "/check", timeout=60).json()["sleep"]
    assert sleep["budget"]["limit"] == "cut_in_a_row" and sleep["draft_id"] is None, sleep
    got = samples(svc.url)
    assert got[("hippocampus_sleeps_total", (("outcome", "quiet"),))] == 0
    assert got[("hippocampus_sleeps_total", (("outcome", "budget"),))] == 1
    r = requests.get(svc.url + "/metrics", timeout=10)
    assert "budget: sleep.budget stopped the night before it drafted anything" in r.text
    # not a successful sleep: an alert on "no successful sleep" must fire while every night runs out of its budget
    assert got[("hippocampus_last_successful_sleep_timestamp_seconds", ())] == 0
    again = requests.post(svc.url + "/check", timeout=60).json()      # bedtime still counts from that night
    assert again["status"] == "budget_rest", again
