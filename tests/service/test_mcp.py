"""The MCP tools against the running service: the SDK's own client, a raw JSON-RPC session
(what Claude Code sends), the bearer, busy, Memory down, and the nudge."""
from __future__ import annotations

import asyncio
import threading
import time

import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hippocampus import __version__
from hippocampus.mcp.tools import TOOL_NAMES, VOICE_TOOL_NAMES
from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

BEARER = "mcp-test-bearer"
AUTH = {"Authorization": f"Bearer {BEARER}"}
RAW_HEADERS = {**AUTH, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def call_tools(url: str, calls: list, *, mode: str = "auto", bearer: str = BEARER) -> dict:
    """Open one SDK client, list the tools, run the calls; {"tools": [...], name-or-index: structured result}."""
    async def go():
        out: dict = {}
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                listed = await client.list_tools()
                out["tools"] = [t.name for t in listed.tools]
                for i, (name, args) in enumerate(calls):
                    res = await client.call_tool(name, args)
                    out[i] = ({"is_error": True, "text": " ".join(getattr(c, "text", "") for c in res.content)}
                              if res.is_error else res.structured_content)
        return out
    return asyncio.run(asyncio.wait_for(go(), 90))


def seed_cluster(hand, n: int = 3) -> None:
    for i in range(n):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")


def model_reply(content: str = "the fish dream keeps coming back with a long tail") -> str:
    import json
    return json.dumps({"operations": [{"kind": "new_core", "content": content, "fragments": ["f1", "f2"],
                                       "target": None, "rationale": "a running dream"}]})


# ------------------------------------------------------------------ the SDK's own client
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_sdk_client_lists_and_calls_every_tool(make_config, start_service, hand, mode):
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    url = svc.url + "/mcp"
    out = call_tools(url, [
        ("sleep_status", {}),
        ("sleep_history", {"limit": 5}),
        ("recent_events", {"limit": 5, "type": ""}),
        ("check_now", {}),
        ("tend_now", {}),
        ("sleep_now", {}),
        ("sleep_now", {"without_brief": True}),
        ("nudge", {}),
        ("restart_actor", {"name": "nobody"}),
        ("restart_actor", {"name": "scheduler"}),
        ("recent_events", {"type": "brief_requested"}),
        ("sleep_history", {}),
    ], mode=mode)
    assert out["tools"] == TOOL_NAMES                     # the voice card is off: no voice tools
    for i in set(range(12)) - {8}:
        assert isinstance(out[i].get("message"), str) and out[i]["message"], out[i]
    status = out[0]
    assert status["ok"] is True and status["memory"]["reachable"] is True
    assert not (status["chain"] or {}).get("chain_open")
    assert status["say"] == status["explain"] == status["sentences"][0]     # the narrator's headline, as /status
    assert any(line.startswith("Model: Mechanical") for line in status["sentences"])
    assert any(line.startswith("Last sleep: Never") for line in status["sentences"])
    assert status["actors"] and set(status["actors"]) >= {"scheduler", "sleeper", "chain"}
    assert out[1] == {"ok": True, "count": 0, "entries": [], "message": "No sleep or tend on record yet."}
    assert out[3]["ok"] is True and out[3]["status"] in ("waiting_for_brief", "not_bedtime")
    assert out[4]["ok"] is True and out[4]["message"] == "Tended: quiet: nothing to tend."
    asked = out[5]
    assert asked["ok"] is True and asked["asked_for_brief"] is True
    assert "submit_brief" in asked["message"] and "nudge" in asked["message"]
    assert "without_brief=true" in asked["message"]
    blind = out[6]                                        # unsteered, now: nothing free to draft from
    assert blind["ok"] is True and blind["report"]["quiet"] is True and "quiet" in blind["message"].lower()
    assert out[7]["ok"] is True and "woke" in out[7]
    assert out[8]["is_error"] is True and "no actor named 'nobody'" in out[8]["text"]
    assert out[9]["ok"] is False and out[9]["running"] is True
    assert out[10]["count"] >= 1 and all(e["type"] == "brief_requested" for e in out[10]["entries"])
    assert out[11]["count"] >= 1 and out[11]["entries"][0]["kind"] == "sleep" and out[11]["entries"][0]["when"]


def test_sdk_client_without_the_bearer_is_refused(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    with pytest.raises(BaseException):                    # the SDK surfaces a 401 as a generic error
        call_tools(svc.url + "/mcp", [], bearer="wrong")


# ------------------------------------------------------------------ a raw JSON-RPC session
def test_raw_jsonrpc_initialize_list_and_call(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    url = svc.url + "/mcp"
    s = requests.Session()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "claude-code", "version": "1.0"}}}
    r = s.post(url, json=init, headers=RAW_HEADERS, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    body = r.json()
    assert body["id"] == 1 and body["result"]["protocolVersion"] == "2025-06-18"
    assert body["result"]["serverInfo"]["name"] == "seren-hippocampus"
    assert body["result"]["serverInfo"]["version"] == __version__
    assert "Connection" not in r.headers or r.headers["Connection"].lower() in ("keep-alive", "close")
    headers = {**RAW_HEADERS, "MCP-Protocol-Version": "2025-06-18"}
    r = s.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=10)
    assert r.status_code == 202, r.text
    r = s.post(url + "/", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    assert [t["name"] for t in r.json()["result"]["tools"]] == TOOL_NAMES
    r = s.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                          "params": {"name": "sleep_status", "arguments": {}}}, headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert result.get("isError") is not True
    assert result["structuredContent"]["ok"] is True and result["structuredContent"]["say"]


