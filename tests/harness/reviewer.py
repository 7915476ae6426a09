"""Drive Memory exactly as the main model would: seed fragments, write briefs, review drafts."""
from __future__ import annotations

from typing import Optional

from hippocampus.demo.memory_server import MemoryHand as _DemoHand
from hippocampus.demo.waiting import wait_for  # noqa: F401 - tests import it from here


class MemoryHand(_DemoHand):
    """The demo's hand, plus the reads and writes only tests make."""

    def draft(self, draft_id: str, review: bool = False) -> dict:
        """A draft; with review=True as a reviewer reads it (each operation's earlier attempts)."""
        return self._req("GET", f"/drafts/{draft_id}", params={"review": "true"} if review else None)

    def drafts(self, status: Optional[str] = None) -> list:
        params: dict = {"limit": 200}
        if status:
            params["status"] = status
        return self._req("GET", "/drafts", params=params)["entries"]

    def shorts(self) -> list:
        return self._req("GET", "/short", params={"limit": 1000})["entries"]

    def preserve(self, short_id: str) -> dict:
        return self._req("POST", f"/short/{short_id}/preserve")

    def open_briefs(self) -> list:
        return self._req("GET", "/brief")["entries"]

    def all_briefs(self) -> list:
        return self._req("GET", "/brief", params={"include_consumed": "true", "limit": 100})["entries"]

    def approve_all(self, draft_id: str) -> dict:
        d = self.draft(draft_id)
        return self.review(draft_id, [{"op": op["index"], "verdict": "approve"} for op in d["operations"]
                                      if op.get("status", "pending") == "pending"])

    def near(self) -> list:
        return self._req("GET", "/near", params={"include_completed": "true"})["entries"]

    def forget(self, memory_id: str, reason: str = "asked to forget") -> dict:
        return self._req("POST", f"/long/{memory_id}/forget", json={"reason": reason})

    def tombstones(self) -> list:
        return self._req("GET", "/tombstones")["entries"]
