"""A redraft whose POST Memory wrote but did not answer in time (a timeout after the write) is a redraft
resubmitted: said (tend_resubmitted, which wakes the reviewer), never a failed tend that leaves the new attempt
waiting for a review nobody is asked for."""
from __future__ import annotations

from hippocampus.cycle import executor
from hippocampus.memory import MemoryUnavailable
from tests.conftest import event_types
from tests.service.test_tend import garden_denied


def test_a_redraft_that_landed_but_was_not_answered_is_said_and_waits_for_review(make_ctx, hand, fake_model):
    ctx, first = garden_denied(make_ctx, hand, fake_model)
    real = ctx.memory.submit_draft

    def landed_unanswered(body):
        real(body)
        raise MemoryUnavailable("POST", "/drafts", None, "did not answer within 30 s (memory.timeout_seconds)")
    ctx.memory.submit_draft = landed_unanswered
    tended = executor.tend(ctx).to_dict()
    [second] = [d for d in hand.drafts("pending") if d["attempt"] == 2]
    assert tended["error"] is None, tended["error"]
    assert [r["draft_id"] for r in tended["resubmitted"]] == [second["id"]]
    assert "tend_resubmitted" in event_types(ctx)          # the ripple's cue to ask for the review
