"""ModelLifecycle against real processes: the stand-in llama-server, scripts that never answer."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import requests

from tests.harness.ports import free_port
from tests.harness.clock import FakeClock
from hippocampus.config import LifecycleConfig, ModelConfig
from hippocampus.model.lifecycle import ModelLifecycle
from hippocampus.model.process import since_boot
from tests.harness.clock import pid_alive as _pid_alive
from hippocampus.model.client import ModelUnavailable

pytestmark = pytest.mark.skipif(os.name == "nt", reason="process groups and the sh wrapper are POSIX")

FAKE = Path(__file__).resolve().parents[1] / "harness" / "fake_llama_server.py"


def wait_until(pred, timeout: float = 10.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def gone(pid: int, timeout: float = 10.0) -> bool:
    return wait_until(lambda: not _pid_alive(pid), timeout)


class Rig:
    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.clock = FakeClock()
        self.events: list = []
        self.saves: list = []
        self.procs: list = []          # processes the tests start themselves
        self.port = free_port()
        self.state_dir = tmp_path / "state"
        self.model = tmp_path / "models" / "small.gguf"
        self.model.parent.mkdir()
        self.model.write_bytes(b"GGUF fake")
        self.server = tmp_path / "bin" / "llama-server"
        self.server.parent.mkdir()
        # the stand-in "loads" 0.3 s, as the service tests' does (its own default is 1 s); a test that sets
        # FAKE_LLAMA_WARMUP keeps its own
        self.server.write_text(f'#!/bin/sh\nexport FAKE_LLAMA_WARMUP="${{FAKE_LLAMA_WARMUP:-0.3}}"\n'
                               f'exec "{sys.executable}" "{FAKE}" "$@"\n')
        self.server.chmod(0o755)

    def emit(self, kind: str, **fields) -> dict:
        ev = {"kind": kind, **fields}
        self.events.append(ev)
        return ev

    def kinds(self, kind: str) -> list:
        return [e for e in self.events if e["kind"] == kind]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def make(self, persisted=None, url=None, **lifecycle) -> ModelLifecycle:
        opts = dict(server=str(self.server), model_path=str(self.model), poll_seconds=0.05,
                    ready_timeout_seconds=10.0, stop_grace_seconds=3.0)
        opts.update(lifecycle)
        cfg = ModelConfig(url=url or self.url, lifecycle=LifecycleConfig(**opts))
        return ModelLifecycle(cfg, state_dir=self.state_dir, clock=self.clock, emit=self.emit,
                              persisted=persisted, save=self.saves.append)

    def spawn(self, argv, **kw) -> subprocess.Popen:
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True, **kw)
        self.procs.append(p)
        return p

    def spawn_configured(self, **lifecycle) -> subprocess.Popen:
        """The configured server started by hand (as a previous run would have), answering /health."""
        cmd = self.make(**lifecycle).built_command()
        p = self.spawn(cmd, env=dict(os.environ, FAKE_LLAMA_WARMUP="0"))
        assert wait_until(lambda: healthy(f"http://127.0.0.1:{self.port}/health")), "the stand-in did not answer"
        return p

    def launches(self) -> int:
        log = self.state_dir / "model.log"
        return log.read_text().count("launched") if log.exists() else 0

    def cleanup(self) -> None:
        pids = {s[k] for s in self.saves for k in ("pid", "watchdog") if s.get(k)} | {p.pid for p in self.procs}
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture
def rig(tmp_path):
    r = Rig(tmp_path)
    yield r
    r.cleanup()


def healthy(url: str) -> bool:
    try:
        return requests.get(url, timeout=1).status_code == 200
    except requests.RequestException:
        return False


# ---------------------------------------------------------------- basics

def test_health_url_from_model_url_or_explicit(rig):
    assert rig.make(url="http://10.0.0.5:7200/v1").health_url == "http://10.0.0.5:7200/health"
    assert rig.make(url="http://10.0.0.5:7200").health_url == "http://10.0.0.5:7200/health"
    assert rig.make(health_url="http://x:1/ping").health_url == "http://x:1/ping"


def test_not_managed_and_not_answering_is_unavailable(rig):
    lc = ModelLifecycle(ModelConfig(url=rig.url), state_dir=rig.state_dir, clock=rig.clock, emit=rig.emit)
    with pytest.raises(ModelUnavailable) as ei:
        lc.ensure()
    msg = str(ei.value)
    assert rig.url in msg and f"127.0.0.1:{rig.port}/health" in msg and "model.lifecycle.manage is off" in msg
    assert lc.snapshot()["managed"] is False and lc.snapshot()["via"] is None
    assert lc.snapshot()["last_used"] is None      # never answered: the model card says no "last used 4 s ago"
    assert rig.events == []


def test_built_command_line_is_exact(rig):
    lc = rig.make()
    assert lc.built_command() == [str(rig.server), "-m", str(rig.model), "--host", "127.0.0.1",
                                  "--port", str(rig.port), "-ngl", "99", "-c", "8192"]
    assert rig.make(url="https://example.org/v1").built_command()[3:7] == ["--host", "example.org", "--port", "443"]
    assert rig.make(url="http://example.org/v1").built_command()[6] == "80"


# ---------------------------------------------------------------- start, keep warm, stop

def test_ensure_starts_waits_through_loading_and_idle_tick_stops(rig, monkeypatch):
    monkeypatch.setenv("FAKE_LLAMA_WARMUP", "1.0")  # the stand-in's whole 503 second
    lc = rig.make(keep_warm_seconds=300)
    t0 = time.monotonic()
    lc.ensure()
    assert time.monotonic() - t0 >= 0.9          # it waited through the 503 second
    snap = lc.snapshot()
    assert snap["state"] == "ready" and snap["started_by_us"] is True and snap["via"] == "local"
    pid = snap["pid"]
    assert rig.saves[-1] == {"pid": pid, "created": rig.saves[-1]["created"], "started_by_us": True,
                             "cmd": lc.built_command(), "how": "command", "watchdog": lc.server.popen.pid,
                             "booted": since_boot(pid)}
    assert psutil.Process(pid).ppid() == lc.server.popen.pid       # the server runs under its watchdog
    assert abs(rig.saves[-1]["created"] - psutil.Process(pid).create_time()) < 0.01   # the recycled-pid guard
    started = rig.kinds("model_started")
    assert len(started) == 1 and started[0]["how"] == "command" and started[0]["url"] == rig.url
    assert started[0]["seconds"] >= 0.9
    assert "fake llama-server listening" in (rig.state_dir / "model.log").read_text()

    lc.release(2.5)
    rig.clock.advance(100)
    lc.tick(chain_open=True)                      # still warm
    assert _pid_alive(pid) and rig.kinds("model_stopped") == []

    lc.lc.keep_warm_seconds = 0
    rig.clock.advance(30)
    lc.tick(chain_open=True)
    assert gone(pid)
    stopped = rig.kinds("model_stopped")
    assert len(stopped) == 1 and stopped[0]["idle_seconds"] == 130.0 and "why" not in stopped[0]
    snap = lc.snapshot()
    assert snap["state"] == "stopped" and snap["started_by_us"] is False and snap["pid"] is None
    assert snap["busy_seconds_total"] == 2.5 and snap["up_seconds_total"] == 130.0
    assert rig.saves[-1]["pid"] is None and rig.saves[-1]["started_by_us"] is False
    lc.tick(chain_open=False)                     # nothing of ours left: nothing to do
    assert len(rig.kinds("model_stopped")) == 1


def test_tick_with_no_open_chain_stops_at_once(rig):
    lc = rig.make(keep_warm_seconds=3600)
    lc.ensure()
    pid = lc.pid
    lc.tick(chain_open=False)
    assert gone(pid)
    assert [e["why"] for e in rig.kinds("model_stopped")] == ["the cycle is over"]


def test_handover_stops_and_the_next_ensure_starts_again(rig):
    lc = rig.make(handover=True)
    lc.ensure()
    pid = lc.pid
    assert lc.handover() is True
    assert gone(pid)
    assert rig.kinds("model_stopped")[-1]["why"] == "handing over to the main model"
    assert lc.handover() is False                 # nothing to hand over now
    lc.ensure()
    assert len(rig.kinds("model_started")) == 2 and lc.pid != pid
    lc.shutdown()


def test_handover_off_keeps_it_warm(rig):
    lc = rig.make(handover=False)
    lc.ensure()
    assert lc.handover() is False and _pid_alive(lc.pid)
    pid = lc.pid
    lc.shutdown()
    assert gone(pid) and lc.snapshot()["state"] == "stopped"


def test_a_server_already_up_is_borrowed_and_never_stopped(rig):
    p = rig.spawn([sys.executable, str(FAKE), "-m", str(rig.model), "--host", "127.0.0.1",
                   "--port", str(rig.port)], env=dict(os.environ, FAKE_LLAMA_WARMUP="0"))
    assert wait_until(lambda: healthy(f"http://127.0.0.1:{rig.port}/health"))
    lc = rig.make(keep_warm_seconds=0)
    lc.ensure()
    snap = lc.snapshot()
    assert snap["state"] == "ready" and snap["started_by_us"] is False and snap["pid"] is None
    rig.clock.advance(1000)
    lc.tick(chain_open=True)
    lc.tick(chain_open=False)
    assert lc.handover() is False and lc.stop_now("x") is False
    lc.shutdown()
    assert p.poll() is None and healthy(f"http://127.0.0.1:{rig.port}/health")
    assert rig.events == [] and rig.saves == []
    assert not (rig.state_dir / "model.log").exists()


# ---------------------------------------------------------------- failures

def test_missing_model_file_fails_naming_the_path(rig):
    missing = rig.tmp / "models" / "nope.gguf"
    lc = rig.make(model_path=str(missing))
    with pytest.raises(ModelUnavailable) as ei:
        lc.ensure()
    assert str(ei.value) == f"model.lifecycle.model_path not found: {missing}"
    failed = rig.kinds("model_start_failed")
    assert len(failed) == 1 and str(missing) in failed[0]["error"]
    assert lc.snapshot()["state"] == "failed" and lc.snapshot()["last_error"] == str(ei.value)
    assert rig.saves == []                         # nothing was launched


def test_missing_server_file_fails_naming_the_path(rig):
    lc = rig.make(server=str(rig.tmp / "bin" / "no-server"))
    with pytest.raises(ModelUnavailable, match="model.lifecycle.server not found: .*no-server"):
        lc.ensure()


def test_a_start_that_never_answers_is_killed_and_waits_before_retrying(rig):
    script = "import time; print('launched', flush=True); time.sleep(60)"
    lc = rig.make(start=f"{sys.executable} -c \"{script}\"", manage=True, ready_timeout_seconds=0.5,
                  retry_after_seconds=900, stop_grace_seconds=2)
    with pytest.raises(ModelUnavailable) as ei:
        lc.ensure()
    assert f"did not answer http://127.0.0.1:{rig.port}/health within 0.5 s" in str(ei.value)
    assert len(rig.kinds("model_start_failed")) == 1
    pid = rig.saves[0]["pid"]
    assert gone(pid)
    assert wait_until(lambda: rig.launches() == 1, 3)
    assert lc.snapshot()["last_used"] is None      # it never answered

    rig.clock.advance(60)
    with pytest.raises(ModelUnavailable) as ei:
        lc.ensure()
    assert "failed to start 60 s ago" in str(ei.value) and "next attempt is in 840 s" in str(ei.value)
    assert len(rig.kinds("model_start_failed")) == 1 and len(rig.saves) == 2   # no relaunch
    assert rig.launches() == 1

    rig.clock.advance(841)
    with pytest.raises(ModelUnavailable, match="did not answer"):
        lc.ensure()
    assert len(rig.kinds("model_start_failed")) == 2
    assert wait_until(lambda: rig.launches() == 2, 3)
    assert gone(rig.saves[2]["pid"])


def test_a_start_command_that_exits_fails_with_its_code_and_log(rig):
    script = "import sys; print('cannot find the card', flush=True); sys.exit(3)"
    lc = rig.make(start=f"{sys.executable} -c \"{script}\"", manage=True)
    with pytest.raises(ModelUnavailable) as ei:
        lc.ensure()
    msg = str(ei.value)
    assert msg.startswith("the start command exited with code 3 before the model answered")
    assert "cannot find the card" in msg
    assert rig.kinds("model_start_failed")[0]["error"] == msg
    assert lc.snapshot()["started_by_us"] is False and rig.saves[-1]["pid"] is None


def test_the_stand_in_refuses_a_missing_model(rig):
    out = subprocess.run([str(rig.server), "-m", str(rig.tmp / "gone.gguf"), "--port", str(rig.port)],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 1 and "gone.gguf" in out.stderr


def test_the_stand_in_serves_a_scripted_chat(rig):
    script = rig.tmp / "script.json"
    script.write_text(json.dumps(["first", "second"]))
    env = dict(os.environ, FAKE_LLAMA_SCRIPT=str(script), FAKE_LLAMA_WARMUP="0")
    lc = rig.make()
    p = rig.spawn(lc.built_command(), env=env)
    assert wait_until(lambda: healthy(lc.health_url))
    texts = []
    for _ in range(3):
        r = requests.post(rig.url + "/chat/completions", json={"messages": []}, timeout=5)
        texts.append(r.json()["choices"][0]["message"]["content"])
    assert texts == ["first", "second", "second"]
    assert p.poll() is None


# ---------------------------------------------------------------- adoption

def test_a_restarted_service_adopts_the_server_it_started_and_stops_it(rig):
    a = rig.make()
    a.ensure()                                     # A then "crashes": no shutdown
    pid = a.pid
    persisted = dict(rig.saves[-1])
    b = rig.make(persisted=persisted)
    b.adopt()
    snap = b.snapshot()
    assert snap["started_by_us"] is True and snap["pid"] == pid and snap["state"] == "ready"
    b.tick(chain_open=False)
    assert gone(pid)
    assert rig.kinds("model_stopped")[-1]["why"] == "the cycle is over"
    assert b.snapshot()["pid"] is None and rig.saves[-1]["pid"] is None
    assert a.server is not None and a.server.popen.wait(timeout=5) is not None   # gone itself: no orphan


def test_adopting_a_dead_pid_clears_it(rig):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    b = rig.make(persisted={"pid": p.pid, "started_by_us": True, "cmd": ["x"], "how": "command"})
    b.adopt()
    assert b.snapshot()["started_by_us"] is False and b.snapshot()["pid"] is None
    assert rig.saves == [{"pid": None, "created": None, "booted": None, "started_by_us": False, "cmd": None,
                          "how": None}]


def test_a_pid_that_is_not_ours_is_not_adopted(rig):
    p = rig.spawn([sys.executable, "-c", "import time; time.sleep(30)"])
    b = rig.make(persisted={"pid": p.pid, "started_by_us": True, "cmd": ["/opt/llama-server", "-m", "/m/x.gguf"],
                            "how": "command"})
    b.adopt()
    b.tick(chain_open=False)
    assert b.snapshot()["started_by_us"] is False and p.poll() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="psutil's create time is derived from btime on Linux")
def test_a_clock_adjustment_does_not_make_the_service_forget_its_own_server(rig, monkeypatch):
    """Found by the long soak: the wall clock was slewed across a second while a server ran, psutil's create time
    (the whole-second boot time plus the start) moved by one, and the next model call took the service's own
    server for somebody else's: never handed over, never stopped. The start is compared as time since boot."""
    from psutil import _pslinux

    lc = rig.make(keep_warm_seconds=300)
    lc.ensure()
    pid = lc.snapshot()["pid"]
    booted = _pslinux.boot_time()
    monkeypatch.setattr(_pslinux, "boot_time", lambda: booted + 1)        # as after NTP moved the clock
    assert abs(psutil.Process(pid).create_time() - rig.saves[-1]["created"]) > 0.9
    lc.ensure()
    assert lc.snapshot()["started_by_us"] is True and lc.snapshot()["pid"] == pid
    lc.tick(chain_open=False)
    assert gone(pid) and rig.kinds("model_stopped")


