"""A sleep that failed after the model ran (its answer unusable, or Memory refused the draft) is not tried again at
every check: the next try waits a check interval, then twice that after each failure in a row, up to
sleep.FAILED_WAIT_MAX_SECONDS; a success or a new brief starts the count again, a sleep by hand does not wait.
The check, the sleep's report (/status), the event and the log say when the next try is."""
from __future__ import annotations

import logging

from hippocampus.cycle import executor
from hippocampus.cycle.sleep import FAILED_WAIT_MAX_SECONDS
from tests.service.test_tend import scripted_model, seed

UNREADABLE = {"content": "Sure! I would say the tea was green, citing f1."}      # not the JSON asked for


def _failing(make_ctx, hand, fake_model, **sleep):
    ctx = make_ctx(model={"url": fake_model.url}, sleep={"tick_seconds": 300, **sleep})
    fake_model.responder = lambda body: dict(UNREADABLE)
    brief = seed(hand)
    return ctx, brief


def test_a_failed_sleep_waits_a_growing_while_before_the_model_is_run_again(make_ctx, hand, fake_model, caplog):
    ctx, brief = _failing(make_ctx, hand, fake_model)
    with caplog.at_level(logging.ERROR, logger="hippocampus"):
        failed = executor.check(ctx).to_dict()["sleep"]
    assert failed["error"]
    asked = len(fake_model.requests)
    for _ in range(2):                                # the next checks, within the check interval: no model run
        held = executor.check(ctx).to_dict()
        ctx.clock.advance(60)
    assert len(fake_model.requests) == asked, "the model was run again at the next check"
    assert failed["next_try_at"] == failed["finished_at"] + 300, failed
    assert held["status"] == "waiting_after_failure" and held["retry_at"] == failed["next_try_at"], held
    assert held["brief_id"] == brief and ctx.state.get("last_sleep")["next_try_at"] == failed["next_try_at"]
    assert [r for r in caplog.records if "the next try waits until" in r.getMessage()], caplog.records
    [event] = [e for e in ctx.events.list() if e["type"] == "sleep_failed"]
    assert event["next_attempt_at"] == failed["next_try_at"]
    ctx.clock.set(failed["next_try_at"])
    second = executor.check(ctx).to_dict()["sleep"]   # the wait is over: tried, failed again, waits twice as long
    assert len(fake_model.requests) > asked and second["error"], second
    assert second["next_try_at"] == second["finished_at"] + 600, second
    for _ in range(12):                               # bounded however often it fails
        ctx.clock.set(ctx.state.get("last_sleep")["next_try_at"])
        executor.check(ctx)
    last = ctx.state.get("last_sleep")
    assert last["next_try_at"] - last["finished_at"] == FAILED_WAIT_MAX_SECONDS, last
    assert len([r for r in ctx.state.get("history") if r["kind"] == "sleep"]) == 14     # one row a try


def test_a_new_brief_or_a_sleep_by_hand_does_not_wait_and_a_new_brief_starts_the_count_again(make_ctx, hand,
                                                                                              fake_model):
    ctx, brief = _failing(make_ctx, hand, fake_model)
    assert executor.check(ctx).to_dict()["sleep"]["error"]
    asked = len(fake_model.requests)
    by_hand = executor.sleep_by_hand(ctx).to_dict()             # a person asked: tried at once
    assert by_hand["error"] and len(fake_model.requests) > asked, by_hand
    assert by_hand["next_try_at"] == by_hand["finished_at"] + 600, by_hand     # the second failure in a row
    ctx.memory.consume_brief(brief, None)
    hand.brief("tea again, a new brief")
    asked = len(fake_model.requests)
    again = executor.check(ctx).to_dict()["sleep"]               # a new brief: not held by the old one's failures
    assert len(fake_model.requests) > asked and again["error"], again
    assert again["next_try_at"] == again["finished_at"] + 300, again     # its first failure
    fake_model.responder = scripted_model
    ctx.clock.set(again["next_try_at"])
    slept = executor.check(ctx).to_dict()["sleep"]
    assert slept["draft_id"] and slept["next_try_at"] is None, slept


def test_memory_refusing_the_draft_waits_and_memory_not_answering_does_not(make_ctx, hand, fake_model):
    from hippocampus.memory import MemoryRefused, MemoryUnavailable

    ctx, brief = _failing(make_ctx, hand, fake_model)
    fake_model.responder = scripted_model
    for exc, waits in ((MemoryUnavailable("POST", "/drafts", None, "closed the connection without answering"),
                        False),
                       (MemoryRefused("POST", "/drafts", 422, "operation 0 names no fragment"), True)):
        def refuse(body, exc=exc):
            raise exc
        ctx.memory.submit_draft = refuse
        failed = executor.check(ctx).to_dict()["sleep"]
        assert str(exc) in failed["error"] and bool(failed["next_try_at"]) is waits, failed
        asked = len(fake_model.requests)
        assert executor.check(ctx).to_dict()["status"] == ("waiting_after_failure" if waits else "sleeping")
        assert (len(fake_model.requests) == asked) is waits
