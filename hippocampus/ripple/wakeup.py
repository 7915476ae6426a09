"""The wake-up view /status shows: the checks' lines summed up in one sentence. The wake-up watch
(actors/watch.py) computes it on the supervisor's beat, at start-up and after each ripple."""
from __future__ import annotations

import dataclasses
import sys
import time
from typing import Optional

from hippocampus.config import RippleConfig, redact
from hippocampus.ripple.check import checks
from hippocampus.ripple.claude import is_windows
from hippocampus.ripple.fire import argv_of


def route(rcfg: RippleConfig, platform: str = sys.platform) -> str:
    kind = (rcfg.type or "").strip().lower()
    if kind == "endpoint":
        return f"POST {redact.url(rcfg.url) or '(no url)'}"
    if kind == "script":
        argv = argv_of(rcfg, is_windows(platform))
        who = f" as {rcfg.run_as}" if rcfg.run_as else ""
        where = f" in {rcfg.cwd}" if rcfg.cwd else ""
        return f"{argv[0] if argv else '(no command)'}{who}{where}"
    return "off"


def wakeup_view(rcfg: RippleConfig, lines: list, *, platform: str = sys.platform,
                checked_at: Optional[float] = None) -> dict:
    """What /status shows as `wakeup` (without the last ripple per event, which the status adds)."""
    kind = (rcfg.type or "").strip().lower() or "off"
    bad = [ln for ln in lines if not ln.ok]
    if kind == "off":
        ok, summary = None, "off: nothing wakes the main model (ripple.type is empty)"
    elif not bad:
        ok, summary = True, f"ok: {route(rcfg, platform)} ({len(lines)} checks)"
    else:
        ok = False
        summary = f"would fail: {bad[0].check}: {bad[0].text}"
        if len(bad) > 1:
            summary += f" (and {len(bad) - 1} more: {', '.join(b.check for b in bad[1:])})"
    return {"ok": ok, "type": kind, "summary": summary, "lines": [dataclasses.asdict(ln) for ln in lines],
            "checked_at": time.time() if checked_at is None else checked_at}


def service_view(cfg) -> dict:
    """The wakeup view for a whole Config, as the service computes it."""
    return wakeup_view(cfg.ripple, checks(cfg.ripple, memory_url=cfg.memory.url))
