"""The night loop: a new day's short-terms, the service left to run the night on its own (bedtime, the
brief request, the ripple, the draft, reviews and redrafts, the landing), faults now and then, and the
invariants checked after every night. The first violation stops the run with its night and evidence.
"""
from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import requests

from tests.soak import faults as faults_mod
from tests.soak import invariants
from tests.soak.world import Options, World


@dataclass
class Result:
    nights: int = 0
    landed: int = 0
    faults: int = 0
    violations: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    seconds: float = 0.0
    residency: dict = field(default_factory=dict)

    @property
    def last_line(self) -> str:
        return f"nights: {self.nights}  landed: {self.landed}  faults: {self.faults}  violations: {len(self.violations)}"


class ForgetWatch:
    """No flagged memory survives two ticks: two checks that ran (and did not fail) after the flag, and it
    must be gone."""

    def __init__(self, world):
        self.w = world
        self.seen: dict = {}          # memory id -> check start times seen after its flag

    def step(self, status: Optional[dict]) -> list:
        out = []
        last = (status or {}).get("last_check") or {}
        for mid, f in self.w.forgets.items():
            if f.get("gone"):
                continue
            if last.get("at") and float(last["at"]) > f["flagged_at"] and last.get("status") != "error":
                self.seen.setdefault(mid, set()).add(last["at"])
            try:
                r = requests.get(self.w.memory.url + f"/memory/{mid}", timeout=5)
            except requests.RequestException:
                continue
            if r.status_code == 404:
                f["gone"] = time.time()
            elif r.status_code == 200 and len(self.seen.get(mid, ())) >= 2:
                out.append(invariants.Violation("a flagged memory survived two ticks",
                                                {"memory": mid, "flagged_at": f["flagged_at"],
                                                 "checks_after": sorted(self.seen[mid])}))
        return out


def _status(world) -> Optional[dict]:
    try:
        return world.service.get("/status")
    except (requests.RequestException, ValueError):
        return None


def _drafts(world, status: str) -> list:
    try:
        r = requests.get(world.memory.url + "/drafts", params={"status": status, "limit": 500}, timeout=5)
        return r.json()["entries"] if r.status_code == 200 else []
    except (requests.RequestException, ValueError, KeyError):
        return []


def _events_since(world, seq0: int) -> list:
    try:
        return [e for e in world.service.events() if int(e.get("seq", 0)) > seq0]
    except (requests.RequestException, ValueError):
        return []


def run_night(world, night: int, rng, result: Result, seq0: int, out: Callable[[str], None]) -> int:
    """One night; returns the last event seq seen."""
    o = world.opts
    t0 = time.time()
    world.new_day(night)
    if night % 5 == 3:
        world.forget_one(night)
    fault = faults_mod.plan(world, rng, night, t0) if o.faults else None
    watch = ForgetWatch(world)
    deadline = time.monotonic() + o.night_deadline_seconds
    landed_night = False
    person: Optional[object] = None
    evs: list = []
    while True:
        if fault is not None:
            fault.step()
        status = _status(world)
        result.violations.extend(watch.step(status))
        if result.violations:
            break
        evs = _events_since(world, seq0)
        pending = _drafts(world, "pending")
        live = pending + _drafts(world, "reviewed")
        slept = any(e["type"] == "sleep_done" and float(e.get("at") or 0) >= t0 for e in evs)   # on today's
        idle = status is not None and not status.get("busy") and not status.get("progress")
        if slept and not live and idle:
            landed_night = True
            break
        oldest = min((float(d.get("created_at") or 0) for d in pending), default=None)
        if oldest is not None and time.time() - oldest > o.review_patience_seconds and \
                (person is None or not person.is_alive()):
            person = world.person_session()      # nobody answered the review: the person's own session
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if fault is not None:
        fault.end()
    if not result.violations and not landed_night:
        result.violations.append(invariants.Violation(
            "the night never landed", {"night": night, "seconds": o.night_deadline_seconds,
                                       "status": {k: (status or {}).get(k) for k in (
                                           "last_check", "brief_wanted", "bedtime_at", "busy", "last_sleep")},
                                       "events": [(e["seq"], e["type"]) for e in evs[-30:]]}))
    if not result.violations:
        result.violations.extend(invariants.check_settled(world, invariants.Reader(world)))
    if fault is not None and fault.fired is not None:
        result.faults += 1
    result.lines.append(night_line(world, night, t0, time.time(), evs, fault))
    out(result.lines[-1])
    return max((int(e["seq"]) for e in evs), default=seq0)


