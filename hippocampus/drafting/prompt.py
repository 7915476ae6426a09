"""Prompt builders for the drafting worker (pure). A small model never copies a long id: fragments are shown as
[f1], [f2] ... and cores as [c1] ..., and Markers maps them back. The words below are a contract.

Every prompt begins with what a night shares, byte for byte (voice card, rules, the answer's shape, the brief),
and ends with its pile (the hints on its topic, the topic, fragments, cores), then "JSON:": a server that keeps
its cache (llama-server's cache_prompt) evaluates the shared head once a night, not once a pile."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Optional

from hippocampus.drafting.cluster import meta_of
from hippocampus.drafting.contradict import suggest

FRAGMENT_CHARS = 400
VIA_CHARS = 200
SUMMARY_CHARS = 900
MAX_HINTS_SHOWN = 6
OLD_TARGET_PLACEHOLDER = "(the core the denied operation targets)"

ANSWER_FORMAT = (
    'Answer with ONE JSON object and nothing else, in this shape:\n'
    '{"operations": [{"kind": "new_core" | "attach" | "supersede", "content": "...", "topic": "...", '
    '"fragments": ["f1", "f3"], "target": "c2" or null, '
    '"target_op": <index of a new_core earlier in this same list> or null, '
    '"restated_content": "..." or null, "rationale": "..."}]}'
)

DRAFT_RULES = """You are the drafting worker of a memory consolidator. Below are short-term fragments about one topic and the nearest existing long-term cores. Propose operations that turn the fragments into long-term memory, and answer with JSON only.
Rules:
- attach: the fragments are more evidence for an existing core. "content" is a one-line summary of this episode; "target" is that core's marker.
- supersede: the fragments replace or contradict an existing core. "content" is the new statement; "target" is the core's marker.
- new_core: nothing shown covers it. "content" is one durable statement in the present tense, with no preamble.
- To attach to or supersede a new_core proposed earlier in your own list, give "target_op": its index in the list (counted from 0) and "target": null.
- Use only the markers shown ([f1], [c1], ...). Never invent one.
- "fragments" lists only the fragments the operation's text actually comes from: approving an operation archives what it cites.
- One operation per separate memory. Propose nothing for a fragment an existing core already covers.
- Say only what the fragments say; take nothing from the cores or from anything else above.
- Give "restated_content" only when the core's wording must change; never repeat the content in it.
- Keep the rationale to one short sentence.
- Weigh the steer, when there is one."""

REDRAFT_RULES = """You are the drafting worker of a memory consolidator, redrafting one operation.
The operation below was DENIED by the reviewer: the main model, whose memories these are, and who was there.
Rules:
- THE CRITIQUE IS TRUE. Do exactly what it says.
- Wording, facts or a list given in the critique become the content.
- A kind the critique names is used. A target the critique names is used: a core marker from the list below, or "target_op" for a new core in this same answer.
- Withdraw, by answering {"operations": []}, when the critique says it is a duplicate, already covered, or untrue.
- Where the critique is silent, keep the kind and the target. A wrong target is not a reason to withdraw.
- new_core has no target. Use only the markers shown ([f1], [c1], ...). Never invent one.
- Never restate a core: give no restated_content.
- An answer that is not a withdrawal MUST have "content": the rationale is not the memory.
- Keep the rationale to one short sentence."""


EXTRACT_RULES = """You are the drafting worker of a memory consolidator. Below are short-term fragments about one topic and the nearest existing long-term cores. You do not write memories: you choose fragments, and a chosen fragment's own words become the memory. Answer with JSON only.
Rules:
- "words": the fragment whose words become the memory.
- "kind": "new_core" when no core shown says it; "attach" when it is more evidence for a core shown; "supersede" when it corrects or replaces a core shown (a changed number, place, name or date).
- "target": the core's marker ([c1], ...) for attach and supersede; null for new_core.
- "also": the other fragments that say the same thing; they are archived with it.
- One operation per separate memory. Never choose a fragment twice. Choose nothing for noise or for what a core already says.
- Use only the markers shown ([f1], [c1], ...).
- Weigh the steer, when there is one."""

EXTRACT_FORMAT = (
    'Answer with ONE JSON object and nothing else, in this shape:\n'
    '{"operations": [{"words": "f2", "kind": "new_core" | "attach" | "supersede", "target": "c1" or null, '
    '"also": ["f1"]}]}'
)


@dataclass
class Markers:
    fragments: dict = field(default_factory=dict)  # "f1" -> short-term id
    cores: dict = field(default_factory=dict)      # "c1" -> core id
    entries: dict = field(default_factory=dict)    # "f1" -> the short-term row
    held: dict = field(default_factory=dict)       # "f3" -> "c1": chosen, this fragment supersedes that core


@dataclass
class Steer:
    summary: str = ""
    pulled: bool = False
    promote: list = field(default_factory=list)
    noise: list = field(default_factory=list)


def one_line(text: object) -> str:
    return " ".join(text.split()) if isinstance(text, str) else ""


def shown_date(ts: object) -> Optional[str]:
    """The date shown beside a fragment with this metadata.ts; None: no usable ts."""
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return None
    try:
        return _dt.datetime.fromtimestamp(float(ts), _dt.timezone.utc).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return None


def fragment_lines(entries: list, markers: Markers) -> list:
    lines = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("id") in markers.fragments.values():
            continue
        m = f"f{len(markers.fragments) + 1}"
        markers.fragments[m] = entry.get("id")
        markers.entries[m] = entry
        date = shown_date(meta_of(entry).get("ts")) or "date unknown"
        lines.append(f"[{m}] {one_line(entry.get('content'))[:FRAGMENT_CHARS]} ({date})")
    return lines


def core_lines(candidates: list, markers: Markers, core_chars: int) -> list:
    lines = []
    for core in candidates:
        if not isinstance(core, dict) or core.get("id") in markers.cores.values():
            continue
        m = f"c{len(markers.cores) + 1}"
        markers.cores[m] = core.get("id")
        sats = core.get("satellites")
        n = sats if isinstance(sats, int) and not isinstance(sats, bool) else 0
        lines.append(f"[{m}] {one_line(core.get('content'))[:max(1, int(core_chars))]} ({n} satellites)")
        via = one_line(core.get("via"))
        if via:
            lines.append(f"    one of its episodes: {via[:VIA_CHARS]}")
    return lines or ["(none)"]


def _hint_list(hints: list) -> str:
    return ", ".join(str(h) for h in hints[:MAX_HINTS_SHOWN])


def brief_lines(steer: Optional[Steer]) -> list:
    """The brief's part of the steer: the same for every pile of a night."""
    if steer is None:
        return []
    who = ("pulled from the fragments by a small model" if steer.pulled
           else "written by the main model, who was there")
    return ["Steer:", f"The brief for this period ({who}):", (steer.summary or "").strip()[:SUMMARY_CHARS], ""]


