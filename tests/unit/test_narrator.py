"""The one narrator, as a table: a situation -> the headline (and its level and button), with the cards
never contradicting it and an error's text said once."""
from __future__ import annotations

import re

import pytest

from hippocampus.status.narrator import narrate
from hippocampus.status.words import hhmm

NOW = 1_800_000_000.0
HEALTHY = {"memory": {"reachable": True, "url": "http://127.0.0.1:7420"}, "model_configured": True,
           "model_url": "http://127.0.0.1:8091/v1", "mode": "thread", "tick_seconds": 300, "tend_cycle": True,
           "tend_interval_seconds": 600, "interval_seconds": 72000, "bedtime_at": NOW + 4 * 3600,
           "actors": {"sleeper": {"state": "running"}}, "chain": {"chain_open": False}}
DRAFT = {"chain_open": True, "under_review": 1, "chain_brief_id": "b1234567890",
         "waiting_draft": {"id": "3f2a000011112222", "operations": 3, "created_at": NOW - 3600}}

ROWS = [
    ("a draft waiting", {"chain": DRAFT},
     "A draft (3 operations) has waited 60 min for review in Memory: review it, then nudge.", "wait", None),
    ("denied operations waiting for sleep time", {"chain": {"chain_open": True, "redrafts_due": 1},
                                                  "redrafts_waiting_since": NOW - 600, "tend_cycle": False},
     "Denied operations have waited since", "wait", "tend"),
    ("Memory down", {"memory": {"reachable": False, "url": "http://m:7420", "error": "ConnectionError reaching m"}},
     "Memory at http://m:7420 is not answering (ConnectionError reaching m): nothing can sleep", "bad", None),
    ("the model configured but down", {"model_health": {"answering": False, "error": "ConnectionError"}},
     "The model at http://127.0.0.1:8091/v1 is configured but not answering", "bad", None),
    ("mechanical mode", {"model_configured": False}, "Quiet and healthy; bedtime in 4 h", "ok", "sleep"),
    ("the last sleep failed", {"last_sleep": {"error": "ModelUnavailable: no answer", "finished_at": NOW - 60}},
     "The last sleep failed at", "bad", "sleep"),
    ("bedtime soon with no brief", {"bedtime_at": NOW + 600}, "Quiet and healthy; bedtime in 10 min", "ok", "sleep"),
    ("a brief requested", {"brief_wanted": True, "brief_requested_at": NOW - 60, "bedtime_at": NOW - 60},
     "Waiting for a brief from the main model: a note asking for one has been in Memory since", "wait", None),
    ("a chain open on the brief that opened it", {"chain": DRAFT}, "A draft (3 operations)", "wait", None),
    ("the cycle busy", {"busy": {"what": "sleep", "since": NOW - 30},
                        "progress": {"what": "sleeping", "piles": 4, "piles_done": 1}},
     "A sleep is running since", "busy", None),
]


@pytest.mark.parametrize("name,changes,starts,level,action", ROWS, ids=[r[0] for r in ROWS])
def test_the_narrator_table(name, changes, starts, level, action):
    say = narrate({**HEALTHY, **changes}, NOW)
    assert say["headline"].startswith(starts), say["headline"]
    assert (say["level"], say["action"]) == (level, action)
    text = " ".join([say["headline"]] + [c["main"] + " " + c["sub"] for c in say["cards"].values()])
    for err in ("ConnectionError reaching m", "ModelUnavailable: no answer"):
        assert text.count(err) <= 1, text                       # an error's text appears once


def test_the_brief_card_names_the_brief_that_opened_the_chain_never_waiting_for_itself():
    say = narrate({**HEALTHY, "chain": DRAFT}, NOW)
    assert say["cards"]["brief"]["main"] == "In use" and "opened the draft under review" in say["cards"]["brief"]["sub"]
    assert "waiting, but a chain is open" not in say["headline"]


