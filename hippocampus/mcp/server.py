"""The tools on the SDK's low-level server, and its streamable-HTTP transport inside the WSGI app.

Schemas are read from the signatures and arguments checked in plain words (no pydantic model per tool, as FastMCP
builds); each call runs on a worker thread, failures as error results. One asyncio loop on a daemon thread runs
the session manager (stateless, JSON answers); a2wsgi hands it each request on that loop, and a Falcon sink copies
the answer back, so Falcon's middleware (the bearer) covers it.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
import time
from typing import Any, Callable, Optional

import falcon
from a2wsgi import ASGIMiddleware

from hippocampus import __version__
from hippocampus.front import FrontError, ServiceStopping, VoiceError, VoiceStorageError
from hippocampus.transport_words import in_words

from hippocampus.mcp.tools import DESCRIPTIONS, INSTRUCTIONS, TOOL_NAMES, VOICE_TOOL_NAMES, Tools, hints

log = logging.getLogger("hippocampus.mcp")

JSON_TYPES = {str: "string", int: "integer", bool: "boolean"}
WORDS = {str: "text", int: "a whole number", bool: "true or false"}
_TRUE, _FALSE = {"true", "yes", "on", "1", "t", "y"}, {"false", "no", "off", "0", "f", "n"}


class ArgumentError(ValueError):
    """An argument the tool cannot take: said to the caller as an error result."""


def _params(fn: Callable) -> list:
    return [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]


def input_schema(name: str, fn: Callable) -> dict:
    """The JSON schema of the tool's arguments (the shape clients saw from FastMCP: titles, defaults)."""
    props, required = {}, []
    for p in sorted(_params(fn), key=lambda p: p.name):
        prop = {"title": p.name.replace("_", " ").title(), "type": JSON_TYPES[p.annotation]}
        if p.default is inspect.Parameter.empty:
            required.append(p.name)
        else:
            prop = {"default": p.default, **prop}
        props[p.name] = prop
    schema = {"properties": props, "title": f"{name}Arguments", "type": "object"}
    return {**schema, "required": required} if required else schema


def _coerce(value: Any, kind: type, name: str) -> Any:
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, str)) and str(value).strip().lower() in _TRUE | _FALSE:
            return str(value).strip().lower() in _TRUE
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            return int(value.strip())
    elif isinstance(value, str):
        return value
    raise ArgumentError(f"{name} must be {WORDS[kind]}, not {json.dumps(value)}")


def arguments(fn: Callable, given: dict) -> dict:
    """The call's keyword arguments, checked against the signature (unknown names are ignored)."""
    out = {}
    for p in _params(fn):
        if p.name in given and given[p.name] is not None:
            out[p.name] = _coerce(given[p.name], p.annotation, p.name)
        elif p.default is inspect.Parameter.empty:
            raise ArgumentError(f"{p.name} is required: give it as {WORDS[p.annotation]}")
    return out


def run_tool(name: str, fn: Callable, given: dict) -> tuple:
    """(result dict or the error's words, is_error): the facade's errors and a crash in plain words."""
    try:
        return fn(**arguments(fn, given or {})), False
    except ArgumentError as exc:
        return f"{name} was not run: {exc}.", True
    except (FrontError, ServiceStopping, VoiceError, VoiceStorageError) as exc:
        return f"{exc}.".replace("..", "."), True
    except Exception as exc:  # noqa: BLE001
        log.exception("the MCP tool %s failed", name)
        words = in_words(exc)           # a fault's words already say it is inside the hippocampus, and where to look
        return f"{name} failed: {words}{'' if 'service log' in words else '; the service log has the details'}.", True


def outcome(out, failed: bool) -> str:
    """The log's words for how a call ended: done, a refusal or busy answer (ok false), or an error."""
    if failed:
        return "error: " + _short(str(out))
    if isinstance(out, dict) and out.get("ok") is False:
        return ("busy: " if out.get("busy") else "not done: ") + _short(str(out.get("message") or ""))
    words = (out.get("say") if isinstance(out.get("say"), str) else out.get("message")) if isinstance(out, dict) \
        else None                 # sleep_status: its headline, not every card
    return "done" + (": " + _short(str(words)) if words else "")


