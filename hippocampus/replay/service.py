"""Replay and the quality report as the running service offers them, through the facade (front.py).

One replay at a time, on the replay actor (actors/replay.py), never a request thread (slow replays would take
every one and leave /health unanswered); one asked for while another runs is refused at once (ReplayBusy), never
queued. The report is kept fresh by QualityWatch, which the quality actor drives: on news at most every
MIN_GAP_SECONDS, and every REFRESH_SECONDS regardless; each refresh also scrubs the purges Memory's tombstones list
from the files here. The runs kept are reached by every scrub (scrub.hold): a run done has its result and its
packet copy scrubbed at once, one still running when its result is set, so no run ever answers with a purged text.
Run ids are random (secrets.token_urlsafe), never guessable from the time.
"""
from __future__ import annotations

import contextlib
import copy
import logging
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Optional

from hippocampus import transport_words
from hippocampus.memory import MemoryError_
from hippocampus.replay import quality
from hippocampus.store import scrub
from hippocampus.store.capture import store_for
from hippocampus.replay.run import ReplayEnv, prepare, run_packet
from hippocampus.words import hhmm

log = logging.getLogger(__name__)
KEEP = 5                            # finished runs kept for reading
RUN_ID_BYTES = 16                   # a run id: 22 url-safe characters, random
WAIT_SECONDS = 20.0                 # the longest a route or the MCP tool waits for a replay before "running"
STOP_LOOK_SECONDS = 0.1             # how often that wait looks for the stop
REFRESH_SECONDS = 60.0
MIN_GAP_SECONDS = 1.0
READ_TIMEOUT = 5.0
DRAFTS_READ = 1000

BOARD_KEY = "quality"
NOT_YET = {"ready": False, "groups": [], "error": None,
           "message": "the quality report is being read from Memory's drafts, in the background"}


@dataclass
class Run:
    id: str
    draft_id: str
    candidate: str
    calls: int
    timeout_seconds: float
    started_at: float = field(default_factory=time.time)
    finished_at: Optional[float] = None
    result: Optional[dict] = None
    error: Optional[str] = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    packet: Optional[dict] = field(default=None, repr=False)     # the copy replayed (scrubbed with the files)
    pending: list = field(default_factory=list, repr=False)      # scrubs owed by the result still being made

    @property
    def where(self) -> str:
        return f"/replay?run={self.id}"

    def view(self) -> dict:
        """The run in brief (GET /replay's list): never its result."""
        return {"run": self.id, "draft_id": self.draft_id, "candidate": self.candidate, "calls": self.calls,
                "running": not self.done.is_set(), "started_at": self.started_at, "finished_at": self.finished_at,
                "failed": self.error is not None, "result": self.where}

    def running_words(self) -> str:
        return (f"the replay of draft {self.draft_id} on {self.candidate} is still running (started "
                f"{hhmm(self.started_at)}, {self.calls} call(s), all within {self.timeout_seconds:g} s)")


class ReplayBusy(Exception):
    def __init__(self, run: Run):
        self.run = run
        super().__init__(f"a replay is already running (draft {run.draft_id} on {run.candidate} since "
                         f"{hhmm(run.started_at)}, run {run.id}); one runs at a time, so nothing was started: "
                         "ask again once it is done")


def _purged_calls(packet: Optional[dict], removal) -> set:
    """The indexes of the calls that showed a purged memory or one of its fragments."""
    return {i for i, call in enumerate((packet or {}).get("calls") or [])
            if any(e.get("id") in removal.fragments for e in call.get("entries") or [])
            or any(c.get("id") in removal.ids for c in call.get("candidates") or [])}


def scrub_result(result: dict, packet: Optional[dict], removal) -> dict:
    """A result without the removal's texts; what the candidate wrote from a purged text goes with it."""
    out = removal.clean(result)
    calls = ((out.get("candidate") or {}).get("calls") or [])
    for i in _purged_calls(packet, removal):
        for op in (calls[i].get("ops") or []) if i < len(calls) else []:
            if isinstance(op, dict):
                op.update(content=scrub.PURGED, restated_content=None)
                op.pop("rationale", None)
    if out != result:
        out["scrubbed"] = True
    return out


def _forget_run(run: Run, removal) -> bool:
    """A finished run's result and packet copy scrubbed; True when anything changed."""
    changed = bool(run.packet is not None and removal.packet(run.packet))
    if run.result is not None:
        result = scrub_result(run.result, run.packet, removal)
        if result != run.result:
            run.result, changed = result, True
    return changed


