"""The model lifecycle (start, loading, keep-warm, hand-over, stop, adopt) on the REAL llama-server.

The server is the binary built from llama.cpp's source and the model the tiny random-weight one
(tests/harness/tiny_gguf.py); the start line is the Jetson profile's own (deploy/jetson/...yaml, its
`-ngl 99 -c 4096 -np 1`), with the tiny model and a free port put in. Most tests drive
hippocampus.model.lifecycle.ModelLifecycle on a real clock; the kill -9 ones run the whole service as a
real process (`python -m hippocampus --config ...`, as tests/service/test_process.py does).

Every figure (exit codes, seconds) is asserted with a generous bound for a loaded 2-core box and printed
(`pytest -s`) for the report.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import psutil
import pytest
import requests
from ruamel.yaml import YAML

from hippocampus.clock import Clock
from tests.harness.ports import free_port
from hippocampus.model.client import ModelUnavailable
from hippocampus.model.lifecycle import ModelLifecycle
from tests.harness import tiny_gguf

pytestmark = [pytest.mark.real_model,
              pytest.mark.skipif(os.name == "nt", reason="POSIX signals and process sessions")]

ROOT = Path(__file__).resolve().parents[2]
JETSON = ROOT / "deploy" / "jetson" / "seren-hippocampus.jetson.yaml"
# A model that loads for about a second or two: 200 MB of weights read without mmap, and a KV cache of
# 131,072 tokens cleared at start (2 GB, lazily). Its /health says 503 "Loading model" all that time.
SLOW_SHAPE = tiny_gguf.Shape(layers=4, embedding=1024, heads=8, feed_forward=4096)
SLOW_ARGS = "-c 131072 -np 1 -lm none"


# ---------------------------------------------------------------- helpers

def jetson_model_block() -> dict:
    data = YAML(typ="safe").load(JETSON.read_text(encoding="utf-8"))
    return data["model"]


def model_section(binary: Path, model: Path, port: int, **lifecycle) -> dict:
    """The Jetson profile's model block with the real binary, the tiny model and a free port put in."""
    block = jetson_model_block()
    block["url"] = f"http://127.0.0.1:{port}/v1"
    block["lifecycle"] = {**block["lifecycle"], "server": str(binary), "model_path": str(model),
                          "poll_seconds": 0.05, "ready_timeout_seconds": 60, "stop_grace_seconds": 3, **lifecycle}
    return block


def make_lifecycle(section: dict, state_dir: Path, events: Optional[list] = None) -> ModelLifecycle:
    from hippocampus import config as cm

    cfg = cm.build({"model": section, "memory": {"url": "http://127.0.0.1:9"},
                    "sleep": {"mode": "external", "state_path": str(state_dir / "state.json")}}, environ={})
    events = [] if events is None else events

    def emit(kind, **fields):
        events.append({"type": kind, **fields})
        return events[-1]
    return ModelLifecycle(cfg.model, state_dir=state_dir, clock=Clock(), emit=emit)


def health(port: int) -> Optional[int]:
    try:
        return requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code
    except requests.RequestException:
        return None


def chat(port: int, max_tokens: int = 4) -> requests.Response:
    return requests.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60,
                         json={"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": max_tokens})


