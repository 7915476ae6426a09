"""The small model, on only when needed (issue 7), through the running service.

A real stand-in llama-server (tests/harness/fake_llama_server.py, behind a
wrapper script named as model.lifecycle.server) is started, health-checked,
drafted against, handed over and stopped by the service itself.
"""
from __future__ import annotations

import getpass
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.harness.ports import free_port
from tests.harness.clock import pid_alive as _pid_alive
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.skipif(os.name == "nt", reason="process groups and the sh wrapper are POSIX")

HARNESS = Path(__file__).resolve().parents[1] / "harness"
FAKE = HARNESS / "fake_llama_server.py"
ANSWER_SECONDS = 0.25          # how long the stand-in takes over one answer (a real one takes seconds)
SERVER_ARGS = "-ngl 7 -c 4096 --seren-mark"

# The stand-in with a think time: every chat answer waits ANSWER_SECONDS, so busy_seconds is not rounded to 0.
SLOW_SHIM = r'''
import sys, time
sys.path.insert(0, {harness!r})
import fake_llama_server as fake
from http.server import BaseHTTPRequestHandler

class Thinking(BaseHTTPRequestHandler):
    def send_response(self, code, message=None):
        if self.command == "POST" and code == 200:
            time.sleep({delay!r})
        super().send_response(code, message)

fake.BaseHTTPRequestHandler = Thinking
sys.exit(fake.main(sys.argv[1:]))
'''


def answer(content: str) -> str:
    """A valid answer per the prompt contract: one new core citing the two fragments shown."""
    return json.dumps({"operations": [{"kind": "new_core", "content": content, "fragments": ["f1", "f2"],
                                       "target": None, "rationale": "the fragments agree"}]})


class StandIn:
    """The stand-in llama-server's files: a model file, its script, and a wrapper named as the server."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.port = free_port()
        self.model = tmp_path / "models" / "small.gguf"
        self.model.parent.mkdir(parents=True)
        self.model.write_bytes(b"GGUF fake")
        self.script = tmp_path / "llama-script.json"
        self.script.write_text(json.dumps([answer("Green tea in the afternoon is a ritual")]))
        shim = tmp_path / "bin" / "slow_llama.py"
        shim.parent.mkdir(parents=True)
        shim.write_text(SLOW_SHIM.format(harness=str(HARNESS), delay=ANSWER_SECONDS))
        self.server = tmp_path / "bin" / "llama-server"
        self.server.write_text("#!/bin/sh\n"
                               f"export FAKE_LLAMA_SCRIPT={shlex.quote(str(self.script))}\n"
                               "export FAKE_LLAMA_WARMUP=0.3\n"
                               f'exec {shlex.quote(sys.executable)} {shlex.quote(str(shim))} "$@"\n')
        self.server.chmod(0o755)
        self.spawned: list = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def health(self) -> str:
        return f"http://127.0.0.1:{self.port}/health"

    def answering(self) -> bool:
        try:
            return requests.get(self.health, timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def lifecycle(self, **kw) -> dict:
        opts = {"server": str(self.server), "model_path": str(self.model), "server_args": SERVER_ARGS,
                "poll_seconds": 0.05, "ready_timeout_seconds": 15, "keep_warm_seconds": 3600,
                "stop_grace_seconds": 3}
        opts.update(kw)
        return opts

    def spawn_by_hand(self) -> subprocess.Popen:
        """Somebody else's server: started here, before the service, on the configured port."""
        env = dict(os.environ, FAKE_LLAMA_SCRIPT=str(self.script), FAKE_LLAMA_WARMUP="0")
        p = subprocess.Popen([sys.executable, str(FAKE), "-m", str(self.model), "--host", "127.0.0.1",
                              "--port", str(self.port)], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.spawned.append(p)
        return p

    def cleanup(self, state_dir: Path) -> None:
        pids = {p.pid for p in self.spawned}
        try:
            pid = json.loads((state_dir / "state.json").read_text()).get("lifecycle", {}).get("pid")
            if pid:
                pids.add(int(pid))
        except (OSError, ValueError, AttributeError):
            pass
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        for p in self.spawned:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


@pytest.fixture
def stand(tmp_path):
    s = StandIn(tmp_path)
    yield s
    s.cleanup(tmp_path / "state")


def events(base: str, type_: str = None) -> list:
    """Oldest first."""
    params = {"limit": 1000}
    if type_:
        params["type"] = type_
    return list(reversed(requests.get(base + "/events", params=params, timeout=10).json()["entries"]))


def types(base: str) -> list:
    return [e["type"] for e in events(base)]


def status(base: str) -> dict:
    return requests.get(base + "/status", timeout=10).json()


def lifecycle_of(base: str) -> dict:
    return status(base)["model_lifecycle"]


def seed(hand, topic: str = "tea") -> None:
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic=topic)


