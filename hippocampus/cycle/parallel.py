"""Drafting a night's piles: one at a time (model.parallel 1, as always), or up to model.parallel at once on a
llama-server started with as many slots (-np N). Either way the piles come back in pile order, so the sleep
folds them (the guard's repeats across piles, the tallies, the piles kept back) exactly as one at a time would.

At once: a pile is started only while no earlier one has raised; right before each start, on this thread and
in pile order, the claim is checked and the budget's meter books the pile's call (so calls in flight count); a
pile the budget does not allow stops new starts, and it and the piles after it are kept for the next night.
"""
from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Callable, Iterator

from hippocampus.cycle import budget
from hippocampus.cycle.drafter import draft_pile

MAX = 8         # model.parallel's ceiling


def drafted(ctx, piles: list, steer_for: Callable, voice_block: str, claim=None,
            width: int = 1) -> Iterator[tuple]:
    """(index, pile, its PileResult, or the BudgetSpent that stopped it before its call), in pile order. Any
    other trouble (the model unreachable, the service stopping, the claim taken) is raised as it comes."""
    if width <= 1 or len(piles) <= 1:
        for i, pile in enumerate(piles):
            steer = steer_for(pile)
            if claim is not None:
                claim.check()
            try:
                res = draft_pile(ctx, pile, steer, voice_block)
            except budget.BudgetSpent as exc:
                res = exc
            yield i, pile, res
        return
    with shared_gate(ctx):
        yield from _at_once(ctx, piles, steer_for, voice_block, claim, min(width, MAX))


def _at_once(ctx, piles: list, steer_for: Callable, voice_block: str, claim, width: int) -> Iterator[tuple]:
    outcomes: dict = {}
    running: dict = {}
    meter = ctx.meter
    started = folded = 0
    halted = False
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="hippocampus-draft") as pool:   # waits at its end
        while folded < len(piles):
            while not halted and started < len(piles) and len(running) < width:
                pile = piles[started]
                steer = steer_for(pile)
                if claim is not None:
                    claim.check()
                try:
                    if meter is not None:
                        meter.check(time.monotonic())       # booked here, in pile order
                except budget.BudgetSpent as exc:
                    outcomes[started], halted = exc, True
                else:
                    running[pool.submit(_booked, ctx, meter, pile, steer, voice_block)] = started
                started += 1
            if not running and folded not in outcomes:
                return          # halted: the piles never started are left to the caller's fold
            if folded not in outcomes:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in done:
                    i = running.pop(f)
                    outcomes[i] = f.exception() or f.result()
                    halted = halted or isinstance(outcomes[i], BaseException)
            while folded in outcomes:
                res = outcomes.pop(folded)
                if isinstance(res, BaseException) and not isinstance(res, budget.BudgetSpent):
                    raise res
                yield folded, piles[folded], res
                folded += 1


def _booked(ctx, meter, pile, steer, voice_block: str):
    """draft_pile on a worker thread, its call's budget booked already (a pile that fails before it: unbooked)."""
    if meter is None:
        return draft_pile(ctx, pile, steer, voice_block)
    meter.hold()
    try:
        return draft_pile(ctx, pile, steer, voice_block)
    finally:
        meter.drop()


class _SharedGate:
    """The model gate for calls in flight at once: every call still asks the lifecycle to have the model up
    (its actor takes one ensure at a time), but the busy time it hears is the span some call was in flight, not
    the calls' sum, and the model's last use is refreshed as each call ends."""

    def __init__(self, gate) -> None:
        self._gate, self._lock = gate, threading.Lock()
        self._in_flight, self._since = 0, 0.0

    def ensure(self) -> None:
        self._gate.ensure()
        with self._lock:
            if self._in_flight == 0:
                self._since = time.monotonic()
            self._in_flight += 1

    def release(self, busy_seconds: float) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            busy = time.monotonic() - self._since if self._in_flight == 0 else 0.0     # _since: set by the next ensure
        self._gate.release(busy)

    def __getattr__(self, name: str):
        return getattr(self._gate, name)


@contextlib.contextmanager
def shared_gate(ctx) -> Iterator[_SharedGate]:
    """ctx.gate is a _SharedGate for the block, then the one before."""
    before, ctx.gate = ctx.gate, _SharedGate(ctx.gate)
    try:
        yield ctx.gate
    finally:
        ctx.gate = before
