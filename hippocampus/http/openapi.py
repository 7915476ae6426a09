"""GET /openapi.json: every route as this service answers it, kept by hand beside app.py's routes (the tests
check the two agree). SPEC is the document of a service with a bearer, no model and no replay candidates."""
from __future__ import annotations

import copy

from hippocampus import SERVICE, __version__
from hippocampus.config.names import EVENTS
from hippocampus.config.replay_endpoints import CONFIGURED, NAME_CHARS, TIMEOUT_CAP, listed
from hippocampus.front import WHY_CHARS
from hippocampus.replay.service import WAIT_SECONDS
from hippocampus.words import ONE_LINE, PLAIN, PLAIN_SAID

_ERROR = {"$ref": "#/components/schemas/Error"}
_OBJECT = {"type": "object", "additionalProperties": True}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


WORDS = {400: "bad input", 401: "no bearer, or a wrong one (Authorization: Bearer <token>)", 404: "not found",
         403: "a page on another site may not change anything here: the Origin is not this service's own (nor in "
              "server.allowed_origins), or Sec-Fetch-Site says cross-site",
         405: "method not allowed", 409: "refused in this state",
         413: "the body is larger than server.max_body_bytes",
         408: "the body came too slowly (server.body_timeout_seconds, then server.min_body_bytes_per_second)",
         421: "the Host names a host this service does not answer to (server.allowed_hosts adds one), or is "
              "not one name or address with an optional :port",
         503: "the service is stopping"}
STATE_CHANGING = ("post", "put", "patch", "delete")


def _errors(*codes: int, says: dict = None) -> dict:
    return {str(c): _json(_ERROR, (says or {}).get(c) or WORDS[c]) for c in codes}


def _param(name: str, where: str, what: str, **schema) -> dict:
    return {"name": name, "in": where, "required": where == "path", "description": what,
            "schema": schema or {"type": "string"}}


def _limit(default: int, hi: int) -> dict:
    # no bounds in the schema: the route holds any integer to 1..hi
    return _param("limit", "query", f"how many (default {default}): a whole number, held to 1..{hi} (a larger "
                                    f"one reads {hi}, 0 or less reads 1)", type="integer", default=default)


def _flag(name: str, what: str) -> dict:
    return _param(name, "query", what, type="boolean", default=False)


def _op(summary: str, ok: dict, *codes: int, public: bool = False, params: list = None, body: dict = None,
        says: dict = None, more: dict = None, status: str = "200") -> dict:
    # every route answers 405 to a method it does not take, and all but the public ones 401
    codes = (*sorted({*codes, 405}), *(() if public else (401,)))
    op: dict = {"summary": summary, "responses": {status: ok, **(more or {}), **_errors(*codes, says=says)}}
    if public:
        op["security"] = []
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = body
    return op


def _replay_body(candidates: tuple, *, in_body: bool) -> dict:
    """The replay body (null is the same as leaving a field out); with no `candidates` that field is left out."""
    props: dict = {}
    if in_body:
        props["draft_id"] = {"type": "string", "minLength": 1, "description": "the draft (its id, as in Memory's "
                                                                              "list_drafts)"}
    if candidates:
        props["candidate"] = {"type": "string", "enum": list(candidates), "nullable": True, "description": (
            "a name listed in replay.candidates, or \"model\" for the configured model (the default); no url "
            "is taken")}
    props["model"] = {"type": "string", "maxLength": NAME_CHARS, "pattern": ONE_LINE, "nullable": True,
                      "description": "the model name sent (default: the candidate's model)"}
    props["timeout_seconds"] = {"type": "number", "minimum": 0, "exclusiveMinimum": True, "nullable": True,
                                "description": f"seconds per call, above 0 (default: the candidate's, or "
                                               f"model.timeout_seconds); above {TIMEOUT_CAP:g} it is capped"}
    schema = {"type": "object", "additionalProperties": False, "properties": props}
    if in_body:
        schema["required"] = ["draft_id"]
    return {"required": in_body, "content": {"application/json": {"schema": schema}}}


def _replay(summary: str, params: list = None) -> dict:
    """POST /replay and /replay/{draft_id}: what was read from the answers, or still running after WAIT_SECONDS."""
    return _op(summary, _json(_OBJECT, "{run, draft_id, landed, original, candidate, timeout_note}: what was read "
                                       "from each answer (operations, cut-off, failure, timings), never its raw text"),
               400, 404, 409, 413, 503, params=params,
               says={400: "a url, an extra_body, a field not named here, or a candidate not listed in "
                          "replay.candidates: refused, nothing was sent",
                     409: "busy: a replay is already running, or (no candidate named) there is no configured model "
                          "to replay on; nothing was started"},
               more={"202": _json(_OBJECT, "{ok, running: true, run, result, detail}: still running after "
                                           f"{WAIT_SECONDS:g} s; GET the result path for it")})


