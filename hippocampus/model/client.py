"""The small model's client: one OpenAI-compatible chat call, on a session another thread can cut short.

A model that cannot be reached raises ModelUnavailable (the sleep fails and keeps its brief); any other
trouble with one call raises ModelFailure. Each call has one wall-clock deadline (model.timeout_seconds, or the
caller's) however slowly the answer comes, and reads at most ANSWER_CAP of it (hippocampus.outbound).
abandon(), from the stopping thread, cuts a call in flight short: it then raises ServiceStopping, not a failure.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Optional

import requests

from hippocampus import outbound
from hippocampus import transport_words as tw
from hippocampus.config import ModelConfig, redact
from hippocampus.model import fit, structured, timings
from hippocampus.model.learned import Learned
from hippocampus.stopping import ServiceStopping

ABANDONED = "the model call in flight was abandoned; nothing was posted"
ANSWER_CAP = 4 * outbound.MB        # a chat answer of max_tokens is kilobytes: past this, the call is stopped


class _Worded(Exception):
    """row: the transport table's row (hippocampus.transport_words), when the wire was the trouble."""

    def __init__(self, message: str = "", row: str = ""):
        super().__init__(message)
        self.row = row


class ModelUnavailable(_Worded):
    """The model cannot be reached (refused, not started, failed to start)."""


class ModelFailure(_Worded):
    """One call went wrong (an error status, a read timeout, a body that is not a chat answer)."""


class FormatRefused(ModelFailure):
    """A 400 naming the response_format sent: the server cannot hold its answer to the schema."""


@dataclass
class Answer:
    text: str
    finish_reason: str
    served: str
    seconds: float
    usage: Optional[dict] = None
    response_format: Optional[dict] = None      # the schema the answer was held to, as sent (None: plain)
    timings: Optional[dict] = None              # the server's own token counts (model.timings.read), if it said
    max_tokens: Optional[int] = None            # the answer's cap, as sent


