"""Copies of the service on one Memory (two state folders, one store): one works on a brief, chain or pull at a time.

A claim is a near-term note whose id comes from what it claims and a generation (0, 1, ...); Memory keeps the
first note posted under an id, so of two copies claiming at once exactly one reads its own name back. A claim
past its `until` (its copy was killed), or from this host by a process that has exited, is taken over with the next
generation. Every note is read through cycle.notes: a malformed one is no claim and no sleep (said once in the log).
"""
from __future__ import annotations

import logging
import os
import socket
import uuid
from typing import Optional

import psutil

from hippocampus.cycle import notes as note_rules
from hippocampus.memory import MemoryError_, gone_ok
from hippocampus.words import another_copy, hhmm

log = logging.getLogger(__name__)

CLAIM_TOPIC = "hippocampus, sleeping"
SLEPT_TOPIC = note_rules.SLEPT_TOPIC
LEASE_MIN_SECONDS = 600.0
BRIEF_REQUEST = "brief_request"      # the claim of the one copy on this Memory that asks for a brief
COPY_KEYS = ("pid", "host", "folder")


class Taken(Exception):
    """Another copy of the service works on it."""

    def __init__(self, other: dict):
        self.other = other
        super().__init__(sentence(other))


sentence = another_copy          # who the other copy is (its pid, host and folder when a note names it), and what


def me(ctx) -> dict:
    host, folder = socket.gethostname(), str(ctx.cfg.state_dir.resolve())
    return {"copy": uuid.uuid5(uuid.NAMESPACE_URL, f"seren-hippocampus:copy:{host}:{folder}").hex,
            "pid": os.getpid(), "host": host, "folder": folder}


def lease_seconds(ctx) -> float:
    """Outlives a model call and three checks: renewed at half, a claim renewed at each check never lapses. Never
    longer than the longest lease the other copies accept (notes.MAX_LEASE_SECONDS)."""
    return min(note_rules.MAX_LEASE_SECONDS, max(LEASE_MIN_SECONDS, 4 * float(ctx.cfg.model.timeout_seconds),
                                                 3 * float(ctx.cfg.sleep.tick_seconds)))


def alive(pid: int) -> bool:
    """Whether a process of this host runs under `pid`."""
    try:
        return psutil.pid_exists(pid)
    except (OSError, ValueError, OverflowError):
        return False


def malformed(ctx, note: dict, why: str) -> None:
    """A note that looks like a copy's but is not one: said in the log once per note."""
    mark = ("malformed", str(note.get("id")))
    if mark not in ctx.others:
        ctx.others.add(mark)
        log.warning("the near-term note %s in Memory looks like seren-hippocampus's but %s, so it is ignored "
                    "(delete it in Memory if nothing of yours wrote it)", str(note.get("id"))[:64], why)


def well_formed(ctx, notes: list, read) -> list:
    """What `read` (notes.read_claim, notes.read_slept) makes of each note of its kind; a malformed one is said
    (malformed) and left out."""
    out = []
    for n in notes:
        got, why = read(n)
        if why:
            malformed(ctx, n, why)
        elif got is not None:
            out.append(got)
    return out


def _claims(ctx, key: str) -> list:
    """The well-formed claim notes on `key`, as {gen, copy, pid, host, folder, what, until, id, created_at}."""
    now, mine = ctx.clock.now(), me(ctx)["copy"]
    return well_formed(ctx, ctx.memory.list_near(), lambda n: note_rules.read_claim(n, key, now, mine))


def _holding(ctx, found: list) -> Optional[dict]:
    """Of the claims found, the newest that holds (its lease runs and its process is not known gone) or is this
    copy's own."""
    mine, now, here = me(ctx), ctx.clock.now(), socket.gethostname()
    return note_rules.newest([c for c in found if c["copy"] == mine["copy"]
                              or not note_rules.stale(c, now, here, alive)])


def _next_gen(found: list) -> int:
    top = note_rules.newest(found)
    return 0 if top is None else (top["gen"] + 1) % note_rules.MAX_GEN


