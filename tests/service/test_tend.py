"""Tend and cull, the nudge and the tend cycle (issue 5): the chain runs itself to the end."""
from __future__ import annotations

import json
import re
import sys
import time

import requests

from tests.harness.reviewer import wait_for

REDRAFT = "THE CRITIQUE"


def markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def scripted_model(prompt_body: dict) -> dict:
    """A small model that follows the prompt contract: one operation per topic; a redraft takes the critique's
    words (after 'say:') as its content, or withdraws when told to."""
    prompt = prompt_body["messages"][-1]["content"]
    frags = markers(prompt, "f")
    if REDRAFT in prompt:
        critique = prompt.split("THE CRITIQUE:", 1)[1].split("\n", 2)[1] if "THE CRITIQUE:\n" in prompt else \
            prompt.split("THE CRITIQUE:", 1)[1].splitlines()[0]
        m = re.search(r"say:\s*(.+)", critique)
        # no words to take: it says what its first fragment says (so the grounding guard passes it)
        first = re.search(r"^\[f\d+\] (.+) \(", prompt, flags=re.M)
        content = m.group(1).strip() if m else (first.group(1).strip() if first else "A corrected statement")
        return {"content": json.dumps({"operations": [{"kind": "new_core", "content": content,
                                                        "fragments": frags[:1] or [], "target": None,
                                                        "rationale": "as the critique says"}]})}
    topic = re.search(r"^Topic: (.+)$", prompt, flags=re.M).group(1)
    return {"content": json.dumps({"operations": [{"kind": "new_core", "content": f"Something true about {topic}",
                                                    "fragments": frags, "target": None,
                                                    "rationale": "the fragments agree"}]})}


def seed(hand) -> str:
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
        hand.short(f"the rose garden bloomed early this year, visit {i}", topic="garden")
    return hand.brief("tea and the garden mattered this week")


def events(base: str, type_: str = None) -> list:
    params = {"limit": 1000}
    if type_:
        params["type"] = type_
    return requests.get(base + "/events", params=params, timeout=10).json()["entries"]


def pending_draft(hand, attempt: int) -> dict:
    return wait_for(lambda: next((d for d in hand.drafts("pending") if d["attempt"] == attempt), None),
                    timeout=20, what=f"a pending draft at attempt {attempt}")


def slept_once(make_ctx, hand, fake_model, responder=scripted_model) -> tuple:
    """(ctx, the first draft): the seeded fragments and brief slept on once, the model answering as `responder`."""
    from hippocampus.cycle import executor

    ctx = make_ctx(model={"url": fake_model.url})
    fake_model.responder = responder
    seed(hand)
    return ctx, hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])


def garden_denied(make_ctx, hand, fake_model) -> tuple:
    """(ctx, the first draft): a sleep on the scripted model, then its garden operation denied, the rest approved."""
    ctx, first = slept_once(make_ctx, hand, fake_model)
    deny_garden(hand, first, "The rose garden bloomed early")
    return ctx, first


def deny_garden(hand, draft: dict, words: str, approve_rest: bool = True) -> None:
    decisions = []
    for op in draft["operations"]:
        if "garden" in (op.get("topic") or "") or "rose" in op["content"].lower() or "garden" in op["content"]:
            decisions.append({"op": op["index"], "verdict": "deny", "critique": f"not quite; say: {words}"})
        elif approve_rest:
            decisions.append({"op": op["index"], "verdict": "approve"})
    hand.review(draft["id"], decisions)


