"""Piles drafted at once (model.parallel, issue 40): on the real SerenMemory with a scripted model whose answers
take about a second, a night of three piles has calls in flight together, and the draft it submits holds the
same operations in the same order as a night drafted one pile at a time; a call budget stops new piles in pile
order and keeps the fragments of those it did not draft."""
from __future__ import annotations

import json
import threading

from hippocampus.cycle import executor

DAY = 86400.0
TOPICS = ("tea", "garden", "bread")
SECONDS = (1.4, 1.0, 0.6)       # by the call's turn: the first pile's answer comes last


def seed(hand) -> dict:
    return {t: [hand.short(f"a note about {t}, day {i}", topic=t) for i in range(3)] for t in TOPICS}


class Scripted:
    """Per pile: two operations in the fragments' own words, the answer delayed by SECONDS; the most calls seen in
    flight at once, read as each call is answered."""

    def __init__(self, fake_model) -> None:
        self.fake_model, self.most, self.turn = fake_model, 0, 0
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> dict:
        with self.fake_model.lock:
            in_flight = self.fake_model.in_flight
        with self.lock:
            self.most = max(self.most, in_flight)
            delay, self.turn = SECONDS[self.turn % len(SECONDS)], self.turn + 1
        prompt = body["messages"][-1]["content"]
        topic = next(t for t in TOPICS if f"a note about {t}" in prompt)
        ops = [{"kind": "new_core", "content": f"a note about {topic}, day {d}", "fragments": ["f1", "f2", "f3"],
                "target": None, "rationale": "the fragments say so"} for d in (0, 1)]
        return {"content": json.dumps({"operations": ops}), "delay": delay}


def night(make_ctx, hand, fake_model, state, parallel: int, **budget) -> tuple:
    """One sleep on a fresh store: (the report, the submitted operations as a person reads them, the seeds,
    the most calls seen in flight at once)."""
    scripted = Scripted(fake_model)
    fake_model.responder, fake_model.requests = scripted, []
    ctx = make_ctx(model={"url": fake_model.url, "write": "free", "parallel": parallel},
                   sleep={"state_path": str(state / "state.json"), **({"budget": budget} if budget else {})})
    frags = seed(hand)
    hand.brief("a week of small things", promote=list(TOPICS))
    report = executor.check(ctx).to_dict()["sleep"]
    ops = hand.draft(report["draft_id"])["operations"] if report["draft_id"] else []
    by_id = {f: t for t, fs in frags.items() for f in fs}
    read = [(op["kind"], op["topic"], op["content"],
             sorted(by_id.get(f, f) for f in op.get("source_short_ids") or [])) for op in ops]
    return report, read, frags, scripted.most


def test_three_piles_drafted_at_once_submit_what_one_at_a_time_submits(make_ctx, hand, memory, fake_model,
                                                                      tmp_path):
    one, one_ops, _, one_most = night(make_ctx, hand, fake_model, tmp_path / "one", parallel=1)
    memory.fresh_store(tmp_path / "store-at-once")
    three, three_ops, _, three_most = night(make_ctx, hand, fake_model, tmp_path / "three", parallel=3)
    assert one["error"] is None and three["error"] is None, (one["error"], three["error"])
    assert one_most == 1 and three_most >= 2             # one at a time, then calls in flight together
    assert len(fake_model.requests) == 3
    assert len(one_ops) == 6 and all(len(op[3]) == 3 and set(op[3]) == {op[1]} for op in one_ops)
    assert three_ops == one_ops                          # the same operations, in the same order
    assert three["operations"] == one["operations"] == 6 and three["model_calls"] == 3
    assert three["guard"] == one["guard"] and three["write"] == one["write"]


def test_a_call_budget_of_two_drafts_two_piles_at_once_and_keeps_the_third(make_ctx, hand, memory, fake_model,
                                                                          tmp_path):
    memory.set_lifetimes(short_term_seconds=3600)
    report, ops, frags, most = night(make_ctx, hand, fake_model, tmp_path / "budget", parallel=3, calls=2)
    assert len(fake_model.requests) == 2 and most >= 1
    assert report["budget"]["limit"] == "calls" and "sleep.budget.calls (2)" in report["budget"]["reason"]
    drafted = {op[1] for op in ops}
    undrafted = [p["topic"] for p in report["budget"]["undrafted"]]
    assert len(drafted) == 2 and len(undrafted) == 1 and undrafted[0] not in drafted
    assert report["operations"] == len(ops) == 4
    left = {s["id"] for s in hand.shorts()}
    assert all(f in left for f in frags[undrafted[0]])   # the third pile's fragments wait for the next night
    assert [p["fragments"] for p in report["budget"]["undrafted"]] == [3]