class Claim:
    def __init__(self, ctx, key: str, what: str, note: dict):
        self.ctx, self.key, self.what, self.note = ctx, key, what, note

    def _post(self, gen: int) -> dict:
        ctx, until = self.ctx, self.ctx.clock.now() + lease_seconds(self.ctx)
        fields = {**me(ctx), "claim": self.key, "gen": gen, "what": self.what, "until": until}
        note_id = note_rules.note_id(self.key, gen)
        for _ in range(2):          # a second time only after a squatter (a note that holds nothing) is deleted
            ctx.memory.add_near(f"seren-hippocampus (pid {fields['pid']} on {fields['host']}) {self.what} until "
                                f"{hhmm(until)}; nothing to do about it", topic=CLAIM_TOPIC, expires_at=until,
                                trigger_type="event", trigger_value="seren-hippocampus claim", note_id=note_id,
                                extra=fields)
            kept = ctx.memory.memory(note_id)         # Memory keeps the first note posted under this id
            if not kept:
                raise Taken({"what": "may have taken this over (this copy's claim note is gone from Memory)"})
            meta = {**(kept.get("metadata") or {}), "id": note_id}
            if meta.get("copy") == fields["copy"]:
                return meta
            other, why = note_rules.read_claim({**kept, "id": note_id}, self.key, ctx.clock.now())
            if other is not None and not note_rules.stale(other, ctx.clock.now(), socket.gethostname(), alive):
                raise Taken(other)
            malformed(ctx, kept, why or "it holds no claim any more")
            with gone_ok():
                ctx.memory.delete_near(note_id)
        raise Taken({"what": f"could not claim {self.key}: a note that is no claim keeps its place in Memory"})

    def check(self) -> None:
        """Right before a model call or a post: still ours (Taken if not); renewed when half the lease is gone."""
        top = _holding(self.ctx, _claims(self.ctx, self.key))
        if top is None or top.get("copy") != me(self.ctx)["copy"]:
            raise Taken(top or {"what": "may have taken this over (this copy's claim note is gone from Memory)"})
        self.note = top
        if top["until"] - self.ctx.clock.now() < lease_seconds(self.ctx) / 2:
            self.note = self._post(_next_gen(_claims(self.ctx, self.key)))
            if top["id"] != (self.ctx.state.get("brief_request") or {}).get("intent_id"):   # see riding()
                self.ctx.memory.delete_near(top["id"])

    def release(self) -> None:
        try:
            self.ctx.memory.delete_near(self.note["id"])
        except Exception as exc:  # noqa: BLE001 - it expires on its own at `until`
            log.warning("could not delete the claim note %s (it expires on its own): %s", self.note.get("id"), exc)


class Alone(Claim):
    """The claim of a copy that has seen no other on its Memory (cycle/copies.py): nothing to post or check."""

    def check(self) -> None:
        pass

    def release(self) -> None:
        pass


def alone(ctx) -> bool:
    """No other copy on this Memory, as the last read of near-term found (cycle/copies.py; False before any: a copy
    that knows nothing takes claims)."""
    return bool(getattr(ctx, "copies_alone", False))


def riding(ctx, key: str, what: str, until: float) -> tuple:
    """(note id, fields) that make a note this copy writes anyway (the brief request) its claim on `key` too,
    when it is alone on its Memory and so takes no claim of its own: a copy that starts later reads it as this
    copy's claim. (None, None) when claims are taken the usual way."""
    if not alone(ctx):
        return None, None
    gen = int(ctx.clock.now()) % note_rules.MAX_GEN
    return note_rules.note_id(key, gen), {**me(ctx), "claim": key, "gen": gen, "what": what, "until": until}


def release_mine(ctx, key: str) -> None:
    """Let go of this copy's claim on `key`, if it holds one (a claim left to lapse would show until its lease)."""
    if alone(ctx):
        return
    try:
        top = _holding(ctx, _claims(ctx, key))
    except MemoryError_ as exc:
        log.warning("could not read the claim on %s (it expires on its own): %s", key, exc)
        return
    if top is not None and top.get("copy") == me(ctx)["copy"]:
        Claim(ctx, key, top.get("what") or "", top).release()