def poll(pred: Callable, timeout: float, what: str, step: float = 0.01):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def running(pid: Optional[int]) -> bool:
    if not pid:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def llama_servers_on(port: int) -> list[int]:
    """The pids of llama-server processes told to listen on this port (what a user would find with ps)."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        cmd = p.info.get("cmdline") or []
        if cmd and os.path.basename(cmd[0]) == "llama-server" and "--port" in cmd \
                and cmd[cmd.index("--port") + 1:cmd.index("--port") + 2] == [str(port)] and running(p.pid):
            found.append(p.pid)
    return found


def kill_all_on(port: int) -> None:
    for pid in llama_servers_on(port):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def port():
    p = free_port()
    yield p
    kill_all_on(p)          # whatever a failing test (or the product) left behind


@pytest.fixture(scope="module")
def slow_model() -> Path:
    try:
        return tiny_gguf.tiny_model(seed=0, shape=SLOW_SHAPE)       # 200 MB, written once (~3 s), cached
    except RuntimeError as exc:
        pytest.skip(f"real-model tests skipped: {exc}")


@contextlib.contextmanager
def setting_up(what: str):
    """A failure here is the test's set-up breaking, not the product's flaw: raised as RuntimeError, so a strict
    xfail (raises=AssertionError) does not count it as the expected failure."""
    try:
        yield
    except AssertionError as exc:
        raise RuntimeError(f"set-up failed ({what}): {exc}") from exc


class Ensure(threading.Thread):
    """lc.ensure() in a thread (as the lifecycle actor runs it), its outcome kept."""

    def __init__(self, lc: ModelLifecycle):
        super().__init__(daemon=True)
        self.lc, self.error, self.took = lc, None, None

    def run(self):
        t0 = time.monotonic()
        try:
            self.lc.ensure()
        except Exception as exc:  # noqa: BLE001 - asserted by the test
            self.error = exc
        self.took = time.monotonic() - t0


# ---------------------------------------------------------------- start: loading, then up

def test_it_starts_the_jetson_command_says_starting_while_loading_then_ready(llama_binary, slow_model, port,
                                                                             tmp_path):
    lc = make_lifecycle(model_section(llama_binary, slow_model, port), tmp_path)
    assert lc.snapshot()["state"] == "stopped" and health(port) is None
    seen = []                                   # (health code, lifecycle state) while ensure() runs
    t = Ensure(lc)
    t0 = time.monotonic()
    t.start()
    while t.is_alive():
        seen.append((health(port), lc.snapshot()["state"]))
        time.sleep(0.01)
    assert t.error is None, t.error
    assert lc.snapshot()["state"] == "ready" and health(port) == 200
    argv = psutil.Process(lc.pid).cmdline()
    assert argv[1:] == ["-m", str(slow_model), "--host", "127.0.0.1", "--port", str(port),
                        "-ngl", "99", "-c", "4096", "-np", "1"]          # the Jetson profile's own arguments
    loading = [state for code, state in seen if code == 503]
    assert loading, f"never saw /health 503 while it loaded: {seen}"
    assert set(loading) == {"starting"}          # 503 "Loading model" is loading, not down or failed
    assert "failed" not in {state for _, state in seen}
    assert chat(port).status_code == 200          # and the server does answer a prompt
    lc.shutdown()
    print(f"\nstarted (Jetson args) and ready in {t.took:.2f} s; /health 503 seen {len(loading)} times, "
          f"the status 'starting' each time")
    assert t.took < 30


def test_a_hand_started_server_still_loading_is_waited_for_not_started_twice(llama_binary, slow_model, port,
                                                                             tmp_path):
    """A server somebody started on model.url that is still loading answers 503: that is up-and-loading,
    so the service must wait for it (and borrow it), not launch a second server on the same port.
    (Before the fix ensure() launched a second llama-server, which exited 1: "couldn't bind".)"""
    from tests.harness.llama_server import LlamaServer

    theirs = LlamaServer(llama_binary, slow_model, *SLOW_ARGS.split(), log_dir=tmp_path / "theirs")
    theirs.port = port
    theirs.log_dir.mkdir(parents=True)
    with open(theirs.log_path, "ab") as out:
        theirs.proc = subprocess.Popen(theirs.command(), stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        with setting_up("their server loading"):
            poll(lambda: health(port) == 503, 30, "their server to answer 503 Loading model")
        lc = make_lifecycle(model_section(llama_binary, slow_model, port), tmp_path / "state")
        t0 = time.monotonic()
        try:
            lc.ensure()
        except ModelUnavailable as exc:
            raise AssertionError(f"ensure() on a server that was loading: {exc}") from exc
        took = time.monotonic() - t0
        snap = lc.snapshot()
        print(f"\nborrowed a loading server: ready after {took:.2f} s, state {snap['state']}, "
              f"started_by_us {snap['started_by_us']}")
        assert snap["started_by_us"] is False and snap["state"] == "ready" and health(port) == 200
        assert not (tmp_path / "state" / "model.log").exists(), "it launched a server of its own"
        assert llama_servers_on(port) == [theirs.proc.pid]
        lc.release(0.1)
        assert lc.handover() is False
        lc.shutdown()
        assert theirs.proc.poll() is None and health(port) == 200        # borrowed: never stopped
    finally:
        theirs.stop()


# ---------------------------------------------------------------- keep-warm and hand-over

def test_keep_warm_keeps_it_up_for_the_keep_warm_time_then_stops_it_exit_0(llama_binary, tiny_model, port,
                                                                          tmp_path):
    events: list = []
    lc = make_lifecycle(model_section(llama_binary, tiny_model, port, keep_warm_seconds=1.0, handover=False),
                        tmp_path, events)
    lc.ensure()
    popen = lc.server.popen
    t0 = time.monotonic()
    assert chat(port).status_code == 200
    lc.release(time.monotonic() - t0)
    released = time.monotonic()
    while running(popen.pid):
        lc.tick(chain_open=True)                 # the scheduler's turn, every 50 ms here
        assert time.monotonic() - released < 5, "still up 5 s after a 1 s keep-warm"
        time.sleep(0.05)
    gone_after = time.monotonic() - released
    assert popen.returncode == 0, f"llama-server exited {popen.returncode} on the keep-warm stop"
    assert 0.95 <= gone_after < 2.5
    stopped = [e for e in events if e["type"] == "model_stopped"]
    assert len(stopped) == 1 and stopped[0]["idle_seconds"] >= 1.0
    assert lc.snapshot()["state"] == "stopped" and health(port) is None
    print(f"\nkeep-warm 1 s: stopped {gone_after:.2f} s after the last call, exit code {popen.returncode}")


def test_handover_stops_it_within_a_second_of_the_call_finishing_exit_0(llama_binary, tiny_model, port, tmp_path):
    lc = make_lifecycle(model_section(llama_binary, tiny_model, port), tmp_path)   # Jetson: handover, warm 0
    assert lc.lc.handover is True and lc.lc.keep_warm_seconds == 0
    lc.ensure()
    popen = lc.server.popen
    assert chat(port, max_tokens=16).status_code == 200
    finished = time.monotonic()
    lc.release(0.1)
    assert lc.handover() is True
    poll(lambda: not running(popen.pid), 5, "the handed-over server to exit")
    took = time.monotonic() - finished
    assert popen.returncode == 0, f"llama-server exited {popen.returncode} on the hand-over"
    assert took < 1.0, f"the hand-over took {took:.2f} s"
    assert health(port) is None and lc.snapshot()["state"] == "stopped"
    print(f"\nhand-over: the server was gone {took:.3f} s after the call finished, exit code {popen.returncode}")


# ---------------------------------------------------------------- a stop while it loads

def test_a_stop_asked_for_while_it_loads_is_bounded_and_leaves_no_process(llama_binary, slow_model, port,
                                                                          tmp_path):
    section = model_section(llama_binary, slow_model, port, server_args=SLOW_ARGS, stop_grace_seconds=0.5)
    lc = make_lifecycle(section, tmp_path)
    t = Ensure(lc)
    t.start()
    with setting_up("the server loading"):
        poll(lambda: health(port) == 503, 30, "the server to say 503 Loading model")
    pid = lc.pid
    assert running(pid)
    t0 = time.monotonic()
    stopper = threading.Thread(target=lc.shutdown, daemon=True)
    stopper.start()
    stopper.join(15)
    took = time.monotonic() - t0
    t.join(30)
    print(f"\nstop while loading: shutdown() returned after {took:.2f} s; /health then {health(port)}; "
          f"pid {pid} {'still running' if running(pid) else 'gone'}; ensure() -> {t.error!r}")
    # before the fix shutdown() waited for ensure()'s lock through the whole load: 3.5-5.4 s here, up to
    # ready_timeout_seconds (240 s on the Jetson)
    assert not running(pid) and llama_servers_on(port) == []
    assert took < 0.5 + 1.5, f"the stop waited {took:.2f} s for a server that was still loading"
    assert isinstance(t.error, ModelUnavailable) and "stopped while the model was loading" in str(t.error)
    assert lc.snapshot()["state"] == "stopped" and lc.snapshot()["last_error"] == ""     # a stop, not a failure


# ---------------------------------------------------------------- somebody else's server

def test_a_server_this_service_did_not_start_is_never_stopped(llama_binary, tiny_model, port, tmp_path):
    from tests.harness.llama_server import LlamaServer

    theirs = LlamaServer(llama_binary, tiny_model, "-c", "512", log_dir=tmp_path / "theirs")
    theirs.port = port
    theirs.log_dir.mkdir(parents=True)
    with open(theirs.log_path, "ab") as out:
        theirs.proc = subprocess.Popen(theirs.command(), stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        theirs.wait_ready(30)
        lc = make_lifecycle(model_section(llama_binary, tiny_model, port), tmp_path / "state")  # handover, warm 0
        lc.ensure()
        assert chat(port).status_code == 200
        lc.release(0.1)
        assert lc.snapshot()["started_by_us"] is False
        assert lc.handover() is False
        lc.tick(chain_open=True)
        lc.tick(chain_open=False)
        lc.shutdown()
        assert theirs.proc.poll() is None and health(port) == 200       # still theirs, still up
        assert not (tmp_path / "state" / "model.log").exists()
    finally:
        code, seconds = theirs.stop()
    assert code == 0
    print(f"\nsomebody else's server survived hand-over, keep-warm 0 and shutdown; its own stop: exit {code} "
          f"in {seconds:.3f} s")


# ---------------------------------------------------------------- kill -9 of the service process

def service_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])   # this checkout
    return env


class Service:
    """One `python -m hippocampus --config FILE`, its output in files."""

    def __init__(self, folder: Path, config_path: Path, port: int):
        folder.mkdir(parents=True, exist_ok=True)
        self.port, self.err = port, folder / "stderr.txt"
        with (folder / "stdout.txt").open("wb") as out, self.err.open("wb") as err:
            self.p = subprocess.Popen([sys.executable, "-m", "hippocampus", "--config", str(config_path)],
                                      stdout=out, stderr=err, env=service_env(), cwd=str(folder))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stderr(self) -> str:
        return self.err.read_text(encoding="utf-8", errors="replace")

    def wait_healthy(self, timeout: float = 30):
        def up():
            assert self.p.poll() is None, f"the service exited {self.p.returncode}:\n{self.stderr()}"
            try:
                return requests.get(self.url + "/health", timeout=2).status_code == 200
            except requests.RequestException:
                return False
        poll(up, timeout, "the service's /health", step=0.05)

    def lifecycle(self) -> dict:
        return requests.get(self.url + "/status", timeout=10).json()["model_lifecycle"] or {}

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(10)


@pytest.fixture
def services():
    started: list[Service] = []
    yield started
    for s in started:
        s.kill()


def service_config(tmp_path: Path, memory_url: str, section: dict) -> tuple[Path, int]:
    port = free_port()
    data = {"server": {"host": "127.0.0.1", "port": port}, "memory": {"url": memory_url}, "model": section,
            "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json"),
                      "promote_min_evidence": 2, "max_attempts": 1}}
    path = tmp_path / "seren-hippocampus.yaml"
    with path.open("w", encoding="utf-8") as fh:
        YAML().dump(data, fh)
    return path, port


def recorded_pid(tmp_path: Path) -> Optional[int]:
    try:
        return (json.loads((tmp_path / "state" / "state.json").read_text()).get("lifecycle") or {}).get("pid")
    except (OSError, ValueError):
        return None


def start_sleeping(services, tmp_path: Path, hand, memory, section: dict, name: str = "run-1") -> tuple:
    """Seed two short-terms, start the service on the given model block and ask it for a sleep (in a thread:
    the test stops or kills the service under it). Returns the service and its config's path."""
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
    config_path, port = service_config(tmp_path, memory.url, section)
    svc = Service(tmp_path / name, config_path, port)
    services.append(svc)
    svc.wait_healthy()
    ask_for_a_sleep(svc)
    return svc, config_path