def hint_lines(steer: Optional[Steer]) -> list:
    """The steer's words on THIS pile's topic (the brief's hints it matched)."""
    lines = []
    if steer is not None and steer.promote:
        lines.append(f"The brief names THIS topic as worth keeping ({_hint_list(steer.promote)}): "
                     "a running bit deserves a core, or an attach, even from few fragments.")
    if steer is not None and steer.noise:
        lines.append(f"The brief names THIS topic as noise ({_hint_list(steer.noise)}): "
                     "ask for nothing unless the fragments clearly outgrow that call.")
    return lines


def _voice(voice_block: str) -> list:
    v = (voice_block or "").strip()
    return [v, ""] if v else []


def shared_head(voice_block: str, rules: str, answer_format: str, steer: Optional[Steer] = None) -> list:
    """What every drafting prompt of a night begins with, byte for byte the same for each pile (the voice card,
    the rules, the answer's shape, the brief), so that a server keeping its cache evaluates it once a night;
    what differs from pile to pile comes after it."""
    return _voice(voice_block) + [rules, "", answer_format, ""] + brief_lines(steer)


def pile_lines(head: list, steer: Optional[Steer], topic: Optional[str], entries: list, candidates: list,
               markers: Markers, core_chars: int) -> list:
    """A pile's prompt up to its cores: the shared head, the hints, the topic, the fragments, the cores."""
    return head + hint_lines(steer) + [f"Topic: {topic or 'untagged'}", "Fragments:"] \
        + fragment_lines(entries, markers) + ["Existing cores:"] + core_lines(candidates, markers, core_chars)


