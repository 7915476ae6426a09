"""What the soak (issue 17) found, each pinned by a test of its own."""
from __future__ import annotations

import time

from hippocampus import gate
from hippocampus.clock import FakeClock
from hippocampus.tend import tend
from tests.service.test_tend import scripted_model


# ---------------------------------------------------------------- a redraft with one answer lost

def test_a_redraft_that_loses_one_answer_submits_nothing_and_the_next_redrafts_every_denial(
        make_ctx, hand, fake_model):
    """The model died mid-answer on the first of two denied operations: the redraft used to submit the
    second alone, and the first (with its critique) was never seen again."""
    calls = {"redraft": 0}

    def responder(body: dict) -> dict:
        if "THE CRITIQUE" in body["messages"][-1]["content"]:
            calls["redraft"] += 1
            if calls["redraft"] == 1:
                return {"status": 500, "content": "the server went away mid-answer"}
        return scripted_model(body)

    fake_model.responder = responder
    ctx = make_ctx(clock=FakeClock(time.time()), model={"url": fake_model.url})
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
        hand.short(f"the rose garden bloomed early this year, visit {i}", topic="garden")
    hand.brief("tea and the garden")
    first = gate.check(ctx)["sleep"]["draft_id"]
    ops = hand.draft(first)["operations"]
    assert len(ops) == 2
    hand.review(first, [{"op": op["index"], "verdict": "deny", "critique": f"not quite; say: version {op['index']}"}
                        for op in ops])

    report = tend(ctx)
    assert report["resubmitted"] == [] and len(report["model_failures"]) == 1, report
    assert [d["id"] for d in hand.drafts()] == [first]          # nothing half-submitted
    assert [e["type"] for e in ctx.events.list() if e["type"] == "redraft_failed"] == ["redraft_failed"]

    report = tend(ctx)                                          # the model is back: both are redrafted
    assert len(report["resubmitted"]) == 1, report
    second = next(d for d in hand.drafts() if d["attempt"] == 2)
    assert sorted(op["redraft_of"] for op in second["operations"]) == [0, 1]
    assert sorted(op["content"] for op in second["operations"]) == ["version 0", "version 1"]
