"""The routes. Each is a thin call into the runtime: tell or ask an actor, or read the board."""
from __future__ import annotations

import falcon
import pykka

from hippocampus import SERVICE, __version__
from hippocampus.cycle import Busy
from hippocampus.memory import MemoryError_
from hippocampus.stopping import ServiceStopping
from hippocampus.voice import VoiceError, VoiceStorageError

from .status import build_status

TRUE = {"1", "true", "yes", "on"}


def _flag(req: falcon.Request, name: str) -> bool:
    raw = req.get_param(name)
    if raw is None:
        return False
    if raw.lower() in TRUE | {"0", "false", "no", "off", ""}:
        return raw.lower() in TRUE
    raise falcon.HTTPBadRequest(description=f"?{name} takes true or false, not {raw!r}")


def _limit(req: falcon.Request, default: int, hi: int) -> int:
    raw = req.get_param("limit")
    if raw is None:
        return default
    try:
        n = int(raw)
    except ValueError:
        raise falcon.HTTPBadRequest(description=f"?limit takes a whole number, not {raw!r}") from None
    return max(1, min(hi, n))


class Root:
    def __init__(self, rt):
        self.rt = rt

    def on_get(self, req, resp):
        cfg = self.rt.cfg
        resp.media = {"service": SERVICE, "version": __version__, "memory": cfg.memory.url,
                      "mode": cfg.sleep.mode, "model": "configured" if cfg.model.configured else "mechanical",
                      "viewer": "/viewer", "status": "/status"}


class Health:
    def __init__(self, rt, watch):
        self.rt, self.watch = rt, watch

    def on_get(self, req, resp):
        resp.media = {"ok": True, "memory_reachable": bool(self.watch.refresh()["reachable"])}


class Status:
    def __init__(self, rt, watch):
        self.rt, self.watch = rt, watch

    def on_get(self, req, resp):
        resp.media = build_status(self.rt, self.watch)


class CycleRoute:
    """POST /sleep, /tend, /check: take the cycle lock here, 409 at once when it is held."""

    def __init__(self, rt, what: str, actor: str, make):
        self.rt, self.what, self.actor, self.make = rt, what, actor, make

    def on_post(self, req, resp):
        msg_args = self.make(req)
        cfg = self.rt.cfg
        timeout = cfg.model.timeout_seconds * 4 + cfg.memory.timeout_seconds * 4 + 60
        try:
            result = self.rt.request(self.what, self.actor, lambda tok: msg_args(tok), timeout=timeout)
        except Busy as exc:
            raise falcon.HTTPConflict(description=str(exc)) from None
        except pykka.Timeout:
            resp.status = falcon.HTTP_202
            resp.media = {"ok": True, "running": True,
                          "detail": f"the {self.what} is still running; /status shows its progress"}
            return
        except ServiceStopping as exc:          # cut short by the stop: recorded as interrupted, not failed
            raise falcon.HTTPServiceUnavailable(description=str(exc)) from None
        except pykka.ActorDeadError as exc:
            if self.rt.stopping:
                raise falcon.HTTPServiceUnavailable(description=str(ServiceStopping())) from None
            raise falcon.HTTPServiceUnavailable(description=str(exc)) from None
        resp.media = result


class Nudge:
    def __init__(self, rt):
        self.rt = rt

    def on_post(self, req, resp):
        resp.media = self.rt.nudge()


class Events:
    def __init__(self, rt):
        self.rt = rt

    def on_get(self, req, resp):
        entries = self.rt.events.list(limit=_limit(req, 100, 1000), type_=req.get_param("type"))
        resp.media = {"count": len(entries), "webhook": bool(self.rt.cfg.notify.webhook_url), "entries": entries}


class History:
    def __init__(self, rt):
        self.rt = rt

    def on_get(self, req, resp):
        rows = list(reversed(self.rt.ctx.state.get("history") or []))[:_limit(req, 40, 80)]
        resp.media = {"count": len(rows), "entries": rows}


class Queue:
    """What waits for review in Memory. Memory down: an empty list and a message, never a 500."""

    def __init__(self, rt):
        self.rt = rt

    def on_get(self, req, resp):
        now = self.rt.ctx.clock.now()
        try:
            drafts = self.rt.ctx.memory.drafts("pending", limit=50)
        except MemoryError_ as exc:
            resp.media = {"count": 0, "drafts": [], "error": str(exc)}
            return
        out = []
        for d in drafts:
            ops = d.get("operations") or []
            out.append({"id": d.get("id"), "summary": d.get("summary"), "attempt": d.get("attempt"),
                        "terminal": d.get("terminal"), "created_at": d.get("created_at"),
                        "age_seconds": max(0.0, now - float(d.get("created_at") or now)),
                        "operations": len(ops),
                        "pending": sum(1 for o in ops if o.get("status", "pending") == "pending"),
                        "kinds": sorted({o.get("kind") for o in ops})})
        resp.media = {"count": len(out), "drafts": out}


class Actors:
    def __init__(self, rt):
        self.rt = rt

    def on_get(self, req, resp):
        resp.media = {"actors": self.rt.board.get("actors") or {}}


class ActorRestart:
    def __init__(self, rt):
        self.rt = rt

    def on_post(self, req, resp, name):
        from actors.messages import RestartChild

        try:
            out = self.rt.supervisor.ask(RestartChild(name, _flag(req, "force")), timeout=15)
        except (pykka.Timeout, pykka.ActorDeadError, AttributeError) as exc:
            raise falcon.HTTPServiceUnavailable(description=f"the supervisor did not answer: {exc}") from None
        status = out.pop("status")
        if status == 404:
            raise falcon.HTTPNotFound(description=out["detail"])
        if status == 409:
            raise falcon.HTTPConflict(description=out["detail"])
        resp.status = falcon.HTTP_202
        resp.media = out


class Voice:
    def __init__(self, rt):
        self.rt = rt

    def _card(self):
        card = self.rt.ctx.voice
        if card is None:
            raise falcon.HTTPNotFound(description="the voice card is opt-in and off: set voice: {enabled: true} "
                                                  "in the yaml (or --voice-card) to let the main model write one")
        return card

    def on_get(self, req, resp):
        cur = self._card().current()
        resp.media = cur or {"version": 0, "text": None}

    def on_put(self, req, resp):
        card = self._card()
        try:
            body = req.get_media(default_when_empty=None)
        except RecursionError:              # json.loads on "[[[[...": a 400 like any other bad body, not a 500
            raise falcon.HTTPBadRequest(description="the JSON body is nested too deeply") from None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise falcon.HTTPBadRequest(description='send {"text": "...", "why": "..."}')
        why = body.get("why")
        if why is not None and not isinstance(why, str):
            raise falcon.HTTPBadRequest(description="'why' is text")
        try:
            resp.media = card.set(body["text"], why)
        except VoiceStorageError as exc:
            raise falcon.HTTPServiceUnavailable(description=str(exc)) from None
        except VoiceError as exc:
            raise falcon.HTTPBadRequest(description=str(exc)) from None


class VoiceHistory(Voice):
    on_put = None           # not inherited: the card is written at PUT /voice only (here: 405)

    def on_get(self, req, resp):
        versions = self._card().history(_limit(req, 10, 200))
        resp.media = {"count": len(versions), "versions": versions}
