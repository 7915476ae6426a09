"""The tools, for the main model: thin, sync calls into the runtime.

A session does not reach the viewer; these let it see the sleep itself (did the
last one fail, is a chain open, when is bedtime, is the model up) and start one.
Every result is a dict with `ok` and a plain-words `message`. A sleep or tend
already running comes back as busy, and a Memory that does not answer as a
message: never an exception, and never a failed sleep on the record.

The tools are plain functions: the SDK runs each on a worker thread, where a
blocking ask to an actor is fine. They take the same cycle lock the routes and
the tick take (runtime.request), so one cycle runs at a time whoever asked.
"""
import functools
import logging
import time
from typing import Any, Callable, Optional

import pykka

from actors.messages import Check, RestartChild, Sleep, Tend
from hippocampus.cycle import Busy
from hippocampus.http.status import MemoryWatch, build_status
from hippocampus.memory import MemoryError_
from hippocampus.replay import service as replay_service
from hippocampus.stopping import ServiceStopping

log = logging.getLogger("hippocampus.mcp")

TOOL_NAMES = ["sleep_status", "sleep_now", "tend_now", "check_now", "nudge", "sleep_history", "recent_events",
              "restart_actor", "replay_draft"]
VOICE_TOOL_NAMES = ["set_voice_card", "get_voice_card", "voice_card_history"]

INSTRUCTIONS = (
    "SerenHippocampus: the sleep cycle for SerenMemory. sleep_status says what is waiting (a brief, a draft "
    "to review, bedtime, the model, the last failure). After submit_brief or review_draft on Memory, call "
    "nudge: the hippocampus carries on at once. sleep_now / tend_now / check_now run a step by hand; one "
    "cycle runs at a time, so a busy answer means one is already running.")


# ---------------------------------------------------------------- words
def _span(seconds: float) -> str:
    s = int(abs(seconds))
    if s < 90:
        return f"{s} s"
    if s < 90 * 60:
        return f"{round(s / 60)} min"
    if s < 36 * 3600:
        return f"{s / 3600:.1f} h".replace(".0 h", " h")
    return f"{s / 86400:.1f} days".replace(".0 days", " days")


def when(ts: Optional[float], now: Optional[float] = None) -> Optional[str]:
    """`YYYY-MM-DD HH:MM (in X / X ago / just now)`, local time; None for no time."""
    if ts is None:
        return None
    try:
        ts = float(ts)
    except (TypeError, ValueError):
        return None
    now = time.time() if now is None else now
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
    delta = ts - now
    if abs(delta) < 30:
        rel = "just now"
    elif delta > 0:
        rel = "in " + _span(delta)
    else:
        rel = _span(delta) + " ago"
    return f"{stamp} ({rel})"


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _count(x: Any) -> int:
    if isinstance(x, (list, tuple, set, dict)):
        return len(x)
    try:
        return int(x or 0)
    except (TypeError, ValueError):
        return 0


def _clamp(value: Any, lo: int, hi: int, default: int) -> int:
    try:
        return max(lo, min(hi, int(value)))
    except (TypeError, ValueError):
        return default


