"""Replay and the quality report (issue 21), on the real SerenMemory, no threads: capture, forgetting,
replay on a second fake model, the quality report's columns."""
from __future__ import annotations

import json
import os
import re
import stat

from hippocampus.cycle import executor
from hippocampus.store.capture import store_for
from hippocampus.replay.run import NoPacket, ReplayEnv, compare, replay
from hippocampus.replay.service import QualityWatch
from tests.harness.fake_model import FakeModel

REDRAFT = "THE CRITIQUE:"
TOPICS = ("tea", "garden", "bread")
FRAGMENTS = {"tea": ["we drank green tea on the porch in the afternoon", "green tea again after lunch, with honey"],
             "garden": ["the rose garden by the gate bloomed early", "watered the rose garden before work"],
             "bread": ["baked a sourdough bread with a cracked crust", "fed the sourdough starter before bed"]}


def markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def scripted(body: dict) -> dict:
    """The first model: one new_core per topic; a redraft takes the critique's words after 'say:'."""
    prompt = body["messages"][-1]["content"]
    frags = markers(prompt, "f")
    if REDRAFT in prompt:
        critique = prompt.split(REDRAFT, 1)[1].strip().splitlines()[0]
        content = critique.split("say:", 1)[1].strip()
        return {"content": json.dumps({"operations": [{"kind": "new_core", "content": content, "fragments": frags,
                                                        "target": None, "rationale": "as the critique says"}]})}
    topic = re.search(r"^Topic: (.+)$", prompt, flags=re.M).group(1)
    said = f"Something true about {topic}"
    shown = re.search(r"^\[(c\d+)\] " + re.escape(said) + " ", prompt, flags=re.M)
    if shown:       # its own words are a core already: more evidence for it (a new_core would restate it)
        return {"content": json.dumps({"operations": [{"kind": "attach", "content": said + ", again",
                                                        "fragments": frags, "target": shown.group(1),
                                                        "rationale": "the fragments agree"}]})}
    return {"content": json.dumps({"operations": [{"kind": "new_core", "content": said,
                                                    "fragments": frags, "target": None,
                                                    "rationale": "the fragments agree"}]})}


def inventive(body: dict) -> dict:
    """The candidate: the same operations, but it says the tea habit began in 1987 (no fragment says so)."""
    reply = json.loads(scripted(body)["content"])
    for op in reply["operations"]:
        if "tea" in op["content"]:
            op["content"] += ", a habit since 1987"
    return {"content": json.dumps(reply), "model": "candidate-model"}


def seed(hand, topics=TOPICS) -> str:
    for t in topics:
        for text in FRAGMENTS[t]:
            hand.short(text, topic=t)
    return hand.brief("tea, the garden and bread mattered this week")


def first_draft(ctx, hand) -> dict:
    report = executor.check(ctx).to_dict()
    assert report["status"] == "sleeping", report
    return hand.draft(report["sleep"]["draft_id"])


def op_on(draft: dict, topic: str) -> dict:
    return next(o for o in draft["operations"] if o.get("topic") == topic)


def deny(hand, draft: dict, denials: dict, edits: dict = None) -> None:
    decisions = []
    for o in draft["operations"]:
        if o["topic"] in denials:
            critique = f"too vague; say: {denials[o['topic']]}"
            decisions.append({"op": o["index"], "verdict": "deny", "critique": critique})
        elif o["topic"] in (edits or {}):
            decisions.append({"op": o["index"], "verdict": "approve", "edited_content": edits[o["topic"]]})
        else:
            decisions.append({"op": o["index"], "verdict": "approve"})
    hand.review(draft["id"], decisions)


def garden_denied_and_redrafted(make_ctx, hand, fake_model, garden: str):
    """The scripted model's draft of tea and the garden, the garden denied with `garden` to say, and its
    redraft submitted: (ctx, the first draft)."""
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand, ("tea", "garden"))
    first = first_draft(ctx, hand)
    deny(hand, first, {"garden": garden})
    executor.tend(ctx)
    return ctx, first


def latest(hand, attempt: int) -> dict:
    return next(d for d in hand.drafts() if d["attempt"] == attempt)


