"""No web page can drive the service (issue 16): the Host allow-list (421, against DNS rebinding), the Origin
check on every state-changing request (403, against cross-site requests), CORS only for the origins the
operator names, the MCP endpoint on the same list, and a viewer that cannot be framed."""
from __future__ import annotations

import base64
import functools
import hashlib
import re

import pytest
import requests

from tests.harness.reviewer import wait_for

EVIL = "http://evil.example"
TOKEN = "s3cret"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
# every state-changing route, as a page would send it: a "simple" request where one exists
ACTING = [("POST", "/sleep?without_brief=true", "x"), ("POST", "/tend", "x"), ("POST", "/check", "x"),
          ("POST", "/nudge", "x"), ("POST", "/actors/sleeper/restart?force=true", "x"),
          ("PUT", "/voice", '{"text": "rebound voice", "why": "a page said so"}'), ("POST", "/mcp", None)]


def family(r: requests.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["Content-Type"].startswith("application/json"), r.headers
    body = r.json()
    assert list(body) == ["detail"] and isinstance(body["detail"], str) and body["detail"], body
    return body["detail"]


def send(svc, method: str, path: str, body, headers: dict) -> requests.Response:
    if path == "/mcp":
        return requests.post(svc.url + path, json=INIT, headers={**MCP_HEADERS, **headers}, timeout=30)
    return requests.request(method, svc.url + path, data=body,
                            headers={"Content-Type": "text/plain", **headers}, timeout=30)


def ticks(svc) -> int:
    return (svc.runtime.board.get("ticks") or {}).get("ticks", 0)


def nothing_happened(svc) -> None:
    rt = svc.runtime
    assert not [e for e in rt.events.list(limit=1000) if e["type"].startswith("nudge")]
    assert not rt.scheduler.nudge_pending() and ticks(svc) == 0
    assert not rt.ctx.state.get("history"), rt.ctx.state.get("history")
    assert rt.ctx.voice.current() is None
    assert all(not a.get("restarts") for a in (rt.board.get("actors") or {}).values()), rt.board.get("actors")


@pytest.fixture
def open_svc(make_config, start_service):
    svc = start_service(make_config(voice={"enabled": True}, sleep={"nudge_wait_seconds": 0}))
    assert svc.mcp is not None                    # the background MCP mount is done
    return svc


# ---------------------------------------------------------------- the Origin check

def test_a_cross_origin_nudge_is_403_and_no_tick(open_svc):
    svc = open_svc
    r = requests.post(svc.url + "/nudge", data="x", headers={"Content-Type": "text/plain", "Origin": EVIL},
                      timeout=10)
    assert "evil.example" in family(r, 403)
    assert "Access-Control-Allow-Origin" not in r.headers
    nothing_happened(svc)
    # the same request with no Origin (curl, Python, the service manager) acts, and its tick runs
    r = requests.post(svc.url + "/nudge", data="x", headers={"Content-Type": "text/plain"}, timeout=10)
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    wait_for(lambda: ticks(svc) >= 1, timeout=20, what="the nudged tick")


@pytest.mark.parametrize("headers", [
    {"Origin": EVIL}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
    {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"}, {"Origin": "http://127.0.0.1:1"},
    {"Origin": "https://evil.example:7424"}], ids=["evil", "null", "cross-site", "both", "other-port", "https"])
def test_no_state_changing_route_takes_a_page_from_another_origin(open_svc, headers):
    for method, path, body in ACTING:
        r = send(open_svc, method, path, body, headers)
        family(r, 403)
        assert not any(h.lower().startswith("access-control-") for h in r.headers), (path, r.headers)
    nothing_happened(open_svc)


def test_the_services_own_origin_acts(open_svc):
    svc = open_svc
    own = {"Origin": f"http://127.0.0.1:{svc.port}", "Sec-Fetch-Site": "same-origin"}
    r = requests.put(svc.url + "/voice", json={"text": "I speak plainly", "why": "the viewer"},
                     headers=own, timeout=10)
    assert r.status_code == 200 and r.json()["version"] == 1, r.text
    assert requests.post(svc.url + "/nudge", headers=own, timeout=10).status_code == 200
    assert send(svc, "POST", "/mcp", None, own).status_code == 200
    # reads are never refused for their Origin (and get no CORS header: the browser keeps them from the page)
    r = requests.get(svc.url + "/status", headers={"Origin": EVIL}, timeout=10)
    assert r.status_code == 200 and "Access-Control-Allow-Origin" not in r.headers


# ---------------------------------------------------------------- the Host allow-list

def test_a_foreign_host_is_421_on_every_route_and_loopback_names_are_200(open_svc):
    svc, port = open_svc, open_svc.port
    evil = {"Host": f"evil.example:{port}"}
    for method, path, body in [("GET", "/status", None), ("GET", "/events", None), ("GET", "/health", None),
                               ("GET", "/viewer", None), ("GET", "/voice", None),
                               ("PUT", "/voice", '{"text": "rebound voice"}'), ("POST", "/mcp", None),
                               ("POST", "/nudge", "")]:
        r = send(svc, method, path, body, evil)
        assert "evil.example" in family(r, 421), path
    nothing_happened(svc)
    for host in (f"localhost:{port}", f"LocalHost:{port}", f"127.0.0.1:{port}", "127.0.0.1", f"[::1]:{port}"):
        assert requests.get(svc.url + "/status", headers={"Host": host}, timeout=10).status_code == 200, host
    local = {"Host": f"localhost:{port}"}
    r = requests.put(svc.url + "/voice", json={"text": "my own voice"}, headers=local, timeout=10)
    assert r.status_code == 200, r.text
    assert send(svc, "POST", "/mcp", None, local).status_code == 200


def test_allowed_hosts_extends_the_list(make_config, start_service):
    svc = start_service(make_config(server={"allowed_hosts": ["box.lan", "Other.lan:9999"]}))
    port = svc.port
    for host, status in ((f"box.lan:{port}", 200), ("box.lan", 200), ("other.lan:9999", 200),
                         (f"other.lan:{port}", 421), (f"localhost:{port}", 200), (f"evil.example:{port}", 421)):
        r = requests.get(svc.url + "/status", headers={"Host": host}, timeout=10)
        assert r.status_code == status, (host, r.status_code, r.text)


def test_an_allowed_host_written_as_an_origin_is_its_host(make_config, start_service):
    """Found: allowed_hosts: [http://box.lan:9999] (an origin, as allowed_origins takes) matched no Host at all,
    silently: box.lan:9999 got 421 'add it to server.allowed_hosts' though it was there."""
    svc = start_service(make_config(server={"allowed_hosts": ["https://Box.lan/", "http://other.lan:9999"]}))
    port = svc.port
    for host, status in ((f"box.lan:{port}", 200), ("other.lan:9999", 200), (f"other.lan:{port}", 421),
                         (f"evil.example:{port}", 421)):
        r = requests.get(svc.url + "/status", headers={"Host": host}, timeout=10)
        assert r.status_code == status, (host, r.status_code, r.text)

def test_with_a_bearer_the_bearer_is_the_guard_unless_hosts_are_listed(make_config, start_service):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    svc = start_service(make_config(server={"bearer_token": TOKEN}))
    evil = {"Host": f"evil.example:{svc.port}"}
    assert requests.get(svc.url + "/status", headers=evil, timeout=10).status_code == 401
    assert requests.get(svc.url + "/status", headers={**evil, **auth}, timeout=10).status_code == 200
    r = requests.post(svc.url + "/nudge", headers={**auth, "Origin": EVIL}, timeout=10)
    family(r, 403)                                # the Origin check holds with a bearer too
    listed = start_service(make_config(server={"bearer_token": TOKEN, "allowed_hosts": ["box.lan"]}))
    for host, status in ((f"evil.example:{listed.port}", 421), (f"box.lan:{listed.port}", 200),
                         (f"localhost:{listed.port}", 200)):
        r = requests.get(listed.url + "/status", headers={"Host": host, **auth}, timeout=10)
        assert r.status_code == status, (host, r.status_code)


# ---------------------------------------------------------------- the MCP endpoint's two env lists

def test_the_mcp_env_lists_work_as_named_and_keep_loopback(make_config, start_service):
    svc = start_service(make_config(environ={"SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS": "box.lan:*"}))
    assert svc.mcp is not None
    port = svc.port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"box.lan:{port}"):
        r = send(svc, "POST", "/mcp", None, {"Host": host, "Origin": f"http://{host}"})
        assert r.status_code == 200, (host, r.text)   # the SDK's own check takes loopback and the origins
    r = send(svc, "POST", "/mcp", None, {"Host": f"evil.example:{port}"})
    family(r, 421)
    assert requests.get(svc.url + "/status", headers={"Host": f"box.lan:{port}"}, timeout=10).status_code == 421

    svc = start_service(make_config(environ={"SEREN_HIPPOCAMPUS_MCP_ALLOWED_ORIGINS": "http://tool.lan:3000"}))
    assert svc.mcp is not None
    tool = {"Origin": "http://tool.lan:3000", "Sec-Fetch-Site": "cross-site"}
    assert send(svc, "POST", "/mcp", None, tool).status_code == 200
    family(send(svc, "POST", "/nudge", "", tool), 403)       # the MCP origins are for /mcp only
    family(send(svc, "POST", "/mcp", None, {"Origin": EVIL}), 403)


def test_the_sdk_check_is_fed_loopback(make_config):
    from hippocampus.mcp import sdk
    from hippocampus.mcp.mount import security_settings

    settings = functools.partial(security_settings, sdk.load().TransportSecuritySettings)
    cfg = make_config(server={"allowed_hosts": ["box.lan"]})
    off = settings(cfg.server)
    assert off.enable_dns_rebinding_protection is False
    cfg = make_config(server={"allowed_hosts": ["box.lan"]},
                      environ={"SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS": "tool.lan:7424"})
    on = settings(cfg.server)
    assert on.enable_dns_rebinding_protection is True
    assert {"localhost:*", "127.0.0.1:*", "[::1]:*", "box.lan:*", "tool.lan:7424"} <= set(on.allowed_hosts)
    assert {"http://localhost:*", "https://127.0.0.1:*", "http://tool.lan:7424"} <= set(on.allowed_origins)


# ---------------------------------------------------------------- CORS only when named

def test_no_cors_header_unless_an_origin_is_named(open_svc, make_config, start_service):
    preflight = {"Origin": EVIL, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"}
    for path in ("/nudge", "/mcp", "/voice"):
        r = requests.options(open_svc.url + path, headers=preflight, timeout=10)
        assert not any(h.lower().startswith("access-control-") for h in r.headers), (path, r.headers)

    dash = "http://dash.lan:3000"
    svc = start_service(make_config(server={"allowed_origins": [dash + "/"]}))
    for path in ("/nudge", "/mcp"):
        r = requests.options(svc.url + path, headers={**preflight, "Origin": dash}, timeout=10)
        assert r.status_code == 204, (path, r.status_code, r.text)
        assert r.headers["Access-Control-Allow-Origin"] == dash
        assert "POST" in r.headers["Access-Control-Allow-Methods"]
        assert "Authorization" in r.headers["Access-Control-Allow-Headers"]
    r = requests.post(svc.url + "/nudge", headers={"Origin": dash, "Sec-Fetch-Site": "cross-site"}, timeout=10)
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == dash, r.headers
    assert "Origin" in r.headers.get("Vary", "")
    r = requests.post(svc.url + "/nudge", headers={"Origin": EVIL}, timeout=10)
    family(r, 403)
    assert "Access-Control-Allow-Origin" not in r.headers


def test_an_allowed_origin_written_with_its_default_port_is_the_origin_a_browser_sends(make_config, start_service):
    """Found: allowed_origins: [https://dash.lan:443] never matched: a browser's Origin leaves the scheme's own port
    out (https://dash.lan), so the page named as allowed got 403 and no CORS header."""
    svc = start_service(make_config(server={"allowed_origins": ["https://dash.lan:443", "http://box.lan:80/"]}))
    for origin in ("https://dash.lan", "http://box.lan"):
        r = requests.post(svc.url + "/nudge", headers={"Origin": origin, "Sec-Fetch-Site": "cross-site"}, timeout=10)
        assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == origin, (origin, r.text)
    family(requests.post(svc.url + "/nudge", headers={"Origin": "http://dash.lan:8080"}, timeout=10), 403)

# ---------------------------------------------------------------- the viewer's headers

def test_the_viewer_cannot_be_framed_and_runs_only_its_own_script(open_svc):
    r = requests.get(open_svc.url + "/viewer", timeout=10)
    assert r.status_code == 200
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    csp = dict(d.strip().split(" ", 1) for d in r.headers["Content-Security-Policy"].split(";"))
    assert csp["frame-ancestors"] == "'none'"
    sources = csp["script-src"].split()
    assert sources and all(re.fullmatch(r"'sha256-[A-Za-z0-9+/=]+'", s) for s in sources), sources
    page = r.text
    blocks = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert blocks and "<script src" not in page
    for body in blocks:
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in sources
    markup = re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"\son[a-z]+\s*=", markup, re.I), re.findall(r"<[^>]*\son[a-z]+\s*=[^>]*>", markup)
    assert re.search(r'id="sleepBtn"[^>]*data-hx-on=', markup)


def test_a_bearer_with_spaces_or_a_line_break_around_it_is_the_token_a_client_can_send(make_config, start_service):
    """Found: a bearer that came with a trailing space or line break (a Windows `set X=tok `, an env file, a
    keyring entry ending in a newline) was required as it came; HTTP drops the spaces around a header's value, so
    no client could ever send it: every call was 401, while check-config said nothing."""
    import requests as http

    svc = start_service(make_config(server={"bearer_token": "tok-with-space \n"}))
    r = http.get(svc.url + "/actors", headers={"Authorization": "Bearer tok-with-space"}, timeout=10)
    assert r.status_code == 200, r.text
    assert http.get(svc.url + "/actors", timeout=10).status_code == 401
