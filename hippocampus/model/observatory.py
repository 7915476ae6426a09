"""The node's Observatory, for a model server it runs as a registered service: ensure it, stop it."""
from __future__ import annotations

import requests

from hippocampus.config import LifecycleConfig, redact, resolve_pointer
from hippocampus.model.fit import json_object

HOLDER = "seren-hippocampus"


def observatory(lc: LifecycleConfig, verb: str, reason: str) -> dict:
    """POST the node's Observatory ensure (answered {ok, ready, started, already_running, error?}: started False
    means somebody else's server) or stop. An HTTP error, or an answer that is not a JSON object, raises."""
    body, timeout = {"holder": HOLDER, "reason": reason}, 60
    if verb == "ensure":
        body["wait_seconds"], timeout = lc.ready_timeout_seconds, lc.ready_timeout_seconds + 90
    token = resolve_pointer(lc, "observatory_token")     # one that yields nothing was named at load
    url = f"{lc.observatory_url.rstrip('/')}/api/v1/service/{lc.observatory_service}/{verb}"
    resp = requests.post(url, json=body, timeout=timeout, headers={"Authorization": f"Bearer {token}"} if token else {})
    data = json_object(resp, any_status=True) or {}
    if resp.status_code >= 400 or not data:
        detail = data.get("error") or data.get("detail") or resp.text[:200]
        raise RuntimeError(f"HTTP {resp.status_code} from {redact.url(url)}: {detail}")
    return data