def env(ctx) -> ReplayEnv:
    return ReplayEnv(cfg=ctx.cfg, store=store_for(ctx.cfg), memory=ctx.memory)


def listing(ctx, **candidates) -> None:
    """The person's replay.candidates: name -> url, or name -> the entry (replay reaches only these)."""
    ctx.cfg.replay.candidates = {name: v if isinstance(v, dict) else {"url": v} for name, v in candidates.items()}


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---------------------------------------------------------------- capture

def test_a_sleep_and_a_redraft_leave_packets_with_every_field(make_ctx, hand, fake_model):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url, "name": "first-model"}, voice={"enabled": True})
    ctx.voice.set("I am Wren; my memories are mine.", "a card")
    brief = seed(hand, ("tea", "garden"))
    first = first_draft(ctx, hand)
    store = store_for(ctx.cfg)
    p1 = store.load(first["id"])
    assert p1 is not None
    assert {k: p1[k] for k in ("draft_id", "attempt", "brief_id")} == {"draft_id": first["id"], "attempt": 1,
                                                                       "brief_id": brief}
    assert p1["stamp"]["model_name"] == "first-model" and p1["stamp"]["model_voice"] == 1
    assert p1["created_at"] and "redraft_of" not in p1
    prompts = fake_model.prompts()
    assert [c["prompt"] for c in p1["calls"]] == prompts and len(prompts) == 2
    for call in p1["calls"]:
        assert call["stage"] == "draft" and call["topic"] in ("tea", "garden")
        assert [e["content"] for e in call["entries"]] == FRAGMENTS[call["topic"]]
        assert all(e["id"] and e["marker"].startswith("f") for e in call["entries"])
        assert isinstance(call["candidates"], list)
        assert json.loads(call["answer"])["operations"] and call["finish_reason"] == "stop"
        assert call["seconds"] >= 0 and call["tokens"] == {"prompt_tokens": 1, "completion_tokens": 1,
                                                           "total_tokens": 2}
        assert call["ops"][0]["content"] == f"Something true about {call['topic']}"
        assert call["cut_off"] is False and call["error"] is None and call["failure"] is None
        assert call["served"] == "fake-small-model"

    deny(hand, first, {"garden": "The rose garden by the gate bloomed early this year"})
    assert executor.tend(ctx).to_dict()["resubmitted"]
    second = latest(hand, 2)
    p2 = store.load(second["id"])
    assert p2["attempt"] == 2 and p2["redraft_of"] == first["id"] and p2["brief_id"] == brief
    assert p2["stamp"]["model_voice"] == 1
    [call] = p2["calls"]
    assert call["stage"] == "redraft" and call["topic"] == "garden" and call["prompt"] == fake_model.prompts()[-1]
    assert call["critique"].startswith("too vague") and call["denied"]["content"] == "Something true about garden"
    assert call["redraft_of"] == op_on(first, "garden")["index"]
    assert call["ops"][0]["content"] == "The rose garden by the gate bloomed early this year"
    assert mode(store.folder) == 0o700
    assert {p.name: mode(p) for p in store.folder.iterdir()} == {p.name: 0o600 for p in store.folder.iterdir()}


def test_a_failed_call_is_in_the_packet_with_its_error(make_ctx, hand, fake_model):
    def half(body):
        return {"status": 500, "content": "boom"} if "Topic: garden" in body["messages"][-1]["content"] \
            else scripted(body)
    fake_model.responder = half
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand, ("tea", "garden"))
    first = first_draft(ctx, hand)
    calls = {c["topic"]: c for c in store_for(ctx.cfg).load(first["id"])["calls"]}
    assert "HTTP 500" in calls["garden"]["error"] and calls["garden"]["answer"] is None
    assert calls["tea"]["error"] is None


def test_a_mechanical_sleep_leaves_no_packet(make_ctx, hand):
    ctx = make_ctx()
    seed(hand)
    first_draft(ctx, hand)
    assert store_for(ctx.cfg).paths() == []


