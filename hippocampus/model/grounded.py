"""model.write: auto by the model's measured grounding rate (pure): a model that writes (free) but whose operations
the grounding guard mostly drops is made to choose (extractive), whatever its size.

Each sleep's history row carries `write`: {"mode", "model", "proposed", "grounded"}: how the model drafted that
night, which model it was (model.name and URL, no credentials), the operations it proposed and the ones the guard
kept (repaired ones count as kept). Over the free nights of this model among the last NIGHTS sleeps, a rate of
grounded ÷ proposed below RATE, measured on at least LEAST operations, makes auto draft extractive; otherwise
auto chooses by size (hippocampus.model.size). Extractive nights add nothing to the measure, so once NIGHTS sleeps
have passed without a free one the model writes again, and is measured again.
"""
from __future__ import annotations

from typing import Iterable, Optional

from hippocampus.model import size

RATE = 0.5          # below this share of its operations grounded, the model chooses instead of writing
LEAST = 10          # operations measured before the rate counts
NIGHTS = 14         # the last sleeps looked at


def model_key(name: str, url: str) -> str:
    """Which model a night's row is about: model.name and its URL (redacted by the caller)."""
    return f"{name or ''} {(url or '').rstrip('/')}".strip()


def measure(history: Iterable[dict], model: str, nights: int = NIGHTS) -> dict:
    """{"proposed", "grounded", "nights"}: this model's free nights among the last `nights` sleeps."""
    sleeps = [r for r in history or [] if isinstance(r, dict) and r.get("kind") == "sleep"][-nights:]
    out = {"proposed": 0, "grounded": 0, "nights": 0}
    for r in sleeps:
        w = r.get("write") if isinstance(r.get("write"), dict) else {}
        if w.get("mode") != size.FREE or w.get("model") != model:
            continue
        proposed, grounded = w.get("proposed"), w.get("grounded")
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (proposed, grounded)):
            continue
        out["proposed"] += proposed
        out["grounded"] += min(grounded, proposed)
        out["nights"] += 1
    return out


def too_ungrounded(m: Optional[dict]) -> bool:
    return bool(m) and m["proposed"] >= LEAST and m["grounded"] < RATE * m["proposed"]


def by_rate(by_size: dict, m: Optional[dict]) -> dict:
    """auto's pick: extractive when the measured rate is too low, else the size's pick; `grounding` either way."""
    if not too_ungrounded(m):
        return {**by_size, "grounding": m} if m and m.get("proposed") else dict(by_size)
    nights = f"{m['nights']} night{'' if m['nights'] == 1 else 's'}"
    return {**by_size, "mode": size.EXTRACTIVE, "grounding": m,
            "why": (f"model.write: auto: {m['grounded']} of {m['proposed']} of its operations were grounded "
                    f"(over its last {nights} writing them, below {round(RATE * 100)}%), so it chooses fragments "
                    "and their own words become the memories (extractive)")}


def tally(proposed: int, grounded: int, into: Optional[dict] = None, *, mode: str, model: str) -> dict:
    """A night's `write` row, added to as each pile is drafted."""
    w = dict(into or {"mode": mode, "model": model, "proposed": 0, "grounded": 0})
    w["proposed"] += max(0, int(proposed))
    w["grounded"] += max(0, int(grounded))
    return w


def view(setting: str, known: Optional[dict], history: Iterable[dict], model: str) -> dict:
    """For /status: size.view (known: the pick by size, model.learned's), with auto's pick by the measured rate
    where that decides it."""
    v = size.view(setting, known)
    if setting != "auto":
        return v
    return by_rate(v, measure(history, model))
