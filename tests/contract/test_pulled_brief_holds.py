"""A brief the small model pulls (sleep.brief_pull) meets every hold a submitted brief meets before its sleep (issue
42, one sleep path): on the real SerenMemory, with the model held after a failed start, or the last night's budget
resting, neither sleeps and the model is not called (no pull either); when another copy claims the pulled brief,
or sleeps on it and drafts it before this copy's turn, this copy leaves it to that one, as for a submitted brief."""
from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from hippocampus.cycle import claims, copies, executor
from hippocampus.status.lists import result
from tests.harness.clock import FakeClock
from tests.service.test_tend import scripted_model

PULLED = {"summary": "tea and the garden mattered this week", "promote_hints": ["tea"], "noise_hints": [],
          "completed_intents": []}


def pulling_model(body: dict) -> dict:
    """The small model: a brief when asked to pull one, else one operation a topic."""
    if "JSON brief:" in body["messages"][-1]["content"]:
        return {"content": json.dumps(PULLED)}
    return scripted_model(body)


def shorts(hand) -> None:
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
        hand.short(f"the rose garden bloomed early this year, visit {i}", topic="garden")


def pulling_ctx(make_ctx, fake_model, tmp_path, name: str = "a", clock=None):
    fake_model.responder = pulling_model
    return make_ctx(clock=clock, model={"url": fake_model.url},
                    sleep={"brief_pull": True, "brief_check_misses": 1, "brief_request": False,
                           "state_path": str(tmp_path / name / "state.json")})


def held(ctx) -> None:
    """The model's last start failed: the lifecycle tries it again in ten minutes."""
    ctx.gate = SimpleNamespace(ensure=lambda: None, release=lambda busy_seconds: None, handover=lambda: False,
                               held_until=lambda now: now + 600)


def resting(ctx) -> None:
    """The last night ran out of its budget: the next sleep waits an hour, for bedtime."""
    ctx.state.set(last_sleep={"budget": {"limit": "calls", "rest_until": ctx.clock.now() + 3600}})


@pytest.mark.parametrize("hold,status", [(held, "waiting_for_model"), (resting, "budget_rest")])
def test_a_held_model_or_a_budget_rest_holds_a_pulled_brief_as_a_submitted_one(make_ctx, hand, fake_model, tmp_path,
                                                                               hold, status):
    ctx = pulling_ctx(make_ctx, fake_model, tmp_path)
    hold(ctx)
    shorts(hand)
    pulled = executor.check(ctx).to_dict()                         # past bedtime, no brief: a pull is due
    assert pulled["status"] == status and pulled["sleep"] is None, pulled
    assert fake_model.requests == [] and hand.all_briefs() == []  # no pull, no brief, no sleep
    assert hand.drafts() == []
    brief = hand.brief("tea and the garden mattered this week")   # the same with a brief the main model wrote
    submitted = executor.check(ctx).to_dict()
    assert (submitted["status"], submitted["brief_id"], submitted["sleep"]) == (status, brief, None), submitted
    assert submitted["retry_at"] == pulled["retry_at"] > ctx.clock.now()
    assert fake_model.requests == [] and hand.drafts() == []


def _two_copies(make_ctx, fake_model, tmp_path) -> tuple:
    clock = FakeClock(time.time())
    ctxs = tuple(pulling_ctx(make_ctx, fake_model, tmp_path, name, clock) for name in ("a", "b"))
    for ctx in ctxs:
        copies.announce(ctx)
    return ctxs


def _meanwhile(ctx, then) -> None:
    """`then(brief_id)` runs as soon as this copy's pulled brief is in Memory, before this copy goes on."""
    submit = ctx.memory.submit_brief

    def submitted(*args, **kw):
        res = submit(*args, **kw)
        then(res["id"])
        return res
    ctx.memory.submit_brief = submitted