def test_a_recycled_pid_is_told_apart_by_its_create_time(rig):
    p = rig.spawn_configured()           # issue 38: only the configured server is ever adopted
    started = psutil.Process(p.pid).create_time()
    record = {"pid": p.pid, "started_by_us": True, "cmd": [sys.executable, "-c", "x"], "how": "command"}
    other = rig.make(persisted={**record, "created": started - 100})   # the pid, but a process of another moment
    other.adopt()
    other.tick(chain_open=False)
    assert other.snapshot()["started_by_us"] is False and p.poll() is None
    same = rig.make(persisted={**record, "created": started})
    same.adopt()
    assert same.snapshot()["started_by_us"] is True and same.snapshot()["pid"] == p.pid
    same.tick(chain_open=False)
    assert gone(p.pid)


def test_a_server_a_previous_run_launched_under_its_watchdog_is_stopped_not_adopted(rig):
    """A record with a watchdog this process does not hold is a dead run's: its pipe is gone, so the server is
    on its way out. The restart stops it (if still there) and clears the record: one fresh server, never two."""
    p = rig.spawn_configured()           # issue 38: only the configured server is ever stopped
    record = {"pid": p.pid, "created": psutil.Process(p.pid).create_time(), "started_by_us": True,
              "cmd": [sys.executable], "how": "command", "watchdog": 1}
    b = rig.make(persisted=record, stop_grace_seconds=1.0)
    b.adopt()
    assert p.wait(timeout=5) is not None
    assert b.snapshot()["started_by_us"] is False and b.snapshot()["pid"] is None
    assert rig.saves[-1]["pid"] is None and rig.launches() == 0