def gone(pid: int, timeout: float = 10.0) -> bool:
    try:
        wait_for(lambda: not _pid_alive(pid), timeout=timeout, what=f"pid {pid} to exit")
        return True
    except (AssertionError, TimeoutError):
        return False


def ticks(svc) -> int:
    return (svc.runtime.board.get("ticks") or {}).get("ticks", 0)


def sleep_now(base: str) -> dict:
    """POST /sleep?without_brief=true; in thread mode a tick may hold the cycle for a moment (409): again."""
    deadline = time.monotonic() + 10
    while True:
        r = requests.post(base + "/sleep", params={"without_brief": "true"}, timeout=60)
        if r.status_code != 409 or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert r.status_code == 200, r.text
    return r.json()


# ---------------------------------------------------------------- start, keep warm, stop

def test_a_sleep_starts_the_server_drafts_and_it_stops_after_keep_warm(make_config, start_service, hand, stand,
                                                                      tmp_path):
    cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(keep_warm_seconds=2)},
                      sleep={"mode": "thread", "tick_seconds": 0.1, "brief_request": False})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    assert not stand.answering()
    report = sleep_now(base)          # thread mode: ticks run all through the sleep, busy
    assert report["error"] is None, report
    assert report["draft_id"] and report["operations"] == 1
    draft = hand.draft(report["draft_id"])
    assert draft["operations"][0]["content"] == "Green tea in the afternoon is a ritual"

    snap = lifecycle_of(base)
    assert snap["managed"] is True and snap["via"] == "local" and snap["started_by_us"] is True
    assert snap["state"] == "ready"
    pid = snap["pid"]
    assert _pid_alive(pid) and stand.answering()
    running = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    argv = [w.decode() for w in running if w]
    tail = ["-m", str(stand.model), "--host", "127.0.0.1", "--port", str(stand.port), *SERVER_ARGS.split()]
    assert argv[-len(tail):] == tail, argv
    log = (tmp_path / "state" / "model.log").read_text()
    assert f"listening on 127.0.0.1:{stand.port} (model {stand.model}, extra {SERVER_ARGS})" in log
    assert "POST /v1/chat/completions" in log

    started = events(base, "model_started")
    assert len(started) == 1 and started[0]["how"] == "command" and started[0]["url"] == stand.url
    assert events(base, "model_stopped") == []           # warm while the chain is open

    stopped = wait_for(lambda: events(base, "model_stopped"), timeout=10, what="the keep-warm stop")
    assert len(stopped) == 1 and "why" not in stopped[0]   # the idle stop, not "the cycle is over"
    idle = stopped[0]["idle_seconds"]
    assert 2.0 <= idle < 3.0                                # on the first tick (0.1 s) after keep_warm_seconds
    submitted = events(base, "draft_submitted")[0]
    assert stopped[0]["at"] - idle <= submitted["at"] + 0.1  # idle counted from the last answer
    assert gone(pid) and not stand.answering()
    snap = lifecycle_of(base)
    assert snap["state"] == "stopped" and snap["pid"] is None and snap["started_by_us"] is False
    assert hand.drafts("pending")                         # the chain is still open: only the model went
    assert types(base).count("model_started") == 1
    assert "model_start_failed" not in types(base) and "sleep_failed" not in types(base)


