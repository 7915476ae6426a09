"""The Falcon app factory: routes, the bearer, the family's error shape."""
from __future__ import annotations

import json
import logging

import falcon

from actors.messages import Check, Sleep, Tend

from .auth import BearerAuth, BodyLimit, RequestLog, escape_controls, escape_waitress_log
from .guard import Guard
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
    log.exception("unexpected error on %s %s", escape_controls(req.method), escape_controls(req.path))
    raise falcon.HTTPInternalServerError(
        description="an unexpected error; the service log has the details") from None


def _guard(server_cfg, bearer: str) -> Guard:
    """The Host and Origin guard, with the MCP path and its two env lists (hippocampus.mcp.mount)."""
    from hippocampus.mcp import mount

    return Guard(server_cfg, bearer=bearer, mcp_path=mount.mount_path(), mcp_hosts=mount.allowed_hosts(),
                 mcp_origins=mount.allowed_origins())


def create_app(runtime, *, bearer: str = "") -> falcon.App:
    escape_waitress_log()
    server_cfg = runtime.cfg.server
    # the log outermost (421, 403 and 401 are logged), then who may call at all, then the bearer
    app = falcon.App(middleware=[RequestLog(), _guard(server_cfg, bearer), BearerAuth(bearer),
                                 BodyLimit(server_cfg.max_body_bytes)])
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
    from .replay_routes import add_routes; add_routes(app, runtime)  # noqa: E702 - /replay, /quality
    from .viewer import add_viewer; add_viewer(app, runtime)  # noqa: E702 - the window (GET /viewer, public)
    return app
