"""Memory stops answering during a tend's step: while a redraft reads the denied operation's fragments (the tend
says Memory did not answer, and /status does not send the person to fix the small model), or at a landed chain's
tidy (the log says the tidy was not done)."""
from __future__ import annotations

from urllib.parse import urlsplit

from hippocampus.cycle import executor
from hippocampus.status.narrator import narrate
from hippocampus.status.read import redraft_failed
from tests.harness.relay import RecordingProxy
from tests.service.test_tend import scripted_model, seed


class CutOnFragmentRead(RecordingProxy):
    """A relay to the real Memory that, once armed, cuts every request that reads one memory by id."""
    armed = False

    def seen(self, src, data: bytes) -> None:
        if self.armed and src in self._clients and b"GET /memory/" in data:
            raise OSError("cut")


def test_a_redraft_whose_fragments_memory_did_not_serve_is_not_said_as_the_small_model_s_failure(
        make_ctx, hand, memory, fake_model):
    relay = CutOnFragmentRead(("127.0.0.1", urlsplit(memory.url).port)).open()
    try:
        ctx = make_ctx(memory={"url": relay.url, "timeout_seconds": 2}, model={"url": fake_model.url})
        fake_model.responder = scripted_model
        seed(hand)
        first = hand.draft(executor.check(ctx).to_dict()["sleep"]["draft_id"])
        hand.review(first["id"], [{"op": o["index"], "verdict": "deny", "critique": "say: " + o["content"] + " too"}
                                  for o in first["operations"]])
        calls = len(fake_model.requests)
        relay.armed = True
        tend = executor.tend(ctx).to_dict()
        relay.armed = False
    finally:
        relay.close()
    assert len(fake_model.requests) == calls and hand.drafts("pending") == []      # nothing asked, nothing posted
    now = ctx.clock.now()
    headline = narrate({"memory": {"reachable": True}, "actors": {}, "mode": "external", "bedtime_at": now + 3600,
                        "chain": ctx.last_snapshot.summary(), "last_tend": ctx.state.get("last_tend"),
                        "redraft_failed": redraft_failed(ctx.state.get("history"))}, now)["headline"]
    assert "small model" not in headline and "Memory" in headline, (headline, tend)


class CutTidy(RecordingProxy):
    """A relay to the real Memory that, once armed, cuts every POST /tidy."""
    armed = False

    def seen(self, src, data: bytes) -> None:
        if self.armed and src in self._clients and b"POST /tidy" in data:
            raise OSError("cut")


def test_a_landed_chain_s_tidy_that_memory_did_not_do_is_said_in_the_log(make_ctx, hand, memory, fake_model, caplog):
    """Found: the close of a landed chain asks Memory to tidy (age out, near-term, sweep); when Memory did not
    answer, the chain closed and nothing said the tidy was not done (the sleep's own tidy says so)."""
    import logging

    relay = CutTidy(("127.0.0.1", urlsplit(memory.url).port)).open()
    try:
        ctx = make_ctx(memory={"url": relay.url, "timeout_seconds": 2}, model={"url": fake_model.url})
        fake_model.responder = scripted_model
        seed(hand)
        hand.approve_all(executor.check(ctx).to_dict()["sleep"]["draft_id"])
        relay.armed = True
        with caplog.at_level(logging.WARNING, logger="hippocampus"):
            tend = executor.tend(ctx).to_dict()
    finally:
        relay.close()
    [cid] = tend["closed"]
    assert "error" in tend["tidy"][cid], tend["tidy"]              # Memory did not tidy
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "tidy" in r.getMessage()]
    assert len(said) == 1 and cid in said[0], [r.getMessage() for r in caplog.records]
