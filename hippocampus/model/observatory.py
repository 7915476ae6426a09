"""The node's Observatory, for a model server it runs as a registered service: ensure it, stop it."""
from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Any, Callable, Optional

import requests

from hippocampus import outbound, transport_words
from hippocampus.config import LifecycleConfig, redact, resolve_pointer
from hippocampus.model.fit import json_object

HOLDER = "seren-hippocampus"
ANSWER_CAP = 64 * 1024      # an Observatory's answer is a small JSON object
LEFT_BEHIND = "the config no longer names the Observatory service that started it"
LEFT_BEHIND_SECONDS = 5     # the start's stop of a model a previous run left: a hung Observatory holds it no longer
ENSURE_ANSWER_SECONDS = 5   # an ensure's answer, past the wait_seconds (model.lifecycle.ready_timeout_seconds) it asks
log = logging.getLogger(__name__)


def observatory(lc: LifecycleConfig, verb: str, reason: str, session: Optional[outbound.Session] = None,
                seconds: float = 60) -> dict:
    """POST the node's Observatory ensure (answered {ok, ready, started, already_running, error?}: started False
    means somebody else's server) or stop, within one deadline, its answer read up to ANSWER_CAP. An HTTP error,
    an answer that is not a JSON object, or a stop answered ok: false, raises."""
    body, timeout = {"holder": HOLDER, "reason": reason}, seconds
    if verb == "ensure":
        body["wait_seconds"], timeout = lc.ready_timeout_seconds, lc.ready_timeout_seconds + ENSURE_ANSWER_SECONDS
    token = resolve_pointer(lc, "observatory_token")     # one that yields nothing was named at load
    url = f"{lc.observatory_url.rstrip('/')}/api/v1/service/{lc.observatory_service}/{verb}"
    with outbound.session_or_own(session) as s:
        resp = outbound.call(s, "POST", url, json=body, deadline=outbound.Deadline(timeout), cap=ANSWER_CAP,
                             headers={"Authorization": f"Bearer {token}"} if token else {})
    data = json_object(resp, any_status=True) or {}
    if resp.status_code >= 400 or not data or (verb == "stop" and data.get("ok") is False):    # the model still runs
        detail = data.get("error") or data.get("detail") or resp.text[:200]
        raise RuntimeError(f"HTTP {resp.status_code} from {redact.url(url)}: {detail}")
    return data


def failed(exc: Exception, url: str, seconds: float, setting: str = "") -> str:
    """Why a call to the Observatory at `url` failed, in words (a hung one: "did not answer within N s")."""
    if not isinstance(exc, requests.RequestException):
        return transport_words.in_words(exc)
    return transport_words.failed(exc, "the Observatory", redact.url(url), seconds=seconds, setting=setting,
                                  connect_seconds=min(seconds, outbound.CONNECT_SECONDS))[1]


def ensure_failed(exc: Exception, lc: LifecycleConfig) -> str:
    """Why an ensure failed, in words (a hung one: "did not answer within N s (model.lifecycle...)")."""
    return failed(exc, lc.observatory_url, lc.ready_timeout_seconds + ENSURE_ANSWER_SECONDS,
                  f"model.lifecycle.ready_timeout_seconds + {ENSURE_ANSWER_SECONDS} s")


def unless_stopped(lc: LifecycleConfig, verb: str, reason: str, stopped: Callable[[], bool],
                   wait: Callable[[], Any], seconds: float = 60) -> Optional[dict]:
    """The call (an ensure waits for the model to load) on a thread of its own, looked at after each wait(): None
    once stopped() says so (the call is cut short); else its answer, or its error raised."""
    session, out = outbound.CancellableSession(), {}

    def ask() -> None:
        try:
            out["data"] = observatory(lc, verb, reason, session=session, seconds=seconds)
        except Exception as exc:  # noqa: BLE001 - raised again on the caller's thread
            out["error"] = exc

    asking = threading.Thread(target=ask, name=f"hippocampus-observatory-{verb}", daemon=True)
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


def record(lc: LifecycleConfig) -> dict:
    """What the state file keeps of a model the Observatory started for us: which service, at which Observatory."""
    return {"how": "observatory", "observatory_url": lc.observatory_url, "observatory_service": lc.observatory_service}


def names(lc: LifecycleConfig, kept: dict) -> bool:
    """The config still has the Observatory run the service that started the model (a record from before they were
    kept names no service: taken as this one)."""
    return lc.via_observatory and (kept.get("observatory_url"), kept.get("observatory_service")) in \
        ((None, None), (lc.observatory_url, lc.observatory_service))


def stop_left_behind(lc: LifecycleConfig, record: dict, emit: Callable[..., Any], stopped: Callable[[], bool],
                     wait: Callable[[], Any]) -> str:
    """The model the Observatory started for a previous run (its state `record`), which the config no longer
    names: stopped there ("", and model_stopped emitted), else the sentence that says it is left running and how
    to stop it (also logged). The service's stop (stopped()) cuts the call short: the record stays, and the
    sentence says the next start asks again."""
    url = record.get("observatory_url") or lc.observatory_url      # a record from before they were kept
    service = record.get("observatory_service") or lc.observatory_service
    where = f"{service} at {redact.url(url)}" if url and service else "its service in the Observatory"
    said = f"the model the Observatory started for a previous run ({where})"
    try:
        if not (url and service):
            raise RuntimeError("the state file does not say which Observatory service it was")
        if unless_stopped(dataclasses.replace(lc, observatory_url=url, observatory_service=service), "stop",
                          LEFT_BEHIND, stopped, wait, LEFT_BEHIND_SECONDS) is not None:
            log.info("model lifecycle: stopped %s: %s", said, LEFT_BEHIND)
            emit("model_stopped", how="observatory", why=LEFT_BEHIND)     # up since a previous run
            return ""
        said += " was not stopped: the stop was cut short by the service's own stop; the next start asks again"
    except Exception as exc:  # noqa: BLE001 - said, never raised
        how = "stop it in the Observatory"
        if url and service:
            how = f"POST {redact.url(url.rstrip('/'))}/api/v1/service/{service}/stop"
        said += f" could not be stopped ({failed(exc, url, LEFT_BEHIND_SECONDS)}) and is left running, holding " \
            f"its memory: {how}"
    log.warning("model lifecycle: %s", said)
    return said
