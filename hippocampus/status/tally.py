"""What the service has done since it started, counted from its own events: the numbers /metrics serves.

A listener on the event log (it never fails the emitter) counts each outcome once, as the event is said;
the counts only grow, as a Prometheus counter must, and start again at zero with the process.
"""
from __future__ import annotations

import threading
from collections import Counter


# an event that ends a sleep or a model start -> what it counts as (None: a sleep_done, counted by what it did)
SLEEP_ENDS = {"sleep_done": None, "sleep_failed": "failed", "sleep_interrupted": "interrupted"}
MODEL_STARTS = {"model_started": "started", "model_start_failed": "failed"}


class Tally:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sleeps: Counter = Counter()
        self.chains: Counter = Counter()
        self.operations: Counter = Counter()
        self.drafts = 0
        self.model_starts: Counter = Counter()

    def seen(self, event: dict) -> None:
        kind = event.get("type")
        with self._lock:
            if kind in SLEEP_ENDS:
                # budget: sleep.budget stopped the night before it drafted anything (not a quiet night)
                done = "budget" if event.get("budget") and not event.get("draft_id") else (
                    "quiet" if event.get("quiet") or not event.get("draft_id") else "drafted")
                self.sleeps[SLEEP_ENDS[kind] or done] += 1
            elif kind == "chain_closed":
                # landed: every operation approved; partly: some landed, some still denied; denied: none landed
                landed, denied = int(event.get("landed") or 0), int(event.get("denied") or 0)
                self.chains["partly" if landed and denied else "denied" if denied else "landed"] += 1
                self.operations["approved"] += landed
                self.operations["denied"] += denied
            elif kind in ("draft_submitted", "tend_resubmitted"):
                self.drafts += 1
            elif kind in MODEL_STARTS:
                self.model_starts[MODEL_STARTS[kind]] += 1

    def counts(self) -> dict:
        with self._lock:
            return {"sleeps": dict(self.sleeps), "chains": dict(self.chains), "operations": dict(self.operations),
                    "drafts": self.drafts, "model_starts": dict(self.model_starts)}