def test_with_no_chain_open_it_stops_at_once(make_config, start_service, hand, stand):
    cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(keep_warm_seconds=3600)},
                      sleep={"mode": "thread", "tick_seconds": 0.1, "brief_request": False})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    report = sleep_now(base)
    assert report["error"] is None and report["draft_id"], report
    pid = lifecycle_of(base)["pid"]
    n = ticks(svc)
    wait_for(lambda: ticks(svc) >= n + 3, timeout=10, what="three ticks with the chain open")
    assert _pid_alive(pid) and events(base, "model_stopped") == []
    hand.approve_all(report["draft_id"])
    closed = wait_for(lambda: events(base, "chain_closed"), timeout=10, what="the chain to close")
    stopped = wait_for(lambda: events(base, "model_stopped"), timeout=10, what="the stop")
    assert [e["why"] for e in stopped] == ["the cycle is over"]
    assert stopped[0]["seq"] > closed[0]["seq"] and stopped[0]["at"] - closed[0]["at"] < 1.0
    assert gone(pid) and not stand.answering()


# ---------------------------------------------------------------- the hand-over

RIPPLE_RECORDER = r'''
import json, os, socket, sys, time
port = int(sys.argv[2])
try:
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
    answering = True
except OSError:
    answering = False
out = os.path.join({out_dir!r}, sys.argv[1] + ".json")
with open(out + ".part", "w") as f:
    json.dump({{"event": sys.argv[1], "at": time.time(), "model_answering": answering}}, f)
os.replace(out + ".part", out)
'''


def test_handover_stops_before_the_wake_up_and_starts_again_for_the_redraft(make_config, start_service, hand,
                                                                           stand, tmp_path):
    out_dir = tmp_path / "ripples"
    out_dir.mkdir()
    recorder = tmp_path / "ripple_recorder.py"
    recorder.write_text(RIPPLE_RECORDER.format(out_dir=str(out_dir)))
    cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(handover=True)},
                      sleep={"nudge_wait_seconds": 10, "max_attempts": 3},
                      ripple={"type": "script", "command": [sys.executable, str(recorder), "{event}", str(stand.port)],
                              "events": ["draft_submitted", "tend_resubmitted"], "run_as": getpass.getuser()})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    hand.brief("tea mattered this week")
    r = requests.post(base + "/check", timeout=60).json()
    assert r["status"] == "sleeping" and r["sleep"]["error"] is None, r
    first_id = r["sleep"]["draft_id"]
    assert not stand.answering()                           # handed over: the main model has the box

    seq = types(base)
    assert seq.index("model_started") < seq.index("model_stopped") < seq.index("draft_submitted")
    stopped = events(base, "model_stopped")
    assert [e["why"] for e in stopped] == ["handing over to the main model"]
    woke = json.loads(wait_for(lambda: (out_dir / "draft_submitted.json").exists() and
                               (out_dir / "draft_submitted.json").read_text(), timeout=10, what="the ripple"))
    assert woke["model_answering"] is False and woke["at"] >= stopped[0]["at"]
    ds = events(base, "draft_submitted")[0]
    assert ds["draft_id"] == first_id
    wait_for(lambda: (events(base, "draft_submitted")[0].get("ripple") or {}).get("ok"), timeout=10,
             what="the ripple outcome on the event")

    hand.review(first_id, [{"op": 0, "verdict": "deny", "critique": "say which afternoons"}])
    requests.post(base + "/nudge", timeout=10)
    wait_for(lambda: events(base, "tend_resubmitted"), timeout=30, what="the redraft")
    seq = types(base)
    i_ds, i_tr = seq.index("draft_submitted"), seq.index("tend_resubmitted")
    started = [i for i, t in enumerate(seq) if t == "model_started"]
    stops = [i for i, t in enumerate(seq) if t == "model_stopped"]
    assert len(started) == 2 and i_ds < started[1] < i_tr   # started again for the redraft...
    assert len(stops) == 2 and started[1] < stops[1] < i_tr  # ...and handed over before the wake-up
    assert not stand.answering()
    woke = json.loads(wait_for(lambda: (out_dir / "tend_resubmitted.json").exists() and
                               (out_dir / "tend_resubmitted.json").read_text(), timeout=10, what="the ripple"))
    assert woke["model_answering"] is False and woke["at"] >= events(base, "model_stopped")[1]["at"]

    second = next(d for d in hand.drafts("pending") if d["attempt"] == 2)
    hand.approve_all(second["id"])
    requests.post(base + "/nudge", timeout=10)
    wait_for(lambda: events(base, "chain_closed"), timeout=30, what="the chain to close")
    assert types(base).count("model_started") == 2 and "model_start_failed" not in types(base)

    snap = lifecycle_of(base)
    assert snap["state"] == "stopped" and snap["started_by_us"] is False
    up, busy = snap["up_seconds_total"], snap["busy_seconds_total"]
    ratio = up / busy
    print(f"\nmodel up/busy over a whole chain with handover: up {up} s / busy {busy} s = {ratio:.2f} "
          f"(stand-in: 0.3 s warm-up, {ANSWER_SECONDS} s per answer, 2 answers)")
    assert math.isfinite(ratio) and ratio > 0
    assert busy >= 2 * ANSWER_SECONDS * 0.8 and up >= busy


