"""The tools for the main model, what each says of itself, and their hints: thin sync calls into the facade.

Every answer is a dict with `ok` and a plain-words `message`; a busy cycle is a normal answer, a call that did
nothing because of a failure an error result (hippocampus.mcp.server). No `from __future__ import annotations`:
the schemas are read from the methods' real annotations.
"""
from typing import Any, Callable, Optional

from hippocampus.config.replay_endpoints import name_problem
from hippocampus.front import ActorRunning, Busy, NoPacket, NotAllowed, OtherCopy, ReplayBusy
from hippocampus.replay.service import unknown_run, words
from hippocampus.status.words import n
from hippocampus.words import WRITE_BRIEF, busy, hhmm

TOOL_NAMES = ["sleep_status", "sleep_now", "tend_now", "check_now", "nudge", "sleep_history", "recent_events",
              "restart_actor", "replay_draft", "replay_result"]
VOICE_TOOL_NAMES = ["set_voice_card", "get_voice_card", "voice_card_history"]

INSTRUCTIONS = (
    "SerenHippocampus: the sleep cycle for SerenMemory. sleep_status says what is waiting (a brief, a draft "
    "to review, bedtime, the model, the last failure). After submit_brief or review_draft on Memory, call "
    "nudge: the hippocampus carries on at once. sleep_now / tend_now / check_now run a step by hand; one "
    "cycle runs at a time, so a busy answer means one is already running.")

DESCRIPTIONS = {
    "sleep_status": "What the sleep cycle is doing and what waits: the last sleep (or its failure), a brief "
                    "waiting, drafts waiting for review, bedtime, the model, in plain words (`say`). Never fails.",
    "sleep_now": "Start a sleep now. With no brief waiting it asks the main model for one instead of drafting "
                 f"blind ({WRITE_BRIEF}); without_brief=true drafts unsteered. "
                 "Busy if a sleep or tend is already running.",
    "tend_now": "Redraft denied operations from their critiques and close chains that landed, now (whatever the "
                "tend cycle says). Busy if a sleep or tend is already running.",
    "check_now": "Run the check now: purge what is flagged, then sleep if a brief waits and no chain is open.",
    "nudge": "Your turn: call this after submit_brief or review_draft. Returns at once; the hippocampus runs a "
             "tick (sleeps on the brief, redrafts what was denied, closes what landed).",
    "sleep_history": "The sleeps and tends on record, newest first (local to this service).",
    "recent_events": "The events on record, newest first; `type` filters (e.g. sleep_failed, draft_submitted).",
    "restart_actor": "Bring back an actor that crashed too often and was left down (sleep_status names it). "
                     "Answers at once; the actor comes back in the background (sleep_status shows it running).",
    "replay_draft": "Send a past draft's saved prompts to a candidate small model and compare both sides: "
                    "operations that parse, failed and cut-off calls, invented numbers, overlap with what landed. "
                    "candidate: a name the person listed in replay.candidates (default: the configured model); "
                    "it takes no URL. model: the model name to ask for. One replay runs at a time (busy "
                    "otherwise); one still running after a while answers with a run id for replay_result. "
                    "Nothing is written to Memory.",
    "replay_result": "The result of a replay that was still running when replay_draft answered, by its run id.",
    "get_voice_card": "Your voice card: the text every draft and redraft prompt starts with.",
    "set_voice_card": "Write a new version of your voice card: how your memories speak (voice, pronouns, what is "
                      "yours and what is someone else's). Nothing is overwritten; `why` is kept with it.",
    "voice_card_history": "Every version of your voice card, newest first.",
}

READ_ONLY = {"sleep_status", "sleep_history", "recent_events", "get_voice_card", "voice_card_history",
             "replay_draft", "replay_result"}

TITLES = {"nudge": "Nudge the hippocampus", "restart_actor": "Restart an actor", "get_voice_card": "Get the voice card",
          "replay_draft": "Replay a draft on a candidate model", "set_voice_card": "Set the voice card"}

# A sleep and a check begin with Memory's purge of what is flagged (and a sleep tidies its fragments); a nudge,
# a tend, a restart and a card version (added, never overwritten) delete nothing.
DESTRUCTIVE = {"sleep_now", "check_now"}
# The same call again changes nothing more: a card already set, an actor already running.
IDEMPOTENT = READ_ONLY - {"replay_draft"} | {"set_voice_card", "restart_actor"}


def hints(name: str) -> dict:
    """The title and every hint, set: the spec's defaults would call a nudge destructive and open-world."""
    return {"title": TITLES.get(name, name.replace("_", " ").capitalize()), "read_only_hint": name in READ_ONLY,
            "destructive_hint": name in DESTRUCTIVE, "idempotent_hint": name in IDEMPOTENT, "open_world_hint": False}


def when(ts: Optional[float]) -> Optional[str]:
    return None if ts is None else hhmm(ts, day=True)


def _clamp(value: int, lo: int, hi: int) -> int:
    """A limit held to lo..hi (server.arguments() has made it a whole number, or refused the call)."""
    return max(lo, min(hi, value))


