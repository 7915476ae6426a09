"""kill -9 anywhere: a whole chain (brief -> sleep -> deny one operation -> redraft -> approve -> close)
against the service as a REAL process, SIGKILLed at 20 points spread across three chains and restarted
on the same config and state file each time.

The kill points are found four ways: the fake model holding its answer (drafting, redrafting), a loopback
proxy in front of Memory holding one request either before Memory sees it or after Memory did it (so the
service dies with the write landed and unrecorded), polling Memory for the moment a step shows there, and
random small delays after a nudge. After every kill: no duplicated draft, the brief neither lost nor
consumed while its chain is open. At the end: the chain closed, the brief consumed, no review note left.

The random delays come from one seed per test (1, 2, 3); KILL9_SEED=<n> replaces it, to replay a failing
run or to try other timings (`for s in $(seq 1 20); do KILL9_SEED=$s pytest tests/reliability/test_kill9.py`).
Every failure names the seed and the kills so far.
"""
from __future__ import annotations

import os
import random
import time

import pytest

from tests.harness.reviewer import wait_for

from .helpers import (GARDEN_WORDS, REVIEW_TOPIC, Delays, MemoryProxy, ServiceProc, chain_done, chain_invariants,
                      is_redraft, no_duplicate_drafts, review_notes, review_pending, reviewer_has_work, route,
                      seed)

pytestmark = pytest.mark.timeout(240)

FIRST_DRAFT = route("POST", r"^/drafts$", attempt=1)
REDRAFT = route("POST", r"^/drafts$", attempt=2)
REVIEW_NOTE = route("POST", r"^/near$", topic=REVIEW_TOPIC)
CLOSE = route("POST", r"^/drafts/[^/]+/close$")
CONSUME = route("POST", r"^/brief/[^/]+/consume$")
NOTE_DELETE = route("DELETE", r"^/near/")
CULL_TIDY = route("POST", r"^/tidy$", purge=False, near=True)


