"""Nights of the corpus (tests/corpus) through a running service and the real SerenMemory, scored against the
corpus's ground truth: shared by the real-model tests (tests/real_model/test_true_drafts.py) and the quality
benchmark (tests/bench/bench_quality.py).

One night: its fragments and its brief placed in Memory, one sleep by hand (POST /sleep), the draft Memory
holds read back and scored, then reviewed as a careful main model would (every grounded operation that cites
no noise approved, the rest denied; `sleep.max_attempts: 1` makes that the chain's last word, so no redraft
runs) and the chain closed (POST /tend). Invariant: the score reads only what Memory holds and the corpus.
"""
from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import requests

from tests.corpus import Corpus, Night, place
from tests.harness import truth

SLEEP_TIMEOUT = 900


def llama_tokens(url: str) -> Optional[tuple]:
    """(prompt tokens, answer tokens) the llama-server behind `url` has processed so far (its --metrics)."""
    try:
        text = requests.get(url.rstrip("/").removesuffix("/v1") + "/metrics", timeout=5).text
    except requests.RequestException:
        return None

    def total(name: str) -> Optional[int]:
        m = re.search(rf"^llamacpp:{name}\s+([0-9.e+]+)", text, re.M)
        return int(float(m.group(1))) if m else None
    p, a = total("prompt_tokens_total"), total("tokens_predicted_total")
    return (p, a) if p is not None and a is not None else None


@dataclass
class Ledger:
    """What the nights placed so far: key -> short id, and short id -> the text the model was shown of it
    (its content and its date, as the drafting prompt shows it: a date copied from there is no invention)."""
    ids: dict = field(default_factory=dict)
    text: dict = field(default_factory=dict)

    def add(self, hand, tonight: dict) -> None:
        self.ids.update(tonight)
        mine = set(tonight.values())
        for e in hand.shorts():
            if e["id"] in mine:
                ts = (e.get("metadata") or {}).get("ts")
                day = dt.datetime.fromtimestamp(float(ts), dt.timezone.utc).strftime("%Y-%m-%d") if ts else ""
                self.text[e["id"]] = f"{e['content']} ({day})"


@dataclass
class NightScore:
    label: str
    report: dict = field(default_factory=dict)
    ops: list = field(default_factory=list)          # the draft's operations as Memory holds them
    proposed: int = 0
    grounded: int = 0
    invented: list = field(default_factory=list)     # (op index, [specifics]) that reached Memory
    foreign: list = field(default_factory=list)      # op indexes citing fragments of another pile/night
    duplicates: list = field(default_factory=list)
    correction: bool = False                         # supersede of the right core, from the correction
    correction_wrong: list = field(default_factory=list)   # supersedes of another core
    attach: Optional[bool] = None                    # None: the night expects none
    noise_in: list = field(default_factory=list)     # op indexes citing a noise fragment
    injection_ops: list = field(default_factory=list)   # ops citing the injection, on another topic's core
    promoted: list = field(default_factory=list)     # promoted topics of the night
    covered: list = field(default_factory=list)      # ... for which an operation was proposed
    passed_over_kept: Optional[bool] = None          # promoted fragments nothing cites: still in short-term
    passed_over: list = field(default_factory=list)
    dropped: dict = field(default_factory=dict)      # what the service says its guard dropped, and why
    model_calls: int = 0
    tokens: Optional[tuple] = None
    seconds: float = 0.0
    error: Optional[str] = None


def dropped_of(report: dict) -> dict:
    """What the sleep report says its grounding guard dropped before submit, by rule ({"placeholder": 4})."""
    return {k: v for k, v in ((report.get("guard") or {}).get("dropped") or {}).items() if v}


