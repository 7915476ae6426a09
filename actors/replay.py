"""The replay actor: one replay at a time, off the door's threads; a thin mailbox around replay.service.Replays.

The door calls its methods through a typed proxy (pykka's idiom: the method is the message), looked up at each
call so a restarted actor is found again. The runs live in Replays (the runtime's), so a restart keeps them.
"""
from __future__ import annotations

from typing import cast

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.base import Supervised


class ReplayActor(Supervised):
    name = "replay"
    use_daemon_thread = True        # a replay honours the stop between calls; it never holds the exit

    def run(self, replays, run, env, packet, cand) -> None:
        replays.work(run, env, packet, cand)


class ReplayProxy(ActorMemberMixin, pykka.ActorProxy[ReplayActor]):
    run = proxy_method(ReplayActor.run)


def starter(registry):
    """Replays' `start`: hand the run to the replay actor (pykka.ActorDeadError while it is down)."""
    def start(replays, run, env, packet, cand) -> None:
        ref = registry.get(ReplayActor.name)
        if ref is None:
            raise pykka.ActorDeadError("the replay actor is down (restarting or failed): see /actors")
        cast(ReplayProxy, ref.proxy()).run(replays, run, env, packet, cand)
    return start
