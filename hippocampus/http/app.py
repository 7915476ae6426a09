"""The Falcon app factory: routes, the bearer, the family's error shape."""
from __future__ import annotations

import json
import logging

import falcon

from hippocampus.front import (ActorDown, ActorRunning, Busy, MemoryDown, NoPacket, NotAllowed, ReplayBusy,
                               ServiceStopping, StillRunning, UnknownActor, UnknownEvent, VoiceError, VoiceOff,
                               VoiceStorageError)
from hippocampus.http.auth import BearerAuth, RequestLog, escape_waitress_log
from hippocampus.http.guard import Guard
from hippocampus.http.metrics import Metrics
from hippocampus.http.openapi import OpenApi
from hippocampus.http.resources import (ActorRestart, Actors, Call, Events, Health, History, Quality, Queue, Replay,
                                        ReplayRuns, Root, SleepRoute, Status, Voice, VoiceHistory)
from hippocampus.http.viewer import Viewer
from hippocampus.words import escape_controls

log = logging.getLogger(__name__)
# the facade's errors, mapped to HTTP once
ERRORS = [(Busy, falcon.HTTPConflict), (MemoryDown, falcon.HTTPServiceUnavailable),
          (ActorDown, falcon.HTTPServiceUnavailable), (ServiceStopping, falcon.HTTPServiceUnavailable),
          (UnknownActor, falcon.HTTPNotFound), (ActorRunning, falcon.HTTPConflict), (VoiceOff, falcon.HTTPNotFound),
          (VoiceError, falcon.HTTPBadRequest), (VoiceStorageError, falcon.HTTPServiceUnavailable),
          (NotAllowed, falcon.HTTPBadRequest), (NoPacket, falcon.HTTPNotFound), (UnknownEvent, falcon.HTTPBadRequest)]


def _serialize_error(req, resp, exc: falcon.HTTPError) -> None:
    """Every error in the family shape: {"detail": "..."}."""
    resp.content_type = falcon.MEDIA_JSON
    resp.data = json.dumps({"detail": exc.description or exc.title or "error"}).encode()


def _unexpected(req, resp, ex, params) -> None:
    log.exception("unexpected error on %s %s", escape_controls(req.method), escape_controls(req.path))
    raise falcon.HTTPInternalServerError(
        description="an unexpected error; the service log has the details") from None


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
    # the log outermost (421, 403 and 401 are logged), then who may call at all, then the bearer; a body over
    # server.max_body_bytes never gets here (waitress answers it 413 from its head)
    guard = Guard(front.config().server, bearer=bearer)
    app = falcon.App(middleware=[RequestLog(), guard, BearerAuth(bearer, front.config().server.mcp_mount)])
    app.req_options.strip_url_path_trailing_slash = True
    app.set_error_serializer(_serialize_error)
    app.add_error_handler(Exception, _unexpected)
    for exc, http_error in ERRORS:
        app.add_error_handler(exc, _mapped(http_error))
    app.add_error_handler(StillRunning, _still_running)
    app.add_error_handler(ReplayBusy, _replay_busy)
    for path, route in (("/", Root), ("/health", Health), ("/status", Status), ("/sleep", SleepRoute),
                        ("/events", Events), ("/history", History), ("/queue", Queue), ("/actors", Actors),
                        ("/actors/{name}/restart", ActorRestart), ("/voice", Voice), ("/voice/history", VoiceHistory),
                        ("/replay", ReplayRuns), ("/replay/{draft_id}", Replay), ("/quality", Quality)):
        _add(app, path, route(front))
    for call in ("tend", "check", "nudge"):
        _add(app, f"/{call}", Call(front, call))
    _add(app, "/openapi.json", OpenApi(front, bearer=bool(bearer)))
    _add(app, "/metrics", Metrics(front))
    _add(app, "/viewer", Viewer())      # public: the page holds nothing
    return app


def _add(app: falcon.App, path: str, resource) -> None:
    """A route that answers GET answers HEAD alike: GET's status and headers, and Falcon sends no body."""
    if hasattr(resource, "on_get") and not hasattr(resource, "on_head"):
        resource.on_head = resource.on_get
    app.add_route(path, resource)