def ask_for_a_sleep(svc: Service) -> None:
    def sleep_now():
        try:
            requests.post(svc.url + "/sleep", params={"without_brief": "true"}, timeout=120)
        except requests.RequestException:
            pass                                # the kill -9 or the stop cuts it off: expected
    threading.Thread(target=sleep_now, daemon=True).start()


def kill_9_while_the_model_is_up(services, tmp_path, hand, memory, llama_binary, tiny_model, llama_port) -> tuple:
    """Start the service, have a sleep start the real server, and kill -9 the service once it answers."""
    section = model_section(llama_binary, tiny_model, llama_port, keep_warm_seconds=3600, handover=False)
    first, config_path = start_sleeping(services, tmp_path, hand, memory, section)
    pid = poll(lambda: health(llama_port) == 200 and recorded_pid(tmp_path), 60,
               "the service's llama-server to be up and recorded", step=0.05)
    first.p.send_signal(signal.SIGKILL)
    assert first.p.wait(10) == -signal.SIGKILL
    return config_path, first.port, pid


def test_after_a_kill_9_with_no_restart_no_llama_server_is_left(services, tmp_path, hand, memory, llama_binary,
                                                                tiny_model, port):
    """Before the fix the server was launched in its own session with nothing tying it to the service: after a
    kill -9 it kept running, holding model.url's port and the model's memory. Its watchdog stops it now."""
    with setting_up("the service started the server and was killed"):
        _, _, pid = kill_9_while_the_model_is_up(services, tmp_path, hand, memory, llama_binary, tiny_model, port)
    t0 = time.monotonic()
    try:
        poll(lambda: not running(pid), 5, f"the orphaned llama-server (pid {pid}) to exit")
    finally:
        left = llama_servers_on(port)
        print(f"\nkill -9, no restart: llama-server gone {time.monotonic() - t0:.2f} s after the kill; left "
              f"running: {left} (answering /health {health(port)})")
    assert left == [] and health(port) is None


