"""A whole night end to end on the REAL llama-server: thread mode, the real SerenMemory, hand-over on.

The service starts the real binary itself (model.lifecycle: the built llama-server and the tiny
random-weight model), drafts, hands the machine over to the main model before it wakes it, starts the
server again for the redraft and hands over again. The main model is scripted and acts only through
Memory's routes (tests/harness/reviewer.py): it writes the brief, approves one operation, denies the
other with a critique, approves the redraft. The night's draft is then replayed (POST /replay) on a
second real server, the same model under another seed, listed in replay.candidates.

Random weights write no usable JSON on their own, and free text from them is noise the grounding guard drops, so
the service drafts extractive (model.write: extractive) and every call carries the service's own schema (a draft's
per pile, a redraft's per denied operation): the model only chooses, so the draft is in its fragments' words and
the redraft in the critique's ("say: ..."), and both pass the guard. What is asserted is what a person would
notice: the events in order, the chain closed, the brief consumed once, the model server stopped after each
hand-over, the reviewer's words landed, no llama-server left.
"""
from __future__ import annotations

import os
import threading
import time

import psutil
import pytest
import requests

from tests.harness.ports import free_port
from tests.harness.reviewer import wait_for
from tests.harness.tiny_schema import model_block

pytestmark = [pytest.mark.real_model,
              pytest.mark.skipif(os.name == "nt", reason="POSIX process table and signals")]

TOPICS = ("green tea", "rose garden")
CRITIQUE = "say: we walked through the rose garden on sunday"
NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}     # the schema is the service's own


def events(base: str) -> list:
    """Every event the service kept, oldest first."""
    return list(reversed(requests.get(base + "/events", params={"limit": 1000}, timeout=10).json()["entries"]))


def types(base: str) -> list:
    return [e["type"] for e in events(base)]


def of(base: str, kind: str) -> list:
    return [e for e in events(base) if e["type"] == kind]


def llama_servers_on(port: int) -> list:
    """The llama-server processes told to listen on this port (what a person would find with ps)."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        cmd = p.info.get("cmdline") or []
        if cmd and os.path.basename(cmd[0]) == "llama-server" and "--port" in cmd \
                and cmd[cmd.index("--port") + 1:cmd.index("--port") + 2] == [str(port)] \
                and p.info.get("status") != psutil.STATUS_ZOMBIE:
            found.append(p.pid)
    return found


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


class Watch(threading.Thread):
    """Every llama-server process seen on the port, polled every 20 ms, for the "no process left" check."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port, self.seen, self.done = port, set(), threading.Event()

    def run(self):
        while not self.done.wait(0.02):
            self.seen.update(llama_servers_on(self.port))


@pytest.fixture
def model_port():
    port = free_port()
    yield port
    for pid in llama_servers_on(port):        # whatever a failing test (or the product) left behind
        psutil.Process(pid).kill()


def night_config(make_config, llama_binary, tiny_model, model_port: int, second_url: str):
    # extractive, held by the service's own schema per pile: a random-weight model can only choose fragments, so
    # what it drafts is in their words and passes the grounding guard (free text from it is noise the guard drops)
    model = model_block(f"http://127.0.0.1:{model_port}/v1", write="extractive", structured="on",
                        extra_body=NO_THINKING, lifecycle={"server": str(llama_binary), "model_path": str(tiny_model),
                           "server_args": "-c 2048 -np 1 --seed 7 -t 2", "handover": True,
                           "keep_warm_seconds": 0, "poll_seconds": 0.05, "ready_timeout_seconds": 60,
                           "stop_grace_seconds": 3})
    return make_config(model=model,
                       sleep={"mode": "thread", "tick_seconds": 0.2, "tend_interval_seconds": 0.2,
                              "brief_request": False, "promote_min_evidence": 2, "max_attempts": 3},
                       replay={"candidates": {"seed-11": {"url": second_url, "model": "tiny-seed-11",
                                                          "extra_body": NO_THINKING, "timeout_seconds": 120}}})


def replay_result(base: str, draft_id: str) -> dict:
    r = requests.post(f"{base}/replay/{draft_id}", json={"candidate": "seed-11"}, timeout=60)
    assert r.status_code in (200, 202), r.text
    if r.status_code == 200:
        return r.json()
    where = base + r.json()["result"]

    def done():
        got = requests.get(where, timeout=10)
        return got.json() if got.status_code == 200 else None
    return wait_for(done, timeout=120, what="the replay's result")


