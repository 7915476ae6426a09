"""The voice card end to end: the routes, the prompt it leads, the stamp on each draft, the MCP tools."""
from __future__ import annotations

import json

import requests

from tests.harness.reviewer import wait_for
from tests.service.test_mcp import call_tools

CARD_1 = "I am Seren. I write in the first person, she/her, about what I did."
CARD_2 = ("I am Seren, she/her. My memories speak as I do: first person for what I did and felt; "
          "someone else's dream stays theirs, told as theirs.")


def reply(content: str) -> str:
    return json.dumps({"operations": [{"kind": "new_core", "content": content, "fragments": ["f1", "f2"],
                                       "target": None, "rationale": "a running dream"}]})


def card_block(text: str) -> str:
    return f"--- their card ---\n{text}\n--- end of card ---"


def voice_config(make_config, fake_model, **extra):
    return make_config(voice={"enabled": True}, model={"url": fake_model.url}, **extra)


def test_two_versions_lead_the_prompt_and_stamp_the_draft(make_config, start_service, hand, fake_model):
    fake_model.replies = [reply("Seren keeps dreaming of a fish with a very long tail"),
                          reply("Alice keeps dreaming of a fish with a very long tail")]
    svc = start_service(voice_config(make_config, fake_model))
    base = svc.url
    assert requests.get(base + "/voice", timeout=5).json() == {"version": 0, "text": None}
    r1 = requests.put(base + "/voice", json={"text": CARD_1, "why": "first card"}, timeout=5)
    assert r1.status_code == 200, r1.text
    assert r1.json()["version"] == 1 and r1.json()["changed"] is True
    r2 = requests.put(base + "/voice", json={"text": CARD_2, "why": "someone else's dream is theirs"}, timeout=5)
    assert r2.json()["version"] == 2 and r2.json()["changed"] is True
    same = requests.put(base + "/voice", json={"text": CARD_2}, timeout=5).json()
    assert same["version"] == 2 and same["changed"] is False
    hist = requests.get(base + "/voice/history", timeout=5).json()
    assert hist["count"] == 2
    assert [(v["version"], v["text"], v["why"]) for v in hist["versions"]] == [
        (2, CARD_2, "someone else's dream is theirs"), (1, CARD_1, "first card")]
    assert requests.get(base + "/voice", timeout=5).json()["version"] == 2
    assert requests.get(base + "/status", timeout=5).json()["voice"] == {"enabled": True, "version": 2}

    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    report = requests.post(base + "/check", timeout=60).json()
    assert report["status"] == "sleeping", report
    draft_id = report["sleep"]["draft_id"]
    assert draft_id, report
    prompt = fake_model.prompts()[0]
    assert prompt.startswith("These memories belong to someone"), prompt[:200]
    assert prompt.index(card_block(CARD_2)) < prompt.index("You are the drafting worker")
    assert CARD_1 not in prompt
    draft = hand.draft(draft_id)
    assert draft["extra"]["model_voice"] == 2
    assert draft["extra"]["model_mode"] == "model"

    # a denied operation comes back redrafted under the same card, and stamped the same way
    op = draft["operations"][0]
    hand.review(draft_id, [{"op": op["index"], "verdict": "deny",
                            "critique": "that is Alice's dream, not mine: say it is hers"}])
    tend = requests.post(base + "/tend", timeout=60).json()
    assert tend["resubmitted"], tend
    redraft_prompt = fake_model.prompts()[-1]
    assert len(fake_model.prompts()) == 2
    assert redraft_prompt.startswith("These memories belong to someone")
    assert card_block(CARD_2) in redraft_prompt and "THE CRITIQUE" in redraft_prompt
    nxt = [d for d in hand.drafts() if d["id"] != draft_id and d.get("attempt") == 2]
    assert len(nxt) == 1 and nxt[0]["extra"]["model_voice"] == 2


def test_the_card_is_capped(make_config, start_service, fake_model):
    svc = start_service(voice_config(make_config, fake_model))
    r = requests.put(svc.url + "/voice", json={"text": "x" * 1501}, timeout=5)
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert "1501" in detail and "capped at 1500" in detail and "voice.max_chars" in detail
    assert requests.put(svc.url + "/voice", json={"text": "x" * 1500}, timeout=5).json()["version"] == 1
    assert requests.put(svc.url + "/voice", json={"text": "   "}, timeout=5).status_code == 400
    assert requests.put(svc.url + "/voice", json={"why": "no text"}, timeout=5).status_code == 400
    assert requests.get(svc.url + "/voice/history", timeout=5).json()["count"] == 1


