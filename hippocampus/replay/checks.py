"""The checks a replay puts side by side (pure). An invented number is a number or date token in an operation's text
found in nothing it was shown.
"""
from __future__ import annotations

import re
from typing import Iterable, Optional

from hippocampus.drafting.prompt import shown_date

NUMBER = re.compile(r"(?<![A-Za-z0-9])\d+(?:[.,:/-]\d+)*")
_JACCARD_WORD = re.compile(r"[a-z0-9]+")
_SEP = re.compile(r"([.,:/-])")


def _norm(token: str) -> str:
    """Thousands separators go (1,000 = 1000), leading zeros go (03 = 3), but not a decimal's after its point;
    separators of dates stay."""
    token = re.sub(r"(?<=\d),(?=\d{3}\b)", "", token)
    if re.fullmatch(r"\d+[.,]\d+", token):     # a decimal: its fraction as written (0.05 is not 0.5), a comma a point
        whole, frac = re.split(r"[.,]", token)
        return f"{whole.lstrip('0') or '0'}.{frac}"
    return "".join(p if _SEP.fullmatch(p) else (p.lstrip("0") or "0") for p in _SEP.split(token) if p)


def numbers(text: str) -> list:
    """The number and date tokens of a text, normalised, in order."""
    return [_norm(t) for t in NUMBER.findall(text or "")]


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
    """The tokens each operation brings that nothing shown has, sorted; 2026 is shown by 2026-03-01."""
    known: set = set()
    for tok in (t for text in shown for t in numbers(text)):
        known.update([tok] + [p for p in _SEP.split(tok) if p and not _SEP.fullmatch(p)])
    return sorted(t for op in ops or [] for t in set(numbers(op_text(op))) - known)


def jaccard(a: str, b: str) -> float:
    wa, wb = (set(_JACCARD_WORD.findall((text or "").lower())) for text in (a, b))
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def overlap_landed(ops: list, landed: list) -> Optional[float]:
    texts = [op_text(op) for op in ops or []]
    if not texts or not landed:
        return None
    return round(sum(max(jaccard(t, x) for x in landed) for t in texts) / len(texts), 3)


def call_counts(calls: list) -> dict:
    """The calls, those that failed (an error, or an answer that could not be read) and those cut off."""
    return {"calls": len(calls), "failed_calls": sum(1 for c in calls if c.get("error") or c.get("failure")),
            "cut_off": sum(1 for c in calls if c.get("cut_off"))}


def side(calls: list, landed: list) -> dict:
    """One side's checks over its calls (each with its ops, error, failure, cut_off, seconds and what it was shown)."""
    ops = [op for call in calls for op in call.get("ops") or []]
    invented = [t for call in calls for t in invented_numbers(call.get("ops") or [], call.get("shown") or [])]
    seconds = sum(float(c.get("seconds") or 0.0) for c in calls)
    return {**call_counts(calls), "valid": len(ops), "invented_numbers": sorted(invented), "invented": len(invented),
            "overlap_landed": overlap_landed(ops, landed), "seconds": round(seconds, 3)}