def test_raw_requests_without_bearer_get_401_and_get_is_405(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    url = svc.url + "/mcp"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
    no_auth = {k: v for k, v in RAW_HEADERS.items() if k != "Authorization"}
    r = requests.post(url, json=init, headers=no_auth, timeout=10)
    assert r.status_code == 401 and r.json() == {"detail": "unauthorized"}
    assert r.headers.get("WWW-Authenticate", "").startswith("Bearer")
    r = requests.post(url, json=init, headers={**no_auth, "Authorization": "Bearer nope"}, timeout=10)
    assert r.status_code == 401
    r = requests.get(url, headers=RAW_HEADERS, timeout=5)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"
    r = requests.delete(url + "/", headers=RAW_HEADERS, timeout=5)
    assert r.status_code == 405
    assert requests.get(svc.url + "/mcpx", headers=AUTH, timeout=5).status_code == 404


def test_the_mount_moves_and_the_host_check_turns_on(make_config, start_service):
    env = {"SEREN_HIPPOCAMPUS_MCP_MOUNT": "tools/mcp/", "SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS": "good.example:*"}
    svc = start_service(make_config(server={"bearer_token": BEARER}, environ=env))
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
    assert requests.post(svc.url + "/mcp", json=init, headers=RAW_HEADERS, timeout=5).status_code == 404
    r = requests.post(svc.url + "/tools/mcp", json=init, headers=RAW_HEADERS, timeout=5)
    assert r.status_code == 200, r.text                   # loopback is always on the list (issue 16)
    r = requests.post(svc.url + "/tools/mcp", json=init, headers={**RAW_HEADERS, "Host": "evil.example:7424"},
                      timeout=5)
    assert r.status_code == 421, r.text                   # the env var turns the check on, bearer or not
    r = requests.post(svc.url + "/tools/mcp/", json=init, headers={**RAW_HEADERS, "Host": "good.example:7424"},
                      timeout=5)
    assert r.status_code == 200, r.text
    paths = requests.get(svc.url + "/openapi.json", headers=AUTH, timeout=5).json()["paths"]
    assert "/tools/mcp" in paths and "/mcp" not in paths                # the document names where it is


def test_without_the_extra_mcp_answers_404_naming_it(make_config, start_service, monkeypatch):
    import hippocampus.mcp.mount as mount

    def missing(app, runtime):
        raise ImportError("No module named 'a2wsgi'")
    monkeypatch.setattr(mount, "mount_mcp", missing)
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    assert svc.mcp is None
    r = requests.post(svc.url + "/mcp", json={}, headers=RAW_HEADERS, timeout=5)
    assert r.status_code == 404
    assert r.json() == {"detail": "MCP is not installed: pip install 'seren-hippocampus[mcp]'"}
    assert requests.get(svc.url + "/status", headers=AUTH, timeout=5).status_code == 200


# ------------------------------------------------------------------ busy, Memory down
def test_sleep_now_while_a_sleep_runs_answers_busy(make_config, start_service, hand, fake_model):
    fake_model.replies = [{"content": '{"operations": []}', "delay": 3}]
    seed_cluster(hand)
    hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config(model={"url": fake_model.url}))
    result: dict = {}
    t = threading.Thread(target=lambda: result.update(r=requests.post(svc.url + "/check", timeout=60)))
    t.start()
    try:
        wait_for(lambda: fake_model.in_flight > 0, timeout=15, what="the model call")
        out = call_tools(svc.url + "/mcp", [("sleep_now", {}), ("tend_now", {}), ("check_now", {}),
                                            ("sleep_status", {})])
        fake_model.release()                   # asked while busy: the check may end now
    finally:
        t.join(30)
    for i in range(3):
        assert out[i]["ok"] is False and out[i]["busy"] is True, out[i]
        assert out[i]["message"].startswith("a check is running since ")
        assert "nothing was started. sleep_status shows its progress." in out[i]["message"]
    assert out[3]["busy"]["what"] == "check" and out[3]["say"].startswith("A check is running since")
    assert result["r"].status_code == 200
    assert len(fake_model.requests) == 1                  # nothing else was started


