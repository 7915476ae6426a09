"""The checks a replay puts side by side (pure functions, no I/O).

- invented numbers: number and date tokens in an operation's text (its content and rewording) that appear
  in none of the fragments (their text and the date the prompt showed) or cores (and their episodes) it
  was shown, nor, for a redraft, in the critique, which the rules make true. 1987 in an answer when no
  fragment says 1987 is one; 2026-03-01 is not when a fragment was dated that day; 03 and 3 are the same.
- overlap with what landed: per operation the best Jaccard word overlap with a text approved in the
  chain, averaged over the operations (None when there are none, or nothing landed).
"""
from __future__ import annotations

import datetime as _dt
import re
from typing import Iterable, Optional

NUMBER = re.compile(r"(?<![A-Za-z0-9])\d+(?:[.,:/-]\d+)*")
WORD = re.compile(r"[a-z0-9]+")
_SEP = re.compile(r"([.,:/-])")


def _norm(token: str) -> str:
    """Thousands separators go (1,000 = 1000), leading zeros go (03 = 3); separators of dates stay."""
    token = re.sub(r"(?<=\d),(?=\d{3}\b)", "", token)
    return "".join(p if _SEP.fullmatch(p) else (p.lstrip("0") or "0") for p in _SEP.split(token) if p)


def numbers(text: str) -> list:
    """The number and date tokens of a text, normalised, in order."""
    return [_norm(t) for t in NUMBER.findall(text or "")]


def shown_numbers(texts: Iterable[str]) -> set:
    """Every token shown, and each part of a compound one (so 2026 counts as shown by 2026-03-01)."""
    out: set = set()
    for text in texts:
        for tok in numbers(text):
            out.add(tok)
            out.update(p for p in _SEP.split(tok) if p and not _SEP.fullmatch(p))
    return out


def shown_date(ts) -> Optional[str]:
    """The date a prompt shows beside a fragment (as sleep/prompt.py writes it)."""
    if isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return None
    try:
        return _dt.datetime.fromtimestamp(float(ts), _dt.timezone.utc).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return None


def shown_texts(call: dict) -> list:
    """What one call showed the model to write from: fragments with their dates, cores, the critique."""
    out = []
    for e in call.get("entries") or []:
        out += [str(e.get("content") or ""), shown_date(e.get("ts")) or ""]
    for c in call.get("candidates") or []:
        out += [str(c.get("content") or ""), str(c.get("via") or "")]
    if call.get("stage") == "redraft":
        out.append(str(call.get("critique") or ""))
    return out


def op_text(op: dict) -> str:
    return " ".join(str(op.get(k) or "") for k in ("content", "restated_content")).strip()


def invented_numbers(ops: list, shown: Iterable[str]) -> list:
    """The tokens each operation brings that nothing shown has (distinct per operation), sorted."""
    known = shown_numbers(shown)
    out = []
    for op in ops or []:
        out += sorted({t for t in numbers(op_text(op)) if t not in known})
    return sorted(out)


def words(text: str) -> set:
    return set(WORD.findall((text or "").lower()))


def jaccard(a: str, b: str) -> float:
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def overlap_landed(ops: list, landed: list) -> Optional[float]:
    texts = [op_text(op) for op in ops or []]
    if not texts or not landed:
        return None
    return round(sum(max(jaccard(t, x) for x in landed) for t in texts) / len(texts), 3)


def side(calls: list, landed: list) -> dict:
    """One side's checks over its calls: each call {ops, error, failure, cut_off, seconds} and what it was shown."""
    ops, invented = [], []
    for call in calls:
        call_ops = call.get("ops") or []
        ops += call_ops
        invented += invented_numbers(call_ops, call.get("shown") or [])
    seconds = sum(float(c.get("seconds") or 0.0) for c in calls)
    return {"calls": len(calls), "valid": len(ops),
            "failed_calls": sum(1 for c in calls if c.get("error") or c.get("failure")),
            "cut_off": sum(1 for c in calls if c.get("cut_off")),
            "invented_numbers": sorted(invented), "invented": len(invented),
            "overlap_landed": overlap_landed(ops, landed), "seconds": round(seconds, 3)}