def test_modes_are_named_only_on_the_card_they_change():
    say = narrate({**HEALTHY, "model_configured": False, "mode": "external"}, NOW)
    assert "mechanical" not in say["headline"].lower() and "external" not in say["headline"].lower()
    assert say["cards"]["model"]["main"] == "Mechanical" and say["cards"]["tick"]["main"] == "When asked"
    assert say["pills"]["model"]["text"] == "model: mechanical"


def test_a_model_that_does_not_answer_is_never_a_green_pill():
    say = narrate({**HEALTHY, "model_health": {"answering": False, "error": "ConnectionError"}}, NOW)
    assert say["pills"]["model"] == {"text": "model: not answering", "state": "hot"}
    ok = narrate({**HEALTHY, "model_health": {"answering": True, "error": None}}, NOW)
    assert ok["pills"]["model"]["state"] == "ok"


# ---------------------------------------------------------------- the detail lines, as tables
WAKE = [
    ("never checked", None, "Wake-up: not checked yet"),
    ("checking", {"ok": None, "summary": "checking...", "last": {}}, "Wake-up: checking..."),
    ("a script exited", {"ok": True, "summary": "ok: claude as me (6 checks)",
                         "last": {"draft_submitted": {"at": NOW - 30, "exit_code": 6, "seconds": 0.4}}},
     "Wake-up: ok: claude as me (6 checks) · last: draft submitted 30 s ago (%s): exited 6 after 0.4 s"),
    ("still running, newest first", {"ok": True, "summary": "ok: x", "last": {
        "draft_submitted": {"at": NOW - 300, "ok": True, "type": "endpoint", "status": 204},
        "chain_closed": {"at": NOW - 5, "running": True, "pid": 42}}},
     "Wake-up: ok: x · last: chain closed 5 s ago (%s): running (pid 42); draft submitted 5 min ago (%s): "
     "sent (HTTP 204)"),
    ("a killed and a failed one", {"ok": True, "summary": "ok: x", "last": {
        "a": {"at": NOW - 10, "exit_code": -9, "seconds": 120, "killed": True},
        "b": {"at": NOW - 20, "ok": False, "error": "no claude"}}},
     "Wake-up: ok: x · last: a 10 s ago (%s): exited -9 after 2 min, killed; b 20 s ago (%s): failed (no claude)"),
]


@pytest.mark.parametrize("name,wake,line", WAKE, ids=[r[0] for r in WAKE])
def test_the_wake_up_line_table(name, wake, line):
    from hippocampus.status.words import hhmm

    times = sorted({r.get("at") for r in ((wake or {}).get("last") or {}).values()}, reverse=True)
    assert narrate({**HEALTHY, "wakeup": wake}, NOW)["wakeup"] == line % tuple(hhmm(t) for t in times)


def test_a_failing_wake_up_is_worded_once_in_the_headline():
    say = narrate({**HEALTHY, "wakeup": {"ok": False, "summary": "would fail: cwd: /gone is missing", "last": {}}},
                  NOW)
    assert "would fail: cwd: /gone is missing" in say["headline"]
    assert say["wakeup"] == "Wake-up: would fail (see above)"


MANAGED = {"managed": True, "state": "ready", "via": "llama-server", "started_by_us": True, "last_used": NOW - 120,
           "keep_warm_seconds": 600}
MODEL = [
    ("mechanical, no voice card", {"model_configured": False},
     [["model", "Mechanical: no model configured: clusters become cores by their longest entry", ""],
      ["voice card", "off (opt-in)", ""]]),
    ("always on, answering, a card not written", {"model_health": {"answering": True},
                                                  "voice": {"enabled": True, "version": 0}},
     [["model", "Answering: http://127.0.0.1:8091/v1", ""],
      ["started by", "not started here: it is expected to be always on", ""], ["voice card", "on, not written yet", ""]]),
    ("managed and ready, card v3", {"model_lifecycle": MANAGED, "voice": {"enabled": True, "version": 3}},
     [["model", "Managed: ready: started when a sleep or redraft needs it", ""], ["state", "ready", "good"],
      ["started by", "llama-server (this service started it)", ""], ["last used", "2 min ago (%s)", ""],
      ["keep warm", "10 min", ""], ["voice card", "version 3", ""]]),
    ("not answering", {"model_health": {"answering": False, "error": "ConnectionError"}},
     [["model", "Not answering: http://127.0.0.1:8091/v1 does not answer", "bad"],
      ["started by", "not started here: it is expected to be always on", ""], ["voice card", "off (opt-in)", ""]]),
]