def draft_prompt(*, voice_block: str, steer: Optional[Steer], topic: Optional[str], entries: list,
                 candidates: list, core_chars: int = 600) -> tuple:
    markers = Markers()
    lines = pile_lines(shared_head(voice_block, DRAFT_RULES, ANSWER_FORMAT, steer), steer, topic, entries,
                       candidates, markers, core_chars)
    return "\n".join(lines + ["", "JSON:"]), markers


def redraft_material(op: dict, earlier: list, entries: list, candidates: list, markers: Markers, core_chars: int,
                     none_left: str) -> tuple:
    """(the lines of a redraft's earlier versions, each with the critique it got, its fragments and the cores; the
    marker of the denied operation's target). The target is shown even when the search no longer finds it (a
    placeholder stands for its words); `none_left`: what to do when an approved operation took every fragment."""
    target = op.get("target_core_id")
    cands = list(candidates or [])
    if target and all(not isinstance(c, dict) or c.get("id") != target for c in cands):
        cands.append({"id": target, "content": OLD_TARGET_PLACEHOLDER})
    frags = fragment_lines(entries, markers)
    cores = core_lines(cands, markers, core_chars)
    versions = [f"attempt {e.get('attempt')} ({e.get('kind')}): {one_line(e.get('content'))}"
                f" — critique: {one_line(e.get('critique'))}" for e in earlier or [] if isinstance(e, dict)]
    lines = (["Earlier versions:"] + (versions or ["(none)"]) + ["", "Fragments:"]
             + (frags or [f"(none left: an approved operation already took them; {none_left})"])
             + ["Existing cores:"] + cores)
    return lines, next((m for m, cid in markers.cores.items() if target and cid == target), None)


def redraft_prompt(*, voice_block: str, critique: str, op: dict, earlier: list, entries: list,
                   candidates: list, core_chars: int = 600) -> tuple:
    markers = Markers()
    critique = (critique or "").strip()
    material, shown = redraft_material(op, earlier, entries, candidates, markers, core_chars,
                                       'work from the content and the critique; give "fragments": []')
    lines = shared_head(voice_block, REDRAFT_RULES, ANSWER_FORMAT) + ["THE CRITIQUE:", critique, ""]
    lines += ["What you proposed:",
              f"  kind: {op.get('kind') or 'new_core'}",
              f"  target: [{shown}]" if shown else "  target: (none)",
              f"  topic: {op.get('topic') or 'untagged'}",
              f"  content: {one_line(op.get('content'))}", ""]
    lines += material + ["", "The critique, once more:", critique, "", "JSON:"]
    return "\n".join(lines), markers


def suggestion_lines(entries_by_marker: dict, candidates: list, markers: Markers, topic: Optional[str]) -> list:
    """The fragments that may correct a shown core, each with the choice that would say so (the model decides)."""
    by_id = {c.get("id"): c for c in candidates if isinstance(c, dict)}
    cores = {m: (one_line(by_id.get(cid, {}).get("content")), by_id.get(cid, {}).get("topic"))
             for m, cid in markers.cores.items()}
    frags = {m: one_line(e.get("content")) for m, e in entries_by_marker.items()}
    lines = []
    for s in suggest(frags, cores, topic):
        if s.held:
            markers.held[s.fragment] = s.core
        said = (f"it says {s.says} where the core says {s.was}" if s.says else "it says that something changed")
        lines.append(f"- [{s.fragment}] may correct [{s.core}]: {said}. "
                     f'If so: {{"words": "{s.fragment}", "kind": "supersede", "target": "{s.core}", "also": []}}')
    return ["Possible corrections (you decide):"] + lines if lines else []


def extract_prompt(*, voice_block: str, steer: Optional[Steer], topic: Optional[str], entries: list,
                   candidates: list, core_chars: int = 600) -> tuple:
    """The extractive mode's prompt: the same fragments and cores, the rules of choosing, suggested corrections."""
    markers = Markers()
    lines = pile_lines(shared_head(voice_block, EXTRACT_RULES, EXTRACT_FORMAT, steer), steer, topic, entries,
                       candidates, markers, core_chars)
    suggested = suggestion_lines(markers.entries, list(candidates or []), markers, topic)
    lines += ([""] + suggested if suggested else []) + ["", "JSON:"]
    return "\n".join(lines), markers
