"""What /status says of the draft under review agrees with Memory: a draft partly reviewed (Memory allows deciding
some operations now and the rest later) is not said to wait whole."""
from __future__ import annotations

from hippocampus.cycle.snapshot import read_for
from hippocampus.status.narrator import narrate
from tests.service.test_tend import slept_once


def test_a_partly_reviewed_draft_is_said_with_the_operations_still_undecided(make_ctx, hand, fake_model):
    ctx, draft = slept_once(make_ctx, hand, fake_model)
    assert len(draft["operations"]) == 2, draft
    hand.review(draft["id"], [{"op": draft["operations"][0]["index"], "verdict": "approve"}])
    [still] = hand.drafts("pending")
    undecided = [o for o in still["operations"] if o.get("status", "pending") == "pending"]
    assert len(undecided) == 1, still                               # Memory: one left to decide
    now = ctx.clock.now()
    headline = narrate({"memory": {"reachable": True}, "actors": {}, "chain": read_for(ctx).summary(),
                        "bedtime_at": now + 3600}, now)["headline"]
    assert "1 operation still to decide" in headline, headline
