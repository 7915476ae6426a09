"""The MCP sink's copy of a WSGI answer (mcp/bridge.call_wsgi), through the real a2wsgi the SDK runs behind.

An app that fails after it started its answer calls start_response a second time, with a 500 and exc_info (a2wsgi
does when it hears of the failure in time); the WSGI rule (PEP 3333) is that the second call replaces the first,
so the client sees the error, not a 200 with an error's body.
"""
from __future__ import annotations

import io
import sys
from wsgiref.util import setup_testing_defaults

import pytest

a2wsgi = pytest.importorskip("a2wsgi")

from hippocampus.mcp.bridge import call_wsgi  # noqa: E402


def _environ() -> dict:
    env = {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "wsgi.input": io.BytesIO(b"{}"), "CONTENT_LENGTH": "2"}
    setup_testing_defaults(env)
    return env


def test_an_app_that_fails_after_its_start_is_answered_500_not_200():
    def app(environ, start_response):       # what a2wsgi does when the ASGI app raises after its start
        start_response("200 OK", [("Content-Type", "application/json")])
        try:
            raise RuntimeError("the tool broke before its answer")
        except RuntimeError:
            start_response("500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8")],
                           sys.exc_info())
        return [b"Server got itself in trouble"]

    status, headers, body = call_wsgi(app, _environ())
    assert status.startswith("500"), (status, headers, body)
    assert headers == [("Content-Type", "text/plain; charset=utf-8")] and body == b"Server got itself in trouble"


def test_an_answer_is_copied_whole_with_its_status_and_headers():
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b'{"ok": ', "more_body": True})
        await send({"type": "http.response.body", "body": b"true}"})

    status, headers, body = call_wsgi(a2wsgi.ASGIMiddleware(app), _environ())
    assert status.startswith("202") and body == b'{"ok": true}'
    assert ("content-type", "application/json") in [(k.lower(), v) for k, v in headers]