def guarded(fn: Callable) -> Callable:
    """A tool answers; it never raises into the session."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            log.exception("the MCP tool %s failed", fn.__name__)
            return {"ok": False, "message": f"{fn.__name__} failed inside the hippocampus: "
                                            f"{type(exc).__name__}: {exc}. The service log has the details."}
    return wrapper


class Tools:
    """The tool bodies, on a runtime. build_server() registers them with the SDK."""

    def __init__(self, runtime, watch: Optional[MemoryWatch] = None):
        self.rt = runtime
        self.watch = watch or MemoryWatch(runtime.ctx.memory)

    # ------------------------------------------------------------ plumbing
    @property
    def _now(self) -> float:
        return self.rt.ctx.clock.now()

    def _timeout(self) -> float:
        cfg = self.rt.cfg
        return cfg.model.timeout_seconds * 4 + cfg.memory.timeout_seconds * 4 + 60

    def _memory_down(self, verb: str) -> Optional[dict]:
        """Memory's /health first: the hippocampus holds nothing itself. None when Memory answers."""
        memory = self.rt.ctx.memory
        try:
            memory.health()
            return None
        except MemoryError_ as exc:
            return {"ok": False, "memory_reachable": False,
                    "message": f"SerenMemory at {memory.url} is not answering ({exc}). Nothing was {verb}. "
                               "The hippocampus holds nothing itself; it needs Memory up."}

    def _busy(self, exc: Busy) -> dict:
        return {"ok": False, "busy": True, "what": exc.what, "since": when(exc.since),
                "message": f"a sleep or tend is already running ({exc.what} since {when(exc.since)}); nothing "
                           "was started. sleep_status shows its progress."}

    def _run(self, what: str, actor: str, make: Callable[[Any], Any]) -> tuple:
        """(report, None) or (None, the answer to give instead)."""
        try:
            return self.rt.request(what, actor, make, timeout=self._timeout()), None
        except Busy as exc:
            return None, self._busy(exc)
        except pykka.Timeout:
            return None, {"ok": True, "running": True,
                          "message": f"the {what} is still running; sleep_status shows its progress."}
        except ServiceStopping as exc:
            return None, {"ok": False, "stopping": True, "message": f"{exc}. Ask again once it is back."}
        except pykka.ActorDeadError as exc:
            return None, {"ok": False, "message": f"nothing was started: {exc}. restart_actor brings a failed "
                                                  "actor back."}

    # ------------------------------------------------------------ status
    def sleep_status(self) -> dict:
        rt, ctx = self.rt, self.rt.ctx
        now = self._now
        mem = self.watch.refresh()
        try:
            s = build_status(rt, self.watch)
        except Exception as exc:  # noqa: BLE001 - the status never fails; say what could not be read
            log.exception("building the status")
            s = {"mode": rt.cfg.sleep.mode, "memory": mem, "busy": ctx.cycle.describe(),
                 "status_error": f"{type(exc).__name__}: {exc}"}
        s["memory"] = {k: mem.get(k) for k in ("reachable", "url", "error")}
        live: dict = {"brief_waiting": None, "brief_id": None, "pending_review": None, "chain_open": None,
                      "pending_drafts": None}
        if mem.get("reachable"):
            live.update(self._live(ctx))
        bed = s.get("bedtime_at")
        s.update(live)
        s["past_bedtime"] = bool(bed is not None and now >= bed)
        s["bedtime"] = when(bed, now)
        s["next_tick"] = when(s.get("next_tick_at"), now)
        s["brief_asked_for"] = bool(s.get("brief_wanted"))
        s["brief_asked_at"] = when(s.get("brief_requested_at"), now)
        s["model"] = self._model(s)
        s["quality"] = replay_service.brief(rt)          # from the board: the quality actor reads Memory
        say = self._say(s, now)
        s.pop("pending_drafts", None)
        return {"ok": True, **s, "say": say, "message": say}

    def _live(self, ctx) -> dict:
        from hippocampus.tick.snapshot import read_for

        try:
            snap = read_for(ctx)
        except MemoryError_ as exc:
            return {"live_error": str(exc)}
        brief = snap.brief
        return {"brief_waiting": brief is not None, "brief_id": (brief or {}).get("id"),
                "pending_review": len(snap.under_review),
                "pending_drafts": [c.latest.get("id") for c in snap.under_review],
                "chain_open": snap.chain_open, "redrafts_due": len(snap.redrafts_due)}

    def _model(self, s: dict) -> dict:
        cfg = self.rt.cfg
        lc = s.get("model_lifecycle") or {}
        last = (s.get("last_sleep") or {})
        failures = last.get("model_failures") or []
        return {"mode": "model" if cfg.model.configured else "mechanical", "name": cfg.model.name or None,
                "url": cfg.model.url or None, "state": lc.get("state"), "managed": lc.get("managed"),
                "started_by_us": lc.get("started_by_us"),
                "last_error": lc.get("last_error") or (failures[-1].get("why") if failures and
                                                       isinstance(failures[-1], dict) else None)}

    def _say(self, s: dict, now: float) -> str:
        parts = []
        busy = s.get("busy")
        if busy:
            prog = s.get("progress") or {}
            line = f"A {busy.get('what')} is running since {when(busy.get('since'), now)}"
            if prog.get("piles"):
                line += f": {prog.get('piles_done', 0)} of {prog['piles']} pile(s) drafted"
            parts.append(line + ".")
        mem = s.get("memory") or {}
        if mem.get("reachable") is False:
            parts.append(f"SerenMemory at {mem.get('url')} is not answering ({mem.get('error') or 'no answer'}): "
                         "nothing can sleep, tend or be reviewed until it does. The hippocampus holds nothing "
                         "itself.")
        failed = [n for n, a in (s.get("actors") or {}).items() if (a or {}).get("state") == "failed"]
        if failed:
            parts.append("Actor(s) " + ", ".join(failed) + " crashed too often and are down: restart_actor "
                         "brings them back.")
        last = s.get("last_sleep")
        if not last:
            parts.append("No sleep on record yet.")
        else:
            at = when(last.get("finished_at") or last.get("started_at"), now)
            if last.get("error"):
                parts.append(f"The last sleep FAILED ({at}): {last['error']}. Its brief is kept for the next "
                             "check.")
            elif last.get("draft_id"):
                parts.append(f"The last sleep ran {at} and submitted draft {last['draft_id']} with "
                             f"{_n(_count(last.get('operations')), 'operation')}.")
            elif last.get("quiet"):
                parts.append(f"The last sleep ran {at} and was quiet (nothing free to draft from).")
            else:
                parts.append(f"The last sleep ran {at} and proposed nothing.")
        check = s.get("last_check") or {}
        if check.get("status") == "error":
            parts.append(f"The last check failed ({when(check.get('at'), now)}): {check.get('error')}.")
        tend = s.get("last_tend") or {}
        if tend.get("error"):
            parts.append(f"The last tend failed ({when(tend.get('finished_at'), now)}): {tend['error']}.")

        bed = s.get("bedtime")
        if s.get("brief_waiting") and s.get("chain_open"):
            parts.append(f"Brief {s.get('brief_id')} is waiting, but a chain is open: one cycle at a time, so it "
                         "is slept on once that chain lands.")
        elif s.get("brief_waiting"):
            parts.append(f"Brief {s.get('brief_id')} is waiting: it is slept on at the next check "
                         "(nudge or check_now does it now).")
        elif s.get("past_bedtime"):
            if s.get("brief_asked_for"):
                parts.append(f"Past bedtime ({bed}) with no brief: the main model was asked for one at "
                             f"{s.get('brief_asked_at')}; write it with submit_brief on Memory, then nudge.")
            else:
                parts.append(f"Past bedtime ({bed}) with no brief "
                             f"({_n(_count(s.get('brief_misses')), 'check')} missed so far); a brief "
                             "(submit_brief on Memory, then nudge) starts the sleep.")
        elif s.get("brief_waiting") is False:
            parts.append(f"No brief waiting; bedtime is {bed}.")
        else:
            parts.append(f"Bedtime is {bed}.")
        pending = s.get("pending_review")
        if pending:
            ids = ", ".join(str(i) for i in (s.get("pending_drafts") or [])[:3])
            parts.append(f"{_n(pending, 'draft')} wait(s) for review in Memory ({ids}): get_draft, then "
                         "review_draft, then nudge.")
        if s.get("redrafts_waiting_since"):
            parts.append(f"Redrafts of denied operations have waited since "
                         f"{when(s['redrafts_waiting_since'], now)} for bedtime or a new brief (the tend cycle "
                         "is off); tend_now does them now.")
        elif s.get("redrafts_due"):
            parts.append(f"{_n(s['redrafts_due'], 'chain')} with denied operations wait(s) for a redraft; "
                         "nudge or tend_now does it now.")
        model = s.get("model") or {}
        if model.get("mode") == "mechanical":
            parts.append("Mechanical mode: no model configured, so clusters become cores by their longest "
                         "entry.")
        else:
            state = model.get("state")
            if model.get("managed") and state:
                parts.append(f"The model ({model.get('name')}) is {state}.")
            if model.get("last_error"):
                parts.append(f"The model's last error: {model['last_error']}.")
        if s.get("status_error"):
            parts.append(f"Part of the status could not be read: {s['status_error']}.")
        return " ".join(parts)

    # ------------------------------------------------------------ running things
    def sleep_now(self, without_brief: bool = False) -> dict:
        down = self._memory_down("slept")
        if down:
            return down
        report, other = self._run("sleep", "sleeper", lambda tok: Sleep(not without_brief, tok))
        if other is not None:
            return other
        if report.get("asked_for_brief"):
            return {"ok": True, "asked_for_brief": True, "refused": False, "report": report,
                    "message": "No brief was waiting, so the hippocampus asked for one instead of drafting "
                               "blind. Write it with submit_brief on Memory, then call nudge; or call "
                               "sleep_now(without_brief=true) to draft unsteered now."}
        refused = bool(report.get("refused"))
        return {"ok": not report.get("error") and not refused, "refused": refused, "report": report,
                "message": self._sleep_sentence(report)}

    @staticmethod
    def _sleep_sentence(report: dict) -> str:
        if report.get("refused"):
            return f"Nothing started: {report.get('message') or 'a chain is open'}."
        if report.get("error"):
            return f"The sleep failed: {report['error']}. Any brief it was steered by is kept for the next check."
        catch = " It was a catch-up sleep: nothing was aged out or swept." if report.get("catch_up") else ""
        if report.get("draft_id"):
            return (f"Submitted draft {report['draft_id']} with {_n(_count(report.get('operations')), 'operation')} "
                    "for review: read it with get_draft and review it with review_draft on Memory, then call "
                    f"nudge.{catch}")
        if report.get("quiet"):
            return f"A quiet sleep: nothing free to draft from; no model was called and the tidy ran.{catch}"
        return (f"The sleep proposed nothing ({_n(_count(report.get('clusters')), 'cluster')} looked at, "
                f"{_count(report.get('below_threshold'))} below the promotion threshold).{catch}")

    def tend_now(self) -> dict:
        down = self._memory_down("tended")
        if down:
            return down
        report, other = self._run("tend", "chain", lambda tok: Tend(True, tok))
        if other is not None:
            return other
        if report.get("error"):
            return {"ok": False, "report": report, "message": f"The tend failed: {report['error']}."}
        res, closed = _count(report.get("resubmitted")), _count(report.get("closed"))
        ended, failed = _count(report.get("ended")), _count(report.get("model_failures"))
        if res or closed or ended or failed:
            msg = (f"Tended: resubmitted {res} redraft(s) for review; closed {closed} chain(s) that landed; "
                   f"{ended} chain(s) ended denied; {failed} redraft(s) the model could not write.")
        else:
            msg = f"Nothing to tend ({_count(report.get('examined'))} reviewed draft(s) looked at)."
            if report.get("under_review"):
                msg += f" {_n(_count(report['under_review']), 'chain')} still wait(s) for review."
        return {"ok": True, "report": report, "message": msg}

    def check_now(self) -> dict:
        down = self._memory_down("checked")
        if down:
            return down
        report, other = self._run("check", "sleeper", lambda tok: Check(tok))
        if other is not None:
            return other
        status = report.get("status")
        purged = _count(report.get("purged"))
        tail = f" Purged {purged} flagged {'memory' if purged == 1 else 'memories'}." if purged else ""
        ok = True
        if status == "error":
            ok, msg = False, f"The check failed: {report.get('error')}."
        elif status in ("sleeping", "sleeping_on_pulled_brief"):
            sleep = report.get("sleep") or {}
            first = (f"Slept on brief {report.get('brief_id')}." if status == "sleeping"
                     else "Slept on the small model's pulled brief.")
            ok = not sleep.get("error")
            msg = f"{first} {self._sleep_sentence(sleep)}"
        elif status == "chain_open":
            msg = (f"Brief {report.get('brief_id')} is waiting, but a chain is open: one cycle at a time, so it is "
                   "slept on once that chain lands.")
        elif status == "not_bedtime":
            msg = "No brief waiting, and it is not bedtime yet: nothing to do."
        elif status == "waiting_for_brief":
            msg = (f"Past bedtime with no brief ({_n(_count(report.get('misses')), 'check')} missed): write one "
                   "with submit_brief on Memory, then nudge.")
        else:
            msg = f"Checked: {status}."
        return {"ok": ok, "status": status, "report": report, "message": msg + tail}

    def nudge(self) -> dict:
        return self.rt.nudge()

    # ------------------------------------------------------------ reading the record
    def sleep_history(self, limit: int = 10) -> dict:
        limit = _clamp(limit, 1, 40, 10)
        now = self._now
        rows = list(reversed(self.rt.ctx.state.get("history") or []))[:limit]
        entries = [{"when": when(r.get("started_at"), now), **r} for r in rows]
        sleeps = [r for r in rows if r.get("kind") == "sleep"]
        failed = sum(1 for r in sleeps if r.get("error"))
        noun = "entry" if len(entries) == 1 else "entries"
        msg = (f"{len(entries)} {noun}, newest first ({_n(len(sleeps), 'sleep')}, {failed} failed)."
               if entries else "No sleep or tend on record yet.")
        return {"ok": True, "count": len(entries), "entries": entries, "message": msg}

    def recent_events(self, limit: int = 20, type: str = "") -> dict:  # noqa: A002 - the tool's parameter name
        limit = _clamp(limit, 1, 500, 20)
        now = self._now
        entries = self.rt.events.list(limit=limit, type_=(type or "").strip() or None)
        for e in entries:
            e["when"] = when(e.get("at"), now)
        what = f" of type {type}" if type else ""
        msg = (f"{_n(len(entries), 'event')}{what}, newest first." if entries
               else f"No events{what} on record.")
        return {"ok": True, "count": len(entries), "entries": entries, "message": msg}

    def restart_actor(self, name: str) -> dict:
        sup = self.rt.supervisor
        if sup is None:
            return {"ok": False, "message": "the supervisor is not running; nothing was restarted."}
        try:
            out = sup.ask(RestartChild((name or "").strip(), False), timeout=15)
        except (pykka.Timeout, pykka.ActorDeadError) as exc:
            return {"ok": False, "message": f"the supervisor did not answer ({type(exc).__name__}); nothing was "
                                            "restarted."}
        status = out.pop("status", None)
        if status == 404:
            return {"ok": False, "message": out.get("detail")}
        if status == 409:
            return {"ok": False, "running": True,
                    "message": f"{name} is running; restart_actor brings back an actor that is down "
                               "(restarting or failed), so nothing was restarted."}
        return {"ok": True, **out, "message": f"{name} was restarted; it is {out.get('state')} now."}

    # ------------------------------------------------------------ the voice card
    def _voice_off(self) -> dict:
        return {"ok": False, "enabled": False,
                "message": "the voice card is opt-in and off: voice: {enabled: true} in the yaml (or "
                           "--voice-card) turns it on."}

    def get_voice_card(self) -> dict:
        card = self.rt.ctx.voice
        if card is None:
            return self._voice_off()
        cur = card.current()
        if not cur:
            return {"ok": True, "enabled": True, "version": 0, "text": None, "max_chars": card.max_chars,
                    "message": "No card yet: set_voice_card writes the first one (your voice, your pronouns, "
                               "what is yours and what is someone else's)."}
        return {"ok": True, "enabled": True, "version": cur.get("version"), "text": cur.get("text"),
                "why": cur.get("why"), "set": when(cur.get("set_at"), self._now), "chars": len(cur.get("text") or ""),
                "max_chars": card.max_chars,
                "message": f"Version {cur.get('version')} is the card every draft and redraft prompt starts with."}

    def set_voice_card(self, text: str, why: str = "") -> dict:
        from hippocampus.voice import VoiceError, VoiceStorageError

        card = self.rt.ctx.voice
        if card is None:
            return self._voice_off()
        try:
            res = card.set(text, why or None)
        except (VoiceError, VoiceStorageError) as exc:
            return {"ok": False, "enabled": True, "message": str(exc)}
        v = res.get("version")
        msg = (f"Version {v} is your card now; every draft and redraft prompt starts with it, and each draft "
               "records the version it was written under." if res.get("changed")
               else f"That is already version {v}; nothing changed.")
        return {"ok": True, "version": v, "changed": bool(res.get("changed")), "message": msg}

    def voice_card_history(self, limit: int = 10) -> dict:
        card = self.rt.ctx.voice
        if card is None:
            return self._voice_off()
        now = self._now
        versions = [{"version": v.get("version"), "text": v.get("text"), "why": v.get("why"),
                     "set": when(v.get("set_at"), now)} for v in card.history(_clamp(limit, 1, 200, 10))]
        msg = (f"{_n(len(versions), 'version')}, newest first." if versions else "No card yet.")
        return {"ok": True, "count": len(versions), "versions": versions, "message": msg}


