"""The grounding guard between the answer reader and Memory (issue 39 items 3 and 6, issue 38 item 9), on the real
SerenMemory with a scripted stand-in model: what is untrue never reaches Memory's drafts, and it is said."""
from __future__ import annotations

import json
import time

import requests

from hippocampus.cycle import executor
from tests.conftest import event_types
from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import wait_for

DAY = 86400.0
GOOD = "Anna and I did 12 routes at the climbing gym"
BAD = {
    "ungrounded": "Anna and I did 30 routes at the climbing gym",          # 30: in none of the fragments
    "cross_pile": "The tomatoes in the garden grew 40 kilos this summer",    # the garden pile's words, cited here
    "placeholder": "...",
    "schema": "<text>",
    "oversize": "climbing " * 3000,                                         # 27,000 characters, cap 2000 x 8
    "not_shown": "Anna climbs at the gym",                                  # cites f9: no such fragment here
}


def op(content, fragments=("f1",), kind="new_core", target=None) -> dict:
    return {"kind": kind, "content": content, "fragments": list(fragments), "target": target,
            "rationale": "from the fragments"}


def answer(*ops) -> str:
    return json.dumps({"operations": list(ops)})


def climbing_answer() -> str:
    return answer(op(GOOD), op(BAD["ungrounded"]), op(GOOD + " on Tuesday", fragments=["f1", "f2"]),
                  op(BAD["cross_pile"], fragments=["f2"]), op(BAD["placeholder"]), op(BAD["schema"]),
                  op(BAD["oversize"]), op(BAD["not_shown"], fragments=["f9"]))


