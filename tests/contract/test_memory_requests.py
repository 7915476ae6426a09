"""What one chain costs Memory (issue 40): a brief, three topics, one operation denied, the redraft approved,
the chain closed, counted through a recording proxy in front of the real SerenMemory. The earlier release
(5.4.0) made 59 requests for this chain; this one makes at most 0.8 of that, and a copy alone on its Memory
writes to near-term only the note the contract names (the review note, deleted when the chain lands): no claim,
no "slept" note (each near-term write is an embedding in Memory, and a note the main model reads)."""
from __future__ import annotations

from hippocampus.cycle import copies, executor
from hippocampus.cycle.decide import Asked
from hippocampus.cycle.sleep import REVIEW_TOPIC
from hippocampus.demo.run import scripted_reply
from tests.harness.fake_model import FakeModel
from tests.harness.relay import RecordingProxy

EARLIER_RELEASE = 59
MOST = int(EARLIER_RELEASE * 0.8)            # 47
TOPICS = {"tea": "we drank green tea in the afternoon", "garden": "the rose garden bloomed early",
          "river": "we walked along the river at dusk"}
CRITIQUE = "not quite; say: The rose garden bloomed early this spring"


def grounded_reply(body: dict) -> str:
    """The demo's scripted model, but each new core says its own topic's fragments' words (the guard drops words
    from nowhere); a redraft is the demo's (the critique's words)."""
    import json
    import re

    answer = json.loads(scripted_reply(body))
    prompt = (body.get("messages") or [{}])[-1].get("content", "")
    found = re.search(r"^Topic: (.+)$", prompt, flags=re.M)
    topic = found.group(1).strip() if found else ""
    for op in answer["operations"]:
        if "THE CRITIQUE:" not in prompt and topic in TOPICS:
            op["content"] = TOPICS[topic].capitalize() + "."
    return json.dumps(answer)


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def _topics(notes: list) -> list:
    return sorted((n.get("metadata") or {}).get("topic") or "" for n in notes)


def test_one_chain_costs_at_most_47_memory_requests_and_writes_only_the_review_note(make_ctx, hand, memory,
                                                                                      capsys):
    proxy = RecordingProxy(("127.0.0.1", _port(memory.url))).open()
    model = FakeModel(responder=grounded_reply).start()
    try:
        ctx = make_ctx(memory={"url": proxy.url}, model={"url": model.url})
        copies.announce(ctx)                     # what the service does once at its start (actors/runtime.py)
        for topic, text in TOPICS.items():
            for i in range(3):
                hand.short(f"{text}, day {i}", topic=topic)
        brief = hand.brief("tea, the garden and the river mattered this week", promote=list(TOPICS))
        near_before = {n["id"] for n in hand.near()}
        proxy.take()
        ticks = []

        executor.tick(ctx, Asked())                                   # the sleep: one draft of three operations
        ticks.append(proxy.take())
        first = [d for d in hand.drafts("pending") if d.get("attempt") == 1]
        assert len(first) == 1 and len(first[0]["operations"]) == 3, first
        assert first[0]["brief_id_used"] == brief
        written = [n for n in hand.near() if n["id"] not in near_before]
        assert _topics(written) == [REVIEW_TOPIC], written           # the review note, and no claim or "slept"
        hand.review(first[0]["id"], [
            {"op": o["index"], "verdict": "deny", "critique": CRITIQUE} if "garden" in (o.get("topic") or "")
            else {"op": o["index"], "verdict": "approve"} for o in first[0]["operations"]])
        executor.tick(ctx, Asked())                                   # the redraft of the denied one
        ticks.append(proxy.take())
        second = [d for d in hand.drafts("pending") if d.get("attempt") == 2]
        assert len(second) == 1, hand.drafts()
        hand.approve_all(second[0]["id"])
        executor.tick(ctx, Asked())                                   # the chain closed
        ticks.append(proxy.take())
        assert {d["status"] for d in hand.drafts()} == {"closed"}, hand.drafts()
        assert brief not in [b["id"] for b in hand.open_briefs()]
        near_after = {n["id"] for n in hand.near()}
    finally:
        model.stop()
        proxy.close()
    done = [r for t in ticks for r in t]
    routes = RecordingProxy.by_route(done)
    with capsys.disabled():
        print(f"\n  one chain: {len(done)} Memory requests: " + ", ".join(f"{r} {n}" for r, n in sorted(routes.items())))
    assert len(done) <= MOST, (len(done), routes)
    # a first sleep on a brief, alone on Memory, posts its draft under the brief's first id without asking Memory
    # whether a night the budget stopped already used it (it cannot have: this copy never slept on the brief)
    assert "GET /drafts/{id}" not in RecordingProxy.by_route(ticks[0]), RecordingProxy.by_route(ticks[0])
    assert routes["POST /near"] == 1 and routes["DELETE /near/{id}"] == 1, routes   # the review note, then gone
    assert near_after == near_before