def test_off_by_default_the_routes_say_it_is_opt_in(make_config, start_service, hand, fake_model):
    fake_model.replies = [reply("the fish dream keeps coming back, with a very long tail")]
    svc = start_service(make_config(model={"url": fake_model.url}))
    for method, path in (("GET", "/voice"), ("PUT", "/voice"), ("GET", "/voice/history")):
        r = requests.request(method, svc.url + path, json={"text": CARD_1} if method == "PUT" else None, timeout=5)
        assert r.status_code == 404, (method, path)
        assert "opt-in" in r.json()["detail"] and "voice: {enabled: true}" in r.json()["detail"]
    assert requests.get(svc.url + "/status", timeout=5).json()["voice"] == {"enabled": False}
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    report = requests.post(svc.url + "/check", timeout=60).json()
    assert not fake_model.prompts()[0].startswith("These memories belong")
    assert "model_voice" not in hand.draft(report["sleep"]["draft_id"])["extra"]
    assert not (svc.cfg.sleep.resolved_state_path().with_name("voice.json")).exists()


def test_mcp_voice_tools_when_enabled(make_config, start_service, fake_model):
    svc = start_service(voice_config(make_config, fake_model))
    out = call_tools(svc.url + "/mcp", [
        ("get_voice_card", {}),
        ("set_voice_card", {"text": CARD_1, "why": "first"}),
        ("set_voice_card", {"text": CARD_1}),
        ("set_voice_card", {"text": CARD_2}),
        ("set_voice_card", {"text": "y" * 1501}),
        ("get_voice_card", {}),
        ("voice_card_history", {"limit": 5}),
    ], bearer="")
    assert {"set_voice_card", "get_voice_card", "voice_card_history"} <= set(out["tools"])
    assert out[0]["ok"] is True and out[0]["version"] == 0 and out[0]["text"] is None and out[0]["max_chars"] == 1500
    assert out[1] == {"ok": True, "version": 1, "changed": True, "message": out[1]["message"]}
    assert out[1]["message"].startswith("Version 1 is your card now")
    assert out[2]["ok"] is True and out[2]["changed"] is False and "already version 1" in out[2]["message"]
    assert out[3]["version"] == 2 and out[3]["changed"] is True
    assert out[4]["is_error"] is True and "capped at 1500" in out[4]["text"]
    cur = out[5]
    assert cur["version"] == 2 and cur["text"] == CARD_2 and cur["chars"] == len(CARD_2) and cur["set"]
    assert cur["why"] is None
    assert [v["version"] for v in out[6]["versions"]] == [2, 1] and out[6]["versions"][1]["why"] == "first"
    hist = requests.get(svc.url + "/voice/history", timeout=5).json()
    assert [v["version"] for v in hist["versions"]] == [2, 1]
    wait_for(lambda: requests.get(svc.url + "/voice", timeout=5).json()["version"] == 2, what="the card")


def test_a_control_character_in_the_card_is_refused_named_and_where(make_config, start_service, fake_model):
    """Found: an escape sequence or a NUL in the card was kept, shown in the viewer and put into every draft
    prompt. A card is plain text: newlines and tabs are fine (a CRLF from Windows too), nothing else is."""
    svc = start_service(voice_config(make_config, fake_model))
    for body, said in (({"text": "I am Seren.\nI write \x1b[31min red"}, "the card holds '\\x1b' at line 2, column 9"),
                       ({"text": "I am Seren\x00"}, "the card holds '\\x00' at line 1, column 11"),
                       ({"text": "I am Seren\u0085 and more"}, "the card holds '\\x85' at line 1, column 11"),
                       ({"text": CARD_1, "why": "first\x07"}, "the why holds '\\x07' at line 1, column 6")):
        r = requests.put(svc.url + "/voice", json=body, timeout=5)
        assert (r.status_code, r.json()["detail"]) == (400, said + " (a control character): it is plain text; "
                                                       "newlines and tabs are fine, other control characters are "
                                                       "not. Nothing was changed"), r.text
    assert requests.get(svc.url + "/voice/history", timeout=5).json()["count"] == 0
    out = call_tools(svc.url + "/mcp", [("set_voice_card", {"text": "I am \x1bSeren"})], bearer="")
    assert out[0]["is_error"] is True and "the card holds '\\x1b' at line 1, column 6" in out[0]["text"]
    card = "I am Seren.\r\n\tShe/her.\nFirst person."
    r = requests.put(svc.url + "/voice", json={"text": card, "why": "lines\tand tabs"}, timeout=5)
    assert r.status_code == 200 and requests.get(svc.url + "/voice", timeout=5).json()["text"] == card