@pytest.mark.parametrize("watchdog", [None, 1])
def test_an_edited_record_naming_another_process_neither_adopts_nor_stops_it(rig, watchdog, caplog):
    """Issue 38: the state file is only a claim. A record with the right create time (and, for the stop path, a
    watchdog) naming a process that is not the configured server leaves that process alone."""
    p = rig.spawn(["sleep", "300"])
    record = {"pid": p.pid, "created": psutil.Process(p.pid).create_time(), "started_by_us": True,
              "cmd": [str(rig.server)], "how": "command", "watchdog": watchdog}
    b = rig.make(persisted=record, stop_grace_seconds=1.0)
    b.adopt()
    b.shutdown()
    assert p.poll() is None and b.snapshot()["started_by_us"] is False and b.snapshot()["pid"] is None
    assert rig.saves[-1]["pid"] is None
    assert any(f"pid {p.pid}" in r.getMessage() and "left alone" in r.getMessage() for r in caplog.records)


def test_the_configured_command_but_no_health_answer_is_left_alone(rig):
    """The configured server's command line, but nothing answers the model's health URL: not adopted."""
    cmd = rig.make().built_command()
    p = rig.spawn(cmd, env=dict(os.environ, FAKE_LLAMA_WARMUP="0"))
    assert wait_until(lambda: healthy(f"http://127.0.0.1:{rig.port}/health"))
    other = rig.make(persisted={"pid": p.pid, "created": psutil.Process(p.pid).create_time(), "started_by_us": True,
                                "how": "command"}, health_url=f"http://127.0.0.1:{free_port()}/health")
    other.adopt()
    other.shutdown()
    assert p.poll() is None and other.snapshot()["started_by_us"] is False