def test_after_a_kill_9_the_restart_starts_one_fresh_server_never_two(services, tmp_path, hand, memory,
                                                                     llama_binary, tiny_model, port):
    """The watchdog stops the killed run's server, so the restart does not adopt it (its record is cleared,
    and a server still going would be stopped): the restart's own sleep starts one fresh server, the only one."""
    config_path, service_port, pid = kill_9_while_the_model_is_up(services, tmp_path, hand, memory,
                                                                  llama_binary, tiny_model, port)
    poll(lambda: not running(pid), 5, f"the killed run's llama-server (pid {pid}) to exit")
    again = Service(tmp_path / "run-2", config_path, service_port)
    services.append(again)
    again.wait_healthy()
    # the lifecycle actor publishes its first snapshot once it has looked at the recorded server
    snap = poll(lambda: (lambda s: s if "started_by_us" in s else None)(again.lifecycle()), 10,
                "the restarted service's lifecycle snapshot")
    assert snap["started_by_us"] is False and snap["pid"] is None and recorded_pid(tmp_path) is None
    ask_for_a_sleep(again)
    seen: set = set()

    def fresh():
        rp = recorded_pid(tmp_path)
        servers = llama_servers_on(port)
        seen.update(servers)
        assert len(servers) <= 1, f"two llama-servers on one port: {servers}"
        return rp if rp and rp != pid and servers == [rp] else None
    new = poll(fresh, 60, "the restart's own llama-server", step=0.05)
    t0 = time.monotonic()
    again.p.send_signal(signal.SIGTERM)
    rc = again.p.wait(30)
    poll(lambda: not running(new), 10, f"the restart's llama-server (pid {new}) to exit")
    took = time.monotonic() - t0
    assert rc == 0, again.stderr()
    assert llama_servers_on(port) == [] and health(port) is None and seen == {new}
    print(f"\nkill -9, restart: the killed run's pid {pid} was stopped by its watchdog; the restart started pid "
          f"{new} (never two on the port); SIGTERM: service exit {rc}, its server gone {took:.2f} s later")


