"""The tools, for the main model: thin, sync calls into the service facade (hippocampus.front), so a session
can see the sleep and start one without the viewer.

Every answer is a dict with `ok` and a plain-words `message`. A cycle already running is a normal answer
saying what runs since when; a call that did nothing because Memory is down, an actor has failed or the
service is stopping is an error result (isError, hippocampus.mcp.server) with the same words. The tools
are plain methods, run on a worker thread, where a blocking ask is fine.
"""
import time
from typing import Any, Callable, Optional

from hippocampus.front import ActorRunning, Busy, NoPacket, NotAllowed, ReplayBusy
from hippocampus.replay.service import unknown_run, words
from hippocampus.status.words import n

TOOL_NAMES = ["sleep_status", "sleep_now", "tend_now", "check_now", "nudge", "sleep_history", "recent_events",
              "restart_actor", "replay_draft", "replay_result"]
VOICE_TOOL_NAMES = ["set_voice_card", "get_voice_card", "voice_card_history"]

INSTRUCTIONS = (
    "SerenHippocampus: the sleep cycle for SerenMemory. sleep_status says what is waiting (a brief, a draft "
    "to review, bedtime, the model, the last failure). After submit_brief or review_draft on Memory, call "
    "nudge: the hippocampus carries on at once. sleep_now / tend_now / check_now run a step by hand; one "
    "cycle runs at a time, so a busy answer means one is already running.")


def when(ts: Optional[float]) -> Optional[str]:
    """`YYYY-MM-DD HH:MM`, local time; None for no time."""
    try:
        return None if ts is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(float(ts)))
    except (TypeError, ValueError):
        return None


def _clamp(value: Any, lo: int, hi: int, default: int) -> int:
    try:
        return max(lo, min(hi, int(value)))
    except (TypeError, ValueError):
        return default


