"""The brief card after a check, on the chain's snapshot read from the real Memory: a chain whose every operation
was denied waits for a redraft, not for review."""
from __future__ import annotations

from hippocampus.cycle import executor
from hippocampus.cycle.snapshot import Snapshot
from hippocampus.status.narrator import narrate
from tests.service.test_tend import seed
from tests.unit.test_narrator import HEALTHY, NOW


def test_the_brief_card_of_a_chain_waiting_for_a_redraft_does_not_call_its_draft_under_review(make_config, make_ctx,
                                                                                              hand):
    cfg = make_config()
    seed(hand)
    draft_id = executor.check(make_ctx(cfg)).to_dict()["sleep"]["draft_id"]
    ops = hand.drafts("pending")[0]["operations"]
    hand.review(draft_id, [{"op": op["index"], "verdict": "deny", "critique": "not this"} for op in ops])
    chain = Snapshot(at=NOW, drafts=tuple(hand.drafts("pending") + hand.drafts("reviewed")),
                     briefs=tuple(hand.open_briefs())).summary()
    say = narrate({**HEALTHY, "chain": chain}, NOW)
    assert "wait for a redraft" in say["headline"], say["headline"]
    card = say["cards"]["brief"]
    assert card["main"] == "In use" and "under review" not in card["sub"] and "redraft" in card["sub"], card
