"""POST /replay/{draft_id} (and POST /replay with the id in the body), GET /quality.

A replay runs on the request's thread: it is asked for by hand and waits on a model, never on an actor.
The quality report is read from the board, never from Memory on the request.
"""
from __future__ import annotations

import falcon

from hippocampus.replay import service
from hippocampus.replay.run import NoPacket
from hippocampus.status import boards

MAX_TIMEOUT = 3600.0


def _body(req: falcon.Request) -> dict:
    try:
        body = req.get_media(default_when_empty=None)
    except RecursionError:
        raise falcon.HTTPBadRequest(description="the JSON body is nested too deeply") from None
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise falcon.HTTPBadRequest(description='send {"url": "...", "name": "..."} (both optional)')
    return body


def _text(body: dict, key: str):
    v = body.get(key)
    if v is not None and not isinstance(v, str):
        raise falcon.HTTPBadRequest(description=f"'{key}' is text")
    return v or None


def _args(body: dict) -> dict:
    url = _text(body, "url")
    if url and not url.lower().startswith(("http://", "https://")):
        raise falcon.HTTPBadRequest(description="'url' is the candidate's OpenAI-compatible base URL (http:// or "
                                                "https://, e.g. http://127.0.0.1:8091/v1)")
    extra = body.get("extra_body")
    if extra is not None and not isinstance(extra, dict):
        raise falcon.HTTPBadRequest(description="'extra_body' is an object (merged into each chat request)")
    timeout = body.get("timeout_seconds")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout <= MAX_TIMEOUT):
        raise falcon.HTTPBadRequest(description=f"'timeout_seconds' is a number of seconds, 0 < t <= {MAX_TIMEOUT:g}")
    return {"url": url, "name": _text(body, "name"), "extra_body": extra, "timeout_seconds": timeout}


class Replay:
    def __init__(self, rt):
        self.rt = rt

    def on_post(self, req, resp, draft_id=None):
        body = _body(req)
        draft_id = draft_id or body.get("draft_id")
        if not draft_id or not isinstance(draft_id, str):
            raise falcon.HTTPBadRequest(description="'draft_id' is required")
        try:
            resp.media = service.replay_draft(self.rt, draft_id, **_args(body))
        except NoPacket as exc:
            raise falcon.HTTPNotFound(description=str(exc)) from None
        except ValueError as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None


class Quality:
    def __init__(self, rt):
        self.rt = rt

    def on_get(self, req, resp):
        resp.media = boards.quality(service.report(self.rt))


def add_routes(app: falcon.App, rt) -> None:
    replay = Replay(rt)
    app.add_route("/replay", replay)
    app.add_route("/replay/{draft_id}", replay)
    app.add_route("/quality", Quality(rt))
