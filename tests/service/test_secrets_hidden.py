"""No secret from a configured URL is shown or logged (issue 28, item 5): the Memory, model, ripple endpoint,
webhook and Observatory URLs each carry a user:password@ and a ?key= / ?apikey=; none of them reaches a
route (/, /status, the viewer's data, /events, /history, MCP sleep_status), check-config's output or the
real process's log, and every URL still names its host and port. The service runs as a real process."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for
from tests.service.test_durability import seed
from tests.service.test_mcp import call_tools
from tests.service.test_process import Proc, _env, _yaml, procs  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

BEARER = "secrets-test-bearer"
AUTH = {"Authorization": f"Bearer {BEARER}"}
SECRETS = ("MEMPASS", "MODELPASS", "MODELKEY", "RIPPASS", "RIPKEY", "HOOKPASS", "HOOKKEY", "OBSPASS", "OBSKEY")


def with_secrets(url: str, user: str, password: str, query: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{user}:{password}@{rest}?{query}"


@pytest.fixture
def setup(tmp_path, memory, hand):
    seed(hand)                      # a brief and fragments: a sleep reaches the model, which is not there
    dead = {name: free_port() for name in ("model", "ripple", "hook", "obs")}
    memory_host = memory.url.split("://", 1)[1].rstrip("/")
    port = free_port()
    data = {
        "server": {"host": "127.0.0.1", "port": port, "bearer_token": BEARER},
        "memory": {"url": f"http://hip:MEMPASS@{memory_host}"},
        "model": {"url": with_secrets(f"http://127.0.0.1:{dead['model']}/v1", "llm", "MODELPASS", "key=MODELKEY"),
                  "timeout_seconds": 5,
                  "lifecycle": {"observatory_url": with_secrets(f"http://127.0.0.1:{dead['obs']}", "obs", "OBSPASS",
                                                                "key=OBSKEY")}},
        "ripple": {"type": "endpoint", "events": ["sleep_failed"],
                   "url": with_secrets(f"http://127.0.0.1:{dead['ripple']}/api/v1/system/ripple", "rip", "RIPPASS",
                                       "apikey=RIPKEY")},
        "notify": {"webhook_url": with_secrets(f"http://127.0.0.1:{dead['hook']}/hook", "hook", "HOOKPASS",
                                               "key=HOOKKEY"), "events": ["sleep_failed"]},
        "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json")},
    }
    hosts = [memory_host] + [f"127.0.0.1:{p}" for p in dead.values()]
    return _yaml(tmp_path / "h.yaml", data), port, hosts


def leaked(text: str) -> list:
    return [s for s in SECRETS if s in text]


def test_no_secret_of_a_configured_url_reaches_a_route_the_printout_or_the_log(tmp_path, setup, procs):
    config, port, hosts = setup
    base = f"http://127.0.0.1:{port}"
    p = Proc(tmp_path, config)
    procs.append(p)
    assert p.wait_healthy(port)["memory_reachable"] is True, "Memory's user:password@ stopped it being reached"
    failed = requests.post(base + "/sleep", headers=AUTH, timeout=60).json()
    assert failed.get("status") == "error" or failed.get("error"), failed

    def delivered():
        events = requests.get(base + "/events", headers=AUTH, timeout=5).json()["entries"]
        e = next((e for e in events if e["type"] == "sleep_failed"), None)
        return e if e and (e.get("delivery") or {}).get("error") and (e.get("ripple") or {}).get("error") else None
    wait_for(delivered, timeout=30, what="the webhook and the ripple to fail on sleep_failed")
    status = wait_for(lambda: (lambda s: s if s["wakeup"]["checked_at"] else None)(
        requests.get(base + "/status", headers=AUTH, timeout=5).json()), timeout=20, what="the wake-up check")

    shown = {
        "/": requests.get(base + "/", timeout=5).text,
        "/status": requests.get(base + "/status", headers=AUTH, timeout=5).text,
        "/viewer": requests.get(base + "/viewer", headers=AUTH, timeout=5).text,
        "/events": requests.get(base + "/events", headers=AUTH, timeout=5).text,
        "/history": requests.get(base + "/history", headers=AUTH, timeout=5).text,
        "/queue": requests.get(base + "/queue", headers=AUTH, timeout=5).text,
        "/quality": requests.get(base + "/quality", headers=AUTH, timeout=5).text,
        "sleep_status": str(call_tools(base + "/mcp", [("sleep_status", {})], bearer=BEARER)[0]),
    }
    out = subprocess.run([sys.executable, "-m", "hippocampus", "check-config", "--config", config],
                         capture_output=True, text=True, env=_env(), timeout=60)
    shown["check-config"] = out.stdout + out.stderr
    assert p.stop(15) == 0
    shown["log"] = p.stderr()

    assert {where: leaked(text) for where, text in shown.items() if leaked(text)} == {}
    assert "memory" not in json.loads(shown["/"]), "the public / (no bearer) names no Memory URL"
    # still recognisable: each URL names its host and port, with the secrets marked hidden
    assert f"http://***@{hosts[0]}" in shown["log"] and f"http://***@{hosts[0]}" in shown["/status"]
    assert status["model_url"] == f"http://***@{hosts[1]}/v1?key=***"
    for host in hosts:
        assert f"***@{host}" in shown["check-config"], (host, shown["check-config"])
    assert f"http://***@{hosts[2]}/api/v1/system/ripple?apikey=***" in shown["/status"]
    assert "the model at http://***@" in shown["/history"] or "the model at http://***@" in shown["/events"]
