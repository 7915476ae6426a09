"""Replay: a draft's saved prompts sent to a candidate model, exactly as they were sent then, and read the way
a sleep reads them; both sides compared. Nothing is written to Memory: it is only read, for what landed.

A candidate call that fails (refused, timed out, an error status, an unreadable answer) is a result with
its error, never an exception. The configured model's URL goes through the service's model gate (the
managed model is started if it is down); any other URL gets a plain call with the configured max_tokens.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any, Optional

from ..cancellable import CancellableSession
from ..memory import MemoryError_
from ..model import ModelClient
from ..sleep.answer import parse_answer
from ..sleep.prompt import Markers
from . import checks
from .packets import PacketStore

log = logging.getLogger("hippocampus.replay")
ANSWER_CHARS = 4000


class NoPacket(KeyError):
    def __init__(self, draft_id: str):
        super().__init__(draft_id)
        self.draft_id = draft_id

    def __str__(self) -> str:
        return (f"no replay packet for draft '{self.draft_id}' - drafts from before replays, drafts written "
                "mechanically (no model call), or pruned (the newest 300 are kept)")


@dataclass
class ReplayEnv:
    cfg: Any                       # hippocampus.config.Config
    store: PacketStore
    memory: Any = None             # a MemoryClient, for what landed (read only); None: not read
    gate: Any = None               # the service's model gate, for the configured model


@dataclass
class Candidate:
    url: str
    name: str
    max_tokens: int
    timeout_seconds: float
    extra_body: dict
    managed: bool


def candidate(env: ReplayEnv, url: Optional[str] = None, name: Optional[str] = None,
              extra_body: Optional[dict] = None, timeout_seconds: Optional[float] = None) -> Candidate:
    m = env.cfg.model
    url = (url or m.url or "").strip()
    if not url:
        raise ValueError("no model to replay on: give the candidate's URL (no model.url is configured)")
    managed = bool(m.url) and url.rstrip("/") == m.url.strip().rstrip("/")
    return Candidate(url=url, name=name or m.name, max_tokens=m.max_tokens,
                     timeout_seconds=float(timeout_seconds or m.timeout_seconds),
                     extra_body=dict(m.extra_body if extra_body is None else extra_body), managed=managed)


def read_answer(call: dict, text: str, finish_reason: Optional[str], max_tokens: int):
    """The answer read as the sleep (or the redraft) read it: the same markers, the same parser."""
    markers = Markers(fragments={e["marker"]: e.get("id") for e in call.get("entries") or [] if e.get("marker")},
                      cores={c["marker"]: c.get("id") for c in call.get("candidates") or [] if c.get("marker")})
    parsed = parse_answer(text, finish_reason=finish_reason, markers=markers, max_tokens=max_tokens,
                          redraft_of=call.get("redraft_of") if call.get("stage") == "redraft" else None)
    for op in parsed.operations:
        if call.get("stage") == "redraft":
            op.pop("restated_content", None)
        if not op.get("topic"):
            op["topic"] = call.get("topic")
    return parsed


def send(client: ModelClient, gate: Any, call: dict, cand: Candidate) -> dict:
    """One saved prompt to the candidate: what it answered and what was read from it, or the error."""
    out = {"stage": call.get("stage"), "topic": call.get("topic"), "ops": [], "cut_off": False, "error": None,
           "failure": None, "seconds": 0.0, "served": None, "tokens": None, "answer": None,
           "shown": checks.shown_texts(call)}
    started = time.monotonic()
    try:
        if gate is not None and cand.managed:
            gate.ensure()
        try:
            answer = client.chat(call.get("prompt") or "", max_tokens=cand.max_tokens)
        finally:
            if gate is not None and cand.managed:
                gate.release(time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - a failing candidate is a result, never an exception
        out.update(error=str(exc) or type(exc).__name__, seconds=round(time.monotonic() - started, 3))
        return out
    parsed = read_answer(call, answer.text, answer.finish_reason, cand.max_tokens)
    out.update(ops=parsed.operations, cut_off=bool(parsed.cut_off), failure=parsed.failure,
               seconds=round(answer.seconds, 3), served=answer.served, tokens=answer.usage,
               answer=answer.text[:ANSWER_CHARS])
    return out


def landed_texts(env: ReplayEnv, packet: dict) -> tuple:
    """(the texts approved in the draft's chain, this draft's reviewed operations, an error or None)."""
    if env.memory is None:
        return [], [], "Memory was not read"
    try:
        attempts = env.memory.draft_chain(packet["draft_id"])
    except MemoryError_ as exc:
        return [], [], f"what landed could not be read from Memory: {exc}"
    landed, reviewed = [], []
    for d in attempts:
        for op in d.get("operations") or []:
            text = op.get("edited_content") or op.get("content")
            if op.get("status") == "approved" and text and text != "[purged]":
                landed.append(text)
            if d.get("id") == packet["draft_id"]:
                reviewed.append({"index": op.get("index"), "kind": op.get("kind"), "content": op.get("content"),
                                 "status": op.get("status"), "critique": op.get("critique"),
                                 "edited": bool(op.get("edited_content"))})
    return landed, reviewed, None


def _original_calls(packet: dict) -> list:
    out = []
    for call in packet.get("calls") or []:
        out.append({"stage": call.get("stage"), "topic": call.get("topic"), "ops": call.get("ops") or [],
                    "cut_off": bool(call.get("cut_off")), "error": call.get("error"),
                    "failure": call.get("failure"), "seconds": call.get("seconds") or 0.0,
                    "served": call.get("served"), "tokens": call.get("tokens"), "shown": checks.shown_texts(call)})
    return out


def _public(calls: list) -> list:
    return [{k: v for k, v in c.items() if k != "shown"} for c in calls]


def replay(env: ReplayEnv, draft_id: str, url: Optional[str] = None, name: Optional[str] = None,
           extra_body: Optional[dict] = None, timeout_seconds: Optional[float] = None) -> dict:
    """Both sides of one draft. Raises NoPacket when there is no packet for it."""
    packet = env.store.load(draft_id)
    if packet is None:
        raise NoPacket(draft_id)
    cand = candidate(env, url, name, extra_body, timeout_seconds)
    session = CancellableSession()
    cfg = dataclasses.replace(env.cfg.model, url=cand.url, name=cand.name, timeout_seconds=cand.timeout_seconds,
                              extra_body=cand.extra_body, max_tokens=cand.max_tokens)
    client = ModelClient(cfg, session=session)
    try:
        theirs = [send(client, env.gate, call, cand) for call in packet.get("calls") or []]
    finally:
        session.close()
    landed, reviewed, landed_error = landed_texts(env, packet)
    ours = _original_calls(packet)
    served = next((c["served"] for c in theirs if c.get("served")), None)
    return {"draft_id": draft_id, "attempt": packet.get("attempt"), "created_at": packet.get("created_at"),
            "scrubbed": bool(packet.get("purges")), "landed": landed, "landed_error": landed_error,
            "original": {"model": copy.deepcopy(packet.get("stamp") or {}), "calls": _public(ours),
                         "reviewed_ops": reviewed, "checks": checks.side(ours, landed)},
            "candidate": {"url": cand.url, "name": cand.name, "served": served, "managed": cand.managed,
                          "calls": _public(theirs), "checks": checks.side(theirs, landed)}}


TOTAL_KEYS = ("calls", "valid", "failed_calls", "cut_off", "invented", "seconds")


def compare(env: ReplayEnv, last: int, url: Optional[str] = None, name: Optional[str] = None,
            extra_body: Optional[dict] = None, timeout_seconds: Optional[float] = None) -> dict:
    """The last N drafts with a packet replayed on the candidate: each result, and the totals of both sides."""
    results = []
    packets = env.store.newest(max(0, int(last)))
    for packet in sorted(packets, key=lambda p: (p.get("created_at") or 0, p.get("attempt") or 1)):
        results.append(replay(env, packet["draft_id"], url, name, extra_body, timeout_seconds))
    return {"drafts": results, "total": {side: total(results, side) for side in ("original", "candidate")}}


def total(results: list, side: str) -> dict:
    out: dict = {k: 0 for k in TOTAL_KEYS}
    overlaps = []
    for r in results:
        c = r[side]["checks"]
        for k in TOTAL_KEYS:
            out[k] += c.get(k) or 0
        if c.get("overlap_landed") is not None:
            overlaps.append(c["overlap_landed"])
    out["seconds"] = round(out["seconds"], 3)
    out["overlap_landed"] = round(sum(overlaps) / len(overlaps), 3) if overlaps else None
    out["drafts"] = len(results)
    return out