@pytest.mark.parametrize("name,changes,rows", MODEL, ids=[r[0] for r in MODEL])
def test_the_model_rows_table(name, changes, rows):
    from hippocampus.status.words import hhmm

    got = narrate({**HEALTHY, **changes}, NOW)["cards"]["model"]["rows"]
    assert got == [[k, v.replace("%s", hhmm(NOW - 120)), level] for k, v, level in rows]


def test_a_model_that_failed_to_start_says_its_error_once():
    say = narrate({**HEALTHY, "model_lifecycle": {"managed": True, "state": "failed", "last_error": "exit 1: no GPU"}},
                  NOW)
    assert say["headline"] == "The model failed to start: exit 1: no GPU."
    assert ["last error", "see above", "bad"] in say["cards"]["model"]["rows"]
    assert ["state", "failed", "bad"] in say["cards"]["model"]["rows"]


def test_the_busy_note_and_the_actors_words():
    say = narrate({**HEALTHY, "busy": {"what": "tend", "since": NOW},
                   "actors": {"ripple": {"state": "failed", "restarts": 1, "last_error": "boom",
                                         "last_error_at": NOW}}}, NOW)
    assert say["busy"] == f"A tend is running since {hhmm(NOW)}"      # the one sentence (words.busy)
    assert say["actors"]["ripple"]["restarts"] == "1 restart"
    assert say["actors"]["ripple"]["error"].endswith(": boom")
    assert narrate(HEALTHY, NOW)["busy"] == ""


# ---------------------------------------------------------------- a person's words (issue 32, item 5)
# What a newcomer read on the viewer, each case as it was found: no route names, no config keys where a
# sentence does, no contradiction between cards, no raw timestamps, Memory's URL once.
ROUTE = re.compile(r"\b(GET|POST|PUT|DELETE) /|/actors/|<name>")
CONFIG_KEY = re.compile(r"\b(model|sleep|ripple|memory|server|notify|voice|replay)\.[a-z_]+|\b[a-z]+_[a-z_]+=")
EPOCH = re.compile(r"\b1[5-9]\d{8}\b")


def _said(say: dict) -> str:
    """Everything the viewer shows of the status: the headline, the wake-up line, the cards and their rows."""
    parts = [say["headline"], say["wakeup"], say["busy"]]
    for c in say["cards"].values():
        parts += [c["main"], c["sub"]] + [f"{k}: {v}" for k, _ in [(0, 0)] for k, v, _l in c.get("rows", [])]
    parts += [w["error"] for w in say["actors"].values()]
    return "\n".join(p for p in parts if p)


def _plain(text: str) -> None:
    assert not ROUTE.search(text), text
    assert not CONFIG_KEY.search(text), text
    assert not EPOCH.search(text), text


PEOPLE = [
    ("an actor down", {"actors": {"ripple": {"state": "failed", "restarts": 3}}},
     "The part that wakes the main model crashed too often and is down: press Restart beside it under Details."),
    ("the wake-up off, a brief asked for", {"brief_wanted": True, "brief_requested_at": NOW - 60,
                                            "wakeup": {"ok": None, "type": "off", "summary": "off", "last": {}}},
     "nothing here wakes the main model, so it finds the note the next time it reads its memories"),
    ("past bedtime, no brief", {"bedtime_at": NOW - 60}, "Past bedtime with no brief: the sleep starts once"),
    ("a failed sleep waiting for the model's retry", {"last_sleep": {"error": "model down", "finished_at": NOW - 60,
                                                                     "retry_at": NOW + 300}},
     "the model's start is tried again at"),
]


@pytest.mark.parametrize("name,changes,has", PEOPLE, ids=[r[0] for r in PEOPLE])
def test_a_person_reads_no_route_no_key_no_epoch(name, changes, has):
    say = narrate({**HEALTHY, **changes}, NOW)
    assert has in _said(say)
    _plain(_said(say))


