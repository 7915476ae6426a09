"""Faults for the long run, each at a random moment of a night: SerenMemory restarted mid-chain, the model
server killed mid-answer, the hippocampus SIGKILLed and started again on its own state, a ripple that
hangs past its timeout, the webhook down.

A fault is armed at the start of a night and fires when its moment comes (polled by the runner); one
whose moment never came that night is not counted.
"""
from __future__ import annotations

import os
import signal
import time
from typing import Optional

import requests

from tests.soak.main_model import HANG_FLAG
from tests.soak.procs import standin_pids

KINDS = ["memory_restart", "model_kill", "service_kill", "ripple_hang", "webhook_down"]


class Fault:
    def __init__(self, kind: str, world, rng, night_start: float):
        self.kind, self.w, self.rng = kind, world, rng
        self.start = night_start
        self.fired: Optional[float] = None
        self.detail = ""
        self.delay = rng.uniform(0.5, 8.0)          # for the ones at a random moment
        self.nth_answer = rng.choice([1, 1, 2, 3])  # which answer of the night the model dies in
        self.answers_seen = 0
        self._seen_starts: set = set()
        self.pending_since: Optional[float] = None
        if kind == "ripple_hang":
            self._arm_hang()
        elif kind == "webhook_down":
            world.webhook.down()
            self._fire("the webhook is down all night")

    def _fire(self, detail: str) -> None:
        self.fired, self.detail = time.time(), detail

    # ------------------------------------------------------------ armed at the start of the night
    def _arm_hang(self) -> None:
        if self.w.opts.ripple == "script":
            (self.w.root / HANG_FLAG).write_text("hang")
        else:
            self.w.endpoint.hang_seconds = self.w.opts.ripple_timeout_seconds + 3

    # ------------------------------------------------------------ polled through the night
    def step(self) -> None:
        if self.fired is not None and self.kind != "ripple_hang":
            return
        if self.kind == "ripple_hang":
            self._step_hang()
        elif self.kind == "memory_restart":
            self._step_memory()
        elif self.kind == "model_kill":
            self._step_model()
        elif self.kind == "service_kill":
            if time.time() - self.start >= self.delay:
                self.w.service.kill()
                down = self.rng.uniform(0.2, 1.5)
                time.sleep(down)               # the outage itself: the service is gone this long
                self.w.service.start()
                self._fire(f"SIGKILL {self.delay:.1f} s into the night, restarted after {down:.1f} s")

    def _step_hang(self) -> None:
        if self.fired is not None:
            return
        if self.w.opts.ripple == "script":
            if not (self.w.root / HANG_FLAG).exists():
                self._fire("a woken session hung until the ripple's timeout killed it")
        elif self.w.endpoint.hang_seconds == 0.0:
            self._fire("the ripple endpoint hung past the ripple's timeout")

    def _step_memory(self) -> None:
        try:
            r = requests.get(self.w.memory.url + "/drafts", params={"status": "pending", "limit": 5}, timeout=5)
            pending = r.status_code == 200 and r.json().get("entries")
        except requests.RequestException:
            pending = False
        if pending and self.pending_since is None:
            self.pending_since = time.time()
            self.delay = self.rng.uniform(0.0, 2.0)
        if self.pending_since is not None and time.time() - self.pending_since >= self.delay:
            down = self.rng.uniform(0.5, 2.5)
            hard = self.rng.random() < 0.5
            self.w.memory.restart(down_seconds=down, hard=hard)
            self._fire(f"{'SIGKILL' if hard else 'SIGTERM'} mid-chain, back after {down:.1f} s")

    def _step_model(self) -> None:
        """Kill the stand-in while it is generating its nth answer of the night."""
        done: set = set()
        starts: list = []
        for e in self.w.standin_timeline():
            if float(e.get("t", e.get("t0", 0))) < self.start:
                continue
            if e.get("ev") == "answer_start":
                starts.append((e["pid"], e["t"]))
            elif e.get("ev") == "answer":
                done.add((e["pid"], e["t0"]))
        for key in starts:
            if key in self._seen_starts:
                continue
            self._seen_starts.add(key)
            self.answers_seen += 1
            if self.answers_seen >= self.nth_answer and key not in done and key[0] in standin_pids(self.w.model_path):
                try:
                    os.kill(key[0], signal.SIGKILL)
                except ProcessLookupError:
                    continue
                self.w.note_killed(key[0])
                self._fire(f"SIGKILL pid {key[0]} mid-answer (answer {self.answers_seen} of the night)")
                return

    # ------------------------------------------------------------ the night is over
    def end(self) -> None:
        if self.kind == "webhook_down":
            self.w.webhook.up()
        if self.kind == "ripple_hang":
            (self.w.root / HANG_FLAG).unlink(missing_ok=True)
            self.w.endpoint.hang_seconds = 0.0


def plan(world, rng, night: int, night_start: float) -> Optional[Fault]:
    """Night 1 runs clean; after it every night gets one fault, the kinds taken in turn."""
    if night < 2:
        return None
    return Fault(KINDS[(night - 2) % len(KINDS)], world, rng, night_start)
