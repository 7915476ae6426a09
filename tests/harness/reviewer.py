"""Drive Memory exactly as the main model would: seed fragments, write briefs, review drafts."""
from __future__ import annotations

from typing import Optional

import requests  # noqa: F401

from hippocampus.demo_support import MemoryHand as _DemoHand
from hippocampus.demo_support import wait_for  # noqa: F401 - tests import it from here

DAY = 86400.0


class MemoryHand(_DemoHand):
    """Calls Memory's own routes, as the main model (or a person) does: the demo's hand, plus what tests need."""

    def short(self, content: str, topic: Optional[str] = None, ts: Optional[float] = None, **extra) -> str:
        if not extra:
            return super().short(content, topic, ts)
        body = {"content": content, "topic": topic, "extra": extra}
        if ts is not None:
            body["ts"] = ts
        return self._req("POST", "/short", json=body)["id"]

    def shorts(self) -> list:
        return self._req("GET", "/short", params={"limit": 1000})["entries"]

    def preserve(self, short_id: str) -> dict:
        return self._req("POST", f"/short/{short_id}/preserve")

    def open_briefs(self) -> list:
        return self._req("GET", "/brief")["entries"]

    def all_briefs(self) -> list:
        return self._req("GET", "/brief", params={"include_consumed": "true", "limit": 100})["entries"]

    def draft(self, draft_id: str, review: bool = False) -> dict:
        return self._req("GET", f"/drafts/{draft_id}", params={"review": "true"} if review else None)

    def approve_all(self, draft_id: str) -> dict:
        d = self.draft(draft_id)
        return self.review(draft_id, [{"op": op["index"], "verdict": "approve"} for op in d["operations"]
                                      if op.get("status", "pending") == "pending"])

    def long(self, satellites: bool = False) -> list:
        return self._req("GET", "/long", params={"include_satellites": str(satellites).lower()})["entries"]

    def near(self) -> list:
        return self._req("GET", "/near", params={"include_completed": "true"})["entries"]

    def forget(self, memory_id: str, reason: str = "asked to forget") -> dict:
        return self._req("POST", f"/long/{memory_id}/forget", json={"reason": reason})

    def tombstones(self) -> list:
        return self._req("GET", "/tombstones")["entries"]
