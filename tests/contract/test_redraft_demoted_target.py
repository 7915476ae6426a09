"""A denied attach whose core was superseded meanwhile (another operation of the same draft, approved): Memory
keeps the old core as a satellite of the new one, and refuses a draft that attaches to a satellite (400). The
redraft must not show it as the target to keep, or every tend's redraft is refused and the chain never ends."""
from __future__ import annotations

import json
import re

from hippocampus.cycle import executor

BLUE, YELLOW, CHEERFUL = ("the front door is painted blue", "we painted the front door yellow today",
                          "the yellow door looks cheerful")


def door_model(body: dict) -> dict:
    """The draft: supersede the blue core, attach the cheer to it. The redraft keeps the target it is shown, as
    the prompt's rules say when the critique is silent on it; with none shown, the first core listed."""
    prompt = body["messages"][-1]["content"]
    frags = dict((text, m) for m, text in re.findall(r"^\[(f\d+)\] (.+) \(", prompt, flags=re.M))
    cores = re.findall(r"^\[(c\d+)\]", prompt, flags=re.M)
    if "THE CRITIQUE:" in prompt:
        shown = re.search(r"^  target: \[(c\d+)\]", prompt, flags=re.M)
        ops = [{"kind": "attach", "content": CHEERFUL, "fragments": list(frags.values())[:1],
                "target": shown.group(1) if shown else cores[0], "rationale": "as the critique says"}]
    else:
        ops = [{"kind": "supersede", "content": YELLOW, "fragments": [frags[YELLOW]], "target": cores[0],
                "rationale": "the door changed colour"},
               {"kind": "attach", "content": CHEERFUL, "fragments": [frags[CHEERFUL]], "target": cores[0],
                "rationale": "more about the door"}]
    return {"content": json.dumps({"operations": ops})}


def test_a_redraft_never_keeps_a_target_that_was_superseded_into_a_satellite(make_ctx, hand, fake_model):
    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.responder = door_model
    blue = hand._req("POST", f"/short/{hand.short(BLUE, topic='house')}/promote")["long_term_id"]
    hand.short(YELLOW, topic="house")
    hand.short(CHEERFUL, topic="house")
    hand.brief("the door")
    first = hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])
    assert [(o["kind"], o["target_core_id"]) for o in first["operations"]] == [("supersede", blue), ("attach", blue)]
    hand.review(first["id"], [{"op": 0, "verdict": "approve"},
                              {"op": 1, "verdict": "deny", "critique": "not quite right yet"}])
    yellow = hand.draft(first["id"])["operations"][0]["long_term_id"]
    tended = executor.tend(ctx).to_dict()
    assert tended["error"] is None, tended["error"]
    [second] = [d for d in hand.drafts("pending") if d["attempt"] == 2]
    assert [o["target_core_id"] for o in second["operations"]] == [yellow]
