"""What the soak (issue 17) found, each pinned by a test of its own."""
from __future__ import annotations

import getpass
import re
import sys
import time

from hippocampus.cycle import executor
from hippocampus.cycle.sleep import purge
from tests.harness.clock import FakeClock
from tests.harness.reviewer import wait_for
from tests.service.test_ripple_service import Recorder, event
from tests.service.test_tend import scripted_model, seed


def first_sleep(make_ctx, hand, fake_model, responder):
    """Tea and the garden (two fragments each, and a brief), slept on with `responder` as the model:
    (ctx, the draft's id, its operations)."""
    fake_model.responder = responder
    ctx = make_ctx(clock=FakeClock(time.time()), model={"url": fake_model.url})
    seed(hand)
    first = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    return ctx, first, hand.draft(first)["operations"]


# ---------------------------------------------------------------- a redraft with one answer lost

def test_a_redraft_that_loses_one_answer_submits_nothing_and_the_next_redrafts_every_denial(
        make_ctx, hand, fake_model):
    """The model died mid-answer on the first of two denied operations: the redraft used to submit the
    second alone, and the first (with its critique) was never seen again."""
    calls = {"redraft": 0}

    def responder(body: dict) -> dict:
        if "THE CRITIQUE" in body["messages"][-1]["content"]:
            calls["redraft"] += 1
            if calls["redraft"] == 1:
                return {"status": 500, "content": "the server went away mid-answer"}
        return scripted_model(body)

    ctx, first, ops = first_sleep(make_ctx, hand, fake_model, responder)
    assert len(ops) == 2
    hand.review(first, [{"op": op["index"], "verdict": "deny", "critique": f"not quite; say: version {op['index']}"}
                        for op in ops])

    report = executor.tend(ctx).to_dict()
    assert report["resubmitted"] == [] and len(report["model_failures"]) == 1, report
    assert [d["id"] for d in hand.drafts()] == [first]          # nothing half-submitted
    assert [e["type"] for e in ctx.events.list() if e["type"] == "redraft_failed"] == ["redraft_failed"]

    report = executor.tend(ctx).to_dict()                       # the model is back: both are redrafted
    assert len(report["resubmitted"]) == 1, report
    second = next(d for d in hand.drafts() if d["attempt"] == 2)
    assert sorted(op["redraft_of"] for op in second["operations"]) == [0, 1]
    assert sorted(op["content"] for op in second["operations"]) == ["version 0", "version 1"]


# ---------------------------------------------------------------- a stale wake-up for a brief

def test_a_skipped_brief_request_is_not_fired_again_once_the_brief_arrived(make_config, start_service, tmp_path):
    """A brief request skipped while the last wake-up ran was fired again on the next tick even when that
    wake-up had answered it: the main model woke for nothing, on top of the sleep (and of the small model
    drafting, with handover on)."""
    rec, svc, asked, one, two, first = _a_brief_request_kept_behind_its_first_wake_up(make_config, start_service,
                                                                                      tmp_path)
    base, ctx = svc.url, svc.runtime.ctx
    assert first["ok"] is True
    ctx.state.set(brief_request={**asked, "answered": True, "resolved_at": time.time()})   # the brief came
    rec.release()                           # while the first ran: it may end now
    rec.run(first["pid"], timeout=10)
    dropped = wait_for(lambda: (event(base, two["seq"]).get("ripple") or {}).get("dropped"), timeout=5,
                       what="the kept wake-up to be dropped")
    assert dropped == "the brief arrived"
    n = svc.runtime.board.get("ticks")["ticks"]
    wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] >= n + 5, timeout=10, what="five more ticks")
    assert len(rec.runs()) == 1 and svc.runtime.board.get("ripple")["waiting_to_retry"] == []
    assert not event(base, two["seq"])["ripple"].get("ok")