def test_memory_down_is_a_message_and_no_failed_sleep(make_config, start_service):
    dead = f"http://127.0.0.1:{free_port()}"
    svc = start_service(make_config(memory={"url": dead}, server={"bearer_token": BEARER}))
    out = call_tools(svc.url + "/mcp", [("sleep_status", {}), ("sleep_now", {}), ("sleep_now", {"without_brief": True}),
                                        ("tend_now", {}), ("check_now", {})])
    status = wait_for(lambda: (lambda st: st if st["memory"]["reachable"] is False else None)(
        call_tools(svc.url + "/mcp", [("sleep_status", {})])[0]), timeout=15, what="the watch to see Memory down")
    assert status["ok"] is True and status["memory"]["url"] == dead
    assert status["say"].startswith(f"Memory at {dead} is not answering (")
    assert sum(line.count("is not answering") for line in status["sentences"]) == 1     # the error once
    for i in range(1, 5):                              # did nothing because Memory is down: an error result
        assert out[i]["is_error"] is True, out[i]
        assert f"SerenMemory at {dead} is not answering (" in out[i]["text"]
        assert "nothing was started" in out[i]["text"] and "it needs Memory up" in out[i]["text"]
    assert requests.get(svc.url + "/history", headers=AUTH, timeout=5).json()["entries"] == []
    events = requests.get(svc.url + "/events", headers=AUTH, timeout=5).json()["entries"]
    assert not [e for e in events if e["type"] in ("sleep_failed", "sleep_done")]
    st = requests.get(svc.url + "/status", headers=AUTH, timeout=5).json()
    assert st["last_sleep"] is None and st["last_check"] is None


# ------------------------------------------------------------------ the nudge
def test_nudge_returns_at_once_and_the_tick_runs(make_config, start_service, hand, fake_model):
    fake_model.replies = [{"content": model_reply(), "delay": 2}]
    seed_cluster(hand)
    brief_id = hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config(model={"url": fake_model.url}))
    assert requests.get(svc.url + "/status", timeout=5).json()["last_check"] is None
    t0 = time.monotonic()
    out = call_tools(svc.url + "/mcp", [("nudge", {})])
    # the whole client round trip (connect, list, call, close) while the tick sleeps on a 2 s model
    assert time.monotonic() - t0 < 2.0
    assert out[0] == {"ok": True, "woke": True, "message": "carrying on now"}
    wait_for(lambda: fake_model.in_flight > 0 or fake_model.requests, timeout=10, what="the tick's model call")
    fake_model.release()                       # the nudge answered while the tick slept: it may end now
    sub = wait_for(lambda: [e for e in requests.get(svc.url + "/events", timeout=5).json()["entries"]
                            if e["type"] == "draft_submitted"], timeout=20, what="draft_submitted")
    events = requests.get(svc.url + "/events", timeout=5).json()["entries"]
    assert any(e["type"] == "nudged" for e in events)
    st = wait_for(lambda: (lambda s: s if s["last_check"] else None)(
        requests.get(svc.url + "/status", timeout=5).json()), timeout=20, what="the check")
    assert st["last_check"]["status"] == "sleeping" and st["last_check"]["brief_id"] == brief_id
    assert hand.draft(sub[0]["draft_id"])["operations"][0]["kind"] == "new_core"


