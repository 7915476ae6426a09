"""Forged notes in the real SerenMemory against the running service (issue 38, items 2, 3 and 5, and the fuzz):
/status never depends on one note, a sleep by hand that meets another copy's claim answers who and until when
(POST /sleep and MCP sleep_now alike), and whatever is forged, /status answers and a waiting brief is slept
within the longest time a note can hold it."""
from __future__ import annotations

import os
import socket
import time
import uuid

import pytest
import requests
from hypothesis import HealthCheck, given, settings, strategies as st

from hippocampus.cycle import claims, notes
from hippocampus.memory import MemoryClient, MemoryError_
from tests.contract.test_forged_notes import YEAR, copy_fields, dead_pid, forge
from tests.harness.clock import FakeClock
from tests.service.test_mcp import AUTH, BEARER, call_tools
from tests.service.test_tend import seed

# the longest a note that passes every rule can hold a brief after it is first read (its created_at, which a note's
# own fields can set, may be up to the skew ahead of now)
LONGEST_HOLD = notes.MAX_LEASE_SECONDS + 2 * notes.CLOCK_SKEW_SECONDS


def status(base: str) -> dict:
    r = requests.get(base + "/status", headers=AUTH, timeout=10)
    assert r.status_code == 200, (r.status_code, r.text[:400])
    return r.json()


def post(base: str, path: str) -> dict:
    r = requests.post(base + path, headers=AUTH, timeout=60)
    assert r.status_code == 200, (r.status_code, r.text[:400])
    return r.json()


