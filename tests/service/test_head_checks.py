"""What is refused from a request head alone (issue 28, item 7 and the smaller notes): a body without the
bearer is 401 before any of it is sent; Content-Length with Transfer-Encoding is 400 and nothing after it
runs; a Host that is not one name or address with an optional port is 421 on every route and on /mcp;
OPTIONS /mcp is answered without loading the MCP SDK."""
from __future__ import annotations

import json
import time

import pytest
import requests

from tests.harness.raw_http import connect, exchange, family_detail, one_answer, read_until_closed, request

TOKEN = "head-check-bearer"
AUTH = ("Authorization", f"Bearer {TOKEN}")
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}}).encode()
MCP = [("Accept", "application/json, text/event-stream"), ("Content-Type", "application/json")]


def nudges(svc) -> list:
    return [e for e in svc.runtime.events.list(limit=1000) if e["type"].startswith("nudge")]


# ---------------------------------------------------------------- 401 from the head

@pytest.mark.parametrize("head", [
    b"POST /sleep HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n",
    b"PUT /voice HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n",
    b"POST /nudge HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n"
    b"Authorization: Bearer wrong-one\r\n\r\n"], ids=["sleep", "expect-continue", "chunked", "mcp-wrong-bearer"])
def test_a_body_without_the_bearer_is_401_before_it_is_sent(make_config, start_service, head):
    svc = start_service(make_config(server={"bearer_token": TOKEN}))
    with connect(svc.port) as s:
        t0 = time.monotonic()
        s.sendall(head)                                  # the head only: no byte of the body
        raw = read_until_closed(s, 3)
        took = time.monotonic() - t0
    status, headers, _ = answer = one_answer(raw)        # no "100 Continue" either
    assert family_detail(answer, 401) == "unauthorized"  # the app's own answer
    assert headers["www-authenticate"] == "Bearer" and headers["connection"] == "close"
    assert took < 1.0, took                              # answered, and the connection closed, at once


