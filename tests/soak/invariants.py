"""The soak's invariants, checked black-box after every night: from Memory's own routes, the service's
/events and /status, the files in its state folder, the process table, and what the world itself wrote
(the short-terms it made, the forgets it flagged, the main model's wake-ups).

A check that can be false for a moment (a cull between closing its drafts and its chain_closed event,
the model stopping on the tick after the chain closed) is polled until it holds or a deadline passes;
only then is it a violation.
"""
from __future__ import annotations

import collections
import json
import re
import time
from dataclasses import dataclass, field
from typing import Optional

import requests

from tests.soak.procs import standin_pids

REVIEW_TOPIC = "hippocampus, review"
BRIEF_TOPIC = "hippocampus, brief"


@dataclass
class Violation:
    invariant: str
    evidence: dict

    def __str__(self) -> str:
        return f"{self.invariant}: {json.dumps(self.evidence, default=str)[:1500]}"


@dataclass
class Snapshot:
    drafts: list
    briefs: list
    near: list
    long: dict                    # id -> row (cores and satellites)
    tombstones: set
    rows: dict                    # world short id -> its row wherever it is (tier), or None
    events: list
    status: dict
    history: list                 # the state file's history rows
    files: dict                   # name -> text, every file of ours
    model_pids: list
    busy: bool
    wakeups: list = field(default_factory=list)


def cluster(d: dict) -> str:
    return d.get("cluster_id") or d["id"]


class Reader:
    """Reads a snapshot: Memory first, then the service (so an event is never older than what it names)."""

    def __init__(self, world):
        self.w = world
        self.http = requests.Session()
        self._pruned: dict = {}       # rows that reached the archive do not come back: read once

    def mem(self, path: str, **params):
        r = self.http.get(self.w.memory.url + path, params=params or None, timeout=30)
        r.raise_for_status()
        return r.json()

    def lookup(self, sid: str) -> Optional[dict]:
        if sid in self._pruned:
            return self._pruned[sid]
        r = self.http.get(self.w.memory.url + f"/memory/{sid}", timeout=30)
        if r.status_code == 404:
            return None
        r.raise_for_status()
        row = r.json()
        if row.get("tier") == "pruned" and not self.w.forgets:
            self._pruned[sid] = row
        return row

    def snapshot(self) -> Snapshot:
        svc = self.w.service
        status0 = svc.get("/status")
        drafts = self.mem("/drafts", limit=1000)["entries"]
        briefs = self.mem("/brief", include_consumed="true", limit=1000)["entries"]
        near = self.mem("/near", include_completed="true")["entries"]
        long_rows = {r["id"]: r for r in self.mem("/long", include_satellites="true", include_superseded="true")["entries"]}
        tomb = {t.get("id") for t in self.mem("/tombstones").get("entries", [])}
        in_short = {r["id"]: dict(r, tier="short") for r in self.mem("/short", limit=5000)["entries"]}
        rows = {sid: in_short.get(sid) or self.lookup(sid) for sid in self.w.shorts}
        events = svc.events()
        status = svc.get("/status")
        files = {}
        for p in sorted(svc.state_dir.iterdir()):
            if p.is_file():
                files[p.name] = p.read_text(encoding="utf-8", errors="replace")
        files["service.log"] = svc.log.read_text(encoding="utf-8", errors="replace")
        try:
            history = json.loads(files.get("state.json") or "{}").get("history") or []
        except ValueError:
            history = []
        pids = standin_pids(self.w.model_path)
        busy = any(s.get("busy") or s.get("progress") for s in (status0, status))
        return Snapshot(drafts, briefs, near, long_rows, tomb, rows, events, status, history, files, pids,
                        busy, self.w.wakeups())


# ---------------------------------------------------------------- the checks

def _chains(snap: Snapshot) -> dict:
    out: dict = collections.defaultdict(list)
    for d in snap.drafts:
        out[cluster(d)].append(d)
    for attempts in out.values():
        attempts.sort(key=lambda d: int(d.get("attempt") or 1))
    return out


def _closed(attempts: list) -> bool:
    return all(d.get("status") == "closed" for d in attempts)


def _events(snap: Snapshot, type_: str) -> list:
    return [e for e in snap.events if e.get("type") == type_]


