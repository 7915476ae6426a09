"""The ripple and the webhook (issue 8), through the running service.

Real scripts started by the service, a real local HTTP receiver for the
endpoint ripple and the webhook, and the event log read back over GET /events.
"""
from __future__ import annotations

import getpass
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
import requests

from hippocampus.ripple.fire import NUDGE, WOKEN, message_for
from tests.harness.receiver import Receiver
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX accounts and process handling")

# Records one run: argv, the SEREN_RIPPLE_* environment, stdin, when it started and ended. It runs `delay` s, or
# until the test's release() once what it needed the run for is seen (the record is written only at its end).
RECORDER = r'''
import json, os, sys, time
start = time.time()
data = {{"argv": sys.argv[1:], "stdin": sys.stdin.read(), "pid": os.getpid(), "start": start,
        "env": {{k: v for k, v in os.environ.items() if k.startswith("SEREN_RIPPLE_")}}}}
until = start + {delay!r}
while time.time() < until and not os.path.exists({release!r}):     # the delay, or until the test releases it
    time.sleep(0.02)
data["end"] = time.time()
out = os.path.join({out_dir!r}, "%d.json" % os.getpid())
with open(out + ".part", "w", encoding="utf-8") as f:
    json.dump(data, f)
os.replace(out + ".part", out)
'''


class Recorder:
    def __init__(self, tmp_path: Path, name: str = "recorder", delay: float = 0.0):
        self.out = tmp_path / f"{name}-runs"
        self.out.mkdir()
        self.script = tmp_path / f"{name}.py"
        self.released = tmp_path / f"{name}-released"
        self.script.write_text(RECORDER.format(delay=delay, out_dir=str(self.out), release=str(self.released)),
                               encoding="utf-8")

    def release(self) -> float:
        """End every run's delay now and from now on (as FakeModel.release does); the time it was given."""
        at = time.time()
        self.released.write_text("released", encoding="utf-8")
        return at

    def command(self) -> list:
        return [sys.executable, str(self.script), "{message}", "{event}", "{draft_id}"]

    def runs(self) -> list:
        return sorted((json.loads(p.read_text(encoding="utf-8")) for p in self.out.glob("*.json")),
                      key=lambda r: r["start"])

    def run(self, pid: int, timeout: float = 10.0) -> dict:
        path = self.out / f"{pid}.json"
        wait_for(path.exists, timeout=timeout, what=f"the ripple script (pid {pid}) to record its run")
        return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def events(base: str, type_: str = None, limit: int = 1000) -> list:
    """Newest first, as GET /events answers."""
    params = {"limit": limit}
    if type_:
        params["type"] = type_
    return requests.get(base + "/events", params=params, timeout=10).json()["entries"]


def event(base: str, seq: int) -> dict:
    return next(e for e in events(base) if e["seq"] == seq)


def seed(hand, topic: str = "tea") -> None:
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic=topic)


def sleep_now(base: str) -> dict:
    deadline = time.monotonic() + 10
    while True:
        r = requests.post(base + "/sleep", params={"without_brief": "true"}, timeout=60)
        if r.status_code != 409 or time.monotonic() > deadline:     # a thread-mode tick held the cycle
            break
        time.sleep(0.02)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["error"] is None and report["draft_id"], report
    return report


def rippled(base: str, type_: str, timeout: float = 10.0) -> dict:
    """The newest event of this type, once its ripple outcome is on it."""
    return wait_for(lambda: next((e for e in events(base, type_) if e.get("ripple")), None), timeout=timeout,
                    what=f"the ripple outcome on {type_}")


def state_at(tmp_path: Path, name: str) -> str:
    return str(tmp_path / name / "state.json")


# ---------------------------------------------------------------- the script ripple

HOSTILE = "Review {draft_id} now; $(touch PWNED) `touch PWNED2` && rm -rf nothing | cat; {event}"


