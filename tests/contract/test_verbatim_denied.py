"""A fragment marked verbatim whose operation the reviewer denied: the hippocampus never redrafts a word-for-word
mark, so the chain ends there, and the denial is final. Memory releases the mark on a terminal denial; the
hippocampus releases it when it ends the chain earlier, or the next sleep proposes the same denied memory again,
every night (the mark pins it against aging out)."""
from __future__ import annotations

import json

from hippocampus.cycle import executor


def _deny_the_verbatim_and_tend(ctx, hand) -> str:
    sid = hand.short("my grandmother's exact words: keep the kettle warm", topic="family")
    hand.preserve(sid)
    hand.brief("family mattered")
    first = hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])
    assert [o["kind"] for o in first["operations"]] == ["verbatim"], first["operations"]
    hand.review(first["id"], [{"op": 0, "verdict": "deny", "critique": "not worth keeping word for word"}])
    assert executor.tend(ctx).to_dict()["closed"] == [first["id"]]
    return sid


def _next_night(ctx, hand) -> list:
    hand.brief("another day")
    executor.check(ctx)
    return [o for d in hand.drafts("pending") for o in d["operations"]]


def test_a_denied_verbatim_is_not_proposed_again_the_next_night(make_ctx, hand, fake_model):
    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.replies = [json.dumps({"operations": []})] * 4
    sid = _deny_the_verbatim_and_tend(ctx, hand)
    assert _next_night(ctx, hand) == []
    [left] = [s for s in hand.shorts() if s["id"] == sid]          # still there, an ordinary memory now
    assert not left["metadata"].get("verbatim") and not left["metadata"].get("pinned"), left["metadata"]


def test_a_denied_verbatim_is_not_proposed_again_in_mechanical_mode(make_ctx, hand):
    ctx = make_ctx()
    _deny_the_verbatim_and_tend(ctx, hand)
    assert [o["kind"] for o in _next_night(ctx, hand)] == []


def test_a_denied_verbatim_beside_a_redrafted_operation_is_withdrawn_for_its_mark_not_by_the_model(
        make_ctx, hand, fake_model, caplog):
    """The next attempt and the log say why the verbatim left the chain: the word-for-word rule, not the model."""
    import logging

    from tests.service.test_tend import scripted_model, seed

    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.responder = scripted_model
    seed(hand)
    hand.preserve(hand.short("my grandmother's exact words: keep the kettle warm", topic="family"))
    first = hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])
    [kept] = [o["index"] for o in first["operations"] if o["kind"] == "verbatim"]
    hand.review(first["id"], [{"op": o["index"], "verdict": "deny",
                               "critique": "not word for word" if o["index"] == kept
                               else "not quite; say: " + o["content"] + " too"}
                              for o in first["operations"]])
    with caplog.at_level(logging.INFO, logger="hippocampus"):
        [again] = executor.tend(ctx).to_dict()["resubmitted"]
    why = hand.draft(again["draft_id"])["extra"]["withdrawn_why"][str(kept)]
    assert "by the model" not in why and "word for word" in why, why
    said = [r.getMessage() for r in caplog.records if "was withdrawn by the redraft" in r.getMessage()]
    assert len(said) == 1 and "word for word" in said[0], said
