"""The tools on the SDK's low-level server.

Schemas are read from the signatures and arguments checked in plain words (no pydantic model per tool, as FastMCP
builds); each call runs on a worker thread, failures as error results.
"""
from __future__ import annotations

import inspect
import json
import logging
import time
from typing import Any, Callable

from hippocampus import __version__
from hippocampus.front import FrontError, ServiceStopping, VoiceError, VoiceStorageError
from hippocampus.transport_words import in_words
from hippocampus.words import escape_controls, whole, yes_no

from hippocampus.mcp.tools import DESCRIPTIONS, INSTRUCTIONS, TOOL_NAMES, VOICE_TOOL_NAMES, Tools, hints

log = logging.getLogger(__name__)

JSON_TYPES = {str: "string", int: "integer", bool: "boolean"}
WORDS = {str: "text", int: "a whole number", bool: "true or false"}
READ = {str: lambda v: v if isinstance(v, str) else None, int: whole, bool: yes_no}     # None: not that kind


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
    taken = READ[kind](value)
    if taken is None:
        raise ArgumentError(f"{name} must be {WORDS[kind]}, not {json.dumps(value)}")
    return taken


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
    if out.get("ok") is False:          # every tool answers a dict
        return ("busy: " if out.get("busy") else "not done: ") + _short(str(out.get("message") or ""))
    words = out.get("say") if isinstance(out.get("say"), str) else out.get("message")  # sleep_status: its headline
    return "done" + (": " + _short(str(words)) if words else "")


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
