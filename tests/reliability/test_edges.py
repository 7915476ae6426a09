"""The edges: a webhook and a ripple endpoint that hang, a ripple script that never exits, a model server
that dies mid-answer, and the disk under the state file full or gone read-only."""
from __future__ import annotations

import getpass
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from hippocampus.cycle import executor
from tests.harness.reviewer import wait_for

from .helpers import CHILDREN, seed

pytestmark = pytest.mark.timeout(120)


class Hanging:
    """Records each POST and sleeps 10 s before answering (cut short at close, so nothing outlives the test)."""

    def __init__(self) -> None:
        self.paths: list = []
        self.answered: list = []
        self.release = threading.Event()
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.paths.append(self.path)
                rec.release.wait(10)
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                    rec.answered.append(self.path)
                except OSError:
                    pass

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def events(base: str, type_: str) -> list:
    return requests.get(base + "/events", params={"type": type_, "limit": 1000}, timeout=10).json()["entries"]


def status(base: str) -> dict:
    r = requests.get(base + "/status", timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


# ---------------------------------------------------------------- hanging receivers

def test_a_hanging_webhook_and_ripple_endpoint_never_delay_the_sleep(make_config, start_service, hand):
    hang = Hanging()
    try:
        cfg = make_config(notify={"webhook_url": hang.url + "/hook", "timeout_seconds": 2,
                                  "events": ["draft_submitted", "sleep_done"]},
                          ripple={"type": "endpoint", "url": hang.url + "/ripple", "timeout_seconds": 2,
                                  "events": ["draft_submitted"]},
                          sleep={"nudge_wait_seconds": 0})
        svc = start_service(cfg)
        base = svc.url
        seed(hand)
        t0 = time.monotonic()
        r = requests.post(base + "/check", timeout=60)
        wall = time.monotonic() - t0
        assert r.status_code == 200 and r.json()["sleep"]["draft_id"], r.text
        wait_for(lambda: {"/hook", "/ripple"} <= set(hang.paths), timeout=5, what="both receivers to be called")
        assert hang.answered == [], "the receivers answered: the hang was not a hang"
        assert wall < 5.0, f"the sleep waited on a hanging receiver ({wall:.1f} s)"
        # the next tick is not held up either, and /status answers all along
        t0 = time.monotonic()
        ticks = svc.runtime.board.get("ticks")["ticks"]
        requests.post(base + "/nudge", timeout=10)
        wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] > ticks, timeout=5, what="the nudged tick")
        assert time.monotonic() - t0 < 5.0
        assert status(base)["last_sleep"]["error"] is None
        # what each receiver did is recorded on the event: both gave up at their timeout
        ev = wait_for(lambda: next((e for e in events(base, "draft_submitted")
                                    if e.get("delivery") and e.get("ripple")), None),
                      timeout=15, what="both outcomes on the event")
        assert ev["delivery"]["delivered"] is False and "did not answer within 2 s" in ev["delivery"]["error"], ev
        assert ev["ripple"]["ok"] is False and "did not answer within 2 s" in ev["ripple"]["error"], ev
        assert all(a["state"] == "running" for a in status(base)["actors"].values())
    finally:
        hang.close()


# ---------------------------------------------------------------- a ripple script that never exits

@pytest.mark.skipif(os.name == "nt", reason="POSIX processes")
def test_a_ripple_script_that_never_exits_is_killed_at_its_timeout(make_config, start_service, tmp_path):
    cfg = make_config(ripple={"type": "script", "command": [sys.executable, "-c", "import time; time.sleep(600)"],
                              "events": ["brief_requested"], "run_as": getpass.getuser(), "timeout_seconds": 1},
                      sleep={"nudge_wait_seconds": 30})
    svc = start_service(cfg)
    base = svc.url
    t0 = time.monotonic()
    r = requests.post(base + "/sleep", timeout=30)             # no brief: it asks for one, and the ripple starts
    assert r.status_code == 200 and r.json()["asked_for_brief"] is True, r.text
    assert time.monotonic() - t0 < 5.0
    ev = wait_for(lambda: next((e for e in events(base, "brief_requested") if e.get("ripple")), None),
                  timeout=10, what="the ripple to start")
    assert ev["ripple"]["ok"] is True, ev
    pid = ev["ripple"]["pid"]
    wait_for(lambda: svc.runtime.ripple.running_count() == 0, timeout=10, interval=0.05,
             what="the never-ending script to be killed")
    took = time.monotonic() - t0
    assert 0.8 <= took < 10, took
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)                                          # killed and reaped, not a zombie
    # a nudge no longer waits for it (nudge_wait_seconds is 30)
    ticks = svc.runtime.board.get("ticks")["ticks"]
    requests.post(base + "/nudge", timeout=10)
    wait_for(lambda: svc.runtime.board.get("ticks")["ticks"] > ticks, timeout=5, what="the nudged tick")


# ---------------------------------------------------------------- a model server that dies mid-answer