def test_with_the_bearer_the_body_is_read_and_public_paths_need_none(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": TOKEN}, voice={"enabled": True}))
    with connect(svc.port) as s:                          # the good bearer: the server waits for the body
        s.sendall(b"PUT /voice HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" % TOKEN.encode())
        assert read_until_closed(s, 0.5) == b""
    body = json.dumps({"text": "my own voice", "why": "said with the bearer"}).encode()
    raw = exchange(svc.port, request("PUT", "/voice", [("Host", "127.0.0.1"), AUTH, ("Connection", "close"),
                                                       ("Content-Type", "application/json")], body))
    assert one_answer(raw)[0] == 200, raw
    # a public path is not refused from the head (its own answer comes after the body)
    raw = exchange(svc.port, request("POST", "/health", [("Host", "127.0.0.1"), ("Connection", "close")], b"x"))
    assert one_answer(raw)[0] == 405, raw


# ---------------------------------------------------------------- two framings

SMUGGLED = b"POST /nudge HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"


@pytest.mark.parametrize("version", ["1.1", "1.0"])
def test_content_length_with_transfer_encoding_is_400_and_nothing_after_it_runs(make_config, start_service,
                                                                                 version):
    svc = start_service(make_config(sleep={"nudge_wait_seconds": 0}))
    raw = exchange(svc.port, (f"POST /nudge HTTP/{version}\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                              f"Content-Length: {5 + len(SMUGGLED)}\r\nTransfer-Encoding: chunked\r\n\r\n"
                              ).encode() + b"0\r\n\r\n" + SMUGGLED, within=3)
    detail = family_detail(one_answer(raw), 400)
    assert "Content-Length" in detail and "Transfer-Encoding" in detail, detail
    assert raw.count(b"HTTP/1.") == 1, raw
    assert nudges(svc) == []                              # neither the request nor the one it carried ran
    ok = requests.post(svc.url + "/nudge", data="x", headers={"Content-Type": "text/plain"}, timeout=10)
    assert ok.status_code == 200, ok.text                 # and a plain nudge still does


# ---------------------------------------------------------------- Host forms

def host_forms(port: int) -> list:
    """Host headers no browser sends: each is a list of Host values (two: two Host headers)."""
    return [[f"127.0.0.1:{port}@evil.example"], ["127.0.0.1:7424@evil"], [f"127.0.0.1:{port}:80"],
            [f"localhost:{port}:evil.example"], [f"127.0.0.1:{port}", "evil.example"],
            [f"127.0.0.1:{port}", f"127.0.0.1:{port}"], [f"127.0.0.1:{port} evil.example"],
            [f"127.0.0.1:{port}x"], ["[evil.example]:7424"], [f"[::1]:{port}@evil"], [""]]


ROUTES = [("GET", "/status", b""), ("GET", "/events", b""), ("GET", "/health", b""), ("GET", "/viewer", b""),
          ("GET", "/", b""), ("GET", "/openapi.json", b""), ("PUT", "/voice", b'{"text": "rebound voice"}'),
          ("POST", "/nudge", b"x"), ("POST", "/mcp", INIT), ("OPTIONS", "/mcp", b""), ("GET", "/mcp", b"")]


@pytest.mark.parametrize("bearer", ["", TOKEN], ids=["no-bearer", "bearer"])
def test_a_host_no_browser_sends_is_421_on_every_route_and_on_mcp(make_config, start_service, bearer):
    svc = start_service(make_config(server={"bearer_token": bearer}, voice={"enabled": True},
                                    sleep={"nudge_wait_seconds": 0}))
    auth = [AUTH] if bearer else []
    for hosts in host_forms(svc.port):
        for method, path, body in ROUTES:
            headers = [*[("Host", h) for h in hosts], *auth, ("Connection", "close"),
                       *(MCP if path == "/mcp" else [("Content-Type", "text/plain")])]
            detail = family_detail(one_answer(exchange(svc.port, request(method, path, headers, body))), 421)
            assert "Host" in detail, (hosts, path, detail)
    assert nudges(svc) == [] and svc.runtime.ctx.voice.current() is None
    # the forms a browser sends still answer
    for host in (f"127.0.0.1:{svc.port}", "127.0.0.1", f"LocalHost:{svc.port}", f"[::1]:{svc.port}", "localhost.:1"):
        raw = exchange(svc.port, request("GET", "/status", [("Host", host), *auth, ("Connection", "close")]))
        assert one_answer(raw)[0] == 200, (host, raw)


# ---------------------------------------------------------------- OPTIONS /mcp

def test_options_and_get_on_mcp_leave_the_sdk_unloaded(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": TOKEN}))
    for method, headers in (("OPTIONS", {}), ("OPTIONS", {"Origin": "http://evil.example",
                                                          "Access-Control-Request-Method": "POST"}),
                            ("GET", {"Authorization": f"Bearer {TOKEN}"}),
                            ("DELETE", {"Authorization": f"Bearer {TOKEN}"})):
        r = requests.request(method, svc.url + "/mcp", headers=headers, timeout=10)
        assert r.status_code == 405 and r.headers["Allow"] == "POST", (method, r.status_code, r.text)
        assert r.json() == {"detail": "this MCP endpoint takes POST only (stateless, JSON answers)"}
        assert "Access-Control-Allow-Origin" not in r.headers
    assert not svc.lazy_mcp.started and svc.lazy_mcp.mounted is None, "a request that is no MCP call loaded the SDK"
    # the first call loads it, and the mounted endpoint answers OPTIONS the same way
    r = requests.post(svc.url + "/mcp", data=INIT, headers={**dict(MCP), "Authorization": f"Bearer {TOKEN}"},
                      timeout=60)
    assert r.status_code == 200, r.text
    assert svc.lazy_mcp.started and svc.mcp is not None
    r = requests.options(svc.url + "/mcp", timeout=10)
    assert r.status_code == 405 and r.headers["Allow"] == "POST"


def test_options_mcp_in_a_fresh_process_does_not_import_the_sdk(tmp_path):
    """The same from outside: a service in its own process, an OPTIONS /mcp, then `mcp` not in sys.modules."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import sys, requests
        from hippocampus import config as cm
        from hippocampus.service.root import Service
        cfg = cm.build({{"server": {{"port": 0, "bearer_token": "{TOKEN}"}}, "model": {{"url": ""}},
                         "memory": {{"url": "http://127.0.0.1:9"}},
                         "sleep": {{"mode": "external", "state_path": {str(tmp_path / "state.json")!r}}}}},
                       environ={{}})
        svc = Service(cfg).start(); svc.serve_in_thread()
        r = requests.options(svc.url + "/mcp", timeout=10)
        print(r.status_code, "mcp" in sys.modules, svc.lazy_mcp.started)
        svc.request_stop(); svc.wait_stopped(30)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-3:] == ["405", "False", "False"], out.stdout
