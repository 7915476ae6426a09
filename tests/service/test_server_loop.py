"""The HTTP loop past 1,024 descriptors, and a loop that dies: refused at once, and a non-zero exit."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX descriptors")


@pytest.fixture
def many_descriptors(memory):
    """Hold more than 1,030 open descriptors, so that whatever the service opens next is numbered past 1,024.
    After `memory`: its fresh store closes the last test's, and the holes that leaves must be filled too."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1100 + len(os.listdir("/proc/self/fd")) + 200
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip(f"the descriptor limit ({hard}) is too low to hold 1,030 descriptors")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1040)]
    while held[-1] < 1100:      # fill any hole below, so that what opens next is numbered past 1,024
        held.append(os.open(os.devnull, os.O_RDONLY))
    yield held
    for fd in held:
        os.close(fd)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_service_past_1024_descriptors_answers_and_runs_a_whole_chain(many_descriptors, make_config,
                                                                          start_service, hand):
    for i in range(3):
        hand.short(f"the lighthouse keeper waved at dusk, evening {i}", topic="lighthouse")
    hand.brief("the lighthouse mattered")
    svc = start_service(make_config())
    client = requests.Session()                       # keep-alive: its channel stays in the loop's map
    assert client.get(svc.url + "/health", timeout=5).json()["ok"] is True
    assert client.get(svc.url + "/status", timeout=5).status_code == 200
    assert max(svc.server._map) >= 1024               # the loop watches descriptors past select()'s reach
    report = requests.post(svc.url + "/check", timeout=30).json()
    draft_id = report["sleep"]["draft_id"]
    hand.approve_all(draft_id)
    assert requests.post(svc.url + "/nudge", timeout=5).json()["ok"] is True
    wait_for(lambda: any(e["type"] == "chain_closed"
                         for e in requests.get(svc.url + "/events", timeout=5).json()["entries"]),
             timeout=20, what="the chain to close")
    assert hand.open_briefs() == []
    assert any("lighthouse" in e["content"] for e in hand.long())
    client.close()


# A real process whose loop is made to fail: a dispatcher in waitress's map whose readable() raises once
# a file appears (the fault is the test's; the product code is the real one, started by the real main()).
FAULTY = textwrap.dedent("""
    import os, sys
    from waitress import wasyncore
    from hippocampus.service import root as server

    TRIGGER = sys.argv[1]

    class Bomb:
        accepting = False
        def readable(self):
            if os.path.exists(TRIGGER):
                raise ValueError("a fault injected by the test")
            return False
        def writable(self):
            return False
        def close(self):
            pass

    real_start = server.Service.start
    def start(self):
        real_start(self)
        self.server._map[-7] = Bomb()
        return self
    server.Service.start = start
    from hippocampus.__main__ import main
    sys.exit(main(sys.argv[2:]))
""")


def test_a_dead_loop_closes_its_listener_and_exits_non_zero(tmp_path, memory):
    port = free_port()
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"server: {{port: {port}}}\nmemory: {{url: '{memory.url}'}}\nmodel: {{url: ''}}\n"
                   f"sleep: {{mode: external, state_path: '{tmp_path / 'state' / 'state.json'}'}}\n")
    trigger = tmp_path / "fail-now"
    script = tmp_path / "faulty.py"
    script.write_text(FAULTY)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    env["PYTHONPATH"] = str(ROOT)
    err = tmp_path / "stderr.txt"
    with err.open("wb") as fh:
        p = subprocess.Popen([sys.executable, str(script), str(trigger), "--config", str(cfg)],
                             stdout=subprocess.DEVNULL, stderr=fh, env=env, cwd=str(tmp_path))
    try:
        def healthy():
            try:
                return requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
            except requests.RequestException:
                return False
        wait_for(healthy, timeout=30, what="/health")
        trigger.write_text("now")

        def refused():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2):
                    return False
            except ConnectionRefusedError:
                return True
            except OSError:          # a connection queued and never accepted times out: not refused
                return False
        wait_for(refused, timeout=10, what="new connections to be refused")
        t0 = time.monotonic()
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/health", timeout=5)
        assert time.monotonic() - t0 < 1.0, "refused at once, not left waiting"
        rc = p.wait(timeout=15)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = err.read_text(errors="replace")
    assert rc == 1, text
    assert "the HTTP server loop died (ValueError: a fault injected by the test)" in text
    assert "exiting with status 1 so that the service manager restarts the service" in text
