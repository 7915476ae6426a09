"""The webhook: telling someone what happened, best effort. Each event in ``notify.events`` is POSTed as
``{"service": "seren-hippocampus", ...event}`` with the configured bearer; only a 2xx counts as delivered.
Delivery never raises and never fails a sleep: the outcome is a dict the caller records on the event."""
from __future__ import annotations

import json
from typing import Any, Callable, Optional

import requests

from hippocampus import SERVICE, transport_words as tw
from hippocampus.config import NotifyConfig, redact

MAX_ERROR = 400
_NOT_SENT = ("delivered", "delivery_error", "ripple")    # bookkeeping of earlier deliveries and ripples


def post_json(url: str, body: dict, bearer: Callable[[], str], timeout: float, post: Optional[Callable] = None,
              who: str = "the webhook", setting: str = "notify.timeout_seconds") -> tuple:
    """(status, error) of one JSON POST with the bearer (the webhook's and the ripple endpoint's): error is
    None only for a 2xx, else a sentence naming `who` (the transport table's words); status is None when nothing
    answered. Never raises."""
    where = redact.url(url)
    try:
        token = bearer()
    except Exception as exc:  # noqa: BLE001 - an answer, never a raise
        return None, f"the bearer for {who} could not be read ({tw.in_words(exc)}), so nothing was sent"
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    try:
        resp = (post or requests.post)(url, data=json.dumps(body, default=str).encode("utf-8"), headers=headers,
                                       timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - an answer, never a raise
        return None, tw.failed(exc, who, where, seconds=timeout, setting=setting)[1]
    if 200 <= resp.status_code < 300:
        return resp.status_code, None
    return resp.status_code, tw.answered_error(who, where, resp.status_code, tw.reason(resp, MAX_ERROR) or "")


def outcome(status: Optional[int], error: Optional[str], ok_key: str, **first: Any) -> dict:
    """The outcome dict the caller records on the event: {ok_key, status?, error?}."""
    out = {**first, ok_key: error is None}
    out.update({k: v for k, v in (("status", status), ("error", error)) if v is not None})
    return out


class Webhook:
    def __init__(self, cfg: NotifyConfig, session: Optional[requests.Session] = None) -> None:
        self.cfg = cfg
        self._session = session

    @property
    def configured(self) -> bool:
        return bool((self.cfg.webhook_url or "").strip())

    def wants(self, event_type: str) -> bool:
        return self.configured and event_type in (self.cfg.events or [])

    def deliver(self, event: dict) -> dict:
        """POST the event; {"delivered": True, "status"} only on a 2xx."""
        if not self.configured:
            return {"delivered": False, "error": "notify.webhook_url is empty"}
        body = {"service": SERVICE, **{k: v for k, v in event.items() if k not in _NOT_SENT}}
        post = self._session.post if self._session is not None else None
        return outcome(*post_json(self.cfg.webhook_url.strip(), body, self.cfg.resolve_bearer,
                                  float(self.cfg.timeout_seconds), post), "delivered")
