"""Small word helpers the narrator shares: times, spans, counts, short ids. Pure."""
from __future__ import annotations

import re
from typing import Optional

from hippocampus.words import cap, hhmm, n, times_said  # noqa: F401 - said once in hippocampus.words


# what each actor does, for the headline: the actors' names are the details view's words
ACTOR_WORDS = {"scheduler": "the part that keeps the schedule", "sleeper": "the part that sleeps",
               "chain": "the part that follows drafts through review", "lifecycle": "the part that starts the model",
               "ripple": "the part that wakes the main model", "notifier": "the part that sends the webhook",
               "quality": "the part that reads the reviews", "memory_health": "the part that watches Memory",
               "model_health": "the part that watches the model", "wakeup": "the part that checks the wake-up",
               "queue": "the part that reads the review queue", "replay": "the part that replays drafts"}


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


# a config key (model.lifecycle.retry_after_seconds) or a snake_case name (model_path), outside a URL, a path or quotes
_KEY = re.compile(r"(?<![/\w.:=?&%-])(?:memory|model|sleep|server|notify|ripple|voice|events|supervisor|quality)"
                  r"(?:\.[a-z_]+)+\b")
_ONLY_KEYS = re.compile(r" \((?:" + _KEY.pattern + r"(?:, | or | and )?)+\)")
_SNAKE = re.compile(r"(?<![/\w.:=?&%'\"-])[a-z]+(?:_[a-z]+)+\b(?![/.=('\"])")     # a quoted word is another's: kept


def setting(key: str) -> str:
    """"memory.url" -> "memory url", "model.lifecycle.retry_after_seconds" -> "model retry after seconds"."""
    parts = key.split(".")
    return " ".join([parts[0]] + parts[-1:]).replace("_", " ")


def keyless(text: str) -> str:
    """A sentence for a person: a parenthesis of config keys left out, a key in the sentence said as "the
    <block> <name> setting", a snake_case name in words. The details view keeps the sentence as it was."""
    if not text:
        return text
    out = _ONLY_KEYS.sub("", text)
    out = _KEY.sub(lambda m: f"the {setting(m.group(0))} setting", out)
    return _SNAKE.sub(lambda m: m.group(0).replace("_", " "), out)
