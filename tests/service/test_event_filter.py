"""A filter by event type that names no event (GET /events?type=, the recent_events tool) says so, with the
event names, instead of "no events of that type": the main model read "sleep_faild: none" as no failures."""
from __future__ import annotations

import requests

from tests.service.test_mcp import BEARER, _call, _raw_session

AUTH = {"Authorization": f"Bearer {BEARER}"}


def test_an_unknown_event_type_is_refused_named_and_a_known_one_with_none_is_empty(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    requests.post(svc.url + "/nudge", headers=AUTH, timeout=10)
    r = requests.get(svc.url + "/events", params={"type": "sleep_faild"}, headers=AUTH, timeout=10)
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert detail.startswith("'sleep_faild' is not an event this service sends - did you mean sleep_failed? "
                             "The events are: actor_crashed, "), detail
    r = requests.get(svc.url + "/events", params={"type": "sleep_failed"}, headers=AUTH, timeout=10)
    assert r.status_code == 200 and r.json()["count"] == 0
    assert requests.get(svc.url + "/events", params={"type": "nudged"}, headers=AUTH, timeout=10).json()["count"] == 1
    s, headers = _raw_session(svc.url + "/mcp")
    res = _call(s, svc.url + "/mcp", headers, "recent_events", {"type": "sleep_faild"})
    assert res["isError"] is True and res["content"][0]["text"].startswith(
        "'sleep_faild' is not an event this service sends - did you mean sleep_failed?"), res
    res = _call(s, svc.url + "/mcp", headers, "recent_events", {"type": "sleep_failed"}, rid=4)
    assert res["isError"] is False and res["structuredContent"]["count"] == 0
