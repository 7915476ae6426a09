"""The quality report kept fresh in the background (a plain object; the quality actor drives it), and
forgetting finished on the same beat.

Refreshed when something happened (a new event, or a nudge: the reviewer's verdicts are in), at most every
MIN_GAP_SECONDS, and every REFRESH_SECONDS regardless. One read of Memory's drafts per refresh, with a short
timeout so a stop never waits on it; packets are summarised once per version of their file; a Memory that
does not answer keeps the last report, marked with the error. Each refresh also scrubs the purges Memory's
tombstones list from the files here (scrub.forget_tombstones), so a purge made in Memory itself leaves no
copy here for longer than REFRESH_SECONDS.
"""
from __future__ import annotations

import time
from typing import Optional

from hippocampus.memory import MemoryError_
from hippocampus.replay import quality
from hippocampus.store import scrub
from hippocampus.store.capture import store_for

REFRESH_SECONDS = 60.0
MIN_GAP_SECONDS = 1.0
READ_TIMEOUT = 5.0
DRAFTS_READ = 1000


class QualityWatch:
    def __init__(self, ctx, clock=time.monotonic):
        self.ctx = ctx
        self.store = store_for(ctx.cfg)
        self.clock = clock
        self.report: Optional[dict] = None
        self._cache: dict = {}          # file name -> (mtime_ns, summary)
        self._last: Optional[float] = None
        self._marker = None

    def _event_marker(self):
        newest = self.ctx.events.list(limit=1)
        e = newest[0] if newest else {}
        return e.get("seq"), e.get("count"), e.get("last_at")

    def due(self) -> bool:
        if self._last is None:
            return True
        gap = self.clock() - self._last
        return gap >= REFRESH_SECONDS or (gap >= MIN_GAP_SECONDS and self._event_marker() != self._marker)

    def refresh(self) -> dict:
        self._marker = self._event_marker()
        self._last = self.clock()
        try:
            body = self.ctx.memory.request("GET", "/drafts", params={"limit": DRAFTS_READ}, timeout=READ_TIMEOUT)
            drafts = body.get("entries", []) if isinstance(body, dict) else []
        except MemoryError_ as exc:
            self.report = {**(self.report or {"ready": False, "groups": []}), "error": str(exc), "stale": True}
            return self.report
        scrub.forget_tombstones(self.ctx, drafts)
        self.report = quality.report(drafts, self._summaries(), self.ctx.clock.now())
        return self.report

    def _summaries(self) -> list:
        fresh: dict = {}
        for path in self.store.paths():
            try:
                mtime = path.stat().st_mtime_ns
            except OSError:
                continue
            cached = self._cache.get(path.name)
            if cached is None or cached[0] != mtime:
                packet = self.store.read_path(path)
                cached = None if packet is None else (mtime, quality.summarize_packet(packet))
            if cached is not None:
                fresh[path.name] = cached
        self._cache = fresh             # a file gone is forgotten
        return [summary for _, summary in fresh.values()]
