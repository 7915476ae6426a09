"""/mcp loaded ahead of the first call when an MCP client is expected (server.mcp_preload, --mcp), lazy
otherwise; a wrong tool argument refused in plain words."""
from __future__ import annotations

import sys

import requests

from tests.harness.reviewer import wait_for

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "MCP-Protocol-Version": "2025-06-18"}


def test_preload_mounts_after_the_first_answer_without_any_mcp_call(make_config, start_service):
    svc = start_service(make_config(server={"mcp_preload": True}))
    assert requests.get(svc.url + "/health", timeout=5).status_code == 200
    wait_for(lambda: svc.lazy_mcp.mounted is not None, timeout=30, what="the background MCP mount")
    assert "mcp.server.lowlevel.server" in sys.modules
    r = requests.post(svc.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "sleep_history", "arguments": {"limit": "many"}}}, headers=HEADERS, timeout=10)
    result = r.json()["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == 'sleep_history was not run: limit must be a whole number, not "many".'


def test_the_endpoint_runs_without_the_sdk_client_or_fastmcp():
    """In a fresh interpreter: the mount loads the low-level server, not the client, FastMCP or uvicorn."""
    import subprocess
    code = ("import sys; from hippocampus.mcp import sdk; sdk.load(); "
            "print(sorted(m for m in ('mcp.client', 'mcp.server.mcpserver', 'uvicorn', 'sse_starlette', "
            "'jsonschema', 'httpx2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_preload_a_health_leaves_the_sdk_unloaded(make_config, start_service):
    svc = start_service(make_config())
    assert requests.get(svc.url + "/health", timeout=5).status_code == 200
    assert not svc.lazy_mcp.started and svc.lazy_mcp.mounted is None


def test_an_endpoint_that_failed_to_start_says_so_not_that_mcp_is_missing(make_config, start_service, monkeypatch):
    """Found: a mount that failed for any reason but a missing SDK (the session manager not starting within its
    10 s on a slow box) answered every POST /mcp 404 'MCP is not installed: pip install ...', with the SDK there."""
    from hippocampus.mcp import mount

    def slow_start(app, front):
        raise RuntimeError("the MCP session manager did not start within 10 s")
    monkeypatch.setattr(mount, "mount_mcp", slow_start)
    svc = start_service(make_config())
    for _ in range(2):                              # the same answer every time, not a mount tried per call
        r = requests.post(svc.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Accept": "application/json, text/event-stream"}, timeout=30)
        assert r.status_code == 503, r.text
        assert r.json() == {"detail": "the MCP endpoint could not be started (the MCP session manager did not "
                                      "start within 10 s); the service log has the details, and a restart of the "
                                      "service tries again"}