def test_a_kept_wake_up_waits_for_the_end_of_a_tick_that_took_the_cycle_before_its_retry(make_config, start_service,
                                                                                        tmp_path):
    """The retry at a tick's end ran on the ripple's thread after the lock was let go, so a nudge's tick could
    take the cycle first: the kept wake-up went out while that tick's check slept on the brief the last
    wake-up had written, with the small model starting (soak night 22: 'the main model was woken while the
    small model was up'). A retry that finds a tick running leaves the wake-up for that tick's end."""
    rec, svc, asked, one, two, first = _a_brief_request_kept_behind_its_first_wake_up(make_config, start_service,
                                                                                      tmp_path)
    base, ctx = svc.url, svc.runtime.ctx
    token = wait_for(lambda: _take_the_cycle(ctx), timeout=10, what="the cycle free between two ticks")
    try:
        rec.release()
        rec.run(first["pid"], timeout=10)
        wait_for(lambda: not svc.runtime.board.get("ripple")["running"], timeout=10, what="the first to end")
        svc.runtime.ripple().retry_skipped().get(timeout=10)         # a tick's end, while the next tick runs
        assert len(rec.runs()) == 1, "the kept wake-up went out while a tick held the cycle"
        assert svc.runtime.board.get("ripple")["waiting_to_retry"] == ["brief_requested"]
    finally:
        ctx.cycle.leave(token)
    retried = wait_for(lambda: (event(base, two["seq"]).get("ripple") or {}).get("retried"), timeout=10,
                       what="the kept wake-up at the end of the next tick")
    assert retried is True
    rec.release()
    wait_for(lambda: len(rec.runs()) == 2, timeout=10, what="the kept wake-up's run")



def _a_brief_request_kept_behind_its_first_wake_up(make_config, start_service, tmp_path):
    """A brief wanted, its wake-up running (a recorder held 1.5 s or until released) and its nudge-1 wake-up
    skipped and kept: (recorder, service, the request, the two events, the first's ripple outcome)."""
    rec = Recorder(tmp_path, delay=1.5)
    cfg = make_config(sleep={"mode": "thread", "tick_seconds": 0.2, "brief_check_misses": 100000},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["brief_requested"]})
    svc = start_service(cfg)
    base, ctx = svc.url, svc.runtime.ctx
    asked = {"asked_at": time.time(), "for_sleep_due_at": time.time(), "intent_id": None, "answered": None,
             "nudges": 0, "forced": False}
    ctx.state.set(brief_request=asked)
    one = ctx.emit("brief_requested", due_at=asked["for_sleep_due_at"], intent_id=None)
    two = ctx.emit("brief_requested", due_at=asked["for_sleep_due_at"], intent_id=None, nudge=1)
    first = wait_for(lambda: event(base, one["seq"]).get("ripple"), timeout=5, what="the first wake-up")
    wait_for(lambda: (event(base, two["seq"]).get("ripple") or {}).get("skipped"), timeout=5, what="the skip")
    return rec, svc, asked, one, two, first

def _take_the_cycle(ctx):
    from hippocampus.cycle.lock import Busy
    try:
        return ctx.cycle.enter("tick")
    except Busy:
        return None


# A woken session that answers the brief request as its last act, and records each run.
ANSWERS_THE_BRIEF = r'''
import json, os, sys, time, urllib.request
memory, out = sys.argv[1], sys.argv[2]
start = time.time()
time.sleep(1.0)
if not os.path.exists(os.path.join(out, "briefed")):
    open(os.path.join(out, "briefed"), "w").close()
    req = urllib.request.Request(memory + "/brief", method="POST", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"summary": "the kettle mattered", "promote_hints": ["kettle"]}).encode())
    urllib.request.urlopen(req, timeout=10).read()
with open(os.path.join(out, "%d.json" % os.getpid()), "w") as f:
    json.dump({"start": start, "end": time.time()}, f)
'''