def test_the_whole_cycle_to_the_terminal_attempt_driven_by_nudges(make_config, start_service, hand, fake_model):
    fake_model.responder = scripted_model
    cfg = make_config(model={"url": fake_model.url}, sleep={"max_attempts": 3, "nudge_wait_seconds": 1})
    svc = start_service(cfg)
    base = svc.url
    brief = seed(hand)
    started = time.monotonic()
    requests.post(base + "/nudge", timeout=5)
    first = pending_draft(hand, 1)
    assert len(first["operations"]) == 2 and first["brief_id_used"] == brief
    deny_garden(hand, first, "The rose garden bloomed early")
    requests.post(base + "/nudge", timeout=5)
    second = pending_draft(hand, 2)
    assert second["cluster_id"] == first["id"] and second["previous_draft_ids"] == [first["id"]]
    assert second["terminal"] is False
    denied_index = next(o["index"] for o in hand.draft(first["id"])["operations"] if o["status"] == "denied")
    assert [o["redraft_of"] for o in second["operations"]] == [denied_index]
    assert second["operations"][0]["content"] == "The rose garden bloomed early"
    deny_garden(hand, second, "The rose garden bloomed early this spring")
    requests.post(base + "/nudge", timeout=5)
    third = pending_draft(hand, 3)
    assert third["terminal"] is True
    assert hand.draft(third["id"], review=True)["operations"][0]["earlier_attempts"]
    hand.review(third["id"], [{"op": 0, "verdict": "approve",
                               "edited_content": "The rose garden bloomed early this spring, to everyone's joy"}])
    requests.post(base + "/nudge", timeout=5)
    closed = wait_for(lambda: events(base, "chain_closed"), timeout=20, what="chain_closed")
    assert closed[0]["cluster_id"] == first["id"] and closed[0]["attempts"] == 3
    assert hand.open_briefs() == []
    assert [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, review"] == []
    contents = [e["content"] for e in hand.long()]
    assert "Something true about tea" in contents
    assert "The rose garden bloomed early this spring, to everyone's joy" in contents
    assert all(d["status"] == "closed" for d in hand.drafts())
    resubmitted = events(base, "tend_resubmitted")
    assert sorted((e["attempt"], e["terminal"]) for e in resubmitted) == [(2, False), (3, True)]
    assert time.monotonic() - started < 30


def test_nudges_alone_finish_a_chain_with_an_hour_long_tick(make_config, start_service, hand, fake_model):
    fake_model.responder = scripted_model
    cfg = make_config(model={"url": fake_model.url},
                      sleep={"mode": "thread", "tick_seconds": 3600, "tend_interval_seconds": 3600,
                             "max_attempts": 2})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    started = time.monotonic()
    reviewer_seconds = 0.0
    requests.post(base + "/nudge", timeout=5)
    first = pending_draft(hand, 1)
    t = time.monotonic()
    deny_garden(hand, first, "The rose garden bloomed early")
    reviewer_seconds += time.monotonic() - t
    requests.post(base + "/nudge", timeout=5)
    second = pending_draft(hand, 2)
    t = time.monotonic()
    hand.approve_all(second["id"])
    reviewer_seconds += time.monotonic() - t
    requests.post(base + "/nudge", timeout=5)
    wait_for(lambda: events(base, "chain_closed"), timeout=20, what="chain_closed")
    wall = time.monotonic() - started
    model_seconds = 0.0          # the fake model answers at once
    assert wall - reviewer_seconds - model_seconds < 5.0, wall


def slow_redraft_model(delay: float):
    def respond(body: dict) -> dict:
        reply = scripted_model(body)
        if REDRAFT in body["messages"][-1]["content"]:
            reply["delay"] = delay
        return reply
    return respond


def _two_nudges_during_a_slow_redraft(make_config, start_service, hand, fake_model, mode: str):
    fake_model.responder = slow_redraft_model(1.5)
    cfg = make_config(model={"url": fake_model.url},
                      sleep={"mode": mode, "tick_seconds": 3600, "tend_interval_seconds": 3600})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    requests.post(base + "/nudge", timeout=5)
    first = pending_draft(hand, 1)
    deny_garden(hand, first, "The rose garden bloomed early")
    idle = wait_for(lambda: (lambda b: b if not b["ticking"] and b["ticks"] >= 1 else None)(
        svc.runtime.board.get("ticks")), timeout=10, what="the first tick to finish")
    ticks_before = idle["ticks"]
    requests.post(base + "/nudge", timeout=5)
    wait_for(lambda: fake_model.in_flight, timeout=10, what="the slow redraft to start")
    requests.post(base + "/nudge", timeout=5)
    requests.post(base + "/nudge", timeout=5)
    wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] >= ticks_before + 2, timeout=15,
             what="a second tick after the first")
    assert pending_draft(hand, 2)
    time.sleep(0.3)   # a settle window: no third tick may follow (the two late nudges collapse into one)
    assert svc.runtime.board.get("ticks")["ticks"] == ticks_before + 2


