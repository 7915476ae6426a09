"""The wake-up checks' HTTP looks (the ripple endpoint, an MCP server's host) against real misbehaving peers: each
is bounded like every call out (one deadline, a capped read), so a peer that trickles its answer never holds the
wake-up watch (read every minute) nor the CLI's check."""
from __future__ import annotations

import threading
import time

import pytest

from hippocampus.config import RippleConfig
from hippocampus.ripple import check as rc
from hippocampus.ripple import claude_checks
from hippocampus.ripple.probe import Probe
from tests.harness.misbehaving import Misbehaving

CHECK_TIMEOUT = 2.5         # the checks' deadline here (the product's probe.CHECK_TIMEOUT is 5 s)
EVERY = 0.1                 # the peer's trickle: a status line in 1.7 s, within that deadline as at 5 s and 0.2 s
BOUND = CHECK_TIMEOUT + 2.0


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch):
    for module in (rc, claude_checks):
        monkeypatch.setattr(module, "CHECK_TIMEOUT", CHECK_TIMEOUT)


def within_bound(look) -> tuple:
    """(what `look` answered, the seconds it took), or fails once BOUND has passed (the peer is then closed)."""
    out: dict = {}
    t0 = time.monotonic()
    thread = threading.Thread(target=lambda: out.update(answer=look()), daemon=True)
    thread.start()
    thread.join(BOUND)
    took = time.monotonic() - t0
    assert not thread.is_alive(), f"still looking {took:.1f} s in (the check's bound is {CHECK_TIMEOUT:g} s)"
    return out["answer"], took


@pytest.mark.parametrize("mode", ["trickle", "trickle_head"])
def test_the_endpoint_check_never_waits_past_its_bound(mode):
    peer = Misbehaving(mode, every=EVERY)
    try:
        line, took = within_bound(lambda: {ln.check: ln for ln in rc.checks(
            RippleConfig(type="endpoint", url=peer.url + "/ripple"), probe=Probe())}["url"])
    finally:
        peer.close()
    assert took < BOUND and line.text, line


@pytest.mark.parametrize("mode", ["trickle", "trickle_head"])
def test_the_mcp_host_check_never_waits_past_its_bound(mode):
    peer = Misbehaving(mode, every=EVERY)
    try:
        (ok, said), took = within_bound(lambda: claude_checks.what_it_is({"url": peer.url + "/mcp"}, Probe()))
    finally:
        peer.close()
    assert ok is False and said, said
