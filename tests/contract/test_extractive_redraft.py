"""model.write: extractive redrafts on the real SerenMemory with a scripted stand-in model and a scripted reviewer
(it acts only through Memory's routes): a denied operation of an extractive draft is answered by a choice, the
critique's own wording becomes the content word for word, the redraft names what it replaces and is the terminal
last attempt, and it lands; a critique that says "duplicate" withdraws it."""
from __future__ import annotations

import json
import re

from hippocampus.cycle import executor

TEA = "we drank green tea in the afternoon, day 0"
GARDEN = "the rose garden bloomed early this year, visit 0"
SAID = "We walked through the rose garden on Sunday"


def chooser(body: dict) -> str:
    """The stand-in: a draft keeps each pile's first fragment; a redraft takes the critique's first wording ([q1])
    when it has one, else withdraws."""
    prompt = body["messages"][-1]["content"]
    if "redrafting one operation" in prompt:
        if re.search(r"^\[q1\] ", prompt, re.M):
            return json.dumps({"operations": [{"words": "q1", "kind": "new_core", "target": None, "also": []}]})
        return json.dumps({"operations": []})
    return json.dumps({"operations": [{"words": "f1", "kind": "new_core", "target": None, "also": ["f2"]}]})


def seed(hand) -> None:
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
        hand.short(f"the rose garden bloomed early this year, visit {i}", topic="garden")
    hand.brief("tea and the garden mattered this week")


def first_draft(ctx, hand) -> tuple:
    first = hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])
    ops = {op["topic"]: op for op in first["operations"]}
    assert {t: op["content"] for t, op in ops.items()} == {"tea": TEA, "garden": GARDEN}, first
    return first, ops


def test_a_denied_extractive_operation_gets_an_extractive_redraft_in_the_critique_s_words_that_lands(
        make_ctx, hand, fake_model):
    fake_model.responder = chooser
    ctx = make_ctx(model={"url": fake_model.url, "write": "extractive"},
                   sleep={"max_attempts": 2, "promote_min_evidence": 2})
    seed(hand)
    first, ops = first_draft(ctx, hand)
    hand.review(first["id"], [{"op": ops["tea"]["index"], "verdict": "approve"},
                              {"op": ops["garden"]["index"], "verdict": "deny",
                               "critique": f'not what happened; say: "{SAID}"'}])
    tended = executor.tend(ctx).to_dict()
    [again] = tended["resubmitted"]
    asked = fake_model.requests[-1]
    assert asked["response_format"]["json_schema"]["name"] == "rechoose_operation"
    assert "[q1] " + SAID in asked["messages"][-1]["content"]
    nxt = hand.draft(again["draft_id"])
    [op] = nxt["operations"]
    assert op["content"] == SAID and op["kind"] == "new_core"          # the reviewer's words, nothing written
    assert op["redraft_of"] == ops["garden"]["index"]
    assert op["source_short_ids"] == ops["garden"]["source_short_ids"]  # it stands on the denied one's fragments
    assert nxt["attempt"] == 2 and nxt["terminal"] is True              # max_attempts 2: the last attempt
    earlier = hand.draft(again["draft_id"], review=True)["operations"][0]
    assert GARDEN in json.dumps(earlier), earlier                         # the reviewer sees what it replaces
    hand.approve_all(again["draft_id"])
    closed = executor.tend(ctx).to_dict()
    assert [c for c in closed["closed"]], closed
    landed = {c.get("content") for c in hand.long()}
    assert {TEA, SAID} <= landed, landed


def test_a_critique_that_calls_it_a_duplicate_withdraws_the_extractive_operation(make_ctx, hand, fake_model):
    fake_model.responder = chooser
    ctx = make_ctx(model={"url": fake_model.url, "write": "extractive"})
    seed(hand)
    first, ops = first_draft(ctx, hand)
    hand.review(first["id"], [{"op": ops["tea"]["index"], "verdict": "approve"},
                              {"op": ops["garden"]["index"], "verdict": "deny",
                               "critique": "a duplicate of what the tea memory already says"}])
    tended = executor.tend(ctx).to_dict()
    assert fake_model.requests[-1]["response_format"]["json_schema"]["name"] == "rechoose_operation"
    assert tended["resubmitted"] == [] and tended["withdrawn"] == {first["id"]: 1}, tended
    assert {c.get("content") for c in hand.long()} >= {TEA}
    assert GARDEN not in {c.get("content") for c in hand.long()}


def replayed_redraft(make_ctx, hand, fake_model, candidate) -> dict:
    """A 'say: SAID' redraft made live by `chooser`, then replayed on a second model answering as `candidate`
    does: the replay's one call."""
    from hippocampus.replay.run import ReplayEnv, replay
    from hippocampus.store.capture import store_for
    from tests.harness.fake_model import FakeModel

    fake_model.responder = chooser
    ctx = make_ctx(model={"url": fake_model.url, "write": "extractive"})
    seed(hand)
    first, ops = first_draft(ctx, hand)
    hand.review(first["id"], [{"op": ops["tea"]["index"], "verdict": "approve"},
                              {"op": ops["garden"]["index"], "verdict": "deny", "critique": f"say: {SAID}"}])
    [again] = executor.tend(ctx).to_dict()["resubmitted"]
    second = FakeModel(responder=candidate).start()
    ctx.cfg.replay.candidates = {"second": {"url": second.url, "model": "cand"}}
    try:
        result = replay(ReplayEnv(cfg=ctx.cfg, store=store_for(ctx.cfg), memory=ctx.memory), again["draft_id"],
                        candidate="second")
    finally:
        second.stop()
    [call] = result["candidate"]["calls"]
    assert result["candidate"]["checks"]["invented_numbers"] == []
    return call


def test_a_replay_of_an_extractive_redraft_reads_its_answer_as_choices_of_the_critique_s_words(
        make_ctx, hand, fake_model):
    call = replayed_redraft(make_ctx, hand, fake_model, chooser)
    assert call["stage"] == "redraft" and call["failure"] is None, call
    assert [op["content"] for op in call["ops"]] == [SAID]


def test_a_replay_reads_a_withdrawal_not_offered_as_the_live_redraft_did(make_ctx, hand, fake_model):
    """Found: a redraft whose critique says what to say reads a withdrawal as the critique's words (not offered);
    its replay read the same answer as withdrawn, so the two runs of one answer disagreed."""
    def withdraws(body: dict) -> str:
        if "redrafting one operation" in body["messages"][-1]["content"]:
            return json.dumps({"operations": []})
        return chooser(body)

    call = replayed_redraft(make_ctx, hand, fake_model, withdraws)
    assert call["failure"] is None and [op["content"] for op in call["ops"]] == [SAID], call
