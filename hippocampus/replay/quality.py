"""The quality report from Memory's drafts and the packets (pure).

An operation and its redrafts count under the model and voice card of the draft that first proposed it, in the column
where it ended: a denial is "to the end" when terminal, its chain closed, or dropped from the next attempt.
"""
from __future__ import annotations

import collections
import re
from typing import Iterable, Optional

from hippocampus.drafting.guard import RULES
from hippocampus.replay import checks
from hippocampus.words import pct

GUARD = ("guard_dropped", "guard_repaired")       # kept from review by the grounding guard (the drafts' extra.guard)
COLUMNS = ("proposed", "approved_first", "approved_after_redraft", "approved_edited", "denied_to_end", "waiting")
PACKET_COUNTS = ("calls", "cut_off", "failed_calls", "ops_checked", "invented_ops")
MECHANICAL = "(mechanical)"
TOP_WORDS = 8
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
STOP = frozenset("""the and that this with from for not but are was were you your its it's has have had
its into onto than then them they their there here what when which who whom why how all any each more most
some such only own same too very can will just should would could also about above after again against
because been before being below between both did does doing down during few further once other our out
over under until while where these those say says said please one ones it is be on in of to as at by an or
no nor so if do we us me my mine him his her hers she he""".split())


def key(extra: Optional[dict]) -> tuple:
    """(model name, voice version) from a draft's extra (its stamp)."""
    extra = extra or {}
    if extra.get("model_mode") == "mechanical":
        return MECHANICAL, None
    return str(extra.get("model_name") or extra.get("model_served") or "(unknown)"), extra.get("model_voice") or None


def chains(drafts: Iterable[dict]) -> dict:
    """cluster id -> its attempts, oldest first."""
    out: dict = collections.defaultdict(list)
    for d in drafts:
        if isinstance(d, dict) and d.get("id"):
            out[d.get("cluster_id") or d["id"]].append(d)
    for attempts in out.values():
        attempts.sort(key=lambda d: (int(d.get("attempt") or 1), float(d.get("created_at") or 0)))
    return out


def lineages(attempts: list) -> list:
    """[(root draft, [(draft, op), ...] oldest first)] for one chain."""
    by_attempt = {int(d.get("attempt") or 1): d for d in attempts}
    child: dict = {}
    roots = []
    for d in attempts:
        prev = by_attempt.get(int(d.get("attempt") or 1) - 1)
        for i, op in enumerate(d.get("operations") or []):
            r = op.get("redraft_of")
            if prev is not None and isinstance(r, int) and (prev["id"], r) not in child:
                child[(prev["id"], r)] = (d, op)
            else:
                roots.append((d, op))
    out = []
    for d, op in roots:
        path = [(d, op)]
        while (path[-1][0]["id"], path[-1][1].get("index")) in child:
            path.append(child[(path[-1][0]["id"], path[-1][1].get("index"))])
        out.append((d, path))
    return out


def outcome(attempts: list, path: list) -> str:
    d, op = path[-1]
    status = op.get("status") or "pending"
    if status == "approved":
        if op.get("edited_content"):
            return "approved_edited"
        return "approved_first" if len(path) == 1 else "approved_after_redraft"
    if status == "denied":
        later = any(int(x.get("attempt") or 1) > int(d.get("attempt") or 1) for x in attempts)
        if d.get("terminal") or d.get("status") == "closed" or later:
            return "denied_to_end"
    return "waiting"


def critique_words(critiques: Iterable[str], n: int = TOP_WORDS) -> list:
    counts = collections.Counter(w.strip("'-") for c in critiques for w in _WORD.findall((c or "").lower()))
    return [[w, k] for w, k in counts.most_common() if w and w not in STOP][:n]


def summarize_packet(packet: dict) -> dict:
    """What a packet adds to the report: its calls, the cut-off ones, and the operations with invented numbers."""
    calls = packet.get("calls") or []
    invented = [bool(checks.invented_numbers([op], checks.shown_texts(call)))
                for call in calls for op in call.get("ops") or []]
    return {"draft_id": packet.get("draft_id"), "key": key(packet.get("stamp")), **checks.call_counts(calls),
            "ops_checked": len(invented), "invented_ops": sum(invented)}