def test_the_watchdog_stops_the_server_when_the_pipe_from_the_service_closes(rig):
    a = rig.make()
    a.ensure()
    pid, dog = a.pid, a.server.popen
    a.server.let_go()                              # what the kernel does to the pipe when the service dies
    assert gone(pid, 5) and dog.wait(timeout=5) == 128 + signal.SIGTERM     # the stand-in dies of it
    assert "the service let go of pid" in (rig.state_dir / "model.log").read_text()


def test_adopt_with_nothing_persisted_does_nothing(rig):
    b = rig.make(persisted=None)
    b.adopt()
    assert rig.saves == [] and b.snapshot()["state"] == "stopped"


# ---------------------------------------------------------------- the stop command, callbacks

def test_a_configured_stop_command_runs_and_nothing_is_left_behind(rig):
    marker = rig.tmp / "stopped.txt"
    stop = f"{sys.executable} -c \"open('{marker}', 'w').write('stop ran')\""
    lc = rig.make(stop=stop)
    lc.ensure()
    pid = lc.pid
    assert lc.stop_now("testing") is True
    assert marker.read_text() == "stop ran"
    assert gone(pid)                               # the stand-in ignores the stop line: terminated after it


def test_a_broken_emit_or_save_does_not_break_the_lifecycle(rig):
    def bad(*a, **k):
        raise RuntimeError("listener down")

    lc = ModelLifecycle(ModelConfig(url=rig.url, lifecycle=LifecycleConfig(
        server=str(rig.server), model_path=str(rig.model), poll_seconds=0.05, ready_timeout_seconds=10)),
        state_dir=rig.state_dir, clock=rig.clock, emit=bad, save=bad)
    lc.ensure()
    rig.saves.append({"pid": lc.pid})              # so the teardown can find it
    pid = lc.pid
    lc.shutdown()
    assert gone(pid) and lc.snapshot()["state"] == "stopped"


