"""The Falcon app factory: routes, the bearer, the family's error shape."""
from __future__ import annotations

import json
import logging

import falcon

from hippocampus.config import mcp_env
from hippocampus.front import (ActorDown, ActorRunning, Busy, MemoryDown, NoPacket, NotAllowed, ReplayBusy,
                               ServiceStopping, StillRunning, UnknownActor, VoiceError, VoiceOff, VoiceStorageError)

from hippocampus.http.auth import BearerAuth, BodyLimit, RequestLog, escape_controls, escape_waitress_log
from hippocampus.http.guard import Guard
from hippocampus.http.resources import (ActorRestart, Actors, CheckRoute, Events, Health, History, Nudge, Queue, Root, SleepRoute,
                        Status, TendRoute, Voice, VoiceHistory)

log = logging.getLogger("hippocampus.http")


def _serialize_error(req, resp, exc: falcon.HTTPError) -> None:
    """Every error in the family shape: {"detail": "..."}."""
    detail = exc.description or exc.title or "error"
    resp.content_type = falcon.MEDIA_JSON
    resp.data = json.dumps({"detail": detail}).encode()


def _unexpected(req, resp, ex, params) -> None:
    if isinstance(ex, falcon.HTTPError):
        raise ex
    log.exception("unexpected error on %s %s", escape_controls(req.method), escape_controls(req.path))
    raise falcon.HTTPInternalServerError(
        description="an unexpected error; the service log has the details") from None


# the facade's errors, mapped to HTTP once
ERRORS = [(Busy, falcon.HTTPConflict), (MemoryDown, falcon.HTTPServiceUnavailable),
          (ActorDown, falcon.HTTPServiceUnavailable), (ServiceStopping, falcon.HTTPServiceUnavailable),
          (UnknownActor, falcon.HTTPNotFound), (ActorRunning, falcon.HTTPConflict), (VoiceOff, falcon.HTTPNotFound),
          (VoiceError, falcon.HTTPBadRequest), (VoiceStorageError, falcon.HTTPServiceUnavailable),
          (NotAllowed, falcon.HTTPBadRequest), (NoPacket, falcon.HTTPNotFound)]


def _mapped(http_error):
    def handler(req, resp, ex, params):
        raise http_error(description=str(ex)) from None
    return handler


def _still_running(req, resp, ex, params):
    resp.status = falcon.HTTP_202
    resp.media = {"ok": True, "running": True, "detail": str(ex)}


def _replay_busy(req, resp, ex, params):
    raise falcon.HTTPConflict(description=f"{ex} (GET {ex.run.where} shows it)") from None


def create_app(front, *, bearer: str = "") -> falcon.App:
    """The routes over the service facade (hippocampus.front.Front)."""
    escape_waitress_log()
    server_cfg = front.config().server
    # the log outermost (421, 403 and 401 are logged), then who may call at all, then the bearer
    guard = Guard(server_cfg, bearer=bearer, mcp_path=mcp_env.mount_path(), mcp_hosts=mcp_env.allowed_hosts(),
                  mcp_origins=mcp_env.allowed_origins())
    app = falcon.App(middleware=[RequestLog(), guard, BearerAuth(bearer), BodyLimit(server_cfg.max_body_bytes)])
    app.req_options.strip_url_path_trailing_slash = True
    app.set_error_serializer(_serialize_error)
    app.add_error_handler(Exception, _unexpected)
    for exc, http_error in ERRORS:
        app.add_error_handler(exc, _mapped(http_error))
    app.add_error_handler(StillRunning, _still_running)
    app.add_error_handler(ReplayBusy, _replay_busy)
    for path, route in (("/", Root), ("/health", Health), ("/status", Status), ("/sleep", SleepRoute),
                        ("/tend", TendRoute), ("/check", CheckRoute), ("/nudge", Nudge), ("/events", Events),
                        ("/history", History), ("/queue", Queue), ("/actors", Actors),
                        ("/actors/{name}/restart", ActorRestart), ("/voice", Voice), ("/voice/history", VoiceHistory)):
        app.add_route(path, route(front))
    from hippocampus.http.openapi import OpenApi  # every route, as this service answers it (bearer or not)
    app.add_route("/openapi.json", OpenApi(front, bearer=bool(bearer)))
    from hippocampus.http.replay_routes import add_routes; add_routes(app, front)  # noqa: E702 - /replay, /quality
    from hippocampus.http.viewer import add_viewer; add_viewer(app)  # noqa: E702 - the window (GET /viewer, public)
    return app
