"""One plain-words sentence for the state the service is in, from the status board."""
from __future__ import annotations

import time
from typing import Optional


def _hm(ts: Optional[float]) -> str:
    return time.strftime("%H:%M", time.localtime(ts)) if ts else "?"


def explain(s: dict) -> str:
    """The most important thing first: what is broken, then what is happening, then what is next."""
    parts = []
    mem = s.get("memory") or {}
    if mem.get("reachable") is False:
        parts.append(f"Memory at {mem.get('url')} is not answering: nothing can sleep until it does "
                     f"({mem.get('error') or 'no answer'})")
    failed = [n for n, a in (s.get("actors") or {}).items() if a.get("state") == "failed"]
    if failed:
        parts.append("actor(s) " + ", ".join(failed) + " crashed too often and are down: restart them "
                     "from the viewer or POST /actors/<name>/restart")
    for key in ("state_error", "events_error"):
        if s.get(key):
            parts.append(s[key])
    ml = s.get("model_lifecycle") or {}
    if ml.get("state") == "failed" and ml.get("last_error"):
        parts.append(f"the model failed to start: {ml['last_error']}")
    busy = s.get("busy")
    prog = s.get("progress") or {}
    if busy and prog.get("what") == "sleeping" and prog.get("piles"):
        parts.append(f"sleeping since {_hm(prog.get('since'))}, {prog.get('piles_done', 0)} of "
                     f"{prog['piles']} pile(s) drafted")
    elif busy:
        parts.append(f"{busy.get('what')} running since {_hm(busy.get('since'))}")
    last = s.get("last_sleep") or {}
    if last.get("error"):
        parts.append(f"the last sleep failed at {_hm(last.get('finished_at'))}: {last['error']} "
                     "(its brief is kept for the next check)")
    elif last.get("interrupted"):
        parts.append(f"the last sleep was interrupted by a stop at {_hm(last.get('finished_at'))}: nothing "
                     "was posted and its brief is kept for the next check")
    elif (s.get("last_check") or {}).get("status") == "error":
        parts.append(f"the last check failed: {s['last_check'].get('error')}")
    wake = s.get("wakeup") or {}
    if wake.get("ok") is False:
        parts.append(f"a wake-up of the main model {wake.get('summary') or 'would fail'} "
                     "(seren-hippocampus check-ripple says how to fix it)")
    if s.get("redrafts_waiting_since"):
        parts.append(f"redrafts have waited since {_hm(s['redrafts_waiting_since'])} for sleep time "
                     "(tend cycle off); POST /tend does them now")
    if s.get("brief_wanted"):
        parts.append(f"asked the main model for a brief at {_hm(s.get('brief_requested_at'))}; waiting")
    if not s.get("model_configured"):
        parts.append("mechanical mode: no model configured")
    if s.get("mode") == "external":
        parts.append("external mode: something else drives the ticks (POST /nudge, /tend, /check)")
    if not parts:
        when = s.get("bedtime_at")
        if when and when > time.time():
            parts.append(f"quiet and healthy; bedtime at {_hm(when)}")
        else:
            parts.append("quiet and healthy; past bedtime, waiting for a brief")
    sentence = "; ".join(parts)
    return sentence[0].upper() + sentence[1:] + "."
