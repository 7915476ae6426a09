"""model.write: auto through the whole service and the real SerenMemory: the mode is chosen at the first drafting
call by the size the model server reports, and /status and the log say which and why."""
from __future__ import annotations

import json
import logging

import requests


CHOICE = json.dumps({"operations": [{"words": "f1", "kind": "new_core", "target": None, "also": []}]})


def drafting_row(svc) -> tuple:
    st = requests.get(svc.url + "/status", timeout=10).json()
    (row,) = [r for r in st["say"]["cards"]["model"]["rows"] if r[0] == "drafting"]
    return st["model_write"], row


def test_status_says_auto_chose_extractive_for_a_small_model_and_why(make_config, start_service, hand, fake_model,
                                                                      caplog):
    caplog.set_level(logging.INFO, logger="hippocampus.model")
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    fake_model.meta = {"n_params": 134_515_008}
    fake_model.replies = [CHOICE]
    svc = start_service(make_config(model={"url": fake_model.url, "write": "auto"}))
    view, row = drafting_row(svc)
    assert view["setting"] == "auto" and view["mode"] is None
    assert row[1] == "not chosen yet: the model write setting: auto: chosen by the model's size at the first drafting call"
    report = requests.post(svc.url + "/check", timeout=30).json()["sleep"]
    assert report["operations"] == 1, report
    view, row = drafting_row(svc)
    assert view["mode"] == "extractive" and view["n_params"] == 134_515_008
    assert row[1] == ("extractive: the model write setting: auto: the model has 135M parameters, below 1.5B, so it chooses "
                      "fragments and their own words become the memories (extractive)"), row
    said = [r.getMessage() for r in caplog.records if "model.write: auto" in r.getMessage()]
    assert len(said) == 1 and "135M parameters" in said[0], said


def test_status_says_a_set_mode_as_set(make_config, start_service, fake_model):
    svc = start_service(make_config(model={"url": fake_model.url, "write": "free"}))
    view, row = drafting_row(svc)
    assert view["mode"] == "free"
    assert row[1] == "free: the model write setting: free: the model writes each operation's content"


def test_check_config_says_which_drafting_mode_auto_would_choose(tmp_path, memory):
    from tests.harness.fake_model import FakeModel
    from tests.service.test_check_config_probes import _check_config
    from tests.service.test_process import _yaml

    model = FakeModel().start()
    model.meta = {"n_params": 134_515_008}
    try:
        cfg = _yaml(tmp_path / "c.yaml", {"memory": {"url": memory.url}, "model": {"url": model.url},
                                          "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})
        r = _check_config("--config", cfg)
    finally:
        model.stop()
    assert ("# model drafting: extractive: model.write: auto: the model has 135M parameters, below 1.5B, so it "
            "chooses fragments") in r.stdout, r.stdout[-1500:]


def test_status_says_auto_chose_extractive_because_few_of_the_model_s_operations_were_grounded(make_config,
                                                                                              start_service,
                                                                                              fake_model):
    from pathlib import Path

    from hippocampus.config import redact
    from hippocampus.model import grounded
    from hippocampus.store.state import State

    cfg = make_config(model={"url": fake_model.url, "write": "auto"})     # a server that does not say its size
    me = grounded.model_key(cfg.model.name, redact.url(cfg.model.url))
    nights = [{"kind": "sleep", "write": {"mode": "free", "model": me, "proposed": p, "grounded": g}}
              for p, g in ((10, 1), (12, 2), (8, 1))]
    State(Path(cfg.sleep.state_path)).set(history=nights)         # the sleeps' outcomes, as a restart finds them
    svc = start_service(cfg)
    view, row = drafting_row(svc)
    assert view["mode"] == "extractive" and view["grounding"] == {"proposed": 30, "grounded": 4, "nights": 3}
    assert row[1].startswith("extractive: the model write setting: auto: 4 of 30 of its operations were grounded"), row
