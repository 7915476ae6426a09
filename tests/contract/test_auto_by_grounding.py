"""model.write: auto by the measured grounding rate on the real SerenMemory with a scripted stand-in model: each
sleep records how many of the operations the model wrote the guard kept, and a model whose written operations
were mostly ungrounded (fewer than half of at least ten) drafts extractive from the next sleep on."""
from __future__ import annotations

import json


from hippocampus.cycle import executor
from hippocampus.cycle.drafter import model_key

INVENTED = json.dumps({"operations": [
    {"kind": "new_core", "content": "Sam is 41 and lives in Rome since 2019", "fragments": ["f1"], "target": None},
    {"kind": "new_core", "content": "Sam moved to Lyon in March for the new job", "fragments": ["f1"], "target": None}]})
CHOICE = json.dumps({"operations": [{"words": "f1", "kind": "new_core", "target": None, "also": []}]})


def night(hand, day: int) -> None:
    hand.short(f"Sam moved to Lyon in March for the new job, day {day}", topic="sam")
    hand.short(f"Sam moved to Lyon in March for the new job, said again on day {day}", topic="sam")
    hand.brief(f"Sam's move, day {day}")


def test_a_model_whose_written_operations_were_mostly_dropped_drafts_extractive_from_the_next_sleep(
        make_ctx, hand, fake_model):
    ctx = make_ctx(model={"url": fake_model.url, "write": "auto"})     # the server does not say its size: free
    me = model_key(ctx)
    ctx.state.add_history({"kind": "sleep", "write": {"mode": "free", "model": me, "proposed": 8, "grounded": 3}})
    night(hand, 1)
    fake_model.replies = [INVENTED]
    executor.check(ctx)
    assert fake_model.requests[-1]["response_format"]["json_schema"]["name"] == "draft_operations"
    row = ctx.state.get("history")[-1]
    assert row["kind"] == "sleep" and row["write"] == {"mode": "free", "model": me, "proposed": 2, "grounded": 1}
    [draft] = hand.drafts("pending")                          # the grounded one went to review, the 41 did not
    assert [op["content"] for op in draft["operations"]] == ["Sam moved to Lyon in March for the new job"]
    hand.approve_all(draft["id"])
    executor.tend(ctx)                                         # the chain lands and closes

    night(hand, 2)                                            # 4 of 10 grounded: below half
    fake_model.replies = [CHOICE]
    executor.check(ctx)
    assert fake_model.requests[-1]["response_format"]["json_schema"]["name"] == "extract_operations"
    assert ctx.state.get("history")[-1]["write"]["mode"] == "extractive"
