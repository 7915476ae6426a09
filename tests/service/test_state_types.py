"""A hand-edited state.json with a value of the wrong type ("closing": 5, a list where a mapping belongs) is read
as far as it is sound: the value is named in the log and on /status (the file, the key, what to do) and read as
absent; the rest of the file is kept, and the file as it was is kept beside it before the next write replaces it."""
from __future__ import annotations

import json

import requests

from hippocampus.store.state import DEFAULTS

ROWS = [{"kind": "tend", "at": 1_700_000_000.0, "outcome": "nothing_to_do"},
        {"kind": "sleep", "at": 1_700_000_100.0, "outcome": "slept"}]


def test_a_value_of_the_wrong_type_is_named_and_read_as_absent_and_the_rest_is_kept(
        make_config, start_service, caplog):
    cfg = make_config()
    path = cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, mode=0o700)
    edited = {"closing": 5, "submitting": 7, "brief_misses": "x", "lifecycle": ["a", "list"],
              "history": ROWS, "last_sleep_ok_at": 1_700_000_100.0, "ended_chains": ["c1"]}
    path.write_text(json.dumps(edited), encoding="utf-8")
    svc = start_service(cfg)
    for _ in range(2):                                      # two ticks: neither fails
        r = requests.post(svc.url + "/check", timeout=60)
        assert r.status_code == 200, r.text
    faults = [r.getMessage() for r in caplog.records if "unexpected fault" in r.getMessage() or r.exc_info]
    assert faults == []
    st = requests.get(svc.url + "/status", timeout=5).json()
    said = st["state_error"] or ""
    for key in ("closing", "submitting", "brief_misses", "lifecycle"):
        assert f"'{key}'" in said, said
        assert any(str(path) in r.getMessage() and f"'{key}'" in r.getMessage() for r in caplog.records)
    assert str(path) in said and "read as absent" in said
    assert said.lower() in st["explain"].lower()
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert kept["history"][:2] == ROWS and kept["last_sleep_ok_at"] == 1_700_000_100.0
    assert kept["ended_chains"] == ["c1"] and kept["closing"] == DEFAULTS["closing"]
    copies = list(path.parent.glob("state.json.corrupt-*"))       # what the file held, named where the words say
    assert len(copies) == 1 and str(copies[0]) in said, said
    assert json.loads(copies[0].read_text(encoding="utf-8")) == edited


def test_history_rows_and_cull_records_that_are_not_mappings_are_dropped_and_named(make_config, start_service,
                                                                                  caplog):
    cfg = make_config()
    path = cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, mode=0o700)
    edited = {"history": [ROWS[0], 5, "a note", ROWS[1]], "closing": {"c1": 5}, "ended_chains": ["c9"]}
    path.write_text(json.dumps(edited), encoding="utf-8")
    svc = start_service(cfg)
    for route in ("/check", "/tend", "/check"):            # a tend reads the cull records and writes history
        r = requests.post(svc.url + route, timeout=60)
        assert r.status_code == 200, r.text
    faults = [r.getMessage() for r in caplog.records if "unexpected fault" in r.getMessage() or r.exc_info]
    assert faults == []
    said = requests.get(svc.url + "/status", timeout=5).json()["state_error"] or ""
    assert "'history' holds 2 entries that are not a mapping" in said and "'closing' holds 1 entry" in said, said
    kept = json.loads(path.read_text(encoding="utf-8"))
    assert kept["history"][:2] == ROWS and kept["ended_chains"] == ["c9"] and kept["closing"] == {}
    copies = list(path.parent.glob("state.json.corrupt-*"))
    assert len(copies) == 1 and json.loads(copies[0].read_text(encoding="utf-8")) == edited


def test_an_event_line_whose_time_or_count_is_not_a_number_is_skipped_not_a_500(make_config, start_service, caplog):
    cfg = make_config()
    path = cfg.sleep.resolved_state_path().with_name("events.jsonl")
    path.parent.mkdir(parents=True, mode=0o700)
    lines = [{"type": "sleep_done", "seq": 1, "at": 1_700_000_000.0, "operations": 2},
             {"type": "nudged", "seq": 2, "at": 1_700_000_001.0, "count": "many", "last_at": 1_700_000_002.0},
             {"type": "draft_submitted", "seq": 3, "at": "yesterday", "draft_id": "d-1"},
             {"patch": 1, "set": {"count": "lots"}},
             {"type": "chain_closed", "seq": 4, "at": 1_700_000_003.0, "cluster_id": "c"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    svc = start_service(cfg)
    r = requests.get(svc.url + "/events?limit=10", timeout=10)
    assert r.status_code == 200, r.text
    seqs = [e["seq"] for e in r.json()["entries"]]
    assert 1 in seqs and 4 in seqs and 2 not in seqs and 3 not in seqs, seqs
    assert "count" not in next(e for e in r.json()["entries"] if e["seq"] == 1)
    assert any("3 unreadable line(s)" in m.getMessage() and str(path) in m.getMessage() for m in caplog.records)


def test_parked_briefs_that_are_not_ids_are_dropped_and_named_not_a_failed_check_on_every_tick(make_ctx, caplog):
    """A parked brief edited by hand to something that is no id (a mapping) failed every check ("unhashable type:
    'dict'"): no sleep came. Like a history row that is not a mapping, it is dropped and named; the rest is kept."""
    import logging

    from hippocampus.cycle import executor

    ctx = make_ctx()
    path = ctx.cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps({"parked_briefs": [{"id": "b0"}, "b1", 7], "ended_chains": ["c1", ["c2"]]}))
    with caplog.at_level(logging.ERROR, logger="hippocampus"):
        ctx = make_ctx(ctx.cfg)
        checked = executor.check(ctx).to_dict()
    assert checked["status"] != "error" and not checked["error"], checked
    said = ctx.state.view()["write_error"] or ""
    assert "'parked_briefs' holds 2 entries that are not an id" in said, said
    assert "'ended_chains' holds 1 entry that is not an id" in said, said
    assert ctx.state.get("parked_briefs") == ["b1"] and ctx.state.get("ended_chains") == ["c1"]


def test_a_hand_edited_submitting_record_missing_its_draft_is_read_as_none_and_named(make_ctx):
    """A "submitting" record edited by hand to lack its draft_id (or with a draft id that is a list) failed every
    check and every tend (KeyError 'draft_id'): no sleep came. It is read as none and named; the rest is kept."""
    from hippocampus.cycle import executor

    ctx = make_ctx()
    path = ctx.cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps({"submitting": {"brief_id": "b1", "operations": 2}, "ended_chains": ["c1"]}))
    ctx = make_ctx(ctx.cfg)
    checked, tended = executor.check(ctx).to_dict(), executor.tend(ctx).to_dict()
    assert checked["status"] != "error" and not checked["error"] and not tended["error"], (checked, tended)
    said = ctx.state.view()["write_error"] or ""
    assert "'submitting' holds a record whose draft_id is missing, cluster_id is missing, read as none" in said, said
    assert ctx.state.get("submitting") is None and ctx.state.get("ended_chains") == ["c1"]