def test_a_sleep_that_posted_nothing_leaves_its_calls_out_of_the_next_packet(make_ctx, hand, fake_model):
    fake_model.replies = ["not json at all"]
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand, ("tea",))
    assert executor.check(ctx).to_dict()["sleep"]["error"]
    ctx.clock.set(ctx.state.get("last_sleep")["next_try_at"])        # the next try waits after a failed sleep
    fake_model.replies, fake_model.responder = [], scripted
    hand.short("a third cup of green tea in the evening", topic="tea")
    first = first_draft(ctx, hand)
    [call] = store_for(ctx.cfg).load(first["id"])["calls"]
    assert call["answer"] != "not json at all"


# ---------------------------------------------------------------- replay

def test_replay_sends_the_same_prompts_in_order_and_reports_both_sides(make_ctx, hand, fake_model):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url, "name": "first-model"})
    seed(hand, ("tea", "garden"))
    first = first_draft(ctx, hand)
    sent = fake_model.prompts()
    hand.approve_all(first["id"])
    second_model = FakeModel(responder=inventive).start()
    listing(ctx, second={"url": second_model.url, "model": "cand"})
    try:
        result = replay(env(ctx), first["id"], candidate="second")
        assert second_model.prompts() == sent                        # exactly, in order
        assert [r["model"] for r in second_model.requests] == ["cand", "cand"]
    finally:
        second_model.stop()
    assert fake_model.prompts() == sent                              # the first model was not asked again
    assert sorted(result["landed"]) == ["Something true about garden", "Something true about tea"]
    o, c = result["original"]["checks"], result["candidate"]["checks"]
    assert o["valid"] == c["valid"] == 2 and o["failed_calls"] == c["failed_calls"] == 0
    assert o["cut_off"] == c["cut_off"] == 0
    assert o["invented_numbers"] == [] and c["invented_numbers"] == ["1987"] and c["invented"] == 1
    assert o["overlap_landed"] == 1.0 and 0 < c["overlap_landed"] < 1.0
    assert result["candidate"]["served"] == "candidate-model" and result["original"]["model"]["model_name"] == \
        "first-model"
    assert result["candidate"]["candidate"] == "second" and result["candidate"]["name"] == "cand"
    for call in result["candidate"]["calls"]:                       # what was read, never the raw answer
        assert "answer" not in call and call["answer_chars"] > 0 and call["finish_reason"] == "stop"
    assert {op["status"] for op in result["original"]["reviewed_ops"]} == {"approved"}
    assert [d["id"] for d in hand.drafts()] == [first["id"]] and hand.drafts()[0]["status"] == "reviewed"


def test_a_candidate_that_times_out_or_refuses_is_a_result_with_its_error(make_ctx, hand, fake_model):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand, ("tea",))
    first = first_draft(ctx, hand)
    slow = FakeModel(replies=[{"content": '{"operations": []}', "delay": 2.0}]).start()
    listing(ctx, slow=slow.url, gone="http://127.0.0.1:9/v1")
    try:
        result = replay(env(ctx), first["id"], candidate="slow", timeout_seconds=0.3)
    finally:
        slow.stop()
    [call] = result["candidate"]["calls"]
    assert "did not answer within the replay's one deadline of 0.3 s" in call["error"] and call["ops"] == []
    assert result["candidate"]["checks"]["failed_calls"] == 1 and result["candidate"]["checks"]["valid"] == 0
    refused = replay(env(ctx), first["id"], candidate="gone")
    assert "refused the connection" in refused["candidate"]["calls"][0]["error"]


def test_replay_of_a_draft_without_a_packet_names_why(make_ctx):
    ctx = make_ctx()
    listing(ctx, gone="http://127.0.0.1:9/v1")
    for draft_id in ("unknown", "../state", ""):
        try:
            replay(env(ctx), draft_id, candidate="gone")
        except NoPacket as exc:
            assert "no replay packet for draft" in str(exc)
        else:
            raise AssertionError(draft_id)


def test_compare_replays_the_last_drafts_with_totals(make_ctx, hand, fake_model):
    ctx, _ = garden_denied_and_redrafted(make_ctx, hand, fake_model,
                                         "The rose garden by the gate bloomed early, 12 days before the frost")
    cand = FakeModel(responder=inventive).start()
    listing(ctx, cand=cand.url)
    try:
        out = compare(env(ctx), 5, candidate="cand")
    finally:
        cand.stop()
    assert [r["attempt"] for r in out["drafts"]] == [1, 2]
    t = out["total"]
    assert t["original"]["drafts"] == 2 and t["original"]["valid"] == 3 and t["candidate"]["valid"] == 3
    assert t["original"]["invented"] == 0          # the redraft's 12 came from the critique, which is true
    assert t["candidate"]["invented"] == 1 and t["candidate"]["failed_calls"] == 0
    assert [r["candidate"]["checks"]["invented_numbers"] for r in out["drafts"]] == [["1987"], []]