def test_nudge_call_is_quick_in_isolation(make_config, start_service, hand, fake_model):
    """The nudge tool itself (on an open client) answers well under a second while the tick sleeps."""
    fake_model.replies = [{"content": model_reply(), "delay": 3}]
    seed_cluster(hand)
    hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config(model={"url": fake_model.url}))

    async def go():
        async with httpx2.AsyncClient(timeout=30) as http:
            async with Client(streamable_http_client(svc.url + "/mcp", http_client=http)) as client:
                await client.list_tools()
                t0 = time.monotonic()
                res = await client.call_tool("nudge", {})
                took = time.monotonic() - t0
                return res.structured_content, took
    res, took = asyncio.run(go())
    assert res["ok"] is True and took < 1.0, took
    wait_for(lambda: fake_model.in_flight > 0, timeout=10, what="the tick's model call")
    fake_model.release()                       # the nudge answered while the tick slept: it may end now
    st = wait_for(lambda: (lambda s: s if s["last_check"] else None)(
        requests.get(svc.url + "/status", timeout=5).json()), timeout=20, what="the check")
    assert st["last_check"]["status"] == "sleeping"


def test_voice_tools_absent_when_the_card_is_off(make_config, start_service):
    svc = start_service(make_config())
    out = call_tools(svc.url + "/mcp", [])
    assert not set(VOICE_TOOL_NAMES) & set(out["tools"])


# ------------------------------------------------------------------ conventions (issue 32, item 6)
def _raw_session(url: str) -> tuple:
    s = requests.Session()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    assert s.post(url, json=init, headers=RAW_HEADERS, timeout=10).status_code == 200
    headers = {**RAW_HEADERS, "MCP-Protocol-Version": "2025-06-18"}
    s.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=10)
    return s, headers


