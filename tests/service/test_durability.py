"""Durability and the ticks (issue 3): external mode waits for a nudge, thread mode ticks on its own,
the state file survives a SIGKILL of the real process and a corrupt one is moved aside, and /status
carries everything an operator needs, in one sentence too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

ROOT = Path(__file__).resolve().parents[2]
FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def event_types(base: str) -> list:
    return [e["type"] for e in requests.get(base + "/events", params={"limit": 1000}, timeout=5).json()["entries"]]


def seed(hand, word: str = "fish") -> str:
    for i in range(3):
        hand.short(f"the {word} dream number {i} had a very long tail", topic=f"{word}, dreams")
    return hand.brief(f"we talked about the {word} dream a lot")


def core_about(hand, word: str):
    return next((e for e in hand.long() if word in e["content"]), None)


# ---------------------------------------------------------------- external and thread mode

def test_external_mode_purges_a_flagged_memory_only_after_a_nudge(make_config, start_service, hand):
    seed(hand)
    svc = start_service(make_config(supervisor=FAST))
    base = svc.url
    r = requests.post(base + "/check", timeout=30)
    assert r.status_code == 200 and r.json()["status"] == "sleeping", r.text
    hand.approve_all(r.json()["sleep"]["draft_id"])
    assert requests.post(base + "/nudge", timeout=5).json()["ok"] is True
    wait_for(lambda: "chain_closed" in event_types(base), timeout=20, what="chain_closed")
    # the nudged tick has finished (its check ran after the tend)
    wait_for(lambda: (svc.runtime.board.get("ticks") or {}).get("ticks", 0) >= 1
             and not svc.runtime.board.get("ticks")["ticking"], timeout=20, what="the nudged tick")
    core = core_about(hand, "fish dream")
    assert core is not None
    ticks_before = svc.runtime.board.get("ticks")["ticks"]

    hand.forget(core["id"], reason="the user asked")
    time.sleep(1.0)                            # ~20 supervisor beats: external mode does nothing on its own
    assert hand.tombstones() == []
    assert "purged" not in event_types(base)
    assert svc.runtime.board.get("ticks")["ticks"] == ticks_before

    r = requests.post(base + "/nudge", timeout=5)
    assert r.status_code == 200 and r.json()["woke"] is True, r.text
    stones = wait_for(hand.tombstones, timeout=20, what="the tombstone")
    assert [t["id"] for t in stones] == [core["id"]], stones
    wait_for(lambda: "purged" in event_types(base), timeout=10, what="the purged event")
    assert core_about(hand, "fish dream") is None


def test_thread_mode_ticks_on_its_own(make_config, start_service, hand):
    """No POST at all: the ticks sleep on the brief, close the approved chain and purge the flag."""
    seed(hand, "otter")
    svc = start_service(make_config(supervisor=FAST, sleep={"mode": "thread", "tick_seconds": 0.3}))
    base = svc.url
    st = requests.get(base + "/status", timeout=5).json()
    assert st["mode"] == "thread" and st["tick_seconds"] == 0.3
    assert st["next_tick_at"] is not None and st["next_tick_at"] <= time.time() + 5
    drafts = wait_for(lambda: hand.drafts("pending"), timeout=20, what="a draft from a tick")
    hand.approve_all(drafts[0]["id"])
    wait_for(lambda: "chain_closed" in event_types(base), timeout=20, what="chain_closed from a tick")
    core = wait_for(lambda: core_about(hand, "otter dream"), timeout=10, what="the core")
    hand.forget(core["id"], reason="the user asked")
    stones = wait_for(hand.tombstones, timeout=20, what="the tombstone from a tick")
    assert [t["id"] for t in stones] == [core["id"]]
    wait_for(lambda: (svc.runtime.board.get("ticks") or {}).get("ticks", 0) >= 2, timeout=10,
             what="two finished ticks")
    assert "nudged" not in event_types(base)


# ---------------------------------------------------------------- /status

STATUS_KEYS = {"mode", "interval_seconds", "tend_interval_seconds", "tend_cycle", "tick_seconds", "model_configured",
               "model_lifecycle", "next_tick_at", "bedtime_at", "brief_misses", "last_check", "catch_up_next",
               "brief_wanted", "brief_requested_at", "webhook", "last_sleep", "last_tend", "actors", "explain"}


def test_status_carries_the_whole_picture(make_config, start_service, hand):
    svc = start_service(make_config(supervisor=FAST))
    base = svc.url
    st = requests.get(base + "/status", timeout=5).json()
    assert STATUS_KEYS <= set(st), STATUS_KEYS - set(st)
    assert st["mode"] == "external"
    assert st["next_tick_at"] is None
    assert st["interval_seconds"] == 72000.0 and st["tend_interval_seconds"] == 600.0
    assert st["tend_cycle"] is True and st["tick_seconds"] == 300.0
    assert st["model_configured"] is False
    assert isinstance(st["model_lifecycle"], dict)
    assert isinstance(st["bedtime_at"], (int, float))
    assert st["brief_misses"] == 0 and st["last_check"] is None and st["last_sleep"] is None
    assert st["last_tend"] is None
    assert isinstance(st["catch_up_next"], bool)
    assert st["brief_wanted"] is False and st["brief_requested_at"] is None
    assert st["webhook"] is False
    assert set(st["actors"]) == {"scheduler", "chain", "sleeper", "lifecycle", "ripple", "notifier", "quality",
                                 "replay", "memory_health", "model_health", "wakeup", "queue"}
    assert all(a["state"] == "running" and a["restarts"] == 0 for a in st["actors"].values())
    assert isinstance(st["explain"], str) and st["explain"].endswith(".")
    assert st["explain"] == st["say"]["headline"]
    assert st["say"]["cards"]["model"]["main"] == "Mechanical"          # modes named where they change things
    assert st["say"]["cards"]["tick"]["main"] == "When asked"

    # a check changes what it says
    requests.post(base + "/check", timeout=30)
    st = requests.get(base + "/status", timeout=5).json()
    assert st["last_check"]["status"] in {"not_bedtime", "waiting_for_brief"}, st["last_check"]
    # a sleep by hand with no brief asks for one
    r = requests.post(base + "/sleep", timeout=30)
    assert r.status_code == 200 and r.json()["status"] == "asked_for_brief", r.text
    st = requests.get(base + "/status", timeout=5).json()
    assert st["brief_wanted"] is True and isinstance(st["brief_requested_at"], (int, float))
    assert "brief" in st["explain"]


def test_status_says_memory_is_down(make_config, start_service):
    dead = f"http://127.0.0.1:{free_port()}"
    svc = start_service(make_config(supervisor=FAST, memory={"url": dead, "timeout_seconds": 2}))
    base = svc.url

    def says_down():
        st = requests.get(base + "/status", timeout=5).json()
        return st if f"Memory at {dead} is not answering" in st["explain"] else None
    st = wait_for(says_down, timeout=15, interval=0.1, what="the explain naming Memory down")
    assert st["memory"]["reachable"] is False
    assert st["explain"].startswith(f"Memory at {dead} is not answering")
    assert requests.get(base + "/health", timeout=10).json() == {"ok": True, "memory_reachable": False}
    # a check says Memory is down and that nothing was started (503, the family's shape), never a 500
    r = requests.post(base + "/check", timeout=30)
    assert r.status_code == 503 and f"SerenMemory at {dead} is not answering" in r.json()["detail"], r.text
    assert "nothing was started" in r.json()["detail"]


# ---------------------------------------------------------------- the real process

class Proc:
    """The service as a real subprocess: `python -m hippocampus --config <yaml>`."""

    def __init__(self, tmp_path: Path, memory_url: str, state_path: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.yaml = tmp_path / "seren-hippocampus.yaml"
        self.yaml.write_text(
            "server:\n"
            f"  port: {self.port}\n"
            "memory:\n"
            f"  url: {memory_url}\n"
            "model:\n"
            "  url: ''\n"
            "sleep:\n"
            "  mode: external\n"
            f"  state_path: {json.dumps(str(state_path))}\n"
            "  promote_min_evidence: 2\n", encoding="utf-8")
        self.log = tmp_path / "service.log"
        self.p = None

    def start(self) -> "Proc":
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
        with open(self.log, "ab") as out:
            self.p = subprocess.Popen([sys.executable, "-m", "hippocampus", "--config", str(self.yaml)],
                                      cwd=str(ROOT), env=env, stdout=out, stderr=subprocess.STDOUT)

        def up():
            assert self.p.poll() is None, f"the service exited {self.p.returncode}:\n{self.log.read_text()}"
            try:
                return requests.get(self.url + "/health", timeout=1).json()
            except requests.RequestException:
                return None
        wait_for(up, timeout=30, interval=0.1, what="the service process to answer")
        return self

    def kill(self) -> None:
        self.p.send_signal(signal.SIGKILL)
        self.p.wait(10)

    def stop(self) -> None:
        if self.p is not None and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(10)
                raise AssertionError(f"the service did not stop on SIGTERM:\n{self.log.read_text()}")


def test_state_survives_a_sigkill_of_the_real_process(memory, hand, tmp_path):
    seed(hand, "kite")
    state_path = tmp_path / "state" / "state.json"
    proc = Proc(tmp_path, memory.url, state_path).start()
    try:
        r = requests.post(proc.url + "/check", timeout=60)
        assert r.status_code == 200 and r.json()["status"] == "sleeping", r.text
        draft_id = r.json()["sleep"]["draft_id"]
        assert draft_id
        assert requests.get(proc.url + "/status", timeout=5).json()["last_sleep"]["draft_id"] == draft_id
        proc.kill()
        assert proc.p.returncode == -signal.SIGKILL

        saved = json.loads(state_path.read_text(encoding="utf-8"))     # intact JSON
        assert saved["last_sleep"]["draft_id"] == draft_id
        assert not list(state_path.parent.glob("state.json.corrupt-*"))

        proc.start()
        st = requests.get(proc.url + "/status", timeout=5).json()
        assert st["last_sleep"]["draft_id"] == draft_id
        assert st["last_check"]["status"] == "sleeping"
        assert st["state_error"] is None
        assert not list(state_path.parent.glob("state.json.corrupt-*"))
        # it carries on from there: the chain it opened is still open, so no second sleep
        r = requests.post(proc.url + "/sleep", params={"without_brief": "true"}, timeout=30)
        assert r.status_code == 200 and r.json()["status"] == "chain_open", r.text
    finally:
        proc.stop()
    assert proc.p.returncode == 0, proc.log.read_text()


def test_a_corrupt_state_file_is_moved_aside_and_the_service_starts_clean(memory, tmp_path):
    state_path = tmp_path / "state" / "state.json"
    state_path.parent.mkdir(parents=True)
    state_path.write_bytes(b'{"last_sleep": {"draft_id": "d-1"}, \x00\xff garbage')
    proc = Proc(tmp_path, memory.url, state_path).start()
    try:
        assert requests.get(proc.url + "/health", timeout=5).json()["ok"] is True
        aside = list(state_path.parent.glob("state.json.corrupt-*"))
        assert len(aside) == 1, aside
        assert b"garbage" in aside[0].read_bytes()
        st = requests.get(proc.url + "/status", timeout=5).json()
        assert st["last_sleep"] is None and st["last_check"] is None and st["brief_misses"] == 0
        assert st["state_error"] is None
        # a clean state is written again on the first change
        assert requests.post(proc.url + "/check", timeout=30).status_code == 200
        assert json.loads(state_path.read_text(encoding="utf-8"))["last_check"]["status"]
        assert "moved it aside" in proc.log.read_text(encoding="utf-8", errors="replace")
    finally:
        proc.stop()
    assert proc.p.returncode == 0, proc.log.read_text()