def briefs(snap: Snapshot, world) -> list:
    """A brief opens at most one chain and is consumed exactly once, when its chain lands; a brief whose
    sleep failed stays open and is named."""
    out = []
    chains = _chains(snap)
    by_brief: dict = collections.defaultdict(set)
    for d in snap.drafts:
        if d.get("brief_id_used"):
            by_brief[d["brief_id_used"]].add(cluster(d))
    consumes = collections.Counter(e.get("brief_id") for e in _events(snap, "brief_consumed"))
    ids = set()
    for b in snap.briefs:
        bid, meta = b["id"], b.get("metadata") or {}
        ids.add(bid)
        cs = by_brief.get(bid, set())
        if len(cs) > 1:
            out.append(Violation("a brief opened more than one chain", {"brief": bid, "chains": sorted(cs)}))
        consumed = bool(meta.get("consumed_at"))
        open_chains = [c for c in cs if not _closed(chains[c])]
        if consumed and open_chains:
            out.append(Violation("a brief was consumed while its chain is open",
                                 {"brief": bid, "consumed_at": meta.get("consumed_at"), "open": open_chains}))
        landed = [c for c in cs if _closed(chains[c])]
        if landed and not consumed:
            out.append(Violation("a chain landed but its brief is still open", {"brief": bid, "chains": landed}))
        if consumes[bid] > 1:
            out.append(Violation("a brief was consumed more than once",
                                 {"brief": bid, "events": [e for e in _events(snap, "brief_consumed")
                                                           if e.get("brief_id") == bid]}))
        if consumed and consumes[bid] == 0:
            out.append(Violation("a brief was consumed with no brief_consumed event", {"brief": bid}))
    for e in _events(snap, "sleep_failed"):
        if not e.get("brief_id"):
            out.append(Violation("a failed sleep does not name its brief", {"event": e}))
        elif e["brief_id"] not in ids:
            out.append(Violation("the brief of a failed sleep is gone from Memory", {"event": e}))
    return out


def drafts(snap: Snapshot, world) -> list:
    """Never two drafts for one attempt of one chain; every denied operation is redrafted or its chain ends
    at max_attempts; nothing reviewed is dropped."""
    out = []
    steps = collections.Counter((cluster(d), int(d.get("attempt") or 1)) for d in snap.drafts)
    for (c, a), n in steps.items():
        if n > 1:
            out.append(Violation("two drafts for one attempt of one chain",
                                 {"chain": c, "attempt": a, "drafts": [d["id"] for d in snap.drafts
                                                                       if cluster(d) == c]}))
    ended = {e.get("cluster_id") for e in _events(snap, "chain_ended")}
    for c, attempts in _chains(snap).items():
        for k, d in enumerate(attempts):
            denied = [op for op in d.get("operations", []) if op.get("status") == "denied"]
            if not denied:
                continue
            nxt = attempts[k + 1] if k + 1 < len(attempts) else None
            if nxt is not None:
                again = {op.get("redraft_of") for op in nxt.get("operations", [])}
                # or withdrawn by the redraft, said on the next attempt, where the reviewer said it cannot land, or
                # (spec: withdraw for a duplicate or what is already covered) as the twin of another redraft whose
                # operation cites its fragments, or as the restatement of a core Memory holds (the draft names it)
                gone = set((nxt.get("extra") or {}).get("withdrawn_ops") or [])
                why = (nxt.get("extra") or {}).get("withdrawn_why") or {}
                cited = {sid for op in nxt.get("operations", []) for sid in op.get("source_short_ids") or []}
                held = set(snap.long)

                def covered(op) -> bool:
                    named = re.findall(r"restates_core: core (\w+)", str(why.get(str(op["index"])) or ""))
                    return ("cannot land" in (op.get("critique") or "") or set(op.get("source_short_ids") or ()) <= cited
                            or any(any(i.startswith(n) for i in held) for n in named))
                missing = [op["index"] for op in denied if op["index"] not in again
                           and not (op["index"] in gone and covered(op))]
                if missing:
                    out.append(Violation("a denied operation was dropped: not in the next attempt",
                                         {"chain": c, "draft": d["id"], "attempt": d.get("attempt"),
                                          "denied_ops": missing, "next": nxt["id"],
                                          "next_redraft_of": sorted(x for x in again if x is not None)}))
            elif d.get("status") == "closed":
                # the one way a chain ends early (spec 4.2 step 6): every denied op withdrawn by the redraft
                # (the reviewer said it cannot land: its core was forgotten), said once as chain_ended
                withdrawn = any(e.get("cluster_id") == c and e.get("why") == "withdrawn"
                                for e in _events(snap, "chain_ended"))
                if not d.get("terminal") and not withdrawn:
                    out.append(Violation("a chain closed with denials on an attempt that was not the last",
                                         {"chain": c, "draft": d["id"], "attempt": d.get("attempt"),
                                          "chain_ended": [e for e in _events(snap, "chain_ended")
                                                          if e.get("cluster_id") == c]}))
                elif c not in ended:
                    out.append(Violation("a chain ended denied at max_attempts with no chain_ended event",
                                         {"chain": c, "draft": d["id"]}))
        for d in attempts:
            for op in d.get("operations", []):
                if op.get("status") != "approved":
                    continue
                lid = op.get("long_term_id")
                if not lid or (lid not in snap.long and lid not in snap.tombstones):
                    out.append(Violation("an approved operation is not in long-term",
                                         {"draft": d["id"], "op": op.get("index"), "long_term_id": lid}))
    return out