def _call(s, url, headers, name, arguments, rid=3) -> dict:
    r = s.post(url, json={"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}}, headers=headers, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["result"]


def test_every_tool_has_a_title_and_every_hint_set_truthfully(make_config, start_service, fake_model):
    """Found: only readOnlyHint, so by the spec's defaults a nudge counted as destructive and open-world."""
    svc = start_service(make_config(server={"bearer_token": BEARER}, voice={"enabled": True},
                                    model={"url": fake_model.url}))
    s, headers = _raw_session(svc.url + "/mcp")
    r = s.post(svc.url + "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=10)
    tools = {t["name"]: t for t in r.json()["result"]["tools"]}
    assert set(tools) == set(TOOL_NAMES + VOICE_TOOL_NAMES)
    for name, t in tools.items():
        ann = t["annotations"]
        assert t["title"] and ann["title"] == t["title"], t
        assert {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} <= set(ann), (name, ann)
        assert ann["openWorldHint"] is False, name
        if ann["readOnlyHint"]:
            assert ann["destructiveHint"] is False, name
    hint = {name: t["annotations"] for name, t in tools.items()}
    assert hint["nudge"]["destructiveHint"] is False and hint["nudge"]["readOnlyHint"] is False
    assert hint["sleep_now"]["readOnlyHint"] is False and hint["sleep_now"]["idempotentHint"] is False
    assert hint["check_now"]["destructiveHint"] is True       # it purges what was flagged
    assert hint["sleep_status"]["readOnlyHint"] is True and hint["sleep_status"]["idempotentHint"] is True
    assert hint["set_voice_card"]["idempotentHint"] is True and hint["set_voice_card"]["destructiveHint"] is False
    assert hint["restart_actor"]["readOnlyHint"] is False and hint["restart_actor"]["idempotentHint"] is True


def test_a_missing_argument_is_refused_in_plain_words(make_config, start_service):
    """Found: `Field required [type=missing...` (pydantic's text) for a call without its argument."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    s, headers = _raw_session(svc.url + "/mcp")
    res = _call(s, svc.url + "/mcp", headers, "restart_actor", {})
    assert res["isError"] is True
    assert res["content"][0]["text"] == "restart_actor was not run: name is required: give it as text."
    unknown = _call(s, svc.url + "/mcp", headers, "sleep_later", {}, rid=4)
    assert unknown["isError"] is True and unknown["content"][0]["text"].startswith(
        "There is no tool named 'sleep_later' here; the tools are: sleep_status, sleep_now")


@pytest.mark.parametrize("limit", ["--5", "\u00b2", "9" * 5000])
def test_a_limit_that_only_looks_like_digits_is_refused_not_a_crash(make_config, start_service, service_log, limit):
    """Found: isdigit() took "--5" (signs stripped), "²" and 5,000 digits, then int() raised: the tool "failed" with
    Python's words and the log had a traceback, for a plain wrong argument."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    s, headers = _raw_session(svc.url + "/mcp")
    res = _call(s, svc.url + "/mcp", headers, "sleep_history", {"limit": limit})
    assert res["isError"] is True
    assert res["content"][0]["text"].startswith("sleep_history was not run: limit must be a whole number, not ")
    assert "Traceback" not in service_log.getvalue()

@pytest.mark.parametrize("mount", ["/health/mcp", "/viewer/tools"])
def test_the_mcp_endpoint_under_a_public_path_still_needs_the_bearer(make_config, start_service, mount):
    """Found: server.mcp_mount under /health/ or /viewer/ (public for the page and the probe) served every tool,
    sleep_now and set_voice_card included, to a caller with no bearer."""
    svc = start_service(make_config(server={"bearer_token": BEARER, "mcp_mount": mount}))
    url = svc.url + mount
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    bare = {k: v for k, v in RAW_HEADERS.items() if k != "Authorization"}
    r = requests.post(url, json=listed, headers={**bare, "MCP-Protocol-Version": "2025-06-18"}, timeout=30)
    assert (r.status_code, r.json()) == (401, {"detail": "unauthorized"}), r.text[:300]
    s, headers = _raw_session(url)                  # with the bearer: the tools, as at /mcp
    r = s.post(url, json=listed, headers=headers, timeout=30)
    assert r.status_code == 200 and "sleep_now" in {t["name"] for t in r.json()["result"]["tools"]}
    assert requests.get(svc.url + "/health", timeout=10).status_code == 200      # the probe stays public

@pytest.fixture
def service_log():
    """The hippocampus's lines, DEBUG and up, as a log file would get them."""
    import io
    import logging

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    loggers = [logging.getLogger(n) for n in ("hippocampus.http", "hippocampus.mcp")]
    old = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield out
    for lg, level in zip(loggers, old):
        lg.removeHandler(handler)
        lg.setLevel(level)


def test_one_info_line_per_tool_call_and_the_transport_at_debug(make_config, start_service, service_log):
    """Found: 10-14 INFO lines per wake-up (`POST /mcp -> 200`, `GET /mcp -> 405`), none naming the tool."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    url = svc.url + "/mcp"
    s, headers = _raw_session(url)
    s.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=10)
    _call(s, url, headers, "sleep_status", {})
    _call(s, url, headers, "restart_actor", {"name": "scheduler"}, rid=4)     # running: a refusal, not an error
    _call(s, url, headers, "sleep_history", {"limit": "many"}, rid=5)
    assert requests.get(url, headers=RAW_HEADERS, timeout=5).status_code == 405
    lines = service_log.getvalue().splitlines()
    info = [ln for ln in lines if ln.startswith(("INFO", "WARNING", "ERROR")) and "MCP tools at" not in ln]
    assert len(info) == 3, lines                  # the one line at mount aside: one per call, none per request
    assert info[0].startswith("INFO hippocampus.mcp.server: MCP tool sleep_status: done: "), info
    assert info[1].startswith("INFO hippocampus.mcp.server: MCP tool restart_actor: not done: scheduler is running"), info
    assert info[2].startswith("INFO hippocampus.mcp.server: MCP tool sleep_history: error: sleep_history was not run: "
                              "limit must be a whole number"), info
    debug = [ln for ln in lines if ln.startswith("DEBUG hippocampus.http")]
    assert any("POST /mcp -> 200" in ln for ln in debug), lines
    assert any("GET /mcp -> 405" in ln for ln in debug), lines
    assert not [ln for ln in lines if ln.startswith("INFO") and "/mcp ->" in ln], lines
