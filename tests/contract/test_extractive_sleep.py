"""model.write: extractive (issue 39, items 4 and 5) on the real SerenMemory with a scripted stand-in model, no
threads: the model is shown the nearest cores by index and a suggested correction, chooses, and the draft in
Memory holds the supersede of the right core in the fragment's own words."""
from __future__ import annotations

import json
import re

from hippocampus.cycle import executor
from hippocampus.model import size

LYON = "Sam moved to Lyon in March for the new job at the lab."
DINNER = "Dinner with Sam on Friday, he showed photos of the river."


def core(hand, content: str, topic: str) -> str:
    """A long-term core, as the main model makes one (a fragment promoted word for word)."""
    sid = hand.short(content, topic=topic)
    return hand._req("POST", f"/short/{sid}/promote")["long_term_id"]


def follows_the_suggestion(body: dict) -> str:
    """The stand-in: it takes the prompt's suggested correction if there is one, else keeps each fragment."""
    prompt = body["messages"][-1]["content"]
    m = re.search(r"If so: (\{.*\})", prompt)
    if m:
        return json.dumps({"operations": [json.loads(m.group(1))]})
    return json.dumps({"operations": [{"words": "f1", "kind": "new_core", "target": None, "also": []}]})


def test_a_correction_lands_as_a_supersede_of_the_right_core_in_the_fragments_own_words(make_ctx, hand,
                                                                                         fake_model):
    paris = core(hand, "Sam lives in Paris.", "sam, home")
    printer = core(hand, "The printer on the second floor has 2 trays.", "printer")
    lyon = hand.short(LYON, topic="sam, home")
    dinner = hand.short(DINNER, topic="sam, home")
    hand.brief("Sam came by; he has moved.")
    fake_model.responder = follows_the_suggestion
    ctx = make_ctx(model={"url": fake_model.url, "write": "extractive"})
    report = executor.check(ctx).to_dict()
    assert report["status"] == "sleeping", report
    [asked] = fake_model.requests
    fmt = asked["response_format"]["json_schema"]
    assert fmt["name"] == "extract_operations"
    prompt = asked["messages"][-1]["content"]
    shown = dict(re.findall(r"^\[(c\d+)\] (.*?) \(\d+ satellites\)$", prompt, re.M))
    assert "Sam lives in Paris." in shown.values(), prompt
    [draft] = hand.drafts("pending")
    [op] = draft["operations"]
    assert op["kind"] == "supersede"
    assert op["target_core_id"] == paris != printer
    assert op["content"] == LYON                          # the fragment's words, nothing written
    assert op["source_short_ids"] == [lyon] and dinner not in op["source_short_ids"]


def test_an_answer_of_choices_outside_the_pile_sends_nothing_made_up(make_ctx, hand, fake_model):
    core(hand, "Sam lives in Paris.", "sam, home")
    hand.short(LYON, topic="sam, home")
    hand.short(DINNER, topic="sam, home")
    hand.brief("Sam came by.")
    fake_model.replies = [json.dumps({"operations": [
        {"words": "f7", "kind": "new_core", "target": None, "also": []},                 # no such fragment
        {"words": "f1", "kind": "supersede", "target": "c9", "also": []},                # no such core
        {"kind": "new_core", "content": "Sam is 41 and lives in Rome", "fragments": ["f1"]},   # written, not chosen
        {"words": "f2", "kind": "new_core", "target": None, "also": []}]})]
    ctx = make_ctx(model={"url": fake_model.url, "write": "extractive"})
    executor.check(ctx)
    [draft] = hand.drafts("pending")
    assert [(o["kind"], o["content"]) for o in draft["operations"]] == [("new_core", DINNER)]


def test_auto_drafts_extractive_for_a_model_that_says_it_is_small(make_ctx, hand, fake_model):
    hand.short(LYON, topic="sam, home")
    hand.short(DINNER, topic="sam, home")
    hand.brief("Sam came by.")
    fake_model.meta = {"n_params": 134_515_008, "n_vocab": 49152}
    fake_model.responder = follows_the_suggestion
    ctx = make_ctx(model={"url": fake_model.url, "write": "auto"})
    executor.check(ctx)
    assert fake_model.requests[-1]["response_format"]["json_schema"]["name"] == "extract_operations"
    [draft] = hand.drafts("pending")
    assert [o["content"] for o in draft["operations"]] == [LYON]
    assert size.view("auto", ctx.model.learned.chosen)["mode"] == "extractive"


def test_auto_writes_free_for_a_model_that_does_not_say_its_size(make_ctx, hand, fake_model):
    hand.short(LYON, topic="sam, home")
    hand.short(DINNER, topic="sam, home")
    hand.brief("Sam came by.")
    fake_model.replies = [json.dumps({"operations": [{"kind": "new_core", "content": "Sam lives in Lyon.",
                                                      "fragments": ["f1"]}]})]
    ctx = make_ctx(model={"url": fake_model.url})
    executor.check(ctx)
    assert fake_model.requests[-1]["response_format"]["json_schema"]["name"] == "draft_operations"
    [draft] = hand.drafts("pending")
    assert [o["content"] for o in draft["operations"]] == ["Sam lives in Lyon."]
    assert "does not say its size" in size.view("auto", ctx.model.learned.chosen)["why"]
