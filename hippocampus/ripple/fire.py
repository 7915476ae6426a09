"""Telling the outside. The ripple wakes the main model when the hippocampus needs it (a brief at bedtime, a
review of a draft): ``script`` runs an argv (never a shell: placeholders fill one argument at a time) as
``run_as``, one run per event type at a time; ``endpoint`` POSTs the message to a receiver that runs its own
command. The webhook tells someone what happened, best effort (only a 2xx counts as delivered). Neither
fails its emitter: the outcome is a dict the caller records on the event."""
from __future__ import annotations

import contextlib
import json
import logging
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

import requests

from hippocampus import SERVICE, cmdline, outbound, transport_words as tw
from hippocampus.config import NotifyConfig, RippleConfig, redact
from hippocampus.ripple.claude import whoami as _whoami
from hippocampus.store import private

MAX_MESSAGE = 8000
MAX_JSON = 64 * 1024
ENDPOINT_TIMEOUT = 30.0
SKIPPED = "the last ripple for this event is still running"
STOPPED = "not sent, or cut short: the service was stopping"
MAX_ERROR = 400
ANSWER_READ = 4096          # of any answer only this much is read (an error's reason is cut to MAX_ERROR)
TERM_GRACE = 5.0            # after a SIGTERM (which runuser and sudo pass on to the command), then a SIGKILL
_NOT_SENT = ("delivered", "delivery_error", "ripple")    # bookkeeping of earlier deliveries and ripples
log = logging.getLogger(__name__)

WOKEN = ("You were woken by seren-hippocampus, the sleep cycle for your memory - not by a person. Nobody is at the "
         "keyboard and nobody is reading along, so do not address anyone, ask questions, or write as though someone "
         "were here: do the work below with your tools.")

NUDGE = ("As the very last thing you do, call `nudge` on the hippocampus (its MCP tool, or POST /nudge on its server) "
         "so it carries on now instead of waiting for its next tick.")

RESTATE = ("About attaches that carry `restated_content`: approving one as it stands replaces the core's wording. "
           "Approve such an attach with `\"restate\": false` unless `restated_content` is the whole core restated "
           "with the new detail folded in.")

_BODIES = {
    "brief_requested": ("It is bedtime, and before sleeping the hippocampus wants your brief. Write it with "
                        "`submit_brief`: a short summary of what mattered lately; `promote_hints` - short phrases "
                        "copied word for word from the memories worth keeping; and `noise_hints` for the one-offs "
                        "that can fade. If this is a bad time, or nothing is worth keeping, say so in the summary."),
    "draft_submitted": ("Tonight's draft ({draft_id}) is ready for review. Read it with `get_draft`, then give your "
                        "verdicts with `review_draft`: one verdict for every operation, and a specific critique for "
                        "each one you deny, so the redraft knows what to fix."),
    "tend_resubmitted": ("The operations you denied have been redrafted ({draft_id}). Review the new attempt with "
                         "`get_draft` and `review_draft`; `earlier_attempts` shows what each operation replaces and "
                         "the critique it answered."),
    "draft_submitted_terminal": ("Tonight's draft ({draft_id}) is the LAST attempt (sleep.max_attempts is 1): nothing "
                                 "is redrafted after it, so a denial drops the operation for good and its memory "
                                 "stays in short-term. So land things: read it with `get_draft`, fix what needs it "
                                 "yourself and approve with `edited_content`, `edited_kind` or `edited_target_core_id` "
                                 "in `review_draft`. Deny only duplicates or things that are not true, and say why."),
    "tend_resubmitted_terminal": ("This redraft ({draft_id}) is the LAST attempt. A denial now drops the operation "
                                  "for good and its memory stays in short-term. So land things: take the best "
                                  "version, fix it yourself where it needs it, and approve with `edited_content`, "
                                  "`edited_kind` or `edited_target_core_id`. `get_draft` shows `target_core` and "
                                  "`earlier_attempts`. Deny only duplicates or things that are not true, and say why."),
    "brief_unmatched": ("The hippocampus slept on your brief, but none of its promote hints matched a memory, so "
                        "nothing was kept. The brief is set aside, not used up. Write a new one with `submit_brief` "
                        "whose promote hints are short phrases lifted word for word from the memories, or their topic "
                        "tags."),
}
_REVIEW = {"draft_submitted", "draft_submitted_terminal", "tend_resubmitted", "tend_resubmitted_terminal"}

_PLACEHOLDER = re.compile(r"\{(message|event|draft_id)\}")


