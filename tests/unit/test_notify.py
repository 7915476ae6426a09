"""The webhook, against a real local HTTP receiver."""
from __future__ import annotations

import time

import pytest
import requests

from hippocampus.config import NotifyConfig, build
from hippocampus.ripple.fire import Webhook
from tests.harness.receiver import Receiver


@pytest.fixture
def receiver():
    r = Receiver("/hook")
    yield r
    r.close()


EVENT = {"type": "draft_submitted", "at": 1700000000.5, "draft_id": "d-1", "operations": 4}


def test_configured_and_wants():
    assert not Webhook(NotifyConfig()).configured
    assert not Webhook(NotifyConfig()).wants("draft_submitted")
    assert not Webhook(NotifyConfig(webhook_url="   ")).configured
    hook = Webhook(NotifyConfig(webhook_url="http://127.0.0.1:9/hook"))
    assert hook.configured
    assert hook.wants("draft_submitted") and hook.wants("sleep_failed")
    assert not hook.wants("sleep_done")


def test_docket_submitted_is_aliased_by_config():
    cfg = build({"notify": {"webhook_url": "http://x/hook", "events": ["docket_submitted", "purged"]}},
                environ={})
    hook = Webhook(cfg.notify)
    assert hook.wants("draft_submitted") and hook.wants("purged") and not hook.wants("sleep_failed")


def test_delivered_on_2xx_with_bearer_and_body(receiver):
    hook = Webhook(NotifyConfig(webhook_url=receiver.url, bearer_token="tok-1"))
    assert hook.deliver(dict(EVENT)) == {"delivered": True, "status": 200}
    got = receiver.requests[0]
    assert got["path"] == "/hook"
    assert got["headers"]["Authorization"] == "Bearer tok-1"
    assert got["headers"]["Content-Type"] == "application/json"
    assert got["body"] == {"service": "seren-hippocampus", **EVENT}


def test_202_counts_and_no_bearer_sends_none(receiver):
    receiver.status = 202
    hook = Webhook(NotifyConfig(webhook_url=receiver.url))
    assert hook.deliver(dict(EVENT)) == {"delivered": True, "status": 202}
    assert "Authorization" not in receiver.requests[0]["headers"]


def test_bookkeeping_fields_are_not_sent(receiver):
    hook = Webhook(NotifyConfig(webhook_url=receiver.url))
    ev = dict(EVENT, ripple={"ok": True}, delivered=False, delivery_error="x")
    assert hook.deliver(ev)["delivered"] is True
    assert receiver.requests[0]["body"] == {"service": "seren-hippocampus", **EVENT}


def test_500_is_not_delivered(receiver):
    receiver.status = 500
    receiver.answer = b'{"error": "the bridge fell over"}'
    res = Webhook(NotifyConfig(webhook_url=receiver.url)).deliver(dict(EVENT))
    assert res == {"delivered": False, "status": 500,
                   "error": f"the webhook at {receiver.url} answered an error (HTTP 500): 'the bridge fell over'"}


def test_error_text_is_cut(receiver):
    receiver.status = 503
    receiver.content_type = "text/plain"
    receiver.answer = b"z" * 2000
    res = Webhook(NotifyConfig(webhook_url=receiver.url)).deliver(dict(EVENT))
    assert res["delivered"] is False and res["status"] == 503
    assert res["error"].startswith(f"the webhook at {receiver.url} answered an error (HTTP 503): 'zzz")
    assert res["error"].count("z") == 200                         # what it said, cut


def test_a_hanging_webhook_times_out_quickly(receiver):
    receiver.delay = 10
    hook = Webhook(NotifyConfig(webhook_url=receiver.url, timeout_seconds=0.5))
    t0 = time.monotonic()
    res = hook.deliver(dict(EVENT))
    elapsed = time.monotonic() - t0
    assert elapsed < 2, elapsed
    assert res["delivered"] is False and "status" not in res
    assert res["error"] == f"the webhook at {receiver.url} did not answer within 0.5 s (notify.timeout_seconds)"


def test_nobody_listening_is_an_answer(receiver):
    url = receiver.url
    receiver.close()
    res = Webhook(NotifyConfig(webhook_url=url, timeout_seconds=2)).deliver(dict(EVENT))
    assert res["delivered"] is False
    assert res["error"] == f"the webhook at {url} refused the connection: nothing is listening there"


def test_unconfigured_deliver_is_an_answer():
    res = Webhook(NotifyConfig()).deliver(dict(EVENT))
    assert res["delivered"] is False and "webhook_url" in res["error"]


def test_a_given_session_is_used(receiver):
    with requests.Session() as s:
        s.headers["X-Seren-Test"] = "yes"
        hook = Webhook(NotifyConfig(webhook_url=receiver.url), session=s)
        assert hook.deliver(dict(EVENT))["delivered"] is True
    assert receiver.requests[0]["headers"]["X-Seren-Test"] == "yes"
