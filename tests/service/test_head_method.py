"""HEAD on a route that answers GET (monitoring tools probe with it): GET's status and headers, no body; the
bearer is asked for as on GET; a route with no GET still says which methods it takes."""
from __future__ import annotations

import pytest
import requests

TOKEN = "head-method-bearer"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def svc(make_config, start_service):
    return start_service(make_config(server={"bearer_token": TOKEN}, voice={"enabled": True}))


@pytest.mark.parametrize("path", ["/", "/health", "/viewer", "/status", "/events", "/queue", "/voice",
                                  "/openapi.json", "/metrics", "/replay"])
def test_head_answers_as_get_does_without_the_body(svc, path):
    got = requests.get(svc.url + path, headers=AUTH, timeout=10)
    head = requests.head(svc.url + path, headers=AUTH, timeout=10)
    assert (head.status_code, head.content) == (got.status_code, b""), head.headers
    assert head.headers["Content-Type"] == got.headers["Content-Type"]
    assert int(head.headers["Content-Length"]) > 0
    if path in ("/", "/viewer", "/openapi.json"):       # the same body every time: the same length
        assert head.headers["Content-Length"] == got.headers["Content-Length"] == str(len(got.content))


def test_head_needs_the_bearer_where_get_does_and_a_post_route_stays_405(svc):
    assert requests.head(svc.url + "/status", timeout=10).status_code == 401
    assert requests.head(svc.url + "/health", timeout=10).status_code == 200      # public, as on GET
    r = requests.head(svc.url + "/sleep", headers=AUTH, timeout=10)
    assert r.status_code == 405 and r.headers["Allow"] == "POST, OPTIONS"
