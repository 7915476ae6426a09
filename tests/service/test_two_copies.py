"""Two copies of the service on one Memory (issue 31, item 1): a second process on the same state folder
refuses to start, naming the first; two copies with their own state folders on the one real SerenMemory,
asked at the same moment ten times, spend one model call per brief, leave one review note and consume once."""
from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.receiver import Receiver
from tests.harness.reviewer import wait_for
from tests.service.test_process import Proc, _yaml
from tests.service.test_tend import scripted_model

REVIEW, CLAIM, BRIEF = "hippocampus, review", "hippocampus, sleeping", "hippocampus, brief"


def _at_once(urls: list) -> list:
    """POST each url from its own thread, released together; the answers in the same order."""
    go, out = threading.Barrier(len(urls)), [None] * len(urls)

    def ask(i: int, url: str) -> None:
        go.wait()
        out[i] = requests.post(url, timeout=120)
    threads = [threading.Thread(target=ask, args=(i, u)) for i, u in enumerate(urls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(150)
    return out


def _notes(hand, topic: str) -> list:
    return [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == topic]


def _consumed(bases: list, brief: str) -> list:
    return [e for b in bases for e in requests.get(b + "/events", params={"type": "brief_consumed", "limit": 1000},
                                                   timeout=10).json()["entries"] if e.get("brief_id") == brief]


def test_two_copies_on_one_memory_sleep_once_per_brief(make_config, start_service, hand, fake_model, tmp_path):
    fake_model.responder = lambda body: (time.sleep(0.4), scripted_model(body))[1]    # a sleep the other overlaps
    copies = [start_service(make_config(model={"url": fake_model.url},
                                        sleep={"state_path": str(tmp_path / name / "state.json")}))
              for name in ("one", "two")]
    bases = [c.url for c in copies]
    said_other = 0
    for rnd in range(10):
        for i in range(2):
            hand.short(f"round {rnd}: the kettle whistled at breakfast, morning {i}", topic=f"kettle, round {rnd}")
        brief = hand.brief(f"round {rnd}: the kettle mattered")
        calls = len(fake_model.requests)
        checks = [r.json() for r in _at_once([b + "/check" for b in bases])]
        assert len(fake_model.requests) - calls == 1, (rnd, checks)          # one model call for the brief
        slept = [c for c in checks if c["status"] == "sleeping"]
        assert len(slept) == 1, (rnd, checks)
        assert {c["status"] for c in checks if c is not slept[0]} <= {"other_copy", "chain_open"}, checks
        drafts = [d for d in hand.drafts() if d.get("brief_id_used") == brief]
        assert [d["id"] for d in drafts] == [slept[0]["sleep"]["draft_id"]], (rnd, drafts)
        assert len(_notes(hand, REVIEW)) == 1, (rnd, _notes(hand, REVIEW))   # one "waits for your review"
        assert _notes(hand, CLAIM) == []                                    # every claim let go
        loser = bases[checks.index(next(c for c in checks if c is not slept[0]))]
        if checks[bases.index(loser)]["status"] == "other_copy":
            said_other += 1
            headline = requests.get(loser + "/status", timeout=10).json()["say"]["headline"]
            # met at work it is named from its claim; met late (claim let go) from the stamp on its draft
            assert headline.startswith(f"Another copy of seren-hippocampus (pid {os.getpid()}"), headline
            assert f"sleeps on brief {brief}" in headline or f"has drafted brief {brief} already" in headline

        hand.approve_all(drafts[0]["id"])
        tends = [r.json() for r in _at_once([b + "/tend" for b in bases])]
        assert sum(len(t["closed"]) for t in tends) == 1, (rnd, tends)       # one copy closed the chain
        assert len(_consumed(bases, brief)) == 1, (rnd, tends)              # and consumed its brief once
        assert brief not in {b["id"] for b in hand.open_briefs()}
        assert _notes(hand, REVIEW) == [] and _notes(hand, CLAIM) == []
    assert len(fake_model.requests) == 10
    assert said_other >= 1, "at least one round met the other copy at work and said so"


def _config(tmp_path, memory, name: str) -> str:
    return _yaml(tmp_path / f"{name}.yaml", {
        "server": {"port": free_port()}, "memory": {"url": memory.url}, "model": {"url": ""},
        "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json")}})


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
def test_a_second_process_on_the_same_state_folder_refuses_to_start_naming_the_first(tmp_path, memory):
    dirs = [tmp_path / n for n in ("first", "second", "third")]
    for d in dirs:
        d.mkdir()
    first = Proc(dirs[0], _config(tmp_path, memory, "first"))
    try:
        first.wait_for(lambda: "ready on" in first.stderr(), what="the first copy to be ready")
        second = Proc(dirs[1], _config(tmp_path, memory, "second"))
        assert second.p.wait(30) == 1
        err = second.stderr()
        assert f"another seren-hippocampus (pid {first.p.pid} on " in err and ", since " in err, err
        assert f"already runs on the state folder {(tmp_path / 'state').resolve()}" in err, err
        assert "give this one its own sleep.state_path" in err and "Traceback" not in err, err
        assert first.p.poll() is None                              # the first copy runs on, untouched
        first.p.send_signal(signal.SIGKILL)                          # a kill -9 frees the folder
        first.p.wait(10)
        third = Proc(dirs[2], _config(tmp_path, memory, "third"))
        try:
            third.wait_for(lambda: "ready on" in third.stderr(), what="a copy after the kill -9 to start")
        finally:
            third.p.send_signal(signal.SIGTERM)
            third.p.wait(30)
    finally:
        if first.p.poll() is None:
            first.p.kill()
            first.p.wait(10)