def test_a_whole_night_on_the_real_server_with_handover_then_a_replay_on_a_second(
        make_config, start_service, hand, llama_binary, tiny_model, start_llama, model_port):
    second = start_llama("-c", "2048", "--seed", "11", threads=1)
    cfg = night_config(make_config, llama_binary, tiny_model, model_port, second.url + "/v1")
    svc = start_service(cfg)
    base = svc.url
    watch = Watch(model_port)
    watch.start()
    t0 = time.monotonic()
    for topic in TOPICS:
        for day in (1, 2):
            hand.short(f"on day {day} the {topic} again", topic=topic)
    assert llama_servers_on(model_port) == []                   # nothing runs before the night needs it
    brief_id = hand.brief("tea and the garden mattered this week", promote=list(TOPICS))

    # ---- brief -> draft: the tick sees the brief and sleeps on it; the server is handed over before the wake
    first = wait_for(lambda: of(base, "draft_submitted"), timeout=180, what="the night's draft")[0]
    assert first["brief_id"] == brief_id
    draft = hand.draft(first["draft_id"])
    ops = draft["operations"]
    print(f"\nthe draft: {len(ops)} operation(s) after {time.monotonic() - t0:.1f} s: "
          + "; ".join(f"{op['topic']}: {op['content']!r}" for op in ops))
    assert sorted(op["topic"] for op in ops) == sorted(TOPICS), ops
    assert all(op["kind"] == "new_core" and len(op["source_short_ids"]) == 1 for op in ops)
    assert llama_servers_on(model_port) == [], "the model server is still up after the hand-over"
    assert svc.url and requests.get(base + "/status", timeout=10).json()["model_lifecycle"]["state"] == "stopped"

    # ---- review: approve the tea, deny the garden with a critique
    tea = next(op for op in ops if op["topic"] == "green tea")
    garden = next(op for op in ops if op["topic"] == "rose garden")
    hand.review(first["draft_id"], [{"op": tea["index"], "verdict": "approve"},
                                    {"op": garden["index"], "verdict": "deny", "critique": CRITIQUE}])

    # ---- redraft (the tick's tend, the server started again and handed over again), approve, land, close
    redraft = wait_for(lambda: of(base, "tend_resubmitted"), timeout=180, what="the redraft")[0]
    second_draft = hand.draft(redraft["draft_id"])
    assert second_draft["attempt"] == 2 and len(second_draft["operations"]) == 1
    redone = second_draft["operations"][0]
    print(f"the redraft after {time.monotonic() - t0:.1f} s: {redone['kind']} {redone['content']!r}")
    assert redone.get("redraft_of") == garden["index"]
    assert redone["content"] == CRITIQUE.split("say: ", 1)[1]      # the critique's words, chosen, not written
    assert llama_servers_on(model_port) == [], "the model server is still up after the redraft's hand-over"
    hand.approve_all(redraft["draft_id"])
    closed = wait_for(lambda: of(base, "chain_closed"), timeout=60, what="the chain to close")
    night_seconds = time.monotonic() - t0

    seq = [t for t in types(base) if t in ("model_started", "model_stopped", "draft_submitted",
                                           "tend_resubmitted", "chain_closed", "brief_consumed")]
    print(f"the night in {night_seconds:.1f} s: {' > '.join(seq)}")
    assert seq[:4] == ["model_started", "model_stopped", "draft_submitted", "model_started"], seq
    i_tr = seq.index("tend_resubmitted")
    assert seq[i_tr - 1] == "model_stopped" and seq[-1] == "chain_closed", seq
    assert seq.count("model_started") == 2 and seq.count("model_stopped") == 2, seq
    assert [e["why"] for e in of(base, "model_stopped")] == ["handing over to the main model"] * 2
    assert len(closed) == 1
    assert "model_start_failed" not in types(base) and "sleep_failed" not in types(base)
    assert "draft_failed" not in types(base) and "tend_failed" not in types(base)

    # the brief: consumed once, by this night's draft
    briefs = hand.all_briefs()
    assert [b["id"] for b in briefs] == [brief_id] and hand.open_briefs() == []
    assert briefs[0]["metadata"].get("consumed_by_draft") == redraft["draft_id"]      # the chain's last step
    consumed = of(base, "brief_consumed")
    assert [(e["brief_id"], e["draft_id"]) for e in consumed] == [(brief_id, redraft["draft_id"])]
    assert seq.index("brief_consumed") > i_tr
    assert [e["draft_id"] for e in of(base, "sleep_done")] == [first["draft_id"]]      # one sleep, on the brief
    # what landed: the tea core and the critique's garden, both long-term now
    contents = {c.get("content") for c in hand._req("GET", "/long", params={"include_satellites": "true"})["entries"]}
    assert tea["content"] in contents and redone["content"] in contents, contents     # (an attach: a satellite)

    # ---- the draft replayed on the second server; the managed one is not started for it
    result = replay_result(base, first["draft_id"])
    calls = result["candidate"]["calls"]
    print(f"replay on seed 11: {len(calls)} call(s), " + "; ".join(
        f"{c['topic']}: {len(c['ops'])} op(s) in {c['seconds']} s, tokens {c['tokens']}" for c in calls))
    assert result["candidate"]["candidate"] == "seed-11" and result["candidate"]["managed"] is False
    assert sorted(c["topic"] for c in calls) == sorted(TOPICS)
    assert all(c["error"] is None and c["failure"] is None for c in calls), calls
    shown = {f"on day {day} the {topic} again" for topic in TOPICS for day in (1, 2)}
    assert all(op["content"] in shown for c in calls for op in c["ops"]), calls    # read as choices: their words
    assert all(c["tokens"] and c["tokens"]["completion_tokens"] > 0 for c in calls)
    assert result["original"]["calls"] and tea["content"] in result["landed"]
    assert types(base).count("model_started") == 2, "the replay on a candidate started the managed server"
    assert llama_servers_on(model_port) == [] and second.proc.poll() is None

    # ---- no process left: the service stops, and nothing it started is running
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    watch.done.set()
    watch.join(5)
    print(f"llama-server processes the service ran on its port: {sorted(watch.seen)}")
    assert len(watch.seen) == 2, watch.seen            # one for the draft, one for the redraft
    assert llama_servers_on(model_port) == [] and all(gone(pid) for pid in watch.seen)
