"""The routes: each a thin call into the service facade (hippocampus.front), whose errors app.py maps to HTTP.

A replay runs on the service's one replay worker: POST waits for it at most service.WAIT_SECONDS, then answers
202 with where to read the result (GET /replay?run=ID). Its body names a listed candidate, never a URL."""
from __future__ import annotations

import falcon

from hippocampus import SERVICE, __version__
from hippocampus.config.replay_endpoints import TIMEOUT_RULE, NotAllowed, name_problem, refusal, seconds_above_zero
from hippocampus.replay.service import unknown_run
from hippocampus.status import lists as boards
from hippocampus.words import BOOLEAN, yes_no

FIELDS = ("draft_id", "candidate", "model", "timeout_seconds")
SHAPE = '{"candidate": "<a name listed in replay.candidates>", "model": "...", "timeout_seconds": n} (all optional)'


def _flag(req: falcon.Request, name: str) -> bool:
    """?name=true or false (any case: the schema's boolean); absent is false, anything else is refused."""
    value = req.get_param(name, default="false")
    if yes_no(value, BOOLEAN) is None:
        raise falcon.HTTPBadRequest(description=f"?{name} takes true or false, not {value!r}")
    return yes_no(value, BOOLEAN)


def _limit(req: falcon.Request, default: int, hi: int) -> int:
    """?limit, held to 1..hi (a larger one is the most there is, not a refusal)."""
    return max(1, min(hi, req.get_param_as_int("limit", default=default)))


def json_body(req: falcon.Request):
    try:
        return req.get_media(default_when_empty=None)
    except RecursionError:              # json.loads on "[[[[...": a 400 like any other bad body, not a 500
        raise falcon.HTTPBadRequest(description="the JSON body is nested too deeply") from None


class Route:
    def __init__(self, front):
        self.front = front


class Call(Route):
    """A POST that is the facade's call of that name, its answer the body (/tend, /check, /nudge)."""

    def __init__(self, front, call: str):
        super().__init__(front)
        self.call = call

    def on_post(self, req, resp):
        resp.media = getattr(self.front, self.call)()


class Root(Route):
    def on_get(self, req, resp):
        cfg = self.front.config()
        # public (no bearer): nothing of the configuration beyond what the service is (no Memory URL)
        resp.media = {"service": SERVICE, "version": __version__, "mode": cfg.sleep.mode,
                      "model": "configured" if cfg.model.configured else "mechanical",
                      "viewer": "/viewer", "status": "/status"}


class Health(Route):
    def on_get(self, req, resp):
        resp.media = self.front.health()


class Status(Route):
    def on_get(self, req, resp):
        resp.content_type = falcon.MEDIA_JSON
        resp.data = self.front.status_body()


class SleepRoute(Route):
    def on_post(self, req, resp):
        resp.media = self.front.sleep(without_brief=_flag(req, "without_brief"))


class Events(Route):
    def on_get(self, req, resp):
        entries = self.front.events(_limit(req, 100, 1000), (req.get_param("type") or "").strip() or None)  # as MCP
        webhook = bool(self.front.config().notify.webhook_url)
        resp.media = {"count": len(entries), "webhook": webhook, "entries": entries, "say": boards.events_note(webhook)}


class History(Route):
    def on_get(self, req, resp):
        rows = self.front.history(_limit(req, 40, 80))
        resp.media = {"count": len(rows), "entries": rows}


class Queue(Route):
    """What waits for review in Memory. Memory down: what the last good read saw, as of when, and a message;
    never a 500."""

    def on_get(self, req, resp):
        seen = self.front.queue_view()
        resp.media = boards.queue(seen.get("drafts") or [], self.front.now, seen.get("error"), seen.get("as_of"))


class Actors(Route):
    def on_get(self, req, resp):
        resp.media = {"actors": self.front.actors()}


class ActorRestart(Route):
    def on_post(self, req, resp, name):
        resp.status = falcon.HTTP_202
        resp.media = self.front.restart(name, _flag(req, "force"))


class Voice(Route):
    def on_get(self, req, resp):
        resp.media = self.front.voice_card().current() or {"version": 0, "text": None}

    def on_put(self, req, resp):
        body = json_body(req)
        card = self.front.voice_card()          # VoiceOff: 404
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise falcon.HTTPBadRequest(description='send {"text": "...", "why": "..."}')
        why = body.get("why")
        if why is not None and not isinstance(why, str):
            raise falcon.HTTPBadRequest(description="'why' is text")
        resp.media = card.set(body["text"], why)


class VoiceHistory(Route):
    def on_get(self, req, resp):
        versions = self.front.voice_card().history(_limit(req, 10, 200))
        resp.media = {"count": len(versions), "versions": versions}


class Quality(Route):
    def on_get(self, req, resp):
        resp.media = boards.quality(self.front.quality())


def _text(body: dict, key: str):
    if problem := name_problem(key, body.get(key)):
        raise falcon.HTTPBadRequest(description=problem)
    return body.get(key) or None


def _replay_args(body: dict, cfg) -> dict:
    if "url" in body:
        asked = body["url"] if isinstance(body["url"], str) else repr(body["url"])
        raise falcon.HTTPBadRequest(description=refusal(asked, cfg) + ". Replay takes no url: name a listed "
                                                "candidate with \"candidate\"")
    if "extra_body" in body:
        raise falcon.HTTPBadRequest(description="replay takes no extra_body from callers: a candidate's extra_body "
                                                "is set in its replay.candidates entry in the config")
    if unknown := sorted(str(k) for k in body if k not in FIELDS):
        raise falcon.HTTPBadRequest(description=f"{', '.join(map(repr, unknown))} is not a replay field: send {SHAPE}")
    timeout = body.get("timeout_seconds")
    if timeout is not None and not seconds_above_zero(timeout):
        raise falcon.HTTPBadRequest(description=f"'timeout_seconds' is {TIMEOUT_RULE}")
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
        body = json_body(req)
        if body is None:
            body = {}
        elif not isinstance(body, dict):
            raise falcon.HTTPBadRequest(description=f"send {SHAPE}")
        if draft_id is not None and "draft_id" in body:
            raise falcon.HTTPBadRequest(description=f"the path names the draft ({draft_id!r}): send no 'draft_id' "
                                                    f"in the body (or POST /replay with it there)")
        draft_id = draft_id or body.get("draft_id")
        if draft_id is not None and not isinstance(draft_id, str):
            raise falcon.HTTPBadRequest(description=f"'draft_id' is the draft's id as text, not {draft_id!r:.80}")
        draft_id = (draft_id or "").strip()       # as replay_draft takes it
        if not draft_id:
            raise falcon.HTTPBadRequest(description="'draft_id' is required")
        args = _replay_args(body, self.front.config())
        try:
            run = self.front.replays.replay(draft_id, **args)
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
            resp.media = self.front.replays.runs()
            return
        run = self.front.replays.run(run_id)
        if run is None:
            raise falcon.HTTPNotFound(description=unknown_run(run_id))
        _answer(resp, run)