def shorts(snap: Snapshot, world) -> list:
    """A short-term is in exactly one place: held by one pending draft, free, landed, or aged out after its
    chance (never on a catch-up). One-offs and the noise topic never become cores."""
    out = []
    approved: dict = {}
    held: dict = collections.defaultdict(set)
    for d in snap.drafts:
        for op in d.get("operations", []):
            for sid in op.get("source_short_ids") or []:
                if op.get("status") == "approved":
                    approved.setdefault(sid, (d["id"], op.get("long_term_id")))
                elif d.get("status") == "pending" and op.get("status", "pending") == "pending":
                    held[sid].add(d["id"])
    purged = snap.tombstones | {i for f in world.forgets.values() for i in f["ids"]}
    sleeps = [h for h in snap.history if h.get("kind") == "sleep" and not h.get("error")]
    for sid, info in world.shorts.items():
        row = snap.rows.get(sid)
        tier = (row or {}).get("tier")
        where = {"short": sid, "kind": info["kind"], "topic": info["topic"], "night": info["night"]}
        if info["kind"] in ("oneoff", "noise") and sid in approved:
            out.append(Violation(f"a {'one-off' if info['kind'] == 'oneoff' else 'noise'} short-term became "
                                 "long-term", {**where, "draft": approved[sid][0]}))
        if tier == "short":
            if sid in approved:
                out.append(Violation("a short-term that landed is still in short-term",
                                     {**where, "draft": approved[sid][0]}))
            if len(held[sid]) > 1:
                out.append(Violation("a short-term is held by two pending drafts",
                                     {**where, "drafts": sorted(held[sid])}))
        elif tier == "pruned":
            meta = row.get("metadata") or {}
            if sid in approved:
                continue
            if not meta.get("aged_out"):
                out.append(Violation("a short-term left short-term without landing or ageing out",
                                     {**where, "metadata": meta}))
                continue
            pruned_at = float(meta.get("pruned_at") or 0)
            chance = [h for h in sleeps if info["created"] <= float(h.get("started_at") or 0) <= pruned_at]
            kept_from = min((float(h.get("started_at") or 0) for h in sleeps), default=0.0)
            if not chance and kept_from <= info["created"]:      # the history still covers its life
                out.append(Violation("a short-term aged out before any sleep saw it",
                                     {**where, "created": info["created"], "pruned_at": pruned_at}))
            tidy = _tidy_at(snap, pruned_at)
            if tidy is not None and tidy.get("catch_up"):
                out.append(Violation("a short-term aged out on a catch-up", {**where, "tidy": tidy}))
        elif row is None:
            if not (sid in approved and approved[sid][1] in purged):
                out.append(Violation("a short-term vanished (not landed into anything purged)",
                                     {**where, "landed": approved.get(sid)}))
        else:
            out.append(Violation("a short-term is somewhere unexpected", {**where, "tier": tier}))
    return out


def _tidy_at(snap: Snapshot, t: float) -> Optional[dict]:
    """The tidy that aged out at time t: the first chain close or draftless sleep to finish after it,
    with whether the sleep behind it was a catch-up."""
    opened = {e.get("draft_id"): e for e in _events(snap, "sleep_done") if e.get("draft_id")}
    first_of = {}
    for d in snap.drafts:
        if int(d.get("attempt") or 1) == 1:
            first_of[cluster(d)] = d["id"]
    for e in snap.events:
        if float(e.get("at") or 0) < t - 0.001:
            continue
        if e.get("type") == "chain_closed":
            sd = opened.get(first_of.get(e.get("cluster_id")))
            return {"event": e.get("seq"), "type": "chain_closed", "chain": e.get("cluster_id"),
                    "catch_up": bool(sd and sd.get("catch_up"))}
        if e.get("type") == "sleep_done" and not e.get("draft_id"):
            return {"event": e.get("seq"), "type": "sleep_done", "catch_up": bool(e.get("catch_up"))}
    return None


