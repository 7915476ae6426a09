"""A kept wake-up replaced by a newer one of its kind says so in the History, not 'kept' for good."""
from __future__ import annotations

import getpass
import os

import pytest

from tests.harness.reviewer import wait_for
from tests.service.test_ripple_service import Recorder, event

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX accounts and process handling")


def test_a_kept_ripple_replaced_by_a_newer_one_says_it_was_replaced(make_config, start_service, tmp_path):
    """Found: three draft_submitted while the first's wake-up ran: the second was kept, then the third took its
    place (one kept per kind) and fired; the second's History row said 'ripple kept: the last one still runs'
    for ever."""
    rec = Recorder(tmp_path, delay=1.5)
    cfg = make_config(sleep={"mode": "thread", "tick_seconds": 0.2, "brief_request": False},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)
    base, ctx = svc.url, svc.runtime.ctx
    one, two, three = (ctx.emit("draft_submitted", draft_id=f"d-{i}", operations=1) for i in range(3))
    first = wait_for(lambda: event(base, one["seq"]).get("ripple"), timeout=5, what="the first wake-up")
    assert first["ok"] is True
    wait_for(lambda: (event(base, three["seq"]).get("ripple") or {}).get("skipped"), timeout=5, what="the third kept")
    rec.release()                           # the third kept while the first runs: the first may end now
    fired = wait_for(lambda: (lambda r: r if r.get("ok") else None)(event(base, three["seq"])["ripple"]),
                     timeout=10, what="the third to fire once the first ended")
    assert fired["retried"] is True
    replaced = event(base, two["seq"])
    assert not replaced["ripple"].get("ok") and replaced["say"]["outcome"].startswith("ripple not fired"), replaced
    assert "newer" in replaced["say"]["outcome"], replaced["say"]
    assert rec.run(fired["pid"])["argv"][2] == "d-2"                  # the newest went out, once
    assert [r["argv"][2] for r in rec.runs()] == ["d-0", "d-2"]


def test_a_kept_ripple_the_stop_ends_says_it_never_went_out(make_config, start_service, tmp_path):
    """Found: a wake-up kept while the last one ran is held in memory only: the service stopped before it could
    fire, and after the restart its History row still said 'ripple kept: the last one still runs' for good."""
    rec = Recorder(tmp_path, delay=3.0)
    cfg = make_config(sleep={"mode": "thread", "tick_seconds": 0.2, "brief_request": False},
                      ripple={"type": "script", "command": rec.command(), "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)
    ctx = svc.runtime.ctx
    one, two = (ctx.emit("draft_submitted", draft_id=f"d-{i}", operations=1) for i in range(2))
    wait_for(lambda: (event(svc.url, two["seq"]).get("ripple") or {}).get("skipped"), timeout=5, what="the kept one")
    assert event(svc.url, one["seq"])["ripple"]["ok"] is True
    svc.request_stop(drain_seconds=5)
    assert svc.wait_stopped(30)
    again = start_service(cfg)                      # the same state folder: the event log read back
    kept = event(again.url, two["seq"])
    assert not kept["ripple"].get("ok") and kept["say"]["outcome"].startswith("ripple not fired"), kept
    assert "stop" in kept["say"]["outcome"], kept["say"]
