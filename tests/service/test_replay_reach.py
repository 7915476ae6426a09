"""Where a replay may go, and how many at once (issue 28, items 2 and 6), against the running service.

Found from outside: POST /replay/{id} named any URL (it wrote a short-term into Memory and echoed Memory's
answer, followed a redirect to Memory's /long, and over MCP sent a draft's prompts to a listener of the
caller's choosing); eight slow replays took every request thread and /health went unanswered. Here the
listener is a real loopback socket that counts every connection made to it: a refused replay makes none.
"""
from __future__ import annotations

import asyncio
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hippocampus.replay import service as replay_service
from tests.contract.test_replay import scripted
from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import wait_for
from tests.service.test_mcp import call_tools
from tests.service.test_replay_service import run_a_chain

REFUSED = "replay reaches only the configured model and the candidates listed in replay.candidates; "


class Listener:
    """A loopback socket that accepts and counts every connection (and closes it unanswered)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, name="listener", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._thread.join(5)


class Redirector:
    """A listed candidate that answers every POST with a 307 (which keeps the POST) to `to`."""

    def __init__(self, to: str) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests += 1
                self.send_response(307)
                self.send_header("Location", to + "/chat/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="redirector",
                         daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    lis = Listener()
    yield lis
    lis.close()


def shorts(memory_url: str) -> int:
    r = requests.get(memory_url + "/short", params={"limit": 1}, timeout=10)
    r.raise_for_status()
    return r.json()["count"]


def tool_schema(url: str, name: str) -> dict:
    async def go():
        async with httpx2.AsyncClient(timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                listed = await client.list_tools()
                return next(t.input_schema for t in listed.tools if t.name == name)
    return asyncio.run(asyncio.wait_for(go(), 60))


def slow(seconds: float):
    """The scripted model, each answer after `seconds`."""
    return lambda body: {**scripted(body), "delay": seconds}


# ---------------------------------------------------------------- where it may go

def test_memory_a_redirect_an_unlisted_host_and_a_named_url_are_refused_and_reach_nothing(
        make_config, start_service, hand, fake_model, listener):
    fake_model.responder = scripted
    bouncer = Redirector(to=listener.url)
    cfg = make_config(model={"url": fake_model.url}, replay={"candidates": {"bouncer": {"url": bouncer.url}}})
    memory_url = cfg.memory.url
    cfg.replay.candidates["memory"] = {"url": memory_url.replace("127.0.0.1", "localhost") + "/short?x="}
    svc = start_service(cfg)
    try:
        draft = run_a_chain(svc, hand)
        before, asked_before = shorts(memory_url), len(fake_model.requests)
        replay_url = svc.url + f"/replay/{draft['id']}"

        refusals = {
            "memory listed": ({"candidate": "memory"}, REFUSED + "'memory' is not one of them (listed: bouncer)"),
            "memory named": ({"url": memory_url + "/short?x=", "extra_body": {"content": "x"}},
                             REFUSED + f"'{memory_url}/short?x=' is not one of them (listed: bouncer). Replay "
                                       "takes no url: name a listed candidate with \"candidate\""),
            "unlisted host": ({"url": listener.url}, REFUSED + f"'{listener.url}' is not one of them"),
            "unlisted name": ({"candidate": "elsewhere"}, REFUSED + "'elsewhere' is not one of them"),
            "extra_body": ({"candidate": "bouncer", "extra_body": {"content": "written into Memory"}},
                           "replay takes no extra_body from callers"),
        }
        for what, (body, detail) in refusals.items():
            r = requests.post(replay_url, json=body, timeout=10)
            assert r.status_code == 400, (what, r.text)
            assert r.json()["detail"].startswith(detail), (what, r.json())

        r = requests.post(replay_url, json={"candidate": "bouncer"}, timeout=30)     # listed, but it redirects
        assert r.status_code == 200, r.text
        calls = r.json()["candidate"]["calls"]
        assert [c["error"] for c in calls] == ["the candidate answered HTTP 307 (a redirect); replay follows no "
                                               "redirects, so nothing was sent on"] * 2
        assert bouncer.requests == 2

        assert "url" not in tool_schema(svc.url + "/mcp", "replay_draft")["properties"]
        out = call_tools(svc.url + "/mcp", [("replay_draft", {"draft_id": draft["id"], "url": listener.url}),
                                            ("replay_draft", {"draft_id": draft["id"], "candidate": "elsewhere"})])
    finally:
        bouncer.close()
    assert out[0]["ok"] is True and out[0]["candidate"]["candidate"] == "model"     # the url was no argument
    assert out[0]["candidate"]["url"] == fake_model.url and "answer" not in out[0]["candidate"]["calls"][0]
    assert out[1] == {"ok": False, "refused": True,
                      "message": REFUSED + "'elsewhere' is not one of them (listed: bouncer)"}
    assert listener.connections == 0                        # nothing reached the listener
    assert shorts(memory_url) == before                     # nothing was written into Memory
    assert len(fake_model.requests) == asked_before + 2     # only the MCP replay on the configured model


# ---------------------------------------------------------------- one at a time, off the request threads

def test_eight_slow_replays_at_once_one_runs_seven_are_busy_and_health_answers_throughout(
        make_config, start_service, hand, fake_model):
    fake_model.responder = scripted
    cand = FakeModel(responder=slow(2.0)).start()
    try:
        svc = start_service(make_config(model={"url": fake_model.url},
                                        replay={"candidates": {"cand": {"url": cand.url}}}))
        draft = run_a_chain(svc, hand)
        url = svc.url + f"/replay/{draft['id']}"
        health, done = [], threading.Event()

        def poll_health():
            while not done.is_set():
                t0 = time.monotonic()
                try:
                    ok = requests.get(svc.url + "/health", timeout=5).status_code == 200
                except requests.RequestException:
                    ok = False
                health.append((ok, time.monotonic() - t0))
                time.sleep(0.05)

        def post(_):
            t0 = time.monotonic()
            r = requests.post(url, json={"candidate": "cand", "timeout_seconds": 3600}, timeout=60)
            return r, time.monotonic() - t0

        poller = threading.Thread(target=poll_health, daemon=True)
        poller.start()
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(post, range(8)))
        done.set()
        poller.join(10)
    finally:
        cand.stop()
    ran = [(r, s) for r, s in answers if r.status_code == 200]
    busy = [(r, s) for r, s in answers if r.status_code == 409]
    assert len(ran) == 1 and len(busy) == 7, [r.status_code for r, _ in answers]
    assert max(s for _, s in busy) < 1.5, [round(s, 2) for _, s in busy]                  # at once
    for r, _ in busy:
        assert r.json()["detail"].startswith(f"a replay is already running (draft {draft['id']} on cand since ")
    result, seconds = ran[0][0].json(), ran[0][1]
    assert seconds >= 4.0 and result["candidate"]["checks"]["valid"] == 2                 # two calls, 2 s each
    assert result["candidate"]["timeout_seconds"] == 300 and result["candidate"]["timeout_cap"] == 300
    assert result["timeout_note"] == ("timeout_seconds 3600 is above the cap: each replay call may take at most "
                                      "300 s, so 300 s was used")
    assert len(health) >= 10 and all(ok for ok, _ in health)
    assert max(s for _, s in health) < 1.0, max(s for _, s in health)
    assert len(cand.requests) == 2                          # the seven busy ones sent nothing


def test_a_replay_longer_than_the_wait_answers_202_and_its_result_is_read_later(
        make_config, start_service, hand, fake_model, monkeypatch):
    monkeypatch.setattr(replay_service, "WAIT_SECONDS", 0.3)
    fake_model.responder = scripted
    cand = FakeModel(responder=slow(1.0)).start()
    try:
        svc = start_service(make_config(model={"url": fake_model.url},
                                        replay={"candidates": {"cand": {"url": cand.url}}}))
        draft = run_a_chain(svc, hand)
        r = requests.post(svc.url + f"/replay/{draft['id']}", json={"candidate": "cand"}, timeout=30)
        assert r.status_code == 202, r.text
        started = r.json()
        assert started["running"] is True and started["result"] == f"/replay?run={started['run']}"
        assert r.headers["Location"].endswith(started["result"])
        assert started["detail"].startswith(f"the replay of draft {draft['id']} on cand is still running")
        again = requests.post(svc.url + f"/replay/{draft['id']}", json={"candidate": "cand"}, timeout=30)
        assert again.status_code == 409
        out = call_tools(svc.url + "/mcp", [("replay_draft", {"draft_id": draft["id"], "candidate": "cand"})])
        assert out[0]["ok"] is False and out[0]["busy"] is True and out[0]["run"] == started["run"]
        assert "a replay is already running" in out[0]["message"]

        def finished():
            got = requests.get(svc.url + started["result"], timeout=10)
            return got if got.status_code == 200 else None
        got = wait_for(finished, timeout=20, what="the replay to finish").json()
        assert got["run"] == started["run"] and got["candidate"]["checks"]["valid"] == 2
        out = call_tools(svc.url + "/mcp", [("replay_result", {"run": started["run"]}),
                                            ("replay_result", {"run": "nope"})])
    finally:
        cand.stop()
    assert out[0]["ok"] is True and out[0]["candidate"]["checks"] == got["candidate"]["checks"]
    assert out[1]["ok"] is False and "no replay run 'nope' here" in out[1]["message"]
    r = requests.get(svc.url + "/replay", params={"run": "nope"}, timeout=10)
    assert r.status_code == 404 and "no replay run 'nope' here" in r.json()["detail"]
    kept = requests.get(svc.url + "/replay", timeout=10).json()
    assert kept["running"] is None and [k["run"] for k in kept["runs"]] == [started["run"]]
    assert kept["runs"][0]["result"] == started["result"] and "landed" not in kept["runs"][0]     # in brief
    assert "answer" not in got["candidate"]["calls"][0]
