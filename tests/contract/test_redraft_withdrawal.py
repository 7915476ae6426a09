"""A redraft may withdraw one denied operation and redraft another: the withdrawn one leaves the chain, and the
next attempt says so (extra.withdrawn_ops), so the soak's "nothing denied is dropped" check tells a withdrawal
from a loss."""
from __future__ import annotations

import json
import re

from hippocampus.cycle import executor
from tests.service.test_tend import scripted_model, slept_once
from tests.soak import invariants


def withdrawing_model(body: dict) -> dict:
    """Redrafts what the critique words ('say: ...'); withdraws what it says cannot land."""
    prompt = body["messages"][-1]["content"]
    if "THE CRITIQUE:" in prompt and "say:" not in prompt.split("THE CRITIQUE:", 1)[1].splitlines()[1]:
        return {"content": json.dumps({"operations": []})}
    return scripted_model(body)


def _snapshot(drafts: list) -> invariants.Snapshot:
    return invariants.Snapshot(drafts=drafts, briefs=[], near=[], long={}, tombstones=set(), rows={}, events=[],
                               status={}, history=[], files={}, model_pids=[], busy=False)


def test_a_redraft_that_withdraws_one_denied_operation_says_so_on_the_next_attempt(make_ctx, hand, fake_model):
    ctx, first = slept_once(make_ctx, hand, fake_model, withdrawing_model)
    assert len(first["operations"]) == 2, first
    hand.review(first["id"], [{"op": 0, "verdict": "deny", "critique": "its core was forgotten; this cannot land"},
                              {"op": 1, "verdict": "deny", "critique": "not quite; say: The roses bloomed early"}])
    tended = executor.tend(ctx).to_dict()
    [again] = tended["resubmitted"]
    assert tended["withdrawn"] == {first["id"]: 1}, tended
    nxt = hand.draft(again["draft_id"])
    assert [op["redraft_of"] for op in nxt["operations"]] == [1], nxt["operations"]
    assert nxt["extra"]["withdrawn_ops"] == [0], nxt["extra"]
    assert nxt["extra"]["withdrawn_why"] == {"0": "withdrawn by the model"}, nxt["extra"]     # and why
    assert invariants.drafts(_snapshot(hand.drafts()), None) == []
    unsaid = [dict(d, extra={}) if d["id"] == nxt["id"] else d for d in hand.drafts()]
    [lost] = invariants.drafts(_snapshot(unsaid), None)              # without the word on the draft: a loss
    assert lost.invariant == "a denied operation was dropped: not in the next attempt"
    assert re.search(r'"denied_ops": \[0\]', str(lost)), str(lost)


def test_a_withdrawal_as_the_restatement_of_a_core_holds_only_while_memory_holds_that_core():
    """The guard drops a redraft that restates a core already in memory (the spec's 'withdraw for what is already
    covered'); the draft names the core, and the soak's invariant accepts it only if Memory has that core."""
    first = {"id": "d1", "cluster_id": "d1", "attempt": 1, "status": "closed", "extra": {},
             "operations": [{"index": 0, "status": "denied", "critique": "not quite", "source_short_ids": ["s1"]},
                            {"index": 1, "status": "denied", "critique": "say: X", "source_short_ids": ["s2"]}]}
    nxt = {"id": "d2", "cluster_id": "d1", "attempt": 2, "status": "closed", "terminal": True,
           "extra": {"withdrawn_ops": [0], "withdrawn_why": {"0": "restates_core: core 1a2b3c4d5e6f"}},
           "operations": [{"index": 0, "status": "approved", "redraft_of": 1, "source_short_ids": ["s2"],
                           "long_term_id": "c9"}]}
    held = _snapshot([first, nxt])
    held.long.update({"1a2b3c4d5e6f7a8b": {"id": "1a2b3c4d5e6f7a8b"}, "c9": {"id": "c9"}})
    assert [v.invariant for v in invariants.drafts(held, None)
            if v.invariant.startswith("a denied operation")] == []
    gone = _snapshot([first, nxt])
    gone.long.update({"c9": {"id": "c9"}})
    assert [v.invariant for v in invariants.drafts(gone, None)
            if v.invariant.startswith("a denied operation")] == ["a denied operation was dropped: not in the next attempt"]
