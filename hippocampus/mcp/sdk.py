"""The part of the MCP SDK the stateless JSON endpoint runs (its low-level server and streamable-HTTP manager).

Skipped: what `import mcp` brings along (the client, FastMCP, the SSE and stdio transports). The modules in
DEFERRED are stand-ins while the SDK loads, whose names import the real module on their first call; `mcp` and
`mcp.server` are registered without their __init__, so a later `import mcp` gets these modules, not a copy.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Callable

# module -> the names the SDK imports from it at import time, all called only on paths this endpoint never takes
DEFERRED = {
    "sse_starlette": ("EventSourceResponse", "ServerSentEvent", "JSONServerSentEvent"),
    "mcp.server.auth.routes": ("create_auth_routes", "build_resource_metadata_url",
                               "create_protected_resource_routes"),
    "starlette.applications": ("Starlette",),
}
PACKAGES = ("mcp", "mcp.server")         # registered without running their __init__

_lock = threading.Lock()


_loaded: "types.SimpleNamespace | None" = None


def load() -> types.SimpleNamespace:
    """Server, StreamableHTTPSessionManager, TransportSecuritySettings and types, imported once (thread-safe)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = _load()
        return _loaded


def _load() -> types.SimpleNamespace:
    import a2wsgi  # noqa: F401 - the bridge's; fail here, before anything is registered, without the extra

    registered = [name for name in PACKAGES if name not in sys.modules and _register_package(name)]
    stand_ins = [name for name in DEFERRED if name not in sys.modules]
    for name in stand_ins:
        sys.modules[name] = _stand_in(name)
    try:
        from mcp.server.lowlevel.server import Server
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings
        import mcp_types
    except BaseException:
        for name in registered:
            sys.modules.pop(name, None)
        raise
    finally:
        for name in stand_ins:          # the real module, should anything import it from here on
            if getattr(sys.modules.get(name), "__stand_in__", False):
                del sys.modules[name]
    return types.SimpleNamespace(Server=Server, StreamableHTTPSessionManager=StreamableHTTPSessionManager,
                                 TransportSecuritySettings=TransportSecuritySettings, types=mcp_types)


def _register_package(name: str) -> bool:
    """Put the package in sys.modules as its directory only (its submodules import; its __init__ does not run)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"No module named {name!r}")
    module = importlib.util.module_from_spec(spec)      # its attributes (__path__, __spec__...), never executed
    module.__doc__ = f"{name}: registered by hippocampus.mcp.sdk without its __init__"
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, f"{name}: a stand-in while the MCP SDK loads (hippocampus.mcp.sdk)")
    module.__stand_in__ = True
    for attr in DEFERRED[name]:
        setattr(module, attr, _on_first_call(name, attr))
    return module


def _on_first_call(module: str, attr: str) -> Callable:
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), attr)(*args, **kwargs)
    call.__name__ = call.__qualname__ = attr
    call.__doc__ = f"{module}.{attr}, imported on its first call"
    return call