def _blank(model: Optional[str], voice) -> dict:
    return {"model": model, "voice": voice, "drafts": 0, **dict.fromkeys(COLUMNS + PACKET_COUNTS + GUARD, 0),
            "guard_reasons": {}, "_critiques": []}


def _add_guard(g: dict, extra: Optional[dict]) -> None:
    """What the guard dropped and repaired before this draft was sent (the draft's extra.guard)."""
    t = (extra or {}).get("guard") or {}
    if not isinstance(t, dict):
        return
    for rule, count in (t.get("dropped") or {}).items():
        g["guard_dropped"] += int(count or 0)
        g["guard_reasons"][rule] = g["guard_reasons"].get(rule, 0) + int(count or 0)
    g["guard_repaired"] += sum(int(c or 0) for c in (t.get("repaired") or {}).values())


def _rates(g: dict) -> dict:
    g["critique_words"] = critique_words(g.pop("_critiques"))
    g["cut_off_rate"] = round(g["cut_off"] / g["calls"], 3) if g["calls"] else None
    g["invented_rate"] = round(g["invented_ops"] / g["ops_checked"], 3) if g["ops_checked"] else None
    return g


def report(drafts: list, packets: list, now: float) -> dict:
    """The report over the drafts on record (Memory's) and the packets' summaries (summarize_packet)."""
    groups: dict = {}
    total = _blank(None, None)
    by_chain = chains(drafts)

    def counted(k) -> tuple:
        """The group of key k, and the total: where a count goes."""
        return groups.setdefault(tuple(k), _blank(*k)), total

    for attempts in by_chain.values():
        for d in attempts:
            for target in counted(key(d.get("extra"))):
                target["drafts"] += 1
                _add_guard(target, d.get("extra"))
        for root, path in lineages(attempts):
            column = outcome(attempts, path)
            denials = [op.get("critique") for _, op in path if op.get("status") == "denied" and op.get("critique")]
            for target in counted(key(root.get("extra"))):
                target["proposed"] += 1
                target[column] += 1
                target["_critiques"] += denials
    for s in packets:
        for target in counted(s["key"]):
            for c in PACKET_COUNTS:
                target[c] += int(s.get(c) or 0)
    rows = sorted((_rates(g) for g in groups.values()), key=lambda g: (-g["drafts"], str(g["model"]), str(g["voice"])))
    return {"ready": True, "at": now, "drafts": total["drafts"], "chains": len(by_chain), "packets": len(packets),
            "groups": rows, "total": _rates(total), "error": None,
            "note": "an operation and its redrafts count under the model and voice card of the draft that first "
                    "proposed it"}


def guard_words(g: dict) -> str:
    """"; 12 more dropped before review (numbers in none of their fragments: 7, ...)" or ""."""
    if not g.get("guard_dropped") and not g.get("guard_repaired"):
        return ""
    reasons = ", ".join(f"{RULES.get(r, r)}: {c}" for r, c in sorted((g.get("guard_reasons") or {}).items(),
                                                                     key=lambda kv: (-kv[1], kv[0])))
    words = f"; {g.get('guard_dropped') or 0} more dropped by the grounding guard before review"
    words += f" ({reasons})" if reasons else ""
    return words + (f", {g['guard_repaired']} repaired" if g.get("guard_repaired") else "")


def group_words(g: dict) -> str:
    who = f"{g['model']} ({'card v' + str(g['voice']) if g.get('voice') else 'no voice card'})"
    return (f"{who}: {g['proposed']} proposed; {g['approved_first']} approved on the first attempt, "
            f"{g['approved_after_redraft']} after a redraft, {g['approved_edited']} with edits, "
            f"{g['denied_to_end']} denied to the end, {g['waiting']} waiting; cut off {pct(g['cut_off_rate'])} "
            f"of {g['calls']} call(s), invented numbers in {pct(g['invented_rate'])} of "
            f"{g['ops_checked']} operation(s){guard_words(g)}")


def sentence(rep: Optional[dict]) -> str:
    if not rep or not rep.get("ready"):
        return "The quality report is being read from Memory's drafts (in the background)."
    if not rep.get("groups"):
        return "No drafts on record yet, so there is nothing to report on."
    lines = [group_words(g) for g in rep["groups"]]
    words = ", ".join(w for w, _ in rep["total"].get("critique_words") or [])
    if words:
        lines.append(f"most common words in the critiques: {words}")
    return "Draft quality - " + "; ".join(lines) + "."
