"""The service as a real process under systemd's conventions: READY and WATCHDOG on $NOTIFY_SOCKET, the
journal's priority prefixes when $JOURNAL_STREAM is its stderr, and --log-format json."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.harness.memory_server import free_port

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX: unix sockets and signals")


def _start(tmp_path: Path, memory_url: str, *, extra_env: dict, args: tuple = (), journal: bool = False):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"server: {{port: {free_port()}}}\nmemory: {{url: '{memory_url}'}}\nmodel: {{url: ''}}\n"
                   f"sleep: {{mode: external, state_path: '{tmp_path / 'state' / 'state.json'}'}}\n")
    err = tmp_path / "stderr.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEREN_HIPPOCAMPUS", "NOTIFY_", "WATCHDOG_",
                                                                    "JOURNAL_"))}
    env.update(PYTHONUNBUFFERED="1", **extra_env)
    with err.open("wb") as fh:
        if journal:
            st = os.fstat(fh.fileno())
            env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        p = subprocess.Popen([sys.executable, "-m", "hippocampus", *args, "--config", str(cfg)],
                             stdout=subprocess.DEVNULL, stderr=fh, env=env, cwd=str(tmp_path))
    return p, err


def _stop(p) -> None:
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


def _wait(pred, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {timeout} s")


def test_ready_after_the_bind_then_watchdog_pings(tmp_path, memory):
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(30)
    p, err = _start(tmp_path, memory.url, extra_env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"})
    try:
        got = []
        while not any(m.startswith(b"WATCHDOG=1") for m in got[1:]):
            got.append(sock.recv(4096))
        assert got[0].startswith(b"READY=1"), got
        assert b"STATUS=listening on http://127.0.0.1:" in got[0]
        # the WATCHDOG_PID of another process turns the pings off (systemd's rule); here none was set: they came
        _stop(p)
        sock.settimeout(5)
        assert _wait(lambda: sock.recv(4096).startswith(b"STOPPING=1"), 5, "STOPPING=1")
    finally:
        _stop(p)
        sock.close()
    assert p.returncode == 0, err.read_text()


def test_journal_priority_prefixes(tmp_path, memory):
    p, err = _start(tmp_path, memory.url, extra_env={}, journal=True)
    try:
        _wait(lambda: "ready on" in err.read_text(), 30, "the ready line")
    finally:
        _stop(p)
    lines = [line for line in err.read_text().splitlines() if line.strip()]
    logged = [line for line in lines if line.startswith("<")]
    assert any(line.startswith("<6>INFO ") for line in logged), lines
    assert not any(line.startswith("<6>") and "WARNING" in line.split(" ", 1)[0] for line in logged)


def test_json_log_format_every_line_parses(tmp_path, memory):
    p, err = _start(tmp_path, memory.url, extra_env={}, args=("--log-format", "json"))
    try:
        _wait(lambda: "ready on" in err.read_text(), 30, "the ready line")
    finally:
        _stop(p)
    lines = [line for line in err.read_text().splitlines() if line.strip()]
    parsed = [json.loads(line) for line in lines]
    assert any("ready on" in e["message"] for e in parsed)
    assert all({"time", "level", "logger", "message"} <= set(e) for e in parsed)
    assert any(e["message"].startswith("stopped") for e in parsed)


def test_the_refusal_and_a_held_port_reach_the_journal_as_errors(tmp_path):
    """Under systemd the start-up's own lines went to the journal unprefixed, so at info: `journalctl -p err`
    did not show why the service refused to start (exit 78) or could not bind (exit 1)."""
    cfg = tmp_path / "lan.yaml"
    cfg.write_text(f"server: {{host: 0.0.0.0, port: {free_port()}}}\n")
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    busy = tmp_path / "busy.yaml"
    busy.write_text(f"server: {{port: {held.getsockname()[1]}}}\nmodel: {{url: ''}}\n"
                    f"sleep: {{mode: external, state_path: '{tmp_path / 'state' / 'state.json'}'}}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEREN_HIPPOCAMPUS", "JOURNAL_"))}
    try:
        for config, code, words in ((cfg, 78, "REFUSING TO START"), (busy, 1, "another process holds port")):
            err = tmp_path / f"{config.stem}.txt"
            with err.open("wb") as fh:
                st = os.fstat(fh.fileno())
                rc = subprocess.run([sys.executable, "-m", "hippocampus", "--config", str(config)], stderr=fh,
                                    stdout=subprocess.DEVNULL, cwd=str(tmp_path), timeout=60,
                                    env={**env, "JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}).returncode
            text = err.read_text()
            assert rc == code, text
            said = [line for line in text.splitlines() if words in line]
            assert said and all(line.startswith("<3>") for line in said), text
    finally:
        held.close()
