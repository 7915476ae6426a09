"""Does the largest prompt a sleep can send fit the model server's context? Measured on the server itself.

llama.cpp's GET /props gives a slot's context, its /apply-template and /tokenize count the prompt; a server
without them gives "unknown". A prompt that does not fit is refused (400 exceed_context_size_error) or its
answer cut off, and either loses the pile.
"""
from __future__ import annotations

import time
from typing import Optional

import requests

from hippocampus import outbound, transport_words
from hippocampus.config import redact
from hippocampus.drafting.prompt import FRAGMENT_CHARS, SUMMARY_CHARS, VIA_CHARS, Steer, draft_prompt
from hippocampus.drafting.schema import answer_cap

TIMEOUT = 5.0               # one deadline for each of the three calls, however slowly the server answers
ANSWER_CAP = 4 * 2 ** 20    # /props and /tokenize answer kilobytes: past this, the call is stopped
# ordinary words, so that the filler tokenizes about as densely as what people write
_WORDS = ("the garden was quiet after rain and we talked about moving the old bench closer to the "
          "apple tree where morning light stays longest while someone planned a trip north next spring "
          "with two friends who keep bees near the river").split()


def _filler(chars: int, seed: int) -> str:
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < chars:
        out.append(_WORDS[i % len(_WORDS)])
        i += 7
    return " ".join(out)[:chars]


def largest_pile(cfg) -> tuple:
    """(the drafting prompt, its markers) of the biggest pile this config lets a sleep build (its rules and voice
    card too)."""
    s = cfg.sleep
    entries = [{"id": f"st-{i}", "content": _filler(FRAGMENT_CHARS, i), "metadata": {"ts": 0}}
               for i in range(s.pile_max)]
    cores = [{"id": f"core-{i}", "content": _filler(s.core_chars, 3 * i), "satellites": 9,
              "via": _filler(VIA_CHARS, 5 * i)} for i in range(s.candidate_cores)]
    voice = _filler(cfg.voice.max_chars, 11) if cfg.voice.enabled else ""
    return draft_prompt(voice_block=voice, steer=Steer(summary=_filler(SUMMARY_CHARS, 13)),
                        topic="a topic of a few words", entries=entries, candidates=cores, core_chars=s.core_chars)


def server_root(model_url: str) -> str:
    """llama-server's own routes (/props, /tokenize) sit beside /v1, not under it."""
    base = model_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def json_object(resp: requests.Response, any_status: bool = False) -> Optional[dict]:
    """The body when it is a JSON object (a 200's only, unless any_status), else None."""
    try:
        data = resp.json()
    except ValueError:
        return None
    return data if (any_status or resp.status_code == 200) and isinstance(data, dict) else None


def _ask(session: requests.Session, method: str, url: str, **kw) -> requests.Response:
    return outbound.call(session, method, url, deadline=outbound.Deadline(TIMEOUT), cap=ANSWER_CAP, **kw)


def measure(cfg, session: Optional[requests.Session] = None) -> dict:
    """{"n_ctx", "prompt_tokens", "max_tokens", "fits" (True, False or None: unknown), "error", "checked_at"}."""
    prompt, markers = largest_pile(cfg)     # the prompt counted in the server's chat template, when it has one
    out = {"n_ctx": None, "prompt_tokens": None, "max_tokens": answer_cap(markers, cfg.model.max_tokens),
           "fits": None, "error": None, "checked_at": time.time(), "ceiling": cfg.model.max_tokens}
    root = server_root(cfg.model.url)
    try:
        with outbound.session_or_own(session) as s:
            props = json_object(_ask(s, "GET", root + "/props")) or {}
            n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
            if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0:
                out["n_ctx"] = n_ctx
                templated = json_object(_ask(s, "POST", root + "/apply-template",
                                             json={"messages": [{"role": "user", "content": prompt}]})) or {}
                text = templated.get("prompt") if isinstance(templated.get("prompt"), str) else prompt
                said = json_object(_ask(s, "POST", root + "/tokenize", json={"content": text, "add_special": True}))
                tokens = (said or {}).get("tokens")
                out["prompt_tokens"] = len(tokens) if isinstance(tokens, list) else None
    except requests.RequestException as exc:
        did = transport_words.failed_predicate(exc, seconds=TIMEOUT)[1]
        out["error"] = f"the context size could not be checked: the model server at {redact.url(root)} {did}"
    if out["prompt_tokens"] is not None:
        out["fits"] = out["prompt_tokens"] + out["max_tokens"] <= out["n_ctx"]
    return out


def context_needed(prompt_tokens: int, max_tokens: int) -> int:
    """The -c to suggest: the prompt and the answer's cap, rounded up to a whole 1,024."""
    return -(-(int(prompt_tokens) + int(max_tokens)) // 1024) * 1024


def too_long(prompt_tokens: int, max_tokens: int, n_ctx: int, what: str = "the prompt",
             ceiling: Optional[int] = None) -> str:
    """The three numbers and the fix, in one sentence set into others (no capital, no full stop); `ceiling`:
    model.max_tokens, when the answer's cap (`max_tokens`) was sized to its pile below it."""
    cap = (f"model.max_tokens is {max_tokens:,}" if ceiling is None or max_tokens >= ceiling else
           f"its answer's cap is {max_tokens:,} (sized to the pile; model.max_tokens is {ceiling:,})")
    return (f"{what} is {prompt_tokens:,} tokens and {cap}, but the server's "
            f"context is {n_ctx:,} tokens: start the server with -c {context_needed(prompt_tokens, max_tokens)} "
            "or more, or lower model.max_tokens / sleep.pile_max")


def fit_sentence(fit: Optional[dict]) -> Optional[str]:
    """The sentence for a measured fit that fails, else None (it fits, or it is unknown)."""
    if not fit or fit.get("fits") is not False:
        return None
    return too_long(fit["prompt_tokens"], fit["max_tokens"], fit["n_ctx"],
                    "the largest prompt a sleep can send (a full pile)", fit.get("ceiling"))


def refused(body: object, max_tokens: int, ceiling: Optional[int] = None) -> Optional[str]:
    """A server's 400 exceed_context_size_error as a plain sentence, or None for any other body."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict) or err.get("type") != "exceed_context_size_error":
        return None
    n_prompt, n_ctx = err.get("n_prompt_tokens"), err.get("n_ctx")
    if not (isinstance(n_prompt, int) and isinstance(n_ctx, int)):
        return "the model server refused the prompt as longer than its context: start it with a larger -c, " \
               "or lower sleep.pile_max"
    return "the model server refused the prompt: " + too_long(n_prompt, max_tokens, n_ctx, ceiling=ceiling)


def refused_answer(resp: requests.Response, max_tokens: int, ceiling: Optional[int] = None) -> Optional[str]:
    """The plain words of a 400 that refused the prompt as too long; None for any other answer (one not JSON is
    not llama-server's refusal)."""
    return refused(json_object(resp, any_status=True), max_tokens, ceiling) if resp.status_code == 400 else None