# ---------------------------------------------------------------- somebody else's server

def test_a_server_already_up_is_used_and_never_stopped(make_config, start_service, hand, stand, tmp_path):
    p = stand.spawn_by_hand()
    wait_for(stand.answering, timeout=15, what="the hand-started server")
    cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(keep_warm_seconds=0, handover=True)},
                      sleep={"mode": "thread", "tick_seconds": 0.1, "brief_request": False})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    report = sleep_now(base)
    assert report["error"] is None and report["draft_id"], report
    snap = lifecycle_of(base)
    assert snap["started_by_us"] is False and snap["pid"] is None and snap["state"] == "ready"
    hand.approve_all(report["draft_id"])
    wait_for(lambda: events(base, "chain_closed"), timeout=10, what="the chain to close")
    n = ticks(svc)
    wait_for(lambda: ticks(svc) >= n + 3, timeout=10, what="ticks after the chain closed")
    assert p.poll() is None and stand.answering()
    assert lifecycle_of(base)["started_by_us"] is False
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    assert p.poll() is None and stand.answering()
    seen = [e["type"] for e in svc.runtime.events.list(limit=1000)]     # the service is down: read its log
    assert "model_started" not in seen and "model_stopped" not in seen
    assert not (tmp_path / "state" / "model.log").exists()       # nothing was launched


# ---------------------------------------------------------------- failures

def test_a_missing_model_file_fails_the_sleep_naming_the_path(make_config, start_service, hand, stand, tmp_path):
    missing = tmp_path / "models" / "not-there.gguf"
    cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(model_path=str(missing))})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    brief = hand.brief("tea")
    r = requests.post(base + "/check", timeout=60).json()
    assert str(missing) in (r["sleep"]["error"] or ""), r
    last = status(base)["last_sleep"]
    assert str(missing) in last["error"] and last["draft_id"] is None
    failed = events(base, "sleep_failed")
    assert len(failed) == 1 and str(missing) in failed[0]["error"]
    msf = events(base, "model_start_failed")
    assert len(msf) == 1 and msf[0]["error"] == f"model.lifecycle.model_path not found: {missing}"
    assert [b["id"] for b in hand.open_briefs()] == [brief]      # kept for the next check
    assert hand.drafts() == []


