"""model.write: whether the small model writes its operations (free) or only chooses fragments whose own words
become them (extractive); auto chooses by the model's measured size.

auto reads the number of parameters the server reports (llama-server: GET /v1/models `data[].meta.n_params`,
else any `n_params` in GET /props) the first time a drafting call needs it, and remembers it on the model's
client for this process (model.learned). Below SMALL parameters the model chooses (a model that small invents
facts when it writes); a model that does not say its size writes (free), and /status and the log say which was
chosen and why.
"""
from __future__ import annotations

import logging
from typing import Any, Optional

import requests

from hippocampus import outbound
from hippocampus.config import redact
from hippocampus.model.fit import json_object, server_root
from hippocampus.model.timings import count

log = logging.getLogger(__name__)
SMALL = 1_500_000_000          # below this many parameters, auto drafts extractive
TIMEOUT = 5.0                  # one deadline for both reads of the size (and never longer than model.timeout_seconds)
CAP = outbound.MB              # /models and /props are a few KB; a larger answer is not the model's list
FREE, EXTRACTIVE = "free", "extractive"


class _Bounded:
    """Both reads of the size within one wall-clock deadline, each answer capped (hippocampus.outbound)."""

    def __init__(self, seconds: float) -> None:
        self.deadline, self.session = outbound.Deadline(seconds), outbound.Session()

    def get(self, url: str, timeout: float = TIMEOUT) -> requests.Response:
        return outbound.call(self.session, "GET", url, deadline=self.deadline, cap=CAP)


def read_n_params(url: str, session: Any = None, seconds: float = TIMEOUT) -> Optional[int]:
    """The parameters the server at this URL says its model has; None: it does not say. Raises
    requests.RequestException when the server cannot be reached (or not within `seconds`)."""
    if session is None:
        own = _Bounded(seconds)
        with own.session:
            return read_n_params(url, own)
    models = json_object(session.get(url.rstrip("/") + "/models", timeout=TIMEOUT)) or {}
    for row in models.get("data") or []:
        n = count((row.get("meta") or {}).get("n_params")) if isinstance(row, dict) else None
        if n:
            return n
    props = json_object(session.get(server_root(url) + "/props", timeout=TIMEOUT)) or {}
    for where in (props, props.get("model") if isinstance(props.get("model"), dict) else {}):
        n = count(where.get("n_params"))
        if n:
            return n
    return None


def words(n: int) -> str:
    """135M, 1.5B."""
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def choose(setting: str, n_params: Optional[int]) -> dict:
    """{"mode", "why", "n_params"} for this setting and measured size (pure)."""
    if setting in (FREE, EXTRACTIVE):
        why = ("model.write: free: the model writes each operation's content" if setting == FREE else
               "model.write: extractive: the model chooses fragments; their own words become the memories")
        return {"mode": setting, "why": why, "n_params": n_params}
    if n_params is None:
        return {"mode": FREE, "n_params": None,
                "why": ("model.write: auto: the model server does not say its size (no n_params in /v1/models "
                        "or /props), so the model writes (free); set model.write: extractive for a model below "
                        f"{words(SMALL)} parameters")}
    if n_params < SMALL:
        return {"mode": EXTRACTIVE, "n_params": n_params,
                "why": (f"model.write: auto: the model has {words(n_params)} parameters, below {words(SMALL)}, so "
                        "it chooses fragments and their own words become the memories (extractive)")}
    return {"mode": FREE, "n_params": n_params,
            "why": (f"model.write: auto: the model has {words(n_params)} parameters, {words(SMALL)} or more, so it "
                    "writes each operation's content (free)")}


def mode_for(setting: str, url: str, learned, session: Any = None, seconds: float = TIMEOUT) -> dict:
    """The mode a drafting call uses: measured once per client (auto), kept on `learned` (model.learned); a server
    that cannot be reached is not remembered (free for this call, asked again on the next)."""
    if setting != "auto":
        return choose(setting, None)
    if learned.chosen is not None:
        return learned.chosen
    try:
        n = read_n_params(url, session, seconds)
    except requests.RequestException as exc:
        return {**choose(setting, None), "why": f"model.write: auto: the model's size could not be read "
                                                 f"({type(exc).__name__}), so this call writes (free)"}
    pick = choose(setting, n)
    if learned.remember("chosen", pick):
        log.info("the model at %s: %s", redact.url(url), pick["why"])
    return pick


def probe(setting: str, url: str, session: Any = None) -> str:
    """check-config's line: the mode a drafting call would use now, and why (measured, not remembered)."""
    try:
        pick = choose(setting, read_n_params(url, session) if setting == "auto" else None)
    except requests.RequestException as exc:
        return f"auto: the model's size could not be read ({type(exc).__name__}); a sleep reads it again"
    return f"{pick['mode']}: {pick['why']}"


def view(setting: str, known: Optional[dict]) -> dict:
    """For /status: the setting, the mode chosen (`known`: model.learned's) and why (auto before its first
    drafting call: not yet)."""
    if setting != "auto":
        return {"setting": setting, **choose(setting, None)}
    if known is None:
        return {"setting": setting, "mode": None, "n_params": None,
                "why": "model.write: auto: chosen by the model's size at the first drafting call"}
    return {"setting": setting, **known}
