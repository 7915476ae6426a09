"""model.structured against a server that refuses response_format (the fake model scripted to answer 400 the
way OpenAI-shaped servers do), through the whole service and the real SerenMemory."""
from __future__ import annotations

import logging

import requests


REFUSAL = {"status": 400, "content": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is "
                                                 "not supported with this model.", "type": "invalid_request_error",
                                      "param": "response_format"}}
ONE_OP = '{"operations": [{"kind": "new_core", "content": "Dreams of a fish with a long tail.", "fragments": ["f1"]}]}'


def refusing(body: dict):
    return REFUSAL if "response_format" in body else ONE_OP


def sleep(make_config, start_service, hand, fake_model, mode: str):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    fake_model.responder = refusing
    svc = start_service(make_config(model={"url": fake_model.url, "structured": mode}))
    r = requests.post(svc.url + "/check", timeout=30)
    assert r.status_code == 200, r.text
    return svc, r.json()["sleep"]


def test_auto_falls_back_to_the_plain_prompt_once_and_says_so(make_config, start_service, hand, fake_model, caplog):
    caplog.set_level(logging.WARNING, logger="hippocampus.model")
    svc, report = sleep(make_config, start_service, hand, fake_model, "auto")
    assert report["draft_id"] and report["operations"] == 1, report
    sent = ["response_format" in r for r in fake_model.requests]
    assert sent == [True, False], sent                    # asked once, then the plain prompt
    requests.post(svc.url + "/tend", timeout=30)          # later calls do not ask again
    assert not any("response_format" in r for r in fake_model.requests[2:])
    rows = requests.get(svc.url + "/status", timeout=10).json()["say"]["cards"]["model"]["rows"]
    (row,) = [r for r in rows if r[0] == "answer format"]
    assert row[1].startswith("plain prompt: the server refused the answer's JSON schema (Invalid parameter: "
                             "'response_format' of type 'json_schema' is not supported"), row
    said = [r.getMessage() for r in caplog.records if "refused response_format" in r.getMessage()]
    assert len(said) == 1, said


def test_on_makes_a_refusal_a_model_failure_naming_the_setting(make_config, start_service, hand, fake_model):
    _, report = sleep(make_config, start_service, hand, fake_model, "on")
    assert "model.structured is on" in report["error"] and "set model.structured: auto" in report["error"], report
    assert len(fake_model.requests) == 1 and "response_format" in fake_model.requests[0]
    assert hand.drafts() == []


def test_a_400_that_does_not_name_it_is_a_failure_as_before(make_config, start_service, hand, fake_model):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    fake_model.replies = [{"status": 400, "content": {"message": "'messages' is required"}}]
    svc = start_service(make_config(model={"url": fake_model.url}))
    report = requests.post(svc.url + "/check", timeout=30).json()["sleep"]
    assert "answered an error (HTTP 400)" in report["error"], report
    assert len(fake_model.requests) == 1 and "response_format" in fake_model.requests[0]
    rows = requests.get(svc.url + "/status", timeout=10).json()["say"]["cards"]["model"]["rows"]
    assert ["answer format", "held to the answer's JSON schema", "good"] in rows
