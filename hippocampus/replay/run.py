"""Replay: a draft's saved prompts sent again, exactly as then, to the configured model or a listed candidate,
read the way a sleep reads them, both sides compared. Memory is only read; an answer's text is never kept. A
failed call (a redirect too, never followed) is a result in the candidate's terms, never an exception. Nothing is
sent to SerenMemory's own address: the URL is resolved before each call, and each connection's own peer address
is checked once connected, before a byte goes (config/reach.py), so a DNS change after the load cannot sneak by.
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import re
import time
from typing import Any, Callable, Optional

import requests

from hippocampus.memory import MemoryError_
from hippocampus import outbound
from hippocampus.outbound import Deadline
from hippocampus.model.client import ModelClient
from hippocampus.drafting.answer import parse_answer
from hippocampus.drafting import rechoose
from hippocampus.drafting.extractive import parse_choices
from hippocampus.drafting.prompt import Markers
from hippocampus.replay import checks
from hippocampus import transport_words
from hippocampus.config import reach, redact, replay_endpoints
from hippocampus.config.replay_endpoints import CONFIGURED, TIMEOUT_CAP, Candidate, NotAllowed, choose  # noqa: F401
from hippocampus.store.packets import PacketStore

log = logging.getLogger(__name__)
SERVED_CHARS = 120                  # the served model name is the candidate's own words: kept short
TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
STOPPED = "the service is stopping: this call was not sent"
TOTAL_KEYS = ("calls", "valid", "failed_calls", "cut_off", "invented", "seconds")


class Redirected(requests.RequestException):
    """A redirect, never followed (it could lead anywhere, SerenMemory included); its message is the sentence."""
    plain = True


class ReachesMemory(requests.RequestException):
    """The call would reach SerenMemory; its message is the sentence."""
    plain = True


def _memory_words(memory_url: str) -> str:
    return (f"this address is SerenMemory's own ({redact.url(memory_url)} resolves to the same place): replay never "
            "sends to Memory, so nothing was sent; point the candidate's url at a model")


class ReplaySession(outbound.CancellableSession):
    """No redirects followed; nothing sent to Memory (memory_url), checked by address before the call and at
    connect."""

    def __init__(self, memory_url: Optional[str] = None) -> None:
        self._memory = reach.Memory(memory_url) if memory_url else None
        self._refused: Optional[ReachesMemory] = None
        super().__init__(vet=self._vet if self._memory is not None else None)

    def _vet(self, sock) -> None:
        peer = sock.getpeername()
        if self._memory.is_memory(peer[0], peer[1]):
            self._refused = ReachesMemory(_memory_words(self._memory.url))
            log.warning("a replay call connected to SerenMemory's own address %s:%s; closed before anything was "
                        "sent", peer[0], peer[1])
            raise self._refused

    def request(self, method, url, *args, **kwargs):
        kwargs["allow_redirects"] = False
        if self._memory is not None and replay_endpoints.reaches_memory(url, self._memory.url):
            raise ReachesMemory(_memory_words(self._memory.url))
        self._refused = None
        try:
            resp = super().request(method, url, *args, **kwargs)
        except Exception:
            if self._refused is not None:       # refused at connect: that is the reason, however urllib3 wraps it
                raise self._refused from None
            raise
        if 300 <= resp.status_code < 400:
            resp.close()
            raise Redirected(f"the candidate answered HTTP {resp.status_code} (a redirect); replay follows no "
                             "redirects, so nothing was sent on")
        return resp


class NoPacket(LookupError):
    """No replay packet for the draft; its message is the sentence."""


@dataclasses.dataclass
class ReplayEnv:
    cfg: Any                       # hippocampus.config.Config
    store: PacketStore
    memory: Any = None             # a MemoryClient, for what landed (read only); None: not read
    gate: Any = None               # the service's model gate, for the configured model


def _tokens(usage: Any) -> Optional[dict]:
    if not isinstance(usage, dict):
        return None
    return {k: usage[k] for k in TOKEN_KEYS if isinstance(usage.get(k), int) and not isinstance(usage[k], bool)}


def read_answer(call: dict, text: str, finish_reason: Optional[str], max_tokens: int, constrained: bool = False):
    """The answer read as the sleep (or the redraft) read it, against the markers it was shown."""
    redraft = call.get("stage") == "redraft"
    shown = {e["marker"]: e for e in call.get("entries") or [] if e.get("marker")}
    cores = {c["marker"]: c for c in call.get("candidates") or [] if c.get("marker")}
    marked = {"fragments": {m: e.get("id") for m, e in shown.items()}, "entries": shown,
              "cores": {m: c.get("id") for m, c in cores.items()}}
    core_texts = {m: c.get("content") or "" for m, c in cores.items()}
    read = {"finish_reason": finish_reason, "max_tokens": max_tokens, "constrained": constrained}
    if call.get("write") != "extractive":
        redraft_of = call.get("redraft_of") if redraft else None
        parsed = parse_answer(text, markers=Markers(**marked), redraft_of=redraft_of, **read)
    elif redraft:                       # a redraft of choices (model.write): the critique's wordings too
        quotes = enumerate(rechoose.wordings(call.get("critique")), 1)
        markers = rechoose.RedraftMarkers(**marked, quotes={f"q{i}": w for i, w in quotes}, said=call.get("said"))
        parsed = rechoose.parse(text, markers=markers, redraft_of=call.get("redraft_of"), core_texts=core_texts, **read)
    else:                               # an answer of choices (model.write)
        parsed = parse_choices(text, markers=Markers(**marked), core_texts=core_texts, **read)
    for op in parsed.operations:
        if redraft:
            op.pop("restated_content", None)
        if not op.get("topic"):
            op["topic"] = call.get("topic")
    return parsed


def unsent(call: dict) -> dict:
    return {"stage": call.get("stage"), "topic": call.get("topic"), "ops": [], "cut_off": False, "error": None,
            "failure": None, "seconds": 0.0, "served": None, "tokens": None, "finish_reason": None,
            "answer_chars": None, "shown": checks.shown_texts(call)}


def names(cfg: Any, cand: Candidate, asked: Optional[float] = None) -> dict:
    """How a failure names the candidate and the settings that fix it (the timeout named is the one that applied)."""
    listed = cand.label != CONFIGURED
    own = replay_endpoints.listed(cfg).get(cand.label) if listed else None
    configured = min(TIMEOUT_CAP, float((own.timeout_seconds if own else None) or cfg.model.timeout_seconds))
    if cand.timeout_asked is not None or asked or cand.timeout_seconds != configured:   # the request gave it
        setting = f"the timeout_seconds this replay asked for{', capped' if cand.timeout_asked else ''}"
    elif own is not None and own.timeout_seconds is not None:
        setting = f"replay.candidates.{cand.label}.timeout_seconds"
    else:
        setting = "model.timeout_seconds"
    return {"who": f"candidate '{cand.label}'" if listed else "the model",
            "url_setting": f"replay.candidates.{cand.label}.url" if listed else "model.url",
            "deadline": f"the replay's one deadline of {cand.timeout_seconds:g} s ({setting})"}


def send(client: ModelClient, gate: Any, call: dict, cand: Candidate, deadline: Deadline) -> dict:
    out = unsent(call)
    started = time.monotonic()
    gated = gate is not None and cand.managed
    try:
        if gated:
            gate.ensure()
        try:
            if deadline.left() <= 0:
                return {**out, "error": f"not sent: {deadline.words} had passed"}
            answer = client.chat(call.get("prompt") or "", max_tokens=cand.max_tokens,    # the same request,
                                 response_format=call.get("response_format"), deadline=deadline)  # the run's deadline
        finally:
            if gated:
                gate.release(time.monotonic() - started)
    except Exception as exc:  # noqa: BLE001 - a failing candidate is a result, never an exception
        # what the candidate said is not echoed: `the model answered HTTP 500: '...'` is cut at the quote
        error = re.split(r": ['\"]", str(exc) or "the call failed", maxsplit=1)[0]
        if deadline.cut or getattr(exc, "row", "") == transport_words.TIMED_OUT:
            error = f"{client.who} at {redact.url(client.url)} did not answer within {deadline.words}"
        return {**out, "error": error, "seconds": round(time.monotonic() - started, 3)}
    parsed = read_answer(call, answer.text, answer.finish_reason, cand.max_tokens,
                         constrained=answer.response_format is not None)
    out.update(ops=parsed.operations, cut_off=bool(parsed.cut_off), failure=parsed.failure,
               seconds=round(answer.seconds, 3), served=(answer.served or "")[:SERVED_CHARS] or None,
               tokens=_tokens(answer.usage), finish_reason=str(answer.finish_reason)[:20],
               answer_chars=len(answer.text))
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
    return [{"stage": c.get("stage"), "topic": c.get("topic"), "ops": c.get("ops") or [],
             "cut_off": bool(c.get("cut_off")), "error": c.get("error"), "failure": c.get("failure"),
             "seconds": c.get("seconds") or 0.0, "served": c.get("served"), "tokens": c.get("tokens"),
             "shown": checks.shown_texts(c)} for c in packet.get("calls") or []]


def _public(calls: list) -> list:
    return [{k: v for k, v in c.items() if k != "shown"} for c in calls]


def prepare(env: ReplayEnv, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
            timeout_seconds: Optional[float] = None) -> tuple:
    """(the draft's packet, the candidate it goes to), before anything is sent; raises NotAllowed, NoPacket."""
    cand = choose(env.cfg, candidate, model, timeout_seconds)
    packet = env.store.load(draft_id)
    if packet is None:
        raise NoPacket(f"no replay packet for draft '{draft_id}' - drafts from before replays, drafts written "
                       "mechanically (no model call), or pruned (the newest 300 are kept)")
    return packet, cand


def run_packet(env: ReplayEnv, packet: dict, cand: Candidate, stopped: Optional[Callable[[], bool]] = None,
               asked: Optional[float] = None) -> dict:
    """Both sides of one draft; `asked`: the timeout the request gave, to name it when it passes."""
    draft_id = packet["draft_id"]
    session = ReplaySession(env.cfg.memory.url)
    cfg = dataclasses.replace(env.cfg.model, url=cand.url, name=cand.name, timeout_seconds=cand.timeout_seconds,
                              extra_body=cand.extra_body, max_tokens=cand.max_tokens,
                              # the packet's schema is sent as it was then, even with model.structured off now
                              structured="on" if env.cfg.model.structured == "on" else "auto")
    said = names(env.cfg, cand, asked)
    client = ModelClient(cfg, session=session, who=said["who"], url_setting=said["url_setting"],
                         timeout_setting=said["deadline"])
    log.info("replaying draft %s on %s (%s at %s, %d call(s), all within %g s)", draft_id, cand.label, cand.name,
             redact.url(cand.url), len(packet.get("calls") or []), cand.timeout_seconds)
    theirs = []
    deadline = Deadline(cand.timeout_seconds, said["deadline"])    # one for the run: its calls' sockets cut on time
    with session:
        for call in packet.get("calls") or []:
            if stopped is not None and stopped():
                theirs.append({**unsent(call), "error": STOPPED})
            else:
                theirs.append(send(client, env.gate, call, cand, deadline))
    landed, reviewed, landed_error = landed_texts(env, packet)
    ours = _original_calls(packet)
    served = next((c["served"] for c in theirs if c.get("served")), None)
    return {"draft_id": draft_id, "attempt": packet.get("attempt"), "created_at": packet.get("created_at"),
            "scrubbed": bool(packet.get("purges")), "landed": landed, "landed_error": landed_error,
            "original": {"model": copy.deepcopy(packet.get("stamp") or {}), "calls": _public(ours),
                         "reviewed_ops": reviewed, "checks": checks.side(ours, landed)},
            "candidate": {"candidate": cand.label, "url": cand.url, "name": cand.name, "served": served,
                          "managed": cand.managed, "timeout_seconds": cand.timeout_seconds, "timeout_cap": TIMEOUT_CAP,
                          "deadline": said["deadline"],
                          "calls": _public(theirs), "checks": checks.side(theirs, landed)},
            "timeout_note": cand.timeout_note}


def replay(env: ReplayEnv, draft_id: str, candidate: Optional[str] = None, model: Optional[str] = None,
           timeout_seconds: Optional[float] = None) -> dict:
    """Both sides of one draft, here and now; raises NotAllowed, NoPacket."""
    return run_packet(env, *prepare(env, draft_id, candidate, model, timeout_seconds), asked=timeout_seconds)


def compare(env: ReplayEnv, last: int, candidate: Optional[str] = None, model: Optional[str] = None,
            timeout_seconds: Optional[float] = None) -> dict:
    """The last N drafts with a packet replayed on the candidate, and both sides' totals; NotAllowed first."""
    cand = choose(env.cfg, candidate, model, timeout_seconds)
    packets = env.store.newest(max(0, int(last)))
    results = [run_packet(env, packet, cand, asked=timeout_seconds)
               for packet in sorted(packets, key=lambda p: (p.get("created_at") or 0, p.get("attempt") or 1))]
    return {"drafts": results, "total": {side: total(results, side) for side in ("original", "candidate")}}


def total(results: list, side: str) -> dict:
    sides = [r[side]["checks"] for r in results]
    out = {k: sum(c.get(k) or 0 for c in sides) for k in TOTAL_KEYS}
    overlaps = [c["overlap_landed"] for c in sides if c.get("overlap_landed") is not None]
    out["seconds"] = round(out["seconds"], 3)
    out["overlap_landed"] = round(sum(overlaps) / len(overlaps), 3) if overlaps else None
    out["drafts"] = len(results)
    return out