def _pulling_model(body: dict) -> dict:
    """The small model, slow enough for the other copy to overlap: a pulled brief when asked for one."""
    time.sleep(0.4)
    if "JSON brief:" not in body["messages"][-1]["content"]:
        return scripted_model(body)
    return {"content": json.dumps({"summary": "the kettle mattered", "promote_hints": ["kettle"],
                                   "noise_hints": [], "completed_intents": []})}


def test_two_copies_with_brief_pull_pull_one_brief_and_sleep_on_it_once(make_config, start_service, hand,
                                                                         fake_model, tmp_path):
    fake_model.responder = _pulling_model
    copies = [start_service(make_config(model={"url": fake_model.url}, sleep={
        "state_path": str(tmp_path / name / "state.json"), "brief_pull": True, "brief_check_misses": 1,
        "brief_request": False, "interval_seconds": 1})) for name in ("one", "two")]
    bases = [c.url for c in copies]
    said_pulling = 0
    for rnd in range(6):
        wait_for(lambda: all(requests.get(b + "/status", timeout=10).json()["bedtime_at"] < time.time()
                             for b in bases), what="both copies past bedtime")
        for i in range(2):
            hand.short(f"round {rnd}: the kettle whistled at breakfast, morning {i}", topic=f"kettle, round {rnd}")
        briefs_before = {b["id"] for b in hand.all_briefs()}
        pulls = sum("JSON brief:" in p for p in fake_model.prompts())
        checks = [r.json() for r in _at_once([b + "/check" for b in bases])]
        assert sum("JSON brief:" in p for p in fake_model.prompts()) - pulls == 1, (rnd, checks)  # one pull
        new = [b["id"] for b in hand.all_briefs() if b["id"] not in briefs_before]
        assert len(new) == 1, (rnd, new, checks)                                   # one brief submitted
        slept = [c for c in checks if c["status"] == "sleeping_on_pulled_brief"]
        assert len(slept) == 1 and slept[0]["brief_id"] == new[0], (rnd, checks)   # one sleep, on it
        other = next(c for c in checks if c is not slept[0])
        assert other["status"] in {"other_copy", "waiting_for_brief", "chain_open"}, (rnd, checks)
        drafts = [d for d in hand.drafts() if d.get("brief_id_used") == new[0]]
        assert len(drafts) == 1, (rnd, drafts)
        assert _notes(hand, CLAIM) == []                                          # every claim let go
        if other["status"] == "other_copy" and "pulls a brief" in (other.get("other") or {}).get("what", ""):
            said_pulling += 1
            headline = requests.get(bases[checks.index(other)] + "/status", timeout=10).json()["say"]["headline"]
            assert headline.startswith(f"Another copy of seren-hippocampus (pid {os.getpid()}"), headline
            assert "pulls a brief" in headline, headline

        hand.approve_all(drafts[0]["id"])
        tends = [r.json() for r in _at_once([b + "/tend" for b in bases])]
        assert sum(len(t["closed"]) for t in tends) == 1, (rnd, tends)
        assert len(_consumed(bases, new[0])) == 1, (rnd, tends)
    assert said_pulling >= 1, "at least one round met the other copy pulling and said so"


def test_two_copies_past_bedtime_with_no_brief_ask_the_main_model_once_a_round(make_config, start_service, hand,
                                                                               tmp_path):
    wakes = Receiver()                                    # the main model's wake-up route (an endpoint ripple)
    try:
        copies = [start_service(make_config(ripple={"type": "endpoint", "url": wakes.base + "/ripple"}, sleep={
            "state_path": str(tmp_path / name / "state.json"), "brief_check_misses": 1, "interval_seconds": 1}))
            for name in ("one", "two")]
        bases = [c.url for c in copies]
        for rnd in range(5):
            wait_for(lambda: all(requests.get(b + "/status", timeout=10).json()["bedtime_at"] < time.time()
                                 for b in bases), what="both copies past bedtime")
            checks = [r.json() for r in _at_once([b + "/check" for b in bases])]
            asked = sum(len(requests.get(b + "/events", params={"type": "brief_requested", "limit": 1000},
                                         timeout=10).json()["entries"]) for b in bases)
            assert asked == rnd + 1, (rnd, checks)                             # one ask a round, not two
            assert len(_notes(hand, BRIEF)) == 1, (rnd, _notes(hand, BRIEF))    # one request note, kept open
            wait_for(lambda: len(wakes.at("/ripple")) > rnd, what=f"round {rnd}'s wake-up")
            assert len(wakes.at("/ripple")) == rnd + 1, (rnd, checks)           # the main model woken once
            other = next(c for c in checks if c["status"] != "waiting_for_brief")
            assert other["status"] == "other_copy", (rnd, checks)
            assert "asks the main model for a brief" in other["other"]["what"], other
        headline = requests.get(bases[checks.index(other)] + "/status", timeout=10).json()["say"]["headline"]
        assert headline.startswith(f"Another copy of seren-hippocampus (pid {os.getpid()}"), headline
        # the brief comes: the copy that asked sleeps on it and lets go of its claim, so no note says it still asks
        hand.brief("we talked about the fish dream a lot")
        asker = bases[1 - checks.index(other)]
        assert requests.post(asker + "/check", timeout=60).json()["status"] != "other_copy"
        assert [n for n in hand.near() if (n.get("metadata") or {}).get("claim") == "brief_request"] == []
        assert _notes(hand, BRIEF) == []                                        # the request note is gone too
    finally:
        wakes.close()
