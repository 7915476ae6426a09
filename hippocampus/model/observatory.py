"""The node's Observatory, for a model server it runs as a registered service: ensure it, stop it."""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import requests

from hippocampus.config import LifecycleConfig, redact, resolve_pointer
from hippocampus.model.cancellable import CancellableSession
from hippocampus.model.fit import json_object

HOLDER = "seren-hippocampus"


def observatory(lc: LifecycleConfig, verb: str, reason: str, session=requests) -> dict:
    """POST the node's Observatory ensure (answered {ok, ready, started, already_running, error?}: started False
    means somebody else's server) or stop. An HTTP error, or an answer that is not a JSON object, raises."""
    body, timeout = {"holder": HOLDER, "reason": reason}, 60
    if verb == "ensure":
        body["wait_seconds"], timeout = lc.ready_timeout_seconds, lc.ready_timeout_seconds + 90
    token = resolve_pointer(lc, "observatory_token")     # one that yields nothing was named at load
    url = f"{lc.observatory_url.rstrip('/')}/api/v1/service/{lc.observatory_service}/{verb}"
    resp = session.post(url, json=body, timeout=timeout, headers={"Authorization": f"Bearer {token}"} if token else {})
    data = json_object(resp, any_status=True) or {}
    if resp.status_code >= 400 or not data:
        detail = data.get("error") or data.get("detail") or resp.text[:200]
        raise RuntimeError(f"HTTP {resp.status_code} from {redact.url(url)}: {detail}")
    return data


def ensure_unless_stopped(lc: LifecycleConfig, reason: str, stopped: Callable[[], bool],
                          wait: Callable[[], Any]) -> Optional[dict]:
    """The ensure (which waits for the model to load) on a thread of its own, looked at after each wait(): None
    once stopped() says so (the call is cut short); else its answer, or its error raised."""
    session, out = CancellableSession(), {}

    def ask() -> None:
        try:
            out["data"] = observatory(lc, "ensure", reason, session=session)
        except Exception as exc:  # noqa: BLE001 - raised again on the caller's thread
            out["error"] = exc

    asking = threading.Thread(target=ask, name="hippocampus-observatory-ensure", daemon=True)
    asking.start()
    while asking.is_alive() and not stopped():
        wait()
    if asking.is_alive():
        session.cancel()
        return None
    session.close()
    if "error" in out:
        raise out["error"]
    return out["data"]
