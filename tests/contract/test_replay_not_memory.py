"""Memory is never a replay candidate, however its address is spelled (issue 38, item 10), on the real SerenMemory,
no threads.

Found from outside: the check was a string compare, so 127.1, 2130706433, 0x7f000001, 0177.0.0.1, 0,
[::ffff:127.0.0.1] and the host's own name all passed, and a replay wrote a short-term into Memory (its url
ending `/short?x=`, its extra_body carrying the content). Now the address is compared as resolved, at load and
again at connect: a candidate that slipped past the load (as a DNS answer changed since would let it) is
refused before a byte is sent, and Memory gains nothing.
"""
from __future__ import annotations

import ipaddress
import socket
import time
from urllib.parse import urlsplit

import pytest

from hippocampus import config as cm
from hippocampus.config import reach
from hippocampus.config.replay_endpoints import Candidate, NotAllowed, choose, listed
from hippocampus.replay.run import run_packet
from hippocampus.store.capture import store_for
from tests.contract.test_replay import env, first_draft, scripted, seed

MEMORYS_OWN = "is SerenMemory's own address (memory.url): Memory is never a replay candidate, so it is left out"
WROTE = {"content": "written into Memory by a replay"}


def spellings() -> list:
    """Every spelling of this host the issue names (the host's own name when it resolves here)."""
    out = ["127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0", "[::ffff:127.0.0.1]", "127.0.0.2", "[::1]"]
    try:
        socket.getaddrinfo(socket.gethostname(), None)
        out.append(socket.gethostname())
    except OSError:
        pass
    return out


def shorts(hand) -> int:
    return hand._req("GET", "/short", params={"limit": 1})["count"]


def test_every_spelling_of_memorys_address_is_left_out_at_load_and_refused(tmp_path, memory):
    port = urlsplit(memory.url).port
    names = {f"m{i}": h for i, h in enumerate(spellings())}
    cfg = cm.build({"memory": {"url": memory.url}, "model": {"url": ""},
                    "sleep": {"state_path": str(tmp_path / "state" / "state.json")},
                    "replay": {"candidates": {
                        **{n: {"url": f"http://{h}:{port}/short?x=", "extra_body": WROTE} for n, h in names.items()},
                        "next_door": {"url": f"http://127.1:{port + 1 if port < 65535 else port - 1}/v1"}}}},
                   environ={})
    left_out = {w.split("'")[1].split(".")[-2] for w in cfg.warnings if MEMORYS_OWN in w}
    assert left_out == set(names), (sorted(set(names) - left_out), cfg.warnings)
    assert sorted(listed(cfg)) == ["next_door"]                 # another port on this host is not Memory
    for n in names:
        with pytest.raises(NotAllowed):
            choose(cfg, n)
    for h in names.values():                                     # the configured model pointed at Memory: refused
        cfg.model.url = f"http://{h}:{port}/v1"
        with pytest.raises(NotAllowed, match="replay never sends to SerenMemory's own address"):
            choose(cfg)


def test_a_candidate_past_the_load_is_refused_at_connect_and_nothing_reaches_memory(make_ctx, hand, fake_model,
                                                                                    caplog):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand, ("tea",))
    draft = first_draft(ctx, hand)
    packet = store_for(ctx.cfg).load(draft["id"])
    port = urlsplit(ctx.cfg.memory.url).port
    before, asked = shorts(hand), len(fake_model.requests)

    # as if the load had passed them (a name whose DNS answer changed since): chosen by hand, never by choose()
    # 127.1 was last looked up as somewhere else: the URL check passes, the socket's own peer address does not
    reach._cache[("127.1", port)] = (time.monotonic(), frozenset({ipaddress.ip_address("192.0.2.77")}))
    try:
        for host in spellings():
            cand = Candidate(label="sneaky", url=f"http://{host}:{port}/short?x=", name="m", max_tokens=200,
                             timeout_seconds=10.0, extra_body=dict(WROTE), managed=False)
            out = run_packet(env(ctx), packet, cand)
            errors = [c["error"] for c in out["candidate"]["calls"]]
            assert errors and all(e and "is SerenMemory's own" in e and "nothing was sent" in e for e in errors), \
                (host, errors)
            assert out["candidate"]["checks"]["valid"] == 0
            if host == "127.1":                                  # it was the connection's peer that said so
                assert f"connected to SerenMemory's own address 127.0.0.1:{port}" in caplog.text
    finally:
        reach._cache.pop(("127.1", port), None)
    assert shorts(hand) == before, "a replay wrote into Memory"
    assert len(fake_model.requests) == asked
