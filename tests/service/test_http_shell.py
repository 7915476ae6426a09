"""The HTTP shell in-process: the bearer, the public paths, the family error shape, the limits."""
from __future__ import annotations

import pytest
import requests

from hippocampus import SERVICE, __version__

TOKEN = "s3cret"
PRIVATE = [("GET", "/status"), ("GET", "/events"), ("POST", "/nudge")]


@pytest.fixture
def guarded(make_config, start_service):
    return start_service(make_config(server={"bearer_token": TOKEN}))


@pytest.fixture
def open_svc(make_config, start_service):
    return start_service(make_config())


def _assert_family_error(r: requests.Response, status: int) -> str:
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    body = r.json()
    assert list(body) == ["detail"] and isinstance(body["detail"], str) and body["detail"], body
    return body["detail"]


WRONG = [None, "Bearer wrong", "Bearer s3cret-and-more", "Bearer ", "Basic s3cret", TOKEN]


def test_private_routes_refuse_without_the_right_bearer(guarded):
    for method, path in PRIVATE:
        for auth in WRONG:
            headers = {"Authorization": auth} if auth else {}
            r = requests.request(method, guarded.url + path, headers=headers, timeout=10)
            assert r.status_code == 401, (method, path, auth, r.text)
            assert r.json() == {"detail": "unauthorized"}
            assert r.headers.get("WWW-Authenticate") == "Bearer"


def test_private_routes_answer_with_the_right_bearer(guarded):
    for method, path in PRIVATE:
        for scheme in ("Bearer", "bearer", "BEARER"):
            r = requests.request(method, guarded.url + path, headers={"Authorization": f"{scheme} {TOKEN}"},
                                 timeout=30)
            assert r.status_code == 200, (method, path, scheme, r.text)


def test_public_paths_need_no_bearer(guarded):
    for path in ("/", "/health", "/viewer", "/viewer/", "/viewer/index.html", "/viewer/app.js"):
        r = requests.get(guarded.url + path, timeout=10)
        assert r.status_code != 401, (path, r.status_code, r.text)
        if path in ("/", "/health"):
            assert r.status_code == 200
        else:
            assert r.status_code in (200, 404), (path, r.status_code)


def test_a_look_alike_of_a_public_path_is_private(guarded):
    for path in ("/viewerx", "/healthz", "/status/"):
        r = requests.get(guarded.url + path, timeout=10)
        assert r.status_code == 401, (path, r.status_code)


def test_root_fields_mechanical(open_svc, memory):
    r = requests.get(open_svc.url + "/", timeout=10)
    assert r.status_code == 200
    body = r.json()
    assert body["service"] == SERVICE == "seren-hippocampus"
    assert body["version"] == __version__
    assert "memory" not in body and memory.url not in r.text       # public: no configured URL
    assert body["mode"] == "external"
    assert body["model"] == "mechanical"


def test_root_fields_with_a_model(make_config, start_service):
    svc = start_service(make_config(model={"url": "http://127.0.0.1:9/v1"}, sleep={"mode": "thread"}))
    body = requests.get(svc.url + "/", timeout=10).json()
    assert body["model"] == "configured"
    assert body["mode"] == "thread"


def test_health(guarded):
    r = requests.get(guarded.url + "/health", timeout=10)
    assert r.status_code == 200
    assert r.json() == {"ok": True, "memory_reachable": True}


def test_health_says_when_memory_is_not_reachable(make_config, start_service):
    from tests.harness.memory_server import free_port

    svc = start_service(make_config(memory={"url": f"http://127.0.0.1:{free_port()}", "timeout_seconds": 2}))
    r = requests.get(svc.url + "/health", timeout=10)
    assert r.status_code == 200
    assert r.json() == {"ok": True, "memory_reachable": False}


def test_unknown_route_is_404_in_the_family_shape(guarded):
    r = requests.get(guarded.url + "/no/such/route", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    _assert_family_error(r, 404)


def test_wrong_method_is_405_in_the_family_shape(guarded):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for method, path in (("DELETE", "/status"), ("GET", "/nudge"), ("PUT", "/health"), ("GET", "/sleep")):
        r = requests.request(method, guarded.url + path, headers=auth, timeout=10)
        _assert_family_error(r, 405)


def test_a_body_over_the_limit_is_413_in_the_family_shape(make_config, start_service):
    svc = start_service(make_config(server={"max_body_bytes": 2048, "bearer_token": TOKEN}))
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    r = requests.post(svc.url + "/check", data=b"x" * 4096, headers=auth, timeout=10)
    detail = _assert_family_error(r, 413)
    assert "4096" in detail and "2048" in detail
    # under the limit the same route is reached (a body it ignores)
    r = requests.post(svc.url + "/nudge", data=b"{}", headers=auth, timeout=10)
    assert r.status_code == 200, r.text


def test_a_body_over_the_limit_without_a_bearer_is_413_before_it_is_read(make_config, start_service):
    # waitress refuses it from the Content-Length alone (issue 16), before the app or the bearer check
    svc = start_service(make_config(server={"max_body_bytes": 2048, "bearer_token": TOKEN}))
    r = requests.post(svc.url + "/check", data=b"x" * 4096, timeout=10)
    detail = _assert_family_error(r, 413)
    assert "4096" in detail and "2048" in detail
    r = requests.post(svc.url + "/check", data=b"x" * 1024, timeout=10)
    assert r.status_code == 401 and r.json() == {"detail": "unauthorized"}


def test_a_bad_flag_is_400(open_svc):
    for query in ("without_brief=maybe", "without_brief=2"):
        r = requests.post(open_svc.url + "/sleep?" + query, timeout=10)
        detail = _assert_family_error(r, 400)
        assert "without_brief" in detail and repr(query.split("=")[1]) in detail


def test_a_bad_limit_is_400(open_svc):
    r = requests.get(open_svc.url + "/events?limit=lots", timeout=10)
    detail = _assert_family_error(r, 400)
    assert "limit" in detail