def by_topic(replies: dict):
    def respond(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        topic = prompt.split("Topic: ", 1)[1].split("\n", 1)[0]
        return replies.get(topic, '{"operations": []}')
    return respond


def seed(hand) -> None:
    hand.short("Met Anna at the climbing gym on Tuesday, we did 12 routes", topic="climbing")
    hand.short("The climbing gym is open late on Tuesday", topic="climbing")
    for what in ("new shoes feel tight", "chalk bag is nearly empty", "forearms sore after the session",
                 "the overhang wall got new holds", "belay check passed"):     # 7 fragments: room for 8 answers
        hand.short(f"Climbing: {what}", topic="climbing")
    hand.short("The tomatoes in the garden grew 40 kilos this summer", topic="garden")
    hand.short("Watered the garden tomatoes twice", topic="garden")


def test_untrue_operations_never_reach_memory_and_are_named_everywhere(make_config, start_service, hand):
    model = FakeModel(responder=by_topic({"climbing": climbing_answer()})).start()
    try:
        seed(hand)
        brief = hand.brief("climbing with Anna")
        svc = start_service(make_config(model={"url": model.url, "max_tokens": 2000}))
        report = requests.post(svc.url + "/check", timeout=60).json()
        assert report["status"] == "sleeping", report
        sleep = report["sleep"]
        ops = hand.draft(sleep["draft_id"])["operations"]            # read back from Memory
        contents = [o["content"] for o in ops]
        assert contents == [GOOD + " on Tuesday"], contents          # the duplicate merged into the good one
        climbing = {s["content"]: s["id"] for s in hand.shorts() if s["metadata"]["topic"] == "climbing"}
        assert climbing["Met Anna at the climbing gym on Tuesday, we did 12 routes"] in ops[0]["source_short_ids"]
        assert set(ops[0]["source_short_ids"]) <= set(climbing.values())   # its own pile's fragments only
        for text in BAD.values():
            assert all(text.strip() not in c for c in contents)
        dropped = sleep["guard"]["dropped"]
        assert dropped == {"numbers": 2, "placeholder": 2, "oversize": 1, "foreign": 1}, dropped
        assert sleep["guard"]["repaired"] == {"merged": 1}
        words = "6 operations dropped: numbers in none of their fragments (2), placeholders, not memories (2)"
        events = requests.get(svc.url + "/events", timeout=10).json()["entries"]
        said = [e for e in events if e["type"] == "operations_dropped"]
        assert len(said) == 1 and said[0]["dropped"] == 6 and said[0]["words"].startswith(words), said
        assert said[0]["brief_id"] == brief
        status = requests.get(svc.url + "/status", timeout=10).json()
        card = status["say"]["cards"]["last_sleep"]["sub"]
        assert words in card and "longer than the answer cap allows" in card, card
        assert "citing fragments outside their pile" in card

        def quality():
            rep = requests.get(svc.url + "/quality", timeout=10).json()
            return rep if rep.get("ready") and rep.get("groups") else None
        rep = wait_for(quality, timeout=30, interval=0.2, what="the quality report")
        assert rep["total"]["guard_dropped"] == 6 and rep["total"]["guard_reasons"]["numbers"] == 2
        assert "6 more dropped by the grounding guard before review" in rep["message"]
    finally:
        model.stop()


def test_a_promoted_pile_the_model_passed_over_stays_in_short_term(make_ctx, hand, memory, fake_model):
    memory.set_lifetimes(short_term_seconds=3600)
    ctx = make_ctx(model={"url": fake_model.url})
    ctx.state.set(last_sleep_ok_at=ctx.clock.now() - 3600)            # not a catch-up: this sleep ages out
    old = time.time() - 2 * DAY
    kept = [hand.short(f"Anna and I climbed the north face, day {i}", topic="climbing", ts=old) for i in range(2)]
    other = hand.short("an old note about the weather", topic="weather", ts=old)
    hand.brief("climbing", promote=["climbing"])
    fake_model.replies = ['{"operations": []}']
    report = executor.check(ctx).to_dict()["sleep"]
    assert report["error"] is None and report["operations"] == 0
    left = [s["id"] for s in hand.shorts()]
    assert all(k in left for k in kept), left                        # not aged out: nobody reviewed them
    assert report["kept_back"][0]["topic"] == "climbing" and report["kept_back"][0]["fragments"] == 2
    assert report["kept_back"][0]["why"] == "the model proposed nothing"
    assert "aged_out" not in report["tidy"]
    assert other in left                                              # nothing aged out this sleep
    assert "kept_for_next_sleep" in event_types(ctx)
    from hippocampus.status.lists import sleep_words
    assert "2 fragments on 'climbing' kept for the next sleep, not aged out" in sleep_words(report)


def test_a_promoted_pile_whose_every_operation_was_dropped_stays_too(make_ctx, hand, memory, fake_model):
    memory.set_lifetimes(short_term_seconds=3600)
    ctx = make_ctx(model={"url": fake_model.url})
    ctx.state.set(last_sleep_ok_at=ctx.clock.now() - 3600)
    old = time.time() - 2 * DAY
    kept = [hand.short(f"Anna and I climbed the north face, day {i}", topic="climbing", ts=old) for i in range(2)]
    hand.brief("climbing", promote=["climbing"])
    fake_model.replies = [answer(op("We climbed 40 peaks in Nepal with Bertrand"), op("..."))]
    report = executor.check(ctx).to_dict()["sleep"]
    assert hand.drafts() == [] and report["operations"] == 0
    assert all(k in [s["id"] for s in hand.shorts()] for k in kept)
    assert report["kept_back"][0]["why"] == "the guard dropped every operation the model proposed"


def test_a_redraft_is_guarded_the_same_way(make_ctx, hand, fake_model):
    from tests.service.test_tend import scripted_model, seed as seed_tea_and_garden

    def inventing(body: dict):
        prompt = body["messages"][-1]["content"]
        if "THE CRITIQUE:" in prompt:            # the redraft brings a number and a name nothing it was shown has
            return answer(op("The rose garden won 7 prizes with Bertrand", fragments=["f1"]),
                          op("...", fragments=["f1"]))
        return scripted_model(body)
    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.responder = inventing
    seed_tea_and_garden(hand)
    first = hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])
    garden = next(o for o in first["operations"] if "garden" in o["topic"])
    hand.review(first["id"], [{"op": o["index"], "verdict": "deny" if o is garden else "approve",
                               "critique": "too thin; say more about the roses"} for o in first["operations"]])
    tended = executor.tend(ctx).to_dict()
    assert [d["attempt"] for d in hand.drafts()] == [1]                     # nothing untrue was sent
    assert tended["withdrawn"] == {first["id"]: 1} and tended["resubmitted"] == []
    assert tended["guard"]["dropped"] == {"numbers": 1, "placeholder": 1}, tended
    said = [e for e in ctx.events.list(limit=100) if e["type"] == "operations_dropped"]
    assert said and said[0]["stage"] == "redraft" and "numbers in none of their fragments" in said[0]["words"]
    from hippocampus.status.lists import tend_words
    assert "in the redrafts 2 operations dropped: numbers in none of their fragments (1)" in tend_words(tended)


def test_a_promoted_pile_passed_over_beside_a_draft_outlives_that_chain_s_landing(make_ctx, hand, memory, fake_model):
    memory.set_lifetimes(short_term_seconds=3600)
    ctx = make_ctx(model={"url": fake_model.url})
    ctx.state.set(last_sleep_ok_at=ctx.clock.now() - 3600)
    old = time.time() - 2 * DAY
    kept = [hand.short(f"Anna and I climbed the north face, day {i}", topic="climbing", ts=old) for i in range(2)]
    for i in range(2):
        hand.short(f"the rose garden bloomed early, visit {i}", topic="garden")
    hand.brief("climbing and the garden", promote=["climbing"])
    fake_model.responder = by_topic({"garden": answer(op("The rose garden bloomed early", fragments=["f1", "f2"]))})
    report = executor.check(ctx).to_dict()["sleep"]
    assert report["draft_id"] and [k["topic"] for k in report["kept_back"]] == ["climbing"], report
    from hippocampus.status.lists import sleep_words
    assert "on 'climbing' kept for the next sleep, not aged out" in sleep_words(report)
    hand.approve_all(report["draft_id"])
    tended = executor.tend(ctx).to_dict()
    assert tended["closed"], tended                                   # the chain landed and its tidy ran
    assert all(k in [s["id"] for s in hand.shorts()] for k in kept)   # ... and aged none of them out