# ---------------------------------------------------------------- the SDK side
DESCRIPTIONS = {
    "sleep_status": "What the sleep cycle is doing and what waits: the last sleep (or its failure), a brief "
                    "waiting, drafts waiting for review, bedtime, the model, in plain words (`say`). Never fails.",
    "sleep_now": "Start a sleep now. With no brief waiting it asks the main model for one instead of drafting "
                 "blind (write it with submit_brief on Memory, then nudge); without_brief=true drafts unsteered. "
                 "Busy if a sleep or tend is already running.",
    "tend_now": "Redraft denied operations from their critiques and close chains that landed, now (whatever the "
                "tend cycle says). Busy if a sleep or tend is already running.",
    "check_now": "Run the check now: purge what is flagged, then sleep if a brief waits and no chain is open.",
    "nudge": "Your turn: call this after submit_brief or review_draft. Returns at once; the hippocampus runs a "
             "tick (sleeps on the brief, redrafts what was denied, closes what landed).",
    "sleep_history": "The sleeps and tends on record, newest first (local to this service).",
    "recent_events": "The events on record, newest first; `type` filters (e.g. sleep_failed, draft_submitted).",
    "restart_actor": "Bring back an actor that crashed too often and was left down (sleep_status names it).",
    "replay_draft": "Send a past draft's saved prompts to a candidate small model (url: its OpenAI-compatible base "
                    "URL, default the configured model; name: the model name to ask for) and compare both sides: "
                    "operations that parse, failed and cut-off calls, invented numbers, overlap with what landed. "
                    "Nothing is written to Memory.",
    "get_voice_card": "Your voice card: the text every draft and redraft prompt starts with.",
    "set_voice_card": "Write a new version of your voice card: how your memories speak (voice, pronouns, what is "
                      "yours and what is someone else's). Nothing is overwritten; `why` is kept with it.",
    "voice_card_history": "Every version of your voice card, newest first.",
}


