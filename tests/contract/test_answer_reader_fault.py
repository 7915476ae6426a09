"""The answer reader never takes a sleep down: when reading one answer raises (a fault of this service's own
code, not a bad answer, which it words itself), that pile counts as the model's failure, in words, and the
other piles still land; with every pile failed the sleep fails and keeps its brief."""
from __future__ import annotations

import logging

import pytest

from hippocampus.cycle import executor
from hippocampus.drafting import answer
from tests.conftest import event_types
from tests.service.test_tend import scripted_model, seed


@pytest.fixture
def reader_fault(monkeypatch):
    """Reading the answer about `topics` raises inside the reader (past its own checks)."""
    real, topics = answer._operations, set()

    def faulty(raw, markers, redraft_of, dropped):
        if any(str(op.get("content", "")).endswith(tuple(topics)) for op in raw if isinstance(op, dict)):
            raise KeyError("a fault inside the reader")
        return real(raw, markers, redraft_of, dropped)
    monkeypatch.setattr(answer, "_operations", faulty)
    return topics


def test_a_fault_reading_one_answer_costs_that_pile_only(make_ctx, hand, fake_model, reader_fault, caplog):
    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.responder = scripted_model
    seed(hand)
    reader_fault.add("tea")
    with caplog.at_level(logging.ERROR, logger="hippocampus"):
        report = executor.check(ctx).to_dict()["sleep"]
    assert report["error"] is None and report["draft_id"], report
    assert [f["topic"] for f in report["model_failures"]] == ["tea"], report
    assert report["model_failures"][0]["why"].startswith("could not read the model's answer: "), report
    assert "a fault inside the reader" in report["model_failures"][0]["why"]
    [draft] = hand.drafts("pending")
    assert [op["content"] for op in draft["operations"]] == ["Something true about garden"]
    assert "draft_failed" in event_types(ctx)
    assert any("reading the model's answer raised" in r.getMessage() for r in caplog.records)


def test_a_fault_reading_every_answer_fails_the_sleep_and_keeps_its_brief(make_ctx, hand, fake_model,
                                                                         reader_fault):
    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.responder = scripted_model
    brief = seed(hand)
    reader_fault.update({"tea", "garden"})
    report = executor.check(ctx).to_dict()["sleep"]
    assert report["error"].startswith("the model could not draft: "), report
    assert "could not read the model's answer" in report["error"]
    assert hand.drafts("pending") == []
    assert brief in [b["id"] for b in hand.open_briefs()]            # kept for the next check
