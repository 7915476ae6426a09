"""An operator's restart of the ripple actor (POST /actors/ripple/restart?force=true) restarts the actor, not the
main model's session it woke: the wake-up still running goes on to its end (the Ripple outlives the instance)."""
from __future__ import annotations

import getpass
import os

import psutil
import pytest
import requests

from tests.harness.reviewer import wait_for
from tests.service.test_ripple_service import Recorder, event

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX accounts and process handling")
FAST = {"backoff_seconds": 0.05, "check_seconds": 0.05}


def ripple_row(base: str) -> dict:
    return requests.get(base + "/actors", timeout=5).json()["actors"]["ripple"]


def test_a_forced_restart_of_the_ripple_actor_leaves_the_running_wake_up_alone(make_config, start_service,
                                                                                 tmp_path):
    rec = Recorder(tmp_path, delay=4.0)
    cfg = make_config(supervisor=FAST, ripple={"type": "script", "command": rec.command(),
                                               "run_as": getpass.getuser(), "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base = svc.url
    ev = svc.runtime.ctx.emit("draft_submitted", draft_id="d-one", operations=1)
    woke = wait_for(lambda: event(base, ev["seq"]).get("ripple"), timeout=10, what="the wake-up to start")
    assert woke["ok"] is True, woke
    proc = psutil.Process(woke["pid"])
    assert proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE

    r = requests.post(base + "/actors/ripple/restart", params={"force": "true"}, timeout=5)
    assert r.status_code == 202, r.text
    wait_for(lambda: ripple_row(base)["state"] == "running" and ripple_row(base)["restarts"] == 1, timeout=15,
             what="the ripple actor running again")
    assert not (rec.out / f"{woke['pid']}.json").exists(), "the wake-up ended before the restart; proves nothing"
    # the main model's session goes on to its own end and records its run, as if nothing had happened here
    run = rec.run(woke["pid"], timeout=15)
    assert run["argv"][2] == "d-one" and run["end"] - run["start"] >= 4.0
    last = wait_for(lambda: (svc.runtime.board.get("ripple") or {}).get("last", {}).get("draft_submitted"),
                    timeout=10, what="the wake-up's end on the board")
    assert last.get("status") == 0 or last.get("ok") is True, last