def build_server(runtime, watch: Optional[MemoryWatch] = None):
    """A fresh MCPServer with the tools on this runtime (the voice tools only when the card is on)."""
    from mcp.server import MCPServer

    t = Tools(runtime, watch)
    server = MCPServer("seren-hippocampus", instructions=INSTRUCTIONS)

    def sleep_status() -> dict[str, Any]:
        try:
            return t.sleep_status()
        except Exception as exc:  # noqa: BLE001 - never fails
            log.exception("sleep_status")
            return {"ok": False, "say": f"the status could not be read: {type(exc).__name__}: {exc}",
                    "message": f"the status could not be read: {type(exc).__name__}: {exc}"}

    def sleep_now(without_brief: bool = False) -> dict[str, Any]:
        return t.sleep_now(without_brief)

    def tend_now() -> dict[str, Any]:
        return t.tend_now()

    def check_now() -> dict[str, Any]:
        return t.check_now()

    def nudge() -> dict[str, Any]:
        return t.nudge()

    def sleep_history(limit: int = 10) -> dict[str, Any]:
        return t.sleep_history(limit)

    def recent_events(limit: int = 20, type: str = "") -> dict[str, Any]:  # noqa: A002
        return t.recent_events(limit, type)

    def restart_actor(name: str) -> dict[str, Any]:
        return t.restart_actor(name)

    def replay_draft(draft_id: str, url: str = "", name: str = "") -> dict[str, Any]:
        return replay_service.replay_tool(runtime, draft_id, url, name)

    fns = [sleep_status, sleep_now, tend_now, check_now, nudge, sleep_history, recent_events, restart_actor,
           replay_draft]
    if runtime.ctx.voice is not None:
        def set_voice_card(text: str, why: str = "") -> dict[str, Any]:
            return t.set_voice_card(text, why)

        def get_voice_card() -> dict[str, Any]:
            return t.get_voice_card()

        def voice_card_history(limit: int = 10) -> dict[str, Any]:
            return t.voice_card_history(limit)

        fns += [set_voice_card, get_voice_card, voice_card_history]
    for fn in fns:
        server.add_tool(guarded(fn), name=fn.__name__, description=DESCRIPTIONS[fn.__name__])
    server.tools_impl = t            # for tests and the curious
    return server
