"""The tick's one decision, as a table: each situation of the brief's loop -> the steps, in order."""
from __future__ import annotations

import datetime as dt

import pytest

from hippocampus import config as cm
from hippocampus.cycle import decide as d
from hippocampus.cycle.snapshot import Snapshot

NOW = 1_800_000_000.0
HOUR = 3600.0


def kinds(steps: list) -> list:
    return [s.kind for s in steps]


def sleep_cfg(**kw):
    return cm.build({"sleep": {"interval_seconds": 6 * HOUR, "brief_check_misses": 3, **kw}}, environ={}).sleep


def op(status="pending"):
    return {"kind": "new_core", "content": "x", "status": status, "source_short_ids": ["s1"]}


def draft(id_, status, ops, attempt=1, cluster=None, brief=None, terminal=False, at=NOW - HOUR):
    return {"id": id_, "cluster_id": cluster or id_, "attempt": attempt, "status": status, "operations": ops,
            "terminal": terminal, "brief_id_used": brief, "created_at": at}


def brief(id_, at=NOW - 60):
    return {"id": id_, "content": "what mattered", "metadata": {"created_at": at}}


UNDER_REVIEW = draft("d1", "pending", [op()], brief="b1")
LANDED = draft("d1", "reviewed", [op("approved")], brief="b1")
DENIED = draft("d1", "reviewed", [op("approved"), op("denied")], brief="b1")
DENIED_TERMINAL = draft("d1", "reviewed", [op("denied")], brief="b1", terminal=True, attempt=3)
SLEPT = {"last_sleep_ok_at": NOW - HOUR}          # bedtime is five hours away
OVERDUE = {"last_sleep_ok_at": NOW - 7 * HOUR}    # bedtime passed an hour ago
HAND = d.Asked(tend=False, check=False, by_hand=True)   # POST /sleep

ROWS = [
    # (situation, drafts, briefs, state, asked, expected kinds)
    ("nothing to do before bedtime", [], [], SLEPT, d.Asked(), [d.PURGE, d.NOT_BEDTIME]),
    ("a store that never slept is due now", [], [], {}, d.Asked(), [d.PURGE, d.MISS]),
    ("past bedtime with no brief", [], [], OVERDUE, d.Asked(), [d.PURGE, d.MISS]),
    ("a brief waits and no chain is open", [], [brief("b2")], SLEPT, d.Asked(), [d.PURGE, d.SLEEP]),
    ("a brief waits while a chain is under review", [UNDER_REVIEW], [brief("b2")], SLEPT, d.Asked(),
     [d.PURGE, d.WAIT_CHAIN]),
    ("the chain's own brief is not a new one", [UNDER_REVIEW], [brief("b1")], OVERDUE, d.Asked(),
     [d.PURGE, d.WAIT_CHAIN]),
    ("a chain landed; its own brief is still open", [LANDED], [brief("b1")], SLEPT, d.Asked(),
     [d.PURGE, d.CLOSE, d.NOT_BEDTIME]),
    ("a chain landed and another brief waits", [LANDED], [brief("b2"), brief("b1")], SLEPT, d.Asked(),
     [d.PURGE, d.CLOSE, d.SLEEP]),
    ("denied operations, redraft now", [DENIED], [], SLEPT, d.Asked(redraft=True),
     [d.PURGE, d.REDRAFT, d.WAIT_CHAIN]),
    ("denied operations, not now", [DENIED], [], SLEPT, d.Asked(redraft=False), [d.PURGE, d.DEFER, d.WAIT_CHAIN]),
    ("tend cycle off: not sleep time yet", [DENIED], [], SLEPT, d.Asked(redraft=None),
     [d.PURGE, d.DEFER, d.WAIT_CHAIN]),
    ("tend cycle off: bedtime passed", [DENIED], [], OVERDUE, d.Asked(redraft=None),
     [d.PURGE, d.REDRAFT, d.WAIT_CHAIN]),
    ("tend cycle off: a new brief arrived", [DENIED], [brief("b2")], SLEPT, d.Asked(redraft=None),
     [d.PURGE, d.REDRAFT, d.WAIT_CHAIN]),
    ("the terminal attempt was denied: the chain ends", [DENIED_TERMINAL], [], SLEPT, d.Asked(),
     [d.PURGE, d.CLOSE, d.NOT_BEDTIME]),
    ("a submit cut short by a restart is finished first", [UNDER_REVIEW], [], {**SLEPT, "submitting": {"x": 1}},
     d.Asked(), [d.FINISH_SUBMIT, d.PURGE, d.WAIT_CHAIN]),
    ("a close cut short is finished, never started twice", [LANDED], [],
     {**SLEPT, "closing": {"d1": {"cluster_id": "d1"}}}, d.Asked(), [d.FINISH_CLOSE, d.PURGE, d.NOT_BEDTIME]),
    ("an ended chain's cut-short close is finished, never redrafted", [DENIED], [],
     {**SLEPT, "closing": {"d1": {"cluster_id": "d1"}}}, d.Asked(), [d.FINISH_CLOSE, d.PURGE, d.WAIT_CHAIN]),
    ("POST /tend: the chain part only", [LANDED, draft("d2", "reviewed", [op("denied")])], [brief("b2")], SLEPT,
     d.Asked(check=False), [d.CLOSE, d.REDRAFT]),
    ("POST /check: the gate part only", [LANDED], [brief("b2")], SLEPT, d.Asked(tend=False), [d.PURGE, d.SLEEP]),
    ("POST /sleep: a brief waits", [], [brief("b2")], SLEPT, HAND, [d.SLEEP]),
    ("POST /sleep: no brief, ask for one", [], [], SLEPT, HAND, [d.ASK_BRIEF]),
    ("POST /sleep without_brief: sleep unsteered", [], [], SLEPT, d.Asked(False, False, by_hand=True,
                                                                         ask_for_brief=False), [d.SLEEP]),
    ("POST /sleep: one cycle at a time", [UNDER_REVIEW], [brief("b2")], SLEPT, HAND, [d.WAIT_CHAIN]),
    ("POST /sleep: a cut-short submit is finished first", [UNDER_REVIEW], [], {**SLEPT, "submitting": {"x": 1}},
     HAND, [d.FINISH_SUBMIT, d.WAIT_CHAIN]),
]