def _fill(text: str, values: dict[str, str]) -> str:
    """Fill the known placeholders in one pass (not str.format: a message may hold braces)."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _kind(event: dict) -> str:
    return str(event.get("type") or event.get("event") or "ripple")


def _draft_id(event: dict) -> str:
    return "" if event.get("draft_id") is None else str(event["draft_id"])


def argv_of(cfg: RippleConfig, windows: bool) -> list:
    """ripple.command as a list (a string is split the platform's way)."""
    command = cmdline.split(cfg.command, windows=windows) if isinstance(cfg.command, str) else cfg.command
    return [str(p) for p in (command or [])]


def message_for(event: dict, cfg: RippleConfig) -> str:
    """The operator's text for `event` as written, else WOKEN + body (+ RESTATE for a review) + NUDGE."""
    kind = _kind(event)
    key = f"{kind}_terminal" if kind in ("draft_submitted", "tend_resubmitted") and event.get("terminal") else kind
    custom = cfg.messages if isinstance(cfg.messages, dict) else {}
    template = next((str(custom[k]) for k in dict.fromkeys((key, kind)) if custom.get(k)), None)
    if template is None:
        body = _BODIES.get(key)
        template = (f"{WOKEN}\n\nThe hippocampus says: {kind}." if body is None else
                    "\n\n".join([WOKEN, body, *([RESTATE] if key in _REVIEW else []), NUDGE]))
    return _fill(template, {"event": kind, "draft_id": _draft_id(event), "message": ""})


class Ripple:
    """Fires ripples; keeps its script children (one per event type at a time) so a nudged tick can wait."""

    def __init__(self, cfg: RippleConfig, *, log_dir: Path,
                 whoami: Optional[Callable[[], tuple[str, bool]]] = None) -> None:
        self.cfg = cfg
        self.log_dir = Path(log_dir)
        self._whoami = whoami or _whoami
        self._lock = threading.Lock()
        self._ended = threading.Condition(self._lock)
        self._last: dict[str, Any] = {}      # event type -> the last child started for it
        self._children: list[Any] = []       # every child started and not yet seen to exit
        self._results: dict[str, dict] = {}  # event type -> what its last ripple did (and how it ended)
        self.on_exit: Optional[Callable[[str], None]] = None   # told the event type when a child ends
        self.posting = outbound.CancellableSession()     # an endpoint's posts: the stop cuts the one in flight (abandon)

    def wants(self, event_type: str) -> bool:
        return self.cfg.type in ("script", "endpoint") and event_type in (self.cfg.events or [])

    def abandon(self) -> None:
        """The service stops: an endpoint's post in flight is cut, and none is sent after (any thread)."""
        self.posting.cancel()

    def fire(self, event: dict) -> dict:
        kind = self.cfg.type or "off"
        if kind not in ("script", "endpoint"):
            return {"type": kind, "ok": False, "error": "ripple.type is off"}
        if kind == "endpoint" and self.posting.cancelled:
            return {"type": kind, "ok": False, "error": STOPPED}
        try:
            outcome = self._script(event) if kind == "script" else self._endpoint(event)
        except Exception as exc:  # noqa: BLE001 - a ripple never fails its emitter
            log.warning("the %s ripple failed", kind, exc_info=True)
            outcome = {"type": kind, "ok": False, "error": tw.in_words(exc)}
        started = outcome.get("type") == "script" and outcome.get("ok")   # recorded as it started
        if not outcome.get("skipped") and not started:    # a skip leaves the running one as the last
            rec = {k: outcome[k] for k in ("type", "ok", "error", "pid", "status", "refused", "run_as")
                   if k in outcome}
            with self._lock:
                self._results[_kind(event)] = {**rec, "at": time.time()}
        return outcome

    def last_results(self) -> dict:
        """Event type -> its last ripple (a script's ok, once it ended, is whether it exited 0)."""
        with self._lock:
            return {k: dict(v) for k, v in self._results.items()}

    def wait(self, event_type: str, timeout: float) -> Optional[dict]:
        """Wait for the last script child of `event_type` to end; its result, or None at the timeout."""
        with self._ended:
            if not self._ended.wait_for(lambda: not self._results.get(event_type, {}).get("running"),
                                        timeout=max(0.0, float(timeout))):
                return None
            rec = self._results.get(event_type)
            return dict(rec) if rec is not None else None

    def busy(self, event_type: str) -> bool:
        with self._lock:
            proc = self._last.get(event_type)
        return proc is not None and proc.poll() is None

    def running_count(self) -> int:
        with self._lock:
            self._children = [p for p in self._children if p.poll() is None]
            return len(self._children)

    def settle(self, timeout: float) -> bool:
        """Wait until no script child started here is still running (each one's reaper says when it ends);
        never kills: False at the timeout."""
        with self._ended:
            return self._ended.wait_for(lambda: all(p.poll() is not None for p in self._children),
                                        max(0.0, float(timeout)))

    def shutdown(self, timeout: float = 5.0) -> None:
        """Kill the children still running and wait (up to `timeout`) for them."""
        with self._lock:
            procs = [p for p in self._children if p.poll() is None]
        _end(procs, timeout)
        self.running_count()

    def _script(self, event: dict) -> dict:
        from seren_sinew import runas     # here, not at import: seren_sinew pulls in starlette (start-up time)

        cfg, kind = self.cfg, _kind(event)
        failed = {"type": "script", "ok": False}
        try:
            plan = runas.plan(cfg.run_as or "", current=self._whoami())
        except runas.RunAsRefused as exc:
            return {**failed, "refused": True, "error": str(exc)}
        parts = argv_of(cfg, runas.IS_WINDOWS)
        if not parts:
            return {**failed, "error": "ripple.command is empty"}
        message = message_for(event, cfg)[:MAX_MESSAGE].replace("\x00", "")
        values = {"message": "" if cfg.stdin else message, "event": kind,
                  "draft_id": _draft_id(event).replace("\x00", "")}
        env = {"SEREN_RIPPLE_EVENT": kind, "SEREN_RIPPLE_MESSAGE": message,
               "SEREN_RIPPLE_JSON": json.dumps(event, default=str)[:MAX_JSON]}
        run_as = cfg.run_as or plan.user
        with self._lock:
            prev = self._last.get(kind)
            if prev is not None and prev.poll() is None:
                return {**failed, "skipped": SKIPPED}
            try:
                private.make_dir(self.log_dir)
                private.roll(self.log_dir / "ripple.log")
                # 0600, like every file in the state folder; the child keeps its own copy
                with open(private.open_append(self.log_dir / "ripple.log"), "ab") as log:
                    proc = runas.spawn([_fill(p, values) for p in parts], run_as=cfg.run_as or "", env=env,
                                       cwd=(cfg.cwd or "").strip() or None, stdout=log,
                                       stdin_data=message.encode("utf-8") if cfg.stdin else None)
            except runas.RunAsRefused as exc:
                return {**failed, "refused": True, "error": str(exc) or tw.in_words(exc)}
            except (OSError, ValueError) as exc:
                why = getattr(exc, "strerror", None) or str(exc) or "it could not be run"
                return {**failed, "error": f"the ripple command {parts[0]!r} could not be started: {why}"}
            self._last[kind] = proc
            self._children.append(proc)
            # recorded before the reaper starts, so that a child which ends at once still gets its exit code
            self._results[kind] = {"type": "script", "ok": True, "pid": proc.pid, "run_as": run_as,
                                   "at": time.time(), "running": True}
        threading.Thread(target=self._reap, args=(proc, float(cfg.timeout_seconds), kind),
                         name=f"ripple-reaper-{proc.pid}", daemon=True).start()
        return {"type": "script", "ok": True, "pid": proc.pid, "event": kind, "run_as": run_as}

    def _reap(self, proc: Any, timeout: float, kind: str = "") -> None:
        started, killed, code = time.monotonic(), False, None
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            killed = True
            _end([proc], 10)
        except Exception:  # noqa: BLE001 - nothing to record
            pass
        with contextlib.suppress(Exception):            # no exit code to read
            code = proc.poll()
        with self._ended:
            rec = self._results.get(kind)
            if rec is not None and rec.get("pid") == proc.pid and rec.get("running"):
                rec.update(running=False, exit_code=code, seconds=round(time.monotonic() - started, 1),
                           ok=code == 0)
                if killed:
                    rec.update(killed=True, error=f"killed after {timeout:g} s")
                elif code not in (0, None):
                    rec["error"] = f"exited {code}"
            self._ended.notify_all()
        if self.on_exit is not None:
            with contextlib.suppress(Exception):        # the hook never breaks the reaper
                self.on_exit(kind)

    def _endpoint(self, event: dict) -> dict:
        cfg = self.cfg
        url = (cfg.url or "").strip()
        if not url:
            return {"type": "endpoint", "ok": False, "error": "ripple.url is empty"}
        body: dict[str, Any] = {"service": SERVICE, "event": _kind(event),
                                "message": message_for(event, cfg)[:MAX_MESSAGE],
                                "draft_id": event.get("draft_id")}
        body.update({k: v for k, v in event.items() if k not in body and k != "type" and k not in _NOT_SENT})
        timeout = min(ENDPOINT_TIMEOUT, float(cfg.timeout_seconds))
        setting = ("ripple.timeout_seconds" if timeout == float(cfg.timeout_seconds)
                   else f"the {ENDPOINT_TIMEOUT:g} s an endpoint ripple waits at most")
        sent = outcome(*post_json(url, body, cfg.resolve_bearer, timeout, self.posting, who="the ripple endpoint",
                                  setting=setting, url_setting="ripple.url"), "ok", type="endpoint")
        self.posting.close()        # no connection kept between posts (its pool only: a later post opens anew)
        return {**sent, "error": STOPPED} if self.posting.cancelled and not sent["ok"] else sent


def _end(procs: list, timeout: float) -> None:
    """SIGTERM each (runuser and sudo pass it on to the command, where a SIGKILL of them would leave it running;
    a session's child has kill() only), one TERM_GRACE for them all, then SIGKILL what is left and wait up to
    `timeout` for each."""
    for p in procs:
        with contextlib.suppress(Exception):            # already gone
            getattr(p, "terminate", p.kill)()
    grace_ends = time.monotonic() + TERM_GRACE
    for p in procs:
        try:
            p.wait(timeout=max(0.0, grace_ends - time.monotonic()))
        except Exception:  # noqa: BLE001 - still running, or not ours to wait on
            with contextlib.suppress(Exception):        # gone, or we tried
                p.kill()
                p.wait(timeout=timeout)


def post_json(url: str, body: dict, bearer: Callable[[], str], timeout: float,
              session: Optional[requests.Session] = None, who: str = "the webhook",
              setting: str = "notify.timeout_seconds", url_setting: str = "notify.webhook_url") -> tuple:
    """(status, error) of one JSON POST with the bearer: error is None only for a 2xx, else a sentence. One
    wall-clock deadline of `timeout` s, however slowly the answer comes; of the answer, its status line and
    head and no more than ANSWER_READ bytes of its body; a redirect never followed (it names where it pointed)."""
    where = redact.url(url)
    try:
        token = bearer()
    except Exception as exc:  # noqa: BLE001 - an answer, never a raise
        return None, f"the bearer for {who} could not be read ({tw.in_words(exc)}), so nothing was sent"
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    with outbound.session_or_own(session) as s:
        try:
            resp = outbound.call(s, "POST", url, data=json.dumps(body, default=str).encode("utf-8"),
                                 headers=headers, deadline=outbound.Deadline(timeout), cap=ANSWER_READ, truncate=True,
                                 allow_redirects=False, connect_seconds=timeout)
        except Exception as exc:  # noqa: BLE001 - an answer, never a raise
            return None, tw.failed(exc, who, where, seconds=timeout, setting=setting)[1]
    if 200 <= resp.status_code < 300:
        return resp.status_code, None
    if 300 <= resp.status_code < 400:
        location = (resp.headers.get("Location") or "").strip()
        return resp.status_code, tw.redirected(who, where, resp.status_code, redact.url(location)[:MAX_ERROR],
                                               url_setting)
    return resp.status_code, tw.answered_error(who, where, resp.status_code, tw.reason(resp, MAX_ERROR) or "")


def outcome(status: Optional[int], error: Optional[str], ok_key: str, **first: Any) -> dict:
    """The outcome dict the caller records on the event: {ok_key, status?, error?}."""
    out = {**first, ok_key: error is None}
    out.update({k: v for k, v in (("status", status), ("error", error)) if v is not None})
    return out


class Webhook:
    def __init__(self, cfg: NotifyConfig, session: Optional[requests.Session] = None) -> None:
        self.cfg = cfg
        self._session = session

    @property
    def configured(self) -> bool:
        return bool((self.cfg.webhook_url or "").strip())

    def wants(self, event_type: str) -> bool:
        return self.configured and event_type in (self.cfg.events or [])

    def deliver(self, event: dict) -> dict:
        """POST the event; {"delivered": True, "status"} only on a 2xx."""
        if not self.configured:
            return {"delivered": False, "error": "notify.webhook_url is empty"}
        body = {"service": SERVICE, **{k: v for k, v in event.items() if k not in _NOT_SENT}}
        return outcome(*post_json(self.cfg.webhook_url.strip(), body, self.cfg.resolve_bearer,
                                  float(self.cfg.timeout_seconds), self._session), "delivered")