def test_a_server_that_never_answers_fails_once_then_waits_before_retrying(make_config, start_service, hand,
                                                                          tmp_path):
    port = free_port()
    script = "import os, time; print('launched', os.getpid(), flush=True); time.sleep(60)"
    start = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"
    cfg = make_config(model={"url": f"http://127.0.0.1:{port}/v1",
                             "lifecycle": {"manage": True, "start": start, "ready_timeout_seconds": 1,
                                           "poll_seconds": 0.05, "retry_after_seconds": 600,
                                           "stop_grace_seconds": 2}})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    hand.brief("tea")
    t0 = time.monotonic()
    first = requests.post(base + "/check", timeout=60).json()
    took = time.monotonic() - t0
    assert took >= 1.0
    assert f"did not answer http://127.0.0.1:{port}/health within 1 s" in first["sleep"]["error"], first
    assert len(events(base, "model_start_failed")) == 1
    log = tmp_path / "state" / "model.log"
    launched = wait_for(lambda: [ln for ln in log.read_text().splitlines() if ln.startswith("launched")],
                        timeout=5, what="the launch line")
    assert gone(int(launched[0].split()[1]))               # the server that never answered was stopped

    t0 = time.monotonic()
    second = requests.post(base + "/check", timeout=60).json()
    fast = time.monotonic() - t0
    assert second["status"] == "waiting_for_model" and second["sleep"] is None, second    # no sleep started
    assert second["retry_at"] == pytest.approx(first["sleep"]["retry_at"]) and second["retry_at"] > time.time() + 500
    assert fast < 1.0, fast                                # no second wait for health
    assert len(events(base, "model_start_failed")) == 1    # and no second start
    assert len(events(base, "sleep_failed")) == 1          # the failure is recorded once, with its next attempt
    assert events(base, "sleep_failed")[0]["next_attempt_at"] == pytest.approx(second["retry_at"])
    assert [ln for ln in log.read_text().splitlines() if ln.startswith("launched")] == launched
    assert "the model's start is tried again at" in status(base)["say"]["headline"]
    assert lifecycle_of(base)["state"] == "failed"


# ---------------------------------------------------------------- a crash of the lifecycle actor

def test_a_crashed_lifecycle_actor_adopts_its_server_and_the_shutdown_stops_it(make_config, start_service, hand,
                                                                              stand, crashes):
    cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle(keep_warm_seconds=3600)})
    svc = start_service(cfg, children=crashes.children)
    base = svc.url
    seed(hand)
    report = sleep_now(base)
    assert report["error"] is None and report["draft_id"], report
    before = lifecycle_of(base)
    pid = before["pid"]
    assert before["started_by_us"] is True and _pid_alive(pid)
    crashed_at = time.time()
    assert crashes.crash(svc.runtime, "lifecycle") is True
    wait_for(lambda: [e for e in events(base, "actor_restarted") if e["actor"] == "lifecycle"], timeout=10,
             what="the lifecycle actor to restart")
    assert [e["actor"] for e in events(base, "actor_crashed")] == ["lifecycle"]
    wait_for(lambda: status(base)["actors"]["lifecycle"]["started_at"] >= crashed_at, timeout=10,
             what="the restarted actor running")
    after = lifecycle_of(base)       # the same ModelLifecycle, left to the new instance (its last_used kept)
    assert after["pid"] == pid and after["started_by_us"] is True and after["state"] == "ready"   # adopted
    assert _pid_alive(pid) and stand.answering()
    assert status(base)["actors"]["lifecycle"]["state"] == "running"
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    assert gone(pid) and not stand.answering()             # never orphaned
    stopped = [e for e in svc.runtime.events.list(limit=1000) if e["type"] == "model_stopped"]
    assert [e["why"] for e in stopped] == ["the service is shutting down"]