def test_every_situation_of_the_table_is_plain():
    for _name, changes, *_ in ROWS + [(n, c) for n, c, _h in PEOPLE]:
        _plain(_said(narrate({**HEALTHY, **changes}, NOW)))


def test_external_ticks_are_said_without_routes():
    tick = narrate({**HEALTHY, "mode": "external"}, NOW)["cards"]["tick"]
    assert "POST" not in tick["sub"] and "/nudge" not in tick["sub"]
    assert tick["sub"].startswith("no clock of its own: it takes a turn when the main model nudges it")


def test_a_check_that_saw_a_chain_open_is_not_said_beside_the_tend_that_closed_it():
    """Found: "last check ... a chain is open" on Last sleep beside "closed 1 chain" on Last tend."""
    s = {**HEALTHY, "last_sleep": {"draft_id": "d1234567890", "operations": 2, "finished_at": NOW - 900},
         "last_check": {"status": "chain_open", "at": NOW - 600},
         "last_tend": {"closed": ["c1"], "finished_at": NOW - 60}, "chain": {"chain_open": False}}
    say = narrate(s, NOW)
    assert "closed 1 chain" in say["cards"]["last_tend"]["sub"]
    assert "a chain is open" not in say["cards"]["last_sleep"]["sub"]
    still = narrate({**s, "chain": {"chain_open": True}, "last_tend": None}, NOW)     # while it is open, said
    assert "a chain is open" in still["cards"]["last_sleep"]["sub"]


def test_a_model_not_managed_here_has_no_stopped_state():
    """Found: "state: stopped" beside "not managed here (always on)"."""
    rows = narrate({**HEALTHY, "model_health": {"answering": True},
                    "model_lifecycle": {"managed": False, "state": "stopped"}}, NOW)["cards"]["model"]["rows"]
    assert [r[0] for r in rows] == ["model", "started by", "voice card"]
    assert "stopped" not in str(rows)


def test_the_model_rows_name_no_config_key():
    rows = narrate({**HEALTHY, "model_structured": {"mode": "auto"},
                    "model_fit": {"n_ctx": 8192, "prompt_tokens": 3000, "max_tokens": 1024}}, NOW)["cards"]["model"]
    _plain(" ".join(v for _k, v, _l in rows["rows"]))
    off = narrate({**HEALTHY, "model_structured": {"mode": "off"}}, NOW)["cards"]["model"]["rows"]
    _plain(" ".join(v for _k, v, _l in off))


def test_memory_down_names_its_url_once_across_the_page():
    """Found: the Memory URL four times on one page (the headline, the queue's note, the quality note, a card)."""
    from hippocampus.status import lists as boards

    url = "http://m.lan:7420"
    err = f"SerenMemory at {url} is not answering (ConnectionError)"
    say = narrate({**HEALTHY, "memory": {"reachable": False, "url": url, "error": "ConnectionError"},
                   "last_sleep": {"error": err, "finished_at": NOW - 60}}, NOW)
    page = "\n".join([_said(say), boards.queue([], NOW, err)["say"]["note"],
                      boards.quality({"ready": False, "groups": [], "error": err})["say"]["note"],
                      boards.quality({"ready": True, "drafts": 1, "groups": [{"model": "x", "calls": 0}],
                                      "error": err})["say"]["note"]])
    assert page.count(url) == 1, page
    assert say["headline"].startswith(f"Memory at {url} is not answering")


def test_sleep_now_with_no_brief_names_no_argument_and_no_tool():
    """Found: "Sleep now" answered "... (submit_brief on Memory, then nudge); without_brief=true drafts unsteered
    now": the person pressed a button; there is no button for without_brief."""
    from hippocampus.status.lists import result

    text = result("sleep", {"asked_for_brief": True, "status": "asked_for_brief"})["text"]
    assert text == ("No brief was waiting, so nothing was drafted blind: a note in Memory asks the main model "
                    "for one, and the sleep runs once it arrives.")
    _plain(text)
    assert "submit_brief" not in text and "nudge" not in text


