"""Each error answer /openapi.json documents is the answer the route gives (issue 19): the guard's 421 on
every path and 403 on the state-changing methods, the bearer's 401, the body limit's 413, the cycle's 409
and 503, on the running service and the real SerenMemory."""
from __future__ import annotations

import requests

from hippocampus.http.openapi import SPEC, STATE_CHANGING

FOREIGN_HOST = {"Host": "evil.example:80"}
FOREIGN_ORIGIN = {"Origin": "http://evil.example"}


def documented(path: str, method: str) -> dict:
    return SPEC["paths"][path][method.lower()]["responses"]


def call(base: str, method: str, path: str, **kw) -> requests.Response:
    return requests.request(method, base + path, timeout=30, **kw)


def test_the_guard_answers_are_documented_where_the_guard_gives_them():
    for path, ops in SPEC["paths"].items():
        for method, op in ops.items():
            codes = op["responses"]
            assert codes["421"]["description"], (path, method)
            assert ("403" in codes) == (method in STATE_CHANGING), (path, method)
            for code, answer in codes.items():
                assert answer["description"] and "\n" not in answer["description"], (path, method, code)


def test_a_foreign_host_gets_the_documented_421_on_every_kind_of_route(make_config, start_service):
    base = start_service(make_config()).url
    for method, path in (("GET", "/"), ("GET", "/health"), ("GET", "/viewer"), ("GET", "/status"),
                         ("GET", "/openapi.json"), ("POST", "/sleep"), ("POST", "/nudge"), ("GET", "/queue")):
        assert "421" in documented(path, method)
        r = call(base, method, path, headers=FOREIGN_HOST)
        assert r.status_code == 421 and "does not answer to the host" in r.json()["detail"], (path, r.text)


def test_a_foreign_origin_gets_the_documented_403_on_a_change_and_nothing_on_a_read(make_config, start_service,
                                                                                    hand):
    base = start_service(make_config()).url
    for path in ("/sleep", "/tend", "/check", "/nudge"):
        assert "403" in documented(path, "POST")
        r = call(base, "POST", path, headers=FOREIGN_ORIGIN)
        assert r.status_code == 403 and "is not this service's own" in r.json()["detail"], (path, r.text)
    r = call(base, "POST", "/sleep", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403, r.text
    assert "403" not in documented("/status", "GET")
    assert call(base, "GET", "/status", headers=FOREIGN_ORIGIN).status_code == 200
    assert hand.drafts("pending") == []                 # nothing was started by the refused requests


def test_memory_down_is_the_documented_503_on_the_cycle_routes(make_config, start_service):
    base = start_service(make_config(memory={"url": "http://127.0.0.1:9", "timeout_seconds": 1})).url
    for path in ("/sleep", "/tend", "/check"):
        assert "SerenMemory is not answering" in documented(path, "POST")["503"]["description"]
        r = call(base, "POST", path)
        assert r.status_code == 503, (path, r.text)
        assert "is not answering" in r.json()["detail"] and "nothing was started" in r.json()["detail"]
    assert call(base, "GET", "/queue").status_code == 200          # the queue says so in its words instead
    assert "503" not in documented("/queue", "GET")


def test_busy_is_the_documented_409_and_a_big_body_the_documented_413(make_config, start_service):
    svc = start_service(make_config(server={"max_body_bytes": 1024}))
    token = svc.runtime.ctx.cycle.enter("sleep")
    try:
        for path in ("/sleep", "/tend", "/check"):
            assert documented(path, "POST")["409"]["description"].startswith("busy")
            r = call(svc.url, "POST", path)
            busy = r.json()["detail"]
            assert r.status_code == 409 and busy.startswith("busy: a sleep is running since"), (path, r.text)
    finally:
        svc.runtime.ctx.cycle.leave(token)
    assert "413" in documented("/nudge", "POST")
    r = call(svc.url, "POST", "/nudge", data=b"x" * 2048, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "at most 1024" in r.json()["detail"], r.text


def test_the_bearer_is_the_documented_401_on_a_private_route_and_absent_on_a_public_one(make_config, start_service):
    base = start_service(make_config(server={"bearer_token": "s3cret"})).url
    assert "401" in documented("/status", "GET") and "401" not in documented("/health", "GET")
    assert call(base, "GET", "/status").status_code == 401
    assert call(base, "GET", "/status", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert call(base, "GET", "/health").status_code == 200


def test_the_document_says_a_bearer_is_needed_only_when_one_is_set(make_config, start_service):
    """Issue 32: an open service's document declared the bearer required (a checker then found every private
    route "accepting requests without authentication"). Open: no security and no 401; with one: both."""
    open_base = start_service(make_config()).url
    doc = call(open_base, "GET", "/openapi.json").json()
    assert "security" not in doc
    assert [p for p, ops in doc["paths"].items() for op in ops.values() if "401" in op["responses"]] == []
    assert call(open_base, "GET", "/status").status_code == 200          # as it says: no bearer asked
    guarded = start_service(make_config(server={"bearer_token": "s3cret"})).url
    doc = call(guarded, "GET", "/openapi.json", headers={"Authorization": "Bearer s3cret"}).json()
    assert doc["security"] == [{"bearer": []}] and doc == SPEC
    assert "401" in doc["paths"]["/status"]["get"]["responses"] and "401" not in doc["paths"]["/health"]["get"][
        "responses"]


def test_the_replay_bodies_are_the_ones_the_routes_take(make_config, start_service):
    """POST /replay needs the draft in its body; POST /replay/{id} takes none there; a timeout is above 0; the
    candidates are the names this service takes; with no model and none named, the state refuses it (409)."""
    base = start_service(make_config()).url
    doc = call(base, "GET", "/openapi.json").json()

    def body(path):
        return doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body("/replay")["required"] == ["draft_id"] and "draft_id" not in body("/replay/{draft_id}")["properties"]
    assert "candidate" not in body("/replay/{draft_id}")["properties"]        # no model, none listed: no name
    r = call(base, "POST", "/replay", json={})
    assert r.status_code == 400 and r.json()["detail"] == "'draft_id' is required"
    r = call(base, "POST", "/replay/d1", json={"draft_id": "d2"})
    assert r.status_code == 400 and "send no 'draft_id' in the body" in r.json()["detail"]
    timeout = body("/replay/{draft_id}")["properties"]["timeout_seconds"]
    assert timeout["minimum"] == 0 and timeout["exclusiveMinimum"] is True
    assert call(base, "POST", "/replay/d1", json={"timeout_seconds": 0}).status_code == 400
    r = call(base, "POST", "/replay/d1", json={})
    assert r.status_code == 409 and "no model to replay on" in r.json()["detail"], r.text
    assert "no configured model" in documented("/replay/{draft_id}", "POST")["409"]["description"]


def test_the_limits_and_flags_answer_as_documented(make_config, start_service):
    base = start_service(make_config()).url
    doc = call(base, "GET", "/openapi.json").json()
    limit = doc["paths"]["/history"]["get"]["parameters"][0]
    assert "maximum" not in limit["schema"] and "held to 1..80" in limit["description"]
    assert call(base, "GET", "/history?limit=81").status_code == 200            # read as 80, not refused
    assert call(base, "GET", "/events?limit=1001").status_code == 200
    flag = doc["paths"]["/sleep"]["post"]["parameters"][0]
    assert flag["schema"]["type"] == "boolean"
    for value in ("", "1", "yes"):                                              # a boolean is true or false
        r = call(base, "POST", f"/sleep?without_brief={value}")
        assert r.status_code == 400 and "takes true or false" in r.json()["detail"], (value, r.text)
