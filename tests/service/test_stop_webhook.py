"""A stop never waits on the webhook nor on an endpoint ripple: a receiver that does not answer (with events queued
behind the post in flight), and SIGTERM: the service exits within the stop's bound (the unit's TimeoutStopSec is
10 s), and each event not posted says so on its record."""
from __future__ import annotations

import json
import os
import signal

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.receiver import Receiver
from tests.service.test_process import Proc, _yaml

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")

STOP_WITHIN = 5.0


def records(state, type_: str) -> list:
    """The events of `type_` in the state folder's events.jsonl, their patches applied."""
    out: dict = {}
    for line in (state.parent / "events.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if "patch" in item:
            out.setdefault(item["patch"], {}).update(item["set"])
        else:
            out.setdefault(item["seq"], {}).update(item)
    return [r for r in out.values() if r.get("type") == type_]


def _sigterm_while_a_post_is_held(tmp_path, memory, sends, drive) -> tuple:
    """(stderr, the state path): a service whose `sends(url)` config block posts to a receiver that takes each post
    and never answers; `drive(base)` makes the posts; SIGTERM once the first is held: it exits 0 within the bound."""
    hook = Receiver()
    hook.delay = 60.0               # takes each post and never answers
    port = free_port()
    state = tmp_path / "state" / "state.json"
    cfg = _yaml(tmp_path / "h.yaml", {"server": {"port": port}, "memory": {"url": memory.url}, **sends(hook.url),
                                       "sleep": {"mode": "external", "state_path": str(state)}})
    p = Proc(tmp_path, cfg)
    try:
        p.wait_healthy(port)
        drive(p, f"http://127.0.0.1:{port}")
        p.wait_for(lambda: len(hook.requests) == 1, 10, "the first post, held by the receiver")
        rc = p.stop(signal.SIGTERM, within=STOP_WITHIN)
        err = p.stderr()
        assert rc == 0, err
    finally:
        p.kill()
        hook.close()
    return err, state


def test_sigterm_with_a_webhook_that_does_not_answer_exits_at_once(tmp_path, memory):
    def drive(p, base) -> None:
        for n in range(1, 4):       # three events for the webhook: one posted (held), two queued behind it
            r = requests.post(base + "/actors/quality/restart", params={"force": "true"}, timeout=5)
            assert r.status_code == 202, r.text
            p.wait_for(lambda: requests.get(base + "/actors", timeout=5).json()["actors"]["quality"]["restarts"] == n,
                       10, "the restart")
    err, state = _sigterm_while_a_post_is_held(
        tmp_path, memory, lambda url: {"notify": {"webhook_url": url, "events": ["actor_restarted"]}}, drive)
    assert "notifier did not stop" not in err and "Traceback" not in err, err
    said = [r.get("delivery") for r in records(state, "actor_restarted")]
    assert len(said) == 3 and all(d and d["delivered"] is False and "the service was stopping" in d["error"]
                                  for d in said), said


def test_sigterm_with_an_endpoint_ripple_that_does_not_answer_exits_at_once(tmp_path, memory):
    def drive(p, base) -> None:
        r = requests.post(base + "/sleep", timeout=30)        # no brief: the main model is asked
        assert r.status_code == 200 and r.json()["status"] == "asked_for_brief", r.text
    err, state = _sigterm_while_a_post_is_held(
        tmp_path, memory,
        lambda url: {"ripple": {"type": "endpoint", "url": url, "events": ["brief_requested"]}}, drive)
    assert "ripple did not stop" not in err and "Traceback" not in err, err
    [asked] = records(state, "brief_requested")
    assert asked["ripple"]["ok"] is False and "the service was stopping" in asked["ripple"]["error"], asked
