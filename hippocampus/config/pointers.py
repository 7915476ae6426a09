"""The blocks' bearer pointers, resolved by the family's rule (seren_meninges) with the library's per-call warnings
kept back, since one pointer is resolved several times; `pointer_problems` names each that yields nothing once."""
from __future__ import annotations

import logging
import operator
import threading
from typing import Any, Mapping

LIBRARY_LOGGER = "seren_meninges.credentials"

# (block path, pointer prefix, what a missing token means there)
POINTERS = (
    ("server", "bearer_token", None),      # worded from the bind: loopback, refused, or open
    ("memory", "bearer_token", "requests to Memory carry no bearer (a Memory that wants one answers 401)"),
    ("notify", "bearer_token", "webhook posts carry no bearer"),
    ("ripple", "bearer_token", "endpoint ripples carry no bearer"),
    ("model.lifecycle", "observatory_token", "calls to the Observatory carry no bearer"),
)

_held = threading.local()


def _hold_back(record: logging.LogRecord) -> bool:
    """While a resolve runs on this thread, the library's lines are kept for it, not printed."""
    sink = getattr(_held, "sink", None)
    if sink is not None:
        sink.append(record.getMessage())
    return sink is None


def _quiet_resolve(**kw: Any) -> tuple:
    from seren_meninges.credentials import resolve_token

    logging.getLogger(LIBRARY_LOGGER).addFilter(_hold_back)      # once: addFilter skips one already there
    outer = getattr(_held, "sink", None)
    _held.sink = lines = []
    try:
        return resolve_token(**kw), lines
    finally:
        _held.sink = outer


def resolve_pointer(block: Any, prefix: str = "bearer_token") -> str:
    """The token the block's pointers yield (inline, then keyring, then env), or "" for none; without the spaces
    and line breaks around it, which no HTTP header carries (a token kept with them could never be sent)."""
    token, _ = _quiet_resolve(inline=getattr(block, prefix, "") or None,
                              keyring_ref=getattr(block, f"{prefix}_keyring", "") or None,
                              env_var=getattr(block, f"{prefix}_env", "") or None)
    return (token or "").strip()


def _keyring_reason(lines: list) -> str:
    said = " ".join(lines)
    if "extra isn't installed" in said:
        return "the keyring package is not installed: pip install 'seren-meninges[keyring]'"
    if "must be 'service/username'" in said:
        return "it is not in the form service/username"
    if "lookup failed" in said:
        return "the keyring lookup failed (" + said.split(": ", 1)[-1] + ")"
    return "there is no such entry in the keyring"


def block_problem(block: Any, path: str, prefix: str, environ: Mapping[str, str]) -> tuple:
    """(what went wrong, the pointer that served instead or None), or (None, None) when nothing went wrong."""
    if getattr(block, prefix, ""):
        return None, None                   # an inline token wins over everything
    missing = []
    ref = getattr(block, f"{prefix}_keyring", "")
    if ref:
        token, lines = _quiet_resolve(keyring_ref=ref)
        if token:
            return None, None
        missing.append(f"'{path}.{prefix}_keyring' = {ref!r} yields no token ({_keyring_reason(lines)})")
    var = getattr(block, f"{prefix}_env", "")
    if var:
        if environ.get(var):
            return ("; ".join(missing), f"{prefix}_env ({var})") if missing else (None, None)
        state = "empty" if var in environ else "not set"
        missing.append(f"'{path}.{prefix}_env' names {var}, which is {state} in the environment")
    return ("; ".join(missing) or None), None


def _server_consequence(server: Any) -> str:
    from seren_meninges.exposure import is_loopback

    where = f"{server.host}:{server.port}"
    if is_loopback(server.host):
        return f"the service runs without a bearer on {where} (loopback: this box only)"
    if server.allow_open_lan:          # the loader has applied $SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN
        return f"the service runs with NO bearer on {where}, open to the network (allow_open_lan)"
    return f"the service refuses to start on {where}: beyond loopback it needs a bearer"


def bare_variable_names(cfg: Any) -> None:
    """Each `_env` pointer written as the shell spells the variable's value ($NAME) names NAME, as
    --ripple-token-env reads it."""
    for path, prefix, _ in POINTERS:
        block = operator.attrgetter(path)(cfg)
        setattr(block, f"{prefix}_env", getattr(block, f"{prefix}_env").lstrip("$"))


def pointer_problems(cfg: Any, environ: Mapping[str, str]) -> list:
    """One line per block whose bearer pointer resolves to nothing (environ: the loader's environment)."""
    out = []
    for path, prefix, meaning in POINTERS:
        block = operator.attrgetter(path)(cfg)
        what, instead = block_problem(block, path, prefix, environ)
        if instead:
            out.append(f"{what}: the {instead} is used instead")
        elif what is not None:
            out.append(f"{what}: {_server_consequence(block) if meaning is None else meaning}")
    return out