def claim(ctx, key: str, what: str) -> Claim:
    """Take the claim on `key` for this copy (one of ours already there is adopted), or Taken. A copy alone on its
    Memory takes it without a note."""
    if alone(ctx):
        return Alone(ctx, key, what, {})
    found = _claims(ctx, key)
    top = _holding(ctx, found)
    c = Claim(ctx, key, what, top or {})
    if top is not None and top.get("copy") == me(ctx)["copy"]:
        return c                               # ours, from before a restart
    try:
        if top is not None:
            raise Taken(top)
        c.note = c._post(_next_gen(found))
    except Taken as exc:
        mark = (key, exc.other.get("copy"), exc.other.get("gen"))
        if mark not in ctx.others:             # said in the log once per copy and thing
            ctx.others.add(mark)
            log.info("%s until %s; this copy leaves it to that one", sentence(exc.other), hhmm(exc.other.get("until")))
        raise
    return c


def stamp(ctx) -> dict:
    """The draft's `extra` keys that name the copy posting it (Memory keeps `extra` flat)."""
    return {f"copy_{k}": v for k, v in me(ctx).items() if k in COPY_KEYS}


def post_slept(ctx, at: float, next_at: float) -> None:
    """Tell the other copies on this Memory that it slept: one near-term note, kept until the next bedtime,
    which their bedtime counts from too (so none asks for a brief again tonight). A copy alone posts none."""
    if alone(ctx):
        return
    try:
        old = [n["id"] for n in ctx.memory.list_near() if (n.get("metadata") or {}).get("topic") == SLEPT_TOPIC]
        fields = {**me(ctx), "slept_at": at}
        ctx.memory.add_near(f"seren-hippocampus (pid {fields['pid']} on {fields['host']}) slept at {hhmm(at)}; "
                            f"the next sleep on this Memory is after {hhmm(next_at)}; nothing to do about it",
                            topic=SLEPT_TOPIC, expires_at=next_at, trigger_type="event",
                            trigger_value="seren-hippocampus slept", extra=fields)
        for note_id in old:
            ctx.memory.delete_near(note_id)
    except MemoryError_ as exc:
        log.warning("could not tell other copies on this Memory that it slept (each counts bedtime from its own "
                    "last sleep until the next one): %s", exc)


def slept_at(ctx, notes: list) -> Optional[float]:
    """The newest sleep on this Memory, from the copies' well-formed "slept" notes."""
    now = ctx.clock.now()
    return max(well_formed(ctx, notes, lambda n: note_rules.read_slept(n, now)), default=None)


def drafted_by(ctx, draft_id: str) -> Optional[dict]:
    """The copy that posted the draft under this id, as a claim names it ({} for a draft without a well-formed
    stamp: notes.stamp_problem, said in the log once), or None: there is no such draft (any status) in Memory; None
    without a look for a copy alone on its Memory (every draft this copy posted is in its state)."""
    if alone(ctx):
        return None
    with gone_ok():
        extra = ctx.memory.draft(draft_id).get("extra")
        stamped = {k: extra.get(f"copy_{k}") for k in COPY_KEYS} if isinstance(extra, dict) else {}
        why = note_rules.stamp_problem(stamped, COPY_KEYS[1:]) if any(v is not None for v in stamped.values()) \
            else "it carries no copy's stamp"
        if why and ("draft", draft_id) not in ctx.others:
            ctx.others.add(("draft", draft_id))
            log.warning("the draft %s in Memory holds the id this copy's sleep would post under, but %s, so it names "
                        "no copy of seren-hippocampus; the brief it answers is left to it (delete the draft in "
                        "Memory if nothing of yours wrote it)", draft_id, why)
        return {} if why else stamped
    return None


def until_words(other: dict) -> str:
    """" until 21:04" for a claim's until, or "" for none."""
    at = note_rules.sane_time(other.get("until"))
    return "" if at is None else f" until {hhmm(at)}"
