"""The small model's client: one OpenAI-compatible chat call.

A model that cannot be reached raises ModelUnavailable (the sleep fails and
keeps its brief). Any other trouble with one call raises ModelFailure, which
the caller records against the pile it was drafting. abandon(), from the stopping
thread, cuts a call in flight short: it then raises ServiceStopping, not a failure.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import requests

from hippocampus.config import redact
from hippocampus.model.cancellable import CancellableSession
from hippocampus.model import fit, structured
from hippocampus.config import ModelConfig
from hippocampus.stopping import ServiceStopping

ABANDONED = "the model call in flight was abandoned; nothing was posted"


class ModelUnavailable(Exception):
    """The model cannot be reached (refused, not started, failed to start)."""


class ModelFailure(Exception):
    """One call went wrong (an error status, a read timeout, a body that is not a chat answer)."""


class FormatRefused(ModelFailure):
    """A 400 naming the response_format sent: the server cannot hold its answer to the schema."""


@dataclass
class Answer:
    text: str
    finish_reason: str
    served: str
    seconds: float
    usage: Optional[dict] = None     # the server's token counts, when it says
    response_format: Optional[dict] = None      # the schema the answer was held to, as sent (None: plain)

    @property
    def cut_off(self) -> bool:
        return self.finish_reason == "length"


class ModelClient:
    def __init__(self, cfg: ModelConfig, session: Optional[requests.Session] = None):
        self.cfg = cfg
        self._session = session or CancellableSession()
        self.abandoned = False
        self.in_flight = 0

    def abandon(self) -> int:
        """The service is stopping: shut the call in flight now (from any thread) and refuse new ones.
        Returns how many calls were in flight."""
        self.abandoned = True
        in_flight = self.in_flight          # counted first: a shut call ends (and uncounts itself) at once
        cancel = getattr(self._session, "cancel", None)
        if cancel is not None:
            cancel()
        else:
            self._session.close()
        return in_flight

    @property
    def url(self) -> str:
        return self.cfg.url.rstrip("/")

    def chat(self, prompt: str, max_tokens: Optional[int] = None,
             response_format: Optional[dict] = None) -> Answer:
        """One call; `response_format` (the answer's schema) is sent as model.structured says."""
        body: dict = {
            "model": self.cfg.name,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": int(max_tokens or self.cfg.max_tokens),
            "temperature": self.cfg.temperature,
        }
        for k, v in (self.cfg.extra_body or {}).items():
            body.setdefault(k, v)
        if response_format and structured.wanted(self.cfg.structured, self.url):
            body["response_format"] = response_format
        if self.abandoned:
            raise ServiceStopping(ABANDONED)
        self.in_flight += 1             # one caller at a time (the cycle lock): a plain count will do
        try:
            answer = self._structured(body)
        except (ModelUnavailable, ModelFailure):
            if self.abandoned:          # the broken connection is the stop's doing, not the model's
                raise ServiceStopping(ABANDONED) from None
            raise
        finally:
            self.in_flight -= 1
        if self.abandoned:
            raise ServiceStopping(ABANDONED)
        return answer

    def _structured(self, body: dict) -> Answer:
        """The call; a refused schema is a failure naming the setting (on), else the plain call (auto)."""
        try:
            return self._chat(body)
        except FormatRefused as exc:
            if self.cfg.structured == "on":
                raise ModelFailure(structured.refusal_failure(self.url, str(exc))) from None
            structured.remember_refusal(self.url, str(exc))
            return self._chat({k: v for k, v in body.items() if k != "response_format"})

    def _chat(self, body: dict) -> Answer:
        started = time.monotonic()
        endpoint = self.url + "/chat/completions"
        try:
            resp = self._session.post(endpoint, json=body,
                                      timeout=(min(10.0, self.cfg.timeout_seconds), self.cfg.timeout_seconds))
        except requests.ConnectTimeout:
            raise ModelUnavailable(f"the model at {redact.url(self.url)} did not accept a connection "
                                   f"(is the server running?)") from None
        except requests.ConnectionError as exc:
            if isinstance(exc.__context__, requests.ReadTimeout) or "Read timed out" in str(exc):
                raise ModelFailure(f"the model took longer than {self.cfg.timeout_seconds:g} s "
                                   "(model.timeout_seconds) to answer") from None
            if _is_refused(exc):
                raise ModelUnavailable(f"the model at {redact.url(self.url)} is not answering "
                                       f"(connection refused): start it, or set model.url") from None
            raise ModelFailure(f"the connection to the model at {redact.url(self.url)} broke mid-answer "
                               f"({type(exc).__name__})") from None
        except requests.ReadTimeout:
            raise ModelFailure(f"the model took longer than {self.cfg.timeout_seconds:g} s "
                               "(model.timeout_seconds) to answer: a slow model, or one spending "
                               "its tokens thinking") from None
        except requests.RequestException as exc:
            raise ModelFailure(f"the call to the model failed: {type(exc).__name__}: {exc}") from None
        seconds = time.monotonic() - started
        if "response_format" in body and structured.names_the_format(resp.status_code, resp.text):
            raise FormatRefused(structured.said(resp.text))
        if resp.status_code >= 400:
            raise ModelFailure(fit.refused_answer(resp, self.cfg.max_tokens)
                               or f"the model answered HTTP {resp.status_code}: {resp.text[:200]!r}")
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = choice.get("message", {}).get("content") or choice.get("text") or ""
            finish = str(choice.get("finish_reason") or "stop")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ModelFailure(f"the model's reply is not an OpenAI-compatible chat answer: "
                               f"{resp.text[:160]!r}") from None
        return Answer(text=str(text), finish_reason=finish, served=str(data.get("model") or self.cfg.name),
                      seconds=seconds, usage=data.get("usage") if isinstance(data.get("usage"), dict) else None,
                      response_format=body.get("response_format"))

    def healthy(self, health_url: str, timeout: float = 3.0) -> bool:
        try:
            return self._session.get(health_url, timeout=timeout).status_code == 200
        except requests.RequestException:
            return False


def _is_refused(exc: Exception) -> bool:
    text = repr(exc)
    return any(s in text for s in ("Connection refused", "ConnectionRefused", "Errno 111",
                                   "Failed to establish a new connection", "actively refused"))
