"""POST /replay/{draft_id} (and POST /replay with the id in the body), GET /replay (?run=ID), GET /quality.

A replay runs on the service's one replay worker, never on the request's thread: the route waits for it at
most service.WAIT_SECONDS, then answers 202 with where to read the result (GET /replay?run=ID). One replay
at a time (409 otherwise). The body names a candidate listed in replay.candidates (or none: the configured
model), never a URL; no extra_body. The quality report is read from the board, never from Memory.
"""
from __future__ import annotations

import falcon

from hippocampus.config.candidates import TIMEOUT_CAP, NotAllowed, refusal
from hippocampus.http.resources import Route, json_body
from hippocampus.replay.service import unknown_run
from hippocampus.status import lists as boards

FIELDS = ("draft_id", "candidate", "model", "timeout_seconds")
NAME_CHARS = 200
SHAPE = '{"candidate": "<a name listed in replay.candidates>", "model": "...", "timeout_seconds": n} (all optional)'


def _body(req: falcon.Request) -> dict:
    body = json_body(req)
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise falcon.HTTPBadRequest(description=f"send {SHAPE}")
    return body


def _text(body: dict, key: str):
    v = body.get(key)
    if v is not None and (not isinstance(v, str) or len(v) > NAME_CHARS):
        raise falcon.HTTPBadRequest(description=f"'{key}' is a name (text, at most {NAME_CHARS} characters)")
    return v or None


def _args(body: dict, cfg) -> dict:
    if "url" in body:
        asked = body["url"] if isinstance(body["url"], str) else repr(body["url"])
        raise falcon.HTTPBadRequest(description=refusal(asked, cfg) + ". Replay takes no url: name a listed "
                                                "candidate with \"candidate\"")
    if "extra_body" in body:
        raise falcon.HTTPBadRequest(description="replay takes no extra_body from callers: a candidate's extra_body "
                                                "is set in its replay.candidates entry in the config")
    unknown = sorted(str(k) for k in body if k not in FIELDS)
    if unknown:
        raise falcon.HTTPBadRequest(description=f"{', '.join(map(repr, unknown))} is not a replay field: send {SHAPE}")
    timeout = body.get("timeout_seconds")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise falcon.HTTPBadRequest(description=f"'timeout_seconds' is a number of seconds above 0 (at most "
                                                f"{TIMEOUT_CAP:g}: a larger one is capped)")
    return {"candidate": _text(body, "candidate"), "model": _text(body, "model"), "timeout_seconds": timeout}


def _answer(resp, run) -> None:
    """A finished run: its result (200); one still running: where to read it (202)."""
    if not run.done.is_set():
        resp.status = falcon.HTTP_202
        resp.location = run.where
        resp.media = {"ok": True, "running": True, "run": run.id, "result": run.where,
                      "detail": f"{run.running_words()}; GET {run.where} reads its result"}
        return
    if run.error:
        raise falcon.HTTPInternalServerError(description=run.error)
    resp.media = {"run": run.id, **run.result}


class Replay(Route):
    def on_post(self, req, resp, draft_id=None):
        body = _body(req)
        if draft_id is not None and "draft_id" in body:
            raise falcon.HTTPBadRequest(description=f"the path names the draft ({draft_id!r}): send no 'draft_id' "
                                                    f"in the body (or POST /replay with it there)")
        draft_id = draft_id or body.get("draft_id")
        if not draft_id or not isinstance(draft_id, str):
            raise falcon.HTTPBadRequest(description="'draft_id' is required")
        args = _args(body, self.front.config())
        try:
            run = self.front.replay(draft_id, **args)
        except NotAllowed as exc:
            if args["candidate"] is None:   # nothing named: the configuration is at fault, not the request
                raise falcon.HTTPConflict(description=str(exc)) from None
            raise
        _answer(resp, run)


class ReplayRuns(Replay):
    """/replay: POST (the draft in the body), and GET: the runs kept, or one (?run=ID) as POST answers it."""

    def on_get(self, req, resp):
        run_id = req.get_param("run")
        if run_id is None:
            resp.media = self.front.replay_runs()
            return
        run = self.front.replay_run(run_id)
        if run is None:
            raise falcon.HTTPNotFound(description=unknown_run(run_id))
        _answer(resp, run)


class Quality(Route):
    def on_get(self, req, resp):
        resp.media = boards.quality(self.front.quality())


def add_routes(app: falcon.App, front) -> None:
    app.add_route("/replay", ReplayRuns(front))
    app.add_route("/replay/{draft_id}", Replay(front))
    app.add_route("/quality", Quality(front))
