"""The sleeper actor: the rest of each tick (purge, the brief gate, the sleep), and a check or a sleep by hand."""
from __future__ import annotations

import time

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus.cycle import executor

from actors.base import DOWN_OK, Supervised
from actors.lifecycle import missed_ticks


class SleeperActor(Supervised):
    name = "sleeper"

    def rest(self, token, part: executor.TickPart, tick: dict) -> None:
        """The chain's tell: the tick's steps left, on its snapshot; the tick ends here."""
        tended, checked, chain_open = part.tended, None, True
        try:
            with self.working("tick"):
                tended, checked, chain_open = executor.tick_rest(self.rt.ctx, part)
        finally:
            end_tick(self.rt, token, tick, tended, checked, chain_open)

    def dropped(self, method: str, *args) -> None:
        if method == "rest":
            end_tick(self.rt, args[0], args[2], args[1].tended)

    def check(self, token) -> dict:
        """POST /check, with the cycle lock the caller took."""
        with self.working("check", token):
            return executor.check(self.rt.ctx).to_dict()

    def sleep(self, token, ask_for_brief: bool) -> dict:
        """POST /sleep, with the cycle lock the caller took."""
        with self.working("sleep", token):
            return executor.sleep_by_hand(self.rt.ctx, ask_for_brief=ask_for_brief).to_dict()

    snapshot = Supervised.progress      # what it publishes: its progress


def end_tick(rt, token, tick: dict, tended=None, checked=None, chain_open: bool = True) -> None:
    """A tick's end, on the thread of its last part: its record on the board (ctx.ticks), the cycle let go; then
    the model's keep-warm, and the skipped ripples (only after the steps: one kept for a brief that arrived since
    is then seen answered). Nothing goes back to the scheduler: its beat sees the cycle free."""
    rt.ctx.ticks.ended({**tick, "finished_at": time.time(), "tend": None if tended is None else "ran",
                        "check": None if checked is None else checked.status})
    rt.ctx.cycle.leave(token)
    try:
        rt.lifecycle().tick.defer(chain_open)
    except pykka.ActorDeadError:        # down: its next instance stops the model if this tick says so
        missed_ticks(rt.registry).append(chain_open)
    with DOWN_OK:
        rt.ripple().retry_skipped.defer()


class SleeperProxy(ActorMemberMixin, pykka.ActorProxy[SleeperActor]):
    rest = proxy_method(SleeperActor.rest)
    check = proxy_method(SleeperActor.check)
    sleep = proxy_method(SleeperActor.sleep)