def night_line(world, night: int, t0: float, t1: float, evs: list, fault) -> str:
    briefs = sorted({e.get("brief_id") for e in evs if e["type"] == "sleep_done" or e["type"] == "draft_submitted"
                     if e.get("brief_id")})
    drafts = [e for e in evs if e["type"] in ("draft_submitted", "tend_resubmitted")]
    attempts = max([1 if e["type"] == "draft_submitted" else int(e.get("attempt") or 1) for e in drafts], default=0)
    wakes = [w for w in world.wakeups() if t0 <= float(w.get("t") or 0) < t1]
    reviews = [r for w in wakes if w.get("phase") == "done" for r in w.get("reviews", [])]
    ap, de, ed = (sum(r[k] for r in reviews) for k in ("approved", "denied", "edited"))
    landed = sum(int(e.get("landed") or 0) for e in evs if e["type"] == "chain_closed")
    res = night_residency(world, t0, t1)
    woke = sum(1 for w in wakes if w.get("phase") == "wake" and w.get("by") != "session")
    f = f"{fault.kind} ({fault.detail})" if fault is not None and fault.fired else "-"
    return (f"night {night:>2}  {t1 - t0:5.1f} s  brief {','.join(b[:8] for b in briefs) or '-'}  "
            f"drafts {len(drafts)} (attempts {attempts})  ops approved {ap} denied {de} edited {ed}  "
            f"landed {landed}  model up {res['up']:.1f} s / generating {res['generating']:.1f} s  "
            f"wake-ups {woke}  faults {f}")


def service_totals(world) -> dict:
    """The real model writes no timeline of ours: its residency is the service's own word, /status
    model_lifecycle's up and busy totals (seconds since the service started)."""
    snap = (_status(world) or {}).get("model_lifecycle") or {}
    up = float(snap.get("up_seconds_total") or 0.0)
    return {"up": up, "up_after_start": up, "generating": float(snap.get("busy_seconds_total") or 0.0),
            "processes": sum(1 for e in _events_since(world, 0) if e["type"] == "model_started")}


def night_residency(world, t0: float, t1: float) -> dict:
    if not world.opts.real_model:
        return residency(world.standin_timeline(), t0, t1)
    now, before = service_totals(world), getattr(world, "totals_seen", None) or {}
    world.totals_seen = now
    return {k: now[k] - before.get(k, 0) for k in now}


def residency(timeline: list, t0: float = 0.0, t1: float = float("inf")) -> dict:
    """From the stand-in's own timeline: seconds up (spawn to exit), up after its start-up (ready to exit)
    and generating (answer start to end, or to the kill), each clipped to [t0, t1)."""
    procs: dict = {}
    now = time.time()
    for e in timeline:
        p = procs.setdefault(e["pid"], {"spawn": None, "ready": None, "exit": None, "answers": [], "open": None})
        ev = e.get("ev")
        if ev in ("spawn", "ready", "exit") and p[ev] is None:
            p[ev] = float(e["t"])
        elif ev == "answer_start":
            p["open"] = float(e["t"])
        elif ev == "answer":
            p["answers"].append((float(e["t0"]), float(e["t1"])))
            p["open"] = None

    def clip(a: Optional[float], b: Optional[float]) -> float:
        if a is None:
            return 0.0
        return max(0.0, min(b if b is not None else now, t1) - max(a, t0))

    up = ready_up = gen = 0.0
    for p in procs.values():
        end = p["exit"]
        up += clip(p["spawn"], end)
        ready_up += clip(p["ready"], end)
        for a, b in p["answers"]:
            gen += clip(a, b)
        if p["open"] is not None:
            gen += clip(p["open"], end)
    return {"up": up, "up_after_start": ready_up, "generating": gen, "processes": len(procs)}


def run(opts: Options, root: Optional[Path] = None, out: Callable[[str], None] = print, memory=None) -> Result:
    root = Path(root or tempfile.mkdtemp(prefix="soak-"))
    result = Result()
    started = time.monotonic()
    rng = random.Random(opts.seed * 7 + 1)
    world = World(root, opts, memory=memory)
    out(f"soak: {opts.nights} nights, faults {'on' if opts.faults else 'off'}, ripple {opts.ripple}, "
        f"nudge {opts.nudge}, handover {'on' if opts.handover else 'off'}, "
        f"model {'the real llama-server (tiny model)' if opts.real_model else 'the stand-in'}, world in {root}")
    totals = None
    try:
        world.start()
        seq = 0
        for night in range(1, opts.nights + 1):
            seq = run_night(world, night, rng, result, seq, out)
            result.nights = night
            if result.violations:
                for v in result.violations:
                    out(f"VIOLATION night {night}: {v}")
                break
        try:
            result.landed = sum(1 for d in invariants.Reader(world).mem("/drafts", limit=1000)["entries"]
                                for op in d.get("operations", []) if op.get("status") == "approved")
        except requests.RequestException:
            pass
        if opts.real_model and world.service is not None and world.service.alive():
            totals = service_totals(world)
    finally:
        world.stop()
    result.residency = totals or residency(world.standin_timeline())
    r = result.residency
    if r["generating"] and opts.real_model:
        out(f"model residency (the service's own totals): up {r['up']:.1f} s / generating {r['generating']:.1f} s "
            f"= {r['up'] / r['generating']:.2f} ({r['processes']} server starts)")
    elif r["generating"]:
        out(f"model residency: up {r['up']:.1f} s / generating {r['generating']:.1f} s = {r['up'] / r['generating']:.2f}; "
            f"without the stand-in's start-up {r['up_after_start']:.1f} s / {r['generating']:.1f} s = "
            f"{r['up_after_start'] / r['generating']:.2f} ({r['processes']} server processes)")
    result.seconds = time.monotonic() - started
    out(f"took {result.seconds:.0f} s")
    out(result.last_line)
    return result