def test_reports_whose_times_or_words_are_edited_to_another_kind_are_read_as_absent_not_a_500(
        make_config, start_service, caplog):
    """The last sleep, tend and check, and the chain given up on, edited by hand so that a time is words or an
    error is a list: every GET /status answered 500 ("unsupported operand type(s) for -: 'float' and 'str'",
    "expected string or bytes-like object"). Each such report is read as absent and named; /status answers."""
    cfg = make_config()
    path = cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, mode=0o700)
    edited = {"last_check": {"status": "other_copy", "at": "yesterday"},
              "last_sleep": {"error": ["e"], "finished_at": 5, "budget": "spent"},
              "last_tend": {"started_at": "noon", "kind": "tend"}, "gave_up": {"said": ["x"], "at": 1.0},
              "history": ROWS}
    path.write_text(json.dumps(edited), encoding="utf-8")
    svc = start_service(cfg)
    r = requests.get(svc.url + "/status", timeout=10)
    assert r.status_code == 200, r.text
    said = r.json()["state_error"] or ""
    for key, why in (("last_check", "at is a text where a time belongs, read as absent"),
                     ("last_sleep", "error is a list where words belong, budget is a text where a mapping "
                                    "belongs, read as absent"),
                     ("last_tend", "started_at is a text where a time belongs, read as absent"),
                     ("gave_up", "said is a list where words belong, read as absent")):
        assert f"'{key}' holds a report whose " in said and why in said, said
    assert json.loads(path.read_text(encoding="utf-8"))["history"][:2] == ROWS
    faults = [m.getMessage() for m in caplog.records if "unexpected" in m.getMessage() or m.exc_info]
    assert faults == []


def test_reports_whose_parts_are_words_where_a_mapping_belongs_are_read_as_absent_not_a_500(
        make_config, start_service, caplog):
    """A last check naming its other copy as words ("other": "z"), a last sleep whose budget is words: every GET
    /status answered 500 ("'str' object has no attribute 'get'"). Each is read as absent and named."""
    cfg = make_config()
    path = cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, mode=0o700)
    edited = {"last_check": {"status": "other_copy", "other": "z", "at": 1.0},
              "last_sleep": {"budget": "spent", "started_at": 1.0, "kept_back": {"a": 1}}}
    path.write_text(json.dumps(edited), encoding="utf-8")
    svc = start_service(cfg)
    r = requests.get(svc.url + "/status", timeout=10)
    assert r.status_code == 200, r.text
    said = r.json()["state_error"] or ""
    assert "'last_check' holds a report whose other is a text where a mapping belongs, read as absent" in said, said
    assert ("'last_sleep' holds a report whose budget is a text where a mapping belongs, kept_back is a mapping "
            "where a list belongs, read as absent") in said, said
    assert [m.getMessage() for m in caplog.records if "unexpected" in m.getMessage() or m.exc_info] == []


def test_history_rows_whose_parts_are_of_another_kind_are_dropped_and_named_not_a_500(make_config, start_service,
                                                                                     caplog):
    """History rows edited by hand so that a budget is words, a guard a number or what interrupted it a list made
    every GET /history answer 500. Those rows are dropped and named; the sound ones are kept and shown."""
    cfg = make_config()
    path = cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, mode=0o700)
    odd = [{"kind": "sleep", "at": 1.0, "budget": "x"}, {"kind": "sleep", "at": 1.0, "guard": 5},
           {"kind": "sleep", "interrupted": ["x"], "other": {"pid": 1}}]
    path.write_text(json.dumps({"history": [ROWS[0]] + odd + [ROWS[1]]}), encoding="utf-8")
    svc = start_service(cfg)
    r = requests.get(svc.url + "/history", timeout=10)
    assert r.status_code == 200, r.text
    said = requests.get(svc.url + "/status", timeout=10).json()["state_error"] or ""
    assert ("'history' holds 3 rows whose parts are of another kind (budget is a text where a mapping belongs), "
            "dropped") in said, said
    assert [m.getMessage() for m in caplog.records if "unexpected" in m.getMessage() or m.exc_info] == []