class Chain:
    def __init__(self, tmp_path, memory, hand, fake_model, seed_n: int):
        self.hand, self.fm = hand, fake_model
        self.delays = Delays()
        fake_model.responder = self.delays.responder
        self.proxy = MemoryProxy(memory.url).start()
        self.proc = ServiceProc(tmp_path, self.proxy.url, fake_model.url)
        self.seed = int(os.environ.get("KILL9_SEED") or seed_n)
        self.rng = random.Random(self.seed)
        print(f"kill9: seed {self.seed}")
        self.kills: list = []
        self.brief = seed(hand)
        self.proc.start()

    # ------------------------------------------------------------ the kill, the restart, the checks
    def _kill(self, label: str) -> None:
        self.proc.kill()
        self.kills.append(label)
        self.proxy.clear_hooks()                  # what a hook held is dropped with the process
        self.delays.draft = self.delays.redraft = 0.0
        self.delays.undelayed = 0
        try:
            chain_invariants(self.hand, self.brief)
        except AssertionError as exc:
            raise AssertionError(f"after kill {len(self.kills)} ({label}, seed {self.seed}): {exc}") from None
        self.proc.start()
        review_pending(self.hand)                 # the reviewer acts whenever a draft waits

    def moment(self, label: str, reached, timeout: float = 40.0) -> None:
        """Nudge, wait for the moment (nudging again now and then), SIGKILL."""
        self.proc.nudge()
        start = last = time.monotonic()
        while not reached():
            now = time.monotonic()
            assert now - start < timeout, f"kill point never reached: {label}\n{self.proc.tail()}"
            if now - last > 8:
                self.proc.nudge()
                last = now
            time.sleep(0.01)
        self._kill(label)

    def at_hook(self, label: str, match, when: str) -> None:
        hook = self.proxy.hook(match, when)
        self.moment(label, hook.hit.is_set)

    def in_model(self, label: str, redraft: bool = False, nth: int = 1) -> None:
        """Killed while the model is answering (the nth call of that kind since the nudge; the ones before it are
        answered at once)."""
        if redraft:
            self.delays.redraft = 3.0
        else:
            self.delays.draft = 3.0
        self.delays.undelayed = nth - 1
        before = len(self.fm.requests)
        self.moment(label, lambda: sum(1 for b in self.fm.requests[before:] if is_redraft(b) == redraft) >= nth)

    def polled(self, label: str, reached, hold=None) -> None:
        """Killed when Memory shows the moment; `hold` keeps the service's next step from landing first."""
        if hold is not None:
            self.proxy.hook(hold, "before")
        self.moment(label, reached)

    def at_random(self, label: str, lo: float, hi: float) -> None:
        delay = self.rng.uniform(lo, hi)
        self.proc.nudge()
        time.sleep(delay)
        self._kill(f"{label} ({delay:.3f} s, seed {self.seed})")

    # ------------------------------------------------------------ Memory, seen directly
    def drafts_at(self, attempt: int) -> list:
        return [d for d in self.hand.drafts() if int(d.get("attempt") or 1) == attempt]

    def closed_not_consumed(self) -> bool:
        drafts = self.hand.drafts()
        return (len(drafts) >= 2 and all(d["status"] == "closed" for d in drafts)
                and self.brief in {b["id"] for b in self.hand.open_briefs()})

    # ------------------------------------------------------------ to the end
    def drive(self, until, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            review_pending(self.hand)
            if until():
                return
            assert time.monotonic() < deadline, \
                f"timed out driving to {what} (seed {self.seed}, kills {self.kills})\n{self.proc.tail()}"
            self.proc.nudge()
            end = time.monotonic() + 5
            while time.monotonic() < end and not until() and not reviewer_has_work(self.hand):
                time.sleep(0.1)

    def settle(self) -> None:
        """Nudge once more and wait for that tick to end (its check ran, nothing is busy)."""
        before = (self.proc.status().get("last_check") or {}).get("at")
        self.proc.nudge()

        def done():
            st = self.proc.status()
            return (st.get("last_check") or {}).get("at") != before and not st["ticking"] and st["busy"] is None
        wait_for(done, timeout=30, what="a quiet tick after the chain closed")

    def finish(self, kills: int) -> None:
        try:
            self.drive(lambda: chain_done(self.hand, self.brief) and self.proc.events("chain_closed"),
                       "the chain closing")
            self.settle()                                 # one more whole tick: nothing reopens
            assert chain_done(self.hand, self.brief)
            assert len(self.kills) == kills, self.kills
            drafts = self.hand.drafts()
            no_duplicate_drafts(drafts)
            assert sorted(int(d["attempt"]) for d in drafts) == [1, 2], drafts
            assert drafts[0]["brief_id_used"] == self.brief
            assert review_notes(self.hand) == []
            assert self.brief not in {b["id"] for b in self.hand.open_briefs()}
            contents = {e["content"] for e in self.hand.long()}
            assert {"Something true about tea", GARDEN_WORDS} <= contents, contents
            assert self.hand.shorts() == []              # every fragment landed, none lost
            closed = self.proc.events("chain_closed")
            assert len(closed) == 1, closed
            st = self.proc.status()
            assert st["state_error"] is None
            assert all(a["state"] == "running" for a in st["actors"].values()), st["actors"]
        finally:
            self.proc.stop()
            self.proxy.stop()


def test_kill9_at_memory_writes_and_model_calls(tmp_path, memory, hand, fake_model):
    c = Chain(tmp_path, memory, hand, fake_model, 1)
    # the sleep
    c.in_model("drafting: the first pile's model call")
    c.at_hook("POST /drafts (attempt 1) held before Memory saw it", FIRST_DRAFT, "before")
    c.at_hook("the review note landed in Memory, not yet recorded", REVIEW_NOTE, "after")
    assert len(c.drafts_at(1)) == 1
    # the redraft (the reviewer denied the garden operation after the restart)
    c.in_model("redrafting: the model call", redraft=True)
    c.at_hook("POST /drafts (attempt 2) held before Memory saw it", REDRAFT, "before")
    c.polled("attempt 2 appears in Memory", lambda: c.drafts_at(2))
    # the cull (the reviewer approved attempt 2 after the restart)
    c.at_hook("a draft closed in Memory, not yet recorded", CLOSE, "after")
    c.at_hook("closed, the brief's consume held before Memory saw it", CONSUME, "before")
    c.at_hook("the review note deleted in Memory, not yet recorded", NOTE_DELETE, "after")
    c.finish(kills=9)


def test_kill9_found_by_polling_memory_and_at_random(tmp_path, memory, hand, fake_model):
    c = Chain(tmp_path, memory, hand, fake_model, 2)
    # the sleep
    c.delays.draft = 2.0
    c.at_random("a random moment after a nudge, drafting slowly", 0.05, 0.8)
    c.in_model("drafting: the second pile's model call", nth=2)
    c.polled("the draft appears in Memory before its review note", lambda: c.drafts_at(1), hold=REVIEW_NOTE)
    # the redraft
    c.at_hook("POST /drafts (attempt 2) landed, its answer lost", REDRAFT, "after")
    # the cull
    c.polled("the drafts closed in Memory, the brief still open", c.closed_not_consumed, hold=CONSUME)
    c.at_hook("the brief consumed in Memory, not yet recorded", CONSUME, "after")
    c.at_hook("the cull's tidy done in Memory, chain_closed not yet emitted", CULL_TIDY, "after")
    c.at_random("a random moment after a nudge, finishing the cull", 0.0, 0.3)
    c.finish(kills=8)


def test_kill9_when_the_reviewer_is_quicker_than_the_restart(tmp_path, memory, hand, fake_model):
    """The draft lands and the service dies; the reviewer reviews before the next nudge; the redraft lands
    and the service dies again before its check: the submit left unfinished must not outlive the chain."""
    c = Chain(tmp_path, memory, hand, fake_model, 3)
    c.at_hook("POST /drafts (attempt 1) landed, its answer lost", FIRST_DRAFT, "after")
    c.at_hook("POST /drafts (attempt 2) landed, its answer lost, before the check", REDRAFT, "after")
    c.at_random("a random moment after a nudge, closing", 0.0, 0.4)
    c.finish(kills=3)