# ---------------------------------------------------------------- forgetting

def test_after_a_flagged_memory_is_purged_its_text_is_in_no_file_under_the_state_folder(make_ctx, hand, fake_model):
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model,
                                             "The rose garden by the gate bloomed early this year")
    second = latest(hand, 2)
    hand.approve_all(second["id"])
    executor.tend(ctx)                                       # the chain lands and closes
    core = next(e for e in hand.long() if e["content"] == "The rose garden by the gate bloomed early this year")
    hand.short("the rose garden needs pruning before winter", topic="garden")
    hand.short("pruned the climbing rose in the garden", topic="garden")
    hand.brief("the garden again")
    later = first_draft(ctx, hand)                           # shows the core as a candidate
    later_packet = store_for(ctx.cfg).load(later["id"])
    assert any(c["id"] == core["id"] for call in later_packet["calls"] for c in call["candidates"])
    secrets = [core["content"]] + FRAGMENTS["garden"]
    folder = ctx.cfg.state_dir

    def holding() -> dict:
        found = {}
        for path in folder.rglob("*"):
            if path.is_file():
                raw = path.read_text(encoding="utf-8", errors="replace")
                hits = [s for s in secrets if s in raw or json.dumps(s)[1:-1] in raw]
                if hits:
                    found[path.name] = hits
        return found
    assert holding(), "the packets held the text before the purge"
    hand.forget(core["id"], "please forget the garden")
    assert executor.check(ctx).to_dict()["purged"] == 1
    assert holding() == {}
    for packet in (store_for(ctx.cfg).load(first["id"]), store_for(ctx.cfg).load(later["id"])):
        assert packet["purges"][-1]["ids"] == [core["id"]]
        assert all(e["id"] for call in packet["calls"] for e in call["entries"])
    kept = store_for(ctx.cfg).load(first["id"])
    tea = next(c for c in kept["calls"] if c["topic"] == "tea")
    assert [e["content"] for e in tea["entries"]] == FRAGMENTS["tea"]      # what was not forgotten stays


# ---------------------------------------------------------------- the quality report

def test_the_quality_report_counts_a_first_approval_a_denial_then_approval_and_a_terminal_edit(
        make_ctx, hand, fake_model):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url, "name": "first-model"}, sleep={"max_attempts": 3})
    seed(hand)
    first = first_draft(ctx, hand)
    deny(hand, first, {"garden": "The rose garden by the gate bloomed early",
                       "bread": "Sourdough bread is baked at home"})
    executor.tend(ctx)
    second = latest(hand, 2)
    deny(hand, second, {"bread": "Sourdough bread is baked at home, the starter fed at night"})
    executor.tend(ctx)
    third = latest(hand, 3)
    assert third["terminal"] is True
    deny(hand, third, {}, edits={"bread": "Sourdough bread is baked at home; the starter is fed each night"})
    executor.tend(ctx)
    assert all(d["status"] == "closed" for d in hand.drafts())
    rep = QualityWatch(ctx).refresh()
    [g] = rep["groups"]
    assert (g["model"], g["voice"]) == ("first-model", None)
    assert {k: g[k] for k in ("drafts", "proposed", "approved_first", "approved_after_redraft", "approved_edited",
                              "denied_to_end", "waiting")} == {
        "drafts": 3, "proposed": 3, "approved_first": 1, "approved_after_redraft": 1, "approved_edited": 1,
        "denied_to_end": 0, "waiting": 0}
    words = dict(map(tuple, g["critique_words"]))
    assert words["vague"] == 3 and words["sourdough"] == 2
    assert g["calls"] == 6 and g["cut_off_rate"] == 0.0 and g["invented_rate"] == 0.0
    assert rep["total"]["proposed"] == 3 and rep["chains"] == 1