def test_two_nudges_during_a_slow_redraft_cause_one_more_tick_external(make_config, start_service, hand,
                                                                         fake_model):
    _two_nudges_during_a_slow_redraft(make_config, start_service, hand, fake_model, "external")


def test_two_nudges_during_a_slow_redraft_cause_one_more_tick_thread(make_config, start_service, hand, fake_model):
    _two_nudges_during_a_slow_redraft(make_config, start_service, hand, fake_model, "thread")


def test_tend_cycle_off_no_redraft_on_the_timer_but_tend_and_nudge_do(make_config, start_service, hand,
                                                                      fake_model):
    fake_model.responder = scripted_model
    cfg = make_config(model={"url": fake_model.url},
                      sleep={"mode": "thread", "tick_seconds": 0.2, "tend_cycle": False,
                             "interval_seconds": 72000})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    requests.post(base + "/nudge", timeout=5)
    first = pending_draft(hand, 1)
    # a timer tick may have slept on the brief while the nudge waited for a free cycle: that nudge's tick tends,
    # and must run before the denial, or it redrafts it (a nudge does) and the timer is blamed
    wait_for(lambda: not svc.runtime.scheduler.nudge_pending(), timeout=10, what="the nudge taken")
    taken = svc.runtime.board.get("ticks")["ticks"]
    wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] >= taken + 1, timeout=10, what="the nudge's tick")
    deny_garden(hand, first, "The rose garden bloomed early")
    ticks = svc.runtime.board.get("ticks")["ticks"]
    wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] >= ticks + 5, timeout=10, what="five ticks")
    assert [d for d in hand.drafts() if d["attempt"] == 2] == []          # the timer never redrafts
    st = requests.get(base + "/status", timeout=5).json()
    assert st["redrafts_waiting_since"] and "redrafts" in st["explain"].lower()
    r = requests.post(base + "/tend", timeout=30)
    assert r.status_code == 200 and r.json()["resubmitted"]
    assert pending_draft(hand, 2)


