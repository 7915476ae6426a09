"""The hand that reviews: calls Memory's own routes, as the main model (or a person) does."""
from __future__ import annotations

from typing import Optional

import requests


class MemoryHand:
    """Writes fragments and briefs, reads and reviews drafts, reads long-term memory, over HTTP."""

    def __init__(self, url: str, bearer: str = ""):
        self.url = url.rstrip("/")
        self.s = requests.Session()
        if bearer:
            self.s.headers["Authorization"] = f"Bearer {bearer}"

    def _req(self, method: str, path: str, **kw):
        r = self.s.request(method, self.url + path, timeout=30, **kw)
        r.raise_for_status()
        return r.json()

    def short(self, content: str, topic: Optional[str] = None, ts: Optional[float] = None) -> str:
        """A short-term fragment (at `ts`, if given); returns its id."""
        body: dict = {"content": content, "topic": topic}
        if ts is not None:
            body["ts"] = ts
        return self._req("POST", "/short", json=body)["id"]

    def brief(self, summary: str, promote=(), noise=()) -> str:
        return self._req("POST", "/brief", json={"summary": summary, "promote_hints": list(promote),
                                                 "noise_hints": list(noise)})["id"]

    def draft(self, draft_id: str) -> dict:
        return self._req("GET", f"/drafts/{draft_id}")

    def review(self, draft_id: str, decisions: list) -> dict:
        return self._req("POST", f"/drafts/{draft_id}/review", json={"decisions": decisions})

    def long(self) -> list:
        return self._req("GET", "/long", params={"include_satellites": "false"})["entries"]
