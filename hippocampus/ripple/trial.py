"""`check-ripple --fire`: one harmless wake-up through the real route, with its exit code, time and output."""
from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

from hippocampus.config import RippleConfig
from hippocampus.ripple.fire import WOKEN, Ripple
from hippocampus.ripple.probe import Line
from hippocampus.store import private

FIRE_EVENT = "wake_check"
OUTPUT_LINES = 5
LINE_CHARS = 200
FIRE_MESSAGE = (f"{WOKEN}\n\nThis is only a wake-up check (seren-hippocampus check-ripple --fire), not a task: "
                "reply OK; nothing to do. Do not call any tools.")


def _log_dir(preferred: Path) -> tuple:
    """The state folder's ripple.log when it can be appended to, else a temporary folder. A state folder made
    here is made private (0700), as the service makes it, and ripple.log 0600: they hold what was said."""
    try:
        private.make_dir(preferred)
        os.close(private.open_append(preferred / "ripple.log"))
        return preferred, None
    except OSError:
        tmp = tempfile.mkdtemp(prefix="seren-ripple-check-")
        return Path(tmp), tmp


def fire(rcfg: RippleConfig, *, log_dir: Path, timeout: Optional[float] = None) -> Line:
    """One harmless wake-up through the real route (hippocampus.ripple.Ripple): exit code, time, output."""
    cfg = dataclasses.replace(rcfg, messages={FIRE_EVENT: FIRE_MESSAGE}, events=[FIRE_EVENT])
    where, tmp = _log_dir(Path(log_dir))
    log = where / "ripple.log"
    offset = log.stat().st_size if log.exists() else 0
    ripple = Ripple(cfg, log_dir=where)
    started = time.monotonic()
    outcome = ripple.fire({"type": FIRE_EVENT, "event": FIRE_EVENT})
    try:
        if not outcome.get("ok"):
            what = outcome.get("error") or outcome.get("skipped") or "did not start"
            status = f" (HTTP {outcome['status']})" if "status" in outcome else ""
            return Line("fire", False, f"the wake-up did not go out{status}: {what}")
        if outcome.get("type") == "endpoint":
            return Line("fire", True, f"the receiver took the wake-up: HTTP {outcome.get('status')} in "
                                      f"{time.monotonic() - started:.1f} s")
        limit = float(cfg.timeout_seconds if timeout is None else timeout)
        done = ripple.wait(FIRE_EVENT, limit)
        seconds = time.monotonic() - started
        if done is None:
            ripple.shutdown()
            return Line("fire", False, f"pid {outcome.get('pid')} did not finish within {limit:g} s and was "
                                       f"killed{_first_lines(log, offset)}")
        code, head = done.get("exit_code"), _first_lines(log, offset)
        text = f"pid {outcome.get('pid')} as {outcome.get('run_as')} exited {code} after {seconds:.1f} s{head}"
        if code == 0:
            return Line("fire", True, text)
        return Line("fire", False, text + " - see the output above, and ripple.log "
                                          f"({log if tmp is None else 'not kept'})")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _first_lines(log: Path, offset: int, n: int = OUTPUT_LINES) -> str:
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            text = f.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln.rstrip()[:LINE_CHARS] for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "; no output"
    more = f"\n        ... ({len(lines) - n} more line(s) in {log})" if len(lines) > n else ""
    return "; output:\n" + "\n".join("        " + ln for ln in lines[:n]) + more
