"""The routes. Each is a thin call into the service facade (hippocampus.front); its errors are mapped to
HTTP once, in app.py."""
from __future__ import annotations

import falcon

from hippocampus import SERVICE, __version__
from hippocampus.front import MemoryDown
from hippocampus.status import lists as boards


def _flag(req: falcon.Request, name: str) -> bool:
    """?name=true or false (any case), as /openapi.json says; absent is false, anything else is refused."""
    value = req.get_param(name)
    if value is None:
        return False
    if value.lower() not in ("true", "false"):
        raise falcon.HTTPBadRequest(description=f"?{name} takes true or false, not {value!r}")
    return value.lower() == "true"


def _limit(req: falcon.Request, default: int, hi: int) -> int:
    """?limit, held to 1..hi (a larger one is the most there is, not a refusal; /openapi.json says so)."""
    return max(1, min(hi, req.get_param_as_int("limit", default=default)))


def json_body(req: falcon.Request):
    try:
        return req.get_media(default_when_empty=None)
    except RecursionError:              # json.loads on "[[[[...": a 400 like any other bad body, not a 500
        raise falcon.HTTPBadRequest(description="the JSON body is nested too deeply") from None


class Route:
    def __init__(self, front):
        self.front = front


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


class TendRoute(Route):
    def on_post(self, req, resp):
        resp.media = self.front.tend()


class CheckRoute(Route):
    def on_post(self, req, resp):
        resp.media = self.front.check()


class Nudge(Route):
    def on_post(self, req, resp):
        resp.media = self.front.nudge()


class Events(Route):
    def on_get(self, req, resp):
        entries = self.front.events(_limit(req, 100, 1000), req.get_param("type"))
        webhook = bool(self.front.config().notify.webhook_url)
        resp.media = {"count": len(entries), "webhook": webhook, "entries": entries, "say": boards.events_note(webhook)}


class History(Route):
    def on_get(self, req, resp):
        rows = self.front.history(_limit(req, 40, 80))
        resp.media = {"count": len(rows), "entries": rows}


class Queue(Route):
    """What waits for review in Memory, with its words. Memory down: an empty list and a message, never a 500."""

    def on_get(self, req, resp):
        now = self.front.now
        try:
            drafts = self.front.queue()
        except MemoryDown as exc:
            resp.media = boards.queue([], now, str(exc))
            return
        resp.media = boards.queue(drafts, now)


class Actors(Route):
    def on_get(self, req, resp):
        resp.media = {"actors": self.front.actors()}


class ActorRestart(Route):
    def on_post(self, req, resp, name):
        resp.status = falcon.HTTP_202
        resp.media = self.front.restart(name, _flag(req, "force"))


class Voice(Route):
    def on_get(self, req, resp):
        resp.media = self.front.voice()

    def on_put(self, req, resp):
        body = json_body(req)
        if not self.front.voice_enabled:
            self.front.voice()              # raises VoiceOff: 404
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise falcon.HTTPBadRequest(description='send {"text": "...", "why": "..."}')
        why = body.get("why")
        if why is not None and not isinstance(why, str):
            raise falcon.HTTPBadRequest(description="'why' is text")
        resp.media = self.front.set_voice(body["text"], why)


class VoiceHistory(Voice):
    on_put = None           # not inherited: the card is written at PUT /voice only (here: 405)

    def on_get(self, req, resp):
        versions = self.front.voice_history(_limit(req, 10, 200))
        resp.media = {"count": len(versions), "versions": versions}