def _cycle(summary: str, *codes: int, params: list = None) -> dict:
    """A sleep, tend or check by hand: its report, busy, Memory down, or still running after the request."""
    return _op(summary, _json(_OBJECT, "the report of what ran"), *codes, 409, 413, 503, params=params,
               says={409: "busy: a sleep, tend or check is already running; nothing was started",
                     503: "SerenMemory is not answering, the actor is down, or the service is stopping; nothing was "
                          "started"},
               more={"202": _json(_OBJECT, "{ok, running: true, detail}: it outlives the request and carries on (the "
                                           "status shows its progress)")})


_RPC_ID = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
_TEXT = {"type": "string"}


def _rpc(*required: str, **props) -> dict:
    return {"type": "object", "required": ["jsonrpc", *required],
            "properties": {"jsonrpc": {"type": "string", "enum": ["2.0"]}, **props}}


# what the MCP SDK takes (anything else is its 400); other fields are let through
_MCP_MESSAGE = {"description": "a JSON-RPC 2.0 message: a request (with an id), a notification, a response or an "
                               "error",
                "anyOf": [
                    _rpc("id", "method", id=_RPC_ID, method=_TEXT, params={"type": "object", "nullable": True}),
                    _rpc("method", method=_TEXT, params={"type": "object", "nullable": True}),
                    _rpc("id", "result", id=_RPC_ID, result={"type": "object"}),
                    # code: an integer (pydantic also takes true and false)
                    _rpc("id", "error", id={**_RPC_ID, "nullable": True},
                         error={"type": "object", "required": ["code", "message"],
                                "properties": {"code": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
                                               "message": _TEXT}})]}