class ModelClient:
    """who, url_setting, timeout_setting: how a failure names this model and the settings that fix it (a
    replay's candidate is not model.url)."""

    def __init__(self, cfg: ModelConfig, session: Optional[requests.Session] = None, *, who: str = "the model",
                 url_setting: str = "model.url", timeout_setting: str = "model.timeout_seconds"):
        self.cfg = cfg
        self._session = session or outbound.CancellableSession()
        self.who, self.url_setting, self.timeout_setting = who, url_setting, timeout_setting
        self.abandoned = False
        self.learned = Learned()               # what this server said of itself (a refused schema, its size)
        self.in_flight = 0
        self._counting = threading.Lock()      # piles drafted at once (model.parallel) count in and out together

    def abandon(self) -> int:
        """The service is stopping: shut the call in flight now (from any thread) and refuse new ones; how many
        calls were in flight."""
        self.abandoned = True
        with self._counting:
            in_flight = self.in_flight      # counted first: a shut call ends (and uncounts itself) at once
        getattr(self._session, "cancel", self._session.close)()     # a plain session can only be closed
        return in_flight

    @property
    def url(self) -> str:
        return self.cfg.url.rstrip("/")

    def chat(self, prompt: str, max_tokens: Optional[int] = None,
             response_format: Optional[dict] = None, timeout: Optional[float] = None,
             deadline: Optional[outbound.Deadline] = None) -> Answer:
        """One call; `response_format` (the answer's schema) is sent as model.structured says; one wall-clock
        deadline bounds it: `deadline` (a caller's, spanning several calls), else `timeout` s from now, else
        cfg.timeout_seconds (a schema refused and the call sent again plain: the same deadline)."""
        # llama-server's cache_prompt: reuse the prompt's shared head (extra_body may say no); extra_body adds keys
        body: dict = {"cache_prompt": True, **(self.cfg.extra_body or {}), "model": self.cfg.name,
                      "messages": [{"role": "user", "content": prompt}],
                      "max_tokens": int(max_tokens or self.cfg.max_tokens), "temperature": self.cfg.temperature}
        if body["cache_prompt"] is None:        # extra_body's cache_prompt: null sends none
            del body["cache_prompt"]
        if response_format and structured.wanted(self.cfg.structured, self.learned.refused):
            body["response_format"] = response_format
        if self.abandoned:
            raise ServiceStopping(ABANDONED)
        with self._counting:
            self.in_flight += 1
        try:
            answer = self._structured(body, deadline or outbound.Deadline(float(timeout or self.cfg.timeout_seconds)))
        except (ModelUnavailable, ModelFailure):
            if not self.abandoned:      # else the broken connection is the stop's doing, not the model's: below
                raise
        finally:
            with self._counting:
                self.in_flight -= 1
        if self.abandoned:
            raise ServiceStopping(ABANDONED)
        return answer

    def _structured(self, body: dict, deadline: outbound.Deadline) -> Answer:
        """The call; a refused schema is a failure naming the setting (on), else the plain call (auto)."""
        try:
            return self._chat(body, deadline)
        except FormatRefused as exc:
            if self.cfg.structured == "on":
                raise ModelFailure(structured.refusal_failure(self.url, str(exc))) from None
            structured.remember_refusal(self.learned, self.url, str(exc))
            return self._chat({k: v for k, v in body.items() if k != "response_format"}, deadline)

    def _chat(self, body: dict, deadline: outbound.Deadline) -> Answer:
        started, where, timeout = time.monotonic(), redact.url(self.url), deadline.seconds
        try:            # the body read here, within the deadline and the cap: a cut mid-answer fails here, worded
            resp = outbound.call(self._session, "POST", self.url + "/chat/completions", json=body,
                                 deadline=deadline, cap=ANSWER_CAP,
                                 connect_seconds=min(10.0, timeout))
        except Exception as exc:  # noqa: BLE001 - every transport failure is worded by the one table
            if not isinstance(exc, (requests.RequestException, OSError)) and "urllib3" not in type(exc).__module__:
                raise
            if getattr(exc, "plain", False):        # a session's own refusal, worded already (a replay's redirect)
                raise ModelFailure(str(exc), tw.ERROR) from None
            row, words = tw.failed(exc, self.who, where, seconds=timeout, connect_seconds=min(10.0, timeout),
                                   setting=self.timeout_setting)
            if row in tw.UNREACHABLE:
                raise ModelUnavailable(f"{words}; start it, or set {self.url_setting}", row) from None
            if row == tw.TIMED_OUT and self.timeout_setting == "model.timeout_seconds":
                words += "; a slow model, or one spending its tokens thinking"
            raise ModelFailure(words, row) from None
        seconds = time.monotonic() - started
        if "response_format" in body and structured.names_the_format(resp.status_code, resp.text):
            raise FormatRefused(structured.said(resp.text))
        if resp.status_code >= 400:
            raise ModelFailure(fit.refused_answer(resp, int(body.get("max_tokens") or self.cfg.max_tokens),
                                                self.cfg.max_tokens)
                               or tw.answered_error(self.who, where, resp.status_code, tw.reason(resp)), tw.ERROR)
        try:
            data = resp.json()
        except ValueError:
            raise ModelFailure(tw.not_json(self.who, where, resp), tw.NOT_JSON) from None
        try:
            choice = data["choices"][0]
            text = choice.get("message", {}).get("content") or choice.get("text") or ""
            finish = str(choice.get("finish_reason") or "stop")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise ModelFailure(f"{self.who} at {where} answered JSON that is not an OpenAI-compatible chat "
                               f"answer: {resp.text[:160]!r}") from None
        return Answer(text=str(text), finish_reason=finish, served=str(data.get("model") or self.cfg.name),
                      seconds=seconds, usage=data.get("usage") if isinstance(data.get("usage"), dict) else None,
                      response_format=body.get("response_format"), timings=timings.read(data),
                      max_tokens=body.get("max_tokens"))