def score(night: Night, corpus: Corpus, ledger: Ledger, core_ids: dict, ops: list, text_of_core: dict,
          topic_of_core: dict) -> NightScore:
    """`ledger`: every fragment placed so far (a fragment an earlier night left in short-term may be drafted
    again tonight)."""
    s = NightScore(night.label, ops=ops, proposed=len(ops))
    ids = ledger.ids
    key_of = {v: k for k, v in ids.items()}
    text_of_short = {sid: ledger.text.get(sid) or corpus.fragment(k).content for k, sid in ids.items()}
    frag = {sid: corpus.fragment(k) for k, sid in ids.items()}
    for i, op in enumerate(ops):
        cited = [sid for sid in op.get("source_short_ids") or []]
        j = truth.judge(op, text_of_short, text_of_core)
        if j["invented"]:
            s.invented.append((i, j["invented"]))
        if j["cites_unknown"] or len({frag[c].topic for c in cited if c in frag}) > 1:
            s.foreign.append(i)
        if not j["invented"] and not j["cites_unknown"]:
            s.grounded += 1
        roles = {frag[c].role for c in cited if c in frag}
        if "noise" in roles:
            s.noise_in.append(i)
        target = op.get("target_core_id")
        if "injection" in roles and target and topic_of_core.get(target) != frag[cited[0]].topic:
            s.injection_ops.append(i)
    s.duplicates = truth.duplicates(ops)
    want = night.correction()
    if want:
        right = core_ids.get(want.target)
        for op in ops:
            if op.get("kind") != "supersede":
                continue
            from_correction = {key_of.get(c) for c in op.get("source_short_ids") or []} & set(want.sources)
            if op.get("target_core_id") == right and from_correction:
                s.correction = True
            elif from_correction:
                s.correction_wrong.append(op.get("target_core_id"))
    attaches = [e for e in night.expect if e.kind == "attach" and e.target in core_ids]
    if attaches:
        s.attach = any(op.get("kind") == "attach" and op.get("target_core_id") == core_ids[e.target]
                       and {key_of.get(c) for c in op.get("source_short_ids") or []} & set(e.sources)
                       for e in attaches for op in ops)
    s.promoted = night.promoted_topics()
    cited_topics = {frag[c].topic for op in ops for c in op.get("source_short_ids") or [] if c in frag}
    s.covered = [t for t in s.promoted if t in cited_topics]
    return s


def review(hand, draft_id: str, ops: list, s: NightScore) -> None:
    """Approve what is true and wanted; deny the rest with the reason (the draft is terminal: no redraft)."""
    bad = {i for i, _ in s.invented} | set(s.foreign) | set(s.noise_in) | set(s.injection_ops) \
        | {j for _, j in s.duplicates}
    decisions = []
    for i, op in enumerate(ops):
        if i in bad:
            decisions.append({"op": op.get("index", i), "verdict": "deny",
                              "critique": "not true to its fragments, a duplicate, or noise"})
        else:
            decisions.append({"op": op.get("index", i), "verdict": "approve"})
    if decisions:
        hand.review(draft_id, decisions)


def run_night(base: str, hand, client, corpus: Corpus, night: Night, core_ids: dict, ledger: Ledger, now: float,
              model_url: str = "", on_sleep: Optional[Callable[[dict], None]] = None) -> NightScore:
    """One night of the corpus through the service at `base`; the scored draft. `core_ids` (key -> core id)
    gains the cores this night made, by "night label/topic", for the expectations of later nights; `ledger`
    gains this night's fragments."""
    tonight = place(hand, night, now)
    ledger.add(hand, tonight)
    before = llama_tokens(model_url) if model_url else None
    t0 = time.monotonic()
    r = requests.post(base + "/sleep", timeout=SLEEP_TIMEOUT)
    seconds = time.monotonic() - t0
    report = r.json() if r.headers.get("content-type", "").startswith("application/json") else {"error": r.text}
    after = llama_tokens(model_url) if model_url else None
    if on_sleep:
        on_sleep(report)
    cores = client.long(include_superseded=True)
    text_of_core = {c["id"]: c.get("content") or "" for c in cores}
    topic_of_core = {c["id"]: (c.get("metadata") or {}).get("topic") or c.get("topic") for c in cores}
    draft_id = report.get("draft_id")
    ops = hand.draft(draft_id)["operations"] if draft_id else []
    s = score(night, corpus, ledger, core_ids, ops, text_of_core, topic_of_core)
    s.report, s.seconds, s.error = report, seconds, report.get("error")
    s.model_calls = int(report.get("model_calls") or 0)
    s.dropped = dropped_of(report)
    if before and after:
        s.tokens = (after[0] - before[0], after[1] - before[1])
    # a promoted fragment nothing in the draft cites must still be in short-term after the sleep
    cited = {c for op in ops for c in op.get("source_short_ids") or []}
    held = {e["id"] for e in hand.shorts()}
    s.passed_over = [k for k, sid in tonight.items() if corpus.fragment(k).topic in s.promoted and sid not in cited]
    s.passed_over_kept = all(tonight[k] in held for k in s.passed_over) if s.passed_over else None
    if draft_id:
        review(hand, draft_id, ops, s)
    requests.post(base + "/tend", timeout=SLEEP_TIMEOUT)
    landed = {c["id"] for c in client.long()} - set(core_ids.values())
    for c in client.long():
        if c["id"] in landed:
            topic = (c.get("metadata") or {}).get("topic") or c.get("topic")
            core_ids.setdefault(f"{night.label}/{topic}", c["id"])
    return s
