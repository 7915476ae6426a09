"""Answers sized to what they hold, and the tokens a night cost as the model's server counts them, through the
whole service and the real SerenMemory (the fake model scripted).

- a model that would write forever is cut at its pile's cap (a few fragments' worth), not at model.max_tokens,
  and the sleep's failure names that cap;
- every call asks the server to keep its prompt cache (cache_prompt), and the server's own `timings` of each
  call are summed into the sleep's report, its sleep_done event and the model card on /status.
"""
from __future__ import annotations

import json

import requests

from hippocampus.drafting import schema
from hippocampus.drafting.prompt import Markers

CEILING = 2000
TIMINGS = {"prompt_n": 120, "cache_n": 880, "predicted_n": 40}


def keeps_the_first(body: dict) -> dict:
    """A new core in the words of the pile's first fragment, with the server's own counts of the call."""
    prompt = body["messages"][-1]["content"]
    words = prompt.split("\n[f1] ", 1)[1].split(" (", 1)[0]
    op = {"kind": "new_core", "content": words, "fragments": ["f1"], "rationale": "said so"}
    return {"content": json.dumps({"operations": [op]}), "timings": TIMINGS}


def runaway(body: dict) -> dict:
    """A model that never closes its answer: it writes until the server stops it at the call's max_tokens."""
    n = int(body["max_tokens"])
    return {"content": '{"operations": [{"kind": "new_core", "content": "' + "and then the fish " * n,
            "finish_reason": "length", "timings": {"prompt_n": 900, "cache_n": 0, "predicted_n": n}}


def sleep_now(svc) -> dict:
    r = requests.post(svc.url + "/check", timeout=60)
    assert r.status_code == 200, r.text
    return r.json()["sleep"]


def test_a_model_that_would_write_forever_is_cut_at_its_piles_cap(make_config, start_service, hand, fake_model):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    brief = hand.brief("we talked about the fish dream a lot")
    fake_model.responder = runaway
    svc = start_service(make_config(model={"url": fake_model.url, "max_tokens": CEILING, "write": "free"}))
    report = sleep_now(svc)
    cap = schema.answer_cap(Markers(fragments={f"f{i}": i for i in (1, 2, 3)}), CEILING)
    assert cap < 0.6 * CEILING
    assert [r["max_tokens"] for r in fake_model.requests] == [cap]
    assert report["tokens"]["answer"] == cap                # the server's own count: what the runaway cost
    assert f"the pile's answer cap ({cap} tokens, sized to its pile; model.max_tokens {CEILING} is the ceiling)" \
        in report["error"], report["error"]
    assert brief in [b["id"] for b in hand.open_briefs()]   # a failed sleep keeps its brief


def test_the_servers_own_token_counts_are_summed_into_the_night(make_config, start_service, hand, fake_model):
    for topic in ("fish, dreams", "tea, mornings"):
        for i in range(3):
            hand.short(f"{topic.split(',')[0]} note number {i}, told at length", topic=topic)
    hand.brief("we talked about fish dreams and tea a lot")
    fake_model.responder = keeps_the_first
    svc = start_service(make_config(model={"url": fake_model.url, "write": "free"}))
    report = sleep_now(svc)
    assert report["draft_id"] and report["model_calls"] == 2, report
    assert all(r.get("cache_prompt") is True for r in fake_model.requests)
    assert report["tokens"] == {"prompt": 2000, "evaluated": 240, "cached": 1760, "answer": 80, "timed": 2}
    events = requests.get(svc.url + "/events", timeout=10).json()["entries"]
    (done,) = [e for e in events if e["type"] == "sleep_done"]
    assert done["tokens"] == report["tokens"]
    rows = requests.get(svc.url + "/status", timeout=10).json()["say"]["cards"]["model"]["rows"]
    assert ["last sleep's tokens", "2,000 prompt tokens (240 evaluated, 1,760 from the server's cache), "
                                   "80 answer tokens", ""] in rows
