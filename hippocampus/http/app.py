"""The Falcon app factory: routes, the bearer, the family's error shape."""
from __future__ import annotations

import json
import logging

import falcon

from actors.messages import Check, Sleep, Tend

from .auth import BearerAuth, BodyLimit, RequestLog
from .resources import (ActorRestart, Actors, CycleRoute, Events, Health, History, Nudge, Queue, Root, Status,
                        Voice, VoiceHistory, _flag)
from .status import MemoryWatch

log = logging.getLogger("hippocampus.http")


def _serialize_error(req, resp, exc: falcon.HTTPError) -> None:
    """Every error in the family shape: {"detail": "..."}."""
    detail = exc.description or exc.title or "error"
    resp.content_type = falcon.MEDIA_JSON
    resp.data = json.dumps({"detail": detail}).encode()


def _unexpected(req, resp, ex, params) -> None:
    if isinstance(ex, falcon.HTTPError):
        raise ex
    log.exception("unexpected error on %s %s", req.method, req.path)
    raise falcon.HTTPInternalServerError(
        description="an unexpected error; the service log has the details") from None


def create_app(runtime, *, bearer: str = "") -> falcon.App:
    app = falcon.App(middleware=[RequestLog(), BearerAuth(bearer), BodyLimit(runtime.cfg.server.max_body_bytes)])
    app.req_options.strip_url_path_trailing_slash = True
    app.set_error_serializer(_serialize_error)
    app.add_error_handler(Exception, _unexpected)
    watch = MemoryWatch(runtime.ctx.memory)
    app.add_route("/", Root(runtime))
    app.add_route("/health", Health(runtime, watch))
    app.add_route("/status", Status(runtime, watch))
    app.add_route("/sleep", CycleRoute(runtime, "sleep", "sleeper",
                                       lambda req: (lambda tok, a=not _flag(req, "without_brief"): Sleep(a, tok))))
    app.add_route("/tend", CycleRoute(runtime, "tend", "chain", lambda req: (lambda tok: Tend(True, tok))))
    app.add_route("/check", CycleRoute(runtime, "check", "sleeper", lambda req: (lambda tok: Check(tok))))
    app.add_route("/nudge", Nudge(runtime))
    app.add_route("/events", Events(runtime))
    app.add_route("/history", History(runtime))
    app.add_route("/queue", Queue(runtime))
    app.add_route("/actors", Actors(runtime))
    app.add_route("/actors/{name}/restart", ActorRestart(runtime))
    app.add_route("/voice", Voice(runtime))
    app.add_route("/voice/history", VoiceHistory(runtime))
    from .openapi import OpenApi; app.add_route("/openapi.json", OpenApi())  # noqa: E702 - every route, described
    from .viewer import add_viewer; add_viewer(app, runtime)  # noqa: E702 - the window (GET /viewer, public)
    return app
