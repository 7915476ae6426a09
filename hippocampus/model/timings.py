"""What the model server says one call cost, in tokens, and a night's sum of them (pure).

llama-server answers each chat call with its own `timings`: `prompt_n` (prompt tokens it evaluated), `cache_n`
(prompt tokens it reused from its slot's cache) and `predicted_n` (answer tokens). A server without them (vLLM,
Ollama) may say `usage.prompt_tokens`, `usage.prompt_tokens_details.cached_tokens`, `usage.completion_tokens`;
a server that says neither gives None, and the sum leaves that call out (`timed` counts the calls it holds).
"""
from __future__ import annotations

import math
from typing import Any, Optional

KEYS = ("prompt", "evaluated", "cached", "answer")


def count(value: Any) -> Optional[int]:
    """A whole count of a number that is not negative (nor a bool, NaN or infinite), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
        return None
    return int(value)


def read(data: Any) -> Optional[dict]:
    """{"prompt", "evaluated", "cached", "answer"} tokens of one chat answer's JSON, or None."""
    if not isinstance(data, dict):
        return None
    t = data.get("timings")
    if isinstance(t, dict):
        evaluated, cached, answer = (count(t.get(k)) for k in ("prompt_n", "cache_n", "predicted_n"))
        if evaluated is not None:
            cached = cached or 0
            ms = sum(float(t.get(k) or 0) for k in ("prompt_ms", "predicted_ms")
                     if isinstance(t.get(k), (int, float)) and not isinstance(t.get(k), bool))
            return {"prompt": evaluated + cached, "evaluated": evaluated, "cached": cached, "answer": answer or 0,
                    "ms": ms}          # the server's own time for the call (not summed: a night's wall says it)
    u = data.get("usage")
    if isinstance(u, dict) and count(u.get("prompt_tokens")) is not None:
        prompt = count(u.get("prompt_tokens"))
        details = u.get("prompt_tokens_details")
        cached = min(prompt, count(details.get("cached_tokens")) or 0) if isinstance(details, dict) else 0
        return {"prompt": prompt, "evaluated": prompt - cached, "cached": cached,
                "answer": count(u.get("completion_tokens")) or 0}
    return None


def add(total: Optional[dict], one: Optional[dict]) -> dict:
    """The night's sum with one call's tokens added (a call the server said nothing of adds nothing)."""
    out = {k: int((total or {}).get(k) or 0) for k in (*KEYS, "timed")}
    if one:
        for k in KEYS:
            out[k] += int(one.get(k) or 0)
        out["timed"] += 1
    return out


def words(total: Optional[dict]) -> Optional[str]:
    """"4,210 prompt tokens (1,032 evaluated, 3,178 from the server's cache), 311 answer tokens", or None."""
    if not total or not total.get("timed"):
        return None
    return (f"{total['prompt']:,} prompt tokens ({total['evaluated']:,} evaluated, {total['cached']:,} from the "
            f"server's cache), {total['answer']:,} answer tokens")