def test_a_why_longer_than_is_kept_is_refused_not_cut(make_config, start_service, fake_model):
    """Found: a why of 5,000 characters was kept as its first 500, and the answer did not say so ('every version
    keeps its text, when, and why')."""
    svc = start_service(voice_config(make_config, fake_model))
    r = requests.put(svc.url + "/voice", json={"text": CARD_1, "why": "w" * 501}, timeout=5)
    assert (r.status_code, r.json()["detail"]) == (400, "the why is 501 characters; it is kept whole with the "
                                                        "card, so at most 500: say it shorter. Nothing was changed")
    assert requests.get(svc.url + "/voice/history", timeout=5).json()["count"] == 0
    r = requests.put(svc.url + "/voice", json={"text": CARD_1, "why": "w" * 500}, timeout=5)
    assert r.status_code == 200 and r.json()["why"] == "w" * 500


def test_an_unreadable_card_file_is_kept_and_said(make_config, start_service, fake_model, caplog):
    """The drafts go without the card: the log and /status say why and what to do; the file is never overwritten.
    A new card is taken (it used to be refused with a 400 that blamed the request): the unreadable file is first
    moved aside as voice.json.corrupt-<time>, as state.json is, and the log and the answer say where."""
    cfg = voice_config(make_config, fake_model)
    path = cfg.sleep.resolved_state_path().with_name("voice.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = b'{"versions": [{"version": 1, "text": "I am Seren, she/h'      # a hand edit cut short
    path.write_bytes(torn)
    svc = start_service(cfg)
    said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR" and str(path) in r.getMessage()]
    assert len(said) == 1 and "fix or move the file" in said[0], said
    status = requests.get(svc.url + "/status", timeout=5).json()
    assert str(path) in status["voice"]["error"] and "fix or move the file" in status["voice"]["error"]
    row = next(r for r in status["say"]["cards"]["model"]["rows"] if r[0] == "voice card")
    assert str(path) in row[1] and row[2] == "bad", row
    r = requests.put(svc.url + "/voice", json={"text": CARD_1}, timeout=5)
    assert r.status_code == 200 and r.json()["version"] == 1, r.text
    [aside] = path.parent.glob("voice.json.corrupt-*")
    assert aside.read_bytes() == torn and str(aside) in r.json()["set_aside"], r.json()
    assert [m for m in (r.getMessage() for r in caplog.records) if str(aside) in m]
    assert requests.get(svc.url + "/status", timeout=5).json()["voice"] == {"enabled": True, "version": 1}
    assert requests.get(svc.url + "/voice", timeout=5).json()["text"] == CARD_1


def test_a_card_file_with_a_version_missing_its_number_is_said_not_a_crash(make_config, start_service, fake_model):
    """A hand edit that left a version without its number (or its text): the service starts, says why."""
    cfg = voice_config(make_config, fake_model)
    path = cfg.sleep.resolved_state_path().with_name("voice.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    edited = json.dumps({"versions": [{"version": 1, "text": CARD_1}, {"text": CARD_2}]}).encode()
    path.write_bytes(edited)
    svc = start_service(cfg)
    status = requests.get(svc.url + "/status", timeout=5).json()
    assert str(path) in status["voice"]["error"] and "fix or move the file" in status["voice"]["error"]
    out = call_tools(svc.url + "/mcp", [("set_voice_card", {"text": CARD_2})], bearer="")[0]   # the main model's way
    assert out["ok"] is True and out["version"] == 1, out
    [aside] = path.parent.glob("voice.json.corrupt-*")
    assert aside.read_bytes() == edited and str(aside) in out["message"], out
    assert requests.get(svc.url + "/voice", timeout=5).json()["text"] == CARD_2