class Tools:
    def __init__(self, front):
        self.front = front

    def sleep_status(self) -> dict[str, Any]:
        s = self.front.status()
        say = s["say"]
        cards = [f"{name.replace('_', ' ').capitalize()}: {c['main']} ({c['sub']})" for name, c in say["cards"].items()]
        lines = [say["headline"], say["wakeup"]] + cards
        s["quality"] = self.front.quality_brief()
        return {"ok": True, **s, "say": say["headline"], "sentences": lines, "message": " ".join(lines)}

    def _cycle(self, run: Callable[[], dict]) -> dict[str, Any]:
        try:
            report = run()
        except Busy as exc:     # not an error: one cycle at a time, and this says which runs since when
            return {"ok": False, "busy": True, "what": exc.what, "since": when(exc.since),
                    "message": f"{busy(exc.what, exc.since)}; nothing was started. sleep_status shows its progress."}
        say = report.pop("say", {"level": "ok", "text": ""})
        asked, refused = bool(report.get("asked_for_brief")), bool(report.get("refused"))
        message = say["text"] + (f" You are the main model: {WRITE_BRIEF}; sleep_now with without_brief=true "
                                 "drafts unsteered now." if asked else "")
        return {"ok": say["level"] != "bad" and not refused, "asked_for_brief": asked, "refused": refused,
                "status": report.get("status"), "report": report, "message": message}

    def sleep_now(self, without_brief: bool = False) -> dict[str, Any]:
        out = self._cycle(lambda: self.front.sleep(without_brief))
        if out.get("status") == "other_copy":      # an error to the caller, in the words POST /sleep answers
            raise OtherCopy(out["message"].rstrip("."))
        return out

    def tend_now(self) -> dict[str, Any]:
        return self._cycle(self.front.tend)

    def check_now(self) -> dict[str, Any]:
        return self._cycle(self.front.check)

    def nudge(self) -> dict[str, Any]:
        return self.front.nudge()

    def sleep_history(self, limit: int = 10) -> dict[str, Any]:
        rows = self.front.history(_clamp(limit, 1, 40))
        entries = [{"when": when(r.get("started_at")), **r} for r in rows]
        sleeps = [r for r in rows if r.get("kind") == "sleep"]
        failed = sum(1 for r in sleeps if r.get("error"))
        msg = (f"{n(entries, 'entry', 'entries')}, newest first ({n(sleeps, 'sleep')}, {failed} failed)."
               if entries else "No sleep or tend on record yet.")
        return {"ok": True, "count": len(entries), "entries": entries, "message": msg}

    def recent_events(self, limit: int = 20, type: str = "") -> dict[str, Any]:  # noqa: A002 - the parameter name
        type = (type or "").strip()     # as GET /events?type= takes it
        entries = self.front.events(_clamp(limit, 1, 500), type or None)
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

    def get_voice_card(self) -> dict[str, Any]:
        card = self.front.voice_card()
        cur, cap = card.current() or {}, card.max_chars
        if not cur.get("version"):
            return {"ok": True, "enabled": True, "version": 0, "text": None, "max_chars": cap,
                    "message": "No card yet: set_voice_card writes the first one (your voice, your pronouns, "
                               "what is yours and what is someone else's)."}
        return {"ok": True, "enabled": True, "version": cur.get("version"), "text": cur.get("text"),
                "why": cur.get("why"), "set": when(cur.get("set_at")), "chars": len(cur.get("text") or ""),
                "max_chars": cap,
                "message": f"Version {cur.get('version')} is the card every draft and redraft prompt starts with."}

    def set_voice_card(self, text: str, why: str = "") -> dict[str, Any]:
        res = self.front.voice_card().set(text, why or None)
        v = res.get("version")
        msg = (f"Version {v} is your card now; every draft and redraft prompt starts with it, and each draft "
               "records the version it was written under." if res.get("changed")
               else f"That is already version {v}; nothing changed.")
        msg += f" Note: {res['set_aside']}." if res.get("set_aside") else ""       # the old file's new place
        return {"ok": True, "version": v, "changed": bool(res.get("changed")), "message": msg}

    def voice_card_history(self, limit: int = 10) -> dict[str, Any]:
        versions = [{"version": v.get("version"), "text": v.get("text"), "why": v.get("why"),
                     "set": when(v.get("set_at"))} for v in self.front.voice_card().history(_clamp(limit, 1, 200))]
        msg = f"{n(versions, 'version')}, newest first." if versions else "No card yet."
        return {"ok": True, "count": len(versions), "versions": versions, "message": msg}

    def replay_draft(self, draft_id: str, candidate: str = "", model: str = "") -> dict[str, Any]:
        if not (draft_id or "").strip():
            return {"ok": False, "message": "give the draft id to replay (list_drafts on Memory shows them)"}
        if problem := name_problem("candidate", candidate) or name_problem("model", model):     # as POST /replay
            return {"ok": False, "refused": True, "message": problem}
        try:
            run = self.front.replays.replay(draft_id.strip(), candidate or None, model or None)
        except NoPacket as exc:
            return {"ok": False, "found": False, "message": str(exc)}
        except ReplayBusy as exc:
            return {"ok": False, "busy": True, "run": exc.run.id,
                    "message": f"{exc} (replay_result with run {exc.run.id!r} reads it)."}
        except NotAllowed as exc:
            return {"ok": False, "refused": True, "message": str(exc)}
        return _replay_answer(run)

    def replay_result(self, run: str) -> dict[str, Any]:
        found = self.front.replays.run(run)
        if found is None:
            return {"ok": False, "found": False, "message": unknown_run(run)}
        return _replay_answer(found)


def _replay_answer(run) -> dict:
    if not run.done.is_set():
        return {"ok": True, "running": True, "run": run.id,
                "message": f"{run.running_words()}; call replay_result with run {run.id!r} to read it when it "
                           "is done."}
    if run.error:
        return {"ok": False, "run": run.id, "message": run.error}
    return {"ok": True, "run": run.id, **run.result, "message": words(run.result)}
