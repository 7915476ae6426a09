"""Replay and the quality report in the running service (issue 21): POST /replay/{id}, GET /quality read in
the background, the MCP tool replay_draft and sleep_status's part, the CLI's comparison run."""
from __future__ import annotations

import io
import json

import requests

from hippocampus.__main__ import build_parser
from hippocampus.cli import commands as replay_cli
from hippocampus.store.capture import store_for
from tests.contract.test_replay import inventive, scripted, seed
from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import wait_for
from tests.service.test_mcp import call_tools


def run_a_chain(svc, hand) -> dict:
    """Sleep on a brief, approve everything, land it: one closed chain, one packet."""
    seed(hand, ("tea", "garden"))
    requests.post(svc.url + "/nudge", timeout=5)
    draft = wait_for(lambda: next(iter(hand.drafts("pending")), None), timeout=20, what="the first draft")
    hand.approve_all(draft["id"])
    requests.post(svc.url + "/nudge", timeout=5)
    wait_for(lambda: all(d["status"] == "closed" for d in hand.drafts()), timeout=20, what="the chain to close")
    return draft


def quality(svc) -> dict:
    r = requests.get(svc.url + "/quality", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def test_replay_of_an_unknown_draft_is_404_with_a_plain_detail(make_config, start_service):
    svc = start_service(make_config(replay={"candidates": {"gone": {"url": "http://127.0.0.1:9/v1"}}}))
    r = requests.post(svc.url + "/replay/unknown", json={"candidate": "gone"}, timeout=10)
    assert r.status_code == 404
    assert r.json() == {"detail": "no replay packet for draft 'unknown' - drafts from before replays, drafts "
                                  "written mechanically (no model call), or pruned (the newest 300 are kept)"}
    assert requests.post(svc.url + "/replay", json={}, timeout=10).json() == {"detail": "'draft_id' is required"}
    for given in (5, ["d1"], {"id": "d1"}):     # sent, but not as text: 'required' would send one looking for a typo
        r = requests.post(svc.url + "/replay", json={"draft_id": given}, timeout=10)
        assert (r.status_code, r.json()) == (400, {"detail": f"'draft_id' is the draft's id as text, not {given!r}"})
    r = requests.post(svc.url + "/replay/x", json={"url": "file:///etc/passwd"}, timeout=10)
    assert r.status_code == 400 and r.json()["detail"].startswith(
        "replay reaches only the configured model and the candidates listed in replay.candidates; "
        "'file:///etc/passwd' is not one of them (listed: gone)")
    r = requests.post(svc.url + "/replay/x", json={"timeout_seconds": -1}, timeout=10)
    assert r.status_code == 400
    # NaN (Python's json reads it) is no number of seconds either: taken, every call of the run is past its deadline
    r = requests.post(svc.url + "/replay/x", data='{"candidate": "gone", "timeout_seconds": NaN}',
                      headers={"Content-Type": "application/json"}, timeout=10)
    assert (r.status_code, r.json()["detail"]) == (400, "'timeout_seconds' is a number of seconds above 0 (at most "
                                                        "300: a larger one is capped)")
    # nor Infinity (Python's json reads that too): it was taken and capped, where the CLI and the yaml refuse it
    r = requests.post(svc.url + "/replay/x", data='{"candidate": "gone", "timeout_seconds": Infinity}',
                      headers={"Content-Type": "application/json"}, timeout=10)
    assert (r.status_code, r.json()["detail"]) == (400, "'timeout_seconds' is a number of seconds above 0 (at most "
                                                        "300: a larger one is capped)")


def test_the_quality_report_is_read_in_the_background_and_replay_runs_over_http_and_mcp(
        make_config, start_service, hand, fake_model):
    fake_model.responder = scripted
    cand = FakeModel(responder=inventive).start()
    cfg = make_config(model={"url": fake_model.url, "name": "first-model"},
                      supervisor={"check_seconds": 0.05}, replay={"candidates": {"cand": {"url": cand.url}}})
    svc = start_service(cfg)
    draft = run_a_chain(svc, hand)

    def landed():
        rep = quality(svc)
        return rep if rep.get("ready") and rep["total"]["approved_first"] == 2 else None
    rep = wait_for(landed, timeout=20, what="the quality report to show the landed chain")
    [g] = rep["groups"]
    assert (g["model"], g["proposed"], g["approved_first"], g["calls"], g["cut_off_rate"]) == \
        ("first-model", 2, 2, 2, 0.0)
    assert "first-model (no voice card): 2 proposed; 2 approved on the first attempt" in rep["message"]
    assert quality(svc)["at"] == rep["at"]                  # the board's copy: no read of Memory per request

    try:
        r = requests.post(svc.url + f"/replay/{draft['id']}", json={"candidate": "cand", "model": "cand"}, timeout=60)
        assert r.status_code == 200, r.text
        res = r.json()
        assert res["candidate"]["candidate"] == "cand" and [b["model"] for b in cand.requests] == ["cand", "cand"]
        assert res["candidate"]["checks"]["invented_numbers"] == ["1987"]
        assert res["original"]["checks"]["invented_numbers"] == []
        assert cand.prompts() == fake_model.prompts()[:2]
        out = call_tools(svc.url + "/mcp", [("replay_draft", {"draft_id": draft["id"], "candidate": "cand"}),
                                            ("replay_draft", {"draft_id": "nope"}),
                                            ("sleep_status", {})])
    finally:
        cand.stop()
    assert "replay_draft" in out["tools"]
    assert out[0]["ok"] is True and out[0]["candidate"]["checks"]["invented"] == 1
    assert "1 invented number(s) (1987)" in out[0]["message"] and "Nothing was written to Memory" in out[0]["message"]
    assert out[1]["ok"] is False and "no replay packet for draft 'nope'" in out[1]["message"]
    q = out[2]["quality"]
    assert q["ready"] is True and q["groups"][0]["approved_first"] == 2 and "first-model" in q["say"]
    assert len(hand.drafts()) == 1                          # replay wrote nothing to Memory


def test_the_comparison_run_prints_one_table_and_a_total_line(make_config, start_service, hand, fake_model, tmp_path):
    fake_model.responder = scripted
    cfg = make_config(model={"url": fake_model.url})
    svc = start_service(cfg)
    run_a_chain(svc, hand)
    seed(hand, ("tea",))
    hand.short("a third cup of green tea in the evening", topic="tea")
    requests.post(svc.url + "/nudge", timeout=5)
    second = wait_for(lambda: hand.drafts("pending"), timeout=20, what="the second draft")[0]
    # its packet is saved just after Memory took the draft: wait for it, not for Memory
    wait_for(lambda: store_for(cfg).load(second["id"]), timeout=10, what="the second draft's replay packet")
    conf = tmp_path / "hippocampus.yaml"
    cand = FakeModel(responder=inventive).start()
    conf.write_text(f"memory:\n  url: {cfg.memory.url}\nmodel:\n  url: {fake_model.url}\n"
                    f"sleep:\n  state_path: {cfg.sleep.state_path}\n"
                    f"replay:\n  candidates:\n    cand:\n      url: {cand.url}\n", encoding="utf-8")
    try:
        out = io.StringIO()
        args = build_parser().parse_args(["--config", str(conf), "replay", "--last", "5", "--candidate", "cand"])
        assert replay_cli.replay_command(args, out) == 0
        table = out.getvalue().splitlines()
        out = io.StringIO()
        args = build_parser().parse_args(["replay", "--last", "1", "--candidate", "cand", "--json",
                                          "--config", str(conf)])
        assert replay_cli.replay_command(args, out) == 0
        data = json.loads(out.getvalue())
    finally:
        cand.stop()
    assert table[1].split() == ["draft", "attempt", "ops", "failed", "cut-off", "invented", "overlap", "seconds"]
    assert len(table) == 2 + 2 + 1 and table[-1].startswith("total (2)")
    assert table[-1].split()[2:5] == ["3", "/", "3"] and "0 / 2" in table[-1]       # ops; invented 1987 twice
    assert len(data["drafts"]) == 1 and data["total"]["candidate"]["invented"] == 1
    args = build_parser().parse_args(["replay", "nope", "--config", str(conf)])
    assert replay_cli.replay_command(args, io.StringIO()) == 1
    assert replay_cli.replay_command(build_parser().parse_args(["replay", "--config", str(conf)]), io.StringIO()) == 2


def test_the_replay_help_explains_every_option(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    replay = sub.choices["replay"]
    for action in replay._actions:
        assert action.help and len(action.help) > 10, action.dest
    try:
        parser.parse_args(["replay", "--help"])
    except SystemExit:
        pass
    text = capsys.readouterr().out
    for opt in ("draft_id", "--last", "--candidate", "--model-url", "--model-name", "--timeout", "--json", "--config"):
        assert opt in text, opt
    assert "Nothing is written to Memory" in " ".join(text.split())


def test_a_model_name_on_many_lines_or_too_long_is_refused_through_both_doors(
        make_config, start_service, hand, fake_model, caplog):
    """Found: a replay's `model` was sent into the log as given: 'm\\n<time> CRITICAL hippocampus: ...' wrote a
    forged CRITICAL line, through POST /replay and replay_draft alike; and replay_draft took a name of any length
    where POST /replay refuses one over 200 characters."""
    import logging

    fake_model.responder = scripted
    svc = start_service(make_config(model={"url": fake_model.url}, supervisor={"check_seconds": 0.05}))
    draft = run_a_chain(svc, hand)
    caplog.set_level(logging.INFO)
    forged = "m\n2026-12-06 12:00:00,000 CRITICAL hippocampus: FORGED"
    r = requests.post(svc.url + f"/replay/{draft['id']}", json={"model": forged}, timeout=60)
    assert r.status_code == 400 and "'model' is a name" in r.json()["detail"], r.text
    out = call_tools(svc.url + "/mcp", [("replay_draft", {"draft_id": draft["id"], "model": forged}),
                                        ("replay_draft", {"draft_id": draft["id"], "model": "m" * 201}),
                                        ("replay_draft", {"draft_id": draft["id"], "candidate": "c\rx"})], bearer="")
    for i in range(3):
        assert out[i]["ok"] is False and out[i]["refused"] is True and "is a name" in out[i]["message"], out[i]
    assert not [rec for rec in caplog.records if "FORGED" in rec.getMessage()]
    assert not [rec for rec in caplog.records if "replaying draft" in rec.getMessage()], "a replay was started"


def test_a_draft_id_with_spaces_around_it_is_found_through_both_doors(make_config, start_service, hand, fake_model):
    """Found: replay_draft strips the draft id it is given; POST /replay took ' <id> ' as it came and answered
    404 'no replay packet for draft ' <id> '' for a draft that has one (a copy-paste with a space)."""
    fake_model.responder = scripted
    svc = start_service(make_config(model={"url": fake_model.url}, supervisor={"check_seconds": 0.05}))
    draft = run_a_chain(svc, hand)
    r = requests.post(svc.url + "/replay", json={"draft_id": f" {draft['id']} "}, timeout=60)
    assert r.status_code == 200 and r.json()["draft_id"] == draft["id"], r.text
    out = call_tools(svc.url + "/mcp", [("replay_draft", {"draft_id": f" {draft['id']} "})], bearer="")
    assert out[0]["ok"] is True and out[0]["draft_id"] == draft["id"], out[0]
