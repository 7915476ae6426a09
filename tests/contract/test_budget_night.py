"""A night's budget (issue 40): on the real SerenMemory with a scripted model, the breaker and the call budget
stop the night; what was drafted is submitted, the brief stays open, the piles not drafted keep their fragments in
short-term, and the report, the events and the log say why, naming the setting to raise."""
from __future__ import annotations

import json
import logging
import re
import time

from hippocampus.cycle import executor
from tests.conftest import event_types

DAY = 86400.0
TOPICS = ("tea", "garden", "climbing", "bread", "chess")
RUNAWAY = {"content": '{"operations": [{"kind": "new_core", "content": "' + "and then " * 400,
           "finish_reason": "length"}          # an answer cut at the cap, every time


def seed(hand, topics=TOPICS, old: bool = False) -> dict:
    """Three fragments a topic (a pile each), written two days ago when `old`."""
    ts = time.time() - 2 * DAY if old else None
    return {t: [hand.short(f"a note about {t}, day {i}", topic=t, **({"ts": ts} if ts else {})) for i in range(3)]
            for t in topics}


def good_answer(topic: str) -> str:
    return json.dumps({"operations": [{"kind": "new_core", "content": f"a note about {topic}, day 0",
                                       "fragments": ["f1", "f2", "f3"], "target": None,
                                       "rationale": "the fragments say so"}]})


def test_the_breaker_stops_a_runaway_night_after_three_cut_answers(make_ctx, hand, memory, fake_model, caplog):
    memory.set_lifetimes(short_term_seconds=3600)
    ctx = make_ctx(model={"url": fake_model.url, "write": "free"})
    ctx.state.set(last_sleep_ok_at=ctx.clock.now() - DAY)        # not a catch-up: an ordinary sleep ages out
    frags = seed(hand, old=True)
    brief = hand.brief("a week of small things", promote=list(TOPICS))
    fake_model.replies = [RUNAWAY]
    with caplog.at_level(logging.WARNING, logger="hippocampus"):
        report = executor.check(ctx).to_dict()["sleep"]
    assert len(fake_model.requests) == 3                          # three answers cut, then no fourth call
    assert report["error"] is None and report["draft_id"] is None and hand.drafts() == []
    b = report["budget"]
    assert b["limit"] == "cut_in_a_row" and b["setting"] == "sleep.budget.cut_in_a_row" and b["calls"] == 3
    assert [p["fragments"] for p in b["undrafted"]] == [3, 3]      # five piles: three cut, two never asked
    assert [b["id"] for b in hand.open_briefs()] == [brief]        # the brief is kept
    left = {s["id"] for s in hand.shorts()}
    assert all(f in left for fs in frags.values() for f in fs)    # nothing aged out, nothing archived
    assert "sleep_budget_spent" in event_types(ctx) and "brief_consumed" not in event_types(ctx)
    said = [r for r in caplog.records if r.levelno == logging.WARNING and "stopped drafting early" in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in caplog.records]
    assert "3 answers in a row ran into the answer cap" in said[0].getMessage()
    assert "sleep.budget.cut_in_a_row" in said[0].getMessage() and brief in said[0].getMessage()
    again = executor.check(ctx).to_dict()                        # the next check waits for the next bedtime
    assert again["status"] == "budget_rest" and again["retry_at"] == b["rest_until"] > ctx.clock.now()
    assert len(fake_model.requests) == 3


def test_the_call_budget_submits_what_was_drafted_and_keeps_the_rest_and_the_brief(make_ctx, hand, memory,
                                                                                    fake_model):
    memory.set_lifetimes(short_term_seconds=3600)
    ctx = make_ctx(model={"url": fake_model.url, "write": "free"}, sleep={"budget": {"calls": 2}})
    ctx.state.set(last_sleep_ok_at=ctx.clock.now() - DAY)
    frags = seed(hand, old=True)
    brief = hand.brief("a week of small things", promote=list(TOPICS))

    def answer(body):
        prompt = body["messages"][-1]["content"]
        return good_answer(next(t for t in TOPICS if f"a note about {t}" in prompt))
    fake_model.responder = answer
    slept = ctx.state.get("last_sleep_ok_at")
    report = executor.check(ctx).to_dict()["sleep"]
    assert ctx.state.get("last_sleep_ok_at") != slept            # it drafted before the budget: a successful sleep
    assert len(fake_model.requests) == 2
    assert report["budget"]["limit"] == "calls" and "sleep.budget.calls (2)" in report["budget"]["reason"]
    drafted = {op["topic"] for op in hand.draft(report["draft_id"])["operations"]}
    assert len(drafted) == 2 and report["operations"] == 2
    undrafted = {p["topic"] for p in report["budget"]["undrafted"]}
    assert undrafted == set(TOPICS) - drafted
    hand.approve_all(report["draft_id"])                          # the chain lands and closes
    closed = executor.tend(ctx).to_dict()
    assert closed["closed"], closed
    assert [b["id"] for b in hand.open_briefs()] == [brief]        # kept: the night did not finish it
    left = {s["id"] for s in hand.shorts()}
    assert all(f in left for t in undrafted for f in frags[t])    # the landing aged none of them out
    assert not closed["tidy"][report["draft_id"]].get("aged_out"), closed["tidy"]
    from hippocampus.status.lists import sleep_words
    assert "stopped drafting early: the night made 2 model calls" in sleep_words(report)


