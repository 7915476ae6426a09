"""The replay actor: one replay at a time, off the door's threads; a thin mailbox around replay.service.Replays.

The door reaches it through its Child (actors/proxies.py), found again after a restart. The runs live in Replays
(the door's), so a restart keeps them.
"""
from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.base import Supervised


class ReplayActor(Supervised):
    name = "replay"
    stop_waits = False      # a replay honours the stop between calls; the stop never waits on it

    def run(self, replays, run, env, packet, cand) -> None:
        replays.work(run, env, packet, cand)


class ReplayProxy(ActorMemberMixin, pykka.ActorProxy[ReplayActor]):
    run = proxy_method(ReplayActor.run)


def starter(child):
    """Replays' `start`: hand the run to the replay actor, through its Child (pykka.ActorDeadError while it is
    down). An ask whose answer nobody waits for: a replay that raises fails its run, never the actor."""
    def start(replays, run, env, packet, cand) -> None:
        child().run(replays, run, env, packet, cand)
    return start