# ---------------------------------------------------------------- the whole service stopped mid-work

def sigterm_and_time(svc: Service, llama_port: int, pid: int) -> tuple:
    t0 = time.monotonic()
    svc.p.send_signal(signal.SIGTERM)
    rc = svc.p.wait(60)
    exited = time.monotonic() - t0
    poll(lambda: not running(pid) and not llama_servers_on(llama_port), 10, f"llama-server (pid {pid}) to exit")
    return rc, exited, time.monotonic() - t0


def test_sigterm_to_the_service_while_the_model_loads_ends_in_seconds_with_no_server_left(
        services, tmp_path, hand, memory, llama_binary, slow_model, port):
    """Before the fix the lifecycle actor sat in the ready wait until the model had loaded (its on_stop queued
    behind it): the stop took the whole load, up to ready_timeout_seconds."""
    section = model_section(llama_binary, slow_model, port, server_args=SLOW_ARGS, stop_grace_seconds=0.5,
                            ready_timeout_seconds=240)
    svc, _ = start_sleeping(services, tmp_path, hand, memory, section)
    with setting_up("the service's server loading"):
        poll(lambda: health(port) == 503, 60, "the service's llama-server to say 503 Loading model", step=0.01)
    pid = llama_servers_on(port)[0]
    rc, exited, gone = sigterm_and_time(svc, port, pid)
    print(f"\nSIGTERM while loading: service exit {rc} after {exited:.2f} s, llama-server (pid {pid}) gone "
          f"{gone:.2f} s after the signal")
    assert rc == 0, svc.stderr()
    assert exited < 3.0 and gone < 3.0
    assert "stopped while the model was loading" in svc.stderr() or "stop was asked for while the model loads" \
        in svc.stderr(), svc.stderr()[-2000:]


