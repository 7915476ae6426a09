"""What each MCP tool says of itself (the SDK shows these to the model)."""

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

TITLES = {
    "sleep_status": "Sleep status", "sleep_now": "Sleep now", "tend_now": "Tend now", "check_now": "Check now",
    "nudge": "Nudge the hippocampus", "sleep_history": "Sleep history", "recent_events": "Recent events",
    "restart_actor": "Restart an actor", "replay_draft": "Replay a draft on a candidate model",
    "replay_result": "Replay result", "get_voice_card": "Get the voice card", "set_voice_card": "Set the voice card",
    "voice_card_history": "Voice card history",
}

# destructiveHint: a sleep and a check begin with Memory's purge of what was flagged for deletion, and a sleep
# tidies the fragments it drafted from. A nudge, a tend, a restart and a new voice card version delete nothing
# (a nudge asks for the turn the schedule would take anyway; a card version is added, never overwritten).
DESTRUCTIVE = {"sleep_now", "check_now"}
# idempotentHint: the same call again changes nothing more (a card already set answers "nothing changed"; an
# actor already running is not restarted). A sleep, a tend, a check, a nudge or a replay runs again.
IDEMPOTENT = READ_ONLY - {"replay_draft"} | {"set_voice_card", "restart_actor"}


def hints(name: str) -> dict:
    """The tool's title and every hint, set (the spec's defaults would call a nudge destructive)."""
    read_only = name in READ_ONLY
    return {"title": TITLES[name], "read_only_hint": read_only,
            "destructive_hint": (not read_only) and name in DESTRUCTIVE,
            "idempotent_hint": name in IDEMPOTENT,
            # openWorldHint: every tool stays inside this service, its Memory and the models the person configured
            "open_world_hint": False}
