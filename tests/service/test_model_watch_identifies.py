"""The model watch identifies the model as check-config does (issue 41, item 2: "model: answering" for anything
that answered below 500): something at model.url that answers 404 is "not a model server at model.url", with
the fix, in /status, its headline and the model card; the scripted model, whose /v1/models lists models, answers."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from hippocampus.status.watch import model_health
from tests.harness.reviewer import wait_for


class NotFound(BaseHTTPRequestHandler):
    """A web server that is no model server: 404 for every path, as a wrong port's web app answers."""

    def do_GET(self):  # noqa: N802
        body = b"<html><body>Not Found</body></html>"
        self.send_response(404)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def not_a_model():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def _model_seen(base: str) -> dict:
    s = requests.get(base + "/status", timeout=10).json()
    return s if (s.get("model_health") or {}).get("checked_at") else {}


def test_a_404_at_model_url_is_not_a_model_server_with_the_fix(not_a_model, make_config, start_service):
    view = model_health(make_config(model={"url": not_a_model}).model)
    assert view["answering"] is False and view["not_model"] is True, view
    assert view["error"].startswith(f"not a model server at model.url {not_a_model}: GET {not_a_model}/models "
                                    "answered HTTP 404, an HTML page, not a model list"), view
    assert "set model.url to the small model's server" in view["error"], view

    svc = start_service(make_config(model={"url": not_a_model}))
    s = wait_for(lambda: _model_seen(svc.url), what="the model watch's first read")
    assert s["model_health"]["answering"] is False and s["model_health"]["not_model"] is True, s["model_health"]
    say = s["say"]
    assert say["cards"]["model"]["main"] == "Not a model server", say["cards"]["model"]
    assert say["pills"]["model"]["text"] != "model: answering" and say["pills"]["model"]["state"] == "hot", say
    assert say["headline"].startswith(f"Not a model server at the model url setting {not_a_model}"), say["headline"]
    assert "an OpenAI-compatible URL ending in /v1" in say["headline"], say["headline"]
    assert say["details"].startswith(f"Not a model server at model.url {not_a_model}: "), say["details"]
    assert "model.url" in say["details"], say["details"]          # the key stays in the details view


def test_the_scripted_model_answers(fake_model, make_config, start_service):
    view = model_health(make_config(model={"url": fake_model.url}).model)
    assert view == {**view, "answering": True, "error": None, "not_model": False}, view
    svc = start_service(make_config(model={"url": fake_model.url}))
    s = wait_for(lambda: _model_seen(svc.url), what="the model watch's first read")
    assert s["model_health"]["answering"] is True, s["model_health"]
    assert s["say"]["cards"]["model"]["main"] == "Answering", s["say"]["cards"]["model"]
    assert s["say"]["pills"]["model"]["text"] == "model: answering"
    assert "not a model server" not in s["say"]["headline"].lower(), s["say"]["headline"]
