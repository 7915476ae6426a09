"""Two copies on one Memory take turns, so the copy that closes a chain need not be the one that slept: the briefs
written before that chain's own are retired all the same (its state never saw the brief's time). Real SerenMemory."""
from __future__ import annotations

from hippocampus.cycle import copies, executor


def test_a_chain_closed_by_the_other_copy_still_retires_the_older_brief(make_ctx, hand, tmp_path):
    a, b = (make_ctx(sleep={"state_path": str(tmp_path / name / "state.json")}) for name in "ab")
    for ctx in (a, b):
        copies.announce(ctx)
    older = hand.brief("the owl, first ask")
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    newer = hand.brief("the owl, asked again")
    draft_id = executor.check(a).to_dict()["sleep"]["draft_id"]              # a sleeps on the newer brief
    assert [d["brief_id_used"] for d in hand.drafts("pending")] == [newer]
    hand.approve_all(draft_id)
    assert executor.tend(b).to_dict()["closed"] == [draft_id]                  # b takes its turn and closes it
    assert hand.open_briefs() == [], f"the older brief {older} is left open: the next check sleeps on it"
    assert executor.check(b).to_dict()["brief_id"] != older
