"""The hippocampus's MemoryClient, plus the calls only tests make (the service never reviews, forgets
or reads long-term memory wholesale): the same plumbing and the same two errors, for checking Memory's
side of what the service did."""
from __future__ import annotations

from typing import Any, Optional

from hippocampus.memory import MemoryClient, MemoryError_


class ReviewingClient(MemoryClient):
    """MemoryClient with a reviewer's and an auditor's calls on top."""

    def reachable(self) -> bool:
        try:
            self.health()
            return True
        except MemoryError_:
            return False

    def add_short(self, content: str, topic: Optional[str] = None, **fields: Any) -> dict:
        return self.request("POST", "/short", json={"content": content, "topic": topic, **fields})

    def latest_brief(self) -> Optional[dict]:
        entries = self.open_briefs(limit=1)
        return entries[0] if entries else None

    def review_draft(self, draft_id: str, decisions: list, note: Optional[str] = None) -> dict:
        body: dict = {"decisions": decisions}
        if note:
            body["note"] = note
        return self.request("POST", f"/drafts/{draft_id}/review", json=body)

    def audit(self, limit: int = 20) -> dict:
        return self.request("GET", "/audit", params={"limit": limit})

    def long(self, include_superseded: bool = False, include_satellites: bool = False) -> list:
        return self.request("GET", "/long", params={
            "include_superseded": str(include_superseded).lower(),
            "include_satellites": str(include_satellites).lower()}).get("entries", [])

    def forget(self, memory_id: str, reason: str) -> dict:
        return self.request("POST", f"/long/{memory_id}/forget", json={"reason": reason})

    def tombstones(self) -> list:
        return self.request("GET", "/tombstones").get("entries", [])