class DyingModel:
    """Accepts, reads the request, and closes the socket: with no answer at all, or half of one."""

    def __init__(self, half: bool):
        self.half = half
        self.calls = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.stopped = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        data += conn.recv(65536)
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), 0)
                    while len(body) < length:
                        body += conn.recv(65536)
                    self.calls += 1
                    if self.half:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: 4000\r\n\r\n{\"choices\": [{\"message\": {\"con")
                except OSError:
                    pass

    def close(self) -> None:
        self.stopped = True
        self.sock.close()


@pytest.mark.parametrize("half", [False, True], ids=["no-answer", "half-an-answer"])
def test_a_model_that_dies_mid_answer_fails_the_sleep_naming_it_and_keeps_the_brief(half, make_config, make_ctx,
                                                                                      hand):
    model = DyingModel(half)
    try:
        ctx = make_ctx(make_config(model={"url": model.url, "timeout_seconds": 5}))
        brief = seed(hand)
        report = executor.check(ctx).to_dict()
    finally:
        model.close()
    assert model.calls >= 1
    sleep = report["sleep"]
    assert sleep["error"] and "the model could not draft" in sleep["error"], sleep
    why = "closed the connection without answering" if not half else "hung up in the middle of its answer"
    assert why in sleep["error"], sleep
    assert model.url in sleep["error"], sleep                     # which model, too
    assert "Error" not in sleep["error"], sleep                   # never an exception's class name
    assert all(why in f["why"] for f in sleep["model_failures"]), sleep["model_failures"]
    assert [b["id"] for b in hand.open_briefs()] == [brief]
    assert hand.drafts() == []


# ---------------------------------------------------------------- the disk under the state file

def _writes(base: str) -> dict:
    """Things that write the state and the event log: a nudge (its tick), then a check by hand."""
    requests.post(base + "/nudge", timeout=10)
    deadline = time.monotonic() + 20
    while True:
        r = requests.post(base + "/check", timeout=60)
        if r.status_code != 409 or time.monotonic() > deadline:   # 409: the nudged tick still runs
            break
        time.sleep(0.1)
    assert r.status_code == 200, r.text
    return r.json()


def _serving(base: str) -> dict:
    assert requests.get(base + "/health", timeout=10).status_code == 200
    for path in ("/events", "/history", "/queue", "/actors"):
        assert requests.get(base + path, timeout=10).status_code == 200, path
    st = status(base)
    assert set(st["actors"]) == CHILDREN and all(a["state"] == "running" for a in st["actors"].values())
    return st


def test_the_state_folder_replaced_by_a_file_keeps_serving_and_says_so(make_config, start_service, hand, tmp_path):
    svc = start_service(make_config())
    base = svc.url
    state_dir = svc.cfg.sleep.resolved_state_path().parent
    _writes(base)
    aside = tmp_path / "state-aside"
    state_dir.rename(aside)
    state_dir.write_text("not a folder")                  # every write under it now fails, even as root
    try:
        _writes(base)
        st = _serving(base)
        assert st["state_error"] and "could not be written" in st["state_error"], st["state_error"]
        assert st["state_error"].lower() in st["explain"].lower(), st["explain"]
        assert st["events_error"] and st["events_error"].lower() in st["explain"].lower()
        seed(hand)                                         # a sleep still runs (its draft lands in Memory)
        draft_id = (_writes(base).get("sleep") or {}).get("draft_id") or \
            (status(base)["last_sleep"] or {}).get("draft_id")
        assert draft_id and [d["id"] for d in hand.drafts()] == [draft_id]
    finally:
        state_dir.unlink()
        aside.rename(state_dir)
    _writes(base)                                          # the disk is back: the next write clears it
    st = _serving(base)
    assert st["state_error"] is None and st["events_error"] is None
    saved = json.loads(svc.cfg.sleep.resolved_state_path().read_text(encoding="utf-8"))
    assert saved["last_sleep"]["draft_id"] == draft_id


def test_a_full_disk_keeps_serving_and_says_so(make_config, start_service, monkeypatch):
    import hippocampus.store.private

    svc = start_service(make_config())
    base = svc.url
    _writes(base)

    def full(path, data):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(hippocampus.store.private, "write_text_atomic", full)   # the state's and the events' writes
    _writes(base)
    st = _serving(base)
    assert "No space left on device" in (st["state_error"] or ""), st["state_error"]
    assert "No space left on device" in st["explain"] and "free disk space" in st["explain"], st["explain"]
    monkeypatch.undo()
    _writes(base)
    assert _serving(base)["state_error"] is None


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root writes through a read-only folder")
def test_a_read_only_state_folder_keeps_serving_and_says_so(make_config, start_service):
    svc = start_service(make_config())
    base = svc.url
    state_dir = svc.cfg.sleep.resolved_state_path().parent
    _writes(base)
    state_dir.chmod(0o500)
    try:
        _writes(base)
        st = _serving(base)
        assert st["state_error"] and "Permission denied" in st["state_error"], st
        assert st["state_error"].lower() in st["explain"].lower()
    finally:
        state_dir.chmod(0o700)
    _writes(base)
    assert _serving(base)["state_error"] is None