def escape_controls(text: str) -> str:
    """A log line's words with no control character in them (a tool's name is the caller's text)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _short(text: str, most: int = 160) -> str:
    text = escape_controls(" ".join(text.split()))
    return text if len(text) <= most else text[:most - 1] + "…"


def build_server(front, sdk):
    """A low-level Server with the tools on this facade (the voice tools only when the card is on)."""
    import anyio.to_thread

    types = sdk.types
    t = Tools(front)
    names = TOOL_NAMES + (VOICE_TOOL_NAMES if front.voice_enabled else [])
    fns = {name: getattr(t, name) for name in names}
    schemas = {name: input_schema(name, fn) for name, fn in fns.items()}
    listed = types.ListToolsResult(tools=[
        types.Tool(name=name, title=hints(name)["title"], description=DESCRIPTIONS[name], input_schema=schemas[name],
                   output_schema={"additionalProperties": True, "title": f"{name}DictOutput", "type": "object"},
                   annotations=types.ToolAnnotations(**hints(name))) for name in names])

    async def list_tools(ctx, params):
        return listed

    def error(text: str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)

    async def call_tool(ctx, params):
        fn = fns.get(params.name)
        if fn is None:
            log.info("MCP tool %s: refused (no such tool)", escape_controls(str(params.name))[:80])
            return error(f"There is no tool named {params.name!r} here; the tools are: {', '.join(names)}.")
        t0 = time.perf_counter()
        out, failed = await anyio.to_thread.run_sync(run_tool, params.name, fn, params.arguments or {})
        log.info("MCP tool %s: %s (%.0f ms)", params.name, outcome(out, failed), (time.perf_counter() - t0) * 1000)
        if failed:
            return error(out)
        text = json.dumps(out, indent=2, ensure_ascii=False, default=str)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=json.loads(text))

    return sdk.Server("seren-hippocampus", version=__version__, instructions=INSTRUCTIONS,
                      on_list_tools=list_tools, on_call_tool=call_tool, get_tool_input_schema=schemas.get)


# Hop-by-hop headers are the server's business (waitress refuses to be handed one); Falcon sets Content-Length.
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "trailers", "transfer-encoding", "upgrade", "content-length"}


class Bridge:

    def __init__(self, manager, name: str = "mcp-loop"):
        self.manager = manager
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: Optional[asyncio.Event] = None
        self._error: Optional[BaseException] = None
        self.running = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.wsgi = ASGIMiddleware(manager.handle_request, loop=self.loop)

    def start(self, timeout: float = 10.0) -> "Bridge":
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"the MCP session manager did not start within {timeout:g} s")
        if self._error is not None:
            raise RuntimeError(f"the MCP session manager did not start: {self._error!r}") from self._error
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to start() or logged
            self._error = exc
            log.exception("the MCP loop stopped with an error")
        finally:
            self.running = False
            self._ready.set()
            self._close_loop()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        async with self.manager.run():
            self.running = True
            self._ready.set()
            await self._stop.wait()

    def _close_loop(self) -> None:
        try:
            pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            for t in pending:            # sse-starlette leaves a watcher task behind
                t.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        except Exception:  # noqa: BLE001
            log.debug("closing the MCP loop", exc_info=True)
        finally:
            self.loop.close()

    def stop(self, timeout: float = 5.0) -> None:
        if not self._thread.is_alive():
            return
        if self._stop is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self._stop.set)
            except RuntimeError:         # the loop closed in between
                pass
        self._thread.join(timeout)


def call_wsgi(app, env: dict) -> tuple:
    """(status, headers, body) of one call; the answer is JSON, never an event stream, so it is read whole."""
    started: list = []
    result = app(env, lambda status, headers, exc_info=None: started.append((status, headers)) or (lambda d: None))
    try:
        body = b"".join(result)
    finally:
        getattr(result, "close", lambda: None)()
    return (*(started[0] if started else ("500 Internal Server Error", [])), body)


class WsgiSink:
    """A Falcon sink around the bridge: POST only (405 for GET, DELETE and the rest)."""

    def __init__(self, bridge: Bridge):
        self.bridge = bridge

    def __call__(self, req: falcon.Request, resp: falcon.Response, **kwargs) -> None:
        req.context.mcp_transport = True    # its request line at DEBUG: each tool call logs its own at INFO
        if req.method != "POST":
            # a GET would open an endless event stream pinning a waitress thread; stateless, there is none to send
            resp.status = falcon.HTTP_405
            resp.set_header("Allow", "POST")
            resp.media = {"detail": "this MCP endpoint takes POST only (stateless, JSON answers)"}
            return
        if not self.bridge.running:
            raise falcon.HTTPServiceUnavailable(description="the MCP endpoint is stopping")
        resp.status, headers, resp.data = call_wsgi(self.bridge.wsgi, req.env)
        for name, value in headers:
            if name.lower() == "content-type":
                resp.content_type = value
            elif name.lower() not in HOP_BY_HOP:
                resp.append_header(name, value)


WARM_UP = (     # one call of each kind a client's first session makes (the handshake era, then the 2026 one)
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "warm-up", "version": "1"}}},
     "2025-11-25"),
    ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "2025-11-25"),
    ({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, "2025-11-25"),
    ({"jsonrpc": "2.0", "id": 3, "method": "server/discover"}, None),
)


def warm_up(bridge: Bridge, path: str) -> None:
    """Send the endpoint in-process the calls a client's first session makes, so the SDK builds its parsers now."""
    import io
    import json
    from wsgiref.util import setup_testing_defaults

    for body, version in WARM_UP:
        data = json.dumps(body).encode()
        env = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.multithread": True,
               "wsgi.input": io.BytesIO(data), "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": "application/json",
               "HTTP_ACCEPT": "application/json, text/event-stream", "REMOTE_ADDR": "127.0.0.1"}
        setup_testing_defaults(env)         # the rest of a WSGI environ, from 127.0.0.1
        if version:
            env["HTTP_MCP_PROTOCOL_VERSION"] = version
        try:
            log.debug("MCP warm-up %s: %s", body["method"], [call_wsgi(bridge.wsgi, env)[0]])
        except Exception:  # noqa: BLE001
            log.debug("the MCP warm-up call %s failed", body["method"], exc_info=True)