@pytest.mark.parametrize("slept_at", [1e300, "2093"])
def test_a_forged_slept_note_leaves_status_answering_and_bedtime_where_it_was(make_config, start_service, memory,
                                                                              slept_at):
    """Item 3: 1e300 made every GET /status a 500 (and MCP sleep_status an error); item 2: 2093 made it
    'Quiet and healthy; bedtime in 24348 days', and nothing slept."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    at = time.time() + 67 * YEAR if slept_at == "2093" else slept_at
    forge(memory.url, claims.SLEPT_TOPIC, copy_fields(slept_at=at))
    checked = post(svc.url, "/check")                      # the first check is past bedtime: it reads the note
    s = status(svc.url)                                    # was a 500 with 1e300
    assert checked["status"] == "waiting_for_brief" and checked["error"] is None, checked
    assert s["bedtime_at"] <= time.time(), s["bedtime_at"]
    assert "days" not in s["say"]["headline"] and "Quiet and healthy" not in s["say"]["headline"], s["say"]
    assert s["say"]["cards"]["bedtime"]["main"] == "Now", s["say"]["cards"]["bedtime"]
    assert requests.get(svc.url + "/", headers=AUTH, timeout=10).status_code == 200      # the viewer
    out = call_tools(svc.url + "/mcp", [("sleep_status", {})])
    assert out[0]["ok"] is True and out[0]["say"] == s["say"]["headline"], out[0]


def test_a_sleep_by_hand_while_another_copy_holds_the_brief_answers_who_and_until(make_config, make_ctx,
                                                                                  start_service, hand, tmp_path):
    """Item 5: POST /sleep answered 500 (AttributeError in sleep_by_hand) whenever another copy held the brief."""
    svc = start_service(make_config(server={"bearer_token": BEARER}))
    other = make_ctx(sleep={"state_path": str(tmp_path / "other" / "state.json")})
    brief = seed(hand)
    held = claims.claim(other, f"brief:{brief}", f"sleeps on brief {brief}")
    until = time.strftime("%H:%M", time.localtime(held.note["until"]))
    answer = post(svc.url, "/sleep")
    assert answer["status"] == "other_copy" and answer["refused"] is True, answer
    words = answer["say"]["text"]
    assert words == (f"Nothing started: another copy of seren-hippocampus (pid {os.getpid()} on "
                     f"{socket.gethostname()}, state folder {(tmp_path / 'other').resolve()}) sleeps on brief "
                     f"{brief} until {until}, so this copy started nothing (two copies on one Memory take turns; "
                     "stop one of them unless you meant to run both)."), words
    out = call_tools(svc.url + "/mcp", [("sleep_now", {})])
    assert out[0] == {"is_error": True, "text": words}, out[0]             # MCP: an error, in the same words
    assert hand.drafts("pending") == []
    held.release()
    assert post(svc.url, "/sleep")["draft_id"]                              # let go: a sleep by hand drafts


# ------------------------------------------------------------------ the fuzz
NOW_KEYS = {"now": 0.0, "past": -3600.0, "soon": 600.0, "lease": notes.MAX_LEASE_SECONDS,
            "just_over": notes.MAX_LEASE_SECONDS + 2 * notes.CLOCK_SKEW_SECONDS, "2093": 67 * YEAR,
            "2096": 70 * YEAR, "long_ago": -10 * YEAR}
TIMES = st.one_of(
    st.sampled_from(sorted(NOW_KEYS)).map(lambda k: ("rel", NOW_KEYS[k])),
    st.floats(min_value=-1e10, max_value=1e10, allow_nan=False).map(lambda v: ("rel", v)),
    st.sampled_from([1e300, -1e300, -1.0, 0, 10 ** 30, 2 ** 63, "NaN", "inf", "never", "", None, True, [1],
                     {"at": 1}, "1800000000"]).map(lambda v: ("abs", v)),
)
PIDS = st.sampled_from(["mine", "dead", 1, 0, -1, notes.MAX_PID + 1, 10 ** 30, "123", None, True, 2.5])
HOSTS = st.sampled_from(["here", "elsewhere", "", None, 7])
GENS = st.sampled_from([0, 1, 3, -1, notes.MAX_GEN, 2 ** 40, "0", 1.5, None, True])
COPIES = st.sampled_from(["other", "this_copy", "", None, 5])
# None: Memory's own stamp. Numbers only: a created_at that is no number (a string) makes SerenMemory's own
# GET /near a 500 for everyone (it sorts by it), which no reader of Memory can help
CREATED = st.one_of(st.just(None), st.sampled_from(sorted(NOW_KEYS)).map(lambda k: ("rel", NOW_KEYS[k])),
                    st.sampled_from([1e300, -1e300, -1.0, 0, 10 ** 30, 2 ** 63]).map(lambda v: ("abs", v)))
# a claim as a live copy writes it (it holds the brief for its lease), with up to three fields forged
VALID = {"kind": "claim", "key": "brief", "gen": 0, "id": "right", "pid": "mine", "host": "here", "copy": "other",
         "time": ("rel", 600.0), "created_at": None, "what": "sleeps on it"}
FORGED = {"kind": st.just("slept"), "key": st.sampled_from(["other", None]), "gen": GENS,
          "id": st.sampled_from(["next", "random", "memory"]), "pid": PIDS, "host": HOSTS, "copy": COPIES,
          "time": TIMES, "created_at": CREATED, "what": st.sampled_from(["", None, 3])}


@st.composite
def forged_note(draw) -> dict:
    fields = draw(st.lists(st.sampled_from(sorted(FORGED)), max_size=3, unique=True))
    return {**VALID, **{f: draw(FORGED[f]) for f in fields}}


def _time(spec, now: float):
    how, v = spec
    return now + v if how == "rel" else v


def _forge_one(url: str, spec: dict, brief: str, mine: dict, dead: int, now: float) -> None:
    key = {"brief": f"brief:{brief}", "other": "brief_request", None: None}[spec["key"]]
    fields = {"copy": {"other": uuid.uuid4().hex, "this_copy": mine["copy"]}.get(spec["copy"], spec["copy"]),
              "pid": {"mine": os.getpid(), "dead": dead}.get(spec["pid"], spec["pid"]),
              "host": {"here": socket.gethostname()}.get(spec["host"], spec["host"]), "folder": "/elsewhere"}
    if spec["created_at"] is not None:
        fields["created_at"] = _time(spec["created_at"], now)
    gen = spec["gen"]
    slot = gen if isinstance(gen, int) and not isinstance(gen, bool) and 0 <= gen < notes.MAX_GEN else 0
    if spec["kind"] == "slept":
        topic, fields["slept_at"] = claims.SLEPT_TOPIC, _time(spec["time"], now)
        note_id = None
    else:
        topic = claims.CLAIM_TOPIC
        fields.update(claim=key, gen=gen, what=spec["what"], until=_time(spec["time"], now))
        note_id = {"right": notes.note_id(key or "", slot), "next": notes.note_id(key or "", slot + 1),
                   "random": uuid.uuid4().hex, "memory": None}[spec["id"]]
    try:
        forge(url, topic, fields, note_id)
    except MemoryError_:
        pass                                  # Memory refused it: nothing forged


def test_fuzz_forged_notes_never_break_status_nor_keep_a_brief_from_its_sleep(make_config, start_service, memory,
                                                                            hand):
    clock = FakeClock(time.time())
    svc = start_service(make_config(server={"bearer_token": BEARER}, sleep={"interval_seconds": 3600}),
                        clock=clock)
    ctx, mem, dead = svc.runtime.ctx, MemoryClient(memory.url), dead_pid()
    mine = claims.me(ctx)
    examples: list = []

    @settings(max_examples=35, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(forged=st.lists(forged_note(), min_size=1, max_size=4))
    def one(forged: list) -> None:
        clock.set(time.time())                # this example's notes are stamped by Memory's clock
        ctx.state.set(last_sleep_ok_at=None, memory_slept_at=None, first_check_at=None, brief_misses=0)
        for n in hand.near():
            mem.delete_near(n["id"])
        brief = hand.brief(f"example {len(examples)}: what mattered")
        now = time.time()
        for spec in forged:
            _forge_one(memory.url, spec, brief, mine, dead, now)
        status(svc.url)
        checked = post(svc.url, "/check")
        status(svc.url)
        if checked["status"] == "other_copy":      # a note well-formed enough to hold it: for one lease at most
            clock.advance(LONGEST_HOLD + 1)
            checked = post(svc.url, "/check")
        assert checked["status"] == "sleeping", (forged, checked)
        assert not checked["sleep"]["error"] and not checked["sleep"]["interrupted"], (forged, checked)
        s = status(svc.url)
        assert s["bedtime_at"] <= clock.now() + 3600 + notes.CLOCK_SKEW_SECONDS, (forged, s["bedtime_at"])
        examples.append(forged)

    t0 = time.monotonic()
    one()
    assert len(examples) >= 30, len(examples)
    assert time.monotonic() - t0 < 90, time.monotonic() - t0
