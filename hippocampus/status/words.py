"""Small word helpers the narrator shares: times, spans, counts, short ids. Pure."""
from __future__ import annotations

import time
from typing import Any, Optional


def hhmm(ts: Optional[float]) -> str:
    """"?" for no time, or one no clock can show (a note in Memory said 1e300)."""
    try:
        return time.strftime("%H:%M", time.localtime(ts)) if ts else "?"
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"


def span(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 90:
        return f"{s} s"
    if s < 5400:
        return f"{round(s / 60)} min"
    if s < 172800:
        return f"{round(s / 3600)} h"
    return f"{round(s / 86400)} days"


def ago(ts: Optional[float], now: float) -> str:
    return "never" if not ts else f"{span(now - ts)} ago ({hhmm(ts)})"


def until(ts: Optional[float], now: float) -> str:
    if not ts:
        return "unknown"
    return f"in {span(ts - now)} ({hhmm(ts)})" if ts > now else f"due since {hhmm(ts)}"


def n(count: Any, word: str, many: str = "") -> str:
    c = count if isinstance(count, int) else len(count or [])
    return f"{c} {word if c == 1 else (many or word + 's')}"


def short(draft_id: Optional[str]) -> str:
    return (str(draft_id)[:8] + "…") if draft_id else ""


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