def test_a_pulled_brief_another_copy_claimed_meanwhile_is_left_to_it(make_ctx, hand, fake_model, tmp_path):
    a, b = _two_copies(make_ctx, fake_model, tmp_path)
    shorts(hand)
    theirs: list = []
    _meanwhile(a, lambda bid: theirs.append(claims.claim(b, f"brief:{bid}", f"sleeps on brief {bid}")))
    checked = executor.check(a).to_dict()
    (brief,) = [x["id"] for x in hand.all_briefs()]
    assert checked["status"] == "other_copy" and checked["brief_id"] == brief, checked
    assert checked["other"]["what"] == f"sleeps on brief {brief}" and checked["sleep"] is None, checked
    assert len(fake_model.requests) == 1 and hand.drafts() == []  # the pull only: no sleep
    theirs[0].release()


def test_a_pulled_brief_another_copy_drafted_meanwhile_is_not_drafted_twice(make_ctx, hand, fake_model, tmp_path):
    a, b = _two_copies(make_ctx, fake_model, tmp_path)
    shorts(hand)
    theirs: list = []
    _meanwhile(a, lambda bid: theirs.append(executor.check(b).to_dict()))   # b sleeps on it, done before a's turn
    checked = executor.check(a).to_dict()
    (brief,) = [x["id"] for x in hand.all_briefs()]
    assert theirs[0]["status"] == "sleeping" and theirs[0]["sleep"]["draft_id"], theirs
    assert checked["status"] == "other_copy" and checked["brief_id"] == brief and checked["sleep"] is None, checked
    assert checked["other"]["what"] == f"has drafted brief {brief} already", checked
    assert [d["id"] for d in hand.drafts()] == [theirs[0]["sleep"]["draft_id"]]    # one draft of it, b's


def test_a_pulled_brief_free_to_sleep_on_sleeps_as_a_submitted_one(make_ctx, hand, fake_model, tmp_path):
    ctx = pulling_ctx(make_ctx, fake_model, tmp_path)
    shorts(hand)
    checked = executor.check(ctx).to_dict()
    (brief,) = [x["id"] for x in hand.all_briefs()]
    assert checked["status"] == "sleeping_on_pulled_brief" and checked["brief_id"] == brief, checked
    assert checked["sleep"]["brief_pulled"] and checked["sleep"]["draft_id"], checked
    assert ctx.state.get("brief_misses") == 0 and checked["misses"] == 0
    assert "(pulled from the fragments by a small model)" in fake_model.prompts()[-1]
    assert [n for n in hand.near() if str((n.get("metadata") or {}).get("claim", "")).startswith("brief")] == []


@pytest.mark.parametrize("answer,why", [("tea mattered, and the garden", "not the JSON asked for"),
                                        (json.dumps({**PULLED, "summary": " "}), "no summary")])
def test_a_malformed_pull_is_a_failure_on_the_report_and_in_the_log(make_ctx, hand, fake_model, tmp_path, caplog,
                                                                     answer, why):
    ctx = pulling_ctx(make_ctx, fake_model, tmp_path)
    fake_model.responder = lambda body: {"content": answer}
    shorts(hand)
    checked = executor.check(ctx).to_dict()
    assert checked["status"] == "waiting_for_brief" and checked["sleep"] is None, checked
    assert checked["error"].startswith("the small model's pulled brief was ") and why in checked["error"], checked
    assert hand.all_briefs() == [] and hand.drafts() == []
    said = result("check", checked)
    assert said["level"] == "bad" and checked["error"] in said["text"], said       # what /check and check_now say
    assert any(why in r.getMessage() and r.levelname == "WARNING" for r in caplog.records), caplog.text


def test_a_pulled_brief_whose_sleep_drafted_nothing_is_consumed_not_slept_on_again(make_ctx, hand, fake_model, tmp_path):
    """Left open, the next check slept on it a second time, calling the model again and showing it the small
    model's brief as 'written by the main model, who was there'."""
    ctx = pulling_ctx(make_ctx, fake_model, tmp_path)
    fake_model.responder = lambda body: {"content": json.dumps(
        PULLED if "JSON brief:" in body["messages"][-1]["content"] else {"operations": []})}
    shorts(hand)
    first = executor.check(ctx).to_dict()
    assert first["status"] == "sleeping_on_pulled_brief" and first["sleep"]["operations"] == 0, first
    assert hand.open_briefs() == []
    calls = len(fake_model.prompts())
    again = executor.check(ctx).to_dict()
    assert again["status"] == "not_bedtime" and again["sleep"] is None, again
    assert len(fake_model.prompts()) == calls