def test_a_kept_brief_request_is_not_fired_on_top_of_the_sleep_its_brief_started(make_config, start_service, hand,
                                                                                 tmp_path):
    """The kept wake-up went out at the start of the tick, before that tick's check slept on the brief the
    last wake-up had just written: it still looked unanswered, and woke the main model during the sleep."""
    out = tmp_path / "runs"
    out.mkdir()
    script = tmp_path / "answers_the_brief.py"
    script.write_text(ANSWERS_THE_BRIEF, encoding="utf-8")
    for i in range(3):
        hand.short(f"the kettle whistled at dawn {i}", topic="kettle")
    cfg = make_config(sleep={"mode": "thread", "tick_seconds": 0.2, "brief_check_misses": 100000},
                      ripple={"type": "script", "command": [sys.executable, str(script), hand.url, str(out)],
                              "run_as": getpass.getuser(), "events": ["brief_requested"]})
    svc = start_service(cfg)
    base, ctx = svc.url, svc.runtime.ctx
    asked = {"asked_at": time.time(), "for_sleep_due_at": time.time(), "intent_id": None, "answered": None,
             "nudges": 0, "forced": False}
    ctx.state.set(brief_request=asked)
    one = ctx.emit("brief_requested", due_at=asked["for_sleep_due_at"], intent_id=None)
    two = ctx.emit("brief_requested", due_at=asked["for_sleep_due_at"], intent_id=None, nudge=1)
    wait_for(lambda: (event(base, two["seq"]).get("ripple") or {}).get("skipped"), timeout=5, what="the skip")
    assert event(base, one["seq"])["ripple"]["ok"] is True
    wait_for(lambda: ctx.state.get("last_sleep"), timeout=15, what="the sleep on the brief the session wrote")
    outcome = wait_for(lambda: (lambda r: r if (r.get("dropped") or r.get("retried")) else None)(
        event(base, two["seq"]).get("ripple") or {}), timeout=10, what="the kept wake-up's fate")
    assert outcome.get("dropped") == "the brief arrived", outcome
    assert len(list(out.glob("*.json"))) == 1                  # the main model was woken once


# ---------------------------------------------------------------- a redraft shown a core that was purged