# issue 41: the headline and the cards agree with the freshest read of Memory
REVIEW_READ = {"drafts": [], "briefs": [], "checked_at": NOW, "as_of": NOW, "error": None}


def test_a_draft_decided_in_memory_since_the_last_check_is_not_said_to_wait():
    chain = {**DRAFT, "at": NOW - 60}
    still = narrate({**HEALTHY, "chain": chain, "review": {**REVIEW_READ, "drafts": ["3f2a000011112222"]}}, NOW)
    assert still["headline"].startswith("A draft (3 operations) has waited"), still["headline"]
    gone = narrate({**HEALTHY, "chain": chain, "review": REVIEW_READ}, NOW)
    assert "has waited" not in gone["headline"] and "was decided in Memory" in gone["headline"], gone["headline"]
    assert gone["action"] == "tend" and gone["buttons"]["tend"]["primary"] and not gone["buttons"]["sleep"]["primary"]
    older = narrate({**HEALTHY, "chain": {**DRAFT, "at": NOW + 5}, "review": REVIEW_READ}, NOW)
    assert "has waited" in older["headline"], "a queue read older than the check overruled it"
    down = narrate({**HEALTHY, "chain": chain, "review": {**REVIEW_READ, "error": "no answer"}}, NOW)
    assert "has waited" in down["headline"], "a failed read of the queue was taken for an empty queue"


def test_a_sleep_that_failed_on_the_model_is_not_said_to_be_failing_once_the_model_answers():
    failed = {"error": "the model at http://127.0.0.1:8091/v1 is not answering (connection refused)",
              "finished_at": NOW - 120}
    still = narrate({**HEALTHY, "last_sleep": failed,
                     "model_health": {"answering": False, "error": "refused", "checked_at": NOW}}, NOW)
    assert "not answering" in still["headline"] and still["level"] == "bad"
    back = narrate({**HEALTHY, "last_sleep": failed,
                    "model_health": {"answering": True, "error": None, "checked_at": NOW}}, NOW)
    assert "not answering" not in back["headline"] and "answers again now" in back["headline"], back["headline"]
    assert back["pills"]["model"]["text"] == "model: answering" and back["level"] != "bad"


def test_before_the_first_check_the_brief_card_says_what_memory_holds():
    unread = narrate({**HEALTHY, "chain": None}, NOW)
    assert unread["cards"]["brief"]["main"] == "Checking"
    one = narrate({**HEALTHY, "chain": None, "review": {**REVIEW_READ, "briefs": ["b1"]}}, NOW)
    assert one["cards"]["brief"]["main"] == "Waiting" and "1 brief open in Memory" in one["cards"]["brief"]["sub"]
    assert one["headline"].startswith("A brief from the main model is waiting in Memory")
    none = narrate({**HEALTHY, "chain": None, "review": REVIEW_READ}, NOW)
    assert none["cards"]["brief"]["main"] == "Not asked for yet"


BUTTONS = [
    ("idle: Sleep now", {}, (True, False), (False, False), ""),
    ("a draft under review: neither", {"chain": DRAFT}, (False, False), (False, False), ""),
    ("denied operations: Tend now", {"chain": {"chain_open": True, "redrafts_due": 1}}, (False, False),
     (True, False), ""),
    ("a sleep running: neither, disabled", {"busy": {"what": "sleep", "since": NOW - 5}}, (False, True),
     (False, True), f"A sleep is running since {hhmm(NOW - 5)}: wait for it to end."),
    ("Memory down: neither, disabled", {"memory": {"reachable": False, "url": "http://m", "error": "refused"}},
     (False, True), (False, True), "Memory is not answering: nothing can start until it does."),
]


@pytest.mark.parametrize("name,changes,sleep,tend,why", BUTTONS, ids=[r[0] for r in BUTTONS])
def test_the_main_button_fits_the_state(name, changes, sleep, tend, why):
    b = narrate({**HEALTHY, **changes}, NOW)["buttons"]
    assert (b["sleep"]["primary"], b["sleep"]["disabled"]) == sleep
    assert (b["tend"]["primary"], b["tend"]["disabled"]) == tend
    assert b["why"] == why