@pytest.mark.parametrize("situation,drafts,briefs,state,asked,expected", ROWS, ids=[r[0] for r in ROWS])
def test_the_decision_table(situation, drafts, briefs, state, asked, expected):
    snap = Snapshot(at=NOW, drafts=tuple(drafts), briefs=tuple(briefs))
    assert kinds(d.decide(snap, state, sleep_cfg(), NOW, asked)) == expected


def test_the_sleep_step_names_the_new_brief_never_the_chains_own():
    snap = Snapshot(at=NOW, drafts=(LANDED,), briefs=(brief("b2", NOW - 10), brief("b1", NOW - 20)))
    sleep = [s for s in d.decide(snap, SLEPT, sleep_cfg(), NOW) if s.kind == d.SLEEP]
    assert [s.brief["id"] for s in sleep] == ["b2"]


def test_a_parked_brief_is_not_slept_on():
    snap = Snapshot(at=NOW, briefs=(brief("b2"),), parked=frozenset({"b2"}))
    assert kinds(d.decide(snap, SLEPT, sleep_cfg(), NOW)) == [d.PURGE, d.NOT_BEDTIME]


def test_the_brief_of_a_cull_in_flight_is_not_slept_on():
    """Killed with the chain's drafts closed and its brief not yet consumed: Memory shows no live chain and
    the brief open; the state's closing record still holds it (the tick that finishes the cull consumes it)."""
    snap = Snapshot(at=NOW, briefs=(brief("b2", NOW - 10), brief("b1", NOW - 20), brief("b0", NOW - 30)),
                    brief_times=(("b1", NOW - 20),), closing_briefs=frozenset({"b1"}))
    state = {**SLEPT, "closing": {"d1": {"cluster_id": "d1", "brief_id": "b1"}}}
    steps = d.decide(snap, state, sleep_cfg(), NOW)
    assert kinds(steps) == [d.FINISH_CLOSE, d.PURGE, d.SLEEP]
    assert steps[-1].brief["id"] == "b2"               # never b1 (its chain's), nor b0 (older: retired with it)
    alone = Snapshot(at=NOW, briefs=(brief("b1", NOW - 20),), closing_briefs=frozenset({"b1"}))
    assert kinds(d.decide(alone, state, sleep_cfg(), NOW)) == [d.FINISH_CLOSE, d.PURGE, d.NOT_BEDTIME]


def test_misses_ask_every_brief_check_misses_and_pull_only_when_asked_to():
    snap = Snapshot(at=NOW)
    asks = [d.decide(snap, {**OVERDUE, "brief_misses": n}, sleep_cfg(), NOW)[-1] for n in range(6)]
    assert [(s.misses, s.ask, s.pull) for s in asks] == [
        (1, False, False), (2, False, False), (3, True, False), (4, False, False), (5, False, False), (6, True, False)]
    pulled = d.decide(snap, {**OVERDUE, "brief_misses": 2}, sleep_cfg(brief_pull=True), NOW)[-1]
    assert (pulled.misses, pulled.pull) == (3, True)
    quiet = d.decide(snap, {**OVERDUE, "brief_misses": 2}, sleep_cfg(brief_request=False), NOW)[-1]
    assert quiet.ask is False


def test_with_sleep_at_a_store_that_never_slept_waits_for_the_first_hh_mm_after_its_first_check():
    first = dt.datetime(2026, 12, 1, 9, 0).timestamp()
    cfg = sleep_cfg(at="23:30")
    state = {"first_check_at": first}
    snap = Snapshot(at=first)
    assert kinds(d.decide(snap, state, cfg, first + HOUR)) == [d.PURGE, d.NOT_BEDTIME]
    late = dt.datetime(2026, 12, 1, 23, 31).timestamp()
    assert kinds(d.decide(snap, state, cfg, late)) == [d.PURGE, d.MISS]


def test_chain_open_is_review_or_redraft_never_a_landed_chain():
    assert Snapshot(at=NOW, drafts=(UNDER_REVIEW,)).chain_open
    assert Snapshot(at=NOW, drafts=(DENIED,)).chain_open
    assert not Snapshot(at=NOW, drafts=(LANDED,)).chain_open
    assert not Snapshot(at=NOW, drafts=(DENIED_TERMINAL,)).chain_open
    assert not Snapshot(at=NOW).chain_open


def test_a_brief_older_than_the_landing_chains_own_is_answered_by_it_not_slept_on():
    snap = Snapshot(at=NOW, drafts=(LANDED,), briefs=(brief("b1", NOW - 100), brief("b0", NOW - 500)))
    assert kinds(d.decide(snap, SLEPT, sleep_cfg(), NOW)) == [d.PURGE, d.CLOSE, d.NOT_BEDTIME]
    newer = Snapshot(at=NOW, drafts=(LANDED,), briefs=(brief("b2", NOW - 10), brief("b0", NOW - 500)),
                     brief_times=(("b1", NOW - 100),))
    assert [s.brief["id"] for s in d.decide(newer, SLEPT, sleep_cfg(), NOW) if s.kind == d.SLEEP] == ["b2"]
