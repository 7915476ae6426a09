"""Replay and the quality report as the running service offers them (the routes and the MCP tool share this).

The runtime is duck-typed (cfg, ctx, board): the domain imports neither actors nor HTTP. A replay runs on
the service's one replay worker (worker.py), never on the caller's thread: the caller waits for it at most
WAIT_SECONDS, then is told where to read the result.
"""
from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Optional

from hippocampus.stopping import ServiceStopping
from hippocampus.replay import quality
from hippocampus.store.capture import store_for
from hippocampus.replay.run import NoPacket, NotAllowed, ReplayEnv, prepare, run_packet
from hippocampus.replay.worker import KEEP, ReplayBusy, ReplayWorker, Run

WAIT_SECONDS = 20.0                 # the longest a route or the MCP tool waits for a replay before "running"
STOP_LOOK_SECONDS = 0.1             # how often that wait looks for the stop
_workers: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_workers_lock = threading.Lock()

BOARD_KEY = "quality"
NOT_YET = {"ready": False, "groups": [], "error": None,
           "message": "the quality report is being read from Memory's drafts, in the background"}


def env_for(rt: Any) -> ReplayEnv:
    return ReplayEnv(cfg=rt.cfg, store=store_for(rt.cfg), memory=rt.ctx.memory, gate=rt.ctx.gate)


def worker_for(rt: Any) -> ReplayWorker:
    """The running service's one replay worker (HTTP and MCP share it)."""
    with _workers_lock:
        worker = _workers.get(rt)
        if worker is None:
            worker = _workers[rt] = ReplayWorker()
        return worker


def start_replay(rt: Any, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
                 timeout_seconds: Optional[float] = None) -> Run:
    """One draft on a candidate, started on the replay worker. Raises run.NotAllowed (not the configured
    model nor a listed candidate), run.NoPacket (no packet) and ReplayBusy (a replay is running)."""
    env = env_for(rt)
    packet, cand = prepare(env, draft_id, candidate or None, model or None, timeout_seconds)
    stopping = getattr(rt.ctx, "stopping", None)
    stopped = stopping.is_set if stopping is not None else None
    return worker_for(rt).start(draft_id, cand.label, len(packet.get("calls") or []), cand.timeout_seconds,
                                lambda: run_packet(env, packet, cand, stopped))


def replay_draft(rt: Any, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
                 timeout_seconds: Optional[float] = None, wait: Optional[float] = None) -> Run:
    """start_replay, then wait for it at most `wait` seconds (WAIT_SECONDS): the run, done or still running.
    Raises ServiceStopping when the stop comes meanwhile (the replay sends no further call)."""
    run = start_replay(rt, draft_id, candidate, model, timeout_seconds)
    deadline = time.monotonic() + (WAIT_SECONDS if wait is None else wait)
    stopping = getattr(rt.ctx, "stopping", None)
    while not run.done.wait(min(STOP_LOOK_SECONDS, max(0.0, deadline - time.monotonic()))):
        if stopping is not None and stopping.is_set():
            raise ServiceStopping("the replay was cut short (it sends no further call)")
        if time.monotonic() >= deadline:
            break
    return run


def read_run(rt: Any, run_id: str) -> Optional[Run]:
    return worker_for(rt).get((run_id or "").strip())


def runs(rt: Any) -> dict:
    """GET /replay: the replay running (or None) and the runs kept, newest first, each in brief."""
    kept = [r.view() for r in worker_for(rt).kept()]
    running = next((r for r in kept if r["running"]), None)
    say = (f"a replay of draft {running['draft_id']} on {running['candidate']} is running" if running
           else "no replay is running")
    return {"running": running, "runs": kept, "say": say + f"; {len(kept)} kept (the newest {KEEP})"}


def unknown_run(run_id: str) -> str:
    return (f"no replay run {run_id!r} here: the newest few are kept, until the service restarts; start a "
            "replay again")


def report(rt: Any) -> dict:
    """The last report the quality actor published (never read from Memory here)."""
    rep = rt.board.get(BOARD_KEY)
    if not rep:
        return dict(NOT_YET)
    return {**rep, "message": quality.sentence(rep)}


def brief(rt: Any) -> dict:
    """The report's part in sleep_status: the groups without their critique words, and one sentence."""
    rep = report(rt)
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


def _tool_answer(run: Run) -> dict:
    """A run as the MCP tools answer it: the result, its failure, or where it stands."""
    if not run.done.is_set():
        return {"ok": True, "running": True, "run": run.id,
                "message": f"{run.running_words()}; call replay_result with run {run.id!r} to read it when it "
                           "is done."}
    if run.error:
        return {"ok": False, "run": run.id, "message": run.error}
    return {"ok": True, "run": run.id, **run.result, "message": words(run.result)}


def replay_tool(rt: Any, draft_id: str, candidate: str = "", model: str = "") -> dict:
    """The MCP tool replay_draft: a result with `ok` and a plain-words `message`, never an exception. It takes
    a listed candidate's name, never a URL."""
    if not (draft_id or "").strip():
        return {"ok": False, "message": "give the draft id to replay (list_drafts on Memory shows them)"}
    try:
        run = replay_draft(rt, draft_id.strip(), candidate or None, model or None)
    except NoPacket as exc:
        return {"ok": False, "found": False, "message": str(exc)}
    except ReplayBusy as exc:
        return {"ok": False, "busy": True, "run": exc.run.id,
                "message": f"{exc} (replay_result with run {exc.run.id!r} reads it)."}
    except NotAllowed as exc:
        return {"ok": False, "refused": True, "message": str(exc)}
    return _tool_answer(run)


def result_tool(rt: Any, run: str) -> dict:
    """The MCP tool replay_result: a replay that outlived replay_draft's wait, read by its run id."""
    found = read_run(rt, run)
    if found is None:
        return {"ok": False, "found": False, "message": unknown_run(run)}
    return _tool_answer(found)