def test_a_redraft_is_never_shown_a_core_of_its_chain_that_was_purged_since(make_ctx, hand, fake_model):
    """A chain's approved new_core was forgotten and purged before its denied sibling was redrafted: the
    redraft still showed it as a candidate, the model attached to it, Memory refused the draft (no such
    long-term entry) and every tend after that failed the same way: the chain never landed (soak, night 3)."""
    def responder(body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        if "THE CRITIQUE" in prompt and re.search(r"^\[c1\]", prompt, re.M):        # attach to whatever core it is shown first
            frags = [m for m in ("f1", "f2") if f"[{m}]" in prompt]
            return {"content": '{"operations": [{"kind": "attach", "content": "the rose garden bloomed early again", '
                               f'"target": "c1", "fragments": {frags!r}, "rationale": "it belongs there"}}]}}'
                               .replace("'", '"')}
        return scripted_model(body)

    ctx, first, ops = first_sleep(make_ctx, hand, fake_model, responder)
    tea = next(op for op in ops if op["topic"] == "tea")
    garden = next(op for op in ops if op["topic"] == "garden")
    out = hand.review(first, [{"op": tea["index"], "verdict": "approve"},
                              {"op": garden["index"], "verdict": "deny", "critique": "not quite"}])
    core = next(r["long_term_id"] for r in out["results"] if r.get("long_term_id"))
    hand.forget(core, "the person asked")
    purge(ctx)
    assert core not in {e["id"] for e in hand.long()}

    report = executor.tend(ctx).to_dict()
    assert report["error"] is None, report
    assert len(report["resubmitted"]) == 1, report
    redraft_prompts = [p for p in fake_model.prompts() if "THE CRITIQUE" in p]
    assert redraft_prompts and not any("Something true about tea" in p for p in redraft_prompts)
    second = next(d for d in hand.drafts() if d["attempt"] == 2)
    assert all(op.get("target_core_id") != core for op in second["operations"])


# ---------------------------------------------------------------- a core flagged for forget, not yet purged

def test_a_core_flagged_for_forget_is_never_a_candidate(make_ctx, hand, memory):
    """A core was flagged while a night ran, after the tick's purge: the sleep drafted attaches to it, the
    purge a moment later took it, and the reviewer could never approve the draft (soak, night 13)."""
    from hippocampus.drafting.candidates import find_candidates
    from tests.service.test_tick import a_core_to_forget

    core = a_core_to_forget(memory.url, hand)
    ctx = make_ctx()
    texts = ["the old address was on elm street"]
    assert [c["id"] for c in find_candidates(ctx.memory, texts, 4)] == [core]
    hand.forget(core, "the person asked")
    assert find_candidates(ctx.memory, texts, 4) == []


def _a_core_with_a_landed_satellite(memory, hand):
    """A core ("the old address was on elm street") with one satellite attached through a landed draft:
    (its id, a reviewing client)."""
    from tests.harness.memory_client import ReviewingClient
    from tests.service.test_tick import a_core_to_forget

    core, client = a_core_to_forget(memory.url, hand), ReviewingClient(memory.url)
    sid = hand.short("we drove past the little bakery on elm street", topic="address")
    d = client.submit_draft({"summary": "again", "attempt": 1, "terminal": False, "operations": [
        {"kind": "attach", "content": "we drove past the little bakery on elm street", "topic": "address",
         "target_core_id": core, "source_short_ids": [sid], "evidence_count": 1, "rationale": "the same street"}]})
    client.review_draft(d["id"], [{"op": 0, "verdict": "approve"}])
    client.close_draft(d["id"])
    return core, client


def test_a_core_flagged_for_forget_is_no_candidate_through_its_satellite(make_ctx, hand, memory):
    """The same, where the search finds the flagged core only through one of its satellites (an attach that
    landed): it was fetched and offered all the same, and an attach to it could never land."""
    from hippocampus.drafting.candidates import find_candidates

    core, client = _a_core_with_a_landed_satellite(memory, hand)
    assert client.satellites(core)
    texts = ["we drove past the little bakery on elm street"]
    assert [c["id"] for c in find_candidates(make_ctx().memory, texts, 4)] == [core]
    hand.forget(core, "the person asked")
    assert find_candidates(make_ctx().memory, texts, 4) == []



def test_a_core_found_through_its_satellite_is_shown_with_its_satellites(make_ctx, hand, memory):
    """A core the search reaches only through one of its satellites is fetched by its id, a row that carries no
    count: the prompt showed "(0 satellites)" for a core with one attached."""
    from hippocampus.drafting.candidates import find_candidates
    from hippocampus.drafting.prompt import Markers, core_lines

    core, client = _a_core_with_a_landed_satellite(memory, hand)
    found = find_candidates(make_ctx().memory, ["we drove past the little bakery on elm street"], 1)
    assert [(c["id"], c["via"]) for c in found] == [(core, "we drove past the little bakery on elm street")]
    assert core_lines(found, Markers(), 200)[0] == "[c1] the old address was on elm street (1 satellites)"


def test_a_core_found_through_an_episode_it_shares_is_a_candidate(make_ctx, hand, memory):
    """An episode can support more than one core (also_target_core_ids on an attach): the search hit of such a
    satellite counted for its first core only, so the other core it supports was never shown."""
    from hippocampus.drafting.candidates import find_candidates
    from tests.harness.memory_client import ReviewingClient
    from tests.service.test_tick import a_core_to_forget

    first, client = a_core_to_forget(memory.url, hand), ReviewingClient(memory.url)
    sid = hand.short("the bakery on elm street sells rye bread", topic="bakery")
    d = client.submit_draft({"summary": "a bakery", "attempt": 1, "terminal": False, "operations": [
        {"kind": "new_core", "content": "the bakery on elm street sells rye bread", "topic": "bakery",
         "source_short_ids": [sid], "evidence_count": 1, "rationale": "it came up"}]})
    other = client.review_draft(d["id"], [{"op": 0, "verdict": "approve"}])["results"][0]["long_term_id"]
    client.close_draft(d["id"])
    sid = hand.short("we drove past the little bakery on elm street", topic="address")
    d = client.submit_draft({"summary": "again", "attempt": 1, "terminal": False, "operations": [
        {"kind": "attach", "content": "we drove past the little bakery on elm street", "topic": "address",
         "target_core_id": first, "also_target_core_ids": [other], "source_short_ids": [sid], "evidence_count": 1,
         "rationale": "the same street"}]})
    client.review_draft(d["id"], [{"op": 0, "verdict": "approve"}])
    client.close_draft(d["id"])
    hand.forget(first, "the person asked")
    found = find_candidates(make_ctx().memory, ["we drove past the little bakery on elm street"], 1)
    assert [(c["id"], c["via"], c["satellites"]) for c in found] == [
        (other, "we drove past the little bakery on elm street", 1)]


def test_a_denied_attach_whose_core_was_purged_is_redrafted_without_that_target(make_ctx, hand, fake_model, memory):
    """The reviewer denied an attach; its core was forgotten and purged before the redraft, which still showed
    it as the denied operation's target: the model attached to it again and Memory refused every redraft (the
    short soak on Python 3.13, night 3)."""
    from tests.service.test_tick import a_core_to_forget

    core = a_core_to_forget(memory.url, hand)
    fake_model.responder = lambda body: (
        {"content": '{"operations": [{"kind": "attach", "content": "the old address on elm street again", '
                    '"target": "c1", "fragments": ["f1"], "rationale": "the same place"}]}'}
        if re.search(r"^\[c1\]", body["messages"][-1]["content"], re.M) else scripted_model(body))
    ctx = make_ctx(clock=FakeClock(time.time()), model={"url": fake_model.url})
    for i in range(2):
        hand.short("the old address was on elm street", topic="address")
    hand.brief("the old address")
    first = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    op = hand.draft(first)["operations"][0]
    assert op["kind"] == "attach" and op["target_core_id"] == core
    hand.review(first, [{"op": op["index"], "verdict": "deny", "critique": "not quite"}])
    hand.forget(core, "the person asked")
    purge(ctx)
    report = executor.tend(ctx).to_dict()
    assert report["error"] is None, report
    redrafts = [p for p in fake_model.prompts() if "THE CRITIQUE" in p]
    assert redrafts and all("target: (none)" in p for p in redrafts)
    assert len(report["resubmitted"]) == 1, report


def test_a_redraft_shows_its_chain_cores_and_its_target_with_their_satellites(make_ctx, hand, fake_model, memory):
    """The redraft showed the cores its chain made, and the denied attach's target, as "(0 satellites)" whatever
    Memory held (the model weighs the count to attach or supersede); and it read each chain core again for every
    denied operation. Now each is shown with its count, read once per redraft."""
    core, client = _a_core_with_a_landed_satellite(memory, hand)
    s = [hand.short(t, topic="places") for t in ("the old address was on elm street, said again",
                                                 "the cafe on oak road opened", "the cafe on oak road was full",
                                                 "the dentist moved across town")]
    op = {"evidence_count": 1, "rationale": "it came up"}
    d = client.submit_draft({"summary": "places", "attempt": 1, "terminal": False, "operations": [
        {**op, "kind": "attach", "content": "the old address was on elm street, said again", "topic": "places",
         "target_core_id": core, "source_short_ids": [s[0]]},
        {**op, "kind": "new_core", "content": "the cafe on oak road opened", "topic": "places",
         "source_short_ids": [s[1]]},
        {**op, "kind": "attach", "content": "the cafe on oak road was full", "topic": "places", "target_op": 1,
         "source_short_ids": [s[2]]},
        {**op, "kind": "new_core", "content": "the dentist moved across town", "topic": "places",
         "source_short_ids": [s[3]]}]})
    client.review_draft(d["id"], [{"op": 0, "verdict": "deny", "critique": "not quite"},
                                  {"op": 1, "verdict": "approve"}, {"op": 2, "verdict": "approve"},
                                  {"op": 3, "verdict": "deny", "critique": "not quite"}])
    fake_model.responder = scripted_model
    ctx = make_ctx(clock=FakeClock(time.time()), model={"url": fake_model.url}, sleep={"candidate_cores": 0})
    asked, request = [], ctx.memory.request
    ctx.memory.request = lambda method, path, **kw: asked.append((method, path)) or request(method, path, **kw)
    report = executor.tend(ctx).to_dict()
    assert report["error"] is None, report
    redrafts = [p for p in fake_model.prompts() if "THE CRITIQUE" in p]
    assert len(redrafts) == 2
    assert "] the cafe on oak road opened (1 satellites)" in redrafts[0]
    assert "] the old address was on elm street (1 satellites)" in redrafts[0]
    oak = next(o["long_term_id"] for o in hand.draft(d["id"])["operations"] if o["index"] == 1)
    reads = [p for m, p in asked if m == "GET" and oak in p]
    assert len(reads) == 1, reads


def test_a_redraft_does_not_show_a_core_flagged_for_forget_as_its_target(make_ctx, hand, fake_model, memory):
    """The person asked to forget a core a denied attach targets, and no purge has run yet: the draft's search
    leaves such a core out (an attach to it could never land), but the redraft still showed it as the target."""
    from tests.harness.memory_client import ReviewingClient
    from tests.service.test_tick import a_core_to_forget

    core, client = a_core_to_forget(memory.url, hand), ReviewingClient(memory.url)
    sid = hand.short("the old address was on elm street, said again", topic="address")
    d = client.submit_draft({"summary": "again", "attempt": 1, "terminal": False, "operations": [
        {"kind": "attach", "content": "the old address was on elm street, said again", "topic": "address",
         "target_core_id": core, "source_short_ids": [sid], "evidence_count": 1, "rationale": "the same street"}]})
    client.review_draft(d["id"], [{"op": 0, "verdict": "deny", "critique": "not quite"}])
    hand.forget(core, "the person asked")
    fake_model.responder = scripted_model
    ctx = make_ctx(clock=FakeClock(time.time()), model={"url": fake_model.url}, sleep={"candidate_cores": 0})
    assert executor.tend(ctx).to_dict()["error"] is None
    redrafts = [p for p in fake_model.prompts() if "THE CRITIQUE" in p]
    assert len(redrafts) == 1 and "target: (none)" in redrafts[0]
    assert "the old address was on elm street (" not in redrafts[0]


def test_a_redraft_shows_a_chain_core_in_the_words_memory_holds_now(make_ctx, hand, fake_model, memory):
    """An approved attach of the chain reworded the chain's own core (restated_content): the redraft showed the
    core in the words of the operation that made it, not in the words Memory holds."""
    from tests.harness.memory_client import ReviewingClient

    client = ReviewingClient(memory.url)
    s = [hand.short(t, topic="places") for t in ("the cafe on oak road opened", "the cafe on oak road opened in may",
                                                 "the dentist moved across town")]
    op = {"evidence_count": 1, "rationale": "it came up", "topic": "places"}
    d = client.submit_draft({"summary": "places", "attempt": 1, "terminal": False, "operations": [
        {**op, "kind": "new_core", "content": "the cafe on oak road opened", "source_short_ids": [s[0]]},
        {**op, "kind": "attach", "content": "the cafe on oak road opened in may", "target_op": 0,
         "restated_content": "the cafe on oak road opened in may", "source_short_ids": [s[1]]},
        {**op, "kind": "new_core", "content": "the dentist moved across town", "source_short_ids": [s[2]]}]})
    client.review_draft(d["id"], [{"op": 0, "verdict": "approve"}, {"op": 1, "verdict": "approve", "restate": True},
                                  {"op": 2, "verdict": "deny", "critique": "not quite"}])
    oak = next(o["long_term_id"] for o in hand.draft(d["id"])["operations"] if o["index"] == 0)
    assert client.memory(oak)["content"] == "the cafe on oak road opened in may"
    fake_model.responder = scripted_model
    ctx = make_ctx(clock=FakeClock(time.time()), model={"url": fake_model.url}, sleep={"candidate_cores": 0})
    assert executor.tend(ctx).to_dict()["error"] is None
    redrafts = [p for p in fake_model.prompts() if "THE CRITIQUE" in p]
    assert len(redrafts) == 1 and "] the cafe on oak road opened in may (1 satellites)" in redrafts[0]