def test_memory_down_says_as_of_when_memory_last_answered():
    from hippocampus.status.words import hhmm, times_said
    with times_said() as times:
        say = narrate({**HEALTHY, "memory": {"reachable": False, "url": "http://m", "error": "refused",
                                             "up_at": NOW - 600}}, NOW)
    assert say["cards"]["brief"]["sub"].endswith(f" · as of {hhmm(NOW - 600)}")
    assert times[hhmm(NOW - 600)] == NOW - 600          # the viewer shows it in the person's clock


@pytest.mark.parametrize("brief_id,model_back", [(None, False), (None, True), ("b1", False), ("b1", True)])
def test_a_failed_sleep_says_its_brief_is_kept_only_when_it_had_one(brief_id, model_back):
    """A sleep by hand without a brief (POST /sleep?without_brief=true) that failed kept no brief: the headline
    must not say it did, nor that the next check sleeps on it."""
    last = {"error": "the model could not draft: untagged: HTTP 500", "finished_at": NOW - 60, "brief_id": brief_id}
    state = {**HEALTHY, "last_sleep": last}
    if model_back:
        state["model_health"] = {"answering": True, "checked_at": NOW - 5}
    say = narrate(state, NOW)
    said = say["headline"].lower()
    assert ("brief" in said and "no brief" not in said) is (brief_id is not None), say["headline"]
    assert say["level"] in ("bad", "wait") and say["action"] == "sleep"


def test_a_tend_whose_redraft_failed_is_not_called_quiet():
    """Found: the Last tend card read "Quiet" over "the model could not write 1 redraft"."""
    s = {**HEALTHY, "chain": {"chain_open": True, "redrafts_due": 1},
         "last_tend": {"model_failures": [{"stage": "redraft", "topic": "garden", "op": 1,
                                           "why": "the model's answer was not the JSON asked for: 'x'"}],
                       "finished_at": NOW - 60}}
    card = narrate(s, NOW)["cards"]["last_tend"]
    assert "the model could not write 1 redraft" in card["sub"]
    assert card["main"] != "Quiet" and card["level"] == "bad", card


def test_a_managed_model_that_failed_to_start_is_not_a_green_pill():
    """Found: the headline said the model failed to start while the model pill beside it was green
    ("model: managed: failed", state ok) and the model card's line was not marked bad."""
    say = narrate({**HEALTHY, "model_lifecycle": {"managed": True, "state": "failed",
                                                 "last_error": "llama-server exited 1"}}, NOW)
    assert say["level"] == "bad" and "failed to start" in say["headline"]
    assert say["pills"]["model"]["state"] == "hot", say["pills"]
    assert say["cards"]["model"]["level"] == "bad"
    ready = narrate({**HEALTHY, "model_lifecycle": {"managed": True, "state": "ready"}}, NOW)
    assert ready["pills"]["model"]["state"] == "ok"


def test_denied_operations_between_redrafts_are_not_said_to_wait_for_a_tend_cycle_that_is_off():
    """Found: with the tend cycle on, a tick between two redrafts (tend_interval_seconds not yet passed) leaves the
    chain deferred, and the headline said 'for sleep time (the tend cycle is off)'."""
    say = narrate({**HEALTHY, "tend_cycle": True, "chain": {"chain_open": True, "redrafts_due": 1},
                   "redrafts_waiting_since": NOW - 120}, NOW)
    assert "tend cycle is off" not in say["headline"] and "sleep time" not in say["headline"], say["headline"]
    assert "redraft" in say["headline"] and say["action"] == "tend"