def test_a_script_ripple_fires_on_draft_submitted_with_the_message_literally(make_config, start_service, hand,
                                                                            tmp_path):
    rec = Recorder(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    me = getpass.getuser()
    cfg = make_config(ripple={"type": "script", "command": rec.command(), "run_as": me, "cwd": str(work),
                              "events": ["draft_submitted"], "messages": {"draft_submitted": HOSTILE}})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    report = sleep_now(base)
    draft_id = report["draft_id"]
    ev = rippled(base, "draft_submitted")
    out = ev["ripple"]
    assert out["type"] == "script" and out["ok"] is True and out["event"] == "draft_submitted"
    assert isinstance(out["pid"], int) and out["run_as"] == me
    run = rec.run(out["pid"])
    literal = f"Review {draft_id} now; $(touch PWNED) `touch PWNED2` && rm -rf nothing | cat; draft_submitted"
    assert run["argv"] == [literal, "draft_submitted", draft_id]
    assert run["env"]["SEREN_RIPPLE_EVENT"] == "draft_submitted"
    assert run["env"]["SEREN_RIPPLE_MESSAGE"] == literal
    sent = json.loads(run["env"]["SEREN_RIPPLE_JSON"])
    assert sent["type"] == "draft_submitted" and sent["draft_id"] == draft_id and sent["seq"] == ev["seq"]
    assert run["stdin"] == ""
    for where in (work, tmp_path, Path.cwd()):
        assert not (where / "PWNED").exists() and not (where / "PWNED2").exists()
    assert len(rec.runs()) == 1                              # only the event it was told to fire on
    assert (tmp_path / "state" / "ripple.log").exists()
    assert requests.get(base + "/status", timeout=10).json()["ripple"]["type"] == "script"


def test_stdin_mode_sends_the_built_in_message_on_stdin(make_config, start_service, hand, tmp_path):
    rec = Recorder(tmp_path)
    cfg = make_config(ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "stdin": True, "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    draft_id = sleep_now(base)["draft_id"]
    ev = rippled(base, "draft_submitted")
    assert ev["ripple"]["ok"] is True
    run = rec.run(ev["ripple"]["pid"])
    assert run["argv"] == ["", "draft_submitted", draft_id]         # {message} is empty: it went on stdin
    assert run["stdin"] == message_for(ev, cfg.ripple) == run["env"]["SEREN_RIPPLE_MESSAGE"]
    assert run["stdin"].startswith(WOKEN) and run["stdin"].endswith(NUDGE) and draft_id in run["stdin"]


def redrafting_model(body: dict) -> dict:
    """A small model that follows the prompt contract: one new core from the fragments it was shown."""
    prompt = body["messages"][-1]["content"]
    frags = re.findall(r"^\[(f\d+)\]", prompt, flags=re.M)
    content = "Green tea, every afternoon, both days" if "CRITIQUE" in prompt else "Green tea in the afternoon"
    return {"content": json.dumps({"operations": [{"kind": "new_core", "content": content, "fragments": frags,
                                                    "target": None, "rationale": "the fragments agree"}]})}


def test_the_terminal_redraft_wakes_with_the_last_attempt_wording(make_config, start_service, hand, tmp_path,
                                                                 fake_model):
    fake_model.responder = redrafting_model
    rec = Recorder(tmp_path)
    cfg = make_config(model={"url": fake_model.url}, sleep={"max_attempts": 2},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted", "tend_resubmitted"]})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    first = sleep_now(base)["draft_id"]
    first_run = rec.run(rippled(base, "draft_submitted")["ripple"]["pid"])
    assert "LAST attempt" not in first_run["argv"][0]
    hand.review(first, [{"op": 0, "verdict": "deny", "critique": "say that it was both days"}])
    r = requests.post(base + "/tend", timeout=60).json()
    assert r["resubmitted"] and r["resubmitted"][0]["terminal"] is True, r
    ev = rippled(base, "tend_resubmitted")
    assert ev["terminal"] is True and ev["attempt"] == 2
    assert ev["ripple"]["ok"] is True
    run = rec.run(ev["ripple"]["pid"])
    assert run["argv"][1:] == ["tend_resubmitted", ev["draft_id"]]
    assert "LAST attempt" in run["argv"][0] and "edited_content" in run["argv"][0]
    assert run["argv"][0] == message_for(ev, cfg.ripple)
    assert run["argv"][0] != message_for({**ev, "terminal": False}, cfg.ripple)
    assert run["env"]["SEREN_RIPPLE_EVENT"] == "tend_resubmitted"


# ---------------------------------------------------------------- one at a time, and the retry

def test_a_ripple_skipped_while_the_last_one_runs_fires_on_the_next_tick(make_config, start_service, tmp_path):
    rec = Recorder(tmp_path, delay=2.5)
    cfg = make_config(sleep={"mode": "thread", "tick_seconds": 0.2, "brief_request": False},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base = svc.url
    one = svc.runtime.ctx.emit("draft_submitted", draft_id="d-one", operations=1)
    two = svc.runtime.ctx.emit("draft_submitted", draft_id="d-two", operations=1)
    first = wait_for(lambda: event(base, one["seq"]).get("ripple"), timeout=5, what="the first ripple")
    assert first["ok"] is True
    skipped = wait_for(lambda: event(base, two["seq"]).get("ripple"), timeout=5, what="the second's outcome")
    assert skipped == {"type": "script", "ok": False, "skipped": "the last ripple for this event is still running"}

    def waiting() -> list:
        return svc.runtime.board.get("ripple")["waiting_to_retry"]

    def running() -> bool:                                   # the first's record is written as it ends
        return not (rec.out / f"{first['pid']}.json").exists()

    # the board is published once the ripple's message is done, a moment after the event was annotated
    wait_for(lambda: waiting() == ["draft_submitted"] or not running(), timeout=5, what="the board to list it")
    looked, until = 0, time.monotonic() + 0.8                # several ticks while the first still runs
    while time.monotonic() < until:
        seen = (event(base, two["seq"])["ripple"], waiting())
        if not running():                                    # only what was read while the first ran counts
            break
        assert seen == (skipped, ["draft_submitted"])
        looked += 1
        time.sleep(0.1)
    assert looked, "the first ripple ended before the second could be seen waiting"
    rec.release()                                            # seen waiting: the first may end now
    retried = wait_for(lambda: (lambda r: r if r.get("ok") else None)(event(base, two["seq"])["ripple"]),
                       timeout=10, what="the skipped ripple to fire")
    assert retried["retried"] is True and retried["pid"] != first["pid"]
    run_one, run_two = rec.run(first["pid"]), rec.run(retried["pid"])
    assert run_one["argv"][2] == "d-one" and run_two["argv"][2] == "d-two"
    assert run_two["start"] >= run_one["end"]                # not at once...
    assert run_two["start"] - run_one["end"] < 1.5           # ...but on the next tick after it ended
    wait_for(lambda: waiting() == [], timeout=5, what="the board to list nothing waiting")
    assert len(rec.runs()) == 2


# ---------------------------------------------------------------- whose account

@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs a root service")
def test_a_root_service_with_no_run_as_refuses_and_run_as_me_runs(make_config, start_service, tmp_path):
    refused_rec, ok_rec = Recorder(tmp_path, "refused"), Recorder(tmp_path, "allowed")
    bare = start_service(make_config(sleep={"state_path": state_at(tmp_path, "bare")},
                                     ripple={"type": "script", "command": refused_rec.command(), "run_as": "",
                                             "events": ["draft_submitted"]}))
    mine = start_service(make_config(sleep={"state_path": state_at(tmp_path, "mine")},
                                     ripple={"type": "script", "command": ok_rec.command(),
                                             "run_as": getpass.getuser(), "events": ["draft_submitted"]}))
    for svc in (bare, mine):
        svc.runtime.ctx.emit("draft_submitted", draft_id="d-root", operations=1)
    no = rippled(bare.url, "draft_submitted")["ripple"]
    assert no["ok"] is False and no["refused"] is True
    assert "root" in no["error"] and "run_as" in no["error"]
    yes = rippled(mine.url, "draft_submitted")["ripple"]
    assert yes["ok"] is True and yes["run_as"] == getpass.getuser()
    assert ok_rec.run(yes["pid"])["argv"][1:] == ["draft_submitted", "d-root"]
    time.sleep(0.3)
    assert refused_rec.runs() == [] and bare.runtime.ripple.running_count() == 0


# ---------------------------------------------------------------- the endpoint ripple and the webhook

def test_an_endpoint_ripple_and_the_webhook_get_the_json_with_their_bearers(make_config, start_service, hand,
                                                                           receiver):
    cfg = make_config(ripple={"type": "endpoint", "url": receiver.base + "/ripple", "bearer_token": "ripple-secret",
                              "events": ["draft_submitted"]},
                      notify={"webhook_url": receiver.base + "/hook", "bearer_token": "hook-secret",
                              "events": ["draft_submitted", "sleep_done"]})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    draft_id = sleep_now(base)["draft_id"]
    ev = wait_for(lambda: next((e for e in events(base, "draft_submitted") if e.get("ripple") and e.get("delivery")),
                               None), timeout=10, what="both outcomes on the event")
    assert ev["ripple"] == {"type": "endpoint", "ok": True, "status": 200}
    assert ev["delivery"] == {"delivered": True, "status": 200}
    wait_for(lambda: len(receiver.at("/hook")) == 2, timeout=10, what="the sleep_done delivery")

    (ripple,) = receiver.at("/ripple")
    assert ripple["headers"]["Authorization"] == "Bearer ripple-secret"
    assert ripple["headers"]["Content-Type"] == "application/json"
    body = ripple["body"]
    assert body["service"] == "seren-hippocampus" and body["event"] == "draft_submitted"
    assert body["draft_id"] == draft_id and body["operations"] == 1
    assert body["message"] == message_for(ev, cfg.ripple) and draft_id in body["message"]

    hooks = {h["body"]["type"]: h for h in receiver.at("/hook")}
    assert set(hooks) == {"draft_submitted", "sleep_done"}
    for h in hooks.values():
        assert h["headers"]["Authorization"] == "Bearer hook-secret"
        assert h["body"]["service"] == "seren-hippocampus"
    hook = hooks["draft_submitted"]["body"]
    assert hook["draft_id"] == draft_id and hook["seq"] == ev["seq"] and hook["operations"] == 1
    assert "ripple" not in hook and "delivery" not in hook
    assert requests.get(base + "/events", timeout=10).json()["webhook"] is True


def test_a_hanging_webhook_never_delays_the_sleep_and_its_timeout_is_recorded(make_config, start_service, hand,
                                                                             receiver):
    receiver.delay = 30                                      # released at teardown
    # 4 s: above the 3 s the sleep may take, so a webhook waited for in the sleep still fails the wall check
    cfg = make_config(notify={"webhook_url": receiver.base + "/hook", "events": ["draft_submitted"],
                              "timeout_seconds": 4})
    svc = start_service(cfg)
    base = svc.url
    seed(hand)
    hand.brief("tea")
    t0 = time.monotonic()
    r = requests.post(base + "/check", timeout=60)
    wall = time.monotonic() - t0
    assert r.status_code == 200 and r.json()["sleep"]["draft_id"], r.text
    assert wall < 3.0, wall
    wait_for(lambda: receiver.at("/hook"), timeout=5, what="the webhook to be called")
    assert "delivery" not in events(base, "draft_submitted")[0]      # still hanging
    ev = wait_for(lambda: next((e for e in events(base, "draft_submitted") if e.get("delivery")), None),
                  timeout=20, what="the webhook timeout on the event")
    assert ev["delivery"]["delivered"] is False
    assert "did not answer within 4 s" in ev["delivery"]["error"]
    assert requests.get(base + "/status", timeout=10).json()["last_sleep"]["error"] is None


# ---------------------------------------------------------------- the log itself

def test_events_survive_a_restart_and_filter_by_type_and_limit(make_config, start_service, hand):
    cfg = make_config()
    svc = start_service(cfg)
    seed(hand)
    draft_id = sleep_now(svc.url)["draft_id"]
    before = events(svc.url)
    assert {"draft_submitted", "sleep_done"} <= {e["type"] for e in before}
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)

    again = start_service(cfg)                               # the same state_path
    base = again.url
    after = events(base)
    assert after == before
    only = requests.get(base + "/events", params={"type": "draft_submitted"}, timeout=10).json()
    assert only["count"] == 1 and [e["type"] for e in only["entries"]] == ["draft_submitted"]
    assert only["entries"][0]["draft_id"] == draft_id
    two = requests.get(base + "/events", params={"limit": 2}, timeout=10).json()
    assert two["count"] == 2 and two["entries"] == before[:2]
    assert requests.get(base + "/events", params={"type": "purged"}, timeout=10).json()["entries"] == []  # none yet
    assert requests.get(base + "/events", params={"type": "no_such_event"}, timeout=10).status_code == 400
    assert requests.get(base + "/events", params={"limit": "many"}, timeout=10).status_code == 400
    new = again.runtime.ctx.emit("nudged", woke=False)
    assert new["seq"] > max(e["seq"] for e in before)        # numbering carries on
    assert events(base, limit=1)[0]["seq"] == new["seq"]
