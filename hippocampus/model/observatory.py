"""The node's Observatory, for a model server it runs as a registered service: ensure it, stop it.

POST {observatory_url}/api/v1/service/{observatory_service}/{ensure|stop} with the bearer from the
observatory_token pointers. An HTTP error, or an answer that is not a JSON object, raises.
"""
from __future__ import annotations

import requests

from hippocampus.config import redact
from hippocampus.config import LifecycleConfig

HOLDER = "seren-hippocampus"


class Observatory:
    def __init__(self, lc: LifecycleConfig):
        self.lc = lc

    @property
    def service(self) -> str:
        return self.lc.observatory_service

    def ensure(self, reason: str) -> dict:
        """{ok, ready, started, already_running, error?}: started False means somebody else's server."""
        body = {"holder": HOLDER, "reason": reason, "wait_seconds": self.lc.ready_timeout_seconds}
        return self._post("ensure", body, timeout=self.lc.ready_timeout_seconds + 90)

    def stop(self, reason: str) -> dict:
        return self._post("stop", {"holder": HOLDER, "reason": reason}, timeout=60)

    def _post(self, verb: str, body: dict, timeout: float) -> dict:
        from hippocampus.config import resolve_pointer

        token = resolve_pointer(self.lc, "observatory_token")     # one that yields nothing was named at load
        url = f"{self.lc.observatory_url.rstrip('/')}/api/v1/service/{self.service}/{verb}"
        resp = requests.post(url, json=body, timeout=timeout,
                             headers={"Authorization": f"Bearer {token}"} if token else {})
        try:
            data = resp.json()
        except ValueError:
            data = None
        data = data if isinstance(data, dict) else {}
        if resp.status_code >= 400 or not data:
            detail = data.get("error") or data.get("detail") or resp.text[:200]
            raise RuntimeError(f"HTTP {resp.status_code} from {redact.url(url)}: {detail}")
        return data