def test_a_redraft_of_an_attach_never_rewords_the_core(make_config, start_service, hand, fake_model, memory):
    # a core to attach to, landed through a mechanical-style first chain
    fake_model.responder = scripted_model
    cfg = make_config(model={"url": fake_model.url})
    svc = start_service(cfg)
    base = svc.url
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
    hand.brief("tea")
    requests.post(base + "/nudge", timeout=5)
    hand.approve_all(pending_draft(hand, 1)["id"])
    requests.post(base + "/nudge", timeout=5)
    wait_for(lambda: events(base, "chain_closed"), timeout=20, what="the first chain to close")
    core = next(e for e in hand.long() if "tea" in e["content"])

    def attach_model(body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        frags, cores = markers(prompt, "f"), markers(prompt, "c")
        return {"content": json.dumps({"operations": [{
            "kind": "attach", "content": "Tea again, this time with lemon", "fragments": frags,
            "target": cores[0] if cores else None, "restated_content": "TEA IS EVERYTHING NOW",
            "rationale": "more evidence"}]})}
    fake_model.responder = attach_model
    for i in range(2):
        hand.short(f"green tea with lemon in the afternoon, day {i}", topic="tea")
    hand.brief("more tea")
    requests.post(base + "/nudge", timeout=5)
    first = pending_draft(hand, 1)
    assert first["operations"][0]["kind"] == "attach"
    hand.review(first["id"], [{"op": 0, "verdict": "deny", "critique": "attach it, but keep it short"}])
    requests.post(base + "/nudge", timeout=5)
    second = pending_draft(hand, 2)
    op = second["operations"][0]
    assert op["kind"] == "attach" and not op.get("restated_content")
    assert op["target_core_id"] == core["id"]
    hand.approve_all(second["id"])
    after = next(e for e in hand.long() if e["id"] == core["id"])
    assert after["content"] == core["content"]
    sats = requests.get(f"{memory.url}/long/{core['id']}/satellites", timeout=10).json()["satellites"]
    assert any("lemon" in s["content"] for s in sats)


def test_a_nudge_waits_for_the_rippled_script_and_never_kills_it(make_config, start_service, memory, tmp_path):
    done, released = tmp_path / "script-finished", tmp_path / "script-released"
    script = tmp_path / "ripple.py"           # sleeps argv[1] s, or until the test releases it; then says it finished
    script.write_text("import os, sys, time, pathlib\nuntil = time.time() + float(sys.argv[1])\n"
                      f"while time.time() < until and not os.path.exists({str(released)!r}):\n    time.sleep(0.02)\n"
                      f"pathlib.Path({str(done)!r}).write_text('done')\n")
    import getpass

    def run(wait: float, sleep_for: float) -> tuple:
        if done.exists():
            done.unlink()
        cfg = make_config(ripple={"type": "script", "command": [sys.executable, str(script), str(sleep_for)],
                                  "events": ["brief_requested"], "run_as": getpass.getuser()},
                          sleep={"nudge_wait_seconds": wait, "state_path": str(tmp_path / f"s{wait}" / "st.json")})
        svc = start_service(cfg)
        base = svc.url
        r = requests.post(base + "/sleep", timeout=10)           # asks for a brief: the ripple starts
        assert r.json()["asked_for_brief"] is True
        wait_for(lambda: svc.runtime.ripple.running_count() == 1, timeout=5, what="the ripple to start")
        before = len(events(base, "nudged"))
        t0 = time.monotonic()
        ticks = svc.runtime.board.get("ticks")["ticks"]
        requests.post(base + "/nudge", timeout=5)
        assert len(events(base, "nudged")) == before + 1
        wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] > ticks, timeout=10, what="the nudged tick")
        return time.monotonic() - t0, svc
    waited, first = run(wait=30, sleep_for=2)
    assert done.exists() and 1.5 <= waited < 5, waited           # ticked only after the script exited
    # the second run is not a second copy beside the first one's open ask for a brief (that copy would leave the
    # asking to the first, as two copies on one Memory do): the first stops and the second gets a fresh store
    first.request_stop(drain_seconds=5)
    assert first.wait_stopped(30)
    memory.fresh_store(tmp_path / "memory-store-2")
    waited, svc = run(wait=1, sleep_for=3)
    assert 0.8 <= waited < 2.5, waited                          # gave up waiting after one second...
    assert not done.exists()
    released.write_text("released")                             # (it still runs: it may end now)
    wait_for(done.exists, timeout=10, what="the script to run to its end")   # ...and never killed it


def test_a_hand_edited_brief_time_keeps_no_chain_open(make_ctx, hand, caplog):
    """The state's brief_times edited by hand (a time that is no number) made every close of the chain fail as it
    retired the older briefs (float('x')): each tend said the error and the chain stayed open, so no sleep came.
    A time that is no number is read as none (Memory's own time of the brief is used)."""
    from hippocampus.cycle import executor

    ctx = make_ctx()
    older = hand.brief("the owl, first ask")
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    newer = hand.brief("the owl, asked again")
    draft_id = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    path = ctx.cfg.sleep.resolved_state_path()
    saved = json.loads(path.read_text())
    path.write_text(json.dumps({**saved, "brief_times": {newer: "x"}}))
    ctx = make_ctx(ctx.cfg)                                             # restarted on the hand-edited file
    hand.approve_all(draft_id)
    tended = executor.tend(ctx).to_dict()
    assert tended["error"] is None and tended["closed"] == [draft_id], tended
    assert hand.open_briefs() == [], f"the older brief {older} is left open"
