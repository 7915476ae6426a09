"""A purge reaches the replay runs kept, not only the files (issue 38, item 6), against the running service.

Found from outside: after a purge (this service's tidy of a flag, or Memory's own emergency purge), the files
were clean but GET /replay?run=ID and MCP replay_result still answered with the forgotten text, and run ids
were `<epoch seconds>-<counter>`, easy to guess. Here a replay is run on a candidate that rewords the garden
fragments (its words are in no file), the memory is purged either way, and both readers are read again.
"""
from __future__ import annotations

import json
import re

import pytest
import requests

from hippocampus.replay import service as replay_service
from tests.contract.test_purge_scrub import holding, purge_in_memory
from tests.contract.test_replay import FRAGMENTS, scripted, seed
from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import wait_for
from tests.service.test_mcp import call_tools

CORE = "Something true about garden"          # test_replay's scripted new core for the garden
REWORDED = "Roses flowered ahead of season near the entrance"      # the candidate's words for the garden


def rewording(body: dict) -> dict:
    """The model for the replay: the garden call's operation in its own words (a paraphrase no file holds)."""
    reply = json.loads(scripted(body)["content"])
    for op in reply["operations"]:
        if "garden" in op["content"]:
            op["content"] = REWORDED
    return {"content": json.dumps(reply)}


def holds(value, secrets: list) -> list:
    text = json.dumps(value, ensure_ascii=False)
    return [s for s in secrets if s in text]


def replay_readers(svc, run_id: str) -> tuple:
    """(GET /replay?run=ID's body, MCP replay_result's structured answer)."""
    r = requests.get(svc.url + "/replay", params={"run": run_id}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json(), call_tools(svc.url + "/mcp", [("replay_result", {"run": run_id})])[0]


@pytest.mark.parametrize("purge", ["this service's tidy", "Memory's own"])
def test_after_a_purge_the_kept_replay_runs_answer_without_the_forgotten_text(make_config, start_service, hand,
                                                                             fake_model, purge):
    fake_model.responder = scripted
    svc = start_service(make_config(model={"url": fake_model.url}))
    seed(hand, ("garden",))
    draft_id = requests.post(svc.url + "/sleep", timeout=60).json()["draft_id"]
    hand.approve_all(draft_id)
    assert requests.post(svc.url + "/tend", timeout=60).status_code == 200        # the chain lands
    core = next(e for e in hand.long() if e["content"] == CORE)

    fake_model.responder = rewording
    r = requests.post(svc.url + f"/replay/{draft_id}", json={}, timeout=60)
    assert r.status_code == 200, r.text
    run_id = r.json()["run"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{22,}", run_id) and not re.fullmatch(r"\d+-\d+", run_id), run_id
    secrets = [CORE, REWORDED] + FRAGMENTS["garden"]
    before = replay_readers(svc, run_id)
    assert holds(before[0], secrets) == [CORE, REWORDED] and holds(before[1], secrets) == [CORE, REWORDED]

    if purge == "Memory's own":
        purge_in_memory(hand, core["id"])
    else:
        hand.forget(core["id"], "please forget the garden")                   # flagged: the next tick purges
    folder = svc.runtime.cfg.state_dir
    requests.post(svc.url + "/nudge", timeout=5)                             # a tick, and the quality pass
    wait_for(lambda: holding(folder, secrets) == {}, timeout=20, what="the files to forget the purged text")

    def clean() -> bool:
        http, mcp = replay_readers(svc, run_id)
        return not holds(http, secrets) and not holds(mcp, secrets)
    wait_for(clean, timeout=10, what="the kept replay run to forget the purged text")
    http, mcp = replay_readers(svc, run_id)
    assert http["scrubbed"] is True and mcp["ok"] is True and mcp["run"] == run_id
    assert [op["content"] for c in http["candidate"]["calls"] for op in c["ops"]] == ["[purged]"]
    assert http["landed"] == ["[purged]"]
    assert "Draft " in mcp["message"] and not holds(mcp["message"], secrets)



def test_a_replay_running_through_a_purge_finishes_without_the_forgotten_text(make_config, start_service, hand,
                                                                              fake_model, monkeypatch):
    monkeypatch.setattr(replay_service, "WAIT_SECONDS", 0.3)
    fake_model.responder = scripted
    cand = FakeModel(responder=lambda body: {**rewording(body), "delay": 6.0}).start()
    try:
        svc = start_service(make_config(model={"url": fake_model.url},
                                        replay={"candidates": {"cand": {"url": cand.url}}}))
        seed(hand, ("garden",))
        draft_id = requests.post(svc.url + "/sleep", timeout=60).json()["draft_id"]
        hand.approve_all(draft_id)
        assert requests.post(svc.url + "/tend", timeout=60).status_code == 200
        core = next(e for e in hand.long() if e["content"] == CORE)
        r = requests.post(svc.url + f"/replay/{draft_id}", json={"candidate": "cand"}, timeout=30)
        assert r.status_code == 202, r.text                      # still running
        run_id = r.json()["run"]

        purge_in_memory(hand, core["id"])
        requests.post(svc.url + "/nudge", timeout=5)
        secrets = [CORE, REWORDED] + FRAGMENTS["garden"]
        folder = svc.runtime.cfg.state_dir
        wait_for(lambda: holding(folder, secrets) == {}, timeout=20, what="the files to forget the purged text")
        assert requests.get(svc.url + "/replay", timeout=10).json()["running"]["run"] == run_id, \
            "the scrub came after the replay ended: nothing shown"
        cand.release()                         # the scrub came while the replay ran: it may end now

        def finished():
            got = requests.get(svc.url + "/replay", params={"run": run_id}, timeout=10)
            return got.json() if got.status_code == 200 else None
        http = wait_for(finished, timeout=30, what="the replay to finish")
        mcp = call_tools(svc.url + "/mcp", [("replay_result", {"run": run_id})])[0]
    finally:
        cand.stop()
    assert http["candidate"]["checks"]["calls"] == 1 and mcp["ok"] is True
    assert holds(http, secrets) == [] and holds(mcp, secrets) == []
    assert [op["content"] for c in http["candidate"]["calls"] for op in c["ops"]] == ["[purged]"]