def test_sigterm_to_the_service_during_an_open_completion_abandons_it_and_the_server_exits_at_once(
        services, tmp_path, hand, memory, llama_binary, slow_model, port):
    """llama-server heeds SIGTERM only once no completion is open (it waits for the client to disconnect: more
    than 30 s with a long answer here). The service's stop abandons the call first (ModelClient.abandon), so
    the server's SIGTERM is answered at once, not after stop_grace_seconds by a kill."""
    section = model_section(llama_binary, slow_model, port, stop_grace_seconds=10, keep_warm_seconds=3600,
                            handover=False)
    section.update(max_tokens=3000, timeout_seconds=300, structured="off",
                   extra_body={"ignore_eos": True})        # an answer of 3,000 tokens: ~50 s on this model
    svc, _ = start_sleeping(services, tmp_path, hand, memory, section)

    def generating():
        try:
            slots = requests.get(f"http://127.0.0.1:{port}/slots", timeout=5).json()
        except (requests.RequestException, ValueError):
            return False
        return isinstance(slots, list) and any(s.get("is_processing") for s in slots)
    with setting_up("the service's drafting call open on the server"):
        poll(generating, 60, "llama-server to be generating the service's answer", step=0.05)
    pid = llama_servers_on(port)[0]
    rc, exited, gone = sigterm_and_time(svc, port, pid)
    err = svc.stderr()
    print(f"\nSIGTERM during an open completion: service exit {rc} after {exited:.2f} s, llama-server (pid {pid}) "
          f"gone {gone:.2f} s after the signal")
    assert rc == 0, err[-2000:]
    assert "ignored the stop" not in err, "the server had to be killed: the open call was not abandoned"
    assert exited < 5.0 and gone < 5.0