class Tools:
    """The tool bodies, on the facade. hippocampus.mcp.server.build_server() registers them with the SDK."""

    def __init__(self, front):
        self.front = front

    # ------------------------------------------------------------ status
    def sleep_status(self) -> dict[str, Any]:
        s = self.front.status()
        say = s["say"]
        cards = [f"{name.replace('_', ' ').capitalize()}: {c['main']} ({c['sub']})" for name, c in say["cards"].items()]
        lines = [say["headline"], say["wakeup"]] + cards
        s["quality"] = self.front.quality_brief()
        return {"ok": True, **s, "say": say["headline"], "sentences": lines, "message": " ".join(lines)}

    # ------------------------------------------------------------ the cycle
    def _cycle(self, run: Callable[[], dict]) -> dict[str, Any]:
        try:
            report = run()
        except Busy as exc:     # not an error: one cycle at a time, and this says which runs since when
            since = when(exc.since)
            return {"ok": False, "busy": True, "what": exc.what, "since": since,
                    "message": f"a sleep or tend is already running ({exc.what} since {since}); nothing was "
                               "started. sleep_status shows its progress."}
        say = report.pop("say", {"level": "ok", "text": ""})
        ok = say["level"] != "bad" and not report.get("refused")
        message = say["text"]
        if report.get("asked_for_brief"):       # the viewer's words, and what the main model itself can do
            message += (" You are the main model: write it with submit_brief on Memory, then call nudge; "
                        "sleep_now with without_brief=true drafts unsteered now.")
        return {"ok": ok, "asked_for_brief": bool(report.get("asked_for_brief")), "refused": bool(report.get("refused")),
                "status": report.get("status"), "report": report, "message": message}

    def sleep_now(self, without_brief: bool = False) -> dict[str, Any]:
        return self._cycle(lambda: self.front.sleep(without_brief))

    def tend_now(self) -> dict[str, Any]:
        return self._cycle(self.front.tend)

    def check_now(self) -> dict[str, Any]:
        return self._cycle(self.front.check)

    def nudge(self) -> dict[str, Any]:
        return self.front.nudge()

    # ------------------------------------------------------------ the record
    def sleep_history(self, limit: int = 10) -> dict[str, Any]:
        rows = self.front.history(_clamp(limit, 1, 40, 10))
        entries = [{"when": when(r.get("started_at")), **r} for r in rows]
        sleeps = [r for r in rows if r.get("kind") == "sleep"]
        failed = sum(1 for r in sleeps if r.get("error"))
        msg = (f"{n(entries, 'entry', 'entries')}, newest first ({n(sleeps, 'sleep')}, {failed} failed)."
               if entries else "No sleep or tend on record yet.")
        return {"ok": True, "count": len(entries), "entries": entries, "message": msg}

    def recent_events(self, limit: int = 20, type: str = "") -> dict[str, Any]:  # noqa: A002 - the parameter name
        entries = self.front.events(_clamp(limit, 1, 500, 20), (type or "").strip() or None)
        for e in entries:
            e["when"] = when(e.get("at"))
        what = f" of type {type}" if type else ""
        msg = f"{n(entries, 'event')}{what}, newest first." if entries else f"No events{what} on record."
        return {"ok": True, "count": len(entries), "entries": entries, "message": msg}

    def restart_actor(self, name: str) -> dict[str, Any]:
        try:
            out = self.front.restart(name)
        except ActorRunning:        # a refusal, not a failure: nothing was down
            return {"ok": False, "running": True,
                    "message": f"{name} is running; restart_actor brings back an actor that is down "
                               "(restarting or failed), so nothing was restarted."}
        return {"ok": True, **out, "message": out["say"]}

    # ------------------------------------------------------------ the voice card
    def get_voice_card(self) -> dict[str, Any]:
        cur = self.front.voice()
        cap = self.front.voice_max_chars
        if not cur.get("version"):
            return {"ok": True, "enabled": True, "version": 0, "text": None, "max_chars": cap,
                    "message": "No card yet: set_voice_card writes the first one (your voice, your pronouns, "
                               "what is yours and what is someone else's)."}
        return {"ok": True, "enabled": True, "version": cur.get("version"), "text": cur.get("text"),
                "why": cur.get("why"), "set": when(cur.get("set_at")), "chars": len(cur.get("text") or ""),
                "max_chars": cap, "message": f"Version {cur.get('version')} is the card every draft and redraft prompt starts with."}

    def set_voice_card(self, text: str, why: str = "") -> dict[str, Any]:
        res = self.front.set_voice(text, why or None)
        v = res.get("version")
        msg = (f"Version {v} is your card now; every draft and redraft prompt starts with it, and each draft "
               "records the version it was written under." if res.get("changed")
               else f"That is already version {v}; nothing changed.")
        return {"ok": True, "version": v, "changed": bool(res.get("changed")), "message": msg}

    def voice_card_history(self, limit: int = 10) -> dict[str, Any]:
        versions = [{"version": v.get("version"), "text": v.get("text"), "why": v.get("why"),
                     "set": when(v.get("set_at"))} for v in self.front.voice_history(_clamp(limit, 1, 200, 10))]
        msg = f"{n(versions, 'version')}, newest first." if versions else "No card yet."
        return {"ok": True, "count": len(versions), "versions": versions, "message": msg}

    # ------------------------------------------------------------ replay (a listed candidate's name, never a URL)
    def replay_draft(self, draft_id: str, candidate: str = "", model: str = "") -> dict[str, Any]:
        """A result with `ok` and a plain-words `message`: a refusal, a busy worker or no packet is an answer."""
        if not (draft_id or "").strip():
            return {"ok": False, "message": "give the draft id to replay (list_drafts on Memory shows them)"}
        try:
            run = self.front.replay(draft_id.strip(), candidate or None, model or None)
        except NoPacket as exc:
            return {"ok": False, "found": False, "message": str(exc)}
        except ReplayBusy as exc:
            return {"ok": False, "busy": True, "run": exc.run.id,
                    "message": f"{exc} (replay_result with run {exc.run.id!r} reads it)."}
        except NotAllowed as exc:
            return {"ok": False, "refused": True, "message": str(exc)}
        return _replay_answer(run)

    def replay_result(self, run: str) -> dict[str, Any]:
        """A replay that outlived replay_draft's wait, read by its run id."""
        found = self.front.replay_run(run)
        if found is None:
            return {"ok": False, "found": False, "message": unknown_run(run)}
        return _replay_answer(found)


def _replay_answer(run) -> dict:
    """A run as the tools answer it: the result, its failure, or where it stands."""
    if not run.done.is_set():
        return {"ok": True, "running": True, "run": run.id,
                "message": f"{run.running_words()}; call replay_result with run {run.id!r} to read it when it "
                           "is done."}
    if run.error:
        return {"ok": False, "run": run.id, "message": run.error}
    return {"ok": True, "run": run.id, **run.result, "message": words(run.result)}
