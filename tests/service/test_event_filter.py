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


def test_a_blank_type_filters_nothing_through_both_doors(make_config, start_service):
    """Found: GET /events?type= (a form's empty filter) answered count 0 while events were on record, where the
    recent_events tool with type "" lists them all; and ?type=%20nudged was refused though the tool takes it."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    requests.post(svc.url + "/nudge", headers=AUTH, timeout=10)
    for blank in ("", "  "):
        r = requests.get(svc.url + "/events", params={"type": blank}, headers=AUTH, timeout=10)
        assert r.status_code == 200 and [e["type"] for e in r.json()["entries"]] == ["nudged"], r.text
    r = requests.get(svc.url + "/events", params={"type": " nudged "}, headers=AUTH, timeout=10)
    assert r.status_code == 200 and r.json()["count"] == 1, r.text
    s, headers = _raw_session(svc.url + "/mcp")
    for rid, given in enumerate(("", " nudged "), start=3):
        res = _call(s, svc.url + "/mcp", headers, "recent_events", {"type": given}, rid=rid)
        assert res["isError"] is False and res["structuredContent"]["count"] == 1, res


def test_the_tool_says_the_type_it_filtered_on_without_its_padding(make_config, start_service):
    """Found: recent_events with type "  sleep_failed " filtered on sleep_failed but said "No events of type
    sleep_failed  on record." with the padding, and type "  " (filtering nothing) said "of type   "."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    requests.post(svc.url + "/nudge", headers=AUTH, timeout=10)
    s, headers = _raw_session(svc.url + "/mcp")
    said = {}
    for rid, given in enumerate(("  sleep_failed ", " nudged ", "  "), start=3):
        res = _call(s, svc.url + "/mcp", headers, "recent_events", {"type": given}, rid=rid)
        assert res["isError"] is False, res
        said[given] = res["structuredContent"]["message"]
    assert said == {"  sleep_failed ": "No events of type sleep_failed on record.",
                    " nudged ": "1 event of type nudged, newest first.", "  ": "1 event, newest first."}
    res = _call(s, svc.url + "/mcp", headers, "recent_events", {"type": "  sleep_faild "}, rid=9)
    r = requests.get(svc.url + "/events", params={"type": "  sleep_faild "}, headers=AUTH, timeout=10)
    assert r.status_code == 400 and res["isError"] is True
    assert res["content"][0]["text"] == r.json()["detail"] + ".", (res, r.text)
