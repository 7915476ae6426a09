"""The ground-truth corpus (weeks.yaml): three weeks of one person's fragments, the cores before the first night,
and per night the brief and what a good night proposes. Loading is pure; `seed_cores` and `place` put it into
the real SerenMemory through its own routes, the way the main model and the person would.

Invariant: a night's fragments are placed with their own times shifted so that the night's `at` is "now"
(Memory ages short-terms out by their age, so the corpus's dates in 2026 would otherwise be stale), keeping
their order and the gaps between them.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ruamel.yaml import YAML

HERE = Path(__file__).resolve().parent
ROLES = ("fact", "repeat", "correction", "attach", "noise", "injection", "chatter")


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).replace(tzinfo=dt.timezone.utc).timestamp()


@dataclass(frozen=True)
class Fragment:
    key: str
    ts: float
    topic: str
    role: str
    content: str
    slice: bool = False


@dataclass(frozen=True)
class Expected:
    kind: str                    # new_core | attach | supersede
    target: Optional[str]        # a core key, "night N/topic" for a core an earlier night made, or None
    topic: str
    sources: tuple               # fragment keys it comes from
    must: tuple                  # specifics its content carries


@dataclass
class Night:
    label: str
    at: float
    summary: str
    promote: list
    noise: list
    fragments: list
    expect: list

    def sliced(self) -> "Night":
        """The short night the real-model tests feed: the fragments marked slice, and what they expect."""
        keep = [f for f in self.fragments if f.slice]
        keys = {f.key for f in keep}
        return Night(self.label, self.at, self.summary, self.promote, self.noise, keep,
                     [e for e in self.expect if set(e.sources) & keys])

    def by_role(self, role: str) -> list:
        return [f for f in self.fragments if f.role == role]

    def correction(self) -> Optional[Expected]:
        return next((e for e in self.expect if e.kind == "supersede"), None)

    def promoted_topics(self) -> list:
        """The topics of this night's fragments a promote hint names (by tag, as the service matches)."""
        hints = {h.lower() for h in self.promote}
        return sorted({f.topic for f in self.fragments
                       if hints & {t.strip().lower() for t in f.topic.split(",")}})


@dataclass
class Corpus:
    cores: dict                  # key -> {"topic", "content"}
    nights: list = field(default_factory=list)

    def fragment(self, key: str) -> Fragment:
        return next(f for n in self.nights for f in n.fragments if f.key == key)


def load(path: Path = HERE / "weeks.yaml") -> Corpus:
    data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    nights = []
    for n in data["nights"]:
        frags = [Fragment(f["key"], _epoch(f["ts"]), f["topic"], f["role"], f["content"], bool(f.get("slice")))
                 for f in n["fragments"]]
        assert all(f.role in ROLES for f in frags), [f.role for f in frags]
        exp = [Expected(e["kind"], e.get("target"), e["topic"], tuple(e["from"]), tuple(e.get("must", ())))
               for e in n["expect"]]
        b = n["brief"]
        nights.append(Night(n["label"], _epoch(n["at"]), b["summary"], list(b.get("promote", ())),
                            list(b.get("noise", ())), frags, exp))
    return Corpus(cores=dict(data["cores"]), nights=nights)


# ---------------------------------------------------------------- into the real SerenMemory

def seed_cores(client, hand, corpus: Corpus) -> dict:
    """The corpus's cores in long-term memory (each from one fragment, one approved draft); key -> core id."""
    ids = {}
    for key, core in corpus.cores.items():
        sid = hand.short(core["content"], topic=core["topic"])
        res = client.submit_draft({"summary": f"seed core {key}", "attempt": 1, "terminal": True, "operations": [
            {"kind": "new_core", "content": core["content"], "topic": core["topic"], "source_short_ids": [sid],
             "evidence_count": 1, "rationale": "the corpus's existing core"}]})
        out = client.review_draft(res["id"], [{"op": 0, "verdict": "approve"}])
        ids[key] = out["results"][0]["long_term_id"]
    return ids


def place(hand, night: Night, now: float) -> dict:
    """The night's fragments as short-terms, the night's `at` moved to `now`; then its brief. Key -> short id."""
    shift = now - night.at
    ids = {f.key: hand.short(f.content, topic=f.topic, ts=f.ts + shift) for f in sorted(night.fragments,
                                                                                       key=lambda f: f.ts)}
    hand.brief(night.summary, promote=night.promote, noise=night.noise)
    return ids