class Replays:
    """The service's replays over its context (cfg, memory, gate, stopping)."""

    def __init__(self, ctx, start: Optional[Callable] = None) -> None:
        """start(replays, run, env, packet, cand): hands the run to the replay actor; by default (tests) it runs
        on the caller's thread."""
        self.ctx = ctx
        self.start = start or (lambda replays, *job: replays.work(*job))
        self._lock = threading.Lock()
        self._current: Optional[Run] = None
        self._runs: "OrderedDict[str, Run]" = OrderedDict()
        scrub.hold(ctx, self)

    def replay(self, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
               timeout_seconds: Optional[float] = None, wait: Optional[float] = None) -> Run:
        """One draft on a candidate, on the replay actor, waited for at most `wait` seconds (WAIT_SECONDS): the
        run, done or still running. Raises run.NotAllowed, run.NoPacket, ReplayBusy, and ServiceStopping when the
        stop comes meanwhile (the replay sends no further call)."""
        ctx = self.ctx
        env = ReplayEnv(cfg=ctx.cfg, store=store_for(ctx.cfg), memory=ctx.memory, gate=ctx.gate)
        packet, cand = prepare(env, draft_id, candidate or None, model or None, timeout_seconds)
        with self._lock:
            if self._current is not None and not self._current.done.is_set():
                raise ReplayBusy(self._current)
            run = Run(id=secrets.token_urlsafe(RUN_ID_BYTES), draft_id=draft_id, candidate=cand.label,
                      calls=len(packet.get("calls") or []), timeout_seconds=cand.timeout_seconds)
            self._current = run
            self._runs[run.id] = run
            while len(self._runs) > KEEP:
                self._runs.popitem(last=False)
        # read again now the run is kept: a scrub before this point has rewritten the file, one after it reaches
        # the run (forget below), so the prompts sent and the result kept are never older than the last scrub
        packet = env.store.load(draft_id) or packet
        with self._lock:
            run.packet = copy.deepcopy(packet)
        try:
            self.start(self, run, env, packet, cand)
        except Exception as exc:  # noqa: BLE001 - the actor is down: the run ends failed, the next one may start
            run.error = f"the replay was not started: {transport_words.in_words(exc)}"
            self._finish(run, None)
        deadline = time.monotonic() + (WAIT_SECONDS if wait is None else wait)
        while not run.done.wait(min(STOP_LOOK_SECONDS, max(0.0, deadline - time.monotonic()))):
            self.ctx.stopping.check("the replay was cut short (it sends no further call)")
            if time.monotonic() >= deadline:
                break
        return run

    def work(self, run: Run, env: ReplayEnv, packet: dict, cand) -> None:
        """The replay itself (on the replay actor): its result or its failure kept, then done; never raises."""
        result = None
        try:
            result = run_packet(env, packet, cand, self.ctx.stopping.is_set)
        except Exception as exc:  # noqa: BLE001 - the caller reads the failure; the actor never dies of it
            log.exception("the replay of draft %s failed", run.draft_id)
            run.error = f"the replay failed inside the hippocampus: {transport_words.in_words(exc)}"
            if "the service log has the details" not in run.error:
                run.error += "; the service log has the details"
        finally:
            self._finish(run, result)
            log.info("the replay of draft %s on %s ended after %.1f s", run.draft_id, run.candidate,
                     run.finished_at - run.started_at)

    def _finish(self, run: Run, result: Optional[dict]) -> None:
        """The result kept, with every scrub made while it was being made applied first; then done."""
        with self._lock:
            run.finished_at = time.time()
            for removal in run.pending:
                if result is not None:
                    result = scrub_result(result, run.packet, removal)
            run.pending.clear()
            run.result = result
            run.done.set()

    def packets(self) -> list:
        """The packet copies of the runs kept (scrub.hold): sources of the texts to remove."""
        with self._lock:
            return [r.packet for r in self._runs.values() if r.packet is not None]

    def forget(self, removal) -> int:
        """A scrub reaches the runs kept: done ones now, running ones when their result is set."""
        changed = 0
        with self._lock:
            for run in self._runs.values():
                if run.done.is_set():
                    changed += _forget_run(run, removal)
                else:
                    if run.packet is not None:
                        removal.packet(run.packet)
                    run.pending.append(removal)
                    changed += 1
        return changed

    def run(self, run_id: str) -> Optional[Run]:
        with self._lock:
            return self._runs.get((run_id or "").strip())

    def runs(self) -> dict:
        """GET /replay: the replay running (or None) and the runs kept, newest first, each in brief."""
        with self._lock:
            kept = [r.view() for r in reversed(self._runs.values())]
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
    keep = ("model", "voice", "drafts", *quality.COLUMNS, "cut_off_rate", "invented_rate", "critique_words",
            *quality.GUARD, "guard_reasons")
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


class QualityWatch:
    def __init__(self, ctx, clock=time.monotonic):
        self.ctx = ctx
        self.store = store_for(ctx.cfg)
        self.clock = clock
        self.report: Optional[dict] = None
        self._cache: dict = {}          # (file name, mtime_ns) -> summary
        self._last: Optional[float] = None
        self._marker = None

    def _event_marker(self):
        e = next(iter(self.ctx.events.list(limit=1)), {})
        return e.get("seq"), e.get("count"), e.get("last_at")

    def due(self) -> bool:
        if self._last is None:
            return True
        gap = self.clock() - self._last
        return gap >= REFRESH_SECONDS or (gap >= MIN_GAP_SECONDS and self._event_marker() != self._marker)

    def refresh(self) -> dict:
        self._marker = self._event_marker()
        self._last = self.clock()
        try:
            body = self.ctx.memory.request("GET", "/drafts", params={"limit": DRAFTS_READ}, timeout=READ_TIMEOUT)
            drafts = body.get("entries", []) if isinstance(body, dict) else []
        except MemoryError_ as exc:
            self.report = {**(self.report or {"ready": False, "groups": []}), "error": str(exc), "stale": True}
            return self.report
        scrub.forget_tombstones(self.ctx, drafts)
        self.report = quality.report(drafts, self._summaries(), self.ctx.clock.now())
        return self.report

    def _summaries(self) -> list:
        fresh: dict = {}
        for path in self.store.paths():
            try:
                at = (path.name, path.stat().st_mtime_ns)
            except OSError:
                continue
            if at not in self._cache and (packet := self.store.read_path(path)) is not None:
                with contextlib.suppress(*scrub.SHAPE_ERRORS):      # edited out of shape: left out (the scrub says)
                    self._cache[at] = quality.summarize_packet(packet)
            if at in self._cache:
                fresh[at] = self._cache[at]
        self._cache = fresh             # a file gone (or rewritten since) is forgotten
        return list(fresh.values())
