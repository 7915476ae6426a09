"""The node's Observatory, for a model server it runs as a registered service: ensure it, stop it.

POST {observatory_url}/api/v1/service/{observatory_service}/{ensure|stop} with the bearer from the
observatory_token pointers. An HTTP error, or an answer that is not a JSON object, raises.
"""
from __future__ import annotations

import requests

from hippocampus.config import LifecycleConfig, redact

HOLDER = "seren-hippocampus"


def ensure(lc: LifecycleConfig, reason: str) -> dict:
    """{ok, ready, started, already_running, error?}: started False means somebody else's server."""
    body = {"holder": HOLDER, "reason": reason, "wait_seconds": lc.ready_timeout_seconds}
    return _post(lc, "ensure", body, timeout=lc.ready_timeout_seconds + 90)


def stop(lc: LifecycleConfig, reason: str) -> dict:
    return _post(lc, "stop", {"holder": HOLDER, "reason": reason}, timeout=60)


def _post(lc: LifecycleConfig, verb: str, body: dict, timeout: float) -> dict:
    from hippocampus.config import resolve_pointer

    token = resolve_pointer(lc, "observatory_token")     # one that yields nothing was named at load
    url = f"{lc.observatory_url.rstrip('/')}/api/v1/service/{lc.observatory_service}/{verb}"
    resp = requests.post(url, json=body, timeout=timeout, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        data = resp.json()
    except ValueError:
        data = None
    data = data if isinstance(data, dict) else {}
    if resp.status_code >= 400 or not data:
        detail = data.get("error") or data.get("detail") or resp.text[:200]
        raise RuntimeError(f"HTTP {resp.status_code} from {redact.url(url)}: {detail}")
    return data
