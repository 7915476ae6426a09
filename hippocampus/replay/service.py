"""Replay and the quality report as the running service offers them, through the facade (front.py).

A replay runs on the service's one replay worker (worker.py), never on the caller's thread: the caller waits
for it at most WAIT_SECONDS, then is told where to read the result. The domain imports neither actors nor HTTP.
"""
from __future__ import annotations

import time
from typing import Optional

from hippocampus.stopping import ServiceStopping
from hippocampus.replay import quality
from hippocampus.store.capture import store_for
from hippocampus.replay.run import ReplayEnv, prepare, run_packet
from hippocampus.replay.worker import KEEP, ReplayWorker, Run

WAIT_SECONDS = 20.0                 # the longest a route or the MCP tool waits for a replay before "running"
STOP_LOOK_SECONDS = 0.1             # how often that wait looks for the stop

BOARD_KEY = "quality"
NOT_YET = {"ready": False, "groups": [], "error": None,
           "message": "the quality report is being read from Memory's drafts, in the background"}


class Replays:
    """The service's replays over its context (cfg, memory, gate, stopping): one worker, one replay at a time."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.worker = ReplayWorker()

    def start(self, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
              timeout_seconds: Optional[float] = None) -> Run:
        """One draft on a candidate, started on the replay worker. Raises run.NotAllowed (not the configured
        model nor a listed candidate), run.NoPacket (no packet) and ReplayBusy (a replay is running)."""
        ctx = self.ctx
        env = ReplayEnv(cfg=ctx.cfg, store=store_for(ctx.cfg), memory=ctx.memory, gate=ctx.gate)
        packet, cand = prepare(env, draft_id, candidate or None, model or None, timeout_seconds)
        return self.worker.start(draft_id, cand.label, len(packet.get("calls") or []), cand.timeout_seconds,
                                 lambda: run_packet(env, packet, cand, ctx.stopping.is_set))

    def replay(self, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
               timeout_seconds: Optional[float] = None, wait: Optional[float] = None) -> Run:
        """start(), then wait for it at most `wait` seconds (WAIT_SECONDS): the run, done or still running.
        Raises ServiceStopping when the stop comes meanwhile (the replay sends no further call)."""
        run = self.start(draft_id, candidate, model, timeout_seconds)
        deadline = time.monotonic() + (WAIT_SECONDS if wait is None else wait)
        while not run.done.wait(min(STOP_LOOK_SECONDS, max(0.0, deadline - time.monotonic()))):
            if self.ctx.stopping.is_set():
                raise ServiceStopping("the replay was cut short (it sends no further call)")
            if time.monotonic() >= deadline:
                break
        return run

    def run(self, run_id: str) -> Optional[Run]:
        return self.worker.get((run_id or "").strip())

    def runs(self) -> dict:
        """GET /replay: the replay running (or None) and the runs kept, newest first, each in brief."""
        kept = [r.view() for r in self.worker.kept()]
        running = next((r for r in kept if r["running"]), None)
        say = (f"a replay of draft {running['draft_id']} on {running['candidate']} is running" if running
               else "no replay is running")
        return {"running": running, "runs": kept, "say": say + f"; {len(kept)} kept (the newest {KEEP})"}


def unknown_run(run_id: str) -> str:
    return (f"no replay run {run_id!r} here: the newest few are kept, until the service restarts; start a "
            "replay again")


def report(rep: Optional[dict]) -> dict:
    """The last report the quality actor published (never read from Memory here)."""
    if not rep:
        return dict(NOT_YET)
    return {**rep, "message": quality.sentence(rep)}


def brief(rep: Optional[dict]) -> dict:
    """The report's part in sleep_status: the groups without their critique words, and one sentence."""
    rep = report(rep)
    keep = ("model", "voice", "drafts", *quality.COLUMNS, "cut_off_rate", "invented_rate", "critique_words")
    return {"ready": bool(rep.get("ready")), "at": rep.get("at"), "error": rep.get("error"),
            "groups": [{k: g.get(k) for k in keep} for g in rep.get("groups") or []],
            "say": quality.sentence(rep if rep.get("ready") else None)}


def words(result: dict) -> str:
    """A replay's result in one paragraph (the MCP tool's message, the CLI's summary line)."""
    o, c = result["original"]["checks"], result["candidate"]["checks"]
    served = result["candidate"].get("served") or result["candidate"].get("name")

    def one(label: str, k: dict) -> str:
        ov = "n/a" if k.get("overlap_landed") is None else f"{k['overlap_landed']:.2f}"
        return (f"{label}: {k['valid']} operation(s) from {k['calls']} call(s), {k['failed_calls']} failed, "
                f"{k['cut_off']} cut off, {k['invented']} invented number(s)"
                f"{' (' + ', '.join(k['invented_numbers']) + ')' if k['invented_numbers'] else ''}, "
                f"overlap with what landed {ov}, {k['seconds']:.1f} s")
    note = f" Note: {result['timeout_note']}." if result.get("timeout_note") else ""
    return (f"Draft {result['draft_id']} (attempt {result.get('attempt')}) replayed on "
            f"{result['candidate'].get('candidate')} ({served} at {result['candidate']['url']}). "
            + one("original", o) + ". " + one("candidate", c) + ". Nothing was written to Memory." + note)