def test_a_redraft_has_the_budget_per_chain_step_and_posts_nothing_when_it_is_spent(make_ctx, hand, fake_model):
    from tests.service.test_tend import scripted_model, seed as seed_tea_and_garden

    fake_model.responder = scripted_model
    ctx = make_ctx(model={"url": fake_model.url, "write": "free"})
    seed_tea_and_garden(hand)
    first = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    ops = hand.draft(first)["operations"]
    assert len(ops) == 2
    hand.review(first, [{"op": o["index"], "verdict": "deny", "critique": "not quite; say: " + o["content"] + " too"}
                        for o in ops])
    ctx.cfg.sleep.budget.calls = 1                     # one redraft call for this chain step: the second is refused
    calls = len(fake_model.requests)
    tend = executor.tend(ctx).to_dict()
    assert len(fake_model.requests) == calls + 1
    assert tend["resubmitted"] == [] and [d["attempt"] for d in hand.drafts("pending")] == []   # nothing posted
    failed = [f for f in tend["model_failures"] if f.get("budget")]
    assert len(failed) == 1 and failed[0]["budget"]["setting"] == "sleep.budget.calls", tend["model_failures"]
    assert "the night made 1 model call, all that sleep.budget.calls (1) allows" in failed[0]["why"]
    assert "redraft_failed" in event_types(ctx)
    ctx.cfg.sleep.budget.calls = 60                    # a fresh step, a fresh budget: the redraft goes through
    assert executor.tend(ctx).to_dict()["resubmitted"][0]["attempt"] == 2


def _a_night_the_budget_stopped_landed(make_ctx, hand, fake_model) -> tuple:
    """(ctx, the sleep): a night the budget (two calls) stopped with piles undrafted, its brief kept; its chain
    approved whole and closed."""
    ctx = make_ctx(model={"url": fake_model.url, "write": "free"}, sleep={"budget": {"calls": 2}})
    ctx.state.set(last_sleep_ok_at=ctx.clock.now() - DAY)
    seed(hand, topics=TOPICS[:3])
    hand.brief("a week of small things", promote=list(TOPICS))
    fake_model.responder = lambda body: good_answer(
        re.search(r"^Topic: (.+)$", body["messages"][-1]["content"], flags=re.M).group(1).strip())
    first = executor.check(ctx).to_dict()["sleep"]
    hand.approve_all(first["draft_id"])
    assert executor.tend(ctx).to_dict()["closed"] == [first["draft_id"]]
    return ctx, first


def test_the_next_night_on_the_kept_brief_posts_its_own_draft(make_ctx, hand, memory, fake_model):
    """The brief a budget kept opens a second chain: its first draft had the id the first night's had (both from
    the brief), so Memory kept the first night's closed draft and the second night's operations were lost, said as
    submitted."""
    ctx, first = _a_night_the_budget_stopped_landed(make_ctx, hand, fake_model)
    ctx.clock.advance(2 * DAY)                                     # past the rest: the next night
    second = executor.check(ctx).to_dict()["sleep"]
    assert second["operations"] == 1 and second["draft_id"] != first["draft_id"], second
    [pending] = hand.drafts("pending")
    assert pending["id"] == second["draft_id"] and len(pending["operations"]) == 1, pending
    assert {op["topic"] for op in pending["operations"]} == {p["topic"] for p in first["budget"]["undrafted"]}


def test_status_says_the_kept_brief_waits_for_bedtime_once_the_night_s_chain_has_landed(make_ctx, hand, fake_model):
    """The brief a budget kept is not slept on at the next check: the checks wait for the next bedtime."""
    from hippocampus.cycle.bedtime import bedtime
    from hippocampus.status.narrator import narrate
    from hippocampus.status.words import hhmm

    ctx, first = _a_night_the_budget_stopped_landed(make_ctx, hand, fake_model)
    assert executor.check(ctx).to_dict()["status"] == "budget_rest"          # what the next check does
    now = ctx.clock.now()
    say = narrate({"memory": {"reachable": True}, "actors": {}, "chain": ctx.last_snapshot.summary(),
                   "last_sleep": ctx.state.get("last_sleep"), "last_check": ctx.state.get("last_check"),
                   "bedtime_at": bedtime(ctx.cfg.sleep, ctx.state, now), "mode": "external"}, now)
    rest = hhmm(first["budget"]["rest_until"])
    for words in (say["headline"], say["cards"]["brief"]["sub"]):
        assert "next check" not in words and rest in words, words
