"""model.write: auto by the measured grounding rate, as tables: a model whose written operations the guard mostly
dropped over its last free nights is made to choose (extractive), and says so; otherwise auto goes by its size."""
from __future__ import annotations

import pytest

from hippocampus.model import grounded, size

ME = grounded.model_key("smol", "http://127.0.0.1:8080/v1")
BY_SIZE = size.choose("auto", None)            # a server that does not say its size: free


def night(proposed, kept, mode="free", model=ME, kind="sleep") -> dict:
    return {"kind": kind, "write": {"mode": mode, "model": model, "proposed": proposed, "grounded": kept}}


@pytest.mark.parametrize("history, measured", [
    ([], {"proposed": 0, "grounded": 0, "nights": 0}),
    ([night(10, 2), night(20, 2)], {"proposed": 30, "grounded": 4, "nights": 2}),
    # extractive nights, other models, tends, rows from before the measure, nonsense: not counted
    ([night(10, 2), night(8, 8, mode="extractive"), night(9, 0, model="other http://x"), night(5, 0, kind="tend"),
      {"kind": "sleep"}, night("12", 0), night(-1, 0), night(True, 0)], {"proposed": 10, "grounded": 2, "nights": 1}),
    ([night(4, 9)], {"proposed": 4, "grounded": 4, "nights": 1}),        # never more kept than proposed
    # only the last NIGHTS sleeps: an old free night has aged out of the window
    ([night(30, 0)] + [night(0, 0, mode="extractive")] * grounded.NIGHTS, {"proposed": 0, "grounded": 0,
                                                                           "nights": 0}),
])
def test_the_measure_counts_this_model_s_free_nights_among_the_last_sleeps(history, measured):
    assert grounded.measure(history, ME) == measured


@pytest.mark.parametrize("history, mode, words", [
    ([night(10, 2), night(20, 2)], "extractive", "4 of 30 of its operations were grounded (over its last 2 nights"),
    ([night(9, 0)], "free", "does not say its size"),                  # too few operations to judge
    ([night(10, 5)], "free", "does not say its size"),                 # half grounded: good enough
    ([night(10, 4)], "extractive", "4 of 10 of its operations were grounded (over its last 1 night writing"),
    ([], "free", "does not say its size"),
])
def test_auto_switches_to_extractive_below_half_grounded_over_at_least_ten_operations(history, mode, words):
    pick = grounded.by_rate(BY_SIZE, grounded.measure(history, ME))
    assert pick["mode"] == mode and words in pick["why"], pick


def test_a_small_model_stays_extractive_by_size_whatever_its_rate():
    by_size = size.choose("auto", 134_515_008)
    pick = grounded.by_rate(by_size, grounded.measure([night(10, 10)], ME))
    assert pick["mode"] == "extractive" and "135M parameters" in pick["why"]
    assert pick["grounding"] == {"proposed": 10, "grounded": 10, "nights": 1}


@pytest.mark.parametrize("setting, mode", [("free", "free"), ("extractive", "extractive")])
def test_a_set_mode_is_not_overruled_by_the_rate(setting, mode):
    v = grounded.view(setting, None, [night(30, 0)], ME)
    assert v["mode"] == mode and "grounded" not in v["why"]


def test_status_says_the_rate_before_auto_s_first_drafting_call():
    v = grounded.view("auto", None, [night(30, 4)], ME)
    assert v["mode"] == "extractive" and v["why"].startswith("model.write: auto: 4 of 30 of its operations")


def test_a_night_s_row_adds_up_pile_by_pile():
    w = grounded.tally(3, 1, mode="free", model=ME)
    w = grounded.tally(2, 2, w, mode="free", model=ME)
    assert w == {"mode": "free", "model": ME, "proposed": 5, "grounded": 3}