@pytest.mark.parametrize("cycle", [True, False])
def test_the_tend_card_says_what_a_deferred_redraft_waits_for_as_the_setting_is(cycle):
    """Found: with the tend cycle on, a tend between two redrafts (tend_interval_seconds not yet passed) defers
    the chain, and the Last tend card said '1 redraft waiting for sleep time' - it waited for the cycle's turn."""
    say = narrate({**HEALTHY, "tend_cycle": cycle, "chain": {"chain_open": True, "redrafts_due": 1},
                   "last_tend": {"deferred": ["c1"], "finished_at": NOW - 60}}, NOW)
    sub = say["cards"]["last_tend"]["sub"]
    assert ("sleep time" in sub) is (not cycle), sub
    assert ("tend cycle" in sub) is cycle, sub


@pytest.mark.parametrize("cycle", [True, False])
def test_with_no_clock_of_its_own_the_tick_card_says_a_nudge_redrafts(cycle):
    """Found: in external mode (ticks only when nudged, and a nudged tick redrafts whatever the tend cycle says)
    the Tick card said 'no clock of its own ... · tend cycle on: redrafts every 10 min' (or, off, 'redrafts wait
    for sleep time'): neither happens."""
    sub = narrate({**HEALTHY, "mode": "external", "tend_cycle": cycle}, NOW)["cards"]["tick"]["sub"]
    assert "redrafts every" not in sub and "wait for sleep time" not in sub, sub
    assert "nudge redrafts" in sub, sub


def test_a_tend_interrupted_by_a_stop_is_not_called_quiet():
    """Found: a redraft cut short by the service's stop left the Last tend card reading 'Quiet' over
    'interrupted by a stop: nothing was posted' (the sleep's card says 'Interrupted')."""
    card = narrate({**HEALTHY, "last_tend": {"interrupted": "the service is stopping", "finished_at": NOW - 60}},
                   NOW)["cards"]["last_tend"]
    assert "interrupted by a stop" in card["sub"], card
    assert card["main"] == "Interrupted", card


def test_with_no_clock_of_its_own_a_waiting_brief_or_a_decided_draft_waits_for_a_nudge_not_the_next_check():
    """Found: in external mode no check runs on a timer (only a nudge, Sleep now or Tend now start one), but a
    brief the main model wrote without nudging was said to be 'slept on at the next check', and a draft decided in
    Memory 'taken from there by the next check': nothing comes, and the words never change."""
    brief = narrate({**HEALTHY, "mode": "external", "chain": {"chain_open": False, "brief_id": "b1"}}, NOW)
    decided = narrate({**HEALTHY, "mode": "external", "chain": {**DRAFT, "at": NOW - 60}, "review": REVIEW_READ}, NOW)
    for words in (brief["headline"], brief["cards"]["brief"]["sub"], decided["headline"]):
        assert "next check" not in words and "nudge" in words, words
    thread = narrate({**HEALTHY, "chain": {"chain_open": False, "brief_id": "b1"}}, NOW)
    assert "slept on at the next check" in thread["headline"], thread["headline"]      # a clock ticks: it is true


def test_a_night_without_a_brief_that_ran_out_of_its_budget_is_not_said_to_keep_one():
    """Found: a sleep by hand without a brief (without_brief) stopped by sleep.budget read 'Its brief and undrafted
    fragments are kept' on /status and '...; the brief stays open' on its card: there was none."""
    from hippocampus.status.lists import sleep_words

    budget = {"reason": "the night made 2 model calls, all that sleep.budget.calls (2) allows",
              "rest_until": NOW + 3600, "undrafted": [{"topic": "tea", "fragments": 3}]}
    for brief_id in (None, "b1"):
        last = {"budget": budget, "finished_at": NOW - 60, "brief_id": brief_id}
        said = [narrate({**HEALTHY, "last_sleep": last}, NOW)["headline"], sleep_words(last),
                sleep_words({**last, "draft_id": "d1", "operations": 2})]
        for words in said:
            assert ("brief" in words) is (brief_id is not None), words


