"""The replay's pure parts: invented numbers, overlap, the quality report's columns, the scrub."""
from __future__ import annotations

import json

from hippocampus.replay import checks
from hippocampus.replay import quality
from hippocampus.store import scrub


# ---------------------------------------------------------------- invented numbers and dates

def test_a_number_no_fragment_has_is_invented_one_a_fragment_has_is_not():
    shown = ["we met in 1992 at the lake", "the lake house had 3 rooms"]
    ops = [{"content": "We met in 1992 by the lake; it had 3 rooms and was built in 1987"}]
    assert checks.invented_numbers(ops, shown) == ["1987"]


def test_dates_are_tokens_and_their_parts_count_as_shown():
    shown = ["the walk (2026-03-01)"]
    assert checks.invented_numbers([{"content": "On 2026-03-01 we walked, in 2026, on the 1st"}], shown) == []
    assert checks.invented_numbers([{"content": "On 2026-03-02 we walked"}], shown) == ["2026-3-2"]


def test_normalised_forms_match_and_marker_digits_are_not_numbers():
    assert checks.numbers("f1 and c2 cost 1,000 or 03 at 12:30") == ["1000", "3", "12:30"]
    assert checks.invented_numbers([{"content": "it cost 1000", "restated_content": "about 7"}],
                                   ["it cost 1,000"]) == ["7"]


def test_a_decimal_s_zeros_after_the_point_count():
    """Found: 0.05 was read as 0.5, so the quality report's invented-number rate missed a dose ten times off
    (the guard reads a decimal whole too)."""
    shown = ["the doctor said 0.5 mg of melatonin"]
    assert checks.invented_numbers([{"content": "0.05 mg of melatonin"}], shown) == ["0.05"]
    assert checks.invented_numbers([{"content": "0.5 mg, or 0,5 mg"}], shown) == []


def test_a_huge_digit_run_never_raises():
    assert checks.numbers("1" * 6000) == ["1" * 6000]


def test_shown_texts_take_the_fragment_dates_cores_and_a_redrafts_critique():
    call = {"stage": "redraft", "critique": "say: in 1999", "entries": [{"content": "x", "ts": 0}],
            "candidates": [{"content": "core 42", "via": "episode 7"}]}
    assert checks.invented_numbers([{"content": "1999 1970-01-01 42 7 8"}], checks.shown_texts(call)) == ["8"]
    call["stage"] = "draft"
    assert checks.invented_numbers([{"content": "1999"}], checks.shown_texts(call)) == ["1999"]


# ---------------------------------------------------------------- overlap

def test_overlap_is_the_best_jaccard_per_operation_averaged():
    landed = ["the rose garden bloomed early", "tea on the porch"]
    ops = [{"content": "the rose garden bloomed early"}, {"content": "tea on the porch every day"}]
    assert checks.overlap_landed(ops, landed) == round((1.0 + 4 / 6) / 2, 3)
    assert checks.overlap_landed([], landed) is None and checks.overlap_landed(ops, []) is None


def test_a_side_counts_failed_and_cut_off_calls():
    calls = [{"ops": [{"content": "in 1987"}], "shown": [], "cut_off": True, "seconds": 1.5},
             {"ops": [], "error": "HTTP 500", "seconds": 0.5}, {"ops": [], "failure": "not JSON", "seconds": 0}]
    s = checks.side(calls, ["in 1987"])
    assert {k: s[k] for k in ("calls", "valid", "failed_calls", "cut_off", "invented", "seconds",
                              "overlap_landed")} == {"calls": 3, "valid": 1, "failed_calls": 2, "cut_off": 1,
                                                     "invented": 1, "seconds": 2.0, "overlap_landed": 1.0}


# ---------------------------------------------------------------- the quality report

def draft(did, attempt, ops, *, status="reviewed", terminal=False, cluster="c", extra=None):
    return {"id": did, "cluster_id": cluster, "attempt": attempt, "terminal": terminal, "status": status,
            "created_at": attempt, "extra": extra or {"model_mode": "model", "model_name": "m"},
            "operations": [{"index": i, **op} for i, op in enumerate(ops)]}