def notes(snap: Snapshot, world) -> list:
    """No review note is left in near-term after its chain closes (and one note per chain)."""
    out = []
    chains = _chains(snap)
    by_draft = {d["id"]: cluster(d) for d in snap.drafts}
    per_chain: dict = collections.defaultdict(list)
    for n in snap.near:
        topic = (n.get("metadata") or {}).get("topic")
        if topic != REVIEW_TOPIC:
            continue
        named = [did for did in by_draft if did in (n.get("content") or "")]
        c = by_draft.get(named[0]) if named else None
        if c is None or _closed(chains[c]):
            out.append(Violation("a review note is left after its chain closed",
                                 {"note": n["id"], "chain": c, "text": (n.get("content") or "")[:160]}))
        else:
            per_chain[c].append(n["id"])
    for c, ids in per_chain.items():
        if len(ids) > 1:
            out.append(Violation("two review notes for one chain", {"chain": c, "notes": ids}))
    asks = [n["id"] for n in snap.near if (n.get("metadata") or {}).get("topic") == BRIEF_TOPIC
            and not (n.get("metadata") or {}).get("completed")]
    if len(asks) > 1:
        out.append(Violation("two brief-request notes at once", {"notes": asks}))
    return out


def model(snap: Snapshot, world) -> list:
    """No model server process is left when no chain is open; with handover, none is up while the main model
    is being woken."""
    out = []
    live = [d["id"] for d in snap.drafts if d.get("status") in ("pending", "reviewed")]
    if not live and not snap.busy and snap.model_pids:
        out.append(Violation("a model server is up with no chain open",
                             {"pids": snap.model_pids, "lifecycle": snap.status.get("model_lifecycle")}))
    if world.opts.handover:
        for w in snap.wakeups:
            if w.get("phase") == "wake" and w.get("by") in ("script", "endpoint") and w.get("model_pids"):
                out.append(Violation("the main model was woken while the small model was up (handover on)",
                                     {"wake": w}))
    return out


def purges(snap: Snapshot, world) -> list:
    """No purged content in any event or file of ours (the forget watcher checks 'two ticks' as it goes)."""
    out = []
    everything = {"GET /events": json.dumps(snap.events), **snap.files}
    for mid, f in world.forgets.items():
        if mid in snap.long:
            continue                  # not purged yet: the watcher decides whether that is too late
        for text in f["texts"]:
            for name, body in everything.items():
                if text and text in body:
                    out.append(Violation("purged content is still in a file or event of ours",
                                         {"memory": mid, "where": name, "text": text[:120]}))
    return out


def events(snap: Snapshot, world) -> list:
    """Every draft has its draft_submitted (a redraft its tend_resubmitted); every closed chain its one
    chain_closed."""
    out = []
    submitted = {e.get("draft_id") for e in _events(snap, "draft_submitted")}
    resubmitted = {e.get("draft_id") for e in _events(snap, "tend_resubmitted")}
    for d in snap.drafts:
        first = int(d.get("attempt") or 1) == 1
        if d["id"] not in (submitted if first else resubmitted):
            out.append(Violation(f"a draft has no {'draft_submitted' if first else 'tend_resubmitted'} event",
                                 {"draft": d["id"], "attempt": d.get("attempt"), "status": d.get("status")}))
    closes = collections.Counter(e.get("cluster_id") for e in _events(snap, "chain_closed"))
    for c, attempts in _chains(snap).items():
        if _closed(attempts) and closes[c] == 0:
            out.append(Violation("a closed chain has no chain_closed event", {"chain": c}))
        if closes[c] > 1:
            out.append(Violation("a chain was closed twice", {"chain": c, "chain_closed": closes[c]}))
    return out


CHECKS = [briefs, drafts, shorts, notes, model, purges, events]


def check(world, reader: Reader) -> list:
    snap = reader.snapshot()
    out = []
    for fn in CHECKS:
        out.extend(fn(snap, world))
    return out


def check_settled(world, reader: Reader, deadline_seconds: float = 10.0) -> list:
    """Every check, polled until all hold or the deadline passes (then what still fails)."""
    deadline = time.monotonic() + deadline_seconds
    while True:
        found = check(world, reader)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.25)