_BASE: dict = {
    "openapi": "3.0.3",
    "info": {"title": SERVICE, "version": __version__,
             "description": "The sleep cycle for SerenMemory. Errors are {\"detail\": \"...\"}."},
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": {"type": "object", "required": ["detail"],
                      "properties": {"detail": {"type": "string"}}},
            "VoiceCard": {"type": "object", "required": ["text"], "additionalProperties": True,  # others ignored
                          "properties": {"text": {"type": "string", "pattern": PLAIN_SAID, "maxLength": 1500,
                                                  "description": "the card (not blank, no control character but "
                                                                 "newlines and tabs; at most voice.max_chars "
                                                                 "characters once trimmed)"},
                                         "why": {"type": "string", "nullable": True, "maxLength": WHY_CHARS,
                                                 "pattern": PLAIN}}},
        },
    },
    "security": [{"bearer": []}],
    "paths": {
        "/": {"get": _op("the service, its version, the mode (no URL)", _json(_OBJECT, "who this is"), public=True)},
        "/health": {"get": _op("alive, and whether Memory answers", _json(_OBJECT, "{ok, memory_reachable}"),
                               public=True)},
        "/viewer": {"get": _op("the window (an HTML page)", {"description": "the page", "content": {
            "text/html": {"schema": {"type": "string"}}}}, public=True)},
        "/openapi.json": {"get": _op("this document", _json(_OBJECT, "OpenAPI 3"))},
        "/status": {"get": _op("the status board, with `explain`", _json(_OBJECT, "the status"))},
        "/sleep": {"post": _cycle("a sleep by hand (asks for a brief when none waits)", 400, params=[
            _flag("without_brief", "draft unsteered now instead of asking for a brief")])},
        "/tend": {"post": _cycle("redraft what was denied and close what landed, now")},
        "/check": {"post": _cycle("purge what is flagged, then sleep if a brief waits")},
        "/nudge": {"post": _op("your turn: a tick runs after the rippled session ends", _json(_OBJECT, "{ok, woke}"),
                               413)},
        "/events": {"get": _op("events, newest first", _json(_OBJECT, "{count, webhook, entries, say}"), 400,
                               params=[_limit(100, 1000), _param("type", "query", "only events of this type (a "
                                                                 "name no event has is refused)", type="string",
                                                                 enum=list(EVENTS))])},
        "/history": {"get": _op("past sleeps and tends, newest first", _json(_OBJECT, "{count, entries}"), 400,
                                params=[_limit(40, 80)])},
        "/queue": {"get": _op("drafts waiting for review in Memory", _json(_OBJECT, "{count, drafts, say}"))},
        "/actors": {"get": _op("the supervised actors", _json(_OBJECT, "{actors}"))},
        "/actors/{name}/restart": {"post": _op(
            "restart an actor (a failed one; a running one with force): answered at once, state \"restarting\"; the "
            "supervisor restarts it in the background (a busy one's current work has up to 10 s to end first), and "
            "/actors, /status and the log say when it is back", _json(_OBJECT, "{actor, state, say}"),
            400, 404, 409, 413, 503, status="202",
            params=[_param("name", "path", "the actor"), _flag("force", "restart a running actor too")],
            says={404: "no actor by that name", 409: "the actor is running (force=true restarts it anyway)",
                  503: "the supervisor is down; nothing was restarted"})},
        "/voice": {
            "get": _op("the voice card (404 while it is off)", _json(_OBJECT, "{version, text, ...}"), 404),
            "put": _op("write a new version of the voice card", _json(_OBJECT, "the version written"),
                       400, 404, 413, 503, says={503: "the voice card could not be stored"},
                       body={"required": True, "content": {"application/json": {
                           "schema": {"$ref": "#/components/schemas/VoiceCard"}}}}),
        },
        "/voice/history": {"get": _op("earlier versions of the voice card, newest first",
                                      _json(_OBJECT, "{count, versions}"), 400, 404, params=[_limit(10, 200)])},
        "/metrics": {"get": _op("counters and gauges for an operator's alerts (sleeps and chains by outcome, "
                                "operations by verdict, the last successful sleep, model starts and up seconds, Memory "
                                "reachable), in the Prometheus text format", {"description": "the metrics", "content": {
                                    "text/plain": {"schema": {"type": "string"}}}})},
        "/quality": {"get": _op("the quality report per model name and voice-card version (read in the background)",
                                _json(_OBJECT, "{ready, at, drafts, groups, total, message, say}"))},
        "/replay": {"post": _replay("replay one draft's saved prompts on a candidate model (nothing is written to "
                                    "Memory)"),
                    "get": _op("the replays kept ({running, runs, say}), or with ?run=ID that run's result as POST "
                               "answered it (202 while it runs; 404: not kept)",
                               _json(_OBJECT, "{running, runs, say}, or a run's result"), 404,
                               more={"202": _json(_OBJECT, "{ok, running: true, run, result, detail}")},
                               params=[_param("run", "query", "a run id, as POST /replay answered it")])},
        "/replay/{draft_id}": {"post": _replay("replay this draft's saved prompts on a candidate model (404: no packet "
                                               "for it)", params=[_param("draft_id", "path", "the draft")])},
        "/mcp": {"post": _op(
            "the MCP endpoint (streamable HTTP, stateless, JSON answers; the [mcp] extra)",
            _json(_OBJECT, "the JSON-RPC answer (a result, or an error such as an unknown method)"), 404, 413,
            body={"required": True, "content": {"application/json": {"schema": _MCP_MESSAGE}}},
            # no schema for a 400: the SDK answers a body that is not JSON in plain text
            more={"202": {"description": "a notification or a response: taken, no answer"},
                  "400": {"description": "not a JSON-RPC message: a JSON-RPC error, or (a body that is not JSON) "
                                         "the SDK's words as text"}})},
    },
}


def document(*, bearer: bool, candidates: tuple = (), voice_max_chars: int = 1500, mcp_mount: str = "/mcp") -> dict:
    spec = copy.deepcopy(_BASE)
    spec["paths"][mcp_mount] = spec["paths"].pop("/mcp")      # where server.mcp_mount put it
    spec["components"]["schemas"]["VoiceCard"]["properties"]["text"]["maxLength"] = voice_max_chars
    for path, in_body in (("/replay", True), ("/replay/{draft_id}", False)):
        spec["paths"][path]["post"]["requestBody"] = _replay_body(tuple(candidates), in_body=in_body)
    if not bearer:
        del spec["security"]
    for ops in spec["paths"].values():
        for method, op in ops.items():
            # the guard's 421 everywhere, its 403 where something changes; 408 wherever a body is taken
            codes = (421, 403) if method in STATE_CHANGING else (421,)
            op["responses"].update(_errors(*codes, *((408,) if "413" in op["responses"] else ())))
            if not bearer:
                op["responses"].pop("401", None)
    return spec


SPEC: dict = document(bearer=True)


class OpenApi:
    def __init__(self, front, *, bearer: bool = True):
        self.front, self.bearer = front, bearer

    def on_get(self, req, resp) -> None:
        cfg = self.front.config()
        candidates = ((CONFIGURED,) if cfg.model.configured else ()) + tuple(sorted(listed(cfg)))
        resp.media = document(bearer=self.bearer, candidates=candidates, voice_max_chars=cfg.voice.max_chars,
                              mcp_mount=cfg.server.mcp_mount)