@pytest.mark.parametrize("setting, lifecycle", [
    ("model.lifecycle.start", {"start": "llama-server -m 'my model.gguf", "manage": True}),
    ("model.lifecycle.server_args", {"server_args": "-ngl 99 --alias 'small"}),
])
def test_a_command_line_with_an_unclosed_quote_fails_the_start_in_words_and_waits(rig, setting, lifecycle):
    lc = rig.make(retry_after_seconds=900, **lifecycle)
    with pytest.raises(ModelUnavailable) as ei:
        lc.ensure()
    assert setting in str(ei.value) and "quot" in str(ei.value)
    assert lc.snapshot()["state"] == "failed" and lc.snapshot()["last_error"] == str(ei.value)
    assert len(rig.kinds("model_start_failed")) == 1 and rig.saves == []
    rig.clock.advance(60)
    with pytest.raises(ModelUnavailable, match="next attempt is in 840 s"):
        lc.ensure()


def test_a_model_log_past_its_size_is_moved_aside_at_the_next_start(rig):
    """Found: model.log grew for good (every start of the server appends its output: months of it on a Jetson's
    card). At a start past the limit it becomes model.log.1 (the one before dropped); the new log holds this
    launch."""
    from hippocampus.store import private

    log = rig.state_dir / "model.log"
    rig.state_dir.mkdir(parents=True, exist_ok=True)
    (rig.state_dir / "model.log.1").write_bytes(b"the oldest generation\n")
    log.write_bytes(b"an old launch\n" * (private.LOG_BYTES // 14 + 1))
    lc = rig.make(keep_warm_seconds=300)
    lc.ensure()
    assert (rig.state_dir / "model.log.1").read_bytes().startswith(b"an old launch")
    assert log.stat().st_size < 100_000 and "fake llama-server listening" in log.read_text()
    lc.shutdown()