def test_with_no_clock_of_its_own_a_sleep_that_failed_on_the_model_is_retried_at_the_next_nudge():
    """Found: in external mode the headline after the model came back said 'the next check sleeps on the same
    brief': no check comes until a nudge (or Sleep now)."""
    last = {"error": "the model did not answer", "finished_at": NOW - 60, "brief_id": "b1"}
    back = {"answering": True, "checked_at": NOW - 5}
    external = narrate({**HEALTHY, "mode": "external", "last_sleep": last, "model_health": back}, NOW)["headline"]
    assert "next check" not in external and "next nudge" in external, external
    thread = narrate({**HEALTHY, "last_sleep": last, "model_health": back}, NOW)["headline"]
    assert "the next check sleeps on the same brief" in thread, thread


@pytest.mark.parametrize("misses,when", [(0, "in 3 checks"), (1, "in 2 checks"), (2, "at the next check"),
                                         (5, "at the next check")])
def test_with_brief_pull_on_past_bedtime_says_the_small_model_writes_the_brief_and_when(misses, when):
    """Found: with sleep.brief_pull on, past bedtime /status said 'the sleep starts once the main model writes
    one' (or only 'Waiting for a brief from the main model'), though at the brief_check_misses-th check without one
    the small model writes a brief from the fragments and sleeps on it: a person waits for what is not needed."""
    pull = {**HEALTHY, "bedtime_at": NOW - 60, "brief_misses": misses, "brief_pull_after": 3}
    for s in (pull, {**pull, "brief_wanted": True, "brief_requested_at": NOW - 60}):
        said = narrate(s, NOW)["headline"]
        assert f"the small model writes one from the fragments {when}" in said, said
    off = narrate({**pull, "brief_pull_after": None}, NOW)["headline"]
    assert "small model" not in off and "once the main model writes one" in off, off
    nudged = narrate({**pull, "mode": "external", "brief_misses": 2}, NOW)["headline"]
    assert "at the next nudge" in nudged, nudged


def test_status_carries_when_the_brief_pull_comes_as_the_settings_say():
    from hippocampus import config as cm
    from hippocampus.status.read import sleep_settings

    on = cm.build({"sleep": {"brief_pull": True, "brief_check_misses": 4}}, environ={}).sleep
    assert sleep_settings(on)["brief_pull_after"] == 4
    assert sleep_settings(cm.build({}, environ={}).sleep)["brief_pull_after"] is None


def test_a_failed_sleep_waiting_before_its_next_try_says_until_when_not_the_next_check():
    """A failed sleep's brief waits (doubling from the check interval up to 4 h) before a check tries it again;
    the headline said 'Its brief is kept for the next check' all through the wait."""
    last = {"error": "Memory refused the draft: HTTP 422", "finished_at": NOW - 60, "brief_id": "b1",
            "failures": 2, "next_try_at": NOW + 1200}
    said = narrate({**HEALTHY, "last_sleep": last}, NOW)["headline"]
    assert "for the next check" not in said, said
    assert f"until {hhmm(NOW + 1200)}" in said and "2 failures in a row" in said and "Sleep now" in said, said
    past = narrate({**HEALTHY, "last_sleep": {**last, "next_try_at": NOW - 5}}, NOW)["headline"]
    assert "for the next check" in past, past          # the wait is over: the next check tries it


def test_a_check_held_by_a_failed_sleeps_wait_is_worded_not_shown_as_its_key():
    from hippocampus.status.lists import check_words
    said = check_words({"status": "waiting_after_failure", "retry_at": NOW + 1200})
    assert "_" not in said and "failed" in said and "waits" in said, said


def test_the_brief_card_of_a_brief_waiting_after_its_failed_sleep_says_when_it_is_tried_again():
    last = {"error": "Memory refused the draft: HTTP 422", "finished_at": NOW - 60, "brief_id": "b1",
            "failures": 1, "next_try_at": NOW + 600}
    say = narrate({**HEALTHY, "last_sleep": last, "chain": {"chain_open": False, "brief_id": "b1"}}, NOW)
    card = say["cards"]["brief"]["sub"]
    assert "at the next check" not in card and hhmm(NOW + 600) in card, card
    other = narrate({**HEALTHY, "last_sleep": last, "chain": {"chain_open": False, "brief_id": "b2"}}, NOW)
    assert "at the next check" in other["cards"]["brief"]["sub"], other["cards"]["brief"]     # another brief: no wait
