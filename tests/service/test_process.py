"""The service as a real process: the open-LAN refusal, the banner, and a clean stop on SIGTERM / SIGINT."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from tests.harness.memory_server import free_port

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "deploy" / "seren-hippocampus.yaml.sample"

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _yaml(path: Path, data: dict) -> str:
    from ruamel.yaml import YAML

    with path.open("w", encoding="utf-8") as fh:
        YAML().dump(data, fh)
    return str(path)


class Proc:
    """One `python -m hippocampus --config FILE` with its output in files (never a full pipe)."""

    def __init__(self, tmp_path: Path, config_path: str):
        self.out = tmp_path / "stdout.txt"
        self.err = tmp_path / "stderr.txt"
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.p = subprocess.Popen([sys.executable, "-m", "hippocampus", "--config", config_path],
                                      stdout=out, stderr=err, env=_env(), cwd=str(tmp_path))

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pred, timeout: float = 30.0, what: str = "condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = pred()
            if value:
                return value
            if self.p.poll() is not None:
                raise AssertionError(f"the process exited ({self.p.returncode}) before {what}:\n{self.stderr()}")
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n{self.stderr()}")

    def bound_port(self, timeout: float = 30.0) -> int:
        """The port the process bound, from its start-up line (server.port: 0 lets the OS choose, so no test
        races another process for a port it picked and let go)."""
        def found():
            m = re.search(r"ready on http://[^\s]*:(\d+)", self.stderr())
            return int(m.group(1)) if m else None
        return self.wait_for(found, timeout, "the start-up line")

    def wait_healthy(self, port: int, timeout: float = 30.0) -> dict:
        def healthy():
            try:
                r = requests.get(f"http://127.0.0.1:{port}/health", timeout=2)
            except requests.RequestException:
                return None
            return r.json() if r.status_code == 200 else None
        return self.wait_for(healthy, timeout, "/health to answer")

    def stop(self, sig: int, within: float = 5.0) -> int:
        t0 = time.monotonic()
        self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"still running {within} s after signal {sig}:\n{self.stderr()}") from None
        assert time.monotonic() - t0 < within
        return rc

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(timeout=10)


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for p in started:
        p.kill()


def _start(procs, tmp_path, config_path) -> Proc:
    p = Proc(tmp_path, config_path)
    procs.append(p)
    return p


def test_an_open_bind_with_no_bearer_refuses_with_78(tmp_path, procs):
    port = free_port()
    cfg = _yaml(tmp_path / "h.yaml", {"server": {"host": "0.0.0.0", "port": port},
                                       "memory": {"url": f"http://127.0.0.1:{free_port()}"},
                                       "sleep": {"mode": "external", "state_path": str(tmp_path / "s" / "state.json")}})
    p = _start(procs, tmp_path, cfg)
    rc = p.p.wait(timeout=30)
    assert rc == 78, p.stderr()
    err = p.stderr()
    assert "REFUSING TO START" in err
    assert f"0.0.0.0:{port}" in err
    assert "allow_open_lan: true" in err and "SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN" in err
    assert not (tmp_path / "s" / "state.json").exists(), "it built the service before refusing"


def _sample_config(tmp_path: Path, port: int, memory_url: str) -> str:
    """The sample, with only server.port, memory.url and sleep.state_path changed."""
    from ruamel.yaml import YAML

    yaml = YAML()
    data = yaml.load(SAMPLE.read_text(encoding="utf-8"))
    data["server"]["port"] = port
    data["memory"]["url"] = memory_url
    data["sleep"]["state_path"] = str(tmp_path / "state" / "state.json")
    out = tmp_path / "seren-hippocampus.yaml"
    with out.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)
    return str(out)


def test_the_sample_config_serves_and_stops_cleanly_on_sigterm_and_sigint(tmp_path, procs, memory):
    # two processes started together (one per signal): each is slow to import, not to stop
    runs = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        d = tmp_path / sig.name
        d.mkdir()
        runs.append((sig, _start(procs, d, _sample_config(d, 0, memory.url))))
    runs = [(sig, p.bound_port(), p) for sig, p in runs]
    for sig, port, p in runs:
        assert p.wait_healthy(port) == {"ok": True, "memory_reachable": True}
        root = requests.get(f"http://127.0.0.1:{port}/", timeout=5).json()
        assert root["mode"] == "thread" and "memory" not in root and root["model"] == "configured"
        # the sample's config gives no warning (the model watch may warn that nothing answers on localhost:8090,
        # at a moment of its own: that is the sample's model, not the config's)
        said = [line for line in p.stderr().splitlines() if "warning" in line.lower() and "config:" in line]
        assert not said, p.stderr()
    for sig, port, p in runs:
        assert p.stop(sig) == 0, (sig.name, p.stderr())
        err = p.stderr()
        assert "Traceback" not in err, err
        assert "stopped" in err
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/health", timeout=2)


# ---------------------------------------------------------------- the draining stop

class SlowMemory:
    """A stand-in Memory that answers at once, or slowly on /health and POST /tidy once told to."""

    def __init__(self, delay: float = 1.5):
        self.delay = delay
        self.slow = threading.Event()
        self.slow_request_arrived = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _answer(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.startswith("/health"):
                    if outer.slow.is_set():
                        outer.slow_request_arrived.set()
                        time.sleep(outer.delay)
                    self._answer({"ok": True, "features": ["target_op"]})
                else:
                    self._answer({"count": 0, "entries": []})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                if self.path.startswith("/tidy") and outer.slow.is_set():
                    outer.slow_request_arrived.set()
                    time.sleep(outer.delay)
                self._answer({"ok": True, "purged": []})

            do_DELETE = do_POST

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="slow-memory", daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_an_open_bind_with_consent_starts_with_the_banner_and_drains_on_sigterm(tmp_path, procs):
    """One process for two things (each start costs seconds): the open-LAN banner, and an in-flight
    request answered during the draining stop: POST /check, held up by a slow Memory on its purge (POST /tidy).
    (/health is answered from the board and never waits on Memory, so it cannot be the request in flight.)"""
    with SlowMemory(delay=1.0) as mem:
        cfg = _yaml(tmp_path / "h.yaml", {"server": {"host": "0.0.0.0", "port": 0, "allow_open_lan": True},
                                           "memory": {"url": mem.url},
                                           "model": {"url": ""},
                                           "sleep": {"mode": "external",
                                                     "state_path": str(tmp_path / "s" / "state.json")}})
        p = _start(procs, tmp_path, cfg)
        port = p.bound_port()
        assert p.wait_healthy(port) == {"ok": True, "memory_reachable": True}
        err = p.stderr()
        assert "OPEN ON THE NETWORK" in err and "allow_open_lan: true" in err
        assert "REFUSING" not in err

        mem.slow.set()
        answer: dict = {}

        def call():
            try:
                r = requests.post(f"http://127.0.0.1:{port}/check", timeout=20)
                answer["status"], answer["body"] = r.status_code, r.json()
            except Exception as exc:  # noqa: BLE001 - reported below
                answer["error"] = repr(exc)

        t = threading.Thread(target=call)
        t.start()
        assert mem.slow_request_arrived.wait(10), "the check's purge never reached Memory"
        assert "status" not in answer and "error" not in answer, answer      # still in flight at the signal
        assert p.stop(signal.SIGTERM) == 0, p.stderr()
        t.join(10)
        assert "error" not in answer, (answer, p.stderr())      # answered, not cut off
        assert answer.get("status") in (200, 503), (answer, p.stderr())
        if answer["status"] == 503:
            assert "stop" in answer["body"]["detail"], answer
        assert "Traceback" not in p.stderr()


# ---------------------------------------------------------------- MCP on its first call

def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_the_mcp_sdk_is_loaded_on_the_first_mcp_call_not_before(tmp_path, procs, memory):
    """A box whose MCP client never calls keeps the SDK's memory; the first call still answers."""
    pytest.importorskip("mcp.server")
    p = _start(procs, tmp_path, _sample_config(tmp_path, 0, memory.url))
    port = p.bound_port()
    p.wait_healthy(port)
    assert "MCP tools at" not in p.stderr()
    idle = _rss_mb(p.p.pid)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    r = requests.post(f"http://127.0.0.1:{port}/mcp", json=init, timeout=60,
                      headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["result"]["serverInfo"]["name"] == "seren-hippocampus"
    assert "MCP tools at" in p.stderr()
    grown = _rss_mb(p.p.pid) - idle
    assert grown > 15, f"the first MCP call grew the process by only {grown:.1f} MB: was the SDK loaded at start?"
    assert p.stop(signal.SIGTERM) == 0, p.stderr()