def test_each_lineage_lands_in_one_column():
    drafts = [
        draft("a1", 1, [{"status": "approved"}, {"status": "denied", "critique": "too thin"},
                        {"status": "denied", "critique": "wrong garden"}, {"status": "denied", "critique": "no"},
                        {"status": "denied", "critique": "vague again"}]),
        draft("a2", 2, [{"status": "approved", "redraft_of": 1}, {"status": "denied", "redraft_of": 2,
                                                                 "critique": "garden still off"},
                        {"status": "pending", "redraft_of": 4}], status="pending"),
    ]
    rep = quality.report(drafts, [], now=5.0)
    [g] = rep["groups"]
    # a1 op 3 was not redrafted in a2 (withdrawn): denied to the end; a2 op 1 waits for its redraft;
    # a2 op 2 is under review
    assert {k: g[k] for k in quality.COLUMNS} == {"proposed": 5, "approved_first": 1, "approved_after_redraft": 1,
                                                  "approved_edited": 0, "denied_to_end": 1, "waiting": 2}
    assert g["critique_words"][0] == ["garden", 2]


def test_a_terminal_denial_is_denied_to_the_end_and_an_edit_is_an_edit():
    drafts = [draft("t", 1, [{"status": "denied", "critique": "no"},
                             {"status": "approved", "edited_content": "fixed"}], terminal=True)]
    g = quality.report(drafts, [], now=1.0)["groups"][0]
    assert (g["denied_to_end"], g["approved_edited"], g["approved_first"]) == (1, 1, 0)


def test_groups_are_per_model_name_and_voice_version_with_the_packets_rates():
    drafts = [draft("x", 1, [{"status": "approved"}], cluster="x",
                    extra={"model_mode": "model", "model_name": "qwen", "model_voice": 2}),
              draft("y", 1, [{"status": "approved"}], cluster="y",
                    extra={"model_mode": "model", "model_name": "qwen"}),
              draft("z", 1, [{"status": "approved"}], cluster="z", extra={"model_mode": "mechanical"})]
    packet = {"draft_id": "x", "stamp": {"model_name": "qwen", "model_voice": 2},
              "calls": [{"cut_off": True, "entries": [{"content": "in 1990"}], "ops": [{"content": "in 1987"},
                                                                                      {"content": "in 1990"}]},
                        {"cut_off": False, "ops": []}]}
    rep = quality.report(drafts, [quality.summarize_packet(packet)], now=1.0)
    by = {(g["model"], g["voice"]): g for g in rep["groups"]}
    assert set(by) == {("qwen", 2), ("qwen", None), ("(mechanical)", None)}
    g = by[("qwen", 2)]
    assert (g["calls"], g["cut_off_rate"], g["ops_checked"], g["invented_rate"]) == (2, 0.5, 2, 0.5)
    assert by[("qwen", None)]["cut_off_rate"] is None
    assert "qwen (card v2): 1 proposed; 1 approved on the first attempt" in quality.sentence(rep)


# ---------------------------------------------------------------- the scrub

def test_a_scrub_removes_every_form_of_the_text_and_keeps_ids():
    secret = 'the "blue" door at  number 9'
    packet = {"draft_id": "d", "operations": [{"content": secret, "rationale": "why", "source_short_ids": ["s1"]}],
              "calls": [{"prompt": "[f1] " + " ".join(secret.split()) + " (2026-01-01)\nother",
                         "answer": json.dumps({"operations": [{"content": secret}]}),
                         "entries": [{"marker": "f1", "id": "s1", "content": secret}], "candidates": [],
                         "ops": [{"content": secret}]}]}
    texts, frags = scrub.what_to_remove([packet], {"core"}, [
        {"id": "d", "operations": [{"index": 0, "long_term_id": "core", "source_short_ids": ["s1"]}]}])
    assert secret in texts and frags == {"s1"}
    assert scrub.scrub_packet(packet, {"core"}, texts, frags, 7.0, 600) is True
    raw = json.dumps(packet)
    assert "blue" not in raw and "number 9" not in raw
    assert packet["calls"][0]["entries"][0] == {"marker": "f1", "id": "s1", "content": "[purged]"}
    assert packet["operations"][0] == {"content": "[purged]", "source_short_ids": ["s1"]}
    assert packet["purges"] == [{"ids": ["core"], "at": 7.0, "note": scrub.NOTE}]
    assert scrub.scrub_packet(packet, {"core"}, texts, frags, 8.0, 600) is False     # once is enough
