"""The chain actor: the first part of each tick (the tick's one read of Memory, its one decision, tend and cull),
and a tend by hand."""
from __future__ import annotations

import time

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.cycle import executor
from hippocampus.cycle.decide import Asked

from actors.base import Supervised
from actors.sleeper import end_tick


class ChainActor(Supervised):
    """The chain's part of a tick: tend and cull (redraft what was denied, close what landed)."""
    name = "chain"

    def tick(self, token, nudged: bool, redraft) -> None:
        """The scheduler's tell, with the cycle lock it took: read and decide, run the chain's steps, then hand the
        snapshot, the steps left and the lock to the sleeper (Memory is read once a tick)."""
        tick, part = {"started_at": time.time(), "nudged": nudged}, None
        try:
            with self.working("tick"):
                part = executor.tick_chain(self.rt.ctx, Asked(redraft=redraft))
            self.rt.sleeper().rest.defer(token, part, tick)
        except pykka.ActorDeadError:
            end_tick(self.rt, token, tick, part and part.tended)      # the sleeper is down: the tick ends here
        except BaseException:
            end_tick(self.rt, token, tick)
            raise

    def dropped(self, method: str, *args) -> None:
        if method == "tick":
            end_tick(self.rt, args[0], {"started_at": time.time(), "nudged": args[1]})

    def tend(self, token) -> dict:
        """POST /tend, with the cycle lock the caller took."""
        with self.working("tend", token):
            return executor.tend(self.rt.ctx, Asked(check=False, redraft=True)).to_dict()

    snapshot = Supervised.progress      # what it publishes: its progress


class ChainProxy(ActorMemberMixin, pykka.ActorProxy[ChainActor]):
    tick = proxy_method(ChainActor.tick)
    tend = proxy_method(ChainActor.tend)
