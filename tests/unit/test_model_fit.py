"""model/fit.py's arithmetic and words: the three numbers and the fix, the -c to suggest, a server's 400
exceed_context_size_error read as a sentence, and what the narrator makes of a fit (headline, card row)."""
from __future__ import annotations

import pytest

from hippocampus import config as cm
from hippocampus.model import fit
from hippocampus.status.narrator import context_row
from hippocampus.status.narrator import narrate

NOW = 1_800_000_000.0
STATUS = {"memory": {"reachable": True, "url": "http://127.0.0.1:7420"}, "model_configured": True,
          "model_url": "http://127.0.0.1:8091/v1", "mode": "thread", "tick_seconds": 300, "tend_cycle": True,
          "tend_interval_seconds": 600, "interval_seconds": 72000, "bedtime_at": NOW + 4 * 3600,
          "actors": {}, "chain": {"chain_open": False}, "model_health": {"answering": True}}
NOT_FIT = {"n_ctx": 2048, "prompt_tokens": 3025, "max_tokens": 1024, "fits": False, "error": None}
FITS = {"n_ctx": 8192, "prompt_tokens": 3025, "max_tokens": 1024, "fits": True, "error": None}
UNKNOWN = {"n_ctx": None, "prompt_tokens": None, "max_tokens": 1024, "fits": None, "error": None}


def test_the_sentence_has_the_three_numbers_and_the_fix():
    assert fit.too_long(3025, 1024, 2048) == (
        "the prompt is 3,025 tokens and model.max_tokens is 1,024, but the server's context is 2,048 tokens: "
        "start the server with -c 4096 or more, or lower model.max_tokens / sleep.pile_max")


@pytest.mark.parametrize("prompt,cap,needed", [(3025, 1024, 4096), (3025, 1100, 5120), (3072, 1024, 4096), (1, 0, 1024),
                                               (600, 1024, 2048), (4000, 2000, 6144)])
def test_the_context_to_suggest_holds_the_prompt_and_the_cap_rounded_up_to_a_1024(prompt, cap, needed):
    assert fit.context_needed(prompt, cap) == needed
    assert needed >= prompt + cap and needed % 1024 == 0


def test_a_context_refusal_is_a_sentence_with_the_servers_numbers():
    body = {"error": {"code": 400, "message": "request (3025 tokens) exceeds the available context size "
                      "(512 tokens), try increasing it", "type": "exceed_context_size_error",
                      "n_prompt_tokens": 3025, "n_ctx": 512}}
    said = fit.refused(body, 1024)
    assert said == ("the model server refused the prompt: the prompt is 3,025 tokens and model.max_tokens is "
                    "1,024, but the server's context is 512 tokens: start the server with -c 4096 or more, or "
                    "lower model.max_tokens / sleep.pile_max")
    assert "{" not in said and "exceed_context_size_error" not in said


@pytest.mark.parametrize("body", [{"error": {"type": "invalid_request_error", "message": "bad"}}, {"detail": "x"},
                                  "text", None, {"error": "exceed_context_size_error"}])
def test_any_other_body_is_not_read_as_a_context_refusal(body):
    assert fit.refused(body, 1024) is None


def test_the_largest_prompt_grows_with_the_pile_and_is_the_drafting_prompt():
    small = cm.build({"sleep": {"pile_max": 2, "candidate_cores": 0}}, environ={})
    big = cm.build({"sleep": {"pile_max": 20, "candidate_cores": 8}}, environ={})
    p_small, p_big = fit.largest_pile(small)[0], fit.largest_pile(big)[0]
    assert "[f2]" in p_small and "[f3]" not in p_small and "(none)" in p_small
    assert "[f20]" in p_big and "[c8]" in p_big and "JSON:" in p_big
    assert len(p_big) > len(p_small) + 18 * 300


def test_measure_fits_only_when_prompt_and_cap_are_within_the_context():
    assert fit.fit_sentence(NOT_FIT).startswith("the largest prompt a sleep can send (a full pile) is 3,025 tokens")
    assert fit.fit_sentence(FITS) is None
    assert fit.fit_sentence(UNKNOWN) is None and fit.fit_sentence(None) is None


def test_a_prompt_that_does_not_fit_is_the_headline_and_the_card_points_there():
    say = narrate({**STATUS, "model_fit": NOT_FIT}, NOW)
    assert say["level"] == "bad"
    assert say["headline"].startswith("The model's context is too small: the largest prompt")
    for number in ("3,025", "1,024", "2,048", "-c 4096"):
        assert number in say["headline"]
    assert say["headline"].count("3,025") == 1
    assert ["context", "see above", "bad"] in say["cards"]["model"]["rows"]


def test_a_fit_or_an_unknown_context_says_nothing_wrong():
    for seen in (FITS, UNKNOWN):
        say = narrate({**STATUS, "model_fit": seen}, NOW)
        assert say["level"] == "ok" and "context" not in say["headline"]
        (row,) = [r for r in say["cards"]["model"]["rows"] if r[0] == "context"]
        assert row[2] != "bad"
    assert context_row(FITS) == ["context", "8,192 tokens: the largest prompt (3,025 tokens) and the room for "
                                            "its answer (1,024) fit", "good"]
    assert context_row(UNKNOWN)[1].startswith("unknown: the server does not say its context")
